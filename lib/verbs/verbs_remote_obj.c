/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Objects of a droced context (doc/daemon.md): droced creates each one and
 * sends back its handle and, for queues, the memfd of its control words and
 * rings, already initialised; the application maps it and attaches its end.
 * From then on posting and polling are the same code paths as embedded. Each
 * function here is an entry of droce_remote_ops (verbs_remote.c): 0 or -errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_dproto.h"
#include "verbs_priv.h"

int droce_remote_destroy(struct ibv_context *context, uint32_t op, uint32_t handle, void *obj)
{
	struct droce_context *c = to_dctx(context);
	int rc = droce_remote_call(c, op, handle, NULL, 0, -1, NULL, 0, NULL, NULL);

	/* droced gone: its objects are gone with it, the local one can go too */
	if (rc == -EPIPE)
		rc = 0;
	if (rc == 0 && obj != NULL)
		droce_remote_bind(c, handle, NULL, DROCE_REMOTE_NONE);
	return rc;
}

int droce_remote_alloc_pd(struct droce_pd *pd)
{
	struct droce_context *c = to_dctx(pd->ibpd.context);

	return droce_remote_call(c, DPROTO_ALLOC_PD, 0, NULL, 0, -1, NULL, 0, &pd->remote_handle,
				 NULL);
}

int droce_remote_dealloc_pd(struct droce_pd *pd)
{
	return droce_remote_destroy(pd->ibpd.context, DPROTO_DEALLOC_PD, pd->remote_handle, NULL);
}

/*
 * The memory droced sent for a queue, mapped; the rings' offsets checked against it. @p m
 * holds nothing before anything can fail: the caller's error path frees it, and a
 * descriptor of 0 there would close the application's standard input.
 */
static int queue_map(int fd, const struct droce_dproto_shm *s, size_t ctl_len, struct droce_shm *m)
{
	m->addr = NULL;
	m->len = 0;
	m->fd = -1;
	if (fd < 0)
		return -EPROTO;
	if (s->ring_off[0] < ctl_len || s->ring_off[1] < ctl_len) {
		close(fd);
		return -EPROTO;
	}
	return droce_remote_map(fd, s, m);
}

int droce_remote_create_cq(struct droce_cq *cq, const struct ibv_cq_init_attr_ex *attr)
{
	struct droce_context *c = to_dctx(cq->ibcq.context);
	struct droce_dproto_create_cq_req req = {
		.cqe = attr->cqe,
		.channel = attr->channel != NULL ? to_dch(attr->channel)->remote_handle : 0,
		.flags = (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) ? attr->flags : 0,
	};
	struct droce_dproto_create_cq_rep rep;
	int fd, rc;

	rc = droce_remote_call(c, DPROTO_CREATE_CQ, 0, &req, sizeof(req), -1, &rep, sizeof(rep),
			       &cq->remote_handle, &fd);
	if (rc != 0)
		return rc;
	rep.shm.ring_off[1] = rep.shm.ring_off[0]; /* one ring */
	rep.shm.ring_len[1] = 0;
	rc = queue_map(fd, &rep.shm, sizeof(struct droce_cq_ctl), &cq->shm);
	if (rc == 0) {
		cq->ctl = cq->shm.addr;
		cq->ring = (uint8_t *)cq->shm.addr + rep.shm.ring_off[0];
		cq->ring_len = (size_t)rep.shm.ring_len[0];
		rc = droce_ring_cons_attach(&cq->cons, cq->ring, cq->ring_len);
		if (rc == 0 &&
		    (cq->cons.slot_size != sizeof(struct droce_cqe) || cq->cons.size < attr->cqe))
			rc = -EPROTO;
	}
	if (rc != 0) {
		droce_shm_free(&cq->shm);
		droce_remote_destroy(cq->ibcq.context, DPROTO_DESTROY_CQ, cq->remote_handle, NULL);
		cq->remote_handle = 0;
		return rc;
	}
	cq->ibcq.cqe = (int)cq->cons.size;
	cq->engine_id = -1;
	cq->notify_taken = __atomic_load_n(&cq->ctl->notify_count, __ATOMIC_ACQUIRE);
	droce_remote_bind(c, cq->remote_handle, cq, DROCE_REMOTE_CQ);
	return 0;
}

