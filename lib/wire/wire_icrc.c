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
#define MASKED_MAX (60 + 8 + 12)

uint32_t droce_icrc_begin(const uint8_t *l3, size_t ip_hdr_len, bool ipv6)
{
	uint8_t hdr[MASKED_MAX];
	size_t n = droce_icrc_masked_len(ip_hdr_len);
	struct droce_udp_hdr *udp;
	struct droce_bth *bth;

	if (n > sizeof(hdr))
		n = sizeof(hdr); /* callers validate; never overrun the local copy */
	memcpy(hdr, l3, n);
	if (ipv6) {
		struct droce_ipv6_hdr *ip6 = (struct droce_ipv6_hdr *)hdr;

		/* traffic class and flow label to ones, the version nibble kept */
		ip6->vtc_flow |= htobe32(0x0fffffff);
		ip6->hop_limit = 0xff;
	} else {
		struct droce_ipv4_hdr *ip4 = (struct droce_ipv4_hdr *)hdr;

		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		ip4->csum = 0xffff;
	}
	udp = (struct droce_udp_hdr *)(hdr + ip_hdr_len);
	udp->csum = 0xffff;
	bth = (struct droce_bth *)(hdr + ip_hdr_len + sizeof(*udp));
	/* FECN, BECN and resv6 share the most significant byte of the QPN word */
	bth->qpn |= htobe32(0xff000000u);
	return crc_fn(DROCE_ICRC_PSEUDO_LRH_CRC, hdr, n);
}

uint32_t droce_icrc_calc(const uint8_t *l3, size_t ip_hdr_len, bool ipv6, size_t icrc_off)
{
	size_t masked = droce_icrc_masked_len(ip_hdr_len);
	uint32_t crc = droce_icrc_begin(l3, ip_hdr_len, ipv6);

	if (icrc_off > masked)
		crc = crc_fn(crc, l3 + masked, icrc_off - masked);
	return droce_icrc_final(crc);
}
