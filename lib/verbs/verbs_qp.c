/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs: creation with their rings, the modify state machine (rules in
 * qp_attr.c), query and destroy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_qp_attr.h"
#include "verbs_limits.h"
#include "verbs_priv.h"

/* Operations a QP type can carry, as IBV_QP_EX_WITH_* bits (the ibv_wr_* table). */
static uint64_t ops_for_type(enum ibv_qp_type type)
{
	const uint64_t uc = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			    IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW |
			    IBV_QP_EX_WITH_SEND_WITH_INV;

	switch (type) {
	case IBV_QPT_RC:
		return uc | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	case IBV_QPT_UC:
		return uc;
	case IBV_QPT_UD:
		return IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	default:
		return 0;
	}
}

static int check_init_attr(struct ibv_context *context, const struct ibv_qp_init_attr_ex *a)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS;

	if (a->comp_mask & ~known)
		return -EOPNOTSUPP; /* XRC, TSO, RSS: not provided */
	/* the mask alone asks for nothing; every creation flag is a feature droce lacks */
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags != 0)
		return -EOPNOTSUPP;
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || a->pd == NULL || a->pd->context != context)
		return -EINVAL;
	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC && a->qp_type != IBV_QPT_UD)
		return -EOPNOTSUPP;
	if (a->send_cq == NULL || a->recv_cq == NULL || a->send_cq->context != context ||
	    a->recv_cq->context != context)
		return -EINVAL;
	if (a->srq != NULL && a->srq->context != context)
		return -EINVAL;
	if (a->cap.max_send_wr > DROCE_MAX_QP_WR || a->cap.max_send_sge > DROCE_MAX_SGE ||
	    a->cap.max_inline_data > DROCE_MAX_INLINE)
		return -EINVAL;
	if (a->srq == NULL &&
	    (a->cap.max_recv_wr > DROCE_MAX_QP_WR || a->cap.max_recv_sge > DROCE_MAX_SGE))
		return -EINVAL;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (a->send_ops_flags & ~ops_for_type(a->qp_type)))
		return -EOPNOTSUPP; /* the seed: QP creation fails if an operation is not supported
				     */
	return 0;
}

struct ibv_qp *droce_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *a)
{
	struct droce_qp *qp;
	struct ibv_qp *ib;
	int rc = check_init_attr(context, a);

	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	qp->shm.fd = -1; /* no memory yet: an error path must not close descriptor 0 */
	qp->privileged = -1;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	qp->sq_sig_all = a->sq_sig_all != 0;
	qp->srq = a->srq != NULL ? to_dsrq(a->srq) : NULL;
	qp->send_ops_flags =
		(a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ? a->send_ops_flags : 0;
	ib = &qp->qpx.qp_base;
	ib->context = context;
	ib->qp_context = a->qp_context;
	ib->pd = a->pd;
	ib->send_cq = a->send_cq;
	ib->recv_cq = a->recv_cq;
	ib->srq = a->srq;
	ib->qp_type = a->qp_type;
	ib->state = IBV_QPS_RESET;
	ib->events_completed = 0;
	pthread_mutex_init(&ib->mutex, NULL);
	pthread_cond_init(&ib->cond, NULL);
	/* hold the CQs and the SRQ before the engine can complete to them */
	__atomic_fetch_add(&to_dcq(a->send_cq)->users, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&to_dcq(a->recv_cq)->users, 1, __ATOMIC_RELAXED);
	if (qp->srq != NULL)
		__atomic_fetch_add(&qp->srq->users, 1, __ATOMIC_RELAXED);
	rc = droce_ops(context)->create_qp(qp, a);
	if (rc != 0) {
		__atomic_fetch_sub(&to_dcq(a->send_cq)->users, 1, __ATOMIC_RELEASE);
		__atomic_fetch_sub(&to_dcq(a->recv_cq)->users, 1, __ATOMIC_RELEASE);
		if (qp->srq != NULL)
			__atomic_fetch_sub(&qp->srq->users, 1, __ATOMIC_RELEASE);
		pthread_spin_destroy(&qp->sq_lock);
		pthread_spin_destroy(&qp->rq_lock);
		pthread_mutex_destroy(&ib->mutex);
		pthread_cond_destroy(&ib->cond);
		free(qp);
		errno = -rc;
		return NULL;
	}
	ib->handle = ib->qp_num;
	qp->attr.qp_state = IBV_QPS_RESET;
	qp->attr.cur_qp_state = IBV_QPS_RESET;
	qp->attr.cap = qp->cap;
	droce_pd_get(to_dpd(a->pd));
	droce_qp_wr_init(qp);
	a->cap = qp->cap;
	return ib;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp;

	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = droce_create_qp_ex(pd->context, &ex);
	if (qp != NULL)
		attr->cap = ex.cap;
	return qp;
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct droce_qp *d = to_dqp(qp);

	/* only a QP created with send_ops_flags has the extended send API */
	return d->send_ops_flags != 0 ? &d->qpx : NULL;
}

/* Empty both rings: modify to RESET drops every WQE without a completion (IBA 10.3.1). */
void droce_qp_rings_reset(struct droce_qp *qp, bool init)
{
	/* with an engine running the QP, the engine empties the rings (droce_tqp_modify) */
	if (init)
		droce_ring_init(qp->sq_ring, qp->sq_len, qp->sq.size, qp->sq_slot_size);
	droce_ring_prod_attach(&qp->sq, qp->sq_ring, qp->sq_len);
	if (qp->rq_ring != NULL) {
		if (init)
			droce_ring_init(qp->rq_ring, qp->rq_len, qp->rq.size, qp->rq_slot_size);
		droce_ring_prod_attach(&qp->rq, qp->rq_ring, qp->rq_len);
	}
}

static void qp_limits(const struct droce_qp *qp, struct droce_qp_attr_limits *lim)
{
	const struct droce_device *d = to_dctx(qp->qpx.qp_base.context)->dev;

	memset(lim, 0, sizeof(*lim));
	lim->port_count = 1;
	lim->pkey_table_len = DROCE_PKEY_TABLE_LEN;
	lim->gid_table_len = (uint16_t)d->gid_count;
	lim->max_rd_atomic = DROCE_MAX_RD_ATOMIC;
	lim->max_dest_rd_atomic = DROCE_MAX_RD_ATOMIC;
	lim->max_mtu = droce_mtu_for_eth(d->port.eth_mtu);
	lim->privileged = qp->privileged >= 0 ? qp->privileged != 0 : geteuid() == 0;
}

/* Keep the attributes given, for ibv_query_qp(). */
static void qp_store_attr(struct droce_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	struct ibv_qp_attr *s = &qp->attr;

	if (mask & IBV_QP_PKEY_INDEX)
		s->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		s->port_num = a->port_num;
	if (mask & IBV_QP_ACCESS_FLAGS)
		s->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_QKEY)
		s->qkey = a->qkey;
	if (mask & IBV_QP_AV)
		s->ah_attr = a->ah_attr;
	if (mask & IBV_QP_PATH_MTU)
		s->path_mtu = a->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		s->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		s->rq_psn = a->rq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		s->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN)
		s->sq_psn = a->sq_psn;
	if (mask & IBV_QP_TIMEOUT)
		s->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		s->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		s->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		s->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_PATH_MIG_STATE)
		s->path_mig_state = a->path_mig_state;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		s->en_sqd_async_notify = a->en_sqd_async_notify;
}

