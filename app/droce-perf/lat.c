/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency with both ends here (--loopback): one QP, one message in flight.
 * WRITE and SEND are ping-pongs (end 0 sends, end 1 answers as soon as the
 * message is there; a sample is half the round trip, as perftest reports);
 * READ and atomics are end 0's requests to end 1's buffer (a sample is the
 * whole request). WRITE receivers poll the message's last byte, which changes
 * every iteration. One thread drives both ends; with -e (not WRITE) it sleeps
 * on the waiting end's completion channel while its CQ is empty.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "droce_perf.h"

struct lat {
	struct perf_ctx *c;
	const struct perf_opts *o;
	uint32_t size, grh;
	size_t rx_off; /* each end sends from offset 0, receives at rx_off */
	uint64_t sent[2];
	double *samples;
	uint64_t n, cap;
};

static uint8_t *send_buf(struct lat *l, int end)
{
	return l->c->end[end].buf;
}

static uint8_t *recv_buf(struct lat *l, int end)
{
	return l->c->end[end].buf + l->rx_off;
}

static int stalled(uint64_t since)
{
	if (perf_now_ns() - since < PERF_STALL_NS)
		return 0;
	fprintf(stderr, "droce-perf: no answer for %llu s\n", PERF_STALL_NS / 1000000000ull);
	return -1;
}

/*
 * Poll @p end's CQ: send completions are reaped, a receive completion ends the
 * wait; the number of completions, or -1.
 */
static int poll_end(struct lat *l, int end, bool want_recv, bool *got)
{
	struct ibv_wc wc[8];
	int n = ibv_poll_cq(l->c->end[end].cq, 8, wc);

	if (n < 0) {
		fprintf(stderr, "droce-perf: ibv_poll_cq failed\n");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "droce-perf: completion with error: %s\n",
				ibv_wc_status_str(wc[i].status));
			return -1;
		}
		if (wc[i].opcode & IBV_WC_RECV) {
			if (!want_recv || *got) {
				fprintf(stderr, "droce-perf: unexpected receive\n");
				return -1;
			}
			if (wc[i].byte_len != l->size + l->grh) {
				fprintf(stderr, "droce-perf: received %u bytes, expected %u\n",
					wc[i].byte_len - l->grh, l->size);
				return -1;
			}
			*got = true;
		} else if (perf_verb_one_sided(l->o->verb)) {
			*got = true;
		}
	}
	return n;
}

static bool one_sided(const struct lat *l)
{
	return perf_verb_one_sided(l->o->verb);
}

static int post(struct lat *l, int from, uint64_t msg)
{
	uint8_t *buf = one_sided(l) ? recv_buf(l, from) : send_buf(l, from);

	/* WRITE: the peer's receive half (vaddr_off) */
	return perf_lat_post(l->c, &l->c->end[from], &l->c->end[!from].local[0], buf, l->size, msg,
			     &l->sent[from]);
}

static int post_recv(struct lat *l, int end, uint64_t id)
{
	size_t at = l->rx_off - l->grh;

	return perf_post_recv(l->c, &l->c->end[end], 0, at, (uint32_t)(l->c->buf_len - at), id);
}

/* Wait until message @p msg from the other end is in @p end's receive buffer. */
static int wait_message(struct lat *l, int end, uint64_t msg)
{
	uint64_t t0 = perf_now_ns();
	uint8_t tag = perf_pattern_byte((unsigned int)!end, msg, l->size, l->size - 1);
	volatile uint8_t *last = recv_buf(l, end) + l->size - 1;
	bool got = false;

	for (unsigned int spin = 0;; spin++) {
		int n = 0;

		if (l->o->verb == PERF_WRITE) {
			if (*last == tag) {
				__atomic_thread_fence(__ATOMIC_ACQUIRE);
				got = true;
			}
			/* reap send completions now and then */
			if ((spin & 63) == 0 && poll_end(l, end, false, &got) < 0)
				return -1;
		} else if ((n = poll_end(l, end, true, &got)) < 0) {
			return -1;
		}
		if (got)
			break;
		/* -e: the CQ was empty since it was armed: sleep until it is not */
		if (l->o->events && n == 0 &&
		    perf_events_wait(l->c, 1u << end, PERF_EVENTS_WAIT_MS) != 0)
			return -1;
		if (((spin & 1023) == 1023 || l->o->events) && stalled(t0) != 0)
			return -1;
	}
	if (l->o->verb == PERF_SEND && post_recv(l, end, msg) != 0)
		return -1;
	if (l->o->check && l->o->verb == PERF_ATOMIC) {
		uint64_t fetched,
			want = l->o->atomic_cas ? PERF_ATOMIC_SWAP : msg * PERF_ATOMIC_ADD;

		/* the n-th atomic on the one word fetches n adds */
		memcpy(&fetched, recv_buf(l, end), sizeof(fetched));
		if (fetched != want) {
			fprintf(stderr,
				"droce-perf: check failed: atomic %llu fetched %llu, expected "
				"%llu\n",
				(unsigned long long)msg, (unsigned long long)fetched,
				(unsigned long long)want);
			return -1;
		}
		l->c->checked++;
	} else if (l->o->check) {
		uint64_t m = l->o->verb == PERF_READ ? 0 : msg;

		if (perf_pattern_await(recv_buf(l, end), l->size, (unsigned int)!end, m,
				       PERF_PLACE_WAIT_NS) != 0)
			return -1;
		l->c->checked++;
	}
	return 0;
}

