/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two CM agents back to back in one process: what one sends waits in a queue until the test
 * delivers it to the other (or drops, inspects, or changes it); time is a fake clock the test
 * moves. Each side records the events its consumer gets. Shared by the test_cm_* files.
 */
#ifndef DROCE_TEST_CM_PAIR_H
#define DROCE_TEST_CM_PAIR_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <droce_cm.h>

#define CM_QUEUE  256
#define CM_EVENTS 64

struct cm_rec {
	struct droce_cm_id *id;
	struct droce_cm_id *listen_id;
	enum droce_cm_event_type type;
	enum droce_cm_state state; /* the id's state when the event came */
	int status;
	enum droce_cm_msg msg; /* DROCE_CM_MSG_COUNT for none */
	uint8_t priv[8];       /* the private data's first bytes */
};

struct cm_side;
typedef void (*cm_hook_fn)(struct cm_side *s, struct droce_cm_id *id,
			   const struct droce_cm_event *ev);

struct cm_side {
	struct droce_cm *cm;
	struct droce_cm_addr addr; /* sgid: this side's GID, dgid: the other's */
	struct cm_rec ev[CM_EVENTS];
	unsigned int nev;
	int fail_sends;  /* the next n sends fail with -EAGAIN */
	cm_hook_fn hook; /* called after each event is recorded */
};

struct cm_mad {
	int from; /* 0: a, 1: b */
	struct droce_cm_addr to;
	uint8_t mad[DROCE_MAD_LEN];
};

extern struct cm_side cm_a, cm_b;
extern uint64_t cm_now;

void cm_pair_init(void);
void cm_pair_fini(void);

/* MADs waiting: how many; the i-th (0 the oldest); its message. */
unsigned int cm_queued(void);
struct cm_mad *cm_peek(unsigned int i);
enum droce_cm_msg cm_peek_msg(unsigned int i);
/* Remove the oldest without delivering it. */
void cm_drop(void);
/* Deliver the oldest; returns its message. */
enum droce_cm_msg cm_deliver_one(void);
/* Deliver until the queue is empty (what a delivery sends too); returns how many. */
unsigned int cm_deliver_all(void);
/* Hand @p s a MAD as if from the other side. */
void cm_inject(struct cm_side *s, const void *mad, size_t len);
/* Move the clock by @p us and run both agents' timers. */
void cm_advance(uint64_t us);

/* The last event of @p s, or NULL. */
const struct cm_rec *cm_last_ev(const struct cm_side *s);
/* How many events of @p type @p s got. */
unsigned int cm_count_ev(const struct cm_side *s, enum droce_cm_event_type type);
struct droce_cm_stats cm_stats(const struct cm_side *s);

/* A REQ's parameters from a to b for @p service_id. */
struct droce_cm_req_param cm_req_param(uint64_t service_id);
struct droce_cm_rep_param cm_rep_param(void);

#define CM_SID 0x0000000001061c06ull

/* b listens on CM_SID; a sends REQ: returns a's id; *child b's new id (REQ_RCVD). */
struct droce_cm_id *cm_start(struct droce_cm_id **listener, struct droce_cm_id **child);
/* ... and on to ESTABLISHED on both sides (REP, RTU delivered). */
struct droce_cm_id *cm_connect(struct droce_cm_id **listener, struct droce_cm_id **child);

#endif /* DROCE_TEST_CM_PAIR_H */
