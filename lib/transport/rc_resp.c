/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC/UC responder (IBTA 9.7.5.2, 9.7.6 for RC; 9.8 for UC): the PSN and
 * opcode-sequence checks, SEND into receive WQEs, RDMA WRITE, READ and atomics
 * through the responder resources, ACK coalescing, NAKs. UC sends no
 * acknowledgement and drops what it cannot take.
 */
#include <errno.h>
#include <string.h>

#include "droce_wire_mbuf.h"
#include "rc_priv.h"

static uint32_t res_count(const struct droce_tqp *q)
{
	uint32_t n = q->max_dest_rd_atomic;

	return n == 0 ? 1 : n > DROCE_RC_RES_MAX ? DROCE_RC_RES_MAX : n;
}

static uint32_t rwqe_sges(const struct droce_tqp *q)
{
	const struct droce_ring_cons *ring = q->srq != NULL ? q->srq : &q->rq;

	return (ring->slot_size - (uint32_t)sizeof(struct droce_recv_wqe)) /
	       (uint32_t)sizeof(struct droce_sge);
}

static const struct droce_sge *rwqe_sge(const struct droce_rc *rc)
{
	return (const struct droce_sge *)(rc->rwqe.bytes + sizeof(struct droce_recv_wqe));
}

/* Take the next receive WQE (RQ or SRQ) for the message; false when none is posted. */
static bool take_recv(const struct droce_transport_env *env, struct droce_tqp *q)
{
	struct droce_rc *rc = q->rc;
	struct droce_ring_cons *ring = q->srq != NULL ? q->srq : &q->rq;
	int avail;

	if (rc->have_rwqe)
		return true;
	droce_shared_lock_take(q->srq_lock);
	avail = droce_ring_cons_avail(ring);
	if (avail <= 0) {
		droce_shared_lock_give(q->srq_lock);
		return false;
	}
	memcpy(rc->rwqe.bytes, droce_ring_cons_slot(ring, 0), ring->slot_size);
	droce_ring_cons_release(ring, 1);
	droce_shared_lock_give(q->srq_lock);
	if (q->srq != NULL && env->srq_limit != NULL)
		env->srq_limit(env->arg, q->srq_user, (uint32_t)avail - 1);
	rc->have_rwqe = true;
	return true;
}

static void recv_complete(const struct droce_transport_env *env, struct droce_tqp *q,
			  enum ibv_wc_status st, enum ibv_wc_opcode op, uint32_t len,
			  uint16_t flags, uint32_t imm, bool se)
{
	struct droce_rc *rc = q->rc;
	struct droce_cqe e = {
		.wr_id = rc->rwqe.hdr.wr_id,
		.status = (uint8_t)st,
		.opcode = (uint8_t)op,
		.byte_len = len,
		.imm = imm,
		.qp_num = q->qpn,
		.src_qp = q->dest_qpn,
		.wc_flags = flags,
	};

	rc->have_rwqe = false;
	droce_tqp_complete_recv(env, q, &e, se);
}

/* A responder error by its NAK code (sent on RC; on UC the QP has none to send). */
static void count_nak(struct droce_tqp *q, uint8_t code)
{
	switch (code) {
	case DROCE_NAK_REM_ACCESS_ERR:
		q->stats.resp_remote_access_errors++;
		break;
	case DROCE_NAK_INVALID_REQ:
		q->stats.resp_invalid_request++;
		break;
	default:
		q->stats.resp_remote_op_errors++;
		break;
	}
}

/*
 * UC has no NAK: a request the responder cannot take (a bad rkey or access, a length that
 * does not fit) loses its message only, the QP stays in RTS (IBTA's responder error class D,
 * Linux rxe alike); the packets left of the message are dropped as out of sequence, and a
 * receive WQE taken for it serves the next message.
 */
static int uc_drop_msg(struct droce_tqp *q, uint32_t psn)
{
	q->stats.uc_msg_drop++;
	q->rc->in_msg = false;
	q->rq_psn = rc_psn_add(psn, 1);
	return -EPROTO;
}

/* A receive WQE that cannot be used (its SGEs or keys are bad): the QP to Error, any type;
 * RC NAKs @p code first. */
