/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Async events of an application's context: droced takes them from its own
 * context (QP, CQ, SRQ and port events its engine raised), names their object
 * by the application's handle, publishes them in a ring the application maps
 * and counts each on the application's async eventfd. A full ring holds the
 * rest in droced's context until the application has taken some: none is lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon_priv.h"
#include "droce_verbs_export.h"

/*
 * Events waiting in droced's context while the application's ring is full. An
 * application that lets more pile up does not read its events: it is
 * disconnected rather than let droced's memory grow without bound.
 */
#define DEVENTS_BACKLOG_MAX 65536u

/* How long a count on an application's eventfd may block before it is given up. */
#define DEVENTS_GUARD_NS (10 * 1000 * 1000L)

static void guard_handler(int sig)
{
	(void)sig; /* only there to interrupt write() */
}

int devents_guard_init(struct droce_daemon *d)
{
	/* no SA_RESTART: a write() the signal interrupts returns EINTR */
	struct sigaction sa = {.sa_handler = guard_handler};
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID};
	sigset_t set;

	if (d->guard_ok)
		return 0;
	sev.sigev_signo = SIGRTMIN;
	sev._sigev_un._tid = gettid(); /* this thread only: it is the one that writes */
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	if (sigaction(SIGRTMIN, &sa, NULL) != 0 || pthread_sigmask(SIG_UNBLOCK, &set, NULL) != 0 ||
	    timer_create(CLOCK_MONOTONIC, &sev, &d->guard) != 0)
		return -errno;
	d->guard_ok = true;
	return 0;
}

/*
 * One count on the application's eventfd. The descriptor is the
 * application's: it shares the count and O_NONBLOCK with droced, so it can
 * make this write block (a count parked at 2^64 - 2). The guard timer ticks
 * until the write returns: a blocked write ends in EINTR, and the connection
 * is closed. It ticks rather than fires once, so a tick taken before write()
 * blocked is followed by another.
 */
static bool efd_count(struct dclient *c)
{
	static const uint64_t one = 1;
	const struct itimerspec tick = {.it_value = {.tv_nsec = DEVENTS_GUARD_NS},
					.it_interval = {.tv_nsec = DEVENTS_GUARD_NS}};
	const struct itimerspec off = {.it_value = {0}};
	ssize_t n;

	if (timer_settime(c->d->guard, 0, &tick, NULL) != 0)
		return false;
	n = write(c->app_efd, &one, sizeof(one));
	timer_settime(c->d->guard, 0, &off, NULL);
	return n == (ssize_t)sizeof(one);
}

/*
 * While the application's ring is full, droced's async_fd stays readable:
 * epoll stops watching it (or droced's loop would spin on it) and droced's
 * 10 ms tick retries instead.
 */
static void throttle(struct dclient *c, bool on)
{
	struct epoll_event e = {.events = on ? 0 : EPOLLIN, .data.ptr = &c->async_tag};

	if (c->ev_throttled == on)
		return;
	c->ev_throttled = on;
	epoll_ctl(c->d->epfd, EPOLL_CTL_MOD, c->ctx->async_fd, &e);
}

int devents_create(struct dclient *c)
{
	size_t len =
		droce_ring_mem_size(DROCE_DPROTO_EVENT_SLOTS, sizeof(struct droce_dproto_event));
	int fd, rc;

	fd = droce_dproto_memfd("droced-events", len, 0, &len);
	if (fd < 0)
		return fd;
	c->ev_mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c->ev_mem == MAP_FAILED) {
		c->ev_mem = NULL;
		goto fail;
	}
	c->ev_len = len;
	rc = droce_ring_init(c->ev_mem, len, DROCE_DPROTO_EVENT_SLOTS,
			     sizeof(struct droce_dproto_event));
	if (rc == 0)
		rc = droce_ring_prod_attach(&c->ev, c->ev_mem, len);
	if (rc != 0) {
		munmap(c->ev_mem, len);
		c->ev_mem = NULL;
		close(fd);
		return rc;
	}
	return fd;
fail:
	rc = -errno;
	close(fd);
	return rc;
}

/* The application's handle of the event's object; the port for port events; 0 when gone. */
static uint32_t event_handle(const struct dclient *c, const struct ibv_async_event *ev)
{
	switch (droce_dproto_event_element(ev->event_type)) {
	case DPROTO_ELEMENT_CQ:
		return dclient_handle_of(c, DOBJ_CQ, ev->element.cq);
	case DPROTO_ELEMENT_QP:
		return dclient_handle_of(c, DOBJ_QP, ev->element.qp);
	case DPROTO_ELEMENT_SRQ:
		return dclient_handle_of(c, DOBJ_SRQ, ev->element.srq);
	case DPROTO_ELEMENT_PORT:
		return (uint32_t)ev->element.port_num;
	default:
		return 0;
	}
}

bool devents_forward(struct dclient *c)
{
	if (c->ctx == NULL)
		return true;
	for (;;) {
		struct ibv_async_event ev;
		struct droce_dproto_event *slot;
		int room = droce_ring_prod_free(&c->ev);

		if (room < 0) {
			/* the application broke its ring: its events stop, dropped here so that
			 * they neither pile up nor keep droced's async_fd readable */
			throttle(c, false);
			while (ibv_get_async_event(c->ctx, &ev) == 0)
				ibv_ack_async_event(&ev);
			return true;
		}
		if (room == 0) {
			if (droce_export_async_pending(c->ctx) > DEVENTS_BACKLOG_MAX) {
				fprintf(stderr,
					"droced: application pid %d reads no events: closed\n",
					(int)c->pid);
				return false;
			}
			throttle(c, true); /* retried on droced's next tick */
			return true;
		}
		throttle(c, false);
		/* droced's async_fd is non-blocking: -1 when none is left */
		if (ibv_get_async_event(c->ctx, &ev) != 0)
			return true;
		slot = droce_ring_prod_slot(&c->ev, 0);
		slot->event_type = ev.event_type;
		slot->handle = event_handle(c, &ev);
		ibv_ack_async_event(&ev);
		if (slot->handle == 0 && ev.event_type != IBV_EVENT_DEVICE_FATAL)
			continue; /* about an object already destroyed */
		/* the slot, then the count: the application finds the event when it wakes */
		droce_ring_prod_publish(&c->ev, 1);
		if (!efd_count(c)) {
			fprintf(stderr,
				"droced: application pid %d: its async eventfd takes no count: "
				"disconnected\n",
				(int)c->pid);
			return false;
		}
	}
}
