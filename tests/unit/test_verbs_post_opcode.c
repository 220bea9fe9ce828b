/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An operation the QP type cannot carry is refused when it is posted, never
 * later by the engine: ibv_post_send() returns EINVAL with *bad_wr on it, the
 * requests before it are posted and nothing after it; in the extended API
 * ibv_wr_complete() fails and discards the session. The table is
 * doc/verbs.md's ("Posting"): ibv_post_send(3)'s, less SEND_WITH_INV on UC (no
 * UC opcode carries an IETH), so that SEND_WITH_INV is RC's only.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs_harness.h"

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

#define REMOTE_VA  0x7f0000001000ull
#define REMOTE_KEY 0x00abcd01u
#define UD_QPN     0x000022u
#define UD_QKEY    0x11111111u

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint8_t buf[4096] __attribute__((aligned(64)));

static void setup(void)
{
	ctx = harness_open(&pd);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cr_assert_not_null(cq, "create_cq: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	cr_assert_not_null(mr, "reg_mr: %s", strerror(errno));
}

TestSuite(post_opcode, .init = setup);

static const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : t == IBV_QPT_UD ? "UD" : "?";
}

static struct ibv_qp *qp_rts(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2, .max_recv_sge = 2},
		.qp_type = type,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	cr_assert_not_null(qp, "create %s QP: %s", type_name(type), strerror(errno));
	cr_assert_eq(harness_qp_to_rts(qp), 0, "%s QP to RTS", type_name(type));
	return qp;
}

/* An AH to 10.0.0.2 through GID 1 (10.0.0.1). */
static struct ibv_ah *ah_new(void)
{
	struct ibv_ah_attr a = {.is_global = 1, .port_num = 1};
	struct ibv_ah *h;

	a.grh.sgid_index = 1;
	a.grh.hop_limit = 64;
	a.grh.dgid.raw[10] = 0xff;
	a.grh.dgid.raw[11] = 0xff;
	a.grh.dgid.raw[12] = 10;
	a.grh.dgid.raw[15] = 2;
	h = ibv_create_ah(pd, &a);
	cr_assert_not_null(h, "create_ah: %s", strerror(errno));
	return h;
}

/*
 * A WR of @p op, right in every way but its QP type: one 64-byte SGE (8 bytes
 * for atomics, none for LOCAL_INV and BIND_MW), the fields of the opcode, and
 * UD addressing on a UD QP.
 */
static void wr_fill(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id, struct ibv_send_wr *wr,
		    struct ibv_sge *sge)
{
	static struct ibv_ah *ah;
	static struct ibv_mw *mw;

	memset(wr, 0, sizeof(*wr));
	*sge = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
	wr->wr_id = id;
	wr->opcode = op;
	wr->sg_list = sge;
	wr->num_sge = 1;
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wr->wr.rdma.remote_addr = REMOTE_VA;
		wr->wr.rdma.rkey = REMOTE_KEY;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		sge->length = 8;
		wr->wr.atomic.remote_addr = REMOTE_VA;
		wr->wr.atomic.rkey = REMOTE_KEY;
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
		if (mw == NULL)
			mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		cr_assert_not_null(mw, "alloc type-2 MW: %s", strerror(errno));
		wr->sg_list = NULL;
		wr->num_sge = 0;
		wr->bind_mw.mw = mw;
		wr->bind_mw.rkey = ibv_inc_rkey(mw->rkey);
		wr->bind_mw.bind_info.mr = mr;
		wr->bind_mw.bind_info.addr = (uintptr_t)buf;
		wr->bind_mw.bind_info.length = 1024;
		wr->bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
		break;
	default:
		break;
	}
	if (qp->qp_type == IBV_QPT_UD) {
		if (ah == NULL)
			ah = ah_new();
		wr->wr.ud.ah = ah;
		wr->wr.ud.remote_qpn = UD_QPN;
		wr->wr.ud.remote_qkey = UD_QKEY;
	}
}

/* SEND, @p op, SEND chained on @p qp: wr[0..2] with ids 1, 2, 3. */
static void chain_fill(struct ibv_qp *qp, enum ibv_wr_opcode op, struct ibv_send_wr wr[3],
		       struct ibv_sge sge[3])
{
	wr_fill(qp, IBV_WR_SEND, 1, &wr[0], &sge[0]);
	wr_fill(qp, op, 2, &wr[1], &sge[1]);
	wr_fill(qp, IBV_WR_SEND, 3, &wr[2], &sge[2]);
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
}

Test(post_opcode, send_with_inv_on_uc_refused_at_post)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UC);
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	int rc;

	wr_fill(qp, IBV_WR_SEND_WITH_INV, 7, &wr, &sge);
	rc = ibv_post_send(qp, &wr, &bad);
	cr_expect_eq(rc, EINVAL, "ibv_post_send returned %d (%s)", rc, strerror(rc));
	cr_expect_eq(bad, &wr, "bad_wr %p, want the refused WR", (void *)bad);
	cr_expect_eq(harness_send_pending(qp), 0, "nothing reached the send ring");
}

Test(post_opcode, send_with_inv_on_rc_posted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];

	chain_fill(qp, IBV_WR_SEND_WITH_INV, wr, sge);
	cr_expect_eq(ibv_post_send(qp, wr, &bad), 0, "the chain with SEND_WITH_INV on RC");
	cr_expect_eq(harness_send_pending(qp), 3, "all three posted");
}

