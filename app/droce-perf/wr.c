/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The send work requests of every measurement (bw.c, lat.c, lat_twohost.c): the
 * opcode of the test's verb and its remote side, perftest's atomic operands, UD
 * addressing, when the payload goes inline; and the one-message post of the
 * latency tests.
 */
#include <string.h>

#include "droce_perf.h"

bool perf_wr_inline(const struct perf_ctx *c, uint32_t size)
{
	return !perf_verb_one_sided(c->o->verb) && size <= c->max_inline;
}

void perf_wr_set_verb(const struct perf_ctx *c, const struct perf_end *e, unsigned int q,
		      uint64_t remote_addr, uint32_t rkey, struct ibv_send_wr *wr)
{
	switch (c->o->verb) {
	case PERF_WRITE:
		wr->opcode = IBV_WR_RDMA_WRITE;
		wr->wr.rdma.remote_addr = remote_addr;
		wr->wr.rdma.rkey = rkey;
		break;
	case PERF_READ:
		wr->opcode = IBV_WR_RDMA_READ;
		wr->wr.rdma.remote_addr = remote_addr;
		wr->wr.rdma.rkey = rkey;
		break;
	case PERF_ATOMIC:
		/* perftest's operands: add 1, or compare with 0 and swap in 0 */
		wr->opcode =
			c->o->atomic_cas ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.remote_addr = remote_addr;
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.compare_add = c->o->atomic_cas ? 0 : PERF_ATOMIC_ADD;
		wr->wr.atomic.swap = PERF_ATOMIC_SWAP;
		break;
	case PERF_SEND:
		wr->opcode = IBV_WR_SEND;
		if (c->o->qp_type == IBV_QPT_UD) {
			wr->wr.ud.ah = e->ah[q];
			wr->wr.ud.remote_qpn = e->remote_qpn[q];
			wr->wr.ud.remote_qkey = PERF_UD_QKEY;
		}
		break;
	}
}

int perf_lat_post(const struct perf_ctx *c, struct perf_end *e, const struct perf_dest *peer,
		  uint8_t *buf, uint32_t size, uint64_t wr_id, uint64_t *sent)
{
	struct ibv_sge s = {.addr = (uintptr_t)buf, .length = size, .lkey = e->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &s, .num_sge = 1}, *bad;
	int rc;

	/* a one-sided request is the sample: its completion ends it */
	if (perf_verb_one_sided(c->o->verb) || ++*sent % PERF_LAT_SIGNAL_EVERY == 0)
		wr.send_flags = IBV_SEND_SIGNALED;
	if (perf_wr_inline(c, size))
		wr.send_flags |= IBV_SEND_INLINE;
	perf_wr_set_verb(c, e, 0, peer->vaddr, peer->rkey, &wr);
	rc = ibv_post_send(e->qp[0], &wr, &bad);
	if (rc != 0) {
		fprintf(stderr, "droce-perf: ibv_post_send: %s\n", strerror(rc));
		return -1;
	}
	return 0;
}
