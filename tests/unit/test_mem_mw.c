/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/mem memory windows and invalidation: allocation, type-1 and type-2 binds with each IBA
 * check (C10-72..75, o10-36.2.2, o10-37.2.26/.30/.40), remote checks through windows, type-2
 * QP ownership, Local Invalidate and Send with Invalidate of windows and MRs, MRs that cannot
 * go while windows are bound (IBA 10.6.7.2.6), and binds racing a reader.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "droce_mr.h"

#define CAP  16
#define PD   5
#define QPN  0x11
#define MRVA 0x40400ull /* iova of the MR windows are bound to (offset of buf + 1024) */
#define MRLN 8192ull

static struct droce_mr_table t;
static uint8_t buf[16384] __attribute__((aligned(4096)));

static const unsigned int RR = DROCE_ACCESS_REMOTE_READ;
static const unsigned int RW = DROCE_ACCESS_REMOTE_WRITE;
static const unsigned int RA = DROCE_ACCESS_REMOTE_ATOMIC;
static const unsigned int LW = DROCE_ACCESS_LOCAL_WRITE;
static const unsigned int BIND = DROCE_ACCESS_MW_BIND;

static void setup(void)
{
	cr_assert_eq(droce_mr_table_init(&t, CAP, NULL), 0, "table of %d entries", CAP);
}

static void teardown(void)
{
	droce_mr_table_fini(&t);
}

TestSuite(mw_alloc, .init = setup, .fini = teardown);
TestSuite(mw_bind1, .init = setup, .fini = teardown);
TestSuite(mw_bind2, .init = setup, .fini = teardown);
TestSuite(mw_check, .init = setup, .fini = teardown);
TestSuite(mw_invalidate, .init = setup, .fini = teardown);
TestSuite(mr_invalidate, .init = setup, .fini = teardown);
TestSuite(mr_with_windows, .init = setup, .fini = teardown);

/* The MR windows are bound to: buf + 1024, iova MRVA, MRLN bytes. */
static uint32_t mr_ok(uint32_t pd, unsigned int access, unsigned int flags)
{
	struct droce_mr_keys k;

	cr_assert_eq(droce_mr_reg(&t, pd, buf + 1024, MRLN, MRVA, access, flags, &k), 0,
		     "reg MR access 0x%x", access);
	return k.rkey; /* the key windows and remote checks name; reg, dereg, bind take it too */
}

/* The lkey of the MR whose rkey is @p mr. */
static uint32_t mr_lkey(uint32_t mr)
{
	struct droce_mr_info i;

	cr_assert_eq(droce_mr_query(&t, mr, &i), 0, "query MR 0x%x", mr);
	return i.lkey;
}

static uint32_t mw_ok(uint32_t pd, enum droce_mw_type type)
{
	uint32_t h = 0;

	cr_assert_eq(droce_mw_alloc(&t, pd, type, &h), 0, "alloc type-%d window", (int)type);
	return h;
}

static struct droce_mw_bind_info bi(uint32_t mr, uint64_t addr, uint64_t len, unsigned int acc)
{
	struct droce_mw_bind_info b = {.mr_lkey = mr, .addr = addr, .length = len, .access = acc};

	return b;
}

static uint32_t bind1_ok(uint32_t h, uint32_t mr, uint64_t addr, uint64_t len, unsigned int acc)
{
	struct droce_mw_bind_info b = bi(mr, addr, len, acc);
	uint32_t rkey = 0;

	cr_assert_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), 0, "type-1 bind");
	return rkey;
}

static uint32_t bind2_ok(uint32_t h, uint8_t byte, uint32_t mr, uint64_t addr, uint64_t len,
			 unsigned int acc)
{
	struct droce_mw_bind_info b = bi(mr, addr, len, acc);
	uint32_t rkey = droce_mr_key_with_byte(h, byte);

	cr_assert_eq(droce_mw_bind_type2(&t, h, PD, QPN, rkey, &b), 0, "type-2 bind");
	return rkey;
}

static uint32_t bound_mws(uint32_t mr)
{
	struct droce_mr_info i;

	cr_assert_eq(droce_mr_query(&t, mr, &i), 0, "query MR 0x%08x", mr);
	return i.bound_mws;
}

/* ------------------------------------------------------------------ alloc / dealloc */

Test(mw_alloc, both_types_unbound)
{
	uint32_t h1 = mw_ok(PD, DROCE_MW_TYPE_1), h2 = mw_ok(PD, DROCE_MW_TYPE_2);
	struct droce_mr_info i;
	void *p;

	cr_assert_eq(droce_mr_query(&t, h1, &i), 0, "query type 1");
	cr_expect_eq(i.type, DROCE_MR_TYPE_MW1, "type 1");
	cr_expect_eq(i.state, DROCE_MR_STATE_INVALID, "type 1 unbound");
	cr_expect_eq(i.pd, PD, "pd");
	cr_assert_eq(droce_mr_query(&t, h2, &i), 0, "query type 2");
	cr_expect_eq(i.type, DROCE_MR_TYPE_MW2, "type 2");
	cr_expect_eq(i.state, DROCE_MR_STATE_INVALID, "type 2 free (unbound)");
	cr_expect_neq(droce_mr_key_index(&t, h1), droce_mr_key_index(&t, h2), "two slots");
	cr_expect_eq(droce_mr_check_remote(&t, h1, PD, QPN, 0, 8, RR, &p), DROCE_MR_BAD_KEY,
		     "unbound type-1 window refused");
	cr_expect_eq(droce_mr_check_remote(&t, h2, PD, QPN, 0, 8, RR, &p), DROCE_MR_BAD_KEY,
		     "unbound type-2 window refused");
}

