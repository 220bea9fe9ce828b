/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ARP (RFC 826) in lib/port: the replies droce builds equal Linux's, byte for
 * byte, for every request in the captures of tests/data; learning follows the
 * rules of doc/neighbours.md; malformed packets are dropped, one reason each,
 * and never read out of bounds (each frame is copied to end just before a
 * PROT_NONE page).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <droce_neigh.h>

#include "droce_test.h"

#define IP4(a, b, c, d) ((const uint8_t[4]){a, b, c, d})
#define T0              1000000ull /* 1 s, in microseconds */

static const uint8_t mac2[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x02}; /* Linux server */
static const uint8_t mac3[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x03}; /* Linux client */
static const uint8_t mac7[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x07}; /* a stranger */
static const uint8_t mac8[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x08};
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t zero6[6];

static struct droce_neigh *n;
static struct droce_neigh_frame reply;

static void mapped(uint8_t ip[16], const uint8_t v4[4])
{
	droce_neigh_ip_from_ipv4(ip, v4);
}

/* A port with MAC @p mac and IPv4 address 10.99.0.@p host, untagged unless @p tci. */
static struct droce_neigh *port(const uint8_t mac[6], uint8_t host, uint16_t tci)
{
	struct droce_neigh_cfg cfg;
	struct droce_neigh *p = NULL;

	droce_neigh_cfg_init(&cfg);
	memcpy(cfg.mac, mac, 6);
	mapped(cfg.addr[0], IP4(10, 99, 0, host));
	cfg.addr_count = 1;
	cfg.has_vlan = tci != 0;
	cfg.vlan_tci = tci;
	cr_assert_eq(droce_neigh_create(&cfg, &p), 0, "creating the port failed");
	return p;
}

static void fini(void)
{
	droce_neigh_free(n);
	n = NULL;
}

/* ---- frames */

static size_t arp_make(uint8_t *buf, const uint8_t dst[6], const uint8_t src[6], uint16_t op,
		       const uint8_t sha[6], const uint8_t spa[4], const uint8_t tha[6],
		       const uint8_t tpa[4])
{
	struct droce_eth_hdr *eth = (struct droce_eth_hdr *)buf;
	struct droce_arp_hdr *arp = (struct droce_arp_hdr *)(eth + 1);

	memcpy(eth->dst, dst, 6);
	memcpy(eth->src, src, 6);
	droce_eth_set_type(eth, DROCE_ETHERTYPE_ARP);
	droce_arp_set_htype(arp, DROCE_ARP_HTYPE_ETHER);
	droce_arp_set_ptype(arp, DROCE_ETHERTYPE_IPV4);
	arp->hlen = 6;
	arp->plen = 4;
	droce_arp_set_op(arp, op);
	memcpy(arp->sha, sha, 6);
	memcpy(arp->spa, spa, 4);
	memcpy(arp->tha, tha, 6);
	memcpy(arp->tpa, tpa, 4);
	return sizeof(*eth) + sizeof(*arp);
}

/* 10.99.0.@p from (MAC @p sha) asks for 10.99.0.@p to, broadcast. */
static size_t request(uint8_t *buf, const uint8_t sha[6], uint8_t from, uint8_t to)
{
	return arp_make(buf, bcast, sha, DROCE_ARP_OP_REQUEST, sha, IP4(10, 99, 0, from), zero6,
			IP4(10, 99, 0, to));
}

/* 10.99.0.@p from (MAC @p sha) answers 10.99.0.@p to at MAC @p dst. */
static size_t answer(uint8_t *buf, const uint8_t dst[6], const uint8_t sha[6], uint8_t from,
		     uint8_t to)
{
	return arp_make(buf, dst, sha, DROCE_ARP_OP_REPLY, sha, IP4(10, 99, 0, from), dst,
			IP4(10, 99, 0, to));
}

/* @p len bytes that end right before a PROT_NONE page: any over-read faults. */
struct guarded {
	uint8_t *map;
	size_t map_len;
	uint8_t *data;
};

static void guarded_copy(struct guarded *g, const void *frame, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t pages = len / page + 1;

	g->map_len = (pages + 1) * page;
	g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(g->map, MAP_FAILED);
	cr_assert_eq(mprotect(g->map + pages * page, page, PROT_NONE), 0);
	g->data = g->map + pages * page - len;
	memcpy(g->data, frame, len);
}

static enum droce_neigh_status rx_at(const void *frame, size_t len, uint64_t now)
{
	struct guarded g;
	enum droce_neigh_status s;

	guarded_copy(&g, frame, len);
	s = droce_neigh_rx(n, g.data, len, now, &reply);
	munmap(g.map, g.map_len);
	return s;
}

