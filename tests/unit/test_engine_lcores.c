/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several engine lcores (DROCE_LCORES=2): QPs spread over them, each packet
 * reaches its QP's lcore whatever queue it came in on, and CQs and SRQs that
 * QPs of both lcores use (shared, locked) lose and repeat nothing. Two ports
 * joined by a ring link with a queue pair per lcore; verbs calls only.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "droce_counters.h"
#include "droce_engine.h"
#include "pair_harness.h"

#define MSG   3000u /* three packets at path MTU 1024 */
#define DEPTH 64u
#define QKEY  0x1111

static struct pair_end d0, d1;

/* The set-up of every QP of @p type: queues of DEPTH, ports of MTU 1500, two lcores. */
static struct pair_opts opts(enum ibv_qp_type type)
{
	struct pair_opts o = pair_opts_default(type);

	o.eth_mtu = 1500;
	o.max_send_wr = o.max_recv_wr = DEPTH;
	o.psn = 7;
	o.qkey = QKEY;
	o.lcores = 2;
	return o;
}

static void setup(void)
{
	struct pair_opts o = opts(IBV_QPT_RC);

	pair_open_devices(&o, &d0, &d1);
	cr_assert_eq(droce_engine_lcores(), 2u, "the engine runs two lcores");
}

TestSuite(engine_lcores, .init = setup, .timeout = 90);

static struct ibv_cq *cq_new(struct pair_end *d)
{
	struct ibv_cq *cq = ibv_create_cq(d->ctx, 4 * DEPTH, NULL, NULL, 0);

	cr_assert_not_null(cq);
	return cq;
}

static struct ibv_qp *qp_new(struct pair_end *d, enum ibv_qp_type type, struct ibv_cq *scq,
			     struct ibv_cq *rcq, struct ibv_srq *srq)
{
	struct pair_opts o = opts(type);

	return pair_qp_create(&o, d, scq, rcq, srq);
}

static void qp_connect(struct ibv_qp *qp, const struct pair_end *peer, uint32_t dqpn)
{
	struct pair_opts o = opts(qp->qp_type);

	pair_qp_connect(&o, qp, &peer->gid, dqpn);
}

/* Every completion of @p n expected on @p cq, whatever QP: status and opcode checked. */
static void wait_n(struct ibv_cq *cq, unsigned int n, enum ibv_wc_opcode op, uint64_t *seen,
		   unsigned int seen_len)
{
	struct timespec t0, t;
	unsigned int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		struct ibv_wc wc[16];
		int k = ibv_poll_cq(cq, 16, wc);

		cr_assert_geq(k, 0);
		for (int i = 0; i < k; i++, got++) {
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "%s",
				     ibv_wc_status_str(wc[i].status));
			cr_assert_eq(wc[i].opcode, op, "opcode %d instead of %d", wc[i].opcode, op);
			if (seen != NULL) {
				cr_assert_lt(wc[i].wr_id, seen_len);
				seen[wc[i].wr_id]++;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		cr_assert_lt(t.tv_sec - t0.tv_sec, 30, "%u of %u completions", got, n);
	}
}

/* @p n completions on @p cq, every one successful, counted by opcode into @p ops[256]. */
static void wait_ops(struct ibv_cq *cq, unsigned int n, unsigned int *ops)
{
	struct timespec t0, t;
	unsigned int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		struct ibv_wc wc[8];
		int k = ibv_poll_cq(cq, 8, wc);

		cr_assert_geq(k, 0);
		for (int i = 0; i < k; i++, got++) {
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "%s",
				     ibv_wc_status_str(wc[i].status));
			ops[wc[i].opcode & 0xff]++;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		cr_assert_lt(t.tv_sec - t0.tv_sec, 30, "%u of %u completions", got, n);
	}
}

static void post_recv_qp(struct ibv_qp *qp, const struct pair_end *d, uint64_t id, uint32_t off)
{
	struct ibv_sge s = {
		.addr = (uintptr_t)d->buf + off, .length = MSG + 40, .lkey = d->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1}, *bad;

	cr_assert_eq(ibv_post_recv(qp, &wr, &bad), 0);
}