Test(mw_alloc, bad_type)
{
	uint32_t h;

	cr_expect_eq(droce_mw_alloc(&t, PD, (enum droce_mw_type)0, &h), -EINVAL, "type 0");
	cr_expect_eq(droce_mw_alloc(&t, PD, (enum droce_mw_type)3, &h), -EINVAL, "type 3");
	cr_expect_eq(droce_mr_table_used(&t), 0, "nothing allocated");
}

Test(mw_alloc, table_shared_with_mrs)
{
	struct droce_mr_keys k;
	uint32_t h;
	int i;

	for (i = 0; i < CAP / 2; i++)
		mr_ok(PD, 0, 0);
	for (i = 0; i < CAP / 2; i++)
		mw_ok(PD, i % 2 ? DROCE_MW_TYPE_2 : DROCE_MW_TYPE_1);
	cr_expect_eq(droce_mw_alloc(&t, PD, DROCE_MW_TYPE_1, &h), -ENOMEM, "no slot for a window");
	cr_expect_eq(droce_mr_reg(&t, PD, buf, 64, 0x1000, 0, 0, &k), -ENOMEM, "nor for an MR");
}

Test(mw_alloc, dealloc)
{
	uint32_t h = mw_ok(PD, DROCE_MW_TYPE_2);

	cr_expect_eq(droce_mw_dealloc(&t, h), 0, "dealloc");
	cr_expect_eq(droce_mr_table_used(&t), 0, "slot free");
	cr_expect_eq(droce_mw_dealloc(&t, h), -EINVAL, "twice");
}

Test(mw_alloc, dealloc_refuses_non_windows)
{
	uint32_t mr = mr_ok(PD, 0, 0);

	cr_expect_eq(droce_mw_dealloc(&t, mr), -EINVAL, "an MR key");
	cr_expect_eq(droce_mw_dealloc(&t, 0), -EINVAL, "key 0");
	cr_expect_eq(droce_mw_dealloc(&t, UINT32_MAX), -EINVAL, "beyond the table");
	cr_expect_eq(droce_mw_dealloc(&t, droce_mr_key_make(&t, CAP, 0)), -EINVAL, "free slot");
}

/* A window is named by its allocation key: after dealloc, the handle names nothing. */
Test(mw_alloc, stale_handle_refused)
{
	struct droce_mr_table x;
	uint32_t h1, h2;

	cr_assert_eq(droce_mr_table_init(&x, 1, NULL), 0, "one-entry table");
	cr_assert_eq(droce_mw_alloc(&x, PD, DROCE_MW_TYPE_1, &h1), 0, "alloc 1");
	cr_assert_eq(droce_mw_dealloc(&x, h1), 0, "dealloc 1");
	cr_assert_eq(droce_mw_alloc(&x, PD, DROCE_MW_TYPE_1, &h2), 0, "alloc 2, same slot");
	cr_expect_neq(h1, h2, "a new handle");
	cr_expect_eq(droce_mw_dealloc(&x, h1), -EINVAL, "the stale handle names nothing");
	cr_expect_eq(droce_mw_dealloc(&x, h2), 0, "the new one works");
	droce_mr_table_fini(&x);
}

Test(mw_alloc, dealloc_bound_window_releases_mr)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	uint32_t rkey = bind1_ok(h, mr, MRVA, 64, RR);
	void *p;

	cr_expect_eq(bound_mws(mr), 1, "one window bound");
	cr_expect_eq(droce_mw_dealloc(&t, h), 0, "dealloc a bound window");
	cr_expect_eq(bound_mws(mr), 0, "unbound by dealloc");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA, 8, RR, &p), DROCE_MR_BAD_KEY,
		     "its rkey is gone");
	cr_expect_eq(droce_mr_dereg(&t, mr), 0, "the MR can go");
}

/* ------------------------------------------------------------------ type-1 bind */

Test(mw_bind1, bind_and_use)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	uint32_t rkey = bind1_ok(h, mr, MRVA + 256, 512, RR | RW);
	struct droce_mr_info i;
	void *p = NULL;

	cr_expect_eq(droce_mr_key_index(&t, rkey), droce_mr_key_index(&t, h), "the window's index");
	cr_expect_neq(rkey, h, "a new key");
	cr_assert_eq(droce_mr_query(&t, rkey, &i), 0, "query the bound window");
	cr_expect_eq(i.state, DROCE_MR_STATE_VALID, "bound");
	cr_expect_eq(i.iova, MRVA + 256, "window iova");
	cr_expect_eq(i.length, 512, "window length");
	cr_expect_eq(i.addr, (uint64_t)(uintptr_t)(buf + 1024 + 256), "window host address");
	cr_expect_eq(i.access, RR | RW, "window access");
	cr_expect_eq(i.mr_key, mr, "bound MR");
	cr_expect_eq(bound_mws(mr), 1, "the MR counts it");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA + 300, 16, RW, &p), DROCE_MR_OK,
		     "remote write through the window");
	cr_expect_eq(p, (void *)(buf + 1024 + 300), "host pointer");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, 0x999, MRVA + 300, 16, RR, &p),
		     DROCE_MR_OK, "a type-1 window is not tied to a QP");
}