static enum droce_neigh_status rx(const void *frame, size_t len)
{
	return rx_at(frame, len, T0);
}

#define EXPECT_RX(frame, len, want)                                                               \
	do {                                                                                      \
		enum droce_neigh_status got_ = rx(frame, len);                                    \
		cr_assert_eq(got_, want, "status %s, expected %s", droce_neigh_status_name[got_], \
			     droce_neigh_status_name[want]);                                      \
	} while (0)

static void expect_bytes(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len,
			 const char *what)
{
	size_t i;

	cr_assert_eq(got_len, want_len, "%s: %zu bytes, expected %zu", what, got_len, want_len);
	for (i = 0; i < want_len; i++)
		cr_assert_eq(got[i], want[i], "%s: byte %zu is 0x%02x, expected 0x%02x", what, i,
			     got[i], want[i]);
}

static enum droce_neigh_state state_of(uint8_t host, uint8_t mac[6])
{
	struct droce_neigh_info info;
	uint8_t ip[16];

	mapped(ip, IP4(10, 99, 0, host));
	if (droce_neigh_lookup(n, ip, &info) != 0)
		return DROCE_NEIGH_NONE;
	if (mac != NULL)
		memcpy(mac, info.mac, 6);
	return info.state;
}

#define EXPECT_STATE(host, want)                                                          \
	do {                                                                              \
		enum droce_neigh_state got_ = state_of(host, NULL);                       \
		cr_assert_eq(got_, want, "10.99.0.%d is %s, expected %s", host,           \
			     droce_neigh_state_name[got_], droce_neigh_state_name[want]); \
	} while (0)

static void expect_mac(uint8_t host, const uint8_t want[6])
{
	uint8_t mac[6];

	cr_assert_neq(state_of(host, mac), DROCE_NEIGH_NONE, "no entry for 10.99.0.%d", host);
	cr_assert_arr_eq(mac, want, 6, "10.99.0.%d has another MAC", host);
}

/* Start resolving 10.99.0.@p host and hand out its first request. */
static void resolve_started(uint8_t host)
{
	struct droce_neigh_req req;
	uint8_t ip[16], mac[6];

	mapped(ip, IP4(10, 99, 0, host));
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EAGAIN);
	cr_assert_eq(droce_neigh_pending(n, T0, &req, 1), 1);
}

/* ---- the Linux captures */

struct linux_arp {
	uint8_t req[64], rep[64];
	uint32_t req_len, rep_len;
};

static void find_arp(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	const struct droce_eth_hdr *eth = (const void *)frame;
	const struct droce_arp_hdr *arp = (const void *)(eth + 1);
	struct linux_arp *la = arg;

	(void)index;
	if (len < sizeof(*eth) + sizeof(*arp) || len > sizeof(la->req) ||
	    droce_eth_type(eth) != DROCE_ETHERTYPE_ARP)
		return;
	if (droce_arp_op(arp) == DROCE_ARP_OP_REQUEST && la->req_len == 0) {
		memcpy(la->req, frame, len);
		la->req_len = len;
	} else if (droce_arp_op(arp) == DROCE_ARP_OP_REPLY && la->rep_len == 0) {
		memcpy(la->rep, frame, len);
		la->rep_len = len;
	}
}

static void linux_arp(const char *capture, struct linux_arp *la)
{
	memset(la, 0, sizeof(*la));
	droce_test_pcap_foreach(capture, find_arp, la);
	cr_assert_gt(la->req_len, 0, "%s has no ARP request", capture);
	cr_assert_gt(la->rep_len, 0, "%s has no ARP reply", capture);
}

/* ---- header accessors */

Test(arp_hdr, layout)
{
	cr_assert_eq(sizeof(struct droce_arp_hdr), 28);
	cr_assert_eq(offsetof(struct droce_arp_hdr, hlen), 4);
	cr_assert_eq(offsetof(struct droce_arp_hdr, op), 6);
	cr_assert_eq(offsetof(struct droce_arp_hdr, sha), 8);
	cr_assert_eq(offsetof(struct droce_arp_hdr, spa), 14);
	cr_assert_eq(offsetof(struct droce_arp_hdr, tha), 18);
	cr_assert_eq(offsetof(struct droce_arp_hdr, tpa), 24);
}

/* Set a 16-bit field over 0xa5 bytes: it reads back, sits big-endian at @p off, nothing else moves.
 */
