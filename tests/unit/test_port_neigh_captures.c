/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every frame of the Linux captures in tests/data through lib/port's
 * neighbour code: each ARP, NS and NA decodes to the fields tshark reads in it
 * (tests/data/neigh-captures.tshark.tsv, an independent decoder), every other
 * frame (RoCEv2, TCP, MLD, router solicitations) is left alone, and ports set
 * up as either Linux host answer exactly the requests for their addresses and
 * learn exactly their askers.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <droce_neigh.h>

#include "droce_test.h"

/* ---- tshark's view */

#define MAX_COLS 24
#define MAX_ROWS 256

struct row {
	char *f[MAX_COLS];
	uint64_t frame;
	bool seen;
};

static char *cols[MAX_COLS];
static int ncols;
static struct row rows[MAX_ROWS];
static int nrows;

static void golden_load(void)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen(droce_test_data("neigh-captures.tshark.tsv"), "r");

	cr_assert_not_null(f, "missing tests/data/neigh-captures.tshark.tsv (doc/neighbours.md)");
	while (getline(&line, &cap, f) > 0) {
		char *s, *tok, **fields;
		int k = 0;

		if (line[0] == '#')
			continue;
		s = strdup(line);
		s[strcspn(s, "\n")] = '\0';
		fields = ncols == 0 ? cols : rows[nrows].f;
		while ((tok = strsep(&s, "\t")) != NULL && k < MAX_COLS)
			fields[k++] = tok;
		if (ncols == 0) {
			ncols = k;
			continue;
		}
		cr_assert_eq(k, ncols, "row %d has %d fields", nrows, k);
		cr_assert_lt(nrows + 1, MAX_ROWS);
		rows[nrows].frame = strtoull(rows[nrows].f[1], NULL, 10);
		nrows++;
	}
	free(line);
	fclose(f);
	cr_assert_gt(nrows, 0);
}

static const char *field(const struct row *r, const char *col)
{
	int i;

	for (i = 0; i < ncols; i++)
		if (strcmp(cols[i], col) == 0)
			return r->f[i];
	cr_assert_fail("no column %s", col);
	return NULL;
}

static struct row *golden_row(const char *capture, uint64_t frame)
{
	int i;

	for (i = 0; i < nrows; i++)
		if (rows[i].frame == frame && strcmp(rows[i].f[0], capture) == 0)
			return &rows[i];
	return NULL;
}

static void parse_mac(const char *text, uint8_t mac[6])
{
	unsigned int b[6];
	int i;

	cr_assert_eq(sscanf(text, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]), 6,
		     "bad MAC %s", text);
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
}

static void parse_ip(const char *text, uint8_t ip[16])
{
	uint8_t v4[4];

	if (inet_pton(AF_INET, text, v4) == 1) {
		droce_neigh_ip_from_ipv4(ip, v4);
		return;
	}
	cr_assert_eq(inet_pton(AF_INET6, text, ip), 1, "bad address %s", text);
}

/* ---- decoding against tshark */

struct decode_run {
	const char *capture;
	unsigned int matched, others;
};

#define EXPECT_MAC(got, col)                                                                      \
	do {                                                                                      \
		uint8_t want_[6];                                                                 \
		parse_mac(field(r, col), want_);                                                  \
		cr_assert_arr_eq(got, want_, 6, "%s frame %" PRIu64 ": %s differs from tshark's", \
				 run->capture, index, col);                                       \
	} while (0)

#define EXPECT_IP(got, col)                                                                        \
	do {                                                                                       \
		uint8_t want_[16];                                                                 \
		parse_ip(field(r, col), want_);                                                    \
		cr_assert_arr_eq(got, want_, 16, "%s frame %" PRIu64 ": %s differs from tshark's", \
				 run->capture, index, col);                                        \
	} while (0)

