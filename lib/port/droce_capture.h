/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Packet capture of a port to a pcap file with nanosecond timestamps.
 *
 * The lcore that owns a port hands every frame it receives from the device and every
 * frame it gives to the device to droce_capture_frame(): the bytes are copied into a
 * bounded byte ring shared with a writer thread, which turns them into pcap records
 * (libpcap, LINKTYPE_ETHERNET, nanosecond precision). The lcore never blocks and never
 * makes a system call: when the ring is full the frame is not recorded and counted as
 * dropped. The ring has one writer per index: the lcore moves its head, the writer thread
 * its tail (release stores, acquire loads).
 *
 * Timestamps come from the TSC, anchored to CLOCK_REALTIME when the capture opens.
 *
 * Errors: droce_capture_open() returns 0 or -EINVAL (NULL or empty path, bad sizes),
 * -ENOMEM, -errno of opening the file, or -EIO (libpcap refused it).
 */
#ifndef DROCE_CAPTURE_H
#define DROCE_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of each frame recorded at most (longer frames are cut, their length kept). */
#define DROCE_CAPTURE_SNAPLEN 9238u
/** The ring between the lcore and the writer, by default. */
#define DROCE_CAPTURE_RING_DEFAULT (8u << 20)

struct droce_capture;

struct droce_capture_stats {
	uint64_t frames;  /**< frames offered */
	uint64_t dropped; /**< of those, not recorded: the ring was full */
	uint64_t written; /**< records the writer has written to the file */
};

/**
 * Create @p path (truncated) as a pcap file and start its writer thread.
 * @param ring_bytes the ring's size (a power of two, 64 KiB .. 1 GiB), 0 for the default
 */
int droce_capture_open(const char *path, uint32_t ring_bytes, struct droce_capture **out);

/** Record one frame (the owning lcore only). Never blocks. */
void droce_capture_frame(struct droce_capture *c, const struct rte_mbuf *m);

/** Counters; safe from any thread while the capture runs (each field one plain load). */
void droce_capture_stats_get(const struct droce_capture *c, struct droce_capture_stats *st);

/**
 * Stop: the writer writes every record still in the ring, the file is closed and @p c
 * freed. The lcore must no longer call droce_capture_frame() on @p c. NULL is a no-op.
 */
void droce_capture_close(struct droce_capture *c);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_CAPTURE_H */
