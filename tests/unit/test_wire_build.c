/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frames built by lib/wire: every opcode round-trips through the parser with
 * its field values, lengths and checksums are right, and bad requests are
 * refused with the documented errno.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <droce_wire.h>

static const struct droce_addr addr4 = {
	.dst_mac = {0x52, 0x54, 0x00, 0x00, 0x00, 0x02},
	.src_mac = {0x52, 0x54, 0x00, 0x00, 0x00, 0x03},
	.ipv4_df = true,
	.src_ip = {10, 99, 0, 3},
	.dst_ip = {10, 99, 0, 2},
	.tclass = 0x68,
	.ttl = 64,
	.udp_sport = 0xc121,
	.udp_dport = DROCE_ROCEV2_UDP_PORT,
};

/* Distinct values in every field so a swapped or dropped field shows. */
static struct droce_hdr_fields sample_fields(uint8_t opcode)
{
	return (struct droce_hdr_fields){
		.opcode = opcode,
		.se = true,
		.mig = true,
		.fecn = true,
		.becn = false,
		.ackreq = true,
		.pkey = 0x8001,
		.dqpn = 0xabcdef,
		.psn = 0xfedcba,
		.reth = {.va = 0x0123456789abcdefull, .rkey = 0x11223344, .len = 0x55667788},
		.aeth = {.syndrome = 0x61, .msn = 0x123456},
		.atmeth = {.va = 0x1000,
			   .rkey = 0x99,
			   .swap_add = 0xaaaabbbbccccddddull,
			   .compare = 0x1111222233334444ull},
		.atmack_orig = 0x5555666677778888ull,
		.deth = {.qkey = 0x80010002, .sqpn = 0x000abc},
		.imm_be = htobe32(0xdeadbeef),
		.ieth_rkey = 0xcafef00d,
	};
}

/* The fields the parser must give back: those the opcode carries, others zero. */
static void expect_fields_equal(const struct droce_hdr_fields *got,
				const struct droce_hdr_fields *sent, uint32_t mask)
{
	cr_expect_eq(got->opcode, sent->opcode);
	cr_expect_eq(got->se, sent->se, "opcode 0x%02x SE", sent->opcode);
	cr_expect_eq(got->mig, sent->mig);
	cr_expect_eq(got->fecn, sent->fecn);
	cr_expect_eq(got->becn, sent->becn);
	cr_expect_eq(got->ackreq, sent->ackreq);
	cr_expect_eq(got->pkey, sent->pkey);
	cr_expect_eq(got->dqpn, sent->dqpn);
	cr_expect_eq(got->psn, sent->psn);
	if (mask & DROCE_OPM_RETH) {
		cr_expect_eq(got->reth.va, sent->reth.va);
		cr_expect_eq(got->reth.rkey, sent->reth.rkey);
		cr_expect_eq(got->reth.len, sent->reth.len);
	}
	if (mask & DROCE_OPM_AETH) {
		cr_expect_eq(got->aeth.syndrome, sent->aeth.syndrome);
		cr_expect_eq(got->aeth.msn, sent->aeth.msn);
	}
	if (mask & DROCE_OPM_ATMETH) {
		cr_expect_eq(got->atmeth.va, sent->atmeth.va);
		cr_expect_eq(got->atmeth.rkey, sent->atmeth.rkey);
		cr_expect_eq(got->atmeth.swap_add, sent->atmeth.swap_add);
		cr_expect_eq(got->atmeth.compare, sent->atmeth.compare);
	}
	if (mask & DROCE_OPM_ATMACK)
		cr_expect_eq(got->atmack_orig, sent->atmack_orig);
	if (mask & DROCE_OPM_DETH) {
		cr_expect_eq(got->deth.qkey, sent->deth.qkey);
		cr_expect_eq(got->deth.sqpn, sent->deth.sqpn);
	}
	if (mask & DROCE_OPM_IMMDT)
		cr_expect_eq(got->imm_be, sent->imm_be);
	if (mask & DROCE_OPM_IETH)
		cr_expect_eq(got->ieth_rkey, sent->ieth_rkey);
}

