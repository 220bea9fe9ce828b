/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_resolve_eth_l2_from_gid() through the neighbour table of the port
 * (doc/neighbours.md), in both backends: two droce devices joined back to
 * back in this process (the embedded engine), and the same in droced for an
 * application of droced. A peer's IPv4 GID is resolved by ARP, its IPv6 GID
 * by neighbour discovery, the port's own GIDs without asking anyone, and an
 * address nobody answers for gives -EHOSTUNREACH once the table gives up
 * (negative, as rdma-core returns it).
 */
#include <errno.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "ud_pair.h"

/* droce0 (10.0.0.1) and droce1 (10.0.0.2) of ud_pair.h, each with an IPv6 address too */
#define LINK ",ip=fd00::1", ",ip=fd00::2"

static const uint8_t mac0_of_pair[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t mac1[6] = {0x02, 0, 0, 0, 0, 0x02};
/* droced's second device (daemon_harness.h) */
static const uint8_t dmac1[6] = {0x02, 0, 0, 0, 0x0d, 0x02};

/* GID table of a droce port: 0 link-local, 1 its IPv4 address, 2 its IPv6 address. */
#define GID_V4 1
#define GID_V6 2

static union ibv_gid v4_gid(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	union ibv_gid g = {.raw = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d}};

	return g;
}

static int resolve(struct ibv_context *ctx, const union ibv_gid *dgid, int sgid_index,
		   uint8_t mac[6])
{
	struct ibv_ah_attr a = {.is_global = 1, .port_num = 1};
	uint16_t vid = 0;
	int rc;

	a.grh.dgid = *dgid;
	a.grh.sgid_index = (uint8_t)sgid_index;
	rc = ibv_resolve_eth_l2_from_gid(ctx, &a, mac, &vid);
	if (rc == 0 && vid != 0xffff)
		return -1; /* droce ports are untagged */
	return rc;
}

/* ----------------------------------------------------------------- embedded */

Test(verbs_resolve_embedded, ipv4_gid_by_arp, .timeout = 60)
{
	union ibv_gid peer;
	uint8_t mac[6] = {0};

	ud_pair_open(LINK);
	cr_assert_eq(ibv_query_gid(e1.ctx, 1, GID_V4, &peer), 0);
	cr_assert_eq(port_counter(e0.ctx, "neigh_requests"), 0, "nothing asked yet");
	cr_assert_eq(resolve(e0.ctx, &peer, GID_V4, mac), 0, "resolved");
	cr_expect_arr_eq(mac, mac1, 6, "droce1's MAC");
	cr_expect_geq(port_counter(e0.ctx, "neigh_requests"), 1, "an ARP request went out");
}

Test(verbs_resolve_embedded, ipv6_gid_by_neighbour_discovery, .timeout = 60)
{
	union ibv_gid peer;
	uint8_t mac[6] = {0};

	ud_pair_open(LINK);
	cr_assert_eq(ibv_query_gid(e1.ctx, 1, GID_V6, &peer), 0);
	cr_assert_eq(resolve(e0.ctx, &peer, GID_V6, mac), 0, "resolved");
	cr_expect_arr_eq(mac, mac1, 6, "droce1's MAC");
	cr_expect_geq(port_counter(e0.ctx, "neigh_requests"), 1, "a solicitation went out");
}

Test(verbs_resolve_embedded, own_gid_without_asking, .timeout = 60)
{
	union ibv_gid own;
	uint8_t mac[6] = {0};
	const uint8_t mac0[6] = {0x02, 0, 0, 0, 0, 0x01};

	ud_pair_open(LINK);
	cr_assert_eq(ibv_query_gid(e0.ctx, 1, GID_V4, &own), 0);
	cr_assert_eq(resolve(e0.ctx, &own, GID_V4, mac), 0, "resolved");
	cr_expect_arr_eq(mac, mac0, 6, "the port's own MAC");
	cr_expect_eq(port_counter(e0.ctx, "neigh_requests"), 0, "no request went out");
}

