/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The extended send API (ibv_wr_*(3)): QP creation with send_ops_flags,
 * ibv_qp_to_qp_ex(), the ibv_wr_start / ibv_wr_complete / ibv_wr_abort
 * critical region, every WR builder and setter, inline data lists and UD
 * addressing. The harness stands in for droce's engine: it sees only what
 * ibv_wr_complete() published.
 *
 * Decisions of droce checked here:
 * - send_ops_flags with an operation the QP type does not support: creation
 *   fails with EOPNOTSUPP; so do TSO (no raw packet QPs) and atomic write.
 * - ibv_qp_to_qp_ex() is NULL for a QP created without send_ops_flags.
 * - A WR that fails a check makes ibv_wr_complete() return EINVAL (ENOMEM
 *   when the send queue has no room) and discards the whole session.
 * - wr_flags follow ibv_post_send(): FENCE on RC only, unknown bits refused.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "verbs_harness.h"

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

#define TWO_31     0x80000000u
#define REMOTE_VA  0x7f0000002000ull
#define REMOTE_KEY 0x00beef01u
#define UD_QKEY    0x11111111u

#define OPS_UD (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define OPS_UC                                                                     \
	(OPS_UD | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV)
#define OPS_RC                                                                   \
	(OPS_UC | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static struct ibv_qp_cap cap; /* what the last qpx_new() was given */
static uint8_t buf[8192] __attribute__((aligned(64)));

static void setup(void)
{
	ctx = harness_open(&pd);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cr_assert_not_null(cq, "create_cq: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	cr_assert_not_null(mr, "reg_mr: %s", strerror(errno));
}

TestSuite(wr_create, .init = setup);
TestSuite(wr_session, .init = setup);
TestSuite(wr_flags, .init = setup);
TestSuite(wr_build, .init = setup);
TestSuite(wr_data, .init = setup);
TestSuite(wr_ud, .init = setup);

/* ------------------------------------------------------------------ helpers */

static const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : t == IBV_QPT_UD ? "UD" : "?";
}

static struct ibv_qp *qp_create_ex(enum ibv_qp_type type, uint64_t ops, int sig_all)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 8,
			.max_recv_wr = 8,
			.max_send_sge = 2,
			.max_recv_sge = 2,
			.max_inline_data = 48},
		.qp_type = type,
		.sq_sig_all = sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = ops,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);

	if (qp != NULL)
		cap = ia.cap;
	return qp;
}

/* An extended QP of @p type allowing @p ops, in RESET. */
static struct ibv_qp_ex *qpx_new(enum ibv_qp_type type, uint64_t ops, int sig_all)
{
	struct ibv_qp *qp = qp_create_ex(type, ops, sig_all);
	struct ibv_qp_ex *qpx;

	cr_assert_not_null(qp, "create %s QP with send_ops_flags 0x%llx: %s", type_name(type),
			   (unsigned long long)ops, strerror(errno));
	qpx = ibv_qp_to_qp_ex(qp);
	cr_assert_not_null(qpx, "ibv_qp_to_qp_ex of a QP made with send_ops_flags");
	return qpx;
}

/* An extended QP of @p type allowing every operation of its type, in RTS. */
static struct ibv_qp_ex *qpx_rts(enum ibv_qp_type type)
{
	uint64_t ops = type == IBV_QPT_RC ? OPS_RC : type == IBV_QPT_UC ? OPS_UC : OPS_UD;
	struct ibv_qp_ex *qpx = qpx_new(type, ops, 0);

	cr_assert_eq(harness_qp_to_rts(&qpx->qp_base), 0, "%s QP to RTS", type_name(type));
	return qpx;
}

static int pending(struct ibv_qp_ex *qpx)
{
	return harness_send_pending(&qpx->qp_base);
}

static void take(struct ibv_qp_ex *qpx, struct harness_send *s, const char *what)
{
	cr_assert(harness_take_send(&qpx->qp_base, s), "%s: the engine finds no WQE", what);
}

static const struct droce_sge *wqe_sge(const struct harness_send *s, unsigned int i)
{
	return (const struct droce_sge *)s->data + i;
}

/* Complete must fail with @p err and leave nothing for the engine. */
static void expect_complete_fails(struct ibv_qp_ex *qpx, int err, const char *what)
{
	int rc = ibv_wr_complete(qpx);

	cr_expect_eq(rc, err, "%s: ibv_wr_complete returned %d (%s), want %d (%s)", what, rc,
		     strerror(rc), err, strerror(err));
	cr_expect_eq(pending(qpx), 0, "%s: %d WQEs published by a failed session", what,
		     pending(qpx));
}

/* Complete must succeed and publish exactly @p n WQEs. */
static void expect_complete_ok(struct ibv_qp_ex *qpx, int n, const char *what)
{
	int rc = ibv_wr_complete(qpx);

	cr_assert_eq(rc, 0, "%s: ibv_wr_complete returned %d (%s)", what, rc, strerror(rc));
	cr_assert_eq(pending(qpx), n, "%s: %d WQEs published, want %d", what, pending(qpx), n);
}

/* A new session proves the QP still works: one SEND, published (RC and UC QPs). */
static void expect_next_session_works(struct ibv_qp_ex *qpx)
{
	struct harness_send s;

	ibv_wr_start(qpx);
	qpx->wr_id = 0x600d;
	qpx->wr_flags = 0;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 16);
	expect_complete_ok(qpx, 1, "the next session");
	take(qpx, &s, "the next session");
	cr_expect_eq(s.hdr.wr_id, 0x600d, "the next session's WR, wr_id 0x%llx",
		     (unsigned long long)s.hdr.wr_id);
}

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

/* ------------------------------------------------- creation: send_ops_flags x QP type */

struct ops_cell {
	enum ibv_qp_type type;
	uint64_t flag;
	bool ok;
};

/* ibv_wr_*(3): the "QP Type Supported" column, for droce's RC, UC and UD. */
static const struct {
	uint64_t flag;
	bool rc, uc, ud;
} ops_table[] = {
	{IBV_QP_EX_WITH_SEND, true, true, true},
	{IBV_QP_EX_WITH_SEND_WITH_IMM, true, true, true},
	{IBV_QP_EX_WITH_RDMA_WRITE, true, true, false},
	{IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, true, true, false},
	{IBV_QP_EX_WITH_RDMA_READ, true, false, false},
	{IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, true, false, false},
	{IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, true, false, false},
	{IBV_QP_EX_WITH_LOCAL_INV, true, true, false},
	{IBV_QP_EX_WITH_BIND_MW, true, true, false},
	{IBV_QP_EX_WITH_SEND_WITH_INV, true, true, false},
	/* UD TSO needs segmentation offload droce does not offer; atomic write is not droce's */
	{IBV_QP_EX_WITH_TSO, false, false, false},
	{IBV_QP_EX_WITH_ATOMIC_WRITE, false, false, false},
	{1ull << 40, false, false, false},
};

