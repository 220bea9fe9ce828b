/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC/UC completer: the responses the dispatcher routes here (ACK, RNR NAK, NAK, READ
 * responses, atomic ACKs: IBTA 9.7.5.1, 9.9.2), the retransmission and RNR timers, and the
 * completions, in order, with the send ring's slots released as WQEs complete.
 *
 * A state machine (doc/transport.md draws it): a response packet enters at GET_RESPONSE, a
 * timer event at TIMEOUT; every path ends in COMPLETE, which completes the finished WQEs at
 * the head and re-arms the timer. The completer never calls the requester: it asks it to go
 * back (comp.go_back) and lets it send again (comp.rnr_wait), and the requester follows at
 * its next pass.
 */
#include <errno.h>
#include <string.h>

#include "rc_priv.h"

const char *const droce_rc_comp_state_names[RC_COMP_STATE_COUNT] = {
	[RC_COMP_GET_RESPONSE] = "GET_RESPONSE",
	[RC_COMP_CHECK_PSN] = "CHECK_PSN",
	[RC_COMP_CHECK_OPCODE] = "CHECK_OPCODE",
	[RC_COMP_CHECK_ACK] = "CHECK_ACK",
	[RC_COMP_ACK] = "ACK",
	[RC_COMP_READ] = "READ",
	[RC_COMP_ATOMIC] = "ATOMIC",
	[RC_COMP_TIMEOUT] = "TIMEOUT",
	[RC_COMP_RETRY] = "RETRY",
	[RC_COMP_RNR] = "RNR",
	[RC_COMP_ERROR] = "ERROR",
	[RC_COMP_DROP] = "DROP",
	[RC_COMP_COMPLETE] = "COMPLETE",
	[RC_COMP_DONE] = "DONE",
};

/* What the completer's states share for one response or one timer event. */
struct comp_ctx {
	const struct droce_transport_env *env;
	struct droce_tqp *q;
	struct droce_rc *rc;
	const struct droce_pkt *pkt; /**< NULL for a timer event */
	const struct droce_hdr_fields *f;
	struct rte_mbuf *m;
	struct rc_wqe *w;      /**< the WQE the response or the error is for */
	uint32_t retry_psn;    /**< RETRY: go back to this PSN */
	uint8_t syn;           /**< AETH syndrome */
	enum ibv_wc_status st; /**< ERROR: the status the WQE completes with */
};

/* The completer finished a WQE: a READ/atomic is counted back (the requester may issue more). */
static void wqe_retire(struct droce_rc *rc, struct rc_wqe *w)
{
	if (w->issued && !w->retired) {
		w->retired = true;
		rc->comp.rd_retired++;
	}
}

static void wqe_done(struct droce_rc *rc, struct rc_wqe *w)
{
	wqe_retire(rc, w);
	w->comp_done = true;
}

static void wqe_fail(struct droce_rc *rc, struct rc_wqe *w, enum ibv_wc_status st)
{
	wqe_retire(rc, w);
	w->comp_failed = true;
	w->comp_status = (uint8_t)st;
}

/*
 * Complete the finished WQEs at the head, in order; a
 * failed one moves an RC QP to Error (9.9.2), a UC QP to Send Queue Error (9.8, 10.3.1).
 */
