/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection on a port's transmit path (doc/fault-injection.md, "In the
 * engine"): the port's configuration (DROCE_DEVICES fault=) becomes one rule
 * per kind with a non-zero rate; every frame the engine sends on the port
 * gathers in a burst that runs through the injector before the port's TX
 * buffer; each loop the partial burst runs and held frames that are due
 * leave; at stop the hold queue drains. Time is the engine's microsecond clock.
 *
 * Ports without fault= have no injector: engine_port_tx() tests one pointer.
 * Each engine lcore has an injector of its own on each port (its queue's frames
 * keep their order through it, and no lock is taken); lcore k's generators are
 * seeded with seed + k, and drop_at indices count the frames of each lcore.
 * droce_engine_fault_set() swaps a port's injectors at run time (engine_ctl.c):
 * the new ones are built off the lcores, then, with every lcore parked, the old
 * ones are emptied into their queues and the new ones put in place.
 */
#include <errno.h>

#include <rte_cycles.h>

#include "engine_priv.h"

#define REORDER_AFTER_DEFAULT 3
#define REORDER_MAX_US        100
#define DELAY_US              100

static uint64_t now_us(void)
{
	return rte_get_timer_cycles() / droce_engine.hz_per_us;
}

/* A rule of @p kind at @p rate; rate 0 adds none. 0 or -errno. */
static int rule_add(struct droce_fault *f, const struct droce_engine_fault_conf *c,
		    enum droce_fault_kind kind, double rate)
{
	struct droce_fault_rule r = {
		.kind = kind,
		.match = c->roce_only ? DROCE_FAULT_MATCH_ROCE : 0,
		.rate = rate,
		.reorder = {.after = c->reorder_after ? c->reorder_after : REORDER_AFTER_DEFAULT,
			    .max_ticks = c->reorder_max_us ? c->reorder_max_us : REORDER_MAX_US},
		.delay = {.ticks = c->delay_us ? c->delay_us : DELAY_US},
		/* the payload, pad and ICRC: the receiver's parser finds a bad ICRC */
		.corrupt = {.region = DROCE_FAULT_REGION_ICRC,
			    .offset = DROCE_FAULT_OFFSET_RANDOM,
			    .bit = DROCE_FAULT_BIT_RANDOM},
	};
	int rc;

	if (rate == 0.0)
		return 0;
	rc = droce_fault_rule_add(f, &r);
	return rc < 0 ? rc : 0;
}

/* The drop rule by index (drop_at). 0 or -errno. */
static int drop_at_add(struct droce_fault *f, const struct droce_engine_fault_conf *c)
{
	struct droce_fault_range ranges[DROCE_ENGINE_FAULT_AT_MAX];
	struct droce_fault_rule r = {
		.kind = DROCE_FAULT_DROP,
		.match = c->roce_only ? DROCE_FAULT_MATCH_ROCE : 0,
		.ranges = ranges,
		.nb_ranges = (uint16_t)c->n_drop_at,
	};
	int rc;

	if (c->n_drop_at > DROCE_ENGINE_FAULT_AT_MAX)
		return -EINVAL;
	for (unsigned int i = 0; i < c->n_drop_at; i++) {
		ranges[i].first = c->drop_at[i].first;
		ranges[i].last = c->drop_at[i].last;
	}
	rc = droce_fault_rule_add(f, &r);
	return rc < 0 ? rc : 0;
}

int engine_fault_build(const struct droce_engine_fault_conf *c, struct droce_fault **fp)
{
	struct droce_fault_conf fc = {
		.hold_cap = ENGINE_FAULT_HOLD,
		.seed = c->seed,
		.socket_id = SOCKET_ID_ANY,
	};
	struct droce_fault *f;
	int rc;

	*fp = NULL;
	if (!c->enabled)
		return 0;
	rc = droce_fault_create(&fc, &f);
	if (rc != 0)
		return rc;
	/* rules in the injector's order of kinds; each draws from its own generator */
	rc = rule_add(f, c, DROCE_FAULT_DROP, c->drop);
	if (rc == 0 && c->n_drop_at > 0)
		rc = drop_at_add(f, c);
	if (rc == 0)
		rc = rule_add(f, c, DROCE_FAULT_DUP, c->dup);
	if (rc == 0)
		rc = rule_add(f, c, DROCE_FAULT_CORRUPT, c->corrupt);
	if (rc == 0)
		rc = rule_add(f, c, DROCE_FAULT_DELAY, c->delay);
	if (rc == 0)
		rc = rule_add(f, c, DROCE_FAULT_REORDER, c->reorder);
	if (rc != 0) {
		droce_fault_free(f);
		return rc;
	}
	*fp = f;
	return 0;
}

