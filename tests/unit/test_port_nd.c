/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 neighbour discovery (RFC 4861) in lib/port: the advertisements and
 * solicitations droce builds equal Linux's, byte for byte, in the captures of
 * tests/data; the checks of RFC 4861 7.1.1 and 7.1.2 drop what they must, one
 * reason each; advertisements update entries as 7.2.5 says; nothing is read
 * out of bounds (each frame is copied to end just before a PROT_NONE page).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <droce_neigh.h>

#include "droce_test.h"

#define T0 1000000ull /* 1 s, in microseconds */

static const uint8_t mac2[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x02}; /* Linux server */
static const uint8_t mac3[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x03}; /* Linux client */
static const uint8_t mac7[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x07}; /* a stranger */
static const uint8_t mac8[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x08};
static const uint8_t sn2_mac[6] = {0x33, 0x33, 0xff, 0x00, 0x00, 0x02}; /* ff02::1:ff00:2 */

static struct droce_neigh *n;
static struct droce_neigh_frame reply;

static void ip6(uint8_t ip[16], const char *text)
{
	cr_assert_eq(inet_pton(AF_INET6, text, ip), 1, "bad address %s", text);
}

/* Linux's server (fd00::2, mac2) or client (fd00::3, mac3), with their link-local addresses. */
static struct droce_neigh *port(int host, uint16_t tci)
{
	struct droce_neigh_cfg cfg;
	struct droce_neigh *p = NULL;
	char text[64];

	droce_neigh_cfg_init(&cfg);
	memcpy(cfg.mac, host == 2 ? mac2 : mac3, 6);
	snprintf(text, sizeof(text), "fd00::%d", host);
	ip6(cfg.addr[0], text);
	snprintf(text, sizeof(text), "fe80::5054:ff:fe00:%d", host);
	ip6(cfg.addr[1], text);
	cfg.addr_count = 2;
	cfg.has_vlan = tci != 0;
	cfg.vlan_tci = tci;
	cr_assert_eq(droce_neigh_create(&cfg, &p), 0);
	return p;
}

static void fini(void)
{
	droce_neigh_free(n);
	n = NULL;
}

/* ---- frames */

struct nd_spec {
	const uint8_t *eth_dst;
	const uint8_t *eth_src;
	const char *src, *dst, *target;
	uint8_t type;
	uint32_t flags;
	uint8_t opt; /* link-layer option type, 0 for none */
	const uint8_t *opt_mac;
};

static struct droce_ipv6_hdr *ip6_of(uint8_t *f)
{
	return (struct droce_ipv6_hdr *)(f + 14);
}

static struct droce_nd_msg *nd_of(uint8_t *f)
{
	return (struct droce_nd_msg *)(f + 14 + 40);
}

/* Recompute the ICMPv6 checksum of an untagged frame over its IPv6 payload length. */
static void fix_csum(uint8_t *f)
{
	struct droce_ipv6_hdr *h = ip6_of(f);

	nd_of(f)->icmp.csum = 0;
	nd_of(f)->icmp.csum = droce_icmp6_csum(h->src, h->dst, nd_of(f), droce_ipv6_payload_len(h));
}

static size_t nd_make(uint8_t *f, const struct nd_spec *s)
{
	struct droce_eth_hdr *eth = (struct droce_eth_hdr *)f;
	struct droce_ipv6_hdr *h = ip6_of(f);
	struct droce_nd_msg *nd = nd_of(f);
	uint16_t icmp_len = s->opt ? 32 : 24;

	memcpy(eth->dst, s->eth_dst, 6);
	memcpy(eth->src, s->eth_src, 6);
	droce_eth_set_type(eth, DROCE_ETHERTYPE_IPV6);
	droce_ipv6_set_vtc_flow(h, 0, 0);
	h->payload_len = htobe16(icmp_len);
	h->next_hdr = DROCE_IPPROTO_ICMPV6;
	h->hop_limit = 255;
	ip6(h->src, s->src);
	ip6(h->dst, s->dst);
	nd->icmp.type = s->type;
	nd->icmp.code = 0;
	droce_nd_set_flags(nd, s->flags);
	ip6(nd->target, s->target);
	if (s->opt) {
		struct droce_nd_opt_lla *o = (struct droce_nd_opt_lla *)(nd + 1);

		o->type = s->opt;
		o->len = 1;
		memcpy(o->mac, s->opt_mac, 6);
	}
	fix_csum(f);
	return 14 + 40 + icmp_len;
}

/* fe80::7 (mac7) solicits fd00::2, multicast, with its SLLA option. */
static size_t ns_for_2(uint8_t *f)
{
	return nd_make(f, &(struct nd_spec){.eth_dst = sn2_mac,
					    .eth_src = mac7,
					    .src = "fe80::7",
					    .dst = "ff02::1:ff00:2",
					    .target = "fd00::2",
					    .type = DROCE_ICMPV6_ND_NS,
					    .opt = DROCE_ND_OPT_SLLA,
					    .opt_mac = mac7});
}

/* @p target advertises itself at @p mac to fd00::3 (mac3): flags @p flags, TLLA if @p tlla. */
static size_t na_to_3(uint8_t *f, const char *target, const uint8_t mac[6], uint32_t flags,
		      bool tlla)
{
	return nd_make(f, &(struct nd_spec){.eth_dst = mac3,
					    .eth_src = mac,
					    .src = target,
					    .dst = "fd00::3",
					    .target = target,
					    .type = DROCE_ICMPV6_ND_NA,
					    .flags = flags,
					    .opt = tlla ? DROCE_ND_OPT_TLLA : 0,
					    .opt_mac = mac});
}

#define S_FLAG DROCE_ND_NA_SOLICITED
#define O_FLAG DROCE_ND_NA_OVERRIDE

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

static enum droce_neigh_status rx(const void *frame, size_t len)
{
	struct guarded g;
	enum droce_neigh_status s;

	guarded_copy(&g, frame, len);
	s = droce_neigh_rx(n, g.data, len, T0, &reply);
	munmap(g.map, g.map_len);
	return s;
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

static enum droce_neigh_state state_of(const char *text, uint8_t mac[6])
{
	struct droce_neigh_info info;
	uint8_t ip[16];

