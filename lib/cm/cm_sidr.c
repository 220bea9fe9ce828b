/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Service ID resolution (12.11): SIDR_REQ with its retries, SIDR_REP; a SIDR_REQ received
 * becomes a child id of its listener, or is answered "service ID not supported" at once.
 */
#include <errno.h>
#include <string.h>

#include "cm_priv.h"

static uint8_t *cm_field_ptr(uint8_t *mad, enum droce_cm_field f)
{
	return mad + DROCE_MAD_HDR_LEN + droce_cm_field_table[f].offset;
}

int droce_cm_send_sidr_req(struct droce_cm_id *id, const struct droce_cm_sidr_req_param *p)
{
	uint8_t mad[DROCE_MAD_LEN];

	if (id == NULL || p == NULL || id->state != DROCE_CM_IDLE || id->passive ||
	    !cm_bits_fit(p->timeout, 5) || !cm_bits_fit(p->max_cm_retries, 4) ||
	    !cm_bits_fit(p->path.flow_label, 20) ||
	    (p->private_data == NULL && p->private_data_len > 0))
		return -EINVAL;
	if (p->private_data_len > droce_cm_msg_table[DROCE_CM_SIDR_REQ].private_len)
		return -EMSGSIZE;
	id->path = p->path;
	id->service_id = p->service_id;
	id->tid = cm_random64();
	cm_begin(mad, DROCE_CM_SIDR_REQ, id->tid);
	cm_set(mad, DROCE_CM_SIDR_REQ_REQUEST_ID, id->local_comm_id);
	cm_set(mad, DROCE_CM_SIDR_REQ_PARTITION_KEY, p->path.pkey);
	cm_set(mad, DROCE_CM_SIDR_REQ_SERVICE_ID, p->service_id);
	(void)droce_cm_set_private(mad, DROCE_CM_SIDR_REQ, p->private_data, p->private_data_len);
	cm_send_id(id, mad, DROCE_CM_SIDR_REQ);
	/* 12.11: each try waits 4.096 µs × 2^timeout; MaxCMRetries more tries */
	cm_timer_start(id, cm_time_us(p->timeout), p->max_cm_retries);
	id->state = DROCE_CM_SIDR_REQ_SENT;
	return 0;
}

/* SIDR_REP that no id sends: status 1, service ID not supported (12.11). */
static void cm_sidr_unsupported(struct droce_cm *cm, const struct droce_cm_decoded *d,
				const struct droce_cm_addr *from)
{
	uint8_t mad[DROCE_MAD_LEN];

	cm_begin(mad, DROCE_CM_SIDR_REP, d->hdr.tid);
	cm_set(mad, DROCE_CM_SIDR_REP_REQUEST_ID, d->value[DROCE_CM_SIDR_REQ_REQUEST_ID]);
	cm_set(mad, DROCE_CM_SIDR_REP_STATUS, DROCE_CM_SIDR_UNSUPPORTED);
	cm_set(mad, DROCE_CM_SIDR_REP_SERVICE_ID, d->value[DROCE_CM_SIDR_REQ_SERVICE_ID]);
	cm_send_raw(cm, from, mad, DROCE_CM_SIDR_REP);
}

void cm_sidr_req_rcvd(struct droce_cm *cm, const struct droce_cm_decoded *d,
		      const struct droce_cm_addr *from)
{
	uint32_t request_id = (uint32_t)d->value[DROCE_CM_SIDR_REQ_REQUEST_ID];
	struct droce_cm_id *id = cm_find_remote(cm, request_id, from->dgid);
	struct droce_cm_id *listener;

	if (id != NULL) {
		/* a SIDR_REQ resent: answered again if it was, else the consumer's to answer */
		cm->stats.duplicates++;
		if (id->state == DROCE_CM_IDLE && id->last.msg == DROCE_CM_SIDR_REP)
			cm_resend_last(id);
		return;
	}
	listener = cm_find_listener(cm, d->value[DROCE_CM_SIDR_REQ_SERVICE_ID]);
	if (listener == NULL) {
		cm->stats.unmatched++;
		cm_sidr_unsupported(cm, d, from);
		return;
	}
	id = cm_id_new(cm, NULL);
	if (id == NULL) {
		cm_sidr_unsupported(cm, d, from);
		return;
	}
	id->passive = true;
	id->path = *from;
	id->path.pkey = (uint16_t)d->value[DROCE_CM_SIDR_REQ_PARTITION_KEY];
	id->remote_comm_id = request_id;
	id->service_id = d->value[DROCE_CM_SIDR_REQ_SERVICE_ID];
	id->tid = d->hdr.tid;
	id->state = DROCE_CM_SIDR_REQ_RCVD;
	cm_event(id, DROCE_CM_EV_SIDR_REQ_RCVD, d, from, 0, listener);
}