int droce_remote_destroy_cq(struct droce_cq *cq)
{
	/* droced first: after this it signals nothing more about the CQ */
	return droce_remote_destroy(cq->ibcq.context, DPROTO_DESTROY_CQ, cq->remote_handle, cq);
}

int droce_remote_create_srq(struct droce_srq *srq, struct ibv_srq_init_attr *a)
{
	struct ibv_pd *pd = srq->ibsrq.pd;
	struct droce_context *c = to_dctx(pd->context);
	struct droce_dproto_create_srq_req req = {
		.pd = to_dpd(pd)->remote_handle,
		.max_wr = a->attr.max_wr,
		.max_sge = a->attr.max_sge,
	};
	struct droce_dproto_create_srq_rep rep;
	int fd, rc;

	rc = droce_remote_call(c, DPROTO_CREATE_SRQ, 0, &req, sizeof(req), -1, &rep, sizeof(rep),
			       &srq->remote_handle, &fd);
	if (rc != 0)
		return rc;
	rep.shm.ring_off[1] = rep.shm.ring_off[0];
	rep.shm.ring_len[1] = 0;
	rc = queue_map(fd, &rep.shm, sizeof(struct droce_srq_ctl), &srq->shm);
	if (rc == 0) {
		srq->ctl = srq->shm.addr;
		srq->ring = (uint8_t *)srq->shm.addr + rep.shm.ring_off[0];
		srq->ring_len = (size_t)rep.shm.ring_len[0];
		srq->slot_size = rep.shm.slot_size[0];
		rc = droce_ring_prod_attach(&srq->rq, srq->ring, srq->ring_len);
		if (rc == 0 && (srq->rq.slot_size != srq->slot_size || srq->rq.size < rep.max_wr ||
				srq->slot_size < sizeof(struct droce_recv_wqe) +
							 rep.max_sge * sizeof(struct droce_sge)))
			rc = -EPROTO;
	}
	if (rc != 0) {
		droce_shm_free(&srq->shm);
		droce_remote_destroy(pd->context, DPROTO_DESTROY_SRQ, srq->remote_handle, NULL);
		srq->remote_handle = 0;
		return rc;
	}
	srq->max_wr = rep.max_wr;
	srq->max_sge = rep.max_sge;
	srq->engine_id = -1;
	droce_remote_bind(c, srq->remote_handle, srq, DROCE_REMOTE_SRQ);
	return 0;
}

int droce_remote_destroy_srq(struct droce_srq *srq)
{
	return droce_remote_destroy(srq->ibsrq.context, DPROTO_DESTROY_SRQ, srq->remote_handle,
				    srq);
}