static int resp_wqe_fatal(const struct droce_transport_env *env, struct droce_tqp *q, uint8_t code,
			  uint32_t psn, enum ibv_event_type ev)
{
	count_nak(q, code);
	if (q->type == IBV_QPT_RC)
		droce_rc_send_ack(env, q, droce_aeth_syndrome_make(DROCE_AETH_NAK, code), psn);
	droce_rc_to_error(env, q, ev);
	return -EIO;
}

/* A request the responder cannot take: as above on RC; on UC the message dropped only. */
static int resp_fatal(const struct droce_transport_env *env, struct droce_tqp *q, uint8_t code,
		      uint32_t psn, enum ibv_event_type ev)
{
	if (q->type == IBV_QPT_UC)
		return uc_drop_msg(q, psn);
	return resp_wqe_fatal(env, q, code, psn, ev);
}

/*
 * A receive error: the QP to Error (and NAK), then the receive WQE completes with @p st. On UC
 * a message longer than the receive buffers is dropped instead and the WQE kept (class D).
 */
static int recv_fail(const struct droce_transport_env *env, struct droce_tqp *q,
		     enum ibv_wc_status st, uint8_t code, uint32_t psn, enum ibv_event_type ev)
{
	struct droce_rc *rc = q->rc;
	struct droce_cqe e = {
		.wr_id = rc->rwqe.hdr.wr_id,
		.status = (uint8_t)st,
		.opcode = IBV_WC_RECV,
		.byte_len = rc->msg_off,
		.qp_num = q->qpn,
	};

	if (q->type == IBV_QPT_UC && st == IBV_WC_LOC_LEN_ERR)
		return uc_drop_msg(q, psn);
	rc->have_rwqe = false; /* completed here, not flushed */
	resp_wqe_fatal(env, q, code, psn, ev);
	droce_tqp_complete_recv(env, q, &e, false);
	return -EIO;
}

/* No receive WQE: RNR NAK (RC) or drop the message (UC). */
static int no_wqe(const struct droce_transport_env *env, struct droce_tqp *q, uint32_t psn)
{
	struct droce_rc *rc = q->rc;

	if (q->type == IBV_QPT_RC) {
		q->stats.send_rnr_err++;
		droce_rc_send_ack(env, q,
				  droce_aeth_syndrome_make(DROCE_AETH_RNR_NAK, q->min_rnr_timer),
				  psn);
		return -ENOBUFS;
	}
	q->stats.out_of_buffer++;
	rc->in_msg = false;
	q->rq_psn = rc_psn_add(psn, 1);
	return -ENOBUFS;
}

static int do_send(const struct droce_transport_env *env, struct droce_tqp *q, struct rte_mbuf *m,
		   const struct droce_pkt *pkt, const struct droce_hdr_fields *f)
{
	struct droce_rc *rc = q->rc;
	uint64_t total = 0;
	uint16_t flags = 0;
	uint32_t i, imm = 0;

	if (pkt->mask & DROCE_OPM_FIRST) {
		if (!take_recv(env, q))
			return no_wqe(env, q, pkt->psn);
		rc->msg_off = 0;
		rc->msg_op = DROCE_OPM_SEND;
	}
	if (rc->rwqe.hdr.num_sge > rwqe_sges(q))
		return recv_fail(env, q, IBV_WC_LOC_QP_OP_ERR, DROCE_NAK_REM_OP_ERR, pkt->psn,
				 IBV_EVENT_QP_FATAL);
	for (i = 0; i < rc->rwqe.hdr.num_sge; i++)
		total += rwqe_sge(rc)[i].length;
	/* a message longer than the receive buffers: NAK invalid request */
	if (rc->msg_off + (uint64_t)pkt->payload_len > total) {
		q->stats.resp_local_length_error++;
		return recv_fail(env, q, IBV_WC_LOC_LEN_ERR, DROCE_NAK_INVALID_REQ, pkt->psn,
				 IBV_EVENT_QP_REQ_ERR);
	}
	if (pkt->payload_len > 0 &&
	    droce_sge_scatter(env, q->pd, rwqe_sge(rc), rc->rwqe.hdr.num_sge, rc->msg_off, m,
			      pkt->payload_off, pkt->payload_len) != 0)
		return recv_fail(env, q, IBV_WC_LOC_PROT_ERR, DROCE_NAK_REM_OP_ERR, pkt->psn,
				 IBV_EVENT_QP_FATAL);
	rc->msg_off += pkt->payload_len;
	q->rq_psn = rc_psn_add(pkt->psn, 1);
	if (!(pkt->mask & DROCE_OPM_LAST)) {
		rc->in_msg = true;
		return 0;
	}
	rc->in_msg = false;
	if (pkt->mask & DROCE_OPM_IMMDT) {
		flags |= IBV_WC_WITH_IMM;
		imm = f->imm_be;
	}
	if (pkt->mask & DROCE_OPM_IETH) {
		if (droce_mr_invalidate_remote(env->keys, f->ieth_rkey, q->pd, q->qpn) != 0)
			return recv_fail(env, q, IBV_WC_LOC_PROT_ERR, DROCE_NAK_INVALID_REQ,
					 pkt->psn, IBV_EVENT_QP_REQ_ERR);
		flags |= IBV_WC_WITH_INV;
		imm = f->ieth_rkey;
	}
	rc->msn = rc_psn_add(rc->msn, 1);
	recv_complete(env, q, IBV_WC_SUCCESS, IBV_WC_RECV, rc->msg_off, flags, imm, f->se);
	return 0;
}

