/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stand-in for droce's engine in the verbs tests: it attaches to the rings
 * of QPs, CQs and SRQs through droce_verbs_engine.h exactly as the engine
 * does, takes the WQEs the verbs layer published, and writes CQEs the verbs
 * layer reads. It executes nothing on a wire; it lets tests see what was
 * posted and make completions the way the engine will.
 */
#ifndef DROCE_VERBS_HARNESS_H
#define DROCE_VERBS_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include <droce_ring.h>
#include <droce_verbs_engine.h>
#include <droce_wqe.h>

#define HARNESS_SLOT_MAX 4096

/** A send WQE as taken from the ring, with what follows its header (SGEs or inline bytes). */
struct harness_send {
	struct droce_send_wqe hdr;
	uint8_t data[HARNESS_SLOT_MAX];
};

struct harness_recv {
	struct droce_recv_wqe hdr;
	struct droce_sge sge[64];
};

/** Devices for the verbs tests (set DROCE_DEVICES before the first device call). */
#define HARNESS_DEVICES "droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,ip=fd00::1,mtu=4200"

/** Configure HARNESS_DEVICES and open droce0 with a PD. */
struct ibv_context *harness_open(struct ibv_pd **pd);

/** Take the next send WQE of @p qp; true when there was one. */
bool harness_take_send(struct ibv_qp *qp, struct harness_send *out);
/** Send WQEs published and not taken. */
int harness_send_pending(struct ibv_qp *qp);
/** Take the next receive WQE of @p qp (or of its SRQ); true when there was one. */
bool harness_take_recv(struct ibv_qp *qp, struct harness_recv *out);
bool harness_take_srq_recv(struct ibv_srq *srq, struct harness_recv *out);
int harness_srq_pending(struct ibv_srq *srq);

/** Write a CQE on @p cq (as the engine completes a WQE); false when the CQ ring is full. */
bool harness_complete(struct ibv_cq *cq, const struct droce_cqe *cqe);

/**
 * What the engine does with send WQEs that need no wire: for each taken WQE of
 * @p qp, a signaled one completes on the send CQ with @p status (the opcode
 * derived from the WQE). Returns the WQEs processed.
 */
int harness_complete_sends(struct ibv_qp *qp, enum ibv_wc_status status);

/** Forget the rings of objects about to be destroyed (tests reuse addresses). */
void harness_forget(const void *object);

/** Move a QP to a modify-able RTS (RESET->INIT->RTR->RTS) with valid attributes. */
int harness_qp_to_rts(struct ibv_qp *qp);

#endif /* DROCE_VERBS_HARNESS_H */
