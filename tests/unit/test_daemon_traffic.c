/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two application processes on one droced, each on its own device of a
 * back-to-back link inside droced, talk RDMA through nothing but verbs calls
 * (DROCE_DAEMON): every RC operation, UD, completion channels woken across
 * the process boundary, and async events. The data path is the shared rings:
 * the applications never start DPDK.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_harness.h"

#define LEN (1u << 20)

/* What the two applications share: addresses, and steps each announces. */
struct meet {
	struct test_app_addr addr[2];
	unsigned int ready[2]; /* 1: address published, 2: connected, 3: receives posted */
	unsigned int done[2];
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
	cr_expect_eq(test_daemon_stop(&daemon_), 0, "droced exits 0 on SIGTERM");
}

TestSuite(daemon_traffic, .init = setup, .fini = teardown, .timeout = 120);

#define FAIL(side, ...)                                                          \
	do {                                                                     \
		snprintf(meet->why[side], sizeof(meet->why[side]), __VA_ARGS__); \
		return 1;                                                        \
	} while (0)

/* Open, publish, wait for the peer, connect. */
static int meet_connect(struct test_app_end *e, int side, enum ibv_qp_type type)
{
	int rc = test_app_end_open(e, side, type, LEN);

	if (rc != 0)
		FAIL(side, "open: %s", strerror(rc));
	test_app_end_addr(e, &meet->addr[side]);
	__atomic_store_n(&meet->ready[side], 1, __ATOMIC_RELEASE);
	if (!test_wait_word(&meet->ready[!side], 1))
		FAIL(side, "no peer");
	rc = test_app_end_connect(e, &meet->addr[!side]);
	if (rc != 0)
		FAIL(side, "connect: %s", strerror(rc));
	__atomic_store_n(&meet->ready[side], 2, __ATOMIC_RELEASE);
	return 0;
}