Test(mw_bind1, new_key_every_bind)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	uint32_t k1 = bind1_ok(h, mr, MRVA, 64, RR);
	uint32_t k2 = bind1_ok(h, mr, MRVA + 64, 64, RR);
	void *p;

	cr_expect_eq(k1, droce_mr_key_with_byte(h, droce_mr_key_byte(h) + 1),
		     "first bind: the allocation key's byte + 1 (ibv_inc_rkey)");
	cr_expect_eq(k2, droce_mr_key_with_byte(h, droce_mr_key_byte(k1) + 1),
		     "rebind: byte + 1 again");
	cr_expect_eq(droce_mr_check_remote(&t, k1, PD, QPN, MRVA, 8, RR, &p), DROCE_MR_BAD_KEY,
		     "the previous rkey stops working");
	cr_expect_eq(droce_mr_check_remote(&t, k2, PD, QPN, MRVA + 64, 8, RR, &p), DROCE_MR_OK,
		     "the new rkey works");
	cr_expect_eq(droce_mr_check_remote(&t, k2, PD, QPN, MRVA, 8, RR, &p),
		     DROCE_MR_OUT_OF_BOUNDS, "with the new range only");
	cr_expect_eq(bound_mws(mr), 1, "a rebind replaces the binding");
}

Test(mw_bind1, rebind_to_another_mr)
{
	uint32_t a = mr_ok(PD, LW | BIND, 0), b = mr_ok(PD, LW | BIND, 0);
	uint32_t h = mw_ok(PD, DROCE_MW_TYPE_1);

	bind1_ok(h, a, MRVA, 64, RR);
	bind1_ok(h, b, MRVA, 64, RR);
	cr_expect_eq(bound_mws(a), 0, "the first MR is released");
	cr_expect_eq(bound_mws(b), 1, "the second MR holds it");
}

Test(mw_bind1, zero_length_unbinds)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	uint32_t k1 = bind1_ok(h, mr, MRVA, 64, RR);
	struct droce_mw_bind_info b = bi(0, 0, 0, 0);
	struct droce_mr_info i;
	uint32_t k2 = 0;
	void *p;

	cr_assert_eq(droce_mw_bind_type1(&t, h, PD, &b, &k2), 0, "bind with length 0, no MR");
	cr_expect_neq(k2, k1, "the key still advances");
	cr_expect_eq(droce_mr_check_remote(&t, k1, PD, QPN, MRVA, 8, RR, &p), DROCE_MR_BAD_KEY,
		     "old rkey refused");
	cr_expect_eq(droce_mr_check_remote(&t, k2, PD, QPN, MRVA, 8, RR, &p), DROCE_MR_BAD_KEY,
		     "an unbound window's key is refused too");
	cr_expect_eq(bound_mws(mr), 0, "the MR is released");
	cr_assert_eq(droce_mr_query(&t, k2, &i), 0, "query");
	cr_expect_eq(i.state, DROCE_MR_STATE_INVALID, "unbound");
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD + 1, &b, &k2), -EPERM,
		     "unbinding from a QP of another PD");
}

Test(mw_bind1, refused_arguments)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	uint32_t h2 = mw_ok(PD, DROCE_MW_TYPE_2), rkey;
	struct droce_mw_bind_info b;

	b = bi(mr, MRVA, 64, RR | DROCE_ACCESS_ZERO_BASED);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -EINVAL,
		     "zero-based type-1 window (o10-36.2.2)");
	b = bi(mr, MRVA, 64, RR | BIND);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -EINVAL, "MW_BIND on a window");
	b = bi(mr, MRVA, 64, RR | 0x40);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -EINVAL, "unknown access bit");
	b = bi(mr, MRVA, 64, RR);
	cr_expect_eq(droce_mw_bind_type1(&t, h2, PD, &b, &rkey), -EINVAL,
		     "a type-2 window through the type-1 call");
	cr_expect_eq(droce_mw_bind_type1(&t, mr, PD, &b, &rkey), -EINVAL, "an MR as the window");
	b = bi(mr ^ 1, MRVA, 64, RR);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -EINVAL, "stale MR key");
	b = bi(h2, MRVA, 64, RR);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -EINVAL, "a window as the MR");
	cr_expect_eq(bound_mws(mr), 0, "nothing bound");
}

Test(mw_bind1, local_write_dropped)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	uint32_t rkey = bind1_ok(h, mr, MRVA, 64, RR | LW);
	struct droce_mr_info i;

	cr_assert_eq(droce_mr_query(&t, rkey, &i), 0, "query");
	cr_expect_eq(i.access, RR, "LOCAL_WRITE means nothing for a window");
}

/* C10-72: QP, window and MR share one PD. */
Test(mw_bind1, pd_mismatch)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), other = mr_ok(PD + 1, LW | BIND, 0);
	uint32_t h = mw_ok(PD, DROCE_MW_TYPE_1), rkey;
	struct droce_mw_bind_info b = bi(mr, MRVA, 64, RR);

	cr_expect_eq(droce_mw_bind_type1(&t, h, PD + 1, &b, &rkey), -EPERM,
		     "QP of another PD than the window");
	b = bi(other, MRVA, 64, RR);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -EPERM, "MR of another PD");
}

/* C10-73: the MR must allow binding. */
Test(mw_bind1, mr_without_bind_right)
{
	uint32_t mr = mr_ok(PD, LW | RR, 0), h = mw_ok(PD, DROCE_MW_TYPE_1), rkey;
	struct droce_mw_bind_info b = bi(mr, MRVA, 64, RR);

	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -EACCES, "no MW_BIND on the MR");
}

