/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events: raised by the engine (droce_verbs_qp_error with an
 * event, droce_verbs_async_event for CQ, SRQ and port events), counted on
 * context->async_fd so poll() wakes, returned in order by
 * ibv_get_async_event with their element, and acknowledged by
 * ibv_ack_async_event into the object's counter.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "verbs_harness.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static void setup(void)
{
	ctx = harness_open(&pd);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cr_assert_not_null(cq, "ibv_create_cq: %s", strerror(errno));
}

TestSuite(verbs_async, .init = setup, .timeout = 20);

static struct ibv_qp *make_qp(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = type,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	cr_assert_not_null(qp, "ibv_create_qp: %s", strerror(errno));
	return qp;
}

static struct ibv_srq *make_srq(void)
{
	struct ibv_srq_init_attr a = {.attr = {.max_wr = 8, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &a);

	cr_assert_not_null(srq, "ibv_create_srq: %s", strerror(errno));
	return srq;
}

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n = poll(&p, 1, timeout_ms);

	cr_assert_geq(n, 0, "poll: %s", strerror(errno));
	return n == 1 && (p.revents & POLLIN);
}

static void set_nonblocking(void)
{
	int fl = fcntl(ctx->async_fd, F_GETFL);

	cr_assert_geq(fl, 0, "F_GETFL");
	cr_assert_eq(fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK), 0, "F_SETFL O_NONBLOCK");
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static int raise_event(enum ibv_event_type type, void *element)
{
	struct ibv_async_event ev = {.event_type = type};

	switch (type) {
	case IBV_EVENT_CQ_ERR:
		ev.element.cq = element;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		ev.element.srq = element;
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
		ev.element.port_num = (int)(uintptr_t)element;
		break;
	case IBV_EVENT_DEVICE_FATAL:
		break;
	default:
		ev.element.qp = element;
		break;
	}
	return droce_verbs_async_event(ctx, &ev);
}

/* ------------------------------------------------------------ the fd */

Test(verbs_async, fd_is_real)
{
	int fl;

	cr_expect_geq(ctx->async_fd, 0, "async_fd %d", ctx->async_fd);
	fl = fcntl(ctx->async_fd, F_GETFD);
	cr_expect_geq(fl, 0, "async_fd is open");
	cr_expect(fl & FD_CLOEXEC, "async_fd is close-on-exec");
	cr_expect_not(fcntl(ctx->async_fd, F_GETFL) & O_NONBLOCK,
		      "async_fd blocks by default, as libibverbs' does");
	cr_expect_not(readable(ctx->async_fd, 0), "no event yet");
}

/* ------------------------------------------------------------ QP events */

Test(verbs_async, qp_error_with_event)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC);
	struct ibv_async_event ev;

	cr_assert_eq(harness_qp_to_rts(qp), 0, "RTS");
	cr_expect_not(readable(ctx->async_fd, 0), "no event before the error");
	cr_assert_eq(droce_verbs_qp_error(qp, IBV_QPS_ERR, IBV_EVENT_QP_FATAL), 0,
		     "engine: QP fatal");
	cr_expect(readable(ctx->async_fd, 0), "poll() on async_fd says readable");
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0, "ibv_get_async_event");
	cr_expect_eq(ev.event_type, IBV_EVENT_QP_FATAL, "IBV_EVENT_QP_FATAL");
	cr_expect_eq(ev.element.qp, qp, "element.qp is the QP");
	cr_expect_not(readable(ctx->async_fd, 0), "the event was taken");
	cr_expect_eq(qp->events_completed, 0, "not acknowledged yet");
	ibv_ack_async_event(&ev);
	cr_expect_eq(qp->events_completed, 1, "ibv_ack_async_event counts on the QP");
	cr_expect_eq(droce_verbs_qp_state(qp), IBV_QPS_ERR, "and the QP is in ERR");
}

Test(verbs_async, qp_error_without_event)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UC);

	cr_assert_eq(harness_qp_to_rts(qp), 0, "RTS");
	cr_assert_eq(droce_verbs_qp_error(qp, IBV_QPS_SQE, 0), 0, "engine: SQE, no event");
	cr_expect_not(readable(ctx->async_fd, 0), "no event queued");
	cr_expect_eq(droce_verbs_qp_state(qp), IBV_QPS_SQE, "the QP is in SQE");
}

