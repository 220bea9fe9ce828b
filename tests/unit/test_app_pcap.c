/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-pcap as a user runs it: its lines, its JSON, its summary, and an exit
 * status that tells a good capture from one with a bad ICRC or a bad file;
 * --replay's options, errors and verdicts, and a capture -> dissect -> replay
 * -> dissect round trip.
 */
#include <criterion/criterion.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <droce_wire.h>

#include "droce_test.h"

static char out[1 << 20];

/* Run droce-pcap with @p args; its stdout (and its stderr with @p errors) lands in out[];
 * returns the exit status. */
static int run_cmd(const char *args, bool errors)
{
	const char *bin = getenv("DROCE_PCAP");
	char cmd[8192];
	size_t n;
	FILE *p;
	int st;

	cr_assert_not_null(bin, "DROCE_PCAP is not set (run the tests through meson)");
	snprintf(cmd, sizeof(cmd), "'%s' %s %s", bin, args, errors ? "2>&1" : "2>/dev/null");
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	cr_assert(WIFEXITED(st), "droce-pcap did not exit normally");
	return WEXITSTATUS(st);
}

static int run_pcap(const char *args)
{
	return run_cmd(args, false);
}

static char *capture_arg(const char *name)
{
	static char arg[4200];

	snprintf(arg, sizeof(arg), "'%s'", droce_test_data(name));
	return arg;
}

Test(app_pcap, dissects_first_frame)
{
	cr_assert_eq(run_pcap(capture_arg("linux-rxe-rc_pingpong.pcap")), 0);
	cr_expect(strstr(out, "    28  ") == out, "first RoCE line is frame 28: %.80s", out);
	cr_expect_not_null(strstr(out, "10.99.0.3 > 10.99.0.2 RC_SEND_FIRST qp 0x000011 psn "
				       "13416431 len 1024 icrc ok\n"));
	cr_expect_not_null(strstr(out, "RC_ACKNOWLEDGE qp 0x000011 psn 13416432 len 0 "
				       "AETH{syndrome=0x1f ACK msn=1} icrc ok\n"));
}

Test(app_pcap, json_lines)
{
	char args[4300];

	snprintf(args, sizeof(args), "--json %s", capture_arg("linux-rxe-atomic_fa.pcap"));
	cr_assert_eq(run_pcap(args), 0);
	cr_expect(strncmp(out, "{\"frame\":", 9) == 0, "%.60s", out);
	cr_expect_not_null(strstr(out, "\"name\":\"RC_FETCH_ADD\""));
	cr_expect_not_null(strstr(out, "\"atomicacketh\":{\"orig\":"));
	cr_expect_null(strstr(out, "\"icrc_ok\":false"));
}

Test(app_pcap, summary_counts)
{
	char args[4300];

	snprintf(args, sizeof(args), "--summary-only %s",
		 capture_arg("linux-rxe-lossy_write_bw-head.pcap"));
	cr_assert_eq(run_pcap(args), 0);
	cr_expect_not_null(
		strstr(out, "frames 1200, RoCEv2 1161, other 39, malformed 0 (ICRC errors 0)"),
		"%s", out);
	cr_expect_not_null(strstr(out, "0x11 RC_ACKNOWLEDGE"));
	cr_expect_null(strstr(out, "icrc ok"), "no per-frame lines with --summary-only");
}

/* Write a copy of a capture with frame @p frame_no changed by @p edit. */
static void write_edited(const char *src, const char *dst, uint64_t frame_no,
			 void (*edit)(u_char *frame, uint32_t *len, uint32_t arg), uint32_t arg)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *in = pcap_open_offline(droce_test_data(src), err);
	pcap_t *dead;
	pcap_dumper_t *d;
	uint64_t n = 0;

	cr_assert_not_null(in, "%s", err);
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	d = pcap_dump_open(dead, dst);
	cr_assert_not_null(d);
	while (pcap_next_ex(in, &h, &data) == 1) {
		static u_char copy[65536];
		struct pcap_pkthdr hh = *h;

		memcpy(copy, data, h->caplen);
		if (++n == frame_no) {
			edit(copy, &hh.caplen, arg);
			hh.len = hh.caplen;
		}
		pcap_dump((u_char *)d, &hh, copy);
	}
	pcap_dump_close(d);
	pcap_close(dead);
	pcap_close(in);
}

