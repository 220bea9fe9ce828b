/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-pcap: dissect RoCEv2 captures with lib/wire, verify every ICRC, and
 * summarise the conversation. Exit status 0 when every RoCEv2 frame is well
 * formed, 1 when any is not, 2 on usage or file errors.
 *
 * --replay feeds a capture's RC requests into a droce responder standing in for
 * its server (replay.c) and, with --compare, compares droce's responses with the
 * server's (compare.c): exit status 0 when equal within the tolerances, 1 when
 * not, 2 on usage or file errors or a capture that cannot be replayed.
 */
#include <getopt.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "droce_pcap.h"

struct options {
	enum dissect_format format;
	enum dissect_format summary_format;
	bool summary;
	uint16_t udp_port;
	bool dissect_opts; /* any of --json, --summary(-only), --port given */
	bool replay;
	bool replay_opts; /* any of the replay's options but --replay given */
	bool fast;
	struct replay_opts ro;
};

/* Long options without a short form. */
enum {
	OPT_REPLAY = 256,
	OPT_COMPARE,
	OPT_OUT,
	OPT_TIMING,
	OPT_FAST,
	OPT_TRUNCATED,
	OPT_SERVER,
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: droce-pcap [options] FILE.pcap...\n"
		"Dissect the RoCEv2 frames of captures, verify every ICRC, summarise.\n"
		"  -j, --json       one JSON object per frame (and for the summary)\n"
		"  -s, --summary    print the per-QP summary after the frames\n"
		"  -S, --summary-only  print only the summary\n"
		"  -p, --port N     UDP port that carries RoCEv2 (default 4791)\n"
		"  -h, --help       this text\n"
		"Exit status: 0 all RoCEv2 frames good, 1 malformed or ICRC errors, 2 "
		"usage/file error.\n"
		"\n"
		"usage: droce-pcap --replay [--compare] [--out FILE.pcap] [--timing|--fast]\n"
		"                  [--truncated] [--server ADDR] CAPTURE\n"
		"Feed the capture's RC requests into a droce responder standing in for its\n"
		"server; record what droce sends back.\n"
		"  --compare        compare droce's responses with the server's in the capture\n"
		"  --out FILE.pcap  write droce's frames there (nanosecond timestamps)\n"
		"  --timing         feed the requests at their times in the capture\n"
		"  --fast           feed them as fast as droce answers (the default)\n"
		"  --truncated      the capture was cut: droce's responses past it not compared\n"
		"  --server ADDR    the side droce stands in for (default: the destination of\n"
		"                   the first RC request)\n"
		"Exit status: 0 replayed (and equal within the tolerances), 1 differences, 2 "
		"usage/file error or a capture that cannot be replayed.\n");
}

/* The replay's options apply to --replay only, the dissector's never to it. */
static int replay_options_check(const struct options *o, int files)
{
	const char *why = NULL;

	if (!o->replay && o->replay_opts)
		why = "--compare, --out, --timing, --fast, --truncated and --server need --replay";
	else if (o->replay && o->dissect_opts)
		why = "--replay takes none of --json, --summary, --summary-only, --port";
	else if (o->replay && o->ro.timing && o->fast)
		why = "--timing and --fast exclude each other";
	else if (o->replay && files != 1)
		why = "--replay takes one capture";
	if (why != NULL)
		fprintf(stderr, "droce-pcap: %s\n", why);
	return why != NULL ? -1 : 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"summary", no_argument, NULL, 's'},
		{"summary-only", no_argument, NULL, 'S'},
		{"port", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{"replay", no_argument, NULL, OPT_REPLAY},
		{"compare", no_argument, NULL, OPT_COMPARE},
		{"out", required_argument, NULL, OPT_OUT},
		{"timing", no_argument, NULL, OPT_TIMING},
		{"fast", no_argument, NULL, OPT_FAST},
		{"truncated", no_argument, NULL, OPT_TRUNCATED},
		{"server", required_argument, NULL, OPT_SERVER},
		{NULL, 0, NULL, 0},
	};
	bool summary_only = false;
	int c;

	while ((c = getopt_long(argc, argv, "jsSp:h", longopts, NULL)) != -1) {
		if (c == 'j' || c == 's' || c == 'S' || c == 'p')
			o->dissect_opts = true;
		else if (c >= OPT_COMPARE && c <= OPT_SERVER)
			o->replay_opts = true;
		switch (c) {
		case 'j':
			o->format = FORMAT_JSON;
			break;
		case 's':
			o->summary = true;
			break;
		case 'S':
			o->summary = true;
			summary_only = true;
			break;
		case OPT_REPLAY:
			o->replay = true;
			break;
		case OPT_COMPARE:
			o->ro.compare = true;
			break;
		case OPT_OUT:
			o->ro.out = optarg;
			break;
		case OPT_TIMING:
			o->ro.timing = true;
			break;
		case OPT_FAST:
			o->fast = true;
			break;
		case OPT_TRUNCATED:
			o->ro.truncated = true;
			break;
		case OPT_SERVER:
			o->ro.server = optarg;
			break;
		case 'p': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 0);

			if (*end != '\0' || v == 0 || v > 65535) {
				fprintf(stderr, "droce-pcap: bad port '%s'\n", optarg);
				return -1;
			}
			o->udp_port = (uint16_t)v;
			break;
		}
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	/* --summary-only keeps the format for the summary and prints no frames */
	if (summary_only)
		o->summary_format = o->format, o->format = FORMAT_NONE;
	else
		o->summary_format = o->format;
	if (optind >= argc) {
		usage(stderr);
		return -1;
	}
	return replay_options_check(o, argc - optind) == 0 ? optind : -1;
}

