/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_rereg_mr() through a real engine (issue 18): after CHANGE_ACCESS the new rights govern
 * the peer's next access with the rkey it already holds (keys are kept without a new
 * translation); after CHANGE_TRANSLATION local and remote access use the new range with the
 * new keys, and the old range is refused; after CHANGE_PD the MR belongs to the new PD, so a
 * QP of the old one gets a remote access error (an R_Key violation: NAK code 2, doc/memory.md).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "pair_harness.h"

#define BUF (64u * 1024)
#define LEN 256u

static struct pair_end e0, e1;

static void setup(void)
{
	struct pair_opts o = pair_opts_default(IBV_QPT_RC);

	o.buf_len = BUF;
	o.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	pair_open(&o, &e0, &e1);
}

TestSuite(embedded_rereg, .init = setup, .timeout = 60);

/* An RDMA WRITE of LEN bytes from @p x at @p off to @p to at @p roff with @p rkey (0: the MR's). */
static enum ibv_wc_status write_to(struct pair_end *x, struct pair_end *to, uint64_t id,
				   uint32_t off, uint32_t roff, uint32_t rkey)
{
	const struct pair_wr w = {.id = id,
				  .op = IBV_WR_RDMA_WRITE,
				  .off = off,
				  .len = LEN,
				  .roff = roff,
				  .rkey = rkey};

	pair_post_send(x, to, &w);
	return pair_wait_wc(x->cq, id).status;
}

Test(embedded_rereg, change_access_governs_the_held_rkey)
{
	uint32_t rkey = e1.mr->rkey, lkey = e1.mr->lkey;
	int rc;

	rc = ibv_rereg_mr(e1.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_WRITE);
	cr_assert_eq(rc, 0, "rereg access: %d", rc);
	cr_expect_eq(e1.mr->rkey, rkey, "rkey kept");
	cr_expect_eq(e1.mr->lkey, lkey, "lkey kept");
	pair_fill(e0.buf, LEN, 7);
	cr_assert_eq(write_to(&e0, &e1, 1, 0, 0, rkey), IBV_WC_SUCCESS,
		     "a WRITE the new rights allow, with the rkey held before");
	cr_expect_eq(pair_mismatch(e1.buf, LEN, 7), -1, "the bytes arrived");
}

Test(embedded_rereg, change_translation_moves_local_and_remote_access)
{
	uint32_t old_rkey = e1.mr->rkey;
	int rc;

	rc = ibv_rereg_mr(e1.mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS, NULL,
			  e1.buf + 8192, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	cr_assert_eq(rc, 0, "rereg translation: %d", rc);
	cr_expect_neq(e1.mr->rkey, old_rkey, "a new translation, new keys");
	cr_expect_eq(e1.mr->addr, (void *)(e1.buf + 8192), "mr->addr");

	pair_fill(e0.buf, LEN, 9);
	cr_assert_eq(write_to(&e0, &e1, 1, 0, 8192 + 100, 0), IBV_WC_SUCCESS,
		     "remote WRITE into the new range");
	cr_expect_eq(pair_mismatch(e1.buf + 8192 + 100, LEN, 9), -1, "bytes in the new range");

	/* local access: e1 READs e0's bytes into the new range, through its new lkey */
	{
		const struct pair_wr r = {
			.id = 2, .op = IBV_WR_RDMA_READ, .off = 8192 + 1000, .len = LEN, .roff = 0};

		pair_post_send(&e1, &e0, &r);
		cr_assert_eq(pair_wait_wc(e1.cq, 2).status, IBV_WC_SUCCESS,
			     "local write into the new range");
		cr_expect_eq(pair_mismatch(e1.buf + 8192 + 1000, LEN, 9), -1,
			     "bytes read into the new range");
	}

	cr_expect_eq(write_to(&e0, &e1, 3, 0, 0, old_rkey), IBV_WC_REM_ACCESS_ERR,
		     "the old rkey and range are refused");
}

Test(embedded_rereg, change_pd_moves_the_mr)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(e1.ctx);
	int rc;

	cr_assert_not_null(pd2, "second PD");
	rc = ibv_rereg_mr(e1.mr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS, pd2, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	cr_assert_eq(rc, 0, "rereg PD: %d", rc);
	cr_expect_eq(e1.mr->pd, pd2, "mr->pd");
	cr_expect_eq(write_to(&e0, &e1, 1, 0, 0, 0), IBV_WC_REM_ACCESS_ERR,
		     "a QP of the old PD cannot use the MR any more");
}
