/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ring set-up and attach: the cold half of droce_ring.h. Everything read from
 * the shared header is untrusted and is loaded once, then checked, then copied
 * into the private handle.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "droce_ring.h"

/* What an attach takes from the shared area, each field loaded once. */
struct ring_view {
	uint32_t slots;
	uint32_t slot_size;
	uint32_t slots_off;
	uint32_t prod;
	uint32_t cons;
};

static bool ring_geometry_ok(uint32_t slots, uint32_t slot_size)
{
	return slots != 0 && slots <= DROCE_RING_SLOTS_MAX && (slots & (slots - 1)) == 0 &&
	       slot_size != 0 && slot_size <= DROCE_RING_SLOT_SIZE_MAX &&
	       slot_size % DROCE_RING_SLOT_ALIGN == 0;
}

static bool ring_mem_ok(const void *mem)
{
	return mem != NULL && (uintptr_t)mem % DROCE_RING_LINE == 0;
}

size_t droce_ring_mem_size(uint32_t slots, uint32_t slot_size)
{
	uint64_t len;

	if (!ring_geometry_ok(slots, slot_size))
		return 0;
	len = DROCE_RING_SLOTS_OFF + (uint64_t)slots * slot_size;
	len = (len + DROCE_RING_LINE - 1) & ~(uint64_t)(DROCE_RING_LINE - 1);
#if SIZE_MAX < UINT64_MAX
	if (len > SIZE_MAX)
		return 0;
#endif
	return (size_t)len;
}

int droce_ring_init(void *mem, size_t len, uint32_t slots, uint32_t slot_size)
{
	struct droce_ring *r = (struct droce_ring *)mem;
	size_t need = droce_ring_mem_size(slots, slot_size);

	if (!ring_mem_ok(mem) || need == 0 || len < need)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->hdr.version = DROCE_RING_VERSION;
	r->hdr.slots = slots;
	r->hdr.slot_size = slot_size;
	r->hdr.slots_off = DROCE_RING_SLOTS_OFF;
	/*
	 * Pairs with the acquire load of the magic in ring_view_load(): an
	 * attach that sees the magic sees the geometry and the zeroed indices.
	 */
	__atomic_store_n(&r->hdr.magic, DROCE_RING_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

/* Load, once each, and check what an attach needs; 0, -EINVAL or -EPROTO. */
static int ring_view_load(struct ring_view *v, const void *mem, size_t len)
{
	const struct droce_ring *r = (const struct droce_ring *)mem;
	uint32_t version;

	if (!ring_mem_ok(mem) || len < sizeof(*r))
		return -EINVAL;
	/* Pairs with the release store of the magic in droce_ring_init(). */
	if (__atomic_load_n(&r->hdr.magic, __ATOMIC_ACQUIRE) != DROCE_RING_MAGIC)
		return -EINVAL;
	/*
	 * The peer may rewrite the header while it is checked: load each field
	 * exactly once (relaxed atomics keep the compiler from loading again)
	 * and check and use only the loaded values.
	 */
	version = __atomic_load_n(&r->hdr.version, __ATOMIC_RELAXED);
	v->slots = __atomic_load_n(&r->hdr.slots, __ATOMIC_RELAXED);
	v->slot_size = __atomic_load_n(&r->hdr.slot_size, __ATOMIC_RELAXED);
	v->slots_off = __atomic_load_n(&r->hdr.slots_off, __ATOMIC_RELAXED);
	if (version != DROCE_RING_VERSION || !ring_geometry_ok(v->slots, v->slot_size))
		return -EINVAL;
	if (v->slots_off % DROCE_RING_LINE != 0 || v->slots_off < DROCE_RING_SLOTS_OFF ||
	    v->slots_off > len)
		return -EINVAL;
	/* 32 x 32 bits in 64 bits: no overflow; compared with what is left after the offset */
	if ((uint64_t)v->slots * v->slot_size > (uint64_t)(len - v->slots_off))
		return -EINVAL;
	/*
	 * Pair with the release stores in droce_ring_prod_publish() and
	 * droce_ring_cons_release() of the peer, or of an earlier attach of this
	 * side: a re-attaching side continues from its own shared index.
	 */
	v->prod = __atomic_load_n(&r->prod.idx, __ATOMIC_ACQUIRE);
	v->cons = __atomic_load_n(&r->cons.idx, __ATOMIC_ACQUIRE);
	if (v->prod - v->cons > v->slots)
		return -EPROTO;
	return 0;
}

int droce_ring_prod_attach(struct droce_ring_prod *p, void *mem, size_t len)
{
	struct droce_ring *r = (struct droce_ring *)mem;
	struct ring_view v;
	int ret;

	if (p == NULL)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->corrupt = true; /* a handle whose attach failed refuses every call */
	ret = ring_view_load(&v, mem, len);
	if (ret < 0)
		return ret;
	p->slots = (uint8_t *)mem + v.slots_off;
	p->prod = &r->prod.idx;
	p->cons = &r->cons.idx;
	p->head = v.prod;
	p->cons_cache = v.cons;
	p->size = v.slots;
	p->mask = v.slots - 1;
	p->slot_size = v.slot_size;
	p->corrupt = false;
	return 0;
}

int droce_ring_cons_attach(struct droce_ring_cons *c, void *mem, size_t len)
{
	struct droce_ring *r = (struct droce_ring *)mem;
	struct ring_view v;
	int ret;

	if (c == NULL)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->corrupt = true; /* a handle whose attach failed refuses every call */
	ret = ring_view_load(&v, mem, len);
	if (ret < 0)
		return ret;
	c->slots = (const uint8_t *)mem + v.slots_off;
	c->cons = &r->cons.idx;
	c->prod = &r->prod.idx;
	c->tail = v.cons;
	c->prod_cache = v.prod;
	c->size = v.slots;
	c->mask = v.slots - 1;
	c->slot_size = v.slot_size;
	c->corrupt = false;
	return 0;
}
