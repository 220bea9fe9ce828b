/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame -> packet descriptor. Every read is bounded by the bytes the caller
 * gave; every length field is checked against the ones around it before it
 * is trusted. Malformed packets are dropped silently (IBTA 9.6: a packet that
 * fails a header check is discarded without a response) and the reason is
 * returned for the caller to count.
 */
#include <string.h>

#include "droce_wire_icrc.h"
#include "droce_wire_pkt.h"

const char *const droce_parse_status_name[DROCE_PARSE_STATUS_COUNT] = {
	[DROCE_PARSE_OK] = "ok",
	[DROCE_PARSE_NOT_ROCE] = "not_roce",
	[DROCE_PARSE_TRUNC_L2] = "trunc_l2",
	[DROCE_PARSE_TRUNC_IP] = "trunc_ip",
	[DROCE_PARSE_BAD_IP_VERSION] = "bad_ip_version",
	[DROCE_PARSE_BAD_IP_HDR_LEN] = "bad_ip_hdr_len",
	[DROCE_PARSE_BAD_IP_LEN] = "bad_ip_len",
	[DROCE_PARSE_BAD_IP_CSUM] = "bad_ip_csum",
	[DROCE_PARSE_IP_FRAGMENT] = "ip_fragment",
	[DROCE_PARSE_TRUNC_UDP] = "trunc_udp",
	[DROCE_PARSE_BAD_UDP_LEN] = "bad_udp_len",
	[DROCE_PARSE_TRUNC_BTH] = "trunc_bth",
	[DROCE_PARSE_BAD_BTH_VERSION] = "bad_bth_version",
	[DROCE_PARSE_BAD_OPCODE] = "bad_opcode",
	[DROCE_PARSE_TRUNC_EXT_HDR] = "trunc_ext_hdr",
	[DROCE_PARSE_BAD_PAD] = "bad_pad",
	[DROCE_PARSE_BAD_PAYLOAD] = "bad_payload",
	[DROCE_PARSE_PAYLOAD_TOO_LONG] = "payload_too_long",
	[DROCE_PARSE_BAD_ICRC] = "icrc_error",
};

uint16_t droce_ipv4_csum(const struct droce_ipv4_hdr *ip, size_t hdr_len)
{
	const uint8_t *p = (const uint8_t *)ip;
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < hdr_len; i += 2) {
		if (i == offsetof(struct droce_ipv4_hdr, csum))
			continue;
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htobe16((uint16_t)~sum);
}

/* L3: sets l3_off, ip_hdr_len, flags; *l4_len gets the IP payload length. */
static enum droce_parse_status parse_ip(const uint8_t *hdr, size_t avail, size_t frame_len,
					uint16_t ethertype, const struct droce_parse_cfg *cfg,
					struct droce_pkt *pkt, size_t *l4_len)
{
	size_t off = pkt->l3_off;

	if (ethertype == DROCE_ETHERTYPE_IPV4) {
		const struct droce_ipv4_hdr *ip = (const void *)(hdr + off);
		size_t ihl, total;

		if (avail < off + sizeof(*ip))
			return DROCE_PARSE_TRUNC_IP;
		if (droce_ipv4_version(ip) != 4)
			return DROCE_PARSE_BAD_IP_VERSION;
		ihl = droce_ipv4_hdr_len(ip);
		if (ihl < sizeof(*ip))
			return DROCE_PARSE_BAD_IP_HDR_LEN;
		if (avail < off + ihl)
			return DROCE_PARSE_TRUNC_IP;
		total = droce_ipv4_total_len(ip);
		if (total < ihl || off + total > frame_len)
			return DROCE_PARSE_BAD_IP_LEN;
		if (ip->proto != DROCE_IPPROTO_UDP)
			return DROCE_PARSE_NOT_ROCE;
		if (cfg->verify_ip_csum && droce_ipv4_csum(ip, ihl) != ip->csum)
			return DROCE_PARSE_BAD_IP_CSUM;
		if (droce_ipv4_is_fragment(ip)) {
			/* only a first fragment shows its port: RoCEv2 is never fragmented */
			const struct droce_udp_hdr *udp = (const void *)(hdr + off + ihl);

			if ((droce_ipv4_frag_off(ip) & DROCE_IPV4_FRAG_OFF_MASK) != 0)
				return DROCE_PARSE_NOT_ROCE;
			if (avail < off + ihl + sizeof(*udp))
				return DROCE_PARSE_TRUNC_UDP;
			return droce_udp_dport(udp) == cfg->udp_port ? DROCE_PARSE_IP_FRAGMENT
								     : DROCE_PARSE_NOT_ROCE;
		}
		pkt->ip_hdr_len = (uint8_t)ihl;
		*l4_len = total - ihl;
	} else {
		const struct droce_ipv6_hdr *ip6 = (const void *)(hdr + off);

		if (avail < off + sizeof(*ip6))
			return DROCE_PARSE_TRUNC_IP;
		if (droce_ipv6_version(ip6) != 6)
			return DROCE_PARSE_BAD_IP_VERSION;
		if (off + sizeof(*ip6) + droce_ipv6_payload_len(ip6) > frame_len)
			return DROCE_PARSE_BAD_IP_LEN;
		/* extension headers are not used by RoCEv2 (annex A17) */
		if (ip6->next_hdr != DROCE_IPPROTO_UDP)
			return DROCE_PARSE_NOT_ROCE;
		pkt->ip_hdr_len = sizeof(*ip6);
		pkt->flags |= DROCE_PKT_IPV6;
		*l4_len = droce_ipv6_payload_len(ip6);
	}
	return DROCE_PARSE_OK;
}

