/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The parser and the ICRC over DPDK mbufs, single- or multi-segment.
 */
#ifndef DROCE_WIRE_MBUF_H
#define DROCE_WIRE_MBUF_H

#include <rte_mbuf.h>

#include "droce_wire_pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ICRC over bytes [@p l3_off, @p icrc_off) of a possibly chained mbuf: the
 * masked headers (IP header of @p ip_hdr_len bytes, UDP, BTH) must lie in the
 * first segment; the rest is chained segment by segment without copying.
 */
uint32_t droce_icrc_calc_mbuf(const struct rte_mbuf *m, uint32_t l3_off, uint32_t ip_hdr_len,
			      bool ipv6, uint32_t icrc_off);

/**
 * Parse a received mbuf (chained or not) into @p pkt, verifying the ICRC when
 * cfg->verify_icrc. Headers split across segments are gathered into a local
 * copy first, so no header is ever read beyond a segment. A chain whose
 * segments do not add up to its pkt_len is DROCE_PARSE_TRUNC_L2.
 */
enum droce_parse_status droce_parse_mbuf(const struct rte_mbuf *m,
					 const struct droce_parse_cfg *cfg, struct droce_pkt *pkt);

/**
 * droce_pkt_fields() of a parsed mbuf whose headers may be split over
 * segments: they are gathered first (at most DROCE_PARSE_HDR_MAX bytes), so
 * no field is read beyond a segment.
 */
void droce_pkt_fields_mbuf(const struct droce_pkt *pkt, const struct rte_mbuf *m,
			   struct droce_hdr_fields *f);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_MBUF_H */
