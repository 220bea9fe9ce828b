/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture through the engine: DROCE_DEVICES capture=FILE records a port from the start,
 * droce_engine_capture() starts and stops it at run time. The files hold the frames of
 * both directions (ARP included), every RoCE frame with a good ICRC, and the port's
 * capture counters agree with them.
 */
#include <pcap/pcap.h>
#include <unistd.h>

#include <droce_engine.h>
#include <droce_wire.h>

#include "ud_pair.h"

static char path0[64], path1[64];

static void tmp_path(char *p, size_t len)
{
	int fd;

	snprintf(p, len, "/tmp/droce-capture-XXXXXX");
	fd = mkstemp(p);
	cr_assert_geq(fd, 0);
	close(fd);
}

static void setup(void)
{
	char keys0[128];

	tmp_path(path0, sizeof(path0));
	tmp_path(path1, sizeof(path1));
	snprintf(keys0, sizeof(keys0), ",capture=%s", path0);
	ud_pair_open(keys0, NULL);
}

static void teardown(void)
{
	unlink(path0);
	unlink(path1);
}

TestSuite(embedded_capture, .init = setup, .fini = teardown, .timeout = 60);

struct tally {
	unsigned int frames, roce, roce_bad, from0, from1, arp;
};

static struct tally tally_of(const char *path)
{
	static const uint8_t mac0[6] = {2, 0, 0, 0, 0, 1}, mac1[6] = {2, 0, 0, 0, 0, 2};
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	struct tally t = {0};
	struct pcap_pkthdr *h;
	const u_char *d;

	cr_assert_not_null(p, "%s", err);
	while (pcap_next_ex(p, &h, &d) == 1) {
		struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
		struct droce_pkt pkt;
		enum droce_parse_status st = droce_parse(d, h->caplen, &cfg, &pkt);

		t.frames++;
		t.from0 += memcmp(d + 6, mac0, 6) == 0;
		t.from1 += memcmp(d + 6, mac1, 6) == 0;
		t.arp += d[12] == 0x08 && d[13] == 0x06;
		if (st == DROCE_PARSE_NOT_ROCE)
			continue;
		t.roce++;
		t.roce_bad += st != DROCE_PARSE_OK;
	}
	pcap_close(p);
	return t;
}

/* UD both ways: droce0 -> droce1 (send_one), then droce1 -> droce0. */
static void traffic(void)
{
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	struct ibv_sge rs = {.addr = (uintptr_t)e0.buf, .length = 1064, .lkey = e0.mr->lkey};
	struct ibv_sge ss = {.addr = (uintptr_t)e1.buf, .length = 200, .lkey = e1.mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_send_wr swr = {.wr_id = 2,
				  .sg_list = &ss,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED},
			   *sbad;

	send_one(1);
	cr_assert_eq(ibv_query_gid(e0.ctx, 1, 1, &aa.grh.dgid), 0);
	aa.grh.sgid_index = 1;
	aa.grh.hop_limit = 64;
	swr.wr.ud.ah = ibv_create_ah(e1.pd, &aa);
	cr_assert_not_null(swr.wr.ud.ah);
	swr.wr.ud.remote_qpn = e0.qp->qp_num;
	swr.wr.ud.remote_qkey = QKEY;
	cr_assert_eq(ibv_post_recv(e0.qp, &rwr, &rbad), 0);
	cr_assert_eq(ibv_post_send(e1.qp, &swr, &sbad), 0);
	cr_expect_eq(wait_wc(e1.cq).status, IBV_WC_SUCCESS);
	cr_expect_eq(wait_wc(e0.cq).byte_len, 200 + 40);
}

Test(embedded_capture, configured_capture_records_both_directions)
{
	struct tally t;
	uint64_t frames, dropped;

	traffic();
	frames = port_counter(e0.ctx, "capture_frames");
	dropped = port_counter(e0.ctx, "capture_dropped");
	cr_assert_eq(droce_engine_capture("droce0", NULL), 0, "stopped: the file is complete");
	t = tally_of(path0);
	cr_expect_eq(t.frames, frames - dropped, "the file holds what the counters say");
	cr_expect_eq(dropped, 0);
	cr_expect_geq(t.roce, 2, "the SEND out and the SEND in");
	cr_expect_eq(t.roce_bad, 0, "every RoCE frame parses, ICRC good");
	cr_expect_geq(t.from0, 2, "frames droce0 sent (ARP, SEND)");
	cr_expect_geq(t.from1, 2, "frames droce0 received (ARP, SEND)");
	cr_expect_geq(t.arp, 2, "ARP too");
}

Test(embedded_capture, started_and_stopped_at_run_time)
{
	struct tally t;

	cr_assert_eq(droce_engine_capture("droce1", path1), 0);
	traffic();
	cr_assert_eq(droce_engine_capture("droce1", NULL), 0);
	t = tally_of(path1);
	cr_expect_geq(t.roce, 2, "both SENDs, seen from droce1");
	cr_expect_eq(t.roce_bad, 0);
	cr_expect_eq(port_counter(e1.ctx, "capture_frames"), 0, "no capture runs any more");
}

Test(embedded_capture, bad_requests)
{
	cr_expect_eq(droce_engine_capture("droce9", path1), -ENOENT, "no such port");
	cr_expect_eq(droce_engine_capture(NULL, path1), -EINVAL);
	cr_expect_eq(droce_engine_capture("droce1", "/nonexistent-dir/x.pcap"), -ENOENT);
}
