/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Finding the id a received MAD belongs to: by local communication ID (the table), by the
 * peer's communication ID or QPN and GID (duplicate and stale REQs, 12.9.8), by service ID
 * (listeners).
 */
#include <string.h>

#include "cm_priv.h"

struct droce_cm_id *cm_find_local(struct droce_cm *cm, uint32_t local_comm_id)
{
	struct droce_cm_id *id = cm->buckets[local_comm_id & (CM_ID_BUCKETS - 1)];

	while (id != NULL && id->local_comm_id != local_comm_id)
		id = id->hash_next;
	return id;
}

/* A passive id made by the REQ (or SIDR_REQ) of @p remote_comm_id from @p peer_gid. */
struct droce_cm_id *cm_find_remote(struct droce_cm *cm, uint32_t remote_comm_id,
				   const uint8_t *peer_gid)
{
	struct droce_cm_id *id;

	for (id = cm->first; id != NULL; id = id->next)
		if (id->passive && id->remote_comm_id == remote_comm_id &&
		    memcmp(id->path.dgid, peer_gid, sizeof(id->path.dgid)) == 0)
			return id;
	return NULL;
}

/*
 * States in which the peer's QPN belongs to a connection: a REP went either way, until time
 * wait ends (12.9.8.3: a QP still waiting is not free for another connection).
 */
static bool cm_state_connected(enum droce_cm_state s)
{
	switch (s) {
	case DROCE_CM_TIMEWAIT:
	case DROCE_CM_REP_SENT:
	case DROCE_CM_REP_RCVD:
	case DROCE_CM_MRA_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
	case DROCE_CM_ESTABLISHED:
	case DROCE_CM_DREQ_SENT:
	case DROCE_CM_DREQ_RCVD:
		return true;
	default:
		return false;
	}
}

/* A connection other than @p except to QP @p remote_qpn of @p peer_gid. */
struct droce_cm_id *cm_find_remote_qpn(struct droce_cm *cm, uint32_t remote_qpn,
				       const uint8_t *peer_gid, const struct droce_cm_id *except)
{
	struct droce_cm_id *id;

	for (id = cm->first; id != NULL; id = id->next)
		if (id != except && cm_state_connected(id->state) && id->remote_qpn == remote_qpn &&
		    memcmp(id->path.dgid, peer_gid, sizeof(id->path.dgid)) == 0)
			return id;
	return NULL;
}

struct droce_cm_id *cm_find_listener(struct droce_cm *cm, uint64_t service_id)
{
	struct droce_cm_id *id;

	for (id = cm->first; id != NULL; id = id->next)
		if (id->listening && !id->gone && (service_id & id->service_mask) == id->service_id)
			return id;
	return NULL;
}
