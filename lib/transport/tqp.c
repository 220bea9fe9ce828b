/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport QPs from above: attaching to their rings, modify, and the dispatchers of the
 * send pass and of received packets. A received RC/UC packet is decoded once here and
 * routed by its opcode's class, as Linux rxe's rxe_recv.c does: requests to the responder
 * (rc_resp.c), responses, ACKs and NAKs to the completer (rc_comp.c). The send pass runs
 * the completer's timer events, the responder's replies, the requester and the
 * completer's completions. The roles call down into the QP services (tqp_svc.c), never up.
 */
#include <errno.h>
#include <string.h>

#include "droce_transport.h"
#include "droce_wire_mbuf.h"
#include "rc_priv.h"

int droce_tqp_init(struct droce_tqp *q, uint32_t qpn, enum ibv_qp_type type, uint32_t pd,
		   void *sq_ring, size_t sq_len, void *rq_ring, size_t rq_len)
{
	int rc;

	memset(q, 0, sizeof(*q));
	q->qpn = qpn;
	q->type = type;
	q->pd = pd;
	q->state = IBV_QPS_RESET;
	q->pkey = 0xffff;
	rc = droce_ring_cons_attach(&q->sq, sq_ring, sq_len);
	if (rc != 0)
		return rc;
	/* the engine copies a slot before checking it: header to 1024 bytes, no more */
	if (q->sq.slot_size < sizeof(struct droce_send_wqe) || q->sq.slot_size > DROCE_TQP_SLOT_MAX)
		return -EINVAL;
	q->sq_mem = sq_ring;
	q->sq_mem_len = sq_len;
	if (rq_ring != NULL) {
		rc = droce_ring_cons_attach(&q->rq, rq_ring, rq_len);
		if (rc != 0)
			return rc;
		if (q->rq.slot_size < sizeof(struct droce_recv_wqe) ||
		    q->rq.slot_size > DROCE_TQP_SLOT_MAX)
			return -EINVAL;
		q->rq_mem = rq_ring;
		q->rq_mem_len = rq_len;
	}
	if (type == IBV_QPT_RC || type == IBV_QPT_UC)
		return droce_rc_init(q);
	return 0;
}

void droce_tqp_fini(const struct droce_transport_env *env, struct droce_tqp *q)
{
	droce_rc_fini(env, q);
}

/*
 * Empty a ring for RESET with the geometry the engine attached it with. The
 * header is in the application's memory: rewritten between the init and the
 * attach, it must not give the engine slots larger than its copies (1 KiB) or
 * elsewhere than before; such a ring is dead, as any the application broke.
 */
static void tqp_ring_reset(struct droce_ring_cons *r, void *mem, size_t len)
{
	const struct droce_ring_cons was = *r;

	droce_ring_init(mem, len, was.size, was.slot_size);
	if (droce_ring_cons_attach(r, mem, len) != 0 || r->slots != was.slots ||
	    r->size != was.size || r->slot_size != was.slot_size) {
		*r = was;
		r->corrupt = true;
	}
}

void droce_tqp_modify(const struct droce_transport_env *env, struct droce_tqp *q,
		      const struct ibv_qp_attr *a, int mask, enum ibv_qp_state state)
{
	/*
	 * A modify the application made before it could see the engine's move to
	 * Error (e.g. RTS->RTS) does not take the QP out of it: from Error only
	 * RESET leads on. The engine republishes the error (engine_ctl.c).
	 */
	if (q->state == IBV_QPS_ERR && state != IBV_QPS_RESET)
		state = IBV_QPS_ERR;
	if (mask & IBV_QP_QKEY)
		q->qkey = a->qkey;
	if (mask & IBV_QP_DEST_QPN)
		q->dest_qpn = a->dest_qp_num & DROCE_QPN_MASK;
	if (mask & IBV_QP_PATH_MTU)
		q->path_mtu = a->path_mtu;
	if (mask & IBV_QP_SQ_PSN)
		q->sq_psn = a->sq_psn & DROCE_PSN_MASK;
	if (mask & IBV_QP_RQ_PSN)
		q->rq_psn = a->rq_psn & DROCE_PSN_MASK;
	if (mask & IBV_QP_ACCESS_FLAGS)
		q->access = a->qp_access_flags;
	if (mask & IBV_QP_AV)
		q->av = a->ah_attr;
	if (mask & IBV_QP_TIMEOUT)
		q->timeout = a->timeout & 0x1f;
	if (mask & IBV_QP_RETRY_CNT)
		q->retry_cnt = a->retry_cnt & 7;
	if (mask & IBV_QP_RNR_RETRY)
		q->rnr_retry = a->rnr_retry & 7;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = a->min_rnr_timer & 0x1f;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (state == IBV_QPS_RESET) {
		/*
		 * RESET drops every WQE without a completion: the engine empties the
		 * rings itself, between two loop passes, so no pass sees them change
		 * under it; the verbs layer re-attaches its producers afterwards.
		 */
		tqp_ring_reset(&q->sq, q->sq_mem, q->sq_mem_len);
		if (q->rq_mem != NULL)
			tqp_ring_reset(&q->rq, q->rq_mem, q->rq_mem_len);
		q->neigh_tries = 0;
		memset(&q->stats, 0, sizeof(q->stats));
	}
	/* into SQD: drain, then report it, with the event when asked; SQD -> SQD reports the
	 * drained queue again (the verbs layer's sq_draining follows each modify), no event */
	if (state == IBV_QPS_SQD) {
		q->sqd_notify = q->state != IBV_QPS_SQD && (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) &&
				a->en_sqd_async_notify;
		q->sqd_drained = false;
	}
	if (q->rc != NULL) {
		enum ibv_qp_state old = q->state;

		/* RTR -> RTS starts the requester at sq_psn; RESET forgets everything */
		if (state == IBV_QPS_RESET)
			droce_rc_reset(env, q, true);
		else if (state == IBV_QPS_RTS && old != IBV_QPS_RTS && old != IBV_QPS_SQD) {
			/* SQE -> RTS (UC) goes on after the PSNs already used, unless told */
			if (old == IBV_QPS_SQE && !(mask & IBV_QP_SQ_PSN))
				q->sq_psn = q->rc->req.sent_hi;
			droce_rc_reset(env, q, false);
		}
		if (mask & (IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY)) {
			q->rc->comp.retry_left = q->retry_cnt;
			q->rc->comp.rnr_left = q->rnr_retry;
		}
		q->state = state;
		/* asked for by the application: no event, the verbs layer knows */
		if (state == IBV_QPS_ERR && old != IBV_QPS_ERR && env != NULL)
			droce_rc_to_error(env, q, 0);
		return;
	}
	q->state = state;
}

