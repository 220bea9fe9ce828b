/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RC and UC transports between two QPs in one process, without a port:
 * what one side sends is checked by lib/wire's parser (ICRC included) and fed
 * to the other side, through a queue that can drop, duplicate or reorder
 * chosen frames. Time is the timer wheel's, driven by the test (ns ticks).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <droce_transport.h>
#include <droce_wire.h>
#include <droce_wire_mbuf.h>

#include "droce_test.h"
#include "verbs_harness.h"

#define BUF_LEN (2u << 20)
#define PMTU    1024u
#define MIB     (1u << 20)
#define QUEUE   8192

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct droce_tqp tqp;
	struct droce_tcq tcq;
	struct droce_transport_env env;
	uint8_t *buf;
	unsigned int frames; /* frames this side sent */
};

enum fault { PASS, DROP, DUP, HOLD };

/* Decides the fate of the n-th frame (from 0) a side sends. */
typedef enum fault (*fault_fn)(const struct side *from, const struct droce_pkt *pkt,
			       unsigned int n);

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct side a, b;
static struct rte_mempool *pool;
static struct droce_tport_addr port;
static struct droce_timer_wheel wheel __attribute__((aligned(64)));
static uint64_t now_ns;
static fault_fn fault;
static unsigned int bad_frames, solicited_events;
static struct {
	struct rte_mbuf *m[QUEUE];
	struct side *to[QUEUE];
	unsigned int head, tail;
} q;
static struct rte_mbuf *held;
static struct side *held_to;
static struct droce_hdr_fields last_a; /* fields of A's last frame */

static struct side *peer(const struct side *s)
{
	return s == &a ? &b : &a;
}

static void enqueue(struct side *to, struct rte_mbuf *m)
{
	cr_assert_lt(q.tail - q.head, QUEUE);
	q.m[q.tail % QUEUE] = m;
	q.to[q.tail % QUEUE] = to;
	q.tail++;
}

static void tx(void *arg, struct rte_mbuf *m)
{
	struct side *from = arg;
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct droce_pkt pkt;
	enum fault f;

	if (droce_parse_mbuf(m, &cfg, &pkt) != DROCE_PARSE_OK || pkt.qpn != peer(from)->tqp.qpn) {
		bad_frames++;
		rte_pktmbuf_free(m);
		return;
	}
	if (from == &a)
		droce_pkt_fields(&pkt, rte_pktmbuf_mtod(m, const uint8_t *), &last_a);
	f = fault != NULL ? fault(from, &pkt, from->frames) : PASS;
	from->frames++;
	switch (f) {
	case DROP:
		rte_pktmbuf_free(m);
		return;
	case DUP:
		enqueue(peer(from), rte_pktmbuf_copy(m, pool, 0, UINT32_MAX));
		enqueue(peer(from), m);
		return;
	case HOLD:
		cr_assert_null(held);
		held = m;
		held_to = peer(from);
		return;
	default:
		enqueue(peer(from), m);
		if (held != NULL) {
			/* the held frame goes after the next one: two frames swapped */
			enqueue(held_to, held);
			held = NULL;
		}
	}
}

static bool unreachable; /* no neighbour answers: every lookup is still being resolved */

static int neigh(void *arg, const uint8_t ip[16], uint8_t mac[6])
{
	(void)arg;
	(void)ip;
	if (unreachable)
		return -EAGAIN;
	memcpy(mac, (uint8_t[]){0x02, 0, 0, 0, 0, 0x02}, 6);
	return 0;
}

static void cq_notify(void *arg, void *cq, bool solicited)
{
	(void)arg;
	if (solicited)
		solicited_events++;
	droce_engine_cq_notify(cq, solicited);
}

static void qp_error(void *arg, void *qp, enum ibv_qp_state state, enum ibv_event_type ev)
{
	(void)arg;
	droce_engine_qp_error(qp, state, ev);
}

/* Deliver queued frames and run both send passes until nothing moves. */
static void pump(void)
{
	for (int round = 0; round < 100000; round++) {
		int n = droce_tqp_send(&a.env, &a.tqp, 0, 32);

		n += droce_tqp_send(&b.env, &b.tqp, 0, 32);
		if (n <= 0 && q.head == q.tail && held == NULL)
			return;
		if (q.head == q.tail && held != NULL) {
			enqueue(held_to, held);
			held = NULL;
		}
		while (q.head != q.tail) {
			struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
			struct rte_mbuf *m = q.m[q.head % QUEUE];
			struct side *to = q.to[q.head % QUEUE];
			struct droce_pkt pkt;

			q.head++;
			cr_assert_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_OK);
			droce_tqp_recv(&to->env, &to->tqp, m, &pkt);
		}
	}
	cr_assert_fail("pump never settled");
}

/* Pump, and let time pass to the next timer, until no timer is left (bounded). */
static void settle(void)
{
	for (int i = 0; i < 64; i++) {
		uint64_t next;

		pump();
		next = droce_timer_wheel_next(&wheel);
		if (next == UINT64_MAX)
			return;
		now_ns += next;
		droce_transport_timers_run(&wheel, now_ns, 1024);
	}
}

static void side_setup(struct side *s, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = 4,
			.max_recv_sge = 4,
			.max_inline_data = 128},
		.qp_type = type,
	};
	struct droce_qp_view v;
	struct droce_cq_view cv;

	s->buf = aligned_alloc(4096, BUF_LEN);
	cr_assert_not_null(s->buf);
	memset(s->buf, 0, BUF_LEN);
	s->cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cr_assert_not_null(s->cq);
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd, &ia);
	cr_assert_not_null(s->qp);
	s->mr = ibv_reg_mr(pd, s->buf, BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
				   IBV_ACCESS_MW_BIND);
	cr_assert_not_null(s->mr);
	cr_assert_eq(harness_qp_to_rts(s->qp), 0);
	cr_assert_eq(droce_engine_qp_view(s->qp, &v), 0);
	cr_assert_eq(droce_tqp_init(&s->tqp, v.qpn, type, v.pd, v.sq.addr, v.sq.len, v.rq.addr,
				    v.rq.len),
		     0);
	cr_assert_eq(droce_engine_cq_view(s->cq, &cv), 0);
	cr_assert_eq(droce_ring_prod_attach(&s->tcq.prod, cv.ring.addr, cv.ring.len), 0);
	s->tcq.user = s->cq;
	s->tqp.scq = &s->tcq;
	s->tqp.rcq = &s->tcq;
	s->tqp.user = s->qp;
	s->env = (struct droce_transport_env){
		.pool = pool,
		.keys = droce_engine_mr_table(),
		.port = &port,
		.tx = tx,
		.neigh = neigh,
		.cq_notify = cq_notify,
		.qp_error = qp_error,
		.arg = s,
		.wheel = &wheel,
		.tick_hz = 1000000000ull,
	};
}

