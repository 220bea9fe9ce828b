/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection setup between two CM agents (12.9.5, 12.9.6): REQ, REP, RTU; REJ by the
 * consumer and for no listener; REQ and REP retries and time-outs; MRA; duplicate REQs and
 * REPs; COMM_EST through droce_cm_established(); lost sends.
 */
#include "cm_pair.h"

TestSuite(cm_connect, .init = cm_pair_init, .fini = cm_pair_fini);

/* 2 × packet life time (18) + response timeout (20): cm_req_param's wait, in µs */
#define WAIT_US (2 * 1073741u + 4294967u)

static uint64_t mad_tid(const uint8_t *mad)
{
	struct droce_mad_fields f;

	droce_mad_hdr_get(mad, &f);
	return f.tid;
}

Test(cm_connect, req_rep_rtu_establish_both_sides)
{
	struct droce_cm_req_param p = cm_req_param(CM_SID);
	struct droce_cm_rep_param rep = cm_rep_param();
	struct droce_cm_id *listener, *a, *b;
	const struct cm_rec *ev;
	uint64_t tid;
	const uint8_t *mad;

	listener = droce_cm_id_create(cm_b.cm, (void *)0x1);
	cr_assert_eq(droce_cm_listen(listener, CM_SID, 0), 0, "listen");
	cr_assert_eq(droce_cm_id_state(listener), DROCE_CM_LISTEN, "listener in LISTEN");
	a = droce_cm_id_create(cm_a.cm, (void *)0x2);
	cr_assert_neq(droce_cm_id_local_comm_id(a), 0, "comm ID not zero");
	cr_assert_eq(droce_cm_id_context(a), (void *)0x2, "context kept");
	cr_assert_eq(droce_cm_send_req(a, &p), 0, "REQ sent");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_REQ_SENT, "a in REQ_SENT");
	cr_assert_eq(cm_queued(), 1, "one MAD queued");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REQ, "it is a REQ");
	mad = cm_peek(0)->mad;
	tid = mad_tid(mad);
	cr_assert_eq(droce_cm_get(mad, DROCE_CM_REQ_LOCAL_COMM_ID), droce_cm_id_local_comm_id(a),
		     "REQ carries a's comm ID");
	cr_assert_eq(droce_cm_get(mad, DROCE_CM_REQ_SERVICE_ID), CM_SID, "REQ's service ID");
	cr_assert_eq(droce_cm_get(mad, DROCE_CM_REQ_LOCAL_QPN), 0x11, "REQ's QPN");
	cr_assert_eq(droce_cm_get(mad, DROCE_CM_REQ_STARTING_PSN), 0x3be40b, "REQ's PSN");
	cr_assert_eq(droce_cm_get(mad, DROCE_CM_REQ_PRIMARY_LOCAL_LID), 0xffff,
		     "permissive local LID on RoCE");
	cr_assert_eq(droce_cm_get(mad, DROCE_CM_REQ_PRIMARY_HOP_LIMIT), 64, "hop limit");
	cr_assert_eq(
		memcmp(droce_cm_bytes(mad, DROCE_CM_REQ_PRIMARY_REMOTE_GID), cm_a.addr.dgid, 16), 0,
		"remote GID is b's");
	cr_assert_eq(droce_cm_get(mad, DROCE_CM_REQ_MAX_CM_RETRIES), 3, "max CM retries");
	cr_assert_eq(memcmp(droce_cm_id_path(a)->dgid, cm_a.addr.dgid, 16), 0, "a's path");

	cr_assert_eq(cm_deliver_one(), DROCE_CM_REQ, "REQ delivered");
	ev = cm_last_ev(&cm_b);
	cr_assert_not_null(ev, "b got an event");
	cr_assert_eq(ev->type, DROCE_CM_EV_REQ_RCVD, "REQ_RCVD");
	cr_assert_eq(ev->listen_id, listener, "through the listener");
	cr_assert_eq(ev->state, DROCE_CM_REQ_RCVD, "child in REQ_RCVD");
	cr_assert_eq(ev->msg, DROCE_CM_REQ, "the REQ comes with it");
	cr_assert_eq(ev->priv[0], 0xde, "private data reaches b");
	cr_assert_eq(ev->priv[3], 0xef, "private data reaches b whole");
	b = ev->id;
	cr_assert_neq(b, listener, "a new id");
	cr_assert_null(droce_cm_id_context(b), "the child has no context yet");
	cr_assert_eq(memcmp(droce_cm_id_path(b)->dgid, cm_b.addr.dgid, 16), 0,
		     "child's path leads back to a");

	cr_assert_eq(droce_cm_send_rep(b, &rep), 0, "REP sent");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_REP_SENT, "b in REP_SENT");
	cr_assert_eq(mad_tid(cm_peek(0)->mad), tid, "REP under the REQ's transaction ID");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REP_REMOTE_COMM_ID),
		     droce_cm_id_local_comm_id(a), "REP names a's comm ID");
	cr_assert_eq(cm_deliver_one(), DROCE_CM_REP, "REP delivered");
	ev = cm_last_ev(&cm_a);
	cr_assert_eq(ev->type, DROCE_CM_EV_REP_RCVD, "REP_RCVD on a");
	cr_assert_eq(ev->id, a, "for a");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_REP_RCVD, "a in REP_RCVD");

	cr_assert_eq(droce_cm_send_rtu(a, NULL, 0), 0, "RTU sent");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_ESTABLISHED, "a established");
	cr_assert_eq(mad_tid(cm_peek(0)->mad), tid, "RTU under the same transaction ID");
	cr_assert_eq(cm_deliver_one(), DROCE_CM_RTU, "RTU delivered");
	ev = cm_last_ev(&cm_b);
	cr_assert_eq(ev->type, DROCE_CM_EV_RTU_RCVD, "RTU_RCVD on b");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_ESTABLISHED, "b established");
	cr_assert_eq(cm_stats(&cm_a).tx[DROCE_CM_REQ], 1, "a sent one REQ");
	cr_assert_eq(cm_stats(&cm_a).rx[DROCE_CM_REP], 1, "a received one REP");
	cr_assert_eq(cm_stats(&cm_b).rx[DROCE_CM_RTU], 1, "b received one RTU");
	/* established connections run no timer */
	cr_assert_eq(droce_cm_timers_run(cm_a.cm), UINT64_MAX, "no timer on a");
	cr_assert_eq(droce_cm_timers_run(cm_b.cm), UINT64_MAX, "no timer on b");
}