static void post_srq(struct ibv_srq *srq, const struct pair_end *d, uint64_t id, uint32_t off)
{
	struct ibv_sge s = {.addr = (uintptr_t)d->buf + off, .length = MSG, .lkey = d->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1}, *bad;

	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
}

static void post_send_qp(struct ibv_qp *qp, const struct pair_end *d, uint64_t id, uint32_t off,
			 enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge s = {.addr = (uintptr_t)d->buf + off, .length = MSG, .lkey = d->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = id,
				 .sg_list = &s,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0);
}

/* An RC pair, each end with CQs of its own: its two QPs land on different lcores. */
struct pair {
	struct ibv_cq *cq0, *cq1;
	struct ibv_qp *q0, *q1;
};

static void pair_new(struct pair *p, enum ibv_qp_type type)
{
	p->cq0 = cq_new(&d0);
	p->cq1 = cq_new(&d1);
	p->q0 = qp_new(&d0, type, p->cq0, p->cq0, NULL);
	p->q1 = qp_new(&d1, type, p->cq1, p->cq1, NULL);
	qp_connect(p->q0, &d1, p->q1->qp_num);
	qp_connect(p->q1, &d0, p->q0->qp_num);
}

Test(engine_lcores, qps_spread_over_both_lcores)
{
	struct pair p[2];
	bool on[2] = {false, false};

	pair_new(&p[0], IBV_QPT_RC);
	pair_new(&p[1], IBV_QPT_RC);
	for (int i = 0; i < 2; i++) {
		int a = droce_engine_qp_lcore(p[i].q0->qp_num);
		int b = droce_engine_qp_lcore(p[i].q1->qp_num);

		cr_assert(a == 0 || a == 1, "lcore %d", a);
		cr_assert(b == 0 || b == 1, "lcore %d", b);
		on[a] = on[b] = true;
	}
	cr_expect(on[0] && on[1], "four QPs with queues of their own use both lcores");
	cr_expect_eq(droce_engine_qp_lcore(0xfffff0), -ENOENT);
}

