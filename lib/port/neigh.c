/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour table's life cycle and the port's identity: configuration,
 * creation, addresses (which are ours, which to ask from), counters and names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "neigh_priv.h"

const char *const droce_neigh_state_name[DROCE_NEIGH_STATE_COUNT] = {
	[DROCE_NEIGH_NONE] = "none",           [DROCE_NEIGH_INCOMPLETE] = "incomplete",
	[DROCE_NEIGH_REACHABLE] = "reachable", [DROCE_NEIGH_STALE] = "stale",
	[DROCE_NEIGH_PROBE] = "probe",         [DROCE_NEIGH_FAILED] = "failed",
	[DROCE_NEIGH_STATIC] = "static",
};

const char *const droce_neigh_status_name[DROCE_NEIGH_STATUS_COUNT] = {
	[DROCE_NEIGH_OK] = "ok",
	[DROCE_NEIGH_REPLY] = "reply",
	[DROCE_NEIGH_LEARNED] = "learned",
	[DROCE_NEIGH_UNSOLICITED] = "unsolicited",
	[DROCE_NEIGH_ADDR_CONFLICT] = "addr_conflict",
	[DROCE_NEIGH_NOT_NEIGH] = "not_neigh",
	[DROCE_NEIGH_OTHER_VLAN] = "other_vlan",
	[DROCE_NEIGH_OTHER_HOST] = "other_host",
	[DROCE_NEIGH_OWN_FRAME] = "own_frame",
	[DROCE_NEIGH_TRUNC_L2] = "trunc_l2",
	[DROCE_NEIGH_BAD_MAC] = "bad_mac",
	[DROCE_NEIGH_ARP_TRUNC] = "arp_trunc",
	[DROCE_NEIGH_ARP_BAD_HTYPE] = "arp_bad_htype",
	[DROCE_NEIGH_ARP_BAD_PTYPE] = "arp_bad_ptype",
	[DROCE_NEIGH_ARP_BAD_LEN] = "arp_bad_len",
	[DROCE_NEIGH_ARP_BAD_OP] = "arp_bad_op",
	[DROCE_NEIGH_ARP_BAD_IP] = "arp_bad_ip",
	[DROCE_NEIGH_IP6_TRUNC] = "ip6_trunc",
	[DROCE_NEIGH_IP6_BAD_VERSION] = "ip6_bad_version",
	[DROCE_NEIGH_IP6_BAD_LEN] = "ip6_bad_len",
	[DROCE_NEIGH_ND_TRUNC] = "nd_trunc",
	[DROCE_NEIGH_ND_BAD_HOP_LIMIT] = "nd_bad_hop_limit",
	[DROCE_NEIGH_ND_BAD_CODE] = "nd_bad_code",
	[DROCE_NEIGH_ND_BAD_CSUM] = "nd_bad_csum",
	[DROCE_NEIGH_ND_BAD_TARGET] = "nd_bad_target",
	[DROCE_NEIGH_ND_BAD_OPTION] = "nd_bad_option",
	[DROCE_NEIGH_ND_BAD_ADDR] = "nd_bad_addr",
	[DROCE_NEIGH_ND_BAD_SOLICITED] = "nd_bad_solicited",
};

/* ---- addresses */

/* ::ffff:0:0/96, RFC 4291 2.5.5.2 */
static const uint8_t ipv4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

void droce_neigh_ip_from_ipv4(uint8_t ip[DROCE_NEIGH_IP_LEN], const uint8_t ipv4[4])
{
	droce_ipv4_mapped(ipv4, ip);
}

bool droce_neigh_ip_is_ipv4(const uint8_t ip[DROCE_NEIGH_IP_LEN])
{
	return memcmp(ip, ipv4_mapped_prefix, sizeof(ipv4_mapped_prefix)) == 0;
}

bool neigh_ip_is_unspecified(const uint8_t ip[DROCE_NEIGH_IP_LEN])
{
	static const uint8_t zero[DROCE_NEIGH_IP_LEN];

	return memcmp(ip, zero, sizeof(zero)) == 0;
}

bool neigh_ip_is_station(const uint8_t ip[DROCE_NEIGH_IP_LEN])
{
	static const uint8_t loopback6[DROCE_NEIGH_IP_LEN] = {[15] = 1};

	if (droce_neigh_ip_is_ipv4(ip)) {
		uint8_t first = ip[12];

		/* 0/8 "this network", 127/8 loopback, 224/3 multicast, reserved, broadcast */
		return first != 0 && first != 127 && first < 224;
	}
	/* RFC 4291 2.5.2, 2.5.3, 2.7 */
	return ip[0] != 0xff && !neigh_ip_is_unspecified(ip) &&
	       memcmp(ip, loopback6, sizeof(loopback6)) != 0;
}

bool neigh_ip_is_own(const struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN])
{
	unsigned int i;

	for (i = 0; i < n->cfg.addr_count; i++)
		if (memcmp(n->cfg.addr[i], ip, DROCE_NEIGH_IP_LEN) == 0)
			return true;
	return false;
}

static unsigned int common_prefix_bits(const uint8_t *a, const uint8_t *b)
{
	unsigned int i, bits = 0;

	for (i = 0; i < DROCE_NEIGH_IP_LEN; i++) {
		uint8_t x = a[i] ^ b[i];

		if (x != 0)
			return bits + (unsigned int)__builtin_clz(x) - 24;
		bits += 8;
	}
	return bits;
}

