/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <isa-l/crc.h>
#include <zlib.h>

#include "droce_wire_hdr.h"
#include "droce_wire_icrc.h"

static uint32_t crc32_isal(uint32_t crc, const void *buf, size_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

static uint32_t crc32_zlib(uint32_t crc, const void *buf, size_t len)
{
	/* zlib takes uInt lengths: feed very long buffers in pieces */
	const uint8_t *p = buf;

	while (len > 0) {
		uInt n = len > 0x40000000u ? 0x40000000u : (uInt)len;

		crc = (uint32_t)crc32(crc, p, n);
		p += n;
		len -= n;
	}
	return crc;
}

typedef uint32_t (*crc32_fn)(uint32_t crc, const void *buf, size_t len);

static const struct {
	const char *name;
	crc32_fn fn;
} crc_impls[DROCE_CRC_IMPL_COUNT] = {
	[DROCE_CRC_ISAL] = {"isa-l", crc32_isal},
	[DROCE_CRC_ZLIB] = {"zlib", crc32_zlib},
};

static enum droce_crc_impl crc_impl = DROCE_CRC_ISAL;
static crc32_fn crc_fn = crc32_isal;

int droce_crc32_set_impl(enum droce_crc_impl impl)
{
	if ((unsigned)impl >= DROCE_CRC_IMPL_COUNT)
		return -EINVAL;
	crc_impl = impl;
	crc_fn = crc_impls[impl].fn;
	return 0;
}

enum droce_crc_impl droce_crc32_get_impl(void)
{
	return crc_impl;
}

const char *droce_crc32_impl_name(enum droce_crc_impl impl)
{
	return (unsigned)impl < DROCE_CRC_IMPL_COUNT ? crc_impls[impl].name : "unknown";
}

uint32_t droce_crc32(uint32_t crc, const void *buf, size_t len)
{
	return crc_fn(crc, buf, len);
}

/* Largest IP header (IPv4 with 40 bytes of options) + UDP + BTH. */
#define MASKED_MAX   (60 + 8 + 12)
#define IPV4_HDR_MAX 60

/*
 * The masked headers without a copy (annex A17's masking, computed by linearity).
 *
 * A CRC-32 state moves by an affine map per byte: after n bytes from state s
 * it is A^n s ^ L(bytes), with L linear in the bytes. The masked header M is
 * the header H as it is in the packet with some bits forced to one, so
 * M = H ^ D where D holds (~h & mask) at the masked bytes and 0 elsewhere. Then
 *   A^n s ^ L(M) = A^n (s ^ A^-n L(D)) ^ L(H),
 * so starting from s ^ A^-n L(D) and running over H as it stands gives the
 * state of the masked header; the rest of the packet follows in the same call.
 * A^-n L(D) is the XOR, over D's bytes, of A^-(j+1) T[d] for byte d at offset
 * j (T: the CRC's byte table); it depends on the offset from the start only,
 * never on the header's length. The seeds of zlib's and ISA-L's CRC (the
 * complement of the state) move the same way. seed_fix[j][half][nibble]
 * holds these values for each offset and nibble: two lookups per masked byte.
 */
static uint32_t seed_fix[MASKED_MAX][2][16];

#define CRC32_POLY_REFLECTED 0xedb88320u

/* The inverse of one zero byte: the state @p s came from. */
static uint32_t unshift_byte(uint32_t s, const uint32_t table[256], const uint8_t top_to_index[256])
{
	uint8_t i = top_to_index[s >> 24]; /* table[i] alone sets the top byte */

	return ((s ^ table[i]) << 8) | i;
}

__attribute__((constructor)) static void seed_fix_init(void)
{
	uint32_t table[256], u[32];
	uint8_t top_to_index[256];

	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC32_POLY_REFLECTED : c >> 1;
		table[i] = c;
		top_to_index[c >> 24] = (uint8_t)i;
	}
	/* u: the low nibbles 0..15, then the high nibbles 0x00..0xf0, as A^-(j+1) T[d] */
	for (uint32_t n = 0; n < 16; n++) {
		u[n] = table[n];
		u[16 + n] = table[n << 4];
	}
	for (unsigned int j = 0; j < MASKED_MAX; j++)
		for (unsigned int n = 0; n < 32; n++) {
			u[n] = unshift_byte(u[n], table, top_to_index);
			seed_fix[j][n / 16][n % 16] = u[n];
		}
}

/* The seed's share of masking byte @p j, whose masked bits that are zero in the packet are @p d. */
static inline uint32_t fix_byte(unsigned int j, uint8_t d)
{
	return seed_fix[j][0][d & 0x0f] ^ seed_fix[j][1][d >> 4];
}

/* The seed that makes a CRC over the headers as they stand come out as over the masked ones. */
static uint32_t masked_seed(const uint8_t *l3, size_t ip_hdr_len, bool ipv6)
{
	uint32_t fix;
	size_t udp = ip_hdr_len, bth = ip_hdr_len + 8;

	if (ipv6) {
		/* traffic class, flow label (byte 0's low nibble, bytes 1..3); hop limit */
		fix = fix_byte(0, (uint8_t)(~l3[0] & 0x0f)) ^ fix_byte(1, (uint8_t)~l3[1]) ^
		      fix_byte(2, (uint8_t)~l3[2]) ^ fix_byte(3, (uint8_t)~l3[3]) ^
		      fix_byte(7, (uint8_t)~l3[7]);
	} else {
		/* TOS, TTL, header checksum */
		fix = fix_byte(1, (uint8_t)~l3[1]) ^ fix_byte(8, (uint8_t)~l3[8]) ^
		      fix_byte(10, (uint8_t)~l3[10]) ^ fix_byte(11, (uint8_t)~l3[11]);
	}
	/* callers validate the IP header's length; a longer one reads no table past its end */
	if (ip_hdr_len > (ipv6 ? 40 : IPV4_HDR_MAX))
		return DROCE_ICRC_PSEUDO_LRH_CRC ^ fix;
	/* the UDP checksum; FECN, BECN and resv6 share the most significant byte of the QPN word */
	fix ^= fix_byte((unsigned int)udp + 6, (uint8_t)~l3[udp + 6]) ^
	       fix_byte((unsigned int)udp + 7, (uint8_t)~l3[udp + 7]) ^
	       fix_byte((unsigned int)bth + 4, (uint8_t)~l3[bth + 4]);
	return DROCE_ICRC_PSEUDO_LRH_CRC ^ fix;
}

uint32_t droce_icrc_begin(const uint8_t *l3, size_t ip_hdr_len, bool ipv6)
{
	return crc_fn(masked_seed(l3, ip_hdr_len, ipv6), l3, droce_icrc_masked_len(ip_hdr_len));
}

uint32_t droce_icrc_calc(const uint8_t *l3, size_t ip_hdr_len, bool ipv6, size_t icrc_off)
{
	size_t masked = droce_icrc_masked_len(ip_hdr_len);

	/* the headers and what follows them in one pass */
	return droce_icrc_final(crc_fn(masked_seed(l3, ip_hdr_len, ipv6), l3,
				       icrc_off > masked ? icrc_off : masked));
}
