/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC/UC requester (IBTA 9.7.1-9.7.4 for RC, 9.8 for UC): send WQEs are copied
 * out of the ring into the QP's shadow queue and checked there, given their
 * PSNs, and segmented by the path MTU into FIRST/MIDDLE/LAST/ONLY packets.
 * The requester walks ahead of the ring's consumer index; the completer
 * releases slots as WQEs complete, in order.
 *
 * A state machine (doc/transport.md draws it): GET_WQE, CHECK_WQE, LOCAL_OP,
 * SEND_PKT, ADVANCE, and WAIT with its reason (enum rc_req_wait). It follows
 * the completer's requests (go back, RNR wait) and never calls it.
 */
#include <errno.h>
#include <string.h>

#include "rc_priv.h"

/* Send WQE operation -> wire operation; local operations have none. */
static const int8_t wr_op[DROCE_WQE_OP_COUNT] = {
	[DROCE_WQE_SEND] = DROCE_WR_SEND,
	[DROCE_WQE_SEND_IMM] = DROCE_WR_SEND_IMM,
	[DROCE_WQE_SEND_INV] = DROCE_WR_SEND_INV,
	[DROCE_WQE_WRITE] = DROCE_WR_WRITE,
	[DROCE_WQE_WRITE_IMM] = DROCE_WR_WRITE_IMM,
	[DROCE_WQE_READ] = DROCE_WR_READ,
	[DROCE_WQE_CMP_SWAP] = DROCE_WR_CMP_SWAP,
	[DROCE_WQE_FETCH_ADD] = DROCE_WR_FETCH_ADD,
	[DROCE_WQE_LOCAL_INV] = -1,
	[DROCE_WQE_BIND_MW] = -1,
};

/* Check a WQE copy: IBV_WC_SUCCESS or the status it completes with. Sets npkts. */
static enum ibv_wc_status wqe_check(const struct droce_tqp *q, struct rc_wqe *w)
{
	const struct droce_send_wqe *h = w->hdr;
	const struct droce_sge *sge = (const struct droce_sge *)(h + 1);
	uint32_t room = q->sq.slot_size - (uint32_t)sizeof(*h), pmtu = rc_pmtu(q);
	uint64_t total = 0;
	uint32_t i;

	w->npkts = 0;
	if (h->op >= DROCE_WQE_OP_COUNT)
		return IBV_WC_LOC_QP_OP_ERR;
	if (wr_op[h->op] < 0)
		return IBV_WC_SUCCESS; /* local operation: no packet */
	if (droce_wr_opcode((enum droce_wr_op)wr_op[h->op], rc_svc(q)->svc, DROCE_POS_ONLY) ==
	    DROCE_OP_NONE)
		return IBV_WC_LOC_QP_OP_ERR; /* not an operation of this service */
	if (q->path_mtu < IBV_MTU_256 || q->path_mtu > IBV_MTU_4096)
		return IBV_WC_LOC_QP_OP_ERR;
	if (h->flags & DROCE_WQE_INLINE) {
		if (h->length > room || op_is_rd_atomic(h->op))
			return IBV_WC_LOC_QP_OP_ERR;
	} else {
		if ((uint32_t)h->num_sge * sizeof(*sge) > room)
			return IBV_WC_LOC_QP_OP_ERR;
		for (i = 0; i < h->num_sge; i++)
			total += sge[i].length;
		if (total != h->length)
			return IBV_WC_LOC_LEN_ERR;
	}
	if (h->length > (1u << 31))
		return IBV_WC_LOC_LEN_ERR;
	if (h->op == DROCE_WQE_CMP_SWAP || h->op == DROCE_WQE_FETCH_ADD) {
		/* one 8-byte local buffer, an 8-byte aligned remote address */
		if (h->num_sge != 1 || h->length != 8 || (h->u.atomic.remote_addr & 7))
			return IBV_WC_LOC_QP_OP_ERR;
		w->npkts = 1;
		return IBV_WC_SUCCESS;
	}
	/* a READ takes as many PSNs as its response has packets (IBTA 9.7.1) */
	w->npkts = h->length == 0 ? 1 : (h->length + pmtu - 1) / pmtu;
	if (w->npkts > DROCE_RC_MSG_PKTS_MAX)
		return IBV_WC_LOC_LEN_ERR;
	return IBV_WC_SUCCESS;
}

