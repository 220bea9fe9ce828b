/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_raw: the raw DPDK limit droce-perf --loopback is measured against
 * (doc/performance.md). The EAL starts as droce's embedded engine starts it:
 * its own file prefix, main lcore 0 on every CPU, the engine lcore on the last
 * CPU, hugepages only when 64 are free (else --no-huge -m 256), no PCI scan;
 * the application's thread then leaves the engine's CPU, as droce-perf's does.
 * The engine lcore sleeps when idle as droce's does (DROCE_IDLE_SLEEP_US).
 *
 * usage: bench_raw bw|lat [-s SIZE[,SIZE...]] [-n ITERS] [-Q CQ_MOD] [-t TX_DEPTH] [-j JSON]
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "raw.h"

#define POOL_MBUFS 16383u
#define POOL_CACHE 256u
#define DATA_ROOM  (RTE_PKTMBUF_HEADROOM + RAW_MTU + 128u)

struct opts {
	bool lat;
	uint32_t sizes[RAW_MAX_SIZES];
	unsigned int n_sizes;
	uint64_t iters;
	uint32_t cq_mod, tx_depth, idle_sleep_us;
	const char *json;
};

static char file_prefix[64];

static long free_hugepages(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The EAL's runtime folder of this process's prefix, where DPDK puts it. */
static void runtime_dir_remove(void)
{
	const char *run = getuid() == 0 ? "/var/run" : getenv("XDG_RUNTIME_DIR");
	char dir[320];

	snprintf(dir, sizeof(dir), "%.150s/dpdk/%s", run != NULL ? run : "/tmp", file_prefix);
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static int eal_start(unsigned int *engine_lcore)
{
	char cpus[256] = "", lcores[300], *end = cpus;
	char *argv[16];
	int argc = 0, last = -1;
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0) {
		CPU_ZERO(&set);
		CPU_SET(0, &set);
	}
	for (int cpu = 0; cpu < CPU_SETSIZE && end < cpus + sizeof(cpus) - 8; cpu++)
		if (CPU_ISSET(cpu, &set)) {
			end += snprintf(end, (size_t)(cpus + sizeof(cpus) - end), "%s%d",
					end == cpus ? "" : ",", cpu);
			last = cpu;
		}
	snprintf(lcores, sizeof(lcores), "--lcores=0@(%s),1@%d", cpus, last);
	snprintf(file_prefix, sizeof(file_prefix), "droce-raw-%d", (int)getpid());
	argv[argc++] = "bench_raw";
	argv[argc++] = (char[80]){0};
	snprintf(argv[argc - 1], 80, "--file-prefix=%s", file_prefix);
	argv[argc++] = "--no-telemetry";
	argv[argc++] = "--log-level=error";
	argv[argc++] = lcores;
	if (free_hugepages() >= 64) {
		argv[argc++] = "--huge-unlink";
	} else {
		argv[argc++] = "--no-huge";
		argv[argc++] = "-m";
		argv[argc++] = "256";
	}
	argv[argc++] = "--no-pci";
	argv[argc] = NULL;
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "bench_raw: rte_eal_init: %s\n", rte_strerror(rte_errno));
		runtime_dir_remove();
		return -1;
	}
	*engine_lcore = 1;
	/* the engine polls on the last CPU: this thread keeps off it when it has another */
	if (CPU_COUNT(&set) >= 2) {
		CPU_CLR(last, &set);
		(void)sched_setaffinity(0, sizeof(set), &set);
	}
	return 0;
}