static void decode_frame(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct decode_run *run = arg;
	struct row *r = golden_row(run->capture, index);
	struct droce_neigh_msg msg;
	enum droce_neigh_status s = droce_neigh_parse(frame, len, &msg);
	const char *lla;

	if (r == NULL) {
		cr_assert_eq(s, DROCE_NEIGH_NOT_NEIGH,
			     "%s frame %" PRIu64 " is %s, not ARP/ND to tshark", run->capture,
			     index, droce_neigh_status_name[s]);
		run->others++;
		return;
	}
	r->seen = true;
	run->matched++;
	cr_assert_eq(s, DROCE_NEIGH_OK, "%s frame %" PRIu64 ": %s", run->capture, index,
		     droce_neigh_status_name[s]);
	EXPECT_MAC(msg.eth_dst, "eth.dst");
	EXPECT_MAC(msg.eth_src, "eth.src");
	if (field(r, "arp.opcode")[0] != '\0') {
		cr_assert_eq(msg.type == DROCE_NEIGH_MSG_ARP_REQUEST ? 1 : 2,
			     atoi(field(r, "arp.opcode")), "%s frame %" PRIu64 ": ARP opcode",
			     run->capture, index);
		cr_assert(msg.type == DROCE_NEIGH_MSG_ARP_REQUEST ||
			  msg.type == DROCE_NEIGH_MSG_ARP_REPLY);
		EXPECT_MAC(msg.lladdr, "arp.src.hw_mac");
		EXPECT_IP(msg.src_ip, "arp.src.proto_ipv4");
		EXPECT_MAC(msg.arp_tha, "arp.dst.hw_mac");
		EXPECT_IP(msg.target, "arp.dst.proto_ipv4");
		return;
	}
	cr_assert_eq(msg.type == DROCE_NEIGH_MSG_NS ? 135 : 136, atoi(field(r, "icmpv6.type")),
		     "%s frame %" PRIu64 ": ICMPv6 type", run->capture, index);
	cr_assert_str_eq(field(r, "ipv6.hlim"), "255");
	cr_assert_str_eq(field(r, "icmpv6.code"), "0");
	cr_assert_str_eq(field(r, "icmpv6.checksum.status"), "1", "tshark: checksum bad");
	EXPECT_IP(msg.src_ip, "ipv6.src");
	EXPECT_IP(msg.dst_ip, "ipv6.dst");
	EXPECT_IP(msg.target, msg.type == DROCE_NEIGH_MSG_NS ? "icmpv6.nd.ns.target_address"
							     : "icmpv6.nd.na.target_address");
	lla = field(r, "icmpv6.opt.linkaddr");
	cr_assert_eq(msg.has_lladdr, lla[0] != '\0', "%s frame %" PRIu64 ": link-layer option",
		     run->capture, index);
	if (msg.has_lladdr)
		EXPECT_MAC(msg.lladdr, "icmpv6.opt.linkaddr");
	if (msg.type == DROCE_NEIGH_MSG_NA) {
		cr_assert_eq(!!(msg.na_flags & DROCE_ND_NA_ROUTER),
			     atoi(field(r, "icmpv6.nd.na.flag.r")));
		cr_assert_eq(!!(msg.na_flags & DROCE_ND_NA_SOLICITED),
			     atoi(field(r, "icmpv6.nd.na.flag.s")));
		cr_assert_eq(!!(msg.na_flags & DROCE_ND_NA_OVERRIDE),
			     atoi(field(r, "icmpv6.nd.na.flag.o")));
	}
}

Test(neigh_captures, decoding_matches_tshark)
{
	const char *const *c;
	unsigned int total = 0;
	int i;

	golden_load();
	for (c = droce_test_captures; *c != NULL; c++) {
		struct decode_run run = {.capture = *c};

		droce_test_pcap_foreach(*c, decode_frame, &run);
		cr_assert_gt(run.matched, 0, "%s: no ARP/ND frame", *c);
		cr_assert_gt(run.others, 0, "%s: nothing else", *c);
		total += run.matched;
	}
	for (i = 0; i < nrows; i++)
		cr_assert(rows[i].seen, "tshark row %s frame %" PRIu64 " never met", rows[i].f[0],
			  rows[i].frame);
	cr_assert_eq(total, (unsigned int)nrows);
}

/* ---- each capture replayed to a port set up as one of the Linux hosts */

struct replay {
	const char *capture;
	struct droce_neigh *n;
	int host; /* 2 or 3 */
	unsigned int replies, not_neigh, drops;
	uint64_t now;
};

static const uint8_t host_mac[4][6] = {
	[2] = {0x52, 0x54, 0, 0, 0, 2},
	[3] = {0x52, 0x54, 0, 0, 0, 3},
};

static struct droce_neigh *host_port(int host)
{
	struct droce_neigh_cfg cfg;
	struct droce_neigh *p;
	char text[64];

	droce_neigh_cfg_init(&cfg);
	memcpy(cfg.mac, host_mac[host], 6);
	droce_neigh_ip_from_ipv4(cfg.addr[0], (const uint8_t[]){10, 99, 0, (uint8_t)host});
	snprintf(text, sizeof(text), "fd00::%d", host);
	parse_ip(text, cfg.addr[1]);
	snprintf(text, sizeof(text), "fe80::5054:ff:fe00:%d", host);
	parse_ip(text, cfg.addr[2]);
	cfg.addr_count = 3;
	cr_assert_eq(droce_neigh_create(&cfg, &p), 0);
	return p;
}

static bool is_drop(enum droce_neigh_status s)
{
	return s >= DROCE_NEIGH_TRUNC_L2;
}

