/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf's two-host side against a scripted peer on TCP (127.0.0.1): the
 * bytes it sends are perftest 4.5's, it agrees on the smaller MTU, and what a
 * peer gets wrong (an old exchange version, a malformed address, GIDs of two
 * IP versions, a connection closed early) ends the run with exit status 1 and
 * a reason, never a hang. droce-perf's device is one of two joined by an
 * in-process link, so its port comes up without a second process; no RDMA
 * traffic flows in these tests. Real runs against perftest: tests/integration.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf_oob.h"

#define DEVICES                                                       \
	"droce0:mac=02:d0:0c:00:01:01,ip=10.98.0.1,mtu=4200,link=t2 " \
	"droce1:mac=02:d0:0c:00:01:02,ip=10.98.0.2,mtu=4200,link=t2"

static char out[1 << 16];
static char out_path[64];

static void setup(void)
{
	setenv("DROCE_DEVICES", DEVICES, 1);
}

TestSuite(app_perf_twohost, .init = setup, .timeout = 120);

/* droce-perf with @p args in the background, stdout and stderr to a file. */
static pid_t start_perf(const char *args)
{
	const char *bin = getenv("DROCE_PERF");
	char cmd[1024];
	pid_t pid;

	cr_assert_not_null(bin, "DROCE_PERF is not set (run the tests through meson)");
	snprintf(out_path, sizeof(out_path), "/tmp/droce-perf-twohost.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "exec timeout 60 '%s' %s > %s 2>&1", bin, args, out_path);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Its exit status once it ends; its output in out[]. */
static int finish_perf(pid_t pid)
{
	FILE *f;
	size_t n = 0;
	int st;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	f = fopen(out_path, "r");
	if (f != NULL) {
		n = fread(out, 1, sizeof(out) - 1, f);
		fclose(f);
	}
	out[n] = '\0';
	unlink(out_path);
	cr_assert(WIFEXITED(st), "droce-perf did not exit normally:\n%s", out);
	return WEXITSTATUS(st);
}

static void expect_text(const char *text)
{
	cr_expect_not_null(strstr(out, text), "no '%s' in:\n%s", text, out);
}

/* A listening socket on an ephemeral port of 127.0.0.1; its port in @p port. */
static int listen_any(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(fd, 1), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* A port nothing listens on now, for droce-perf's server. */
static uint16_t free_port(void)
{
	uint16_t port;

	close(listen_any(&port));
	return port;
}

/* Connect to droce-perf's server on @p port, waiting while it starts. */
static int connect_to(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	for (int i = 0; i < 300; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		cr_assert_geq(fd, 0);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		close(fd);
		usleep(100000);
	}
	cr_assert_fail("droce-perf did not listen on port %u", port);
	return -1;
}

static void read_exact(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);

		cr_assert_gt(n, 0, "droce-perf closed the connection early");
		p += n;
		len -= (size_t)n;
	}
}

static void write_exact(int fd, const void *buf, size_t len)
{
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
}

/*
 * perftest's side of the prelude as a server (droce-perf the client writes
 * first): version, page size, cache line, MTU 1024. Checks droce-perf's bytes.
 */
static void prelude_as_server(int fd, const char *version)
{
	uint8_t v[PERF_OOB_VERSION_LEN] = {0}, in[PERF_OOB_VERSION_LEN];
	uint8_t i4[PERF_OOB_INT_LEN], mtu[PERF_OOB_MTU_LEN] = {'3', 0};

	read_exact(fd, in, sizeof(in));
	cr_expect_arr_eq(in, "6.06\0\0\0\0\0\0\0\0\0\0\0\0", sizeof(in), "perftest 4.5's version");
	memcpy(v, version, strlen(version));
	write_exact(fd, v, sizeof(v));
	if (strcmp(version, "6.06") != 0)
		return;
	read_exact(fd, i4, sizeof(i4));
	cr_expect_eq(perf_oob_int_decode(i4), getpagesize());
	perf_oob_int_encode(i4, 4096);
	write_exact(fd, i4, sizeof(i4));
	read_exact(fd, i4, sizeof(i4));
	cr_expect_eq(perf_oob_int_decode(i4), 64);
	perf_oob_int_encode(i4, 64);
	write_exact(fd, i4, sizeof(i4));
	read_exact(fd, in, PERF_OOB_MTU_LEN);
	cr_expect_eq(in[0], '5', "the device's 4096 MTU");
	write_exact(fd, mtu, sizeof(mtu));
}

/* The same as a client of droce-perf's server (this side writes first). */
static void prelude_as_client(int fd)
{
	uint8_t v[PERF_OOB_VERSION_LEN] = "6.06", in[PERF_OOB_VERSION_LEN];
	uint8_t i4[PERF_OOB_INT_LEN], mtu[PERF_OOB_MTU_LEN] = {'3', 0};

	write_exact(fd, v, sizeof(v));
	read_exact(fd, in, sizeof(in));
	perf_oob_int_encode(i4, 4096);
	write_exact(fd, i4, sizeof(i4));
	read_exact(fd, i4, sizeof(i4));
	perf_oob_int_encode(i4, 64);
	write_exact(fd, i4, sizeof(i4));
	read_exact(fd, i4, sizeof(i4));
	write_exact(fd, mtu, sizeof(mtu));
	read_exact(fd, in, PERF_OOB_MTU_LEN);
}

Test(app_perf_twohost, old_exchange_version_refused)
{
	uint16_t port;
	int lfd = listen_any(&port), fd;
	char args[128];
	pid_t pid;

	snprintf(args, sizeof(args), "write_bw -F -n 10 -p %u 127.0.0.1", port);
	pid = start_perf(args);
	fd = accept(lfd, NULL, NULL);
	cr_assert_geq(fd, 0);
	prelude_as_server(fd, "5.60");
	cr_expect_eq(finish_perf(pid), 1);
	expect_text("exchange version is 5.60");
	close(fd);
	close(lfd);
}

Test(app_perf_twohost, malformed_address_refused_and_mtu_agreed)
{
	uint16_t port = free_port();
	uint8_t keys[PERF_OOB_KEYS_LEN], theirs[PERF_OOB_KEYS_LEN];
	struct perf_dest d;
	char args[128];
	pid_t pid;
	int fd;

	snprintf(args, sizeof(args), "write_bw -F -n 10 -p %u", port);
	pid = start_perf(args);
	fd = connect_to(port);
	prelude_as_client(fd);
	memset(keys, 0, sizeof(keys));
	memcpy(keys, "0000:0001:zz", 12);
	write_exact(fd, keys, sizeof(keys));
	read_exact(fd, theirs, sizeof(theirs));
	cr_expect_eq(perf_oob_keys_decode(theirs, &d), 0, "%.108s", theirs);
	cr_expect_eq(d.out_reads, 1);
	cr_expect_eq(d.gid.raw[10], 0xff, "an IPv4-mapped GID (-x default)");
	cr_expect_eq(d.gid.raw[15], 1, "10.98.0.1");
	cr_expect_eq(finish_perf(pid), 1);
	expect_text("malformed address message");
	expect_text(" Mtu             : 1024[B]\n"); /* the smaller of 4096 and 1024 */
	close(fd);
}

Test(app_perf_twohost, gids_of_two_ip_versions_refused)
{
	uint16_t port;
	int lfd = listen_any(&port), fd;
	uint8_t keys[PERF_OOB_KEYS_LEN], theirs[PERF_OOB_KEYS_LEN];
	struct perf_dest d = {.out_reads = 1, .qpn = 0x11, .psn = 1, .rkey = 2, .vaddr = 0x1000};
	char args[128];
	pid_t pid;

	snprintf(args, sizeof(args), "write_bw -F -n 10 -p %u 127.0.0.1", port);
	pid = start_perf(args);
	fd = accept(lfd, NULL, NULL);
	cr_assert_geq(fd, 0);
	prelude_as_server(fd, "6.06");
	d.gid.raw[0] = 0xfe; /* fe80::1, where droce-perf has ::ffff:10.98.0.1 */
	d.gid.raw[1] = 0x80;
	d.gid.raw[15] = 1;
	perf_oob_keys_encode(keys, &d);
	read_exact(fd, theirs, sizeof(theirs));
	write_exact(fd, keys, sizeof(keys));
	cr_expect_eq(finish_perf(pid), 1);
	expect_text("choose GIDs of one IP version");
	close(fd);
	close(lfd);
}

Test(app_perf_twohost, peer_gone_is_a_failure_not_a_hang)
{
	uint16_t port = free_port();
	uint8_t v[PERF_OOB_VERSION_LEN] = "6.06";
	char args[128];
	pid_t pid;
	int fd;

	snprintf(args, sizeof(args), "send_bw -F -n 10 -p %u", port);
	pid = start_perf(args);
	fd = connect_to(port);
	write_exact(fd, v, sizeof(v));
	close(fd);
	cr_expect_eq(finish_perf(pid), 1);
	expect_text("the other side closed the connection");
}
