/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC/UC QP life cycle, below the roles: the UC/RC service table, the state
 * allocated beside the tqp (the requester's shadow of in-flight WQEs), reset,
 * the moves to Send Queue Error and Error, and the timers the lcore's wheel
 * runs for the QP (their callbacks only mark an event for the completer).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rc_priv.h"

const struct rc_service droce_rc_services[2] = {
	/* RC: IBTA 9.7 */
	{
		.svc = DROCE_SVC_RC,
		.opm = DROCE_OPM_RC,
		.acked = true,
		.retried = true,
		.go_back = true,
		.naks = true,
		.zero_copy = true,
		.send_error_state = IBV_QPS_ERR,
	},
	/* UC: IBTA 9.8, what it does not do */
	{
		.svc = DROCE_SVC_UC,
		.opm = DROCE_OPM_UC,
		.acked = false,
		.retried = false,
		.go_back = false,
		.naks = false,
		.zero_copy = false,
		.send_error_state = IBV_QPS_SQE,
	},
};

int droce_rc_init(struct droce_tqp *q)
{
	struct droce_rc *rc = calloc(1, sizeof(*rc));
	struct rc_requester *req;

	if (rc == NULL)
		return -ENOMEM;
	req = &rc->req;
	req->size = q->sq.size;
	req->mask = q->sq.mask;
	req->slot_size = q->sq.slot_size;
	req->wqe = calloc(req->size, sizeof(*req->wqe));
	req->copies = malloc((size_t)req->size * req->slot_size);
	if (req->wqe == NULL || req->copies == NULL) {
		free(req->wqe);
		free(req->copies);
		free(rc);
		return -ENOMEM;
	}
	rc->q = q;
	rc->svc = &droce_rc_services[q->type == IBV_QPT_UC];
	/* without it the QP copies every payload: not a reason to refuse the QP */
	req->zc = droce_zc_create(req->size);
	droce_timer_init(&rc->comp.retry_timer, DROCE_RC_TIMER_RETRY);
	droce_timer_init(&rc->comp.rnr_timer, DROCE_RC_TIMER_RNR);
	q->rc = rc;
	return 0;
}

static void rc_timers_cancel(const struct droce_transport_env *env, struct droce_rc *rc)
{
	if (env == NULL || env->wheel == NULL)
		return;
	if (droce_timer_is_armed(&rc->comp.retry_timer))
		droce_timer_cancel(env->wheel, &rc->comp.retry_timer);
	if (droce_timer_is_armed(&rc->comp.rnr_timer))
		droce_timer_cancel(env->wheel, &rc->comp.rnr_timer);
	rc->comp.events = 0;
}

void droce_rc_fini(const struct droce_transport_env *env, struct droce_tqp *q)
{
	struct droce_rc *rc = q->rc;

	if (rc == NULL)
		return;
	rc_timers_cancel(env, rc);
	droce_zc_release(rc->req.zc); /* freed by the last frame still in flight, if any */
	free(rc->req.wqe);
	free(rc->req.copies);
	free(rc);
	q->rc = NULL;
}

/* The requester forgets its WQEs in flight: it goes on from the completer's index. */
static void rc_req_forget(struct droce_rc *rc)
{
	struct rc_requester *req = &rc->req;

	req->req_idx = rc->comp.comp_idx;
	req->cur = rc->comp.comp_idx;
	req->cur_pkt = 0;
	req->go_back_seen = rc->comp.go_back;
}

/*
 * The requester starts again from sq_psn with no WQE in flight (RTR -> RTS);
 * with @p responder too, no message in progress and no resource (RESET).
 */
void droce_rc_reset(const struct droce_transport_env *env, struct droce_tqp *q, bool responder)
{
	struct droce_rc *rc = q->rc;
	struct rc_requester *req = &rc->req;
	struct rc_completer *comp = &rc->comp;

	rc_timers_cancel(env, rc);
	/* frames of the forgotten WQEs count on the old object, never on the new WQEs' slots */
	if (droce_zc_busy(req->zc) != 0) {
		droce_zc_release(req->zc);
		req->zc = droce_zc_create(req->size);
	}
	memset(req->wqe, 0, (size_t)req->size * sizeof(*req->wqe));
	memset(&req->req_idx, 0, sizeof(*req) - offsetof(struct rc_requester, req_idx));
	memset(comp, 0, sizeof(*comp));
	if (responder)
		memset(&rc->resp, 0, sizeof(rc->resp));
	droce_timer_init(&comp->retry_timer, DROCE_RC_TIMER_RETRY);
	droce_timer_init(&comp->rnr_timer, DROCE_RC_TIMER_RNR);
	comp->una = q->sq_psn;
	req->sent_hi = q->sq_psn;
	comp->retry_left = q->retry_cnt;
	comp->rnr_left = q->rnr_retry;
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
	rc_req_forget(q->rc);
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

	rc_timers_cancel(env, rc);
	rc_req_forget(rc);
	rc->req.rd_issued = rc->comp.rd_retired;
	rc->comp.rnr_wait = false;
	if (rc->resp.have_rwqe) {
		struct droce_cqe e = {
			.wr_id = rc->resp.rwqe.hdr.wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.qp_num = q->qpn,
		};

		rc->resp.have_rwqe = false;
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
		rc = (struct droce_rc *)((uint8_t *)t -
					 offsetof(struct droce_rc, comp.retry_timer));
	else
		rc = (struct droce_rc *)((uint8_t *)t - offsetof(struct droce_rc, comp.rnr_timer));
	droce_rc_timer_fired(rc->q, t->id);
}

int droce_transport_timers_run(struct droce_timer_wheel *w, uint64_t now, unsigned int max)
{
	if (w == NULL)
		return -EINVAL;
	return droce_timer_wheel_run(w, now, rc_timer_cb, NULL, max);
}
