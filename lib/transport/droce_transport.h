/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The InfiniBand transport of RoCEv2 as one engine lcore runs it: transport
 * QPs (struct droce_tqp), their rings, and the packet paths in and out. The
 * transport never includes rte_ethdev.h: packets come in as parsed mbufs and
 * leave through the environment's tx callback, so it is tested without a port.
 *
 * Threading: a tqp and everything below are touched by the lcore that owns
 * the QP only; a CQ or SRQ that QPs of several lcores use is marked shared and
 * taken under its lock (struct droce_shared_lock). Control (create, modify,
 * destroy) reaches the lcore as commands (lib/engine).
 *
 * Errors: 0 / -errno; per-WQE failures become completion statuses.
 */
#ifndef DROCE_TRANSPORT_H
#define DROCE_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_spinlock.h>

#include "droce_mr.h"
#include "droce_ring.h"
#include "droce_timer.h"
#include "droce_wire_pkt.h"
#include "droce_wqe.h"

#ifdef __cplusplus
extern "C" {
#endif

struct droce_tqp;

/**
 * The lock of a queue that QPs on several lcores may use (a CQ they complete into,
 * an SRQ they take from). @c shared is set by the engine's control path while every
 * lcore is parked, so an lcore sees it change only between two loop passes; it is
 * false for a queue one lcore uses, and then the lock is never touched.
 */
struct droce_shared_lock {
	bool shared;
	rte_spinlock_t lock;
};

static inline void droce_shared_lock_take(struct droce_shared_lock *l)
{
	if (l != NULL && unlikely(l->shared))
		rte_spinlock_lock(&l->lock);
}

static inline void droce_shared_lock_give(struct droce_shared_lock *l)
{
	if (l != NULL && unlikely(l->shared))
		rte_spinlock_unlock(&l->lock);
}

/** A completion queue as the engine produces into it. */
struct droce_tcq {
	struct droce_shared_lock lock; /**< QPs of several lcores complete into it */
	struct droce_ring_prod prod;
	void *user;       /**< handed back to env->cq_notify (the verbs CQ) */
	uint64_t cqes;    /**< CQEs written */
	uint64_t overrun; /**< CQEs lost because the ring was full (a CQ error) */
	bool errored;     /**< overrun once: IBV_EVENT_CQ_ERR was raised */
};

/** Address handle as the engine keeps it (ibv_create_ah registered it). */
struct droce_tah {
	uint32_t pd;
	bool valid;
	struct ibv_ah_attr attr;
};

/** Source addresses of a port, by GID index (what sgid_index selects). */
struct droce_tport_addr {
	uint8_t mac[6];
	uint32_t mtu_bytes; /**< active path MTU in payload bytes (256..4096) */
	unsigned int gid_count;
	union ibv_gid gid[17]; /**< same table as the verbs device's */
};

/** Everything outside the transport it calls into. */
struct droce_transport_env {
	struct rte_mempool *pool;    /**< for packets the transport builds */
	struct droce_mr_table *keys; /**< memory keys (lib/mem) */
	const struct droce_tport_addr *port;
	/** hand a built frame to the port (queued, sent at the loop's TX flush) */
	void (*tx)(void *arg, struct rte_mbuf *m);
	/**
	 * MAC of an IP (IPv4-mapped for IPv4): 0; -EAGAIN while it is being resolved;
	 * -EHOSTUNREACH when resolution just failed (nobody answers: what is sent is lost)
	 */
	int (*neigh)(void *arg, const uint8_t ip[16], uint8_t mac[6]);
	/**
	 * Optional: take a built frame whose destination MAC is not known yet; the port sends
	 * it once @p ip resolves, or drops it (counted) when resolution fails. As an IP stack
	 * queues datagrams on an unresolved neighbour, so a UD send queue does not wait on one
	 * while there is room. 0, or -ENOBUFS when the queue is full (the frame not taken:
	 * the sender waits, as for a full link).
	 */
	int (*tx_unresolved)(void *arg, struct rte_mbuf *m, const uint8_t ip[16]);
	/** after CQEs were written: let the verbs layer signal an armed channel */
	void (*cq_notify)(void *arg, void *cq_user, bool solicited);
	/** the QP moved to SQE/ERR by itself: tell the verbs layer (and raise @p event) */
	void (*qp_error)(void *arg, void *qp_user, enum ibv_qp_state state,
			 enum ibv_event_type event);
	/**
	 * The QP in SQD has drained its send queue (every message it had begun is sent and,
	 * on RC, acknowledged): tell the verbs layer, raising IBV_EVENT_SQ_DRAINED when
	 * @p notify (the modify to SQD asked for it). Optional (NULL: nobody is told).
	 */
	void (*sq_drained)(void *arg, void *qp_user, bool notify);
	/** a CQ overran (its first time): raise IBV_EVENT_CQ_ERR. Optional. */
	void (*cq_error)(void *arg, void *cq_user);
	/** an SRQ WQE was taken: check the SRQ limit with the WQEs left */
	void (*srq_limit)(void *arg, void *srq_user, uint32_t left);
	/** address handles by id (UD work requests carry the id) */
	const struct droce_tah *(*ah)(void *arg, uint32_t id);
	void *arg;
	/**
	 * The lcore's timer wheel (RC: retransmission and RNR timers). Its now, as the last
	 * droce_transport_timers_run() left it, is the transport's clock. Needed by RC.
	 */
	struct droce_timer_wheel *wheel;
	uint64_t tick_hz; /**< wheel ticks per second */
	/**
	 * RC send window: PSNs an RC requester may have sent and not yet had
	 * acknowledged (0: no limit). A receiver behind a queue droce cannot see (a
	 * kernel tap, a slow VM) then loses at most a window, not a whole burst, to
	 * go-back-N. At least DROCE_RC_WINDOW_MIN when set.
	 */
	uint32_t send_window;
	/**
	 * RC zero copy: request and READ response packets carrying at least this many payload
	 * bytes take them from the MR by reference (external-buffer mbufs behind a header
	 * mbuf) instead of copying them; 0: always copied. Only for ports whose device copies
	 * frames in software and that inject no faults: droce_zc_min_for_port().
	 */
	uint32_t zero_copy_min;
};

/** Payload bytes per packet from which zero copy is used once asked for (zero_copy=auto). */
#define DROCE_ZC_MIN_DEFAULT 2048u

/**
 * The environment's zero_copy_min for a port: 0 (off) unless its driver copies frames in
 * software (@p copies_in_software: lib/port's droce_port_driver_copies_in_software()) and
 * the port injects no faults (@p faults; the injector writes into frames); else
 * @p conf_min, where 0 means DROCE_ZC_MIN_DEFAULT and UINT32_MAX off.
 */
uint32_t droce_zc_min_for_port(bool copies_in_software, bool faults, uint32_t conf_min);

/** The smallest RC send window: two AckReq periods, so an ACK is always asked for inside it. */
#define DROCE_RC_WINDOW_MIN 128u

/**
 * Per-QP counters: plain 64-bit increments by the lcore that owns the QP, read
 * through the engine's control path (include/droce_counters.h). Each field is
 * named as the counter it backs (doc/counters.md): mlx5's name where mlx5 counts
 * the same event, else Linux Soft-RoCE's, else droce's own.
 */
struct droce_tqp_stats {
	/* traffic */
	uint64_t sent_pkts;          /**< frames sent: requests, responses, ACKs and NAKs */
	uint64_t sent_bytes;         /**< their bytes, Ethernet header to ICRC */
	uint64_t rcvd_pkts;          /**< frames taken by the QP in a receiving state */
	uint64_t rcvd_bytes;         /**< their bytes, Ethernet header to ICRC */
	uint64_t rdma_sends;         /**< SEND WQEs completed successfully */
	uint64_t rdma_recvs;         /**< receive WQEs completed successfully */
	uint64_t rx_write_requests;  /**< RDMA WRITE messages started, in sequence */
	uint64_t rx_read_requests;   /**< RDMA READ requests, in sequence */
	uint64_t rx_atomic_requests; /**< atomic requests, in sequence */
	/* responder */
	uint64_t duplicate_request;         /**< requests with a PSN already executed */
	uint64_t out_of_sequence;           /**< PSN gaps (RC: one NAK sequence error each) */
	uint64_t send_rnr_err;              /**< RNR NAKs sent: no receive WQE */
	uint64_t out_of_buffer;             /**< UD/UC messages dropped: no receive WQE */
	uint64_t resp_local_length_error;   /**< messages longer than the receive buffers */
	uint64_t resp_remote_access_errors; /**< requests refused: access (NAK remote access) */
	uint64_t resp_invalid_request;      /**< requests refused: NAK invalid request */
	uint64_t resp_remote_op_errors;     /**< requests refused: NAK remote operational */
	uint64_t resp_cqe_error;            /**< receive completions with an error, not flush */
	uint64_t resp_cqe_flush_error;      /**< receive completions flushed */
	uint64_t uc_msg_drop;     /**< UC packets dropped: bad opcode sequence or length */
	uint64_t bad_state_drop;  /**< packets for a QP in RESET, INIT or ERR */
	uint64_t pkey_violations; /**< packets dropped for a P_Key mismatch */
	uint64_t qkey_violations; /**< UD packets dropped for a wrong Q_Key */
	/* requester and completer */
	uint64_t packet_seq_err;                 /**< NAK PSN sequence error received */
	uint64_t rnr_nak_retry_err;              /**< RNR NAKs received and retried */
	uint64_t local_ack_timeout_err;          /**< retransmission timer expiries retried */
	uint64_t implied_nak_seq_err;            /**< READ/atomic responses missing, re-requested */
	uint64_t completer_retry_err;            /**< go-back-N restarts (any cause) */
	uint64_t req_transport_retries_exceeded; /**< retry_cnt exhausted */
	uint64_t req_rnr_retries_exceeded;       /**< rnr_retry exhausted */
	uint64_t req_remote_access_errors;       /**< NAK remote access error received */
	uint64_t req_remote_invalid_request;     /**< NAK invalid request received */
	uint64_t req_remote_op_errors;           /**< NAK remote operational error received */
	uint64_t req_cqe_error;                  /**< send completions with an error, not flush */
	uint64_t req_cqe_flush_error;            /**< send completions flushed */
	uint64_t rcvd_resp_drop; /**< responses dropped: stale, duplicate, malformed */
	uint64_t neigh_miss;     /**< sends that waited for their destination's MAC */
	uint64_t neigh_drop;     /**< UD sends dropped: the address never resolved */
	uint64_t window_waits;   /**< RC send passes held back by the send window */
	/* zero copy (RC) */
	uint64_t zc_frames; /**< frames sent with their payload by reference to the MR */
	uint64_t zc_copied; /**< frames copied although zero copy was on: short, inline, split */
	uint64_t zc_waits;  /**< WQEs whose completion waited for their frames to be freed */
};

struct droce_rc;

/** What an engine lcore knows of a QP: its rings and the attributes modify gave it. */
struct droce_tqp {
	uint32_t qpn;
	enum ibv_qp_type type;
	enum ibv_qp_state state; /**< as modify set it, or SQE/ERR the transport moved to */
	uint32_t pd;
	bool sq_sig_all;
	struct droce_ring_cons sq; /**< send ring (consumer) */
	struct droce_ring_cons rq; /**< receive ring, when not on an SRQ */
	void *sq_mem, *rq_mem;     /**< the rings' memory, re-initialised at RESET */
	size_t sq_mem_len, rq_mem_len;
	struct droce_ring_cons *srq;        /**< the SRQ's ring, shared by its QPs */
	struct droce_shared_lock *srq_lock; /**< its lock (QPs of several lcores) */
	void *srq_user;
	struct droce_tcq *scq, *rcq;
	void *user; /**< handed back to env->qp_error (the verbs QP) */
	/* attributes */
	uint32_t qkey;
	uint16_t pkey;
	uint32_t dest_qpn;
	enum ibv_mtu path_mtu;
	uint32_t sq_psn;            /**< next PSN to send */
	uint32_t rq_psn;            /**< next PSN expected */
	uint32_t access;            /**< remote access flags granted */
	struct ibv_ah_attr av;      /**< path to the peer (RC/UC) */
	uint8_t timeout;            /**< local ACK timeout code (RC) */
	uint8_t retry_cnt;          /**< retries after timeouts / sequence NAKs (RC) */
	uint8_t rnr_retry;          /**< retries after RNR NAKs, 7 = infinite (RC) */
	uint8_t min_rnr_timer;      /**< RNR NAK timer code the responder sends (RC) */
	uint8_t max_rd_atomic;      /**< READ/atomics outstanding as requester (RC) */
	uint8_t max_dest_rd_atomic; /**< responder resources (RC) */
	struct droce_rc *rc;        /**< RC/UC transport state (rc_priv.h) */
	/* SQD: the send queue drains, then the SQ_DRAINED event */
	bool sqd_notify;  /**< raise the event once drained (en_sqd_async_notify) */
	bool sqd_drained; /**< reported since the QP entered SQD */
	/* a send waiting for its destination's MAC (UD: the WQE at the head; RC: any packet) */
	uint32_t neigh_tries;
	uint32_t neigh_since; /**< when the wait began (us) */
	struct droce_tqp_stats stats;
};

/** Attach a tqp to its rings (views from lib/verbs); RC/UC allocate their state. 0 or
 * -EINVAL/-EPROTO/-ENOMEM. */
int droce_tqp_init(struct droce_tqp *q, uint32_t qpn, enum ibv_qp_type type, uint32_t pd,
		   void *sq_ring, size_t sq_len, void *rq_ring, size_t rq_len);

/** Release what droce_tqp_init() allocated and cancel the QP's timers. */
void droce_tqp_fini(const struct droce_transport_env *env, struct droce_tqp *q);

/**
 * Apply a modify: the new state and the attributes named in @p mask. @p env is the QP's
 * environment (its timers are cancelled on the wheel it names, a move to Error completes
 * through it); NULL only for a QP that never ran.
 */
void droce_tqp_modify(const struct droce_transport_env *env, struct droce_tqp *q,
		      const struct ibv_qp_attr *attr, int mask, enum ibv_qp_state state);

/** The completion opcode of a send WQE's operation (enum droce_wqe_op). */
enum ibv_wc_opcode droce_wqe_wc_opcode(uint8_t op);

/** Write one CQE; false when the ring is full (counted as an overrun). */
bool droce_tcq_post(struct droce_tcq *cq, const struct droce_cqe *cqe);

/**
 * Send side of a QP: take published send WQEs and transmit (or, in SQE/ERR,
 * flush them). At most @p budget WQEs. Returns the WQEs finished.
 */
int droce_tqp_send(const struct droce_transport_env *env, struct droce_tqp *q, uint32_t now_us,
		   int budget);

/**
 * A parsed packet for this QP (pkt->qpn == q->qpn). Consumes @p m.
 * Returns 0, or -errno when the packet was dropped (counted).
 */
int droce_tqp_recv(const struct droce_transport_env *env, struct droce_tqp *q, struct rte_mbuf *m,
		   const struct droce_pkt *pkt);

/**
 * The address template of a packet from QP @p qpn to QP @p dqpn along @p grh (a QP's primary
 * path, a UD address handle, the engine's GSI): source GID by index in env->port, IPv4 when both
 * GIDs are IPv4-mapped, traffic class, hop limit (0: 64), flow label, the UDP source port of the
 * QP pair (annex A17), and the destination's MAC through env->neigh.
 * @return 0; -EAGAIN (the MAC is being resolved) or -EHOSTUNREACH (resolution just failed):
 *   the rest of @p a is valid; -EINVAL (no such GID index, or GIDs of two families).
 */
int droce_path_addr(const struct droce_transport_env *env, const struct ibv_global_route *grh,
		    uint32_t qpn, uint32_t dqpn, struct droce_addr *a);

/**
 * Advance the lcore's timer wheel @p w (the one its environments name) to
 * @p now (ticks) and run the RC timers due: at most @p max. Returns how many
 * fired, or -EINVAL for a NULL wheel.
 */
int droce_transport_timers_run(struct droce_timer_wheel *w, uint64_t now, unsigned int max);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_TRANSPORT_H */