/* rdma-core fills the vlan id only when asked for it: a NULL vid is allowed. */
Test(verbs_resolve_embedded, vid_may_be_null, .timeout = 60)
{
	struct ibv_ah_attr a = {.is_global = 1, .port_num = 1};
	uint8_t mac[6] = {0};

	ud_pair_open(LINK);
	cr_assert_eq(ibv_query_gid(e0.ctx, 1, GID_V4, &a.grh.dgid), 0);
	a.grh.sgid_index = GID_V4;
	cr_expect_eq(ibv_resolve_eth_l2_from_gid(e0.ctx, &a, mac, NULL), 0, "resolved, no vid");
	cr_expect_arr_eq(mac, mac0_of_pair, 6, "the port's own MAC");
}

Test(verbs_resolve_embedded, nobody_answers_is_ehostunreach, .timeout = 60)
{
	union ibv_gid dead = v4_gid(10, 0, 0, 9);
	uint8_t mac[6];

	ud_pair_open(LINK);
	cr_expect_eq(resolve(e0.ctx, &dead, GID_V4, mac), -EHOSTUNREACH, "10.0.0.9 is nobody's");
	cr_expect_geq(port_counter(e0.ctx, "neigh_failed"), 1, "the table gave up");
}

/* ------------------------------------------------------------------ droced */

static struct test_daemon daemon_;

static void daemon_up(void)
{
	test_daemon_start(&daemon_, NULL);
}

static void daemon_down(void)
{
	cr_expect_eq(test_daemon_stop(&daemon_), 0, "%s", test_daemon_log(&daemon_));
}

TestSuite(verbs_resolve_droced, .init = daemon_up, .fini = daemon_down, .timeout = 60);

/* An application of droced: resolve @p arg's GID from device 0; exit 0 when as expected. */
struct case_ {
	union ibv_gid gid;
	int sgid_index;
	int want;                /* the return value */
	const uint8_t *want_mac; /* with 0 */
};

static int app_resolve(void *arg)
{
	const struct case_ *k = arg;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list != NULL && list[0] != NULL ? ibv_open_device(list[0]) : NULL;
	uint8_t mac[6] = {0};
	int rc;

	if (ctx == NULL)
		return 10;
	rc = resolve(ctx, &k->gid, k->sgid_index, mac);
	if (rc != k->want)
		return 20 + (rc < 0 ? -rc : rc) % 100;
	if (rc == 0 && memcmp(mac, k->want_mac, 6) != 0)
		return 30;
	ibv_close_device(ctx);
	return 0;
}

static int run_app(const struct case_ *k)
{
	return test_app_wait(test_app_start(&daemon_, app_resolve, (void *)k), 30);
}

Test(verbs_resolve_droced, ipv4_gid_by_arp)
{
	struct case_ k = {.gid = v4_gid(10, 9, 0, 2), .sgid_index = GID_V4, .want_mac = dmac1};

	cr_expect_eq(run_app(&k), 0, "10.9.0.2 resolved to droce1's MAC\n%s",
		     test_daemon_log(&daemon_));
}

Test(verbs_resolve_droced, ipv6_gid_by_neighbour_discovery)
{
	struct case_ k = {.gid = {.raw = {0xfd, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}},
			  .sgid_index = GID_V6,
			  .want_mac = dmac1};

	cr_expect_eq(run_app(&k), 0, "fd00:9::2 resolved to droce1's MAC\n%s",
		     test_daemon_log(&daemon_));
}

Test(verbs_resolve_droced, nobody_answers_is_ehostunreach)
{
	struct case_ k = {.gid = v4_gid(10, 9, 0, 99), .sgid_index = GID_V4, .want = -EHOSTUNREACH};

	cr_expect_eq(run_app(&k), 0, "10.9.0.99 is nobody's: -EHOSTUNREACH\n%s",
		     test_daemon_log(&daemon_));
}
