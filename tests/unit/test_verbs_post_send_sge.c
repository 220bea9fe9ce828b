/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_post_send(): num_sge against max_send_sge, the s/g list and message
 * lengths (an SGE length of 0 is 2^31 bytes, 2^31 the most), zero-byte
 * messages, SGEs copied at post, and inline data: copied at post, up to
 * max_inline_data, on the opcodes that may carry it. Harness:
 * post_send_harness.h.
 *
 * Decisions of droce checked here (the seed leaves them open):
 * - Inline SGE lengths are literal byte counts (0 is zero bytes, not 2^31).
 * - Keys are the engine's to check: post never looks at an lkey.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "post_send_harness.h"

TestSuite(post_send_sge, .init = setup);
TestSuite(post_send_inline, .init = setup);

/* The @p i-th SGE of the WQE @p s. */
static const struct droce_sge *wqe_sge(const struct harness_send *s, unsigned int i)
{
	return (const struct droce_sge *)s->data + i;
}

/* ------------------------------------------------------------ num_sge and SGEs */

Test(post_send_sge, num_sge_equal_to_cap_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[64];
	struct ibv_send_wr wr;
	struct harness_send s;
	uint32_t i, n = cap.max_send_sge;

	cr_assert(n >= 4 && n <= DIM(sge), "max_send_sge %u is at least what was asked", n);
	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	/* SGEs may come from different MRs: each lkey is carried as given */
	for (i = 0; i < n; i++)
		sge[i] = (struct ibv_sge){
			.addr = (uintptr_t)buf + 100 * i, .length = 10 + i, .lkey = mr->lkey + i};
	wr.sg_list = sge;
	wr.num_sge = (int)n;
	expect_posted(qp, &wr, &s, "num_sge == max_send_sge");
	cr_expect_eq(s.hdr.num_sge, n, "WQE num_sge %u, want %u", s.hdr.num_sge, n);
	for (i = 0; i < n; i++) {
		cr_expect_eq(wqe_sge(&s, i)->addr, sge[i].addr, "SGE %u addr", i);
		cr_expect_eq(wqe_sge(&s, i)->length, sge[i].length, "SGE %u length", i);
		cr_expect_eq(wqe_sge(&s, i)->lkey, sge[i].lkey, "SGE %u lkey", i);
	}
	cr_expect_eq(s.hdr.length, n * 10 + n * (n - 1) / 2, "message length %u is the sum",
		     s.hdr.length);
}

Test(post_send_sge, num_sge_above_cap_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[64];
	struct ibv_send_wr wr;
	uint32_t i, n = cap.max_send_sge + 1;

	cr_assert(n <= DIM(sge), "max_send_sge %u fits the test", n - 1);
	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	for (i = 0; i < n; i++)
		sge[i] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey};
	wr.sg_list = sge;
	wr.num_sge = (int)n;
	expect_refused(qp, &wr, EINVAL, "num_sge == max_send_sge + 1");
}

Test(post_send_sge, num_sge_negative_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.num_sge = -1;
	expect_refused(qp, &wr, EINVAL, "num_sge -1");
}

Test(post_send_sge, num_sge_negative_no_data_op_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_LOCAL_INV, &wr, &sge);
	wr.num_sge = -1;
	expect_refused(qp, &wr, EINVAL, "LOCAL_INV with num_sge -1");
}

Test(post_send_sge, sge_list_null_with_sges_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.sg_list = NULL;
	expect_refused(qp, &wr, EINVAL, "num_sge 1 with sg_list NULL");
}

Test(post_send_sge, length_zero_means_2_31)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_RDMA_WRITE, &wr, &sge);
	sge.length = 0;
	expect_posted(qp, &wr, &s, "one SGE of length 0");
	cr_expect_eq(wqe_sge(&s, 0)->length, TWO_31, "SGE length 0x%x, want 2^31",
		     wqe_sge(&s, 0)->length);
	cr_expect_eq(s.hdr.length, TWO_31, "message length 0x%x, want 2^31", s.hdr.length);
}

Test(post_send_sge, total_exactly_2_31_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[2];
	struct ibv_send_wr wr;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = TWO_31 / 2, .lkey = mr->lkey};
	sge[1] = sge[0];
	wr.sg_list = sge;
	wr.num_sge = 2;
	expect_posted(qp, &wr, &s, "two SGEs of 2^30");
	cr_expect_eq(s.hdr.length, TWO_31, "message length 0x%x, want 2^31", s.hdr.length);
}

Test(post_send_sge, total_above_2_31_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[2];
	struct ibv_send_wr wr;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 0, .lkey = mr->lkey}; /* 2^31 */
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey};
	wr.sg_list = sge;
	wr.num_sge = 2;
	expect_refused(qp, &wr, EINVAL, "2^31 + 1 bytes");
}