Test(cm_connect, consumer_reject)
{
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);
	const uint8_t priv[2] = {0x55, 0x66};

	cr_assert_eq(droce_cm_send_rej(b, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, priv, 2), 0,
		     "REJ sent");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_IDLE, "b IDLE after its REJ");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_MESSAGE_REJECTED), DROCE_CM_REF_REQ,
		     "REJ of the REQ");
	cr_assert_eq(cm_deliver_one(), DROCE_CM_REJ, "REJ delivered");
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_REJ_RCVD, "REJ_RCVD on a");
	cr_assert_eq(cm_last_ev(&cm_a)->status, DROCE_CM_REJ_CONSUMER_DEFINED, "its reason");
	cr_assert_eq(cm_last_ev(&cm_a)->priv[0], 0x55, "its private data");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_IDLE, "a IDLE");
	cr_assert_eq(droce_cm_timers_run(cm_a.cm), UINT64_MAX, "a's REQ timer stopped");
}

Test(cm_connect, no_listener_is_rej_invalid_service_id)
{
	struct droce_cm_req_param p = cm_req_param(CM_SID + 1);
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL);

	cr_assert_eq(droce_cm_send_req(a, &p), 0, "REQ sent");
	cm_deliver_one();
	cr_assert_eq(cm_b.nev, 0, "b's consumer hears nothing");
	cr_assert_eq(cm_queued(), 1, "b answered");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "with REJ");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REASON),
		     DROCE_CM_REJ_INVALID_SERVICE_ID, "reason 8");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_REJ_RCVD, "REJ_RCVD on a");
	cr_assert_eq(cm_last_ev(&cm_a)->status, DROCE_CM_REJ_INVALID_SERVICE_ID, "reason 8");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_IDLE, "a IDLE");
	cr_assert_eq(cm_stats(&cm_b).unmatched, 1, "counted on b");
}