static void comp_advance(const struct droce_transport_env *env, struct droce_tqp *q)
{
	struct droce_rc *rc = q->rc;

	while (rc->comp.comp_idx != rc->req.req_idx) {
		struct rc_wqe *w = rc_wqe_at(rc, rc->comp.comp_idx);
		const struct droce_send_wqe *h = w->hdr;
		bool failed = rc_wqe_failed(w);

		if (!rc_wqe_done(w) && !failed)
			break;
		/* zero copy: its frames may still wait in a TX backlog (a go-back-N duplicate
		 * of an ACKed packet) or in the peer's RX ring; the application may reuse or
		 * unmap the buffer once the WQE completes, so it completes once they are freed */
		if (unlikely(droce_zc_slot_busy(rc->req.zc, rc->comp.comp_idx) != 0)) {
			if (!w->zc_waited) {
				w->zc_waited = true;
				q->stats.zc_waits++;
			}
			break;
		}
		droce_ring_cons_release(&q->sq, 1);
		rc->comp.comp_idx++;
		/* the WQEs behind a failed one are flushed by the SQE or ERR send pass */
		if (failed && rc_svc(q)->send_error_state == IBV_QPS_SQE)
			droce_uc_to_sqe(env, q);
		else if (failed)
			droce_rc_to_error(env, q, 0);
		if (!failed && (h->op == DROCE_WQE_SEND || h->op == DROCE_WQE_SEND_IMM ||
				h->op == DROCE_WQE_SEND_INV))
			q->stats.rdma_sends++;
		/* unsignaled successful WQEs complete silently; errors always do */
		if (failed || (h->flags & DROCE_WQE_SIGNALED)) {
			struct droce_cqe e = {
				.wr_id = h->wr_id,
				.status = failed ? rc_wqe_status(w) : IBV_WC_SUCCESS,
				.opcode = (uint8_t)droce_wqe_wc_opcode(h->op),
				.byte_len = h->length,
				.qp_num = q->qpn,
			};

			droce_tqp_complete_send(env, q, &e);
		}
		if (failed)
			return;
	}
}

/* Oldest PSN not acknowledged: the first unfinished WQE's, or everything sent. */
static void una_update(struct droce_rc *rc)
{
	uint32_t i;

	for (i = rc->comp.comp_idx; i != rc->req.req_idx; i++) {
		struct rc_wqe *w = rc_wqe_at(rc, i);

		if (rc_wqe_done(w) || w->npkts == 0)
			continue;
		if (rc_wqe_failed(w))
			break;
		rc->comp.una = rc_psn_add(w->first_psn, w->acked_pkts);
		if (rc_psn_cmp(rc->comp.una, rc->req.sent_hi) > 0)
			rc->comp.una = rc->req.sent_hi;
		return;
	}
	rc->comp.una = rc->req.sent_hi;
}

/* The retransmission timer (IBTA 9.7.6, Local ACK Timeout) runs while PSNs are unacknowledged. */
static void timer_update(const struct droce_transport_env *env, struct droce_tqp *q)
{
	struct rc_completer *comp = &q->rc->comp;

	if (env->wheel == NULL)
		return;
	if (comp->una == q->rc->req.sent_hi || q->timeout == 0) {
		if (droce_timer_is_armed(&comp->retry_timer))
			droce_timer_cancel(env->wheel, &comp->retry_timer);
	} else if (!droce_timer_is_armed(&comp->retry_timer)) {
		droce_timer_arm(env->wheel, &comp->retry_timer,
				droce_rc_now(env) +
					droce_rc_ticks(env, droce_ack_timeout_ns(q->timeout)));
	}
}

/* Progress was made: retries start again and the timer restarts from now (IBTA 9.7.6). */
static void progress(const struct droce_transport_env *env, struct droce_tqp *q)
{
	struct rc_completer *comp = &q->rc->comp;

	comp->retry_left = q->retry_cnt;
	comp->rnr_left = q->rnr_retry;
	if (env->wheel != NULL && droce_timer_is_armed(&comp->retry_timer))
		droce_timer_cancel(env->wheel, &comp->retry_timer);
}

/*
 * Go back N (IBTA 9.7.5.2): ask the requester to send again from @p psn. The request names
 * the WQE and packet; the requester follows it at its next pass.
 */
