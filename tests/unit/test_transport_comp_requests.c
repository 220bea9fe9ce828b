/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The completer signals, it does not call: a go-back is a request the requester follows at
 * its next pass, and a timer that fires only marks an event the completer acts on at its
 * next step (no environment in the callback). Two transport QPs without a port (rc_pair.h).
 */
#include "rc_pair.h"
#include "rc_priv.h"

TestSuite(transport_comp_requests, .init = setup_rc, .fini = teardown, .timeout = 60);

Test(transport_comp_requests, go_back_is_a_request_the_requester_follows)
{
	target = 2;
	fault = drop_a_nth;
	send_and_check(5 * PMTU, 1);
	cr_expect_eq(a.tqp.rc->comp.go_back, 1, "one go-back asked for (the sequence NAK)");
	cr_expect_eq(a.tqp.rc->req.go_back_seen, a.tqp.rc->comp.go_back, "and followed");
	cr_expect_eq(a.tqp.stats.completer_retry_err, 1);
	cr_expect_eq(a.frames, 5 + 3, "packets 2..4 sent again");
}

/* A's SEND whose ACK is lost: its retransmission timer is the one armed. */
static uint64_t send_with_ack_lost(void)
{
	uint64_t next;

	post_recv(&b, 10, 0, 64);
	target = 0;
	fault = drop_b_nth;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	next = droce_timer_wheel_next(&wheel);
	cr_assert_neq(next, UINT64_MAX, "the retransmission timer runs");
	return next;
}

Test(transport_comp_requests, a_timeout_is_an_event_until_the_send_pass)
{
	unsigned int frames;

	now_ns += send_with_ack_lost();
	frames = a.frames;
	cr_assert_eq(droce_transport_timers_run(&wheel, now_ns, 1024), 1);
	cr_expect_eq(a.tqp.rc->comp.events, RC_COMP_EV_TIMEOUT, "marked, not acted on");
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 0);
	cr_expect_eq(a.frames, frames, "nothing resent by the callback");
	cr_expect_eq(droce_tqp_send(&a.env, &a.tqp, 0, 32), 1, "the pass resends");
	cr_expect_eq(a.tqp.rc->comp.events, 0);
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 1);
	settle();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
}

Test(transport_comp_requests, retries_exhausted_at_the_send_pass)
{
	struct ibv_qp_attr attr = {.retry_cnt = 0};

	droce_tqp_modify(&a.env, &a.tqp, &attr, IBV_QP_RETRY_CNT, IBV_QPS_RTS);
	now_ns += send_with_ack_lost();
	cr_assert_eq(droce_transport_timers_run(&wheel, now_ns, 1024), 1);
	cr_expect_eq(a.tqp.state, IBV_QPS_RTS, "the callback decides nothing");
	droce_tqp_send(&a.env, &a.tqp, 0, 32);
	cr_expect_eq(a.tqp.state, IBV_QPS_ERR, "RETRY_EXC_ERR moves the QP to Error");
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_RETRY_EXC_ERR);
	cr_expect_eq(a.tqp.stats.req_transport_retries_exceeded, 1);
}

Test(transport_comp_requests, a_response_after_a_timeout_is_judged_after_it)
{
	/* the timer fired before B's resent ACK arrives: the go-back is asked for first, and
	 * the ACK that follows still completes the SEND */
	now_ns += send_with_ack_lost();
	cr_assert_eq(droce_transport_timers_run(&wheel, now_ns, 1024), 1);
	fault = NULL;
	settle();
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 1);
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
}