static struct ops_cell ops_cells[3 * DIM(ops_table)];

ParameterizedTestParameters(wr_create, send_ops_flag_by_qp_type)
{
	for (size_t i = 0; i < DIM(ops_table); i++) {
		ops_cells[3 * i] =
			(struct ops_cell){IBV_QPT_RC, ops_table[i].flag, ops_table[i].rc};
		ops_cells[3 * i + 1] =
			(struct ops_cell){IBV_QPT_UC, ops_table[i].flag, ops_table[i].uc};
		ops_cells[3 * i + 2] =
			(struct ops_cell){IBV_QPT_UD, ops_table[i].flag, ops_table[i].ud};
	}
	return cr_make_param_array(struct ops_cell, ops_cells, DIM(ops_cells));
}

ParameterizedTest(struct ops_cell *c, wr_create, send_ops_flag_by_qp_type)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = qp_create_ex(c->type, c->flag, 0);
	if (c->ok) {
		cr_assert_not_null(qp, "%s QP with send_ops_flags 0x%llx: %s", type_name(c->type),
				   (unsigned long long)c->flag, strerror(errno));
		cr_expect_not_null(ibv_qp_to_qp_ex(qp), "%s QP with 0x%llx has the extended API",
				   type_name(c->type), (unsigned long long)c->flag);
		return;
	}
	cr_expect_null(qp, "%s QP with send_ops_flags 0x%llx is refused", type_name(c->type),
		       (unsigned long long)c->flag);
	cr_expect_eq(errno, EOPNOTSUPP, "%s QP with send_ops_flags 0x%llx: errno %d (%s)",
		     type_name(c->type), (unsigned long long)c->flag, errno, strerror(errno));
}

/* One operation of the extended API: its send_ops_flags bit and the WQE it must post. */
struct op_post {
	uint64_t flag;
	uint8_t wqe_op;
	const char *name;
};

static const struct op_post op_posts[] = {
	{IBV_QP_EX_WITH_SEND, DROCE_WQE_SEND, "SEND"},
	{IBV_QP_EX_WITH_SEND_WITH_IMM, DROCE_WQE_SEND_IMM, "SEND_WITH_IMM"},
	{IBV_QP_EX_WITH_SEND_WITH_INV, DROCE_WQE_SEND_INV, "SEND_WITH_INV"},
	{IBV_QP_EX_WITH_RDMA_WRITE, DROCE_WQE_WRITE, "RDMA_WRITE"},
	{IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, DROCE_WQE_WRITE_IMM, "RDMA_WRITE_WITH_IMM"},
	{IBV_QP_EX_WITH_RDMA_READ, DROCE_WQE_READ, "RDMA_READ"},
	{IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, DROCE_WQE_CMP_SWAP, "ATOMIC_CMP_AND_SWP"},
	{IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, DROCE_WQE_FETCH_ADD, "ATOMIC_FETCH_AND_ADD"},
	{IBV_QP_EX_WITH_LOCAL_INV, DROCE_WQE_LOCAL_INV, "LOCAL_INV"},
	{IBV_QP_EX_WITH_BIND_MW, DROCE_WQE_BIND_MW, "BIND_MW"},
};

/* Build operation @p op (index @p i: its wr_id, immediate, key and target) on @p qpx. */
static void build_op(struct ibv_qp_ex *qpx, const struct op_post *op, unsigned int i,
		     struct ibv_mw *mw, struct ibv_ah *ah)
{
	struct ibv_mw_bind_info bi = {.mr = mr, .addr = (uintptr_t)buf, .length = 64};
	uint64_t va = REMOTE_VA + 64 * i;

	qpx->wr_id = 0x100 + i;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	switch (op->wqe_op) {
	case DROCE_WQE_SEND:
		ibv_wr_send(qpx);
		break;
	case DROCE_WQE_SEND_IMM:
		ibv_wr_send_imm(qpx, htonl(0x1000 + i));
		break;
	case DROCE_WQE_SEND_INV:
		ibv_wr_send_inv(qpx, REMOTE_KEY + i);
		break;
	case DROCE_WQE_WRITE:
		ibv_wr_rdma_write(qpx, REMOTE_KEY + i, va);
		break;
	case DROCE_WQE_WRITE_IMM:
		ibv_wr_rdma_write_imm(qpx, REMOTE_KEY + i, va, htonl(0x1000 + i));
		break;
	case DROCE_WQE_READ:
		ibv_wr_rdma_read(qpx, REMOTE_KEY + i, va);
		break;
	case DROCE_WQE_CMP_SWAP:
		ibv_wr_atomic_cmp_swp(qpx, REMOTE_KEY + i, va, 1, 2);
		break;
	case DROCE_WQE_FETCH_ADD:
		ibv_wr_atomic_fetch_add(qpx, REMOTE_KEY + i, va, 3);
		break;
	case DROCE_WQE_LOCAL_INV:
		ibv_wr_local_inv(qpx, REMOTE_KEY + i);
		return; /* no data */
	case DROCE_WQE_BIND_MW:
		ibv_wr_bind_mw(qpx, mw, ibv_inc_rkey(mw->rkey), &bi);
		return; /* no data */
	}
	if (ah != NULL)
		ibv_wr_set_ud_addr(qpx, ah, 0x00ab00 + i, UD_QKEY);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
}

/* The WQE operation @p op (index @p i) posted: its opcode, wr_id and what it targets. */
static void expect_op_wqe(const struct harness_send *s, const struct op_post *op, unsigned int i,
			  enum ibv_qp_type type)
{
	uint64_t va = REMOTE_VA + 64 * i;

	cr_expect_eq(s->hdr.op, op->wqe_op, "%s %s: WQE op %u, want %u", type_name(type), op->name,
		     s->hdr.op, op->wqe_op);
	cr_expect_eq(s->hdr.wr_id, 0x100 + i, "%s %s: wr_id 0x%llx", type_name(type), op->name,
		     (unsigned long long)s->hdr.wr_id);
	cr_expect(s->hdr.flags & DROCE_WQE_SIGNALED, "%s %s: signaled (flags 0x%x)",
		  type_name(type), op->name, s->hdr.flags);
	switch (op->wqe_op) {
	case DROCE_WQE_SEND_IMM:
	case DROCE_WQE_WRITE_IMM:
		cr_expect_eq(s->hdr.imm, htonl(0x1000 + i), "%s %s: imm 0x%08x", type_name(type),
			     op->name, s->hdr.imm);
		break;
	case DROCE_WQE_SEND_INV:
	case DROCE_WQE_LOCAL_INV:
		cr_expect_eq(s->hdr.imm, REMOTE_KEY + i, "%s %s: rkey to invalidate 0x%x",
			     type_name(type), op->name, s->hdr.imm);
		break;
	case DROCE_WQE_BIND_MW:
		cr_expect_eq(s->hdr.u.bind.mr_lkey, mr->lkey, "%s BIND_MW: the MR",
			     type_name(type));
		break;
	default:
		break;
	}
	if (op->wqe_op == DROCE_WQE_WRITE || op->wqe_op == DROCE_WQE_WRITE_IMM ||
	    op->wqe_op == DROCE_WQE_READ) {
		cr_expect_eq(s->hdr.u.rdma.remote_addr, va, "%s %s: remote_addr", type_name(type),
			     op->name);
		cr_expect_eq(s->hdr.u.rdma.rkey, REMOTE_KEY + i, "%s %s: rkey", type_name(type),
			     op->name);
	}
	if (op->wqe_op == DROCE_WQE_CMP_SWAP || op->wqe_op == DROCE_WQE_FETCH_ADD) {
		cr_expect_eq(s->hdr.u.atomic.remote_addr, va, "%s %s: remote_addr", type_name(type),
			     op->name);
		cr_expect_eq(s->hdr.u.atomic.compare_add, op->wqe_op == DROCE_WQE_CMP_SWAP ? 1 : 3,
			     "%s %s: compare or add", type_name(type), op->name);
	}
	if (type == IBV_QPT_UD)
		cr_expect_eq(s->hdr.u.ud.remote_qpn, 0x00ab00 + i, "UD %s: remote_qpn 0x%x",
			     op->name, s->hdr.u.ud.remote_qpn);
}

