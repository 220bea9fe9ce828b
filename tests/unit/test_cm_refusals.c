/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the agent refuses on its own: stale connections (12.9.8.3: REJ reason 10, DREQ of the
 * old connection), LAP (12.6.13: APR "unsupported", no state change), RD REQs (reason 9).
 */
#include "cm_pair.h"

TestSuite(cm_refusals, .init = cm_pair_init, .fini = cm_pair_fini);

#define TIMEWAIT_US (2 * 1073741u + 2147483u)

Test(cm_refusals, req_from_a_connected_qp_is_stale)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);
	struct droce_cm_req_param p = cm_req_param(CM_SID); /* the same QPN 0x11 */
	struct droce_cm_id *a2 = droce_cm_id_create(cm_a.cm, NULL);
	unsigned int nev = cm_b.nev;

	cr_assert_eq(droce_cm_send_req(a2, &p), 0, "a second REQ from QP 0x11");
	cm_deliver_one();
	cr_assert_eq(cm_b.nev, nev, "no REQ_RCVD");
	cr_assert_eq(cm_stats(&cm_b).stale, 1, "counted stale");
	cr_assert_eq(cm_queued(), 2, "REJ and DREQ");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "REJ first");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REASON), DROCE_CM_REJ_STALE_CONN,
		     "reason 10");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REMOTE_COMM_ID),
		     droce_cm_id_local_comm_id(a2), "to the new REQ");
	cr_assert_eq(cm_peek_msg(1), DROCE_CM_DREQ, "then DREQ of the old connection");
	cr_assert_eq(droce_cm_get(cm_peek(1)->mad, DROCE_CM_DREQ_REMOTE_COMM_ID),
		     droce_cm_id_local_comm_id(a), "to the old connection");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_DREQ_SENT, "the old one leaves");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_a)->id, a2, "a2 told");
	cr_assert_eq(cm_last_ev(&cm_a)->status, DROCE_CM_REJ_STALE_CONN, "stale");
	cr_assert_eq(droce_cm_id_state(a2), DROCE_CM_TIMEWAIT, "a stale REJ means time wait");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_a)->type, DROCE_CM_EV_DREQ_RCVD, "a's old id told");
	cr_assert_eq(cm_last_ev(&cm_a)->id, a, "the old one");
}

Test(cm_refusals, duplicate_req_in_timewait_is_stale)
{
	struct droce_cm_req_param p = cm_req_param(CM_SID);
	struct droce_cm_id *listener, *b, *a;
	uint8_t req[DROCE_MAD_LEN];

	listener = droce_cm_id_create(cm_b.cm, NULL);
	droce_cm_listen(listener, CM_SID, 0);
	a = droce_cm_id_create(cm_a.cm, NULL);
	droce_cm_send_req(a, &p);
	memcpy(req, cm_peek(0)->mad, sizeof(req));
	cm_deliver_one();
	b = cm_last_ev(&cm_b)->id;
	struct droce_cm_rep_param rep = cm_rep_param();
	droce_cm_send_rep(b, &rep);
	cm_deliver_one();
	droce_cm_send_rtu(a, NULL, 0);
	cm_deliver_one();
	droce_cm_send_dreq(b, NULL, 0);
	cm_deliver_one();
	droce_cm_send_drep(a, NULL, 0);
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_TIMEWAIT, "b in time wait");
	cm_inject(&cm_b, req, sizeof(req));
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_REJ, "REJ");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REASON), DROCE_CM_REJ_STALE_CONN,
		     "stale");
	cr_assert_eq(cm_stats(&cm_b).stale, 1, "counted");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_TIMEWAIT, "b unchanged");
	cm_advance(TIMEWAIT_US);
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_IDLE, "time wait ends as ever");
}

static void make_lap(uint8_t *lap, uint32_t local, uint32_t remote)
{
	cr_assert_eq(droce_cm_init(lap, DROCE_MAD_LEN, DROCE_CM_LAP, 0x1234), 0, "LAP");
	droce_cm_set(lap, DROCE_CM_LAP_LOCAL_COMM_ID, local);
	droce_cm_set(lap, DROCE_CM_LAP_REMOTE_COMM_ID, remote);
}