static int post_recv(struct test_app_end *e, uint64_t id, size_t off, uint32_t len)
{
	struct ibv_sge s = {.addr = (uintptr_t)e->buf + off, .length = len, .lkey = e->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1}, *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

static int post_one(struct test_app_end *e, enum ibv_wr_opcode op, size_t off, uint32_t len,
		    const struct test_app_addr *peer, uint64_t roff)
{
	struct ibv_sge s = {.addr = (uintptr_t)e->buf + off, .length = len, .lkey = e->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = op,
				 .sg_list = &s,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = peer->addr + roff;
		wr.wr.atomic.rkey = peer->rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = peer->addr + roff;
		wr.wr.rdma.rkey = peer->rkey;
	}
	return ibv_post_send(e->qp, &wr, &bad);
}

static int expect_wc(struct test_app_end *e, int side, enum ibv_wc_opcode op, uint32_t len)
{
	struct ibv_wc wc;

	if (test_app_end_poll(e, &wc) != 1)
		FAIL(side, "no completion for opcode %d", op);
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != op || (len != 0 && wc.byte_len != len))
		FAIL(side, "completion: status %s opcode %d byte_len %u",
		     ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
	return 0;
}

/* The requester: SEND, WRITE, READ back, FETCH_ADD; each checked. */
static int rc_requester(void *arg)
{
	struct test_app_end e;
	const struct test_app_addr *peer = &meet->addr[1];

	(void)arg;
	if (meet_connect(&e, 0, IBV_QPT_RC) != 0)
		return 1;
	for (size_t i = 0; i < LEN; i++)
		e.buf[i] = (uint8_t)(i * 7 + 3);
	if (!test_wait_word(&meet->ready[1], 3))
		FAIL(0, "peer posted no receive");
	if (post_one(&e, IBV_WR_SEND, 0, 5000, peer, 0) != 0)
		FAIL(0, "post send");
	if (expect_wc(&e, 0, IBV_WC_SEND, 0))
		return 1;
	if (post_one(&e, IBV_WR_RDMA_WRITE, 0, 300000, peer, 65536) != 0)
		FAIL(0, "post write");
	if (expect_wc(&e, 0, IBV_WC_RDMA_WRITE, 0))
		return 1;
	if (post_one(&e, IBV_WR_RDMA_READ, 512 * 1024, 300000, peer, 65536) != 0)
		FAIL(0, "post read");
	if (expect_wc(&e, 0, IBV_WC_RDMA_READ, 300000))
		return 1;
	if (memcmp(e.buf, e.buf + 512 * 1024, 300000) != 0)
		FAIL(0, "READ brought back other bytes than WRITE put");
	if (post_one(&e, IBV_WR_ATOMIC_FETCH_AND_ADD, 1000000, 8, peer, 8) != 0)
		FAIL(0, "post atomic");
	if (expect_wc(&e, 0, IBV_WC_FETCH_ADD, 8))
		return 1;
	__atomic_store_n(&meet->done[0], 1, __ATOMIC_RELEASE);
	if (!test_wait_word(&meet->done[1], 1))
		FAIL(0, "peer did not finish");
	test_app_end_close(&e);
	return 0;
}

static int rc_responder(void *arg)
{
	struct test_app_end e;
	uint64_t v;

	(void)arg;
	if (meet_connect(&e, 1, IBV_QPT_RC) != 0)
		return 1;
	memset(e.buf, 0, LEN);
	v = 1000;
	memcpy(e.buf + 8, &v, 8);
	if (post_recv(&e, 7, 600000, 8192) != 0)
		FAIL(1, "post_recv");
	__atomic_store_n(&meet->ready[1], 3, __ATOMIC_RELEASE);
	if (expect_wc(&e, 1, IBV_WC_RECV, 5000))
		return 1;
	for (size_t i = 0; i < 5000; i++)
		if (e.buf[600000 + i] != (uint8_t)(i * 7 + 3))
			FAIL(1, "SEND byte %zu differs", i);
	if (!test_wait_word(&meet->done[0], 1))
		FAIL(1, "requester did not finish");
	for (size_t i = 0; i < 300000; i++)
		if (e.buf[65536 + i] != (uint8_t)(i * 7 + 3))
			FAIL(1, "WRITE byte %zu differs", i);
	memcpy(&v, e.buf + 8, 8);
	if (v != 1005)
		FAIL(1, "FETCH_ADD left %llu", (unsigned long long)v);
	__atomic_store_n(&meet->done[1], 1, __ATOMIC_RELEASE);
	test_app_end_close(&e);
	return 0;
}

Test(daemon_traffic, rc_every_operation_between_two_processes)
{
	pid_t a = test_app_start(&daemon_, rc_requester, NULL);
	pid_t b = test_app_start(&daemon_, rc_responder, NULL);
	int ra = test_app_wait(a, 60), rb = test_app_wait(b, 60);

	cr_expect_eq(ra, 0, "requester: %s", meet->why[0]);
	cr_expect_eq(rb, 0, "responder: %s", meet->why[1]);
}

/* UD: SEND with an AH made through droced; the GRH area and the payload arrive. */
static int ud_sender(void *arg)
{
	struct test_app_end e;
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	struct ibv_ah *ah;
	struct ibv_sge s;
	struct ibv_send_wr wr = {.num_sge = 1,
				 .sg_list = &s,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	(void)arg;
	if (meet_connect(&e, 0, IBV_QPT_UD) != 0)
		return 1;
	aa.grh.dgid = meet->addr[1].gid;
	aa.grh.sgid_index = 1;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(e.pd, &aa);
	if (ah == NULL)
		FAIL(0, "create_ah: %s", strerror(errno));
	for (int i = 0; i < 1000; i++)
		e.buf[i] = (uint8_t)(255 - i);
	s = (struct ibv_sge){.addr = (uintptr_t)e.buf, .length = 1000, .lkey = e.mr->lkey};
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = meet->addr[1].qpn;
	wr.wr.ud.remote_qkey = 0x11111111;
	if (!test_wait_word(&meet->ready[1], 3))
		FAIL(0, "peer posted no receive");
	if (ibv_post_send(e.qp, &wr, &bad) != 0)
		FAIL(0, "post_send");
	if (expect_wc(&e, 0, IBV_WC_SEND, 0))
		return 1;
	if (!test_wait_word(&meet->done[1], 1))
		FAIL(0, "peer did not finish");
	if (ibv_destroy_ah(ah) != 0)
		FAIL(0, "destroy_ah");
	test_app_end_close(&e);
	return 0;
}

static int ud_receiver(void *arg)
{
	struct test_app_end e;

	(void)arg;
	if (meet_connect(&e, 1, IBV_QPT_UD) != 0)
		return 1;
	if (post_recv(&e, 1, 0, 40 + 1000) != 0)
		FAIL(1, "post_recv");
	__atomic_store_n(&meet->ready[1], 3, __ATOMIC_RELEASE);
	if (expect_wc(&e, 1, IBV_WC_RECV, 40 + 1000))
		return 1;
	for (int i = 0; i < 1000; i++)
		if (e.buf[40 + i] != (uint8_t)(255 - i))
			FAIL(1, "byte %d differs", i);
	__atomic_store_n(&meet->done[1], 1, __ATOMIC_RELEASE);
	test_app_end_close(&e);
	return 0;
}

Test(daemon_traffic, ud_send_through_an_ah_made_by_droced)
{
	pid_t a = test_app_start(&daemon_, ud_sender, NULL);
	pid_t b = test_app_start(&daemon_, ud_receiver, NULL);
	int ra = test_app_wait(a, 60), rb = test_app_wait(b, 60);

	cr_expect_eq(ra, 0, "sender: %s", meet->why[0]);
	cr_expect_eq(rb, 0, "receiver: %s", meet->why[1]);
}

/*
 * The receiver sleeps in poll() on its completion channel and on async_fd:
 * droced's engine wakes the first for the SEND (the CQ is armed), and raises
 * SRQ_LIMIT_REACHED on the second when the SRQ falls below its limit.
 */
static int events_receiver(void *arg)
{
	struct test_app_end e;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_srq *srq;
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 8, .max_sge = 1}};
	struct ibv_srq_attr lim = {.srq_limit = 3};
	struct ibv_qp_init_attr ia = {.cap = {.max_send_wr = 4, .max_send_sge = 1},
				      .qp_type = IBV_QPT_RC};
	struct ibv_async_event aev;
	struct ibv_wc wc;
	struct pollfd pfd;
	void *ctx_out;

	(void)arg;
	if (test_app_end_open(&e, 1, IBV_QPT_RC, LEN) != 0)
		FAIL(1, "open");
	/* the QP the peer talks to: on a channel-armed CQ and an SRQ */
	ch = ibv_create_comp_channel(e.ctx);
	cq = ch != NULL ? ibv_create_cq(e.ctx, 16, (void *)0x5eed, ch, 0) : NULL;
	srq = ibv_create_srq(e.pd, &sa);
	if (cq == NULL || srq == NULL)
		FAIL(1, "channel/cq/srq: %s", strerror(errno));
	ibv_destroy_qp(e.qp);
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.srq = srq;
	e.qp = ibv_create_qp(e.pd, &ia);
	if (e.qp == NULL)
		FAIL(1, "create_qp: %s", strerror(errno));
	{
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
					.port_num = 1,
					.qp_access_flags = IBV_ACCESS_REMOTE_WRITE};

		if (ibv_modify_qp(e.qp, &a,
				  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_ACCESS_FLAGS) != 0)
			FAIL(1, "init");
	}
	test_app_end_addr(&e, &meet->addr[1]);
	__atomic_store_n(&meet->ready[1], 1, __ATOMIC_RELEASE);
	if (!test_wait_word(&meet->ready[0], 1) || test_app_end_connect(&e, &meet->addr[0]) != 0)
		FAIL(1, "connect");
	for (int i = 0; i < 5; i++) {
		struct ibv_sge s = {
			.addr = (uintptr_t)e.buf + i * 4096u, .length = 4096, .lkey = e.mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1}, *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad) != 0)
			FAIL(1, "post_srq_recv");
	}
	if (ibv_modify_srq(srq, &lim, IBV_SRQ_LIMIT) != 0 || ibv_req_notify_cq(cq, 0) != 0)
		FAIL(1, "arm");
	__atomic_store_n(&meet->ready[1], 3, __ATOMIC_RELEASE);
	/* one SEND: a channel event */
	pfd = (struct pollfd){.fd = ch->fd, .events = POLLIN};
	if (poll(&pfd, 1, 10000) != 1)
		FAIL(1, "the completion channel's fd did not wake");
	if (ibv_get_cq_event(ch, &ev_cq, &ctx_out) != 0 || ev_cq != cq || ctx_out != (void *)0x5eed)
		FAIL(1, "ibv_get_cq_event named another CQ");
	ibv_ack_cq_events(cq, 1);
	if (ibv_poll_cq(cq, 1, &wc) != 1 || wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV)
		FAIL(1, "no receive completion after the event");
	/* the peer's second and third SENDs leave 2 < 3 receives: the limit event */
	__atomic_store_n(&meet->done[1], 1, __ATOMIC_RELEASE);
	pfd = (struct pollfd){.fd = e.ctx->async_fd, .events = POLLIN};
	if (poll(&pfd, 1, 10000) != 1)
		FAIL(1, "async_fd did not wake");
	if (ibv_get_async_event(e.ctx, &aev) != 0 ||
	    aev.event_type != IBV_EVENT_SRQ_LIMIT_REACHED || aev.element.srq != srq)
		FAIL(1, "async event %d, not SRQ_LIMIT_REACHED on our SRQ", aev.event_type);
	ibv_ack_async_event(&aev);
	__atomic_store_n(&meet->done[1], 2, __ATOMIC_RELEASE);
	if (!test_wait_word(&meet->done[0], 1))
		FAIL(1, "peer did not finish");
	ibv_destroy_qp(e.qp);
	e.qp = NULL;
	if (ibv_destroy_srq(srq) != 0 || ibv_destroy_cq(cq) != 0 ||
	    ibv_destroy_comp_channel(ch) != 0)
		FAIL(1, "destroy");
	test_app_end_close(&e);
	return 0;
}

