/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device side of the verbs API: device list, open, query device and
 * port (the inline wrapper and the exported symbol of old binaries), the GID
 * table (RoCE v2, IPv4-mapped and IPv6 GIDs), P_Keys, address handles and
 * ibv_init_ah_from_wc / ibv_create_ah_from_wc over IPv4 and IPv6 GRH areas,
 * and the DROCE_DEVICES parser (droce_config_parse).
 *
 * The devices are HARNESS_DEVICES: droce0, MAC 02:00:00:00:00:01, 10.0.0.1,
 * fd00::1, MTU 4200.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "verbs_harness.h"
#include "verbs_priv.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static void setup(void)
{
	ctx = harness_open(&pd);
}

TestSuite(verbs_device, .init = setup);

/* The GID table droce0 must have: link-local from the MAC, the IPv4 address mapped, the IPv6. */
static union ibv_gid gid_of(const char *ipv6)
{
	union ibv_gid g;

	cr_assert_eq(inet_pton(AF_INET6, ipv6, g.raw), 1, "test address %s", ipv6);
	return g;
}

#define GID_LINK_LOCAL "fe80::ff:fe00:1"
#define GID_IPV4       "::ffff:10.0.0.1"
#define GID_IPV6       "fd00::1"

/* ------------------------------------------------------------ devices */

Test(verbs_device, device_list)
{
	static const uint8_t guid[8] = {0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x01};
	struct ibv_device **list;
	__be64 g;
	int n = -1;

	list = ibv_get_device_list(&n);
	cr_assert_not_null(list, "ibv_get_device_list");
	cr_expect_eq(n, 1, "one device configured, %d listed", n);
	cr_assert_not_null(list[0], "the device");
	cr_expect_null(list[1], "the list is NULL-terminated");
	cr_expect_str_eq(ibv_get_device_name(list[0]), "droce0", "device name");
	cr_expect_eq(list[0]->node_type, IBV_NODE_CA, "node type CA");
	cr_expect_eq(list[0]->transport_type, IBV_TRANSPORT_IB, "transport IB (RoCE)");
	g = ibv_get_device_guid(list[0]);
	cr_expect_eq(memcmp(&g, guid, 8), 0, "node GUID is the MAC's EUI-64");
	cr_expect_eq(ibv_get_device_index(list[0]), 0, "device index 0");
	ibv_free_device_list(list);
}

Test(verbs_device, open_device)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c;

	cr_assert_not_null(list, "ibv_get_device_list");
	c = ibv_open_device(list[0]);
	cr_assert_not_null(c, "ibv_open_device");
	cr_expect_eq(c->device, list[0], "context->device");
	cr_expect_geq(c->async_fd, 0, "async_fd");
	cr_expect_eq(c->num_comp_vectors, 1, "one completion vector");
	cr_expect_neq(c, ctx, "each open gives its own context");
	cr_expect_neq(c->async_fd, ctx->async_fd, "each context has its own async_fd");
	cr_expect_eq(ibv_close_device(c), 0, "ibv_close_device");
	ibv_free_device_list(list);
}

/*
 * cmd_fd is a real descriptor of the context's own (programs dup it, as the
 * shared-PD tests do before ibv_import_device), closed with the context.
 */
Test(verbs_device, cmd_fd_is_a_descriptor_of_the_context)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c;
	struct stat mine, other;
	int fd, dup_fd;

	cr_assert_not_null(list, "ibv_get_device_list");
	c = ibv_open_device(list[0]);
	cr_assert_not_null(c, "ibv_open_device");
	cr_assert_geq(c->cmd_fd, 0, "cmd_fd is a descriptor, got %d", c->cmd_fd);
	cr_expect_geq(fcntl(c->cmd_fd, F_GETFD), 0, "cmd_fd is open: %s", strerror(errno));
	cr_expect(fcntl(c->cmd_fd, F_GETFD) & FD_CLOEXEC, "cmd_fd is close-on-exec");
	dup_fd = dup(c->cmd_fd);
	cr_expect_geq(dup_fd, 0, "dup(cmd_fd): %s", strerror(errno));
	cr_assert_eq(fstat(c->cmd_fd, &mine), 0, "fstat(cmd_fd)");
	cr_assert_eq(fstat(ctx->cmd_fd, &other), 0, "fstat(the other context's cmd_fd)");
	cr_expect(mine.st_dev != other.st_dev || mine.st_ino != other.st_ino,
		  "each context's cmd_fd names its own file");
	fd = c->cmd_fd;
	cr_expect_eq(ibv_close_device(c), 0, "ibv_close_device");
	errno = 0;
	cr_expect_lt(fcntl(fd, F_GETFD), 0, "ibv_close_device closed cmd_fd");
	cr_expect_eq(errno, EBADF, "closed: EBADF, got %d", errno);
	if (dup_fd >= 0)
		close(dup_fd);
	ibv_free_device_list(list);
}

/* ------------------------------------------------------------ query device */

static void check_device_attr(const struct ibv_device_attr *a)
{
	cr_expect_eq(a->phys_port_cnt, 1, "one port");
	cr_expect_eq(a->node_guid, ibv_get_device_guid(ctx->device), "node_guid");
	cr_expect_eq(a->sys_image_guid, a->node_guid, "sys_image_guid");
	cr_expect_eq(strncmp(a->fw_ver, "droce", 5), 0, "fw_ver names droce: %s", a->fw_ver);
	cr_expect_eq(a->max_qp_wr, 16384, "max_qp_wr");
	cr_expect_eq(a->max_sge, 32, "max_sge");
	cr_expect_eq(a->max_cqe, 1 << 20, "max_cqe");
	cr_expect_eq(a->max_srq_wr, 16384, "max_srq_wr");
	cr_expect_eq(a->max_srq_sge, 32, "max_srq_sge");
	cr_expect_eq(a->max_pkeys, 1, "max_pkeys");
	cr_expect_eq(a->atomic_cap, IBV_ATOMIC_HCA, "atomic_cap");
	cr_expect_gt(a->max_qp, 0, "max_qp");
	cr_expect_gt(a->max_cq, 0, "max_cq");
	cr_expect_gt(a->max_mr, 0, "max_mr");
	cr_expect_gt(a->max_pd, 0, "max_pd");
	cr_expect_gt(a->max_ah, 0, "max_ah");
	cr_expect_gt(a->max_srq, 0, "max_srq");
	cr_expect_gt(a->max_qp_rd_atom, 0, "max_qp_rd_atom");
	cr_expect_not(a->device_cap_flags & IBV_DEVICE_SRQ_RESIZE,
		      "no SRQ resize claimed (ibv_modify_srq(IBV_SRQ_MAX_WR) is refused)");
}