/*
 * A QP made with every operation of its type takes each of them: one after the other
 * (the send queue holds fewer WRs than RC has operations), each published as its own WQE
 * with its opcode, wr_id and target.
 */
static void expect_every_op_posts(enum ibv_qp_type type, uint64_t ops)
{
	struct ibv_qp_ex *qpx = qpx_rts(type);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_ah *ah = type == IBV_QPT_UD ? ah_new(pd) : NULL;
	unsigned int posted = 0;

	cr_assert_not_null(mw, "type-2 window: %s", strerror(errno));
	for (unsigned int i = 0; i < DIM(op_posts); i++) {
		const struct op_post *op = &op_posts[i];
		struct harness_send s;

		if (!(ops & op->flag))
			continue;
		ibv_wr_start(qpx);
		build_op(qpx, op, i, mw, ah);
		posted++;
		if (type == IBV_QPT_UC && op->wqe_op == DROCE_WQE_SEND_INV) {
			/* accepted at creation as ibv_wr_post(3) has it, but no UC opcode carries
			 * an IETH (IBA 9.2): refused at complete (doc/verbs.md) */
			expect_complete_fails(qpx, EINVAL, "UC SEND_WITH_INV");
			continue;
		}
		expect_complete_ok(qpx, 1, op->name);
		take(qpx, &s, op->name);
		expect_op_wqe(&s, op, i, type);
	}
	cr_expect_eq(posted, (unsigned int)__builtin_popcountll(ops), "%s: every operation",
		     type_name(type));
}

Test(wr_create, every_op_of_the_type_together)
{
	expect_every_op_posts(IBV_QPT_RC, OPS_RC);
	expect_every_op_posts(IBV_QPT_UC, OPS_UC);
	expect_every_op_posts(IBV_QPT_UD, OPS_UD);
}

Test(wr_create, one_unsupported_among_supported_refused)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = qp_create_ex(IBV_QPT_UC, OPS_UC | IBV_QP_EX_WITH_RDMA_READ, 0);
	cr_expect_null(qp, "UC with every UC operation and RDMA_READ is refused");
	cr_expect_eq(errno, EOPNOTSUPP, "errno %d (%s)", errno, strerror(errno));
}

Test(wr_create, to_qp_ex_without_send_ops_flags_is_null)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	cr_assert_not_null(qp, "create_qp: %s", strerror(errno));
	cr_expect_null(ibv_qp_to_qp_ex(qp), "a QP made without send_ops_flags has no qp_ex");
}

Test(wr_create, to_qp_ex_with_send_ops_flags)
{
	struct ibv_qp *qp = qp_create_ex(IBV_QPT_RC, IBV_QP_EX_WITH_SEND, 0);
	struct ibv_qp_ex *qpx;

	cr_assert_not_null(qp, "create_qp_ex: %s", strerror(errno));
	qpx = ibv_qp_to_qp_ex(qp);
	cr_assert_not_null(qpx, "ibv_qp_to_qp_ex");
	cr_expect_eq(&qpx->qp_base, qp, "qp_ex->qp_base is the QP");
}

/* ------------------------------------------------------------ the critical region */

Test(wr_session, nothing_published_before_complete)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	cr_expect_eq(pending(qpx), 0, "a WR built but not completed is not on the ring");
	expect_complete_ok(qpx, 1, "one SEND");
}

Test(wr_session, several_wrs_published_together_in_order)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;

	ibv_wr_start(qpx);
	qpx->wr_id = 11;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	qpx->wr_id = 12;
	ibv_wr_rdma_write(qpx, REMOTE_KEY, REMOTE_VA);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 16);
	qpx->wr_id = 13;
	ibv_wr_rdma_read(qpx, REMOTE_KEY, REMOTE_VA);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 32);
	cr_expect_eq(pending(qpx), 0, "nothing before complete");
	expect_complete_ok(qpx, 3, "three WRs");
	take(qpx, &s, "WQE 0");
	cr_expect_eq(s.hdr.wr_id, 11, "WQE 0 wr_id %llu", (unsigned long long)s.hdr.wr_id);
	cr_expect_eq(s.hdr.op, DROCE_WQE_SEND, "WQE 0 is the SEND");
	take(qpx, &s, "WQE 1");
	cr_expect_eq(s.hdr.wr_id, 12, "WQE 1 wr_id %llu", (unsigned long long)s.hdr.wr_id);
	cr_expect_eq(s.hdr.op, DROCE_WQE_WRITE, "WQE 1 is the WRITE");
	take(qpx, &s, "WQE 2");
	cr_expect_eq(s.hdr.wr_id, 13, "WQE 2 wr_id %llu", (unsigned long long)s.hdr.wr_id);
	cr_expect_eq(s.hdr.op, DROCE_WQE_READ, "WQE 2 is the READ");
}

Test(wr_session, empty_session_completes)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	expect_complete_ok(qpx, 0, "an empty session");
}

Test(wr_session, abort_discards_everything)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	qpx->wr_id = 2;
	ibv_wr_rdma_write(qpx, REMOTE_KEY, REMOTE_VA);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	ibv_wr_abort(qpx);
	cr_expect_eq(pending(qpx), 0, "an aborted session publishes nothing");
	expect_next_session_works(qpx);
	cr_expect_eq(pending(qpx), 0, "only the next session's WR was published");
}

Test(wr_session, abort_after_error_then_next_session_works)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	qpx->wr_flags = 1u << 7; /* unknown flag: the session has failed */
	ibv_wr_send(qpx);
	ibv_wr_abort(qpx);
	cr_expect_eq(pending(qpx), 0, "nothing published");
	expect_next_session_works(qpx);
}

