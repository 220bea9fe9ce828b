/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to lib/port's neighbour code: the table layout and every prototype
 * shared between its files, grouped by the file that defines it.
 */
#ifndef NEIGH_PRIV_H
#define NEIGH_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "droce_neigh.h"

/* One slot of the open-addressing table; state DROCE_NEIGH_NONE marks a free slot. */
struct neigh_entry {
	uint8_t ip[DROCE_NEIGH_IP_LEN];
	uint8_t mac[DROCE_ETHER_ADDR_LEN];
	uint8_t state;  /* enum droce_neigh_state */
	uint8_t probes; /* requests sent in this INCOMPLETE or PROBE round */
	uint64_t last_request;
	uint64_t expires; /* timer: refresh (REACHABLE), next request (INCOMPLETE, PROBE) */
	uint64_t updated;
};

#define NEIGH_NEVER UINT64_MAX

struct droce_neigh {
	struct droce_neigh_cfg cfg;
	uint32_t mask;     /* slots - 1; slots = the power of two >= 2 * capacity */
	uint32_t count;    /* entries in use, <= cfg.capacity */
	uint64_t next_due; /* no timer fires before this; NEIGH_NEVER when none runs */
	struct droce_neigh_stats stats;
	struct neigh_entry slot[];
};

/* neigh.c: addresses and the port's identity */
bool neigh_ip_is_unspecified(const uint8_t ip[DROCE_NEIGH_IP_LEN]);
/* A unicast address a station may own or be resolved (the -EINVAL rules of resolve). */
bool neigh_ip_is_station(const uint8_t ip[DROCE_NEIGH_IP_LEN]);
bool neigh_ip_is_own(const struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN]);
/* The address to send a request for @p target from; NULL when the port has none of its family. */
const uint8_t *neigh_src_for(const struct droce_neigh *n, const uint8_t target[DROCE_NEIGH_IP_LEN]);
bool neigh_mac_is_unicast(const uint8_t mac[DROCE_ETHER_ADDR_LEN]);
bool neigh_mac_eq(const uint8_t a[DROCE_ETHER_ADDR_LEN], const uint8_t b[DROCE_ETHER_ADDR_LEN]);

/* neigh_rx.c: Ethernet and 802.1Q */
/* Write the port's Ethernet (+ 802.1Q) header to @p buf; returns its length. */
size_t neigh_l2_put(const struct droce_neigh *n, uint8_t *buf,
		    const uint8_t dst[DROCE_ETHER_ADDR_LEN], uint16_t ethertype);

/* neigh_table.c: entries and their states */
struct neigh_entry *neigh_find(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN]);
/*
 * A new INCOMPLETE entry for @p ip (not in the table). When the table is full,
 * reclaims the oldest FAILED, then the oldest STALE entry if @p reclaim, else
 * counts table_full and returns NULL.
 */
struct neigh_entry *neigh_insert(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN],
				 uint64_t now, bool reclaim);
/* Give @p e @p mac and @p state (REACHABLE or STALE) at @p now, with the counters. */
void neigh_entry_set(struct droce_neigh *n, struct neigh_entry *e,
		     const uint8_t mac[DROCE_ETHER_ADDR_LEN], enum droce_neigh_state state,
		     uint64_t now);
/*
 * A request addressed to us names its sender's MAC (RFC 826 merge and add;
 * RFC 4861 7.2.3): make the entry STALE if it is new or its MAC changed.
 * Never reclaims: the sender chose the address. Returns true if the table changed.
 */
bool neigh_learn_request(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN],
			 const uint8_t mac[DROCE_ETHER_ADDR_LEN], uint64_t now);
/*
 * An announcement (gratuitous ARP): update an existing, non-static entry whose
 * MAC changed, to STALE. Returns true if the table changed.
 */
bool neigh_learn_announce(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN],
			  const uint8_t mac[DROCE_ETHER_ADDR_LEN], uint64_t now);

/* neigh_arp.c: ARP for IPv4 (RFC 826) */
enum droce_neigh_status neigh_arp_parse(const uint8_t *arp, size_t len,
					struct droce_neigh_msg *msg);
enum droce_neigh_status neigh_arp_process(struct droce_neigh *n, const struct droce_neigh_msg *msg,
					  uint64_t now, struct droce_neigh_frame *reply);
void neigh_arp_build_request(const struct droce_neigh *n, const struct droce_neigh_req *req,
			     const uint8_t src[DROCE_NEIGH_IP_LEN], struct droce_neigh_frame *out);

/* neigh_nd.c: IPv6 neighbour discovery (RFC 4861) */
enum droce_neigh_status neigh_nd_parse(const uint8_t *ip6, size_t len, struct droce_neigh_msg *msg);
enum droce_neigh_status neigh_nd_process(struct droce_neigh *n, const struct droce_neigh_msg *msg,
					 uint64_t now, struct droce_neigh_frame *reply);
void neigh_nd_build_request(const struct droce_neigh *n, const struct droce_neigh_req *req,
			    const uint8_t src[DROCE_NEIGH_IP_LEN], struct droce_neigh_frame *out);

#endif /* NEIGH_PRIV_H */
