/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fault injector (lib/port/droce_fault.h) on real mbufs from a mempool:
 * every kind by exact index with the exact output sequence, every kind by rate
 * over 100k packets against a binomial bound, filters, delays released by
 * 'now', draining, duplicates freed independently, corrupted packets failing
 * droce_parse_mbuf()'s ICRC check, and the mempool back to its starting count
 * at the end of every test.
 *
 * Packets are RoCEv2 frames from droce_build_frame() whose PSN is their tag
 * (0, 1, 2, ... in the order they are offered); the tag is read back from the
 * BTH (bytes 50..53: Ethernet, IPv4 without options, UDP, then BTH word 2), so
 * frames that are not RoCEv2 (UDP port 1234) carry one too.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <droce_fault.h>
#include <droce_wire.h>
#include <droce_wire_mbuf.h>

#include "droce_test.h"

#define POOL_SIZE   8191
#define BURST       32
#define OUT_CAP     (2 * 64 + DROCE_FAULT_HOLD_DEFAULT) /* never short: droce_fault.h */
#define MAX_RESULTS 250000
#define RATE_N      100000
#define TAG_OFF     50 /* BTH word 2 (ackreq, PSN) */
#define PAYLOAD_LEN 16
#define QPN_A       0x11
#define QPN_B       0x22

static struct rte_mempool *pool;
static unsigned int pool_start;
static struct droce_parse_cfg check_cfg; /* full checks: ICRC and IP checksum */

struct result {
	uint32_t n;
	uint32_t tag[MAX_RESULTS];
	uint64_t at[MAX_RESULTS]; /* the 'now' of the call that handed it out */
};
static struct result res;

static void setup(void)
{
	droce_test_eal_init("port_fault");
	pool = rte_pktmbuf_pool_create("test_port_fault", POOL_SIZE, 0, 0,
				       RTE_PKTMBUF_HEADROOM + 512, SOCKET_ID_ANY);
	cr_assert_not_null(pool, "mempool: %s", rte_strerror(rte_errno));
	pool_start = rte_mempool_avail_count(pool);
	check_cfg = DROCE_PARSE_CFG_DEFAULT;
	res.n = 0;
}

static void teardown(void)
{
	rte_mempool_free(pool);
	droce_test_eal_fini();
}

TestSuite(port_fault, .init = setup, .fini = teardown);

/* ------------------------------------------------------------ packets */

static size_t frame_build(uint8_t *buf, size_t cap, uint32_t tag, uint8_t opcode, uint32_t dqpn,
			  uint16_t dport)
{
	struct droce_addr a = {
		.dst_mac = {2, 0, 0, 0, 0, 2},
		.src_mac = {2, 0, 0, 0, 0, 3},
		.src_ip = {10, 0, 0, 3},
		.dst_ip = {10, 0, 0, 2},
		.ttl = 64,
		.udp_sport = 0xc001,
		.udp_dport = dport,
	};
	struct droce_hdr_fields f = {.opcode = opcode,
				     .pkey = 0xffff,
				     .dqpn = dqpn,
				     .psn = tag & DROCE_PSN_MASK,
				     .reth = {.va = 0x1000, .rkey = 7, .len = PAYLOAD_LEN},
				     .aeth = {.syndrome = 0x1f, .msn = 1}};
	uint8_t payload[PAYLOAD_LEN];
	uint32_t plen = (droce_opcode_table[opcode].mask & DROCE_OPM_PAYLOAD) ? PAYLOAD_LEN : 0;
	ssize_t n;
	int i;

	for (i = 0; i < PAYLOAD_LEN; i++)
		payload[i] = (uint8_t)(tag * 31 + (uint32_t)i);
	n = droce_build_frame(buf, cap, &a, (uint16_t)tag, &f, payload, plen);
	cr_assert_gt(n, 0, "droce_build_frame: %zd", n);
	return (size_t)n;
}

static struct rte_mbuf *mk_ex(uint32_t tag, uint8_t opcode, uint32_t dqpn, uint16_t dport)
{
	uint8_t buf[256];
	size_t len = frame_build(buf, sizeof(buf), tag, opcode, dqpn, dport);
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p;

	cr_assert_not_null(m, "pool empty");
	p = rte_pktmbuf_append(m, (uint16_t)len);
	cr_assert_not_null(p);
	memcpy(p, buf, len);
	return m;
}

/* The standard packet: RC SEND Only to QPN_A. */
static struct rte_mbuf *mk(uint32_t tag)
{
	return mk_ex(tag, DROCE_OP_RC_SEND_ONLY, QPN_A, DROCE_ROCEV2_UDP_PORT);
}

/* A frame cut into segments at the given offsets. */
static struct rte_mbuf *mk_chain(uint32_t tag, const uint32_t *cuts, int ncuts)
{
	uint8_t buf[256];
	size_t len = frame_build(buf, sizeof(buf), tag, DROCE_OP_RC_SEND_ONLY, QPN_A,
				 DROCE_ROCEV2_UDP_PORT);
	struct rte_mbuf *head = NULL;
	size_t start = 0;
	int i;

	for (i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : len;
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

		cr_assert_not_null(m);
		memcpy(rte_pktmbuf_append(m, (uint16_t)(end - start)), buf + start, end - start);
		if (head == NULL)
			head = m;
		else
			cr_assert_eq(rte_pktmbuf_chain(head, m), 0);
		start = end;
	}
	return head;
}

static uint32_t tag_of(const struct rte_mbuf *m)
{
	uint8_t b[4];
	const uint8_t *p = rte_pktmbuf_read(m, TAG_OFF, 4, b);

	cr_assert_not_null(p, "packet shorter than its BTH");
	return ((uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]) & DROCE_PSN_MASK;
}

static enum droce_parse_status check(const struct rte_mbuf *m)
{
	struct droce_pkt pkt;

	return droce_parse_mbuf(m, &check_cfg, &pkt);
}

/* Record the tags of @p nb output packets and free them. */
static void take(struct rte_mbuf **out, uint16_t nb, uint64_t now)
{
	uint16_t i;

	for (i = 0; i < nb; i++) {
		cr_assert_lt(res.n, MAX_RESULTS);
		res.tag[res.n] = tag_of(out[i]);
		res.at[res.n] = now;
		res.n++;
		rte_pktmbuf_free(out[i]);
	}
}

/* Offer standard packets with tags first .. first + n - 1 in bursts of @p burst at @p now. */
static void feed(struct droce_fault *f, uint32_t first, uint32_t n, uint16_t burst, uint64_t now)
{
	struct rte_mbuf *in[64], *out[OUT_CAP];
	uint32_t t = first;

	while (t < first + n) {
		uint16_t k = (uint16_t)RTE_MIN((uint32_t)burst, first + n - t), i;

		for (i = 0; i < k; i++)
			in[i] = mk(t + i);
		take(out, droce_fault_process_burst(f, in, k, out, OUT_CAP, now), now);
		t += k;
	}
}

static void flush(struct droce_fault *f, uint64_t now)
{
	struct rte_mbuf *out[OUT_CAP];

	take(out, droce_fault_flush_burst(f, now, out, OUT_CAP), now);
}

static void drain(struct droce_fault *f)
{
	struct rte_mbuf *out[OUT_CAP];
	uint16_t nb;

	while ((nb = droce_fault_drain_burst(f, out, OUT_CAP)) > 0)
		take(out, nb, UINT64_MAX);
}

static struct droce_fault *mkf(uint32_t hold_cap, uint64_t seed)
{
	struct droce_fault_conf conf = {
		.pool = pool, .hold_cap = hold_cap, .seed = seed, .socket_id = SOCKET_ID_ANY};
	struct droce_fault *f = NULL;

	cr_assert_eq(droce_fault_create(&conf, &f), 0);
	cr_assert_not_null(f);
	return f;
}

static int add(struct droce_fault *f, const struct droce_fault_rule *r)
{
	int id = droce_fault_rule_add(f, r);

	cr_assert_geq(id, 0, "droce_fault_rule_add: %d", id);
	return id;
}

/* Free the injector and check that every mbuf is back in the pool. */
static void done(struct droce_fault *f)
{
	droce_fault_free(f);
	cr_expect_eq(rte_mempool_avail_count(pool), pool_start, "mbuf leak: %u of %u in the pool",
		     rte_mempool_avail_count(pool), pool_start);
}

