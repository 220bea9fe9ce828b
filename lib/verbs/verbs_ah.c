/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address handles. RoCE addresses by GID, so every AH needs a GRH (is_global);
 * UD work requests carry the AH's id, which the engine resolves.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_wire_hdr.h"
#include "verbs_limits.h"
#include "verbs_priv.h"

static int ah_attr_check(struct ibv_context *context, const struct ibv_ah_attr *a)
{
	const struct droce_device *d = to_dctx(context)->dev;

	if (a->port_num != 1 || !a->is_global || a->grh.sgid_index >= d->gid_count)
		return -EINVAL;
	return 0;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct droce_ah *ah;
	int rc = ah_attr_check(pd->context, attr);

	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ah->attr = *attr;
	ah->ibah.context = pd->context;
	ah->ibah.pd = pd;
	rc = droce_ops(pd->context)->create_ah(ah);
	if (rc != 0) {
		free(ah);
		errno = -rc;
		return NULL;
	}
	ah->ibah.handle = ah->id;
	droce_pd_get(to_dpd(pd));
	return &ah->ibah;
}

int ibv_destroy_ah(struct ibv_ah *ibah)
{
	struct droce_ah *ah = to_dah(ibah);
	int rc = droce_ops(ibah->context)->destroy_ah(ah);

	if (rc != 0)
		return -rc;
	droce_pd_put(to_dpd(ibah->pd));
	free(ah);
	return 0;
}

int droce_ah_encode(const struct droce_qp *qp, struct ibv_ah *ah, uint32_t remote_qpn,
		    uint32_t remote_qkey, struct droce_send_wqe *w)
{
	/* the AH must come from the QP's protection domain (IBA 10.2.1) */
	if (ah == NULL || ah->pd != qp->qpx.qp_base.pd || remote_qpn > 0xffffff)
		return -EINVAL;
	w->u.ud.ah = to_dah(ah)->id;
	w->u.ud.remote_qpn = remote_qpn;
	w->u.ud.remote_qkey = remote_qkey;
	return 0;
}

/* Index of @p gid in the port's GID table, or -1. */
static int gid_index(const struct droce_device *d, const union ibv_gid *gid)
{
	unsigned int i;

	for (i = 0; i < d->gid_count; i++)
		if (memcmp(&d->gid[i], gid, sizeof(*gid)) == 0)
			return (int)i;
	return -1;
}

/* RFC 791: the one's complement sum of a valid header, checksum included, is 0xffff. */
static bool ip4_checksum_ok(const uint8_t *h)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/*
 * Which IP header the GRH area holds: 4, 6, or 0 for neither. An IPv6 header
 * starts with version 6; a RoCEv2 IPv4 header (no options: 0x45) sits in the
 * last 20 bytes. Either can look like the other (the first 20 bytes of an IPv4
 * area are undefined; byte 20 of an IPv6 area is inside its source address):
 * when both match, the IPv4 header checksum decides, as rdma-core does.
 */
static int grh_ip_version(const struct ibv_grh *grh)
{
	const uint8_t *ip4 = (const uint8_t *)grh + 20;
	bool v6 = (ntohl(grh->version_tclass_flow) >> 28) == 6;
	bool v4 = ip4[0] == 0x45;

	if (v4 && v6)
		return ip4_checksum_ok(ip4) ? 4 : 6;
	return v4 ? 4 : v6 ? 6 : 0;
}

/*
 * The 40-byte GRH area of a UD receive holds the packet's IPv6 header, or for
 * IPv4 its 20-byte IPv4 header in the last 20 bytes (after 20 undefined ones).
 * Turn it into the address to answer with: source and destination swapped.
 */
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	const struct droce_device *d = to_dctx(context)->dev;
	const uint8_t *ip4 = (const uint8_t *)grh + 20;
	union ibv_gid local;
	int idx, version;

	if (port_num != 1 || !(wc->wc_flags & IBV_WC_GRH)) {
		errno = EINVAL;
		return -1;
	}
	version = grh_ip_version(grh);
	if (version == 0) {
		errno = EPROTONOSUPPORT; /* neither IPv4 nor IPv6: not a RoCEv2 packet */
		return -1;
	}
	memset(ah_attr, 0, sizeof(*ah_attr));
	if (version == 4) {
		droce_ipv4_mapped(ip4 + 12, ah_attr->grh.dgid.raw);
		droce_ipv4_mapped(ip4 + 16, local.raw);
		ah_attr->grh.hop_limit = 0xff;
		ah_attr->grh.traffic_class = ip4[1];
	} else {
		uint32_t vtf = ntohl(grh->version_tclass_flow);

		ah_attr->grh.dgid = grh->sgid;
		local = grh->dgid;
		ah_attr->grh.hop_limit = 0xff;
		ah_attr->grh.traffic_class = (uint8_t)(vtf >> 20);
		ah_attr->grh.flow_label = vtf & 0xfffff;
	}
	idx = gid_index(d, &local);
	if (idx < 0) {
		errno = ENOENT; /* the packet was not addressed to one of this port's GIDs */
		return -1;
	}
	ah_attr->grh.sgid_index = (uint8_t)idx;
	ah_attr->is_global = 1;
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0)
		return NULL;
	return ibv_create_ah(pd, &attr);
}
