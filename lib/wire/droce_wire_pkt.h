/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Parsing a received frame into a compact packet descriptor, and building
 * complete frames from an address template and header field values.
 *
 * Error convention (lib/wire): functions return 0 or a positive length on
 * success and -errno on failure; the parser returns a droce_parse_status.
 */
#ifndef DROCE_WIRE_PKT_H
#define DROCE_WIRE_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "droce_wire_hdr.h"
#include "droce_wire_opcode.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Why a frame was not accepted. Everything but OK and NOT_ROCE is a malformed
 * RoCEv2 packet, dropped silently as IBTA 9.6 asks and counted by reason.
 */
enum droce_parse_status {
	DROCE_PARSE_OK = 0,
	DROCE_PARSE_NOT_ROCE,         /**< not IP/UDP to the RoCEv2 port: not ours */
	DROCE_PARSE_TRUNC_L2,         /**< shorter than its Ethernet/VLAN header */
	DROCE_PARSE_TRUNC_IP,         /**< shorter than its IP header */
	DROCE_PARSE_BAD_IP_VERSION,   /**< IP version does not match the ethertype */
	DROCE_PARSE_BAD_IP_HDR_LEN,   /**< IPv4 IHL below 5 */
	DROCE_PARSE_BAD_IP_LEN,       /**< IP length beyond the frame or below its headers */
	DROCE_PARSE_BAD_IP_CSUM,      /**< IPv4 header checksum wrong */
	DROCE_PARSE_IP_FRAGMENT,      /**< IPv4 fragment: RoCEv2 is never fragmented */
	DROCE_PARSE_TRUNC_UDP,        /**< no room for the UDP header */
	DROCE_PARSE_BAD_UDP_LEN,      /**< UDP length disagrees with the IP length */
	DROCE_PARSE_TRUNC_BTH,        /**< no room for BTH + ICRC */
	DROCE_PARSE_BAD_BTH_VERSION,  /**< TVer other than 0 (IBTA 9.2) */
	DROCE_PARSE_BAD_OPCODE,       /**< reserved or unsupported opcode (RD, XRC) */
	DROCE_PARSE_TRUNC_EXT_HDR,    /**< no room for the opcode's extended headers */
	DROCE_PARSE_BAD_PAD,          /**< pad count beyond the payload, or length not 4-aligned */
	DROCE_PARSE_BAD_PAYLOAD,      /**< payload on an opcode that carries none */
	DROCE_PARSE_PAYLOAD_TOO_LONG, /**< payload longer than the PMTU allows */
	DROCE_PARSE_BAD_ICRC,         /**< ICRC mismatch */
	DROCE_PARSE_STATUS_COUNT,
};

/** Counter names, also used by droce-pcap and the port counters. */
extern const char *const droce_parse_status_name[DROCE_PARSE_STATUS_COUNT];

struct droce_parse_cfg {
	uint16_t udp_port;    /**< destination port that means RoCEv2 (4791) */
	uint16_t max_payload; /**< largest payload a packet may carry: the PMTU */
	bool verify_icrc;     /**< false only where the caller checks it later */
	bool verify_ip_csum;  /**< false where the NIC already did */
};

/** Accept every PMTU up to 4096 and check everything. */
#define DROCE_PARSE_CFG_DEFAULT                                      \
	((struct droce_parse_cfg){.udp_port = DROCE_ROCEV2_UDP_PORT, \
				  .max_payload = 4096,               \
				  .verify_icrc = true,               \
				  .verify_ip_csum = true})

/** Packet descriptor flags. */
#define DROCE_PKT_IPV6 0x01
#define DROCE_PKT_VLAN 0x02

/**
 * Compact descriptor of a parsed packet: offsets are from the first byte of
 * the frame. Everything the transport decides on is here or one table lookup
 * away (droce_opcode_table[opcode]).
 */