static void expect_tags(const uint32_t *want, uint32_t n)
{
	uint32_t i;

	cr_expect_eq(res.n, n, "%u packets out, expected %u", res.n, n);
	for (i = 0; i < RTE_MIN(res.n, n); i++)
		cr_expect_eq(res.tag[i], want[i], "output %u is tag %u, expected %u", i, res.tag[i],
			     want[i]);
}

static struct droce_fault_stats stats(const struct droce_fault *f)
{
	struct droce_fault_stats st;

	droce_fault_stats_get(f, &st);
	return st;
}

/* ------------------------------------------------------------ drop */

Test(port_fault, no_rules_passes_everything_in_order)
{
	struct droce_fault *f = mkf(0, 1);
	uint32_t want[100], i;

	for (i = 0; i < 100; i++)
		want[i] = i;
	feed(f, 0, 100, BURST, 0);
	expect_tags(want, 100);
	cr_expect_eq(stats(f).rx_pkts, 100);
	cr_expect_eq(stats(f).tx_pkts, 100);
	done(f);
}

Test(port_fault, drop_by_index)
{
	static const struct droce_fault_range r[] = {{3, 3}, {7, 7}, {100, 105}};
	struct droce_fault *f = mkf(0, 1);
	uint32_t want[120], n = 0, i;
	int id = add(f, &(struct droce_fault_rule){
				.kind = DROCE_FAULT_DROP, .ranges = r, .nb_ranges = RTE_DIM(r)});
	struct droce_fault_rule_stats rs;

	for (i = 0; i < 120; i++)
		if (i != 3 && i != 7 && !(i >= 100 && i <= 105))
			want[n++] = i;
	feed(f, 0, 120, 7, 0);
	expect_tags(want, n);
	cr_expect_eq(stats(f).injected[DROCE_FAULT_DROP], 8);
	cr_expect_eq(stats(f).rx_pkts, 120);
	cr_expect_eq(stats(f).tx_pkts, 112);
	cr_assert_eq(droce_fault_rule_stats_get(f, id, &rs), 0);
	cr_expect_eq(rs.matched, 120);
	cr_expect_eq(rs.selected, 8);
	done(f);
}

Test(port_fault, index_counts_from_when_the_rule_was_added)
{
	static const struct droce_fault_range r[] = {{0, 1}};
	struct droce_fault *f = mkf(0, 1);
	uint32_t want[18], n = 0, i;

	feed(f, 0, 10, BURST, 0);
	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DROP, .ranges = r, .nb_ranges = 1});
	feed(f, 10, 10, BURST, 0);
	for (i = 0; i < 20; i++)
		if (i != 10 && i != 11)
			want[n++] = i;
	expect_tags(want, n);
	done(f);
}

Test(port_fault, rule_del_and_clear_stop_the_faults)
{
	static const struct droce_fault_range r[] = {{0, 1000}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule_stats rs;
	int a, b;

	a = add(f,
		&(struct droce_fault_rule){.kind = DROCE_FAULT_DROP, .ranges = r, .nb_ranges = 1});
	b = add(f,
		&(struct droce_fault_rule){.kind = DROCE_FAULT_DUP, .ranges = r, .nb_ranges = 1});
	cr_expect_neq(a, b);
	feed(f, 0, 5, BURST, 0);
	cr_expect_eq(res.n, 0, "all dropped");
	cr_expect_eq(droce_fault_rule_del(f, a), 0);
	cr_expect_eq(droce_fault_rule_del(f, a), -ENOENT);
	cr_expect_eq(droce_fault_rule_stats_get(f, a, &rs), -ENOENT);
	feed(f, 5, 2, BURST, 0);
	expect_tags((const uint32_t[]){5, 5, 6, 6}, 4);
	droce_fault_rule_clear(f);
	cr_expect_eq(droce_fault_rule_stats_get(f, b, &rs), -ENOENT);
	feed(f, 7, 2, BURST, 0);
	expect_tags((const uint32_t[]){5, 5, 6, 6, 7, 8}, 6);
	done(f);
}

/* ------------------------------------------------------------ duplicate */

Test(port_fault, duplicate_by_index)
{
	static const struct droce_fault_range r[] = {{0, 0}, {5, 6}};
	struct droce_fault *f = mkf(0, 1);

	add(f, &(struct droce_fault_rule){
		       .kind = DROCE_FAULT_DUP, .ranges = r, .nb_ranges = RTE_DIM(r)});
	feed(f, 0, 10, 4, 0);
	expect_tags((const uint32_t[]){0, 0, 1, 2, 3, 4, 5, 5, 6, 6, 7, 8, 9}, 13);
	cr_expect_eq(stats(f).injected[DROCE_FAULT_DUP], 3);
	cr_expect_eq(stats(f).tx_pkts, 13);
	done(f);
}

/* Process one standard packet through an injector that duplicates it; out[0] original. */
static void dup_one(struct droce_fault *f, struct rte_mbuf **out)
{
	static const struct droce_fault_range r[] = {{0, 0}};
	struct rte_mbuf *in = mk(42);

	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DUP, .ranges = r, .nb_ranges = 1});
	cr_assert_eq(droce_fault_process_burst(f, &in, 1, out, 2, 0), 2);
	cr_assert_eq(out[0], in, "the original leaves first");
	cr_assert_neq(out[1], in, "the duplicate is another mbuf");
}

static void expect_same_bytes(const struct rte_mbuf *a, const struct rte_mbuf *b)
{
	uint8_t x[256], y[256];

	cr_assert_eq(a->pkt_len, b->pkt_len);
	cr_expect_eq(memcmp(rte_pktmbuf_read(a, 0, a->pkt_len, x),
			    rte_pktmbuf_read(b, 0, b->pkt_len, y), a->pkt_len),
		     0, "bytes differ");
}

Test(port_fault, duplicate_is_a_deep_copy_freed_original_first)
{
	struct droce_fault *f = mkf(0, 1);
	struct rte_mbuf *out[2], *ref = mk(42);

	dup_one(f, out);
	cr_expect_neq(out[0]->buf_addr, out[1]->buf_addr, "data buffers shared");
	cr_expect(RTE_MBUF_DIRECT(out[1]));
	cr_expect_eq(rte_mbuf_refcnt_read(out[0]), 1);
	cr_expect_eq(rte_mbuf_refcnt_read(out[1]), 1);
	cr_expect_eq(out[0]->pool, pool);
	cr_expect_eq(out[1]->pool, pool);
	rte_pktmbuf_free(out[0]);
	/* the copy outlives the original, byte for byte, and is writable on its own */
	expect_same_bytes(out[1], ref);
	cr_expect_eq(check(out[1]), DROCE_PARSE_OK);
	*rte_pktmbuf_mtod_offset(out[1], uint8_t *, 60) ^= 0xff;
	cr_expect_eq(check(out[1]), DROCE_PARSE_BAD_ICRC);
	rte_pktmbuf_free(out[1]);
	rte_pktmbuf_free(ref);
	done(f);
}

Test(port_fault, duplicate_is_a_deep_copy_freed_duplicate_first)
{
	struct droce_fault *f = mkf(0, 1);
	struct rte_mbuf *out[2], *ref = mk(42);

	dup_one(f, out);
	*rte_pktmbuf_mtod_offset(out[1], uint8_t *, 60) ^= 0xff;
	rte_pktmbuf_free(out[1]);
	expect_same_bytes(out[0], ref);
	cr_expect_eq(check(out[0]), DROCE_PARSE_OK, "the original saw the write to the copy");
	rte_pktmbuf_free(out[0]);
	rte_pktmbuf_free(ref);
	done(f);
}

Test(port_fault, duplicate_of_a_chain)
{
	static const struct droce_fault_range r[] = {{0, 0}};
	static const uint32_t cuts[] = {40, 60};
	struct droce_fault *f = mkf(0, 1);
	struct rte_mbuf *in = mk_chain(7, cuts, 2), *out[2];

	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DUP, .ranges = r, .nb_ranges = 1});
	cr_assert_eq(droce_fault_process_burst(f, &in, 1, out, 2, 0), 2);
	expect_same_bytes(out[0], out[1]);
	rte_pktmbuf_free(out[0]);
	cr_expect_eq(check(out[1]), DROCE_PARSE_OK);
	rte_pktmbuf_free(out[1]);
	done(f);
}