static void sq_drained(const struct droce_transport_env *env, struct droce_tqp *q)
{
	q->sqd_drained = true;
	if (env->sq_drained != NULL)
		env->sq_drained(env->arg, q->user, q->sqd_notify);
}

/* The send pass of an RC/UC QP that sends: the requester, then the completer's completions. */
static int rc_send_pass(const struct droce_transport_env *env, struct droce_tqp *q, int budget)
{
	int n = droce_rc_req_send(env, q, budget);

	if (n >= 0)
		droce_rc_comp_run(env, q);
	return n;
}

int droce_tqp_send(const struct droce_transport_env *env, struct droce_tqp *q, uint32_t now_us,
		   int budget)
{
	if (q->rc != NULL) {
		int n;

		/* the completer acts on the timers that fired (a timeout's go-back or failure)
		 * before anything is sent: what it decides is this pass's */
		droce_rc_comp_timer_events(env, q);
		switch (q->state) {
		case IBV_QPS_RTR:
			return droce_rc_resp_send(env, q, budget);
		case IBV_QPS_SQD:
			/* the messages begun before SQD still go out (and are retried) */
			n = droce_rc_resp_send(env, q, budget);
			if (q->state == IBV_QPS_SQD)
				n += rc_send_pass(env, q, budget);
			if (q->state == IBV_QPS_SQD && !q->sqd_drained && droce_rc_sq_drained(q))
				sq_drained(env, q);
			return n;
		case IBV_QPS_RTS:
			n = droce_rc_resp_send(env, q, budget);
			if (q->state == IBV_QPS_RTS)
				n += rc_send_pass(env, q, budget);
			return n;
		default:
			break;
		}
	}
	switch (q->state) {
	case IBV_QPS_RTS:
		break;
	case IBV_QPS_SQE:
		return droce_tqp_flush_sq(env, q, budget);
	case IBV_QPS_ERR: {
		int n = droce_tqp_flush_sq(env, q, budget);

		return n + droce_tqp_flush_rq(env, q, budget);
	}
	case IBV_QPS_SQD:
		/* UD: a WQE is done once sent, so nothing is ever half sent; SQD holds the rest */
		if (!q->sqd_drained)
			sq_drained(env, q);
		return 0;
	default:
		return 0; /* RESET/INIT/RTR take none */
	}
	if (q->type == IBV_QPT_UD)
		return droce_ud_send(env, q, now_us, budget);
	return -EOPNOTSUPP; /* RC and UC arrive with their requesters */
}

/*
 * An RC/UC packet, decoded once (IBTA 9.6: header validation) and routed by its opcode's
 * class: a response (ACK, NAK, READ response, atomic ACK) to the completer, a request to
 * the responder.
 */
static int rc_recv(const struct droce_transport_env *env, struct droce_tqp *q, struct rte_mbuf *m,
		   const struct droce_pkt *pkt)
{
	struct droce_hdr_fields f;

	/* another service's opcode: silently dropped (IBTA 9.6) */
	if (unlikely(!(pkt->mask & rc_svc(q)->opm))) {
		rte_pktmbuf_free(m);
		return -EPROTO;
	}
	droce_pkt_fields_mbuf(pkt, m, &f);
	/* a P_Key that does not match the QP's, base key compared (IBTA 9.6) */
	if (unlikely((f.pkey & 0x7fff) != (q->pkey & 0x7fff))) {
		q->stats.pkey_violations++;
		rte_pktmbuf_free(m);
		return -EACCES;
	}
	if (pkt->mask & DROCE_OPM_RESP)
		return droce_rc_comp_recv(env, q, m, pkt, &f);
	return droce_rc_resp_recv(env, q, m, pkt, &f);
}

int droce_tqp_recv(const struct droce_transport_env *env, struct droce_tqp *q, struct rte_mbuf *m,
		   const struct droce_pkt *pkt)
{
	/* a QP receives from RTR on (IBTA QP state table); RESET/INIT/ERR drop packets */
	if (q->state == IBV_QPS_RESET || q->state == IBV_QPS_INIT || q->state == IBV_QPS_ERR) {
		q->stats.bad_state_drop++;
		rte_pktmbuf_free(m);
		return -EINVAL;
	}
	q->stats.rcvd_pkts++;
	q->stats.rcvd_bytes += m->pkt_len;
	if (q->type == IBV_QPT_UD)
		return droce_ud_recv(env, q, m, pkt);
	if (q->rc != NULL)
		return rc_recv(env, q, m, pkt);
	rte_pktmbuf_free(m);
	return -EOPNOTSUPP;
}
