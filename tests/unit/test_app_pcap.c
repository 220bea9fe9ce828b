/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-pcap as a user runs it: its lines, its JSON, its summary, and an exit
 * status that tells a good capture from one with a bad ICRC or a bad file.
 */
#include <criterion/criterion.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "droce_test.h"

static char out[1 << 20];

/* Run droce-pcap with @p args; its stdout lands in out[]; returns the exit status. */
static int run_pcap(const char *args)
{
	const char *bin = getenv("DROCE_PCAP");
	char cmd[8192];
	size_t n;
	FILE *p;
	int st;

	cr_assert_not_null(bin, "DROCE_PCAP is not set (run the tests through meson)");
	snprintf(cmd, sizeof(cmd), "'%s' %s 2>/dev/null", bin, args);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	cr_assert(WIFEXITED(st), "droce-pcap did not exit normally");
	return WEXITSTATUS(st);
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

/* Write a copy of a capture with one byte of frame @p frame_no flipped. */
static void write_corrupted(const char *src, const char *dst, uint64_t frame_no, uint32_t at)
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
		u_char copy[65536];

		memcpy(copy, data, h->caplen);
		if (++n == frame_no)
			copy[at] ^= 0x01;
		pcap_dump((u_char *)d, h, copy);
	}
	pcap_dump_close(d);
	pcap_close(dead);
	pcap_close(in);
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