static bool ip_is_link_local(const uint8_t ip[DROCE_NEIGH_IP_LEN])
{
	return ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80; /* fe80::/10 */
}

/*
 * RFC 4861 7.2.2 lets a solicitation come from any address of the interface.
 * IPv6: the link-local address when the port has one, as Linux does (it stays
 * valid whatever the prefixes); otherwise, and for IPv4, the address sharing
 * the longest prefix with the target; the first listed on a tie.
 */
const uint8_t *neigh_src_for(const struct droce_neigh *n, const uint8_t target[DROCE_NEIGH_IP_LEN])
{
	bool v4 = droce_neigh_ip_is_ipv4(target);
	const uint8_t *best = NULL;
	unsigned int i, best_bits = 0;

	for (i = 0; i < n->cfg.addr_count; i++) {
		const uint8_t *a = n->cfg.addr[i];
		unsigned int bits;

		if (droce_neigh_ip_is_ipv4(a) != v4)
			continue;
		if (!v4 && ip_is_link_local(a))
			return a;
		bits = common_prefix_bits(a, target);
		if (best == NULL || bits > best_bits) {
			best = a;
			best_bits = bits;
		}
	}
	return best;
}

bool neigh_mac_is_unicast(const uint8_t mac[DROCE_ETHER_ADDR_LEN])
{
	static const uint8_t zero[DROCE_ETHER_ADDR_LEN];

	return (mac[0] & 0x01) == 0 && memcmp(mac, zero, sizeof(zero)) != 0;
}

bool neigh_mac_eq(const uint8_t a[DROCE_ETHER_ADDR_LEN], const uint8_t b[DROCE_ETHER_ADDR_LEN])
{
	return memcmp(a, b, DROCE_ETHER_ADDR_LEN) == 0;
}

/* ---- configuration and life cycle */

void droce_neigh_cfg_init(struct droce_neigh_cfg *cfg)
{
	if (cfg == NULL)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->capacity = DROCE_NEIGH_CAPACITY_DEFAULT;
	cfg->reachable_us = DROCE_NEIGH_REACHABLE_US_DEFAULT;
	cfg->retrans_us = DROCE_NEIGH_RETRANS_US_DEFAULT;
	cfg->max_multicast = DROCE_NEIGH_MAX_MULTICAST_DEFAULT;
	cfg->max_unicast = DROCE_NEIGH_MAX_UNICAST_DEFAULT;
}

static int cfg_check(const struct droce_neigh_cfg *cfg)
{
	uint16_t vid = cfg->vlan_tci & 0x0fff;
	unsigned int i, j;

	if (!neigh_mac_is_unicast(cfg->mac))
		return -EINVAL;
	if (cfg->has_vlan && (vid == 0 || vid == 0x0fff))
		return -EINVAL;
	if (cfg->addr_count > DROCE_NEIGH_ADDR_MAX)
		return -EINVAL;
	for (i = 0; i < cfg->addr_count; i++) {
		if (!neigh_ip_is_station(cfg->addr[i]))
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (memcmp(cfg->addr[i], cfg->addr[j], DROCE_NEIGH_IP_LEN) == 0)
				return -EINVAL;
	}
	if (cfg->capacity == 0 || cfg->capacity > DROCE_NEIGH_CAPACITY_MAX)
		return -EINVAL;
	if (cfg->reachable_us == 0 || cfg->retrans_us == 0 || cfg->max_multicast == 0 ||
	    cfg->max_unicast == 0)
		return -EINVAL;
	return 0;
}

int droce_neigh_create(const struct droce_neigh_cfg *cfg, struct droce_neigh **out)
{
	struct droce_neigh *n;
	uint32_t slots = 1;
	int rc;

	if (cfg == NULL || out == NULL)
		return -EINVAL;
	rc = cfg_check(cfg);
	if (rc != 0)
		return rc;
	/* load factor <= 1/2 keeps linear probing short */
	while (slots < 2 * cfg->capacity)
		slots <<= 1;
	n = calloc(1, sizeof(*n) + (size_t)slots * sizeof(n->slot[0]));
	if (n == NULL)
		return -ENOMEM;
	n->cfg = *cfg;
	n->mask = slots - 1;
	n->next_due = NEIGH_NEVER;
	*out = n;
	return 0;
}

void droce_neigh_free(struct droce_neigh *n)
{
	free(n);
}

void droce_neigh_stats_get(const struct droce_neigh *n, struct droce_neigh_stats *stats)
{
	if (stats == NULL)
		return;
	if (n == NULL) {
		memset(stats, 0, sizeof(*stats));
		return;
	}
	*stats = n->stats;
	stats->entries = n->count;
}

int droce_neigh_build_request(const struct droce_neigh *n, const struct droce_neigh_req *req,
			      struct droce_neigh_frame *out)
{
	const uint8_t *src;

	if (n == NULL || req == NULL || out == NULL)
		return -EINVAL;
	if (!neigh_ip_is_station(req->ip) || neigh_ip_is_own(n, req->ip) ||
	    (req->unicast && !neigh_mac_is_unicast(req->mac)))
		return -EINVAL;
	src = neigh_src_for(n, req->ip);
	if (src == NULL)
		return -EADDRNOTAVAIL;
	if (droce_neigh_ip_is_ipv4(req->ip))
		neigh_arp_build_request(n, req, src, out);
	else
		neigh_nd_build_request(n, req, src, out);
	return 0;
}
