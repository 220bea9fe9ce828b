/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Leaving a connection (12.9.7): DREQ and DREP from either side, DREQs crossing, DREQ
 * retries and DREQ_ERROR, DREQ answered again in time wait, a DREQ nobody knows, time wait
 * and its end.
 */
#include "cm_pair.h"

TestSuite(cm_disconnect, .init = cm_pair_init, .fini = cm_pair_fini);

/* 2 × packet life time (18) + response timeout (20) */
#define WAIT_US (2 * 1073741u + 4294967u)
/* 2 × packet life time (18) + the requester's ACK timeout (19) */
#define TIMEWAIT_US (2 * 1073741u + 2147483u)

static uint64_t mad_tid(const uint8_t *mad)
{
	struct droce_mad_fields f;

	droce_mad_hdr_get(mad, &f);
	return f.tid;
}

/* @p from leaves, @p to answers: both end in TIMEWAIT, then IDLE. */
static void leave(struct cm_side *from, struct droce_cm_id *id, struct cm_side *to,
		  struct droce_cm_id *peer)
{
	uint64_t req_tid = 0, dreq_tid;
	const uint8_t priv[1] = {0x77};

	cr_assert_eq(droce_cm_send_dreq(id, priv, 1), 0, "DREQ sent");
	cr_assert_eq(droce_cm_id_state(id), DROCE_CM_DREQ_SENT, "DREQ_SENT");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_DREQ, "DREQ queued");
	dreq_tid = mad_tid(cm_peek(0)->mad);
	cr_assert_neq(dreq_tid, req_tid, "a TID of its own");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_DREQ_REMOTE_QPN_EECN),
		     from == &cm_a ? 0x12 : 0x11, "DREQ names the peer's QP");
	cr_assert_eq(droce_cm_timers_run(from->cm), cm_now + WAIT_US, "DREQ timer");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(to)->type, DROCE_CM_EV_DREQ_RCVD, "DREQ_RCVD");
	cr_assert_eq(cm_last_ev(to)->priv[0], 0x77, "with its private data");
	cr_assert_eq(droce_cm_id_state(peer), DROCE_CM_DREQ_RCVD, "peer in DREQ_RCVD");
	cr_assert_eq(droce_cm_send_drep(peer, NULL, 0), 0, "DREP sent");
	cr_assert_eq(droce_cm_id_state(peer), DROCE_CM_TIMEWAIT, "peer in TIMEWAIT");
	cr_assert_eq(mad_tid(cm_peek(0)->mad), dreq_tid, "DREP under the DREQ's TID");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(from)->type, DROCE_CM_EV_DREP_RCVD, "DREP_RCVD");
	cr_assert_eq(droce_cm_id_state(id), DROCE_CM_TIMEWAIT, "TIMEWAIT");
	cr_assert_eq(droce_cm_timers_run(from->cm), cm_now + TIMEWAIT_US,
		     "time wait: 2 x packet life time + ACK timeout");
	cm_advance(TIMEWAIT_US - 1);
	cr_assert_eq(droce_cm_id_state(id), DROCE_CM_TIMEWAIT, "not over yet");
	cm_advance(1);
	cr_assert_eq(cm_last_ev(from)->type, DROCE_CM_EV_TIMEWAIT_EXIT, "TIMEWAIT_EXIT");
	cr_assert_eq(cm_last_ev(to)->type, DROCE_CM_EV_TIMEWAIT_EXIT, "TIMEWAIT_EXIT, peer");
	cr_assert_eq(droce_cm_id_state(id), DROCE_CM_IDLE, "IDLE");
	cr_assert_eq(droce_cm_id_state(peer), DROCE_CM_IDLE, "peer IDLE");
	cr_assert_eq(cm_queued(), 0, "nothing more sent");
}

Test(cm_disconnect, active_side_leaves)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);

	leave(&cm_a, a, &cm_b, b);
}

Test(cm_disconnect, passive_side_leaves)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);

	leave(&cm_b, b, &cm_a, a);
}

Test(cm_disconnect, dreqs_cross)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);

	cr_assert_eq(droce_cm_send_dreq(a, NULL, 0), 0, "a's DREQ");
	cr_assert_eq(droce_cm_send_dreq(b, NULL, 0), 0, "b's DREQ");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_TIMEWAIT, "b answers and waits");
	cr_assert_eq(cm_last_ev(&cm_b)->type, DROCE_CM_EV_DREQ_RCVD, "b told");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_TIMEWAIT, "a answers and waits");
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_DREQ_RCVD, "a told");
	cr_assert_eq(cm_queued(), 2, "two DREPs");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_DREP, "b's DREP");
	cr_assert_eq(cm_peek_msg(1), DROCE_CM_DREP, "a's DREP");
	cm_deliver_all();
	cr_assert_eq(cm_a.nev, 2, "no more events on a (REP_RCVD, DREQ_RCVD)");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_TIMEWAIT, "a still in time wait");
	cr_assert_eq(droce_cm_send_drep(a, NULL, 0), -EINVAL, "nothing to answer");
	cm_advance(TIMEWAIT_US);
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_IDLE, "a IDLE");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_IDLE, "b IDLE");
}

