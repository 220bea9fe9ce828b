/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sysfs and fork helpers of libibverbs. droce's devices are not kernel
 * devices: they have no sysfs files, and fork() needs no madvise because
 * nothing is pinned for DMA by a kernel driver.
 */
#include <errno.h>
#include <stdio.h>

#include "verbs_priv.h"

int ibv_get_sysfs_path(char *buf, size_t size)
{
	/* the path libibverbs documents; droce keeps nothing there */
	return snprintf(buf, size, "/sys") < (int)size ? 0 : -1;
}

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	(void)dir;
	(void)file;
	(void)buf;
	(void)size;
	errno = ENOENT;
	return -1;
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

/* Declared in rdma-core's provider header, which is not installed: same ABI. */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type);

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type)
{
	const struct droce_device *d = to_dctx(context)->dev;

	if (port_num != 1 || index >= d->gid_count) {
		errno = EINVAL;
		return -1;
	}
	*type = IBV_GID_TYPE_SYSFS_ROCE_V2; /* every droce GID is RoCEv2 */
	return 0;
}