/* Connect the transport QPs to each other: RTR then RTS, as ibv_modify_qp would. */
static void side_connect(struct side *s, uint32_t sq_psn, uint32_t rq_psn)
{
	struct ibv_qp_attr attr = {
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer(s)->tqp.qpn,
		.sq_psn = sq_psn,
		.rq_psn = rq_psn,
		.qp_access_flags =
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		.ah_attr = {.is_global = 1,
			    .port_num = 1,
			    .grh = {.dgid = port.gid[1], .sgid_index = 1, .hop_limit = 64}},
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.min_rnr_timer = 1,
		.max_rd_atomic = 4,
		.max_dest_rd_atomic = 4,
	};
	int rtr = IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_AV |
		  IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER | IBV_QP_MAX_DEST_RD_ATOMIC;
	int rts = IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		  IBV_QP_MAX_QP_RD_ATOMIC;

	droce_tqp_modify(&s->tqp, &attr, rtr, IBV_QPS_RTR);
	droce_tqp_modify(&s->tqp, &attr, rts, IBV_QPS_RTS);
}

static void setup_type(enum ibv_qp_type type)
{
	droce_test_eal_init(type == IBV_QPT_RC ? "transport_rc" : "transport_uc");
	pool = rte_pktmbuf_pool_create("rc_test", 16383, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE + 4096,
				       SOCKET_ID_ANY);
	cr_assert_not_null(pool);
	ctx = harness_open(&pd);
	memcpy(port.mac, (uint8_t[]){0x02, 0, 0, 0, 0, 0x01}, 6);
	port.mtu_bytes = 4096;
	for (int i = 0; i < 3; i++)
		cr_assert_eq(ibv_query_gid(ctx, 1, i, &port.gid[i]), 0);
	port.gid_count = 3;
	cr_assert_eq(droce_timer_wheel_init(&wheel, 0, 1024), 0);
	side_setup(&a, type);
	side_setup(&b, type);
	/* PSNs near the 24-bit wrap, so that every test crosses it */
	side_connect(&a, 0xfffff0, 0x000100);
	side_connect(&b, 0x000100, 0xfffff0);
}

static void setup_rc(void)
{
	setup_type(IBV_QPT_RC);
}

static void setup_uc(void)
{
	setup_type(IBV_QPT_UC);
}

static void teardown(void)
{
	droce_tqp_fini(&a.env, &a.tqp);
	droce_tqp_fini(&b.env, &b.tqp);
	droce_test_eal_fini();
}

TestSuite(transport_rc, .init = setup_rc, .fini = teardown, .timeout = 120);
TestSuite(transport_uc, .init = setup_uc, .fini = teardown, .timeout = 120);

static void post_recv_lkey(struct side *s, uint64_t id, uint32_t off, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = {.addr = (uintptr_t)s->buf + off, .length = len, .lkey = lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1}, *bad;

	cr_assert_eq(ibv_post_recv(s->qp, &wr, &bad), 0);
}

static void post_recv(struct side *s, uint64_t id, uint32_t off, uint32_t len)
{
	post_recv_lkey(s, id, off, len, s->mr->lkey);
}

struct wr_args {
	enum ibv_wr_opcode op;
	uint32_t off, len;
	uint32_t roff; /* offset in the peer's buffer */
	uint32_t rkey; /* 0: the peer's MR */
	uint32_t lkey; /* 0: own MR */
	unsigned int flags;
	uint64_t compare_add, swap;
	uint32_t imm_or_rkey;
};

static int post_wr(struct side *s, uint64_t id, const struct wr_args *w)
{
	struct side *p = peer(s);
	struct ibv_sge sge = {.addr = (uintptr_t)s->buf + w->off,
			      .length = w->len,
			      .lkey = w->lkey ? w->lkey : s->mr->lkey};
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = w->len ? 1 : 0,
		.opcode = w->op,
		.send_flags = w->flags,
	};
	struct ibv_send_wr *bad;

	if (w->op == IBV_WR_ATOMIC_CMP_AND_SWP || w->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)p->buf + w->roff;
		wr.wr.atomic.rkey = w->rkey ? w->rkey : p->mr->rkey;
		wr.wr.atomic.compare_add = w->compare_add;
		wr.wr.atomic.swap = w->swap;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)p->buf + w->roff;
		wr.wr.rdma.rkey = w->rkey ? w->rkey : p->mr->rkey;
	}
	if (w->op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = w->imm_or_rkey;
	else
		wr.imm_data = htobe32(w->imm_or_rkey);
	return ibv_post_send(s->qp, &wr, &bad);
}

static struct ibv_wc wc_of(struct side *s, uint64_t id)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	cr_assert_eq(ibv_poll_cq(s->cq, 1, &wc), 1, "no completion for %llu",
		     (unsigned long long)id);
	cr_assert_eq(wc.wr_id, id, "completion %llu instead of %llu", (unsigned long long)wc.wr_id,
		     (unsigned long long)id);
	return wc;
}

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed + (i >> 8));
}

static const uint32_t sizes[] = {0, 1, PMTU - 1, PMTU, PMTU + 1, MIB};

static uint32_t pkts_of(uint32_t len)
{
	return len == 0 ? 1 : (len + PMTU - 1) / PMTU;
}

/* ------------------------------------------------------------ opcodes and sizes */

