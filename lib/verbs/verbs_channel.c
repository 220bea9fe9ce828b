/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion channels: a file descriptor the application can poll()/epoll()
 * on, one count per event; the backend makes it and tells which CQ each
 * count is for (verbs_embedded_channel.c, verbs_remote_obj.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "verbs_priv.h"

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct droce_comp_channel *ch = calloc(1, sizeof(*ch));
	int rc;

	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->ibch.context = context;
	ch->ibch.refcnt = 0;
	rc = droce_ops(context)->create_channel(ch);
	if (rc != 0) {
		free(ch);
		errno = -rc;
		return NULL;
	}
	pthread_mutex_init(&ch->lock, NULL);
	return &ch->ibch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct droce_comp_channel *ch = to_dch(channel);
	int rc;

	/* libibverbs: EBUSY while CQs still use the channel */
	if (__atomic_load_n(&ch->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	rc = droce_ops(channel->context)->destroy_channel(ch);
	if (rc != 0)
		return -rc;
	close(channel->fd);
	free(ch->cqs);
	pthread_mutex_destroy(&ch->lock);
	free(ch->pending);
	free(ch);
	return 0;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct droce_cq *dcq;
	int rc = droce_ops(channel->context)->get_cq_event(to_dch(channel), &dcq);

	/* libibverbs: -1 with errno (EAGAIN on a non-blocking fd without an event) */
	if (rc != 0) {
		errno = -rc;
		return -1;
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
