/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control path into the engine lcores. A command about one QP is handed to
 * the QP's lcore through one pointer, and the caller waits until the lcore has
 * applied it between two loop passes; a QP is therefore only ever touched by
 * its lcore. A command about what the lcores share (CQs, SRQs, AHs, a port's
 * capture, injector and counters) parks every lcore between two passes, is
 * applied by the caller, and lets them go on. A neighbour lookup goes to lcore
 * 0, which sends the ports' requests, under the table's lock when lcores share it.
 *
 * QP placement: a QP goes to the lcore its CQs and SRQ belong to (the lcore of
 * the first QP that used them), or to the lcore with the fewest QPs when they
 * belong to none. A QP whose queues belong to different lcores makes them
 * shared: their lock is then taken (struct droce_shared_lock).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "engine_priv.h"

/* QPN -> QP, open addressing with linear probing; deletion re-inserts the run after it. */
static unsigned int qp_slot(uint32_t qpn)
{
	return (qpn * 2654435761u) & (ENGINE_QPS_MAX - 1);
}

struct engine_qp *engine_qp_find(const struct engine_lcore *e, uint32_t qpn)
{
	unsigned int i = qp_slot(qpn), n;

	for (n = 0; n < ENGINE_QPS_MAX && e->qps[i] != NULL;
	     n++, i = (i + 1) & (ENGINE_QPS_MAX - 1))
		if (e->qps[i]->tqp.qpn == qpn)
			return e->qps[i];
	return NULL;
}

int engine_qp_owner(const struct engine *e, uint32_t qpn)
{
	if (!e->multi)
		return 0;
	return (int)__atomic_load_n(&e->qp_owner[qpn & DROCE_QPN_MASK], __ATOMIC_RELAXED) - 1;
}

static void qp_owner_set(struct engine *e, uint32_t qpn, int lc)
{
	if (e->multi)
		__atomic_store_n(&e->qp_owner[qpn & DROCE_QPN_MASK], (uint8_t)(lc + 1),
				 __ATOMIC_RELEASE);
}

static int qp_insert(struct engine_lcore *e, struct engine_qp *q)
{
	unsigned int i = qp_slot(q->tqp.qpn);

	if (e->n_qps >= ENGINE_QPS_MAX / 2)
		return -ENOSPC;
	while (e->qps[i] != NULL)
		i = (i + 1) & (ENGINE_QPS_MAX - 1);
	e->qps[i] = q;
	e->n_qps++;
	return 0;
}

/* The dense list the loop walks for sends. */
static int list_add(struct engine_lcore *e, struct engine_qp *q)
{
	if (e->n_list == ENGINE_QPS_MAX / 2)
		return -ENOSPC;
	q->list_idx = e->n_list;
	e->list[e->n_list++] = q;
	return 0;
}

static void list_del(struct engine_lcore *e, struct engine_qp *q)
{
	struct engine_qp *last = e->list[--e->n_list];

	e->list[q->list_idx] = last;
	last->list_idx = q->list_idx;
}

/* Remove QP @p qpn; its queues' ids into @p c (send_cq, recv_cq, srq) for the caller. */
static int qp_remove(struct engine_lcore *e, uint32_t qpn, struct engine_cmd *c)
{
	unsigned int i = qp_slot(qpn), j;

	while (e->qps[i] != NULL && e->qps[i]->tqp.qpn != qpn)
		i = (i + 1) & (ENGINE_QPS_MAX - 1);
	if (e->qps[i] == NULL)
		return -ENOENT;
	c->send_cq = e->qps[i]->send_cq;
	c->recv_cq = e->qps[i]->recv_cq;
	c->srq = e->qps[i]->srq;
	list_del(e, e->qps[i]);
	engine_counters_retire(e->qps[i]);
	droce_tqp_fini(&e->qps[i]->pq->env, &e->qps[i]->tqp);
	free(e->qps[i]);
	e->qps[i] = NULL;
	e->n_qps--;
	/* re-insert the rest of the run so that lookups never stop early */
	for (j = (i + 1) & (ENGINE_QPS_MAX - 1); e->qps[j] != NULL;
	     j = (j + 1) & (ENGINE_QPS_MAX - 1)) {
		struct engine_qp *q = e->qps[j];

		e->qps[j] = NULL;
		e->n_qps--;
		qp_insert(e, q);
	}
	return 0;
}

