/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-id timer: a deadline, the wait for the next one, the resends left; and the one
 * dispatch of an expiry by state (droce_cm_timers_run).
 */
#include <stdint.h>

#include "cm_priv.h"

void cm_timer_start(struct droce_cm_id *id, uint64_t timeout_us, uint8_t retries)
{
	id->timer.timeout_us = timeout_us;
	id->timer.retries_left = retries;
	id->timer.deadline_us = id->cm->ops.now_us(id->cm->ops.arg) + timeout_us;
}

void cm_timer_stop(struct droce_cm_id *id)
{
	id->timer.deadline_us = 0;
}

/*
 * How long an answer may take: the MAD's way there and back plus the peer's CM response
 * timeout (12.6.5: RemoteCMResponseTimeout; packet life time each way).
 */
uint64_t cm_wait_us(const struct droce_cm_id *id)
{
	return 2 * cm_time_us(id->packet_life_time) + cm_time_us(id->peer_response_timeout);
}

/*
 * Time wait (12.9.7): long enough for the packets still in flight to die and the peer's
 * transport to give up: twice the packet life time plus the requester's ACK timeout.
 */
uint64_t cm_timewait_us(const struct droce_cm_id *id)
{
	return 2 * cm_time_us(id->packet_life_time) + cm_time_us(id->ack_timeout);
}

void cm_enter_timewait(struct droce_cm_id *id)
{
	cm_timer_start(id, cm_timewait_us(id), 0);
}

/* One expiry: what it means depends on the state the id waits in. */
static void cm_timer_expired(struct droce_cm_id *id)
{
	id->timer.deadline_us = 0;
	switch (id->state) {
	case DROCE_CM_REQ_SENT:
	case DROCE_CM_MRA_REQ_RCVD:
		cm_active_timeout(id);
		break;
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
		cm_passive_timeout(id);
		break;
	case DROCE_CM_DREQ_SENT:
	case DROCE_CM_TIMEWAIT:
		cm_disconnect_timeout(id);
		break;
	case DROCE_CM_SIDR_REQ_SENT:
		cm_sidr_timeout(id);
		break;
	default: /* no timer runs in the other states */
		break;
	}
}

uint64_t droce_cm_timers_run(struct droce_cm *cm)
{
	uint64_t now = cm->ops.now_us(cm->ops.arg);
	uint64_t next = UINT64_MAX;
	struct droce_cm_id *id;

	cm_enter(cm);
	/*
	 * An expiry's events may destroy ids or create them: after each, look again from the
	 * start. A re-armed timer lies beyond now (every wait is at least 4 µs), so this ends.
	 */
again:
	for (id = cm->first; id != NULL; id = id->next) {
		if (id->timer.deadline_us != 0 && id->timer.deadline_us <= now) {
			cm_timer_expired(id);
			goto again;
		}
	}
	for (id = cm->first; id != NULL; id = id->next)
		if (id->timer.deadline_us != 0 && id->timer.deadline_us < next)
			next = id->timer.deadline_us;
	cm_leave(cm);
	/* ids freed by cm_leave had no timer armed: next stands */
	return next;
}
