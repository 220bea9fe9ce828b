/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two embedded-engine devices of DROCE_DEVICES (droce0, droce1), each with one UD QP in
 * RTS (Q_Key QKEY), for tests of what the ports do: neighbours, capture, telemetry.
 */
#ifndef DROCE_TEST_UD_PAIR_H
#define DROCE_TEST_UD_PAIR_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "pair_harness.h"

#define QKEY 0x11111111u

extern struct pair_end e0, e1;

/**
 * droce0 and droce1 joined by a ring link (ports of MTU 1500, pair_harness.h), @p keys0 and
 * @p keys1 their further DROCE_DEVICES keys (",k=v", or NULL), a UD QP in RTS on each.
 */
void ud_pair_open(const char *keys0, const char *keys1);
/** The next completion of @p cq (fails the test after 20 s). */
struct ibv_wc wait_wc(struct ibv_cq *cq);
/** An address handle on droce0 to @p dgid from its GID @p sgid_index. */
struct ibv_ah *ah_to(const union ibv_gid *dgid, int sgid_index);
/** A 100-byte UD SEND from droce0 through @p ah to droce1's QP. */
void post_ud(struct ibv_ah *ah, uint64_t id);
/** One UD SEND from droce0 to droce1 through droce1's GID @p gid_index, delivered. */
void send_one(int gid_index);
/** Port counter @p name of @p ctx's port (droce_counters.h). */
uint64_t port_counter(struct ibv_context *ctx, const char *name);

#endif /* DROCE_TEST_UD_PAIR_H */
