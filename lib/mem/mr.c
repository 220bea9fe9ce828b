/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The key table and memory regions: init/fini, slot allocation, reg/rereg/dereg, query.
 * Memory windows and invalidation are in mw.c. No DPDK here: tested without the EAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <time.h>

#include "droce_mr.h"
#include "mr_priv.h"

_Static_assert(sizeof(struct droce_mr_entry) == 64, "an entry is one cache line");
_Static_assert(offsetof(struct droce_mr_entry, handle) == 48,
	       "the data-path view fits the first 48 bytes");
_Static_assert(offsetof(struct droce_mr_table, lock) == 64,
	       "the writer's fields are off the readers' cache line");

const char *const droce_mr_status_name[DROCE_MR_STATUS_MAX] = {
	[DROCE_MR_OK] = "ok",
	[DROCE_MR_BAD_KEY] = "bad_key",
	[DROCE_MR_BAD_PD] = "bad_pd",
	[DROCE_MR_BAD_QP] = "bad_qp",
	[DROCE_MR_NO_ACCESS] = "no_access",
	[DROCE_MR_OUT_OF_BOUNDS] = "out_of_bounds",
	[DROCE_MR_MISALIGNED] = "misaligned",
};

/* ------------------------------------------------------------------ table */

size_t droce_mr_table_memsize(uint32_t capacity)
{
	if (capacity == 0 || capacity > DROCE_MR_MAX_CAPACITY)
		return 0;
	return ((size_t)capacity + 1) * sizeof(struct droce_mr_entry);
}

/* splitmix64: only when the kernel's random source fails (see mr_random32()). */
static uint64_t mr_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Keys made from the fallback source (mr_random32()), counted for droce_mr_keys_weak(). */
static uint64_t mr_fallback_keys;

uint64_t droce_mr_keys_weak(void)
{
	return __atomic_load_n(&mr_fallback_keys, __ATOMIC_RELAXED);
}

/*
 * 32 random bits for a key. The kernel's source (getrandom(), one call per key: keys are made
 * on the control path only), so that no number of keys seen predicts the next. If it fails
 * (a kernel without the call, a seccomp filter, a pool not yet seeded), the 16 random bytes
 * the kernel gave the process at exec (AT_RANDOM), the clock and a counter, mixed: distinct
 * from one call to the next, and not guessable from the uptime alone, but weaker; counted.
 */
static uint32_t mr_random32(void)
{
	const uint64_t *seed = (const uint64_t *)getauxval(AT_RANDOM);
	struct timespec ts;
	uint64_t n, x;
	uint32_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	n = __atomic_add_fetch(&mr_fallback_keys, 1, __ATOMIC_RELAXED);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32);
	if (seed != NULL)
		x ^= seed[0] ^ mr_mix(seed[1] + n);
	return (uint32_t)mr_mix(x + n * 0x9e3779b97f4a7c15ull);
}

uint32_t mr_random_key(const struct droce_mr_table *t, const struct droce_mr_entry *e, uint32_t idx,
		       uint32_t avoid)
{
	uint32_t key;

	do
		key = droce_mr_key_make(t, idx, mr_random32());
	while (key == e->key || key == e->lkey || key == avoid);
	return key;
}

/* The fewest bits that hold @p capacity: the index width of a table. */
static uint32_t mr_index_bits(uint32_t capacity)
{
	uint32_t bits = 1;

	while (bits < 32 && (capacity >> bits) != 0)
		bits++;
	return bits;
}

int droce_mr_table_init(struct droce_mr_table *t, uint32_t capacity, void *mem)
{
	size_t size = droce_mr_table_memsize(capacity);
	uint32_t i;

	if (size == 0 || ((uintptr_t)mem & 63) != 0)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	if (mem == NULL) {
		mem = aligned_alloc(64, size);
		if (mem == NULL)
			return -ENOMEM;
		t->own_mem = 1;
	}
	memset(mem, 0, size);
	t->busy = calloc((size_t)capacity + 1, sizeof(*t->busy));
	if (t->busy == NULL) {
		if (t->own_mem)
			free(mem);
		t->own_mem = 0;
		return -ENOMEM;
	}
	t->entries = mem;
	t->nslots = capacity + 1;
	t->capacity = capacity;
	/* the index takes the bits the capacity needs, the rest of the key is random */
	t->index_shift = 32 - mr_index_bits(capacity);
	for (i = 1; i <= capacity; i++)
		t->entries[i].next_free = i < capacity ? i + 1 : 0;
	t->free_head = 1;
	t->free_tail = capacity;
	return 0;
}

void droce_mr_table_fini(struct droce_mr_table *t)
{
	if (t->own_mem)
		free(t->entries);
	free(t->busy);
	memset(t, 0, sizeof(*t));
}

uint32_t droce_mr_busy(const struct droce_mr_table *t, uint32_t key)
{
	uint32_t idx = droce_mr_key_index(t, key);

	if (idx == 0 || idx >= t->nslots)
		return 0;
	/* acquire: pairs with the release of droce_mr_busy_put(), so that once 0 is seen every
	 * read of the MR's bytes by the frames counted is over */
	return __atomic_load_n(&t->busy[idx], __ATOMIC_ACQUIRE);
}

