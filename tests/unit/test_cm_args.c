/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every argument the agent refuses, with its errno, and nothing sent or changed when it does;
 * listeners whose service IDs overlap; the state and event names.
 */
#include "cm_pair.h"

TestSuite(cm_args, .init = cm_pair_init, .fini = cm_pair_fini);

static const uint8_t big[256];

static uint64_t ret_now(void *arg)
{
	(void)arg;
	return 0;
}

Test(cm_args, create_needs_every_op)
{
	struct droce_cm_ops ops = {.now_us = ret_now};

	errno = 0;
	cr_assert_null(droce_cm_create(NULL), "NULL ops refused");
	cr_assert_eq(errno, EINVAL, "EINVAL");
	errno = 0;
	cr_assert_null(droce_cm_create(&ops), "ops without send/event refused");
	cr_assert_eq(errno, EINVAL, "EINVAL without send");
	errno = 0;
	cr_assert_null(droce_cm_id_create(NULL, NULL), "no agent, no id");
	cr_assert_eq(errno, EINVAL, "EINVAL for the id");
}

Test(cm_args, listeners_may_not_overlap)
{
	struct droce_cm_id *l1 = droce_cm_id_create(cm_b.cm, NULL);
	struct droce_cm_id *l2 = droce_cm_id_create(cm_b.cm, NULL);
	struct droce_cm_id *l3 = droce_cm_id_create(cm_b.cm, NULL);

	cr_assert_eq(droce_cm_listen(NULL, 1, 0), -EINVAL, "NULL id");
	cr_assert_eq(droce_cm_listen(l1, 0x12345678, 0), 0, "exact listener");
	cr_assert_eq(droce_cm_listen(l1, 0x9, 0), -EINVAL, "already listening");
	cr_assert_eq(droce_cm_listen(l2, 0x12345678, 0), -EBUSY, "the same ID");
	cr_assert_eq(droce_cm_listen(l2, 0x12340000, 0xffff0000), -EBUSY,
		     "a mask covering the exact one");
	cr_assert_eq(droce_cm_listen(l2, 0x12340000, 0xffff00ff), 0,
		     "a mask that disagrees in the low byte does not overlap");
	cr_assert_eq(droce_cm_listen(l3, 0x12000000, 0xff000000), -EBUSY,
		     "a wider mask overlaps both");
	cr_assert_eq(droce_cm_listen(l3, 0x13000000, 0xff000000), 0, "another prefix is free");
	cr_assert_eq(droce_cm_id_state(l2), DROCE_CM_LISTEN, "l2 listens");
	droce_cm_id_destroy(l1);
	l1 = droce_cm_id_create(cm_b.cm, NULL);
	cr_assert_eq(droce_cm_listen(l1, 0x12345678, 0), 0, "free after destroy");
}

Test(cm_args, req_refusals)
{
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL);
	struct droce_cm_req_param good = cm_req_param(CM_SID), p;

#define REFUSED(field, value, err)                                                \
	do {                                                                      \
		p = good;                                                         \
		p.field = value;                                                  \
		cr_assert_eq(droce_cm_send_req(a, &p), err, #field " = " #value); \
	} while (0)

	cr_assert_eq(droce_cm_send_req(NULL, &good), -EINVAL, "NULL id");
	cr_assert_eq(droce_cm_send_req(a, NULL), -EINVAL, "NULL param");
	REFUSED(transport, DROCE_CM_TRANSPORT_RD, -EINVAL);
	REFUSED(local_qpn, 1u << 24, -EINVAL);
	REFUSED(starting_psn, 1u << 24, -EINVAL);
	REFUSED(remote_cm_response_timeout, 32, -EINVAL);
	REFUSED(local_cm_response_timeout, 32, -EINVAL);
	REFUSED(max_cm_retries, 16, -EINVAL);
	REFUSED(retry_count, 8, -EINVAL);
	REFUSED(rnr_retry_count, 8, -EINVAL);
	REFUSED(local_ack_timeout, 32, -EINVAL);
	REFUSED(packet_life_time, 32, -EINVAL);
	REFUSED(path.flow_label, 1u << 20, -EINVAL);
	REFUSED(path_mtu, 0, -EINVAL);
	REFUSED(path_mtu, 6, -EINVAL);
	REFUSED(private_data, NULL, -EINVAL);
	p = good;
	p.private_data = big;
	p.private_data_len = 93;
	cr_assert_eq(droce_cm_send_req(a, &p), -EMSGSIZE, "93 bytes of private data");
	cr_assert_eq(cm_queued(), 0, "nothing sent");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_IDLE, "still IDLE");
	p.private_data_len = 92;
	cr_assert_eq(droce_cm_send_req(a, &p), 0, "92 bytes fit");
	cr_assert_eq(droce_cm_send_req(a, &good), -EINVAL, "not twice");
