/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runtime folders of droce file prefixes (droce-<pid>) whose process is gone: a process that
 * crashed or was killed never removed its own, so the next engine to start removes them.
 * Nothing here follows a symbolic link: every step is relative to a folder already opened
 * without following one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine_litter.h"

#define LITTER_PREFIX "droce-"
/* the EAL's runtime folder is flat; a little depth is allowed, not an unbounded walk */
#define LITTER_DEPTH_MAX 4

/* The pid of a name droce-<pid> as the engine writes it (no sign, no leading zero), else 0. */
static pid_t litter_pid(const char *name)
{
	const size_t len = strlen(LITTER_PREFIX);
	const char *p = name + len;
	long pid = 0;

	if (strncmp(name, LITTER_PREFIX, len) != 0 || *p < '1' || *p > '9')
		return 0;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		pid = pid * 10 + (*p - '0');
		if (pid > INT_MAX)
			return 0;
	}
	return (pid_t)pid;
}

/* Whether no process has @p pid: an existing one we may not signal (EPERM) still counts. */
static bool litter_pid_gone(pid_t pid)
{
	return kill(pid, 0) == -1 && errno == ESRCH;
}

/* Remove what the opened folder @p dfd holds (it closes @p dfd); 0 or -errno. */
static int litter_empty(int dfd, unsigned int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *ent;
	struct stat st;
	int rc = 0;

	if (d == NULL) {
		rc = -errno;
		close(dfd);
		return rc;
	}
	while ((ent = readdir(d)) != NULL) {
		if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
			continue;
		if (fstatat(dfd, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT)
				rc = -errno;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub = -1, r = -ELOOP;

			if (depth < LITTER_DEPTH_MAX) {
				sub = openat(dfd, ent->d_name,
					     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				r = sub < 0 ? -errno : litter_empty(sub, depth + 1);
			}
			if (r == 0 && unlinkat(dfd, ent->d_name, AT_REMOVEDIR) != 0)
				r = -errno;
			if (r != 0)
				rc = r;
		} else if (unlinkat(dfd, ent->d_name, 0) != 0 && errno != ENOENT) {
			rc = -errno;
		}
	}
	closedir(d);
	return rc;
}

/*
 * Whether a process holds the lock the EAL's primary process keeps on its folder's config file
 * for its whole life: a process of another pid namespace sharing the base is alive although
 * kill() finds no process of that pid.
 */
static bool litter_config_locked(int dfd)
{
	struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	int fd = openat(dfd, "config", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool locked;

	if (fd < 0)
		return false;
	locked = fcntl(fd, F_GETLK, &lk) != 0 || lk.l_type != F_UNLCK;
	close(fd);
	return locked;
}

/* Remove the folder @p name of the opened base @p base_fd if its process is gone: 1 if done. */
static int litter_remove(int base_fd, const char *name)
{
	pid_t pid = litter_pid(name);
	struct stat st;
	int dfd;

	if (pid <= 0 || !litter_pid_gone(pid))
		return 0;
	/* a link named like a prefix is not one: neither it nor its target is touched */
	if (fstatat(base_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid())
		return 0;
	dfd = openat(base_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	if (litter_config_locked(dfd)) {
		close(dfd);
		return 0;
	}
	if (litter_empty(dfd, 1) != 0)
		return 0;
	return unlinkat(base_fd, name, AT_REMOVEDIR) == 0 ? 1 : 0;
}

int engine_litter_clean(const char *base)
{
	int base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *ent;
	int removed = 0;
	DIR *d;

	if (base_fd < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(base_fd);
	if (d == NULL) {
		int rc = -errno;

		close(base_fd);
		return rc;
	}
	while ((ent = readdir(d)) != NULL)
		removed += litter_remove(base_fd, ent->d_name);
	closedir(d);
	return removed;
}
