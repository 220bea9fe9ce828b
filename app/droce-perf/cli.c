/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf's command line: a test name (perftest's program name without
 * "ib_") and perftest's options with perftest's defaults. Every usage error
 * is reported on stderr and makes the exit status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "droce_perf.h"

#define DEF_JSON_FILE "perftest_out.json"

static const struct {
	const char *name;
	enum perf_verb verb;
	enum perf_kind kind;
} tests[] = {
	{"write_bw", PERF_WRITE, PERF_BW},   {"write_lat", PERF_WRITE, PERF_LAT},
	{"send_bw", PERF_SEND, PERF_BW},     {"send_lat", PERF_SEND, PERF_LAT},
	{"read_bw", PERF_READ, PERF_BW},     {"read_lat", PERF_READ, PERF_LAT},
	{"atomic_bw", PERF_ATOMIC, PERF_BW}, {"atomic_lat", PERF_ATOMIC, PERF_LAT},
};

void perf_cli_usage(FILE *out)
{
	fprintf(out,
		"usage: droce-perf TEST --loopback [options]     both ends in this process\n"
		"       droce-perf TEST [options]                server: wait for a client\n"
		"       droce-perf TEST [options] SERVER         client: connect to SERVER\n"
		"perftest's tests on droce; TEST is write_bw, write_lat, send_bw, send_lat,\n"
		"read_bw, read_lat, atomic_bw or atomic_lat (ib_write_bw ... also accepted).\n"
		"The other side of a two-host run is perftest 4.5's ib_TEST or droce-perf.\n"
		"  --loopback                 both ends in this process, joined by droce's\n"
		"                             back-to-back link (sets DROCE_DEVICES when unset;\n"
		"                             with DROCE_DAEMON, two devices of droced)\n"
		"  -a, --all                  run sizes from 2 till 2^23 (or --max-size)\n"
		"  -A, --atomic_type=<type>   CMP_AND_SWAP or FETCH_AND_ADD (default)\n"
		"  -b, --bidirectional        both sides send at once (bw tests); the row sums\n"
		"                             the two directions\n"
		"      --max-size=<size>      largest size of -a (default 2^23)\n"
		"  -c, --connection=<RC/UC/UD>  connection type (default RC; UC: write, send;\n"
		"                             UD: send)\n"
		"  -d, --ib-dev=<dev>         device (loopback: the first end's; default the\n"
		"                             first device found)\n"
		"  -D, --duration=<sec>       run each test for <sec> seconds\n"
		"  -e, --events               sleep on a completion channel instead of polling\n"
		"                             (send, read and atomic tests; not with -D)\n"
		"  -F, --CPU-freq             no warning about CPU frequency scaling\n"
		"  -h, --help                 this text\n"
		"  -i, --ib-port=<port>       port of the devices (default 1)\n"
		"  -I, --inline_size=<size>   max size of a message sent inline (bw default 0,\n"
		"                             write/send lat default 220)\n"
		"  -l, --post_list=<size>     send WRs per post (bw tests; -n a multiple of it)\n"
		"  -m, --mtu=<mtu>            path MTU 256 - 4096 (default port active MTU)\n"
		"  -n, --iters=<iters>        exchanges per QP (at least 5; bw 5000, lat 1000)\n"
		"  -N, --noPeak               do not compute the peak bandwidth\n"
		"  -o, --outs=<num>           outstanding RDMA READs and atomics (default 16)\n"
		"  -p, --port=<port>          TCP port of the exchange (default 18515)\n"
		"  -q, --qp=<num>             number of QPs (bw tests; default 1)\n"
		"  -Q, --cq-mod=<num>         a completion every <num> sends (bw default 100)\n"
		"  -r, --rx-depth=<dep>       receive queue size (send tests; default 512)\n"
		"  -s, --size=<size>          message size (bw default 65536, lat default 2)\n"
		"  -t, --tx-depth=<dep>       send queue size (bw tests; default 128)\n"
		"  -u, --qp-timeout=<exp>     RC local ACK timeout 4.096us x 2^exp, 0 - 31\n"
		"                             (default 14)\n"
		"  -V, --version              version\n"
		"  -x, --gid-index=<index>    GID index (default the first IPv4-mapped GID)\n"
		"      --check                the receiver checks the payload of every message\n"
		"                             (--loopback only)\n"
		"      --report_gbits         bandwidth in Gb/sec (10^9 bits) instead of MB/sec\n"
		"      --report-both          with -b, each direction's table after the sums\n"
		"      --use-srq              the receiving QPs share an SRQ (send tests)\n"
		"      --use_hugepages        buffers on hugepages (plain pages if none free)\n"
		"      --out_json [FILE]      also write the results as JSON to FILE\n"
		"                             (default " DEF_JSON_FILE ")\n"
		"      --out_json_file=<file> the JSON file (implies --out_json)\n"
		"Exit status: 0 done, 1 a verbs call, a completion or --check failed, 2 usage.\n");
}

