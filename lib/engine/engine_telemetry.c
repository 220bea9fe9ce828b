/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce's counters through DPDK telemetry: the engine's EAL answers on its telemetry
 * socket (dpdk-telemetry.py -f <file prefix>, or any client of the v2 socket). The
 * callbacks run on DPDK's telemetry thread and read through the control path, as any
 * reader of the counters does: nothing on the lcore changes for them.
 *
 *   /droce/ports                    the port names
 *   /droce/port/counters,<port>     the port's counters (droce_counters.h names)
 *   /droce/qps                      the QP numbers the engine runs
 *   /droce/qp/counters,<qpn>        one QP's counters
 *   /droce/lcore                    the engine lcore: loops, busy loops, packets
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_telemetry.h>

#include "droce_counters.h"
#include "engine_priv.h"

#define COUNTERS_MAX 256

static int counters_dict(struct rte_tel_data *d, const struct droce_counter *c, int n)
{
	if (n < 0)
		return n;
	rte_tel_data_start_dict(d);
	for (int i = 0; i < n && i < COUNTERS_MAX; i++)
		rte_tel_data_add_dict_u64(d, c[i].name, c[i].value);
	return 0;
}

static int tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct engine *e = &droce_engine;

	(void)cmd;
	(void)params;
	if (!droce_engine_running())
		return -ENODEV;
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	/* ports are set at start and never change while the engine runs */
	for (unsigned int i = 0; i < e->n_ports; i++)
		rte_tel_data_add_array_string(d, e->ports[i].conf.name);
	return 0;
}

static int tel_port_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct droce_counter c[COUNTERS_MAX];

	(void)cmd;
	if (params == NULL || params[0] == '\0')
		return -EINVAL;
	return counters_dict(d, c, droce_engine_port_counters(params, c, COUNTERS_MAX));
}

static int tel_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint32_t qpns[ENGINE_QPS_MAX / 2];
	int n;

	(void)cmd;
	(void)params;
	n = droce_engine_qp_list(qpns, RTE_DIM(qpns));
	if (n < 0)
		return n;
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	/* an array holds RTE_TEL_MAX_ARRAY_ENTRIES: the first of them (/droce/port/counters
	 * has the totals) */
	for (int i = 0; i < n && i < (int)RTE_DIM(qpns) && i < RTE_TEL_MAX_ARRAY_ENTRIES; i++)
		rte_tel_data_add_array_int(d, (int)qpns[i]);
	return 0;
}

static int tel_qp_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct droce_counter c[COUNTERS_MAX];
	char *end;
	unsigned long qpn;

	(void)cmd;
	if (params == NULL || params[0] == '\0')
		return -EINVAL;
	qpn = strtoul(params, &end, 0);
	if (*end != '\0' || qpn > 0xffffff)
		return -EINVAL;
	return counters_dict(d, c, droce_engine_qp_counters((uint32_t)qpn, c, COUNTERS_MAX));
}

/* The engine's sums, or one lcore's counters with its index as the parameter. */
static int tel_lcore(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct droce_engine_stats s;

	(void)cmd;
	if (!droce_engine_running())
		return -ENODEV;
	if (params != NULL && params[0] != '\0') {
		char *end;
		unsigned long idx = strtoul(params, &end, 10);

		if (*end != '\0' || idx >= droce_engine_lcores() ||
		    droce_engine_lcore_stats((unsigned int)idx, &s) != 0)
			return -EINVAL;
	} else {
		droce_engine_stats_get(&s);
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "lcores", droce_engine_lcores());
	rte_tel_data_add_dict_u64(d, "loops", s.loops);
	rte_tel_data_add_dict_u64(d, "busy_loops", s.busy_loops);
	rte_tel_data_add_dict_u64(d, "rx_pkts", s.rx_pkts);
	rte_tel_data_add_dict_u64(d, "tx_pkts", s.tx_pkts);
	rte_tel_data_add_dict_u64(d, "rx_not_roce", s.rx_not_roce);
	rte_tel_data_add_dict_u64(d, "rx_no_qp", s.rx_no_qp);
	rte_tel_data_add_dict_u64(d, "rx_dispatched", s.rx_dispatched);
	rte_tel_data_add_dict_u64(d, "rx_dispatch_dropped", s.rx_dispatch_dropped);
	rte_tel_data_add_dict_u64(d, "busy_cycles", s.busy_cycles);
	rte_tel_data_add_dict_u64(d, "idle_cycles", s.idle_cycles);
	rte_tel_data_add_dict_u64(d, "cycles_hz", rte_get_timer_hz());
	return 0;
}

