/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/mem key table and memory regions: table setup, keys, reg/rereg/dereg with the
 * combinations ibv_reg_mr() and ibv_rereg_mr() refuse, the local and remote checks at the
 * exact edges, the atomic alignment helper, and a writer and a reader running concurrently.
 * Memory windows and invalidation are in test_mem_mw.c. No EAL: the table uses no DPDK.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "droce_mr.h"

#define CAP 16
#define PD  7

static struct droce_mr_table t;
static uint8_t buf[65536] __attribute__((aligned(4096)));

static void setup(void)
{
	cr_assert_eq(droce_mr_table_init(&t, CAP, NULL), 0, "table of %d entries", CAP);
}

static void teardown(void)
{
	droce_mr_table_fini(&t);
}

static struct droce_mr_keys reg_ok(uint32_t pd, void *addr, uint64_t len, uint64_t iova,
				   unsigned int access)
{
	struct droce_mr_keys k = {0, 0};
	int ret = droce_mr_reg(&t, pd, addr, len, iova, access, 0, &k);

	cr_assert_eq(ret, 0, "reg(pd %u, %p, %" PRIu64 ", iova 0x%" PRIx64 ", access 0x%x): %d", pd,
		     addr, len, iova, access, ret);
	return k;
}

static void *addr_of(uint64_t a)
{
	return (void *)(uintptr_t)a;
}

/* ------------------------------------------------------------------ constants and keys */

/* The verbs layer passes libibverbs' values through: they must be the same numbers. */
_Static_assert(DROCE_ACCESS_LOCAL_WRITE == IBV_ACCESS_LOCAL_WRITE, "LOCAL_WRITE");
_Static_assert(DROCE_ACCESS_REMOTE_WRITE == IBV_ACCESS_REMOTE_WRITE, "REMOTE_WRITE");
_Static_assert(DROCE_ACCESS_REMOTE_READ == IBV_ACCESS_REMOTE_READ, "REMOTE_READ");
_Static_assert(DROCE_ACCESS_REMOTE_ATOMIC == IBV_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC");
_Static_assert(DROCE_ACCESS_MW_BIND == IBV_ACCESS_MW_BIND, "MW_BIND");
_Static_assert(DROCE_ACCESS_ZERO_BASED == IBV_ACCESS_ZERO_BASED, "ZERO_BASED");

Test(mr_const, access_bits_are_libibverbs_values)
{
	cr_expect_eq(DROCE_ACCESS_LOCAL_WRITE, 1, "LOCAL_WRITE is 1");
	cr_expect_eq(DROCE_ACCESS_REMOTE_WRITE, 2, "REMOTE_WRITE is 2");
	cr_expect_eq(DROCE_ACCESS_REMOTE_READ, 4, "REMOTE_READ is 4");
	cr_expect_eq(DROCE_ACCESS_REMOTE_ATOMIC, 8, "REMOTE_ATOMIC is 8");
	cr_expect_eq(DROCE_ACCESS_MW_BIND, 16, "MW_BIND is 16");
	cr_expect_eq(DROCE_ACCESS_ZERO_BASED, 32, "ZERO_BASED is 32");
}

Test(mr_const, rereg_and_mw_type_values_are_libibverbs_values)
{
	cr_expect_eq(DROCE_MR_REREG_TRANSLATION, IBV_REREG_MR_CHANGE_TRANSLATION, "TRANSLATION");
	cr_expect_eq(DROCE_MR_REREG_PD, IBV_REREG_MR_CHANGE_PD, "PD");
	cr_expect_eq(DROCE_MR_REREG_ACCESS, IBV_REREG_MR_CHANGE_ACCESS, "ACCESS");
	cr_expect_eq((int)DROCE_MW_TYPE_1, (int)IBV_MW_TYPE_1, "MW type 1");
	cr_expect_eq((int)DROCE_MW_TYPE_2, (int)IBV_MW_TYPE_2, "MW type 2");
}

Test(mr_const, key_fields)
{
	struct droce_mr_table x;
	uint32_t k;

	cr_assert_eq(droce_mr_table_init(&x, 255, NULL), 0, "255 entries: 8 index bits");
	k = droce_mr_key_make(&x, 0xab, 0x12345678);
	cr_expect_eq(k, 0xab345678u, "index in the high 8 bits, 24 bits below it");
	cr_expect_eq(droce_mr_key_index(&x, k), 0xabu, "index back");
	cr_expect_eq(droce_mr_key_byte(k), 0x78, "byte back");
	cr_expect_eq(droce_mr_key_with_byte(k, 0x5a), 0xab34565au, "byte replaced, rest kept");
	cr_expect(droce_mr_key_same_stem(k, 0xab3456ffu), "same index and tag");
	cr_expect_not(droce_mr_key_same_stem(k, 0xab3457ffu), "another tag");
	droce_mr_table_fini(&x);

	cr_assert_eq(droce_mr_table_init(&x, 256, NULL), 0, "256 entries: 9 index bits");
	cr_expect_eq(droce_mr_key_index(&x, UINT32_MAX), 511, "9 bits of index");
	droce_mr_table_fini(&x);
	cr_assert_eq(droce_mr_table_init(&x, 1, NULL), 0, "1 entry: 1 index bit");
	cr_expect_eq(droce_mr_key_index(&x, UINT32_MAX), 1, "1 bit of index");
	droce_mr_table_fini(&x);
	cr_assert_eq(droce_mr_table_init(&x, CAP, NULL), 0, "CAP entries");
	cr_expect_eq(droce_mr_key_index(&x, UINT32_MAX), 31, "5 bits of index for 16 entries");
	droce_mr_table_fini(&x);
}

Test(mr_const, status_names)
{
	cr_expect_str_eq(droce_mr_status_name[DROCE_MR_OK], "ok");
	cr_expect_str_eq(droce_mr_status_name[DROCE_MR_BAD_KEY], "bad_key");
	cr_expect_str_eq(droce_mr_status_name[DROCE_MR_BAD_PD], "bad_pd");
	cr_expect_str_eq(droce_mr_status_name[DROCE_MR_BAD_QP], "bad_qp");
	cr_expect_str_eq(droce_mr_status_name[DROCE_MR_NO_ACCESS], "no_access");
	cr_expect_str_eq(droce_mr_status_name[DROCE_MR_OUT_OF_BOUNDS], "out_of_bounds");
	cr_expect_str_eq(droce_mr_status_name[DROCE_MR_MISALIGNED], "misaligned");
}

Test(mr_const, entry_is_one_cache_line)
{
	cr_expect_eq(sizeof(struct droce_mr_entry), 64, "entry size");
	cr_expect_eq(_Alignof(struct droce_mr_entry), 64, "entry alignment");
}

/* ------------------------------------------------------------------ table */

Test(mr_table, init_refuses_bad_capacity)
{
	struct droce_mr_table x;

	cr_expect_eq(droce_mr_table_init(&x, 0, NULL), -EINVAL, "capacity 0");
	cr_expect_eq(droce_mr_table_init(&x, DROCE_MR_MAX_CAPACITY + 1, NULL), -EINVAL,
		     "capacity 2^24 (index 2^24 does not fit a key)");
	cr_expect_eq(droce_mr_table_memsize(0), 0, "memsize of capacity 0");
	cr_expect_eq(droce_mr_table_memsize(DROCE_MR_MAX_CAPACITY + 1), 0, "memsize too large");
}

Test(mr_table, memsize)
{
	cr_expect_eq(droce_mr_table_memsize(1), 2 * 64, "one entry plus the unused slot 0");
	cr_expect_eq(droce_mr_table_memsize(DROCE_MR_MAX_CAPACITY), (size_t)64 << 24,
		     "largest table: 2^24 slots of 64 bytes");
}

Test(mr_table, init_refuses_misaligned_memory)
{
	struct droce_mr_table x;
	void *mem = aligned_alloc(64, droce_mr_table_memsize(4) + 64);

	cr_assert_not_null(mem);
	cr_expect_eq(droce_mr_table_init(&x, 4, (uint8_t *)mem + 8), -EINVAL, "8-byte aligned");
	free(mem);
}

Test(mr_table, caller_memory_is_used_and_not_freed)
{
	struct droce_mr_table x;
	size_t size = droce_mr_table_memsize(4);
	uint8_t *mem = aligned_alloc(64, size);
	struct droce_mr_keys k;

	cr_assert_not_null(mem);
	memset(mem, 0xa5, size);
	cr_assert_eq(droce_mr_table_init(&x, 4, mem), 0, "init on caller memory");
	cr_expect_eq((void *)x.entries, (void *)mem, "entries live in the caller's memory");
	cr_expect_eq(droce_mr_reg(&x, PD, buf, 64, (uint64_t)(uintptr_t)buf, 0, 0, &k), 0,
		     "reg on a table in caller memory");
	droce_mr_table_fini(&x);
	mem[0] = 1; /* still ours: fini did not free it (ASan would tell) */
	free(mem);
}

Test(mr_table, used_counts_slots, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a, b;

	cr_expect_eq(droce_mr_table_used(&t), 0, "empty");
	a = reg_ok(PD, buf, 64, 0x1000, 0);
	b = reg_ok(PD, buf, 64, 0x1000, 0);
	cr_expect_eq(droce_mr_table_used(&t), 2, "two MRs");
	cr_expect_eq(droce_mr_dereg(&t, a.lkey), 0, "dereg a");
	cr_expect_eq(droce_mr_table_used(&t), 1, "one MR");
	cr_expect_eq(droce_mr_dereg(&t, b.lkey), 0, "dereg b");
	cr_expect_eq(droce_mr_table_used(&t), 0, "empty again");
}

/* ------------------------------------------------------------------ reg */

Test(mr_reg, keys_differ_and_index_in_range, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = reg_ok(PD, buf, sizeof(buf), (uint64_t)(uintptr_t)buf, 0);
	void *h;

	cr_expect_neq(k.lkey, k.rkey, "lkey and rkey differ");
	cr_expect_eq(droce_mr_key_index(&t, k.lkey), droce_mr_key_index(&t, k.rkey),
		     "one slot, one index");
	cr_expect_eq(droce_mr_check_remote(&t, k.lkey, PD, 1, (uint64_t)(uintptr_t)buf, 8, 0, &h),
		     DROCE_MR_BAD_KEY, "an lkey is no rkey");
	cr_expect_eq(droce_mr_check_local(&t, k.rkey, PD, (uint64_t)(uintptr_t)buf, 8, 0, &h),
		     DROCE_MR_BAD_KEY, "an rkey is no lkey");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, (uint64_t)(uintptr_t)buf, 8, 0, &h),
		     DROCE_MR_OK, "the lkey works locally");
	cr_expect_geq(droce_mr_key_index(&t, k.lkey), 1, "index 0 is never used");
	cr_expect_leq(droce_mr_key_index(&t, k.lkey), CAP, "index within capacity");
}

