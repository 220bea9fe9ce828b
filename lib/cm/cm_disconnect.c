/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Leaving (12.9.7): REJ received in a waiting state, DREQ and DREP with their retries, DREQs
 * crossing, time wait and its end.
 */
#include <errno.h>
#include <string.h>

#include "cm_priv.h"

/*
 * REJ received (12.9.5, 12.9.6): before any REP the QPs never met, the id goes IDLE; once a
 * REP went either way (or the REJ calls the connection stale) packets may still be in flight:
 * TIMEWAIT.
 */
static enum droce_cm_state cm_rej_next(struct droce_cm_id *id, uint16_t reason)
{
	switch (id->state) {
	case DROCE_CM_REQ_SENT:
	case DROCE_CM_MRA_REQ_RCVD:
	case DROCE_CM_REQ_RCVD:
	case DROCE_CM_MRA_REQ_SENT:
		cm_timer_stop(id);
		if (reason == DROCE_CM_REJ_STALE_CONN) {
			cm_enter_timewait(id);
			return DROCE_CM_TIMEWAIT;
		}
		return DROCE_CM_IDLE;
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
	case DROCE_CM_REP_RCVD:
	case DROCE_CM_MRA_REP_SENT:
	case DROCE_CM_ESTABLISHED:
	case DROCE_CM_DREQ_SENT:
		cm_enter_timewait(id);
		return DROCE_CM_TIMEWAIT;
	default:
		return DROCE_CM_STATE_COUNT; /* nothing waits for it */
	}
}

void cm_rej_rcvd(struct droce_cm_id *id, const struct droce_cm_decoded *d,
		 const struct droce_cm_addr *from)
{
	uint16_t reason = (uint16_t)d->value[DROCE_CM_REJ_REASON];
	enum droce_cm_state next = cm_rej_next(id, reason);

	if (next == DROCE_CM_STATE_COUNT) {
		id->cm->stats.unmatched++;
		return;
	}
	/* the REJ answers the exchange: none of ours is resent to it */
	id->last.msg = DROCE_CM_MSG_COUNT;
	id->state = next;
	cm_event(id, DROCE_CM_EV_REJ_RCVD, d, from, reason, NULL);
}

int droce_cm_send_dreq(struct droce_cm_id *id, const void *private_data, uint8_t len)
{
	if (id == NULL || id->state != DROCE_CM_ESTABLISHED || (private_data == NULL && len > 0))
		return -EINVAL;
	if (len > droce_cm_msg_table[DROCE_CM_DREQ].private_len)
		return -EMSGSIZE;
	/* 12.9.7: DREQ_SENT until DREP, DREQ or the retries' end */
	cm_send_dreq_mad(id, private_data, len);
	id->state = DROCE_CM_DREQ_SENT;
	return 0;
}

int droce_cm_send_drep(struct droce_cm_id *id, const void *private_data, uint8_t len)
{
	if (id == NULL || id->state != DROCE_CM_DREQ_RCVD || (private_data == NULL && len > 0))
		return -EINVAL;
	if (len > droce_cm_msg_table[DROCE_CM_DREP].private_len)
		return -EMSGSIZE;
	cm_send_drep_mad(id, private_data, len);
	cm_enter_timewait(id);
	id->state = DROCE_CM_TIMEWAIT;
	return 0;
}

