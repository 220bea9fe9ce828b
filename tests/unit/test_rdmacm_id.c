/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm ids without a connection: creation per port space, binding (ephemeral ports,
 * EADDRINUSE, reuse-addr, IPv6 and AFONLY), options, the calls droce refuses (multicast) or
 * answers as a device without the feature (ECE), event names, and each errno of bad use.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "rdmacm_env.h"

static struct sockaddr_in ip4(const char *a, uint16_t port)
{
	struct sockaddr_in s = {.sin_family = AF_INET, .sin_port = htons(port)};

	cr_assert_eq(inet_pton(AF_INET, a, &s.sin_addr), 1);
	return s;
}

static struct rdma_cm_id *new_id(enum rdma_port_space ps)
{
	struct rdma_cm_id *id = NULL;

	cr_assert_eq(rdma_create_id(NULL, &id, NULL, ps), 0, "create: %s", strerror(errno));
	return id;
}

static int bind_to(struct rdma_cm_id *id, const char *a, uint16_t port)
{
	struct sockaddr_in s = ip4(a, port);

	return rdma_bind_addr(id, (struct sockaddr *)&s);
}

Test(rdmacm_id, port_spaces_and_qp_types)
{
	struct rdma_cm_id *id;

	rdmacm_test_env();
	id = new_id(RDMA_PS_TCP);
	cr_assert_eq(id->qp_type, IBV_QPT_RC, "TCP: RC");
	cr_assert_eq(id->ps, RDMA_PS_TCP);
	cr_assert_not_null(id->channel, "a synchronous id has a channel of its own");
	rdma_destroy_id(id);
	id = new_id(RDMA_PS_UDP);
	cr_assert_eq(id->qp_type, IBV_QPT_UD, "UDP: UD");
	rdma_destroy_id(id);
	id = new_id(RDMA_PS_IB);
	cr_assert_eq(id->qp_type, IBV_QPT_RC, "IB: RC");
	rdma_destroy_id(id);
	errno = 0;
	cr_assert_eq(rdma_create_id(NULL, &id, NULL, RDMA_PS_IPOIB), -1);
	cr_assert_eq(errno, EPROTONOSUPPORT, "IPoIB's space: EPROTONOSUPPORT");
	errno = 0;
	cr_assert_eq(rdma_create_id(NULL, &id, NULL, (enum rdma_port_space)0x7777), -1);
	cr_assert_eq(errno, EINVAL, "an unknown space: EINVAL");
	errno = 0;
	cr_assert_eq(rdma_create_id(NULL, NULL, NULL, RDMA_PS_TCP), -1);
	cr_assert_eq(errno, EINVAL, "NULL id pointer: EINVAL");
	errno = 0;
	cr_assert_eq(rdma_destroy_id(NULL), -1);
	cr_assert_eq(errno, EINVAL, "destroy NULL: EINVAL");
}

Test(rdmacm_id, bind_address_takes_its_device)
{
	struct rdma_cm_id *id;

	rdmacm_test_env();
	id = new_id(RDMA_PS_TCP);
	cr_assert_eq(bind_to(id, "10.1.0.2", 5000), 0, "%s", strerror(errno));
	cr_assert_not_null(id->verbs, "bound to an address: its device");
	cr_assert_str_eq(ibv_get_device_name(id->verbs->device), "droce1");
	cr_assert_eq(id->port_num, 1);
	cr_assert_eq(ntohs(rdma_get_src_port(id)), 5000, "the port asked for");
	errno = 0;
	cr_assert_eq(bind_to(id, "10.1.0.2", 5001), -1, "bound twice");
	cr_assert_eq(errno, EINVAL);
	rdma_destroy_id(id);
}

Test(rdmacm_id, wildcard_has_no_device)
{
	struct rdma_cm_id *id;

	rdmacm_test_env();
	id = new_id(RDMA_PS_TCP);
	cr_assert_eq(bind_to(id, "0.0.0.0", 0), 0);
	cr_assert_null(id->verbs, "no device for the wildcard");
	cr_assert_geq(ntohs(rdma_get_src_port(id)), 32768, "ephemeral range");
	cr_assert_leq(ntohs(rdma_get_src_port(id)), 60999, "ephemeral range");
	rdma_destroy_id(id);
}

Test(rdmacm_id, ephemeral_ports_differ)
{
	struct rdma_cm_id *a, *b;

	rdmacm_test_env();
	a = new_id(RDMA_PS_TCP);
	b = new_id(RDMA_PS_TCP);
	cr_assert_eq(bind_to(a, "10.0.0.1", 0), 0);
	cr_assert_eq(bind_to(b, "10.0.0.1", 0), 0);
	cr_assert_neq(rdma_get_src_port(a), rdma_get_src_port(b), "two ephemeral ports");
	rdma_destroy_id(a);
	rdma_destroy_id(b);
}

