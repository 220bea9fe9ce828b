/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory regions and windows through the verbs API: ibv_reg_mr,
 * ibv_reg_mr_iova(2), ibv_rereg_mr, ibv_dereg_mr, ibv_alloc_mw,
 * ibv_dealloc_mw and ibv_bind_mw of type-1 windows, and the PD references
 * they hold. What registration records is read back from the key table the
 * engine checks keys in; a bind is a work request the harness takes from the
 * send ring and, where a test needs the window bound, executes on the key
 * table as the engine does.
 *
 * Decisions of droce checked here:
 * - Length 0 is refused with EINVAL; optional access bits are ignored.
 * - ibv_rereg_mr() refuses what rdma-core's front checks refuse (unknown
 *   flags, a translation without a range, access bits without CHANGE_ACCESS)
 *   with IBV_REREG_MR_ERR_INPUT and errno EINVAL; every later refusal (the PD,
 *   the range, the rights, the backend) is IBV_REREG_MR_ERR_CMD with errno
 *   set; on every failure the old MR stays valid with its keys.
 * - Embedded, registration checks that the range is mapped, and writable when the
 *   MR may be written (EFAULT otherwise), as ib_umem_get() does on Linux.
 * - ibv_bind_mw() of a type-1 window posts a Bind MW work request and returns
 *   the window's next key at once (key byte + 1, ibv_inc_rkey()).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "droce_mr.h"
#include "verbs_harness.h"
#include "verbs_priv.h"

#define GIB (1ull << 30)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static uint8_t buf[16384] __attribute__((aligned(4096)));

static void setup(void)
{
	ctx = harness_open(&pd);
	cq = NULL;
}

TestSuite(mr_reg, .init = setup);
TestSuite(mr_rereg, .init = setup);
TestSuite(mr_pd, .init = setup);
TestSuite(mw_alloc, .init = setup);
TestSuite(mw_bind, .init = setup);

/* ------------------------------------------------------------------ helpers */

static struct ibv_mr *reg_ok(unsigned int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), (int)access);

	cr_assert_not_null(mr, "reg_mr access 0x%x: %s", access, strerror(errno));
	return mr;
}

static void reg_refused(unsigned int access, int err, const char *what)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), (int)access);
	cr_expect_null(mr, "%s: registered", what);
	cr_expect_eq(errno, err, "%s: errno %d (%s), want %d (%s)", what, errno, strerror(errno),
		     err, strerror(err));
}

/* The key table's record of @p key; the test fails when there is none. */
static struct droce_mr_info table_info(uint32_t key, const char *what)
{
	struct droce_mr_info info;

	memset(&info, 0, sizeof(info));
	cr_assert_eq(droce_mr_query(droce_verbs_mr_table(), key, &info), 0,
		     "%s: key 0x%x is not in the key table", what, key);
	return info;
}

static bool table_has(uint32_t key)
{
	struct droce_mr_info info;

	return droce_mr_query(droce_verbs_mr_table(), key, &info) == 0;
}

static struct ibv_qp *qp_rts_in(struct ibv_pd *p, enum ibv_qp_type type, uint32_t send_wr)
{
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = send_wr,
			.max_recv_wr = 4,
			.max_send_sge = 1,
			.max_recv_sge = 1},
		.qp_type = type,
	};
	struct ibv_qp *qp;

	if (cq == NULL) {
		cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		cr_assert_not_null(cq, "create_cq: %s", strerror(errno));
	}
	ia.send_cq = cq;
	ia.recv_cq = cq;
	qp = ibv_create_qp(p, &ia);
	cr_assert_not_null(qp, "create_qp: %s", strerror(errno));
	cr_assert_eq(harness_qp_to_rts(qp), 0, "QP to RTS");
	return qp;
}

static struct ibv_qp *qp_rts(void)
{
	return qp_rts_in(pd, IBV_QPT_RC, 8);
}

static struct ibv_mw_bind mw_bind_of(struct ibv_mr *mr, uint64_t off, uint64_t len,
				     unsigned int access)
{
	struct ibv_mw_bind b;

	memset(&b, 0, sizeof(b));
	b.wr_id = 0xb17d;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info.mr = mr;
	b.bind_info.addr = (uintptr_t)buf + off;
	b.bind_info.length = len;
	b.bind_info.mw_access_flags = access;
	return b;
}

/* The engine's part of a type-1 bind: apply the WQE to the key table. 0 or -errno. */
static int engine_bind1(struct ibv_qp *qp, const struct harness_send *s, uint32_t *rkey)
{
	struct droce_mw_bind_info b = {.mr_lkey = s->hdr.u.bind.mr_lkey,
				       .addr = s->hdr.u.bind.addr,
				       .length = s->hdr.u.bind.length,
				       .access = s->hdr.u.bind.access};
	struct droce_qp_view v;

	cr_assert_eq(droce_verbs_qp_view(qp, &v), 0, "QP view");
	return droce_mw_bind_type1(droce_verbs_mr_table(), s->hdr.u.bind.mw_handle, v.pd, &b, rkey);
}

/* ------------------------------------------------------------ registration */

Test(mr_reg, local_write_fields)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE);

	cr_expect_eq(mr->addr, (void *)buf, "mr->addr");
	cr_expect_eq(mr->length, sizeof(buf), "mr->length %zu", mr->length);
	cr_expect_eq(mr->pd, pd, "mr->pd");
	cr_expect_eq(mr->context, ctx, "mr->context");
	cr_expect_neq(mr->lkey, 0, "lkey is not 0");
	cr_expect_neq(mr->rkey, 0, "rkey is not 0");
}

