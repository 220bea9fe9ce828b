/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The embedded backend's objects: their rings and control words in memfds of
 * this process, their keys in the process's key table, and each handed to the
 * engine of this process when it runs (verbs_embedded.c). Without an engine
 * the objects work alone: what is posted stays on the rings.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "droce_engine.h"
#include "droce_mem_maps.h"
#include "droce_mr.h"
#include "verbs_limits.h"
#include "verbs_priv.h"

/* How long deregistration waits for zero-copy frames still holding the MR's bytes. */
#define DROCE_DEREG_WAIT_US 2000000u

/* ------------------------------------------------------------ PDs, MRs, MWs */

static int pd_alloc(struct droce_pd *pd)
{
	(void)pd; /* the PD is its id: nothing to make */
	return 0;
}

static int pd_dealloc(struct droce_pd *pd)
{
	(void)pd;
	return 0;
}

/*
 * The range must be mapped, and writable if the MR lets anyone write it, as the kernel's
 * ib_umem_get() demands when it pins the pages (EFAULT): the engine copies into and out of
 * it. A length 0 or a wrapping range is left to droce_mr_reg() and its EINVAL.
 */
static int mr_check_mapped(const void *addr, size_t length, unsigned int access)
{
	const unsigned int writes =
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	uint64_t a = (uint64_t)(uintptr_t)addr;

	if (length == 0 || a + length < a)
		return 0;
	return droce_mem_check_mapped(a, length, (access & writes) != 0);
}

static int mr_reg(struct droce_mr *mr, struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		  unsigned int access)
{
	struct droce_mr_table *t = droce_verbs_mr_table();
	struct droce_mr_keys keys;
	int rc;

	if (t == NULL)
		return -ENOMEM;
	rc = mr_check_mapped(addr, length, access);
	if (rc != 0)
		return rc;
	rc = droce_mr_reg(t, to_dpd(pd)->id, addr, length, iova, access, 0, &keys);
	if (rc != 0)
		return rc;
	mr->ibmr.lkey = keys.lkey;
	mr->ibmr.rkey = keys.rkey;
	return 0;
}

static int mr_rereg(struct droce_mr *mr, unsigned int flags, struct ibv_pd *pd, void *addr,
		    size_t length, unsigned int access)
{
	struct droce_mr_table *t = droce_verbs_mr_table();
	struct droce_mr_keys keys;
	struct droce_mr_info cur;
	int rc;

	if (t == NULL)
		return -ENOMEM;
	/* the range and rights the MR will have must be mapped as mr_reg() demands */
	rc = droce_mr_query(t, mr->ibmr.lkey, &cur);
	if (rc != 0)
		return rc;
	if (!(flags & IBV_REREG_MR_CHANGE_TRANSLATION)) {
		addr = (void *)(uintptr_t)cur.addr;
		length = cur.length;
	}
	rc = mr_check_mapped(addr, length,
			     flags & IBV_REREG_MR_CHANGE_ACCESS ? access : cur.access);
	if (rc != 0)
		return rc;
	rc = droce_mr_rereg(t, mr->ibmr.lkey, flags, to_dpd(pd)->id, addr, length, (uintptr_t)addr,
			    access, &keys);
	if (rc != 0)
		return rc;   /* the old MR is still valid */
	droce_engine_sync(); /* the old keys and range are out of use when this returns */
	mr->ibmr.lkey = keys.lkey;
	mr->ibmr.rkey = keys.rkey;
	return 0;
}

static int mr_dereg(struct droce_mr *mr)
{
	struct droce_mr_table *t = droce_verbs_mr_table();
	uint32_t lkey = mr->ibmr.lkey;
	int rc = t != NULL ? droce_mr_dereg(t, lkey) : -EINVAL;

	if (rc != 0)
		return rc; /* -EBUSY while windows are bound to it */
	/* the application may free the memory next: no packet may still be copying into it */
	droce_engine_sync();
	/*
	 * nor may a zero-copy frame still hold its bytes (doc/transport.md): the sync made every
	 * count taken under the old key visible; the engine frees the frames as the device takes
	 * them. Past the bound the MR is gone all the same (IBA makes deregistering memory with
	 * work in flight the consumer's error); droced then keeps the mapping.
	 */
	if (droce_mr_busy_wait(t, lkey, DROCE_DEREG_WAIT_US) != 0)
		fprintf(stderr, "droce: ibv_dereg_mr: frames still hold MR 0x%x after %u ms\n",
			lkey, DROCE_DEREG_WAIT_US / 1000);
	return 0;
}

