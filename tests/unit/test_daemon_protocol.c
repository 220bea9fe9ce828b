/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced's socket against a client that does not follow the protocol: every
 * bad request gets an error reply and changes nothing, a malformed message
 * closes that connection only, and droced serves the next client.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "droce_dproto.h"

static struct test_daemon daemon_;

static void setup(void)
{
	test_daemon_start(&daemon_, (const char *const[]){"-o", "max_objects=8", NULL});
}

static void teardown(void)
{
	cr_expect_eq(test_daemon_stop(&daemon_), 0, "%s", test_daemon_log(&daemon_));
}

TestSuite(daemon_protocol, .init = setup, .fini = teardown, .timeout = 60);

static int dial(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	cr_assert_geq(s, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", daemon_.sock);
	cr_assert_eq(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
	return s;
}

/* One request; returns the reply's status (-1 when the connection closed). */
static int ask(int s, uint32_t op, uint32_t handle, const void *body, size_t len, int fd, void *rep,
	       size_t rep_cap, uint32_t *handle_out)
{
	static uint32_t seq;
	struct droce_dproto_hdr h = {.op = op, .seq = ++seq, .handle = handle};
	uint8_t buf[DROCE_DPROTO_MSG_MAX];
	int fds[DROCE_DPROTO_FDS_MAX];
	unsigned int nfds = DROCE_DPROTO_FDS_MAX;
	ssize_t n;

	if (droce_dproto_send(s, &h, body, len, fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0) != 0)
		return -1;
	n = droce_dproto_recv(s, &h, buf, sizeof(buf), fds, &nfds);
	if (n < 0)
		return -1;
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	cr_assert_eq(h.seq, seq, "the reply answers the request");
	if (rep != NULL)
		memcpy(rep, buf, (size_t)n < rep_cap ? (size_t)n : rep_cap);
	if (handle_out != NULL)
		*handle_out = h.handle;
	return h.status;
}

/* A connection with device 0 open. */
static int dial_open(void)
{
	struct droce_dproto_open_req o = {.device = 0};
	int s = dial(), efd = eventfd(0, EFD_CLOEXEC);

	cr_assert_eq(ask(s, DPROTO_OPEN, 0, &o, sizeof(o), efd, NULL, 0, NULL), 0);
	close(efd);
	return s;
}

static void still_serves(void)
{
	struct droce_dproto_hello_req q = {.version = DROCE_DPROTO_VERSION};
	struct droce_dproto_hello_rep r;
	int s = dial();

	cr_expect_eq(ask(s, DPROTO_HELLO, 0, &q, sizeof(q), -1, &r, sizeof(r), NULL), 0);
	cr_expect_eq(r.n_devices, 2u);
	close(s);
}

Test(daemon_protocol, hello_lists_the_devices_and_refuses_other_versions)
{
	struct droce_dproto_hello_req q = {.version = DROCE_DPROTO_VERSION + 1};
	struct droce_dproto_hello_rep r;
	int s = dial();

	cr_expect_eq(ask(s, DPROTO_HELLO, 0, &q, sizeof(q), -1, &r, sizeof(r), NULL),
		     EPROTONOSUPPORT);
	q.version = DROCE_DPROTO_VERSION;
	cr_assert_eq(ask(s, DPROTO_HELLO, 0, &q, sizeof(q), -1, &r, sizeof(r), NULL), 0);
	cr_expect_eq(r.n_devices, 2u);
	cr_expect_str_eq(r.dev[0].name, "droce0");
	cr_expect_eq(r.dev[1].ipv4[0][3], 2);
	close(s);
}

Test(daemon_protocol, unknown_operations_and_wrong_sizes_are_refused)
{
	uint8_t junk[64] = {0};
	int s = dial();

	cr_expect_eq(ask(s, 999, 0, NULL, 0, -1, NULL, 0, NULL), EPROTO);
	cr_expect_eq(ask(s, 0, 0, NULL, 0, -1, NULL, 0, NULL), EPROTO);
	cr_expect_eq(ask(s, DPROTO_HELLO, 0, junk, 3, -1, NULL, 0, NULL), EPROTO);
	cr_expect_eq(ask(s, DPROTO_ALLOC_PD, 0, junk, 8, -1, NULL, 0, NULL), EPROTO);
	close(s);
	still_serves();
}

Test(daemon_protocol, nothing_before_open_and_open_wants_an_eventfd)
{
	struct droce_dproto_open_req o = {.device = 0};
	int s = dial(), p[2];

	cr_expect_eq(ask(s, DPROTO_ALLOC_PD, 0, NULL, 0, -1, NULL, 0, NULL), EBADF);
	cr_expect_eq(ask(s, DPROTO_OPEN, 0, &o, sizeof(o), -1, NULL, 0, NULL), EINVAL,
		     "no descriptor");
	cr_assert_eq(pipe(p), 0);
	cr_expect_eq(ask(s, DPROTO_OPEN, 0, &o, sizeof(o), p[1], NULL, 0, NULL), EINVAL,
		     "a pipe droced could block on");
	o.device = 2;
	cr_expect_eq(ask(s, DPROTO_OPEN, 0, &o, sizeof(o), eventfd(0, 0), NULL, 0, NULL), EINVAL,
		     "no such device");
	close(p[0]);
	close(p[1]);
	close(s);
	still_serves();
}

Test(daemon_protocol, handles_are_checked_for_kind_and_owner)
{
	struct droce_dproto_create_qp_req q = {.qp_type = IBV_QPT_RC, .cap = {.max_send_wr = 1}};
	uint32_t pd, pd_other, cq;
	struct droce_dproto_create_cq_req cr = {.cqe = 4};
	int s = dial_open(), other = dial_open();

	cr_assert_eq(ask(s, DPROTO_ALLOC_PD, 0, NULL, 0, -1, NULL, 0, &pd), 0);
	cr_assert_eq(ask(other, DPROTO_ALLOC_PD, 0, NULL, 0, -1, NULL, 0, &pd_other), 0);
	cr_assert_eq(ask(s, DPROTO_CREATE_CQ, 0, &cr, sizeof(cr), -1, NULL, 0, &cq), 0);
	cr_expect_neq(pd, 0u);
	/* a PD handle where a CQ is wanted, a handle never given, one of 2^32 - 1 */
	q.pd = pd;
	q.send_cq = pd;
	q.recv_cq = cq;
	cr_expect_eq(ask(s, DPROTO_CREATE_QP, 0, &q, sizeof(q), -1, NULL, 0, NULL), EINVAL);
	q.send_cq = 77;
	cr_expect_eq(ask(s, DPROTO_CREATE_QP, 0, &q, sizeof(q), -1, NULL, 0, NULL), EINVAL);
	q.send_cq = UINT32_MAX;
	cr_expect_eq(ask(s, DPROTO_CREATE_QP, 0, &q, sizeof(q), -1, NULL, 0, NULL), EINVAL);
	cr_expect_eq(ask(s, DPROTO_DESTROY_QP, cq, NULL, 0, -1, NULL, 0, NULL), EINVAL);
	cr_expect_eq(ask(s, DPROTO_DEALLOC_PD, 0, NULL, 0, -1, NULL, 0, NULL), EINVAL);
	/* the other connection's PD is not this one's: handles are per connection */
	if (pd_other != pd) {
		cr_expect_eq(ask(s, DPROTO_DEALLOC_PD, pd_other, NULL, 0, -1, NULL, 0, NULL),
			     EINVAL);
	}
	cr_expect_eq(ask(other, DPROTO_DESTROY_CQ, cq, NULL, 0, -1, NULL, 0, NULL), EINVAL,
		     "another connection's CQ");
	/* the PD is in use by nobody: it goes, once */
	q.send_cq = cq;
	cr_expect_eq(ask(s, DPROTO_DEALLOC_PD, pd, NULL, 0, -1, NULL, 0, NULL), 0);
	cr_expect_eq(ask(s, DPROTO_DEALLOC_PD, pd, NULL, 0, -1, NULL, 0, NULL), EINVAL);
	close(s);
	close(other);
	still_serves();
}

Test(daemon_protocol, a_connection_has_max_objects)
{
	int s = dial_open(), made = 0;

	for (int i = 0; i < 20; i++)
		if (ask(s, DPROTO_ALLOC_PD, 0, NULL, 0, -1, NULL, 0, NULL) == 0)
			made++;
	cr_expect_eq(made, 8, "max_objects=8");
	close(s);
	still_serves();
}

/* RESOLVE_L2 of 10.9.0.<host> (droced's device 0 is on 10.9.0.0/24); the reply's status. */
static int resolve_host(int s, uint8_t host)
{
	struct droce_dproto_resolve_req q = {
		.gid = {.raw = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 9, 0, host}}};
	struct droce_dproto_resolve_rep r;

	return ask(s, DPROTO_RESOLVE_L2, 0, &q, sizeof(q), -1, &r, sizeof(r), NULL);
}

/*
 * The neighbour table is shared: one connection has at most 8 addresses in resolution at
 * once, the next is EBUSY; another connection is not held back by it.
 */
Test(daemon_protocol, a_connection_has_at_most_8_resolutions_under_way)
{
	int s = dial_open(), other;

	for (uint8_t h = 100; h < 108; h++)
		cr_expect_eq(resolve_host(s, h), EAGAIN, "10.9.0.%u asked for", h);
	cr_expect_eq(resolve_host(s, 100), EAGAIN, "one under way is asked again");
	cr_expect_eq(resolve_host(s, 108), EBUSY, "a ninth address while eight are under way");
	other = dial_open();
	cr_expect_eq(resolve_host(other, 108), EAGAIN, "another connection resolves it");
	close(other);
	close(s);
	still_serves();
}

/* A droced of its own: with max_objects_total=12, two connections share 12. */
TestSuite(daemon_protocol_total, .fini = teardown, .timeout = 60);

Test(daemon_protocol_total, droced_has_max_objects_total)
{
	int a, b, made = 0;

	test_daemon_start(&daemon_, (const char *const[]){"-o", "max_objects=8", "-o",
							  "max_objects_total=12", NULL});
	a = dial_open();
	b = dial_open();
	for (int i = 0; i < 10; i++)
		if (ask(a, DPROTO_ALLOC_PD, 0, NULL, 0, -1, NULL, 0, NULL) == 0)
			made++;
	for (int i = 0; i < 10; i++)
		if (ask(b, DPROTO_ALLOC_PD, 0, NULL, 0, -1, NULL, 0, NULL) == 0)
			made++;
	cr_expect_eq(made, 12, "8 for the first, the 4 left of 12 for the second");
	close(a);
	close(b);
	still_serves();
}

/* A memfd of @p len bytes, sealed against shrinking when @p seal. */
static int memfd(size_t len, bool seal)
{
	int fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)len), 0);
	if (seal)
		cr_assert_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	return fd;
}

