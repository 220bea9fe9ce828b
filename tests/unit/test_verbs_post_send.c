/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_post_send(): the send-side rules of the seed documents (ibv_post_send
 * tutorial and ibv_post_send(3)), one test each. The harness takes what the
 * verbs layer publishes on the send ring, as droce's engine will, and writes
 * the completions the engine would write; the library fakes none.
 *
 * Decisions of droce checked here (the seed leaves them open):
 * - IBV_SEND_FENCE is accepted on RC only: it orders after RDMA READs and
 *   atomics, which only RC has; UC and UD refuse it with EINVAL.
 * - IBV_SEND_SOLICITED is carried on every opcode that takes it; the engine
 *   sets the SE bit only on SEND and RDMA WRITE with immediate (IBA 9.2.3), as
 *   Linux Soft-RoCE does.
 * - Inline SGE lengths are literal byte counts (0 is zero bytes, not 2^31).
 * - Keys are the engine's to check: post never looks at an lkey or rkey.
 * - BIND_MW through ibv_post_send() binds type-2 windows; type 1 goes through
 *   ibv_bind_mw().
 * - A UD remote_qpn above 24 bits is refused.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "verbs_harness.h"

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

#define TWO_31     0x80000000u /* 2^31: the largest message, and what an SGE length of 0 means */
#define REMOTE_VA  0x7f0000001000ull
#define REMOTE_KEY 0x00abcd01u
#define UD_QPN     0x000022u
#define UD_QKEY    0x11111111u

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static struct ibv_ah *ah;     /* in pd, made on first use */
static struct ibv_mw *mw2;    /* type-2 window in pd, made on first use */
static struct ibv_qp_cap cap; /* what the last qp_new() was given */
static uint8_t buf[16384] __attribute__((aligned(64)));

static void setup(void)
{
	ctx = harness_open(&pd);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cr_assert_not_null(cq, "create_cq: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	cr_assert_not_null(mr, "reg_mr: %s", strerror(errno));
	ah = NULL;
	mw2 = NULL;
}

TestSuite(post_send, .init = setup);
TestSuite(post_send_table, .init = setup);
TestSuite(post_send_state, .init = setup);
TestSuite(post_send_sge, .init = setup);
TestSuite(post_send_inline, .init = setup);
TestSuite(post_send_atomic, .init = setup);
TestSuite(post_send_flags, .init = setup);
TestSuite(post_send_ret, .init = setup);
TestSuite(post_send_ud, .init = setup);
TestSuite(post_send_mw, .init = setup);

/* ------------------------------------------------------------------ helpers */

static const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : t == IBV_QPT_UD ? "UD" : "?";
}

static const char *op_name(enum ibv_wr_opcode op)
{
	static const char *const names[] = {
		[IBV_WR_RDMA_WRITE] = "RDMA_WRITE",
		[IBV_WR_RDMA_WRITE_WITH_IMM] = "RDMA_WRITE_WITH_IMM",
		[IBV_WR_SEND] = "SEND",
		[IBV_WR_SEND_WITH_IMM] = "SEND_WITH_IMM",
		[IBV_WR_RDMA_READ] = "RDMA_READ",
		[IBV_WR_ATOMIC_CMP_AND_SWP] = "ATOMIC_CMP_AND_SWP",
		[IBV_WR_ATOMIC_FETCH_AND_ADD] = "ATOMIC_FETCH_AND_ADD",
		[IBV_WR_LOCAL_INV] = "LOCAL_INV",
		[IBV_WR_BIND_MW] = "BIND_MW",
		[IBV_WR_SEND_WITH_INV] = "SEND_WITH_INV",
		[IBV_WR_TSO] = "TSO",
		[IBV_WR_DRIVER1] = "DRIVER1",
		[IBV_WR_ATOMIC_WRITE] = "ATOMIC_WRITE",
	};

	return (unsigned int)op < DIM(names) && names[op] != NULL ? names[op] : "unknown";
}

static struct ibv_qp *qp_new(enum ibv_qp_type type, uint32_t send_sge, uint32_t max_inline,
			     int sig_all)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 16,
			.max_recv_wr = 16,
			.max_send_sge = send_sge,
			.max_recv_sge = 4,
			.max_inline_data = max_inline},
		.qp_type = type,
		.sq_sig_all = sig_all,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	cr_assert_not_null(qp, "create %s QP: %s", type_name(type), strerror(errno));
	cap = ia.cap;
	return qp;
}

/* A QP of @p type in RTS: 4 SGEs, 64 bytes inline, sq_sig_all 0. */
static struct ibv_qp *qp_rts(enum ibv_qp_type type)
{
	struct ibv_qp *qp = qp_new(type, 4, 64, 0);

	cr_assert_eq(harness_qp_to_rts(qp), 0, "%s QP to RTS", type_name(type));
	return qp;
}

static int qp_modify_state(struct ibv_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = {.qp_state = st};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* RESET -> INIT of an RC QP, with the attributes the harness uses. */
static void rc_to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qp_access_flags =
					IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};

	cr_assert_eq(
		ibv_modify_qp(qp, &a,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		0, "RC QP to INIT");
}

/* INIT -> RTR of an RC QP. */
static void rc_to_rtr(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR,
				.path_mtu = IBV_MTU_1024,
				.dest_qp_num = 0x12,
				.max_dest_rd_atomic = 1,
				.min_rnr_timer = 12,
				.ah_attr = {.is_global = 1,
					    .port_num = 1,
					    .grh = {.sgid_index = 1, .hop_limit = 64}}};

	cr_assert_eq(ibv_modify_qp(qp, &a,
				   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					   IBV_QP_MIN_RNR_TIMER),
		     0, "RC QP to RTR");
}

/* An AH of @p p to 10.0.0.2 through GID 1 (10.0.0.1). */
static struct ibv_ah *ah_new(struct ibv_pd *p)
{
	struct ibv_ah_attr a = {.is_global = 1, .port_num = 1};
	struct ibv_ah *h;

	a.grh.sgid_index = 1;
	a.grh.hop_limit = 64;
	a.grh.dgid.raw[10] = 0xff;
	a.grh.dgid.raw[11] = 0xff;
	a.grh.dgid.raw[12] = 10;
	a.grh.dgid.raw[15] = 2;
	h = ibv_create_ah(p, &a);
	cr_assert_not_null(h, "create_ah: %s", strerror(errno));
	return h;
}

static struct ibv_ah *the_ah(void)
{
	if (ah == NULL)
		ah = ah_new(pd);
	return ah;
}

static struct ibv_mw *the_mw2(void)
{
	if (mw2 == NULL) {
		mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		cr_assert_not_null(mw2, "alloc type-2 MW: %s", strerror(errno));
	}
	return mw2;
}

/*
 * A WR of @p op that is valid in every way on a QP type that supports @p op:
 * one 64-byte SGE (8 bytes for atomics, none for LOCAL_INV and BIND_MW), the
 * remote fields of the opcode, and UD addressing on a UD QP.
 */
