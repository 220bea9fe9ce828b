/* SPDX-License-Identifier: BSD-3-Clause */
/* droced and its application processes for tests (daemon_harness.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "droce_shared.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static bool socket_accepts(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool ok;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	ok = s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (s >= 0)
		close(s);
	return ok;
}

void test_daemon_start(struct test_daemon *t, const char *const *argv)
{
	const char *bin = getenv("DROCE_DROCED");
	const char *args[32];
	int n = 0, status;
	pid_t parent;
	double until;

	cr_assert_not_null(bin, "DROCE_DROCED names the droced binary (meson sets it)");
	if (t->dir[0] == '\0') {
		snprintf(t->dir, sizeof(t->dir), "/tmp/droced-test-XXXXXX");
		cr_assert_not_null(mkdtemp(t->dir));
	}
	snprintf(t->sock, sizeof(t->sock), "%s/droced.sock", t->dir);
	snprintf(t->log, sizeof(t->log), "%s/droced.log", t->dir);
	args[n++] = bin;
	args[n++] = "-s";
	args[n++] = t->sock;
	args[n++] = "-d";
	args[n++] = TEST_DAEMON_DEV0;
	args[n++] = "-d";
	args[n++] = TEST_DAEMON_DEV1;
	for (int i = 0; argv != NULL && argv[i] != NULL && n < 30; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	parent = getpid();
	t->pid = fork();
	cr_assert_geq(t->pid, 0);
	if (t->pid == 0) {
		int fd = open(t->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		/* a test killed on its timeout takes its droced with it: an orphan droced
		 * would poll a CPU for the rest of the run */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
			_exit(127);

		if (fd >= 0) {
			dup2(fd, 2);
			dup2(fd, 1);
		}
		unsetenv("DROCE_DAEMON");
		/* droced's engine on plain pages: tests running side by side do not race for
		 * the machine's hugepages (applications' hugepage memory is theirs) */
		setenv("DROCE_NO_HUGE", "1", 1);
		execv(bin, (char *const *)args);
		_exit(127);
	}
	until = now_s() + 30;
	while (!socket_accepts(t->sock)) {
		if (waitpid(t->pid, &status, WNOHANG) == t->pid) {
			t->pid = -1;
			cr_assert_fail("droced exited at start: %s", test_daemon_log(t));
		}
		if (now_s() > until) {
			/* never leave a droced behind: it holds hugepages and CPU */
			kill(t->pid, SIGKILL);
			waitpid(t->pid, &status, 0);
			t->pid = -1;
			cr_assert_fail("droced did not listen within 30 s: %s", test_daemon_log(t));
		}
		usleep(10000);
	}
}

