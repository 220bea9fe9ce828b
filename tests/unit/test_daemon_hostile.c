/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced against applications that abuse the descriptors and rings it shares
 * with them: a completion channel or an async eventfd driven to its maximum
 * count must not stop droced's engine or its control thread (other
 * applications keep working, droced still stops on SIGTERM), and an event
 * ring the application never reads must not keep droced's thread busy.
 *
 * "Busy" is counted, not timed: droced's loop counts its wake-ups (/droced/loop on DPDK
 * telemetry). Asleep in epoll_wait it wakes at most every 10 ms (its shortest timeout: a
 * full event ring retried) or for an event; a loop that spins wakes thousands of times a
 * millisecond. A loaded machine only lengthens the sleeps, so the bound cannot be met by
 * a loop that sleeps and cannot be missed by one that spins. The CPU time droced's thread
 * took is printed beside it, for a failure's message only.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "verbs_priv.h"

struct meet {
	unsigned int wedged;  /* the abusing application did its worst */
	unsigned int release; /* the test lets it go */
	unsigned int made;    /* objects the abusing application made */
	char why[2][160];
};

static struct test_daemon daemon_;
static struct meet *meet;

static void setup(void)
{
	meet = test_shared_mem(sizeof(*meet));
	test_daemon_start(&daemon_, NULL);
}

static void teardown(void)
{
	cr_expect_eq(test_daemon_stop(&daemon_), 0, "droced exits 0 on SIGTERM: %s",
		     test_daemon_log(&daemon_));
}

TestSuite(daemon_hostile, .init = setup, .fini = teardown, .timeout = 150);

#define FAIL(side, ...)                                                          \
	do {                                                                     \
		snprintf(meet->why[side], sizeof(meet->why[side]), __VA_ARGS__); \
		return 1;                                                        \
	} while (0)

/* An eventfd's largest count: one more and a write blocks (or fails, non-blocking). */
static const uint64_t efd_full = UINT64_MAX - 1;