static void round_trip_all_opcodes(const struct droce_addr *a)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	uint8_t payload[7] = {1, 2, 3, 4, 5, 6, 7};
	uint8_t frame[512];
	unsigned op;
	int checked = 0;

	for (op = 0; op < 256; op++) {
		const struct droce_opcode_info *info = droce_opcode_info((uint8_t)op);
		struct droce_hdr_fields f = sample_fields((uint8_t)op), got;
		uint32_t len = (info->mask & DROCE_OPM_PAYLOAD) ? sizeof(payload) : 0;
		struct droce_pkt pkt;
		ssize_t n;

		if (info->name == NULL)
			continue;
		n = droce_build_frame(frame, sizeof(frame), a, 1, &f, payload, len);
		cr_assert_gt(n, 0, "%s: %zd", info->name, n);
		cr_assert_eq((size_t)n, droce_frame_len(a, (uint8_t)op, len), "%s length",
			     info->name);
		cr_assert_eq(droce_parse(frame, (size_t)n, &cfg, &pkt), DROCE_PARSE_OK, "%s",
			     info->name);
		cr_expect_eq(pkt.payload_len, len, "%s payload", info->name);
		cr_expect_arr_eq(frame + pkt.payload_off, payload, len, "%s payload", info->name);
		droce_pkt_fields(&pkt, frame, &got);
		expect_fields_equal(&got, &f, info->mask);
		checked++;
	}
	cr_assert_eq(checked, 23 + 12 + 2 + 1, "every RC, UC, UD and CNP opcode was built");
}

Test(build, every_opcode_ipv4)
{
	round_trip_all_opcodes(&addr4);
}

Test(build, every_opcode_ipv6)
{
	struct droce_addr a = addr4;

	a.ipv6 = true;
	a.flow_label = 0x12345;
	round_trip_all_opcodes(&a);
}

Test(build, every_opcode_vlan)
{
	struct droce_addr a = addr4;

	a.has_vlan = true;
	a.vlan_tci = 0xe00a;
	round_trip_all_opcodes(&a);
}

Test(build, address_template_round_trip)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct droce_hdr_fields f = sample_fields(DROCE_OP_RC_ACK);
	struct droce_addr a = addr4, got;
	struct droce_pkt pkt;
	uint8_t frame[128];
	uint16_t id;
	ssize_t n;

	a.ipv6 = true;
	a.has_vlan = true;
	a.vlan_tci = 5;
	a.flow_label = 0xfffff;
	a.tclass = 0x02;
	a.ipv4_df = false;
	memset(a.src_ip, 0xfd, 16);
	memset(a.dst_ip, 0xfe, 16);
	n = droce_build_frame(frame, sizeof(frame), &a, 0, &f, NULL, 0);
	cr_assert_eq(droce_parse(frame, (size_t)n, &cfg, &pkt), DROCE_PARSE_OK);
	droce_pkt_addr(&pkt, frame, &got, &id);
	cr_expect_arr_eq(&got, &a, sizeof(a));
	cr_expect_eq(id, 0);
}

Test(build, ipv4_header_fields)
{
	struct droce_hdr_fields f = sample_fields(DROCE_OP_RC_SEND_ONLY);
	const struct droce_ipv4_hdr *ip;
	const struct droce_udp_hdr *udp;
	uint8_t frame[256];
	ssize_t n = droce_build_frame(frame, sizeof(frame), &addr4, 0x5151, &f, "abcde", 5);

	cr_assert_eq(n, 14 + 20 + 8 + 12 + 5 + 3 + 4);
	ip = (const void *)(frame + 14);
	udp = (const void *)(frame + 34);
	cr_expect_eq(frame[12], 0x08);
	cr_expect_eq(frame[13], 0x00);
	cr_expect_eq(ip->version_ihl, 0x45);
	cr_expect_eq(ip->tos, 0x68);
	cr_expect_eq(droce_ipv4_total_len(ip), n - 14);
	cr_expect_eq(droce_ipv4_id(ip), 0x5151);
	cr_expect_eq(droce_ipv4_frag_off(ip), DROCE_IPV4_DF);
	cr_expect_eq(ip->ttl, 64);
	cr_expect_eq(ip->proto, 17);
	cr_expect_eq(ip->csum, droce_ipv4_csum(ip, 20));
	cr_expect_eq(droce_udp_sport(udp), 0xc121);
	cr_expect_eq(droce_udp_dport(udp), 4791);
	cr_expect_eq(droce_udp_len(udp), n - 34);
	cr_expect_eq(udp->csum, 0, "Linux and RoCE NICs send a zero UDP checksum");
}

Test(build, ipv4_checksum_known_vector)
{
	/* the classic example header 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7 */
	static const uint8_t hdr[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
					0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};

	cr_expect_eq(be16toh(droce_ipv4_csum((const void *)hdr, 20)), 0xb861);
}

Test(build, pad_bytes_are_zero_and_counted)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	uint8_t payload[8], frame[256];
	uint32_t len;

	memset(payload, 0xee, sizeof(payload));
	for (len = 1; len <= 8; len++) {
		struct droce_hdr_fields f = sample_fields(DROCE_OP_UC_SEND_ONLY);
		struct droce_pkt pkt;
		ssize_t n = droce_build_frame(frame, sizeof(frame), &addr4, 0, &f, payload, len);
		uint8_t pad = (uint8_t)((4 - len % 4) % 4);
		uint8_t zeros[3] = {0};

		cr_assert_eq(droce_parse(frame, (size_t)n, &cfg, &pkt), DROCE_PARSE_OK);
		cr_expect_eq(pkt.pad, pad, "payload %u", len);
		cr_expect_eq(droce_pad_len(len), pad);
		cr_expect_arr_eq(frame + pkt.payload_off + len, zeros, pad);
	}
}

