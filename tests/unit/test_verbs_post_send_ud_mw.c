/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_post_send(): UD addressing (the AH and its PD, remote QPN and Q_Key,
 * messages up to the path MTU) and the memory-window and invalidation
 * operations (BIND_MW, LOCAL_INV, SEND_WITH_INV). Harness: post_send_harness.h.
 *
 * Decisions of droce checked here (the seed leaves them open):
 * - BIND_MW through ibv_post_send() binds type-2 windows; type 1 goes through
 *   ibv_bind_mw().
 * - A UD remote_qpn above 24 bits is refused.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "post_send_harness.h"

TestSuite(post_send_ud, .init = setup);
TestSuite(post_send_mw, .init = setup);

/* ------------------------------------------------------------ UD */

Test(post_send_ud, ah_required)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.wr.ud.ah = NULL;
	expect_refused(qp, &wr, EINVAL, "UD SEND without an AH");
}

Test(post_send_ud, ah_of_another_pd_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	cr_assert_not_null(pd2, "second PD");
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.wr.ud.ah = ah_new(pd2);
	expect_refused(qp, &wr, EINVAL, "UD SEND with an AH of another PD");
}

Test(post_send_ud, remote_qpn_and_qkey_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND_WITH_IMM, &wr, &sge);
	wr.wr.ud.remote_qpn = 0xabcdef;
	wr.wr.ud.remote_qkey = 0x80010002;
	expect_posted(qp, &wr, &s, "UD SEND_WITH_IMM");
	cr_expect_eq(s.hdr.u.ud.remote_qpn, 0xabcdef, "remote_qpn 0x%x", s.hdr.u.ud.remote_qpn);
	cr_expect_eq(s.hdr.u.ud.remote_qkey, 0x80010002, "remote_qkey 0x%x",
		     s.hdr.u.ud.remote_qkey);
	cr_expect_eq(s.hdr.imm, htonl(0x01020304), "imm 0x%08x", s.hdr.imm);
}

Test(post_send_ud, each_wr_carries_its_own_ah)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_ah *ah2 = ah_new(pd);
	struct ibv_send_wr wr[2], *bad = NULL;
	struct ibv_sge sge[2];
	struct harness_send s0, s1;

	wr_fill(qp, IBV_WR_SEND, &wr[0], &sge[0]);
	wr_fill(qp, IBV_WR_SEND, &wr[1], &sge[1]);
	wr[1].wr.ud.ah = ah2;
	wr[0].next = &wr[1];
	cr_assert_eq(ibv_post_send(qp, wr, &bad), 0, "two UD SENDs");
	cr_assert(harness_take_send(qp, &s0), "WQE 0");
	cr_assert(harness_take_send(qp, &s1), "WQE 1");
	cr_expect_neq(s0.hdr.u.ud.ah, s1.hdr.u.ud.ah, "two AHs, two AH ids in the WQEs");
}

Test(post_send_ud, multicast_qpn_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.wr.ud.remote_qpn = 0xffffff;
	expect_posted(qp, &wr, &s, "UD SEND to QPN 0xFFFFFF (multicast)");
	cr_expect_eq(s.hdr.u.ud.remote_qpn, 0xffffff, "remote_qpn 0x%x", s.hdr.u.ud.remote_qpn);
}

Test(post_send_ud, qpn_above_24_bits_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.wr.ud.remote_qpn = 0x1000000;
	expect_refused(qp, &wr, EINVAL, "UD remote_qpn 0x1000000");
}

static uint32_t path_mtu_bytes(void)
{
	struct ibv_port_attr pa;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0, "query_port");
	return 128u << pa.active_mtu;
}

Test(post_send_ud, message_of_path_mtu_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	sge.length = path_mtu_bytes();
	expect_posted(qp, &wr, &s, "UD SEND of one path MTU");
	cr_expect_eq(s.hdr.length, path_mtu_bytes(), "length %u", s.hdr.length);
}

Test(post_send_ud, message_above_path_mtu_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	sge.length = path_mtu_bytes() + 1;
	expect_refused(qp, &wr, EINVAL, "UD SEND of path MTU + 1 bytes");
}

Test(post_send_ud, message_above_path_mtu_across_sges_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_sge sge[2];
	struct ibv_send_wr wr;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge[0]);
	sge[0].length = path_mtu_bytes();
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey};
	wr.num_sge = 2;
	expect_refused(qp, &wr, EINVAL, "UD SEND of path MTU + 1 bytes in two SGEs");
}

Test(post_send_ud, sge_length_0_above_mtu_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	sge.length = 0; /* 2^31 bytes */
	expect_refused(qp, &wr, EINVAL, "UD SEND of 2^31 bytes");
}

/* ------------------------------------------------------------ memory windows, invalidation */