/* A QP in RESET on @p cq (and @p srq), moved to INIT. NULL on failure. */
static struct ibv_qp *qp_on(struct test_app_end *e, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
	struct ibv_qp *qp = ibv_create_qp(e->pd, &ia);

	if (qp != NULL && ibv_modify_qp(qp, &a,
					IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						IBV_QP_ACCESS_FLAGS) != 0) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/* A receive on the QP, then the QP to ERR: the engine flushes it to the CQ. */
static int recv_then_error(struct test_app_end *e, struct ibv_qp *qp)
{
	struct ibv_sge s = {.addr = (uintptr_t)e->buf, .length = 64, .lkey = e->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 7, .sg_list = &s, .num_sge = 1}, *bad;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

	if (ibv_post_recv(qp, &wr, &bad) != 0)
		return EIO;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* Device 0 with an SRQ and a QP on it in INIT (its moves to ERR raise Last WQE Reached). */
static int srq_qp_open(struct test_app_end *e, struct ibv_qp **qp)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *srq;
	int rc = test_app_end_open(e, 0, IBV_QPT_RC, 4096);

	if (rc != 0)
		FAIL(0, "open: %s", strerror(rc));
	srq = ibv_create_srq(e->pd, &sa);
	*qp = srq != NULL ? qp_on(e, e->cq, srq) : NULL;
	if (*qp == NULL)
		FAIL(0, "SRQ, QP: %s", strerror(errno));
	return 0;
}

/* @p n async events: the QP of an SRQ to ERR (Last WQE Reached) and back to RESET. */
static int last_wqe_events(struct ibv_qp *qp, int n)
{
	struct ibv_qp_attr err = {.qp_state = IBV_QPS_ERR}, reset = {.qp_state = IBV_QPS_RESET};

	for (int i = 0; i < n; i++)
		if (ibv_modify_qp(qp, &err, IBV_QP_STATE) != 0 ||
		    ibv_modify_qp(qp, &reset, IBV_QP_STATE) != 0)
			FAIL(0, "modify %d", i);
	return 0;
}

/* The abuser did its worst: wait until the test lets it go. */
static int wedged(void)
{
	__atomic_store_n(&meet->wedged, 1, __ATOMIC_RELEASE);
	test_wait_word(&meet->release, 1);
	return 0;
}

/* Another application: objects made and a flushed receive seen, on device 1. */
static int bystander(void *arg)
{
	struct test_app_end e;
	struct ibv_wc wc;
	int rc;

	(void)arg;
	rc = test_app_end_open(&e, 1, IBV_QPT_RC, 4096);
	if (rc != 0)
		FAIL(1, "open: %s", strerror(rc));
	if (recv_then_error(&e, e.qp) != 0)
		FAIL(1, "receive and error");
	if (test_app_end_poll(&e, &wc) != 1 || wc.status != IBV_WC_WR_FLUSH_ERR || wc.wr_id != 7)
		FAIL(1, "no flushed receive from droced's engine");
	test_app_end_close(&e);
	return 0;
}

/* Run the abuser, then a bystander once the abuser did its worst; both must end well. */
static void abuser_and_bystander(int (*abuser)(void *))
{
	pid_t a = test_app_start(&daemon_, abuser, NULL), b;
	int ra, rb;

	cr_assert(test_wait_word(&meet->wedged, 1), "the abuser did not get going: %s",
		  meet->why[0]);
	b = test_app_start(&daemon_, bystander, NULL);
	rb = test_app_wait(b, 40);
	__atomic_store_n(&meet->release, 1, __ATOMIC_RELEASE);
	ra = test_app_wait(a, 40);
	cr_expect_eq(rb, 0, "another application, after the abuse: %s (droced: %s)", meet->why[1],
		     test_daemon_log(&daemon_));
	cr_expect_eq(ra, 0, "abuser: %s", meet->why[0]);
}

/*
 * The completion channel's fd driven to the eventfd maximum, then an event on
 * it: droced's engine lcore must not block writing the next count.
 */
static int channel_filler(void *arg)
{
	struct test_app_end e;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	int rc, n = 0;

	(void)arg;
	rc = test_app_end_open(&e, 0, IBV_QPT_RC, 4096);
	if (rc != 0)
		FAIL(0, "open: %s", strerror(rc));
	ch = ibv_create_comp_channel(e.ctx);
	cq = ch != NULL ? ibv_create_cq(e.ctx, 16, NULL, ch, 0) : NULL;
	qp = cq != NULL ? qp_on(&e, cq, NULL) : NULL;
	if (qp == NULL)
		FAIL(0, "channel, CQ, QP: %s", strerror(errno));
	if (ibv_req_notify_cq(cq, 0) != 0)
		FAIL(0, "arm");
	/* whatever the descriptor is, the application may write to it */
	if (write(ch->fd, &efd_full, sizeof(efd_full)) < 0)
		(void)0;
	if (recv_then_error(&e, qp) != 0)
		FAIL(0, "receive and error");
	/* the flushed CQE is in the ring before the engine signals the channel */
	for (int i = 0; i < 10000 && n == 0; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n == 0)
			usleep(1000);
	}
	if (n != 1)
		FAIL(0, "no flushed receive");
	return wedged(); /* droced releases the rest */
}

Test(daemon_hostile, a_full_completion_channel_does_not_stop_the_engine)
{
	abuser_and_bystander(channel_filler);
}

/*
 * The async eventfd the application gave at OPEN driven to its maximum, then
 * an async event (Last WQE Reached: a QP of an SRQ moved to ERR): droced's
 * thread must not block counting it, whatever becomes of the abuser.
 */
static int async_filler(void *arg)
{
	struct ibv_qp_attr err = {.qp_state = IBV_QPS_ERR};
	struct test_app_end e;
	struct ibv_qp *qp;

	(void)arg;
	if (srq_qp_open(&e, &qp) != 0)
		return 1;
	if (write(e.ctx->async_fd, &efd_full, sizeof(efd_full)) < 0)
		(void)0;
	if (ibv_modify_qp(qp, &err, IBV_QP_STATE) != 0)
		FAIL(0, "QP to ERR");
	return wedged();
}

Test(daemon_hostile, a_full_async_eventfd_does_not_stop_droced)
{
	abuser_and_bystander(async_filler);
	cr_expect_not_null(
		strstr(test_daemon_log(&daemon_), "eventfd takes no count: disconnected"),
		"droced let the abuser go: %s", test_daemon_log(&daemon_));
}

