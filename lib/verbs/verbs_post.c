/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_post_send, ibv_post_recv and ibv_post_srq_recv: check each work request,
 * encode it into the next ring slot, and publish the accepted ones with one
 * release store. No system call, no allocation. A request that fails a check
 * is not published, nor is anything after it: *bad_wr points at it and the
 * requests before it are posted (libibverbs semantics).
 *
 * Checks done here are those the verbs API defines on the request itself;
 * memory keys are the engine's to check when it executes the request (a bad
 * lkey completes with IBV_WC_LOC_PROT_ERR, as on a NIC).
 */
#include <errno.h>
#include <string.h>

#include "verbs_limits.h"
#include "verbs_priv.h"

#define QPT_RC (1u << IBV_QPT_RC)
#define QPT_UC (1u << IBV_QPT_UC)
#define QPT_UD (1u << IBV_QPT_UD)

/*
 * Per operation: QP types it is allowed on and its traits. The QP types are ibv_post_send(3)'s
 * table, less SEND_WITH_INV on UC: no UC opcode carries an IETH (IBA's invalidate opcodes are
 * RC's and XRC's only), so such a WQE could only fail later in the engine; it is refused here,
 * as every operation the QP type cannot carry is (doc/verbs.md, "Posting").
 */
static const struct {
	uint8_t qp_types;
	bool has_data;   /* takes SGEs (or inline data) */
	bool may_inline; /* IBV_SEND_INLINE allowed: SEND and RDMA WRITE kinds only */
	bool remote;     /* uses remote_addr/rkey */
	bool atomic;
} op_info[DROCE_WQE_OP_COUNT] = {
	[DROCE_WQE_SEND] = {QPT_RC | QPT_UC | QPT_UD, true, true, false, false},
	[DROCE_WQE_SEND_IMM] = {QPT_RC | QPT_UC | QPT_UD, true, true, false, false},
	[DROCE_WQE_SEND_INV] = {QPT_RC, true, true, false, false},
	[DROCE_WQE_WRITE] = {QPT_RC | QPT_UC, true, true, true, false},
	[DROCE_WQE_WRITE_IMM] = {QPT_RC | QPT_UC, true, true, true, false},
	[DROCE_WQE_READ] = {QPT_RC, true, false, true, false},
	[DROCE_WQE_CMP_SWAP] = {QPT_RC, true, false, true, true},
	[DROCE_WQE_FETCH_ADD] = {QPT_RC, true, false, true, true},
	[DROCE_WQE_LOCAL_INV] = {QPT_RC | QPT_UC, false, false, false, false},
	[DROCE_WQE_BIND_MW] = {QPT_RC | QPT_UC, false, false, false, false},
};

#define OP_NONE 0xff

/* enum ibv_wr_opcode -> enum droce_wqe_op; TSO, driver and flush opcodes are not droce's. */
static uint8_t wqe_op_of(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
		return DROCE_WQE_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return DROCE_WQE_WRITE_IMM;
	case IBV_WR_SEND:
		return DROCE_WQE_SEND;
	case IBV_WR_SEND_WITH_IMM:
		return DROCE_WQE_SEND_IMM;
	case IBV_WR_RDMA_READ:
		return DROCE_WQE_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return DROCE_WQE_CMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return DROCE_WQE_FETCH_ADD;
	case IBV_WR_LOCAL_INV:
		return DROCE_WQE_LOCAL_INV;
	case IBV_WR_BIND_MW:
		return DROCE_WQE_BIND_MW;
	case IBV_WR_SEND_WITH_INV:
		return DROCE_WQE_SEND_INV;
	default:
		return OP_NONE;
	}
}

/* Bytes of the largest UD message: one packet of the port's MTU. */
static uint32_t ud_max_msg(const struct droce_qp *qp)
{
	const struct droce_device *d = to_dctx(qp->qpx.qp_base.context)->dev;

	return 128u << droce_mtu_for_eth(d->port.eth_mtu);
}

