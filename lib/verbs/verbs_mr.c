/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory regions and windows over lib/mem's key table. Registration is O(1):
 * it records the range and its rights, nothing is pinned, touched or copied,
 * so hugepage memory (and, in the embedded engine, any memory of the process)
 * is used in place.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_mr.h"
#include "verbs_limits.h"
#include "verbs_priv.h"

static_assert(DROCE_ACCESS_LOCAL_WRITE == IBV_ACCESS_LOCAL_WRITE, "access bits agree");
static_assert(DROCE_ACCESS_REMOTE_WRITE == IBV_ACCESS_REMOTE_WRITE, "access bits agree");
static_assert(DROCE_ACCESS_REMOTE_READ == IBV_ACCESS_REMOTE_READ, "access bits agree");
static_assert(DROCE_ACCESS_REMOTE_ATOMIC == IBV_ACCESS_REMOTE_ATOMIC, "access bits agree");
static_assert(DROCE_ACCESS_MW_BIND == IBV_ACCESS_MW_BIND, "access bits agree");
static_assert(DROCE_ACCESS_ZERO_BASED == IBV_ACCESS_ZERO_BASED, "access bits agree");
static_assert(DROCE_MR_REREG_TRANSLATION == IBV_REREG_MR_CHANGE_TRANSLATION, "rereg bits agree");
static_assert(DROCE_MR_REREG_PD == IBV_REREG_MR_CHANGE_PD, "rereg bits agree");
static_assert(DROCE_MR_REREG_ACCESS == IBV_REREG_MR_CHANGE_ACCESS, "rereg bits agree");

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct droce_mr_table table;
static bool table_ready;

struct droce_mr_table *droce_verbs_mr_table(void)
{
	struct droce_mr_table *t = NULL;

	pthread_mutex_lock(&table_lock);
	if (!table_ready && droce_mr_table_init(&table, DROCE_MAX_MR, NULL) == 0)
		table_ready = true;
	if (table_ready)
		t = &table;
	pthread_mutex_unlock(&table_lock);
	return t;
}

/*
 * The rules ibv_reg_mr(3) gives, for both backends: a range of at least one byte that does
 * not wrap, REMOTE_WRITE and REMOTE_ATOMIC only with LOCAL_WRITE (EINVAL). On-demand paging
 * is not offered: EOPNOTSUPP, as the kernel answers for a device without it. Hints droce may
 * ignore are dropped: the optional range (relaxed ordering and the like) and HUGETLB, which
 * only matters to on-demand paging. Every other bit is the key table's to judge. 0 or -errno.
 */
static int check_access(unsigned int access, unsigned int *out)
{
	if (access & IBV_ACCESS_ON_DEMAND)
		return -EOPNOTSUPP;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	*out = access & ~((unsigned int)IBV_ACCESS_OPTIONAL_RANGE | IBV_ACCESS_HUGETLB);
	return 0;
}

static int check_range(const void *addr, size_t length)
{
	if (length == 0 || (uintptr_t)addr + length < (uintptr_t)addr)
		return -EINVAL;
	return 0;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	struct droce_mr *mr;
	unsigned int acc = 0;
	int rc;

	rc = check_range(addr, length);
	if (rc == 0)
		rc = check_access(access, &acc);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	mr->ibmr.context = pd->context;
	mr->ibmr.pd = pd;
	mr->ibmr.addr = addr;
	mr->ibmr.length = length;
	rc = droce_ops(pd->context)->reg_mr(mr, pd, addr, length, iova, acc);
	if (rc != 0) {
		free(mr);
		errno = -rc;
		return NULL;
	}
	mr->ibmr.handle = mr->ibmr.lkey;
	mr->access = acc;
	droce_pd_get(to_dpd(pd));
	return &mr->ibmr;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
				 int fd, int access)
{
	(void)pd;
	(void)offset;
	(void)length;
	(void)iova;
	(void)fd;
	(void)access;
	errno = EOPNOTSUPP; /* device memory exported as dma-buf: not for a software device */
	return NULL;
}

int ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	struct droce_mr *mr = DROCE_CONTAINER_OF(ibmr, struct droce_mr, ibmr);
	struct ibv_pd *new_pd = (flags & IBV_REREG_MR_CHANGE_PD) ? pd : ibmr->pd;
	unsigned int acc = 0;
	int rc = 0;

	/*
	 * rdma-core's own front checks, the only ones answered IBV_REREG_MR_ERR_INPUT: unknown
	 * flags, a translation without a range, access bits without CHANGE_ACCESS.
	 */
	if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (addr == NULL || length == 0)) ||
	    (access != 0 && !(flags & IBV_REREG_MR_CHANGE_ACCESS))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	/*
	 * Everything past them is the command's to judge, as the kernel judges it behind
	 * rdma-core (the PD handle, the range, the rights, flags 0): IBV_REREG_MR_ERR_CMD with
	 * errno set, and the old MR still valid.
	 */
	if ((flags & IBV_REREG_MR_CHANGE_PD) && (pd == NULL || pd->context != ibmr->context))
		rc = -EINVAL;
	if (rc == 0 && (flags & IBV_REREG_MR_CHANGE_TRANSLATION))
		rc = check_range(addr, length);
	if (rc == 0 && (flags & IBV_REREG_MR_CHANGE_ACCESS))
		rc = check_access((unsigned int)access, &acc);
	if (rc == 0)
		rc = droce_ops(ibmr->context)
			     ->rereg_mr(mr, (unsigned int)flags, new_pd, addr, length, acc);
	if (rc != 0) {
		errno = -rc;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (new_pd != ibmr->pd) {
		droce_pd_put(to_dpd(ibmr->pd));
		droce_pd_get(to_dpd(new_pd));
		ibmr->pd = new_pd;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		ibmr->addr = addr;
		ibmr->length = length;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		mr->access = acc;
	ibmr->handle = ibmr->lkey;
	return 0;
}

int ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct droce_mr *mr = DROCE_CONTAINER_OF(ibmr, struct droce_mr, ibmr);
	int rc = droce_ops(ibmr->context)->dereg_mr(mr);

	if (rc != 0)
		return -rc; /* EBUSY while windows are bound to it */
	droce_pd_put(to_dpd(ibmr->pd));
	free(mr);
	return 0;
}

