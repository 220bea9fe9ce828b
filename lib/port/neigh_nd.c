/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 neighbour discovery (RFC 4861): neighbour solicitations and
 * advertisements over ICMPv6 (RFC 4443) on Ethernet (RFC 2464).
 */
#include <string.h>

#include "neigh_priv.h"

/* ff02::1, and its MAC by RFC 2464 7: 33:33 and the address's last four bytes */
static const uint8_t all_nodes[DROCE_IPV6_ADDR_LEN] = {0xff, 0x02, [15] = 0x01};
static const uint8_t all_nodes_mac[DROCE_ETHER_ADDR_LEN] = {0x33, 0x33, 0, 0, 0, 0x01};

/* ff02::1:ff00:0/104 (RFC 4291 2.7.1) */
static const uint8_t solicited_node_prefix[13] = {0xff, 0x02, [11] = 0x01, [12] = 0xff};

static void solicited_node(uint8_t group[DROCE_IPV6_ADDR_LEN],
			   const uint8_t ip[DROCE_IPV6_ADDR_LEN])
{
	memcpy(group, solicited_node_prefix, sizeof(solicited_node_prefix));
	memcpy(group + 13, ip + 13, 3);
}

static bool is_solicited_node(const uint8_t ip[DROCE_IPV6_ADDR_LEN])
{
	return memcmp(ip, solicited_node_prefix, sizeof(solicited_node_prefix)) == 0;
}

static bool is_multicast(const uint8_t ip[DROCE_IPV6_ADDR_LEN])
{
	return ip[0] == 0xff;
}

static uint64_t csum_add(uint64_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8; /* RFC 1071: pad the odd byte with zero */
	return sum;
}

uint16_t droce_icmp6_csum(const uint8_t src[DROCE_IPV6_ADDR_LEN],
			  const uint8_t dst[DROCE_IPV6_ADDR_LEN], const void *msg, size_t len)
{
	uint64_t sum = 0;

	/* pseudo-header, RFC 8200 8.1: source, destination, 32-bit length, 3 zeros, next header */
	sum = csum_add(sum, src, DROCE_IPV6_ADDR_LEN);
	sum = csum_add(sum, dst, DROCE_IPV6_ADDR_LEN);
	sum += (uint32_t)len >> 16;
	sum += (uint32_t)len & 0xffff;
	sum += DROCE_IPPROTO_ICMPV6;
	sum = csum_add(sum, msg, len);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htobe16((uint16_t)~sum);
}

/*
 * Options (RFC 4861 4.6, 7.1.1, 7.1.2): each at least one 8-byte unit and
 * inside the message, else the message is dropped (as Linux does). The
 * link-layer option of the message's kind (SLLA in an NS, TLLA in an NA) is
 * one unit on Ethernet (RFC 2464 6) and the first one counts; the rest, like
 * the DAD nonce (RFC 7527), are skipped.
 */
static enum droce_neigh_status nd_options(const uint8_t *opt, size_t len, uint8_t lla_type,
					  struct droce_neigh_msg *msg)
{
	size_t off = 0;

	while (off < len) {
		size_t olen;

		if (len - off < 2)
			return DROCE_NEIGH_ND_BAD_OPTION;
		olen = (size_t)opt[off + 1] * DROCE_ND_OPT_UNIT;
		if (olen == 0 || olen > len - off)
			return DROCE_NEIGH_ND_BAD_OPTION;
		if (opt[off] == lla_type) {
			const struct droce_nd_opt_lla *lla = (const void *)(opt + off);

			if (olen != sizeof(*lla))
				return DROCE_NEIGH_ND_BAD_OPTION;
			if (!neigh_mac_is_unicast(lla->mac))
				return DROCE_NEIGH_BAD_MAC;
			if (!msg->has_lladdr) {
				memcpy(msg->lladdr, lla->mac, DROCE_ETHER_ADDR_LEN);
				msg->has_lladdr = true;
			}
		}
		off += olen;
	}
	return DROCE_NEIGH_OK;
}