static void check_u16(void (*set)(struct droce_arp_hdr *, uint16_t),
		      uint16_t (*get)(const struct droce_arp_hdr *), size_t off, const char *name)
{
	union {
		struct droce_arp_hdr h;
		uint8_t b[28];
	} u;
	size_t i;

	memset(&u, 0xa5, sizeof(u));
	set(&u.h, 0x1234);
	cr_assert_eq(get(&u.h), 0x1234, "%s does not read back", name);
	cr_assert_eq(u.b[off], 0x12, "%s: high byte", name);
	cr_assert_eq(u.b[off + 1], 0x34, "%s: low byte", name);
	for (i = 0; i < sizeof(u.b); i++)
		if (i != off && i != off + 1)
			cr_assert_eq(u.b[i], 0xa5, "%s changed byte %zu", name, i);
}

Test(arp_hdr, htype)
{
	check_u16(droce_arp_set_htype, droce_arp_htype, 0, "htype");
}

Test(arp_hdr, ptype)
{
	check_u16(droce_arp_set_ptype, droce_arp_ptype, 2, "ptype");
}

Test(arp_hdr, op)
{
	check_u16(droce_arp_set_op, droce_arp_op, 6, "op");
}

/* ---- golden: Linux's frames */

Test(arp_golden, reply_equals_linux_in_every_capture, .fini = fini)
{
	const char *const *c;

	for (c = droce_test_captures; *c != NULL; c++) {
		struct linux_arp la;

		linux_arp(*c, &la);
		n = port(mac2, 2, 0); /* the replier in the captures: 10.99.0.2 */
		cr_assert_eq(rx(la.req, la.req_len), DROCE_NEIGH_REPLY, "%s: no reply", *c);
		expect_bytes(reply.data, reply.len, la.rep, la.rep_len, *c);
		droce_neigh_free(n);
		n = NULL;
	}
}

Test(arp_golden, request_equals_linux, .fini = fini)
{
	struct droce_neigh_req req;
	struct linux_arp la;
	struct droce_neigh_frame f;
	uint8_t ip[16], mac[6];

	linux_arp("linux-rxe-rc_pingpong.pcap", &la);
	n = port(mac3, 3, 0); /* the asker: 10.99.0.3 */
	mapped(ip, IP4(10, 99, 0, 2));
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EAGAIN);
	cr_assert_eq(droce_neigh_pending(n, T0, &req, 1), 1);
	cr_assert_not(req.unicast);
	cr_assert_arr_eq(req.ip, ip, 16);
	cr_assert_eq(droce_neigh_build_request(n, &req, &f), 0);
	expect_bytes(f.data, f.len, la.req, la.req_len, "request");
}

Test(arp_golden, linux_reply_resolves, .fini = fini)
{
	struct droce_neigh_info info;
	struct linux_arp la;
	uint8_t ip[16], mac[6];

	linux_arp("linux-rxe-rc_pingpong.pcap", &la);
	n = port(mac3, 3, 0);
	resolve_started(2);
	cr_assert_eq(rx_at(la.rep, la.rep_len, T0 + 5000), DROCE_NEIGH_LEARNED);
	mapped(ip, IP4(10, 99, 0, 2));
	cr_assert_eq(droce_neigh_lookup(n, ip, &info), 0);
	cr_assert_eq(info.state, DROCE_NEIGH_REACHABLE);
	cr_assert_arr_eq(info.mac, mac2, 6);
	cr_assert_eq(info.expires, T0 + 5000 + DROCE_NEIGH_REACHABLE_US_DEFAULT);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0 + 6000, mac), 0);
	cr_assert_arr_eq(mac, mac2, 6);
	cr_assert_eq(reply.len, 0, "an answer needs no reply");
}

Test(arp_golden, linux_request_teaches_the_asker, .fini = fini)
{
	struct linux_arp la;

	linux_arp("linux-rxe-rc_pingpong.pcap", &la);
	n = port(mac2, 2, 0);
	cr_assert_eq(rx(la.req, la.req_len), DROCE_NEIGH_REPLY);
	EXPECT_STATE(3, DROCE_NEIGH_STALE);
	expect_mac(3, mac3);
}

/* ---- requests and replies, hand-built */

Test(arp_rx, request_for_another_address_is_left_alone, .fini = fini)
{
	uint8_t f[64];

	n = port(mac2, 2, 0);
	EXPECT_RX(f, request(f, mac7, 7, 9), DROCE_NEIGH_OK);
	cr_assert_eq(reply.len, 0);
	EXPECT_STATE(7, DROCE_NEIGH_NONE);
}

Test(arp_rx, unicast_request_to_our_mac_is_answered, .fini = fini)
{
	uint8_t f[64];
	size_t len = arp_make(f, mac2, mac7, DROCE_ARP_OP_REQUEST, mac7, IP4(10, 99, 0, 7), mac2,
			      IP4(10, 99, 0, 2));

	n = port(mac2, 2, 0);
	EXPECT_RX(f, len, DROCE_NEIGH_REPLY); /* RFC 1122 2.3.2.1 unicast poll */
}