/* CPU time (user + system, clock ticks) droced's main thread has used: a diagnostic only. */
static unsigned long long droced_main_ticks(void)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)daemon_.pid, (int)daemon_.pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after "(comm)": state is field 3, utime 14, stime 15 */
	p = strrchr(buf, ')');
	if (p == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return ut + st;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* droced's loop's wake-ups so far. */
static uint64_t loop_passes(void)
{
	return test_daemon_telemetry_u64(&daemon_, "/droced/loop", "passes");
}

/* What droced's loop did over a window of about 2 s in which nothing asked anything of it. */
struct idle_window {
	uint64_t passes;
	uint64_t served;          /* wake-ups for requests served in the window */
	double ms;                /* from before the first count was asked to after the last came */
	unsigned long long ticks; /* CPU ticks of droced's thread (diagnostic) */
};

static struct idle_window idle_window(void)
{
	struct idle_window w = {.served = 0};
	unsigned long long t0 = droced_main_ticks();
	double ms0 = now_ms();
	uint64_t p0 = loop_passes();

	sleep(2);
	w.passes = loop_passes() - p0;
	w.ms = now_ms() - ms0;
	w.ticks = droced_main_ticks() - t0;
	return w;
}

/*
 * At most a wake-up per 10 ms of the window and a few for what was under way when it
 * began: a loop that spins passes this within the first millisecond.
 */
static void expect_asleep(const struct idle_window *w, const char *what)
{
	uint64_t bound = (uint64_t)(w->ms / 10.0) + 20 + w->served;

	cr_log_info("%s: %llu wake-ups in %.0f ms, %llu CPU ticks", what,
		    (unsigned long long)w->passes, w->ms, w->ticks);

	cr_expect_leq(w->passes, bound,
		      "%s: droced's loop woke %llu times in %.0f ms (at most %llu asleep); its "
		      "thread used %llu CPU ticks of %ld a second",
		      what, (unsigned long long)w->passes, w->ms, (unsigned long long)bound,
		      w->ticks, sysconf(_SC_CLK_TCK));
}

/* More async events than the event ring holds, none of them read. */
static int event_flooder(void *arg)
{
	struct test_app_end e;
	struct ibv_qp *qp;

	(void)arg;
	/* each move to ERR raises Last WQE Reached: 300 events, 256 slots */
	if (srq_qp_open(&e, &qp) != 0 || last_wqe_events(qp, 300) != 0)
		return 1;
	return wedged();
}

/*
 * droced's loop over 2 s while @p app waits (it did its worst), then @p app's end, then
 * another application served: a loop stuck inside one pass would wake no more, but
 * would serve no one either.
 */
static void asleep_while(pid_t app, const char *what)
{
	struct idle_window w;
	pid_t b;

	cr_assert(test_wait_word(&meet->wedged, 1), "application: %s", meet->why[0]);
	usleep(200000); /* droced has done what it would */
	w = idle_window();
	__atomic_store_n(&meet->release, 1, __ATOMIC_RELEASE);
	cr_expect_eq(test_app_wait(app, 30), 0, "application: %s", meet->why[0]);
	expect_asleep(&w, what);
	b = test_app_start(&daemon_, bystander, NULL);
	cr_expect_eq(test_app_wait(b, 40), 0, "another application, after %s: %s", what,
		     meet->why[1]);
}

/* The consumer index of the application's event ring made garbage, then an event. */
static int ring_breaker(void *arg)
{
	struct test_app_end e;
	struct ibv_qp *qp;

	(void)arg;
	if (srq_qp_open(&e, &qp) != 0)
		return 1;
	/* the ring's consumer index line (doc/rings.md): released more than was published */
	__atomic_store_n((uint32_t *)((uint8_t *)to_dctx(e.ctx)->remote->events.addr + 128),
			 0x7654321u, __ATOMIC_RELEASE);
	/* droced loads it once the ring looks full: more events than slots */
	if (last_wqe_events(qp, 300) != 0)
		return 1;
	return wedged();
}

Test(daemon_hostile, a_broken_event_ring_does_not_keep_droced_busy)
{
	asleep_while(test_app_start(&daemon_, ring_breaker, NULL), "a broken event ring");
}

Test(daemon_hostile, an_unread_event_ring_does_not_keep_droced_busy)
{
	/* waiting for the application to read, droced's loop retries every 10 ms, asleep */
	asleep_while(test_app_start(&daemon_, event_flooder, NULL), "an unread event ring");
}

/* ------------------------------------------- droced out of file descriptors */

static void setup_few_fds(void)
{
	/* droced inherits this: about 150 descriptors of its own at start, 150 to give */
	struct rlimit l = {.rlim_cur = 300, .rlim_max = 300};

	meet = test_shared_mem(sizeof(*meet));
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &l), 0);
	test_daemon_start(&daemon_, NULL);
}