Test(verbs_device, query_device)
{
	struct ibv_device_attr a;

	memset(&a, 0xa5, sizeof(a));
	cr_assert_eq(ibv_query_device(ctx, &a), 0, "ibv_query_device");
	check_device_attr(&a);
}

Test(verbs_device, query_device_ex)
{
	struct ibv_device_attr_ex a;
	struct ibv_query_device_ex_input in = {.comp_mask = 0};

	memset(&a, 0xa5, sizeof(a));
	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &a), 0, "ibv_query_device_ex");
	check_device_attr(&a.orig_attr);
	cr_expect_eq(a.phys_port_cnt_ex, 1, "phys_port_cnt_ex");
	cr_expect_eq(a.completion_timestamp_mask, 0, "no completion timestamps");
	cr_expect_eq(a.raw_packet_caps, 0, "no raw packet capabilities");
	cr_expect_eq(ibv_query_device_ex(ctx, &in, &a), 0, "with an empty input");
	in.comp_mask = 1;
	cr_expect_eq(ibv_query_device_ex(ctx, &in, &a), EINVAL, "unknown input comp_mask: EINVAL");
}

Test(verbs_device, query_ex_larger_struct_zeroed)
{
	struct verbs_context *v = verbs_get_ctx(ctx);
	struct {
		struct ibv_device_attr_ex a;
		uint8_t newer[64];
	} d;
	struct {
		struct ibv_port_attr a;
		uint8_t newer[64];
	} p;
	static const uint8_t zero[64];

	cr_assert_not_null(v, "an extended context");
	/* an application built against a newer verbs.h passes a larger struct */
	memset(&d, 0xa5, sizeof(d));
	cr_assert_eq(v->query_device_ex(ctx, NULL, &d.a, sizeof(d)), 0, "query_device_ex");
	cr_expect_eq(memcmp(d.newer, zero, sizeof(zero)), 0, "device: unknown fields zeroed");
	cr_expect_eq(d.a.orig_attr.phys_port_cnt, 1, "and the known ones filled");
	memset(&p, 0xa5, sizeof(p));
	cr_assert_eq(v->query_port(ctx, 1, &p.a, sizeof(p)), 0, "query_port");
	cr_expect_eq(memcmp(p.newer, zero, sizeof(zero)), 0, "port: unknown fields zeroed");
	cr_expect_eq(p.a.link_layer, IBV_LINK_LAYER_ETHERNET, "and the known ones filled");
	cr_expect_eq(v->query_device_ex(ctx, NULL, &d.a, sizeof(d.a.orig_attr) - 1), EINVAL,
		     "smaller than the original struct: EINVAL");
}

/* ------------------------------------------------------------ query port */

static void check_port_attr(const struct ibv_port_attr *p)
{
	/* the link is up only once the engine runs the port: DOWN here */
	cr_expect_eq(p->state, IBV_PORT_DOWN, "state DOWN without an engine");
	cr_expect_eq(p->max_mtu, IBV_MTU_4096, "max_mtu for an Ethernet MTU of 4200");
	cr_expect_eq(p->active_mtu, IBV_MTU_4096, "active_mtu");
	cr_expect_eq(p->gid_tbl_len, DROCE_GID_TABLE_LEN, "gid_tbl_len");
	cr_expect_eq(p->pkey_tbl_len, 1, "pkey_tbl_len");
	cr_expect_eq(p->link_layer, IBV_LINK_LAYER_ETHERNET, "link layer Ethernet");
	cr_expect(p->port_cap_flags & IBV_PORT_IP_BASED_GIDS, "IP-based GIDs");
	cr_expect(p->port_cap_flags & IBV_PORT_CM_SUP, "CM supported");
	cr_expect_eq(p->max_msg_sz, 0x80000000u, "max_msg_sz 2^31");
	cr_expect_eq(p->lid, 0, "no LID on Ethernet");
	cr_expect_gt(p->active_speed, 0, "a speed code");
	cr_expect_gt(p->active_width, 0, "a width code");
}

Test(verbs_device, query_port)
{
	struct ibv_port_attr p;

	memset(&p, 0xa5, sizeof(p));
	cr_assert_eq(ibv_query_port(ctx, 1, &p), 0, "ibv_query_port(1)");
	check_port_attr(&p);
	cr_expect_eq(ibv_query_port(ctx, 0, &p), EINVAL, "port 0: EINVAL");
	cr_expect_eq(ibv_query_port(ctx, 2, &p), EINVAL, "port 2: EINVAL");
}

Test(verbs_device, query_port_old_symbol)
{
	struct ibv_port_attr p;

	/* the exported symbol old binaries call (the name in parentheses skips the macro) */
	memset(&p, 0, sizeof(p));
	cr_assert_eq((ibv_query_port)(ctx, 1, (struct _compat_ibv_port_attr *)&p), 0,
		     "ibv_query_port symbol, port 1");
	check_port_attr(&p);
	/* libibverbs: 0 or the errno value, as the inline wrapper */
	cr_expect_eq((ibv_query_port)(ctx, 2, (struct _compat_ibv_port_attr *)&p), EINVAL,
		     "port 2: EINVAL returned");
}

/* ------------------------------------------------------------ GIDs */

