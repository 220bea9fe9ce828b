/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf as a user runs it: perftest's command line (exit status 2 on a
 * usage error), a short --loopback run of every test whose output has
 * perftest's header, address lines and table, --out_json with the table's
 * numbers, and --check; -u, -e, -b and --use-srq, each shown to have happened
 * (the QP's timeout, the channel's events, both directions' messages checked,
 * the receives posted to an SRQ). Figures are printed, never judged: these
 * machines are shared. Two-host runs: test_app_perf_twohost.c and
 * tests/integration.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BW_TITLE \
	" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
#define LAT_TITLE                                                                             \
	" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]  " \
	"  t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
#define DASHES                                                                                    \
	"---------------------------------------------------------------------------------------" \
	"\n"

static char out[1 << 18];

static void setup(void)
{
	/* --loopback sets DROCE_DEVICES itself when it is unset; the embedded engine */
	unsetenv("DROCE_DEVICES");
	unsetenv("DROCE_DAEMON");
	/* the engine's DPDK memory on plain pages: no run fails because another test
	 * (app_perf_twohost runs alongside) took the free hugepages in the meantime */
	setenv("DROCE_NO_HUGE", "1", 1);
}

TestSuite(app_perf, .init = setup, .timeout = 120);

/* Run droce-perf with @p args; its stdout lands in out[]; returns the exit status. */
static int run_perf(const char *args)
{
	const char *bin = getenv("DROCE_PERF");
	char cmd[4096];
	size_t n;
	FILE *p;
	int st;

	cr_assert_not_null(bin, "DROCE_PERF is not set (run the tests through meson)");
	snprintf(cmd, sizeof(cmd), "'%s' %s 2>/dev/null", bin, args);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	cr_assert(WIFEXITED(st), "droce-perf did not exit normally: %s", args);
	return WEXITSTATUS(st);
}

static void expect_usage_error(const char *args)
{
	cr_expect_eq(run_perf(args), 2, "'%s' is a usage error", args);
}

/* Run droce-perf with @p args; its stderr lands in out[]; returns the exit status. */
static int run_perf_stderr(const char *args)
{
	const char *bin = getenv("DROCE_PERF");
	char cmd[4096];
	size_t n;
	FILE *p;
	int st;

	cr_assert_not_null(bin, "DROCE_PERF is not set (run the tests through meson)");
	snprintf(cmd, sizeof(cmd), "'%s' %s 2>&1 >/dev/null", bin, args);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	cr_assert(WIFEXITED(st), "droce-perf did not exit normally: %s", args);
	return WEXITSTATUS(st);
}

/* A refused combination: exit status 2 and a message naming what to change. */
static void expect_refused(const char *args, const char *says)
{
	cr_expect_eq(run_perf_stderr(args), 2, "'%s' is a usage error", args);
	cr_expect_not_null(strstr(out, says), "'%s': no '%s' in: %s", args, says, out);
}

Test(app_perf, usage_errors_exit_2)
{
	expect_usage_error("");
	expect_usage_error("--loopback");
	expect_usage_error("no_such_test --loopback");
	expect_usage_error("write_bw --loopback somehost");
	expect_usage_error("write_bw host1 host2");
	expect_usage_error("write_bw --loopback --no-such-option");
	expect_usage_error("write_bw --loopback -s");
	expect_usage_error("write_bw --loopback -s abc");
	expect_usage_error("write_bw --loopback -s 0");
	expect_usage_error("write_bw --loopback -n 4");
	expect_usage_error("write_bw --loopback -q 0");
	expect_usage_error("write_bw --loopback -t 0");
	expect_usage_error("write_bw --loopback -m 1000");
	expect_usage_error("write_bw --loopback -m 8192");
	expect_usage_error("write_bw --loopback -c XRC");
	expect_usage_error("write_bw --loopback -c UD");
	expect_usage_error("read_bw --loopback -c UC");
	expect_usage_error("read_lat --loopback -c UD");
	expect_usage_error("write_lat --loopback -q 2");
	expect_usage_error("write_bw --loopback -a -D 2");
	expect_usage_error("write_bw --loopback -a -s 64");
	expect_usage_error("write_bw --loopback --max-size 64");
	expect_usage_error("write_bw --loopback -D 0");
	expect_usage_error("write_bw --loopback -I 100000");
	expect_usage_error("send_bw --loopback -c UD -s 8192");
	expect_usage_error("atomic_bw --loopback -s 16");
	expect_usage_error("atomic_lat --loopback -a");
	expect_usage_error("atomic_bw --loopback -c UC");
	expect_usage_error("atomic_bw --loopback -A XOR");
	expect_usage_error("write_bw --loopback -A CMP_AND_SWAP");
	expect_usage_error("write_lat --loopback -l 2");
	expect_usage_error("write_bw --loopback -l 3 -n 100");
	expect_usage_error("write_bw --loopback -l 300");
	expect_usage_error("write_bw --loopback -l 64 -t 32");
	expect_usage_error("write_bw --loopback -l 10 -Q 3 -n 100");
	expect_usage_error("write_bw --loopback -p 0");
	expect_usage_error("write_bw --loopback -p 70000");
	/* two hosts: what would leave perftest waiting is refused */
	expect_usage_error("write_bw --check 127.0.0.1");
	expect_usage_error("send_bw -D 2 127.0.0.1");
	expect_usage_error("write_lat -D 2");
}