static int events_sender(void *arg)
{
	struct test_app_end e;

	(void)arg;
	if (meet_connect(&e, 0, IBV_QPT_RC) != 0)
		return 1;
	if (!test_wait_word(&meet->ready[1], 3))
		FAIL(0, "peer not ready");
	if (post_one(&e, IBV_WR_SEND, 0, 100, &meet->addr[1], 0) != 0)
		FAIL(0, "post");
	if (expect_wc(&e, 0, IBV_WC_SEND, 0))
		return 1;
	if (!test_wait_word(&meet->done[1], 1))
		FAIL(0, "peer saw no channel event");
	for (int i = 0; i < 2; i++) {
		if (post_one(&e, IBV_WR_SEND, 0, 100, &meet->addr[1], 0) != 0)
			FAIL(0, "post");
		if (expect_wc(&e, 0, IBV_WC_SEND, 0))
			return 1;
	}
	__atomic_store_n(&meet->done[0], 1, __ATOMIC_RELEASE);
	if (!test_wait_word(&meet->done[1], 2))
		FAIL(0, "peer saw no async event");
	test_app_end_close(&e);
	return 0;
}

Test(daemon_traffic, channel_and_async_events_wake_the_application)
{
	pid_t a = test_app_start(&daemon_, events_sender, NULL);
	pid_t b = test_app_start(&daemon_, events_receiver, NULL);
	int ra = test_app_wait(a, 60), rb = test_app_wait(b, 60);

	cr_expect_eq(ra, 0, "sender: %s", meet->why[0]);
	cr_expect_eq(rb, 0, "receiver: %s", meet->why[1]);
}