/* Source and destination rules of RFC 4861 7.1.1, 7.1.2 and RFC 4291 2.5.5.2, 2.7. */
static enum droce_neigh_status nd_addresses(const struct droce_neigh_msg *msg)
{
	if (is_multicast(msg->src_ip) || droce_neigh_ip_is_ipv4(msg->src_ip) ||
	    droce_neigh_ip_is_ipv4(msg->dst_ip))
		return DROCE_NEIGH_ND_BAD_ADDR;
	if (msg->type == DROCE_NEIGH_MSG_NS) {
		/* DAD (RFC 4862 5.4.2): from :: to a solicited-node group, without SLLA */
		if (neigh_ip_is_unspecified(msg->src_ip) &&
		    (!is_solicited_node(msg->dst_ip) || msg->has_lladdr))
			return DROCE_NEIGH_ND_BAD_ADDR;
		return DROCE_NEIGH_OK;
	}
	/* an NA comes from an address of the advertiser (RFC 4861 7.2.4) */
	if (neigh_ip_is_unspecified(msg->src_ip))
		return DROCE_NEIGH_ND_BAD_ADDR;
	if (is_multicast(msg->dst_ip) && (msg->na_flags & DROCE_ND_NA_SOLICITED))
		return DROCE_NEIGH_ND_BAD_SOLICITED;
	return DROCE_NEIGH_OK;
}

enum droce_neigh_status neigh_nd_parse(const uint8_t *p, size_t len, struct droce_neigh_msg *msg)
{
	const struct droce_ipv6_hdr *ip6 = (const struct droce_ipv6_hdr *)p;
	const struct droce_nd_msg *nd;
	enum droce_neigh_status s;
	size_t icmp_len;
	uint8_t type;

	if (len < sizeof(*ip6))
		return DROCE_NEIGH_IP6_TRUNC;
	if (droce_ipv6_version(ip6) != 6)
		return DROCE_NEIGH_IP6_BAD_VERSION;
	/* ND needs no extension header: anything else is for another handler */
	if (ip6->next_hdr != DROCE_IPPROTO_ICMPV6)
		return DROCE_NEIGH_NOT_NEIGH;
	icmp_len = droce_ipv6_payload_len(ip6);
	if (icmp_len > len - sizeof(*ip6))
		return DROCE_NEIGH_IP6_BAD_LEN;
	if (icmp_len == 0)
		return DROCE_NEIGH_NOT_NEIGH;
	type = p[sizeof(*ip6)];
	if (type != DROCE_ICMPV6_ND_NS && type != DROCE_ICMPV6_ND_NA)
		return DROCE_NEIGH_NOT_NEIGH;
	/* RFC 4861 7.1.1 (NS) and 7.1.2 (NA), one reason each */
	if (icmp_len < sizeof(*nd))
		return DROCE_NEIGH_ND_TRUNC;
	nd = (const struct droce_nd_msg *)(p + sizeof(*ip6));
	if (ip6->hop_limit != DROCE_ND_HOP_LIMIT)
		return DROCE_NEIGH_ND_BAD_HOP_LIMIT;
	if (nd->icmp.code != 0)
		return DROCE_NEIGH_ND_BAD_CODE;
	if (droce_icmp6_csum(ip6->src, ip6->dst, nd, icmp_len) != 0)
		return DROCE_NEIGH_ND_BAD_CSUM;
	if (is_multicast(nd->target) || droce_neigh_ip_is_ipv4(nd->target))
		return DROCE_NEIGH_ND_BAD_TARGET;
	msg->type = type == DROCE_ICMPV6_ND_NS ? DROCE_NEIGH_MSG_NS : DROCE_NEIGH_MSG_NA;
	s = nd_options((const uint8_t *)(nd + 1), icmp_len - sizeof(*nd),
		       type == DROCE_ICMPV6_ND_NS ? DROCE_ND_OPT_SLLA : DROCE_ND_OPT_TLLA, msg);
	if (s != DROCE_NEIGH_OK)
		return s;
	memcpy(msg->src_ip, ip6->src, DROCE_IPV6_ADDR_LEN);
	memcpy(msg->dst_ip, ip6->dst, DROCE_IPV6_ADDR_LEN);
	memcpy(msg->target, nd->target, DROCE_IPV6_ADDR_LEN);
	if (type == DROCE_ICMPV6_ND_NA)
		msg->na_flags = droce_nd_flags(nd) &
				(DROCE_ND_NA_ROUTER | DROCE_ND_NA_SOLICITED | DROCE_ND_NA_OVERRIDE);
	return nd_addresses(msg);
}