Test(daemon_protocol, mr_files_must_be_sealed_and_long_enough)
{
	struct droce_dproto_reg_mr_req q = {
		.access = IBV_ACCESS_LOCAL_WRITE, .iova = 0x10000, .length = 8192};
	struct droce_dproto_reg_mr_rep r;
	int s = dial_open(), unsealed = memfd(8192, false), sealed = memfd(8192, true);
	int tmp = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	uint32_t mr;

	cr_assert_eq(ask(s, DPROTO_ALLOC_PD, 0, NULL, 0, -1, NULL, 0, &q.pd), 0);
	cr_expect_eq(ask(s, DPROTO_REG_MR, 0, &q, sizeof(q), -1, NULL, 0, NULL), EINVAL, "no file");
	cr_expect_eq(ask(s, DPROTO_REG_MR, 0, &q, sizeof(q), unsealed, NULL, 0, NULL), EINVAL,
		     "a memfd that can shrink");
	if (tmp >= 0) {
		cr_assert_eq(ftruncate(tmp, 8192), 0);
		cr_expect_eq(ask(s, DPROTO_REG_MR, 0, &q, sizeof(q), tmp, NULL, 0, NULL), EINVAL,
			     "a plain file");
		close(tmp);
	}
	q.file_off = 4096;
	cr_expect_eq(ask(s, DPROTO_REG_MR, 0, &q, sizeof(q), sealed, NULL, 0, NULL), EINVAL,
		     "past the end of the file");
	q.file_off = UINT64_MAX - 100;
	cr_expect_eq(ask(s, DPROTO_REG_MR, 0, &q, sizeof(q), sealed, NULL, 0, NULL), EINVAL);
	q.file_off = 0;
	cr_expect_eq(ask(s, DPROTO_REG_MR, 0, &q, sizeof(q), sealed, &r, sizeof(r), &mr), 0);
	cr_expect_neq(r.lkey, 0u);
	cr_expect_eq(ask(s, DPROTO_DEREG_MR, mr, NULL, 0, -1, NULL, 0, NULL), 0);
	close(unsealed);
	close(sealed);
	close(s);
	still_serves();
}