Test(app_perf, mode_flags_refused_where_perftest_refuses_them)
{
	/* a WRITE's target has no completion to wait for */
	expect_refused("write_bw --loopback -e", "-e waits for completions");
	expect_refused("write_lat --loopback --events", "-e waits for completions");
	expect_refused("send_bw --loopback -e -D 2", "-e and -D do not go together");
	expect_refused("send_lat --loopback -b", "-b is for bandwidth tests");
	expect_refused("read_lat --loopback --bidirectional", "-b is for bandwidth tests");
	expect_refused("write_bw --loopback --use-srq", "--use-srq is for send tests");
	expect_refused("atomic_bw --loopback --use-srq", "--use-srq is for send tests");
	expect_refused("send_bw --loopback --use-srq -q 8 -r 4", "a receive for every QP");
	expect_refused("write_bw --loopback -u 32", "bad value for -u");
	expect_refused("write_bw --loopback -u -1", "bad value for -u");
	expect_refused("write_bw --loopback --qp-timeout=x", "bad value for -u");
	/* two hosts: the same rules */
	expect_refused("write_bw -e 127.0.0.1", "-e waits for completions");
	expect_refused("read_bw --use-srq", "--use-srq is for send tests");
}

Test(app_perf, help_and_version_exit_0)
{
	cr_expect_eq(run_perf("-h"), 0);
	cr_expect_not_null(strstr(out, "usage: droce-perf TEST --loopback"));
	cr_expect_not_null(strstr(out, "droce-perf TEST [options] SERVER"));
	cr_expect_not_null(strstr(out, "-A, --atomic_type"));
	cr_expect_not_null(strstr(out, "--out_json"));
	cr_expect_not_null(strstr(out, "--use_hugepages"));
	cr_expect_not_null(strstr(out, "-u, --qp-timeout"));
	cr_expect_not_null(strstr(out, "-e, --events"));
	cr_expect_not_null(strstr(out, "-b, --bidirectional"));
	cr_expect_not_null(strstr(out, "--use-srq"));
	cr_expect_not_null(strstr(out, "--report-both"));
	cr_expect_eq(run_perf("--version"), 0);
	cr_expect(strncmp(out, "droce-perf ", 11) == 0, "%s", out);
}

static void expect_line(const char *line)
{
	cr_expect_not_null(strstr(out, line), "no line '%s' in:\n%s", line, out);
}

/* perftest's header block: the first line dashes, then the test's title. */
static void expect_header(const char *title, const char *conn)
{
	char line[128];

	cr_expect(strncmp(out, DASHES, strlen(DASHES)) == 0, "%s", out);
	snprintf(line, sizeof(line), "\n                    %s\n", title);
	expect_line(line);
	expect_line(" Dual-port       : OFF\t\tDevice         : droce0\n");
	expect_line(" Number of qps   : ");
	snprintf(line, sizeof(line), " Connection type : %s\t\tUsing SRQ      : OFF\n", conn);
	expect_line(line);
	expect_line(" TX depth        : ");
	expect_line(" Mtu             : ");
	expect_line(" Link type       : Ethernet\n");
	expect_line(" GID index       : 1\n");
	expect_line(" local address: LID 0000 QPN 0x");
	expect_line(" remote address: LID 0000 QPN 0x");
	expect_line(" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:99:00:01\n");
	expect_line(" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:99:00:02\n");
}