Test(transport_rc, send_every_size)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		unsigned int before = a.frames;
		struct ibv_wc wc;

		fill(a.buf, len, i);
		memset(b.buf, 0xee, len + 16);
		post_recv(&b, 100 + i, 0, MIB + 16);
		cr_assert_eq(post_wr(&a, i,
				     &(struct wr_args){.op = IBV_WR_SEND,
						       .len = len,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
		pump();
		cr_expect_eq(a.frames - before, pkts_of(len), "size %u: packets", len);
		wc = wc_of(&a, i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "size %u: %s", len,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.opcode, IBV_WC_SEND);
		wc = wc_of(&b, 100 + i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "size %u: %s", len,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.opcode, IBV_WC_RECV);
		cr_expect_eq(wc.byte_len, len, "size %u", len);
		cr_expect_eq(wc.src_qp, a.tqp.qpn);
		cr_expect(memcmp(b.buf, a.buf, len) == 0, "size %u: bytes", len);
		cr_expect_eq(b.buf[len], 0xee, "size %u: nothing beyond", len);
	}
	cr_expect_eq(bad_frames, 0);
}

Test(transport_rc, write_every_size)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		struct ibv_wc wc;

		fill(a.buf, len, i + 3);
		memset(b.buf + 64, 0xee, len + 16);
		cr_assert_eq(post_wr(&a, i,
				     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
						       .len = len,
						       .roff = 64,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
		pump();
		wc = wc_of(&a, i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "size %u: %s", len,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.opcode, IBV_WC_RDMA_WRITE);
		cr_expect(memcmp(b.buf + 64, a.buf, len) == 0, "size %u: bytes", len);
		cr_expect_eq(b.buf[64 + len], 0xee, "size %u: nothing beyond", len);
		cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "a WRITE consumes no receive WQE");
	}
}

Test(transport_rc, read_every_size)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		struct ibv_wc wc;

		fill(b.buf + 128, len, i + 5);
		memset(a.buf, 0xee, len + 16);
		cr_assert_eq(post_wr(&a, i,
				     &(struct wr_args){.op = IBV_WR_RDMA_READ,
						       .len = len,
						       .roff = 128,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
		pump();
		wc = wc_of(&a, i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "size %u: %s", len,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.opcode, IBV_WC_RDMA_READ);
		cr_expect_eq(wc.byte_len, len);
		cr_expect(memcmp(a.buf, b.buf + 128, len) == 0, "size %u: bytes", len);
		cr_expect_eq(a.buf[len], 0xee, "size %u: nothing beyond", len);
	}
}

Test(transport_rc, send_with_imm)
{
	struct ibv_wc wc;

	post_recv(&b, 10, 0, 4096);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND_WITH_IMM,
					       .len = 2000,
					       .imm_or_rkey = 0xabcd1234,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_expect_eq(be32toh(wc.imm_data), 0xabcd1234);
	cr_expect_eq(wc.byte_len, 2000);
}

Test(transport_rc, write_with_imm_consumes_a_receive)
{
	struct ibv_wc wc;

	fill(a.buf, 3000, 9);
	post_recv(&b, 11, 0, 16);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE_WITH_IMM,
					       .len = 3000,
					       .roff = 8192,
					       .imm_or_rkey = 77,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	wc = wc_of(&b, 11);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_expect_eq(wc.byte_len, 3000);
	cr_expect_eq(be32toh(wc.imm_data), 77);
	cr_expect(memcmp(b.buf + 8192, a.buf, 3000) == 0);
}

Test(transport_rc, atomics)
{
	uint64_t *remote = (uint64_t *)(b.buf + 4096), *local = (uint64_t *)a.buf;
	struct ibv_wc wc;

	*remote = 100;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_ATOMIC_FETCH_AND_ADD,
					       .len = 8,
					       .roff = 4096,
					       .compare_add = 5,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_FETCH_ADD);
	cr_expect_eq(*local, 100, "the original value");
	cr_expect_eq(*remote, 105);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_ATOMIC_CMP_AND_SWP,
					       .len = 8,
					       .roff = 4096,
					       .compare_add = 105,
					       .swap = 7,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.opcode, IBV_WC_COMP_SWAP);
	cr_expect_eq(*local, 105);
	cr_expect_eq(*remote, 7, "swapped");
	cr_assert_eq(post_wr(&a, 3,
			     &(struct wr_args){.op = IBV_WR_ATOMIC_CMP_AND_SWP,
					       .len = 8,
					       .roff = 4096,
					       .compare_add = 1,
					       .swap = 9,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 3);
	cr_expect_eq(*local, 7);
	cr_expect_eq(*remote, 7, "compare failed: unchanged");
}

Test(transport_rc, inline_send)
{
	struct ibv_wc wc;

	fill(a.buf, 100, 1);
	post_recv(&b, 10, 0, 4096);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .len = 100,
					       .flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE}),
		     0);
	memset(a.buf, 0, 100); /* the bytes were copied at post */
	fill(a.buf + 4096, 100, 1);
	pump();
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 100);
	cr_expect(memcmp(b.buf, a.buf + 4096, 100) == 0);
}

Test(transport_rc, bind_mw_then_send_with_invalidate)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {.wr_id = 50,
				 .opcode = IBV_WR_BIND_MW,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct ibv_wc wc;

	cr_assert_not_null(mw);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info =
		(struct ibv_mw_bind_info){.mr = b.mr,
					  .addr = (uintptr_t)b.buf,
					  .length = 4096,
					  .mw_access_flags = IBV_ACCESS_REMOTE_WRITE};
	cr_assert_eq(ibv_post_send(b.qp, &wr, &bad), 0);
	pump();
	wc = wc_of(&b, 50);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_BIND_MW);
	post_recv(&b, 51, 8192, 4096);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND_WITH_INV,
					       .len = 10,
					       .imm_or_rkey = wr.bind_mw.rkey,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 51);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect(wc.wc_flags & IBV_WC_WITH_INV);
	cr_expect_eq(wc.invalidated_rkey, wr.bind_mw.rkey);
	/* the window is gone: a WRITE through it is a remote access error */
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = 8,
					       .rkey = wr.bind_mw.rkey,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
}

Test(transport_rc, local_invalidate_of_a_window)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {.wr_id = 60, .opcode = IBV_WR_BIND_MW}, *bad;
	struct ibv_wc wc;

	cr_assert_not_null(mw);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){.mr = a.mr,
							 .addr = (uintptr_t)a.buf,
							 .length = 64,
							 .mw_access_flags = IBV_ACCESS_REMOTE_READ};
	cr_assert_eq(ibv_post_send(a.qp, &wr, &bad), 0);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 61;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = ibv_inc_rkey(mw->rkey);
	cr_assert_eq(ibv_post_send(a.qp, &wr, &bad), 0);
	pump();
	wc = wc_of(&a, 61);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_LOCAL_INV);
}

