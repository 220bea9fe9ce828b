/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_post_send(): atomics (their fields, an 8-byte SGE, an 8-byte aligned
 * remote address) and send flags (SIGNALED and sq_sig_all, FENCE, SOLICITED,
 * flags droce does not know). Harness: post_send_harness.h.
 *
 * Decisions of droce checked here (the seed leaves them open):
 * - IBV_SEND_FENCE is accepted on RC only: it orders after RDMA READs and
 *   atomics, which only RC has; UC and UD refuse it with EINVAL.
 * - IBV_SEND_SOLICITED is carried on every opcode that takes it; the engine
 *   sets the SE bit only on SEND and RDMA WRITE with immediate (IBA 9.2.3), as
 *   Linux Soft-RoCE does.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "post_send_harness.h"

TestSuite(post_send_atomic, .init = setup);
TestSuite(post_send_flags, .init = setup);

/* ------------------------------------------------------------ atomics */

Test(post_send_atomic, fields_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_ATOMIC_CMP_AND_SWP, &wr, &sge);
	wr.wr.atomic.compare_add = 0x1111222233334444ull;
	wr.wr.atomic.swap = 0x5555666677778888ull;
	expect_posted(qp, &wr, &s, "CMP_AND_SWP");
	cr_expect_eq(s.hdr.u.atomic.remote_addr, REMOTE_VA, "remote_addr");
	cr_expect_eq(s.hdr.u.atomic.rkey, REMOTE_KEY, "rkey");
	cr_expect_eq(s.hdr.u.atomic.compare_add, 0x1111222233334444ull, "compare");
	cr_expect_eq(s.hdr.u.atomic.swap, 0x5555666677778888ull, "swap");
	cr_expect_eq(s.hdr.length, 8, "length %u", s.hdr.length);
}

Test(post_send_atomic, fetch_add_fields_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, &wr, &sge);
	wr.wr.atomic.compare_add = 42;
	expect_posted(qp, &wr, &s, "FETCH_AND_ADD");
	cr_expect_eq(s.hdr.u.atomic.compare_add, 42, "add value");
	cr_expect_eq(s.hdr.u.atomic.remote_addr, REMOTE_VA, "remote_addr");
	cr_expect_eq(s.hdr.u.atomic.rkey, REMOTE_KEY, "rkey");
}

static void atomic_refused_len(enum ibv_wr_opcode op, uint32_t len)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	char what[64];

	wr_fill(qp, op, &wr, &sge);
	sge.length = len;
	snprintf(what, sizeof(what), "%s of %u bytes", op_name(op), len);
	expect_refused(qp, &wr, EINVAL, what);
}

Test(post_send_atomic, cmp_swap_length_4_refused)
{
	atomic_refused_len(IBV_WR_ATOMIC_CMP_AND_SWP, 4);
}

Test(post_send_atomic, cmp_swap_length_16_refused)
{
	atomic_refused_len(IBV_WR_ATOMIC_CMP_AND_SWP, 16);
}

Test(post_send_atomic, fetch_add_length_7_refused)
{
	atomic_refused_len(IBV_WR_ATOMIC_FETCH_AND_ADD, 7);
}

Test(post_send_atomic, fetch_add_length_9_refused)
{
	atomic_refused_len(IBV_WR_ATOMIC_FETCH_AND_ADD, 9);
}

Test(post_send_atomic, length_0_is_2_31_refused)
{
	atomic_refused_len(IBV_WR_ATOMIC_FETCH_AND_ADD, 0);
}

Test(post_send_atomic, no_sge_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_ATOMIC_CMP_AND_SWP, &wr, &sge);
	wr.sg_list = NULL;
	wr.num_sge = 0;
	expect_refused(qp, &wr, EINVAL, "CMP_AND_SWP with num_sge 0");
}

static void atomic_refused_addr(enum ibv_wr_opcode op, uint64_t offset)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	char what[64];

	wr_fill(qp, op, &wr, &sge);
	wr.wr.atomic.remote_addr = REMOTE_VA + offset;
	snprintf(what, sizeof(what), "%s at remote_addr + %llu", op_name(op),
		 (unsigned long long)offset);
	expect_refused(qp, &wr, EINVAL, what);
}

Test(post_send_atomic, cmp_swap_unaligned_by_4_refused)
{
	atomic_refused_addr(IBV_WR_ATOMIC_CMP_AND_SWP, 4);
}

Test(post_send_atomic, fetch_add_unaligned_by_1_refused)
{
	atomic_refused_addr(IBV_WR_ATOMIC_FETCH_AND_ADD, 1);
}

Test(post_send_atomic, aligned_by_8_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, &wr, &sge);
	wr.wr.atomic.remote_addr = REMOTE_VA + 8;
	expect_posted(qp, &wr, &s, "FETCH_AND_ADD at an 8-byte aligned address");
	cr_expect_eq(s.hdr.u.atomic.remote_addr, REMOTE_VA + 8, "remote_addr");
}

/* ------------------------------------------------------------ send flags */

Test(post_send_flags, unsignaled_without_sq_sig_all)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_posted(qp, &wr, &s, "SEND without SIGNALED");
	cr_expect_eq(s.hdr.flags & DROCE_WQE_SIGNALED, 0, "WQE flags 0x%x: not signaled",
		     s.hdr.flags);
}