/* Ethernet (+ 802.1Q), IPv6 and an NS or NA with one link-layer address option: ours. */
static void nd_put(const struct droce_neigh *n, struct droce_neigh_frame *out,
		   const uint8_t dst_mac[DROCE_ETHER_ADDR_LEN],
		   const uint8_t src[DROCE_IPV6_ADDR_LEN], const uint8_t dst[DROCE_IPV6_ADDR_LEN],
		   uint8_t type, uint32_t flags, const uint8_t target[DROCE_IPV6_ADDR_LEN])
{
	size_t off = neigh_l2_put(n, out->data, dst_mac, DROCE_ETHERTYPE_IPV6);
	struct droce_ipv6_hdr *ip6 = (struct droce_ipv6_hdr *)(out->data + off);
	struct droce_nd_msg *nd = (struct droce_nd_msg *)(ip6 + 1);
	struct droce_nd_opt_lla *lla = (struct droce_nd_opt_lla *)(nd + 1);
	const uint16_t icmp_len = sizeof(*nd) + sizeof(*lla);

	droce_ipv6_set_vtc_flow(ip6, 0, 0);
	ip6->payload_len = htobe16(icmp_len);
	ip6->next_hdr = DROCE_IPPROTO_ICMPV6;
	ip6->hop_limit = DROCE_ND_HOP_LIMIT;
	memcpy(ip6->src, src, DROCE_IPV6_ADDR_LEN);
	memcpy(ip6->dst, dst, DROCE_IPV6_ADDR_LEN);
	nd->icmp.type = type;
	nd->icmp.code = 0;
	nd->icmp.csum = 0;
	droce_nd_set_flags(nd, flags);
	memcpy(nd->target, target, DROCE_IPV6_ADDR_LEN);
	lla->type = type == DROCE_ICMPV6_ND_NS ? DROCE_ND_OPT_SLLA : DROCE_ND_OPT_TLLA;
	lla->len = 1;
	memcpy(lla->mac, n->cfg.mac, DROCE_ETHER_ADDR_LEN);
	nd->icmp.csum = droce_icmp6_csum(src, dst, nd, icmp_len);
	out->len = (uint16_t)(off + sizeof(*ip6) + icmp_len);
}

/*
 * RFC 4861 7.2.2: multicast to the target's solicited-node group, or unicast
 * to the cached MAC when probing (7.3.3); with our SLLA option either way.
 */
void neigh_nd_build_request(const struct droce_neigh *n, const struct droce_neigh_req *req,
			    const uint8_t src[DROCE_NEIGH_IP_LEN], struct droce_neigh_frame *out)
{
	uint8_t group[DROCE_IPV6_ADDR_LEN];
	uint8_t group_mac[DROCE_ETHER_ADDR_LEN] = {0x33, 0x33};

	if (req->unicast) {
		nd_put(n, out, req->mac, src, req->ip, DROCE_ICMPV6_ND_NS, 0, req->ip);
		return;
	}
	solicited_node(group, req->ip);
	memcpy(group_mac + 2, group + 12, 4);
	nd_put(n, out, group_mac, src, group, DROCE_ICMPV6_ND_NS, 0, req->ip);
}

/*
 * A solicitation (RFC 4861 7.2.3, 7.2.4). For one of our addresses: learn the
 * sender from its SLLA option (a new entry is STALE), and advertise from the
 * target address, S and O set, with our TLLA option, to the sender: at the MAC
 * its SLLA names, else at the frame's source MAC. A DAD probe (from ::) gets
 * S clear, to all nodes, and teaches nothing.
 */