Test(mr_reg, no_access_is_local_read)
{
	struct ibv_mr *mr = reg_ok(0);

	cr_expect_eq(table_info(mr->lkey, "read-only MR").access, 0, "no right beyond local read");
}

Test(mr_reg, remote_read_alone)
{
	reg_ok(IBV_ACCESS_REMOTE_READ);
}

Test(mr_reg, remote_write_needs_local_write)
{
	reg_refused(IBV_ACCESS_REMOTE_WRITE, EINVAL, "REMOTE_WRITE without LOCAL_WRITE");
}

Test(mr_reg, remote_atomic_needs_local_write)
{
	reg_refused(IBV_ACCESS_REMOTE_ATOMIC, EINVAL, "REMOTE_ATOMIC without LOCAL_WRITE");
}

Test(mr_reg, remote_write_and_atomic_need_local_write)
{
	reg_refused(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ,
		    EINVAL, "REMOTE_WRITE | REMOTE_ATOMIC | REMOTE_READ without LOCAL_WRITE");
}

Test(mr_reg, remote_write_with_local_write)
{
	reg_ok(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
}

Test(mr_reg, remote_atomic_with_local_write)
{
	reg_ok(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
}

Test(mr_reg, every_right_recorded)
{
	const unsigned int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
				 IBV_ACCESS_MW_BIND;
	struct ibv_mr *mr = reg_ok(all);
	struct droce_mr_info info = table_info(mr->lkey, "MR with every right");

	cr_expect_eq(info.access, all, "table access 0x%x, want 0x%x", info.access, all);
	cr_expect_eq(info.type, DROCE_MR_TYPE_MR, "an MR entry");
	cr_expect_eq(info.state, DROCE_MR_STATE_VALID, "valid");
	cr_expect_eq(info.pd, to_dpd(pd)->id, "in the MR's PD");
	cr_expect_eq(info.addr, (uintptr_t)buf, "host address");
	cr_expect_eq(info.iova, (uintptr_t)buf, "iova is the address for ibv_reg_mr");
	cr_expect_eq(info.length, sizeof(buf), "length");
	cr_expect_neq(mr->rkey, mr->lkey, "an lkey and an rkey per MR, different");
	cr_expect_eq(table_info(mr->rkey, "by rkey").key, mr->rkey, "the table's key is the rkey");
}

Test(mr_reg, optional_access_ignored)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);

	cr_expect_eq(table_info(mr->lkey, "relaxed ordering").access, IBV_ACCESS_LOCAL_WRITE,
		     "the optional bit is dropped");
}

Test(mr_reg, hugetlb_hint_ignored)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_HUGETLB);

	cr_expect_eq(table_info(mr->lkey, "HUGETLB").access, IBV_ACCESS_LOCAL_WRITE,
		     "HUGETLB is a hint for on-demand paging, dropped");
}

Test(mr_reg, on_demand_not_supported)
{
	reg_refused(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND, EOPNOTSUPP, "on-demand paging");
}

Test(mr_reg, unknown_access_bit_refused)
{
	reg_refused(IBV_ACCESS_LOCAL_WRITE | (1u << 12), EINVAL, "access bit 12");
}

Test(mr_reg, same_buffer_twice_different_keys)
{
	struct ibv_mr *a = reg_ok(IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *b = reg_ok(IBV_ACCESS_REMOTE_READ);

	cr_expect_neq(a->lkey, b->lkey, "two registrations, two lkeys");
	cr_expect_neq(a->rkey, b->rkey, "two registrations, two rkeys");
	cr_expect_eq(table_info(b->lkey, "second").access, IBV_ACCESS_REMOTE_READ,
		     "each with its own rights");
	cr_expect_eq(table_info(a->lkey, "first").access, IBV_ACCESS_LOCAL_WRITE,
		     "the first keeps its rights");
}

Test(mr_reg, length_zero_refused)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE);
	cr_expect_null(mr, "an empty range is registered");
	cr_expect_eq(errno, EINVAL, "errno %d (%s)", errno, strerror(errno));
}

Test(mr_reg, zero_based)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED);
	struct droce_mr_info info = table_info(mr->lkey, "zero-based MR");

	cr_expect_eq(info.iova, 0, "a zero-based MR starts at iova 0, got 0x%llx",
		     (unsigned long long)info.iova);
	cr_expect_eq(info.addr, (uintptr_t)buf, "its byte 0 is the buffer's first byte");
	cr_expect_eq(mr->addr, (void *)buf, "mr->addr is the buffer");
}

Test(mr_reg, iova2)
{
	struct ibv_mr *mr = ibv_reg_mr_iova2(pd, buf, 4096, 0x100000000ull, IBV_ACCESS_LOCAL_WRITE);
	struct droce_mr_info info;

	cr_assert_not_null(mr, "reg_mr_iova2: %s", strerror(errno));
	info = table_info(mr->lkey, "iova2 MR");
	cr_expect_eq(info.iova, 0x100000000ull, "iova 0x%llx", (unsigned long long)info.iova);
	cr_expect_eq(info.addr, (uintptr_t)buf, "host address");
	cr_expect_eq(info.length, 4096, "length");
	cr_expect_eq(mr->addr, (void *)buf, "mr->addr is the buffer, not the iova");
	cr_expect_eq(mr->length, 4096, "mr->length");
}

