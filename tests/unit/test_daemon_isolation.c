/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced against applications that die or misbehave: kill -9 in the middle of
 * traffic releases everything the application held and its peer's QP errors
 * out; garbage written into an application's own rings fails that
 * application's QP only; another application's keys do not work; memory
 * droced cannot map is refused with EINVAL. droced serves on afterwards.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "droce_shared.h"
#include "verbs_priv.h"

#define LEN (1u << 20)

struct meet {
	struct test_app_addr addr[2];
	unsigned int ready[2];
	unsigned int progress; /* WRITEs completed by the streaming application */
	unsigned int killed;   /* set by the test once the streamer is gone */
	uint32_t lkey;         /* the victim's lkey, for the intruder */
	uint64_t buf;          /* the victim's buffer address */
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

TestSuite(daemon_isolation, .init = setup, .fini = teardown, .timeout = 120);

#define FAIL(side, ...)                                                          \
	do {                                                                     \
		snprintf(meet->why[side], sizeof(meet->why[side]), __VA_ARGS__); \
		return 1;                                                        \
	} while (0)

static int connect_side(struct test_app_end *e, int side)
{
	int rc = test_app_end_open(e, side, IBV_QPT_RC, LEN);

	if (rc != 0)
		FAIL(side, "open: %s", strerror(rc));
	test_app_end_addr(e, &meet->addr[side]);
	__atomic_store_n(&meet->ready[side], 1, __ATOMIC_RELEASE);
	if (!test_wait_word(&meet->ready[!side], 1))
		FAIL(side, "no peer");
	rc = test_app_end_connect(e, &meet->addr[!side]);
	if (rc != 0)
		FAIL(side, "connect: %s", strerror(rc));
	return 0;
}

static int post_write(struct test_app_end *e, uint32_t len)
{
	struct ibv_sge s = {.addr = (uintptr_t)e->buf, .length = len, .lkey = e->mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &s,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.rdma = {.remote_addr = meet->addr[1].addr,
					     .rkey = meet->addr[1].rkey}},
			   *bad;

	return ibv_post_send(e->qp, &wr, &bad);
}

/* Streams WRITEs to side 1 until killed. */
static int streamer(void *arg)
{
	struct test_app_end e;
	int outstanding = 0;

	(void)arg;
	if (connect_side(&e, 0) != 0)
		return 1;
	for (;;) {
		struct ibv_wc wc;

		while (outstanding < 16 && post_write(&e, 65536) == 0)
			outstanding++;
		if (ibv_poll_cq(e.cq, 1, &wc) == 1) {
			if (wc.status != IBV_WC_SUCCESS)
				FAIL(0, "write: %s", ibv_wc_status_str(wc.status));
			outstanding--;
			__atomic_fetch_add(&meet->progress, 1, __ATOMIC_RELEASE);
		}
	}
}

/* Side 1: once the streamer is killed, its SEND to it must end in RETRY_EXC_ERR. */
static int survivor(void *arg)
{
	struct test_app_end e;
	struct ibv_sge s;
	struct ibv_send_wr wr = {.sg_list = &s,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct ibv_wc wc;

	(void)arg;
	if (connect_side(&e, 1) != 0)
		return 1;
	if (!test_wait_word(&meet->killed, 1))
		FAIL(1, "never told the streamer was killed");
	s = (struct ibv_sge){.addr = (uintptr_t)e.buf, .length = 64, .lkey = e.mr->lkey};
	if (ibv_post_send(e.qp, &wr, &bad) != 0)
		FAIL(1, "post_send");
	if (test_app_end_poll(&e, &wc) != 1)
		FAIL(1, "no completion for a SEND to a killed application");
	if (wc.status != IBV_WC_RETRY_EXC_ERR)
		FAIL(1, "SEND to a killed application: %s, not RETRY_EXC_ERR",
		     ibv_wc_status_str(wc.status));
	test_app_end_close(&e);
	return 0;
}

/* An application that opens, makes objects, checks a QP works locally, and closes. */
static int newcomer(void *arg)
{
	struct test_app_end e;
	int rc = test_app_end_open(&e, 0, IBV_QPT_RC, 4096);

	(void)arg;
	if (rc != 0)
		FAIL(0, "open after the kill: %s", strerror(rc));
	test_app_end_close(&e);
	return 0;
}

static bool log_has(const char *needle)
{
	for (int i = 0; i < 2000; i++) {
		if (strstr(test_daemon_log(&daemon_), needle) != NULL)
			return true;
		usleep(5000);
	}
	return false;
}

Test(daemon_isolation, kill_9_mid_traffic_releases_everything_and_the_peer_errors_out)
{
	pid_t a = test_app_start(&daemon_, streamer, NULL);
	pid_t b = test_app_start(&daemon_, survivor, NULL);
	char line[96];

	cr_assert(test_wait_word(&meet->progress, 200), "no traffic: %s", meet->why[0]);
	cr_assert_eq(kill(a, SIGKILL), 0);
	cr_assert_eq(test_app_wait(a, 10), 128 + SIGKILL);
	snprintf(line, sizeof(line), "application pid %d closed", (int)a);
	cr_assert(log_has(line), "droced did not release the killed application: %s",
		  test_daemon_log(&daemon_));
	__atomic_store_n(&meet->killed, 1, __ATOMIC_RELEASE);
	cr_expect_eq(test_app_wait(b, 60), 0, "survivor: %s", meet->why[1]);
	memset(meet->why, 0, sizeof(meet->why));
	cr_expect_eq(test_app_wait(test_app_start(&daemon_, newcomer, NULL), 30), 0, "%s",
		     meet->why[0]);
}

/* ------------------------------------------------------- garbage in one's own rings */

/* A fresh RC QP of @p e in RTS towards side 1's published address. */
static struct ibv_qp *fresh_qp(struct test_app_end *e)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC};
	struct ibv_qp *old = e->qp, *qp = ibv_create_qp(e->pd, &ia);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};

	if (qp == NULL || ibv_modify_qp(qp, &a,
					IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						IBV_QP_ACCESS_FLAGS) != 0)
		return NULL;
	e->qp = qp;
	if (test_app_end_connect(e, &meet->addr[1]) != 0)
		qp = NULL;
	e->qp = old;
	return qp;
}