Test(cm_connect, req_retried_then_timeout_rej)
{
	struct droce_cm_req_param p = cm_req_param(CM_SID);
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL);
	uint64_t tid;
	int i;

	cr_assert_eq(droce_cm_send_req(a, &p), 0, "REQ sent");
	tid = mad_tid(cm_peek(0)->mad);
	cm_drop();
	cr_assert_eq(droce_cm_timers_run(cm_a.cm), cm_now + WAIT_US,
		     "the REQ timer is 2 x packet life time + response timeout");
	cm_advance(WAIT_US - 1);
	cr_assert_eq(cm_queued(), 0, "nothing resent before the time-out");
	for (i = 0; i < 3; i++) {
		cm_advance(WAIT_US);
		cr_assert_eq(cm_queued(), 1, "retry %d sent", i + 1);
		cr_assert_eq(cm_peek_msg(0), DROCE_CM_REQ, "retry %d is the REQ", i + 1);
		cr_assert_eq(mad_tid(cm_peek(0)->mad), tid, "retry %d keeps the TID", i + 1);
		cm_drop();
		cr_assert_eq(droce_cm_id_state(a), DROCE_CM_REQ_SENT, "still REQ_SENT");
	}
	cr_assert_eq(cm_a.nev, 0, "no event while retrying");
	cm_advance(WAIT_US);
	cr_assert_eq(cm_queued(), 1, "the last time-out sends something");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "REJ");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REASON), DROCE_CM_REJ_TIMEOUT,
		     "reason 4, time-out");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REJECTED_INFO_LENGTH), 8,
		     "ARI: the CA GUID");
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_REQ_ERROR, "REQ_ERROR");
	cr_assert_eq(cm_last_ev(&cm_a)->status, -ETIMEDOUT, "-ETIMEDOUT");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_IDLE, "a IDLE");
	cr_assert_eq(cm_stats(&cm_a).retries, 3, "three retries counted");
	cr_assert_eq(cm_stats(&cm_a).tx[DROCE_CM_REQ], 4, "four REQs sent");
	cr_assert_eq(droce_cm_timers_run(cm_a.cm), UINT64_MAX, "no timer left");
}

Test(cm_connect, timeout_rej_reaches_the_passive_side)
{
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);
	int i;

	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_REQ_RCVD, "b waits for its consumer");
	for (i = 0; i < 3; i++) {
		cm_advance(WAIT_US);
		cm_drop(); /* the REQ again */
	}
	cm_advance(WAIT_US);
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "a gives up with REJ");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_b)->type, DROCE_CM_EV_REJ_RCVD, "b hears of it");
	cr_assert_eq(cm_last_ev(&cm_b)->status, DROCE_CM_REJ_TIMEOUT, "time-out");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_IDLE, "b IDLE");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_IDLE, "a IDLE");
}

Test(cm_connect, mra_extends_the_wait)
{
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);
	/* service timeout 22 (17.18 s) + packet life time 18 (1.07 s) */
	uint64_t extended = 17179869u + 1073741u;

	cr_assert_eq(droce_cm_send_mra(b, 22, NULL, 0), 0, "MRA sent");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_MRA_REQ_SENT, "b in MRA_REQ_SENT");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_MRA_MESSAGE_MRAED), DROCE_CM_REF_REQ,
		     "MRA of the REQ");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_MRA_RCVD, "MRA_RCVD on a");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_MRA_REQ_RCVD, "a in MRA_REQ_RCVD");
	cr_assert_eq(droce_cm_timers_run(cm_a.cm), cm_now + extended,
		     "the wait is the service timeout plus the packet life time");
	cm_advance(WAIT_US);
	cr_assert_eq(cm_queued(), 0, "no REQ resent after the MRA");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_MRA_REQ_RCVD, "still waiting");
	cm_advance(extended - WAIT_US);
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_REQ_ERROR, "then REQ_ERROR");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "and a REJ");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_IDLE, "a IDLE");
}

Test(cm_connect, mra_then_rep_connects)
{
	struct droce_cm_rep_param rep = cm_rep_param();
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);

	droce_cm_send_mra(b, 22, NULL, 0);
	cm_deliver_one();
	cr_assert_eq(droce_cm_send_rep(b, &rep), 0, "REP from MRA_REQ_SENT");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_REP_RCVD, "a in REP_RCVD");
	cr_assert_eq(droce_cm_timers_run(cm_a.cm), UINT64_MAX, "a runs no timer in REP_RCVD");
}

