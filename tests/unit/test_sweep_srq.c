/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A shared receive queue over a ring link (tests/common/sweep.c): three RC, one
 * UC and one UD QP of the peer draw from one SRQ; e0 sends to them in turn.
 * Every message takes the next SRQ WQE whichever QP it arrives on, with its
 * length, immediate, bytes and QP number; the limit event fires once, when the
 * WQEs left drop below the limit, and disarms the SRQ; an empty SRQ makes RC
 * wait (RNR) until a WQE is posted; a UD datagram too long for the WQE at the
 * head completes that WQE with IBV_WC_LOC_LEN_ERR; a QP of the SRQ in Error leaves
 * the SRQ's WQEs to the others and raises Last WQE Reached; the pools end where they started.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "sweep.h"

#define NQP      5
#define SLOT     16384u
#define POSTED   40u
#define LIMIT    10u
#define FIRST_ID 1000u
#define BAD_LKEY 0x12345600u /* a key no table entry has */

static const enum sw_kind kind_of[NQP] = {SW_RC, SW_RC, SW_RC, SW_UC, SW_UD};

static struct sw_run r;
static struct ibv_srq *srq;
static struct ibv_cq *rcq;             /* the peer's receive CQ, shared by its SRQ QPs */
static struct sw_end x0[NQP], x1[NQP]; /* e0 and the peer, each pair with its own QP */
static uint32_t wqes;                  /* SRQ WQEs posted */

static void srq_post(uint32_t len, uint32_t lkey)
{
	struct ibv_sge s = {.addr = (uintptr_t)r.e1.buf + SW_RECV(&r) + (wqes % 32) * SLOT,
			    .length = len,
			    .lkey = lkey};
	struct ibv_recv_wr wr = {.wr_id = FIRST_ID + wqes, .sg_list = &s, .num_sge = 1}, *bad;

	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	wqes++;
}

static struct ibv_qp *qp_create(struct sw_end *e, int i, bool on_srq)
{
	static const enum ibv_qp_type type[SW_KINDS] = {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD};
	enum sw_kind k = kind_of[i];
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = type[k],
	};

	e->scq[k] = ibv_create_cq(e->ctx, 256, NULL, NULL, 0);
	cr_assert_not_null(e->scq[k]);
	e->rcq[k] = on_srq ? rcq : ibv_create_cq(e->ctx, 256, NULL, NULL, 0);
	ia.send_cq = e->scq[k];
	ia.recv_cq = e->rcq[k];
	ia.srq = on_srq ? srq : NULL;
	e->qp[k] = ibv_create_qp(e->pd, &ia);
	cr_assert_not_null(e->qp[k], "create QP %d: %s", i, strerror(errno));
	return e->qp[k];
}

static void setup(void)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 64, .max_sge = 1}};

	sw_ring_setup(&r, sw_eth_mtu(IBV_MTU_1024), NULL, 32 * SLOT);
	srq = ibv_create_srq(r.e1.pd, &sa);
	cr_assert_not_null(srq);
	rcq = ibv_create_cq(r.e1.ctx, 1024, NULL, NULL, 0);
	cr_assert_not_null(rcq);
	for (int i = 0; i < NQP; i++) {
		enum sw_kind k = kind_of[i];
		struct sw_path p0 = sw_path_of(&r, k, false), p1 = sw_path_of(&r, k, true);

		/* the ends' buffers, PD and keys; a QP of their own */
		x0[i] = r.e0;
		x1[i] = r.e1;
		x0[i].ah = NULL;
		x1[i].ah = NULL;
		p0.dest_qpn = qp_create(&x1[i], i, true)->qp_num;
		p1.dest_qpn = qp_create(&x0[i], i, false)->qp_num;
		cr_assert_eq(sw_end_connect(&x0[i], &p0), 0);
		cr_assert_eq(sw_end_connect(&x1[i], &p1), 0);
	}
}

static uint32_t len_of(uint32_t m)
{
	return kind_of[m % NQP] == SW_UD ? (m * 37u) % r.pmtu : (m * 131u) % (3 * r.pmtu) + 1;
}