static struct engine_port *port_by_name(struct engine *e, const char *name)
{
	for (unsigned int i = 0; i < e->n_ports; i++)
		if (strcmp(e->ports[i].conf.name, name) == 0)
			return &e->ports[i];
	return NULL;
}

/* On lcore 0, which sends the requests the table lists: the table as the lcores take it. */
static int neigh_resolve_on(struct engine_lcore *lc, struct engine_cmd *c)
{
	struct engine *e = lc->e;
	struct engine_port *p = port_by_name(e, c->name);
	int rc;

	if (p == NULL)
		return -ENOENT;
	rc = droce_neigh_resolve(p->neigh, c->ip,
				 engine_neigh_lock(e, p, rte_get_timer_cycles() / e->hz_per_us),
				 c->mac);
	engine_neigh_unlock(e, p);
	return rc;
}

/* On the lcore the placement chose: the QP into its tables. */
static int apply_qp_add(struct engine_lcore *lc, const struct droce_engine_qp *d)
{
	struct engine *e = lc->e;
	struct engine_port *p = port_by_name(e, d->port);
	struct engine_qp *q;
	int rc;

	if (p == NULL)
		return -EINVAL;
	if (engine_qp_find(lc, d->qpn) != NULL)
		return -EEXIST;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return -ENOMEM;
	rc = droce_tqp_init(&q->tqp, d->qpn, d->type, d->pd, d->sq_ring, d->sq_len, d->rq_ring,
			    d->rq_len);
	if (rc == 0)
		rc = list_add(lc, q);
	if (rc == 0) {
		rc = qp_insert(lc, q);
		if (rc != 0)
			list_del(lc, q);
	}
	if (rc != 0) {
		free(q);
		return rc;
	}
	q->port = p;
	q->pq = &p->pq[lc->idx];
	q->qp = d->qp;
	q->srq = d->srq;
	q->send_cq = d->send_cq;
	q->recv_cq = d->recv_cq;
	q->tqp.sq_sig_all = d->sq_sig_all;
	q->tqp.scq = &e->cqs[d->send_cq].tcq;
	q->tqp.rcq = &e->cqs[d->recv_cq].tcq;
	q->tqp.user = d->qp;
	if (d->srq >= 0) {
		q->tqp.srq = &e->srqs[d->srq].ring;
		q->tqp.srq_lock = &e->srqs[d->srq].lock;
		q->tqp.srq_user = e->srqs[d->srq].srq;
	}
	return 0;
}

/* A command about one QP, on the QP's lcore. */
static int apply_lcore(struct engine_lcore *lc, struct engine_cmd *c)
{
	struct engine *e = lc->e;
	struct engine_qp *q;

	switch (c->type) {
	case CMD_NONE:
		return 0;
	case CMD_QP_ADD:
		return apply_qp_add(lc, c->qp);
	case CMD_QP_MODIFY: {
		enum ibv_qp_state old;

		q = engine_qp_find(lc, c->id);
		if (q == NULL)
			return -ENOENT;
		old = q->tqp.state;
		/* RESET zeroes the QP's counters: the port's sums keep what they held */
		if (c->state == IBV_QPS_RESET)
			engine_counters_retire(q);
		droce_tqp_modify(&q->pq->env, &q->tqp, c->attr, c->mask, c->state);
		/* the QP stayed in the Error state the engine had moved it to: the modify
		 * bumped the verbs side's generation, so publish the error again */
		if (q->tqp.state == IBV_QPS_ERR && c->state != IBV_QPS_ERR)
			e->hooks.qp_error(q->qp, IBV_QPS_ERR, 0);
		/* moved to Error by the application: a QP of an SRQ raises Last WQE Reached
		 * as when the engine moves it (droce_tqp_to_error()) */
		if (old != IBV_QPS_ERR && c->state == IBV_QPS_ERR && q->tqp.srq != NULL)
			e->hooks.qp_error(q->qp, IBV_QPS_ERR, IBV_EVENT_QP_LAST_WQE_REACHED);
		return 0;
	}
	case CMD_QP_DEL:
		return qp_remove(lc, c->id, c);
	case CMD_COUNTERS_QP:
		return engine_counters_qp(lc, c->id, c->ctrs, c->n);
	case CMD_NEIGH:
		return neigh_resolve_on(lc, c);
	default:
		return -EINVAL;
	}
}