/* One sample: ping-pong (half the round trip) or one READ. */
static int iteration(struct lat *l, uint64_t i, double *usec)
{
	uint64_t t0, t1;

	if (one_sided(l)) {
		if (l->o->check)
			memset(recv_buf(l, 0), 0, l->size);
		t0 = perf_now_ns();
		if (post(l, 0, i) != 0 || wait_message(l, 0, l->o->verb == PERF_READ ? 0 : i) != 0)
			return -1;
		t1 = perf_now_ns();
		*usec = (double)(t1 - t0) / 1e3;
		return 0;
	}
	if (l->o->check) {
		perf_pattern_fill(send_buf(l, 0), l->size, 0, i);
		perf_pattern_fill(send_buf(l, 1), l->size, 1, i);
	} else {
		send_buf(l, 0)[l->size - 1] = perf_pattern_byte(0, i, l->size, l->size - 1);
		send_buf(l, 1)[l->size - 1] = perf_pattern_byte(1, i, l->size, l->size - 1);
	}
	t0 = perf_now_ns();
	if (post(l, 0, i) != 0 || wait_message(l, 1, i) != 0 || post(l, 1, i) != 0 ||
	    wait_message(l, 0, i) != 0)
		return -1;
	t1 = perf_now_ns();
	*usec = (double)(t1 - t0) / 2e3;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double percentile(const double *s, uint64_t n, double p)
{
	uint64_t k = (uint64_t)ceil(p * (double)n);

	return s[k == 0 ? 0 : k - 1];
}

void perf_lat_stats(double *samples, uint64_t n, uint32_t size, struct perf_lat_result *r)
{
	double sum = 0, sq = 0;

	qsort(samples, n, sizeof(double), cmp_double);
	for (uint64_t i = 0; i < n; i++)
		sum += samples[i];
	r->t_avg = sum / (double)n;
	for (uint64_t i = 0; i < n; i++)
		sq += (samples[i] - r->t_avg) * (samples[i] - r->t_avg);
	r->bytes = size;
	r->iters = n;
	r->t_min = samples[0];
	r->t_max = samples[n - 1];
	r->t_typical = samples[n / 2];
	r->t_stdev = sqrt(sq / (double)n);
	r->p99 = percentile(samples, n, 0.99);
	r->p999 = percentile(samples, n, 0.999);
}

static int add_sample(struct lat *l, double usec)
{
	if (l->n == l->cap) {
		uint64_t cap = l->cap ? l->cap * 2 : 4096;
		double *s = realloc(l->samples, cap * sizeof(double));

		if (s == NULL) {
			fprintf(stderr, "droce-perf: out of memory\n");
			return -1;
		}
		l->samples = s;
		l->cap = cap;
	}
	l->samples[l->n++] = usec;
	return 0;
}

static int setup(struct lat *l)
{
	l->grh = l->o->qp_type == IBV_QPT_UD ? PERF_UD_GRH : 0;
	/* a UD receive puts the GRH first: the payload starts at rx_off either way */
	l->rx_off = l->c->buf_len / 2 + l->grh;
	memset(send_buf(l, 0), 0, l->c->buf_len);
	memset(send_buf(l, 1), 0, l->c->buf_len);
	if (l->o->verb == PERF_READ)
		perf_pattern_fill(send_buf(l, 1), l->size, 1, 0);
	/* every iteration takes one receive and posts one: they stay posted for the
	 * next size, long enough for the largest */
	for (int end = 0; end < 2 && l->o->verb == PERF_SEND && !l->c->lat_rx_posted; end++)
		for (unsigned int k = 0; k < l->c->rx_depth; k++)
			if (post_recv(l, end, k) != 0)
				return -1;
	l->c->lat_rx_posted = true;
	return 0;
}

int perf_lat_run(struct perf_ctx *c, uint32_t size, struct perf_lat_result *r)
{
	struct lat l = {.c = c, .o = c->o, .size = size};
	uint64_t deadline = c->o->duration ? perf_now_ns() + c->o->duration * 1000000000ull : 0;
	int rc = setup(&l);

	for (uint64_t i = 0; rc == 0; i++) {
		double usec;

		if (deadline ? perf_now_ns() >= deadline : i >= c->o->iters)
			break;
		rc = iteration(&l, i, &usec);
		if (rc == 0)
			rc = add_sample(&l, usec);
	}
	if (rc == 0)
		perf_lat_stats(l.samples, l.n, l.size, r);
	free(l.samples);
	return rc;
}
