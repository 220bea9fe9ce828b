/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The CM agent's insides, shared by its files: the agent, the id, the per-id timer, and the
 * prototypes each file gives the others (grouped by file).
 */
#ifndef DROCE_CM_PRIV_H
#define DROCE_CM_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "droce_cm.h"

/** Buckets of the id table keyed by local communication ID (a power of two). */
#define CM_ID_BUCKETS 256

/**
 * One timer per id (cm_timer.c): when it fires, what it resends and how often more. The state
 * says what the expiry means (cm_timer_expired's switch).
 */
struct cm_timer {
	uint64_t deadline_us; /**< 0: not armed */
	uint64_t timeout_us;  /**< one wait, for the next resend */
	uint8_t retries_left; /**< resends left before the state's error */
};

/** The last MAD an id sent: what a retry or a duplicate's answer sends again. */
struct cm_last {
	enum droce_cm_msg msg; /**< DROCE_CM_MSG_COUNT: none */
	uint8_t mad[DROCE_MAD_LEN];
};

struct droce_cm_id {
	struct droce_cm *cm;
	struct droce_cm_id *hash_next;   /**< the bucket of local_comm_id */
	struct droce_cm_id *prev, *next; /**< every id of the agent */
	void *context;
	enum droce_cm_state state;
	bool passive;   /**< created by a REQ or SIDR_REQ received */
	bool gone;      /**< the consumer destroyed it: no events, freed once IDLE */
	bool listening; /**< in LISTEN: service_id/mask below are a listener's */
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint64_t service_id;
	uint64_t service_mask; /**< listeners: the bits that must match (never 0) */
	uint64_t tid;          /**< of the exchange in progress (REQ/REP/RTU, DREQ/DREP, SIDR) */
	struct droce_cm_addr path;
	uint8_t packet_life_time;      /**< 5 bits, of the path */
	uint8_t peer_response_timeout; /**< 5 bits: how long the peer may take to answer */
	uint8_t max_cm_retries;
	uint8_t ack_timeout; /**< 5 bits: the requester's local ACK timeout (REQ) */
	struct cm_timer timer;
	struct cm_last last;
};

struct droce_cm {
	struct droce_cm_ops ops;
	struct droce_cm_stats stats;
	struct droce_cm_id *buckets[CM_ID_BUCKETS];
	struct droce_cm_id *first; /**< every id, newest first */
	unsigned int busy;         /**< inside recv/timers: destroyed ids are freed afterwards */
};

/* cm.c: the agent, ids */
uint64_t cm_random64(void);
struct droce_cm_id *cm_id_new(struct droce_cm *cm, void *context);
void cm_id_free(struct droce_cm_id *id);
void cm_reap(struct droce_cm *cm);
void cm_enter(struct droce_cm *cm);
void cm_leave(struct droce_cm *cm);

/* cm_ids.c: lookups */
struct droce_cm_id *cm_find_local(struct droce_cm *cm, uint32_t local_comm_id);
struct droce_cm_id *cm_find_remote(struct droce_cm *cm, uint32_t remote_comm_id,
				   const uint8_t *peer_gid);
struct droce_cm_id *cm_find_remote_qpn(struct droce_cm *cm, uint32_t remote_qpn,
				       const uint8_t *peer_gid, const struct droce_cm_id *except);
struct droce_cm_id *cm_find_listener(struct droce_cm *cm, uint64_t service_id);

/* cm_send.c: building and sending */
uint64_t cm_time_us(uint8_t iba_time);
void cm_begin(void *mad, enum droce_cm_msg msg, uint64_t tid);
void cm_set(void *mad, enum droce_cm_field f, uint64_t v);
void cm_send_raw(struct droce_cm *cm, const struct droce_cm_addr *to, const uint8_t *mad,
		 enum droce_cm_msg msg);
void cm_send_id(struct droce_cm_id *id, const uint8_t *mad, enum droce_cm_msg msg);
void cm_resend_last(struct droce_cm_id *id);
void cm_send_rej_mad(struct droce_cm_id *id, enum droce_cm_msg_ref ref, uint16_t reason,
		     const void *ari, uint8_t ari_len, const void *priv, uint8_t priv_len);
void cm_send_dreq_mad(struct droce_cm_id *id, const void *priv, uint8_t len);
void cm_send_drep_mad(struct droce_cm_id *id, const void *priv, uint8_t len);
uint64_t cm_ca_guid(const struct droce_cm_addr *path);
bool cm_bits_fit(uint64_t v, unsigned int bits);

/* cm_timer.c */
void cm_timer_start(struct droce_cm_id *id, uint64_t timeout_us, uint8_t retries);
void cm_timer_stop(struct droce_cm_id *id);
uint64_t cm_wait_us(const struct droce_cm_id *id);
uint64_t cm_timewait_us(const struct droce_cm_id *id);
void cm_enter_timewait(struct droce_cm_id *id);

/* cm_recv.c: events */
void cm_event(struct droce_cm_id *id, enum droce_cm_event_type type,
	      const struct droce_cm_decoded *d, const struct droce_cm_addr *from, int status,
	      struct droce_cm_id *listen_id);

/* cm_active.c: the active side's receive and timer handlers */
void cm_active_rep(struct droce_cm_id *id, const struct droce_cm_decoded *d,
		   const struct droce_cm_addr *from);
void cm_active_timeout(struct droce_cm_id *id);

/* cm_passive.c: the passive side's */
void cm_passive_req(struct droce_cm *cm, const struct droce_cm_decoded *d,
		    const struct droce_cm_addr *from);
void cm_passive_rtu(struct droce_cm_id *id, const struct droce_cm_decoded *d,
		    const struct droce_cm_addr *from);
void cm_passive_timeout(struct droce_cm_id *id);

/* cm_disconnect.c: REJ received, DREQ, DREP, time wait */
void cm_rej_rcvd(struct droce_cm_id *id, const struct droce_cm_decoded *d,
		 const struct droce_cm_addr *from);
void cm_dreq_rcvd(struct droce_cm *cm, const struct droce_cm_decoded *d,
		  const struct droce_cm_addr *from);
void cm_drep_rcvd(struct droce_cm_id *id, const struct droce_cm_decoded *d,
		  const struct droce_cm_addr *from);
void cm_disconnect_timeout(struct droce_cm_id *id);

/* cm_sidr.c */
void cm_sidr_req_rcvd(struct droce_cm *cm, const struct droce_cm_decoded *d,
		      const struct droce_cm_addr *from);
void cm_sidr_rep_rcvd(struct droce_cm *cm, const struct droce_cm_decoded *d,
		      const struct droce_cm_addr *from);
void cm_sidr_timeout(struct droce_cm_id *id);

#endif /* DROCE_CM_PRIV_H */
