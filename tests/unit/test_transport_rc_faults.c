/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC under chosen losses, duplicates and reordering, and every error completion.
 * Two transport QPs without a port (rc_pair.h).
 */
#include <poll.h>

#include "rc_pair.h"

TestSuite(transport_rc, .init = setup_rc, .fini = teardown, .timeout = 120);

Test(transport_rc, lost_middle_packet_nak_and_go_back)
{
	target = 4;
	fault = drop_a_nth;
	send_and_check(10 * PMTU, 1);
	cr_expect_eq(b.tqp.stats.out_of_sequence, 1, "one NAK per gap");
	cr_expect_eq(a.tqp.stats.packet_seq_err, 1);
	cr_expect_eq(a.frames, 10 + 6, "packets 4..9 sent again");
}

Test(transport_rc, duplicate_packet_ignored)
{
	target = 2;
	fault = dup_a_nth;
	send_and_check(5 * PMTU, 1);
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
}

Test(transport_rc, reordered_packets_recovered)
{
	target = 1;
	fault = hold_a_nth;
	send_and_check(5 * PMTU, 1);
	cr_expect_geq(b.tqp.stats.out_of_sequence, 1);
	cr_expect_geq(a.tqp.stats.packet_seq_err, 1);
}

Test(transport_rc, lost_last_packet_retransmitted_on_timeout)
{
	target = 2;
	fault = drop_a_nth;
	send_and_check(3 * PMTU, 1);
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 1);
}

Test(transport_rc, lost_ack_duplicate_reacked)
{
	target = 0;
	fault = drop_b_nth;
	send_and_check(100, 1);
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 1);
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
}

Test(transport_rc, lost_read_response_re_requested)
{
	struct ibv_wc wc;

	fill(b.buf, 8 * PMTU, 4);
	target = 3; /* the fourth response packet */
	fault = drop_b_nth;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_READ,
					       .len = 8 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect(memcmp(a.buf, b.buf, 8 * PMTU) == 0);
	cr_expect_eq(a.tqp.stats.implied_nak_seq_err, 1);
	cr_expect_eq(b.tqp.stats.duplicate_request, 1, "the re-request is a duplicate READ");
}

Test(transport_rc, lost_atomic_ack_replayed_not_reexecuted)
{
	uint64_t *remote = (uint64_t *)(b.buf + 64), *local = (uint64_t *)a.buf;
	struct ibv_wc wc;

	*remote = 1000;
	target = 0;
	fault = drop_b_nth;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_ATOMIC_FETCH_AND_ADD,
					       .len = 8,
					       .roff = 64,
					       .compare_add = 1,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(*local, 1000);
	cr_expect_eq(*remote, 1001, "executed once");
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
}

/*
 * A duplicate atomic whose replay is still waiting to be sent when a new atomic needs its
 * responder resource: the requester has completed the original (it could not issue past
 * max_rd_atomic otherwise), so the replay is given up and the new atomic executes. Seen
 * under random loss when a response and the timeout that resent its request crossed: the
 * responder used to NAK the new request as invalid and end the QP.
 */
Test(transport_rc, replay_waiting_gives_its_resource_to_a_new_atomic)
{
	uint64_t *remote = (uint64_t *)(b.buf + 64);
	struct ibv_wc wc;
	struct wr_args fadd = {.op = IBV_WR_ATOMIC_FETCH_AND_ADD,
			       .len = 8,
			       .roff = 64,
			       .compare_add = 1,
			       .flags = IBV_SEND_SIGNALED};

	*remote = 500;
	target = 0;
	fault = stash_a_nth; /* a copy of the first atomic's request, for later */
	for (uint64_t i = 1; i <= 4; i++) {
		fadd.off = (uint32_t)(8 * i);
		cr_assert_eq(post_wr(&a, i, &fadd), 0);
	}
	settle();
	for (uint64_t i = 1; i <= 4; i++)
		cr_assert_eq(wc_of(&a, i).status, IBV_WC_SUCCESS);
	/* all four resources used; the next new atomic takes the first one's */
	cr_assert_not_null(stashed);
	inject(&b, stashed); /* the duplicate first: its replay waits for B's send pass */
	stashed = NULL;
	fadd.off = 40;
	cr_assert_eq(post_wr(&a, 5, &fadd), 0);
	settle();
	wc = wc_of(&a, 5);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(*(uint64_t *)(a.buf + 40), 504, "the fifth saw the fourth's result");
	cr_expect_eq(*remote, 505, "each executed once");
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
	cr_expect_eq(b.tqp.stats.resp_invalid_request, 0);
	cr_expect_eq(b.tqp.state, IBV_QPS_RTS);
}

