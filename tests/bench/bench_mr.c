/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cost of the lib/mem key table: registration and deregistration of 4 KiB, 2 MiB and 1 GiB
 * ranges (O(1): the same cost whatever the length, nothing is walked or touched; the 1 GiB is
 * an mmap(MAP_NORESERVE) that is never touched), window binds, and the data-path lookups with
 * random keys in a small (cache-resident) and a large table, against a plain load of the same
 * entry as the baseline, alone and with a writer thread changing other entries.
 *
 * Figures only, nothing asserts on time. The exit status is non-zero when an operation fails.
 *
 * Usage: bench_mr [-r repetitions (1..31)]
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "droce_mr.h"

#define GIB       (1ull << 30)
#define CAPACITY  65536
#define REG_BATCH 4096
#define LOOKUPS   (1u << 20)
#define PD        1
#define QPN       0x11
#define MAX_REPS  31

/* Results end here so that no lookup can be optimised away. */
static volatile uintptr_t bench_sink;
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

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fail(const char *what, int ret)
{
	if (bench_ok)
		fprintf(stderr, "bench_mr: %s failed: %d\n", what, ret);
	bench_ok = false;
}

/* ---------------------------------------------------------- registration */

struct reg_cost {
	double reg, dereg, pair;
};

/* Median ns of reg, of dereg (batches of REG_BATCH live MRs) and of a reg+dereg pair. */
static struct reg_cost time_reg(struct droce_mr_table *t, uint8_t *base, uint64_t len,
				unsigned int reps)
{
	static uint32_t keys[REG_BATCH];
	const unsigned int acc =
		DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ;
	double reg[MAX_REPS], dereg[MAX_REPS], pair[MAX_REPS];
	struct droce_mr_keys k;
	struct reg_cost c;
	unsigned int r, i;
	uint64_t t0;
	int ret;

	for (r = 0; r < reps; r++) {
		t0 = now_ns();
		for (i = 0; i < REG_BATCH; i++) {
			ret = droce_mr_reg(t, PD, base, len, (uint64_t)(uintptr_t)base, acc, 0, &k);
			if (ret != 0)
				fail("reg", ret);
			keys[i] = k.lkey;
		}
		reg[r] = (double)(now_ns() - t0) / REG_BATCH;
		t0 = now_ns();
		for (i = 0; i < REG_BATCH; i++) {
			ret = droce_mr_dereg(t, keys[i]);
			if (ret != 0)
				fail("dereg", ret);
		}
		dereg[r] = (double)(now_ns() - t0) / REG_BATCH;
		t0 = now_ns();
		for (i = 0; i < REG_BATCH; i++) {
			ret = droce_mr_reg(t, PD, base, len, (uint64_t)(uintptr_t)base, acc, 0, &k);
			if (ret == 0)
				ret = droce_mr_dereg(t, k.lkey);
			if (ret != 0)
				fail("reg+dereg", ret);
		}
		pair[r] = (double)(now_ns() - t0) / REG_BATCH;
	}
	c.reg = median(reg, reps);
	c.dereg = median(dereg, reps);
	c.pair = median(pair, reps);
	return c;
}

/* Median ns of a type-2 bind + invalidate pair and of a type-1 bind. */
static void time_windows(struct droce_mr_table *t, uint8_t *base, unsigned int reps,
			 double *bind2_inv, double *bind1)
{
	double v2[MAX_REPS], v1[MAX_REPS];
	struct droce_mw_bind_info b = {.addr = (uint64_t)(uintptr_t)base + 4096,
				       .length = 1 << 20,
				       .access = DROCE_ACCESS_REMOTE_READ |
						 DROCE_ACCESS_REMOTE_WRITE};
	struct droce_mr_keys k;
	uint32_t h1, h2, key;
	unsigned int r, i;
	uint64_t t0;
	int ret;

	ret = droce_mr_reg(t, PD, base, GIB, (uint64_t)(uintptr_t)base,
			   DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_MW_BIND, 0, &k);
	if (ret == 0)
		ret = droce_mw_alloc(t, PD, DROCE_MW_TYPE_2, &h2);
	if (ret == 0)
		ret = droce_mw_alloc(t, PD, DROCE_MW_TYPE_1, &h1);
	if (ret != 0) {
		fail("window setup", ret);
		return;
	}
	b.mr_lkey = k.lkey;
	for (r = 0; r < reps; r++) {
		t0 = now_ns();
		for (i = 0; i < REG_BATCH; i++) {
			key = droce_mr_key_with_byte(h2, (uint8_t)i);
			ret = droce_mw_bind_type2(t, h2, PD, QPN, key, &b);
			if (ret == 0)
				ret = droce_mr_invalidate_local(t, key, PD);
			if (ret != 0)
				fail("bind2+invalidate", ret);
		}
		v2[r] = (double)(now_ns() - t0) / REG_BATCH;
		t0 = now_ns();
		for (i = 0; i < REG_BATCH; i++) {
			ret = droce_mw_bind_type1(t, h1, PD, &b, &key);
			if (ret != 0)
				fail("bind1", ret);
		}
		v1[r] = (double)(now_ns() - t0) / REG_BATCH;
	}
	*bind2_inv = median(v2, reps);
	*bind1 = median(v1, reps);
	droce_mw_dealloc(t, h1);
	droce_mw_dealloc(t, h2);
	droce_mr_dereg(t, k.lkey);
}

