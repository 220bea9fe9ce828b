/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * lib/mem: the memory-registration key table. Memory regions (MRs) and memory windows (MWs,
 * type 1 and type 2) share one table of fixed capacity; a key names an entry and one
 * registration of it. The verbs layer (control path) writes the table; engine lcores (data
 * path) check lkeys and rkeys against it on every packet, concurrently and without a lock.
 *
 * Key format (32 bits; the index in the high bits and random bits below, as RoCE NICs and Linux
 * Soft-RoCE split a key into an index and a key part):
 *
 *     31            32-b  31-b           8 7          0
 *     +------------------+-----------------+------------+
 *     |  index (b bits)  |   random tag    |  key byte  |
 *     +------------------+-----------------+------------+
 *
 * b is the table's index width, the fewest bits that hold its capacity (1 .. 24), so a smaller
 * table leaves more random bits. The index is the entry's slot (1 .. capacity; slot 0 is never
 * used, so a zeroed key never matches). Registration, reregistration with a new translation and
 * window allocation draw the 32 - b bits below the index from the kernel's random source
 * (getrandom()), never the slot's previous key; an MR's lkey and rkey are two such draws and
 * differ. A type-1 bind advances the key byte by one (ibv_inc_rkey()); for type-2 windows the
 * consumer chooses the key byte at bind time (IBA 10.6.7.2), the tag stays the one drawn at
 * allocation.
 *
 * Errors of the control-path functions are 0 or -errno (each function lists its values); the
 * data-path checks return an enum droce_mr_status that the transport turns into a completion
 * status or a NAK. doc/memory.md describes the layout, the concurrency and the decisions.
 *
 * Nothing here depends on DPDK or libibverbs: see droce_mem_dpdk.h for the optional DPDK
 * memory helper.
 */
