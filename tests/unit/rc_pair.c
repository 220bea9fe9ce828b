/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-QP transport harness of rc_pair.h. */
#include "rc_pair.h"

struct ibv_context *ctx;
struct ibv_pd *pd;
struct side a, b;
struct rte_mempool *pool;
struct droce_tport_addr port;
struct droce_timer_wheel wheel __attribute__((aligned(64)));
uint64_t now_ns;
uint64_t ns_per_frame;
fault_fn fault;
unsigned int bad_frames, solicited_events;
static struct {
	struct rte_mbuf *m[QUEUE];
	struct side *to[QUEUE];
	unsigned int head, tail;
} q;
struct rte_mbuf *held; /* the frame HOLD keeps back until the next one passes */
struct rte_mbuf *stashed;
static struct side *held_to;
struct droce_hdr_fields last_a; /* fields of A's last frame */
struct droce_hdr_fields last_b; /* fields of B's last frame */

struct side *peer(const struct side *s)
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

void inject(struct side *to, struct rte_mbuf *m)
{
	enqueue(to, m);
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
	droce_pkt_fields(&pkt, rte_pktmbuf_mtod(m, const uint8_t *),
			 from == &a ? &last_a : &last_b);
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
	case STASH:
		cr_assert_null(stashed);
		stashed = rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);
		cr_assert_not_null(stashed);
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

bool unreachable;

int neigh(void *arg, const uint8_t ip[16], uint8_t mac[6])
{
	(void)arg;
	(void)ip;
	if (unreachable)
		return -EHOSTUNREACH; /* nobody answered for it */
	memcpy(mac, (uint8_t[]){0x02, 0, 0, 0, 0, 0x02}, 6);
	return 0;
}

void cq_notify(void *arg, void *cq, bool solicited)
{
	(void)arg;
	if (solicited)
		solicited_events++;
	droce_verbs_cq_notify(cq, solicited);
}

void qp_error(void *arg, void *qp, enum ibv_qp_state state, enum ibv_event_type ev)
{
	(void)arg;
	droce_verbs_qp_error(qp, state, ev);
}

/* Deliver queued frames and run both send passes until nothing moves. */
void pump(void)
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
			if (ns_per_frame != 0) {
				/* the link takes time: timers fire while a message flows */
				now_ns += ns_per_frame;
				droce_transport_timers_run(&wheel, now_ns, 1024);
			}
		}
	}
	cr_assert_fail("pump never settled");
}

/* Pump, and let time pass to the next timer, until no timer is left (bounded). */
void settle(void)
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

void side_setup(struct side *s, enum ibv_qp_type type)
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
	cr_assert_eq(droce_verbs_qp_view(s->qp, &v), 0);
	cr_assert_eq(droce_tqp_init(&s->tqp, v.qpn, type, v.pd, v.sq.addr, v.sq.len, v.rq.addr,
				    v.rq.len),
		     0);
	cr_assert_eq(droce_verbs_cq_view(s->cq, &cv), 0);
	cr_assert_eq(droce_ring_prod_attach(&s->tcq.prod, cv.ring.addr, cv.ring.len), 0);
	s->tcq.user = s->cq;
	s->tqp.scq = &s->tcq;
	s->tqp.rcq = &s->tcq;
	s->tqp.user = s->qp;
	s->env = (struct droce_transport_env){
		.pool = pool,
		.keys = droce_verbs_mr_table(),
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
void side_connect(struct side *s, uint32_t sq_psn, uint32_t rq_psn)
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

	droce_tqp_modify(&s->env, &s->tqp, &attr, rtr, IBV_QPS_RTR);
	droce_tqp_modify(&s->env, &s->tqp, &attr, rts, IBV_QPS_RTS);
}

void setup_type(enum ibv_qp_type type)
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

void setup_rc(void)
{
	setup_type(IBV_QPT_RC);
}

void setup_uc(void)
{
	setup_type(IBV_QPT_UC);
}

void teardown(void)
{
	droce_tqp_fini(&a.env, &a.tqp);
	droce_tqp_fini(&b.env, &b.tqp);
	droce_test_eal_fini();
}

void post_recv_lkey(struct side *s, uint64_t id, uint32_t off, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = {.addr = (uintptr_t)s->buf + off, .length = len, .lkey = lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1}, *bad;

	cr_assert_eq(ibv_post_recv(s->qp, &wr, &bad), 0);
}

void post_recv(struct side *s, uint64_t id, uint32_t off, uint32_t len)
{
	post_recv_lkey(s, id, off, len, s->mr->lkey);
}

int post_wr(struct side *s, uint64_t id, const struct wr_args *w)
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

struct ibv_wc wc_of(struct side *s, uint64_t id)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	cr_assert_eq(ibv_poll_cq(s->cq, 1, &wc), 1, "no completion for %llu",
		     (unsigned long long)id);
	cr_assert_eq(wc.wr_id, id, "completion %llu instead of %llu", (unsigned long long)wc.wr_id,
		     (unsigned long long)id);
	return wc;
}

void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed + (i >> 8));
}

const uint32_t sizes[] = {0, 1, PMTU - 1, PMTU, PMTU + 1, MIB};

uint32_t pkts_of(uint32_t len)
{
	return len == 0 ? 1 : (len + PMTU - 1) / PMTU;
}

unsigned int target;

enum fault drop_a_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	return from == &a && n == target ? DROP : PASS;
}

enum fault dup_a_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	return from == &a && n == target ? DUP : PASS;
}

enum fault hold_a_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	return from == &a && n == target ? HOLD : PASS;
}

enum fault stash_a_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	return from == &a && n == target ? STASH : PASS;
}

enum fault drop_b_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	return from == &b && n == target ? DROP : PASS;
}

enum fault drop_all_a(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	(void)n;
	return from == &a ? DROP : PASS;
}

void send_and_check(uint32_t len, uint64_t id)
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

/*
 * A local operation that fails stops the requester: the QP goes to Error when
 * the failure completes and the requests behind it are flushed, so none of them
 * may have been sent meanwhile (a SEND the peer received would complete here as
 * flushed).
 */
void failed_local_op_stops_the_requester(struct ibv_send_wr *op, enum ibv_wc_status st)
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