/* A command about what the lcores share, run by the caller while every lcore is parked. */
static int apply_parked(struct engine *e, struct engine_cmd *c)
{
	int rc;

	switch (c->type) {
	case CMD_CQ_ADD:
		if (c->id >= ENGINE_CQS_MAX)
			return -EINVAL;
		if (e->cqs[c->id].used)
			return -EBUSY;
		memset(&e->cqs[c->id], 0, sizeof(e->cqs[c->id]));
		e->cqs[c->id].home.owner = -1;
		rc = droce_ring_prod_attach(&e->cqs[c->id].tcq.prod, c->ring, c->len);
		if (rc != 0)
			return rc;
		/* CQEs are written whole: a slot of any other size is refused */
		if (e->cqs[c->id].tcq.prod.slot_size != sizeof(struct droce_cqe))
			return -EINVAL;
		e->cqs[c->id].tcq.user = c->obj;
		e->cqs[c->id].used = true;
		return 0;
	case CMD_CQ_DEL:
		if (c->id >= ENGINE_CQS_MAX)
			return -EINVAL;
		e->cqs[c->id].used = false;
		return 0;
	case CMD_SRQ_ADD:
		if (c->id >= ENGINE_SRQS_MAX)
			return -EINVAL;
		if (e->srqs[c->id].used)
			return -EBUSY;
		memset(&e->srqs[c->id], 0, sizeof(e->srqs[c->id]));
		e->srqs[c->id].home.owner = -1;
		rc = droce_ring_cons_attach(&e->srqs[c->id].ring, c->ring, c->len);
		if (rc != 0)
			return rc;
		/* receive WQEs are copied out whole: a header to 1024 bytes */
		if (e->srqs[c->id].ring.slot_size < sizeof(struct droce_recv_wqe) ||
		    e->srqs[c->id].ring.slot_size > 1024)
			return -EINVAL;
		e->srqs[c->id].srq = c->obj;
		e->srqs[c->id].used = true;
		return 0;
	case CMD_SRQ_DEL:
		if (c->id >= ENGINE_SRQS_MAX)
			return -EINVAL;
		e->srqs[c->id].used = false;
		return 0;
	case CMD_AH_ADD:
		if (c->id >= ENGINE_AHS_MAX)
			return -EINVAL;
		e->ahs[c->id].pd = c->pd;
		e->ahs[c->id].attr = *c->ah;
		e->ahs[c->id].valid = true;
		return 0;
	case CMD_AH_DEL:
		if (c->id >= ENGINE_AHS_MAX)
			return -EINVAL;
		e->ahs[c->id].valid = false;
		return 0;
	case CMD_COUNTERS_PORT:
		return engine_counters_port(e, c->name, c->ctrs, c->n);
	case CMD_QP_LIST: {
		unsigned int n = 0;

		for (unsigned int k = 0; k < e->n_lcores; k++)
			for (unsigned int i = 0; i < e->lcores[k].n_list; i++, n++)
				if (n < c->n)
					c->qpns[n] = e->lcores[k].list[i]->tqp.qpn;
		return (int)n;
	}
	case CMD_CAPTURE: {
		struct engine_port *p = port_by_name(e, c->name);
		struct droce_capture *old;

		if (p == NULL)
			return -ENOENT;
		old = p->cap;
		p->cap = c->obj;
		c->obj = old; /* closed by the caller, off the lcore */
		return 0;
	}
	case CMD_FAULT: {
		struct engine_port *p = port_by_name(e, c->name);

		if (p == NULL)
			return -ENOENT;
		engine_fault_swap(p, c->obj, c->fault); /* the old ones freed by the caller */
		return 0;
	}
	default:
		return -EINVAL;
	}
}

