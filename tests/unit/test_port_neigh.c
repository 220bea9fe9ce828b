/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour table of lib/port: configuration checks, the entry states and
 * the timers that move them (driven by the time the caller passes), the
 * requests handed out, static entries, capacity and reclaiming, and the hash
 * table against a reference model.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <droce_neigh.h>

#define IP4(a, b, c, d) ((const uint8_t[4]){a, b, c, d})
#define T0              1000000ull /* 1 s, in microseconds */
#define RETRANS         DROCE_NEIGH_RETRANS_US_DEFAULT
#define REACHABLE       DROCE_NEIGH_REACHABLE_US_DEFAULT

static const uint8_t mac3[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x03}; /* the port */
static const uint8_t mac7[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x07};
static const uint8_t mac8[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x08};
static const uint8_t zero6[6];

static struct droce_neigh *n;
static struct droce_neigh_frame reply;

static void fini(void)
{
	droce_neigh_free(n);
	n = NULL;
}

static void v4(uint8_t ip[16], uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	droce_neigh_ip_from_ipv4(ip, IP4(a, b, c, d));
}

static void v6(uint8_t ip[16], const char *text)
{
	cr_assert_eq(inet_pton(AF_INET6, text, ip), 1, "bad address %s", text);
}

/* 10.99.0.3 and fd00::3 on mac3. */
static void cfg_port(struct droce_neigh_cfg *cfg)
{
	droce_neigh_cfg_init(cfg);
	memcpy(cfg->mac, mac3, 6);
	v4(cfg->addr[0], 10, 99, 0, 3);
	v6(cfg->addr[1], "fd00::3");
	cfg->addr_count = 2;
}

static struct droce_neigh *port_with(const struct droce_neigh_cfg *cfg)
{
	struct droce_neigh *p = NULL;

	cr_assert_eq(droce_neigh_create(cfg, &p), 0);
	return p;
}

static struct droce_neigh *port(void)
{
	struct droce_neigh_cfg cfg;

	cfg_port(&cfg);
	return port_with(&cfg);
}

static struct droce_neigh_info info_of(const uint8_t ip[16])
{
	struct droce_neigh_info info;

	cr_assert_eq(droce_neigh_lookup(n, ip, &info), 0, "no entry");
	return info;
}

#define EXPECT_STATE(ip, want)                                                                  \
	do {                                                                                    \
		struct droce_neigh_info i_;                                                     \
		int rc_ = droce_neigh_lookup(n, ip, &i_);                                       \
		enum droce_neigh_state got_ = rc_ == 0 ? i_.state : DROCE_NEIGH_NONE;           \
		cr_assert_eq(got_, want, "state %s, expected %s", droce_neigh_state_name[got_], \
			     droce_neigh_state_name[want]);                                     \
	} while (0)

/* ARP from 10.99.0.@p host (MAC @p mac): a reply unicast to us, or a request for us. */
static size_t arp(uint8_t *f, uint16_t op, uint8_t host, const uint8_t mac[6])
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct droce_eth_hdr *eth = (struct droce_eth_hdr *)f;
	struct droce_arp_hdr *a = (struct droce_arp_hdr *)(eth + 1);

	memcpy(eth->dst, op == DROCE_ARP_OP_REPLY ? mac3 : bcast, 6);
	memcpy(eth->src, mac, 6);
	droce_eth_set_type(eth, DROCE_ETHERTYPE_ARP);
	droce_arp_set_htype(a, DROCE_ARP_HTYPE_ETHER);
	droce_arp_set_ptype(a, DROCE_ETHERTYPE_IPV4);
	a->hlen = 6;
	a->plen = 4;
	droce_arp_set_op(a, op);
	memcpy(a->sha, mac, 6);
	memcpy(a->spa, IP4(10, 99, 0, host), 4);
	memcpy(a->tha, op == DROCE_ARP_OP_REPLY ? mac3 : zero6, 6);
	memcpy(a->tpa, IP4(10, 99, 0, 3), 4);
	return sizeof(*eth) + sizeof(*a);
}

static enum droce_neigh_status answer(uint8_t host, const uint8_t mac[6], uint64_t now)
{
	uint8_t f[64];

	return droce_neigh_rx(n, f, arp(f, DROCE_ARP_OP_REPLY, host, mac), now, &reply);
}

static enum droce_neigh_status ask_us(uint8_t host, const uint8_t mac[6], uint64_t now)
{
	uint8_t f[64];

	return droce_neigh_rx(n, f, arp(f, DROCE_ARP_OP_REQUEST, host, mac), now, &reply);
}

/* ---- addresses and names */

Test(neigh_ip, ipv4_mapped)
{
	uint8_t ip[16];
	const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 99, 0, 2};

	droce_neigh_ip_from_ipv4(ip, IP4(10, 99, 0, 2));
	cr_assert_arr_eq(ip, want, 16);
	cr_assert(droce_neigh_ip_is_ipv4(ip));
	v6(ip, "fd00::2");
	cr_assert_not(droce_neigh_ip_is_ipv4(ip));
	v6(ip, "::fffe:a63:2");
	cr_assert_not(droce_neigh_ip_is_ipv4(ip));
	v6(ip, "1::ffff:a63:2");
	cr_assert_not(droce_neigh_ip_is_ipv4(ip));
	v6(ip, "::ffff:10.99.0.2");
	cr_assert(droce_neigh_ip_is_ipv4(ip));
}

