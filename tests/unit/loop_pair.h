/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two QPs of one embedded-engine port (droce0 of a back-to-back link), connected
 * to each other through the port's own GIDs: the local loopback. Used by the
 * loopback and SQD tests.
 */
#ifndef DROCE_TEST_LOOP_PAIR_H
#define DROCE_TEST_LOOP_PAIR_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#define DEVICES                                                      \
	"droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,mtu=4200,link=l0 " \
	"droce1:mac=02:00:00:00:00:02,ip=10.0.0.2,mtu=4200,link=l0"
#define BUF_LEN (1u << 20)
#define MSG_LEN (256u * 1024) /* many packets at MTU 1024 */

struct end {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

extern struct ibv_context *ctx;
extern struct ibv_pd *pd;
extern struct end e0, e1;

void end_create(struct end *x, enum ibv_qp_type type);
/** RC to RTS towards @p peer through the port's own GID @p gid_index. */
void rc_connect(struct end *x, const struct end *peer, int gid_index);
/** Open droce0 of DEVICES (starts the engine) and allocate the PD. */
void open_droce0(void);
/** droce0, e0 and e1 as RC QPs connected to each other through GID @p gid_index. */
void setup_rc(int gid_index);
/** The next completion of @p cq (fails the test after 20 s). */
struct ibv_wc wait_wc(struct ibv_cq *cq);
/** One signaled work request of @p len bytes from x's buffer to (or from) the peer's. */
void post_send(struct end *x, enum ibv_wr_opcode op, uint32_t len, const struct end *peer);
void fill(uint8_t *p, uint32_t len, uint32_t seed);

#endif /* DROCE_TEST_LOOP_PAIR_H */