void engine_telemetry_register(void)
{
	static bool done;

	/* commands live as long as the EAL: once per process */
	if (done)
		return;
	done = true;
	rte_telemetry_register_cmd("/droce/ports", tel_ports, "droce's ports. No parameters");
	rte_telemetry_register_cmd("/droce/port/counters", tel_port_counters,
				   "A droce port's counters. Parameter: the port name");
	rte_telemetry_register_cmd("/droce/qps", tel_qps, "The QPs droce runs. No parameters");
	rte_telemetry_register_cmd("/droce/qp/counters", tel_qp_counters,
				   "A droce QP's counters. Parameter: the QP number");
	rte_telemetry_register_cmd(
		"/droce/lcore", tel_lcore,
		"droce's engine lcores: loops, busy loops, packets, their sums. Parameter: "
		"none, or an lcore's index for that lcore alone");
}

/*
 * The socket DPDK 22.11's telemetry listens on, in the EAL's runtime folder, and the name the
 * engine tries a socket of the same kind under beside it. DPDK copes with its own name taken
 * (it removes a stale socket or adds a suffix), not with a path too long for a UNIX socket,
 * with a UNIX socket refused (a sandbox), nor with a folder that takes no socket.
 */
#define TELEMETRY_SOCKET "dpdk_telemetry.v2"
#define PROBE_SOCKET     "droce_tel_probe"

/* mkdir @p path as the EAL does (0700): 1 if made here, 0 if it was there, or -errno. */
static int dir_make(const char *path)
{
	if (mkdir(path, 0700) == 0)
		return 1;
	return errno == EEXIST ? 0 : -errno;
}

bool engine_telemetry_possible(const char *dir, char *why, size_t len)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char parent[sizeof(a.sun_path)] = "";
	const char *slash = strrchr(dir, '/');
	int made_parent = 0, made_dir = 0, fd = -1;
	bool ok = false;

	if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", dir, TELEMETRY_SOCKET) >=
	    sizeof(a.sun_path)) {
		snprintf(why, len, "%s/%s: too long for a UNIX socket", dir, TELEMETRY_SOCKET);
		return false;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, len, "no UNIX socket: %s", strerror(errno));
		return false;
	}
	/* the folder and its parent, as the EAL will make them; removed again if made here */
	if (slash != NULL && slash != dir) {
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - dir), dir);
		made_parent = dir_make(parent);
	}
	if (made_parent >= 0)
		made_dir = dir_make(dir);
	if (made_parent < 0 || made_dir < 0) {
		snprintf(why, len, "cannot create %s: %s", made_parent < 0 ? parent : dir,
			 strerror(made_parent < 0 ? -made_parent : -made_dir));
		goto out;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", dir, PROBE_SOCKET);
	unlink(a.sun_path);
	if (bind(fd, (const struct sockaddr *)&a, sizeof(a)) != 0) {
		snprintf(why, len, "no socket in %s: %s", dir, strerror(errno));
		goto out;
	}
	unlink(a.sun_path);
	ok = true;
out:
	close(fd);
	if (made_dir > 0)
		rmdir(dir);
	if (made_parent > 0)
		rmdir(parent);
	return ok;
}