	ip6(ip, text);
	if (droce_neigh_lookup(n, ip, &info) != 0)
		return DROCE_NEIGH_NONE;
	if (mac != NULL)
		memcpy(mac, info.mac, 6);
	return info.state;
}

#define EXPECT_STATE(text, want)                                                          \
	do {                                                                              \
		enum droce_neigh_state got_ = state_of(text, NULL);                       \
		cr_assert_eq(got_, want, "%s is %s, expected %s", text,                   \
			     droce_neigh_state_name[got_], droce_neigh_state_name[want]); \
	} while (0)

static void expect_mac(const char *text, const uint8_t want[6])
{
	uint8_t mac[6];

	cr_assert_neq(state_of(text, mac), DROCE_NEIGH_NONE, "no entry for %s", text);
	cr_assert_arr_eq(mac, want, 6, "%s has another MAC", text);
}

/* Port 3 starts resolving @p text and hands out the first solicitation. */
static void resolve_started(const char *text)
{
	struct droce_neigh_req req;
	uint8_t ip[16], mac[6];

	ip6(ip, text);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EAGAIN);
	cr_assert_eq(droce_neigh_pending(n, T0, &req, 1), 1);
}

/* Port 3 has @p text at @p mac in state REACHABLE. */
static void reachable(const char *text, const uint8_t mac[6])
{
	uint8_t f[128];

	resolve_started(text);
	EXPECT_RX(f, na_to_3(f, text, mac, S_FLAG | O_FLAG, true), DROCE_NEIGH_LEARNED);
	EXPECT_STATE(text, DROCE_NEIGH_REACHABLE);
}

/* Port 3 has @p text at @p mac in state STALE (learned from its solicitation). */
static void stale(const char *text, const uint8_t mac[6])
{
	uint8_t f[128];
	size_t len = nd_make(f, &(struct nd_spec){.eth_dst = mac3,
						  .eth_src = mac,
						  .src = text,
						  .dst = "fd00::3",
						  .target = "fd00::3",
						  .type = DROCE_ICMPV6_ND_NS,
						  .opt = DROCE_ND_OPT_SLLA,
						  .opt_mac = mac});

	EXPECT_RX(f, len, DROCE_NEIGH_REPLY);
	EXPECT_STATE(text, DROCE_NEIGH_STALE);
}

/* ---- Linux's frames */

struct grab {
	uint64_t index;
	uint8_t data[256];
	uint32_t len;
};

static void grab_frame(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct grab *g = arg;

	if (index != g->index)
		return;
	cr_assert_leq(len, sizeof(g->data));
	memcpy(g->data, frame, len);
	g->len = len;
}

static void linux_frame(const char *capture, uint64_t index, struct grab *g)
{
	memset(g, 0, sizeof(*g));
	g->index = index;
	droce_test_pcap_foreach(capture, grab_frame, g);
	cr_assert_gt(g->len, 0, "%s has no frame %llu", capture, (unsigned long long)index);
}

/* The four NS -> NA exchanges: capture, NS frame, NA frame, the replier (2 or 3). */
static const struct {
	const char *capture;
	uint64_t ns, na;
	int replier;
} exchanges[] = {
	{"linux-rxe-ipv6_rc_pingpong.pcap", 24, 25, 3},
	{"linux-rxe-ipv6_rc_pingpong.pcap", 32, 33, 2},
	{"linux-rxe-write_lat_v6.pcap", 38, 39, 3},
	{"linux-rxe-write_lat_v6.pcap", 40, 41, 2},
};

/* ---- header accessors */

Test(nd_hdr, layout)
{
	cr_assert_eq(sizeof(struct droce_icmp6_hdr), 4);
	cr_assert_eq(sizeof(struct droce_nd_msg), 24);
	cr_assert_eq(offsetof(struct droce_nd_msg, flags), 4);
	cr_assert_eq(offsetof(struct droce_nd_msg, target), 8);
	cr_assert_eq(sizeof(struct droce_nd_opt_lla), 8);
	cr_assert_eq(offsetof(struct droce_nd_opt_lla, mac), 2);
}

Test(nd_hdr, flags)
{
	union {
		struct droce_nd_msg m;
		uint8_t b[24];
	} u;
	size_t i;

	memset(&u, 0xa5, sizeof(u));
	droce_nd_set_flags(&u.m, DROCE_ND_NA_SOLICITED | DROCE_ND_NA_OVERRIDE | 0x12345);
	cr_assert_eq(droce_nd_flags(&u.m), 0x60012345u);
	cr_assert_eq(u.b[4], 0x60);
	cr_assert_eq(u.b[5], 0x01);
	cr_assert_eq(u.b[6], 0x23);
	cr_assert_eq(u.b[7], 0x45);
	for (i = 0; i < sizeof(u.b); i++)
		if (i < 4 || i > 7)
			cr_assert_eq(u.b[i], 0xa5, "byte %zu changed", i);
	cr_assert_eq(DROCE_ND_NA_ROUTER, 0x80000000u);
	cr_assert_eq(DROCE_ND_NA_SOLICITED, 0x40000000u);
	cr_assert_eq(DROCE_ND_NA_OVERRIDE, 0x20000000u);
}

/* ---- checksum */

/* RFC 1071 the long way: 16-bit words of a zero-padded copy, carries folded at the end. */
static uint16_t ref_csum(const uint8_t *src, const uint8_t *dst, const uint8_t *msg, size_t len)
{
	uint8_t buf[40 + 1024] = {0};
	uint32_t sum = 0;
	size_t i;

	memcpy(buf, src, 16);
	memcpy(buf + 16, dst, 16);
	buf[32] = (uint8_t)(len >> 24);
	buf[33] = (uint8_t)(len >> 16);
	buf[34] = (uint8_t)(len >> 8);
	buf[35] = (uint8_t)len;
	buf[39] = 58;
	memcpy(buf + 40, msg, len);
	for (i = 0; i < 40 + len + (len & 1); i += 2)
		sum += (uint32_t)(buf[i] * 256 + buf[i + 1]);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

Test(nd_csum, linux_messages_verify)
{
	size_t i;

	for (i = 0; i < sizeof(exchanges) / sizeof(exchanges[0]); i++) {
		struct grab ns, na;

		linux_frame(exchanges[i].capture, exchanges[i].ns, &ns);
		linux_frame(exchanges[i].capture, exchanges[i].na, &na);
		cr_assert_eq(droce_icmp6_csum(ip6_of(ns.data)->src, ip6_of(ns.data)->dst,
					      nd_of(ns.data), 32),
			     0, "%s NS %llu", exchanges[i].capture,
			     (unsigned long long)exchanges[i].ns);
		cr_assert_eq(droce_icmp6_csum(ip6_of(na.data)->src, ip6_of(na.data)->dst,
					      nd_of(na.data), 32),
			     0, "%s NA %llu", exchanges[i].capture,
			     (unsigned long long)exchanges[i].na);
	}
}

Test(nd_csum, recomputed_equals_linux)
{
	struct grab na;
	uint16_t stored;

	linux_frame("linux-rxe-write_lat_v6.pcap", 39, &na);
	stored = nd_of(na.data)->icmp.csum;
	cr_assert_eq(be16toh(stored), 0x7b6d, "tshark reads 0x7b6d");
	nd_of(na.data)->icmp.csum = 0;
	cr_assert_eq(
		droce_icmp6_csum(ip6_of(na.data)->src, ip6_of(na.data)->dst, nd_of(na.data), 32),
		stored);
}

Test(nd_csum, every_length_against_rfc1071)
{
	uint8_t src[16], dst[16], msg[1024];
	size_t len, i;

	srand(7);
	for (i = 0; i < 16; i++) {
		src[i] = (uint8_t)rand();
		dst[i] = (uint8_t)rand();
	}
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)rand();
	for (len = 0; len <= sizeof(msg); len++)
		cr_assert_eq(be16toh(droce_icmp6_csum(src, dst, msg, len)),
			     ref_csum(src, dst, msg, len), "length %zu", len);
}

