/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two embedded-engine devices of DROCE_DEVICES (droce0, droce1), each with one UD QP in
 * RTS (Q_Key QKEY), for tests of what the ports do: neighbours, capture.
 */
#ifndef DROCE_TEST_UD_PAIR_H
#define DROCE_TEST_UD_PAIR_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#define QKEY 0x11111111u

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[4096];
};

extern struct end e0, e1;

void end_open(struct end *x, struct ibv_device *dev);
/** Open the two devices @p devices (DROCE_DEVICES) names, a UD QP on each. */
void ud_pair_open(const char *devices);
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