Test(transport_rc, unsignaled_complete_silently)
{
	struct ibv_wc wc;

	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_WRITE, .len = 10}), 0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = 10,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(harness_send_pending(a.qp), 0, "both slots released");
}

Test(transport_rc, solicited_event)
{
	post_recv(&b, 10, 0, 64);
	post_recv(&b, 11, 0, 64);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 8}), 0);
	pump();
	cr_expect_eq(solicited_events, 0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 8, .flags = IBV_SEND_SOLICITED}),
		     0);
	pump();
	cr_expect(last_a.se, "SE on the last packet");
	cr_expect_eq(solicited_events, 1);
}

Test(transport_rc, frame_fields)
{
	post_recv(&b, 10, 0, 4096);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 8}), 0);
	pump();
	cr_expect_eq(last_a.opcode, DROCE_OP_RC_SEND_ONLY);
	cr_expect_eq(last_a.dqpn, b.tqp.qpn);
	cr_expect_eq(last_a.pkey, 0xffff);
	cr_expect(last_a.ackreq);
	cr_expect_eq(last_a.psn, 0xfffff0);
}

/* ------------------------------------------------------------ limits and ordering */

static struct droce_hdr_fields seen[64];
static unsigned int nseen;

static enum fault record_a(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)n;
	if (from == &a && nseen < 64) {
		struct droce_hdr_fields f = {.opcode = pkt->opcode, .psn = pkt->psn};

		seen[nseen++] = f;
	}
	return PASS;
}

Test(transport_rc, fence_waits_for_the_read)
{
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_READ, .len = 3000}), 0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = 8,
					       .flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED}),
		     0);
	fault = record_a;
	droce_tqp_send(&a.env, &a.tqp, 0, 32);
	cr_expect_eq(nseen, 1, "the fenced WRITE waits");
	pump();
	cr_expect_eq(nseen, 2);
	cr_expect_eq(seen[1].opcode, DROCE_OP_RC_WRITE_ONLY);
	cr_expect_eq(wc_of(&a, 2).status, IBV_WC_SUCCESS);
}

Test(transport_rc, max_rd_atomic_limits_reads)
{
	struct ibv_qp_attr attr = {.max_rd_atomic = 1};

	droce_tqp_modify(&a.tqp, &attr, IBV_QP_MAX_QP_RD_ATOMIC, IBV_QPS_RTS);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_READ, .len = 10}), 0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_READ,
					       .len = 10,
					       .off = 100,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	fault = record_a;
	droce_tqp_send(&a.env, &a.tqp, 0, 32);
	cr_expect_eq(nseen, 1, "one READ outstanding at most");
	pump();
	cr_expect_eq(nseen, 2);
	cr_expect_eq(wc_of(&a, 2).status, IBV_WC_SUCCESS);
}

Test(transport_rc, read_takes_the_psns_of_its_response)
{
	fault = record_a;
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_READ, .len = 3 * PMTU}), 0);
	cr_assert_eq(post_wr(&a, 2, &(struct wr_args){.op = IBV_WR_RDMA_WRITE, .len = 8}), 0);
	pump();
	cr_assert_eq(nseen, 2);
	cr_expect_eq(seen[1].psn, (0xfffff0 + 3) & 0xffffff);
}

/* ------------------------------------------------------------ faults */

static unsigned int target;

static enum fault drop_a_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	return from == &a && n == target ? DROP : PASS;
}

static enum fault dup_a_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	return from == &a && n == target ? DUP : PASS;
}

static enum fault hold_a_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	return from == &a && n == target ? HOLD : PASS;
}

static enum fault drop_b_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	return from == &b && n == target ? DROP : PASS;
}

static enum fault drop_all_a(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	(void)n;
	return from == &a ? DROP : PASS;
}

static void send_and_check(uint32_t len, uint64_t id)
{
	struct ibv_wc wc;

	fill(a.buf, len, (uint32_t)id);
	memset(b.buf, 0, len);
	post_recv(&b, 100 + id, 0, MIB);
	cr_assert_eq(post_wr(&a, id,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = len, .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	wc = wc_of(&a, id);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	wc = wc_of(&b, 100 + id);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, len);
	cr_expect(memcmp(b.buf, a.buf, len) == 0, "bytes");
}

Test(transport_rc, lost_middle_packet_nak_and_go_back)
{
	target = 4;
	fault = drop_a_nth;
	send_and_check(10 * PMTU, 1);
	cr_expect_eq(b.tqp.stats.packet_seq_err, 1, "one NAK per gap");
	cr_expect_eq(b.tqp.stats.out_of_sequence, 5);
	cr_expect_eq(a.tqp.stats.rcvd_seq_err, 1);
	cr_expect_eq(a.frames, 10 + 6, "packets 4..9 sent again");
}

Test(transport_rc, duplicate_packet_ignored)
{
	target = 2;
	fault = dup_a_nth;
	send_and_check(5 * PMTU, 1);
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
}

Test(transport_rc, reordered_packets_recovered)
{
	target = 1;
	fault = hold_a_nth;
	send_and_check(5 * PMTU, 1);
	cr_expect_geq(b.tqp.stats.out_of_sequence, 1);
	cr_expect_geq(a.tqp.stats.rcvd_seq_err, 1);
}

Test(transport_rc, lost_last_packet_retransmitted_on_timeout)
{
	target = 2;
	fault = drop_a_nth;
	send_and_check(3 * PMTU, 1);
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 1);
}

Test(transport_rc, lost_ack_duplicate_reacked)
{
	target = 0;
	fault = drop_b_nth;
	send_and_check(100, 1);
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 1);
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
}

Test(transport_rc, lost_read_response_re_requested)
{
	struct ibv_wc wc;

	fill(b.buf, 8 * PMTU, 4);
	target = 3; /* the fourth response packet */
	fault = drop_b_nth;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_READ,
					       .len = 8 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect(memcmp(a.buf, b.buf, 8 * PMTU) == 0);
	cr_expect_eq(a.tqp.stats.implied_nak_seq_err, 1);
	cr_expect_eq(b.tqp.stats.duplicate_request, 1, "the re-request is a duplicate READ");
}

