/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parser rejects every kind of malformed frame with its own reason, and
 * never accepts a truncated one. Frames start valid (built by lib/wire, whose
 * output the capture tests tie to Linux's) and are broken one field at a time.
 */
#include <criterion/criterion.h>
#include <string.h>

#include <droce_wire.h>

static const struct droce_addr addr4 = {
	.dst_mac = {0x52, 0x54, 0x00, 0x00, 0x00, 0x02},
	.src_mac = {0x52, 0x54, 0x00, 0x00, 0x00, 0x03},
	.ipv4_df = true,
	.src_ip = {10, 99, 0, 3},
	.dst_ip = {10, 99, 0, 2},
	.ttl = 64,
	.udp_sport = 0xc121,
	.udp_dport = DROCE_ROCEV2_UDP_PORT,
};

static uint8_t frame[9000];
static size_t frame_len;
static struct droce_parse_cfg cfg;
static struct droce_pkt pkt;

/* A valid frame of @p opcode carrying @p len payload bytes (IPv4 unless addr says). */
static void build(const struct droce_addr *a, uint8_t opcode, uint32_t len)
{
	struct droce_hdr_fields f = {.opcode = opcode, .pkey = 0xffff, .dqpn = 0x11, .psn = 100};
	uint8_t payload[4096];
	ssize_t n;

	memset(payload, 0x5a, sizeof(payload));
	n = droce_build_frame(frame, sizeof(frame), a, 7, &f, payload, len);
	cr_assert_gt(n, 0, "building opcode 0x%02x failed: %zd", opcode, n);
	frame_len = (size_t)n;
	cfg = DROCE_PARSE_CFG_DEFAULT;
}

static enum droce_parse_status parse(void)
{
	return droce_parse(frame, frame_len, &cfg, &pkt);
}

static struct droce_ipv4_hdr *ip4(void)
{
	return (struct droce_ipv4_hdr *)(frame + sizeof(struct droce_eth_hdr));
}

static struct droce_udp_hdr *udp4(void)
{
	return (struct droce_udp_hdr *)(frame + 14 + 20);
}

static struct droce_bth *bth4(void)
{
	return (struct droce_bth *)(frame + 14 + 20 + 8);
}

static void fix_ip_csum(void)
{
	ip4()->csum = droce_ipv4_csum(ip4(), droce_ipv4_hdr_len(ip4()));
}

static void fix_icrc(void)
{
	droce_icrc_store(frame + frame_len - 4,
			 droce_icrc_calc(frame + 14, 20, false, frame_len - 4 - 14));
}

#define EXPECT_STATUS(want)                                                                 \
	do {                                                                                \
		enum droce_parse_status got_ = parse();                                     \
		cr_assert_eq(got_, want, "parsed as %s, expected %s",                       \
			     droce_parse_status_name[got_], droce_parse_status_name[want]); \
	} while (0)

/* ---- accepted */

Test(parse_ok, send_only_ipv4_descriptor)
{
	build(&addr4, DROCE_OP_RC_SEND_ONLY, 101);
	EXPECT_STATUS(DROCE_PARSE_OK);
	cr_expect_eq(pkt.opcode, DROCE_OP_RC_SEND_ONLY);
	cr_expect_eq(pkt.qpn, 0x11);
	cr_expect_eq(pkt.psn, 100);
	cr_expect_eq(pkt.l3_off, 14);
	cr_expect_eq(pkt.ip_hdr_len, 20);
	cr_expect_eq(pkt.bth_off, 42);
	cr_expect_eq(pkt.payload_off, 54);
	cr_expect_eq(pkt.payload_len, 101);
	cr_expect_eq(pkt.pad, 3);
	cr_expect_eq(pkt.icrc_off, 54 + 104);
	cr_expect_eq(pkt.mask, droce_opcode_table[DROCE_OP_RC_SEND_ONLY].mask);
	cr_expect_eq(pkt.flags, 0);
}

Test(parse_ok, ipv6_descriptor)
{
	struct droce_addr a = addr4;

	a.ipv6 = true;
	a.src_ip[0] = 0xfd;
	a.dst_ip[0] = 0xfd;
	build(&a, DROCE_OP_RC_WRITE_ONLY, 64);
	EXPECT_STATUS(DROCE_PARSE_OK);
	cr_expect_eq(pkt.flags, DROCE_PKT_IPV6);
	cr_expect_eq(pkt.ip_hdr_len, 40);
	cr_expect_eq(pkt.bth_off, 14 + 40 + 8);
	cr_expect_eq(pkt.payload_off, pkt.bth_off + 12 + 16);
}

Test(parse_ok, vlan_descriptor)
{
	struct droce_addr a = addr4;

	a.has_vlan = true;
	a.vlan_tci = 0x2064;
	build(&a, DROCE_OP_RC_ACK, 0);
	EXPECT_STATUS(DROCE_PARSE_OK);
	cr_expect_eq(pkt.flags, DROCE_PKT_VLAN);
	cr_expect_eq(pkt.vlan_tci, 0x2064);
	cr_expect_eq(pkt.l3_off, 18);
}

Test(parse_ok, zero_byte_send)
{
	build(&addr4, DROCE_OP_RC_SEND_ONLY, 0);
	EXPECT_STATUS(DROCE_PARSE_OK);
	cr_expect_eq(pkt.payload_len, 0);
	cr_expect_eq(pkt.pad, 0);
}

Test(parse_ok, payload_exactly_pmtu)
{
	build(&addr4, DROCE_OP_RC_SEND_MIDDLE, 1024);
	cfg.max_payload = 1024;
	EXPECT_STATUS(DROCE_PARSE_OK);
}

Test(parse_ok, ethernet_trailer_ignored)
{
	/* short frames are padded to 60 bytes on Ethernet: the IP length decides */
	build(&addr4, DROCE_OP_RC_ACK, 0);
	memset(frame + frame_len, 0, 8);
	frame_len += 8;
	EXPECT_STATUS(DROCE_PARSE_OK);
	cr_expect_eq(pkt.icrc_off + 4u, frame_len - 8);
}

Test(parse_ok, ipv4_options)
{
	/* IHL 6: four bytes of options sit between the IPv4 and UDP headers */
	build(&addr4, DROCE_OP_RC_SEND_ONLY, 8);
	memmove(frame + 14 + 24, frame + 14 + 20, frame_len - 34);
	memset(frame + 14 + 20, 0x01, 4); /* NOP options */
	frame_len += 4;
	ip4()->version_ihl = 0x46;
	ip4()->total_len = htobe16((uint16_t)(frame_len - 14));
	fix_ip_csum();
	droce_icrc_store(frame + frame_len - 4,
			 droce_icrc_calc(frame + 14, 24, false, frame_len - 4 - 14));
	EXPECT_STATUS(DROCE_PARSE_OK);
	cr_expect_eq(pkt.ip_hdr_len, 24);
	cr_expect_eq(pkt.bth_off, 14 + 24 + 8);
}

Test(parse_ok, count_by_reason)
{
	struct droce_parse_stats stats = {0};

	build(&addr4, DROCE_OP_RC_SEND_ONLY, 4);
	droce_parse_count(frame, frame_len, &cfg, &pkt, &stats);
	frame[frame_len - 5] ^= 1;
	droce_parse_count(frame, frame_len, &cfg, &pkt, &stats);
	droce_parse_count(frame, frame_len, &cfg, &pkt, &stats);
	cr_expect_eq(stats.count[DROCE_PARSE_OK], 1);
	cr_expect_eq(stats.count[DROCE_PARSE_BAD_ICRC], 2);
}

Test(parse_ok, every_status_has_a_name)
{
	int i;

	for (i = 0; i < DROCE_PARSE_STATUS_COUNT; i++)
		cr_expect_not_null(droce_parse_status_name[i], "status %d has no name", i);
}

/* ---- not RoCEv2: ignored, not an error */

Test(parse_not_roce, arp)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	frame[12] = 0x08;
	frame[13] = 0x06;
	EXPECT_STATUS(DROCE_PARSE_NOT_ROCE);
}

