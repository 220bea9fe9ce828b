/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent and its ids: creation, the id table keyed by local communication ID, listeners,
 * destruction in each state, statistics.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cm_priv.h"

uint64_t cm_random64(void)
{
	static uint64_t fallback;
	struct timespec ts;
	uint64_t v = 0;
	ssize_t n;

	/* up to 256 bytes, getrandom() comes back whole once the pool is up (random(7)) */
	do
		n = getrandom(&v, sizeof(v), 0);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(v))
		return v;
	/* no getrandom (ENOSYS): the clock mixed by splitmix64 (comm IDs are checked unique) */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v = fallback += 0x9e3779b97f4a7c15ull + (uint64_t)ts.tv_nsec + (uint64_t)ts.tv_sec;
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
	v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
	return v ^ (v >> 31);
}

struct droce_cm *droce_cm_create(const struct droce_cm_ops *ops)
{
	struct droce_cm *cm;

	if (ops == NULL || ops->send == NULL || ops->event == NULL || ops->now_us == NULL) {
		errno = EINVAL;
		return NULL;
	}
	cm = calloc(1, sizeof(*cm));
	if (cm == NULL)
		return NULL;
	cm->ops = *ops;
	return cm;
}

void droce_cm_destroy(struct droce_cm *cm)
{
	if (cm == NULL)
		return;
	while (cm->first != NULL)
		cm_id_free(cm->first);
	free(cm);
}

static struct droce_cm_id **cm_bucket(struct droce_cm *cm, uint32_t comm_id)
{
	return &cm->buckets[comm_id & (CM_ID_BUCKETS - 1)];
}

struct droce_cm_id *cm_id_new(struct droce_cm *cm, void *context)
{
	struct droce_cm_id *id = calloc(1, sizeof(*id));
	struct droce_cm_id **b;
	uint32_t comm_id;

	if (id == NULL)
		return NULL;
	/* Communication IDs are random, non-zero and unique in the agent (12.6.5: the peer
	 * tells connections apart by them; a random one makes a reused ID after a restart
	 * unlikely) */
	do
		comm_id = (uint32_t)cm_random64();
	while (comm_id == 0 || cm_find_local(cm, comm_id) != NULL);
	id->cm = cm;
	id->context = context;
	id->state = DROCE_CM_IDLE;
	id->local_comm_id = comm_id;
	id->last.msg = DROCE_CM_MSG_COUNT;
	b = cm_bucket(cm, comm_id);
	id->hash_next = *b;
	*b = id;
	id->next = cm->first;
	if (cm->first != NULL)
		cm->first->prev = id;
	cm->first = id;
	return id;
}

void cm_id_free(struct droce_cm_id *id)
{
	struct droce_cm *cm = id->cm;
	struct droce_cm_id **p = cm_bucket(cm, id->local_comm_id);

	while (*p != id)
		p = &(*p)->hash_next;
	*p = id->hash_next;
	if (id->prev != NULL)
		id->prev->next = id->next;
	else
		cm->first = id->next;
	if (id->next != NULL)
		id->next->prev = id->prev;
	free(id);
}

/* The ids the consumer let go of that have nothing left to do. */
void cm_reap(struct droce_cm *cm)
{
	struct droce_cm_id *id = cm->first, *next;

	for (; id != NULL; id = next) {
		next = id->next;
		if (id->gone && id->state == DROCE_CM_IDLE)
			cm_id_free(id);
	}
}

void cm_enter(struct droce_cm *cm)
{
	cm->busy++;
}

void cm_leave(struct droce_cm *cm)
{
	if (--cm->busy == 0)
		cm_reap(cm);
}