Test(transport_rc, lost_atomic_ack_replayed_not_reexecuted)
{
	uint64_t *remote = (uint64_t *)(b.buf + 64), *local = (uint64_t *)a.buf;
	struct ibv_wc wc;

	*remote = 1000;
	target = 0;
	fault = drop_b_nth;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_ATOMIC_FETCH_AND_ADD,
					       .len = 8,
					       .roff = 64,
					       .compare_add = 1,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(*local, 1000);
	cr_expect_eq(*remote, 1001, "executed once");
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
}

Test(transport_rc, rnr_nak_then_retry)
{
	struct ibv_wc wc;

	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(b.tqp.stats.send_rnr_err, 1);
	cr_expect_eq(a.tqp.stats.rcvd_rnr_err, 1);
	cr_expect_eq(ibv_poll_cq(a.cq, 1, &wc), 0, "waiting for the RNR timer");
	post_recv(&b, 10, 0, 64);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 10);
}

Test(transport_rc, rnr_retry_exceeded)
{
	struct ibv_qp_attr attr = {.rnr_retry = 2};
	struct ibv_wc wc;

	droce_tqp_modify(&a.tqp, &attr, IBV_QP_RNR_RETRY, IBV_QPS_RTS);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 10}), 0);
	cr_assert_eq(post_wr(&a, 2, &(struct wr_args){.op = IBV_WR_SEND, .len = 10}), 0);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_RNR_RETRY_EXC_ERR);
	cr_expect_eq(a.tqp.stats.rcvd_rnr_err, 3);
	cr_expect_eq(a.tqp.stats.rnr_nak_retry_err, 1);
	cr_expect_eq(droce_engine_qp_state(a.qp), IBV_QPS_ERR);
	pump();
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
}

static enum fault drop_b_odd(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	return from == &b && n % 2 == 1 ? DROP : PASS;
}

/*
 * A slow receiver behind a lossy link: every other RNR NAK is lost, each loss costs a
 * timeout. The RNR NAKs that arrive show the responder alive: with retry_cnt 1 the QP
 * keeps waiting (rnr_retry 7) instead of ending in RETRY_EXC_ERR at the second loss.
 */
Test(transport_rc, lost_rnr_naks_do_not_add_up_to_retry_exceeded)
{
	struct ibv_qp_attr attr = {.retry_cnt = 1};
	struct ibv_wc wc;

	droce_tqp_modify(&a.tqp, &attr, IBV_QP_RETRY_CNT, IBV_QPS_RTS);
	fault = drop_b_odd;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	settle(); /* bounded: RNR goes on for ever */
	cr_expect_geq(a.tqp.stats.local_ack_timeout_err, 4, "several RNR NAKs were lost");
	cr_expect_eq(a.tqp.stats.retry_exceeded_err, 0);
	cr_expect_eq(ibv_poll_cq(a.cq, 1, &wc), 0, "still waiting for a receive");
	fault = NULL;
	post_recv(&b, 10, 0, 64);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 10);
}

Test(transport_rc, retry_exceeded)
{
	struct ibv_qp_attr attr = {.retry_cnt = 2};
	struct ibv_wc wc;

	droce_tqp_modify(&a.tqp, &attr, IBV_QP_RETRY_CNT, IBV_QPS_RTS);
	fault = drop_all_a;
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_WRITE, .len = 10}), 0);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR);
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 3);
	cr_expect_eq(a.tqp.stats.retry_exceeded_err, 1);
	cr_expect_eq(a.frames, 3, "sent once and retried twice");
	cr_expect_eq(droce_engine_qp_state(a.qp), IBV_QPS_ERR);
}

Test(transport_rc, remote_access_error)
{
	struct ibv_wc wc;

	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_RDMA_WRITE, .len = 10, .rkey = b.mr->rkey + 1}),
		     0);
	cr_assert_eq(post_wr(&a, 2, &(struct wr_args){.op = IBV_WR_RDMA_WRITE, .len = 10}), 0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	cr_expect_eq(droce_engine_qp_state(a.qp), IBV_QPS_ERR);
	cr_expect_eq(droce_engine_qp_state(b.qp), IBV_QPS_ERR);
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
}

Test(transport_rc, read_out_of_range_is_a_remote_access_error)
{
	struct ibv_wc wc;

	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_RDMA_READ, .len = 100, .roff = BUF_LEN - 50}),
		     0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
}

Test(transport_rc, qp_without_remote_write_is_an_access_error)
{
	struct ibv_qp_attr attr = {.qp_access_flags = IBV_ACCESS_REMOTE_ATOMIC};
	struct ibv_wc wc;

	droce_tqp_modify(&b.tqp, &attr, IBV_QP_ACCESS_FLAGS, IBV_QPS_RTS);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_WRITE, .len = 8}), 0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "REMOTE_WRITE not granted on the QP");
}

Test(transport_rc, message_longer_than_the_receive_buffer)
{
	struct ibv_wc wc;

	post_recv(&b, 10, 0, 1500);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 3000}), 0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR);
	cr_expect_eq(droce_engine_qp_state(b.qp), IBV_QPS_ERR);
}

Test(transport_rc, bad_receive_lkey_is_a_remote_operational_error)
{
	struct ibv_wc wc;

	post_recv_lkey(&b, 10, 0, 64, b.mr->lkey + 1);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 30}), 0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_OP_ERR);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR);
}

Test(transport_rc, bad_send_lkey_is_a_local_protection_error)
{
	struct ibv_wc wc;

	cr_assert_eq(
		post_wr(&a, 1,
			&(struct wr_args){.op = IBV_WR_SEND, .len = 30, .lkey = a.mr->lkey + 1}),
		0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR);
	cr_expect_eq(droce_engine_qp_state(a.qp), IBV_QPS_ERR);
}

Test(transport_rc, bad_path_is_a_local_qp_operation_error)
{
	struct ibv_qp_attr attr = {.ah_attr = {.is_global = 1, .grh = {.sgid_index = 9}}};
	struct ibv_wc wc;

	droce_tqp_modify(&a.tqp, &attr, IBV_QP_AV, IBV_QPS_RTS);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 30}), 0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_LOC_QP_OP_ERR);
}