const char *perf_conn_name(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	default:
		return "?";
	}
}

static int bad_value(const char *opt, const char *arg, const char *why)
{
	fprintf(stderr, "droce-perf: bad value for %s: '%s' (%s)\n", opt, arg, why);
	return PERF_EXIT_USAGE;
}

/* A decimal or 0x number in [lo, hi]; perftest's K/M/G suffixes for sizes. */
static int parse_num(const char *opt, const char *arg, uint64_t lo, uint64_t hi, bool suffix,
		     uint64_t *v)
{
	char *end;
	uint64_t x;
	char why[96];

	errno = 0;
	if (arg[0] == '-' || arg[0] == '\0')
		return bad_value(opt, arg, "not a number");
	x = strtoull(arg, &end, 0);
	if (errno != 0 || end == arg)
		return bad_value(opt, arg, "not a number");
	if (suffix && *end != '\0' && end[1] == '\0') {
		unsigned int shift = *end == 'K' || *end == 'k'   ? 10
				     : *end == 'M' || *end == 'm' ? 20
				     : *end == 'G' || *end == 'g' ? 30
								  : 0;

		if (shift == 0 || x > (UINT64_MAX >> shift))
			return bad_value(opt, arg, "not a number");
		x <<= shift;
		end++;
	}
	if (*end != '\0')
		return bad_value(opt, arg, "not a number");
	if (x < lo || x > hi) {
		snprintf(why, sizeof(why), "from %" PRIu64 " to %" PRIu64, lo, hi);
		return bad_value(opt, arg, why);
	}
	*v = x;
	return 0;
}

static int set_test(struct perf_opts *o, const char *name)
{
	const char *n = strncmp(name, "ib_", 3) == 0 ? name + 3 : name;

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (strcmp(n, tests[i].name) == 0) {
			o->test_name = tests[i].name;
			o->verb = tests[i].verb;
			o->kind = tests[i].kind;
			return 0;
		}
	}
	return -1;
}

static bool is_test_name(const char *s)
{
	struct perf_opts tmp;

	return set_test(&tmp, s) == 0;
}

enum {
	OPT_CHECK = 256,
	OPT_GBITS,
	OPT_JSON,
	OPT_JSON_FILE,
	OPT_LOOPBACK,
	OPT_MAX_SIZE,
	OPT_HUGEPAGES,
	OPT_REPORT_BOTH,
	OPT_SRQ,
};

static const struct option longopts[] = {
	{"all", no_argument, NULL, 'a'},
	{"atomic_type", required_argument, NULL, 'A'},
	{"bidirectional", no_argument, NULL, 'b'},
	{"connection", required_argument, NULL, 'c'},
	{"ib-dev", required_argument, NULL, 'd'},
	{"duration", required_argument, NULL, 'D'},
	{"events", no_argument, NULL, 'e'},
	{"CPU-freq", no_argument, NULL, 'F'},
	{"help", no_argument, NULL, 'h'},
	{"ib-port", required_argument, NULL, 'i'},
	{"inline_size", required_argument, NULL, 'I'},
	{"post_list", required_argument, NULL, 'l'},
	{"mtu", required_argument, NULL, 'm'},
	{"iters", required_argument, NULL, 'n'},
	{"noPeak", no_argument, NULL, 'N'},
	{"outs", required_argument, NULL, 'o'},
	{"port", required_argument, NULL, 'p'},
	{"qp", required_argument, NULL, 'q'},
	{"cq-mod", required_argument, NULL, 'Q'},
	{"rx-depth", required_argument, NULL, 'r'},
	{"size", required_argument, NULL, 's'},
	{"tx-depth", required_argument, NULL, 't'},
	{"qp-timeout", required_argument, NULL, 'u'},
	{"version", no_argument, NULL, 'V'},
	{"gid-index", required_argument, NULL, 'x'},
	{"check", no_argument, NULL, OPT_CHECK},
	{"report_gbits", no_argument, NULL, OPT_GBITS},
	{"out_json", optional_argument, NULL, OPT_JSON},
	{"out_json_file", required_argument, NULL, OPT_JSON_FILE},
	{"loopback", no_argument, NULL, OPT_LOOPBACK},
	{"max-size", required_argument, NULL, OPT_MAX_SIZE},
	{"use_hugepages", no_argument, NULL, OPT_HUGEPAGES},
	{"report-both", no_argument, NULL, OPT_REPORT_BOTH},
	{"use-srq", no_argument, NULL, OPT_SRQ},
	{NULL, 0, NULL, 0},
};