Test(arp_rx, reply_fields, .fini = fini)
{
	const struct droce_eth_hdr *eth = (const void *)reply.data;
	const struct droce_arp_hdr *arp = (const void *)(eth + 1);
	uint8_t f[64];

	n = port(mac2, 2, 0);
	EXPECT_RX(f, request(f, mac7, 7, 2), DROCE_NEIGH_REPLY);
	cr_assert_eq(reply.len, 42);
	cr_assert_arr_eq(eth->dst, mac7, 6);
	cr_assert_arr_eq(eth->src, mac2, 6);
	cr_assert_eq(droce_eth_type(eth), DROCE_ETHERTYPE_ARP);
	cr_assert_eq(droce_arp_htype(arp), 1);
	cr_assert_eq(droce_arp_ptype(arp), 0x0800);
	cr_assert_eq(arp->hlen, 6);
	cr_assert_eq(arp->plen, 4);
	cr_assert_eq(droce_arp_op(arp), DROCE_ARP_OP_REPLY);
	cr_assert_arr_eq(arp->sha, mac2, 6);
	cr_assert_arr_eq(arp->spa, IP4(10, 99, 0, 2), 4);
	cr_assert_arr_eq(arp->tha, mac7, 6);
	cr_assert_arr_eq(arp->tpa, IP4(10, 99, 0, 7), 4);
}

Test(arp_rx, padded_request_is_answered, .fini = fini)
{
	uint8_t f[60] = {0};

	n = port(mac2, 2, 0);
	request(f, mac7, 7, 2);
	EXPECT_RX(f, sizeof(f), DROCE_NEIGH_REPLY);
	cr_assert_eq(reply.len, 42, "the reply is not padded: the NIC pads");
}

Test(arp_rx, request_to_us_learns_the_sender_stale, .fini = fini)
{
	struct droce_neigh_stats st;
	uint8_t f[64];

	n = port(mac2, 2, 0);
	EXPECT_RX(f, request(f, mac7, 7, 2), DROCE_NEIGH_REPLY);
	EXPECT_STATE(7, DROCE_NEIGH_STALE);
	expect_mac(7, mac7);
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.learned, 1);
	cr_assert_eq(st.entries, 1);
}

Test(arp_rx, request_with_new_mac_replaces_it_stale, .fini = fini)
{
	uint8_t f[64];

	n = port(mac3, 3, 0);
	resolve_started(7);
	EXPECT_RX(f, answer(f, mac3, mac7, 7, 3), DROCE_NEIGH_LEARNED);
	EXPECT_STATE(7, DROCE_NEIGH_REACHABLE);
	EXPECT_RX(f, request(f, mac8, 7, 3), DROCE_NEIGH_REPLY);
	EXPECT_STATE(7, DROCE_NEIGH_STALE);
	expect_mac(7, mac8);
}

Test(arp_rx, request_with_same_mac_keeps_reachable, .fini = fini)
{
	uint8_t f[64];

	n = port(mac3, 3, 0);
	resolve_started(7);
	EXPECT_RX(f, answer(f, mac3, mac7, 7, 3), DROCE_NEIGH_LEARNED);
	EXPECT_RX(f, request(f, mac7, 7, 3), DROCE_NEIGH_REPLY);
	EXPECT_STATE(7, DROCE_NEIGH_REACHABLE);
}

Test(arp_rx, probe_from_zero_is_answered_and_not_learned, .fini = fini)
{
	const struct droce_arp_hdr *arp = (const void *)(reply.data + 14);
	uint8_t f[64];
	size_t len = arp_make(f, bcast, mac7, DROCE_ARP_OP_REQUEST, mac7, IP4(0, 0, 0, 0), zero6,
			      IP4(10, 99, 0, 2));
	uint8_t ip[16];
	struct droce_neigh_info info;

	n = port(mac2, 2, 0);
	EXPECT_RX(f, len, DROCE_NEIGH_REPLY); /* RFC 5227 2.1.1: the owner defends */
	cr_assert_arr_eq(arp->tpa, IP4(0, 0, 0, 0), 4);
	cr_assert_arr_eq(arp->tha, mac7, 6);
	mapped(ip, IP4(0, 0, 0, 0));
	cr_assert_eq(droce_neigh_lookup(n, ip, &info), -ENOENT);
}

Test(arp_rx, unsolicited_reply_is_not_learned, .fini = fini)
{
	struct droce_neigh_stats st;
	uint8_t f[64];

	n = port(mac3, 3, 0);
	EXPECT_RX(f, answer(f, mac3, mac7, 7, 3), DROCE_NEIGH_UNSOLICITED);
	EXPECT_STATE(7, DROCE_NEIGH_NONE);
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.rx[DROCE_NEIGH_UNSOLICITED], 1);
	cr_assert_eq(st.entries, 0);
}

