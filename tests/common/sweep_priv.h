/* SPDX-License-Identifier: BSD-3-Clause */
/* The transport sweep's helpers shared by its files (sweep_check.c has them). */
#ifndef DROCE_SWEEP_PRIV_H
#define DROCE_SWEEP_PRIV_H

#include "sweep.h"

/* The next send completion of e0's QP @p k: @p id. */
struct ibv_wc sw_wait_send(struct sw_run *r, enum sw_kind k, uint64_t id);
/* The next receive (@p recv) or send completion of the peer's QP @p k: @p id. */
struct ibv_wc sw_peer_wait(struct sw_run *r, enum sw_kind k, bool recv, uint64_t id);
/* SUCCESS with opcode @p op. */
void sw_expect_success(const struct sw_run *r, const struct ibv_wc *wc, enum ibv_wc_opcode op,
		       const char *side);

/*
 * A message's layout at @p off: [0, split) of the pattern, SW_GAP bytes skipped,
 * the rest; then 64 guard bytes. split 0: one piece.
 */
/* Zero the layout's span at the peer or e0, then write pattern @p seed (SW_ZERO: none). */
void sw_fill_layout(struct sw_run *r, bool peer, uint64_t off, uint64_t len, uint32_t split,
		    uint32_t seed);
/* The message's bytes in its layout; the gap and the guard untouched. */
void sw_expect_layout(struct sw_run *r, bool peer, uint64_t off, uint64_t len, uint32_t split,
		      uint32_t seed);
/* Odd sizes above 2 go out of two SGEs and arrive into two, split at different bytes. */
uint32_t sw_send_split(uint64_t len);
uint32_t sw_recv_split(uint64_t len);

uint64_t sw_get64(struct sw_run *r, bool peer, uint64_t off);
void sw_put64(struct sw_run *r, bool peer, uint64_t off, uint64_t v);

/* UC has no acknowledgement: a zero-byte SEND behind a WRITE tells when it is placed. */
void sw_uc_marker(struct sw_run *r);

#endif /* DROCE_SWEEP_PRIV_H */
