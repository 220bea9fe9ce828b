/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The devargs a port's device is opened with: the user's, plus what a PMD
 * needs to carry frames of the port's MTU whole.
 *
 * memif: its buffers are 2048 bytes unless told otherwise, and a larger frame
 * is chained over several. DPDK 22.11's memif copy path counts the slots of a
 * chained frame one short when its ring is nearly full: it writes past the
 * free slots and the receiver then reads stale slots again and again (frames
 * replayed by the million, RC retries exhausted). Buffers that hold a whole
 * frame never chain.
 *
 * af_packet: a queue pair per engine lcore (qpairs=), one socket each.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "droce_port.h"

/* Ethernet header, VLAN tag and FCS around the MTU */
#define FRAME_OVER_MTU 22
#define MEMIF_BSIZE    2048

int droce_port_devargs(const char *device, uint32_t mtu, unsigned int queues, char *out,
		       size_t size)
{
	uint32_t bsize = MEMIF_BSIZE;
	size_t len;
	int n;

	n = snprintf(out, size, "%s", device);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	len = (size_t)n;
	if (strncmp(device, "net_memif", 9) == 0 && strstr(device, "bsize=") == NULL) {
		while (bsize < mtu + FRAME_OVER_MTU)
			bsize *= 2;
		if (bsize > MEMIF_BSIZE) {
			n = snprintf(out + len, size - len, ",bsize=%u", bsize);
			if (n < 0 || (size_t)n >= size - len)
				return -ENAMETOOLONG;
			len += (size_t)n;
		}
	}
	/* af_packet opens one socket per queue pair (the kernel spreads flows over them):
	 * as many as the engine has lcores, unless the user chose */
	if (queues > 1 && strncmp(device, "net_af_packet", 13) == 0 &&
	    strstr(device, "qpairs=") == NULL) {
		n = snprintf(out + len, size - len, ",qpairs=%u", queues);
		if (n < 0 || (size_t)n >= size - len)
			return -ENAMETOOLONG;
	}
	return 0;
}