/* Copy the WQEs published since the last pass into the shadow and give them PSNs. */
static int shadow_fill(struct droce_tqp *q)
{
	struct droce_rc *rc = q->rc;
	struct rc_requester *req = &rc->req;
	int avail = droce_ring_cons_avail(&q->sq);

	if (avail < 0)
		return avail;
	while (req->req_idx - rc->comp.comp_idx < (uint32_t)avail) {
		struct rc_wqe *w = rc_wqe_at(rc, req->req_idx);
		uint8_t *copy = req->copies + (size_t)(req->req_idx & req->mask) * req->slot_size;
		enum ibv_wc_status st;

		/* never trust the slot after this copy: the application may write it */
		memcpy(copy, droce_ring_cons_slot(&q->sq, req->req_idx - rc->comp.comp_idx),
		       req->slot_size);
		memset(w, 0, sizeof(*w));
		w->hdr = (const struct droce_send_wqe *)copy;
		st = wqe_check(q, w);
		if (st != IBV_WC_SUCCESS) {
			w->req_failed = true;
			w->req_status = (uint8_t)st;
			w->npkts = 0;
		}
		w->first_psn = q->sq_psn;
		q->sq_psn = rc_psn_add(q->sq_psn, w->npkts);
		req->req_idx++;
	}
	return 0;
}

/* LOCAL_INV and BIND_MW, executed in order when the requester reaches them. */
static void local_op(const struct droce_transport_env *env, struct droce_tqp *q, struct rc_wqe *w)
{
	const struct droce_send_wqe *h = w->hdr;
	int rc;

	if (h->op == DROCE_WQE_LOCAL_INV) {
		rc = droce_mr_invalidate_local(env->keys, h->imm, q->pd);
		if (rc != 0) {
			w->req_failed = true;
			w->req_status = IBV_WC_LOC_PROT_ERR;
		}
	} else {
		struct droce_mw_bind_info b = {
			.mr_lkey = h->u.bind.mr_lkey,
			.addr = h->u.bind.addr,
			.length = h->u.bind.length,
			.access = h->u.bind.access,
		};
		uint32_t rkey;

		if (h->imm == 1)
			rc = droce_mw_bind_type1(env->keys, h->u.bind.mw_handle, q->pd, &b, &rkey);
		else
			rc = droce_mw_bind_type2(env->keys, h->u.bind.mw_handle, q->pd, q->qpn,
						 h->u.bind.new_rkey, &b);
		if (rc != 0) {
			w->req_failed = true;
			w->req_status = IBV_WC_MW_BIND_ERR;
		}
	}
	w->req_done = !w->req_failed;
}

static enum droce_msg_pos pkt_pos(uint32_t k, uint32_t n)
{
	if (n == 1)
		return DROCE_POS_ONLY;
	if (k == 0)
		return DROCE_POS_FIRST;
	return k + 1 == n ? DROCE_POS_LAST : DROCE_POS_MIDDLE;
}

/* Header fields of packet @p k of @p w, and its payload length. */
static void pkt_fields(const struct droce_tqp *q, const struct rc_wqe *w, uint32_t k,
		       struct droce_hdr_fields *f, uint32_t *len)
{
	const struct droce_send_wqe *h = w->hdr;
	enum droce_msg_pos pos = pkt_pos(k, w->npkts);
	uint32_t pmtu = rc_pmtu(q), off = k * pmtu;
	bool last = pos == DROCE_POS_LAST || pos == DROCE_POS_ONLY;

