/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two embedded-engine devices for tests that drive the engine through verbs calls only:
 * DROCE_DEVICES names droce0 and droce1 joined by a ring link (link=l0), and each end gets
 * a PD, a CQ, a registered buffer and a QP moved to RTS against the other's (UD: to RTS,
 * with an address handle to the other's GID). What the tests vary (QP type, the ports'
 * keys such as fault= or zero_copy=, MTUs, queue depths, PSNs, RC timers, lcores) is in
 * struct pair_opts; pair_opts_default() gives the rest. Every step asserts.
 */
#ifndef DROCE_TEST_PAIR_HARNESS_H
#define DROCE_TEST_PAIR_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <infiniband/verbs.h>

/** What a set-up may change; start from pair_opts_default(). */
struct pair_opts {
	enum ibv_qp_type type;
	const char *keys[2];   /**< more DROCE_DEVICES keys of droce0 / droce1 (",k=v"), or NULL */
	unsigned int eth_mtu;  /**< mtu= of both ports */
	enum ibv_mtu path_mtu; /**< RC, UC */
	size_t buf_len;        /**< each end's registered buffer, zeroed */
	uint32_t max_send_wr, max_recv_wr;
	int cq_depth;    /**< one CQ an end, for sends and receives */
	uint32_t psn;    /**< first PSN of both directions */
	uint8_t timeout; /**< RC: local ACK timeout code (4.096 us << timeout) */
	uint8_t retry_cnt, rnr_retry, rd_atomic;
	uint32_t qkey;          /**< UD QPs' Q_Key */
	unsigned int qp_access; /**< RC, UC: remote access the QP grants */
	unsigned int mr_access;
	bool no_huge;        /**< DROCE_NO_HUGE=1: ring links need no DMA memory */
	unsigned int lcores; /**< DROCE_LCORES, 0: as the environment has it */
};

/** One end: device, PD, CQ, QP, MR over buf, and the GID (index 1) its peer sends to. */
struct pair_end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah; /**< UD: to the peer's GID */
	union ibv_gid gid;
	uint8_t *buf;
	size_t len;
	uint32_t qkey;
};

/**
 * RC over ports of MTU 4200, path MTU 1024, 1 MiB buffers, 64 WRs each way, a CQ of 256,
 * PSN 0x123, timeout 14, retries 7, 4 RDMA READs or atomics in flight, Q_Key 0x11111111,
 * every remote access the type allows, every MR access.
 */
struct pair_opts pair_opts_default(enum ibv_qp_type type);

/** Set DROCE_DEVICES (and DROCE_NO_HUGE, DROCE_LCORES) for @p o. */
void pair_env(const struct pair_opts *o);

/** Open the two devices of pair_env(): context, PD, buffer, MR and GID of each end. */
void pair_open_devices(const struct pair_opts *o, struct pair_end *e0, struct pair_end *e1);

/** A QP of @p o->type on @p x with these CQs (and SRQ, or NULL), moved to INIT. */
struct ibv_qp *pair_qp_create(const struct pair_opts *o, struct pair_end *x, struct ibv_cq *send_cq,
			      struct ibv_cq *recv_cq, struct ibv_srq *srq);

/** @p qp to RTR and RTS towards QP @p dqpn at @p dgid (UD: to RTS, @p dgid may be NULL). */
void pair_qp_connect(const struct pair_opts *o, struct ibv_qp *qp, const union ibv_gid *dgid,
		     uint32_t dqpn);

/** One end on @p dev: device, PD, buffer, MR, CQ, QP in INIT. */
void pair_end_open(const struct pair_opts *o, struct pair_end *x, struct ibv_device *dev);

/** The whole pair: pair_env(), both ends, both QPs in RTS against each other. */
void pair_open(const struct pair_opts *o, struct pair_end *e0, struct pair_end *e1);

/* ------------------------------------------------------------ traffic */

/** A send WR from an end's buffer; zero fields take what pair_post_send() says. */
struct pair_wr {
	uint64_t id; /**< wr_id, and the immediate data (big-endian) */
	enum ibv_wr_opcode op;
	uint32_t off, len; /**< in the sender's buffer; len 0: no SGE */
	uint32_t roff;     /**< in the peer's buffer (RC, UC) */
	uint32_t rkey;     /**< 0: the peer's MR */
	uint64_t compare_add, swap;
	unsigned int flags;   /**< 0: IBV_SEND_SIGNALED */
	struct ibv_ah *ah;    /**< UD, NULL: the end's own AH to its peer */
	uint32_t remote_qpn;  /**< UD, 0: the peer's QP */
	uint32_t remote_qkey; /**< UD, 0: the end's Q_Key */
};

/** Post @p w on @p x's QP towards @p to (UD with an AH and QPN in @p w: may be NULL). */
void pair_post_send(struct pair_end *x, const struct pair_end *to, const struct pair_wr *w);

/** A receive of @p len bytes at @p off of @p x's buffer, with @p lkey (0: the MR's). */
void pair_post_recv(struct pair_end *x, uint64_t id, uint32_t off, uint32_t len, uint32_t lkey);

#define PAIR_LIVENESS 20 /**< seconds a wait may take before the test is called hung */

/** The next completion of @p cq, which must be @p id's (fails after PAIR_LIVENESS). */
struct ibv_wc pair_wait_wc(struct ibv_cq *cq, uint64_t id);

/** Seconds since @p t0 (CLOCK_MONOTONIC). */
double pair_elapsed(const struct timespec *t0);

/** Bytes of seed @p seed, a different sequence for each seed. */
void pair_fill(uint8_t *p, uint32_t len, uint32_t seed);
/** The first byte where @p p differs from pair_fill(@p len, @p seed), or -1. */
long pair_mismatch(const uint8_t *p, uint32_t len, uint32_t seed);

/** Counter @p name of @p x's QP and of its port (include/droce_counters.h). */
uint64_t pair_qp_counter(const struct pair_end *x, const char *name);
uint64_t pair_port_counter(const struct pair_end *x, const char *name);

#endif /* DROCE_TEST_PAIR_HARNESS_H */
