/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ping-pong, as droce-perf write_lat --loopback: one thread drives both ends;
 * end 0 WRITEs, end 1 answers as soon as the message's last byte arrived,
 * and a sample is half the round trip.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "raw.h"

struct lat {
	struct raw_ctx *c;
	uint32_t size;
	uint64_t rx_off;
	uint64_t sent[RAW_ENDS];
};

/* The last byte of message @p i from @p end: it differs from the one before. */
static uint8_t tag(unsigned int end, uint64_t i)
{
	return (uint8_t)((i + 1) ^ (end ? 0x80u : 0u));
}

static int post(struct lat *l, unsigned int from)
{
	struct raw_end *e = &l->c->end[from];
	struct raw_wqe w = {
		.laddr = (uintptr_t)e->buf,
		.raddr = (uintptr_t)l->c->end[!from].buf + l->rx_off,
		.len = l->size,
		.signaled = ++l->sent[from] % l->c->cq_mod == 0,
	};

	return rte_ring_sp_enqueue_elem(e->sq, &w, sizeof(w)) == 0 ? 0 : -1;
}

/* Wait for message @p i from the other end at @p end, reaping its send completions now and then. */
static int wait_message(struct lat *l, unsigned int end, uint64_t i)
{
	volatile uint8_t *last = l->c->end[end].buf + l->rx_off + l->size - 1;
	uint8_t want = tag(!end, i);
	uint64_t t0 = raw_now_ns();

	for (unsigned int spin = 0; *last != want; spin++) {
		struct raw_cqe cqe[8];

		if ((spin & 63) == 0)
			(void)rte_ring_sc_dequeue_burst_elem(l->c->end[end].cq, cqe, sizeof(cqe[0]),
							     8, NULL);
		if ((spin & 1023) == 1023 && raw_now_ns() - t0 > RAW_STALL_NS) {
			fprintf(stderr, "bench_raw: no answer for 10 s\n");
			return -1;
		}
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* droce-perf's percentile: the ceil(p n)-th smallest sample. */
static double percentile(const double *s, uint64_t n, double p)
{
	uint64_t k = (uint64_t)ceil(p * (double)n);

	return s[k == 0 ? 0 : k - 1];
}

int raw_lat_run(struct raw_ctx *c, uint32_t size, uint64_t iters, struct raw_lat_result *r)
{
	struct lat l = {.c = c, .size = size, .rx_off = c->end[0].buf_len / 2};
	double *s = malloc(iters * sizeof(*s));
	int rc = 0;

	if (s == NULL || size == 0 || size > l.rx_off) {
		free(s);
		return -1;
	}
	for (uint64_t i = 0; i < iters && rc == 0; i++) {
		uint64_t t0, t1;

		c->end[0].buf[size - 1] = tag(0, i);
		c->end[1].buf[size - 1] = tag(1, i);
		t0 = raw_now_ns();
		rc = post(&l, 0);
		if (rc == 0)
			rc = wait_message(&l, 1, i);
		if (rc == 0)
			rc = post(&l, 1);
		if (rc == 0)
			rc = wait_message(&l, 0, i);
		t1 = raw_now_ns();
		s[i] = (double)(t1 - t0) / 2e3;
	}
	if (rc == 0) {
		qsort(s, iters, sizeof(*s), cmp_double);
		*r = (struct raw_lat_result){
			.size = size,
			.iters = iters,
			.t_min = s[0],
			.t_median = s[iters / 2],
			.t_p99 = percentile(s, iters, 0.99),
			.t_p999 = percentile(s, iters, 0.999),
			.t_max = s[iters - 1],
		};
	}
	free(s);
	return rc;
}
