/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs' functions whose prototypes rdma-core 44 does not install: the
 * declarations droce compiles its definitions against (droce_ibverbs_abi.h)
 * are rdma-core 44's (libibverbs/driver.h, cmd_ioctl.h, marshall.h), and the
 * drop-in libibverbs.so.1 answers through them as libibverbs does. The calls
 * go through dlsym() on the drop-in, as a program linked against Debian's
 * library reaches them.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_ibverbs_abi.h"

#define SAME_TYPE(f, type) __builtin_types_compatible_p(__typeof__(f), type)

/* rdma-core 44's driver.h, type for type: the declarations droce's definitions must match */
_Static_assert(SAME_TYPE(ibv_get_sysfs_path, const char *(void)), "driver.h: ibv_get_sysfs_path");
_Static_assert(SAME_TYPE(ibv_read_sysfs_file, int(const char *, const char *, char *, size_t)),
	       "driver.h: ibv_read_sysfs_file");
_Static_assert(SAME_TYPE(ibv_query_gid_type, int(struct ibv_context *, uint8_t, unsigned int,
						 enum ibv_gid_type_sysfs *)),
	       "driver.h: ibv_query_gid_type");
_Static_assert(SAME_TYPE(ibv_dontfork_range, int(void *, size_t)), "driver.h: ibv_dontfork_range");
_Static_assert(SAME_TYPE(ibv_dofork_range, int(void *, size_t)), "driver.h: ibv_dofork_range");
_Static_assert(SAME_TYPE(verbs_open_device, struct ibv_context *(struct ibv_device *, void *)),
	       "driver.h: verbs_open_device");
_Static_assert(SAME_TYPE(_verbs_init_and_alloc_context, void *(struct ibv_device *, int, size_t,
							       struct verbs_context *, uint32_t)),
	       "driver.h: _verbs_init_and_alloc_context");
_Static_assert(SAME_TYPE(verbs_init_cq, void(struct ibv_cq *, struct ibv_context *,
					     struct ibv_comp_channel *, void *)),
	       "driver.h: verbs_init_cq");
_Static_assert(SAME_TYPE(verbs_register_driver_34, void(const struct verbs_device_ops *)),
	       "driver.h: verbs_register_driver (IBVERBS_PABI_VERSION 34)");
_Static_assert(SAME_TYPE(verbs_set_ops,
			 void(struct verbs_context *, const struct verbs_context_ops *)),
	       "driver.h: verbs_set_ops");
_Static_assert(SAME_TYPE(verbs_uninit_context, void(struct verbs_context *)),
	       "driver.h: verbs_uninit_context");
_Static_assert(SAME_TYPE(__verbs_log, void(struct verbs_context *, uint32_t, const char *, ...)),
	       "driver.h: __verbs_log");
_Static_assert(SAME_TYPE(execute_ioctl, int(struct ibv_context *, struct ibv_command_buffer *)),
	       "cmd_ioctl.h: execute_ioctl");
_Static_assert(SAME_TYPE(verbs_allow_disassociate_destroy, bool),
	       "cmd_write.h: verbs_allow_disassociate_destroy");
_Static_assert(SAME_TYPE(ibv_cmd_alloc_pd,
			 int(struct ibv_context *, struct ibv_pd *, struct ibv_alloc_pd *, size_t,
			     struct ib_uverbs_alloc_pd_resp *, size_t)),
	       "driver.h: ibv_cmd_alloc_pd");
_Static_assert(SAME_TYPE(ibv_cmd_destroy_qp, int(struct ibv_qp *)), "driver.h: ibv_cmd_destroy_qp");
_Static_assert(SAME_TYPE(ibv_copy_qp_attr_from_kern,
			 void(struct ibv_qp_attr *, struct ib_uverbs_qp_attr *)),
	       "marshall.h: ibv_copy_qp_attr_from_kern");
_Static_assert(IBV_GID_TYPE_SYSFS_IB_ROCE_V1 == 0 && IBV_GID_TYPE_SYSFS_ROCE_V2 == 1,
	       "driver.h: enum ibv_gid_type_sysfs");

static void *dropin;

/* The drop-in's definition of @p name, typed as rdma-core 44 declares it. */
#define DROPIN(name) ((__typeof__(&name))dropin_symbol(#name))

static void *dropin_symbol(const char *name)
{
	void *f;

	if (dropin == NULL) {
		const char *dir = getenv("DROCE_DROPIN_DIR");
		char path[4096];

		cr_assert_not_null(dir,
				   "DROCE_DROPIN_DIR is not set (run the tests through meson)");
		snprintf(path, sizeof(path), "%s/libibverbs.so.1", dir);
		dropin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		cr_assert_not_null(dropin, "dlopen: %s", dlerror());
	}
	f = dlsym(dropin, name);
	cr_assert_not_null(f, "the drop-in exports no %s", name);
	return f;
}

