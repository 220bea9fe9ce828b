/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The peer end of the transport sweep in a process of its own
 * (tests/common/sweep_end.h): opens the first droce device DROCE_DEVICES
 * names (a memif port, with its own embedded engine) and serves the driving
 * test's commands on a socket until told to exit.
 *
 * Usage: sweep_peer FD BUFFER_BYTES
 */
#include <stdio.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

#include "sweep_end.h"

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct sw_end e;
	int n = 0, rc;

	if (argc != 3) {
		fprintf(stderr, "usage: %s FD BUFFER_BYTES\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1) {
		fprintf(stderr, "sweep_peer: no droce device\n");
		return 3;
	}
	rc = sw_end_open(&e, list[0], strtoull(argv[2], NULL, 0));
	ibv_free_device_list(list);
	if (rc != 0) {
		fprintf(stderr, "sweep_peer: open: %d\n", rc);
		return 4;
	}
	rc = sw_serve_fd(&e, (int)strtol(argv[1], NULL, 0));
	if (rc != 0)
		fprintf(stderr, "sweep_peer: serve: %d\n", rc);
	return rc == 0 ? 0 : 5;
}
