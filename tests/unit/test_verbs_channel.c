/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion channels: arming with ibv_req_notify_cq, the engine's
 * droce_verbs_cq_notify() after it writes CQEs, waking poll()/epoll() on the
 * channel's fd, ibv_get_cq_event / ibv_ack_cq_events, and destroy rules.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "verbs_harness.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_comp_channel *ch;

static void setup(void)
{
	ctx = harness_open(&pd);
	ch = ibv_create_comp_channel(ctx);
	cr_assert_not_null(ch, "ibv_create_comp_channel: %s", strerror(errno));
}

TestSuite(verbs_channel, .init = setup, .timeout = 20);

static struct ibv_cq *make_cq(void *cq_context)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, cq_context, ch, 0);

	cr_assert_not_null(cq, "ibv_create_cq on the channel: %s", strerror(errno));
	return cq;
}

/* What the engine does after completing a WQE: write the CQE, then notify. */
static int engine_complete(struct ibv_cq *cq, uint64_t wr_id, bool solicited)
{
	struct droce_cqe e = {.wr_id = wr_id, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV};

	cr_assert(harness_complete(cq, &e), "CQE written");
	return droce_verbs_cq_notify(cq, solicited);
}

/* poll() the channel fd with a timeout: true when readable. */
static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n = poll(&p, 1, timeout_ms);

	cr_assert_geq(n, 0, "poll: %s", strerror(errno));
	return n == 1 && (p.revents & POLLIN);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ the channel */

Test(verbs_channel, fd_is_real)
{
	int fl;

	cr_expect_geq(ch->fd, 0, "channel fd %d", ch->fd);
	cr_expect_eq(ch->context, ctx, "channel context");
	fl = fcntl(ch->fd, F_GETFD);
	cr_expect_geq(fl, 0, "the fd is open: %s", strerror(errno));
	cr_expect(fl & FD_CLOEXEC, "the fd is close-on-exec");
	cr_expect_not(fcntl(ch->fd, F_GETFL) & O_NONBLOCK, "the fd blocks by default");
	cr_expect_not(readable(ch->fd, 0), "a new channel has no event");
}

Test(verbs_channel, cq_records_channel)
{
	int marker;
	struct ibv_cq *cq = make_cq(&marker);

	cr_expect_eq(cq->channel, ch, "cq->channel");
	cr_expect_eq(cq->cq_context, &marker, "cq->cq_context");
}

/* ------------------------------------------------------------ arming */

Test(verbs_channel, notify_only_when_armed)
{
	struct ibv_cq *cq = make_cq(NULL);

	cr_expect_eq(engine_complete(cq, 1, false), 0, "an unarmed CQ is not signalled");
	cr_expect_not(readable(ch->fd, 0), "no event on the fd");
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "ibv_req_notify_cq arms");
	cr_expect_eq(engine_complete(cq, 2, false), 1, "the armed CQ is signalled");
	cr_expect(readable(ch->fd, 0), "the fd is readable");
}

Test(verbs_channel, notify_once_per_arm)
{
	struct ibv_cq *cq = make_cq(NULL);
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "arm");
	cr_expect_eq(engine_complete(cq, 1, false), 1, "first completion signals");
	cr_expect_eq(engine_complete(cq, 2, false), 0, "second does not: the arm was used");
	cr_expect_eq(engine_complete(cq, 3, true), 0, "nor a solicited one");
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0, "one event");
	ibv_ack_cq_events(cq, 1);
	cr_expect_not(readable(ch->fd, 0), "only one event was queued");
	/* re-arming arms again */
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "re-arm");
	cr_expect_eq(engine_complete(cq, 4, false), 1, "signalled again after re-arm");
}

Test(verbs_channel, arm_twice_signals_once)
{
	struct ibv_cq *cq = make_cq(NULL);
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "arm");
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "arm again before any completion");
	cr_expect_eq(engine_complete(cq, 1, false), 1, "signalled");
	cr_expect_eq(engine_complete(cq, 2, false), 0, "only once");
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0, "the event");
	cr_expect_not(readable(ch->fd, 0), "a single event");
	ibv_ack_cq_events(cq, 1);
}

