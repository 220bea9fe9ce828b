/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A librdmacm.so.1 next to droce's drop-in libibverbs.so.1 starts, lists the
 * devices and opens them, and nothing crashes. Debian's reads the rdma_cm ABI
 * version through ibv_get_sysfs_path() and ibv_read_sysfs_file() and, without
 * the kernel's rdma_cm, refuses an event channel with a clear errno (no
 * rdma_cm device), or makes one on a host whose kernel has it; droce's own
 * makes one whenever there is a device. With no device both refuse the
 * channel and the list with ENODEV.
 *
 * Usage: rdmacm_start <devices expected> [library]. The library (default
 * librdmacm.so.1, as the loader finds it) is opened with dlopen() so that the
 * test needs Debian's runtime package only (its headers are not installed):
 * the prototypes below are librdmacm's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ibv_context;
struct rdma_event_channel;

typedef struct rdma_event_channel *(*create_channel_fn)(void);
typedef void (*destroy_channel_fn)(struct rdma_event_channel *channel);
typedef struct ibv_context **(*get_devices_fn)(int *num_devices);
typedef void (*free_devices_fn)(struct ibv_context **list);

static void *symbol(void *lib, const char *name)
{
	void *f = dlsym(lib, name);

	if (f == NULL) {
		fprintf(stderr, "rdmacm_start: librdmacm has no %s\n", name);
		exit(2);
	}
	return f;
}

int main(int argc, char **argv)
{
	int expected = argc > 1 ? atoi(argv[1]) : 0;
	void *lib = dlopen(argc > 2 ? argv[2] : "librdmacm.so.1", RTLD_NOW);
	struct rdma_event_channel *ch;
	struct ibv_context **list;
	int n = -1, err;

	if (lib == NULL) {
		fprintf(stderr, "rdmacm_start: %s\n", dlerror());
		return 2;
	}
	create_channel_fn create_channel =
		(create_channel_fn)symbol(lib, "rdma_create_event_channel");
	destroy_channel_fn destroy_channel =
		(destroy_channel_fn)symbol(lib, "rdma_destroy_event_channel");
	get_devices_fn get_devices = (get_devices_fn)symbol(lib, "rdma_get_devices");
	free_devices_fn free_devices = (free_devices_fn)symbol(lib, "rdma_free_devices");

	errno = 0;
	ch = create_channel();
	err = errno;
	if (ch != NULL) {
		printf("rdmacm_start: event channel made\n");
		destroy_channel(ch);
	} else if (err == ENODEV || err == ENOENT) {
		printf("rdmacm_start: event channel refused: %s\n", strerror(err));
	} else {
		fprintf(stderr, "rdmacm_start: event channel failed: %s\n", strerror(err));
		return 1;
	}

	errno = 0;
	list = get_devices(&n);
	err = errno;
	if (expected == 0) {
		/* no verbs device: librdmacm says so (ENODEV), as with rdma-core's libibverbs */
		if (list != NULL || err != ENODEV) {
			fprintf(stderr, "rdmacm_start: %d devices (%s) where none is configured\n",
				n, strerror(err));
			return 1;
		}
		printf("rdmacm_start: no devices: %s\n", strerror(err));
		return 0;
	}
	if (list == NULL || n != expected) {
		fprintf(stderr, "rdmacm_start: %d devices (%s), %d configured\n", n, strerror(err),
			expected);
		return 1;
	}
	for (int i = 0; i < n; i++)
		if (list[i] == NULL) {
			fprintf(stderr, "rdmacm_start: device %d not opened\n", i);
			return 1;
		}
	printf("rdmacm_start: %d devices opened through librdmacm\n", n);
	free_devices(list);
	return 0;
}