Test(post_send_mw, bind_type2_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;
	uint32_t old = the_mw2()->rkey;

	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	wr.bind_mw.rkey = (old & 0xffffff00u) | 0x5a;
	wr.bind_mw.bind_info.addr = (uintptr_t)buf + 512;
	wr.bind_mw.bind_info.length = 1024;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	expect_posted(qp, &wr, &s, "BIND_MW of a type-2 window");
	cr_expect_eq(s.hdr.op, DROCE_WQE_BIND_MW, "WQE op %u", s.hdr.op);
	cr_expect_eq(s.hdr.imm, 2, "window type %u", s.hdr.imm);
	cr_expect_eq(s.hdr.u.bind.new_rkey, (old & 0xffffff00u) | 0x5a, "new rkey 0x%x",
		     s.hdr.u.bind.new_rkey);
	cr_expect_eq(s.hdr.u.bind.mr_lkey, mr->lkey, "MR key");
	cr_expect_eq(s.hdr.u.bind.addr, (uintptr_t)buf + 512, "window address");
	cr_expect_eq(s.hdr.u.bind.length, 1024, "window length");
	cr_expect_eq(s.hdr.u.bind.access, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		     "window access 0x%x", s.hdr.u.bind.access);
	cr_expect(s.hdr.flags & DROCE_WQE_SIGNALED, "signaled");
	cr_expect_eq(s.hdr.num_sge, 0, "no SGE");
}

Test(post_send_mw, bind_type2_uc_accepted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	expect_posted(qp, &wr, &s, "BIND_MW on UC");
	cr_expect_eq(s.hdr.op, DROCE_WQE_BIND_MW, "WQE op %u", s.hdr.op);
}

Test(post_send_mw, bind_rkey_of_another_index_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	wr.bind_mw.rkey = the_mw2()->rkey + 0x100; /* the next index */
	expect_refused(qp, &wr, EINVAL, "BIND_MW with a key of another index");
}

Test(post_send_mw, bind_type1_through_post_send_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	cr_assert_not_null(mw1, "type-1 window");
	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	wr.bind_mw.mw = mw1;
	wr.bind_mw.rkey = ibv_inc_rkey(mw1->rkey);
	expect_refused(qp, &wr, EINVAL, "BIND_MW of a type-1 window (ibv_bind_mw's job)");
}

Test(post_send_mw, bind_window_of_another_pd_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mw *w;
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	cr_assert_not_null(pd2, "second PD");
	w = ibv_alloc_mw(pd2, IBV_MW_TYPE_2);
	cr_assert_not_null(w, "window in the second PD");
	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	wr.bind_mw.mw = w;
	wr.bind_mw.rkey = ibv_inc_rkey(w->rkey);
	expect_refused(qp, &wr, EINVAL, "BIND_MW of a window of another PD");
}

Test(post_send_mw, bind_without_window_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	wr.bind_mw.mw = NULL;
	expect_refused(qp, &wr, EINVAL, "BIND_MW without a window");
}

Test(post_send_mw, bind_with_sges_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_BIND_MW, &wr, &sge);
	sge = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 8, .lkey = 1};
	wr.sg_list = &sge;
	wr.num_sge = 1;
	expect_refused(qp, &wr, EINVAL, "BIND_MW with an SGE");
}

Test(post_send_mw, local_inv_carries_rkey)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_LOCAL_INV, &wr, &sge);
	wr.invalidate_rkey = 0x00c0ffee;
	expect_posted(qp, &wr, &s, "LOCAL_INV");
	cr_expect_eq(s.hdr.op, DROCE_WQE_LOCAL_INV, "WQE op %u", s.hdr.op);
	cr_expect_eq(s.hdr.imm, 0x00c0ffee, "rkey to invalidate 0x%x", s.hdr.imm);
	cr_expect_eq(s.hdr.length, 0, "no data");
}

Test(post_send_mw, local_inv_with_sges_refused)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_LOCAL_INV, &wr, &sge);
	sge = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 8, .lkey = 1};
	wr.sg_list = &sge;
	wr.num_sge = 1;
	expect_refused(qp, &wr, EINVAL, "LOCAL_INV with an SGE");
}

Test(post_send_mw, send_with_inv_carries_rkey)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND_WITH_INV, &wr, &sge);
	wr.invalidate_rkey = 0x0badcafe;
	expect_posted(qp, &wr, &s, "SEND_WITH_INV");
	cr_expect_eq(s.hdr.op, DROCE_WQE_SEND_INV, "WQE op %u", s.hdr.op);
	cr_expect_eq(s.hdr.imm, 0x0badcafe, "rkey to invalidate 0x%x", s.hdr.imm);
	cr_expect_eq(s.hdr.length, 64, "the send's data");
}

Test(post_send_mw, local_inv_completion_opcode)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;

	wr_fill(qp, IBV_WR_LOCAL_INV, &wr, &sge);
	wr.send_flags = IBV_SEND_SIGNALED;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0, "post LOCAL_INV");
	cr_expect_eq(harness_complete_sends(qp, IBV_WC_SUCCESS), 1, "the engine runs it");
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "one completion");
	cr_expect_eq(wc.opcode, IBV_WC_LOCAL_INV, "opcode %d", wc.opcode);
	cr_expect_eq(wc.wr_id, wr.wr_id, "wr_id");
}
