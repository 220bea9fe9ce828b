/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The order of perftest 4.5's out-of-band messages, and of the local steps
 * between them, for each kind of test. Both sides walk the same list; a
 * local step names who takes it. Every flow starts with the version, the page
 * and cache line sizes and the MTU; then, in perftest's order:
 *
 *   one-sided bw (write, read, atomic): KEYS, connect, KEYS, SYNC, the
 *       client's runs, SYNC, REPORT, SYNC, DONE
 *   send_bw:  KEYS, connect, SYNC, KEYS, per size (server posts receives,
 *       SYNC, run, and with -a one more SYNC), SYNC, DONE
 *   write_lat: SYNC, KEYS, connect, KEYS, SYNC, runs; no closing exchange
 *   send_lat: KEYS, connect, SYNC, KEYS, per size (receives, SYNC, run),
 *       SYNC, DONE
 *   one-sided lat (read, atomic): SYNC, KEYS, connect, KEYS, SYNC, the
 *       client's runs, SYNC, DONE
 *
 * With -b both sides run every size and trade their rows (REPORT) right after
 * it, and nobody waits for the client's last row at the end:
 *
 *   one-sided bw: KEYS, connect, KEYS, SYNC, per size (SYNC, run, with -a
 *       one more SYNC, REPORT), SYNC, DONE
 *   send_bw: KEYS, connect, SYNC, KEYS, per size (both post receives, SYNC,
 *       run, REPORT, with -a one more SYNC), SYNC, DONE
 */
#include "perf_oob.h"

#define BOTH (PERF_OOB_CLIENT | PERF_OOB_SERVER)

struct plan {
	struct perf_oob_step *out;
	unsigned int cap, n;
};

static void add(struct plan *p, enum perf_oob_step_kind kind, unsigned int who,
		unsigned int size_index)
{
	if (p->n < p->cap)
		p->out[p->n] = (struct perf_oob_step){kind, who, size_index};
	p->n++;
}

static void msg(struct plan *p, enum perf_oob_step_kind kind)
{
	add(p, kind, BOTH, 0);
}

static void runs(struct plan *p, unsigned int who, unsigned int n_sizes)
{
	for (unsigned int i = 0; i < n_sizes; i++)
		add(p, PERF_OOB_RUN, who, i);
}

unsigned int perf_oob_plan(enum perf_oob_flow flow, unsigned int n_sizes, bool all,
			   struct perf_oob_step *out, unsigned int cap)
{
	struct plan p = {.out = out, .cap = cap};

