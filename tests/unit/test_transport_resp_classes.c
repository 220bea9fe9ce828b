/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Each IBA responder error class (IBTA 9.9.3) provokes its outcome: the responder's state,
 * the NAK it sends (or not), the completions at both ends and the QP states. Two transport
 * QPs without a port (rc_pair.h).
 */
#include "rc_pair.h"
#include "rc_priv.h"

#define LOG_MAX 32

/* What B sent: each frame's opcode, AETH syndrome, and the responder's outcome then. */
static struct {
	uint8_t opcode, syndrome;
	enum rc_resp_state outcome;
} sent_by_b[LOG_MAX];
static unsigned int n_b;
static int drop_of_a = -1; /* A's frame to drop, -1: none */

static enum fault watch_b(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	if (from == &a)
		return (int)n == drop_of_a ? DROP : PASS;
	if (n_b < LOG_MAX) {
		sent_by_b[n_b].opcode = pkt->opcode;
		sent_by_b[n_b].syndrome = last_b.aeth.syndrome;
		sent_by_b[n_b].outcome = droce_rc_resp_last_outcome(&b.tqp);
		n_b++;
	}
	return PASS;
}

static void setup_watch(enum ibv_qp_type type)
{
	setup_type(type);
	n_b = 0;
	drop_of_a = -1;
	fault = watch_b;
}

static void setup_rc_watch(void)
{
	setup_watch(IBV_QPT_RC);
}

static void setup_uc_watch(void)
{
	setup_watch(IBV_QPT_UC);
}

static void expect_first_b_frame(uint8_t syndrome, enum rc_resp_state outcome)
{
	cr_assert_geq(n_b, 1, "B answered");
	cr_expect_eq(sent_by_b[0].opcode, DROCE_OP_RC_ACK, "an ACKNOWLEDGE packet");
	cr_expect_eq(sent_by_b[0].syndrome, syndrome, "syndrome 0x%02x, not 0x%02x", syndrome,
		     sent_by_b[0].syndrome);
	cr_expect_eq(sent_by_b[0].outcome, outcome, "outcome %s, not %s",
		     droce_rc_resp_state_names[outcome],
		     droce_rc_resp_state_names[sent_by_b[0].outcome]);
}

TestSuite(transport_resp_classes, .init = setup_rc_watch, .fini = teardown, .timeout = 60);

Test(transport_resp_classes, class_a_bad_receive_wqe)
{
	post_recv_lkey(&b, 10, 0, 64, b.mr->lkey + 1);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 30}), 0);
	pump();
	expect_first_b_frame(DROCE_AETH_NAK | DROCE_NAK_REM_OP_ERR, RC_RESP_ERR_CLASS_A);
	cr_expect_eq(wc_of(&b, 10).status, IBV_WC_LOC_PROT_ERR, "the receive WQE's error");
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_REM_OP_ERR, "NAK remote operational error");
	cr_expect_eq(b.tqp.state, IBV_QPS_ERR, "class A: the responder to Error");
}

Test(transport_resp_classes, class_b_psn_sequence_error)
{
	drop_of_a = 1;
	send_and_check(3 * PMTU, 1);
	expect_first_b_frame(DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR, RC_RESP_ERR_CLASS_B_PSN);
	cr_expect_eq(b.tqp.stats.out_of_sequence, 1, "one NAK for the gap");
	cr_expect_eq(b.tqp.state, IBV_QPS_RTS, "class B: the QP goes on");
}

Test(transport_resp_classes, class_b_rnr)
{
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_SEND, .len = 10, .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	/* min_rnr_timer 1 (rc_pair's connect) in the NAK's value */
	expect_first_b_frame(DROCE_AETH_RNR_NAK | 1, RC_RESP_ERR_CLASS_B_RNR);
	cr_expect_eq(b.tqp.state, IBV_QPS_RTS, "class B: the QP goes on");
	post_recv(&b, 10, 0, 64);
	settle();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS, "resent after the RNR wait");
	cr_expect_eq(wc_of(&b, 10).byte_len, 10);
}

Test(transport_resp_classes, class_c_remote_access)
{
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){
				     .op = IBV_WR_RDMA_WRITE, .len = 10, .rkey = b.mr->rkey + 1}),
		     0);
	pump();
	expect_first_b_frame(DROCE_AETH_NAK | DROCE_NAK_REM_ACCESS_ERR, RC_RESP_ERR_CLASS_C);
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_REM_ACCESS_ERR);
	cr_expect_eq(b.tqp.state, IBV_QPS_ERR, "class C: the responder to Error");
	cr_expect_eq(b.tqp.stats.resp_remote_access_errors, 1);
}