static int do_write(const struct droce_transport_env *env, struct droce_tqp *q, struct rte_mbuf *m,
		    const struct droce_pkt *pkt, const struct droce_hdr_fields *f)
{
	struct droce_rc *rc = q->rc;
	uint32_t len = pkt->payload_len;

	if (pkt->mask & DROCE_OPM_FIRST) {
		void *host = NULL;

		/* the whole range is checked at the FIRST packet: nothing lands of a refused WRITE
		 */
		q->stats.rx_write_requests++;
		if (!(q->access & IBV_ACCESS_REMOTE_WRITE) ||
		    (f->reth.len > 0 &&
		     droce_mr_check_remote(env->keys, f->reth.rkey, q->pd, q->qpn, f->reth.va,
					   f->reth.len, DROCE_ACCESS_REMOTE_WRITE,
					   &host) != DROCE_MR_OK))
			return resp_fatal(env, q, DROCE_NAK_REM_ACCESS_ERR, pkt->psn,
					  IBV_EVENT_QP_ACCESS_ERR);
		rc->wr_va = f->reth.va;
		rc->wr_rkey = f->reth.rkey;
		rc->wr_len = f->reth.len;
		rc->msg_off = 0;
		rc->msg_op = DROCE_OPM_WRITE;
	}
	if (rc->msg_off + (uint64_t)len > rc->wr_len ||
	    ((pkt->mask & DROCE_OPM_LAST) && rc->msg_off + len != rc->wr_len))
		return resp_fatal(env, q, DROCE_NAK_INVALID_REQ, pkt->psn, IBV_EVENT_QP_REQ_ERR);
	/* WRITE with immediate consumes a receive WQE at its last packet (IBTA 9.4.2) */
	if ((pkt->mask & DROCE_OPM_IMMDT) && !take_recv(env, q))
		return no_wqe(env, q, pkt->psn);
	if (len > 0) {
		void *host = NULL;
		const void *src;

		/* and each packet's part again: the key may have gone since the last packet */
		if (droce_mr_check_remote(env->keys, rc->wr_rkey, q->pd, q->qpn,
					  rc->wr_va + rc->msg_off, len, DROCE_ACCESS_REMOTE_WRITE,
					  &host) != DROCE_MR_OK)
			return resp_fatal(env, q, DROCE_NAK_REM_ACCESS_ERR, pkt->psn,
					  IBV_EVENT_QP_ACCESS_ERR);
		src = rte_pktmbuf_read(m, pkt->payload_off, len, host);
		if (src != NULL && src != host)
			memcpy(host, src, len);
	}
	rc->msg_off += len;
	q->rq_psn = rc_psn_add(pkt->psn, 1);
	if (!(pkt->mask & DROCE_OPM_LAST)) {
		rc->in_msg = true;
		return 0;
	}
	rc->in_msg = false;
	rc->msn = rc_psn_add(rc->msn, 1);
	if (pkt->mask & DROCE_OPM_IMMDT)
		recv_complete(env, q, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, rc->wr_len,
			      IBV_WC_WITH_IMM, f->imm_be, f->se);
	return 0;
}

static struct rc_res *res_take(struct droce_tqp *q)
{
	struct droce_rc *rc = q->rc;
	struct rc_res *r = &rc->res[rc->res_next];