Test(verbs_device, query_gid)
{
	union ibv_gid g, want, zero;

	memset(&zero, 0, sizeof(zero));
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &g), 0, "GID 0");
	want = gid_of(GID_LINK_LOCAL);
	cr_expect_eq(memcmp(&g, &want, 16), 0, "GID 0 is the link-local address from the MAC");
	cr_assert_eq(ibv_query_gid(ctx, 1, 1, &g), 0, "GID 1");
	want = gid_of(GID_IPV4);
	cr_expect_eq(memcmp(&g, &want, 16), 0, "GID 1 is ::ffff:10.0.0.1");
	cr_assert_eq(ibv_query_gid(ctx, 1, 2, &g), 0, "GID 2");
	want = gid_of(GID_IPV6);
	cr_expect_eq(memcmp(&g, &want, 16), 0, "GID 2 is fd00::1");
	for (int i = 3; i < DROCE_GID_TABLE_LEN; i++) {
		memset(&g, 0xa5, sizeof(g));
		cr_assert_eq(ibv_query_gid(ctx, 1, i, &g), 0, "empty GID %d", i);
		cr_expect_eq(memcmp(&g, &zero, 16), 0, "empty entry %d reads as zero", i);
	}
	errno = 0;
	cr_expect_eq(ibv_query_gid(ctx, 1, DROCE_GID_TABLE_LEN, &g), -1, "past the table: -1");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	errno = 0;
	cr_expect_eq(ibv_query_gid(ctx, 1, -1, &g), -1, "negative index: -1");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	errno = 0;
	cr_expect_eq(ibv_query_gid(ctx, 2, 0, &g), -1, "port 2: -1");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
}

Test(verbs_device, query_gid_ex)
{
	static const char *const want[] = {GID_LINK_LOCAL, GID_IPV4, GID_IPV6};
	struct ibv_gid_entry e;

	for (uint32_t i = 0; i < 3; i++) {
		union ibv_gid w = gid_of(want[i]);

		memset(&e, 0xa5, sizeof(e));
		cr_assert_eq(ibv_query_gid_ex(ctx, 1, i, &e, 0), 0, "entry %u", i);
		cr_expect_eq(memcmp(&e.gid, &w, 16), 0, "entry %u: %s", i, want[i]);
		cr_expect_eq(e.gid_index, i, "entry %u: gid_index", i);
		cr_expect_eq(e.port_num, 1, "entry %u: port_num", i);
		cr_expect_eq(e.gid_type, IBV_GID_TYPE_ROCE_V2, "entry %u: RoCE v2", i);
	}
	cr_expect_eq(ibv_query_gid_ex(ctx, 1, 3, &e, 0), ENODATA,
		     "an empty entry inside the table: ENODATA");
	cr_expect_eq(ibv_query_gid_ex(ctx, 1, DROCE_GID_TABLE_LEN - 1, &e, 0), ENODATA,
		     "the last, empty, entry: ENODATA");
	cr_expect_eq(ibv_query_gid_ex(ctx, 1, DROCE_GID_TABLE_LEN, &e, 0), EINVAL,
		     "past the table length: EINVAL");
	cr_expect_eq(ibv_query_gid_ex(ctx, 2, 0, &e, 0), EINVAL, "port 2: EINVAL");
	cr_expect_eq(ibv_query_gid_ex(ctx, 1, 0, &e, 1), EINVAL, "unknown flags: EINVAL");
}

Test(verbs_device, query_gid_table)
{
	static const char *const want[] = {GID_LINK_LOCAL, GID_IPV4, GID_IPV6};
	struct ibv_gid_entry t[DROCE_GID_TABLE_LEN];
	ssize_t n;

	memset(t, 0xa5, sizeof(t));
	n = ibv_query_gid_table(ctx, t, DROCE_GID_TABLE_LEN, 0);
	cr_assert_eq(n, 3, "three valid entries, got %zd", n);
	for (int i = 0; i < 3; i++) {
		union ibv_gid w = gid_of(want[i]);

		cr_expect_eq(memcmp(&t[i].gid, &w, 16), 0, "entry %d: %s", i, want[i]);
		cr_expect_eq(t[i].gid_index, (uint32_t)i, "entry %d: gid_index", i);
		cr_expect_eq(t[i].port_num, 1, "entry %d: port_num", i);
		cr_expect_eq(t[i].gid_type, IBV_GID_TYPE_ROCE_V2, "entry %d: RoCE v2", i);
	}
	cr_expect_eq(ibv_query_gid_table(ctx, t, 3, 0), 3, "exactly enough room");
	cr_expect_eq(ibv_query_gid_table(ctx, t, 2, 0), -EINVAL, "too little room: -EINVAL");
	cr_expect_eq(ibv_query_gid_table(ctx, t, 3, 1), -EINVAL, "unknown flags: -EINVAL");
}

/* ------------------------------------------------------------ P_Keys */

Test(verbs_device, pkeys)
{
	__be16 pkey = 0;

	cr_assert_eq(ibv_query_pkey(ctx, 1, 0, &pkey), 0, "P_Key 0");
	cr_expect_eq(be16toh(pkey), 0xffff, "the default P_Key, full member");
	errno = 0;
	cr_expect_eq(ibv_query_pkey(ctx, 1, 1, &pkey), -1, "index 1: -1");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	errno = 0;
	cr_expect_eq(ibv_query_pkey(ctx, 2, 0, &pkey), -1, "port 2: -1");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	cr_expect_eq(ibv_get_pkey_index(ctx, 1, htobe16(0xffff)), 0, "0xffff at index 0");
	cr_expect_eq(ibv_get_pkey_index(ctx, 1, htobe16(0x7fff)), 0,
		     "0x7fff (limited member of the default partition) at index 0");
	errno = 0;
	cr_expect_eq(ibv_get_pkey_index(ctx, 1, htobe16(0x1234)), -1, "an unknown P_Key: -1");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	errno = 0;
	cr_expect_eq(ibv_get_pkey_index(ctx, 2, htobe16(0xffff)), -1, "port 2: -1");
}

/* ------------------------------------------------------------ address handles */

static struct ibv_ah_attr good_ah(void)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.port_num = 1,
		.sl = 2,
		.grh = {.sgid_index = 1, .hop_limit = 64, .traffic_class = 0x10},
	};

	a.grh.dgid = gid_of("::ffff:10.0.0.2");
	return a;
}

Test(verbs_device, create_ah)
{
	struct ibv_ah_attr a = good_ah();
	struct ibv_ah *ah = ibv_create_ah(pd, &a);

	cr_assert_not_null(ah, "ibv_create_ah: %s", strerror(errno));
	cr_expect_eq(ah->pd, pd, "ah->pd");
	cr_expect_eq(ah->context, ctx, "ah->context");
	cr_expect_eq(ibv_dealloc_pd(pd), EBUSY, "the PD is busy while the AH exists");
	cr_expect_eq(ibv_destroy_ah(ah), 0, "ibv_destroy_ah");
	cr_expect_eq(ibv_dealloc_pd(pd), 0, "the PD is free");
}