static void go_back_request(struct droce_tqp *q, uint32_t psn)
{
	struct droce_rc *rc = q->rc;
	uint32_t i;

	for (i = rc->comp.comp_idx; i != rc->req.req_idx; i++) {
		struct rc_wqe *w = rc_wqe_at(rc, i);

		if (rc_wqe_done(w) || w->npkts == 0 ||
		    rc_psn_cmp(psn, rc_psn_add(w->first_psn, w->npkts)) >= 0)
			continue;
		rc->comp.go_back_idx = i;
		rc->comp.go_back_pkt = rc_psn_cmp(psn, w->first_psn) > 0
					       ? (psn - w->first_psn) & DROCE_PSN_MASK
					       : 0;
		/* a READ restarts from its first response packet not yet placed */
		if (w->hdr->op == DROCE_WQE_READ)
			rc->comp.go_back_pkt = w->acked_pkts;
		rc->comp.go_back++;
		q->stats.completer_retry_err++;
		return;
	}
}

/*
 * An ACK inside a long SEND or WRITE: its packets up to @p psn arrived. That is progress
 * (the retry count and the timer start again) and a later go-back resends from the
 * first packet not covered, never the whole message: a message longer than the ACK
 * timeout would otherwise be resent from its start until RETRY_EXC_ERR.
 */
static bool ack_partial(struct rc_wqe *w, uint32_t psn)
{
	uint32_t acked;

	/* READ/atomic PSNs are acknowledged by their responses only (IBTA 9.7.5.1.1) */
	if (op_is_rd_atomic(w->hdr->op) || rc_psn_cmp(psn, w->first_psn) < 0)
		return false;
	acked = ((psn - w->first_psn) & DROCE_PSN_MASK) + 1;
	if (acked <= w->acked_pkts)
		return false;
	w->acked_pkts = acked;
	return true;
}

/* One implied NAK per missing READ/atomic response (IBTA 9.7.5.1.1): go back to it. */
static enum rc_comp_state implied_nak(struct comp_ctx *c, struct rc_wqe *w)
{
	uint32_t expected = rc_psn_add(w->first_psn, w->acked_pkts);

	if (w->nak_once && w->nak_psn == expected)
		return RC_COMP_COMPLETE;
	w->nak_once = true;
	w->nak_psn = expected;
	c->q->stats.implied_nak_seq_err++;
	c->retry_psn = expected;
	return RC_COMP_RETRY;
}

/*
 * Acknowledge every WQE and packet up to @p psn (an ACK covers every PSN before its own:
 * coalesced ACKs, IBTA 9.7.5.1.1); true if anything new was acknowledged. An ACK beyond a
 * READ/atomic whose response is missing is an implied NAK: *retry is set.
 */
static bool ack_upto(struct comp_ctx *c, uint32_t psn, bool *retry)
{
	struct droce_rc *rc = c->rc;
	bool any = false;
	uint32_t i;

	*retry = false;
	for (i = rc->comp.comp_idx; i != rc->req.req_idx; i++) {
		struct rc_wqe *w = rc_wqe_at(rc, i);

		if (rc_wqe_done(w))
			continue;
		if (rc_wqe_failed(w) || w->npkts == 0)
			break;
		if (rc_psn_cmp(rc_psn_add(w->first_psn, w->npkts - 1), psn) > 0) {
			any |= ack_partial(w, psn);
			break;
		}
		if (op_is_rd_atomic(w->hdr->op)) {
			*retry = implied_nak(c, w) == RC_COMP_RETRY;
			break;
		}
		wqe_done(rc, w);
		any = true;
	}
	una_update(rc);
	return any;
}

/* ack_upto() with its consequences: progress, and the implied NAK's go-back at once. */
static void ack_upto_progress(struct comp_ctx *c, uint32_t psn)
{
	bool retry;

	if (ack_upto(c, psn, &retry))
		progress(c->env, c->q);
	if (retry)
		go_back_request(c->q, c->retry_psn);
}

/* The unfinished WQE whose PSNs hold @p psn, or NULL. */
static struct rc_wqe *wqe_of_psn(struct droce_rc *rc, uint32_t psn)
{
	uint32_t i;

