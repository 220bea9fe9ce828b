/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues: a receive ring several QPs draw from, and the limit
 * the engine watches to raise IBV_EVENT_SRQ_LIMIT_REACHED.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_limits.h"
#include "verbs_priv.h"

/* Arm the limit (0 disarms): limit first, then the sequence the engine watches. */
static void srq_arm(struct droce_srq *srq, uint32_t limit)
{
	__atomic_store_n(&srq->ctl->limit, limit, __ATOMIC_RELAXED);
	if (limit != 0)
		/* pairs with the engine's acquire load of arm_seq: it sees the limit */
		__atomic_store_n(&srq->ctl->arm_seq, ++srq->arm_seq, __ATOMIC_RELEASE);
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_attr *a = &attr->attr;
	struct droce_srq *srq;
	int rc;

	/* srq_limit is ignored at creation (ibv_create_srq(3)): arm with ibv_modify_srq */
	if (a->max_wr == 0 || a->max_wr > DROCE_MAX_SRQ_WR || a->max_sge > DROCE_MAX_SRQ_SGE) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	srq->shm.fd = -1; /* no memory yet: an error path must not close descriptor 0 */
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	pthread_mutex_init(&srq->ibsrq.mutex, NULL);
	pthread_cond_init(&srq->ibsrq.cond, NULL);
	srq->ibsrq.context = pd->context;
	srq->ibsrq.srq_context = attr->srq_context;
	srq->ibsrq.pd = pd;
	rc = droce_ops(pd->context)->create_srq(srq, attr);
	if (rc != 0) {
		pthread_spin_destroy(&srq->lock);
		pthread_mutex_destroy(&srq->ibsrq.mutex);
		pthread_cond_destroy(&srq->ibsrq.cond);
		free(srq);
		errno = -rc;
		return NULL;
	}
	droce_pd_get(to_dpd(pd));
	a->max_wr = srq->max_wr;
	a->max_sge = srq->max_sge;
	return &srq->ibsrq;
}

int ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int attr_mask)
{
	struct droce_srq *srq = to_dsrq(ibsrq);

	if (attr_mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	/* resizing a ring the engine reads needs the engine: refused, as some NICs do */
	if (attr_mask & IBV_SRQ_MAX_WR)
		return EINVAL;
	if ((attr_mask & IBV_SRQ_LIMIT) && attr->srq_limit > srq->max_wr)
		return EINVAL;
	if (attr_mask & IBV_SRQ_LIMIT) {
		pthread_spin_lock(&srq->lock);
		srq_arm(srq, attr->srq_limit);
		pthread_spin_unlock(&srq->lock);
	}
	return 0;
}

int ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct droce_srq *srq = to_dsrq(ibsrq);
	uint32_t fired = __atomic_load_n(&srq->ctl->fired_seq, __ATOMIC_ACQUIRE);

	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	/* an armed limit reads back; once the event fired the SRQ is disarmed (limit 0) */
	attr->srq_limit = fired == srq->arm_seq ? 0 : srq->ctl->limit;
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct droce_srq *srq = to_dsrq(ibsrq);
	int rc;

	if (__atomic_load_n(&srq->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	/* the engine lets go first: after this no event about the SRQ can be raised */
	rc = droce_ops(ibsrq->context)->destroy_srq(srq);
	if (rc != 0)
		return -rc;
	/* libibverbs semantics: no event names a freed SRQ, and every reported one is acked */
	droce_async_forget(ibsrq->context, ibsrq);
	pthread_mutex_lock(&ibsrq->mutex);
	while (ibsrq->events_completed != __atomic_load_n(&srq->async_reported, __ATOMIC_RELAXED))
		pthread_cond_wait(&ibsrq->cond, &ibsrq->mutex);
	pthread_mutex_unlock(&ibsrq->mutex);
	droce_pd_put(to_dpd(ibsrq->pd));
	droce_shm_free(&srq->shm);
	pthread_spin_destroy(&srq->lock);
	pthread_mutex_destroy(&ibsrq->mutex);
	pthread_cond_destroy(&ibsrq->cond);
	free(srq);
	return 0;
}
