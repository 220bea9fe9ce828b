/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An engine lcore's poll loop: control commands, then for every port an RX
 * burst from the lcore's own queue (RoCEv2 to the QPs, QP1 to the GSI, ARP/ND
 * to the neighbour table) and the MADs to send from QP1 (lcore 0), the frames
 * other lcores received for this lcore's QPs, the send pass over its QPs
 * (responses and coalesced ACKs, then requests), its timer wheel (RC
 * retransmission and RNR), neighbour requests due (lcore 0), and the TX flush
 * of its queues; idle loops back off.
 *
 * With several lcores a frame is parsed and checked by the lcore whose queue
 * received it and handed, with its parse, to the lcore that owns its QP
 * (engine.qp_owner) through that lcore's inbox ring; a packet to QP1 stays
 * with the lcore that received it.
 */
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_mbuf_dyn.h>
#include <rte_pause.h>

#include "droce_wire_mbuf.h"
#include "engine_priv.h"

#define IDLE_LOOPS_BEFORE_SLEEP 1024
#define SEND_BUDGET             32
#define TIMER_BUDGET            64
/*
 * Room a port's TX backlog keeps for what no send pass budgets (ARP/ND
 * replies, neighbour requests, frames that waited for a MAC): the send pass
 * of a QP starts only while more than this is free.
 */
#define TX_RESERVE 128
/* How often a port whose device could not start is tried again. */
#define LATE_START_EVERY_US 100000

_Static_assert(DROCE_ENGINE_WINDOW_MIN == DROCE_RC_WINDOW_MIN, "one smallest window");

static uint64_t now_us(const struct engine *e)
{
	return rte_get_timer_cycles() / e->hz_per_us;
}

/* ---- what the lcores of a port share: locked only when there are several */

static void capture(struct engine_port *p, const struct rte_mbuf *m)
{
	if (droce_engine.multi) {
		rte_spinlock_lock(&p->cap_lock);
		droce_capture_frame(p->cap, m);
		rte_spinlock_unlock(&p->cap_lock);
	} else {
		droce_capture_frame(p->cap, m);
	}
}

/* ---- the transport's environment for an lcore's share of a port */

/* Every frame the engine sends on a port: through the fault injector when it has one. */
void engine_port_tx(struct engine_pq *pq, struct rte_mbuf *m)
{
	struct engine_port *p = pq->port;

	if (unlikely(p->cap != NULL))
		capture(p, m);
	if (unlikely(pq->fault != NULL)) {
		engine_fault_tx(pq, m);
		return;
	}
	droce_port_tx(&p->port, pq->queue, m);
}

/* A frame for the port itself goes round the loopback ring, not onto the wire. */
static bool loop_frame(struct engine_pq *pq, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	if (likely(!rte_is_same_ether_addr(&eth->dst_addr, &pq->port->port.mac)))
		return false;
	/* recorded once, as the port sends it (no fault injection on this path) */
	if (unlikely(pq->port->cap != NULL))
		capture(pq->port, m);
	if (pq->loop_tail - pq->loop_head == ENGINE_LOOP_RING) {
		/* as a full wire would: RC resends it, UD/UC lose it */
		pq->loop_dropped++;
		rte_pktmbuf_free(m);
		return true;
	}
	pq->loop[pq->loop_tail++ & (ENGINE_LOOP_RING - 1)] = m;
	pq->loop_pkts++;
	return true;
}

void engine_pq_tx(struct engine_pq *pq, struct rte_mbuf *m)
{
	pq->lc->stats.tx_pkts++;
	if (loop_frame(pq, m))
		return;
	engine_port_tx(pq, m);
}

static void env_tx(void *arg, struct rte_mbuf *m)
{
	engine_pq_tx(arg, m);
}

static int env_neigh(void *arg, const uint8_t ip[16], uint8_t mac[6])
{
	struct engine_pq *pq = arg;
	struct engine_port *p = pq->port;
	int rc = droce_neigh_resolve(
		p->neigh, ip, engine_neigh_lock(&droce_engine, p, now_us(&droce_engine)), mac);

	engine_neigh_unlock(&droce_engine, p);
	/* our own address: a QP talking to another QP of this port */
	if (rc == -EINVAL) {
		for (unsigned int i = 0; i < p->addr.gid_count; i++) {
			if (memcmp(p->addr.gid[i].raw, ip, 16) == 0) {
				memcpy(mac, p->addr.mac, 6);
				return 0;
			}
		}
	}
	/* a full table is a wait; a failed resolution (-EHOSTUNREACH) is the caller's loss */
	return rc == -ENOSPC ? -EAGAIN : rc;
}

