/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cost of the lib/transport timer wheel (droce_timer.h) against a binary min-heap with a
 * position index (O(log n) arm, re-arm and cancel: the usual alternative to a wheel), measured
 * in the same run on the same timers, expiries and access order.
 *
 * Ticks are nanoseconds and the wheel's slots 1024 ticks (about 1 us). Two workloads of
 * expiries: "short", uniform over 1..64 us (ACK coalescing, short RNR delays), and "acks",
 * log-uniform over every local ACK timeout (8 us .. 2.4 h). For each, a cache-resident set of
 * timers and a large one, touched in random order (timers embedded in QPs all over memory):
 *   arm         ns per arm of an idle timer (the set fills up)
 *   re-arm      ns per move of an armed timer to a new expiry (each ACK moves the
 *               retransmission timer)
 *   cancel      ns per cancel of an armed timer
 *   arm+cancel  ns per re-arm and cancel of the same timer, the others armed
 *   drain       ns per timer to fire them all, runs driven by droce_timer_wheel_next()
 *               (the heap: by its minimum), cascades included
 *   idle run    ns per run with nothing due (what a polling lcore pays every loop)
 *   next        ns per droce_timer_wheel_next() (the heap: reading its minimum)
 *
 * Figures only, nothing asserts on time. The exit status is non-zero when a timer fires wrong.
 *
 * Usage: bench_timer [-r repetitions (1..31)]
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "droce_timer.h"

#define GRANULARITY 1024
#define MAX_REPS    31
#define IDLE_RUNS   (1u << 20)
#define BASE        (UINT64_C(1) << 40)

static volatile uint64_t bench_sink;
static double bench_moves; /* timers moved down a level per timer drained, last round */
static bool bench_ok = true;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t rng = 0x2545f4914f6cdd1du;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void fail(const char *what)
{
	if (bench_ok)
		fprintf(stderr, "bench_timer: %s\n", what);
	bench_ok = false;
}

/* ---------------------------------------------------------- the baseline heap */

struct heap {
	uint64_t *key;
	uint32_t *id;
	uint32_t *pos; /* per timer: heap index + 1, 0 when not in the heap */
	uint32_t n;
};

static void heap_swap(struct heap *h, uint32_t a, uint32_t b)
{
	uint64_t k = h->key[a];
	uint32_t i = h->id[a];

	h->key[a] = h->key[b];
	h->id[a] = h->id[b];
	h->key[b] = k;
	h->id[b] = i;
	h->pos[h->id[a]] = a + 1;
	h->pos[h->id[b]] = b + 1;
}

static void heap_fix(struct heap *h, uint32_t i)
{
	while (i > 0 && h->key[(i - 1) / 2] > h->key[i]) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;

		if (l < h->n && h->key[l] < h->key[m])
			m = l;
		if (l + 1 < h->n && h->key[l + 1] < h->key[m])
			m = l + 1;
		if (m == i)
			break;
		heap_swap(h, i, m);
		i = m;
	}
}

static void heap_arm(struct heap *h, uint32_t id, uint64_t key)
{
	uint32_t i = h->pos[id];

	if (i == 0) {
		i = ++h->n;
		h->id[i - 1] = id;
		h->pos[id] = i;
	}
	h->key[i - 1] = key;
	heap_fix(h, i - 1);
}

static void heap_cancel(struct heap *h, uint32_t id)
{
	uint32_t i = h->pos[id];

	if (i == 0)
		return;
	h->pos[id] = 0;
	if (i - 1 != --h->n) {
		h->key[i - 1] = h->key[h->n];
		h->id[i - 1] = h->id[h->n];
		h->pos[h->id[i - 1]] = i;
		heap_fix(h, i - 1);
	}
}

/*
 * The heap's run and next as the out-of-line calls a library would make them, like the
 * wheel's; a run with nothing due only compares the minimum.
 */
static __attribute__((noinline)) int heap_run_idle(struct heap *h, uint64_t now)
{
	return h->n > 0 && h->key[0] <= now;
}

static __attribute__((noinline)) uint64_t heap_next(const struct heap *h, uint64_t now)
{
	if (h->n == 0)
		return UINT64_MAX;
	return h->key[0] > now ? h->key[0] - now : 0;
}

/* ---------------------------------------------------------- the runs */

struct set {
	const char *name;
	uint32_t n;
	struct droce_timer *t;
	uint32_t *order;  /* random permutation: the access order */
	uint64_t *first;  /* expiry offsets of the first arm */
	uint64_t *second; /* and of the re-arm */
};

enum op { OP_ARM, OP_REARM, OP_CANCEL, OP_PAIR, OP_DRAIN, OP_IDLE, OP_NEXT, OP_COUNT };

static const char *const op_name[OP_COUNT] = {
	"arm", "re-arm", "cancel", "arm+cancel", "drain (per timer)", "idle run", "next",
};