Test(port_fault, duplicate_needs_room_in_the_output)
{
	static const struct droce_fault_range r[] = {{0, 100}};
	struct droce_fault *f = mkf(0, 1);
	struct rte_mbuf *in[4], *out[8];
	uint16_t i, nb;

	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DUP, .ranges = r, .nb_ranges = 1});
	for (i = 0; i < 4; i++)
		in[i] = mk(i);
	/* cap == n: every input keeps its slot, no duplicate fits */
	nb = droce_fault_process_burst(f, in, 4, out, 4, 0);
	take(out, nb, 0);
	expect_tags((const uint32_t[]){0, 1, 2, 3}, 4);
	cr_expect_eq(stats(f).dup_no_room, 4);
	/* two spare slots: the first two get their copy */
	for (i = 0; i < 4; i++)
		in[i] = mk(10 + i);
	nb = droce_fault_process_burst(f, in, 4, out, 6, 0);
	take(out, nb, 0);
	expect_tags((const uint32_t[]){0, 1, 2, 3, 10, 10, 11, 11, 12, 13}, 10);
	cr_expect_eq(stats(f).dup_no_room, 6);
	cr_expect_eq(stats(f).injected[DROCE_FAULT_DUP], 2);
	done(f);
}

Test(port_fault, inputs_beyond_cap_are_not_touched)
{
	struct droce_fault *f = mkf(0, 1);
	struct rte_mbuf *in[6], *out[3];
	uint16_t i;

	for (i = 0; i < 6; i++)
		in[i] = mk(i);
	cr_expect_eq(droce_fault_process_burst(f, in, 6, out, 3, 0), 3);
	take(out, 3, 0);
	expect_tags((const uint32_t[]){0, 1, 2}, 3);
	cr_expect_eq(stats(f).rx_pkts, 3);
	for (i = 3; i < 6; i++) {
		cr_expect_eq(tag_of(in[i]), i);
		rte_pktmbuf_free(in[i]);
	}
	done(f);
}

/* ------------------------------------------------------------ reorder */

static struct droce_fault_rule reorder_rule(const struct droce_fault_range *r, uint16_t nb,
					    uint32_t after)
{
	return (struct droce_fault_rule){
		.kind = DROCE_FAULT_REORDER, .ranges = r, .nb_ranges = nb, .reorder.after = after};
}

