/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The masked headers of the ICRC computed without a copy (wire_icrc.c's seed
 * correction) against the straightforward computation from annex A17: copy
 * the headers, force the variant bits to one, zlib's crc32() over 8 bytes of
 * 0xff, the copy and the rest. Random IPv4 (with and without options) and
 * IPv6 headers, every byte and bit of them, with both CRC implementations.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <droce_wire.h>

#define HDR_MAX (60 + 8 + 12)
#define PKT_MAX (HDR_MAX + 300)
#define RANDOMS 2000

/* The oracle, written from the definition. */
static uint32_t icrc_straight(const uint8_t *l3, size_t ip_len, bool ipv6, size_t icrc_off)
{
	static const uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	size_t n = ip_len + 8 + 12;
	uint8_t m[HDR_MAX];
	uLong crc;

	memcpy(m, l3, n);
	if (ipv6) {
		m[0] |= 0x0f; /* traffic class and flow label; the version nibble is kept */
		m[1] = m[2] = m[3] = 0xff;
		m[7] = 0xff; /* hop limit */
	} else {
		m[1] = 0xff;          /* TOS */
		m[8] = 0xff;          /* TTL */
		m[10] = m[11] = 0xff; /* header checksum */
	}
	m[ip_len + 6] = m[ip_len + 7] = 0xff; /* UDP checksum */
	m[ip_len + 8 + 4] = 0xff;             /* FECN, BECN, resv6 */
	crc = crc32(0, ones, sizeof(ones));
	crc = crc32(crc, m, (uInt)n);
	return (uint32_t)crc32(crc, l3 + n, (uInt)(icrc_off - n));
}

static uint8_t pkt[PKT_MAX];

static void random_bytes(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rand();
}

/* Both entry points against the oracle, with the CRC implementation @p impl. */
static void expect_same(size_t ip_len, bool ipv6, size_t icrc_off, const char *what, size_t k)
{
	size_t n = droce_icrc_masked_len(ip_len);
	uint32_t want = icrc_straight(pkt, ip_len, ipv6, icrc_off);
	uint32_t chained = droce_crc32(droce_icrc_begin(pkt, ip_len, ipv6), pkt + n, icrc_off - n);

	cr_expect_eq(droce_icrc_calc(pkt, ip_len, ipv6, icrc_off), want,
		     "%s %zu (%s, IP header %zu, ICRC at %zu): droce_icrc_calc %#x, oracle %#x",
		     what, k, droce_crc32_impl_name(droce_crc32_get_impl()), ip_len, icrc_off,
		     droce_icrc_calc(pkt, ip_len, ipv6, icrc_off), want);
	cr_expect_eq(droce_icrc_final(chained), want,
		     "%s %zu (%s, IP header %zu): droce_icrc_begin + droce_crc32 %#x, oracle %#x",
		     what, k, droce_crc32_impl_name(droce_crc32_get_impl()), ip_len, chained, want);
}

static void random_headers(enum droce_crc_impl impl, bool ipv6, bool options)
{
	cr_assert_eq(droce_crc32_set_impl(impl), 0);
	srand(ipv6 ? 6 : options ? 44 : 4);
	for (size_t k = 0; k < RANDOMS; k++) {
		size_t ip_len = ipv6 ? 40 : options ? 20 + 4 * (size_t)(rand() % 11) : 20;
		size_t n = droce_icrc_masked_len(ip_len);
		size_t icrc_off = n + (size_t)(rand() % 257);

		random_bytes(pkt, icrc_off);
		expect_same(ip_len, ipv6, icrc_off, "random header", k);
	}
}

Test(icrc_masked, random_ipv4_isal)
{
	random_headers(DROCE_CRC_ISAL, false, false);
}

Test(icrc_masked, random_ipv4_zlib)
{
	random_headers(DROCE_CRC_ZLIB, false, false);
}

Test(icrc_masked, random_ipv4_options_isal)
{
	random_headers(DROCE_CRC_ISAL, false, true);
}

Test(icrc_masked, random_ipv4_options_zlib)
{
	random_headers(DROCE_CRC_ZLIB, false, true);
}

Test(icrc_masked, random_ipv6_isal)
{
	random_headers(DROCE_CRC_ISAL, true, false);
}

Test(icrc_masked, random_ipv6_zlib)
{
	random_headers(DROCE_CRC_ZLIB, true, false);
}

/* Every byte of the headers, each of its 256 values in turn, the rest random. */
static void every_byte(bool ipv6, size_t ip_len)
{
	size_t n = droce_icrc_masked_len(ip_len);

	srand((unsigned int)(ip_len + ipv6));
	random_bytes(pkt, n + 64);
	for (size_t j = 0; j < n; j++)
		for (unsigned int v = 0; v < 256; v++) {
			pkt[j] = (uint8_t)v;
			expect_same(ip_len, ipv6, n + 64, "header byte", j);
		}
}

Test(icrc_masked, every_byte_ipv4)
{
	every_byte(false, 20);
}

Test(icrc_masked, every_byte_ipv4_longest_options)
{
	every_byte(false, 60);
}

Test(icrc_masked, every_byte_ipv6)
{
	every_byte(true, 40);
}

/* The headers alone: no byte after the BTH. */
Test(icrc_masked, headers_only)
{
	srand(1);
	random_bytes(pkt, HDR_MAX);
	expect_same(20, false, droce_icrc_masked_len(20), "headers only, IPv4", 0);
	expect_same(40, true, droce_icrc_masked_len(40), "headers only, IPv6", 0);
}
