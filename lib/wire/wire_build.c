/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Header field values + address template -> frame, and the reverse
 * (descriptor -> field values) so that every packet droce reads can be
 * rebuilt byte for byte.
 */
#include <errno.h>
#include <string.h>

#include "droce_wire_icrc.h"
#include "droce_wire_pkt.h"

size_t droce_addr_hdr_len(const struct droce_addr *a)
{
	return sizeof(struct droce_eth_hdr) + (a->has_vlan ? sizeof(struct droce_vlan_hdr) : 0) +
	       (a->ipv6 ? sizeof(struct droce_ipv6_hdr) : sizeof(struct droce_ipv4_hdr)) +
	       sizeof(struct droce_udp_hdr);
}

size_t droce_frame_len(const struct droce_addr *a, uint8_t opcode, uint32_t payload_len)
{
	return droce_addr_hdr_len(a) + droce_opcode_table[opcode].hdr_len + payload_len +
	       droce_pad_len(payload_len) + DROCE_ICRC_LEN;
}

static uint8_t *build_l2(uint8_t *p, const struct droce_addr *a)
{
	struct droce_eth_hdr *eth = (struct droce_eth_hdr *)p;
	uint16_t l3_type = a->ipv6 ? DROCE_ETHERTYPE_IPV6 : DROCE_ETHERTYPE_IPV4;

	memcpy(eth->dst, a->dst_mac, sizeof(eth->dst));
	memcpy(eth->src, a->src_mac, sizeof(eth->src));
	p += sizeof(*eth);
	if (a->has_vlan) {
		struct droce_vlan_hdr *vlan = (struct droce_vlan_hdr *)p;

		droce_eth_set_type(eth, DROCE_ETHERTYPE_VLAN);
		droce_vlan_set_tci(vlan, a->vlan_tci);
		droce_vlan_set_type(vlan, l3_type);
		p += sizeof(*vlan);
	} else {
		droce_eth_set_type(eth, l3_type);
	}
	return p;
}

/* IP + UDP headers for a UDP payload (BTH .. ICRC) of @p roce_len bytes. */
static uint8_t *build_l3_l4(uint8_t *p, const struct droce_addr *a, uint16_t ip_id, size_t roce_len)
{
	struct droce_udp_hdr *udp;
	size_t udp_len = sizeof(*udp) + roce_len;

	if (a->ipv6) {
		struct droce_ipv6_hdr *ip6 = (struct droce_ipv6_hdr *)p;

		droce_ipv6_set_vtc_flow(ip6, a->tclass, a->flow_label);
		ip6->payload_len = htobe16((uint16_t)udp_len);
		ip6->next_hdr = DROCE_IPPROTO_UDP;
		ip6->hop_limit = a->ttl;
		memcpy(ip6->src, a->src_ip, 16);
		memcpy(ip6->dst, a->dst_ip, 16);
		p += sizeof(*ip6);
	} else {
		struct droce_ipv4_hdr *ip = (struct droce_ipv4_hdr *)p;

		ip->version_ihl = 0x45;
		ip->tos = a->tclass;
		ip->total_len = htobe16((uint16_t)(sizeof(*ip) + udp_len));
		ip->id = htobe16(ip_id);
		ip->frag_off = htobe16(a->ipv4_df ? DROCE_IPV4_DF : 0);
		ip->ttl = a->ttl;
		ip->proto = DROCE_IPPROTO_UDP;
		memcpy(ip->src, a->src_ip, 4);
		memcpy(ip->dst, a->dst_ip, 4);
		ip->csum = droce_ipv4_csum(ip, sizeof(*ip));
		p += sizeof(*ip);
	}
	udp = (struct droce_udp_hdr *)p;
	udp->sport = htobe16(a->udp_sport);
	udp->dport = htobe16(a->udp_dport);
	udp->len = htobe16((uint16_t)udp_len);
	/* zero: the ICRC protects the packet, as Linux and RoCE NICs send it (annex A17) */
	udp->csum = 0;
	return p + sizeof(*udp);
}

static void build_bth(struct droce_bth *bth, const struct droce_hdr_fields *f, uint8_t pad)
{
	memset(bth, 0, sizeof(*bth));
	droce_bth_set_opcode(bth, f->opcode);
	droce_bth_set_se(bth, f->se);
	droce_bth_set_mig(bth, f->mig);
	droce_bth_set_pad(bth, pad);
	droce_bth_set_tver(bth, f->tver);
	droce_bth_set_pkey(bth, f->pkey);
	droce_bth_set_fecn(bth, f->fecn);
	droce_bth_set_becn(bth, f->becn);
	droce_bth_set_qpn(bth, f->dqpn);
	droce_bth_set_ackreq(bth, f->ackreq);
	droce_bth_set_psn(bth, f->psn);
}