Test(verbs_abi, sysfs_path_is_a_string)
{
	unsetenv("SYSFS_PATH");
	const char *path = DROPIN(ibv_get_sysfs_path)();

	cr_assert_not_null(path, "ibv_get_sysfs_path() returns the path, not a status");
	cr_expect_str_eq(path, "/sys", "libibverbs' answer without SYSFS_PATH");
	cr_expect_eq(DROPIN(ibv_get_sysfs_path)(), path, "the same string every call");
}

Test(verbs_abi, sysfs_path_from_the_environment)
{
	setenv("SYSFS_PATH", "/tmp/droce-sysfs//", 1);
	cr_expect_str_eq(DROPIN(ibv_get_sysfs_path)(), "/tmp/droce-sysfs",
			 "SYSFS_PATH without its trailing slashes");
}

/* A file @p content in a fresh folder; the folder's path in @p dir. */
static void sysfs_file(char *dir, size_t size, const char *content)
{
	char path[4096];
	FILE *f;

	snprintf(dir, size, "/tmp/droce-abi-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/abi_version", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(content, f);
	fclose(f);
}

static void sysfs_file_remove(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/abi_version", dir);
	unlink(path);
	rmdir(dir);
}

Test(verbs_abi, read_sysfs_file_strips_the_newline)
{
	char dir[64], buf[16];
	int n;

	sysfs_file(dir, sizeof(dir), "4\n");
	n = DROPIN(ibv_read_sysfs_file)(dir, "abi_version", buf, sizeof(buf));
	sysfs_file_remove(dir);
	cr_expect_eq(n, 1, "the bytes read without the newline: %d", n);
	cr_expect_str_eq(buf, "4", "the value, NUL-terminated");
}

Test(verbs_abi, read_sysfs_file_without_room_for_the_terminator)
{
	char dir[64], buf[4];
	int n;

	sysfs_file(dir, sizeof(dir), "1234");
	n = DROPIN(ibv_read_sysfs_file)(dir, "abi_version", buf, sizeof(buf));
	sysfs_file_remove(dir);
	cr_expect_eq(n, -1, "a value that does not fit whole is refused: %d", n);
}

Test(verbs_abi, read_sysfs_file_missing)
{
	errno = 0;
	cr_expect_eq(DROPIN(ibv_read_sysfs_file)("/nonexistent-droce",
						 "class/misc/rdma_cm/abi_version", (char[8]){0}, 8),
		     -1, "a file that does not exist: -1");
	cr_expect_eq(errno, ENOENT, "errno ENOENT, got %d", errno);
}

Test(verbs_abi, provider_context_setup_fails_cleanly)
{
	errno = 0;
	cr_expect_null(DROPIN(verbs_open_device)(NULL, NULL), "no provider device: NULL");
	cr_expect_eq(errno, EOPNOTSUPP, "errno EOPNOTSUPP, got %d", errno);
	errno = 0;
	cr_expect_null(DROPIN(_verbs_init_and_alloc_context)(NULL, -1, 64, NULL, 0),
		       "no provider context: NULL");
	cr_expect_eq(errno, EOPNOTSUPP, "errno EOPNOTSUPP, got %d", errno);
}

Test(verbs_abi, kernel_commands_unsupported)
{
	cr_expect_eq(DROPIN(ibv_cmd_destroy_qp)(NULL), EOPNOTSUPP,
		     "a positive errno, as ibv_cmd_*");
	cr_expect_eq(DROPIN(execute_ioctl)(NULL, NULL), EOPNOTSUPP, "a positive errno");
}

Test(verbs_abi, gid_type_of_each_entry)
{
	struct ibv_device **(*get_list)(int *) = DROPIN(ibv_get_device_list);
	struct ibv_context *(*open_dev)(struct ibv_device *) = DROPIN(ibv_open_device);
	enum ibv_gid_type_sysfs type = (enum ibv_gid_type_sysfs)7;
	struct ibv_device **list;
	struct ibv_context *ctx;

	setenv("DROCE_DEVICES", "droce0:mac=52:54:00:00:00:01,ip=10.99.0.1", 1);
	list = get_list(NULL);
	cr_assert(list != NULL && list[0] != NULL, "one device configured");
	ctx = open_dev(list[0]);
	cr_assert_not_null(ctx);
	cr_expect_eq(DROPIN(ibv_query_gid_type)(ctx, 1, 1, &type), 0, "GID 1 exists");
	cr_expect_eq(type, IBV_GID_TYPE_SYSFS_ROCE_V2, "every droce GID is RoCEv2");
	type = (enum ibv_gid_type_sysfs)7;
	cr_expect_eq(DROPIN(ibv_query_gid_type)(ctx, 1, 5, &type), 0,
		     "an empty entry of the table: 0, as libibverbs answers");
	cr_expect_eq(type, IBV_GID_TYPE_SYSFS_IB_ROCE_V1, "an empty entry reads as IB/RoCEv1");
	errno = 0;
	cr_expect_eq(DROPIN(ibv_query_gid_type)(ctx, 2, 0, &type), -1, "no port 2");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	DROPIN(ibv_close_device)(ctx);
	DROPIN(ibv_free_device_list)(list);
}
