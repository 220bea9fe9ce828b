/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ARP for IPv4 over Ethernet (RFC 826): check, answer, learn, ask.
 */
#include <string.h>

#include "neigh_priv.h"

#define IPV4_OFF 12 /* an IPv4 address sits at byte 12 of its IPv4-mapped form */

static const uint8_t mac_broadcast[DROCE_ETHER_ADDR_LEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t mac_zero[DROCE_ETHER_ADDR_LEN];

enum droce_neigh_status neigh_arp_parse(const uint8_t *p, size_t len, struct droce_neigh_msg *msg)
{
	static const uint8_t any4[DROCE_IPV4_ADDR_LEN];
	const struct droce_arp_hdr *arp = (const struct droce_arp_hdr *)p;
	uint16_t op;

	if (len < sizeof(*arp))
		return DROCE_NEIGH_ARP_TRUNC;
	/* RFC 826: a packet for another hardware or protocol is not ours to read */
	if (droce_arp_htype(arp) != DROCE_ARP_HTYPE_ETHER)
		return DROCE_NEIGH_ARP_BAD_HTYPE;
	if (droce_arp_ptype(arp) != DROCE_ETHERTYPE_IPV4)
		return DROCE_NEIGH_ARP_BAD_PTYPE;
	if (arp->hlen != DROCE_ETHER_ADDR_LEN || arp->plen != DROCE_IPV4_ADDR_LEN)
		return DROCE_NEIGH_ARP_BAD_LEN;
	op = droce_arp_op(arp);
	if (op != DROCE_ARP_OP_REQUEST && op != DROCE_ARP_OP_REPLY)
		return DROCE_NEIGH_ARP_BAD_OP;
	/* a group or zero sender MAC must never become a neighbour's address */
	if (!neigh_mac_is_unicast(arp->sha))
		return DROCE_NEIGH_BAD_MAC;
	droce_neigh_ip_from_ipv4(msg->src_ip, arp->spa);
	droce_neigh_ip_from_ipv4(msg->target, arp->tpa);
	/* RFC 5227 2.1.1: a probe asks from 0.0.0.0; nothing else may come from 0/8 */
	if (!neigh_ip_is_station(msg->src_ip) &&
	    !(op == DROCE_ARP_OP_REQUEST && memcmp(arp->spa, any4, sizeof(any4)) == 0))
		return DROCE_NEIGH_ARP_BAD_IP;
	/* the target may be 0.0.0.0 (the answer to a probe), never loopback or a group */
	if (arp->tpa[0] == 127 || arp->tpa[0] >= 224)
		return DROCE_NEIGH_ARP_BAD_IP;
	msg->type = op == DROCE_ARP_OP_REQUEST ? DROCE_NEIGH_MSG_ARP_REQUEST
					       : DROCE_NEIGH_MSG_ARP_REPLY;
	memcpy(msg->dst_ip, msg->target, DROCE_NEIGH_IP_LEN);
	msg->has_lladdr = true;
	memcpy(msg->lladdr, arp->sha, DROCE_ETHER_ADDR_LEN);
	memcpy(msg->arp_tha, arp->tha, DROCE_ETHER_ADDR_LEN);
	return DROCE_NEIGH_OK;
}

/* Ethernet (+ 802.1Q) and an ARP packet from the port's MAC; dst is the Ethernet destination. */
static void arp_put(const struct droce_neigh *n, struct droce_neigh_frame *out,
		    const uint8_t dst[DROCE_ETHER_ADDR_LEN], uint16_t op, const uint8_t *spa,
		    const uint8_t tha[DROCE_ETHER_ADDR_LEN], const uint8_t *tpa)
{
	size_t off = neigh_l2_put(n, out->data, dst, DROCE_ETHERTYPE_ARP);
	struct droce_arp_hdr *arp = (struct droce_arp_hdr *)(out->data + off);

	droce_arp_set_htype(arp, DROCE_ARP_HTYPE_ETHER);
	droce_arp_set_ptype(arp, DROCE_ETHERTYPE_IPV4);
	arp->hlen = DROCE_ETHER_ADDR_LEN;
	arp->plen = DROCE_IPV4_ADDR_LEN;
	droce_arp_set_op(arp, op);
	memcpy(arp->sha, n->cfg.mac, DROCE_ETHER_ADDR_LEN);
	memcpy(arp->spa, spa, DROCE_IPV4_ADDR_LEN);
	memcpy(arp->tha, tha, DROCE_ETHER_ADDR_LEN);
	memcpy(arp->tpa, tpa, DROCE_IPV4_ADDR_LEN);
	out->len = (uint16_t)(off + sizeof(*arp));
}

void neigh_arp_build_request(const struct droce_neigh *n, const struct droce_neigh_req *req,
			     const uint8_t src[DROCE_NEIGH_IP_LEN], struct droce_neigh_frame *out)
{
	/* RFC 826 leaves the target hardware address open; zeros, as Linux sends */
	arp_put(n, out, req->unicast ? req->mac : mac_broadcast, DROCE_ARP_OP_REQUEST,
		src + IPV4_OFF, mac_zero, req->ip + IPV4_OFF);
}

/*
 * RFC 826: swap sender and target, put our MAC as the sender's and answer the
 * requester directly (its sender hardware address, as Linux does).
 */
static void arp_build_reply(const struct droce_neigh *n, const struct droce_neigh_msg *msg,
			    struct droce_neigh_frame *out)
{
	arp_put(n, out, msg->lladdr, DROCE_ARP_OP_REPLY, msg->target + IPV4_OFF, msg->lladdr,
		msg->src_ip + IPV4_OFF);
}

/*
 * A reply for one of our addresses. Only an address we asked for (an entry
 * exists) is learned: an unsolicited answer could fill the table with anything.
 * A reply unicast to us confirms the MAC (REACHABLE); a broadcast one only tells
 * it (STALE), as Linux's arp_process() has it.
 */
static enum droce_neigh_status arp_answer(struct droce_neigh *n, const struct droce_neigh_msg *msg,
					  uint64_t now)
{
	struct neigh_entry *e = neigh_find(n, msg->src_ip);

	if (e == NULL)
		return DROCE_NEIGH_UNSOLICITED;
	if (e->state == DROCE_NEIGH_STATIC)
		return DROCE_NEIGH_OK;
	if (msg->eth_dst[0] & 0x01)
		return neigh_learn_announce(n, msg->src_ip, msg->lladdr, now) ? DROCE_NEIGH_LEARNED
									      : DROCE_NEIGH_OK;
	neigh_entry_set(n, e, msg->lladdr, DROCE_NEIGH_REACHABLE, now);
	return DROCE_NEIGH_LEARNED;
}

enum droce_neigh_status neigh_arp_process(struct droce_neigh *n, const struct droce_neigh_msg *msg,
					  uint64_t now, struct droce_neigh_frame *reply)
{
	if (neigh_mac_eq(msg->lladdr, n->cfg.mac))
		return DROCE_NEIGH_OWN_FRAME;
	/* RFC 5227 2.4: another station sends from one of our addresses */
	if (neigh_ip_is_own(n, msg->src_ip))
		return DROCE_NEIGH_ADDR_CONFLICT;
	if (neigh_ip_is_own(n, msg->target)) {
		if (msg->type == DROCE_NEIGH_MSG_ARP_REPLY)
			return arp_answer(n, msg, now);
		/* RFC 826: the requester is added or merged; a probe (from 0.0.0.0) is not */
		if (neigh_ip_is_station(msg->src_ip))
			neigh_learn_request(n, msg->src_ip, msg->lladdr, now);
		arp_build_reply(n, msg, reply);
		return DROCE_NEIGH_REPLY;
	}
	/* gratuitous ARP (sender = target): refreshes a known entry, never makes one */
	if (memcmp(msg->src_ip, msg->target, DROCE_NEIGH_IP_LEN) == 0 &&
	    neigh_learn_announce(n, msg->src_ip, msg->lladdr, now))
		return DROCE_NEIGH_LEARNED;
	return DROCE_NEIGH_OK;
}