Test(wr_session, op_not_requested_fails_whole_session)
{
	struct ibv_qp_ex *qpx = qpx_new(IBV_QPT_RC, IBV_QP_EX_WITH_SEND, 0);

	cr_assert_eq(harness_qp_to_rts(&qpx->qp_base), 0, "QP to RTS");
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx); /* requested */
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	qpx->wr_id = 2;
	ibv_wr_rdma_write(qpx, REMOTE_KEY, REMOTE_VA); /* not requested */
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	expect_complete_fails(qpx, EINVAL, "RDMA_WRITE not in send_ops_flags");
	expect_next_session_works(qpx);
}

Test(wr_session, op_not_requested_send_imm)
{
	struct ibv_qp_ex *qpx = qpx_new(IBV_QPT_UC, IBV_QP_EX_WITH_SEND, 0);

	cr_assert_eq(harness_qp_to_rts(&qpx->qp_base), 0, "QP to RTS");
	ibv_wr_start(qpx);
	ibv_wr_send_imm(qpx, htonl(1));
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	expect_complete_fails(qpx, EINVAL, "SEND_WITH_IMM not in send_ops_flags");
}

Test(wr_session, failing_setter_discards_good_wrs_before)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct ibv_sge sge[64];

	cr_assert(cap.max_send_sge + 1 <= DIM(sge), "geometry");
	for (unsigned int i = 0; i < DIM(sge); i++)
		sge[i] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey};
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	qpx->wr_id = 2;
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, cap.max_send_sge + 1, sge);
	expect_complete_fails(qpx, EINVAL, "max_send_sge + 1 SGEs after a good WR");
	expect_next_session_works(qpx);
}

Test(wr_session, inline_too_long_discards_session)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, buf, 4);
	qpx->wr_id = 2;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, buf, cap.max_inline_data + 1);
	expect_complete_fails(qpx, EINVAL, "inline of max_inline_data + 1 bytes");
	expect_next_session_works(qpx);
}

Test(wr_session, good_wr_after_failed_one_not_published)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, buf, cap.max_inline_data + 1);
	qpx->wr_id = 2;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	expect_complete_fails(qpx, EINVAL, "a good WR after a failed one");
}

Test(wr_session, reset_qp_complete_fails)
{
	struct ibv_qp_ex *qpx = qpx_new(IBV_QPT_RC, OPS_RC, 0);

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	expect_complete_fails(qpx, EINVAL, "complete on a RESET QP");
}

Test(wr_session, init_qp_complete_fails)
{
	struct ibv_qp_ex *qpx = qpx_new(IBV_QPT_RC, OPS_RC, 0);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};

	cr_assert_eq(
		ibv_modify_qp(&qpx->qp_base, &a,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		0, "QP to INIT");
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	expect_complete_fails(qpx, EINVAL, "complete on an INIT QP");
}

Test(wr_session, sqd_qp_accepts)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_SQD};

	cr_assert_eq(ibv_modify_qp(&qpx->qp_base, &a, IBV_QP_STATE), 0, "RTS -> SQD");
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	expect_complete_ok(qpx, 1, "complete on an SQD QP (held by the engine)");
}

Test(wr_session, err_qp_accepts_and_flushes)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct ibv_wc wc;

	cr_assert_eq(droce_verbs_qp_error(&qpx->qp_base, IBV_QPS_ERR, 0), 0, "engine: ERR");
	ibv_wr_start(qpx);
	qpx->wr_id = 0xf1;
	ibv_wr_send(qpx);
	expect_complete_ok(qpx, 1, "complete on an ERR QP");
	cr_expect_eq(harness_complete_sends(&qpx->qp_base, IBV_WC_WR_FLUSH_ERR), 1, "flushed");
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "one completion");
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "status %s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, 0xf1, "wr_id 0x%llx", (unsigned long long)wc.wr_id);
}

Test(wr_session, queue_full_fails_whole_session)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	for (uint32_t i = 0; i <= cap.max_send_wr; i++) {
		qpx->wr_id = i;
		ibv_wr_send(qpx);
	}
	expect_complete_fails(qpx, ENOMEM, "max_send_wr + 1 WRs in one session");
	expect_next_session_works(qpx);
}

Test(wr_session, queue_filled_exactly)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	for (uint32_t i = 0; i < cap.max_send_wr; i++) {
		qpx->wr_id = i;
		ibv_wr_send(qpx);
	}
	expect_complete_ok(qpx, (int)cap.max_send_wr, "max_send_wr WRs in one session");
}

Test(wr_session, wr_id_in_completion)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct ibv_wc wc;

	ibv_wr_start(qpx);
	qpx->wr_id = 0x1122334455667788ull;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, REMOTE_KEY, REMOTE_VA);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 100);
	expect_complete_ok(qpx, 1, "signaled WRITE");
	cr_expect_eq(harness_complete_sends(&qpx->qp_base, IBV_WC_SUCCESS), 1, "completed");
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "one completion");
	cr_expect_eq(wc.wr_id, 0x1122334455667788ull, "wr_id 0x%llx", (unsigned long long)wc.wr_id);
	cr_expect_eq(wc.opcode, IBV_WC_RDMA_WRITE, "opcode %d", wc.opcode);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "status %s", ibv_wc_status_str(wc.status));
}

Test(wr_session, post_send_between_sessions)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 4, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND};
	struct ibv_send_wr *bad = NULL;
	struct harness_send s;

	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	expect_complete_ok(qpx, 1, "session");
	cr_assert_eq(ibv_post_send(&qpx->qp_base, &wr, &bad), 0, "ibv_post_send after it");
	ibv_wr_start(qpx);
	qpx->wr_id = 3;
	ibv_wr_send(qpx);
	cr_assert_eq(ibv_wr_complete(qpx), 0, "a session after ibv_post_send");
	for (uint64_t i = 1; i <= 3; i++) {
		take(qpx, &s, "interleaved WQE");
		cr_expect_eq(s.hdr.wr_id, i, "WQE %llu in posting order", (unsigned long long)i);
	}
}

struct racer {
	struct ibv_qp *qp;
	int started; /* atomic: the thread is about to post */
	int rc;
};

static void *post_during_session(void *arg)
{
	struct racer *r = arg;
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 4, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND};
	struct ibv_send_wr *bad = NULL;

	__atomic_store_n(&r->started, 1, __ATOMIC_RELEASE);
	r->rc = ibv_post_send(r->qp, &wr, &bad);
	return NULL;
}

