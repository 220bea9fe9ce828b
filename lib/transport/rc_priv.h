/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC/UC transport state of a QP, private to lib/transport, and the declarations shared by
 * the QP services (tqp_svc.c, rc_qp.c, rc_pkt.c) and the three roles below the receive
 * dispatcher (tqp.c): the requester (rc_req.c), the completer (rc_comp.c) and the responder
 * (rc_resp.c). Each role is a state machine (its enum, name table and dispatch loop in its
 * file; doc/transport.md draws them) and writes its own part of struct droce_rc only.
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

/*
 * What UC does not do that RC does (IBTA 9.8, against 9.7 for RC), in one place: the roles
 * test these flags, never the QP type.
 */
struct rc_service {
	enum droce_qp_service svc; /**< for the opcode tables (lib/wire) */
	uint32_t opm;              /**< DROCE_OPM_RC or DROCE_OPM_UC: the opcodes it takes */
	bool acked;     /**< responses exist: ACK/NAK (9.7.5.1), READ and atomics (9.4.3, 9.4.5) */
	bool retried;   /**< go-back-N, the retransmission and RNR timers, the send window */
	bool go_back;   /**< a PSN ahead is NAKed (class B) and one behind is a duplicate to
			     re-ACK (9.7.5.2); UC drops the message in progress instead (9.8) */
	bool naks;      /**< a request it cannot take is NAKed, the QP to Error (class C);
			     UC drops the message and goes on (class D, 9.9.3) */
	bool zero_copy; /**< request payloads by reference (its frames may be resent) */
	enum ibv_qp_state send_error_state; /**< RC: ERR (9.9.2); UC: SQE (10.3.1, 9.8) */
};

extern const struct rc_service droce_rc_services[2];

static inline bool op_is_rd_atomic(uint8_t op)
{
	return op == DROCE_WQE_READ || op == DROCE_WQE_CMP_SWAP || op == DROCE_WQE_FETCH_ADD;
}

/* ------------------------------------------------------------------ requester */

/** Why the requester stopped its last pass (for traces and tests). */
enum rc_req_wait {
	RC_REQ_WAIT_NONE,   /**< nothing left to send */
	RC_REQ_WAIT_BUDGET, /**< the pass's budget is spent */
	RC_REQ_WAIT_STATE,  /**< the QP is not in RTS or SQD */
	RC_REQ_WAIT_RNR,    /**< an RNR NAK's timer runs (9.7.5.2) */
	RC_REQ_WAIT_FENCE,  /**< a fenced WQE waits for READ/atomics before it (IBV_SEND_FENCE) */
	RC_REQ_WAIT_RD_ATOMIC, /**< max_rd_atomic READ/atomics outstanding (9.4.3, 9.4.5) */
	RC_REQ_WAIT_WINDOW,    /**< the send window is full (doc/transport.md) */
	RC_REQ_WAIT_SQD,       /**< SQD: nothing new starts (10.3.1) */
	RC_REQ_WAIT_RESOURCE,  /**< no mbuf, or the peer's MAC is being resolved */
	RC_REQ_WAIT_FAILED,    /**< the WQE at cur failed: the completer finishes the queue */
	RC_REQ_WAIT_COUNT
};