/* SENDs, WRITEs and READs both ways on pairs whose ends run on different lcores. */
Test(engine_lcores, rc_traffic_across_lcores_arrives_whole)
{
	struct droce_engine_stats st, l0, l1;
	struct pair p[2];

	pair_new(&p[0], IBV_QPT_RC);
	pair_new(&p[1], IBV_QPT_RC);
	pair_fill(d0.buf, 8 * MSG, 1);
	pair_fill(d1.buf, 8 * MSG, 2);
	for (unsigned int i = 0; i < 2; i++) {
		uint32_t in = (16 + 4 * i) * MSG;

		post_recv_qp(p[i].q1, &d1, i, in);
		post_send_qp(p[i].q0, &d0, i, i * MSG, IBV_WR_SEND, 0, 0);
		post_recv_qp(p[i].q0, &d0, i, in);
		post_send_qp(p[i].q1, &d1, i, i * MSG, IBV_WR_SEND, 0, 0);
		/* a WRITE each way and a READ from d0 of what d1 holds */
		post_send_qp(p[i].q0, &d0, 10 + i, (2 + i) * MSG, IBV_WR_RDMA_WRITE,
			     (uintptr_t)d1.buf + in + MSG, d1.mr->rkey);
		post_send_qp(p[i].q0, &d0, 20 + i, in + 2 * MSG, IBV_WR_RDMA_READ,
			     (uintptr_t)d1.buf + (4 + i) * MSG, d1.mr->rkey);
	}
	for (unsigned int i = 0; i < 2; i++) {
		uint32_t in = (16 + 4 * i) * MSG;
		unsigned int ops0[256] = {0}, ops1[256] = {0};

		/* d0's end: its SEND, WRITE, READ and a receive; d1's: its SEND and a receive */
		wait_ops(p[i].cq0, 4, ops0);
		wait_ops(p[i].cq1, 2, ops1);
		cr_expect(ops0[IBV_WC_SEND] == 1 && ops0[IBV_WC_RDMA_WRITE] == 1 &&
				  ops0[IBV_WC_RDMA_READ] == 1 && ops0[IBV_WC_RECV] == 1,
			  "pair %u: d0's completions", i);
		cr_expect(ops1[IBV_WC_SEND] == 1 && ops1[IBV_WC_RECV] == 1,
			  "pair %u: d1's completions", i);
		cr_expect(memcmp(d1.buf + in, d0.buf + i * MSG, MSG) == 0, "pair %u: SEND 0->1", i);
		cr_expect(memcmp(d0.buf + in, d1.buf + i * MSG, MSG) == 0, "pair %u: SEND 1->0", i);
		cr_expect(memcmp(d1.buf + in + MSG, d0.buf + (2 + i) * MSG, MSG) == 0,
			  "pair %u: WRITE", i);
		cr_expect(memcmp(d0.buf + in + 2 * MSG, d1.buf + (4 + i) * MSG, MSG) == 0,
			  "pair %u: READ", i);
	}
	droce_engine_stats_get(&st);
	cr_expect_gt(st.rx_dispatched, 0, "packets reached QPs of the other lcore");
	cr_expect_eq(st.rx_dispatch_dropped, 0);
	cr_expect_eq(st.rx_no_qp, 0);
	cr_assert_eq(droce_engine_lcore_stats(0, &l0), 0);
	cr_assert_eq(droce_engine_lcore_stats(1, &l1), 0);
	cr_expect_gt(l0.busy_loops, 0);
	cr_expect_gt(l1.busy_loops, 0);
	cr_expect_eq(l0.rx_dispatched + l1.rx_dispatched, st.rx_dispatched);
	cr_expect_eq(droce_engine_lcore_stats(2, &l0), -EINVAL);
}

