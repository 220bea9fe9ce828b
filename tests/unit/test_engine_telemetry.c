/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce's counters through DPDK telemetry: the embedded engine's telemetry socket answers
 * /droce/ports, /droce/port/counters, /droce/qps, /droce/qp/counters and /droce/lcore with
 * the values the counter API gives, to a client of the v2 socket and to Debian's
 * dpdk-telemetry.py.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_eal.h>

#include <droce_counters.h>
#include <droce_engine.h>

#include "ud_pair.h"

static int sock = -1;
static char reply[65536];

static void setup(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char hello[4096];

	ud_pair_open(NULL, NULL);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/dpdk_telemetry.v2", rte_eal_get_runtime_dir());
	sock = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	cr_assert_geq(sock, 0);
	cr_assert_eq(connect(sock, (struct sockaddr *)&a, sizeof(a)), 0, "connect %s", a.sun_path);
	cr_assert_gt(read(sock, hello, sizeof(hello)), 0, "the socket's greeting");
}

static void teardown(void)
{
	if (sock >= 0)
		close(sock);
}

TestSuite(engine_telemetry, .init = setup, .fini = teardown, .timeout = 60);

static const char *ask(const char *cmd)
{
	ssize_t n;

	cr_assert_eq(write(sock, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
	n = read(sock, reply, sizeof(reply) - 1);
	cr_assert_gt(n, 0, "a reply to %s", cmd);
	reply[n] = '\0';
	return reply;
}

/* The number after "name": in a JSON reply, or -1. */
static long long json_u64(const char *json, const char *name)
{
	char key[128];
	const char *p;

	snprintf(key, sizeof(key), "\"%s\":", name);
	p = strstr(json, key);
	return p == NULL ? -1 : strtoll(p + strlen(key), NULL, 10);
}

Test(engine_telemetry, ports_listed)
{
	const char *r = ask("/droce/ports");

	cr_expect(strstr(r, "\"/droce/ports\": [\"droce0\", \"droce1\"]") != NULL ||
			  strstr(r, "\"/droce/ports\":[\"droce0\",\"droce1\"]") != NULL,
		  "both ports: %s", r);
}

Test(engine_telemetry, port_counters_equal_the_api)
{
	struct droce_counter c[256];
	int n, id;

	send_one(1);
	ask("/droce/port/counters,droce1");
	n = droce_port_counters(e1.ctx, 1, c, 256);
	id = droce_counter_find("rcvd_pkts");
	cr_assert_gt(n, 0);
	cr_assert_geq(id, 0);
	for (int i = 0; i < n; i++)
		if (c[i].id == (uint32_t)id)
			cr_expect_eq(json_u64(reply, "rcvd_pkts"), (long long)c[i].value,
				     "rcvd_pkts: %s", reply);
	cr_expect_geq(json_u64(reply, "rcvd_pkts"), 1, "the SEND counted");
	cr_expect_geq(json_u64(reply, "icrc_error"), 0, "parse reasons too");
}

Test(engine_telemetry, qps_and_their_counters)
{
	char cmd[64];

	send_one(1);
	snprintf(cmd, sizeof(cmd), "%u", e1.qp->qp_num);
	cr_expect(strstr(ask("/droce/qps"), cmd) != NULL, "droce1's QP listed: %s", reply);
	snprintf(cmd, sizeof(cmd), "/droce/qp/counters,%u", e1.qp->qp_num);
	cr_expect_eq(json_u64(ask(cmd), "rdma_recvs"), 1, "%s", reply);
	ask("/droce/qp/counters,999999999");
	cr_expect(strstr(reply, "null") != NULL, "no such QP: %s", reply);
}

Test(engine_telemetry, lcore_loops)
{
	const char *r = ask("/droce/lcore");

	cr_expect_gt(json_u64(r, "loops"), 0, "%s", r);
	cr_expect_geq(json_u64(r, "loops"), json_u64(r, "busy_loops"));
	cr_expect_eq(json_u64(r, "lcores"), 1, "%s", r);
	cr_expect_gt(json_u64(r, "busy_cycles") + json_u64(r, "idle_cycles"), 0, "%s", r);
	cr_expect_gt(json_u64(r, "cycles_hz"), 0, "%s", r);
}

Test(engine_telemetry, one_lcore_by_index)
{
	const char *r = ask("/droce/lcore,0");

	cr_expect_gt(json_u64(r, "loops"), 0, "%s", r);
	cr_expect_eq(json_u64(r, "rx_dispatched"), 0, "one lcore hands nothing on: %s", r);
	r = ask("/droce/lcore,1");
	cr_expect(strstr(r, "null") != NULL, "no lcore 1: %s", r);
	r = ask("/droce/lcore,x");
	cr_expect(strstr(r, "null") != NULL, "not an index: %s", r);
}

Test(engine_telemetry, dpdk_telemetry_py_reads_them)
{
	const char *prefix = strrchr(rte_eal_get_runtime_dir(), '/') + 1;
	char cmd[512], out[8192];
	size_t n;
	FILE *p;

	if (access("/usr/bin/dpdk-telemetry.py", X_OK) != 0)
		cr_skip_test("dpdk-telemetry.py is not installed (Debian package dpdk-dev)");
	snprintf(cmd, sizeof(cmd),
		 "echo /droce/ports | /usr/bin/python3 /usr/bin/dpdk-telemetry.py -f %s 2>&1",
		 prefix);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	pclose(p);
	cr_expect(strstr(out, "droce0") != NULL && strstr(out, "droce1") != NULL, "%s", out);
}