static void build_ext(uint8_t *bth, const struct droce_opcode_info *info,
		      const struct droce_hdr_fields *f)
{
	uint32_t m = info->mask;

	if (m & DROCE_OPM_DETH) {
		struct droce_deth *d = (void *)(bth + info->offset[DROCE_HDR_DETH]);

		d->sqpn = 0;
		droce_deth_set_qkey(d, f->deth.qkey);
		droce_deth_set_sqpn(d, f->deth.sqpn);
	}
	if (m & DROCE_OPM_RETH) {
		struct droce_reth *r = (void *)(bth + info->offset[DROCE_HDR_RETH]);

		droce_reth_set_va(r, f->reth.va);
		droce_reth_set_rkey(r, f->reth.rkey);
		droce_reth_set_len(r, f->reth.len);
	}
	if (m & DROCE_OPM_ATMETH) {
		struct droce_atmeth *at = (void *)(bth + info->offset[DROCE_HDR_ATMETH]);

		droce_atmeth_set_va(at, f->atmeth.va);
		droce_atmeth_set_rkey(at, f->atmeth.rkey);
		droce_atmeth_set_swap_add(at, f->atmeth.swap_add);
		droce_atmeth_set_compare(at, f->atmeth.compare);
	}
	if (m & DROCE_OPM_AETH) {
		struct droce_aeth *ae = (void *)(bth + info->offset[DROCE_HDR_AETH]);

		ae->smsn = 0;
		droce_aeth_set_syndrome(ae, f->aeth.syndrome);
		droce_aeth_set_msn(ae, f->aeth.msn);
	}
	if (m & DROCE_OPM_ATMACK)
		droce_atmack_set_orig((void *)(bth + info->offset[DROCE_HDR_ATMACK]),
				      f->atmack_orig);
	if (m & DROCE_OPM_IMMDT)
		droce_immdt_set_imm((void *)(bth + info->offset[DROCE_HDR_IMMDT]), f->imm_be);
	if (m & DROCE_OPM_IETH)
		droce_ieth_set_rkey((void *)(bth + info->offset[DROCE_HDR_IETH]), f->ieth_rkey);
	if (m & DROCE_OPM_CNP)
		memset(bth + info->offset[DROCE_HDR_CNP], 0, sizeof(struct droce_cnp));
}

ssize_t droce_build_hdrs(uint8_t *buf, size_t cap, const struct droce_addr *a, uint16_t ip_id,
			 const struct droce_hdr_fields *f, uint32_t payload_len)
{
	const struct droce_opcode_info *info = droce_opcode_info(f->opcode);
	size_t l2l3 = droce_addr_hdr_len(a);
	size_t roce_len, hdr_len;
	uint8_t pad = droce_pad_len(payload_len);
	uint8_t *p;

	if (info->name == NULL || (!(info->mask & DROCE_OPM_PAYLOAD) && payload_len != 0))
		return -EINVAL;
	roce_len = (size_t)info->hdr_len + payload_len + pad + DROCE_ICRC_LEN;
	if (sizeof(struct droce_udp_hdr) + roce_len +
		    (a->ipv6 ? 0 : sizeof(struct droce_ipv4_hdr)) >
	    UINT16_MAX)
		return -EMSGSIZE;
	hdr_len = l2l3 + info->hdr_len;
	if (cap < hdr_len)
		return -ENOSPC;
	p = build_l2(buf, a);
	p = build_l3_l4(p, a, ip_id, roce_len);
	build_bth((struct droce_bth *)p, f, pad);
	build_ext(p, info, f);
	return (ssize_t)hdr_len;
}

void droce_build_trailer(uint8_t *frame, const struct droce_pkt *pkt)
{
	memset(frame + pkt->payload_off + pkt->payload_len, 0, pkt->pad);
	droce_icrc_store(frame + pkt->icrc_off, droce_pkt_icrc_calc(pkt, frame));
}

ssize_t droce_build_frame(uint8_t *buf, size_t cap, const struct droce_addr *a, uint16_t ip_id,
			  const struct droce_hdr_fields *f, const void *payload,
			  uint32_t payload_len)
{
	ssize_t hdr_len = droce_build_hdrs(buf, cap, a, ip_id, f, payload_len);
	uint8_t pad = droce_pad_len(payload_len);
	size_t frame_len;
	uint8_t *l3;

	if (hdr_len < 0)
		return hdr_len;
	frame_len = (size_t)hdr_len + payload_len + pad + DROCE_ICRC_LEN;
	if (cap < frame_len)
		return -ENOSPC;
	if (payload_len)
		memcpy(buf + hdr_len, payload, payload_len);
	memset(buf + hdr_len + payload_len, 0, pad);
	l3 = buf + sizeof(struct droce_eth_hdr) + (a->has_vlan ? sizeof(struct droce_vlan_hdr) : 0);
	droce_icrc_store(buf + frame_len - DROCE_ICRC_LEN,
			 droce_icrc_calc(l3,
					 a->ipv6 ? sizeof(struct droce_ipv6_hdr)
						 : sizeof(struct droce_ipv4_hdr),
					 a->ipv6, (size_t)(buf + frame_len - DROCE_ICRC_LEN - l3)));
	return (ssize_t)frame_len;
}

