/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requester's waits, each a named outcome of its pass (rc_priv.h, enum rc_req_wait):
 * nothing to send, the budget, FENCE, max_rd_atomic, the send window, RNR, SQD, a failed
 * WQE. One send pass of A alone, then the traffic finishes. Two transport QPs without a
 * port (rc_pair.h).
 */
#include "rc_pair.h"
#include "rc_priv.h"

TestSuite(transport_req_waits, .init = setup_rc, .fini = teardown, .timeout = 60);

static int a_pass(int budget)
{
	return droce_tqp_send(&a.env, &a.tqp, 0, budget);
}

static void expect_wait(enum rc_req_wait w)
{
	enum rc_req_wait got = a.tqp.rc->req.wait;

	cr_expect_eq(got, w, "waits for %s, not %s", droce_rc_req_wait_names[w],
		     droce_rc_req_wait_names[got]);
}

Test(transport_req_waits, nothing_to_send)
{
	cr_expect_eq(a_pass(32), 0);
	expect_wait(RC_REQ_WAIT_NONE);
}

Test(transport_req_waits, budget)
{
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_WRITE, .len = 3 * PMTU}),
		     0);
	cr_expect_eq(a_pass(2), 2, "two packets of three");
	expect_wait(RC_REQ_WAIT_BUDGET);
	cr_expect_eq(a_pass(2), 1, "the third");
	expect_wait(RC_REQ_WAIT_NONE);
	settle();
}

Test(transport_req_waits, fence_waits_for_the_read)
{
	post_recv(&b, 10, 0, 64);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_READ, .len = 8}), 0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .len = 8,
					       .flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE}),
		     0);
	cr_expect_eq(a_pass(32), 1, "the READ only");
	expect_wait(RC_REQ_WAIT_FENCE);
	settle();
	cr_expect_eq(wc_of(&a, 2).status, IBV_WC_SUCCESS, "the fenced SEND once the READ is done");
}

Test(transport_req_waits, max_rd_atomic)
{
	struct ibv_qp_attr attr = {.max_rd_atomic = 1};

	droce_tqp_modify(&a.env, &a.tqp, &attr, IBV_QP_MAX_QP_RD_ATOMIC, IBV_QPS_RTS);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_READ, .len = 8}), 0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){
				     .op = IBV_WR_RDMA_READ, .len = 8, .flags = IBV_SEND_SIGNALED}),
		     0);
	cr_expect_eq(a_pass(32), 1, "one READ outstanding at most");
	expect_wait(RC_REQ_WAIT_RD_ATOMIC);
	settle();
	cr_expect_eq(wc_of(&a, 2).status, IBV_WC_SUCCESS);
}

Test(transport_req_waits, send_window)
{
	int sent = 0, n;

	a.env.send_window = DROCE_RC_WINDOW_MIN;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = 200 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	while ((n = a_pass(32)) > 0)
		sent += n;
	cr_expect_eq(sent, DROCE_RC_WINDOW_MIN, "a window of PSNs, no more");
	expect_wait(RC_REQ_WAIT_WINDOW);
	cr_expect_gt(a.tqp.stats.window_waits, 0);
	settle();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
}

Test(transport_req_waits, rnr)
{
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect(a.tqp.rc->comp.rnr_wait, "the completer took the RNR NAK");
	cr_expect_eq(a_pass(32), 0, "nothing sent while the RNR timer runs");
	expect_wait(RC_REQ_WAIT_RNR);
	post_recv(&b, 10, 0, 64);
	settle();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
}

Test(transport_req_waits, sqd_starts_nothing_new)
{
	struct ibv_qp_attr attr = {0};

	post_recv(&b, 10, 0, 64);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	droce_tqp_modify(&a.env, &a.tqp, &attr, 0, IBV_QPS_SQD);
	cr_expect_eq(a_pass(32), 0);
	expect_wait(RC_REQ_WAIT_SQD);
	cr_expect_eq(a.frames, 0);
	droce_tqp_modify(&a.env, &a.tqp, &attr, 0, IBV_QPS_RTS);
	settle();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS, "sent once back in RTS");
}

Test(transport_req_waits, failed_wqe)
{
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = 0xdead00};
	struct ibv_send_wr *bad;

	cr_assert_eq(ibv_post_send(a.qp, &wr, &bad), 0);
	cr_assert_eq(post_wr(&a, 2, &(struct wr_args){.op = IBV_WR_SEND, .len = 10}), 0);
	cr_expect_eq(a_pass(32), 0, "nothing behind the failed LOCAL_INV goes out");
	expect_wait(RC_REQ_WAIT_FAILED);
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_LOC_PROT_ERR);
	cr_expect_eq(a.tqp.state, IBV_QPS_ERR);
}
