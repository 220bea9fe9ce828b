/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A CQ that the application lets fill up: the completion it has no room for is lost,
 * the CQ raises IBV_EVENT_CQ_ERR (once), the QP whose completion was lost goes to ERR,
 * and the CQEs already in the ring can still be polled. Two QPs of one port (loop_pair.h).
 */
#include <poll.h>
#include <unistd.h>

#include "loop_pair.h"

static void setup(void)
{
	setup_rc(1);
}

TestSuite(embedded_cq_overrun, .init = setup, .timeout = 60);

/* Signaled WRITEs posted as fast as the send queue takes them, the CQ never polled. */
static unsigned int flood(unsigned int n)
{
	unsigned int posted = 0;

	for (int tries = 0; posted < n && tries < 100000; tries++) {
		struct ibv_sge sge = {.addr = (uintptr_t)e0.buf, .length = 8, .lkey = e0.mr->lkey};
		struct ibv_send_wr wr = {.wr_id = posted,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED,
					 .wr.rdma = {.remote_addr = (uintptr_t)e1.buf,
						     .rkey = e1.mr->rkey}},
				   *bad;

		if (ibv_post_send(e0.qp, &wr, &bad) == 0)
			posted++;
		else
			usleep(100); /* the send queue is full until the engine completes some */
	}
	return posted;
}

Test(embedded_cq_overrun, cq_error_event_and_the_qp_in_error)
{
	struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};
	struct ibv_async_event ev;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct ibv_wc wc;
	int polled = 0;

	cr_assert_geq(flood((unsigned int)e0.cq->cqe + 64), (unsigned int)e0.cq->cqe + 1,
		      "more WRs than the CQ holds were posted");
	cr_assert_eq(poll(&p, 1, 10000), 1, "an async event");
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	cr_expect_eq(ev.event_type, IBV_EVENT_CQ_ERR, "%s", ibv_event_type_str(ev.event_type));
	cr_expect_eq(ev.element.cq, e0.cq);
	ibv_ack_async_event(&ev);
	for (int i = 0; i < 1000; i++) {
		cr_assert_eq(ibv_query_qp(e0.qp, &a, IBV_QP_STATE, &ia), 0);
		if (a.qp_state == IBV_QPS_ERR)
			break;
		usleep(1000);
	}
	cr_expect_eq(a.qp_state, IBV_QPS_ERR, "the QP whose completion was lost is in ERR");
	while (ibv_poll_cq(e0.cq, 1, &wc) == 1)
		polled++;
	cr_expect_geq(polled, e0.cq->cqe, "the CQEs in the ring are still there");
}