static void wr_fill(struct ibv_qp *qp, enum ibv_wr_opcode op, struct ibv_send_wr *wr,
		    struct ibv_sge *sge)
{
	memset(wr, 0, sizeof(*wr));
	*sge = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
	wr->wr_id = 0x5000u + (unsigned int)op;
	wr->opcode = op;
	wr->sg_list = sge;
	wr->num_sge = 1;
	switch (op) {
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wr->imm_data = htonl(0x01020304);
		/* fall through */
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
		wr->wr.rdma.remote_addr = REMOTE_VA;
		wr->wr.rdma.rkey = REMOTE_KEY;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		sge->length = 8;
		wr->wr.atomic.remote_addr = REMOTE_VA;
		wr->wr.atomic.rkey = REMOTE_KEY;
		wr->wr.atomic.compare_add = 5;
		wr->wr.atomic.swap = 6;
		break;
	case IBV_WR_SEND_WITH_IMM:
		wr->imm_data = htonl(0x01020304);
		break;
	case IBV_WR_SEND_WITH_INV:
		wr->invalidate_rkey = REMOTE_KEY;
		break;
	case IBV_WR_LOCAL_INV:
		wr->sg_list = NULL;
		wr->num_sge = 0;
		wr->invalidate_rkey = mr->rkey;
		break;
	case IBV_WR_BIND_MW:
		wr->sg_list = NULL;
		wr->num_sge = 0;
		wr->bind_mw.mw = the_mw2();
		wr->bind_mw.rkey = ibv_inc_rkey(the_mw2()->rkey);
		wr->bind_mw.bind_info.mr = mr;
		wr->bind_mw.bind_info.addr = (uintptr_t)buf;
		wr->bind_mw.bind_info.length = 4096;
		wr->bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
		break;
	default:
		break;
	}
	if (qp->qp_type == IBV_QPT_UD) {
		wr->wr.ud.ah = the_ah();
		wr->wr.ud.remote_qpn = UD_QPN;
		wr->wr.ud.remote_qkey = UD_QKEY;
	}
}

/* Post @p wr alone; it must be refused with @p err, bad_wr on it, and nothing published. */
static void expect_refused(struct ibv_qp *qp, struct ibv_send_wr *wr, int err, const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(qp, wr, &bad);

	cr_expect_eq(rc, err, "%s: ibv_post_send returned %d (%s), want %d (%s)", what, rc,
		     strerror(rc), err, strerror(err));
	cr_expect_eq(bad, wr, "%s: bad_wr %p is not the refused WR %p", what, (void *)bad,
		     (void *)wr);
	cr_expect_eq(harness_send_pending(qp), 0, "%s: %d WQEs reached the send ring", what,
		     harness_send_pending(qp));
}

/* Post @p wr alone; it must be accepted and be the one WQE the engine finds, copied to @p s. */
static void expect_posted(struct ibv_qp *qp, struct ibv_send_wr *wr, struct harness_send *s,
			  const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(qp, wr, &bad);

	cr_assert_eq(rc, 0, "%s: ibv_post_send returned %d (%s)", what, rc, strerror(rc));
	cr_assert_eq(harness_send_pending(qp), 1, "%s: %d WQEs on the send ring, want 1", what,
		     harness_send_pending(qp));
	cr_assert(harness_take_send(qp, s), "%s: the engine finds no WQE", what);
}

static const struct droce_sge *wqe_sge(const struct harness_send *s, unsigned int i)
{
	return (const struct droce_sge *)s->data + i;
}

/* ------------------------------------------- opcode x QP type (the seed's table) */

struct cell {
	enum ibv_wr_opcode op;
	enum ibv_qp_type type;
	bool ok;
	uint8_t wqe_op; /* what the engine must see when accepted */
};

/* ibv_post_send(3): the opcode table, its RC, UC and UD columns; SEND_WITH_INV is RC's only
 * (no UC opcode carries an IETH: test_verbs_post_opcode.c). */
static const struct {
	enum ibv_wr_opcode op;
	bool rc, uc, ud;
	uint8_t wqe_op;
} opcode_table[] = {
	{IBV_WR_SEND, true, true, true, DROCE_WQE_SEND},
	{IBV_WR_SEND_WITH_IMM, true, true, true, DROCE_WQE_SEND_IMM},
	{IBV_WR_RDMA_WRITE, true, true, false, DROCE_WQE_WRITE},
	{IBV_WR_RDMA_WRITE_WITH_IMM, true, true, false, DROCE_WQE_WRITE_IMM},
	{IBV_WR_RDMA_READ, true, false, false, DROCE_WQE_READ},
	{IBV_WR_ATOMIC_CMP_AND_SWP, true, false, false, DROCE_WQE_CMP_SWAP},
	{IBV_WR_ATOMIC_FETCH_AND_ADD, true, false, false, DROCE_WQE_FETCH_ADD},
	{IBV_WR_LOCAL_INV, true, true, false, DROCE_WQE_LOCAL_INV},
	{IBV_WR_BIND_MW, true, true, false, DROCE_WQE_BIND_MW},
	{IBV_WR_SEND_WITH_INV, true, false, false, DROCE_WQE_SEND_INV},
	/* not droce's: TSO (raw packet QPs), driver-private and atomic-write opcodes */
	{IBV_WR_TSO, false, false, false, 0},
	{IBV_WR_DRIVER1, false, false, false, 0},
	{IBV_WR_ATOMIC_WRITE, false, false, false, 0},
	{(enum ibv_wr_opcode)99, false, false, false, 0},
};

static struct cell cells[3 * DIM(opcode_table)];

ParameterizedTestParameters(post_send_table, opcode_by_qp_type)
{
	for (size_t i = 0; i < DIM(opcode_table); i++) {
		uint8_t w = opcode_table[i].wqe_op;

		cells[3 * i] = (struct cell){opcode_table[i].op, IBV_QPT_RC, opcode_table[i].rc, w};
		cells[3 * i + 1] =
			(struct cell){opcode_table[i].op, IBV_QPT_UC, opcode_table[i].uc, w};
		cells[3 * i + 2] =
			(struct cell){opcode_table[i].op, IBV_QPT_UD, opcode_table[i].ud, w};
	}
	return cr_make_param_array(struct cell, cells, DIM(cells));
}

ParameterizedTest(struct cell *c, post_send_table, opcode_by_qp_type)
{
	struct ibv_qp *qp = qp_rts(c->type);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;
	char what[96];

	snprintf(what, sizeof(what), "%s on %s", op_name(c->op), type_name(c->type));
	wr_fill(qp, c->op, &wr, &sge);
	if (!c->ok) {
		expect_refused(qp, &wr, EINVAL, what);
		return;
	}
	expect_posted(qp, &wr, &s, what);
	cr_expect_eq(s.hdr.op, c->wqe_op, "%s: WQE op %u, want %u", what, s.hdr.op, c->wqe_op);
	cr_expect_eq(s.hdr.wr_id, wr.wr_id, "%s: WQE wr_id 0x%llx", what,
		     (unsigned long long)s.hdr.wr_id);
}

/* ------------------------------------------------------------ QP states */

static void post_one_send(struct ibv_qp *qp, uint64_t wr_id, int *rc, struct ibv_send_wr **bad,
			  struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	wr_fill(qp, IBV_WR_SEND, wr, sge);
	wr->wr_id = wr_id;
	*bad = NULL;
	*rc = ibv_post_send(qp, wr, bad);
}

Test(post_send_state, reset_refused_at_once)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 0);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_refused(qp, &wr, EINVAL, "SEND on a RESET QP");
}

Test(post_send_state, init_refused_at_once)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 0);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	rc_to_init(qp);
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_refused(qp, &wr, EINVAL, "SEND on an INIT QP");
}

Test(post_send_state, rtr_refused_at_once)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 0);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	rc_to_init(qp);
	rc_to_rtr(qp);
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_refused(qp, &wr, EINVAL, "SEND on an RTR QP");
}

Test(post_send_state, ud_init_refused_at_once)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_UD, 4, 64, 0);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = UD_QKEY};
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	cr_assert_eq(
		ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
		0, "UD QP to INIT");
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_refused(qp, &wr, EINVAL, "SEND on an INIT UD QP");
}

Test(post_send_state, rts_published)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_posted(qp, &wr, &s, "SEND on an RTS QP");
	cr_expect_eq(s.hdr.op, DROCE_WQE_SEND, "WQE op %u is not SEND", s.hdr.op);
}