Test(transport_rc, wrong_pkey_dropped_and_counted)
{
	struct ibv_wc wc;

	b.tqp.pkey = 0x1234; /* another partition than A's default one */
	post_recv(&b, 10, 0, 64);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(b.tqp.stats.pkey_violations, 1);
	cr_expect_eq(b.tqp.stats.rdma_recvs, 0);
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "the receive WQE is still posted");
}

Test(transport_rc, rnr_nak_then_retry)
{
	struct ibv_wc wc;

	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(b.tqp.stats.send_rnr_err, 1);
	cr_expect_eq(a.tqp.stats.rnr_nak_retry_err, 1);
	cr_expect_eq(ibv_poll_cq(a.cq, 1, &wc), 0, "waiting for the RNR timer");
	post_recv(&b, 10, 0, 64);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 10);
}

Test(transport_rc, rnr_retry_exceeded)
{
	struct ibv_qp_attr attr = {.rnr_retry = 2};
	struct ibv_wc wc;

	droce_tqp_modify(&a.env, &a.tqp, &attr, IBV_QP_RNR_RETRY, IBV_QPS_RTS);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 10}), 0);
	cr_assert_eq(post_wr(&a, 2, &(struct wr_args){.op = IBV_WR_SEND, .len = 10}), 0);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_RNR_RETRY_EXC_ERR);
	cr_expect_eq(a.tqp.stats.rnr_nak_retry_err, 2, "three RNR NAKs, two retried");
	cr_expect_eq(a.tqp.stats.req_rnr_retries_exceeded, 1);
	cr_expect_eq(droce_verbs_qp_state(a.qp), IBV_QPS_ERR);
	pump();
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
}

static enum fault drop_b_odd(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	return from == &b && n % 2 == 1 ? DROP : PASS;
}

/*
 * A slow receiver behind a lossy link: every other RNR NAK is lost, each loss costs a
 * timeout. The RNR NAKs that arrive show the responder alive: with retry_cnt 1 the QP
 * keeps waiting (rnr_retry 7) instead of ending in RETRY_EXC_ERR at the second loss.
 */
Test(transport_rc, lost_rnr_naks_do_not_add_up_to_retry_exceeded)
{
	struct ibv_qp_attr attr = {.retry_cnt = 1};
	struct ibv_wc wc;

	droce_tqp_modify(&a.env, &a.tqp, &attr, IBV_QP_RETRY_CNT, IBV_QPS_RTS);
	fault = drop_b_odd;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	settle(); /* bounded: RNR goes on for ever */
	cr_expect_geq(a.tqp.stats.local_ack_timeout_err, 4, "several RNR NAKs were lost");
	cr_expect_eq(a.tqp.stats.req_transport_retries_exceeded, 0);
	cr_expect_eq(ibv_poll_cq(a.cq, 1, &wc), 0, "still waiting for a receive");
	fault = NULL;
	post_recv(&b, 10, 0, 64);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 10);
}

