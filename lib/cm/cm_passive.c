/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The passive side (12.9.6, the responder's state diagram): a REQ received becomes a child id
 * of its listener (REQ_RCVD); MRA_REQ_SENT, REP_SENT, MRA_REP_RCVD; duplicate and stale REQs
 * (12.9.8) answered without the consumer.
 */
#include <errno.h>
#include <string.h>

#include "cm_priv.h"

/*
 * The service timeout of the MRA the agent sends for a consumer that has not answered a REQ
 * when the REQ comes again: 4.096 µs × 2^24, about 69 s, what rdma_cm asks for.
 */
#define CM_MRA_AUTO_TIMEOUT 24

/* REJ of a REQ no id takes: the REQ's transaction ID, its comm ID as the remote one. */
static void cm_rej_req(struct droce_cm *cm, const struct droce_cm_decoded *d,
		       const struct droce_cm_addr *from, uint16_t reason)
{
	uint8_t mad[DROCE_MAD_LEN];

	cm_begin(mad, DROCE_CM_REJ, d->hdr.tid);
	cm_set(mad, DROCE_CM_REJ_REMOTE_COMM_ID, d->value[DROCE_CM_REQ_LOCAL_COMM_ID]);
	cm_set(mad, DROCE_CM_REJ_MESSAGE_REJECTED, DROCE_CM_REF_REQ);
	cm_set(mad, DROCE_CM_REJ_REASON, reason);
	cm_send_raw(cm, from, mad, DROCE_CM_REJ);
}

/* A duplicate REQ (12.9.8.1): answered as the id's state answered it before. */
static enum droce_cm_state cm_req_again(struct droce_cm_id *id, const struct droce_cm_decoded *d,
					const struct droce_cm_addr *from)
{
	id->cm->stats.duplicates++;
	switch (id->state) {
	case DROCE_CM_REQ_RCVD:
		/* the consumer has not answered yet: MRA tells the requester to wait (12.6.6);
		 * Linux's passive side does the same, only on a duplicate REQ */
		droce_cm_send_mra(id, CM_MRA_AUTO_TIMEOUT, NULL, 0);
		return id->state;
	case DROCE_CM_MRA_REQ_SENT:
		cm_resend_last(id);
		return id->state;
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
		/* our REP was lost: send it again */
		if (id->last.msg == DROCE_CM_REP)
			cm_resend_last(id);
		return id->state;
	case DROCE_CM_IDLE:
		if (id->last.msg == DROCE_CM_REJ)
			cm_resend_last(id);
		return id->state;
	case DROCE_CM_TIMEWAIT:
		/* 12.9.8.3: a connection in time wait is stale to a REQ that reuses it */
		id->cm->stats.stale++;
		cm_rej_req(id->cm, d, from, DROCE_CM_REJ_STALE_CONN);
		return id->state;
	default: /* established or leaving: the REQ is old news */
		return id->state;
	}
}

/*
 * 12.9.8.3: a REQ from a QP that, to us, is still connected elsewhere: the old connection is
 * stale. The REQ is refused (reason 10) and the old connection left with DREQ.
 */
static void cm_req_stale(struct droce_cm_id *old, const struct droce_cm_decoded *d,
			 const struct droce_cm_addr *from)
{
	old->cm->stats.stale++;
	cm_rej_req(old->cm, d, from, DROCE_CM_REJ_STALE_CONN);
	if (old->state == DROCE_CM_ESTABLISHED) {
		cm_send_dreq_mad(old, NULL, 0);
		old->state = DROCE_CM_DREQ_SENT;
	}
}

/* The child id of a new REQ, in REQ_RCVD. */
static void cm_req_new(struct droce_cm *cm, struct droce_cm_id *listener,
		       const struct droce_cm_decoded *d, const struct droce_cm_addr *from)
{
	struct droce_cm_id *id = cm_id_new(cm, NULL);
	uint8_t ack_timeout = (uint8_t)d->value[DROCE_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT];

	if (id == NULL) {
		cm_rej_req(cm, d, from, DROCE_CM_REJ_NO_RESOURCES);
		return;
	}
	id->passive = true;
	id->path = *from;
	id->path.pkey = (uint16_t)d->value[DROCE_CM_REQ_PARTITION_KEY];
	id->service_id = d->value[DROCE_CM_REQ_SERVICE_ID];
	id->remote_comm_id = (uint32_t)d->value[DROCE_CM_REQ_LOCAL_COMM_ID];
	id->remote_qpn = (uint32_t)d->value[DROCE_CM_REQ_LOCAL_QPN];
	id->tid = d->hdr.tid;
	/*
	 * REQ carries no packet life time: its local ACK timeout is at least twice it
	 * (12.6.5), and one code less is half the time, as Linux reads it
	 */
	id->packet_life_time = ack_timeout > 0 ? ack_timeout - 1 : 0;
	id->ack_timeout = ack_timeout;
	/* the requester's own response time is what our REP waits for (12.6.5) */
	id->peer_response_timeout = (uint8_t)d->value[DROCE_CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT];
	id->max_cm_retries = (uint8_t)d->value[DROCE_CM_REQ_MAX_CM_RETRIES];
	id->state = DROCE_CM_REQ_RCVD;
	cm_event(id, DROCE_CM_EV_REQ_RCVD, d, from, 0, listener);
}

void cm_passive_req(struct droce_cm *cm, const struct droce_cm_decoded *d,
		    const struct droce_cm_addr *from)
{
	struct droce_cm_id *id, *listener;
	uint64_t transport = d->value[DROCE_CM_REQ_TRANSPORT_SERVICE_TYPE];

	/* 12.9.8.1: duplicates are known by the requester's comm ID and GID */
	id = cm_find_remote(cm, (uint32_t)d->value[DROCE_CM_REQ_LOCAL_COMM_ID], from->dgid);
	if (id != NULL) {
		id->state = cm_req_again(id, d, from);
		return;
	}
	id = cm_find_remote_qpn(cm, (uint32_t)d->value[DROCE_CM_REQ_LOCAL_QPN], from->dgid, NULL);
	if (id != NULL) {
		cm_req_stale(id, d, from);
		return;
	}
	listener = cm_find_listener(cm, d->value[DROCE_CM_REQ_SERVICE_ID]);
	if (listener == NULL) {
		/* 12.6.7.2 reason 8: nobody listens on the service ID */
		cm->stats.unmatched++;
		cm_rej_req(cm, d, from, DROCE_CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	if (transport != DROCE_CM_TRANSPORT_RC && transport != DROCE_CM_TRANSPORT_UC) {
		/* 12.6.7.2 reason 9: droce has no RD */
		cm_rej_req(cm, d, from, DROCE_CM_REJ_INVALID_TRANSPORT_TYPE);
		return;
	}
	cm_req_new(cm, listener, d, from);
}

static int cm_rep_check(const struct droce_cm_rep_param *p)
{
	if (!cm_bits_fit(p->local_qpn, 24) || !cm_bits_fit(p->starting_psn, 24) ||
	    !cm_bits_fit(p->target_ack_delay, 5) || !cm_bits_fit(p->rnr_retry_count, 3) ||
	    (p->private_data == NULL && p->private_data_len > 0))
		return -EINVAL;
	if (p->private_data_len > droce_cm_msg_table[DROCE_CM_REP].private_len)
		return -EMSGSIZE;
	return 0;
}

int droce_cm_send_rep(struct droce_cm_id *id, const struct droce_cm_rep_param *p)
{
	uint8_t mad[DROCE_MAD_LEN];
	int ret;

	if (id == NULL || p == NULL ||
	    (id->state != DROCE_CM_REQ_RCVD && id->state != DROCE_CM_MRA_REQ_SENT))
		return -EINVAL;
	ret = cm_rep_check(p);
	if (ret != 0)
		return ret;
	id->local_qpn = p->local_qpn;
	cm_begin(mad, DROCE_CM_REP, id->tid);
	cm_set(mad, DROCE_CM_REP_LOCAL_COMM_ID, id->local_comm_id);
	cm_set(mad, DROCE_CM_REP_REMOTE_COMM_ID, id->remote_comm_id);
	cm_set(mad, DROCE_CM_REP_LOCAL_QPN, p->local_qpn);
	cm_set(mad, DROCE_CM_REP_STARTING_PSN, p->starting_psn);
	cm_set(mad, DROCE_CM_REP_RESPONDER_RESOURCES, p->responder_resources);
	cm_set(mad, DROCE_CM_REP_INITIATOR_DEPTH, p->initiator_depth);
	cm_set(mad, DROCE_CM_REP_TARGET_ACK_DELAY, p->target_ack_delay);
	/* 12.6.8: failover not supported (droce loads no alternate path; LAP gets APR) */
	cm_set(mad, DROCE_CM_REP_FAILOVER_ACCEPTED, 1);
	cm_set(mad, DROCE_CM_REP_END_TO_END_FLOW_CONTROL, p->flow_control);
	cm_set(mad, DROCE_CM_REP_RNR_RETRY_COUNT, p->rnr_retry_count);
	cm_set(mad, DROCE_CM_REP_SRQ, p->srq);
	cm_set(mad, DROCE_CM_REP_LOCAL_CA_GUID, cm_ca_guid(&id->path));
	(void)droce_cm_set_private(mad, DROCE_CM_REP, p->private_data, p->private_data_len);
	cm_send_id(id, mad, DROCE_CM_REP);
	/* 12.9.6: wait for RTU, MRA or REJ; the REQ's MaxCMRetries and response timeout */
	cm_timer_start(id, cm_wait_us(id), id->max_cm_retries);
	id->state = DROCE_CM_REP_SENT;
	return 0;
}

void cm_passive_rtu(struct droce_cm_id *id, const struct droce_cm_decoded *d,
		    const struct droce_cm_addr *from)
{
	switch (id->state) {
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
		cm_timer_stop(id);
		id->state = DROCE_CM_ESTABLISHED;
		cm_event(id, DROCE_CM_EV_RTU_RCVD, d, from, 0, NULL);
		break;
	case DROCE_CM_ESTABLISHED: /* a late RTU after droce_cm_established(), or again */
		id->cm->stats.duplicates++;
		break;
	default:
		id->cm->stats.unmatched++;
		break;
	}
}

int droce_cm_established(struct droce_cm_id *id)
{
	if (id == NULL || (id->state != DROCE_CM_REP_SENT && id->state != DROCE_CM_MRA_REP_RCVD))
		return -EINVAL;
	/* 12.9.6: the first packet on the QP stands for the RTU that may be lost */
	cm_enter(id->cm);
	cm_timer_stop(id);
	id->state = DROCE_CM_ESTABLISHED;
	cm_event(id, DROCE_CM_EV_USER_ESTABLISHED, NULL, NULL, 0, NULL);
	cm_leave(id->cm);
	return 0;
}

/*
 * REP_SENT: resend the REP while retries last, then REJ (reason 4) and REP_ERROR (12.9.6).
 * MRA_REP_RCVD: the requester's service timeout is over: the same error.
 */
void cm_passive_timeout(struct droce_cm_id *id)
{
	if (id->state == DROCE_CM_REP_SENT && id->timer.retries_left > 0) {
		id->cm->stats.retries++;
		cm_resend_last(id);
		cm_timer_start(id, id->timer.timeout_us, id->timer.retries_left - 1);
		return;
	}
	cm_send_rej_mad(id, DROCE_CM_REF_OTHER, DROCE_CM_REJ_TIMEOUT, NULL, 0, NULL, 0);
	id->state = DROCE_CM_IDLE;
	cm_event(id, DROCE_CM_EV_REP_ERROR, NULL, NULL, -ETIMEDOUT, NULL);
}