static void flip_byte(u_char *frame, uint32_t *len, uint32_t at)
{
	(void)len;
	frame[at] ^= 0x01;
}

/* Write a copy of a capture with one byte of frame @p frame_no flipped. */
static void write_corrupted(const char *src, const char *dst, uint64_t frame_no, uint32_t at)
{
	write_edited(src, dst, frame_no, flip_byte, at);
}

Test(app_pcap, bad_icrc_found_and_exit_1)
{
	char path[] = "/tmp/droce-test-pcap-XXXXXX";
	char args[256];
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	/* frame 28 is an RC SEND_FIRST: byte 100 is payload */
	write_corrupted("linux-rxe-rc_pingpong.pcap", path, 28, 100);
	snprintf(args, sizeof(args), "--summary '%s'", path);
	cr_expect_eq(run_pcap(args), 1);
	unlink(path);
	cr_expect_not_null(
		strstr(out, "RC_SEND_FIRST qp 0x000011 psn 13416431 len 1024 icrc BAD\n"));
	cr_expect_not_null(strstr(out, "malformed 1 (ICRC errors 1)"));
}

Test(app_pcap, missing_file_exit_2)
{
	cr_expect_eq(run_pcap("/nonexistent/droce.pcap"), 2);
}

Test(app_pcap, bad_option_exit_2)
{
	cr_expect_eq(run_pcap("--port 0 x.pcap"), 2);
	cr_expect_eq(run_pcap("--no-such-option x.pcap"), 2);
	cr_expect_eq(run_pcap(""), 2);
}

Test(app_pcap, total_over_several_captures)
{
	char args[9000];

	snprintf(args, sizeof(args), "-S %s", capture_arg("linux-rxe-uc_pingpong.pcap"));
	strcat(args, " ");
	strcat(args, capture_arg("linux-rxe-ud_pingpong.pcap"));
	cr_assert_eq(run_pcap(args), 0);
	cr_expect_not_null(
		strstr(out, "total: 2 captures, 40 RoCEv2 frames, 0 malformed (0 ICRC errors)"),
		"%s", out);
}

/* ------------------------------------------------------------ --replay */

static char *tmp_path(void)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/droce-test-pcap-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	return path;
}

Test(app_pcap, replay_options_need_replay)
{
	char args[4300];

	snprintf(args, sizeof(args), "--compare %s", capture_arg("linux-rxe-atomic_fa.pcap"));
	cr_expect_eq(run_cmd(args, true), 2);
	cr_expect_not_null(strstr(out, "need --replay"), "%s", out);
	cr_expect_eq(run_pcap("--out x.pcap y.pcap"), 2);
	cr_expect_eq(run_pcap("--timing y.pcap"), 2);
	cr_expect_eq(run_pcap("--server 10.99.0.2 y.pcap"), 2);
}

Test(app_pcap, replay_option_errors)
{
	char args[4300];

	cr_expect_eq(run_pcap("--replay"), 2, "no capture");
	cr_expect_eq(run_pcap("--replay --out"), 2, "--out without its file");
	cr_expect_eq(run_cmd("--replay a.pcap b.pcap", true), 2);
	cr_expect_not_null(strstr(out, "--replay takes one capture"), "%s", out);
	cr_expect_eq(run_cmd("--replay --timing --fast a.pcap", true), 2);
	cr_expect_not_null(strstr(out, "exclude each other"), "%s", out);
	cr_expect_eq(run_cmd("--replay --json a.pcap", true), 2);
	cr_expect_not_null(strstr(out, "--replay takes none of"), "%s", out);
	cr_expect_eq(run_pcap("--replay --summary a.pcap"), 2);
	cr_expect_eq(run_pcap("--replay --port 4792 a.pcap"), 2);
	snprintf(args, sizeof(args), "--replay --server 10.99.0 %s",
		 capture_arg("linux-rxe-atomic_fa.pcap"));
	cr_expect_eq(run_cmd(args, true), 2);
	cr_expect_not_null(strstr(out, "not an IPv4 or IPv6 address"), "%s", out);
	snprintf(args, sizeof(args), "--replay --server 10.99.0.9 %s",
		 capture_arg("linux-rxe-atomic_fa.pcap"));
	cr_expect_eq(run_cmd(args, true), 2);
	cr_expect_not_null(strstr(out, "no RC request to 10.99.0.9"), "%s", out);
}

