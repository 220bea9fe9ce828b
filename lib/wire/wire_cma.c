/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm's IP addressing carried in CM messages (IBTA annex A11, "RDMA IP CM Service"): the
 * service IDs of its port spaces and the private-data header ahead of the user's private data.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "droce_wire_mad.h"

/* An IPv4 address sits in the last 4 bytes of a 16-byte address field (annex A11). */
#define IPV4_PAD 12

int droce_cma_service_id_parse(uint64_t sid, uint16_t *ps, uint16_t *port)
{
	if ((sid & DROCE_CMA_SID_PREFIX_MASK) != DROCE_CMA_SID_PREFIX)
		return -EINVAL;
	*ps = (uint16_t)(sid >> 16);
	*port = (uint16_t)sid;
	return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

int droce_cma_hdr_decode(const void *priv, size_t len, struct droce_cma_fields *f)
{
	struct droce_cma_hdr h;

	if (len < DROCE_CMA_HDR_LEN)
		return -EMSGSIZE;
	memcpy(&h, priv, sizeof(h));
	if (h.version != DROCE_CMA_VERSION)
		return -EPROTO;
	memset(f, 0, sizeof(*f));
	f->version = h.version;
	f->ip_version = h.ip_version >> DROCE_CMA_IP_VERSION_SHIFT;
	f->resv = h.ip_version & 0x0f;
	f->port = be16toh(h.port);
	switch (f->ip_version) {
	case 4:
		if (!all_zero(h.src, IPV4_PAD) || !all_zero(h.dst, IPV4_PAD))
			return -EINVAL;
		memcpy(f->src, h.src + IPV4_PAD, 4);
		memcpy(f->dst, h.dst + IPV4_PAD, 4);
		return 0;
	case 6:
		memcpy(f->src, h.src, sizeof(f->src));
		memcpy(f->dst, h.dst, sizeof(f->dst));
		return 0;
	default:
		return -EPROTO;
	}
}

int droce_cma_hdr_encode(void *priv, size_t cap, const struct droce_cma_fields *f)
{
	struct droce_cma_hdr h;

	if (cap < DROCE_CMA_HDR_LEN)
		return -ENOSPC;
	if ((f->ip_version != 4 && f->ip_version != 6) || f->resv > 0x0f)
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	h.version = f->version;
	h.ip_version = (uint8_t)(f->ip_version << DROCE_CMA_IP_VERSION_SHIFT | f->resv);
	h.port = htobe16(f->port);
	if (f->ip_version == 4) {
		memcpy(h.src + IPV4_PAD, f->src, 4);
		memcpy(h.dst + IPV4_PAD, f->dst, 4);
	} else {
		memcpy(h.src, f->src, sizeof(h.src));
		memcpy(h.dst, f->dst, sizeof(h.dst));
	}
	memcpy(priv, &h, sizeof(h));
	return 0;
}
