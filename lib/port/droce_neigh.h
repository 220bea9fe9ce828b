/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Neighbour resolution for a droce port: ARP for IPv4 (RFC 826) and IPv6
 * neighbour discovery (RFC 4861), as pure functions over byte buffers.
 *
 * A droce port owns IPv4 and IPv6 addresses (its RoCEv2 GIDs) on an ethdev
 * with no kernel behind it. This table answers ARP requests and neighbour
 * solicitations for those addresses, learns and resolves its peers' MAC
 * addresses, and keeps static entries from configuration. It reads no clock:
 * every call that depends on time takes @p now, a monotonic time in
 * microseconds. It sends nothing itself: droce_neigh_rx() hands back the reply
 * to send, droce_neigh_pending() says which requests are due, and
 * droce_neigh_build_request() builds them. The ethdev glue moves the frames.
 *
 * Addresses are 16 bytes: IPv6 as is, IPv4 as IPv4-mapped IPv6 (::ffff:a.b.c.d),
 * the way RoCEv2 GIDs carry them (IBTA annex A17.4.5).
 *
 * A table belongs to one thread (the lcore that polls its port); nothing here
 * locks.
 *
 * Error convention (internal layers): 0 or a count on success, -errno on
 * failure; frame processing returns an enum droce_neigh_status, counted by
 * reason.
 */
#ifndef DROCE_NEIGH_H
#define DROCE_NEIGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce_neigh_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of an address in the table: IPv6, or IPv4-mapped IPv6. */
#define DROCE_NEIGH_IP_LEN DROCE_IPV6_ADDR_LEN
/** Most addresses a port may own. */
#define DROCE_NEIGH_ADDR_MAX 16
/** Largest table. */
#define DROCE_NEIGH_CAPACITY_MAX 65536u
/** Room for any frame this component builds (the largest, a tagged NA or NS, is 90 bytes). */
#define DROCE_NEIGH_FRAME_MAX 128

/* ---------------------------------------------------------------- addresses */

/** Write @p ipv4 as the IPv4-mapped IPv6 address ::ffff:a.b.c.d into @p ip. */
void droce_neigh_ip_from_ipv4(uint8_t ip[DROCE_NEIGH_IP_LEN], const uint8_t ipv4[4]);

/** True if @p ip is IPv4-mapped (::ffff:0:0/96), that is an IPv4 address. */
bool droce_neigh_ip_is_ipv4(const uint8_t ip[DROCE_NEIGH_IP_LEN]);

/* ------------------------------------------------------------ configuration */

/** RFC 4861 section 10 defaults, which Linux also uses for ARP. */
#define DROCE_NEIGH_REACHABLE_US_DEFAULT  30000000u /**< REACHABLE_TIME, 30 s */
#define DROCE_NEIGH_RETRANS_US_DEFAULT    1000000u  /**< RETRANS_TIMER, 1 s */
#define DROCE_NEIGH_MAX_MULTICAST_DEFAULT 3         /**< MAX_MULTICAST_SOLICIT */
#define DROCE_NEIGH_MAX_UNICAST_DEFAULT   3         /**< MAX_UNICAST_SOLICIT */
#define DROCE_NEIGH_CAPACITY_DEFAULT      256

struct droce_neigh_cfg {
	uint8_t mac[DROCE_ETHER_ADDR_LEN]; /**< the port's MAC: unicast, not zero */
	bool has_vlan;     /**< frames are sent tagged and only frames with this VID are taken */
	uint16_t vlan_tci; /**< PCP(3) DEI(1) VID(12), VID 1..4094, when has_vlan */
	unsigned int addr_count;
	/** The port's addresses: unicast IPv6, or IPv4-mapped unicast IPv4; no duplicates. */
	uint8_t addr[DROCE_NEIGH_ADDR_MAX][DROCE_NEIGH_IP_LEN];
	uint32_t capacity;     /**< entries, 1..DROCE_NEIGH_CAPACITY_MAX */
	uint64_t reachable_us; /**< a confirmation keeps an entry REACHABLE this long */
	uint64_t retrans_us;   /**< time between two requests for one address */
	uint8_t max_multicast; /**< broadcast/multicast requests before resolution fails, >= 1 */
	uint8_t max_unicast;   /**< unicast probes of an entry in PROBE before it fails, >= 1 */
};