/** A send WQE in flight: the requester's copy and its progress. */
struct rc_wqe {
	/* written by the requester */
	const struct droce_send_wqe *hdr; /**< the copy (in droce_rc.req.copies) */
	uint32_t first_psn;
	uint32_t npkts;     /**< PSNs it takes (0: local operation or refused) */
	uint8_t req_status; /**< enum ibv_wc_status when the requester failed it */
	bool req_failed;    /**< failed at check, local operation or build */
	bool req_done;      /**< finished by the requester: local operation, or UC sent */
	bool issued;        /**< READ/atomic counted in req.rd_issued */
	bool sent;          /**< a packet of it went out (FENCE and SQD apply before that only) */
	/* written by the completer */
	uint8_t comp_status; /**< enum ibv_wc_status when the completer failed it */
	bool comp_failed;    /**< failed by a NAK, a retry count, a local write */
	bool comp_done;      /**< acknowledged, or its READ/atomic response placed */
	bool retired;        /**< READ/atomic counted back in comp.rd_retired */
	bool nak_once;       /**< nak_psn is valid */
	bool zc_waited;      /**< its completion waited for its frames (counted once) */
	uint32_t acked_pkts; /**< packets done: READ response packets placed, or SEND/WRITE
			       packets a mid-message ACK covered (an ACK acknowledges every
			       PSN up to its own: coalesced ACKs, IBTA 9.7.5.1.1) */
	uint32_t nak_psn;    /**< READ: PSN last re-requested (one implied NAK per gap) */
};

static inline bool rc_wqe_done(const struct rc_wqe *w)
{
	return w->req_done || w->comp_done;
}

static inline bool rc_wqe_failed(const struct rc_wqe *w)
{
	return w->req_failed || w->comp_failed;
}

/* The completer's status wins: it comes after anything the requester found. */
static inline uint8_t rc_wqe_status(const struct rc_wqe *w)
{
	return w->comp_failed ? w->comp_status : w->req_status;
}

/** Requester state: written by rc_req.c (and by the life cycle, rc_qp.c). */
struct rc_requester {
	struct rc_wqe *wqe; /**< shadow of in-flight WQEs, free-running indices */
	uint8_t *copies;
	uint32_t size, mask, slot_size;
	/* zero copy: segments in flight per shadow slot (NULL: no memory, copies only) */
	struct droce_zc *zc;
	uint32_t req_idx;      /**< next WQE to copy from the ring */
	uint32_t cur;          /**< WQE the requester sends from */
	uint32_t cur_pkt;      /**< packet of cur to send next */
	uint32_t sent_hi;      /**< highest PSN sent + 1 */
	uint32_t rd_issued;    /**< READ/atomics issued (free-running; see rc_rd_out()) */
	uint32_t go_back_seen; /**< the completer's last go-back request acted on */
	enum rc_req_wait wait; /**< why the last pass stopped */
};

/* ------------------------------------------------------------------ completer */

/** Timer events the completer acts on at its next step (the callbacks have no env). */
#define RC_COMP_EV_TIMEOUT 1u /**< the retransmission timer expired */
#define RC_COMP_EV_RNR     2u /**< the RNR wait is over */

/** Completer state: written by rc_comp.c (and by the life cycle, rc_qp.c). */
struct rc_completer {
	uint32_t comp_idx;   /**< oldest not completed (the ring's consumer index) */
	uint32_t una;        /**< oldest PSN not acknowledged */
	uint32_t rd_retired; /**< READ/atomics finished (free-running) */
	uint8_t retry_left, rnr_left;
	bool rnr_wait;  /**< sending paused until the RNR timer fires (9.7.5.2) */
	uint8_t events; /**< RC_COMP_EV_* set by the timer callbacks */
	/* go-back-N request to the requester: resend from WQE go_back_idx, packet go_back_pkt */
	uint32_t go_back; /**< incremented with each request; the requester follows it */
	uint32_t go_back_idx, go_back_pkt;
	struct droce_timer retry_timer, rnr_timer;
};

/* ------------------------------------------------------------------ responder */

/** A responder resource: a READ or atomic kept for its response and replays (9.7.5.2). */
struct rc_res {
	uint32_t kind; /**< 0 free, DROCE_OPM_READ or DROCE_OPM_ATOMIC */
	bool pending;  /**< response packets left to send */
	bool replay;   /**< they answer a duplicate request */
	uint32_t first_psn, last_psn;
	uint32_t next_psn; /**< READ: next response packet */
	uint32_t msn;
	uint32_t len;
	uint32_t rkey; /**< READ: source key, checked again for every response packet */
	uint64_t va;   /**< READ: source address */
	uint64_t orig; /**< atomic: the original value */
};