Test(transport_rc, retry_exceeded)
{
	struct ibv_qp_attr attr = {.retry_cnt = 2};
	struct ibv_wc wc;

	droce_tqp_modify(&a.env, &a.tqp, &attr, IBV_QP_RETRY_CNT, IBV_QPS_RTS);
	fault = drop_all_a;
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_WRITE, .len = 10}), 0);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR);
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 2, "three expiries, two retried");
	cr_expect_eq(a.tqp.stats.req_transport_retries_exceeded, 1);
	cr_expect_eq(a.frames, 3, "sent once and retried twice");
	cr_expect_eq(droce_verbs_qp_state(a.qp), IBV_QPS_ERR);
}

Test(transport_rc, remote_access_error)
{
	struct ibv_wc wc;

	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_RDMA_WRITE, .len = 10, .rkey = b.mr->rkey + 1}),
		     0);
	cr_assert_eq(post_wr(&a, 2, &(struct wr_args){.op = IBV_WR_RDMA_WRITE, .len = 10}), 0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	cr_expect_eq(droce_verbs_qp_state(a.qp), IBV_QPS_ERR);
	cr_expect_eq(droce_verbs_qp_state(b.qp), IBV_QPS_ERR);
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
}

Test(transport_rc, read_out_of_range_is_a_remote_access_error)
{
	struct ibv_wc wc;

	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_RDMA_READ, .len = 100, .roff = BUF_LEN - 50}),
		     0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
}

Test(transport_rc, qp_without_remote_write_is_an_access_error)
{
	struct ibv_qp_attr attr = {.qp_access_flags = IBV_ACCESS_REMOTE_ATOMIC};
	struct ibv_wc wc;

	droce_tqp_modify(&b.env, &b.tqp, &attr, IBV_QP_ACCESS_FLAGS, IBV_QPS_RTS);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_WRITE, .len = 8}), 0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "REMOTE_WRITE not granted on the QP");
}

Test(transport_rc, message_longer_than_the_receive_buffer)
{
	struct ibv_wc wc;

	post_recv(&b, 10, 0, 1500);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 3000}), 0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR);
	cr_expect_eq(droce_verbs_qp_state(b.qp), IBV_QPS_ERR);
}

Test(transport_rc, bad_receive_lkey_is_a_remote_operational_error)
{
	struct ibv_wc wc;

	post_recv_lkey(&b, 10, 0, 64, b.mr->lkey + 1);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 30}), 0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_OP_ERR);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR);
}

Test(transport_rc, bad_send_lkey_is_a_local_protection_error)
{
	struct ibv_wc wc;

	cr_assert_eq(
		post_wr(&a, 1,
			&(struct wr_args){.op = IBV_WR_SEND, .len = 30, .lkey = a.mr->lkey + 1}),
		0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR);
	cr_expect_eq(droce_verbs_qp_state(a.qp), IBV_QPS_ERR);
}

Test(transport_rc, bad_path_is_a_local_qp_operation_error)
{
	struct ibv_qp_attr attr = {.ah_attr = {.is_global = 1, .grh = {.sgid_index = 9}}};
	struct ibv_wc wc;

	droce_tqp_modify(&a.env, &a.tqp, &attr, IBV_QP_AV, IBV_QPS_RTS);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 30}), 0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_LOC_QP_OP_ERR);
}

Test(transport_rc, modify_to_error_flushes)
{
	struct ibv_qp_attr attr = {0};
	struct ibv_wc wc;

	post_recv(&b, 10, 0, 64);
	fault = drop_all_a;
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 30}), 0);
	pump();
	droce_tqp_modify(&a.env, &a.tqp, &attr, 0, IBV_QPS_ERR);
	droce_tqp_modify(&b.env, &b.tqp, &attr, 0, IBV_QPS_ERR);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
}

