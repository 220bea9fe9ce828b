/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Neighbour protocol headers: ARP over Ethernet for IPv4 (RFC 826) and the
 * ICMPv6 neighbour solicitation and advertisement of IPv6 neighbour discovery
 * (RFC 4861 section 4.3, 4.4, 4.6.1).
 *
 * Same rules as droce_wire_hdr.h (whose Ethernet, 802.1Q and IPv6 headers
 * these follow): big-endian fields, packed structs, no bitfields, multi-byte
 * fields read and written only through the accessors below.
 */
#ifndef DROCE_NEIGH_WIRE_H
#define DROCE_NEIGH_WIRE_H

#include <assert.h>
#include <endian.h>
#include <stdint.h>

#include "droce_wire_hdr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ ARP */

#define DROCE_ARP_HTYPE_ETHER 1 /**< ar$hrd for Ethernet (RFC 826, IANA) */
#define DROCE_ARP_OP_REQUEST  1
#define DROCE_ARP_OP_REPLY    2
#define DROCE_IPV4_ADDR_LEN   4

/** ARP packet for IPv4 over Ethernet (RFC 826: hardware and protocol lengths 6 and 4). */
struct droce_arp_hdr {
	uint16_t htype;                    /**< ar$hrd: hardware address space */
	uint16_t ptype;                    /**< ar$pro: protocol, an ethertype */
	uint8_t hlen;                      /**< ar$hln: hardware address length */
	uint8_t plen;                      /**< ar$pln: protocol address length */
	uint16_t op;                       /**< ar$op: request or reply */
	uint8_t sha[DROCE_ETHER_ADDR_LEN]; /**< sender hardware address */
	uint8_t spa[DROCE_IPV4_ADDR_LEN];  /**< sender protocol address */
	uint8_t tha[DROCE_ETHER_ADDR_LEN]; /**< target hardware address */
	uint8_t tpa[DROCE_IPV4_ADDR_LEN];  /**< target protocol address */
} DROCE_PACKED;
static_assert(sizeof(struct droce_arp_hdr) == 28, "ARP for IPv4 over Ethernet is 28 bytes");

static inline uint16_t droce_arp_htype(const struct droce_arp_hdr *a)
{
	return be16toh(a->htype);
}
static inline void droce_arp_set_htype(struct droce_arp_hdr *a, uint16_t v)
{
	a->htype = htobe16(v);
}
static inline uint16_t droce_arp_ptype(const struct droce_arp_hdr *a)
{
	return be16toh(a->ptype);
}
static inline void droce_arp_set_ptype(struct droce_arp_hdr *a, uint16_t v)
{
	a->ptype = htobe16(v);
}
static inline uint16_t droce_arp_op(const struct droce_arp_hdr *a)
{
	return be16toh(a->op);
}
static inline void droce_arp_set_op(struct droce_arp_hdr *a, uint16_t v)
{
	a->op = htobe16(v);
}

/* ------------------------------------------------------ ICMPv6 and ND */

#define DROCE_IPPROTO_ICMPV6 58
#define DROCE_ICMPV6_ND_NS   135 /**< neighbour solicitation, RFC 4861 4.3 */
#define DROCE_ICMPV6_ND_NA   136 /**< neighbour advertisement, RFC 4861 4.4 */
/** Every ND message is sent with, and must arrive with, this hop limit (RFC 4861 7.1). */
#define DROCE_ND_HOP_LIMIT  255
#define DROCE_IPV6_ADDR_LEN 16

struct droce_icmp6_hdr {
	uint8_t type;
	uint8_t code;
	uint16_t csum; /**< kept as on the wire: see droce_icmp6_csum() */
} DROCE_PACKED;
static_assert(sizeof(struct droce_icmp6_hdr) == 4, "ICMPv6 header is 4 bytes");

/** NA flags in the 32-bit word after the ICMPv6 header (RFC 4861 4.4); reserved in an NS. */
#define DROCE_ND_NA_ROUTER    0x80000000u
#define DROCE_ND_NA_SOLICITED 0x40000000u
#define DROCE_ND_NA_OVERRIDE  0x20000000u

/** Neighbour solicitation or advertisement up to its options: both have this layout. */
struct droce_nd_msg {
	struct droce_icmp6_hdr icmp;
	uint32_t flags; /**< NA: R S O + 29 reserved bits; NS: 32 reserved bits */
	uint8_t target[DROCE_IPV6_ADDR_LEN];
} DROCE_PACKED;
static_assert(sizeof(struct droce_nd_msg) == 24, "NS and NA are 24 bytes before options");

static inline uint32_t droce_nd_flags(const struct droce_nd_msg *m)
{
	return be32toh(m->flags);
}
static inline void droce_nd_set_flags(struct droce_nd_msg *m, uint32_t flags)
{
	m->flags = htobe32(flags);
}

#define DROCE_ND_OPT_SLLA 1 /**< source link-layer address (RFC 4861 4.6.1) */
#define DROCE_ND_OPT_TLLA 2 /**< target link-layer address */
/** Option lengths count units of 8 bytes (RFC 4861 4.6). */
#define DROCE_ND_OPT_UNIT 8

/** Link-layer address option for Ethernet: one 8-byte unit (RFC 2464 section 6). */
struct droce_nd_opt_lla {
	uint8_t type;
	uint8_t len; /**< in 8-byte units: 1 */
	uint8_t mac[DROCE_ETHER_ADDR_LEN];
} DROCE_PACKED;
static_assert(sizeof(struct droce_nd_opt_lla) == 8, "Ethernet link-layer option is 8 bytes");

#ifdef __cplusplus
}
#endif

#endif /* DROCE_NEIGH_WIRE_H */