Test(mr_reg, same_buffer_twice_gets_different_keys, .init = setup, .fini = teardown)
{
	uint64_t va = (uint64_t)(uintptr_t)buf;
	struct droce_mr_keys a = reg_ok(PD, buf, 4096, va, DROCE_ACCESS_LOCAL_WRITE);
	struct droce_mr_keys b = reg_ok(PD, buf, 4096, va, DROCE_ACCESS_REMOTE_READ);
	void *h;

	cr_expect_neq(a.lkey, b.lkey, "every registration has its own keys");
	cr_expect_eq(droce_mr_check_local(&t, a.lkey, PD, va, 8, DROCE_ACCESS_LOCAL_WRITE, &h),
		     DROCE_MR_OK, "first registration: local write");
	cr_expect_eq(droce_mr_check_local(&t, b.lkey, PD, va, 8, DROCE_ACCESS_LOCAL_WRITE, &h),
		     DROCE_MR_NO_ACCESS, "second registration: its own (read-only) rights");
}

Test(mr_reg, query_gives_fields, .init = setup, .fini = teardown)
{
	unsigned int acc = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_READ;
	struct droce_mr_keys k = reg_ok(PD, buf + 64, 1000, 0x7040, acc);
	struct droce_mr_info i;

	cr_assert_eq(droce_mr_query(&t, k.lkey, &i), 0, "query");
	cr_expect_eq(i.key, k.rkey, "key: the rkey");
	cr_expect_eq(i.lkey, k.lkey, "lkey");
	cr_expect_eq(i.type, DROCE_MR_TYPE_MR, "type MR");
	cr_expect_eq(i.state, DROCE_MR_STATE_VALID, "valid");
	cr_expect_eq(i.pd, PD, "pd");
	cr_expect_eq(i.access, acc, "access");
	cr_expect_eq(i.addr, (uint64_t)(uintptr_t)(buf + 64), "host address");
	cr_expect_eq(i.iova, 0x7040, "iova");
	cr_expect_eq(i.length, 1000, "length");
	cr_expect_eq(i.bound_mws, 0, "no window");
}

struct access_case {
	unsigned int access;
	int ret;
	const char *what;
};

/* ibv_reg_mr(3): REMOTE_WRITE or REMOTE_ATOMIC need LOCAL_WRITE (kernel ib_check_mr_access). */
static const struct access_case access_cases[] = {
	{0, 0, "no access (local read only)"},
	{DROCE_ACCESS_LOCAL_WRITE, 0, "local write"},
	{DROCE_ACCESS_REMOTE_READ, 0, "remote read alone"},
	{DROCE_ACCESS_REMOTE_WRITE, -EINVAL, "remote write without local write"},
	{DROCE_ACCESS_REMOTE_ATOMIC, -EINVAL, "remote atomic without local write"},
	{DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_ATOMIC, -EINVAL,
	 "remote write and atomic without local write"},
	{DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ, -EINVAL,
	 "remote write and read without local write"},
	{DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_LOCAL_WRITE, 0, "remote write with local write"},
	{DROCE_ACCESS_REMOTE_ATOMIC | DROCE_ACCESS_LOCAL_WRITE, 0,
	 "remote atomic with local write"},
	{DROCE_ACCESS_MW_BIND, 0, "bind only"},
	{DROCE_ACCESS_ZERO_BASED, 0, "zero based"},
	{DROCE_ACCESS_MR_ALL, 0, "every bit"},
	{0x40, -EINVAL, "IBV_ACCESS_ON_DEMAND (not droce's)"},
	{0x80, -EINVAL, "IBV_ACCESS_HUGETLB (not droce's)"},
	{1u << 20, -EINVAL, "IBV_ACCESS_RELAXED_ORDERING (the verbs layer drops optional bits)"},
};

Test(mr_reg, access_combinations, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(access_cases) / sizeof(access_cases[0]); i++) {
		ret = droce_mr_reg(&t, PD, buf, 64, 0x1000, access_cases[i].access, 0, &k);
		cr_expect_eq(ret, access_cases[i].ret, "%s (0x%x): %d, want %d",
			     access_cases[i].what, access_cases[i].access, ret,
			     access_cases[i].ret);
		if (ret == 0)
			cr_expect_eq(droce_mr_dereg(&t, k.lkey), 0, "dereg %s",
				     access_cases[i].what);
	}
	cr_expect_eq(droce_mr_table_used(&t), 0, "refused registrations take no slot");
}

/* ib_umem_get() refuses zero pages: ibv_reg_mr() with length 0 fails with EINVAL. */
Test(mr_reg, zero_length_refused, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k;

	cr_expect_eq(droce_mr_reg(&t, PD, buf, 0, 0x1000, 0, 0, &k), -EINVAL, "length 0");
}

