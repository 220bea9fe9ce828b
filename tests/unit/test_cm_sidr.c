/* SPDX-License-Identifier: BSD-3-Clause */
/* Service ID resolution (12.11): SIDR_REQ and SIDR_REP, no listener, retries, time-out. */
#include "cm_pair.h"

TestSuite(cm_sidr, .init = cm_pair_init, .fini = cm_pair_fini);

/* SIDR_REQ timeout 20: 4.096 µs × 2^20 */
#define SIDR_US 4294967u

static struct droce_cm_sidr_req_param sidr_param(uint64_t sid)
{
	static const uint8_t priv[2] = {0x42, 0x43};
	struct droce_cm_sidr_req_param p = {
		.path = cm_a.addr,
		.service_id = sid,
		.timeout = 20,
		.max_cm_retries = 2,
		.private_data = priv,
		.private_data_len = sizeof(priv),
	};

	return p;
}

Test(cm_sidr, resolved)
{
	struct droce_cm_sidr_req_param p = sidr_param(CM_SID);
	struct droce_cm_sidr_rep_param rep = {
		.status = DROCE_CM_SIDR_VALID, .qpn = 0x33, .qkey = 0x11111111};
	struct droce_cm_id *l = droce_cm_id_create(cm_b.cm, NULL);
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL), *b;
	uint8_t req[DROCE_MAD_LEN];

	droce_cm_listen(l, CM_SID, 0);
	cr_assert_eq(droce_cm_send_sidr_req(a, &p), 0, "SIDR_REQ sent");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_SIDR_REQ_SENT, "SIDR_REQ_SENT");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_SIDR_REQ_REQUEST_ID),
		     droce_cm_id_local_comm_id(a), "request ID is the comm ID");
	memcpy(req, cm_peek(0)->mad, sizeof(req));
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_b)->type, DROCE_CM_EV_SIDR_REQ_RCVD, "SIDR_REQ_RCVD");
	cr_assert_eq(cm_last_ev(&cm_b)->listen_id, l, "through the listener");
	cr_assert_eq(cm_last_ev(&cm_b)->priv[0], 0x42, "private data");
	b = cm_last_ev(&cm_b)->id;
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_SIDR_REQ_RCVD, "child in SIDR_REQ_RCVD");
	cm_inject(&cm_b, req, sizeof(req));
	cr_assert_eq(cm_b.nev, 1, "a duplicate before the answer is dropped");
	cr_assert_eq(cm_queued(), 0, "and not answered");
	cr_assert_eq(droce_cm_send_sidr_rep(b, &rep), 0, "SIDR_REP sent");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_IDLE, "child IDLE");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_SIDR_REP_QPN), 0x33, "QPN");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_SIDR_REP_QKEY), 0x11111111, "Q_Key");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_SIDR_REP_SERVICE_ID), CM_SID,
		     "service ID");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_SIDR_REP_RCVD, "SIDR_REP_RCVD");
	cr_assert_eq(cm_last_ev(&cm_a)->status, DROCE_CM_SIDR_VALID, "status 0");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_IDLE, "a IDLE");
	cr_assert_eq(droce_cm_timers_run(cm_a.cm), UINT64_MAX, "timer stopped");
	cm_inject(&cm_b, req, sizeof(req));
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_SIDR_REP, "a late duplicate gets the answer again");
	cm_deliver_one();
	cr_assert_eq(cm_stats(&cm_a).unmatched, 1, "a's id no longer waits: unmatched");
}

Test(cm_sidr, no_listener_is_status_1)
{
	struct droce_cm_sidr_req_param p = sidr_param(CM_SID);
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL);

	droce_cm_send_sidr_req(a, &p);
	cm_deliver_one();
	cr_assert_eq(cm_b.nev, 0, "nobody told on b");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_SIDR_REP, "SIDR_REP");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_SIDR_REP_STATUS),
		     DROCE_CM_SIDR_UNSUPPORTED, "status 1, service ID not supported");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_SIDR_REP_RCVD, "a told");
	cr_assert_eq(cm_last_ev(&cm_a)->status, DROCE_CM_SIDR_UNSUPPORTED, "status 1");
}

Test(cm_sidr, retried_then_error)
{
	struct droce_cm_sidr_req_param p = sidr_param(CM_SID);
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL);
	int i;

	droce_cm_send_sidr_req(a, &p);
	cm_drop();
	cr_assert_eq(droce_cm_timers_run(cm_a.cm), cm_now + SIDR_US, "4.096 us x 2^timeout");
	for (i = 0; i < 2; i++) {
		cm_advance(SIDR_US);
		cr_assert_eq(cm_peek_msg(0), DROCE_CM_SIDR_REQ, "retry %d", i + 1);
		cm_drop();
	}
	cm_advance(SIDR_US);
	cr_assert_eq(cm_queued(), 0, "nothing more sent");
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_SIDR_REQ_ERROR, "SIDR_REQ_ERROR");
	cr_assert_eq(cm_last_ev(&cm_a)->status, -ETIMEDOUT, "-ETIMEDOUT");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_IDLE, "IDLE");
	cr_assert_eq(cm_stats(&cm_a).retries, 2, "two retries");
}
