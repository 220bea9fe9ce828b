/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC/UC QP life cycle: the state allocated beside the tqp (the requester's
 * shadow of in-flight WQEs), reset, the move to the Error state, and the
 * timers the lcore's wheel runs for the QP.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rc_priv.h"

int droce_rc_init(struct droce_tqp *q)
{
	struct droce_rc *rc = calloc(1, sizeof(*rc));

	if (rc == NULL)
		return -ENOMEM;
	rc->size = q->sq.size;
	rc->mask = q->sq.mask;
	rc->slot_size = q->sq.slot_size;
	rc->wqe = calloc(rc->size, sizeof(*rc->wqe));
	rc->copies = malloc((size_t)rc->size * rc->slot_size);
	if (rc->wqe == NULL || rc->copies == NULL) {
		free(rc->wqe);
		free(rc->copies);
		free(rc);
		return -ENOMEM;
	}
	rc->q = q;
	/* without it the QP copies every payload: not a reason to refuse the QP */
	rc->zc = droce_zc_create(rc->size);
	droce_timer_init(&rc->retry_timer, DROCE_RC_TIMER_RETRY);
	droce_timer_init(&rc->rnr_timer, DROCE_RC_TIMER_RNR);
	q->rc = rc;
	return 0;
}

static void rc_timers_cancel(struct droce_rc *rc)
{
	if (rc->env == NULL || rc->env->wheel == NULL)
		return;
	if (droce_timer_is_armed(&rc->retry_timer))
		droce_timer_cancel(rc->env->wheel, &rc->retry_timer);
	if (droce_timer_is_armed(&rc->rnr_timer))
		droce_timer_cancel(rc->env->wheel, &rc->rnr_timer);
}

void droce_rc_fini(struct droce_tqp *q)
{
	struct droce_rc *rc = q->rc;

	if (rc == NULL)
		return;
	rc_timers_cancel(rc);
	droce_zc_release(rc->zc); /* freed by the last frame still in flight, if any */
	free(rc->wqe);
	free(rc->copies);
	free(rc);
	q->rc = NULL;
}

/*
 * The requester starts again from sq_psn with no WQE in flight (RTR -> RTS);
 * with @p responder too, no message in progress and no resource (RESET).
 */
void droce_rc_reset(struct droce_tqp *q, bool responder)
{
	struct droce_rc *rc = q->rc;

	rc_timers_cancel(rc);
	/* frames of the forgotten WQEs count on the old object, never on the new WQEs' slots */
	if (droce_zc_busy(rc->zc) != 0) {
		droce_zc_release(rc->zc);
		rc->zc = droce_zc_create(rc->size);
	}
	memset(rc->wqe, 0, (size_t)rc->size * sizeof(*rc->wqe));
	memset(&rc->comp_idx, 0,
	       offsetof(struct droce_rc, in_msg) - offsetof(struct droce_rc, comp_idx));
	if (responder)
		memset(&rc->in_msg, 0, sizeof(*rc) - offsetof(struct droce_rc, in_msg));
	droce_timer_init(&rc->retry_timer, DROCE_RC_TIMER_RETRY);
	droce_timer_init(&rc->rnr_timer, DROCE_RC_TIMER_RNR);
	rc->una = q->sq_psn;
	rc->sent_hi = q->sq_psn;
	rc->retry_left = q->retry_cnt;
	rc->rnr_left = q->rnr_retry;
}

/*
 * A completion error on a UC send queue: the QP enters Send Queue Error (IBA
 * 10.3.1, the state of an unreliable QP whose send queue failed). The shadow is
 * forgotten and the SQE send pass flushes the WQEs behind the failed one; the
 * receive side is untouched, messages keep arriving and consuming receive
 * WQEs, until the consumer resumes the QP with SQE -> RTS (or moves it on).
 */
void droce_uc_to_sqe(const struct droce_transport_env *env, struct droce_tqp *q)
{
	struct droce_rc *rc = q->rc;

	rc->req_idx = rc->comp_idx;
	rc->cur = rc->comp_idx;
	rc->cur_pkt = 0;
	droce_tqp_to_error(env, q, IBV_QPS_SQE, 0);
}

/*
 * The QP enters the Error state: timers stop, the shadow is forgotten (the
 * ring's slots of the WQEs in it are still unreleased, the ERR send pass
 * flushes them), a receive WQE taken for a message is flushed.
 */
void droce_rc_to_error(const struct droce_transport_env *env, struct droce_tqp *q,
		       enum ibv_event_type event)
{
	struct droce_rc *rc = q->rc;

	rc_timers_cancel(rc);
	rc->req_idx = rc->comp_idx;
	rc->cur = rc->comp_idx;
	rc->cur_pkt = 0;
	rc->rd_out = 0;
	rc->rnr_wait = false;
	if (rc->have_rwqe) {
		struct droce_cqe e = {
			.wr_id = rc->rwqe.hdr.wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.qp_num = q->qpn,
		};

		rc->have_rwqe = false;
		droce_tqp_complete_recv(env, q, &e, false);
	}
	droce_tqp_to_error(env, q, IBV_QPS_ERR, event);
}

uint64_t droce_rc_now(const struct droce_transport_env *env)
{
	return droce_timer_wheel_now(env->wheel);
}

uint64_t droce_rc_ticks(const struct droce_transport_env *env, uint64_t ns)
{
	return droce_timer_ns_to_ticks(ns, env->tick_hz);
}

static void rc_timer_cb(struct droce_timer_wheel *w, struct droce_timer *t, void *arg)
{
	struct droce_rc *rc;

	(void)w;
	(void)arg;
	if (t->id == DROCE_RC_TIMER_RETRY)
		rc = (struct droce_rc *)((uint8_t *)t - offsetof(struct droce_rc, retry_timer));
	else
		rc = (struct droce_rc *)((uint8_t *)t - offsetof(struct droce_rc, rnr_timer));
	droce_rc_timer_fired(rc->q, t->id);
}

int droce_transport_timers_run(struct droce_timer_wheel *w, uint64_t now, unsigned int max)
{
	if (w == NULL)
		return -EINVAL;
	return droce_timer_wheel_run(w, now, rc_timer_cb, NULL, max);
}