Test(cm_disconnect, dreq_retried_then_dreq_error)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);
	int i;

	droce_cm_send_dreq(a, NULL, 0);
	cm_drop();
	for (i = 0; i < 3; i++) {
		cm_advance(WAIT_US);
		cr_assert_eq(cm_queued(), 1, "retry %d", i + 1);
		cr_assert_eq(cm_peek_msg(0), DROCE_CM_DREQ, "retry %d is the DREQ", i + 1);
		cm_drop();
	}
	cm_advance(WAIT_US);
	cr_assert_eq(cm_queued(), 0, "nothing more sent");
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_DREQ_ERROR, "DREQ_ERROR");
	cr_assert_eq(cm_last_ev(&cm_a)->status, -ETIMEDOUT, "-ETIMEDOUT");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_TIMEWAIT, "TIMEWAIT");
	cr_assert_eq(cm_stats(&cm_a).retries, 3, "three retries");
	cm_advance(TIMEWAIT_US);
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_TIMEWAIT_EXIT, "then TIMEWAIT_EXIT");
}

Test(cm_disconnect, dreq_in_timewait_answered_again)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);
	uint8_t drep[DROCE_MAD_LEN], dreq[DROCE_MAD_LEN];

	droce_cm_send_dreq(a, NULL, 0);
	memcpy(dreq, cm_peek(0)->mad, sizeof(dreq));
	cm_deliver_one();
	droce_cm_send_drep(b, NULL, 0);
	memcpy(drep, cm_peek(0)->mad, sizeof(drep));
	cm_drop(); /* the DREP is lost */
	cm_inject(&cm_b, dreq, sizeof(dreq));
	cr_assert_eq(cm_queued(), 1, "b in time wait answers");
	cr_assert_eq(memcmp(cm_peek(0)->mad, drep, sizeof(drep)), 0, "with the same DREP");
	cr_assert_eq(cm_count_ev(&cm_b, DROCE_CM_EV_DREQ_RCVD), 1, "b's consumer told once");
	cr_assert_eq(cm_stats(&cm_b).duplicates, 1, "a duplicate");
	cm_drop();
	/* a's retry comes after b's time wait (6.4 s against 4.3 s): answered still */
	cm_advance(WAIT_US);
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_IDLE, "b's time wait is over");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_DREQ, "a asks again");
	cm_deliver_one();
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_DREP, "b answers from IDLE");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_TIMEWAIT, "a in time wait");
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_DREP_RCVD, "a told");
}

Test(cm_disconnect, unknown_dreq_answered_with_drep)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);
	uint8_t dreq[DROCE_MAD_LEN];

	droce_cm_send_dreq(a, NULL, 0);
	memcpy(dreq, cm_peek(0)->mad, sizeof(dreq));
	cm_drop();
	droce_cm_set(dreq, DROCE_CM_DREQ_REMOTE_COMM_ID, droce_cm_id_local_comm_id(b) ^ 1);
	cm_inject(&cm_b, dreq, sizeof(dreq));
	cr_assert_eq(cm_queued(), 1, "b answers");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_DREP, "with DREP");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_DREP_REMOTE_COMM_ID),
		     droce_cm_id_local_comm_id(a), "to a's comm ID");
	cr_assert_eq(cm_stats(&cm_b).unmatched, 1, "counted");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_ESTABLISHED, "b untouched");
}

Test(cm_disconnect, dreq_naming_another_qp_not_taken)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);
	uint8_t dreq[DROCE_MAD_LEN];

	droce_cm_send_dreq(a, NULL, 0);
	memcpy(dreq, cm_peek(0)->mad, sizeof(dreq));
	cm_drop();
	droce_cm_set(dreq, DROCE_CM_DREQ_REMOTE_QPN_EECN, 0x99);
	cm_inject(&cm_b, dreq, sizeof(dreq));
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_ESTABLISHED, "b untouched");
	cr_assert_eq(cm_b.nev, 2, "no DREQ_RCVD");
}

Test(cm_disconnect, rej_while_established_is_timewait)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);
	uint8_t rej[DROCE_MAD_LEN];

	droce_cm_init(rej, sizeof(rej), DROCE_CM_REJ, 1);
	droce_cm_set(rej, DROCE_CM_REJ_LOCAL_COMM_ID, droce_cm_id_local_comm_id(b));
	droce_cm_set(rej, DROCE_CM_REJ_REMOTE_COMM_ID, droce_cm_id_local_comm_id(a));
	droce_cm_set(rej, DROCE_CM_REJ_REASON, DROCE_CM_REJ_CONSUMER_DEFINED);
	cm_inject(&cm_a, rej, sizeof(rej));
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_REJ_RCVD, "REJ_RCVD");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_TIMEWAIT, "TIMEWAIT");
}
