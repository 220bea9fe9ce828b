/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Starting and stopping the engine: the EAL (with an lcore for the engine and
 * the application's own thread left unpinned), the ports and their neighbour
 * tables, and the engine lcore.
 */
#include <errno.h>
#include <sched.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "engine_priv.h"

struct engine droce_engine = {.ctl_lock = PTHREAD_MUTEX_INITIALIZER};

#define EAL_ARGS_MAX 32

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

/* The runtime folder of the EAL's file prefix @p prefix, where DPDK puts it (its rule). */
static void runtime_dir(const char *prefix, char *dir, size_t len)
{
	const char *run = getuid() == 0 ? "/var/run" : getenv("XDG_RUNTIME_DIR");

	snprintf(dir, len, "%.150s/dpdk/%.63s", run != NULL ? run : "/tmp", prefix);
}

/*
 * Whether the EAL is to serve DPDK telemetry: yes unless DROCE_TELEMETRY=0 or DROCE_EAL_ARGS
 * says --no-telemetry, and only if its socket can be made (a sandbox may refuse UNIX sockets,
 * the runtime folder may not take one): the EAL does not start at all when it cannot, and it
 * starts once per process, so the engine finds out first and then runs without telemetry,
 * with a one-line warning.
 */
static bool telemetry_wanted(const struct engine *e)
{
	const char *env = getenv("DROCE_TELEMETRY");
	char dir[256], why[512];

	if ((env != NULL && strcmp(env, "0") == 0) ||
	    (e->conf.eal_args != NULL && strstr(e->conf.eal_args, "--no-telemetry") != NULL))
		return false;
	runtime_dir(e->file_prefix, dir, sizeof(dir));
	if (engine_telemetry_possible(dir, why, sizeof(why)))
		return true;
	fprintf(stderr, "droce: telemetry off: %s\n", why);
	return false;
}

/*
 * EAL arguments of the embedded engine: its own file prefix, no PCI scan
 * unless asked, hugepages when the machine has free ones, main lcore 0 on
 * every CPU (the application's thread keeps its affinity) and lcore 1 for the
 * engine on the last CPU. DROCE_EAL_ARGS adds to or overrides these.
 */
static int eal_start(struct engine *e)
{
	static char args[EAL_ARGS_MAX][128];
	char *argv[EAL_ARGS_MAX];
	const char *no_huge = getenv("DROCE_NO_HUGE");
	char cpus[256] = "", *end = cpus;
	int argc = 0, last = 0, cpu;
	bool telemetry;
	cpu_set_t set;

	/* the CPUs this thread may run on (taskset, cgroups): lcore 0 keeps all of them, so
	 * the application's threads keep their affinity; the engine takes the last one */
	if (sched_getaffinity(0, sizeof(set), &set) != 0) {
		CPU_ZERO(&set);
		CPU_SET(0, &set);
	}
	for (cpu = 0; cpu < CPU_SETSIZE && end < cpus + sizeof(cpus) - 8; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		end += snprintf(end, (size_t)(cpus + sizeof(cpus) - end), "%s%d",
				end == cpus ? "" : ",", cpu);
		last = cpu;
	}
	snprintf(e->file_prefix, sizeof(e->file_prefix), "droce-%d", (int)getpid());
#define ARG(...) snprintf(args[argc], sizeof(args[0]), __VA_ARGS__), argv[argc] = args[argc], argc++
	ARG("droce");
	ARG("--file-prefix=%s", e->file_prefix);
	/* the telemetry socket serves droce's counters (engine_telemetry.c) unless turned off */
	telemetry = telemetry_wanted(e);
	if (!telemetry)
		ARG("--no-telemetry");
	ARG("--log-level=error");
	ARG("--lcores=0@(%s),1@%d", cpus, last);
	if ((no_huge == NULL || strcmp(no_huge, "1") != 0) && free_hugepages() >= 64) {
		/* no -m: DPDK takes hugepages as its pools need them (some 40 MB a port), none
		 * reserved up front, so hugepages another process took meanwhile do not stop the
		 * EAL's start (a 256 MB reservation did) */
		ARG("--huge-unlink");
	} else {
		ARG("--no-huge");
		ARG("-m");
		ARG("256");
	}
	if (e->conf.eal_args == NULL || strstr(e->conf.eal_args, "-a ") == NULL)
		ARG("--no-pci");
	if (e->conf.eal_args != NULL) {
		char copy[1024], *tok, *save = NULL;

		snprintf(copy, sizeof(copy), "%s", e->conf.eal_args);
		for (tok = strtok_r(copy, " \t", &save); tok != NULL && argc < EAL_ARGS_MAX;
		     tok = strtok_r(NULL, " \t", &save))
			ARG("%s", tok);
	}
#undef ARG
	if (rte_eal_init(argc, argv) < 0)
		return rte_errno == EALREADY ? -EALREADY : -rte_errno;
	e->eal_ours = true;
	e->telemetry = telemetry;
	return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Clean the EAL droce started up, and its runtime folder. */
static void eal_finish(struct engine *e, bool cleanup)
{
	char dir[256];

	if (!e->eal_ours)
		return;
	if (cleanup)
		rte_eal_cleanup();
	runtime_dir(e->file_prefix, dir, sizeof(dir));
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	e->eal_ours = false;
	e->telemetry = false;
}

/* Open a port, its neighbour table and the addresses the transport sends from. */
static int port_start(struct engine *e, struct engine_port *p)
{
	struct droce_port_conf pc = {.nb_queues = 1, .mtu = p->conf.mtu, .socket = SOCKET_ID_ANY};
	struct droce_neigh_cfg nc;
	char ring_name[RTE_ETH_NAME_MAX_LEN], devargs[sizeof(p->conf.device) + 32];
	unsigned int i;
	int rc;

	if (p->conf.link[0] != '\0') {
		snprintf(ring_name, sizeof(ring_name), "net_ring_%.54s", p->conf.name);
		pc.device = ring_name;
	} else {
		rc = engine_devargs(p->conf.device, p->conf.mtu, devargs, sizeof(devargs));
		if (rc != 0)
			return rc;
		pc.device = devargs;
	}
	memset(&p->rx, 0, sizeof(p->rx));
	memset(&p->retired, 0, sizeof(p->retired));
	/* a second start in this process counts from zero as well */
	p->loop_head = p->loop_tail = 0;
	p->loop_pkts = p->loop_dropped = 0;
	p->n_unres = 0;
	p->unres_queued = p->unres_dropped = 0;
	/* a memif client may come up before its server: it starts once the server is there */
	pc.start_later = p->conf.link[0] == '\0' && strstr(devargs, "net_memif") != NULL &&
			 strstr(devargs, "role=client") != NULL;
	rc = droce_port_open(&p->port, &pc);
	if (rc != 0)
		return rc;
	if (p->conf.link[0] != '\0' || memcmp(p->conf.mac, "\0\0\0\0\0\0", 6) != 0) {
		struct rte_ether_addr mac;

		/* the configured MAC (ring links have none of their own); a device that
		 * cannot take it (memif, a VF without the right) still receives frames
		 * for it in promiscuous mode */
		memcpy(mac.addr_bytes, p->conf.mac, 6);
		if (rte_eth_dev_default_mac_addr_set(p->port.port_id, &mac) != 0 &&
		    p->conf.link[0] == '\0')
			rte_eth_promiscuous_enable(p->port.port_id);
		p->port.mac = mac;
	}
	droce_neigh_cfg_init(&nc);
	memcpy(nc.mac, p->port.mac.addr_bytes, 6);
	memcpy(p->addr.mac, p->port.mac.addr_bytes, 6);
	/* the same GID table the verbs device shows: link-local, IPv4-mapped, IPv6 */
	droce_ipv6_link_local(p->addr.mac, p->addr.gid[0].raw);
	p->addr.gid_count = 1;
	/* GID 0, the link-local address, is answered and sent from like the others */
	memcpy(nc.addr[nc.addr_count++], p->addr.gid[0].raw, 16);
	for (i = 0; i < p->conf.n_ipv4; i++) {
		droce_ipv4_mapped(p->conf.ipv4[i], p->addr.gid[p->addr.gid_count++].raw);
		droce_ipv4_mapped(p->conf.ipv4[i], nc.addr[nc.addr_count++]);
	}
	for (i = 0; i < p->conf.n_ipv6; i++) {
		memcpy(p->addr.gid[p->addr.gid_count++].raw, p->conf.ipv6[i], 16);
		memcpy(nc.addr[nc.addr_count++], p->conf.ipv6[i], 16);
	}
	/* payload bytes per packet: the largest IB MTU the Ethernet MTU holds, as the
	 * verbs device reports it (droce_mtu_for_eth()) */
	p->addr.mtu_bytes = 256;
	while (p->addr.mtu_bytes < 4096 &&
	       p->addr.mtu_bytes * 2 + DROCE_ROCE_OVERHEAD_MAX <= p->port.mtu)
		p->addr.mtu_bytes *= 2;
	rc = droce_neigh_create(&nc, &p->neigh);
	if (rc != 0)
		goto out_close;
	if (p->conf.capture[0] != '\0') {
		rc = droce_capture_open(p->conf.capture, 0, &p->cap);
		if (rc != 0)
			goto out_free_neigh;
	}
	for (i = 0; i < p->conf.n_neigh; i++) {
		rc = droce_neigh_add_static(p->neigh, p->conf.neigh[i].ip, p->conf.neigh[i].mac, 0);
		if (rc != 0)
			goto out_free_neigh;
	}
	rc = engine_fault_create(p);
	if (rc != 0)
		goto out_free_neigh;
	/* the pool as it stands before any packet: what an idle port returns to */
	p->pool_avail_start = rte_mempool_avail_count(p->port.pool);
	engine_env_init(e, p);
	return 0;

out_free_neigh:
	droce_capture_close(p->cap);
	p->cap = NULL;
	droce_neigh_free(p->neigh);
	p->neigh = NULL;
out_close:
	droce_port_close(&p->port);
	return rc;
}

static int links_create(struct engine *e)
{
	unsigned int i, j;

	for (i = 0; i < e->conf.n_ports; i++) {
		const struct droce_engine_port_conf *a = &e->conf.port[i];

		if (a->link[0] == '\0')
			continue;
		for (j = i + 1; j < e->conf.n_ports; j++) {
			const struct droce_engine_port_conf *b = &e->conf.port[j];

			if (strcmp(a->link, b->link) == 0) {
				int rc = droce_port_ring_pair(a->name, b->name, 1);

				if (rc != 0)
					return rc;
				break;
			}
		}
		if (j == e->conf.n_ports) {
			/* a link needs both ends: look back for the first end */
			for (j = 0; j < i; j++)
				if (strcmp(a->link, e->conf.port[j].link) == 0)
					break;
			if (j == i)
				return -EINVAL;
		}
	}
	return 0;
}

static void engine_teardown(struct engine *e)
{
	unsigned int i;

	for (i = 0; i < e->n_ports; i++) {
		engine_fault_drain(&e->ports[i]);
		droce_capture_close(e->ports[i].cap);
		e->ports[i].cap = NULL;
		for (unsigned int k = 0; k < e->ports[i].n_unres; k++)
			rte_pktmbuf_free(e->ports[i].unres[k].m);
		e->ports[i].n_unres = 0;
		while (e->ports[i].loop_head != e->ports[i].loop_tail)
			rte_pktmbuf_free(
				e->ports[i].loop[e->ports[i].loop_head++ & (ENGINE_LOOP_RING - 1)]);
		droce_neigh_free(e->ports[i].neigh);
		droce_port_close(&e->ports[i].port);
	}
	e->n_ports = 0;
	for (i = 0; i < ENGINE_QPS_MAX; i++) {
		if (e->qps[i] != NULL)
			droce_tqp_fini(&e->qps[i]->port->env, &e->qps[i]->tqp);
		free(e->qps[i]);
		e->qps[i] = NULL;
	}
	e->n_qps = 0;
	e->n_list = 0;
	free(e->ahs);
	e->ahs = NULL;
}

static void engine_stop(bool full);

/*
 * At process exit only the lcore is stopped and the runtime folder removed:
 * the process is going away with its memory, and closing PMDs here races with
 * their interrupt threads (a memif peer disconnecting at the same moment).
 */
static void engine_at_exit(void)
{
	engine_stop(false);
}

int droce_engine_start(const struct droce_engine_conf *conf, const struct droce_engine_hooks *hooks,
		       struct droce_mr_table *keys)
{
	struct engine *e = &droce_engine;
	unsigned int i;
	int rc;

	if (conf == NULL || hooks == NULL || keys == NULL || conf->n_ports == 0 ||
	    conf->n_ports > DROCE_ENGINE_PORTS_MAX)
		return -EINVAL;
	pthread_mutex_lock(&e->ctl_lock);
	if (e->running) {
		pthread_mutex_unlock(&e->ctl_lock);
		return 0;
	}
	e->conf = *conf;
	e->hooks = *hooks;
	e->keys = keys;
	e->ahs = calloc(ENGINE_AHS_MAX, sizeof(*e->ahs));
	rc = e->ahs == NULL ? -ENOMEM : 0;
	if (rc == 0) {
		/* an application that runs the EAL itself lends the engine an lcore */
		rc = eal_start(e);
		if (rc == -EALREADY)
			rc = 0;
	}
	if (rc == 0) {
		e->lcore = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);
		if (e->lcore >= RTE_MAX_LCORE)
			rc = -EALREADY;
	}
	if (rc == 0)
		rc = links_create(e);
	for (i = 0; rc == 0 && i < conf->n_ports; i++) {
		e->ports[i].conf = conf->port[i];
		rc = port_start(e, &e->ports[i]);
		if (rc == 0)
			e->n_ports++;
	}
	if (rc == 0) {
		e->hz_per_us = rte_get_timer_hz() / 1000000;
		if (e->hz_per_us == 0)
			e->hz_per_us = 1;
		/* slots of about a microsecond (the wheel rounds down to a power of two) */
		droce_timer_wheel_init(&e->wheel, rte_get_timer_cycles(),
				       droce_timer_ns_to_ticks(1000, rte_get_timer_hz()));
		__atomic_store_n(&e->running, true, __ATOMIC_RELEASE);
		rc = rte_eal_remote_launch(engine_lcore_main, e, e->lcore);
		if (rc != 0)
			__atomic_store_n(&e->running, false, __ATOMIC_RELEASE);
	}
	if (rc != 0) {
		engine_teardown(e);
		eal_finish(e, true);
	} else {
		e->pid = getpid();
		engine_telemetry_register();
	}
	pthread_mutex_unlock(&e->ctl_lock);
	if (rc == 0)
		atexit(engine_at_exit);
	return rc;
}

/* Stop the lcore; @p full: also close the ports and clean the EAL up. */
static void engine_stop(bool full)
{
	struct engine *e = &droce_engine;

	pthread_mutex_lock(&e->ctl_lock);
	/* a forked child inherits the flag but not the lcore, nor the runtime folder */
	if (!e->running || e->pid != getpid()) {
		pthread_mutex_unlock(&e->ctl_lock);
		return;
	}
	__atomic_store_n(&e->running, false, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(e->lcore);
	/* even the light stop at exit finishes the capture files: the lcore no longer writes */
	for (unsigned int i = 0; i < e->n_ports; i++) {
		droce_capture_close(e->ports[i].cap);
		e->ports[i].cap = NULL;
	}
	if (full)
		engine_teardown(e);
	eal_finish(e, full);
	pthread_mutex_unlock(&e->ctl_lock);
}

void droce_engine_stop(void)
{
	engine_stop(true);
}

bool droce_engine_running(void)
{
	return __atomic_load_n(&droce_engine.running, __ATOMIC_ACQUIRE);
}

int droce_engine_port_info(const char *name, struct droce_engine_port_info *info)
{
	struct engine *e = &droce_engine;

	if (!droce_engine_running())
		return -ENODEV;
	for (unsigned int i = 0; i < e->n_ports; i++) {
		struct engine_port *p = &e->ports[i];

		if (strcmp(p->conf.name, name) != 0)
			continue;
		info->link_up = droce_port_link_up(&p->port);
		info->speed_mbps = droce_port_link_speed(&p->port);
		memcpy(info->mac, p->port.mac.addr_bytes, 6);
		info->mtu = p->port.mtu;
		return 0;
	}
	return -ENOENT;
}

int droce_engine_port_stats(const char *name, struct droce_engine_port_stats *st)
{
	struct engine *e = &droce_engine;
	int rc = -ENOENT;

	/* the lock keeps droce_engine_stop() from freeing the pool or the injector meanwhile */
	pthread_mutex_lock(&e->ctl_lock);
	if (!droce_engine_running()) {
		pthread_mutex_unlock(&e->ctl_lock);
		return -ENODEV;
	}
	for (unsigned int i = 0; i < e->n_ports && rc != 0; i++) {
		const struct engine_port *p = &e->ports[i];

		if (strcmp(p->conf.name, name) != 0)
			continue;
		memset(st, 0, sizeof(*st));
		st->pool_size = p->port.pool->size;
		st->pool_avail_start = p->pool_avail_start;
		st->pool_avail = rte_mempool_avail_count(p->port.pool);
		st->rx_pkts = p->port.qstats[0].rx_pkts;
		st->tx_pkts = p->port.qstats[0].tx_pkts;
		st->tx_dropped = p->port.qstats[0].tx_dropped;
		st->tx_full = p->port.qstats[0].tx_full;
		st->tx_waiting = droce_port_tx_pending(&p->port, 0);
		st->rx_bytes = p->port.qstats[0].rx_bytes;
		st->tx_bytes = p->port.qstats[0].tx_bytes;
		st->loopback_pkts = p->loop_pkts;
		st->loopback_dropped = p->loop_dropped;
		if (p->fault != NULL) {
			struct droce_fault_stats fs;

			droce_fault_stats_get(p->fault, &fs);
			st->fault = true;
			st->fault_offered = fs.rx_pkts;
			st->fault_sent = fs.tx_pkts;
			st->fault_dropped = fs.injected[DROCE_FAULT_DROP];
			st->fault_duplicated = fs.injected[DROCE_FAULT_DUP];
			st->fault_reordered = fs.injected[DROCE_FAULT_REORDER];
			st->fault_corrupted = fs.injected[DROCE_FAULT_CORRUPT];
			st->fault_delayed = fs.injected[DROCE_FAULT_DELAY];
			st->fault_held = droce_fault_held_count(p->fault);
		}
		rc = 0;
	}
	pthread_mutex_unlock(&e->ctl_lock);
	return rc;
}

void droce_engine_stats_get(struct droce_engine_stats *stats)
{
	const struct engine *e = &droce_engine;

	/* counters are written by the lcore only: a torn 64-bit read is not possible on x86-64 */
	memcpy(stats, &e->stats, sizeof(*stats));
	/* what the ports drop before any QP: the sums of the ports' own counters */
	for (unsigned int i = 0; i < e->n_ports; i++) {
		const struct engine_port_rx *rx = &e->ports[i].rx;

		stats->rx_not_roce += rx->not_roce;
		stats->rx_no_qp += rx->no_qp;
		for (unsigned int r = 0; r < DROCE_PARSE_STATUS_COUNT; r++)
			stats->parse_errors[r] += rx->parse[r];
	}
}
