/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transports through the real engine over a faulty link: two ports joined
 * back to back (link=), each sending through a fault injector configured by
 * DROCE_DEVICES fault= (doc/fault-injection.md, "In the engine"), and only
 * verbs calls on top.
 *
 * - RC at 1, 5 and 10 % loss, with duplication and reordering, both directions
 *   (ACKs and READ responses suffer too): SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM
 *   and READ of sizes across the 1024-byte path MTU, up to 16 packets, a window
 *   of them in flight; every message delivered exactly once, in order, byte for
 *   byte, every send SUCCESS.
 * - RC with delays longer than the ACK timeout and far reordering; with one receive
 *   posted at a time (RNR NAKs) under loss; FETCH_ADD at 10 % loss, executed exactly
 *   once; without fault= (no injector on the port).
 * - RC over corrupting links: the receiving parser drops the frames (bad ICRC),
 *   RC recovers.
 * - UC and UD over lossy links: what arrives is intact, never duplicated (UC: in
 *   order), no more lost than the link lost, every send completes.
 * - 100 % loss of RoCE frames: the first WQE ends in RETRY_EXC_ERR, the rest in
 *   WR_FLUSH_ERR, the QP in ERR.
 *
 * After each test, with the QPs destroyed and the engine idle, both ports' pools
 * are back at the count they had before the first packet. The count is
 * rte_mempool_avail_count(), which adds the per-lcore caches to the common pool,
 * so an mbuf freed into the engine lcore's cache counts as free: the pools keep
 * their cache and the check is exact once nothing allocates or frees any more.
 *
 * Seeds are fixed: a run sees the same faults at the same packet indices (the
 * engine's timing may still change which packets those are). The bounds on
 * polling are liveness bounds only. To explore by hand: DROCE_FAULT_SEED=N (other
 * seeds), DROCE_FAULT_SPEC=ITEMS (other faults on every faulty link),
 * DROCE_FAULT_SCALE=K (K times the RC messages).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "droce_engine.h"
#include "droce_wire_pkt.h"
#include "pair_harness.h"

#define BUF_LEN  (4u << 20)
#define SLOT     (16u << 10) /* largest message */
#define SLOTS    64u
#define WINDOW   16u /* messages in flight */
#define LIVENESS 15  /* seconds any run may take before it is called hung */

/* regions of each end's buffer */
#define SRC_OFF  0u         /* what e0 sends and writes, slot by slot */
#define DST_OFF  (1u << 20) /* WRITE targets at e1, READ targets at e0 */
#define RECV_OFF (2u << 20) /* receive buffers */
#define READ_OFF (3u << 20) /* READ sources at e1 */

static struct pair_end e0, e1;
static enum ibv_qp_type qp_type;

static const char *const port_name[2] = {"droce0", "droce1"};

/* ------------------------------------------------------------ set-up */

/*
 * Two ports joined back to back, each sending through @p fault0 / @p fault1
 * (the '+'-separated fault= value; NULL: no injector), and a connected pair.
 */
static void setup(enum ibv_qp_type type, const char *fault0, const char *fault1, uint8_t timeout,
		  uint8_t retry)
{
	struct pair_opts o = pair_opts_default(type);
	const char *seed = getenv("DROCE_FAULT_SEED");
	const char *spec = getenv("DROCE_FAULT_SPEC");
	char s0[32] = "", s1[32] = "", k0[256] = "", k1[256] = "";

	qp_type = type;
	/* exploring by hand: DROCE_FAULT_SPEC replaces the faults of every faulty link, */
	if (spec != NULL && fault0 != NULL)
		fault0 = spec;
	if (spec != NULL && fault1 != NULL)
		fault1 = spec;
	/* DROCE_FAULT_SEED=N the fixed seeds (a later item wins) */
	if (seed != NULL) {
		snprintf(s0, sizeof(s0), "+seed:%lu", strtoul(seed, NULL, 0) * 2);
		snprintf(s1, sizeof(s1), "+seed:%lu", strtoul(seed, NULL, 0) * 2 + 1);
	}
	if (fault0 != NULL)
		snprintf(k0, sizeof(k0), ",fault=%s%s", fault0, s0);
	if (fault1 != NULL)
		snprintf(k1, sizeof(k1), ",fault=%s%s", fault1, s1);
	o.keys[0] = k0;
	o.keys[1] = k1;
	o.eth_mtu = 1500;
	o.buf_len = BUF_LEN;
	o.max_send_wr = 256;
	o.max_recv_wr = 512;
	o.cq_depth = 2048;
	o.psn = 0xfffff0; /* the PSNs wrap during every run */
	o.rd_atomic = 8;
	o.timeout = timeout;
	o.retry_cnt = retry;
	/* no hugepages, so tests running side by side (meson, another suite) never find them
	 * taken */
	o.no_huge = true;
	pair_open(&o, &e0, &e1);
}

/* ------------------------------------------------------------ helpers */

static void post_recv(struct pair_end *x, uint64_t id, uint32_t off, uint32_t len)
{
	pair_post_recv(x, id, off, len, 0);
}

static void post_send(struct pair_end *x, const struct pair_end *to, uint64_t id,
		      enum ibv_wr_opcode op, uint32_t off, uint32_t len, uint32_t roff)
{
	const struct pair_wr w = {.id = id, .op = op, .off = off, .len = len, .roff = roff};

	pair_post_send(x, to, &w);
}

static void port_stats(int i, struct droce_engine_port_stats *st)
{
	cr_assert_eq(droce_engine_port_stats(port_name[i], st), 0);
}

/* What the ports did, for the message of a failed liveness bound. */
static void log_ports(void)
{
	struct droce_engine_port_stats st;
	struct droce_engine_stats es;

	for (int i = 0; i < 2; i++) {
		port_stats(i, &st);
		cr_log_error("%s: rx %llu tx %llu tx_dropped %llu; injector offered %llu sent %llu "
			     "dropped %llu held %llu; pool %u of %u free",
			     port_name[i], (unsigned long long)st.rx_pkts,
			     (unsigned long long)st.tx_pkts, (unsigned long long)st.tx_dropped,
			     (unsigned long long)st.fault_offered,
			     (unsigned long long)st.fault_sent,
			     (unsigned long long)st.fault_dropped,
			     (unsigned long long)st.fault_held, st.pool_avail, st.pool_size);
	}
	droce_engine_stats_get(&es);
	cr_log_error("engine: loops %llu rx %llu not_roce %llu no_qp %llu tx %llu",
		     (unsigned long long)es.loops, (unsigned long long)es.rx_pkts,
		     (unsigned long long)es.rx_not_roce, (unsigned long long)es.rx_no_qp,
		     (unsigned long long)es.tx_pkts);
}

/* The liveness bound of a polling loop: past it, the run is hung. */
static bool hung(const struct timespec *t0)
{
	if (pair_elapsed(t0) < LIVENESS)
		return false;
	log_ports();
	return true;
}

/*
 * No leak: destroy the QPs, wait (liveness bound) until the engine has nothing
 * left in flight, then each port's pool holds what it held before the first packet.
 */
static void destroy_and_check_pools(void)
{
	struct droce_engine_port_stats st[2];
	struct timespec t0;
	bool idle;

	cr_assert_eq(ibv_destroy_qp(e0.qp), 0);
	cr_assert_eq(ibv_destroy_qp(e1.qp), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		port_stats(0, &st[0]);
		port_stats(1, &st[1]);
		idle = st[0].fault_held == 0 && st[1].fault_held == 0 &&
		       st[0].pool_avail == st[0].pool_avail_start &&
		       st[1].pool_avail == st[1].pool_avail_start;
	} while (!idle && pair_elapsed(&t0) < 5);
	for (int i = 0; i < 2; i++) {
		cr_expect_eq(st[i].fault_held, 0, "%s: %llu frames still held", port_name[i],
			     (unsigned long long)st[i].fault_held);
		cr_expect_eq(st[i].pool_avail, st[i].pool_avail_start,
			     "%s: %u mbufs free, %u at start (of %u)", port_name[i],
			     st[i].pool_avail, st[i].pool_avail_start, st[i].pool_size);
		/* the frames in and out of every injector add up (doc/fault-injection.md) */
		cr_expect_eq(st[i].fault_offered + st[i].fault_duplicated,
			     st[i].fault_sent + st[i].fault_dropped + st[i].fault_held, "%s",
			     port_name[i]);
	}
}

/* ------------------------------------------------------------ RC: exactly once */

static const uint32_t rc_sizes[] = {1, 1000, 1023, 1024, 1025, 2048, 3000, 4097, 9000, SLOT};
static const enum ibv_wr_opcode rc_ops[] = {IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
					    IBV_WR_RDMA_READ, IBV_WR_RDMA_WRITE_WITH_IMM};

struct rc_msg {
	enum ibv_wr_opcode op;
	uint32_t len;
};

static struct rc_msg rc_msg_of(uint32_t i)
{
	/* sizes and operations rotate at different periods: every pair occurs */
	return (struct rc_msg){.op = rc_ops[i % 4], .len = rc_sizes[(i / 4 + i) % 10]};
}

static bool takes_recv(enum ibv_wr_opcode op)
{
	return op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

/* Post message @p i from e0: its data (or, for a READ, e1's) filled with seed i. */
static void rc_post(uint32_t i)
{
	struct rc_msg m = rc_msg_of(i);
	uint32_t slot = (i % SLOTS) * SLOT;

	switch (m.op) {
	case IBV_WR_RDMA_READ:
		pair_fill(e1.buf + READ_OFF + slot, m.len, i);
		memset(e0.buf + DST_OFF + slot, 0, m.len);
		post_send(&e0, &e1, i, m.op, DST_OFF + slot, m.len, READ_OFF + slot);
		break;
	default:
		pair_fill(e0.buf + SRC_OFF + slot, m.len, i);
		if (m.op != IBV_WR_SEND_WITH_IMM)
			memset(e1.buf + DST_OFF + slot, 0, m.len);
		post_send(&e0, &e1, i, m.op, SRC_OFF + slot, m.len, DST_OFF + slot);
		break;
	}
}

/*
 * N messages from e0 to e1, WINDOW in flight; receives posted @p ahead ahead
 * (fewer than the window: the receiver runs out, RNR NAKs).
 * Every send completes SUCCESS, in order; every receive completion is the next
 * receive-consuming message, exactly once, with its bytes.
 */
#define RECV_AHEAD 32u

static void rc_run(uint32_t n, uint32_t ahead)
{
	const char *scale = getenv("DROCE_FAULT_SCALE"); /* by hand: N times the messages */
	uint32_t *recv_msg;                              /* message of each receive, in order */
	uint32_t posted = 0, completed = 0, recvs_expected = 0, recvs_posted = 0, recvs_done = 0;
	struct timespec t0;
	struct ibv_wc wc[32];
	int k, got;

	if (scale != NULL && strtoul(scale, NULL, 0) > 1)
		n *= (uint32_t)strtoul(scale, NULL, 0);
	recv_msg = calloc(n, sizeof(*recv_msg));
	cr_assert_not_null(recv_msg);
	for (uint32_t i = 0; i < n; i++)
		if (takes_recv(rc_msg_of(i).op))
			recv_msg[recvs_expected++] = i;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (completed < n || recvs_done < recvs_expected) {
		cr_assert(!hung(&t0), "hung: %u/%u sends completed, %u/%u receives (posted %u)",
			  completed, n, recvs_done, recvs_expected, posted);
		while (recvs_posted < recvs_expected && recvs_posted - recvs_done < ahead) {
			post_recv(&e1, recvs_posted, RECV_OFF + (recvs_posted % SLOTS) * SLOT,
				  SLOT);
			recvs_posted++;
		}
		while (posted < n && posted - completed < WINDOW)
			rc_post(posted++);
		got = ibv_poll_cq(e0.cq, 32, wc);
		cr_assert_geq(got, 0);
		for (k = 0; k < got; k++) {
			uint32_t i = completed, slot = (i % SLOTS) * SLOT;
			struct rc_msg m = rc_msg_of(i);
			long bad;

			cr_assert_eq(wc[k].wr_id, i, "send completion %llu, expected %u",
				     (unsigned long long)wc[k].wr_id, i);
			cr_assert_eq(wc[k].status, IBV_WC_SUCCESS,
				     "message %u (op %d, %u bytes): %s", i, m.op, m.len,
				     ibv_wc_status_str(wc[k].status));
			/* an RC WRITE or READ completion means the data is placed */
			if (m.op == IBV_WR_RDMA_READ)
				bad = pair_mismatch(e0.buf + DST_OFF + slot, m.len, i);
			else if (m.op != IBV_WR_SEND_WITH_IMM)
				bad = pair_mismatch(e1.buf + DST_OFF + slot, m.len, i);
			else
				bad = -1;
			cr_assert_eq(bad, -1, "message %u (op %d, %u bytes): byte %ld differs", i,
				     m.op, m.len, bad);
			completed++;
		}
		got = ibv_poll_cq(e1.cq, 32, wc);
		cr_assert_geq(got, 0);
		for (k = 0; k < got; k++) {
			uint32_t r = recvs_done, i, slot;
			struct rc_msg m;
			long bad;

			cr_assert_lt(r, recvs_expected, "a receive completion too many (%llu)",
				     (unsigned long long)wc[k].wr_id);
			i = recv_msg[r];
			m = rc_msg_of(i);
			slot = (i % SLOTS) * SLOT;
			cr_assert_eq(wc[k].wr_id, r);
			cr_assert_eq(wc[k].status, IBV_WC_SUCCESS, "receive %u: %s", r,
				     ibv_wc_status_str(wc[k].status));
			cr_assert_eq(be32toh(wc[k].imm_data), i,
				     "receive %u: message %u, expected %u", r,
				     be32toh(wc[k].imm_data), i);
			cr_assert_eq(wc[k].byte_len, m.len, "message %u: %u bytes, expected %u", i,
				     wc[k].byte_len, m.len);
			if (m.op == IBV_WR_SEND_WITH_IMM) {
				cr_assert_eq(wc[k].opcode, IBV_WC_RECV);
				bad = pair_mismatch(e1.buf + RECV_OFF + (r % SLOTS) * SLOT, m.len,
						    i);
			} else {
				cr_assert_eq(wc[k].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
				bad = pair_mismatch(e1.buf + DST_OFF + slot, m.len, i);
			}
			cr_assert_eq(bad, -1, "message %u (%u bytes): byte %ld differs", i, m.len,
				     bad);
			recvs_done++;
		}
	}
	free(recv_msg);
}

/* After the run: nothing more completes (no duplicate), the QPs are still in RTS. */
static void rc_quiet(void)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;

	cr_expect_eq(ibv_poll_cq(e0.cq, 1, &wc), 0);
	cr_expect_eq(ibv_poll_cq(e1.cq, 1, &wc), 0);
	cr_assert_eq(ibv_query_qp(e0.qp, &attr, IBV_QP_STATE, &init), 0);
	cr_expect_eq(attr.qp_state, IBV_QPS_RTS);
	cr_assert_eq(ibv_query_qp(e1.qp, &attr, IBV_QP_STATE, &init), 0);
	cr_expect_eq(attr.qp_state, IBV_QPS_RTS);
}

/* The faults did happen: drops, duplicates and reorders on both ports. */
static void expect_faults(bool dup, bool reorder)
{
	struct droce_engine_port_stats st;

	for (int i = 0; i < 2; i++) {
		port_stats(i, &st);
		cr_log_info(
			"%s: %llu frames offered, %llu dropped, %llu duplicated, %llu reordered",
			port_name[i], (unsigned long long)st.fault_offered,
			(unsigned long long)st.fault_dropped,
			(unsigned long long)st.fault_duplicated,
			(unsigned long long)st.fault_reordered);
		cr_expect(st.fault, "%s has no injector", port_name[i]);
		cr_expect_gt(st.fault_dropped, 0, "%s dropped nothing", port_name[i]);
		if (dup)
			cr_expect_gt(st.fault_duplicated, 0, "%s duplicated nothing", port_name[i]);
		if (reorder)
			cr_expect_gt(st.fault_reordered, 0, "%s reordered nothing", port_name[i]);
	}
}

#define RC_RETRY 7

/*
 * The local ACK timeout. About 1 ms (4.096 us << 8) keeps the losses cheap while every busy
 * thread has a CPU of its own: the engine's lcores and the test's. With more busy threads
 * than CPUs (DROCE_LCORES=2 on two CPUs) a ready lcore waits whole scheduler slices for a
 * CPU, and eight 1 ms tries run out while the peer's lcore has not run at all: a
 * RETRY_EXC_ERR that says nothing about the transport. There, 4.096 us << 14 (about 67 ms).
 */
static uint8_t rc_timeout(void)
{
	const char *s = getenv("DROCE_LCORES");
	long lcores = s != NULL && atol(s) > 0 ? atol(s) : 1;

	return lcores + 1 > sysconf(_SC_NPROCESSORS_ONLN) ? 14 : 8;
}
#define RC_TIMEOUT rc_timeout()

static void rc_lossy(const char *f0, const char *f1, uint32_t n)
{
	setup(IBV_QPT_RC, f0, f1, RC_TIMEOUT, RC_RETRY);
	rc_run(n, RECV_AHEAD);
	rc_quiet();
	expect_faults(true, true);
	destroy_and_check_pools();
}

TestSuite(engine_faults, .timeout = 60);

Test(engine_faults, rc_1pct_loss_dup_reorder_exactly_once)
{
	rc_lossy("drop:0.01+dup:0.01+reorder:0.02+seed:11",
		 "drop:0.01+dup:0.01+reorder:0.02+seed:12", 400);
}

Test(engine_faults, rc_5pct_loss_dup_reorder_exactly_once)
{
	rc_lossy("drop:0.05+dup:0.02+reorder:0.05+seed:7", "drop:0.05+dup:0.02+reorder:0.05+seed:8",
		 300);
}

Test(engine_faults, rc_10pct_loss_dup_reorder_exactly_once)
{
	rc_lossy("drop:0.10+dup:0.03+reorder:0.05+seed:21",
		 "drop:0.10+dup:0.03+reorder:0.05+seed:22", 200);
}

Test(engine_faults, rc_delay_and_reorder_far_exactly_once)
{
	uint8_t timeout = RC_TIMEOUT;
	/* half as long again as the ACK timeout: the requester resends what is only late */
	unsigned int delay_us = (unsigned int)((4096ull << timeout) * 3 / 2 / 1000);
	char f0[128], f1[128];

	snprintf(f0, sizeof(f0), "delay:0.05+delay_us:%u+reorder:0.05+after:20+seed:3", delay_us);
	snprintf(f1, sizeof(f1), "delay:0.05+delay_us:%u+reorder:0.05+after:20+seed:4", delay_us);
	setup(IBV_QPT_RC, f0, f1, timeout, RC_RETRY);
	rc_run(200, RECV_AHEAD);
	rc_quiet();
	destroy_and_check_pools();
}

Test(engine_faults, rc_corrupt_dropped_by_icrc_and_recovered)
{
	struct droce_engine_port_stats st, st1;
	struct droce_engine_stats es;

	setup(IBV_QPT_RC, "corrupt:0.05+seed:5", "corrupt:0.05+seed:6", RC_TIMEOUT, RC_RETRY);
	rc_run(200, RECV_AHEAD);
	rc_quiet();
	for (int i = 0; i < 2; i++) {
		port_stats(i, &st);
		cr_expect_gt(st.fault_corrupted, 0, "%s corrupted nothing", port_name[i]);
	}
	/* every corrupted frame reached the other port and failed its ICRC there */
	droce_engine_stats_get(&es);
	cr_expect_gt(es.parse_errors[DROCE_PARSE_BAD_ICRC], 0);
	destroy_and_check_pools();
	/* once the link is quiet: each corrupted frame was one ICRC failure, no more */
	port_stats(0, &st);
	port_stats(1, &st1);
	droce_engine_stats_get(&es);
	cr_expect_eq(es.parse_errors[DROCE_PARSE_BAD_ICRC],
		     st.fault_corrupted + st1.fault_corrupted);
}

Test(engine_faults, rc_no_fault_port_has_no_injector)
{
	struct droce_engine_port_stats st, st1;

	setup(IBV_QPT_RC, NULL, NULL, RC_TIMEOUT, RC_RETRY);
	rc_run(40, RECV_AHEAD);
	rc_quiet();
	port_stats(0, &st);
	cr_expect_not(st.fault);
	cr_expect_eq(st.fault_offered, 0);
	cr_expect_gt(st.tx_pkts, 0);
	port_stats(1, &st1);
	cr_expect_eq(st1.rx_pkts, st.tx_pkts, "a clean link loses no frame");
	cr_expect_eq(st1.rx_bytes, st.tx_bytes, "both ends count the same bytes");
	cr_expect_geq(st.tx_bytes, st.tx_pkts * 42,
		      "every frame has at least an ARP frame's 42 bytes");
	destroy_and_check_pools();
}

Test(engine_faults, rc_rnr_under_loss_exactly_once)
{
	/* one receive posted at a time: most SENDs meet an empty queue first */
	setup(IBV_QPT_RC, "drop:0.05+dup:0.02+reorder:0.05+seed:51",
	      "drop:0.05+dup:0.02+reorder:0.05+seed:52", RC_TIMEOUT, RC_RETRY);
	rc_run(200, 1);
	rc_quiet();
	destroy_and_check_pools();
}

/*
 * Atomics are the sharpest test of "exactly once": N FETCH_ADD of 1 on one
 * remote counter, at 10 % loss with duplicates. A replayed request must return
 * the saved value, never add again: the k-th returns k, the counter ends at N.
 */
Test(engine_faults, rc_fetch_add_executed_exactly_once)
{
	const uint32_t n = 300;
	uint64_t *counter;
	struct timespec t0;
	struct ibv_wc wc[32];
	uint32_t posted = 0, completed = 0;

	setup(IBV_QPT_RC, "drop:0.10+dup:0.05+reorder:0.05+seed:61",
	      "drop:0.10+dup:0.05+reorder:0.05+seed:62", RC_TIMEOUT, RC_RETRY);
	counter = (uint64_t *)(void *)(e1.buf + READ_OFF);
	*counter = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (completed < n) {
		int got;

		cr_assert(!hung(&t0), "hung: %u/%u atomics completed", completed, n);
		while (posted < n && posted - completed < WINDOW) {
			struct ibv_sge s = {.addr = (uintptr_t)e0.buf + DST_OFF + posted * 8,
					    .length = 8,
					    .lkey = e0.mr->lkey};
			struct ibv_send_wr wr = {.wr_id = posted,
						 .sg_list = &s,
						 .num_sge = 1,
						 .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
						 .send_flags = IBV_SEND_SIGNALED,
						 .wr.atomic = {.remote_addr = (uintptr_t)counter,
							       .compare_add = 1,
							       .rkey = e1.mr->rkey}},
					   *bad;

			cr_assert_eq(ibv_post_send(e0.qp, &wr, &bad), 0);
			posted++;
		}
		got = ibv_poll_cq(e0.cq, 32, wc);
		for (int k = 0; k < got; k++) {
			uint64_t orig;

			cr_assert_eq(wc[k].wr_id, completed);
			cr_assert_eq(wc[k].status, IBV_WC_SUCCESS, "atomic %u: %s", completed,
				     ibv_wc_status_str(wc[k].status));
			memcpy(&orig, e0.buf + DST_OFF + completed * 8, 8);
			cr_assert_eq(orig, completed, "atomic %u saw %llu", completed,
				     (unsigned long long)orig);
			completed++;
		}
	}
	cr_expect_eq(__atomic_load_n(counter, __ATOMIC_ACQUIRE), n);
	rc_quiet();
	expect_faults(true, true);
	destroy_and_check_pools();
}

/* ------------------------------------------------------------ RC: retries exhausted */

Test(engine_faults, rc_total_loss_retry_exc_then_flush)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct droce_engine_port_stats st;
	struct timespec t0;
	struct ibv_wc wc;
	uint32_t done = 0;

	/* RoCE frames only: ARP still resolves, every RoCE frame is lost */
	setup(IBV_QPT_RC, "drop:1+match:roce", "drop:1+match:roce", 4, 2);
	for (uint32_t i = 0; i < 8; i++)
		post_recv(&e1, 100 + i, RECV_OFF, SLOT);
	for (uint32_t i = 0; i < 6; i++)
		post_send(&e0, &e1, i, i % 2 ? IBV_WR_RDMA_WRITE : IBV_WR_SEND, SRC_OFF, 3000,
			  DST_OFF);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (done < 6) {
		int got = ibv_poll_cq(e0.cq, 1, &wc);

		cr_assert(!hung(&t0), "hung after %u completions", done);
		if (got == 0)
			continue;
		cr_assert_eq(got, 1);
		cr_assert_eq(wc.wr_id, done);
		if (done == 0)
			cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "first: %s",
				     ibv_wc_status_str(wc.status));
		else
			cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%u: %s", done,
				     ibv_wc_status_str(wc.status));
		done++;
	}
	cr_assert_eq(ibv_query_qp(e0.qp, &attr, IBV_QP_STATE, &init), 0);
	cr_expect_eq(attr.qp_state, IBV_QPS_ERR);
	cr_expect_eq(ibv_poll_cq(e0.cq, 1, &wc), 0);
	/* nothing reached the receiver */
	cr_expect_eq(ibv_poll_cq(e1.cq, 1, &wc), 0);
	port_stats(0, &st);
	/* the first packet and retry_cnt (2) retransmissions of it at least */
	cr_expect_geq(st.fault_dropped, 3);
	destroy_and_check_pools();
}

