/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ports ids are bound to, per port space, for this process (the embedded engine's CM
 * serves this process alone). Two ids may hold one port when their addresses differ and
 * neither is the wildcard, or when both set RDMA_OPTION_ID_REUSEADDR and neither listens, as
 * Linux's rdma_cm decides; port 0 takes a free ephemeral port from Linux's default local
 * range (32768-60999), starting at a random one.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdmacm_priv.h"

#define EPHEMERAL_FIRST 32768u
#define EPHEMERAL_LAST  60999u

static pthread_mutex_t ports_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(, rdmacm_id) bound_ids = LIST_HEAD_INITIALIZER(bound_ids);

static bool same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
}

/* would an id at @p addr (port in it) of @p rid's space clash with @p other? */
static bool clashes(const struct rdmacm_id *rid, const struct sockaddr *addr, bool listening,
		    const struct rdmacm_id *other)
{
	const struct sockaddr *o = &other->id.route.addr.src_addr;

	if (other == rid || other->id.ps != rid->id.ps ||
	    rdmacm_sockaddr_port(o) != rdmacm_sockaddr_port(addr))
		return false;
	if (rid->reuseaddr && other->reuseaddr && !listening && other->state != RDMACM_LISTEN)
		return false;
	/* an IPv6 wildcard without AFONLY takes IPv4 too, as a dual-stack socket does */
	if (o->sa_family != addr->sa_family) {
		const struct sockaddr *v6 = o->sa_family == AF_INET6 ? o : addr;
		bool v6_afonly = v6 == o ? other->afonly : rid->afonly;

		return rdmacm_sockaddr_any(v6) && !v6_afonly;
	}
	return rdmacm_sockaddr_any(o) || rdmacm_sockaddr_any(addr) || same_addr(o, addr);
}

static bool port_free(const struct rdmacm_id *rid, const struct sockaddr *addr)
{
	const struct rdmacm_id *o;

	LIST_FOREACH(o, &bound_ids, bound_link)
	if (clashes(rid, addr, false, o))
		return false;
	return true;
}

int rdmacm_port_bind(struct rdmacm_id *rid, struct sockaddr *addr)
{
	struct sockaddr_storage ss;
	struct sockaddr *a = (struct sockaddr *)&ss;
	socklen_t len = rdmacm_sockaddr_len(addr);
	int rc = 0;

	if (len == 0)
		return -EAFNOSUPPORT;
	if (rid->bound)
		return -EINVAL;
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, addr, len);
	pthread_mutex_lock(&ports_lock);
	if (rdmacm_sockaddr_port(a) == 0) {
		unsigned int span = EPHEMERAL_LAST - EPHEMERAL_FIRST + 1;
		unsigned int start = (unsigned int)(random() ^ time(NULL)) % span;

		rc = -EADDRNOTAVAIL;
		for (unsigned int i = 0; i < span; i++) {
			uint16_t port = (uint16_t)(EPHEMERAL_FIRST + (start + i) % span);

			rdmacm_sockaddr_set_port(a, htons(port));
			if (port_free(rid, a)) {
				rc = 0;
				break;
			}
		}
	} else if (!port_free(rid, a)) {
		rc = -EADDRINUSE;
	}
	if (rc == 0) {
		memcpy(&rid->id.route.addr.src_addr, &ss, len);
		rid->bound = true;
		LIST_INSERT_HEAD(&bound_ids, rid, bound_link);
	}
	pthread_mutex_unlock(&ports_lock);
	return rc;
}

void rdmacm_port_unbind(struct rdmacm_id *rid)
{
	pthread_mutex_lock(&ports_lock);
	if (rid->bound) {
		LIST_REMOVE(rid, bound_link);
		rid->bound = false;
	}
	pthread_mutex_unlock(&ports_lock);
}

int rdmacm_port_check_listen(struct rdmacm_id *rid)
{
	const struct rdmacm_id *o;
	int rc = 0;

	pthread_mutex_lock(&ports_lock);
	LIST_FOREACH(o, &bound_ids, bound_link)
	if (clashes(rid, &rid->id.route.addr.src_addr, true, o))
		rc = -EADDRINUSE;
	pthread_mutex_unlock(&ports_lock);
	return rc;
}

uint16_t rdma_get_src_port(struct rdma_cm_id *id)
{
	return id == NULL ? 0 : rdmacm_sockaddr_port(&id->route.addr.src_addr);
}

uint16_t rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id == NULL ? 0 : rdmacm_sockaddr_port(&id->route.addr.dst_addr);
}
