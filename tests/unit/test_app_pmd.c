/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-pmd as a user runs it, in batch mode: the output of each command, the
 * errors of bad commands and arguments (a message, exit status 1, the rest
 * skipped unless -k), QP pairs through their states, streams of every
 * operation with their data checked, a fault set at run time that makes RC
 * retransmit, and a capture that droce-pcap reads. Figures are never judged
 * against time: these machines are shared. The payload pattern's checks are
 * tested on their own (pattern.c), so that a check is known to fail when
 * bytes differ.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "droce_pmd.h"

static char out[1 << 18], err[1 << 16];
static char err_path[64];

static void setup(void)
{
	int fd;

	/* droce-pmd's own default: two ports joined by a link */
	unsetenv("DROCE_DEVICES");
	/* ring links need no DMA memory: hugepages stay free for tests running beside */
	setenv("DROCE_NO_HUGE", "1", 1);
	snprintf(err_path, sizeof(err_path), "/tmp/droce-test-pmd-XXXXXX");
	fd = mkstemp(err_path);
	cr_assert_geq(fd, 0);
	close(fd);
}

static void teardown(void)
{
	unlink(err_path);
}

TestSuite(app_pmd, .init = setup, .fini = teardown, .timeout = 120);

static void read_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f != NULL) {
		n = fread(buf, 1, cap - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

/* Run droce-pmd with @p args: stdout in out[], stderr in err[]; the exit status. */
static int run_pmd(const char *args)
{
	const char *bin = getenv("DROCE_PMD");
	char cmd[8192];
	size_t n;
	FILE *p;
	int st;

	cr_assert_not_null(bin, "DROCE_PMD is not set (run the tests through meson)");
	snprintf(cmd, sizeof(cmd), "'%s' %s 2>'%s' </dev/null", bin, args, err_path);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	read_file(err_path, err, sizeof(err));
	cr_assert(WIFEXITED(st), "droce-pmd did not exit normally: %s", args);
	return WEXITSTATUS(st);
}

/* Run the commands @p cmds (';' between them) in batch mode. */
static int run_cmds(const char *cmds)
{
	char args[8192];

	snprintf(args, sizeof(args), "-c '%s'", cmds);
	return run_pmd(args);
}

static void expect_out(const char *text)
{
	cr_expect_not_null(strstr(out, text), "no '%s' in the output:\n%s\nerrors:\n%s", text, out,
			   err);
}

static void expect_err(const char *text)
{
	cr_expect_not_null(strstr(err, text), "no '%s' in the errors:\n%s", text, err);
}

/* The number after @p label, searched after the first @p anchor in out[] (NULL: the start). */
static unsigned long long number_after(const char *anchor, const char *label)
{
	const char *p = anchor != NULL ? strstr(out, anchor) : out;
	char *end;
	unsigned long long v;

	cr_assert_not_null(p, "no '%s' in:\n%s", anchor, out);
	p = strstr(p + (anchor != NULL ? strlen(anchor) : 0), label);
	cr_assert_not_null(p, "no '%s' after '%s' in:\n%s", label, anchor ? anchor : "", out);
	p += strlen(label);
	v = strtoull(p, &end, 10);
	cr_assert(end != p, "no number after '%s'", label);
	return v;
}

static void expect_fails(const char *cmds, const char *message)
{
	cr_expect_eq(run_cmds(cmds), 1, "'%s' fails with exit status 1", cmds);
	expect_err(message);
}

/* ------------------------------------------------------------ the command line */

Test(app_pmd, options)
{
	cr_expect_eq(run_pmd("-h"), 0);
	expect_out("usage: droce-pmd [options] [-- COMMAND...]");
	cr_expect_eq(run_pmd("--version"), 0);
	cr_expect(strncmp(out, "droce-pmd ", 10) == 0, "%s", out);
	cr_expect_eq(run_pmd("--no-such-option"), 2);
	cr_expect_eq(run_pmd("show lcores"), 2, "commands go after --");
	expect_err("commands go after -- or in -c");
	cr_expect_eq(run_pmd("-f /nonexistent/script"), 2);
	expect_err("/nonexistent/script");
}

Test(app_pmd, batch_sources_and_echo)
{
	char path[64], args[128];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/droce-test-pmd-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fprintf(f, "# a comment, then a blank line\n\nshow qp list\nhelp; quit\nshow lcores\n");
	fclose(f);
	snprintf(args, sizeof(args), "-f %s", path);
	cr_expect_eq(run_pmd(args), 0);
	unlink(path);
	expect_out("droce-pmd> show qp list\n  qp  port  qpn");
	expect_out("droce-pmd> help\nCommands");
	expect_out("droce-pmd> quit\n");
	cr_expect_null(strstr(out, "droce-pmd> show lcores"), "nothing runs after quit:\n%s", out);
	cr_expect_null(strstr(out, "# a comment"), "comments are not commands");

	cr_expect_eq(run_pmd("-q -- show qp list \\; show lcores"), 0);
	cr_expect_null(strstr(out, "droce-pmd>"), "-q echoes nothing");
	expect_out("  qp  port  qpn");
	expect_out("droce engine");
}

Test(app_pmd, help_lists_every_command)
{
	static const char *const syntax[] = {
		"show port info all|<port>",
		"show port stats all|<port>",
		"show port xstats all|<port>",
		"clear port stats all|<port>",
		"show lcores",
		"create qp rc|uc|ud <port> <port>",
		"show qp list",
		"show qp <qp>",
		"modify qp <qp> state reset|init|rtr|rts|sqd|sqe|err",
		"destroy qp <qp>",
		"start stream <qp> write|read|send|atomic size <bytes> depth <n> [rate <msg/s>] "
		"[count <n>]",
		"stop stream all|<stream>",
		"show stream",
		"wait stream all|<stream>",
		"set fault <port> <spec>",
		"start capture <port> <file>",
		"stop capture <port>",
		"help",
		"quit",
	};

	cr_expect_eq(run_cmds("help"), 0);
	for (size_t i = 0; i < sizeof(syntax) / sizeof(syntax[0]); i++) {
		char line[256];

		snprintf(line, sizeof(line), "\n  %s\n      ", syntax[i]);
		expect_out(line);
	}
}

/* ------------------------------------------------------------ errors */

Test(app_pmd, bad_commands_say_why)
{
	expect_fails("foo", "error: unknown command 'foo' (help lists the commands)");
	expect_fails("create qp xx 0 1", "error: bad arguments: 'create qp xx 0 1'; usage:\n"
					 "  create qp rc|uc|ud <port> <port>\n");
	expect_fails("create qp rc 0", "  create qp rc|uc|ud <port> <port>\n");
	expect_fails("show qp abc", "usage:\n  show qp list\n  show qp <qp>\n");
	expect_fails("show port stats 1 2", "  show port stats all|<port>\n");
	expect_fails("show", "  show lcores\n");
	expect_fails("show port info 7", "error: no port 7: the ports are 0 to 1");
	expect_fails("create qp rc 0 9", "error: no port 9: the ports are 0 to 1");
	expect_fails("modify qp 5 state rts", "error: no qp 5 (show qp list lists them)");
	expect_fails("destroy qp 0", "error: no qp 0");
	expect_fails("stop stream 3", "error: no stream 3 (show stream lists them)");
	expect_fails("set fault 0 drop:2", "error: bad fault specification 'drop:2'");
	expect_fails("set fault 0 loss:0.1", "error: bad fault specification 'loss:0.1'");
	expect_fails("start capture 0 /nonexistent/x.pcap",
		     "error: port 0 (droce0): capture to /nonexistent/x.pcap: No such file");
	expect_fails("sleep abc", "error: bad seconds 'abc'");
}

Test(app_pmd, bad_stream_arguments_say_why)
{
	static const struct {
		const char *cmds, *message;
	} cases[] = {
		{"start stream 0 write size 8 depth 1", "error: no qp 0"},
		{"create qp rc 0 1; start stream 0 write size 0 depth 1",
		 "error: bad size '0': a whole number from 1 to 1073741824"},
		{"create qp rc 0 1; start stream 0 write size 4x depth 1", "error: bad size '4x'"},
		{"create qp rc 0 1; start stream 0 write size 8 depth 1025",
		 "error: bad depth '1025': a whole number from 1 to 1024"},
		{"create qp rc 0 1; start stream 0 write size 8 depth 1 speed 3",
		 "error: unknown option 'speed': rate <msg/s>, count <n>"},
		{"create qp rc 0 1; start stream 0 write size 8 depth 1 count",
		 "error: count needs a value"},
		{"create qp rc 0 1; start stream 0 atomic size 4 depth 1",
		 "error: atomic operations are 8 bytes: size 8"},
		{"create qp uc 0 1; start stream 0 read size 8 depth 1",
		 "error: read needs an RC QP; qp 0 is UC"},
		{"create qp ud 0 1; start stream 0 write size 8 depth 1",
		 "error: write needs an RC or UC QP; qp 0 is UD"},
		{"create qp ud 0 1; start stream 0 send size 5000 depth 1",
		 "error: a UD message fits one packet: size up to 4096"},
		{"create qp rc 0 1; start stream 0 write size 1G depth 1",
		 "error: size x depth above 256 MiB"},
		{"create qp rc 0 1; modify qp 0 state err; start stream 0 write size 8 depth 1",
		 "error: qp 0 is in ERR: a stream needs RTS"},
		{"create qp rc 0 1; destroy qp 1; start stream 0 write size 8 depth 1",
		 "error: qp 0 has no peer: it was destroyed"},
		{"create qp rc 0 1; start stream 0 write size 8 depth 1; start stream 0 read size "
		 "8 "
		 "depth 1",
		 "error: qp 0 runs stream 0"},
		{"create qp rc 0 1; start stream 0 write size 8 depth 1; destroy qp 1",
		 "error: qp 1 takes stream 0: stop it first"},
		{"create qp rc 0 1; start stream 0 write size 8 depth 1; wait stream 0",
		 "error: stream 0 has no count: it runs until stop stream 0"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_fails(cases[i].cmds, cases[i].message);
}

Test(app_pmd, a_failure_stops_the_batch_unless_k)
{
	cr_expect_eq(run_cmds("foo; show lcores"), 1);
	cr_expect_null(strstr(out, "droce engine"), "the batch stopped at foo:\n%s", out);
	cr_expect_eq(run_pmd("-k -c 'foo; show lcores; bar'"), 1, "-k still reports the failure");
	expect_out("droce engine");
	expect_err("unknown command 'foo'");
	expect_err("unknown command 'bar'");
}

/* ------------------------------------------------------------ ports */

Test(app_pmd, show_port_info)
{
	cr_expect_eq(run_cmds("show port info all"), 0);
	expect_out("********************* Infos for port 0 (droce0) *********************\n"
		   "MAC address: 02:D0:0C:00:00:01\nDevice name: droce0\nLink status: up\n");
	expect_out("MTU: 4200 (IB MTU 4096)\n");
	expect_out("GID[1]: ::ffff:10.99.0.1 (QPs use this one)\n");
	expect_out("Faults: off\nCapture: off\nQPs:\n");
	expect_out("Infos for port 1 (droce1)");
	expect_out("MAC address: 02:D0:0C:00:00:02\n");
	cr_expect_eq(run_cmds("create qp uc 0 1; set fault 1 drop:0.5+seed:3+match:roce; show port "
			      "info 1"),
		     0);
	expect_out("port 1 (droce1): faults drop:0.5+seed:3+match:roce\n");
	expect_out("Faults: drop:0.5+seed:3+match:roce\n");
	expect_out("QPs: 1\n");
	cr_expect_null(strstr(out, "Infos for port 0"), "port 1 only");
}

Test(app_pmd, devices_option)
{
	cr_expect_eq(run_pmd("-d 'p0:mac=02:00:00:00:0a:01,ip=10.7.0.1,mtu=1500,link=x "
			     "p1:mac=02:00:00:00:0a:02,ip=10.7.0.2,mtu=1500,link=x' -c 'show port "
			     "info all'"),
		     0);
	expect_out("Infos for port 0 (p0)");
	expect_out("MAC address: 02:00:00:00:0A:02\n");
	expect_out("MTU: 1500 (IB MTU 1024)\n");
	expect_out("GID[1]: ::ffff:10.7.0.1 (QPs use this one)\n");
	cr_expect_eq(run_pmd("-d 'lonely:mac=02:00:00:00:0b:01' -c 'show port info all'"), 1,
		     "a device no engine runs");
	expect_err("port 0 (lonely) is not ACTIVE");
}

Test(app_pmd, port_stats_xstats_and_clear)
{
	cr_expect_eq(run_cmds("show port stats all; show port xstats 0; clear port stats 1; show "
			      "lcores"),
		     0);
	expect_out("\n  ######################## NIC statistics for port 0 (droce0) "
		   "########################\n  RX-packets: ");
	expect_out(" RX-errors: ");
	expect_out(" RX-bytes:  ");
	expect_out("\n  TX-packets: ");
	expect_out("\n  Throughput (since last show)\n  Rx-pps: ");
	expect_out(" Tx-bps: ");
	expect_out("NIC statistics for port 1 (droce1)");
	expect_out("###### NIC extended statistics for port 0 (droce0)\nrx_packets: ");
	expect_out("\nsent_pkts: ");
	expect_out("\nlocal_ack_timeout_err: ");
	expect_out("\nicrc_error: ");
	expect_out("\n  NIC statistics for port 1 (droce1) cleared\n");
	expect_out("): droce engine 0 of 1\n  loops ");
	expect_out("%), idle ");
	expect_out("; since the last show: busy ");
	expect_out("stream thread");
}

/* ------------------------------------------------------------ QPs */

Test(app_pmd, qp_life)
{
	cr_expect_eq(run_cmds("create qp rc 0 1; show qp list; show qp 0; modify qp 0 state err; "
			      "modify qp 0 state reset; modify qp 0 state init; modify qp 1 state "
			      "sqd; destroy qp 1; show qp list; show qp 0"),
		     0);
	expect_out("created qp 0 (port 0, qpn 0x");
	expect_out(") and qp 1 (port 1, qpn 0x");
	expect_out("): RC, RTS\n");
	expect_out("  qp  port  qpn       type  state  peer  peer-qpn  streams\n  0   0     0x");
	expect_out("  RC    RTS    1     0x");
	expect_out("qp 0: RC, port 0 (droce0), qpn 0x");
	expect_out(", state RTS\n  peer: qp 1, port 1 (droce1), qpn 0x");
	expect_out("  path_mtu 4096, sq_psn 0x");
	expect_out("  timeout 14, retry_cnt 7, rnr_retry 7, min_rnr_timer 12, max_rd_atomic 16, "
		   "max_dest_rd_atomic 16\n");
	expect_out("  access remote_write remote_read remote_atomic\n");
	expect_out("  cap: send_wr 1024, recv_wr 1024");
	expect_out("  counters:\n    sent_pkts ");
	expect_out("qp 0: RTS -> ERR\n");
	expect_out("qp 0: ERR -> RESET\n");
	expect_out("qp 0: RESET -> INIT\n");
	expect_out("qp 1: RTS -> SQD\n");
	expect_out("qp 1 destroyed\n");
	expect_out("  peer: destroyed (qpn 0x");
	expect_out(", state INIT\n");

	expect_fails("create qp rc 0 1; modify qp 0 state reset; modify qp 0 state rts",
		     "error: qp 0: ibv_modify_qp(RTS): Invalid argument");
	expect_fails("create qp rc 0 1; destroy qp 1; modify qp 0 state reset; modify qp 0 state "
		     "init; modify qp 0 state rtr",
		     "error: qp 0: its peer was destroyed: nothing to connect to");
}

Test(app_pmd, ud_and_uc_pairs)
{
	cr_expect_eq(run_cmds("create qp ud 1 0; create qp uc 0 0; show qp list; show qp 0"), 0);
	expect_out("created qp 0 (port 1, qpn 0x");
	expect_out("): UD, RTS\n");
	expect_out("): UC, RTS\n");
	expect_out("  UD    RTS  ");
	expect_out("  UC    RTS  ");
	expect_out("  qkey 0x11111111, sq_psn 0x");
}

/* ------------------------------------------------------------ streams */

/*
 * The session of the brief: an RC pair, a bounded WRITE stream, stats that moved,
 * a fault that makes RC retransmit, and a capture droce-pcap checks.
 */
Test(app_pmd, rc_session_stats_fault_capture)
{
	char cap[64], cmds[2048], pcap_cmd[512];
	unsigned long long tx0, rx1, retry, dropped;
	const char *pcap = getenv("DROCE_PCAP");
	FILE *p;
	int fd, st;

	snprintf(cap, sizeof(cap), "/tmp/droce-test-pmd-XXXXXX");
	fd = mkstemp(cap);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmds, sizeof(cmds),
		 "create qp rc 0 1; start stream 0 write size 4096 depth 16 count 2000; wait "
		 "stream 0; show port stats all; set fault 0 drop:0.02+seed:7; start capture 1 "
		 "%s; start stream 0 write size 2048 depth 8 count 2000; wait stream 1; stop "
		 "capture 1; show port xstats 0; show stream; show qp 0; set fault 0 off",
		 cap);
	cr_expect_eq(run_cmds(cmds), 0, "errors:\n%s", err);
	expect_out("stream 0: qp 0 -> qp 1, RC write, size 4096, depth 16, count 2000: started, "
		   "data checked\n");
	expect_out("stream 0: qp 0 -> qp 1 RC write size 4096 depth 16: done, 2000 messages, "
		   "8192000 bytes, 0 errors, data checked (0 check errors), ");
	tx0 = number_after("NIC statistics for port 0", "TX-packets: ");
	rx1 = number_after("NIC statistics for port 1", "RX-packets: ");
	cr_expect_geq(tx0, 2000, "port 0 sent every WRITE (%llu frames)", tx0);
	cr_expect_geq(rx1, 2000, "port 1 received every WRITE (%llu frames)", rx1);
	cr_expect_geq(number_after("NIC statistics for port 0", "TX-bytes:  "), 2000ull * 4096);
	expect_out("port 0 (droce0): faults drop:0.02+seed:7\n");
	expect_out("port 1 (droce1): capture to ");
	expect_out("stream 1: qp 0 -> qp 1 RC write size 2048 depth 8: done, 2000 messages, "
		   "4096000 bytes, 0 errors, data checked (0 check errors), ");
	dropped = number_after("NIC extended statistics for port 0", "fault_dropped: ");
	retry = number_after("NIC extended statistics for port 0", "completer_retry_err: ");
	cr_expect_gt(dropped, 0, "the injector dropped frames");
	cr_expect_gt(retry, 0, "RC went back to resend what was lost");
	cr_expect_gt(number_after("  counters:", "completer_retry_err "), 0, "in qp 0's counters");
	expect_out("  id  qp      type  op      size      depth  state     messages      bytes");
	expect_out(
		"\n  1   0->1    RC    write   2048      8      done      2000          4096000 ");
	expect_out("port 0 (droce0): faults off\n");

	/* every frame port 1 received, every ICRC good; the receiver saw the resent WRITEs */
	cr_assert_not_null(pcap, "DROCE_PCAP is not set");
	snprintf(pcap_cmd, sizeof(pcap_cmd), "'%s' -S '%s'", pcap, cap);
	p = popen(pcap_cmd, "r");
	cr_assert_not_null(p);
	out[fread(out, 1, sizeof(out) - 1, p)] = '\0';
	st = pclose(p);
	unlink(cap);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "droce-pcap found a bad frame:\n%s", out);
	expect_out("malformed 0 (ICRC errors 0)");
	expect_out("RC_RDMA_WRITE_ONLY");
	{
		/* the retrans column of the sender's row */
		const char *row = strstr(out, "10.99.0.1 -> ");
		unsigned long long v[5];

		cr_assert_not_null(row);
		cr_assert_eq(sscanf(strchr(row, '>') + 2, "%*s %llu %llu %llu %llu", &v[0], &v[1],
				    &v[2], &v[3]),
			     4, "%s", row);
		cr_expect_gt(v[3], 0, "resent WRITEs in the capture: %s", row);
	}
}

Test(app_pmd, every_operation_checked)
{
	cr_expect_eq(
		run_cmds("create qp rc 0 1; create qp uc 0 1; create qp ud 1 0; start "
			 "stream 0 read size 8192 depth 8 count 500; start stream 1 send size "
			 "1000 depth 32 count 800; start stream 2 send size 1024 depth 16 count "
			 "800; start stream 4 send size 4096 depth 64 count 800; wait stream all; "
			 "start stream 0 atomic size 8 depth 8 count 600; start stream 2 write "
			 "size 3000 depth 4 count 300; wait stream all"),
		0, "errors:\n%s", err);
	expect_out("stream 0: qp 0 -> qp 1 RC read size 8192 depth 8: done, 500 messages, "
		   "4096000 bytes, 0 errors, data checked (0 check errors)");
	expect_out("stream 1: qp 1 -> qp 0 RC send size 1000 depth 32: done, 800 messages, "
		   "800000 bytes, 0 errors, 800 received, 0 lost, data checked (0 check errors)");
	expect_out("stream 2: qp 2 -> qp 3 UC send size 1024 depth 16: done, 800 messages, "
		   "819200 bytes, 0 errors, 800 received, 0 lost, data checked (0 check errors)");
	expect_out("stream 3: qp 4 -> qp 5 UD send size 4096 depth 64: done, 800 messages, "
		   "3276800 bytes, 0 errors, 800 received, 0 lost, data checked (0 check errors)");
	expect_out("stream 4: qp 0 -> qp 1 RC atomic size 8 depth 8: done, 600 messages, 4800 "
		   "bytes, 0 errors, data checked (0 check errors)");
	expect_out("stream 5: qp 2 -> qp 3 UC write size 3000 depth 4: done, 300 messages, "
		   "900000 bytes, 0 errors, data not checked");
	expect_out("stream 4: qp 0 -> qp 1, RC atomic, size 8, depth 8, count 600: started, data "
		   "checked\n");
}

/* UC and UD over a link that loses, duplicates and reorders: what arrives checks out, once. */
Test(app_pmd, lossy_uc_and_ud_streams)
{
	unsigned long long rx, lost;

	cr_expect_eq(
		run_cmds("create qp ud 0 1; create qp uc 0 1; set fault 0 "
			 "dup:0.1+drop:0.05+reorder:0.05+seed:3; start stream 0 send size 1024 "
			 "depth 32 count 2000; start stream 2 send size 512 depth 16 count "
			 "2000; wait stream all"),
		0, "errors:\n%s", err);
	expect_out("stream 0: qp 0 -> qp 1 UD send size 1024 depth 32: done, 2000 messages, ");
	rx = number_after("UD send size 1024 depth 32: done, ", "bytes, 0 errors, ");
	lost = number_after("UD send size 1024 depth 32: done, ", "received, ");
	cr_expect_eq(rx + lost, 2000, "UD: %llu received and %llu lost", rx, lost);
	cr_expect_gt(lost, 0, "UD lost what the link dropped");
	cr_expect_gt(number_after("UD send size 1024 depth 32: done, ", "lost, "), 0,
		     "UD took copies apart");
	expect_out(" duplicates, data checked (0 check errors)");
	rx = number_after("UC send size 512 depth 16: done, ", "bytes, 0 errors, ");
	lost = number_after("UC send size 512 depth 16: done, ", "received, ");
	cr_expect_eq(rx + lost, 2000, "UC: %llu received and %llu lost", rx, lost);
	cr_expect_gt(lost, 0, "UC lost what the link dropped");
	expect_out("stream 1: qp 2 -> qp 3 UC send size 512 depth 16: done, 2000 messages, ");
	cr_expect_null(strstr(out, "check errors), 0 msg"), "no stream ran empty");
	cr_expect_null(strstr(out, "failed"), "no stream failed:\n%s", out);
}

Test(app_pmd, stop_rate_and_reuse)
{
	cr_expect_eq(
		run_cmds("create qp rc 0 1; start stream 0 send size 4096 depth 16; sleep "
			 "0.2; stop stream 0; show qp list; start stream 0 send size 65536 "
			 "depth 8 count 100; wait stream 1; create qp ud 0 1; start stream 2 "
			 "send size 2048 depth 32; sleep 0.1; stop stream all; start stream 2 "
			 "send size 4000 depth 8 count 100; wait stream 3; start stream 1 read "
			 "size 100 depth 4 rate 2000 count 100; wait stream all; stop stream "
			 "all"),
		0, "errors:\n%s", err);
	/* how far it got in 0.2 s is the machine's business; its receives were used up */
	expect_out("stream 0: qp 0 -> qp 1 RC send size 4096 depth 16: stopped, ");
	expect_out("  0   0     0x000011  RC    RTS    1     0x000012  -\n");
	expect_out("stream 1: qp 0 -> qp 1 RC send size 65536 depth 8: done, 100 messages, "
		   "6553600 bytes, 0 errors, 100 received, 0 lost, data checked (0 check errors)");
	expect_out("stream 2: qp 2 -> qp 3 UD send size 2048 depth 32: stopped, ");
	expect_out("stream 3: qp 2 -> qp 3 UD send size 4000 depth 8: done, 100 messages");
	expect_out("stream 4: qp 1 -> qp 0, RC read, size 100, depth 4, rate 2000 msg/s, count "
		   "100: started, data checked\n");
	expect_out("stream 4: qp 1 -> qp 0 RC read size 100 depth 4: done, 100 messages");
	expect_out("droce-pmd> stop stream all\nno stream to report\n");
}

Test(app_pmd, failures_end_streams)
{
	/* every RoCE frame lost: RC gives up after retry_cnt and the stream fails */
	expect_fails("create qp rc 0 1; set fault 1 drop:1+match:roce; start stream 1 write size "
		     "64 depth 2 count 10; wait stream 0",
		     "error: stream 0 failed: qp 1: transport retry counter exceeded (message 0");
	expect_out("stream 0: qp 1 -> qp 0 RC write size 64 depth 2: failed, 0 messages, 0 bytes, "
		   "2 errors");
	/* a QP moved to ERR under a stream: flushed work requests */
	expect_fails("create qp rc 0 1; start stream 0 write size 1M depth 4; sleep 0.1; modify "
		     "qp 0 state err; sleep 0.1; stop stream 0",
		     "error: stream 0 failed: qp 0: Work Request Flushed Error");
}

/* ------------------------------------------------------------ the payload pattern */

Test(app_pmd, pattern_checks_fail_where_bytes_differ)
{
	uint8_t a[100], b[100];

	pmd_pattern_fill(a, sizeof(a), 7, 42, true);
	cr_expect_eq(pmd_pattern_check(a, sizeof(a), 7, 42, true), -1, "a message checks");
	cr_expect_eq(pmd_pattern_number(a), 42, "a numbered message carries its number");
	a[57] ^= 0x10;
	cr_expect_eq(pmd_pattern_check(a, sizeof(a), 7, 42, true), 57, "the flipped byte");
	pmd_pattern_fill(b, sizeof(b), 7, 43, true);
	cr_expect_eq(pmd_pattern_check(b, sizeof(b), 7, 42, true), 0, "another message's number");
	pmd_pattern_fill(b, sizeof(b), 8, 42, false);
	cr_expect_geq(pmd_pattern_check(b, sizeof(b), 7, 42, false), 0, "another stream's bytes");
	pmd_pattern_fill(b, 13, 7, 42, false);
	cr_expect_eq(pmd_pattern_check(b, 13, 7, 42, false), -1, "a length not of whole words");
	b[12] ^= 1;
	cr_expect_eq(pmd_pattern_check(b, 13, 7, 42, false), 12, "its last byte");
}
