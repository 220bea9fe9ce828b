/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The application's end of droced against a droced that answers wrongly: a
 * stand-in droced (a thread of the test on its own socket) answers HELLO and
 * OPEN as droced does, then creates a queue without sending its memory, or
 * sends memory whose rings overlap the control words. The create fails with
 * EPROTO and the error path touches no descriptor of the application: its
 * standard input (descriptor 0, which a zeroed shared-memory record would
 * name) stays open.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "droce_dproto.h"
#include "droce_ring.h"

/* What the stand-in does with a queue it is asked to create. */
enum bad_queue {
	QUEUE_WITHOUT_MEMORY, /* the reply carries no descriptor */
	QUEUE_RINGS_OVER_CTL, /* a descriptor, rings at offset 0 over the control words */
};

static enum bad_queue bad;
static int listener = -1;
static char sock_path[108];
static pthread_t server;
static unsigned int destroys; /* DESTROY_* requests the stand-in answered */

/* The stand-in runs on its own thread, where Criterion's asserts cannot stop the test. */
#define SERVER_CHECK(cond, what)                                               \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "stand-in droced: %s failed\n", what); \
			abort();                                               \
		}                                                              \
	} while (0)

static int event_ring(uint64_t *len)
{
	size_t l;
	int fd = droce_dproto_memfd(
		"fake-events",
		droce_ring_mem_size(DROCE_DPROTO_EVENT_SLOTS, sizeof(struct droce_dproto_event)), 0,
		&l);
	void *m;

	SERVER_CHECK(fd >= 0, "event ring memfd");
	m = mmap(NULL, l, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	SERVER_CHECK(m != MAP_FAILED, "map the event ring");
	SERVER_CHECK(droce_ring_init(m, l, DROCE_DPROTO_EVENT_SLOTS,
				     sizeof(struct droce_dproto_event)) == 0,
		     "event ring");
	munmap(m, l);
	*len = l;
	return fd;
}

static int queue_memory(void)
{
	int fd = droce_dproto_memfd("fake-queue", 65536, 0, NULL);

	SERVER_CHECK(fd >= 0, "queue memfd");
	return fd;
}

/* One reply to @p h: the body droced would send, made the wrong way for a queue. */
static void answer(int s, struct droce_dproto_hdr *h)
{
	uint8_t body[DROCE_DPROTO_MSG_MAX] = {0};
	ssize_t len = droce_dproto_body_size(h->op, true);
	struct droce_dproto_hello_rep *hello = (void *)body;
	struct droce_dproto_open_rep *open_rep = (void *)body;
	struct droce_dproto_shm *shm = NULL;
	int fd = -1;

	SERVER_CHECK(len >= 0, "a known operation");
	h->status = 0;
	h->handle = 7; /* every object the stand-in "creates" */
	switch (h->op) {
	case DPROTO_HELLO:
		hello->version = DROCE_DPROTO_VERSION;
		hello->n_devices = 1;
		snprintf(hello->dev[0].name, sizeof(hello->dev[0].name), "droce0");
		hello->dev[0].mac[0] = 0x02;
		hello->dev[0].link_up = 1;
		hello->dev[0].eth_mtu = 1500;
		break;
	case DPROTO_OPEN:
		fd = event_ring(&open_rep->ring_len);
		break;
	case DPROTO_CREATE_CQ:
		shm = &((struct droce_dproto_create_cq_rep *)body)->shm;
		break;
	case DPROTO_CREATE_SRQ:
		shm = &((struct droce_dproto_create_srq_rep *)body)->shm;
		break;
	case DPROTO_DESTROY_CQ:
	case DPROTO_DESTROY_SRQ:
		__atomic_fetch_add(&destroys, 1, __ATOMIC_RELAXED);
		break;
	default:
		break;
	}
	if (shm != NULL && bad == QUEUE_RINGS_OVER_CTL) {
		fd = queue_memory();
		shm->len = 65536;
		shm->ring_len[0] = 4096;
	}
	SERVER_CHECK(droce_dproto_send(s, h, body, (size_t)len, fd >= 0 ? &fd : NULL,
				       fd >= 0 ? 1 : 0) == 0,
		     "a reply");
	if (fd >= 0)
		close(fd);
}

static void *serve(void *arg)
{
	(void)arg;
	for (;;) {
		int s = accept(listener, NULL, NULL);

		if (s < 0)
			return NULL;
		for (;;) {
			struct droce_dproto_hdr h;
			uint8_t body[DROCE_DPROTO_MSG_MAX];
			int fds[DROCE_DPROTO_FDS_MAX];
			unsigned int nfds = DROCE_DPROTO_FDS_MAX;

			if (droce_dproto_recv(s, &h, body, sizeof(body), fds, &nfds) < 0)
				break;
			for (unsigned int i = 0; i < nfds; i++)
				close(fds[i]);
			answer(s, &h);
		}
		close(s);
	}
}

static void start(enum bad_queue how)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int null_fd;

	bad = how;
	snprintf(sock_path, sizeof(sock_path), "/tmp/droce-fake-droced-%d.sock", (int)getpid());
	unlink(sock_path);
	memcpy(a.sun_path, sock_path, strlen(sock_path) + 1);
	listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	cr_assert_geq(listener, 0, "socket");
	cr_assert_eq(bind(listener, (struct sockaddr *)&a, sizeof(a)), 0, "bind %s", sock_path);
	cr_assert_eq(listen(listener, 4), 0, "listen");
	cr_assert_eq(pthread_create(&server, NULL, serve, NULL), 0, "the stand-in droced");
	setenv("DROCE_DAEMON", sock_path, 1);
	/* descriptor 0 is open, as an application's standard input is */
	null_fd = open("/dev/null", O_RDONLY);
	cr_assert_geq(null_fd, 0, "/dev/null");
	if (null_fd != 0) {
		cr_assert_eq(dup2(null_fd, 0), 0, "/dev/null as descriptor 0");
		close(null_fd);
	}
}

