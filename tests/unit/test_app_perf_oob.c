/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf's out-of-band exchange against perftest 4.5's own bytes: the TCP
 * streams of real ib_*_bw / ib_*_lat runs (Debian 12's binaries, server and
 * client, on the drop-in; tests/data/perftest-4.5-*.oob.txt) are walked with
 * droce-perf's plan of each test, every message decoded, its fields checked
 * where the run's output shows them, and encoded again to the same bytes.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_test.h"
#include "perf_oob.h"

#define STREAM_MAX (64 * 1024)

/* One direction of a capture: its bytes, and how far the walk has read. */
struct stream {
	uint8_t b[STREAM_MAX];
	size_t len, at;
};

struct capture {
	struct stream c2s, s2c;
};

static int hex_digit(char ch)
{
	return ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10;
}

static void load(const char *name, struct capture *cap)
{
	FILE *f = fopen(droce_test_data(name), "r");
	char line[8192];

	cr_assert_not_null(f, "%s", name);
	memset(cap, 0, sizeof(*cap));
	while (fgets(line, sizeof(line), f) != NULL) {
		struct stream *s = line[0] == 'C' ? &cap->c2s : &cap->s2c;
		const char *h = line + 2;

		if (line[0] == '#')
			continue;
		cr_assert(line[0] == 'C' || line[0] == 'S', "%s: %s", name, line);
		for (; h[0] != '\n' && h[0] != '\0'; h += 2) {
			cr_assert_lt(s->len, sizeof(s->b));
			s->b[s->len++] = (uint8_t)(hex_digit(h[0]) << 4 | hex_digit(h[1]));
		}
	}
	fclose(f);
}

static const uint8_t *take(struct stream *s, size_t len)
{
	const uint8_t *p = s->b + s->at;

	cr_assert_leq(s->at + len, s->len, "the capture ends before a %zu-byte message", len);
	s->at += len;
	return p;
}

/* What the walk saw, for the checks of each test. */
struct seen {
	double version[2];
	int32_t page[2], line[2];
	enum ibv_mtu mtu[2];
	struct perf_dest keys[2][4]; /* [client, server][QP], the first KEYS step */
	unsigned int syncs;
	struct perf_oob_report report[2];
	bool report_seen, done_seen;
};

static void check_keys(const uint8_t *m, struct perf_dest *d)
{
	uint8_t again[PERF_OOB_KEYS_LEN];

	cr_assert_eq(perf_oob_keys_decode(m, d), 0, "%.108s", m);
	perf_oob_keys_encode(again, d);
	cr_expect_arr_eq(again, m, PERF_OOB_KEYS_LEN, "addresses encode back: %.108s", m);
}