Test(transport_rc, modify_to_error_flushes)
{
	struct ibv_qp_attr attr = {0};
	struct ibv_wc wc;

	post_recv(&b, 10, 0, 64);
	fault = drop_all_a;
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 30}), 0);
	pump();
	droce_tqp_modify(&a.tqp, &attr, 0, IBV_QPS_ERR);
	droce_tqp_modify(&b.tqp, &attr, 0, IBV_QPS_ERR);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
}

Test(transport_rc, many_messages_with_losses)
{
	unsigned int i;

	target = 7;
	fault = drop_a_nth;
	for (i = 0; i < 20; i++)
		post_recv(&b, 200 + i, i * 4096, 4096);
	fill(a.buf, 20 * 4096, 3);
	for (i = 0; i < 20; i++)
		cr_assert_eq(post_wr(&a, i,
				     &(struct wr_args){.op = IBV_WR_SEND,
						       .off = i * 4096,
						       .len = 4000,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
	settle();
	for (i = 0; i < 20; i++)
		cr_expect_eq(wc_of(&a, i).status, IBV_WC_SUCCESS);
	for (i = 0; i < 20; i++) {
		cr_expect_eq(wc_of(&b, 200 + i).byte_len, 4000);
		cr_expect(memcmp(b.buf + i * 4096, a.buf + i * 4096, 4000) == 0, "message %u", i);
	}
}

static unsigned int ackreqs;

static enum fault count_ackreq(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)n;
	(void)pkt;
	/* tx() read A's frame into last_a before asking */
	if (from == &a && last_a.ackreq)
		ackreqs++;
	return PASS;
}

Test(transport_rc, ackreq_on_last_and_every_64_packets)
{
	fault = count_ackreq;
	post_recv(&b, 10, 0, MIB);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = MIB}), 0);
	pump();
	cr_expect_eq(a.frames, 1024);
	cr_expect_eq(ackreqs, 16, "packets 63, 127, ... 1023");
}

Test(transport_rc, acks_coalesced_per_burst)
{
	for (int i = 0; i < 5; i++)
		post_recv(&b, 10 + (uint64_t)i, 0, 64);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(post_wr(&a, (uint64_t)i,
				     &(struct wr_args){.op = IBV_WR_SEND,
						       .len = 8,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
	pump();
	cr_expect_eq(a.frames, 5);
	cr_expect_eq(b.frames, 1, "one ACK for the five messages");
	for (int i = 0; i < 5; i++)
		cr_expect_eq(wc_of(&a, (uint64_t)i).status, IBV_WC_SUCCESS);
}

Test(transport_rc, lost_read_request_retransmitted)
{
	struct ibv_wc wc;

	fill(b.buf, 2 * PMTU, 8);
	target = 0;
	fault = drop_a_nth;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_READ,
					       .len = 2 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect(memcmp(a.buf, b.buf, 2 * PMTU) == 0);
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 1);
}

Test(transport_rc, rnr_on_the_last_packet_of_a_write_with_imm)
{
	struct ibv_wc wc;

	fill(a.buf, 3 * PMTU, 2);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE_WITH_IMM,
					       .len = 3 * PMTU,
					       .roff = 4096,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(b.tqp.stats.send_rnr_err, 1);
	post_recv(&b, 10, 0, 0);
	settle();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 3 * PMTU);
	cr_expect(memcmp(b.buf + 4096, a.buf, 3 * PMTU) == 0);
	cr_expect_eq(a.frames, 4, "only the LAST packet is sent again");
}

Test(transport_rc, send_with_invalid_rkey_to_invalidate)
{
	struct ibv_wc wc;

	post_recv(&b, 10, 0, 64);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND_WITH_INV,
					       .len = 8,
					       .imm_or_rkey = 0x12345600}),
		     0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR);
}

Test(transport_rc, bind_with_a_bad_mr_is_a_bind_error)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {.wr_id = 70, .opcode = IBV_WR_BIND_MW}, *bad;
	struct ibv_wc wc;

	cr_assert_not_null(mw);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){.mr = a.mr,
							 .addr = (uintptr_t)a.buf + BUF_LEN,
							 .length = 64,
							 .mw_access_flags = IBV_ACCESS_REMOTE_READ};
	cr_assert_eq(ibv_post_send(a.qp, &wr, &bad), 0);
	pump();
	wc = wc_of(&a, 70);
	cr_expect_eq(wc.status, IBV_WC_MW_BIND_ERR, "%s", ibv_wc_status_str(wc.status));
}

/*
 * A local operation that fails stops the requester: the QP goes to Error when
 * the failure completes and the requests behind it are flushed, so none of them
 * may have been sent meanwhile (a SEND the peer received would complete here as
 * flushed).
 */
static void failed_local_op_stops_the_requester(struct ibv_send_wr *op, enum ibv_wc_status st)
{
	struct ibv_sge sge = {.addr = (uintptr_t)a.buf, .length = 16, .lkey = a.mr->lkey};
	struct ibv_send_wr send = {.wr_id = 81,
				   .sg_list = &sge,
				   .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct ibv_wc wc;

	post_recv(&b, 10, 0, 64);
	op->wr_id = 80;
	op->send_flags = IBV_SEND_SIGNALED;
	op->next = &send;
	/* one post: the requester finds both at once */
	cr_assert_eq(ibv_post_send(a.qp, op, &bad), 0);
	pump();
	/* the pass that failed the operation sent nothing: the flush is the next one's */
	pump();
	wc = wc_of(&a, 80);
	cr_expect_eq(wc.status, st, "%s", ibv_wc_status_str(wc.status));
	wc = wc_of(&a, 81);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(a.frames, 0, "%u frames sent behind the failed operation", a.frames);
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "the peer received the SEND");
}

Test(transport_rc, a_failed_bind_stops_the_requester)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {.opcode = IBV_WR_BIND_MW};

	cr_assert_not_null(mw);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){.mr = a.mr,
							 .addr = (uintptr_t)a.buf + BUF_LEN,
							 .length = 64,
							 .mw_access_flags = IBV_ACCESS_REMOTE_READ};
	failed_local_op_stops_the_requester(&wr, IBV_WC_MW_BIND_ERR);
}

