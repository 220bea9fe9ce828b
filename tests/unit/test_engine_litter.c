/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runtime folders left by droce processes that are gone (engine_litter.c), on a temporary
 * base folder: droce-<pid> of a dead process is removed with what it holds; the folders of
 * this process and of a live child, one whose config file a process holds the EAL's lock on,
 * other names, and links (named like a prefix or inside a removed folder) stay, and nothing
 * outside the base is touched. An engine whose EAL fails to start leaves no folder either.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <droce_engine.h>
#include <droce_verbs_engine.h>

#include "engine_litter.h"

static char base[PATH_MAX];
static char outside[PATH_MAX];

static void path_of(char *path, size_t len, const char *dir, const char *name)
{
	cr_assert_lt((size_t)snprintf(path, len, "%s/%s", dir, name), len, "path %s/%s too long",
		     dir, name);
}

static bool exists(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	path_of(path, sizeof(path), dir, name);
	return lstat(path, &st) == 0;
}

/* A runtime folder as the EAL leaves one: files, and a folder with a file (deeper than it). */
static void runtime_make(const char *name)
{
	char path[PATH_MAX], file[PATH_MAX];
	int fd;

	path_of(path, sizeof(path), base, name);
	cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s: %s", path, strerror(errno));
	path_of(file, sizeof(file), path, "config");
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0, "create %s: %s", file, strerror(errno));
	close(fd);
	path_of(file, sizeof(file), path, "sub");
	cr_assert_eq(mkdir(file, 0700), 0, "mkdir %s: %s", file, strerror(errno));
	path_of(path, sizeof(path), file, "f");
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0, "create %s: %s", path, strerror(errno));
	close(fd);
}

/* The pid of a child that has exited and been reaped: no process has it (until reused). */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0)
		_exit(0);
	cr_assert_eq(waitpid(pid, NULL, 0), pid, "child reaped");
	return pid;
}

static pid_t live_child(void)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void child_end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void prefix_name(char *name, size_t len, pid_t pid)
{
	snprintf(name, len, "droce-%d", (int)pid);
}

static void setup(void)
{
	char file[PATH_MAX];
	int fd;

	snprintf(base, sizeof(base), "%s/droce-litter-XXXXXX", P_tmpdir);
	cr_assert_not_null(mkdtemp(base), "mkdtemp: %s", strerror(errno));
	snprintf(outside, sizeof(outside), "%s/droce-outside-XXXXXX", P_tmpdir);
	cr_assert_not_null(mkdtemp(outside), "mkdtemp: %s", strerror(errno));
	path_of(file, sizeof(file), outside, "keep");
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0, "create %s: %s", file, strerror(errno));
	close(fd);
}

static void teardown(void)
{
	char cmd[2 * PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", base, outside);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s, %s\n", base, outside);
}

TestSuite(engine_litter, .init = setup, .fini = teardown);

Test(engine_litter, dead_process_folder_removed)
{
	char name[32];

	prefix_name(name, sizeof(name), dead_pid());
	runtime_make(name);
	cr_assert_eq(engine_litter_clean(base), 1, "one folder removed");
	cr_assert_not(exists(base, name), "%s removed with its files and folder", name);
}

Test(engine_litter, every_dead_folder_counted)
{
	char a[32], b[32];

	prefix_name(a, sizeof(a), dead_pid());
	prefix_name(b, sizeof(b), dead_pid());
	runtime_make(a);
	runtime_make(b);
	cr_assert_eq(engine_litter_clean(base), 2, "both folders counted");
	cr_assert_not(exists(base, a) || exists(base, b), "both removed");
	cr_assert_eq(engine_litter_clean(base), 0, "nothing left to remove the second time");
}

Test(engine_litter, own_folder_kept)
{
	char name[32];

	prefix_name(name, sizeof(name), getpid());
	runtime_make(name);
	cr_assert_eq(engine_litter_clean(base), 0, "nothing removed");
	cr_assert(exists(base, name), "this process's %s kept", name);
}

Test(engine_litter, live_child_folder_kept)
{
	pid_t child = live_child();
	char name[32];
	int n;

	prefix_name(name, sizeof(name), child);
	runtime_make(name);
	n = engine_litter_clean(base);
	child_end(child);
	cr_assert_eq(n, 0, "nothing removed");
	cr_assert(exists(base, name), "the live child's %s kept", name);
}