int droce_mr_busy_wait(struct droce_mr_table *t, uint32_t key, uint64_t timeout_us)
{
	uint32_t idx = droce_mr_key_index(t, key);
	uint64_t waited = 0, step = 10;

	if (idx == 0 || idx >= t->nslots)
		return -EINVAL;
	if (droce_mr_busy(t, key) == 0)
		return 0;
	__atomic_fetch_add(&t->busy_waits, 1, __ATOMIC_RELAXED);
	while (droce_mr_busy(t, key) != 0) {
		struct timespec ts = {.tv_nsec = (long)(step * 1000)};

		if (waited >= timeout_us) {
			__atomic_fetch_add(&t->busy_timeouts, 1, __ATOMIC_RELAXED);
			return -ETIMEDOUT;
		}
		nanosleep(&ts, NULL);
		waited += step;
		if (step < 1000)
			step *= 2; /* 10 us first: the engine frees most frames within a pass */
	}
	return 0;
}

uint32_t droce_mr_table_used(const struct droce_mr_table *t)
{
	return __atomic_load_n(&t->used, __ATOMIC_RELAXED);
}

uint32_t mr_slot_alloc(struct droce_mr_table *t)
{
	uint32_t idx = t->free_head;
	struct droce_mr_entry *e;

	if (idx == 0)
		return 0;
	e = &t->entries[idx];
	t->free_head = e->next_free;
	if (t->free_head == 0)
		t->free_tail = 0;
	e->next_free = 0;
	__atomic_store_n(&t->used, t->used + 1, __ATOMIC_RELAXED);
	return idx;
}

void mr_slot_free(struct droce_mr_table *t, uint32_t idx)
{
	t->entries[idx].next_free = 0;
	if (t->free_tail != 0)
		t->entries[t->free_tail].next_free = idx;
	else
		t->free_head = idx;
	t->free_tail = idx;
	__atomic_store_n(&t->used, t->used - 1, __ATOMIC_RELAXED);
}

void mr_entry_clear(struct droce_mr_entry *e)
{
	MR_SET(e, pd, 0);
	MR_SET(e, qpn, 0);
	MR_SET(e, addr, 0);
	MR_SET(e, iova, 0);
	MR_SET(e, length, 0);
	MR_SET(e, access, 0);
	MR_SET(e, type, DROCE_MR_TYPE_NONE);
	MR_SET(e, state, DROCE_MR_STATE_FREE);
}

/* ------------------------------------------------------------------ memory regions */

/*
 * What ibv_reg_mr() refuses, from the kernel's ib_check_mr_access(), ib_umem_get() and
 * ib_uverbs_reg_mr(): remote write or atomic without local write, zero length, a range that
 * wraps, an iova whose offset in its 4 KiB page differs from the address's. Nothing checks
 * that the range is mapped: droce_mem_dpdk.h can, at the verbs layer's choice.
 */
