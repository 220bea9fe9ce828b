/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ICRC: both CRC-32 implementations agree with zlib (the oracle), chain,
 * and the ICRC covers exactly the invariant fields (annex A17).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <droce_wire.h>

static uint8_t data[70000];

static void fill_random(void)
{
	size_t i;

	srand(4791);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)rand();
}

static void check_impl(enum droce_crc_impl impl)
{
	static const size_t lens[] = {0, 1, 3, 7, 8, 15, 16, 31, 63, 64, 255, 1024, 4099, 65536};
	size_t i;

	fill_random();
	cr_assert_eq(droce_crc32_set_impl(impl), 0);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		cr_expect_eq(droce_crc32(0, data + 1, lens[i]),
			     (uint32_t)crc32(0, data + 1, (uInt)lens[i]), "%s, %zu bytes",
			     droce_crc32_impl_name(impl), lens[i]);
}

Test(crc32, isal_matches_zlib)
{
	check_impl(DROCE_CRC_ISAL);
}

Test(crc32, zlib_impl_matches_zlib)
{
	check_impl(DROCE_CRC_ZLIB);
}

Test(crc32, chains_like_one_pass)
{
	uint32_t crc;

	fill_random();
	crc = droce_crc32(0, data, 1000);
	crc = droce_crc32(crc, data + 1000, 3);
	crc = droce_crc32(crc, data + 1003, 5000);
	cr_expect_eq(crc, droce_crc32(0, data, 6003));
}

Test(crc32, check_value)
{
	/* the CRC-32 catalogue's check value of "123456789" */
	cr_expect_eq(droce_crc32(0, "123456789", 9), 0xcbf43926);
}

Test(crc32, default_is_isal)
{
	cr_expect_eq(droce_crc32_get_impl(), DROCE_CRC_ISAL);
}

Test(crc32, refuses_unknown_impl)
{
	cr_expect_eq(droce_crc32_set_impl(DROCE_CRC_IMPL_COUNT), -EINVAL);
	cr_expect_eq(droce_crc32_get_impl(), DROCE_CRC_ISAL);
}

Test(crc32, impl_names)
{
	cr_expect_str_eq(droce_crc32_impl_name(DROCE_CRC_ISAL), "isa-l");
	cr_expect_str_eq(droce_crc32_impl_name(DROCE_CRC_ZLIB), "zlib");
	cr_expect_str_eq(droce_crc32_impl_name(DROCE_CRC_IMPL_COUNT), "unknown");
}

Test(icrc, pseudo_lrh_constant)
{
	static const uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	cr_expect_eq(DROCE_ICRC_PSEUDO_LRH_CRC, (uint32_t)crc32(0, ones, 8));
}

Test(icrc, stored_little_endian)
{
	uint8_t b[4];

	droce_icrc_store(b, 0x11223344);
	cr_expect_eq(b[0], 0x44);
	cr_expect_eq(b[3], 0x11);
	cr_expect_eq(droce_icrc_load(b), 0x11223344);
}

/* ---- which bytes the ICRC covers */

static const struct droce_addr addr = {
	.dst_mac = {2, 0, 0, 0, 0, 2},
	.src_mac = {2, 0, 0, 0, 0, 3},
	.src_ip = {10, 0, 0, 3},
	.dst_ip = {10, 0, 0, 2},
	.ttl = 64,
	.udp_sport = 0xc000,
	.udp_dport = 4791,
};

static uint8_t frame[256];
static ssize_t frame_len;

static uint32_t icrc_of(bool ipv6)
{
	return droce_icrc_calc(frame + 14, ipv6 ? 40 : 20, ipv6, (size_t)frame_len - 4 - 14);
}

static uint32_t build(bool ipv6)
{
	struct droce_hdr_fields f = {
		.opcode = DROCE_OP_RC_SEND_ONLY, .pkey = 0xffff, .dqpn = 5, .psn = 9};
	struct droce_addr a = addr;

	a.ipv6 = ipv6;
	frame_len = droce_build_frame(frame, sizeof(frame), &a, 1, &f, "payload!", 8);
	cr_assert_gt(frame_len, 0);
	return droce_icrc_load(frame + frame_len - 4);
}

/* Flip @p mask at @p off and report whether the ICRC changed. */
static bool covered(bool ipv6, size_t off, uint8_t mask)
{
	uint32_t before = build(ipv6);

	cr_assert_eq(before, icrc_of(ipv6));
	frame[off] ^= mask;
	return icrc_of(ipv6) != before;
}

Test(icrc, ipv4_variant_fields_masked)
{
	cr_expect_not(covered(false, 14 + 1, 0xff), "TOS");
	cr_expect_not(covered(false, 14 + 8, 0xff), "TTL");
	cr_expect_not(covered(false, 14 + 10, 0xff), "header checksum");
	cr_expect_not(covered(false, 14 + 11, 0xff), "header checksum");
	cr_expect_not(covered(false, 34 + 6, 0xff), "UDP checksum");
	cr_expect_not(covered(false, 42 + 4, 0xff), "FECN, BECN, resv6");
}

Test(icrc, ipv4_invariant_fields_covered)
{
	cr_expect(covered(false, 14 + 0, 0x01), "IHL");
	cr_expect(covered(false, 14 + 4, 0x01), "identification");
	cr_expect(covered(false, 14 + 9, 0x01), "protocol");
	cr_expect(covered(false, 14 + 12, 0x01), "source address");
	cr_expect(covered(false, 34 + 0, 0x01), "UDP source port");
	cr_expect(covered(false, 34 + 4, 0x01), "UDP length");
	cr_expect(covered(false, 42 + 0, 0x01), "opcode");
	cr_expect(covered(false, 42 + 5, 0x01), "destination QP");
	cr_expect(covered(false, 42 + 11, 0x01), "PSN");
	cr_expect(covered(false, 54, 0x01), "payload");
}

Test(icrc, ipv4_ethernet_not_covered)
{
	cr_expect_not(covered(false, 0, 0xff), "destination MAC");
	cr_expect_not(covered(false, 6, 0xff), "source MAC");
}

Test(icrc, ipv6_variant_fields_masked)
{
	cr_expect_not(covered(true, 14 + 0, 0x0f), "traffic class high nibble");
	cr_expect_not(covered(true, 14 + 1, 0xff), "traffic class low nibble, flow label");
	cr_expect_not(covered(true, 14 + 3, 0xff), "flow label");
	cr_expect_not(covered(true, 14 + 7, 0xff), "hop limit");
	cr_expect_not(covered(true, 54 + 6, 0xff), "UDP checksum");
}

Test(icrc, ipv6_version_nibble_kept)
{
	cr_expect(covered(true, 14 + 0, 0x10), "IPv6 version bits are covered");
}

Test(icrc, ipv6_invariant_fields_covered)
{
	cr_expect(covered(true, 14 + 4, 0x01), "payload length");
	cr_expect(covered(true, 14 + 6, 0x01), "next header");
	cr_expect(covered(true, 14 + 8, 0x01), "source address");
	cr_expect(covered(true, 14 + 39, 0x01), "destination address");
}

Test(icrc, isal_and_zlib_give_the_same_icrc)
{
	uint32_t a, b;

	build(false);
	cr_assert_eq(droce_crc32_set_impl(DROCE_CRC_ZLIB), 0);
	a = icrc_of(false);
	cr_assert_eq(droce_crc32_set_impl(DROCE_CRC_ISAL), 0);
	b = icrc_of(false);
	cr_expect_eq(a, b);
}