	memset(f, 0, sizeof(*f));
	*len = 0;
	f->pkey = q->pkey;
	f->dqpn = q->dest_qpn;
	f->psn = rc_psn_add(w->first_psn, k);
	switch (h->op) {
	case DROCE_WQE_READ:
		/* a re-request from packet k asks for the rest only (partial READ restart) */
		f->opcode = DROCE_OP_RC_READ_REQ;
		f->reth.va = h->u.rdma.remote_addr + off;
		f->reth.rkey = h->u.rdma.rkey;
		f->reth.len = h->length - (off < h->length ? off : h->length);
		f->ackreq = true;
		return;
	case DROCE_WQE_CMP_SWAP:
	case DROCE_WQE_FETCH_ADD:
		f->opcode =
			h->op == DROCE_WQE_CMP_SWAP ? DROCE_OP_RC_CMP_SWAP : DROCE_OP_RC_FETCH_ADD;
		f->atmeth.va = h->u.atomic.remote_addr;
		f->atmeth.rkey = h->u.atomic.rkey;
		f->atmeth.swap_add =
			h->op == DROCE_WQE_CMP_SWAP ? h->u.atomic.swap : h->u.atomic.compare_add;
		f->atmeth.compare = h->u.atomic.compare_add;
		f->ackreq = true;
		return;
	default:
		break;
	}
	f->opcode = droce_wr_opcode((enum droce_wr_op)wr_op[h->op], rc_svc(q)->svc, pos);
	*len = h->length - off < pmtu ? h->length - off : pmtu;
	if (pos == DROCE_POS_FIRST || pos == DROCE_POS_ONLY) {
		f->reth.va = h->u.rdma.remote_addr;
		f->reth.rkey = h->u.rdma.rkey;
		f->reth.len = h->length;
	}
	if (last) {
		f->imm_be = h->imm;
		f->ieth_rkey = h->imm;
		f->se = (h->flags & DROCE_WQE_SOLICITED) != 0;
	}
	/* AckReq on the last packet of a message, and now and then in long ones */
	f->ackreq = rc_svc(q)->acked &&
		    (last || k % DROCE_RC_ACKREQ_EVERY == DROCE_RC_ACKREQ_EVERY - 1);
}

/*
 * Packet @p k of @p w with its payload by reference (zero copy): 0 (sent), -EAGAIN (no mbuf),
 * -EACCES (a key check failed), or -ENOTSUP: to be copied (short, inline, too many pieces).
 */
static int zc_send(const struct droce_transport_env *env, struct droce_tqp *q, struct rc_wqe *w,
		   uint32_t k, const struct droce_addr *a, const struct droce_hdr_fields *f,
		   uint32_t len)
{
	const struct droce_send_wqe *h = w->hdr;
	struct droce_zc_piece p[DROCE_ZC_PIECES_MAX];
	struct droce_rc *rc = q->rc;
	struct rte_mbuf *m;
	int n;

	if (len < env->zero_copy_min || (h->flags & DROCE_WQE_INLINE) || rc->req.zc == NULL) {
		q->stats.zc_copied++;
		return -ENOTSUP;
	}
	n = droce_zc_pieces(env, q->pd, (const struct droce_sge *)(h + 1), h->num_sge,
			    k * rc_pmtu(q), len, p, DROCE_ZC_PIECES_MAX);
	if (n == -E2BIG) {
		q->stats.zc_copied++;
		return -ENOTSUP;
	}
	if (n < 0)
		return -EACCES;
	m = droce_zc_frame(env, a, f, len, p, (unsigned int)n, rc->req.zc,
			   (uint32_t)(w - rc->req.wqe));
	if (m == NULL)
		return -EAGAIN;
	q->stats.zc_frames++;
	droce_tqp_tx(env, q, m);
	return 0;
}

