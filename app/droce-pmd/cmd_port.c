/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port commands: show port info, stats and xstats (testpmd's layouts, droce's
 * counts), clear port stats (droce's counters never go back: the console keeps
 * the values at the clear as their zero), set fault, start and stop capture.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_pmd.h"

/* The text of a fault configuration, as set fault and fault= take it. */
static void fault_format(const struct droce_engine_fault_conf *f, char *buf, size_t len)
{
	const struct {
		const char *name;
		double rate;
	} rates[] = {{"drop", f->drop},
		     {"dup", f->dup},
		     {"reorder", f->reorder},
		     {"corrupt", f->corrupt},
		     {"delay", f->delay}};
	size_t n = 0;

#define ADD(...)                                                                         \
	do {                                                                             \
		if (n < len)                                                             \
			n += (size_t)snprintf(buf + n, len - n, "%s", n > 0 ? "+" : ""); \
		if (n < len)                                                             \
			n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__);            \
	} while (0)
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate > 0.0)
			ADD("%s:%g", rates[i].name, rates[i].rate);
	if (f->n_drop_at > 0) {
		ADD("drop_at:");
		for (unsigned int i = 0; i < f->n_drop_at && n < len; i++) {
			if (f->drop_at[i].first == f->drop_at[i].last)
				n += (size_t)snprintf(buf + n, len - n, "%s%llu", i ? "/" : "",
						      (unsigned long long)f->drop_at[i].first);
			else
				n += (size_t)snprintf(buf + n, len - n, "%s%llu-%llu", i ? "/" : "",
						      (unsigned long long)f->drop_at[i].first,
						      (unsigned long long)f->drop_at[i].last);
		}
	}
	if (f->reorder_after != 0)
		ADD("after:%u", f->reorder_after);
	if (f->reorder_max_us != 0)
		ADD("reorder_us:%u", f->reorder_max_us);
	if (f->delay_us != 0)
		ADD("delay_us:%u", f->delay_us);
	if (f->seed != 0)
		ADD("seed:%llu", (unsigned long long)f->seed);
	if (f->roce_only)
		ADD("match:roce");
	if (n == 0)
		snprintf(buf, len, "on, no rule");
#undef ADD
}

static void print_gids(const struct pmd_port *p)
{
	for (int i = 0; i < p->attr.gid_tbl_len; i++) {
		char text[INET6_ADDRSTRLEN];
		union ibv_gid g;
		static const union ibv_gid zero;

		if (ibv_query_gid(p->ctx, 1, i, &g) != 0 || memcmp(&g, &zero, sizeof(g)) == 0)
			continue;
		inet_ntop(AF_INET6, g.raw, text, sizeof(text));
		printf("GID[%d]: %s%s\n", i, text, i == p->gid_index ? " (QPs use this one)" : "");
	}
}

static void port_info(struct pmd_port *p)
{
	struct droce_engine_port_info info;
	struct droce_engine_fault_conf f;
	char fault[256];

	printf("\n********************* Infos for port %u (%s) *********************\n", p->id,
	       p->name);
	if (droce_engine_port_info(p->name, &info) != 0) {
		printf("Not run by the engine\n");
		return;
	}
	printf("MAC address: %02X:%02X:%02X:%02X:%02X:%02X\n", info.mac[0], info.mac[1],
	       info.mac[2], info.mac[3], info.mac[4], info.mac[5]);
	printf("Device name: %s\n", p->name);
	printf("Link status: %s\n", info.link_up ? "up" : "down");
	printf("Link speed: %u Mbps\n", info.speed_mbps);
	printf("MTU: %u (IB MTU %u)\n", info.mtu, 128u << p->attr.active_mtu);
	print_gids(p);
	if (droce_engine_fault_get(p->name, &f) == 0 && f.enabled)
		fault_format(&f, fault, sizeof(fault));
	else
		snprintf(fault, sizeof(fault), "off");
	printf("Faults: %s\n", fault);
	printf("Capture: %s\n", p->capture[0] != '\0' ? p->capture : "off");
	printf("QPs:");
	for (int i = 0; i < PMD_QPS_MAX; i++)
		if (pmd_qps[i].used && pmd_qps[i].port == p)
			printf(" %d", i);
	printf("\n");
}

int pmd_cmd_port_info(int argc, char **argv)
{
	struct pmd_port *ports[PMD_PORTS_MAX];
	unsigned int n = pmd_ports_select(argv[argc - 1], ports);

	if (n == 0)
		return -1;
	pmd_lock(); /* the QP list */
	for (unsigned int i = 0; i < n; i++)
		port_info(ports[i]);
	pmd_unlock();
	return 0;
}

