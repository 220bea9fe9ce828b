/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/ring: geometry checks on an untrusted header (one rejected field at a
 * time), empty and full rings, the free-running 32-bit indices wrapping, order
 * and content, corrupt producer and consumer indices detected by the other
 * side, two mappings of one memfd at different addresses, and a producer and a
 * consumer in two threads and in two processes.
 */
#include <criterion/criterion.h>
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <droce_ring.h>

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

/* A 64-byte aligned area with a fresh ring; slots filled with 0xa5. */
static void *ring_new(uint32_t slots, uint32_t slot_size, size_t *len)
{
	size_t n = droce_ring_mem_size(slots, slot_size);
	void *mem;

	cr_assert_neq(n, 0, "geometry %" PRIu32 " x %" PRIu32 " is valid", slots, slot_size);
	mem = aligned_alloc(DROCE_RING_LINE, n);
	cr_assert_not_null(mem, "aligned_alloc(%zu)", n);
	memset(mem, 0xa5, n);
	cr_assert_eq(droce_ring_init(mem, n, slots, slot_size), 0, "init %" PRIu32 " x %" PRIu32,
		     slots, slot_size);
	*len = n;
	return mem;
}

static void ring_attach_both(void *mem, size_t len, struct droce_ring_prod *p,
			     struct droce_ring_cons *c)
{
	cr_assert_eq(droce_ring_prod_attach(p, mem, len), 0, "producer attaches");
	cr_assert_eq(droce_ring_cons_attach(c, mem, len), 0, "consumer attaches");
}

/* ------------------------------------------------------------ geometry */

Test(geometry, mem_size)
{
	cr_expect_eq(droce_ring_mem_size(1, 8), 256, "1 x 8: 192 + 8, rounded to 256");
	cr_expect_eq(droce_ring_mem_size(16, 32), 192 + 512, "16 x 32: 192 + 512");
	cr_expect_eq(droce_ring_mem_size(1024, 64), 192 + 65536, "1024 x 64");
	cr_expect_eq(droce_ring_mem_size(2, 24), 256, "2 x 24: 192 + 48, rounded to 256");
	cr_expect_eq(droce_ring_mem_size(DROCE_RING_SLOTS_MAX, 8),
		     192 + (size_t)DROCE_RING_SLOTS_MAX * 8, "largest slot count");
	cr_expect_eq(droce_ring_mem_size(1, DROCE_RING_SLOT_SIZE_MAX),
		     192 + (size_t)DROCE_RING_SLOT_SIZE_MAX, "largest slot size");
	cr_expect_eq(droce_ring_mem_size(DROCE_RING_SLOTS_MAX, DROCE_RING_SLOT_SIZE_MAX),
		     192 + ((size_t)1 << 40), "largest ring: 2^40 bytes of slots, no overflow");
}

struct bad_geometry {
	const char *what;
	uint32_t slots;
	uint32_t slot_size;
};

static const struct bad_geometry bad_geometries[] = {
	{"no slots", 0, 8},
	{"3 slots: not a power of two", 3, 8},
	{"24 slots: not a power of two", 24, 8},
	{"slot count above the maximum", DROCE_RING_SLOTS_MAX << 1, 8},
	{"slot count 2^31", 1u << 31, 8},
	{"slot count UINT32_MAX", UINT32_MAX, 8},
	{"slot size 0", 8, 0},
	{"slot size 4: not a multiple of 8", 8, 4},
	{"slot size 12: not a multiple of 8", 8, 12},
	{"slot size above the maximum", 8, DROCE_RING_SLOT_SIZE_MAX + 8},
	{"slot size near UINT32_MAX", 8, UINT32_MAX & ~7u},
};

Test(geometry, mem_size_rejects)
{
	size_t i;

	for (i = 0; i < DIM(bad_geometries); i++)
		cr_expect_eq(
			droce_ring_mem_size(bad_geometries[i].slots, bad_geometries[i].slot_size),
			0, "mem_size is 0 for %s", bad_geometries[i].what);
}

Test(geometry, init_rejects)
{
	size_t len = droce_ring_mem_size(16, 32);
	uint8_t *mem = aligned_alloc(DROCE_RING_LINE, 2 * len);
	size_t i;

	cr_assert_not_null(mem);
	cr_expect_eq(droce_ring_init(NULL, len, 16, 32), -EINVAL, "NULL memory");
	cr_expect_eq(droce_ring_init(mem + 8, len, 16, 32), -EINVAL, "memory 8 bytes off a line");
	cr_expect_eq(droce_ring_init(mem + 32, len, 16, 32), -EINVAL, "memory 32 bytes off a line");
	cr_expect_eq(droce_ring_init(mem, len - 1, 16, 32), -EINVAL, "one byte short");
	cr_expect_eq(droce_ring_init(mem, 0, 16, 32), -EINVAL, "no length");
	for (i = 0; i < DIM(bad_geometries); i++)
		cr_expect_eq(droce_ring_init(mem, 2 * len, bad_geometries[i].slots,
					     bad_geometries[i].slot_size),
			     -EINVAL, "init refuses %s", bad_geometries[i].what);
	cr_expect_eq(droce_ring_init(mem, len, 16, 32), 0, "the exact length is enough");
	free(mem);
}

