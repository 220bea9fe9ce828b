/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TCP connection of the out-of-band exchange, over IPv4 as perftest's:
 * the server listens on every address, the client connects (and, unlike
 * perftest, tries again for a while when nobody listens yet: the server side
 * may still be starting its engine). Each message leaves in one send(), as
 * perftest reads each with a single read().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "perf_oob.h"

#define CONNECT_RETRY_MS 100
#define DONE_DRAIN_MS    1000

static int sock_fail(const char *what)
{
	fprintf(stderr, "droce-perf: %s: %s\n", what, strerror(errno));
	return -1;
}

static void no_delay(int fd)
{
	int one = 1;

	/* messages are small and answered one by one */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int perf_oob_listen(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_ANY)};
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return sock_fail("socket");
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 1) != 0) {
		fprintf(stderr, "droce-perf: cannot listen on TCP port %u: %s\n", port,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int perf_oob_accept(int listen_fd, struct perf_oob *s, char *peer, size_t peer_len)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd;

	do
		fd = accept4(listen_fd, (struct sockaddr *)&a, &len, SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return sock_fail("accept");
	no_delay(fd);
	inet_ntop(AF_INET, &a.sin_addr, peer, (socklen_t)peer_len);
	s->fd = fd;
	s->client = false;
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

int perf_oob_connect(const char *host, uint16_t port, unsigned int wait_s, struct perf_oob *s,
		     char *peer, size_t peer_len)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
	uint64_t until = now_ms() + wait_s * 1000ull;
	char service[8];
	int rc, fd = -1;

	snprintf(service, sizeof(service), "%u", port);
	rc = getaddrinfo(host, service, &hints, &res);
	if (rc != 0) {
		fprintf(stderr, "droce-perf: %s: %s\n", host, gai_strerror(rc));
		return -1;
	}
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			break;
		if (connect(fd, res->ai_addr, res->ai_addrlen) == 0)
			break;
		rc = errno;
		close(fd);
		fd = -1;
		errno = rc;
		if ((rc != ECONNREFUSED && rc != ETIMEDOUT && rc != EHOSTUNREACH) ||
		    now_ms() >= until)
			break;
		usleep(CONNECT_RETRY_MS * 1000);
	}
	if (fd < 0) {
		fprintf(stderr, "droce-perf: cannot connect to %s:%u: %s\n", host, port,
			strerror(errno));
		freeaddrinfo(res);
		return -1;
	}
	inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, peer,
		  (socklen_t)peer_len);
	freeaddrinfo(res);
	no_delay(fd);
	s->fd = fd;
	s->client = true;
	return 0;
}

static int send_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return sock_fail("out-of-band send");
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int recv_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sock_fail("out-of-band receive");
		if (n == 0) {
			fprintf(stderr, "droce-perf: the other side closed the connection\n");
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int perf_oob_xchg(struct perf_oob *s, const void *mine, void *theirs, size_t len)
{
	if (s->client)
		return send_all(s->fd, mine, len) == 0 ? recv_all(s->fd, theirs, len) : -1;
	return recv_all(s->fd, theirs, len) == 0 ? send_all(s->fd, mine, len) : -1;
}

/*
 * "done" both ways, then close. perftest never reads the other's "done": it is
 * read here, briefly, only so that this side's close finds nothing unread (a
 * close with unread data resets the connection).
 */
int perf_oob_done(struct perf_oob *s)
{
	uint8_t theirs[PERF_OOB_DONE_LEN];
	struct pollfd p = {.fd = s->fd, .events = POLLIN};
	int rc = send_all(s->fd, PERF_OOB_DONE_STR, PERF_OOB_DONE_LEN);
	size_t got = 0;

	while (rc == 0 && got < sizeof(theirs) && poll(&p, 1, DONE_DRAIN_MS) > 0) {
		ssize_t n = recv(s->fd, theirs + got, sizeof(theirs) - got, 0);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	perf_oob_close(s);
	return rc;
}

void perf_oob_close(struct perf_oob *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