/* C10-74: remote write or atomic on the window need local write on the MR; read does not. */
Test(mw_bind1, writable_window_needs_local_write)
{
	uint32_t mr = mr_ok(PD, BIND | RR, 0), h = mw_ok(PD, DROCE_MW_TYPE_1), rkey;
	struct droce_mw_bind_info b;

	b = bi(mr, MRVA, 64, RW);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -EACCES, "remote write");
	b = bi(mr, MRVA, 64, RA);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -EACCES, "remote atomic");
	b = bi(mr, MRVA, 64, RR);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), 0, "remote read is fine");
}

/* A window's rights are its own: the MR needs no remote right of its own. */
Test(mw_bind1, window_rights_independent_of_mr_remote_rights)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	uint32_t rkey = bind1_ok(h, mr, MRVA, 64, RW | RA);
	void *p;

	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA, 8, RW, &p), DROCE_MR_OK,
		     "remote write through the window");
	cr_expect_eq(droce_mr_check_remote(&t, mr, PD, QPN, MRVA, 8, RW, &p), DROCE_MR_NO_ACCESS,
		     "but not through the MR's own key");
}

/* C10-75: the window lies inside the MR; exact edges are inside. */
Test(mw_bind1, window_inside_mr)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1), rkey;
	struct droce_mw_bind_info b;

	b = bi(mr, MRVA, MRLN, RR);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), 0, "the whole MR");
	b = bi(mr, MRVA + MRLN - 1, 1, RR);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), 0, "the last byte");
	b = bi(mr, MRVA - 1, 2, RR);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -ERANGE, "starts before the MR");
	b = bi(mr, MRVA + MRLN - 1, 2, RR);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -ERANGE, "ends past the MR");
	b = bi(mr, MRVA, MRLN + 1, RR);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -ERANGE, "longer than the MR");
	b = bi(mr, MRVA + 8, UINT64_MAX - 4, RR);
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -ERANGE, "addr + length wraps");
}

Test(mw_bind1, failed_bind_changes_nothing)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	uint32_t rkey = bind1_ok(h, mr, MRVA, 64, RR), again;
	struct droce_mw_bind_info b = bi(mr, MRVA, MRLN * 2, RR);
	void *p;

	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &again), -ERANGE, "refused rebind");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA, 8, RR, &p), DROCE_MR_OK,
		     "the previous binding and key still work");
	cr_expect_eq(bound_mws(mr), 1, "still bound");
}

Test(mw_bind1, invalidated_mr_cannot_be_bound)
{
	uint32_t mr = mr_ok(PD, LW | BIND, DROCE_MR_REG_INVALIDATE), h = mw_ok(PD, DROCE_MW_TYPE_1);
	struct droce_mw_bind_info b = bi(mr, MRVA, 64, RR);
	uint32_t rkey;

	cr_assert_eq(droce_mr_invalidate_local(&t, mr, PD), 0, "invalidate the MR");
	cr_expect_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), -EINVAL, "bind to it");
}

/* Windows on a zero-based MR: the bind address is in the MR's iova space, from 0. */
Test(mw_bind1, on_zero_based_mr)
{
	struct droce_mr_keys k;
	uint32_t h = mw_ok(PD, DROCE_MW_TYPE_1), rkey;
	void *p = NULL;

	cr_assert_eq(droce_mr_reg(&t, PD, buf + 512, 4096, 0, LW | BIND | DROCE_ACCESS_ZERO_BASED,
				  0, &k),
		     0, "zero-based MR");
	rkey = bind1_ok(h, k.lkey, 0x10, 0x20, RR);
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, 0x10, 0x20, RR, &p), DROCE_MR_OK,
		     "the whole window");
	cr_expect_eq(p, (void *)(buf + 512 + 0x10), "host pointer");
}

/* ------------------------------------------------------------------ type-2 bind */

Test(mw_bind2, consumer_key_and_qp)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t rkey = bind2_ok(h, 0x5a, mr, MRVA + 128, 256, RR | RW);
	struct droce_mr_info i;
	void *p = NULL;

	cr_expect_eq(droce_mr_key_byte(rkey), 0x5a, "the consumer's byte");
	cr_assert_eq(droce_mr_query(&t, rkey, &i), 0, "query");
	cr_expect_eq(i.qpn, QPN, "bound to the QP that posted the bind");
	cr_expect_eq(i.iova, MRVA + 128, "window iova");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA + 128, 256, RW, &p), DROCE_MR_OK,
		     "through its QP");
	cr_expect_eq(p, (void *)(buf + 1024 + 128), "host pointer");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN + 1, MRVA + 128, 8, RW, &p),
		     DROCE_MR_BAD_QP, "through another QP of the same PD");
	cr_expect_eq(bound_mws(mr), 1, "the MR counts it");
}