const char *test_daemon_log(const struct test_daemon *t)
{
	static char buf[4096];
	FILE *f = fopen(t->log, "r");
	size_t n = 0;

	if (f != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/* droced's DPDK telemetry socket: its EAL's runtime folder, file prefix droce-<pid>. */
static void telemetry_path(const struct test_daemon *t, char *path, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	const char *base = getuid() == 0 ? "/var/run" : xdg != NULL ? xdg : "/tmp";

	snprintf(path, len, "%s/dpdk/droce-%d/dpdk_telemetry.v2", base, (int)t->pid);
}

uint64_t test_daemon_telemetry_u64(const struct test_daemon *t, const char *cmd, const char *key)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char reply[4096], field[64], *at;
	unsigned long long v;
	ssize_t n;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	cr_assert_geq(s, 0);
	telemetry_path(t, a.sun_path, sizeof(a.sun_path));
	/* droced listens before its EAL serves telemetry: the socket comes a little later */
	for (int i = 0; i < 1000 && access(a.sun_path, F_OK) != 0; i++)
		usleep(10000);
	cr_assert_eq(connect(s, (struct sockaddr *)&a, sizeof(a)), 0, "connect %s: %s", a.sun_path,
		     strerror(errno));
	cr_assert_gt(read(s, reply, sizeof(reply)), 0, "the telemetry greeting");
	cr_assert_eq(write(s, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
	n = read(s, reply, sizeof(reply) - 1);
	close(s);
	cr_assert_gt(n, 0, "a reply to %s", cmd);
	reply[n] = '\0';
	snprintf(field, sizeof(field), "\"%s\":", key);
	at = strstr(reply, field);
	cr_assert_not_null(at, "%s answers no %s: %s", cmd, key, reply);
	cr_assert_eq(sscanf(at + strlen(field), "%llu", &v), 1, "%s: %s", key, reply);
	return v;
}

int test_daemon_stop(struct test_daemon *t)
{
	int status = 0, rc = -1;
	double until = now_s() + 20;
	char cmd[160];

	if (t->pid > 0) {
		kill(t->pid, SIGTERM);
		while (now_s() < until) {
			if (waitpid(t->pid, &status, WNOHANG) == t->pid) {
				rc = WIFEXITED(status) ? WEXITSTATUS(status)
						       : 128 + WTERMSIG(status);
				break;
			}
			usleep(10000);
		}
		if (rc < 0) {
			kill(t->pid, SIGKILL);
			waitpid(t->pid, &status, 0);
		}
		t->pid = -1;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	if (strncmp(t->dir, "/tmp/droced-test-", 17) == 0 && system(cmd) != 0)
		(void)0;
	return rc;
}

pid_t test_app_start(const struct test_daemon *t, int (*fn)(void *arg), void *arg)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setenv("DROCE_DAEMON", t->sock, 1);
		_exit(fn(arg));
	}
	return pid;
}

int test_app_wait(pid_t pid, int timeout_s)
{
	double until = now_s() + timeout_s;
	int status;

	while (now_s() < until) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		usleep(5000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

void *test_shared_mem(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(p, MAP_FAILED);
	return p;
}

bool test_wait_word(volatile unsigned int *word, unsigned int value)
{
	double until = now_s() + 20;

	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < value) {
		if (now_s() > until)
			return false;
		usleep(1000);
	}
	return true;
}

int test_app_end_open(struct test_app_end *e, int index, enum ibv_qp_type type, size_t len)
{
	struct ibv_device **list;
	int n;
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = 2,
			.max_recv_sge = 2,
			.max_inline_data = 64},
		.qp_type = type,
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qkey = 0x11111111,
				.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						   IBV_ACCESS_REMOTE_READ |
						   IBV_ACCESS_REMOTE_ATOMIC};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	memset(e, 0, sizeof(*e));
	list = ibv_get_device_list(&n);
	if (list == NULL || n <= index)
		return ENODEV;
	e->ctx = ibv_open_device(list[index]);
	ibv_free_device_list(list);
	if (e->ctx == NULL)
		return errno;
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->pd != NULL ? ibv_create_cq(e->ctx, 256, NULL, NULL, 0) : NULL;
	if (e->cq == NULL)
		return errno;
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &ia);
	if (e->qp == NULL)
		return errno;
	e->len = len;
	e->buf = droce_alloc_shared(len, 0);
	if (e->buf == NULL)
		return errno;
	e->mr = ibv_reg_mr(e->pd, e->buf, len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (e->mr == NULL)
		return errno;
	if (ibv_query_gid(e->ctx, 1, 1, &e->gid) != 0)
		return EIO;
	mask |= type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	if (type == IBV_QPT_UC)
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	return ibv_modify_qp(e->qp, &a, mask);
}

void test_app_end_addr(const struct test_app_end *e, struct test_app_addr *a)
{
	a->qpn = e->qp->qp_num;
	a->rkey = e->mr->rkey;
	a->addr = (uintptr_t)e->buf;
	a->gid = e->gid;
}

int test_app_end_connect(struct test_app_end *e, const struct test_app_addr *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qpn,
		.rq_psn = 0x100,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = {.is_global = 1,
			    .port_num = 1,
			    .grh = {.dgid = peer->gid, .sgid_index = 1, .hop_limit = 64}},
	};
	int rc;

	if (e->qp->qp_type == IBV_QPT_UD) {
		rc = ibv_modify_qp(e->qp, &a, IBV_QP_STATE);
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0x100;
		return rc != 0 ? rc : ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	rc = ibv_modify_qp(e->qp, &a,
			   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN |
				   (e->qp->qp_type == IBV_QPT_RC
					    ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER
					    : 0));
	if (rc != 0)
		return rc;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = 10;
	a.retry_cnt = 3;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(e->qp, &a,
			     IBV_QP_STATE | IBV_QP_SQ_PSN |
				     (e->qp->qp_type == IBV_QPT_RC
					      ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
							IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC
					      : 0));
}

int test_app_end_poll(struct test_app_end *e, struct ibv_wc *wc)
{
	double until = now_s() + 10;

	while (now_s() < until) {
		int n = ibv_poll_cq(e->cq, 1, wc);

		if (n != 0)
			return n;
		usleep(50);
	}
	return 0;
}

void test_app_end_close(struct test_app_end *e)
{
	if (e->qp != NULL)
		ibv_destroy_qp(e->qp);
	if (e->mr != NULL)
		ibv_dereg_mr(e->mr);
	if (e->buf != NULL)
		droce_free_shared(e->buf, e->len);
	if (e->cq != NULL)
		ibv_destroy_cq(e->cq);
	if (e->pd != NULL)
		ibv_dealloc_pd(e->pd);
	if (e->ctx != NULL)
		ibv_close_device(e->ctx);
	memset(e, 0, sizeof(*e));
}
