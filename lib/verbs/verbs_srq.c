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
	uint32_t slots, sge;
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
	srq->ibsrq.context = pd->context;
	if (to_dctx(pd->context)->remote != NULL) {
		rc = droce_remote_srq_create(srq, pd, attr);
		if (rc != 0) {
			free(srq);
			errno = -rc;
			return NULL;
		}
		slots = srq->max_wr;
		sge = srq->max_sge;
		goto created;
	}
	slots = droce_pow2_at_least(a->max_wr);
	sge = a->max_sge ? a->max_sge : 1;
	srq->slot_size = (uint32_t)(sizeof(struct droce_recv_wqe) + sge * sizeof(struct droce_sge));
	srq->ring_len = droce_ring_mem_size(slots, srq->slot_size);
	rc = droce_shm_alloc(&srq->shm, sizeof(struct droce_srq_ctl) + srq->ring_len, "droce-srq");
	if (rc == 0) {
		srq->ctl = srq->shm.addr;
		srq->ring = (uint8_t *)srq->shm.addr + sizeof(struct droce_srq_ctl);
		rc = droce_ring_init(srq->ring, srq->ring_len, slots, srq->slot_size);
		if (rc == 0)
			rc = droce_ring_prod_attach(&srq->rq, srq->ring, srq->ring_len);
		if (rc != 0)
			droce_shm_free(&srq->shm);
	}
	if (rc != 0) {
		free(srq);
		errno = -rc;
		return NULL;
	}
	srq->max_wr = slots;
	srq->max_sge = sge;
created:
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	pthread_mutex_init(&srq->ibsrq.mutex, NULL);
	pthread_cond_init(&srq->ibsrq.cond, NULL);
	srq->ibsrq.context = pd->context;
	srq->ibsrq.srq_context = attr->srq_context;
	srq->ibsrq.pd = pd;
	rc = srq->remote_handle != 0 ? 0 : droce_embedded_srq_add(srq);
	if (rc != 0) {
		droce_shm_free(&srq->shm);
		pthread_spin_destroy(&srq->lock);
		pthread_mutex_destroy(&srq->ibsrq.mutex);
		pthread_cond_destroy(&srq->ibsrq.cond);
		free(srq);
		errno = -rc;
		return NULL;
	}
	droce_pd_get(to_dpd(pd));
	a->max_wr = slots;
	a->max_sge = sge;
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

	if (__atomic_load_n(&srq->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	if (srq->remote_handle != 0) {
		int rc = droce_remote_destroy(ibsrq->context, DPROTO_DESTROY_SRQ,
					      srq->remote_handle, srq);

		if (rc != 0)
			return rc;
	}
	/* libibverbs semantics: no event names a freed SRQ, and every reported one is acked */
	droce_async_forget(ibsrq->context, ibsrq);
	pthread_mutex_lock(&ibsrq->mutex);
	while (ibsrq->events_completed != __atomic_load_n(&srq->async_reported, __ATOMIC_RELAXED))
		pthread_cond_wait(&ibsrq->cond, &ibsrq->mutex);
	pthread_mutex_unlock(&ibsrq->mutex);
	droce_embedded_srq_del(srq);
	droce_pd_put(to_dpd(ibsrq->pd));
	droce_shm_free(&srq->shm);
	pthread_spin_destroy(&srq->lock);
	pthread_mutex_destroy(&ibsrq->mutex);
	pthread_cond_destroy(&ibsrq->cond);
	free(srq);
	return 0;
}
