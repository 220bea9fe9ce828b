/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine lcore's poll loop: control commands, then for every port an RX
 * burst (RoCEv2 to the QPs, ARP/ND to the neighbour table), the send pass
 * over the QPs (responses and coalesced ACKs, then requests), the timer wheel
 * (RC retransmission and RNR), neighbour requests due, and the TX flush; idle
 * loops back off.
 */
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ether.h>
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

/* ---- the transport's environment for a port */

/* Every frame the engine sends on a port: through the fault injector when it has one. */
void engine_port_tx(struct engine_port *p, struct rte_mbuf *m)
{
	if (unlikely(p->cap != NULL))
		droce_capture_frame(p->cap, m);
	if (unlikely(p->fault != NULL)) {
		engine_fault_tx(p, m);
		return;
	}
	droce_port_tx(&p->port, 0, m);
}

/* A frame for the port itself goes round the loopback ring, not onto the wire. */
static bool loop_frame(struct engine_port *p, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	if (likely(!rte_is_same_ether_addr(&eth->dst_addr, &p->port.mac)))
		return false;
	/* recorded once, as the port sends it (no fault injection on this path) */
	if (unlikely(p->cap != NULL))
		droce_capture_frame(p->cap, m);
	if (p->loop_tail - p->loop_head == ENGINE_LOOP_RING) {
		/* as a full wire would: RC resends it, UD/UC lose it */
		p->loop_dropped++;
		rte_pktmbuf_free(m);
		return true;
	}
	p->loop[p->loop_tail++ & (ENGINE_LOOP_RING - 1)] = m;
	p->loop_pkts++;
	return true;
}

static void env_tx(void *arg, struct rte_mbuf *m)
{
	struct engine_port *p = arg;

	droce_engine.stats.tx_pkts++;
	if (loop_frame(p, m))
		return;
	engine_port_tx(p, m);
}

static int env_neigh(void *arg, const uint8_t ip[16], uint8_t mac[6])
{
	struct engine_port *p = arg;
	int rc = droce_neigh_resolve(p->neigh, ip, now_us(&droce_engine), mac);

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

static int env_tx_unresolved(void *arg, struct rte_mbuf *m, const uint8_t ip[16])
{
	struct engine_port *p = arg;
	struct engine_unres *u;

	if (p->n_unres == ENGINE_UNRES_MAX)
		return -ENOBUFS; /* the sender keeps its WQE: back-pressure, not loss */
	droce_engine.stats.tx_pkts++;
	p->unres_queued++;
	u = &p->unres[p->n_unres++];
	u->m = m;
	u->since_us = now_us(&droce_engine);
	memcpy(u->ip, ip, 16);
	return 0;
}

/* Frames waiting for a MAC: sent once it is known, dropped when resolution fails or lasts. */
static unsigned int unres_flush(struct engine_port *p, uint64_t now)
{
	unsigned int i, kept = 0, done = 0;

	for (i = 0; i < p->n_unres; i++) {
		struct engine_unres *u = &p->unres[i];
		uint8_t mac[6];
		int rc = droce_neigh_resolve(p->neigh, u->ip, now, mac);

		if (rc == 0) {
			struct rte_ether_hdr *eth = rte_pktmbuf_mtod(u->m, struct rte_ether_hdr *);

			/* the Ethernet header is outside the ICRC: the frame is final as it is */
			memcpy(eth->dst_addr.addr_bytes, mac, 6);
			engine_port_tx(p, u->m);
			done++;
		} else if ((rc == -EAGAIN || rc == -ENOSPC) && /* a full table: a wait too */
			   (now < u->since_us || now - u->since_us < ENGINE_UNRES_WAIT_US)) {
			/* (queued during this pass: its time is later than the pass's now) */
			p->unres[kept++] = *u;
		} else {
			p->unres_dropped++;
			rte_pktmbuf_free(u->m);
			done++;
		}
	}
	p->n_unres = kept;
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
	p->env = (struct droce_transport_env){
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
		.arg = p,
		.wheel = &e->wheel,
		.tick_hz = rte_get_timer_hz(),
		.send_window = p->conf.send_window == 0            ? DROCE_ENGINE_WINDOW_DEFAULT
			       : p->conf.send_window == UINT32_MAX ? 0
								   : p->conf.send_window,
	};
	engine_env_zero_copy(p);
}

void engine_env_zero_copy(struct engine_port *p)
{
	struct rte_eth_dev_info info;
	const char *drv =
		rte_eth_dev_info_get(p->port.port_id, &info) == 0 ? info.driver_name : NULL;

	p->env.zero_copy_min = droce_zc_min_for_port(drv, p->fault != NULL, p->conf.zero_copy_min);
}

/* ---- receive */

/* A frame that is not RoCEv2: the neighbour table's, or nobody's. */
static void rx_other(struct engine_port *p, struct rte_mbuf *m, uint64_t now)
{
	struct droce_neigh_frame reply;
	uint8_t copy[DROCE_NEIGH_FRAME_MAX];
	uint32_t len = m->pkt_len < sizeof(copy) ? m->pkt_len : (uint32_t)sizeof(copy);
	const void *frame = rte_pktmbuf_read(m, 0, len, copy);

	p->rx.not_roce++;
	if (frame != NULL &&
	    droce_neigh_rx(p->neigh, frame, len, now, &reply) == DROCE_NEIGH_REPLY &&
	    reply.len > 0) {
		struct rte_mbuf *r = rte_pktmbuf_alloc(p->port.pool);
		char *d = r != NULL ? rte_pktmbuf_append(r, reply.len) : NULL;

		if (d != NULL) {
			memcpy(d, reply.data, reply.len);
			engine_port_tx(p, r);
		} else if (r != NULL) {
			rte_pktmbuf_free(r);
		}
	}
	rte_pktmbuf_free(m);
}

/* One received frame: parsed and checked, then to its QP or the neighbour table. */
static void rx_one(struct engine *e, struct engine_port *p, const struct droce_parse_cfg *cfg,
		   struct rte_mbuf *m, uint64_t now)
{
	struct droce_pkt pkt;
	struct engine_qp *q;
	enum droce_parse_status st = droce_parse_mbuf(m, cfg, &pkt);

	if (st == DROCE_PARSE_NOT_ROCE) {
		rx_other(p, m, now);
		return;
	}
	if (st != DROCE_PARSE_OK) {
		p->rx.parse[st]++;
		rte_pktmbuf_free(m);
		return;
	}
	q = engine_qp_find(e, pkt.qpn);
	if (q == NULL || q->port != p) {
		p->rx.no_qp++;
		rte_pktmbuf_free(m);
		return;
	}
	droce_tqp_recv(&p->env, &q->tqp, m, &pkt);
}

static unsigned int rx_port(struct engine *e, struct engine_port *p, uint64_t now)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct rte_mbuf *pkts[DROCE_PORT_BURST];
	uint16_t n = droce_port_rx(&p->port, 0, pkts, DROCE_PORT_BURST), i;
	uint32_t looped = 0;

	cfg.max_payload = (uint16_t)p->addr.mtu_bytes;
	e->stats.rx_pkts += n;
	for (i = 0; i < n; i++) {
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		if (unlikely(p->cap != NULL))
			droce_capture_frame(p->cap, pkts[i]);
		rx_one(e, p, &cfg, pkts[i], now);
	}
	/* the loopback ring: what was queued before this pass, what it queues waits */
	for (uint32_t end = p->loop_tail; p->loop_head != end; looped++)
		rx_one(e, p, &cfg, p->loop[p->loop_head++ & (ENGINE_LOOP_RING - 1)], now);
	return n + looped;
}