static int port_stats(struct pmd_port *p)
{
	struct pmd_port_snap s;
	uint64_t now = pmd_now_ns();
	double secs = (double)(now - p->shown_ns) / 1e9;
	const struct droce_engine_port_stats *b = &p->base.st, *l = &p->shown.st;

	if (pmd_port_snap_read(p, &s) != 0)
		return -1;
	printf("\n  ######################## NIC statistics for port %u (%s) "
	       "########################\n",
	       p->id, p->name);
	printf("  RX-packets: %-10llu RX-errors: %-10llu RX-bytes:  %llu\n",
	       (unsigned long long)pmd_delta(s.st.rx_pkts, b->rx_pkts),
	       (unsigned long long)pmd_delta(s.rx_errors, p->base.rx_errors),
	       (unsigned long long)pmd_delta(s.st.rx_bytes, b->rx_bytes));
	printf("  TX-packets: %-10llu TX-errors: %-10llu TX-bytes:  %llu\n",
	       (unsigned long long)pmd_delta(s.st.tx_pkts, b->tx_pkts),
	       (unsigned long long)pmd_delta(s.st.tx_dropped, b->tx_dropped),
	       (unsigned long long)pmd_delta(s.st.tx_bytes, b->tx_bytes));
	printf("  Loopback:   %-10llu dropped:   %llu\n",
	       (unsigned long long)pmd_delta(s.st.loopback_pkts, b->loopback_pkts),
	       (unsigned long long)pmd_delta(s.st.loopback_dropped, b->loopback_dropped));
	if (s.st.fault)
		printf("  Faults:     offered %llu, sent %llu, dropped %llu, duplicated %llu, "
		       "reordered %llu, corrupted %llu, delayed %llu, held %llu\n",
		       (unsigned long long)pmd_delta(s.st.fault_offered, b->fault_offered),
		       (unsigned long long)pmd_delta(s.st.fault_sent, b->fault_sent),
		       (unsigned long long)pmd_delta(s.st.fault_dropped, b->fault_dropped),
		       (unsigned long long)pmd_delta(s.st.fault_duplicated, b->fault_duplicated),
		       (unsigned long long)pmd_delta(s.st.fault_reordered, b->fault_reordered),
		       (unsigned long long)pmd_delta(s.st.fault_corrupted, b->fault_corrupted),
		       (unsigned long long)pmd_delta(s.st.fault_delayed, b->fault_delayed),
		       (unsigned long long)s.st.fault_held);
	printf("\n  Throughput (since last show)\n");
	printf("  Rx-pps: %12.0f          Rx-bps: %12.0f\n",
	       (double)pmd_delta(s.st.rx_pkts, l->rx_pkts) / secs,
	       8.0 * (double)pmd_delta(s.st.rx_bytes, l->rx_bytes) / secs);
	printf("  Tx-pps: %12.0f          Tx-bps: %12.0f\n",
	       (double)pmd_delta(s.st.tx_pkts, l->tx_pkts) / secs,
	       8.0 * (double)pmd_delta(s.st.tx_bytes, l->tx_bytes) / secs);
	printf("  ############################################################################"
	       "\n");
	p->shown = s;
	p->shown_ns = now;
	return 0;
}

int pmd_cmd_port_stats(int argc, char **argv)
{
	struct pmd_port *ports[PMD_PORTS_MAX];
	unsigned int n = pmd_ports_select(argv[argc - 1], ports);

	if (n == 0)
		return -1;
	for (unsigned int i = 0; i < n; i++)
		if (port_stats(ports[i]) != 0)
			return -1;
	return 0;
}

static int port_xstats(struct pmd_port *p)
{
	struct droce_counter c[PMD_COUNTERS_MAX];
	const struct droce_engine_port_stats *b = &p->base.st;
	struct droce_engine_port_stats st;
	int n = droce_engine_port_counters(p->name, c, PMD_COUNTERS_MAX), rc;

	if (n < 0)
		return pmd_err("port %u (%s): droce_engine_port_counters: %s", p->id, p->name,
			       strerror(-n));
	rc = droce_engine_port_stats(p->name, &st);
	if (rc != 0)
		return pmd_err("port %u (%s): droce_engine_port_stats: %s", p->id, p->name,
			       strerror(-rc));
	printf("###### NIC extended statistics for port %u (%s)\n", p->id, p->name);
	printf("rx_packets: %llu\nrx_bytes: %llu\ntx_packets: %llu\ntx_bytes: %llu\n"
	       "tx_dropped: %llu\n",
	       (unsigned long long)pmd_delta(st.rx_pkts, b->rx_pkts),
	       (unsigned long long)pmd_delta(st.rx_bytes, b->rx_bytes),
	       (unsigned long long)pmd_delta(st.tx_pkts, b->tx_pkts),
	       (unsigned long long)pmd_delta(st.tx_bytes, b->tx_bytes),
	       (unsigned long long)pmd_delta(st.tx_dropped, b->tx_dropped));
	for (int i = 0; i < n && i < PMD_COUNTERS_MAX; i++)
		printf("%s: %llu\n", c[i].name,
		       (unsigned long long)pmd_delta(
			       c[i].value, (unsigned int)i < p->base.n_ctr ? p->base.ctr[i] : 0));
	if (st.fault)
		printf("fault_offered: %llu\nfault_sent: %llu\nfault_dropped: %llu\n"
		       "fault_duplicated: %llu\nfault_reordered: %llu\nfault_corrupted: %llu\n"
		       "fault_delayed: %llu\nfault_held: %llu\n",
		       (unsigned long long)pmd_delta(st.fault_offered, b->fault_offered),
		       (unsigned long long)pmd_delta(st.fault_sent, b->fault_sent),
		       (unsigned long long)pmd_delta(st.fault_dropped, b->fault_dropped),
		       (unsigned long long)pmd_delta(st.fault_duplicated, b->fault_duplicated),
		       (unsigned long long)pmd_delta(st.fault_reordered, b->fault_reordered),
		       (unsigned long long)pmd_delta(st.fault_corrupted, b->fault_corrupted),
		       (unsigned long long)pmd_delta(st.fault_delayed, b->fault_delayed),
		       (unsigned long long)st.fault_held);
	return 0;
}