/* Build and send packet cur_pkt of WQE cur: 0, -EAGAIN (try later) or -EACCES/-EIO. */
static int send_pkt(const struct droce_transport_env *env, struct droce_tqp *q, struct rc_wqe *w,
		    uint32_t k)
{
	const struct droce_send_wqe *h = w->hdr;
	struct droce_hdr_fields f;
	struct droce_addr a;
	struct rte_mbuf *m;
	uint8_t *payload;
	uint32_t len, hi;
	bool lost;
	int rc;

	rc = droce_rc_addr(env, q, &a);
	if (rc == -EAGAIN)
		return -EAGAIN;
	/* nobody answers for the peer's address: the packet goes as into a dead link, and
	 * the retransmission timer ends it (RETRY_EXC_ERR) unless the peer comes back */
	lost = rc == -EHOSTUNREACH;
	if (rc != 0 && !lost)
		return -EIO;
	pkt_fields(q, w, k, &f, &len);
	if (unlikely(lost)) {
		q->stats.neigh_drop++; /* nothing is built: it would be dropped at once */
		goto sent;
	}
	if (len > 0 && env->zero_copy_min != 0 && rc_svc(q)->zero_copy) {
		int zc = zc_send(env, q, w, k, &a, &f, len);

		if (zc != -ENOTSUP) {
			if (zc != 0)
				return zc;
			goto sent;
		}
	}
	m = droce_rc_frame(env, &a, &f, len, &payload);
	if (m == NULL)
		return -EAGAIN;
	if (len > 0) {
		uint32_t off = k * rc_pmtu(q);

		if (h->flags & DROCE_WQE_INLINE)
			memcpy(payload, (const uint8_t *)(h + 1) + off, len);
		else
			rc = droce_sge_gather(env, q->pd, (const struct droce_sge *)(h + 1),
					      h->num_sge, off, payload, len);
		if (rc != 0) {
			rte_pktmbuf_free(m);
			return -EACCES;
		}
	}
	droce_rc_frame_seal(m, &a);
	droce_tqp_tx(env, q, m);
sent:
	/* a READ request stands for every PSN of its response */
	hi = h->op == DROCE_WQE_READ ? rc_psn_add(w->first_psn, w->npkts) : rc_psn_add(f.psn, 1);
	if (rc_psn_cmp(hi, q->rc->req.sent_hi) > 0)
		q->rc->req.sent_hi = hi;
	return 0;
}

const char *const droce_rc_req_state_names[RC_REQ_STATE_COUNT] = {
	[RC_REQ_GET_WQE] = "GET_WQE",   [RC_REQ_CHECK_WQE] = "CHECK_WQE",
	[RC_REQ_LOCAL_OP] = "LOCAL_OP", [RC_REQ_SEND_PKT] = "SEND_PKT",
	[RC_REQ_ADVANCE] = "ADVANCE",   [RC_REQ_WAIT] = "WAIT",
	[RC_REQ_ERROR] = "ERROR",       [RC_REQ_DONE] = "DONE",
};

const char *const droce_rc_req_wait_names[RC_REQ_WAIT_COUNT] = {
	[RC_REQ_WAIT_NONE] = "NONE",         [RC_REQ_WAIT_BUDGET] = "BUDGET",
	[RC_REQ_WAIT_STATE] = "STATE",       [RC_REQ_WAIT_RNR] = "RNR",
	[RC_REQ_WAIT_FENCE] = "FENCE",       [RC_REQ_WAIT_RD_ATOMIC] = "RD_ATOMIC",
	[RC_REQ_WAIT_WINDOW] = "WINDOW",     [RC_REQ_WAIT_SQD] = "SQD",
	[RC_REQ_WAIT_RESOURCE] = "RESOURCE", [RC_REQ_WAIT_FAILED] = "FAILED",
};

/* One pass of the requester: what its states share. */
struct req_ctx {
	const struct droce_transport_env *env;
	struct droce_tqp *q;
	struct droce_rc *rc;
	struct rc_wqe *w; /**< the WQE at cur */
	int budget;
	int sent;
	int err;
	enum rc_req_wait wait;
};

/* The requester fails the WQE at cur; the completer completes it once it reaches the head. */
static void req_fail(struct rc_wqe *w, enum ibv_wc_status st)
{
	w->req_failed = true;
	w->req_status = (uint8_t)st;
}

/*
 * Follow the completer: a go-back-N request it made (IBTA 9.7.5.2: sequence NAK, RNR NAK,
 * timeout, implied NAK) moves cur back; WQEs it completed meanwhile are passed over.
 */
static void req_follow_completer(struct droce_rc *rc)
{
	struct rc_requester *req = &rc->req;

	if (unlikely(req->go_back_seen != rc->comp.go_back)) {
		req->go_back_seen = rc->comp.go_back;
		req->cur = rc->comp.go_back_idx;
		req->cur_pkt = rc->comp.go_back_pkt;
	}
	if (unlikely((int32_t)(req->cur - rc->comp.comp_idx) < 0)) {
		req->cur = rc->comp.comp_idx;
		req->cur_pkt = 0;
	}
}

/* GET_WQE: the WQE to send from, or why there is none. */
static enum rc_req_state req_get_wqe(struct req_ctx *c)
{
	struct droce_rc *rc = c->rc;
	struct rc_requester *req = &rc->req;