/* ---- neighbour requests */

static void neigh_requests(struct engine_port *p, uint64_t now)
{
	struct droce_neigh_req reqs[4];
	unsigned int n = droce_neigh_pending(p->neigh, now, reqs, 4), i;

	for (i = 0; i < n; i++) {
		struct droce_neigh_frame f;
		struct rte_mbuf *m;
		char *d;

		if (droce_neigh_build_request(p->neigh, &reqs[i], &f) != 0)
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
		engine_port_tx(p, m);
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
	struct engine *e = arg;
	unsigned int idle = 0;

	while (__atomic_load_n(&e->running, __ATOMIC_ACQUIRE)) {
		uint64_t now = now_us(e);
		unsigned int work = 0, i;
		int fired;

		engine_cmd_apply(e);
		late_starts(e, now);
		for (i = 0; i < e->n_ports; i++) {
			work += rx_port(e, &e->ports[i], now);
			/* frames that waited for a MAC the RX pass may just have learnt go
			 * before anything the send pass builds: a UD flow stays in order */
			if (e->ports[i].n_unres > 0)
				work += unres_flush(&e->ports[i], now);
		}
		for (i = 0; i < e->n_list; i++) {
			struct engine_qp *q = e->list[i];
			uint32_t room = droce_port_tx_room(&q->port->port, 0);
			int done;

			/* the device is behind: the QP waits (back-pressure), nothing is lost */
			if (room <= TX_RESERVE + SEND_BUDGET) {
				e->stats.tx_waits++;
				continue;
			}
			done = droce_tqp_send(&q->port->env, &q->tqp, (uint32_t)now, SEND_BUDGET);
			if (done > 0)
				work += (unsigned int)done;
		}
		/*
		 * Retransmission and RNR timers; what they restart goes out on the next pass.
		 * Run every loop: the wheel's now is the transport's clock.
		 */
		fired = droce_transport_timers_run(&e->wheel, rte_get_timer_cycles(), TIMER_BUDGET);
		if (fired > 0)
			work += (unsigned int)fired;
		for (i = 0; i < e->n_ports; i++) {
			neigh_requests(&e->ports[i], now);
			/* the partial burst, and held frames that are due */
			if (unlikely(e->ports[i].fault != NULL))
				work += engine_fault_flush(&e->ports[i], now);
			if (droce_port_tx_pending(&e->ports[i].port, 0) > 0)
				work += droce_port_tx_flush(&e->ports[i].port, 0);
		}
		e->stats.loops++;
		if (work > 0) {
			e->stats.busy_loops++;
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
