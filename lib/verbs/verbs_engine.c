/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's side of the verbs objects (droce_verbs_engine.h). */
#include <errno.h>

#include "droce_verbs_engine.h"
#include "verbs_priv.h"

static void shm_view(const struct droce_shm *m, void *addr, size_t len, struct droce_shm_view *v)
{
	v->addr = addr;
	v->len = len;
	v->fd = m->fd;
	v->off = addr != NULL ? (size_t)((uint8_t *)addr - (uint8_t *)m->addr) : 0;
}

uint32_t droce_verbs_pd_id(struct ibv_pd *pd)
{
	return to_dpd(pd)->id;
}

int droce_verbs_qp_view(struct ibv_qp *ibqp, struct droce_qp_view *v)
{
	struct droce_qp *qp;

	if (ibqp == NULL || v == NULL)
		return -EINVAL;
	qp = to_dqp(ibqp);
	v->qpn = ibqp->qp_num;
	v->type = ibqp->qp_type;
	v->pd = to_dpd(ibqp->pd)->id;
	shm_view(&qp->shm, qp->sq_ring, qp->sq_len, &v->sq);
	shm_view(&qp->shm, qp->rq_ring, qp->rq_len, &v->rq);
	v->send_cq = ibqp->send_cq;
	v->recv_cq = ibqp->recv_cq;
	v->srq = ibqp->srq;
	v->sq_sig_all = qp->sq_sig_all;
	return 0;
}

int droce_verbs_cq_view(struct ibv_cq *ibcq, struct droce_cq_view *v)
{
	struct droce_cq *cq;

	if (ibcq == NULL || v == NULL)
		return -EINVAL;
	cq = to_dcq(ibcq);
	shm_view(&cq->shm, cq->ring, cq->ring_len, &v->ring);
	return 0;
}

int droce_verbs_srq_view(struct ibv_srq *ibsrq, struct droce_srq_view *v)
{
	struct droce_srq *srq;

	if (ibsrq == NULL || v == NULL)
		return -EINVAL;
	srq = to_dsrq(ibsrq);
	shm_view(&srq->shm, srq->ring, srq->ring_len, &v->ring);
	v->pd = to_dpd(ibsrq->pd)->id;
	return 0;
}

enum ibv_qp_state droce_verbs_qp_state(struct ibv_qp *ibqp)
{
	return droce_qp_state(to_dqp(ibqp));
}

int droce_verbs_qp_error(struct ibv_qp *ibqp, enum ibv_qp_state state, enum ibv_event_type event)
{
	struct droce_qp *qp = to_dqp(ibqp);
	uint32_t gen;

	if (state != IBV_QPS_SQE && state != IBV_QPS_ERR)
		return -EINVAL;
	gen = __atomic_load_n(&qp->gen_own, __ATOMIC_ACQUIRE);
	__atomic_store_n(&qp->err_state_own, state, __ATOMIC_RELAXED);
	/* pairs with the acquire load of err_gen_own in droce_qp_state() */
	__atomic_store_n(&qp->err_gen_own, gen, __ATOMIC_RELEASE);
	/* the shared copies, for an application of droced */
	__atomic_store_n(&qp->ctl->err_state, state, __ATOMIC_RELAXED);
	__atomic_store_n(&qp->ctl->err_gen, gen, __ATOMIC_RELEASE);
	if (event != 0) {
		struct ibv_async_event ev = {.element.qp = ibqp, .event_type = event};

		return droce_async_push(ibqp->context, &ev);
	}
	return 0;
}

int droce_verbs_qp_drained(struct ibv_qp *ibqp, bool notify)
{
	struct droce_qp *qp = to_dqp(ibqp);
	uint32_t gen = __atomic_load_n(&qp->gen_own, __ATOMIC_ACQUIRE);

	/* pairs with the acquire load in ibv_query_qp(): sq_draining ends */
	__atomic_store_n(&qp->ctl->drained_gen, gen, __ATOMIC_RELEASE);
	if (notify) {
		struct ibv_async_event ev = {.element.qp = ibqp,
					     .event_type = IBV_EVENT_SQ_DRAINED};

		return droce_async_push(ibqp->context, &ev);
	}
	return 0;
}

int droce_verbs_cq_notify(struct ibv_cq *ibcq, bool solicited)
{
	struct droce_cq *cq = to_dcq(ibcq);
	/* pairs with the release store of arm_seq in droce_req_notify_cq() */
	uint32_t arm = __atomic_load_n(&cq->ctl->arm_seq, __ATOMIC_ACQUIRE);
	uint32_t done = __atomic_load_n(&cq->ctl->notified_seq, __ATOMIC_RELAXED);
	int rc;

	if (arm == done || ibcq->channel == NULL)
		return 0;
	if (__atomic_load_n(&cq->ctl->arm_solicited, __ATOMIC_RELAXED) && !solicited)
		return 0;
	/* one notification per arming, also when QPs of two engine lcores complete into the
	 * CQ at once: the lcore that moves notified_seq sends it */
	if (!__atomic_compare_exchange_n(&cq->ctl->notified_seq, &done, arm, false,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return 0;
	/* pairs with the acquire load in droce_remote_get_cq_event(): counted before the fd */
	__atomic_store_n(&cq->ctl->notify_count, cq->ctl->notify_count + 1, __ATOMIC_RELEASE);
	rc = droce_channel_push(to_dch(ibcq->channel), cq);
	return rc != 0 ? rc : 1;
}

int droce_verbs_cq_error(struct ibv_cq *ibcq)
{
	struct ibv_async_event ev = {.element.cq = ibcq, .event_type = IBV_EVENT_CQ_ERR};

	__atomic_store_n(&to_dcq(ibcq)->ctl->overrun, 1, __ATOMIC_RELEASE);
	return droce_async_push(ibcq->context, &ev);
}

int droce_verbs_srq_check_limit(struct ibv_srq *ibsrq, uint32_t wqes_left)
{
	struct droce_srq *srq = to_dsrq(ibsrq);
	/* pairs with the release store of arm_seq in srq_arm(): the limit is visible */
	uint32_t arm = __atomic_load_n(&srq->ctl->arm_seq, __ATOMIC_ACQUIRE);
	uint32_t limit = __atomic_load_n(&srq->ctl->limit, __ATOMIC_RELAXED);
	uint32_t fired = __atomic_load_n(&srq->ctl->fired_seq, __ATOMIC_RELAXED);
	struct ibv_async_event ev = {.element.srq = ibsrq,
				     .event_type = IBV_EVENT_SRQ_LIMIT_REACHED};
	int rc;

	if (arm == fired || limit == 0 || wqes_left >= limit)
		return 0;
	/* once per arming, also with QPs of two engine lcores taking from the SRQ */
	if (!__atomic_compare_exchange_n(&srq->ctl->fired_seq, &fired, arm, false, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED))
		return 0;
	rc = droce_async_push(ibsrq->context, &ev);
	return rc != 0 ? rc : 1;
}

int droce_verbs_async_event(struct ibv_context *context, const struct ibv_async_event *ev)
{
	return droce_async_push(context, ev);
}