/* UD datagrams between QPs of both lcores: each carries its GRH area and bytes. */
Test(engine_lcores, ud_across_lcores)
{
	struct pair p;
	struct ibv_ah_attr aa = {.is_global = 1,
				 .port_num = 1,
				 .grh = {.dgid = d1.gid, .sgid_index = 1, .hop_limit = 64}};
	struct ibv_ah *ah;
	struct ibv_sge s = {.addr = (uintptr_t)d0.buf, .length = 1000, .lkey = d0.mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &s,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	pair_new(&p, IBV_QPT_UD);
	ah = ibv_create_ah(d0.pd, &aa);
	cr_assert_not_null(ah);
	pair_fill(d0.buf, 1000, 5);
	for (unsigned int i = 0; i < 8; i++)
		post_recv_qp(p.q1, &d1, i, 64 * 1024 + i * 4096);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = p.q1->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	for (unsigned int i = 0; i < 8; i++) {
		wr.wr_id = i;
		cr_assert_eq(ibv_post_send(p.q0, &wr, &bad), 0);
	}
	wait_n(p.cq0, 8, IBV_WC_SEND, NULL, 0);
	wait_n(p.cq1, 8, IBV_WC_RECV, NULL, 0);
	for (unsigned int i = 0; i < 8; i++)
		cr_expect(memcmp(d1.buf + 64 * 1024 + i * 4096 + 40, d0.buf, 1000) == 0,
			  "datagram %u", i);
}

/*
 * A QP whose send CQ belongs to one lcore and whose receive CQ to the other: it runs on
 * the send CQ's, and the receive CQ is written by both lcores (shared, locked). Each of
 * the three QPs' completions arrive, none twice.
 */
Test(engine_lcores, cq_of_two_lcores_loses_nothing)
{
	struct ibv_cq *cqa = cq_new(&d0), *cqb = cq_new(&d0), *peer = cq_new(&d1);
	struct ibv_qp *x, *y, *z, *px, *py, *pz;
	uint64_t seen[3 * DEPTH] = {0};
	struct ibv_qp *mine[3], *theirs[3];

	x = qp_new(&d0, IBV_QPT_RC, cqa, cqa, NULL);
	y = qp_new(&d0, IBV_QPT_RC, cqb, cqb, NULL);
	cr_assert_neq(droce_engine_qp_lcore(x->qp_num), droce_engine_qp_lcore(y->qp_num),
		      "x and y with queues of their own on different lcores");
	z = qp_new(&d0, IBV_QPT_RC, cqa, cqb, NULL);
	cr_expect_eq(droce_engine_qp_lcore(z->qp_num), droce_engine_qp_lcore(x->qp_num),
		     "z where its send CQ is");
	px = qp_new(&d1, IBV_QPT_RC, peer, peer, NULL);
	py = qp_new(&d1, IBV_QPT_RC, peer, peer, NULL);
	pz = qp_new(&d1, IBV_QPT_RC, peer, peer, NULL);
	mine[0] = x, mine[1] = y, mine[2] = z;
	theirs[0] = px, theirs[1] = py, theirs[2] = pz;
	for (int i = 0; i < 3; i++) {
		qp_connect(mine[i], &d1, theirs[i]->qp_num);
		qp_connect(theirs[i], &d0, mine[i]->qp_num);
	}
	/* y and z receive into cqb from both lcores at once */
	for (unsigned int n = 0; n < DEPTH / 2; n++) {
		post_recv_qp(y, &d0, n, 0);
		post_recv_qp(z, &d0, DEPTH + n, 0);
	}
	for (unsigned int n = 0; n < DEPTH / 2; n++) {
		post_send_qp(py, &d1, n, 0, IBV_WR_SEND, 0, 0);
		post_send_qp(pz, &d1, n, 0, IBV_WR_SEND, 0, 0);
	}
	wait_n(cqb, DEPTH, IBV_WC_RECV, seen, 3 * DEPTH);
	for (unsigned int n = 0; n < DEPTH / 2; n++) {
		cr_expect_eq(seen[n], 1, "y's receive %u", n);
		cr_expect_eq(seen[DEPTH + n], 1, "z's receive %u", n);
	}
	wait_n(peer, DEPTH, IBV_WC_SEND, NULL, 0);
}

/*
 * An SRQ taken from by QPs of both lcores: each receive WQE is consumed by exactly one
 * message, and every message finds one (RNR retries cover a late post, none is needed).
 */
Test(engine_lcores, srq_of_two_lcores_hands_each_wqe_once)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 2 * DEPTH, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(d0.pd, &sa);
	struct ibv_cq *cqa = cq_new(&d0), *cqb = cq_new(&d0), *rcq = cq_new(&d0);
	struct ibv_cq *peer = cq_new(&d1);
	struct ibv_qp *s1, *s2, *p1, *p2;
	uint64_t seen[2 * DEPTH] = {0};

	cr_assert_not_null(srq);
	/* a QP binds cqa to one lcore, another binds cqb to the other */
	qp_new(&d0, IBV_QPT_RC, cqa, cqa, NULL);
	qp_new(&d0, IBV_QPT_RC, cqb, cqb, NULL);
	s1 = qp_new(&d0, IBV_QPT_RC, cqa, rcq, srq);
	s2 = qp_new(&d0, IBV_QPT_RC, cqb, rcq, srq);
	cr_assert_neq(droce_engine_qp_lcore(s1->qp_num), droce_engine_qp_lcore(s2->qp_num),
		      "the SRQ's QPs on different lcores");
	p1 = qp_new(&d1, IBV_QPT_RC, peer, peer, NULL);
	p2 = qp_new(&d1, IBV_QPT_RC, peer, peer, NULL);
	qp_connect(s1, &d1, p1->qp_num);
	qp_connect(p1, &d0, s1->qp_num);
	qp_connect(s2, &d1, p2->qp_num);
	qp_connect(p2, &d0, s2->qp_num);
	for (unsigned int n = 0; n < 2 * DEPTH; n++)
		post_srq(srq, &d0, n, 0);
	for (unsigned int n = 0; n < DEPTH; n++) {
		post_send_qp(p1, &d1, n, 0, IBV_WR_SEND, 0, 0);
		post_send_qp(p2, &d1, n, 0, IBV_WR_SEND, 0, 0);
	}
	wait_n(rcq, 2 * DEPTH, IBV_WC_RECV, seen, 2 * DEPTH);
	for (unsigned int n = 0; n < 2 * DEPTH; n++)
		cr_expect_eq(seen[n], 1, "SRQ WQE %u consumed %llu times", n,
			     (unsigned long long)seen[n]);
	wait_n(peer, 2 * DEPTH, IBV_WC_SEND, NULL, 0);
}