Test(app_pcap, replay_missing_file_exit_2)
{
	cr_expect_eq(run_cmd("--replay --compare /nonexistent/droce.pcap", true), 2);
	cr_expect_not_null(strstr(out, "No such file"), "%s", out);
	cr_expect_null(strstr(out, "verdict"), "%s", out);
}

Test(app_pcap, replay_not_a_capture_exit_2)
{
	char *path = tmp_path();
	char args[256];
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs("this is not a capture\n", f);
	fclose(f);
	snprintf(args, sizeof(args), "--replay --compare '%s'", path);
	cr_expect_eq(run_cmd(args, true), 2);
	unlink(path);
	cr_expect_not_null(strstr(out, "unknown file format"), "%s", out);
}

Test(app_pcap, replay_without_rc_exit_2)
{
	char args[4300];

	snprintf(args, sizeof(args), "--replay %s", capture_arg("linux-rxe-ud_pingpong.pcap"));
	cr_expect_eq(run_cmd(args, true), 2);
	cr_expect_not_null(strstr(out, "no RC request"), "%s", out);
}

Test(app_pcap, replay_out_not_writable_exit_2)
{
	char args[4300];

	snprintf(args, sizeof(args), "--replay --out /nonexistent/droce.pcap %s",
		 capture_arg("linux-rxe-atomic_fa.pcap"));
	cr_expect_eq(run_cmd(args, true), 2);
	cr_expect_not_null(strstr(out, "/nonexistent/droce.pcap"), "%s", out);
}

Test(app_pcap, replay_compare_equal)
{
	char args[4300];

	snprintf(args, sizeof(args), "--replay --compare %s",
		 capture_arg("linux-rxe-rc_pingpong.pcap"));
	cr_assert_eq(run_pcap(args), 0, "%s", out);
	cr_expect_not_null(strstr(out, "server 10.99.0.2 QP 0x000011, client 10.99.0.3 QP "
				       "0x000011, path MTU 1024\n"),
			   "%s", out);
	cr_expect_not_null(strstr(out, "42 requests fed as fast as possible, droce sent 22 frames"),
			   "%s", out);
	cr_expect_not_null(strstr(out, "compared: 22 Linux responses, 9 IP IDs not captured"), "%s",
			   out);
	cr_expect_not_null(strstr(out, "verdict: equal within the tolerances\n"), "%s", out);
	cr_expect_null(strstr(out, "difference"), "%s", out);
}

Test(app_pcap, replay_without_compare_no_verdict)
{
	char args[4300];

	snprintf(args, sizeof(args), "--replay %s", capture_arg("linux-rxe-atomic_cs.pcap"));
	cr_assert_eq(run_pcap(args), 0, "%s", out);
	cr_expect_not_null(
		strstr(out, "100 requests fed as fast as possible, droce sent 100 frames"), "%s",
		out);
	cr_expect_null(strstr(out, "verdict"), "%s", out);
}

/* Four QP pairs: droce stands in for the first request's QP, and finds its client's QP. */
Test(app_pcap, replay_compare_one_qp_of_several)
{
	char args[4300];

	snprintf(args, sizeof(args), "--replay --compare %s",
		 capture_arg("linux-rxe-srq_pingpong.pcap"));
	cr_assert_eq(run_pcap(args), 0, "%s", out);
	cr_expect_not_null(strstr(out, "server 10.99.0.2 QP 0x000011, client 10.99.0.3 QP "), "%s",
			   out);
	cr_expect_not_null(strstr(out, "verdict: equal within the tolerances\n"), "%s", out);
}

/* Either side of a ping-pong can be the server: --server picks it. */
Test(app_pcap, replay_compare_server_chosen)
{
	char args[4300];

	snprintf(args, sizeof(args), "--replay --compare --server fd00::3 %s",
		 capture_arg("linux-rxe-ipv6_rc_pingpong.pcap"));
	cr_assert_eq(run_pcap(args), 0, "%s", out);
	cr_expect_not_null(strstr(out, "server fd00::3 QP 0x000011, client fd00::2 QP 0x000011"),
			   "%s", out);
	cr_expect_not_null(strstr(out, "verdict: equal within the tolerances\n"), "%s", out);
}