Test(verbs_device, create_ah_refusals)
{
	struct ibv_ah_attr a;

	a = good_ah();
	a.is_global = 0;
	errno = 0;
	cr_expect_null(ibv_create_ah(pd, &a), "no GRH: refused (RoCE addresses by GID)");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	a = good_ah();
	a.grh.sgid_index = 3;
	errno = 0;
	cr_expect_null(ibv_create_ah(pd, &a), "sgid_index of an empty entry: refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	a.grh.sgid_index = 200;
	errno = 0;
	cr_expect_null(ibv_create_ah(pd, &a), "sgid_index past the table: refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	a = good_ah();
	a.port_num = 2;
	errno = 0;
	cr_expect_null(ibv_create_ah(pd, &a), "port 2: refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
}

Test(verbs_device, create_ah_every_sgid)
{
	for (uint8_t i = 0; i < 3; i++) {
		struct ibv_ah_attr a = good_ah();
		struct ibv_ah *ah;

		a.grh.sgid_index = i;
		ah = ibv_create_ah(pd, &a);
		cr_expect_not_null(ah, "sgid_index %u accepted", i);
		if (ah != NULL)
			cr_expect_eq(ibv_destroy_ah(ah), 0, "destroy");
	}
}

/* ------------------------------------------------------------ AH from a WC */

/* RFC 791 header checksum over 20 bytes, written independently of the library. */
static uint16_t ip4_checksum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The 40-byte GRH area of a UD receive carrying an IPv4 packet: header in the last 20. */
static void grh_ipv4(struct ibv_grh *grh, const char *src, const char *dst, uint8_t tos,
		     uint8_t first_byte)
{
	uint8_t *b = (uint8_t *)grh;
	uint8_t *h = b + 20;
	uint16_t c;

	memset(b, 0, 40);
	memset(b, first_byte, 20); /* undefined bytes: whatever the engine left there */
	h[0] = 0x45;
	h[1] = tos;
	h[2] = 0;
	h[3] = 60; /* total length */
	h[8] = 57; /* TTL */
	h[9] = 17; /* UDP */
	cr_assert_eq(inet_pton(AF_INET, src, h + 12), 1, "src");
	cr_assert_eq(inet_pton(AF_INET, dst, h + 16), 1, "dst");
	c = ip4_checksum(h);
	h[10] = (uint8_t)(c >> 8);
	h[11] = (uint8_t)c;
}

static void grh_ipv6(struct ibv_grh *grh, const char *src, const char *dst, uint8_t tclass,
		     uint32_t flow)
{
	memset(grh, 0, sizeof(*grh));
	grh->version_tclass_flow = htobe32(6u << 28 | (uint32_t)tclass << 20 | flow);
	grh->paylen = htobe16(100);
	grh->next_hdr = 17;
	grh->hop_limit = 57;
	grh->sgid = gid_of(src);
	grh->dgid = gid_of(dst);
}

static struct ibv_wc wc_with_grh(void)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = IBV_WC_RECV;
	wc.wc_flags = IBV_WC_GRH;
	wc.src_qp = 0x77;
	wc.sl = 3;
	wc.slid = 0;
	return wc;
}

Test(verbs_device, ah_from_wc_ipv4)
{
	struct ibv_grh grh;
	struct ibv_wc wc = wc_with_grh();
	struct ibv_ah_attr a;
	union ibv_gid want = gid_of("::ffff:10.0.0.2");

	grh_ipv4(&grh, "10.0.0.2", "10.0.0.1", 0x28, 0);
	memset(&a, 0xa5, sizeof(a));
	cr_assert_eq(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &a), 0, "ibv_init_ah_from_wc: %s",
		     strerror(errno));
	cr_expect_eq(a.is_global, 1, "is_global");
	cr_expect_eq(memcmp(&a.grh.dgid, &want, 16), 0, "dgid is the sender, IPv4-mapped");
	cr_expect_eq(a.grh.sgid_index, 1, "sgid_index of the address the packet was sent to");
	cr_expect_eq(a.grh.traffic_class, 0x28, "traffic class from the TOS byte");
	cr_expect_eq(a.grh.flow_label, 0, "no flow label over IPv4");
	cr_expect_neq(a.grh.hop_limit, 0, "a usable hop limit");
	cr_expect_eq(a.port_num, 1, "port_num");
	cr_expect_eq(a.sl, 3, "sl from the WC");
}

Test(verbs_device, ah_from_wc_ipv4_first_bytes_look_ipv6)
{
	struct ibv_grh grh;
	struct ibv_wc wc = wc_with_grh();
	struct ibv_ah_attr a;
	union ibv_gid want = gid_of("::ffff:10.0.0.3");

	/* the undefined first 20 bytes start with 0x6x: the IPv4 checksum decides */
	grh_ipv4(&grh, "10.0.0.3", "10.0.0.1", 0, 0x60);
	cr_assert_eq(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &a), 0, "ibv_init_ah_from_wc: %s",
		     strerror(errno));
	cr_expect_eq(memcmp(&a.grh.dgid, &want, 16), 0, "read as IPv4");
	cr_expect_eq(a.grh.sgid_index, 1, "sgid_index of 10.0.0.1");
}

Test(verbs_device, ah_from_wc_ipv6)
{
	struct ibv_grh grh;
	struct ibv_wc wc = wc_with_grh();
	struct ibv_ah_attr a;
	union ibv_gid want = gid_of("fd00::2");

	grh_ipv6(&grh, "fd00::2", "fd00::1", 0x28, 0xabcde);
	cr_assert_eq(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &a), 0, "ibv_init_ah_from_wc: %s",
		     strerror(errno));
	cr_expect_eq(a.is_global, 1, "is_global");
	cr_expect_eq(memcmp(&a.grh.dgid, &want, 16), 0, "dgid is the sender");
	cr_expect_eq(a.grh.sgid_index, 2, "sgid_index of fd00::1");
	cr_expect_eq(a.grh.traffic_class, 0x28, "traffic class");
	cr_expect_eq(a.grh.flow_label, 0xabcde, "flow label");
	cr_expect_neq(a.grh.hop_limit, 0, "a usable hop limit");
	cr_expect_eq(a.port_num, 1, "port_num");
}