Test(geometry, init_writes_header)
{
	size_t len, i;
	struct droce_ring *r = ring_new(16, 32, &len);
	const uint8_t *slots = (const uint8_t *)r + DROCE_RING_SLOTS_OFF;

	cr_expect_eq(r->hdr.magic, DROCE_RING_MAGIC, "magic");
	cr_expect_eq(r->hdr.version, DROCE_RING_VERSION, "version");
	cr_expect_eq(r->hdr.slots, 16, "slot count");
	cr_expect_eq(r->hdr.slot_size, 32, "slot size");
	cr_expect_eq(r->hdr.slots_off, 192, "slots start on line 3");
	cr_expect_eq(r->prod.idx, 0, "producer index starts at 0");
	cr_expect_eq(r->cons.idx, 0, "consumer index starts at 0");
	for (i = 0; i < sizeof(r->hdr.reserved); i++)
		cr_expect_eq(r->hdr.reserved[i], 0, "reserved byte %zu is zero", i);
	for (i = 0; i < 16 * 32; i++)
		cr_expect_eq(slots[i], 0xa5, "slot byte %zu left as it was", i);
	free(r);
}

struct bad_header {
	const char *what;
	uint32_t magic, version, slots, slot_size, slots_off;
	int err;
};

#define M DROCE_RING_MAGIC
#define V DROCE_RING_VERSION

/* Against a ring of 16 x 32 in exactly 192 + 512 = 704 bytes. */
static const struct bad_header bad_headers[] = {
	{"no magic", 0, V, 16, 32, 192, -EINVAL},
	{"byte-swapped magic", 0x64524e47, V, 16, 32, 192, -EINVAL},
	{"version 0", M, 0, 16, 32, 192, -EINVAL},
	{"version 2", M, 2, 16, 32, 192, -EINVAL},
	{"no slots", M, V, 0, 32, 192, -EINVAL},
	{"3 slots", M, V, 3, 32, 192, -EINVAL},
	{"12 slots", M, V, 12, 32, 192, -EINVAL},
	{"slot count above the maximum", M, V, DROCE_RING_SLOTS_MAX << 1, 8, 192, -EINVAL},
	{"slot count 2^31", M, V, 1u << 31, 8, 192, -EINVAL},
	{"slot size 0", M, V, 16, 0, 192, -EINVAL},
	{"slot size 4", M, V, 16, 4, 192, -EINVAL},
	{"slot size 36", M, V, 16, 36, 192, -EINVAL},
	{"slot size above the maximum", M, V, 1, DROCE_RING_SLOT_SIZE_MAX + 8, 192, -EINVAL},
	{"32 slots: array 512 bytes beyond the end", M, V, 32, 32, 192, -EINVAL},
	{"slot size 40: array 128 bytes beyond the end", M, V, 16, 40, 192, -EINVAL},
	{"slot array at 0: over the header", M, V, 16, 32, 0, -EINVAL},
	{"slot array at 64: over the producer index", M, V, 16, 32, 64, -EINVAL},
	{"slot array at 128: over the consumer index", M, V, 16, 32, 128, -EINVAL},
	{"slot array at 160: unaligned, over the consumer index", M, V, 1, 32, 160, -EINVAL},
	{"slot array at 200: not on a line", M, V, 8, 32, 200, -EINVAL},
	{"slot array at 256: ends 64 bytes beyond", M, V, 16, 32, 256, -EINVAL},
	{"slot array at the end", M, V, 16, 32, 704, -EINVAL},
	{"slot array offset near 2^32", M, V, 16, 32, 0xffffffc0u, -EINVAL},
	{"2^16 x 2^16: 2^32 bytes, 0 in 32 bits", M, V, 1u << 16, 1u << 16, 192, -EINVAL},
	{"largest count x largest size", M, V, DROCE_RING_SLOTS_MAX, DROCE_RING_SLOT_SIZE_MAX, 192,
	 -EINVAL},
};

#undef M
#undef V

static void header_set(struct droce_ring *r, const struct bad_header *h)
{
	r->hdr.magic = h->magic;
	r->hdr.version = h->version;
	r->hdr.slots = h->slots;
	r->hdr.slot_size = h->slot_size;
	r->hdr.slots_off = h->slots_off;
}

Test(geometry, attach_rejects_each_bad_field)
{
	static const struct bad_header good = {
		"good", DROCE_RING_MAGIC, DROCE_RING_VERSION, 16, 32, 192, 0};
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	size_t len, i;
	struct droce_ring *r = ring_new(16, 32, &len);

	cr_assert_eq(len, 704);
	header_set(r, &good);
	cr_assert_eq(droce_ring_prod_attach(&p, r, len), 0, "the unmodified header is accepted");
	cr_assert_eq(droce_ring_cons_attach(&c, r, len), 0, "the unmodified header is accepted");
	for (i = 0; i < DIM(bad_headers); i++) {
		header_set(r, &bad_headers[i]);
		cr_expect_eq(droce_ring_prod_attach(&p, r, len), bad_headers[i].err,
			     "producer refuses %s", bad_headers[i].what);
		cr_expect_eq(droce_ring_cons_attach(&c, r, len), bad_headers[i].err,
			     "consumer refuses %s", bad_headers[i].what);
	}
	free(r);
}

