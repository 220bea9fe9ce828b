/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport sweep over a ring link in one process (tests/common/sweep.c):
 * two droce devices joined back to back, the embedded engine, verbs calls
 * only. For every path MTU (the Ethernet MTU as small as that MTU allows) and
 * every GID family: every operation of every QP type - RC SEND, SEND_WITH_IMM,
 * SEND_WITH_INV, RDMA WRITE(+IMM), READ, both atomics, BIND_MW and LOCAL_INV,
 * ibv_bind_mw; UC SEND(+IMM), WRITE(+IMM), BIND_MW and LOCAL_INV; UD SEND(+IMM)
 * - at 0, 1, PMTU-1, PMTU, PMTU+1, 64 PMTU + 1 bytes and several MiB (UD up to
 * the port's MTU), out of one SGE or two and into one or two, PSNs wrapping;
 * every completion's status, opcode and length, every byte, the bytes around
 * untouched, nothing completed twice, and both ports' pools back where they
 * started.
 *
 * DROCE_SWEEP_SLOW=1 (the slow suite): 32 MiB messages and more sizes.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "sweep.h"

#define BIG      ((4ull << 20) + 3)
#define BIG_SLOW ((32ull << 20) + 5)

static bool slow(void)
{
	const char *s = getenv("DROCE_SWEEP_SLOW");

	return s != NULL && s[0] == '1';
}

static void run_on(enum ibv_mtu mtu, uint8_t sgid, bool loopback)
{
	static struct sw_run r;
	uint64_t sizes[16], big = slow() ? BIG_SLOW : BIG;
	unsigned int n;

	if (loopback)
		sw_loopback_setup(&r, sw_eth_mtu(mtu), big);
	else
		sw_ring_setup(&r, sw_eth_mtu(mtu), NULL, big);
	cr_assert_eq(r.i0.mtu, 128u << mtu, "active MTU %u with an Ethernet MTU of %u", r.i0.mtu,
		     sw_eth_mtu(mtu));
	r.sgid = sgid;
	n = sw_sizes(&r, big, sizes);
	if (slow()) {
		/* two packets around their boundary, and the AckReq period */
		sizes[n++] = 2 * r.pmtu - 1;
		sizes[n++] = 2 * r.pmtu;
		sizes[n++] = 2 * r.pmtu + 1;
		sizes[n++] = 64ull * r.pmtu - 1;
		sizes[n++] = 64ull * r.pmtu;
		sizes[n++] = 128ull * r.pmtu + 7;
	}
	for (enum sw_kind k = 0; k < SW_KINDS; k++) {
		sw_connect(&r, k, NULL);
		sw_sweep(&r, k, sizes, n);
		/* the same again, many in flight: all but the several MiB */
		sw_burst(&r, k, sizes, n, 128ull * r.pmtu);
		sw_quiet(&r, k);
	}
	sw_finish(&r);
}

static void run(enum ibv_mtu mtu, uint8_t sgid)
{
	run_on(mtu, sgid, false);
}

TestSuite(sweep_ops, .timeout = 240);

/* Both QPs on one port: the engine hands a frame for its own address back to itself. */
Test(sweep_ops, loopback_mtu1024_ipv4)
{
	run_on(IBV_MTU_1024, SW_GID_IPV4, true);
}

Test(sweep_ops, loopback_mtu4096_ipv6)
{
	run_on(IBV_MTU_4096, SW_GID_IPV6, true);
}

Test(sweep_ops, mtu256_ipv4)
{
	run(IBV_MTU_256, SW_GID_IPV4);
}

Test(sweep_ops, mtu256_ipv6)
{
	run(IBV_MTU_256, SW_GID_IPV6);
}

Test(sweep_ops, mtu512_ipv4)
{
	run(IBV_MTU_512, SW_GID_IPV4);
}

Test(sweep_ops, mtu512_ipv6)
{
	run(IBV_MTU_512, SW_GID_IPV6);
}

Test(sweep_ops, mtu1024_ipv4)
{
	run(IBV_MTU_1024, SW_GID_IPV4);
}

Test(sweep_ops, mtu1024_ipv6)
{
	run(IBV_MTU_1024, SW_GID_IPV6);
}

Test(sweep_ops, mtu1024_link_local)
{
	run(IBV_MTU_1024, SW_GID_LINK_LOCAL);
}

Test(sweep_ops, mtu2048_ipv4)
{
	run(IBV_MTU_2048, SW_GID_IPV4);
}

Test(sweep_ops, mtu2048_ipv6)
{
	run(IBV_MTU_2048, SW_GID_IPV6);
}

Test(sweep_ops, mtu4096_ipv4)
{
	run(IBV_MTU_4096, SW_GID_IPV4);
}

Test(sweep_ops, mtu4096_ipv6)
{
	run(IBV_MTU_4096, SW_GID_IPV6);
}

static enum ibv_mtu next_mtu;
static uint32_t next_psn;

static void t_mtu_psn(struct sw_path *p, bool peer)
{
	p->path_mtu = (uint8_t)next_mtu;
	p->sq_psn = peer ? next_psn ^ 0x5a5a5a : next_psn;
	p->rq_psn = peer ? next_psn : next_psn ^ 0x5a5a5a;
}

/*
 * The same QPs through RESET again and again, with another path MTU and other
 * PSNs each time: nothing of the last connection (PSNs, responder resources, a
 * message in progress, the MSN) leaks into the next.
 */
Test(sweep_ops, reconnected_with_other_mtus_and_psns)
{
	static struct sw_run r;
	static const enum ibv_mtu mtus[] = {IBV_MTU_4096, IBV_MTU_256, IBV_MTU_1024, IBV_MTU_512,
					    IBV_MTU_2048};
	uint64_t sizes[16];
	unsigned int n;

	sw_ring_setup(&r, sw_eth_mtu(IBV_MTU_4096), NULL, 1u << 20);
	for (unsigned int i = 0; i < sizeof(mtus) / sizeof(mtus[0]); i++) {
		next_mtu = mtus[i];
		next_psn = 0xfffff0u - i * 0x333333u;
		r.mtu = mtus[i];
		r.pmtu = 128u << mtus[i];
		n = sw_sizes(&r, 0, sizes);
		for (enum sw_kind k = 0; k < SW_KINDS; k++) {
			sw_connect(&r, k, t_mtu_psn);
			sw_burst(&r, k, sizes, n, 64ull * r.pmtu + 1);
			sw_quiet(&r, k);
		}
	}
	sw_finish(&r);
}