/* The rows under @p title: up to @p max rows of @p cols numbers each; returns the count. */
static int table_rows(const char *title, int cols, double rows[][9], int max)
{
	const char *p = strstr(out, title);
	int n = 0;

	cr_assert_not_null(p, "no table title in:\n%s", out);
	p += strlen(title);
	while (n < max && *p == ' ' && p[1] >= '0' && p[1] <= '9') {
		const char *eol = strchr(p, '\n');
		char *end;

		cr_assert_not_null(eol);
		for (int i = 0; i < cols; i++) {
			rows[n][i] = strtod(p, &end);
			cr_assert(end != p && end <= eol, "column %d of '%.*s'", i, (int)(eol - p),
				  p);
			p = end;
		}
		cr_expect(p == eol || strspn(p, " ") == (size_t)(eol - p), "extra text in a row");
		p = eol + 1;
		n++;
	}
	cr_expect(strncmp(p, DASHES, strlen(DASHES)) == 0, "the table ends with dashes");
	return n;
}

static void bw_run(const char *args, const char *title, const char *conn, double size, double iters)
{
	double rows[1][9];

	cr_assert_eq(run_perf(args), 0, "%s:\n%s", args, out);
	expect_header(title, conn);
	expect_line(" CQ Moderation   : ");
	cr_assert_eq(table_rows(BW_TITLE, 5, rows, 1), 1);
	cr_expect_eq(rows[0][0], size);
	cr_expect_eq(rows[0][1], iters);
	cr_expect_gt(rows[0][3], 0, "BW average is a figure");
	cr_expect_geq(rows[0][2], rows[0][3], "peak below average");
	cr_expect_gt(rows[0][4], 0, "MsgRate is a figure");
}

static void lat_run(const char *args, const char *title, const char *conn, double size,
		    double iters)
{
	double rows[1][9];

	cr_assert_eq(run_perf(args), 0, "%s:\n%s", args, out);
	expect_header(title, conn);
	cr_assert_eq(table_rows(LAT_TITLE, 9, rows, 1), 1);
	cr_expect_eq(rows[0][0], size);
	cr_expect_eq(rows[0][1], iters);
	cr_expect_gt(rows[0][2], 0, "t_min is a figure");
	cr_expect_leq(rows[0][2], rows[0][4], "t_min <= t_typical");
	cr_expect_leq(rows[0][4], rows[0][3], "t_typical <= t_max");
	cr_expect_leq(rows[0][6], rows[0][3], "stdev <= max");
	cr_expect_leq(rows[0][7], rows[0][8], "99% <= 99.9%");
}

Test(app_perf, write_bw)
{
	bw_run("write_bw --loopback -F -n 50 -s 4096", "RDMA_Write BW Test", "RC", 4096, 50);
	expect_line(" Max inline data : 0[B]\n");
	expect_line(" RKey 0x");
}

Test(app_perf, send_bw)
{
	bw_run("send_bw --loopback -F -n 50 -s 4096", "Send BW Test", "RC", 4096, 50);
	expect_line(" RX depth        : 512\n");
	cr_expect_null(strstr(out, "RKey"), "send tests print no RKey");
}

Test(app_perf, read_bw)
{
	bw_run("read_bw --loopback -F -n 50 -s 4096", "RDMA_Read BW Test", "RC", 4096, 50);
	expect_line(" Outstand reads  : 16\n");
}

Test(app_perf, write_lat)
{
	lat_run("write_lat --loopback -F -n 50", "RDMA_Write Latency Test", "RC", 2, 50);
	expect_line(" TX depth        : 1\n");
	expect_line(" Max inline data : 220[B]\n");
}

Test(app_perf, send_lat)
{
	lat_run("send_lat --loopback -F -n 50 -s 3000", "Send Latency Test", "RC", 3000, 50);
}