Test(mw_bind2, refused_arguments)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t h1 = mw_ok(PD, DROCE_MW_TYPE_1);
	uint32_t key = droce_mr_key_with_byte(h, 0x33);
	struct droce_mw_bind_info b = bi(mr, MRVA, 64, RR);

	cr_expect_eq(droce_mw_bind_type2(&t, h, PD, QPN, droce_mr_key_make(&t, CAP, 0x33), &b),
		     -EINVAL, "rkey with another index");
	cr_expect_eq(droce_mw_bind_type2(&t, h1, PD, QPN, droce_mr_key_with_byte(h1, 1), &b),
		     -EINVAL, "a type-1 window through the type-2 call");
	b = bi(mr, MRVA, 0, RR);
	cr_expect_eq(droce_mw_bind_type2(&t, h, PD, QPN, key, &b), -EINVAL,
		     "zero length (o10-37.2.40)");
	b = bi(mr, MRVA, 64, RR | 0x100);
	cr_expect_eq(droce_mw_bind_type2(&t, h, PD, QPN, key, &b), -EINVAL, "unknown access bit");
	b = bi(mr + 1, MRVA, 64, RR);
	cr_expect_eq(droce_mw_bind_type2(&t, h, PD, QPN, key, &b), -EINVAL, "stale MR key");
	b = bi(mr, MRVA, 64, RR);
	cr_expect_eq(droce_mw_bind_type2(&t, h, PD + 1, QPN, key, &b), -EPERM,
		     "QP of another PD (C10-72)");
	cr_expect_eq(bound_mws(mr), 0, "nothing bound");
}

Test(mw_bind2, same_checks_as_type1)
{
	uint32_t ro = mr_ok(PD, BIND, 0), nobind = mr_ok(PD, LW, 0);
	uint32_t h = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t key = droce_mr_key_with_byte(h, 0x44);
	struct droce_mw_bind_info b;

	b = bi(nobind, MRVA, 64, RR);
	cr_expect_eq(droce_mw_bind_type2(&t, h, PD, QPN, key, &b), -EACCES, "no MW_BIND (C10-73)");
	b = bi(ro, MRVA, 64, RW);
	cr_expect_eq(droce_mw_bind_type2(&t, h, PD, QPN, key, &b), -EACCES,
		     "writable window on an MR without local write (C10-74)");
	b = bi(ro, MRVA + MRLN, 1, RR);
	cr_expect_eq(droce_mw_bind_type2(&t, h, PD, QPN, key, &b), -ERANGE,
		     "outside the MR (C10-75)");
}

/* o10-37.2.30: a bound type-2 window must be invalidated before it is bound again. */
Test(mw_bind2, bound_window_busy)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t rkey = bind2_ok(h, 1, mr, MRVA, 64, RR);
	struct droce_mw_bind_info b = bi(mr, MRVA + 64, 64, RR);
	void *p;

	cr_expect_eq(droce_mw_bind_type2(&t, h, PD, QPN, rkey + 1, &b), -EBUSY,
		     "rebind while bound");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA, 8, RR, &p), DROCE_MR_OK,
		     "the binding stays");
	cr_assert_eq(droce_mr_invalidate_local(&t, rkey, PD), 0, "invalidate");
	cr_expect_eq(droce_mw_bind_type2(&t, h, PD, QPN, rkey + 1, &b), 0, "then bind again");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA, 8, RR, &p), DROCE_MR_BAD_KEY,
		     "old key refused");
	cr_expect_eq(droce_mr_check_remote(&t, rkey + 1, PD, QPN, MRVA + 64, 8, RR, &p),
		     DROCE_MR_OK, "new key works");
	cr_expect_eq(bound_mws(mr), 1, "one binding counted");
}

Test(mw_bind2, zero_based_window)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t rkey = bind2_ok(h, 9, mr, MRVA + 4096, 128, RR | DROCE_ACCESS_ZERO_BASED);
	struct droce_mr_info i;
	void *p = NULL;

	cr_assert_eq(droce_mr_query(&t, rkey, &i), 0, "query");
	cr_expect_eq(i.iova, 0, "a zero-based window starts at 0");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, 0, 128, RR, &p), DROCE_MR_OK,
		     "the whole window from 0");
	cr_expect_eq(p, (void *)(buf + 1024 + 4096), "maps to the bind address");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, 127, 1, RR, &p), DROCE_MR_OK,
		     "last byte");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, 128, 1, RR, &p),
		     DROCE_MR_OUT_OF_BOUNDS, "one past the end");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA + 4096, 1, RR, &p),
		     DROCE_MR_OUT_OF_BOUNDS, "the MR's iova is not the window's");
}

/* ------------------------------------------------------------------ checks through windows */

Test(mw_check, statuses)
{
	uint32_t mr = mr_ok(PD, LW | BIND | RR | RW, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	uint32_t rkey = bind1_ok(h, mr, MRVA + 1000, 100, RR);
	void *p = NULL;

	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA + 1000, 100, RR, &p),
		     DROCE_MR_OK, "the whole window");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD + 1, QPN, MRVA + 1000, 8, RR, &p),
		     DROCE_MR_BAD_PD, "QP of another PD");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA + 1000, 8, RW, &p),
		     DROCE_MR_NO_ACCESS, "write through a read window of a writable MR");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA + 1096, 4, RR, &p), DROCE_MR_OK,
		     "va + len == window end");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA + 1097, 4, RR, &p),
		     DROCE_MR_OUT_OF_BOUNDS, "one byte past the window, inside the MR");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA + 999, 4, RR, &p),
		     DROCE_MR_OUT_OF_BOUNDS, "one byte before the window, inside the MR");
	cr_expect_eq(droce_mr_check_remote(&t, rkey ^ 0x40, PD, QPN, MRVA + 1000, 8, RR, &p),
		     DROCE_MR_BAD_KEY, "wrong key byte");
}