Test(verbs_async, qp_error_bad_state_no_event)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC);

	cr_assert_eq(harness_qp_to_rts(qp), 0, "RTS");
	cr_expect_eq(droce_verbs_qp_error(qp, IBV_QPS_RTR, IBV_EVENT_QP_FATAL), -EINVAL,
		     "only SQE or ERR");
	cr_expect_not(readable(ctx->async_fd, 0), "no event for a refused error");
	cr_expect_eq(droce_verbs_qp_state(qp), IBV_QPS_RTS, "state unchanged");
}

Test(verbs_async, qp_events_each_counted)
{
	static const enum ibv_event_type types[] = {
		IBV_EVENT_QP_FATAL,     IBV_EVENT_QP_REQ_ERR,          IBV_EVENT_QP_ACCESS_ERR,
		IBV_EVENT_COMM_EST,     IBV_EVENT_SQ_DRAINED,          IBV_EVENT_PATH_MIG,
		IBV_EVENT_PATH_MIG_ERR, IBV_EVENT_QP_LAST_WQE_REACHED,
	};
	struct ibv_qp *qp = make_qp(IBV_QPT_RC);

	for (unsigned int i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct ibv_async_event ev;

		cr_assert_eq(raise_event(types[i], qp), 0, "raise %s",
			     ibv_event_type_str(types[i]));
		cr_assert_eq(ibv_get_async_event(ctx, &ev), 0, "get %s",
			     ibv_event_type_str(types[i]));
		cr_expect_eq(ev.event_type, types[i], "type %s", ibv_event_type_str(types[i]));
		cr_expect_eq(ev.element.qp, qp, "%s: element.qp", ibv_event_type_str(types[i]));
		ibv_ack_async_event(&ev);
		cr_expect_eq(qp->events_completed, i + 1, "%s: counted on the QP",
			     ibv_event_type_str(types[i]));
	}
}

/* ------------------------------------------------------------ CQ, SRQ, port */

Test(verbs_async, cq_event)
{
	struct ibv_async_event ev;

	cr_assert_eq(raise_event(IBV_EVENT_CQ_ERR, cq), 0, "engine: CQ error");
	cr_expect(readable(ctx->async_fd, 0), "async_fd readable");
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0, "ibv_get_async_event");
	cr_expect_eq(ev.event_type, IBV_EVENT_CQ_ERR, "IBV_EVENT_CQ_ERR");
	cr_expect_eq(ev.element.cq, cq, "element.cq");
	ibv_ack_async_event(&ev);
	cr_expect_eq(cq->async_events_completed, 1, "counted on the CQ's async counter");
	cr_expect_eq(cq->comp_events_completed, 0, "not on its completion counter");
}

Test(verbs_async, srq_events)
{
	struct ibv_srq *srq = make_srq();
	struct ibv_async_event ev;

	cr_assert_eq(raise_event(IBV_EVENT_SRQ_ERR, srq), 0, "engine: SRQ error");
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0, "ibv_get_async_event");
	cr_expect_eq(ev.event_type, IBV_EVENT_SRQ_ERR, "IBV_EVENT_SRQ_ERR");
	cr_expect_eq(ev.element.srq, srq, "element.srq");
	ibv_ack_async_event(&ev);
	cr_expect_eq(srq->events_completed, 1, "counted on the SRQ");
	cr_assert_eq(raise_event(IBV_EVENT_SRQ_LIMIT_REACHED, srq), 0, "engine: SRQ limit");
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0, "ibv_get_async_event");
	cr_expect_eq(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED, "IBV_EVENT_SRQ_LIMIT_REACHED");
	ibv_ack_async_event(&ev);
	cr_expect_eq(srq->events_completed, 2, "counted on the SRQ");
}

Test(verbs_async, port_events)
{
	struct ibv_async_event ev;

	cr_assert_eq(raise_event(IBV_EVENT_PORT_ACTIVE, (void *)(uintptr_t)1), 0, "port active");
	cr_assert_eq(raise_event(IBV_EVENT_GID_CHANGE, (void *)(uintptr_t)1), 0, "GID change");
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0, "first");
	cr_expect_eq(ev.event_type, IBV_EVENT_PORT_ACTIVE, "IBV_EVENT_PORT_ACTIVE");
	cr_expect_eq(ev.element.port_num, 1, "element.port_num");
	ibv_ack_async_event(&ev);
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0, "second");
	cr_expect_eq(ev.event_type, IBV_EVENT_GID_CHANGE, "IBV_EVENT_GID_CHANGE");
	cr_expect_eq(ev.element.port_num, 1, "element.port_num");
	ibv_ack_async_event(&ev);
	cr_expect_not(readable(ctx->async_fd, 0), "all taken");
}

