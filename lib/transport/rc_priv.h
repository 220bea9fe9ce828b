/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC/UC transport state of a QP, private to lib/transport, and the
 * declarations shared by rc_qp.c, rc_pkt.c, rc_req.c, rc_resp.c and rc_comp.c.
 */
#ifndef DROCE_RC_PRIV_H
#define DROCE_RC_PRIV_H

#include "droce_wire_timer.h"
#include "transport_priv.h"

/** Packets between two AckReq bits inside a long message. */
#define DROCE_RC_ACKREQ_EVERY 64
/** PSNs a message may take: a quarter of the PSN space keeps every comparison sound. */
#define DROCE_RC_MSG_PKTS_MAX (1u << 22)
/**
 * Responder resources kept at most (max_dest_rd_atomic is clamped to it): as many as the
 * device advertises in max_qp_rd_atom (DROCE_MAX_RD_ATOMIC in lib/verbs), or a peer allowed
 * that many READ/atomics in flight overwrites responses not yet sent or still replayable.
 */
#define DROCE_RC_RES_MAX 128
/** Timer ids of a QP. */
#define DROCE_RC_TIMER_RETRY 1
#define DROCE_RC_TIMER_RNR   2

/** A send WQE in flight: the requester's copy and its progress. */
struct rc_wqe {
	const struct droce_send_wqe *hdr; /**< the copy (in droce_rc.copies) */
	uint32_t first_psn;
	uint32_t npkts;      /**< PSNs it takes (0: local operation or refused) */
	uint32_t acked_pkts; /**< packets done: READ response packets placed, or SEND/WRITE
			       packets a mid-message ACK covered (an ACK acknowledges every
			       PSN up to its own: coalesced ACKs, IBTA 9.7.5.1) */
	uint32_t nak_psn;    /**< READ: PSN last re-requested (one implied NAK per gap) */
	uint8_t status;      /**< enum ibv_wc_status when failed */
	bool failed;         /**< completes with status when it reaches the head */
	bool done;           /**< finished: completes when it reaches the head */
	bool issued;         /**< READ/atomic counted in rd_out */
	bool sent;           /**< a packet of it went out (FENCE applies before that only) */
	bool nak_once;       /**< nak_psn is valid */
	bool zc_waited;      /**< its completion waited for its frames (counted once) */
};

/** A responder resource: a READ or atomic kept for its response and replays. */
struct rc_res {
	uint32_t kind; /**< 0 free, DROCE_OPM_READ or DROCE_OPM_ATOMIC */
	bool pending;  /**< response packets left to send */
	bool replay;   /**< they answer a duplicate request (duplicate()) */
	uint32_t first_psn, last_psn;
	uint32_t next_psn; /**< READ: next response packet */
	uint32_t msn;
	uint32_t len;
	uint32_t rkey; /**< READ: source key, checked again for every response packet */
	uint64_t va;   /**< READ: source address */
	uint64_t orig; /**< atomic: the original value */
};