Test(post_send_sge, total_above_2_31_by_lengths_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[3];
	struct ibv_send_wr wr;

	wr_fill(qp, IBV_WR_RDMA_READ, &wr, &sge[0]);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = TWO_31 - 1, .lkey = mr->lkey};
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey};
	sge[2] = sge[1];
	wr.sg_list = sge;
	wr.num_sge = 3;
	expect_refused(qp, &wr, EINVAL, "READ of 2^31 + 1 bytes");
}

Test(post_send_sge, zero_byte_messages_with_num_sge_0)
{
	static const enum ibv_wr_opcode ops[] = {IBV_WR_SEND,       IBV_WR_SEND_WITH_IMM,
						 IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
						 IBV_WR_RDMA_READ,  IBV_WR_SEND_WITH_INV};
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	for (unsigned int i = 0; i < DIM(ops); i++) {
		wr_fill(qp, ops[i], &wr, &sge);
		wr.sg_list = NULL;
		wr.num_sge = 0;
		expect_posted(qp, &wr, &s, op_name(ops[i]));
		cr_expect_eq(s.hdr.length, 0, "%s of zero bytes: length %u", op_name(ops[i]),
			     s.hdr.length);
		cr_expect_eq(s.hdr.num_sge, 0, "%s of zero bytes: num_sge %u", op_name(ops[i]),
			     s.hdr.num_sge);
	}
}

Test(post_send_sge, zero_byte_ud_send)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.sg_list = NULL;
	wr.num_sge = 0;
	expect_posted(qp, &wr, &s, "UD SEND of zero bytes");
	cr_expect_eq(s.hdr.length, 0, "length %u", s.hdr.length);
}

Test(post_send_sge, sges_copied_at_post)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;
	struct ibv_send_wr *bad = NULL;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0, "post");
	/* the WR and its s/g list may be reused as soon as the call returns */
	memset(&sge, 0xee, sizeof(sge));
	memset(&wr, 0xee, sizeof(wr));
	cr_assert(harness_take_send(qp, &s), "the engine finds the WQE");
	cr_expect_eq(wqe_sge(&s, 0)->addr, (uintptr_t)buf, "SGE addr as posted");
	cr_expect_eq(wqe_sge(&s, 0)->length, 64, "SGE length as posted");
	cr_expect_eq(wqe_sge(&s, 0)->lkey, mr->lkey, "SGE lkey as posted");
	cr_expect_eq(s.hdr.wr_id, 0x5000u + IBV_WR_SEND, "wr_id as posted");
}

Test(post_send_sge, lkey_not_checked_at_post)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	sge.lkey = 0xdead00ff; /* the engine completes it with IBV_WC_LOC_PROT_ERR */
	expect_posted(qp, &wr, &s, "SEND with an unregistered lkey");
	cr_expect_eq(wqe_sge(&s, 0)->lkey, 0xdead00ff, "the lkey reaches the engine as given");
}

/* ------------------------------------------------------------ inline data */

Test(post_send_inline, up_to_max_copied_at_post)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	uint8_t data[64];
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct harness_send s;

	cr_assert_eq(cap.max_inline_data, 64, "max_inline_data %u", cap.max_inline_data);
	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	/* inline: the lkey is not looked at, the buffer need not be registered */
	sge = (struct ibv_sge){.addr = (uintptr_t)data, .length = sizeof(data), .lkey = 0xbadbad};
	wr.send_flags = IBV_SEND_INLINE;
	cr_assert_eq(ibv_post_send(qp, &wr, &(struct ibv_send_wr *){NULL}), 0,
		     "inline SEND of max_inline_data bytes with a garbage lkey");
	memset(data, 0, sizeof(data)); /* reusable at once */
	cr_assert(harness_take_send(qp, &s), "the engine finds the WQE");
	cr_expect(s.hdr.flags & DROCE_WQE_INLINE, "WQE flags 0x%x lack INLINE", s.hdr.flags);
	cr_expect_eq(s.hdr.length, 64, "inline length %u", s.hdr.length);
	cr_expect_eq(s.hdr.num_sge, 0, "an inline WQE carries no SGE (%u)", s.hdr.num_sge);
	for (unsigned int i = 0; i < 64; i++)
		cr_expect_eq(s.data[i], (uint8_t)(i * 7 + 1), "inline byte %u is 0x%02x", i,
			     s.data[i]);
}

Test(post_send_inline, sges_concatenated)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UC);
	char a[] = "hello, ", b[] = "inline ", c[] = "world";
	struct ibv_sge sge[3];
	struct ibv_send_wr wr;
	struct harness_send s;

	wr_fill(qp, IBV_WR_RDMA_WRITE, &wr, &sge[0]);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)a, .length = 7};
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)b, .length = 7};
	sge[2] = (struct ibv_sge){.addr = (uintptr_t)c, .length = 5};
	wr.sg_list = sge;
	wr.num_sge = 3;
	wr.send_flags = IBV_SEND_INLINE;
	cr_assert_eq(ibv_post_send(qp, &wr, &(struct ibv_send_wr *){NULL}), 0, "inline WRITE");
	memset(a, 'x', 7);
	cr_assert(harness_take_send(qp, &s), "the engine finds the WQE");
	cr_expect_eq(s.hdr.length, 19, "inline length %u", s.hdr.length);
	cr_expect_arr_eq(s.data, "hello, inline world", 19, "inline bytes concatenated");
	cr_expect_eq(s.hdr.u.rdma.remote_addr, REMOTE_VA, "remote address of the inline WRITE");
}