int droce_send_wqe_check(const struct droce_qp *qp, const struct droce_send_wqe *w)
{
	enum ibv_qp_type type = qp->qpx.qp_base.qp_type;

	if (w->op >= DROCE_WQE_OP_COUNT || !(op_info[w->op].qp_types & (1u << type)))
		return -EINVAL;
	if ((w->flags & DROCE_WQE_INLINE) &&
	    (!op_info[w->op].may_inline || w->length > qp->cap.max_inline_data))
		return -EINVAL;
	/* FENCE orders after READs and atomics, which only RC has */
	if ((w->flags & DROCE_WQE_FENCE) && type != IBV_QPT_RC)
		return -EINVAL;
	if (!(w->flags & DROCE_WQE_INLINE) && w->num_sge > qp->cap.max_send_sge)
		return -EINVAL;
	if (!op_info[w->op].has_data && (w->num_sge != 0 || w->length != 0))
		return -EINVAL;
	if (w->length > DROCE_MAX_MSG_SZ)
		return -EINVAL;
	/* atomics: one 8-byte local buffer, an 8-byte-aligned remote target (IBA 9.4.5) */
	if (op_info[w->op].atomic && (w->length != 8 || (w->u.atomic.remote_addr & 7) != 0))
		return -EINVAL;
	if (type == IBV_QPT_UD && w->length > ud_max_msg(qp))
		return -EINVAL;
	return 0;
}

/* Copy the SGEs (or the inline bytes) of @p wr into the slot after @p w. */
static int encode_data(const struct droce_qp *qp, const struct ibv_send_wr *wr,
		       struct droce_send_wqe *w)
{
	uint64_t total = 0;
	int i;

	/* num_sge <= max_send_sge holds for inline requests too (ibv_post_send(3)) */
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_send_sge ||
	    (wr->num_sge > 0 && wr->sg_list == NULL))
		return -EINVAL;
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint8_t *dst = (uint8_t *)(w + 1);

		/* inline: lengths are literal byte counts and no lkey is looked at */
		for (i = 0; i < wr->num_sge; i++)
			total += wr->sg_list[i].length;
		if (total > qp->cap.max_inline_data)
			return -EINVAL;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(dst, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			dst += wr->sg_list[i].length;
		}
		w->num_sge = 0;
		w->length = (uint32_t)total;
		return 0;
	}
	for (i = 0; i < wr->num_sge; i++) {
		struct droce_sge *s = (struct droce_sge *)(w + 1) + i;

		s->addr = wr->sg_list[i].addr;
		/* an SGE length of 0 means 2^31 bytes (ibv_post_send(3)) */
		s->length = wr->sg_list[i].length ? wr->sg_list[i].length : DROCE_MAX_MSG_SZ;
		s->lkey = wr->sg_list[i].lkey;
		total += s->length;
	}
	if (total > DROCE_MAX_MSG_SZ)
		return -EINVAL;
	w->num_sge = (uint16_t)wr->num_sge;
	w->length = (uint32_t)total;
	return 0;
}

static int encode_send(const struct droce_qp *qp, const struct ibv_send_wr *wr,
		       struct droce_send_wqe *w)
{
	const unsigned int known =
		IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE;
	uint8_t op = wqe_op_of(wr->opcode);
	int rc;

	if (op == OP_NONE || (wr->send_flags & ~known))
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->op = op;
	w->flags = (uint8_t)(((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all
				      ? DROCE_WQE_SIGNALED
				      : 0) |
			     (wr->send_flags & IBV_SEND_FENCE ? DROCE_WQE_FENCE : 0) |
			     (wr->send_flags & IBV_SEND_SOLICITED ? DROCE_WQE_SOLICITED : 0) |
			     (wr->send_flags & IBV_SEND_INLINE ? DROCE_WQE_INLINE : 0));
	if (op_info[op].has_data) {
		rc = encode_data(qp, wr, w);
		if (rc != 0)
			return rc;
	} else if (wr->num_sge != 0) {
		return -EINVAL;
	}
	switch (op) {
	case DROCE_WQE_SEND_IMM:
	case DROCE_WQE_WRITE_IMM:
		w->imm = wr->imm_data;
		break;
	case DROCE_WQE_SEND_INV:
	case DROCE_WQE_LOCAL_INV:
		w->imm = wr->invalidate_rkey;
		break;
	default:
		break;
	}
	if (op_info[op].atomic) {
		w->u.atomic.remote_addr = wr->wr.atomic.remote_addr;
		w->u.atomic.compare_add = wr->wr.atomic.compare_add;
		w->u.atomic.swap = wr->wr.atomic.swap;
		w->u.atomic.rkey = wr->wr.atomic.rkey;
	} else if (op_info[op].remote) {
		w->u.rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->u.rdma.rkey = wr->wr.rdma.rkey;
	}
	if (op == DROCE_WQE_BIND_MW) {
		rc = droce_mw_bind_encode(qp, wr->bind_mw.mw, wr->bind_mw.rkey,
					  &wr->bind_mw.bind_info, w);
		if (rc != 0)
			return rc;
	}
	if (qp->qpx.qp_base.qp_type == IBV_QPT_UD) {
		rc = droce_ah_encode(qp, wr->wr.ud.ah, wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey,
				     w);
		if (rc != 0)
			return rc;
	}
	return droce_send_wqe_check(qp, w);
}

/* RESET, INIT and RTR refuse sends; RTS, SQD, SQE and ERR take them (the seed's rules). */
static bool send_state_ok(enum ibv_qp_state s)
{
	return s == IBV_QPS_RTS || s == IBV_QPS_SQD || s == IBV_QPS_SQE || s == IBV_QPS_ERR;
}

int droce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct droce_qp *qp = to_dqp(ibqp);
	uint32_t n = 0;
	int free_slots, rc = 0;