static void count_fire(struct droce_timer_wheel *w, struct droce_timer *t, void *arg)
{
	uint64_t *fired = arg;

	if (droce_timer_wheel_now(w) < t->expire)
		fail("a timer fired early");
	(*fired)++;
}

/* Repeat the timed loops over small sets so that each measures about 2^18 operations. */
static uint32_t inner_rounds(const struct set *s)
{
	return s->n >= (1u << 18) ? 1 : (1u << 18) / s->n;
}

static void wheel_round(const struct set *s, double *v)
{
	static struct droce_timer_wheel w;
	uint64_t t0, now = BASE, fired = 0, nx, sum = 0, ns[OP_COUNT] = {0};
	uint32_t i, k, inner = inner_rounds(s);

	for (k = 0; k < inner; k++) {
		droce_timer_wheel_init(&w, BASE, GRANULARITY);
		t0 = now_ns();
		for (i = 0; i < s->n; i++)
			droce_timer_arm(&w, &s->t[s->order[i]], BASE + s->first[i]);
		ns[OP_ARM] += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < s->n; i++)
			droce_timer_arm(&w, &s->t[s->order[i]], BASE + s->second[i]);
		ns[OP_REARM] += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < s->n; i++) {
			struct droce_timer *t = &s->t[s->order[s->n - 1 - i]];

			droce_timer_arm(&w, t, BASE + s->first[i]);
			droce_timer_cancel(&w, t);
		}
		ns[OP_PAIR] += now_ns() - t0;
		for (i = 0; i < s->n; i++)
			droce_timer_arm(&w, &s->t[s->order[i]], BASE + s->second[i]);
		t0 = now_ns();
		for (i = 0; i < s->n; i++)
			droce_timer_cancel(&w, &s->t[s->order[i]]);
		ns[OP_CANCEL] += now_ns() - t0;
	}
	for (i = 0; i < s->n; i++)
		droce_timer_arm(&w, &s->t[s->order[i]], BASE + s->first[i]);
	t0 = now_ns();
	for (i = 0; i < IDLE_RUNS; i++)
		sum += droce_timer_wheel_next(&w);
	ns[OP_NEXT] = now_ns() - t0;
	t0 = now_ns();
	for (i = 0; i < IDLE_RUNS; i++)
		sum += (uint64_t)droce_timer_wheel_run(&w, BASE, count_fire, &fired, UINT32_MAX);
	ns[OP_IDLE] = now_ns() - t0;
	for (k = 0; k < inner; k++) {
		if (k > 0)
			for (i = 0; i < s->n; i++)
				droce_timer_arm(&w, &s->t[s->order[i]], now + s->first[i]);
		t0 = now_ns();
		while ((nx = droce_timer_wheel_next(&w)) != UINT64_MAX) {
			now += nx;
			droce_timer_wheel_run(&w, now, count_fire, &fired, UINT32_MAX);
		}
		ns[OP_DRAIN] += now_ns() - t0;
	}
	if (fired != (uint64_t)s->n * inner)
		fail("the wheel did not fire every timer once");
	bench_moves = (double)w.cascaded / ((double)s->n * inner);
	for (k = 0; k < OP_COUNT; k++)
		v[k] = (double)ns[k] /
		       (double)(k == OP_IDLE || k == OP_NEXT ? IDLE_RUNS : (uint64_t)s->n * inner);
	bench_sink += sum;
}

static void heap_round(const struct set *s, struct heap *h, double *v)
{
	uint64_t t0, fired = 0, sum = 0, ns[OP_COUNT] = {0};
	uint32_t i, k, inner = inner_rounds(s);

	for (k = 0; k < inner; k++) {
		h->n = 0;
		memset(h->pos, 0, s->n * sizeof(h->pos[0]));
		t0 = now_ns();
		for (i = 0; i < s->n; i++)
			heap_arm(h, s->order[i], BASE + s->first[i]);
		ns[OP_ARM] += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < s->n; i++)
			heap_arm(h, s->order[i], BASE + s->second[i]);
		ns[OP_REARM] += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < s->n; i++) {
			uint32_t id = s->order[s->n - 1 - i];

			heap_arm(h, id, BASE + s->first[i]);
			heap_cancel(h, id);
		}
		ns[OP_PAIR] += now_ns() - t0;
		for (i = 0; i < s->n; i++)
			heap_arm(h, s->order[i], BASE + s->second[i]);
		t0 = now_ns();
		for (i = 0; i < s->n; i++)
			heap_cancel(h, s->order[i]);
		ns[OP_CANCEL] += now_ns() - t0;
	}
	for (i = 0; i < s->n; i++)
		heap_arm(h, s->order[i], BASE + s->first[i]);
	t0 = now_ns();
	for (i = 0; i < IDLE_RUNS; i++) {
		sum += heap_next(h, BASE);
		__asm__ volatile("" : : "r"(h) : "memory"); /* the call is made each time */
	}
	ns[OP_NEXT] = now_ns() - t0;
	t0 = now_ns();
	for (i = 0; i < IDLE_RUNS; i++) {
		sum += (uint64_t)heap_run_idle(h, BASE);
		__asm__ volatile("" : : "r"(h) : "memory");
	}
	ns[OP_IDLE] = now_ns() - t0;
	for (k = 0; k < inner; k++) {
		if (k > 0)
			for (i = 0; i < s->n; i++)
				heap_arm(h, s->order[i], BASE + s->first[i]);
		t0 = now_ns();
		while (h->n > 0) {
			uint64_t now = h->key[0];

			while (h->n > 0 && h->key[0] <= now) {
				heap_cancel(h, h->id[0]);
				fired++;
			}
		}
		ns[OP_DRAIN] += now_ns() - t0;
	}
	if (fired != (uint64_t)s->n * inner)
		fail("the heap did not fire every timer once");
	for (k = 0; k < OP_COUNT; k++)
		v[k] = (double)ns[k] /
		       (double)(k == OP_IDLE || k == OP_NEXT ? IDLE_RUNS : (uint64_t)s->n * inner);
	bench_sink += sum;
}

