/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target over the lib/wire parser: droce_parse(), droce_parse_hdrs()
 * (contiguous, split and with a frame longer than the bytes given), then
 * droce_pkt_fields(), droce_pkt_addr() and droce_build_frame() on every packet
 * the parser accepts, and droce_build_trailer() on the rebuilt frame; the CM
 * MAD checks (droce_gsi_parse(), droce_cm_decode() and droce_cm_encode(), the
 * rdma_cm header) on the payload of every accepted packet and on the frame
 * bytes themselves. Built and run by run_fuzz.sh under ASan + UBSan.
 *
 * Input: a 4-byte prefix that picks the settings, then the frame.
 *
 *   byte 0     bit 0     cfg.verify_icrc
 *              bit 1     cfg.verify_ip_csum
 *              bits 3:2  cfg.max_payload: 256, 1024, 4096, 65535
 *              bit 4     cfg.udp_port: 4791, or FUZZ_ALT_PORT when set
 *              bit 5     CRC-32 implementation: ISA-L, or zlib when set
 *              bit 6     repair the frame before parsing: IP and UDP lengths set to
 *                        reach its end, then the IPv4 checksum and the ICRC, so that
 *                        inserted or changed header bytes still reach the rebuild
 *                        comparison instead of stopping at a length or CRC check
 *   byte 1     header bytes given to the split parse (modulo the frame length)
 *   bytes 2-3  big-endian: bytes claimed beyond the frame by the long-frame parse
 *
 * The frame is copied into a heap buffer of exactly its length (and the split
 * headers into one of exactly hdr_len bytes), so ASan reports any read past
 * what the parser was given. A violated property calls abort() after printing
 * which one. The ICRC and the IPv4 checksum are recomputed here with zlib and
 * plain arithmetic, independently of lib/wire, and used as oracles.
 *
 * Both CRC-32 back ends (ISA-L assembly and the system zlib) are not
 * instrumented: ASan cannot see their reads. The ranges lib/wire hands them
 * are checked instead: the descriptor invariants bound them inside the frame
 * and the library's ICRC must equal the oracle's over exactly [l3, icrc).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "droce_wire_hdr.h"
#include "droce_wire_icrc.h"
#include "droce_wire_mad.h"
#include "droce_wire_opcode.h"
#include "droce_wire_pkt.h"

#define FUZZ_PREFIX_LEN 4

#define FUZZ_CFG_VERIFY_ICRC       0x01
#define FUZZ_CFG_VERIFY_IP_CSUM    0x02
#define FUZZ_CFG_MAX_PAYLOAD_MASK  0x0c
#define FUZZ_CFG_MAX_PAYLOAD_SHIFT 2
#define FUZZ_CFG_ALT_PORT          0x10
#define FUZZ_CFG_CRC_ZLIB          0x20
#define FUZZ_CFG_REPAIR            0x40

/** A port next to RoCEv2's: matching must be exact, not a range or a mask. */
#define FUZZ_ALT_PORT 4792

#define ETH_LEN  sizeof(struct droce_eth_hdr)
#define VLAN_LEN sizeof(struct droce_vlan_hdr)
#define IPV4_LEN sizeof(struct droce_ipv4_hdr)
#define IPV6_LEN sizeof(struct droce_ipv6_hdr)
#define UDP_LEN  sizeof(struct droce_udp_hdr)
#define BTH_LEN  sizeof(struct droce_bth)

static const uint16_t fuzz_max_payload[4] = {256, 1024, 4096, 65535};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------------ reporting */

/* What is being checked, printed with a failed check. */
static const char *fuzz_stage = "";
static const struct droce_parse_cfg *fuzz_cfg;

static void __attribute__((noreturn, format(printf, 2, 3)))
fuzz_fail(int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "\nfuzz_wire_parse.c:%d: check failed in %s: ", line, fuzz_stage);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (fuzz_cfg != NULL)
		fprintf(stderr,
			"\n  cfg: verify_icrc=%d verify_ip_csum=%d max_payload=%u "
			"udp_port=%u crc=%s\n",
			fuzz_cfg->verify_icrc, fuzz_cfg->verify_ip_csum, fuzz_cfg->max_payload,
			fuzz_cfg->udp_port, droce_crc32_impl_name(droce_crc32_get_impl()));
	abort();
}

