/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_resolve_eth_l2_from_gid: the Ethernet address behind a GID. A GID of
 * this port is answered from the port itself; other GIDs need the port's
 * neighbour table (ARP / IPv6 neighbour discovery), which the engine's port
 * layer keeps and registers here when it runs the port.
 */
#include <errno.h>
#include <string.h>

#include "droce_verbs_engine.h"
#include "verbs_priv.h"

static droce_neigh_resolve_fn neigh_resolve;

void droce_engine_set_neigh_resolver(droce_neigh_resolve_fn fn)
{
	__atomic_store_n(&neigh_resolve, fn, __ATOMIC_RELEASE);
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
				uint8_t eth_mac[6], uint16_t *vid)
{
	const struct droce_device *d = to_dctx(context)->dev;
	droce_neigh_resolve_fn fn;
	unsigned int i;

	if (attr == NULL || eth_mac == NULL || vid == NULL || attr->port_num != 1 ||
	    !attr->is_global || attr->grh.sgid_index >= d->gid_count)
		return EINVAL;
	*vid = 0xffff; /* droce ports are untagged */
	for (i = 0; i < d->gid_count; i++) {
		if (memcmp(&d->gid[i], &attr->grh.dgid, sizeof(attr->grh.dgid)) == 0) {
			memcpy(eth_mac, d->port.mac, 6);
			return 0;
		}
	}
	if (to_dctx(context)->remote != NULL) {
		struct droce_dproto_resolve_req req = {.gid = attr->grh.dgid};
		struct droce_dproto_resolve_rep rep;
		int rc = droce_remote_call(to_dctx(context), DPROTO_RESOLVE_L2, 0, &req,
					   sizeof(req), -1, &rep, sizeof(rep), NULL, NULL);

		if (rc == 0)
			memcpy(eth_mac, rep.mac, 6);
		return rc;
	}
	fn = __atomic_load_n(&neigh_resolve, __ATOMIC_ACQUIRE);
	if (fn == NULL)
		return EHOSTUNREACH; /* no engine runs the port: no neighbour is known */
	return fn(context, &attr->grh.dgid, eth_mac);
}