static int mr_check_args(uint64_t addr, uint64_t length, uint64_t iova, unsigned int access)
{
	if (access & ~DROCE_ACCESS_MR_ALL)
		return -EINVAL;
	if ((access & (DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & DROCE_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (length == 0 || addr == 0)
		return -EINVAL;
	if (length > UINT64_MAX - addr || length > UINT64_MAX - iova)
		return -EINVAL;
	if (!(access & DROCE_ACCESS_ZERO_BASED) && ((addr ^ iova) & (DROCE_MR_IOVA_PAGE - 1)))
		return -EINVAL;
	return 0;
}

/*
 * New keys for the MR in slot @p idx: two random draws (IBA leaves the L_Key and R_Key
 * independent), different from each other and from the slot's previous keys.
 */
static void mr_new_keys(const struct droce_mr_table *t, const struct droce_mr_entry *e,
			uint32_t idx, struct droce_mr_keys *keys)
{
	keys->rkey = mr_random_key(t, e, idx, 0);
	keys->lkey = mr_random_key(t, e, idx, keys->rkey);
}

/* Write a valid MR's view into @p e (the writer holds the lock). */
static void mr_entry_set(struct droce_mr_entry *e, const struct droce_mr_keys *keys, uint32_t pd,
			 uint64_t addr, uint64_t length, uint64_t iova, unsigned int access)
{
	mr_write_begin(e);
	MR_SET(e, key, keys->rkey);
	MR_SET(e, pd, pd);
	MR_SET(e, qpn, 0);
	MR_SET(e, addr, addr);
	MR_SET(e, iova, iova);
	MR_SET(e, length, length);
	MR_SET(e, access, (uint16_t)access);
	MR_SET(e, type, DROCE_MR_TYPE_MR);
	MR_SET(e, state, DROCE_MR_STATE_VALID);
	MR_SET(e, lkey, keys->lkey);
	mr_write_end(e);
}

int droce_mr_reg(struct droce_mr_table *t, uint32_t pd, void *addr, uint64_t length, uint64_t iova,
		 unsigned int access, unsigned int flags, struct droce_mr_keys *keys)
{
	uint64_t a = (uint64_t)(uintptr_t)addr;
	struct droce_mr_entry *e;
	uint32_t idx;
	int ret;

	if (flags & ~DROCE_MR_REG_INVALIDATE)
		return -EINVAL;
	if (access & DROCE_ACCESS_ZERO_BASED)
		iova = 0;
	ret = mr_check_args(a, length, iova, access);
	if (ret != 0)
		return ret;

	mr_lock(t);
	idx = mr_slot_alloc(t);
	if (idx == 0) {
		mr_unlock(t);
		return -ENOMEM;
	}
	e = &t->entries[idx];
	mr_new_keys(t, e, idx, keys);
	mr_entry_set(e, keys, pd, a, length, iova, access);
	e->handle = 0;
	e->nr_mw = 0;
	e->flags = (uint8_t)flags;
	mr_unlock(t);
	return 0;
}

#define MR_REREG_ALL (DROCE_MR_REREG_TRANSLATION | DROCE_MR_REREG_PD | DROCE_MR_REREG_ACCESS)

int droce_mr_rereg(struct droce_mr_table *t, uint32_t lkey, unsigned int change, uint32_t pd,
		   void *addr, uint64_t length, uint64_t iova, unsigned int access,
		   struct droce_mr_keys *keys)
{
	struct droce_mr_entry *e;
	uint64_t a;
	int ret;

	/* as the kernel's ib_uverbs_rereg_mr(): no change at all is an invalid request */
	if (change == 0 || (change & ~MR_REREG_ALL))
		return -EINVAL;

	mr_lock(t);
	e = mr_entry_by_key(t, lkey);
	if (e == NULL || e->type != DROCE_MR_TYPE_MR) {
		ret = -EINVAL;
		goto out_unlock;
	}
	/* windows were checked against this MR's range, access and PD when bound */
	if (e->nr_mw != 0) {
		ret = -EBUSY;
		goto out_unlock;
	}
	if (!(change & DROCE_MR_REREG_PD))
		pd = e->pd;
	if (!(change & DROCE_MR_REREG_ACCESS))
		access = e->access;
	if (change & DROCE_MR_REREG_TRANSLATION) {
		a = (uint64_t)(uintptr_t)addr;
		if (access & DROCE_ACCESS_ZERO_BASED)
			iova = 0;
	} else {
		/* ZERO_BASED moves the iova: only a new translation may say where to */
		if ((access ^ e->access) & DROCE_ACCESS_ZERO_BASED) {
			ret = -EINVAL;
			goto out_unlock;
		}
		a = e->addr;
		length = e->length;
		iova = e->iova;
	}
	ret = mr_check_args(a, length, iova, access);
	if (ret != 0)
		goto out_unlock;

	/*
	 * New keys with a new translation, or when the MR was invalidated: rights and PD change
	 * under the keys the peer already holds, as ibv_rereg_mr() of a NIC keeps its key (mlx5),
	 * so that the new rights govern the next access made with them; but a key the consumer
	 * invalidated (Local Invalidate, Send with Invalidate) stays dead, or a rereg would hand
	 * a peer back the access that was taken from it.
	 */
	if ((change & DROCE_MR_REREG_TRANSLATION) || e->state != DROCE_MR_STATE_VALID) {
		mr_new_keys(t, e, droce_mr_key_index(t, lkey), keys);
	} else {
		keys->rkey = e->key;
		keys->lkey = e->lkey;
	}
	mr_entry_set(e, keys, pd, a, length, iova, access);
out_unlock:
	mr_unlock(t);
	return ret;
}

int droce_mr_dereg(struct droce_mr_table *t, uint32_t lkey)
{
	struct droce_mr_entry *e;
	int ret = 0;

	mr_lock(t);
	e = mr_entry_by_key(t, lkey);
	if (e == NULL || e->type != DROCE_MR_TYPE_MR) {
		ret = -EINVAL;
		goto out_unlock;
	}
	/* IBA 10.6.7.2.6: an MR with windows bound to it cannot be deregistered */
	if (e->nr_mw != 0) {
		ret = -EBUSY;
		goto out_unlock;
	}
	mr_write_begin(e);
	mr_entry_clear(e);
	mr_write_end(e);
	e->flags = 0;
	mr_slot_free(t, droce_mr_key_index(t, lkey));
out_unlock:
	mr_unlock(t);
	return ret;
}

int droce_mr_query(struct droce_mr_table *t, uint32_t key, struct droce_mr_info *info)
{
	struct droce_mr_entry *e;
	int ret = 0;

	mr_lock(t);
	e = mr_entry_by_key(t, key);
	if (e == NULL) {
		ret = -EINVAL;
	} else {
		droce_mr_entry_read(e, info);
		info->bound_mws = e->nr_mw;
	}
	mr_unlock(t);
	return ret;
}