Test(verbs_device, ah_from_wc_ipv6_link_local)
{
	struct ibv_grh grh;
	struct ibv_wc wc = wc_with_grh();
	struct ibv_ah_attr a;

	grh_ipv6(&grh, "fe80::1234", GID_LINK_LOCAL, 0, 0);
	cr_assert_eq(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &a), 0, "ibv_init_ah_from_wc");
	cr_expect_eq(a.grh.sgid_index, 0, "sgid_index of the link-local GID");
}

Test(verbs_device, ah_from_wc_ipv6_that_looks_ipv4)
{
	struct ibv_grh grh;
	struct ibv_wc wc = wc_with_grh();
	struct ibv_ah_attr a;
	union ibv_gid want = gid_of("fd00::4567:89ab");

	/* byte 20 of the area is byte 12 of the source address: 0x45 here, like an IPv4 header */
	grh_ipv6(&grh, "fd00::4567:89ab", "fd00::1", 0, 0x11);
	cr_assert_eq(((uint8_t *)&grh)[20], 0x45, "the test address puts 0x45 at byte 20");
	cr_assert_eq(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &a), 0, "ibv_init_ah_from_wc: %s",
		     strerror(errno));
	cr_expect_eq(memcmp(&a.grh.dgid, &want, 16), 0, "read as IPv6: dgid is the sender");
	cr_expect_eq(a.grh.sgid_index, 2, "sgid_index of fd00::1");
	cr_expect_eq(a.grh.flow_label, 0x11, "flow label");
}

Test(verbs_device, ah_from_wc_refusals)
{
	struct ibv_grh grh;
	struct ibv_wc wc = wc_with_grh();
	struct ibv_ah_attr a;

	grh_ipv4(&grh, "10.0.0.2", "10.0.0.9", 0, 0);
	errno = 0;
	cr_expect_eq(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &a), -1,
		     "a packet to an address the port does not have: -1");
	cr_expect_neq(errno, 0, "errno set");
	grh_ipv4(&grh, "10.0.0.2", "10.0.0.1", 0, 0);
	wc.wc_flags = 0;
	errno = 0;
	cr_expect_eq(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &a), -1, "no GRH in the WC: -1");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	wc.wc_flags = IBV_WC_GRH;
	errno = 0;
	cr_expect_eq(ibv_init_ah_from_wc(ctx, 2, &wc, &grh, &a), -1, "port 2: -1");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
}

Test(verbs_device, create_ah_from_wc)
{
	struct ibv_grh grh4, grh6;
	struct ibv_wc wc = wc_with_grh();
	struct ibv_ah *ah4, *ah6;

	grh_ipv4(&grh4, "10.0.0.2", "10.0.0.1", 0, 0);
	grh_ipv6(&grh6, "fd00::2", "fd00::1", 0, 5);
	ah4 = ibv_create_ah_from_wc(pd, &wc, &grh4, 1);
	cr_assert_not_null(ah4, "AH from an IPv4 GRH area: %s", strerror(errno));
	cr_expect_eq(ah4->pd, pd, "its PD");
	ah6 = ibv_create_ah_from_wc(pd, &wc, &grh6, 1);
	cr_assert_not_null(ah6, "AH from an IPv6 GRH area: %s", strerror(errno));
	cr_expect_neq(ah4, ah6, "two AHs");
	cr_expect_eq(ibv_destroy_ah(ah4), 0, "destroy");
	cr_expect_eq(ibv_destroy_ah(ah6), 0, "destroy");
	grh_ipv4(&grh4, "10.0.0.2", "10.0.0.99", 0, 0);
	cr_expect_null(ibv_create_ah_from_wc(pd, &wc, &grh4, 1), "not addressed to us: NULL");
}

/* ------------------------------------------------------------ no device */

Test(verbs_device_none, unset_gives_no_device)
{
	struct ibv_device **list;
	int n = -1;

	unsetenv("DROCE_DEVICES");
	list = ibv_get_device_list(&n);
	cr_assert_not_null(list, "an empty list, not NULL");
	cr_expect_eq(n, 0, "no device");
	cr_expect_null(list[0], "NULL-terminated");
	ibv_free_device_list(list);
}

/* ------------------------------------------------------------ other configurations */

/* Configure before the first device call of this test process (Criterion forks per test). */
static struct ibv_context *open_with(const char *devices, int index, int *count)
{
	struct ibv_device **list;
	struct ibv_context *c;
	int n = -1;

	setenv("DROCE_DEVICES", devices, 1);
	list = ibv_get_device_list(&n);
	cr_assert_not_null(list, "ibv_get_device_list");
	cr_assert_gt(n, index, "device %d of %d", index, n);
	c = ibv_open_device(list[index]);
	cr_assert_not_null(c, "ibv_open_device");
	ibv_free_device_list(list);
	if (count != NULL)
		*count = n;
	return c;
}

TestSuite(verbs_device_cfg);

Test(verbs_device_cfg, defaults)
{
	struct ibv_context *c = open_with("droce0", 0, NULL);
	union ibv_gid g, want = gid_of("fe80::d0:cff:fe00:1");
	struct ibv_gid_entry t[DROCE_GID_TABLE_LEN];
	struct ibv_port_attr p;

	cr_assert_eq(ibv_query_gid(c, 1, 0, &g), 0, "GID 0");
	cr_expect_eq(memcmp(&g, &want, 16), 0, "from the default MAC 02:d0:0c:00:00:01");
	cr_expect_eq(ibv_query_gid_table(c, t, DROCE_GID_TABLE_LEN, 0), 1,
		     "no address: the link-local GID only");
	cr_assert_eq(ibv_query_port(c, 1, &p), 0, "query_port");
	cr_expect_eq(p.active_mtu, IBV_MTU_1024, "Ethernet MTU 1500: IB MTU 1024");
	cr_expect_eq(p.active_speed, 1, "speed 0: SDR");
	cr_expect_eq(p.active_width, 1, "speed 0: 1x");
}