struct droce_pkt {
	uint32_t mask;        /**< droce_opcode_table[opcode].mask */
	uint32_t qpn;         /**< BTH destination QP */
	uint32_t psn;         /**< BTH PSN */
	uint16_t l3_off;      /**< IP header */
	uint16_t bth_off;     /**< BTH; UDP header is 8 bytes before */
	uint16_t payload_off; /**< first payload byte */
	uint16_t payload_len; /**< payload bytes, without pad and ICRC */
	uint16_t icrc_off;    /**< the ICRC; the frame ends 4 bytes later */
	uint16_t vlan_tci;    /**< valid when DROCE_PKT_VLAN */
	uint8_t opcode;
	uint8_t pad;   /**< BTH pad count */
	uint8_t flags; /**< DROCE_PKT_* */
	uint8_t ip_hdr_len;
};
static_assert(sizeof(struct droce_pkt) <= 32, "descriptor stays in half a cache line");

/** Per-reason counters of a parser user (a port, a capture reader). */
struct droce_parse_stats {
	uint64_t count[DROCE_PARSE_STATUS_COUNT];
};

/** Longest header stack the parser reads: Eth + VLAN + IPv4 with options + UDP + BTH + AtomicETH.
 */
#define DROCE_PARSE_HDR_MAX 128

/**
 * Parse and validate the headers of a frame.
 * @param hdr        the first bytes of the frame, contiguous
 * @param hdr_len    how many bytes @p hdr holds (a segment may hold fewer than the frame)
 * @param frame_len  the whole frame's length
 * Reads at most min(hdr_len, DROCE_PARSE_HDR_MAX) bytes; the ICRC is not checked
 * (the caller chains it over the segments). A header that lies beyond @p hdr_len
 * but within @p frame_len is reported as truncated: callers give at least
 * min(frame_len, DROCE_PARSE_HDR_MAX) bytes.
 */
enum droce_parse_status droce_parse_hdrs(const uint8_t *hdr, size_t hdr_len, size_t frame_len,
					 const struct droce_parse_cfg *cfg, struct droce_pkt *pkt);

/** Parse a contiguous frame of @p len bytes, ICRC included when cfg->verify_icrc. */
enum droce_parse_status droce_parse(const uint8_t *frame, size_t len,
				    const struct droce_parse_cfg *cfg, struct droce_pkt *pkt);

/** Parse and count the result in @p stats. */
static inline enum droce_parse_status droce_parse_count(const uint8_t *frame, size_t len,
							const struct droce_parse_cfg *cfg,
							struct droce_pkt *pkt,
							struct droce_parse_stats *stats)
{
	enum droce_parse_status st = droce_parse(frame, len, cfg, pkt);

	stats->count[st]++;
	return st;
}

/** The ICRC of a parsed contiguous frame, computed (not the stored one). */
uint32_t droce_pkt_icrc_calc(const struct droce_pkt *pkt, const uint8_t *frame);

/** Pointer to extended header @p h of a parsed packet (the opcode must carry it). */
static inline void *droce_pkt_ext(const struct droce_pkt *pkt, const uint8_t *frame,
				  enum droce_ext_hdr h)
{
	return (void *)(uintptr_t)(frame + pkt->bth_off +
				   droce_opcode_table[pkt->opcode].offset[h]);
}

static inline struct droce_bth *droce_pkt_bth(const struct droce_pkt *pkt, const uint8_t *frame)
{
	return (struct droce_bth *)(uintptr_t)(frame + pkt->bth_off);
}

/* ------------------------------------------------------------ building */

/** Everything in front of the BTH: one per destination, filled in once. */
struct droce_addr {
	uint8_t dst_mac[DROCE_ETHER_ADDR_LEN];
	uint8_t src_mac[DROCE_ETHER_ADDR_LEN];
	bool has_vlan;
	uint16_t vlan_tci;
	bool ipv6;
	bool ipv4_df;       /**< set Don't Fragment (Linux does) */
	uint8_t src_ip[16]; /**< IPv4 in the first 4 bytes */
	uint8_t dst_ip[16];
	uint8_t tclass;      /**< IPv4 TOS / IPv6 traffic class: DSCP << 2 | ECN */
	uint8_t ttl;         /**< IPv4 TTL / IPv6 hop limit */
	uint32_t flow_label; /**< IPv6 only */
	uint16_t udp_sport;
	uint16_t udp_dport;
};

