/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parser and ICRC over real DPDK mbufs from a mempool, contiguous and chained
 * (the layout the zero-copy transmit path produces: header mbuf + payload
 * segments), including headers split across segments.
 */
#include <criterion/criterion.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <droce_wire.h>
#include <droce_wire_mbuf.h>

#include "droce_test.h"

static struct rte_mempool *pool;
static uint8_t frame[6000];
static size_t frame_len;
static struct droce_parse_cfg cfg;

static void setup(void)
{
	static const struct droce_addr a = {
		.dst_mac = {2, 0, 0, 0, 0, 2},
		.src_mac = {2, 0, 0, 0, 0, 3},
		.src_ip = {10, 0, 0, 3},
		.dst_ip = {10, 0, 0, 2},
		.ttl = 64,
		.udp_sport = 0xc001,
		.udp_dport = 4791,
	};
	struct droce_hdr_fields f = {.opcode = DROCE_OP_RC_WRITE_ONLY,
				     .pkey = 0xffff,
				     .dqpn = 0x22,
				     .psn = 1,
				     .reth = {.va = 0x1000, .rkey = 7, .len = 4093}};
	uint8_t payload[4093];
	size_t i;
	ssize_t n;

	droce_test_eal_init("wire_mbuf");
	pool = rte_pktmbuf_pool_create("test_wire_mbuf", 256, 0, 0, RTE_PKTMBUF_HEADROOM + 8192,
				       SOCKET_ID_ANY);
	cr_assert_not_null(pool, "mempool: %s", rte_strerror(rte_errno));
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7);
	n = droce_build_frame(frame, sizeof(frame), &a, 1, &f, payload, sizeof(payload));
	cr_assert_gt(n, 0);
	frame_len = (size_t)n;
	cfg = DROCE_PARSE_CFG_DEFAULT;
}

static void teardown(void)
{
	rte_mempool_free(pool);
	droce_test_eal_fini();
}

/* Chain of mbufs holding the frame cut at the given offsets (ascending, in the frame). */
static struct rte_mbuf *chain(const size_t *cuts, int ncuts)
{
	struct rte_mbuf *head = NULL;
	size_t start = 0;
	int i;

	for (i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : frame_len;
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		char *p;

		cr_assert_not_null(m);
		p = rte_pktmbuf_append(m, (uint16_t)(end - start));
		cr_assert_not_null(p);
		memcpy(p, frame + start, end - start);
		if (head == NULL)
			head = m;
		else
			cr_assert_eq(rte_pktmbuf_chain(head, m), 0);
		start = end;
	}
	return head;
}

TestSuite(wire_mbuf, .init = setup, .fini = teardown);

Test(wire_mbuf, single_segment)
{
	struct rte_mbuf *m = chain(NULL, 0);
	struct droce_pkt pkt;

	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_OK);
	cr_expect_eq(pkt.payload_len, 4093);
	rte_pktmbuf_free(m);
}

Test(wire_mbuf, header_mbuf_and_payload_segments)
{
	/* headers alone in the first mbuf, payload in three more */
	const size_t cuts[] = {14 + 20 + 8 + 12 + 16, 1000, 3000};
	struct rte_mbuf *m = chain(cuts, 3);
	struct droce_pkt pkt;

	cr_assert_eq(m->nb_segs, 4);
	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_OK);
	cr_expect_eq(droce_icrc_calc_mbuf(m, pkt.l3_off, pkt.ip_hdr_len, false, pkt.icrc_off),
		     droce_icrc_load(frame + pkt.icrc_off));
	rte_pktmbuf_free(m);
}

Test(wire_mbuf, icrc_split_across_segments)
{
	/* the stored ICRC itself straddles two segments */
	const size_t cuts[] = {100, frame_len - 2};
	struct rte_mbuf *m = chain(cuts, 2);
	struct droce_pkt pkt;

	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_OK);
	rte_pktmbuf_free(m);
}

Test(wire_mbuf, headers_split_across_segments)
{
	/* the BTH starts in one segment and ends in the next */
	const size_t cuts[] = {14 + 20 + 8 + 5, 14 + 20 + 8 + 20};
	struct rte_mbuf *m = chain(cuts, 2);
	struct droce_pkt pkt;

	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_OK);
	cr_expect_eq(pkt.bth_off, 42);
	cr_expect_eq(droce_icrc_calc_mbuf(m, pkt.l3_off, pkt.ip_hdr_len, false, pkt.icrc_off),
		     droce_icrc_load(frame + pkt.icrc_off));
	rte_pktmbuf_free(m);
}

Test(wire_mbuf, corrupt_byte_in_last_segment)
{
	const size_t cuts[] = {200, 2000};
	struct rte_mbuf *m;
	struct droce_pkt pkt;

	frame[frame_len - 10] ^= 0x04;
	m = chain(cuts, 2);
	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_BAD_ICRC);
	rte_pktmbuf_free(m);
}

Test(wire_mbuf, truncated_chain)
{
	const size_t cuts[] = {200, 2000};
	struct rte_mbuf *m;
	struct droce_pkt pkt;

	frame_len -= 100;
	m = chain(cuts, 2);
	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_BAD_IP_LEN);
	rte_pktmbuf_free(m);
}

Test(wire_mbuf, tiny_runt)
{
	struct rte_mbuf *m;
	struct droce_pkt pkt;

	frame_len = 6;
	m = chain(NULL, 0);
	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_TRUNC_L2);
	rte_pktmbuf_free(m);
}

Test(wire_mbuf, mempool_returns_to_full)
{
	const size_t cuts[] = {60, 500, 1500};
	struct rte_mbuf *m = chain(cuts, 3);

	cr_expect_eq(rte_mempool_avail_count(pool), 256 - 4);
	rte_pktmbuf_free(m);
	cr_expect_eq(rte_mempool_avail_count(pool), 256);
}