int engine_tx_unresolved(struct engine_pq *pq, struct rte_mbuf *m, const uint8_t ip[16], bool gsi)
{
	struct engine_unres *u;

	if (pq->n_unres == ENGINE_UNRES_MAX)
		return -ENOBUFS; /* the sender keeps its WQE: back-pressure, not loss */
	pq->lc->stats.tx_pkts++;
	pq->unres_queued++;
	u = &pq->unres[pq->n_unres++];
	u->m = m;
	u->since_us = now_us(&droce_engine);
	memcpy(u->ip, ip, 16);
	u->gsi = gsi;
	return 0;
}

static int env_tx_unresolved(void *arg, struct rte_mbuf *m, const uint8_t ip[16])
{
	return engine_tx_unresolved(arg, m, ip, false);
}

/* Frames waiting for a MAC: sent once it is known, dropped when resolution fails or lasts. */
static unsigned int unres_flush(struct engine_pq *pq, uint64_t now)
{
	struct engine_port *p = pq->port;
	unsigned int i, kept = 0, done = 0;

	for (i = 0; i < pq->n_unres; i++) {
		struct engine_unres *u = &pq->unres[i];
		uint8_t mac[6];
		int rc;

		rc = droce_neigh_resolve(p->neigh, u->ip, engine_neigh_lock(&droce_engine, p, now),
					 mac);
		engine_neigh_unlock(&droce_engine, p);
		if (rc == 0) {
			struct rte_ether_hdr *eth = rte_pktmbuf_mtod(u->m, struct rte_ether_hdr *);

			/* the Ethernet header is outside the ICRC: the frame is final as it is */
			memcpy(eth->dst_addr.addr_bytes, mac, 6);
			engine_port_tx(pq, u->m);
			done++;
		} else if ((rc == -EAGAIN || rc == -ENOSPC) && /* a full table: a wait too */
			   (now < u->since_us || now - u->since_us < ENGINE_UNRES_WAIT_US)) {
			/* (queued during this pass: its time is later than the pass's now) */
			pq->unres[kept++] = *u;
		} else {
			pq->unres_dropped++;
			if (u->gsi)
				pq->gsi.tx_unresolved_dropped++;
			rte_pktmbuf_free(u->m);
			done++;
		}
	}
	pq->n_unres = kept;
	return done;
}

static void env_cq_notify(void *arg, void *cq, bool solicited)
{
	(void)arg;
	droce_engine.hooks.cq_notify(cq, solicited);
}

static void env_qp_error(void *arg, void *qp, enum ibv_qp_state state, enum ibv_event_type ev)
{
	(void)arg;
	droce_engine.hooks.qp_error(qp, state, ev);
}

static void env_sq_drained(void *arg, void *qp, bool notify)
{
	(void)arg;
	if (droce_engine.hooks.sq_drained != NULL)
		droce_engine.hooks.sq_drained(qp, notify);
}

static void env_cq_error(void *arg, void *cq)
{
	(void)arg;
	if (droce_engine.hooks.cq_error != NULL)
		droce_engine.hooks.cq_error(cq);
}

static void env_srq_limit(void *arg, void *srq, uint32_t left)
{
	(void)arg;
	droce_engine.hooks.srq_limit(srq, left);
}

static const struct droce_tah *env_ah(void *arg, uint32_t id)
{
	(void)arg;
	return id < ENGINE_AHS_MAX ? &droce_engine.ahs[id] : NULL;
}

void engine_env_init(struct engine *e, struct engine_port *p)
{
	for (unsigned int k = 0; k < e->n_lcores; k++) {
		struct engine_pq *pq = &p->pq[k];

		pq->port = p;
		pq->lc = &e->lcores[k];
		pq->queue = (uint16_t)k;
		pq->env = (struct droce_transport_env){
			.pool = p->port.pool,
			.keys = e->keys,
			.port = &p->addr,
			.tx = env_tx,
			.tx_unresolved = env_tx_unresolved,
			.neigh = env_neigh,
			.cq_notify = env_cq_notify,
			.qp_error = env_qp_error,
			.sq_drained = env_sq_drained,
			.cq_error = env_cq_error,
			.srq_limit = env_srq_limit,
			.ah = env_ah,
			.arg = pq,
			.wheel = &e->lcores[k].wheel,
			.tick_hz = rte_get_timer_hz(),
			.send_window = p->conf.send_window == 0 ? DROCE_ENGINE_WINDOW_DEFAULT
				       : p->conf.send_window == UINT32_MAX ? 0
									   : p->conf.send_window,
		};
	}
	engine_env_zero_copy(p);
}

