/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC completer (IBTA 9.7.5.1, 9.9): acknowledgements, READ responses and
 * atomic acknowledgements coming back to the requester; NAKs; the
 * retransmission and RNR timers; completions, in order, with the ring slots
 * released as WQEs complete.
 */
#include <errno.h>
#include <string.h>

#include "droce_wire_mbuf.h"
#include "rc_priv.h"

static bool op_is_rd_atomic(uint8_t op)
{
	return op == DROCE_WQE_READ || op == DROCE_WQE_CMP_SWAP || op == DROCE_WQE_FETCH_ADD;
}

static void wqe_done(struct droce_rc *rc, struct rc_wqe *w)
{
	if (w->issued) {
		rc->rd_out--;
		w->issued = false;
	}
	w->done = true;
}

static void wqe_fail(struct droce_rc *rc, struct rc_wqe *w, enum ibv_wc_status st)
{
	if (w->issued) {
		rc->rd_out--;
		w->issued = false;
	}
	w->failed = true;
	w->status = (uint8_t)st;
}

/* Complete the finished WQEs at the head, in order; a failed one moves the QP to ERR. */
void droce_rc_comp_advance(const struct droce_transport_env *env, struct droce_tqp *q)
{
	struct droce_rc *rc = q->rc;

	while (rc->comp_idx != rc->req_idx) {
		struct rc_wqe *w = rc_wqe_at(rc, rc->comp_idx);
		const struct droce_send_wqe *h = w->hdr;
		bool failed = w->failed;

		if (!w->done && !failed)
			break;
		/* zero copy: its frames may still wait in a TX backlog (a go-back-N duplicate
		 * of an ACKed packet) or in the peer's RX ring; the application may reuse or
		 * unmap the buffer once the WQE completes, so it completes once they are freed */
		if (unlikely(droce_zc_slot_busy(rc->zc, rc->comp_idx) != 0)) {
			if (!w->zc_waited) {
				w->zc_waited = true;
				q->stats.zc_waits++;
			}
			break;
		}
		droce_ring_cons_release(&q->sq, 1);
		rc->comp_idx++;
		if ((int32_t)(rc->cur - rc->comp_idx) < 0) {
			rc->cur = rc->comp_idx;
			rc->cur_pkt = 0;
		}
		/* a completion error moves an RC QP to Error, a UC QP to Send Queue Error,
		 * before it is seen; the WQEs behind it are flushed */
		if (failed && q->type == IBV_QPT_UC)
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
				.status = failed ? w->status : IBV_WC_SUCCESS,
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

	for (i = rc->comp_idx; i != rc->req_idx; i++) {
		struct rc_wqe *w = rc_wqe_at(rc, i);

		if (w->done || w->npkts == 0)
			continue;
		if (w->failed)
			break;
		rc->una = rc_psn_add(w->first_psn, w->acked_pkts);
		if (rc_psn_cmp(rc->una, rc->sent_hi) > 0)
			rc->una = rc->sent_hi;
		return;
	}
	rc->una = rc->sent_hi;
}

void droce_rc_timer_update(const struct droce_transport_env *env, struct droce_tqp *q)
{
	struct droce_rc *rc = q->rc;

	if (env->wheel == NULL)
		return;
	if (rc->una == rc->sent_hi || q->timeout == 0) {
		if (droce_timer_is_armed(&rc->retry_timer))
			droce_timer_cancel(env->wheel, &rc->retry_timer);
	} else if (!droce_timer_is_armed(&rc->retry_timer)) {
		droce_timer_arm(env->wheel, &rc->retry_timer,
				droce_rc_now(env) +
					droce_rc_ticks(env, droce_ack_timeout_ns(q->timeout)));
	}
}

/* Progress was made: retries start again and the timer restarts from now. */
static void progress(const struct droce_transport_env *env, struct droce_tqp *q)
{
	struct droce_rc *rc = q->rc;

	rc->retry_left = q->retry_cnt;
	rc->rnr_left = q->rnr_retry;
	if (env->wheel != NULL && droce_timer_is_armed(&rc->retry_timer))
		droce_timer_cancel(env->wheel, &rc->retry_timer);
}

/* One implied NAK per missing READ/atomic response: re-request from it. */
static void implied_nak(struct droce_tqp *q, struct rc_wqe *w)
{
	uint32_t expected = rc_psn_add(w->first_psn, w->acked_pkts);

	if (w->nak_once && w->nak_psn == expected)
		return;
	w->nak_once = true;
	w->nak_psn = expected;
	q->stats.implied_nak_seq_err++;
	droce_rc_go_back(q, expected);
}

/*
 * An ACK inside a long SEND or WRITE: its packets up to @p psn arrived. That is progress
 * (the retry count and the timer start again) and a later go-back resends from the
 * first packet not covered, never the whole message: a message longer than the ACK
 * timeout would otherwise be resent from its start until RETRY_EXC_ERR.
 */
static bool ack_partial(struct droce_rc *rc, uint32_t idx, struct rc_wqe *w, uint32_t psn)
{
	uint32_t acked;

	/* READ/atomic PSNs are acknowledged by their responses only */
	if (op_is_rd_atomic(w->hdr->op) || rc_psn_cmp(psn, w->first_psn) < 0)
		return false;
	acked = ((psn - w->first_psn) & DROCE_PSN_MASK) + 1;
	if (acked <= w->acked_pkts)
		return false;
	w->acked_pkts = acked;
	/* the requester never resends what is acknowledged */
	if (rc->cur == idx && rc->cur_pkt < acked)
		rc->cur_pkt = acked;
	return true;
}

/* Acknowledge every WQE and packet up to @p psn; true if anything new was acknowledged. */
static bool ack_upto(struct droce_tqp *q, uint32_t psn)
{
	struct droce_rc *rc = q->rc;
	bool any = false;
	uint32_t i;

	for (i = rc->comp_idx; i != rc->req_idx; i++) {
		struct rc_wqe *w = rc_wqe_at(rc, i);

		if (w->done)
			continue;
		if (w->failed || w->npkts == 0)
			break;
		if (rc_psn_cmp(rc_psn_add(w->first_psn, w->npkts - 1), psn) > 0) {
			any |= ack_partial(rc, i, w, psn);
			break;
		}
		/* an ACK beyond a READ/atomic without its response: the response was lost */
		if (op_is_rd_atomic(w->hdr->op)) {
			implied_nak(q, w);
			break;
		}
		wqe_done(rc, w);
		any = true;
		if ((int32_t)(rc->cur - (i + 1)) < 0) {
			rc->cur = i + 1;
			rc->cur_pkt = 0;
		}
	}
	una_update(rc);
	return any;
}

/* The unfinished WQE whose PSNs hold @p psn, or NULL. */
static struct rc_wqe *wqe_of_psn(struct droce_rc *rc, uint32_t psn)
{
	uint32_t i;

	for (i = rc->comp_idx; i != rc->req_idx; i++) {
		struct rc_wqe *w = rc_wqe_at(rc, i);

		if (w->done || w->npkts == 0)
			continue;
		if (rc_psn_cmp(psn, w->first_psn) >= 0 &&
		    rc_psn_cmp(psn, rc_psn_add(w->first_psn, w->npkts)) < 0)
			return w;
	}
	return NULL;
}

/* The first unfinished WQE with packets (what the head waits for). */
static struct rc_wqe *wqe_head(struct droce_rc *rc)
{
	uint32_t i;

	for (i = rc->comp_idx; i != rc->req_idx; i++) {
		struct rc_wqe *w = rc_wqe_at(rc, i);

		if (!w->done)
			return w;
	}
	return NULL;
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

static void rnr_nak(const struct droce_transport_env *env, struct droce_tqp *q, uint32_t psn,
		    uint8_t code)
{
	struct droce_rc *rc = q->rc;
	struct rc_wqe *w = wqe_of_psn(rc, psn);

	if (w == NULL) {
		q->stats.rcvd_resp_drop++;
		return;
	}
	/* rnr_retry 7 retries for ever */
	if (q->rnr_retry != 7) {
		if (rc->rnr_left == 0) {
			q->stats.req_rnr_retries_exceeded++;
			wqe_fail(rc, w, IBV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		rc->rnr_left--;
	}
	q->stats.rnr_nak_retry_err++;
	/*
	 * The responder answered: the path works, and this wait is rnr_retry's to count. A
	 * timeout that follows a lost resend or RNR NAK starts counting retry_cnt afresh, so a
	 * slow receiver behind a lossy link ends in RNR_RETRY_EXC_ERR (or waits for ever with
	 * rnr_retry 7), never in RETRY_EXC_ERR by the RNR NAKs' losses adding up.
	 */
	rc->retry_left = q->retry_cnt;
	droce_rc_go_back(q, psn);
	rc->rnr_wait = true;
	if (env->wheel == NULL) {
		rc->rnr_wait = false;
		return;
	}
	if (droce_timer_is_armed(&rc->retry_timer))
		droce_timer_cancel(env->wheel, &rc->retry_timer);
	droce_timer_arm(
		env->wheel, &rc->rnr_timer,
		droce_rc_now(env) +
			droce_rc_ticks(env, (uint64_t)droce_rnr_timer_to_usec(code) * 1000));
}

/* AETH of an ACK, RNR NAK or NAK for @p psn. */
static void aeth(const struct droce_transport_env *env, struct droce_tqp *q, uint32_t psn,
		 uint8_t syn)
{
	struct droce_rc *rc = q->rc;
	uint8_t type = syn & DROCE_AETH_TYPE_MASK, value = syn & DROCE_AETH_VALUE_MASK;
	uint32_t before = (psn - 1) & DROCE_PSN_MASK;
	struct rc_wqe *w;

	if (type == DROCE_AETH_ACK) {
		if (ack_upto(q, psn))
			progress(env, q);
		return;
	}
	if (rc_psn_cmp(psn, rc->una) < 0) {
		q->stats.rcvd_resp_drop++; /* a NAK for what is already acknowledged */
		return;
	}
	/* every NAK acknowledges the PSNs before its own */
	if (ack_upto(q, before))
		progress(env, q);
	if (type == DROCE_AETH_RNR_NAK) {
		rnr_nak(env, q, psn, value);
		return;
	}
	if (type != DROCE_AETH_NAK) {
		q->stats.rcvd_resp_drop++;
		return;
	}
	if (value == DROCE_NAK_PSN_SEQ_ERR) {
		/* go back N from the PSN the responder expects */
		q->stats.packet_seq_err++;
		droce_rc_go_back(q, psn);
		return;
	}
	w = wqe_of_psn(rc, psn);
	if (w == NULL) {
		q->stats.rcvd_resp_drop++;
		return;
	}
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
	wqe_fail(rc, w, nak_status(value));
}

static void read_resp(const struct droce_transport_env *env, struct droce_tqp *q,
		      struct rte_mbuf *m, const struct droce_pkt *pkt, uint8_t syn)
{
	struct droce_rc *rc = q->rc;
	struct rc_wqe *w = wqe_of_psn(rc, pkt->psn);
	const struct droce_send_wqe *h;
	uint32_t k, pmtu = rc_pmtu(q), off, want;
	bool last;

	if (w == NULL || w->hdr->op != DROCE_WQE_READ || !w->issued) {
		q->stats.rcvd_resp_drop++;
		return;
	}
	/* a READ response acknowledges the requests before the READ */
	if (ack_upto(q, (w->first_psn - 1) & DROCE_PSN_MASK))
		progress(env, q);
	if (wqe_head(rc) != w) {
		q->stats.rcvd_resp_drop++;
		return;
	}
	h = w->hdr;
	k = (pkt->psn - w->first_psn) & DROCE_PSN_MASK;
	if (k < w->acked_pkts) {
		q->stats.rcvd_resp_drop++; /* duplicate */
		return;
	}
	if (k > w->acked_pkts) {
		implied_nak(q, w); /* a response packet is missing */
		return;
	}
	off = k * pmtu;
	want = h->length - off < pmtu ? h->length - off : pmtu;
	last = (pkt->mask & DROCE_OPM_LAST) != 0;
	if (pkt->payload_len != want || last != (k + 1 == w->npkts) ||
	    ((pkt->mask & DROCE_OPM_AETH) && (syn & DROCE_AETH_TYPE_MASK) != DROCE_AETH_ACK)) {
		q->stats.rcvd_resp_drop++;
		return;
	}
	if (want > 0 && droce_sge_scatter(env, q->pd, (const struct droce_sge *)(h + 1), h->num_sge,
					  off, m, pkt->payload_off, want) != 0) {
		wqe_fail(rc, w, IBV_WC_LOC_PROT_ERR);
		return;
	}
	w->acked_pkts++;
	if (w->acked_pkts == w->npkts)
		wqe_done(rc, w);
	una_update(rc);
	progress(env, q);
}

static void atomic_ack(const struct droce_transport_env *env, struct droce_tqp *q,
		       const struct droce_hdr_fields *f)
{
	struct droce_rc *rc = q->rc;
	struct rc_wqe *w = wqe_of_psn(rc, f->psn);
	const struct droce_send_wqe *h;
	uint64_t orig = f->atmack_orig;

	if (w == NULL || !w->issued ||
	    (w->hdr->op != DROCE_WQE_CMP_SWAP && w->hdr->op != DROCE_WQE_FETCH_ADD)) {
		q->stats.rcvd_resp_drop++;
		return;
	}
	if (ack_upto(q, (f->psn - 1) & DROCE_PSN_MASK))
		progress(env, q);
	if (wqe_head(rc) != w) {
		q->stats.rcvd_resp_drop++;
		return;
	}
	h = w->hdr;
	/* the original remote value lands in the local 8-byte buffer, in host order */
	if (droce_sge_scatter_buf(env, q->pd, (const struct droce_sge *)(h + 1), h->num_sge, &orig,
				  8) != 0) {
		wqe_fail(rc, w, IBV_WC_LOC_PROT_ERR);
		return;
	}
	w->acked_pkts = 1;
	wqe_done(rc, w);
	una_update(rc);
	progress(env, q);
}

int droce_rc_comp_recv(const struct droce_transport_env *env, struct droce_tqp *q,
		       struct rte_mbuf *m, const struct droce_pkt *pkt)
{
	struct droce_rc *rc = q->rc;
	struct droce_hdr_fields f;

	droce_pkt_fields_mbuf(pkt, m, &f);
	/* a response for a PSN never sent is not ours to believe */
	if (q->state != IBV_QPS_RTS && q->state != IBV_QPS_SQD) {
		q->stats.rcvd_resp_drop++;
	} else if (rc_psn_cmp(pkt->psn, rc->sent_hi) >= 0) {
		q->stats.rcvd_resp_drop++;
	} else if (pkt->mask & DROCE_OPM_READ) {
		read_resp(env, q, m, pkt, f.aeth.syndrome);
	} else if (pkt->mask & DROCE_OPM_ATOMIC) {
		if ((f.aeth.syndrome & DROCE_AETH_TYPE_MASK) == DROCE_AETH_ACK)
			atomic_ack(env, q, &f);
		else
			aeth(env, q, pkt->psn, f.aeth.syndrome);
	} else {
		aeth(env, q, pkt->psn, f.aeth.syndrome);
	}
	rte_pktmbuf_free(m);
	if (q->state == IBV_QPS_ERR)
		return 0;
	droce_rc_comp_advance(env, q);
	if (q->state != IBV_QPS_ERR)
		droce_rc_timer_update(env, q);
	return 0;
}

void droce_rc_timer_fired(struct droce_tqp *q, uint32_t id)
{
	struct droce_rc *rc = q->rc;
	const struct droce_transport_env *env = rc->env;
	struct rc_wqe *w;

	if (q->state != IBV_QPS_RTS && q->state != IBV_QPS_SQD)
		return;
	if (id == DROCE_RC_TIMER_RNR) {
		rc->rnr_wait = false; /* the requester sends again on its next pass */
		return;
	}
	if (rc->una == rc->sent_hi)
		return;
	if (rc->retry_left == 0) {
		/* retries exhausted: the oldest WQE fails */
		q->stats.req_transport_retries_exceeded++;
		w = wqe_head(rc);
		if (w != NULL)
			wqe_fail(rc, w, IBV_WC_RETRY_EXC_ERR);
		droce_rc_comp_advance(env, q);
		return;
	}
	rc->retry_left--;
	q->stats.local_ack_timeout_err++;
	droce_rc_go_back(q, rc->una);
	/* the requester arms the timer again when it resends */
}
