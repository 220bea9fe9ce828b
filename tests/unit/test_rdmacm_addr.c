/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device and GID an id takes (droce_rdmacm_choose_gid, doc/rdmacm.md), and what
 * rdma_resolve_addr and rdma_resolve_route fill in: verbs, port, addresses, the path record.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "droce_rdmacm.h"
#include "rdmacm_env.h"

static const char *device_of(const char *src, const char *dst, uint8_t *gid_index, int *rc)
{
	struct sockaddr_storage s, d;
	struct ibv_context *verbs = NULL;

	if (src != NULL)
		s = addr(src, 0);
	d = addr(dst, 0);
	*rc = droce_rdmacm_choose_gid(src != NULL ? SA(s) : NULL, SA(d), &verbs, gid_index);
	return *rc == 0 ? ibv_get_device_name(verbs->device) : NULL;
}

Test(rdmacm_addr, prefix_len)
{
	uint8_t a[16] = {0}, b[16] = {0};

	cr_assert_eq(droce_rdmacm_prefix_len(a, b), 128, "equal: all bits");
	b[0] = 0x80;
	cr_assert_eq(droce_rdmacm_prefix_len(a, b), 0, "first bit differs");
	b[0] = 0;
	b[15] = 1;
	cr_assert_eq(droce_rdmacm_prefix_len(a, b), 127, "last bit differs");
	b[15] = 0;
	b[3] = 0x10;
	cr_assert_eq(droce_rdmacm_prefix_len(a, b), 27, "bit 27 differs");
}

Test(rdmacm_addr, longest_prefix_picks_the_device)
{
	uint8_t g;
	int rc;

	rdmacm_test_env();
	cr_assert_str_eq(device_of(NULL, "10.1.0.9", &g, &rc), "droce1", "10.1.0.0/24 is droce1's");
	cr_assert_str_eq(device_of(NULL, "fd00::5", &g, &rc), "droce0", "fd00::/64 is droce0's");
	cr_assert_str_eq(device_of(NULL, "fd01::9", &g, &rc), "droce1", "fd01::/64 is droce1's");
	cr_assert_str_eq(device_of(NULL, "10.0.0.2", &g, &rc), "droce1", "its own address");
	/* 10.0.0.9 shares 28 bits with 10.0.0.1 and with 10.0.0.2: the first device wins */
	cr_assert_str_eq(device_of(NULL, "10.0.0.9", &g, &rc), "droce0", "a tie: the first");
}

Test(rdmacm_addr, source_address_picks_its_device)
{
	struct ibv_context *verbs;
	union ibv_gid gid;
	uint8_t g;
	int rc;

	rdmacm_test_env();
	cr_assert_str_eq(device_of("10.1.0.2", "10.0.0.1", &g, &rc), "droce1",
			 "the source's device, whatever the destination");
	{
		struct sockaddr_storage s = addr("10.1.0.2", 0);

		cr_assert_eq(droce_rdmacm_choose_gid(SA(s), NULL, &verbs, &g), 0);
		cr_assert_eq(ibv_query_gid(verbs, 1, g, &gid), 0);
		cr_assert_eq(memcmp(&gid.raw[12], (uint8_t[]){10, 1, 0, 2}, 4), 0,
			     "the GID index holds the source");
		cr_assert_eq(gid.raw[10], 0xff, "IPv4-mapped");
	}
	cr_assert_null(device_of("10.9.9.9", "10.0.0.1", &g, &rc), "not an address of droce's");
	cr_assert_eq(rc, -ENODEV, "ENODEV");
	cr_assert_str_eq(device_of("0.0.0.0", "10.1.0.7", &g, &rc), "droce1",
			 "the wildcard source: by destination");
}

Test(rdmacm_addr, wrong_arguments)
{
	struct sockaddr_storage d = addr("10.0.0.1", 0), u;
	struct ibv_context *verbs;
	uint8_t g;

	rdmacm_test_env();
	memset(&u, 0, sizeof(u));
	u.ss_family = AF_UNIX;
	cr_assert_eq(droce_rdmacm_choose_gid(NULL, SA(u), &verbs, &g), -EAFNOSUPPORT);
	cr_assert_eq(droce_rdmacm_choose_gid(NULL, NULL, &verbs, &g), -EINVAL);
	cr_assert_eq(droce_rdmacm_choose_gid(NULL, SA(d), NULL, &g), -EINVAL);
	cr_assert_eq(droce_rdmacm_choose_gid(NULL, SA(d), &verbs, NULL), -EINVAL);
}

static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct rdma_cm_event *ev;

	cr_assert_eq(rdma_get_cm_event(ch, &ev), 0, "%s", strerror(errno));
	return ev;
}

