/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows (IBA 10.6.7): allocation, type-1 and type-2 binds with the IBA checks, and
 * invalidation of type-2 windows and invalidatable MRs (Local Invalidate, Send with
 * Invalidate). Compliance statements cited as Linux Soft-RoCE (rxe_mw.c) cites them.
 */
#include <errno.h>
#include <stdbool.h>

#include "droce_mr.h"
#include "mr_priv.h"

int droce_mw_alloc(struct droce_mr_table *t, uint32_t pd, enum droce_mw_type type, uint32_t *handle)
{
	struct droce_mr_entry *e;
	uint32_t idx, key;

	if (type != DROCE_MW_TYPE_1 && type != DROCE_MW_TYPE_2)
		return -EINVAL;

	mr_lock(t);
	idx = mr_slot_alloc(t);
	if (idx == 0) {
		mr_unlock(t);
		return -ENOMEM;
	}
	e = &t->entries[idx];
	/* random index tag and key byte; the tag stays the window's (a type-2 bind keeps it) */
	key = mr_random_key(t, e, idx, 0);
	mr_write_begin(e);
	mr_entry_clear(e);
	MR_SET(e, mr_key, 0);
	MR_SET(e, key, key);
	MR_SET(e, pd, pd);
	MR_SET(e, type, type == DROCE_MW_TYPE_1 ? DROCE_MR_TYPE_MW1 : DROCE_MR_TYPE_MW2);
	/* unbound: a type-2 window is in the free state until bound (o10-37.2.30) */
	MR_SET(e, state, DROCE_MR_STATE_INVALID);
	mr_write_end(e);
	e->handle = key;
	e->nr_mw = 0;
	e->flags = 0;
	mr_unlock(t);

	*handle = key;
	return 0;
}

/* The allocated window named by @p handle; NULL if none. */
static struct droce_mr_entry *mw_by_handle(struct droce_mr_table *t, uint32_t handle)
{
	uint32_t idx = droce_mr_key_index(t, handle);
	struct droce_mr_entry *e;

	if (idx == 0 || idx >= t->nslots)
		return NULL;
	e = &t->entries[idx];
	if (e->state == DROCE_MR_STATE_FREE || e->handle != handle ||
	    (e->type != DROCE_MR_TYPE_MW1 && e->type != DROCE_MR_TYPE_MW2))
		return NULL;
	return e;
}

/*
 * Detach window @p mw from its MR and clear its binding (between write begin and end). The
 * MR cannot have changed since the bind: rereg, dereg and invalidation refuse an MR with
 * bound windows, so its index still names it.
 */
static void mw_unbind(struct droce_mr_table *t, struct droce_mr_entry *mw)
{
	if (mw->state == DROCE_MR_STATE_VALID)
		t->entries[droce_mr_key_index(t, mw->mr_key)].nr_mw--;
	MR_SET(mw, qpn, 0);
	MR_SET(mw, addr, 0);
	MR_SET(mw, iova, 0);
	MR_SET(mw, length, 0);
	MR_SET(mw, access, 0);
	MR_SET(mw, mr_key, 0);
	MR_SET(mw, state, DROCE_MR_STATE_INVALID);
}

int droce_mw_dealloc(struct droce_mr_table *t, uint32_t handle)
{
	struct droce_mr_entry *e;

	mr_lock(t);
	e = mw_by_handle(t, handle);
	if (e == NULL) {
		mr_unlock(t);
		return -EINVAL;
	}
	mr_write_begin(e);
	mw_unbind(t, e);
	mr_entry_clear(e);
	mr_write_end(e);
	e->handle = 0;
	mr_slot_free(t, droce_mr_key_index(t, handle));
	mr_unlock(t);
	return 0;
}

/* Access bits a bind accepts; LOCAL_WRITE means nothing for a window and is dropped. */
static int mw_check_access(unsigned int access)
{
	return (access & ~DROCE_ACCESS_MW_ALL) ? -EINVAL : 0;
}

