/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP services below the transport's roles: completions into the CQs (with the CQ
 * overrun, IBA's responder/requester class G), transmission of a built frame, the move to
 * Send Queue Error or Error, and the flushes of the SQE and ERR send passes. The roles
 * (rc_req.c, rc_comp.c, rc_resp.c, ud.c) call down into these; nothing here calls up.
 */
#include <errno.h>
#include <string.h>

#include "rc_priv.h"

bool droce_tcq_post(struct droce_tcq *cq, const struct droce_cqe *cqe)
{
	bool ok;

	droce_shared_lock_take(&cq->lock);
	ok = droce_ring_prod_enqueue_burst(&cq->prod, cqe, 1) == 1;
	if (ok)
		cq->cqes++;
	else
		cq->overrun++; /* a CQ overrun: the application made the CQ too small */
	droce_shared_lock_give(&cq->lock);
	return ok;
}

/*
 * A completion the CQ had no room for: the CQ is in error (IBV_EVENT_CQ_ERR, once) and the QP
 * whose completion was lost goes to ERR without an event of its own, as Linux rxe does
 * (IBTA 9.9.3 class G, a CQ overrun): its work can no longer be reported in order.
 */
static void cq_overrun(const struct droce_transport_env *env, struct droce_tqp *q,
		       struct droce_tcq *cq)
{
	/* once, also when QPs of two lcores overrun it at the same time */
	if (!__atomic_exchange_n(&cq->errored, true, __ATOMIC_RELAXED)) {
		if (env->cq_error != NULL)
			env->cq_error(env->arg, cq->user);
	}
	if (q->rc != NULL)
		droce_rc_to_error(env, q, 0);
	else
		droce_tqp_to_error(env, q, IBV_QPS_ERR, 0);
}

static void tqp_complete(const struct droce_transport_env *env, struct droce_tqp *q,
			 struct droce_tcq *cq, const struct droce_cqe *cqe, bool solicited)
{
	if (unlikely(!droce_tcq_post(cq, cqe))) {
		cq_overrun(env, q, cq);
		return;
	}
	/* an unsuccessful completion wakes a solicited-only arm too (ibv_req_notify_cq(3)) */
	if (env->cq_notify != NULL)
		env->cq_notify(env->arg, cq->user, solicited || cqe->status != IBV_WC_SUCCESS);
}

void droce_tqp_complete_send(const struct droce_transport_env *env, struct droce_tqp *q,
			     const struct droce_cqe *cqe)
{
	if (unlikely(cqe->status != IBV_WC_SUCCESS)) {
		if (cqe->status == IBV_WC_WR_FLUSH_ERR)
			q->stats.req_cqe_flush_error++;
		else
			q->stats.req_cqe_error++;
	}
	tqp_complete(env, q, q->scq, cqe, false);
}

void droce_tqp_complete_recv(const struct droce_transport_env *env, struct droce_tqp *q,
			     const struct droce_cqe *cqe, bool solicited)
{
	if (likely(cqe->status == IBV_WC_SUCCESS))
		q->stats.rdma_recvs++;
	else if (cqe->status == IBV_WC_WR_FLUSH_ERR)
		q->stats.resp_cqe_flush_error++;
	else
		q->stats.resp_cqe_error++;
	tqp_complete(env, q, q->rcq, cqe, solicited);
}

void droce_tqp_tx(const struct droce_transport_env *env, struct droce_tqp *q, struct rte_mbuf *m)
{
	q->stats.sent_pkts++;
	q->stats.sent_bytes += m->pkt_len;
	env->tx(env->arg, m);
}

void droce_tqp_to_error(const struct droce_transport_env *env, struct droce_tqp *q,
			enum ibv_qp_state state, enum ibv_event_type event)
{
	if (q->state == IBV_QPS_ERR || q->state == state)
		return;
	q->state = state;
	if (env->qp_error == NULL)
		return;
	env->qp_error(env->arg, q->user, state, event);
	/* a QP of an SRQ in Error takes no more of its WQEs: Last WQE Reached tells the
	 * application it may destroy the QP without losing any */
	if (state == IBV_QPS_ERR && q->srq != NULL)
		env->qp_error(env->arg, q->user, state, IBV_EVENT_QP_LAST_WQE_REACHED);
}

/* Map a send WQE's operation to the completion opcode of the requester. */
enum ibv_wc_opcode droce_wqe_wc_opcode(uint8_t op)
{
	switch (op) {
	case DROCE_WQE_WRITE:
	case DROCE_WQE_WRITE_IMM:
		return IBV_WC_RDMA_WRITE;
	case DROCE_WQE_READ:
		return IBV_WC_RDMA_READ;
	case DROCE_WQE_CMP_SWAP:
		return IBV_WC_COMP_SWAP;
	case DROCE_WQE_FETCH_ADD:
		return IBV_WC_FETCH_ADD;
	case DROCE_WQE_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case DROCE_WQE_BIND_MW:
		return IBV_WC_BIND_MW;
	default:
		return IBV_WC_SEND;
	}
}

int droce_tqp_flush_sq(const struct droce_transport_env *env, struct droce_tqp *q, int budget)
{
	int avail = droce_ring_cons_avail(&q->sq), n;

	if (avail < 0)
		return avail;
	/* zero copy: a flushed WQE may have frames in flight too; its buffer is the
	 * application's again once it completes */
	if (q->rc != NULL && unlikely(droce_zc_busy(q->rc->req.zc) != 0))
		return 0;
	for (n = 0; n < avail && n < budget; n++) {
		const struct droce_send_wqe *slot = droce_ring_cons_slot(&q->sq, 0);
		/* read each field once: the application may still write the slot */
		struct droce_cqe e = {
			.wr_id = __atomic_load_n(&slot->wr_id, __ATOMIC_RELAXED),
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = (uint8_t)droce_wqe_wc_opcode(
				__atomic_load_n(&slot->op, __ATOMIC_RELAXED)),
			.qp_num = q->qpn,
		};

		/* flushed WQEs complete whether or not they were signaled */
		droce_ring_cons_release(&q->sq, 1);
		droce_tqp_complete_send(env, q, &e);
	}
	return n;
}

int droce_tqp_flush_rq(const struct droce_transport_env *env, struct droce_tqp *q, int budget)
{
	int avail, n;

	if (q->srq != NULL)
		return 0; /* SRQ WQEs belong to the SRQ, not to a QP in error */
	avail = droce_ring_cons_avail(&q->rq);
	if (avail < 0)
		return avail;
	for (n = 0; n < avail && n < budget; n++) {
		const struct droce_recv_wqe *slot = droce_ring_cons_slot(&q->rq, 0);
		struct droce_cqe e = {
			.wr_id = __atomic_load_n(&slot->wr_id, __ATOMIC_RELAXED),
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.qp_num = q->qpn,
		};

		droce_ring_cons_release(&q->rq, 1);
		droce_tqp_complete_recv(env, q, &e, false);
	}
	return n;
}