Test(wr_session, critical_region_excludes_post_send)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct racer r = {.qp = &qpx->qp_base};
	struct timespec pause = {.tv_nsec = 20 * 1000 * 1000};
	struct harness_send s;
	pthread_t t;

	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	cr_assert_eq(pthread_create(&t, NULL, post_during_session, &r), 0, "thread");
	while (!__atomic_load_n(&r.started, __ATOMIC_ACQUIRE))
		;
	nanosleep(&pause, NULL); /* give the other thread time to try */
	qpx->wr_id = 2;
	ibv_wr_send(qpx);
	cr_assert_eq(ibv_wr_complete(qpx), 0, "complete");
	pthread_join(t, NULL);
	cr_expect_eq(r.rc, 0, "the other thread's post succeeds once the region ends");
	for (uint64_t i = 1; i <= 3; i++) {
		take(qpx, &s, "WQE");
		cr_expect_eq(s.hdr.wr_id, i, "WQE %llu: the session's WRs come first, whole",
			     (unsigned long long)i);
	}
}

/* ------------------------------------------------------------ wr_id and wr_flags */

Test(wr_flags, carried_per_wr)
{
	static const unsigned int flags[] = {
		0, IBV_SEND_SIGNALED, IBV_SEND_SOLICITED, IBV_SEND_FENCE,
		IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_FENCE};
	static const uint8_t want[] = {0, DROCE_WQE_SIGNALED, DROCE_WQE_SOLICITED, DROCE_WQE_FENCE,
				       DROCE_WQE_SIGNALED | DROCE_WQE_SOLICITED | DROCE_WQE_FENCE};
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;
	const uint8_t mask = DROCE_WQE_SIGNALED | DROCE_WQE_SOLICITED | DROCE_WQE_FENCE;

	ibv_wr_start(qpx);
	for (unsigned int i = 0; i < DIM(flags); i++) {
		qpx->wr_id = 0x100 + i;
		qpx->wr_flags = flags[i];
		ibv_wr_send_imm(qpx, htonl(i));
		ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	}
	expect_complete_ok(qpx, (int)DIM(flags), "five WRs with their own flags");
	for (unsigned int i = 0; i < DIM(flags); i++) {
		take(qpx, &s, "flagged WQE");
		cr_expect_eq(s.hdr.wr_id, 0x100 + i, "WQE %u wr_id 0x%llx", i,
			     (unsigned long long)s.hdr.wr_id);
		cr_expect_eq(s.hdr.flags & mask, want[i], "WQE %u flags 0x%x, want 0x%x", i,
			     s.hdr.flags & mask, want[i]);
	}
}

Test(wr_flags, sq_sig_all_signals_every_wr)
{
	struct ibv_qp_ex *qpx = qpx_new(IBV_QPT_RC, OPS_RC, 1);
	struct harness_send s;

	cr_assert_eq(harness_qp_to_rts(&qpx->qp_base), 0, "QP to RTS");
	ibv_wr_start(qpx);
	qpx->wr_flags = 0;
	ibv_wr_send(qpx);
	expect_complete_ok(qpx, 1, "SEND with wr_flags 0, sq_sig_all 1");
	take(qpx, &s, "SEND");
	cr_expect(s.hdr.flags & DROCE_WQE_SIGNALED, "signaled by sq_sig_all (flags 0x%x)",
		  s.hdr.flags);
}

Test(wr_flags, fence_on_uc_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UC);

	ibv_wr_start(qpx);
	qpx->wr_flags = IBV_SEND_FENCE;
	ibv_wr_send(qpx);
	expect_complete_fails(qpx, EINVAL, "FENCE on UC");
}

Test(wr_flags, unknown_flag_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	qpx->wr_flags = IBV_SEND_SIGNALED | (1u << 9);
	ibv_wr_send(qpx);
	expect_complete_fails(qpx, EINVAL, "wr_flags bit 9");
}

Test(wr_flags, ip_csum_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	qpx->wr_flags = IBV_SEND_IP_CSUM;
	ibv_wr_send(qpx);
	expect_complete_fails(qpx, EINVAL, "IBV_SEND_IP_CSUM (no checksum offload)");
}

/* ------------------------------------------------------------ every builder */

Test(wr_build, send)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;

	ibv_wr_start(qpx);
	qpx->wr_id = 7;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf + 8, 24);
	expect_complete_ok(qpx, 1, "SEND");
	take(qpx, &s, "SEND");
	cr_expect_eq(s.hdr.op, DROCE_WQE_SEND, "op %u", s.hdr.op);
	cr_expect_eq(s.hdr.wr_id, 7, "wr_id");
	cr_expect_eq(s.hdr.num_sge, 1, "num_sge %u", s.hdr.num_sge);
	cr_expect_eq(s.hdr.length, 24, "length %u", s.hdr.length);
	cr_expect_eq(wqe_sge(&s, 0)->addr, (uintptr_t)buf + 8, "SGE addr");
	cr_expect_eq(wqe_sge(&s, 0)->length, 24, "SGE length");
	cr_expect_eq(wqe_sge(&s, 0)->lkey, mr->lkey, "SGE lkey");
}

Test(wr_build, send_imm)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UC);
	struct harness_send s;
	const uint8_t want[4] = {0xca, 0xfe, 0xba, 0xbe};

	ibv_wr_start(qpx);
	ibv_wr_send_imm(qpx, htonl(0xcafebabe));
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	expect_complete_ok(qpx, 1, "SEND_WITH_IMM");
	take(qpx, &s, "SEND_WITH_IMM");
	cr_expect_eq(s.hdr.op, DROCE_WQE_SEND_IMM, "op %u", s.hdr.op);
	cr_expect_arr_eq(&s.hdr.imm, want, 4, "imm bytes in network order");
}

Test(wr_build, send_inv)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;

	ibv_wr_start(qpx);
	ibv_wr_send_inv(qpx, 0x00123401);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	expect_complete_ok(qpx, 1, "SEND_WITH_INV");
	take(qpx, &s, "SEND_WITH_INV");
	cr_expect_eq(s.hdr.op, DROCE_WQE_SEND_INV, "op %u", s.hdr.op);
	cr_expect_eq(s.hdr.imm, 0x00123401, "rkey to invalidate 0x%x", s.hdr.imm);
	cr_expect_eq(s.hdr.length, 8, "length");
}

Test(wr_build, rdma_write)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UC);
	struct harness_send s;

	ibv_wr_start(qpx);
	ibv_wr_rdma_write(qpx, REMOTE_KEY, REMOTE_VA);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 256);
	expect_complete_ok(qpx, 1, "RDMA_WRITE");
	take(qpx, &s, "RDMA_WRITE");
	cr_expect_eq(s.hdr.op, DROCE_WQE_WRITE, "op %u", s.hdr.op);
	cr_expect_eq(s.hdr.u.rdma.rkey, REMOTE_KEY, "rkey 0x%x", s.hdr.u.rdma.rkey);
	cr_expect_eq(s.hdr.u.rdma.remote_addr, REMOTE_VA, "remote_addr");
	cr_expect_eq(s.hdr.length, 256, "length");
}