Test(daemon_protocol, a_malformed_datagram_closes_that_connection_only)
{
	int s = dial_open(), t = dial_open();
	uint8_t shortmsg[5] = {1, 2, 3, 4, 5};
	uint8_t buf[64];

	cr_assert_eq(send(s, shortmsg, sizeof(shortmsg), 0), (ssize_t)sizeof(shortmsg));
	cr_expect_eq(recv(s, buf, sizeof(buf), 0), 0, "droced closed the connection");
	cr_expect_eq(ask(t, DPROTO_ALLOC_PD, 0, NULL, 0, -1, NULL, 0, NULL), 0,
		     "the other connection still works");
	close(s);
	close(t);
	still_serves();
}

/* A connection that never opens a device gives its place back after 10 s. */
Test(daemon_protocol, a_connection_that_never_opens_is_closed)
{
	struct droce_dproto_hello_req q = {.version = DROCE_DPROTO_VERSION};
	struct droce_dproto_hello_rep r;
	struct timeval tv = {.tv_sec = 20};
	uint8_t buf[64];
	int s = dial();

	cr_assert_eq(ask(s, DPROTO_HELLO, 0, &q, sizeof(q), -1, &r, sizeof(r), NULL), 0);
	cr_assert_eq(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	cr_expect_eq(recv(s, buf, sizeof(buf), 0), 0, "droced closed it");
	close(s);
	still_serves();
}
