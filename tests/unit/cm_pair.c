/* SPDX-License-Identifier: BSD-3-Clause */
/* Two CM agents back to back: see cm_pair.h. */
#include "cm_pair.h"

struct cm_side cm_a, cm_b;
uint64_t cm_now;

static struct cm_mad queue[CM_QUEUE];
static unsigned int qhead, qlen;

static int side_index(const struct cm_side *s)
{
	return s == &cm_a ? 0 : 1;
}

static int pair_send(void *arg, const struct droce_cm_addr *to, const uint8_t *mad)
{
	struct cm_side *s = arg;
	struct cm_mad *m;

	if (s->fail_sends > 0) {
		s->fail_sends--;
		return -EAGAIN;
	}
	cr_assert_lt(qlen, CM_QUEUE, "the MAD queue overflows");
	m = &queue[(qhead + qlen++) % CM_QUEUE];
	m->from = side_index(s);
	m->to = *to;
	memcpy(m->mad, mad, DROCE_MAD_LEN);
	return 0;
}

static void pair_event(void *arg, struct droce_cm_id *id, const struct droce_cm_event *ev)
{
	struct cm_side *s = arg;
	struct cm_rec *r;

	cr_assert_lt(s->nev, CM_EVENTS, "too many events");
	r = &s->ev[s->nev++];
	r->id = id;
	r->listen_id = ev->listen_id;
	r->type = ev->type;
	r->state = droce_cm_id_state(id);
	r->status = ev->status;
	r->msg = ev->msg != NULL ? ev->msg->msg : DROCE_CM_MSG_COUNT;
	memset(r->priv, 0, sizeof(r->priv));
	if (ev->private_data != NULL)
		memcpy(r->priv, ev->private_data,
		       ev->private_data_len < sizeof(r->priv) ? ev->private_data_len
							      : sizeof(r->priv));
	if (s->hook != NULL)
		s->hook(s, id, ev);
}

static uint64_t pair_now(void *arg)
{
	(void)arg;
	return cm_now;
}

static void side_init(struct cm_side *s, uint8_t own, uint8_t other)
{
	struct droce_cm_ops ops = {
		.send = pair_send, .event = pair_event, .now_us = pair_now, .arg = s};

	memset(s, 0, sizeof(*s));
	/* ::ffff:10.0.0.own */
	s->addr.sgid[10] = s->addr.sgid[11] = 0xff;
	s->addr.sgid[12] = 10;
	s->addr.sgid[15] = own;
	memcpy(s->addr.dgid, s->addr.sgid, 16);
	s->addr.dgid[15] = other;
	s->addr.hop_limit = 64;
	s->addr.pkey = 0xffff;
	s->cm = droce_cm_create(&ops);
	cr_assert_not_null(s->cm, "droce_cm_create");
}

void cm_pair_init(void)
{
	cm_now = 1000000;
	qhead = qlen = 0;
	side_init(&cm_a, 1, 2);
	side_init(&cm_b, 2, 1);
}

void cm_pair_fini(void)
{
	droce_cm_destroy(cm_a.cm);
	droce_cm_destroy(cm_b.cm);
}

unsigned int cm_queued(void)
{
	return qlen;
}

struct cm_mad *cm_peek(unsigned int i)
{
	cr_assert_lt(i, qlen, "no MAD %u queued", i);
	return &queue[(qhead + i) % CM_QUEUE];
}

enum droce_cm_msg cm_peek_msg(unsigned int i)
{
	enum droce_cm_msg msg = DROCE_CM_MSG_COUNT;

	cr_assert_eq(droce_mad_parse(cm_peek(i)->mad, DROCE_MAD_LEN, &msg), DROCE_MAD_OK,
		     "a queued MAD is malformed");
	return msg;
}

void cm_drop(void)
{
	cr_assert_gt(qlen, 0, "nothing to drop");
	qhead = (qhead + 1) % CM_QUEUE;
	qlen--;
}

enum droce_cm_msg cm_deliver_one(void)
{
	struct cm_mad m = *cm_peek(0);
	struct cm_side *to = m.from == 0 ? &cm_b : &cm_a;
	struct droce_cm_addr from = m.to;
	enum droce_cm_msg msg = cm_peek_msg(0);