Test(rdmacm_id, address_in_use)
{
	struct rdma_cm_id *a, *b, *c, *u;

	rdmacm_test_env();
	a = new_id(RDMA_PS_TCP);
	b = new_id(RDMA_PS_TCP);
	c = new_id(RDMA_PS_TCP);
	u = new_id(RDMA_PS_UDP);
	cr_assert_eq(bind_to(a, "10.0.0.1", 6000), 0);
	errno = 0;
	cr_assert_eq(bind_to(b, "10.0.0.1", 6000), -1, "the same address and port");
	cr_assert_eq(errno, EADDRINUSE, "EADDRINUSE, got %s", strerror(errno));
	errno = 0;
	cr_assert_eq(bind_to(b, "0.0.0.0", 6000), -1, "the wildcard over a bound address");
	cr_assert_eq(errno, EADDRINUSE);
	cr_assert_eq(bind_to(c, "10.0.0.2", 6000), 0, "another address, the same port");
	cr_assert_eq(bind_to(u, "10.0.0.1", 6000), 0, "another port space");
	rdma_destroy_id(a);
	cr_assert_eq(bind_to(b, "10.0.0.1", 6000), 0, "free again once destroyed");
	rdma_destroy_id(b);
	rdma_destroy_id(c);
	rdma_destroy_id(u);
}

Test(rdmacm_id, reuse_addr)
{
	struct rdma_cm_id *a, *b;
	int one = 1;

	rdmacm_test_env();
	a = new_id(RDMA_PS_TCP);
	b = new_id(RDMA_PS_TCP);
	cr_assert_eq(
		rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)), 0);
	cr_assert_eq(
		rdma_set_option(b, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)), 0);
	cr_assert_eq(bind_to(a, "10.0.0.1", 6001), 0);
	cr_assert_eq(bind_to(b, "10.0.0.1", 6001), 0, "both reuse: both bound");
	rdma_destroy_id(a);
	rdma_destroy_id(b);
}

Test(rdmacm_id, ipv6_wildcard_and_afonly)
{
	struct sockaddr_in6 any6 = {.sin6_family = AF_INET6, .sin6_port = htons(6002)};
	struct rdma_cm_id *a, *b;
	int one = 1;

	rdmacm_test_env();
	a = new_id(RDMA_PS_TCP);
	b = new_id(RDMA_PS_TCP);
	cr_assert_eq(rdma_bind_addr(a, (struct sockaddr *)&any6), 0);
	errno = 0;
	cr_assert_eq(bind_to(b, "10.0.0.1", 6002), -1, "IPv6's wildcard takes IPv4's port too");
	cr_assert_eq(errno, EADDRINUSE);
	rdma_destroy_id(a);
	a = new_id(RDMA_PS_TCP);
	cr_assert_eq(rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one)),
		     0);
	cr_assert_eq(rdma_bind_addr(a, (struct sockaddr *)&any6), 0);
	cr_assert_eq(bind_to(b, "10.0.0.1", 6002), 0, "AFONLY: IPv4 free");
	errno = 0;
	cr_assert_eq(rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one)),
		     -1, "AFONLY after the bind");
	cr_assert_eq(errno, EINVAL);
	rdma_destroy_id(a);
	rdma_destroy_id(b);
}

Test(rdmacm_id, bind_errors)
{
	struct sockaddr_storage u;
	struct rdma_cm_id *id;

	rdmacm_test_env();
	id = new_id(RDMA_PS_TCP);
	memset(&u, 0, sizeof(u));
	u.ss_family = AF_UNIX;
	errno = 0;
	cr_assert_eq(rdma_bind_addr(id, (struct sockaddr *)&u), -1);
	cr_assert_eq(errno, EAFNOSUPPORT, "AF_UNIX");
	errno = 0;
	cr_assert_eq(rdma_bind_addr(id, NULL), -1);
	cr_assert_eq(errno, EINVAL, "NULL address");
	errno = 0;
	cr_assert_eq(rdma_bind_addr(NULL, (struct sockaddr *)&u), -1);
	cr_assert_eq(errno, EINVAL, "NULL id");
	rdma_destroy_id(id);
}

Test(rdmacm_id, options)
{
	struct rdma_cm_id *id;
	uint8_t tos = 32, timeout = 14;
	int one = 1;

	rdmacm_test_env();
	id = new_id(RDMA_PS_TCP);
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1), 0, "TOS");
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, 1),
		     0, "ACK timeout");
	errno = 0;
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &one, sizeof(one)), -1,
		     "TOS takes one byte");
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, 99, &one, sizeof(one)), -1);
	cr_assert_eq(errno, ENOSYS, "an unknown option: ENOSYS");
	errno = 0;
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &one, sizeof(one)),
		     -1);
	cr_assert_eq(errno, ENOSYS, "InfiniBand path records: ENOSYS");
	errno = 0;
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, NULL, 1), -1);
	cr_assert_eq(errno, EINVAL, "NULL value");
	errno = 0;
	cr_assert_eq(rdma_set_option(NULL, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1), -1);
	cr_assert_eq(errno, EINVAL, "NULL id");
	rdma_destroy_id(id);
}