Test(arp_rx, reply_for_another_address_is_left_alone, .fini = fini)
{
	uint8_t f[64];

	n = port(mac3, 3, 0);
	resolve_started(7);
	/* 10.99.0.7 answers 10.99.0.9, who is not us, but to our MAC */
	EXPECT_RX(f, answer(f, mac3, mac7, 7, 9), DROCE_NEIGH_OK);
	EXPECT_STATE(7, DROCE_NEIGH_INCOMPLETE);
}

Test(arp_rx, broadcast_reply_only_tells, .fini = fini)
{
	uint8_t f[64];
	size_t len = arp_make(f, bcast, mac7, DROCE_ARP_OP_REPLY, mac7, IP4(10, 99, 0, 7), mac3,
			      IP4(10, 99, 0, 3));

	n = port(mac3, 3, 0);
	resolve_started(7);
	EXPECT_RX(f, len, DROCE_NEIGH_LEARNED);
	EXPECT_STATE(7, DROCE_NEIGH_STALE);
	expect_mac(7, mac7);
}

Test(arp_rx, unicast_reply_with_new_mac_is_taken, .fini = fini)
{
	uint8_t f[64];

	n = port(mac3, 3, 0);
	resolve_started(7);
	EXPECT_RX(f, answer(f, mac3, mac7, 7, 3), DROCE_NEIGH_LEARNED);
	EXPECT_RX(f, answer(f, mac3, mac8, 7, 3), DROCE_NEIGH_LEARNED);
	EXPECT_STATE(7, DROCE_NEIGH_REACHABLE);
	expect_mac(7, mac8);
}

Test(arp_rx, gratuitous_request_updates_a_known_entry, .fini = fini)
{
	uint8_t f[64];

	n = port(mac3, 3, 0);
	resolve_started(7);
	EXPECT_RX(f, answer(f, mac3, mac7, 7, 3), DROCE_NEIGH_LEARNED);
	EXPECT_RX(f, request(f, mac8, 7, 7), DROCE_NEIGH_LEARNED);
	cr_assert_eq(reply.len, 0);
	EXPECT_STATE(7, DROCE_NEIGH_STALE);
	expect_mac(7, mac8);
}

Test(arp_rx, gratuitous_reply_updates_a_known_entry, .fini = fini)
{
	uint8_t f[64];
	size_t len = arp_make(f, bcast, mac8, DROCE_ARP_OP_REPLY, mac8, IP4(10, 99, 0, 7), bcast,
			      IP4(10, 99, 0, 7));

	n = port(mac3, 3, 0);
	resolve_started(7);
	EXPECT_RX(f, len, DROCE_NEIGH_LEARNED);
	EXPECT_STATE(7, DROCE_NEIGH_STALE);
	expect_mac(7, mac8);
}

Test(arp_rx, gratuitous_with_the_same_mac_changes_nothing, .fini = fini)
{
	uint8_t f[64];

	n = port(mac3, 3, 0);
	resolve_started(7);
	EXPECT_RX(f, answer(f, mac3, mac7, 7, 3), DROCE_NEIGH_LEARNED);
	EXPECT_RX(f, request(f, mac7, 7, 7), DROCE_NEIGH_OK);
	EXPECT_STATE(7, DROCE_NEIGH_REACHABLE);
}

Test(arp_rx, gratuitous_for_an_unknown_address_is_not_learned, .fini = fini)
{
	uint8_t f[64];

	n = port(mac3, 3, 0);
	EXPECT_RX(f, request(f, mac7, 7, 7), DROCE_NEIGH_OK);
	EXPECT_STATE(7, DROCE_NEIGH_NONE);
}

Test(arp_rx, static_entry_ignores_the_wire, .fini = fini)
{
	uint8_t f[64], ip[16];

	n = port(mac3, 3, 0);
	mapped(ip, IP4(10, 99, 0, 7));
	cr_assert_eq(droce_neigh_add_static(n, ip, mac7, T0), 0);
	EXPECT_RX(f, request(f, mac8, 7, 7), DROCE_NEIGH_OK);
	expect_mac(7, mac7);
	EXPECT_RX(f, answer(f, mac3, mac8, 7, 3), DROCE_NEIGH_OK);
	expect_mac(7, mac7);
	EXPECT_RX(f, request(f, mac8, 7, 3), DROCE_NEIGH_REPLY);
	expect_mac(7, mac7);
	EXPECT_STATE(7, DROCE_NEIGH_STATIC);
}