#ifndef DROCE_MR_H
#define DROCE_MR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @name Access bits
 * The same values as libibverbs' enum ibv_access_flags (IBV_ACCESS_LOCAL_WRITE ...
 * IBV_ACCESS_ZERO_BASED); the verbs layer static_asserts the equality, so it passes an
 * application's access flags through unchanged (after dropping IBV_ACCESS_OPTIONAL_RANGE).
 * @{
 */
#define DROCE_ACCESS_LOCAL_WRITE   0x01u /**< = IBV_ACCESS_LOCAL_WRITE */
#define DROCE_ACCESS_REMOTE_WRITE  0x02u /**< = IBV_ACCESS_REMOTE_WRITE */
#define DROCE_ACCESS_REMOTE_READ   0x04u /**< = IBV_ACCESS_REMOTE_READ */
#define DROCE_ACCESS_REMOTE_ATOMIC 0x08u /**< = IBV_ACCESS_REMOTE_ATOMIC */
#define DROCE_ACCESS_MW_BIND       0x10u /**< = IBV_ACCESS_MW_BIND */
#define DROCE_ACCESS_ZERO_BASED    0x20u /**< = IBV_ACCESS_ZERO_BASED */
/** The remote access bits. */
#define DROCE_ACCESS_REMOTE \
	(DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC)
/** Every bit droce_mr_reg() accepts. */
#define DROCE_ACCESS_MR_ALL                                                      \
	(DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE | DROCE_ACCESS_MW_BIND | \
	 DROCE_ACCESS_ZERO_BASED)
/** Every bit a window bind accepts (LOCAL_WRITE is accepted and dropped). */
#define DROCE_ACCESS_MW_ALL \
	(DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE | DROCE_ACCESS_ZERO_BASED)
/** @} */

/** @name Keys @{ */
#define DROCE_MR_KEY_BYTE_MASK 0xffu /**< the key byte is key & 0xff */
/** Largest capacity of a table: 2^24 indexes minus the unused slot 0 (8 random bits left). */
#define DROCE_MR_MAX_CAPACITY ((UINT32_C(1) << 24) - 1)

/** Key byte of @p key. */
static inline uint8_t droce_mr_key_byte(uint32_t key)
{
	return (uint8_t)(key & DROCE_MR_KEY_BYTE_MASK);
}

/** @p key with its key byte replaced by @p byte (what a type-2 bind's consumer chooses). */
static inline uint32_t droce_mr_key_with_byte(uint32_t key, uint8_t byte)
{
	return (key & ~DROCE_MR_KEY_BYTE_MASK) | byte;
}

/** Whether @p a and @p b differ in their key byte at most (same index, same tag). */
static inline int droce_mr_key_same_stem(uint32_t a, uint32_t b)
{
	return ((a ^ b) & ~DROCE_MR_KEY_BYTE_MASK) == 0;
}
/** @} */

/** What an entry holds. */
enum droce_mr_type {
	DROCE_MR_TYPE_NONE = 0, /**< free slot */
	DROCE_MR_TYPE_MR,       /**< memory region */
	DROCE_MR_TYPE_MW1,      /**< type-1 memory window */
	DROCE_MR_TYPE_MW2,      /**< type-2 (2B: QP-associated) memory window */
};

/** Life of an entry. Only VALID entries pass a check. */
enum droce_mr_state {
	DROCE_MR_STATE_FREE = 0, /**< slot unused */
	DROCE_MR_STATE_INVALID,  /**< allocated but unusable: MR invalidated, MW not bound */
	DROCE_MR_STATE_VALID,    /**< MR registered, or MW bound */
};

/** Window types, the same values as libibverbs' IBV_MW_TYPE_1 and IBV_MW_TYPE_2. */
enum droce_mw_type {
	DROCE_MW_TYPE_1 = 1,
	DROCE_MW_TYPE_2 = 2,
};

/**
 * Outcome of a data-path check. The transport maps the failures (doc/memory.md): a local check
 * failure completes the work request with IBV_WC_LOC_PROT_ERR; a remote check failure is an
 * R_Key violation, answered with AETH NAK code 2, Remote Access Error (IBV_WC_REM_ACCESS_ERR
 * at the requester), except DROCE_MR_MISALIGNED: NAK code 1, Invalid Request
 * (IBV_WC_REM_INV_REQ_ERR), as Linux Soft-RoCE answers both.
 */
enum droce_mr_status {
	DROCE_MR_OK = 0,        /**< access allowed, host pointer given */
	DROCE_MR_BAD_KEY,       /**< no valid MR/MW of the right kind carries this key */
	DROCE_MR_BAD_PD,        /**< the key's PD is not the QP's */
	DROCE_MR_BAD_QP,        /**< type-2 window bound to another QP */
	DROCE_MR_NO_ACCESS,     /**< the entry does not grant the access asked for */
	DROCE_MR_OUT_OF_BOUNDS, /**< [va, va + len) is not inside the MR or window */
	DROCE_MR_MISALIGNED,    /**< atomic address not 8-byte aligned */
	DROCE_MR_STATUS_MAX,
};

/** Name of each status, for traces and counters ("ok", "bad_key", ...). */
extern const char *const droce_mr_status_name[DROCE_MR_STATUS_MAX];

/**
 * One slot of the table: 64 bytes, one cache line. The fields up to mr_key/lkey are the data-path
 * view, written under the seqlock @c seq; the rest is control-path bookkeeping that readers
 * never touch. Private: use the functions below.
 */
struct droce_mr_entry {
	uint32_t seq;    /**< seqlock: odd while being written */
	uint32_t key;    /**< current key (kept when the slot is freed: next byte follows it) */
	uint32_t pd;     /**< protection domain id given by the verbs layer */
	uint32_t qpn;    /**< type-2 MW: QP it is bound to */
	uint64_t addr;   /**< host address of byte @c iova */
	uint64_t iova;   /**< first address the keys' users see */
	uint64_t length; /**< bytes */
	uint16_t access; /**< DROCE_ACCESS_* (window: its own rights) */
	uint8_t type;    /**< enum droce_mr_type */
	uint8_t state;   /**< enum droce_mr_state */
	union {
		uint32_t mr_key; /**< MW: rkey of the MR it is bound to */
		uint32_t lkey;   /**< MR: its lkey (kept when freed: the next one differs) */
	};
	/* control path only, under the writer lock */
	uint32_t handle;    /**< MW: key at allocation, names the window */
	uint32_t nr_mw;     /**< MR: windows bound to it */
	uint32_t next_free; /**< free list link (FIFO), 0 = none */
	uint8_t flags;      /**< DROCE_MR_REG_* */
	uint8_t pad[3];
} __attribute__((aligned(64)));

/**
 * The table. The first cache line is what readers use; the writer's state is on the next one.
 * The table is process-local (it holds a pointer): it lives where the engine runs.
 */
struct droce_mr_table {
	struct droce_mr_entry *entries; /**< nslots entries, slot 0 unused */
	uint32_t nslots;                /**< capacity + 1 */
	uint32_t capacity;              /**< entries usable */
	uint32_t index_shift;           /**< a key's index is key >> index_shift */
	uint32_t *busy; /**< per slot: zero-copy frames still holding the MR's bytes */
	uint32_t lock __attribute__((aligned(64))); /**< writer lock */
	uint32_t used;                              /**< slots in use */
	uint32_t free_head;                         /**< first slot to reuse */
	uint32_t free_tail;                         /**< last freed slot */
	uint8_t own_mem;                            /**< entries were allocated by init */
	uint64_t busy_waits;    /**< droce_mr_busy_wait() calls that found frames in flight */
	uint64_t busy_timeouts; /**< of those, the ones that gave up (frames still in flight) */
};

/** Index (slot) of @p key in @p t: its high bits. */
static inline uint32_t droce_mr_key_index(const struct droce_mr_table *t, uint32_t key)
{
	return key >> t->index_shift;
}

/** The key of slot @p index of @p t whose bits below the index are those of @p low. */
static inline uint32_t droce_mr_key_make(const struct droce_mr_table *t, uint32_t index,
					 uint32_t low)
{
	return (index << t->index_shift) | (low & ((UINT32_C(1) << t->index_shift) - 1));
}

/** Consistent copy of one entry's data-path view (droce_mr_lookup(), droce_mr_query()). */
struct droce_mr_info {
	uint32_t key;       /**< current key (an MR's rkey) */
	uint32_t lkey;      /**< MR: its lkey (0 for a window) */
	uint8_t type;       /**< enum droce_mr_type */
	uint8_t state;      /**< enum droce_mr_state */
	uint16_t access;    /**< DROCE_ACCESS_* */
	uint32_t pd;        /**< protection domain */
	uint32_t qpn;       /**< type-2 MW: bound QP */
	uint32_t mr_key;    /**< MW: bound MR's key */
	uint32_t bound_mws; /**< MR: windows bound (droce_mr_query() only, else 0) */
	uint64_t addr;      /**< host address of byte iova */
	uint64_t iova;      /**< first address users see */
	uint64_t length;    /**< bytes */
};

/** Keys of a registered MR (two independent random draws: they differ). */
struct droce_mr_keys {
	uint32_t lkey;
	uint32_t rkey;
};

/* ------------------------------------------------------- zero-copy holds (any thread) */

/**
 * @name Busy counts
 * A zero-copy frame (doc/transport.md) carries bytes of an MR by reference until the device
 * or the receiver frees it, after the engine pass that checked the key. The transport takes
 * one count on the MR's slot per such frame, in the same pass as the key check, and drops it
 * in the frame's free callback, on whatever thread frees it. Deregistration (after its engine
 * sync, so that every count taken under the old key is visible) waits for the slot's count
 * to reach zero before the memory may be unmapped. A count belongs to the slot, not the
 * registration: a slot reused in the meantime makes the wait longer, never shorter.
 * @{
 */

/** Take a count on the slot of @p key, a key that just passed a check (its index is valid). */
static inline void droce_mr_busy_get(struct droce_mr_table *t, uint32_t key)
{
	__atomic_fetch_add(&t->busy[droce_mr_key_index(t, key)], 1, __ATOMIC_RELAXED);
}

/**
 * Drop a count taken with droce_mr_busy_get() on @p key: after the last read of the MR's bytes
 * (release: pairs with the acquire load of droce_mr_busy()).
 */
static inline void droce_mr_busy_put(struct droce_mr_table *t, uint32_t key)
{
	__atomic_fetch_sub(&t->busy[droce_mr_key_index(t, key)], 1, __ATOMIC_RELEASE);
}

/** Counts held on the slot of @p key (0 for a key of no slot). */
uint32_t droce_mr_busy(const struct droce_mr_table *t, uint32_t key);

/**
 * Wait until no count is held on the slot of @p key, sleeping between looks, at most
 * @p timeout_us microseconds. Control path (never on an engine lcore: the frames it waits
 * for are freed by the engine's passes).
 * @return 0 (counted in busy_waits when it had to wait); -ETIMEDOUT when counts were still
 * held at the end (counted in busy_timeouts); -EINVAL for a key of no slot.
 */
int droce_mr_busy_wait(struct droce_mr_table *t, uint32_t key, uint64_t timeout_us);

/** @} */

/* ------------------------------------------------------------------ control path */

/** Bytes of entry memory for a table of @p capacity (for droce_mr_table_init()'s @p mem). */
size_t droce_mr_table_memsize(uint32_t capacity);
/**
 * Keys made since the process started while the kernel's random source (getrandom()) failed:
 * those keys come from a weaker mix of AT_RANDOM, the clock and a counter (doc/memory.md).
 */
uint64_t droce_mr_keys_weak(void);

/**
 * Set up @p t with room for @p capacity MRs and MWs together. @p mem, when not NULL, is
 * droce_mr_table_memsize() bytes, 64-byte aligned, that the table uses for its entries (say
 * hugepage memory on the engine's NUMA node); NULL lets the table allocate them. O(capacity).
 * @return 0; -EINVAL if @p capacity is 0 or above DROCE_MR_MAX_CAPACITY or @p mem is not
 * 64-byte aligned; -ENOMEM if the entries cannot be allocated.
 */
int droce_mr_table_init(struct droce_mr_table *t, uint32_t capacity, void *mem);

/** Release what init allocated. No reader may use @p t any more. */
void droce_mr_table_fini(struct droce_mr_table *t);

/** Slots in use (MRs and MWs), a snapshot. */
uint32_t droce_mr_table_used(const struct droce_mr_table *t);

/** Flag of droce_mr_reg(): Local Invalidate and Send with Invalidate may invalidate the MR. */
#define DROCE_MR_REG_INVALIDATE 0x01u

/** An iova keeps the offset of its address within a page of this size (as the kernel asks). */
#define DROCE_MR_IOVA_PAGE 4096u

/**
 * Register [@p addr, @p addr + @p length) for protection domain @p pd. O(1): no page is walked,
 * touched or pinned. @p iova is the address the keys' users give for byte @p addr: @p addr
 * itself for ibv_reg_mr(), the iova of ibv_reg_mr_iova2(); with DROCE_ACCESS_ZERO_BASED it is
 * ignored and the MR starts at iova 0. @p flags: 0 or DROCE_MR_REG_INVALIDATE.
 * @return 0 and @p keys; -EINVAL for: an access bit outside DROCE_ACCESS_MR_ALL, REMOTE_WRITE
 * or REMOTE_ATOMIC without LOCAL_WRITE, @p length 0, @p addr NULL, @p addr + @p length or
 * iova + @p length beyond 2^64 - 1, @p iova and @p addr at different offsets in their
 * DROCE_MR_IOVA_PAGE pages (not zero based), an unknown flag; -ENOMEM when the table is full.
 */
int droce_mr_reg(struct droce_mr_table *t, uint32_t pd, void *addr, uint64_t length, uint64_t iova,
		 unsigned int access, unsigned int flags, struct droce_mr_keys *keys);

/** @name droce_mr_rereg() changes (the values of IBV_REREG_MR_CHANGE_*) @{ */
#define DROCE_MR_REREG_TRANSLATION 0x01u /**< new @p addr, @p length, @p iova */
#define DROCE_MR_REREG_PD          0x02u /**< new @p pd */
#define DROCE_MR_REREG_ACCESS      0x04u /**< new @p access */
/** @} */

/**
 * Reregister the MR of @p lkey in place (same index), with new keys if @p change has
 * DROCE_MR_REREG_TRANSLATION, else with its keys (the new access and PD govern them); what @p
 * change names is replaced, the rest kept; the arguments not named are ignored. Works on an
 * invalidated MR too (it becomes valid). All or nothing: on failure the MR and its keys are
 * unchanged.
 * @return 0 and @p keys; -EINVAL if @p change is 0 or has an unknown bit, @p lkey is not the
 * current key of an MR, the resulting MR would be refused by droce_mr_reg(), or
 * DROCE_ACCESS_ZERO_BASED changes without DROCE_MR_REREG_TRANSLATION; -EBUSY while windows
 * are bound to the MR.
 */
int droce_mr_rereg(struct droce_mr_table *t, uint32_t lkey, unsigned int change, uint32_t pd,
		   void *addr, uint64_t length, uint64_t iova, unsigned int access,
		   struct droce_mr_keys *keys);

/**
 * Deregister the MR of @p lkey (valid or invalidated). Lookups that start after this returns
 * fail; see doc/memory.md for accesses already in flight.
 * @return 0; -EINVAL if @p lkey is not the current key of an MR; -EBUSY while windows are
 * bound to it (IBA 10.6.7.2.6).
 */
int droce_mr_dereg(struct droce_mr_table *t, uint32_t lkey);

/**
 * Consistent copy of the entry whose current key is @p key, in any state but free, with the
 * control-path count of bound windows. Control path (takes the writer lock).
 * @return 0; -EINVAL if no MR or MW carries @p key.
 */
int droce_mr_query(struct droce_mr_table *t, uint32_t key, struct droce_mr_info *info);

/**
 * Allocate a window of @p type for @p pd, unbound. @p handle names it for bind and dealloc
 * (it is also its first key, refused by every check until a bind).
 * @return 0; -EINVAL for a @p type other than 1 or 2; -ENOMEM when the table is full.
 */
int droce_mw_alloc(struct droce_mr_table *t, uint32_t pd, enum droce_mw_type type,
		   uint32_t *handle);

/**
 * Free the window @p handle, unbinding it first if bound.
 * @return 0; -EINVAL if @p handle names no allocated window.
 */
int droce_mw_dealloc(struct droce_mr_table *t, uint32_t handle);

/** What a bind asks for (the ibv_mw_bind_info of libibverbs, with the MR by key). */
struct droce_mw_bind_info {
	uint32_t mr_lkey;    /**< the MR's current key (type 1, length 0: ignored) */
	uint64_t addr;       /**< window start, in the MR's iova space */
	uint64_t length;     /**< bytes (type 1: 0 unbinds) */
	unsigned int access; /**< DROCE_ACCESS_REMOTE_* [| ZERO_BASED, type 2 only] */
};

/**
 * Bind type-1 window @p handle as @p b asks (ibv_bind_mw()); the previous binding, if any, is
 * replaced, and @p b->length 0 unbinds. The key byte advances on every bind, as
 * ibv_inc_rkey() does; the new key is returned in @p rkey. On failure nothing changes.
 * @return 0 and @p rkey;
 * -EINVAL: @p handle is not a type-1 window, an access bit outside DROCE_ACCESS_MW_ALL,
 *  ZERO_BASED (o10-36.2.2), @p b->mr_lkey not the key of a valid MR;
 * -EPERM: the window's PD is not @p qp_pd or not the MR's (C10-72);
 * -EACCES: the MR lacks MW_BIND (C10-73), or the window asks remote write or atomic on an MR
 *  without local write (C10-74);
 * -ERANGE: the window is not inside the MR (C10-75).
 */
int droce_mw_bind_type1(struct droce_mr_table *t, uint32_t handle, uint32_t qp_pd,
			const struct droce_mw_bind_info *b, uint32_t *rkey);

/**
 * As droce_mw_bind_type1(), with the new key chosen by the caller: the key the
 * verbs layer returned to the application when it posted the bind (the
 * window's index, a key byte other than the current one). The engine uses this
 * form, so that a bind flushed before it ran cannot put the application's view
 * of the key and the table's out of step.
 * @return as droce_mw_bind_type1(); also -EINVAL for @p rkey of another index or
 *  equal to the window's current key.
 */
int droce_mw_bind_type1_key(struct droce_mr_table *t, uint32_t handle, uint32_t qp_pd,
			    const struct droce_mw_bind_info *b, uint32_t rkey);

/**
 * Bind type-2 window @p handle to QP @p qpn as a Bind MW work request of that QP asks; the
 * window's key becomes @p rkey, whose byte the consumer chose (its index must be the
 * window's). On failure nothing changes.
 * @return 0;
 * -EINVAL: @p handle is not a type-2 window, @p rkey has another index, @p b->length is 0
 *  (o10-37.2.40), an access bit outside DROCE_ACCESS_MW_ALL, @p b->mr_lkey not the key of a
 *  valid MR;
 * -EBUSY: the window is bound, invalidate it first (o10-37.2.30);
 * -EPERM, -EACCES, -ERANGE: as droce_mw_bind_type1().
 */
int droce_mw_bind_type2(struct droce_mr_table *t, uint32_t handle, uint32_t qp_pd, uint32_t qpn,
			uint32_t rkey, const struct droce_mw_bind_info *b);

/**
 * Local Invalidate of @p key from a send queue of a QP in @p pd: unbinds a type-2 window or
 * invalidates an MR registered with DROCE_MR_REG_INVALIDATE (rereg makes it valid again).
 * @return 0; -EINVAL if @p key is not the key of a valid MR or bound window, or names a type-1
 * window (o10-37.2.26); -EPERM if its PD is not @p pd; -EACCES for an MR registered without
 * DROCE_MR_REG_INVALIDATE; -EBUSY for an MR with bound windows.
 */
int droce_mr_invalidate_local(struct droce_mr_table *t, uint32_t key, uint32_t pd);

/**
 * Send with Invalidate received on QP @p qpn of @p pd, carrying @p rkey in its IETH: as
 * droce_mr_invalidate_local(), and a type-2 window must be bound to @p qpn.
 * @return as droce_mr_invalidate_local(); also -EPERM for a window bound to another QP.
 */
int droce_mr_invalidate_remote(struct droce_mr_table *t, uint32_t rkey, uint32_t pd, uint32_t qpn);

/* ------------------------------------------------------------------ data path */

/** Spin-wait hint while a writer holds an entry. */
static inline void droce_mr_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

/**
 * Copy the data-path view of @p e consistently (seqlock read side): retry while a writer is
 * inside (odd sequence) or has been since the first read. Internal to the checks below.
 */
static inline void droce_mr_entry_read(const struct droce_mr_entry *e, struct droce_mr_info *v)
{
	uint32_t s1, s2;

	for (;;) {
		/* pairs with the release store ending droce_mr_entry_write_end() */
		s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1) {
			droce_mr_cpu_relax();
			continue;
		}
		v->key = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
		v->pd = __atomic_load_n(&e->pd, __ATOMIC_RELAXED);
		v->qpn = __atomic_load_n(&e->qpn, __ATOMIC_RELAXED);
		v->addr = __atomic_load_n(&e->addr, __ATOMIC_RELAXED);
		v->iova = __atomic_load_n(&e->iova, __ATOMIC_RELAXED);
		v->length = __atomic_load_n(&e->length, __ATOMIC_RELAXED);
		v->access = __atomic_load_n(&e->access, __ATOMIC_RELAXED);
		v->type = __atomic_load_n(&e->type, __ATOMIC_RELAXED);
		v->state = __atomic_load_n(&e->state, __ATOMIC_RELAXED);
		v->mr_key = __atomic_load_n(&e->mr_key, __ATOMIC_RELAXED);
		/*
		 * Keeps the field loads above before the second load of seq; pairs with the
		 * release fence after the writer made seq odd.
		 */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			break;
	}
	/* one field holds an MR's lkey and a window's MR key */
	v->lkey = v->type == DROCE_MR_TYPE_MR ? v->mr_key : 0;
	if (v->type == DROCE_MR_TYPE_MR)
		v->mr_key = 0;
	v->bound_mws = 0;
}

