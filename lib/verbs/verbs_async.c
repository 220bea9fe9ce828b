/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events (QP, CQ, SRQ and port events): the engine queues them
 * on the context and counts them on context->async_fd (an eventfd in
 * semaphore mode, so poll()/epoll() see it); ibv_get_async_event() takes them
 * in order and ibv_ack_async_event() lets destroy calls know they were seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "verbs_priv.h"

/* The object an affiliated event names, NULL for port and device events. */
static const void *event_object(const struct ibv_async_event *ev)
{
	switch (droce_dproto_event_element(ev->event_type)) {
	case DPROTO_ELEMENT_CQ:
		return ev->element.cq;
	case DPROTO_ELEMENT_QP:
		return ev->element.qp;
	case DPROTO_ELEMENT_SRQ:
		return ev->element.srq;
	default:
		return NULL;
	}
}

/* Count an event handed out on its object: destroy waits for as many acks. */
static void event_reported(const struct ibv_async_event *ev)
{
	uint32_t *reported = NULL;

	switch (droce_dproto_event_element(ev->event_type)) {
	case DPROTO_ELEMENT_CQ:
		reported = &to_dcq(ev->element.cq)->async_reported;
		break;
	case DPROTO_ELEMENT_SRQ:
		reported = &to_dsrq(ev->element.srq)->async_reported;
		break;
	case DPROTO_ELEMENT_QP:
		reported = &to_dqp(ev->element.qp)->async_reported;
		break;
	default:
		break;
	}
	if (reported != NULL)
		__atomic_fetch_add(reported, 1, __ATOMIC_RELAXED);
}

int droce_async_queue(struct droce_context *c, const struct ibv_async_event *ev)
{
	if (c->async_count == c->async_cap) {
		unsigned int cap = c->async_cap ? c->async_cap * 2 : 16, i;
		struct ibv_async_event *q = malloc(cap * sizeof(*q));

		if (q == NULL)
			return -ENOMEM;
		for (i = 0; i < c->async_count; i++)
			q[i] = c->async_q[(c->async_head + i) % c->async_cap];
		free(c->async_q);
		c->async_q = q;
		c->async_head = 0;
		c->async_cap = cap;
	}
	c->async_q[(c->async_head + c->async_count) % c->async_cap] = *ev;
	c->async_count++;
	return 0;
}

int droce_async_push(struct ibv_context *context, const struct ibv_async_event *ev)
{
	static const uint64_t one = 1;
	struct droce_context *c = to_dctx(context);
	int rc;

	pthread_mutex_lock(&c->async_lock);
	rc = droce_async_queue(c, ev);
	pthread_mutex_unlock(&c->async_lock);
	if (rc != 0)
		return rc;
	return write(c->async_efd, &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

void droce_async_fini(struct droce_context *c)
{
	free(c->async_q);
	pthread_mutex_destroy(&c->async_lock);
}

void droce_async_forget(struct ibv_context *context, const void *object)
{
	struct droce_context *c = to_dctx(context);
	unsigned int i, kept = 0;
	uint64_t v;

	c->ops->async_pull(c); /* droced's events about it are here too */
	pthread_mutex_lock(&c->async_lock);
	for (i = 0; i < c->async_count; i++) {
		struct ibv_async_event *e = &c->async_q[(c->async_head + i) % c->async_cap];

		if (event_object(e) == object) {
			/* take back its count: non-blocking, the count is there */
			int fl = fcntl(c->async_efd, F_GETFL);

			fcntl(c->async_efd, F_SETFL, fl | O_NONBLOCK);
			if (read(c->async_efd, &v, sizeof(v)) < 0)
				(void)0; /* a reader took it: it finds no event, reads again */
			fcntl(c->async_efd, F_SETFL, fl);
			continue;
		}
		c->async_q[(c->async_head + kept) % c->async_cap] = *e;
		kept++;
	}
	c->async_count = kept;
	pthread_mutex_unlock(&c->async_lock);
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct droce_context *c = to_dctx(context);
	uint64_t v;

	for (;;) {
		bool got = false;

		/* blocks unless the application made async_fd non-blocking */
		if (read(context->async_fd, &v, sizeof(v)) != sizeof(v))
			return -1;
		c->ops->async_pull(c);
		pthread_mutex_lock(&c->async_lock);
		if (c->async_count > 0) {
			*event = c->async_q[c->async_head];
			c->async_head = (c->async_head + 1) % c->async_cap;
			c->async_count--;
			/* under the lock: droce_async_forget() sees it reported or queued */
			event_reported(event);
			got = true;
		}
		pthread_mutex_unlock(&c->async_lock);
		if (got)
			return 0;
	}
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	pthread_mutex_t *mutex;
	pthread_cond_t *cond;
	unsigned int *completed;

	switch (droce_dproto_event_element(event->event_type)) {
	case DPROTO_ELEMENT_CQ:
		mutex = &event->element.cq->mutex;
		cond = &event->element.cq->cond;
		completed = &event->element.cq->async_events_completed;
		break;
	case DPROTO_ELEMENT_QP:
		mutex = &event->element.qp->mutex;
		cond = &event->element.qp->cond;
		completed = &event->element.qp->events_completed;
		break;
	case DPROTO_ELEMENT_SRQ:
		mutex = &event->element.srq->mutex;
		cond = &event->element.srq->cond;
		completed = &event->element.srq->events_completed;
		break;
	default:
		return; /* port and device events belong to no object */
	}
	pthread_mutex_lock(mutex);
	(*completed)++;
	pthread_cond_signal(cond);
	pthread_mutex_unlock(mutex);
}
