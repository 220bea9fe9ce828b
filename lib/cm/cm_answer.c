/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The consumer's answers either side may give to a REQ or REP received: REJ (12.6.7) and
 * MRA (12.6.6).
 */
#include <errno.h>

#include "cm_priv.h"

/* The message a REJ or MRA in state @p s answers, or -1 when it answers none. */
static int cm_answered(enum droce_cm_state s)
{
	switch (s) {
	case DROCE_CM_REQ_RCVD:
	case DROCE_CM_MRA_REQ_SENT:
		return DROCE_CM_REF_REQ;
	case DROCE_CM_REP_RCVD:
	case DROCE_CM_MRA_REP_SENT:
		return DROCE_CM_REF_REP;
	default:
		return -1;
	}
}

int droce_cm_send_rej(struct droce_cm_id *id, uint16_t reason, const void *ari, uint8_t ari_len,
		      const void *private_data, uint8_t len)
{
	int ref;

	if (id == NULL)
		return -EINVAL;
	ref = cm_answered(id->state);
	if (ref < 0 || reason < 1 || reason > DROCE_CM_REJ_REASON_MAX ||
	    (ari == NULL && ari_len > 0) || (private_data == NULL && len > 0))
		return -EINVAL;
	if (ari_len > DROCE_CM_INFO_LEN_MAX || len > droce_cm_msg_table[DROCE_CM_REJ].private_len)
		return -EMSGSIZE;
	cm_send_rej_mad(id, (enum droce_cm_msg_ref)ref, reason, ari, ari_len, private_data, len);
	/* 12.9.5, 12.9.6: neither QP is connected yet: back to IDLE. The REJ is kept to
	 * answer a duplicate REQ. */
	id->state = DROCE_CM_IDLE;
	return 0;
}

int droce_cm_send_mra(struct droce_cm_id *id, uint8_t service_timeout, const void *private_data,
		      uint8_t len)
{
	uint8_t mad[DROCE_MAD_LEN];
	int ref;

	if (id == NULL)
		return -EINVAL;
	ref = cm_answered(id->state);
	/* one MRA per message (12.6.6); a duplicate is answered with the MRA kept */
	if (ref < 0 || id->state == DROCE_CM_MRA_REQ_SENT || id->state == DROCE_CM_MRA_REP_SENT ||
	    !cm_bits_fit(service_timeout, 5) || (private_data == NULL && len > 0))
		return -EINVAL;
	if (len > droce_cm_msg_table[DROCE_CM_MRA].private_len)
		return -EMSGSIZE;
	cm_begin(mad, DROCE_CM_MRA, id->tid);
	cm_set(mad, DROCE_CM_MRA_LOCAL_COMM_ID, id->local_comm_id);
	cm_set(mad, DROCE_CM_MRA_REMOTE_COMM_ID, id->remote_comm_id);
	cm_set(mad, DROCE_CM_MRA_MESSAGE_MRAED, (uint64_t)ref);
	cm_set(mad, DROCE_CM_MRA_SERVICE_TIMEOUT, service_timeout);
	(void)droce_cm_set_private(mad, DROCE_CM_MRA, private_data, len);
	cm_send_id(id, mad, DROCE_CM_MRA);
	id->state = ref == DROCE_CM_REF_REQ ? DROCE_CM_MRA_REQ_SENT : DROCE_CM_MRA_REP_SENT;
	return 0;
}