Test(wr_build, rdma_write_imm)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;

	ibv_wr_start(qpx);
	ibv_wr_rdma_write_imm(qpx, REMOTE_KEY, REMOTE_VA + 64, htonl(0x1234));
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 64);
	expect_complete_ok(qpx, 1, "RDMA_WRITE_WITH_IMM");
	take(qpx, &s, "RDMA_WRITE_WITH_IMM");
	cr_expect_eq(s.hdr.op, DROCE_WQE_WRITE_IMM, "op %u", s.hdr.op);
	cr_expect_eq(s.hdr.imm, htonl(0x1234), "imm 0x%08x", s.hdr.imm);
	cr_expect_eq(s.hdr.u.rdma.rkey, REMOTE_KEY, "rkey");
	cr_expect_eq(s.hdr.u.rdma.remote_addr, REMOTE_VA + 64, "remote_addr");
}

Test(wr_build, rdma_read)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;

	ibv_wr_start(qpx);
	ibv_wr_rdma_read(qpx, REMOTE_KEY, REMOTE_VA);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 4096);
	expect_complete_ok(qpx, 1, "RDMA_READ");
	take(qpx, &s, "RDMA_READ");
	cr_expect_eq(s.hdr.op, DROCE_WQE_READ, "op %u", s.hdr.op);
	cr_expect_eq(s.hdr.u.rdma.rkey, REMOTE_KEY, "rkey");
	cr_expect_eq(s.hdr.u.rdma.remote_addr, REMOTE_VA, "remote_addr");
	cr_expect_eq(s.hdr.length, 4096, "length");
}

Test(wr_build, atomic_cmp_swp)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;

	ibv_wr_start(qpx);
	ibv_wr_atomic_cmp_swp(qpx, REMOTE_KEY, REMOTE_VA, 0x0102030405060708ull,
			      0x1112131415161718ull);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	expect_complete_ok(qpx, 1, "ATOMIC_CMP_AND_SWP");
	take(qpx, &s, "ATOMIC_CMP_AND_SWP");
	cr_expect_eq(s.hdr.op, DROCE_WQE_CMP_SWAP, "op %u", s.hdr.op);
	cr_expect_eq(s.hdr.u.atomic.rkey, REMOTE_KEY, "rkey");
	cr_expect_eq(s.hdr.u.atomic.remote_addr, REMOTE_VA, "remote_addr");
	cr_expect_eq(s.hdr.u.atomic.compare_add, 0x0102030405060708ull, "compare");
	cr_expect_eq(s.hdr.u.atomic.swap, 0x1112131415161718ull, "swap");
	cr_expect_eq(s.hdr.length, 8, "length");
}

Test(wr_build, atomic_fetch_add)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;

	ibv_wr_start(qpx);
	ibv_wr_atomic_fetch_add(qpx, REMOTE_KEY, REMOTE_VA + 8, 3);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	expect_complete_ok(qpx, 1, "ATOMIC_FETCH_AND_ADD");
	take(qpx, &s, "ATOMIC_FETCH_AND_ADD");
	cr_expect_eq(s.hdr.op, DROCE_WQE_FETCH_ADD, "op %u", s.hdr.op);
	cr_expect_eq(s.hdr.u.atomic.compare_add, 3, "add");
	cr_expect_eq(s.hdr.u.atomic.remote_addr, REMOTE_VA + 8, "remote_addr");
}

Test(wr_build, atomic_unaligned_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	ibv_wr_atomic_fetch_add(qpx, REMOTE_KEY, REMOTE_VA + 4, 3);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	expect_complete_fails(qpx, EINVAL, "FETCH_AND_ADD at a 4-byte aligned address");
}

Test(wr_build, atomic_length_not_8_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	ibv_wr_atomic_cmp_swp(qpx, REMOTE_KEY, REMOTE_VA, 1, 2);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 16);
	expect_complete_fails(qpx, EINVAL, "CMP_AND_SWP of 16 bytes");
}

Test(wr_build, atomic_without_data_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	ibv_wr_atomic_cmp_swp(qpx, REMOTE_KEY, REMOTE_VA, 1, 2);
	expect_complete_fails(qpx, EINVAL, "CMP_AND_SWP without a DATA setter");
}

Test(wr_build, bind_mw_type2)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind_info bi = {.mr = mr,
				      .addr = (uintptr_t)buf + 64,
				      .length = 512,
				      .mw_access_flags = IBV_ACCESS_REMOTE_READ};
	struct harness_send s;
	uint32_t rkey;

	cr_assert_not_null(mw, "type-2 window: %s", strerror(errno));
	rkey = (mw->rkey & 0xffffff00u) | 0x77;
	ibv_wr_start(qpx);
	qpx->wr_id = 0xb1;
	ibv_wr_bind_mw(qpx, mw, rkey, &bi);
	expect_complete_ok(qpx, 1, "BIND_MW");
	take(qpx, &s, "BIND_MW");
	cr_expect_eq(s.hdr.op, DROCE_WQE_BIND_MW, "op %u", s.hdr.op);
	cr_expect_eq(s.hdr.wr_id, 0xb1, "wr_id");
	cr_expect_eq(s.hdr.imm, 2, "window type %u", s.hdr.imm);
	cr_expect_eq(s.hdr.u.bind.new_rkey, rkey, "new rkey 0x%x", s.hdr.u.bind.new_rkey);
	cr_expect_eq(s.hdr.u.bind.mr_lkey, mr->lkey, "MR key");
	cr_expect_eq(s.hdr.u.bind.addr, (uintptr_t)buf + 64, "address");
	cr_expect_eq(s.hdr.u.bind.length, 512, "length");
	cr_expect_eq(s.hdr.u.bind.access, IBV_ACCESS_REMOTE_READ, "access");
}

Test(wr_build, bind_mw_other_index_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UC);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind_info bi = {.mr = mr, .addr = (uintptr_t)buf, .length = 64};

	cr_assert_not_null(mw, "type-2 window: %s", strerror(errno));
	ibv_wr_start(qpx);
	ibv_wr_bind_mw(qpx, mw, mw->rkey + 0x100, &bi);
	expect_complete_fails(qpx, EINVAL, "BIND_MW with a key of another index");
}

Test(wr_build, bind_mw_type1_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind_info bi = {.mr = mr, .addr = (uintptr_t)buf, .length = 64};

	cr_assert_not_null(mw, "type-1 window: %s", strerror(errno));
	ibv_wr_start(qpx);
	ibv_wr_bind_mw(qpx, mw, ibv_inc_rkey(mw->rkey), &bi);
	expect_complete_fails(qpx, EINVAL, "BIND_MW of a type-1 window");
}

Test(wr_build, local_inv)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;

	ibv_wr_start(qpx);
	ibv_wr_local_inv(qpx, 0x00abab02);
	expect_complete_ok(qpx, 1, "LOCAL_INV");
	take(qpx, &s, "LOCAL_INV");
	cr_expect_eq(s.hdr.op, DROCE_WQE_LOCAL_INV, "op %u", s.hdr.op);
	cr_expect_eq(s.hdr.imm, 0x00abab02, "rkey to invalidate 0x%x", s.hdr.imm);
	cr_expect_eq(s.hdr.length, 0, "no data");
}