/* Which options the user gave, for the defaults that depend on the test. */
struct given {
	bool size, iters, tx_depth, cq_mod, qp, max_size, atomic_type, post_list;
};

static int parse_one(int c, struct perf_opts *o, struct given *g, int argc, char **argv)
{
	uint64_t v;
	int rc = 0;

	switch (c) {
	case 'a':
		o->all = true;
		break;
	case 'A':
		if (strcmp(optarg, "CMP_AND_SWAP") == 0)
			o->atomic_cas = true;
		else if (strcmp(optarg, "FETCH_AND_ADD") == 0)
			o->atomic_cas = false;
		else
			return bad_value("-A", optarg, "CMP_AND_SWAP or FETCH_AND_ADD");
		g->atomic_type = true;
		break;
	case 'b':
		o->bidirectional = true;
		break;
	case 'c':
		if (strcmp(optarg, "RC") == 0)
			o->qp_type = IBV_QPT_RC;
		else if (strcmp(optarg, "UC") == 0)
			o->qp_type = IBV_QPT_UC;
		else if (strcmp(optarg, "UD") == 0)
			o->qp_type = IBV_QPT_UD;
		else
			return bad_value("-c", optarg, "RC, UC or UD");
		break;
	case 'd':
		o->ib_dev = optarg;
		break;
	case 'D':
		rc = parse_num("-D", optarg, 1, 86400, false, &v);
		o->duration = (unsigned int)v;
		break;
	case 'e':
		o->events = true;
		break;
	case 'F':
		o->cpu_freq_ok = true;
		break;
	case 'i':
		rc = parse_num("-i", optarg, 1, 1, false, &v);
		o->ib_port = (uint8_t)v;
		break;
	case 'I':
		rc = parse_num("-I", optarg, 0, 512, false, &v);
		o->inline_size = (int)v;
		break;
	case 'l':
		rc = parse_num("-l", optarg, 1, PERF_MAX_POST_LIST, false, &v);
		o->post_list = (unsigned int)v;
		g->post_list = true;
		break;
	case 'm':
		rc = parse_num("-m", optarg, 256, 4096, false, &v);
		if (rc == 0 && (v & (v - 1)) != 0)
			return bad_value("-m", optarg, "256, 512, 1024, 2048 or 4096");
		o->mtu = (unsigned int)v;
		break;
	case 'n':
		rc = parse_num("-n", optarg, PERF_MIN_ITERS, UINT32_MAX, false, &o->iters);
		g->iters = true;
		break;
	case 'N':
		o->no_peak = true;
		break;
	case 'o':
		rc = parse_num("-o", optarg, 1, 128, false, &v);
		o->outs = (unsigned int)v;
		break;
	case 'p':
		rc = parse_num("-p", optarg, 1, 65535, false, &v);
		o->port = (uint16_t)v;
		break;
	case 'q':
		rc = parse_num("-q", optarg, 1, 256, false, &v);
		o->num_qps = (unsigned int)v;
		g->qp = true;
		break;
	case 'Q':
		rc = parse_num("-Q", optarg, 1, 16384, false, &v);
		o->cq_mod = (unsigned int)v;
		g->cq_mod = true;
		break;
	case 'r':
		rc = parse_num("-r", optarg, 1, 16384, false, &v);
		o->rx_depth = (unsigned int)v;
		break;
	case 's':
		rc = parse_num("-s", optarg, 1, 1u << 31, true, &o->size);
		g->size = true;
		break;
	case 't':
		rc = parse_num("-t", optarg, 1, 16384, false, &v);
		o->tx_depth = (unsigned int)v;
		g->tx_depth = true;
		break;
	case 'u':
		rc = parse_num("-u", optarg, 0, PERF_MAX_TIMEOUT, false, &v);
		o->qp_timeout = (uint8_t)v;
		break;
	case 'x':
		rc = parse_num("-x", optarg, 0, 255, false, &v);
		o->gid_index = (int)v;
		break;
	case OPT_CHECK:
		o->check = true;
		break;
	case OPT_GBITS:
		o->report_gbits = true;
		break;
	case OPT_JSON:
		/* --out_json, --out_json=FILE or --out_json FILE */
		if (optarg != NULL)
			o->json_path = optarg;
		else if (optind < argc && argv[optind][0] != '-' && !is_test_name(argv[optind]))
			o->json_path = argv[optind++];
		else if (o->json_path == NULL)
			o->json_path = DEF_JSON_FILE;
		if (o->json_path[0] == '\0')
			return bad_value("--out_json", optarg, "empty file name");
		break;
	case OPT_JSON_FILE:
		if (optarg[0] == '\0')
			return bad_value("--out_json_file", optarg, "empty file name");
		o->json_path = optarg;
		break;
	case OPT_LOOPBACK:
		o->loopback = true;
		break;
	case OPT_MAX_SIZE:
		rc = parse_num("--max-size", optarg, 2, PERF_MAX_SIZE, true, &o->max_size);
		g->max_size = true;
		break;
	case OPT_HUGEPAGES:
		o->use_hugepages = true;
		break;
	case OPT_REPORT_BOTH:
		o->report_both = true;
		break;
	case OPT_SRQ:
		o->use_srq = true;
		break;
	default:
		perf_cli_usage(stderr);
		return PERF_EXIT_USAGE;
	}
	return rc;
}