Test(mr_reg, iova)
{
	struct ibv_mr *mr = ibv_reg_mr_iova(pd, buf, 8192, 0x2000, IBV_ACCESS_REMOTE_READ);

	cr_assert_not_null(mr, "reg_mr_iova: %s", strerror(errno));
	cr_expect_eq(table_info(mr->lkey, "iova MR").iova, 0x2000, "iova");
}

Test(mr_reg, iova2_wrapping_refused)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr_iova2(pd, buf, 4096, UINT64_MAX - 100, IBV_ACCESS_LOCAL_WRITE);
	cr_expect_null(mr, "an iova range past 2^64 is registered");
	cr_expect_eq(errno, EINVAL, "errno %d (%s)", errno, strerror(errno));
}

Test(mr_reg, iova2_access_rules)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr_iova2(pd, buf, 4096, 0, IBV_ACCESS_REMOTE_WRITE);
	cr_expect_null(mr, "iova2 REMOTE_WRITE without LOCAL_WRITE is registered");
	cr_expect_eq(errno, EINVAL, "errno %d (%s)", errno, strerror(errno));
}

Test(mr_reg, one_gib_range)
{
	void *big = mmap(NULL, GIB, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct ibv_mr *mr;

	cr_assert_neq(big, MAP_FAILED, "mmap 1 GiB: %s", strerror(errno));
	mr = ibv_reg_mr(pd, big, GIB, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	cr_assert_not_null(mr, "register 1 GiB: %s", strerror(errno));
	cr_expect_eq(mr->length, GIB, "mr->length %zu", mr->length);
	cr_expect_eq(table_info(mr->lkey, "1 GiB MR").length, GIB, "table length");
	cr_expect_eq(ibv_dereg_mr(mr), 0, "dereg 1 GiB");
	munmap(big, GIB);
}

static void reg_at_refused(void *addr, size_t len, unsigned int access, const char *what)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, (int)access);
	cr_expect_null(mr, "%s: registered", what);
	if (mr != NULL)
		ibv_dereg_mr(mr);
	cr_expect(errno == EFAULT || errno == EINVAL, "%s: errno %d (%s), want EFAULT or EINVAL",
		  what, errno, strerror(errno));
}

Test(mr_reg, unmapped_range_refused)
{
	void *hole =
		mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *p = hole;
	struct ibv_mr *mr;

	cr_assert_neq(hole, MAP_FAILED, "mmap: %s", strerror(errno));
	cr_assert_eq(munmap(p + 4096, 4096), 0, "punch a hole in the middle");
	errno = 0;
	cr_expect_null(ibv_reg_mr(pd, (void *)0xdead0000, 4096, IBV_ACCESS_LOCAL_WRITE),
		       "nothing mapped at 0xdead0000");
	cr_expect_eq(errno, EFAULT, "errno %d (%s), want EFAULT", errno, strerror(errno));
	errno = 0;
	cr_expect_null(ibv_reg_mr(pd, p, 3 * 4096, 0), "a range with a hole");
	cr_expect_eq(errno, EFAULT, "hole: errno %d (%s), want EFAULT", errno, strerror(errno));
	errno = 0;
	cr_expect_null(ibv_reg_mr(pd, p + 4096 - 1, 2, 0), "one byte on each side of the hole");
	cr_expect_eq(errno, EFAULT, "edge: errno %d (%s), want EFAULT", errno, strerror(errno));
	mr = ibv_reg_mr(pd, p, 4096, IBV_ACCESS_LOCAL_WRITE);
	cr_expect_not_null(mr, "the page before the hole: %s", strerror(errno));
	if (mr != NULL)
		cr_expect_eq(ibv_dereg_mr(mr), 0, "dereg");
	munmap(p, 4096);
	munmap(p + 2 * 4096, 4096);
}

Test(mr_reg, range_past_the_buffer_refused)
{
	uint8_t *m = malloc(1 << 20);

	cr_assert_not_null(m, "malloc 1 MiB");
	reg_at_refused(m, 1ull << 46, IBV_ACCESS_LOCAL_WRITE, "1 MiB malloc, length 2^46");
	reg_at_refused(m, 1ull << 46, 0, "the same, read only");
	free(m);
}