/** Fill @p cfg with the defaults above, no address, no VLAN and a zero MAC to set. */
void droce_neigh_cfg_init(struct droce_neigh_cfg *cfg);

/** Opaque neighbour table of one port. */
struct droce_neigh;

/**
 * Allocate a table for a port.
 *
 * @return 0 and *out set, or
 *   -EINVAL: NULL argument; MAC zero or group; VID 0 or 4095 with has_vlan; more than
 *            DROCE_NEIGH_ADDR_MAX addresses, or one that is not a station address (see
 *            droce_neigh_resolve()) or is listed twice; capacity 0 or above
 *            DROCE_NEIGH_CAPACITY_MAX; a zero time or retry count.
 *   -ENOMEM: no memory.
 */
int droce_neigh_create(const struct droce_neigh_cfg *cfg, struct droce_neigh **out);

/** Free a table (NULL is allowed). */
void droce_neigh_free(struct droce_neigh *n);

/* ------------------------------------------------------------------ entries */

/**
 * Entry states, after RFC 4861 7.3.2 (DELAY is folded into PROBE: droce has no
 * upper-layer reachability hints yet) plus FAILED and STATIC.
 */
enum droce_neigh_state {
	DROCE_NEIGH_NONE = 0,   /**< no entry */
	DROCE_NEIGH_INCOMPLETE, /**< resolving: broadcast/multicast requests, no MAC yet */
	DROCE_NEIGH_REACHABLE,  /**< MAC confirmed by an answer less than reachable_us ago */
	DROCE_NEIGH_STALE,      /**< MAC known but unconfirmed; usable; probed when next used */
	DROCE_NEIGH_PROBE,      /**< MAC in use, being confirmed by unicast requests */
	DROCE_NEIGH_FAILED,     /**< no answer to the last requests; reclaimed first */
	DROCE_NEIGH_STATIC,     /**< from configuration; never changed by the wire, never expires */
	DROCE_NEIGH_STATE_COUNT,
};

/** State names for counters and traces. */
extern const char *const droce_neigh_state_name[DROCE_NEIGH_STATE_COUNT];

/** A copy of one entry. */
struct droce_neigh_info {
	uint8_t ip[DROCE_NEIGH_IP_LEN];
	uint8_t mac[DROCE_ETHER_ADDR_LEN]; /**< zero while INCOMPLETE */
	enum droce_neigh_state state;
	uint8_t probes;        /**< requests sent in the current INCOMPLETE or PROBE round */
	uint64_t last_request; /**< when the last request was handed out (0: none yet) */
	/**
	 * When the entry's timer fires: REACHABLE turns STALE (the refresh time);
	 * INCOMPLETE/PROBE send the next request or fail; UINT64_MAX when no timer runs.
	 */
	uint64_t expires;
	uint64_t updated; /**< last change of MAC or state, or last confirmation */
};

/**
 * Copy the entry for @p ip, whatever its state; changes nothing.
 *
 * @return 0, or -EINVAL (NULL argument), -ENOENT (no entry).
 */
int droce_neigh_lookup(const struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN],
		       struct droce_neigh_info *info);

