/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine starts without DPDK telemetry when its socket cannot be made: DPDK 22.11's EAL
 * refuses to start at all then, and it starts once per process, so the engine finds out
 * first, passes --no-telemetry and says so in one line on stderr. The test process becomes
 * a sandbox that refuses UNIX SOCK_SEQPACKET sockets (a seccomp filter; telemetry's socket is
 * one, the EAL's multi-process socket is a datagram one), as some container runtimes do.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <droce_engine.h>

#include "engine_priv.h"
#include "ud_pair.h"

#if defined(__x86_64__)
#define THIS_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_ARCH AUDIT_ARCH_AARCH64
#endif

/* From now on socket(AF_UNIX, SOCK_SEQPACKET, ...) fails with EACCES in this process. */
static void refuse_seqpacket_sockets(void)
{
#ifdef THIS_ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* the low 32 bits of the arguments (little-endian) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf), /* the type without SOCK_CLOEXEC etc. */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_SEQPACKET, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	int s;

	cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0, "%s", strerror(errno));
	cr_assert_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0, "%s", strerror(errno));
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	cr_assert_lt(s, 0, "the sandbox still gives a SOCK_SEQPACKET socket");
	cr_assert_eq(errno, EACCES);
	s = socket(AF_UNIX, SOCK_DGRAM, 0);
	cr_assert_geq(s, 0, "the sandbox refuses datagram sockets too: %s", strerror(errno));
	close(s);
#else
	cr_skip_test("no seccomp filter written for this architecture");
#endif
}

/* Open the two devices (the engine starts) with stderr into @p err. */
static void open_capturing_stderr(char *err, size_t len)
{
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	cr_assert_not_null(f);
	cr_assert_geq(saved, 0);
	fflush(stderr);
	cr_assert_geq(dup2(fileno(f), STDERR_FILENO), 0);
	ud_pair_open(NULL, NULL);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(err, 1, len - 1, f);
	err[n] = '\0';
	fclose(f);
}

static void setup(void)
{
	unsetenv("DROCE_TELEMETRY");
}

TestSuite(engine_telemetry_off, .init = setup, .timeout = 60);

Test(engine_telemetry_off, engine_starts_in_a_sandbox_without_unix_sockets)
{
	char err[4096];

	refuse_seqpacket_sockets();
	open_capturing_stderr(err, sizeof(err));
	cr_assert(droce_engine_running(), "the engine did not start: %s", err);
	cr_expect_not(droce_engine.telemetry, "telemetry reported on");
	send_one(1);
}

Test(engine_telemetry_off, one_line_says_telemetry_is_off)
{
	char err[4096], *line;

	refuse_seqpacket_sockets();
	open_capturing_stderr(err, sizeof(err));
	line = strstr(err, "droce: telemetry off: ");
	cr_assert_not_null(line, "no warning on stderr: \"%s\"", err);
	cr_expect_null(strstr(line + 1, "droce: telemetry off"), "more than one warning: %s", err);
	cr_assert_not_null(strchr(line, '\n'), "the warning ends its line: %s", line);
	*strchr(line, '\n') = '\0';
	cr_expect_not_null(strstr(line, strerror(EACCES)), "the warning says why: %s", line);
}

/* The socket can be made: telemetry on, no warning (test_engine_telemetry.c talks to it). */
Test(engine_telemetry_off, on_when_its_socket_can_be_made)
{
	char err[4096];

	open_capturing_stderr(err, sizeof(err));
	cr_assert(droce_engine_running(), "the engine did not start: %s", err);
	cr_expect(droce_engine.telemetry, "telemetry reported off");
	cr_expect_null(strstr(err, "telemetry off"), "%s", err);
}

Test(engine_telemetry_off, droce_telemetry_0_turns_it_off_quietly)
{
	char err[4096];

	setenv("DROCE_TELEMETRY", "0", 1);
	open_capturing_stderr(err, sizeof(err));
	cr_assert(droce_engine_running(), "the engine did not start: %s", err);
	cr_expect_not(droce_engine.telemetry, "telemetry reported on");
	cr_expect_null(strstr(err, "telemetry off"), "%s", err);
}