	msg(&p, PERF_OOB_VERSION);
	msg(&p, PERF_OOB_PAGE_SIZE);
	msg(&p, PERF_OOB_CACHE_LINE);
	msg(&p, PERF_OOB_MTU);
	switch (flow) {
	case PERF_OOB_FLOW_BW_ONE_SIDED:
		msg(&p, PERF_OOB_KEYS);
		add(&p, PERF_OOB_CONNECT, BOTH, 0);
		msg(&p, PERF_OOB_KEYS);
		msg(&p, PERF_OOB_SYNC);
		runs(&p, PERF_OOB_CLIENT, n_sizes);
		msg(&p, PERF_OOB_SYNC);
		msg(&p, PERF_OOB_REPORT);
		break;
	case PERF_OOB_FLOW_SEND_BW:
	case PERF_OOB_FLOW_SEND_LAT:
		msg(&p, PERF_OOB_KEYS);
		add(&p, PERF_OOB_CONNECT, BOTH, 0);
		msg(&p, PERF_OOB_SYNC);
		msg(&p, PERF_OOB_KEYS);
		for (unsigned int i = 0; i < n_sizes; i++) {
			/* the receiver's receives are posted before the sender may send */
			add(&p, PERF_OOB_RECV,
			    flow == PERF_OOB_FLOW_SEND_BW ? PERF_OOB_SERVER : BOTH, i);
			msg(&p, PERF_OOB_SYNC);
			add(&p, PERF_OOB_RUN, BOTH, i);
			if (flow == PERF_OOB_FLOW_SEND_BW && all)
				msg(&p, PERF_OOB_SYNC);
		}
		break;
	case PERF_OOB_FLOW_BW_ONE_SIDED_BIDIR:
		msg(&p, PERF_OOB_KEYS);
		add(&p, PERF_OOB_CONNECT, BOTH, 0);
		msg(&p, PERF_OOB_KEYS);
		msg(&p, PERF_OOB_SYNC);
		for (unsigned int i = 0; i < n_sizes; i++) {
			msg(&p, PERF_OOB_SYNC);
			add(&p, PERF_OOB_RUN, BOTH, i);
			if (all)
				msg(&p, PERF_OOB_SYNC);
			add(&p, PERF_OOB_REPORT, BOTH, i);
		}
		break;
	case PERF_OOB_FLOW_SEND_BW_BIDIR:
		msg(&p, PERF_OOB_KEYS);
		add(&p, PERF_OOB_CONNECT, BOTH, 0);
		msg(&p, PERF_OOB_SYNC);
		msg(&p, PERF_OOB_KEYS);
		for (unsigned int i = 0; i < n_sizes; i++) {
			add(&p, PERF_OOB_RECV, BOTH, i);
			msg(&p, PERF_OOB_SYNC);
			add(&p, PERF_OOB_RUN, BOTH, i);
			add(&p, PERF_OOB_REPORT, BOTH, i);
			if (all)
				msg(&p, PERF_OOB_SYNC);
		}
		break;
	case PERF_OOB_FLOW_WRITE_LAT:
	case PERF_OOB_FLOW_LAT_ONE_SIDED:
		msg(&p, PERF_OOB_SYNC);
		msg(&p, PERF_OOB_KEYS);
		add(&p, PERF_OOB_CONNECT, BOTH, 0);
		msg(&p, PERF_OOB_KEYS);
		msg(&p, PERF_OOB_SYNC);
		runs(&p, flow == PERF_OOB_FLOW_WRITE_LAT ? BOTH : PERF_OOB_CLIENT, n_sizes);
		if (flow == PERF_OOB_FLOW_WRITE_LAT)
			return p.n <= cap ? p.n : 0; /* perftest's write_lat just ends */
		break;
	}
	msg(&p, PERF_OOB_SYNC);
	msg(&p, PERF_OOB_DONE);
	return p.n <= cap ? p.n : 0;
}

const char *perf_oob_step_name(enum perf_oob_step_kind kind)
{
	static const char *const names[] = {
		[PERF_OOB_VERSION] = "version",
		[PERF_OOB_PAGE_SIZE] = "page size",
		[PERF_OOB_CACHE_LINE] = "cache line",
		[PERF_OOB_MTU] = "MTU",
		[PERF_OOB_KEYS] = "addresses",
		[PERF_OOB_SYNC] = "sync",
		[PERF_OOB_REPORT] = "report",
		[PERF_OOB_DONE] = "done",
		[PERF_OOB_CONNECT] = "connect",
		[PERF_OOB_RECV] = "receives",
		[PERF_OOB_RUN] = "run",
	};

	return kind <= PERF_OOB_RUN ? names[kind] : "?";
}

size_t perf_oob_step_bytes(enum perf_oob_step_kind kind, unsigned int num_qps)
{
	switch (kind) {
	case PERF_OOB_VERSION:
		return PERF_OOB_VERSION_LEN;
	case PERF_OOB_PAGE_SIZE:
	case PERF_OOB_CACHE_LINE:
		return PERF_OOB_INT_LEN;
	case PERF_OOB_MTU:
		return PERF_OOB_MTU_LEN;
	case PERF_OOB_KEYS:
		return (size_t)PERF_OOB_KEYS_LEN * num_qps;
	case PERF_OOB_SYNC:
		return PERF_OOB_KEYS_LEN;
	case PERF_OOB_REPORT:
		return PERF_OOB_REPORT_FIELDS * PERF_OOB_FIELD_LEN;
	case PERF_OOB_DONE:
		return PERF_OOB_DONE_LEN;
	default:
		return 0;
	}
}