/**
 * The MAC to send to @p ip, starting resolution when it is unknown.
 *
 * No entry: an INCOMPLETE entry is made and its first request is due at once
 * (droce_neigh_pending()). STALE: the MAC is returned and the entry moves to
 * PROBE (RFC 4861 7.3.3). FAILED: resolution restarts once retrans_us has passed
 * since the failure, so that repeated calls cannot flood the link. Call it once,
 * then watch the entry with droce_neigh_lookup() (or call it again) until it
 * leaves INCOMPLETE.
 *
 * @return 0 and @p mac set (REACHABLE, STALE, PROBE, STATIC), or
 *   -EINVAL: NULL argument; @p ip not a station address (IPv6 ::, ::1, ff00::/8;
 *            IPv4 0.0.0.0/8, 127.0.0.0/8, 224.0.0.0/3: multicast, reserved, broadcast),
 *            or one of the port's own addresses.
 *   -EADDRNOTAVAIL: the port has no address of @p ip's family to ask from.
 *   -EAGAIN: resolution is under way (INCOMPLETE).
 *   -EHOSTUNREACH: resolution failed less than retrans_us ago (FAILED).
 *   -ENOSPC: the table is full of entries that may not be reclaimed (INCOMPLETE,
 *            REACHABLE, PROBE, STATIC).
 */
int droce_neigh_resolve(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN], uint64_t now,
			uint8_t mac[DROCE_ETHER_ADDR_LEN]);

/**
 * Add or replace a static entry: @p ip always resolves to @p mac, whatever the
 * wire says, until droce_neigh_delete().
 *
 * @return 0, or
 *   -EINVAL: NULL argument, @p ip as refused by droce_neigh_resolve(), @p mac zero or group.
 *   -ENOSPC: no free or reclaimable entry.
 */
int droce_neigh_add_static(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN],
			   const uint8_t mac[DROCE_ETHER_ADDR_LEN], uint64_t now);

/**
 * Remove the entry for @p ip, static or learned.
 *
 * @return 0, or -EINVAL (NULL argument), -ENOENT (no entry).
 */
int droce_neigh_delete(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN]);

/* ----------------------------------------------------------------- requests */

/** A request that must go out now. */
struct droce_neigh_req {
	uint8_t ip[DROCE_NEIGH_IP_LEN];    /**< address to resolve or confirm */
	bool unicast;                      /**< PROBE: ask the cached MAC only */
	uint8_t mac[DROCE_ETHER_ADDR_LEN]; /**< the cached MAC when unicast */
};

/**
 * Run the timers and list the requests due at @p now, up to @p max. Each listed
 * request counts as sent (the glue must send it: droce_neigh_build_request()).
 * Requests beyond @p max stay due for the next call. Also moves REACHABLE
 * entries past their refresh time to STALE and entries out of requests to FAILED.
 * Cheap when nothing is due: call it on every loop of the port.
 *
 * @return the number of requests written to @p reqs (0 when @p n or @p reqs is NULL).
 */
unsigned int droce_neigh_pending(struct droce_neigh *n, uint64_t now, struct droce_neigh_req *reqs,
				 unsigned int max);

/** A frame built by this component. */
struct droce_neigh_frame {
	uint16_t len; /**< bytes in data; the NIC pads it to 60 (IEEE 802.3 minimum) */
	uint8_t data[DROCE_NEIGH_FRAME_MAX];
};

/**
 * Build the request @p req: an ARP request (IPv4) or a neighbour solicitation
 * (IPv6), broadcast / to the solicited-node group, or unicast when req->unicast.
 *
 * @return 0 and @p out filled, or
 *   -EINVAL: NULL argument, or a request no droce_neigh_resolve() could make.
 *   -EADDRNOTAVAIL: the port has no address of that family.
 */
int droce_neigh_build_request(const struct droce_neigh *n, const struct droce_neigh_req *req,
			      struct droce_neigh_frame *out);

/* ------------------------------------------------------------------ receive */

/**
 * What became of a received frame. OK, REPLY and LEARNED are valid messages;
 * NOT_NEIGH, OTHER_VLAN, OTHER_HOST and OWN_FRAME are not for this table; the
 * rest are malformed or hostile messages, dropped and counted by reason.
 */
