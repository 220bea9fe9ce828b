/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in libibverbs.so.1: Debian's unmodified ibv_devinfo and
 * ibv_devices, run with LD_LIBRARY_PATH pointing at it, list droce's devices
 * as configured in DROCE_DEVICES.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char out[1 << 16];

#define DEVICES                                                                      \
	"droce0:mac=52:54:00:00:00:01,ip=10.99.0.1,ip=fd00::1,mtu=4200,speed=25000 " \
	"droce1:mac=52:54:00:00:00:02,ip=10.98.0.1"

/* Run @p cmd against the drop-in library with @p devices; stdout in out[]. */
static int run(const char *devices, const char *cmd)
{
	const char *dir = getenv("DROCE_DROPIN_DIR");
	char line[1024];
	size_t n;
	FILE *p;
	int st;

	cr_assert_not_null(dir, "DROCE_DROPIN_DIR is not set (run the tests through meson)");
	snprintf(line, sizeof(line), "DROCE_DEVICES='%s' LD_LIBRARY_PATH='%s' %s 2>&1", devices,
		 dir, cmd);
	p = popen(line, "r");
	cr_assert_not_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	cr_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void expect_line(const char *needle)
{
	cr_expect_not_null(strstr(out, needle), "no '%s' in:\n%s", needle, out);
}

Test(verbs_dropin, binary_loads_droce)
{
	cr_assert_eq(run(DEVICES, "ldd /usr/bin/ibv_devinfo"), 0);
	expect_line("libibverbs.so.1 => ");
	cr_expect_not_null(strstr(out, getenv("DROCE_DROPIN_DIR")), "%s", out);
}

Test(verbs_dropin, devinfo_lists_both_devices)
{
	cr_assert_eq(run(DEVICES, "ibv_devinfo"), 0);
	expect_line("hca_id:\tdroce0\n");
	expect_line("hca_id:\tdroce1\n");
	expect_line("transport:\t\t\tInfiniBand (0)");
	expect_line("fw_ver:\t\t\t\tdroce 0.1.0");
	expect_line("node_guid:\t\t\t5054:00ff:fe00:0001");
	expect_line("link_layer:\t\tEthernet");
}

Test(verbs_dropin, devinfo_port_attributes)
{
	cr_assert_eq(run(DEVICES, "ibv_devinfo -d droce0 -v"), 0);
	expect_line("max_mtu:\t\t4096 (5)");
	expect_line("active_mtu:\t\t4096 (5)");
	expect_line("active_speed:\t\t25.0 Gbps (32)");
	expect_line("max_msg_sz:\t\t0x80000000");
	expect_line("pkey_tbl_len:\t\t1");
	expect_line("max_qp_rd_atom:\t\t\t128");
}

Test(verbs_dropin, devinfo_gid_table_like_linux)
{
	cr_assert_eq(run(DEVICES, "ibv_devinfo -d droce0 -v"), 0);
	expect_line("GID[  0]:\t\tfe80::5054:ff:fe00:1, RoCE v2");
	expect_line("GID[  1]:\t\t::ffff:10.99.0.1, RoCE v2");
	expect_line("GID[  2]:\t\tfd00::1, RoCE v2");
	cr_expect_null(strstr(out, "GID[  3]"), "no GID beyond the configured addresses");
}

Test(verbs_dropin, mtu_1500_gives_1024)
{
	cr_assert_eq(run("droce0:ip=10.0.0.1", "ibv_devinfo"), 0);
	expect_line("active_mtu:\t\t1024 (3)");
}

Test(verbs_dropin, devices_lists_guids)
{
	cr_assert_eq(run(DEVICES, "ibv_devices"), 0);
	expect_line("droce0");
	expect_line("505400fffe000001");
}

Test(verbs_dropin, no_devices_configured)
{
	cr_assert_neq(run("", "ibv_devinfo"), 0);
	expect_line("No IB devices found");
}

Test(verbs_dropin, bad_configuration_reported)
{
	run("droce0:mtu=abc", "ibv_devinfo");
	expect_line("droce: DROCE_DEVICES: droce0: bad mtu 'abc'");
}

Test(verbs_dropin, perftest_binds_every_symbol)
{
	/* BIND_NOW binaries linking librdmacm, libmlx5 and libefa start and reach droce */
	run(DEVICES, "ib_write_bw -d droce0");
	cr_expect_null(strstr(out, "symbol lookup error"), "%s", out);
	/* until the engine runs the port its link is down, and perftest says so */
	expect_line("Port number 1 state is Down");
}

Test(verbs_dropin, pingpong_binds_every_symbol)
{
	run(DEVICES, "ibv_rc_pingpong -d droce0 -g 1 -n 1 127.0.0.1");
	cr_expect_null(strstr(out, "symbol lookup error"), "%s", out);
	cr_expect_null(strstr(out, "No IB devices found"), "%s", out);
}