Test(mr_reg, null_address_refused, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k;

	cr_expect_eq(droce_mr_reg(&t, PD, NULL, 64, 0x1000, 0, 0, &k), -EINVAL, "NULL");
}

Test(mr_reg, unknown_flag_refused, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k;

	cr_expect_eq(droce_mr_reg(&t, PD, buf, 64, 0x1000, 0, 0x2, &k), -EINVAL, "flag 0x2");
}

Test(mr_reg, address_overflow_refused, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k;
	uint64_t a = UINT64_MAX - 4095;

	cr_expect_eq(droce_mr_reg(&t, PD, addr_of(a), 4095, 0x1000, 0, 0, &k), 0,
		     "addr + length == 2^64 - 1 accepted");
	cr_expect_eq(droce_mr_reg(&t, PD, addr_of(a), 4096, 0x1000, 0, 0, &k), -EINVAL,
		     "addr + length == 2^64 (wraps to 0) refused");
	cr_expect_eq(droce_mr_reg(&t, PD, addr_of(a), 8192, 0x1000, 0, 0, &k), -EINVAL,
		     "addr + length beyond 2^64 refused");
	cr_expect_eq(droce_mr_reg(&t, PD, addr_of(1), UINT64_MAX - 1, 1, 0, 0, &k), 0,
		     "from address 1 to 2^64 - 1 accepted");
	cr_expect_eq(droce_mr_reg(&t, PD, addr_of(1), UINT64_MAX, 1, 0, 0, &k), -EINVAL,
		     "length 2^64 - 1 from address 1 refused");
	cr_expect_eq(droce_mr_reg(&t, PD, addr_of(UINT64_MAX), 1, 0xfff, 0, 0, &k), -EINVAL,
		     "last byte of the address space refused");
}

Test(mr_reg, iova_overflow_refused, .init = setup, .fini = teardown)
{
	const uint64_t iova = UINT64_MAX - 8191; /* the last two 4 KiB pages */
	struct droce_mr_keys k;

	cr_expect_eq(droce_mr_reg(&t, PD, buf, 8191, iova, 0, 0, &k), 0,
		     "iova + length == 2^64 - 1 accepted");
	cr_expect_eq(droce_mr_reg(&t, PD, buf, 8192, iova, 0, 0, &k), -EINVAL,
		     "iova + length == 2^64 refused");
	cr_expect_eq(droce_mr_reg(&t, PD, buf, 8192, iova, DROCE_ACCESS_ZERO_BASED, 0, &k), 0,
		     "zero based: the iova argument is ignored");
}

Test(mr_reg, zero_based_iova, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = reg_ok(PD, buf + 256, 4096, 0xdead0000,
					DROCE_ACCESS_ZERO_BASED | DROCE_ACCESS_LOCAL_WRITE);
	uint64_t va = (uint64_t)(uintptr_t)(buf + 256);
	struct droce_mr_info i;
	void *h = NULL;

	cr_assert_eq(droce_mr_query(&t, k.lkey, &i), 0, "query");
	cr_expect_eq(i.iova, 0, "a zero-based MR starts at iova 0");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, 0, 16, 0, &h), DROCE_MR_OK, "iova 0");
	cr_expect_eq(h, (void *)(buf + 256), "iova 0 is the first byte");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, 4095, 1, 0, &h), DROCE_MR_OK,
		     "iova 4095");
	cr_expect_eq(h, (void *)(buf + 256 + 4095), "iova 4095 is the last byte");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, va, 1, 0, &h), DROCE_MR_OUT_OF_BOUNDS,
		     "the host address is not an iova of a zero-based MR");
}

Test(mr_reg, iova2, .init = setup, .fini = teardown)
{
	uint64_t iova = 0x100000000ull;
	struct droce_mr_keys k = reg_ok(PD, buf, 8192, iova, DROCE_ACCESS_REMOTE_READ);
	void *h = NULL;

	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, iova + 5, 10, 0, &h), DROCE_MR_OK,
		     "iova2 + 5");
	cr_expect_eq(h, (void *)(buf + 5), "maps to the registered address + 5");
	cr_expect_eq(droce_mr_check_remote(&t, k.rkey, PD, 1, iova + 8191, 1,
					   DROCE_ACCESS_REMOTE_READ, &h),
		     DROCE_MR_OK, "remote read of the last byte");
	cr_expect_eq(h, (void *)(buf + 8191), "last byte");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, (uint64_t)(uintptr_t)buf, 1, 0, &h),
		     DROCE_MR_OUT_OF_BOUNDS, "the host address is not in the iova space");
}

Test(mr_reg, table_full, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k[CAP], extra;
	int i;

	for (i = 0; i < CAP; i++)
		k[i] = reg_ok(PD, buf, 64, 0x1000, 0);
	cr_expect_eq(droce_mr_table_used(&t), CAP, "full");
	cr_expect_eq(droce_mr_reg(&t, PD, buf, 64, 0x1000, 0, 0, &extra), -ENOMEM,
		     "one more than the capacity");
	cr_expect_eq(droce_mr_dereg(&t, k[3].lkey), 0, "free one");
	cr_expect_eq(droce_mr_reg(&t, PD, buf, 64, 0x1000, 0, 0, &extra), 0, "room again");
	cr_expect_eq(droce_mr_key_index(&t, extra.lkey), droce_mr_key_index(&t, k[3].lkey),
		     "the only free slot is reused");
	cr_expect_neq(extra.lkey, k[3].lkey, "with another key");
}

/* A freed slot goes to the back of the queue: the next registration takes another one. */
Test(mr_reg, freed_slot_reused_last, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 64, 0x1000, 0), b;

	cr_assert_eq(droce_mr_dereg(&t, a.lkey), 0, "dereg");
	b = reg_ok(PD, buf, 64, 0x1000, 0);
	cr_expect_neq(droce_mr_key_index(&t, b.lkey), droce_mr_key_index(&t, a.lkey),
		      "FIFO reuse: the freed index waits behind the others");
}

/* One slot: every registration reuses it, and every one gets a key never seen before. */
/*
 * Keys of one slot registered again and again (the same buffer each time): a one-entry table
 * leaves 31 random bits below the 1-bit index. Consecutive keys never repeat (the table
 * guarantees it); over 1000 registrations equal keys, successive keys, or a random bit stuck
 * would show keys that are related. The bounds are far (> 9 standard deviations) from what
 * independent random keys give, so the test does not fail by chance.
 */
#define KR_REGS 1000
Test(mr_reg, keys_of_a_slot_are_unrelated)
{
	static uint32_t rk[KR_REGS], lk[KR_REGS];
	struct droce_mr_table x;
	struct droce_mr_keys k;
	unsigned int ones[32] = {0}, equal = 0, step = 0;
	int i, j, bit;

	cr_assert_eq(droce_mr_table_init(&x, 1, NULL), 0, "one-entry table");
	for (i = 0; i < KR_REGS; i++) {
		cr_assert_eq(droce_mr_reg(&x, PD, buf, 64, 0x1000, 0, 0, &k), 0, "reg %d", i);
		cr_assert_eq(droce_mr_key_index(&x, k.rkey), 1, "reg %d uses slot 1", i);
		cr_expect_neq(k.lkey, k.rkey, "reg %d: lkey != rkey", i);
		rk[i] = k.rkey;
		lk[i] = k.lkey;
		if (i > 0) {
			cr_expect_neq(rk[i], rk[i - 1], "reg %d: rkey differs from the last", i);
			cr_expect_neq(lk[i], lk[i - 1], "reg %d: lkey differs from the last", i);
			step += rk[i] - rk[i - 1] == 1 || lk[i] - lk[i - 1] == 1;
		}
		for (bit = 0; bit < 31; bit++)
			ones[bit] += (rk[i] >> bit) & 1;
		cr_assert_eq(droce_mr_dereg(&x, k.lkey), 0, "dereg %d", i);
	}
	for (i = 0; i < KR_REGS; i++)
		for (j = i + 1; j < KR_REGS; j++)
			equal += (rk[i] == rk[j]) + (lk[i] == lk[j]) + (rk[i] == lk[j]) +
				 (lk[i] == rk[j]);
	/* 2000 draws of 31 bits: about 0.001 equal pairs expected */
	cr_expect_leq(equal, 3, "%u equal key pairs in %d registrations", equal, KR_REGS);
	cr_expect_leq(step, 3, "%u keys were the last one plus one", step);
	/* each random bit set in about half of the keys: 500 +- 16 */
	for (bit = 0; bit < 31; bit++)
		cr_expect(ones[bit] >= 350 && ones[bit] <= 650, "rkey bit %d set in %u of %d keys",
			  bit, ones[bit], KR_REGS);
	droce_mr_table_fini(&x);
}

