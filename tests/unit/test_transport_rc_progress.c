/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC progress inside long messages and keys that go while a message is in flight:
 * mid-message ACKs count as progress, a timeout resends only what was not
 * acknowledged, duplicates are acknowledged again, and a WRITE or READ whose MR is
 * deregistered between two packets ends in a remote access error without touching
 * the memory any more. Two transport QPs without a port (rc_pair.h).
 */
#include "rc_pair.h"

TestSuite(transport_rc_progress, .init = setup_rc, .fini = teardown, .timeout = 120);

#define A_PSN 0xfffff0u /* A's first PSN (setup_type) */

/* A's ACK timeout, changed in RTS as an RTS to RTS modify does. */
static void set_timeout(uint8_t timeout)
{
	struct ibv_qp_attr attr = {.timeout = timeout};

	droce_tqp_modify(&a.env, &a.tqp, &attr, IBV_QP_TIMEOUT, IBV_QPS_RTS);
}

static struct ibv_wc write_mib(uint64_t id)
{
	fill(a.buf, MIB, 3);
	cr_assert_eq(post_wr(&a, id,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = MIB,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	return wc_of(&a, id);
}

Test(transport_rc_progress, write_longer_than_the_ack_timeout_completes)
{
	struct ibv_wc wc;

	/* 1024 packets of 5 us each take 5 ms; the ACK timeout is 4.096 us * 2^8 = 1 ms */
	set_timeout(8);
	ns_per_frame = 5000;
	wc = write_mib(1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect(memcmp(b.buf, a.buf, MIB) == 0, "bytes");
}

Test(transport_rc_progress, write_longer_than_the_ack_timeout_is_never_resent)
{
	set_timeout(8);
	ns_per_frame = 5000;
	write_mib(1);
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 0, "mid-message ACKs restart the timer");
	cr_expect_eq(a.frames, 1024, "no packet sent twice");
}

Test(transport_rc_progress, timeout_resends_only_what_was_not_acknowledged)
{
	/* the last packet is lost: the ACK of packet 959 (AckReq every 64) covers 0..959 */
	target = 1023;
	fault = drop_a_nth;
	send_and_check(MIB, 1);
	cr_expect_eq(a.tqp.stats.local_ack_timeout_err, 1);
	cr_expect_eq(a.frames, 1024 + 64, "packets 960..1023 sent again, not the whole message");
}

static uint32_t acked_psns[64];
static unsigned int nacks;

/* A's 6th frame twice; B's ACKs recorded. */
static enum fault dup_a_5_record_acks(const struct side *from, const struct droce_pkt *pkt,
				      unsigned int n)
{
	if (from == &a)
		return n == 5 ? DUP : PASS;
	if (pkt->opcode == DROCE_OP_RC_ACK && nacks < 64)
		acked_psns[nacks++] = pkt->psn;
	return PASS;
}

Test(transport_rc_progress, duplicate_without_ackreq_is_acknowledged_again)
{
	bool found = false;

	/* packet 5 of 70 is a MIDDLE without AckReq; its duplicate is ACKed all the same
	 * (C9-105), with the PSN of the last packet received in order */
	fault = dup_a_5_record_acks;
	send_and_check(70 * PMTU, 1);
	cr_expect_eq(b.tqp.stats.duplicate_request, 1);
	for (unsigned int i = 0; i < nacks; i++)
		found |= acked_psns[i] == ((A_PSN + 5) & DROCE_PSN_MASK);
	cr_expect(found, "an ACK for PSN %#x among B's %u ACKs", (A_PSN + 5) & DROCE_PSN_MASK,
		  nacks);
}

/* ------------------------------------------------------------ keys gone mid-message */

static bool deregistered;

/* B's MR is deregistered once the first half of the message was delivered. */
static enum fault dereg_b_at_a_40(const struct side *from, const struct droce_pkt *pkt,
				  unsigned int n)
{
	(void)pkt;
	if (from == &a && n == 40 && !deregistered) {
		cr_assert_eq(ibv_dereg_mr(b.mr), 0);
		deregistered = true;
	}
	return PASS;
}

Test(transport_rc_progress, write_into_an_mr_deregistered_mid_message)
{
	struct ibv_wc wc;
	static uint8_t zero[32 * PMTU];

	/* 64 packets; A sends 32 a pass, so packets 0..31 are placed before the dereg */
	fill(a.buf, 64 * PMTU, 5);
	fault = dereg_b_at_a_40;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = 64 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(b.tqp.state, IBV_QPS_ERR, "the responder's QP in Error");
	cr_expect(memcmp(b.buf, a.buf, 32 * PMTU) == 0, "what came before the dereg landed");
	cr_expect(memcmp(b.buf + 32 * PMTU, zero, sizeof(zero)) == 0,
		  "nothing landed after the dereg");
}

/* B's MR is deregistered after B sent the 41st response packet. */
static enum fault dereg_b_at_b_40(const struct side *from, const struct droce_pkt *pkt,
				  unsigned int n)
{
	(void)pkt;
	if (from == &b && n == 40 && !deregistered) {
		cr_assert_eq(ibv_dereg_mr(b.mr), 0);
		deregistered = true;
	}
	return PASS;
}

Test(transport_rc_progress, read_from_an_mr_deregistered_mid_response)
{
	struct ibv_wc wc;

	fill(b.buf, 64 * PMTU, 6);
	fault = dereg_b_at_b_40;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_READ,
					       .len = 64 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(b.tqp.state, IBV_QPS_ERR, "the responder's QP in Error");
	cr_expect_eq(b.frames, 41 + 1, "41 response packets, then a NAK instead of the 42nd");
}

/* ------------------------------------------------------------ READ re-requested from inside */

static struct {
	uint8_t opcode;
	uint32_t psn;
} b_frames[64];
static unsigned int nb;

/* B's 4th READ response packet lost; B's frames recorded. */
static enum fault drop_b_3_record(const struct side *from, const struct droce_pkt *pkt,
				  unsigned int n)
{
	if (from != &b)
		return PASS;
	if (nb < 64) {
		b_frames[nb].opcode = pkt->opcode;
		b_frames[nb].psn = pkt->psn;
		nb++;
	}
	return n == 3 ? DROP : PASS;
}

Test(transport_rc_progress, read_answered_from_inside_continues_the_response)
{
	uint32_t psn3 = (A_PSN + 3) & DROCE_PSN_MASK;
	unsigned int i;

	fill(b.buf, 8 * PMTU, 8);
	fault = drop_b_3_record;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_READ,
					       .len = 8 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	settle();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	cr_expect(memcmp(a.buf, b.buf, 8 * PMTU) == 0, "bytes");
	/* the frames after the first 8: the answer to the request from packet 3 */
	for (i = 8; i < nb && b_frames[i].psn != psn3; i++)
		;
	cr_assert_lt(i, nb, "packet 3 sent again");
	cr_expect_eq(b_frames[i].opcode, DROCE_OP_RC_READ_RESP_MIDDLE,
		     "the replay from packet 3 is a MIDDLE, not a FIRST (opcode %#x)",
		     b_frames[i].opcode);
	cr_expect_eq(b_frames[nb - 1].opcode, DROCE_OP_RC_READ_RESP_LAST, "and ends with a LAST");
}

/* ------------------------------------------------------------ SQD */

Test(transport_rc_progress, sqd_finishes_the_message_begun_and_holds_the_next)
{
	struct ibv_qp_attr sqd = {.en_sqd_async_notify = 1}, rts = {0};
	struct ibv_wc wc;

	fill(a.buf, 64 * PMTU, 10);
	post_recv(&b, 50, MIB, 4096);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = 64 * PMTU,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	cr_assert_eq(post_wr(&a, 2,
			     &(struct wr_args){.op = IBV_WR_SEND,
					       .off = MIB,
					       .len = 100,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	/* 8 of the WRITE's 64 packets leave, then the QP goes to SQD */
	cr_assert_eq(droce_tqp_send(&a.env, &a.tqp, 0, 8), 8);
	droce_tqp_modify(&a.env, &a.tqp, &sqd, IBV_QP_EN_SQD_ASYNC_NOTIFY, IBV_QPS_SQD);
	settle();
	cr_expect(a.tqp.sqd_drained, "drained once the WRITE is acknowledged");
	cr_expect(a.tqp.sqd_notify, "with the event asked for");
	wc = wc_of(&a, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect(memcmp(b.buf, a.buf, 64 * PMTU) == 0, "the WRITE begun before SQD finished");
	cr_expect_eq(a.frames, 64, "nothing of the SEND left in SQD");
	droce_tqp_modify(&a.env, &a.tqp, &rts, 0, IBV_QPS_RTS);
	settle();
	cr_expect_eq(wc_of(&a, 2).status, IBV_WC_SUCCESS);
	cr_expect_eq(wc_of(&b, 50).byte_len, 100, "SQD -> RTS sent the SEND");
}

/* B's ACKs are lost while acks_lost; A's frames pass. */
static bool acks_lost;

static enum fault lose_acks(const struct side *from, const struct droce_pkt *pkt, unsigned int n)
{
	(void)pkt;
	(void)n;
	return from == &b && acks_lost ? DROP : PASS;
}

Test(transport_rc_progress, the_send_window_holds_new_psns_until_acks_come)
{
	a.env.send_window = 256;
	acks_lost = true;
	fault = lose_acks;
	fill(a.buf, MIB, 5);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = MIB,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(a.frames, 256, "a window of 256 PSNs, no more, without an ACK");
	cr_expect_gt(a.tqp.stats.window_waits, 0);
	/* ACKs flow again: the rest goes, nothing is lost */
	acks_lost = false;
	settle();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
	cr_expect(memcmp(b.buf, a.buf, MIB) == 0, "bytes");
}

Test(transport_rc_progress, without_a_window_the_whole_message_goes_at_once)
{
	a.env.send_window = 0;
	acks_lost = true;
	fault = lose_acks;
	fill(a.buf, MIB, 5);
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = MIB,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(a.frames, 1024);
	cr_expect_eq(a.tqp.stats.window_waits, 0);
	acks_lost = false;
	settle();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
}

Test(transport_rc_progress, a_small_window_is_two_ackreq_periods)
{
	/* a window below DROCE_RC_WINDOW_MIN would hold a message with no AckReq inside it */
	a.env.send_window = 10;
	acks_lost = true;
	fault = lose_acks;
	cr_assert_eq(post_wr(&a, 1,
			     &(struct wr_args){.op = IBV_WR_RDMA_WRITE,
					       .len = MIB,
					       .flags = IBV_SEND_SIGNALED}),
		     0);
	pump();
	cr_expect_eq(a.frames, DROCE_RC_WINDOW_MIN);
	acks_lost = false;
	settle();
	cr_expect_eq(wc_of(&a, 1).status, IBV_WC_SUCCESS);
}
