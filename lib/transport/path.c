/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The address template of a packet from a GRH (a QP's primary path or a UD
 * address handle): RoCEv2 turns the GIDs into IP addresses (IPv4-mapped GIDs
 * give IPv4 packets), the neighbour table gives the MAC, and the QP pair
 * gives the UDP source port.
 */
#include <errno.h>
#include <string.h>

#include "transport_priv.h"

static bool gid_is_ipv4(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(g->raw, prefix, sizeof(prefix)) == 0;
}

int droce_path_addr(const struct droce_transport_env *env, const struct ibv_global_route *grh,
		    uint32_t qpn, uint32_t dqpn, struct droce_addr *a)
{
	const union ibv_gid *sgid;

	if (grh->sgid_index >= env->port->gid_count)
		return -EINVAL;
	sgid = &env->port->gid[grh->sgid_index];
	if (gid_is_ipv4(sgid) != gid_is_ipv4(&grh->dgid))
		return -EINVAL; /* no IPv4 packet between an IPv4 and an IPv6 address */
	memset(a, 0, sizeof(*a));
	memcpy(a->src_mac, env->port->mac, 6);
	a->ipv6 = !gid_is_ipv4(sgid);
	if (a->ipv6) {
		memcpy(a->src_ip, sgid->raw, 16);
		memcpy(a->dst_ip, grh->dgid.raw, 16);
		a->flow_label = grh->flow_label;
	} else {
		memcpy(a->src_ip, &sgid->raw[12], 4);
		memcpy(a->dst_ip, &grh->dgid.raw[12], 4);
		a->ipv4_df = true;
	}
	a->tclass = grh->traffic_class;
	a->ttl = grh->hop_limit ? grh->hop_limit : 64;
	a->udp_sport = droce_udp_sport_for_qps(grh->flow_label, qpn, dqpn);
	a->udp_dport = DROCE_ROCEV2_UDP_PORT;
	/* last: on -EAGAIN/-EHOSTUNREACH the rest of @p a is valid (a frame may wait for its
	 * MAC, or be accounted as lost) */
	return env->neigh(env->arg, grh->dgid.raw, a->dst_mac);
}