	req_follow_completer(rc);
	/* what the completer finished is never sent again (an ACK or response overtook it) */
	while (req->cur != req->req_idx && rc_wqe_done(rc_wqe_at(rc, req->cur))) {
		req->cur++;
		req->cur_pkt = 0;
	}
	if (c->q->state != IBV_QPS_RTS && c->q->state != IBV_QPS_SQD) {
		c->wait = RC_REQ_WAIT_STATE;
		return RC_REQ_WAIT;
	}
	if (c->sent >= c->budget) {
		c->wait = RC_REQ_WAIT_BUDGET;
		return RC_REQ_WAIT;
	}
	if (req->cur == req->req_idx) {
		c->wait = RC_REQ_WAIT_NONE;
		return RC_REQ_DONE;
	}
	if (rc->comp.rnr_wait) {
		c->wait = RC_REQ_WAIT_RNR;
		return RC_REQ_WAIT;
	}
	c->w = rc_wqe_at(rc, req->cur);
	return RC_REQ_CHECK_WQE;
}

/* CHECK_WQE: may the WQE at cur go now? */
static enum rc_req_state req_check_wqe(struct req_ctx *c)
{
	struct droce_tqp *q = c->q;
	struct droce_rc *rc = c->rc;
	struct rc_wqe *w = c->w;
	bool rd = op_is_rd_atomic(w->hdr->op);
	uint32_t psn;

	if (rc_wqe_failed(w)) {
		c->wait = RC_REQ_WAIT_FAILED;
		return RC_REQ_WAIT;
	}
	/* SQD (IBTA 10.3.1): finish (and retry) what was begun, start nothing new */
	if (q->state == IBV_QPS_SQD && !w->sent) {
		c->wait = RC_REQ_WAIT_SQD;
		return RC_REQ_WAIT;
	}
	/* FENCE (ibv_post_send(3)): wait for the READs and atomics before it to complete */
	if ((w->hdr->flags & DROCE_WQE_FENCE) && !w->sent && rc_rd_out(rc) > 0) {
		c->wait = RC_REQ_WAIT_FENCE;
		return RC_REQ_WAIT;
	}
	if (w->npkts == 0)
		return RC_REQ_LOCAL_OP;
	/* at most max_rd_atomic READ/atomic requests outstanding (IBTA 9.4.3, 9.4.5) */
	if (rd && !w->issued && rc_rd_out(rc) >= (q->max_rd_atomic ? q->max_rd_atomic : 1u)) {
		c->wait = RC_REQ_WAIT_RD_ATOMIC;
		return RC_REQ_WAIT;
	}
	/* a mid-message ACK covered packets: they are never resent (IBTA 9.7.5.1.1) */
	if (!rd && rc->req.cur_pkt < w->acked_pkts)
		rc->req.cur_pkt = w->acked_pkts;
	/* the send window: new PSNs wait for ACKs; resent ones (go-back-N) do not */
	psn = rd ? w->first_psn : rc_psn_add(w->first_psn, rc->req.cur_pkt);
	if (rc_svc(q)->retried && c->env->send_window != 0 &&
	    rc_psn_cmp(psn, rc->req.sent_hi) >= 0 &&
	    ((rc->req.sent_hi - rc->comp.una) & DROCE_PSN_MASK) >=
		    (c->env->send_window > DROCE_RC_WINDOW_MIN ? c->env->send_window
							       : DROCE_RC_WINDOW_MIN)) {
		q->stats.window_waits++;
		c->wait = RC_REQ_WAIT_WINDOW;
		return RC_REQ_WAIT;
	}
	return RC_REQ_SEND_PKT;
}

/* LOCAL_OP: LOCAL_INV or BIND_MW, in order, when the requester reaches it. */
static enum rc_req_state req_local_op(struct req_ctx *c)
{
	struct rc_wqe *w = c->w;

	if (!w->req_done)
		local_op(c->env, c->q, w);
	/* a failed LOCAL_INV or BIND_MW ends the requester's work: the QP goes to Error once it
	 * completes, and nothing behind it may run first (IBTA 9.9.2, local errors) */
	if (w->req_failed) {
		c->wait = RC_REQ_WAIT_FAILED;
		return RC_REQ_WAIT;
	}
	c->rc->req.cur++;
	return RC_REQ_GET_WQE;
}