Test(geometry, attach_rejects_bad_arguments)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	size_t len;
	uint8_t *mem = ring_new(16, 32, &len);

	cr_expect_eq(droce_ring_prod_attach(NULL, mem, len), -EINVAL, "producer: no handle");
	cr_expect_eq(droce_ring_cons_attach(NULL, mem, len), -EINVAL, "consumer: no handle");
	cr_expect_eq(droce_ring_prod_attach(&p, NULL, len), -EINVAL, "producer: NULL memory");
	cr_expect_eq(droce_ring_cons_attach(&c, NULL, len), -EINVAL, "consumer: NULL memory");
	cr_expect_eq(droce_ring_prod_attach(&p, mem + 8, len - 8), -EINVAL,
		     "producer: memory off a line");
	cr_expect_eq(droce_ring_cons_attach(&c, mem + 8, len - 8), -EINVAL,
		     "consumer: memory off a line");
	cr_expect_eq(droce_ring_prod_attach(&p, mem, 0), -EINVAL, "producer: no length");
	cr_expect_eq(droce_ring_cons_attach(&c, mem, 0), -EINVAL, "consumer: no length");
	cr_expect_eq(droce_ring_prod_attach(&p, mem, 191), -EINVAL, "producer: length < header");
	cr_expect_eq(droce_ring_cons_attach(&c, mem, 191), -EINVAL, "consumer: length < header");
	cr_expect_eq(droce_ring_prod_attach(&p, mem, len - 1), -EINVAL,
		     "producer: last slot one byte beyond the length");
	cr_expect_eq(droce_ring_cons_attach(&c, mem, len - 1), -EINVAL,
		     "consumer: last slot one byte beyond the length");
	free(mem);
}

/* A later layout may put more in front of the slots: any line-aligned offset within len works. */
Test(geometry, attach_follows_slots_off)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	size_t len = 256 + 16 * 32;
	struct droce_ring *r = aligned_alloc(DROCE_RING_LINE, len);

	cr_assert_not_null(r);
	cr_assert_eq(droce_ring_init(r, len, 16, 32), 0);
	r->hdr.slots_off = 256;
	ring_attach_both(r, len, &p, &c);
	cr_expect_eq(droce_ring_prod_slot(&p, 0), (uint8_t *)r + 256, "producer slot 0 at 256");
	cr_expect_eq(droce_ring_cons_slot(&c, 0), (uint8_t *)r + 256, "consumer slot 0 at 256");
	free(r);
}

Test(geometry, attach_rejects_indices_apart)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	size_t len;
	struct droce_ring *r = ring_new(16, 32, &len);

	r->prod.idx = 17;
	cr_expect_eq(droce_ring_prod_attach(&p, r, len), -EPROTO, "producer: 17 published of 16");
	cr_expect_eq(droce_ring_cons_attach(&c, r, len), -EPROTO, "consumer: 17 published of 16");
	r->prod.idx = 100;
	r->cons.idx = 101;
	cr_expect_eq(droce_ring_prod_attach(&p, r, len), -EPROTO, "producer: consumer ahead");
	cr_expect_eq(droce_ring_cons_attach(&c, r, len), -EPROTO, "consumer: consumer ahead");
	r->prod.idx = 3;
	r->cons.idx = UINT32_MAX - 12;
	cr_expect_eq(droce_ring_prod_attach(&p, r, len), 0, "producer: 16 in flight across 2^32");
	cr_expect_eq(droce_ring_cons_attach(&c, r, len), 0, "consumer: 16 in flight across 2^32");
	cr_expect_eq(droce_ring_prod_free(&p), 0, "16 in flight: full");
	cr_expect_eq(droce_ring_cons_avail(&c), 16, "16 in flight: 16 to read");
	free(r);
}

Test(geometry, failed_attach_refuses_calls)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	uint8_t buf[32] = {0};
	size_t len;
	struct droce_ring *r = ring_new(16, 32, &len);

	r->hdr.magic = 0;
	cr_assert_eq(droce_ring_prod_attach(&p, r, len), -EINVAL);
	cr_assert_eq(droce_ring_cons_attach(&c, r, len), -EINVAL);
	cr_expect_eq(droce_ring_prod_free(&p), -EPROTO, "producer handle refuses free");
	cr_expect_eq(droce_ring_prod_enqueue_burst(&p, buf, 1), 0, "producer handle enqueues none");
	cr_expect_eq(droce_ring_cons_avail(&c), -EPROTO, "consumer handle refuses avail");
	cr_expect_eq(droce_ring_cons_dequeue_burst(&c, buf, 1), 0, "consumer handle dequeues none");
	droce_ring_prod_publish(&p, 1); /* no-ops: no index to store to */
	droce_ring_cons_release(&c, 1);
	cr_expect_eq(r->prod.idx, 0, "producer index untouched");
	cr_expect_eq(r->cons.idx, 0, "consumer index untouched");
	free(r);
}

/* The handles keep their own geometry: rewriting the header after attach changes nothing. */
Test(geometry, header_rewrite_after_attach_ignored)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	size_t len;
	struct droce_ring *r = ring_new(16, 32, &len);

	ring_attach_both(r, len, &p, &c);
	r->hdr.slots = 1u << 20;
	r->hdr.slot_size = 4096;
	r->hdr.slots_off = 1u << 30;
	cr_expect_eq(droce_ring_prod_free(&p), 16, "producer still sees 16 slots");
	cr_expect_eq(droce_ring_prod_slot(&p, 15), (uint8_t *)r + 192 + 15 * 32,
		     "producer slot 15 where it was");
	cr_expect_eq(droce_ring_cons_slot(&c, 15), (uint8_t *)r + 192 + 15 * 32,
		     "consumer slot 15 where it was");
	free(r);
}

/* ------------------------------------------------------------ ring */

