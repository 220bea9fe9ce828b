/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Linux Soft-RoCE captures replayed into a droce responder, without a port: droce-pcap's
 * replay (app/droce-pcap, through its API, as `droce-pcap --replay --compare` runs it).
 *
 * A droce RC QP stands for the capture's server (10.99.0.2 / fd00::2, QPN 0x11). The client's
 * requests to it are fed, in capture order, into droce's transport, each followed by a send
 * pass; what droce transmits is compared with the responses Linux's server sent. The rewrites
 * (RETH/AtomicETH onto droce's MR, receive WQEs, READ sources, atomic targets, QP attributes)
 * are listed at the top of app/droce-pcap/replay.c; what the capture cannot show and the
 * tolerated differences (ACK credits, ACK coalescing, fields outside the transport) at the top
 * of app/droce-pcap/compare.c. The -head captures were cut: droce's responses to the last
 * requests are not compared (--truncated).
 *
 * Each capture also pins what was replayed: the request frames fed and the responses of the
 * server the comparison found (the frames the capture lost are counted apart).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "droce_pcap.h"
#include "droce_test.h"

#define SERVER_QPN 0x11u

struct expect {
	const char *capture;
	const char *server;
	bool truncated;
	uint64_t requests;        /* request frames fed */
	uint64_t linux_responses; /* the server's responses in the capture */
};

static void replay(const struct expect *e)
{
	char *log = NULL, *verdict = NULL;
	size_t log_len = 0, verdict_len = 0;
	FILE *f = open_memstream(&log, &log_len), *v = open_memstream(&verdict, &verdict_len);
	struct replay_opts o = {
		.compare = true,
		.truncated = e->truncated,
		.server = e->server,
		.log = f,
	};
	struct replay_result r;
	int rc;

	cr_assert_not_null(f);
	cr_assert_not_null(v);
	rc = replay_run(droce_test_data(e->capture), &o, &r);
	fclose(f);
	cr_assert_eq(rc, 0, "%s cannot be replayed (%d)", e->capture, rc);
	replay_print(v, e->capture, &o, &r);
	fclose(v);
	cr_log_info("%s", verdict);
	cr_expect_eq(r.server_qpn, SERVER_QPN, "%s: server QP %#x", e->capture, r.server_qpn);
	cr_expect_eq(r.requests, e->requests, "%s: %llu requests fed, expected %llu", e->capture,
		     (unsigned long long)r.requests, (unsigned long long)e->requests);
	cr_expect_eq(r.linux_responses, e->linux_responses,
		     "%s: %llu Linux responses, expected %llu", e->capture,
		     (unsigned long long)r.linux_responses, (unsigned long long)e->linux_responses);
	cr_expect_gt(r.responses, 0, "%s: droce sent nothing", e->capture);
	cr_expect_eq(r.malformed, 0, "%s: droce sent frames its own parser refuses", e->capture);
	cr_expect_eq(r.chained, 0, "%s: droce sent chained frames", e->capture);
	cr_expect(r.rts, "%s: droce's QP left RTS", e->capture);
	cr_expect_eq(r.recv_errors, 0, "%s: receive completions in error", e->capture);
	cr_expect_eq(r.differences, 0, "%s: %llu differences:\n%s", e->capture,
		     (unsigned long long)r.differences, log);
	free(log);
	free(verdict);
}

TestSuite(replay_captures, .timeout = 120);

Test(replay_captures, rc_pingpong)
{
	replay(&(struct expect){"linux-rxe-rc_pingpong.pcap", "10.99.0.2", false, 42, 22});
}

Test(replay_captures, send_lat_inl)
{
	replay(&(struct expect){"linux-rxe-send_lat_inl.pcap", "10.99.0.2", false, 101, 101});
}

Test(replay_captures, write_bw)
{
	replay(&(struct expect){"linux-rxe-write_bw-head.pcap", "10.99.0.2", true, 439, 20});
}

Test(replay_captures, read_bw)
{
	replay(&(struct expect){"linux-rxe-read_bw-head.pcap", "10.99.0.2", true, 61, 901});
}

Test(replay_captures, atomic_fa)
{
	replay(&(struct expect){"linux-rxe-atomic_fa.pcap", "10.99.0.2", false, 100, 100});
}

Test(replay_captures, atomic_cs)
{
	replay(&(struct expect){"linux-rxe-atomic_cs.pcap", "10.99.0.2", false, 100, 100});
}

Test(replay_captures, write_lat_v6)
{
	replay(&(struct expect){"linux-rxe-write_lat_v6.pcap", "fd00::2", false, 50, 50});
}

Test(replay_captures, lossy_write_bw)
{
	replay(&(struct expect){"linux-rxe-lossy_write_bw-head.pcap", "10.99.0.2", true, 1138, 23});
}

Test(replay_captures, lossy_read_bw)
{
	replay(&(struct expect){"linux-rxe-lossy_read_bw-head.pcap", "10.99.0.2", true, 171, 1290});
}

Test(replay_captures, reorder_send_bw)
{
	replay(&(struct expect){"linux-rxe-reorder_send_bw-head.pcap", "10.99.0.2", true, 1328,
				129});
}
