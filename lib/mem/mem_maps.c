/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mapping check of a registration (droce_mem_maps.h): one pass over /proc/self/maps, whose
 * lines are sorted by address and do not overlap, so the range is covered iff each mapping
 * met starts where the previous one covering it ended.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "droce_mem_maps.h"

/* Whether the permissions @p perms ("rw-p") give the access asked for. */
static bool maps_access_ok(const char *perms, bool writable)
{
	return perms[0] == 'r' && (!writable || perms[1] == 'w');
}

int droce_mem_check_mapped(uint64_t addr, uint64_t length, bool writable)
{
	uint64_t want = addr, end = addr + length;
	char *line = NULL, perms[5];
	size_t cap = 0;
	uint64_t lo, hi;
	FILE *f;
	int rc = -EFAULT; /* until the whole range is seen mapped */

	if (length == 0 || end < addr)
		return -EINVAL;
	f = fopen("/proc/self/maps", "re");
	if (f == NULL)
		return -errno;
	while (want < end && getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s", &lo, &hi, perms) != 3)
			continue;
		if (hi <= want)
			continue;
		if (lo > want || !maps_access_ok(perms, writable))
			break; /* a hole, or a mapping without the access */
		want = hi;
	}
	if (want >= end)
		rc = 0;
	free(line);
	fclose(f);
	return rc;
}