Test(mr_reg, stale_key_refused_after_dereg)
{
	struct droce_mr_table x;
	struct droce_mr_keys a, b;
	struct droce_mr_info i;
	void *h;

	cr_assert_eq(droce_mr_table_init(&x, 1, NULL), 0, "one-entry table");
	cr_assert_eq(droce_mr_reg(&x, PD, buf, 64, 0x1000, DROCE_ACCESS_REMOTE_READ, 0, &a), 0,
		     "reg a");
	cr_assert_eq(droce_mr_dereg(&x, a.lkey), 0, "dereg a");
	cr_expect_eq(droce_mr_check_local(&x, a.lkey, PD, 0x1000, 8, 0, &h), DROCE_MR_BAD_KEY,
		     "deregistered lkey, free slot");
	cr_assert_eq(droce_mr_reg(&x, PD, buf, 64, 0x1000, DROCE_ACCESS_REMOTE_READ, 0, &b), 0,
		     "reg b in the same slot");
	cr_expect_eq(droce_mr_key_index(&x, a.lkey), droce_mr_key_index(&x, b.lkey), "same slot");
	cr_expect_neq(a.rkey, b.rkey, "a new rkey");
	cr_expect_eq(droce_mr_check_remote(&x,
					   droce_mr_key_with_byte(b.rkey, (uint8_t)(b.rkey + 1)),
					   PD, 1, 0x1000, 8, DROCE_ACCESS_REMOTE_READ, &h),
		     DROCE_MR_BAD_KEY, "the right index with a wrong random part");
	cr_expect_eq(droce_mr_check_remote(&x, b.rkey ^ 0x100, PD, 1, 0x1000, 8,
					   DROCE_ACCESS_REMOTE_READ, &h),
		     DROCE_MR_BAD_KEY, "a wrong tag bit");
	cr_expect_eq(droce_mr_check_local(&x, a.lkey, PD, 0x1000, 8, 0, &h), DROCE_MR_BAD_KEY,
		     "stale lkey, slot reused");
	cr_expect_eq(
		droce_mr_check_remote(&x, a.rkey, PD, 1, 0x1000, 8, DROCE_ACCESS_REMOTE_READ, &h),
		DROCE_MR_BAD_KEY, "stale rkey, slot reused");
	cr_expect_eq(droce_mr_dereg(&x, a.lkey), -EINVAL, "dereg with the stale key");
	cr_expect_eq(droce_mr_query(&x, a.lkey, &i), -EINVAL, "query with the stale key");
	cr_expect_eq(droce_mr_check_local(&x, b.lkey, PD, 0x1000, 8, 0, &h), DROCE_MR_OK,
		     "the new key works");
	droce_mr_table_fini(&x);
}

/* ------------------------------------------------------------------ rereg */

Test(mr_rereg, new_keys_same_index_old_refused, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 4096, 0x1000, 0), b;
	void *h;

	cr_assert_eq(droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_TRANSLATION, 0, buf + 4096, 4096,
				    0x2000, 0, &b),
		     0, "rereg translation");
	cr_expect_neq(b.lkey, a.lkey, "new lkey");
	cr_expect_neq(b.rkey, a.rkey, "new rkey");
	cr_expect_neq(b.lkey, b.rkey, "lkey and rkey still differ");
	cr_expect_eq(droce_mr_key_index(&t, b.lkey), droce_mr_key_index(&t, a.lkey), "same index");
	cr_expect_eq(droce_mr_check_local(&t, a.lkey, PD, 0x2000, 8, 0, &h), DROCE_MR_BAD_KEY,
		     "old key refused");
	cr_expect_eq(droce_mr_check_local(&t, b.lkey, PD, 0x2000, 8, 0, &h), DROCE_MR_OK,
		     "new key works");
	cr_expect_eq(droce_mr_table_used(&t), 1, "no slot taken");
}

Test(mr_rereg, keys_kept_without_translation, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 4096, 0x1000, DROCE_ACCESS_REMOTE_READ), b, c;
	void *h;

	cr_expect_eq(
		droce_mr_check_remote(&t, a.rkey, PD, 1, 0x1000, 8, DROCE_ACCESS_REMOTE_WRITE, &h),
		DROCE_MR_NO_ACCESS, "no remote write before");
	cr_assert_eq(droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_ACCESS, 0, NULL, 0, 0,
				    DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE, &b),
		     0, "rereg access");
	cr_expect_eq(b.lkey, a.lkey, "access: lkey kept");
	cr_expect_eq(b.rkey, a.rkey, "access: rkey kept");
	cr_expect_eq(
		droce_mr_check_remote(&t, a.rkey, PD, 1, 0x1000, 8, DROCE_ACCESS_REMOTE_WRITE, &h),
		DROCE_MR_OK, "the new rights govern the key the peer holds");
	cr_assert_eq(droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_PD, PD + 1, NULL, 0, 0, 0, &c), 0,
		     "rereg PD");
	cr_expect_eq(c.rkey, a.rkey, "PD: rkey kept");
	cr_expect_eq(
		droce_mr_check_remote(&t, a.rkey, PD, 1, 0x1000, 8, DROCE_ACCESS_REMOTE_WRITE, &h),
		DROCE_MR_BAD_PD, "the old PD's QPs lose it");
	cr_expect_eq(droce_mr_check_local(&t, a.lkey, PD + 1, 0x1000, 8, 0, &h), DROCE_MR_OK,
		     "the new PD's QPs have it");
}

Test(mr_rereg, change_access, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 4096, 0x1000, 0), b;
	void *h;

	cr_expect_eq(
		droce_mr_check_remote(&t, a.rkey, PD, 1, 0x1000, 8, DROCE_ACCESS_REMOTE_READ, &h),
		DROCE_MR_NO_ACCESS, "no remote read before");
	cr_assert_eq(droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_ACCESS, 0, NULL, 0, 0,
				    DROCE_ACCESS_REMOTE_READ, &b),
		     0, "rereg access");
	cr_expect_eq(
		droce_mr_check_remote(&t, b.rkey, PD, 1, 0x1000, 8, DROCE_ACCESS_REMOTE_READ, &h),
		DROCE_MR_OK, "remote read after");
	cr_expect_eq(h, (void *)buf, "translation kept");
}

Test(mr_rereg, change_pd, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 4096, 0x1000, 0), b;
	struct droce_mr_info i;
	void *h;

	cr_assert_eq(droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_PD, PD + 1, NULL, 0, 0, 0, &b), 0,
		     "rereg pd");
	cr_expect_eq(droce_mr_check_local(&t, b.lkey, PD, 0x1000, 8, 0, &h), DROCE_MR_BAD_PD,
		     "old pd refused");
	cr_expect_eq(droce_mr_check_local(&t, b.lkey, PD + 1, 0x1000, 8, 0, &h), DROCE_MR_OK,
		     "new pd");
	cr_assert_eq(droce_mr_query(&t, b.lkey, &i), 0, "query");
	cr_expect_eq(i.length, 4096, "length kept");
	cr_expect_eq(i.iova, 0x1000, "iova kept");
}