/* ---------------------------------------------------------- lookups */

struct probe {
	uint32_t key;
	uint64_t va;
};

enum lookup_kind { LK_BASELINE, LK_LOOKUP, LK_LOCAL, LK_REMOTE, LK_STALE, LK_MAX };

static const char *const lookup_name[LK_MAX] = {"plain load", "lookup", "check_local",
						"check_remote", "stale key"};

/* One pass over the probes; the baseline reads the same entry with a plain load. */
static uint64_t run_probes(const struct droce_mr_table *t, const struct probe *p, unsigned int n,
			   enum lookup_kind kind)
{
	const unsigned int rw = DROCE_ACCESS_REMOTE_WRITE;
	struct droce_mr_info info = {0};
	uintptr_t acc = 0;
	unsigned int i, bad = 0;
	void *h = NULL;
	uint64_t t0 = now_ns();

	switch (kind) {
	case LK_BASELINE:
		for (i = 0; i < n; i++)
			acc += *(volatile const uint64_t *)&t
					->entries[droce_mr_key_index(t, p[i].key)]
					.addr;
		break;
	case LK_LOOKUP:
		for (i = 0; i < n; i++) {
			bad += droce_mr_lookup(t, p[i].key, &info) != DROCE_MR_OK;
			acc += info.addr;
		}
		break;
	case LK_LOCAL:
		for (i = 0; i < n; i++) {
			bad += droce_mr_check_local(t, p[i].key, PD, p[i].va, 64,
						    DROCE_ACCESS_LOCAL_WRITE, &h) != DROCE_MR_OK;
			acc += (uintptr_t)h;
		}
		break;
	case LK_REMOTE:
		for (i = 0; i < n; i++) {
			bad += droce_mr_check_remote(t, p[i].key, PD, QPN, p[i].va, 4096, rw, &h) !=
			       DROCE_MR_OK;
			acc += (uintptr_t)h;
		}
		break;
	case LK_STALE:
		for (i = 0; i < n; i++) {
			bad += droce_mr_check_local(t, p[i].key ^ 0x80, PD, p[i].va, 64, 0, &h) ==
			       DROCE_MR_OK;
			acc += (uintptr_t)h;
		}
		break;
	default:
		break;
	}
	bench_sink ^= acc;
	if (bad != 0)
		fail(lookup_name[kind], (int)bad);
	return now_ns() - t0;
}

/* Median ns per probe of each kind, over @p reps passes of LOOKUPS random probes. */
static void time_lookups(const struct droce_mr_table *t, const struct probe *p, unsigned int reps,
			 double out[LK_MAX])
{
	double v[MAX_REPS];
	unsigned int r, k;

	for (k = 0; k < LK_MAX; k++) {
		run_probes(t, p, LOOKUPS, (enum lookup_kind)k); /* warm up */
		for (r = 0; r < reps; r++)
			v[r] = (double)run_probes(t, p, LOOKUPS, (enum lookup_kind)k) / LOOKUPS;
		out[k] = median(v, reps);
	}
}

/* Register @p live 1 GiB MRs and LOOKUPS random probes over them. */
static int setup_lookups(struct droce_mr_table *t, uint8_t *base, unsigned int live, uint32_t *keys,
			 struct probe *p)
{
	const unsigned int acc = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE;
	uint64_t s = 0x9e3779b97f4a7c15ull, x;
	struct droce_mr_keys k;
	unsigned int i;
	int ret;

	for (i = 0; i < live; i++) {
		ret = droce_mr_reg(t, PD, base, GIB, (uint64_t)(uintptr_t)base, acc, 0, &k);
		if (ret != 0)
			return ret;
		keys[i] = k.lkey;
	}
	for (i = 0; i < LOOKUPS; i++) {
		x = xorshift(&s);
		p[i].key = keys[x % live];
		p[i].va = (uint64_t)(uintptr_t)base + ((x >> 32) % (GIB - 4096));
	}
	return 0;
}

static void drop_lookups(struct droce_mr_table *t, const uint32_t *keys, unsigned int live)
{
	unsigned int i;

	for (i = 0; i < live; i++)
		if (droce_mr_dereg(t, keys[i]) != 0)
			fail("dereg", -EINVAL);
}

/* A control thread rereg'ing its own MRs without pause, to time readers next to a writer. */
struct churn {
	struct droce_mr_table *t;
	uint8_t *base;
	int stop;
	uint64_t ops;
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	uint32_t keys[64];
	struct droce_mr_keys k;
	unsigned int i;