Test(nd_csum, all_ones_data)
{
	uint8_t src[16], dst[16], msg[1024];
	size_t len;

	memset(src, 0xff, sizeof(src));
	memset(dst, 0xff, sizeof(dst));
	memset(msg, 0xff, sizeof(msg));
	for (len = 0; len <= sizeof(msg); len += 97)
		cr_assert_eq(be16toh(droce_icmp6_csum(src, dst, msg, len)),
			     ref_csum(src, dst, msg, len), "length %zu", len);
}

/* ---- golden: Linux's frames */

Test(nd_golden, advertisement_equals_linux, .fini = fini)
{
	size_t i;

	for (i = 0; i < sizeof(exchanges) / sizeof(exchanges[0]); i++) {
		struct grab ns, na;
		char what[96];

		linux_frame(exchanges[i].capture, exchanges[i].ns, &ns);
		linux_frame(exchanges[i].capture, exchanges[i].na, &na);
		n = port(exchanges[i].replier, 0);
		snprintf(what, sizeof(what), "%s frame %llu", exchanges[i].capture,
			 (unsigned long long)exchanges[i].na);
		cr_assert_eq(rx(ns.data, ns.len), DROCE_NEIGH_REPLY, "%s: no reply", what);
		expect_bytes(reply.data, reply.len, na.data, na.len, what);
		droce_neigh_free(n);
		n = NULL;
	}
}

Test(nd_golden, solicitation_equals_linux, .fini = fini)
{
	size_t i;

	for (i = 0; i < sizeof(exchanges) / sizeof(exchanges[0]); i++) {
		int asker = 5 - exchanges[i].replier;
		struct droce_neigh_frame f;
		struct droce_neigh_req req;
		uint8_t ip[16], mac[6];
		struct grab ns;
		char text[32];

		linux_frame(exchanges[i].capture, exchanges[i].ns, &ns);
		n = port(asker, 0);
		snprintf(text, sizeof(text), "fd00::%d", exchanges[i].replier);
		ip6(ip, text);
		cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EAGAIN);
		cr_assert_eq(droce_neigh_pending(n, T0, &req, 1), 1);
		cr_assert_not(req.unicast);
		cr_assert_eq(droce_neigh_build_request(n, &req, &f), 0);
		expect_bytes(f.data, f.len, ns.data, ns.len, exchanges[i].capture);
		droce_neigh_free(n);
		n = NULL;
	}
}

Test(nd_golden, linux_advertisement_resolves, .fini = fini)
{
	struct droce_neigh_req req;
	struct droce_neigh_info info;
	uint8_t ip[16], mac[6];
	struct grab na;

	linux_frame("linux-rxe-write_lat_v6.pcap", 39, &na);
	n = port(2, 0);
	ip6(ip, "fd00::3");
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), -EAGAIN);
	cr_assert_eq(droce_neigh_pending(n, T0, &req, 1), 1);
	EXPECT_RX(na.data, na.len, DROCE_NEIGH_LEARNED);
	cr_assert_eq(droce_neigh_lookup(n, ip, &info), 0);
	cr_assert_eq(info.state, DROCE_NEIGH_REACHABLE);
	cr_assert_arr_eq(info.mac, mac3, 6);
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), 0);
	cr_assert_arr_eq(mac, mac3, 6);
}

Test(nd_golden, linux_solicitation_teaches_the_asker, .fini = fini)
{
	struct grab ns;

	linux_frame("linux-rxe-write_lat_v6.pcap", 38, &ns);
	n = port(3, 0);
	EXPECT_RX(ns.data, ns.len, DROCE_NEIGH_REPLY);
	EXPECT_STATE("fe80::5054:ff:fe00:2", DROCE_NEIGH_STALE);
	expect_mac("fe80::5054:ff:fe00:2", mac2);
}

Test(nd_golden, linux_dad_probe_is_defended, .fini = fini)
{
	const struct droce_eth_hdr *eth = (const void *)reply.data;
	struct droce_neigh_msg msg;
	uint8_t all_nodes[16], target[16];
	struct droce_neigh_stats st;
	struct grab dad;

	struct droce_neigh_cfg cfg;

	/*
	 * Frame 5: Linux's client probes for fe80::5054:ff:fe00:3 from :: with a nonce
	 * option (RFC 7527). A port with another MAC that owns the address defends it.
	 */
	linux_frame("linux-rxe-write_lat_v6.pcap", 5, &dad);
	droce_neigh_cfg_init(&cfg);
	memcpy(cfg.mac, mac7, 6);
	ip6(cfg.addr[0], "fe80::5054:ff:fe00:3");
	cfg.addr_count = 1;
	cr_assert_eq(droce_neigh_create(&cfg, &n), 0);
	EXPECT_RX(dad.data, dad.len, DROCE_NEIGH_REPLY);
	cr_assert_eq(droce_neigh_parse(reply.data, reply.len, &msg), DROCE_NEIGH_OK,
		     "our advertisement does not pass our own checks");
	ip6(all_nodes, "ff02::1");
	ip6(target, "fe80::5054:ff:fe00:3");
	cr_assert_eq(msg.type, DROCE_NEIGH_MSG_NA);
	cr_assert_arr_eq(eth->dst, ((const uint8_t[]){0x33, 0x33, 0, 0, 0, 1}), 6);
	cr_assert_arr_eq(msg.dst_ip, all_nodes, 16, "RFC 4861 7.2.4: to all nodes");
	cr_assert_arr_eq(msg.src_ip, target, 16);
	cr_assert_arr_eq(msg.target, target, 16);
	cr_assert_eq(msg.na_flags, DROCE_ND_NA_OVERRIDE, "S clear, O set");
	cr_assert(msg.has_lladdr);
	cr_assert_arr_eq(msg.lladdr, mac7, 6);
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.entries, 0, "a DAD probe teaches nothing");
}