	cm_drop();
	/* the receiver's view: its own GID local, the sender's remote */
	memcpy(from.sgid, m.to.dgid, 16);
	memcpy(from.dgid, m.to.sgid, 16);
	droce_cm_recv(to->cm, &from, m.mad, DROCE_MAD_LEN);
	return msg;
}

unsigned int cm_deliver_all(void)
{
	unsigned int n = 0;

	while (qlen > 0) {
		cm_deliver_one();
		n++;
	}
	return n;
}

void cm_inject(struct cm_side *s, const void *mad, size_t len)
{
	struct droce_cm_addr from = s->addr;

	droce_cm_recv(s->cm, &from, mad, len);
}

void cm_advance(uint64_t us)
{
	cm_now += us;
	droce_cm_timers_run(cm_a.cm);
	droce_cm_timers_run(cm_b.cm);
}

const struct cm_rec *cm_last_ev(const struct cm_side *s)
{
	return s->nev > 0 ? &s->ev[s->nev - 1] : NULL;
}

unsigned int cm_count_ev(const struct cm_side *s, enum droce_cm_event_type type)
{
	unsigned int i, n = 0;

	for (i = 0; i < s->nev; i++)
		n += s->ev[i].type == type;
	return n;
}

struct droce_cm_stats cm_stats(const struct cm_side *s)
{
	struct droce_cm_stats st;

	droce_cm_stats_get(s->cm, &st);
	return st;
}

struct droce_cm_req_param cm_req_param(uint64_t service_id)
{
	static const uint8_t priv[4] = {0xde, 0xad, 0xbe, 0xef};
	struct droce_cm_req_param p = {
		.path = cm_a.addr,
		.service_id = service_id,
		.local_qpn = 0x11,
		.starting_psn = 0x3be40b,
		.transport = DROCE_CM_TRANSPORT_RC,
		.responder_resources = 1,
		.initiator_depth = 1,
		.remote_cm_response_timeout = 20,
		.local_cm_response_timeout = 20,
		.max_cm_retries = 3,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.local_ack_timeout = 19,
		.path_mtu = 5,
		.packet_life_time = 18,
		.private_data = priv,
		.private_data_len = sizeof(priv),
	};

	return p;
}

struct droce_cm_rep_param cm_rep_param(void)
{
	struct droce_cm_rep_param p = {
		.local_qpn = 0x12,
		.starting_psn = 0x123456,
		.responder_resources = 1,
		.initiator_depth = 1,
		.rnr_retry_count = 7,
	};

	return p;
}

struct droce_cm_id *cm_start(struct droce_cm_id **listener, struct droce_cm_id **child)
{
	struct droce_cm_req_param p = cm_req_param(CM_SID);
	struct droce_cm_id *a;

	*listener = droce_cm_id_create(cm_b.cm, NULL);
	cr_assert_not_null(*listener, "listener id");
	cr_assert_eq(droce_cm_listen(*listener, CM_SID, 0), 0, "listen");
	a = droce_cm_id_create(cm_a.cm, NULL);
	cr_assert_not_null(a, "active id");
	cr_assert_eq(droce_cm_send_req(a, &p), 0, "send REQ");
	cr_assert_eq(cm_deliver_one(), DROCE_CM_REQ, "REQ delivered");
	cr_assert_eq(cm_last_ev(&cm_b)->type, DROCE_CM_EV_REQ_RCVD, "REQ_RCVD on b");
	*child = cm_last_ev(&cm_b)->id;
	return a;
}

struct droce_cm_id *cm_connect(struct droce_cm_id **listener, struct droce_cm_id **child)
{
	struct droce_cm_rep_param rep = cm_rep_param();
	struct droce_cm_id *a = cm_start(listener, child);

	cr_assert_eq(droce_cm_send_rep(*child, &rep), 0, "send REP");
	cr_assert_eq(cm_deliver_one(), DROCE_CM_REP, "REP delivered");
	cr_assert_eq(droce_cm_send_rtu(a, NULL, 0), 0, "send RTU");
	cr_assert_eq(cm_deliver_one(), DROCE_CM_RTU, "RTU delivered");
	cr_assert_eq(droce_cm_id_state(a), DROCE_CM_ESTABLISHED, "a established");
	cr_assert_eq(droce_cm_id_state(*child), DROCE_CM_ESTABLISHED, "b established");
	return a;
}