Test(mr_rereg, change_translation, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 4096, 0x1000, DROCE_ACCESS_REMOTE_READ), b;
	struct droce_mr_info i;
	void *h;

	cr_assert_eq(droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_TRANSLATION, 0, buf + 8192, 100,
				    0x9000, 0, &b),
		     0, "rereg translation");
	cr_assert_eq(droce_mr_query(&t, b.lkey, &i), 0, "query");
	cr_expect_eq(i.addr, (uint64_t)(uintptr_t)(buf + 8192), "new address");
	cr_expect_eq(i.length, 100, "new length");
	cr_expect_eq(i.iova, 0x9000, "new iova");
	cr_expect_eq(i.access, DROCE_ACCESS_REMOTE_READ, "access kept");
	cr_expect_eq(i.pd, PD, "pd kept");
	cr_expect_eq(droce_mr_check_local(&t, b.lkey, PD, 0x9000 + 99, 1, 0, &h), DROCE_MR_OK,
		     "new last byte");
	cr_expect_eq(h, (void *)(buf + 8192 + 99), "new mapping");
	cr_expect_eq(droce_mr_check_local(&t, b.lkey, PD, 0x1000, 1, 0, &h), DROCE_MR_OUT_OF_BOUNDS,
		     "old range gone");
}

Test(mr_rereg, all_changes_at_once, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 4096, 0x1000, 0), b;
	struct droce_mr_info i;

	cr_assert_eq(droce_mr_rereg(&t, a.lkey,
				    DROCE_MR_REREG_TRANSLATION | DROCE_MR_REREG_PD |
					    DROCE_MR_REREG_ACCESS,
				    9, buf + 64, 64, 0x40, DROCE_ACCESS_ZERO_BASED, &b),
		     0, "rereg everything");
	cr_assert_eq(droce_mr_query(&t, b.lkey, &i), 0, "query");
	cr_expect_eq(i.pd, 9, "pd");
	cr_expect_eq(i.access, DROCE_ACCESS_ZERO_BASED, "access");
	cr_expect_eq(i.iova, 0, "zero based: iova 0, the iova argument ignored");
	cr_expect_eq(i.length, 64, "length");
}

Test(mr_rereg, no_change_refused, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 4096, 0x1000, 0), b;

	cr_expect_eq(droce_mr_rereg(&t, a.lkey, 0, 0, NULL, 0, 0, 0, &b), -EINVAL,
		     "flags 0 (ib_uverbs_rereg_mr refuses it)");
	cr_expect_eq(droce_mr_rereg(&t, a.lkey, 0x8, 0, NULL, 0, 0, 0, &b), -EINVAL,
		     "unknown flag 0x8");
	cr_expect_eq(droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_PD | 0x10, 1, NULL, 0, 0, 0, &b),
		     -EINVAL, "known and unknown flags");
}

Test(mr_rereg, stale_key_refused, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 4096, 0x1000, 0), b, c;

	cr_assert_eq(
		droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_TRANSLATION, 3, buf, 4096, 0x1000, 0, &b),
		0, "first rereg");
	cr_expect_eq(droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_PD, 4, NULL, 0, 0, 0, &c), -EINVAL,
		     "rereg with the previous key");
	cr_expect_eq(droce_mr_rereg(&t, droce_mr_key_make(&t, CAP, 0), DROCE_MR_REREG_PD, 4, NULL,
				    0, 0, 0, &c),
		     -EINVAL, "rereg of a free slot");
	cr_expect_eq(droce_mr_rereg(&t, droce_mr_key_make(&t, CAP + 1, 0), DROCE_MR_REREG_PD, 4,
				    NULL, 0, 0, 0, &c),
		     -EINVAL, "rereg beyond the table");
}

Test(mr_rereg, refused_result_leaves_mr_unchanged, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 4096, 0x1000, DROCE_ACCESS_LOCAL_WRITE), b;
	struct droce_mr_info i;
	void *h;

	cr_expect_eq(droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_ACCESS, 0, NULL, 0, 0,
				    DROCE_ACCESS_REMOTE_WRITE, &b),
		     -EINVAL, "remote write without local write");
	cr_expect_eq(
		droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_TRANSLATION, 0, buf, 0, 0x1000, 0, &b),
		-EINVAL, "new length 0");
	cr_expect_eq(droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_TRANSLATION, 0,
				    addr_of(UINT64_MAX - 10), 100, 0x1000, 0, &b),
		     -EINVAL, "new range wraps");
	cr_expect_eq(
		droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_TRANSLATION, 0, NULL, 100, 0x1000, 0, &b),
		-EINVAL, "new address NULL");
	cr_assert_eq(droce_mr_query(&t, a.lkey, &i), 0, "old key still current");
	cr_expect_eq(i.access, DROCE_ACCESS_LOCAL_WRITE, "access unchanged");
	cr_expect_eq(i.length, 4096, "length unchanged");
	cr_expect_eq(droce_mr_check_local(&t, a.lkey, PD, 0x1000, 8, DROCE_ACCESS_LOCAL_WRITE, &h),
		     DROCE_MR_OK, "still usable");
}

Test(mr_rereg, zero_based_change_needs_translation, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 4096, 0x1000, 0), b;
	struct droce_mr_info i;

	cr_expect_eq(droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_ACCESS, 0, NULL, 0, 0,
				    DROCE_ACCESS_ZERO_BASED, &b),
		     -EINVAL, "ZERO_BASED added without a new translation");
	cr_assert_eq(droce_mr_rereg(&t, a.lkey, DROCE_MR_REREG_ACCESS | DROCE_MR_REREG_TRANSLATION,
				    0, buf, 4096, 0x1000, DROCE_ACCESS_ZERO_BASED, &b),
		     0, "ZERO_BASED added with a translation");
	cr_assert_eq(droce_mr_query(&t, b.lkey, &i), 0, "query");
	cr_expect_eq(i.iova, 0, "now zero based");
	cr_expect_eq(droce_mr_rereg(&t, b.lkey, DROCE_MR_REREG_ACCESS, 0, NULL, 0, 0, 0, &a),
		     -EINVAL, "ZERO_BASED removed without a new translation");
}

/* ------------------------------------------------------------------ dereg */

Test(mr_dereg, twice_refused, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 64, 0x1000, 0);

	cr_expect_eq(droce_mr_dereg(&t, a.lkey), 0, "dereg");
	cr_expect_eq(droce_mr_dereg(&t, a.lkey), -EINVAL, "again");
}

Test(mr_dereg, unknown_keys_refused, .init = setup, .fini = teardown)
{
	struct droce_mr_keys a = reg_ok(PD, buf, 64, 0x1000, 0);

	cr_expect_eq(droce_mr_dereg(&t, 0), -EINVAL, "key 0 (slot 0 is never used)");
	cr_expect_eq(droce_mr_dereg(&t, UINT32_MAX), -EINVAL, "index beyond the table");
	cr_expect_eq(droce_mr_dereg(&t, a.lkey ^ 0x01), -EINVAL, "right index, wrong byte");
	cr_expect_eq(droce_mr_dereg(&t, droce_mr_key_make(&t, CAP, droce_mr_key_byte(a.lkey))),
		     -EINVAL, "free slot");
	cr_expect_eq(droce_mr_table_used(&t), 1, "the MR is still there");
}