Test(port_fault, reorder_hold_back_after_three_one_burst)
{
	static const struct droce_fault_range r[] = {{2, 2}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = reorder_rule(r, 1, 3);

	add(f, &rule);
	feed(f, 0, 10, 10, 0);
	expect_tags((const uint32_t[]){0, 1, 3, 4, 5, 2, 6, 7, 8, 9}, 10);
	cr_expect_eq(stats(f).injected[DROCE_FAULT_REORDER], 1);
	cr_expect_eq(droce_fault_held_count(f), 0);
	done(f);
}

Test(port_fault, reorder_hold_back_after_three_across_bursts)
{
	static const struct droce_fault_range r[] = {{2, 2}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = reorder_rule(r, 1, 3);

	add(f, &rule);
	feed(f, 0, 10, 1, 0);
	expect_tags((const uint32_t[]){0, 1, 3, 4, 5, 2, 6, 7, 8, 9}, 10);
	done(f);
}

Test(port_fault, reorder_swap_adjacent)
{
	static const struct droce_fault_range r[] = {{4, 4}, {8, 8}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = reorder_rule(r, 2, 1);

	add(f, &rule);
	feed(f, 0, 10, 3, 0);
	expect_tags((const uint32_t[]){0, 1, 2, 3, 5, 4, 6, 7, 9, 8}, 10);
	done(f);
}

Test(port_fault, reorder_two_held_leave_in_arrival_order)
{
	static const struct droce_fault_range r[] = {{2, 3}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = reorder_rule(r, 1, 2);

	add(f, &rule);
	feed(f, 0, 8, 8, 0);
	/* 2 and 3 both wait for two later packets (4, 5), then leave oldest first */
	expect_tags((const uint32_t[]){0, 1, 4, 5, 2, 3, 6, 7}, 8);
	done(f);
}

Test(port_fault, reorder_dropped_packets_do_not_count)
{
	static const struct droce_fault_range hold[] = {{1, 1}}, gone[] = {{2, 3}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = reorder_rule(hold, 1, 2);

	add(f, &rule);
	add(f,
	    &(struct droce_fault_rule){.kind = DROCE_FAULT_DROP, .ranges = gone, .nb_ranges = 1});
	feed(f, 0, 8, 8, 0);
	/* 1 waits for two packets that leave: 2 and 3 are dropped, so 4 and 5 */
	expect_tags((const uint32_t[]){0, 4, 5, 1, 6, 7}, 6);
	done(f);
}

Test(port_fault, reorder_tail_leaves_at_max_ticks)
{
	static const struct droce_fault_range r[] = {{4, 4}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = reorder_rule(r, 1, 3);

	rule.reorder.max_ticks = 50;
	add(f, &rule);
	feed(f, 0, 5, 5, 1000);
	expect_tags((const uint32_t[]){0, 1, 2, 3}, 4);
	flush(f, 1049);
	cr_expect_eq(res.n, 4, "released before max_ticks");
	flush(f, 1050);
	expect_tags((const uint32_t[]){0, 1, 2, 3, 4}, 5);
	cr_expect_eq(stats(f).reorder_timeout, 1);
	done(f);
}

Test(port_fault, reorder_tail_without_max_ticks_waits_for_drain)
{
	static const struct droce_fault_range r[] = {{4, 4}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = reorder_rule(r, 1, 3);

	add(f, &rule);
	feed(f, 0, 5, 5, 0);
	flush(f, UINT64_MAX - 1);
	expect_tags((const uint32_t[]){0, 1, 2, 3}, 4);
	cr_expect_eq(droce_fault_held_count(f), 1);
	drain(f);
	expect_tags((const uint32_t[]){0, 1, 2, 3, 4}, 5);
	cr_expect_eq(droce_fault_held_count(f), 0);
	done(f);
}

Test(port_fault, reorder_rule_deleted_while_holding)
{
	static const struct droce_fault_range r[] = {{1, 1}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = reorder_rule(r, 1, 2);
	int id = add(f, &rule);

	feed(f, 0, 2, 2, 0);
	cr_expect_eq(droce_fault_rule_del(f, id), 0);
	feed(f, 2, 3, 3, 0);
	expect_tags((const uint32_t[]){0, 2, 3, 1, 4}, 5);
	done(f);
}

/* ------------------------------------------------------------ delay */

Test(port_fault, delay_by_index_released_by_now)
{
	static const struct droce_fault_range r[] = {{1, 1}, {3, 3}};
	struct droce_fault *f = mkf(0, 1);

	add(f, &(struct droce_fault_rule){
		       .kind = DROCE_FAULT_DELAY, .ranges = r, .nb_ranges = 2, .delay.ticks = 100});
	feed(f, 0, 6, 6, 10);
	expect_tags((const uint32_t[]){0, 2, 4, 5}, 4);
	cr_expect_eq(droce_fault_held_count(f), 2);
	flush(f, 109);
	cr_expect_eq(res.n, 4, "released before its time");
	flush(f, 110);
	expect_tags((const uint32_t[]){0, 2, 4, 5, 1, 3}, 6);
	cr_expect_eq(res.at[4], 110);
	cr_expect_eq(stats(f).injected[DROCE_FAULT_DELAY], 2);
	cr_expect_eq(stats(f).held, 2);
	cr_expect_eq(stats(f).released, 2);
	done(f);
}

Test(port_fault, delay_due_packets_leave_before_the_next_burst)
{
	static const struct droce_fault_range r[] = {{0, 0}, {2, 2}};
	struct droce_fault *f = mkf(0, 1);

	add(f, &(struct droce_fault_rule){
		       .kind = DROCE_FAULT_DELAY, .ranges = r, .nb_ranges = 2, .delay.ticks = 5});
	feed(f, 0, 2, 2, 0); /* 0 held until 5 */
	feed(f, 2, 2, 2, 3); /* 2 held until 8 */
	feed(f, 4, 2, 2, 5); /* 0 is due: it leaves ahead of 4, 5 */
	feed(f, 6, 2, 2, 9); /* 2 is due */
	expect_tags((const uint32_t[]){1, 3, 0, 4, 5, 2, 6, 7}, 8);
	done(f);
}

Test(port_fault, delay_different_times_leave_by_time)
{
	static const struct droce_fault_range r1[] = {{0, 0}}, r2[] = {{1, 1}};
	struct droce_fault *f = mkf(0, 1);

	add(f, &(struct droce_fault_rule){
		       .kind = DROCE_FAULT_DELAY, .ranges = r1, .nb_ranges = 1, .delay.ticks = 20});
	add(f, &(struct droce_fault_rule){
		       .kind = DROCE_FAULT_DELAY, .ranges = r2, .nb_ranges = 1, .delay.ticks = 10});
	feed(f, 0, 3, 3, 0);
	flush(f, 10);
	flush(f, 20);
	expect_tags((const uint32_t[]){2, 1, 0}, 3);
	cr_expect_eq(res.at[1], 10);
	cr_expect_eq(res.at[2], 20);
	done(f);
}

Test(port_fault, delay_release_waits_for_room)
{
	static const struct droce_fault_range r[] = {{0, 4}};
	struct droce_fault *f = mkf(0, 1);
	struct rte_mbuf *out[2];

	add(f, &(struct droce_fault_rule){
		       .kind = DROCE_FAULT_DELAY, .ranges = r, .nb_ranges = 1, .delay.ticks = 1});
	feed(f, 0, 5, 5, 0);
	take(out, droce_fault_flush_burst(f, 1, out, 2), 1);
	take(out, droce_fault_flush_burst(f, 1, out, 2), 1);
	take(out, droce_fault_flush_burst(f, 1, out, 2), 1);
	expect_tags((const uint32_t[]){0, 1, 2, 3, 4}, 5);
	cr_expect_gt(stats(f).release_deferred, 0);
	cr_expect_eq(droce_fault_held_count(f), 0);
	done(f);
}

Test(port_fault, hold_queue_full_releases_the_oldest_early)
{
	static const struct droce_fault_range r[] = {{0, 9}};
	struct droce_fault *f = mkf(4, 1);

	add(f,
	    &(struct droce_fault_rule){
		    .kind = DROCE_FAULT_DELAY, .ranges = r, .nb_ranges = 1, .delay.ticks = 1000});
	feed(f, 0, 10, 3, 0);
	expect_tags((const uint32_t[]){0, 1, 2, 3, 4, 5}, 6);
	cr_expect_eq(stats(f).hold_full, 6);
	cr_expect_eq(droce_fault_held_count(f), 4);
	drain(f);
	expect_tags((const uint32_t[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10);
	done(f);
}

/* ------------------------------------------------------------ drain and free */

Test(port_fault, drain_releases_everything_in_small_steps)
{
	static const struct droce_fault_range d[] = {{0, 4}}, o[] = {{5, 9}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = reorder_rule(o, 1, 1000);
	struct rte_mbuf *out[3];
	uint16_t nb;

	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DELAY,
					  .ranges = d,
					  .nb_ranges = 1,
					  .delay.ticks = UINT64_MAX});
	add(f, &rule);
	feed(f, 0, 12, 12, 5);
	expect_tags((const uint32_t[]){10, 11}, 2);
	cr_expect_eq(droce_fault_held_count(f), 10);
	while ((nb = droce_fault_drain_burst(f, out, RTE_DIM(out))) > 0) {
		cr_expect_leq(nb, 3);
		take(out, nb, 0);
	}
	expect_tags((const uint32_t[]){10, 11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 12);
	cr_expect_eq(droce_fault_held_count(f), 0);
	cr_expect_eq(stats(f).released, 10);
	done(f);
}

Test(port_fault, free_releases_held_packets)
{
	static const struct droce_fault_range r[] = {{0, 49}};
	struct droce_fault *f = mkf(0, 1);

	add(f, &(struct droce_fault_rule){
		       .kind = DROCE_FAULT_DELAY, .ranges = r, .nb_ranges = 1, .delay.ticks = 9});
	feed(f, 0, 50, BURST, 0);
	cr_expect_eq(droce_fault_held_count(f), 50);
	cr_expect_eq(rte_mempool_avail_count(pool), pool_start - 50);
	done(f); /* checks the pool is full again */
}

/* ------------------------------------------------------------ corrupt */

/* Bits that differ between two packets of equal length; *first_off the first differing byte. */
static unsigned int bit_diff(const struct rte_mbuf *a, const struct rte_mbuf *b,
			     uint32_t *first_off)
{
	uint8_t x[256], y[256];
	const uint8_t *p = rte_pktmbuf_read(a, 0, a->pkt_len, x);
	const uint8_t *q = rte_pktmbuf_read(b, 0, b->pkt_len, y);
	unsigned int bits = 0;
	uint32_t i;

	cr_assert_eq(a->pkt_len, b->pkt_len);
	*first_off = UINT32_MAX;
	for (i = 0; i < a->pkt_len; i++) {
		if (p[i] != q[i] && *first_off == UINT32_MAX)
			*first_off = i;
		bits += (unsigned int)__builtin_popcount(p[i] ^ q[i]);
	}
	return bits;
}

static struct droce_fault_rule corrupt_rule(const struct droce_fault_range *r, uint16_t nb,
					    enum droce_fault_region region, uint32_t off,
					    uint8_t bit)
{
	return (struct droce_fault_rule){.kind = DROCE_FAULT_CORRUPT,
					 .ranges = r,
					 .nb_ranges = nb,
					 .corrupt = {.region = region, .offset = off, .bit = bit}};
}

Test(port_fault, corrupt_by_index_fails_the_icrc)
{
	static const struct droce_fault_range r[] = {{2, 2}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = corrupt_rule(r, 1, DROCE_FAULT_REGION_ICRC, 3, 5);
	struct rte_mbuf *in[5], *out[10], *ref;
	struct droce_pkt pkt;
	uint32_t off;
	uint16_t i, nb;

	add(f, &rule);
	for (i = 0; i < 5; i++)
		in[i] = mk(i);
	nb = droce_fault_process_burst(f, in, 5, out, RTE_DIM(out), 0);
	cr_assert_eq(nb, 5);
	for (i = 0; i < 5; i++) {
		cr_expect_eq(tag_of(out[i]), i);
		cr_expect_eq(check(out[i]), i == 2 ? DROCE_PARSE_BAD_ICRC : DROCE_PARSE_OK,
			     "packet %u", i);
	}
	/* exactly bit 5 of the payload's byte 3 */
	ref = mk(2);
	cr_assert_eq(droce_parse_mbuf(ref, &check_cfg, &pkt), DROCE_PARSE_OK);
	cr_expect_eq(bit_diff(out[2], ref, &off), 1);
	cr_expect_eq(off, pkt.payload_off + 3u);
	cr_expect_eq(*rte_pktmbuf_mtod_offset(out[2], uint8_t *, off) ^
			     *rte_pktmbuf_mtod_offset(ref, uint8_t *, off),
		     1 << 5);
	cr_expect_eq(stats(f).injected[DROCE_FAULT_CORRUPT], 1);
	rte_pktmbuf_free(ref);
	for (i = 0; i < 5; i++)
		rte_pktmbuf_free(out[i]);
	done(f);
}

/* Corrupt @p n packets at rate 1 with a random offset and bit; check each, count offsets. */
static void corrupt_random(enum droce_fault_region region, uint32_t n, uint32_t *hits_off,
			   uint32_t *hits_bit, uint32_t *len_out)
{
	struct droce_fault *f = mkf(0, 7);
	struct droce_fault_rule rule =
		corrupt_rule(NULL, 0, region, DROCE_FAULT_OFFSET_RANDOM, DROCE_FAULT_BIT_RANDOM);
	uint32_t t;

	rule.rate = 1.0;
	add(f, &rule);
	for (t = 0; t < n; t++) {
		struct rte_mbuf *in = mk(t), *out, *ref = mk(t);
		struct droce_pkt pkt;
		uint32_t foff, roff;
		uint8_t x;

		cr_assert_eq(droce_fault_process_burst(f, &in, 1, &out, 1, 0), 1);
		cr_assert_eq(droce_parse_mbuf(ref, &check_cfg, &pkt), DROCE_PARSE_OK);
		cr_assert_eq(bit_diff(out, ref, &foff), 1, "packet %u: not one bit", t);
		x = *rte_pktmbuf_mtod_offset(out, uint8_t *, foff) ^
		    *rte_pktmbuf_mtod_offset(ref, uint8_t *, foff);
		roff = foff;
		if (region == DROCE_FAULT_REGION_ICRC) {
			cr_expect_geq(foff, pkt.payload_off);
			cr_expect_lt(foff, pkt.icrc_off + 4u);
			cr_expect_eq(check(out), DROCE_PARSE_BAD_ICRC, "packet %u, byte %u", t,
				     foff);
			roff = foff - pkt.payload_off;
		}
		hits_off[roff]++;
		hits_bit[__builtin_ctz(x)]++;
		*len_out = region == DROCE_FAULT_REGION_ICRC ? pkt.icrc_off + 4u - pkt.payload_off
							     : ref->pkt_len;
		rte_pktmbuf_free(out);
		rte_pktmbuf_free(ref);
	}
	cr_expect_eq(stats(f).injected[DROCE_FAULT_CORRUPT], n);
	done(f);
}

Test(port_fault, corrupt_random_in_icrc_region_always_fails_the_icrc)
{
	uint32_t off[256] = {0}, bit[8] = {0}, len = 0, i;

	corrupt_random(DROCE_FAULT_REGION_ICRC, 2000, off, bit, &len);
	cr_expect_eq(len, PAYLOAD_LEN + DROCE_ICRC_LEN);
	for (i = 0; i < len; i++)
		cr_expect_gt(off[i], 0, "region byte %u never hit", i);
	for (i = 0; i < 8; i++)
		cr_expect_gt(bit[i], 0, "bit %u never hit", i);
}

Test(port_fault, corrupt_random_anywhere_covers_the_frame)
{
	uint32_t off[256] = {0}, bit[8] = {0}, len = 0, i;

	corrupt_random(DROCE_FAULT_REGION_ANY, 4000, off, bit, &len);
	cr_expect_eq(len, 14 + 20 + 8 + 12 + PAYLOAD_LEN + DROCE_ICRC_LEN);
	for (i = 0; i < len; i++)
		cr_expect_gt(off[i], 0, "frame byte %u never hit", i);
	for (i = 0; i < 8; i++)
		cr_expect_gt(bit[i], 0, "bit %u never hit", i);
}

Test(port_fault, corrupt_anywhere_fixed_offset_in_the_ip_header)
{
	static const struct droce_fault_range r[] = {{0, 0}};
	struct droce_fault *f = mkf(0, 1);
	/* byte 22: the IPv4 TTL */
	struct droce_fault_rule rule = corrupt_rule(r, 1, DROCE_FAULT_REGION_ANY, 22, 0);
	struct rte_mbuf *in = mk(0), *out;

	add(f, &rule);
	cr_assert_eq(droce_fault_process_burst(f, &in, 1, &out, 1, 0), 1);
	cr_expect_eq(*rte_pktmbuf_mtod_offset(out, uint8_t *, 22), 65);
	cr_expect_eq(check(out), DROCE_PARSE_BAD_IP_CSUM);
	rte_pktmbuf_free(out);
	done(f);
}

Test(port_fault, corrupt_offset_beyond_the_region_is_skipped)
{
	static const struct droce_fault_range r[] = {{0, 0}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule =
		corrupt_rule(r, 1, DROCE_FAULT_REGION_ICRC, PAYLOAD_LEN + DROCE_ICRC_LEN, 0);
	struct rte_mbuf *in = mk(0), *out;

	add(f, &rule);
	cr_assert_eq(droce_fault_process_burst(f, &in, 1, &out, 1, 0), 1);
	cr_expect_eq(check(out), DROCE_PARSE_OK);
	cr_expect_eq(stats(f).corrupt_skipped, 1);
	cr_expect_eq(stats(f).injected[DROCE_FAULT_CORRUPT], 0);
	rte_pktmbuf_free(out);
	done(f);
}

Test(port_fault, corrupt_last_segment_of_a_chain)
{
	static const struct droce_fault_range r[] = {{0, 0}};
	static const uint32_t cuts[] = {30, 60};
	struct droce_fault *f = mkf(0, 1);
	/* the last byte of the ICRC, in the third segment */
	struct droce_fault_rule rule =
		corrupt_rule(r, 1, DROCE_FAULT_REGION_ICRC, PAYLOAD_LEN + DROCE_ICRC_LEN - 1, 7);
	struct rte_mbuf *in = mk_chain(0, cuts, 2), *out, *ref = mk(0);
	uint32_t off;

	add(f, &rule);
	cr_assert_eq(droce_fault_process_burst(f, &in, 1, &out, 1, 0), 1);
	cr_expect_eq(out, in, "a private chain is corrupted in place");
	cr_expect_eq(check(out), DROCE_PARSE_BAD_ICRC);
	cr_expect_eq(bit_diff(out, ref, &off), 1);
	cr_expect_eq(off, ref->pkt_len - 1);
	rte_pktmbuf_free(out);
	rte_pktmbuf_free(ref);
	done(f);
}

Test(port_fault, corrupt_shared_packet_copies_first)
{
	static const struct droce_fault_range r[] = {{0, 0}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = corrupt_rule(r, 1, DROCE_FAULT_REGION_ICRC, 0, 0);
	struct rte_mbuf *in = mk(0), *out;

	add(f, &rule);
	rte_mbuf_refcnt_update(in, 1); /* a retransmit queue still holds it */
	cr_assert_eq(droce_fault_process_burst(f, &in, 1, &out, 1, 0), 1);
	cr_expect_neq(out, in);
	cr_expect_eq(check(out), DROCE_PARSE_BAD_ICRC);
	cr_expect_eq(check(in), DROCE_PARSE_OK, "the other holder saw the corruption");
	cr_expect_eq(rte_mbuf_refcnt_read(in), 1, "the injector's reference was not dropped");
	cr_expect_eq(stats(f).corrupt_cow, 1);
	rte_pktmbuf_free(out);
	rte_pktmbuf_free(in);
	done(f);
}

Test(port_fault, corrupt_chain_with_a_shared_head_copies_first)
{
	static const struct droce_fault_range r[] = {{0, 0}};
	static const uint32_t cuts[] = {60};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = corrupt_rule(r, 1, DROCE_FAULT_REGION_ICRC, 10, 2);
	struct rte_mbuf *in = mk_chain(0, cuts, 1), *out;

	add(f, &rule);
	/* only the head is shared: the byte lies in the second segment, which is not */
	rte_mbuf_refcnt_update(in, 1);
	cr_assert_eq(droce_fault_process_burst(f, &in, 1, &out, 1, 0), 1);
	cr_expect_neq(out, in);
	cr_expect_eq(check(out), DROCE_PARSE_BAD_ICRC);
	cr_expect_eq(check(in), DROCE_PARSE_OK, "the other holder saw the corruption");
	cr_expect_eq(stats(f).corrupt_cow, 1);
	rte_pktmbuf_free(out);
	rte_pktmbuf_free(in);
	done(f);
}

Test(port_fault, corrupt_clone_leaves_the_original_intact)
{
	static const struct droce_fault_range r[] = {{0, 0}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = corrupt_rule(r, 1, DROCE_FAULT_REGION_ICRC, 5, 1);
	struct rte_mbuf *orig = mk(0), *in = rte_pktmbuf_clone(orig, pool), *out;

	cr_assert_not_null(in);
	cr_assert(RTE_MBUF_CLONED(in));
	add(f, &rule);
	cr_assert_eq(droce_fault_process_burst(f, &in, 1, &out, 1, 0), 1);
	cr_expect_eq(check(out), DROCE_PARSE_BAD_ICRC);
	cr_expect_eq(check(orig), DROCE_PARSE_OK);
	rte_pktmbuf_free(out);
	rte_pktmbuf_free(orig);
	done(f);
}

Test(port_fault, duplicate_and_corrupt_corrupt_only_the_original)
{
	static const struct droce_fault_range r[] = {{1, 1}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = corrupt_rule(r, 1, DROCE_FAULT_REGION_ICRC, 0, 0);
	struct rte_mbuf *in[3], *out[6];
	uint16_t i;

	add(f, &rule);
	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DUP, .ranges = r, .nb_ranges = 1});
	for (i = 0; i < 3; i++)
		in[i] = mk(i);
	cr_assert_eq(droce_fault_process_burst(f, in, 3, out, 6, 0), 4);
	cr_expect_eq(tag_of(out[1]), 1);
	cr_expect_eq(tag_of(out[2]), 1);
	cr_expect_eq(check(out[1]), DROCE_PARSE_BAD_ICRC);
	cr_expect_eq(check(out[2]), DROCE_PARSE_OK, "the duplicate was taken before corruption");
	for (i = 0; i < 4; i++)
		rte_pktmbuf_free(out[i]);
	done(f);
}

/* ------------------------------------------------------------ filters */

/* Offer a mixed stream: packet t is built by @p make. */
static void feed_mixed(struct droce_fault *f, uint32_t n, struct rte_mbuf *(*make)(uint32_t))
{
	struct rte_mbuf *in[BURST], *out[OUT_CAP];
	uint32_t t = 0;

	while (t < n) {
		uint16_t k = (uint16_t)RTE_MIN((uint32_t)BURST, n - t), i;

		for (i = 0; i < k; i++)
			in[i] = make(t + i);
		take(out, droce_fault_process_burst(f, in, k, out, OUT_CAP, 0), 0);
		t += k;
	}
}

/* Even tags: RC SEND Only; odd tags: RC ACK. */
static struct rte_mbuf *mk_send_or_ack(uint32_t t)
{
	return mk_ex(t, t % 2 ? DROCE_OP_RC_ACK : DROCE_OP_RC_SEND_ONLY, QPN_A,
		     DROCE_ROCEV2_UDP_PORT);
}

/* Tags divisible by 3 go to QPN_B. */
static struct rte_mbuf *mk_two_qps(uint32_t t)
{
	return mk_ex(t, DROCE_OP_RC_WRITE_ONLY, t % 3 == 0 ? QPN_B : QPN_A, DROCE_ROCEV2_UDP_PORT);
}

/* Odd tags are plain UDP to port 1234: not RoCEv2. */
static struct rte_mbuf *mk_roce_or_not(uint32_t t)
{
	return mk_ex(t, DROCE_OP_RC_SEND_ONLY, QPN_A, t % 2 ? 1234 : DROCE_ROCEV2_UDP_PORT);
}

Test(port_fault, filter_by_opcode)
{
	static const struct droce_fault_range r[] = {{1, 2}};
	struct droce_fault *f = mkf(0, 1);
	int id = add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DROP,
						   .match = DROCE_FAULT_MATCH_OPCODE,
						   .opcode = DROCE_OP_RC_ACK,
						   .ranges = r,
						   .nb_ranges = 1});
	struct droce_fault_rule_stats rs;

	feed_mixed(f, 10, mk_send_or_ack);
	/* the ACKs are 1, 3, 5, 7, 9: the second and third are dropped */
	expect_tags((const uint32_t[]){0, 1, 2, 4, 6, 7, 8, 9}, 8);
	cr_assert_eq(droce_fault_rule_stats_get(f, id, &rs), 0);
	cr_expect_eq(rs.matched, 5);
	cr_expect_eq(rs.selected, 2);
	done(f);
}

Test(port_fault, filter_by_destination_qpn)
{
	static const struct droce_fault_range r[] = {{0, 0}, {2, 2}};
	struct droce_fault *f = mkf(0, 1);

	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DUP,
					  .match = DROCE_FAULT_MATCH_QPN,
					  .dqpn = QPN_B,
					  .ranges = r,
					  .nb_ranges = 2});
	feed_mixed(f, 10, mk_two_qps);
	/* QPN_B gets 0, 3, 6, 9: the first and third are duplicated */
	expect_tags((const uint32_t[]){0, 0, 1, 2, 3, 4, 5, 6, 6, 7, 8, 9}, 12);
	done(f);
}

Test(port_fault, filter_by_opcode_and_qpn)
{
	static const struct droce_fault_range r[] = {{1, 1}};
	struct droce_fault *f = mkf(0, 1);

	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DROP,
					  .match = DROCE_FAULT_MATCH_OPCODE | DROCE_FAULT_MATCH_QPN,
					  .opcode = DROCE_OP_RC_WRITE_ONLY,
					  .dqpn = QPN_A,
					  .ranges = r,
					  .nb_ranges = 1});
	feed_mixed(f, 6, mk_two_qps);
	/* WRITE Only to QPN_A: 1, 2, 4, 5: the second is dropped */
	expect_tags((const uint32_t[]){0, 1, 3, 4, 5}, 5);
	done(f);
}

Test(port_fault, filter_roce_only)
{
	static const struct droce_fault_range r[] = {{0, 1}};
	struct droce_fault *f = mkf(0, 1);

	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DROP,
					  .match = DROCE_FAULT_MATCH_ROCE,
					  .ranges = r,
					  .nb_ranges = 1});
	feed_mixed(f, 8, mk_roce_or_not);
	/* RoCE: 0, 2, 4, 6; the first two are dropped, the UDP frames pass */
	expect_tags((const uint32_t[]){1, 3, 4, 5, 6, 7}, 6);
	done(f);
}

Test(port_fault, no_filter_matches_every_frame)
{
	static const struct droce_fault_range r[] = {{0, 1}};
	struct droce_fault *f = mkf(0, 1);

	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DROP, .ranges = r, .nb_ranges = 1});
	feed_mixed(f, 4, mk_roce_or_not);
	expect_tags((const uint32_t[]){2, 3}, 2);
	done(f);
}

Test(port_fault, corrupt_icrc_region_skips_frames_that_are_not_roce)
{
	static const struct droce_fault_range r[] = {{0, 2}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule rule = corrupt_rule(r, 1, DROCE_FAULT_REGION_ICRC, 0, 0);
	struct rte_mbuf *in[6], *out[6];
	uint16_t i;

	add(f, &rule);
	for (i = 0; i < 6; i++)
		in[i] = mk_roce_or_not(i);
	cr_assert_eq(droce_fault_process_burst(f, in, 6, out, 6, 0), 6);
	for (i = 0; i < 6; i++) {
		struct rte_mbuf *ref = mk_roce_or_not(i);
		uint32_t off;

		/* RoCE 0, 2, 4 are the three corrupted; UDP 1, 3, 5 are untouched */
		cr_expect_eq(bit_diff(out[i], ref, &off), i % 2 ? 0u : 1u, "packet %u", i);
		rte_pktmbuf_free(ref);
		rte_pktmbuf_free(out[i]);
	}
	done(f);
}

/* ------------------------------------------------------------ by rate */

/*
 * With rate p over N packets the number selected is Binomial(N, p): mean Np,
 * standard deviation s = sqrt(Np(1 - p)). A generator that decides independently
 * with probability p lands within 5 s with probability 1 - 5.7e-7 (normal
 * approximation; N p >= 1000 here, so it is accurate), so for a fixed seed the
 * bound is met unless the generator or the threshold is biased, and no seed was
 * hunted for. For N = 100000: p = 0.01 gives 1000 +- 157, p = 0.05 gives 5000 +- 345.
 */
static void expect_binomial(uint64_t k, uint64_t n, double p, const char *what)
{
	double mean = (double)n * p, var = (double)n * p * (1.0 - p), d = (double)k - mean;

	/* |k - mean| <= 5 s, squared so that no libm function is needed */
	cr_expect(d * d <= 25.0 * var, "%s: %lu selected of %lu, expected %.0f, variance %.0f",
		  what, (unsigned long)k, (unsigned long)n, mean, var);
}

/* Selection of rule @p id, checked against the bound. */
static uint64_t rule_selected(struct droce_fault *f, int id, double p, const char *what)
{
	struct droce_fault_rule_stats rs;

	cr_assert_eq(droce_fault_rule_stats_get(f, id, &rs), 0);
	cr_expect_eq(rs.matched, RATE_N);
	expect_binomial(rs.selected, RATE_N, p, what);
	return rs.selected;
}

/* Every tag 0 .. RATE_N - 1 came out exactly once. */
static void expect_each_once(void)
{
	static uint8_t seen[RATE_N];
	uint32_t i, missing = 0, extra = 0;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < res.n; i++) {
		cr_assert_lt(res.tag[i], RATE_N);
		if (seen[res.tag[i]]++ > 0)
			extra++;
	}
	for (i = 0; i < RATE_N; i++)
		missing += seen[i] == 0;
	cr_expect_eq(missing, 0, "%u packets lost", missing);
	cr_expect_eq(extra, 0, "%u packets twice", extra);
}

Test(port_fault, drop_by_rate, .timeout = 120)
{
	static const uint64_t seeds[] = {1, 2, 0xdeadbeef, 12345678901234567ull};
	/* 1 %: the loss the transport tests use; 50 %: the tightest relative bound (+- 1.6 %) */
	static const double rates[] = {0.01, 0.5};
	unsigned int s, p;

	for (p = 0; p < RTE_DIM(rates); p++) {
		for (s = 0; s < RTE_DIM(seeds); s++) {
			struct droce_fault *f = mkf(0, seeds[s]);
			int id = add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DROP,
								   .rate = rates[p]});
			uint64_t k;

			res.n = 0;
			feed(f, 0, RATE_N, BURST, 0);
			k = rule_selected(f, id, rates[p], "drop");
			cr_expect_eq(stats(f).injected[DROCE_FAULT_DROP], k);
			cr_expect_eq(res.n, RATE_N - k);
			done(f);
		}
	}
}

Test(port_fault, rate_zero_and_one)
{
	struct droce_fault *f = mkf(0, 1);

	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DUP, .rate = 0.0});
	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DROP, .rate = 1.0});
	feed(f, 0, 10000, BURST, 0);
	cr_expect_eq(res.n, 0);
	cr_expect_eq(stats(f).injected[DROCE_FAULT_DROP], 10000);
	cr_expect_eq(stats(f).injected[DROCE_FAULT_DUP], 0);
	done(f);
}