/**
 * Data-path lookup: copy of the valid MR or bound window whose rkey is @p key (an lkey
 * names nothing here).
 * @return DROCE_MR_OK and @p info, or DROCE_MR_BAD_KEY.
 */
static inline enum droce_mr_status droce_mr_lookup(const struct droce_mr_table *t, uint32_t key,
						   struct droce_mr_info *info)
{
	uint32_t idx = droce_mr_key_index(t, key);

	if (idx >= t->nslots)
		return DROCE_MR_BAD_KEY;
	droce_mr_entry_read(&t->entries[idx], info);
	if (info->key != key || info->state != DROCE_MR_STATE_VALID)
		return DROCE_MR_BAD_KEY;
	return DROCE_MR_OK;
}

/**
 * Bounds of [@p va, @p va + @p len) in @p v. A zero-length access is always in bounds and
 * gets a NULL host pointer (nothing may be touched); otherwise @p host is the address of @p va.
 */
static inline enum droce_mr_status droce_mr_range(const struct droce_mr_info *v, uint64_t va,
						  uint64_t len, void **host)
{
	uint64_t off = va - v->iova;

	if (len == 0) {
		*host = NULL;
		return DROCE_MR_OK;
	}
	/* written so that nothing overflows: va + len may exceed 2^64 */
	if (va < v->iova || len > v->length || off > v->length - len)
		return DROCE_MR_OUT_OF_BOUNDS;
	*host = (void *)(uintptr_t)(v->addr + off);
	return DROCE_MR_OK;
}