Test(post_send_inline, sge_length_0_is_zero_bytes)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[2];
	struct ibv_send_wr wr;
	struct harness_send s;

	/* droce: inline lengths are byte counts; 0 is an empty piece, not 2^31 bytes */
	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	memcpy(buf, "xy", 2);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 0};
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 2};
	wr.num_sge = 2;
	wr.send_flags = IBV_SEND_INLINE;
	expect_posted(qp, &wr, &s, "inline SEND of 0 + 2 bytes");
	cr_expect_eq(s.hdr.length, 2, "inline length %u", s.hdr.length);
	cr_expect_arr_eq(s.data, "xy", 2, "inline bytes");
}

Test(post_send_inline, over_max_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	sge = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 65};
	wr.send_flags = IBV_SEND_INLINE;
	expect_refused(qp, &wr, EINVAL, "inline of max_inline_data + 1 bytes");
}

Test(post_send_inline, over_max_across_sges_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[2];
	struct ibv_send_wr wr;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 32};
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 33};
	wr.sg_list = sge;
	wr.num_sge = 2;
	wr.send_flags = IBV_SEND_INLINE;
	expect_refused(qp, &wr, EINVAL, "inline of 32 + 33 bytes");
}

Test(post_send_inline, num_sge_above_cap_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_sge sge[64];
	struct ibv_send_wr wr;
	uint32_t i, n = cap.max_send_sge + 1;

	/* num_sge <= max_send_sge holds for inline WRs too: n one-byte SGEs fit inline */
	cr_assert(n <= DIM(sge) && n <= cap.max_inline_data, "geometry of the test");
	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	for (i = 0; i < n; i++)
		sge[i] = (struct ibv_sge){.addr = (uintptr_t)buf + i, .length = 1};
	wr.sg_list = sge;
	wr.num_sge = (int)n;
	wr.send_flags = IBV_SEND_INLINE;
	expect_refused(qp, &wr, EINVAL, "inline with max_send_sge + 1 SGEs");
}

Test(post_send_inline, allowed_for_send_and_write_kinds)
{
	static const enum ibv_wr_opcode ops[] = {IBV_WR_SEND, IBV_WR_SEND_WITH_IMM,
						 IBV_WR_SEND_WITH_INV, IBV_WR_RDMA_WRITE,
						 IBV_WR_RDMA_WRITE_WITH_IMM};
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	for (unsigned int i = 0; i < DIM(ops); i++) {
		wr_fill(qp, ops[i], &wr, &sge);
		sge.length = 16;
		wr.send_flags = IBV_SEND_INLINE;
		expect_posted(qp, &wr, &s, op_name(ops[i]));
		cr_expect(s.hdr.flags & DROCE_WQE_INLINE, "%s: INLINE flag", op_name(ops[i]));
		cr_expect_eq(s.hdr.length, 16, "%s: inline length %u", op_name(ops[i]),
			     s.hdr.length);
	}
}

Test(post_send_inline, ud_send_inline)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	memcpy(buf, "ud-inline", 9);
	sge.length = 9;
	wr.send_flags = IBV_SEND_INLINE;
	expect_posted(qp, &wr, &s, "inline UD SEND");
	cr_expect_arr_eq(s.data, "ud-inline", 9, "inline bytes of the UD SEND");
	cr_expect_eq(s.hdr.u.ud.remote_qpn, UD_QPN, "remote QPN of the inline UD SEND");
}

static void inline_refused(enum ibv_wr_opcode op)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	char what[64];

	wr_fill(qp, op, &wr, &sge);
	wr.send_flags = IBV_SEND_INLINE;
	snprintf(what, sizeof(what), "inline %s", op_name(op));
	expect_refused(qp, &wr, EINVAL, what);
}

Test(post_send_inline, read_refused)
{
	inline_refused(IBV_WR_RDMA_READ);
}

Test(post_send_inline, cmp_swap_refused)
{
	inline_refused(IBV_WR_ATOMIC_CMP_AND_SWP);
}

Test(post_send_inline, fetch_add_refused)
{
	inline_refused(IBV_WR_ATOMIC_FETCH_AND_ADD);
}

Test(post_send_inline, local_inv_refused)
{
	inline_refused(IBV_WR_LOCAL_INV);
}

Test(post_send_inline, bind_mw_refused)
{
	inline_refused(IBV_WR_BIND_MW);
}
