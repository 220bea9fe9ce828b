/* SPDX-License-Identifier: BSD-3-Clause */
/* Transport QPs: attaching to their rings, modify, completion writing, flushing. */
#include <errno.h>
#include <string.h>

#include "droce_transport.h"
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
	if (q->rc != NULL && env != NULL && q->rc->env == NULL)
		q->rc->env = env;
	droce_rc_fini(q);
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

void droce_tqp_modify(struct droce_tqp *q, const struct ibv_qp_attr *a, int mask,
		      enum ibv_qp_state state)
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
			droce_rc_reset(q, true);
		else if (state == IBV_QPS_RTS && old != IBV_QPS_RTS && old != IBV_QPS_SQD) {
			/* SQE -> RTS (UC) goes on after the PSNs already used, unless told */
			if (old == IBV_QPS_SQE && !(mask & IBV_QP_SQ_PSN))
				q->sq_psn = q->rc->sent_hi;
			droce_rc_reset(q, false);
		}
		if (mask & (IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY)) {
			q->rc->retry_left = q->retry_cnt;
			q->rc->rnr_left = q->rnr_retry;
		}
		q->state = state;
		/* asked for by the application: no event, the verbs layer knows */
		if (state == IBV_QPS_ERR && old != IBV_QPS_ERR && q->rc->env != NULL)
			droce_rc_to_error(q->rc->env, q, 0);
		return;
	}
	q->state = state;
}

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
 * (IBA's CQ overrun, class G): its work can no longer be reported in order.
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
	if (q->rc != NULL && unlikely(droce_zc_busy(q->rc->zc) != 0))
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

static void sq_drained(const struct droce_transport_env *env, struct droce_tqp *q)
{
	q->sqd_drained = true;
	if (env->sq_drained != NULL)
		env->sq_drained(env->arg, q->user, q->sqd_notify);
}

int droce_tqp_send(const struct droce_transport_env *env, struct droce_tqp *q, uint32_t now_us,
		   int budget)
{
	if (q->rc != NULL) {
		int n;

		q->rc->env = env;
		switch (q->state) {
		case IBV_QPS_RTR:
			return droce_rc_resp_send(env, q, budget);
		case IBV_QPS_SQD:
			/* the messages begun before SQD still go out (and are retried) */
			n = droce_rc_resp_send(env, q, budget);
			if (q->state == IBV_QPS_SQD)
				n += droce_rc_req_send(env, q, budget);
			if (q->state == IBV_QPS_SQD && !q->sqd_drained && droce_rc_sq_drained(q))
				sq_drained(env, q);
			return n;
		case IBV_QPS_RTS:
			n = droce_rc_resp_send(env, q, budget);
			if (q->state == IBV_QPS_RTS)
				n += droce_rc_req_send(env, q, budget);
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
		return droce_rc_resp_recv(env, q, m, pkt);
	rte_pktmbuf_free(m);
	return -EOPNOTSUPP;
}