int droce_remote_create_qp(struct droce_qp *qp, const struct ibv_qp_init_attr_ex *a)
{
	struct ibv_qp *ib = &qp->qpx.qp_base;
	struct droce_context *c = to_dctx(ib->context);
	struct droce_dproto_create_qp_req req = {
		.pd = to_dpd(a->pd)->remote_handle,
		.send_cq = to_dcq(a->send_cq)->remote_handle,
		.recv_cq = to_dcq(a->recv_cq)->remote_handle,
		.srq = a->srq != NULL ? to_dsrq(a->srq)->remote_handle : 0,
		.qp_type = a->qp_type,
		.sq_sig_all = a->sq_sig_all != 0,
		.cap = a->cap,
	};
	struct droce_dproto_create_qp_rep rep;
	int fd, rc;

	rc = droce_remote_call(c, DPROTO_CREATE_QP, 0, &req, sizeof(req), -1, &rep, sizeof(rep),
			       &qp->remote_handle, &fd);
	if (rc != 0)
		return rc;
	if (a->srq != NULL) {
		rep.shm.ring_off[1] = rep.shm.ring_off[0];
		rep.shm.ring_len[1] = 0;
	}
	rc = queue_map(fd, &rep.shm, sizeof(struct droce_qp_ctl), &qp->shm);
	if (rc == 0) {
		qp->ctl = qp->shm.addr;
		qp->sq_ring = (uint8_t *)qp->shm.addr + rep.shm.ring_off[0];
		qp->sq_len = (size_t)rep.shm.ring_len[0];
		qp->sq_slot_size = rep.shm.slot_size[0];
		rc = droce_ring_prod_attach(&qp->sq, qp->sq_ring, qp->sq_len);
		if (rc == 0 &&
		    (qp->sq.slot_size != qp->sq_slot_size || qp->sq.size < rep.cap.max_send_wr))
			rc = -EPROTO;
	}
	if (rc == 0 && a->srq == NULL) {
		qp->rq_ring = (uint8_t *)qp->shm.addr + rep.shm.ring_off[1];
		qp->rq_len = (size_t)rep.shm.ring_len[1];
		qp->rq_slot_size = rep.shm.slot_size[1];
		rc = droce_ring_prod_attach(&qp->rq, qp->rq_ring, qp->rq_len);
		if (rc == 0 &&
		    (qp->rq.slot_size != qp->rq_slot_size || qp->rq.size < rep.cap.max_recv_wr))
			rc = -EPROTO;
	}
	/* what the WQE encoders rely on: the slots hold what the caps promise */
	if (rc == 0 &&
	    (qp->sq_slot_size < sizeof(struct droce_send_wqe) +
					rep.cap.max_send_sge * sizeof(struct droce_sge) ||
	     qp->sq_slot_size < sizeof(struct droce_send_wqe) + rep.cap.max_inline_data ||
	     (a->srq == NULL &&
	      qp->rq_slot_size < sizeof(struct droce_recv_wqe) +
					 rep.cap.max_recv_sge * sizeof(struct droce_sge))))
		rc = -EPROTO;
	if (rc != 0) {
		droce_shm_free(&qp->shm);
		droce_remote_destroy(ib->context, DPROTO_DESTROY_QP, qp->remote_handle, NULL);
		qp->remote_handle = 0;
		return rc;
	}
	qp->cap = rep.cap;
	ib->qp_num = rep.qpn; /* droced numbered it and wrote its control words */
	qp->state_in_ctl = true;
	droce_remote_bind(c, qp->remote_handle, qp, DROCE_REMOTE_QP);
	return 0;
}

int droce_remote_modify_qp(struct droce_qp *qp, struct ibv_qp_attr *attr, int mask,
			   enum ibv_qp_state next)
{
	struct droce_context *c = to_dctx(qp->qpx.qp_base.context);
	struct droce_dproto_modify_qp_req req;
	int rc;

	memset(&req, 0, sizeof(req));
	req.attr = *attr;
	req.mask = mask;
	/* droced checks again, writes the control words and tells its engine */
	rc = droce_remote_call(c, DPROTO_MODIFY_QP, qp->remote_handle, &req, sizeof(req), -1, NULL,
			       0, NULL, NULL);
	if (rc == 0 && next == IBV_QPS_RESET)
		droce_qp_rings_reset(qp, false); /* droced emptied them: attach again */
	return rc;
}

int droce_remote_destroy_qp(struct droce_qp *qp)
{
	return droce_remote_destroy(qp->qpx.qp_base.context, DPROTO_DESTROY_QP, qp->remote_handle,
				    qp);
}

int droce_remote_create_ah(struct droce_ah *ah)
{
	struct ibv_pd *pd = ah->ibah.pd;
	struct droce_dproto_create_ah_req req = {.pd = to_dpd(pd)->remote_handle};
	struct droce_dproto_create_ah_rep rep;
	int rc;

	req.attr = ah->attr;
	rc = droce_remote_call(to_dctx(pd->context), DPROTO_CREATE_AH, 0, &req, sizeof(req), -1,
			       &rep, sizeof(rep), &ah->remote_handle, NULL);
	if (rc == 0)
		ah->id = rep.ah_id; /* droced's engine resolves the id: the AH lives there */
	return rc;
}

int droce_remote_destroy_ah(struct droce_ah *ah)
{
	return droce_remote_destroy(ah->ibah.context, DPROTO_DESTROY_AH, ah->remote_handle, NULL);
}

int droce_remote_alloc_mw(struct droce_mw *mw, struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct droce_dproto_alloc_mw_req req = {.pd = to_dpd(pd)->remote_handle, .type = type};
	struct droce_dproto_alloc_mw_rep rep;
	int rc;

	rc = droce_remote_call(to_dctx(pd->context), DPROTO_ALLOC_MW, 0, &req, sizeof(req), -1,
			       &rep, sizeof(rep), &mw->remote_handle, NULL);
	if (rc == 0) {
		mw->handle = rep.key_handle;
		mw->ibmw.rkey = rep.rkey;
	}
	return rc;
}