struct droce_rc {
	const struct droce_transport_env *env; /**< of the last call, for timer callbacks */
	struct droce_tqp *q;
	/* requester: shadow of in-flight WQEs, free-running indices */
	struct rc_wqe *wqe;
	uint8_t *copies;
	uint32_t size, mask, slot_size;
	/* zero copy: segments in flight per shadow slot (NULL: no memory, copies only) */
	struct droce_zc *zc;
	uint32_t comp_idx; /**< oldest not completed (the ring's consumer index) */
	uint32_t req_idx;  /**< next WQE to copy from the ring */
	uint32_t cur;      /**< WQE the requester sends from */
	uint32_t cur_pkt;  /**< packet of cur to send next */
	uint32_t una;      /**< oldest PSN not acknowledged */
	uint32_t sent_hi;  /**< highest PSN sent + 1 */
	uint32_t rd_out;   /**< READ/atomics issued and not completed */
	uint8_t retry_left, rnr_left;
	bool rnr_wait; /**< sending paused until the RNR timer fires */
	struct droce_timer retry_timer, rnr_timer;
	/* responder */
	bool in_msg;       /**< inside a multi-packet message */
	bool nak_seq_sent; /**< one NAK per sequence error */
	bool have_rwqe;    /**< rwqe holds a receive WQE taken for the message */
	uint32_t msg_op;   /**< DROCE_OPM_SEND or DROCE_OPM_WRITE of the current message */
	uint32_t msg_off;  /**< bytes of the message placed */
	/*
	 * WRITE target as the RETH gave it: the key is checked again for every packet, since
	 * the MR may be deregistered or invalidated between two packets and a host pointer
	 * is valid only within the engine pass that looked it up (doc/memory.md).
	 */
	uint64_t wr_va;
	uint32_t wr_rkey;
	uint32_t wr_len; /**< WRITE DMA length */
	uint32_t msn;
	bool ack_pending;
	uint32_t ack_psn;
	struct rc_res res[DROCE_RC_RES_MAX];
	uint32_t res_next; /**< the slot the next READ/atomic takes */
	union {
		struct droce_recv_wqe hdr;
		uint8_t bytes[DROCE_TQP_SLOT_MAX];
	} rwqe;
};

/* PSN arithmetic modulo 2^24: <0, 0, >0 as a is before, at or after b. */
static inline int32_t rc_psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static inline uint32_t rc_psn_add(uint32_t a, uint32_t n)
{
	return (a + n) & DROCE_PSN_MASK;
}

static inline uint32_t rc_pmtu(const struct droce_tqp *q)
{
	return 128u << q->path_mtu;
}

static inline struct rc_wqe *rc_wqe_at(struct droce_rc *rc, uint32_t idx)
{
	return &rc->wqe[idx & rc->mask];
}

/* rc_qp.c */
int droce_rc_init(struct droce_tqp *q);
void droce_rc_fini(struct droce_tqp *q);
void droce_rc_reset(struct droce_tqp *q, bool responder);
void droce_rc_to_error(const struct droce_transport_env *env, struct droce_tqp *q,
		       enum ibv_event_type event);
/** A UC send error: the send queue stops (SQE), the receive side goes on. */
void droce_uc_to_sqe(const struct droce_transport_env *env, struct droce_tqp *q);
uint64_t droce_rc_now(const struct droce_transport_env *env);
uint64_t droce_rc_ticks(const struct droce_transport_env *env, uint64_t ns);

/* rc_pkt.c */
int droce_rc_addr(const struct droce_transport_env *env, struct droce_tqp *q, struct droce_addr *a);
struct rte_mbuf *droce_rc_frame(const struct droce_transport_env *env, const struct droce_addr *a,
				const struct droce_hdr_fields *f, uint32_t len, uint8_t **payload);
void droce_rc_frame_seal(struct rte_mbuf *m, const struct droce_addr *a);
int droce_rc_send_ack(const struct droce_transport_env *env, struct droce_tqp *q, uint8_t syndrome,
		      uint32_t psn);

/* rc_req.c */
int droce_rc_req_send(const struct droce_transport_env *env, struct droce_tqp *q, int budget);
void droce_rc_go_back(struct droce_tqp *q, uint32_t psn);
bool droce_rc_sq_drained(const struct droce_tqp *q);

/* rc_resp.c */
int droce_rc_resp_recv(const struct droce_transport_env *env, struct droce_tqp *q,
		       struct rte_mbuf *m, const struct droce_pkt *pkt);
int droce_rc_resp_send(const struct droce_transport_env *env, struct droce_tqp *q, int budget);

/* rc_comp.c */
int droce_rc_comp_recv(const struct droce_transport_env *env, struct droce_tqp *q,
		       struct rte_mbuf *m, const struct droce_pkt *pkt);
void droce_rc_comp_advance(const struct droce_transport_env *env, struct droce_tqp *q);
void droce_rc_timer_update(const struct droce_transport_env *env, struct droce_tqp *q);
void droce_rc_timer_fired(struct droce_tqp *q, uint32_t id);

#endif /* DROCE_RC_PRIV_H */