Test(cm_connect, duplicate_req_answered_with_mra)
{
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);
	uint8_t req[DROCE_MAD_LEN];

	cm_advance(WAIT_US);
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REQ, "a resends the REQ");
	memcpy(req, cm_peek(0)->mad, sizeof(req));
	cm_deliver_one();
	cr_assert_eq(cm_b.nev, 1, "b's consumer is not told twice");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_MRA_REQ_SENT, "b sent MRA by itself");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_MRA, "MRA queued");
	cr_assert_eq(cm_stats(&cm_b).duplicates, 1, "the duplicate counted");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_MRA_REQ_RCVD, "a waits longer");
	cm_inject(&cm_b, req, sizeof(req));
	cr_assert_eq(cm_queued(), 1, "a third REQ is answered too");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_MRA, "with the MRA again");
	cr_assert_eq(cm_stats(&cm_b).tx[DROCE_CM_MRA], 2, "two MRAs sent");
}

Test(cm_connect, duplicate_req_after_rep_resends_rep)
{
	struct droce_cm_rep_param rep = cm_rep_param();
	struct droce_cm_id *listener, *b;
	uint8_t req[DROCE_MAD_LEN], sent[DROCE_MAD_LEN];
	struct droce_cm_id *a;

	a = droce_cm_id_create(cm_a.cm, NULL);
	listener = droce_cm_id_create(cm_b.cm, NULL);
	droce_cm_listen(listener, CM_SID, 0);
	struct droce_cm_req_param p = cm_req_param(CM_SID);
	droce_cm_send_req(a, &p);
	memcpy(req, cm_peek(0)->mad, sizeof(req));
	cm_deliver_one();
	b = cm_last_ev(&cm_b)->id;
	droce_cm_send_rep(b, &rep);
	memcpy(sent, cm_peek(0)->mad, sizeof(sent));
	cm_drop();
	cm_inject(&cm_b, req, sizeof(req));
	cr_assert_eq(cm_queued(), 1, "b answers the duplicate");
	cr_assert_eq(memcmp(cm_peek(0)->mad, sent, sizeof(sent)), 0, "with the same REP");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_REP_SENT, "b stays in REP_SENT");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_REP_RCVD, "the REP gets through");
}

Test(cm_connect, duplicate_req_after_rej_resends_rej)
{
	struct droce_cm_id *listener, *b, *a;
	uint8_t req[DROCE_MAD_LEN];
	struct droce_cm_req_param p = cm_req_param(CM_SID);

	listener = droce_cm_id_create(cm_b.cm, NULL);
	droce_cm_listen(listener, CM_SID, 0);
	a = droce_cm_id_create(cm_a.cm, NULL);
	droce_cm_send_req(a, &p);
	memcpy(req, cm_peek(0)->mad, sizeof(req));
	cm_deliver_one();
	b = cm_last_ev(&cm_b)->id;
	droce_cm_send_rej(b, DROCE_CM_REJ_NO_QP, NULL, 0, NULL, 0);
	cm_drop();
	cm_inject(&cm_b, req, sizeof(req));
	cr_assert_eq(cm_queued(), 1, "b answers the duplicate");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "with its REJ");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REASON), DROCE_CM_REJ_NO_QP,
		     "the same reason");
	cr_assert_eq(cm_b.nev, 1, "no new REQ_RCVD");
}

Test(cm_connect, rep_retried_then_timeout)
{
	struct droce_cm_rep_param rep = cm_rep_param();
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);
	int i;

	droce_cm_send_rep(b, &rep);
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_REP_RCVD, "a got the REP, says nothing");
	for (i = 0; i < 3; i++) {
		cm_advance(WAIT_US);
		cr_assert_eq(cm_peek_msg(0), DROCE_CM_REP, "REP retry %d", i + 1);
		cm_deliver_one();
		cr_assert_eq(droce_cm_id_state(a), DROCE_CM_REP_RCVD, "a ignores retry %d", i + 1);
	}
	cr_assert_eq(cm_stats(&cm_a).duplicates, 3, "a counted the duplicate REPs");
	cm_advance(WAIT_US);
	cr_assert_eq(cm_last_ev(&cm_b)->type, DROCE_CM_EV_REP_ERROR, "REP_ERROR on b");
	cr_assert_eq(cm_last_ev(&cm_b)->status, -ETIMEDOUT, "-ETIMEDOUT");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_IDLE, "b IDLE");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "b sends REJ");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REASON), DROCE_CM_REJ_TIMEOUT,
		     "time-out");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_REJ_RCVD, "a hears the REJ");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_TIMEWAIT, "after a REP: time wait");
}

