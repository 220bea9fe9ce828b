/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "droce_wire_icrc.h"
#include "droce_wire_mbuf.h"

/* CRC of bytes [off, end) of a chain, segment by segment. */
static uint32_t crc_chain(uint32_t crc, const struct rte_mbuf *m, uint32_t off, uint32_t end)
{
	uint32_t seg_start = 0;

	if (off >= end)
		return crc;
	for (; m != NULL && seg_start < end; m = m->next) {
		uint32_t seg_end = seg_start + m->data_len;

		if (seg_end > off) {
			uint32_t from = off > seg_start ? off - seg_start : 0;
			uint32_t to = (end < seg_end ? end : seg_end) - seg_start;

			crc = droce_crc32(crc, rte_pktmbuf_mtod_offset(m, const uint8_t *, from),
					  to - from);
		}
		seg_start = seg_end;
	}
	return crc;
}

uint32_t droce_icrc_calc_mbuf(const struct rte_mbuf *m, uint32_t l3_off, uint32_t ip_hdr_len,
			      bool ipv6, uint32_t icrc_off)
{
	uint32_t masked_end = l3_off + (uint32_t)droce_icrc_masked_len(ip_hdr_len);
	uint8_t copy[DROCE_PARSE_HDR_MAX];
	const uint8_t *l3;
	uint32_t crc;

	if (m->data_len >= icrc_off && icrc_off >= masked_end) {
		/* all of it in the first segment: one pass */
		return droce_icrc_calc(rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off),
				       ip_hdr_len, ipv6, icrc_off - l3_off);
	}
	if (m->data_len >= masked_end) {
		l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off);
	} else {
		/* headers split over segments: gather them (rare, cold) */
		l3 = rte_pktmbuf_read(m, l3_off, masked_end - l3_off, copy);
		if (l3 == NULL)
			return 0;
	}
	crc = droce_icrc_begin(l3, ip_hdr_len, ipv6);
	return droce_icrc_final(crc_chain(crc, m, masked_end, icrc_off));
}

/*
 * The segments hold exactly pkt_len bytes. A chain whose segments are shorter than its
 * length would send rte_pktmbuf_read() past its last segment; one of a zero-copy sender
 * (doc/transport.md) arrives as it was built, from another port of this process.
 */
static bool chain_whole(const struct rte_mbuf *m)
{
	uint64_t sum = 0;
	const struct rte_mbuf *s;

	for (s = m; s != NULL; s = s->next)
		sum += s->data_len;
	return sum == m->pkt_len;
}

enum droce_parse_status droce_parse_mbuf(const struct rte_mbuf *m,
					 const struct droce_parse_cfg *cfg, struct droce_pkt *pkt)
{
	uint8_t copy[DROCE_PARSE_HDR_MAX];
	uint32_t want = m->pkt_len < DROCE_PARSE_HDR_MAX ? m->pkt_len : DROCE_PARSE_HDR_MAX;
	const uint8_t *hdr = rte_pktmbuf_mtod(m, const uint8_t *);
	enum droce_parse_status st;
	uint8_t stored[DROCE_ICRC_LEN];
	const uint8_t *icrc;

	if (m->next != NULL && !chain_whole(m))
		return DROCE_PARSE_TRUNC_L2;
	if (m->data_len < want) {
		hdr = rte_pktmbuf_read(m, 0, want, copy);
		if (hdr == NULL)
			return DROCE_PARSE_TRUNC_L2;
	}
	st = droce_parse_hdrs(hdr, want, m->pkt_len, cfg, pkt);
	if (st != DROCE_PARSE_OK || !cfg->verify_icrc)
		return st;
	icrc = rte_pktmbuf_read(m, pkt->icrc_off, DROCE_ICRC_LEN, stored);
	if (icrc == NULL ||
	    droce_icrc_calc_mbuf(m, pkt->l3_off, pkt->ip_hdr_len, pkt->flags & DROCE_PKT_IPV6,
				 pkt->icrc_off) != droce_icrc_load(icrc))
		return DROCE_PARSE_BAD_ICRC;
	return DROCE_PARSE_OK;
}

void droce_pkt_fields_mbuf(const struct droce_pkt *pkt, const struct rte_mbuf *m,
			   struct droce_hdr_fields *f)
{
	uint8_t copy[DROCE_PARSE_HDR_MAX];
	const uint8_t *hdr = rte_pktmbuf_mtod(m, const uint8_t *);

	/* the parser accepted the packet: its headers are within DROCE_PARSE_HDR_MAX */
	if (m->data_len < pkt->payload_off)
		hdr = rte_pktmbuf_read(m, 0, pkt->payload_off, copy);
	droce_pkt_fields(pkt, hdr, f);
}