enum droce_neigh_status {
	DROCE_NEIGH_OK = 0,        /**< a valid message needing nothing (other target...) */
	DROCE_NEIGH_REPLY,         /**< a request for one of our addresses: send the reply */
	DROCE_NEIGH_LEARNED,       /**< an answer or announcement changed the table */
	DROCE_NEIGH_UNSOLICITED,   /**< an answer for an address we did not ask for: not learned */
	DROCE_NEIGH_ADDR_CONFLICT, /**< another station claims one of our addresses */
	DROCE_NEIGH_NOT_NEIGH,     /**< neither ARP nor an ICMPv6 NS/NA: another handler's */
	DROCE_NEIGH_OTHER_VLAN,    /**< another VLAN, or tagged / untagged against the port */
	DROCE_NEIGH_OTHER_HOST,    /**< unicast to another MAC, or to an IPv6 address not ours */
	DROCE_NEIGH_OWN_FRAME,     /**< sent from our own MAC: a loop */
	DROCE_NEIGH_TRUNC_L2,      /**< shorter than its Ethernet and 802.1Q headers */
	DROCE_NEIGH_BAD_MAC,       /**< a source, sender or option MAC that is group or zero */
	DROCE_NEIGH_ARP_TRUNC,     /**< shorter than 28 bytes of ARP */
	DROCE_NEIGH_ARP_BAD_HTYPE, /**< hardware type not Ethernet (1) */
	DROCE_NEIGH_ARP_BAD_PTYPE, /**< protocol type not IPv4 (0x0800) */
	DROCE_NEIGH_ARP_BAD_LEN,   /**< hardware/protocol address lengths not 6/4 */
	DROCE_NEIGH_ARP_BAD_OP,    /**< operation neither request nor reply */
	/** Sender IP not a station address (0.0.0.0 is allowed in a request: an RFC 5227
	 *  probe), or target IP loopback, multicast or broadcast. */
	DROCE_NEIGH_ARP_BAD_IP,
	DROCE_NEIGH_IP6_TRUNC,        /**< shorter than an IPv6 header */
	DROCE_NEIGH_IP6_BAD_VERSION,  /**< IPv6 ethertype, other IP version */
	DROCE_NEIGH_IP6_BAD_LEN,      /**< IPv6 payload length beyond the frame */
	DROCE_NEIGH_ND_TRUNC,         /**< NS/NA shorter than 24 bytes (RFC 4861 7.1.1, 7.1.2) */
	DROCE_NEIGH_ND_BAD_HOP_LIMIT, /**< hop limit not 255: came through a router */
	DROCE_NEIGH_ND_BAD_CODE,      /**< ICMPv6 code not 0 */
	DROCE_NEIGH_ND_BAD_CSUM,      /**< ICMPv6 checksum wrong */
	DROCE_NEIGH_ND_BAD_TARGET,    /**< target multicast or IPv4-mapped */
	DROCE_NEIGH_ND_BAD_OPTION,    /**< option of length 0, past the end, or a bad-sized LLA */
	/** Source multicast or IPv4-mapped, destination IPv4-mapped, NA from ::, or NS from ::
	 *  not to a solicited-node group or with a source link-layer option (RFC 4861 7.1). */
	DROCE_NEIGH_ND_BAD_ADDR,
	DROCE_NEIGH_ND_BAD_SOLICITED, /**< NA to a multicast destination with S set */
	DROCE_NEIGH_STATUS_COUNT,
};

/** Status names for counters. */
extern const char *const droce_neigh_status_name[DROCE_NEIGH_STATUS_COUNT];

/** What a valid message says, as droce_neigh_parse() decodes it. */
enum droce_neigh_msg_type {
	DROCE_NEIGH_MSG_ARP_REQUEST,
	DROCE_NEIGH_MSG_ARP_REPLY,
	DROCE_NEIGH_MSG_NS,
	DROCE_NEIGH_MSG_NA,
};