Test(mr_reg, write_needs_a_writable_mapping)
{
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const unsigned int writes[] = {
		IBV_ACCESS_LOCAL_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct ibv_mr *mr;
	size_t i;

	cr_assert_neq(ro, MAP_FAILED, "mmap: %s", strerror(errno));
	for (i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		errno = 0;
		cr_expect_null(ibv_reg_mr(pd, ro, 4096, (int)writes[i]),
			       "read-only page, access 0x%x", writes[i]);
		cr_expect_eq(errno, EFAULT, "access 0x%x: errno %d (%s), want EFAULT", writes[i],
			     errno, strerror(errno));
	}
	mr = ibv_reg_mr(pd, ro, 4096, IBV_ACCESS_REMOTE_READ);
	cr_expect_not_null(mr, "read-only page, remote read: %s", strerror(errno));
	if (mr != NULL)
		cr_expect_eq(ibv_dereg_mr(mr), 0, "dereg");
	munmap(ro, 4096);
}

Test(mr_reg, mapped_buffers_register)
{
	const unsigned int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	uint8_t *m = malloc(1 << 20);
	void *a = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;

	cr_assert_not_null(m, "malloc");
	cr_assert_neq(a, MAP_FAILED, "mmap: %s", strerror(errno));
	mr = ibv_reg_mr(pd, m, 1 << 20, (int)all);
	cr_expect_not_null(mr, "1 MiB malloc: %s", strerror(errno));
	if (mr != NULL)
		cr_expect_eq(ibv_dereg_mr(mr), 0, "dereg malloc");
	mr = ibv_reg_mr(pd, m + 3, 5, (int)all);
	cr_expect_not_null(mr, "5 bytes inside a malloc: %s", strerror(errno));
	if (mr != NULL)
		cr_expect_eq(ibv_dereg_mr(mr), 0, "dereg 5 bytes");
	mr = ibv_reg_mr(pd, a, 1 << 20, (int)all);
	cr_expect_not_null(mr, "1 MiB mmap: %s", strerror(errno));
	if (mr != NULL)
		cr_expect_eq(ibv_dereg_mr(mr), 0, "dereg mmap");
	mr = ibv_reg_mr(pd, buf, sizeof(buf), (int)all);
	cr_expect_not_null(mr, "static buffer: %s", strerror(errno));
	if (mr != NULL)
		cr_expect_eq(ibv_dereg_mr(mr), 0, "dereg static");
	munmap(a, 1 << 20);
	free(m);
}

Test(mr_rereg, translation_to_unmapped_refused)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE);
	uint32_t lkey = mr->lkey;
	int rc;

	errno = 0;
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, (void *)0xdead0000, 4096, 0);
	cr_expect_neq(rc, 0, "rereg to an unmapped range");
	cr_expect_eq(errno, EFAULT, "errno %d (%s), want EFAULT", errno, strerror(errno));
	cr_expect_eq(mr->lkey, lkey, "the old MR stays");
	cr_expect_eq(table_info(lkey, "old MR").addr, (uintptr_t)buf, "with its range");
}

Test(mr_reg, dereg_removes_keys)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE);
	uint32_t key = mr->lkey;

	cr_expect(table_has(key), "registered key in the table");
	cr_expect_eq(ibv_dereg_mr(mr), 0, "dereg");
	cr_expect_not(table_has(key), "the key is gone after dereg");
}

Test(mr_reg, reregistration_after_dereg_new_key)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE);
	uint32_t key = mr->lkey;

	cr_assert_eq(ibv_dereg_mr(mr), 0, "dereg");
	mr = reg_ok(IBV_ACCESS_LOCAL_WRITE);
	cr_expect_neq(mr->lkey, key, "a new registration never reuses the old key at once");
}

/* ------------------------------------------------------------ reregistration */

Test(mr_rereg, change_access_keeps_keys)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE);
	uint32_t lkey = mr->lkey, rkey = mr->rkey;
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	int rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, acc);

	cr_assert_eq(rc, 0, "rereg access: %d (%s)", rc, strerror(errno));
	cr_expect_eq(mr->lkey, lkey, "lkey kept (no new translation)");
	cr_expect_eq(mr->rkey, rkey, "rkey kept: the peer's key gets the new rights");
	cr_expect_eq(table_info(mr->lkey, "reregistered").access, (unsigned int)acc,
		     "the new rights");
	cr_expect_eq(mr->addr, (void *)buf, "the range is kept");
}

Test(mr_rereg, change_translation)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE);
	uint32_t lkey = mr->lkey;
	struct droce_mr_info info;
	int rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf + 4096, 4096, 0);

	cr_assert_eq(rc, 0, "rereg translation: %d (%s)", rc, strerror(errno));
	cr_expect_eq(mr->addr, (void *)(buf + 4096), "mr->addr follows");
	cr_expect_eq(mr->length, 4096, "mr->length follows");
	cr_expect_neq(mr->lkey, lkey, "new keys");
	info = table_info(mr->lkey, "moved MR");
	cr_expect_eq(info.addr, (uintptr_t)buf + 4096, "table address");
	cr_expect_eq(info.iova, (uintptr_t)buf + 4096, "table iova");
	cr_expect_eq(info.length, 4096, "table length");
	cr_expect_eq(info.access, IBV_ACCESS_LOCAL_WRITE, "rights kept");
}

Test(mr_rereg, change_pd_moves_reference)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE);
	int rc;

	cr_assert_not_null(pd2, "second PD");
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	cr_assert_eq(rc, 0, "rereg PD: %d (%s)", rc, strerror(errno));
	cr_expect_eq(mr->pd, pd2, "mr->pd follows");
	cr_expect_eq(table_info(mr->lkey, "moved MR").pd, to_dpd(pd2)->id, "table PD");
	cr_expect_eq(ibv_dealloc_pd(pd2), EBUSY, "the new PD is in use");
	cr_expect_eq(ibv_dealloc_pd(pd), 0, "the old PD is free");
}

Test(mr_rereg, all_three_at_once)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE);
	struct droce_mr_info info;
	int rc;

	cr_assert_not_null(pd2, "second PD");
	rc = ibv_rereg_mr(mr,
			  IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
				  IBV_REREG_MR_CHANGE_ACCESS,
			  pd2, buf + 8192, 1024, IBV_ACCESS_REMOTE_READ);
	cr_assert_eq(rc, 0, "rereg everything: %d (%s)", rc, strerror(errno));
	info = table_info(mr->lkey, "rereg everything");
	cr_expect_eq(info.addr, (uintptr_t)buf + 8192, "address");
	cr_expect_eq(info.length, 1024, "length");
	cr_expect_eq(info.pd, to_dpd(pd2)->id, "PD");
	cr_expect_eq(info.access, IBV_ACCESS_REMOTE_READ, "rights");
}