Test(post_send_state, sqd_accepted_and_held)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	int rc;

	cr_assert_eq(qp_modify_state(qp, IBV_QPS_SQD), 0, "RTS -> SQD");
	post_one_send(qp, 0x5d, &rc, &bad, &wr, &sge);
	cr_expect_eq(rc, 0, "SEND on an SQD QP returned %d (%s)", rc, strerror(rc));
	cr_expect_eq(harness_send_pending(qp), 1, "the WQE is published for the engine to hold");
	cr_expect_eq(droce_engine_qp_state(qp), IBV_QPS_SQD,
		     "the engine sees SQD and does not start the WQE");
}

/* Post on a QP in an error state; the engine flushes: IBV_WC_WR_FLUSH_ERR with the wr_id. */
static void expect_flushed(struct ibv_qp *qp, const char *what)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	int rc;

	post_one_send(qp, 0xf1005e, &rc, &bad, &wr, &sge);
	cr_expect_eq(rc, 0, "%s: post returned %d (%s)", what, rc, strerror(rc));
	cr_expect_eq(harness_send_pending(qp), 1, "%s: the WQE is published", what);
	cr_expect_eq(harness_complete_sends(qp, IBV_WC_WR_FLUSH_ERR), 1,
		     "%s: the engine flushes one WQE", what);
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "%s: a completion is polled", what);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s: status %s", what,
		     ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, 0xf1005e, "%s: wr_id 0x%llx", what, (unsigned long long)wc.wr_id);
	cr_expect_eq(wc.qp_num, qp->qp_num, "%s: qp_num %u", what, wc.qp_num);
}

Test(post_send_state, sqe_by_engine_accepted_and_flushed)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UC);

	cr_assert_eq(droce_engine_qp_error(qp, IBV_QPS_SQE, 0), 0, "engine moves the QP to SQE");
	expect_flushed(qp, "UC QP in SQE");
}

Test(post_send_state, sqe_ud_by_engine_accepted_and_flushed)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);

	cr_assert_eq(droce_engine_qp_error(qp, IBV_QPS_SQE, 0), 0, "engine moves the QP to SQE");
	expect_flushed(qp, "UD QP in SQE");
}

Test(post_send_state, err_by_engine_accepted_and_flushed)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);

	cr_assert_eq(droce_engine_qp_error(qp, IBV_QPS_ERR, 0), 0, "engine moves the QP to ERR");
	expect_flushed(qp, "RC QP in ERR (engine)");
}

Test(post_send_state, err_by_modify_accepted_and_flushed)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);

	cr_assert_eq(qp_modify_state(qp, IBV_QPS_ERR), 0, "modify to ERR");
	expect_flushed(qp, "RC QP in ERR (modify)");
}

Test(post_send_state, err_from_reset_by_modify_accepted)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 0);

	cr_assert_eq(qp_modify_state(qp, IBV_QPS_ERR), 0, "RESET -> ERR");
	expect_flushed(qp, "RC QP moved to ERR from RESET");
}

/* ------------------------------------------------------------ num_sge and SGEs */

Test(post_send_sge, num_sge_equal_to_cap_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[64];
	struct ibv_send_wr wr;
	struct harness_send s;
	uint32_t i, n = cap.max_send_sge;

	cr_assert(n >= 4 && n <= DIM(sge), "max_send_sge %u is at least what was asked", n);
	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	/* SGEs may come from different MRs: each lkey is carried as given */
	for (i = 0; i < n; i++)
		sge[i] = (struct ibv_sge){
			.addr = (uintptr_t)buf + 100 * i, .length = 10 + i, .lkey = mr->lkey + i};
	wr.sg_list = sge;
	wr.num_sge = (int)n;
	expect_posted(qp, &wr, &s, "num_sge == max_send_sge");
	cr_expect_eq(s.hdr.num_sge, n, "WQE num_sge %u, want %u", s.hdr.num_sge, n);
	for (i = 0; i < n; i++) {
		cr_expect_eq(wqe_sge(&s, i)->addr, sge[i].addr, "SGE %u addr", i);
		cr_expect_eq(wqe_sge(&s, i)->length, sge[i].length, "SGE %u length", i);
		cr_expect_eq(wqe_sge(&s, i)->lkey, sge[i].lkey, "SGE %u lkey", i);
	}
	cr_expect_eq(s.hdr.length, n * 10 + n * (n - 1) / 2, "message length %u is the sum",
		     s.hdr.length);
}

Test(post_send_sge, num_sge_above_cap_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[64];
	struct ibv_send_wr wr;
	uint32_t i, n = cap.max_send_sge + 1;

	cr_assert(n <= DIM(sge), "max_send_sge %u fits the test", n - 1);
	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	for (i = 0; i < n; i++)
		sge[i] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey};
	wr.sg_list = sge;
	wr.num_sge = (int)n;
	expect_refused(qp, &wr, EINVAL, "num_sge == max_send_sge + 1");
}

Test(post_send_sge, num_sge_negative_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.num_sge = -1;
	expect_refused(qp, &wr, EINVAL, "num_sge -1");
}

Test(post_send_sge, num_sge_negative_no_data_op_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_LOCAL_INV, &wr, &sge);
	wr.num_sge = -1;
	expect_refused(qp, &wr, EINVAL, "LOCAL_INV with num_sge -1");
}

Test(post_send_sge, sge_list_null_with_sges_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.sg_list = NULL;
	expect_refused(qp, &wr, EINVAL, "num_sge 1 with sg_list NULL");
}

Test(post_send_sge, length_zero_means_2_31)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_RDMA_WRITE, &wr, &sge);
	sge.length = 0;
	expect_posted(qp, &wr, &s, "one SGE of length 0");
	cr_expect_eq(wqe_sge(&s, 0)->length, TWO_31, "SGE length 0x%x, want 2^31",
		     wqe_sge(&s, 0)->length);
	cr_expect_eq(s.hdr.length, TWO_31, "message length 0x%x, want 2^31", s.hdr.length);
}

Test(post_send_sge, total_exactly_2_31_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[2];
	struct ibv_send_wr wr;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = TWO_31 / 2, .lkey = mr->lkey};
	sge[1] = sge[0];
	wr.sg_list = sge;
	wr.num_sge = 2;
	expect_posted(qp, &wr, &s, "two SGEs of 2^30");
	cr_expect_eq(s.hdr.length, TWO_31, "message length 0x%x, want 2^31", s.hdr.length);
}

Test(post_send_sge, total_above_2_31_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[2];
	struct ibv_send_wr wr;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 0, .lkey = mr->lkey}; /* 2^31 */
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey};
	wr.sg_list = sge;
	wr.num_sge = 2;
	expect_refused(qp, &wr, EINVAL, "2^31 + 1 bytes");
}

Test(post_send_sge, total_above_2_31_by_lengths_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[3];
	struct ibv_send_wr wr;

	wr_fill(qp, IBV_WR_RDMA_READ, &wr, &sge[0]);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = TWO_31 - 1, .lkey = mr->lkey};
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey};
	sge[2] = sge[1];
	wr.sg_list = sge;
	wr.num_sge = 3;
	expect_refused(qp, &wr, EINVAL, "READ of 2^31 + 1 bytes");
}

Test(post_send_sge, zero_byte_messages_with_num_sge_0)
{
	static const enum ibv_wr_opcode ops[] = {IBV_WR_SEND,       IBV_WR_SEND_WITH_IMM,
						 IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
						 IBV_WR_RDMA_READ,  IBV_WR_SEND_WITH_INV};
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	for (unsigned int i = 0; i < DIM(ops); i++) {
		wr_fill(qp, ops[i], &wr, &sge);
		wr.sg_list = NULL;
		wr.num_sge = 0;
		expect_posted(qp, &wr, &s, op_name(ops[i]));
		cr_expect_eq(s.hdr.length, 0, "%s of zero bytes: length %u", op_name(ops[i]),
			     s.hdr.length);
		cr_expect_eq(s.hdr.num_sge, 0, "%s of zero bytes: num_sge %u", op_name(ops[i]),
			     s.hdr.num_sge);
	}
}

