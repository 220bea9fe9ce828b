/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The extended send API (ibv_wr_start ... ibv_wr_complete / ibv_wr_abort).
 * Builders write WQE headers straight into unpublished ring slots and setters
 * fill them; nothing reaches the engine before ibv_wr_complete() has checked
 * every WQE of the session with the same rules as ibv_post_send(). The first
 * error is remembered and makes complete fail and discard the whole session
 * (ibv_wr_post(3): the individual calls return nothing).
 */
#include <errno.h>
#include <string.h>

#include "verbs_limits.h"
#include "verbs_priv.h"

/* A UD WQE whose address was never set carries this AH id. */
#define AH_UNSET UINT32_MAX

static struct droce_qp *to_dqpx(struct ibv_qp_ex *qpx)
{
	return DROCE_CONTAINER_OF(qpx, struct droce_qp, qpx);
}

/* The session's first error (-errno): ibv_wr_complete() returns it. */
static void fail(struct droce_qp *qp, int err)
{
	if (qp->wr_err == 0)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/* Start a WQE of @p op needing send_ops_flags bit @p need; NULL after an error. */
static struct droce_send_wqe *build(struct ibv_qp_ex *qpx, uint8_t op, uint64_t need)
{
	const unsigned int known =
		IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE;
	struct droce_qp *qp = to_dqpx(qpx);
	struct droce_send_wqe *w;
	int free_slots;

	if (qp->wr_err != 0)
		return NULL;
	if (!(qp->send_ops_flags & need) || (qpx->wr_flags & ~known)) {
		fail(qp, -EINVAL); /* not requested at creation, or an unknown flag */
		return NULL;
	}
	free_slots = droce_ring_prod_free(&qp->sq);
	if (free_slots >= 0 && (uint32_t)free_slots <= qp->wr_pending)
		free_slots = droce_ring_prod_reload(&qp->sq);
	if (free_slots < 0 || (uint32_t)free_slots <= qp->wr_pending) {
		fail(qp, free_slots < 0 ? -EFAULT : -ENOMEM);
		return NULL;
	}
	w = droce_ring_prod_slot(&qp->sq, qp->wr_pending++);
	memset(w, 0, sizeof(*w));
	w->wr_id = qpx->wr_id;
	w->op = op;
	w->flags = (uint8_t)(((qpx->wr_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all
				      ? DROCE_WQE_SIGNALED
				      : 0) |
			     (qpx->wr_flags & IBV_SEND_FENCE ? DROCE_WQE_FENCE : 0) |
			     (qpx->wr_flags & IBV_SEND_SOLICITED ? DROCE_WQE_SOLICITED : 0));
	if (qpx->qp_base.qp_type == IBV_QPT_UD)
		w->u.ud.ah = AH_UNSET;
	qp->wr_cur = w;
	return w;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	build(qpx, DROCE_WQE_SEND, IBV_QP_EX_WITH_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct droce_send_wqe *w = build(qpx, DROCE_WQE_SEND_IMM, IBV_QP_EX_WITH_SEND_WITH_IMM);

	if (w != NULL)
		w->imm = imm;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct droce_send_wqe *w = build(qpx, DROCE_WQE_SEND_INV, IBV_QP_EX_WITH_SEND_WITH_INV);

	if (w != NULL)
		w->imm = rkey;
}

static void wr_rdma(struct ibv_qp_ex *qpx, uint8_t op, uint64_t need, uint32_t rkey, uint64_t addr,
		    __be32 imm)
{
	struct droce_send_wqe *w = build(qpx, op, need);

	if (w != NULL) {
		w->u.rdma.rkey = rkey;
		w->u.rdma.remote_addr = addr;
		w->imm = imm;
	}
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qpx, DROCE_WQE_WRITE, IBV_QP_EX_WITH_RDMA_WRITE, rkey, addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	wr_rdma(qpx, DROCE_WQE_WRITE_IMM, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qpx, DROCE_WQE_READ, IBV_QP_EX_WITH_RDMA_READ, rkey, addr, 0);
}

static void wr_atomic(struct ibv_qp_ex *qpx, uint8_t op, uint64_t need, uint32_t rkey,
		      uint64_t addr, uint64_t compare_add, uint64_t swap)
{
	struct droce_send_wqe *w = build(qpx, op, need);

	if (w != NULL) {
		w->u.atomic.rkey = rkey;
		w->u.atomic.remote_addr = addr;
		w->u.atomic.compare_add = compare_add;
		w->u.atomic.swap = swap;
	}
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t compare,
			      uint64_t swap)
{
	wr_atomic(qpx, DROCE_WQE_CMP_SWAP, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, rkey, addr, compare,
		  swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t add)
{
	wr_atomic(qpx, DROCE_WQE_FETCH_ADD, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, rkey, addr, add,
		  0);
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct droce_send_wqe *w = build(qpx, DROCE_WQE_LOCAL_INV, IBV_QP_EX_WITH_LOCAL_INV);

	if (w != NULL)
		w->imm = rkey;
}

static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct droce_qp *qp = to_dqpx(qpx);
	struct droce_send_wqe *w = build(qpx, DROCE_WQE_BIND_MW, IBV_QP_EX_WITH_BIND_MW);
	int rc;

	if (w == NULL)
		return;
	rc = droce_mw_bind_encode(qp, mw, rkey, info, w);
	if (rc != 0)
		fail(qp, rc);
}

static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr;
	(void)hdr_sz;
	(void)mss;
	fail(to_dqpx(qpx), -EINVAL); /* TSO is for raw packet QPs, which droce does not have */
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct droce_qp *qp = to_dqpx(qpx);
	int rc;

	if (qp->wr_cur == NULL)
		return fail(qp, -EINVAL);
	if (qpx->qp_base.qp_type != IBV_QPT_UD)
		return fail(qp, -EINVAL);
	rc = droce_ah_encode(qp, ah, remote_qpn, remote_qkey, qp->wr_cur);
	if (rc != 0)
		fail(qp, rc);
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	(void)remote_srqn;
	fail(to_dqpx(qpx), -EINVAL); /* not an XRC QP */
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *list)
{
	struct droce_qp *qp = to_dqpx(qpx);
	struct droce_send_wqe *w = qp->wr_cur;
	uint64_t total = 0;
	size_t i;

	if (w == NULL || num_sge > qp->cap.max_send_sge || (num_sge > 0 && list == NULL))
		return fail(qp, -EINVAL);
	for (i = 0; i < num_sge; i++) {
		struct droce_sge *s = (struct droce_sge *)(w + 1) + i;

		s->addr = list[i].addr;
		s->length = list[i].length ? list[i].length : DROCE_MAX_MSG_SZ;
		s->lkey = list[i].lkey;
		total += s->length;
	}
	if (total > DROCE_MAX_MSG_SZ)
		return fail(qp, -EINVAL);
	w->num_sge = (uint16_t)num_sge;
	w->length = (uint32_t)total;
	w->flags &= (uint8_t)~DROCE_WQE_INLINE;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = {.addr = addr, .length = length, .lkey = lkey};

	wr_set_sge_list(qpx, 1, &sge);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *list)
{
	struct droce_qp *qp = to_dqpx(qpx);
	struct droce_send_wqe *w = qp->wr_cur;
	uint8_t *dst;
	size_t i, total = 0;

	if (w == NULL || (num_buf > 0 && list == NULL))
		return fail(qp, -EINVAL);
	/* compared one length at a time: a sum of size_t lengths could wrap */
	for (i = 0; i < num_buf; i++) {
		if (list[i].length > qp->cap.max_inline_data - total)
			return fail(qp, -EINVAL);
		total += list[i].length;
	}
	/* copied now: the caller may reuse the buffers when the setter returns */
	dst = (uint8_t *)(w + 1);
	for (i = 0; i < num_buf; i++) {
		memcpy(dst, list[i].addr, list[i].length);
		dst += list[i].length;
	}
	w->num_sge = 0;
	w->length = (uint32_t)total;
	w->flags |= DROCE_WQE_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = {.addr = addr, .length = length};

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct droce_qp *qp = to_dqpx(qpx);

	pthread_spin_lock(&qp->sq_lock);
	qp->wr_pending = 0;
	qp->wr_err = 0;
	qp->wr_cur = NULL;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct droce_qp *qp = to_dqpx(qpx);

	/* nothing was published: forgetting the count discards the session */
	qp->wr_pending = 0;
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq_lock);
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct droce_qp *qp = to_dqpx(qpx);
	enum ibv_qp_state st = droce_qp_state(qp);
	int rc = qp->wr_err;
	uint32_t i;

	if (rc == 0 && st != IBV_QPS_RTS && st != IBV_QPS_SQD && st != IBV_QPS_SQE &&
	    st != IBV_QPS_ERR)
		rc = -EINVAL;
	for (i = 0; rc == 0 && i < qp->wr_pending; i++) {
		const struct droce_send_wqe *w = droce_ring_prod_slot(&qp->sq, i);

		if (qpx->qp_base.qp_type == IBV_QPT_UD && w->u.ud.ah == AH_UNSET)
			rc = -EINVAL; /* ibv_wr_set_ud_addr() is mandatory on UD */
		else
			rc = droce_send_wqe_check(qp, w);
	}
	if (rc == 0 && qp->wr_pending > 0)
		droce_ring_prod_publish(&qp->sq, qp->wr_pending);
	qp->wr_pending = 0;
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq_lock);
	return -rc; /* libibverbs: a positive errno */
}

void droce_qp_wr_init(struct droce_qp *qp)
{
	struct ibv_qp_ex *x = &qp->qpx;

	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_send_tso = wr_send_tso;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
}
