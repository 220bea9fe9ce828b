/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion channels of this process's engine: an eventfd in semaphore mode
 * (one count per event) and a queue of the CQs behind the counts, so that
 * ibv_get_cq_event() returns them in order. droced's own channels, which it
 * exports to an application, are counted on the fd only: the application
 * tells their CQs apart (verbs_remote_obj.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs_priv.h"

int droce_embedded_create_channel(struct droce_comp_channel *ch)
{
	ch->ibch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	return ch->ibch.fd >= 0 ? 0 : -errno;
}

int droce_embedded_destroy_channel(struct droce_comp_channel *ch)
{
	(void)ch; /* the entry point closes the fd */
	return 0;
}

int droce_embedded_channel_join(struct droce_comp_channel *ch, struct droce_cq *cq)
{
	(void)ch; /* the engine pushes the CQ with each event */
	(void)cq;
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

int droce_embedded_get_cq_event(struct droce_comp_channel *ch, struct droce_cq **cq)
{
	struct droce_cq *dcq = NULL;
	uint64_t v;

	for (;;) {
		/* blocks unless the application made the fd non-blocking */
		if (read(ch->ibch.fd, &v, sizeof(v)) != sizeof(v))
			return -errno;
		pthread_mutex_lock(&ch->lock);
		if (ch->count > 0) {
			dcq = ch->pending[ch->head];
			ch->head = (ch->head + 1) % ch->cap;
			ch->count--;
			__atomic_fetch_add(&dcq->events_reported, 1, __ATOMIC_RELAXED);
		}
		pthread_mutex_unlock(&ch->lock);
		if (dcq != NULL) {
			*cq = dcq;
			return 0;
		}
	}
}