/* ------------------------------------------------------------ order, fd */

Test(verbs_async, in_order_with_elements)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC);
	struct ibv_srq *srq = make_srq();
	struct {
		enum ibv_event_type type;
		void *element;
	} want[] = {
		{IBV_EVENT_QP_FATAL, qp},           {IBV_EVENT_CQ_ERR, cq},
		{IBV_EVENT_SRQ_LIMIT_REACHED, srq}, {IBV_EVENT_PORT_ERR, (void *)(uintptr_t)1},
		{IBV_EVENT_COMM_EST, qp},
	};
	const unsigned int n = sizeof(want) / sizeof(want[0]);

	for (unsigned int i = 0; i < n; i++)
		cr_assert_eq(raise_event(want[i].type, want[i].element), 0, "raise %u", i);
	for (unsigned int i = 0; i < n; i++) {
		struct ibv_async_event ev;

		cr_expect(readable(ctx->async_fd, 0), "async_fd readable while %u events remain",
			  n - i);
		cr_assert_eq(ibv_get_async_event(ctx, &ev), 0, "get %u", i);
		cr_expect_eq(ev.event_type, want[i].type, "event %u: %s, got %s", i,
			     ibv_event_type_str(want[i].type), ibv_event_type_str(ev.event_type));
		if (want[i].type == IBV_EVENT_PORT_ERR)
			cr_expect_eq(ev.element.port_num, 1, "event %u: port", i);
		else
			cr_expect_eq(ev.element.qp, want[i].element, "event %u: element", i);
		ibv_ack_async_event(&ev);
	}
	cr_expect_not(readable(ctx->async_fd, 0), "all taken");
	cr_expect_eq(qp->events_completed, 2, "two QP events acknowledged");
	cr_expect_eq(cq->async_events_completed, 1, "one CQ event acknowledged");
	cr_expect_eq(srq->events_completed, 1, "one SRQ event acknowledged");
}

Test(verbs_async, many_in_order)
{
	struct ibv_qp *qps[8];
	enum { N = 200 };

	for (int i = 0; i < 8; i++)
		qps[i] = make_qp(IBV_QPT_UD);
	for (int i = 0; i < N; i++)
		cr_assert_eq(raise_event(IBV_EVENT_COMM_EST, qps[i % 8]), 0, "raise %d", i);
	for (int i = 0; i < N; i++) {
		struct ibv_async_event ev;

		cr_assert_eq(ibv_get_async_event(ctx, &ev), 0, "get %d", i);
		cr_assert_eq(ev.element.qp, qps[i % 8], "event %d in order", i);
		ibv_ack_async_event(&ev);
	}
	for (int i = 0; i < 8; i++)
		cr_expect_eq(qps[i]->events_completed, N / 8, "QP %d: all acknowledged", i);
	cr_expect_not(readable(ctx->async_fd, 0), "all taken");
}

struct raiser {
	struct ibv_qp *qp;
	long delay_ms;
	int rc;
};

static void *raise_later(void *arg)
{
	struct raiser *r = arg;

	sleep_ms(r->delay_ms);
	r->rc = droce_verbs_qp_error(r->qp, IBV_QPS_ERR, IBV_EVENT_QP_FATAL);
	return NULL;
}

Test(verbs_async, poll_wakes)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC);
	struct raiser r = {.qp = qp, .delay_ms = 100, .rc = -1};
	pthread_t t;

	cr_assert_eq(harness_qp_to_rts(qp), 0, "RTS");
	cr_assert_eq(pthread_create(&t, NULL, raise_later, &r), 0, "engine thread");
	cr_expect(readable(ctx->async_fd, 10000), "poll() on async_fd wakes on the event");
	pthread_join(t, NULL);
	cr_expect_eq(r.rc, 0, "the engine raised the event");
}

Test(verbs_async, get_blocks_until_event)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC);
	struct raiser r = {.qp = qp, .delay_ms = 100, .rc = -1};
	struct ibv_async_event ev;
	pthread_t t;

	cr_assert_eq(harness_qp_to_rts(qp), 0, "RTS");
	cr_assert_eq(pthread_create(&t, NULL, raise_later, &r), 0, "engine thread");
	cr_expect_eq(ibv_get_async_event(ctx, &ev), 0,
		     "ibv_get_async_event waits for the event (blocking fd)");
	cr_expect_eq(ev.event_type, IBV_EVENT_QP_FATAL, "the event raised");
	cr_expect_eq(ev.element.qp, qp, "of the QP");
	pthread_join(t, NULL);
	ibv_ack_async_event(&ev);
}