/* One message each way of @p kind; [0] is the client's, [1] the server's. */
static void exchange(struct capture *cap, enum perf_oob_step_kind kind, unsigned int num_qps,
		     bool first_keys, struct seen *sn)
{
	struct stream *dir[2] = {&cap->c2s, &cap->s2c};

	for (int side = 0; side < 2; side++) {
		const uint8_t *m;
		uint8_t again[PERF_OOB_VERSION_LEN];

		switch (kind) {
		case PERF_OOB_VERSION:
			m = take(dir[side], PERF_OOB_VERSION_LEN);
			cr_assert_eq(perf_oob_version_decode(m, &sn->version[side]), 0);
			perf_oob_version_encode(again);
			cr_expect_arr_eq(again, m, PERF_OOB_VERSION_LEN);
			break;
		case PERF_OOB_PAGE_SIZE:
		case PERF_OOB_CACHE_LINE:
			m = take(dir[side], PERF_OOB_INT_LEN);
			*(kind == PERF_OOB_PAGE_SIZE ? &sn->page[side] : &sn->line[side]) =
				perf_oob_int_decode(m);
			perf_oob_int_encode(again, perf_oob_int_decode(m));
			cr_expect_arr_eq(again, m, PERF_OOB_INT_LEN);
			break;
		case PERF_OOB_MTU:
			m = take(dir[side], PERF_OOB_MTU_LEN);
			cr_assert_eq(perf_oob_mtu_decode(m, &sn->mtu[side]), 0);
			perf_oob_mtu_encode(again, sn->mtu[side]);
			cr_expect_arr_eq(again, m, PERF_OOB_MTU_LEN);
			break;
		case PERF_OOB_KEYS:
			for (unsigned int q = 0; q < num_qps; q++) {
				struct perf_dest d;

				check_keys(take(dir[side], PERF_OOB_KEYS_LEN), &d);
				if (first_keys && q < 4)
					sn->keys[side][q] = d;
				else
					cr_expect_eq(d.qpn, sn->keys[side][q].qpn,
						     "a later KEYS repeats the QPs in order");
			}
			break;
		case PERF_OOB_SYNC: {
			struct perf_dest d;

			check_keys(take(dir[side], PERF_OOB_KEYS_LEN), &d);
			if (sn->keys[side][0].qpn == 0) /* latency tests SYNC before any KEYS */
				sn->keys[side][0] = d;
			cr_expect_eq(d.qpn, sn->keys[side][0].qpn, "a SYNC is QP 0's address");
			break;
		}
		case PERF_OOB_REPORT: {
			uint8_t f[PERF_OOB_REPORT_FIELDS][PERF_OOB_FIELD_LEN];
			uint8_t back[PERF_OOB_REPORT_FIELDS][PERF_OOB_FIELD_LEN];

			for (int i = 0; i < PERF_OOB_REPORT_FIELDS; i++)
				memcpy(f[i], take(dir[side], PERF_OOB_FIELD_LEN),
				       PERF_OOB_FIELD_LEN);
			perf_oob_report_decode(f, &sn->report[side]);
			perf_oob_report_encode(back, &sn->report[side]);
			cr_expect_arr_eq(back, f, sizeof(f), "a report encodes back");
			sn->report_seen = true;
			break;
		}
		case PERF_OOB_DONE:
			m = take(dir[side], PERF_OOB_DONE_LEN);
			cr_expect_arr_eq(m, PERF_OOB_DONE_STR, PERF_OOB_DONE_LEN);
			sn->done_seen = true;
			break;
		default:
			return; /* a local step */
		}
	}
	if (kind == PERF_OOB_SYNC)
		sn->syncs++;
}

/*
 * Walk capture @p name with the plan of @p flow: every byte is a message of
 * the plan, in the plan's order, and nothing is left over.
 */
static void walk(const char *name, enum perf_oob_flow flow, unsigned int n_sizes, bool all,
		 unsigned int num_qps, struct seen *sn)
{
	static struct capture cap;
	struct perf_oob_step steps[256];
	unsigned int n = perf_oob_plan(flow, n_sizes, all, steps, 256);
	bool first_keys = true;

	cr_assert_gt(n, 0);
	load(name, &cap);
	memset(sn, 0, sizeof(*sn));
	for (unsigned int i = 0; i < n; i++) {
		exchange(&cap, steps[i].kind, num_qps, first_keys, sn);
		if (steps[i].kind == PERF_OOB_KEYS)
			first_keys = false;
	}
	cr_expect_eq(cap.c2s.at, cap.c2s.len, "%s: client bytes beyond the plan", name);
	cr_expect_eq(cap.s2c.at, cap.s2c.len, "%s: server bytes beyond the plan", name);
}

/* The prelude every capture has: perftest 4.5's version, 4 KiB pages, 64 B lines, 1024 MTU. */
static void expect_prelude(const struct seen *sn)
{
	for (int side = 0; side < 2; side++) {
		cr_expect(fabs(sn->version[side] - 6.06) < 1e-9, "version %f", sn->version[side]);
		cr_expect_eq(sn->page[side], 4096);
		cr_expect_eq(sn->line[side], 64);
		cr_expect_eq(sn->mtu[side], IBV_MTU_1024);
	}
}

