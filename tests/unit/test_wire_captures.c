/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every RoCEv2 packet that Linux Soft-RoCE sent in the captures of tests/data:
 * it parses, its ICRC verifies, its fields match tshark's independent
 * decoding (tests/data/<capture>.tshark.tsv, made by tools/gen-golden.sh),
 * and it is rebuilt byte for byte from its descriptor.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <droce_wire.h>

#include "droce_test.h"

/* ---- tshark's view: one row per RoCEv2 frame, columns by name */

#define MAX_COLS 32

struct golden {
	char *cols[MAX_COLS]; /* header names */
	int ncols;
	char ***rows;         /* rows[frame number] = fields, or NULL */
	uint64_t nframes_cap; /* size of rows[] */
	uint64_t nrows;
};

static void golden_load(struct golden *g, const char *capture)
{
	char name[256], *line = NULL;
	size_t cap = 0;
	FILE *f;
	bool header = true;

	memset(g, 0, sizeof(*g));
	snprintf(name, sizeof(name), "%.*s.tshark.tsv", (int)(strlen(capture) - 5), capture);
	f = fopen(droce_test_data(name), "r");
	cr_assert_not_null(f, "missing golden file %s (tools/gen-golden.sh makes it)", name);
	g->nframes_cap = 1 << 16;
	g->rows = calloc(g->nframes_cap, sizeof(*g->rows));
	cr_assert_not_null(g->rows);
	while (getline(&line, &cap, f) > 0) {
		char **fields = calloc(MAX_COLS, sizeof(char *));
		char *s = strdup(line), *tok;
		int n = 0;

		s[strcspn(s, "\n")] = '\0';
		while ((tok = strsep(&s, "\t")) != NULL && n < MAX_COLS)
			fields[n++] = tok;
		if (header) {
			memcpy(g->cols, fields, sizeof(g->cols));
			g->ncols = n;
			header = false;
		} else {
			uint64_t fr = strtoull(fields[0], NULL, 10);

			cr_assert_lt(fr, g->nframes_cap);
			g->rows[fr] = fields;
			g->nrows++;
		}
	}
	free(line);
	fclose(f);
}

static const char *golden_field(const struct golden *g, uint64_t frame, const char *col)
{
	int i;

	for (i = 0; i < g->ncols; i++)
		if (strcmp(g->cols[i], col) == 0)
			return g->rows[frame][i];
	cr_assert_fail("no column %s in golden data", col);
	return NULL;
}

static uint64_t golden_num(const struct golden *g, uint64_t frame, const char *col)
{
	const char *v = golden_field(g, frame, col);

	cr_assert(v != NULL && v[0] != '\0', "frame %" PRIu64 ": tshark has no %s", frame, col);
	return strtoull(v, NULL, 0);
}

/* ---- per-frame checks */

struct run {
	const char *capture;
	struct golden golden;
	uint64_t roce;    /* frames the parser took as RoCEv2 */
	uint64_t matched; /* frames compared with tshark */
	uint64_t rebuilt;
};

static void check_parse(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct run *r = arg;
	struct droce_pkt pkt;
	enum droce_parse_status st = droce_parse(frame, len, &cfg, &pkt);

	if (st == DROCE_PARSE_NOT_ROCE)
		return;
	r->roce++;
	cr_expect_eq(st, DROCE_PARSE_OK, "%s frame %" PRIu64 ": %s", r->capture, index,
		     droce_parse_status_name[st]);
}

#define EXPECT_FIELD(r, idx, col, val)                                                    \
	cr_expect_eq((uint64_t)(val), golden_num(&(r)->golden, idx, col),                 \
		     "%s frame %" PRIu64 ": %s is 0x%" PRIx64 ", tshark says 0x%" PRIx64, \
		     (r)->capture, idx, col, (uint64_t)(val), golden_num(&(r)->golden, idx, col))

