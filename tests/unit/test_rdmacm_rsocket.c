/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rsocket calls: rsocket() refused with EPROTONOSUPPORT (no rsocket transport), every
 * other call on an ordinary descriptor the plain socket call, the rsocket-only calls EBADF.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/rsocket.h>

Test(rdmacm_rsocket, rsocket_refused)
{
	errno = 0;
	cr_assert_eq(rsocket(AF_INET, SOCK_STREAM, 0), -1);
	cr_assert_eq(errno, EPROTONOSUPPORT, "no rsocket transport: %s", strerror(errno));
}

Test(rdmacm_rsocket, rpoll_is_poll)
{
	int p[2];
	struct pollfd f;

	cr_assert_eq(pipe(p), 0);
	f = (struct pollfd){.fd = p[0], .events = POLLIN};
	cr_assert_eq(rpoll(&f, 1, 0), 0, "nothing to read");
	cr_assert_eq(rwrite(p[1], "x", 1), 1);
	cr_assert_eq(rpoll(&f, 1, 1000), 1, "readable");
	cr_assert(f.revents & POLLIN);
	rclose(p[0]);
	rclose(p[1]);
}

Test(rdmacm_rsocket, socket_calls_pass_through)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0), s, one = 1;
	char buf[8] = {0};
	struct iovec iov = {.iov_base = buf, .iov_len = 3};
	fd_set rd;
	struct timeval tv = {.tv_sec = 1};

	cr_assert_eq(rsetsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	cr_assert_eq(rbind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(rlisten(l, 1), 0);
	cr_assert_eq(rgetsockname(l, (struct sockaddr *)&a, &len), 0);
	cr_assert_neq(a.sin_port, 0, "a port");
	cr_assert_eq(rconnect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	s = raccept(l, NULL, NULL);
	cr_assert_geq(s, 0);
	cr_assert_eq(rsend(c, "abc", 3, 0), 3);
	FD_ZERO(&rd);
	FD_SET(s, &rd);
	cr_assert_eq(rselect(s + 1, &rd, NULL, NULL, &tv), 1, "rselect sees it");
	cr_assert_eq(rrecv(s, buf, 3, 0), 3);
	cr_assert_str_eq(buf, "abc");
	cr_assert_eq(rwritev(c, &iov, 1), 3);
	cr_assert_eq(rreadv(s, &iov, 1), 3);
	cr_assert_eq(rsendto(c, "de", 2, 0, NULL, 0), 2);
	cr_assert_eq(rrecvfrom(s, buf, 2, 0, NULL, NULL), 2);
	cr_assert_eq(rgetpeername(s, (struct sockaddr *)&a, &len), 0);
	len = sizeof(one);
	cr_assert_eq(rgetsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, &len), 0);
	cr_assert_eq(one, 1);
	cr_assert_eq(rfcntl(s, F_SETFL, O_NONBLOCK), 0);
	cr_assert(rfcntl(s, F_GETFL) & O_NONBLOCK, "rfcntl with and without an argument");
	errno = 0;
	cr_assert_eq(rread(s, buf, 1), -1, "nothing, non-blocking");
	cr_assert_eq(errno, EAGAIN);
	cr_assert_eq(rshutdown(c, SHUT_WR), 0);
	cr_assert_eq(rclose(c), 0);
	cr_assert_eq(rclose(s), 0);
	cr_assert_eq(rclose(l), 0);
}

Test(rdmacm_rsocket, rsocket_only_calls)
{
	char buf[16];

	errno = 0;
	cr_assert_eq(riomap(0, buf, sizeof(buf), PROT_WRITE, 0, -1), -1);
	cr_assert_eq(errno, EBADF, "not an rsocket");
	errno = 0;
	cr_assert_eq(riounmap(0, buf, sizeof(buf)), -1);
	cr_assert_eq(errno, EBADF);
	errno = 0;
	cr_assert_eq(riowrite(0, buf, sizeof(buf), 0, 0), 0, "nothing written");
	cr_assert_eq(errno, EBADF);
}