Test(neigh_names, every_state_and_status_is_named)
{
	int i, j;

	for (i = 0; i < DROCE_NEIGH_STATE_COUNT; i++)
		cr_assert_not_null(droce_neigh_state_name[i], "state %d", i);
	for (i = 0; i < DROCE_NEIGH_STATUS_COUNT; i++) {
		cr_assert_not_null(droce_neigh_status_name[i], "status %d", i);
		for (j = 0; j < i; j++)
			cr_assert_str_neq(droce_neigh_status_name[i], droce_neigh_status_name[j]);
	}
	cr_assert_str_eq(droce_neigh_status_name[DROCE_NEIGH_ND_BAD_CSUM], "nd_bad_csum");
	cr_assert_str_eq(droce_neigh_state_name[DROCE_NEIGH_REACHABLE], "reachable");
}

/* ---- configuration */

Test(neigh_cfg, defaults)
{
	struct droce_neigh_cfg cfg;

	memset(&cfg, 0x5a, sizeof(cfg));
	droce_neigh_cfg_init(&cfg);
	cr_assert_eq(cfg.capacity, 256);
	cr_assert_eq(cfg.reachable_us, 30000000u, "RFC 4861 10: REACHABLE_TIME");
	cr_assert_eq(cfg.retrans_us, 1000000u, "RFC 4861 10: RETRANS_TIMER");
	cr_assert_eq(cfg.max_multicast, 3, "RFC 4861 10: MAX_MULTICAST_SOLICIT");
	cr_assert_eq(cfg.max_unicast, 3, "RFC 4861 10: MAX_UNICAST_SOLICIT");
	cr_assert_eq(cfg.addr_count, 0);
	cr_assert_not(cfg.has_vlan);
	cr_assert_arr_eq(cfg.mac, zero6, 6);
	droce_neigh_cfg_init(NULL);
}

enum bad_cfg {
	BAD_MAC_ZERO,
	BAD_MAC_GROUP,
	BAD_VID_0,
	BAD_VID_4095,
	BAD_ADDR_COUNT,
	BAD_ADDR_UNSPEC,
	BAD_ADDR_MCAST6,
	BAD_ADDR_LOOP6,
	BAD_ADDR_ZERO4,
	BAD_ADDR_LOOP4,
	BAD_ADDR_MCAST4,
	BAD_ADDR_BCAST4,
	BAD_ADDR_DUP,
	BAD_CAPACITY_0,
	BAD_CAPACITY_BIG,
	BAD_REACHABLE_0,
	BAD_RETRANS_0,
	BAD_MCAST_0,
	BAD_UCAST_0,
	BAD_CFG_COUNT,
};

static const char *const bad_cfg_name[BAD_CFG_COUNT] = {
	"MAC zero",          "MAC group",         "VID 0",
	"VID 4095",          "17 addresses",      "address ::",
	"address ff02::1",   "address ::1",       "address 0.0.0.0",
	"address 127.0.0.1", "address 224.0.0.1", "address 255.255.255.255",
	"address twice",     "capacity 0",        "capacity too big",
	"reachable 0",       "retrans 0",         "max_multicast 0",
	"max_unicast 0",
};

static void break_cfg(struct droce_neigh_cfg *cfg, enum bad_cfg what)
{
	switch (what) {
	case BAD_MAC_ZERO:
		memset(cfg->mac, 0, 6);
		break;
	case BAD_MAC_GROUP:
		cfg->mac[0] |= 1;
		break;
	case BAD_VID_0:
		cfg->has_vlan = true;
		cfg->vlan_tci = 0xe000;
		break;
	case BAD_VID_4095:
		cfg->has_vlan = true;
		cfg->vlan_tci = 0x0fff;
		break;
	case BAD_ADDR_COUNT:
		cfg->addr_count = DROCE_NEIGH_ADDR_MAX + 1;
		break;
	case BAD_ADDR_UNSPEC:
		v6(cfg->addr[1], "::");
		break;
	case BAD_ADDR_MCAST6:
		v6(cfg->addr[1], "ff02::1");
		break;
	case BAD_ADDR_LOOP6:
		v6(cfg->addr[1], "::1");
		break;
	case BAD_ADDR_ZERO4:
		v4(cfg->addr[0], 0, 0, 0, 0);
		break;
	case BAD_ADDR_LOOP4:
		v4(cfg->addr[0], 127, 0, 0, 1);
		break;
	case BAD_ADDR_MCAST4:
		v4(cfg->addr[0], 224, 0, 0, 1);
		break;
	case BAD_ADDR_BCAST4:
		v4(cfg->addr[0], 255, 255, 255, 255);
		break;
	case BAD_ADDR_DUP:
		memcpy(cfg->addr[2], cfg->addr[0], 16);
		cfg->addr_count = 3;
		break;
	case BAD_CAPACITY_0:
		cfg->capacity = 0;
		break;
	case BAD_CAPACITY_BIG:
		cfg->capacity = DROCE_NEIGH_CAPACITY_MAX + 1;
		break;
	case BAD_REACHABLE_0:
		cfg->reachable_us = 0;
		break;
	case BAD_RETRANS_0:
		cfg->retrans_us = 0;
		break;
	case BAD_MCAST_0:
		cfg->max_multicast = 0;
		break;
	case BAD_UCAST_0:
		cfg->max_unicast = 0;
		break;
	default:
		break;
	}
}

Test(neigh_cfg, each_bad_field_is_refused)
{
	int i;

	for (i = 0; i < BAD_CFG_COUNT; i++) {
		struct droce_neigh_cfg cfg;
		struct droce_neigh *p = (struct droce_neigh *)&cfg; /* must stay untouched */

		cfg_port(&cfg);
		break_cfg(&cfg, (enum bad_cfg)i);
		cr_assert_eq(droce_neigh_create(&cfg, &p), -EINVAL, "%s accepted", bad_cfg_name[i]);
		cr_assert_eq(p, (struct droce_neigh *)&cfg, "%s: *out written", bad_cfg_name[i]);
	}
}

