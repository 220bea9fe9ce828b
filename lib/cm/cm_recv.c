/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A received MAD: checked and decoded once (lib/wire), matched to its id, handed to the
 * handler of its message (one dispatch switch); and the events the handlers give the
 * consumer.
 */
#include <string.h>

#include "cm_priv.h"

void cm_event(struct droce_cm_id *id, enum droce_cm_event_type type,
	      const struct droce_cm_decoded *d, const struct droce_cm_addr *from, int status,
	      struct droce_cm_id *listen_id)
{
	struct droce_cm_event ev = {
		.type = type,
		.listen_id = listen_id,
		.msg = d,
		.status = status,
	};

	if (id->gone)
		return;
	if (d != NULL) {
		ev.private_data = d->bytes + droce_cm_msg_table[d->msg].private_off;
		ev.private_data_len = droce_cm_msg_table[d->msg].private_len;
	}
	ev.from = from != NULL ? *from : id->path;
	id->cm->ops.event(id->cm->ops.arg, id, &ev);
}

/* The id @p comm_id names, if the MAD comes from its peer. */
static struct droce_cm_id *cm_match(struct droce_cm *cm, uint32_t comm_id,
				    const struct droce_cm_addr *from)
{
	struct droce_cm_id *id = cm_find_local(cm, comm_id);

	if (id == NULL || memcmp(id->path.dgid, from->dgid, sizeof(from->dgid)) != 0) {
		cm->stats.unmatched++;
		return NULL;
	}
	return id;
}

/* A REJ names our ID as its remote one; one that does not (0) is matched by the sender's. */
static struct droce_cm_id *cm_match_rej(struct droce_cm *cm, const struct droce_cm_decoded *d,
					const struct droce_cm_addr *from)
{
	uint32_t ours = (uint32_t)d->value[DROCE_CM_REJ_REMOTE_COMM_ID];
	struct droce_cm_id *id;

	if (ours != 0)
		return cm_match(cm, ours, from);
	id = cm_find_remote(cm, (uint32_t)d->value[DROCE_CM_REJ_LOCAL_COMM_ID], from->dgid);
	if (id == NULL)
		cm->stats.unmatched++;
	return id;
}

/* LAP (12.6.12): droce loads no alternate path, so whatever the state, APR refuses it. */
static void cm_lap_rcvd(struct droce_cm *cm, const struct droce_cm_addr *from, const void *mad,
			size_t len)
{
	uint8_t apr[DROCE_MAD_LEN];

	/* 12.6.13: AP status 2, the LAP's transaction ID; no state changes */
	if (droce_cm_apr_refuse(apr, sizeof(apr), mad, len) == 0)
		cm_send_raw(cm, from, apr, DROCE_CM_APR);
}

/*
 * MRA of the REQ or REP the id sent (12.6.6): the peer needs its service timeout more, plus
 * the way back; the id waits in @p extended. A repeated MRA changes nothing.
 */
static void cm_mra_rcvd(struct droce_cm_id *id, const struct droce_cm_decoded *d,
			const struct droce_cm_addr *from, enum droce_cm_state waiting,
			enum droce_cm_state extended)
{
	uint8_t service_timeout = (uint8_t)d->value[DROCE_CM_MRA_SERVICE_TIMEOUT];

	if (id->state == waiting) {
		cm_timer_start(id, cm_time_us(service_timeout) + cm_time_us(id->packet_life_time),
			       0);
		id->state = extended;
		cm_event(id, DROCE_CM_EV_MRA_RCVD, d, from, 0, NULL);
	} else if (id->state == extended) {
		id->cm->stats.duplicates++;
	} else {
		id->cm->stats.unmatched++;
	}
}

static void cm_dispatch(struct droce_cm *cm, const struct droce_cm_decoded *d,
			const struct droce_cm_addr *from, const void *mad, size_t len)
{
	struct droce_cm_id *id;

	switch (d->msg) {
	case DROCE_CM_REQ:
		cm_passive_req(cm, d, from);
		break;
	case DROCE_CM_MRA:
		id = cm_match(cm, (uint32_t)d->value[DROCE_CM_MRA_REMOTE_COMM_ID], from);
		if (id == NULL)
			break;
		/* our REQ: the passive consumer takes longer; our REP: the active one does */
		if (d->value[DROCE_CM_MRA_MESSAGE_MRAED] == DROCE_CM_REF_REQ)
			cm_mra_rcvd(id, d, from, DROCE_CM_REQ_SENT, DROCE_CM_MRA_REQ_RCVD);
		else if (d->value[DROCE_CM_MRA_MESSAGE_MRAED] == DROCE_CM_REF_REP)
			cm_mra_rcvd(id, d, from, DROCE_CM_REP_SENT, DROCE_CM_MRA_REP_RCVD);
		else /* an MRA of a LAP: droce sends none */
			cm->stats.unmatched++;
		break;
	case DROCE_CM_REJ:
		id = cm_match_rej(cm, d, from);
		if (id != NULL)
			cm_rej_rcvd(id, d, from);
		break;
	case DROCE_CM_REP:
		id = cm_match(cm, (uint32_t)d->value[DROCE_CM_REP_REMOTE_COMM_ID], from);
		if (id != NULL)
			cm_active_rep(id, d, from);
		break;
	case DROCE_CM_RTU:
		id = cm_match(cm, (uint32_t)d->value[DROCE_CM_RTU_REMOTE_COMM_ID], from);
		if (id != NULL)
			cm_passive_rtu(id, d, from);
		break;
	case DROCE_CM_DREQ:
		cm_dreq_rcvd(cm, d, from);
		break;
	case DROCE_CM_DREP:
		id = cm_match(cm, (uint32_t)d->value[DROCE_CM_DREP_REMOTE_COMM_ID], from);
		if (id != NULL)
			cm_drep_rcvd(id, d, from);
		break;
	case DROCE_CM_SIDR_REQ:
		cm_sidr_req_rcvd(cm, d, from);
		break;
	case DROCE_CM_SIDR_REP:
		cm_sidr_rep_rcvd(cm, d, from);
		break;
	case DROCE_CM_LAP:
		cm_lap_rcvd(cm, from, mad, len);
		break;
	case DROCE_CM_APR: /* droce sends no LAP: nothing waits for an APR */
	case DROCE_CM_MSG_COUNT:
		cm->stats.unmatched++;
		break;
	}
}

void droce_cm_recv(struct droce_cm *cm, const struct droce_cm_addr *from, const void *mad,
		   size_t len)
{
	struct droce_cm_decoded d;
	enum droce_mad_status st;

	if (cm == NULL || from == NULL || mad == NULL)
		return;
	/* droce_cm_decode reads nothing unless len is exactly one MAD */
	st = droce_cm_decode(mad, len, &d);
	if (st != DROCE_MAD_OK) {
		/* malformed ones by reason; other classes and the CM's ClassPortInfo (not
		 * answered yet) under their own status */
		cm->stats.malformed[st]++;
		return;
	}
	cm->stats.rx[d.msg]++;
	cm_enter(cm);
	cm_dispatch(cm, &d, from, mad, len);
	cm_leave(cm);
}