Test(post_send_sge, zero_byte_ud_send)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.sg_list = NULL;
	wr.num_sge = 0;
	expect_posted(qp, &wr, &s, "UD SEND of zero bytes");
	cr_expect_eq(s.hdr.length, 0, "length %u", s.hdr.length);
}

Test(post_send_sge, sges_copied_at_post)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;
	struct ibv_send_wr *bad = NULL;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0, "post");
	/* the WR and its s/g list may be reused as soon as the call returns */
	memset(&sge, 0xee, sizeof(sge));
	memset(&wr, 0xee, sizeof(wr));
	cr_assert(harness_take_send(qp, &s), "the engine finds the WQE");
	cr_expect_eq(wqe_sge(&s, 0)->addr, (uintptr_t)buf, "SGE addr as posted");
	cr_expect_eq(wqe_sge(&s, 0)->length, 64, "SGE length as posted");
	cr_expect_eq(wqe_sge(&s, 0)->lkey, mr->lkey, "SGE lkey as posted");
	cr_expect_eq(s.hdr.wr_id, 0x5000u + IBV_WR_SEND, "wr_id as posted");
}

Test(post_send_sge, lkey_not_checked_at_post)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	sge.lkey = 0xdead00ff; /* the engine completes it with IBV_WC_LOC_PROT_ERR */
	expect_posted(qp, &wr, &s, "SEND with an unregistered lkey");
	cr_expect_eq(wqe_sge(&s, 0)->lkey, 0xdead00ff, "the lkey reaches the engine as given");
}

/* ------------------------------------------------------------ inline data */

Test(post_send_inline, up_to_max_copied_at_post)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	uint8_t data[64];
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct harness_send s;

	cr_assert_eq(cap.max_inline_data, 64, "max_inline_data %u", cap.max_inline_data);
	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	/* inline: the lkey is not looked at, the buffer need not be registered */
	sge = (struct ibv_sge){.addr = (uintptr_t)data, .length = sizeof(data), .lkey = 0xbadbad};
	wr.send_flags = IBV_SEND_INLINE;
	cr_assert_eq(ibv_post_send(qp, &wr, &(struct ibv_send_wr *){NULL}), 0,
		     "inline SEND of max_inline_data bytes with a garbage lkey");
	memset(data, 0, sizeof(data)); /* reusable at once */
	cr_assert(harness_take_send(qp, &s), "the engine finds the WQE");
	cr_expect(s.hdr.flags & DROCE_WQE_INLINE, "WQE flags 0x%x lack INLINE", s.hdr.flags);
	cr_expect_eq(s.hdr.length, 64, "inline length %u", s.hdr.length);
	cr_expect_eq(s.hdr.num_sge, 0, "an inline WQE carries no SGE (%u)", s.hdr.num_sge);
	for (unsigned int i = 0; i < 64; i++)
		cr_expect_eq(s.data[i], (uint8_t)(i * 7 + 1), "inline byte %u is 0x%02x", i,
			     s.data[i]);
}

Test(post_send_inline, sges_concatenated)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UC);
	char a[] = "hello, ", b[] = "inline ", c[] = "world";
	struct ibv_sge sge[3];
	struct ibv_send_wr wr;
	struct harness_send s;

	wr_fill(qp, IBV_WR_RDMA_WRITE, &wr, &sge[0]);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)a, .length = 7};
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)b, .length = 7};
	sge[2] = (struct ibv_sge){.addr = (uintptr_t)c, .length = 5};
	wr.sg_list = sge;
	wr.num_sge = 3;
	wr.send_flags = IBV_SEND_INLINE;
	cr_assert_eq(ibv_post_send(qp, &wr, &(struct ibv_send_wr *){NULL}), 0, "inline WRITE");
	memset(a, 'x', 7);
	cr_assert(harness_take_send(qp, &s), "the engine finds the WQE");
	cr_expect_eq(s.hdr.length, 19, "inline length %u", s.hdr.length);
	cr_expect_arr_eq(s.data, "hello, inline world", 19, "inline bytes concatenated");
	cr_expect_eq(s.hdr.u.rdma.remote_addr, REMOTE_VA, "remote address of the inline WRITE");
}

Test(post_send_inline, sge_length_0_is_zero_bytes)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[2];
	struct ibv_send_wr wr;
	struct harness_send s;

	/* droce: inline lengths are byte counts; 0 is an empty piece, not 2^31 bytes */
	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	memcpy(buf, "xy", 2);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 0};
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 2};
	wr.num_sge = 2;
	wr.send_flags = IBV_SEND_INLINE;
	expect_posted(qp, &wr, &s, "inline SEND of 0 + 2 bytes");
	cr_expect_eq(s.hdr.length, 2, "inline length %u", s.hdr.length);
	cr_expect_arr_eq(s.data, "xy", 2, "inline bytes");
}

Test(post_send_inline, over_max_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	sge = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 65};
	wr.send_flags = IBV_SEND_INLINE;
	expect_refused(qp, &wr, EINVAL, "inline of max_inline_data + 1 bytes");
}

Test(post_send_inline, over_max_across_sges_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[2];
	struct ibv_send_wr wr;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 32};
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 33};
	wr.sg_list = sge;
	wr.num_sge = 2;
	wr.send_flags = IBV_SEND_INLINE;
	expect_refused(qp, &wr, EINVAL, "inline of 32 + 33 bytes");
}

Test(post_send_inline, num_sge_above_cap_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[64];
	struct ibv_send_wr wr;
	uint32_t i, n = cap.max_send_sge + 1;

	/* num_sge <= max_send_sge holds for inline WRs too: n one-byte SGEs fit inline */
	cr_assert(n <= DIM(sge) && n <= cap.max_inline_data, "geometry of the test");
	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	for (i = 0; i < n; i++)
		sge[i] = (struct ibv_sge){.addr = (uintptr_t)buf + i, .length = 1};
	wr.sg_list = sge;
	wr.num_sge = (int)n;
	wr.send_flags = IBV_SEND_INLINE;
	expect_refused(qp, &wr, EINVAL, "inline with max_send_sge + 1 SGEs");
}

Test(post_send_inline, allowed_for_send_and_write_kinds)
{
	static const enum ibv_wr_opcode ops[] = {IBV_WR_SEND, IBV_WR_SEND_WITH_IMM,
						 IBV_WR_SEND_WITH_INV, IBV_WR_RDMA_WRITE,
						 IBV_WR_RDMA_WRITE_WITH_IMM};
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	for (unsigned int i = 0; i < DIM(ops); i++) {
		wr_fill(qp, ops[i], &wr, &sge);
		sge.length = 16;
		wr.send_flags = IBV_SEND_INLINE;
		expect_posted(qp, &wr, &s, op_name(ops[i]));
		cr_expect(s.hdr.flags & DROCE_WQE_INLINE, "%s: INLINE flag", op_name(ops[i]));
		cr_expect_eq(s.hdr.length, 16, "%s: inline length %u", op_name(ops[i]),
			     s.hdr.length);
	}
}

Test(post_send_inline, ud_send_inline)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	memcpy(buf, "ud-inline", 9);
	sge.length = 9;
	wr.send_flags = IBV_SEND_INLINE;
	expect_posted(qp, &wr, &s, "inline UD SEND");
	cr_expect_arr_eq(s.data, "ud-inline", 9, "inline bytes of the UD SEND");
	cr_expect_eq(s.hdr.u.ud.remote_qpn, UD_QPN, "remote QPN of the inline UD SEND");
}