Test(verbs_device_cfg, speed_and_mtu)
{
	struct ibv_context *c = open_with("droce0:speed=100000,mtu=9000", 0, NULL);
	struct ibv_port_attr p;

	cr_assert_eq(ibv_query_port(c, 1, &p), 0, "query_port");
	cr_expect_eq(p.active_mtu, IBV_MTU_4096, "Ethernet MTU 9000: IB MTU 4096");
	cr_expect_eq(p.active_speed, 32, "100 Gb/s: EDR");
	cr_expect_eq(p.active_width, 2, "100 Gb/s: 4x");
}

/*
 * The path MTU a port offers must carry its largest packet: IPv6, UDP, BTH,
 * RETH and ImmDt (WRITE Only with Immediate) and the ICRC, 84 bytes beyond the
 * payload. With 72 (IPv4 and AtomicETH), an IPv6 WRITE_WITH_IMM of a full
 * packet exceeded the Ethernet MTU and the port's mbufs, and never left.
 */
Test(verbs_device_cfg, mtu_leaves_room_for_the_largest_ipv6_packet)
{
	static const struct {
		uint32_t eth;
		enum ibv_mtu ib;
	} want[] = {{595, IBV_MTU_256},   {596, IBV_MTU_512},   {1107, IBV_MTU_512},
		    {1108, IBV_MTU_1024}, {2131, IBV_MTU_1024}, {2132, IBV_MTU_2048},
		    {4179, IBV_MTU_2048}, {4180, IBV_MTU_4096}};
	char devices[512] = "";
	size_t used = 0;
	struct ibv_device **list;
	int n = 0;

	for (unsigned int i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		used += (size_t)snprintf(devices + used, sizeof(devices) - used, "d%u:mtu=%u ", i,
					 want[i].eth);
	setenv("DROCE_DEVICES", devices, 1);
	list = ibv_get_device_list(&n);
	cr_assert_not_null(list);
	cr_assert_eq(n, (int)(sizeof(want) / sizeof(want[0])));
	for (int i = 0; i < n; i++) {
		struct ibv_context *c = ibv_open_device(list[i]);
		struct ibv_port_attr p;

		cr_assert_not_null(c);
		cr_assert_eq(ibv_query_port(c, 1, &p), 0);
		cr_expect_eq(p.active_mtu, want[i].ib, "Ethernet MTU %u: IB MTU %d, expected %d",
			     want[i].eth, p.active_mtu, want[i].ib);
		cr_expect_eq(p.max_mtu, want[i].ib, "Ethernet MTU %u: max_mtu %d", want[i].eth,
			     p.max_mtu);
		ibv_close_device(c);
	}
	ibv_free_device_list(list);
}

Test(verbs_device_cfg, two_devices)
{
	int n = 0;
	struct ibv_context *c =
		open_with("a:ip=10.0.0.1 b:ip=10.0.0.2,mac=02:00:00:00:00:09", 1, &n);
	union ibv_gid g, want = gid_of("::ffff:10.0.0.2");

	cr_expect_eq(n, 2, "two devices");
	cr_expect_str_eq(ibv_get_device_name(c->device), "b", "the second is b");
	cr_expect_eq(ibv_get_device_index(c->device), 1, "at index 1");
	cr_assert_eq(ibv_query_gid(c, 1, 1, &g), 0, "GID 1");
	cr_expect_eq(memcmp(&g, &want, 16), 0, "b's own address");
	want = gid_of("fe80::ff:fe00:9");
	cr_assert_eq(ibv_query_gid(c, 1, 0, &g), 0, "GID 0");
	cr_expect_eq(memcmp(&g, &want, 16), 0, "b's own MAC");
}

Test(verbs_device_cfg, malformed_gives_no_device)
{
	struct ibv_device **list;
	int n = -1;

	setenv("DROCE_DEVICES", "droce0:mtu=abc", 1);
	list = ibv_get_device_list(&n);
	cr_assert_not_null(list, "an empty list, not NULL");
	cr_expect_eq(n, 0, "a malformed value gives no device");
	ibv_free_device_list(list);
}

/* ------------------------------------------------------------ DROCE_DEVICES */

static struct droce_port_cfg ports[DROCE_DEVICES_MAX];
static char err[256];

static int parse(const char *text)
{
	memset(ports, 0, sizeof(ports));
	err[0] = '\0';
	return droce_config_parse(text, ports, DROCE_DEVICES_MAX, err, sizeof(err));
}

static void refused(const char *text)
{
	cr_expect_eq(parse(text), -EINVAL, "refused: \"%s\"", text);
	cr_expect_neq(err[0], '\0', "with a message: \"%s\"", text);
}

TestSuite(verbs_config);

Test(verbs_config, documented_example)
{
	static const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x01};
	static const uint8_t ip4[4] = {10, 99, 0, 1};
	uint8_t ip6[16];

	cr_assert_eq(parse("droce0:mac=52:54:00:00:00:01,ip=10.99.0.1,ip=fd00::1,mtu=4200,"
			   "speed=25000"),
		     1, "one device: %s", err);
	cr_expect_str_eq(ports[0].name, "droce0", "name");
	cr_expect_eq(memcmp(ports[0].mac, mac, 6), 0, "mac");
	cr_expect_eq(ports[0].n_ipv4, 1, "one IPv4 address");
	cr_expect_eq(memcmp(ports[0].ipv4[0], ip4, 4), 0, "10.99.0.1");
	cr_expect_eq(ports[0].n_ipv6, 1, "one IPv6 address");
	inet_pton(AF_INET6, "fd00::1", ip6);
	cr_expect_eq(memcmp(ports[0].ipv6[0], ip6, 16), 0, "fd00::1");
	cr_expect_eq(ports[0].eth_mtu, 4200, "mtu");
	cr_expect_eq(ports[0].speed_mbps, 25000, "speed");
}

Test(verbs_config, defaults)
{
	static const uint8_t zero[6];

	cr_assert_eq(parse("droce0"), 1, "a bare name: %s", err);
	cr_expect_str_eq(ports[0].name, "droce0", "name");
	cr_expect_eq(ports[0].eth_mtu, 1500, "MTU 1500 by default");
	cr_expect_eq(ports[0].speed_mbps, 0, "speed 0 by default");
	cr_expect_eq(ports[0].n_ipv4, 0, "no IPv4 address");
	cr_expect_eq(ports[0].n_ipv6, 0, "no IPv6 address");
	cr_expect_eq(memcmp(ports[0].mac, zero, 6), 0, "no MAC: the device makes the default");
	cr_expect_str_eq(ports[0].vdev, "", "no vdev");
	cr_assert_eq(parse("droce0:"), 1, "a name and an empty list: %s", err);
}