Test(app_perf, read_lat)
{
	lat_run("read_lat --loopback -F -n 50 -s 64", "RDMA_Read Latency Test", "RC", 64, 50);
}

Test(app_perf, atomic_bw)
{
	bw_run("atomic_bw --loopback -F -n 50", "Atomic FETCH_AND_ADD BW Test", "RC", 8, 50);
	expect_line(" Outstand reads  : 16\n");
	cr_expect_null(strstr(out, "RKey"), "perftest prints no RKey for atomics");
}

Test(app_perf, atomic_lat_compare_and_swap)
{
	lat_run("atomic_lat --loopback -F -n 50 -A CMP_AND_SWAP",
		"Atomic CMP_AND_SWAP Latency Test", "RC", 8, 50);
}

Test(app_perf, post_list)
{
	/* 50 lists of 10, a completion a list */
	bw_run("write_bw --loopback -F -n 500 -s 512 -l 10", "RDMA_Write Post List BW Test", "RC",
	       512, 500);
	expect_line(" Post List       : 10\n");
	expect_line(" CQ Moderation   : 10\n");
}

Test(app_perf, uc_write_bw_and_ud_send_lat)
{
	bw_run("write_bw --loopback -F -n 20 -s 1000 -c UC", "RDMA_Write BW Test", "UC", 1000, 20);
	lat_run("send_lat --loopback -F -n 20 -s 1000 -c UD", "Send Latency Test", "UD", 1000, 20);
}

Test(app_perf, all_sizes_bounded)
{
	double rows[32][9];
	int n;

	cr_assert_eq(run_perf("write_bw --loopback -F -a --max-size 64 -n 10"), 0, "%s", out);
	n = table_rows(BW_TITLE, 5, rows, 32);
	cr_assert_eq(n, 6, "2, 4 .. 64: %d rows", n);
	for (int i = 0; i < n; i++)
		cr_expect_eq(rows[i][0], (double)(2 << i));
}

Test(app_perf, qps_mtu_gbits)
{
	double rows[1][9];

	cr_assert_eq(run_perf("write_bw --loopback -F -q 3 -m 1024 -n 20 -s 5000 -t 16 "
			      "--report_gbits"),
		     0, "%s", out);
	expect_line(" Number of qps   : 3\t\t");
	expect_line(" Mtu             : 1024[B]\n");
	expect_line(" TX depth        : 16\n");
	cr_expect_eq(table_rows(" #bytes     #iterations    BW peak[Gb/sec]    BW "
				"average[Gb/sec]   MsgRate[Mpps]\n",
				5, rows, 1),
		     1);
	cr_expect_eq(rows[0][1], 60, "#iterations counts every QP's, as perftest's");
	/* one address pair per QP */
	cr_expect_not_null(strstr(strstr(strstr(out, " local address:") + 1, " local address:") + 1,
				  " local address:"));
}

Test(app_perf, duration)
{
	double rows[1][9];

	cr_assert_eq(run_perf("send_bw --loopback -F -D 1 -s 1024"), 0, "%s", out);
	cr_assert_eq(table_rows(BW_TITLE, 5, rows, 1), 1);
	cr_expect_gt(rows[0][1], 0);
}

/* The value of "key": in the JSON text. */
static const char *json_value(const char *json, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(json, k);
	cr_assert_not_null(p, "no %s in %s", key, json);
	return p + strlen(k);
}

/* Minimal JSON validity: balanced braces and brackets outside strings, one object. */
static void expect_json_object(const char *s)
{
	int depth = 0;
	bool in_str = false;

	cr_expect_eq(s[0], '{');
	for (const char *p = s; *p != '\0'; p++) {
		if (in_str) {
			if (*p == '\\')
				p++;
			else if (*p == '"')
				in_str = false;
			continue;
		}
		if (*p == '"')
			in_str = true;
		else if (*p == '{' || *p == '[')
			depth++;
		else if (*p == '}' || *p == ']')
			depth--;
		cr_assert_geq(depth, 0);
		if (depth == 0)
			cr_expect(p[1] == '\0' || strspn(p + 1, "\n") == strlen(p + 1),
				  "text after the object");
		if (depth == 0)
			break;
	}
	cr_expect_eq(depth, 0);
	cr_expect(!in_str);
}

static char *read_file(const char *path)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