static void inline_refused(enum ibv_wr_opcode op)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	char what[64];

	wr_fill(qp, op, &wr, &sge);
	wr.send_flags = IBV_SEND_INLINE;
	snprintf(what, sizeof(what), "inline %s", op_name(op));
	expect_refused(qp, &wr, EINVAL, what);
}

Test(post_send_inline, read_refused)
{
	inline_refused(IBV_WR_RDMA_READ);
}

Test(post_send_inline, cmp_swap_refused)
{
	inline_refused(IBV_WR_ATOMIC_CMP_AND_SWP);
}

Test(post_send_inline, fetch_add_refused)
{
	inline_refused(IBV_WR_ATOMIC_FETCH_AND_ADD);
}

Test(post_send_inline, local_inv_refused)
{
	inline_refused(IBV_WR_LOCAL_INV);
}

Test(post_send_inline, bind_mw_refused)
{
	inline_refused(IBV_WR_BIND_MW);
}

/* ------------------------------------------------------------ atomics */

Test(post_send_atomic, fields_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_ATOMIC_CMP_AND_SWP, &wr, &sge);
	wr.wr.atomic.compare_add = 0x1111222233334444ull;
	wr.wr.atomic.swap = 0x5555666677778888ull;
	expect_posted(qp, &wr, &s, "CMP_AND_SWP");
	cr_expect_eq(s.hdr.u.atomic.remote_addr, REMOTE_VA, "remote_addr");
	cr_expect_eq(s.hdr.u.atomic.rkey, REMOTE_KEY, "rkey");
	cr_expect_eq(s.hdr.u.atomic.compare_add, 0x1111222233334444ull, "compare");
	cr_expect_eq(s.hdr.u.atomic.swap, 0x5555666677778888ull, "swap");
	cr_expect_eq(s.hdr.length, 8, "length %u", s.hdr.length);
}

Test(post_send_atomic, fetch_add_fields_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, &wr, &sge);
	wr.wr.atomic.compare_add = 42;
	expect_posted(qp, &wr, &s, "FETCH_AND_ADD");
	cr_expect_eq(s.hdr.u.atomic.compare_add, 42, "add value");
	cr_expect_eq(s.hdr.u.atomic.remote_addr, REMOTE_VA, "remote_addr");
	cr_expect_eq(s.hdr.u.atomic.rkey, REMOTE_KEY, "rkey");
}

static void atomic_refused_len(enum ibv_wr_opcode op, uint32_t len)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	char what[64];

	wr_fill(qp, op, &wr, &sge);
	sge.length = len;
	snprintf(what, sizeof(what), "%s of %u bytes", op_name(op), len);
	expect_refused(qp, &wr, EINVAL, what);
}

Test(post_send_atomic, cmp_swap_length_4_refused)
{
	atomic_refused_len(IBV_WR_ATOMIC_CMP_AND_SWP, 4);
}

Test(post_send_atomic, cmp_swap_length_16_refused)
{
	atomic_refused_len(IBV_WR_ATOMIC_CMP_AND_SWP, 16);
}

Test(post_send_atomic, fetch_add_length_7_refused)
{
	atomic_refused_len(IBV_WR_ATOMIC_FETCH_AND_ADD, 7);
}

Test(post_send_atomic, fetch_add_length_9_refused)
{
	atomic_refused_len(IBV_WR_ATOMIC_FETCH_AND_ADD, 9);
}

Test(post_send_atomic, length_0_is_2_31_refused)
{
	atomic_refused_len(IBV_WR_ATOMIC_FETCH_AND_ADD, 0);
}

Test(post_send_atomic, no_sge_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_ATOMIC_CMP_AND_SWP, &wr, &sge);
	wr.sg_list = NULL;
	wr.num_sge = 0;
	expect_refused(qp, &wr, EINVAL, "CMP_AND_SWP with num_sge 0");
}

static void atomic_refused_addr(enum ibv_wr_opcode op, uint64_t offset)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	char what[64];

	wr_fill(qp, op, &wr, &sge);
	wr.wr.atomic.remote_addr = REMOTE_VA + offset;
	snprintf(what, sizeof(what), "%s at remote_addr + %llu", op_name(op),
		 (unsigned long long)offset);
	expect_refused(qp, &wr, EINVAL, what);
}

Test(post_send_atomic, cmp_swap_unaligned_by_4_refused)
{
	atomic_refused_addr(IBV_WR_ATOMIC_CMP_AND_SWP, 4);
}

Test(post_send_atomic, fetch_add_unaligned_by_1_refused)
{
	atomic_refused_addr(IBV_WR_ATOMIC_FETCH_AND_ADD, 1);
}

Test(post_send_atomic, aligned_by_8_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, &wr, &sge);
	wr.wr.atomic.remote_addr = REMOTE_VA + 8;
	expect_posted(qp, &wr, &s, "FETCH_AND_ADD at an 8-byte aligned address");
	cr_expect_eq(s.hdr.u.atomic.remote_addr, REMOTE_VA + 8, "remote_addr");
}

/* ------------------------------------------------------------ send flags */

Test(post_send_flags, unsignaled_without_sq_sig_all)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_posted(qp, &wr, &s, "SEND without SIGNALED");
	cr_expect_eq(s.hdr.flags & DROCE_WQE_SIGNALED, 0, "WQE flags 0x%x: not signaled",
		     s.hdr.flags);
}

Test(post_send_flags, signaled_without_sq_sig_all)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.send_flags = IBV_SEND_SIGNALED;
	expect_posted(qp, &wr, &s, "SEND with SIGNALED");
	cr_expect(s.hdr.flags & DROCE_WQE_SIGNALED, "WQE flags 0x%x: signaled", s.hdr.flags);
}

Test(post_send_flags, sq_sig_all_signals_every_wr)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 1);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	cr_assert_eq(harness_qp_to_rts(qp), 0, "QP to RTS");
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_posted(qp, &wr, &s, "SEND without SIGNALED, sq_sig_all 1");
	cr_expect(s.hdr.flags & DROCE_WQE_SIGNALED, "WQE flags 0x%x: signaled", s.hdr.flags);
}

Test(post_send_flags, sq_sig_all_with_signaled_no_effect)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 1);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	cr_assert_eq(harness_qp_to_rts(qp), 0, "QP to RTS");
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.send_flags = IBV_SEND_SIGNALED;
	expect_posted(qp, &wr, &s, "SEND with SIGNALED, sq_sig_all 1");
	cr_expect(s.hdr.flags & DROCE_WQE_SIGNALED, "WQE flags 0x%x: signaled", s.hdr.flags);
}

Test(post_send_flags, only_signaled_wrs_complete)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];
	struct ibv_wc wc[4];

	for (int i = 0; i < 3; i++) {
		wr_fill(qp, IBV_WR_SEND, &wr[i], &sge[i]);
		wr[i].wr_id = 100 + (uint64_t)i;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[1].send_flags = IBV_SEND_SIGNALED;
	cr_assert_eq(ibv_post_send(qp, wr, &bad), 0, "post three SENDs");
	cr_expect_eq(harness_complete_sends(qp, IBV_WC_SUCCESS), 3, "the engine runs three");
	cr_assert_eq(ibv_poll_cq(cq, 4, wc), 1, "one completion: the signaled WR");
	cr_expect_eq(wc[0].wr_id, 101, "the signaled WR's wr_id, got %llu",
		     (unsigned long long)wc[0].wr_id);
}

Test(post_send_flags, fence_rc_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.send_flags = IBV_SEND_FENCE;
	expect_posted(qp, &wr, &s, "FENCE on RC");
	cr_expect(s.hdr.flags & DROCE_WQE_FENCE, "WQE flags 0x%x: fence", s.hdr.flags);
}

