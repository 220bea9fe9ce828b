/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the test_verbs_post_send* files share: one device whose engine is stood in by
 * tests/common/verbs_harness.c (it takes what the verbs layer publishes on the send ring and
 * writes the completions the engine would write), a CQ, an MR over buf, QPs in RTS, and a WR
 * of every opcode valid in every way, for a test to spoil one field of and post.
 */
#ifndef DROCE_TEST_POST_SEND_HARNESS_H
#define DROCE_TEST_POST_SEND_HARNESS_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "verbs_harness.h"

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

#define TWO_31     0x80000000u /* 2^31: the largest message, and what an SGE length of 0 means */
#define REMOTE_VA  0x7f0000001000ull
#define REMOTE_KEY 0x00abcd01u
#define UD_QPN     0x000022u
#define UD_QKEY    0x11111111u
#define BUF_LEN    16384u

extern struct ibv_context *ctx;
extern struct ibv_pd *pd;
extern struct ibv_cq *cq;
extern struct ibv_mr *mr;
extern struct ibv_qp_cap cap; /* what the last qp_new() was given */
extern uint8_t buf[BUF_LEN];  /* registered as mr, 64-byte aligned */

/** Suite .init: open the device, a 256-entry CQ, and mr over buf (local write, MW bind). */
void setup(void);
/** "RC", "UC" or "UD" for messages. */
const char *type_name(enum ibv_qp_type t);
/** The IBV_WR_ name of @p op without its prefix, "unknown" for none. */
const char *op_name(enum ibv_wr_opcode op);
/** A QP of @p type in RESET on cq (16 WRs each way); its granted caps go to cap. */
struct ibv_qp *qp_new(enum ibv_qp_type type, uint32_t send_sge, uint32_t max_inline, int sig_all);
/** A QP of @p type in RTS: 4 SGEs, 64 bytes inline, sq_sig_all 0. */
struct ibv_qp *qp_rts(enum ibv_qp_type type);
/** An AH of @p p to 10.0.0.2 through GID 1 (10.0.0.1). */
struct ibv_ah *ah_new(struct ibv_pd *p);
/** The AH of pd that UD WRs carry, made on first use. */
struct ibv_ah *the_ah(void);
/** A type-2 memory window of pd, made on first use. */
struct ibv_mw *the_mw2(void);
/**
 * A WR of @p op valid in every way on a QP type that supports @p op: one 64-byte SGE (8 bytes
 * for atomics, none for LOCAL_INV and BIND_MW), the opcode's remote fields, UD addressing on UD.
 */
void wr_fill(struct ibv_qp *qp, enum ibv_wr_opcode op, struct ibv_send_wr *wr, struct ibv_sge *sge);
/** Post @p wr alone; it must be refused with @p err, bad_wr on it, and nothing published. */
void expect_refused(struct ibv_qp *qp, struct ibv_send_wr *wr, int err, const char *what);
/** Post @p wr alone; it must be accepted and be the one WQE the engine finds, copied to @p s. */
void expect_posted(struct ibv_qp *qp, struct ibv_send_wr *wr, struct harness_send *s,
		   const char *what);

#endif /* DROCE_TEST_POST_SEND_HARNESS_H */