#define FUZZ_CHECK(cond)                                  \
	do {                                              \
		if (!(cond))                              \
			fuzz_fail(__LINE__, "%s", #cond); \
	} while (0)

#define FUZZ_CHECK_MSG(cond, ...)                         \
	do {                                              \
		if (!(cond))                              \
			fuzz_fail(__LINE__, __VA_ARGS__); \
	} while (0)

static void fuzz_hexdump(const char *name, const uint8_t *p, size_t len, size_t mark)
{
	size_t i;

	fprintf(stderr, "%s (%zu bytes):", name, len);
	for (i = 0; i < len; i++) {
		if (i % 16 == 0)
			fprintf(stderr, "\n  %04zx ", i);
		if (i == mark)
			fprintf(stderr, "[%02x]", p[i]);
		else
			fprintf(stderr, " %02x", p[i]);
	}
	fprintf(stderr, "\n");
}

/* ------------------------------------------------------------ helpers */

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static bool is_trunc(enum droce_parse_status st)
{
	return st == DROCE_PARSE_TRUNC_L2 || st == DROCE_PARSE_TRUNC_IP ||
	       st == DROCE_PARSE_TRUNC_UDP || st == DROCE_PARSE_TRUNC_BTH ||
	       st == DROCE_PARSE_TRUNC_EXT_HDR;
}

static bool pkt_equal(const struct droce_pkt *a, const struct droce_pkt *b)
{
	return a->mask == b->mask && a->qpn == b->qpn && a->psn == b->psn &&
	       a->l3_off == b->l3_off && a->bth_off == b->bth_off &&
	       a->payload_off == b->payload_off && a->payload_len == b->payload_len &&
	       a->icrc_off == b->icrc_off && a->vlan_tci == b->vlan_tci && a->opcode == b->opcode &&
	       a->pad == b->pad && a->flags == b->flags && a->ip_hdr_len == b->ip_hdr_len;
}

static bool fields_equal(const struct droce_hdr_fields *a, const struct droce_hdr_fields *b)
{
	return a->opcode == b->opcode && a->se == b->se && a->mig == b->mig && a->fecn == b->fecn &&
	       a->becn == b->becn && a->ackreq == b->ackreq && a->tver == b->tver &&
	       a->pkey == b->pkey && a->dqpn == b->dqpn && a->psn == b->psn &&
	       a->reth.va == b->reth.va && a->reth.rkey == b->reth.rkey &&
	       a->reth.len == b->reth.len && a->aeth.syndrome == b->aeth.syndrome &&
	       a->aeth.msn == b->aeth.msn && a->atmeth.va == b->atmeth.va &&
	       a->atmeth.rkey == b->atmeth.rkey && a->atmeth.swap_add == b->atmeth.swap_add &&
	       a->atmeth.compare == b->atmeth.compare && a->atmack_orig == b->atmack_orig &&
	       a->deth.qkey == b->deth.qkey && a->deth.sqpn == b->deth.sqpn &&
	       a->imm_be == b->imm_be && a->ieth_rkey == b->ieth_rkey;
}

static bool addr_equal(const struct droce_addr *a, const struct droce_addr *b)
{
	return memcmp(a->dst_mac, b->dst_mac, sizeof(a->dst_mac)) == 0 &&
	       memcmp(a->src_mac, b->src_mac, sizeof(a->src_mac)) == 0 &&
	       a->has_vlan == b->has_vlan && a->vlan_tci == b->vlan_tci && a->ipv6 == b->ipv6 &&
	       a->ipv4_df == b->ipv4_df && memcmp(a->src_ip, b->src_ip, sizeof(a->src_ip)) == 0 &&
	       memcmp(a->dst_ip, b->dst_ip, sizeof(a->dst_ip)) == 0 && a->tclass == b->tclass &&
	       a->ttl == b->ttl && a->flow_label == b->flow_label && a->udp_sport == b->udp_sport &&
	       a->udp_dport == b->udp_dport;
}

/* ------------------------------------------------------------ oracles */

/* One's-complement sum of an IPv4 header, its checksum field included. */
static uint16_t oracle_ipv4_sum(const uint8_t *ip, size_t hdr_len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < hdr_len; i += 2)
		sum += get_be16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Write the checksum of an IPv4 header (RFC 791: complement of the sum with the field zero). */
static void oracle_ipv4_csum_set(uint8_t *ip, size_t hdr_len)
{
	put_be16(ip + 10, 0);
	put_be16(ip + 10, (uint16_t)~oracle_ipv4_sum(ip, hdr_len));
}

/*
 * ICRC (IBTA 7.8.1, annex A17) written from the spec with zlib: CRC-32 of
 * 8 bytes of 0xff, the IP header with its variant fields set to ones, the UDP
 * header with its checksum set to ones, the BTH with its FECN/BECN/resv6 byte
 * set to ones, and everything after the BTH up to the ICRC.
 */
static uint32_t oracle_icrc(const uint8_t *l3, size_t ip_hdr_len, bool ipv6, size_t icrc_off)
{
	static const uint8_t lrh[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t hdr[60 + UDP_LEN + BTH_LEN];
	size_t masked = ip_hdr_len + UDP_LEN + BTH_LEN;
	uLong crc;

	FUZZ_CHECK(masked <= sizeof(hdr) && masked <= icrc_off);
	memcpy(hdr, l3, masked);
	if (ipv6) {
		hdr[0] |= 0x0f; /* traffic class, high nibble */
		hdr[1] = 0xff;  /* traffic class low nibble, flow label */
		hdr[2] = 0xff;
		hdr[3] = 0xff;
		hdr[7] = 0xff; /* hop limit */
	} else {
		hdr[1] = 0xff;  /* TOS */
		hdr[8] = 0xff;  /* TTL */
		hdr[10] = 0xff; /* header checksum */
		hdr[11] = 0xff;
	}
	hdr[ip_hdr_len + 6] = 0xff; /* UDP checksum */
	hdr[ip_hdr_len + 7] = 0xff;
	hdr[ip_hdr_len + UDP_LEN + 4] = 0xff; /* BTH FECN, BECN, resv6 */
	crc = crc32(0, lrh, sizeof(lrh));
	crc = crc32(crc, hdr, (uInt)masked);
	crc = crc32(crc, l3 + masked, (uInt)(icrc_off - masked));
	return (uint32_t)crc;
}

/* ------------------------------------------------------------ descriptor */

/*
 * Invariants of an accepted descriptor. @p frame holds at least the parsed
 * headers (bth_off + hdr_len bytes); @p frame_len is the length the parser
 * was told, which bounds every offset.
 */
static void check_desc(const struct droce_pkt *pkt, const uint8_t *frame, size_t frame_len,
		       const struct droce_parse_cfg *cfg)
{
	const struct droce_opcode_info *info = droce_opcode_info(pkt->opcode);
	const uint8_t *l3 = frame + pkt->l3_off;
	const uint8_t *udp, *bth;
	size_t ip_end;

	FUZZ_CHECK(droce_opcode_is_valid(pkt->opcode));
	FUZZ_CHECK(pkt->mask == info->mask);
	FUZZ_CHECK((pkt->flags & ~(DROCE_PKT_IPV6 | DROCE_PKT_VLAN)) == 0);
	FUZZ_CHECK(pkt->l3_off == ETH_LEN + ((pkt->flags & DROCE_PKT_VLAN) ? VLAN_LEN : 0));
	FUZZ_CHECK(get_be16(frame + pkt->l3_off - 2) ==
		   ((pkt->flags & DROCE_PKT_IPV6) ? DROCE_ETHERTYPE_IPV6 : DROCE_ETHERTYPE_IPV4));
	if (pkt->flags & DROCE_PKT_VLAN) {
		FUZZ_CHECK(get_be16(frame + ETH_LEN - 2) == DROCE_ETHERTYPE_VLAN);
		FUZZ_CHECK(pkt->vlan_tci == get_be16(frame + ETH_LEN));
	} else {
		FUZZ_CHECK(pkt->vlan_tci == 0);
	}

	/* offsets chain up and stay inside the frame */
	FUZZ_CHECK(pkt->bth_off == pkt->l3_off + pkt->ip_hdr_len + UDP_LEN);
	FUZZ_CHECK(pkt->bth_off + info->hdr_len == pkt->payload_off);
	FUZZ_CHECK(pkt->payload_off + pkt->payload_len + pkt->pad == pkt->icrc_off);
	FUZZ_CHECK((size_t)pkt->icrc_off + DROCE_ICRC_LEN <= frame_len);
	FUZZ_CHECK(pkt->pad <= 3 && ((pkt->payload_len + pkt->pad) & 3) == 0);
	FUZZ_CHECK(pkt->payload_len <= cfg->max_payload);
	if (!(pkt->mask & DROCE_OPM_PAYLOAD))
		FUZZ_CHECK(pkt->payload_len == 0 && pkt->pad == 0);

	/* the IP header read back says the same */
	if (pkt->flags & DROCE_PKT_IPV6) {
		FUZZ_CHECK(pkt->ip_hdr_len == IPV6_LEN);
		FUZZ_CHECK(l3[0] >> 4 == 6 && l3[6] == DROCE_IPPROTO_UDP);
		ip_end = pkt->l3_off + IPV6_LEN + get_be16(l3 + 4);
	} else {
		FUZZ_CHECK(pkt->ip_hdr_len >= IPV4_LEN && pkt->ip_hdr_len <= 60);
		FUZZ_CHECK(pkt->ip_hdr_len == (l3[0] & 0x0f) * 4 && l3[0] >> 4 == 4);
		FUZZ_CHECK(l3[9] == DROCE_IPPROTO_UDP);
		FUZZ_CHECK((get_be16(l3 + 6) & (DROCE_IPV4_MF | DROCE_IPV4_FRAG_OFF_MASK)) == 0);
		ip_end = pkt->l3_off + get_be16(l3 + 2);
	}
	/* the ICRC is the last thing in the IP datagram and in the UDP datagram */
	udp = frame + pkt->bth_off - UDP_LEN;
	FUZZ_CHECK(ip_end == (size_t)pkt->icrc_off + DROCE_ICRC_LEN);
	FUZZ_CHECK((size_t)pkt->bth_off - UDP_LEN + get_be16(udp + 4) == ip_end);
	FUZZ_CHECK(get_be16(udp + 2) == cfg->udp_port);

	/* the BTH read back says the same */
	bth = frame + pkt->bth_off;
	FUZZ_CHECK(bth[0] == pkt->opcode);
	FUZZ_CHECK((bth[1] & DROCE_BTH_TVER_MASK) == DROCE_BTH_TVER);
	FUZZ_CHECK(((bth[1] & DROCE_BTH_PAD_MASK) >> DROCE_BTH_PAD_SHIFT) == pkt->pad);
	FUZZ_CHECK(pkt->qpn == (get_be32(bth + 4) & DROCE_BTH_QPN_MASK));
	FUZZ_CHECK(pkt->psn == (get_be32(bth + 8) & DROCE_BTH_PSN_MASK));
}

/* ------------------------------------------------------------ rebuild */

/*
 * The frame droce_build_frame() must produce from an accepted frame, over
 * [0, icrc_off + 4) of the original. The builder writes everything it can
 * represent from droce_pkt_addr() and droce_pkt_fields(), and fixed values
 * for the rest, so these bytes of the original are brought to what the
 * builder writes; every other byte must be identical:
 *
 *  - IPv4 options: struct droce_addr has none and the builder always writes
 *    IHL 5, so they are removed (IHL and total length adjusted, every later
 *    offset moves back by their length).
 *  - IPv4 flags bit 0x8000 (reserved, RFC 791): written as zero. DF is kept
 *    (droce_addr.ipv4_df); MF and the fragment offset are never accepted.
 *  - UDP checksum: the builder always writes 0 (annex A17: the ICRC
 *    protects the packet).
 *  - BTH resv6 (the 6 bits after FECN/BECN) and resv7 (after AckReq), DETH
 *    resv8 (before SrcQP), the 16 reserved bytes of a CNP, and the pad bytes:
 *    IBTA 9.2 and annex A17 make them reserved or zero, the builder writes 0.
 *
 * The IPv4 checksum is recomputed (by the oracle, not by lib/wire) only when
 * one of the IPv4 header bytes above changed, and the ICRC only when a byte it
 * covers changed (IPv4 options or flags, resv7, resv8, CNP, pad: TOS, TTL,
 * the two checksums and the FECN/BECN/resv6 byte are masked out of the ICRC).
 * For a frame that sets none of these, which includes every frame of the
 * captures, the builder's bytes must equal the received bytes exactly.
 * Bytes after the ICRC (Ethernet padding) are not part of the packet.
 *
 * Returns the canonical length; @p c holds at least icrc_off + 4 bytes.
 */
static size_t canonical_frame(uint8_t *c, const uint8_t *frame, const struct droce_pkt *pkt)
{
	const struct droce_opcode_info *info = droce_opcode_info(pkt->opcode);
	size_t l3 = pkt->l3_off, opt = 0, bth, end, i;
	bool ipv6 = pkt->flags & DROCE_PKT_IPV6;
	bool ip_changed = false, icrc_changed = false;

	memcpy(c, frame, l3);
	if (ipv6) {
		memcpy(c + l3, frame + l3, (size_t)pkt->icrc_off + DROCE_ICRC_LEN - l3);
	} else {
		opt = pkt->ip_hdr_len - IPV4_LEN;
		memcpy(c + l3, frame + l3, IPV4_LEN);
		memcpy(c + l3 + IPV4_LEN, frame + pkt->bth_off - UDP_LEN,
		       (size_t)pkt->icrc_off + DROCE_ICRC_LEN - (pkt->bth_off - UDP_LEN));
		if (opt != 0) {
			c[l3] = 0x45;
			put_be16(c + l3 + 2, (uint16_t)(get_be16(c + l3 + 2) - opt));
			ip_changed = true;
		}
		if (c[l3 + 6] & 0x80) {
			c[l3 + 6] &= 0x7f;
			ip_changed = true;
		}
		if (ip_changed)
			oracle_ipv4_csum_set(c + l3, IPV4_LEN);
		icrc_changed = ip_changed;
	}
	bth = pkt->bth_off - opt;
	end = (size_t)pkt->icrc_off - opt;

	put_be16(c + bth - 2, 0); /* UDP checksum, masked out of the ICRC */
	c[bth + 4] &= 0xc0;       /* BTH resv6, masked out of the ICRC */
	if (c[bth + 8] & 0x7f) {  /* BTH resv7 */
		c[bth + 8] &= 0x80;
		icrc_changed = true;
	}
	if ((pkt->mask & DROCE_OPM_DETH) && c[bth + info->offset[DROCE_HDR_DETH] + 4] != 0) {
		c[bth + info->offset[DROCE_HDR_DETH] + 4] = 0;
		icrc_changed = true;
	}
	if (pkt->mask & DROCE_OPM_CNP) {
		for (i = 0; i < sizeof(struct droce_cnp); i++) {
			uint8_t *b = c + bth + info->offset[DROCE_HDR_CNP] + i;

			icrc_changed |= *b != 0;
			*b = 0;
		}
	}
	for (i = end - pkt->pad; i < end; i++) {
		icrc_changed |= c[i] != 0;
		c[i] = 0;
	}
	if (icrc_changed)
		put_le32(c + end, oracle_icrc(c + l3, ipv6 ? IPV6_LEN : IPV4_LEN, ipv6, end - l3));
	return end + DROCE_ICRC_LEN;
}

/*
 * Rebuild an accepted frame from its descriptor; the rebuilt frame must parse
 * back to the same values under the strictest settings, and, when @p strict
 * (the original passed both checksums), equal the canonical original.
 */
static void check_rebuild(const uint8_t *frame, const struct droce_pkt *pkt,
			  const struct droce_parse_cfg *cfg, bool strict)
{
	struct droce_parse_cfg rcfg = *cfg;
	struct droce_hdr_fields f, rf;
	struct droce_addr a, ra;
	struct droce_pkt rpkt;
	enum droce_parse_status rst;
	uint16_t ip_id, rip_id;
	size_t flen, clen, shift, i;
	uint8_t *out, *canon, *trailer;
	ssize_t n;

	fuzz_stage = "rebuild";
	droce_pkt_fields(pkt, frame, &f);
	droce_pkt_addr(pkt, frame, &a, &ip_id);
	FUZZ_CHECK(f.opcode == pkt->opcode && f.dqpn == pkt->qpn && f.psn == pkt->psn);
	FUZZ_CHECK(f.tver == DROCE_BTH_TVER);
	FUZZ_CHECK(a.ipv6 == !!(pkt->flags & DROCE_PKT_IPV6));
	FUZZ_CHECK(a.has_vlan == !!(pkt->flags & DROCE_PKT_VLAN));
	FUZZ_CHECK(a.vlan_tci == pkt->vlan_tci && a.udp_dport == cfg->udp_port);
	if (a.ipv6)
		FUZZ_CHECK(ip_id == 0);

	flen = droce_frame_len(&a, f.opcode, pkt->payload_len);
	shift = a.ipv6 ? 0 : pkt->ip_hdr_len - IPV4_LEN;
	FUZZ_CHECK(flen == (size_t)pkt->icrc_off + DROCE_ICRC_LEN - shift);
	/* exactly the frame's size: ASan sees any write past it */
	out = malloc(flen);
	FUZZ_CHECK(out != NULL);
	n = droce_build_frame(out, flen - 1, &a, ip_id, &f, frame + pkt->payload_off,
			      pkt->payload_len);
	FUZZ_CHECK(n == -ENOSPC);
	n = droce_build_frame(out, flen, &a, ip_id, &f, frame + pkt->payload_off, pkt->payload_len);
	FUZZ_CHECK_MSG(n == (ssize_t)flen, "droce_build_frame returned %zd, expected %zu", n, flen);

	/* what the builder writes, droce accepts under every check and reads back unchanged */
	fuzz_stage = "parse of the rebuilt frame";
	rcfg.verify_icrc = true;
	rcfg.verify_ip_csum = true;
	rst = droce_parse(out, flen, &rcfg, &rpkt);
	FUZZ_CHECK_MSG(rst == DROCE_PARSE_OK, "rebuilt frame parses as %s",
		       droce_parse_status_name[rst]);
	check_desc(&rpkt, out, flen, &rcfg);
	FUZZ_CHECK(rpkt.mask == pkt->mask && rpkt.opcode == pkt->opcode);
	FUZZ_CHECK(rpkt.qpn == pkt->qpn && rpkt.psn == pkt->psn);
	FUZZ_CHECK(rpkt.flags == pkt->flags && rpkt.vlan_tci == pkt->vlan_tci);
	FUZZ_CHECK(rpkt.l3_off == pkt->l3_off && rpkt.ip_hdr_len == pkt->ip_hdr_len - shift);
	FUZZ_CHECK(rpkt.payload_off == pkt->payload_off - shift);
	FUZZ_CHECK(rpkt.payload_len == pkt->payload_len && rpkt.pad == pkt->pad);
	FUZZ_CHECK(rpkt.icrc_off == pkt->icrc_off - shift);
	FUZZ_CHECK(memcmp(out + rpkt.payload_off, frame + pkt->payload_off, pkt->payload_len) == 0);
	droce_pkt_fields(&rpkt, out, &rf);
	droce_pkt_addr(&rpkt, out, &ra, &rip_id);
	FUZZ_CHECK(fields_equal(&f, &rf));
	FUZZ_CHECK(addr_equal(&a, &ra));
	FUZZ_CHECK(rip_id == ip_id);

	/* droce_build_trailer() writes the same pad and ICRC again */
	fuzz_stage = "droce_build_trailer on the rebuilt frame";
	trailer = malloc(flen);
	FUZZ_CHECK(trailer != NULL);
	memcpy(trailer, out, flen);
	memset(trailer + rpkt.payload_off + rpkt.payload_len, 0xa5, rpkt.pad);
	memset(trailer + rpkt.icrc_off, 0, DROCE_ICRC_LEN);
	droce_build_trailer(trailer, &rpkt);
	FUZZ_CHECK(memcmp(trailer, out, flen) == 0);
	free(trailer);

	if (strict) {
		fuzz_stage = "byte comparison of the rebuilt frame with the received one";
		canon = malloc((size_t)pkt->icrc_off + DROCE_ICRC_LEN);
		FUZZ_CHECK(canon != NULL);
		clen = canonical_frame(canon, frame, pkt);
		FUZZ_CHECK(clen == flen);
		for (i = 0; i < flen && out[i] == canon[i]; i++)
			;
		if (i < flen) {
			fuzz_hexdump("received", frame, (size_t)pkt->icrc_off + DROCE_ICRC_LEN, i);
			fuzz_hexdump("expected (received, canonical)", canon, clen, i);
			fuzz_hexdump("rebuilt", out, flen, i);
			fuzz_fail(__LINE__, "rebuilt frame differs at byte %zu", i);
		}
		free(canon);
	}
	free(out);
}

/* ------------------------------------------------------------ the parses */

/*
 * Make the IP and UDP lengths of a frame reach its last byte (read from the
 * bytes, not through the parser), then, if the parser accepts the result with
 * both checks off, bring its IPv4 checksum and its ICRC to their right values.
 */
static void fixup_frame(uint8_t *frame, size_t len, const struct droce_parse_cfg *cfg)
{
	struct droce_parse_cfg lax = *cfg;
	struct droce_pkt pkt;
	size_t l3 = ETH_LEN, ihl;
	uint16_t type;

	fuzz_stage = "frame repair";
	if (len < ETH_LEN + VLAN_LEN || len - ETH_LEN > UINT16_MAX)
		return;
	type = get_be16(frame + ETH_LEN - 2);
	if (type == DROCE_ETHERTYPE_VLAN) {
		type = get_be16(frame + ETH_LEN + 2);
		l3 += VLAN_LEN;
	}
	if (type == DROCE_ETHERTYPE_IPV4 && len >= l3 + IPV4_LEN) {
		ihl = (frame[l3] & 0x0f) * 4u;
		put_be16(frame + l3 + 2, (uint16_t)(len - l3));
		if (ihl >= IPV4_LEN && len >= l3 + ihl + UDP_LEN)
			put_be16(frame + l3 + ihl + 4, (uint16_t)(len - l3 - ihl));
	} else if (type == DROCE_ETHERTYPE_IPV6 && len >= l3 + IPV6_LEN + UDP_LEN) {
		put_be16(frame + l3 + 4, (uint16_t)(len - l3 - IPV6_LEN));
		put_be16(frame + l3 + IPV6_LEN + 4, (uint16_t)(len - l3 - IPV6_LEN));
	}

	lax.verify_icrc = false;
	lax.verify_ip_csum = false;
	if (droce_parse(frame, len, &lax, &pkt) != DROCE_PARSE_OK)
		return;
	check_desc(&pkt, frame, len, &lax);
	if (!(pkt.flags & DROCE_PKT_IPV6))
		oracle_ipv4_csum_set(frame + pkt.l3_off, pkt.ip_hdr_len);
	put_le32(frame + pkt.icrc_off,
		 oracle_icrc(frame + pkt.l3_off, pkt.ip_hdr_len, pkt.flags & DROCE_PKT_IPV6,
			     (size_t)(pkt.icrc_off - pkt.l3_off)));
}

/*
 * @p len bytes as a CM MAD and as rdma_cm private data, in a buffer of exactly that size.
 * Every bit of a message belongs to one field: an accepted MAD re-encodes to its own bytes.
 */
static void fuzz_mad(const uint8_t *bytes, size_t len)
{
	static struct droce_cm_decoded d;
	struct droce_cma_fields c;
	enum droce_mad_status st;
	uint8_t *mad = malloc(len ? len : 1), out[DROCE_MAD_LEN];

	fuzz_stage = "CM MAD";
	FUZZ_CHECK(mad != NULL);
	if (len != 0)
		memcpy(mad, bytes, len);
	st = droce_cm_decode(mad, len, &d);
	FUZZ_CHECK((unsigned)st < DROCE_MAD_STATUS_COUNT);
	if (st == DROCE_MAD_OK) {
		FUZZ_CHECK(droce_cm_encode(out, sizeof(out), &d) == DROCE_MAD_LEN);
		FUZZ_CHECK(memcmp(out, mad, DROCE_MAD_LEN) == 0);
	}
	/* the refusal of a LAP reads only what it was given: a LAP parse accepts, nothing else */
	FUZZ_CHECK((droce_cm_apr_refuse(out, sizeof(out), mad, len) == 0) ==
		   (st == DROCE_MAD_OK && d.msg == DROCE_CM_LAP));
	if (droce_cma_hdr_decode(mad, len, &c) == 0) {
		FUZZ_CHECK(droce_cma_hdr_encode(out, sizeof(out), &c) == 0);
		FUZZ_CHECK(memcmp(out, mad, DROCE_CMA_HDR_LEN) == 0);
	}
	free(mad);
}

/* droce_parse() of the whole frame; @p ref gets the parse without the ICRC check. */
static void fuzz_contiguous(const uint8_t *frame, size_t len, const struct droce_parse_cfg *cfg,
			    enum droce_parse_status *ref_st, struct droce_pkt *ref)
{
	struct droce_parse_cfg nocrc = *cfg;
	enum droce_parse_status st;
	struct droce_pkt pkt;
	uint32_t icrc;

	fuzz_stage = "droce_parse";
	nocrc.verify_icrc = false;
	*ref_st = droce_parse(frame, len, &nocrc, ref);
	FUZZ_CHECK((unsigned)*ref_st < DROCE_PARSE_STATUS_COUNT && *ref_st != DROCE_PARSE_BAD_ICRC);
	st = droce_parse(frame, len, cfg, &pkt);
	FUZZ_CHECK((unsigned)st < DROCE_PARSE_STATUS_COUNT);
	FUZZ_CHECK(droce_parse_status_name[st] != NULL);
	/* the ICRC is the last check: without it the same frame gives the same answer */
	if (st == DROCE_PARSE_BAD_ICRC)
		FUZZ_CHECK(cfg->verify_icrc && *ref_st == DROCE_PARSE_OK);
	else
		FUZZ_CHECK(st == *ref_st);
	if (st != DROCE_PARSE_OK && st != DROCE_PARSE_BAD_ICRC)
		return;
	FUZZ_CHECK(pkt_equal(&pkt, ref));
	check_desc(&pkt, frame, len, cfg);
	FUZZ_CHECK((unsigned)droce_gsi_parse(&pkt, frame, NULL) < DROCE_MAD_STATUS_COUNT);
	fuzz_mad(frame + pkt.payload_off, pkt.payload_len);

	/* ICRC and IPv4 checksum against the oracles */
	icrc = oracle_icrc(frame + pkt.l3_off, pkt.ip_hdr_len, pkt.flags & DROCE_PKT_IPV6,
			   (size_t)(pkt.icrc_off - pkt.l3_off));
	FUZZ_CHECK(droce_pkt_icrc_calc(&pkt, frame) == icrc);
	if (cfg->verify_icrc)
		FUZZ_CHECK((st == DROCE_PARSE_OK) ==
			   (icrc == droce_icrc_load(frame + pkt.icrc_off)));
	if (cfg->verify_ip_csum && !(pkt.flags & DROCE_PKT_IPV6))
		FUZZ_CHECK(oracle_ipv4_sum(frame + pkt.l3_off, pkt.ip_hdr_len) == 0xffff);

	check_rebuild(frame, &pkt, cfg,
		      st == DROCE_PARSE_OK && cfg->verify_icrc && cfg->verify_ip_csum);
}

/*
 * droce_parse_hdrs() given only the first @p hdr_len bytes, in a buffer of that
 * size. From min(len, DROCE_PARSE_HDR_MAX) bytes on (the documented minimum)
 * the answer is the contiguous one. Below it a header past hdr_len is reported
 * as truncated.
 */
static void fuzz_split_one(const uint8_t *frame, size_t len, size_t hdr_len,
			   const struct droce_parse_cfg *cfg, enum droce_parse_status ref_st,
			   const struct droce_pkt *ref)
{
	size_t contract = len < DROCE_PARSE_HDR_MAX ? len : DROCE_PARSE_HDR_MAX;
	enum droce_parse_status st;
	struct droce_hdr_fields f;
	struct droce_addr a;
	struct droce_pkt pkt;
	uint16_t ip_id;
	uint8_t *hdr;
	bool ok;

	fuzz_stage = "droce_parse_hdrs (split)";
	/* exactly hdr_len bytes (malloc(0) gives ASan a chunk with no usable byte) */
	hdr = malloc(hdr_len);
	FUZZ_CHECK(hdr != NULL);
	if (hdr_len != 0)
		memcpy(hdr, frame, hdr_len);
	st = droce_parse_hdrs(hdr, hdr_len, len, cfg, &pkt);
	FUZZ_CHECK((unsigned)st < DROCE_PARSE_STATUS_COUNT && st != DROCE_PARSE_BAD_ICRC);
	if (hdr_len >= contract)
		ok = st == ref_st;
	else
		ok = st == ref_st || is_trunc(st);
	FUZZ_CHECK_MSG(ok, "%zu of %zu header bytes: %s, contiguous: %s", hdr_len, len,
		       droce_parse_status_name[st], droce_parse_status_name[ref_st]);
	if (st == DROCE_PARSE_OK) {
		/*
		 * Accepted from a segment: every header is in the segment, and is
		 * read from it alone (ASan sees a read past hdr_len), as a caller does.
		 */
		FUZZ_CHECK(ref_st == DROCE_PARSE_OK && pkt_equal(&pkt, ref));
		FUZZ_CHECK_MSG(pkt.payload_off <= hdr_len,
			       "accepted with headers up to byte %u beyond the %zu given",
			       pkt.payload_off, hdr_len);
		check_desc(&pkt, hdr, len, cfg);
		droce_pkt_fields(&pkt, hdr, &f);
		droce_pkt_addr(&pkt, hdr, &a, &ip_id);
	}
	free(hdr);
}

static void fuzz_split(const uint8_t *frame, size_t len, uint8_t sel,
		       const struct droce_parse_cfg *cfg, enum droce_parse_status ref_st,
		       const struct droce_pkt *ref)
{
	if (len == 0)
		return;
	/* any length short of the frame, then exactly the documented minimum */
	fuzz_split_one(frame, len, sel % len, cfg, ref_st, ref);
	if (len > DROCE_PARSE_HDR_MAX)
		fuzz_split_one(frame, len, DROCE_PARSE_HDR_MAX, cfg, ref_st, ref);
}

/*
 * droce_parse_hdrs() told the frame is @p extra bytes longer than the bytes it
 * is given (a multi-segment frame of which only the first is at hand): lengths
 * up to and past the 16-bit offsets, without a 64 KiB input.
 */
static void fuzz_long_frame(const uint8_t *frame, size_t len, size_t extra,
			    const struct droce_parse_cfg *cfg, enum droce_parse_status ref_st,
			    const struct droce_pkt *ref)
{
	size_t frame_len = len + extra;
	enum droce_parse_status st;
	struct droce_pkt pkt;

	fuzz_stage = "droce_parse_hdrs (long frame)";
	st = droce_parse_hdrs(frame, len, frame_len, cfg, &pkt);
	FUZZ_CHECK((unsigned)st < DROCE_PARSE_STATUS_COUNT && st != DROCE_PARSE_BAD_ICRC);
	if (frame_len > UINT16_MAX)
		FUZZ_CHECK(st == DROCE_PARSE_BAD_IP_LEN);
	if (extra == 0)
		FUZZ_CHECK(st == ref_st && (st != DROCE_PARSE_OK || pkt_equal(&pkt, ref)));
	if (st == DROCE_PARSE_OK) {
		FUZZ_CHECK_MSG(pkt.payload_off <= len,
			       "accepted with headers up to byte %u beyond the %zu given",
			       pkt.payload_off, len);
		check_desc(&pkt, frame, frame_len, cfg);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct droce_parse_cfg cfg;
	enum droce_parse_status ref_st;
	struct droce_pkt ref;
	uint8_t *frame;
	size_t len;

	if (size < FUZZ_PREFIX_LEN)
		return 0;
	cfg.verify_icrc = data[0] & FUZZ_CFG_VERIFY_ICRC;
	cfg.verify_ip_csum = data[0] & FUZZ_CFG_VERIFY_IP_CSUM;
	cfg.max_payload = fuzz_max_payload[(data[0] & FUZZ_CFG_MAX_PAYLOAD_MASK) >>
					   FUZZ_CFG_MAX_PAYLOAD_SHIFT];
	cfg.udp_port = (data[0] & FUZZ_CFG_ALT_PORT) ? FUZZ_ALT_PORT : DROCE_ROCEV2_UDP_PORT;
	fuzz_cfg = &cfg;
	FUZZ_CHECK(droce_crc32_set_impl((data[0] & FUZZ_CFG_CRC_ZLIB) ? DROCE_CRC_ZLIB
								      : DROCE_CRC_ISAL) == 0);

	/* exactly the frame's size: ASan sees any read past its end */
	len = size - FUZZ_PREFIX_LEN;
	frame = malloc(len);
	FUZZ_CHECK(frame != NULL);
	if (len != 0)
		memcpy(frame, data + FUZZ_PREFIX_LEN, len);
	if (data[0] & FUZZ_CFG_REPAIR)
		fixup_frame(frame, len, &cfg);

	fuzz_contiguous(frame, len, &cfg, &ref_st, &ref);
	fuzz_split(frame, len, data[1], &cfg, ref_st, &ref);
	fuzz_long_frame(frame, len, get_be16(data + 2), &cfg, ref_st, &ref);
	fuzz_mad(frame, len);

	free(frame);
	fuzz_cfg = NULL;
	fuzz_stage = "";
	return 0;
}