Test(parse_not_roce, tcp)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	ip4()->proto = 6;
	fix_ip_csum();
	EXPECT_STATUS(DROCE_PARSE_NOT_ROCE);
}

Test(parse_not_roce, other_udp_port)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	udp4()->dport = htobe16(4792);
	EXPECT_STATUS(DROCE_PARSE_NOT_ROCE);
}

Test(parse_not_roce, configured_port)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	cfg.udp_port = 4792;
	EXPECT_STATUS(DROCE_PARSE_NOT_ROCE);
}

Test(parse_not_roce, ipv6_extension_header)
{
	struct droce_addr a = addr4;

	a.ipv6 = true;
	build(&a, DROCE_OP_RC_ACK, 0);
	((struct droce_ipv6_hdr *)(frame + 14))->next_hdr = 0; /* hop-by-hop */
	EXPECT_STATUS(DROCE_PARSE_NOT_ROCE);
}

Test(parse_not_roce, later_ipv4_fragment)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	ip4()->frag_off = htobe16(0x0010); /* offset 128 bytes: no UDP header to see */
	fix_ip_csum();
	EXPECT_STATUS(DROCE_PARSE_NOT_ROCE);
}

/* ---- malformed: one reason each */

Test(parse_bad, trunc_l2)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	frame_len = 13;
	EXPECT_STATUS(DROCE_PARSE_TRUNC_L2);
}

