/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * droce's Communication Manager (IBTA Vol. 1 chapter 12): the state machines that set up and
 * tear down RC and UC connections (REQ, MRA, REJ, REP, RTU, DREQ, DREP; LAP refused with APR)
 * and resolve UD service IDs (SIDR_REQ, SIDR_REP), over CM MADs (lib/wire's droce_wire_mad.h).
 *
 * One struct droce_cm is the CM agent of one engine (every port of it). It knows no threads,
 * no clock and no packets of its own: whoever drives it (lib/cm's service, or a test) hands it
 * each received MAD (droce_cm_recv), runs its timers (droce_cm_timers_run) and gives it a way
 * to send MADs, to tell its consumer about events, and the time (struct droce_cm_ops). Calls
 * on one struct droce_cm and its ids must not overlap (the driver holds a lock).
 *
 * Errors: 0 or -errno.
 */
#ifndef DROCE_CM_H
#define DROCE_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce_wire_mad.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where a CM MAD goes or came from: the peer's GSI (QP1) through one engine port. */
struct droce_cm_addr {
	unsigned int port;     /**< the engine port's index */
	uint8_t sgid[16];      /**< the local GID (IPv4: ::ffff:a.b.c.d) */
	uint8_t dgid[16];      /**< the peer's GID */
	uint8_t traffic_class; /**< of the GRH (IP DSCP/ECN) */
	uint8_t hop_limit;     /**< IP TTL / hop limit */
	uint32_t flow_label;   /**< IPv6 flow label (20 bits) */
	uint16_t pkey;         /**< 0xffff: the default partition */
};

/** The states of a communication ID (12.9.x, state diagrams of the active and passive side). */
enum droce_cm_state {
	DROCE_CM_IDLE,
	DROCE_CM_LISTEN,
	DROCE_CM_REQ_SENT,
	DROCE_CM_REQ_RCVD,
	DROCE_CM_MRA_REQ_SENT, /**< passive: REQ received, MRA sent for it */
	DROCE_CM_MRA_REQ_RCVD, /**< active: REQ sent, the peer sent MRA for it */
	DROCE_CM_REP_SENT,
	DROCE_CM_REP_RCVD,
	DROCE_CM_MRA_REP_SENT, /**< active: REP received, MRA sent for it */
	DROCE_CM_MRA_REP_RCVD, /**< passive: REP sent, the peer sent MRA for it */
	DROCE_CM_ESTABLISHED,
	DROCE_CM_DREQ_SENT,
	DROCE_CM_DREQ_RCVD,
	DROCE_CM_TIMEWAIT,
	DROCE_CM_SIDR_REQ_SENT,
	DROCE_CM_SIDR_REQ_RCVD,
	DROCE_CM_STATE_COUNT
};

/** Names of enum droce_cm_state (lower case, fit for counters and logs). */
extern const char *const droce_cm_state_name[DROCE_CM_STATE_COUNT];

/** What the agent tells its consumer (struct droce_cm_ops.event). */
enum droce_cm_event_type {
	DROCE_CM_EV_REQ_RCVD,  /**< a new id, child of the listener ev->listen_id: REQ_RCVD */
	DROCE_CM_EV_REQ_ERROR, /**< REQ (or the wait after an MRA) timed out: IDLE */
	DROCE_CM_EV_REP_RCVD,  /**< REP_RCVD: answer with RTU, MRA or REJ */
	DROCE_CM_EV_REP_ERROR, /**< REP timed out (no RTU): IDLE (REJ sent, 12.9.x) */
	DROCE_CM_EV_RTU_RCVD,  /**< passive: ESTABLISHED by RTU */
	DROCE_CM_EV_USER_ESTABLISHED, /**< passive: ESTABLISHED by droce_cm_established() */
	DROCE_CM_EV_MRA_RCVD,         /**< the peer needs longer: the wait was extended */
	DROCE_CM_EV_REJ_RCVD,         /**< ev->status the reason; the id is IDLE or TIMEWAIT */
	/** DREQ_RCVD: answer with DREP (or destroy); DREQs crossed: answered already, TIMEWAIT */
	DROCE_CM_EV_DREQ_RCVD,
	DROCE_CM_EV_DREQ_ERROR,     /**< DREQ timed out: TIMEWAIT */
	DROCE_CM_EV_DREP_RCVD,      /**< TIMEWAIT */
	DROCE_CM_EV_TIMEWAIT_EXIT,  /**< IDLE: the QP may be reused */
	DROCE_CM_EV_SIDR_REQ_RCVD,  /**< a new id, child of ev->listen_id: SIDR_REQ_RCVD */
	DROCE_CM_EV_SIDR_REP_RCVD,  /**< ev->status the SIDR status: IDLE */
	DROCE_CM_EV_SIDR_REQ_ERROR, /**< SIDR_REQ timed out: IDLE */
	DROCE_CM_EV_COUNT
};

extern const char *const droce_cm_event_name[DROCE_CM_EV_COUNT];

struct droce_cm_id;

struct droce_cm_event {
	enum droce_cm_event_type type;
	/** REQ_RCVD, SIDR_REQ_RCVD: the listening id the new id came through */
	struct droce_cm_id *listen_id;
	/** the message that caused the event (its every field), NULL for timeouts */
	const struct droce_cm_decoded *msg;
	/** the consumer's private data in it (NULL, 0 for timeouts) */
	const uint8_t *private_data;
	size_t private_data_len;
	/** where it came from (REQ_RCVD and SIDR_REQ_RCVD: the path to answer on) */
	struct droce_cm_addr from;
	/** REJ_RCVD: the reason; SIDR_REP_RCVD: the status; errors: -ETIMEDOUT; else 0 */
	int status;
};

/** The world around the agent. */
struct droce_cm_ops {
	/** send one 256-byte MAD to the peer's GSI: 0 or -errno (a lost MAD is retried by timer) */
	int (*send)(void *arg, const struct droce_cm_addr *to, const uint8_t *mad);
	/**
	 * An event of @p id. Called from inside droce_cm_recv() and droce_cm_timers_run() (and
	 * droce_cm_established(), for USER_ESTABLISHED), the id already in its new state; it may
	 * call droce_cm_send_*() and droce_cm_id_destroy() on any id, never droce_cm_destroy().
	 */
	void (*event)(void *arg, struct droce_cm_id *id, const struct droce_cm_event *ev);
	/** microseconds of a monotonic clock */
	uint64_t (*now_us)(void *arg);
	void *arg;
};

/** Connection request: what REQ carries (12.6.5). */
struct droce_cm_req_param {
	struct droce_cm_addr path;
	uint64_t service_id;
	uint32_t local_qpn;                 /**< 24 bits */
	uint32_t starting_psn;              /**< 24 bits */
	enum droce_cm_transport transport;  /**< RC or UC */
	uint8_t responder_resources;        /**< RDMA READ/atomic the requester's QP takes in */
	uint8_t initiator_depth;            /**< RDMA READ/atomic it sends at once */
	uint8_t remote_cm_response_timeout; /**< 5 bits: 4.096 µs × 2^n the peer may take */
	uint8_t local_cm_response_timeout;  /**< 5 bits: how long this side takes to answer */
	uint8_t max_cm_retries;             /**< 4 bits */
	uint8_t retry_count;                /**< 3 bits: transport retries */
	uint8_t rnr_retry_count;            /**< 3 bits */
	uint8_t local_ack_timeout;          /**< 5 bits */
	uint8_t path_mtu;                   /**< enum ibv_mtu value, 1..5 */
	uint8_t packet_life_time;           /**< 5 bits */
	bool flow_control;                  /**< end-to-end flow control offered */
	bool srq;                           /**< the QP takes receives from an SRQ */
	const void *private_data;
	uint8_t private_data_len; /**< at most 92 */
};

/** Connection reply: what REP carries (12.6.8). */
struct droce_cm_rep_param {
	uint32_t local_qpn;
	uint32_t starting_psn;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay; /**< 5 bits */
	uint8_t rnr_retry_count;  /**< 3 bits */
	bool flow_control;
	bool srq;
	const void *private_data;
	uint8_t private_data_len; /**< at most 196 */
};

/** Service ID resolution request (12.11). */
struct droce_cm_sidr_req_param {
	struct droce_cm_addr path;
	uint64_t service_id;
	uint8_t timeout; /**< 5 bits: 4.096 µs × 2^n per try */
	uint8_t max_cm_retries;
	const void *private_data;
	uint8_t private_data_len; /**< at most 216 */
};

/** Service ID resolution reply (12.11). */
struct droce_cm_sidr_rep_param {
	enum droce_cm_sidr_status status;
	uint32_t qpn;
	uint32_t qkey;
	const void *info; /**< additional information (status 2: the redirect) */
	uint8_t info_len;
	const void *private_data;
	uint8_t private_data_len; /**< at most 136 */
};

/** What the agent counted since it was created. */
struct droce_cm_stats {
	uint64_t rx[DROCE_CM_MSG_COUNT]; /**< accepted, by message */
	uint64_t tx[DROCE_CM_MSG_COUNT]; /**< sent, by message (retries included) */
	uint64_t retries;                /**< MADs sent again on a timeout */
	uint64_t duplicates;             /**< a MAD seen before, answered as before */
	/** dropped by droce_mad_parse() status (other classes and ClassPortInfo included) */
	uint64_t malformed[DROCE_MAD_STATUS_COUNT];
	uint64_t unmatched;   /**< no id for it (nothing answered or REJ) */
	uint64_t stale;       /**< REQs refused as stale connections */
	uint64_t send_failed; /**< ops->send errors */
};

/** A new agent; @p ops is copied. NULL with errno EINVAL (an op missing) or ENOMEM. */
struct droce_cm *droce_cm_create(const struct droce_cm_ops *ops);
/** Destroy the agent and every id (no MAD is sent). */
void droce_cm_destroy(struct droce_cm *cm);

/**
 * A new id in IDLE with the consumer's @p context and a random non-zero local communication
 * ID; NULL with errno EINVAL (@p cm NULL) or ENOMEM.
 */
struct droce_cm_id *droce_cm_id_create(struct droce_cm *cm, void *context);
/**
 * Let go of @p id: what its state requires goes out first (REJ while a REQ or REP waits for
 * an answer: reason 4 from REQ_SENT and MRA_REQ_RCVD, 28 otherwise; DREQ when established,
 * DREP when a DREQ waits, SIDR_REP "rejected" when a SIDR_REQ does), and the agent keeps what
 * it must until the time wait ends; the consumer sees no more events of it. The id must not
 * be used afterwards.
 */
void droce_cm_id_destroy(struct droce_cm_id *id);
void *droce_cm_id_context(const struct droce_cm_id *id);
void droce_cm_id_set_context(struct droce_cm_id *id, void *context);
enum droce_cm_state droce_cm_id_state(const struct droce_cm_id *id);
/** The id's local communication ID (network order on the wire, host order here). */
uint32_t droce_cm_id_local_comm_id(const struct droce_cm_id *id);
/** The path the id's MADs travel (set by REQ, SIDR_REQ, or a received one). */
const struct droce_cm_addr *droce_cm_id_path(const struct droce_cm_id *id);

/**
 * Listen on @p service_id under @p mask (0: exact; bits set in the mask must match): REQs and
 * SIDR_REQs for it arrive as new child ids. -EBUSY when another listener's ID/mask overlaps,
 * -EINVAL when @p id is not IDLE.
 */
int droce_cm_listen(struct droce_cm_id *id, uint64_t service_id, uint64_t mask);

/*
 * The calls below return 0, -EINVAL for a NULL id or parameter, an id in a state the message
 * cannot leave (each names its states), a value wider than its field or out of its range, or
 * private data (or ARI, additional information) NULL with a non-zero length; -EMSGSIZE for
 * more private data (ARI, additional information) than the message carries. On an error
 * nothing is sent and nothing changes. A failed ops->send is no error: it is counted
 * (send_failed) and the id's timer sends again.
 */

/**
 * REQ from an IDLE id this agent did not create for a received REQ: REQ_SENT. One
 * transaction ID for REQ, REP and RTU; the REQ is resent every 2 × packet life time + the
 * remote CM response timeout, max_cm_retries times, then REJ (reason 4) and REQ_ERROR.
 * transport RC or UC (RD is -EINVAL), path_mtu 1 to 5.
 */
int droce_cm_send_req(struct droce_cm_id *id, const struct droce_cm_req_param *p);
/** REP in REQ_RCVD or MRA_REQ_SENT: REP_SENT, resent on the REQ's timeouts and retries */
int droce_cm_send_rep(struct droce_cm_id *id, const struct droce_cm_rep_param *p);
/** RTU in REP_RCVD or MRA_REP_SENT: ESTABLISHED */
int droce_cm_send_rtu(struct droce_cm_id *id, const void *private_data, uint8_t len);
/**
 * REJ in REQ_RCVD, MRA_REQ_SENT, REP_RCVD, MRA_REP_SENT (12.6.7), @p reason 1 to 33: the id
 * goes IDLE
 */
int droce_cm_send_rej(struct droce_cm_id *id, uint16_t reason, const void *ari, uint8_t ari_len,
		      const void *private_data, uint8_t len);
/**
 * MRA for the REQ (REQ_RCVD: MRA_REQ_SENT) or REP (REP_RCVD: MRA_REP_SENT) received, asking
 * for 4.096 µs × 2^@p service_timeout (5 bits) more; once per message
 */
int droce_cm_send_mra(struct droce_cm_id *id, uint8_t service_timeout, const void *private_data,
		      uint8_t len);
/** DREQ in ESTABLISHED: DREQ_SENT, a fresh transaction ID, resent like REQ, then DREQ_ERROR */
int droce_cm_send_dreq(struct droce_cm_id *id, const void *private_data, uint8_t len);
/** DREP in DREQ_RCVD: TIMEWAIT */
int droce_cm_send_drep(struct droce_cm_id *id, const void *private_data, uint8_t len);
/**
 * Passive side in REP_SENT or MRA_REP_RCVD: the QP received its first packet (COMM_EST):
 * ESTABLISHED, USER_ESTABLISHED given before the call returns; -EINVAL in other states
 */
int droce_cm_established(struct droce_cm_id *id);
/**
 * SIDR_REQ from an IDLE id this agent did not create for a received message: SIDR_REQ_SENT,
 * resent every 4.096 µs × 2^timeout, max_cm_retries times, then SIDR_REQ_ERROR
 */
int droce_cm_send_sidr_req(struct droce_cm_id *id, const struct droce_cm_sidr_req_param *p);
/** SIDR_REP in SIDR_REQ_RCVD (status 0 to 5): IDLE */
int droce_cm_send_sidr_rep(struct droce_cm_id *id, const struct droce_cm_sidr_rep_param *p);

/**
 * A MAD received on port @p from->port from @p from: checked (droce_cm_decode), matched to
 * its id and run through the id's state machine; malformed, unmatched or stale MADs are
 * counted and dropped or answered as chapter 12 says (never read past @p len).
 */
void droce_cm_recv(struct droce_cm *cm, const struct droce_cm_addr *from, const void *mad,
		   size_t len);

/** Run the timers due by now; returns the time (µs) of the next one, UINT64_MAX for none. */
uint64_t droce_cm_timers_run(struct droce_cm *cm);

void droce_cm_stats_get(const struct droce_cm *cm, struct droce_cm_stats *s);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_CM_H */