Test(post_send_flags, fence_uc_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.send_flags = IBV_SEND_FENCE;
	expect_refused(qp, &wr, EINVAL, "FENCE on UC");
}

Test(post_send_flags, fence_ud_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.send_flags = IBV_SEND_FENCE;
	expect_refused(qp, &wr, EINVAL, "FENCE on UD");
}

Test(post_send_flags, solicited_carried)
{
	static const struct {
		enum ibv_qp_type type;
		enum ibv_wr_opcode op;
	} cases[] = {
		{IBV_QPT_RC, IBV_WR_SEND},
		{IBV_QPT_RC, IBV_WR_SEND_WITH_IMM},
		{IBV_QPT_RC, IBV_WR_RDMA_WRITE_WITH_IMM},
		{IBV_QPT_RC, IBV_WR_SEND_WITH_INV},
		{IBV_QPT_UD, IBV_WR_SEND},
	};

	for (unsigned int i = 0; i < DIM(cases); i++) {
		struct ibv_qp *qp = qp_rts(cases[i].type);
		struct ibv_send_wr wr;
		struct ibv_sge sge;
		struct harness_send s;

		wr_fill(qp, cases[i].op, &wr, &sge);
		wr.send_flags = IBV_SEND_SOLICITED;
		expect_posted(qp, &wr, &s, op_name(cases[i].op));
		cr_expect(s.hdr.flags & DROCE_WQE_SOLICITED, "%s on %s: WQE flags 0x%x lack SE",
			  op_name(cases[i].op), type_name(cases[i].type), s.hdr.flags);
	}
}

Test(post_send_flags, no_solicited_not_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND_WITH_IMM, &wr, &sge);
	expect_posted(qp, &wr, &s, "SEND_WITH_IMM without SOLICITED");
	cr_expect_eq(s.hdr.flags & DROCE_WQE_SOLICITED, 0, "WQE flags 0x%x: no SE", s.hdr.flags);
}

Test(post_send_flags, solicited_on_plain_write_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	/* droce: accepted; the engine sets SE only on SEND and WRITE with immediate */
	wr_fill(qp, IBV_WR_RDMA_WRITE, &wr, &sge);
	wr.send_flags = IBV_SEND_SOLICITED;
	expect_posted(qp, &wr, &s, "RDMA_WRITE with SOLICITED");
	cr_expect_eq(s.hdr.op, DROCE_WQE_WRITE, "WQE op %u", s.hdr.op);
}

static void unknown_flag_refused(unsigned int flag, const char *what)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.send_flags = IBV_SEND_SIGNALED | flag;
	expect_refused(qp, &wr, EINVAL, what);
}

Test(post_send_flags, ip_csum_refused)
{
	/* no checksum offload in device_cap_flags: the flag is not valid on droce's QPs */
	unknown_flag_refused(IBV_SEND_IP_CSUM, "IBV_SEND_IP_CSUM");
}

Test(post_send_flags, unknown_bit_5_refused)
{
	unknown_flag_refused(1u << 5, "send_flags bit 5");
}

Test(post_send_flags, unknown_bit_31_refused)
{
	unknown_flag_refused(1u << 31, "send_flags bit 31");
}

/* ------------------------------------------------------------ return values, bad_wr */

Test(post_send_ret, queue_full_in_one_list)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	uint32_t n = cap.max_send_wr + 1, i;
	struct ibv_send_wr wr[64], *bad = NULL;
	struct ibv_sge sge[64];
	struct harness_send s;
	int rc;

	cr_assert(n <= DIM(wr), "max_send_wr %u fits the test", cap.max_send_wr);
	for (i = 0; i < n; i++) {
		wr_fill(qp, IBV_WR_SEND, &wr[i], &sge[i]);
		wr[i].wr_id = i;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	rc = ibv_post_send(qp, wr, &bad);
	cr_expect_eq(rc, ENOMEM, "max_send_wr + 1 WRs: returned %d (%s), want ENOMEM", rc,
		     strerror(rc));
	cr_expect_eq(bad, &wr[n - 1], "bad_wr is WR %ld, want the last (%u)",
		     bad != NULL ? (long)(bad - wr) : -1L, n - 1);
	cr_expect_eq(harness_send_pending(qp), (int)cap.max_send_wr,
		     "the %u WRs before it are posted", cap.max_send_wr);
	for (i = 0; i + 1 < n; i++) {
		cr_assert(harness_take_send(qp, &s), "WQE %u", i);
		cr_expect_eq(s.hdr.wr_id, i, "WQE %u has wr_id %llu", i,
			     (unsigned long long)s.hdr.wr_id);
	}
}

Test(post_send_ret, queue_full_across_posts_then_room_again)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct harness_send s;
	uint32_t i;
	int rc;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	for (i = 0; i < cap.max_send_wr; i++)
		cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0, "WR %u of max_send_wr", i);
	rc = ibv_post_send(qp, &wr, &bad);
	cr_expect_eq(rc, ENOMEM, "full queue: returned %d (%s)", rc, strerror(rc));
	cr_expect_eq(bad, &wr, "bad_wr on the refused WR");
	cr_assert(harness_take_send(qp, &s), "the engine takes one WQE");
	rc = ibv_post_send(qp, &wr, &bad);
	cr_expect_eq(rc, 0, "a slot was freed: returned %d (%s)", rc, strerror(rc));
	cr_expect_eq(harness_send_pending(qp), (int)cap.max_send_wr, "the ring is full again");
}

Test(post_send_ret, efault_when_the_engine_breaks_the_ring)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct droce_qp_view v;
	struct droce_ring *ring;
	uint32_t i;
	int rc;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	for (i = 0; i < cap.max_send_wr; i++)
		cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0, "WR %u of max_send_wr", i);
	/* a consumer index no correct engine could write: ahead of everything published */
	cr_assert_eq(droce_engine_qp_view(qp, &v), 0, "QP view");
	ring = v.sq.addr;
	__atomic_store_n(&ring->cons.idx, cap.max_send_wr + 100, __ATOMIC_RELEASE);
	rc = ibv_post_send(qp, &wr, &bad);
	cr_expect_eq(rc, EFAULT, "corrupt send ring: returned %d (%s), want EFAULT", rc,
		     strerror(rc));
	cr_expect_eq(bad, &wr, "bad_wr on the WR not posted");
}

Test(post_send_ret, bad_wr_in_the_middle)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr[5], *bad = NULL;
	struct ibv_sge sge[5];
	struct harness_send s;
	int rc;

	for (int i = 0; i < 5; i++) {
		wr_fill(qp, IBV_WR_SEND, &wr[i], &sge[i]);
		wr[i].wr_id = 0x700 + (uint64_t)i;
		wr[i].next = i < 4 ? &wr[i + 1] : NULL;
	}
	wr[2].num_sge = -1;
	rc = ibv_post_send(qp, wr, &bad);
	cr_expect_eq(rc, EINVAL, "returned %d (%s), want EINVAL", rc, strerror(rc));
	cr_expect_eq(bad, &wr[2], "bad_wr is WR %ld, want 2", bad != NULL ? (long)(bad - wr) : -1L);
	cr_expect_eq(harness_send_pending(qp), 2, "the two WRs before it are posted, %d WQEs",
		     harness_send_pending(qp));
	cr_assert(harness_take_send(qp, &s), "WQE 0");
	cr_expect_eq(s.hdr.wr_id, 0x700, "WQE 0 wr_id 0x%llx", (unsigned long long)s.hdr.wr_id);
	cr_assert(harness_take_send(qp, &s), "WQE 1");
	cr_expect_eq(s.hdr.wr_id, 0x701, "WQE 1 wr_id 0x%llx", (unsigned long long)s.hdr.wr_id);
	cr_expect_eq(harness_send_pending(qp), 0, "nothing after the bad WR is posted");
}