/* A failed rereg: return value @p want, errno @p err, the MR unchanged and still valid. */
static void rereg_refused_with(int want, struct ibv_mr *mr, int flags, struct ibv_pd *p, void *addr,
			       size_t len, int access, int err, const char *what)
{
	uint32_t lkey = mr->lkey, rkey = mr->rkey;
	struct ibv_pd *old_pd = mr->pd;
	void *old_addr = mr->addr;
	int rc;

	errno = 0;
	rc = ibv_rereg_mr(mr, flags, p, addr, len, access);
	cr_expect_eq(rc, want, "%s: returned %d, want %d", what, rc, want);
	cr_expect_eq(errno, err, "%s: errno %d (%s), want %d", what, errno, strerror(errno), err);
	cr_expect_eq(mr->lkey, lkey, "%s: lkey unchanged", what);
	cr_expect_eq(mr->rkey, rkey, "%s: rkey unchanged", what);
	cr_expect_eq(mr->pd, old_pd, "%s: PD unchanged", what);
	cr_expect_eq(mr->addr, old_addr, "%s: address unchanged", what);
	cr_expect(table_has(lkey), "%s: the old MR is still valid", what);
}

/* Refused by rdma-core's own front checks. */
static void rereg_refused(struct ibv_mr *mr, int flags, struct ibv_pd *p, void *addr, size_t len,
			  int access, int err, const char *what)
{
	rereg_refused_with(IBV_REREG_MR_ERR_INPUT, mr, flags, p, addr, len, access, err, what);
}

/* Refused past them, where rdma-core's provider command (the kernel) refuses. */
static void rereg_cmd_refused(struct ibv_mr *mr, int flags, struct ibv_pd *p, void *addr,
			      size_t len, int access, int err, const char *what)
{
	rereg_refused_with(IBV_REREG_MR_ERR_CMD, mr, flags, p, addr, len, access, err, what);
}

Test(mr_rereg, no_flag_refused)
{
	rereg_cmd_refused(reg_ok(IBV_ACCESS_LOCAL_WRITE), 0, NULL, NULL, 0, 0, EINVAL, "flags 0");
}

Test(mr_rereg, unknown_flag_refused)
{
	rereg_refused(reg_ok(IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_CHANGE_ACCESS | (1 << 6), NULL,
		      NULL, 0, IBV_ACCESS_LOCAL_WRITE, EINVAL, "flag bit 6");
}

Test(mr_rereg, access_without_change_access_refused)
{
	rereg_refused(reg_ok(IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf,
		      4096, IBV_ACCESS_REMOTE_READ, EINVAL, "access bits without CHANGE_ACCESS");
}

Test(mr_rereg, translation_without_address_refused)
{
	rereg_refused(reg_ok(IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL,
		      4096, 0, EINVAL, "translation to NULL");
}

Test(mr_rereg, translation_without_length_refused)
{
	rereg_refused(reg_ok(IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf, 0,
		      0, EINVAL, "translation of 0 bytes");
}

Test(mr_rereg, change_pd_without_pd_refused)
{
	rereg_cmd_refused(reg_ok(IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0,
			  EINVAL, "CHANGE_PD to NULL");
}

Test(mr_rereg, change_pd_of_another_context_refused)
{
	struct ibv_pd *other_pd;
	struct ibv_context *other = harness_open(&other_pd);

	cr_assert_neq(other, ctx, "a second context");
	rereg_cmd_refused(reg_ok(IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_CHANGE_PD, other_pd, NULL, 0,
			  0, EINVAL, "CHANGE_PD to a PD of another context");
}

Test(mr_rereg, access_rules_apply)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE);

	rereg_cmd_refused(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_WRITE,
			  EINVAL, "REMOTE_WRITE without LOCAL_WRITE");
	cr_expect_eq(table_info(mr->lkey, "after the refusal").access, IBV_ACCESS_LOCAL_WRITE,
		     "the old rights are kept");
}

Test(mr_rereg, on_demand_refused)
{
	rereg_cmd_refused(reg_ok(IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND, EOPNOTSUPP,
			  "rereg to on-demand paging");
}

Test(mr_rereg, dereg_after_rereg)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE);

	cr_assert_eq(
		ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_READ),
		0, "rereg");
	cr_expect_eq(ibv_dereg_mr(mr), 0, "dereg of a reregistered MR");
	cr_expect_eq(ibv_dealloc_pd(pd), 0, "its PD is free again");
}

/* ------------------------------------------------------------ PD references */

Test(mr_pd, dealloc_busy_with_mr)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE);

	cr_expect_eq(ibv_dealloc_pd(pd), EBUSY, "PD with an MR");
	cr_assert_eq(ibv_dereg_mr(mr), 0, "dereg");
	cr_expect_eq(ibv_dealloc_pd(pd), 0, "PD without MR");
}

Test(mr_pd, dealloc_busy_with_mw)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

	cr_assert_not_null(mw, "alloc_mw: %s", strerror(errno));
	cr_expect_eq(ibv_dealloc_pd(pd), EBUSY, "PD with a window");
	cr_assert_eq(ibv_dealloc_mw(mw), 0, "dealloc_mw");
	cr_expect_eq(ibv_dealloc_pd(pd), 0, "PD without window");
}

Test(mr_pd, refused_reg_takes_no_reference)
{
	reg_refused(IBV_ACCESS_REMOTE_WRITE, EINVAL, "REMOTE_WRITE without LOCAL_WRITE");
	cr_expect_eq(ibv_dealloc_pd(pd), 0, "a refused registration holds no PD reference");
}

