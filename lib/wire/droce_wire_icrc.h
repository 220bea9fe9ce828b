/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The RoCEv2 Invariant CRC (IBTA 7.8.1 and annex A17).
 *
 * The ICRC is the Ethernet CRC-32 (zlib's crc32()) of: 8 bytes of 0xff standing
 * for the LRH a RoCEv2 packet does not have, the IP header with its variant
 * fields set to all ones (IPv4: TOS, TTL, header checksum; IPv6: traffic
 * class, flow label, hop limit), the UDP header with its checksum set to all
 * ones, the BTH with its FECN/BECN/resv6 byte set to all ones, then every byte
 * that follows up to the ICRC itself. It is stored least-significant byte
 * first. doc/wire.md lists the traps.
 */
#ifndef DROCE_WIRE_ICRC_H
#define DROCE_WIRE_ICRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** CRC-32 implementations droce can use; chosen once, ISA-L by default. */
enum droce_crc_impl {
	DROCE_CRC_ISAL, /**< ISA-L crc32_gzip_refl: PCLMUL folding, the fastest measured */
	DROCE_CRC_ZLIB, /**< zlib crc32(): the reference, slower */
	DROCE_CRC_IMPL_COUNT,
};

/** Select the CRC-32 implementation (not thread-safe: call before traffic). 0 or -EINVAL. */
int droce_crc32_set_impl(enum droce_crc_impl impl);
enum droce_crc_impl droce_crc32_get_impl(void);
const char *droce_crc32_impl_name(enum droce_crc_impl impl);

/**
 * Ethernet CRC-32 of @p len bytes chained onto @p crc, with zlib's convention:
 * start with 0, pass each result to the next call.
 */
uint32_t droce_crc32(uint32_t crc, const void *buf, size_t len);

/**
 * CRC-32 of the 8 bytes of 0xff that stand for the LRH a RoCEv2 packet lacks
 * (annex A17): the constant state every ICRC starts from.
 */
#define DROCE_ICRC_PSEUDO_LRH_CRC 0x2144df1cu

/** Bytes the masked part of the ICRC covers: IP header + UDP + BTH. */
static inline size_t droce_icrc_masked_len(size_t ip_hdr_len)
{
	return ip_hdr_len + 8 + 12;
}

/**
 * CRC state after the 0xff pseudo-LRH and the masked IP, UDP and BTH headers.
 * @p l3 points at the IP header, which is @p ip_hdr_len bytes (20..60 for
 * IPv4, 40 for IPv6); droce_icrc_masked_len(ip_hdr_len) bytes are read.
 * Chain droce_crc32() over what follows the BTH, then droce_icrc_final().
 */
uint32_t droce_icrc_begin(const uint8_t *l3, size_t ip_hdr_len, bool ipv6);

/** The ICRC value from the chained state (identity; kept for clarity at call sites). */
static inline uint32_t droce_icrc_final(uint32_t crc)
{
	return crc;
}

/**
 * ICRC of a contiguous packet: @p l3 is the IP header, @p icrc_off the offset
 * of the ICRC field from @p l3 (everything before it is covered).
 */
uint32_t droce_icrc_calc(const uint8_t *l3, size_t ip_hdr_len, bool ipv6, size_t icrc_off);

/** Read / write the stored ICRC (little-endian on the wire). */
static inline uint32_t droce_icrc_load(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void droce_icrc_store(uint8_t *p, uint32_t icrc)
{
	p[0] = (uint8_t)icrc;
	p[1] = (uint8_t)(icrc >> 8);
	p[2] = (uint8_t)(icrc >> 16);
	p[3] = (uint8_t)(icrc >> 24);
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_ICRC_H */
