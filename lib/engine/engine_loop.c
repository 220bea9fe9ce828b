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

static uint64_t now_us(const struct engine *e)
{
	return rte_get_timer_cycles() / e->hz_per_us;
}

/* ---- the transport's environment for a port */

/* Every frame the engine sends on a port: through the fault injector when it has one. */
void engine_port_tx(struct engine_port *p, struct rte_mbuf *m)
{
	if (unlikely(p->fault != NULL)) {
		engine_fault_tx(p, m);
		return;
	}
	droce_port_tx(&p->port, 0, m);
}

static void env_tx(void *arg, struct rte_mbuf *m)
{
	struct engine_port *p = arg;
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	droce_engine.stats.tx_pkts++;
	/* to another QP of this port (env_neigh() gave our own MAC): a link never brings a
	 * frame back to its sender, so it is received here, at the next RX pass */
	if (unlikely(rte_is_same_ether_addr(&eth->dst_addr, &p->port.mac))) {
		if (rte_ring_sp_enqueue(p->loopback, m) == 0) {
			droce_engine.stats.loopback_pkts++;
		} else {
			droce_engine.stats.loopback_dropped++;
			rte_pktmbuf_free(m);
		}
		return;
	}
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
	return rc == -EHOSTUNREACH || rc == -ENOSPC ? -EAGAIN : rc;
}

static void env_cq_notify(void *arg, void *cq, bool solicited)
{
	(void)arg;
	droce_engine.hooks.cq_notify(cq, solicited);
}

static void env_cq_error(void *arg, void *cq)
{
	(void)arg;
	if (droce_engine.hooks.cq_error != NULL)
		droce_engine.hooks.cq_error(cq);
}

static void env_qp_error(void *arg, void *qp, enum ibv_qp_state state, enum ibv_event_type ev)
{
	(void)arg;
	droce_engine.hooks.qp_error(qp, state, ev);
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
		.neigh = env_neigh,
		.cq_notify = env_cq_notify,
		.cq_error = env_cq_error,
		.qp_error = env_qp_error,
		.srq_limit = env_srq_limit,
		.ah = env_ah,
		.arg = p,
		.wheel = &e->wheel,
		.tick_hz = rte_get_timer_hz(),
	};
}

/* ---- receive */

/* A frame that is not RoCEv2: the neighbour table's, or nobody's. */
static void rx_other(struct engine *e, struct engine_port *p, struct rte_mbuf *m, uint64_t now)
{
	struct droce_neigh_frame reply;
	uint8_t copy[DROCE_NEIGH_FRAME_MAX];
	uint32_t len = m->pkt_len < sizeof(copy) ? m->pkt_len : (uint32_t)sizeof(copy);
	const void *frame = rte_pktmbuf_read(m, 0, len, copy);

	e->stats.rx_not_roce++;
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

/* Frames the port received (from its device or its loopback ring): to the QPs or neighbours. */
static void rx_frames(struct engine *e, struct engine_port *p, struct rte_mbuf **pkts, uint16_t n,
		      uint64_t now)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	uint16_t i;

	cfg.max_payload = (uint16_t)p->addr.mtu_bytes;
	e->stats.rx_pkts += n;
	for (i = 0; i < n; i++) {
		struct droce_pkt pkt;
		struct engine_qp *q;
		enum droce_parse_status st;

		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		st = droce_parse_mbuf(pkts[i], &cfg, &pkt);
		if (st == DROCE_PARSE_NOT_ROCE) {
			rx_other(e, p, pkts[i], now);
			continue;
		}
		if (st != DROCE_PARSE_OK) {
			e->stats.parse_errors[st]++;
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		q = engine_qp_find(e, pkt.qpn);
		if (q == NULL || q->port != p) {
			e->stats.rx_no_qp++;
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		droce_tqp_recv(&p->env, &q->tqp, pkts[i], &pkt);
	}
}

static unsigned int rx_port(struct engine *e, struct engine_port *p, uint64_t now)
{
	struct rte_mbuf *pkts[DROCE_PORT_BURST];
	uint16_t n = droce_port_rx(&p->port, 0, pkts, DROCE_PORT_BURST);
	unsigned int looped;

	rx_frames(e, p, pkts, n, now);
	/* what the last pass sent to this port itself, as many as a burst */
	looped = rte_ring_sc_dequeue_burst(p->loopback, (void **)pkts, DROCE_PORT_BURST, NULL);
	rx_frames(e, p, pkts, (uint16_t)looped, now);
	return n + looped;
}

void engine_loopback_drain(struct engine_port *p)
{
	struct rte_mbuf *m;

	if (p->loopback == NULL)
		return;
	while (rte_ring_sc_dequeue(p->loopback, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(p->loopback);
	p->loopback = NULL;
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

int engine_lcore_main(void *arg)
{
	struct engine *e = arg;
	unsigned int idle = 0;

	while (__atomic_load_n(&e->running, __ATOMIC_ACQUIRE)) {
		uint64_t now = now_us(e);
		unsigned int work = 0, i;
		int fired;

		engine_cmd_apply(e);
		for (i = 0; i < e->n_ports; i++)
			work += rx_port(e, &e->ports[i], now);
		for (i = 0; i < e->n_list; i++) {
			struct engine_qp *q = e->list[i];
			int done =
				droce_tqp_send(&q->port->env, &q->tqp, (uint32_t)now, SEND_BUDGET);

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
			if (e->ports[i].port.txq[0].n > 0)
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