Test(verbs_config, separators)
{
	cr_assert_eq(parse("a:ip=10.0.0.1 b:ip=10.0.0.2;c\td\n;e"), 5, "blanks and ';': %s", err);
	cr_expect_str_eq(ports[0].name, "a", "first");
	cr_expect_str_eq(ports[1].name, "b", "second");
	cr_expect_str_eq(ports[2].name, "c", "third");
	cr_expect_str_eq(ports[3].name, "d", "fourth");
	cr_expect_str_eq(ports[4].name, "e", "fifth");
	cr_expect_eq(ports[1].ipv4[0][3], 2, "b's address is its own");
}

Test(verbs_config, empty)
{
	cr_expect_eq(parse(""), 0, "empty text: no device");
	cr_expect_eq(parse("  ;; \t"), 0, "separators only: no device");
}

Test(verbs_config, names)
{
	cr_expect_eq(parse("dev_0-x"), 1, "letters, digits, '_' and '-': %s", err);
	refused("Droce0");
	refused(":mtu=1500");
	refused("droce.0");
	refused("droce0/1");
	refused("a123456789a123456789a123456789a123456789a123456789a123456789abcd"); /* 64 chars */
	cr_expect_eq(parse("a123456789a123456789a123456789a123456789a123456789a123456789abc"), 1,
		     "63 characters: %s", err);
	refused("droce0 droce0");
	refused("a;b;a");
}

Test(verbs_config, keys)
{
	refused("droce0:foo=1");
	refused("droce0:mac");
	refused("droce0:mtu");
	refused("droce0:=1");
}

Test(verbs_config, mac)
{
	cr_assert_eq(parse("d:mac=02:aB:cd:EF:00:ff"), 1, "hex of either case: %s", err);
	cr_expect_eq(ports[0].mac[1], 0xab, "byte 1");
	cr_expect_eq(ports[0].mac[5], 0xff, "byte 5");
	refused("d:mac=01:00:5e:00:00:01"); /* multicast */
	refused("d:mac=ff:ff:ff:ff:ff:ff"); /* broadcast */
	refused("d:mac=02:00:00:00:00");
	refused("d:mac=02:00:00:00:00:01:02");
	refused("d:mac=02:00:00:00:00:100");
	refused("d:mac=02:00:00:00:00:0g");
	refused("d:mac=");
}

Test(verbs_config, addresses)
{
	cr_assert_eq(parse("d:ip=10.0.0.1,ip=10.0.0.2,ip=10.0.0.3,ip=10.0.0.4,ip=10.0.0.5,"
			   "ip=10.0.0.6,ip=10.0.0.7,ip=10.0.0.8,ip=fd00::1,ip=fd00::2,ip=fd00::3,"
			   "ip=fd00::4,ip=fd00::5,ip=fd00::6,ip=fd00::7,ip=fd00::8"),
		     1, "8 IPv4 and 8 IPv6 addresses: %s", err);
	cr_expect_eq(ports[0].n_ipv4, 8, "8 IPv4");
	cr_expect_eq(ports[0].n_ipv6, 8, "8 IPv6");
	cr_expect_eq(ports[0].ipv4[7][3], 8, "the eighth IPv4 in order");
	refused("d:ip=10.0.0.1,ip=10.0.0.2,ip=10.0.0.3,ip=10.0.0.4,ip=10.0.0.5,ip=10.0.0.6,"
		"ip=10.0.0.7,ip=10.0.0.8,ip=10.0.0.9");
	refused("d:ip=fd00::1,ip=fd00::2,ip=fd00::3,ip=fd00::4,ip=fd00::5,ip=fd00::6,"
		"ip=fd00::7,ip=fd00::8,ip=fd00::9");
	refused("d:ip=10.0.0.256");
	refused("d:ip=fe80::1%eth0");
	refused("d:ip=host");
	refused("d:ip=");
}

Test(verbs_config, mtu_and_speed)
{
	cr_expect_eq(parse("d:mtu=576"), 1, "MTU 576: %s", err);
	cr_expect_eq(parse("d:mtu=9216"), 1, "MTU 9216: %s", err);
	cr_expect_eq(ports[0].eth_mtu, 9216, "9216");
	refused("d:mtu=575");
	refused("d:mtu=9217");
	refused("d:mtu=abc");
	refused("d:mtu=1500x");
	refused("d:mtu=-1500");
	refused("d:mtu=");
	cr_expect_eq(parse("d:mtu=01500"), 1, "a leading zero: %s", err);
	cr_expect_eq(ports[0].eth_mtu, 1500, "read as decimal, not octal");
	cr_expect_eq(parse("d:speed=0"), 1, "speed 0: %s", err);
	cr_expect_eq(parse("d:speed=800000"), 1, "speed 800000: %s", err);
	refused("d:speed=800001");
}

Test(verbs_config, window)
{
	cr_expect_eq(parse("d:ip=10.0.0.1"), 1, "%s", err);
	cr_expect_eq(ports[0].window, 0u, "unset: the engine's default");
	cr_expect_eq(parse("d:window=256"), 1, "%s", err);
	cr_expect_eq(ports[0].window, 256u);
	cr_expect_eq(parse("d:window=none"), 1, "%s", err);
	cr_expect_eq(ports[0].window, UINT32_MAX, "none: no window");
	cr_expect_eq(parse("d:window=128"), 1, "the smallest: %s", err);
	cr_expect_eq(parse("d:window=4194304"), 1, "the largest: %s", err);
	refused("d:window=127");
	refused("d:window=0");
	refused("d:window=4194305");
	refused("d:window=lots");
}

