/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion statuses provoked on purpose (sweep.h, sw_status()): one work
 * request of e0 made to fail, then what both ends must show. e0's failing
 * request completes with its status; the two SENDs posted behind it are
 * flushed when e0's QP went to Error, else they complete; the peer's receive
 * of the failing message (if any) completes with its status; two "witness"
 * receives at the peer are flushed when its QP went to Error, and stay
 * untouched when it did not (nothing behind a failed request was executed);
 * the QP states and the peer's asynchronous event are as the transport
 * documents (doc/transport.md); requests posted afterwards to a QP in Error are
 * flushed; and after RESET both QPs carry a message again.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sweep_priv.h"

#define BAD_KEY  0x12345600u /* a key no table entry has */
#define RECV_ID  800u        /* the peer's receive of the failing message */
#define WITNESS  801u        /* the peer's two witness receives */
#define AFTER_ID 900u        /* requests posted once the QPs are in Error */
#define NO_EVENT (-1)

struct status_case {
	const char *name;
	enum sw_kind kind;
	const char *fault; /* on both ports (ring runs only) */
	void (*tune)(struct sw_path *p, bool peer);
	uint32_t recv_len;  /* the peer's receive for the failing message (0: none) */
	uint32_t recv_lkey; /* its lkey (0: the MR's) */
	void (*prepare)(struct sw_run *r, enum sw_kind k); /* before the witnesses */
	void (*provoke)(struct sw_run *r, enum sw_kind k, uint64_t id);
	bool no_witness;       /* the peer posts no witness receives */
	bool peer_gone;        /* the peer's QP is destroyed first */
	enum ibv_wc_status st; /* e0's completion */
	enum ibv_qp_state state;
	int peer_recv; /* status of the peer's receive RECV_ID, or -1 */
	enum ibv_qp_state peer_state;
	int peer_event; /* the peer's async event, or NO_EVENT */
};

/*
 * Post e0's request @p c; the failing one (id 1) goes with two SENDs behind it
 * in the same ibv_post_send() (ids 2 and 3; on RC fenced, so that they wait for a
 * READ or an atomic to complete: a request behind one may run before its response
 * fails), so that the requester sees all three at once.
 */
static void post(struct sw_run *r, struct sw_cmd c)
{
	struct sw_reply rep;

	if (c.id == 1)
		c.chain = 2;
	rep = sw_local(r, c);

	cr_assert_eq(rep.rc, 0, "%s: post: %s", r->what, strerror(-rep.rc));
}

static void write_to(struct sw_run *r, enum sw_kind k, uint64_t id, uint64_t addr, uint32_t rkey,
		     uint64_t len)
{
	post(r, (struct sw_cmd){.op = SW_POST,
				.kind = k,
				.wr_op = IBV_WR_RDMA_WRITE,
				.id = id,
				.off = SW_SRC(r),
				.len = len,
				.addr = addr,
				.rkey = rkey});
}

static void p_write_bad_rkey(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	write_to(r, k, id, r->i1.addr + SW_DST(r), r->i1.rkey ^ 0x80, 64);
}

static void p_write_beyond_mr(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	/* two packets, the last byte one beyond the MR */
	write_to(r, k, id, r->i1.addr + r->i1.len - r->pmtu, r->i1.rkey, r->pmtu + 1);
}

static void p_read_without_right(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	post(r, (struct sw_cmd){.op = SW_POST,
				.kind = k,
				.wr_op = IBV_WR_RDMA_READ,
				.id = id,
				.off = SW_DST(r),
				.len = 64,
				.addr = r->i1.addr + SW_SRC(r),
				.rkey = r->i1.ro_rkey});
}

static void p_read(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	post(r, (struct sw_cmd){.op = SW_POST,
				.kind = k,
				.wr_op = IBV_WR_RDMA_READ,
				.id = id,
				.off = SW_DST(r),
				.len = 64,
				.addr = r->i1.addr + SW_SRC(r),
				.rkey = r->i1.rkey});
}

static void p_read_into_read_only(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	post(r, (struct sw_cmd){.op = SW_POST,
				.kind = k,
				.wr_op = IBV_WR_RDMA_READ,
				.id = id,
				.off = SW_DST(r),
				.len = 64,
				.lkey = r->e0.ro->lkey,
				.addr = r->i1.addr + SW_SRC(r),
				.rkey = r->i1.rkey});
}

