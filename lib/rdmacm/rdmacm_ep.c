/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_getaddrinfo and the endpoint calls built on it (rdma_create_ep, rdma_destroy_ep).
 * Names and services are resolved by getaddrinfo(3); the first address it gives is the
 * endpoint's (the passive side's source with RAI_PASSIVE, else the destination), as
 * librdmacm does without an ibacm service to ask for routes.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_priv.h"

static int fail(int err)
{
	errno = err;
	return -1;
}

static struct sockaddr *addr_copy(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *c = malloc(len);

	if (c != NULL)
		memcpy(c, sa, len);
	return c;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	struct addrinfo h, *ai;
	struct rdma_addrinfo *r;
	int rc;

	if (res == NULL || (node == NULL && service == NULL))
		return fail(EINVAL);
	if (hints != NULL && hints->ai_family != AF_UNSPEC && hints->ai_family != AF_INET &&
	    hints->ai_family != AF_INET6)
		return fail(EAFNOSUPPORT); /* AF_IB: an InfiniBand address, not RoCE's */
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return fail(ENOMEM);
	if (hints != NULL) {
		r->ai_flags = hints->ai_flags;
		r->ai_port_space = hints->ai_port_space;
		r->ai_qp_type = hints->ai_qp_type;
	}
	if (r->ai_port_space == 0)
		r->ai_port_space = r->ai_qp_type == IBV_QPT_UD ? RDMA_PS_UDP : RDMA_PS_TCP;
	if (r->ai_qp_type == 0)
		r->ai_qp_type = r->ai_port_space == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
	memset(&h, 0, sizeof(h));
	h.ai_family = hints != NULL ? hints->ai_family : AF_UNSPEC;
	h.ai_socktype = r->ai_port_space == RDMA_PS_UDP ? SOCK_DGRAM : SOCK_STREAM;
	if (r->ai_flags & RAI_PASSIVE)
		h.ai_flags |= AI_PASSIVE;
	if (r->ai_flags & RAI_NUMERICHOST)
		h.ai_flags |= AI_NUMERICHOST;
	if (node != NULL && !(r->ai_flags & RAI_PASSIVE))
		h.ai_flags |= AI_CANONNAME;
	rc = getaddrinfo(node, service, &h, &ai);
	if (rc != 0) {
		free(r);
		return rc; /* an EAI_* value, as librdmacm passes it on */
	}
	r->ai_family = ai->ai_family;
	if (r->ai_flags & RAI_PASSIVE) {
		r->ai_src_addr = addr_copy(ai->ai_addr, ai->ai_addrlen);
		r->ai_src_len = ai->ai_addrlen;
	} else {
		r->ai_dst_addr = addr_copy(ai->ai_addr, ai->ai_addrlen);
		r->ai_dst_len = ai->ai_addrlen;
		if (ai->ai_canonname != NULL)
			r->ai_dst_canonname = strdup(ai->ai_canonname);
		if (hints != NULL && hints->ai_src_addr != NULL && hints->ai_src_len > 0) {
			r->ai_src_addr = addr_copy(hints->ai_src_addr, hints->ai_src_len);
			r->ai_src_len = hints->ai_src_len;
		}
	}
	freeaddrinfo(ai);
	if ((r->ai_flags & RAI_PASSIVE ? r->ai_src_addr : r->ai_dst_addr) == NULL ||
	    (r->ai_src_len > 0 && r->ai_src_addr == NULL)) {
		rdma_freeaddrinfo(r);
		return fail(ENOMEM);
	}
	*res = r;
	return 0;
}

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm;
	int rc;

	if (id == NULL || res == NULL)
		return fail(EINVAL);
	if (rdma_create_id(NULL, &cm, NULL, (enum rdma_port_space)res->ai_port_space) != 0)
		return -1;
	cm->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	if (res->ai_flags & RAI_PASSIVE) {
		rc = rdma_bind_addr(cm, res->ai_src_addr);
		if (rc != 0)
			goto out_destroy;
		if (qp_init_attr != NULL) {
			/* rdma_get_request makes each new id's QP with these */
			to_rid(cm)->ep_qp_attr = malloc(sizeof(*qp_init_attr));
			if (to_rid(cm)->ep_qp_attr == NULL) {
				errno = ENOMEM;
				goto out_destroy;
			}
			*to_rid(cm)->ep_qp_attr = *qp_init_attr;
		}
		cm->pd = pd;
		*id = cm;
		return 0;
	}
	rc = rdma_resolve_addr(cm, res->ai_src_addr, res->ai_dst_addr, 2000);
	if (rc == 0)
		rc = rdma_resolve_route(cm, 2000);
	if (rc == 0 && qp_init_attr != NULL)
		rc = rdma_create_qp(cm, pd, qp_init_attr);
	if (rc != 0)
		goto out_destroy;
	*id = cm;
	return 0;
out_destroy:
	rc = errno;
	rdma_destroy_id(cm);
	errno = rc;
	return -1;
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	if (id->qp != NULL)
		rdma_destroy_qp(id);
	if (id->srq != NULL)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);
}