/* BTH and extended headers: @p roce_len is the UDP payload (BTH .. ICRC). */
static enum droce_parse_status parse_transport(const uint8_t *hdr, size_t avail, size_t roce_len,
					       const struct droce_parse_cfg *cfg,
					       struct droce_pkt *pkt)
{
	const struct droce_bth *bth = (const void *)(hdr + pkt->bth_off);
	const struct droce_opcode_info *info;
	size_t data;

	if (roce_len < sizeof(*bth) + DROCE_ICRC_LEN || avail < pkt->bth_off + sizeof(*bth))
		return DROCE_PARSE_TRUNC_BTH;
	if (droce_bth_tver(bth) != DROCE_BTH_TVER)
		return DROCE_PARSE_BAD_BTH_VERSION;
	pkt->opcode = droce_bth_opcode(bth);
	info = droce_opcode_info(pkt->opcode);
	if (info->name == NULL)
		return DROCE_PARSE_BAD_OPCODE;
	if (roce_len < (size_t)info->hdr_len + DROCE_ICRC_LEN ||
	    avail < (size_t)pkt->bth_off + info->hdr_len)
		return DROCE_PARSE_TRUNC_EXT_HDR;

	/* payload + pad fill whole 32-bit words (IBTA 9.2, PadCnt) */
	data = roce_len - info->hdr_len - DROCE_ICRC_LEN;
	pkt->pad = droce_bth_pad(bth);
	if ((data & 3) != 0 || pkt->pad > data)
		return DROCE_PARSE_BAD_PAD;
	if (!(info->mask & DROCE_OPM_PAYLOAD) && data != 0)
		return DROCE_PARSE_BAD_PAYLOAD;
	if (data - pkt->pad > cfg->max_payload)
		return DROCE_PARSE_PAYLOAD_TOO_LONG;

	pkt->mask = info->mask;
	pkt->qpn = droce_bth_qpn(bth);
	pkt->psn = droce_bth_psn(bth);
	pkt->payload_off = (uint16_t)(pkt->bth_off + info->hdr_len);
	pkt->payload_len = (uint16_t)(data - pkt->pad);
	pkt->icrc_off = (uint16_t)(pkt->payload_off + data);
	return DROCE_PARSE_OK;
}

enum droce_parse_status droce_parse_hdrs(const uint8_t *hdr, size_t hdr_len, size_t frame_len,
					 const struct droce_parse_cfg *cfg, struct droce_pkt *pkt)
{
	size_t avail = hdr_len < frame_len ? hdr_len : frame_len;
	const struct droce_eth_hdr *eth = (const void *)hdr;
	const struct droce_udp_hdr *udp;
	enum droce_parse_status st;
	size_t l4_len, udp_len;
	uint16_t type;

	memset(pkt, 0, sizeof(*pkt));
	if (avail > DROCE_PARSE_HDR_MAX)
		avail = DROCE_PARSE_HDR_MAX;
	/* 16-bit offsets: longer frames are not Ethernet frames droce accepts */
	if (frame_len > UINT16_MAX)
		return DROCE_PARSE_BAD_IP_LEN;
	if (avail < sizeof(*eth))
		return DROCE_PARSE_TRUNC_L2;
	type = droce_eth_type(eth);
	pkt->l3_off = sizeof(*eth);
	if (type == DROCE_ETHERTYPE_VLAN) {
		const struct droce_vlan_hdr *vlan = (const void *)(hdr + sizeof(*eth));

		if (avail < sizeof(*eth) + sizeof(*vlan))
			return DROCE_PARSE_TRUNC_L2;
		pkt->flags |= DROCE_PKT_VLAN;
		pkt->vlan_tci = droce_vlan_tci(vlan);
		type = droce_vlan_type(vlan);
		pkt->l3_off += sizeof(*vlan);
	}
	if (type != DROCE_ETHERTYPE_IPV4 && type != DROCE_ETHERTYPE_IPV6)
		return DROCE_PARSE_NOT_ROCE;

	st = parse_ip(hdr, avail, frame_len, type, cfg, pkt, &l4_len);
	if (st != DROCE_PARSE_OK)
		return st;

	udp = (const void *)(hdr + pkt->l3_off + pkt->ip_hdr_len);
	if (l4_len < sizeof(*udp) || avail < pkt->l3_off + pkt->ip_hdr_len + sizeof(*udp))
		return DROCE_PARSE_TRUNC_UDP;
	if (droce_udp_dport(udp) != cfg->udp_port)
		return DROCE_PARSE_NOT_ROCE;
	udp_len = droce_udp_len(udp);
	if (udp_len != l4_len)
		return DROCE_PARSE_BAD_UDP_LEN;

	pkt->bth_off = (uint16_t)(pkt->l3_off + pkt->ip_hdr_len + sizeof(*udp));
	return parse_transport(hdr, avail, udp_len - sizeof(*udp), cfg, pkt);
}

uint32_t droce_pkt_icrc_calc(const struct droce_pkt *pkt, const uint8_t *frame)
{
	return droce_icrc_calc(frame + pkt->l3_off, pkt->ip_hdr_len, pkt->flags & DROCE_PKT_IPV6,
			       (size_t)(pkt->icrc_off - pkt->l3_off));
}

enum droce_parse_status droce_parse(const uint8_t *frame, size_t len,
				    const struct droce_parse_cfg *cfg, struct droce_pkt *pkt)
{
	enum droce_parse_status st = droce_parse_hdrs(frame, len, len, cfg, pkt);

	if (st != DROCE_PARSE_OK || !cfg->verify_icrc)
		return st;
	if (droce_pkt_icrc_calc(pkt, frame) != droce_icrc_load(frame + pkt->icrc_off))
		return DROCE_PARSE_BAD_ICRC;
	return DROCE_PARSE_OK;
}
