/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf: perftest's bandwidth and latency tests on droce, both ends in
 * one process (--loopback) over droce's back-to-back link, or one end against
 * perftest or droce-perf on another host (twohost.c). Exit status 0 when
 * every test ran, 1 when a verbs call, a completion, the exchange or --check
 * failed, 2 on a usage error.
 */
#include <stdlib.h>
#include <string.h>

#include "droce_perf.h"

/* perftest warns when the CPU frequency may change under the test; -F silences it. */
static void warn_cpu_freq(const struct perf_opts *o)
{
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "r");
	char gov[64] = "";

	if (f == NULL)
		return;
	if (fgets(gov, sizeof(gov), f) != NULL)
		gov[strcspn(gov, "\n")] = '\0';
	fclose(f);
	if (!o->cpu_freq_ok && strcmp(gov, "performance") != 0)
		fprintf(stderr,
			" Warning: CPU frequency governor is '%s', not 'performance': figures may "
			"vary (-F silences this)\n",
			gov);
}

/* The message sizes of the run: -s, or 2 .. max for -a (UD: up to the MTU). */
unsigned int perf_sizes(const struct perf_ctx *c, uint32_t *sizes, unsigned int cap)
{
	uint64_t max = c->o->max_size;
	unsigned int n = 0;

	if (!c->o->all) {
		sizes[0] = c->o->size ? (uint32_t)c->o->size : 128u << c->mtu;
		return 1;
	}
	if (c->o->qp_type == IBV_QPT_UD && max > (128u << c->mtu))
		max = 128u << c->mtu;
	for (uint64_t s = 2; s <= max && n < cap; s *= 2)
		sizes[n++] = (uint32_t)s;
	return n;
}

/* -b: a row of both directions' sums, as perftest prints (--report-both: each's after) */
static int run_bw(struct perf_ctx *c, uint32_t size, struct perf_bw_result *own,
		  struct perf_bw_result *other)
{
	struct perf_bw_result r[2];

	if (perf_bw_run(c, size, NULL, NULL, r) != 0)
		return -1;
	*own = r[0];
	if (c->o->bidirectional) {
		*other = r[1];
		perf_report_bw_both(c, own, other);
	} else {
		perf_report_bw(c, own);
	}
	return 0;
}

static int run_tests(struct perf_ctx *c)
{
	struct perf_bw_result bw[32], other[32];
	struct perf_lat_result lat[32];
	uint32_t sizes[32];
	unsigned int n = perf_sizes(c, sizes, 32);
	bool bidir = c->o->kind == PERF_BW && c->o->bidirectional;

	perf_report_header(c);
	perf_report_addresses(c);
	perf_report_table_title(c);
	for (unsigned int i = 0; i < n; i++) {
		if (c->o->kind == PERF_BW) {
			if (run_bw(c, sizes[i], &bw[i], &other[i]) != 0)
				return -1;
		} else {
			if (perf_lat_run(c, sizes[i], &lat[i]) != 0)
				return -1;
			perf_report_lat(c, &lat[i]);
		}
	}
	if (bidir && c->o->report_both)
		perf_report_bw_each(c, bw, other, n);
	perf_report_end(c);
	if (c->o->json_path != NULL &&
	    perf_report_json(c, c->o->kind == PERF_BW ? bw : NULL, bidir ? other : NULL,
			     c->o->kind == PERF_LAT ? lat : NULL, n) != 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct perf_opts o;
	struct perf_ctx c;
	int rc = perf_cli_parse(argc, argv, &o);

	if (rc < 0)
		return PERF_EXIT_OK; /* -h, -V */
	if (rc != 0)
		return rc;
	memset(&c, 0, sizeof(c));
	c.o = &o;
	srand48((long)perf_now_ns());
	warn_cpu_freq(&o);
	if (!o.loopback) {
		rc = perf_twohost_run(&c) == 0 ? PERF_EXIT_OK : PERF_EXIT_FAIL;
		fflush(stdout);
		perf_twohost_close(&c);
		return rc;
	}
	rc = perf_loopback_open(&c) == 0 && run_tests(&c) == 0 ? PERF_EXIT_OK : PERF_EXIT_FAIL;
	fflush(stdout);
	perf_loopback_close(&c);
	return rc;
}