/* The GID a side's address carries: ::ffff:10.0.0.(1 server, 2 client) */
static void expect_gid(const struct perf_dest *d, uint8_t last)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	cr_expect_arr_eq(d->gid.raw, prefix, sizeof(prefix));
	cr_expect_eq(d->gid.raw[12], 10);
	cr_expect_eq(d->gid.raw[13], 0);
	cr_expect_eq(d->gid.raw[14], 0);
	cr_expect_eq(d->gid.raw[15], last);
}

Test(app_perf_oob, write_bw)
{
	struct seen sn;

	walk("perftest-4.5-write_bw.oob.txt", PERF_OOB_FLOW_BW_ONE_SIDED, 1, false, 1, &sn);
	expect_prelude(&sn);
	/* the client's and server's address lines of the run's output */
	cr_expect_eq(sn.keys[0][0].qpn, 0x11);
	cr_expect_eq(sn.keys[0][0].psn, 0xe58a30);
	cr_expect_eq(sn.keys[0][0].rkey, 0x1dc);
	cr_expect_eq(sn.keys[0][0].vaddr, 0x5588cbfb5000ull);
	cr_expect_eq(sn.keys[0][0].out_reads, 1, "WRITE tests answer no READs");
	cr_expect_eq(sn.keys[0][0].lid, 0);
	cr_expect_eq(sn.keys[0][0].srqn, 0);
	expect_gid(&sn.keys[0][0], 2);
	cr_expect_eq(sn.keys[1][0].psn, 0x9d03a6);
	cr_expect_eq(sn.keys[1][0].rkey, 0x165);
	cr_expect_eq(sn.keys[1][0].vaddr, 0x55f4f1fe3000ull);
	expect_gid(&sn.keys[1][0], 1);
	cr_expect_eq(sn.syncs, 3, "after RTR, before the report, closing");
	/* the client's table row: 4096 200 134.95 130.08 0.033302 */
	cr_expect(sn.report_seen);
	cr_expect_eq(sn.report[0].size, 4096);
	cr_expect_eq(sn.report[0].iters, 200);
	cr_expect(fabs(sn.report[0].bw_peak - 134.95) < 0.005, "%f", sn.report[0].bw_peak);
	cr_expect(fabs(sn.report[0].bw_avg - 130.08) < 0.005, "%f", sn.report[0].bw_avg);
	cr_expect(fabs(sn.report[0].msg_rate - 0.033302) < 0.0000005, "%f", sn.report[0].msg_rate);
	cr_expect(sn.done_seen);
}

Test(app_perf_oob, write_bw_two_qps)
{
	struct seen sn;

	walk("perftest-4.5-write_bw_q2.oob.txt", PERF_OOB_FLOW_BW_ONE_SIDED, 1, false, 2, &sn);
	expect_prelude(&sn);
	cr_expect_eq(sn.keys[0][0].qpn, 0x11);
	cr_expect_eq(sn.keys[0][1].qpn, 0x12);
	cr_expect_eq(sn.keys[1][1].vaddr - sn.keys[1][0].vaddr, 4096, "a page a QP");
	cr_expect_eq(sn.report[0].iters, 400, "iterations count every QP's messages");
}

Test(app_perf_oob, read_bw)
{
	struct seen sn;

	walk("perftest-4.5-read_bw.oob.txt", PERF_OOB_FLOW_BW_ONE_SIDED, 1, false, 1, &sn);
	expect_prelude(&sn);
	cr_expect_eq(sn.keys[0][0].out_reads, 128, "the device's max_qp_rd_atom");
	cr_expect_eq(sn.keys[1][0].out_reads, 128);
	cr_expect_eq(sn.report[0].size, 4096);
	cr_expect_eq(sn.report[0].iters, 200);
}