Test(post_send_ret, bad_first_wr_nothing_posted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];
	int rc;

	for (int i = 0; i < 3; i++) {
		wr_fill(qp, IBV_WR_SEND, &wr[i], &sge[i]);
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[0].opcode = IBV_WR_TSO;
	rc = ibv_post_send(qp, wr, &bad);
	cr_expect_eq(rc, EINVAL, "returned %d (%s), want EINVAL", rc, strerror(rc));
	cr_expect_eq(bad, &wr[0], "bad_wr is the first WR");
	cr_expect_eq(harness_send_pending(qp), 0, "no WR is posted");
}

Test(post_send_ret, wrong_state_bad_wr_is_first)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 0);
	struct ibv_send_wr wr[2], *bad = NULL;
	struct ibv_sge sge[2];
	int rc;

	wr_fill(qp, IBV_WR_SEND, &wr[0], &sge[0]);
	wr_fill(qp, IBV_WR_SEND, &wr[1], &sge[1]);
	wr[0].next = &wr[1];
	rc = ibv_post_send(qp, wr, &bad);
	cr_expect_eq(rc, EINVAL, "RESET: returned %d (%s), want EINVAL", rc, strerror(rc));
	cr_expect_eq(bad, &wr[0], "bad_wr is the first WR of the list");
	cr_expect_eq(harness_send_pending(qp), 0, "nothing is posted");
}

Test(post_send_ret, list_posted_in_order)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	static const enum ibv_wr_opcode ops[] = {IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
						 IBV_WR_ATOMIC_FETCH_AND_ADD};
	struct ibv_send_wr wr[4], *bad = NULL;
	struct ibv_sge sge[4];
	struct harness_send s;

	for (unsigned int i = 0; i < 4; i++) {
		wr_fill(qp, ops[i], &wr[i], &sge[i]);
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	cr_assert_eq(ibv_post_send(qp, wr, &bad), 0, "post four WRs");
	for (unsigned int i = 0; i < 4; i++) {
		cr_assert(harness_take_send(qp, &s), "WQE %u", i);
		cr_expect_eq(s.hdr.wr_id, wr[i].wr_id, "WQE %u is %s", i, op_name(ops[i]));
	}
}

Test(post_send_ret, wr_id_in_completion)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.wr_id = 0xdeadbeefcafef00dull;
	wr.send_flags = IBV_SEND_SIGNALED;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0, "post");
	cr_expect_eq(harness_complete_sends(qp, IBV_WC_SUCCESS), 1, "the engine completes it");
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "one completion");
	cr_expect_eq(wc.wr_id, 0xdeadbeefcafef00dull, "wr_id 0x%llx", (unsigned long long)wc.wr_id);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "status %s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_SEND, "opcode %d", wc.opcode);
	cr_expect_eq(wc.byte_len, 64, "byte_len %u", wc.byte_len);
	cr_expect_eq(wc.qp_num, qp->qp_num, "qp_num %u", wc.qp_num);
}

Test(post_send_ret, wr_ids_in_completion_order)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];
	struct ibv_wc wc[3];

	for (int i = 0; i < 3; i++) {
		wr_fill(qp, i == 1 ? IBV_WR_RDMA_READ : IBV_WR_SEND, &wr[i], &sge[i]);
		wr[i].wr_id = 0xa0 + (uint64_t)i;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	cr_assert_eq(ibv_post_send(qp, wr, &bad), 0, "post three");
	cr_expect_eq(harness_complete_sends(qp, IBV_WC_SUCCESS), 3, "the engine completes three");
	cr_assert_eq(ibv_poll_cq(cq, 3, wc), 3, "three completions");
	for (int i = 0; i < 3; i++)
		cr_expect_eq(wc[i].wr_id, 0xa0 + (uint64_t)i, "completion %d wr_id 0x%llx", i,
			     (unsigned long long)wc[i].wr_id);
	cr_expect_eq(wc[1].opcode, IBV_WC_RDMA_READ, "completion 1 is the READ");
}

Test(post_send_ret, imm_data_carried_big_endian)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;
	const uint8_t want[4] = {0x12, 0x34, 0x56, 0x78};

	wr_fill(qp, IBV_WR_SEND_WITH_IMM, &wr, &sge);
	wr.imm_data = htonl(0x12345678);
	expect_posted(qp, &wr, &s, "SEND_WITH_IMM");
	cr_expect_eq(s.hdr.imm, htonl(0x12345678), "imm 0x%08x as posted", s.hdr.imm);
	cr_expect_arr_eq(&s.hdr.imm, want, 4, "imm bytes in network order");
}

Test(post_send_ret, write_imm_data_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_RDMA_WRITE_WITH_IMM, &wr, &sge);
	wr.imm_data = htonl(0xfeedf00d);
	expect_posted(qp, &wr, &s, "RDMA_WRITE_WITH_IMM");
	cr_expect_eq(s.hdr.imm, htonl(0xfeedf00d), "imm 0x%08x as posted", s.hdr.imm);
	cr_expect_eq(s.hdr.u.rdma.remote_addr, REMOTE_VA, "remote_addr");
	cr_expect_eq(s.hdr.u.rdma.rkey, REMOTE_KEY, "rkey");
}

Test(post_send_ret, rdma_fields_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_RDMA_READ, &wr, &sge);
	wr.wr.rdma.remote_addr = 0x123456789abcull;
	wr.wr.rdma.rkey = 0x77665544;
	expect_posted(qp, &wr, &s, "RDMA_READ");
	cr_expect_eq(s.hdr.u.rdma.remote_addr, 0x123456789abcull, "remote_addr");
	cr_expect_eq(s.hdr.u.rdma.rkey, 0x77665544, "rkey (not checked at post)");
	cr_expect_eq(s.hdr.length, 64, "length");
}

Test(post_send_ret, empty_list_is_success)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr *bad = NULL;

	cr_expect_eq(ibv_post_send(qp, NULL, &bad), 0, "an empty list posts nothing");
	cr_expect_eq(harness_send_pending(qp), 0, "nothing on the ring");
}

/* ------------------------------------------------------------ UD */

Test(post_send_ud, ah_required)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.wr.ud.ah = NULL;
	expect_refused(qp, &wr, EINVAL, "UD SEND without an AH");
}

Test(post_send_ud, ah_of_another_pd_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	cr_assert_not_null(pd2, "second PD");
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.wr.ud.ah = ah_new(pd2);
	expect_refused(qp, &wr, EINVAL, "UD SEND with an AH of another PD");
}

Test(post_send_ud, remote_qpn_and_qkey_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND_WITH_IMM, &wr, &sge);
	wr.wr.ud.remote_qpn = 0xabcdef;
	wr.wr.ud.remote_qkey = 0x80010002;
	expect_posted(qp, &wr, &s, "UD SEND_WITH_IMM");
	cr_expect_eq(s.hdr.u.ud.remote_qpn, 0xabcdef, "remote_qpn 0x%x", s.hdr.u.ud.remote_qpn);
	cr_expect_eq(s.hdr.u.ud.remote_qkey, 0x80010002, "remote_qkey 0x%x",
		     s.hdr.u.ud.remote_qkey);
	cr_expect_eq(s.hdr.imm, htonl(0x01020304), "imm 0x%08x", s.hdr.imm);
}