	rc->res_next = (rc->res_next + 1) % res_count(q);
	memset(r, 0, sizeof(*r));
	return r;
}

/*
 * Whether the next responder resource may take a new READ or atomic: free, or holding the
 * replay of a duplicate. A requester never has more than max_rd_atomic of them outstanding,
 * so one that issues a request needing that resource has completed the request the replay
 * answers: its replay is no longer waited for, and it
 * is given up (a duplicate that arrived late, or a response and the timeout that resent its
 * request crossing). A resource still sending its first response is in use: the requester
 * went past the limit.
 */
static bool res_free(const struct droce_rc *rc)
{
	const struct rc_res *r = &rc->res[rc->res_next];

	return !r->pending || r->replay;
}

static int do_read(const struct droce_transport_env *env, struct droce_tqp *q,
		   const struct droce_pkt *pkt, const struct droce_hdr_fields *f)
{
	struct droce_rc *rc = q->rc;
	uint32_t pmtu = rc_pmtu(q), n;
	struct rc_res *r;
	void *host = NULL; /* only checked here: each response packet looks its part up */

	q->stats.rx_read_requests++;
	/* longer than a message may be (2^31 bytes): invalid request */
	if (f->reth.len > (1u << 31))
		return resp_fatal(env, q, DROCE_NAK_INVALID_REQ, pkt->psn, IBV_EVENT_QP_REQ_ERR);
	if (!(q->access & IBV_ACCESS_REMOTE_READ) ||
	    (f->reth.len > 0 &&
	     droce_mr_check_remote(env->keys, f->reth.rkey, q->pd, q->qpn, f->reth.va, f->reth.len,
				   DROCE_ACCESS_REMOTE_READ, &host) != DROCE_MR_OK))
		return resp_fatal(env, q, DROCE_NAK_REM_ACCESS_ERR, pkt->psn,
				  IBV_EVENT_QP_ACCESS_ERR);
	n = f->reth.len == 0 ? 1 : (f->reth.len + pmtu - 1) / pmtu;
	/* a response that would take more PSNs than a message may (a quarter of the 24-bit
	 * space) would make PSN comparisons ambiguous: invalid request */
	if (n > DROCE_RC_MSG_PKTS_MAX)
		return resp_fatal(env, q, DROCE_NAK_INVALID_REQ, pkt->psn, IBV_EVENT_QP_REQ_ERR);
	/* more READs and atomics in flight than max_dest_rd_atomic: the oldest
	 * response is still being sent, so its resource cannot be reused */
	if (!res_free(rc))
		return resp_fatal(env, q, DROCE_NAK_INVALID_REQ, pkt->psn, IBV_EVENT_QP_REQ_ERR);
	rc->msn = rc_psn_add(rc->msn, 1);
	r = res_take(q);
	r->kind = DROCE_OPM_READ;
	r->pending = true;
	r->replay = false;
	r->first_psn = pkt->psn;
	r->last_psn = rc_psn_add(pkt->psn, n - 1);
	r->next_psn = pkt->psn;
	r->msn = rc->msn;
	r->len = f->reth.len;
	r->rkey = f->reth.rkey;
	r->va = f->reth.va;
	q->rq_psn = rc_psn_add(pkt->psn, n);
	return 0;
}