Test(transport_resp_classes, class_c_invalid_request_length)
{
	post_recv(&b, 10, 0, 1500);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 3000}), 0);
	pump();
	expect_first_b_frame(DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ, RC_RESP_ERR_CLASS_C);
	cr_expect_eq(wc_of(&b, 10).status, IBV_WC_LOC_LEN_ERR, "the receive WQE's error");
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_REM_INV_REQ_ERR);
	cr_expect_eq(b.tqp.state, IBV_QPS_ERR);
}

Test(transport_resp_classes, class_c_too_many_reads)
{
	struct ibv_qp_attr attr = {.max_rd_atomic = 2, .max_dest_rd_atomic = 1};

	/* A may have two READs out, B keeps one resource: the second is refused */
	droce_tqp_modify(&a.env, &a.tqp, &attr, IBV_QP_MAX_QP_RD_ATOMIC, IBV_QPS_RTS);
	droce_tqp_modify(&b.env, &b.tqp, &attr, IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QPS_RTS);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_RDMA_READ, .len = 2 * PMTU}), 0);
	cr_assert_eq(post_wr(&a, 2, &(struct wr_args){.op = IBV_WR_RDMA_READ, .len = 8}), 0);
	cr_assert_eq(droce_tqp_send(&a.env, &a.tqp, 0, 32), 2, "both READ requests out");
	pump();
	cr_expect_eq(b.tqp.state, IBV_QPS_ERR, "class C: the responder to Error");
	cr_expect_eq(b.tqp.stats.resp_invalid_request, 1, "NAK invalid request");
	cr_expect_eq(droce_rc_resp_last_outcome(&b.tqp), RC_RESP_ERR_CLASS_C, "%s",
		     droce_rc_resp_state_names[droce_rc_resp_last_outcome(&b.tqp)]);
}

Test(transport_resp_classes, duplicate_is_re_acked)
{
	/* B's ACK lost: A resends after its timeout, B answers the duplicate */
	fault = drop_b_nth;
	target = 0;
	send_and_check(100, 1);
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
	cr_expect_eq(droce_rc_resp_last_outcome(&b.tqp), RC_RESP_DUPLICATE, "%s",
		     droce_rc_resp_state_names[droce_rc_resp_last_outcome(&b.tqp)]);
}

Test(transport_resp_classes, in_sequence_request_is_acknowledged)
{
	send_and_check(100, 1);
	cr_expect_eq(droce_rc_resp_last_outcome(&b.tqp), RC_RESP_ACKNOWLEDGE, "%s",
		     droce_rc_resp_state_names[droce_rc_resp_last_outcome(&b.tqp)]);
	cr_assert_geq(n_b, 1);
	cr_expect_eq(sent_by_b[n_b - 1].syndrome & DROCE_AETH_TYPE_MASK, DROCE_AETH_ACK);
}

/* ---------------------------------------------------------------- UC: class D */

TestSuite(transport_resp_classes_uc, .init = setup_uc_watch, .fini = teardown, .timeout = 60);

Test(transport_resp_classes_uc, bad_rkey_is_class_d)
{
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = 10,
					       .rkey = b.mr->rkey ^ 0x100,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(droce_rc_resp_last_outcome(&b.tqp), RC_RESP_ERR_CLASS_D, "%s",
		     droce_rc_resp_state_names[droce_rc_resp_last_outcome(&b.tqp)]);
	cr_expect_eq(n_b, 0, "UC answers nothing");
	cr_expect_eq(b.tqp.state, IBV_QPS_RTS, "class D: the QP goes on");
	cr_expect_eq(b.tqp.stats.uc_msg_drop, 1);
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS, "UC completes once sent");
}

Test(transport_resp_classes_uc, no_receive_is_class_d)
{
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 10}), 0);
	pump();
	cr_expect_eq(droce_rc_resp_last_outcome(&b.tqp), RC_RESP_ERR_CLASS_D, "%s",
		     droce_rc_resp_state_names[droce_rc_resp_last_outcome(&b.tqp)]);
	cr_expect_eq(n_b, 0, "no RNR NAK on UC");
	cr_expect_eq(b.tqp.stats.out_of_buffer, 1);
	cr_expect_eq(b.tqp.state, IBV_QPS_RTS);
}

Test(transport_resp_classes_uc, longer_than_the_receive_is_class_d)
{
	post_recv(&b, 10, 0, 100);
	cr_assert_eq(post_wr(&a, 1, &(struct wr_args){.op = IBV_WR_SEND, .len = 200}), 0);
	pump();
	cr_expect_eq(droce_rc_resp_last_outcome(&b.tqp), RC_RESP_ERR_CLASS_D, "%s",
		     droce_rc_resp_state_names[droce_rc_resp_last_outcome(&b.tqp)]);
	cr_expect_eq(b.tqp.state, IBV_QPS_RTS);
	cr_expect_eq(b.tqp.rc->resp.have_rwqe, true, "the receive WQE kept for the next message");
}
