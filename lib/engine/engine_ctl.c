/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control path into the engine lcore: a command is handed over through
 * one pointer and the caller waits until the lcore has applied it between two
 * loop passes. Objects are therefore only ever touched by the lcore.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "engine_priv.h"

/* QPN -> QP, open addressing with linear probing; deletion re-inserts the run after it. */
static unsigned int qp_slot(uint32_t qpn)
{
	return (qpn * 2654435761u) & (ENGINE_QPS_MAX - 1);
}

struct engine_qp *engine_qp_find(struct engine *e, uint32_t qpn)
{
	unsigned int i = qp_slot(qpn), n;

	for (n = 0; n < ENGINE_QPS_MAX && e->qps[i] != NULL;
	     n++, i = (i + 1) & (ENGINE_QPS_MAX - 1))
		if (e->qps[i]->tqp.qpn == qpn)
			return e->qps[i];
	return NULL;
}

static int qp_insert(struct engine *e, struct engine_qp *q)
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
static int list_add(struct engine *e, struct engine_qp *q)
{
	if (e->n_list == ENGINE_QPS_MAX / 2)
		return -ENOSPC;
	q->list_idx = e->n_list;
	e->list[e->n_list++] = q;
	return 0;
}

static void list_del(struct engine *e, struct engine_qp *q)
{
	struct engine_qp *last = e->list[--e->n_list];

	e->list[q->list_idx] = last;
	last->list_idx = q->list_idx;
}

static void qp_remove(struct engine *e, uint32_t qpn)
{
	unsigned int i = qp_slot(qpn), j;

	while (e->qps[i] != NULL && e->qps[i]->tqp.qpn != qpn)
		i = (i + 1) & (ENGINE_QPS_MAX - 1);
	if (e->qps[i] == NULL)
		return;
	list_del(e, e->qps[i]);
	engine_counters_retire(e->qps[i]);
	droce_tqp_fini(&e->qps[i]->port->env, &e->qps[i]->tqp);
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
}

static struct engine_port *port_by_name(struct engine *e, const char *name)
{
	for (unsigned int i = 0; i < e->n_ports; i++)
		if (strcmp(e->ports[i].conf.name, name) == 0)
			return &e->ports[i];
	return NULL;
}

static int apply_qp_add(struct engine *e, const struct droce_engine_qp *d)
{
	struct engine_port *p = port_by_name(e, d->port);
	struct engine_qp *q;
	int rc;

	if (p == NULL || d->send_cq >= ENGINE_CQS_MAX || d->recv_cq >= ENGINE_CQS_MAX ||
	    !e->cqs[d->send_cq].used || !e->cqs[d->recv_cq].used ||
	    (d->srq >= 0 && (d->srq >= ENGINE_SRQS_MAX || !e->srqs[d->srq].used)))
		return -EINVAL;
	if (d->type != IBV_QPT_UD && d->type != IBV_QPT_RC && d->type != IBV_QPT_UC)
		return -EOPNOTSUPP;
	if (engine_qp_find(e, d->qpn) != NULL)
		return -EEXIST;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return -ENOMEM;
	rc = droce_tqp_init(&q->tqp, d->qpn, d->type, d->pd, d->sq_ring, d->sq_len, d->rq_ring,
			    d->rq_len);
	if (rc == 0)
		rc = list_add(e, q);
	if (rc == 0) {
		rc = qp_insert(e, q);
		if (rc != 0)
			list_del(e, q);
	}
	if (rc != 0) {
		free(q);
		return rc;
	}
	q->port = p;
	q->qp = d->qp;
	q->srq = d->srq;
	q->tqp.sq_sig_all = d->sq_sig_all;
	q->tqp.scq = &e->cqs[d->send_cq].tcq;
	q->tqp.rcq = &e->cqs[d->recv_cq].tcq;
	q->tqp.user = d->qp;
	if (d->srq >= 0) {
		q->tqp.srq = &e->srqs[d->srq].ring;
		q->tqp.srq_user = e->srqs[d->srq].srq;
	}
	return 0;
}

static int apply(struct engine *e, struct engine_cmd *c)
{
	struct engine_qp *q;
	int rc;

	switch (c->type) {
	case CMD_CQ_ADD:
		if (c->id >= ENGINE_CQS_MAX)
			return -EINVAL;
		if (e->cqs[c->id].used)
			return -EBUSY;
		memset(&e->cqs[c->id], 0, sizeof(e->cqs[c->id]));
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
	case CMD_QP_ADD:
		return apply_qp_add(e, c->qp);
	case CMD_QP_MODIFY: {
		enum ibv_qp_state old;

		q = engine_qp_find(e, c->id);
		if (q == NULL)
			return -ENOENT;
		old = q->tqp.state;
		/* RESET zeroes the QP's counters: the port's sums keep what they held */
		if (c->state == IBV_QPS_RESET)
			engine_counters_retire(q);
		droce_tqp_modify(&q->tqp, c->attr, c->mask, c->state);
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
		qp_remove(e, c->id);
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
	case CMD_COUNTERS_QP:
		return engine_counters_qp(e, c->id, c->ctrs, c->n);
	case CMD_QP_LIST:
		for (unsigned int i = 0; i < e->n_list && i < c->n; i++)
			c->qpns[i] = e->list[i]->tqp.qpn;
		return (int)e->n_list;
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
		c->obj = engine_fault_swap(p, c->obj, c->fault); /* freed by the caller */
		return 0;
	}
	default:
		return -EINVAL;
	}
}

void engine_cmd_apply(struct engine *e)
{
	/* pairs with the release store in engine_cmd_run(): the command is complete */
	struct engine_cmd *c = __atomic_load_n(&e->pending, __ATOMIC_ACQUIRE);

	if (c == NULL)
		return;
	c->result = apply(e, c);
	/* pairs with the caller's acquire load: the result and the objects are in place */
	__atomic_store_n(&e->pending, NULL, __ATOMIC_RELEASE);
}

/* The command through the lcore, ctl_lock held by the caller. */
static int cmd_run_locked(struct engine *e, struct engine_cmd *cmd)
{
	if (!__atomic_load_n(&e->running, __ATOMIC_ACQUIRE))
		return -ENODEV;
	__atomic_store_n(&e->pending, cmd, __ATOMIC_RELEASE);
	while (__atomic_load_n(&e->pending, __ATOMIC_ACQUIRE) != NULL)
		sched_yield();
	return cmd->result;
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
	struct droce_fault *f;
	int rc;

	struct engine *e = &droce_engine;

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
	/* built here, not on the lcore: it allocates, and a bad rule fails before any swap */
	rc = engine_fault_build(conf, &f);
	if (rc == 0) {
		c.obj = f;
		c.fault = conf;
		rc = cmd_run_locked(e, &c);
		/* on success the one it replaced (emptied by the lcore), else the new one */
		droce_fault_free(rc == 0 ? c.obj : f);
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