Test(arp_rx, our_address_from_another_station_is_a_conflict, .fini = fini)
{
	uint8_t f[64];

	n = port(mac2, 2, 0);
	EXPECT_RX(f, request(f, mac7, 2, 2), DROCE_NEIGH_ADDR_CONFLICT); /* its announcement */
	cr_assert_eq(reply.len, 0);
	EXPECT_RX(f, request(f, mac7, 2, 9), DROCE_NEIGH_ADDR_CONFLICT);
	EXPECT_RX(f, answer(f, mac2, mac7, 2, 9), DROCE_NEIGH_ADDR_CONFLICT);
}

Test(arp_rx, own_frames_are_loops, .fini = fini)
{
	uint8_t f[64];
	size_t len;

	n = port(mac2, 2, 0);
	EXPECT_RX(f, request(f, mac2, 2, 7), DROCE_NEIGH_OWN_FRAME);
	len = arp_make(f, bcast, mac7, DROCE_ARP_OP_REQUEST, mac2, IP4(10, 99, 0, 9), zero6,
		       IP4(10, 99, 0, 2));
	EXPECT_RX(f, len, DROCE_NEIGH_OWN_FRAME); /* someone sends with our MAC as sender */
}

Test(arp_rx, unicast_to_another_mac_is_not_ours, .fini = fini)
{
	uint8_t f[64];

	n = port(mac3, 3, 0);
	resolve_started(7);
	EXPECT_RX(f, answer(f, mac8, mac7, 7, 3), DROCE_NEIGH_OTHER_HOST);
	EXPECT_STATE(7, DROCE_NEIGH_INCOMPLETE);
}

Test(arp_rx, full_table_still_answers, .fini = fini)
{
	struct droce_neigh_cfg cfg;
	struct droce_neigh_stats st;
	uint8_t f[64], ip[16];

	droce_neigh_cfg_init(&cfg);
	memcpy(cfg.mac, mac2, 6);
	mapped(cfg.addr[0], IP4(10, 99, 0, 2));
	cfg.addr_count = 1;
	cfg.capacity = 1;
	cr_assert_eq(droce_neigh_create(&cfg, &n), 0);
	mapped(ip, IP4(10, 99, 0, 8));
	cr_assert_eq(droce_neigh_add_static(n, ip, mac8, T0), 0);
	EXPECT_RX(f, request(f, mac7, 7, 2), DROCE_NEIGH_REPLY);
	EXPECT_STATE(7, DROCE_NEIGH_NONE);
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.table_full, 1);
}

Test(arp_rx, counters_by_status, .fini = fini)
{
	struct droce_neigh_stats st;
	uint8_t f[64];

	n = port(mac2, 2, 0);
	rx(f, request(f, mac7, 7, 2));
	rx(f, request(f, mac7, 7, 2));
	rx(f, request(f, mac7, 7, 9));
	rx(f, 20);
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.rx[DROCE_NEIGH_REPLY], 2);
	cr_assert_eq(st.rx[DROCE_NEIGH_OK], 1);
	cr_assert_eq(st.rx[DROCE_NEIGH_ARP_TRUNC], 1);
}

Test(arp_rx, unicast_probe_request, .fini = fini)
{
	const struct droce_eth_hdr *eth;
	const struct droce_arp_hdr *arp;
	struct droce_neigh_req req = {.unicast = true};
	struct droce_neigh_frame f;

	n = port(mac3, 3, 0);
	mapped(req.ip, IP4(10, 99, 0, 7));
	memcpy(req.mac, mac7, 6);
	cr_assert_eq(droce_neigh_build_request(n, &req, &f), 0);
	eth = (const void *)f.data;
	arp = (const void *)(eth + 1);
	cr_assert_arr_eq(eth->dst, mac7, 6, "RFC 1122 2.3.2.1: a probe goes to the cached MAC");
	cr_assert_eq(droce_arp_op(arp), DROCE_ARP_OP_REQUEST);
	cr_assert_arr_eq(arp->tha, zero6, 6);
	cr_assert_arr_eq(arp->tpa, IP4(10, 99, 0, 7), 4);
	cr_assert_arr_eq(arp->spa, IP4(10, 99, 0, 3), 4);
}

/* ---- malformed */

Test(arp_malformed, truncated_at_every_length, .fini = fini)
{
	uint8_t f[64];
	size_t full = request(f, mac7, 7, 2), len;

	n = port(mac2, 2, 0);
	for (len = 0; len < full; len++) {
		enum droce_neigh_status want =
			len < 14 ? DROCE_NEIGH_TRUNC_L2 : DROCE_NEIGH_ARP_TRUNC;
		enum droce_neigh_status got = rx(f, len);

		cr_assert_eq(got, want, "%zu bytes: %s", len, droce_neigh_status_name[got]);
		cr_assert_eq(reply.len, 0, "%zu bytes: a reply", len);
	}
	EXPECT_STATE(7, DROCE_NEIGH_NONE);
}

