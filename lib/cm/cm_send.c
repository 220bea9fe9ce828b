/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Building the agent's MADs through lib/wire's field table, and sending them: counted by
 * message, a failed send counted and left to the id's timer (12.9: every message that waits
 * for an answer is resent on its time-out).
 */
#include <string.h>

#include "cm_priv.h"

/* 4.096 µs × 2^n (the 5-bit time codes of 12.6.5, 12.6.6), in µs. */
uint64_t cm_time_us(uint8_t iba_time)
{
	return (UINT64_C(4096) << (iba_time & 31)) / 1000;
}

bool cm_bits_fit(uint64_t v, unsigned int bits)
{
	return bits >= 64 || v >> bits == 0;
}

/*
 * droce has no channel adapter GUID of its own: the interface ID half of the local GID (an
 * EUI-64 for link-local GIDs) names the port instead.
 */
uint64_t cm_ca_guid(const struct droce_cm_addr *path)
{
	uint64_t g = 0;
	unsigned int i;

	for (i = 8; i < 16; i++)
		g = g << 8 | path->sgid[i];
	return g;
}

void cm_begin(void *mad, enum droce_cm_msg msg, uint64_t tid)
{
	/* a 256-byte buffer and a message of the table: cannot fail */
	(void)droce_cm_init(mad, DROCE_MAD_LEN, msg, tid);
}

void cm_set(void *mad, enum droce_cm_field f, uint64_t v)
{
	/* every value is checked against its field's width where it enters the agent */
	(void)droce_cm_set(mad, f, v);
}

void cm_send_raw(struct droce_cm *cm, const struct droce_cm_addr *to, const uint8_t *mad,
		 enum droce_cm_msg msg)
{
	if (cm->ops.send(cm->ops.arg, to, mad) != 0) {
		cm->stats.send_failed++;
		return;
	}
	cm->stats.tx[msg]++;
}

/* Send on the id's path and keep the MAD for retries and duplicates. */
void cm_send_id(struct droce_cm_id *id, const uint8_t *mad, enum droce_cm_msg msg)
{
	if (mad != id->last.mad)
		memcpy(id->last.mad, mad, DROCE_MAD_LEN);
	id->last.msg = msg;
	cm_send_raw(id->cm, &id->path, id->last.mad, msg);
}

void cm_resend_last(struct droce_cm_id *id)
{
	if (id->last.msg != DROCE_CM_MSG_COUNT)
		cm_send_raw(id->cm, &id->path, id->last.mad, id->last.msg);
}

/* REJ (12.6.7) of the exchange in progress. */
void cm_send_rej_mad(struct droce_cm_id *id, enum droce_cm_msg_ref ref, uint16_t reason,
		     const void *ari, uint8_t ari_len, const void *priv, uint8_t priv_len)
{
	uint8_t mad[DROCE_MAD_LEN];
	uint8_t guid[8];
	uint64_t g;
	int i;

	/* 12.6.7.2: a time-out's additional information is the rejecting CA's GUID */
	if (reason == DROCE_CM_REJ_TIMEOUT && ari == NULL) {
		g = cm_ca_guid(&id->path);
		for (i = 7; i >= 0; i--, g >>= 8)
			guid[i] = (uint8_t)g;
		ari = guid;
		ari_len = sizeof(guid);
	}
	cm_begin(mad, DROCE_CM_REJ, id->tid);
	cm_set(mad, DROCE_CM_REJ_LOCAL_COMM_ID, id->local_comm_id);
	cm_set(mad, DROCE_CM_REJ_REMOTE_COMM_ID, id->remote_comm_id);
	cm_set(mad, DROCE_CM_REJ_MESSAGE_REJECTED, ref);
	cm_set(mad, DROCE_CM_REJ_REJECTED_INFO_LENGTH, ari_len);
	cm_set(mad, DROCE_CM_REJ_REASON, reason);
	if (ari_len > 0)
		memcpy(mad + DROCE_MAD_HDR_LEN + droce_cm_field_table[DROCE_CM_REJ_ARI].offset, ari,
		       ari_len);
	(void)droce_cm_set_private(mad, DROCE_CM_REJ, priv, priv_len);
	cm_send_id(id, mad, DROCE_CM_REJ);
}

/* DREQ (12.6.10) under a transaction ID of its own, resent by the DREQ timer. */
void cm_send_dreq_mad(struct droce_cm_id *id, const void *priv, uint8_t len)
{
	uint8_t mad[DROCE_MAD_LEN];

	id->tid = cm_random64();
	cm_begin(mad, DROCE_CM_DREQ, id->tid);
	cm_set(mad, DROCE_CM_DREQ_LOCAL_COMM_ID, id->local_comm_id);
	cm_set(mad, DROCE_CM_DREQ_REMOTE_COMM_ID, id->remote_comm_id);
	cm_set(mad, DROCE_CM_DREQ_REMOTE_QPN_EECN, id->remote_qpn);
	(void)droce_cm_set_private(mad, DROCE_CM_DREQ, priv, len);
	cm_send_id(id, mad, DROCE_CM_DREQ);
	cm_timer_start(id, cm_wait_us(id), id->max_cm_retries);
}

/* DREP (12.6.11) under the DREQ's transaction ID, kept to answer its duplicates. */
void cm_send_drep_mad(struct droce_cm_id *id, const void *priv, uint8_t len)
{
	uint8_t mad[DROCE_MAD_LEN];

	cm_begin(mad, DROCE_CM_DREP, id->tid);
	cm_set(mad, DROCE_CM_DREP_LOCAL_COMM_ID, id->local_comm_id);
	cm_set(mad, DROCE_CM_DREP_REMOTE_COMM_ID, id->remote_comm_id);
	(void)droce_cm_set_private(mad, DROCE_CM_DREP, priv, len);
	cm_send_id(id, mad, DROCE_CM_DREP);
}