Test(cm_refusals, lap_refused_with_apr_in_any_state)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);
	uint8_t lap[DROCE_MAD_LEN];
	struct droce_mad_fields f;

	make_lap(lap, droce_cm_id_local_comm_id(a), droce_cm_id_local_comm_id(b));
	cm_inject(&cm_b, lap, sizeof(lap));
	cr_assert_eq(cm_queued(), 1, "answered");
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_APR, "with APR");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_APR_AP_STATUS),
		     DROCE_CM_APR_UNSUPPORTED, "status 2, unsupported");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_APR_LOCAL_COMM_ID),
		     droce_cm_id_local_comm_id(b), "from b's comm ID");
	droce_mad_hdr_get(cm_peek(0)->mad, &f);
	cr_assert_eq(f.tid, 0x1234, "the LAP's TID");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_ESTABLISHED, "no state change");
	cr_assert_eq(cm_stats(&cm_b).rx[DROCE_CM_LAP], 1, "LAP counted");
	cr_assert_eq(cm_stats(&cm_b).tx[DROCE_CM_APR], 1, "APR counted");
	cm_deliver_one();
	cr_assert_eq(cm_stats(&cm_a).unmatched, 1, "an APR nobody waits for is dropped");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_ESTABLISHED, "a unchanged");
	make_lap(lap, 7, 9); /* no connection at all */
	cm_inject(&cm_b, lap, sizeof(lap));
	cr_assert_eq(cm_peek_msg(0), DROCE_CM_APR, "refused the same without a connection");
}

Test(cm_refusals, rd_req_is_rej_invalid_transport)
{
	struct droce_cm_req_param p = cm_req_param(CM_SID);
	struct droce_cm_id *l = droce_cm_id_create(cm_b.cm, NULL);
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL);
	uint8_t req[DROCE_MAD_LEN];

	droce_cm_listen(l, CM_SID, 0);
	droce_cm_send_req(a, &p);
	memcpy(req, cm_peek(0)->mad, sizeof(req));
	cm_drop();
	droce_cm_set(req, DROCE_CM_REQ_TRANSPORT_SERVICE_TYPE, DROCE_CM_TRANSPORT_RD);
	cm_inject(&cm_b, req, sizeof(req));
	cr_assert_eq(cm_b.nev, 0, "no REQ_RCVD");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REASON),
		     DROCE_CM_REJ_INVALID_TRANSPORT_TYPE, "reason 9");
}

Test(cm_refusals, mad_from_another_gid_is_unmatched)
{
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);
	struct droce_cm_rep_param rep = cm_rep_param();
	struct droce_cm_addr from = cm_a.addr;

	droce_cm_send_rep(b, &rep);
	from.dgid[15] = 9; /* someone else */
	droce_cm_recv(cm_a.cm, &from, cm_peek(0)->mad, DROCE_MAD_LEN);
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_REQ_SENT, "a ignores it");
	cr_assert_eq(cm_stats(&cm_a).unmatched, 1, "counted");
}

Test(cm_refusals, req_from_a_qp_in_timewait_is_stale_without_dreq)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);
	struct droce_cm_req_param p = cm_req_param(CM_SID);
	struct droce_cm_id *a2 = droce_cm_id_create(cm_a.cm, NULL);

	droce_cm_send_dreq(a, NULL, 0);
	cm_deliver_one();
	droce_cm_send_drep(b, NULL, 0);
	cm_deliver_one();
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_TIMEWAIT, "b in time wait");
	droce_cm_send_req(a2, &p);
	cm_deliver_one();
	cr_assert_eq(cm_queued(), 1, "only the REJ");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REASON), DROCE_CM_REJ_STALE_CONN,
		     "reason 10");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_TIMEWAIT, "b's old id keeps waiting");
	cm_advance(TIMEWAIT_US);
	cm_deliver_all();
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_IDLE, "time wait over");
	p = cm_req_param(CM_SID);
	struct droce_cm_id *a3 = droce_cm_id_create(cm_a.cm, NULL);
	cr_assert_eq(droce_cm_send_req(a3, &p), 0, "a third REQ");
	cm_deliver_one();
	cr_assert_eq(cm_last_ev(&cm_b)->type, DROCE_CM_EV_REQ_RCVD, "taken once time wait ended");
}