int droce_cm_send_sidr_rep(struct droce_cm_id *id, const struct droce_cm_sidr_rep_param *p)
{
	uint8_t mad[DROCE_MAD_LEN];

	if (id == NULL || p == NULL || id->state != DROCE_CM_SIDR_REQ_RCVD ||
	    (unsigned int)p->status > DROCE_CM_SIDR_UNSUPPORTED_VERSION ||
	    !cm_bits_fit(p->qpn, 24) || (p->info == NULL && p->info_len > 0) ||
	    (p->private_data == NULL && p->private_data_len > 0))
		return -EINVAL;
	if (p->info_len > DROCE_CM_INFO_LEN_MAX ||
	    p->private_data_len > droce_cm_msg_table[DROCE_CM_SIDR_REP].private_len)
		return -EMSGSIZE;
	cm_begin(mad, DROCE_CM_SIDR_REP, id->tid);
	cm_set(mad, DROCE_CM_SIDR_REP_REQUEST_ID, id->remote_comm_id);
	cm_set(mad, DROCE_CM_SIDR_REP_STATUS, p->status);
	cm_set(mad, DROCE_CM_SIDR_REP_ADDITIONAL_INFO_LENGTH, p->info_len);
	cm_set(mad, DROCE_CM_SIDR_REP_QPN, p->qpn);
	cm_set(mad, DROCE_CM_SIDR_REP_SERVICE_ID, id->service_id);
	cm_set(mad, DROCE_CM_SIDR_REP_QKEY, p->qkey);
	if (p->info_len > 0)
		memcpy(cm_field_ptr(mad, DROCE_CM_SIDR_REP_CLASS_PORT_INFO), p->info, p->info_len);
	(void)droce_cm_set_private(mad, DROCE_CM_SIDR_REP, p->private_data, p->private_data_len);
	/* kept: a resent SIDR_REQ gets it again */
	cm_send_id(id, mad, DROCE_CM_SIDR_REP);
	id->state = DROCE_CM_IDLE;
	return 0;
}

void cm_sidr_rep_rcvd(struct droce_cm *cm, const struct droce_cm_decoded *d,
		      const struct droce_cm_addr *from)
{
	struct droce_cm_id *id =
		cm_find_local(cm, (uint32_t)d->value[DROCE_CM_SIDR_REP_REQUEST_ID]);

	if (id == NULL || id->state != DROCE_CM_SIDR_REQ_SENT ||
	    memcmp(id->path.dgid, from->dgid, sizeof(from->dgid)) != 0) {
		cm->stats.unmatched++;
		return;
	}
	cm_timer_stop(id);
	id->state = DROCE_CM_IDLE;
	cm_event(id, DROCE_CM_EV_SIDR_REP_RCVD, d, from, (int)d->value[DROCE_CM_SIDR_REP_STATUS],
		 NULL);
}

/* 12.11: resend while retries last, then SIDR_REQ_ERROR. */
void cm_sidr_timeout(struct droce_cm_id *id)
{
	if (id->timer.retries_left > 0) {
		id->cm->stats.retries++;
		cm_resend_last(id);
		cm_timer_start(id, id->timer.timeout_us, id->timer.retries_left - 1);
		return;
	}
	id->state = DROCE_CM_IDLE;
	cm_event(id, DROCE_CM_EV_SIDR_REQ_ERROR, NULL, NULL, -ETIMEDOUT, NULL);
}