Test(app_perf, out_json_has_the_table_numbers)
{
	char path[] = "/tmp/droce-test-perf-XXXXXX", args[256];
	double rows[1][9];
	const char *json;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(args, sizeof(args), "write_bw --loopback -F -n 30 -s 2048 --out_json %s", path);
	cr_assert_eq(run_perf(args), 0, "%s", out);
	cr_assert_eq(table_rows(BW_TITLE, 5, rows, 1), 1);
	json = read_file(path);
	unlink(path);
	expect_json_object(json);
	cr_expect(strncmp(json_value(json, "test"), "\"write_bw\"", 10) == 0);
	cr_expect(strncmp(json_value(json, "connection"), "\"RC\"", 4) == 0);
	cr_expect_eq(strtod(json_value(json, "bytes"), NULL), rows[0][0]);
	cr_expect_eq(strtod(json_value(json, "iterations"), NULL), rows[0][1]);
	cr_expect_eq(strtod(json_value(json, "bw_peak"), NULL), rows[0][2]);
	cr_expect_eq(strtod(json_value(json, "bw_average"), NULL), rows[0][3]);
	cr_expect_eq(strtod(json_value(json, "msg_rate"), NULL), rows[0][4]);
}

Test(app_perf, out_json_latency)
{
	char path[] = "/tmp/droce-test-perf-XXXXXX", args[256];
	double rows[1][9];
	const char *json;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(args, sizeof(args), "read_lat --loopback -F -n 30 --out_json_file=%s", path);
	cr_assert_eq(run_perf(args), 0, "%s", out);
	cr_assert_eq(table_rows(LAT_TITLE, 9, rows, 1), 1);
	json = read_file(path);
	unlink(path);
	expect_json_object(json);
	cr_expect_eq(strtod(json_value(json, "t_min"), NULL), rows[0][2]);
	cr_expect_eq(strtod(json_value(json, "t_typical"), NULL), rows[0][4]);
	cr_expect_eq(strtod(json_value(json, "p99_9"), NULL), rows[0][8]);
}

/* -a: "results" holds every size's row, in the table's order (tools/plot-perf.py reads them). */
Test(app_perf, out_json_all_sizes)
{
	char path[] = "/tmp/droce-test-perf-XXXXXX", args[256];
	double rows[32][9];
	const char *json;
	int fd = mkstemp(path), n;

	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(args, sizeof(args), "write_lat --loopback -F -a --max-size 32 -n 10 --out_json %s",
		 path);
	cr_assert_eq(run_perf(args), 0, "%s", out);
	n = table_rows(LAT_TITLE, 9, rows, 32);
	cr_assert_eq(n, 5, "2, 4 .. 32: %d rows", n);
	json = read_file(path);
	unlink(path);
	expect_json_object(json);
	json = json_value(json, "results");
	cr_expect_eq(json[0], '[');
	for (int i = 0; i < n; i++) {
		json = json_value(json, "bytes");
		cr_expect_eq(strtod(json, NULL), rows[i][0], "row %d's size", i);
		cr_expect_eq(strtod(json_value(json, "t_typical"), NULL), rows[i][4],
			     "row %d's t_typical", i);
		cr_expect_eq(strtod(json_value(json, "p99"), NULL), rows[i][7], "row %d's p99", i);
	}
	cr_expect_null(strstr(json, "\"bytes\": "), "more JSON rows than table rows");
}

static void check_run(const char *args, const char *verified)
{
	cr_assert_eq(run_perf(args), 0, "%s:\n%s", args, out);
	expect_line(" Data check      : ON\n");
	expect_line(verified);
}