Test(arp_malformed, tagged_truncated_at_every_length, .fini = fini)
{
	uint8_t f[64], g[64];
	size_t full = request(f, mac7, 7, 2), len;

	n = port(mac2, 2, 0x0064);
	/* insert a tag for VID 100 after the MACs */
	memcpy(g, f, 12);
	g[12] = 0x81;
	g[13] = 0x00;
	g[14] = 0x00;
	g[15] = 0x64;
	memcpy(g + 16, f + 12, full - 12);
	EXPECT_RX(g, full + 4, DROCE_NEIGH_REPLY);
	for (len = 0; len < full + 4; len++) {
		enum droce_neigh_status want =
			len < 18 ? DROCE_NEIGH_TRUNC_L2 : DROCE_NEIGH_ARP_TRUNC;
		enum droce_neigh_status got = rx(g, len);

		cr_assert_eq(got, want, "%zu bytes: %s", len, droce_neigh_status_name[got]);
	}
}

struct mutation {
	const char *what;
	size_t off;     /* from the start of the frame */
	uint8_t len;    /* bytes written */
	uint8_t val[6]; /* written at off */
	enum droce_neigh_status want;
};

/* A valid request from 10.99.0.7 for 10.99.0.2, one field broken per line. */
static const struct mutation arp_mutations[] = {
	{"htype 0", 14, 2, {0, 0}, DROCE_NEIGH_ARP_BAD_HTYPE},
	{"htype IEEE 802 (6)", 14, 2, {0, 6}, DROCE_NEIGH_ARP_BAD_HTYPE},
	{"htype 256", 14, 2, {1, 0}, DROCE_NEIGH_ARP_BAD_HTYPE},
	{"ptype IPv6", 16, 2, {0x86, 0xdd}, DROCE_NEIGH_ARP_BAD_PTYPE},
	{"ptype 0", 16, 2, {0, 0}, DROCE_NEIGH_ARP_BAD_PTYPE},
	{"hlen 8", 18, 1, {8}, DROCE_NEIGH_ARP_BAD_LEN},
	{"hlen 0", 18, 1, {0}, DROCE_NEIGH_ARP_BAD_LEN},
	{"plen 16", 19, 1, {16}, DROCE_NEIGH_ARP_BAD_LEN},
	{"plen 0", 19, 1, {0}, DROCE_NEIGH_ARP_BAD_LEN},
	{"op 0", 20, 2, {0, 0}, DROCE_NEIGH_ARP_BAD_OP},
	{"op 3 (RARP)", 20, 2, {0, 3}, DROCE_NEIGH_ARP_BAD_OP},
	{"op 0x0101", 20, 2, {1, 1}, DROCE_NEIGH_ARP_BAD_OP},
	{"sha broadcast", 22, 6, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, DROCE_NEIGH_BAD_MAC},
	{"sha multicast", 22, 6, {0x01, 0x00, 0x5e, 0, 0, 1}, DROCE_NEIGH_BAD_MAC},
	{"sha zero", 22, 6, {0}, DROCE_NEIGH_BAD_MAC},
	{"eth src multicast", 6, 6, {0x33, 0x33, 0, 0, 0, 1}, DROCE_NEIGH_BAD_MAC},
	{"eth src zero", 6, 6, {0}, DROCE_NEIGH_BAD_MAC},
	{"spa multicast", 28, 4, {224, 0, 0, 1}, DROCE_NEIGH_ARP_BAD_IP},
	{"spa broadcast", 28, 4, {255, 255, 255, 255}, DROCE_NEIGH_ARP_BAD_IP},
	{"spa class E", 28, 4, {240, 0, 0, 1}, DROCE_NEIGH_ARP_BAD_IP},
	{"spa loopback", 28, 4, {127, 0, 0, 1}, DROCE_NEIGH_ARP_BAD_IP},
	{"spa 0/8", 28, 4, {0, 1, 2, 3}, DROCE_NEIGH_ARP_BAD_IP},
	{"tpa multicast", 38, 4, {239, 1, 1, 1}, DROCE_NEIGH_ARP_BAD_IP},
	{"tpa broadcast", 38, 4, {255, 255, 255, 255}, DROCE_NEIGH_ARP_BAD_IP},
	{"tpa loopback", 38, 4, {127, 0, 0, 2}, DROCE_NEIGH_ARP_BAD_IP},
	{"ethertype RARP", 12, 2, {0x80, 0x35}, DROCE_NEIGH_NOT_NEIGH},
	{"ethertype IPv4", 12, 2, {0x08, 0x00}, DROCE_NEIGH_NOT_NEIGH},
	{"ethertype QinQ", 12, 2, {0x88, 0xa8}, DROCE_NEIGH_NOT_NEIGH},
};

