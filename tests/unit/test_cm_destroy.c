/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce_cm_id_destroy in each state: what goes out (REJ, DREQ, DREP, SIDR_REP, nothing),
 * what the peer sees, that the consumer hears no more, and destruction from inside an event.
 */
#include "cm_pair.h"

TestSuite(cm_destroy, .init = cm_pair_init, .fini = cm_pair_fini);

#define WAIT_US     (2 * 1073741u + 4294967u)
#define TIMEWAIT_US (2 * 1073741u + 2147483u)

Test(cm_destroy, idle_sends_nothing)
{
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL);

	droce_cm_id_destroy(a);
	cr_assert_eq(cm_queued(), 0, "nothing sent");
}

Test(cm_destroy, listener_stops_listening)
{
	struct droce_cm_req_param p = cm_req_param(CM_SID);
	struct droce_cm_id *l = droce_cm_id_create(cm_b.cm, NULL), *l2, *a;

	droce_cm_listen(l, CM_SID, 0);
	droce_cm_id_destroy(l);
	cr_assert_eq(cm_queued(), 0, "nothing sent");
	a = droce_cm_id_create(cm_a.cm, NULL);
	droce_cm_send_req(a, &p);
	cm_deliver_one();
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REASON),
		     DROCE_CM_REJ_INVALID_SERVICE_ID, "nobody listens any more");
	l2 = droce_cm_id_create(cm_b.cm, NULL);
	cr_assert_eq(droce_cm_listen(l2, CM_SID, 0), 0, "the service ID is free again");
}

Test(cm_destroy, req_sent_sends_rej_timeout)
{
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);

	droce_cm_id_destroy(a);
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "REJ sent");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REASON), DROCE_CM_REJ_TIMEOUT,
		     "reason 4");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_IDLE, "b's child IDLE");
	cr_assert_eq(cm_last_ev(&cm_b)->type, DROCE_CM_EV_REJ_RCVD, "b told");
	cm_advance(10 * WAIT_US);
	cr_assert_eq(cm_queued(), 0, "no REQ retried after destroy");
	cr_assert_eq(cm_a.nev, 0, "a's consumer hears nothing");
}

Test(cm_destroy, mra_req_rcvd_sends_rej)
{
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);

	droce_cm_send_mra(b, 20, NULL, 0);
	cm_deliver_one();
	droce_cm_id_destroy(a);
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "REJ sent from MRA_REQ_RCVD");
}

Test(cm_destroy, req_rcvd_sends_rej)
{
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);

	droce_cm_id_destroy(b);
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "REJ sent");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REASON),
		     DROCE_CM_REJ_CONSUMER_DEFINED, "consumer defined");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_REJ_RCVD, "a told");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_IDLE, "a IDLE");
}

Test(cm_destroy, mra_req_sent_sends_rej)
{
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);

	droce_cm_send_mra(b, 20, NULL, 0);
	cm_deliver_one();
	droce_cm_id_destroy(b);
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "REJ sent from MRA_REQ_SENT");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_IDLE, "a IDLE");
}

Test(cm_destroy, rep_rcvd_sends_rej)
{
	struct droce_cm_rep_param rep = cm_rep_param();
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);

	droce_cm_send_rep(b, &rep);
	cm_deliver_one();
	droce_cm_id_destroy(a);
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "REJ sent");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_MESSAGE_REJECTED), DROCE_CM_REF_REP,
		     "of the REP");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_TIMEWAIT, "b waits out its REP");
	cr_assert_eq(cm_last_ev(&cm_b)->type, DROCE_CM_EV_REJ_RCVD, "b told");
}

Test(cm_destroy, rep_sent_sends_rej_and_waits)
{
	struct droce_cm_rep_param rep = cm_rep_param();
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);
	unsigned int nev;

	droce_cm_send_rep(b, &rep);
	cm_deliver_one();
	nev = cm_b.nev;
	droce_cm_id_destroy(b);
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "REJ sent");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_TIMEWAIT, "a in time wait");
	cm_advance(TIMEWAIT_US);
	cr_assert_eq(cm_b.nev, nev, "b's consumer hears nothing more");
	cr_assert_eq(cm_queued(), 0, "no REP retried");
}