#undef REFUSED
}

Test(cm_args, rep_rtu_mra_rej_refusals)
{
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);
	struct droce_cm_rep_param good = cm_rep_param(), p;
	uint8_t ari[1] = {1};

#define REFUSED(field, value, err)                                                \
	do {                                                                      \
		p = good;                                                         \
		p.field = value;                                                  \
		cr_assert_eq(droce_cm_send_rep(b, &p), err, #field " = " #value); \
	} while (0)

	struct droce_cm_req_param req = cm_req_param(CM_SID);

	cr_assert_eq(droce_cm_send_rej(b, 28, NULL, 0, NULL, 0), 0, "b rejects");
	cm_drop();
	cr_assert_eq(droce_cm_send_req(b, &req), -EINVAL, "a REQ's child sends no REQ");
	struct droce_cm_sidr_req_param sidr = {.path = cm_b.addr, .service_id = 1, .timeout = 20};
	cr_assert_eq(droce_cm_send_sidr_req(b, &sidr), -EINVAL, "nor SIDR_REQ");
	/* a fresh start for the refusals below */
	cm_deliver_all();
	a = droce_cm_id_create(cm_a.cm, NULL);
	droce_cm_send_req(a, &req);
	cm_deliver_one();
	b = cm_last_ev(&cm_b)->id;
	cr_assert_eq(droce_cm_send_rep(a, &good), -EINVAL, "REP from REQ_SENT");
	cr_assert_eq(droce_cm_send_rep(NULL, &good), -EINVAL, "NULL id");
	cr_assert_eq(droce_cm_send_rep(b, NULL), -EINVAL, "NULL param");
	REFUSED(local_qpn, 1u << 24, -EINVAL);
	REFUSED(starting_psn, 1u << 24, -EINVAL);
	REFUSED(target_ack_delay, 32, -EINVAL);
	REFUSED(rnr_retry_count, 8, -EINVAL);
	REFUSED(private_data_len, 1, -EINVAL); /* NULL data */
	p = good;
	p.private_data = big;
	p.private_data_len = 197;
	cr_assert_eq(droce_cm_send_rep(b, &p), -EMSGSIZE, "197 bytes of private data");
#undef REFUSED
	cr_assert_eq(droce_cm_send_rtu(a, NULL, 0), -EINVAL, "RTU from REQ_SENT");
	cr_assert_eq(droce_cm_send_rtu(NULL, NULL, 0), -EINVAL, "RTU without id");
	cr_assert_eq(droce_cm_send_dreq(a, NULL, 0), -EINVAL, "DREQ from REQ_SENT");
	cr_assert_eq(droce_cm_send_dreq(NULL, NULL, 0), -EINVAL, "DREQ without id");
	cr_assert_eq(droce_cm_send_drep(b, NULL, 0), -EINVAL, "DREP from REQ_RCVD");
	cr_assert_eq(droce_cm_send_drep(NULL, NULL, 0), -EINVAL, "DREP without id");
	cr_assert_eq(droce_cm_established(NULL), -EINVAL, "established without id");
	cr_assert_eq(droce_cm_send_mra(a, 1, NULL, 0), -EINVAL, "MRA from REQ_SENT");
	cr_assert_eq(droce_cm_send_mra(NULL, 1, NULL, 0), -EINVAL, "MRA without id");
	cr_assert_eq(droce_cm_send_mra(b, 32, NULL, 0), -EINVAL, "service timeout 32");
	cr_assert_eq(droce_cm_send_mra(b, 1, NULL, 1), -EINVAL, "NULL private data");
	cr_assert_eq(droce_cm_send_mra(b, 1, big, 223), -EMSGSIZE, "223 bytes");
	cr_assert_eq(droce_cm_send_rej(a, 28, NULL, 0, NULL, 0), -EINVAL, "REJ from REQ_SENT");
	cr_assert_eq(droce_cm_send_rej(NULL, 28, NULL, 0, NULL, 0), -EINVAL, "REJ without id");
	cr_assert_eq(droce_cm_send_rej(b, 0, NULL, 0, NULL, 0), -EINVAL, "reason 0");
	cr_assert_eq(droce_cm_send_rej(b, 34, NULL, 0, NULL, 0), -EINVAL, "reason 34");
	cr_assert_eq(droce_cm_send_rej(b, 28, NULL, 1, NULL, 0), -EINVAL, "NULL ARI");
	cr_assert_eq(droce_cm_send_rej(b, 28, big, 73, NULL, 0), -EMSGSIZE, "73 bytes of ARI");
	cr_assert_eq(droce_cm_send_rej(b, 28, NULL, 0, NULL, 1), -EINVAL, "NULL private data");
	cr_assert_eq(droce_cm_send_rej(b, 28, NULL, 0, big, 149), -EMSGSIZE, "149 bytes");
	cr_assert_eq(cm_queued(), 0, "nothing sent");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_REQ_RCVD, "b unchanged");
	cr_assert_eq(droce_cm_send_rej(b, 28, ari, 1, big, 148), 0, "a full REJ goes");
	cr_assert_eq(droce_cm_get(cm_peek(0)->mad, DROCE_CM_REJ_REJECTED_INFO_LENGTH), 1,
		     "ARI length");
	cr_assert_eq(droce_cm_bytes(cm_peek(0)->mad, DROCE_CM_REJ_ARI)[0], 1, "ARI");
}