/* 1..64 us, uniform. */
static uint64_t expiry_short(void)
{
	return 1000 + rnd() % 63000;
}

/* A local ACK timeout 4.096 us * 2^(1..31), with up to as much again: log-uniform. */
static uint64_t expiry_acks(void)
{
	uint64_t t = 4096ull << (1 + rnd() % 31);

	return t + rnd() % t;
}

static void bench_set(const char *workload, uint64_t (*expiry)(void), uint32_t n, unsigned int reps)
{
	double wv[OP_COUNT][MAX_REPS], hv[OP_COUNT][MAX_REPS], v[OP_COUNT];
	struct set s = {.n = n};
	struct heap h;
	unsigned int r, k;
	uint32_t i;

	s.t = calloc(n, sizeof(*s.t));
	s.order = malloc(n * sizeof(*s.order));
	s.first = malloc(n * sizeof(*s.first));
	s.second = malloc(n * sizeof(*s.second));
	h.key = malloc(n * sizeof(*h.key));
	h.id = malloc(n * sizeof(*h.id));
	h.pos = malloc(n * sizeof(*h.pos));
	if (!s.t || !s.order || !s.first || !s.second || !h.key || !h.id || !h.pos) {
		fail("out of memory");
		goto out_free;
	}
	for (i = 0; i < n; i++) {
		droce_timer_init(&s.t[i], i);
		s.order[i] = i;
		s.first[i] = expiry();
		s.second[i] = expiry();
	}
	for (i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(rnd() % (i + 1)), x = s.order[i];

		s.order[i] = s.order[j];
		s.order[j] = x;
	}
	for (r = 0; r < reps; r++) {
		wheel_round(&s, v);
		for (k = 0; k < OP_COUNT; k++)
			wv[k][r] = v[k];
		heap_round(&s, &h, v);
		for (k = 0; k < OP_COUNT; k++)
			hv[k][r] = v[k];
	}
	printf("\n%s, %u timers (%zu KiB of timers), ns per operation:\n", workload, n,
	       n * sizeof(*s.t) / 1024);
	printf("  %-18s %8s %8s %8s\n", "", "wheel", "heap", "heap/wheel");
	for (k = 0; k < OP_COUNT; k++) {
		double a = median(wv[k], reps), b = median(hv[k], reps);

		printf("  %-18s %8.1f %8.1f %8.1fx\n", op_name[k], a, b, b / a);
	}
	printf("  (the wheel's drain moved each timer down %.2f levels on average)\n", bench_moves);
out_free:
	free(h.pos);
	free(h.id);
	free(h.key);
	free(s.second);
	free(s.first);
	free(s.order);
	free(s.t);
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = {4096, 1u << 20};
	unsigned int reps = 5, i;
	int opt;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r' || (reps = (unsigned int)atoi(optarg)) < 1 || reps > MAX_REPS) {
			fprintf(stderr, "usage: %s [-r repetitions (1..%d)]\n", argv[0], MAX_REPS);
			return 2;
		}
	}
	printf("bench_timer: ticks are ns, %u-tick slots, %u levels x %u slots, %zu-byte timers, "
	       "%zu-byte wheel; median of %u\n",
	       GRANULARITY, DROCE_TIMER_LEVELS, DROCE_TIMER_SLOTS, sizeof(struct droce_timer),
	       sizeof(struct droce_timer_wheel), reps);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		bench_set("short (1..64 us)", expiry_short, sizes[i], reps);
		bench_set("acks (8 us .. 2.4 h)", expiry_acks, sizes[i], reps);
	}
	return bench_ok ? 0 : 1;
}