static int mw_alloc(struct droce_mw *mw, struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct droce_mr_table *t = droce_verbs_mr_table();
	int rc;

	if (t == NULL)
		return -ENOMEM;
	rc = droce_mw_alloc(t, to_dpd(pd)->id,
			    type == IBV_MW_TYPE_1 ? DROCE_MW_TYPE_1 : DROCE_MW_TYPE_2, &mw->handle);
	if (rc == 0)
		mw->ibmw.rkey = mw->handle;
	return rc;
}

static int mw_dealloc(struct droce_mw *mw)
{
	int rc = droce_mw_dealloc(droce_verbs_mr_table(), mw->handle);

	if (rc == 0)
		droce_engine_sync();
	return rc;
}

/* -------------------------------------------------------------------- CQs */

static int cq_rings(struct droce_cq *cq, uint32_t cqe)
{
	/* every slot of a droce ring is usable: a ring of cqe slots holds cqe CQEs */
	uint32_t slots = droce_pow2_at_least(cqe);
	size_t ring_len = droce_ring_mem_size(slots, sizeof(struct droce_cqe));
	int rc;

	rc = droce_shm_alloc(&cq->shm, sizeof(struct droce_cq_ctl) + ring_len, "droce-cq");
	if (rc != 0)
		return rc;
	cq->ctl = cq->shm.addr;
	cq->ring = (uint8_t *)cq->shm.addr + sizeof(struct droce_cq_ctl);
	cq->ring_len = ring_len;
	rc = droce_ring_init(cq->ring, ring_len, slots, sizeof(struct droce_cqe));
	if (rc == 0)
		rc = droce_ring_cons_attach(&cq->cons, cq->ring, ring_len);
	if (rc != 0) {
		droce_shm_free(&cq->shm);
		return rc;
	}
	cq->ibcq.cqe = (int)slots;
	return 0;
}

static int cq_create(struct droce_cq *cq, const struct ibv_cq_init_attr_ex *attr)
{
	uint32_t id;
	int rc = cq_rings(cq, attr->cqe);

	cq->engine_id = -1;
	if (rc != 0 || !droce_engine_running())
		return rc;
	rc = droce_engine_cq_add(droce_cq_ibcq(cq), cq->ring, cq->ring_len, &id);
	if (rc != 0) {
		droce_shm_free(&cq->shm);
		return rc;
	}
	cq->engine_id = (int32_t)id;
	return 0;
}

static int cq_destroy(struct droce_cq *cq)
{
	if (cq->engine_id >= 0)
		droce_engine_cq_del((uint32_t)cq->engine_id);
	cq->engine_id = -1;
	return 0;
}

/* ------------------------------------------------------------------- SRQs */

static int srq_create(struct droce_srq *srq, struct ibv_srq_init_attr *attr)
{
	uint32_t slots = droce_pow2_at_least(attr->attr.max_wr);
	uint32_t sge = attr->attr.max_sge ? attr->attr.max_sge : 1;
	uint32_t id;
	int rc;

	srq->engine_id = -1;
	srq->slot_size = (uint32_t)(sizeof(struct droce_recv_wqe) + sge * sizeof(struct droce_sge));
	srq->ring_len = droce_ring_mem_size(slots, srq->slot_size);
	rc = droce_shm_alloc(&srq->shm, sizeof(struct droce_srq_ctl) + srq->ring_len, "droce-srq");
	if (rc != 0)
		return rc;
	srq->ctl = srq->shm.addr;
	srq->ring = (uint8_t *)srq->shm.addr + sizeof(struct droce_srq_ctl);
	rc = droce_ring_init(srq->ring, srq->ring_len, slots, srq->slot_size);
	if (rc == 0)
		rc = droce_ring_prod_attach(&srq->rq, srq->ring, srq->ring_len);
	if (rc == 0 && droce_engine_running()) {
		rc = droce_engine_srq_add(&srq->ibsrq, srq->ring, srq->ring_len, &id);
		if (rc == 0)
			srq->engine_id = (int32_t)id;
	}
	if (rc != 0) {
		droce_shm_free(&srq->shm);
		return rc;
	}
	srq->max_wr = slots;
	srq->max_sge = sge;
	return 0;
}

static int srq_destroy(struct droce_srq *srq)
{
	if (srq->engine_id >= 0)
		droce_engine_srq_del((uint32_t)srq->engine_id);
	srq->engine_id = -1;
	return 0;
}

/* -------------------------------------------------------------------- QPs */

/* QPNs 0 and 1 are the special QPs (SMI, GSI); droce hands out from 0x11 as Linux does. */
static uint32_t next_qpn = 0x11;

/* The next QPN, wrapping past 2^24 - 1 (the multicast QPN) back to 0x11: never 0 or 1. */
static uint32_t qpn_next(void)
{
	for (;;) {
		uint32_t n = __atomic_fetch_add(&next_qpn, 1, __ATOMIC_RELAXED) & 0xffffff;

		if (n >= 0x11 && n != 0xffffff)
			return n;
	}
}