/* Message @p m from pair m % NQP: it must take SRQ WQE @p wqe. */
static void message(uint32_t m, uint32_t wqe)
{
	int i = (int)(m % NQP);
	enum sw_kind k = kind_of[i];
	uint32_t len = len_of(m), grh = k == SW_UD ? 40 : 0;
	struct sw_reply rep;
	struct ibv_wc wc;

	snprintf(r.what, sizeof(r.what), "message %u over %s QP %d (%u bytes)", m, sw_kind_name[k],
		 i, len);
	sw_fill(r.e0.buf + SW_SRC(&r), len, m, 0);
	sw_serve(&x0[i],
		 &(struct sw_cmd){.op = SW_POST,
				  .kind = k,
				  .wr_op = IBV_WR_SEND_WITH_IMM,
				  .id = m,
				  .off = SW_SRC(&r),
				  .len = len,
				  .imm = m},
		 &rep);
	cr_assert_eq(rep.rc, 0, "%s: post: %s", r.what, strerror(-rep.rc));
	cr_assert_eq(sw_poll_one(x0[i].scq[k], &wc, SW_LIVENESS), 0, "%s: no send completion",
		     r.what);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s: %s", r.what, ibv_wc_status_str(wc.status));
	cr_assert_eq(sw_poll_one(rcq, &wc, SW_LIVENESS), 0, "%s: no receive completion", r.what);
	cr_assert_eq(wc.wr_id, FIRST_ID + wqe, "%s: took SRQ WQE %llu, expected %u", r.what,
		     (unsigned long long)wc.wr_id, FIRST_ID + wqe);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s: %s", r.what, ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.qp_num, x1[i].qp[k]->qp_num, "%s: arrived on QP %u", r.what, wc.qp_num);
	cr_expect_eq(wc.byte_len, grh + len, "%s: %u bytes", r.what, wc.byte_len);
	cr_expect_eq(be32toh(wc.imm_data), m, "%s: immediate %u", r.what, be32toh(wc.imm_data));
	cr_expect_eq(sw_mismatch(r.e1.buf + SW_RECV(&r) + (wqe % 32) * SLOT + grh, len, m, 0), -1,
		     "%s: bytes", r.what);
}

/* A UD datagram of @p len bytes from pair 4 (UD), its send completion successful. */
static void ud_send(uint64_t id, uint32_t len)
{
	struct ibv_wc wc;

	cr_assert_eq(sw_post_chain(&x0[4], SW_UD,
				   &(struct ibv_send_wr){
					   .wr_id = id,
					   .sg_list = &(struct ibv_sge){.addr = (uintptr_t)r.e0.buf,
									.length = len,
									.lkey = r.e0.mr->lkey},
					   .num_sge = 1,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED,
					   .wr.ud = {.ah = x0[4].ah,
						     .remote_qpn = x1[4].qp[SW_UD]->qp_num,
						     .remote_qkey = SW_QKEY}},
				   0),
		     0);
	cr_assert_eq(sw_poll_one(x0[4].scq[SW_UD], &wc, SW_LIVENESS), 0);
	cr_expect_eq(wc.wr_id, id);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "UD send: %s", ibv_wc_status_str(wc.status));
}

static int async_event(struct ibv_async_event *ev, int seconds)
{
	struct pollfd pfd = {.fd = r.e1.ctx->async_fd, .events = POLLIN};

	if (poll(&pfd, 1, seconds * 1000) != 1)
		return -1;
	cr_assert_eq(ibv_get_async_event(r.e1.ctx, ev), 0);
	ibv_ack_async_event(ev);
	return 0;
}

static void expect_no_event(const char *when)
{
	struct ibv_async_event ev;

	cr_expect_neq(async_event(&ev, 0), 0, "%s: event %s", when,
		      ibv_event_type_str(ev.event_type));
}

static void expect_event(enum ibv_event_type type, struct ibv_qp *qp, const char *when)
{
	struct ibv_async_event ev;

	cr_assert_eq(async_event(&ev, 5), 0, "%s: no %s event", when, ibv_event_type_str(type));
	cr_expect_eq(ev.event_type, type, "%s: event %s, expected %s", when,
		     ibv_event_type_str(ev.event_type), ibv_event_type_str(type));
	if (type == IBV_EVENT_SRQ_LIMIT_REACHED)
		cr_expect_eq(ev.element.srq, srq, "%s: another SRQ's event", when);
	else
		cr_expect_eq(ev.element.qp, qp, "%s: another QP's event", when);
}

static void teardown(void)
{
	for (int i = 0; i < NQP; i++) {
		enum sw_kind k = kind_of[i];

		cr_expect_eq(ibv_destroy_qp(x1[i].qp[k]), 0);
		cr_expect_eq(ibv_destroy_qp(x0[i].qp[k]), 0);
		if (x0[i].ah != NULL)
			ibv_destroy_ah(x0[i].ah);
		if (x1[i].ah != NULL)
			ibv_destroy_ah(x1[i].ah);
	}
	cr_expect_eq(ibv_destroy_srq(srq), 0);
	sw_finish(&r);
}

TestSuite(sweep_srq, .timeout = 60);

Test(sweep_srq, shared_by_rc_uc_ud_with_the_limit_event)
{
	struct ibv_srq_attr a = {.srq_limit = LIMIT};
	uint32_t m;

	setup();
	for (uint32_t j = 0; j < POSTED; j++)
		srq_post(SLOT, r.e1.mr->lkey);
	cr_assert_eq(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), 0);
	/* down to LIMIT WQEs left: not below it yet */
	for (m = 0; m < POSTED - LIMIT; m++)
		message(m, m);
	sw_settle(&r);
	expect_no_event("LIMIT WQEs left");
	/* one fewer: the event, once, and the SRQ disarmed */
	message(m, m);
	m++;
	expect_event(IBV_EVENT_SRQ_LIMIT_REACHED, NULL, "below the limit");
	cr_assert_eq(ibv_query_srq(srq, &a), 0);
	cr_expect_eq(a.srq_limit, 0, "the limit still armed after its event");
	for (; m < POSTED; m++)
		message(m, m);
	sw_settle(&r);
	expect_no_event("the SRQ empty");
	teardown();
}