static void p_atomic_without_right(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	post(r, (struct sw_cmd){.op = SW_POST,
				.kind = k,
				.wr_op = IBV_WR_ATOMIC_FETCH_AND_ADD,
				.id = id,
				.off = SW_DST(r),
				.len = 8,
				.addr = r->i1.addr + SW_ATOM(r),
				.rkey = r->i1.ro_rkey,
				.val = 1});
}

static void p_atomic_into_read_only(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	post(r, (struct sw_cmd){.op = SW_POST,
				.kind = k,
				.wr_op = IBV_WR_ATOMIC_FETCH_AND_ADD,
				.id = id,
				.off = SW_DST(r),
				.len = 8,
				.lkey = r->e0.ro->lkey,
				.addr = r->i1.addr + SW_ATOM(r),
				.rkey = r->i1.rkey,
				.val = 1});
}

static void send_len(struct sw_run *r, enum sw_kind k, uint64_t id, uint64_t len, uint32_t lkey)
{
	post(r, (struct sw_cmd){.op = SW_POST,
				.kind = k,
				.wr_op = IBV_WR_SEND,
				.id = id,
				.off = SW_SRC(r),
				.len = len,
				.lkey = lkey});
}

static void p_send_200(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	send_len(r, k, id, 200, 0);
}

static void p_send_64(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	send_len(r, k, id, 64, 0);
}

static void p_send_bad_lkey(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	send_len(r, k, id, 64, BAD_KEY);
}

static void p_send_invalidating_bad_rkey(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	post(r, (struct sw_cmd){.op = SW_POST,
				.kind = k,
				.wr_op = IBV_WR_SEND_WITH_INV,
				.id = id,
				.off = SW_SRC(r),
				.len = 16,
				.imm = BAD_KEY});
}

/* A window the peer bound, invalidated by a SEND_WITH_INV ... */
static void pre_invalidated_window(struct sw_run *r, enum sw_kind k)
{
	struct sw_reply rep = sw_peer(r, (struct sw_cmd){.op = SW_BIND,
							 .kind = k,
							 .id = 100,
							 .off = SW_WIN(r),
							 .len = 4096,
							 .val = IBV_ACCESS_REMOTE_WRITE});
	struct ibv_wc wc;

	cr_assert_eq(rep.rc, 0);
	cr_assert_eq(rep.wc.status, IBV_WC_SUCCESS, "bind: %s", ibv_wc_status_str(rep.wc.status));
	r->rkey = (uint32_t)rep.val;
	/* the window works */
	write_to(r, k, 101, r->i1.addr + SW_WIN(r), r->rkey, 64);
	wc = sw_wait(r, false, k, false, 101);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "WRITE through the window: %s",
		     ibv_wc_status_str(wc.status));
	rep = sw_peer(r, (struct sw_cmd){.op = SW_RECV, .kind = k, .id = 102, .len = 0});
	cr_assert_eq(rep.rc, 0);
	post(r, (struct sw_cmd){.op = SW_POST,
				.kind = k,
				.wr_op = IBV_WR_SEND_WITH_INV,
				.id = 102,
				.imm = r->rkey});
	wc = sw_wait(r, false, k, false, 102);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	wc = sw_wait(r, true, k, true, 102);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert(wc.wc_flags & IBV_WC_WITH_INV);
}

/* ... then written through */
static void p_write_invalidated_window(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	write_to(r, k, id, r->i1.addr + SW_WIN(r), r->rkey, 64);
}

/* BIND_MW of a type-2 window of e0 over [addr, addr + len), not waited for. */
static void bind2(struct sw_run *r, enum sw_kind k, uint64_t id, struct ibv_mw *mw, uint32_t rkey,
		  uint64_t addr, uint64_t len)
{
	struct ibv_send_wr wr = {
		.wr_id = id, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED};

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){.mr = r->e0.mr,
							 .addr = addr,
							 .length = len,
							 .mw_access_flags = IBV_ACCESS_REMOTE_READ};
	cr_assert_eq(sw_post_chain(&r->e0, k, &wr, id == 1 ? 2 : 0), 0, "post BIND_MW: %s",
		     strerror(errno));
}