Test(parse_bad, trunc_l2_vlan)
{
	struct droce_addr a = addr4;

	a.has_vlan = true;
	build(&a, DROCE_OP_RC_ACK, 0);
	frame_len = 17;
	EXPECT_STATUS(DROCE_PARSE_TRUNC_L2);
}

Test(parse_bad, trunc_ip)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	frame_len = 14 + 19;
	EXPECT_STATUS(DROCE_PARSE_TRUNC_IP);
}

Test(parse_bad, trunc_ipv6)
{
	struct droce_addr a = addr4;

	a.ipv6 = true;
	build(&a, DROCE_OP_RC_ACK, 0);
	frame_len = 14 + 39;
	EXPECT_STATUS(DROCE_PARSE_TRUNC_IP);
}

Test(parse_bad, ipv4_version)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	ip4()->version_ihl = 0x65;
	EXPECT_STATUS(DROCE_PARSE_BAD_IP_VERSION);
}

Test(parse_bad, ipv6_version)
{
	struct droce_addr a = addr4;

	a.ipv6 = true;
	build(&a, DROCE_OP_RC_ACK, 0);
	frame[14] = (uint8_t)((frame[14] & 0x0f) | 0x40);
	EXPECT_STATUS(DROCE_PARSE_BAD_IP_VERSION);
}

Test(parse_bad, ipv4_ihl_below_5)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	ip4()->version_ihl = 0x44;
	EXPECT_STATUS(DROCE_PARSE_BAD_IP_HDR_LEN);
}

Test(parse_bad, ipv4_total_len_beyond_frame)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	ip4()->total_len = htobe16((uint16_t)(frame_len - 14 + 1));
	fix_ip_csum();
	EXPECT_STATUS(DROCE_PARSE_BAD_IP_LEN);
}

Test(parse_bad, ipv4_total_len_below_header)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	ip4()->total_len = htobe16(19);
	fix_ip_csum();
	EXPECT_STATUS(DROCE_PARSE_BAD_IP_LEN);
}

Test(parse_bad, ipv6_payload_len_beyond_frame)
{
	struct droce_addr a = addr4;

	a.ipv6 = true;
	build(&a, DROCE_OP_RC_ACK, 0);
	((struct droce_ipv6_hdr *)(frame + 14))->payload_len = htobe16(1000);
	EXPECT_STATUS(DROCE_PARSE_BAD_IP_LEN);
}

Test(parse_bad, ipv4_checksum)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	ip4()->ttl = 63; /* TTL is masked in the ICRC: only the IP checksum notices */
	EXPECT_STATUS(DROCE_PARSE_BAD_IP_CSUM);
}

Test(parse_bad, ipv4_checksum_not_checked_when_offloaded)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	ip4()->ttl = 63;
	cfg.verify_ip_csum = false;
	EXPECT_STATUS(DROCE_PARSE_OK);
}