Test(mr_dereg, window_handle_refused, .init = setup, .fini = teardown)
{
	uint32_t h;

	cr_assert_eq(droce_mw_alloc(&t, PD, DROCE_MW_TYPE_1, &h), 0, "alloc window");
	cr_expect_eq(droce_mr_dereg(&t, h), -EINVAL, "a window is not deregistered");
	cr_expect_eq(droce_mr_rereg(&t, h, DROCE_MR_REREG_PD, 1, NULL, 0, 0, 0, NULL), -EINVAL,
		     "nor reregistered");
}

/* ------------------------------------------------------------------ local check */

#define VA   0x10400ull /* iova of the MR of the check tests (page offset of BASE) */
#define LEN  4096ull
#define BASE (buf + 1024)

static struct droce_mr_keys check_mr(unsigned int access)
{
	return reg_ok(PD, BASE, LEN, VA, access);
}

Test(mr_check_local, ok_gives_host_pointer, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = check_mr(DROCE_ACCESS_LOCAL_WRITE);
	void *h = NULL;

	cr_expect_eq(
		droce_mr_check_local(&t, k.lkey, PD, VA + 100, 50, DROCE_ACCESS_LOCAL_WRITE, &h),
		DROCE_MR_OK, "write 50 bytes at +100");
	cr_expect_eq(h, (void *)(BASE + 100), "host pointer");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA, LEN, 0, &h), DROCE_MR_OK,
		     "read the whole MR");
	cr_expect_eq(h, (void *)BASE, "host pointer of the start");
}

Test(mr_check_local, bad_key, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = check_mr(DROCE_ACCESS_LOCAL_WRITE);
	void *h;

	cr_expect_eq(droce_mr_check_local(&t, k.lkey ^ 0x80, PD, VA, 8, 0, &h), DROCE_MR_BAD_KEY,
		     "wrong key byte");
	cr_expect_eq(droce_mr_check_local(&t, 0, PD, VA, 8, 0, &h), DROCE_MR_BAD_KEY, "key 0");
	cr_expect_eq(droce_mr_check_local(&t, droce_mr_key_make(&t, CAP + 1, 0), PD, VA, 8, 0, &h),
		     DROCE_MR_BAD_KEY, "index just beyond the table");
	cr_expect_eq(droce_mr_check_local(&t, UINT32_MAX, PD, VA, 8, 0, &h), DROCE_MR_BAD_KEY,
		     "largest key");
	cr_expect_eq(droce_mr_check_local(&t, droce_mr_key_make(&t, CAP, 0), PD, VA, 8, 0, &h),
		     DROCE_MR_BAD_KEY, "free slot");
}

Test(mr_check_local, bad_pd, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = check_mr(DROCE_ACCESS_LOCAL_WRITE);
	void *h;

	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD + 1, VA, 8, 0, &h), DROCE_MR_BAD_PD,
		     "QP of another PD");
}

Test(mr_check_local, no_access, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = check_mr(DROCE_ACCESS_REMOTE_READ);
	void *h;

	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA, 8, 0, &h), DROCE_MR_OK,
		     "local read needs no right");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA, 8, DROCE_ACCESS_LOCAL_WRITE, &h),
		     DROCE_MR_NO_ACCESS, "local write without LOCAL_WRITE");
}

Test(mr_check_local, bounds_at_the_edges, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = check_mr(0);
	void *h = NULL;

	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA, LEN, 0, &h), DROCE_MR_OK,
		     "exactly the MR");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA, LEN + 1, 0, &h),
		     DROCE_MR_OUT_OF_BOUNDS, "one byte longer than the MR");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA + LEN - 8, 8, 0, &h), DROCE_MR_OK,
		     "addr + len == end");
	cr_expect_eq(h, (void *)(BASE + LEN - 8), "host pointer of the last 8 bytes");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA + LEN - 7, 8, 0, &h),
		     DROCE_MR_OUT_OF_BOUNDS, "addr + len == end + 1");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA + LEN, 1, 0, &h),
		     DROCE_MR_OUT_OF_BOUNDS, "first byte after the end");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA - 1, 1, 0, &h), DROCE_MR_OUT_OF_BOUNDS,
		     "byte before the start");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA - 1, 2, 0, &h), DROCE_MR_OUT_OF_BOUNDS,
		     "straddling the start");
}

Test(mr_check_local, overflow_of_addr_plus_len, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = check_mr(0);
	void *h;

	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, UINT64_MAX - 1, 4, 0, &h),
		     DROCE_MR_OUT_OF_BOUNDS, "addr + len wraps past 2^64");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA + 8, UINT64_MAX, 0, &h),
		     DROCE_MR_OUT_OF_BOUNDS, "len 2^64 - 1");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA + 8, UINT64_MAX - VA - 7, 0, &h),
		     DROCE_MR_OUT_OF_BOUNDS, "addr + len == 2^64 exactly (wraps to 0)");
}

Test(mr_check_local, zero_length_always_in_bounds, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = check_mr(DROCE_ACCESS_LOCAL_WRITE);
	void *h = (void *)buf;

	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, VA + LEN, 0, 0, &h), DROCE_MR_OK,
		     "zero bytes at the end");
	cr_expect_null(h, "no host pointer for zero bytes");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, 0, 0, 0, &h), DROCE_MR_OK,
		     "zero bytes at address 0, outside the MR");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, UINT64_MAX, 0, 0, &h), DROCE_MR_OK,
		     "zero bytes at the last address");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD + 1, VA, 0, 0, &h), DROCE_MR_BAD_PD,
		     "zero bytes still need the right PD");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey ^ 1, PD, VA, 0, 0, &h), DROCE_MR_BAD_KEY,
		     "zero bytes still need a valid key");
}

/* Checks run in order key, PD, access, bounds: the first failure is reported. */
Test(mr_check_local, first_failure_wins, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = check_mr(0);
	void *h;

	cr_expect_eq(
		droce_mr_check_local(&t, k.lkey ^ 1, PD + 1, 0, 8, DROCE_ACCESS_LOCAL_WRITE, &h),
		DROCE_MR_BAD_KEY, "everything wrong: bad key first");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD + 1, 0, 8, DROCE_ACCESS_LOCAL_WRITE, &h),
		     DROCE_MR_BAD_PD, "pd, access and bounds wrong: bad pd");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, 0, 8, DROCE_ACCESS_LOCAL_WRITE, &h),
		     DROCE_MR_NO_ACCESS, "access and bounds wrong: no access");
}

/* ------------------------------------------------------------------ remote check on MRs */

Test(mr_check_remote, each_right, .init = setup, .fini = teardown)
{
	static const unsigned int rights[] = {DROCE_ACCESS_REMOTE_READ, DROCE_ACCESS_REMOTE_WRITE,
					      DROCE_ACCESS_REMOTE_ATOMIC};
	struct droce_mr_keys k;
	void *h;
	size_t i, j;

	for (i = 0; i < 3; i++) {
		k = check_mr(rights[i] | DROCE_ACCESS_LOCAL_WRITE);
		for (j = 0; j < 3; j++)
			cr_expect_eq(droce_mr_check_remote(&t, k.rkey, PD, 1, VA, 8, rights[j], &h),
				     i == j ? DROCE_MR_OK : DROCE_MR_NO_ACCESS,
				     "MR with right 0x%x asked 0x%x", rights[i], rights[j]);
		cr_assert_eq(droce_mr_dereg(&t, k.lkey), 0, "dereg");
	}
}

Test(mr_check_remote, local_write_grants_nothing_remote, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = check_mr(DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_MW_BIND);
	void *h;

	cr_expect_eq(droce_mr_check_remote(&t, k.rkey, PD, 1, VA, 8, DROCE_ACCESS_REMOTE_READ, &h),
		     DROCE_MR_NO_ACCESS, "remote read");
	cr_expect_eq(droce_mr_check_remote(&t, k.rkey, PD, 1, VA, 8, DROCE_ACCESS_REMOTE_WRITE, &h),
		     DROCE_MR_NO_ACCESS, "remote write");
}