/* Destroying QPs hands their queues back: a CQ no QP uses any more goes where it is used next. */
Test(engine_lcores, destroyed_qps_release_their_lcore)
{
	struct ibv_cq *cq = cq_new(&d0);
	struct ibv_qp *a = qp_new(&d0, IBV_QPT_RC, cq, cq, NULL);
	uint32_t qpn = a->qp_num;

	cr_assert_geq(droce_engine_qp_lcore(qpn), 0);
	cr_assert_eq(ibv_destroy_qp(a), 0);
	cr_expect_eq(droce_engine_qp_lcore(qpn), -ENOENT);
	a = qp_new(&d0, IBV_QPT_UC, cq, cq, NULL);
	cr_expect_geq(droce_engine_qp_lcore(a->qp_num), 0);
	cr_assert_eq(ibv_destroy_qp(a), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

/* Control calls that park every lcore, made over and over from a thread of their own. */
static bool control_stop;
static unsigned long control_calls;

static void *control_loop(void *arg)
{
	struct droce_counter c[128];

	(void)arg;
	while (!__atomic_load_n(&control_stop, __ATOMIC_ACQUIRE)) {
		struct ibv_cq *cq = ibv_create_cq(d0.ctx, 16, NULL, NULL, 0);
		uint32_t qpns[64];

		if (droce_engine_port_counters("droce0", c, 128) <= 0 ||
		    droce_engine_qp_list(qpns, 64) < 0 || cq == NULL || ibv_destroy_cq(cq) != 0)
			return (void *)1;
		control_calls++;
	}
	return NULL;
}

/*
 * Traffic on both lcores while another thread parks them again and again (port counters,
 * the QP list, CQs made and destroyed): every message arrives once, whole, and the control
 * calls all succeed.
 */
Test(engine_lcores, traffic_goes_on_while_the_control_path_parks_the_lcores)
{
	struct pair p[2];
	pthread_t t;
	void *ret;

	pair_new(&p[0], IBV_QPT_RC);
	pair_new(&p[1], IBV_QPT_RC);
	cr_assert_eq(pthread_create(&t, NULL, control_loop, NULL), 0);
	for (unsigned int r = 0; r < 200; r++) {
		for (unsigned int i = 0; i < 2; i++) {
			pair_fill(d0.buf + i * MSG, MSG, r * 2 + i);
			post_recv_qp(p[i].q1, &d1, r, (16 + 4 * i) * MSG);
			post_send_qp(p[i].q0, &d0, r, i * MSG, IBV_WR_SEND, 0, 0);
		}
		for (unsigned int i = 0; i < 2; i++) {
			wait_n(p[i].cq1, 1, IBV_WC_RECV, NULL, 0);
			wait_n(p[i].cq0, 1, IBV_WC_SEND, NULL, 0);
			cr_assert(memcmp(d1.buf + (16 + 4 * i) * MSG, d0.buf + i * MSG, MSG) == 0,
				  "round %u pair %u: bytes", r, i);
		}
	}
	__atomic_store_n(&control_stop, true, __ATOMIC_RELEASE);
	cr_assert_eq(pthread_join(t, &ret), 0);
	cr_expect_null(ret, "every control call succeeded");
	cr_expect_gt(control_calls, 0);
}
