/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port's faults changed at run time: droce_engine_fault_parse() reads the
 * fault= text, droce_engine_fault_set() swaps the port's injector under running
 * RC traffic, droce_engine_fault_get() reads back what runs. Two ports joined
 * back to back (link=) start without faults; exact faults (drop_at, rates of 1,
 * match:roce) make every effect countable.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "droce_counters.h"
#include "droce_engine.h"
#include "pair_harness.h"

#define MSG_LEN 512u

static struct pair_end e0, e1;

/* Two ports back to back, no fault=; an RC pair e0 -> e1 with ACK timeout @p timeout. */
static void open_pair(uint8_t timeout)
{
	struct pair_opts o = pair_opts_default(IBV_QPT_RC);

	o.eth_mtu = 1500;
	o.buf_len = 1u << 16;
	o.max_send_wr = o.max_recv_wr = 16;
	o.cq_depth = 64;
	o.timeout = timeout;
	o.no_huge = true;
	pair_open(&o, &e0, &e1);
}

/* One signaled WRITE of MSG_LEN bytes of @p seed from e0 to e1; returns its completion. */
static struct ibv_wc write_once(uint8_t seed)
{
	const struct pair_wr w = {.id = seed, .op = IBV_WR_RDMA_WRITE, .len = MSG_LEN};

	memset(e0.buf, seed, MSG_LEN);
	pair_post_send(&e0, &e1, &w);
	return pair_wait_wc(e0.cq, seed);
}

static uint64_t qp_ctr(const char *name)
{
	return pair_qp_counter(&e0, name);
}

static struct droce_engine_port_stats port_stats(const char *port)
{
	struct droce_engine_port_stats st;

	cr_assert_eq(droce_engine_port_stats(port, &st), 0);
	return st;
}

static void set(const char *port, const char *spec)
{
	struct droce_engine_fault_conf f;

	cr_assert_eq(droce_engine_fault_parse(spec, &f), 0, "parse '%s'", spec);
	cr_assert_eq(droce_engine_fault_set(port, &f), 0, "set '%s' on %s", spec, port);
}

/* ------------------------------------------------------------ parsing */

TestSuite(engine_fault_parse);

/* The number parser of the fault items and of DROCE_DEVICES' keys. */
Test(engine_fault_parse, decimal_numbers_only)
{
	uint32_t v = 77;

	cr_expect_eq(droce_engine_parse_u32("1500", 576, 9216, &v), 0);
	cr_expect_eq(v, 1500);
	cr_expect_eq(droce_engine_parse_u32("0100", 0, 1000, &v), 0, "leading zeros");
	cr_expect_eq(v, 100, "decimal, not octal: %u", v);
	cr_expect_eq(droce_engine_parse_u32("4294967295", 0, UINT32_MAX, &v), 0);
	cr_expect_eq(v, UINT32_MAX);
	v = 77;
	cr_expect_eq(droce_engine_parse_u32("575", 576, 9216, &v), -EINVAL, "below min");
	cr_expect_eq(droce_engine_parse_u32("9217", 576, 9216, &v), -EINVAL, "above max");
	cr_expect_eq(droce_engine_parse_u32("4294967296", 0, UINT32_MAX, &v), -EINVAL, "2^32");
	cr_expect_eq(droce_engine_parse_u32("-0", 0, 10, &v), -EINVAL, "a sign");
	cr_expect_eq(droce_engine_parse_u32("+1", 0, 10, &v), -EINVAL, "a sign");
	cr_expect_eq(droce_engine_parse_u32(" 1", 0, 10, &v), -EINVAL, "white space");
	cr_expect_eq(droce_engine_parse_u32("1x", 0, 10, &v), -EINVAL, "trailing text");
	cr_expect_eq(droce_engine_parse_u32("0x1", 0, 10, &v), -EINVAL, "hexadecimal");
	cr_expect_eq(droce_engine_parse_u32("", 0, 10, &v), -EINVAL, "empty");
	cr_expect_eq(droce_engine_parse_u32(NULL, 0, 10, &v), -EINVAL);
	cr_expect_eq(droce_engine_parse_u32("1", 0, 10, NULL), -EINVAL);
	cr_expect_eq(v, 77, "untouched on failure");
}