void engine_env_zero_copy(struct engine_port *p)
{
	bool copies = droce_port_driver_copies_in_software(&p->port);

	/* each lcore's share: its own injector decides for its frames */
	for (unsigned int k = 0; k < droce_engine.n_lcores; k++)
		p->pq[k].env.zero_copy_min = droce_zc_min_for_port(copies, p->pq[k].fault != NULL,
								   p->conf.zero_copy_min);
}

/* ---- receive */

/* A frame that is not RoCEv2: the neighbour table's, or nobody's. */
static void rx_other(struct engine_pq *pq, struct rte_mbuf *m, uint64_t now)
{
	struct engine_port *p = pq->port;
	struct droce_neigh_frame reply;
	uint8_t copy[DROCE_NEIGH_FRAME_MAX];
	uint32_t len = m->pkt_len < sizeof(copy) ? m->pkt_len : (uint32_t)sizeof(copy);
	const void *frame = rte_pktmbuf_read(m, 0, len, copy);
	enum droce_neigh_status r = DROCE_NEIGH_NOT_NEIGH;

	pq->rx.not_roce++;
	if (frame != NULL) {
		r = droce_neigh_rx(p->neigh, frame, len, engine_neigh_lock(&droce_engine, p, now),
				   &reply);
		engine_neigh_unlock(&droce_engine, p);
	}
	if (r == DROCE_NEIGH_REPLY && reply.len > 0) {
		struct rte_mbuf *o = rte_pktmbuf_alloc(p->port.pool);
		char *d = o != NULL ? rte_pktmbuf_append(o, reply.len) : NULL;

		if (d != NULL) {
			memcpy(d, reply.data, reply.len);
			engine_port_tx(pq, o);
		} else if (o != NULL) {
			rte_pktmbuf_free(o);
		}
	}
	rte_pktmbuf_free(m);
}

/* A checked packet to its QP, which lcore @p lc owns; counted on @p pq when it has none. */
static void rx_to_qp(struct engine_lcore *lc, struct engine_pq *pq, struct rte_mbuf *m,
		     const struct droce_pkt *pkt)
{
	struct engine_qp *q = engine_qp_find(lc, pkt->qpn);

	if (q == NULL || q->port != pq->port) {
		pq->rx.no_qp++;
		rte_pktmbuf_free(m);
		return;
	}
	droce_tqp_recv(&q->pq->env, &q->tqp, m, pkt);
}

/* What this lcore gathered for lcore @p owner into that lcore's inbox, in one burst. */
static void dispatch_flush(struct engine_lcore *lc, unsigned int owner)
{
	unsigned int n = lc->out_n[owner];
	unsigned int done = rte_ring_mp_enqueue_burst(lc->e->lcores[owner].inbox,
						      (void *const *)lc->out[owner], n, NULL);

	lc->stats.rx_dispatched += done;
	/* the owner is behind by a whole inbox: as a full RX queue would */
	lc->stats.rx_dispatch_dropped += n - done;
	if (done < n)
		rte_pktmbuf_free_bulk(&lc->out[owner][done], n - done);
	lc->out_n[owner] = 0;
}

static void dispatch_flush_all(struct engine_lcore *lc)
{
	for (unsigned int k = 0; k < lc->e->n_lcores; k++)
		if (lc->out_n[k] > 0)
			dispatch_flush(lc, k);
}

/*
 * A checked packet for another lcore's QP, gathered for that lcore's inbox with its parse
 * (in a dynamic mbuf field when DPDK had room for one) and its port (in m->port, which the
 * engine's own frames do not otherwise use: the loopback ring's carry the TX pool's).
 */
static void rx_dispatch(struct engine_lcore *lc, struct engine_pq *pq, unsigned int owner,
			struct rte_mbuf *m, const struct droce_pkt *pkt)
{
	struct engine *e = lc->e;

	if (e->mbuf_pkt_off >= 0)
		*RTE_MBUF_DYNFIELD(m, e->mbuf_pkt_off, struct droce_pkt *) = *pkt;
	m->port = (uint16_t)(pq->port - e->ports);
	lc->out[owner][lc->out_n[owner]++] = m;
	if (lc->out_n[owner] == DROCE_PORT_BURST)
		dispatch_flush(lc, owner);
}