Test(cm_destroy, established_sends_dreq_and_finishes_alone)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);
	unsigned int nev = cm_a.nev;

	droce_cm_id_destroy(a);
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_DREQ, "DREQ sent");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_b)->type, DROCE_CM_EV_DREQ_RCVD, "b told");
	droce_cm_send_drep(b, NULL, 0);
	cm_deliver_one();
	cr_assert_eq(droce_cm_timers_run(cm_a.cm), cm_now + TIMEWAIT_US,
		     "a's gone id waits out its time wait");
	cm_advance(TIMEWAIT_US);
	cr_assert_eq(cm_a.nev, nev, "a's consumer hears nothing");
	cr_assert_eq(droce_cm_timers_run(cm_a.cm), UINT64_MAX, "the id is freed");
}

Test(cm_destroy, established_dreq_retried_after_destroy)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);
	int i;

	droce_cm_id_destroy(a);
	cm_drop();
	for (i = 0; i < 3; i++) {
		cm_advance(WAIT_US);
		cr_assert_eq(cm_peek_msg(0), DROCE_CM_DREQ, "DREQ retry %d", i + 1);
		cm_drop();
	}
	cm_advance(WAIT_US);
	cm_advance(TIMEWAIT_US);
	cr_assert_eq(droce_cm_timers_run(cm_a.cm), UINT64_MAX, "freed after time wait");
	cr_assert_eq(cm_a.nev, 1, "only the REP_RCVD of before");
}

Test(cm_destroy, dreq_rcvd_sends_drep)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);

	droce_cm_send_dreq(a, NULL, 0);
	cm_deliver_one();
	droce_cm_id_destroy(b);
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_DREP, "DREP sent");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_TIMEWAIT, "a in time wait");
}

Test(cm_destroy, timewait_sends_nothing)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);

	droce_cm_send_dreq(a, NULL, 0);
	cm_deliver_one();
	droce_cm_send_drep(b, NULL, 0);
	cm_deliver_one();
	droce_cm_id_destroy(a);
	droce_cm_id_destroy(b);
	cr_assert_eq(cm_queued(), 0, "nothing sent");
	cm_advance(TIMEWAIT_US);
	cr_assert_eq(cm_count_ev(&cm_a, DROCE_CM_EV_TIMEWAIT_EXIT), 0, "no exit event");
	cr_assert_eq(droce_cm_timers_run(cm_a.cm), UINT64_MAX, "a's id freed");
}

Test(cm_destroy, sidr_req_rcvd_sends_sidr_rep_reject)
{
	struct droce_cm_sidr_req_param p = {
		.path = cm_a.addr, .service_id = CM_SID, .timeout = 20, .max_cm_retries = 1};
	struct droce_cm_id *l = droce_cm_id_create(cm_b.cm, NULL);
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL);

	droce_cm_listen(l, CM_SID, 0);
	droce_cm_send_sidr_req(a, &p);
	cm_deliver_one();
	droce_cm_id_destroy(cm_last_ev(&cm_b)->id);
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_SIDR_REP, "SIDR_REP sent");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_SIDR_REP_STATUS), DROCE_CM_SIDR_REJECT,
		     "status 2, rejected");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_a)->status, DROCE_CM_SIDR_REJECT, "a told");
}

Test(cm_destroy, sidr_req_sent_stops_retrying)
{
	struct droce_cm_sidr_req_param p = {
		.path = cm_a.addr, .service_id = CM_SID, .timeout = 20, .max_cm_retries = 3};
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL);

	droce_cm_send_sidr_req(a, &p);
	cm_drop();
	droce_cm_id_destroy(a);
	cr_assert_eq(cm_queued(), 0, "nothing sent");
	cm_advance(10000000);
	cr_assert_eq(cm_queued(), 0, "no retry");
}

static void destroy_hook(struct cm_side *s, struct droce_cm_id *id, const struct droce_cm_event *ev)
{
	(void)s;
	if (ev->type == DROCE_CM_EV_REQ_RCVD)
		droce_cm_id_destroy(id);
}

Test(cm_destroy, from_inside_the_event)
{
	struct droce_cm_req_param p = cm_req_param(CM_SID);
	struct droce_cm_id *l = droce_cm_id_create(cm_b.cm, NULL);
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL);

	cm_b.hook = destroy_hook;
	droce_cm_listen(l, CM_SID, 0);
	droce_cm_send_req(a, &p);
	cm_deliver_one();
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "the child's REJ");
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_IDLE, "a IDLE");
	cr_assert_eq(droce_cm_timers_run(cm_b.cm), UINT64_MAX, "b keeps no timer");
}
