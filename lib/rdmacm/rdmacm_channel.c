/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event channels. librdmacm's channel is a descriptor of the kernel's rdma_cm; droce's is an
 * eventfd in semaphore mode counting the events queued: poll() sees it readable while one
 * waits, a read takes one, blocks while none does, and fails with EAGAIN instead when the
 * program made the descriptor O_NONBLOCK, just as a read of the kernel's device would.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rdmacm_priv.h"

/* events handed out and not yet acknowledged, per id: rdma_destroy_id waits for them */
static pthread_mutex_t ack_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t acked = PTHREAD_COND_INITIALIZER;

void rdmacm_events_wait(struct rdmacm_id *rid)
{
	pthread_mutex_lock(&ack_lock);
	while (rid->events_out > 0)
		pthread_cond_wait(&acked, &ack_lock);
	pthread_mutex_unlock(&ack_lock);
}

struct rdmacm_channel *rdmacm_channel_new(void)
{
	struct rdmacm_channel *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	TAILQ_INIT(&c->queue);
	return c;
}

void rdmacm_channel_free(struct rdmacm_channel *c)
{
	struct rdmacm_event *e;

	while ((e = TAILQ_FIRST(&c->queue)) != NULL) {
		TAILQ_REMOVE(&c->queue, e, link);
		free(e);
	}
	close(c->ch.fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rdmacm_channel *c;
	int rc = rdmacm_devices_open();

	/* as librdmacm: no RDMA device, no channel (ENODEV) */
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	c = rdmacm_channel_new();

	return c == NULL ? NULL : &c->ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	if (channel != NULL)
		rdmacm_channel_free(to_rch(channel));
}

int rdmacm_event_queue(struct rdmacm_id *rid, enum rdma_cm_event_type type, int status,
		       struct rdmacm_id *listen, const void *data, size_t len,
		       const struct rdma_cm_event *param)
{
	/* a connection request waits on its listener's channel */
	struct rdmacm_channel *c = to_rch(listen != NULL ? listen->id.channel : rid->id.channel);
	struct rdmacm_event *e = calloc(1, sizeof(*e));
	uint64_t one = 1;

	if (e == NULL)
		return -ENOMEM;
	if (param != NULL)
		e->ev.param = param->param;
	e->ev.id = &rid->id;
	e->ev.listen_id = listen == NULL ? NULL : &listen->id;
	e->ev.event = type;
	e->ev.status = status;
	if (len > sizeof(e->private_data))
		len = sizeof(e->private_data);
	if (len > 0)
		memcpy(e->private_data, data, len);
	/* conn and ud alike: private_data and its length lead both */
	e->ev.param.conn.private_data = len > 0 ? e->private_data : NULL;
	e->ev.param.conn.private_data_len = (uint8_t)len;
	pthread_mutex_lock(&c->lock);
	TAILQ_INSERT_TAIL(&c->queue, e, link);
	pthread_mutex_unlock(&c->lock);
	if (write(c->ch.fd, &one, sizeof(one)) != sizeof(one))
		return -errno; /* cannot happen below 2^64 - 1 events; queued all the same */
	return 0;
}

void rdmacm_channel_forget(struct rdmacm_channel *c, struct rdmacm_id *rid,
			   void (*orphan)(struct rdmacm_id *child))
{
	struct rdmacm_event *e, *next;
	struct rdmacm_event_list gone = TAILQ_HEAD_INITIALIZER(gone);

	pthread_mutex_lock(&c->lock);
	for (e = TAILQ_FIRST(&c->queue); e != NULL; e = next) {
		next = TAILQ_NEXT(e, link);
		if (e->ev.id == &rid->id || e->ev.listen_id == &rid->id) {
			TAILQ_REMOVE(&c->queue, e, link);
			TAILQ_INSERT_TAIL(&gone, e, link);
		}
	}
	pthread_mutex_unlock(&c->lock);
	/* the eventfd keeps counting them: rdma_get_cm_event skips a count with no event */
	while ((e = TAILQ_FIRST(&gone)) != NULL) {
		TAILQ_REMOVE(&gone, e, link);
		if (e->ev.listen_id == &rid->id && e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST &&
		    orphan != NULL)
			orphan(to_rid(e->ev.id));
		free(e);
	}
}

/* the next queued event, waiting on the descriptor as it is set (blocking or not) */
static int channel_next(struct rdmacm_channel *c, struct rdmacm_event **out)
{
	uint64_t count;

	for (;;) {
		if (read(c->ch.fd, &count, sizeof(count)) != sizeof(count)) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		pthread_mutex_lock(&c->lock);
		*out = TAILQ_FIRST(&c->queue);
		if (*out != NULL)
			TAILQ_REMOVE(&c->queue, *out, link);
		pthread_mutex_unlock(&c->lock);
		if (*out != NULL)
			return 0;
	}
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct rdmacm_event *e;
	struct rdmacm_id *rid;
	int rc;

	if (channel == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	rc = channel_next(to_rch(channel), &e);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	rid = to_rid(e->ev.id);
	pthread_mutex_lock(&ack_lock);
	rid->events_out++;
	if (e->ev.listen_id != NULL)
		to_rid(e->ev.listen_id)->events_out++;
	pthread_mutex_unlock(&ack_lock);
	rdmacm_event_process(e);
	*event = &e->ev;
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct rdmacm_id *rid;

	if (event == NULL) {
		errno = EINVAL;
		return -1;
	}
	rid = to_rid(event->id);
	pthread_mutex_lock(&ack_lock);
	rid->events_out--;
	if (event->listen_id != NULL)
		to_rid(event->listen_id)->events_out--;
	pthread_cond_broadcast(&acked);
	pthread_mutex_unlock(&ack_lock);
	free(event);
	return 0;
}