Test(mr_check_remote, statuses, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = check_mr(DROCE_ACCESS_REMOTE_READ);
	const unsigned int rr = DROCE_ACCESS_REMOTE_READ;
	void *h = NULL;

	cr_expect_eq(droce_mr_check_remote(&t, k.rkey, PD, 1, VA + 16, 32, rr, &h), DROCE_MR_OK,
		     "ok");
	cr_expect_eq(h, (void *)(BASE + 16), "host pointer");
	cr_expect_eq(droce_mr_check_remote(&t, k.rkey, PD, 99, VA, 8, rr, &h), DROCE_MR_OK,
		     "an MR is not tied to a QP");
	cr_expect_eq(droce_mr_check_remote(&t, k.rkey ^ 2, PD, 1, VA, 8, rr, &h), DROCE_MR_BAD_KEY,
		     "bad key");
	cr_expect_eq(droce_mr_check_remote(&t, k.rkey, PD + 1, 1, VA, 8, rr, &h), DROCE_MR_BAD_PD,
		     "bad pd");
	cr_expect_eq(droce_mr_check_remote(&t, k.rkey, PD, 1, VA + LEN - 4, 4, rr, &h), DROCE_MR_OK,
		     "va + len == end");
	cr_expect_eq(droce_mr_check_remote(&t, k.rkey, PD, 1, VA + LEN - 3, 4, rr, &h),
		     DROCE_MR_OUT_OF_BOUNDS, "va + len == end + 1");
	cr_expect_eq(droce_mr_check_remote(&t, k.rkey, PD, 1, VA - 1, 4, rr, &h),
		     DROCE_MR_OUT_OF_BOUNDS, "before the start");
	cr_expect_eq(droce_mr_check_remote(&t, k.rkey, PD, 1, UINT64_MAX - 2, 8, rr, &h),
		     DROCE_MR_OUT_OF_BOUNDS, "va + len wraps");
	cr_expect_eq(droce_mr_check_remote(&t, k.rkey, PD, 1, VA + 2 * LEN, 0, rr, &h), DROCE_MR_OK,
		     "zero length, anywhere");
}

Test(mr_check_remote, lookup, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k = check_mr(DROCE_ACCESS_REMOTE_READ);
	struct droce_mr_info i;

	cr_expect_eq(droce_mr_lookup(&t, k.rkey, &i), DROCE_MR_OK, "lookup");
	cr_expect_eq(i.key, k.rkey, "key");
	cr_expect_eq(i.addr, (uint64_t)(uintptr_t)BASE, "address");
	cr_expect_eq(i.bound_mws, 0, "the data path does not count windows");
	cr_expect_eq(droce_mr_lookup(&t, k.rkey + 1, &i), DROCE_MR_BAD_KEY, "wrong byte");
	cr_expect_eq(droce_mr_lookup(&t, UINT32_MAX, &i), DROCE_MR_BAD_KEY, "beyond the table");
}

/* ------------------------------------------------------------------ atomics */

Test(mr_check_atomic, alignment)
{
	uint64_t aligned[2];

	cr_expect_eq(droce_mr_check_atomic(0x1000, aligned), DROCE_MR_OK, "both aligned");
	cr_expect_eq(droce_mr_check_atomic(0x1004, aligned), DROCE_MR_MISALIGNED,
		     "va misaligned by 4");
	cr_expect_eq(droce_mr_check_atomic(0x1001, aligned), DROCE_MR_MISALIGNED,
		     "va misaligned by 1");
	cr_expect_eq(droce_mr_check_atomic(0x1000, (uint8_t *)aligned + 4), DROCE_MR_MISALIGNED,
		     "host misaligned");
}

/* A zero-based MR can map an aligned va to an unaligned host address: both must be aligned. */
Test(mr_check_atomic, zero_based_mapping, .init = setup, .fini = teardown)
{
	const unsigned int acc =
		DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_ATOMIC | DROCE_ACCESS_ZERO_BASED;
	struct droce_mr_keys k = reg_ok(PD, buf + 4, 64, 0, acc);
	void *h = NULL;

	cr_assert_eq(droce_mr_check_remote(&t, k.rkey, PD, 1, 0, 8, DROCE_ACCESS_REMOTE_ATOMIC, &h),
		     DROCE_MR_OK, "atomic access allowed");
	cr_expect_eq(droce_mr_check_atomic(0, h), DROCE_MR_MISALIGNED,
		     "aligned va 0, host address buf + 4");
	cr_assert_eq(droce_mr_check_remote(&t, k.rkey, PD, 1, 4, 8, DROCE_ACCESS_REMOTE_ATOMIC, &h),
		     DROCE_MR_OK, "atomic access at va 4");
	cr_expect_eq(droce_mr_check_atomic(4, h), DROCE_MR_MISALIGNED,
		     "aligned host address, va misaligned");
}

/* The kernel's ib_uverbs_reg_mr(): an iova keeps its address's offset within a 4 KiB page. */
Test(mr_reg, iova_page_offset, .init = setup, .fini = teardown)
{
	struct droce_mr_keys k;

	cr_expect_eq(droce_mr_reg(&t, PD, buf + 4, 64, 0x2004, 0, 0, &k), 0, "same offset 4");
	cr_expect_eq(droce_mr_reg(&t, PD, buf + 4, 64, 0x2000, 0, 0, &k), -EINVAL,
		     "offset 4 against offset 0");
	cr_expect_eq(droce_mr_reg(&t, PD, buf, 64, 0x2800, 0, 0, &k), -EINVAL,
		     "offset 0 against offset 0x800");
	cr_assert_eq(droce_mr_reg(&t, PD, buf + 4, 64, 0x2000, DROCE_ACCESS_ZERO_BASED, 0, &k), 0,
		     "zero based: any address");
	cr_expect_eq(droce_mr_rereg(&t, k.lkey, DROCE_MR_REREG_TRANSLATION | DROCE_MR_REREG_ACCESS,
				    0, buf + 8, 64, 0x3000, 0, &k),
		     -EINVAL, "rereg to offset 8 against offset 0");
}

/* ------------------------------------------------------------------ concurrency */

/*
 * One writer registers, reregisters and deregisters MRs whose fields all derive from one
 * random number r; a reader looks keys up meanwhile. A torn read (fields of two
 * registrations, or of a half-written one) breaks the pattern; a key whose dereg (or rereg)
 * returned before the reader took it from the dead list must not be found. The table is
 * large enough that no slot is reused while its dead key is on the dead list (FIFO reuse), and
 * a slot's new key always differs from its last one.
 */
#define CC_CAP  65536
#define CC_LIVE 24
#define CC_DEAD 64
#define CC_NS   700000000ull
/* a bound on the run's registrations, so that it ends even on a fast machine */
#define CC_MAX_REGS (128ull * (CC_CAP - CC_LIVE))
/* keys the writer issues, at most (the run stops when the log is full) */
#define CC_MAX_KEYS (4u << 20)
/* dead keys found, at most, kept to be told from keys issued again */
#define CC_MAX_RES 256

static struct droce_mr_table cc;
static uint32_t cc_published[CC_LIVE]; /* keys of live MRs */
static uint32_t cc_dead[CC_DEAD];      /* keys whose dereg or rereg has returned */
static uint32_t cc_cursor;             /* the published key the writer works on */
static int cc_stop;
/*
 * Every rkey the writer issued. Keys are random: a slot's new key differs from its last one,
 * but may equal an older one (probability 2^-15 per key with this table's 17 index bits); a
 * dead key the reader finds is a fault only if the writer never issued it again.
 */
static uint32_t *cc_issued;
static uint32_t cc_nissued;
static uint32_t cc_res[CC_MAX_RES];
static uint32_t cc_nres;

