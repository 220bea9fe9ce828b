/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UC: sizes, immediate data, gaps, late and duplicate packets, no ACKs.
 * Two transport QPs without a port (rc_pair.h).
 */
#include "rc_pair.h"

TestSuite(transport_uc, .init = setup_uc, .fini = teardown, .timeout = 120);

Test(transport_uc, send_write_every_size)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		struct ibv_wc wc;

		fill(a.buf, len, i);
		post_recv(&b, 100 + i, 0, MIB + 16);
		cr_assert_eq(post_wr(&a, i,
				     &(struct wr_args){.op = IBV_WR_SEND,
						       .len = len,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
		cr_assert_eq(post_wr(&a, 50 + i,
				     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
						       .len = len,
						       .roff = MIB,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
		pump();
		cr_expect_eq(wc_of(&a, i).status, IBV_WC_SUCCESS);
		cr_expect_eq(wc_of(&a, 50 + i).status, IBV_WC_SUCCESS);
		wc = wc_of(&b, 100 + i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS);
		cr_expect_eq(wc.byte_len, len);
		cr_expect(memcmp(b.buf, a.buf, len) == 0, "size %u: SEND bytes", len);
		cr_expect(memcmp(b.buf + MIB, a.buf, len) == 0, "size %u: WRITE bytes", len);
	}
	cr_expect_eq(b.frames, 0, "UC sends no acknowledgement");
}

Test(transport_uc, write_with_imm)
{
	struct ibv_wc wc;

	post_recv(&b, 10, 0, 16);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE_WITH_IMM,
					       .len = 1500,
					       .roff = 4096,
					       .imm_or_rkey = 5}),
		     0);
	pump();
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_expect_eq(be32toh(wc.imm_data), 5);
}

Test(transport_uc, gap_drops_the_message_and_reuses_the_receive)
{
	struct ibv_wc wc;

	target = 1;
	fault = drop_a_nth;
	post_recv(&b, 10, 0, 8192);
	fill(a.buf, 3 * PMTU, 1);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .len = 3 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS, "UC completes once sent");
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "the broken message is dropped");
	cr_expect_eq(b.tqp.stats.out_of_sequence, 1);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .off = 8192,
					       .len = 100,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 100, "the next message takes the same receive WQE");
}

Test(transport_uc, write_with_imm_without_receive_drops)
{
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE_WITH_IMM,
					       .len = 8,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	cr_expect_eq(b.tqp.stats.out_of_buffer, 1);
	cr_expect_eq(b.frames, 0, "no RNR NAK on UC");
}

Test(transport_uc, no_receive_drops)
{
	struct ibv_wc wc;

	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .len = 2 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	cr_expect_eq(b.tqp.stats.out_of_buffer, 1, "the message, at its first packet");
	cr_expect_eq(b.tqp.stats.uc_msg_drop, 1, "its last packet, out of sequence");
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0);
}

/* UC never goes back: a duplicate is dropped, the message arrives once. */
Test(transport_uc, duplicate_packet_delivers_once)
{
	struct ibv_wc wc;

	target = 0;
	fault = dup_a_nth;
	post_recv(&b, 10, 0, 8192);
	post_recv(&b, 11, 8192, 8192);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 100, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 100);
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "no second delivery");
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
}

/* A message overtaken by the next one is lost, not delivered late: UC keeps the order. */
Test(transport_uc, late_packet_dropped_order_kept)
{
	struct ibv_wc wc;

	target = 0;
	fault = hold_a_nth;
	post_recv(&b, 10, 0, 8192);
	post_recv(&b, 11, 8192, 8192);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 100, .flags = IBV_SEND_SIGNALED}),
		     0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .off = 8192,
					       .len = 200,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	cr_expect_eq(wc_of(&a, 2).status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 200, "the second message arrived first");
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "the first, late, is dropped");
	cr_expect_eq(b.tqp.stats.out_of_sequence, 1);
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
}

/* ------------------------------------------------------------ class D: the message only */

Test(transport_uc, write_with_a_bad_rkey_drops_the_message_only)
{
	fill(a.buf, 3 * PMTU, 2);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = 3 * PMTU,
					       .rkey = b.mr->rkey ^ 0x100,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS, "UC completes once sent");
	cr_expect_eq(b.tqp.state, IBV_QPS_RTS, "UC has no NAK: the QP stays in RTS");
	cr_expect_geq(b.tqp.stats.uc_msg_drop, 1);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = 3 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect(memcmp(b.buf, a.buf, 3 * PMTU) == 0, "the next WRITE lands");
}