Test(nd_golden, linux_dad_probe_for_another_address, .fini = fini)
{
	struct grab dad;

	linux_frame("linux-rxe-write_lat_v6.pcap", 5, &dad);
	n = port(2, 0);
	EXPECT_RX(dad.data, dad.len, DROCE_NEIGH_OK);
	cr_assert_eq(reply.len, 0);
}

Test(nd_golden, our_own_dad_probe_looped_back, .fini = fini)
{
	struct grab dad;

	linux_frame("linux-rxe-write_lat_v6.pcap", 5, &dad); /* sent from mac3 */
	n = port(3, 0);
	EXPECT_RX(dad.data, dad.len, DROCE_NEIGH_OWN_FRAME);
	cr_assert_eq(reply.len, 0);
}

/* ---- solicitations and advertisements, hand-built */

Test(nd_rx, advertisement_fields, .fini = fini)
{
	const struct droce_eth_hdr *eth = (const void *)reply.data;
	struct droce_ipv6_hdr *h = ip6_of(reply.data);
	struct droce_nd_msg *nd = nd_of(reply.data);
	const struct droce_nd_opt_lla *o = (const void *)(nd + 1);
	uint8_t f[128], want[16];

	n = port(2, 0);
	EXPECT_RX(f, ns_for_2(f), DROCE_NEIGH_REPLY);
	cr_assert_eq(reply.len, 86);
	cr_assert_arr_eq(eth->dst, mac7, 6, "to the SLLA");
	cr_assert_arr_eq(eth->src, mac2, 6);
	cr_assert_eq(droce_eth_type(eth), DROCE_ETHERTYPE_IPV6);
	cr_assert_eq(droce_ipv6_version(h), 6);
	cr_assert_eq(droce_ipv6_tclass(h), 0);
	cr_assert_eq(droce_ipv6_flow_label(h), 0);
	cr_assert_eq(droce_ipv6_payload_len(h), 32);
	cr_assert_eq(h->next_hdr, 58);
	cr_assert_eq(h->hop_limit, 255);
	ip6(want, "fd00::2");
	cr_assert_arr_eq(h->src, want, 16, "from the target address");
	cr_assert_arr_eq(nd->target, want, 16);
	ip6(want, "fe80::7");
	cr_assert_arr_eq(h->dst, want, 16, "to the solicitation's source");
	cr_assert_eq(nd->icmp.type, 136);
	cr_assert_eq(nd->icmp.code, 0);
	cr_assert_eq(droce_nd_flags(nd), S_FLAG | O_FLAG);
	cr_assert_eq(o->type, DROCE_ND_OPT_TLLA);
	cr_assert_eq(o->len, 1);
	cr_assert_arr_eq(o->mac, mac2, 6);
	cr_assert_eq(droce_icmp6_csum(h->src, h->dst, nd, 32), 0);
}

Test(nd_rx, solicitation_teaches_its_sender_stale, .fini = fini)
{
	uint8_t f[128];

	n = port(2, 0);
	EXPECT_RX(f, ns_for_2(f), DROCE_NEIGH_REPLY);
	EXPECT_STATE("fe80::7", DROCE_NEIGH_STALE);
	expect_mac("fe80::7", mac7);
}

Test(nd_rx, unicast_solicitation_without_slla, .fini = fini)
{
	const struct droce_eth_hdr *eth = (const void *)reply.data;
	uint8_t f[128];
	size_t len = nd_make(f, &(struct nd_spec){.eth_dst = mac2,
						  .eth_src = mac8,
						  .src = "fd00::7",
						  .dst = "fd00::2",
						  .target = "fd00::2",
						  .type = DROCE_ICMPV6_ND_NS});

	n = port(2, 0);
	EXPECT_RX(f, len, DROCE_NEIGH_REPLY);
	cr_assert_arr_eq(eth->dst, mac8, 6, "to the frame's source MAC");
	EXPECT_STATE("fd00::7", DROCE_NEIGH_NONE);
}

Test(nd_rx, solicitation_for_another_target, .fini = fini)
{
	uint8_t f[128];
	size_t len = nd_make(f, &(struct nd_spec){.eth_dst = sn2_mac,
						  .eth_src = mac7,
						  .src = "fe80::7",
						  .dst = "ff02::1:ff00:2",
						  .target = "fd00:1::2",
						  .type = DROCE_ICMPV6_ND_NS,
						  .opt = DROCE_ND_OPT_SLLA,
						  .opt_mac = mac7});

	n = port(2, 0);
	EXPECT_RX(f, len, DROCE_NEIGH_OK);
	cr_assert_eq(reply.len, 0);
	EXPECT_STATE("fe80::7", DROCE_NEIGH_NONE);
}

Test(nd_rx, solicitation_unicast_to_another_address, .fini = fini)
{
	uint8_t f[128];
	size_t len = nd_make(f, &(struct nd_spec){.eth_dst = mac2,
						  .eth_src = mac7,
						  .src = "fe80::7",
						  .dst = "fd00::9",
						  .target = "fd00::2",
						  .type = DROCE_ICMPV6_ND_NS,
						  .opt = DROCE_ND_OPT_SLLA,
						  .opt_mac = mac7});

	n = port(2, 0);
	EXPECT_RX(f, len, DROCE_NEIGH_OTHER_HOST);
}

Test(nd_rx, unicast_to_another_mac, .fini = fini)
{
	uint8_t f[128];
	size_t len = ns_for_2(f);

	memcpy(f, mac8, 6);
	n = port(2, 0);
	EXPECT_RX(f, len, DROCE_NEIGH_OTHER_HOST);
	EXPECT_STATE("fe80::7", DROCE_NEIGH_NONE);
}