/** Responder state: written by rc_resp.c (and by the life cycle, rc_qp.c). */
struct rc_responder {
	bool in_msg;       /**< inside a multi-packet message */
	bool nak_seq_sent; /**< one NAK per sequence error (9.7.5.2) */
	bool have_rwqe;    /**< rwqe holds a receive WQE taken for the message */
	bool ack_pending;
	uint8_t outcome;  /**< enum rc_resp_state: the last request's outcome (traces, tests) */
	uint32_t msg_op;  /**< DROCE_OPM_SEND or DROCE_OPM_WRITE of the current message */
	uint32_t msg_off; /**< bytes of the message placed */
	/*
	 * WRITE target as the RETH gave it: the key is checked again for every packet, since
	 * the MR may be deregistered or invalidated between two packets and a host pointer
	 * is valid only within the engine pass that looked it up (doc/memory.md).
	 */
	uint64_t wr_va;
	uint32_t wr_rkey;
	uint32_t wr_len; /**< WRITE DMA length */
	uint32_t msn;
	uint32_t ack_psn;
	uint32_t res_next; /**< the slot the next READ/atomic takes */
	struct rc_res res[DROCE_RC_RES_MAX];
	union {
		struct droce_recv_wqe hdr;
		uint8_t bytes[DROCE_TQP_SLOT_MAX];
	} rwqe;
};

struct droce_rc {
	struct droce_tqp *q;
	const struct rc_service *svc; /**< the row of droce_rc_services for the QP's type */
	struct rc_requester req;
	struct rc_completer comp;
	struct rc_responder resp;
};

/* What the QP's service does (the UC/RC table, rc_qp.c). */
static inline const struct rc_service *rc_svc(const struct droce_tqp *q)
{
	return q->rc->svc;
}

/* PSN arithmetic modulo 2^24 (IBTA 9.7.1): <0, 0, >0 as psn is before, at or after ref. */
static inline int32_t rc_psn_cmp(uint32_t psn, uint32_t ref)
{
	return (int32_t)((psn - ref) << 8) >> 8;
}

static inline uint32_t rc_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & DROCE_PSN_MASK;
}

static inline uint32_t rc_pmtu(const struct droce_tqp *q)
{
	return 128u << q->path_mtu;
}

static inline struct rc_wqe *rc_wqe_at(const struct droce_rc *rc, uint32_t idx)
{
	return &rc->req.wqe[idx & rc->req.mask];
}

/* READ/atomics issued and not finished: the requester counts up, the completer back. */
static inline uint32_t rc_rd_out(const struct droce_rc *rc)
{
	return rc->req.rd_issued - rc->comp.rd_retired;
}

/* rc_qp.c: life cycle */
int droce_rc_init(struct droce_tqp *q);
void droce_rc_fini(const struct droce_transport_env *env, struct droce_tqp *q);
void droce_rc_reset(const struct droce_transport_env *env, struct droce_tqp *q, bool responder);
/** The QP enters Error (any role's fatal error, or the application): shadow forgotten. */
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

/* rc_req.c: the requester */
enum rc_req_state {
	RC_REQ_GET_WQE,
	RC_REQ_CHECK_WQE,
	RC_REQ_LOCAL_OP,
	RC_REQ_SEND_PKT,
	RC_REQ_ADVANCE,
	RC_REQ_WAIT,
	RC_REQ_ERROR,
	RC_REQ_DONE,
	RC_REQ_STATE_COUNT
};
extern const char *const droce_rc_req_state_names[RC_REQ_STATE_COUNT];
extern const char *const droce_rc_req_wait_names[RC_REQ_WAIT_COUNT];
/** One send pass: at most @p budget packets. Returns the packets sent or -errno (QP to ERR). */
int droce_rc_req_send(const struct droce_transport_env *env, struct droce_tqp *q, int budget);
bool droce_rc_sq_drained(const struct droce_tqp *q);