int droce_remote_dealloc_mw(struct droce_mw *mw)
{
	return droce_remote_destroy(mw->ibmw.context, DPROTO_DEALLOC_MW, mw->remote_handle, NULL);
}

int droce_remote_create_channel(struct droce_comp_channel *ch)
{
	struct ibv_context *context = ch->ibch.context;
	int fd = -1, rc;

	rc = droce_remote_call(to_dctx(context), DPROTO_CREATE_CHANNEL, 0, NULL, 0, -1, NULL, 0,
			       &ch->remote_handle, &fd);
	if (rc != 0)
		return rc;
	if (fd < 0) {
		droce_remote_destroy(context, DPROTO_DESTROY_CHANNEL, ch->remote_handle, NULL);
		return -EPROTO;
	}
	ch->ibch.fd = fd; /* droced's eventfd: one count per event, as an embedded channel */
	return 0;
}

int droce_remote_destroy_channel(struct droce_comp_channel *ch)
{
	return droce_remote_destroy(ch->ibch.context, DPROTO_DESTROY_CHANNEL, ch->remote_handle,
				    NULL);
}

static int channel_add(struct droce_comp_channel *ch, struct droce_cq *cq)
{
	if (ch->n_cqs == ch->cqs_cap) {
		unsigned int cap = ch->cqs_cap ? ch->cqs_cap * 2 : 8;
		struct droce_cq **v = realloc(ch->cqs, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		ch->cqs = v;
		ch->cqs_cap = cap;
	}
	ch->cqs[ch->n_cqs++] = cq;
	return 0;
}

int droce_remote_channel_join(struct droce_comp_channel *ch, struct droce_cq *cq)
{
	int rc;

	pthread_mutex_lock(&ch->lock);
	rc = channel_add(ch, cq);
	pthread_mutex_unlock(&ch->lock);
	return rc;
}

/*
 * droced counts each event on the channel's fd after bumping the CQ's
 * notify_count (release): a count read here means some CQ of the channel has
 * an event not yet taken.
 */
int droce_remote_get_cq_event(struct droce_comp_channel *ch, struct droce_cq **out)
{
	uint64_t v;

	for (;;) {
		struct droce_cq *found = NULL;

		/* blocks unless the application made the fd non-blocking */
		ssize_t got = read(ch->ibch.fd, &v, sizeof(v));

		if (got != (ssize_t)sizeof(v))
			return got >= 0 ? -EPIPE : -errno; /* at 0 droced closed its end: gone */
		pthread_mutex_lock(&ch->lock);
		for (unsigned int i = 0; i < ch->n_cqs && found == NULL; i++) {
			struct droce_cq *cq = ch->cqs[(ch->next_cq + i) % ch->n_cqs];
			uint32_t n = __atomic_load_n(&cq->ctl->notify_count, __ATOMIC_ACQUIRE);

			if (n != cq->notify_taken) {
				cq->notify_taken++;
				found = cq;
				/* the next search starts after it: no CQ starves the others */
				ch->next_cq = (ch->next_cq + i + 1) % ch->n_cqs;
			}
		}
		if (found != NULL)
			__atomic_fetch_add(&found->events_reported, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&ch->lock);
		if (found != NULL) {
			*out = found;
			return 0;
		}
	}
}

void droce_remote_channel_forget(struct droce_comp_channel *ch, struct droce_cq *cq)
{
	uint32_t left;
	uint64_t v;
	int fl;

	pthread_mutex_lock(&ch->lock);
	for (unsigned int i = 0; i < ch->n_cqs; i++)
		if (ch->cqs[i] == cq) {
			ch->cqs[i] = ch->cqs[--ch->n_cqs];
			break;
		}
	ch->next_cq = 0;
	/* droced destroyed the CQ first: its counts are all on the fd by now */
	left = __atomic_load_n(&cq->ctl->notify_count, __ATOMIC_ACQUIRE) - cq->notify_taken;
	fl = fcntl(ch->ibch.fd, F_GETFL);
	fcntl(ch->ibch.fd, F_SETFL, fl | O_NONBLOCK);
	for (; left > 0; left--)
		if (read(ch->ibch.fd, &v, sizeof(v)) < 0)
			break; /* a reader took it: it finds no CQ, reads again */
	fcntl(ch->ibch.fd, F_SETFL, fl);
	pthread_mutex_unlock(&ch->lock);
}