Test(wr_build, local_inv_with_data_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	ibv_wr_local_inv(qpx, 0x00abab02);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	expect_complete_fails(qpx, EINVAL, "LOCAL_INV with a DATA setter");
}

Test(wr_build, send_tso_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UD);
	uint8_t hdr[64] = {0};

	ibv_wr_start(qpx);
	ibv_wr_send_tso(qpx, hdr, sizeof(hdr), 1000);
	expect_complete_fails(qpx, EINVAL, "TSO (no raw packet QPs)");
}

Test(wr_build, set_xrc_srqn_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_xrc_srqn(qpx, 5);
	expect_complete_fails(qpx, EINVAL, "XRC SRQN on an RC QP");
}

Test(wr_build, setter_without_builder_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	expect_complete_fails(qpx, EINVAL, "a DATA setter before any builder");
}

/* ------------------------------------------------------------ DATA setters */

Test(wr_data, sge_list)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct ibv_sge sge[2] = {
		{.addr = (uintptr_t)buf, .length = 10, .lkey = mr->lkey},
		{.addr = (uintptr_t)buf + 100, .length = 20, .lkey = 0x12345678},
	};
	struct harness_send s;

	cr_assert_geq(cap.max_send_sge, 2, "max_send_sge %u", cap.max_send_sge);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 2, sge);
	memset(sge, 0, sizeof(sge)); /* copied by the setter */
	expect_complete_ok(qpx, 1, "SEND with two SGEs");
	take(qpx, &s, "SEND");
	cr_expect_eq(s.hdr.num_sge, 2, "num_sge %u", s.hdr.num_sge);
	cr_expect_eq(s.hdr.length, 30, "length %u", s.hdr.length);
	cr_expect_eq(wqe_sge(&s, 1)->addr, (uintptr_t)buf + 100, "SGE 1 addr");
	cr_expect_eq(wqe_sge(&s, 1)->length, 20, "SGE 1 length");
	cr_expect_eq(wqe_sge(&s, 1)->lkey, 0x12345678, "SGE 1 lkey as given");
}

Test(wr_data, sge_list_of_max_send_sge)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct ibv_sge sge[64];

	cr_assert(cap.max_send_sge <= DIM(sge), "geometry");
	for (unsigned int i = 0; i < DIM(sge); i++)
		sge[i] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey};
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, cap.max_send_sge, sge);
	expect_complete_ok(qpx, 1, "max_send_sge SGEs");
}

Test(wr_data, sge_length_0_means_2_31)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;

	ibv_wr_start(qpx);
	ibv_wr_rdma_write(qpx, REMOTE_KEY, REMOTE_VA);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 0);
	expect_complete_ok(qpx, 1, "SGE of length 0");
	take(qpx, &s, "WRITE");
	cr_expect_eq(wqe_sge(&s, 0)->length, TWO_31, "SGE length 0x%x", wqe_sge(&s, 0)->length);
	cr_expect_eq(s.hdr.length, TWO_31, "length 0x%x", s.hdr.length);
}

Test(wr_data, total_above_2_31_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct ibv_sge sge[2] = {
		{.addr = (uintptr_t)buf, .length = 0, .lkey = mr->lkey},
		{.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey},
	};

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 2, sge);
	expect_complete_fails(qpx, EINVAL, "2^31 + 1 bytes");
}

Test(wr_data, zero_bytes_without_setter)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	expect_complete_ok(qpx, 1, "SEND without a DATA setter");
	take(qpx, &s, "SEND");
	cr_expect_eq(s.hdr.length, 0, "zero bytes");
	cr_expect_eq(s.hdr.num_sge, 0, "no SGE");
}

/* An empty SGE list replaces SGEs set before it: a WQE of 0 bytes, no SGE (ibv_wr_post(3)). */
static void expect_empty_sge_list_wqe(struct ibv_qp_ex *qpx, uint8_t op, const char *what)
{
	struct ibv_sge one = {.addr = (uintptr_t)buf, .length = 10, .lkey = mr->lkey};
	struct harness_send s;

	ibv_wr_set_sge_list(qpx, 1, &one);
	ibv_wr_set_sge_list(qpx, 0, NULL);
	expect_complete_ok(qpx, 1, what);
	take(qpx, &s, what);
	cr_expect_eq(s.hdr.op, op, "%s: op %u", what, s.hdr.op);
	cr_expect_eq(s.hdr.num_sge, 0, "%s: num_sge %u", what, s.hdr.num_sge);
	cr_expect_eq(s.hdr.length, 0, "%s: length %u", what, s.hdr.length);
	cr_expect_eq(s.hdr.flags & DROCE_WQE_INLINE, 0, "%s: not inline", what);
}

Test(wr_data, zero_byte_write_empty_sge_list)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	ibv_wr_rdma_write(qpx, REMOTE_KEY, REMOTE_VA);
	expect_empty_sge_list_wqe(qpx, DROCE_WQE_WRITE, "WRITE of 0 bytes");
}

Test(wr_data, zero_byte_read_empty_sge_list)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	ibv_wr_rdma_read(qpx, REMOTE_KEY, REMOTE_VA);
	expect_empty_sge_list_wqe(qpx, DROCE_WQE_READ, "READ of 0 bytes");
}

Test(wr_data, zero_byte_ud_send_empty_sge_list)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UD);
	struct ibv_ah *ah = ah_new(pd);

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, ah, 0x00ab12, UD_QKEY);
	expect_empty_sge_list_wqe(qpx, DROCE_WQE_SEND, "UD SEND of 0 bytes");
}

Test(wr_data, zero_byte_write_empty_inline_list)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;

	ibv_wr_start(qpx);
	qpx->wr_flags = IBV_SEND_INLINE;
	ibv_wr_rdma_write(qpx, REMOTE_KEY, REMOTE_VA);
	ibv_wr_set_inline_data_list(qpx, 0, NULL);
	expect_complete_ok(qpx, 1, "inline WRITE of 0 bytes");
	take(qpx, &s, "inline WRITE of 0 bytes");
	cr_expect_eq(s.hdr.length, 0, "length %u", s.hdr.length);
	cr_expect_eq(s.hdr.num_sge, 0, "num_sge %u", s.hdr.num_sge);
}

Test(wr_data, inline_copied_by_the_setter)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	char data[] = "copied at once";
	struct harness_send s;

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, data, 14);
	memset(data, 'x', sizeof(data)); /* reusable as soon as the setter returns */
	expect_complete_ok(qpx, 1, "inline SEND");
	take(qpx, &s, "inline SEND");
	cr_expect(s.hdr.flags & DROCE_WQE_INLINE, "INLINE flag (0x%x)", s.hdr.flags);
	cr_expect_eq(s.hdr.length, 14, "length %u", s.hdr.length);
	cr_expect_eq(s.hdr.num_sge, 0, "no SGE");
	cr_expect_arr_eq(s.data, "copied at once", 14, "inline bytes as they were at the setter");
}