int engine_fault_build_all(const struct droce_engine_fault_conf *c, unsigned int n,
			   struct droce_fault **f)
{
	for (unsigned int k = 0; k < n; k++) {
		struct droce_engine_fault_conf mine = *c;
		int rc;

		/* each lcore's injector its own generators; lcore 0's are the configuration's */
		mine.seed = c->seed + k;
		rc = engine_fault_build(&mine, &f[k]);
		if (rc != 0) {
			while (k-- > 0) {
				droce_fault_free(f[k]);
				f[k] = NULL;
			}
			return rc;
		}
	}
	return 0;
}

int engine_fault_create(struct engine_port *p)
{
	struct droce_fault *f[ENGINE_LCORES_MAX];
	unsigned int n = droce_engine.n_lcores;
	int rc = engine_fault_build_all(&p->conf.fault, n, f);

	for (unsigned int k = 0; rc == 0 && k < n; k++) {
		p->pq[k].fault = f[k];
		p->pq[k].fault_n = 0;
	}
	return rc;
}

/* Run the frames gathered so far through the injector; hand its output to the queue. */
static unsigned int fault_burst(struct engine_pq *pq, uint64_t now)
{
	struct rte_mbuf *out[ENGINE_FAULT_OUT];
	uint16_t nb, i;

	nb = droce_fault_process_burst(pq->fault, pq->fault_in, pq->fault_n, out, RTE_DIM(out),
				       now);
	pq->fault_n = 0;
	for (i = 0; i < nb; i++)
		droce_port_tx(&pq->port->port, pq->queue, out[i]);
	return nb;
}

void engine_fault_tx(struct engine_pq *pq, struct rte_mbuf *m)
{
	pq->fault_in[pq->fault_n++] = m;
	if (pq->fault_n == DROCE_PORT_BURST)
		fault_burst(pq, now_us());
}

unsigned int engine_fault_flush(struct engine_pq *pq, uint64_t now)
{
	struct rte_mbuf *out[ENGINE_FAULT_OUT];
	unsigned int work = 0;
	uint16_t nb, i;

	if (pq->fault_n > 0)
		work += fault_burst(pq, now);
	nb = droce_fault_flush_burst(pq->fault, now, out, RTE_DIM(out));
	for (i = 0; i < nb; i++)
		droce_port_tx(&pq->port->port, pq->queue, out[i]);
	return work + nb;
}

/*
 * Hand on whatever the injector holds, due or not: the gathered burst first, then the hold
 * queue. Run with the lcores parked or stopped.
 */
static void fault_empty(struct engine_pq *pq, uint64_t now)
{
	struct rte_mbuf *out[ENGINE_FAULT_OUT];
	uint16_t nb, i;

	if (pq->fault_n > 0)
		fault_burst(pq, now);
	while ((nb = droce_fault_drain_burst(pq->fault, out, RTE_DIM(out))) > 0)
		for (i = 0; i < nb; i++)
			droce_port_tx(&pq->port->port, pq->queue, out[i]);
}

void engine_fault_swap(struct engine_port *p, struct droce_fault **f,
		       const struct droce_engine_fault_conf *c)
{
	for (unsigned int k = 0; k < droce_engine.n_lcores; k++) {
		struct engine_pq *pq = &p->pq[k];
		struct droce_fault *old = pq->fault;

		/* frames the old rules held leave now, in their order: none is lost or kept
		 * back by rules that no longer apply */
		if (old != NULL)
			fault_empty(pq, now_us());
		pq->fault = f[k];
		pq->fault_n = 0;
		f[k] = old;
	}
	p->conf.fault = *c;
	engine_env_zero_copy(p); /* the injector writes into frames: copies only */
}

void engine_fault_drain(struct engine_port *p)
{
	for (unsigned int k = 0; k < droce_engine.n_lcores; k++) {
		struct engine_pq *pq = &p->pq[k];

		if (pq->fault == NULL)
			continue;
		/* the time does not matter: whatever is held leaves now, due or not, before
		 * the port closes (and a start that failed has no clock yet) */
		fault_empty(pq, 0);
		droce_port_tx_flush(&p->port, pq->queue);
		droce_fault_free(pq->fault);
		pq->fault = NULL;
	}
}
