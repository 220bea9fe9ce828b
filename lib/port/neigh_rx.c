/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receive path: Ethernet and 802.1Q around ARP and ND, the checks that
 * decide whether a frame is for this port at all, then the protocol handlers.
 */
#include <string.h>

#include "neigh_priv.h"

#define VID_MASK 0x0fff

size_t neigh_l2_put(const struct droce_neigh *n, uint8_t *buf,
		    const uint8_t dst[DROCE_ETHER_ADDR_LEN], uint16_t ethertype)
{
	struct droce_eth_hdr *eth = (struct droce_eth_hdr *)buf;
	struct droce_vlan_hdr *vlan;

	memcpy(eth->dst, dst, DROCE_ETHER_ADDR_LEN);
	memcpy(eth->src, n->cfg.mac, DROCE_ETHER_ADDR_LEN);
	if (!n->cfg.has_vlan) {
		droce_eth_set_type(eth, ethertype);
		return sizeof(*eth);
	}
	droce_eth_set_type(eth, DROCE_ETHERTYPE_VLAN);
	vlan = (struct droce_vlan_hdr *)(buf + sizeof(*eth));
	droce_vlan_set_tci(vlan, n->cfg.vlan_tci);
	droce_vlan_set_type(vlan, ethertype);
	return sizeof(*eth) + sizeof(*vlan);
}

enum droce_neigh_status droce_neigh_parse(const void *frame, size_t len,
					  struct droce_neigh_msg *msg)
{
	const struct droce_eth_hdr *eth = frame;
	const uint8_t *p = frame;
	enum droce_neigh_status s;
	size_t off = sizeof(*eth);
	uint16_t type;

	if (frame == NULL || msg == NULL)
		return DROCE_NEIGH_NOT_NEIGH;
	memset(msg, 0, sizeof(*msg));
	if (len < sizeof(*eth))
		return DROCE_NEIGH_TRUNC_L2;
	type = droce_eth_type(eth);
	if (type == DROCE_ETHERTYPE_VLAN) {
		const struct droce_vlan_hdr *vlan = (const struct droce_vlan_hdr *)(p + off);

		if (len < off + sizeof(*vlan))
			return DROCE_NEIGH_TRUNC_L2;
		msg->vlan = true;
		msg->vlan_tci = droce_vlan_tci(vlan);
		type = droce_vlan_type(vlan);
		off += sizeof(*vlan);
	}
	if (type == DROCE_ETHERTYPE_ARP)
		s = neigh_arp_parse(p + off, len - off, msg);
	else if (type == DROCE_ETHERTYPE_IPV6)
		s = neigh_nd_parse(p + off, len - off, msg);
	else
		return DROCE_NEIGH_NOT_NEIGH;
	if (s != DROCE_NEIGH_OK)
		return s;
	if (!neigh_mac_is_unicast(eth->src))
		return DROCE_NEIGH_BAD_MAC;
	memcpy(msg->eth_dst, eth->dst, DROCE_ETHER_ADDR_LEN);
	memcpy(msg->eth_src, eth->src, DROCE_ETHER_ADDR_LEN);
	return DROCE_NEIGH_OK;
}

/* 802.1Q: a priority tag (VID 0) is no VLAN. */
static bool vlan_matches(const struct droce_neigh *n, const struct droce_neigh_msg *msg)
{
	uint16_t vid = msg->vlan ? msg->vlan_tci & VID_MASK : 0;

	return vid == (n->cfg.has_vlan ? n->cfg.vlan_tci & VID_MASK : 0);
}

static enum droce_neigh_status rx_msg(struct droce_neigh *n, const struct droce_neigh_msg *msg,
				      uint64_t now, struct droce_neigh_frame *reply)
{
	if (!vlan_matches(n, msg))
		return DROCE_NEIGH_OTHER_VLAN;
	if (neigh_mac_eq(msg->eth_src, n->cfg.mac))
		return DROCE_NEIGH_OWN_FRAME;
	/* group destinations (broadcast, 33:33:...) are decided on the addresses inside */
	if ((msg->eth_dst[0] & 0x01) == 0 && !neigh_mac_eq(msg->eth_dst, n->cfg.mac))
		return DROCE_NEIGH_OTHER_HOST;
	if (msg->type == DROCE_NEIGH_MSG_ARP_REQUEST || msg->type == DROCE_NEIGH_MSG_ARP_REPLY)
		return neigh_arp_process(n, msg, now, reply);
	return neigh_nd_process(n, msg, now, reply);
}

enum droce_neigh_status droce_neigh_rx(struct droce_neigh *n, const void *frame, size_t len,
				       uint64_t now, struct droce_neigh_frame *reply)
{
	struct droce_neigh_msg msg;
	enum droce_neigh_status s;

	if (n == NULL || frame == NULL || reply == NULL)
		return DROCE_NEIGH_NOT_NEIGH;
	reply->len = 0;
	s = droce_neigh_parse(frame, len, &msg);
	if (s == DROCE_NEIGH_OK)
		s = rx_msg(n, &msg, now, reply);
	n->stats.rx[s]++;
	return s;
}