Test(wr_data, inline_list_concatenated)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UC);
	char a[] = "abc", b[] = "", c[] = "defgh", d[] = "ij";
	struct ibv_data_buf list[4] = {
		{.addr = a, .length = 3},
		{.addr = b, .length = 0},
		{.addr = c, .length = 5},
		{.addr = d, .length = 2},
	};
	struct harness_send s;

	ibv_wr_start(qpx);
	ibv_wr_rdma_write_imm(qpx, REMOTE_KEY, REMOTE_VA, htonl(9));
	ibv_wr_set_inline_data_list(qpx, 4, list);
	memset(c, 0, sizeof(c));
	expect_complete_ok(qpx, 1, "inline list WRITE_WITH_IMM");
	take(qpx, &s, "inline list");
	cr_expect_eq(s.hdr.length, 10, "length %u", s.hdr.length);
	cr_expect_arr_eq(s.data, "abcdefghij", 10, "bytes concatenated in list order");
	cr_expect(s.hdr.flags & DROCE_WQE_INLINE, "INLINE flag");
}

Test(wr_data, inline_of_max_accepted)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct harness_send s;

	for (unsigned int i = 0; i < cap.max_inline_data; i++)
		buf[i] = (uint8_t)(0xa0 ^ i);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, buf, cap.max_inline_data);
	expect_complete_ok(qpx, 1, "inline of max_inline_data bytes");
	take(qpx, &s, "inline");
	cr_expect_eq(s.hdr.length, cap.max_inline_data, "length %u", s.hdr.length);
	cr_expect_arr_eq(s.data, buf, cap.max_inline_data, "inline bytes");
}

Test(wr_data, inline_list_over_max_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct ibv_data_buf list[2] = {
		{.addr = buf, .length = cap.max_inline_data},
		{.addr = buf, .length = 1},
	};

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data_list(qpx, 2, list);
	expect_complete_fails(qpx, EINVAL, "inline list of max_inline_data + 1 bytes");
}

Test(wr_data, inline_list_lengths_wrapping_fail)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);
	struct ibv_data_buf list[2] = {
		{.addr = buf, .length = SIZE_MAX},
		{.addr = buf, .length = 2}, /* the sum wraps to 1 */
	};

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data_list(qpx, 2, list);
	expect_complete_fails(qpx, EINVAL, "inline lengths whose sum wraps");
}

static void inline_refused(void (*build)(struct ibv_qp_ex *), const char *what)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	build(qpx);
	ibv_wr_set_inline_data(qpx, buf, 8);
	expect_complete_fails(qpx, EINVAL, what);
}

static void build_read(struct ibv_qp_ex *qpx)
{
	ibv_wr_rdma_read(qpx, REMOTE_KEY, REMOTE_VA);
}

static void build_cmp_swp(struct ibv_qp_ex *qpx)
{
	ibv_wr_atomic_cmp_swp(qpx, REMOTE_KEY, REMOTE_VA, 1, 2);
}

static void build_fetch_add(struct ibv_qp_ex *qpx)
{
	ibv_wr_atomic_fetch_add(qpx, REMOTE_KEY, REMOTE_VA, 1);
}

Test(wr_data, inline_read_fails)
{
	inline_refused(build_read, "inline RDMA_READ");
}

Test(wr_data, inline_cmp_swp_fails)
{
	inline_refused(build_cmp_swp, "inline ATOMIC_CMP_AND_SWP");
}

Test(wr_data, inline_fetch_add_fails)
{
	inline_refused(build_fetch_add, "inline ATOMIC_FETCH_AND_ADD");
}

/* ------------------------------------------------------------ UD addressing */

Test(wr_ud, without_set_ud_addr_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UD);

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	expect_complete_fails(qpx, EINVAL, "UD SEND without ibv_wr_set_ud_addr");
}

Test(wr_ud, one_wr_without_addr_fails_session)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UD);
	struct ibv_ah *ah = ah_new(pd);

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, ah, 0x33, UD_QKEY);
	ibv_wr_send(qpx);
	expect_complete_fails(qpx, EINVAL, "the second UD SEND has no address");
}

Test(wr_ud, addr_carried)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UD);
	struct ibv_ah *ah = ah_new(pd);
	struct harness_send s;

	ibv_wr_start(qpx);
	qpx->wr_id = 0x0d;
	ibv_wr_send_imm(qpx, htonl(0xabcd));
	ibv_wr_set_ud_addr(qpx, ah, 0x00ab12, 0x22223333);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 100);
	expect_complete_ok(qpx, 1, "UD SEND_WITH_IMM");
	take(qpx, &s, "UD SEND_WITH_IMM");
	cr_expect_eq(s.hdr.u.ud.remote_qpn, 0x00ab12, "remote_qpn 0x%x", s.hdr.u.ud.remote_qpn);
	cr_expect_eq(s.hdr.u.ud.remote_qkey, 0x22223333, "remote_qkey 0x%x",
		     s.hdr.u.ud.remote_qkey);
	cr_expect_eq(s.hdr.imm, htonl(0xabcd), "imm");
	cr_expect_eq(s.hdr.length, 100, "length");
}

Test(wr_ud, addr_after_data_setter)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UD);
	struct ibv_ah *ah = ah_new(pd);
	struct harness_send s;

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, "ud", 2);
	ibv_wr_set_ud_addr(qpx, ah, 0x44, UD_QKEY);
	expect_complete_ok(qpx, 1, "setters in either order");
	take(qpx, &s, "UD SEND");
	cr_expect_eq(s.hdr.u.ud.remote_qpn, 0x44, "remote_qpn");
	cr_expect_arr_eq(s.data, "ud", 2, "inline bytes");
}

Test(wr_ud, ah_null_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UD);

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, NULL, 0x44, UD_QKEY);
	expect_complete_fails(qpx, EINVAL, "UD address without an AH");
}

Test(wr_ud, ah_of_another_pd_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UD);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);

	cr_assert_not_null(pd2, "second PD");
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, ah_new(pd2), 0x44, UD_QKEY);
	expect_complete_fails(qpx, EINVAL, "AH of another PD");
}

Test(wr_ud, set_ud_addr_on_rc_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_RC);

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, ah_new(pd), 0x44, UD_QKEY);
	expect_complete_fails(qpx, EINVAL, "ibv_wr_set_ud_addr on an RC QP");
}

Test(wr_ud, message_above_path_mtu_fails)
{
	struct ibv_qp_ex *qpx = qpx_rts(IBV_QPT_UD);
	struct ibv_port_attr pa;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0, "query_port");
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, ah_new(pd), 0x44, UD_QKEY);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, (128u << pa.active_mtu) + 1);
	expect_complete_fails(qpx, EINVAL, "UD SEND of path MTU + 1 bytes");
}