Test(neigh_cfg, edges_accepted, .fini = fini)
{
	struct droce_neigh_cfg cfg;
	int i;

	cfg_port(&cfg);
	cfg.capacity = DROCE_NEIGH_CAPACITY_MAX;
	cfg.has_vlan = true;
	cfg.vlan_tci = 0xf001; /* PCP 7, DEI, VID 1 */
	for (i = 2; i < DROCE_NEIGH_ADDR_MAX; i++)
		v4(cfg.addr[i], 10, 0, 0, (uint8_t)i);
	cfg.addr_count = DROCE_NEIGH_ADDR_MAX;
	n = port_with(&cfg);
	droce_neigh_free(n);
	cfg_port(&cfg);
	cfg.capacity = 1;
	cfg.addr_count = 0; /* a port with no address yet answers nothing and asks nothing */
	n = port_with(&cfg);
}

Test(neigh_cfg, null_arguments)
{
	struct droce_neigh_cfg cfg;
	struct droce_neigh_stats st;
	struct droce_neigh_info info;
	struct droce_neigh_req req = {.unicast = false};
	struct droce_neigh_frame f;
	struct droce_neigh_msg msg;
	uint8_t ip[16], mac[6];

	cfg_port(&cfg);
	v4(ip, 10, 99, 0, 7);
	memcpy(req.ip, ip, 16);
	cr_assert_eq(droce_neigh_create(NULL, &n), -EINVAL);
	cr_assert_eq(droce_neigh_create(&cfg, NULL), -EINVAL);
	droce_neigh_free(NULL);
	n = port_with(&cfg);
	cr_assert_eq(droce_neigh_lookup(NULL, ip, &info), -EINVAL);
	cr_assert_eq(droce_neigh_lookup(n, NULL, &info), -EINVAL);
	cr_assert_eq(droce_neigh_lookup(n, ip, NULL), -EINVAL);
	cr_assert_eq(droce_neigh_resolve(NULL, ip, T0, mac), -EINVAL);
	cr_assert_eq(droce_neigh_resolve(n, NULL, T0, mac), -EINVAL);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, NULL), -EINVAL);
	cr_assert_eq(droce_neigh_add_static(NULL, ip, mac7, T0), -EINVAL);
	cr_assert_eq(droce_neigh_add_static(n, NULL, mac7, T0), -EINVAL);
	cr_assert_eq(droce_neigh_add_static(n, ip, NULL, T0), -EINVAL);
	cr_assert_eq(droce_neigh_delete(NULL, ip), -EINVAL);
	cr_assert_eq(droce_neigh_delete(n, NULL), -EINVAL);
	cr_assert_eq(droce_neigh_pending(NULL, T0, &req, 1), 0);
	cr_assert_eq(droce_neigh_pending(n, T0, NULL, 1), 0);
	cr_assert_eq(droce_neigh_build_request(NULL, &req, &f), -EINVAL);
	cr_assert_eq(droce_neigh_build_request(n, NULL, &f), -EINVAL);
	cr_assert_eq(droce_neigh_build_request(n, &req, NULL), -EINVAL);
	cr_assert_eq(droce_neigh_rx(NULL, mac, 6, T0, &f), DROCE_NEIGH_NOT_NEIGH);
	cr_assert_eq(droce_neigh_rx(n, NULL, 6, T0, &f), DROCE_NEIGH_NOT_NEIGH);
	cr_assert_eq(droce_neigh_rx(n, mac, 6, T0, NULL), DROCE_NEIGH_NOT_NEIGH);
	cr_assert_eq(droce_neigh_parse(NULL, 6, &msg), DROCE_NEIGH_NOT_NEIGH);
	cr_assert_eq(droce_neigh_parse(mac, 6, NULL), DROCE_NEIGH_NOT_NEIGH);
	memset(&st, 0x5a, sizeof(st));
	droce_neigh_stats_get(NULL, &st);
	cr_assert_eq(st.entries, 0);
	cr_assert_eq(st.rx[0], 0);
	droce_neigh_stats_get(n, NULL);
	droce_neigh_free(n);
	n = NULL;
}

/* ---- resolution */

Test(neigh_resolve, refuses_what_is_no_neighbour, .fini = fini)
{
	static const char *const bad6[] = {"::", "::1", "ff02::1", "ff02::1:ff00:7", "fd00::3"};
	static const uint8_t bad4[][4] = {
		{0, 0, 0, 0},   {0, 1, 2, 3},   {127, 0, 0, 1},       {224, 0, 0, 1},
		{239, 1, 2, 3}, {240, 0, 0, 1}, {255, 255, 255, 255}, {10, 99, 0, 3},
	};
	uint8_t ip[16], mac[6];
	size_t i;

	n = port();
	for (i = 0; i < sizeof(bad6) / sizeof(bad6[0]); i++) {
		v6(ip, bad6[i]);
		cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EINVAL, "%s", bad6[i]);
		cr_assert_eq(droce_neigh_add_static(n, ip, mac7, T0), -EINVAL, "%s", bad6[i]);
	}
	for (i = 0; i < sizeof(bad4) / sizeof(bad4[0]); i++) {
		droce_neigh_ip_from_ipv4(ip, bad4[i]);
		cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EINVAL, "%d.%d.%d.%d",
			     bad4[i][0], bad4[i][1], bad4[i][2], bad4[i][3]);
	}
}