void engine_cmd_apply(struct engine_lcore *lc)
{
	/* pairs with the release store in cmd_on(): the command is complete */
	struct engine_cmd *c = __atomic_load_n(&lc->pending, __ATOMIC_ACQUIRE);

	if (c == NULL)
		return;
	if (c->type == CMD_PARK) {
		/*
		 * Wait until the caller releases the lcores: unparks moves on. Read before the
		 * answer, so that a release right after it is not missed, and a count rather
		 * than a flag, so that a park right after the release cannot hide it. The
		 * acquire load makes what the caller changed meanwhile visible.
		 */
		uint32_t gen = __atomic_load_n(&lc->e->unparks, __ATOMIC_ACQUIRE);

		__atomic_store_n(&lc->pending, NULL, __ATOMIC_RELEASE); /* c is gone now */
		while (__atomic_load_n(&lc->e->unparks, __ATOMIC_ACQUIRE) == gen)
			rte_pause();
		return;
	}
	c->result = apply_lcore(lc, c);
	/* pairs with the caller's acquire load: the result and the objects are in place */
	__atomic_store_n(&lc->pending, NULL, __ATOMIC_RELEASE);
}

/* The command through lcore @p lc, ctl_lock held by the caller. */
static int cmd_on(struct engine *e, struct engine_lcore *lc, struct engine_cmd *cmd)
{
	if (!__atomic_load_n(&e->running, __ATOMIC_ACQUIRE))
		return -ENODEV;
	__atomic_store_n(&lc->pending, cmd, __ATOMIC_RELEASE);
	while (__atomic_load_n(&lc->pending, __ATOMIC_ACQUIRE) != NULL)
		sched_yield();
	return cmd->result;
}

/* Every lcore waits between two loop passes until unpark(); ctl_lock held. */
static int park(struct engine *e)
{
	if (!__atomic_load_n(&e->running, __ATOMIC_ACQUIRE))
		return -ENODEV;
	for (unsigned int k = 0; k < e->n_lcores; k++) {
		struct engine_cmd c = {.type = CMD_PARK};

		(void)cmd_on(e, &e->lcores[k], &c);
	}
	return 0;
}

static void unpark(struct engine *e)
{
	/* pairs with the parked lcores' acquire load: what the caller changed is visible */
	__atomic_fetch_add(&e->unparks, 1, __ATOMIC_RELEASE);
}

/* ---- QP placement (control path, ctl_lock held) */

static void home_bind(struct engine_home *h, int lc)
{
	if (h->owner < 0)
		h->owner = lc; /* the first QP to use it */
	h->on[lc]++;
}

static void home_unbind(const struct engine *e, struct engine_home *h, int lc)
{
	unsigned int users = 0;

	h->on[lc]--;
	for (unsigned int k = 0; k < e->n_lcores; k++)
		users += h->on[k];
	if (users == 0)
		h->owner = -1;
}

/* QPs of more than one lcore use it. */
static bool home_spans(const struct engine *e, const struct engine_home *h)
{
	unsigned int lcores = 0;

	for (unsigned int k = 0; k < e->n_lcores; k++)
		lcores += h->on[k] > 0;
	return lcores > 1;
}