static int usage_error(const char *msg)
{
	fprintf(stderr, "droce-perf: %s\n", msg);
	return PERF_EXIT_USAGE;
}

/* -l: whole lists of WRs, each ending in a signaled one, as perftest's rules. */
static int check_post_list(struct perf_opts *o, const struct given *g)
{
	if (!g->post_list)
		return 0;
	if (o->kind != PERF_BW)
		return usage_error("-l posts lists in bandwidth tests only");
	if (o->duration == 0 && o->iters % o->post_list != 0)
		return usage_error("-n must be a multiple of the post list (-l)");
	if (o->post_list > o->tx_depth)
		return usage_error("a post list (-l) longer than the send queue (-t)");
	if (!g->cq_mod)
		o->cq_mod = o->post_list;
	else if (o->post_list % o->cq_mod != 0)
		return usage_error("the post list (-l) must be a multiple of -Q");
	return 0;
}

/*
 * Two-host runs need the same sizes and counts on both sides; what would make
 * perftest and droce-perf wait for each other forever is refused here.
 */
static int check_two_host(const struct perf_opts *o)
{
	if (o->check)
		return usage_error("--check runs with --loopback only (perftest sends no pattern)");
	if (o->duration != 0 && (o->kind == PERF_LAT || o->verb == PERF_SEND))
		return usage_error("two-host runs take -D in write_bw, read_bw and atomic_bw only "
				   "(the other tests count their messages on both sides: use -n)");
	return 0;
}

/*
 * -e, -b and --use-srq where perftest takes them: events need a completion on
 * every side that waits (a WRITE's target has none) and a count of messages,
 * not a clock (-D); both directions at once are measured in bandwidth tests;
 * an SRQ holds receives, so only SENDs use it, and every QP needs one of them.
 */
static int check_modes(const struct perf_opts *o)
{
	if (o->events && o->verb == PERF_WRITE)
		return usage_error("-e waits for completions: WRITE tests have none where the "
				   "message lands (send, read and atomic tests take -e)");
	if (o->events && o->duration != 0)
		return usage_error("-e and -D do not go together (use -n)");
	if (o->bidirectional && o->kind != PERF_BW)
		return usage_error("-b is for bandwidth tests (a latency test is a ping-pong "
				   "already)");
	if (o->use_srq && o->verb != PERF_SEND)
		return usage_error("--use-srq is for send tests (an SRQ holds receives)");
	if (o->use_srq && o->num_qps > o->rx_depth)
		return usage_error("--use-srq: the SRQ (-r) needs a receive for every QP (-q)");
	return 0;
}

