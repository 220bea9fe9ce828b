/* SPDX-License-Identifier: BSD-3-Clause */
/* droced's configuration: every key, its checks, the file format and its errors. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_daemon.h"

static struct droce_daemon_conf c;
static char err[512];

static void setup(void)
{
	droce_daemon_conf_init(&c);
	err[0] = '\0';
}

TestSuite(daemon_conf, .init = setup);

Test(daemon_conf, defaults)
{
	cr_expect_str_eq(c.socket_path, "/run/droce/droced.sock");
	cr_expect_eq(c.socket_mode, 0660);
	cr_expect_eq(c.socket_gid, (gid_t)-1);
	cr_expect_eq(c.max_clients, 64u);
	cr_expect_eq(c.max_objects, 4096u);
	cr_expect_eq(c.max_objects_total, 32768u);
	cr_expect_eq(c.idle_sleep_us, -1);
	cr_expect_eq(c.lcores, 0u, "the engine's default: one lcore");
	cr_expect_eq(c.n_devices, 0u);
}

Test(daemon_conf, every_key_sets_its_field)
{
	cr_assert_eq(droce_daemon_conf_set(&c, "socket", "/tmp/x.sock", err, sizeof(err)), 0);
	cr_assert_eq(droce_daemon_conf_set(&c, "socket_mode", "0600", err, sizeof(err)), 0);
	cr_assert_eq(droce_daemon_conf_set(&c, "socket_group", "0", err, sizeof(err)), 0);
	cr_assert_eq(droce_daemon_conf_set(&c, "device", "droce0:vdev=net_tap0,ip=10.0.0.1", err,
					   sizeof(err)),
		     0);
	cr_assert_eq(droce_daemon_conf_set(&c, "eal", "--log-level=notice", err, sizeof(err)), 0);
	cr_assert_eq(droce_daemon_conf_set(&c, "memory", "512", err, sizeof(err)), 0);
	cr_assert_eq(droce_daemon_conf_set(&c, "idle_sleep_us", "0", err, sizeof(err)), 0);
	cr_assert_eq(droce_daemon_conf_set(&c, "lcores", "4", err, sizeof(err)), 0);
	cr_assert_eq(droce_daemon_conf_set(&c, "max_clients", "3", err, sizeof(err)), 0);
	cr_assert_eq(droce_daemon_conf_set(&c, "max_objects", "100", err, sizeof(err)), 0);
	cr_assert_eq(droce_daemon_conf_set(&c, "max_objects_total", "1000", err, sizeof(err)), 0);
	cr_expect_str_eq(c.socket_path, "/tmp/x.sock");
	cr_expect_eq(c.socket_mode, 0600);
	cr_expect_eq(c.socket_gid, 0u);
	cr_expect_eq(c.n_devices, 1u);
	cr_expect_str_eq(c.device[0], "droce0:vdev=net_tap0,ip=10.0.0.1");
	cr_expect_str_eq(c.eal_args, "--log-level=notice");
	cr_expect_eq(c.memory_mb, 512u);
	cr_expect_eq(c.idle_sleep_us, 0);
	cr_expect_eq(c.lcores, 4u);
	cr_expect_eq(c.max_clients, 3u);
	cr_expect_eq(c.max_objects, 100u);
	cr_expect_eq(c.max_objects_total, 1000u);
}

Test(daemon_conf, bad_values_are_refused_with_a_message)
{
	static const char *const bad[][2] = {
		{"socket", "relative.sock"},
		{"socket_mode", "0999"},
		{"socket_mode", "-1"},
		{"socket_group", "no-such-group-here"},
		{"device", "no-colon"},
		{"device", "droce0:ip=1.2.3.4 droce1:ip=1.2.3.5"},
		{"memory", "lots"},
		{"memory", ""},
		{"idle_sleep_us", "2000000"},
		{"lcores", "0"},
		{"lcores", "9"},
		{"max_clients", "0"},
		{"max_objects", "99999999999"},
		{"max_objects_total", "0"},
		{"colour", "blue"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_expect_eq(droce_daemon_conf_set(&c, bad[i][0], bad[i][1], err, sizeof(err)),
			     -EINVAL, "%s = %s", bad[i][0], bad[i][1]);
		cr_expect_neq(err[0], '\0', "a message for %s = %s", bad[i][0], bad[i][1]);
	}
	cr_expect_eq(c.n_devices, 0u, "nothing half-set");
	cr_expect_str_eq(c.socket_path, "/run/droce/droced.sock");
}

Test(daemon_conf, at_most_sixteen_devices)
{
	char dev[32];

	for (int i = 0; i < DROCE_DAEMON_DEVICES_MAX; i++) {
		snprintf(dev, sizeof(dev), "droce%d:link=l", i);
		cr_assert_eq(droce_daemon_conf_set(&c, "device", dev, err, sizeof(err)), 0);
	}
	cr_expect_eq(droce_daemon_conf_set(&c, "device", "droce99:link=l", err, sizeof(err)),
		     -EINVAL);
	cr_expect_eq(c.n_devices, (unsigned int)DROCE_DAEMON_DEVICES_MAX);
}

static char *write_file(const char *text)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/droced-conf-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

Test(daemon_conf, the_file_format)
{
	char *path = write_file("# droced\n"
				"\n"
				"socket = /tmp/y.sock   \n"
				"  device=droce0:link=a,ip=10.1.0.1\n"
				"device = droce1:link=a,ip=10.1.0.2\r\n"
				"\t# indented comment\n"
				"max_objects = 7\n");

	cr_assert_eq(droce_daemon_conf_load(&c, path, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	cr_expect_str_eq(c.socket_path, "/tmp/y.sock");
	cr_expect_eq(c.n_devices, 2u);
	cr_expect_str_eq(c.device[1], "droce1:link=a,ip=10.1.0.2");
	cr_expect_eq(c.max_objects, 7u);
}

Test(daemon_conf, file_errors_name_the_line)
{
	char *path = write_file("socket = /tmp/z.sock\nthis line has no equals\n");

	cr_expect_eq(droce_daemon_conf_load(&c, path, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, ":2:") != NULL, "%s", err);
	unlink(path);
	path = write_file("max_clients = 0\n");
	cr_expect_eq(droce_daemon_conf_load(&c, path, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, ":1: max_clients") != NULL, "%s", err);
	unlink(path);
	cr_expect_eq(droce_daemon_conf_load(&c, "/nonexistent/droced.conf", err, sizeof(err)),
		     -ENOENT);
	cr_expect(strstr(err, "/nonexistent/droced.conf") != NULL, "%s", err);
}