Test(ring, empty)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	uint8_t buf[32];
	size_t len;
	void *mem = ring_new(8, 32, &len);

	ring_attach_both(mem, len, &p, &c);
	cr_expect_eq(droce_ring_prod_free(&p), 8, "an empty ring has 8 free slots");
	cr_expect_eq(droce_ring_cons_avail(&c), 0, "an empty ring has nothing to read");
	cr_expect_eq(droce_ring_cons_dequeue_burst(&c, buf, 1), 0, "nothing dequeued");
	cr_expect_eq(droce_ring_prod_enqueue_burst(&p, buf, 0), 0, "a burst of 0 enqueues none");
	cr_expect_eq(((struct droce_ring *)mem)->prod.idx, 0, "a burst of 0 publishes nothing");
	free(mem);
}

Test(ring, fill_to_full)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	uint64_t buf[4] = {0};
	size_t len;
	uint32_t i;
	struct droce_ring *r = ring_new(8, 32, &len);

	ring_attach_both(r, len, &p, &c);
	for (i = 0; i < 8; i++) {
		cr_expect_eq(droce_ring_prod_free(&p), (int)(8 - i), "%u used: %u free", i, 8 - i);
		memset(droce_ring_prod_slot(&p, 0), (int)i, 32);
		droce_ring_prod_publish(&p, 1);
		cr_expect_eq(r->prod.idx, i + 1, "published index %u", i + 1);
	}
	cr_expect_eq(droce_ring_prod_free(&p), 0, "full: no free slot");
	cr_expect_eq(droce_ring_prod_reload(&p), 0, "full after a reload too");
	cr_expect_eq(droce_ring_prod_enqueue_burst(&p, buf, 1), 0, "full: enqueue takes none");
	cr_expect_eq(r->prod.idx, 8, "full: the index did not move");
	cr_expect_eq(droce_ring_cons_avail(&c), 8, "full: 8 to read");
	droce_ring_cons_release(&c, 1);
	cr_expect_eq(r->cons.idx, 1, "released index 1");
	cr_expect_eq(droce_ring_prod_free(&p), 1, "one released: one free");
	free(r);
}

/* The producer counts from its cached consumer index and loads the shared one only when full. */
Test(ring, free_cached_until_full)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	size_t len;
	void *mem = ring_new(8, 32, &len);

	ring_attach_both(mem, len, &p, &c);
	droce_ring_prod_publish(&p, 4);
	cr_assert_eq(droce_ring_cons_avail(&c), 4);
	droce_ring_cons_release(&c, 4);
	cr_expect_eq(droce_ring_prod_free(&p), 4, "not full: the cached index says 4 free");
	cr_expect_eq(droce_ring_prod_reload(&p), 8, "a reload sees all 8 free");
	cr_expect_eq(droce_ring_prod_free(&p), 8, "and the cache keeps it");
	free(mem);
}

Test(ring, bursts_partial)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	uint64_t in[10], out[10];
	size_t len;
	unsigned int i;
	void *mem = ring_new(8, 8, &len);

	ring_attach_both(mem, len, &p, &c);
	for (i = 0; i < DIM(in); i++)
		in[i] = 100 + i;
	cr_expect_eq(droce_ring_prod_enqueue_burst(&p, in, 5), 5, "5 of 5 enqueued");
	cr_expect_eq(droce_ring_cons_dequeue_burst(&c, out, 2), 2, "2 of 5 dequeued");
	cr_expect_eq(droce_ring_prod_enqueue_burst(&p, in + 5, 10), 5,
		     "5 of 10 fit after a reload");
	cr_expect_eq(droce_ring_prod_free(&p), 0, "then full");
	cr_expect_eq(droce_ring_cons_dequeue_burst(&c, out + 2, 10), 8, "8 of 10 dequeued");
	for (i = 0; i < 10; i++)
		cr_expect_eq(out[i], 100 + i, "item %u is %" PRIu64, i, out[i]);
	cr_expect_eq(droce_ring_cons_avail(&c), 0, "empty again");
	free(mem);
}

Test(ring, slots_stay_inside)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	size_t len;
	uint32_t i, n;
	uint8_t *mem = ring_new(8, 24, &len);
	uint8_t *base = mem + DROCE_RING_SLOTS_OFF;

	ring_attach_both(mem, len, &p, &c);
	for (n = 0; n < 3; n++) {
		for (i = 0; i < 8; i++) {
			uint8_t *s = droce_ring_prod_slot(&p, i);
			const uint8_t *t = droce_ring_cons_slot(&c, i);

			cr_expect_eq(s, base + ((n * 5 + i) % 8) * 24, "producer slot %u", i);
			cr_expect_eq(t, base + ((n * 5 + i) % 8) * 24, "consumer slot %u", i);
		}
		/* any i is masked into the array, even one a caller should not pass */
		cr_expect_eq(droce_ring_prod_slot(&p, UINT32_MAX), base + ((n * 5 + 7) % 8) * 24,
			     "producer slot UINT32_MAX");
		cr_expect_eq(droce_ring_cons_slot(&c, 1u << 31), base + ((n * 5) % 8) * 24,
			     "consumer slot 2^31");
		droce_ring_prod_publish(&p, 5);
		cr_assert_eq(droce_ring_cons_avail(&c), 5);
		droce_ring_cons_release(&c, 5);
		cr_assert_eq(droce_ring_prod_reload(&p), 8);
	}
	free(mem);
}