/* Combinations perftest refuses, or droce-perf cannot run (yet). */
static int check_combination(struct perf_opts *o, const struct given *g)
{
	if (o->qp_type == IBV_QPT_UD && o->verb != PERF_SEND)
		return usage_error("UD carries only send tests (-c UD with send_bw or send_lat)");
	if (o->qp_type == IBV_QPT_UC && o->verb == PERF_READ)
		return usage_error("UC has no RDMA READ (read tests need -c RC)");
	if (o->qp_type != IBV_QPT_RC && o->verb == PERF_ATOMIC)
		return usage_error("atomics run on RC only (-c RC)");
	if (o->verb == PERF_ATOMIC && g->size && o->size != PERF_ATOMIC_SIZE)
		return usage_error("an atomic is 8 bytes: atomic tests take no other -s");
	if (o->verb == PERF_ATOMIC && o->all)
		return usage_error("an atomic is 8 bytes: atomic tests take no -a");
	if (g->atomic_type && o->verb != PERF_ATOMIC)
		return usage_error("-A is for atomic_bw and atomic_lat");
	if (o->kind == PERF_LAT && o->num_qps != 1)
		return usage_error("latency tests run one QP (-q 1)");
	if (o->all && o->duration != 0)
		return usage_error("-a and -D do not go together");
	if (g->max_size && !o->all)
		return usage_error("--max-size bounds -a");
	if (o->all && g->size)
		return usage_error("-a and -s do not go together");
	if (o->duration != 0 && g->iters)
		return usage_error("-D and -n do not go together");
	if (o->qp_type == IBV_QPT_UD && g->size && o->size > 4096)
		return usage_error("a UD message fits one packet: -s up to the MTU (4096)");
	if (check_modes(o) != 0)
		return PERF_EXIT_USAGE;
	if (!o->loopback && check_two_host(o) != 0)
		return PERF_EXIT_USAGE;
	return check_post_list(o, g);
}

int perf_cli_parse(int argc, char **argv, struct perf_opts *o)
{
	struct given g = {0};
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->qp_type = IBV_QPT_RC;
	o->ib_port = 1;
	o->gid_index = -1;
	o->num_qps = 1;
	o->rx_depth = 512;
	o->outs = 16;
	o->inline_size = -1;
	o->max_size = PERF_MAX_SIZE;
	o->port = PERF_OOB_PORT;
	o->post_list = 1;
	o->qp_timeout = PERF_QP_TIMEOUT;
	optind = 1;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "aA:bc:d:D:eFhi:I:l:m:n:No:p:q:Q:r:s:t:u:Vx:", longopts,
				NULL)) != -1) {
		if (c == 'h') {
			perf_cli_usage(stdout);
			return -1;
		}
		if (c == 'V') {
			printf("droce-perf " DROCE_VERSION "\n");
			return -1;
		}
		rc = parse_one(c, o, &g, argc, argv);
		if (rc != 0)
			return rc;
	}
	if (optind >= argc) {
		fprintf(stderr, "droce-perf: which test? (write_bw, write_lat, send_bw, send_lat, "
				"read_bw, read_lat, atomic_bw, atomic_lat)\n");
		perf_cli_usage(stderr);
		return PERF_EXIT_USAGE;
	}
	if (set_test(o, argv[optind]) != 0) {
		fprintf(stderr, "droce-perf: unknown test '%s'\n", argv[optind]);
		return PERF_EXIT_USAGE;
	}
	if (optind + 2 < argc)
		return usage_error("too many arguments (TEST [SERVER])");
	if (optind + 1 < argc) {
		if (o->loopback)
			return usage_error("--loopback runs both ends here: no SERVER");
		o->server = argv[optind + 1];
	}
	if (o->kind == PERF_BW) {
		if (!g.size) /* UD: a message is one packet, by default of the path MTU */
			o->size = o->qp_type == IBV_QPT_UD ? 0
				  : o->verb == PERF_ATOMIC ? PERF_ATOMIC_SIZE
							   : 65536;
		if (!g.iters)
			o->iters = 5000;
		if (!g.tx_depth)
			o->tx_depth = 128;
		if (!g.cq_mod)
			o->cq_mod = 100;
		if (o->inline_size < 0)
			o->inline_size = 0;
	} else {
		if (!g.size)
			o->size = o->verb == PERF_ATOMIC ? PERF_ATOMIC_SIZE : 2;
		if (!g.iters)
			o->iters = 1000;
		o->tx_depth = 1;
		o->cq_mod = 1;
		if (o->inline_size < 0)
			o->inline_size = o->verb == PERF_READ ? 0 : 220;
	}
	if (o->cq_mod > o->tx_depth)
		o->cq_mod = o->tx_depth;
	if (perf_verb_one_sided(o->verb))
		o->inline_size = 0;
	return check_combination(o, &g);
}