Test(app_perf_oob, atomic_bw)
{
	struct seen sn;

	walk("perftest-4.5-atomic_bw.oob.txt", PERF_OOB_FLOW_BW_ONE_SIDED, 1, false, 1, &sn);
	expect_prelude(&sn);
	cr_expect_eq(sn.keys[0][0].out_reads, 128);
	cr_expect_eq(sn.report[0].size, 8);
	cr_expect_eq(sn.report[0].iters, 200);
	cr_expect(fabs(sn.report[0].msg_rate - 0.055174) < 0.0000005, "%f", sn.report[0].msg_rate);
}

Test(app_perf_oob, send_bw)
{
	struct seen sn;

	walk("perftest-4.5-send_bw.oob.txt", PERF_OOB_FLOW_SEND_BW, 1, false, 1, &sn);
	expect_prelude(&sn);
	cr_expect_eq(sn.syncs, 3, "after RTR, before the run, closing");
	cr_expect_not(sn.report_seen, "send_bw exchanges no report");
	cr_expect(sn.done_seen);
}

Test(app_perf_oob, send_bw_every_size)
{
	struct seen sn;

	/* -a: 2 .. 2^23, two SYNCs around each size */
	walk("perftest-4.5-send_bw_all.oob.txt", PERF_OOB_FLOW_SEND_BW, 23, true, 1, &sn);
	cr_expect_eq(sn.syncs, 2 + 2 * 23);
}

Test(app_perf_oob, write_lat)
{
	struct seen sn;

	walk("perftest-4.5-write_lat.oob.txt", PERF_OOB_FLOW_WRITE_LAT, 1, false, 1, &sn);
	expect_prelude(&sn);
	cr_expect_eq(sn.syncs, 2);
	cr_expect_not(sn.done_seen, "write_lat closes without a word");
}

Test(app_perf_oob, send_lat)
{
	struct seen sn;

	walk("perftest-4.5-send_lat.oob.txt", PERF_OOB_FLOW_SEND_LAT, 1, false, 1, &sn);
	expect_prelude(&sn);
	cr_expect_eq(sn.syncs, 3);
	cr_expect(sn.done_seen);
}

Test(app_perf_oob, read_lat)
{
	struct seen sn;

	walk("perftest-4.5-read_lat.oob.txt", PERF_OOB_FLOW_LAT_ONE_SIDED, 1, false, 1, &sn);
	expect_prelude(&sn);
	cr_expect_eq(sn.keys[0][0].out_reads, 128);
	cr_expect_eq(sn.syncs, 3);
	cr_expect(sn.done_seen);
}

Test(app_perf_oob, atomic_lat)
{
	struct seen sn;

	walk("perftest-4.5-atomic_lat.oob.txt", PERF_OOB_FLOW_LAT_ONE_SIDED, 1, false, 1, &sn);
	expect_prelude(&sn);
	cr_expect_eq(sn.syncs, 3);
}

Test(app_perf_oob, keys_encode_layout)
{
	struct perf_dest d = {.lid = 0x12,
			      .out_reads = 16,
			      .qpn = 0xabcdef,
			      .psn = 0x123456,
			      .rkey = 0xdeadbeef,
			      .vaddr = 0x7f0011223344ull,
			      .gid.raw = {0xfe, 0x80, [15] = 0x01},
			      .srqn = 0};
	uint8_t m[PERF_OOB_KEYS_LEN];
	const char *want = "0012:0010:abcdef:123456:deadbeef:00007f0011223344:"
			   "fe:80:00:00:00:00:00:00:00:00:00:00:00:00:00:01:00000000:";

	perf_oob_keys_encode(m, &d);
	cr_expect_eq(strlen(want), PERF_OOB_KEYS_LEN - 1);
	cr_expect_arr_eq(m, want, PERF_OOB_KEYS_LEN - 1);
	cr_expect_eq(m[PERF_OOB_KEYS_LEN - 1], 0);
}