static void check_golden(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct run *r = arg;
	struct droce_hdr_fields f;
	struct droce_pkt pkt;
	const struct droce_udp_hdr *udp;
	uint32_t m;

	if (droce_parse(frame, len, &cfg, &pkt) != DROCE_PARSE_OK)
		return;
	cr_assert_lt(index, r->golden.nframes_cap);
	cr_assert_not_null(r->golden.rows[index], "%s frame %" PRIu64 " is not RoCEv2 to tshark",
			   r->capture, index);
	r->matched++;
	droce_pkt_fields(&pkt, frame, &f);
	udp = (const void *)(frame + pkt.bth_off - sizeof(*udp));
	m = pkt.mask;

	EXPECT_FIELD(r, index, "udp.srcport", droce_udp_sport(udp));
	EXPECT_FIELD(r, index, "udp.length", droce_udp_len(udp));
	EXPECT_FIELD(r, index, "infiniband.bth.opcode", pkt.opcode);
	EXPECT_FIELD(r, index, "infiniband.bth.se", f.se);
	EXPECT_FIELD(r, index, "infiniband.bth.m", f.mig);
	EXPECT_FIELD(r, index, "infiniband.bth.padcnt", pkt.pad);
	EXPECT_FIELD(r, index, "infiniband.bth.tver", f.tver);
	EXPECT_FIELD(r, index, "infiniband.bth.p_key", f.pkey);
	EXPECT_FIELD(r, index, "infiniband.bth.destqp", pkt.qpn);
	EXPECT_FIELD(r, index, "infiniband.bth.a", f.ackreq);
	EXPECT_FIELD(r, index, "infiniband.bth.psn", pkt.psn);
	EXPECT_FIELD(r, index, "infiniband.invariant.crc",
		     be32toh(*(const uint32_t *)(frame + pkt.icrc_off)));
	if (m & DROCE_OPM_DETH) {
		EXPECT_FIELD(r, index, "infiniband.deth.q_key", f.deth.qkey);
		EXPECT_FIELD(r, index, "infiniband.deth.srcqp", f.deth.sqpn);
	}
	if (m & DROCE_OPM_RETH) {
		EXPECT_FIELD(r, index, "infiniband.reth.va", f.reth.va);
		EXPECT_FIELD(r, index, "infiniband.reth.r_key", f.reth.rkey);
		EXPECT_FIELD(r, index, "infiniband.reth.dmalen", f.reth.len);
	}
	if (m & DROCE_OPM_ATMETH) {
		/* tshark names the AtomicETH address and key as the RETH's */
		EXPECT_FIELD(r, index, "infiniband.reth.va", f.atmeth.va);
		EXPECT_FIELD(r, index, "infiniband.reth.r_key", f.atmeth.rkey);
		EXPECT_FIELD(r, index, "infiniband.atomiceth.swapdt", f.atmeth.swap_add);
		EXPECT_FIELD(r, index, "infiniband.atomiceth.cmpdt", f.atmeth.compare);
	}
	if (m & DROCE_OPM_AETH) {
		EXPECT_FIELD(r, index, "infiniband.aeth.syndrome", f.aeth.syndrome);
		EXPECT_FIELD(r, index, "infiniband.aeth.msn", f.aeth.msn);
	}
	if (m & DROCE_OPM_ATMACK)
		EXPECT_FIELD(r, index, "infiniband.atomicacketh.origremdt", f.atmack_orig);
}

static void check_rebuild(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct run *r = arg;
	struct droce_hdr_fields f;
	struct droce_addr a;
	struct droce_pkt pkt;
	uint8_t out[10000];
	uint16_t ip_id;
	ssize_t n;

	if (droce_parse(frame, len, &cfg, &pkt) != DROCE_PARSE_OK)
		return;
	droce_pkt_fields(&pkt, frame, &f);
	droce_pkt_addr(&pkt, frame, &a, &ip_id);
	n = droce_build_frame(out, sizeof(out), &a, ip_id, &f, frame + pkt.payload_off,
			      pkt.payload_len);
	cr_assert_eq(n, pkt.icrc_off + DROCE_ICRC_LEN, "%s frame %" PRIu64 ": rebuilt %zd bytes",
		     r->capture, index, n);
	cr_expect_arr_eq(out, frame, (size_t)n, "%s frame %" PRIu64 " differs once rebuilt",
			 r->capture, index);
	r->rebuilt++;
}