TestSuite(daemon_hostile_fds, .init = setup_few_fds, .fini = teardown, .timeout = 150);

/* CQs until droced has no descriptor left for another (each holds its memfd there). */
static int fd_eater(void *arg)
{
	struct test_app_end e;
	int rc, made = 0;

	(void)arg;
	rc = test_app_end_open(&e, 0, IBV_QPT_RC, 4096);
	if (rc != 0)
		FAIL(0, "open: %s", strerror(rc));
	/* each CQ holds a descriptor in droced: 1000 cannot fit in 300, whatever droced's
	 * EAL took (hugepage files or none) */
	while (made < 1000 && ibv_create_cq(e.ctx, 1, NULL, NULL, 0) != NULL)
		made++;
	if (made == 1000)
		FAIL(0, "droced made 1000 CQs with 300 descriptors");
	meet->made = (unsigned int)made;
	return wedged();
}

/*
 * A connection droced has no descriptor to accept: it must not keep droced's loop busy.
 * Telemetry needs a descriptor of droced's too, so the loop is counted from before the
 * application takes them all to after droced has released them; its requests woke the
 * loop once each (a few more for opening the device and closing).
 */
Test(daemon_hostile_fds, a_connection_droced_cannot_accept_does_not_keep_it_busy)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct idle_window w = {.ticks = droced_main_ticks(), .ms = now_ms()};
	uint64_t p0 = loop_passes();
	pid_t a = test_app_start(&daemon_, fd_eater, NULL);
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	char closed[64];

	cr_assert(test_wait_word(&meet->wedged, 1), "application: %s", meet->why[0]);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", daemon_.sock);
	cr_assert_eq(connect(s, (struct sockaddr *)&addr, sizeof(addr)), 0);
	sleep(2);
	close(s);
	__atomic_store_n(&meet->release, 1, __ATOMIC_RELEASE);
	cr_expect_eq(test_app_wait(a, 30), 0, "application: %s", meet->why[0]);
	/* its descriptors back in droced before telemetry takes one */
	snprintf(closed, sizeof(closed), "application pid %d closed", (int)a);
	for (int i = 0; i < 2000 && strstr(test_daemon_log(&daemon_), closed) == NULL; i++)
		usleep(10000);
	cr_assert_not_null(strstr(test_daemon_log(&daemon_), closed), "%s",
			   test_daemon_log(&daemon_));
	w.passes = loop_passes() - p0;
	w.served = 2 * (uint64_t)meet->made + 64;
	w.ms = now_ms() - w.ms;
	w.ticks = droced_main_ticks() - w.ticks;
	expect_asleep(&w, "a connection it cannot accept");
}

/* --------------------------------------------- ring headers rewritten at RESET */

struct header_racer {
	volatile uint32_t *hdr; /* the send ring's header: magic, version, slots, slot_size */
	volatile unsigned int stop;
};

/* Rewrite the geometry droced's engine reads again when it re-attaches after RESET. */
static void *race_header(void *arg)
{
	struct header_racer *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		__atomic_store_n(&r->hdr[2], 1u, __ATOMIC_RELAXED);     /* one slot */
		__atomic_store_n(&r->hdr[3], 65536u, __ATOMIC_RELAXED); /* of 64 KiB */
	}
	return NULL;
}

/*
 * A UD QP cycled through RESET while another thread rewrites its send ring's
 * header, a send posted each time: droced's engine must keep the geometry it
 * gave the ring (1 KiB slots at most), never copy a 64 KiB slot into its own.
 * The rewrite has to land between the engine's re-initialisation of the header
 * and its reading it back: a race, won once in a few thousand cycles here.
 */