/* DREQ for an id: the state it leads to; *notify when the consumer hears of it. */
static enum droce_cm_state cm_dreq_next(struct droce_cm_id *id, bool *notify)
{
	*notify = false;
	switch (id->state) {
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
		/* the requester got our REP and leaves already: its RTU may be lost (12.9.7) */
	case DROCE_CM_ESTABLISHED:
		cm_timer_stop(id);
		*notify = true;
		return DROCE_CM_DREQ_RCVD;
	case DROCE_CM_DREQ_SENT:
		/* DREQs crossed (12.9.7): each side answers the other's, then time wait */
		cm_send_drep_mad(id, NULL, 0);
		cm_enter_timewait(id);
		*notify = true;
		return DROCE_CM_TIMEWAIT;
	case DROCE_CM_TIMEWAIT:
		/* our DREP was lost: the peer asks again (12.9.7) */
		id->cm->stats.duplicates++;
		if (id->last.msg == DROCE_CM_DREP)
			cm_resend_last(id);
		else
			cm_send_drep_mad(id, NULL, 0);
		return DROCE_CM_TIMEWAIT;
	case DROCE_CM_DREQ_RCVD: /* the consumer is still to answer */
		id->cm->stats.duplicates++;
		return DROCE_CM_DREQ_RCVD;
	case DROCE_CM_IDLE:
		/* time wait is over, the connection gone: DREP lets the peer leave (12.9.7) */
		id->cm->stats.unmatched++;
		cm_send_drep_mad(id, NULL, 0);
		return DROCE_CM_IDLE;
	default:
		id->cm->stats.unmatched++;
		return id->state;
	}
}

/* DREQ (12.6.10): matched by our comm ID, from the peer, naming our QP. */
void cm_dreq_rcvd(struct droce_cm *cm, const struct droce_cm_decoded *d,
		  const struct droce_cm_addr *from)
{
	struct droce_cm_id *id =
		cm_find_local(cm, (uint32_t)d->value[DROCE_CM_DREQ_REMOTE_COMM_ID]);
	uint8_t mad[DROCE_MAD_LEN];
	bool notify;

	if (id == NULL || memcmp(id->path.dgid, from->dgid, sizeof(from->dgid)) != 0 ||
	    id->remote_comm_id != (uint32_t)d->value[DROCE_CM_DREQ_LOCAL_COMM_ID] ||
	    id->local_qpn != (uint32_t)d->value[DROCE_CM_DREQ_REMOTE_QPN_EECN]) {
		/* a connection we no longer know: DREP lets the peer leave (12.9.7) */
		cm->stats.unmatched++;
		cm_begin(mad, DROCE_CM_DREP, d->hdr.tid);
		cm_set(mad, DROCE_CM_DREP_LOCAL_COMM_ID, d->value[DROCE_CM_DREQ_REMOTE_COMM_ID]);
		cm_set(mad, DROCE_CM_DREP_REMOTE_COMM_ID, d->value[DROCE_CM_DREQ_LOCAL_COMM_ID]);
		cm_send_raw(cm, from, mad, DROCE_CM_DREP);
		return;
	}
	id->tid = d->hdr.tid; /* the DREP answers under the DREQ's transaction ID */
	id->state = cm_dreq_next(id, &notify);
	if (notify)
		cm_event(id, DROCE_CM_EV_DREQ_RCVD, d, from, 0, NULL);
}

void cm_drep_rcvd(struct droce_cm_id *id, const struct droce_cm_decoded *d,
		  const struct droce_cm_addr *from)
{
	if (id->state != DROCE_CM_DREQ_SENT) {
		id->cm->stats.duplicates++;
		return;
	}
	cm_enter_timewait(id);
	id->state = DROCE_CM_TIMEWAIT;
	cm_event(id, DROCE_CM_EV_DREP_RCVD, d, from, 0, NULL);
}

/*
 * DREQ_SENT: resend while retries last, then give up on the peer: DREQ_ERROR, time wait
 * (12.9.7). TIMEWAIT: over, the QP may be reused: IDLE.
 */
void cm_disconnect_timeout(struct droce_cm_id *id)
{
	if (id->state == DROCE_CM_TIMEWAIT) {
		id->state = DROCE_CM_IDLE;
		cm_event(id, DROCE_CM_EV_TIMEWAIT_EXIT, NULL, NULL, 0, NULL);
		return;
	}
	if (id->timer.retries_left > 0) {
		id->cm->stats.retries++;
		cm_resend_last(id);
		cm_timer_start(id, id->timer.timeout_us, id->timer.retries_left - 1);
		return;
	}
	cm_enter_timewait(id);
	id->state = DROCE_CM_TIMEWAIT;
	cm_event(id, DROCE_CM_EV_DREQ_ERROR, NULL, NULL, -ETIMEDOUT, NULL);
}