/* An item: a sequence number, a payload derived from it and a checksum over both. */
struct item {
	uint64_t seq;
	uint64_t w[6];
	uint64_t sum;
};
static_assert(sizeof(struct item) == 64, "an item fills a 64-byte slot");

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t item_sum(const struct item *it)
{
	uint64_t h = 0xcbf29ce484222325ull ^ it->seq;
	size_t i;

	for (i = 0; i < DIM(it->w); i++) {
		h ^= it->w[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void item_make(struct item *it, uint64_t seq)
{
	size_t i;

	it->seq = seq;
	for (i = 0; i < DIM(it->w); i++)
		it->w[i] = splitmix64(seq * 8 + i);
	it->sum = item_sum(it);
}

/* 0 when @p it is item @p seq with a payload that matches its checksum. */
static int item_check(const struct item *it, uint64_t seq)
{
	struct item copy;

	memcpy(&copy, it, sizeof(copy)); /* read the shared slot once */
	if (copy.seq != seq)
		return 1;
	if (copy.sum != item_sum(&copy))
		return 2;
	if (copy.w[0] != splitmix64(seq * 8))
		return 3;
	return 0;
}

/*
 * Move @p count items through the ring, alternating zero-copy slots and
 * bursts of 1..max sizes; the ring may start anywhere. Asserts order and
 * content; returns the next sequence number.
 */
static uint64_t ring_transfer(struct droce_ring_prod *p, struct droce_ring_cons *c, uint64_t seq,
			      uint64_t count)
{
	struct item buf[7];
	uint64_t next_in = seq, next_out = seq, end = seq + count;
	unsigned int round = 0;

	while (next_out < end) {
		uint32_t want = 1 + round % DIM(buf), n, i;
		int room = droce_ring_prod_free(p), avail;

		cr_assert_geq(room, 0, "producer sees a sane consumer");
		if (want > end - next_in)
			want = (uint32_t)(end - next_in);
		if (round & 1) {
			n = want < (uint32_t)room ? want : (uint32_t)room;
			for (i = 0; i < n; i++)
				item_make(droce_ring_prod_slot(p, i), next_in + i);
			droce_ring_prod_publish(p, n);
		} else {
			for (i = 0; i < want; i++)
				item_make(&buf[i], next_in + i);
			n = droce_ring_prod_enqueue_burst(p, buf, want);
		}
		next_in += n;
		avail = droce_ring_cons_avail(c);
		cr_assert_geq(avail, 0, "consumer sees a sane producer");
		cr_assert_eq((uint64_t)avail, next_in - next_out, "%" PRIu64 " in flight",
			     next_in - next_out);
		if (round & 2) {
			n = (uint32_t)avail > 3 ? 3 : (uint32_t)avail;
			for (i = 0; i < n; i++)
				cr_assert_eq(item_check(droce_ring_cons_slot(c, i), next_out + i),
					     0, "slot item %" PRIu64 " in order and intact",
					     next_out + i);
			droce_ring_cons_release(c, n);
		} else {
			n = droce_ring_cons_dequeue_burst(c, buf, DIM(buf));
			for (i = 0; i < n; i++)
				cr_assert_eq(item_check(&buf[i], next_out + i), 0,
					     "burst item %" PRIu64 " in order and intact",
					     next_out + i);
		}
		next_out += n;
		round++;
	}
	return next_out;
}

Test(ring, order_and_content)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	size_t len;
	struct droce_ring *r = ring_new(16, sizeof(struct item), &len);

	ring_attach_both(r, len, &p, &c);
	cr_expect_eq(ring_transfer(&p, &c, 0, 1000), 1000, "1000 items through 16 slots");
	cr_expect_eq(r->prod.idx, 1000, "1000 published");
	cr_expect_eq(r->cons.idx, 1000, "1000 released");
	free(r);
}

/* Indices start near 2^32 (as a re-attached ring would): run through the wrap. */
Test(ring, wrap_from_preset_indices)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	struct item it;
	size_t len;
	uint32_t i, start = UINT32_MAX - 5;
	struct droce_ring *r = ring_new(16, sizeof(struct item), &len);

	r->prod.idx = start;
	r->cons.idx = start;
	ring_attach_both(r, len, &p, &c);
	cr_expect_eq(droce_ring_prod_free(&p), 16, "empty at 2^32 - 6");
	for (i = 0; i < 16; i++)
		item_make(droce_ring_prod_slot(&p, i), i);
	droce_ring_prod_publish(&p, 16);
	cr_expect_eq(r->prod.idx, 10, "the published index wrapped to 10");
	cr_expect_eq(droce_ring_prod_free(&p), 0, "full across the wrap");
	cr_expect_eq(droce_ring_cons_avail(&c), 16, "16 to read across the wrap");
	for (i = 0; i < 16; i++) {
		cr_expect_eq(droce_ring_cons_dequeue_burst(&c, &it, 1), 1, "item %u dequeued", i);
		cr_expect_eq(item_check(&it, i), 0, "item %u in order and intact", i);
	}
	cr_expect_eq(r->cons.idx, 10, "the released index wrapped to 10");
	cr_expect_eq(ring_transfer(&p, &c, 16, 100), 116, "100 more items after the wrap");
	free(r);
}

/* Indices advanced from 0 to 2^32 - 3 by the API alone, then run through the wrap. */
Test(ring, wrap_by_advancing)
{
	const uint32_t slots = 1u << 16;
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	uint32_t k, bad = 0;
	size_t len;
	struct droce_ring *r = ring_new(slots, sizeof(struct item), &len);

	ring_attach_both(r, len, &p, &c);
	for (k = 0; k < slots; k++) {
		uint32_t n = k == slots - 1 ? slots - 3 : slots;

		bad += droce_ring_prod_free(&p) != (int)slots;
		droce_ring_prod_publish(&p, n);
		bad += droce_ring_cons_avail(&c) != (int)n;
		droce_ring_cons_release(&c, n);
	}
	cr_expect_eq(bad, 0, "every lap: an empty ring, then the whole lap to read");
	cr_expect_eq(r->prod.idx, UINT32_MAX - 2, "published index at 2^32 - 3");
	cr_expect_eq(r->cons.idx, UINT32_MAX - 2, "released index at 2^32 - 3");
	cr_expect_eq(ring_transfer(&p, &c, 0, 50), 50, "50 items through the wrap");
	cr_expect_eq(r->prod.idx, 47, "published index wrapped to 47");
	cr_expect_eq(r->cons.idx, 47, "released index wrapped to 47");
	free(r);
}

/* ------------------------------------------------------------ corrupt peers */

struct corrupt_ring {
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	struct droce_ring *r;
	size_t len;
};

/* A ring of 8 slots at 1000 published, 997 released (5 free, 3 to read). */
static void corrupt_ring_new(struct corrupt_ring *t)
{
	t->r = ring_new(8, 8, &t->len);
	t->r->prod.idx = 1000;
	t->r->cons.idx = 997;
	ring_attach_both(t->r, t->len, &t->p, &t->c);
	cr_assert_eq(droce_ring_cons_avail(&t->c), 3);
	cr_assert_eq(droce_ring_prod_free(&t->p), 5);
}

Test(corrupt, producer_index_limits)
{
	struct corrupt_ring t;

	corrupt_ring_new(&t);
	t.r->prod.idx = 997 + 8;
	cr_expect_eq(droce_ring_cons_avail(&t.c), 8, "tail + slot count is full, not corrupt");
	t.r->prod.idx = 997 + 9;
	cr_expect_eq(droce_ring_cons_avail(&t.c), -EPROTO, "tail + slot count + 1 is corrupt");
	free(t.r);
}

struct bad_index {
	const char *what;
	uint32_t idx;
};

/* Producer indices no producer could publish to a consumer at 997 that has seen 1000. */
static const struct bad_index bad_prod[] = {
	{"one more than the slot count ahead", 997 + 9},
	{"2^31 ahead", 997 + (1u << 31)},
	{"behind the consumer", 996},
	{"0", 0},
	{"backwards from 1000 to 999", 999},
	{"backwards to the consumer's 997", 997},
	{"UINT32_MAX", UINT32_MAX},
};

Test(corrupt, producer_index_detected)
{
	uint8_t buf[8];
	size_t i;

	for (i = 0; i < DIM(bad_prod); i++) {
		struct corrupt_ring t;

		corrupt_ring_new(&t);
		t.r->prod.idx = bad_prod[i].idx;
		cr_expect_eq(droce_ring_cons_avail(&t.c), -EPROTO, "consumer detects %s",
			     bad_prod[i].what);
		t.r->prod.idx = 1000;
		cr_expect_eq(droce_ring_cons_avail(&t.c), -EPROTO,
			     "still corrupt once restored (%s)", bad_prod[i].what);
		cr_expect_eq(droce_ring_cons_dequeue_burst(&t.c, buf, 1), 0,
			     "nothing dequeued (%s)", bad_prod[i].what);
		droce_ring_cons_release(&t.c, 1);
		cr_expect_eq(t.r->cons.idx, 997, "nothing released (%s)", bad_prod[i].what);
		free(t.r);
	}
}

Test(corrupt, consumer_index_limits)
{
	struct corrupt_ring t;

	corrupt_ring_new(&t);
	t.r->cons.idx = 1000;
	cr_expect_eq(droce_ring_prod_reload(&t.p), 8, "consumer at the head: all free");
	t.r->cons.idx = 1001;
	cr_expect_eq(droce_ring_prod_reload(&t.p), -EPROTO, "consumer past the head is corrupt");
	free(t.r);
}

/* Consumer indices no consumer could release to a producer at 1000 that has seen 997. */
static const struct bad_index bad_cons[] = {
	{"released one more than published", 1001},
	{"released a whole ring more than published", 1008},
	{"2^31 ahead", 997 + (1u << 31)},
	{"backwards from 997 to 996", 996},
	{"0", 0},
	{"UINT32_MAX", UINT32_MAX},
};

/* Detected on the load that follows: an explicit reload, or free() and a burst when full. */
Test(corrupt, consumer_index_detected)
{
	size_t i;

	for (i = 0; i < DIM(bad_cons); i++) {
		struct corrupt_ring t;

		corrupt_ring_new(&t);
		t.r->cons.idx = bad_cons[i].idx;
		cr_expect_eq(droce_ring_prod_reload(&t.p), -EPROTO, "producer detects %s",
			     bad_cons[i].what);
		t.r->cons.idx = 997;
		cr_expect_eq(droce_ring_prod_free(&t.p), -EPROTO,
			     "still corrupt once restored (%s)", bad_cons[i].what);
		free(t.r);
	}
}

Test(corrupt, consumer_index_detected_when_full)
{
	uint64_t items[8] = {0};
	struct corrupt_ring t;
	uint8_t *before;

	corrupt_ring_new(&t);
	cr_assert_eq(droce_ring_prod_enqueue_burst(&t.p, items, 5), 5, "fill the ring");
	t.r->cons.idx = 1005 + 1;
	cr_expect_eq(droce_ring_prod_free(&t.p), -EPROTO, "free() at full loads and detects");
	free(t.r);

	corrupt_ring_new(&t);
	t.r->cons.idx = 1000 + 1;
	before = malloc(t.len);
	cr_assert_not_null(before);
	memcpy(before, t.r, t.len);
	cr_expect_eq(droce_ring_prod_enqueue_burst(&t.p, items, 8), 0,
		     "a burst larger than the cached room loads, detects and enqueues none");
	cr_expect_eq(droce_ring_prod_free(&t.p), -EPROTO, "free() then reports it");
	droce_ring_prod_publish(&t.p, 1);
	cr_expect_eq(memcmp(before, t.r, t.len), 0, "no byte of the ring was written");
	free(before);
	free(t.r);
}

/* ------------------------------------------------------------ mappings */

static int memfd_new(size_t len)
{
	int fd = memfd_create("droce_test_ring", MFD_CLOEXEC);

	cr_assert_geq(fd, 0, "memfd_create: %s", strerror(errno));
	cr_assert_eq(ftruncate(fd, (off_t)len), 0, "ftruncate: %s", strerror(errno));
	return fd;
}

static void *memfd_map(int fd, size_t len)
{
	void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	cr_assert_neq(mem, MAP_FAILED, "mmap: %s", strerror(errno));
	return mem;
}

Test(mapping, two_addresses)
{
	struct droce_ring_prod p;
	struct droce_ring_cons c;
	size_t len = droce_ring_mem_size(32, sizeof(struct item));
	int fd = memfd_new(len);
	uint8_t *a = memfd_map(fd, len);
	uint8_t *b = memfd_map(fd, len);

	cr_assert_neq(a, b, "two mappings at two addresses");
	cr_assert_eq(droce_ring_init(a, len, 32, sizeof(struct item)), 0, "init through A");
	cr_assert_eq(droce_ring_prod_attach(&p, a, len), 0, "producer attaches through A");
	cr_assert_eq(droce_ring_cons_attach(&c, b, len), 0, "consumer attaches through B");
	cr_expect_eq(droce_ring_prod_slot(&p, 0), a + DROCE_RING_SLOTS_OFF, "producer slots in A");
	cr_expect_eq(droce_ring_cons_slot(&c, 0), b + DROCE_RING_SLOTS_OFF, "consumer slots in B");
	cr_expect_eq(ring_transfer(&p, &c, 0, 500), 500, "500 items from A to B");
	cr_expect_eq(((struct droce_ring *)b)->prod.idx, 500, "B sees A's published index");
	cr_expect_eq(((struct droce_ring *)a)->cons.idx, 500, "A sees B's released index");
	munmap(a, len);
	munmap(b, len);
	close(fd);
}

/* ------------------------------------------------------------ concurrency */

#define STRESS_ITEMS  (UINT64_C(1) << 22)
#define STRESS_SLOTS  256
#define PROCESS_ITEMS (UINT64_C(1) << 20)

struct stress {
	void *mem;
	size_t len;
	uint64_t items;
	int stop;            /* either side gave up: the other stops too */
	int prod_err;        /* producer: 0, or the -EPROTO it saw */
	uint64_t cons_bad;   /* consumer: items out of order or damaged */
	uint64_t cons_first; /* the first of them */
	uint64_t cons_got;   /* consumer: items read */
	int cons_err;        /* consumer: 0, or the -EPROTO it saw */
	bool child_reaped;   /* the producing child exited while the consumer waited */
	int child_status;    /* and its wait status */
};

static int stress_stopped(struct stress *s)
{
	return __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
}

/* Produce s->items items in bursts of 1..32, zero-copy or copied; 0 or -EPROTO. */
static int stress_produce(struct droce_ring_prod *p, struct stress *s)
{
	struct item buf[32];
	uint64_t seq = 0, rng = 0x1234;
	uint32_t i, n;

	while (seq < s->items) {
		uint32_t want;
		int room;

		rng = splitmix64(rng);
		want = 1 + (uint32_t)(rng % DIM(buf));
		if (want > s->items - seq)
			want = (uint32_t)(s->items - seq);
		if (rng & (1u << 10)) {
			room = droce_ring_prod_free(p);
			if (room < 0)
				return room;
			n = want < (uint32_t)room ? want : (uint32_t)room;
			for (i = 0; i < n; i++)
				item_make(droce_ring_prod_slot(p, i), seq + i);
			droce_ring_prod_publish(p, n);
		} else {
			for (i = 0; i < want; i++)
				item_make(&buf[i], seq + i);
			n = droce_ring_prod_enqueue_burst(p, buf, want);
			if (n == 0 && droce_ring_prod_free(p) < 0)
				return -EPROTO;
		}
		seq += n;
		if (n == 0) {
			if (stress_stopped(s))
				return 0;
			sched_yield();
		}
	}
	return 0;
}

/*
 * Consume s->items items, zero-copy or copied, checking each; fills s->cons_*.
 * With a @p child process producing, stop once it has exited and the ring is
 * drained (its status goes to s->child_status).
 */
static void stress_consume(struct droce_ring_cons *c, struct stress *s, pid_t child)
{
	struct item buf[32];
	uint64_t seq = 0, rng = 0x5678;
	unsigned int idle = 0;
	uint32_t i, n;

	while (seq < s->items) {
		int avail;

		rng = splitmix64(rng);
		avail = droce_ring_cons_avail(c);
		if (avail < 0) {
			s->cons_err = avail;
			break;
		}
		if (rng & (1u << 10)) {
			n = 1 + (uint32_t)(rng % DIM(buf));
			if (n > (uint32_t)avail)
				n = (uint32_t)avail;
			for (i = 0; i < n; i++) {
				if (item_check(droce_ring_cons_slot(c, i), seq + i) != 0 &&
				    s->cons_bad++ == 0)
					s->cons_first = seq + i;
			}
			droce_ring_cons_release(c, n);
		} else {
			n = droce_ring_cons_dequeue_burst(c, buf, 1 + (uint32_t)(rng % DIM(buf)));
			for (i = 0; i < n; i++) {
				if (item_check(&buf[i], seq + i) != 0 && s->cons_bad++ == 0)
					s->cons_first = seq + i;
			}
		}
		seq += n;
		if (n != 0 || avail != 0) {
			idle = 0;
			continue;
		}
		if (stress_stopped(s) || s->child_reaped)
			break; /* the child has exited and its last index was read: drained */
		if (child > 0 && ++idle % 1024 == 0 &&
		    waitpid(child, &s->child_status, WNOHANG) == child)
			s->child_reaped = true;
		sched_yield();
	}
	s->cons_got = seq;
}

static void *stress_producer_thread(void *arg)
{
	struct stress *s = arg;
	struct droce_ring_prod p;

	s->prod_err = droce_ring_prod_attach(&p, s->mem, s->len);
	if (s->prod_err == 0)
		s->prod_err = stress_produce(&p, s);
	if (s->prod_err != 0)
		__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *stress_consumer_thread(void *arg)
{
	struct stress *s = arg;
	struct droce_ring_cons c;

	s->cons_err = droce_ring_cons_attach(&c, s->mem, s->len);
	if (s->cons_err == 0)
		stress_consume(&c, s, 0);
	if (s->cons_err != 0 || s->cons_got != s->items)
		__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* Bounded by the item count; the timeout only stops a hang. */
Test(concurrency, two_threads, .timeout = 240)
{
	struct stress s = {.items = STRESS_ITEMS};
	pthread_t prod, cons;
	struct droce_ring *r;

	r = ring_new(STRESS_SLOTS, sizeof(struct item), &s.len);
	s.mem = r;
	cr_assert_eq(pthread_create(&cons, NULL, stress_consumer_thread, &s), 0);
	cr_assert_eq(pthread_create(&prod, NULL, stress_producer_thread, &s), 0);
	cr_assert_eq(pthread_join(prod, NULL), 0);
	cr_assert_eq(pthread_join(cons, NULL), 0);
	cr_expect_eq(s.prod_err, 0, "producer: no error (%d)", s.prod_err);
	cr_expect_eq(s.cons_err, 0, "consumer: no error (%d)", s.cons_err);
	cr_expect_eq(s.cons_got, STRESS_ITEMS, "consumer read %" PRIu64 " items", s.cons_got);
	cr_expect_eq(s.cons_bad, 0, "%" PRIu64 " items out of order or damaged, first %" PRIu64,
		     s.cons_bad, s.cons_first);
	cr_expect_eq(r->prod.idx, (uint32_t)STRESS_ITEMS, "every item published");
	cr_expect_eq(r->cons.idx, (uint32_t)STRESS_ITEMS, "every item released");
	free(r);
}

/* Child: map the memfd again (another address), produce, exit with what happened. */
static void process_child(int fd, size_t len, void *parent_map)
{
	struct stress s = {.items = PROCESS_ITEMS, .len = len};
	struct droce_ring_prod p;

	s.mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s.mem == MAP_FAILED)
		_exit(10);
	munmap(parent_map, len);
	if (droce_ring_prod_attach(&p, s.mem, len) != 0)
		_exit(11);
	if (stress_produce(&p, &s) != 0)
		_exit(12);
	_exit(0);
}

Test(concurrency, two_processes, .timeout = 240)
{
	struct stress s = {.items = PROCESS_ITEMS};
	struct droce_ring_cons c;
	pid_t pid;
	int fd;

	s.len = droce_ring_mem_size(STRESS_SLOTS, sizeof(struct item));
	fd = memfd_new(s.len);
	s.mem = memfd_map(fd, s.len);
	cr_assert_eq(droce_ring_init(s.mem, s.len, STRESS_SLOTS, sizeof(struct item)), 0);
	cr_assert_eq(droce_ring_cons_attach(&c, s.mem, s.len), 0, "parent attaches the consumer");
	pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0)
		process_child(fd, s.len, s.mem);
	stress_consume(&c, &s, pid);
	if (!s.child_reaped)
		cr_assert_eq(waitpid(pid, &s.child_status, 0), pid, "waitpid: %s", strerror(errno));
	cr_expect_eq(s.cons_err, 0, "consumer: no error (%d)", s.cons_err);
	cr_expect_eq(s.cons_got, PROCESS_ITEMS, "parent read %" PRIu64 " items", s.cons_got);
	cr_expect_eq(s.cons_bad, 0, "%" PRIu64 " items out of order or damaged, first %" PRIu64,
		     s.cons_bad, s.cons_first);
	cr_expect(WIFEXITED(s.child_status), "the child exited (status 0x%x)", s.child_status);
	cr_expect_eq(WEXITSTATUS(s.child_status), 0,
		     "the child's exit status (10 mmap, 11 attach, 12 corrupt consumer)");
	munmap(s.mem, s.len);
	close(fd);
}
