/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Malformed MADs handed to the agent: counted by droce_mad_parse's reason, dropped, never
 * read past their length (each is copied to the end of a buffer of exactly its size), and
 * the connection in progress untouched.
 */
#include <stdlib.h>

#include "cm_pair.h"

TestSuite(cm_malformed, .init = cm_pair_init, .fini = cm_pair_fini);

/* Give @p len bytes of @p mad to a, in a heap buffer of exactly @p len bytes. */
static void give(const uint8_t *mad, size_t len)
{
	uint8_t *buf = malloc(len ? len : 1);

	cr_assert_not_null(buf, "buffer");
	memcpy(buf, mad, len);
	droce_cm_recv(cm_a.cm, &cm_a.addr, buf, len);
	free(buf);
}

static void rep_of(struct droce_cm_id *a, uint8_t *mad)
{
	droce_cm_init(mad, DROCE_MAD_LEN, DROCE_CM_REP, 1);
	droce_cm_set(mad, DROCE_CM_REP_REMOTE_COMM_ID, droce_cm_id_local_comm_id(a));
	droce_cm_set(mad, DROCE_CM_REP_LOCAL_COMM_ID, 5);
}

Test(cm_malformed, every_reason_counted_and_dropped)
{
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);
	uint8_t mad[DROCE_MAD_LEN + 44];
	size_t len;

	(void)b;
	rep_of(a, mad);
	for (len = 0; len < DROCE_MAD_LEN; len += 17)
		give(mad, len);
	cr_assert_eq(cm_stats(&cm_a).malformed[DROCE_MAD_TRUNC], 16, "short MADs counted");
	memset(mad + DROCE_MAD_LEN, 0, 44);
	give(mad, sizeof(mad));
	cr_assert_eq(cm_stats(&cm_a).malformed[DROCE_MAD_TOO_LONG], 1, "a long MAD counted");

	rep_of(a, mad);
	mad[0] = 2;
	give(mad, DROCE_MAD_LEN);
	cr_assert_eq(cm_stats(&cm_a).malformed[DROCE_MAD_BAD_BASE_VERSION], 1, "base version");
	rep_of(a, mad);
	mad[2] = 1;
	give(mad, DROCE_MAD_LEN);
	cr_assert_eq(cm_stats(&cm_a).malformed[DROCE_MAD_BAD_CLASS_VERSION], 1, "class version");
	rep_of(a, mad);
	mad[3] = DROCE_MAD_METHOD_GET;
	give(mad, DROCE_MAD_LEN);
	cr_assert_eq(cm_stats(&cm_a).malformed[DROCE_MAD_BAD_METHOD], 1, "Get of a REP");
	rep_of(a, mad);
	mad[3] = DROCE_MAD_METHOD_SEND | DROCE_MAD_METHOD_RESP;
	give(mad, DROCE_MAD_LEN);
	cr_assert_eq(cm_stats(&cm_a).malformed[DROCE_MAD_BAD_METHOD], 2, "R bit");
	rep_of(a, mad);
	mad[16] = 0x00;
	mad[17] = 0x30; /* attribute 0x0030 */
	give(mad, DROCE_MAD_LEN);
	cr_assert_eq(cm_stats(&cm_a).malformed[DROCE_MAD_BAD_ATTR], 1, "unknown attribute");
	rep_of(a, mad);
	mad[1] = 0x04; /* another management class */
	give(mad, DROCE_MAD_LEN);
	cr_assert_eq(cm_stats(&cm_a).malformed[DROCE_MAD_NOT_CM], 1, "not the CM's");

	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_REQ_SENT, "a untouched");
	cr_assert_eq(cm_a.nev, 0, "no event");
	cr_assert_eq(cm_queued(), 0, "nothing answered");
	cr_assert_eq(cm_stats(&cm_a).rx[DROCE_CM_REP], 0, "no REP accepted");
	rep_of(a, mad);
	give(mad, DROCE_MAD_LEN);
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_REP_RCVD, "the well-formed REP goes in");
}

Test(cm_malformed, rej_with_long_ari_refused)
{
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);
	uint8_t mad[DROCE_MAD_LEN];

	(void)b;
	droce_cm_init(mad, sizeof(mad), DROCE_CM_REJ, 1);
	droce_cm_set(mad, DROCE_CM_REJ_REMOTE_COMM_ID, droce_cm_id_local_comm_id(a));
	droce_cm_set(mad, DROCE_CM_REJ_REASON, DROCE_CM_REJ_CONSUMER_DEFINED);
	droce_cm_set(mad, DROCE_CM_REJ_REJECTED_INFO_LENGTH, 73);
	give(mad, sizeof(mad));
	cr_assert_eq(cm_stats(&cm_a).malformed[DROCE_MAD_BAD_INFO_LEN], 1, "ARI length counted");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_REQ_SENT, "a untouched");
}

Test(cm_malformed, class_port_info_counted_and_dropped)
{
	uint8_t mad[DROCE_MAD_LEN] = {0};
	struct droce_mad_fields f = {
		.base_version = DROCE_MAD_BASE_VERSION,
		.mgmt_class = DROCE_MAD_CLASS_CM,
		.class_version = DROCE_MAD_CM_CLASS_VERSION,
		.method = DROCE_MAD_METHOD_GET,
		.tid = 9,
		.attr_id = DROCE_CM_ATTR_CLASS_PORT_INFO,
	};

	droce_mad_hdr_set(mad, &f);
	give(mad, sizeof(mad));
	cr_assert_eq(cm_stats(&cm_a).malformed[DROCE_MAD_CLASS_PORT_INFO], 1, "counted");
	cr_assert_eq(cm_queued(), 0, "not answered (yet)");
}

Test(cm_malformed, unmatched_messages_counted)
{
	uint8_t mad[DROCE_MAD_LEN];
	enum droce_cm_msg msgs[] = {DROCE_CM_REP,  DROCE_CM_RTU,      DROCE_CM_MRA,
				    DROCE_CM_DREP, DROCE_CM_SIDR_REP, DROCE_CM_REJ};
	unsigned int i;

	for (i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		droce_cm_init(mad, sizeof(mad), msgs[i], 1);
		/* every remote comm ID names no id (the REJ's: 0, its sender's unknown) */
		if (msgs[i] == DROCE_CM_REJ)
			droce_cm_set(mad, DROCE_CM_REJ_LOCAL_COMM_ID, 77);
		else if (msgs[i] == DROCE_CM_SIDR_REP)
			droce_cm_set(mad, DROCE_CM_SIDR_REP_REQUEST_ID, 77);
		give(mad, sizeof(mad));
		cr_assert_eq(cm_stats(&cm_a).unmatched, i + 1, "%s unmatched",
			     droce_cm_msg_table[msgs[i]].name);
	}
	cr_assert_eq(cm_queued(), 0, "nothing answered");
	cr_assert_eq(cm_a.nev, 0, "no event");
}

Test(cm_malformed, null_arguments_ignored)
{
	uint8_t mad[DROCE_MAD_LEN] = {0};

	droce_cm_recv(NULL, &cm_a.addr, mad, sizeof(mad));
	droce_cm_recv(cm_a.cm, NULL, mad, sizeof(mad));
	droce_cm_recv(cm_a.cm, &cm_a.addr, NULL, sizeof(mad));
	droce_cm_id_destroy(NULL);
	droce_cm_destroy(NULL);
	cr_assert_eq(cm_stats(&cm_a).malformed[DROCE_MAD_TRUNC], 0, "nothing counted");
}
