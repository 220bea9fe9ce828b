/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Addresses: socket addresses as GIDs and back, the rule choosing an id's device and GID
 * (droce_rdmacm.h), rdma_resolve_addr and rdma_resolve_route. droce resolves both at once
 * in the calling thread (the GID table is the device's, the neighbour the engine's), then
 * reports the result as an event, as librdmacm does after the kernel's resolution.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_priv.h"

socklen_t rdmacm_sockaddr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

uint16_t rdmacm_sockaddr_port(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)sa)->sin_port;
	case AF_INET6:
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	default:
		return 0;
	}
}

void rdmacm_sockaddr_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = port;
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = port;
}

bool rdmacm_sockaddr_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return true;
}

int rdmacm_sockaddr_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	switch (sa->sa_family) {
	case AF_INET:
		/* RoCEv2's GID of an IPv4 address: ::ffff:a.b.c.d (IBTA annex A17.4.5.1) */
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 0;
	case AF_INET6:
		memcpy(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return 0;
	default:
		return -EAFNOSUPPORT;
	}
}

static bool gid_is_v4(const union ibv_gid *gid)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(gid->raw, prefix, sizeof(prefix)) == 0;
}

void rdmacm_gid_sockaddr(const union ibv_gid *gid, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (gid_is_v4(gid)) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = port;
		memcpy(&in->sin_addr, &gid->raw[12], 4);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = port;
		memcpy(&in6->sin6_addr, gid->raw, 16);
	}
}

unsigned int droce_rdmacm_prefix_len(const uint8_t a[16], const uint8_t b[16])
{
	unsigned int bits = 0;

	for (int i = 0; i < 16; i++) {
		uint8_t x = a[i] ^ b[i];

		if (x == 0) {
			bits += 8;
			continue;
		}
		return bits + (unsigned int)__builtin_clz(x) - 24;
	}
	return bits;
}

static bool gid_usable(const union ibv_gid *gid)
{
	static const union ibv_gid zero;

	return memcmp(gid, &zero, sizeof(zero)) != 0;
}

int droce_rdmacm_choose_gid(const struct sockaddr *src, const struct sockaddr *dst,
			    struct ibv_context **verbs, uint8_t *gid_index)
{
	const struct sockaddr *key = src != NULL && !rdmacm_sockaddr_any(src) ? src : dst;
	bool exact = key == src;
	union ibv_gid want, gid;
	int best = -1, rc;
	unsigned int best_len = 0;

	if (key == NULL || verbs == NULL || gid_index == NULL)
		return -EINVAL;
	rc = rdmacm_sockaddr_gid(key, &want);
	if (rc < 0)
		return rc;
	rdmacm_devices_open();
	for (int i = 0; i < rdmacm_device_count(); i++) {
		struct rdmacm_device *d = rdmacm_device_nth(i);
		struct ibv_port_attr pa;

		if (ibv_query_port(d->verbs, 1, &pa) != 0)
			continue;
		for (int g = 0; g < pa.gid_tbl_len && g < 256; g++) {
			unsigned int len;

			if (ibv_query_gid(d->verbs, 1, g, &gid) != 0 || !gid_usable(&gid) ||
			    gid_is_v4(&gid) != (key->sa_family == AF_INET))
				continue;
			len = droce_rdmacm_prefix_len(gid.raw, want.raw);
			if (exact && len < 128)
				continue;
			if (best < 0 || len > best_len) {
				best = i;
				best_len = len;
				*gid_index = (uint8_t)g;
			}
		}
	}
	if (best < 0)
		return -ENODEV;
	*verbs = rdmacm_device_nth(best)->verbs;
	return 0;
}

/* the id uses device @p verbs through GID @p gid_index: its source address follows */
static int id_take_device(struct rdmacm_id *rid, struct ibv_context *verbs, uint8_t gid_index)
{
	union ibv_gid gid;
	int rc = ibv_query_gid(verbs, 1, gid_index, &gid);

	if (rc != 0)
		return -ENODEV;
	rid->dev = rdmacm_device_of(verbs);
	rid->id.verbs = verbs;
	rid->id.port_num = 1;
	rid->sgid_index = gid_index;
	memcpy(&rid->id.route.addr.addr.ibaddr.sgid, &gid, sizeof(gid));
	rid->id.route.addr.addr.ibaddr.pkey = 0xffff;
	return 0;
}

int rdmacm_id_bind_device(struct rdmacm_id *rid, const struct sockaddr *addr)
{
	struct ibv_context *verbs;
	uint8_t g;
	int rc = droce_rdmacm_choose_gid(addr, NULL, &verbs, &g);

	return rc < 0 ? rc : id_take_device(rid, verbs, g);
}