/* The queues of a QP: its send CQ, receive CQ and SRQ (NULL without one). */
static void qp_homes(struct engine *e, uint32_t scq, uint32_t rcq, int32_t srq,
		     struct engine_home *h[3], struct droce_shared_lock *l[3])
{
	h[0] = &e->cqs[scq].home;
	l[0] = &e->cqs[scq].tcq.lock;
	h[1] = &e->cqs[rcq].home;
	l[1] = &e->cqs[rcq].tcq.lock;
	h[2] = srq >= 0 ? &e->srqs[srq].home : NULL;
	l[2] = srq >= 0 ? &e->srqs[srq].lock : NULL;
}

/* Each queue's lock is taken while QPs of several lcores use it: changed with all parked. */
static void locks_update(struct engine *e, struct engine_home *h[3], struct droce_shared_lock *l[3])
{
	bool change = false;
	int i;

	for (i = 0; i < 3; i++)
		change |= h[i] != NULL && l[i]->shared != home_spans(e, h[i]);
	if (!change || park(e) != 0)
		return;
	for (i = 0; i < 3; i++)
		if (h[i] != NULL)
			l[i]->shared = home_spans(e, h[i]);
	unpark(e);
}

/* The lcore a new QP goes to: where its queues are, else the one with the fewest QPs. */
static int qp_place(struct engine *e, struct engine_home *h[3])
{
	unsigned int k, best = 0;

	for (int i = 0; i < 3; i++)
		if (h[i] != NULL && h[i]->owner >= 0)
			return h[i]->owner;
	for (k = 1; k < e->n_lcores; k++)
		if (e->lcores[k].n_qps < e->lcores[best].n_qps)
			best = k;
	return (int)best;
}

static int qp_add_locked(struct engine *e, struct engine_cmd *c)
{
	const struct droce_engine_qp *d = c->qp;
	struct engine_home *h[3];
	struct droce_shared_lock *l[3];
	int lc, rc;

	if (d->send_cq >= ENGINE_CQS_MAX || d->recv_cq >= ENGINE_CQS_MAX ||
	    !e->cqs[d->send_cq].used || !e->cqs[d->recv_cq].used ||
	    (d->srq >= 0 && (d->srq >= ENGINE_SRQS_MAX || !e->srqs[d->srq].used)))
		return -EINVAL;
	if (d->type != IBV_QPT_UD && d->type != IBV_QPT_RC && d->type != IBV_QPT_UC)
		return -EOPNOTSUPP;
	if (!__atomic_load_n(&e->running, __ATOMIC_ACQUIRE))
		return -ENODEV;
	qp_homes(e, d->send_cq, d->recv_cq, d->srq, h, l);
	lc = qp_place(e, h);
	if (engine_qp_owner(e, d->qpn) >= 0 && e->multi)
		return -EEXIST;
	for (int i = 0; i < 3; i++)
		if (h[i] != NULL)
			home_bind(h[i], lc);
	locks_update(e, h, l);
	qp_owner_set(e, d->qpn, lc);
	rc = cmd_on(e, &e->lcores[lc], c);
	if (rc != 0) {
		qp_owner_set(e, d->qpn, -1);
		for (int i = 0; i < 3; i++)
			if (h[i] != NULL)
				home_unbind(e, h[i], lc);
		locks_update(e, h, l);
	}
	return rc;
}

static int qp_del_locked(struct engine *e, struct engine_cmd *c)
{
	int lc = engine_qp_owner(e, c->id), rc;
	struct engine_home *h[3];
	struct droce_shared_lock *l[3];

	if (lc < 0)
		return 0;
	rc = cmd_on(e, &e->lcores[lc], c);
	if (rc == -ENOENT)
		return 0; /* nothing to remove */
	if (rc != 0)
		return rc;
	qp_owner_set(e, c->id, -1);
	qp_homes(e, c->send_cq, c->recv_cq, c->srq, h, l);
	for (int i = 0; i < 3; i++)
		if (h[i] != NULL)
			home_unbind(e, h[i], lc);
	locks_update(e, h, l);
	return 0;
}

