/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues: a ring of CQEs the engine produces and ibv_poll_cq()
 * consumes with plain loads (no system call), plus the arming words the
 * engine reads to decide whether to signal the completion channel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_limits.h"
#include "verbs_priv.h"

static void cqe_to_wc(const struct droce_cqe *e, struct ibv_wc *wc)
{
	wc->wr_id = e->wr_id;
	wc->status = (enum ibv_wc_status)e->status;
	wc->opcode = (enum ibv_wc_opcode)e->opcode;
	wc->vendor_err = e->vendor_err;
	wc->byte_len = e->byte_len;
	wc->imm_data = e->imm;
	wc->qp_num = e->qp_num;
	wc->src_qp = e->src_qp;
	wc->wc_flags = e->wc_flags;
	wc->pkey_index = e->pkey_index;
	wc->slid = e->slid;
	wc->sl = e->sl;
	wc->dlid_path_bits = e->dlid_path_bits;
}

int droce_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct droce_cq *cq = to_dcq(ibcq);
	int avail, used = 0, got = 0;

	if (n <= 0)
		return 0;
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
	avail = droce_ring_cons_avail(&cq->cons);
	while (used < avail && got < n) {
		struct droce_cqe e;

		/* copy first: the slot is in memory the engine writes */
		memcpy(&e, droce_ring_cons_slot(&cq->cons, (uint32_t)used), sizeof(e));
		/* an entry of a QP reset since is released without being returned */
		if (cq->purge_count == 0 ||
		    !droce_cq_purged(cq, cq->cons.tail + (uint32_t)used, &e))
			cqe_to_wc(&e, &wc[got++]);
		used++;
	}
	if (used > 0) {
		droce_ring_cons_release(&cq->cons, (uint32_t)used);
		if (cq->purge_count != 0)
			droce_cq_purge_expire(cq);
	}
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
	/* a negative count: the ring was corrupted (libibverbs: < 0 on error) */
	return avail < 0 ? avail : got;
}

int droce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct droce_cq *cq = to_dcq(ibcq);

	if (ibcq->channel == NULL)
		return EINVAL;
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
	__atomic_store_n(&cq->ctl->arm_solicited, solicited_only ? 1 : 0, __ATOMIC_RELAXED);
	/* pairs with the engine's acquire load of arm_seq: it sees arm_solicited too */
	__atomic_store_n(&cq->ctl->arm_seq, ++cq->arm_seq, __ATOMIC_RELEASE);
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
	return 0;
}

struct ibv_cq_ex *droce_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr)
{
	static const uint32_t known_flags =
		IBV_CREATE_CQ_ATTR_SINGLE_THREADED | IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	const struct droce_backend_ops *ops = droce_ops(context);
	struct droce_cq *cq;
	int rc;

	if (attr->cqe < 1 || attr->cqe > DROCE_MAX_CQE ||
	    (attr->comp_mask &
	     ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && (attr->flags & ~known_flags)) ||
	    (attr->comp_vector != 0 && attr->comp_vector >= (uint32_t)context->num_comp_vectors)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->wc_flags &
	    ~(uint64_t)(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
			IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
			IBV_WC_EX_WITH_DLID_PATH_BITS)) {
		errno = EOPNOTSUPP; /* timestamps, flow tags, TM: not provided */
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	cq->shm.fd = -1; /* no memory yet: an error path must not close descriptor 0 */
	cq->single_threaded = (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
			      (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
	cq->wc_flags = attr->wc_flags;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	pthread_mutex_init(&cq->ibcq.mutex, NULL);
	pthread_cond_init(&cq->ibcq.cond, NULL);
	cq->ibcq.context = context;
	cq->ibcq.channel = attr->channel;
	cq->ibcq.cq_context = attr->cq_context;
	droce_cq_ex_init(cq);
	rc = ops->create_cq(cq, attr);
	if (rc == 0 && attr->channel != NULL) {
		rc = ops->channel_join(to_dch(attr->channel), cq);
		if (rc != 0) {
			ops->destroy_cq(cq);
			droce_shm_free(&cq->shm);
		}
	}
	if (rc != 0) {
		pthread_spin_destroy(&cq->lock);
		pthread_mutex_destroy(&cq->ibcq.mutex);
		pthread_cond_destroy(&cq->ibcq.cond);
		free(cq);
		errno = -rc;
		return NULL;
	}
	if (attr->channel != NULL)
		__atomic_fetch_add(&to_dch(attr->channel)->users, 1, __ATOMIC_RELAXED);
	return &cq->ibcq;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe < 0 ? 0 : (uint32_t)cqe,
		.cq_context = cq_context,
		.channel = channel,
		.comp_vector = comp_vector < 0 ? UINT32_MAX : (uint32_t)comp_vector,
	};
	struct ibv_cq_ex *cq = droce_create_cq_ex(context, &attr);

	return cq != NULL ? ibv_cq_ex_to_cq(cq) : NULL;
}

int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	/* the ring is shared with the engine: resizing needs the engine's
	 * cooperation, which the transport provides; until then it is refused */
	(void)ibcq;
	(void)cqe;
	return EOPNOTSUPP;
}

int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct droce_cq *cq = to_dcq(ibcq);
	const struct droce_backend_ops *ops = droce_ops(ibcq->context);
	int rc;

	if (__atomic_load_n(&cq->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	/* the engine lets go first: after this nothing signals about the CQ */
	rc = ops->destroy_cq(cq);
	if (rc != 0)
		return -rc;
	/* no async event names a freed CQ, and every reported one is acked (libibverbs) */
	droce_async_forget(ibcq->context, ibcq);
	pthread_mutex_lock(&cq->ibcq.mutex);
	while (cq->ibcq.async_events_completed !=
	       __atomic_load_n(&cq->async_reported, __ATOMIC_RELAXED))
		pthread_cond_wait(&cq->ibcq.cond, &cq->ibcq.mutex);
	pthread_mutex_unlock(&cq->ibcq.mutex);
	if (ibcq->channel != NULL) {
		struct droce_comp_channel *ch = to_dch(ibcq->channel);

		droce_ops(ch->ibch.context)->channel_forget(ch, cq);
		/* libibverbs semantics: wait until every reported event is acknowledged */
		pthread_mutex_lock(&cq->ibcq.mutex);
		while (cq->ibcq.comp_events_completed !=
		       __atomic_load_n(&cq->events_reported, __ATOMIC_RELAXED))
			pthread_cond_wait(&cq->ibcq.cond, &cq->ibcq.mutex);
		pthread_mutex_unlock(&cq->ibcq.mutex);
		__atomic_fetch_sub(&ch->users, 1, __ATOMIC_RELEASE);
	}
	droce_shm_free(&cq->shm);
	droce_cq_purge_free(cq);
	pthread_spin_destroy(&cq->lock);
	pthread_mutex_destroy(&cq->ibcq.mutex);
	pthread_cond_destroy(&cq->ibcq.cond);
	free(cq);
	return 0;
}