struct droce_cm_id *droce_cm_id_create(struct droce_cm *cm, void *context)
{
	if (cm == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return cm_id_new(cm, context);
}

void *droce_cm_id_context(const struct droce_cm_id *id)
{
	return id->context;
}

void droce_cm_id_set_context(struct droce_cm_id *id, void *context)
{
	id->context = context;
}

enum droce_cm_state droce_cm_id_state(const struct droce_cm_id *id)
{
	return id->state;
}

uint32_t droce_cm_id_local_comm_id(const struct droce_cm_id *id)
{
	return id->local_comm_id;
}

const struct droce_cm_addr *droce_cm_id_path(const struct droce_cm_id *id)
{
	return &id->path;
}

/* 0 in a listener's mask means an exact match: every bit. */
static uint64_t cm_listen_mask(uint64_t mask)
{
	return mask != 0 ? mask : UINT64_MAX;
}

int droce_cm_listen(struct droce_cm_id *id, uint64_t service_id, uint64_t mask)
{
	struct droce_cm_id *other;
	uint64_t m = cm_listen_mask(mask);

	if (id == NULL || id->state != DROCE_CM_IDLE || id->gone)
		return -EINVAL;
	/* two listeners overlap when some service ID matches both: they agree on the bits
	 * both masks hold */
	for (other = id->cm->first; other != NULL; other = other->next) {
		uint64_t both = m & other->service_mask;

		if (other->listening && (service_id & both) == (other->service_id & both))
			return -EBUSY;
	}
	id->service_id = service_id & m;
	id->service_mask = m;
	id->listening = true;
	id->state = DROCE_CM_LISTEN;
	return 0;
}

/* droce_cm_id_destroy: what each state sends as the consumer lets go (12.9.5, 12.9.6). */
static enum droce_cm_state cm_destroy_step(struct droce_cm_id *id)
{
	switch (id->state) {
	case DROCE_CM_REQ_SENT:
	case DROCE_CM_MRA_REQ_RCVD:
		/* the REQ is abandoned: the peer learns it as a time-out (12.6.7.2 reason 4),
		 * as when the REQ's retries run out */
		cm_timer_stop(id);
		cm_send_rej_mad(id, DROCE_CM_REF_OTHER, DROCE_CM_REJ_TIMEOUT, NULL, 0, NULL, 0);
		return DROCE_CM_IDLE;
	case DROCE_CM_REQ_RCVD:
	case DROCE_CM_MRA_REQ_SENT:
		cm_send_rej_mad(id, DROCE_CM_REF_REQ, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL,
				0);
		return DROCE_CM_IDLE;
	case DROCE_CM_REP_RCVD:
	case DROCE_CM_MRA_REP_SENT:
		cm_send_rej_mad(id, DROCE_CM_REF_REP, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL,
				0);
		return DROCE_CM_IDLE;
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
		/* the peer may have its QP ready already: REJ, then wait out stray packets */
		cm_send_rej_mad(id, DROCE_CM_REF_OTHER, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0,
				NULL, 0);
		cm_enter_timewait(id);
		return DROCE_CM_TIMEWAIT;
	case DROCE_CM_ESTABLISHED:
		/* 12.9.6: leaving a connection is DREQ; the id lives on until time wait ends */
		cm_send_dreq_mad(id, NULL, 0);
		return DROCE_CM_DREQ_SENT;
	case DROCE_CM_DREQ_RCVD:
		cm_send_drep_mad(id, NULL, 0);
		cm_enter_timewait(id);
		return DROCE_CM_TIMEWAIT;
	case DROCE_CM_SIDR_REQ_RCVD: {
		struct droce_cm_sidr_rep_param p = {.status = DROCE_CM_SIDR_REJECT};

		droce_cm_send_sidr_rep(id, &p);
		return DROCE_CM_IDLE;
	}
	case DROCE_CM_SIDR_REQ_SENT:
		cm_timer_stop(id);
		return DROCE_CM_IDLE;
	case DROCE_CM_LISTEN:
		id->listening = false;
		return DROCE_CM_IDLE;
	case DROCE_CM_DREQ_SENT: /* its DREP or its time-out leads to TIMEWAIT */
	case DROCE_CM_TIMEWAIT:  /* its end frees the id */
	case DROCE_CM_IDLE:
	case DROCE_CM_STATE_COUNT:
		break;
	}
	return id->state;
}

void droce_cm_id_destroy(struct droce_cm_id *id)
{
	struct droce_cm *cm;

	if (id == NULL || id->gone)
		return;
	cm = id->cm;
	cm_enter(cm);
	id->gone = true;
	id->state = cm_destroy_step(id);
	cm_leave(cm);
}

void droce_cm_stats_get(const struct droce_cm *cm, struct droce_cm_stats *s)
{
	*s = cm->stats;
}