static void replay_frame(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct replay *rp = arg;
	struct droce_neigh_frame reply;
	struct droce_neigh_msg msg;
	uint8_t *copy = malloc(len); /* exactly the frame: over-reads are out of bounds */
	enum droce_neigh_status s;

	cr_assert_not_null(copy);
	memcpy(copy, frame, len);
	s = droce_neigh_rx(rp->n, copy, len, rp->now + index * 1000, &reply);
	free(copy);
	cr_assert_not(is_drop(s), "%s frame %" PRIu64 " dropped as %s", rp->capture, index,
		      droce_neigh_status_name[s]);
	if (s == DROCE_NEIGH_NOT_NEIGH)
		rp->not_neigh++;
	if (s != DROCE_NEIGH_REPLY) {
		cr_assert_eq(reply.len, 0);
		return;
	}
	rp->replies++;
	cr_assert_eq(droce_neigh_parse(reply.data, reply.len, &msg), DROCE_NEIGH_OK,
		     "%s frame %" PRIu64 ": our reply fails our own checks", rp->capture, index);
	cr_assert_arr_eq(msg.eth_src, host_mac[rp->host], 6);
	cr_assert(msg.type == DROCE_NEIGH_MSG_ARP_REPLY || msg.type == DROCE_NEIGH_MSG_NA);
}

/* Requests tshark saw for @p host's addresses from the other host. */
static unsigned int requests_for(const char *capture, int host)
{
	char v4[32], v6[32], ll[48], mac[32];
	unsigned int count = 0;
	int i;

	snprintf(v4, sizeof(v4), "10.99.0.%d", host);
	snprintf(v6, sizeof(v6), "fd00::%d", host);
	snprintf(ll, sizeof(ll), "fe80::5054:ff:fe00:%d", host);
	snprintf(mac, sizeof(mac), "52:54:00:00:00:%02d", host);
	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		const char *t = field(r, "icmpv6.nd.ns.target_address");

		if (strcmp(r->f[0], capture) != 0 || strcmp(field(r, "eth.src"), mac) == 0)
			continue;
		if (strcmp(field(r, "arp.opcode"), "1") == 0 &&
		    strcmp(field(r, "arp.dst.proto_ipv4"), v4) == 0)
			count++;
		if (strcmp(t, v6) == 0 || strcmp(t, ll) == 0)
			count++;
	}
	return count;
}

static void replay(const char *capture, int host)
{
	struct replay rp = {.capture = capture, .host = host, .now = 1000000};
	struct droce_neigh_info info;
	struct droce_neigh_stats st;
	uint8_t ip[16];
	uint64_t frames;

	rp.n = host_port(host);
	frames = droce_test_pcap_foreach(capture, replay_frame, &rp);
	cr_assert_eq(rp.replies, requests_for(capture, host), "%s as 10.99.0.%d: %u replies",
		     capture, host, rp.replies);
	droce_neigh_stats_get(rp.n, &st);
	cr_assert_eq(st.rx[DROCE_NEIGH_REPLY], rp.replies);
	cr_assert_eq(st.rx[DROCE_NEIGH_NOT_NEIGH], rp.not_neigh);
	cr_assert_gt(rp.not_neigh, frames / 2, "%s: RoCE and TCP are not neighbour frames",
		     capture);
	/* the server learns its asker from the ARP request; the client asked, so knows nothing */
	droce_neigh_ip_from_ipv4(ip, (const uint8_t[]){10, 99, 0, (uint8_t)(5 - host)});
	if (host == 2) {
		cr_assert_eq(droce_neigh_lookup(rp.n, ip, &info), 0, "%s: the asker not learned",
			     capture);
		cr_assert_arr_eq(info.mac, host_mac[3], 6);
		cr_assert_eq(info.state, DROCE_NEIGH_STALE);
	} else {
		cr_assert_eq(droce_neigh_lookup(rp.n, ip, &info), -ENOENT,
			     "%s: learned from an answer nobody asked for", capture);
	}
	cr_assert_leq(st.entries, 2, "%s: learned more than the other host", capture);
	droce_neigh_free(rp.n);
}

Test(neigh_captures, replayed_to_the_server)
{
	const char *const *c;

	golden_load();
	for (c = droce_test_captures; *c != NULL; c++)
		replay(*c, 2);
}

Test(neigh_captures, replayed_to_the_client)
{
	const char *const *c;

	golden_load();
	for (c = droce_test_captures; *c != NULL; c++)
		replay(*c, 3);
}

Test(neigh_captures, replies_for_every_ipv6_exchange)
{
	golden_load();
	cr_assert_eq(requests_for("linux-rxe-write_lat_v6.pcap", 2), 2, "ARP + NS for fd00::2");
	cr_assert_eq(requests_for("linux-rxe-write_lat_v6.pcap", 3), 1, "NS for fd00::3");
	cr_assert_eq(requests_for("linux-rxe-rc_pingpong.pcap", 2), 1, "ARP for 10.99.0.2");
}
