/* SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "droce_test.h"

static char file_prefix[64];

/* Free 2 MiB hugepages as the kernel reports them; 0 when unknown. */
static long free_hugepages(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

int droce_test_eal_init(const char *name)
{
	char prefix_arg[96];
	const char *argv[16];
	int argc = 0;

	snprintf(file_prefix, sizeof(file_prefix), "droce-test-%s-%d", name, (int)getpid());
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", file_prefix);
	argv[argc++] = "droce-test";
	argv[argc++] = prefix_arg;
	argv[argc++] = "--no-pci";
	argv[argc++] = "--no-telemetry";
	argv[argc++] = "--log-level=lib.eal:warning";
	argv[argc++] = "-l";
	argv[argc++] = "0";
	const char *no_huge = getenv("DROCE_NO_HUGE");

	if ((no_huge == NULL || strcmp(no_huge, "1") != 0) && free_hugepages() >= 64) {
		/* unlink hugepage files at once: nothing is left behind if the test dies */
		argv[argc++] = "--huge-unlink";
		argv[argc++] = "-m";
		argv[argc++] = "64";
	} else {
		/* without hugepages the memory is fixed at init: room for the largest test pool
		 * (rc_pair.c's, about 100 MB) */
		argv[argc++] = "--no-huge";
		argv[argc++] = "-m";
		argv[argc++] = "256";
	}
	cr_assert_geq(rte_eal_init(argc, (char **)argv), 0, "rte_eal_init failed: %s",
		      rte_strerror(rte_errno));
	return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void droce_test_eal_fini(void)
{
	char dir[256];

	rte_eal_cleanup();
	/* the runtime folder is /var/run/dpdk/<prefix> for root, XDG_RUNTIME_DIR otherwise */
	snprintf(dir, sizeof(dir), "%s/dpdk/%s",
		 getuid() == 0 ? "/var/run"
			       : (getenv("XDG_RUNTIME_DIR") ? getenv("XDG_RUNTIME_DIR") : "/tmp"),
		 file_prefix);
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
