/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Single-producer/single-consumer rings of fixed-size slots in shared memory.
 *
 * A ring lives in memory shared by two processes (an application and droce's
 * engine) that may map it at different addresses and may not trust each
 * other. The shared area holds offsets and 32-bit free-running indices only:
 *
 * @code
 *   offset   0  struct droce_ring_hdr   geometry, written once by droce_ring_init()
 *   offset  64  producer line           published producer index, written only by the producer
 *   offset 128  consumer line           released consumer index, written only by the consumer
 *   hdr.slots_off (192 from init)       slots[hdr.slots], hdr.slot_size bytes each
 * @endcode
 *
 * Each side attaches a private handle (struct droce_ring_prod or struct
 * droce_ring_cons, in its own memory) that copies the validated geometry and
 * keeps its own index; the shared copies of the geometry and of its own index
 * are never read again. The slot of index i is i & (slots - 1), so a slot
 * pointer is inside the slot array whatever the peer writes. A peer index that
 * no correct peer could have written (the producer ahead of the consumer by more
 * than the slot count, an index moving backwards, the consumer releasing what
 * was not published) marks the handle corrupt: every later call reports
 * -EPROTO and no slot is touched through it again. doc/rings.md describes the
 * memory ordering and the trust model.
 *
 * Errors: -EINVAL (bad argument or geometry), -EPROTO (the peer broke the
 * protocol). Bursts return a count.
 */
#ifndef DROCE_RING_H
#define DROCE_RING_H

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Cache line size the layout is built on. */
#define DROCE_RING_LINE 64
/** Value of droce_ring_hdr.magic: "dRNG" read as a little-endian word. */
#define DROCE_RING_MAGIC 0x474e5264u
/** Layout version this header implements. */
#define DROCE_RING_VERSION 1u
/** Largest slot count (a power of two): counts fit an int and indices never alias. */
#define DROCE_RING_SLOTS_MAX (1u << 24)
/** Slot sizes are multiples of this, so 8-byte fields in slots are aligned. */
#define DROCE_RING_SLOT_ALIGN 8u
/** Largest slot size in bytes. */
#define DROCE_RING_SLOT_SIZE_MAX (1u << 16)

/** Immutable geometry, the first cache line of the shared area. */
struct droce_ring_hdr {
	uint32_t magic;     /**< DROCE_RING_MAGIC, stored last by droce_ring_init() */
	uint32_t version;   /**< DROCE_RING_VERSION */
	uint32_t slots;     /**< slot count: a power of two, 1..DROCE_RING_SLOTS_MAX */
	uint32_t slot_size; /**< bytes per slot: a multiple of 8, 8..DROCE_RING_SLOT_SIZE_MAX */
	uint32_t slots_off; /**< offset of slot 0 from this header: a multiple of 64, >= 192 */
	uint8_t reserved[DROCE_RING_LINE - 5 * sizeof(uint32_t)]; /**< zero */
};

/** A cache line holding one index and nothing else. */
struct droce_ring_idx {
	uint32_t idx; /**< free-running index: the slot is idx & (slots - 1) */
	uint8_t pad[DROCE_RING_LINE - sizeof(uint32_t)];
} __attribute__((aligned(DROCE_RING_LINE)));

/** The shared area up to the slots; the memory passed to init and attach starts with it. */
struct droce_ring {
	struct droce_ring_hdr hdr;  /**< geometry, never written after init */
	struct droce_ring_idx prod; /**< producer index: written only by the producer */
	struct droce_ring_idx cons; /**< consumer index: written only by the consumer */
} __attribute__((aligned(DROCE_RING_LINE)));

/** Offset of the slot array that droce_ring_init() writes. */
#define DROCE_RING_SLOTS_OFF ((uint32_t)sizeof(struct droce_ring))

static_assert(sizeof(struct droce_ring_hdr) == DROCE_RING_LINE, "header is one cache line");
static_assert(sizeof(struct droce_ring_idx) == DROCE_RING_LINE, "an index owns its line");
static_assert(offsetof(struct droce_ring, prod) == 1 * DROCE_RING_LINE, "producer on line 1");
static_assert(offsetof(struct droce_ring, cons) == 2 * DROCE_RING_LINE, "consumer on line 2");
static_assert(offsetof(struct droce_ring, prod) % DROCE_RING_LINE == 0, "producer aligned");
static_assert(offsetof(struct droce_ring, cons) % DROCE_RING_LINE == 0, "consumer aligned");
static_assert(offsetof(struct droce_ring, prod) / DROCE_RING_LINE !=
		      offsetof(struct droce_ring, cons) / DROCE_RING_LINE,
	      "producer and consumer indices on different lines");
static_assert(sizeof(struct droce_ring) == 3 * DROCE_RING_LINE, "slots start on line 3");
static_assert(DROCE_RING_SLOTS_MAX <= (uint32_t)INT32_MAX, "counts are returned as int");

