/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A QP moved to RESET takes its completions out of its CQs, as providers do,
 * so that a QP started again does not poll what its previous life left (the
 * flush errors of an ERR, say). The CQE ring has one writer per index (the
 * engine writes the slots and the producer index, the application only the
 * consumer index: doc/rings.md), so nothing is removed from the ring itself:
 * the CQ remembers, privately, which QP to skip up to which ring index, and
 * polling releases those entries without returning them. Every entry the
 * QP's old life can have written is before the producer index read once the
 * engine has taken the reset (the modify waits for it). A receive completion
 * taken from an SRQ is kept: that WQE belonged to the SRQ, which a QP's reset
 * does not give back, so dropping its completion would lose the buffer.
 * In droced, which never polls the CQs it serves, nothing is recorded: the
 * application's process, which polls them, records the reset itself.
 */
#include <errno.h>
#include <stdlib.h>

#include "verbs_priv.h"

static void cq_lock(struct droce_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
}

static void cq_unlock(struct droce_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

int droce_cq_purge_reserve(struct droce_cq *cq)
{
	struct droce_cq_purge *grown;
	uint32_t cap;
	int rc = 0;

	if (cq->exported)
		return 0; /* nothing is skipped where nothing is polled */
	cq_lock(cq);
	if (cq->purge_count == cq->purge_cap) {
		cap = cq->purge_cap == 0 ? 4 : cq->purge_cap * 2;
		grown = realloc(cq->purge, cap * sizeof(*grown));
		if (grown == NULL) {
			rc = -ENOMEM;
		} else {
			cq->purge = grown;
			cq->purge_cap = cap;
		}
	}
	cq_unlock(cq);
	return rc;
}

void droce_cq_purge_qp(struct droce_cq *cq, uint32_t qp_num, bool keep_srq_recv)
{
	int avail;

	if (cq->exported)
		return; /* droced's copy: the application's process skips them as it polls */
	cq_lock(cq);
	avail = droce_ring_cons_avail(&cq->cons);
	/* an empty (or corrupted) ring holds nothing to skip; room was reserved */
	if (avail > 0 && cq->purge_count < cq->purge_cap)
		cq->purge[cq->purge_count++] = (struct droce_cq_purge){
			.qp_num = qp_num,
			.end = cq->cons.tail + (uint32_t)avail,
			.keep_srq_recv = keep_srq_recv,
		};
	cq_unlock(cq);
}

bool droce_cq_purged(const struct droce_cq *cq, uint32_t index, const struct droce_cqe *e)
{
	for (uint32_t i = 0; i < cq->purge_count; i++) {
		const struct droce_cq_purge *p = &cq->purge[i];

		/* indices are free-running: compare by distance (doc/rings.md) */
		if (e->qp_num == p->qp_num && (int32_t)(index - p->end) < 0 &&
		    !(p->keep_srq_recv && (e->opcode & IBV_WC_RECV)))
			return true;
	}
	return false;
}

void droce_cq_purge_expire(struct droce_cq *cq)
{
	uint32_t i = 0;

	while (i < cq->purge_count) {
		if ((int32_t)(cq->cons.tail - cq->purge[i].end) >= 0)
			cq->purge[i] = cq->purge[--cq->purge_count];
		else
			i++;
	}
}

void droce_cq_purge_free(struct droce_cq *cq)
{
	free(cq->purge);
	cq->purge = NULL;
	cq->purge_count = cq->purge_cap = 0;
}