static void stop(void)
{
	shutdown(listener, SHUT_RDWR);
	unlink(sock_path);
}

static struct ibv_context *open_device(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;

	cr_assert(list != NULL && list[0] != NULL, "the stand-in's device: %s", strerror(errno));
	ctx = ibv_open_device(list[0]);
	cr_assert_not_null(ctx, "open the stand-in's device: %s", strerror(errno));
	ibv_free_device_list(list);
	return ctx;
}

static void create_cq_fails(enum bad_queue how, const char *what)
{
	struct ibv_context *ctx;

	start(how);
	ctx = open_device();
	errno = 0;
	cr_expect_null(ibv_create_cq(ctx, 16, NULL, NULL, 0), "%s: no CQ", what);
	cr_expect_eq(errno, EPROTO, "%s: errno %d (%s), want EPROTO", what, errno, strerror(errno));
	cr_expect_neq(fcntl(0, F_GETFD), -1, "%s: descriptor 0 is still open", what);
	cr_expect_eq(__atomic_load_n(&destroys, __ATOMIC_RELAXED), 1u,
		     "%s: droced is told to destroy the CQ it made", what);
	ibv_close_device(ctx);
	stop();
}

static void create_srq_fails(enum bad_queue how, const char *what)
{
	struct ibv_srq_init_attr a = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	start(how);
	ctx = open_device();
	pd = ibv_alloc_pd(ctx);
	cr_assert_not_null(pd, "a PD: %s", strerror(errno));
	errno = 0;
	cr_expect_null(ibv_create_srq(pd, &a), "%s: no SRQ", what);
	cr_expect_eq(errno, EPROTO, "%s: errno %d (%s), want EPROTO", what, errno, strerror(errno));
	cr_expect_neq(fcntl(0, F_GETFD), -1, "%s: descriptor 0 is still open", what);
	ibv_close_device(ctx);
	stop();
}

Test(verbs_remote_replies, cq_without_memory_leaves_descriptor_0, .timeout = 30)
{
	create_cq_fails(QUEUE_WITHOUT_MEMORY, "CQ without memory");
}

Test(verbs_remote_replies, cq_rings_over_the_control_words_leave_descriptor_0, .timeout = 30)
{
	create_cq_fails(QUEUE_RINGS_OVER_CTL, "CQ rings over the control words");
}

Test(verbs_remote_replies, srq_without_memory_leaves_descriptor_0, .timeout = 30)
{
	create_srq_fails(QUEUE_WITHOUT_MEMORY, "SRQ without memory");
}

Test(verbs_remote_replies, srq_rings_over_the_control_words_leave_descriptor_0, .timeout = 30)
{
	create_srq_fails(QUEUE_RINGS_OVER_CTL, "SRQ rings over the control words");
}