Test(app_perf, check_every_test)
{
	check_run("write_bw --loopback -F --check -n 40 -s 3000 -t 8",
		  " Data check: 40 messages verified, 0 errors, 0 lost\n");
	check_run("send_bw --loopback -F --check -n 40 -s 3000 -q 2",
		  " Data check: 80 messages verified, 0 errors, 0 lost\n");
	check_run("read_bw --loopback -F --check -n 40 -s 3000",
		  " Data check: 40 messages verified, 0 errors, 0 lost\n");
	check_run("write_lat --loopback -F --check -n 20 -s 1000",
		  " Data check: 40 messages verified, 0 errors, 0 lost\n");
	check_run("send_lat --loopback -F --check -n 20 -s 5000",
		  " Data check: 40 messages verified, 0 errors, 0 lost\n");
	check_run("read_lat --loopback -F --check -n 20 -s 5000",
		  " Data check: 20 messages verified, 0 errors, 0 lost\n");
	/* the n-th FETCH_AND_ADD on a QP's word fetches n */
	check_run("atomic_bw --loopback -F --check -n 300 -q 2",
		  " Data check: 600 messages verified, 0 errors, 0 lost\n");
	check_run("atomic_lat --loopback -F --check -n 20",
		  " Data check: 20 messages verified, 0 errors, 0 lost\n");
	check_run("atomic_bw --loopback -F --check -n 40 -A CMP_AND_SWAP",
		  " Data check: 40 messages verified, 0 errors, 0 lost\n");
}

Test(app_perf, use_hugepages)
{
	/* hugepages when there are free ones, plain pages otherwise: the run is the same */
	check_run("write_bw --loopback -F --check --use_hugepages -n 40 -s 3000",
		  " Data check: 40 messages verified, 0 errors, 0 lost\n");
	check_run("send_lat --loopback -F --check --use_hugepages -n 20 -s 64",
		  " Data check: 40 messages verified, 0 errors, 0 lost\n");
}

Test(app_perf, check_all_sizes_ud)
{
	cr_assert_eq(run_perf("send_bw --loopback -F --check -c UD -a -n 10"), 0, "%s", out);
	/* 2 .. 4096: 12 sizes; UD may lose, so only no errors */
	expect_line(" messages verified, 0 errors, ");
}

Test(app_perf, devices_of_the_user)
{
	/* a DROCE_DEVICES of the user's is kept: its addresses show in the GIDs */
	setenv("DROCE_DEVICES",
	       "a0:mac=02:00:00:00:00:11,ip=10.7.0.1,mtu=2200,link=x "
	       "a1:mac=02:00:00:00:00:12,ip=10.7.0.2,mtu=2200,link=x",
	       1);
	cr_assert_eq(run_perf("send_lat --loopback -F -n 10"), 0, "%s", out);
	expect_line(" Dual-port       : OFF\t\tDevice         : a0\n");
	expect_line(" Mtu             : 2048[B]\n");
	expect_line(" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:07:00:02\n");
	expect_line(" Data ex. method : loopback (a0 <-> a1)\n");
}

Test(app_perf, one_device_is_a_failure_not_a_usage_error)
{
	setenv("DROCE_DEVICES", "solo:ip=10.7.0.1", 1);
	cr_expect_eq(run_perf("write_bw --loopback -F -n 10"), 1);
	cr_expect_eq(run_perf("write_bw --loopback -F -n 10 -d nosuch"), 1);
}

Test(app_perf, no_droced_is_a_failure_not_a_usage_error)
{
	/* with DROCE_DAEMON the devices are droced's (tests/integration/perf_daemon.sh) */
	setenv("DROCE_DAEMON", "/nonexistent/droced.sock", 1);
	cr_expect_eq(run_perf("write_bw --loopback -F -n 10"), 1);
}

/* A run with --out_json into a temporary file: the JSON text (the run's stdout in out[]). */
static const char *json_run(const char *args)
{
	char path[] = "/tmp/droce-test-perf-XXXXXX", cmd[512];
	const char *json;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s --out_json %s", args, path);
	cr_assert_eq(run_perf(cmd), 0, "%s:\n%s", cmd, out);
	json = read_file(path);
	unlink(path);
	expect_json_object(json);
	return json;
}

Test(app_perf, qp_timeout_reaches_the_qp)
{
	const char *json = json_run("write_bw --loopback -F -n 50 -s 4096 -u 20");

	cr_expect_eq(strtod(json_value(json, "qp_timeout"), NULL), 20);
	/* perftest's default, 14 */
	json = json_run("send_lat --loopback -F -n 20");
	cr_expect_eq(strtod(json_value(json, "qp_timeout"), NULL), 14);
	/* UC has no ACKs to time: -u is taken, as perftest does, and not applied */
	json = json_run("write_bw --loopback -F -n 50 -s 1000 -c UC --qp-timeout=3");
	cr_expect(strncmp(json_value(json, "qp_timeout"), "null", 4) == 0, "%s", json);
}

