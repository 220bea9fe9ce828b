/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport's state machines name every state (traces and tests read the tables), and
 * the RC/UC service table says what UC skips (IBTA 9.8).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "rc_priv.h"

/* Every entry named, and no two alike. */
static void check_names(const char *const *names, unsigned int n, const char *table)
{
	for (unsigned int i = 0; i < n; i++) {
		cr_assert_not_null(names[i], "%s: state %u has no name", table, i);
		cr_expect_gt(strlen(names[i]), 0, "%s: state %u named by an empty string", table,
			     i);
		for (unsigned int j = 0; j < i; j++)
			cr_expect_str_neq(names[i], names[j], "%s: states %u and %u share %s",
					  table, j, i, names[i]);
	}
}

Test(transport_state_names, requester_states)
{
	check_names(droce_rc_req_state_names, RC_REQ_STATE_COUNT, "requester");
	cr_expect_str_eq(droce_rc_req_state_names[RC_REQ_SEND_PKT], "SEND_PKT");
}

Test(transport_state_names, requester_waits)
{
	check_names(droce_rc_req_wait_names, RC_REQ_WAIT_COUNT, "requester waits");
	cr_expect_str_eq(droce_rc_req_wait_names[RC_REQ_WAIT_RD_ATOMIC], "RD_ATOMIC");
}

Test(transport_state_names, completer_states)
{
	check_names(droce_rc_comp_state_names, RC_COMP_STATE_COUNT, "completer");
	cr_expect_str_eq(droce_rc_comp_state_names[RC_COMP_RNR], "RNR");
}

Test(transport_state_names, responder_states_name_the_error_classes)
{
	check_names(droce_rc_resp_state_names, RC_RESP_STATE_COUNT, "responder");
	cr_expect_str_eq(droce_rc_resp_state_names[RC_RESP_ERR_CLASS_A], "ERR_CLASS_A");
	cr_expect_str_eq(droce_rc_resp_state_names[RC_RESP_ERR_CLASS_C], "ERR_CLASS_C");
	cr_expect_str_eq(droce_rc_resp_state_names[RC_RESP_ERR_CLASS_D], "ERR_CLASS_D");
	cr_expect_str_eq(droce_rc_resp_state_names[RC_RESP_ERR_CLASS_E], "ERR_CLASS_E");
}

Test(transport_state_names, uc_skips_what_the_table_says)
{
	const struct rc_service *rc = &droce_rc_services[0], *uc = &droce_rc_services[1];
	struct droce_tqp q;

	memset(&q, 0, sizeof(q));
	q.sq.size = 1;
	q.sq.slot_size = 64;
	q.type = IBV_QPT_UC;
	cr_assert_eq(droce_rc_init(&q), 0);
	cr_expect_eq(rc_svc(&q), uc, "a UC QP reads the UC row");
	droce_rc_fini(NULL, &q);
	q.type = IBV_QPT_RC;
	cr_assert_eq(droce_rc_init(&q), 0);
	cr_expect_eq(rc_svc(&q), rc, "an RC QP reads the RC row");
	droce_rc_fini(NULL, &q);
	cr_expect(rc->acked && rc->retried && rc->go_back && rc->naks, "RC does all of it");
	cr_expect_not(uc->acked, "UC: no ACK, no READ or atomic response");
	cr_expect_not(uc->retried, "UC: no retransmission");
	cr_expect_not(uc->go_back, "UC: no NAK sequence error, no duplicate re-ACK");
	cr_expect_not(uc->naks, "UC: class D instead of C");
	cr_expect_eq(rc->send_error_state, IBV_QPS_ERR, "an RC send error: Error");
	cr_expect_eq(uc->send_error_state, IBV_QPS_SQE, "a UC send error: Send Queue Error");
	cr_expect_eq(rc->opm, DROCE_OPM_RC);
	cr_expect_eq(uc->opm, DROCE_OPM_UC);
	cr_expect_eq(rc->svc, DROCE_SVC_RC);
	cr_expect_eq(uc->svc, DROCE_SVC_UC);
}
