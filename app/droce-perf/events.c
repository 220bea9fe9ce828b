/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * -e: instead of spinning on ibv_poll_cq(), a thread that found nothing to
 * poll sleeps until a CQ it waits for has a completion. Each end's CQ reports
 * to its own completion channel; an event is taken (ibv_get_cq_event),
 * acknowledged and the CQ armed again before the caller polls it, so a
 * completion that comes after the poll found the CQ empty raises the next
 * event. With both ends in this process (--loopback) one thread waits on both
 * channels' descriptors at once.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "droce_perf.h"

int perf_events_open(struct perf_end *e)
{
	e->channel = ibv_create_comp_channel(e->ctx);
	if (e->channel == NULL) {
		fprintf(stderr, "droce-perf: ibv_create_comp_channel: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* the next completion of any kind raises an event */
int perf_events_arm(struct perf_end *e)
{
	int rc = ibv_req_notify_cq(e->cq, 0);

	if (rc != 0) {
		fprintf(stderr, "droce-perf: ibv_req_notify_cq: %s\n", strerror(rc));
		return -1;
	}
	return 0;
}

static int take_event(struct perf_ctx *c, struct perf_end *e)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	if (ibv_get_cq_event(e->channel, &cq, &cq_ctx) != 0) {
		fprintf(stderr, "droce-perf: ibv_get_cq_event: %s\n", strerror(errno));
		return -1;
	}
	ibv_ack_cq_events(cq, 1);
	c->cq_events++;
	return perf_events_arm(e);
}

int perf_events_wait(struct perf_ctx *c, unsigned int ends, int timeout_ms)
{
	struct pollfd pfd[2];
	int at[2], n = 0, rc;

	for (int i = 0; i < 2; i++) {
		if (!(ends & (1u << i)) || c->end[i].channel == NULL)
			continue;
		pfd[n] = (struct pollfd){.fd = c->end[i].channel->fd, .events = POLLIN};
		at[n++] = i;
	}
	if (n == 0)
		return 0;
	rc = poll(pfd, (nfds_t)n, timeout_ms);
	if (rc < 0 && errno != EINTR) {
		fprintf(stderr, "droce-perf: poll on the completion channels: %s\n",
			strerror(errno));
		return -1;
	}
	for (int k = 0; rc > 0 && k < n; k++)
		if ((pfd[k].revents & POLLIN) && take_event(c, &c->end[at[k]]) != 0)
			return -1;
	return 0;
}