/** Producer handle: private to the producer, in its own memory. Fields are read-only. */
struct droce_ring_prod {
	uint8_t *slots;       /**< slot 0 in this process's mapping */
	uint32_t *prod;       /**< shared producer index, stored to and never loaded */
	const uint32_t *cons; /**< shared consumer index, loaded and checked */
	uint32_t head;        /**< private copy of the published producer index */
	uint32_t cons_cache;  /**< consumer index last loaded and accepted */
	uint32_t size;        /**< slot count */
	uint32_t mask;        /**< size - 1 */
	uint32_t slot_size;   /**< bytes per slot */
	bool corrupt;         /**< the consumer broke the protocol: every call fails */
};

/** Consumer handle: private to the consumer, in its own memory. Fields are read-only. */
struct droce_ring_cons {
	const uint8_t *slots; /**< slot 0 in this process's mapping */
	uint32_t *cons;       /**< shared consumer index, stored to and never loaded */
	const uint32_t *prod; /**< shared producer index, loaded and checked */
	uint32_t tail;        /**< private copy of the released consumer index */
	uint32_t prod_cache;  /**< producer index last loaded and accepted */
	uint32_t size;        /**< slot count */
	uint32_t mask;        /**< size - 1 */
	uint32_t slot_size;   /**< bytes per slot */
	bool corrupt;         /**< the producer broke the protocol: every call fails */
};

/**
 * Bytes of shared memory a ring of @p slots slots of @p slot_size bytes needs,
 * rounded up to a cache line so rings can be laid out back to back; 0 when the
 * geometry is invalid (slots not a power of two in 1..DROCE_RING_SLOTS_MAX,
 * slot_size not a multiple of 8 in 8..DROCE_RING_SLOT_SIZE_MAX).
 */
size_t droce_ring_mem_size(uint32_t slots, uint32_t slot_size);

/**
 * Lay out an empty ring in @p mem (64-byte aligned, @p len bytes, at least
 * droce_ring_mem_size()): geometry, both indices 0, the magic stored last with
 * release order. Call before the peer attaches; slots are left as they are.
 *
 * @return 0, or -EINVAL for a NULL or misaligned @p mem, an invalid geometry or
 *   @p len too small.
 */
int droce_ring_init(void *mem, size_t len, uint32_t slots, uint32_t slot_size);

/**
 * Attach the producer side to the ring at @p mem (this process's mapping of
 * @p len bytes). The header is untrusted: each field is loaded once, checked
 * and copied into @p p. The head starts at the shared producer index, so a
 * producer can re-attach to a ring it left. On failure @p p is marked corrupt.
 *
 * @return 0; -EINVAL for a NULL @p p, a NULL or misaligned @p mem, @p len shorter
 *   than the header, bad magic or version, a slot count that is not a power of
 *   two in 1..DROCE_RING_SLOTS_MAX, a slot size that is not a multiple of 8 in
 *   8..DROCE_RING_SLOT_SIZE_MAX, a slot array offset that is not a multiple of
 *   64 or overlaps the index lines, a slot array that ends beyond @p len;
 *   -EPROTO when the shared indices are more than the slot count apart.
 */
int droce_ring_prod_attach(struct droce_ring_prod *p, void *mem, size_t len);

/** Attach the consumer side; the same checks and errors as droce_ring_prod_attach(). */
int droce_ring_cons_attach(struct droce_ring_cons *c, void *mem, size_t len);

/* ------------------------------------------------------------ producer */

/**
 * Load the consumer index (acquire) and check it: it may only have moved
 * forward, up to the head. Use when the cached count is not enough.
 *
 * @return free slots, or -EPROTO (the handle is then corrupt for good).
 */
static inline int droce_ring_prod_reload(struct droce_ring_prod *p)
{
	uint32_t cons;

	if (p->corrupt)
		return -EPROTO;
	/*
	 * Pairs with the release store in droce_ring_cons_release(): the
	 * consumer's reads of the slots it released are done before we reuse them.
	 */
	cons = __atomic_load_n(p->cons, __ATOMIC_ACQUIRE);
	/* valid: cons_cache <= cons <= head, in free-running arithmetic */
	if (cons - p->cons_cache > p->head - p->cons_cache) {
		p->corrupt = true;
		return -EPROTO;
	}
	p->cons_cache = cons;
	return (int)(p->size - (p->head - cons));
}

/**
 * Free slots. Counted from the cached consumer index; the shared one is loaded
 * (droce_ring_prod_reload()) only when the cached copy says the ring is full.
 *
 * @return free slots (0 when full), or -EPROTO when the consumer is corrupt.
 */
static inline int droce_ring_prod_free(struct droce_ring_prod *p)
{
	uint32_t used = p->head - p->cons_cache;

	if (p->corrupt)
		return -EPROTO;
	if (used < p->size)
		return (int)(p->size - used);
	return droce_ring_prod_reload(p);
}

/**
 * The @p i-th slot after the head, to fill before droce_ring_prod_publish();
 * @p i must be below the last free count. Always inside the slot array.
 */
static inline void *droce_ring_prod_slot(struct droce_ring_prod *p, uint32_t i)
{
	return p->slots + (size_t)((p->head + i) & p->mask) * p->slot_size;
}