	for (i = rc->comp.comp_idx; i != rc->req.req_idx; i++) {
		struct rc_wqe *w = rc_wqe_at(rc, i);

		if (rc_wqe_done(w) || w->npkts == 0)
			continue;
		if (rc_psn_cmp(psn, w->first_psn) >= 0 &&
		    rc_psn_cmp(psn, rc_psn_add(w->first_psn, w->npkts)) < 0)
			return w;
	}
	return NULL;
}

/* The first unfinished WQE (what the head waits for). */
static struct rc_wqe *wqe_head(struct droce_rc *rc)
{
	uint32_t i;

	for (i = rc->comp.comp_idx; i != rc->req.req_idx; i++) {
		struct rc_wqe *w = rc_wqe_at(rc, i);

		if (!rc_wqe_done(w))
			return w;
	}
	return NULL;
}

/* ------------------------------------------------------------------ states */

/* GET_RESPONSE: only a QP that sends takes responses (IBTA 10.3.1: RTS, SQD). */
static enum rc_comp_state comp_get_response(struct comp_ctx *c)
{
	if (c->q->state != IBV_QPS_RTS && c->q->state != IBV_QPS_SQD)
		return RC_COMP_DROP;
	return RC_COMP_CHECK_PSN;
}

/* CHECK_PSN: a response for a PSN never sent is not ours to believe (IBTA 9.7.5.1). */
static enum rc_comp_state comp_check_psn(struct comp_ctx *c)
{
	if (rc_psn_cmp(c->pkt->psn, c->rc->req.sent_hi) >= 0)
		return RC_COMP_DROP;
	return RC_COMP_CHECK_OPCODE;
}

/* CHECK_OPCODE: READ response, atomic ACK, or an AETH to judge (IBTA 9.2: opcodes). */
static enum rc_comp_state comp_check_opcode(struct comp_ctx *c)
{
	c->syn = c->f->aeth.syndrome;
	if (c->pkt->mask & DROCE_OPM_READ)
		return RC_COMP_READ;
	/* an atomic ACK that carries a NAK syndrome is judged as a NAK */
	if ((c->pkt->mask & DROCE_OPM_ATOMIC) && (c->syn & DROCE_AETH_TYPE_MASK) == DROCE_AETH_ACK)
		return RC_COMP_ATOMIC;
	return RC_COMP_CHECK_ACK;
}

static enum ibv_wc_status nak_status(uint8_t code)
{
	switch (code) {
	case DROCE_NAK_INVALID_REQ:
		return IBV_WC_REM_INV_REQ_ERR;
	case DROCE_NAK_REM_ACCESS_ERR:
		return IBV_WC_REM_ACCESS_ERR;
	case DROCE_NAK_INVALID_RD_REQ:
		return IBV_WC_REM_INV_RD_REQ_ERR;
	default:
		return IBV_WC_REM_OP_ERR;
	}
}

/* CHECK_ACK: the AETH's syndrome (IBTA 9.3.5, 9.7.5.1): ACK, RNR NAK or NAK by its code. */
static enum rc_comp_state comp_check_ack(struct comp_ctx *c)
{
	struct droce_tqp *q = c->q;
	uint32_t psn = c->pkt->psn;
	uint8_t type = c->syn & DROCE_AETH_TYPE_MASK, value = c->syn & DROCE_AETH_VALUE_MASK;

	if (type == DROCE_AETH_ACK)
		return RC_COMP_ACK;
	if (rc_psn_cmp(psn, c->rc->comp.una) < 0)
		return RC_COMP_DROP; /* a NAK for what is already acknowledged */
	/* every NAK acknowledges the PSNs before its own (IBTA 9.7.5.1) */
	ack_upto_progress(c, (psn - 1) & DROCE_PSN_MASK);
	if (type == DROCE_AETH_RNR_NAK)
		return RC_COMP_RNR;
	if (type != DROCE_AETH_NAK)
		return RC_COMP_DROP; /* the reserved syndrome type */
	if (value == DROCE_NAK_PSN_SEQ_ERR) {
		/* go back N from the PSN the responder expects (IBTA 9.7.5.2) */
		q->stats.packet_seq_err++;
		c->retry_psn = psn;
		return RC_COMP_RETRY;
	}
	/* the responder's class A or C error (IBTA 9.9.3): the WQE fails with its status */
	c->w = wqe_of_psn(c->rc, psn);
	if (c->w == NULL)
		return RC_COMP_DROP;
	switch (value) {
	case DROCE_NAK_REM_ACCESS_ERR:
		q->stats.req_remote_access_errors++;
		break;
	case DROCE_NAK_INVALID_REQ:
	case DROCE_NAK_INVALID_RD_REQ:
		q->stats.req_remote_invalid_request++;
		break;
	default:
		q->stats.req_remote_op_errors++;
		break;
	}
	c->st = nak_status(value);
	return RC_COMP_ERROR;
}