	if (!send_state_ok(droce_qp_state(qp))) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->sq_lock);
	free_slots = droce_ring_prod_free(&qp->sq);
	for (; wr != NULL; wr = wr->next) {
		/* the free count includes the n slots filled but not yet published */
		if (free_slots >= 0 && (uint32_t)free_slots <= n)
			free_slots = droce_ring_prod_reload(&qp->sq);
		if (free_slots < 0) {
			rc = -EFAULT; /* the engine broke the ring protocol */
			break;
		}
		if ((uint32_t)free_slots <= n) {
			rc = -ENOMEM; /* send queue full */
			break;
		}
		rc = encode_send(qp, wr, droce_ring_prod_slot(&qp->sq, n));
		if (rc != 0)
			break;
		n++;
	}
	if (n > 0)
		droce_ring_prod_publish(&qp->sq, n);
	pthread_spin_unlock(&qp->sq_lock);
	if (rc != 0)
		*bad_wr = wr;
	return -rc; /* libibverbs: a positive errno */
}

/* Encode a receive request: SGEs only, at most @p max_sge of them. 0 or -EINVAL. */
static int encode_recv(const struct ibv_recv_wr *wr, uint32_t max_sge, struct droce_recv_wqe *w)
{
	uint64_t total = 0;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    (wr->num_sge > 0 && wr->sg_list == NULL))
		return -EINVAL;
	w->wr_id = wr->wr_id;
	w->num_sge = (uint16_t)wr->num_sge;
	w->reserved16 = 0;
	w->reserved32 = 0;
	for (i = 0; i < wr->num_sge; i++) {
		struct droce_sge *s = (struct droce_sge *)(w + 1) + i;

		s->addr = wr->sg_list[i].addr;
		s->length = wr->sg_list[i].length ? wr->sg_list[i].length : DROCE_MAX_MSG_SZ;
		s->lkey = wr->sg_list[i].lkey;
		total += s->length;
	}
	return total > DROCE_MAX_MSG_SZ ? -EINVAL : 0;
}

/* Post to a receive ring under its lock: shared by QPs and SRQs. */
static int post_recv_ring(struct droce_ring_prod *ring, pthread_spinlock_t *lock, uint32_t max_sge,
			  struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	int free_slots, rc = 0;
	uint32_t n = 0;

	pthread_spin_lock(lock);
	free_slots = droce_ring_prod_free(ring);
	for (; wr != NULL; wr = wr->next) {
		if (free_slots >= 0 && (uint32_t)free_slots <= n)
			free_slots = droce_ring_prod_reload(ring);
		if (free_slots < 0) {
			rc = -EFAULT;
			break;
		}
		if ((uint32_t)free_slots <= n) {
			rc = -ENOMEM; /* receive queue full */
			break;
		}
		rc = encode_recv(wr, max_sge, droce_ring_prod_slot(ring, n));
		if (rc != 0)
			break;
		n++;
	}
	if (n > 0)
		droce_ring_prod_publish(ring, n);
	pthread_spin_unlock(lock);
	if (rc != 0)
		*bad_wr = wr;
	return rc;
}

int droce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct droce_qp *qp = to_dqp(ibqp);

	/* a QP on an SRQ has no receive queue; a RESET QP takes no receive (IBA 10.8.2) */
	if (qp->srq != NULL || droce_qp_state(qp) == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	return -post_recv_ring(&qp->rq, &qp->rq_lock, qp->cap.max_recv_sge, wr, bad_wr);
}

int droce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct droce_srq *srq = to_dsrq(ibsrq);

	return -post_recv_ring(&srq->rq, &srq->lock, srq->max_sge, wr, bad_wr);
}