struct ibv_mw *droce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct droce_mw *mw;
	int rc;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = droce_ops(pd->context)->alloc_mw(mw, pd, type);
	if (rc != 0) {
		free(mw);
		errno = -rc;
		return NULL;
	}
	mw->ibmw.context = pd->context;
	mw->ibmw.pd = pd;
	mw->ibmw.handle = mw->handle;
	mw->ibmw.type = type;
	droce_pd_get(to_dpd(pd));
	return &mw->ibmw;
}

int droce_dealloc_mw(struct ibv_mw *ibmw)
{
	struct droce_mw *mw = to_dmw(ibmw);
	int rc = droce_ops(ibmw->context)->dealloc_mw(mw);

	if (rc != 0)
		return -rc;
	droce_pd_put(to_dpd(ibmw->pd));
	free(mw);
	return 0;
}

int droce_mw_bind_encode(const struct droce_qp *qp, struct ibv_mw *mw, uint32_t rkey,
			 const struct ibv_mw_bind_info *info, struct droce_send_wqe *w)
{
	/* the window and the MR must belong to the QP's PD (C10-72); the rest is the engine's */
	if (mw == NULL || info == NULL || mw->pd != qp->qpx.qp_base.pd ||
	    (info->mr != NULL && info->mr->pd != mw->pd) || (info->mr == NULL && info->length != 0))
		return -EINVAL;
	/* type 2 through a send WR; the new key keeps the window's index (IBA 10.6.7.2) */
	if (mw->type != IBV_MW_TYPE_2 || (rkey >> 8) != (mw->rkey >> 8))
		return -EINVAL;
	w->imm = 2;
	w->u.bind.mw_handle = to_dmw(mw)->handle;
	w->u.bind.new_rkey = rkey;
	w->u.bind.mr_lkey = info->mr != NULL ? info->mr->lkey : 0;
	w->u.bind.access = info->mw_access_flags;
	w->u.bind.addr = info->addr;
	w->u.bind.length = info->length;
	return 0;
}

/*
 * ibv_bind_mw() of a type-1 window: a Bind MW work request on the QP's send
 * queue, executed in order by the engine; the window's next key is known now
 * (the key byte advances by one, ibv_inc_rkey()) and returned at once.
 */
int droce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct droce_qp *qp = to_dqp(ibqp);
	const struct ibv_mw_bind_info *info = &mw_bind->bind_info;
	const unsigned int known = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	struct droce_send_wqe *w;
	enum ibv_qp_state st = droce_qp_state(qp);
	uint32_t new_rkey = ibv_inc_rkey(mw->rkey);
	int free_slots, rc = 0;

	if (ibqp->qp_type == IBV_QPT_UD || (mw_bind->send_flags & ~known) || mw->pd != ibqp->pd ||
	    (st != IBV_QPS_RTS && st != IBV_QPS_SQD && st != IBV_QPS_SQE && st != IBV_QPS_ERR))
		return EINVAL; /* libibverbs: a positive errno */
	pthread_spin_lock(&qp->sq_lock);
	free_slots = droce_ring_prod_free(&qp->sq);
	if (free_slots <= 0) {
		rc = free_slots < 0 ? EFAULT : ENOMEM;
		goto out_unlock;
	}
	w = droce_ring_prod_slot(&qp->sq, 0);
	memset(w, 0, sizeof(*w));
	w->wr_id = mw_bind->wr_id;
	w->op = DROCE_WQE_BIND_MW;
	w->flags = (uint8_t)(((mw_bind->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all
				      ? DROCE_WQE_SIGNALED
				      : 0) |
			     (mw_bind->send_flags & IBV_SEND_FENCE ? DROCE_WQE_FENCE : 0));
	w->imm = 1;
	w->u.bind.mw_handle = to_dmw(mw)->handle;
	w->u.bind.new_rkey = new_rkey;
	w->u.bind.mr_lkey = info->mr != NULL ? info->mr->lkey : 0;
	w->u.bind.access = info->mw_access_flags;
	w->u.bind.addr = info->addr;
	w->u.bind.length = info->length;
	rc = -droce_send_wqe_check(qp, w);
	if (rc == 0) {
		droce_ring_prod_publish(&qp->sq, 1);
		mw->rkey = new_rkey;
	}
out_unlock:
	pthread_spin_unlock(&qp->sq_lock);
	return rc;
}