Test(app_pcap, replay_compare_timing)
{
	char args[4300];

	snprintf(args, sizeof(args), "--replay --compare --timing %s",
		 capture_arg("linux-rxe-atomic_fa.pcap"));
	cr_assert_eq(run_pcap(args), 0, "%s", out);
	cr_expect_not_null(strstr(out, "100 requests fed at the capture's times"), "%s", out);
	cr_expect_not_null(strstr(out, "verdict: equal within the tolerances\n"), "%s", out);
}

/* A cut capture: droce answers requests whose responses fell past the cut. */
Test(app_pcap, replay_truncated_capture)
{
	char args[4300];

	snprintf(args, sizeof(args), "--replay --compare %s",
		 capture_arg("linux-rxe-write_bw-head.pcap"));
	cr_expect_eq(run_pcap(args), 1, "%s", out);
	cr_expect_not_null(strstr(out, "difference: droce sent 7 responses more than Linux"), "%s",
			   out);
	cr_expect_not_null(strstr(out, "verdict: 1 difference\n"), "%s", out);
	snprintf(args, sizeof(args), "--replay --compare --truncated %s",
		 capture_arg("linux-rxe-write_bw-head.pcap"));
	cr_expect_eq(run_pcap(args), 0, "%s", out);
	cr_expect_not_null(strstr(out, "7 droce responses after the capture's end"), "%s", out);
	cr_expect_not_null(strstr(out, "verdict: equal within the tolerances\n"), "%s", out);
}

/* An ACK's MSN rewritten (and its ICRC made good again): droce's cannot match it. */
static void set_msn(u_char *frame, uint32_t *len, uint32_t msn)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct droce_hdr_fields f;
	struct droce_addr a;
	struct droce_pkt pkt;
	uint16_t ip_id;
	ssize_t n;

	cr_assert_eq(droce_parse(frame, *len, &cfg, &pkt), DROCE_PARSE_OK);
	cr_assert(pkt.mask & DROCE_OPM_AETH);
	droce_pkt_fields(&pkt, frame, &f);
	droce_pkt_addr(&pkt, frame, &a, &ip_id);
	f.aeth.msn = msn;
	n = droce_build_frame(frame, 65536, &a, ip_id, &f, NULL, 0);
	cr_assert_gt(n, 0);
	*len = (uint32_t)n;
}

Test(app_pcap, replay_edited_capture_exit_1)
{
	char *path = tmp_path();
	char args[256];

	/* frame 30 is the server's first ACK: PSN 13416432, MSN 1 */
	write_edited("linux-rxe-rc_pingpong.pcap", path, 30, set_msn, 7);
	snprintf(args, sizeof(args), "'%s'", path);
	cr_expect_eq(run_pcap(args), 0, "the edited frame is well formed: %s", out);
	cr_expect_not_null(strstr(out, "AETH{syndrome=0x1f ACK msn=7} icrc ok\n"), "%s", out);
	snprintf(args, sizeof(args), "--replay --compare '%s'", path);
	cr_expect_eq(run_pcap(args), 1, "%s", out);
	unlink(path);
	cr_expect_not_null(strstr(out, "difference: frame 30: MSN 7, droce 1 (answering 29)\n"),
			   "%s", out);
	cr_expect_not_null(strstr(out, "verdict: 1 difference\n"), "%s", out);
}

static uint64_t count_after(const char *text, const char *prefix)
{
	const char *at = strstr(text, prefix);

	cr_assert_not_null(at, "no '%s' in %s", prefix, text);
	return strtoull(at + strlen(prefix), NULL, 10);
}