/* SEND_PKT: build and send packet cur_pkt of the WQE at cur. */
static enum rc_req_state req_send_pkt(struct req_ctx *c)
{
	int err = send_pkt(c->env, c->q, c->w, c->rc->req.cur_pkt);

	if (err == -EAGAIN) {
		c->wait = RC_REQ_WAIT_RESOURCE;
		return RC_REQ_WAIT;
	}
	if (err != 0) {
		/* a local error (IBTA 9.9.2): the WQE completes with it */
		req_fail(c->w, err == -EACCES ? IBV_WC_LOC_PROT_ERR : IBV_WC_LOC_QP_OP_ERR);
		c->wait = RC_REQ_WAIT_FAILED;
		return RC_REQ_WAIT;
	}
	return RC_REQ_ADVANCE;
}

/* ADVANCE: the packet went out; the next packet, or the next WQE. */
static enum rc_req_state req_advance(struct req_ctx *c)
{
	struct rc_requester *req = &c->rc->req;
	struct rc_wqe *w = c->w;

	c->sent++;
	w->sent = true;
	if (op_is_rd_atomic(w->hdr->op)) {
		/* one request stands for the whole response (IBTA 9.7.1) */
		if (!w->issued)
			req->rd_issued++;
		w->issued = true;
		req->cur++;
		req->cur_pkt = 0;
	} else if (++req->cur_pkt == w->npkts) {
		req->cur++;
		req->cur_pkt = 0;
		/* UC: a message is done once sent (IBTA 9.8: no acknowledgement) */
		if (!rc_svc(c->q)->acked)
			w->req_done = true;
	}
	return RC_REQ_GET_WQE;
}

/* The requester's state machine, from GET_WQE (or ERROR: the ring is broken). */
static __rte_noinline int req_run(const struct droce_transport_env *env, struct droce_tqp *q,
				  int budget, int err)
{
	struct req_ctx c = {.env = env, .q = q, .rc = q->rc, .budget = budget, .err = err};
	enum rc_req_state s = err != 0 ? RC_REQ_ERROR : RC_REQ_GET_WQE;

	for (;;) {
		switch (s) {
		case RC_REQ_GET_WQE:
			s = req_get_wqe(&c);
			break;
		case RC_REQ_CHECK_WQE:
			s = req_check_wqe(&c);
			break;
		case RC_REQ_LOCAL_OP:
			s = req_local_op(&c);
			break;
		case RC_REQ_SEND_PKT:
			s = req_send_pkt(&c);
			break;
		case RC_REQ_ADVANCE:
			s = req_advance(&c);
			break;
		case RC_REQ_WAIT:
			s = RC_REQ_DONE;
			break;
		case RC_REQ_ERROR:
			/* the send ring is broken (its header rewritten): fatal (IBTA 9.9.2) */
			droce_rc_to_error(env, q, IBV_EVENT_QP_FATAL);
			return c.err;
		case RC_REQ_DONE:
		default:
			q->rc->req.wait = c.wait;
			return c.sent;
		}
	}
}

int droce_rc_req_send(const struct droce_transport_env *env, struct droce_tqp *q, int budget)
{
	struct droce_rc *rc = q->rc;
	int err = shadow_fill(q);

	/*
	 * Most passes of a polling lcore find nothing new and nothing asked back by the
	 * completer: GET_WQE would end the pass at once (cur is never behind comp_idx then).
	 */
	if (likely(err == 0 && rc->req.cur == rc->req.req_idx &&
		   rc->req.go_back_seen == rc->comp.go_back)) {
		rc->req.wait = RC_REQ_WAIT_NONE;
		return 0;
	}
	return req_run(env, q, budget, err);
}

/* SQD: no message half sent and, on RC, every PSN sent acknowledged. */
bool droce_rc_sq_drained(const struct droce_tqp *q)
{
	struct droce_rc *rc = q->rc;

	if (rc->req.cur != rc->req.req_idx && rc_wqe_at(rc, rc->req.cur)->sent)
		return false;
	return !rc_svc(q)->acked || rc->comp.una == rc->req.sent_hi;
}