Test(transport_rc, many_messages_with_losses)
{
	unsigned int i;

	target = 7;
	fault = drop_a_nth;
	for (i = 0; i < 20; i++)
		post_recv(&b, 200 + i, i * 4096, 4096);
	fill(a.buf, 20 * 4096, 3);
	for (i = 0; i < 20; i++)
		cr_assert_eq(post_wr(&a, i,
				     &(struct wr_args){.op = IBV_WR_SEND,
						       .off = i * 4096,
						       .len = 4000,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
	settle();
	for (i = 0; i < 20; i++)
		cr_expect_eq(wc_of(&a, i).status, IBV_WC_SUCCESS);
	for (i = 0; i < 20; i++) {
		cr_expect_eq(wc_of(&b, 200 + i).byte_len, 4000);
		cr_expect(memcmp(b.buf + i * 4096, a.buf + i * 4096, 4000) == 0, "message %u", i);
	}
}

static unsigned int ackreqs;

static enum fault count_ackreq(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)n;
	(void)pkt;
	/* tx() read A's frame into last_a before asking */
	if (from == &a && last_a.ackreq)
		ackreqs++;
	return PASS;
}

Test(transport_rc, ackreq_on_last_and_every_64_packets)
{
	fault = count_ackreq;
	post_recv(&b, 10, 0, MIB);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = MIB}), 0);
	pump();
	cr_expect_eq(a.frames, 1024);
	cr_expect_eq(ackreqs, 16, "packets 63, 127, ... 1023");
}

Test(transport_rc, acks_coalesced_per_burst)
{
	for (int i = 0; i < 5; i++)
		post_recv(&b, 10 + (uint64_t)i, 0, 64);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(post_wr(&a, (uint64_t)i,
				     &(struct wr_args){.op = IBV_WR_SEND,
						       .len = 8,
						       .flags = IBV_SEND_SIGNALED}),
			     0);
	pump();
	cr_expect_eq(a.frames, 5);
	cr_expect_eq(b.frames, 1, "one ACK for the five messages");
	for (int i = 0; i < 5; i++)
		cr_expect_eq(wc_of(&a, (uint64_t)i).status, IBV_WC_SUCCESS);
}

Test(transport_rc, lost_read_request_retransmitted)
{
	struct ibv_wc wc;

	fill(b.buf, 2 * PMTU, 8);
	target = 0;
	fault = drop_a_nth;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_READ,
					       .len = 2 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect(memcmp(a.buf, b.buf, 2 * PMTU) == 0);
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 1);
}

Test(transport_rc, rnr_on_the_last_packet_of_a_write_with_imm)
{
	struct ibv_wc wc;

	fill(a.buf, 3 * PMTU, 2);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE_WITH_IMM,
					       .len = 3 * PMTU,
					       .roff = 4096,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(b.tqp.stats.send_rnr_err, 1);
	post_recv(&b, 10, 0, 0);
	settle();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.byte_len, 3 * PMTU);
	cr_expect(memcmp(b.buf + 4096, a.buf, 3 * PMTU) == 0);
	cr_expect_eq(a.frames, 4, "only the LAST packet is sent again");
}

Test(transport_rc, send_with_invalid_rkey_to_invalidate)
{
	struct ibv_wc wc;

	post_recv(&b, 10, 0, 64);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND_WITH_INV,
					       .len = 8,
					       .imm_or_rkey = 0x12345600}),
		     0);
	pump();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
	wc = wc_of(&b, 10);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR);
}

Test(transport_rc, bind_with_a_bad_mr_is_a_bind_error)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {.wr_id = 70, .opcode = IBV_WR_BIND_MW}, *bad;
	struct ibv_wc wc;

	cr_assert_not_null(mw);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){.mr = a.mr,
							 .addr = (uintptr_t)a.buf + BUF_LEN,
							 .length = 64,
							 .mw_access_flags = IBV_ACCESS_REMOTE_READ};
	cr_assert_eq(ibv_post_send(a.qp, &wr, &bad), 0);
	pump();
	wc = wc_of(&a, 70);
	cr_expect_eq(wc.status, IBV_WC_MW_BIND_ERR, "%s", ibv_wc_status_str(wc.status));
}

