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
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return ev->element.qp;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	default:
		return NULL;
	}
}

/* Count an event handed out on its object: destroy waits for as many acks. */
static void event_reported(const struct ibv_async_event *ev)
{
	uint32_t *reported = NULL;

	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		reported = &to_dcq(ev->element.cq)->async_reported;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		reported = &to_dsrq(ev->element.srq)->async_reported;
		break;
	default:
		if (event_object(ev) != NULL)
			reported = &to_dqp(ev->element.qp)->async_reported;
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

	droce_remote_async_pull(c); /* droced's events about it are here too */
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
		droce_remote_async_pull(c);
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
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct ibv_cq *cq = event->element.cq;

		pthread_mutex_lock(&cq->mutex);
		cq->async_events_completed++;
		pthread_cond_signal(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
		break;
	}
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct ibv_qp *qp = event->element.qp;

		pthread_mutex_lock(&qp->mutex);
		qp->events_completed++;
		pthread_cond_signal(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
		break;
	}
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct ibv_srq *srq = event->element.srq;

		pthread_mutex_lock(&srq->mutex);
		srq->events_completed++;
		pthread_cond_signal(&srq->cond);
		pthread_mutex_unlock(&srq->mutex);
		break;
	}
	default:
		break; /* port and device events belong to no object */
	}
}