Test(cm_args, established_refusals)
{
	struct droce_cm_id *listener, *b, *a = cm_connect(&listener, &b);

	cr_assert_eq(droce_cm_send_rtu(a, NULL, 0), -EINVAL, "RTU when established");
	cr_assert_eq(droce_cm_send_dreq(a, NULL, 1), -EINVAL, "NULL private data");
	cr_assert_eq(droce_cm_send_dreq(a, big, 221), -EMSGSIZE, "221 bytes");
	cr_assert_eq(droce_cm_send_rej(a, 28, NULL, 0, NULL, 0), -EINVAL, "REJ when established");
	cr_assert_eq(droce_cm_established(a), -EINVAL, "established twice");
	droce_cm_send_dreq(a, NULL, 0);
	cm_deliver_one();
	cr_assert_eq(droce_cm_send_drep(b, NULL, 1), -EINVAL, "NULL private data");
	cr_assert_eq(droce_cm_send_drep(b, big, 225), -EMSGSIZE, "225 bytes");
	cr_assert_eq(droce_cm_send_dreq(a, NULL, 0), -EINVAL, "DREQ twice");
	cr_assert_eq(droce_cm_send_drep(b, big, 224), 0, "224 bytes fit");
}

Test(cm_args, rtu_refusals)
{
	struct droce_cm_rep_param rep = cm_rep_param();
	struct droce_cm_id *listener, *b, *a = cm_start(&listener, &b);

	droce_cm_send_rep(b, &rep);
	cm_deliver_one();
	cr_assert_eq(droce_cm_send_rtu(a, NULL, 1), -EINVAL, "NULL private data");
	cr_assert_eq(droce_cm_send_rtu(a, big, 225), -EMSGSIZE, "225 bytes");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_REP_RCVD, "unchanged");
}

