/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SQD state through the verbs API on the embedded engine: a modify to SQD lets the
 * messages already begun finish (and be acknowledged), starts nothing new, reports
 * sq_draining until then, and raises IBV_EVENT_SQ_DRAINED when asked; SQD -> RTS sends the
 * rest. Two QPs of one port (loop_pair.h).
 */
#include <poll.h>
#include <unistd.h>

#include "loop_pair.h"

static void setup(void)
{
	setup_rc(1);
}

TestSuite(embedded_sqd, .init = setup, .timeout = 60);

static void to_sqd(bool notify)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_SQD, .en_sqd_async_notify = notify};

	cr_assert_eq(ibv_modify_qp(e0.qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
}

static bool draining(void)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	cr_assert_eq(ibv_query_qp(e0.qp, &a, IBV_QP_STATE, &ia), 0);
	cr_assert_eq(a.qp_state, IBV_QPS_SQD);
	return a.sq_draining != 0;
}

/* Wait up to @p ms for the next async event of the context. */
static bool next_event(struct ibv_async_event *ev, int ms)
{
	struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};

	if (poll(&p, 1, ms) != 1)
		return false;
	cr_assert_eq(ibv_get_async_event(ctx, ev), 0);
	return true;
}

Test(embedded_sqd, begun_message_finishes_the_next_waits)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS};
	struct ibv_async_event ev;
	struct ibv_wc wc;

	fill(e0.buf, BUF_LEN / 2, 9);
	e0.buf[0] = 0x5a;
	post_send(&e0, IBV_WR_RDMA_WRITE, BUF_LEN / 2, &e1);
	/* SQD once the WRITE has begun: its first packet landed (512 packets in all) */
	while (__atomic_load_n(&e1.buf[0], __ATOMIC_ACQUIRE) != 0x5a)
		;
	to_sqd(true);
	post_send(&e0, IBV_WR_RDMA_WRITE, 1000, &e1); /* posted in SQD: held */
	cr_assert(next_event(&ev, 10000), "SQ_DRAINED raised");
	cr_expect_eq(ev.event_type, IBV_EVENT_SQ_DRAINED, "%s", ibv_event_type_str(ev.event_type));
	cr_expect_eq(ev.element.qp, e0.qp);
	ibv_ack_async_event(&ev);
	cr_expect(!draining(), "sq_draining ends with the event");
	wc = wait_wc(e0.cq);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, BUF_LEN / 2, "the message begun before SQD completed");
	cr_expect(memcmp(e0.buf, e1.buf, BUF_LEN / 2) == 0, "its bytes");
	cr_expect_eq(ibv_poll_cq(e0.cq, 1, &wc), 0, "the WR posted in SQD did not start");
	cr_assert_eq(ibv_modify_qp(e0.qp, &a, IBV_QP_STATE), 0);
	wc = wait_wc(e0.cq);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "SQD -> RTS sends it: %s",
		     ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, 1000);
}

Test(embedded_sqd, idle_queue_drains_at_once_without_event_unless_asked)
{
	struct ibv_async_event ev;

	to_sqd(false);
	for (int i = 0; i < 1000 && draining(); i++)
		usleep(1000);
	cr_expect(!draining(), "an empty send queue is drained");
	cr_expect(!next_event(&ev, 200) || ev.event_type != IBV_EVENT_SQ_DRAINED,
		  "no SQ_DRAINED without en_sqd_async_notify");
}