/* Dissect one capture file; returns malformed frames, or -1 if it cannot be read. */
static int64_t dissect_file(const char *path, const struct options *o, struct summary *sum)
{
	char err[PCAP_ERRBUF_SIZE];
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p;
	uint64_t index = 0, bad = 0;
	double t0 = -1;
	int rc;

	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	if (p == NULL) {
		fprintf(stderr, "droce-pcap: %s\n", err);
		return -1;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		fprintf(stderr, "droce-pcap: %s: link type %s is not Ethernet\n", path,
			pcap_datalink_val_to_name(pcap_datalink(p)));
		pcap_close(p);
		return -1;
	}
	cfg.udp_port = o->udp_port;
	/* jumbo frames: accept any payload the frame can hold, the QP's PMTU is unknown here */
	cfg.max_payload = UINT16_MAX;
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		struct pcap_frame fr = {
			.index = ++index,
			.data = data,
			.len = h->caplen,
			.wire_len = h->len,
		};
		struct droce_pkt pkt;
		enum droce_parse_status st;
		double t = (double)h->ts.tv_sec + (double)h->ts.tv_usec * 1e-9;

		if (t0 < 0)
			t0 = t;
		fr.time = t - t0;
		st = droce_parse(data, h->caplen, &cfg, &pkt);
		summary_add_status(sum, st);
		if (st == DROCE_PARSE_NOT_ROCE)
			continue;
		if (st != DROCE_PARSE_OK)
			bad++;
		dissect_print(stdout, o->format, &fr, st, &pkt);
		if (st == DROCE_PARSE_OK || st == DROCE_PARSE_BAD_ICRC)
			summary_add(sum, &fr, &pkt);
	}
	if (rc == -1)
		fprintf(stderr, "droce-pcap: %s: %s\n", path, pcap_geterr(p));
	pcap_close(p);
	return rc == -1 ? -1 : (int64_t)bad;
}

/* --replay: one capture; the verdict on stdout. */
static int replay_main(const char *path, const struct replay_opts *ro)
{
	struct replay_result r;
	int rc = replay_run(path, ro, &r);

	if (rc != 0)
		return 2;
	replay_print(stdout, path, ro, &r);
	return ro->compare && r.differences > 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct options o = {.format = FORMAT_TEXT, .udp_port = DROCE_ROCEV2_UDP_PORT};
	int first = parse_options(argc, argv, &o);
	uint64_t roce = 0, bad = 0, icrc_bad = 0;
	int status = 0;
	int i;

	if (first < 0)
		return 2;
	if (o.replay)
		return replay_main(argv[first], &o.ro);
	for (i = first; i < argc; i++) {
		struct summary *sum = summary_new();
		int64_t nbad;

		if (sum == NULL) {
			fprintf(stderr, "droce-pcap: out of memory\n");
			return 2;
		}
		nbad = dissect_file(argv[i], &o, sum);
		if (nbad < 0)
			status = 2;
		else if (nbad > 0 && status == 0)
			status = 1;
		roce += summary_roce_frames(sum);
		bad += summary_errors(sum);
		icrc_bad += summary_icrc_errors(sum);
		if (nbad >= 0 && o.summary) {
			if (o.summary_format != FORMAT_JSON)
				printf("== %s\n", argv[i]);
			summary_print(stdout, sum, o.summary_format);
		}
		summary_free(sum);
	}
	if (o.summary && o.summary_format == FORMAT_TEXT && argc - first > 1)
		printf("total: %d captures, %" PRIu64 " RoCEv2 frames, %" PRIu64
		       " malformed (%" PRIu64 " ICRC errors)\n",
		       argc - first, roce, bad, icrc_bad);
	return status;
}
