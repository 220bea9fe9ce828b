/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_getaddrinfo (numeric addresses, names through getaddrinfo, RAI_PASSIVE, the port
 * space and QP type) and the endpoint calls built on it.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netdb.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "rdmacm_env.h"

Test(rdmacm_getaddrinfo, numeric_active)
{
	struct rdma_addrinfo hints = {.ai_port_space = RDMA_PS_TCP}, *res = NULL;
	struct sockaddr_in *in;

	cr_assert_eq(rdma_getaddrinfo("10.0.0.2", "7471", &hints, &res), 0);
	cr_assert_not_null(res);
	cr_assert_eq(res->ai_family, AF_INET);
	cr_assert_eq(res->ai_qp_type, IBV_QPT_RC, "TCP: RC");
	cr_assert_eq(res->ai_port_space, RDMA_PS_TCP);
	cr_assert_null(res->ai_src_addr, "no source asked for");
	cr_assert_not_null(res->ai_dst_addr);
	cr_assert_eq(res->ai_dst_len, sizeof(struct sockaddr_in));
	in = (struct sockaddr_in *)res->ai_dst_addr;
	cr_assert_eq(ntohs(in->sin_port), 7471);
	cr_assert_eq(in->sin_addr.s_addr, inet_addr("10.0.0.2"));
	cr_assert_null(res->ai_next);
	rdma_freeaddrinfo(res);
}

Test(rdmacm_getaddrinfo, passive_and_udp)
{
	struct rdma_addrinfo hints = {.ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_UDP};
	struct rdma_addrinfo *res = NULL;

	cr_assert_eq(rdma_getaddrinfo(NULL, "7174", &hints, &res), 0);
	cr_assert_not_null(res->ai_src_addr, "passive: the source");
	cr_assert_null(res->ai_dst_addr);
	cr_assert_eq(res->ai_qp_type, IBV_QPT_UD, "UDP: UD");
	cr_assert_eq(ntohs(((struct sockaddr_in *)res->ai_src_addr)->sin_port), 7174);
	rdma_freeaddrinfo(res);
}

Test(rdmacm_getaddrinfo, ipv6_and_names)
{
	struct rdma_addrinfo hints = {.ai_flags = RAI_NUMERICHOST}, *res = NULL;

	cr_assert_eq(rdma_getaddrinfo("fd00::1", "1", &hints, &res), 0);
	cr_assert_eq(res->ai_family, AF_INET6);
	cr_assert_eq(res->ai_dst_len, sizeof(struct sockaddr_in6));
	rdma_freeaddrinfo(res);
	cr_assert_neq(rdma_getaddrinfo("localhost", "1", &hints, &res), 0,
		      "RAI_NUMERICHOST: no name");
	hints.ai_flags = 0;
	hints.ai_family = AF_INET;
	cr_assert_eq(rdma_getaddrinfo("localhost", "1", &hints, &res), 0, "a name resolved");
	cr_assert_eq(((struct sockaddr_in *)res->ai_dst_addr)->sin_addr.s_addr,
		     htonl(INADDR_LOOPBACK));
	rdma_freeaddrinfo(res);
}

Test(rdmacm_getaddrinfo, errors)
{
	struct rdma_addrinfo hints = {.ai_family = AF_IB}, *res;

	errno = 0;
	cr_assert_eq(rdma_getaddrinfo("10.0.0.1", "1", NULL, NULL), -1);
	cr_assert_eq(errno, EINVAL, "NULL result");
	errno = 0;
	cr_assert_eq(rdma_getaddrinfo(NULL, NULL, NULL, &res), -1);
	cr_assert_eq(errno, EINVAL, "neither node nor service");
	errno = 0;
	cr_assert_eq(rdma_getaddrinfo("10.0.0.1", "1", &hints, &res), -1);
	cr_assert_eq(errno, EAFNOSUPPORT, "AF_IB");
	rdma_freeaddrinfo(NULL);
}

Test(rdmacm_getaddrinfo, create_ep_active_and_passive)
{
	struct rdma_addrinfo hints = {.ai_port_space = RDMA_PS_TCP}, *res;
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.sq_sig_all = 1};
	struct rdma_cm_id *id, *listen;

	rdmacm_test_env();
	cr_assert_eq(rdma_getaddrinfo("10.0.0.2", "7471", &hints, &res), 0);
	cr_assert_eq(rdma_create_ep(&id, res, NULL, &ia), 0, "%s", strerror(errno));
	cr_assert_not_null(id->verbs, "resolved");
	cr_assert_eq(id->route.num_paths, 1, "routed");
	cr_assert_not_null(id->qp, "with its QP");
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(res);
	hints.ai_flags = RAI_PASSIVE;
	cr_assert_eq(rdma_getaddrinfo("10.0.0.1", "7471", &hints, &res), 0);
	cr_assert_eq(rdma_create_ep(&listen, res, NULL, &ia), 0, "%s", strerror(errno));
	cr_assert_eq(ntohs(rdma_get_src_port(listen)), 7471, "bound");
	cr_assert_null(listen->qp, "a passive endpoint has no QP of its own");
	errno = 0;
	cr_assert_eq(rdma_create_ep(NULL, res, NULL, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_create_ep(&id, NULL, NULL, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	rdma_destroy_ep(listen);
	rdma_destroy_ep(NULL);
	rdma_freeaddrinfo(res);
}