static void resolve(const char *src_s, const char *dst_s, int family)
{
	struct rdma_event_channel *ch;
	struct sockaddr_storage src = addr(src_s, 0), dst = addr(dst_s, 7471);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct ibv_sa_path_rec *p;
	struct ibv_port_attr pa;

	rdmacm_test_env();
	ch = rdma_create_event_channel();
	cr_assert_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_resolve_addr(id, SA(src), SA(dst), 2000), 0, "%s", strerror(errno));
	ev = next_event(ch);
	cr_assert_eq(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED, "%s", rdma_event_str(ev->event));
	rdma_ack_cm_event(ev);
	cr_assert_not_null(id->verbs, "id->verbs set");
	cr_assert_str_eq(ibv_get_device_name(id->verbs->device), "droce0");
	cr_assert_eq(id->port_num, 1, "port 1");
	cr_assert_eq(id->route.addr.src_addr.sa_family, family, "source of the family");
	cr_assert_neq(rdma_get_src_port(id), 0, "an ephemeral port");
	cr_assert_eq(ntohs(rdma_get_dst_port(id)), 7471, "the destination's port");
	cr_assert_eq(rdma_resolve_route(id, 2000), 0, "%s", strerror(errno));
	ev = next_event(ch);
	cr_assert_eq(ev->event, RDMA_CM_EVENT_ROUTE_RESOLVED, "%s", rdma_event_str(ev->event));
	rdma_ack_cm_event(ev);
	cr_assert_eq(id->route.num_paths, 1, "one path");
	p = id->route.path_rec;
	cr_assert_not_null(p);
	cr_assert_eq(memcmp(&p->sgid, &id->route.addr.addr.ibaddr.sgid, 16), 0, "sgid");
	cr_assert_eq(memcmp(&p->dgid, &id->route.addr.addr.ibaddr.dgid, 16), 0, "dgid");
	cr_assert_eq(be16toh(p->pkey), 0xffff, "default P_Key");
	cr_assert_eq(ibv_query_port(id->verbs, 1, &pa), 0);
	cr_assert_eq(p->mtu, pa.active_mtu, "the port's MTU");
	cr_assert_eq(p->hop_limit, 64, "hop limit");
	cr_assert_eq(p->packet_life_time, 16, "RoCE packet lifetime");
	cr_assert_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

Test(rdmacm_addr, resolve_ipv4)
{
	resolve("10.0.0.1", "10.0.0.2", AF_INET);
}

Test(rdmacm_addr, resolve_ipv6)
{
	resolve("fd00::1", "fd01::2", AF_INET6);
}

Test(rdmacm_addr, nobody_answers_route_error)
{
	struct rdma_event_channel *ch;
	struct sockaddr_storage dst = addr("10.0.0.7", 7471);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	rdmacm_test_env();
	ch = rdma_create_event_channel();
	cr_assert_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_resolve_addr(id, NULL, SA(dst), 2000), 0);
	ev = next_event(ch);
	cr_assert_eq(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED, "the address has a device");
	rdma_ack_cm_event(ev);
	cr_assert_eq(rdma_resolve_route(id, 2000), 0);
	ev = next_event(ch);
	cr_assert_eq(ev->event, RDMA_CM_EVENT_ROUTE_ERROR, "no neighbour answers: %s",
		     rdma_event_str(ev->event));
	cr_assert_eq(ev->status, -EHOSTUNREACH, "status %d", ev->status);
	rdma_ack_cm_event(ev);
	errno = 0;
	cr_assert_eq(rdma_resolve_route(id, 2000), 0, "may be tried again");
	ev = next_event(ch);
	rdma_ack_cm_event(ev);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

Test(rdmacm_addr, route_tos_becomes_traffic_class)
{
	struct rdma_event_channel *ch;
	struct sockaddr_storage dst = addr("10.0.0.2", 7471);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	uint8_t tos = 0x68;

	rdmacm_test_env();
	ch = rdma_create_event_channel();
	cr_assert_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1), 0);
	cr_assert_eq(rdma_resolve_addr(id, NULL, SA(dst), 2000), 0);
	rdma_ack_cm_event(next_event(ch));
	cr_assert_eq(rdma_resolve_route(id, 2000), 0);
	ev = next_event(ch);
	cr_assert_eq(ev->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
	rdma_ack_cm_event(ev);
	cr_assert_eq(id->route.path_rec->traffic_class, 0x68, "TOS as traffic class");
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

Test(rdmacm_addr, route_before_address_is_einval)
{
	struct rdma_cm_id *id;

	rdmacm_test_env();
	cr_assert_eq(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	errno = 0;
	cr_assert_eq(rdma_resolve_route(id, 100), -1);
	cr_assert_eq(errno, EINVAL, "no address resolved yet");
	errno = 0;
	cr_assert_eq(rdma_resolve_route(NULL, 100), -1);
	cr_assert_eq(errno, EINVAL, "NULL id");
	errno = 0;
	cr_assert_eq(rdma_resolve_addr(id, NULL, NULL, 100), -1);
	cr_assert_eq(errno, EINVAL, "NULL destination");
	rdma_destroy_id(id);
}

Test(rdmacm_addr, unknown_source_is_enodev)
{
	struct sockaddr_storage src = addr("192.0.2.1", 0), dst = addr("10.0.0.2", 1);
	struct rdma_cm_id *id;

	rdmacm_test_env();
	cr_assert_eq(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	errno = 0;
	cr_assert_eq(rdma_bind_addr(id, SA(src)), -1);
	cr_assert_eq(errno, ENODEV, "no droce device has it: %s", strerror(errno));
	cr_assert_null(id->verbs, "nothing half done");
	errno = 0;
	cr_assert_eq(rdma_resolve_addr(id, SA(src), SA(dst), 100), -1,
		     "a synchronous id fails at once");
	rdma_destroy_id(id);
}

Test(rdmacm_addr, synchronous_id_resolves_in_the_call)
{
	struct sockaddr_storage dst = addr("10.0.0.2", 7471);
	struct rdma_cm_id *id;

	rdmacm_test_env();
	cr_assert_eq(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_resolve_addr(id, NULL, SA(dst), 2000), 0, "%s", strerror(errno));
	cr_assert_not_null(id->verbs, "resolved on return");
	cr_assert_eq(rdma_resolve_route(id, 2000), 0, "%s", strerror(errno));
	cr_assert_eq(id->route.num_paths, 1);
	cr_assert_eq(rdma_destroy_id(id), 0);
}