/* The command to where it applies, ctl_lock held by the caller. */
static int cmd_run_locked(struct engine *e, struct engine_cmd *cmd)
{
	int rc = 0, lc;

	switch (cmd->type) {
	case CMD_NONE:
		/* a round trip through every lcore, one after the other */
		for (unsigned int k = 0; k < e->n_lcores && rc == 0; k++)
			rc = cmd_on(e, &e->lcores[k], cmd);
		return rc;
	case CMD_QP_ADD:
		return qp_add_locked(e, cmd);
	case CMD_QP_DEL:
		return qp_del_locked(e, cmd);
	case CMD_QP_MODIFY:
	case CMD_COUNTERS_QP:
		lc = engine_qp_owner(e, cmd->id);
		if (!__atomic_load_n(&e->running, __ATOMIC_ACQUIRE))
			return -ENODEV;
		return lc < 0 ? -ENOENT : cmd_on(e, &e->lcores[lc], cmd);
	default:
		rc = park(e);
		if (rc != 0)
			return rc;
		rc = apply_parked(e, cmd);
		unpark(e);
		return rc;
	}
}

int engine_cmd_run(struct engine_cmd *cmd)
{
	struct engine *e = &droce_engine;
	int rc;

	pthread_mutex_lock(&e->ctl_lock);
	rc = cmd_run_locked(e, cmd);
	pthread_mutex_unlock(&e->ctl_lock);
	return rc;
}

int droce_engine_cq_add(struct ibv_cq *cq, void *ring, size_t len, uint32_t *id)
{
	static uint32_t next_id;
	struct engine_cmd c = {.type = CMD_CQ_ADD, .obj = cq, .ring = ring, .len = len};
	int rc, tries;

	/* ids are handed out round robin; one in use is refused and the next tried */
	for (tries = 0; tries < ENGINE_CQS_MAX; tries++) {
		c.id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED) % ENGINE_CQS_MAX;
		rc = engine_cmd_run(&c);
		if (rc != -EBUSY)
			break;
	}
	if (rc == 0)
		*id = c.id;
	return rc;
}

int droce_engine_cq_del(uint32_t id)
{
	struct engine_cmd c = {.type = CMD_CQ_DEL, .id = id};

	return engine_cmd_run(&c);
}

int droce_engine_srq_add(struct ibv_srq *srq, void *ring, size_t len, uint32_t *id)
{
	static uint32_t next_id;
	struct engine_cmd c = {.type = CMD_SRQ_ADD, .obj = srq, .ring = ring, .len = len};
	int rc, tries;

	for (tries = 0; tries < ENGINE_SRQS_MAX; tries++) {
		c.id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED) % ENGINE_SRQS_MAX;
		rc = engine_cmd_run(&c);
		if (rc != -EBUSY)
			break;
	}
	if (rc == 0)
		*id = c.id;
	return rc;
}

int droce_engine_srq_del(uint32_t id)
{
	struct engine_cmd c = {.type = CMD_SRQ_DEL, .id = id};

	return engine_cmd_run(&c);
}

int droce_engine_qp_add(const struct droce_engine_qp *d)
{
	struct engine_cmd c = {.type = CMD_QP_ADD, .qp = d};

	if (d == NULL || d->port == NULL)
		return -EINVAL;
	return engine_cmd_run(&c);
}

int droce_engine_qp_modify(uint32_t qpn, const struct ibv_qp_attr *attr, int mask,
			   enum ibv_qp_state state)
{
	struct engine_cmd c = {
		.type = CMD_QP_MODIFY, .id = qpn, .attr = attr, .mask = mask, .state = state};

	return engine_cmd_run(&c);
}

int droce_engine_qp_del(uint32_t qpn)
{
	struct engine_cmd c = {.type = CMD_QP_DEL, .id = qpn};

	return engine_cmd_run(&c);
}