Test(nd_rx, solicitation_from_our_address, .fini = fini)
{
	uint8_t f[128];
	size_t len = nd_make(f, &(struct nd_spec){.eth_dst = sn2_mac,
						  .eth_src = mac7,
						  .src = "fe80::5054:ff:fe00:2",
						  .dst = "ff02::1:ff00:2",
						  .target = "fd00::2",
						  .type = DROCE_ICMPV6_ND_NS,
						  .opt = DROCE_ND_OPT_SLLA,
						  .opt_mac = mac7});

	n = port(2, 0);
	EXPECT_RX(f, len, DROCE_NEIGH_ADDR_CONFLICT);
	cr_assert_eq(reply.len, 0);
}

Test(nd_rx, advertisement_of_our_address, .fini = fini)
{
	uint8_t f[128];

	n = port(3, 0);
	EXPECT_RX(f, na_to_3(f, "fd00::3", mac7, O_FLAG, true), DROCE_NEIGH_ADDR_CONFLICT);
}

Test(nd_rx, unsolicited_advertisement_is_not_learned, .fini = fini)
{
	uint8_t f[128];

	n = port(3, 0);
	EXPECT_RX(f, na_to_3(f, "fd00::7", mac7, S_FLAG | O_FLAG, true), DROCE_NEIGH_UNSOLICITED);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_NONE);
}

Test(nd_rx, advertisement_to_another_address, .fini = fini)
{
	uint8_t f[128];
	size_t len;

	n = port(3, 0);
	resolve_started("fd00::7");
	len = na_to_3(f, "fd00::7", mac7, S_FLAG | O_FLAG, true);
	ip6(ip6_of(f)->dst, "fd00::9");
	fix_csum(f);
	EXPECT_RX(f, len, DROCE_NEIGH_OTHER_HOST);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_INCOMPLETE);
}

Test(nd_rx, solicitation_with_new_mac_replaces_it, .fini = fini)
{
	n = port(3, 0);
	reachable("fd00::7", mac7);
	stale("fd00::7", mac8);
	expect_mac("fd00::7", mac8);
}

Test(nd_rx, solicitation_with_same_mac_keeps_reachable, .fini = fini)
{
	uint8_t f[128];
	size_t len = nd_make(f, &(struct nd_spec){.eth_dst = mac3,
						  .eth_src = mac7,
						  .src = "fd00::7",
						  .dst = "fd00::3",
						  .target = "fd00::3",
						  .type = DROCE_ICMPV6_ND_NS,
						  .opt = DROCE_ND_OPT_SLLA,
						  .opt_mac = mac7});

	n = port(3, 0);
	reachable("fd00::7", mac7);
	EXPECT_RX(f, len, DROCE_NEIGH_REPLY);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_REACHABLE);
}

Test(nd_rx, options_skipped_and_first_slla_counts, .fini = fini)
{
	uint8_t f[128];
	size_t len = ns_for_2(f);
	uint8_t *opt = f + len;

	/* a nonce (RFC 7527), an unknown option of 16 bytes, a second SLLA */
	memcpy(opt, (const uint8_t[]){14, 1, 1, 2, 3, 4, 5, 6}, 8);
	memset(opt + 8, 0, 16);
	opt[8] = 200;
	opt[9] = 2;
	memcpy(opt + 24, (const uint8_t[]){1, 1, 0x52, 0x54, 0, 0, 0, 8}, 8);
	ip6_of(f)->payload_len = htobe16(32 + 32);
	fix_csum(f);
	n = port(2, 0);
	EXPECT_RX(f, len + 32, DROCE_NEIGH_REPLY);
	expect_mac("fe80::7", mac7);
}

Test(nd_rx, tlla_in_a_solicitation_is_no_slla, .fini = fini)
{
	const struct droce_eth_hdr *eth = (const void *)reply.data;
	uint8_t f[128];
	size_t len = nd_make(f, &(struct nd_spec){.eth_dst = sn2_mac,
						  .eth_src = mac7,
						  .src = "fe80::7",
						  .dst = "ff02::1:ff00:2",
						  .target = "fd00::2",
						  .type = DROCE_ICMPV6_ND_NS,
						  .opt = DROCE_ND_OPT_TLLA,
						  .opt_mac = mac8});

	n = port(2, 0);
	EXPECT_RX(f, len, DROCE_NEIGH_REPLY);
	cr_assert_arr_eq(eth->dst, mac7, 6);
	EXPECT_STATE("fe80::7", DROCE_NEIGH_NONE);
}

Test(nd_rx, unicast_probe_solicitation, .fini = fini)
{
	struct droce_neigh_req req = {.unicast = true};
	struct droce_neigh_frame f;
	struct droce_neigh_msg msg;
	uint8_t want[16];

	n = port(3, 0);
	ip6(req.ip, "fd00::7");
	memcpy(req.mac, mac7, 6);
	cr_assert_eq(droce_neigh_build_request(n, &req, &f), 0);
	cr_assert_eq(droce_neigh_parse(f.data, f.len, &msg), DROCE_NEIGH_OK);
	cr_assert_eq(msg.type, DROCE_NEIGH_MSG_NS);
	cr_assert_arr_eq(msg.eth_dst, mac7, 6, "RFC 4861 7.3.3: unicast to the cached MAC");
	cr_assert_arr_eq(msg.dst_ip, req.ip, 16);
	cr_assert_arr_eq(msg.target, req.ip, 16);
	ip6(want, "fe80::5054:ff:fe00:3");
	cr_assert_arr_eq(msg.src_ip, want, 16, "from the link-local address");
	cr_assert(msg.has_lladdr);
	cr_assert_arr_eq(msg.lladdr, mac3, 6);
}

Test(nd_rx, source_is_the_closest_address_without_link_local, .fini = fini)
{
	struct droce_neigh_cfg cfg;
	struct droce_neigh_req req = {.unicast = false};
	struct droce_neigh_frame f;
	struct droce_neigh_msg msg;
	uint8_t want[16];

	droce_neigh_cfg_init(&cfg);
	memcpy(cfg.mac, mac3, 6);
	ip6(cfg.addr[0], "fd00:1::3");
	ip6(cfg.addr[1], "fd00:2::3");
	droce_neigh_ip_from_ipv4(cfg.addr[2], (const uint8_t[]){10, 99, 0, 3});
	cfg.addr_count = 3;
	cr_assert_eq(droce_neigh_create(&cfg, &n), 0);
	ip6(req.ip, "fd00:2::9");
	cr_assert_eq(droce_neigh_build_request(n, &req, &f), 0);
	cr_assert_eq(droce_neigh_parse(f.data, f.len, &msg), DROCE_NEIGH_OK);
	ip6(want, "fd00:2::3");
	cr_assert_arr_eq(msg.src_ip, want, 16);
	ip6(want, "ff02::1:ff00:9");
	cr_assert_arr_eq(msg.dst_ip, want, 16);
	cr_assert_arr_eq(msg.eth_dst, ((const uint8_t[]){0x33, 0x33, 0xff, 0, 0, 9}), 6);
}

