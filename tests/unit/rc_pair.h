/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two RC or UC transport QPs in one process, without a port: what one side sends is
 * checked by lib/wire's parser (ICRC included) and fed to the other side, through a queue
 * that can drop, duplicate or reorder chosen frames. Time is the timer wheel's, driven by
 * the test (ns ticks). Shared by the test_transport_rc* and test_transport_uc files.
 */
#ifndef DROCE_TEST_RC_PAIR_H
#define DROCE_TEST_RC_PAIR_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <droce_transport.h>
#include <droce_wire.h>
#include <droce_wire_mbuf.h>

#include "droce_test.h"
#include "verbs_harness.h"

#define BUF_LEN (2u << 20)
#define PMTU    1024u
#define MIB     (1u << 20)
#define QUEUE   8192

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct droce_tqp tqp;
	struct droce_tcq tcq;
	struct droce_transport_env env;
	uint8_t *buf;
	unsigned int frames; /* frames this side sent */
};

enum fault { PASS, DROP, DUP, HOLD, STASH };

/* Decides the fate of the n-th frame (from 0) a side sends. */
typedef enum fault (*fault_fn)(const struct side *from, const struct droce_pkt *pkt,
			       unsigned int n);

struct wr_args {
	enum ibv_wr_opcode op;
	uint32_t off, len;
	uint32_t roff; /* offset in the peer's buffer */
	uint32_t rkey; /* 0: the peer's MR */
	uint32_t lkey; /* 0: own MR */
	unsigned int flags;
	uint64_t compare_add, swap;
	uint32_t imm_or_rkey;
};

extern struct ibv_context *ctx;
extern struct ibv_pd *pd;
extern struct side a, b;
extern struct rte_mempool *pool;
extern struct droce_tport_addr port;
extern struct droce_timer_wheel wheel;
extern uint64_t now_ns;
/** Time each delivered frame takes (0: none); timers run as it passes. */
extern uint64_t ns_per_frame;
extern fault_fn fault;
extern unsigned int bad_frames, solicited_events;
extern struct droce_hdr_fields last_a; /* fields of A's last frame */
extern struct droce_hdr_fields last_b; /* fields of B's last frame (before fault() sees it) */
extern struct rte_mbuf *held;
/** A copy of the frame STASH let through, for the test to inject() later. */
extern struct rte_mbuf *stashed;
/** The peer's address resolves to nothing: the neighbour lookup fails (-EHOSTUNREACH). */
extern bool unreachable;
extern const uint32_t sizes[6]; /* 0, 1, PMTU-1, PMTU, PMTU+1, MIB */
extern unsigned int target;     /* the frame index the *_nth faults act on */

struct side *peer(const struct side *s);
int neigh(void *arg, const uint8_t ip[16], uint8_t mac[6]);
void cq_notify(void *arg, void *cq, bool solicited);
void qp_error(void *arg, void *qp, enum ibv_qp_state state, enum ibv_event_type ev);
/** Deliver queued frames and run both send passes until nothing moves. */
void pump(void);
/** Queue @p m for @p to behind what is queued: delivered by the next pump(). */
void inject(struct side *to, struct rte_mbuf *m);
/** Pump, and let time pass to the next timer, until no timer is left (bounded). */
void settle(void);
void side_setup(struct side *s, enum ibv_qp_type type);
void side_connect(struct side *s, uint32_t sq_psn, uint32_t rq_psn);
void setup_type(enum ibv_qp_type type);
void setup_rc(void);
void setup_uc(void);
void teardown(void);
void post_recv_lkey(struct side *s, uint64_t id, uint32_t off, uint32_t len, uint32_t lkey);
void post_recv(struct side *s, uint64_t id, uint32_t off, uint32_t len);
int post_wr(struct side *s, uint64_t id, const struct wr_args *w);
struct ibv_wc wc_of(struct side *s, uint64_t id);
void fill(uint8_t *p, uint32_t len, uint32_t seed);
uint32_t pkts_of(uint32_t len);

/* Faults by frame index */
enum fault drop_a_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n);
enum fault dup_a_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n);
enum fault hold_a_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n);
enum fault stash_a_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n);
enum fault drop_b_nth(const struct side *from, const struct droce_pkt *pkt, unsigned int n);
enum fault drop_all_a(const struct side *from, const struct droce_pkt *pkt, unsigned int n);
/** A SEND of @p len from A to B, both completions and the bytes checked. */
void send_and_check(uint32_t len, uint64_t id);

/**
 * @p op (a LOCAL_INV or BIND_MW that fails with @p st) then a SEND, posted at once: the
 * failure stops the requester, the SEND is flushed without having been sent.
 */
void failed_local_op_stops_the_requester(struct ibv_send_wr *op, enum ibv_wc_status st);

#endif /* DROCE_TEST_RC_PAIR_H */
