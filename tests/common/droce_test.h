/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by droce's Criterion tests. */
#ifndef DROCE_TEST_H
#define DROCE_TEST_H

#include <stddef.h>
#include <stdint.h>

/** Path of a file in tests/data (from $DROCE_TEST_DATA); static buffer. */
const char *droce_test_data(const char *name);

/** Called for each frame of a capture; index is 1-based like tshark's frame.number. */
typedef void (*droce_test_frame_fn)(uint64_t index, const uint8_t *frame, uint32_t len, void *arg);

/** Feed every frame of tests/data/@p name to @p fn; returns the frame count (asserts on error). */
uint64_t droce_test_pcap_foreach(const char *name, droce_test_frame_fn fn, void *arg);

/** The captures from Linux Soft-RoCE in tests/data, NULL-terminated. */
extern const char *const droce_test_captures[];

/**
 * Start the DPDK EAL for this test process with its own --file-prefix, no PCI,
 * hugepages when the machine has free ones (and DROCE_NO_HUGE is not 1),
 * --no-huge otherwise. Call from
 * inside a test (Criterion forks per test). Returns 0 or asserts.
 */
int droce_test_eal_init(const char *name);

/** Stop the EAL and remove this process's runtime folder. */
void droce_test_eal_fini(void);

#endif /* DROCE_TEST_H */
