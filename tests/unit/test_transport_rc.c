/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC: every opcode and size, limits and ordering, wire fields.
 * Two transport QPs without a port (rc_pair.h).
 */
#include "rc_pair.h"

TestSuite(transport_rc, .init = setup_rc, .fini = teardown, .timeout = 120);

/* ------------------------------------------------------------ opcodes and sizes */

Test(transport_rc, send_every_size)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		unsigned int before = a.frames;
		struct ibv_wc wc;

		fill(a.buf, len, i);
		memset(b.buf, 0xee, len + 16);
		post_recv(&b, 100 + i, 0, MIB + 16);
		cr_assert_eq(post_wr(&a, i,
				     &(struct wr_args){.op = IBV_WR_SEND,
						       .len = len,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
		pump();
		cr_expect_eq(a.frames - before, pkts_of(len), "size %u: packets", len);
		wc = wc_of(&a, i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "size %u: %s", len,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.opcode, IBV_WC_SEND);
		wc = wc_of(&b, 100 + i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "size %u: %s", len,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.opcode, IBV_WC_RECV);
		cr_expect_eq(wc.byte_len, len, "size %u", len);
		cr_expect_eq(wc.src_qp, a.tqp.qpn);
		cr_expect(memcmp(b.buf, a.buf, len) == 0, "size %u: bytes", len);
		cr_expect_eq(b.buf[len], 0xee, "size %u: nothing beyond", len);
	}
	cr_expect_eq(bad_frames, 0);
}

Test(transport_rc, write_every_size)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		struct ibv_wc wc;

		fill(a.buf, len, i + 3);
		memset(b.buf + 64, 0xee, len + 16);
		cr_assert_eq(post_wr(&a, i,
				     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
						       .len = len,
						       .roff = 64,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
		pump();
		wc = wc_of(&a, i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "size %u: %s", len,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.opcode, IBV_WC_RDMA_WRITE);
		cr_expect(memcmp(b.buf + 64, a.buf, len) == 0, "size %u: bytes", len);
		cr_expect_eq(b.buf[64 + len], 0xee, "size %u: nothing beyond", len);
		cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "a WRITE consumes no receive WQE");
	}
}

Test(transport_rc, read_every_size)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		struct ibv_wc wc;

		fill(b.buf + 128, len, i + 5);
		memset(a.buf, 0xee, len + 16);
		cr_assert_eq(post_wr(&a, i,
				     &(struct wr_args){.op = IBV_WR_RDMA_READ,
						       .len = len,
						       .roff = 128,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
		pump();
		wc = wc_of(&a, i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "size %u: %s", len,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.opcode, IBV_WC_RDMA_READ);
		cr_expect_eq(wc.byte_len, len);
		cr_expect(memcmp(a.buf, b.buf + 128, len) == 0, "size %u: bytes", len);
		cr_expect_eq(a.buf[len], 0xee, "size %u: nothing beyond", len);
	}
}

Test(transport_rc, send_with_imm)
{
	struct ibv_wc wc;

	post_recv(&b, 10, 0, 4096);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND_WITH_IMM,
					       .len = 2000,
					       .imm_or_rkey = 0xabcd1234,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_expect_eq(be32toh(wc.imm_data), 0xabcd1234);
	cr_expect_eq(wc.byte_len, 2000);
}

Test(transport_rc, write_with_imm_consumes_a_receive)
{
	struct ibv_wc wc;

	fill(a.buf, 3000, 9);
	post_recv(&b, 11, 0, 16);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE_WITH_IMM,
					       .len = 3000,
					       .roff = 8192,
					       .imm_or_rkey = 77,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	wc = wc_of(&b, 11);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_expect_eq(wc.byte_len, 3000);
	cr_expect_eq(be32toh(wc.imm_data), 77);
	cr_expect(memcmp(b.buf + 8192, a.buf, 3000) == 0);
}

Test(transport_rc, atomics)
{
	uint64_t *remote = (uint64_t *)(b.buf + 4096), *local = (uint64_t *)a.buf;
	struct ibv_wc wc;

	*remote = 100;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_ATOMIC_FETCH_AND_ADD,
					       .len = 8,
					       .roff = 4096,
					       .compare_add = 5,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_FETCH_ADD);
	cr_expect_eq(*local, 100, "the original value");
	cr_expect_eq(*remote, 105);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_ATOMIC_CMP_AND_SWP,
					       .len = 8,
					       .roff = 4096,
					       .compare_add = 105,
					       .swap = 7,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.opcode, IBV_WC_COMP_SWAP);
	cr_expect_eq(*local, 105);
	cr_expect_eq(*remote, 7, "swapped");
	cr_assert_eq(post_wr(&a, 3,
			     &(struct wr_args){.op = IBV_WR_ATOMIC_CMP_AND_SWP,
					       .len = 8,
					       .roff = 4096,
					       .compare_add = 1,
					       .swap = 9,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 3);
	cr_expect_eq(*local, 7);
	cr_expect_eq(*remote, 7, "compare failed: unchanged");
}

Test(transport_rc, inline_send)
{
	struct ibv_wc wc;

	fill(a.buf, 100, 1);
	post_recv(&b, 10, 0, 4096);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .len = 100,
					       .flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE}),
		     0);
	memset(a.buf, 0, 100); /* the bytes were copied at post */
	fill(a.buf + 4096, 100, 1);
	pump();
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 100);
	cr_expect(memcmp(b.buf, a.buf + 4096, 100) == 0);
}