/* -e: the header says so, the run completes, and it slept on the channel's events. */
static void events_run(const char *args, const char *title_line, double iters)
{
	double rows[1][9];
	const char *json = json_run(args);
	bool bw = strstr(args, "_bw") != NULL;

	expect_line(title_line);
	expect_line(" Test with events. Using droce0_comp0\n");
	cr_assert_eq(table_rows(bw ? BW_TITLE : LAT_TITLE, bw ? 5 : 9, rows, 1), 1, "%s", out);
	cr_expect_eq(rows[0][1], iters);
	cr_expect(strncmp(json_value(json, "events"), "true", 4) == 0);
	cr_expect_gt(strtod(json_value(json, "cq_events"), NULL), 0, "%s: no events", args);
}

Test(app_perf, events)
{
	const char *json;

	events_run("send_bw --loopback -F -e -n 500 -s 4096", "Send BW Test", 500);
	events_run("read_bw --loopback -F --events -n 200 -s 4096 -q 2", "RDMA_Read BW Test", 400);
	events_run("atomic_bw --loopback -F -e -n 100", "Atomic FETCH_AND_ADD BW Test", 100);
	events_run("send_lat --loopback -F -e -n 50", "Send Latency Test", 50);
	events_run("read_lat --loopback -F -e -n 50", "RDMA_Read Latency Test", 50);
	events_run("atomic_lat --loopback -F -e -n 50", "Atomic FETCH_AND_ADD Latency Test", 50);
	/* busy polling takes no events */
	json = json_run("send_bw --loopback -F -n 50");
	cr_expect_eq(strtod(json_value(json, "cq_events"), NULL), 0);
}

Test(app_perf, events_with_post_lists_and_check)
{
	check_run("send_bw --loopback -F -e -l 10 -n 300 -s 1000 --check",
		  " Data check: 300 messages verified, 0 errors, 0 lost\n");
	expect_line(" Test with events. Using droce0_comp0\n");
	check_run("send_lat --loopback -F -e -n 30 -s 100 --check",
		  " Data check: 60 messages verified, 0 errors, 0 lost\n");
}

/* The value of @p key in the object that follows "@p obj": in @p json. */
static double json_sub(const char *json, const char *obj, const char *key)
{
	return strtod(json_value(json_value(json, obj), key), NULL);
}

/*
 * -b: perftest's title and header, one row of both directions' sums, and in
 * the JSON each direction's own figures, which add up to the row's (within
 * the printed rounding).
 */
static const char *bidir_run(const char *args, const char *title_line, double iters)
{
	double rows[1][9];
	const char *json = json_run(args);

	expect_line(title_line);
	expect_line(" TX depth        : ");
	cr_assert_eq(table_rows(BW_TITLE, 5, rows, 1), 1, "%s", out);
	cr_expect_eq(rows[0][1], iters, "#iterations: this side's, as perftest's");
	cr_expect(strncmp(json_value(json, "bidirectional"), "true", 4) == 0);
	cr_expect_eq(json_sub(json, "local", "iterations"), iters);
	cr_expect_eq(json_sub(json, "remote", "iterations"), iters, "the other direction ran");
	cr_expect_gt(json_sub(json, "remote", "bw_average"), 0);
	cr_expect_leq(fabs(json_sub(json, "local", "bw_average") +
			   json_sub(json, "remote", "bw_average") - rows[0][3]),
		      0.011, "the row's average is the sum of the directions'");
	cr_expect_leq(fabs(json_sub(json, "local", "msg_rate") +
			   json_sub(json, "remote", "msg_rate") - rows[0][4]),
		      0.0000011, "the row's rate is the sum of the directions'");
	return json;
}

Test(app_perf, bidirectional_write_and_send)
{
	/* --check counts every message of both directions: twice the iterations */
	bidir_run("write_bw --loopback -F -b --check -n 100 -s 3000 -q 2",
		  "                    RDMA_Write Bidirectional BW Test\n", 200);
	expect_line(" Data check: 400 messages verified, 0 errors, 0 lost\n");
	bidir_run("send_bw --loopback -F --bidirectional --check -n 100 -s 3000",
		  "                    Send Bidirectional BW Test\n", 100);
	expect_line(" RX depth        : 512\n");
	expect_line(" Data check: 200 messages verified, 0 errors, 0 lost\n");
}

