/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM service over a real engine: two devices joined back to back in this process, the
 * agent's MADs crossing the engine's GSI (QP1) both ways. A connection is made (REQ, REP,
 * RTU), torn down (DREQ, DREP) and the time wait ends; a REQ for a service nobody listens
 * on is rejected by the peer's agent; the consumers' events arrive through their sinks.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "droce_cm_service.h"
#include "droce_engine.h"
#include "pair_harness.h"

#define WAIT_MS 5000

/* A consumer: the events of its ids, in order, until the test has read them. */
struct sink {
	struct droce_cm_sink base;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int n;
	enum droce_cm_event_type type[32];
	int status[32];
	struct droce_cm_id *id[32];
	char private_data[32][64];
	struct droce_cm_addr from[32];
};

static void sink_event(struct droce_cm_sink *base, struct droce_cm_id *id,
		       const struct droce_cm_event *ev)
{
	struct sink *s = (struct sink *)base;

	pthread_mutex_lock(&s->lock);
	if (s->n < 32) {
		s->type[s->n] = ev->type;
		s->status[s->n] = ev->status;
		s->id[s->n] = id;
		s->from[s->n] = ev->from;
		if (ev->private_data_len > 0)
			memcpy(s->private_data[s->n], ev->private_data,
			       ev->private_data_len < 63 ? ev->private_data_len : 63);
		s->n++;
	}
	/* a new child (REQ_RCVD) belongs to the listener's consumer from now on */
	if (droce_cm_id_context(id) == NULL)
		droce_cm_id_set_context(id, base);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void sink_init(struct sink *s)
{
	memset(s, 0, sizeof(*s));
	s->base.event = sink_event;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
}

/* Wait for the sink's event number @p i; its type. */
static enum droce_cm_event_type sink_wait(struct sink *s, unsigned int i)
{
	struct timespec until;
	enum droce_cm_event_type t;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&s->lock);
	while (s->n <= i)
		if (pthread_cond_timedwait(&s->cond, &s->lock, &until) != 0)
			break;
	cr_assert_gt(s->n, i, "event %u never came (%u events)", i, s->n);
	t = s->type[i];
	pthread_mutex_unlock(&s->lock);
	return t;
}

static struct pair_end e0, e1;
static struct droce_cm_service *svc;
static struct sink active, passive;
static unsigned int port0, port1;

static void setup(void)
{
	struct pair_opts o = pair_opts_default(IBV_QPT_RC);

	o.no_huge = true;
	pair_env(&o);
	pair_open(&o, &e0, &e1);
	svc = droce_cm_service_get();
	cr_assert_not_null(svc, "the service starts with the engine");
	cr_assert_eq(droce_cm_service_port("droce0", &port0), 0, "droce0 is an engine port");
	cr_assert_eq(droce_cm_service_port("droce1", &port1), 0, "droce1 is an engine port");
	sink_init(&active);
	sink_init(&passive);
}

static void teardown(void)
{
	droce_cm_service_stop();
}

TestSuite(cm_service, .init = setup, .fini = teardown, .timeout = 60);

/* The path from droce0 to droce1's GSI. */
static struct droce_cm_addr path_0_to_1(void)
{
	struct droce_cm_addr a = {.port = port0, .hop_limit = 64, .pkey = 0xffff};

	memcpy(a.sgid, e0.gid.raw, 16);
	memcpy(a.dgid, e1.gid.raw, 16);
	return a;
}

static struct droce_cm_req_param req_param(uint64_t service_id)
{
	static const char hello[] = "hello";
	struct droce_cm_req_param p = {
		.path = path_0_to_1(),
		.service_id = service_id,
		.local_qpn = e0.qp->qp_num,
		.starting_psn = 0x123,
		.transport = DROCE_CM_TRANSPORT_RC,
		.responder_resources = 4,
		.initiator_depth = 4,
		.remote_cm_response_timeout = 16,
		.local_cm_response_timeout = 16,
		.max_cm_retries = 3,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.local_ack_timeout = 14,
		.path_mtu = IBV_MTU_1024,
		.packet_life_time = 10,
		.private_data = hello,
		.private_data_len = sizeof(hello),
	};
	return p;
}

