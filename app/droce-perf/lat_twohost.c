/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency in a two-host run: this process is one end, the other is perftest
 * (or droce-perf) elsewhere, so the ping-pong follows perftest's rules.
 * write_lat: the k-th message (from 1) of a size ends in the byte k mod 256;
 * each side writes its message into the peer's buffer at the address it was
 * given and polls the last byte of its own for the peer's; perftest's server
 * starts, the client answers. send_lat: SENDs into receives posted before the
 * size's SYNC; the client starts. read_lat, atomic_lat: the client requests,
 * the server's buffer answers. With -e a side waiting for its CQ sleeps on
 * the completion channel. A ping-pong sample is half the time from one
 * post to the next message's arrival, as perftest's; the side that starts
 * takes one sample a message, the other one fewer (its first message starts
 * no span).
 */
#include <stdlib.h>
#include <string.h>

#include "droce_perf.h"

struct tlat {
	struct perf_ctx *c;
	const struct perf_opts *o;
	struct perf_end *e;
	uint32_t size;
	bool starts;        /* posts first: the requester, or the ping-pong's first sender */
	uint8_t *rx;        /* where the peer's messages land */
	uint64_t rx_posted; /* send_lat: receives posted this size */
	uint64_t sent;
	double *samples;
	uint64_t n;
};

static bool one_sided(const struct tlat *t)
{
	return perf_verb_one_sided(t->o->verb);
}

static int post_recv(struct tlat *t)
{
	size_t half = t->c->buf_len / 2;

	if (perf_post_recv(t->c, t->e, 0, half, (uint32_t)half, t->rx_posted) != 0)
		return -1;
	t->rx_posted++;
	return 0;
}

static int post(struct tlat *t, uint64_t k)
{
	/* write_lat: the k-th message ends in the byte k mod 256 */
	if (t->o->verb == PERF_WRITE)
		t->e->buf[t->size - 1] = (uint8_t)k;
	return perf_lat_post(t->c, t->e, &t->c->peer[0], one_sided(t) ? t->rx : t->e->buf, t->size,
			     k, &t->sent);
}

/*
 * Reap completions; true in *got when a receive (SEND) or the request
 * (one-sided) ended. The number of completions, or -1.
 */
static int poll_cq(struct tlat *t, bool *got)
{
	struct ibv_wc wc[8];
	int n = ibv_poll_cq(t->e->cq, 8, wc);

	if (n < 0) {
		fprintf(stderr, "droce-perf: ibv_poll_cq failed\n");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "droce-perf: completion with error: %s (vendor err 0x%x)\n",
				ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
			return -1;
		}
		if ((wc[i].opcode & IBV_WC_RECV) || one_sided(t))
			*got = true;
	}
	return n;
}

/* Wait for the peer's message @p k (or this side's request to end). */
static int wait_for(struct tlat *t, uint64_t k, uint64_t iters)
{
	volatile uint8_t *last = t->rx + t->size - 1;
	uint64_t t0 = perf_now_ns();
	bool got = false;

	for (unsigned int spin = 0; !got; spin++) {
		int n = 0;

		if (t->o->verb == PERF_WRITE && *last == (uint8_t)k) {
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			got = true;
		}
		if ((t->o->verb != PERF_WRITE || (spin & 63) == 0) && (n = poll_cq(t, &got)) < 0)
			return -1;
		/* -e (not WRITE): the CQ was empty since it was armed: sleep until it is not */
		if (t->o->events && !got && n == 0 &&
		    perf_events_wait(t->c, 1u << t->c->me, PERF_EVENTS_WAIT_MS) != 0)
			return -1;
		if (((spin & 1023) == 1023 || t->o->events) && perf_now_ns() - t0 > PERF_STALL_NS) {
			fprintf(stderr, "droce-perf: no answer to message %llu for %llu s\n",
				(unsigned long long)k, PERF_STALL_NS / 1000000000ull);
			return -1;
		}
	}
	if (t->o->verb == PERF_SEND && t->rx_posted < iters)
		return post_recv(t);
	return 0;
}

int perf_lat_twohost_run(struct perf_ctx *c, uint32_t size, perf_ready_fn ready, void *arg,
			 struct perf_lat_result *r)
{
	struct tlat t = {.c = c, .o = c->o, .e = &c->end[c->me], .size = size};
	uint64_t iters = c->o->iters, t_post = 0;
	int rc = 0;

	t.starts = c->o->verb == PERF_WRITE ? c->role == PERF_ROLE_SERVER
					    : c->role == PERF_ROLE_CLIENT;
	t.rx = t.e->buf + c->buf_len / 2 + (c->o->qp_type == IBV_QPT_UD ? PERF_UD_GRH : 0);
	t.samples = calloc(iters, sizeof(double));
	if (t.samples == NULL) {
		fprintf(stderr, "droce-perf: out of memory\n");
		return -1;
	}
	/* send_lat: this size's receives, as many as perftest posts (its rx depth) */
	while (rc == 0 && c->o->verb == PERF_SEND && t.rx_posted < iters &&
	       t.rx_posted < c->rx_depth)
		rc = post_recv(&t);
	if (rc == 0 && ready != NULL)
		rc = ready(arg);
	for (uint64_t k = 1; rc == 0 && k <= iters; k++) {
		uint64_t now;

		if (!t.starts) {
			rc = wait_for(&t, k, iters);
			now = perf_now_ns();
			if (rc == 0 && k > 1)
				t.samples[t.n++] = (double)(now - t_post) / 2e3;
		}
		t_post = perf_now_ns();
		if (rc == 0)
			rc = post(&t, k);
		if (rc == 0 && t.starts) {
			rc = wait_for(&t, k, iters);
			now = perf_now_ns();
			t.samples[t.n++] = (double)(now - t_post) / (one_sided(&t) ? 1e3 : 2e3);
		}
	}
	if (rc == 0) {
		perf_lat_stats(t.samples, t.n, size, r);
		r->iters = iters;
	}
	free(t.samples);
	return rc;
}