/* ACK: every PSN up to the ACK's is acknowledged (IBTA 9.7.5.1.1). */
static enum rc_comp_state comp_ack(struct comp_ctx *c)
{
	ack_upto_progress(c, c->pkt->psn);
	return RC_COMP_COMPLETE;
}

/*
 * A READ or atomic response for the WQE at the head: it acknowledges the requests before
 * it (IBTA 9.7.5.1.1); NULL when it is to be dropped (stale, or not the head's).
 */
static struct rc_wqe *response_wqe(struct comp_ctx *c, bool read)
{
	struct droce_rc *rc = c->rc;
	struct rc_wqe *w = wqe_of_psn(rc, c->pkt->psn);

	if (w == NULL || !w->issued || w->retired ||
	    (read ? w->hdr->op != DROCE_WQE_READ
		  : w->hdr->op != DROCE_WQE_CMP_SWAP && w->hdr->op != DROCE_WQE_FETCH_ADD))
		return NULL;
	ack_upto_progress(c, (w->first_psn - 1) & DROCE_PSN_MASK);
	if (wqe_head(rc) != w)
		return NULL;
	return w;
}

/* READ: a READ response packet placed in order (IBTA 9.4.3, 9.7.5.1.1). */
static enum rc_comp_state comp_read(struct comp_ctx *c)
{
	const struct droce_pkt *pkt = c->pkt;
	struct rc_wqe *w = response_wqe(c, true);
	const struct droce_send_wqe *h;
	uint32_t k, pmtu = rc_pmtu(c->q), off, want;
	bool last;

	if (w == NULL)
		return RC_COMP_DROP;
	h = w->hdr;
	k = (pkt->psn - w->first_psn) & DROCE_PSN_MASK;
	if (k < w->acked_pkts)
		return RC_COMP_DROP; /* duplicate */
	if (k > w->acked_pkts)
		return implied_nak(c, w); /* a response packet is missing */
	off = k * pmtu;
	want = h->length - off < pmtu ? h->length - off : pmtu;
	last = (pkt->mask & DROCE_OPM_LAST) != 0;
	if (pkt->payload_len != want || last != (k + 1 == w->npkts) ||
	    ((pkt->mask & DROCE_OPM_AETH) && (c->syn & DROCE_AETH_TYPE_MASK) != DROCE_AETH_ACK))
		return RC_COMP_DROP;
	if (want > 0 && droce_sge_scatter(c->env, c->q->pd, (const struct droce_sge *)(h + 1),
					  h->num_sge, off, c->m, pkt->payload_off, want) != 0) {
		c->w = w;
		c->st = IBV_WC_LOC_PROT_ERR;
		return RC_COMP_ERROR;
	}
	w->acked_pkts++;
	if (w->acked_pkts == w->npkts)
		wqe_done(c->rc, w);
	una_update(c->rc);
	progress(c->env, c->q);
	return RC_COMP_COMPLETE;
}

/* ATOMIC: the original remote value lands in the local 8-byte buffer (IBTA 9.4.5, 9.3.6). */
static enum rc_comp_state comp_atomic(struct comp_ctx *c)
{
	struct rc_wqe *w = response_wqe(c, false);
	uint64_t orig = c->f->atmack_orig; /* in host order */
	const struct droce_send_wqe *h;

