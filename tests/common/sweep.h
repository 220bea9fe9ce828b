/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport sweep, driving side: two droce ends joined by a link, this
 * process's end (e0) sending, the peer end answering commands (sweep_end.h),
 * either in this process (the other device of a net_ring link) or in another
 * process over net_memif (tests/integration/sweep_peer.c). Every operation of
 * every QP type runs at the sizes a test names, with its completion, its
 * opcode, its length and every byte checked, and the bytes around it
 * untouched.
 */
#ifndef DROCE_SWEEP_H
#define DROCE_SWEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sweep_end.h"

/* GID indexes: every device has the link-local GID, one IPv4 and one IPv6 address */
#define SW_GID_LINK_LOCAL 0
#define SW_GID_IPV4       1
#define SW_GID_IPV6       2

struct sw_run {
	struct sw_end e0;      /**< this process's end */
	struct sw_end e1;      /**< the peer end when it runs in this process */
	bool remote;           /**< the peer runs in another process */
	bool loopback;         /**< the peer is another context of e0's device */
	bool peer_rtr;         /**< the peer's QPs stay in RTR: no case that needs its send queue */
	bool gone;             /**< ... which exited (sw_peer_exit()) */
	int fd;                /**< its command socket */
	pid_t pid;             /**< its process */
	char dir[64];          /**< the memif socket's folder */
	struct sw_info i0, i1; /**< what both ends told */
	uint8_t sgid;          /**< GID index both ends send from */
	enum ibv_mtu mtu;      /**< path MTU of RC and UC */
	uint32_t pmtu;         /**< the same in bytes */
	uint64_t region;       /**< bytes of each buffer region */
	uint32_t seq;          /**< seeds and work request ids */
	uint8_t timeout;       /**< RC local ACK timeout */
	uint32_t rkey;         /**< a key one step of a case leaves for the next */
	uint32_t send_flags;   /**< extra flags of the sweep's SENDs and WRITEs (IBV_SEND_INLINE) */
	char what[160];        /**< the case running, for messages */
};

/* regions of both ends' buffers */
#define SW_SRC(r)  ((uint64_t)0)
#define SW_DST(r)  ((r)->region)
#define SW_RECV(r) (2 * (r)->region)
#define SW_ATOM(r) (3 * (r)->region)
#define SW_WIN(r)  (3 * (r)->region + 4096)
#define SW_WIN_LEN 65536u

/** Ethernet MTU whose largest IB MTU is @p mtu, as small as it may be (576 at least). */
uint32_t sw_eth_mtu(enum ibv_mtu mtu);

/**
 * Two devices in this process joined by a ring link, Ethernet MTU @p eth_mtu,
 * both sending through the fault injector @p fault (a fault= value, NULL: none),
 * e0 on droce0, the peer on droce1; buffers for messages up to @p max_msg bytes.
 */
void sw_ring_setup(struct sw_run *r, uint32_t eth_mtu, const char *fault, uint64_t max_msg);

/** Both ends on droce0 (two contexts of one device): the engine loops the frames back. */
void sw_loopback_setup(struct sw_run *r, uint32_t eth_mtu, uint64_t max_msg);

/**
 * The same across two processes over memif (rings of 2^@p rsize slots): the peer
 * is tests/integration/sweep_peer.
 */
void sw_memif_setup(struct sw_run *r, uint32_t eth_mtu, uint64_t max_msg, unsigned int rsize);

extern const char *const sw_kind_name[SW_KINDS];

/** Send the peer a command; the reply. Asserts the command was carried. */
struct sw_reply sw_peer(struct sw_run *r, struct sw_cmd c);
/** Run a command on e0. */
struct sw_reply sw_local(struct sw_run *r, struct sw_cmd c);
/** Run a command on the peer or on e0. */
struct sw_reply sw_on(struct sw_run *r, bool peer, struct sw_cmd c);

/** The next completion of QP @p k (its receive CQ or send CQ) at either end: @p id. */
struct ibv_wc sw_wait(struct sw_run *r, bool peer, enum sw_kind k, bool recv, uint64_t id);

/** One SEND_WITH_IMM of @p len bytes from e0 to the peer, checked like the sweep's. */
void sw_send_once(struct sw_run *r, enum sw_kind k, uint64_t len);

/** The attributes both ends use by default for QP @p k, toward the other end. */
struct sw_path sw_path_of(const struct sw_run *r, enum sw_kind k, bool peer);

/** Connect QP @p k of both ends to each other with sw_path_of(), as adjusted by @p tune. */
void sw_connect(struct sw_run *r, enum sw_kind k, void (*tune)(struct sw_path *p, bool peer));

/** Every operation of QP type @p k at every size of @p sizes (n of them). */
void sw_sweep(struct sw_run *r, enum sw_kind k, const uint64_t *sizes, unsigned int n);

/** Wait until every frame either port sent was received and processed (liveness bound). */
void sw_settle(struct sw_run *r);

/** One message of a burst. */
struct sw_burst_msg {
	enum ibv_wr_opcode op;
	uint64_t len;
	uint32_t seed;
	uint32_t recv; /**< the receive it takes (SEND, WRITE_WITH_IMM), or UINT32_MAX */
	bool signaled;
};

#define SW_BURST_MAX 256 /* and no more than the 8-byte atomics of the ATOM region (512) */

/** Requests posted at once, message i in slot i of each region. */
struct sw_burst {
	struct sw_burst_msg m[SW_BURST_MAX];
	uint32_t n;
	uint64_t slot;
};

/**
 * The next burst of sw_burst()'s rotation from @p cursor (0 at first): prepared and
 * posted, not waited for; b->n 0 once the rotation is done.
 */
void sw_burst_post(struct sw_run *r, enum sw_kind k, struct sw_burst *b, const uint64_t *sizes,
		   unsigned int nsizes, uint64_t max_len, uint32_t *cursor);
/** Its completions in order and every byte where it belongs. */
void sw_burst_check(struct sw_run *r, enum sw_kind k, struct sw_burst *b);

/**
 * Every operation of QP type @p k at every size of @p sizes up to @p max_len, in
 * bursts posted by one ibv_post_send() each (as many as the regions hold, every
 * fourth RC request unsignaled): completions in order, every byte placed.
 */
void sw_burst(struct sw_run *r, enum sw_kind k, const uint64_t *sizes, unsigned int nsizes,
	      uint64_t max_len);

/** Nothing more on either end's CQs of @p k, both QPs in RTS. */
void sw_quiet(struct sw_run *r, enum sw_kind k);

/** The QP state of @p k at e0 (peer false) or at the peer. */
enum ibv_qp_state sw_state(struct sw_run *r, enum sw_kind k, bool peer);

/** Destroy every QP, check both ends' pools are back to their start, stop the peer. */
void sw_finish(struct sw_run *r);
/** Stop the peer process (memif runs). */
void sw_peer_exit(struct sw_run *r);
/** What a failed memif run leaves: the peer process (told by its socket closing), the folder. */
void sw_cleanup(struct sw_run *r);

/** The status cases (sweep_status.c): provoke the one named, check both ends. */
void sw_status(struct sw_run *r, const char *name);
/** The fault= value a status case needs on both ports, or NULL. */
const char *sw_status_fault(const char *name);

/** Sizes 0, 1, PMTU-1, PMTU, PMTU+1, 64 PMTU + 1 (an AckReq boundary) and @p big. */
unsigned int sw_sizes(const struct sw_run *r, uint64_t big, uint64_t *out);

#endif /* DROCE_SWEEP_H */