/* capture -> dissect -> replay -> dissect: droce's frames, as written, are all good RoCEv2. */
Test(app_pcap, replay_round_trip)
{
	char *path = tmp_path();
	char args[4400];
	uint64_t sent;
	uint32_t magic = 0;
	FILE *f;

	snprintf(args, sizeof(args), "-S %s", capture_arg("linux-rxe-read_bw-head.pcap"));
	cr_assert_eq(run_pcap(args), 0, "%s", out);
	cr_expect_not_null(strstr(out, "malformed 0 (ICRC errors 0)"), "%s", out);
	snprintf(args, sizeof(args), "--replay --compare --truncated --out '%s' %s", path,
		 capture_arg("linux-rxe-read_bw-head.pcap"));
	cr_assert_eq(run_pcap(args), 0, "%s", out);
	sent = count_after(out, "droce sent ");
	cr_expect_gt(sent, 0);
	f = fopen(path, "rb");
	cr_assert_not_null(f);
	cr_expect_eq(fread(&magic, 4, 1, f), 1);
	fclose(f);
	cr_expect_eq(magic, 0xa1b23c4du, "nanosecond pcap magic, not %#x", magic);
	snprintf(args, sizeof(args), "-s '%s'", path);
	cr_expect_eq(run_pcap(args), 0, "%s", out);
	unlink(path);
	cr_expect_eq(count_after(out, "RoCEv2 "), sent, "%s", out);
	cr_expect_not_null(strstr(out, "malformed 0 (ICRC errors 0)"), "%s", out);
	cr_expect(strstr(out, "10.99.0.2 > 10.99.0.3 RC_RDMA_READ_RESPONSE_FIRST qp 0x000011 ") ==
			  strstr(out, "10.99.0.2 > "),
		  "droce's first frame is a READ response: %.200s", out);
	cr_expect_null(strstr(out, "10.99.0.3 > "), "only droce's frames: %.200s", out);
}

/* ---- CM MADs (GSI packets) */

static int count_of(const char *text, const char *needle)
{
	int n = 0;

	for (text = strstr(text, needle); text != NULL; text = strstr(text + 1, needle))
		n++;
	return n;
}

Test(app_pcap, cm_mads_every_field_named)
{
	cr_assert_eq(run_pcap(capture_arg("linux-rxe-rping_cm.pcap")), 0);
	cr_expect_eq(count_of(out, "        MAD{base_version=1 mgmt_class=0x07(CM) class_version=2 "
				   "method=0x03(Send) status=0x0000 class_specific=0x0000 "
				   "tid=0x000000026841255a attr_id=0x00"),
		     5, "five MAD headers: %s", out);
	cr_expect_not_null(strstr(out, "        CM REQ{local_comm_id=0x5a254168 "
				       "service_id=0x0000000001061c06 "
				       "local_ca_guid=0x505400fffe000003 local_qkey=0x00000000 "
				       "local_qpn=0x000011 responder_resources=1 "),
			   "%s", out);
	cr_expect_not_null(strstr(out, " transport_service_type=0(RC) "), "%s", out);
	cr_expect_not_null(strstr(out, " primary_local_gid=::ffff:10.99.0.3 "
				       "primary_remote_gid=::ffff:10.99.0.2 "
				       "primary_flow_label=0x96b44 primary_packet_rate=0 "),
			   "%s", out);
	cr_expect_not_null(strstr(out, "        rdma_cm{port_space=0x0106 port=7174 version=0 "
				       "ip_version=4 src_port=53506 src=10.99.0.3 dst=10.99.0.2 "
				       "private_data=56*00}\n"),
			   "%s", out);
	cr_expect_not_null(strstr(out, "        CM REP{local_comm_id=0x023bd329 "
				       "remote_comm_id=0x5a254168 local_qkey=0x00000000 "
				       "local_qpn=0x000011 local_eecn=0x000000 "
				       "starting_psn=0x6989b0 responder_resources=1 "
				       "initiator_depth=1 target_ack_delay=15 failover_accepted=0 "
				       "end_to_end_flow_control=0 rnr_retry_count=7 srq=0 "
				       "local_ca_guid=0x505400fffe000002 private_data=196*00}\n"),
			   "%s", out);
	cr_expect_not_null(strstr(out, "        CM RTU{local_comm_id=0x5a254168 "
				       "remote_comm_id=0x023bd329 private_data=224*00}\n"),
			   "%s", out);
	cr_expect_not_null(strstr(out, "        CM DREQ{local_comm_id=0x5a254168 "
				       "remote_comm_id=0x023bd329 remote_qpn_eecn=0x000011 "
				       "private_data=220*00}\n"),
			   "%s", out);
	cr_expect_not_null(strstr(out, "        CM DREP{local_comm_id=0x023bd329 "
				       "remote_comm_id=0x5a254168 private_data=224*00}\n"),
			   "%s", out);
	cr_expect_eq(count_of(out, "        CM "), 5, "one CM line per MAD");
}