Test(port_fault, duplicate_by_rate, .timeout = 120)
{
	struct droce_fault *f = mkf(0, 11);
	int id = add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DUP, .rate = 0.05});
	uint64_t k;

	feed(f, 0, RATE_N, BURST, 0);
	k = rule_selected(f, id, 0.05, "duplicate");
	cr_expect_eq(stats(f).injected[DROCE_FAULT_DUP], k);
	cr_expect_eq(res.n, RATE_N + k);
	done(f);
}

Test(port_fault, corrupt_by_rate, .timeout = 120)
{
	struct droce_fault *f = mkf(0, 12);
	struct droce_fault_rule rule =
		corrupt_rule(NULL, 0, DROCE_FAULT_REGION_ICRC, DROCE_FAULT_OFFSET_RANDOM,
			     DROCE_FAULT_BIT_RANDOM);
	struct rte_mbuf *in[BURST], *out[OUT_CAP];
	uint64_t k, bad = 0;
	uint32_t t = 0;
	int id;

	rule.rate = 0.02;
	id = add(f, &rule);
	while (t < RATE_N) {
		uint16_t nb, i;

		for (i = 0; i < BURST; i++)
			in[i] = mk(t + i);
		nb = droce_fault_process_burst(f, in, BURST, out, OUT_CAP, 0);
		cr_assert_eq(nb, BURST);
		for (i = 0; i < nb; i++) {
			bad += check(out[i]) == DROCE_PARSE_BAD_ICRC;
			rte_pktmbuf_free(out[i]);
		}
		t += BURST;
	}
	k = rule_selected(f, id, 0.02, "corrupt");
	cr_expect_eq(bad, k, "every corrupted packet fails its ICRC, and only those");
	done(f);
}