Test(mw_check, window_key_is_not_an_lkey)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t rkey = bind2_ok(h, 3, mr, MRVA, 64, RR | RW);
	void *p;

	cr_expect_eq(droce_mr_check_local(&t, rkey, PD, MRVA, 8, 0, &p), DROCE_MR_BAD_KEY,
		     "a window key in a scatter/gather element");
	cr_expect_eq(droce_mr_check_local(&t, mr_lkey(mr), PD, MRVA, 8, LW, &p), DROCE_MR_OK,
		     "the MR's own lkey still works");
}

Test(mw_check, lookup_of_a_window)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t rkey = bind2_ok(h, 0x77, mr, MRVA, 64, RR);
	struct droce_mr_info i;

	cr_expect_eq(droce_mr_lookup(&t, rkey, &i), DROCE_MR_OK, "lookup");
	cr_expect_eq(i.type, DROCE_MR_TYPE_MW2, "type 2");
	cr_expect_eq(i.qpn, QPN, "qpn");
	cr_expect_eq(i.mr_key, mr, "bound MR");
	cr_expect_eq(droce_mr_lookup(&t, h, &i), DROCE_MR_BAD_KEY, "the allocation key");
}

/* ------------------------------------------------------------------ window invalidation */

Test(mw_invalidate, local_type2)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t rkey = bind2_ok(h, 0x10, mr, MRVA, 64, RR);
	struct droce_mr_info i;
	void *p;

	cr_expect_eq(droce_mr_invalidate_local(&t, rkey, PD), 0, "Local Invalidate");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA, 8, RR, &p), DROCE_MR_BAD_KEY,
		     "key refused after");
	cr_expect_eq(bound_mws(mr), 0, "the MR is released");
	cr_assert_eq(droce_mr_query(&t, rkey, &i), 0, "query");
	cr_expect_eq(i.state, DROCE_MR_STATE_INVALID, "free again");
	cr_expect_eq(droce_mr_invalidate_local(&t, rkey, PD), -EINVAL, "twice");
}

Test(mw_invalidate, local_from_another_pd)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t rkey = bind2_ok(h, 0x10, mr, MRVA, 64, RR);
	void *p;

	cr_expect_eq(droce_mr_invalidate_local(&t, rkey, PD + 1), -EPERM, "another PD");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA, 8, RR, &p), DROCE_MR_OK,
		     "still bound");
}

/* o10-37.2.26: type-1 windows are not invalidated, locally or remotely. */
Test(mw_invalidate, type1_refused)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	uint32_t rkey = bind1_ok(h, mr, MRVA, 64, RR);
	void *p;

	cr_expect_eq(droce_mr_invalidate_local(&t, rkey, PD), -EINVAL, "Local Invalidate");
	cr_expect_eq(droce_mr_invalidate_remote(&t, rkey, PD, QPN), -EINVAL,
		     "Send with Invalidate");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA, 8, RR, &p), DROCE_MR_OK,
		     "still bound");
}

Test(mw_invalidate, remote_type2_only_from_its_qp)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t rkey = bind2_ok(h, 0x20, mr, MRVA, 64, RR);
	void *p;

	cr_expect_eq(droce_mr_invalidate_remote(&t, rkey, PD, QPN + 1), -EPERM,
		     "Send with Invalidate on another QP");
	cr_expect_eq(droce_mr_invalidate_remote(&t, rkey, PD + 1, QPN), -EPERM,
		     "on a QP of another PD");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA, 8, RR, &p), DROCE_MR_OK,
		     "still bound");
	cr_expect_eq(droce_mr_invalidate_remote(&t, rkey, PD, QPN), 0, "on its QP");
	cr_expect_eq(droce_mr_check_remote(&t, rkey, PD, QPN, MRVA, 8, RR, &p), DROCE_MR_BAD_KEY,
		     "gone");
}

Test(mw_invalidate, unknown_keys)
{
	uint32_t h = mw_ok(PD, DROCE_MW_TYPE_2);

	cr_expect_eq(droce_mr_invalidate_local(&t, h, PD), -EINVAL, "an unbound window");
	cr_expect_eq(droce_mr_invalidate_local(&t, 0, PD), -EINVAL, "key 0");
	cr_expect_eq(droce_mr_invalidate_remote(&t, UINT32_MAX, PD, QPN), -EINVAL,
		     "beyond the table");
}

/* ------------------------------------------------------------------ MR invalidation */

Test(mr_invalidate, local_then_rereg)
{
	uint32_t mr = mr_ok(PD, LW, DROCE_MR_REG_INVALIDATE), lkey = mr_lkey(mr);
	struct droce_mr_keys k;
	struct droce_mr_info i;
	void *p;

	cr_expect_eq(droce_mr_check_local(&t, lkey, PD, MRVA, 8, 0, &p), DROCE_MR_OK, "valid");
	cr_expect_eq(droce_mr_invalidate_local(&t, mr, PD), 0, "Local Invalidate");
	cr_expect_eq(droce_mr_check_local(&t, lkey, PD, MRVA, 8, 0, &p), DROCE_MR_BAD_KEY,
		     "lkey refused after");
	cr_assert_eq(droce_mr_query(&t, mr, &i), 0, "still registered");
	cr_expect_eq(i.state, DROCE_MR_STATE_INVALID, "invalid");
	cr_expect_eq(droce_mr_invalidate_local(&t, mr, PD), -EINVAL, "twice");
	cr_assert_eq(droce_mr_rereg(&t, mr, DROCE_MR_REREG_ACCESS, 0, NULL, 0, 0, LW, &k), 0,
		     "rereg revalidates");
	cr_expect_neq(k.rkey, mr, "with a new rkey: the invalidated one stays dead");
	cr_expect_neq(k.lkey, lkey, "with a new lkey");
	cr_expect_eq(droce_mr_check_local(&t, lkey, PD, MRVA, 8, 0, &p), DROCE_MR_BAD_KEY,
		     "the old lkey still refused");
	cr_expect_eq(droce_mr_check_local(&t, k.lkey, PD, MRVA, 8, 0, &p), DROCE_MR_OK, "usable");
}