struct droce_neigh_msg {
	enum droce_neigh_msg_type type;
	bool vlan;         /**< the frame carried an 802.1Q tag */
	uint16_t vlan_tci; /**< its TCI */
	uint8_t eth_dst[DROCE_ETHER_ADDR_LEN];
	uint8_t eth_src[DROCE_ETHER_ADDR_LEN];
	/** ARP: sender protocol address (IPv4-mapped); ND: IPv6 source (may be ::). */
	uint8_t src_ip[DROCE_NEIGH_IP_LEN];
	/** ARP: target protocol address (IPv4-mapped); ND: IPv6 destination. */
	uint8_t dst_ip[DROCE_NEIGH_IP_LEN];
	/** ARP: the target protocol address again; ND: the target address. */
	uint8_t target[DROCE_NEIGH_IP_LEN];
	bool has_lladdr; /**< ARP: always; NS: SLLA option present; NA: TLLA option present */
	/** ARP: sender hardware address; NS: source, NA: target link-layer address. */
	uint8_t lladdr[DROCE_ETHER_ADDR_LEN];
	uint8_t arp_tha[DROCE_ETHER_ADDR_LEN]; /**< ARP target hardware address */
	uint32_t na_flags;                     /**< NA: DROCE_ND_NA_* bits; 0 otherwise */
};

/**
 * Decode and check one frame, with no table: Ethernet (one optional 802.1Q tag),
 * then ARP (RFC 826) or IPv6 + ICMPv6 NS/NA, checked as RFC 4861 7.1.1 and
 * 7.1.2 say (hop limit 255, code 0, ICMPv6 length >= 24 from the IPv6 payload
 * length, checksum, target not multicast, options of non-zero length, the DAD
 * rules, the solicited flag of multicast NAs). Never reads past @p len.
 *
 * @return DROCE_NEIGH_OK and @p msg filled, DROCE_NEIGH_NOT_NEIGH, or the drop
 *   reason (DROCE_NEIGH_TRUNC_L2 to DROCE_NEIGH_ND_BAD_SOLICITED).
 */
enum droce_neigh_status droce_neigh_parse(const void *frame, size_t len,
					  struct droce_neigh_msg *msg);

/**
 * Process one received frame at @p now: answer requests for the port's
 * addresses (the reply is left in @p reply, reply->len 0 otherwise), learn
 * from answers and requests as doc/neighbours.md describes, count the outcome.
 * Never reads past @p len.
 *
 * @return the status, also counted in droce_neigh_stats.rx (a NULL @p n,
 *   @p frame or @p reply gives DROCE_NEIGH_NOT_NEIGH, uncounted).
 */
enum droce_neigh_status droce_neigh_rx(struct droce_neigh *n, const void *frame, size_t len,
				       uint64_t now, struct droce_neigh_frame *reply);

/* ----------------------------------------------------------------- counters */

struct droce_neigh_stats {
	uint64_t rx[DROCE_NEIGH_STATUS_COUNT]; /**< frames by status */
	uint64_t requests;                     /**< requests handed out by droce_neigh_pending() */
	uint64_t learned;                      /**< entries made or given a new MAC from the wire */
	uint64_t confirmed;                    /**< entries made REACHABLE by an answer */
	uint64_t failed;     /**< resolutions and probes that ran out of requests */
	uint64_t table_full; /**< entries that could not be made: no free or reclaimable slot */
	uint64_t reclaimed;  /**< FAILED or STALE entries reclaimed for a new one */
	uint64_t entries;    /**< entries now in the table */
};

/** Copy the counters of @p n (zeros when @p n is NULL). */
void droce_neigh_stats_get(const struct droce_neigh *n, struct droce_neigh_stats *stats);

/* ----------------------------------------------------------------- checksum */

/**
 * ICMPv6 checksum (RFC 4443 2.3, RFC 8200 8.1): the ones' complement of the
 * ones' complement sum of the pseudo-header (@p src, @p dst, the 32-bit length
 * @p len, next header 58) and the @p len bytes of @p msg, as the big-endian
 * value to store. Over a message whose checksum field is zero it gives the
 * value to write there; over a received message it gives 0 when the checksum
 * is right.
 */
uint16_t droce_icmp6_csum(const uint8_t src[DROCE_IPV6_ADDR_LEN],
			  const uint8_t dst[DROCE_IPV6_ADDR_LEN], const void *msg, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_NEIGH_H */