Test(neigh_resolve, needs_an_address_of_the_family, .fini = fini)
{
	struct droce_neigh_cfg cfg;
	struct droce_neigh_req req;
	uint8_t ip[16], mac[6];

	cfg_port(&cfg);
	cfg.addr_count = 1; /* 10.99.0.3 only */
	n = port_with(&cfg);
	v6(ip, "fd00::7");
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EADDRNOTAVAIL);
	cr_assert_eq(droce_neigh_lookup(n, ip, &(struct droce_neigh_info){0}), -ENOENT);
	memcpy(req.ip, ip, 16);
	req.unicast = false;
	cr_assert_eq(droce_neigh_build_request(n, &req, &reply), -EADDRNOTAVAIL);
	/* a static entry needs no request */
	cr_assert_eq(droce_neigh_add_static(n, ip, mac7, T0), 0);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), 0);
	cr_assert_arr_eq(mac, mac7, 6);
}

Test(neigh_resolve, first_request_is_due_at_once, .fini = fini)
{
	struct droce_neigh_info info;
	struct droce_neigh_req req;
	uint8_t ip[16], mac[6];

	n = port();
	v4(ip, 10, 99, 0, 7);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EAGAIN);
	info = info_of(ip);
	cr_assert_eq(info.state, DROCE_NEIGH_INCOMPLETE);
	cr_assert_eq(info.probes, 0);
	cr_assert_arr_eq(info.mac, zero6, 6);
	cr_assert_eq(droce_neigh_pending(n, T0, &req, 1), 1);
	cr_assert_arr_eq(req.ip, ip, 16);
	cr_assert_not(req.unicast);
	info = info_of(ip);
	cr_assert_eq(info.probes, 1);
	cr_assert_eq(info.last_request, T0);
	cr_assert_eq(info.expires, T0 + RETRANS);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0 + 10, mac), -EAGAIN);
	cr_assert_eq(droce_neigh_pending(n, T0 + 10, &req, 1), 0, "asked twice");
}

Test(neigh_resolve, retries_then_fails, .fini = fini)
{
	struct droce_neigh_stats st;
	struct droce_neigh_req req;
	uint8_t ip[16], mac[6];

	n = port();
	v6(ip, "fd00::7");
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EAGAIN);
	cr_assert_eq(droce_neigh_pending(n, T0, &req, 1), 1);
	cr_assert_eq(droce_neigh_pending(n, T0 + RETRANS - 1, &req, 1), 0);
	cr_assert_eq(droce_neigh_pending(n, T0 + RETRANS, &req, 1), 1);
	cr_assert_eq(info_of(ip).probes, 2);
	cr_assert_eq(droce_neigh_pending(n, T0 + 2 * RETRANS, &req, 1), 1);
	cr_assert_eq(info_of(ip).probes, 3);
	EXPECT_STATE(ip, DROCE_NEIGH_INCOMPLETE);
	cr_assert_eq(droce_neigh_pending(n, T0 + 3 * RETRANS - 1, &req, 1), 0);
	EXPECT_STATE(ip, DROCE_NEIGH_INCOMPLETE);
	cr_assert_eq(droce_neigh_pending(n, T0 + 3 * RETRANS, &req, 1), 0, "a fourth request");
	EXPECT_STATE(ip, DROCE_NEIGH_FAILED);
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.requests, 3);
	cr_assert_eq(st.failed, 1);
	cr_assert_eq(droce_neigh_pending(n, T0 + 100 * RETRANS, &req, 1), 0);
}

Test(neigh_resolve, failure_holds_then_restarts, .fini = fini)
{
	struct droce_neigh_req req;
	uint8_t ip[16], mac[6];
	uint64_t t;

	n = port();
	v4(ip, 10, 99, 0, 7);
	droce_neigh_resolve(n, ip, T0, mac);
	for (t = T0; t <= T0 + 3 * RETRANS; t += RETRANS)
		droce_neigh_pending(n, t, &req, 1);
	EXPECT_STATE(ip, DROCE_NEIGH_FAILED);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0 + 3 * RETRANS, mac), -EHOSTUNREACH);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0 + 4 * RETRANS - 1, mac), -EHOSTUNREACH);
	cr_assert_eq(droce_neigh_pending(n, T0 + 4 * RETRANS - 1, &req, 1), 0);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0 + 4 * RETRANS, mac), -EAGAIN);
	EXPECT_STATE(ip, DROCE_NEIGH_INCOMPLETE);
	cr_assert_eq(info_of(ip).probes, 0);
	cr_assert_eq(droce_neigh_pending(n, T0 + 4 * RETRANS, &req, 1), 1);
}

Test(neigh_resolve, request_count_follows_the_config, .fini = fini)
{
	struct droce_neigh_cfg cfg;
	struct droce_neigh_req req;
	uint8_t ip[16], mac[6];

	cfg_port(&cfg);
	cfg.max_multicast = 1;
	cfg.retrans_us = 250;
	n = port_with(&cfg);
	v4(ip, 10, 99, 0, 7);
	droce_neigh_resolve(n, ip, T0, mac);
	cr_assert_eq(droce_neigh_pending(n, T0, &req, 1), 1);
	cr_assert_eq(droce_neigh_pending(n, T0 + 249, &req, 1), 0);
	EXPECT_STATE(ip, DROCE_NEIGH_INCOMPLETE);
	cr_assert_eq(droce_neigh_pending(n, T0 + 250, &req, 1), 0);
	EXPECT_STATE(ip, DROCE_NEIGH_FAILED);
}