Test(transport_rc, send_into_an_srq)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct droce_srq_view v;
	struct droce_ring_cons ring;
	struct ibv_sge sge = {.addr = (uintptr_t)b.buf, .length = 4096, .lkey = b.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 80, .sg_list = &sge, .num_sge = 1}, *bad;
	struct ibv_wc wc;

	cr_assert_not_null(srq);
	cr_assert_eq(droce_verbs_srq_view(srq, &v), 0);
	cr_assert_eq(droce_ring_cons_attach(&ring, v.ring.addr, v.ring.len), 0);
	b.tqp.srq = &ring;
	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	fill(a.buf, 3000, 6);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 3000}), 0);
	pump();
	wc = wc_of(&b, 80);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, 3000);
	cr_expect(memcmp(b.buf, a.buf, 3000) == 0);
	b.tqp.srq = NULL;
}

static uint64_t rng = 88172645463325252ull;

/* 5 % dropped, 3 % duplicated, 3 % swapped with the next, both ways (fixed seed). */
static enum fault random_faults(const struct side *from, const struct droce_pkt *pkt,
				unsigned int n)
{
	uint64_t r;

	(void)from;
	(void)pkt;
	(void)n;
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	r = rng % 100;
	if (r < 5)
		return DROP;
	if (r < 8)
		return DUP;
	if (r < 11 && held == NULL)
		return HOLD;
	return PASS;
}

Test(transport_rc, random_faults_every_operation_exactly_once)
{
	static const uint32_t lens[] = {0, 1, 1000, 1024, 1025, 5000, 20000};
	uint64_t *counter = (uint64_t *)(b.buf + MIB + 4096);
	unsigned int i, n = 60;

	fault = random_faults;
	fill(a.buf, MIB, 11);
	fill(b.buf + MIB / 2, 256 * 1024, 12);
	*counter = 0;
	for (i = 0; i < n; i++)
		post_recv(&b, 1000 + i, (i % 16) * 32768, 32768);
	for (i = 0; i < n; i++) {
		uint32_t len = lens[i % 7];
		struct wr_args w = {
			.len = len, .off = (i % 16) * 32768, .flags = IBV_SEND_SIGNALED};

		switch (i % 4) {
		case 0:
			w.op = IBV_WR_SEND;
			break;
		case 1:
			w.op = IBV_WR_RDMA_WRITE;
			w.roff = MIB + 8192 + (i % 16) * 32768;
			break;
		case 2:
			w.op = IBV_WR_RDMA_READ;
			w.off = MIB + (i % 16) * 32768;
			w.roff = MIB / 2 + (i % 8) * 32768;
			break;
		default:
			w.op = IBV_WR_ATOMIC_FETCH_AND_ADD;
			w.len = 8;
			w.off = MIB + MIB / 2 + i * 8;
			w.roff = MIB + 4096;
			w.compare_add = 1;
			break;
		}
		cr_assert_eq(post_wr(&a, i, &w), 0);
		/* a few at a time: the receive buffers are reused every 16 */
		if (i % 8 == 7)
			settle();
	}
	settle();
	for (i = 0; i < n; i++) {
		struct ibv_wc wc = wc_of(&a, i);

		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "WR %u: %s", i,
			     ibv_wc_status_str(wc.status));
	}
	for (i = 0; i < n; i += 4) {
		struct ibv_wc wc = wc_of(&b, 1000 + i / 4);

		cr_expect_eq(wc.status, IBV_WC_SUCCESS);
		cr_expect_eq(wc.byte_len, lens[i % 7], "SEND %u", i);
		cr_expect(memcmp(b.buf + ((i / 4) % 16) * 32768, a.buf + (i % 16) * 32768,
				 lens[i % 7]) == 0,
			  "SEND %u bytes", i);
	}
	cr_expect_eq(*counter, n / 4, "every FETCH_ADD executed exactly once");
	for (i = 0; i < n; i++) {
		uint32_t len = lens[i % 7], off = (i % 16) * 32768;

		if (i % 4 == 1)
			cr_expect(memcmp(b.buf + MIB + 8192 + off, a.buf + off, len) == 0,
				  "WRITE %u", i);
		if (i % 4 == 2)
			cr_expect(memcmp(a.buf + MIB + off, b.buf + MIB / 2 + (i % 8) * 32768,
					 len) == 0,
				  "READ %u", i);
	}
	cr_expect_gt(a.tqp.stats.completer_retry_err, 0, "faults were recovered from");
}

