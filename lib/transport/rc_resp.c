/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC/UC responder: the request packets the dispatcher routes here (IBTA 9.7.5.2 and 9.7.6
 * for RC, 9.8 for UC). A state machine (doc/transport.md draws it): the PSN check, the
 * opcode sequence, the access and resource checks, the execution of SEND, RDMA WRITE, READ
 * and atomics, the coalesced ACK, duplicates, and each error by its IBA responder class
 * (IBTA 9.9.3): A (a receive WQE the responder cannot use), B (a PSN sequence error, no
 * receive WQE: RNR), C (a request the responder refuses: invalid request, remote access),
 * D (UC: the message is dropped, the QP goes on), E (UC on an SRQ: the receive WQE taken for
 * the message completes in error, the QP goes on). Class G (a CQ overrun) is the QP
 * services' (tqp_svc.c). The send side sends READ responses, atomic ACKs and the ACK.
 */
#include <errno.h>
#include <string.h>

#include "rc_priv.h"

const char *const droce_rc_resp_state_names[RC_RESP_STATE_COUNT] = {
	[RC_RESP_CHECK_PSN] = "CHECK_PSN",
	[RC_RESP_CHECK_OP_SEQ] = "CHECK_OP_SEQ",
	[RC_RESP_CHECK_RESOURCE] = "CHECK_RESOURCE",
	[RC_RESP_CHECK_ACCESS] = "CHECK_ACCESS",
	[RC_RESP_EXECUTE] = "EXECUTE",
	[RC_RESP_ACKNOWLEDGE] = "ACKNOWLEDGE",
	[RC_RESP_DUPLICATE] = "DUPLICATE",
	[RC_RESP_ERR_CLASS_A] = "ERR_CLASS_A",
	[RC_RESP_ERR_CLASS_B_PSN] = "ERR_CLASS_B_PSN",
	[RC_RESP_ERR_CLASS_B_RNR] = "ERR_CLASS_B_RNR",
	[RC_RESP_ERR_CLASS_C] = "ERR_CLASS_C",
	[RC_RESP_ERR_CLASS_D] = "ERR_CLASS_D",
	[RC_RESP_ERR_CLASS_E] = "ERR_CLASS_E",
	[RC_RESP_DONE] = "DONE",
};

/* What the responder's states share for one request packet. */
struct resp_ctx {
	const struct droce_transport_env *env;
	struct droce_tqp *q;
	struct rc_responder *resp;
	struct rte_mbuf *m;
	const struct droce_pkt *pkt;
	const struct droce_hdr_fields *f;
	int err; /**< what droce_rc_resp_recv() returns */
	/* an error's details, for its class's state */
	uint8_t nak;            /**< class A/C: the NAK code (IBTA 9.7.5.1) */
	enum ibv_event_type ev; /**< class A/C: the affiliated event */
	enum ibv_wc_status st;  /**< class A/C: the receive WQE completes with it ... */
	bool wqe_fails;         /**< ... when one was taken for the message */
	bool no_buffer;         /**< class D: for want of a receive WQE (out_of_buffer) */
	void *atomic_host;      /**< an atomic's target, checked (good for this pass only) */
};

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

static const struct droce_sge *rwqe_sge(const struct rc_responder *resp)
{
	return (const struct droce_sge *)(resp->rwqe.bytes + sizeof(struct droce_recv_wqe));
}

/* Take the next receive WQE (RQ or SRQ) for the message; false when none is posted. */
static bool take_recv(const struct droce_transport_env *env, struct droce_tqp *q)
{
	struct rc_responder *resp = &q->rc->resp;
	struct droce_ring_cons *ring = q->srq != NULL ? q->srq : &q->rq;
	int avail;

	if (resp->have_rwqe)
		return true;
	droce_shared_lock_take(q->srq_lock);
	avail = droce_ring_cons_avail(ring);
	if (avail <= 0) {
		droce_shared_lock_give(q->srq_lock);
		return false;
	}
	memcpy(resp->rwqe.bytes, droce_ring_cons_slot(ring, 0), ring->slot_size);
	droce_ring_cons_release(ring, 1);
	droce_shared_lock_give(q->srq_lock);
	if (q->srq != NULL && env->srq_limit != NULL)
		env->srq_limit(env->arg, q->srq_user, (uint32_t)avail - 1);
	resp->have_rwqe = true;
	return true;
}