Test(neigh_resolve, answer_resolves, .fini = fini)
{
	struct droce_neigh_req req;
	struct droce_neigh_info info;
	uint8_t ip[16], mac[6];

	n = port();
	v4(ip, 10, 99, 0, 7);
	droce_neigh_resolve(n, ip, T0, mac);
	droce_neigh_pending(n, T0, &req, 1);
	cr_assert_eq(answer(7, mac7, T0 + 300), DROCE_NEIGH_LEARNED);
	info = info_of(ip);
	cr_assert_eq(info.state, DROCE_NEIGH_REACHABLE);
	cr_assert_arr_eq(info.mac, mac7, 6);
	cr_assert_eq(info.updated, T0 + 300);
	cr_assert_eq(info.expires, T0 + 300 + REACHABLE);
	cr_assert_eq(droce_neigh_pending(n, T0 + RETRANS, &req, 1), 0, "no retry once answered");
	cr_assert_eq(droce_neigh_resolve(n, ip, T0 + 400, mac), 0);
	cr_assert_arr_eq(mac, mac7, 6);
}

Test(neigh_resolve, late_answer_revives_a_failed_entry, .fini = fini)
{
	struct droce_neigh_req req;
	uint8_t ip[16], mac[6];
	uint64_t t;

	n = port();
	v4(ip, 10, 99, 0, 7);
	droce_neigh_resolve(n, ip, T0, mac);
	for (t = T0; t <= T0 + 3 * RETRANS; t += RETRANS)
		droce_neigh_pending(n, t, &req, 1);
	EXPECT_STATE(ip, DROCE_NEIGH_FAILED);
	cr_assert_eq(answer(7, mac7, t), DROCE_NEIGH_LEARNED);
	EXPECT_STATE(ip, DROCE_NEIGH_REACHABLE);
}

Test(neigh_resolve, requests_beyond_max_wait_for_the_next_call, .fini = fini)
{
	struct droce_neigh_req req[4];
	uint8_t ip[16], mac[6], seen[5] = {0};
	unsigned int i, k, got, total = 0;

	n = port();
	for (i = 0; i < 5; i++) {
		v4(ip, 10, 99, 1, (uint8_t)(i + 1));
		cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EAGAIN);
	}
	for (k = 0; k < 3; k++) {
		got = droce_neigh_pending(n, T0, req, 2);
		cr_assert_eq(got, k < 2 ? 2u : 1u, "call %u handed out %u", k, got);
		for (i = 0; i < got; i++) {
			cr_assert(droce_neigh_ip_is_ipv4(req[i].ip));
			cr_assert_eq(seen[req[i].ip[15] - 1], 0, "10.99.1.%d twice", req[i].ip[15]);
			seen[req[i].ip[15] - 1] = 1;
		}
		total += got;
	}
	cr_assert_eq(total, 5);
	cr_assert_eq(droce_neigh_pending(n, T0, req, 4), 0);
	cr_assert_eq(droce_neigh_pending(n, T0 + RETRANS, req, 4), 4);
}

Test(neigh_resolve, timers_run_without_room_for_requests, .fini = fini)
{
	uint8_t ip[16], mac[6];

	n = port();
	v4(ip, 10, 99, 0, 7);
	droce_neigh_resolve(n, ip, T0, mac);
	droce_neigh_pending(n, T0, &(struct droce_neigh_req){.unicast = false}, 1);
	cr_assert_eq(answer(7, mac7, T0), DROCE_NEIGH_LEARNED);
	cr_assert_eq(droce_neigh_pending(n, T0 + REACHABLE, NULL, 0), 0);
	EXPECT_STATE(ip, DROCE_NEIGH_STALE);
}

/* ---- refresh: REACHABLE -> STALE -> PROBE */

static void make_reachable(uint8_t ip[16])
{
	struct droce_neigh_req req;
	uint8_t mac[6];

	v4(ip, 10, 99, 0, 7);
	droce_neigh_resolve(n, ip, T0, mac);
	droce_neigh_pending(n, T0, &req, 1);
	cr_assert_eq(answer(7, mac7, T0), DROCE_NEIGH_LEARNED);
}

Test(neigh_refresh, reachable_turns_stale_after_reachable_time, .fini = fini)
{
	struct droce_neigh_req req;
	uint8_t ip[16];

	n = port();
	make_reachable(ip);
	cr_assert_eq(droce_neigh_pending(n, T0 + REACHABLE - 1, &req, 1), 0);
	EXPECT_STATE(ip, DROCE_NEIGH_REACHABLE);
	cr_assert_eq(droce_neigh_pending(n, T0 + REACHABLE, &req, 1), 0, "STALE asks nothing");
	EXPECT_STATE(ip, DROCE_NEIGH_STALE);
	cr_assert_eq(info_of(ip).expires, UINT64_MAX);
	cr_assert_eq(droce_neigh_pending(n, T0 + 10 * REACHABLE, &req, 1), 0);
	EXPECT_STATE(ip, DROCE_NEIGH_STALE);
}

Test(neigh_refresh, confirmation_pushes_the_refresh_time, .fini = fini)
{
	struct droce_neigh_req req;
	uint8_t ip[16];

	n = port();
	make_reachable(ip);
	cr_assert_eq(answer(7, mac7, T0 + REACHABLE - 5), DROCE_NEIGH_LEARNED);
	cr_assert_eq(droce_neigh_pending(n, T0 + REACHABLE, &req, 1), 0);
	EXPECT_STATE(ip, DROCE_NEIGH_REACHABLE);
	cr_assert_eq(info_of(ip).expires, T0 + 2 * REACHABLE - 5);
}