void droce_pkt_fields(const struct droce_pkt *pkt, const uint8_t *frame, struct droce_hdr_fields *f)
{
	const struct droce_bth *bth = droce_pkt_bth(pkt, frame);
	uint32_t m = pkt->mask;

	memset(f, 0, sizeof(*f));
	f->opcode = droce_bth_opcode(bth);
	f->se = droce_bth_se(bth);
	f->mig = droce_bth_mig(bth);
	f->tver = droce_bth_tver(bth);
	f->pkey = droce_bth_pkey(bth);
	f->fecn = droce_bth_fecn(bth);
	f->becn = droce_bth_becn(bth);
	f->dqpn = droce_bth_qpn(bth);
	f->ackreq = droce_bth_ackreq(bth);
	f->psn = droce_bth_psn(bth);
	if (m & DROCE_OPM_DETH) {
		const struct droce_deth *d = droce_pkt_ext(pkt, frame, DROCE_HDR_DETH);

		f->deth.qkey = droce_deth_qkey(d);
		f->deth.sqpn = droce_deth_sqpn(d);
	}
	if (m & DROCE_OPM_RETH) {
		const struct droce_reth *r = droce_pkt_ext(pkt, frame, DROCE_HDR_RETH);

		f->reth.va = droce_reth_va(r);
		f->reth.rkey = droce_reth_rkey(r);
		f->reth.len = droce_reth_len(r);
	}
	if (m & DROCE_OPM_ATMETH) {
		const struct droce_atmeth *at = droce_pkt_ext(pkt, frame, DROCE_HDR_ATMETH);

		f->atmeth.va = droce_atmeth_va(at);
		f->atmeth.rkey = droce_atmeth_rkey(at);
		f->atmeth.swap_add = droce_atmeth_swap_add(at);
		f->atmeth.compare = droce_atmeth_compare(at);
	}
	if (m & DROCE_OPM_AETH) {
		const struct droce_aeth *ae = droce_pkt_ext(pkt, frame, DROCE_HDR_AETH);

		f->aeth.syndrome = droce_aeth_syndrome(ae);
		f->aeth.msn = droce_aeth_msn(ae);
	}
	if (m & DROCE_OPM_ATMACK)
		f->atmack_orig = droce_atmack_orig(droce_pkt_ext(pkt, frame, DROCE_HDR_ATMACK));
	if (m & DROCE_OPM_IMMDT)
		f->imm_be = droce_immdt_imm(droce_pkt_ext(pkt, frame, DROCE_HDR_IMMDT));
	if (m & DROCE_OPM_IETH)
		f->ieth_rkey = droce_ieth_rkey(droce_pkt_ext(pkt, frame, DROCE_HDR_IETH));
}

void droce_pkt_addr(const struct droce_pkt *pkt, const uint8_t *frame, struct droce_addr *a,
		    uint16_t *ip_id)
{
	const struct droce_eth_hdr *eth = (const void *)frame;
	const struct droce_udp_hdr *udp =
		(const void *)(frame + pkt->bth_off - sizeof(struct droce_udp_hdr));

	memset(a, 0, sizeof(*a));
	memcpy(a->dst_mac, eth->dst, sizeof(a->dst_mac));
	memcpy(a->src_mac, eth->src, sizeof(a->src_mac));
	a->has_vlan = pkt->flags & DROCE_PKT_VLAN;
	a->vlan_tci = pkt->vlan_tci;
	a->ipv6 = pkt->flags & DROCE_PKT_IPV6;
	if (a->ipv6) {
		const struct droce_ipv6_hdr *ip6 = (const void *)(frame + pkt->l3_off);

		a->tclass = droce_ipv6_tclass(ip6);
		a->flow_label = droce_ipv6_flow_label(ip6);
		a->ttl = ip6->hop_limit;
		memcpy(a->src_ip, ip6->src, 16);
		memcpy(a->dst_ip, ip6->dst, 16);
		*ip_id = 0;
	} else {
		const struct droce_ipv4_hdr *ip = (const void *)(frame + pkt->l3_off);

		a->tclass = ip->tos;
		a->ttl = ip->ttl;
		a->ipv4_df = droce_ipv4_frag_off(ip) & DROCE_IPV4_DF;
		memcpy(a->src_ip, ip->src, 4);
		memcpy(a->dst_ip, ip->dst, 4);
		*ip_id = droce_ipv4_id(ip);
	}
	a->udp_sport = droce_udp_sport(udp);
	a->udp_dport = droce_udp_dport(udp);
}

uint32_t droce_flow_label_from_qpns(uint32_t lqpn, uint32_t rqpn)
{
	/* mix the product of both QPNs into 20 bits, symmetric in the two QPNs */
	uint64_t v = (uint64_t)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)(v & 0xfffff);
}

uint16_t droce_udp_sport_for_qps(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn)
{
	uint32_t fl = flow_label ? flow_label : droce_flow_label_from_qpns(lqpn, rqpn);
	uint32_t low = fl & 0x3fff;

	low ^= (fl & 0xfc000) >> 14;
	return (uint16_t)(low | DROCE_ROCEV2_SPORT_MIN);
}
