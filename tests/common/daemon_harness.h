/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced for tests: a droced process (the build's binary, DROCE_DROCED) on a
 * socket in a fresh temporary folder, and application processes forked from
 * the test with DROCE_DAEMON pointing at it. The test process itself never
 * makes a verbs call, so each application starts with fresh verbs state.
 */
#ifndef DROCE_DAEMON_HARNESS_H
#define DROCE_DAEMON_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

struct test_daemon {
	pid_t pid;
	char dir[64];
	char sock[100];
	char log[100];
};

/* Two devices joined back to back inside droced (IPv4 and IPv6 addresses). */
#define TEST_DAEMON_DEV0 "droce0:mac=02:00:00:00:0d:01,ip=10.9.0.1,ip=fd00:9::1,mtu=4200,link=d0"
#define TEST_DAEMON_DEV1 "droce1:mac=02:00:00:00:0d:02,ip=10.9.0.2,ip=fd00:9::2,mtu=4200,link=d0"

/**
 * Start droced with @p argv (extra options, NULL-terminated, may be NULL) and
 * the two devices above; return once its socket accepts. Asserts on failure.
 * The socket is droced.sock in t->dir: a new /tmp/droced-test-* folder unless
 * t->dir already names one.
 */
void test_daemon_start(struct test_daemon *t, const char *const *argv);

/** SIGTERM, then wait (up to 20 s): droced's exit status, -1 if it did not exit. */
int test_daemon_stop(struct test_daemon *t);

/** droced's log (stderr) so far, for assertion messages; static buffer. */
const char *test_daemon_log(const struct test_daemon *t);

/** The number @p key of droced's answer to DPDK telemetry command @p cmd. Asserts on failure. */
uint64_t test_daemon_telemetry_u64(const struct test_daemon *t, const char *cmd, const char *key);

/** Run @p fn(@p arg) in a forked application process using @p t. */
pid_t test_app_start(const struct test_daemon *t, int (*fn)(void *arg), void *arg);

/** Wait for an application: its exit code, 128 + signal, or -1 after @p timeout_s (killed). */
int test_app_wait(pid_t pid, int timeout_s);

/** Zeroed memory shared by the test and every process it forks. */
void *test_shared_mem(size_t len);

/** Wait until *@p word reaches @p value (another process stores it). false after 20 s. */
bool test_wait_word(volatile unsigned int *word, unsigned int value);

/* ------------------------------------------------------------ one end of a test */

/** An application's end: device, PD, one CQ, one QP, a buffer in droce_alloc_shared() memory. */
struct test_app_end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
	union ibv_gid gid;
};

/** What two ends tell each other through shared memory. */
struct test_app_addr {
	uint32_t qpn, rkey;
	uint64_t addr;
	union ibv_gid gid;
};

/** Open device @p index, make the objects, QP to INIT. 0 or an errno. */
int test_app_end_open(struct test_app_end *e, int index, enum ibv_qp_type type, size_t len);
void test_app_end_addr(const struct test_app_end *e, struct test_app_addr *a);
/** QP to RTR and RTS towards @p peer. 0 or an errno. */
int test_app_end_connect(struct test_app_end *e, const struct test_app_addr *peer);
/** Poll one completion (up to 10 s). 1, 0 on timeout, < 0 on error. */
int test_app_end_poll(struct test_app_end *e, struct ibv_wc *wc);
void test_app_end_close(struct test_app_end *e);

#endif /* DROCE_DAEMON_HARNESS_H */