Test(cm_connect, established_by_the_first_packet)
{
	struct droce_cm_rep_param rep = cm_rep_param();
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);

	cr_assert_eq(droce_cm_established(b), -EINVAL, "not before the REP");
	droce_cm_send_rep(b, &rep);
	cm_deliver_one();
	droce_cm_send_rtu(a, NULL, 0);
	cr_assert_eq(droce_cm_established(b), 0, "COMM_EST in REP_SENT");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_ESTABLISHED, "b established");
	cr_assert_eq(cm_last_ev(&cm_b)->type, DROCE_CM_EV_USER_ESTABLISHED, "USER_ESTABLISHED");
	cr_assert_eq(droce_cm_timers_run(cm_b.cm), UINT64_MAX, "the REP timer stopped");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_b)->type, DROCE_CM_EV_USER_ESTABLISHED,
		     "the late RTU gives no event");
	cr_assert_eq(cm_stats(&cm_b).duplicates, 1, "it is counted");
	cr_assert_eq(droce_cm_established(b), -EINVAL, "not twice");
}

Test(cm_connect, mra_of_rep_then_rtu)
{
	struct droce_cm_rep_param rep = cm_rep_param();
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);
	uint64_t extended = 4294967u + 1073741u; /* service timeout 20 + packet life time 18 */

	droce_cm_send_rep(b, &rep);
	cm_deliver_one();
	cr_assert_eq(droce_cm_send_mra(a, 20, NULL, 0), 0, "MRA of the REP");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_MRA_REP_SENT, "a in MRA_REP_SENT");
	cr_assert_eq(droce_cm_send_mra(a, 20, NULL, 0), -EINVAL, "one MRA only");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_MRA_REP_RCVD, "b in MRA_REP_RCVD");
	cr_assert_eq(cm_last_ev(&cm_b)->type, DROCE_CM_EV_MRA_RCVD, "MRA_RCVD on b");
	cr_assert_eq(droce_cm_timers_run(cm_b.cm), cm_now + extended, "b waits longer");
	cr_assert_eq(droce_cm_send_rtu(a, NULL, 0), 0, "RTU from MRA_REP_SENT");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_ESTABLISHED, "b established");
}

Test(cm_connect, duplicate_rep_after_rtu_resends_rtu)
{
	struct droce_cm_rep_param rep = cm_rep_param();
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);
	uint8_t rep_mad[DROCE_MAD_LEN];

	droce_cm_send_rep(b, &rep);
	memcpy(rep_mad, cm_peek(0)->mad, sizeof(rep_mad));
	cm_deliver_one();
	droce_cm_send_rtu(a, NULL, 0);
	cm_drop(); /* the RTU is lost */
	cm_advance(WAIT_US);
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REP, "b resends its REP");
	cm_deliver_one();
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_RTU, "a answers with the RTU again");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_ESTABLISHED, "b established");
	cr_assert_eq(cm_stats(&cm_a).tx[DROCE_CM_RTU], 2, "two RTUs");
}

Test(cm_connect, failed_send_counted_and_retried)
{
	struct droce_cm_req_param p = cm_req_param(CM_SID);
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL);

	cm_a.fail_sends = 1;
	cr_assert_eq(droce_cm_send_req(a, &p), 0, "the REQ is the timer's now");
	cr_assert_eq(cm_queued(), 0, "nothing went out");
	cr_assert_eq(cm_stats(&cm_a).send_failed, 1, "send failure counted");
	cr_assert_eq(cm_stats(&cm_a).tx[DROCE_CM_REQ], 0, "not counted as sent");
	cm_advance(WAIT_US);
	cr_assert_eq(cm_queued(), 1, "the timer sends it");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REQ, "the REQ");
}
