/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parser over chains as zero-copy senders build them (a header mbuf, payload in
 * external-buffer segments, a tail with pad and ICRC) and over malformed chains: every
 * place two cuts can split a frame, every length a chain can be cut short to, segments
 * that do not add up to the packet length, empty segments. Nothing is read out of bounds
 * (the segment-walk crashes rte_pktmbuf_read() would hit are refused first).
 */
#include <criterion/criterion.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <droce_wire.h>
#include <droce_wire_mbuf.h>

#include "droce_test.h"

#define PAYLOAD 301 /* pad 3 */

static struct rte_mempool *pool;
static uint8_t frame[1024];
static size_t frame_len;
static struct droce_parse_cfg cfg;
static uint8_t ext[PAYLOAD]; /* the bytes an external segment points at (an MR's) */

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
				     .reth = {.va = 0x1000, .rkey = 7, .len = PAYLOAD}};
	ssize_t n;

	droce_test_eal_init("wire_mbuf_chain");
	pool = rte_pktmbuf_pool_create("test_wire_chain", 512, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	cr_assert_not_null(pool, "mempool: %s", rte_strerror(rte_errno));
	for (size_t i = 0; i < sizeof(ext); i++)
		ext[i] = (uint8_t)(i * 13 + 5);
	n = droce_build_frame(frame, sizeof(frame), &a, 1, &f, ext, sizeof(ext));
	cr_assert_gt(n, 0);
	frame_len = (size_t)n;
	cfg = DROCE_PARSE_CFG_DEFAULT;
}

static void teardown(void)
{
	cr_expect_eq(rte_mempool_avail_count(pool), 512, "every mbuf back in the pool");
	rte_mempool_free(pool);
	droce_test_eal_fini();
}

TestSuite(wire_mbuf_chain, .init = setup, .fini = teardown);

static struct rte_mbuf *seg_of(const uint8_t *p, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *d;

	cr_assert_not_null(m);
	d = rte_pktmbuf_append(m, (uint16_t)len);
	cr_assert(len == 0 || d != NULL);
	if (len > 0)
		memcpy(d, p, len);
	return m;
}

/* The frame's first @p len bytes in segments cut at @p c1 <= @p c2. */
static struct rte_mbuf *cut3(size_t len, size_t c1, size_t c2)
{
	struct rte_mbuf *h = seg_of(frame, c1);

	cr_assert_eq(rte_pktmbuf_chain(h, seg_of(frame + c1, c2 - c1)), 0);
	cr_assert_eq(rte_pktmbuf_chain(h, seg_of(frame + c2, len - c2)), 0);
	return h;
}

Test(wire_mbuf_chain, every_two_cuts_parse_and_check_the_icrc)
{
	unsigned int bad = 0;

	for (size_t c1 = 0; c1 <= frame_len; c1 += 3) {
		for (size_t c2 = c1; c2 <= frame_len; c2 += 5) {
			struct rte_mbuf *m = cut3(frame_len, c1, c2);
			struct droce_pkt pkt;

			if (droce_parse_mbuf(m, &cfg, &pkt) != DROCE_PARSE_OK ||
			    pkt.payload_len != PAYLOAD || pkt.pad != 3)
				bad++;
			rte_pktmbuf_free(m);
		}
	}
	cr_expect_eq(bad, 0, "%u splits misparsed", bad);
}

Test(wire_mbuf_chain, every_short_chain_is_refused)
{
	unsigned int ok = 0;

	for (size_t len = 0; len < frame_len; len++) {
		struct rte_mbuf *m = cut3(len, len / 3, len / 2);
		struct droce_pkt pkt;

		if (droce_parse_mbuf(m, &cfg, &pkt) == DROCE_PARSE_OK)
			ok++;
		rte_pktmbuf_free(m);
	}
	cr_expect_eq(ok, 0, "%u truncated chains accepted", ok);
}

Test(wire_mbuf_chain, segments_shorter_than_pkt_len_are_refused)
{
	struct rte_mbuf *m = cut3(frame_len, 60, 200);
	struct droce_pkt pkt;

	/* a chain that claims more bytes than its segments hold */
	m->pkt_len += 64;
	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_TRUNC_L2);
	m->pkt_len -= 64;
	rte_pktmbuf_free(m);
}

Test(wire_mbuf_chain, segments_longer_than_pkt_len_are_refused)
{
	struct rte_mbuf *m = cut3(frame_len, 60, 200);
	struct droce_pkt pkt;

	m->pkt_len -= 4;
	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_TRUNC_L2);
	m->pkt_len += 4;
	rte_pktmbuf_free(m);
}

Test(wire_mbuf_chain, empty_middle_segment)
{
	struct rte_mbuf *m = cut3(frame_len, 100, 100);
	struct droce_pkt pkt;

	cr_assert_eq(m->nb_segs, 3);
	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_OK);
	rte_pktmbuf_free(m);
}

static unsigned int ext_freed;

static void ext_free(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
	ext_freed++;
}

/* Header mbuf + external segment on ext[] + tail (pad, ICRC): the zero-copy layout. */
static struct rte_mbuf *zero_copy_layout(struct rte_mbuf_ext_shared_info *sh)
{
	size_t hdr = frame_len - PAYLOAD - 3 - DROCE_ICRC_LEN;
	struct rte_mbuf *h = seg_of(frame, hdr), *s = rte_pktmbuf_alloc(pool);

	cr_assert_not_null(s);
	sh->free_cb = ext_free;
	sh->fcb_opaque = NULL;
	rte_mbuf_ext_refcnt_set(sh, 1);
	rte_pktmbuf_attach_extbuf(s, ext, RTE_BAD_IOVA, PAYLOAD, sh);
	s->data_len = PAYLOAD;
	s->pkt_len = PAYLOAD;
	cr_assert_eq(rte_pktmbuf_chain(h, s), 0);
	cr_assert_eq(rte_pktmbuf_chain(h, seg_of(frame + hdr + PAYLOAD, 3 + DROCE_ICRC_LEN)), 0);
	return h;
}

Test(wire_mbuf_chain, external_payload_segment)
{
	struct rte_mbuf_ext_shared_info sh;
	struct rte_mbuf *m = zero_copy_layout(&sh);
	struct droce_pkt pkt;
	uint8_t out[PAYLOAD];
	const uint8_t *got;

	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_OK);
	cr_expect_eq(pkt.payload_len, PAYLOAD);
	/* a pointer into the segment when the bytes lie in one, else a copy into out */
	got = rte_pktmbuf_read(m, pkt.payload_off, PAYLOAD, out);
	cr_assert_not_null(got);
	cr_expect_arr_eq(got, ext, PAYLOAD);
	ext_freed = 0;
	rte_pktmbuf_free(m);
	cr_expect_eq(ext_freed, 1, "the external buffer's callback ran once");
}

Test(wire_mbuf_chain, external_bytes_changed_after_build_fail_the_icrc)
{
	struct rte_mbuf_ext_shared_info sh;
	struct rte_mbuf *m = zero_copy_layout(&sh);
	struct droce_pkt pkt;

	/* the sender's application wrote its buffer while the frame was on its way */
	ext[PAYLOAD / 2] ^= 0x40;
	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_BAD_ICRC);
	ext[PAYLOAD / 2] ^= 0x40;
	cr_expect_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_OK);
	rte_pktmbuf_free(m);
}