	for (i = 0; i < 64; i++) {
		if (droce_mr_reg(c->t, PD + 1, c->base, GIB, 0, 0, 0, &k) != 0)
			return NULL;
		keys[i] = k.lkey;
	}
	for (i = 0; !__atomic_load_n(&c->stop, __ATOMIC_RELAXED); i = (i + 1) % 64) {
		if (droce_mr_rereg(c->t, keys[i], DROCE_MR_REREG_ACCESS, 0, NULL, 0, 0,
				   (unsigned int)(c->ops & 1), &k) != 0)
			break;
		keys[i] = k.lkey;
		c->ops++;
	}
	for (i = 0; i < 64; i++)
		droce_mr_dereg(c->t, keys[i]);
	return NULL;
}

/* ---------------------------------------------------------- main */

static void print_lookups(const char *what, const double v[LK_MAX])
{
	unsigned int k;

	printf("  %-26s", what);
	for (k = 0; k < LK_MAX; k++)
		printf(" %7.1f (%4.1fx)", v[k], v[k] / v[LK_BASELINE]);
	printf("\n");
}

int main(int argc, char **argv)
{
	static const struct {
		uint64_t len;
		const char *name;
	} sizes[] = {{4096, "4 KiB"}, {2u << 20, "2 MiB"}, {GIB, "1 GiB"}};
	static uint32_t keys[CAPACITY];
	static struct probe probes[LOOKUPS];
	double lk[LK_MAX], bind2_inv = 0, bind1 = 0;
	struct droce_mr_table t;
	unsigned int reps = 5, i, k;
	struct reg_cost c;
	struct churn ch;
	pthread_t th;
	uint8_t *base;
	int opt, ret;

	while ((opt = getopt(argc, argv, "r:h")) != -1) {
		switch (opt) {
		case 'r':
			reps = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: %s [-r repetitions (1..%d)]\n", argv[0], MAX_REPS);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (reps == 0 || reps > MAX_REPS) {
		fprintf(stderr, "usage: %s [-r repetitions (1..%d)]\n", argv[0], MAX_REPS);
		return 2;
	}

	/* 1 GiB of address space, never touched: registration must not need the pages */
	base = mmap(NULL, GIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		    -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap 1 GiB");
		return 1;
	}
	ret = droce_mr_table_init(&t, CAPACITY, NULL);
	if (ret != 0) {
		fprintf(stderr, "table init: %d\n", ret);
		return 1;
	}
	printf("bench_mr: key table of %u entries (%zu bytes each, %zu KiB), %ld cpus, median of "
	       "%u runs\n",
	       CAPACITY, sizeof(struct droce_mr_entry), droce_mr_table_memsize(CAPACITY) >> 10,
	       sysconf(_SC_NPROCESSORS_ONLN), reps);

	printf("\nregistration, ns per operation (batches of %u live MRs):\n", REG_BATCH);
	printf("  %-8s %10s %10s %16s\n", "length", "reg", "dereg", "reg+dereg pair");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		c = time_reg(&t, base, sizes[i].len, reps);
		printf("  %-8s %10.1f %10.1f %16.1f\n", sizes[i].name, c.reg, c.dereg, c.pair);
	}

	time_windows(&t, base, reps, &bind2_inv, &bind1);
	printf("\nwindows, ns per operation:\n");
	printf("  type-2 bind + local invalidate pair %8.1f\n", bind2_inv);
	printf("  type-1 bind (rebind)                %8.1f\n", bind1);

	printf("\nlookups, ns per random key (x: ratio to the plain load of the same entry):\n");
	printf("  %-26s", "table");
	for (k = 0; k < LK_MAX; k++)
		printf(" %15s", lookup_name[k]);
	printf("\n");
	ret = setup_lookups(&t, base, 256, keys, probes);
	if (ret != 0)
		fail("setup 256", ret);
	time_lookups(&t, probes, reps, lk);
	print_lookups("256 MRs (16 KiB, cached)", lk);

	memset(&ch, 0, sizeof(ch));
	ch.t = &t;
	ch.base = base;
	if (pthread_create(&th, NULL, churn_main, &ch) == 0) {
		time_lookups(&t, probes, reps, lk);
		__atomic_store_n(&ch.stop, 1, __ATOMIC_RELAXED);
		pthread_join(th, NULL);
		print_lookups("256 MRs + writer thread", lk);
	}
	drop_lookups(&t, keys, 256);

	ret = setup_lookups(&t, base, CAPACITY - 64, keys, probes);
	if (ret != 0)
		fail("setup full table", ret);
	time_lookups(&t, probes, reps, lk);
	print_lookups("65472 MRs (4 MiB, random)", lk);
	drop_lookups(&t, keys, CAPACITY - 64);
	printf("  (writer thread: %lu rereg calls during its run)\n", (unsigned long)ch.ops);

	droce_mr_table_fini(&t);
	munmap(base, GIB);
	return bench_ok ? 0 : 1;
}
