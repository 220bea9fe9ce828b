/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The active side (12.9.5, the requester's state diagram): REQ_SENT, MRA_REQ_RCVD, REP_RCVD,
 * MRA_REP_SENT. One transaction ID serves REQ, REP and RTU (Linux's agent does the same).
 */
#include <errno.h>
#include <string.h>

#include "cm_priv.h"

static int cm_req_check(const struct droce_cm_req_param *p)
{
	if (p->transport != DROCE_CM_TRANSPORT_RC && p->transport != DROCE_CM_TRANSPORT_UC)
		return -EINVAL; /* droce has no RD */
	if (!cm_bits_fit(p->local_qpn, 24) || !cm_bits_fit(p->starting_psn, 24) ||
	    !cm_bits_fit(p->remote_cm_response_timeout, 5) ||
	    !cm_bits_fit(p->local_cm_response_timeout, 5) || !cm_bits_fit(p->max_cm_retries, 4) ||
	    !cm_bits_fit(p->retry_count, 3) || !cm_bits_fit(p->rnr_retry_count, 3) ||
	    !cm_bits_fit(p->local_ack_timeout, 5) || !cm_bits_fit(p->packet_life_time, 5) ||
	    !cm_bits_fit(p->path.flow_label, 20) || p->path_mtu < 1 || p->path_mtu > 5)
		return -EINVAL;
	if (p->private_data == NULL && p->private_data_len > 0)
		return -EINVAL;
	if (p->private_data_len > droce_cm_msg_table[DROCE_CM_REQ].private_len)
		return -EMSGSIZE;
	return 0;
}

/* REQ (12.6.5) of @p p on the id's path; RoCE has no LIDs: both are the permissive LID. */
static void cm_build_req(struct droce_cm_id *id, const struct droce_cm_req_param *p, uint8_t *mad)
{
	uint8_t *data = mad + DROCE_MAD_HDR_LEN;

	cm_begin(mad, DROCE_CM_REQ, id->tid);
	cm_set(mad, DROCE_CM_REQ_LOCAL_COMM_ID, id->local_comm_id);
	cm_set(mad, DROCE_CM_REQ_SERVICE_ID, p->service_id);
	cm_set(mad, DROCE_CM_REQ_LOCAL_CA_GUID, cm_ca_guid(&p->path));
	cm_set(mad, DROCE_CM_REQ_LOCAL_QPN, p->local_qpn);
	cm_set(mad, DROCE_CM_REQ_RESPONDER_RESOURCES, p->responder_resources);
	cm_set(mad, DROCE_CM_REQ_INITIATOR_DEPTH, p->initiator_depth);
	cm_set(mad, DROCE_CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, p->remote_cm_response_timeout);
	cm_set(mad, DROCE_CM_REQ_TRANSPORT_SERVICE_TYPE, p->transport);
	cm_set(mad, DROCE_CM_REQ_END_TO_END_FLOW_CONTROL, p->flow_control);
	cm_set(mad, DROCE_CM_REQ_STARTING_PSN, p->starting_psn);
	cm_set(mad, DROCE_CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, p->local_cm_response_timeout);
	cm_set(mad, DROCE_CM_REQ_RETRY_COUNT, p->retry_count);
	cm_set(mad, DROCE_CM_REQ_PARTITION_KEY, p->path.pkey);
	cm_set(mad, DROCE_CM_REQ_PATH_MTU, p->path_mtu);
	cm_set(mad, DROCE_CM_REQ_RNR_RETRY_COUNT, p->rnr_retry_count);
	cm_set(mad, DROCE_CM_REQ_MAX_CM_RETRIES, p->max_cm_retries);
	cm_set(mad, DROCE_CM_REQ_SRQ, p->srq);
	cm_set(mad, DROCE_CM_REQ_PRIMARY_LOCAL_LID, 0xffff);
	cm_set(mad, DROCE_CM_REQ_PRIMARY_REMOTE_LID, 0xffff);
	memcpy(data + droce_cm_field_table[DROCE_CM_REQ_PRIMARY_LOCAL_GID].offset, p->path.sgid,
	       16);
	memcpy(data + droce_cm_field_table[DROCE_CM_REQ_PRIMARY_REMOTE_GID].offset, p->path.dgid,
	       16);
	cm_set(mad, DROCE_CM_REQ_PRIMARY_FLOW_LABEL, p->path.flow_label);
	cm_set(mad, DROCE_CM_REQ_PRIMARY_TRAFFIC_CLASS, p->path.traffic_class);
	cm_set(mad, DROCE_CM_REQ_PRIMARY_HOP_LIMIT, p->path.hop_limit);
	/* 12.6.5: SubnetLocal when the peer needs no routing (a hop limit of at most 1) */
	cm_set(mad, DROCE_CM_REQ_PRIMARY_SUBNET_LOCAL, p->path.hop_limit <= 1);
	cm_set(mad, DROCE_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, p->local_ack_timeout);
	(void)droce_cm_set_private(mad, DROCE_CM_REQ, p->private_data, p->private_data_len);
}

int droce_cm_send_req(struct droce_cm_id *id, const struct droce_cm_req_param *p)
{
	uint8_t mad[DROCE_MAD_LEN];
	int ret;

	if (id == NULL || p == NULL || id->state != DROCE_CM_IDLE || id->passive)
		return -EINVAL;
	ret = cm_req_check(p);
	if (ret != 0)
		return ret;
	id->path = p->path;
	id->service_id = p->service_id;
	id->local_qpn = p->local_qpn;
	id->remote_comm_id = 0;
	id->remote_qpn = 0;
	id->packet_life_time = p->packet_life_time;
	id->peer_response_timeout = p->remote_cm_response_timeout;
	id->max_cm_retries = p->max_cm_retries;
	id->ack_timeout = p->local_ack_timeout;
	id->tid = cm_random64();
	cm_build_req(id, p, mad);
	cm_send_id(id, mad, DROCE_CM_REQ);
	/* 12.9.5: wait for REP, MRA or REJ; resend up to MaxCMRetries times */
	cm_timer_start(id, cm_wait_us(id), id->max_cm_retries);
	id->state = DROCE_CM_REQ_SENT;
	return 0;
}

/* REP in REQ_SENT or MRA_REQ_RCVD (12.9.5): the consumer answers with RTU, MRA or REJ. */
static enum droce_cm_state cm_rep_first(struct droce_cm_id *id, const struct droce_cm_decoded *d)
{
	cm_timer_stop(id);
	id->remote_comm_id = (uint32_t)d->value[DROCE_CM_REP_LOCAL_COMM_ID];
	id->remote_qpn = (uint32_t)d->value[DROCE_CM_REP_LOCAL_QPN];
	return DROCE_CM_REP_RCVD;
}

/* A REP seen before (12.9.5): answered as it was, RTU or MRA, else ignored. */
static enum droce_cm_state cm_rep_again(struct droce_cm_id *id)
{
	id->cm->stats.duplicates++;
	if ((id->state == DROCE_CM_ESTABLISHED && id->last.msg == DROCE_CM_RTU) ||
	    (id->state == DROCE_CM_MRA_REP_SENT && id->last.msg == DROCE_CM_MRA))
		cm_resend_last(id);
	return id->state;
}

void cm_active_rep(struct droce_cm_id *id, const struct droce_cm_decoded *d,
		   const struct droce_cm_addr *from)
{
	switch (id->state) {
	case DROCE_CM_REQ_SENT:
	case DROCE_CM_MRA_REQ_RCVD:
		id->state = cm_rep_first(id, d);
		cm_event(id, DROCE_CM_EV_REP_RCVD, d, from, 0, NULL);
		break;
	case DROCE_CM_REP_RCVD:
	case DROCE_CM_MRA_REP_SENT:
	case DROCE_CM_ESTABLISHED:
		id->state = cm_rep_again(id);
		break;
	default:
		id->cm->stats.unmatched++;
		break;
	}
}

int droce_cm_send_rtu(struct droce_cm_id *id, const void *private_data, uint8_t len)
{
	uint8_t mad[DROCE_MAD_LEN];

	if (id == NULL || (id->state != DROCE_CM_REP_RCVD && id->state != DROCE_CM_MRA_REP_SENT) ||
	    (private_data == NULL && len > 0))
		return -EINVAL;
	if (len > droce_cm_msg_table[DROCE_CM_RTU].private_len)
		return -EMSGSIZE;
	cm_begin(mad, DROCE_CM_RTU, id->tid);
	cm_set(mad, DROCE_CM_RTU_LOCAL_COMM_ID, id->local_comm_id);
	cm_set(mad, DROCE_CM_RTU_REMOTE_COMM_ID, id->remote_comm_id);
	(void)droce_cm_set_private(mad, DROCE_CM_RTU, private_data, len);
	/* kept: a duplicate REP is answered with it again (12.9.5) */
	cm_send_id(id, mad, DROCE_CM_RTU);
	id->state = DROCE_CM_ESTABLISHED;
	return 0;
}

/*
 * REQ_SENT: resend the REQ while retries last, then REJ (reason 4, time-out) and REQ_ERROR
 * (12.9.5). MRA_REQ_RCVD: the service timeout the peer asked for is over: the same error.
 */
void cm_active_timeout(struct droce_cm_id *id)
{
	if (id->state == DROCE_CM_REQ_SENT && id->timer.retries_left > 0) {
		id->cm->stats.retries++;
		cm_resend_last(id);
		cm_timer_start(id, id->timer.timeout_us, id->timer.retries_left - 1);
		return;
	}
	cm_send_rej_mad(id, DROCE_CM_REF_OTHER, DROCE_CM_REJ_TIMEOUT, NULL, 0, NULL, 0);
	id->state = DROCE_CM_IDLE;
	cm_event(id, DROCE_CM_EV_REQ_ERROR, NULL, NULL, -ETIMEDOUT, NULL);
}