/* Every operation a QP type cannot carry (the rest of the table: test_verbs_post_send.c). */
struct refused {
	enum ibv_qp_type type;
	enum ibv_wr_opcode op;
};

static struct refused refused_cells[] = {
	{IBV_QPT_UC, IBV_WR_SEND_WITH_INV},
	{IBV_QPT_UC, IBV_WR_RDMA_READ},
	{IBV_QPT_UC, IBV_WR_ATOMIC_CMP_AND_SWP},
	{IBV_QPT_UC, IBV_WR_ATOMIC_FETCH_AND_ADD},
	{IBV_QPT_UD, IBV_WR_SEND_WITH_INV},
	{IBV_QPT_UD, IBV_WR_RDMA_WRITE},
	{IBV_QPT_UD, IBV_WR_RDMA_WRITE_WITH_IMM},
	{IBV_QPT_UD, IBV_WR_RDMA_READ},
	{IBV_QPT_UD, IBV_WR_ATOMIC_CMP_AND_SWP},
	{IBV_QPT_UD, IBV_WR_ATOMIC_FETCH_AND_ADD},
	{IBV_QPT_UD, IBV_WR_LOCAL_INV},
	{IBV_QPT_UD, IBV_WR_BIND_MW},
	{IBV_QPT_UD, IBV_WR_TSO},
	{IBV_QPT_RC, IBV_WR_ATOMIC_WRITE},
};

ParameterizedTestParameters(post_opcode, refused_in_a_chain)
{
	return cr_make_param_array(struct refused, refused_cells, DIM(refused_cells));
}

/* The SEND before the refused WR is posted, the refused one and the SEND after it are not. */
ParameterizedTest(struct refused *c, post_opcode, refused_in_a_chain)
{
	struct ibv_qp *qp = qp_rts(c->type);
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];
	struct harness_send s;
	int rc;

	chain_fill(qp, c->op, wr, sge);
	rc = ibv_post_send(qp, wr, &bad);
	cr_expect_eq(rc, EINVAL, "opcode %d on %s: ibv_post_send returned %d (%s)", c->op,
		     type_name(c->type), rc, strerror(rc));
	cr_expect_eq(bad, &wr[1], "opcode %d on %s: bad_wr is not the refused WR", c->op,
		     type_name(c->type));
	cr_assert_eq(harness_send_pending(qp), 1, "opcode %d on %s: %d WQEs posted, want 1", c->op,
		     type_name(c->type), harness_send_pending(qp));
	cr_assert(harness_take_send(qp, &s));
	cr_expect_eq(s.hdr.wr_id, 1, "the SEND before it");
	cr_expect_eq(s.hdr.op, DROCE_WQE_SEND);
}

Test(post_opcode, bind_mw_type_1_on_ud_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind b = {
		.wr_id = 9,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = {.mr = mr,
			      .addr = (uintptr_t)buf,
			      .length = 1024,
			      .mw_access_flags = IBV_ACCESS_REMOTE_READ},
	};
	uint32_t rkey;

	cr_assert_not_null(mw, "alloc type-1 MW: %s", strerror(errno));
	rkey = mw->rkey;
	cr_expect_eq(ibv_bind_mw(qp, mw, &b), EINVAL);
	cr_expect_eq(mw->rkey, rkey, "the window's rkey unchanged");
	cr_expect_eq(harness_send_pending(qp), 0, "nothing reached the send ring");
}

/* A QP of @p type in RTS with the extended send API for @p ops; NULL if creation refused them. */
static struct ibv_qp_ex *qpx_rts(enum ibv_qp_type type, uint64_t ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2, .max_recv_sge = 2},
		.qp_type = type,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = ops,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);

	if (qp == NULL)
		return NULL;
	cr_assert_eq(harness_qp_to_rts(qp), 0, "%s QP to RTS", type_name(type));
	return ibv_qp_to_qp_ex(qp);
}

Test(post_opcode, wr_send_inv_on_uc_fails_the_session)
{
	struct ibv_qp_ex *qpx;
	int rc;

	errno = 0;
	qpx = qpx_rts(IBV_QPT_UC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV);
	if (qpx == NULL) {
		/* refused as early as creation: as good */
		cr_expect_eq(errno, EOPNOTSUPP, "creation refused with %s", strerror(errno));
		return;
	}
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 64);
	qpx->wr_id = 2;
	ibv_wr_send_inv(qpx, REMOTE_KEY);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 64);
	rc = ibv_wr_complete(qpx);
	cr_expect_eq(rc, EINVAL, "ibv_wr_complete returned %d (%s)", rc, strerror(rc));
	cr_expect_eq(harness_send_pending(&qpx->qp_base), 0, "the whole session discarded");
}

Test(post_opcode, wr_send_inv_on_rc_posted)
{
	struct ibv_qp_ex *qpx =
		qpx_rts(IBV_QPT_RC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV);
	struct harness_send s;

	cr_assert_not_null(qpx, "create RC QP: %s", strerror(errno));
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 64);
	qpx->wr_id = 2;
	ibv_wr_send_inv(qpx, REMOTE_KEY);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 64);
	cr_assert_eq(ibv_wr_complete(qpx), 0);
	cr_assert_eq(harness_send_pending(&qpx->qp_base), 2);
	cr_assert(harness_take_send(&qpx->qp_base, &s));
	cr_assert(harness_take_send(&qpx->qp_base, &s));
	cr_expect_eq(s.hdr.op, DROCE_WQE_SEND_INV);
	cr_expect_eq(s.hdr.imm, REMOTE_KEY, "the rkey to invalidate");
}