/* ---- RFC 4861 7.2.5, one case each (port 3 receives) */

Test(nd_update, incomplete_without_tlla_stays, .fini = fini)
{
	uint8_t f[128];

	n = port(3, 0);
	resolve_started("fd00::7");
	EXPECT_RX(f, na_to_3(f, "fd00::7", mac7, S_FLAG | O_FLAG, false), DROCE_NEIGH_OK);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_INCOMPLETE);
}

Test(nd_update, incomplete_solicited_becomes_reachable, .fini = fini)
{
	n = port(3, 0);
	reachable("fd00::7", mac7);
	expect_mac("fd00::7", mac7);
}

Test(nd_update, incomplete_unsolicited_becomes_stale, .fini = fini)
{
	uint8_t f[128];
	size_t len;

	n = port(3, 0);
	resolve_started("fd00::7");
	len = na_to_3(f, "fd00::7", mac7, O_FLAG, true);
	ip6(ip6_of(f)->dst, "ff02::1");
	fix_csum(f);
	EXPECT_RX(f, len, DROCE_NEIGH_LEARNED);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_STALE);
	expect_mac("fd00::7", mac7);
}

Test(nd_update, reachable_new_mac_without_override_goes_stale, .fini = fini)
{
	uint8_t f[128];

	n = port(3, 0);
	reachable("fd00::7", mac7);
	EXPECT_RX(f, na_to_3(f, "fd00::7", mac8, S_FLAG, true), DROCE_NEIGH_LEARNED);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_STALE);
	expect_mac("fd00::7", mac7);
}

Test(nd_update, stale_new_mac_without_override_is_ignored, .fini = fini)
{
	uint8_t f[128];

	n = port(3, 0);
	stale("fd00::7", mac7);
	EXPECT_RX(f, na_to_3(f, "fd00::7", mac8, S_FLAG, true), DROCE_NEIGH_OK);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_STALE);
	expect_mac("fd00::7", mac7);
}

Test(nd_update, solicited_same_mac_confirms, .fini = fini)
{
	uint8_t f[128];

	n = port(3, 0);
	stale("fd00::7", mac7);
	EXPECT_RX(f, na_to_3(f, "fd00::7", mac7, S_FLAG, true), DROCE_NEIGH_LEARNED);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_REACHABLE);
}

Test(nd_update, solicited_without_tlla_confirms, .fini = fini)
{
	uint8_t f[128];

	n = port(3, 0);
	stale("fd00::7", mac7);
	EXPECT_RX(f, na_to_3(f, "fd00::7", mac7, S_FLAG, false), DROCE_NEIGH_LEARNED);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_REACHABLE);
	expect_mac("fd00::7", mac7);
}

Test(nd_update, probe_answered_becomes_reachable, .fini = fini)
{
	struct droce_neigh_req req;
	uint8_t f[128], ip[16], mac[6];

	n = port(3, 0);
	stale("fd00::7", mac7);
	ip6(ip, "fd00::7");
	cr_assert_eq(droce_neigh_resolve(n, ip, T0, mac), 0);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_PROBE);
	cr_assert_eq(droce_neigh_pending(n, T0, &req, 1), 1);
	cr_assert(req.unicast);
	EXPECT_RX(f, na_to_3(f, "fd00::7", mac7, S_FLAG | O_FLAG, true), DROCE_NEIGH_LEARNED);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_REACHABLE);
}

Test(nd_update, override_new_mac_unsolicited_goes_stale, .fini = fini)
{
	uint8_t f[128];

	n = port(3, 0);
	reachable("fd00::7", mac7);
	EXPECT_RX(f, na_to_3(f, "fd00::7", mac8, O_FLAG, true), DROCE_NEIGH_LEARNED);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_STALE);
	expect_mac("fd00::7", mac8);
}

Test(nd_update, override_new_mac_solicited_is_reachable, .fini = fini)
{
	uint8_t f[128];

	n = port(3, 0);
	reachable("fd00::7", mac7);
	EXPECT_RX(f, na_to_3(f, "fd00::7", mac8, S_FLAG | O_FLAG, true), DROCE_NEIGH_LEARNED);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_REACHABLE);
	expect_mac("fd00::7", mac8);
}

Test(nd_update, unsolicited_same_mac_changes_nothing, .fini = fini)
{
	uint8_t f[128];

	n = port(3, 0);
	stale("fd00::7", mac7);
	EXPECT_RX(f, na_to_3(f, "fd00::7", mac7, O_FLAG, true), DROCE_NEIGH_OK);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_STALE);
}

Test(nd_update, static_entry_is_kept, .fini = fini)
{
	uint8_t f[128], ip[16];
	size_t len;

	n = port(3, 0);
	ip6(ip, "fd00::7");
	cr_assert_eq(droce_neigh_add_static(n, ip, mac7, T0), 0);
	EXPECT_RX(f, na_to_3(f, "fd00::7", mac8, S_FLAG | O_FLAG, true), DROCE_NEIGH_OK);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_STATIC);
	expect_mac("fd00::7", mac7);
	/* a solicitation from a static neighbour with another MAC is answered, not learned */
	len = nd_make(f, &(struct nd_spec){.eth_dst = mac3,
					   .eth_src = mac8,
					   .src = "fd00::7",
					   .dst = "fd00::3",
					   .target = "fd00::3",
					   .type = DROCE_ICMPV6_ND_NS,
					   .opt = DROCE_ND_OPT_SLLA,
					   .opt_mac = mac8});
	EXPECT_RX(f, len, DROCE_NEIGH_REPLY);
	EXPECT_STATE("fd00::7", DROCE_NEIGH_STATIC);
	expect_mac("fd00::7", mac7);
}

/* ---- malformed */