Test(port_fault, reorder_by_rate_delivers_each_once, .timeout = 120)
{
	struct droce_fault *f = mkf(0, 13);
	struct droce_fault_rule rule = reorder_rule(NULL, 0, 3);
	uint32_t i, moved = 0;
	int id;

	rule.rate = 0.05;
	id = add(f, &rule);
	feed(f, 0, RATE_N, BURST, 0);
	drain(f);
	cr_expect_eq(stats(f).injected[DROCE_FAULT_REORDER], rule_selected(f, id, 0.05, "reorder"));
	expect_each_once();
	for (i = 0; i + 1 < res.n; i++)
		moved += res.tag[i] > res.tag[i + 1];
	cr_expect_gt(moved, 0, "nothing out of order");
	done(f);
}

Test(port_fault, delay_by_rate_delivers_each_once_late, .timeout = 120)
{
	struct droce_fault *f = mkf(0, 14);
	int id = add(f, &(struct droce_fault_rule){
				.kind = DROCE_FAULT_DELAY, .rate = 0.05, .delay.ticks = 7});
	static uint64_t in_at[RATE_N];
	uint64_t now = 0, late = 0, k;
	uint32_t t, i;

	/* one burst per tick */
	for (t = 0; t < RATE_N; t += BURST, now++) {
		for (i = t; i < t + BURST && i < RATE_N; i++)
			in_at[i] = now;
		feed(f, t, RTE_MIN((uint32_t)BURST, RATE_N - t), BURST, now);
	}
	for (i = 0; i <= 7; i++) /* the tail: keep the clock going */
		flush(f, now + i);
	cr_expect_eq(droce_fault_held_count(f), 0);
	k = rule_selected(f, id, 0.05, "delay");
	cr_expect_eq(stats(f).injected[DROCE_FAULT_DELAY], k);
	expect_each_once();
	for (i = 0; i < res.n; i++) {
		uint64_t d = res.at[i] - in_at[res.tag[i]];

		cr_assert(d == 0 || d == 7, "tag %u left %lu ticks late", res.tag[i],
			  (unsigned long)d);
		late += d == 7;
	}
	cr_expect_eq(late, k, "each delayed packet left exactly 7 ticks late");
	done(f);
}