	if (w == NULL)
		return RC_COMP_DROP;
	h = w->hdr;
	if (droce_sge_scatter_buf(c->env, c->q->pd, (const struct droce_sge *)(h + 1), h->num_sge,
				  &orig, 8) != 0) {
		c->w = w;
		c->st = IBV_WC_LOC_PROT_ERR;
		return RC_COMP_ERROR;
	}
	w->acked_pkts = 1;
	wqe_done(c->rc, w);
	una_update(c->rc);
	progress(c->env, c->q);
	return RC_COMP_COMPLETE;
}

/* TIMEOUT: the retransmission timer expired (IBTA 9.7.6: Local ACK Timeout, retry_cnt). */
static enum rc_comp_state comp_timeout(struct comp_ctx *c)
{
	struct droce_tqp *q = c->q;
	struct rc_completer *comp = &c->rc->comp;

	if (comp->una == c->rc->req.sent_hi)
		return RC_COMP_DONE;
	if (comp->retry_left == 0) {
		/* retries exhausted: the oldest WQE fails (IBTA 9.9.2) */
		q->stats.req_transport_retries_exceeded++;
		c->w = wqe_head(c->rc);
		c->st = IBV_WC_RETRY_EXC_ERR;
		return c->w != NULL ? RC_COMP_ERROR : RC_COMP_COMPLETE;
	}
	comp->retry_left--;
	q->stats.local_ack_timeout_err++;
	c->retry_psn = comp->una;
	/* the timer is armed again once the requester resends */
	return RC_COMP_RETRY;
}

/* RETRY: go back N (IBTA 9.7.5.2). */
static enum rc_comp_state comp_retry(struct comp_ctx *c)
{
	go_back_request(c->q, c->retry_psn);
	return c->pkt != NULL ? RC_COMP_COMPLETE : RC_COMP_DONE;
}

/* RNR: an RNR NAK (IBTA 9.7.5.2, rnr_retry): wait the timer it names, then resend. */
static enum rc_comp_state comp_rnr(struct comp_ctx *c)
{
	const struct droce_transport_env *env = c->env;
	struct droce_tqp *q = c->q;
	struct rc_completer *comp = &c->rc->comp;
	uint32_t psn = c->pkt->psn;

	c->w = wqe_of_psn(c->rc, psn);
	if (c->w == NULL)
		return RC_COMP_DROP;
	/* rnr_retry 7 retries for ever */
	if (q->rnr_retry != 7) {
		if (comp->rnr_left == 0) {
			q->stats.req_rnr_retries_exceeded++;
			c->st = IBV_WC_RNR_RETRY_EXC_ERR;
			return RC_COMP_ERROR;
		}
		comp->rnr_left--;
	}
	q->stats.rnr_nak_retry_err++;
	/*
	 * The responder answered: the path works, and this wait is rnr_retry's to count. A
	 * timeout that follows a lost resend or RNR NAK starts counting retry_cnt afresh, so a
	 * slow receiver behind a lossy link ends in RNR_RETRY_EXC_ERR (or waits for ever with
	 * rnr_retry 7), never in RETRY_EXC_ERR by the RNR NAKs' losses adding up.
	 */
	comp->retry_left = q->retry_cnt;
	go_back_request(q, psn);
	if (env->wheel == NULL)
		return RC_COMP_COMPLETE;
	comp->rnr_wait = true;
	if (droce_timer_is_armed(&comp->retry_timer))
		droce_timer_cancel(env->wheel, &comp->retry_timer);
	droce_timer_arm(env->wheel, &comp->rnr_timer,
			droce_rc_now(env) +
				droce_rc_ticks(env, (uint64_t)droce_rnr_timer_to_usec(
							    c->syn & DROCE_AETH_VALUE_MASK) *
							    1000));
	return RC_COMP_COMPLETE;
}