static void p_bind_beyond_mr(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	struct ibv_mw *mw = ibv_alloc_mw(r->e0.pd, IBV_MW_TYPE_2);

	cr_assert_not_null(mw);
	bind2(r, k, id, mw, ibv_inc_rkey(mw->rkey), (uintptr_t)r->e0.buf + r->e0.len - 32, 64);
}

static void p_bind_bound_window(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	struct ibv_mw *mw = ibv_alloc_mw(r->e0.pd, IBV_MW_TYPE_2);
	uint32_t rkey;
	struct ibv_wc wc;

	cr_assert_not_null(mw);
	rkey = ibv_inc_rkey(mw->rkey);
	bind2(r, k, 100, mw, rkey, (uintptr_t)r->e0.buf + SW_WIN(r), 64);
	wc = sw_wait(r, false, k, false, 100);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "first bind: %s", ibv_wc_status_str(wc.status));
	bind2(r, k, id, mw, ibv_inc_rkey(rkey), (uintptr_t)r->e0.buf + SW_WIN(r), 64);
}

static void p_local_inv_bad_key(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	post(r, (struct sw_cmd){.op = SW_POST,
				.kind = k,
				.wr_op = IBV_WR_LOCAL_INV,
				.id = id,
				.imm = BAD_KEY});
}

static void p_destroy_peer(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	struct sw_reply rep = sw_peer(r, (struct sw_cmd){.op = SW_DESTROY, .kind = k});

	cr_assert_eq(rep.rc, 0);
	send_len(r, k, id, 64, 0);
}

static void p_destroy_peer_read(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	struct sw_reply rep = sw_peer(r, (struct sw_cmd){.op = SW_DESTROY, .kind = k});

	cr_assert_eq(rep.rc, 0);
	post(r, (struct sw_cmd){.op = SW_POST,
				.kind = k,
				.wr_op = IBV_WR_RDMA_READ,
				.id = id,
				.off = SW_DST(r),
				.len = 3000,
				.addr = r->i1.addr + SW_SRC(r),
				.rkey = r->i1.rkey});
}

static void p_destroy_peer_atomic(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	struct sw_reply rep = sw_peer(r, (struct sw_cmd){.op = SW_DESTROY, .kind = k});

	cr_assert_eq(rep.rc, 0);
	post(r, (struct sw_cmd){.op = SW_POST,
				.kind = k,
				.wr_op = IBV_WR_ATOMIC_CMP_AND_SWP,
				.id = id,
				.off = SW_DST(r),
				.len = 8,
				.addr = r->i1.addr + SW_ATOM(r),
				.rkey = r->i1.rkey});
}

static void p_write_3000(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	write_to(r, k, id, r->i1.addr + SW_DST(r), r->i1.rkey, 3000);
}

static void t_rnr_retry_1(struct sw_path *p, bool peer)
{
	if (!peer)
		p->rnr_retry = 1;
}

static void t_fast_retry(struct sw_path *p, bool peer)
{
	(void)peer;
	p->timeout = 8; /* about 1 ms */
	p->retry_cnt = 2;
}

static void t_no_remote_read(struct sw_path *p, bool peer)
{
	if (peer)
		p->access = IBV_ACCESS_REMOTE_WRITE;
}