Test(engine_fault_parse, every_item)
{
	struct droce_engine_fault_conf f;

	cr_assert_eq(droce_engine_fault_parse("drop:0.01+dup:0.02+reorder:0.03+corrupt:0.04+"
					      "delay:0.05+after:7+reorder_us:50+delay_us:20+"
					      "seed:9+match:roce+drop_at:3/10-12",
					      &f),
		     0);
	cr_expect(f.enabled);
	cr_expect(f.roce_only);
	cr_expect_eq(f.drop, 0.01);
	cr_expect_eq(f.dup, 0.02);
	cr_expect_eq(f.reorder, 0.03);
	cr_expect_eq(f.corrupt, 0.04);
	cr_expect_eq(f.delay, 0.05);
	cr_expect_eq(f.reorder_after, 7);
	cr_expect_eq(f.reorder_max_us, 50);
	cr_expect_eq(f.delay_us, 20);
	cr_expect_eq(f.seed, 9);
	cr_expect_eq(f.n_drop_at, 2);
	cr_expect_eq(f.drop_at[0].first, 3);
	cr_expect_eq(f.drop_at[0].last, 3);
	cr_expect_eq(f.drop_at[1].first, 10);
	cr_expect_eq(f.drop_at[1].last, 12);
}

Test(engine_fault_parse, empty_is_an_injector_without_rules)
{
	struct droce_engine_fault_conf f;

	cr_assert_eq(droce_engine_fault_parse("", &f), 0);
	cr_expect(f.enabled);
	cr_expect_eq(f.drop, 0.0);
	cr_expect_eq(f.n_drop_at, 0);
}

Test(engine_fault_parse, bad_text_is_refused_and_leaves_conf)
{
	static const char *const bad[] = {
		"drop",
		"drop:",
		"drop:1.5",
		"drop:-0.1",
		"drop:nan",
		"drop:0.1x",
		"loss:0.1",
		"after:0",
		"after:1025",
		"reorder_us:0",
		"delay_us:-1",
		"seed:-1",
		"match:udp",
		"drop_at:5-3",
		"drop_at:1/1",
		"drop_at:",
		"drop_at:1/2/3/4/5/6/7/8/9",
	};
	struct droce_engine_fault_conf f = {.seed = 77};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(droce_engine_fault_parse(bad[i], &f), -EINVAL, "'%s'", bad[i]);
		cr_expect_eq(f.seed, 77, "'%s' wrote the configuration", bad[i]);
	}
	cr_expect_eq(droce_engine_fault_parse(NULL, &f), -EINVAL);
	cr_expect_eq(droce_engine_fault_parse("drop:0.1", NULL), -EINVAL);
}

/* ------------------------------------------------------------ at run time */

TestSuite(engine_fault_set, .timeout = 60);

Test(engine_fault_set, without_engine)
{
	struct droce_engine_fault_conf f = {.enabled = true};

	cr_expect_eq(droce_engine_fault_set("droce0", &f), -ENODEV);
	cr_expect_eq(droce_engine_fault_get("droce0", &f), -ENODEV);
}

Test(engine_fault_set, get_reads_what_runs)
{
	struct droce_engine_fault_conf f;

	open_pair(16);
	cr_assert_eq(droce_engine_fault_get("droce0", &f), 0);
	cr_expect_not(f.enabled, "no fault= at start");
	cr_expect_not(port_stats("droce0").fault, "no injector at start");
	set("droce0", "drop:0.25+seed:5+match:roce");
	cr_assert_eq(droce_engine_fault_get("droce0", &f), 0);
	cr_expect(f.enabled);
	cr_expect_eq(f.drop, 0.25);
	cr_expect_eq(f.seed, 5);
	cr_expect(f.roce_only);
	cr_expect(port_stats("droce0").fault, "an injector runs");
	cr_assert_eq(droce_engine_fault_get("droce1", &f), 0);
	cr_expect_not(f.enabled, "the other port keeps none");
	cr_assert_eq(droce_engine_fault_set("droce0", NULL), 0);
	cr_assert_eq(droce_engine_fault_get("droce0", &f), 0);
	cr_expect_not(f.enabled, "NULL removes the injector");
	cr_expect_not(port_stats("droce0").fault);
}