Test(post_send_ud, each_wr_carries_its_own_ah)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_ah *ah2 = ah_new(pd);
	struct ibv_send_wr wr[2], *bad = NULL;
	struct ibv_sge sge[2];
	struct harness_send s0, s1;

	wr_fill(qp, IBV_WR_SEND, &wr[0], &sge[0]);
	wr_fill(qp, IBV_WR_SEND, &wr[1], &sge[1]);
	wr[1].wr.ud.ah = ah2;
	wr[0].next = &wr[1];
	cr_assert_eq(ibv_post_send(qp, wr, &bad), 0, "two UD SENDs");
	cr_assert(harness_take_send(qp, &s0), "WQE 0");
	cr_assert(harness_take_send(qp, &s1), "WQE 1");
	cr_expect_neq(s0.hdr.u.ud.ah, s1.hdr.u.ud.ah, "two AHs, two AH ids in the WQEs");
}

Test(post_send_ud, multicast_qpn_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.wr.ud.remote_qpn = 0xffffff;
	expect_posted(qp, &wr, &s, "UD SEND to QPN 0xFFFFFF (multicast)");
	cr_expect_eq(s.hdr.u.ud.remote_qpn, 0xffffff, "remote_qpn 0x%x", s.hdr.u.ud.remote_qpn);
}

Test(post_send_ud, qpn_above_24_bits_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.wr.ud.remote_qpn = 0x1000000;
	expect_refused(qp, &wr, EINVAL, "UD remote_qpn 0x1000000");
}

static uint32_t path_mtu_bytes(void)
{
	struct ibv_port_attr pa;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0, "query_port");
	return 128u << pa.active_mtu;
}

Test(post_send_ud, message_of_path_mtu_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	sge.length = path_mtu_bytes();
	expect_posted(qp, &wr, &s, "UD SEND of one path MTU");
	cr_expect_eq(s.hdr.length, path_mtu_bytes(), "length %u", s.hdr.length);
}

Test(post_send_ud, message_above_path_mtu_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	sge.length = path_mtu_bytes() + 1;
	expect_refused(qp, &wr, EINVAL, "UD SEND of path MTU + 1 bytes");
}

Test(post_send_ud, message_above_path_mtu_across_sges_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_sge sge[2];
	struct ibv_send_wr wr;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	sge[0].length = path_mtu_bytes();
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey};
	wr.num_sge = 2;
	expect_refused(qp, &wr, EINVAL, "UD SEND of path MTU + 1 bytes in two SGEs");
}

Test(post_send_ud, sge_length_0_above_mtu_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	sge.length = 0; /* 2^31 bytes */
	expect_refused(qp, &wr, EINVAL, "UD SEND of 2^31 bytes");
}

/* ------------------------------------------------------------ memory windows, invalidation */

Test(post_send_mw, bind_type2_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;
	uint32_t old = the_mw2()->rkey;

	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	wr.bind_mw.rkey = (old & 0xffffff00u) | 0x5a;
	wr.bind_mw.bind_info.addr = (uintptr_t)buf + 512;
	wr.bind_mw.bind_info.length = 1024;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	expect_posted(qp, &wr, &s, "BIND_MW of a type-2 window");
	cr_expect_eq(s.hdr.op, DROCE_WQE_BIND_MW, "WQE op %u", s.hdr.op);
	cr_expect_eq(s.hdr.imm, 2, "window type %u", s.hdr.imm);
	cr_expect_eq(s.hdr.u.bind.new_rkey, (old & 0xffffff00u) | 0x5a, "new rkey 0x%x",
		     s.hdr.u.bind.new_rkey);
	cr_expect_eq(s.hdr.u.bind.mr_lkey, mr->lkey, "MR key");
	cr_expect_eq(s.hdr.u.bind.addr, (uintptr_t)buf + 512, "window address");
	cr_expect_eq(s.hdr.u.bind.length, 1024, "window length");
	cr_expect_eq(s.hdr.u.bind.access, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		     "window access 0x%x", s.hdr.u.bind.access);
	cr_expect(s.hdr.flags & DROCE_WQE_SIGNALED, "signaled");
	cr_expect_eq(s.hdr.num_sge, 0, "no SGE");
}

Test(post_send_mw, bind_type2_uc_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	expect_posted(qp, &wr, &s, "BIND_MW on UC");
	cr_expect_eq(s.hdr.op, DROCE_WQE_BIND_MW, "WQE op %u", s.hdr.op);
}

Test(post_send_mw, bind_rkey_of_another_index_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	wr.bind_mw.rkey = the_mw2()->rkey + 0x100; /* the next index */
	expect_refused(qp, &wr, EINVAL, "BIND_MW with a key of another index");
}

Test(post_send_mw, bind_type1_through_post_send_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	cr_assert_not_null(mw1, "type-1 window");
	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	wr.bind_mw.mw = mw1;
	wr.bind_mw.rkey = ibv_inc_rkey(mw1->rkey);
	expect_refused(qp, &wr, EINVAL, "BIND_MW of a type-1 window (ibv_bind_mw's job)");
}

Test(post_send_mw, bind_window_of_another_pd_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mw *w;
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	cr_assert_not_null(pd2, "second PD");
	w = ibv_alloc_mw(pd2, IBV_MW_TYPE_2);
	cr_assert_not_null(w, "window in the second PD");
	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	wr.bind_mw.mw = w;
	wr.bind_mw.rkey = ibv_inc_rkey(w->rkey);
	expect_refused(qp, &wr, EINVAL, "BIND_MW of a window of another PD");
}

Test(post_send_mw, bind_without_window_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	wr.bind_mw.mw = NULL;
	expect_refused(qp, &wr, EINVAL, "BIND_MW without a window");
}

Test(post_send_mw, bind_with_sges_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	sge = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 8, .lkey = 1};
	wr.sg_list = &sge;
	wr.num_sge = 1;
	expect_refused(qp, &wr, EINVAL, "BIND_MW with an SGE");
}

Test(post_send_mw, local_inv_carries_rkey)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_LOCAL_INV, &wr, &sge);
	wr.invalidate_rkey = 0x00c0ffee;
	expect_posted(qp, &wr, &s, "LOCAL_INV");
	cr_expect_eq(s.hdr.op, DROCE_WQE_LOCAL_INV, "WQE op %u", s.hdr.op);
	cr_expect_eq(s.hdr.imm, 0x00c0ffee, "rkey to invalidate 0x%x", s.hdr.imm);
	cr_expect_eq(s.hdr.length, 0, "no data");
}

Test(post_send_mw, local_inv_with_sges_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_LOCAL_INV, &wr, &sge);
	sge = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 8, .lkey = 1};
	wr.sg_list = &sge;
	wr.num_sge = 1;
	expect_refused(qp, &wr, EINVAL, "LOCAL_INV with an SGE");
}

Test(post_send_mw, send_with_inv_carries_rkey)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND_WITH_INV, &wr, &sge);
	wr.invalidate_rkey = 0x0badcafe;
	expect_posted(qp, &wr, &s, "SEND_WITH_INV");
	cr_expect_eq(s.hdr.op, DROCE_WQE_SEND_INV, "WQE op %u", s.hdr.op);
	cr_expect_eq(s.hdr.imm, 0x0badcafe, "rkey to invalidate 0x%x", s.hdr.imm);
	cr_expect_eq(s.hdr.length, 64, "the send's data");
}

Test(post_send_mw, local_inv_completion_opcode)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;

	wr_fill(qp, IBV_WR_LOCAL_INV, &wr, &sge);
	wr.send_flags = IBV_SEND_SIGNALED;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0, "post LOCAL_INV");
	cr_expect_eq(harness_complete_sends(qp, IBV_WC_SUCCESS), 1, "the engine runs it");
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "one completion");
	cr_expect_eq(wc.opcode, IBV_WC_LOCAL_INV, "opcode %d", wc.opcode);
	cr_expect_eq(wc.wr_id, wr.wr_id, "wr_id");
}