Test(neigh_refresh, stale_in_use_is_probed_by_unicast, .fini = fini)
{
	const uint64_t t = T0 + REACHABLE;
	struct droce_neigh_stats st;
	struct droce_neigh_req req;
	uint8_t ip[16], mac[6];

	n = port();
	make_reachable(ip);
	droce_neigh_pending(n, t, &req, 1);
	cr_assert_eq(droce_neigh_resolve(n, ip, t, mac), 0, "a STALE MAC is usable");
	cr_assert_arr_eq(mac, mac7, 6);
	EXPECT_STATE(ip, DROCE_NEIGH_PROBE);
	cr_assert_eq(droce_neigh_pending(n, t, &req, 1), 1);
	cr_assert(req.unicast);
	cr_assert_arr_eq(req.mac, mac7, 6);
	cr_assert_eq(droce_neigh_resolve(n, ip, t + 1, mac), 0, "PROBE keeps the MAC usable");
	cr_assert_eq(droce_neigh_pending(n, t + RETRANS, &req, 1), 1);
	cr_assert_eq(droce_neigh_pending(n, t + 2 * RETRANS, &req, 1), 1);
	cr_assert_eq(droce_neigh_pending(n, t + 3 * RETRANS, &req, 1), 0);
	EXPECT_STATE(ip, DROCE_NEIGH_FAILED);
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.requests, 1 + 3);
	cr_assert_eq(st.failed, 1);
	cr_assert_eq(droce_neigh_resolve(n, ip, t + 3 * RETRANS, mac), -EHOSTUNREACH);
}

Test(neigh_refresh, probe_answered, .fini = fini)
{
	const uint64_t t = T0 + REACHABLE;
	struct droce_neigh_req req;
	uint8_t ip[16], mac[6];

	n = port();
	make_reachable(ip);
	droce_neigh_pending(n, t, &req, 1);
	droce_neigh_resolve(n, ip, t, mac);
	cr_assert_eq(droce_neigh_pending(n, t, &req, 1), 1);
	cr_assert_eq(answer(7, mac7, t + 10), DROCE_NEIGH_LEARNED);
	EXPECT_STATE(ip, DROCE_NEIGH_REACHABLE);
	cr_assert_eq(info_of(ip).probes, 0);
	cr_assert_eq(droce_neigh_pending(n, t + RETRANS, &req, 1), 0);
}

Test(neigh_refresh, probe_answered_with_a_new_mac, .fini = fini)
{
	const uint64_t t = T0 + REACHABLE;
	struct droce_neigh_req req;
	uint8_t ip[16], mac[6];

	n = port();
	make_reachable(ip);
	droce_neigh_pending(n, t, &req, 1);
	droce_neigh_resolve(n, ip, t, mac);
	droce_neigh_pending(n, t, &req, 1);
	cr_assert_eq(answer(7, mac8, t + 10), DROCE_NEIGH_LEARNED);
	cr_assert_arr_eq(info_of(ip).mac, mac8, 6);
}

/* ---- static entries */

Test(neigh_static, resolves_without_asking, .fini = fini)
{
	struct droce_neigh_req req;
	struct droce_neigh_info info;
	uint8_t ip[16], mac[6];

	n = port();
	v6(ip, "fd00::7");
	cr_assert_eq(droce_neigh_add_static(n, ip, mac7, T0), 0);
	info = info_of(ip);
	cr_assert_eq(info.state, DROCE_NEIGH_STATIC);
	cr_assert_eq(info.expires, UINT64_MAX);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), 0);
	cr_assert_arr_eq(mac, mac7, 6);
	cr_assert_eq(droce_neigh_pending(n, UINT64_MAX - 1, &req, 1), 0);
	EXPECT_STATE(ip, DROCE_NEIGH_STATIC);
}

Test(neigh_static, replaces_a_learned_entry_and_is_replaced, .fini = fini)
{
	uint8_t ip[16], mac[6];

	n = port();
	v4(ip, 10, 99, 0, 7);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EAGAIN);
	cr_assert_eq(droce_neigh_add_static(n, ip, mac7, T0), 0);
	EXPECT_STATE(ip, DROCE_NEIGH_STATIC);
	cr_assert_eq(droce_neigh_add_static(n, ip, mac8, T0), 0);
	cr_assert_arr_eq(info_of(ip).mac, mac8, 6);
	cr_assert_eq(answer(7, mac7, T0), DROCE_NEIGH_OK, "the wire does not change it");
	cr_assert_eq(ask_us(7, mac7, T0), DROCE_NEIGH_REPLY);
	cr_assert_arr_eq(info_of(ip).mac, mac8, 6);
}

Test(neigh_static, refused, .fini = fini)
{
	uint8_t ip[16];
	const uint8_t group[6] = {0x01, 0x00, 0x5e, 0, 0, 1};

	n = port();
	v4(ip, 10, 99, 0, 3);
	cr_assert_eq(droce_neigh_add_static(n, ip, mac7, T0), -EINVAL, "our own address");
	v4(ip, 10, 99, 0, 7);
	cr_assert_eq(droce_neigh_add_static(n, ip, zero6, T0), -EINVAL, "zero MAC");
	cr_assert_eq(droce_neigh_add_static(n, ip, group, T0), -EINVAL, "group MAC");
}

