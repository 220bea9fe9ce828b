/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The devargs the engine opens a port's device with: the user's, plus what a
 * PMD needs to carry frames of the port's MTU whole.
 *
 * memif: its buffers are 2048 bytes unless told otherwise, and a larger frame
 * is chained over several. DPDK 22.11's memif copy path counts the slots of a
 * chained frame one short when its ring is nearly full: it writes past the
 * free slots and the receiver then reads stale slots again and again (frames
 * replayed by the million, RC retries exhausted). Buffers that hold a whole
 * frame never chain.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine_priv.h"

/* Ethernet header, VLAN tag and FCS around the MTU */
#define FRAME_OVER_MTU 22
#define MEMIF_BSIZE    2048

int engine_devargs(const char *device, uint32_t mtu, char *out, size_t size)
{
	uint32_t bsize = MEMIF_BSIZE;
	int n;

	if (strncmp(device, "net_memif", 9) == 0 && strstr(device, "bsize=") == NULL) {
		while (bsize < mtu + FRAME_OVER_MTU)
			bsize *= 2;
		if (bsize > MEMIF_BSIZE) {
			n = snprintf(out, size, "%s,bsize=%u", device, bsize);
			return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
		}
	}
	n = snprintf(out, size, "%s", device);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}