Test(build, trailer_recomputes_icrc)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct droce_hdr_fields f = sample_fields(DROCE_OP_RC_WRITE_ONLY);
	struct droce_pkt pkt;
	uint8_t frame[256];
	ssize_t n = droce_build_frame(frame, sizeof(frame), &addr4, 0, &f, "xyz", 3);

	cr_assert_eq(droce_parse(frame, (size_t)n, &cfg, &pkt), DROCE_PARSE_OK);
	frame[pkt.payload_off] = 'X';
	frame[pkt.payload_off + 3] = 0x77; /* pad byte */
	cr_expect_eq(droce_parse(frame, (size_t)n, &cfg, &pkt), DROCE_PARSE_BAD_ICRC);
	droce_build_trailer(frame, &pkt);
	cr_expect_eq(frame[pkt.payload_off + 3], 0);
	cr_expect_eq(droce_parse(frame, (size_t)n, &cfg, &pkt), DROCE_PARSE_OK);
}

Test(build, hdrs_length_and_lengths_cover_payload)
{
	struct droce_hdr_fields f = sample_fields(DROCE_OP_RC_WRITE_FIRST);
	uint8_t frame[128];
	ssize_t n = droce_build_hdrs(frame, sizeof(frame), &addr4, 0, &f, 4096);

	cr_assert_eq(n, 14 + 20 + 8 + 12 + 16);
	cr_expect_eq(droce_ipv4_total_len((const void *)(frame + 14)), 20 + 8 + 12 + 16 + 4096 + 4);
}

Test(build, refuses_invalid_opcode)
{
	struct droce_hdr_fields f = sample_fields(0x15);
	uint8_t frame[128];

	cr_expect_eq(droce_build_frame(frame, sizeof(frame), &addr4, 0, &f, NULL, 0), -EINVAL);
}

Test(build, refuses_payload_on_ack)
{
	struct droce_hdr_fields f = sample_fields(DROCE_OP_RC_ACK);
	uint8_t frame[128];

	cr_expect_eq(droce_build_frame(frame, sizeof(frame), &addr4, 0, &f, "abcd", 4), -EINVAL);
}

Test(build, refuses_short_buffer)
{
	struct droce_hdr_fields f = sample_fields(DROCE_OP_RC_SEND_ONLY);
	uint8_t frame[128];

	cr_expect_eq(droce_build_hdrs(frame, 14 + 20 + 8 + 11, &addr4, 0, &f, 0), -ENOSPC);
	cr_expect_eq(
		droce_build_frame(frame, 14 + 20 + 8 + 12 + 8 + 3, &addr4, 0, &f, "12345678", 8),
		-ENOSPC);
}

Test(build, refuses_oversized_frame)
{
	struct droce_hdr_fields f = sample_fields(DROCE_OP_RC_SEND_ONLY);
	uint8_t frame[128];

	cr_expect_eq(droce_build_hdrs(frame, sizeof(frame), &addr4, 0, &f, 65536), -EMSGSIZE);
}

Test(build, udp_sport_of_linux_captures)
{
	/* ibv_rc_pingpong between QPN 0x11 and QPN 0x11 used source port 49441 */
	cr_expect_eq(droce_udp_sport_for_qps(0, 0x11, 0x11), 49441);
}

Test(build, udp_sport_in_rocev2_range)
{
	uint32_t q;

	for (q = 1; q < 5000; q += 7)
		cr_expect_geq(droce_udp_sport_for_qps(0, q, q * 31 + 5), 0xc000);
}

Test(build, udp_sport_symmetric_in_qpns)
{
	cr_expect_eq(droce_udp_sport_for_qps(0, 0x12, 0x345),
		     droce_udp_sport_for_qps(0, 0x345, 0x12));
}

Test(build, udp_sport_uses_flow_label)
{
	/* a given flow label wins over the QPNs: 14 low bits folded with the 6 high ones */
	cr_expect_eq(droce_udp_sport_for_qps(0x00001, 0x11, 0x22), 0xc001);
	cr_expect_eq(droce_udp_sport_for_qps(0xfc000, 0x11, 0x22), 0xc03f);
}

Test(build, flow_label_from_qpns)
{
	cr_expect_eq(droce_flow_label_from_qpns(0x11, 0x11), 0x121);
	cr_expect_leq(droce_flow_label_from_qpns(0xffffff, 0xffffff), 0xfffff);
}
