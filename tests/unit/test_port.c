/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce ports over real ethdevs: a back-to-back ring pair in one process, a
 * frame sent on one side arrives on the other, links report up, counters
 * count, and closing returns every mbuf.
 */
#include <criterion/criterion.h>
#include <string.h>

#include <droce_port.h>
#include <droce_wire.h>
#include <droce_wire_mbuf.h>

#include "droce_test.h"

static struct droce_port a, b;

static void setup(void)
{
	struct droce_port_conf conf = {
		.nb_queues = 1, .nb_mbufs = 1023, .mtu = 4200, .socket = SOCKET_ID_ANY};

	droce_test_eal_init("port");
	cr_assert_eq(droce_port_ring_pair("dra", "drb", 1), 0);
	conf.device = "net_ring_dra";
	cr_assert_eq(droce_port_open(&a, &conf), 0, "open net_ring_dra");
	conf.device = "net_ring_drb";
	cr_assert_eq(droce_port_open(&b, &conf), 0, "open net_ring_drb");
}

static void teardown(void)
{
	droce_port_close(&a);
	droce_port_close(&b);
	droce_test_eal_fini();
}

TestSuite(port, .init = setup, .fini = teardown);

Test(port, links_up)
{
	cr_expect(droce_port_link_up(&a));
	cr_expect(droce_port_link_up(&b));
	cr_expect_str_eq(a.name, "net_ring_dra");
}

Test(port, frame_crosses_the_pair)
{
	static const struct droce_addr addr = {.src_ip = {10, 0, 0, 1},
					       .dst_ip = {10, 0, 0, 2},
					       .ttl = 64,
					       .udp_sport = 0xc000,
					       .udp_dport = 4791};
	struct droce_hdr_fields f = {.opcode = DROCE_OP_RC_SEND_ONLY, .pkey = 0xffff, .dqpn = 17};
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct rte_mbuf *m = rte_pktmbuf_alloc(a.pool), *got[4];
	struct droce_pkt pkt;
	uint8_t *p;
	ssize_t n;

	cr_assert_not_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, 200);
	cr_assert_not_null(p);
	n = droce_build_frame(p, 200, &addr, 1, &f, "hello", 5);
	cr_assert_gt(n, 0);
	rte_pktmbuf_trim(m, (uint16_t)(200 - n));
	droce_port_tx(&a, 0, m);
	cr_expect_eq(droce_port_tx_flush(&a, 0), 1);
	cr_assert_eq(droce_port_rx(&b, 0, got, 4), 1);
	cr_expect_eq(droce_parse_mbuf(got[0], &cfg, &pkt), DROCE_PARSE_OK);
	cr_expect_eq(pkt.payload_len, 5);
	cr_expect_eq(a.qstats[0].tx_pkts, 1);
	cr_expect_eq(b.qstats[0].rx_pkts, 1);
	cr_expect_eq(b.qstats[0].rx_bytes, (uint64_t)n);
	rte_pktmbuf_free(got[0]);
}

Test(port, tx_buffer_flushes_when_full)
{
	struct rte_mbuf *got[DROCE_PORT_BURST];
	unsigned int i;

	for (i = 0; i < DROCE_PORT_BURST; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(a.pool);

		cr_assert_not_null(m);
		cr_assert_not_null(rte_pktmbuf_append(m, 60));
		droce_port_tx(&a, 0, m);
	}
	cr_expect_eq(a.txq[0].n, 0, "a full buffer is sent at once");
	cr_expect_eq(droce_port_rx(&b, 0, got, DROCE_PORT_BURST), DROCE_PORT_BURST);
	rte_pktmbuf_free_bulk(got, DROCE_PORT_BURST);
}

/* Receive and free everything waiting on b: the count. */
static unsigned int drain_b(void)
{
	struct rte_mbuf *got[DROCE_PORT_BURST];
	unsigned int rx = 0;
	uint16_t k, i;

	while ((k = droce_port_rx(&b, 0, got, DROCE_PORT_BURST)) > 0) {
		rx += k;
		for (i = 0; i < k; i++)
			rte_pktmbuf_free(got[i]);
	}
	return rx;
}

/*
 * A device that takes no more (the ring pair holds 4095 frames, nobody reads):
 * the rest waits in the TX backlog, in order, and goes once the device takes
 * again; nothing is dropped while the backlog has room. One mbuf, one
 * reference per transmission, stands for the frames.
 */