/**
 * Local check of a scatter/gather element of a QP in @p pd: @p lkey must name a valid MR (never
 * a window: windows are for remote access), of @p pd, granting @p access (0 to read local
 * memory, DROCE_ACCESS_LOCAL_WRITE to write it), and hold [@p addr, @p addr + @p len) in its
 * iova space. Checked in that order, first failure returned.
 * @return DROCE_MR_OK and @p host (NULL when @p len is 0), DROCE_MR_BAD_KEY, DROCE_MR_BAD_PD,
 * DROCE_MR_NO_ACCESS or DROCE_MR_OUT_OF_BOUNDS.
 */
static inline enum droce_mr_status droce_mr_check_local(const struct droce_mr_table *t,
							uint32_t lkey, uint32_t pd, uint64_t addr,
							uint64_t len, unsigned int access,
							void **host)
{
	uint32_t idx = droce_mr_key_index(t, lkey);
	struct droce_mr_info v;

	if (idx >= t->nslots)
		return DROCE_MR_BAD_KEY;
	droce_mr_entry_read(&t->entries[idx], &v);
	if (v.type != DROCE_MR_TYPE_MR || v.lkey != lkey || v.state != DROCE_MR_STATE_VALID)
		return DROCE_MR_BAD_KEY;
	if (v.pd != pd)
		return DROCE_MR_BAD_PD;
	if (access & ~(unsigned int)v.access)
		return DROCE_MR_NO_ACCESS;
	return droce_mr_range(&v, addr, len, host);
}