Test(rdmacm_id, wrong_states)
{
	struct rdma_conn_param p;
	struct rdma_cm_id *id;

	rdmacm_test_env();
	memset(&p, 0, sizeof(p));
	id = new_id(RDMA_PS_TCP);
	errno = 0;
	cr_assert_eq(rdma_connect(id, &p), -1, "connect before the route");
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_accept(id, &p), -1, "accept without a request");
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_reject(id, NULL, 0), -1, "reject without a request");
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_disconnect(id), -1, "disconnect unconnected");
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_establish(id), -1, "establish without a reply");
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_notify(id, IBV_EVENT_COMM_EST), -1, "notify unconnected");
	cr_assert_eq(errno, EINVAL);
	for (int i = 0; i < 7; i++) {
		errno = 0;
		switch (i) {
		case 0:
			cr_assert_eq(rdma_connect(NULL, &p), -1);
			break;
		case 1:
			cr_assert_eq(rdma_accept(NULL, &p), -1);
			break;
		case 2:
			cr_assert_eq(rdma_reject(NULL, NULL, 0), -1);
			break;
		case 3:
			cr_assert_eq(rdma_disconnect(NULL), -1);
			break;
		case 4:
			cr_assert_eq(rdma_listen(NULL, 1), -1);
			break;
		case 5:
			cr_assert_eq(rdma_establish(NULL), -1);
			break;
		default:
			cr_assert_eq(rdma_migrate_id(NULL, NULL), -1);
			break;
		}
		cr_assert_eq(errno, EINVAL, "NULL id, call %d: EINVAL", i);
	}
	rdma_destroy_id(id);
}

Test(rdmacm_id, multicast_refused)
{
	struct sockaddr_in mc = ip4("239.1.1.1", 0);
	struct rdma_cm_join_mc_attr_ex attr;
	struct rdma_cm_id *id;

	rdmacm_test_env();
	memset(&attr, 0, sizeof(attr));
	id = new_id(RDMA_PS_UDP);
	errno = 0;
	cr_assert_eq(rdma_join_multicast(id, (struct sockaddr *)&mc, NULL), -1);
	cr_assert_eq(errno, EOPNOTSUPP, "no multicast in droce");
	errno = 0;
	cr_assert_eq(rdma_join_multicast_ex(id, &attr, NULL), -1);
	cr_assert_eq(errno, EOPNOTSUPP);
	errno = 0;
	cr_assert_eq(rdma_leave_multicast(id, (struct sockaddr *)&mc), -1);
	cr_assert_eq(errno, EADDRNOTAVAIL, "never joined");
	errno = 0;
	cr_assert_eq(rdma_join_multicast(id, NULL, NULL), -1);
	cr_assert_eq(errno, EINVAL, "NULL address");
	rdma_destroy_id(id);
}

Test(rdmacm_id, ece_as_a_device_without_it)
{
	struct ibv_ece ece = {.vendor_id = 0x15b3, .options = 1};
	struct rdma_cm_id *id;

	rdmacm_test_env();
	id = new_id(RDMA_PS_TCP);
	cr_assert_eq(rdma_set_local_ece(id, &ece), 0, "kept");
	memset(&ece, 0xa5, sizeof(ece));
	cr_assert_eq(rdma_get_remote_ece(id, &ece), 0);
	cr_assert_eq(ece.vendor_id, 0, "no peer ECE");
	cr_assert_eq(ece.options, 0);
	cr_assert_eq(ece.comp_mask, 0);
	ece.vendor_id = 0;
	errno = 0;
	cr_assert_eq(rdma_set_local_ece(id, &ece), -1, "vendor 0");
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_get_remote_ece(id, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_reject_ece(id, NULL, 0), -1, "nothing to reject");
	cr_assert_eq(errno, EINVAL);
	rdma_destroy_id(id);
}

Test(rdmacm_id, event_names)
{
	cr_assert_str_eq(rdma_event_str(RDMA_CM_EVENT_ADDR_RESOLVED),
			 "RDMA_CM_EVENT_ADDR_RESOLVED");
	cr_assert_str_eq(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED), "RDMA_CM_EVENT_ESTABLISHED");
	cr_assert_str_eq(rdma_event_str(RDMA_CM_EVENT_TIMEWAIT_EXIT),
			 "RDMA_CM_EVENT_TIMEWAIT_EXIT");
	cr_assert_str_eq(rdma_event_str((enum rdma_cm_event_type)99), "UNKNOWN EVENT");
}

Test(rdmacm_id, devices)
{
	struct ibv_context **list;
	int n = -1;

	rdmacm_test_env();
	list = rdma_get_devices(&n);
	cr_assert_not_null(list);
	cr_assert_eq(n, 2, "both devices");
	cr_assert_not_null(list[0]);
	cr_assert_not_null(list[1]);
	cr_assert_null(list[2], "NULL-terminated");
	cr_assert_str_eq(ibv_get_device_name(list[0]->device), "droce0");
	rdma_free_devices(list);
	list = rdma_get_devices(NULL);
	cr_assert_not_null(list, "the count is optional");
	rdma_free_devices(list);
}