static enum droce_neigh_status nd_solicit(struct droce_neigh *n, const struct droce_neigh_msg *msg,
					  uint64_t now, struct droce_neigh_frame *reply)
{
	if (!neigh_ip_is_own(n, msg->target))
		return DROCE_NEIGH_OK;
	if (neigh_ip_is_unspecified(msg->src_ip)) {
		nd_put(n, reply, all_nodes_mac, msg->target, all_nodes, DROCE_ICMPV6_ND_NA,
		       DROCE_ND_NA_OVERRIDE, msg->target);
		return DROCE_NEIGH_REPLY;
	}
	if (neigh_ip_is_own(n, msg->src_ip))
		return DROCE_NEIGH_ADDR_CONFLICT;
	if (msg->has_lladdr)
		neigh_learn_request(n, msg->src_ip, msg->lladdr, now);
	nd_put(n, reply, msg->has_lladdr ? msg->lladdr : msg->eth_src, msg->target, msg->src_ip,
	       DROCE_ICMPV6_ND_NA, DROCE_ND_NA_SOLICITED | DROCE_ND_NA_OVERRIDE, msg->target);
	return DROCE_NEIGH_REPLY;
}

/* RFC 4861 7.2.5 on an existing, learned entry; true if the table changed. */
static bool nd_advert_update(struct droce_neigh *n, struct neigh_entry *e,
			     const struct droce_neigh_msg *msg, uint64_t now)
{
	bool solicited = msg->na_flags & DROCE_ND_NA_SOLICITED;
	bool override = msg->na_flags & DROCE_ND_NA_OVERRIDE;
	bool changed;

	if (e->state == DROCE_NEIGH_INCOMPLETE || e->state == DROCE_NEIGH_FAILED) {
		/* without a TLLA the answer says nothing we can use */
		if (!msg->has_lladdr)
			return false;
		neigh_entry_set(n, e, msg->lladdr,
				solicited ? DROCE_NEIGH_REACHABLE : DROCE_NEIGH_STALE, now);
		return true;
	}
	changed = msg->has_lladdr && !neigh_mac_eq(msg->lladdr, e->mac);
	if (!override && changed) {
		/* keep the cached MAC; only a REACHABLE entry loses its confirmation */
		if (e->state != DROCE_NEIGH_REACHABLE)
			return false;
		neigh_entry_set(n, e, e->mac, DROCE_NEIGH_STALE, now);
		return true;
	}
	if (solicited) {
		neigh_entry_set(n, e, changed ? msg->lladdr : e->mac, DROCE_NEIGH_REACHABLE, now);
		return true;
	}
	if (changed) {
		neigh_entry_set(n, e, msg->lladdr, DROCE_NEIGH_STALE, now);
		return true;
	}
	return false;
}

/*
 * An advertisement. Only an entry that exists is updated: RFC 4861 7.2.5
 * discards advertisements with no entry, which keeps strangers out of the
 * table. An advertisement for one of our addresses is a conflict (RFC 4862 5.4.4).
 */
static enum droce_neigh_status nd_advert(struct droce_neigh *n, const struct droce_neigh_msg *msg,
					 uint64_t now)
{
	struct neigh_entry *e;

	if (neigh_ip_is_own(n, msg->target))
		return DROCE_NEIGH_ADDR_CONFLICT;
	e = neigh_find(n, msg->target);
	if (e == NULL)
		return DROCE_NEIGH_UNSOLICITED;
	if (e->state == DROCE_NEIGH_STATIC)
		return DROCE_NEIGH_OK;
	return nd_advert_update(n, e, msg, now) ? DROCE_NEIGH_LEARNED : DROCE_NEIGH_OK;
}

enum droce_neigh_status neigh_nd_process(struct droce_neigh *n, const struct droce_neigh_msg *msg,
					 uint64_t now, struct droce_neigh_frame *reply)
{
	/* unicast to an address of someone else */
	if (!is_multicast(msg->dst_ip) && !neigh_ip_is_own(n, msg->dst_ip))
		return DROCE_NEIGH_OTHER_HOST;
	if (msg->type == DROCE_NEIGH_MSG_NS)
		return nd_solicit(n, msg, now, reply);
	return nd_advert(n, msg, now);
}