Test(mr_pd, dereg_busy_while_window_bound)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_qp *qp = qp_rts();
	struct ibv_mw_bind b = mw_bind_of(mr, 0, 4096, IBV_ACCESS_REMOTE_READ);
	struct harness_send s;
	uint32_t rkey = 0;

	cr_assert_not_null(mw, "alloc_mw");
	cr_assert_eq(ibv_bind_mw(qp, mw, &b), 0, "bind");
	cr_assert(harness_take_send(qp, &s), "the engine takes the bind");
	cr_assert_eq(engine_bind1(qp, &s, &rkey), 0, "the engine binds the window");
	cr_expect_eq(ibv_dereg_mr(mr), EBUSY, "dereg of an MR with a bound window");
	cr_expect(table_has(mr->lkey), "the MR is still registered");
	cr_assert_eq(ibv_dealloc_mw(mw), 0, "dealloc the window (unbinds it)");
	cr_expect_eq(ibv_dereg_mr(mr), 0, "dereg once no window is bound");
}

/* ------------------------------------------------------------ windows */

Test(mw_alloc, type1)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct droce_mr_info info;

	cr_assert_not_null(mw, "alloc type 1: %s", strerror(errno));
	cr_expect_eq(mw->type, IBV_MW_TYPE_1, "type");
	cr_expect_eq(mw->pd, pd, "pd");
	cr_expect_eq(mw->context, ctx, "context");
	cr_expect_neq(mw->rkey, 0, "rkey");
	info = table_info(mw->rkey, "type-1 window");
	cr_expect_eq(info.type, DROCE_MR_TYPE_MW1, "a type-1 entry");
	cr_expect_eq(info.state, DROCE_MR_STATE_INVALID, "unbound: its key grants nothing");
}

Test(mw_alloc, type2)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_not_null(mw, "alloc type 2: %s", strerror(errno));
	cr_expect_eq(mw->type, IBV_MW_TYPE_2, "type");
	cr_expect_eq(table_info(mw->rkey, "type-2 window").type, DROCE_MR_TYPE_MW2,
		     "a type-2 entry");
}

Test(mw_alloc, bad_type_refused)
{
	struct ibv_mw *mw;

	errno = 0;
	mw = ibv_alloc_mw(pd, (enum ibv_mw_type)3);
	cr_expect_null(mw, "window of type 3");
	cr_expect_eq(errno, EINVAL, "errno %d (%s)", errno, strerror(errno));
}

Test(mw_alloc, two_windows_two_keys)
{
	struct ibv_mw *a = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *b = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert(a != NULL && b != NULL, "two windows");
	cr_expect_neq(a->rkey >> 8, b->rkey >> 8, "different key indexes");
}

Test(mw_alloc, dealloc)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint32_t key;

	cr_assert_not_null(mw, "alloc");
	key = mw->rkey;
	cr_expect_eq(ibv_dealloc_mw(mw), 0, "dealloc");
	cr_expect_not(table_has(key), "the window's key is gone");
}

/* ------------------------------------------------------------ ibv_bind_mw (type 1) */

struct bind_fixture {
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct ibv_qp *qp;
};

static struct bind_fixture bind_setup(void)
{
	struct bind_fixture f;