Test(cm_args, sidr_refusals)
{
	struct droce_cm_sidr_req_param good = {
		.path = cm_a.addr, .service_id = CM_SID, .timeout = 20, .max_cm_retries = 1};
	struct droce_cm_sidr_req_param p;
	struct droce_cm_sidr_rep_param rep = {.status = DROCE_CM_SIDR_VALID}, r;
	struct droce_cm_id *l = droce_cm_id_create(cm_b.cm, NULL);
	struct droce_cm_id *a = droce_cm_id_create(cm_a.cm, NULL), *b;

	cr_assert_eq(droce_cm_send_sidr_req(NULL, &good), -EINVAL, "NULL id");
	cr_assert_eq(droce_cm_send_sidr_req(a, NULL), -EINVAL, "NULL param");
	p = good;
	p.timeout = 32;
	cr_assert_eq(droce_cm_send_sidr_req(a, &p), -EINVAL, "timeout 32");
	p = good;
	p.max_cm_retries = 16;
	cr_assert_eq(droce_cm_send_sidr_req(a, &p), -EINVAL, "16 retries");
	p = good;
	p.path.flow_label = 1u << 20;
	cr_assert_eq(droce_cm_send_sidr_req(a, &p), -EINVAL, "flow label");
	p = good;
	p.private_data_len = 1;
	cr_assert_eq(droce_cm_send_sidr_req(a, &p), -EINVAL, "NULL private data");
	p.private_data = big;
	p.private_data_len = 217;
	cr_assert_eq(droce_cm_send_sidr_req(a, &p), -EMSGSIZE, "217 bytes");
	cr_assert_eq(cm_queued(), 0, "nothing sent");
	droce_cm_listen(l, CM_SID, 0);
	cr_assert_eq(droce_cm_send_sidr_req(l, &good), -EINVAL, "a listener sends none");
	cr_assert_eq(droce_cm_send_sidr_req(a, &good), 0, "good SIDR_REQ");
	cr_assert_eq(droce_cm_send_sidr_req(a, &good), -EINVAL, "not twice");
	cr_assert_eq(droce_cm_send_sidr_rep(a, &rep), -EINVAL, "SIDR_REP from SIDR_REQ_SENT");
	cm_deliver_one();
	b = cm_last_ev(&cm_b)->id;
	cr_assert_eq(droce_cm_send_sidr_rep(NULL, &rep), -EINVAL, "NULL id");
	cr_assert_eq(droce_cm_send_sidr_rep(b, NULL), -EINVAL, "NULL param");
	r = rep;
	r.status = 6;
	cr_assert_eq(droce_cm_send_sidr_rep(b, &r), -EINVAL, "status 6");
	r = rep;
	r.qpn = 1u << 24;
	cr_assert_eq(droce_cm_send_sidr_rep(b, &r), -EINVAL, "QPN");
	r = rep;
	r.info_len = 1;
	cr_assert_eq(droce_cm_send_sidr_rep(b, &r), -EINVAL, "NULL info");
	r.info = big;
	r.info_len = 73;
	cr_assert_eq(droce_cm_send_sidr_rep(b, &r), -EMSGSIZE, "73 bytes of info");
	r = rep;
	r.private_data_len = 1;
	cr_assert_eq(droce_cm_send_sidr_rep(b, &r), -EINVAL, "NULL private data");
	r.private_data = big;
	r.private_data_len = 137;
	cr_assert_eq(droce_cm_send_sidr_rep(b, &r), -EMSGSIZE, "137 bytes");
	cr_assert_eq(droce_cm_id_state(b), DROCE_CM_SIDR_REQ_RCVD, "unchanged");
	cr_assert_eq(cm_queued(), 0, "nothing sent");
}

Test(cm_args, names)
{
	int i, j;

	for (i = 0; i < DROCE_CM_STATE_COUNT; i++) {
		cr_assert_not_null(droce_cm_state_name[i], "state %d named", i);
		for (j = 0; j < i; j++)
			cr_assert_str_neq(droce_cm_state_name[i], droce_cm_state_name[j],
					  "states %d and %d named apart", i, j);
	}
	for (i = 0; i < DROCE_CM_EV_COUNT; i++) {
		cr_assert_not_null(droce_cm_event_name[i], "event %d named", i);
		for (j = 0; j < i; j++)
			cr_assert_str_neq(droce_cm_event_name[i], droce_cm_event_name[j],
					  "events %d and %d named apart", i, j);
	}
	cr_assert_str_eq(droce_cm_state_name[DROCE_CM_TIMEWAIT], "timewait", "a name");
}