/* One received frame: parsed and checked, then to its QP or the neighbour table. */
static void rx_one(struct engine_lcore *lc, struct engine_pq *pq, const struct droce_parse_cfg *cfg,
		   struct rte_mbuf *m, uint64_t now)
{
	struct droce_pkt pkt;
	enum droce_parse_status st = droce_parse_mbuf(m, cfg, &pkt);

	if (st == DROCE_PARSE_NOT_ROCE) {
		rx_other(pq, m, now);
		return;
	}
	if (st != DROCE_PARSE_OK) {
		pq->rx.parse[st]++;
		rte_pktmbuf_free(m);
		return;
	}
	/* QP1, the GSI: the engine's own, on whichever lcore received it (chapter 13) */
	if (unlikely(pkt.qpn == DROCE_GSI_QPN)) {
		engine_gsi_rx(pq, m, &pkt);
		return;
	}
	if (unlikely(lc->e->multi)) {
		int owner = engine_qp_owner(lc->e, pkt.qpn);

		if (owner < 0) {
			pq->rx.no_qp++;
			rte_pktmbuf_free(m);
			return;
		}
		if (owner != (int)lc->idx) {
			rx_dispatch(lc, pq, (unsigned int)owner, m, &pkt);
			return;
		}
	}
	rx_to_qp(lc, pq, m, &pkt);
}

static void parse_cfg(const struct engine_port *p, struct droce_parse_cfg *cfg)
{
	*cfg = DROCE_PARSE_CFG_DEFAULT;
	cfg->max_payload = (uint16_t)p->addr.mtu_bytes;
}

static unsigned int rx_port(struct engine_lcore *lc, struct engine_pq *pq, uint64_t now)
{
	struct engine_port *p = pq->port;
	struct droce_parse_cfg cfg;
	struct rte_mbuf *pkts[DROCE_PORT_BURST];
	uint16_t n = droce_port_rx(&p->port, pq->queue, pkts, DROCE_PORT_BURST), i;
	uint32_t looped = 0;

	parse_cfg(p, &cfg);
	lc->stats.rx_pkts += n;
	for (i = 0; i < n; i++) {
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		if (unlikely(p->cap != NULL))
			capture(p, pkts[i]);
		rx_one(lc, pq, &cfg, pkts[i], now);
	}
	/* the loopback ring: what was queued before this pass, what it queues waits */
	for (uint32_t end = pq->loop_tail; pq->loop_head != end; looped++)
		rx_one(lc, pq, &cfg, pq->loop[pq->loop_head++ & (ENGINE_LOOP_RING - 1)], now);
	if (unlikely(lc->e->multi))
		dispatch_flush_all(lc);
	return n + looped;
}

/* Frames other lcores received and checked for this lcore's QPs. */
static unsigned int rx_inbox(struct engine_lcore *lc)
{
	struct engine *e = lc->e;
	struct rte_mbuf *pkts[DROCE_PORT_BURST];
	unsigned int n =
		rte_ring_sc_dequeue_burst(lc->inbox, (void **)pkts, DROCE_PORT_BURST, NULL);

	for (unsigned int i = 0; i < n; i++) {
		struct engine_port *p = &e->ports[pkts[i]->port];
		struct engine_pq *pq = &p->pq[lc->idx];
		struct droce_pkt pkt;

		if (e->mbuf_pkt_off >= 0) {
			pkt = *RTE_MBUF_DYNFIELD(pkts[i], e->mbuf_pkt_off, struct droce_pkt *);
		} else {
			struct droce_parse_cfg cfg;

			/* no room for the parse in the mbuf: parsed again (it passed once) */
			parse_cfg(p, &cfg);
			if (droce_parse_mbuf(pkts[i], &cfg, &pkt) != DROCE_PARSE_OK) {
				rte_pktmbuf_free(pkts[i]);
				continue;
			}
		}
		rx_to_qp(lc, pq, pkts[i], &pkt);
	}
	return n;
}

/* ---- neighbour requests */

static void neigh_requests(struct engine_pq *pq, uint64_t now)
{
	struct engine_port *p = pq->port;
	struct droce_neigh_req reqs[4];
	unsigned int n, i;

	n = droce_neigh_pending(p->neigh, engine_neigh_lock(&droce_engine, p, now), reqs, 4);
	engine_neigh_unlock(&droce_engine, p);
	for (i = 0; i < n; i++) {
		struct droce_neigh_frame f;
		struct rte_mbuf *m;
		char *d;
		int rc;

		engine_neigh_lock(&droce_engine, p, now);
		rc = droce_neigh_build_request(p->neigh, &reqs[i], &f);
		engine_neigh_unlock(&droce_engine, p);
		if (rc != 0)
			continue;
		m = rte_pktmbuf_alloc(p->port.pool);
		if (m == NULL)
			return;
		d = rte_pktmbuf_append(m, f.len);
		if (d == NULL) {
			rte_pktmbuf_free(m);
			return;
		}
		memcpy(d, f.data, f.len);
		engine_port_tx(pq, m);
	}
}