static void run_parse(const char *capture)
{
	struct run r = {.capture = capture};

	droce_test_pcap_foreach(capture, check_parse, &r);
	cr_assert_gt(r.roce, 0, "%s holds no RoCEv2 frame", capture);
}

static void run_golden(const char *capture)
{
	struct run r = {.capture = capture};

	golden_load(&r.golden, capture);
	droce_test_pcap_foreach(capture, check_golden, &r);
	cr_assert_eq(r.matched, r.golden.nrows,
		     "%s: droce decoded %" PRIu64 " frames, tshark %" PRIu64, capture, r.matched,
		     r.golden.nrows);
}

static void run_rebuild(const char *capture)
{
	struct run r = {.capture = capture};

	droce_test_pcap_foreach(capture, check_rebuild, &r);
	cr_assert_gt(r.rebuilt, 0);
}

#define CAPTURE_TESTS(id, file)    \
	Test(captures_parse, id)   \
	{                          \
		run_parse(file);   \
	}                          \
	Test(captures_tshark, id)  \
	{                          \
		run_golden(file);  \
	}                          \
	Test(captures_rebuild, id) \
	{                          \
		run_rebuild(file); \
	}

CAPTURE_TESTS(atomic_cs, "linux-rxe-atomic_cs.pcap")
CAPTURE_TESTS(atomic_fa, "linux-rxe-atomic_fa.pcap")
CAPTURE_TESTS(ipv6_rc_pingpong, "linux-rxe-ipv6_rc_pingpong.pcap")
CAPTURE_TESTS(lossy_read_bw, "linux-rxe-lossy_read_bw-head.pcap")
CAPTURE_TESTS(lossy_write_bw, "linux-rxe-lossy_write_bw-head.pcap")
CAPTURE_TESTS(rc_pingpong, "linux-rxe-rc_pingpong.pcap")
CAPTURE_TESTS(read_bw, "linux-rxe-read_bw-head.pcap")
CAPTURE_TESTS(reorder_send_bw, "linux-rxe-reorder_send_bw-head.pcap")
CAPTURE_TESTS(rping_cm, "linux-rxe-rping_cm.pcap")
CAPTURE_TESTS(send_lat_inl, "linux-rxe-send_lat_inl.pcap")
CAPTURE_TESTS(srq_pingpong, "linux-rxe-srq_pingpong.pcap")
CAPTURE_TESTS(uc_pingpong, "linux-rxe-uc_pingpong.pcap")
CAPTURE_TESTS(ud_pingpong, "linux-rxe-ud_pingpong.pcap")
CAPTURE_TESTS(write_bw, "linux-rxe-write_bw-head.pcap")
CAPTURE_TESTS(write_lat_v6, "linux-rxe-write_lat_v6.pcap")

/* The UDP source port Linux chose for each QP pair follows from the QPNs. */
static void check_sport(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct droce_pkt pkt;
	const struct droce_udp_hdr *udp;
	uint32_t *checked = arg;

	(void)index;
	if (droce_parse(frame, len, &cfg, &pkt) != DROCE_PARSE_OK)
		return;
	udp = (const void *)(frame + pkt.bth_off - sizeof(*udp));
	/* both ends of these runs use QPN 0x11: the pair is (0x11, 0x11) */
	if (pkt.qpn != 0x11)
		return;
	cr_expect_eq(droce_udp_sport(udp), droce_udp_sport_for_qps(0, 0x11, 0x11));
	(*checked)++;
}

Test(captures_sport, follows_qp_pair)
{
	uint32_t checked = 0;

	droce_test_pcap_foreach("linux-rxe-rc_pingpong.pcap", check_sport, &checked);
	cr_assert_gt(checked, 0);
}