/* ------------------------------------------------------- several pairs at once */

#define PAIRS 3

struct pair_meet {
	struct test_app_addr addr[2];
	unsigned int ready[2], done[2];
	char why[2][120];
};

static struct pair_meet *pairs;

struct pair_arg {
	int pair, side;
};

#define PFAIL(m, side, ...)                                                    \
	do {                                                                   \
		snprintf((m)->why[side], sizeof((m)->why[side]), __VA_ARGS__); \
		return 1;                                                      \
	} while (0)

/* Side 0 WRITEs 64 x 16 KiB into side 1, each pair its own pattern; side 1 checks. */
static int pair_app(void *arg)
{
	const struct pair_arg *p = arg;
	struct pair_meet *m = &pairs[p->pair];
	struct test_app_end e;
	int side = p->side, rc = test_app_end_open(&e, side, IBV_QPT_RC, LEN);

	if (rc != 0)
		PFAIL(m, side, "open: %s", strerror(rc));
	memset(e.buf, side == 0 ? 0x10 + p->pair : 0, LEN);
	test_app_end_addr(&e, &m->addr[side]);
	__atomic_store_n(&m->ready[side], 1, __ATOMIC_RELEASE);
	if (!test_wait_word(&m->ready[!side], 1) || test_app_end_connect(&e, &m->addr[!side]) != 0)
		PFAIL(m, side, "connect");
	__atomic_store_n(&m->ready[side], 2, __ATOMIC_RELEASE);
	if (!test_wait_word(&m->ready[!side], 2))
		PFAIL(m, side, "peer not connected");
	if (side == 0) {
		for (int i = 0; i < 64; i++) {
			struct ibv_sge s = {.addr = (uintptr_t)e.buf + (uint32_t)i * 16384u,
					    .length = 16384,
					    .lkey = e.mr->lkey};
			struct ibv_send_wr wr = {.sg_list = &s,
						 .num_sge = 1,
						 .opcode = IBV_WR_RDMA_WRITE,
						 .send_flags = IBV_SEND_SIGNALED,
						 .wr.rdma = {.remote_addr = m->addr[1].addr +
									    (uint32_t)i * 16384u,
							     .rkey = m->addr[1].rkey}},
					   *bad;
			struct ibv_wc wc;

			if (ibv_post_send(e.qp, &wr, &bad) != 0)
				PFAIL(m, side, "post %d", i);
			if (test_app_end_poll(&e, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
				PFAIL(m, side, "WRITE %d: %s", i, ibv_wc_status_str(wc.status));
		}
		__atomic_store_n(&m->done[0], 1, __ATOMIC_RELEASE);
	} else {
		if (!test_wait_word(&m->done[0], 1))
			PFAIL(m, side, "the writer did not finish");
		for (size_t i = 0; i < 64u * 16384u; i++)
			if (e.buf[i] != 0x10 + p->pair)
				PFAIL(m, side, "byte %zu is %#x, not pair %d's", i, e.buf[i],
				      p->pair);
	}
	__atomic_store_n(&m->done[side], 2, __ATOMIC_RELEASE);
	if (!test_wait_word(&m->done[!side], 2))
		PFAIL(m, side, "peer did not finish");
	test_app_end_close(&e);
	return 0;
}

Test(daemon_traffic, several_pairs_of_applications_at_once)
{
	static struct pair_arg args[PAIRS][2];
	pid_t pid[PAIRS][2];

	pairs = test_shared_mem(sizeof(*pairs) * PAIRS);
	for (int p = 0; p < PAIRS; p++)
		for (int s = 0; s < 2; s++) {
			args[p][s] = (struct pair_arg){.pair = p, .side = s};
			pid[p][s] = test_app_start(&daemon_, pair_app, &args[p][s]);
		}
	for (int p = 0; p < PAIRS; p++)
		for (int s = 0; s < 2; s++)
			cr_expect_eq(test_app_wait(pid[p][s], 90), 0, "pair %d side %d: %s", p, s,
				     pairs[p].why[s]);
}