Test(transport_uc, send_longer_than_the_receive_is_dropped_and_the_receive_kept)
{
	struct ibv_wc wc;

	post_recv(&b, 10, 0, 1000);
	fill(a.buf, 3 * PMTU, 3);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .len = 3 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "no completion for the dropped message");
	cr_expect_eq(b.tqp.state, IBV_QPS_RTS, "UC has no NAK: the QP stays in RTS");
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 500, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, 500, "the next message takes the same receive WQE");
	cr_expect(memcmp(b.buf, a.buf, 500) == 0, "bytes");
}

/*
 * On an SRQ a message longer than the WQE is IBTA's class E: the WQE taken from the SRQ is
 * consumed and completes with IBV_WC_REM_INV_REQ_ERR (ibv_post_srq_recv(3), Linux rxe), the
 * rest of the message is dropped, the QP stays in RTS and the SRQ's next WQE takes the next
 * message.
 */
Test(transport_uc, send_longer_than_the_srq_receive_completes_it_in_error)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_sge sge = {.addr = (uintptr_t)b.buf, .length = 1000, .lkey = b.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 10, .sg_list = &sge, .num_sge = 1}, *bad;
	struct droce_srq_view v;
	struct droce_ring_cons ring;
	struct ibv_wc wc;

	cr_assert_not_null(srq);
	cr_assert_eq(droce_verbs_srq_view(srq, &v), 0);
	cr_assert_eq(droce_ring_cons_attach(&ring, v.ring.addr, v.ring.len), 0);
	b.tqp.srq = &ring;
	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	wr.wr_id = 11;
	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	fill(a.buf, 3 * PMTU, 4);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .len = 3 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.status, IBV_WC_REM_INV_REQ_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "one completion for the message");
	cr_expect_eq(droce_ring_cons_avail(&ring), 1, "the WQE consumed, the other posted");
	cr_expect_eq(b.tqp.state, IBV_QPS_RTS, "UC has no NAK: the QP stays in RTS");
	cr_expect_eq(b.tqp.stats.resp_local_length_error, 1, "counted once");
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 500, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	wc = wc_of(&b, 11);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, 500, "the next message takes the SRQ's next WQE");
	cr_expect(memcmp(b.buf, a.buf, 500) == 0, "bytes");
	b.tqp.srq = NULL;
}

Test(transport_uc, a_failed_local_invalidate_stops_the_requester)
{
	struct ibv_send_wr wr = {.opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = 0x12345600};

	failed_local_op_stops_the_requester(&wr, IBV_WC_LOC_PROT_ERR);
}

Test(transport_uc, unreachable_path_gives_the_message_up)
{
	unreachable = true;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS, "UC completes once sent");
	cr_expect_eq(a.frames, 0, "nothing reached the link");
	cr_expect_eq(a.tqp.stats.neigh_drop, 1);
	unreachable = false;
}

/* ------------------------------------------------ local errors: Send Queue Error */

Test(transport_uc, a_local_error_stops_the_send_queue_only)
{
	struct ibv_qp_attr rts = {.qp_state = IBV_QPS_RTS};
	struct ibv_wc wc;

	/* a bad lkey: LOC_PROT_ERR, the QP in SQE, the WQE behind it flushed */
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .len = 100,
					       .lkey = a.mr->lkey ^ 0x100,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 100, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	pump(); /* the pass after the failure flushes (the engine loops anyway) */
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_LOC_PROT_ERR);
	cr_expect_eq(a.tqp.state, IBV_QPS_SQE, "UC: Send Queue Error, not Error");
	cr_expect_eq(wc_of(&a, 2).status, IBV_WC_WR_FLUSH_ERR);
	cr_expect_eq(a.frames, 0, "nothing sent");
	/* the receive side of the same QP still works */
	post_recv(&a, 20, 0, 4096);
	fill(b.buf, 700, 9);
	cr_assert_eq(post_wr(&b, 3,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 700, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&b, 3).status, IBV_WC_SUCCESS);
	wc = wc_of(&a, 20);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "a QP in SQE receives: %s",
		     ibv_wc_status_str(wc.status));
	cr_expect(memcmp(a.buf, b.buf, 700) == 0, "bytes");
	/* SQE -> RTS: sending again, the receiver takes the new message */
	droce_tqp_modify(&a.env, &a.tqp, &rts, IBV_QP_STATE, IBV_QPS_RTS);
	cr_expect_eq(a.tqp.state, IBV_QPS_RTS);
	post_recv(&b, 30, 0, 4096);
	fill(a.buf, 3 * PMTU, 4);
	cr_assert_eq(post_wr(&a, 4,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .len = 3 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(wc_of(&a, 4).status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 30);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, 3 * PMTU);
	cr_expect(memcmp(b.buf, a.buf, 3 * PMTU) == 0, "bytes");
}