static void recv_complete(const struct droce_transport_env *env, struct droce_tqp *q,
			  enum ibv_wc_status st, enum ibv_wc_opcode op, uint32_t len,
			  uint16_t flags, uint32_t imm, bool se)
{
	struct rc_responder *resp = &q->rc->resp;
	struct droce_cqe e = {
		.wr_id = resp->rwqe.hdr.wr_id,
		.status = (uint8_t)st,
		.opcode = (uint8_t)op,
		.byte_len = len,
		.imm = imm,
		.qp_num = q->qpn,
		.src_qp = q->dest_qpn,
		.wc_flags = flags,
	};

	resp->have_rwqe = false;
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

/* The receive WQE taken for the message completes with @p st (class A or C, 9.9.3). */
static void rwqe_fail(struct resp_ctx *c)
{
	struct droce_tqp *q = c->q;
	struct rc_responder *resp = c->resp;
	struct droce_cqe e = {
		.wr_id = resp->rwqe.hdr.wr_id,
		.status = (uint8_t)c->st,
		.opcode = IBV_WC_RECV,
		.byte_len = resp->msg_off,
		.qp_num = q->qpn,
	};

	resp->have_rwqe = false; /* completed here, not flushed by the move to Error */
	droce_rc_to_error(c->env, q, c->ev);
	droce_tqp_complete_recv(c->env, q, &e, false);
}

/*
 * The QP to Error after a class A or C error (IBTA 9.9.3): on RC the NAK goes first, with
 * the PSN of the request it refuses; on UC there is no NAK to send.
 */
static void resp_fatal(const struct droce_transport_env *env, struct droce_tqp *q, uint8_t code,
		       uint32_t psn, enum ibv_event_type ev)
{
	count_nak(q, code);
	if (rc_svc(q)->acked)
		droce_rc_send_ack(env, q, droce_aeth_syndrome_make(DROCE_AETH_NAK, code), psn);
	droce_rc_to_error(env, q, ev);
}

/* A class C error of the request: what to NAK and raise (IBTA 9.9.3, 9.7.5.1). */
static enum rc_resp_state class_c(struct resp_ctx *c, uint8_t nak, enum ibv_event_type ev)
{
	c->nak = nak;
	c->ev = ev;
	return RC_RESP_ERR_CLASS_C;
}

/* ... and one that a receive WQE taken for the message completes with. */
static enum rc_resp_state class_c_wqe(struct resp_ctx *c, enum ibv_wc_status st, uint8_t nak,
				      enum ibv_event_type ev)
{
	c->st = st;
	c->wqe_fails = true;
	return class_c(c, nak, ev);
}

/* A class A error: the receive WQE cannot be used (its SGEs or keys are bad). */
static enum rc_resp_state class_a(struct resp_ctx *c, enum ibv_wc_status st)
{
	c->st = st;
	c->wqe_fails = true;
	c->nak = DROCE_NAK_REM_OP_ERR;
	c->ev = IBV_EVENT_QP_FATAL;
	return RC_RESP_ERR_CLASS_A;
}

/*
 * ERR_CLASS_A (IBTA 9.9.3, any service): the responder's own fault. NAK remote operational
 * error on RC, the receive WQE completes with its local error, the QP to Error.
 */
static enum rc_resp_state resp_err_class_a(struct resp_ctx *c)
{
	c->resp->outcome = (uint8_t)RC_RESP_ERR_CLASS_A;
	count_nak(c->q, c->nak);
	if (rc_svc(c->q)->acked)
		droce_rc_send_ack(c->env, c->q, droce_aeth_syndrome_make(DROCE_AETH_NAK, c->nak),
				  c->pkt->psn);
	rwqe_fail(c);
	c->err = -EIO;
	return RC_RESP_DONE;
}

/*
 * ERR_CLASS_B_PSN (IBTA 9.7.5.2, 9.9.3 class B): a PSN ahead of the expected one. One NAK
 * PSN sequence error per gap, naming the expected PSN, then silence until it comes; the QP
 * stays as it is.
 */
static enum rc_resp_state resp_err_class_b_psn(struct resp_ctx *c)
{
	struct droce_tqp *q = c->q;

	c->resp->outcome = (uint8_t)RC_RESP_ERR_CLASS_B_PSN;
	if (!c->resp->nak_seq_sent) {
		c->resp->nak_seq_sent = true;
		q->stats.out_of_sequence++;
		droce_rc_send_ack(c->env, q,
				  droce_aeth_syndrome_make(DROCE_AETH_NAK, DROCE_NAK_PSN_SEQ_ERR),
				  q->rq_psn);
	}
	c->err = -EPROTO;
	return RC_RESP_DONE;
}

/*
 * ERR_CLASS_B_RNR (IBTA 9.7.5.2, 9.9.3 class B): no receive WQE for a SEND or a WRITE with
 * immediate. RNR NAK with the QP's min_rnr_timer; the requester resends the packet later.
 */
static enum rc_resp_state resp_err_class_b_rnr(struct resp_ctx *c)
{
	struct droce_tqp *q = c->q;

	c->resp->outcome = (uint8_t)RC_RESP_ERR_CLASS_B_RNR;
	if (!rc_svc(q)->acked) {
		c->no_buffer = true;
		return RC_RESP_ERR_CLASS_D;
	}
	q->stats.send_rnr_err++;
	droce_rc_send_ack(c->env, q, droce_aeth_syndrome_make(DROCE_AETH_RNR_NAK, q->min_rnr_timer),
			  c->pkt->psn);
	c->err = -ENOBUFS;
	return RC_RESP_DONE;
}

/*
 * ERR_CLASS_C (IBTA 9.9.3 class C, RC): a request the responder refuses (an opcode out of
 * sequence, a bad length, an R_Key or access violation, too many READ/atomics). NAK invalid
 * request or remote access error, the receive WQE taken for it (if any) completes with its
 * error, the QP to Error. UC answers nothing: class D.
 */
static enum rc_resp_state resp_err_class_c(struct resp_ctx *c)
{
	c->resp->outcome = (uint8_t)RC_RESP_ERR_CLASS_C;
	if (!rc_svc(c->q)->naks)
		return RC_RESP_ERR_CLASS_D;
	if (c->wqe_fails) {
		count_nak(c->q, c->nak);
		droce_rc_send_ack(c->env, c->q, droce_aeth_syndrome_make(DROCE_AETH_NAK, c->nak),
				  c->pkt->psn);
		rwqe_fail(c);
	} else {
		resp_fatal(c->env, c->q, c->nak, c->pkt->psn, c->ev);
	}
	c->err = -EIO;
	return RC_RESP_DONE;
}

/*
 * ERR_CLASS_D (IBTA 9.8, 9.9.3 class D, UC): a request the responder cannot take loses its
 * message only; the QP stays in RTS (as Linux rxe does). The packets left of the message
 * are dropped as out of sequence, and a receive WQE taken for it serves the next message.
 */
static enum rc_resp_state resp_err_class_d(struct resp_ctx *c)
{
	struct droce_tqp *q = c->q;

	c->resp->outcome = (uint8_t)RC_RESP_ERR_CLASS_D;
	if (c->no_buffer)
		q->stats.out_of_buffer++;
	else
		q->stats.uc_msg_drop++;
	c->resp->in_msg = false;
	q->rq_psn = rc_psn_add(c->pkt->psn, 1);
	c->err = c->no_buffer ? -ENOBUFS : -EPROTO;
	return RC_RESP_DONE;
}

/*
 * ERR_CLASS_E (IBTA 9.9.3 class E: an invalid request on a UC QP whose receive WQEs come
 * from an SRQ): the WQE taken from the SRQ for the message is consumed and completed with
 * IBV_WC_REM_INV_REQ_ERR, as ibv_post_srq_recv(3) documents and Linux rxe does; the QP stays
 * in RTS and the packets left of the message are dropped as out of sequence, as in class D.
 * Keeping the WQE would hold a shared buffer hostage to this QP's next message.
 */
static enum rc_resp_state resp_err_class_e(struct resp_ctx *c)
{
	struct droce_tqp *q = c->q;

	c->resp->outcome = (uint8_t)RC_RESP_ERR_CLASS_E;
	q->stats.uc_msg_drop++;
	recv_complete(c->env, q, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RECV, 0, 0, 0, false);
	c->resp->in_msg = false;
	q->rq_psn = rc_psn_add(c->pkt->psn, 1);
	c->err = -EMSGSIZE;
	return RC_RESP_DONE;
}

static struct rc_res *res_take(struct droce_tqp *q)
{
	struct rc_responder *resp = &q->rc->resp;
	struct rc_res *r = &resp->res[resp->res_next];

	resp->res_next = (resp->res_next + 1) % res_count(q);
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
static bool res_free(const struct rc_responder *resp)
{
	const struct rc_res *r = &resp->res[resp->res_next];

	return !r->pending || r->replay;
}

/* A request already executed: replay READ/atomic responses, re-ACK the rest. */
static void duplicate(struct droce_tqp *q, const struct droce_pkt *pkt)
{
	struct rc_responder *resp = &q->rc->resp;
	uint32_t i, n = res_count(q);

	q->stats.duplicate_request++;
	if (pkt->mask & (DROCE_OPM_READ | DROCE_OPM_ATOMIC)) {
		for (i = 0; i < n; i++) {
			struct rc_res *r = &resp->res[i];

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
				r->msn = resp->msn;
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
	resp->ack_pending = true;
	resp->ack_psn = (q->rq_psn - 1) & DROCE_PSN_MASK;
}

/* Opcode sequence: a FIRST/ONLY after a LAST/ONLY, MIDDLE/LAST within the same message. */
static bool sequence_ok(const struct rc_responder *resp, uint32_t mask)
{
	if (resp->in_msg)
		return (mask & resp->msg_op) && (mask & (DROCE_OPM_MIDDLE | DROCE_OPM_LAST)) &&
		       !(mask & DROCE_OPM_FIRST);
	return (mask & DROCE_OPM_FIRST) != 0;
}

/* IBTA 9.7.5.2 / 9.8: FIRST and MIDDLE packets are full; LAST and ONLY at most the PMTU. */
static bool length_ok(const struct droce_tqp *q, const struct droce_pkt *pkt)
{
	uint32_t pmtu = rc_pmtu(q);

	if (!(pkt->mask & DROCE_OPM_PAYLOAD))
		return true;
	if (!(pkt->mask & DROCE_OPM_LAST))
		return pkt->payload_len == pmtu;
	if (pkt->mask & DROCE_OPM_FIRST)
		return pkt->payload_len <= pmtu;
	return pkt->payload_len > 0 && pkt->payload_len <= pmtu;
}

/* CHECK_PSN (IBTA 9.7.5.2 for RC, 9.8 for UC): expected, duplicate, or ahead. */
static enum rc_resp_state resp_check_psn(struct resp_ctx *c)
{
	struct droce_tqp *q = c->q;
	int32_t d = rc_psn_cmp(c->pkt->psn, q->rq_psn);

	if (rc_svc(q)->go_back) {
		if (d > 0)
			return RC_RESP_ERR_CLASS_B_PSN;
		if (d < 0)
			return RC_RESP_DUPLICATE;
	} else if (d < 0 && d >= -(int32_t)DROCE_RC_MSG_PKTS_MAX) {
		/*
		 * UC never goes back: a PSN behind the expected one is a duplicate, or a packet
		 * that later ones overtook, whose message was already given up. Taking it would
		 * deliver a message twice or out of order; it is dropped and the message in
		 * progress goes on. (Further behind than a message may span: a requester that
		 * restarted, taken below as a gap.)
		 */
		return RC_RESP_DUPLICATE;
	} else if (d != 0) {
		/* UC: a gap loses the rest of the message in progress (IBTA 9.8) */
		q->stats.out_of_sequence++;
		c->resp->in_msg = false;
		q->rq_psn = c->pkt->psn;
	}
	c->resp->nak_seq_sent = false;
	return RC_RESP_CHECK_OP_SEQ;
}

/* CHECK_OP_SEQ: the opcode continues the message in progress, at a valid length. */
static enum rc_resp_state resp_check_op_seq(struct resp_ctx *c)
{
	if (!sequence_ok(c->resp, c->pkt->mask) || !length_ok(c->q, c->pkt))
		return class_c(c, DROCE_NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR);
	return RC_RESP_CHECK_ACCESS;
}

/* CHECK_ACCESS for a WRITE: the whole range at the FIRST packet, the length at every one. */
static enum rc_resp_state check_write(struct resp_ctx *c)
{
	struct droce_tqp *q = c->q;
	struct rc_responder *resp = c->resp;
	const struct droce_hdr_fields *f = c->f;
	uint32_t len = c->pkt->payload_len;

	if (c->pkt->mask & DROCE_OPM_FIRST) {
		void *host = NULL;

		/* nothing lands of a refused WRITE (IBTA 9.4.2; C9-88: zero length, any key) */
		q->stats.rx_write_requests++;
		if (!(q->access & IBV_ACCESS_REMOTE_WRITE) ||
		    (f->reth.len > 0 &&
		     droce_mr_check_remote(c->env->keys, f->reth.rkey, q->pd, q->qpn, f->reth.va,
					   f->reth.len, DROCE_ACCESS_REMOTE_WRITE,
					   &host) != DROCE_MR_OK))
			return class_c(c, DROCE_NAK_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
		resp->wr_va = f->reth.va;
		resp->wr_rkey = f->reth.rkey;
		resp->wr_len = f->reth.len;
		resp->msg_off = 0;
		resp->msg_op = DROCE_OPM_WRITE;
	}
	/* more or fewer bytes than the RETH's DMA length: invalid request */
	if (resp->msg_off + (uint64_t)len > resp->wr_len ||
	    ((c->pkt->mask & DROCE_OPM_LAST) && resp->msg_off + len != resp->wr_len))
		return class_c(c, DROCE_NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR);
	return RC_RESP_CHECK_RESOURCE;
}

/* CHECK_ACCESS for a READ (IBTA 9.4.3). */
static enum rc_resp_state check_read(struct resp_ctx *c)
{
	struct droce_tqp *q = c->q;
	const struct droce_hdr_fields *f = c->f;
	void *host = NULL; /* only checked here: each response packet looks its part up */
	uint32_t pmtu = rc_pmtu(q), n;

	q->stats.rx_read_requests++;
	/* longer than a message may be (2^31 bytes): invalid request */
	if (f->reth.len > (1u << 31))
		return class_c(c, DROCE_NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR);
	if (!(q->access & IBV_ACCESS_REMOTE_READ) ||
	    (f->reth.len > 0 &&
	     droce_mr_check_remote(c->env->keys, f->reth.rkey, q->pd, q->qpn, f->reth.va,
				   f->reth.len, DROCE_ACCESS_REMOTE_READ, &host) != DROCE_MR_OK))
		return class_c(c, DROCE_NAK_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	n = f->reth.len == 0 ? 1 : (f->reth.len + pmtu - 1) / pmtu;
	/* a response that would take more PSNs than a message may (a quarter of the 24-bit
	 * space) would make PSN comparisons ambiguous: invalid request */
	if (n > DROCE_RC_MSG_PKTS_MAX)
		return class_c(c, DROCE_NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR);
	return RC_RESP_CHECK_RESOURCE;
}

/* CHECK_ACCESS for an atomic (IBTA 9.4.5): the right, the key, 8 aligned bytes. */
static enum rc_resp_state check_atomic(struct resp_ctx *c)
{
	struct droce_tqp *q = c->q;
	const struct droce_hdr_fields *f = c->f;

	q->stats.rx_atomic_requests++;
	if (!(q->access & IBV_ACCESS_REMOTE_ATOMIC) ||
	    droce_mr_check_remote(c->env->keys, f->atmeth.rkey, q->pd, q->qpn, f->atmeth.va, 8,
				  DROCE_ACCESS_REMOTE_ATOMIC, &c->atomic_host) != DROCE_MR_OK)
		return class_c(c, DROCE_NAK_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	if (droce_mr_check_atomic(f->atmeth.va, c->atomic_host) != DROCE_MR_OK)
		return class_c(c, DROCE_NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR);
	return RC_RESP_CHECK_RESOURCE;
}

/* CHECK_ACCESS: R_Key, range and rights of an RDMA or atomic request. */
static enum rc_resp_state resp_check_access(struct resp_ctx *c)
{
	uint32_t mask = c->pkt->mask;

	if (mask & DROCE_OPM_READ)
		return check_read(c);
	if (mask & DROCE_OPM_ATOMIC)
		return check_atomic(c);
	if (mask & DROCE_OPM_WRITE)
		return check_write(c);
	return RC_RESP_CHECK_RESOURCE; /* a SEND is checked against its receive WQE */
}

/* A SEND's bytes fit its receive WQE: sound SGEs (class A), enough room (class C). */
static enum rc_resp_state check_send_room(struct resp_ctx *c)
{
	struct rc_responder *resp = c->resp;
	uint64_t total = 0;
	uint32_t i;

	if (resp->rwqe.hdr.num_sge > rwqe_sges(c->q))
		return class_a(c, IBV_WC_LOC_QP_OP_ERR);
	for (i = 0; i < resp->rwqe.hdr.num_sge; i++)
		total += rwqe_sge(resp)[i].length;
	/* a message longer than the receive buffers: NAK invalid request, LOC_LEN_ERR */
	if (resp->msg_off + (uint64_t)c->pkt->payload_len > total) {
		c->q->stats.resp_local_length_error++;
		/* UC: class E on an SRQ (the WQE completes in error), else class D (the WQE
		 * is kept for the next message) */
		if (!rc_svc(c->q)->naks)
			return c->q->srq != NULL ? RC_RESP_ERR_CLASS_E : RC_RESP_ERR_CLASS_D;
		return class_c_wqe(c, IBV_WC_LOC_LEN_ERR, DROCE_NAK_INVALID_REQ,
				   IBV_EVENT_QP_REQ_ERR);
	}
	return RC_RESP_EXECUTE;
}

/*
 * CHECK_RESOURCE: a receive WQE for a SEND and a WRITE with immediate (IBTA 9.4.2; none:
 * class B, RNR), a responder resource for a READ or atomic (none free: class C).
 */
static enum rc_resp_state resp_check_resource(struct resp_ctx *c)
{
	uint32_t mask = c->pkt->mask;

	if (mask & (DROCE_OPM_READ | DROCE_OPM_ATOMIC)) {
		/* more READs and atomics in flight than max_dest_rd_atomic: the oldest
		 * response is still being sent, so its resource cannot be reused */
		if (!res_free(c->resp))
			return class_c(c, DROCE_NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR);
		return RC_RESP_EXECUTE;
	}
	if (mask & DROCE_OPM_SEND) {
		if (mask & DROCE_OPM_FIRST) {
			if (!take_recv(c->env, c->q))
				return RC_RESP_ERR_CLASS_B_RNR;
			c->resp->msg_off = 0;
			c->resp->msg_op = DROCE_OPM_SEND;
		}
		return check_send_room(c);
	}
	if ((mask & DROCE_OPM_IMMDT) && !take_recv(c->env, c->q))
		return RC_RESP_ERR_CLASS_B_RNR;
	return RC_RESP_EXECUTE;
}

/* EXECUTE a SEND packet: its bytes into the receive WQE, the completion at its last. */
static enum rc_resp_state exec_send(struct resp_ctx *c)
{
	const struct droce_pkt *pkt = c->pkt;
	const struct droce_hdr_fields *f = c->f;
	struct droce_tqp *q = c->q;
	struct rc_responder *resp = c->resp;
	uint16_t flags = 0;
	uint32_t imm = 0;

	if (pkt->payload_len > 0 &&
	    droce_sge_scatter(c->env, q->pd, rwqe_sge(resp), resp->rwqe.hdr.num_sge, resp->msg_off,
			      c->m, pkt->payload_off, pkt->payload_len) != 0)
		return class_a(c, IBV_WC_LOC_PROT_ERR);
	resp->msg_off += pkt->payload_len;
	q->rq_psn = rc_psn_add(pkt->psn, 1);
	if (!(pkt->mask & DROCE_OPM_LAST)) {
		resp->in_msg = true;
		return RC_RESP_ACKNOWLEDGE;
	}
	resp->in_msg = false;
	if (pkt->mask & DROCE_OPM_IMMDT) {
		flags |= IBV_WC_WITH_IMM;
		imm = f->imm_be;
	}
	if (pkt->mask & DROCE_OPM_IETH) {
		/* SEND with invalidate (IBTA 9.4.1): a key it may not invalidate is refused */
		if (droce_mr_invalidate_remote(c->env->keys, f->ieth_rkey, q->pd, q->qpn) != 0)
			return class_c_wqe(c, IBV_WC_LOC_PROT_ERR, DROCE_NAK_INVALID_REQ,
					   IBV_EVENT_QP_REQ_ERR);
		flags |= IBV_WC_WITH_INV;
		imm = f->ieth_rkey;
	}
	resp->msn = rc_psn_add(resp->msn, 1);
	recv_complete(c->env, q, IBV_WC_SUCCESS, IBV_WC_RECV, resp->msg_off, flags, imm, f->se);
	return RC_RESP_ACKNOWLEDGE;
}

/* EXECUTE a WRITE packet: its part of the range, checked again (the key may have gone). */
static enum rc_resp_state exec_write(struct resp_ctx *c)
{
	const struct droce_pkt *pkt = c->pkt;
	struct droce_tqp *q = c->q;
	struct rc_responder *resp = c->resp;
	uint32_t len = pkt->payload_len;

	if (len > 0) {
		void *host = NULL;
		const void *src;

		if (droce_mr_check_remote(c->env->keys, resp->wr_rkey, q->pd, q->qpn,
					  resp->wr_va + resp->msg_off, len,
					  DROCE_ACCESS_REMOTE_WRITE, &host) != DROCE_MR_OK)
			return class_c(c, DROCE_NAK_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
		src = rte_pktmbuf_read(c->m, pkt->payload_off, len, host);
		if (src != NULL && src != host)
			memcpy(host, src, len);
	}
	resp->msg_off += len;
	q->rq_psn = rc_psn_add(pkt->psn, 1);
	if (!(pkt->mask & DROCE_OPM_LAST)) {
		resp->in_msg = true;
		return RC_RESP_ACKNOWLEDGE;
	}
	resp->in_msg = false;
	resp->msn = rc_psn_add(resp->msn, 1);
	/* WRITE with immediate consumes its receive WQE at the last packet (IBTA 9.4.2) */
	if (pkt->mask & DROCE_OPM_IMMDT)
		recv_complete(c->env, q, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, resp->wr_len,
			      IBV_WC_WITH_IMM, c->f->imm_be, c->f->se);
	return RC_RESP_ACKNOWLEDGE;
}

/* EXECUTE a READ: a responder resource sends the response (IBTA 9.4.3, 9.7.1). */
static enum rc_resp_state exec_read(struct resp_ctx *c)
{
	const struct droce_pkt *pkt = c->pkt;
	const struct droce_hdr_fields *f = c->f;
	struct droce_tqp *q = c->q;
	struct rc_responder *resp = c->resp;
	uint32_t pmtu = rc_pmtu(q);
	uint32_t n = f->reth.len == 0 ? 1 : (f->reth.len + pmtu - 1) / pmtu;
	struct rc_res *r;

	resp->msn = rc_psn_add(resp->msn, 1);
	r = res_take(q);
	r->kind = DROCE_OPM_READ;
	r->pending = true;
	r->replay = false;
	r->first_psn = pkt->psn;
	r->last_psn = rc_psn_add(pkt->psn, n - 1);
	r->next_psn = pkt->psn;
	r->msn = resp->msn;
	r->len = f->reth.len;
	r->rkey = f->reth.rkey;
	r->va = f->reth.va;
	/* the response takes one PSN per packet: the next request's PSN follows them */
	q->rq_psn = rc_psn_add(pkt->psn, n);
	return RC_RESP_ACKNOWLEDGE;
}

/* EXECUTE an atomic, once: a resource keeps the original value for replays (9.4.5). */
static enum rc_resp_state exec_atomic(struct resp_ctx *c)
{
	const struct droce_pkt *pkt = c->pkt;
	const struct droce_hdr_fields *f = c->f;
	struct droce_tqp *q = c->q;
	struct rc_responder *resp = c->resp;
	uint64_t *p = c->atomic_host, orig; /* checked in CHECK_ACCESS, this pass */
	struct rc_res *r;

	if (pkt->opcode == DROCE_OP_RC_CMP_SWAP) {
		orig = f->atmeth.compare;
		/* on failure orig receives the current value; on success it was compare */
		__atomic_compare_exchange_n(p, &orig, f->atmeth.swap_add, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(p, f->atmeth.swap_add, __ATOMIC_SEQ_CST);
	}
	resp->msn = rc_psn_add(resp->msn, 1);
	r = res_take(q);
	r->kind = DROCE_OPM_ATOMIC;
	r->pending = true;
	r->replay = false;
	r->first_psn = pkt->psn;
	r->last_psn = pkt->psn;
	r->next_psn = pkt->psn;
	r->msn = resp->msn;
	r->orig = orig;
	q->rq_psn = rc_psn_add(pkt->psn, 1);
	return RC_RESP_ACKNOWLEDGE;
}

/* EXECUTE: the request, checked, takes effect. */
static enum rc_resp_state resp_execute(struct resp_ctx *c)
{
	uint32_t mask = c->pkt->mask;

	if (mask & DROCE_OPM_READ)
		return exec_read(c);
	if (mask & DROCE_OPM_ATOMIC)
		return exec_atomic(c);
	if (mask & DROCE_OPM_SEND)
		return exec_send(c);
	return exec_write(c);
}

/*
 * ACKNOWLEDGE (IBTA 9.7.5.1.1): a SEND or WRITE packet that asks for an ACK gets one,
 * coalesced: it leaves at the send pass after the RX burst and covers every PSN before its
 * own. READ and atomics are answered by their responses; UC by nothing (9.8).
 */
static enum rc_resp_state resp_acknowledge(struct resp_ctx *c)
{
	c->resp->outcome = (uint8_t)RC_RESP_ACKNOWLEDGE;
	if (rc_svc(c->q)->acked && c->f->ackreq &&
	    !(c->pkt->mask & (DROCE_OPM_READ | DROCE_OPM_ATOMIC))) {
		c->resp->ack_pending = true;
		c->resp->ack_psn = c->pkt->psn;
	}
	return RC_RESP_DONE;
}

/*
 * DUPLICATE (IBTA 9.7.5.2, RC): a request already executed. READ and atomic responses are
 * replayed from their resource, never executed again; SEND and WRITE packets are ACKed
 * again. UC (9.8) has nothing to answer: the packet is dropped.
 */
static enum rc_resp_state resp_duplicate(struct resp_ctx *c)
{
	c->resp->outcome = (uint8_t)RC_RESP_DUPLICATE;
	if (rc_svc(c->q)->go_back)
		duplicate(c->q, c->pkt);
	else
		c->q->stats.duplicate_request++;
	return RC_RESP_DONE;
}

enum rc_resp_state droce_rc_resp_last_outcome(const struct droce_tqp *q)
{
	return (enum rc_resp_state)q->rc->resp.outcome;
}

int droce_rc_resp_recv(const struct droce_transport_env *env, struct droce_tqp *q,
		       struct rte_mbuf *m, const struct droce_pkt *pkt,
		       const struct droce_hdr_fields *f)
{
	enum rc_resp_state s = RC_RESP_CHECK_PSN;
	struct resp_ctx c;

	/* what every path reads; an error's details are written by the state that finds it */
	c.env = env;
	c.q = q;
	c.resp = &q->rc->resp;
	c.m = m;
	c.pkt = pkt;
	c.f = f;
	c.err = 0;
	c.wqe_fails = false;
	c.no_buffer = false;

	for (;;) {
		switch (s) {
		case RC_RESP_CHECK_PSN:
			s = resp_check_psn(&c);
			break;
		case RC_RESP_CHECK_OP_SEQ:
			s = resp_check_op_seq(&c);
			break;
		case RC_RESP_CHECK_ACCESS:
			s = resp_check_access(&c);
			break;
		case RC_RESP_CHECK_RESOURCE:
			s = resp_check_resource(&c);
			break;
		case RC_RESP_EXECUTE:
			s = resp_execute(&c);
			break;
		case RC_RESP_ACKNOWLEDGE:
			s = resp_acknowledge(&c);
			break;
		case RC_RESP_DUPLICATE:
			s = resp_duplicate(&c);
			break;
		case RC_RESP_ERR_CLASS_A:
			s = resp_err_class_a(&c);
			break;
		case RC_RESP_ERR_CLASS_B_PSN:
			s = resp_err_class_b_psn(&c);
			break;
		case RC_RESP_ERR_CLASS_B_RNR:
			s = resp_err_class_b_rnr(&c);
			break;
		case RC_RESP_ERR_CLASS_C:
			s = resp_err_class_c(&c);
			break;
		case RC_RESP_ERR_CLASS_D:
			s = resp_err_class_d(&c);
			break;
		case RC_RESP_ERR_CLASS_E:
			s = resp_err_class_e(&c);
			break;
		case RC_RESP_DONE:
		default:
			rte_pktmbuf_free(m);
			return c.err;
		}
	}
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
		resp_fatal(env, q, DROCE_NAK_REM_ACCESS_ERR, r->next_psn, IBV_EVENT_QP_ACCESS_ERR);
		return -EIO;
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
	struct rc_responder *resp = &q->rc->resp;
	uint32_t i, n = res_count(q);
	int sent = 0;

	if (!rc_svc(q)->acked)
		return 0;
	/* responses leave in PSN order: the oldest resource first */
	for (i = 0; i < n; i++) {
		struct rc_res *r = &resp->res[(resp->res_next + i) % n];

		while (r->pending && sent < budget) {
			/* -EAGAIN: later; -EIO: the QP went to ERR */
			if (res_send_one(env, q, r) != 0)
				return sent;
			sent++;
		}
		if (r->pending)
			return sent;
	}
	if (resp->ack_pending &&
	    droce_rc_send_ack(env, q,
			      droce_aeth_syndrome_make(DROCE_AETH_ACK, DROCE_AETH_CREDIT_INVALID),
			      resp->ack_psn) == 0) {
		resp->ack_pending = false;
		sent++;
	}
	return sent;
}