Test(port_fault, all_kinds_by_rate_conserve_packets, .timeout = 120)
{
	struct droce_fault *f = mkf(64, 15);
	struct droce_fault_rule c = corrupt_rule(NULL, 0, DROCE_FAULT_REGION_ICRC,
						 DROCE_FAULT_OFFSET_RANDOM, DROCE_FAULT_BIT_RANDOM);
	struct droce_fault_rule o = reorder_rule(NULL, 0, 2);
	struct droce_fault_stats st;
	uint64_t now;

	c.rate = 0.03;
	o.rate = 0.03;
	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DROP, .rate = 0.03});
	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DUP, .rate = 0.03});
	add(f, &c);
	add(f, &o);
	add(f,
	    &(struct droce_fault_rule){.kind = DROCE_FAULT_DELAY, .rate = 0.03, .delay.ticks = 5});
	for (now = 0; now < RATE_N / BURST; now++)
		feed(f, (uint32_t)(now * BURST), BURST, BURST, now);
	st = stats(f);
	cr_expect_eq(st.rx_pkts + st.injected[DROCE_FAULT_DUP],
		     st.tx_pkts + st.injected[DROCE_FAULT_DROP] + droce_fault_held_count(f));
	cr_expect_eq(st.held, st.injected[DROCE_FAULT_REORDER] + st.injected[DROCE_FAULT_DELAY]);
	drain(f);
	st = stats(f);
	cr_expect_eq(st.released, st.held);
	cr_expect_eq(res.n,
		     st.rx_pkts + st.injected[DROCE_FAULT_DUP] - st.injected[DROCE_FAULT_DROP]);
	done(f);
}

/* Tags dropped by a rate-0.3 drop rule over 10000 packets. */
static void dropped_set(uint64_t seed, uint64_t rule_seed, unsigned int slot, uint8_t *gone)
{
	struct droce_fault *f = mkf(0, seed);
	unsigned int i;
	uint32_t t;
	int id;

	for (i = 0; i < slot; i++) /* rules in the slots before, that select nothing */
		add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DUP, .rate = 0.0});
	id = add(f, &(struct droce_fault_rule){
			    .kind = DROCE_FAULT_DROP, .rate = 0.3, .seed = rule_seed});
	cr_expect_eq(id, (int)slot);
	res.n = 0;
	feed(f, 0, 10000, BURST, 0);
	memset(gone, 1, 10000);
	for (t = 0; t < res.n; t++)
		gone[res.tag[t]] = 0;
	done(f);
}