Test(parse_bad, first_ipv4_fragment)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	ip4()->frag_off = htobe16(DROCE_IPV4_MF);
	fix_ip_csum();
	EXPECT_STATUS(DROCE_PARSE_IP_FRAGMENT);
}

Test(parse_bad, trunc_udp)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	ip4()->total_len = htobe16(20 + 7);
	fix_ip_csum();
	EXPECT_STATUS(DROCE_PARSE_TRUNC_UDP);
}

Test(parse_bad, udp_len_short)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	udp4()->len = htobe16((uint16_t)(droce_udp_len(udp4()) - 4));
	EXPECT_STATUS(DROCE_PARSE_BAD_UDP_LEN);
}

Test(parse_bad, udp_len_long)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	udp4()->len = htobe16((uint16_t)(droce_udp_len(udp4()) + 4));
	EXPECT_STATUS(DROCE_PARSE_BAD_UDP_LEN);
}

Test(parse_bad, trunc_bth)
{
	/* UDP payload of 15 bytes cannot hold BTH + ICRC */
	build(&addr4, DROCE_OP_RC_ACK, 0);
	frame_len = 14 + 20 + 8 + 15;
	ip4()->total_len = htobe16(20 + 8 + 15);
	udp4()->len = htobe16(8 + 15);
	fix_ip_csum();
	EXPECT_STATUS(DROCE_PARSE_TRUNC_BTH);
}

Test(parse_bad, bth_version)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	droce_bth_set_tver(bth4(), 1);
	fix_icrc();
	EXPECT_STATUS(DROCE_PARSE_BAD_BTH_VERSION);
}

Test(parse_bad, reserved_rc_opcode)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	droce_bth_set_opcode(bth4(), 0x15);
	fix_icrc();
	EXPECT_STATUS(DROCE_PARSE_BAD_OPCODE);
}

Test(parse_bad, rd_opcode)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	droce_bth_set_opcode(bth4(), 0x44);
	fix_icrc();
	EXPECT_STATUS(DROCE_PARSE_BAD_OPCODE);
}

Test(parse_bad, xrc_opcode)
{
	build(&addr4, DROCE_OP_RC_ACK, 0);
	droce_bth_set_opcode(bth4(), 0xa4);
	fix_icrc();
	EXPECT_STATUS(DROCE_PARSE_BAD_OPCODE);
}

Test(parse_bad, trunc_ext_hdr)
{
	/* an ACK relabelled as WRITE_ONLY lacks the 16-byte RETH */
	build(&addr4, DROCE_OP_RC_ACK, 0);
	droce_bth_set_opcode(bth4(), DROCE_OP_RC_WRITE_ONLY);
	fix_icrc();
	EXPECT_STATUS(DROCE_PARSE_TRUNC_EXT_HDR);
}

Test(parse_bad, pad_beyond_payload)
{
	build(&addr4, DROCE_OP_RC_SEND_ONLY, 0);
	droce_bth_set_pad(bth4(), 2);
	fix_icrc();
	EXPECT_STATUS(DROCE_PARSE_BAD_PAD);
}

Test(parse_bad, length_not_word_aligned)
{
	/* a payload of 5 bytes sent without its 3 pad bytes */
	build(&addr4, DROCE_OP_RC_SEND_ONLY, 8);
	droce_bth_set_pad(bth4(), 0);
	memmove(frame + frame_len - 7, frame + frame_len - 4, 4);
	frame_len -= 3;
	ip4()->total_len = htobe16((uint16_t)(frame_len - 14));
	udp4()->len = htobe16((uint16_t)(frame_len - 34));
	fix_ip_csum();
	fix_icrc();
	EXPECT_STATUS(DROCE_PARSE_BAD_PAD);
}

Test(parse_bad, payload_on_ack)
{
	/* a SEND_ONLY relabelled as ACK: 8 bytes where an ACK carries none */
	build(&addr4, DROCE_OP_RC_SEND_ONLY, 8);
	droce_bth_set_opcode(bth4(), DROCE_OP_RC_ACK);
	fix_icrc();
	EXPECT_STATUS(DROCE_PARSE_BAD_PAYLOAD);
}