	f.mr = reg_ok(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	f.mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	cr_assert_not_null(f.mw, "type-1 window: %s", strerror(errno));
	f.qp = qp_rts();
	return f;
}

Test(mw_bind, posts_bind_wqe_and_advances_rkey)
{
	struct bind_fixture f = bind_setup();
	struct ibv_mw_bind b =
		mw_bind_of(f.mr, 256, 1024, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	uint32_t old = f.mw->rkey;
	struct harness_send s;
	int rc;

	rc = ibv_bind_mw(f.qp, f.mw, &b);
	cr_assert_eq(rc, 0, "ibv_bind_mw: %d (%s)", rc, strerror(rc));
	cr_expect_eq(f.mw->rkey, ibv_inc_rkey(old), "mw->rkey 0x%x, want 0x%x", f.mw->rkey,
		     ibv_inc_rkey(old));
	cr_expect_eq(f.mw->rkey >> 8, old >> 8, "the key keeps the window's index");
	cr_assert_eq(harness_send_pending(f.qp), 1, "one WQE on the send ring");
	cr_assert(harness_take_send(f.qp, &s), "the engine takes it");
	cr_expect_eq(s.hdr.op, DROCE_WQE_BIND_MW, "op %u", s.hdr.op);
	cr_expect_eq(s.hdr.imm, 1, "window type %u", s.hdr.imm);
	cr_expect_eq(s.hdr.wr_id, 0xb17d, "wr_id");
	cr_expect(s.hdr.flags & DROCE_WQE_SIGNALED, "signaled");
	cr_expect_eq(s.hdr.u.bind.mw_handle, to_dmw(f.mw)->handle, "window handle");
	cr_expect_eq(s.hdr.u.bind.new_rkey, f.mw->rkey, "the WQE carries the new key");
	cr_expect_eq(s.hdr.u.bind.mr_lkey, f.mr->lkey, "MR key");
	cr_expect_eq(s.hdr.u.bind.addr, (uintptr_t)buf + 256, "address");
	cr_expect_eq(s.hdr.u.bind.length, 1024, "length");
	cr_expect_eq(s.hdr.u.bind.access, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
		     "access");
}

Test(mw_bind, engine_key_is_the_returned_key)
{
	struct bind_fixture f = bind_setup();
	struct ibv_mw_bind b = mw_bind_of(f.mr, 0, 4096, IBV_ACCESS_REMOTE_READ);
	struct harness_send s;
	struct droce_mr_info info;
	uint32_t rkey = 0, old = f.mw->rkey;

	cr_assert_eq(ibv_bind_mw(f.qp, f.mw, &b), 0, "bind");
	cr_assert(harness_take_send(f.qp, &s), "the engine takes it");
	cr_assert_eq(engine_bind1(f.qp, &s, &rkey), 0, "the engine binds");
	cr_expect_eq(rkey, f.mw->rkey, "the key table's key 0x%x is mw->rkey 0x%x", rkey,
		     f.mw->rkey);
	cr_expect_eq(droce_mr_lookup(droce_verbs_mr_table(), f.mw->rkey, &info), DROCE_MR_OK,
		     "mw->rkey is a valid key once bound");
	cr_expect_neq(droce_mr_lookup(droce_verbs_mr_table(), old, &info), DROCE_MR_OK,
		      "the key before the bind is not");
}

Test(mw_bind, each_bind_a_new_key)
{
	struct bind_fixture f = bind_setup();
	struct ibv_mw_bind b = mw_bind_of(f.mr, 0, 64, IBV_ACCESS_REMOTE_READ);
	uint32_t k0 = f.mw->rkey, k1;

	cr_assert_eq(ibv_bind_mw(f.qp, f.mw, &b), 0, "first bind");
	k1 = f.mw->rkey;
	cr_assert_eq(ibv_bind_mw(f.qp, f.mw, &b), 0, "second bind");
	cr_expect_neq(k1, k0, "first bind changes the key");
	cr_expect_neq(f.mw->rkey, k1, "second bind changes it again");
	cr_expect_eq(f.mw->rkey, ibv_inc_rkey(ibv_inc_rkey(k0)), "two increments");
	cr_expect_eq(harness_send_pending(f.qp), 2, "two WQEs in order");
}

Test(mw_bind, unbind_with_length_0)
{
	struct bind_fixture f = bind_setup();
	struct ibv_mw_bind b = mw_bind_of(NULL, 0, 0, 0);
	struct harness_send s;
	uint32_t old = f.mw->rkey;

	b.bind_info.addr = 0;
	cr_assert_eq(ibv_bind_mw(f.qp, f.mw, &b), 0, "unbind (no MR, length 0)");
	cr_expect_eq(f.mw->rkey, ibv_inc_rkey(old), "an unbind also takes a new key");
	cr_assert(harness_take_send(f.qp, &s), "the engine takes it");
	cr_expect_eq(s.hdr.u.bind.length, 0, "length 0");
	cr_expect_eq(s.hdr.u.bind.mr_lkey, 0, "no MR");
}

/* ibv_bind_mw must fail with @p err, publish nothing and leave mw->rkey as it was. */
static void bind_refused(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b, int err,
			 const char *what)
{
	uint32_t old = mw->rkey;
	int rc = ibv_bind_mw(qp, mw, b);

	cr_expect_eq(rc, err, "%s: returned %d (%s), want %d (%s)", what, rc, strerror(rc), err,
		     strerror(err));
	cr_expect_eq(mw->rkey, old, "%s: mw->rkey changed", what);
	cr_expect_eq(harness_send_pending(qp), 0, "%s: %d WQEs published", what,
		     harness_send_pending(qp));
}

Test(mw_bind, type2_window_refused)
{
	struct bind_fixture f = bind_setup();
	struct ibv_mw *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind b = mw_bind_of(f.mr, 0, 64, IBV_ACCESS_REMOTE_READ);

	cr_assert_not_null(mw2, "type-2 window");
	bind_refused(f.qp, mw2, &b, EINVAL, "ibv_bind_mw of a type-2 window");
}

Test(mw_bind, ud_qp_refused)
{
	struct bind_fixture f = bind_setup();
	struct ibv_qp *ud = qp_rts_in(pd, IBV_QPT_UD, 8);
	struct ibv_mw_bind b = mw_bind_of(f.mr, 0, 64, IBV_ACCESS_REMOTE_READ);

	bind_refused(ud, f.mw, &b, EINVAL, "bind through a UD QP");
}

Test(mw_bind, uc_qp_accepted)
{
	struct bind_fixture f = bind_setup();
	struct ibv_qp *uc = qp_rts_in(pd, IBV_QPT_UC, 8);
	struct ibv_mw_bind b = mw_bind_of(f.mr, 0, 64, IBV_ACCESS_REMOTE_READ);

	cr_expect_eq(ibv_bind_mw(uc, f.mw, &b), 0, "bind through a UC QP");
	cr_expect_eq(harness_send_pending(uc), 1, "published");
}

Test(mw_bind, reset_qp_refused)
{
	struct bind_fixture f = bind_setup();
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct ibv_mw_bind b = mw_bind_of(f.mr, 0, 64, IBV_ACCESS_REMOTE_READ);

	cr_assert_not_null(qp, "RESET QP");
	bind_refused(qp, f.mw, &b, EINVAL, "bind through a RESET QP");
}

Test(mw_bind, qp_of_another_pd_refused)
{
	struct bind_fixture f = bind_setup();
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_qp *qp2;
	struct ibv_mw_bind b = mw_bind_of(f.mr, 0, 64, IBV_ACCESS_REMOTE_READ);

	cr_assert_not_null(pd2, "second PD");
	qp2 = qp_rts_in(pd2, IBV_QPT_RC, 8);
	bind_refused(qp2, f.mw, &b, EINVAL, "bind through a QP of another PD");
}

Test(mw_bind, mr_of_another_pd_refused)
{
	struct bind_fixture f = bind_setup();
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *mr2;
	struct ibv_mw_bind b;

	cr_assert_not_null(pd2, "second PD");
	mr2 = ibv_reg_mr(pd2, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	cr_assert_not_null(mr2, "MR in the second PD");
	b = mw_bind_of(mr2, 0, 64, IBV_ACCESS_REMOTE_READ);
	bind_refused(f.qp, f.mw, &b, EPERM, "bind to an MR of another PD");
}

Test(mw_bind, address_without_mr_refused)
{
	struct bind_fixture f = bind_setup();
	struct ibv_mw_bind b = mw_bind_of(NULL, 0, 64, IBV_ACCESS_REMOTE_READ);

	bind_refused(f.qp, f.mw, &b, EINVAL, "a range without an MR");
}

Test(mw_bind, inline_flag_refused)
{
	struct bind_fixture f = bind_setup();
	struct ibv_mw_bind b = mw_bind_of(f.mr, 0, 64, IBV_ACCESS_REMOTE_READ);

	b.send_flags |= IBV_SEND_INLINE;
	bind_refused(f.qp, f.mw, &b, EINVAL, "bind with IBV_SEND_INLINE");
}

Test(mw_bind, fence_on_uc_refused)
{
	struct bind_fixture f = bind_setup();
	struct ibv_qp *uc = qp_rts_in(pd, IBV_QPT_UC, 8);
	struct ibv_mw_bind b = mw_bind_of(f.mr, 0, 64, IBV_ACCESS_REMOTE_READ);

	b.send_flags |= IBV_SEND_FENCE;
	bind_refused(uc, f.mw, &b, EINVAL, "bind with FENCE on UC");
}

Test(mw_bind, fence_on_rc_carried)
{
	struct bind_fixture f = bind_setup();
	struct ibv_mw_bind b = mw_bind_of(f.mr, 0, 64, IBV_ACCESS_REMOTE_READ);
	struct harness_send s;

	b.send_flags = IBV_SEND_FENCE;
	cr_assert_eq(ibv_bind_mw(f.qp, f.mw, &b), 0, "bind with FENCE on RC");
	cr_assert(harness_take_send(f.qp, &s), "the engine takes it");
	cr_expect(s.hdr.flags & DROCE_WQE_FENCE, "fence (flags 0x%x)", s.hdr.flags);
	cr_expect_eq(s.hdr.flags & DROCE_WQE_SIGNALED, 0, "not signaled (flags 0x%x)", s.hdr.flags);
}

Test(mw_bind, send_queue_full)
{
	struct ibv_mr *mr = reg_ok(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_qp *qp = qp_rts_in(pd, IBV_QPT_RC, 2);
	struct ibv_mw_bind b = mw_bind_of(mr, 0, 64, IBV_ACCESS_REMOTE_READ);
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	uint32_t i, old;
	int rc;

	cr_assert_not_null(mw, "window");
	cr_assert_eq(ibv_query_qp(qp, &a, 0, &ia), 0, "query_qp");
	for (i = 0; i < ia.cap.max_send_wr; i++)
		cr_assert_eq(ibv_bind_mw(qp, mw, &b), 0, "bind %u of max_send_wr", i);
	old = mw->rkey;
	rc = ibv_bind_mw(qp, mw, &b);
	cr_expect_eq(rc, ENOMEM, "full send queue: %d (%s)", rc, strerror(rc));
	cr_expect_eq(mw->rkey, old, "mw->rkey unchanged by a refused bind");
	cr_expect_eq(harness_send_pending(qp), (int)ia.cap.max_send_wr, "the ring holds the rest");
}

Test(mw_bind, completion_carries_wr_id)
{
	struct bind_fixture f = bind_setup();
	struct ibv_mw_bind b = mw_bind_of(f.mr, 0, 64, IBV_ACCESS_REMOTE_READ);
	struct ibv_wc wc;

	b.wr_id = 0x5151;
	cr_assert_eq(ibv_bind_mw(f.qp, f.mw, &b), 0, "bind");
	cr_expect_eq(harness_complete_sends(f.qp, IBV_WC_SUCCESS), 1, "the engine runs it");
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "one completion");
	cr_expect_eq(wc.wr_id, 0x5151, "wr_id 0x%llx", (unsigned long long)wc.wr_id);
	cr_expect_eq(wc.opcode, IBV_WC_BIND_MW, "opcode %d", wc.opcode);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "status %s", ibv_wc_status_str(wc.status));
}

Test(mw_bind, err_qp_accepted_and_flushed)
{
	struct bind_fixture f = bind_setup();
	struct ibv_mw_bind b = mw_bind_of(f.mr, 0, 64, IBV_ACCESS_REMOTE_READ);
	struct ibv_wc wc;

	cr_assert_eq(droce_verbs_qp_error(f.qp, IBV_QPS_ERR, 0), 0, "engine: ERR");
	cr_assert_eq(ibv_bind_mw(f.qp, f.mw, &b), 0, "bind on an ERR QP is accepted");
	cr_expect_eq(harness_complete_sends(f.qp, IBV_WC_WR_FLUSH_ERR), 1, "flushed");
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "one completion");
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "status %s", ibv_wc_status_str(wc.status));
}
