/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The raw DPDK baseline of droce-perf --loopback (doc/performance.md): only the
 * work every correct RoCEv2 stack does per RDMA WRITE, in droce-perf's thread
 * shape. The application's thread posts work requests to a send ring and reaps
 * completions from a completion ring; one engine lcore on the last CPU builds
 * the frames (mbuf, Ethernet/IPv4/UDP/BTH/RETH, payload copy, ICRC), passes
 * them over an rte_ring standing for the link, and on the other side checks
 * the ICRC, copies the payload to its destination, frees the mbuf and posts a
 * completion for each signalled message.
 */
#ifndef RAW_H
#define RAW_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rte_mempool.h>
#include <rte_ring.h>

#define RAW_ENDS       2
#define RAW_MTU        4096u /* droce-perf --loopback's path MTU */
#define RAW_BURST      32u
#define RAW_MAX_SIZES  16
#define RAW_BUF_CAP    (4u << 20)            /* a bandwidth buffer, as droce-perf's */
#define RAW_IDLE_LOOPS 1024u                 /* idle passes before the engine sleeps, as droce's */
#define RAW_STALL_NS   (10ull * 1000000000u) /* no progress for this long: give up, as droce-perf */

/* A work request: what the application hands the engine (droce's WQE, reduced). */
struct raw_wqe {
	uint64_t laddr;
	uint64_t raddr;
	uint32_t len;
	uint32_t signaled;
};

/* A completion of a signalled work request. */
struct raw_cqe {
	uint32_t len;
	uint32_t status; /* 0: success */
};

/* One end: its queues, its buffer, the link to the other end. */
struct raw_end {
	struct rte_ring *sq;   /* application -> engine */
	struct rte_ring *cq;   /* engine -> application */
	struct rte_ring *link; /* this end's frames to the other end */
	uint8_t *buf;
	uint64_t buf_len;
	uint32_t next_psn;             /* requester: the next PSN to send */
	uint32_t expected_psn;         /* responder: the PSN expected from the other end */
	uint8_t hdr_tmpl[14 + 20 + 8]; /* Ethernet, IPv4, UDP of frames this end sends */
	/* requester: the work request being sent, and how far */
	struct raw_wqe cur;
	uint32_t cur_off;
	bool cur_busy;
	/* responder: the message being received (its RETH) */
	uint64_t rx_va;
	uint32_t rx_left;
};

struct raw_stats {
	uint64_t bad_icrc, bad_psn, bad_hdr, bad_rkey, no_mbuf;
};

struct raw_ctx {
	struct raw_end end[RAW_ENDS];
	struct rte_mempool *pool;
	struct raw_stats stats;
	volatile bool stop; /* the application's thread ends the engine lcore */
	unsigned int engine_lcore;
	uint32_t cq_mod;
	uint32_t tx_depth;
	uint32_t idle_sleep_us;
};

int raw_engine_lcore(void *arg);
void raw_end_template(struct raw_end *e, unsigned int me);

struct raw_bw_result {
	uint32_t size;
	uint64_t iters;
	double mpps, gbits;
};
int raw_bw_run(struct raw_ctx *c, uint32_t size, uint64_t iters, struct raw_bw_result *r);

struct raw_lat_result {
	uint32_t size;
	uint64_t iters;
	double t_min, t_median, t_p99, t_p999, t_max; /* half round trips, microseconds */
};
int raw_lat_run(struct raw_ctx *c, uint32_t size, uint64_t iters, struct raw_lat_result *r);

/* The clock droce-perf reads. */
static inline uint64_t raw_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif /* RAW_H */