/* The IBA checks of a bind with a non-empty range; gives the MR. */
static int mw_check_bind(struct droce_mr_table *t, const struct droce_mr_entry *mw, uint32_t qp_pd,
			 const struct droce_mw_bind_info *b, struct droce_mr_entry **mrp)
{
	struct droce_mr_entry *mr;

	/* C10-72: the QP, the window and the MR belong to one PD */
	if (mw->pd != qp_pd)
		return -EPERM;
	mr = mr_valid_mr(t, b->mr_lkey);
	if (mr == NULL)
		return -EINVAL;
	if (mr->pd != mw->pd)
		return -EPERM;
	/* C10-73: the MR must allow binding */
	if (!(mr->access & DROCE_ACCESS_MW_BIND))
		return -EACCES;
	/* C10-74: a window writable from remote needs a locally writable MR */
	if ((b->access & (DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & DROCE_ACCESS_LOCAL_WRITE))
		return -EACCES;
	/* C10-75: the window lies inside the MR (b->addr is in the MR's iova space) */
	if (b->addr < mr->iova || b->length > mr->length ||
	    b->addr - mr->iova > mr->length - b->length)
		return -ERANGE;
	*mrp = mr;
	return 0;
}

/* Write the binding of @p mw to @p mr under @p key (the writer holds the lock). */
static void mw_bind(struct droce_mr_table *t, struct droce_mr_entry *mw, struct droce_mr_entry *mr,
		    const struct droce_mw_bind_info *b, uint32_t key, uint32_t qpn)
{
	mr_write_begin(mw);
	mw_unbind(t, mw);
	MR_SET(mw, key, key);
	MR_SET(mw, qpn, qpn);
	MR_SET(mw, addr, mr->addr + (b->addr - mr->iova));
	/* a zero-based window is addressed from 0 (type 2 only, o10-36.2.2) */
	MR_SET(mw, iova, (b->access & DROCE_ACCESS_ZERO_BASED) ? 0 : b->addr);
	MR_SET(mw, length, b->length);
	MR_SET(mw, access, (uint16_t)(b->access & (DROCE_ACCESS_REMOTE | DROCE_ACCESS_ZERO_BASED)));
	MR_SET(mw, mr_key, mr->key);
	MR_SET(mw, state, DROCE_MR_STATE_VALID);
	mr_write_end(mw);
	mr->nr_mw++;
}

/* Type-1 bind; @p want is the new key, or 0 for the next one of the slot. */
static int bind_type1(struct droce_mr_table *t, uint32_t handle, uint32_t qp_pd,
		      const struct droce_mw_bind_info *b, uint32_t want, uint32_t *rkey)
{
	struct droce_mr_entry *mw, *mr;
	uint32_t key;
	int ret;

	ret = mw_check_access(b->access);
	if (ret != 0)
		return ret;
	/* o10-36.2.2: a type-1 window cannot be zero based */
	if (b->access & DROCE_ACCESS_ZERO_BASED)
		return -EINVAL;

	mr_lock(t);
	mw = mw_by_handle(t, handle);
	if (mw == NULL || mw->type != DROCE_MR_TYPE_MW1) {
		ret = -EINVAL;
		goto out_unlock;
	}
	/* a new key on every bind, as ibv_inc_rkey(): the previous rkey stops working */
	key = (mw->key & ~DROCE_MR_KEY_BYTE_MASK) | (uint8_t)(droce_mr_key_byte(mw->key) + 1);
	if (want != 0) {
		/* the key the verbs layer announced: the window's index and tag, any other byte */
		if (!droce_mr_key_same_stem(want, handle) || want == mw->key) {
			ret = -EINVAL;
			goto out_unlock;
		}
		key = want;
	}
	if (b->length == 0) {
		/* unbind; the MR, if any, is not looked at (ibv_bind_mw() allows none) */
		if (mw->pd != qp_pd) {
			ret = -EPERM;
			goto out_unlock;
		}
		mr_write_begin(mw);
		mw_unbind(t, mw);
		MR_SET(mw, key, key);
		mr_write_end(mw);
	} else {
		ret = mw_check_bind(t, mw, qp_pd, b, &mr);
		if (ret != 0)
			goto out_unlock;
		mw_bind(t, mw, mr, b, key, 0);
	}
	*rkey = key;
out_unlock:
	mr_unlock(t);
	return ret;
}

int droce_mw_bind_type1(struct droce_mr_table *t, uint32_t handle, uint32_t qp_pd,
			const struct droce_mw_bind_info *b, uint32_t *rkey)
{
	return bind_type1(t, handle, qp_pd, b, 0, rkey);
}

int droce_mw_bind_type1_key(struct droce_mr_table *t, uint32_t handle, uint32_t qp_pd,
			    const struct droce_mw_bind_info *b, uint32_t rkey)
{
	uint32_t got;

	return bind_type1(t, handle, qp_pd, b, rkey, &got);
}

int droce_mw_bind_type2(struct droce_mr_table *t, uint32_t handle, uint32_t qp_pd, uint32_t qpn,
			uint32_t rkey, const struct droce_mw_bind_info *b)
{
	struct droce_mr_entry *mw, *mr;
	int ret;

	ret = mw_check_access(b->access);
	if (ret != 0)
		return ret;
	/* IBA 10.6.7.2: only the key byte is the consumer's; index and tag stay the window's */
	if (!droce_mr_key_same_stem(rkey, handle))
		return -EINVAL;
	/* o10-37.2.40: a type-2 window is unbound by invalidation, not by an empty bind */
	if (b->length == 0)
		return -EINVAL;

	mr_lock(t);
	mw = mw_by_handle(t, handle);
	if (mw == NULL || mw->type != DROCE_MR_TYPE_MW2) {
		ret = -EINVAL;
		goto out_unlock;
	}
	/* o10-37.2.30: only a window in the free (unbound) state can be bound */
	if (mw->state == DROCE_MR_STATE_VALID) {
		ret = -EBUSY;
		goto out_unlock;
	}
	ret = mw_check_bind(t, mw, qp_pd, b, &mr);
	if (ret != 0)
		goto out_unlock;
	mw_bind(t, mw, mr, b, rkey, qpn);
out_unlock:
	mr_unlock(t);
	return ret;
}

/* Local Invalidate (remote false) or Send with Invalidate (remote true, from QP @p qpn). */
static int mr_invalidate(struct droce_mr_table *t, uint32_t key, uint32_t pd, bool remote,
			 uint32_t qpn)
{
	struct droce_mr_entry *e;
	int ret = 0;

	mr_lock(t);
	e = mr_entry_by_key(t, key);
	/* an IETH carries an R_Key: an MR's lkey is never on the wire */
	if (e == NULL || e->state != DROCE_MR_STATE_VALID || (remote && e->key != key)) {
		ret = -EINVAL;
		goto out_unlock;
	}
	switch (e->type) {
	case DROCE_MR_TYPE_MW1:
		/* o10-37.2.26: type-1 windows cannot be invalidated */
		ret = -EINVAL;
		break;
	case DROCE_MR_TYPE_MW2:
		/* a type-2 window is used only through its QP; invalidating is a use */
		if (e->pd != pd || (remote && e->qpn != qpn)) {
			ret = -EPERM;
			break;
		}
		mr_write_begin(e);
		mw_unbind(t, e);
		mr_write_end(e);
		break;
	default:
		if (e->pd != pd)
			ret = -EPERM;
		else if (!(e->flags & DROCE_MR_REG_INVALIDATE))
			ret = -EACCES;
		else if (e->nr_mw != 0)
			ret = -EBUSY;
		if (ret != 0)
			break;
		mr_write_begin(e);
		MR_SET(e, state, DROCE_MR_STATE_INVALID);
		mr_write_end(e);
		break;
	}
out_unlock:
	mr_unlock(t);
	return ret;
}

int droce_mr_invalidate_local(struct droce_mr_table *t, uint32_t key, uint32_t pd)
{
	return mr_invalidate(t, key, pd, false, 0);
}

int droce_mr_invalidate_remote(struct droce_mr_table *t, uint32_t rkey, uint32_t pd, uint32_t qpn)
{
	return mr_invalidate(t, rkey, pd, true, qpn);
}