Test(verbs_config, vdev)
{
	char text[200];

	cr_assert_eq(parse("d:vdev=net_tap0"), 1, "a vdev name: %s", err);
	cr_expect_str_eq(ports[0].vdev, "net_tap0", "vdev");
	cr_assert_eq(parse("d:vdev=0000:03:00.0,mtu=9000"), 1, "a PCI address: %s", err);
	cr_expect_str_eq(ports[0].vdev, "0000:03:00.0", "the colons of a PCI address are kept");
	cr_expect_eq(ports[0].eth_mtu, 9000, "and the keys after it are read");
	snprintf(text, sizeof(text), "d:vdev=%0127d", 0);
	cr_expect_eq(parse(text), 1, "a 127-character vdev: %s", err);
	snprintf(text, sizeof(text), "d:vdev=%0128d", 0);
	refused(text);
}

Test(verbs_config, device_count)
{
	char text[512] = "";
	size_t len = 0;

	for (int i = 0; i < DROCE_DEVICES_MAX; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "d%d ", i);
	cr_expect_eq(parse(text), DROCE_DEVICES_MAX, "%d devices: %s", DROCE_DEVICES_MAX, err);
	snprintf(text + len, sizeof(text) - len, "extra");
	refused(text);
}

Test(verbs_config, fault)
{
	const struct droce_engine_fault_conf *f = &ports[0].fault;

	cr_assert_eq(parse("d:link=l0,fault=drop:0.05+dup:0.02+reorder:0.05+seed:7,mtu=4200"), 1,
		     "the documented example: %s", err);
	cr_expect(f->enabled, "an injector");
	cr_expect_eq(f->drop, 0.05, "drop");
	cr_expect_eq(f->dup, 0.02, "dup");
	cr_expect_eq(f->reorder, 0.05, "reorder");
	cr_expect_eq(f->corrupt, 0.0, "no corrupt");
	cr_expect_eq(f->delay, 0.0, "no delay");
	cr_expect_eq(f->seed, 7, "seed");
	cr_expect_not(f->roce_only, "every frame by default");
	cr_expect_eq(ports[0].eth_mtu, 4200, "the keys after it still apply");
	cr_assert_eq(parse("d:fault=corrupt:1+delay:0+after:9+reorder_us:250+delay_us:1000000+"
			   "seed:0x10+match:roce"),
		     1, "every item: %s", err);
	cr_expect_eq(f->corrupt, 1.0, "corrupt");
	cr_expect_eq(f->reorder_after, 9, "after");
	cr_expect_eq(f->reorder_max_us, 250, "reorder_us");
	cr_expect_eq(f->delay_us, 1000000, "delay_us");
	cr_expect_eq(f->seed, 16, "seed in hex");
	cr_expect(f->roce_only, "match:roce");
	cr_assert_eq(parse("d:fault=seed:3"), 1, "no rate: %s", err);
	cr_expect(f->enabled, "an injector with no rule");
	cr_assert_eq(parse("d:ip=10.0.0.1"), 1, "%s", err);
	cr_expect_not(f->enabled, "no fault= key: no injector");
}

Test(verbs_config, fault_refused)
{
	refused("d:fault=drop:1.5");
	refused("d:fault=drop:-0.1");
	refused("d:fault=drop:nan");
	refused("d:fault=drop:");
	refused("d:fault=drop");
	refused("d:fault=loss:0.1");
	refused("d:fault=after:0");
	refused("d:fault=after:1025");
	refused("d:fault=delay_us:0");
	refused("d:fault=seed:-1");
	refused("d:fault=match:arp");
	refused("d:fault=drop:0.1,dup:0.1"); /* ',' separates keys: "dup:0.1" is no key=value */
}

Test(verbs_config, fault_drop_at)
{
	const struct droce_engine_fault_conf *f = &ports[0].fault;

	cr_assert_eq(parse("d:fault=drop_at:1/5-6+match:roce"), 1, "%s", err);
	cr_expect_eq(f->n_drop_at, 2, "two ranges");
	cr_expect_eq(f->drop_at[0].first, 1, "first range starts at 1");
	cr_expect_eq(f->drop_at[0].last, 1, "first range is one frame");
	cr_expect_eq(f->drop_at[1].first, 5, "second range starts at 5");
	cr_expect_eq(f->drop_at[1].last, 6, "second range ends at 6");
	cr_expect_eq(f->drop, 0.0, "no drop rate");
	cr_expect(f->roce_only, "the items after it still apply");
	refused("d:fault=drop_at:");
	refused("d:fault=drop_at:5/1");
	refused("d:fault=drop_at:1-x");
	/* more ranges than DROCE_ENGINE_FAULT_AT_MAX */
	refused("d:fault=drop_at:0/1/2/3/4/5/6/7/8");
}

Test(verbs_config, static_neighbours)
{
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x02};
	uint8_t ip6[16];

	cr_assert_eq(
		parse("droce0:neigh=10.0.0.2@02:00:00:00:00:02,neigh=fd00::2@02:00:00:00:00:02"), 1,
		"%s", err);
	cr_assert_eq(ports[0].n_neigh, 2);
	cr_expect_eq(memcmp(ports[0].neigh[0].ip,
			    (uint8_t[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2}, 16),
		     0, "IPv4 kept IPv4-mapped");
	cr_expect_eq(memcmp(ports[0].neigh[0].mac, mac, 6), 0);
	inet_pton(AF_INET6, "fd00::2", ip6);
	cr_expect_eq(memcmp(ports[0].neigh[1].ip, ip6, 16), 0, "IPv6 as written");
}

Test(verbs_config, bad_static_neighbours)
{
	refused("droce0:neigh=10.0.0.2");                     /* no MAC */
	refused("droce0:neigh=10.0.0.2@");                    /* empty MAC */
	refused("droce0:neigh=10.0.0.256@02:00:00:00:00:02"); /* not an address */
	refused("droce0:neigh=@02:00:00:00:00:02");           /* no address */
	refused("droce0:neigh=10.0.0.2@01:00:5e:00:00:01");   /* a multicast MAC */
	refused("droce0:neigh=10.0.0.2@02:00:00:00:00");      /* a short MAC */
}

Test(verbs_config, too_many_static_neighbours)
{
	char text[2048] = "droce0:";

	for (int i = 0; i <= DROCE_ENGINE_NEIGH_MAX; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "%sneigh=10.0.0.%d@02:00:00:00:00:02", i ? "," : "", i + 1);
	refused(text);
}
