/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/mem internals shared by mr.c and mw.c: the writer lock, the seqlock write side, slot
 * allocation and key lookup for writers. Never installed.
 */
#ifndef DROCE_MR_PRIV_H
#define DROCE_MR_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "droce_mr.h"

#define MR_HIDDEN __attribute__((visibility("hidden")))

/*
 * Writer lock. Every function that changes the table takes it: control-path calls are
 * serialised by the verbs layer already, but type-2 binds and invalidations come from send
 * work requests and IETHs on engine lcores. Readers never take it.
 */
static inline void mr_lock(struct droce_mr_table *t)
{
	while (__atomic_exchange_n(&t->lock, 1, __ATOMIC_ACQUIRE) != 0)
		while (__atomic_load_n(&t->lock, __ATOMIC_RELAXED) != 0)
			droce_mr_cpu_relax();
}

static inline void mr_unlock(struct droce_mr_table *t)
{
	__atomic_store_n(&t->lock, 0, __ATOMIC_RELEASE);
}

/*
 * Seqlock write side (the writer holds the lock, so seq has one writer). Make seq odd, then a
 * release fence so that no field store below is seen before the odd value (pairs with the
 * reader's acquire fence before its second load of seq).
 */
static inline void mr_write_begin(struct droce_mr_entry *e)
{
	__atomic_store_n(&e->seq, e->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* Make seq even again, publishing the fields (pairs with the reader's first, acquire load). */
static inline void mr_write_end(struct droce_mr_entry *e)
{
	__atomic_store_n(&e->seq, e->seq + 1, __ATOMIC_RELEASE);
}

/* Store one data-path field of an entry between mr_write_begin() and mr_write_end(). */
#define MR_SET(e, field, v) __atomic_store_n(&(e)->field, (v), __ATOMIC_RELAXED)

/*
 * A new random key of slot @p idx: none of the slot's current or last keys (rkey, lkey) nor
 * @p avoid, so a key that stopped matching never matches the next registration of the slot.
 */
MR_HIDDEN uint32_t mr_random_key(const struct droce_mr_table *t, const struct droce_mr_entry *e,
				 uint32_t idx, uint32_t avoid);

/* Entry whose current key (or an MR's lkey) is @p key, in a state other than free; NULL if none. */
static inline struct droce_mr_entry *mr_entry_by_key(struct droce_mr_table *t, uint32_t key)
{
	uint32_t idx = droce_mr_key_index(t, key);
	struct droce_mr_entry *e;

	if (idx == 0 || idx >= t->nslots)
		return NULL;
	e = &t->entries[idx];
	if (e->state == DROCE_MR_STATE_FREE)
		return NULL;
	if (e->key != key && (e->type != DROCE_MR_TYPE_MR || e->lkey != key))
		return NULL;
	return e;
}

/* The valid MR whose key is @p key; NULL if none. */
static inline struct droce_mr_entry *mr_valid_mr(struct droce_mr_table *t, uint32_t key)
{
	struct droce_mr_entry *e = mr_entry_by_key(t, key);

	if (e == NULL || e->type != DROCE_MR_TYPE_MR || e->state != DROCE_MR_STATE_VALID)
		return NULL;
	return e;
}

/* Take the oldest free slot (FIFO: a freed slot is reused last); 0 when the table is full. */
MR_HIDDEN uint32_t mr_slot_alloc(struct droce_mr_table *t);

/* Return slot @p idx, already cleared to the free state, to the tail of the free list. */
MR_HIDDEN void mr_slot_free(struct droce_mr_table *t, uint32_t idx);

/*
 * Clear the data-path view of @p e to a free slot (between write begin and end); keeps the
 * keys (key, lkey), which the slot's next keys must differ from.
 */
MR_HIDDEN void mr_entry_clear(struct droce_mr_entry *e);

#endif /* DROCE_MR_PRIV_H */