static const struct status_case cases[] = {
	/* RC: the responder NAKs, both QPs go to Error */
	{"rem_access_bad_rkey", SW_RC, NULL, NULL, 0, 0, NULL, p_write_bad_rkey, false, false,
	 IBV_WC_REM_ACCESS_ERR, IBV_QPS_ERR, -1, IBV_QPS_ERR, IBV_EVENT_QP_ACCESS_ERR},
	{"rem_access_write_beyond_mr", SW_RC, NULL, NULL, 0, 0, NULL, p_write_beyond_mr, false,
	 false, IBV_WC_REM_ACCESS_ERR, IBV_QPS_ERR, -1, IBV_QPS_ERR, IBV_EVENT_QP_ACCESS_ERR},
	{"rem_access_read_without_right", SW_RC, NULL, NULL, 0, 0, NULL, p_read_without_right,
	 false, false, IBV_WC_REM_ACCESS_ERR, IBV_QPS_ERR, -1, IBV_QPS_ERR,
	 IBV_EVENT_QP_ACCESS_ERR},
	{"rem_access_atomic_without_right", SW_RC, NULL, NULL, 0, 0, NULL, p_atomic_without_right,
	 false, false, IBV_WC_REM_ACCESS_ERR, IBV_QPS_ERR, -1, IBV_QPS_ERR,
	 IBV_EVENT_QP_ACCESS_ERR},
	{"rem_access_qp_without_remote_read", SW_RC, NULL, t_no_remote_read, 0, 0, NULL, p_read,
	 false, false, IBV_WC_REM_ACCESS_ERR, IBV_QPS_ERR, -1, IBV_QPS_ERR,
	 IBV_EVENT_QP_ACCESS_ERR},
	{"rem_access_invalidated_window", SW_RC, NULL, NULL, 0, 0, pre_invalidated_window,
	 p_write_invalidated_window, false, false, IBV_WC_REM_ACCESS_ERR, IBV_QPS_ERR, -1,
	 IBV_QPS_ERR, IBV_EVENT_QP_ACCESS_ERR},
	{"rem_inv_req_message_too_long", SW_RC, NULL, NULL, 100, 0, NULL, p_send_200, false, false,
	 IBV_WC_REM_INV_REQ_ERR, IBV_QPS_ERR, IBV_WC_LOC_LEN_ERR, IBV_QPS_ERR,
	 IBV_EVENT_QP_REQ_ERR},
	{"rem_inv_req_invalidate_bad_rkey", SW_RC, NULL, NULL, 64, 0, NULL,
	 p_send_invalidating_bad_rkey, false, false, IBV_WC_REM_INV_REQ_ERR, IBV_QPS_ERR,
	 IBV_WC_LOC_PROT_ERR, IBV_QPS_ERR, IBV_EVENT_QP_REQ_ERR},
	{"rem_op_receive_bad_lkey", SW_RC, NULL, NULL, 64, BAD_KEY, NULL, p_send_64, false, false,
	 IBV_WC_REM_OP_ERR, IBV_QPS_ERR, IBV_WC_LOC_PROT_ERR, IBV_QPS_ERR, IBV_EVENT_QP_FATAL},
	/* RC: local errors, the peer unaffected */
	{"loc_prot_send_bad_lkey", SW_RC, NULL, NULL, 0, 0, NULL, p_send_bad_lkey, false, false,
	 IBV_WC_LOC_PROT_ERR, IBV_QPS_ERR, -1, IBV_QPS_RTS, NO_EVENT},
	{"loc_prot_read_into_read_only", SW_RC, NULL, NULL, 0, 0, NULL, p_read_into_read_only,
	 false, false, IBV_WC_LOC_PROT_ERR, IBV_QPS_ERR, -1, IBV_QPS_RTS, NO_EVENT},
	{"loc_prot_atomic_into_read_only", SW_RC, NULL, NULL, 0, 0, NULL, p_atomic_into_read_only,
	 false, false, IBV_WC_LOC_PROT_ERR, IBV_QPS_ERR, -1, IBV_QPS_RTS, NO_EVENT},
	{"loc_prot_local_inv_bad_key", SW_RC, NULL, NULL, 0, 0, NULL, p_local_inv_bad_key, false,
	 false, IBV_WC_LOC_PROT_ERR, IBV_QPS_ERR, -1, IBV_QPS_RTS, NO_EVENT},
	{"mw_bind_beyond_mr", SW_RC, NULL, NULL, 0, 0, NULL, p_bind_beyond_mr, false, false,
	 IBV_WC_MW_BIND_ERR, IBV_QPS_ERR, -1, IBV_QPS_RTS, NO_EVENT},
	{"mw_bind_bound_window", SW_RC, NULL, NULL, 0, 0, NULL, p_bind_bound_window, false, false,
	 IBV_WC_MW_BIND_ERR, IBV_QPS_ERR, -1, IBV_QPS_RTS, NO_EVENT},
	/* RC: retries exhausted */
	{"rnr_retry_exc", SW_RC, NULL, t_rnr_retry_1, 0, 0, NULL, p_send_64, true, false,
	 IBV_WC_RNR_RETRY_EXC_ERR, IBV_QPS_ERR, -1, IBV_QPS_RTS, NO_EVENT},
	{"retry_exc_peer_gone", SW_RC, NULL, t_fast_retry, 0, 0, NULL, p_destroy_peer, true, true,
	 IBV_WC_RETRY_EXC_ERR, IBV_QPS_ERR, -1, IBV_QPS_RESET, NO_EVENT},
	{"retry_exc_peer_gone_read", SW_RC, NULL, t_fast_retry, 0, 0, NULL, p_destroy_peer_read,
	 true, true, IBV_WC_RETRY_EXC_ERR, IBV_QPS_ERR, -1, IBV_QPS_RESET, NO_EVENT},
	{"retry_exc_peer_gone_atomic", SW_RC, NULL, t_fast_retry, 0, 0, NULL, p_destroy_peer_atomic,
	 true, true, IBV_WC_RETRY_EXC_ERR, IBV_QPS_ERR, -1, IBV_QPS_RESET, NO_EVENT},
	{"retry_exc_link_drops_all", SW_RC, "drop:1+match:roce", t_fast_retry, 0, 0, NULL,
	 p_write_3000, false, false, IBV_WC_RETRY_EXC_ERR, IBV_QPS_ERR, -1, IBV_QPS_RTS, NO_EVENT},
	/* UC and UD: the receiver's error is the receiver's */
	/* (a message longer than the receive: UC drops it and keeps the receive for the next,
	 * test_transport_uc.c; UD completes the receive with IBV_WC_LOC_LEN_ERR and stays in RTS,
	 * test_transport_ud.c) */
	{"uc_loc_prot_receive_bad_lkey", SW_UC, NULL, NULL, 64, BAD_KEY, NULL, p_send_64, false,
	 false, IBV_WC_SUCCESS, IBV_QPS_RTS, IBV_WC_LOC_PROT_ERR, IBV_QPS_ERR, IBV_EVENT_QP_FATAL},
	{"ud_loc_prot_receive_bad_lkey", SW_UD, NULL, NULL, 40 + 64, BAD_KEY, NULL, p_send_64,
	 false, false, IBV_WC_SUCCESS, IBV_QPS_RTS, IBV_WC_LOC_PROT_ERR, IBV_QPS_ERR,
	 IBV_EVENT_QP_FATAL},
};