Test(sweep_srq, empty_srq_makes_rc_wait_until_a_wqe_is_posted)
{
	struct ibv_wc wc;

	setup();
	/* pair 0 is RC: its SEND meets an empty SRQ and is retried after RNR NAKs */
	sw_fill(r.e0.buf, 100, 7, 0);
	cr_assert_eq(sw_post_chain(&x0[0], SW_RC,
				   &(struct ibv_send_wr){
					   .wr_id = 0,
					   .sg_list = &(struct ibv_sge){.addr = (uintptr_t)r.e0.buf,
									.length = 100,
									.lkey = r.e0.mr->lkey},
					   .num_sge = 1,
					   .opcode = IBV_WR_SEND_WITH_IMM,
					   .send_flags = IBV_SEND_SIGNALED},
				   0),
		     0);
	cr_expect_eq(sw_poll_one(x0[0].scq[SW_RC], &wc, 0), -EAGAIN,
		     "completed without a receive WQE: %s", ibv_wc_status_str(wc.status));
	srq_post(SLOT, r.e1.mr->lkey);
	cr_assert_eq(sw_poll_one(x0[0].scq[SW_RC], &wc, SW_LIVENESS), 0);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(sw_poll_one(rcq, &wc, SW_LIVENESS), 0);
	cr_expect_eq(wc.wr_id, FIRST_ID);
	cr_expect_eq(wc.byte_len, 100);
	cr_expect_eq(sw_mismatch(r.e1.buf + SW_RECV(&r), 100, 7, 0), -1);
	teardown();
}

Test(sweep_srq, qp_in_error_leaves_the_wqes_to_the_others)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
	struct ibv_wc wc;

	setup();
	for (uint32_t j = 0; j < 4; j++)
		srq_post(SLOT, r.e1.mr->lkey);
	message(0, 0);
	/* the application moves pair 0's RC QP to Error: Last WQE Reached, nothing flushed */
	cr_assert_eq(ibv_modify_qp(x1[0].qp[SW_RC], &a, IBV_QP_STATE), 0);
	expect_event(IBV_EVENT_QP_LAST_WQE_REACHED, x1[0].qp[SW_RC], "modify to Error");
	sw_settle(&r);
	cr_expect_eq(sw_poll_one(rcq, &wc, 0), -EAGAIN, "SRQ WQE %llu completed (%s)",
		     (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	message(1, 1);
	message(2, 2);
	message(3, 3);
	/* the UD QP meets a WQE too short for its datagram: that WQE completes with
	 * IBV_WC_LOC_LEN_ERR, the QP stays in RTS with no event; the next WQE takes a
	 * datagram that fits */
	srq_post(40 + 4, r.e1.mr->lkey);
	srq_post(40 + 4, r.e1.mr->lkey);
	ud_send(4, 100);
	cr_assert_eq(sw_poll_one(rcq, &wc, SW_LIVENESS), 0);
	cr_expect_eq(wc.wr_id, FIRST_ID + 4);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.qp_num, x1[4].qp[SW_UD]->qp_num);
	expect_no_event("a datagram too long for its WQE");
	ud_send(5, 4);
	cr_assert_eq(sw_poll_one(rcq, &wc, SW_LIVENESS), 0);
	cr_expect_eq(wc.wr_id, FIRST_ID + 5);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, 40 + 4);
	/* the UD QP meets a WQE whose lkey is bad: that WQE completes in error, the QP goes
	 * to Error by itself, raises its event and Last WQE Reached, and the rest of the SRQ
	 * stays for the others */
	srq_post(SLOT, BAD_LKEY);
	srq_post(SLOT, r.e1.mr->lkey);
	ud_send(6, 100);
	cr_assert_eq(sw_poll_one(rcq, &wc, SW_LIVENESS), 0);
	cr_expect_eq(wc.wr_id, FIRST_ID + 6);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.qp_num, x1[4].qp[SW_UD]->qp_num);
	expect_event(IBV_EVENT_QP_FATAL, x1[4].qp[SW_UD], "UD receive error");
	expect_event(IBV_EVENT_QP_LAST_WQE_REACHED, x1[4].qp[SW_UD], "UD receive error");
	message(6, 7);
	sw_settle(&r);
	cr_expect_eq(sw_poll_one(rcq, &wc, 0), -EAGAIN, "SRQ WQE %llu completed (%s)",
		     (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	expect_no_event("the end");
	teardown();
}
