/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced's life around its applications: SIGTERM flushes a connected
 * application's work requests to its CQ and ends with exit status 0 and no
 * socket file; a second droced does not take a live socket, and does take a
 * stale one; an application closes its device and opens it again.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_harness.h"

struct meet {
	unsigned int ready;
	unsigned int stopped;
	char why[160];
};

static struct meet *meet;

#define FAIL(...)                                                    \
	do {                                                         \
		snprintf(meet->why, sizeof(meet->why), __VA_ARGS__); \
		return 1;                                            \
	} while (0)

static int flushed_app(void *arg)
{
	struct test_app_end e;
	struct ibv_wc wc;
	int flushed = 0;

	(void)arg;
	if (test_app_end_open(&e, 0, IBV_QPT_RC, 65536) != 0)
		FAIL("open");
	for (int i = 0; i < 3; i++) {
		struct ibv_sge s = {.addr = (uintptr_t)e.buf, .length = 1024, .lkey = e.mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = 100u + (unsigned int)i,
					 .sg_list = &s,
					 .num_sge = 1},
				   *bad;

		if (ibv_post_recv(e.qp, &wr, &bad) != 0)
			FAIL("post_recv");
	}
	__atomic_store_n(&meet->ready, 1, __ATOMIC_RELEASE);
	while (flushed < 3 && test_app_end_poll(&e, &wc) == 1) {
		if (wc.status != IBV_WC_WR_FLUSH_ERR || wc.wr_id != 100u + (unsigned int)flushed)
			FAIL("completion %d: %s wr_id %llu", flushed, ibv_wc_status_str(wc.status),
			     (unsigned long long)wc.wr_id);
		flushed++;
	}
	if (flushed != 3)
		FAIL("%d of 3 receives flushed when droced stopped", flushed);
	if (!test_wait_word(&meet->stopped, 1))
		FAIL("droced did not stop");
	if (ibv_alloc_pd(e.ctx) != NULL || errno != EPIPE)
		FAIL("a control call after droced stopped: errno %d, not EPIPE", errno);
	/* the objects go locally without droced */
	test_app_end_close(&e);
	return 0;
}

Test(daemon_lifecycle, sigterm_flushes_the_applications_work_and_removes_the_socket, .timeout = 90)
{
	struct test_daemon d = {.pid = 0};
	struct stat st;
	pid_t app;
	int status;

	meet = test_shared_mem(sizeof(*meet));
	test_daemon_start(&d, NULL);
	app = test_app_start(&d, flushed_app, NULL);
	cr_assert(test_wait_word(&meet->ready, 1), "app: %s", meet->why);
	cr_assert_eq(kill(d.pid, SIGTERM), 0);
	cr_assert_eq(waitpid(d.pid, &status, 0), d.pid);
	d.pid = -1;
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "droced's exit: %d: %s", status,
		  test_daemon_log(&d));
	cr_expect_neq(stat(d.sock, &st), 0, "the socket file is gone");
	__atomic_store_n(&meet->stopped, 1, __ATOMIC_RELEASE);
	cr_expect_eq(test_app_wait(app, 60), 0, "app: %s", meet->why);
	cr_expect(strstr(test_daemon_log(&d), "stopping (1 application connected)") != NULL, "%s",
		  test_daemon_log(&d));
	test_daemon_stop(&d);
}

/* droced on @p sock in the foreground: its exit status. */
static int run_droced(const char *sock, const char *log)
{
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		FILE *f = freopen(log, "w", stderr);

		(void)f;
		execl(getenv("DROCE_DROCED"), "droced", "-s", sock, "-d", TEST_DAEMON_DEV0, NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Test(daemon_lifecycle, a_live_socket_is_not_taken_over, .timeout = 90)
{
	struct test_daemon d = {.pid = 0};
	char log[160], text[512] = "";
	FILE *f;

	test_daemon_start(&d, NULL);
	snprintf(log, sizeof(log), "%s/second.log", d.dir);
	cr_expect_eq(run_droced(d.sock, log), 1, "a second droced on a live socket fails");
	f = fopen(log, "r");
	if (f != NULL) {
		size_t n = fread(text, 1, sizeof(text) - 1, f);

		text[n] = '\0';
		fclose(f);
	}
	cr_expect(strstr(text, "another droced serves it") != NULL, "%s", text);
	cr_expect_eq(test_daemon_stop(&d), 0, "the first one still stops cleanly");
}

Test(daemon_lifecycle, a_stale_socket_is_taken_over, .timeout = 90)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct test_daemon d = {.dir = "/tmp/droced-test-XXXXXX"};
	struct stat st;
	int s;

	cr_assert_not_null(mkdtemp(d.dir));
	/* a socket file whose droced is gone: bound, never listening, closed */
	s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/droced.sock", d.dir);
	cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	close(s);
	cr_assert_eq(stat(a.sun_path, &st), 0);
	test_daemon_start(&d, NULL);
	cr_expect_eq(test_daemon_stop(&d), 0);
}

static int reopen_app(void *arg)
{
	struct test_app_end e;

	(void)arg;
	for (int round = 0; round < 3; round++) {
		if (test_app_end_open(&e, round % 2, IBV_QPT_RC, 65536) != 0)
			FAIL("open, round %d", round);
		test_app_end_close(&e);
	}
	return 0;
}

Test(daemon_lifecycle, an_application_closes_and_opens_again, .timeout = 90)
{
	struct test_daemon d = {.pid = 0};

	meet = test_shared_mem(sizeof(*meet));
	test_daemon_start(&d, NULL);
	cr_expect_eq(test_app_wait(test_app_start(&d, reopen_app, NULL), 60), 0, "%s", meet->why);
	cr_expect_eq(test_daemon_stop(&d), 0);
}