/* Keep dead key @p key the reader found, once. */
static void cc_res_add(uint32_t key)
{
	uint32_t i;

	for (i = 0; i < cc_nres; i++)
		if (cc_res[i] == key)
			return;
	if (cc_nres < CC_MAX_RES)
		cc_res[cc_nres++] = key;
}

/* How many times the writer issued @p key. */
static uint32_t cc_times_issued(uint32_t key)
{
	uint32_t i, n = 0;

	for (i = 0; i < cc_nissued; i++)
		n += cc_issued[i] == key;
	return n;
}

static const uint64_t cc_base = 0x100000000000ull;

static uint64_t cc_addr(uint64_t r)
{
	return cc_base + ((r & 0xfffff) << 12);
}
static uint64_t cc_len(uint64_t r)
{
	return ((r >> 20) & 0xffff) + 1;
}
static uint64_t cc_iova(uint64_t r)
{
	return (r >> 36) << 16;
}
static uint32_t cc_pd(uint64_t r)
{
	return (uint32_t)(r >> 8) & 0xffff;
}
static unsigned int cc_access(uint64_t r)
{
	unsigned int acc =
		(unsigned int)(r >> 60) &
		(DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_WRITE);

	if (acc & DROCE_ACCESS_REMOTE_WRITE)
		acc |= DROCE_ACCESS_LOCAL_WRITE;
	return acc;
}

/* The pattern holds iff every field came from the same r (rebuilt from addr, length, iova). */
static bool cc_consistent(const struct droce_mr_info *i)
{
	uint64_t r =
		((i->addr - cc_base) >> 12) | ((i->length - 1) << 20) | ((i->iova >> 16) << 36);

	return i->type == DROCE_MR_TYPE_MR && i->state == DROCE_MR_STATE_VALID &&
	       cc_addr(r) == i->addr && cc_len(r) == i->length && cc_iova(r) == i->iova &&
	       cc_pd(r) == i->pd && cc_access(r) == i->access;
}

static uint64_t cc_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct cc_counts {
	uint64_t ops, regs, found, dead_tried, torn, resurrected, wrong_key, errors;
};

static void *cc_writer(void *arg)
{
	struct cc_counts *c = arg;
	uint64_t s = 0x2545f4914f6cdd1dull, r;
	struct droce_mr_keys k = {0, 0};
	uint32_t i = 0, d = 0, old;

	while (!__atomic_load_n(&cc_stop, __ATOMIC_RELAXED) && c->regs < CC_MAX_REGS &&
	       cc_nissued < CC_MAX_KEYS) {
		__atomic_store_n(&cc_cursor, i, __ATOMIC_RELAXED);
		old = cc_published[i];
		r = cc_rand(&s);
		if (old != 0 && (r & 3) == 0) {
			/* reregister in place: same slot, new key, new fields */
			if (droce_mr_rereg(&cc, old,
					   DROCE_MR_REREG_TRANSLATION | DROCE_MR_REREG_PD |
						   DROCE_MR_REREG_ACCESS,
					   cc_pd(r), (void *)(uintptr_t)cc_addr(r), cc_len(r),
					   cc_iova(r), cc_access(r), &k) != 0)
				c->errors++;
		} else {
			if (old != 0 && droce_mr_dereg(&cc, old) != 0)
				c->errors++;
			if (droce_mr_reg(&cc, cc_pd(r), (void *)(uintptr_t)cc_addr(r), cc_len(r),
					 cc_iova(r), cc_access(r), 0, &k) != 0)
				c->errors++;
			c->regs++;
		}
		cc_issued[cc_nissued++] = k.rkey;
		__atomic_store_n(&cc_published[i], k.rkey, __ATOMIC_RELAXED);
		if (old != 0) {
			/* published once dereg/rereg returned: pairs with the reader's acquire */
			__atomic_store_n(&cc_dead[d], old, __ATOMIC_RELEASE);
			d = (d + 1) % CC_DEAD;
		}
		c->ops++;
		i = (i + 1) % CC_LIVE;
	}
	return NULL;
}

static void *cc_reader(void *arg)
{
	struct cc_counts *c = arg;
	uint64_t s = 0x9e3779b97f4a7c15ull, r;
	struct droce_mr_info info;
	uint32_t key;
	bool dead;

	while (!__atomic_load_n(&cc_stop, __ATOMIC_RELAXED)) {
		r = cc_rand(&s);
		dead = (r & 3) == 0;
		if (dead)
			key = __atomic_load_n(&cc_dead[(r >> 8) % CC_DEAD], __ATOMIC_ACQUIRE);
		else if ((r & 3) == 1)
			key = droce_mr_key_make(&cc, 1 + (uint32_t)((r >> 8) % CC_CAP),
						(uint8_t)(r >> 40));
		else
			key = __atomic_load_n(&cc_published[(r >> 8) % CC_LIVE], __ATOMIC_RELAXED);
		if (key == 0)
			continue;
		c->ops++;
		c->dead_tried += dead;
		if (droce_mr_lookup(&cc, key, &info) != DROCE_MR_OK)
			continue;
		c->found++;
		if (dead)
			cc_res_add(key);
		c->resurrected += dead;
		c->wrong_key += info.key != key;
		c->torn += !cc_consistent(&info);
	}
	return NULL;
}

Test(mr_concurrency, reader_never_sees_torn_or_dead_entries)
{
	struct cc_counts w = {0}, rd = {0};
	pthread_t tw, tr;
	uint32_t i, once = 0;
	uint64_t t0;

	cc_issued = malloc(CC_MAX_KEYS * sizeof(*cc_issued));
	cr_assert_not_null(cc_issued, "key log");
	cr_assert_eq(droce_mr_table_init(&cc, CC_CAP, NULL), 0, "table");
	cr_assert_eq(pthread_create(&tr, NULL, cc_reader, &rd), 0, "reader thread");
	cr_assert_eq(pthread_create(&tw, NULL, cc_writer, &w), 0, "writer thread");
	t0 = now_ns();
	while (now_ns() - t0 < CC_NS) {
		struct timespec ts = {0, 10000000};

		nanosleep(&ts, NULL);
	}
	__atomic_store_n(&cc_stop, 1, __ATOMIC_RELAXED);
	pthread_join(tw, NULL);
	pthread_join(tr, NULL);

	cr_log_info("writer ops %" PRIu64 ", reader lookups %" PRIu64 ", found %" PRIu64
		    ", dead keys tried %" PRIu64,
		    w.ops, rd.ops, rd.found, rd.dead_tried);
	cr_expect_eq(w.errors, 0, "writer operations failed");
	cr_expect_gt(w.ops, 10000, "the writer ran (%" PRIu64 " operations)", w.ops);
	cr_expect_gt(rd.found, 1000, "the reader found live keys (%" PRIu64 ")", rd.found);
	cr_expect_gt(rd.dead_tried, 1000, "the reader tried dead keys (%" PRIu64 ")",
		     rd.dead_tried);
	cr_expect_eq(rd.torn, 0, "%" PRIu64 " inconsistent entries seen", rd.torn);
	cr_expect_eq(rd.wrong_key, 0, "%" PRIu64 " entries with another key", rd.wrong_key);
	/* a dead key found is one issued again later, never one issued once */
	cr_expect_lt(cc_nres, CC_MAX_RES, "%u dead keys found", cc_nres);
	for (i = 0; i < cc_nres; i++)
		once += cc_times_issued(cc_res[i]) < 2;
	cr_expect_eq(once, 0,
		     "%u keys found after their dereg returned (%u dead keys found, all issued "
		     "again but these)",
		     once, cc_nres);
	cr_log_info("%u dead keys found live again after a new registration drew them", cc_nres);
	droce_mr_table_fini(&cc);
	free(cc_issued);
}