Test(arp_malformed, one_broken_field_each, .fini = fini)
{
	size_t i;

	n = port(mac2, 2, 0);
	for (i = 0; i < sizeof(arp_mutations) / sizeof(arp_mutations[0]); i++) {
		const struct mutation *m = &arp_mutations[i];
		enum droce_neigh_status got;
		uint8_t f[64];
		size_t len = request(f, mac7, 7, 2);

		memcpy(f + m->off, m->val, m->len);
		got = rx(f, len);
		cr_assert_eq(got, m->want, "%s: %s, expected %s", m->what,
			     droce_neigh_status_name[got], droce_neigh_status_name[m->want]);
		cr_assert_eq(reply.len, 0, "%s: a reply", m->what);
	}
	EXPECT_STATE(7, DROCE_NEIGH_NONE);
}

Test(arp_malformed, reply_from_zero_is_bad, .fini = fini)
{
	uint8_t f[64];
	size_t len = arp_make(f, mac3, mac7, DROCE_ARP_OP_REPLY, mac7, IP4(0, 0, 0, 0), mac3,
			      IP4(10, 99, 0, 3));

	n = port(mac3, 3, 0);
	EXPECT_RX(f, len, DROCE_NEIGH_ARP_BAD_IP); /* only an RFC 5227 probe asks from 0.0.0.0 */
}

/* ---- 802.1Q */

static size_t tag(uint8_t *dst, const uint8_t *f, size_t len, uint16_t tci)
{
	memcpy(dst, f, 12);
	dst[12] = 0x81;
	dst[13] = 0x00;
	dst[14] = (uint8_t)(tci >> 8);
	dst[15] = (uint8_t)tci;
	memcpy(dst + 16, f + 12, len - 12);
	return len + 4;
}

Test(arp_vlan, tagged_request_gets_a_tagged_reply, .fini = fini)
{
	struct linux_arp la;
	uint8_t g[64], want[64];

	linux_arp("linux-rxe-rc_pingpong.pcap", &la);
	n = port(mac2, 2, 0xa064); /* PCP 5, VID 100 */
	EXPECT_RX(g, tag(g, la.req, la.req_len, 0x0064), DROCE_NEIGH_REPLY);
	/* Linux's reply with the port's tag */
	expect_bytes(reply.data, reply.len, want, tag(want, la.rep, la.rep_len, 0xa064),
		     "tagged reply");
}

Test(arp_vlan, untagged_frame_on_a_vlan_port, .fini = fini)
{
	uint8_t f[64];

	n = port(mac2, 2, 0x0064);
	EXPECT_RX(f, request(f, mac7, 7, 2), DROCE_NEIGH_OTHER_VLAN);
}

Test(arp_vlan, another_vid, .fini = fini)
{
	uint8_t f[64], g[64];

	n = port(mac2, 2, 0x0064);
	EXPECT_RX(g, tag(g, f, request(f, mac7, 7, 2), 0x0065), DROCE_NEIGH_OTHER_VLAN);
}

Test(arp_vlan, tagged_frame_on_an_untagged_port, .fini = fini)
{
	uint8_t f[64], g[64];

	n = port(mac2, 2, 0);
	EXPECT_RX(g, tag(g, f, request(f, mac7, 7, 2), 0x0005), DROCE_NEIGH_OTHER_VLAN);
}

Test(arp_vlan, priority_tag_is_no_vlan, .fini = fini)
{
	uint8_t f[64], g[64];

	n = port(mac2, 2, 0);
	EXPECT_RX(g, tag(g, f, request(f, mac7, 7, 2), 0x6000), DROCE_NEIGH_REPLY);
	cr_assert_eq(reply.len, 42, "the reply goes untagged");
}

Test(arp_vlan, requests_are_tagged, .fini = fini)
{
	struct droce_neigh_req req = {.unicast = false};
	struct droce_neigh_frame f;

	n = port(mac3, 3, 0x2064);
	mapped(req.ip, IP4(10, 99, 0, 2));
	cr_assert_eq(droce_neigh_build_request(n, &req, &f), 0);
	cr_assert_eq(f.len, 46);
	cr_assert_eq(f.data[12], 0x81);
	cr_assert_eq(f.data[13], 0x00);
	cr_assert_eq(f.data[14], 0x20);
	cr_assert_eq(f.data[15], 0x64);
	cr_assert_eq(f.data[16], 0x08);
	cr_assert_eq(f.data[17], 0x06);
}
