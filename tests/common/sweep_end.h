/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One end of the transport sweep (tests/common/sweep.c): a droce device opened
 * with verbs calls only, a buffer registered with every right, one RC, one UC
 * and one UD QP with their own CQs, and the commands a driving test sends it.
 * The same commands run in the driving process (the peer device of a ring
 * link) or in another process (tests/integration/sweep_peer.c, over memif),
 * so one table of cases drives both. Nothing here asserts: every command
 * answers 0 or -errno, so that a peer process never involves Criterion.
 */
#ifndef DROCE_SWEEP_END_H
#define DROCE_SWEEP_END_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/** QP types an end has one of. */
enum sw_kind { SW_RC, SW_UC, SW_UD, SW_KINDS };

#define SW_GIDS     4 /* link-local, one IPv4-mapped, one IPv6, spare */
#define SW_QKEY     0x11111111u
#define SW_ZERO     0xffffffffu /* fill/check seed: all bytes zero */
#define SW_LIVENESS 20          /* seconds a completion may take before a run is called hung */
#define SW_GAP      64          /* bytes between the two SGEs of a split request */
#define SW_INLINE   256         /* inline bytes a send WR may carry */

/** What an end tells its peer. */
struct sw_info {
	uint32_t qpn[SW_KINDS];
	uint32_t gid_count;
	union ibv_gid gid[SW_GIDS];
	uint64_t addr; /**< the buffer */
	uint64_t len;
	uint32_t rkey;    /**< every right */
	uint32_t ro_rkey; /**< the same buffer, registered without any remote right */
	uint32_t mtu;     /**< the port's active MTU in bytes */
};

/** How to connect one QP of an end to its peer's (RTR and RTS attributes). */
struct sw_path {
	uint32_t kind;
	uint32_t dest_qpn;
	union ibv_gid dgid;
	uint8_t sgid_index;
	uint8_t path_mtu; /**< enum ibv_mtu */
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint32_t sq_psn, rq_psn;
	uint32_t access;   /**< qp_access_flags */
	uint32_t rtr_only; /**< stop in RTR: a responder only */
};

struct sw_end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t *buf;
	size_t len;
	struct ibv_mr *mr, *ro;
	struct ibv_cq *scq[SW_KINDS], *rcq[SW_KINDS];
	struct ibv_qp *qp[SW_KINDS];
	struct ibv_ah *ah; /**< UD: to the peer */
	uint32_t ud_dqpn;  /**< UD: the peer's QP */
	struct ibv_mw *mw; /**< the window SW_BIND bound last */
	uint32_t mw_rkey;  /**< and its key */
	char port[32];     /**< the engine's name of the port */
};

enum sw_op {
	SW_INFO,    /**< -> info */
	SW_CONNECT, /**< path: (re)connect QP path.kind from RESET to RTS */
	SW_RECV,    /**< kind, id, off, len (0: no SGE), split; lkey: 0 the MR's, else that one */
	SW_FILL,    /**< off, len, seed, pat */
	SW_CHECK,   /**< off, len, seed, pat -> val: first byte that differs, or -1 */
	SW_PEEK,    /**< off, len (<= 64) -> bytes */
	SW_POLL,    /**< kind, recv (bool), len: seconds to wait -> wc; -EAGAIN when none */
	SW_STATE,   /**< kind -> val: the QP state ibv_query_qp reports */
	SW_GET64,   /**< off -> val */
	SW_PUT64,   /**< off, val */
	SW_POST,    /**< kind, wr_op, id, off, len, split, addr, rkey (UD: the Q_Key, 0: SW_QKEY),
		       imm: one signaled send WR */
	SW_BIND,    /**< kind, off, len, val (access), recv (the last window again): type-2 window
		       bound by the QP, its completion awaited -> val: rkey, wc */
	SW_ASYNC,   /**< len: seconds to wait -> val: event type, wc.qp_num: its QP; -EAGAIN */
	SW_DESTROY, /**< kind: destroy that QP (the peer is gone) */
	SW_FINISH,  /**< destroy every QP, wait for the pools -> val: 0, or mbufs missing */
	SW_STATS,   /**< once the engine finished its pass -> val: frames received, id: sent */
	SW_EXIT,
};

struct sw_cmd {
	uint32_t op;
	uint32_t kind;
	uint32_t wr_op; /**< enum ibv_wr_opcode */
	uint32_t seed;
	uint32_t rkey;
	uint32_t lkey;
	uint32_t imm;
	uint32_t recv;
	uint32_t flags; /**< SW_POST: send flags besides IBV_SEND_SIGNALED */
	uint32_t chain; /**< SW_POST: SENDs of 16 bytes posted behind it in the same call */
	uint32_t split; /**< SW_POST, SW_RECV: two SGEs, @p split bytes then SW_GAP bytes skipped */
	uint64_t pat;   /**< SW_FILL, SW_CHECK: index in the pattern of the first byte */
	uint64_t id, off, len, addr, val;
	uint64_t swap; /**< atomics: val is compare_add, this the swap operand */
	struct sw_path path;
};

struct sw_reply {
	int32_t rc; /**< 0 or -errno */
	int64_t val;
	struct ibv_wc wc;
	struct sw_info info;
	uint8_t bytes[64];
};

/** The byte at @p i of the pattern @p seed (SW_ZERO: 0). */
static inline uint8_t sw_pattern(uint64_t i, uint32_t seed)
{
	if (seed == SW_ZERO)
		return 0;
	return (uint8_t)((i * 131u + seed * 7u + (i >> 8) + (i >> 16) * 3u) ^ (seed >> 3));
}

/** @p len bytes of pattern @p seed from its byte @p pat on. */
void sw_fill(uint8_t *p, uint64_t len, uint32_t seed, uint64_t pat);
/** First byte of @p p differing from the pattern, or -1. */
int64_t sw_mismatch(const uint8_t *p, uint64_t len, uint32_t seed, uint64_t pat);

/**
 * Open @p dev (ibv_get_device_list's entry), register a buffer of @p len
 * bytes and create the QPs in INIT. 0 or -errno.
 */
int sw_end_open(struct sw_end *e, struct ibv_device *dev, size_t len);
void sw_end_info(const struct sw_end *e, struct sw_info *info);
/** Connect QP p->kind: RESET, INIT, RTR, RTS (UD: an AH to p->dgid). 0 or -errno. */
int sw_end_connect(struct sw_end *e, const struct sw_path *p);
/** Run one command. */
void sw_serve(struct sw_end *e, const struct sw_cmd *c, struct sw_reply *r);
/** Serve commands arriving on @p fd until SW_EXIT or a closed socket. */
int sw_serve_fd(struct sw_end *e, int fd);

#define SW_CHAIN_MAX 4

/**
 * Post @p wr on QP @p k with @p chain signaled SENDs of 16 bytes behind it (ids
 * following its own; on RC fenced), all in one ibv_post_send(). 0 or -errno.
 */
int sw_post_chain(struct sw_end *e, enum sw_kind k, struct ibv_send_wr *wr, uint32_t chain);

/** Wait (up to @p seconds) for one completion on @p cq. 0, -EAGAIN (none) or -EIO. */
int sw_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, unsigned int seconds);

/**
 * No leak: wait (liveness bound) until the pool of port @p port holds what it
 * held before the first packet. Returns the mbufs still missing (0: none).
 */
int64_t sw_pool_missing(const char *port);

#endif /* DROCE_SWEEP_END_H */