/* ERROR: the WQE fails with c->st; it completes with it once it is at the head (9.9.2). */
static enum rc_comp_state comp_error(struct comp_ctx *c)
{
	wqe_fail(c->rc, c->w, c->st);
	return RC_COMP_COMPLETE;
}

/* DROP: a response that is stale, duplicate or malformed (IBTA 9.7.5.1: ignored). */
static enum rc_comp_state comp_drop(struct comp_ctx *c)
{
	c->q->stats.rcvd_resp_drop++;
	return RC_COMP_COMPLETE;
}

/* COMPLETE: the finished WQEs at the head complete; the retransmission timer follows. */
static enum rc_comp_state comp_complete(struct comp_ctx *c)
{
	if (c->q->state == IBV_QPS_ERR)
		return RC_COMP_DONE;
	comp_advance(c->env, c->q);
	if (c->q->state != IBV_QPS_ERR)
		timer_update(c->env, c->q);
	return RC_COMP_DONE;
}

static void comp_run(struct comp_ctx *c, enum rc_comp_state s)
{
	for (;;) {
		switch (s) {
		case RC_COMP_GET_RESPONSE:
			s = comp_get_response(c);
			break;
		case RC_COMP_CHECK_PSN:
			s = comp_check_psn(c);
			break;
		case RC_COMP_CHECK_OPCODE:
			s = comp_check_opcode(c);
			break;
		case RC_COMP_CHECK_ACK:
			s = comp_check_ack(c);
			break;
		case RC_COMP_ACK:
			s = comp_ack(c);
			break;
		case RC_COMP_READ:
			s = comp_read(c);
			break;
		case RC_COMP_ATOMIC:
			s = comp_atomic(c);
			break;
		case RC_COMP_TIMEOUT:
			s = comp_timeout(c);
			break;
		case RC_COMP_RETRY:
			s = comp_retry(c);
			break;
		case RC_COMP_RNR:
			s = comp_rnr(c);
			break;
		case RC_COMP_ERROR:
			s = comp_error(c);
			break;
		case RC_COMP_DROP:
			s = comp_drop(c);
			break;
		case RC_COMP_COMPLETE:
			s = comp_complete(c);
			break;
		case RC_COMP_DONE:
		default:
			return;
		}
	}
}

void droce_rc_comp_timer_events_run(const struct droce_transport_env *env, struct droce_tqp *q)
{
	struct rc_completer *comp = &q->rc->comp;
	uint8_t ev = comp->events;

	comp->events = 0;
	if (q->state != IBV_QPS_RTS && q->state != IBV_QPS_SQD)
		return;
	/* the RNR wait is over: the requester sends again on its next pass */
	if (ev & RC_COMP_EV_RNR)
		comp->rnr_wait = false;
	if (ev & RC_COMP_EV_TIMEOUT) {
		struct comp_ctx c = {.env = env, .q = q, .rc = q->rc};

		comp_run(&c, RC_COMP_TIMEOUT);
	}
}

int droce_rc_comp_recv(const struct droce_transport_env *env, struct droce_tqp *q,
		       struct rte_mbuf *m, const struct droce_pkt *pkt,
		       const struct droce_hdr_fields *f)
{
	struct comp_ctx c = {.env = env, .q = q, .rc = q->rc, .pkt = pkt, .f = f, .m = m};

	/* a timer that fired before this response is judged before it, as it happened */
	droce_rc_comp_timer_events(env, q);
	comp_run(&c, RC_COMP_GET_RESPONSE);
	rte_pktmbuf_free(m);
	return 0;
}

void droce_rc_comp_run_step(const struct droce_transport_env *env, struct droce_tqp *q)
{
	comp_advance(env, q);
	if (rc_svc(q)->retried && (q->state == IBV_QPS_RTS || q->state == IBV_QPS_SQD))
		timer_update(env, q);
}

void droce_rc_timer_fired(struct droce_tqp *q, uint32_t id)
{
	q->rc->comp.events |= id == DROCE_RC_TIMER_RNR ? RC_COMP_EV_RNR : RC_COMP_EV_TIMEOUT;
}