Test(verbs_channel, solicited_only)
{
	struct ibv_cq *cq = make_cq(NULL);

	cr_assert_eq(ibv_req_notify_cq(cq, 1), 0, "arm for solicited completions");
	cr_expect_eq(engine_complete(cq, 1, false), 0, "an unsolicited completion does not signal");
	cr_expect_not(readable(ch->fd, 0), "no event");
	cr_expect_eq(engine_complete(cq, 2, true), 1, "a solicited completion signals");
	cr_expect(readable(ch->fd, 0), "event on the fd");
	cr_expect_eq(engine_complete(cq, 3, true), 0, "once per arm");
}

Test(verbs_channel, any_arm_overrides_solicited)
{
	struct ibv_cq *cq = make_cq(NULL);

	cr_assert_eq(ibv_req_notify_cq(cq, 1), 0, "arm for solicited");
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "then for any completion");
	cr_expect_eq(engine_complete(cq, 1, false), 1, "any completion now signals");
}

/* ------------------------------------------------------------ waking */

struct notifier {
	struct ibv_cq *cq;
	long delay_ms;
	int rc;
};

static void *notify_later(void *arg)
{
	struct notifier *n = arg;
	struct droce_cqe e = {.wr_id = 42, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV};

	sleep_ms(n->delay_ms);
	if (!harness_complete(n->cq, &e))
		n->rc = -1;
	else
		n->rc = droce_verbs_cq_notify(n->cq, false);
	return NULL;
}

Test(verbs_channel, poll_wakes)
{
	struct ibv_cq *cq = make_cq(NULL);
	struct notifier n = {.cq = cq, .delay_ms = 100};
	pthread_t t;

	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "arm");
	cr_assert_eq(pthread_create(&t, NULL, notify_later, &n), 0, "start the engine thread");
	cr_expect(readable(ch->fd, 10000), "poll() on the channel fd wakes on the event");
	pthread_join(t, NULL);
	cr_expect_eq(n.rc, 1, "the engine signalled");
}

Test(verbs_channel, epoll_wakes)
{
	struct ibv_cq *cq = make_cq(NULL);
	struct notifier n = {.cq = cq, .delay_ms = 100};
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 7}, out;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	pthread_t t;

	cr_assert_geq(ep, 0, "epoll_create1");
	cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, ch->fd, &ev), 0, "epoll_ctl: %s",
		     strerror(errno));
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "arm");
	cr_expect_eq(epoll_wait(ep, &out, 1, 0), 0, "nothing yet");
	cr_assert_eq(pthread_create(&t, NULL, notify_later, &n), 0, "start the engine thread");
	cr_expect_eq(epoll_wait(ep, &out, 1, 10000), 1, "epoll_wait wakes on the event");
	cr_expect_eq(out.data.u64, 7, "for the channel fd");
	cr_expect(out.events & EPOLLIN, "readable");
	pthread_join(t, NULL);
	close(ep);
}

Test(verbs_channel, get_cq_event_blocks_until_signalled)
{
	int marker;
	struct ibv_cq *cq = make_cq(&marker);
	struct notifier n = {.cq = cq, .delay_ms = 100};
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx = NULL;
	pthread_t t;

	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "arm");
	cr_assert_eq(pthread_create(&t, NULL, notify_later, &n), 0, "start the engine thread");
	cr_expect_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0, "ibv_get_cq_event waits");
	cr_expect_eq(ev_cq, cq, "the CQ");
	cr_expect_eq(ev_ctx, &marker, "its cq_context");
	pthread_join(t, NULL);
	ibv_ack_cq_events(cq, 1);
}

/* ------------------------------------------------------------ get and ack */