static const struct status_case *find(const char *name)
{
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	cr_assert_fail("no status case %s", name);
	return NULL;
}

const char *sw_status_fault(const char *name)
{
	return find(name)->fault;
}

static void expect_wc(const struct sw_run *r, const struct ibv_wc *wc, int st, const char *what)
{
	cr_expect_eq(wc->status, st, "%s: %s: %s, expected %s", r->what, what,
		     ibv_wc_status_str(wc->status), ibv_wc_status_str((enum ibv_wc_status)st));
}

static void expect_nothing(struct sw_run *r, bool peer, enum sw_kind k, bool recv)
{
	struct sw_reply rep =
		sw_on(r, peer, (struct sw_cmd){.op = SW_POLL, .kind = k, .recv = recv});

	cr_expect_eq(rep.rc, -EAGAIN, "%s: %s: an unexpected %s completion %llu (%s)", r->what,
		     peer ? "peer" : "e0", recv ? "receive" : "send",
		     (unsigned long long)rep.wc.wr_id, ibv_wc_status_str(rep.wc.status));
}

static void expect_event(struct sw_run *r, bool peer, int event, uint32_t qpn)
{
	struct sw_reply rep =
		sw_on(r, peer, (struct sw_cmd){.op = SW_ASYNC, .len = event == NO_EVENT ? 0 : 5});

	if (event == NO_EVENT) {
		cr_expect_eq(rep.rc, -EAGAIN, "%s: %s: unexpected async event %s", r->what,
			     peer ? "peer" : "e0",
			     ibv_event_type_str((enum ibv_event_type)rep.val));
		return;
	}
	cr_expect_eq(rep.rc, 0, "%s: %s: no async event", r->what, peer ? "peer" : "e0");
	cr_expect_eq(rep.val, event, "%s: %s: async event %s, expected %s", r->what,
		     peer ? "peer" : "e0", ibv_event_type_str((enum ibv_event_type)rep.val),
		     ibv_event_type_str((enum ibv_event_type)event));
	cr_expect_eq(rep.wc.qp_num, qpn, "%s: event of QP %u", r->what, rep.wc.qp_num);
}