Test(parse_bad, payload_longer_than_pmtu)
{
	build(&addr4, DROCE_OP_RC_SEND_MIDDLE, 1028);
	cfg.max_payload = 1024;
	EXPECT_STATUS(DROCE_PARSE_PAYLOAD_TOO_LONG);
}

Test(parse_bad, icrc_payload_bit)
{
	build(&addr4, DROCE_OP_RC_SEND_ONLY, 64);
	frame[60] ^= 0x10;
	EXPECT_STATUS(DROCE_PARSE_BAD_ICRC);
}

Test(parse_bad, icrc_stored_bit)
{
	build(&addr4, DROCE_OP_RC_SEND_ONLY, 64);
	frame[frame_len - 1] ^= 0x80;
	EXPECT_STATUS(DROCE_PARSE_BAD_ICRC);
}

Test(parse_bad, icrc_not_checked_when_disabled)
{
	build(&addr4, DROCE_OP_RC_SEND_ONLY, 64);
	frame[60] ^= 0x10;
	cfg.verify_icrc = false;
	EXPECT_STATUS(DROCE_PARSE_OK);
}

Test(parse_bad, frame_longer_than_16_bits)
{
	static uint8_t big[70000];

	build(&addr4, DROCE_OP_RC_ACK, 0);
	memcpy(big, frame, frame_len);
	cr_assert_eq(droce_parse(big, sizeof(big), &cfg, &pkt), DROCE_PARSE_BAD_IP_LEN);
}

/* ---- truncation at every length never yields a packet */

static void check_every_prefix(const struct droce_addr *a, uint8_t opcode, uint32_t len)
{
	size_t full, n;

	build(a, opcode, len);
	full = frame_len;
	for (n = 0; n < full; n++) {
		enum droce_parse_status st = droce_parse(frame, n, &cfg, &pkt);

		cr_expect_neq(st, DROCE_PARSE_OK, "opcode 0x%02x accepted with %zu of %zu bytes",
			      opcode, n, full);
	}
}

Test(parse_trunc, every_prefix_of_write_first)
{
	check_every_prefix(&addr4, DROCE_OP_RC_WRITE_FIRST, 256);
}

Test(parse_trunc, every_prefix_of_atomic)
{
	check_every_prefix(&addr4, DROCE_OP_RC_CMP_SWAP, 0);
}

Test(parse_trunc, every_prefix_of_ud_ipv6_vlan)
{
	struct droce_addr a = addr4;

	a.ipv6 = true;
	a.has_vlan = true;
	check_every_prefix(&a, DROCE_OP_UD_SEND_ONLY_IMM, 40);
}

Test(parse_trunc, headers_beyond_given_bytes)
{
	/* the caller gave fewer header bytes than the frame holds: never read past them */
	build(&addr4, DROCE_OP_RC_WRITE_ONLY, 64);
	cr_expect_eq(droce_parse_hdrs(frame, 14 + 20 + 8 + 12, frame_len, &cfg, &pkt),
		     DROCE_PARSE_TRUNC_EXT_HDR);
	cr_expect_eq(droce_parse_hdrs(frame, 14 + 20 + 8 + 11, frame_len, &cfg, &pkt),
		     DROCE_PARSE_TRUNC_BTH);
	cr_expect_eq(droce_parse_hdrs(frame, 14 + 20 + 7, frame_len, &cfg, &pkt),
		     DROCE_PARSE_TRUNC_UDP);
}

Test(parse_trunc, hdrs_accepts_whole_header_stack)
{
	build(&addr4, DROCE_OP_RC_WRITE_ONLY, 64);
	cr_expect_eq(droce_parse_hdrs(frame, 14 + 20 + 8 + 12 + 16, frame_len, &cfg, &pkt),
		     DROCE_PARSE_OK);
}

Test(parse_trunc, fragment_port_beyond_given_bytes)
{
	/* a first fragment whose UDP header was not given: truncated, not "not ours" */
	build(&addr4, DROCE_OP_RC_ACK, 0);
	ip4()->frag_off = htobe16(DROCE_IPV4_MF);
	fix_ip_csum();
	cr_expect_eq(droce_parse_hdrs(frame, 14 + 20 + 4, frame_len, &cfg, &pkt),
		     DROCE_PARSE_TRUNC_UDP);
}