static int ctx_open(struct raw_ctx *c, const struct opts *o)
{
	uint64_t max = 0, buf_len;
	char name[RTE_RING_NAMESIZE];

	for (unsigned int i = 0; i < o->n_sizes; i++)
		max = o->sizes[i] > max ? o->sizes[i] : max;
	/* bw: the slots of RAW_BUF_CAP; lat: a send half and a receive half */
	buf_len = 2 * max > RAW_BUF_CAP ? 2 * max : RAW_BUF_CAP;
	c->cq_mod = o->cq_mod;
	c->tx_depth = o->tx_depth;
	c->idle_sleep_us = o->idle_sleep_us;
	c->pool = rte_pktmbuf_pool_create("raw_pool", POOL_MBUFS, POOL_CACHE, 0, DATA_ROOM,
					  (int)rte_socket_id());
	if (c->pool == NULL)
		return -1;
	for (unsigned int i = 0; i < RAW_ENDS; i++) {
		struct raw_end *e = &c->end[i];

		snprintf(name, sizeof(name), "raw_sq%u", i);
		e->sq = rte_ring_create_elem(name, sizeof(struct raw_wqe), 1024,
					     (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "raw_cq%u", i);
		e->cq = rte_ring_create_elem(name, sizeof(struct raw_cqe), 1024,
					     (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
		/* the link: the size of droce's ring pair (droce_port_ring_pair) */
		snprintf(name, sizeof(name), "raw_link%u", i);
		e->link = rte_ring_create(name, 4096, (int)rte_socket_id(),
					  RING_F_SP_ENQ | RING_F_SC_DEQ);
		e->buf = aligned_alloc(64, buf_len);
		if (e->sq == NULL || e->cq == NULL || e->link == NULL || e->buf == NULL)
			return -1;
		memset(e->buf, 0, buf_len);
		e->buf_len = buf_len;
		raw_end_template(e, i);
	}
	return 0;
}

static int parse_sizes(struct opts *o, char *arg)
{
	char *save = NULL;

	o->n_sizes = 0;
	for (char *t = strtok_r(arg, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v = strtoul(t, &end, 0);

		if (*end != '\0' || v == 0 || v > (1u << 24) || o->n_sizes == RAW_MAX_SIZES)
			return -1;
		o->sizes[o->n_sizes++] = (uint32_t)v;
	}
	return o->n_sizes > 0 ? 0 : -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_raw bw|lat [-s SIZE[,SIZE...]] [-n ITERS] [-Q CQ_MOD] "
			"[-t TX_DEPTH] [-j JSON_FILE]\n");
	return 2;
}

static int parse(int argc, char **argv, struct opts *o)
{
	int ch;

	if (argc < 2 || (strcmp(argv[1], "bw") != 0 && strcmp(argv[1], "lat") != 0))
		return -1;
	*o = (struct opts){.lat = strcmp(argv[1], "lat") == 0, .cq_mod = 100, .tx_depth = 128};
	o->sizes[o->n_sizes++] = o->lat ? 64 : 65536;
	o->iters = o->lat ? 100000 : 1000000;
	/* the engine's idle sleep, as droce's embedded engine reads it */
	o->idle_sleep_us = getenv("DROCE_IDLE_SLEEP_US") != NULL
				   ? (uint32_t)strtoul(getenv("DROCE_IDLE_SLEEP_US"), NULL, 0)
				   : 50;
	optind = 2;
	while ((ch = getopt(argc, argv, "s:n:Q:t:j:")) != -1) {
		switch (ch) {
		case 's':
			if (parse_sizes(o, optarg) != 0)
				return -1;
			break;
		case 'n':
			o->iters = strtoull(optarg, NULL, 0);
			break;
		case 'Q':
			o->cq_mod = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 't':
			o->tx_depth = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'j':
			o->json = optarg;
			break;
		default:
			return -1;
		}
	}
	/* the send ring holds what is outstanding */
	if (o->iters < 5 || o->cq_mod == 0 || o->tx_depth == 0 || o->tx_depth > 1000 ||
	    o->cq_mod > o->tx_depth || optind != argc)
		return -1;
	return 0;
}

static int run(struct raw_ctx *c, const struct opts *o, FILE *json)
{
	int rc = 0;

	if (json != NULL)
		fprintf(json,
			"{\n  \"test\": \"raw_write_%s\",\n  \"cq_mod\": %u,\n  \"tx_depth\": %u,\n"
			"  \"results\": [\n",
			o->lat ? "lat" : "bw", o->cq_mod, o->tx_depth);
	printf(o->lat ? " #bytes #iterations  t_min[usec]  t_typical[usec]  99%%[usec]  "
			"99.9%%[usec]\n"
		      : " #bytes #iterations  MsgRate[Mpps]  BW[Gb/sec]\n");
	for (unsigned int i = 0; i < o->n_sizes && rc == 0; i++) {
		const char *sep = i + 1 < o->n_sizes ? "," : "";

		if (o->lat) {
			struct raw_lat_result r;

			rc = raw_lat_run(c, o->sizes[i], o->iters, &r);
			if (rc != 0)
				break;
			printf(" %-6u %-11llu  %-11.2f  %-15.2f  %-9.2f  %.2f\n", r.size,
			       (unsigned long long)r.iters, r.t_min, r.t_median, r.t_p99, r.t_p999);
			if (json != NULL)
				fprintf(json,
					"    {\"bytes\": %u, \"iterations\": %llu, \"t_min\": "
					"%.3f, "
					"\"t_typical\": %.3f, \"p99\": %.3f, \"p99_9\": %.3f, "
					"\"t_max\": %.3f}%s\n",
					r.size, (unsigned long long)r.iters, r.t_min, r.t_median,
					r.t_p99, r.t_p999, r.t_max, sep);
		} else {
			struct raw_bw_result r;

			rc = raw_bw_run(c, o->sizes[i], o->iters, &r);
			if (rc != 0)
				break;
			printf(" %-6u %-11llu  %-13.6f  %.2f\n", r.size,
			       (unsigned long long)r.iters, r.mpps, r.gbits);
			if (json != NULL)
				fprintf(json,
					"    {\"bytes\": %u, \"iterations\": %llu, \"msg_rate\": "
					"%.6f, "
					"\"bw_gbits\": %.3f}%s\n",
					r.size, (unsigned long long)r.iters, r.mpps, r.gbits, sep);
		}
	}
	if (json != NULL)
		fprintf(json,
			"  ],\n  \"errors\": {\"bad_icrc\": %llu, \"bad_psn\": %llu, "
			"\"bad_hdr\": %llu, \"bad_rkey\": %llu, \"no_mbuf\": %llu}\n}\n",
			(unsigned long long)c->stats.bad_icrc, (unsigned long long)c->stats.bad_psn,
			(unsigned long long)c->stats.bad_hdr, (unsigned long long)c->stats.bad_rkey,
			(unsigned long long)c->stats.no_mbuf);
	return rc;
}

int main(int argc, char **argv)
{
	static struct raw_ctx c;
	struct opts o;
	FILE *json = NULL;
	int rc;

	if (parse(argc, argv, &o) != 0)
		return usage();
	if (eal_start(&c.engine_lcore) != 0)
		return 1;
	rc = ctx_open(&c, &o);
	if (rc != 0)
		fprintf(stderr, "bench_raw: set-up failed: %s\n", rte_strerror(rte_errno));
	if (rc == 0 && o.json != NULL && (json = fopen(o.json, "w")) == NULL) {
		fprintf(stderr, "bench_raw: %s: %s\n", o.json, strerror(errno));
		rc = -1;
	}
	if (rc == 0)
		rc = rte_eal_remote_launch(raw_engine_lcore, &c, c.engine_lcore);
	if (rc == 0) {
		rc = run(&c, &o, json);
		__atomic_store_n(&c.stop, true, __ATOMIC_RELAXED);
		rte_eal_mp_wait_lcore();
	}
	if (json != NULL && fclose(json) != 0)
		rc = -1;
	/* frames the responder dropped mean the baseline did less than its figures claim */
	if (c.stats.bad_icrc | c.stats.bad_psn | c.stats.bad_hdr | c.stats.bad_rkey) {
		fprintf(stderr,
			"bench_raw: dropped frames: %llu bad ICRC, %llu bad PSN, %llu bad "
			"header, %llu bad rkey\n",
			(unsigned long long)c.stats.bad_icrc, (unsigned long long)c.stats.bad_psn,
			(unsigned long long)c.stats.bad_hdr, (unsigned long long)c.stats.bad_rkey);
		rc = -1;
	}
	rte_eal_cleanup();
	runtime_dir_remove();
	return rc == 0 ? 0 : 1;
}