int droce_engine_ah_add(uint32_t id, uint32_t pd, const struct ibv_ah_attr *attr)
{
	struct engine_cmd c = {.type = CMD_AH_ADD, .id = id, .pd = pd, .ah = attr};

	return engine_cmd_run(&c);
}

int droce_engine_ah_del(uint32_t id)
{
	struct engine_cmd c = {.type = CMD_AH_DEL, .id = id};

	return engine_cmd_run(&c);
}

int droce_engine_capture(const char *port, const char *path)
{
	struct engine_cmd c = {.type = CMD_CAPTURE, .name = port};
	struct droce_capture *cap = NULL;
	int rc;

	if (port == NULL)
		return -EINVAL;
	/* the file is opened here, not on the lcore: it makes system calls */
	if (path != NULL) {
		rc = droce_capture_open(path, 0, &cap);
		if (rc != 0)
			return rc;
	}
	c.obj = cap;
	rc = engine_cmd_run(&c);
	if (rc != 0) {
		droce_capture_close(cap);
		return rc;
	}
	droce_capture_close(c.obj); /* the one it replaced, if any */
	return 0;
}

int droce_engine_neigh_resolve(const char *port, const uint8_t ip[16], uint8_t mac[6])
{
	struct engine_cmd c = {.type = CMD_NEIGH, .name = port, .ip = ip, .mac = mac};
	struct engine *e = &droce_engine;
	int rc;

	if (port == NULL || ip == NULL || mac == NULL)
		return -EINVAL;
	pthread_mutex_lock(&e->ctl_lock);
	rc = cmd_on(e, &e->lcores[0], &c);
	pthread_mutex_unlock(&e->ctl_lock);
	return rc;
}

int droce_engine_qp_list(uint32_t *qpns, unsigned int n)
{
	struct engine_cmd c = {.type = CMD_QP_LIST, .qpns = qpns, .n = n};

	if (qpns == NULL && n > 0)
		return -EINVAL;
	return engine_cmd_run(&c);
}

int droce_engine_fault_set(const char *port, const struct droce_engine_fault_conf *conf)
{
	static const struct droce_engine_fault_conf none;
	struct engine_cmd c = {.type = CMD_FAULT, .name = port};
	struct droce_fault *f[ENGINE_LCORES_MAX];
	struct engine *e = &droce_engine;
	int rc;

	if (port == NULL)
		return -EINVAL;
	if (conf == NULL || !conf->enabled)
		conf = &none;
	/* under the control lock throughout: the EAL heap the injectors live in cannot be
	 * torn down by droce_engine_stop() meanwhile */
	pthread_mutex_lock(&e->ctl_lock);
	if (!__atomic_load_n(&e->running, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&e->ctl_lock);
		return -ENODEV; /* and no EAL heap to build an injector in */
	}
	/* built here, not on the lcores: it allocates, and a bad rule fails before any swap */
	rc = engine_fault_build_all(conf, e->n_lcores, f);
	if (rc == 0) {
		c.obj = f;
		c.fault = conf;
		rc = cmd_run_locked(e, &c);
		/* on success the ones it replaced (emptied into their queues), else the new ones */
		for (unsigned int k = 0; k < e->n_lcores; k++)
			droce_fault_free(f[k]);
	}
	pthread_mutex_unlock(&e->ctl_lock);
	return rc;
}

int droce_engine_fault_get(const char *port, struct droce_engine_fault_conf *conf)
{
	struct engine *e = &droce_engine;
	int rc = -ENOENT;

	if (port == NULL || conf == NULL)
		return -EINVAL;
	/* the lcore changes a port's configuration only inside a command, under this lock */
	pthread_mutex_lock(&e->ctl_lock);
	if (!__atomic_load_n(&e->running, __ATOMIC_ACQUIRE)) {
		rc = -ENODEV;
	} else {
		const struct engine_port *p = port_by_name(e, port);

		if (p != NULL) {
			*conf = p->conf.fault;
			rc = 0;
		}
	}
	pthread_mutex_unlock(&e->ctl_lock);
	return rc;
}