Test(transport_rc, bind_mw_then_send_with_invalidate)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {.wr_id = 50,
				 .opcode = IBV_WR_BIND_MW,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct ibv_wc wc;

	cr_assert_not_null(mw);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info =
		(struct ibv_mw_bind_info){.mr = b.mr,
					  .addr = (uintptr_t)b.buf,
					  .length = 4096,
					  .mw_access_flags = IBV_ACCESS_REMOTE_WRITE};
	cr_assert_eq(ibv_post_send(b.qp, &wr, &bad), 0);
	pump();
	wc = wc_of(&b, 50);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_BIND_MW);
	post_recv(&b, 51, 8192, 4096);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND_WITH_INV,
					       .len = 10,
					       .imm_or_rkey = wr.bind_mw.rkey,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 51);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect(wc.wc_flags & IBV_WC_WITH_INV);
	cr_expect_eq(wc.invalidated_rkey, wr.bind_mw.rkey);
	/* the window is gone: a WRITE through it is a remote access error */
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = 8,
					       .rkey = wr.bind_mw.rkey,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
}

Test(transport_rc, local_invalidate_of_a_window)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {.wr_id = 60, .opcode = IBV_WR_BIND_MW}, *bad;
	struct ibv_wc wc;

	cr_assert_not_null(mw);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){.mr = a.mr,
							 .addr = (uintptr_t)a.buf,
							 .length = 64,
							 .mw_access_flags = IBV_ACCESS_REMOTE_READ};
	cr_assert_eq(ibv_post_send(a.qp, &wr, &bad), 0);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 61;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = ibv_inc_rkey(mw->rkey);
	cr_assert_eq(ibv_post_send(a.qp, &wr, &bad), 0);
	pump();
	wc = wc_of(&a, 61);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_LOCAL_INV);
}

Test(transport_rc, unsignaled_complete_silently)
{
	struct ibv_wc wc;

	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_WRITE, .len = 10}), 0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = 10,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(harness_send_pending(a.qp), 0, "both slots released");
}

Test(transport_rc, solicited_event)
{
	post_recv(&b, 10, 0, 64);
	post_recv(&b, 11, 0, 64);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 8}), 0);
	pump();
	cr_expect_eq(solicited_events, 0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 8, .flags = IBV_SEND_SOLICITED}),
		     0);
	pump();
	cr_expect(last_a.se, "SE on the last packet");
	cr_expect_eq(solicited_events, 1);
}

Test(transport_rc, frame_fields)
{
	post_recv(&b, 10, 0, 4096);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 8}), 0);
	pump();
	cr_expect_eq(last_a.opcode, DROCE_OP_RC_SEND_ONLY);
	cr_expect_eq(last_a.dqpn, b.tqp.qpn);
	cr_expect_eq(last_a.pkey, 0xffff);
	cr_expect(last_a.ackreq);
	cr_expect_eq(last_a.psn, 0xfffff0);
}

/* ------------------------------------------------------------ limits and ordering */

static struct droce_hdr_fields seen[64];
static unsigned int nseen;

static enum fault record_a(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)n;
	if (from == &a && nseen < 64) {
		struct droce_hdr_fields f = {.opcode = pkt->opcode, .psn = pkt->psn};

		seen[nseen++] = f;
	}
	return PASS;
}

Test(transport_rc, fence_waits_for_the_read)
{
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_READ, .len = 3000}), 0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = 8,
					       .flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED}),
		     0);
	fault = record_a;
	droce_tqp_send(&a.env, &a.tqp, 0, 32);
	cr_expect_eq(nseen, 1, "the fenced WRITE waits");
	pump();
	cr_expect_eq(nseen, 2);
	cr_expect_eq(seen[1].opcode, DROCE_OP_RC_WRITE_ONLY);
	cr_expect_eq(wc_of(&a, 2).status, IBV_WC_SUCCESS);
}

Test(transport_rc, max_rd_atomic_limits_reads)
{
	struct ibv_qp_attr attr = {.max_rd_atomic = 1};

	droce_tqp_modify(&a.env, &a.tqp, &attr, IBV_QP_MAX_QP_RD_ATOMIC, IBV_QPS_RTS);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_READ, .len = 10}), 0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_READ,
					       .len = 10,
					       .off = 100,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	fault = record_a;
	droce_tqp_send(&a.env, &a.tqp, 0, 32);
	cr_expect_eq(nseen, 1, "one READ outstanding at most");
	pump();
	cr_expect_eq(nseen, 2);
	cr_expect_eq(wc_of(&a, 2).status, IBV_WC_SUCCESS);
}

Test(transport_rc, read_takes_the_psns_of_its_response)
{
	fault = record_a;
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_READ, .len = 3 * PMTU}), 0);
	cr_assert_eq(post_wr(&a, 2, &(struct wr_args){.op = IBV_WR_RDMA_WRITE, .len = 8}), 0);
	pump();
	cr_assert_eq(nseen, 2);
	cr_expect_eq(seen[1].psn, (0xfffff0 + 3) & 0xffffff);
}

Test(transport_rc, reads_beyond_responder_resources_are_refused)
{
	struct ibv_qp_attr attr = {.max_dest_rd_atomic = 1};
	struct ibv_wc wc;

	/* the requester may have 4 READs outstanding, the responder keeps 1: a mismatch */
	droce_tqp_modify(&b.env, &b.tqp, &attr, IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QPS_RTS);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_READ,
					       .len = 4096,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_READ,
					       .len = 10,
					       .off = 8192,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	cr_expect_eq(b.tqp.state, IBV_QPS_ERR,
		     "the second READ found no free resource: invalid request, not an overwrite");
	cr_assert_eq(ibv_poll_cq(a.cq, 1, &wc), 1);
	cr_expect_neq(wc.status, IBV_WC_SUCCESS, "the requester learns of it: %s",
		      ibv_wc_status_str(wc.status));
}
