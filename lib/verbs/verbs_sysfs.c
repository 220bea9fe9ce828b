/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sysfs and fork helpers of libibverbs, with rdma-core 44's prototypes
 * (driver.h's ones in droce_ibverbs_abi.h). droce's devices are not kernel
 * devices: they have no sysfs files of their own, and fork() needs no madvise
 * because nothing is pinned for DMA by a kernel driver.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_priv.h"

/* SYSFS_PATH without its trailing slashes, or "/sys"; chosen once, as libibverbs does */
static char sysfs_path_env[PATH_MAX];
static const char *sysfs_path = "/sys";
static pthread_once_t sysfs_path_once = PTHREAD_ONCE_INIT;

static void sysfs_path_choose(void)
{
	/* a set-user-ID program does not take a path from its caller's environment */
	const char *env = getuid() == geteuid() ? getenv("SYSFS_PATH") : NULL;
	size_t len;

	if (env == NULL)
		return;
	len = strnlen(env, sizeof(sysfs_path_env) - 1);
	memcpy(sysfs_path_env, env, len);
	while (len > 0 && sysfs_path_env[len - 1] == '/')
		len--;
	sysfs_path_env[len] = '\0';
	sysfs_path = sysfs_path_env;
}

/*
 * Where sysfs is mounted, as libibverbs answers it (librdmacm reads the rdma_cm
 * ABI version below it at start-up). droce's devices keep nothing there, but a
 * caller may read the kernel's files through ibv_read_sysfs_file().
 */
const char *ibv_get_sysfs_path(void)
{
	pthread_once(&sysfs_path_once, sysfs_path_choose);
	return sysfs_path;
}

/*
 * Read @p dir/@p file into @p buf: the bytes read without a final newline,
 * NUL-terminated; -1 and errno when the file cannot be read or does not fit
 * with its terminator (libibverbs' contract).
 */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t len;
	int fd;

	if (dir == NULL || file == NULL || buf == NULL || size == 0) {
		errno = EINVAL;
		return -1;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len < 0)
		return -1;
	if (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if ((size_t)len < size)
		buf[len] = '\0';
	else {
		errno = EOVERFLOW; /* no room for the terminator: a truncated value is no value */
		return -1;
	}
	return (int)len;
}

int ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

int ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

/*
 * The type of GID @p index (rdma-core 44's driver.h prototype, in
 * droce_ibverbs_abi.h): an entry of the table that holds no GID answers
 * IB/RoCEv1 and 0, as libibverbs does; -1 and errno beyond the table.
 */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type)
{
	struct ibv_gid_entry entry;
	int rc = _ibv_query_gid_ex(context, port_num, index, &entry, 0, sizeof(entry));

	if (rc == ENODATA) {
		*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	*type = entry.gid_type == IBV_GID_TYPE_ROCE_V2 ? IBV_GID_TYPE_SYSFS_ROCE_V2
						       : IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}