/* rc_resp.c: the responder */
enum rc_resp_state {
	RC_RESP_CHECK_PSN,
	RC_RESP_CHECK_OP_SEQ,
	RC_RESP_CHECK_RESOURCE,
	RC_RESP_CHECK_ACCESS,
	RC_RESP_EXECUTE,
	RC_RESP_ACKNOWLEDGE,
	RC_RESP_DUPLICATE,
	RC_RESP_ERR_CLASS_A,
	RC_RESP_ERR_CLASS_B_PSN,
	RC_RESP_ERR_CLASS_B_RNR,
	RC_RESP_ERR_CLASS_C,
	RC_RESP_ERR_CLASS_D,
	RC_RESP_ERR_CLASS_E,
	RC_RESP_DONE,
	RC_RESP_STATE_COUNT
};
extern const char *const droce_rc_resp_state_names[RC_RESP_STATE_COUNT];
/** The last request's outcome: ACKNOWLEDGE, DUPLICATE or an ERR_CLASS_* state. */
enum rc_resp_state droce_rc_resp_last_outcome(const struct droce_tqp *q);
/** A request packet (decoded once by the dispatcher, @p f its fields). Consumes @p m. */
int droce_rc_resp_recv(const struct droce_transport_env *env, struct droce_tqp *q,
		       struct rte_mbuf *m, const struct droce_pkt *pkt,
		       const struct droce_hdr_fields *f);
int droce_rc_resp_send(const struct droce_transport_env *env, struct droce_tqp *q, int budget);

/* rc_comp.c: the completer */
enum rc_comp_state {
	RC_COMP_GET_RESPONSE,
	RC_COMP_CHECK_PSN,
	RC_COMP_CHECK_OPCODE,
	RC_COMP_CHECK_ACK,
	RC_COMP_ACK,
	RC_COMP_READ,
	RC_COMP_ATOMIC,
	RC_COMP_TIMEOUT,
	RC_COMP_RETRY,
	RC_COMP_RNR,
	RC_COMP_ERROR,
	RC_COMP_DROP,
	RC_COMP_COMPLETE,
	RC_COMP_DONE,
	RC_COMP_STATE_COUNT
};
extern const char *const droce_rc_comp_state_names[RC_COMP_STATE_COUNT];
/** A response packet (decoded once by the dispatcher). Consumes @p m. */
int droce_rc_comp_recv(const struct droce_transport_env *env, struct droce_tqp *q,
		       struct rte_mbuf *m, const struct droce_pkt *pkt,
		       const struct droce_hdr_fields *f);
void droce_rc_comp_run_step(const struct droce_transport_env *env, struct droce_tqp *q);
/** The completer's step after a requester pass: completions, the retransmission timer. */
static inline void droce_rc_comp_run(const struct droce_transport_env *env, struct droce_tqp *q)
{
	const struct droce_rc *rc = q->rc;

	/* idle: nothing to complete and, on RC, nothing outstanding and no timer running */
	if (likely(rc->comp.comp_idx == rc->req.req_idx &&
		   (!rc->svc->retried || (rc->comp.una == rc->req.sent_hi &&
					  !droce_timer_is_armed(&rc->comp.retry_timer)))))
		return;
	droce_rc_comp_run_step(env, q);
}
void droce_rc_comp_timer_events_run(const struct droce_transport_env *env, struct droce_tqp *q);
/** Timer events first (before the requester follows a go-back they ask for). */
static inline void droce_rc_comp_timer_events(const struct droce_transport_env *env,
					      struct droce_tqp *q)
{
	if (unlikely(q->rc->comp.events != 0))
		droce_rc_comp_timer_events_run(env, q);
}
/** A timer callback: only marks the event (no environment there). */
void droce_rc_timer_fired(struct droce_tqp *q, uint32_t id);

#endif /* DROCE_RC_PRIV_H */