Test(port_fault, same_seed_same_decisions)
{
	static uint8_t a[10000], b[10000], c[10000], d[10000], e[10000];

	dropped_set(42, 0, 0, a);
	dropped_set(42, 0, 0, b);
	dropped_set(43, 0, 0, c);
	cr_expect_eq(memcmp(a, b, sizeof(a)), 0, "seed 42 twice: different decisions");
	cr_expect_neq(memcmp(a, c, sizeof(a)), 0, "seeds 42 and 43: same decisions");
	/* a rule's own seed gives the same decisions whatever its slot and the injector's seed */
	dropped_set(1, 777, 0, d);
	dropped_set(2, 777, 3, e);
	cr_expect_eq(memcmp(d, e, sizeof(d)), 0, "rule seed 777: slot changed the decisions");
}

/* ------------------------------------------------------------ API checks */

Test(port_fault, create_errors)
{
	struct droce_fault_conf conf = {.hold_cap = DROCE_FAULT_HOLD_MAX + 1};
	struct droce_fault *f = NULL;

	cr_expect_eq(droce_fault_create(NULL, &f), -EINVAL);
	cr_expect_eq(droce_fault_create(&conf, NULL), -EINVAL);
	cr_expect_eq(droce_fault_create(&conf, &f), -EINVAL);
	conf.hold_cap = DROCE_FAULT_HOLD_MAX;
	cr_expect_eq(droce_fault_create(&conf, &f), 0);
	droce_fault_free(f);
	droce_fault_free(NULL);
}

Test(port_fault, rule_errors)
{
	static const struct droce_fault_range ok[] = {{1, 2}, {4, 4}};
	static const struct droce_fault_range backwards[] = {{3, 2}};
	static const struct droce_fault_range unsorted[] = {{4, 4}, {1, 2}};
	static const struct droce_fault_range overlap[] = {{1, 4}, {4, 6}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_rule r;
	int i;

#define EXPECT_RULE(want, ...)                                                         \
	do {                                                                           \
		r = (struct droce_fault_rule){__VA_ARGS__};                            \
		cr_expect_eq(droce_fault_rule_add(f, &r), want, "rule " #__VA_ARGS__); \
	} while (0)
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_KIND_COUNT);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_DROP, .match = 0x8);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_DROP, .match = DROCE_FAULT_MATCH_QPN,
		    .dqpn = 0x1000000);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_DROP, .rate = -0.1);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_DROP, .rate = 1.01);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_DROP, .rate = NAN);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_DROP, .nb_ranges = 1);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_DROP, .ranges = ok,
		    .nb_ranges = DROCE_FAULT_RANGES_MAX + 1);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_DROP, .ranges = backwards, .nb_ranges = 1);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_DROP, .ranges = unsorted, .nb_ranges = 2);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_DROP, .ranges = overlap, .nb_ranges = 2);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_REORDER, .rate = 0.5);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_DELAY, .rate = 0.5);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_CORRUPT, .corrupt.region = 2);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_CORRUPT, .corrupt.bit = 8);
	EXPECT_RULE(-EINVAL, .kind = DROCE_FAULT_CORRUPT, .corrupt.bit = 0xfe);
#undef EXPECT_RULE
	cr_expect_eq(droce_fault_rule_add(NULL, &r), -EINVAL);
	cr_expect_eq(droce_fault_rule_add(f, NULL), -EINVAL);
	cr_expect_eq(droce_fault_rule_del(NULL, 0), -EINVAL);
	cr_expect_eq(droce_fault_rule_del(f, 0), -ENOENT);
	cr_expect_eq(droce_fault_rule_del(f, -1), -ENOENT);
	cr_expect_eq(droce_fault_rule_del(f, DROCE_FAULT_RULES_MAX), -ENOENT);
	r = (struct droce_fault_rule){.kind = DROCE_FAULT_DROP, .ranges = ok, .nb_ranges = 2};
	for (i = 0; i < DROCE_FAULT_RULES_MAX; i++)
		cr_expect_eq(droce_fault_rule_add(f, &r), i);
	cr_expect_eq(droce_fault_rule_add(f, &r), -ENOSPC);
	cr_expect_eq(droce_fault_rule_del(f, 5), 0);
	cr_expect_eq(droce_fault_rule_add(f, &r), 5, "a freed slot is reused");
	done(f);
}

Test(port_fault, kind_names)
{
	cr_expect_str_eq(droce_fault_kind_name[DROCE_FAULT_DROP], "drop");
	cr_expect_str_eq(droce_fault_kind_name[DROCE_FAULT_DUP], "duplicate");
	cr_expect_str_eq(droce_fault_kind_name[DROCE_FAULT_REORDER], "reorder");
	cr_expect_str_eq(droce_fault_kind_name[DROCE_FAULT_CORRUPT], "corrupt");
	cr_expect_str_eq(droce_fault_kind_name[DROCE_FAULT_DELAY], "delay");
}

Test(port_fault, stats_reset_keeps_rule_indices)
{
	static const struct droce_fault_range r[] = {{5, 5}};
	struct droce_fault *f = mkf(0, 1);
	struct droce_fault_stats st;

	add(f, &(struct droce_fault_rule){.kind = DROCE_FAULT_DROP, .ranges = r, .nb_ranges = 1});
	feed(f, 0, 3, BURST, 0);
	droce_fault_stats_reset(f);
	st = stats(f);
	cr_expect_eq(st.rx_pkts, 0);
	cr_expect_eq(st.tx_pkts, 0);
	feed(f, 3, 4, BURST, 0);
	expect_tags((const uint32_t[]){0, 1, 2, 3, 4, 6}, 6);
	cr_expect_eq(stats(f).injected[DROCE_FAULT_DROP], 1);
	done(f);
}

Test(port_fault, ranges_parse)
{
	struct droce_fault_range r[4];

	cr_assert_eq(droce_fault_ranges_parse("3,7,100-105", r, 4), 3);
	cr_expect_eq(r[0].first, 3);
	cr_expect_eq(r[0].last, 3);
	cr_expect_eq(r[1].first, 7);
	cr_expect_eq(r[1].last, 7);
	cr_expect_eq(r[2].first, 100);
	cr_expect_eq(r[2].last, 105);
	cr_expect_eq(droce_fault_ranges_parse(" 0 - 2 , 18446744073709551615 ", r, 4), 2);
	cr_expect_eq(r[1].last, UINT64_MAX);
	cr_expect_eq(droce_fault_ranges_parse("", r, 4), -EINVAL);
	cr_expect_eq(droce_fault_ranges_parse("3,", r, 4), -EINVAL);
	cr_expect_eq(droce_fault_ranges_parse("-3", r, 4), -EINVAL);
	cr_expect_eq(droce_fault_ranges_parse("5-3", r, 4), -EINVAL);
	cr_expect_eq(droce_fault_ranges_parse("7,3", r, 4), -EINVAL);
	cr_expect_eq(droce_fault_ranges_parse("1-5,5", r, 4), -EINVAL);
	cr_expect_eq(droce_fault_ranges_parse("1x", r, 4), -EINVAL);
	cr_expect_eq(droce_fault_ranges_parse("18446744073709551616", r, 4), -EINVAL);
	cr_expect_eq(droce_fault_ranges_parse("1,2,3", r, 2), -ENOSPC);
	cr_expect_eq(droce_fault_ranges_parse(NULL, r, 2), -EINVAL);
}

Test(port_fault, parsed_ranges_drive_a_rule)
{
	struct droce_fault_range r[DROCE_FAULT_RANGES_MAX];
	struct droce_fault *f = mkf(0, 1);
	int nb = droce_fault_ranges_parse("1,3-4", r, RTE_DIM(r));

	cr_assert_eq(nb, 2);
	add(f, &(struct droce_fault_rule){
		       .kind = DROCE_FAULT_DROP, .ranges = r, .nb_ranges = (uint16_t)nb});
	feed(f, 0, 6, BURST, 0);
	expect_tags((const uint32_t[]){0, 2, 5}, 3);
	done(f);
}