Test(app_perf, bidirectional_read_atomic_ud_post_list)
{
	bidir_run("read_bw --loopback -F -b --check -n 60 -s 3000",
		  "                    RDMA_Read Bidirectional BW Test\n", 60);
	expect_line(" Data check: 120 messages verified, 0 errors, 0 lost\n");
	bidir_run("atomic_bw --loopback -F -b --check -n 100",
		  "                    Atomic FETCH_AND_ADD Bidirectional BW Test\n", 100);
	expect_line(" Data check: 200 messages verified, 0 errors, 0 lost\n");
	bidir_run("send_bw --loopback -F -b --check -n 100 -s 1000 -c UD",
		  "                    Send Bidirectional BW Test\n", 100);
	expect_line(" messages verified, 0 errors, ");
	bidir_run("write_bw --loopback -F -b -l 10 -n 200 -s 512",
		  "                    RDMA_Write Bidirectional Post List BW Test\n", 200);
}

/* --report-both: perftest's Local and Remote tables after the row of sums. */
Test(app_perf, bidirectional_report_both)
{
	double sum[1][9], local[1][9], remote[1][9];
	const char *p;

	cr_assert_eq(run_perf("write_bw --loopback -F -b --report-both -n 100 -s 2048"), 0, "%s",
		     out);
	cr_assert_eq(table_rows(BW_TITLE, 5, sum, 1), 1);
	p = strstr(out, "\n Local results: \n" DASHES BW_TITLE);
	cr_assert_not_null(p, "no Local results table in:\n%s", out);
	cr_assert_not_null(strstr(p, "\n Remote results: \n" DASHES BW_TITLE),
			   "no Remote results table after it in:\n%s", out);
	/* table_rows() reads the first table under a title: move past the earlier ones */
	memmove(out, p + 1, strlen(p + 1) + 1);
	cr_assert_eq(table_rows(BW_TITLE, 5, local, 1), 1);
	p = strstr(out, " Remote results: ");
	memmove(out, p, strlen(p) + 1);
	cr_assert_eq(table_rows(BW_TITLE, 5, remote, 1), 1);
	cr_expect_eq(local[0][1], 100);
	cr_expect_eq(remote[0][1], 100);
	cr_expect_leq(fabs(local[0][3] + remote[0][3] - sum[0][3]), 0.011);
}

/* --use-srq: the header says ON, and every message came into a receive posted to an SRQ. */
static void srq_run(const char *args, const char *verified, double srq_receives)
{
	const char *json = json_run(args);

	expect_line("\tUsing SRQ      : ON\n");
	expect_line(verified);
	cr_expect(strncmp(json_value(json, "use_srq"), "true", 4) == 0);
	cr_expect_geq(strtod(json_value(json, "srq_receives"), NULL), srq_receives, "%s", json);
}

Test(app_perf, use_srq)
{
	const char *json;

	/* 4 QPs' receives on one SRQ: each message checked on the QP it came by */
	srq_run("send_bw --loopback -F --use-srq --check -q 4 -n 200 -s 2048",
		" Data check: 800 messages verified, 0 errors, 0 lost\n", 800);
	/* -b: both ends receive on an SRQ of their own */
	srq_run("send_bw --loopback -F --use-srq -b --check -q 2 -n 100 -s 1024",
		" Data check: 400 messages verified, 0 errors, 0 lost\n", 400);
	/* ping-pong: both ends' receives */
	srq_run("send_lat --loopback -F --use-srq --check -n 40 -s 64",
		" Data check: 80 messages verified, 0 errors, 0 lost\n", 80);
	srq_run("send_bw --loopback -F --use-srq --check -q 2 -n 100 -s 512 -c UD -e",
		" messages verified, 0 errors, ", 1);
	/* without it: no SRQ */
	json = json_run("send_bw --loopback -F -n 50");
	cr_expect_eq(strtod(json_value(json, "srq_receives"), NULL), 0);
	expect_line("\tUsing SRQ      : OFF\n");
}