Test(post_send_flags, signaled_without_sq_sig_all)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.send_flags = IBV_SEND_SIGNALED;
	expect_posted(qp, &wr, &s, "SEND with SIGNALED");
	cr_expect(s.hdr.flags & DROCE_WQE_SIGNALED, "WQE flags 0x%x: signaled", s.hdr.flags);
}

Test(post_send_flags, sq_sig_all_signals_every_wr)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 1);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	cr_assert_eq(harness_qp_to_rts(qp), 0, "QP to RTS");
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_posted(qp, &wr, &s, "SEND without SIGNALED, sq_sig_all 1");
	cr_expect(s.hdr.flags & DROCE_WQE_SIGNALED, "WQE flags 0x%x: signaled", s.hdr.flags);
}

Test(post_send_flags, sq_sig_all_with_signaled_no_effect)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 1);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	cr_assert_eq(harness_qp_to_rts(qp), 0, "QP to RTS");
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.send_flags = IBV_SEND_SIGNALED;
	expect_posted(qp, &wr, &s, "SEND with SIGNALED, sq_sig_all 1");
	cr_expect(s.hdr.flags & DROCE_WQE_SIGNALED, "WQE flags 0x%x: signaled", s.hdr.flags);
}

Test(post_send_flags, only_signaled_wrs_complete)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];
	struct ibv_wc wc[4];

	for (int i = 0; i < 3; i++) {
		wr_fill(qp, IBV_WR_SEND, &wr[i], &sge[i]);
		wr[i].wr_id = 100 + (uint64_t)i;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[1].send_flags = IBV_SEND_SIGNALED;
	cr_assert_eq(ibv_post_send(qp, wr, &bad), 0, "post three SENDs");
	cr_expect_eq(harness_complete_sends(qp, IBV_WC_SUCCESS), 3, "the engine runs three");
	cr_assert_eq(ibv_poll_cq(cq, 4, wc), 1, "one completion: the signaled WR");
	cr_expect_eq(wc[0].wr_id, 101, "the signaled WR's wr_id, got %llu",
		     (unsigned long long)wc[0].wr_id);
}

Test(post_send_flags, fence_rc_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.send_flags = IBV_SEND_FENCE;
	expect_posted(qp, &wr, &s, "FENCE on RC");
	cr_expect(s.hdr.flags & DROCE_WQE_FENCE, "WQE flags 0x%x: fence", s.hdr.flags);
}

Test(post_send_flags, fence_uc_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.send_flags = IBV_SEND_FENCE;
	expect_refused(qp, &wr, EINVAL, "FENCE on UC");
}

Test(post_send_flags, fence_ud_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.send_flags = IBV_SEND_FENCE;
	expect_refused(qp, &wr, EINVAL, "FENCE on UD");
}

Test(post_send_flags, solicited_carried)
{
	static const struct {
		enum ibv_qp_type type;
		enum ibv_wr_opcode op;
	} cases[] = {
		{IBV_QPT_RC, IBV_WR_SEND},
		{IBV_QPT_RC, IBV_WR_SEND_WITH_IMM},
		{IBV_QPT_RC, IBV_WR_RDMA_WRITE_WITH_IMM},
		{IBV_QPT_RC, IBV_WR_SEND_WITH_INV},
		{IBV_QPT_UD, IBV_WR_SEND},
	};

	for (unsigned int i = 0; i < DIM(cases); i++) {
		struct ibv_qp *qp = qp_rts(cases[i].type);
		struct ibv_send_wr wr;
		struct ibv_sge sge;
		struct harness_send s;

		wr_fill(qp, cases[i].op, &wr, &sge);
		wr.send_flags = IBV_SEND_SOLICITED;
		expect_posted(qp, &wr, &s, op_name(cases[i].op));
		cr_expect(s.hdr.flags & DROCE_WQE_SOLICITED, "%s on %s: WQE flags 0x%x lack SE",
			  op_name(cases[i].op), type_name(cases[i].type), s.hdr.flags);
	}
}

Test(post_send_flags, no_solicited_not_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND_WITH_IMM, &wr, &sge);
	expect_posted(qp, &wr, &s, "SEND_WITH_IMM without SOLICITED");
	cr_expect_eq(s.hdr.flags & DROCE_WQE_SOLICITED, 0, "WQE flags 0x%x: no SE", s.hdr.flags);
}

Test(post_send_flags, solicited_on_plain_write_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	/* droce: accepted; the engine sets SE only on SEND and WRITE with immediate */
	wr_fill(qp, IBV_WR_RDMA_WRITE, &wr, &sge);
	wr.send_flags = IBV_SEND_SOLICITED;
	expect_posted(qp, &wr, &s, "RDMA_WRITE with SOLICITED");
	cr_expect_eq(s.hdr.op, DROCE_WQE_WRITE, "WQE op %u", s.hdr.op);
}

static void unknown_flag_refused(unsigned int flag, const char *what)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.send_flags = IBV_SEND_SIGNALED | flag;
	expect_refused(qp, &wr, EINVAL, what);
}

Test(post_send_flags, ip_csum_refused)
{
	/* no checksum offload in device_cap_flags: the flag is not valid on droce's QPs */
	unknown_flag_refused(IBV_SEND_IP_CSUM, "IBV_SEND_IP_CSUM");
}

Test(post_send_flags, unknown_bit_5_refused)
{
	unknown_flag_refused(1u << 5, "send_flags bit 5");
}

Test(post_send_flags, unknown_bit_31_refused)
{
	unknown_flag_refused(1u << 31, "send_flags bit 31");
}