Test(mr_invalidate, dereg_of_invalidated_mr)
{
	uint32_t mr = mr_ok(PD, LW, DROCE_MR_REG_INVALIDATE);

	cr_assert_eq(droce_mr_invalidate_local(&t, mr, PD), 0, "invalidate");
	cr_expect_eq(droce_mr_dereg(&t, mr), 0, "dereg an invalidated MR");
	cr_expect_eq(droce_mr_table_used(&t), 0, "slot free");
}

Test(mr_invalidate, remote)
{
	uint32_t mr = mr_ok(PD, LW | RW, DROCE_MR_REG_INVALIDATE);
	void *p;

	cr_expect_eq(droce_mr_invalidate_remote(&t, mr, PD + 1, QPN), -EPERM, "QP of another PD");
	cr_expect_eq(droce_mr_invalidate_remote(&t, mr, PD, QPN), 0, "Send with Invalidate");
	cr_expect_eq(droce_mr_check_remote(&t, mr, PD, QPN, MRVA, 8, RW, &p), DROCE_MR_BAD_KEY,
		     "rkey refused after");
}

Test(mr_invalidate, not_invalidatable)
{
	uint32_t mr = mr_ok(PD, LW | RW, 0);
	void *p;

	cr_expect_eq(droce_mr_invalidate_local(&t, mr, PD), -EACCES, "registered without the flag");
	cr_expect_eq(droce_mr_invalidate_remote(&t, mr, PD, QPN), -EACCES, "remotely either");
	cr_expect_eq(droce_mr_check_remote(&t, mr, PD, QPN, MRVA, 8, RW, &p), DROCE_MR_OK,
		     "still valid");
}

Test(mr_invalidate, with_bound_windows)
{
	uint32_t mr = mr_ok(PD, LW | BIND, DROCE_MR_REG_INVALIDATE);
	uint32_t h = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t rkey = bind2_ok(h, 1, mr, MRVA, 64, RR);

	cr_expect_eq(droce_mr_invalidate_local(&t, mr, PD), -EBUSY, "an MR with a bound window");
	cr_assert_eq(droce_mr_invalidate_local(&t, rkey, PD), 0, "invalidate the window");
	cr_expect_eq(droce_mr_invalidate_local(&t, mr, PD), 0, "then the MR");
}

/* ------------------------------------------------------------------ MRs with windows */

/* IBA 10.6.7.2.6: an MR with bound windows cannot be deregistered. */
Test(mr_with_windows, dereg_busy_type1)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	struct droce_mw_bind_info b = bi(0, 0, 0, 0);
	uint32_t rkey;

	bind1_ok(h, mr, MRVA, 64, RR);
	cr_expect_eq(droce_mr_dereg(&t, mr), -EBUSY, "dereg with a bound type-1 window");
	cr_assert_eq(droce_mw_bind_type1(&t, h, PD, &b, &rkey), 0, "unbind");
	cr_expect_eq(droce_mr_dereg(&t, mr), 0, "dereg after unbind");
}

Test(mr_with_windows, dereg_busy_type2)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t rkey = bind2_ok(h, 7, mr, MRVA, 64, RR);

	cr_expect_eq(droce_mr_dereg(&t, mr), -EBUSY, "dereg with a bound type-2 window");
	cr_assert_eq(droce_mr_invalidate_remote(&t, rkey, PD, QPN), 0, "invalidate the window");
	cr_expect_eq(droce_mr_dereg(&t, mr), 0, "dereg after invalidation");
}

Test(mr_with_windows, two_windows_counted)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0);
	uint32_t h1 = mw_ok(PD, DROCE_MW_TYPE_1), h2 = mw_ok(PD, DROCE_MW_TYPE_2);
	uint32_t k2;

	bind1_ok(h1, mr, MRVA, 64, RR);
	k2 = bind2_ok(h2, 2, mr, MRVA, 64, RW);
	cr_expect_eq(bound_mws(mr), 2, "two windows, overlapping, different rights");
	cr_assert_eq(droce_mr_invalidate_local(&t, k2, PD), 0, "invalidate one");
	cr_expect_eq(bound_mws(mr), 1, "one left");
	cr_expect_eq(droce_mr_dereg(&t, mr), -EBUSY, "still busy");
}

Test(mr_with_windows, rereg_busy)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	struct droce_mr_keys k;

	bind1_ok(h, mr, MRVA, 64, RR);
	cr_expect_eq(droce_mr_rereg(&t, mr, DROCE_MR_REREG_ACCESS, 0, NULL, 0, 0, LW, &k), -EBUSY,
		     "rereg with a bound window");
}

/* ------------------------------------------------------------------ concurrency */

/*
 * A writer binds a type-2 window with key byte b over a range and QP derived from b, then
 * invalidates it, in a loop; a reader checks every key byte meanwhile. Whatever the reader
 * finds must carry the range and QP of its own byte: the key and the fields move together.
 */