static int header_rewriter(void *arg)
{
	struct ibv_qp_init_attr ia = {.cap = {.max_send_wr = 1024,
					      .max_recv_wr = 1,
					      .max_send_sge = 1,
					      .max_recv_sge = 1},
				      .qp_type = IBV_QPT_UD};
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	struct header_racer racer = {.stop = 0};
	struct test_app_end e;
	struct ibv_ah *ah;
	struct ibv_qp *qp;
	pthread_t t;
	int rc;

	(void)arg;
	rc = test_app_end_open(&e, 0, IBV_QPT_UD, 4096);
	if (rc != 0)
		FAIL(0, "open: %s", strerror(rc));
	ia.send_cq = e.cq;
	ia.recv_cq = e.cq;
	qp = ibv_create_qp(e.pd, &ia);
	aa.grh.dgid = e.gid;
	aa.grh.sgid_index = 1;
	ah = ibv_create_ah(e.pd, &aa);
	if (qp == NULL || ah == NULL)
		FAIL(0, "QP, AH: %s", strerror(errno));
	racer.hdr = (volatile uint32_t *)to_dqp(qp)->sq_ring;
	if (pthread_create(&t, NULL, race_header, &racer) != 0)
		FAIL(0, "thread");
	for (int i = 0; i < 30000; i++) {
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};
		struct ibv_sge s = {.addr = (uintptr_t)e.buf, .length = 16, .lkey = e.mr->lkey};
		struct ibv_send_wr wr = {.sg_list = &s,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND,
					 .wr.ud = {.ah = ah,
						   .remote_qpn = qp->qp_num,
						   .remote_qkey = 0x11111111}},
				   *bad;
		struct ibv_wc wc[8];

		if (ibv_modify_qp(qp, &a, IBV_QP_STATE) != 0)
			FAIL(0, "RESET %d: droced gone?", i);
		a = (struct ibv_qp_attr){
			.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111};
		if (ibv_modify_qp(qp, &a,
				  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) !=
		    0)
			FAIL(0, "INIT %d", i);
		a.qp_state = IBV_QPS_RTR;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE) != 0)
			FAIL(0, "RTR %d", i);
		a.qp_state = IBV_QPS_RTS;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0)
			FAIL(0, "RTS %d", i);
		if (ibv_post_send(qp, &wr, &bad) != 0)
			FAIL(0, "post %d", i);
		while (ibv_poll_cq(e.cq, 8, wc) > 0)
			;
	}
	__atomic_store_n(&racer.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	return 0;
}

Test(daemon_hostile, a_ring_header_rewritten_at_reset_does_not_reach_the_engine)
{
	pid_t a = test_app_start(&daemon_, header_rewriter, NULL);
	int status;
	pid_t b;

	cr_expect_eq(test_app_wait(a, 120), 0, "application: %s (droced: %s)", meet->why[0],
		     test_daemon_log(&daemon_));
	if (waitpid(daemon_.pid, &status, WNOHANG) == daemon_.pid) {
		daemon_.pid = -1; /* reaped: nothing left to stop */
		cr_expect_fail("droced ended: %s %d",
			       WIFSIGNALED(status) ? "signal" : "exit status",
			       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}
	b = test_app_start(&daemon_, bystander, NULL);
	cr_expect_eq(test_app_wait(b, 40), 0, "another application: %s", meet->why[1]);
}

/* ------------------------------------------------------------ droced's options */

TestSuite(daemon_hostile_options, .timeout = 30);

/* droced's exit status with @p a1 and @p a2 as its arguments (no device: it never starts). */
static int droced_status(const char *a1, const char *a2)
{
	const char *bin = getenv("DROCE_DROCED");
	int status;
	pid_t pid;

	cr_assert_not_null(bin);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		execl(bin, bin, a1, a2, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Every spelling getopt accepts for -c reads the file: an unknown key in it is status 2. */
Test(daemon_hostile_options, every_spelling_of_config_reads_the_file)
{
	char path[] = "/tmp/droced-conf-XXXXXX", opt[64];
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "no_such_key = 1\n", 16), 16);
	close(fd);
	cr_expect_eq(droced_status("-c", path), 2, "-c FILE");
	cr_expect_eq(droced_status("--config", path), 2, "--config FILE");
	snprintf(opt, sizeof(opt), "--config=%s", path);
	cr_expect_eq(droced_status(opt, NULL), 2, "--config=FILE");
	snprintf(opt, sizeof(opt), "-c%s", path);
	cr_expect_eq(droced_status(opt, NULL), 2, "-cFILE");
	unlink(path);
}