Test(transport_rc, a_failed_local_invalidate_stops_the_requester)
{
	struct ibv_send_wr wr = {.opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = 0x12345600};

	failed_local_op_stops_the_requester(&wr, IBV_WC_LOC_PROT_ERR);
}

Test(transport_uc, a_failed_local_invalidate_stops_the_requester)
{
	struct ibv_send_wr wr = {.opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = 0x12345600};

	failed_local_op_stops_the_requester(&wr, IBV_WC_LOC_PROT_ERR);
}

Test(transport_rc, send_into_an_srq)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct droce_srq_view v;
	struct droce_ring_cons ring;
	struct ibv_sge sge = {.addr = (uintptr_t)b.buf, .length = 4096, .lkey = b.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 80, .sg_list = &sge, .num_sge = 1}, *bad;
	struct ibv_wc wc;

	cr_assert_not_null(srq);
	cr_assert_eq(droce_engine_srq_view(srq, &v), 0);
	cr_assert_eq(droce_ring_cons_attach(&ring, v.ring.addr, v.ring.len), 0);
	b.tqp.srq = &ring;
	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	fill(a.buf, 3000, 6);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 3000}), 0);
	pump();
	wc = wc_of(&b, 80);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, 3000);
	cr_expect(memcmp(b.buf, a.buf, 3000) == 0);
	b.tqp.srq = NULL;
}

/*
 * A QP of an SRQ that goes to Error takes no more WQEs from it: after its error
 * event it raises Last WQE Reached, so that the application knows when it may
 * destroy it without losing an SRQ WQE.
 */
Test(transport_rc, an_srq_qp_in_error_raises_last_wqe_reached)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct droce_srq_view v;
	struct droce_ring_cons ring;
	struct ibv_sge sge = {.addr = (uintptr_t)b.buf, .length = 100, .lkey = b.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 80, .sg_list = &sge, .num_sge = 1}, *bad;
	struct ibv_async_event ev;
	struct ibv_wc wc;

	cr_assert_not_null(srq);
	cr_assert_eq(droce_engine_srq_view(srq, &v), 0);
	cr_assert_eq(droce_ring_cons_attach(&ring, v.ring.addr, v.ring.len), 0);
	b.tqp.srq = &ring;
	b.tqp.srq_user = srq;
	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	/* longer than the WQE: the responder fails it and goes to Error */
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 200}), 0);
	pump();
	wc = wc_of(&b, 80);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	cr_expect_eq(ev.event_type, IBV_EVENT_QP_REQ_ERR, "%s", ibv_event_type_str(ev.event_type));
	cr_expect_eq(ev.element.qp, b.qp);
	ibv_ack_async_event(&ev);
	/* queued already (the pump ran the engine's part): never block for it */
	cr_assert_eq(poll(&(struct pollfd){.fd = ctx->async_fd, .events = POLLIN}, 1, 0), 1,
		     "no second event");
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	cr_expect_eq(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED, "%s",
		     ibv_event_type_str(ev.event_type));
	cr_expect_eq(ev.element.qp, b.qp);
	ibv_ack_async_event(&ev);
	b.tqp.srq = NULL;
}

/*
 * A path whose MAC never resolves: nothing can be sent and no timer runs, so the
 * requester itself ends the wait: RC fails the WQE with RETRY_EXC_ERR after as long
 * as a UD send waits (3 s, or the retries if longer), the rest flushed; UC gives the
 * message up (completes as sent, counted). Before, the WQE waited for ever.
 */
static void unreachable_path(enum ibv_wc_status st)
{
	struct ibv_wc wc;

	unreachable = true;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(ibv_poll_cq(a.cq, 1, &wc), 0, "completed at once: %s",
		     ibv_wc_status_str(wc.status));
	/* just short of the wait, then past it */
	now_ns += 2999000000ull;
	droce_transport_timers_run(&wheel, now_ns, 1024);
	pump();
	cr_expect_eq(ibv_poll_cq(a.cq, 1, &wc), 0, "completed early: %s",
		     ibv_wc_status_str(wc.status));
	now_ns += 2000000ull;
	droce_transport_timers_run(&wheel, now_ns, 1024);
	pump();
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, st, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(a.frames, 0);
	unreachable = false;
}

Test(transport_rc, unreachable_path_ends_in_retry_exceeded)
{
	struct ibv_wc wc;

	unreachable_path(IBV_WC_RETRY_EXC_ERR);
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(a.tqp.state, IBV_QPS_ERR);
}

Test(transport_uc, unreachable_path_gives_the_message_up)
{
	unreachable_path(IBV_WC_SUCCESS);
	cr_expect_eq(a.tqp.stats.neigh_drop, 1);
}

static uint64_t rng = 88172645463325252ull;

/* 5 % dropped, 3 % duplicated, 3 % swapped with the next, both ways (fixed seed). */
static enum fault random_faults(const struct side *from, const struct droce_pkt *pkt,
				unsigned int n)
{
	uint64_t r;

	(void)from;
	(void)pkt;
	(void)n;
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	r = rng % 100;
	if (r < 5)
		return DROP;
	if (r < 8)
		return DUP;
	if (r < 11 && held == NULL)
		return HOLD;
	return PASS;
}