Test(verbs_async, nonblocking_fd)
{
	struct ibv_async_event ev;

	set_nonblocking();
	errno = 0;
	cr_expect_eq(ibv_get_async_event(ctx, &ev), -1, "no event: -1");
	cr_expect_eq(errno, EAGAIN, "errno EAGAIN, got %d", errno);
	cr_assert_eq(raise_event(IBV_EVENT_CQ_ERR, cq), 0, "raise");
	cr_assert_eq(raise_event(IBV_EVENT_CQ_ERR, cq), 0, "raise again");
	cr_expect_eq(ibv_get_async_event(ctx, &ev), 0, "first event");
	ibv_ack_async_event(&ev);
	cr_expect_eq(ibv_get_async_event(ctx, &ev), 0, "second event");
	ibv_ack_async_event(&ev);
	errno = 0;
	cr_expect_eq(ibv_get_async_event(ctx, &ev), -1, "then -1 again");
	cr_expect_eq(errno, EAGAIN, "errno EAGAIN, got %d", errno);
	cr_expect_eq(cq->async_events_completed, 2, "both acknowledged");
}

/* ------------------------------------------------------------ destroy */

Test(verbs_async, destroy_qp_drops_events_not_taken)
{
	struct ibv_qp *a = make_qp(IBV_QPT_RC), *b = make_qp(IBV_QPT_RC);
	struct ibv_async_event ev;

	cr_assert_eq(raise_event(IBV_EVENT_QP_FATAL, a), 0, "event of A");
	cr_assert_eq(raise_event(IBV_EVENT_QP_FATAL, b), 0, "event of B");
	cr_assert_eq(ibv_destroy_qp(a), 0, "destroy A with its event not taken");
	set_nonblocking();
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0, "B's event");
	cr_expect_eq(ev.element.qp, b, "no event naming the destroyed QP is returned");
	ibv_ack_async_event(&ev);
	cr_expect_eq(ibv_get_async_event(ctx, &ev), -1, "nothing more");
	cr_expect_not(readable(ctx->async_fd, 0), "the fd has no stale count");
}

Test(verbs_async, destroy_srq_and_cq_drop_events_not_taken)
{
	struct ibv_srq *srq = make_srq();
	struct ibv_cq *c2 = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_async_event ev;

	cr_assert_not_null(c2, "CQ");
	cr_assert_eq(raise_event(IBV_EVENT_SRQ_LIMIT_REACHED, srq), 0, "SRQ event");
	cr_assert_eq(raise_event(IBV_EVENT_CQ_ERR, c2), 0, "CQ event");
	cr_assert_eq(raise_event(IBV_EVENT_PORT_ACTIVE, (void *)(uintptr_t)1), 0, "port event");
	cr_assert_eq(ibv_destroy_srq(srq), 0, "destroy the SRQ");
	cr_assert_eq(ibv_destroy_cq(c2), 0, "destroy the CQ");
	set_nonblocking();
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0, "the port event remains");
	cr_expect_eq(ev.event_type, IBV_EVENT_PORT_ACTIVE, "only the port event");
	cr_expect_eq(ibv_get_async_event(ctx, &ev), -1, "nothing more");
}

struct qp_destroyer {
	struct ibv_qp *qp;
	int rc;
	int done; /* atomic */
};

static void *destroy_qp_thread(void *arg)
{
	struct qp_destroyer *d = arg;

	d->rc = ibv_destroy_qp(d->qp);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

Test(verbs_async, destroy_qp_waits_for_ack)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC);
	struct qp_destroyer d = {.qp = qp, .rc = -1};
	struct ibv_async_event ev;
	pthread_t t;

	cr_assert_eq(raise_event(IBV_EVENT_QP_FATAL, qp), 0, "event");
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0, "reported, not acknowledged");
	cr_assert_eq(pthread_create(&t, NULL, destroy_qp_thread, &d), 0, "destroy in a thread");
	sleep_ms(200);
	cr_expect_eq(__atomic_load_n(&d.done, __ATOMIC_ACQUIRE), 0,
		     "ibv_destroy_qp waits while a reported event is not acknowledged");
	ibv_ack_async_event(&ev);
	pthread_join(t, NULL);
	cr_expect_eq(d.rc, 0, "destroy succeeded after the ack");
}