Test(port, full_device_keeps_frames_waiting)
{
	const unsigned int ring = 4095, n = ring + 100;
	struct rte_mbuf *m = rte_pktmbuf_alloc(a.pool);
	unsigned int i;

	cr_assert_not_null(m);
	cr_assert_not_null(rte_pktmbuf_append(m, 60));
	rte_mbuf_refcnt_update(m, (int16_t)(n - 1));
	for (i = 0; i < n; i++)
		droce_port_tx(&a, 0, m);
	droce_port_tx_flush(&a, 0);
	cr_expect_eq(a.qstats[0].tx_pkts, ring, "the ring pair's room");
	cr_expect_eq(a.qstats[0].tx_dropped, 0, "nothing lost");
	cr_expect_eq(droce_port_tx_pending(&a, 0), n - ring, "the rest waits");
	cr_expect_eq(droce_port_tx_room(&a, 0), DROCE_PORT_TX_BACKLOG - (n - ring));
	cr_expect_gt(a.qstats[0].tx_full, 0);
	cr_expect_eq(drain_b(), ring);
	cr_expect_eq(droce_port_tx_flush(&a, 0), n - ring, "the waiting frames go next");
	cr_expect_eq(droce_port_tx_pending(&a, 0), 0);
	cr_expect_eq(drain_b(), n - ring, "every frame arrives");
	cr_expect_eq(a.qstats[0].tx_pkts, n);
}

/* Frames keep their order across the backlog: an older frame never waits behind a newer one. */
Test(port, waiting_frames_go_first)
{
	const unsigned int ring = 4095;
	struct rte_mbuf *filler = rte_pktmbuf_alloc(a.pool), *got[DROCE_PORT_BURST];
	unsigned int i, next = 0;
	uint16_t k;

	cr_assert_not_null(filler);
	cr_assert_not_null(rte_pktmbuf_append(filler, 60));
	rte_mbuf_refcnt_update(filler, (int16_t)(ring - 1));
	for (i = 0; i < ring; i++)
		droce_port_tx(&a, 0, filler);
	droce_port_tx_flush(&a, 0);
	/* the device is full: 40 numbered frames wait; then room appears; 40 more come */
	for (i = 0; i < 80; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(a.pool);

		cr_assert_not_null(m);
		*(uint32_t *)rte_pktmbuf_append(m, 60) = i;
		droce_port_tx(&a, 0, m);
		if (i == 39) {
			droce_port_tx_flush(&a, 0);
			cr_expect_eq(droce_port_tx_pending(&a, 0), 40);
			cr_assert_eq(drain_b(), ring);
		}
	}
	droce_port_tx_flush(&a, 0);
	while ((k = droce_port_rx(&b, 0, got, DROCE_PORT_BURST)) > 0) {
		for (i = 0; i < k; i++) {
			cr_expect_eq(*rte_pktmbuf_mtod(got[i], uint32_t *), next, "in order");
			next++;
			rte_pktmbuf_free(got[i]);
		}
	}
	cr_expect_eq(next, 80);
	cr_expect_eq(a.qstats[0].tx_dropped, 0);
}

/* Behind by more than the backlog: the excess is dropped and counted (the engine's send_err). */
Test(port, a_full_backlog_drops_and_counts)
{
	const unsigned int ring = 4095, n = ring + DROCE_PORT_TX_BACKLOG + 5;
	struct rte_mbuf *m = rte_pktmbuf_alloc(a.pool);
	unsigned int i;

	cr_assert_not_null(m);
	cr_assert_not_null(rte_pktmbuf_append(m, 60));
	rte_mbuf_refcnt_update(m, (int16_t)(n - 1));
	for (i = 0; i < n; i++)
		droce_port_tx(&a, 0, m);
	droce_port_tx_flush(&a, 0);
	cr_expect_eq(a.qstats[0].tx_pkts, ring);
	cr_expect_eq(droce_port_tx_pending(&a, 0), DROCE_PORT_TX_BACKLOG);
	cr_expect_eq(a.qstats[0].tx_dropped, 5, "beyond the backlog: lost and counted");
	cr_expect_eq(droce_port_tx_room(&a, 0), 0);
	cr_expect_eq(drain_b(), ring, "what was taken arrives");
}

Test(port, refuses_bad_configuration)
{
	struct droce_port c;
	struct droce_port_conf conf = {.device = "net_ring_dra", .nb_queues = 0};

	cr_expect_eq(droce_port_open(&c, &conf), -EINVAL);
	conf.nb_queues = DROCE_PORT_QUEUES_MAX + 1;
	cr_expect_eq(droce_port_open(&c, &conf), -EINVAL);
	conf.nb_queues = 1;
	conf.device = "no_such_pmd_xyz";
	cr_expect_lt(droce_port_open(&c, &conf), 0);
}

Test(port, pool_returns_full)
{
	unsigned int before = rte_mempool_avail_count(a.pool);
	struct rte_mbuf *m = rte_pktmbuf_alloc(a.pool), *got[2];

	cr_assert_not_null(rte_pktmbuf_append(m, 64));
	droce_port_tx(&a, 0, m);
	droce_port_tx_flush(&a, 0);
	cr_assert_eq(droce_port_rx(&b, 0, got, 2), 1);
	rte_pktmbuf_free(got[0]);
	cr_expect_eq(rte_mempool_avail_count(a.pool), before);
}