void sw_status(struct sw_run *r, const char *name)
{
	const struct status_case *c = find(name);
	enum sw_kind k = c->kind;
	struct sw_reply rep;
	struct ibv_wc wc;

	snprintf(r->what, sizeof(r->what), "%s (%s)", c->name, sw_kind_name[k]);
	r->timeout = 14;
	sw_connect(r, k, c->tune);
	/* a message first: the neighbours are resolved, the requester sends at once */
	if (c->fault == NULL)
		sw_send_once(r, k, 16);
	snprintf(r->what, sizeof(r->what), "%s (%s)", c->name, sw_kind_name[k]);
	if (c->recv_len > 0) {
		rep = sw_peer(r, (struct sw_cmd){.op = SW_RECV,
						 .kind = k,
						 .id = RECV_ID,
						 .off = SW_RECV(r),
						 .len = c->recv_len,
						 .lkey = c->recv_lkey});
		cr_assert_eq(rep.rc, 0);
	}
	if (c->prepare != NULL)
		c->prepare(r, k);
	for (uint32_t i = 0; i < 2 && !c->no_witness; i++) {
		rep = sw_peer(r, (struct sw_cmd){.op = SW_RECV,
						 .kind = k,
						 .id = WITNESS + i,
						 .off = SW_RECV(r) + 4096,
						 .len = 40 + 64});
		cr_assert_eq(rep.rc, 0);
	}
	c->provoke(r, k, 1);
	wc = sw_wait(r, false, k, false, 1);
	expect_wc(r, &wc, c->st, "the failing request");
	for (uint64_t id = 2; id <= 3; id++) {
		wc = sw_wait(r, false, k, false, id);
		expect_wc(r, &wc, c->state == IBV_QPS_ERR ? IBV_WC_WR_FLUSH_ERR : IBV_WC_SUCCESS,
			  "a request behind it");
	}
	cr_expect_eq(sw_state(r, k, false), c->state, "%s: e0's QP state %d, expected %d", r->what,
		     sw_state(r, k, false), c->state);
	expect_event(r, false, NO_EVENT, 0);
	if (c->peer_gone)
		return;
	if (c->peer_recv >= 0) {
		wc = sw_wait(r, true, k, true, RECV_ID);
		expect_wc(r, &wc, c->peer_recv, "the peer's receive");
	}
	if (c->peer_state == IBV_QPS_ERR) {
		for (uint32_t i = 0; i < 2 && !c->no_witness; i++) {
			wc = sw_wait(r, true, k, true, WITNESS + i);
			expect_wc(r, &wc, IBV_WC_WR_FLUSH_ERR, "a witness receive");
		}
	} else {
		/* nothing behind the failed request was executed */
		sw_settle(r);
		expect_nothing(r, true, k, true);
	}
	cr_expect_eq(sw_state(r, k, true), c->peer_state, "%s: the peer's QP state %d, expected %d",
		     r->what, sw_state(r, k, true), c->peer_state);
	expect_event(r, true, c->peer_event, r->i1.qpn[k]);
	/* a QP in Error flushes what is posted to it */
	if (c->state == IBV_QPS_ERR) {
		send_len(r, k, AFTER_ID, 16, 0);
		wc = sw_wait(r, false, k, false, AFTER_ID);
		expect_wc(r, &wc, IBV_WC_WR_FLUSH_ERR, "a request posted in Error");
	}
	if (c->peer_state == IBV_QPS_ERR) {
		rep = sw_peer(r, (struct sw_cmd){.op = SW_RECV, .kind = k, .id = AFTER_ID});
		cr_assert_eq(rep.rc, 0);
		wc = sw_wait(r, true, k, true, AFTER_ID);
		expect_wc(r, &wc, IBV_WC_WR_FLUSH_ERR, "a receive posted in Error");
	}
	expect_nothing(r, false, k, false);
	expect_nothing(r, true, k, true);
	if (c->fault != NULL)
		return;
	/* RESET, and both carry a message again */
	sw_connect(r, k, NULL);
	snprintf(r->what, sizeof(r->what), "%s (%s): after RESET", c->name, sw_kind_name[k]);
	sw_send_once(r, k, k == SW_UD ? 64 : r->pmtu + 1);
	sw_quiet(r, k);
}