struct mutation {
	const char *what;
	size_t off;      /* from the start of the frame */
	uint8_t len;     /* bytes written */
	uint8_t val[16]; /* written at off */
	bool keep_csum;  /* leave the checksum as it becomes */
	enum droce_neigh_status want;
};

#define MAPPED_10_99_0_7                                               \
	{                                                              \
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 99, 0, 7 \
	}
#define MAPPED_10_99_0_2                                               \
	{                                                              \
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 99, 0, 2 \
	}
#define ALL_NODES                                                    \
	{                                                            \
		0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 \
	}

/* Offsets in ns_for_2()'s frame: IPv6 at 14, ICMPv6 at 54, option at 78. */
static const struct mutation ns_mutations[] = {
	{"IP version 4", 14, 1, {0x40}, false, DROCE_NEIGH_IP6_BAD_VERSION},
	{"IP version 0", 14, 1, {0x00}, false, DROCE_NEIGH_IP6_BAD_VERSION},
	{"payload length past the frame", 18, 2, {0, 33}, true, DROCE_NEIGH_IP6_BAD_LEN},
	{"payload length 0xffff", 18, 2, {0xff, 0xff}, true, DROCE_NEIGH_IP6_BAD_LEN},
	{"next header hop-by-hop", 20, 1, {0}, false, DROCE_NEIGH_NOT_NEIGH},
	{"next header UDP", 20, 1, {17}, false, DROCE_NEIGH_NOT_NEIGH},
	{"ICMPv6 echo request", 54, 1, {128}, false, DROCE_NEIGH_NOT_NEIGH},
	{"router solicitation", 54, 1, {133}, false, DROCE_NEIGH_NOT_NEIGH},
	{"redirect", 54, 1, {137}, false, DROCE_NEIGH_NOT_NEIGH},
	{"hop limit 254", 21, 1, {254}, false, DROCE_NEIGH_ND_BAD_HOP_LIMIT},
	{"hop limit 64", 21, 1, {64}, false, DROCE_NEIGH_ND_BAD_HOP_LIMIT},
	{"hop limit 0", 21, 1, {0}, false, DROCE_NEIGH_ND_BAD_HOP_LIMIT},
	{"code 1", 55, 1, {1}, false, DROCE_NEIGH_ND_BAD_CODE},
	{"code 255", 55, 1, {255}, false, DROCE_NEIGH_ND_BAD_CODE},
	{"checksum 0", 56, 2, {0, 0}, true, DROCE_NEIGH_ND_BAD_CSUM},
	{"target byte flipped, checksum kept", 77, 1, {0x03}, true, DROCE_NEIGH_ND_BAD_CSUM},
	{"source byte flipped, checksum kept", 37, 1, {0x08}, true, DROCE_NEIGH_ND_BAD_CSUM},
	{"target multicast", 62, 16, ALL_NODES, false, DROCE_NEIGH_ND_BAD_TARGET},
	{"target IPv4-mapped", 62, 16, MAPPED_10_99_0_2, false, DROCE_NEIGH_ND_BAD_TARGET},
	{"option length 0", 79, 1, {0}, false, DROCE_NEIGH_ND_BAD_OPTION},
	{"option length past the end", 79, 1, {2}, false, DROCE_NEIGH_ND_BAD_OPTION},
	{"SLLA multicast", 80, 6, {0x33, 0x33, 0, 0, 0, 1}, false, DROCE_NEIGH_BAD_MAC},
	{"SLLA zero", 80, 6, {0}, false, DROCE_NEIGH_BAD_MAC},
	{"Ethernet source multicast", 6, 6, {0x01, 0, 0x5e, 0, 0, 1}, false, DROCE_NEIGH_BAD_MAC},
	{"source multicast", 22, 16, ALL_NODES, false, DROCE_NEIGH_ND_BAD_ADDR},
	{"source IPv4-mapped", 22, 16, MAPPED_10_99_0_7, false, DROCE_NEIGH_ND_BAD_ADDR},
	{"destination IPv4-mapped", 38, 16, MAPPED_10_99_0_2, false, DROCE_NEIGH_ND_BAD_ADDR},
	{"DAD with an SLLA option", 22, 16, {0}, false, DROCE_NEIGH_ND_BAD_ADDR},
};

static void mutate_and_check(size_t (*make)(uint8_t *), const struct mutation *m, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++) {
		enum droce_neigh_status got;
		uint8_t f[128];
		size_t len = make(f);

		memcpy(f + m[i].off, m[i].val, m[i].len);
		if (!m[i].keep_csum)
			fix_csum(f);
		got = rx(f, len);
		cr_assert_eq(got, m[i].want, "%s: %s, expected %s", m[i].what,
			     droce_neigh_status_name[got], droce_neigh_status_name[m[i].want]);
		cr_assert_eq(reply.len, 0, "%s: a reply", m[i].what);
	}
}

Test(nd_malformed, solicitation_one_broken_field_each, .fini = fini)
{
	struct droce_neigh_stats st;

	n = port(2, 0);
	mutate_and_check(ns_for_2, ns_mutations, sizeof(ns_mutations) / sizeof(ns_mutations[0]));
	droce_neigh_stats_get(n, &st);
	cr_assert_eq(st.entries, 0, "a malformed solicitation taught something");
}

/* fd00::7 answers fd00::3: solicited, override, TLLA mac7. */
static size_t na_7(uint8_t *f)
{
	return na_to_3(f, "fd00::7", mac7, S_FLAG | O_FLAG, true);
}

static const struct mutation na_mutations[] = {
	{"hop limit 1", 21, 1, {1}, false, DROCE_NEIGH_ND_BAD_HOP_LIMIT},
	{"code 7", 55, 1, {7}, false, DROCE_NEIGH_ND_BAD_CODE},
	{"checksum off by one", 57, 1, {0}, true, DROCE_NEIGH_ND_BAD_CSUM},
	{"target multicast", 62, 16, ALL_NODES, false, DROCE_NEIGH_ND_BAD_TARGET},
	{"TLLA length 0", 79, 1, {0}, false, DROCE_NEIGH_ND_BAD_OPTION},
	{"TLLA broadcast", 80, 6, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, false, DROCE_NEIGH_BAD_MAC},
	{"source ::", 22, 16, {0}, false, DROCE_NEIGH_ND_BAD_ADDR},
	{"solicited to all nodes", 38, 16, ALL_NODES, false, DROCE_NEIGH_ND_BAD_SOLICITED},
};