Test(verbs_channel, get_returns_cq_and_context)
{
	int marker;
	struct ibv_cq *cq = make_cq(&marker);
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx = NULL;
	struct ibv_wc wc;

	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "arm");
	cr_assert_eq(engine_complete(cq, 5, false), 1, "signalled");
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0, "ibv_get_cq_event");
	cr_expect_eq(ev_cq, cq, "the CQ that was signalled");
	cr_expect_eq(ev_ctx, &marker, "its cq_context");
	cr_expect_not(readable(ch->fd, 0), "the event was taken");
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 1, "the CQE is there to poll");
	cr_expect_eq(wc.wr_id, 5, "the CQE");
	ibv_ack_cq_events(cq, 1);
}

Test(verbs_channel, two_cqs_in_order)
{
	int ma, mb;
	struct ibv_cq *a = make_cq(&ma), *b = make_cq(&mb);
	struct ibv_cq *want[] = {a, b, a};
	void *want_ctx[] = {&ma, &mb, &ma};

	cr_assert_eq(ibv_req_notify_cq(a, 0), 0, "arm A");
	cr_assert_eq(ibv_req_notify_cq(b, 0), 0, "arm B");
	cr_assert_eq(engine_complete(a, 1, false), 1, "A signalled");
	cr_assert_eq(engine_complete(b, 2, false), 1, "B signalled");
	cr_assert_eq(ibv_req_notify_cq(a, 0), 0, "re-arm A");
	cr_assert_eq(engine_complete(a, 3, false), 1, "A signalled again");
	for (int i = 0; i < 3; i++) {
		struct ibv_cq *ev_cq = NULL;
		void *ev_ctx = NULL;

		cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0, "event %d", i);
		cr_expect_eq(ev_cq, want[i], "event %d is of the CQ signalled %d-th", i, i);
		cr_expect_eq(ev_ctx, want_ctx[i], "event %d carries its CQ's context", i);
	}
	cr_expect_not(readable(ch->fd, 0), "no more events");
	ibv_ack_cq_events(a, 2);
	ibv_ack_cq_events(b, 1);
}

Test(verbs_channel, ack_counts)
{
	struct ibv_cq *cq = make_cq(NULL);
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	for (int i = 0; i < 3; i++) {
		cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "arm %d", i);
		cr_assert_eq(engine_complete(cq, (uint64_t)i, false), 1, "signal %d", i);
		cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0, "event %d", i);
	}
	cr_expect_eq(cq->comp_events_completed, 0, "nothing acknowledged yet");
	ibv_ack_cq_events(cq, 2);
	cr_expect_eq(cq->comp_events_completed, 2, "two acknowledged");
	ibv_ack_cq_events(cq, 1);
	cr_expect_eq(cq->comp_events_completed, 3, "all three acknowledged");
	cr_expect_eq(ibv_destroy_cq(cq), 0, "destroy does not wait: everything was acknowledged");
}

/* ------------------------------------------------------------ destroy */

struct destroyer {
	struct ibv_cq *cq;
	int rc;
	int done; /* atomic */
};

static void *destroy_cq_thread(void *arg)
{
	struct destroyer *d = arg;

	d->rc = ibv_destroy_cq(d->cq);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

Test(verbs_channel, destroy_cq_waits_for_ack)
{
	struct ibv_cq *cq = make_cq(NULL);
	struct destroyer d = {.cq = cq, .rc = -1};
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	pthread_t t;

	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "arm");
	cr_assert_eq(engine_complete(cq, 1, false), 1, "signalled");
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0, "event reported, not acknowledged");
	harness_forget(cq);
	cr_assert_eq(pthread_create(&t, NULL, destroy_cq_thread, &d), 0, "destroy in a thread");
	sleep_ms(200);
	cr_expect_eq(__atomic_load_n(&d.done, __ATOMIC_ACQUIRE), 0,
		     "ibv_destroy_cq waits while a reported event is not acknowledged");
	ibv_ack_cq_events(ev_cq, 1);
	pthread_join(t, NULL);
	cr_expect_eq(d.done, 1, "destroy returned after the ack");
	cr_expect_eq(d.rc, 0, "and succeeded");
}

