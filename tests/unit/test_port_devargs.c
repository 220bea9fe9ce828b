/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The devargs a port opens its device with (lib/port/port_devargs.c):
 * the user's, and memif buffers that hold a whole frame of the port's MTU, so
 * that memif never chains a frame over several buffers (DPDK 22.11's memif
 * replays stale slots when it chains frames into a nearly full ring), and an
 * af_packet socket per engine lcore.
 */
#include <criterion/criterion.h>
#include <errno.h>

#include "droce_port.h"

static const char *args(const char *device, uint32_t mtu)
{
	static char out[300];

	cr_assert_eq(droce_port_devargs(device, mtu, 1, out, sizeof(out)), 0, "%s", device);
	return out;
}

Test(port_devargs, memif_buffers_hold_a_frame_of_the_mtu)
{
	cr_expect_str_eq(args("net_memif0,role=server", 4200), "net_memif0,role=server,bsize=8192");
	cr_expect_str_eq(args("net_memif0", 4074), "net_memif0,bsize=4096");
	cr_expect_str_eq(args("net_memif0", 2100), "net_memif0,bsize=4096");
	cr_expect_str_eq(args("net_memif0", 9216), "net_memif0,bsize=16384");
}

Test(port_devargs, memif_default_buffers_kept_when_a_frame_fits)
{
	cr_expect_str_eq(args("net_memif1,role=client", 1500), "net_memif1,role=client");
	cr_expect_str_eq(args("net_memif1", 2026), "net_memif1");
}

Test(port_devargs, the_users_bsize_wins)
{
	cr_expect_str_eq(args("net_memif0,bsize=1024", 4200), "net_memif0,bsize=1024");
}

Test(port_devargs, other_devices_unchanged)
{
	cr_expect_str_eq(args("net_tap0,iface=t0", 9000), "net_tap0,iface=t0");
	cr_expect_str_eq(args("0000:03:00.0", 9000), "0000:03:00.0");
}

Test(port_devargs, too_long_refused)
{
	char out[24];

	cr_expect_eq(droce_port_devargs("net_memif0,role=server", 4200, 1, out, sizeof(out)),
		     -ENAMETOOLONG);
	cr_expect_eq(droce_port_devargs("net_tap0,iface=a_long_name", 1500, 1, out, sizeof(out)),
		     -ENAMETOOLONG);
	cr_expect_eq(droce_port_devargs("net_af_packet0,iface=v0", 1500, 2, out, sizeof(out)),
		     -ENAMETOOLONG);
}

Test(port_devargs, af_packet_opens_a_queue_pair_per_lcore)
{
	static char out[300];

	cr_assert_eq(droce_port_devargs("net_af_packet0,iface=v0", 1500, 2, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "net_af_packet0,iface=v0,qpairs=2");
	cr_assert_eq(
		droce_port_devargs("net_af_packet0,iface=v0,qpairs=4", 1500, 2, out, sizeof(out)),
		0);
	cr_expect_str_eq(out, "net_af_packet0,iface=v0,qpairs=4", "the user's count wins");
	cr_assert_eq(droce_port_devargs("net_af_packet0,iface=v0", 1500, 1, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "net_af_packet0,iface=v0", "one lcore: the PMD's default");
	cr_assert_eq(droce_port_devargs("net_memif0", 4200, 2, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "net_memif0,bsize=8192", "memif takes its queues from the port");
}
