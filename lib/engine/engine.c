/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Starting and stopping the engine: the EAL (with lcores for the engine and
 * the application's own thread left unpinned), the ports (a queue pair per
 * engine lcore) and their neighbour tables, and the engine lcores.
 */
#include <errno.h>
#include <sched.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf_dyn.h>

#include "engine_litter.h"
#include "engine_priv.h"

struct engine droce_engine = {
	.ctl_lock = PTHREAD_MUTEX_INITIALIZER,
	.gsi = {.lock = PTHREAD_RWLOCK_INITIALIZER, .efd = -1},
};

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

/* The folder holding the EAL's runtime folders, one per file prefix, where DPDK puts it. */
static void runtime_base(char *dir, size_t len)
{
	const char *run = getuid() == 0 ? "/var/run" : getenv("XDG_RUNTIME_DIR");

	snprintf(dir, len, "%.150s/dpdk", run != NULL ? run : "/tmp");
}

/* The runtime folder of the EAL's file prefix @p prefix (its rule). */
static void runtime_dir(const char *prefix, char *dir, size_t len)
{
	char base[192];

	runtime_base(base, sizeof(base));
	snprintf(dir, len, "%s/%.63s", base, prefix);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove the engine's own runtime folder (links in it are removed, never followed). */
static void runtime_dir_remove(const struct engine *e)
{
	char dir[256];

	runtime_dir(e->file_prefix, dir, sizeof(dir));
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/*
 * Remove the runtime folders earlier droce processes left when they crashed or were killed
 * (their exit handler never ran), once at start, and say how many.
 */
static void runtime_litter_clean(void)
{
	char base[192];
	int n;

	runtime_base(base, sizeof(base));
	n = engine_litter_clean(base);
	if (n > 0)
		fprintf(stderr, "droce: removed %d runtime folder%s of exited droce processes\n", n,
			n == 1 ? "" : "s");
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
 * every CPU (the application's thread keeps its affinity) and lcores 1..n for
 * the engine on the last CPUs, one each (round again when there are fewer).
 * DROCE_EAL_ARGS adds to or overrides these.
 */
static int eal_start(struct engine *e)
{
	static char args[EAL_ARGS_MAX][320];
	char *argv[EAL_ARGS_MAX];
	const char *no_huge = getenv("DROCE_NO_HUGE");
	char cpus[256] = "", *end = cpus, lcores[256], *lend = lcores;
	int argc = 0, cpu, n_cpus = 0, list[CPU_SETSIZE];
	bool telemetry;
	cpu_set_t set;

	/* the CPUs this thread may run on (taskset, cgroups): lcore 0 keeps all of them, so
	 * the application's threads keep their affinity; the engine takes the last ones */
	if (sched_getaffinity(0, sizeof(set), &set) != 0) {
		CPU_ZERO(&set);
		CPU_SET(0, &set);
	}
	for (cpu = 0; cpu < CPU_SETSIZE && end < cpus + sizeof(cpus) - 8; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		end += snprintf(end, (size_t)(cpus + sizeof(cpus) - end), "%s%d",
				end == cpus ? "" : ",", cpu);
		list[n_cpus++] = cpu;
	}
	lend += snprintf(lcores, sizeof(lcores), "0@(%s)", cpus);
	for (unsigned int k = 0; k < e->n_lcores && lend < lcores + sizeof(lcores) - 16; k++)
		lend += snprintf(lend, (size_t)(lcores + sizeof(lcores) - lend), ",%u@%d", k + 1,
				 list[(unsigned int)n_cpus - 1 - k % (unsigned int)n_cpus]);
	snprintf(e->file_prefix, sizeof(e->file_prefix), "droce-%d", (int)getpid());
#define ARG(...) snprintf(args[argc], sizeof(args[0]), __VA_ARGS__), argv[argc] = args[argc], argc++
	ARG("droce");
	ARG("--file-prefix=%s", e->file_prefix);
	/* the telemetry socket serves droce's counters (engine_telemetry.c) unless turned off */
	telemetry = telemetry_wanted(e);
	if (!telemetry)
		ARG("--no-telemetry");
	ARG("--log-level=error");
	ARG("--lcores=%s", lcores);
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
	runtime_litter_clean();
	if (rte_eal_init(argc, argv) < 0) {
		int rc = rte_errno;

		if (rc == EALREADY)
			return -EALREADY;
		/* a failed start may have made the folder already: nothing else removes it */
		runtime_dir_remove(e);
		return -rc;
	}
	e->eal_ours = true;
	e->telemetry = telemetry;
	return 0;
}

/* Clean the EAL droce started up, and its runtime folder. */
static void eal_finish(struct engine *e, bool cleanup)
{
	if (!e->eal_ours)
		return;
	if (cleanup)
		rte_eal_cleanup();
	runtime_dir_remove(e);
	e->eal_ours = false;
	e->telemetry = false;
}

/* Open a port, its neighbour table and the addresses the transport sends from. */
static int port_start(struct engine *e, struct engine_port *p)
{
	struct droce_port_conf pc = {
		.nb_queues = (uint16_t)e->n_lcores, .mtu = p->conf.mtu, .socket = SOCKET_ID_ANY};
	struct droce_neigh_cfg nc;
	char ring_name[DROCE_PORT_NAME_MAX], devargs[sizeof(p->conf.device) + 32];
	unsigned int i;
	int rc;

	if (p->conf.link[0] != '\0') {
		rc = droce_port_ring_device(p->conf.name, ring_name, sizeof(ring_name));
		if (rc != 0)
			return rc;
		pc.device = ring_name;
	} else {
		rc = droce_port_devargs(p->conf.device, p->conf.mtu, e->n_lcores, devargs,
					sizeof(devargs));
		if (rc != 0)
			return rc;
		pc.device = devargs;
	}
	/* a second start in this process counts from zero as well */
	memset(p->pq, 0, sizeof(p->pq));
	p->neigh_now = 0;
	rte_spinlock_init(&p->neigh_lock);
	rte_spinlock_init(&p->cap_lock);
	/* several queue pairs hold several RX rings and TX backlogs of mbufs */
	if (e->n_lcores > 1)
		pc.nb_mbufs = 8192 * e->n_lcores - 1;
	/* a memif client may come up before its server: it starts once the server is there */
	pc.start_later = p->conf.link[0] == '\0' && droce_port_devargs_waits_for_peer(devargs);
	rc = droce_port_open(&p->port, &pc);
	if (rc == -ENOTSUP && e->n_lcores > 1)
		fprintf(stderr,
			"droce: %s: the device does not offer %u queue pairs, one per engine "
			"lcore\n",
			p->conf.name, e->n_lcores);
	if (rc != 0)
		return rc;
	if (p->conf.link[0] != '\0' || memcmp(p->conf.mac, "\0\0\0\0\0\0", 6) != 0) {
		struct rte_ether_addr mac;

		/* the configured MAC (ring links have none of their own); a device that
		 * cannot take it (memif, a VF without the right) still receives frames
		 * for it in promiscuous mode */
		memcpy(mac.addr_bytes, p->conf.mac, 6);
		droce_port_set_default_mac(&p->port, &mac, p->conf.link[0] == '\0');
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
				int rc = droce_port_ring_pair(a->name, b->name,
							      (uint16_t)e->n_lcores);

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
	unsigned int i, k;

	/* QP1's queues first: an API call under way finishes before the ports go */
	engine_gsi_stop(e);
	for (k = 0; k < e->n_lcores; k++) {
		struct engine_lcore *lc = &e->lcores[k];
		struct rte_mbuf *m;

		for (i = 0; i < ENGINE_QPS_MAX; i++) {
			if (lc->qps[i] != NULL)
				droce_tqp_fini(&lc->qps[i]->pq->env, &lc->qps[i]->tqp);
			free(lc->qps[i]);
			lc->qps[i] = NULL;
		}
		lc->n_qps = 0;
		lc->n_list = 0;
		while (lc->inbox != NULL && rte_ring_dequeue(lc->inbox, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(lc->inbox);
		lc->inbox = NULL;
	}
	for (i = 0; i < e->n_ports; i++) {
		struct engine_port *p = &e->ports[i];

		engine_fault_drain(p);
		droce_capture_close(p->cap);
		p->cap = NULL;
		for (k = 0; k < e->n_lcores; k++) {
			struct engine_pq *pq = &p->pq[k];

			for (unsigned int u = 0; u < pq->n_unres; u++)
				rte_pktmbuf_free(pq->unres[u].m);
			pq->n_unres = 0;
			while (pq->loop_head != pq->loop_tail)
				rte_pktmbuf_free(
					pq->loop[pq->loop_head++ & (ENGINE_LOOP_RING - 1)]);
		}
		droce_neigh_free(p->neigh);
		droce_port_close(&p->port);
	}
	e->n_ports = 0;
	free(e->ahs);
	e->ahs = NULL;
	if (e->qp_owner != NULL)
		munmap(e->qp_owner, DROCE_QPN_MASK + 1u);
	e->qp_owner = NULL;
	e->multi = false;
}

/*
 * What several lcores need: an inbox each for the packets another lcore receives for
 * its QPs, the QPN -> lcore map, and a mbuf field for the parse that travels with them.
 */
static int lcores_prepare(struct engine *e)
{
	static const struct rte_mbuf_dynfield pkt_field = {
		.name = "droce_dynfield_pkt",
		.size = sizeof(struct droce_pkt),
		.align = __alignof__(struct droce_pkt),
	};

	for (unsigned int k = 0; k < e->n_lcores; k++) {
		struct engine_lcore *lc = &e->lcores[k];

		memset(&lc->stats, 0, sizeof(lc->stats));
		memset(lc->out_n, 0, sizeof(lc->out_n));
		lc->e = e;
		lc->idx = k;
		lc->pending = NULL;
		/* slots of about a microsecond (the wheel rounds down to a power of two) */
		droce_timer_wheel_init(&lc->wheel, rte_get_timer_cycles(),
				       droce_timer_ns_to_ticks(1000, rte_get_timer_hz()));
	}
	e->mbuf_pkt_off = -1;
	if (e->n_lcores == 1)
		return 0;
	e->qp_owner = mmap(NULL, DROCE_QPN_MASK + 1u, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (e->qp_owner == MAP_FAILED) {
		e->qp_owner = NULL;
		return -ENOMEM;
	}
	for (unsigned int k = 0; k < e->n_lcores; k++) {
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "droce_inbox_%u", k);
		e->lcores[k].inbox =
			rte_ring_create(name, ENGINE_INBOX, SOCKET_ID_ANY, RING_F_SC_DEQ);
		if (e->lcores[k].inbox == NULL)
			return -rte_errno;
	}
	/* without room for it, the owner parses the packet again */
	e->mbuf_pkt_off = rte_mbuf_dynfield_register(&pkt_field);
	e->multi = true;
	return 0;
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
	unsigned int i, lcore;
	int rc;

	if (conf == NULL || hooks == NULL || keys == NULL || conf->n_ports == 0 ||
	    conf->n_ports > DROCE_ENGINE_PORTS_MAX || conf->lcores > DROCE_ENGINE_LCORES_MAX)
		return -EINVAL;
	pthread_mutex_lock(&e->ctl_lock);
	if (e->running) {
		pthread_mutex_unlock(&e->ctl_lock);
		return 0;
	}
	e->conf = *conf;
	e->n_lcores = conf->lcores == 0 ? 1 : conf->lcores;
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
	for (i = 0, lcore = rte_get_main_lcore(); rc == 0 && i < e->n_lcores; i++) {
		lcore = rte_get_next_lcore(lcore, 1, 0);
		if (lcore >= RTE_MAX_LCORE)
			rc = -EALREADY;
		else
			e->lcores[i].lcore_id = lcore;
	}
	if (rc == 0)
		rc = lcores_prepare(e);
	if (rc == 0)
		rc = links_create(e);
	for (i = 0; rc == 0 && i < conf->n_ports; i++) {
		e->ports[i].conf = conf->port[i];
		rc = port_start(e, &e->ports[i]);
		if (rc == 0)
			e->n_ports++;
	}
	if (rc == 0)
		rc = engine_gsi_start(e);
	if (rc == 0) {
		e->hz_per_us = rte_get_timer_hz() / 1000000;
		if (e->hz_per_us == 0)
			e->hz_per_us = 1;
		__atomic_store_n(&e->running, true, __ATOMIC_RELEASE);
		for (i = 0; rc == 0 && i < e->n_lcores; i++)
			rc = rte_eal_remote_launch(engine_lcore_main, &e->lcores[i],
						   e->lcores[i].lcore_id);
		if (rc != 0) {
			__atomic_store_n(&e->running, false, __ATOMIC_RELEASE);
			while (i-- > 1)
				rte_eal_wait_lcore(e->lcores[i - 1].lcore_id);
		}
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
	for (unsigned int k = 0; k < e->n_lcores; k++)
		rte_eal_wait_lcore(e->lcores[k].lcore_id);
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

int droce_engine_port_index(const char *name)
{
	struct engine *e = &droce_engine;
	int rc = -ENOENT;

	if (name == NULL)
		return -EINVAL;
	/* the lock keeps droce_engine_stop() from emptying the port table meanwhile */
	pthread_mutex_lock(&e->ctl_lock);
	if (!droce_engine_running())
		rc = -ENODEV;
	for (unsigned int i = 0; rc == -ENOENT && i < e->n_ports; i++)
		if (strcmp(e->ports[i].conf.name, name) == 0)
			rc = (int)i;
	pthread_mutex_unlock(&e->ctl_lock);
	return rc;
}

int droce_engine_port_gids(unsigned int port, uint8_t (*gids)[16], unsigned int n)
{
	struct engine *e = &droce_engine;
	int rc;

	if (gids == NULL && n > 0)
		return -EINVAL;
	pthread_mutex_lock(&e->ctl_lock);
	if (!droce_engine_running()) {
		rc = -ENODEV;
	} else if (port >= e->n_ports) {
		rc = -ENOENT;
	} else {
		/* set when the port started, unchanged while it runs */
		const struct droce_tport_addr *a = &e->ports[port].addr;

		for (unsigned int i = 0; i < a->gid_count && i < n; i++)
			memcpy(gids[i], a->gid[i].raw, 16);
		rc = (int)a->gid_count;
	}
	pthread_mutex_unlock(&e->ctl_lock);
	return rc;
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
		/* the sums over the lcores' queue pairs */
		for (unsigned int k = 0; k < e->n_lcores; k++) {
			const struct droce_port_qstats *q = &p->port.qstats[k];

			st->rx_pkts += q->rx_pkts;
			st->tx_pkts += q->tx_pkts;
			st->tx_dropped += q->tx_dropped;
			st->tx_full += q->tx_full;
			st->tx_waiting += droce_port_tx_pending(&p->port, (uint16_t)k);
			st->rx_bytes += q->rx_bytes;
			st->tx_bytes += q->tx_bytes;
			st->loopback_pkts += p->pq[k].loop_pkts;
			st->loopback_dropped += p->pq[k].loop_dropped;
		}
		for (unsigned int k = 0; k < e->n_lcores; k++) {
			const struct droce_fault *f = p->pq[k].fault;
			struct droce_fault_stats fs;

			if (f == NULL)
				continue;
			droce_fault_stats_get(f, &fs);
			st->fault = true;
			st->fault_offered += fs.rx_pkts;
			st->fault_sent += fs.tx_pkts;
			st->fault_dropped += fs.injected[DROCE_FAULT_DROP];
			st->fault_duplicated += fs.injected[DROCE_FAULT_DUP];
			st->fault_reordered += fs.injected[DROCE_FAULT_REORDER];
			st->fault_corrupted += fs.injected[DROCE_FAULT_CORRUPT];
			st->fault_delayed += fs.injected[DROCE_FAULT_DELAY];
			st->fault_held += droce_fault_held_count(f);
		}
		rc = 0;
	}
	pthread_mutex_unlock(&e->ctl_lock);
	return rc;
}

/* Add the counters of lcore @p k to @p stats. */
static void lcore_stats_add(const struct engine *e, unsigned int k,
			    struct droce_engine_stats *stats)
{
	const struct droce_engine_stats *s = &e->lcores[k].stats;

	/* written by that lcore only: a torn 64-bit read is not possible on x86-64 */
	stats->loops += s->loops;
	stats->busy_loops += s->busy_loops;
	stats->rx_pkts += s->rx_pkts;
	stats->tx_pkts += s->tx_pkts;
	stats->tx_waits += s->tx_waits;
	stats->rx_dispatched += s->rx_dispatched;
	stats->rx_dispatch_dropped += s->rx_dispatch_dropped;
	stats->busy_cycles += s->busy_cycles;
	stats->idle_cycles += s->idle_cycles;
	/* what the ports drop before any QP: the sums of the lcore's queues' own counters */
	for (unsigned int i = 0; i < e->n_ports; i++) {
		const struct engine_port_rx *rx = &e->ports[i].pq[k].rx;

		stats->rx_not_roce += rx->not_roce;
		stats->rx_no_qp += rx->no_qp;
		for (unsigned int r = 0; r < DROCE_PARSE_STATUS_COUNT; r++)
			stats->parse_errors[r] += rx->parse[r];
	}
}

void droce_engine_stats_get(struct droce_engine_stats *stats)
{
	const struct engine *e = &droce_engine;

	memset(stats, 0, sizeof(*stats));
	for (unsigned int k = 0; k < e->n_lcores; k++)
		lcore_stats_add(e, k, stats);
}

unsigned int droce_engine_lcores(void)
{
	return droce_engine_running() ? droce_engine.n_lcores : 0;
}

int droce_engine_lcore_stats(unsigned int idx, struct droce_engine_stats *stats)
{
	const struct engine *e = &droce_engine;

	if (!droce_engine_running())
		return -ENODEV;
	if (idx >= e->n_lcores || stats == NULL)
		return -EINVAL;
	memset(stats, 0, sizeof(*stats));
	lcore_stats_add(e, idx, stats);
	return 0;
}

int droce_engine_lcore_id(unsigned int idx)
{
	if (!droce_engine_running())
		return -ENODEV;
	return idx < droce_engine.n_lcores ? (int)droce_engine.lcores[idx].lcore_id : -EINVAL;
}

int droce_engine_qp_lcore(uint32_t qpn)
{
	struct engine *e = &droce_engine;
	int rc;

	pthread_mutex_lock(&e->ctl_lock);
	if (!droce_engine_running())
		rc = -ENODEV;
	else if (!e->multi)
		rc = 0; /* every QP, when it exists: the caller asked about one of its own */
	else if ((rc = engine_qp_owner(e, qpn)) < 0)
		rc = -ENOENT;
	pthread_mutex_unlock(&e->ctl_lock);
	return rc;
}