static uint32_t round_up(uint32_t n, uint32_t to)
{
	return (n + to - 1) / to * to;
}

/* Lay out control words and both rings in one shared mapping. */
static int qp_rings(struct droce_qp *qp, const struct ibv_qp_init_attr_ex *a)
{
	/* with an SRQ the receive caps are ignored (ibv_create_qp(3)) and were not checked */
	uint32_t recv_wr = a->srq == NULL && a->cap.max_recv_wr ? a->cap.max_recv_wr : 1;
	uint32_t sq_slots = droce_pow2_at_least(a->cap.max_send_wr ? a->cap.max_send_wr : 1);
	uint32_t rq_slots = droce_pow2_at_least(recv_wr);
	uint32_t send_sge = a->cap.max_send_sge ? a->cap.max_send_sge : 1;
	uint32_t recv_sge = a->srq == NULL && a->cap.max_recv_sge ? a->cap.max_recv_sge : 1;
	uint32_t payload = send_sge * (uint32_t)sizeof(struct droce_sge);
	size_t off;
	int rc;

	if (a->cap.max_inline_data > payload)
		payload = a->cap.max_inline_data;
	qp->sq_slot_size = round_up((uint32_t)sizeof(struct droce_send_wqe) + payload, 64);
	qp->rq_slot_size = round_up((uint32_t)sizeof(struct droce_recv_wqe) +
					    recv_sge * (uint32_t)sizeof(struct droce_sge),
				    DROCE_RING_SLOT_ALIGN);
	qp->sq_len = droce_ring_mem_size(sq_slots, qp->sq_slot_size);
	qp->rq_len = a->srq != NULL ? 0 : droce_ring_mem_size(rq_slots, qp->rq_slot_size);
	rc = droce_shm_alloc(&qp->shm, sizeof(struct droce_qp_ctl) + qp->sq_len + qp->rq_len,
			     "droce-qp");
	if (rc != 0)
		return rc;
	qp->ctl = qp->shm.addr;
	off = sizeof(struct droce_qp_ctl);
	qp->sq_ring = (uint8_t *)qp->shm.addr + off;
	rc = droce_ring_init(qp->sq_ring, qp->sq_len, sq_slots, qp->sq_slot_size);
	if (rc == 0)
		rc = droce_ring_prod_attach(&qp->sq, qp->sq_ring, qp->sq_len);
	if (rc == 0 && a->srq == NULL) {
		qp->rq_ring = (uint8_t *)qp->sq_ring + qp->sq_len;
		rc = droce_ring_init(qp->rq_ring, qp->rq_len, rq_slots, qp->rq_slot_size);
		if (rc == 0)
			rc = droce_ring_prod_attach(&qp->rq, qp->rq_ring, qp->rq_len);
	}
	if (rc != 0) {
		droce_shm_free(&qp->shm);
		return rc;
	}
	/* what the QP really holds: every slot is usable */
	qp->cap.max_send_wr = sq_slots;
	qp->cap.max_send_sge = (qp->sq_slot_size - (uint32_t)sizeof(struct droce_send_wqe)) /
			       (uint32_t)sizeof(struct droce_sge);
	if (qp->cap.max_send_sge > DROCE_MAX_SGE)
		qp->cap.max_send_sge = DROCE_MAX_SGE;
	qp->cap.max_inline_data = a->cap.max_inline_data;
	qp->cap.max_recv_wr = a->srq != NULL ? 0 : rq_slots;
	qp->cap.max_recv_sge = a->srq != NULL ? 0 : recv_sge;
	return 0;
}

/* Hand the QP to the engine when it runs, and its CQs are the engine's. */
static int qp_engine_add(struct droce_qp *qp)
{
	struct ibv_qp *ib = &qp->qpx.qp_base;
	struct droce_cq *scq = to_dcq(ib->send_cq), *rcq = to_dcq(ib->recv_cq);
	struct droce_engine_qp d = {
		.port = to_dctx(ib->context)->dev->port.name,
		.qp = ib,
		.qpn = ib->qp_num,
		.type = ib->qp_type,
		.pd = to_dpd(ib->pd)->id,
		.sq_ring = qp->sq_ring,
		.sq_len = qp->sq_len,
		.rq_ring = qp->rq_ring,
		.rq_len = qp->rq_len,
		.srq = qp->srq != NULL ? qp->srq->engine_id : -1,
		.sq_sig_all = qp->sq_sig_all,
	};
	int rc;

	qp->in_engine = false;
	if (!droce_engine_running() || scq->engine_id < 0 || rcq->engine_id < 0)
		return 0;
	d.send_cq = (uint32_t)scq->engine_id;
	d.recv_cq = (uint32_t)rcq->engine_id;
	rc = droce_engine_qp_add(&d);
	if (rc == 0)
		qp->in_engine = true;
	return rc;
}