/**
 * Remote check of a RETH or AtomicETH received on QP @p qpn of @p pd: @p rkey must name a
 * valid MR or a bound window, of @p pd, bound to @p qpn if it is a type-2 window, granting
 * @p access (DROCE_ACCESS_REMOTE_READ, _WRITE or _ATOMIC), and hold [@p va, @p va + @p len).
 * Checked in that order. (IBA C9-88 lets a zero-length RDMA carry any R_Key: the transport
 * skips this check then.)
 * @return DROCE_MR_OK and @p host (NULL when @p len is 0), DROCE_MR_BAD_KEY, DROCE_MR_BAD_PD,
 * DROCE_MR_BAD_QP, DROCE_MR_NO_ACCESS or DROCE_MR_OUT_OF_BOUNDS.
 */
static inline enum droce_mr_status droce_mr_check_remote(const struct droce_mr_table *t,
							 uint32_t rkey, uint32_t pd, uint32_t qpn,
							 uint64_t va, uint64_t len,
							 unsigned int access, void **host)
{
	struct droce_mr_info v;

	if (droce_mr_lookup(t, rkey, &v) != DROCE_MR_OK)
		return DROCE_MR_BAD_KEY;
	if (v.pd != pd)
		return DROCE_MR_BAD_PD;
	if (v.type == DROCE_MR_TYPE_MW2 && v.qpn != qpn)
		return DROCE_MR_BAD_QP;
	if (access & ~(unsigned int)v.access)
		return DROCE_MR_NO_ACCESS;
	return droce_mr_range(&v, va, len, host);
}

/**
 * Alignment of an atomic operation (IBA ch. 9: the VA of an atomic is 8-byte aligned): both
 * the wire @p va and the @p host address it maps to (a zero-based MR or window may map an
 * aligned va to an unaligned address, and the CPU's 64-bit atomics need it aligned).
 * @return DROCE_MR_OK or DROCE_MR_MISALIGNED.
 */
static inline enum droce_mr_status droce_mr_check_atomic(uint64_t va, const void *host)
{
	return ((va | (uint64_t)(uintptr_t)host) & 7) ? DROCE_MR_MISALIGNED : DROCE_MR_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_MR_H */