Test(verbs_channel, destroy_cq_drops_events_not_taken)
{
	int mb;
	struct ibv_cq *a = make_cq(NULL), *b = make_cq(&mb);
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx = NULL;

	cr_assert_eq(ibv_req_notify_cq(a, 0), 0, "arm A");
	cr_assert_eq(ibv_req_notify_cq(b, 0), 0, "arm B");
	cr_assert_eq(engine_complete(a, 1, false), 1, "A signalled");
	cr_assert_eq(engine_complete(b, 2, false), 1, "B signalled");
	harness_forget(a);
	cr_expect_eq(ibv_destroy_cq(a), 0, "destroying A does not wait: its event was not taken");
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0, "B's event remains");
	cr_expect_eq(ev_cq, b, "it is B's");
	cr_expect_eq(ev_ctx, &mb, "with B's context");
	cr_expect_not(readable(ch->fd, 0), "A's event is gone from the fd too");
	ibv_ack_cq_events(b, 1);
}

Test(verbs_channel, nonblocking_fd_eagain)
{
	struct ibv_cq *cq = make_cq(NULL);
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx = NULL;
	int fl = fcntl(ch->fd, F_GETFL);

	cr_assert_eq(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK), 0, "make the fd non-blocking");
	errno = 0;
	cr_expect_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1, "no event: -1");
	cr_expect_eq(errno, EAGAIN, "errno EAGAIN, got %d", errno);
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0, "arm");
	cr_assert_eq(engine_complete(cq, 1, false), 1, "signalled");
	cr_expect_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0, "then the event is returned");
	cr_expect_eq(ev_cq, cq, "of the CQ");
	errno = 0;
	cr_expect_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1, "and then -1 again");
	cr_expect_eq(errno, EAGAIN, "errno EAGAIN, got %d", errno);
	ibv_ack_cq_events(cq, 1);
}

Test(verbs_channel, destroy_channel_busy_while_used)
{
	struct ibv_cq *a = make_cq(NULL), *b = make_cq(NULL);

	cr_expect_eq(ibv_destroy_comp_channel(ch), EBUSY, "two CQs use the channel: EBUSY");
	cr_assert_eq(ibv_destroy_cq(a), 0, "destroy one CQ");
	cr_expect_eq(ibv_destroy_comp_channel(ch), EBUSY, "one CQ still uses it: EBUSY");
	cr_assert_eq(ibv_destroy_cq(b), 0, "destroy the other CQ");
	cr_expect_eq(ibv_destroy_comp_channel(ch), 0, "then the channel can be destroyed");
}

Test(verbs_channel, destroy_channel_closes_fd)
{
	int fd = ch->fd;

	cr_assert_eq(ibv_destroy_comp_channel(ch), 0, "an unused channel is destroyed");
	errno = 0;
	cr_expect_eq(fcntl(fd, F_GETFD), -1, "its fd is closed");
	cr_expect_eq(errno, EBADF, "EBADF, got %d", errno);
}

Test(verbs_channel, two_channels_independent)
{
	struct ibv_comp_channel *ch2 = ibv_create_comp_channel(ctx);
	struct ibv_cq *a = make_cq(NULL), *b;

	cr_assert_not_null(ch2, "second channel");
	cr_expect_neq(ch2->fd, ch->fd, "each channel has its own fd");
	b = ibv_create_cq(ctx, 8, NULL, ch2, 0);
	cr_assert_not_null(b, "CQ on the second channel");
	cr_assert_eq(ibv_req_notify_cq(a, 0), 0, "arm A");
	cr_assert_eq(ibv_req_notify_cq(b, 0), 0, "arm B");
	cr_assert_eq(engine_complete(b, 1, false), 1, "B signalled");
	cr_expect_not(readable(ch->fd, 0), "the first channel has no event");
	cr_expect(readable(ch2->fd, 0), "the second has B's");
}
