/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared state and helpers of post_send_harness.h. */
#include <arpa/inet.h>

#include "post_send_harness.h"

struct ibv_context *ctx;
struct ibv_pd *pd;
struct ibv_cq *cq;
struct ibv_mr *mr;
struct ibv_qp_cap cap;
uint8_t buf[BUF_LEN] __attribute__((aligned(64)));
static struct ibv_ah *ah;  /* the_ah() */
static struct ibv_mw *mw2; /* the_mw2() */

void setup(void)
{
	ctx = harness_open(&pd);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cr_assert_not_null(cq, "create_cq: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	cr_assert_not_null(mr, "reg_mr: %s", strerror(errno));
	ah = NULL;
	mw2 = NULL;
}

const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : t == IBV_QPT_UD ? "UD" : "?";
}

const char *op_name(enum ibv_wr_opcode op)
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

struct ibv_qp *qp_new(enum ibv_qp_type type, uint32_t send_sge, uint32_t max_inline, int sig_all)
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

struct ibv_qp *qp_rts(enum ibv_qp_type type)
{
	struct ibv_qp *qp = qp_new(type, 4, 64, 0);

	cr_assert_eq(harness_qp_to_rts(qp), 0, "%s QP to RTS", type_name(type));
	return qp;
}

struct ibv_ah *ah_new(struct ibv_pd *p)
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

struct ibv_ah *the_ah(void)
{
	if (ah == NULL)
		ah = ah_new(pd);
	return ah;
}

struct ibv_mw *the_mw2(void)
{
	if (mw2 == NULL) {
		mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		cr_assert_not_null(mw2, "alloc type-2 MW: %s", strerror(errno));
	}
	return mw2;
}

void wr_fill(struct ibv_qp *qp, enum ibv_wr_opcode op, struct ibv_send_wr *wr, struct ibv_sge *sge)
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

void expect_refused(struct ibv_qp *qp, struct ibv_send_wr *wr, int err, const char *what)
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

void expect_posted(struct ibv_qp *qp, struct ibv_send_wr *wr, struct harness_send *s,
		   const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(qp, wr, &bad);

	cr_assert_eq(rc, 0, "%s: ibv_post_send returned %d (%s)", what, rc, strerror(rc));
	cr_assert_eq(harness_send_pending(qp), 1, "%s: %d WQEs on the send ring, want 1", what,
		     harness_send_pending(qp));
	cr_assert(harness_take_send(qp, s), "%s: the engine finds no WQE", what);
}