Test(cm_service, no_listener_is_rejected_with_invalid_service_id)
{
	struct droce_cm *cm = droce_cm_service_lock(svc);
	struct droce_cm_id *id = droce_cm_id_create(cm, &active.base);
	struct droce_cm_req_param p = req_param(0x0000000001060000ull | 9999);
	int rc;

	cr_assert_not_null(id, "an id");
	rc = droce_cm_send_req(id, &p);
	droce_cm_service_unlock(svc);
	cr_assert_eq(rc, 0, "REQ sent: %d", rc);
	cr_assert_eq(sink_wait(&active, 0), DROCE_CM_EV_REJ_RCVD, "REJ for no listener");
	cr_expect_eq(active.status[0], DROCE_CM_REJ_INVALID_SERVICE_ID, "reason 8, not %d",
		     active.status[0]);
}

Test(cm_service, connect_accept_disconnect_over_qp1)
{
	const uint64_t sid = 0x0000000001060000ull | 7174;
	struct droce_cm *cm = droce_cm_service_lock(svc);
	struct droce_cm_id *listener = droce_cm_id_create(cm, &passive.base);
	struct droce_cm_id *id = droce_cm_id_create(cm, &active.base);
	struct droce_cm_req_param p = req_param(sid);
	struct droce_cm_rep_param rep = {
		.local_qpn = e1.qp->qp_num,
		.starting_psn = 0x456,
		.responder_resources = 4,
		.initiator_depth = 4,
		.rnr_retry_count = 7,
	};
	struct droce_cm_id *child;

	cr_assert_eq(droce_cm_listen(listener, sid, 0), 0, "listening");
	cr_assert_eq(droce_cm_send_req(id, &p), 0, "REQ sent");
	droce_cm_service_unlock(svc);

	cr_assert_eq(sink_wait(&passive, 0), DROCE_CM_EV_REQ_RCVD, "REQ reached the listener");
	cr_expect_str_eq(passive.private_data[0], "hello", "the REQ's private data");
	cr_expect_eq(memcmp(passive.from[0].dgid, e0.gid.raw, 16), 0, "from droce0's GID");
	cr_expect_eq(passive.from[0].port, port1, "received on droce1's port");
	child = passive.id[0];
	cm = droce_cm_service_lock(svc);
	cr_expect_eq(droce_cm_id_state(child), DROCE_CM_REQ_RCVD, "child in REQ_RCVD");
	cr_assert_eq(droce_cm_send_rep(child, &rep), 0, "REP sent");
	droce_cm_service_unlock(svc);

	cr_assert_eq(sink_wait(&active, 0), DROCE_CM_EV_REP_RCVD, "REP reached the active side");
	cm = droce_cm_service_lock(svc);
	cr_assert_eq(droce_cm_send_rtu(id, NULL, 0), 0, "RTU sent");
	cr_expect_eq(droce_cm_id_state(id), DROCE_CM_ESTABLISHED, "active side established");
	droce_cm_service_unlock(svc);
	cr_assert_eq(sink_wait(&passive, 1), DROCE_CM_EV_RTU_RCVD, "RTU reached the passive side");

	cm = droce_cm_service_lock(svc);
	cr_assert_eq(droce_cm_send_dreq(id, NULL, 0), 0, "DREQ sent");
	droce_cm_service_unlock(svc);
	cr_assert_eq(sink_wait(&passive, 2), DROCE_CM_EV_DREQ_RCVD,
		     "DREQ reached the passive side");
	cm = droce_cm_service_lock(svc);
	cr_assert_eq(droce_cm_send_drep(child, NULL, 0), 0, "DREP sent");
	droce_cm_service_unlock(svc);
	cr_assert_eq(sink_wait(&active, 1), DROCE_CM_EV_DREP_RCVD, "DREP reached the active side");
	cr_assert_eq(sink_wait(&active, 2), DROCE_CM_EV_TIMEWAIT_EXIT, "the time wait ends");

	cr_expect_geq(pair_port_counter(&e0, "gsi_tx"), 3, "REQ, RTU, DREQ left through QP1");
	cr_expect_geq(pair_port_counter(&e0, "gsi_rx"), 2, "REP and DREP came in through QP1");
}

Test(cm_service, port_of_unknown_device_is_enoent)
{
	unsigned int port;

	cr_expect_eq(droce_cm_service_port("nosuch", &port), -ENOENT, "no such device");
	cr_expect_eq(droce_cm_service_port(NULL, &port), -EINVAL, "NULL name");
}
