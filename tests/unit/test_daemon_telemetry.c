/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced on DPDK telemetry: the engine's commands (/droce/ports ...) and
 * droced's own, /droced/clients and /droced/client,<pid>: the applications
 * connected, their uid, objects and device, gone once they close; /droced/loop: the loop's
 * wake-ups.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon_harness.h"

static struct test_daemon daemon_;
static unsigned int *step;
static char reply[65536];

static void setup(void)
{
	step = test_shared_mem(sizeof(*step) * 2);
	test_daemon_start(&daemon_, NULL);
}

static void teardown(void)
{
	cr_expect_eq(test_daemon_stop(&daemon_), 0, "%s", test_daemon_log(&daemon_));
}

TestSuite(daemon_telemetry, .init = setup, .fini = teardown, .timeout = 60);

/* droced's engine serves telemetry in its runtime folder (file prefix droce-<pid>). */
static int tel_connect(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char hello[4096];
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	cr_assert_geq(s, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "/var/run/dpdk/droce-%d/dpdk_telemetry.v2",
		 (int)daemon_.pid);
	/* droced listens before its engine is up: the EAL's socket comes a little later */
	for (int i = 0; i < 1000 && access(a.sun_path, F_OK) != 0; i++)
		usleep(10000);
	cr_assert_eq(connect(s, (struct sockaddr *)&a, sizeof(a)), 0, "connect %s", a.sun_path);
	cr_assert_gt(read(s, hello, sizeof(hello)), 0, "the greeting");
	return s;
}

static const char *ask(int s, const char *cmd)
{
	ssize_t n;

	cr_assert_eq(write(s, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
	n = read(s, reply, sizeof(reply) - 1);
	cr_assert_gt(n, 0, "a reply to %s", cmd);
	reply[n] = '\0';
	return reply;
}

/* Ask until the answer is no longer null: the EAL serves its socket before droced's engine runs. */
static const char *ask_ready(int s, const char *cmd)
{
	for (int i = 0; i < 1000 && strstr(ask(s, cmd), "null") != NULL; i++)
		usleep(10000);
	return reply;
}

/* An application holding a device, PD, CQ, QP and MR until told to go. */
static int holder(void *arg)
{
	struct test_app_end e;

	(void)arg;
	if (test_app_end_open(&e, 1, IBV_QPT_RC, 4096) != 0)
		return 1;
	__atomic_store_n(&step[0], 1, __ATOMIC_RELEASE);
	if (!test_wait_word(&step[1], 1))
		return 2;
	test_app_end_close(&e);
	return 0;
}

Test(daemon_telemetry, clients_are_listed_while_connected)
{
	char cmd[64], pid[16];
	pid_t app;
	int s;

	if (access("/var/run/dpdk", W_OK) != 0)
		cr_skip_test("no DPDK runtime folder to reach droced's telemetry in");
	s = tel_connect();
	cr_expect(strstr(ask_ready(s, "/droce/ports"), "droce0") != NULL, "%s", reply);
	cr_expect(strstr(ask(s, "/droced/clients"), "[]") != NULL, "none yet: %s", reply);
	app = test_app_start(&daemon_, holder, NULL);
	cr_assert(test_wait_word(&step[0], 1), "the application opened its device");
	snprintf(pid, sizeof(pid), "%d", (int)app);
	cr_expect(strstr(ask(s, "/droced/clients"), pid) != NULL, "%s", reply);
	snprintf(cmd, sizeof(cmd), "/droced/client,%d", (int)app);
	ask(s, cmd);
	cr_expect(strstr(reply, "\"device\":\"droce1\"") != NULL, "%s", reply);
	cr_expect(strstr(reply, "\"objects\":4") != NULL, "a PD, a CQ, a QP and an MR: %s", reply);
	cr_expect(strstr(ask(s, "/droced/client,1"), "null") != NULL, "no such client: %s", reply);
	__atomic_store_n(&step[1], 1, __ATOMIC_RELEASE);
	cr_expect_eq(test_app_wait(app, 30), 0);
	for (int i = 0; i < 200 && strstr(ask(s, "/droced/clients"), pid) != NULL; i++)
		usleep(10000);
	cr_expect(strstr(reply, pid) == NULL, "gone once it closed: %s", reply);
	close(s);
}

/* /droced/loop counts the loop's wake-ups: an application's requests wake it. */
Test(daemon_telemetry, loop_passes_grow_with_requests)
{
	uint64_t before, after;
	pid_t app;

	if (access("/var/run/dpdk", W_OK) != 0)
		cr_skip_test("no DPDK runtime folder to reach droced's telemetry in");
	before = test_daemon_telemetry_u64(&daemon_, "/droced/loop", "passes");
	app = test_app_start(&daemon_, holder, NULL);
	cr_assert(test_wait_word(&step[0], 1), "the application opened its device");
	after = test_daemon_telemetry_u64(&daemon_, "/droced/loop", "passes");
	/* a connection, then OPEN and a request for each of PD, CQ, QP, MR at least */
	cr_expect_geq(after - before, 5, "%llu wake-ups for the application's requests",
		      (unsigned long long)(after - before));
	__atomic_store_n(&step[1], 1, __ATOMIC_RELEASE);
	cr_expect_eq(test_app_wait(app, 30), 0);
}