static int qp_create(struct droce_qp *qp, const struct ibv_qp_init_attr_ex *attr)
{
	int rc = qp_rings(qp, attr);

	if (rc != 0)
		return rc;
	qp->qpx.qp_base.qp_num = qpn_next();
	qp->ctl->state = IBV_QPS_RESET;
	qp->state_own = IBV_QPS_RESET;
	rc = qp_engine_add(qp);
	if (rc != 0)
		droce_shm_free(&qp->shm); /* a QP type whose transport is not there yet */
	return rc;
}

static int qp_modify(struct droce_qp *qp, struct ibv_qp_attr *attr, int mask,
		     enum ibv_qp_state next)
{
	if (next == IBV_QPS_RESET && !qp->in_engine)
		droce_qp_rings_reset(qp, true);
	__atomic_store_n(&qp->state_own, next, __ATOMIC_RELAXED);
	/* pairs with the acquire load of gen_own in droce_qp_state() and the engine */
	__atomic_store_n(&qp->gen_own, qp->gen_own + 1, __ATOMIC_RELEASE);
	/* the shared copies, for an application of droced */
	__atomic_store_n(&qp->ctl->state, next, __ATOMIC_RELAXED);
	__atomic_store_n(&qp->ctl->gen, qp->gen_own, __ATOMIC_RELEASE);
	if (qp->in_engine) {
		droce_engine_qp_modify(qp->qpx.qp_base.qp_num, attr, mask, next);
		if (next == IBV_QPS_RESET)
			droce_qp_rings_reset(qp, false); /* the engine emptied them: attach again */
	}
	return 0;
}

static int qp_destroy(struct droce_qp *qp)
{
	if (qp->in_engine)
		droce_engine_qp_del(qp->qpx.qp_base.qp_num);
	qp->in_engine = false;
	return 0;
}

/* -------------------------------------------------------------------- AHs */

/* id -> AH, for handing ids out; ids are reused only after destroy. Under ah_lock. */
static struct droce_ah *ah_table[DROCE_MAX_AH];
static pthread_mutex_t ah_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t ah_next;

static int ah_create(struct droce_ah *ah)
{
	uint32_t i, id = DROCE_MAX_AH;

	pthread_mutex_lock(&ah_lock);
	for (i = 0; i < DROCE_MAX_AH; i++) {
		uint32_t cand = (ah_next + i) % DROCE_MAX_AH;

		if (ah_table[cand] == NULL) {
			id = cand;
			break;
		}
	}
	if (id < DROCE_MAX_AH) {
		ah->id = id;
		ah_next = id + 1;
		ah_table[id] = ah;
	}
	pthread_mutex_unlock(&ah_lock);
	if (id == DROCE_MAX_AH)
		return -ENOMEM;
	if (droce_engine_running())
		droce_engine_ah_add(ah->id, to_dpd(ah->ibah.pd)->id, &ah->attr);
	return 0;
}

static int ah_destroy(struct droce_ah *ah)
{
	if (droce_engine_running())
		droce_engine_ah_del(ah->id);
	pthread_mutex_lock(&ah_lock);
	ah_table[ah->id] = NULL;
	pthread_mutex_unlock(&ah_lock);
	return 0;
}

/* ------------------------------------------------------------------ the table */

/* the context's part is in verbs_embedded.c, the channels' in verbs_embedded_channel.c */
const struct droce_backend_ops droce_embedded_ops = {
	.name = "embedded",
	.open = droce_embedded_open,
	.close = droce_embedded_close,
	.query_port = droce_embedded_query_port,
	.resolve_l2 = droce_embedded_resolve_l2,
	.async_pull = droce_embedded_async_pull,
	.alloc_pd = pd_alloc,
	.dealloc_pd = pd_dealloc,
	.reg_mr = mr_reg,
	.rereg_mr = mr_rereg,
	.dereg_mr = mr_dereg,
	.alloc_mw = mw_alloc,
	.dealloc_mw = mw_dealloc,
	.create_channel = droce_embedded_create_channel,
	.destroy_channel = droce_embedded_destroy_channel,
	.channel_join = droce_embedded_channel_join,
	.channel_forget = droce_channel_forget,
	.get_cq_event = droce_embedded_get_cq_event,
	.create_cq = cq_create,
	.destroy_cq = cq_destroy,
	.create_srq = srq_create,
	.destroy_srq = srq_destroy,
	.create_qp = qp_create,
	.modify_qp = qp_modify,
	.destroy_qp = qp_destroy,
	.create_ah = ah_create,
	.destroy_ah = ah_destroy,
};