/* Ports whose device could not start yet (a memif client before its server): tried again. */
static void late_starts(struct engine *e, uint64_t now)
{
	if (now - e->late_start_us < LATE_START_EVERY_US)
		return;
	e->late_start_us = now;
	for (unsigned int i = 0; i < e->n_ports; i++) {
		struct engine_port *p = &e->ports[i];

		if (p->port.configured && !p->port.started && droce_port_try_start(&p->port) == 0)
			/* nothing was received before: what the pool holds now is its idle count */
			p->pool_avail_start = rte_mempool_avail_count(p->port.pool);
	}
}

int engine_lcore_main(void *arg)
{
	struct engine_lcore *lc = arg;
	struct engine *e = lc->e;
	unsigned int idle = 0, me = lc->idx;
	uint64_t last = rte_get_timer_cycles();
	bool busy = false;

	while (__atomic_load_n(&e->running, __ATOMIC_ACQUIRE)) {
		uint64_t tsc = rte_get_timer_cycles(), now = tsc / e->hz_per_us;
		unsigned int work = 0, i;
		int fired;

		/* the time of the last pass, and of the sleep after it, by what the pass found */
		if (busy)
			lc->stats.busy_cycles += tsc - last;
		else
			lc->stats.idle_cycles += tsc - last;
		last = tsc;
		engine_cmd_apply(lc);
		if (me == 0)
			late_starts(e, now);
		for (i = 0; i < e->n_ports; i++) {
			struct engine_pq *pq = &e->ports[i].pq[me];

			work += rx_port(lc, pq, now);
			/* frames that waited for a MAC the RX pass may just have learnt go
			 * before anything the send pass builds: a UD flow stays in order */
			if (pq->n_unres > 0)
				work += unres_flush(pq, now);
			/* MADs the consumer sent through QP1: lcore 0 builds them, a few a pass */
			if (me == 0 && unlikely(!rte_ring_empty(pq->port->gsi_tx)))
				work += engine_gsi_tx(pq);
		}
		if (lc->inbox != NULL)
			work += rx_inbox(lc);
		for (i = 0; i < lc->n_list; i++) {
			struct engine_qp *q = lc->list[i];
			uint32_t room = droce_port_tx_room(&q->port->port, (uint16_t)me);
			int done;

			/* the device is behind: the QP waits (back-pressure), nothing is lost */
			if (room <= TX_RESERVE + SEND_BUDGET) {
				lc->stats.tx_waits++;
				continue;
			}
			done = droce_tqp_send(&q->pq->env, &q->tqp, (uint32_t)now, SEND_BUDGET);
			if (done > 0)
				work += (unsigned int)done;
		}
		/*
		 * Retransmission and RNR timers; what they restart goes out on the next pass.
		 * Run every loop: the wheel's now is the transport's clock.
		 */
		fired = droce_transport_timers_run(&lc->wheel, rte_get_timer_cycles(),
						   TIMER_BUDGET);
		if (fired > 0)
			work += (unsigned int)fired;
		for (i = 0; i < e->n_ports; i++) {
			struct engine_port *p = &e->ports[i];

			/* one lcore asks for the MACs the table misses: each request once */
			if (me == 0)
				neigh_requests(&p->pq[0], now);
			/* the partial burst, and held frames that are due */
			if (unlikely(p->pq[me].fault != NULL))
				work += engine_fault_flush(&p->pq[me], now);
			if (droce_port_tx_pending(&p->port, (uint16_t)me) > 0)
				work += droce_port_tx_flush(&p->port, (uint16_t)me);
		}
		lc->stats.loops++;
		busy = work > 0;
		if (work > 0) {
			lc->stats.busy_loops++;
			idle = 0;
		} else if (++idle >= IDLE_LOOPS_BEFORE_SLEEP && e->conf.idle_sleep_us > 0) {
			/* a shared machine is not burnt by an idle engine */
			usleep(e->conf.idle_sleep_us);
		} else {
			rte_pause();
		}
	}
	return 0;
}