int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct droce_qp *qp = to_dqp(ibqp);
	struct droce_context *c = to_dctx(ibqp->context);
	struct droce_qp_attr_limits lim;
	enum ibv_qp_state cur, next;
	int rc;

	qp_limits(qp, &lim);
	pthread_mutex_lock(&c->lock);
	cur = droce_qp_state(qp);
	rc = droce_qp_attr_check(ibqp->qp_type, cur, attr, attr_mask, &lim, &next);
	/* the purge records are made room for first: nothing half-done on ENOMEM */
	if (rc == 0 && next == IBV_QPS_RESET)
		rc = droce_cq_purge_reserve(to_dcq(ibqp->send_cq));
	if (rc == 0 && next == IBV_QPS_RESET)
		rc = droce_cq_purge_reserve(to_dcq(ibqp->recv_cq));
	if (rc == 0)
		rc = c->ops->modify_qp(qp, attr, attr_mask, next);
	if (rc == 0) {
		if (next == IBV_QPS_RESET) {
			/* the engine has taken the reset: what the QP completed is left behind */
			droce_cq_purge_qp(to_dcq(ibqp->send_cq), ibqp->qp_num, qp->srq != NULL);
			if (ibqp->recv_cq != ibqp->send_cq)
				droce_cq_purge_qp(to_dcq(ibqp->recv_cq), ibqp->qp_num,
						  qp->srq != NULL);
			memset(&qp->attr, 0, sizeof(qp->attr));
			qp->attr.cap = qp->cap;
		} else {
			qp_store_attr(qp, attr, attr_mask);
		}
		qp->attr.qp_state = next;
		qp->attr.cur_qp_state = next;
		ibqp->state = next;
	}
	pthread_mutex_unlock(&c->lock);
	return -rc; /* libibverbs: a positive errno */
}

int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct droce_qp *qp = to_dqp(ibqp);

	/* every attribute is returned, as libibverbs allows */
	*attr = qp->attr;
	attr->qp_state = droce_qp_state(qp);
	attr->cur_qp_state = attr->qp_state;
	/* draining from the modify to SQD until the engine reports the send queue empty */
	attr->sq_draining =
		attr->qp_state == IBV_QPS_SQD &&
		__atomic_load_n(&qp->ctl->drained_gen, __ATOMIC_ACQUIRE) != qp->ctl->gen;
	/* libibverbs keeps qp->state current on query too: the engine may have moved it */
	if (attr_mask & IBV_QP_STATE)
		ibqp->state = attr->qp_state;
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->srq = ibqp->srq;
	init_attr->cap = qp->cap;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->sq_sig_all = qp->sq_sig_all;
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct droce_qp *qp = to_dqp(ibqp);
	int rc;

	/* the engine lets go first: after this no event about the QP can be raised */
	rc = droce_ops(ibqp->context)->destroy_qp(qp);
	if (rc != 0)
		return -rc;
	/* libibverbs semantics: no event names a freed QP, and every reported one is acked */
	droce_async_forget(ibqp->context, ibqp);
	pthread_mutex_lock(&ibqp->mutex);
	while (ibqp->events_completed != __atomic_load_n(&qp->async_reported, __ATOMIC_RELAXED))
		pthread_cond_wait(&ibqp->cond, &ibqp->mutex);
	pthread_mutex_unlock(&ibqp->mutex);
	__atomic_fetch_sub(&to_dcq(ibqp->send_cq)->users, 1, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&to_dcq(ibqp->recv_cq)->users, 1, __ATOMIC_RELEASE);
	if (qp->srq != NULL)
		__atomic_fetch_sub(&qp->srq->users, 1, __ATOMIC_RELEASE);
	droce_pd_put(to_dpd(ibqp->pd));
	droce_shm_free(&qp->shm);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	free(qp);
	return 0;
}