/** Values of the BTH and of every extended header; only the opcode's are used. */
struct droce_hdr_fields {
	uint8_t opcode;
	bool se;
	bool mig;
	bool fecn;
	bool becn;
	bool ackreq;
	uint8_t tver;
	uint16_t pkey;
	uint32_t dqpn;
	uint32_t psn;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint32_t len;
	} reth;
	struct {
		uint8_t syndrome;
		uint32_t msn;
	} aeth;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint64_t swap_add;
		uint64_t compare;
	} atmeth;
	uint64_t atmack_orig;
	struct {
		uint32_t qkey;
		uint32_t sqpn;
	} deth;
	uint32_t imm_be; /**< immediate data as on the wire (big-endian) */
	uint32_t ieth_rkey;
};

/** Bytes of L2 + L3 + UDP headers the template produces. */
size_t droce_addr_hdr_len(const struct droce_addr *a);

/** Pad bytes that make a payload a multiple of 4 (IBTA 9.2). */
static inline uint8_t droce_pad_len(uint32_t payload_len)
{
	return (uint8_t)(-payload_len & 3);
}

/** Length of the whole frame for @p opcode carrying @p payload_len bytes. */
size_t droce_frame_len(const struct droce_addr *a, uint8_t opcode, uint32_t payload_len);

/**
 * Write every header from Ethernet to the last extended header, with the IP
 * and UDP lengths (and the IPv4 checksum) already covering @p payload_len
 * bytes of payload, the pad and the ICRC. The pad count comes from
 * @p payload_len. Returns the header length, -EINVAL for an opcode droce does
 * not send or a payload the opcode cannot carry, -ENOSPC if @p cap is short,
 * -EMSGSIZE if the frame would exceed 65535 bytes of IP.
 */
ssize_t droce_build_hdrs(uint8_t *buf, size_t cap, const struct droce_addr *a, uint16_t ip_id,
			 const struct droce_hdr_fields *f, uint32_t payload_len);

/** Write a whole frame: headers, payload, zero pad and ICRC. Returns its length or -errno. */
ssize_t droce_build_frame(uint8_t *buf, size_t cap, const struct droce_addr *a, uint16_t ip_id,
			  const struct droce_hdr_fields *f, const void *payload,
			  uint32_t payload_len);

/** Write pad bytes and the ICRC of a contiguous frame whose headers and payload are in place. */
void droce_build_trailer(uint8_t *frame, const struct droce_pkt *pkt);

/** Read the header field values of a parsed packet. */
void droce_pkt_fields(const struct droce_pkt *pkt, const uint8_t *frame,
		      struct droce_hdr_fields *f);

/** Read the address template of a parsed packet, and its IPv4 ID (0 for IPv6). */
void droce_pkt_addr(const struct droce_pkt *pkt, const uint8_t *frame, struct droce_addr *a,
		    uint16_t *ip_id);

/**
 * UDP source port for a QP pair, as Linux and RoCE NICs choose it for ECMP
 * entropy: the flow label (or, when 0, one computed from both QPNs) folded
 * into 14 bits above 0xC000 (annex A17).
 */
uint16_t droce_udp_sport_for_qps(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn);

/** Flow label derived from a QP pair when the path gives none. */
uint32_t droce_flow_label_from_qpns(uint32_t lqpn, uint32_t rqpn);

/** IPv4 header checksum (the csum field is taken as zero). */
uint16_t droce_ipv4_csum(const struct droce_ipv4_hdr *ip, size_t hdr_len);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_PKT_H */
