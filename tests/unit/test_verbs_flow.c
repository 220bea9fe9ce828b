/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A work request's whole way through the verbs layer: posted by
 * ibv_post_send(), taken from the ring by the engine (here the harness), its
 * completion written back and returned by ibv_poll_cq() with its wr_id.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "verbs_harness.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static char buf[4096];

static void setup(void)
{
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 16,
			.max_recv_wr = 16,
			.max_send_sge = 4,
			.max_recv_sge = 4,
			.max_inline_data = 64},
		.qp_type = IBV_QPT_RC,
	};

	ctx = harness_open(&pd);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cr_assert_not_null(cq);
	ia.send_cq = cq;
	ia.recv_cq = cq;
	qp = ibv_create_qp(pd, &ia);
	cr_assert_not_null(qp, "create_qp: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr);
}

TestSuite(verbs_flow, .init = setup);

Test(verbs_flow, send_reaches_ring_and_completes)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 100, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 0xabc,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad = NULL;
	struct harness_send s;
	struct ibv_wc wc;

	cr_assert_eq(harness_qp_to_rts(qp), 0);
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0);
	cr_assert(harness_take_send(qp, &s));
	cr_expect_eq(s.hdr.wr_id, 0xabc);
	cr_expect_eq(s.hdr.op, DROCE_WQE_SEND);
	cr_expect_eq(s.hdr.length, 100);
	cr_expect_eq(s.hdr.num_sge, 1);
	cr_expect_eq(((struct droce_sge *)s.data)->lkey, mr->lkey);
	struct droce_cqe e = {.wr_id = s.hdr.wr_id,
			      .status = IBV_WC_SUCCESS,
			      .opcode = IBV_WC_SEND,
			      .qp_num = qp->qp_num};
	cr_assert(harness_complete(cq, &e));
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1);
	cr_expect_eq(wc.wr_id, 0xabc);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.qp_num, qp->qp_num);
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0);
}

Test(verbs_flow, reset_qp_refuses_send)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND};
	struct ibv_send_wr *bad = NULL;

	cr_expect_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	cr_expect_eq(bad, &wr);
	cr_expect_eq(harness_send_pending(qp), 0);
}