Test(neigh_static, delete, .fini = fini)
{
	struct droce_neigh_stats st;
	uint8_t ip[16], mac[6];

	n = port();
	v4(ip, 10, 99, 0, 7);
	cr_assert_eq(droce_neigh_add_static(n, ip, mac7, T0), 0);
	cr_assert_eq(droce_neigh_delete(n, ip), 0);
	cr_assert_eq(droce_neigh_lookup(n, ip, &(struct droce_neigh_info){0}), -ENOENT);
	cr_assert_eq(droce_neigh_delete(n, ip), -ENOENT);
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.entries, 0);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EAGAIN, "resolved again after delete");
}

/* ---- capacity */

static struct droce_neigh *small_port(uint32_t capacity)
{
	struct droce_neigh_cfg cfg;

	cfg_port(&cfg);
	cfg.capacity = capacity;
	return port_with(&cfg);
}

Test(neigh_capacity, full_of_live_entries, .fini = fini)
{
	struct droce_neigh_stats st;
	uint8_t ip[16], mac[6];
	uint8_t i;

	n = small_port(4);
	for (i = 1; i <= 4; i++) {
		v4(ip, 10, 99, 1, i);
		cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EAGAIN);
	}
	v4(ip, 10, 99, 1, 5);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -ENOSPC);
	cr_assert_eq(droce_neigh_add_static(n, ip, mac7, T0), -ENOSPC);
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.table_full, 2);
	cr_assert_eq(st.entries, 4);
}

Test(neigh_capacity, failed_entries_are_reclaimed_oldest_first, .fini = fini)
{
	struct droce_neigh_req req[4];
	struct droce_neigh_stats st;
	uint8_t ip[16], mac[6];
	uint64_t t;
	uint8_t i;

	n = small_port(3);
	for (i = 1; i <= 3; i++) { /* resolutions started one retrans apart fail in that order */
		v4(ip, 10, 99, 1, i);
		droce_neigh_resolve(n, ip, T0 + i * RETRANS, mac);
	}
	for (t = T0; t <= T0 + 7 * RETRANS; t += RETRANS)
		droce_neigh_pending(n, t, req, 4);
	for (i = 1; i <= 3; i++) {
		v4(ip, 10, 99, 1, i);
		EXPECT_STATE(ip, DROCE_NEIGH_FAILED);
	}
	v4(ip, 10, 99, 1, 9);
	cr_assert_eq(droce_neigh_resolve(n, ip, t, mac), -EAGAIN);
	v4(ip, 10, 99, 1, 1);
	cr_assert_eq(droce_neigh_lookup(n, ip, &(struct droce_neigh_info){0}), -ENOENT,
		     "the oldest failure was not the one reclaimed");
	v4(ip, 10, 99, 1, 2);
	EXPECT_STATE(ip, DROCE_NEIGH_FAILED);
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.reclaimed, 1);
	cr_assert_eq(st.entries, 3);
}

Test(neigh_capacity, failed_before_stale, .fini = fini)
{
	struct droce_neigh_req req;
	uint8_t ip[16], mac[6];
	uint64_t t;

	n = small_port(3);
	cr_assert_eq(ask_us(7, mac7, T0), DROCE_NEIGH_REPLY); /* STALE, oldest */
	v4(ip, 10, 99, 0, 9);
	droce_neigh_resolve(n, ip, T0 + 1, mac);
	for (t = T0 + 1; t <= T0 + 1 + 3 * RETRANS; t += RETRANS)
		droce_neigh_pending(n, t, &req, 1);
	EXPECT_STATE(ip, DROCE_NEIGH_FAILED);
	cr_assert_eq(ask_us(8, mac8, t), DROCE_NEIGH_REPLY);
	v4(ip, 10, 99, 0, 10);
	cr_assert_eq(droce_neigh_resolve(n, ip, t, mac), -EAGAIN);
	v4(ip, 10, 99, 0, 9);
	EXPECT_STATE(ip, DROCE_NEIGH_NONE);
	v4(ip, 10, 99, 0, 7);
	EXPECT_STATE(ip, DROCE_NEIGH_STALE);
}

Test(neigh_capacity, oldest_stale_is_reclaimed, .fini = fini)
{
	uint8_t ip[16], mac[6];

	n = small_port(3);
	cr_assert_eq(ask_us(8, mac8, T0 + 5), DROCE_NEIGH_REPLY);
	cr_assert_eq(ask_us(7, mac7, T0), DROCE_NEIGH_REPLY);
	cr_assert_eq(ask_us(9, mac7, T0 + 9), DROCE_NEIGH_REPLY);
	v4(ip, 10, 99, 0, 10);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0 + 10, mac), -EAGAIN);
	v4(ip, 10, 99, 0, 7);
	EXPECT_STATE(ip, DROCE_NEIGH_NONE);
	v4(ip, 10, 99, 0, 8);
	EXPECT_STATE(ip, DROCE_NEIGH_STALE);
	v4(ip, 10, 99, 0, 9);
	EXPECT_STATE(ip, DROCE_NEIGH_STALE);
}

Test(neigh_capacity, the_wire_never_reclaims, .fini = fini)
{
	struct droce_neigh_stats st;
	uint8_t ip[16];

	n = small_port(2);
	cr_assert_eq(ask_us(7, mac7, T0), DROCE_NEIGH_REPLY);
	cr_assert_eq(ask_us(8, mac8, T0), DROCE_NEIGH_REPLY);
	cr_assert_eq(ask_us(9, mac8, T0), DROCE_NEIGH_REPLY, "a full table still answers");
	v4(ip, 10, 99, 0, 9);
	EXPECT_STATE(ip, DROCE_NEIGH_NONE);
	v4(ip, 10, 99, 0, 7);
	EXPECT_STATE(ip, DROCE_NEIGH_STALE);
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.table_full, 1);
	cr_assert_eq(st.reclaimed, 0);
}