Test(engine_fault_set, errors_leave_the_injector)
{
	struct droce_engine_fault_conf f, bad = {.enabled = true, .drop = 2.0};

	open_pair(16);
	set("droce0", "dup:0.5");
	cr_expect_eq(droce_engine_fault_set("droce9", &bad), -EINVAL, "a bad rule, checked first");
	cr_expect_eq(droce_engine_fault_set("droce0", &bad), -EINVAL);
	bad.drop = 0.5;
	cr_expect_eq(droce_engine_fault_set("droce9", &bad), -ENOENT);
	cr_expect_eq(droce_engine_fault_set(NULL, &bad), -EINVAL);
	cr_expect_eq(droce_engine_fault_get("droce9", &f), -ENOENT);
	cr_expect_eq(droce_engine_fault_get(NULL, &f), -EINVAL);
	cr_expect_eq(droce_engine_fault_get("droce0", NULL), -EINVAL);
	cr_assert_eq(droce_engine_fault_get("droce0", &f), 0);
	cr_expect_eq(f.dup, 0.5, "the injector that ran still runs");
	cr_expect_eq(f.drop, 0.0);
}

/* A drop set on a quiet link loses the next RoCE frame: RC sends it again after its timeout. */
Test(engine_fault_set, drop_makes_rc_retransmit)
{
	struct ibv_wc wc;

	open_pair(12); /* 16 ms */
	wc = write_once(1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(qp_ctr("local_ack_timeout_err"), 0, "a clean link first");
	set("droce0", "drop_at:0+match:roce");
	wc = write_once(2);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(e1.buf[MSG_LEN - 1], 2, "the WRITE landed");
	cr_expect_eq(port_stats("droce0").fault_dropped, 1, "the injector dropped one frame");
	cr_expect_geq(qp_ctr("local_ack_timeout_err"), 1, "the requester timed out and resent");
	/* a new injector counts its frames afresh: index 0 is again the next frame */
	set("droce0", "drop_at:0+match:roce");
	cr_expect_eq(port_stats("droce0").fault_dropped, 0, "the new injector's counters");
	wc = write_once(3);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(e1.buf[MSG_LEN - 1], 3);
	cr_expect_eq(port_stats("droce0").fault_dropped, 1);
	cr_expect_geq(qp_ctr("local_ack_timeout_err"), 2, "a second timeout");
	cr_assert_eq(droce_engine_fault_set("droce0", NULL), 0);
	wc = write_once(4);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(e1.buf[MSG_LEN - 1], 4);
}

/*
 * Frames the old injector holds leave with the swap, not through the new rules:
 * a WRITE held by a 1 s delay completes although the new injector drops every
 * RoCE frame it sees (its retransmissions would all be lost).
 */
Test(engine_fault_set, held_frames_leave_at_the_swap)
{
	struct ibv_sge s = {.length = MSG_LEN};
	struct ibv_send_wr wr = {.wr_id = 7,
				 .sg_list = &s,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct droce_engine_port_stats st;
	struct timespec t0;
	struct ibv_wc wc;

	open_pair(18); /* 1 s: the held frame is not sent again first, usually */
	set("droce0", "delay:1+delay_us:1000000+match:roce");
	s.addr = (uintptr_t)e0.buf;
	s.lkey = e0.mr->lkey;
	wr.wr.rdma.remote_addr = (uintptr_t)e1.buf;
	wr.wr.rdma.rkey = e1.mr->rkey;
	memset(e0.buf, 0x5a, MSG_LEN);
	cr_assert_eq(ibv_post_send(e0.qp, &wr, &bad), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		cr_assert_lt(pair_elapsed(&t0), PAIR_LIVENESS, "the WRITE was never held");
		st = port_stats("droce0");
	} while (st.fault_held == 0);
	set("droce0", "drop:1+match:roce");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&wc, 0, sizeof(wc));
	while (ibv_poll_cq(e0.cq, 1, &wc) == 0)
		cr_assert_lt(pair_elapsed(&t0), PAIR_LIVENESS, "no completion");
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(e1.buf[0], 0x5a, "the held WRITE landed");
	cr_expect_eq(e1.buf[MSG_LEN - 1], 0x5a);
	st = port_stats("droce0");
	cr_expect_eq(st.fault_held, 0, "the new injector holds nothing");
}