/**
 * Hand the @p n slots after the head (filled through droce_ring_prod_slot(),
 * @p n at most the last free count) to the consumer: one release store.
 * Does nothing on a corrupt handle.
 */
static inline void droce_ring_prod_publish(struct droce_ring_prod *p, uint32_t n)
{
	if (p->corrupt)
		return;
	p->head += n;
	/*
	 * Pairs with the acquire load in droce_ring_cons_avail(): the slot writes
	 * above are visible to the consumer once it sees this index.
	 */
	__atomic_store_n(p->prod, p->head, __ATOMIC_RELEASE);
}

/**
 * Copy up to @p n slots from @p objs (@p n * slot_size contiguous bytes) into
 * the ring and publish them. The consumer index is reloaded when the cached
 * free count is below @p n.
 *
 * @return slots enqueued: 0 when full or when the consumer is corrupt
 *   (droce_ring_prod_free() then says -EPROTO).
 */
static inline uint32_t droce_ring_prod_enqueue_burst(struct droce_ring_prod *p, const void *objs,
						     uint32_t n)
{
	const uint8_t *src = (const uint8_t *)objs;
	uint32_t first;
	int room;

	if (n == 0)
		return 0;
	room = droce_ring_prod_free(p);
	if (room >= 0 && (uint32_t)room < n)
		room = droce_ring_prod_reload(p);
	if (room <= 0)
		return 0;
	if (n > (uint32_t)room)
		n = (uint32_t)room;
	first = p->size - (p->head & p->mask);
	if (first > n)
		first = n;
	memcpy(droce_ring_prod_slot(p, 0), src, (size_t)first * p->slot_size);
	if (n > first)
		memcpy(droce_ring_prod_slot(p, first), src + (size_t)first * p->slot_size,
		       (size_t)(n - first) * p->slot_size);
	droce_ring_prod_publish(p, n);
	return n;
}

/* ------------------------------------------------------------ consumer */

/**
 * Slots published and not yet released: one acquire load of the producer
 * index, checked against the slot count and against its last value (it may
 * only move forward).
 *
 * @return available slots, or -EPROTO (the handle is then corrupt for good).
 */
static inline int droce_ring_cons_avail(struct droce_ring_cons *c)
{
	uint32_t prod, n;

	if (c->corrupt)
		return -EPROTO;
	/*
	 * Pairs with the release store in droce_ring_prod_publish(): the slots
	 * up to this index were written before it was stored.
	 */
	prod = __atomic_load_n(c->prod, __ATOMIC_ACQUIRE);
	n = prod - c->tail;
	/* valid: prod_cache <= prod <= tail + size, in free-running arithmetic */
	if (n > c->size || n < c->prod_cache - c->tail) {
		c->corrupt = true;
		return -EPROTO;
	}
	c->prod_cache = prod;
	return (int)n;
}

/**
 * The @p i-th slot after the tail; @p i must be below the last available
 * count. Always inside the slot array. The producer may still write it if it is
 * malicious: copy a field once before checking it.
 */
static inline const void *droce_ring_cons_slot(const struct droce_ring_cons *c, uint32_t i)
{
	return c->slots + (size_t)((c->tail + i) & c->mask) * c->slot_size;
}

/**
 * Give the @p n slots after the tail (read, @p n at most the last available
 * count) back to the producer: one release store. Does nothing on a corrupt
 * handle.
 */
static inline void droce_ring_cons_release(struct droce_ring_cons *c, uint32_t n)
{
	if (c->corrupt)
		return;
	c->tail += n;
	/*
	 * Pairs with the acquire load in droce_ring_prod_reload(): the slot
	 * reads above are done before the producer can see them free.
	 */
	__atomic_store_n(c->cons, c->tail, __ATOMIC_RELEASE);
}

/**
 * Copy up to @p n slots out of the ring into @p objs (room for @p n * slot_size
 * bytes) and release them. Copying first is the safe way to read slots of an
 * untrusted producer: check the copy, not the shared slot.
 *
 * @return slots dequeued: 0 when empty or when the producer is corrupt
 *   (droce_ring_cons_avail() then says -EPROTO).
 */
static inline uint32_t droce_ring_cons_dequeue_burst(struct droce_ring_cons *c, void *objs,
						     uint32_t n)
{
	uint8_t *dst = (uint8_t *)objs;
	int avail = droce_ring_cons_avail(c);
	uint32_t first;

	if (avail <= 0 || n == 0)
		return 0;
	if (n > (uint32_t)avail)
		n = (uint32_t)avail;
	first = c->size - (c->tail & c->mask);
	if (first > n)
		first = n;
	memcpy(dst, droce_ring_cons_slot(c, 0), (size_t)first * c->slot_size);
	if (n > first)
		memcpy(dst + (size_t)first * c->slot_size, droce_ring_cons_slot(c, first),
		       (size_t)(n - first) * c->slot_size);
	droce_ring_cons_release(c, n);
	return n;
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_RING_H */