static enum ibv_qp_state qp_state_within(struct ibv_qp *qp, enum ibv_qp_state want)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	for (int i = 0; i < 2000; i++) {
		if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) == 0 && a.qp_state == want)
			break;
		usleep(5000);
	}
	return a.qp_state;
}

/* The intruder: its own rings, then the victim's key. */
static int intruder(void *arg)
{
	struct test_app_end e;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	struct ibv_sge s;
	struct ibv_send_wr wr = {.sg_list = &s,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	(void)arg;
	if (test_app_end_open(&e, 0, IBV_QPT_RC, LEN) != 0)
		FAIL(0, "open");
	if (!test_wait_word(&meet->ready[1], 1))
		FAIL(0, "no victim");
	/* 1. a producer index no correct producer writes: the QP goes to ERR */
	qp = fresh_qp(&e);
	if (qp == NULL)
		FAIL(0, "fresh QP");
	__atomic_store_n(to_dqp(qp)->sq.prod, 0x7fffffffu, __ATOMIC_RELEASE);
	if (qp_state_within(qp, IBV_QPS_ERR) != IBV_QPS_ERR)
		FAIL(0, "a corrupt send ring left the QP out of ERR");
	ibv_destroy_qp(qp);
	while (ibv_poll_cq(e.cq, 1, &wc) == 1)
		;
	/* 2. a slot of random bytes published: an error completion, never a crash */
	qp = fresh_qp(&e);
	if (qp == NULL)
		FAIL(0, "fresh QP");
	srand(7);
	for (int k = 0; k < 8; k++) {
		uint8_t *slot = droce_ring_prod_slot(&to_dqp(qp)->sq, 0);

		for (uint32_t i = 0; i < to_dqp(qp)->sq.slot_size; i++)
			slot[i] = (uint8_t)rand();
		droce_ring_prod_publish(&to_dqp(qp)->sq, 1);
	}
	if (test_app_end_poll(&e, &wc) != 1 || wc.status == IBV_WC_SUCCESS)
		FAIL(0, "random WQEs completed without an error");
	ibv_destroy_qp(qp);
	while (ibv_poll_cq(e.cq, 1, &wc) == 1)
		;
	/* 3. the victim's lkey and address from the intruder's QP: a protection error */
	qp = fresh_qp(&e);
	if (qp == NULL)
		FAIL(0, "fresh QP");
	s = (struct ibv_sge){.addr = meet->buf, .length = 4096, .lkey = meet->lkey};
	if (ibv_post_send(qp, &wr, &bad) != 0)
		FAIL(0, "post_send");
	if (test_app_end_poll(&e, &wc) != 1 || wc.status != IBV_WC_LOC_PROT_ERR)
		FAIL(0, "another application's lkey: %s, not LOC_PROT_ERR",
		     ibv_wc_status_str(wc.status));
	ibv_destroy_qp(qp);
	/* 4. forged control words: droced checks a modify against the state it knows */
	{
		struct ibv_qp_init_attr ia = {.send_cq = e.cq,
					      .recv_cq = e.cq,
					      .cap = {.max_send_wr = 4,
						      .max_recv_wr = 4,
						      .max_send_sge = 1,
						      .max_recv_sge = 1},
					      .qp_type = IBV_QPT_RC};
		struct ibv_qp_attr init = {.qp_state = IBV_QPS_INIT};

		qp = ibv_create_qp(e.pd, &ia);
		if (qp == NULL)
			FAIL(0, "create_qp");
		/* RESET, but the shared words say INIT: INIT -> INIT needs no attribute,
		 * RESET -> INIT needs the port, P_Key index and access flags */
		__atomic_store_n(&to_dqp(qp)->ctl->state, IBV_QPS_INIT, __ATOMIC_RELAXED);
		__atomic_store_n(&to_dqp(qp)->ctl->gen, 77, __ATOMIC_RELEASE);
		if (ibv_modify_qp(qp, &init, IBV_QP_STATE) != EINVAL)
			FAIL(0, "droced took RESET -> INIT without attributes on forged words");
		ibv_destroy_qp(qp);
	}
	/* 5. memory droced cannot map: EINVAL */
	{
		void *priv = aligned_alloc(4096, 8192);

		if (ibv_reg_mr(e.pd, priv, 8192, IBV_ACCESS_LOCAL_WRITE) != NULL || errno != EINVAL)
			FAIL(0, "private memory registered (errno %d)", errno);
		free(priv);
	}
	test_app_end_close(&e);
	__atomic_store_n(&meet->ready[0], 9, __ATOMIC_RELEASE);
	return 0;
}

static int victim(void *arg)
{
	struct test_app_end e;

	(void)arg;
	if (test_app_end_open(&e, 1, IBV_QPT_RC, LEN) != 0)
		FAIL(1, "open");
	memset(e.buf, 0x5a, LEN);
	test_app_end_addr(&e, &meet->addr[1]);
	meet->lkey = e.mr->lkey;
	meet->buf = (uintptr_t)e.buf;
	__atomic_store_n(&meet->ready[1], 1, __ATOMIC_RELEASE);
	if (!test_wait_word(&meet->ready[0], 9))
		FAIL(1, "intruder did not finish: %s", meet->why[0][0] ? "failed" : "hung");
	for (size_t i = 0; i < LEN; i++)
		if (e.buf[i] != 0x5a)
			FAIL(1, "byte %zu of the victim changed", i);
	test_app_end_close(&e);
	return 0;
}

Test(daemon_isolation, garbage_and_foreign_keys_fail_only_the_guilty_application)
{
	pid_t v = test_app_start(&daemon_, victim, NULL);
	pid_t i = test_app_start(&daemon_, intruder, NULL);

	cr_expect_eq(test_app_wait(i, 60), 0, "intruder: %s", meet->why[0]);
	cr_expect_eq(test_app_wait(v, 60), 0, "victim: %s", meet->why[1]);
	memset(meet->why, 0, sizeof(meet->why));
	cr_expect_eq(test_app_wait(test_app_start(&daemon_, newcomer, NULL), 30), 0, "%s",
		     meet->why[0]);
}
