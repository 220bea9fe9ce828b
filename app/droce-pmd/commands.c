/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command table (testpmd's verbs where testpmd has them), and the commands
 * that belong to no object: help, quit, sleep, show lcores.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>

#include "droce_pmd.h"

const struct pmd_cmd pmd_cmds[] = {
	{"help", "this list", pmd_cmd_help},
	{"quit", "stop the streams, destroy the QPs and leave", pmd_cmd_quit},
	{"show port info all|<port>", "addresses, MTU, link, faults and capture of ports",
	 pmd_cmd_port_info},
	{"show port stats all|<port>",
	 "packets, bytes and errors of ports; rates since the last show", pmd_cmd_port_stats},
	{"show port xstats all|<port>", "droce's counters of ports by name (doc/counters.md)",
	 pmd_cmd_port_xstats},
	{"clear port stats all|<port>", "count port stats and xstats from zero again",
	 pmd_cmd_port_clear},
	{"show lcores", "busy and idle shares of the engine lcore and of the stream thread",
	 pmd_cmd_lcores},
	{"create qp rc|uc|ud <port> <port>", "a pair of QPs between two ports, connected (RTS)",
	 pmd_cmd_qp_create},
	{"show qp list", "every QP: port, number, type, state, peer, streams", pmd_cmd_qp_list},
	{"show qp <qp>", "one QP: state, attributes, counters", pmd_cmd_qp_show},
	{"modify qp <qp> state reset|init|rtr|rts|sqd|sqe|err",
	 "move a QP to a state (the attributes come from its pair)", pmd_cmd_qp_modify},
	{"destroy qp <qp>", "destroy one QP (its peer stays)", pmd_cmd_qp_destroy},
	{"start stream <qp> write|read|send|atomic size <bytes> depth <n> [rate <msg/s>] "
	 "[count <n>]",
	 "the QP posts messages to its peer, depth at a time, checked where they can be",
	 pmd_cmd_stream_start},
	{"stop stream all|<stream>", "stop streams; their totals", pmd_cmd_stream_stop},
	{"show stream", "every stream: messages, bytes, errors, rates", pmd_cmd_stream_show},
	{"wait stream all|<stream>", "wait until streams with a count have ended",
	 pmd_cmd_stream_wait},
	{"set fault <port> <spec>",
	 "faults on a port's transmit path: drop:P+dup:P+reorder:P+corrupt:P+delay:P..., or off "
	 "(doc/fault-injection.md)",
	 pmd_cmd_fault},
	{"start capture <port> <file>", "record a port to a pcap file", pmd_cmd_capture_start},
	{"stop capture <port>", "stop recording a port: the file is complete",
	 pmd_cmd_capture_stop},
	{"sleep <seconds>", "wait (batch mode: streams run meanwhile)", pmd_cmd_sleep},
};

const unsigned int pmd_n_cmds = sizeof(pmd_cmds) / sizeof(pmd_cmds[0]);

int pmd_cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("Commands (Tab completes, a double Tab lists what may come next):\n");
	for (unsigned int i = 0; i < pmd_n_cmds; i++)
		printf("  %s\n      %s\n", pmd_cmds[i].syntax, pmd_cmds[i].help);
	printf("Ports are numbered from 0 in DROCE_DEVICES' order; numbers take K, M, G "
	       "(2^10, 2^20, 2^30).\n");
	return 0;
}

int pmd_cmd_quit(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pmd_quit = true;
	return 0;
}

int pmd_cmd_sleep(int argc, char **argv)
{
	uint64_t end;
	double s;

	(void)argc;
	if (pmd_parse_seconds(argv[1], 3600, &s) != 0)
		return -1;
	end = pmd_now_ns() + (uint64_t)(s * 1e9);
	while (pmd_now_ns() < end)
		if (pmd_interrupted)
			return pmd_err("interrupted");
		else
			pmd_sleep_ns(end - pmd_now_ns() < 10000000 ? end - pmd_now_ns() : 10000000);
	return 0;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Busy and idle shares of @p n loops, all of them and since the last show. */
static void print_share(const char *what, uint64_t n, uint64_t busy, uint64_t last_n,
			uint64_t last_busy)
{
	printf("  %s %llu: busy %llu (%.1f %%), idle %llu (%.1f %%); since the last show: busy "
	       "%.1f %%\n",
	       what, (unsigned long long)n, (unsigned long long)busy, share(busy, n),
	       (unsigned long long)(n - busy), share(n - busy, n),
	       share(busy - last_busy, n - last_n));
}

int pmd_cmd_lcores(int argc, char **argv)
{
	static uint64_t last_loops[DROCE_ENGINE_LCORES_MAX], last_busy[DROCE_ENGINE_LCORES_MAX];
	static uint64_t last_tloops, last_tbusy;
	unsigned int n = droce_engine_lcores();
	uint64_t tl, tb;
	int cpu;

	(void)argc;
	(void)argv;
	if (!droce_engine_running() || n == 0)
		return pmd_err("the engine does not run");
	for (unsigned int k = 0; k < n && k < DROCE_ENGINE_LCORES_MAX; k++) {
		struct droce_engine_stats es;
		int lcore = droce_engine_lcore_id(k);

		if (droce_engine_lcore_stats(k, &es) != 0 || lcore < 0)
			return pmd_err("the engine stopped");
		printf("lcore %d (cpu %u): droce engine %u of %u\n", lcore,
		       rte_lcore_to_cpu_id(lcore), k, n);
		print_share("loops", es.loops, es.busy_loops, last_loops[k], last_busy[k]);
		printf("  time: busy %.1f %%, idle %.1f %%\n",
		       share(es.busy_cycles, es.busy_cycles + es.idle_cycles),
		       share(es.idle_cycles, es.busy_cycles + es.idle_cycles));
		last_loops[k] = es.loops;
		last_busy[k] = es.busy_loops;
	}
	pmd_stream_thread_stats(&tl, &tb, &cpu);
	if (cpu >= 0)
		printf("stream thread (cpu %d)\n", cpu);
	else
		printf("stream thread (cpu ?)\n"); /* it has not run yet */
	print_share("passes", tl, tb, last_tloops, last_tbusy);
	last_tloops = tl;
	last_tbusy = tb;
	return 0;
}
