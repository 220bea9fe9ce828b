/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion channels: a file descriptor the application can poll()/epoll()
 * on. It is an eventfd in semaphore mode: one count per event, and a queue of
 * the CQs behind the counts, so ibv_get_cq_event() returns them in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs_priv.h"

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct droce_comp_channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (to_dctx(context)->remote != NULL) {
		int rc = droce_remote_channel_create(ch, context);

		if (rc != 0) {
			free(ch);
			errno = rc;
			return NULL;
		}
	} else {
		ch->ibch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	}
	if (ch->ibch.fd < 0) {
		free(ch);
		return NULL;
	}
	ch->ibch.context = context;
	ch->ibch.refcnt = 0;
	pthread_mutex_init(&ch->lock, NULL);
	return &ch->ibch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct droce_comp_channel *ch = to_dch(channel);

	/* libibverbs: EBUSY while CQs still use the channel */
	if (__atomic_load_n(&ch->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	if (ch->remote_handle != 0) {
		int rc = droce_remote_destroy(channel->context, DPROTO_DESTROY_CHANNEL,
					      ch->remote_handle, NULL);

		if (rc != 0)
			return rc;
	}
	close(channel->fd);
	free(ch->cqs);
	pthread_mutex_destroy(&ch->lock);
	free(ch->pending);
	free(ch);
	return 0;
}

int droce_channel_push(struct droce_comp_channel *ch, struct droce_cq *cq)
{
	static const uint64_t one = 1;

	/* droced's channel: the application tells its CQs apart by their notify_count */
	if (ch->exported)
		return write(ch->ibch.fd, &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
	pthread_mutex_lock(&ch->lock);
	if (ch->count == ch->cap) {
		unsigned int cap = ch->cap ? ch->cap * 2 : 16, i;
		struct droce_cq **n = malloc(cap * sizeof(*n));

		if (n == NULL) {
			pthread_mutex_unlock(&ch->lock);
			return -ENOMEM;
		}
		for (i = 0; i < ch->count; i++)
			n[i] = ch->pending[(ch->head + i) % ch->cap];
		free(ch->pending);
		ch->pending = n;
		ch->head = 0;
		ch->cap = cap;
	}
	ch->pending[(ch->head + ch->count) % ch->cap] = cq;
	ch->count++;
	pthread_mutex_unlock(&ch->lock);
	/* the count becomes readable: poll() on the fd wakes */
	return write(ch->ibch.fd, &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

/* Drop the events of @p cq not yet taken (the CQ is being destroyed). */
void droce_channel_forget(struct droce_comp_channel *ch, struct droce_cq *cq)
{
	unsigned int i, kept = 0;
	uint64_t v;

	pthread_mutex_lock(&ch->lock);
	for (i = 0; i < ch->count; i++) {
		struct droce_cq *e = ch->pending[(ch->head + i) % ch->cap];

		if (e == cq) {
			/* take back its count: non-blocking, the count is there */
			int fl = fcntl(ch->ibch.fd, F_GETFL);

			fcntl(ch->ibch.fd, F_SETFL, fl | O_NONBLOCK);
			if (read(ch->ibch.fd, &v, sizeof(v)) < 0)
				(void)0; /* a reader raced us to it: the reader finds no CQ */
			fcntl(ch->ibch.fd, F_SETFL, fl);
			continue;
		}
		ch->pending[(ch->head + kept) % ch->cap] = e;
		kept++;
	}
	ch->count = kept;
	pthread_mutex_unlock(&ch->lock);
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct droce_comp_channel *ch = to_dch(channel);
	struct droce_cq *dcq = NULL;
	uint64_t v;

	if (ch->remote_handle != 0) {
		if (droce_remote_get_cq_event(ch, &dcq) != 0)
			return -1;
		*cq = droce_cq_ibcq(dcq);
		*cq_context = dcq->ibcq.cq_context;
		return 0;
	}
	for (;;) {
		/* blocks unless the application made the fd non-blocking */
		if (read(channel->fd, &v, sizeof(v)) != sizeof(v))
			return -1;
		pthread_mutex_lock(&ch->lock);
		if (ch->count > 0) {
			dcq = ch->pending[ch->head];
			ch->head = (ch->head + 1) % ch->cap;
			ch->count--;
			__atomic_fetch_add(&dcq->events_reported, 1, __ATOMIC_RELAXED);
		}
		pthread_mutex_unlock(&ch->lock);
		if (dcq != NULL)
			break;
	}
	*cq = droce_cq_ibcq(dcq);
	*cq_context = dcq->ibcq.cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	struct droce_cq *dcq = to_dcq(cq);

	pthread_mutex_lock(&dcq->ibcq.mutex);
	dcq->ibcq.comp_events_completed += nevents;
	pthread_cond_signal(&dcq->ibcq.cond);
	pthread_mutex_unlock(&dcq->ibcq.mutex);
}