Test(nd_malformed, advertisement_one_broken_field_each, .fini = fini)
{
	n = port(3, 0);
	resolve_started("fd00::7");
	mutate_and_check(na_7, na_mutations, sizeof(na_mutations) / sizeof(na_mutations[0]));
	EXPECT_STATE("fd00::7", DROCE_NEIGH_INCOMPLETE);
}

Test(nd_malformed, checksum_position_counts, .fini = fini)
{
	uint8_t f[128];
	size_t len = na_7(f), i;

	/* flip one bit in each byte the checksum covers: every flip is caught */
	n = port(3, 0);
	for (i = 22; i < len; i++) {
		uint8_t g[128];

		if (i == 54 || i == 55) /* type and code have their own checks first */
			continue;
		memcpy(g, f, len);
		g[i] ^= 0x10;
		cr_assert_eq(rx(g, len), DROCE_NEIGH_ND_BAD_CSUM, "byte %zu", i);
	}
}

Test(nd_malformed, dad_rules, .fini = fini)
{
	uint8_t f[128];
	size_t len;

	n = port(2, 0);
	/* from :: with no option, to the solicited-node group: a valid probe */
	len = nd_make(f, &(struct nd_spec){.eth_dst = sn2_mac,
					   .eth_src = mac7,
					   .src = "::",
					   .dst = "ff02::1:ff00:2",
					   .target = "fd00::2",
					   .type = DROCE_ICMPV6_ND_NS});
	EXPECT_RX(f, len, DROCE_NEIGH_REPLY);
	/* to all nodes */
	ip6(ip6_of(f)->dst, "ff02::1");
	fix_csum(f);
	EXPECT_RX(f, len, DROCE_NEIGH_ND_BAD_ADDR);
	/* unicast */
	ip6(ip6_of(f)->dst, "fd00::2");
	fix_csum(f);
	EXPECT_RX(f, len, DROCE_NEIGH_ND_BAD_ADDR);
}

Test(nd_malformed, truncated_at_every_length, .fini = fini)
{
	uint8_t f[128];
	size_t full = ns_for_2(f), len;

	n = port(2, 0);
	for (len = 0; len < full; len++) {
		enum droce_neigh_status want = len < 14   ? DROCE_NEIGH_TRUNC_L2
					       : len < 54 ? DROCE_NEIGH_IP6_TRUNC
							  : DROCE_NEIGH_IP6_BAD_LEN;
		enum droce_neigh_status got = rx(f, len);

		cr_assert_eq(got, want, "%zu bytes: %s", len, droce_neigh_status_name[got]);
		cr_assert_eq(reply.len, 0, "%zu bytes: a reply", len);
	}
}

Test(nd_malformed, icmp_length_at_every_value, .fini = fini)
{
	size_t icmp;

	n = port(2, 0);
	/* the IPv6 length cut to every value below the message, checksum made right */
	for (icmp = 0; icmp < 32; icmp++) {
		enum droce_neigh_status want = icmp == 0    ? DROCE_NEIGH_NOT_NEIGH
					       : icmp < 24  ? DROCE_NEIGH_ND_TRUNC
					       : icmp == 24 ? DROCE_NEIGH_REPLY
							    : DROCE_NEIGH_ND_BAD_OPTION;
		enum droce_neigh_status got;
		uint8_t f[128];

		ns_for_2(f);
		ip6_of(f)->payload_len = htobe16((uint16_t)icmp);
		if (icmp >= 4)
			fix_csum(f);
		got = rx(f, 54 + icmp);
		cr_assert_eq(got, want, "ICMPv6 length %zu: %s", icmp,
			     droce_neigh_status_name[got]);
	}
}

Test(nd_malformed, trailing_byte_after_options, .fini = fini)
{
	uint8_t f[128];
	size_t len = ns_for_2(f);

	f[len] = 0;
	ip6_of(f)->payload_len = htobe16(33);
	fix_csum(f);
	n = port(2, 0);
	EXPECT_RX(f, len + 1, DROCE_NEIGH_ND_BAD_OPTION);
}

Test(nd_malformed, slla_of_two_units, .fini = fini)
{
	uint8_t f[128];
	size_t len = ns_for_2(f);

	memset(f + len, 0, 8);
	f[79] = 2; /* 16 bytes: not an Ethernet address (RFC 2464 6) */
	ip6_of(f)->payload_len = htobe16(40);
	fix_csum(f);
	n = port(2, 0);
	EXPECT_RX(f, len + 8, DROCE_NEIGH_ND_BAD_OPTION);
}

Test(nd_malformed, ethernet_padding_is_ignored, .fini = fini)
{
	uint8_t f[128] = {0};
	size_t len = ns_for_2(f);

	n = port(2, 0);
	EXPECT_RX(f, len + 10, DROCE_NEIGH_REPLY);
}

/* ---- 802.1Q */

Test(nd_vlan, tagged_solicitation_gets_a_tagged_advertisement, .fini = fini)
{
	struct grab ns, na;
	uint8_t g[256], want[256];

	linux_frame("linux-rxe-write_lat_v6.pcap", 38, &ns);
	linux_frame("linux-rxe-write_lat_v6.pcap", 39, &na);
	n = port(3, 0x0064);
	memcpy(g, ns.data, 12);
	memcpy(g + 12, (const uint8_t[]){0x81, 0x00, 0x00, 0x64}, 4);
	memcpy(g + 16, ns.data + 12, ns.len - 12);
	EXPECT_RX(g, ns.len + 4, DROCE_NEIGH_REPLY);
	memcpy(want, na.data, 12);
	memcpy(want + 12, (const uint8_t[]){0x81, 0x00, 0x00, 0x64}, 4);
	memcpy(want + 16, na.data + 12, na.len - 12);
	expect_bytes(reply.data, reply.len, want, na.len + 4, "tagged advertisement");
}

Test(nd_vlan, wrong_vid, .fini = fini)
{
	struct grab ns;
	uint8_t g[256];

	linux_frame("linux-rxe-write_lat_v6.pcap", 38, &ns);
	n = port(3, 0x0064);
	memcpy(g, ns.data, 12);
	memcpy(g + 12, (const uint8_t[]){0x81, 0x00, 0x00, 0x63}, 4);
	memcpy(g + 16, ns.data + 12, ns.len - 12);
	EXPECT_RX(g, ns.len + 4, DROCE_NEIGH_OTHER_VLAN);
	EXPECT_RX(ns.data, ns.len, DROCE_NEIGH_OTHER_VLAN);
}