Test(engine_litter, other_names_kept)
{
	static const char *const names[] = {
		"other-123", "droce-12x",         "droce-", "droce-+5", "droce--5",
		"droce-0",   "droce-99999999999", "rte",    "xdroce-1",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		runtime_make(names[i]);
	cr_assert_eq(engine_litter_clean(base), 0, "nothing removed");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_assert(exists(base, names[i]), "%s kept", names[i]);
}

Test(engine_litter, link_named_like_a_dead_prefix_kept)
{
	char name[32], link[PATH_MAX];

	prefix_name(name, sizeof(name), dead_pid());
	path_of(link, sizeof(link), base, name);
	cr_assert_eq(symlink(outside, link), 0, "symlink: %s", strerror(errno));
	cr_assert_eq(engine_litter_clean(base), 0, "nothing removed");
	cr_assert(exists(base, name), "the link %s kept", name);
	cr_assert(exists(outside, "keep"), "the link's target and its file untouched");
}

Test(engine_litter, link_inside_a_dead_folder_not_followed)
{
	char name[32], dir[PATH_MAX], link[PATH_MAX];

	prefix_name(name, sizeof(name), dead_pid());
	runtime_make(name);
	path_of(dir, sizeof(dir), base, name);
	path_of(link, sizeof(link), dir, "to-outside");
	cr_assert_eq(symlink(outside, link), 0, "symlink: %s", strerror(errno));
	cr_assert_eq(engine_litter_clean(base), 1, "the dead folder removed");
	cr_assert_not(exists(base, name), "%s removed with the link in it", name);
	cr_assert(exists(outside, "keep"), "the link's target and its file untouched");
}

Test(engine_litter, dead_and_live_together)
{
	pid_t child = live_child();
	char dead[32], live[32];
	int n;

	prefix_name(dead, sizeof(dead), dead_pid());
	prefix_name(live, sizeof(live), child);
	runtime_make(dead);
	runtime_make(live);
	runtime_make("other-123");
	n = engine_litter_clean(base);
	child_end(child);
	cr_assert_eq(n, 1, "only the dead process's folder removed");
	cr_assert_not(exists(base, dead), "%s removed", dead);
	cr_assert(exists(base, live), "%s kept", live);
	cr_assert(exists(base, "other-123"), "other-123 kept");
}

/* A live process of another pid namespace: no such pid here, but the EAL's lock is held. */
Test(engine_litter, locked_config_kept)
{
	char name[32], dir[PATH_MAX], config[PATH_MAX];
	int ready[2], n;
	pid_t child;
	char c;

	prefix_name(name, sizeof(name), dead_pid());
	runtime_make(name);
	path_of(dir, sizeof(dir), base, name);
	path_of(config, sizeof(config), dir, "config");
	cr_assert_eq(pipe(ready), 0, "pipe: %s", strerror(errno));
	child = fork();
	cr_assert_geq(child, 0, "fork: %s", strerror(errno));
	if (child == 0) {
		struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 8};
		int fd = open(config, O_RDWR);

		c = fd >= 0 && fcntl(fd, F_SETLK, &lk) == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	cr_assert_eq(read(ready[0], &c, 1), 1, "the child answers");
	n = c == 'y' ? engine_litter_clean(base) : -1;
	child_end(child);
	cr_assert_eq(c, 'y', "the child locked %s", config);
	cr_assert_eq(n, 0, "nothing removed");
	cr_assert(exists(base, name), "%s kept while its config is locked", name);
}

Test(engine_litter, base_missing_or_not_a_folder)
{
	char missing[PATH_MAX], file[PATH_MAX];

	path_of(missing, sizeof(missing), base, "none");
	cr_assert_eq(engine_litter_clean(missing), 0, "no base: nothing to remove");
	path_of(file, sizeof(file), outside, "keep");
	cr_assert_eq(engine_litter_clean(file), -ENOTDIR, "a file as base: -ENOTDIR");
}

static int hook_cq(struct ibv_cq *cq, bool solicited)
{
	(void)cq;
	(void)solicited;
	return 0;
}

static int hook_qp(struct ibv_qp *qp, enum ibv_qp_state st, enum ibv_event_type ev)
{
	(void)qp;
	(void)st;
	(void)ev;
	return 0;
}

static int hook_srq(struct ibv_srq *srq, uint32_t left)
{
	(void)srq;
	(void)left;
	return 0;
}

/*
 * The EAL fails after making the engine's runtime folder (a secondary process finds no
 * primary's config in it): the engine removes the folder before it returns the error.
 */
Test(engine_litter, failed_start_leaves_no_folder)
{
	struct droce_engine_conf conf = {.n_ports = 1, .eal_args = "--proc-type=secondary"};
	struct droce_engine_hooks hooks = {
		.cq_notify = hook_cq, .qp_error = hook_qp, .srq_limit = hook_srq};
	const char *run = getuid() == 0 ? "/var/run" : getenv("XDG_RUNTIME_DIR");
	char dir[PATH_MAX], own[32];
	struct stat st;
	int rc;

	snprintf(conf.port[0].name, sizeof(conf.port[0].name), "droce0");
	snprintf(conf.port[0].link, sizeof(conf.port[0].link), "l0");
	conf.port[0].mtu = 1500;
	prefix_name(own, sizeof(own), getpid());
	snprintf(dir, sizeof(dir), "%s/dpdk/%s", run != NULL ? run : "/tmp", own);
	rc = droce_engine_start(&conf, &hooks, droce_verbs_mr_table());
	cr_assert_neq(rc, 0, "a secondary EAL without a primary does not start");
	cr_assert_neq(lstat(dir, &st), 0, "%s removed after the failed start", dir);
}