Test(transport_rc, random_faults_every_operation_exactly_once)
{
	static const uint32_t lens[] = {0, 1, 1000, 1024, 1025, 5000, 20000};
	uint64_t *counter = (uint64_t *)(b.buf + MIB + 4096);
	unsigned int i, n = 60;

	fault = random_faults;
	fill(a.buf, MIB, 11);
	fill(b.buf + MIB / 2, 256 * 1024, 12);
	*counter = 0;
	for (i = 0; i < n; i++)
		post_recv(&b, 1000 + i, (i % 16) * 32768, 32768);
	for (i = 0; i < n; i++) {
		uint32_t len = lens[i % 7];
		struct wr_args w = {
			.len = len, .off = (i % 16) * 32768, .flags = IBV_SEND_SIGNALED};

		switch (i % 4) {
		case 0:
			w.op = IBV_WR_SEND;
			break;
		case 1:
			w.op = IBV_WR_RDMA_WRITE;
			w.roff = MIB + 8192 + (i % 16) * 32768;
			break;
		case 2:
			w.op = IBV_WR_RDMA_READ;
			w.off = MIB + (i % 16) * 32768;
			w.roff = MIB / 2 + (i % 8) * 32768;
			break;
		default:
			w.op = IBV_WR_ATOMIC_FETCH_AND_ADD;
			w.len = 8;
			w.off = MIB + MIB / 2 + i * 8;
			w.roff = MIB + 4096;
			w.compare_add = 1;
			break;
		}
		cr_assert_eq(post_wr(&a, i, &w), 0);
		/* a few at a time: the receive buffers are reused every 16 */
		if (i % 8 == 7)
			settle();
	}
	settle();
	for (i = 0; i < n; i++) {
		struct ibv_wc wc = wc_of(&a, i);

		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "WR %u: %s", i,
			     ibv_wc_status_str(wc.status));
	}
	for (i = 0; i < n; i += 4) {
		struct ibv_wc wc = wc_of(&b, 1000 + i / 4);

		cr_expect_eq(wc.status, IBV_WC_SUCCESS);
		cr_expect_eq(wc.byte_len, lens[i % 7], "SEND %u", i);
		cr_expect(memcmp(b.buf + ((i / 4) % 16) * 32768, a.buf + (i % 16) * 32768,
				 lens[i % 7]) == 0,
			  "SEND %u bytes", i);
	}
	cr_expect_eq(*counter, n / 4, "every FETCH_ADD executed exactly once");
	for (i = 0; i < n; i++) {
		uint32_t len = lens[i % 7], off = (i % 16) * 32768;

		if (i % 4 == 1)
			cr_expect(memcmp(b.buf + MIB + 8192 + off, a.buf + off, len) == 0,
				  "WRITE %u", i);
		if (i % 4 == 2)
			cr_expect(memcmp(a.buf + MIB + off, b.buf + MIB / 2 + (i % 8) * 32768,
					 len) == 0,
				  "READ %u", i);
	}
	cr_expect_gt(a.tqp.stats.completer_retry_err, 0, "faults were recovered from");
}

/* ------------------------------------------------------------ UC */

Test(transport_uc, send_write_every_size)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		struct ibv_wc wc;

		fill(a.buf, len, i);
		post_recv(&b, 100 + i, 0, MIB + 16);
		cr_assert_eq(post_wr(&a, i,
				     &(struct wr_args){.op = IBV_WR_SEND,
						       .len = len,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
		cr_assert_eq(post_wr(&a, 50 + i,
				     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
						       .len = len,
						       .roff = MIB,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
		pump();
		cr_expect_eq(wc_of(&a, i).status, IBV_WC_SUCCESS);
		cr_expect_eq(wc_of(&a, 50 + i).status, IBV_WC_SUCCESS);
		wc = wc_of(&b, 100 + i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS);
		cr_expect_eq(wc.byte_len, len);
		cr_expect(memcmp(b.buf, a.buf, len) == 0, "size %u: SEND bytes", len);
		cr_expect(memcmp(b.buf + MIB, a.buf, len) == 0, "size %u: WRITE bytes", len);
	}
	cr_expect_eq(b.frames, 0, "UC sends no acknowledgement");
}

Test(transport_uc, write_with_imm)
{
	struct ibv_wc wc;

	post_recv(&b, 10, 0, 16);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE_WITH_IMM,
					       .len = 1500,
					       .roff = 4096,
					       .imm_or_rkey = 5}),
		     0);
	pump();
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_expect_eq(be32toh(wc.imm_data), 5);
}

Test(transport_uc, gap_drops_the_message_and_reuses_the_receive)
{
	struct ibv_wc wc;

	target = 1;
	fault = drop_a_nth;
	post_recv(&b, 10, 0, 8192);
	fill(a.buf, 3 * PMTU, 1);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .len = 3 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS, "UC completes once sent");
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "the broken message is dropped");
	cr_expect_eq(b.tqp.stats.out_of_sequence, 1);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .off = 8192,
					       .len = 100,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 100, "the next message takes the same receive WQE");
}

Test(transport_uc, write_with_imm_without_receive_drops)
{
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE_WITH_IMM,
					       .len = 8,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	cr_expect_eq(b.tqp.stats.uc_msg_drop, 1);
	cr_expect_eq(b.frames, 0, "no RNR NAK on UC");
}

Test(transport_uc, no_receive_drops)
{
	struct ibv_wc wc;

	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .len = 2 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	cr_expect_eq(b.tqp.stats.uc_msg_drop, 2, "both packets dropped");
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0);
}

/* UC never goes back: a duplicate is dropped, the message arrives once. */
Test(transport_uc, duplicate_packet_delivers_once)
{
	struct ibv_wc wc;

	target = 0;
	fault = dup_a_nth;
	post_recv(&b, 10, 0, 8192);
	post_recv(&b, 11, 8192, 8192);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 100, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 100);
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "no second delivery");
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
}

/* A message overtaken by the next one is lost, not delivered late: UC keeps the order. */
Test(transport_uc, late_packet_dropped_order_kept)
{
	struct ibv_wc wc;

	target = 0;
	fault = hold_a_nth;
	post_recv(&b, 10, 0, 8192);
	post_recv(&b, 11, 8192, 8192);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 100, .flags = IBV_SEND_SIGNALED}),
		     0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .off = 8192,
					       .len = 200,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	cr_expect_eq(wc_of(&a, 2).status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 200, "the second message arrived first");
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "the first, late, is dropped");
	cr_expect_eq(b.tqp.stats.out_of_sequence, 1);
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
}

Test(transport_rc, reads_beyond_responder_resources_are_refused)
{
	struct ibv_qp_attr attr = {.max_dest_rd_atomic = 1};
	struct ibv_wc wc;

	/* the requester may have 4 READs outstanding, the responder keeps 1: a mismatch */
	droce_tqp_modify(&b.tqp, &attr, IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QPS_RTS);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_READ,
					       .len = 4096,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_READ,
					       .len = 10,
					       .off = 8192,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	cr_expect_eq(b.tqp.state, IBV_QPS_ERR,
		     "the second READ found no free resource: invalid request, not an overwrite");
	cr_assert_eq(ibv_poll_cq(a.cq, 1, &wc), 1);
	cr_expect_neq(wc.status, IBV_WC_SUCCESS, "the requester learns of it: %s",
		      ibv_wc_status_str(wc.status));
}