static int do_atomic(const struct droce_transport_env *env, struct droce_tqp *q,
		     const struct droce_pkt *pkt, const struct droce_hdr_fields *f)
{
	struct droce_rc *rc = q->rc;
	struct rc_res *r;
	uint64_t *p, orig;
	void *host = NULL;

	q->stats.rx_atomic_requests++;
	if (!(q->access & IBV_ACCESS_REMOTE_ATOMIC) ||
	    droce_mr_check_remote(env->keys, f->atmeth.rkey, q->pd, q->qpn, f->atmeth.va, 8,
				  DROCE_ACCESS_REMOTE_ATOMIC, &host) != DROCE_MR_OK)
		return resp_fatal(env, q, DROCE_NAK_REM_ACCESS_ERR, pkt->psn,
				  IBV_EVENT_QP_ACCESS_ERR);
	if (droce_mr_check_atomic(f->atmeth.va, host) != DROCE_MR_OK)
		return resp_fatal(env, q, DROCE_NAK_INVALID_REQ, pkt->psn, IBV_EVENT_QP_REQ_ERR);
	/* no free responder resource: refuse before executing anything */
	if (!res_free(rc))
		return resp_fatal(env, q, DROCE_NAK_INVALID_REQ, pkt->psn, IBV_EVENT_QP_REQ_ERR);
	p = host;
	if (pkt->opcode == DROCE_OP_RC_CMP_SWAP) {
		orig = f->atmeth.compare;
		/* on failure orig receives the current value; on success it was compare */
		__atomic_compare_exchange_n(p, &orig, f->atmeth.swap_add, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(p, f->atmeth.swap_add, __ATOMIC_SEQ_CST);
	}
	rc->msn = rc_psn_add(rc->msn, 1);
	r = res_take(q);
	r->kind = DROCE_OPM_ATOMIC;
	r->pending = true;
	r->replay = false;
	r->first_psn = pkt->psn;
	r->last_psn = pkt->psn;
	r->next_psn = pkt->psn;
	r->msn = rc->msn;
	r->orig = orig;
	q->rq_psn = rc_psn_add(pkt->psn, 1);
	return 0;
}

/* A request already executed: replay READ/atomic responses, re-ACK the rest. */
static void duplicate(struct droce_tqp *q, const struct droce_pkt *pkt)
{
	struct droce_rc *rc = q->rc;
	uint32_t i, n = res_count(q);

	q->stats.duplicate_request++;
	if (pkt->mask & (DROCE_OPM_READ | DROCE_OPM_ATOMIC)) {
		for (i = 0; i < n; i++) {
			struct rc_res *r = &rc->res[i];

			if (r->kind == 0 || !(pkt->mask & r->kind) ||
			    rc_psn_cmp(pkt->psn, r->first_psn) < 0 ||
			    rc_psn_cmp(pkt->psn, r->last_psn) > 0)
				continue;
			/* replayed from the resource, never executed again */
			r->next_psn = pkt->psn;
			r->pending = true;
			r->replay = true;
			/* a replayed READ response carries the responder's current MSN, as any
			 * AETH does: the count of messages completed so far (Linux rxe too) */
			if (r->kind == DROCE_OPM_READ)
				r->msn = rc->msn;
			return;
		}
		return; /* too old to replay: dropped */
	}
	/*
	 * A duplicate SEND or WRITE packet is acknowledged again whether or not it asks for an
	 * ACK (C9-105): the requester resends because an ACK was lost, and a resent packet
	 * without AckReq may be all that reaches the responder. The ACK is coalesced like any
	 * other (one per send pass) and names the last PSN received in order.
	 */
	rc->ack_pending = true;
	rc->ack_psn = (q->rq_psn - 1) & DROCE_PSN_MASK;
}

/* Opcode sequence: a FIRST/ONLY after a LAST/ONLY, MIDDLE/LAST within the same message. */
static bool sequence_ok(const struct droce_rc *rc, uint32_t mask)
{
	if (rc->in_msg)
		return (mask & rc->msg_op) && (mask & (DROCE_OPM_MIDDLE | DROCE_OPM_LAST)) &&
		       !(mask & DROCE_OPM_FIRST);
	return (mask & DROCE_OPM_FIRST) != 0;
}

static bool length_ok(const struct droce_tqp *q, const struct droce_pkt *pkt)
{
	uint32_t pmtu = rc_pmtu(q);

	if (!(pkt->mask & DROCE_OPM_PAYLOAD))
		return true;
	/* FIRST and MIDDLE packets are full; LAST and ONLY at most the PMTU */
	if (!(pkt->mask & DROCE_OPM_LAST))
		return pkt->payload_len == pmtu;
	if (pkt->mask & DROCE_OPM_FIRST)
		return pkt->payload_len <= pmtu;
	return pkt->payload_len > 0 && pkt->payload_len <= pmtu;
}

int droce_rc_resp_recv(const struct droce_transport_env *env, struct droce_tqp *q,
		       struct rte_mbuf *m, const struct droce_pkt *pkt)
{
	struct droce_rc *rc = q->rc;
	uint32_t svc = q->type == IBV_QPT_RC ? DROCE_OPM_RC : DROCE_OPM_UC;
	struct droce_hdr_fields f;
	int32_t c;
	int err = 0;

	rc->env = env;
	if (!(pkt->mask & svc)) {
		rte_pktmbuf_free(m);
		return -EPROTO; /* another service's opcode: silently dropped */
	}
	droce_pkt_fields_mbuf(pkt, m, &f);
	if ((f.pkey & 0x7fff) != (q->pkey & 0x7fff)) {
		q->stats.pkey_violations++;
		rte_pktmbuf_free(m);
		return -EACCES;
	}
	if (pkt->mask & DROCE_OPM_RESP)
		return droce_rc_comp_recv(env, q, m, pkt);
	c = rc_psn_cmp(pkt->psn, q->rq_psn);
	if (q->type == IBV_QPT_RC && c > 0) {
		/* ahead: one NAK PSN sequence error per gap, then silence until the expected PSN */
		if (!rc->nak_seq_sent) {
			rc->nak_seq_sent = true;
			q->stats.out_of_sequence++;
			droce_rc_send_ack(
				env, q,
				droce_aeth_syndrome_make(DROCE_AETH_NAK, DROCE_NAK_PSN_SEQ_ERR),
				q->rq_psn);
		}
		rte_pktmbuf_free(m);
		return -EPROTO;
	}
	if (q->type == IBV_QPT_RC && c < 0) {
		duplicate(q, pkt);
		rte_pktmbuf_free(m);
		return 0;
	}
	if (q->type == IBV_QPT_UC && c < 0 && c >= -(int32_t)DROCE_RC_MSG_PKTS_MAX) {
		/*
		 * UC never goes back: a PSN behind the expected one is a duplicate, or a packet
		 * that later ones overtook, whose message was already given up. Taking it would
		 * deliver a message twice or out of order; it is dropped and the message in
		 * progress goes on. (Further behind than a message may span: a requester that
		 * restarted, taken below as a gap.)
		 */
		q->stats.duplicate_request++;
		rte_pktmbuf_free(m);
		return 0;
	}
	if (q->type == IBV_QPT_UC && c != 0) {
		/* UC: a gap loses the rest of the message in progress (IBTA 9.8) */
		q->stats.out_of_sequence++;
		rc->in_msg = false;
		q->rq_psn = pkt->psn;
	}
	rc->nak_seq_sent = false;
	if (!sequence_ok(rc, pkt->mask) || !length_ok(q, pkt)) {
		if (q->type == IBV_QPT_RC) {
			rte_pktmbuf_free(m);
			return resp_fatal(env, q, DROCE_NAK_INVALID_REQ, pkt->psn,
					  IBV_EVENT_QP_REQ_ERR);
		}
		q->stats.uc_msg_drop++;
		rc->in_msg = false;
		q->rq_psn = rc_psn_add(pkt->psn, 1);
		rte_pktmbuf_free(m);
		return -EPROTO;
	}
	if (pkt->mask & DROCE_OPM_READ)
		err = do_read(env, q, pkt, &f);
	else if (pkt->mask & DROCE_OPM_ATOMIC)
		err = do_atomic(env, q, pkt, &f);
	else if (pkt->mask & DROCE_OPM_SEND)
		err = do_send(env, q, m, pkt, &f);
	else
		err = do_write(env, q, m, pkt, &f);
	/* coalesced: the ACK leaves at the send pass after the RX burst */
	if (err == 0 && q->type == IBV_QPT_RC && f.ackreq &&
	    !(pkt->mask & (DROCE_OPM_READ | DROCE_OPM_ATOMIC))) {
		rc->ack_pending = true;
		rc->ack_psn = pkt->psn;
	}
	rte_pktmbuf_free(m);
	return err;
}

/* One response packet of resource @p r: 0, -EAGAIN to try again later, or -EIO (QP in ERR). */
static int res_send_one(const struct droce_transport_env *env, struct droce_tqp *q,
			struct rc_res *r)
{
	uint32_t pmtu = rc_pmtu(q), k, off = 0, len = 0;
	struct droce_hdr_fields f;
	struct droce_mr_info v;
	void *host = NULL;
	struct droce_addr a;
	struct rte_mbuf *m;
	uint8_t *payload;
	int rc = droce_rc_addr(env, q, &a);

	if (rc != 0)
		return -EAGAIN;
	memset(&f, 0, sizeof(f));
	f.pkey = q->pkey;
	f.dqpn = q->dest_qpn;
	f.psn = r->next_psn;
	f.aeth.syndrome = droce_aeth_syndrome_make(DROCE_AETH_ACK, DROCE_AETH_CREDIT_INVALID);
	f.aeth.msn = r->msn;
	if (r->kind == DROCE_OPM_ATOMIC) {
		f.opcode = DROCE_OP_RC_ATOMIC_ACK;
		f.atmack_orig = r->orig;
	} else {
		/*
		 * Each packet is named by its place in the whole response, a replay from the
		 * middle included (MIDDLE... LAST, as Linux rxe answers): a requester that
		 * holds part of the response accepts nothing else there (rxe fails the READ on
		 * a FIRST whose PSN is not the READ's first).
		 */
		bool first = r->next_psn == r->first_psn, last = r->next_psn == r->last_psn;

		k = (r->next_psn - r->first_psn) & DROCE_PSN_MASK;
		off = k * pmtu;
		len = r->len - off < pmtu ? r->len - off : pmtu;
		f.opcode = first && last ? DROCE_OP_RC_READ_RESP_ONLY
			   : first       ? DROCE_OP_RC_READ_RESP_FIRST
			   : last        ? DROCE_OP_RC_READ_RESP_LAST
					 : DROCE_OP_RC_READ_RESP_MIDDLE;
	}
	if (len > 0 && droce_mr_check_remote(env->keys, r->rkey, q->pd, q->qpn, r->va + off, len,
					     DROCE_ACCESS_REMOTE_READ, &host) != DROCE_MR_OK) {
		/*
		 * The source went (deregistered, invalidated, unbound) while its response was
		 * being sent or replayed: the READ ends in a remote access NAK for the packet
		 * that could not be read, as an rkey violation found at the request would.
		 */
		r->pending = false;
		return resp_fatal(env, q, DROCE_NAK_REM_ACCESS_ERR, r->next_psn,
				  IBV_EVENT_QP_ACCESS_ERR);
	}
	/*
	 * Zero copy: no WQE waits for a response, the MR's busy count is the only hold; a
	 * window's bytes are its MR's, whose deregistration is what waits. A key that changed
	 * since the check above (it is good for this pass) is copied.
	 */
	if (env->zero_copy_min != 0 && len >= env->zero_copy_min &&
	    droce_mr_lookup(env->keys, r->rkey, &v) == DROCE_MR_OK) {
		struct droce_zc_piece p = {
			.host = host,
			.len = len,
			.key = v.type == DROCE_MR_TYPE_MR ? r->rkey : v.mr_key,
		};

		m = droce_zc_frame(env, &a, &f, len, &p, 1, NULL, 0);
		if (m == NULL)
			return -EAGAIN;
		q->stats.zc_frames++;
		droce_tqp_tx(env, q, m);
		goto sent;
	}
	if (env->zero_copy_min != 0 && len > 0)
		q->stats.zc_copied++;
	m = droce_rc_frame(env, &a, &f, len, &payload);
	if (m == NULL)
		return -EAGAIN;
	if (len > 0)
		memcpy(payload, host, len);
	droce_rc_frame_seal(m, &a);
	droce_tqp_tx(env, q, m);
sent:
	if (r->next_psn == r->last_psn)
		r->pending = false;
	else
		r->next_psn = rc_psn_add(r->next_psn, 1);
	return 0;
}

int droce_rc_resp_send(const struct droce_transport_env *env, struct droce_tqp *q, int budget)
{
	struct droce_rc *rc = q->rc;
	uint32_t i, n = res_count(q);
	int sent = 0;

	rc->env = env;
	if (q->type != IBV_QPT_RC)
		return 0;
	/* responses leave in PSN order: the oldest resource first */
	for (i = 0; i < n; i++) {
		struct rc_res *r = &rc->res[(rc->res_next + i) % n];

		while (r->pending && sent < budget) {
			/* -EAGAIN: later; -EIO: the QP went to ERR */
			if (res_send_one(env, q, r) != 0)
				return sent;
			sent++;
		}
		if (r->pending)
			return sent;
	}
	if (rc->ack_pending &&
	    droce_rc_send_ack(env, q,
			      droce_aeth_syndrome_make(DROCE_AETH_ACK, DROCE_AETH_CREDIT_INVALID),
			      rc->ack_psn) == 0) {
		rc->ack_pending = false;
		sent++;
	}
	return sent;
}