Test(app_pcap, cm_mads_json)
{
	char args[4300];

	snprintf(args, sizeof(args), "--json %s", capture_arg("linux-rxe-rping_cm.pcap"));
	cr_assert_eq(run_pcap(args), 0);
	cr_expect_eq(count_of(out, ",\"mad\":{\"base_version\":1,\"mgmt_class\":7,"), 5, "%s", out);
	cr_expect_not_null(strstr(out, ",\"cm\":{\"msg\":\"REQ\",\"local_comm_id\":1512391016,"),
			   "%s", out);
	cr_expect_not_null(strstr(out, "\"primary_local_gid\":\"::ffff:10.99.0.3\""), "%s", out);
	cr_expect_not_null(strstr(out, ",\"rdma_cm\":{\"port_space\":262,\"port\":7174,"
				       "\"version\":0,\"ip_version\":4,\"src_port\":53506,"
				       "\"src\":\"10.99.0.3\",\"dst\":\"10.99.0.2\","),
			   "%s", out);
	cr_expect_not_null(strstr(out, ",\"cm\":{\"msg\":\"DREP\",\"local_comm_id\":37475113,"
				       "\"remote_comm_id\":1512391016,\"private_data\":\"0000"),
			   "%s", out);
}

/* A MAD byte rewritten and the ICRC made good again: a well-formed frame, a malformed MAD. */
static void set_mad_byte(u_char *frame, uint32_t *len, uint32_t at_value)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct droce_pkt pkt;

	cr_assert_eq(droce_parse(frame, *len, &cfg, &pkt), DROCE_PARSE_OK);
	frame[pkt.payload_off + (at_value >> 8)] = (uint8_t)at_value;
	droce_build_trailer(frame, &pkt);
}

static void expect_malformed_mad(uint32_t at, uint8_t value, const char *reason)
{
	char *path = tmp_path();
	char args[256], line[128];

	/* frame 17 is the REQ */
	write_edited("linux-rxe-rping_cm.pcap", path, 17, set_mad_byte, at << 8 | value);
	snprintf(args, sizeof(args), "'%s'", path);
	cr_expect_eq(run_pcap(args), 0, "the frame itself is well formed: %s", out);
	unlink(path);
	snprintf(line, sizeof(line), "icrc ok\n        MAD MALFORMED %s\n", reason);
	cr_expect_not_null(strstr(out, line), "no '%s' in %s", reason, out);
	cr_expect_eq(count_of(out, "        CM "), 4, "the other four MADs still dissected");
}

/* The MAD made a ClassPortInfo (attribute 0x0001) Get, the ICRC made good again. */
static void set_class_port_info_get(u_char *frame, uint32_t *len, uint32_t unused)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct droce_pkt pkt;
	u_char *mad;

	(void)unused;
	cr_assert_eq(droce_parse(frame, *len, &cfg, &pkt), DROCE_PARSE_OK);
	mad = frame + pkt.payload_off;
	mad[3] = DROCE_MAD_METHOD_GET;
	mad[16] = 0x00;
	mad[17] = 0x01;
	droce_build_trailer(frame, &pkt);
}

/* The REQ (frame 17) turned into a ClassPortInfo Get (16.7): its header, not MALFORMED. */
Test(app_pcap, cm_class_port_info_is_not_malformed)
{
	char *path = tmp_path();
	char args[256];

	write_edited("linux-rxe-rping_cm.pcap", path, 17, set_class_port_info_get, 0);
	snprintf(args, sizeof(args), "'%s'", path);
	cr_expect_eq(run_pcap(args), 0, "the frame itself is well formed: %s", out);
	cr_expect_null(strstr(out, "MALFORMED"), "a ClassPortInfo Get called malformed: %s", out);
	cr_expect_eq(count_of(out, "method=0x01(Get) "), 1, "a Get: %s", out);
	cr_expect_eq(count_of(out, "attr_id=0x0001(ClassPortInfo)"), 1, "the MAD named: %s", out);
	cr_expect_eq(count_of(out, "        CM "), 4, "no CM message for it, the four others");
	unlink(path);
}

Test(app_pcap, cm_malformed_mads_named)
{
	expect_malformed_mad(0, 2, "mad_bad_base_version");
	expect_malformed_mad(2, 1, "mad_bad_class_version");
	expect_malformed_mad(3, 0x81, "mad_bad_method");
	expect_malformed_mad(17, 0x42, "mad_bad_attr");
}