/* ---- the hash table against a plain array */

#define POOL 160

static void pool_ip(uint8_t ip[16], unsigned int k)
{
	if (k % 2 == 0) {
		v4(ip, 10, (uint8_t)(k >> 8), (uint8_t)k, 1);
	} else {
		memset(ip, 0, 16);
		ip[0] = 0xfd;
		ip[3] = 0x01; /* fd00:1::/64: away from the port's fd00::3 */
		ip[14] = (uint8_t)(k >> 8);
		ip[15] = (uint8_t)k;
	}
}

Test(neigh_table, random_operations_match_a_model, .fini = fini)
{
	bool model[POOL] = {false};
	uint8_t model_mac[POOL];
	unsigned int count = 0, step, k;
	struct droce_neigh_stats st;

	n = small_port(64); /* 128 slots: clusters form, deletions shift them */
	srand(4861);
	for (step = 0; step < 40000; step++) {
		uint8_t ip[16], mac[6] = {0x52, 0x54, 0, 0, 0, 0};
		struct droce_neigh_info info;
		int op = rand() % 3, rc;

		k = (unsigned int)rand() % POOL;
		pool_ip(ip, k);
		if (op == 0) {
			mac[5] = (uint8_t)(rand() | 1);
			rc = droce_neigh_add_static(n, ip, mac, T0);
			if (model[k] || count < 64) {
				cr_assert_eq(rc, 0, "step %u: add %u", step, k);
				count += !model[k];
				model[k] = true;
				model_mac[k] = mac[5];
			} else {
				cr_assert_eq(rc, -ENOSPC, "step %u: add %u to a full table", step,
					     k);
			}
		} else if (op == 1) {
			rc = droce_neigh_delete(n, ip);
			cr_assert_eq(rc, model[k] ? 0 : -ENOENT, "step %u: delete %u", step, k);
			count -= model[k];
			model[k] = false;
		} else {
			rc = droce_neigh_lookup(n, ip, &info);
			cr_assert_eq(rc, model[k] ? 0 : -ENOENT, "step %u: lookup %u", step, k);
			if (rc == 0) {
				cr_assert_arr_eq(info.ip, ip, 16, "step %u: entry %u", step, k);
				cr_assert_eq(info.mac[5], model_mac[k], "step %u: MAC of %u", step,
					     k);
			}
		}
	}
	for (k = 0; k < POOL; k++) {
		uint8_t ip[16];

		pool_ip(ip, k);
		cr_assert_eq(droce_neigh_lookup(n, ip, &(struct droce_neigh_info){0}),
			     model[k] ? 0 : -ENOENT, "entry %u at the end", k);
	}
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.entries, count);
}

Test(neigh_table, fill_and_empty_in_every_order, .fini = fini)
{
	unsigned int round, k;

	n = small_port(32);
	for (round = 0; round < 3; round++) {
		struct droce_neigh_stats st;
		uint8_t ip[16];

		for (k = 0; k < 32; k++) {
			pool_ip(ip, k * 5 + round);
			cr_assert_eq(droce_neigh_add_static(n, ip, mac7, T0), 0, "add %u", k);
		}
		for (k = 0; k < 32; k++) { /* delete from the middle outwards */
			unsigned int j = (k % 2) ? 16 + k / 2 : 15 - k / 2;
			unsigned int m;

			pool_ip(ip, j * 5 + round);
			cr_assert_eq(droce_neigh_delete(n, ip), 0, "delete %u", j);
			for (m = 0; m < 32; m++) {
				unsigned int left = (m % 2) ? 16 + m / 2 : 15 - m / 2;

				pool_ip(ip, left * 5 + round);
				cr_assert_eq(
					droce_neigh_lookup(n, ip, &(struct droce_neigh_info){0}),
					m <= k ? -ENOENT : 0, "after %u deletions: %u", k + 1,
					left);
			}
		}
		droce_neigh_stats_get(n, &st);
		cr_assert_eq(st.entries, 0);
	}
}

/* ---- building requests */

Test(neigh_build, refused, .fini = fini)
{
	struct droce_neigh_req req = {.unicast = false};

	n = port();
	v4(req.ip, 10, 99, 0, 3);
	cr_assert_eq(droce_neigh_build_request(n, &req, &reply), -EINVAL, "our own address");
	v6(req.ip, "ff02::1");
	cr_assert_eq(droce_neigh_build_request(n, &req, &reply), -EINVAL, "multicast");
	v4(req.ip, 10, 99, 0, 7);
	req.unicast = true;
	cr_assert_eq(droce_neigh_build_request(n, &req, &reply), -EINVAL, "unicast to no MAC");
	memcpy(req.mac, mac7, 6);
	cr_assert_eq(droce_neigh_build_request(n, &req, &reply), 0);
	cr_assert_eq(reply.len, 42);
}

Test(neigh_build, every_request_fits, .fini = fini)
{
	struct droce_neigh_cfg cfg;
	struct droce_neigh_req req = {.unicast = false};

	cfg_port(&cfg);
	cfg.has_vlan = true;
	cfg.vlan_tci = 7;
	n = port_with(&cfg);
	v6(req.ip, "fd00::7");
	cr_assert_eq(droce_neigh_build_request(n, &req, &reply), 0);
	cr_assert_eq(reply.len, 14 + 4 + 40 + 32);
	cr_assert_leq(reply.len, DROCE_NEIGH_FRAME_MAX);
}
