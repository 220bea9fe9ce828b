/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A DPDK device named without mac= keeps its own MAC, and the verbs device follows it
 * (node GUID, link-local GID) once the engine has opened it: two processes on one link
 * never share the index-based default. With mac=, the configured one wins.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <droce_engine.h>
#include <droce_wire_hdr.h>

static char sock[64];

static struct ibv_context *open_only(const char *extra)
{
	char devices[256];
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n;

	snprintf(sock, sizeof(sock), "/tmp/droce-mac-%d.sock", (int)getpid());
	snprintf(devices, sizeof(devices),
		 "droce0:ip=10.0.0.1%s,vdev=net_memif0+role=server+socket=%s+socket-abstract=no",
		 extra, sock);
	setenv("DROCE_DEVICES", devices, 1);
	list = ibv_get_device_list(&n);
	cr_assert_eq(n, 1);
	ctx = ibv_open_device(list[0]);
	cr_assert_not_null(ctx);
	ibv_free_device_list(list);
	return ctx;
}

Test(embedded_mac, device_without_mac_takes_its_own, .timeout = 30)
{
	static const uint8_t index_default[6] = {0x02, 0xd0, 0x0c, 0x00, 0x00, 0x01};
	struct ibv_context *ctx = open_only("");
	struct droce_engine_port_info info;
	union ibv_gid gid;
	__be64 guid;
	uint8_t id[8];

	cr_assert_eq(droce_engine_port_info("droce0", &info), 0);
	cr_expect_neq(memcmp(info.mac, index_default, 6), 0, "not the index-based default");
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	droce_eui64_from_mac(info.mac, id); /* tested in test_wire_hdr.c */
	cr_expect_eq(memcmp(gid.raw + 8, id, 8), 0, "the link-local GID is the device's MAC's");
	guid = ibv_get_device_guid(ctx->device);
	cr_expect_eq(memcmp(&guid, id, 8), 0, "so is the node GUID");
	ibv_close_device(ctx);
	unlink(sock);
}

Test(embedded_mac, configured_mac_wins, .timeout = 30)
{
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	struct ibv_context *ctx = open_only(",mac=02:00:00:00:00:42");
	struct droce_engine_port_info info;
	union ibv_gid gid;
	uint8_t id[8];

	cr_assert_eq(droce_engine_port_info("droce0", &info), 0);
	cr_expect_eq(memcmp(info.mac, mac, 6), 0, "the port sends from the configured MAC");
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	droce_eui64_from_mac(mac, id);
	cr_expect_eq(memcmp(gid.raw + 8, id, 8), 0);
	ibv_close_device(ctx);
	unlink(sock);
}
