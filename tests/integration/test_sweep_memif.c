/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport sweep between two processes (tests/common/sweep.c): this
 * process and tests/integration/sweep_peer, each with its own embedded engine,
 * their droce ports joined by a memif link. A selection of the ring sweep:
 * every operation of RC, UC and UD at the sizes around the path MTU and
 * several MiB, at 1024 over IPv4 and 4096 over IPv6 (messages far larger than
 * the memif ring: a full ring makes the sender wait, it does not lose frames); completion statuses
 * provoked (a remote access error, a message too long, RNR retries exhausted, the peer's QP gone,
 * the peer process gone); both processes' pools back where they started.
 *
 * DROCE_SWEEP_SLOW=1 (the slow suite): the other path MTUs and GID families, and
 * larger messages.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "sweep.h"

/*
 * Messages of thousands of packets through a memif ring of 1024 slots: the
 * port keeps what the ring does not take and the engine holds the senders
 * back (doc/transport.md, "Back-pressure"), so nothing is dropped, UC included.
 */
#define BIG        ((4ull << 20) + 3)
#define BIG_SLOW   ((16ull << 20) + 3)
#define RSIZE      10
#define RSIZE_SLOW 10

static bool slow(void)
{
	const char *s = getenv("DROCE_SWEEP_SLOW");

	return s != NULL && s[0] == '1';
}

static struct sw_run r;

static void cleanup(void)
{
	sw_cleanup(&r);
}

static void ops(enum ibv_mtu mtu, uint8_t sgid)
{
	uint64_t sizes[16];
	unsigned int n;

	uint64_t big = slow() ? BIG_SLOW : BIG;

	sw_memif_setup(&r, sw_eth_mtu(mtu), big, slow() ? RSIZE_SLOW : RSIZE);
	cr_assert_eq(r.i0.mtu, 128u << mtu, "active MTU %u", r.i0.mtu);
	r.sgid = sgid;
	for (enum sw_kind k = 0; k < SW_KINDS; k++) {
		n = sw_sizes(&r, k != SW_UD ? big : 0, sizes);
		sw_connect(&r, k, NULL);
		sw_sweep(&r, k, sizes, n);
		/* many in flight, more than a memif ring holds */
		sw_burst(&r, k, sizes, n, 8ull * r.pmtu + 1);
		sw_quiet(&r, k);
	}
	sw_finish(&r);
}

static void status(const char *name)
{

	sw_memif_setup(&r, sw_eth_mtu(IBV_MTU_1024), 64 << 10, RSIZE);
	sw_status(&r, name);
	sw_finish(&r);
}

TestSuite(sweep_memif, .fini = cleanup, .timeout = 240);

Test(sweep_memif, ops_mtu1024_ipv4)
{
	ops(IBV_MTU_1024, SW_GID_IPV4);
}

Test(sweep_memif, ops_mtu4096_ipv6)
{
	ops(IBV_MTU_4096, SW_GID_IPV6);
}

/* the slow suite's (DROCE_SWEEP_SLOW=1): the other path MTUs and families */
static void ops_slow(enum ibv_mtu mtu, uint8_t sgid)
{
	if (!slow())
		cr_skip_test("run by the slow suite (DROCE_SWEEP_SLOW=1)");
	ops(mtu, sgid);
}

Test(sweep_memif, ops_mtu256_ipv4)
{
	ops_slow(IBV_MTU_256, SW_GID_IPV4);
}

Test(sweep_memif, ops_mtu512_ipv6)
{
	ops_slow(IBV_MTU_512, SW_GID_IPV6);
}

Test(sweep_memif, ops_mtu1024_ipv6)
{
	ops_slow(IBV_MTU_1024, SW_GID_IPV6);
}

Test(sweep_memif, ops_mtu2048_ipv4)
{
	ops_slow(IBV_MTU_2048, SW_GID_IPV4);
}

Test(sweep_memif, ops_mtu4096_ipv4)
{
	ops_slow(IBV_MTU_4096, SW_GID_IPV4);
}

Test(sweep_memif, ops_mtu1024_link_local)
{
	ops_slow(IBV_MTU_1024, SW_GID_LINK_LOCAL);
}

Test(sweep_memif, rem_access_bad_rkey)
{
	status("rem_access_bad_rkey");
}

Test(sweep_memif, rem_inv_req_message_too_long)
{
	status("rem_inv_req_message_too_long");
}

Test(sweep_memif, rnr_retry_exc)
{
	status("rnr_retry_exc");
}

Test(sweep_memif, retry_exc_peer_gone)
{
	status("retry_exc_peer_gone");
}

/* The peer process exits: its port goes away with it, RC retries run out. */
Test(sweep_memif, retry_exc_peer_process_gone)
{
	struct sw_reply rep;
	struct ibv_wc wc;

	sw_memif_setup(&r, sw_eth_mtu(IBV_MTU_1024), 64 << 10, RSIZE);
	r.timeout = 8;
	sw_connect(&r, SW_RC, NULL);
	snprintf(r.what, sizeof(r.what), "the peer process gone");
	sw_send_once(&r, SW_RC, 100);
	sw_peer_exit(&r);
	rep = sw_local(&r, (struct sw_cmd){.op = SW_POST,
					   .kind = SW_RC,
					   .wr_op = IBV_WR_SEND,
					   .id = 1,
					   .len = 64,
					   .chain = 1});
	cr_assert_eq(rep.rc, 0);
	wc = sw_wait(&r, false, SW_RC, false, 1);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
	wc = sw_wait(&r, false, SW_RC, false, 2);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(sw_state(&r, SW_RC, false), IBV_QPS_ERR);
	sw_finish(&r);
}