Test(app_perf_oob, keys_decode_refuses_malformed)
{
	const char *good = "0000:0001:000011:e58a30:000001dc:00005588cbfb5000:"
			   "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:02:00000000:";
	struct perf_dest d;
	uint8_t m[PERF_OOB_KEYS_LEN];

	memset(m, 0, sizeof(m));
	memcpy(m, good, strlen(good));
	cr_expect_eq(perf_oob_keys_decode(m, &d), 0);
	memset(m, 'a', sizeof(m));
	cr_expect_eq(perf_oob_keys_decode(m, &d), -EINVAL, "no NUL");
	memset(m, 0, sizeof(m));
	memcpy(m, good, 60);
	cr_expect_eq(perf_oob_keys_decode(m, &d), -EINVAL, "cut short");
	memcpy(m, good, strlen(good));
	m[7] = 'x';
	cr_expect_eq(perf_oob_keys_decode(m, &d), -EINVAL, "not hex");
	memcpy(m, good, strlen(good));
	m[4] = '-';
	cr_expect_eq(perf_oob_keys_decode(m, &d), -EINVAL, "no separator");
	memcpy(m, good, strlen(good));
	m[strlen(good) - 1] = '\0';
	cr_expect_eq(perf_oob_keys_decode(m, &d), -EINVAL, "last field unended");
	memset(m, 0, sizeof(m));
	memcpy(m, "10000:", 6);
	memcpy(m + 6, good + 5, strlen(good) - 5);
	cr_expect_eq(perf_oob_keys_decode(m, &d), -EINVAL, "a LID wider than 16 bits");
}

Test(app_perf_oob, version_mtu_int)
{
	uint8_t v[PERF_OOB_VERSION_LEN] = "5.60";
	uint8_t mtu[PERF_OOB_MTU_LEN] = {'5', 0};
	uint8_t i4[PERF_OOB_INT_LEN];
	enum ibv_mtu m;
	double ver;

	cr_expect_eq(perf_oob_version_decode(v, &ver), 0);
	cr_expect(fabs(ver - 5.60) < 1e-9);
	cr_expect_lt(ver, PERF_OOB_VERSION_MIN, "an old perftest is refused by the caller");
	memset(v, '6', sizeof(v));
	cr_expect_eq(perf_oob_version_decode(v, &ver), -EINVAL, "no NUL");
	memset(v, 0, sizeof(v));
	cr_expect_eq(perf_oob_version_decode(v, &ver), -EINVAL, "empty");
	cr_expect_eq(perf_oob_mtu_decode(mtu, &m), 0);
	cr_expect_eq(m, IBV_MTU_4096);
	mtu[0] = '6';
	cr_expect_eq(perf_oob_mtu_decode(mtu, &m), -EINVAL, "no such MTU");
	mtu[0] = '0';
	cr_expect_eq(perf_oob_mtu_decode(mtu, &m), -EINVAL, "no such MTU");
	mtu[0] = '3';
	mtu[1] = '3';
	cr_expect_eq(perf_oob_mtu_decode(mtu, &m), -EINVAL, "no NUL");
	perf_oob_int_encode(i4, -2);
	cr_expect_eq(i4[0], 0xff);
	cr_expect_eq(i4[3], 0xfe);
	cr_expect_eq(perf_oob_int_decode(i4), -2);
}

Test(app_perf_oob, plan_bytes_and_names)
{
	struct perf_oob_step s[8];

	cr_expect_eq(perf_oob_plan(PERF_OOB_FLOW_SEND_BW, 1, false, s, 8), 0, "too short a list");
	cr_expect_eq(perf_oob_step_bytes(PERF_OOB_KEYS, 3), 3 * PERF_OOB_KEYS_LEN);
	cr_expect_eq(perf_oob_step_bytes(PERF_OOB_REPORT, 1), 40);
	cr_expect_eq(perf_oob_step_bytes(PERF_OOB_RUN, 1), 0);
	cr_expect_str_eq(perf_oob_step_name(PERF_OOB_SYNC), "sync");
}