Test(transport_rc, a_failed_bind_stops_the_requester)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {.opcode = IBV_WR_BIND_MW};

	cr_assert_not_null(mw);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){.mr = a.mr,
							 .addr = (uintptr_t)a.buf + BUF_LEN,
							 .length = 64,
							 .mw_access_flags = IBV_ACCESS_REMOTE_READ};
	failed_local_op_stops_the_requester(&wr, IBV_WC_MW_BIND_ERR);
}

Test(transport_rc, a_failed_local_invalidate_stops_the_requester)
{
	struct ibv_send_wr wr = {.opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = 0x12345600};

	failed_local_op_stops_the_requester(&wr, IBV_WC_LOC_PROT_ERR);
}

/*
 * A QP of an SRQ that goes to Error takes no more WQEs from it: after its error
 * event it raises Last WQE Reached, so that the application knows when it may
 * destroy it without losing an SRQ WQE.
 */
Test(transport_rc, an_srq_qp_in_error_raises_last_wqe_reached)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct droce_srq_view v;
	struct droce_ring_cons ring;
	struct ibv_sge sge = {.addr = (uintptr_t)b.buf, .length = 100, .lkey = b.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 80, .sg_list = &sge, .num_sge = 1}, *bad;
	struct ibv_async_event ev;
	struct ibv_wc wc;

	cr_assert_not_null(srq);
	cr_assert_eq(droce_verbs_srq_view(srq, &v), 0);
	cr_assert_eq(droce_ring_cons_attach(&ring, v.ring.addr, v.ring.len), 0);
	b.tqp.srq = &ring;
	b.tqp.srq_user = srq;
	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	/* longer than the WQE: the responder fails it and goes to Error */
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 200}), 0);
	pump();
	wc = wc_of(&b, 80);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	cr_expect_eq(ev.event_type, IBV_EVENT_QP_REQ_ERR, "%s", ibv_event_type_str(ev.event_type));
	cr_expect_eq(ev.element.qp, b.qp);
	ibv_ack_async_event(&ev);
	/* queued already (the pump ran the engine's part): never block for it */
	cr_assert_eq(poll(&(struct pollfd){.fd = ctx->async_fd, .events = POLLIN}, 1, 0), 1,
		     "no second event");
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	cr_expect_eq(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED, "%s",
		     ibv_event_type_str(ev.event_type));
	cr_expect_eq(ev.element.qp, b.qp);
	ibv_ack_async_event(&ev);
	b.tqp.srq = NULL;
}

/*
 * A path whose MAC nobody answers for (the neighbour table's resolution failed): what
 * is sent goes as into a dead link. RC: the retransmission timer ends the WQE with
 * RETRY_EXC_ERR and flushes the rest; UC: the message counts as sent and lost.
 */
static void unreachable_path(unsigned int first_flags)
{
	unreachable = true;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .len = 10,
					       .flags = IBV_SEND_SIGNALED | first_flags}),
		     0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	cr_expect_eq(a.frames, 0, "nothing reached the link");
	cr_expect_eq(b.tqp.stats.rcvd_pkts, 0);
	unreachable = false;
}

Test(transport_rc, unreachable_path_ends_in_retry_exceeded)
{
	struct ibv_wc wc;

	unreachable_path(0);
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
	wc = wc_of(&a, 2);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(a.tqp.state, IBV_QPS_ERR);
	cr_expect_gt(a.tqp.stats.neigh_drop, 0, "packets lost for want of a MAC");
}

Test(transport_rc, unreachable_path_inline_send_ends_in_retry_exceeded)
{
	struct ibv_wc wc;

	unreachable_path(IBV_SEND_INLINE); /* not a local protection error: only lost */
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
}
