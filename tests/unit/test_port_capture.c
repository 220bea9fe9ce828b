/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port capture (lib/port/capture.c): frames handed to droce_capture_frame() come back
 * from the pcap file byte for byte, with their lengths and nanosecond timestamps in
 * order; long frames are cut to the snap length; chained mbufs are recorded whole; a
 * full ring drops (counted) and loses nothing it accepted.
 */
#include <criterion/criterion.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_mbuf.h>

#include <droce_capture.h>

#include "droce_test.h"

static struct rte_mempool *pool;
static char path[64];

static void setup(void)
{
	int fd;

	droce_test_eal_init("port_capture");
	pool = rte_pktmbuf_pool_create("cap", 1023, 0, 0, 10240 + RTE_PKTMBUF_HEADROOM,
				       SOCKET_ID_ANY);
	cr_assert_not_null(pool);
	snprintf(path, sizeof(path), "/tmp/droce-capture-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
}

static void teardown(void)
{
	unlink(path);
	droce_test_eal_fini();
}

TestSuite(port_capture, .init = setup, .fini = teardown, .timeout = 60);

static void pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 31 + seed);
}

static struct rte_mbuf *frame(uint32_t len, uint32_t seed)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *d;

	cr_assert_not_null(m);
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	cr_assert_not_null(d);
	pattern(d, len, seed);
	return m;
}

struct seen {
	unsigned int n;
	uint32_t len[2048], caplen[2048];
	uint64_t ts[2048];
	bool bytes_ok[2048];
};

static struct seen seen;

/* Read the file back; frame i must carry pattern(seed = i). */
static void read_back(void)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	struct pcap_pkthdr *h;
	const u_char *data;

	cr_assert_not_null(p, "%s", err);
	cr_expect_eq(pcap_datalink(p), DLT_EN10MB);
	cr_expect_eq(pcap_get_tstamp_precision(p), PCAP_TSTAMP_PRECISION_NANO);
	memset(&seen, 0, sizeof(seen));
	while (pcap_next_ex(p, &h, &data) == 1 && seen.n < 2048) {
		uint8_t want[DROCE_CAPTURE_SNAPLEN];

		pattern(want, h->caplen, seen.n);
		seen.len[seen.n] = h->len;
		seen.caplen[seen.n] = h->caplen;
		seen.ts[seen.n] = (uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec;
		seen.bytes_ok[seen.n] = memcmp(data, want, h->caplen) == 0;
		seen.n++;
	}
	pcap_close(p);
}

Test(port_capture, frames_come_back_byte_for_byte_in_order)
{
	static const uint32_t lens[] = {60, 64, 1000, 1514, 4200, 9238};
	struct droce_capture_stats st;
	struct droce_capture *c;
	struct timespec t0;
	uint64_t start;
	unsigned int i;

	clock_gettime(CLOCK_REALTIME, &t0);
	start = (uint64_t)t0.tv_sec * 1000000000u + (uint64_t)t0.tv_nsec;
	cr_assert_eq(droce_capture_open(path, 0, &c), 0);
	for (i = 0; i < 6; i++) {
		struct rte_mbuf *m = frame(lens[i], i);

		droce_capture_frame(c, m);
		rte_pktmbuf_free(m);
	}
	droce_capture_stats_get(c, &st);
	cr_expect_eq(st.frames, 6);
	cr_expect_eq(st.dropped, 0);
	droce_capture_close(c);
	read_back();
	cr_assert_eq(seen.n, 6, "every frame written");
	for (i = 0; i < 6; i++) {
		cr_expect_eq(seen.len[i], lens[i], "frame %u length", i);
		cr_expect_eq(seen.caplen[i], lens[i], "frame %u recorded whole", i);
		cr_expect(seen.bytes_ok[i], "frame %u bytes", i);
		cr_expect_geq(seen.ts[i], start, "frame %u stamped after the open", i);
		if (i > 0)
			cr_expect_geq(seen.ts[i], seen.ts[i - 1], "frame %u in time order", i);
	}
}

Test(port_capture, long_frame_cut_to_the_snap_length)
{
	struct droce_capture *c;
	struct rte_mbuf *m = frame(10000, 0);

	cr_assert_eq(droce_capture_open(path, 0, &c), 0);
	droce_capture_frame(c, m);
	rte_pktmbuf_free(m);
	droce_capture_close(c);
	read_back();
	cr_assert_eq(seen.n, 1);
	cr_expect_eq(seen.len[0], 10000, "the real length kept");
	cr_expect_eq(seen.caplen[0], DROCE_CAPTURE_SNAPLEN, "cut to the snap length");
	cr_expect(seen.bytes_ok[0]);
}

Test(port_capture, chained_mbuf_recorded_whole)
{
	struct droce_capture *c;
	struct rte_mbuf *head = frame(100, 0), *tail = rte_pktmbuf_alloc(pool);
	uint8_t all[300], *d;

	cr_assert_not_null(tail);
	pattern(all, 300, 0);
	d = (uint8_t *)rte_pktmbuf_append(tail, 200);
	memcpy(d, all + 100, 200);
	cr_assert_eq(rte_pktmbuf_chain(head, tail), 0);
	cr_assert_eq(droce_capture_open(path, 0, &c), 0);
	droce_capture_frame(c, head);
	rte_pktmbuf_free(head);
	droce_capture_close(c);
	read_back();
	cr_assert_eq(seen.n, 1);
	cr_expect_eq(seen.len[0], 300);
	cr_expect(seen.bytes_ok[0], "both segments, in order");
}

Test(port_capture, full_ring_drops_are_counted_and_the_rest_kept)
{
	struct droce_capture_stats st;
	struct droce_capture *c;
	unsigned int i, n = 2000;
	bool in_order = true;

	/* 2000 frames of 1514 bytes (3 MB) through a 64 KiB ring, as fast as they come */
	cr_assert_eq(droce_capture_open(path, 64u << 10, &c), 0);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = frame(1514, 7);

		droce_capture_frame(c, m);
		rte_pktmbuf_free(m);
	}
	droce_capture_stats_get(c, &st);
	droce_capture_close(c);
	read_back();
	cr_expect_eq(st.frames, n);
	cr_expect_eq(seen.n + st.dropped, n, "each frame written or counted as dropped");
	for (i = 0; i < seen.n; i++)
		in_order &= seen.len[i] == 1514 && (i == 0 || seen.ts[i] >= seen.ts[i - 1]);
	cr_expect(in_order, "what was written is whole and in order");
}

Test(port_capture, bad_arguments)
{
	struct droce_capture *c;

	cr_expect_eq(droce_capture_open(NULL, 0, &c), -EINVAL);
	cr_expect_eq(droce_capture_open("", 0, &c), -EINVAL);
	cr_expect_eq(droce_capture_open(path, 1000, &c), -EINVAL, "not a power of two");
	cr_expect_eq(droce_capture_open(path, 4096, &c), -EINVAL, "below 64 KiB");
	cr_expect_eq(droce_capture_open("/nonexistent-dir/x.pcap", 0, &c), -ENOENT);
	droce_capture_close(NULL);
}