/* ------------------------------------------------------------ UC and UD: lose only what was lost
 */

#define UNREL_N   300u
#define UNREL_MAX 8192u
#define UNREL_OFF (1u << 20) /* receive buffers of UC/UD, one per message: to the end */

static uint32_t uc_len(uint32_t i)
{
	static const uint32_t l[] = {1, 700, 1023, 1024, 1025, 2048, 3333, 5000, UNREL_MAX};

	return l[i % 9];
}

static uint32_t ud_len(uint32_t i)
{
	static const uint32_t l[] = {0, 1, 100, 512, 999, 1023, 1024};

	return l[i % 7];
}

/*
 * UNREL_N SEND_WITH_IMM from e0, every receive posted beforehand. Every send
 * completes SUCCESS; every message received carries its own length and bytes,
 * none twice; UC keeps their order. Returns how many arrived.
 */
static uint32_t unrel_run(bool ordered, uint32_t (*len_of)(uint32_t))
{
	uint32_t rbuf = qp_type == IBV_QPT_UD ? 40 + 1024 : UNREL_MAX;
	uint32_t completed = 0, posted = 0, arrived = 0;
	bool seen[UNREL_N] = {false};
	int64_t last = -1;
	struct droce_engine_port_stats st[2];
	struct timespec t0;
	struct ibv_wc wc[32];
	int k, got;

	cr_assert_leq(UNREL_N * rbuf, BUF_LEN - UNREL_OFF);
	for (uint32_t r = 0; r < UNREL_N; r++)
		post_recv(&e1, r, UNREL_OFF + r * rbuf, rbuf);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (completed < UNREL_N) {
		cr_assert(!hung(&t0), "hung: %u/%u sends completed", completed, UNREL_N);
		while (posted < UNREL_N && posted - completed < WINDOW) {
			uint32_t slot = (posted % SLOTS) * SLOT;

			pair_fill(e0.buf + SRC_OFF + slot, len_of(posted), posted);
			post_send(&e0, &e1, posted, IBV_WR_SEND_WITH_IMM, SRC_OFF + slot,
				  len_of(posted), 0);
			posted++;
		}
		got = ibv_poll_cq(e0.cq, 32, wc);
		for (k = 0; k < got; k++) {
			cr_assert_eq(wc[k].wr_id, completed);
			cr_assert_eq(wc[k].status, IBV_WC_SUCCESS, "send %u: %s", completed,
				     ibv_wc_status_str(wc[k].status));
			completed++;
		}
	}
	/* the link is quiet once every injector holds nothing and the pools are back */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		port_stats(0, &st[0]);
		port_stats(1, &st[1]);
	} while ((st[0].fault_held != 0 || st[0].pool_avail != st[0].pool_avail_start) &&
		 pair_elapsed(&t0) < 5);
	while ((got = ibv_poll_cq(e1.cq, 32, wc)) > 0) {
		for (k = 0; k < got; k++) {
			uint32_t r = (uint32_t)wc[k].wr_id, i = be32toh(wc[k].imm_data);
			const uint8_t *p = e1.buf + UNREL_OFF + r * rbuf;
			long bad;

			cr_assert_eq(wc[k].status, IBV_WC_SUCCESS, "receive %u: %s", r,
				     ibv_wc_status_str(wc[k].status));
			cr_assert_lt(i, UNREL_N, "receive %u: message %u was never sent", r, i);
			cr_assert_not(seen[i], "message %u received twice", i);
			seen[i] = true;
			if (ordered) {
				/* UC: receive WQEs in order, messages in order */
				cr_assert_eq(r, arrived, "receive %u completed out of order", r);
				cr_assert_gt((int64_t)i, last, "message %u after %lld", i,
					     (long long)last);
			}
			last = i;
			cr_assert_eq(wc[k].byte_len, len_of(i) + (qp_type == IBV_QPT_UD ? 40 : 0),
				     "message %u: %u bytes", i, wc[k].byte_len);
			bad = pair_mismatch(p + (qp_type == IBV_QPT_UD ? 40 : 0), len_of(i), i);
			cr_assert_eq(bad, -1, "message %u: byte %ld differs", i, bad);
			arrived++;
		}
	}
	port_stats(0, &st[0]);
	/* every message lost is accounted for by a frame the link lost (or corrupted) */
	cr_expect_geq(arrived + st[0].fault_dropped + st[0].fault_corrupted +
			      2 * st[0].fault_reordered,
		      UNREL_N, "%u arrived, %llu frames dropped", arrived,
		      (unsigned long long)st[0].fault_dropped);
	cr_expect_gt(arrived, UNREL_N / 2);
	cr_expect_lt(arrived, UNREL_N, "nothing was lost: the faults did not apply");
	return arrived;
}

Test(engine_faults, uc_loss_only_what_was_lost)
{
	setup(IBV_QPT_UC, "drop:0.05+seed:31", "drop:0.05+seed:32", 0, 0);
	unrel_run(true, uc_len);
	destroy_and_check_pools();
}

Test(engine_faults, uc_loss_dup_reorder_never_duplicated)
{
	setup(IBV_QPT_UC, "drop:0.05+dup:0.05+reorder:0.05+seed:33",
	      "drop:0.05+dup:0.05+reorder:0.05+seed:34", 0, 0);
	unrel_run(true, uc_len);
	destroy_and_check_pools();
}

Test(engine_faults, ud_loss_reorder_corrupt_intact)
{
	/* a UD receiver keeps no PSN window: a datagram duplicated on the wire is a second
	 * datagram to it, as to any HCA, so this link duplicates nothing */
	setup(IBV_QPT_UD, "drop:0.05+reorder:0.05+corrupt:0.03+seed:41",
	      "drop:0.05+reorder:0.05+corrupt:0.03+seed:42", 0, 0);
	unrel_run(false, ud_len);
	destroy_and_check_pools();
}