static int resolve_addr(struct rdmacm_id *rid, struct sockaddr *src, struct sockaddr *dst)
{
	struct sockaddr *own = &rid->id.route.addr.src_addr;
	struct sockaddr_storage any;
	struct ibv_context *verbs;
	union ibv_gid gid;
	uint8_t g;
	int rc;

	if (rdmacm_sockaddr_len(dst) == 0)
		return -EAFNOSUPPORT;
	if (rid->state != RDMACM_IDLE && rid->state != RDMACM_ADDR_RESOLVED)
		return -EINVAL;
	if (!rid->bound) {
		if (src == NULL) {
			memset(&any, 0, sizeof(any));
			any.ss_family = dst->sa_family;
			src = (struct sockaddr *)&any;
		}
		if (src->sa_family != dst->sa_family)
			return -EINVAL;
		rc = rdmacm_port_bind(rid, src);
		if (rc < 0)
			return rc;
	} else if (own->sa_family != dst->sa_family) {
		return -EINVAL;
	}
	memcpy(&rid->id.route.addr.dst_addr, dst, rdmacm_sockaddr_len(dst));
	rdmacm_sockaddr_gid(dst, &gid);
	memcpy(&rid->id.route.addr.addr.ibaddr.dgid, &gid, sizeof(gid));
	rc = droce_rdmacm_choose_gid(own, dst, &verbs, &g);
	if (rc == 0 && rid->id.verbs != NULL && rid->id.verbs != verbs)
		rc = -ENODEV;
	if (rc == 0)
		rc = id_take_device(rid, verbs, g);
	if (rc == 0 && rdmacm_sockaddr_any(own)) {
		/* the source address is now the GID's (the port stays) */
		struct sockaddr_storage ss;

		rdmacm_gid_sockaddr(&rid->id.route.addr.addr.ibaddr.sgid, rdmacm_sockaddr_port(own),
				    &ss);
		memcpy(own, &ss, rdmacm_sockaddr_len((struct sockaddr *)&ss));
	}
	rid->state = rc == 0 ? RDMACM_ADDR_RESOLVED : RDMACM_IDLE;
	return rdmacm_event_queue(rid,
				  rc == 0 ? RDMA_CM_EVENT_ADDR_RESOLVED : RDMA_CM_EVENT_ADDR_ERROR,
				  rc, NULL, NULL, 0, NULL);
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		      int timeout_ms)
{
	struct rdmacm_id *rid = to_rid(id);
	int rc;

	(void)timeout_ms; /* resolved at once: nothing to wait for */
	if (id == NULL || dst_addr == NULL) {
		errno = EINVAL;
		return -1;
	}
	rdmacm_lock();
	rc = resolve_addr(rid, src_addr, dst_addr);
	rdmacm_unlock();
	if (rc == 0)
		rc = rdmacm_sync_complete(rid);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

/* the path record librdmacm fills for a RoCE route */
static void route_fill(struct rdmacm_id *rid)
{
	struct ibv_sa_path_rec *p = &rid->path;
	struct ibv_port_attr pa;

	memset(p, 0, sizeof(*p));
	p->sgid = rid->id.route.addr.addr.ibaddr.sgid;
	p->dgid = rid->id.route.addr.addr.ibaddr.dgid;
	p->pkey = htobe16(0xffff);
	p->hop_limit = RDMACM_HOP_LIMIT;
	p->traffic_class = rid->tos;
	p->reversible = htobe32(1);
	p->numb_path = 1;
	p->mtu_selector = 2; /* exactly */
	p->mtu = ibv_query_port(rid->id.verbs, 1, &pa) == 0 ? pa.active_mtu : IBV_MTU_1024;
	p->rate_selector = 2;
	p->rate = 0;
	p->packet_life_time_selector = 2;
	p->packet_life_time = RDMACM_PACKET_LIFETIME;
	rid->id.route.path_rec = p;
	rid->id.route.num_paths = 1;
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct rdmacm_id *rid = to_rid(id);
	struct ibv_ah_attr ah;
	uint8_t mac[6];
	int rc;

	(void)timeout_ms; /* the engine's neighbour table has its own timeouts */
	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	rdmacm_lock();
	rc = rid->state == RDMACM_ADDR_RESOLVED ? 0 : -EINVAL;
	if (rc == 0)
		rid->state = RDMACM_ROUTE_QUERY;
	rdmacm_unlock();
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	route_fill(rid);
	rdmacm_ah_attr(rid, &ah);
	/* the neighbour answers now, or the route fails as the kernel's would */
	rc = ibv_resolve_eth_l2_from_gid(id->verbs, &ah, mac, NULL);
	rdmacm_lock();
	rid->state = rc == 0 ? RDMACM_ROUTE_RESOLVED : RDMACM_ADDR_RESOLVED;
	rc = rdmacm_event_queue(rid,
				rc == 0 ? RDMA_CM_EVENT_ROUTE_RESOLVED : RDMA_CM_EVENT_ROUTE_ERROR,
				rc, NULL, NULL, 0, NULL);
	rdmacm_unlock();
	if (rc == 0)
		rc = rdmacm_sync_complete(rid);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}