#define WC_NS 500000000ull

static int wc_stop;
static uint32_t wc_handle, wc_mr;

static uint64_t wc_addr(uint8_t b)
{
	return MRVA + (uint64_t)b * 16;
}
static uint64_t wc_len(uint8_t b)
{
	return 16 + (uint64_t)b;
}
static uint32_t wc_qpn(uint8_t b)
{
	return 0x100 + b;
}

struct wc_counts {
	uint64_t ops, found, torn, errors;
};

static void *wc_writer(void *arg)
{
	struct wc_counts *c = arg;
	struct droce_mw_bind_info b;
	uint32_t key;
	uint8_t byte = 0;

	while (!__atomic_load_n(&wc_stop, __ATOMIC_RELAXED)) {
		byte++;
		key = droce_mr_key_with_byte(wc_handle, byte);
		b = bi(wc_mr, wc_addr(byte), wc_len(byte), RR | RW);
		if (droce_mw_bind_type2(&t, wc_handle, PD, wc_qpn(byte), key, &b) != 0)
			c->errors++;
		if (droce_mr_invalidate_remote(&t, key, PD, wc_qpn(byte)) != 0)
			c->errors++;
		c->ops++;
	}
	return NULL;
}

static void *wc_reader(void *arg)
{
	struct wc_counts *c = arg;
	uint8_t *base = buf + 1024;
	unsigned int b = 0;
	void *p;

	while (!__atomic_load_n(&wc_stop, __ATOMIC_RELAXED)) {
		uint8_t byte = (uint8_t)b++;
		uint32_t key = droce_mr_key_with_byte(wc_handle, byte);

		c->ops++;
		if (droce_mr_check_remote(&t, key, PD, wc_qpn(byte), 0, 0, RR, &p) != DROCE_MR_OK)
			continue;
		/* found: the window must be byte's range, exactly */
		c->found++;
		if (droce_mr_check_remote(&t, key, PD, wc_qpn(byte), wc_addr(byte), wc_len(byte),
					  RW, &p) == DROCE_MR_OK &&
		    p != base + (wc_addr(byte) - MRVA))
			c->torn++;
		{
			struct droce_mr_info i;

			if (droce_mr_lookup(&t, key, &i) == DROCE_MR_OK &&
			    (i.iova != wc_addr(byte) || i.length != wc_len(byte) ||
			     i.qpn != wc_qpn(byte) || i.mr_key != wc_mr ||
			     i.addr != (uint64_t)(uintptr_t)(base + (wc_addr(byte) - MRVA))))
				c->torn++;
		}
	}
	return NULL;
}

Test(mw_concurrency, binds_race_a_reader, .init = setup, .fini = teardown)
{
	struct wc_counts w = {0}, r = {0};
	pthread_t tw, tr;
	struct timespec ts = {0, WC_NS};

	wc_mr = mr_ok(PD, LW | BIND, 0);
	wc_handle = mw_ok(PD, DROCE_MW_TYPE_2);
	cr_assert_eq(pthread_create(&tr, NULL, wc_reader, &r), 0, "reader thread");
	cr_assert_eq(pthread_create(&tw, NULL, wc_writer, &w), 0, "writer thread");
	nanosleep(&ts, NULL);
	__atomic_store_n(&wc_stop, 1, __ATOMIC_RELAXED);
	pthread_join(tw, NULL);
	pthread_join(tr, NULL);

	cr_log_info("binds %" PRIu64 ", reader checks %" PRIu64 ", found bound %" PRIu64, w.ops,
		    r.ops, r.found);
	cr_expect_eq(w.errors, 0, "bind or invalidate failed");
	cr_expect_gt(w.ops, 10000, "the writer ran (%" PRIu64 ")", w.ops);
	cr_expect_gt(r.found, 100, "the reader found bound windows (%" PRIu64 ")", r.found);
	cr_expect_eq(r.torn, 0, "%" PRIu64 " windows with another key's fields", r.torn);
	cr_expect_eq(bound_mws(wc_mr), 0, "every bind was undone");
}

/* ------------------------------------------------------------------ type 1, caller's key */

Test(mw_bind1, key_from_the_caller_is_used)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	struct droce_mw_bind_info b = bi(mr, MRVA, 64, RR);
	/* what ibv_inc_rkey() would have given twice: a bind that was flushed, then this one */
	uint32_t want = droce_mr_key_with_byte(h, (uint8_t)(droce_mr_key_byte(h) + 2));
	struct droce_mr_info i;

	cr_assert_eq(droce_mw_bind_type1_key(&t, h, PD, &b, want), 0);
	cr_assert_eq(droce_mr_query(&t, want, &i), 0, "the window carries the caller's key");
	cr_expect_eq(droce_mr_query(&t, h, &i), -EINVAL, "the old key is gone");
}

Test(mw_bind1, key_of_another_index_refused)
{
	uint32_t mr = mr_ok(PD, LW | BIND, 0), h = mw_ok(PD, DROCE_MW_TYPE_1);
	struct droce_mw_bind_info b = bi(mr, MRVA, 64, RR);
	uint32_t other = droce_mr_key_make(&t, droce_mr_key_index(&t, h) + 1, droce_mr_key_byte(h));

	cr_expect_eq(droce_mw_bind_type1_key(&t, h, PD, &b, other), -EINVAL);
	cr_expect_eq(droce_mw_bind_type1_key(&t, h, PD, &b, h), -EINVAL, "the current key");
}