int pmd_cmd_port_xstats(int argc, char **argv)
{
	struct pmd_port *ports[PMD_PORTS_MAX];
	unsigned int n = pmd_ports_select(argv[argc - 1], ports);

	if (n == 0)
		return -1;
	for (unsigned int i = 0; i < n; i++)
		if (port_xstats(ports[i]) != 0)
			return -1;
	return 0;
}

int pmd_cmd_port_clear(int argc, char **argv)
{
	struct pmd_port *ports[PMD_PORTS_MAX];
	unsigned int n = pmd_ports_select(argv[argc - 1], ports);

	if (n == 0)
		return -1;
	for (unsigned int i = 0; i < n; i++) {
		struct pmd_port *p = ports[i];

		if (pmd_port_snap_read(p, &p->base) != 0)
			return -1;
		p->shown = p->base;
		p->shown_ns = pmd_now_ns();
		printf("\n  NIC statistics for port %u (%s) cleared\n", p->id, p->name);
	}
	return 0;
}

int pmd_cmd_fault(int argc, char **argv)
{
	struct pmd_port *p = pmd_port_get(argv[2]);
	struct droce_engine_fault_conf f;
	char text[256];
	int rc;

	(void)argc;
	if (p == NULL)
		return -1;
	if (strcmp(argv[3], "off") == 0) {
		rc = droce_engine_fault_set(p->name, NULL);
		if (rc != 0)
			return pmd_err("port %u (%s): droce_engine_fault_set: %s", p->id, p->name,
				       strerror(-rc));
		printf("port %u (%s): faults off\n", p->id, p->name);
		return 0;
	}
	if (droce_engine_fault_parse(argv[3], &f) != 0)
		return pmd_err("bad fault specification '%s': items kind:value joined by '+': "
			       "drop, dup, reorder, corrupt, delay (0..1), drop_at:I/J-K, after:N, "
			       "reorder_us:T, delay_us:T, seed:S, match:roce|all "
			       "(doc/fault-injection.md)",
			       argv[3]);
	rc = droce_engine_fault_set(p->name, &f);
	if (rc != 0)
		return pmd_err("port %u (%s): droce_engine_fault_set: %s", p->id, p->name,
			       strerror(-rc));
	fault_format(&f, text, sizeof(text));
	printf("port %u (%s): faults %s\n", p->id, p->name, text);
	return 0;
}

int pmd_cmd_capture_start(int argc, char **argv)
{
	struct pmd_port *p = pmd_port_get(argv[2]);
	int rc;

	(void)argc;
	if (p == NULL)
		return -1;
	if (strlen(argv[3]) >= sizeof(p->capture))
		return pmd_err("a file name of %zu characters: %zu at most", strlen(argv[3]),
			       sizeof(p->capture) - 1);
	rc = droce_engine_capture(p->name, argv[3]);
	if (rc != 0)
		return pmd_err("port %u (%s): capture to %s: %s", p->id, p->name, argv[3],
			       strerror(-rc));
	snprintf(p->capture, sizeof(p->capture), "%s", argv[3]);
	printf("port %u (%s): capture to %s\n", p->id, p->name, p->capture);
	return 0;
}

int pmd_cmd_capture_stop(int argc, char **argv)
{
	struct pmd_port *p = pmd_port_get(argv[2]);
	int rc;

	(void)argc;
	if (p == NULL)
		return -1;
	/* a capture= of DROCE_DEVICES is not known here: stopping asks the engine anyway */
	rc = droce_engine_capture(p->name, NULL);
	if (rc != 0)
		return pmd_err("port %u (%s): stop capture: %s", p->id, p->name, strerror(-rc));
	if (p->capture[0] != '\0')
		printf("port %u (%s): capture to %s stopped\n", p->id, p->name, p->capture);
	else
		printf("port %u (%s): capture stopped\n", p->id, p->name);
	p->capture[0] = '\0';
	return 0;
}
