/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GSI of every engine port: QP1 (IBTA Vol. 1 chapter 13), which carries management
 * datagrams as UD SEND Only packets with the Q_Key 0x80010000, one 256-byte MAD each.
 *
 * Receive (engine_gsi_rx, on the lcore that received the packet): the packet is checked as a
 * GSI MAD (droce_gsi_parse(): malformed ones dropped, counted by reason). A MAD of the CM class
 * (a CM message, or the class's ClassPortInfo) is copied into the consumer's queue, a ring of
 * fixed-size entries every lcore produces into and one thread (the CM agent's) takes from; the
 * eventfd is written when that queue was found empty, not once per MAD. A Get or Set of a class
 * nobody here serves is answered by the engine; any other MAD of such a class is dropped, counted.
 *
 * Send (droce_engine_gsi_send, any thread): the request is checked and copied into its port's
 * ring; lcore 0 builds the frames (engine_gsi_tx), a few a pass, through the transport's path
 * (the UDP source port and the neighbour lookup UD sends use) and the port's queue of frames
 * waiting for a MAC.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_ring_elem.h>
#include <rte_ring_peek.h>

#include "engine_priv.h"

/* MADs lcore 0 builds on a port in one pass */
#define GSI_TX_BUDGET 16
/* 13.4.7: invalid-field code 1 of the status (bits 2-4), bad version: the class, or its
 * version, is not supported */
#define MAD_STATUS_BAD_VERSION 0x0004
/* Management classes of the subnet manager (chapter 13's class table): QP0's, never QP1's */
#define MAD_CLASS_SUBN_LID_ROUTED 0x01
#define MAD_CLASS_SUBN_DIRECTED   0x81
/* What the checks of a GSI packet read: its headers and one MAD */
#define GSI_BYTES_MAX (DROCE_PARSE_HDR_MAX + DROCE_MAD_LEN)

#define ENTRY_SIZE ((unsigned int)sizeof(struct droce_engine_mad))
static_assert(sizeof(struct droce_engine_mad) % 4 == 0, "a ring element is a multiple of 4 bytes");

static bool gid_is_ipv4(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

/* The index of @p gid in the port's GID table, or -1. */
static int gid_index(const struct droce_tport_addr *a, const uint8_t gid[16])
{
	for (unsigned int i = 0; i < a->gid_count; i++)
		if (memcmp(a->gid[i].raw, gid, 16) == 0)
			return (int)i;
	return -1;
}

/* The GID of an address of the packet: IPv6 as it is, IPv4 mapped (::ffff:a.b.c.d). */
static void gid_of(bool ipv6, const uint8_t ip[16], uint8_t gid[16])
{
	if (ipv6)
		memcpy(gid, ip, 16);
	else
		droce_ipv4_mapped(ip, gid);
}

/* A ring of @p slots fixed-size entries in the process's heap: it outlives no engine. */
static struct rte_ring *ring_new(const char *name, unsigned int slots)
{
	ssize_t size = rte_ring_get_memsize_elem(ENTRY_SIZE, slots);
	struct rte_ring *r;

	if (size < 0)
		return NULL;
	/* the size is a whole number of cache lines: what aligned_alloc() wants */
	r = aligned_alloc(RTE_CACHE_LINE_SIZE, (size_t)size);
	if (r == NULL)
		return NULL;
	/* several producers, one consumer: the peek of engine_gsi_tx() needs that consumer */
	if (rte_ring_init(r, name, slots, RING_F_SC_DEQ) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

int engine_gsi_start(struct engine *e)
{
	struct engine_gsi *g = &e->gsi;
	int rc = 0;

	pthread_rwlock_wrlock(&g->lock);
	g->signalled = 0;
	g->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->efd < 0)
		rc = -errno;
	if (rc == 0)
		g->rx = ring_new("droce_gsi_rx", ENGINE_GSI_RX_SLOTS);
	if (rc == 0 && g->rx == NULL)
		rc = -ENOMEM;
	for (unsigned int i = 0; rc == 0 && i < e->n_ports; i++) {
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "droce_gsi_tx%u", i);
		e->ports[i].gsi_tx = ring_new(name, ENGINE_GSI_TX_SLOTS);
		if (e->ports[i].gsi_tx == NULL)
			rc = -ENOMEM;
	}
	pthread_rwlock_unlock(&g->lock);
	if (rc != 0)
		engine_gsi_stop(e);
	return rc;
}

void engine_gsi_stop(struct engine *e)
{
	struct engine_gsi *g = &e->gsi;

	/* waits for the API calls under way; those that follow find the engine stopped */
	pthread_rwlock_wrlock(&g->lock);
	/* the entries are copies in the rings: freeing a ring frees what it held */
	for (unsigned int i = 0; i < DROCE_ENGINE_PORTS_MAX; i++) {
		free(e->ports[i].gsi_tx);
		e->ports[i].gsi_tx = NULL;
	}
	free(g->rx);
	g->rx = NULL;
	if (g->efd >= 0)
		close(g->efd);
	g->efd = -1;
	pthread_rwlock_unlock(&g->lock);
}

/* ---- frames */

/* A GSI frame carrying @p mad to QP @p dqpn along @p a, built on @p pq; NULL: no mbuf. */
static struct rte_mbuf *gsi_frame(struct engine_pq *pq, const struct droce_addr *a, uint16_t pkey,
				  uint32_t dqpn, const uint8_t *mad)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pq->port->port.pool);
	struct droce_hdr_fields f;
	size_t len;
	uint8_t *buf;

	if (m == NULL)
		return NULL;
	/* chapter 13: UD SEND Only from QP1, the GSI's Q_Key; the PSN of UD is not checked */
	droce_gsi_fields(&f, pkey, pq->gsi.psn);
	f.dqpn = dqpn;
	/* Linux sets AckReq on its GSI packets (doc/cm.md): so does droce */
	f.ackreq = true;
	len = droce_frame_len(a, f.opcode, DROCE_MAD_LEN);
	buf = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (buf == NULL ||
	    droce_build_frame(buf, len, a, (uint16_t)pq->gsi.psn, &f, mad, DROCE_MAD_LEN) < 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	pq->gsi.psn = (pq->gsi.psn + 1) & DROCE_PSN_MASK;
	return m;
}

/* ---- receive */

/* The MAD's entry for the consumer: the port, both GIDs and the IP fields from the packet. */
static void rx_entry(const struct engine_pq *pq, const struct droce_pkt *pkt, const uint8_t *frame,
		     struct droce_engine_mad *d)
{
	struct droce_hdr_fields f;
	struct droce_addr a;
	uint16_t ip_id;

	droce_pkt_fields(pkt, frame, &f);
	droce_pkt_addr(pkt, frame, &a, &ip_id);
	memset(d, 0, sizeof(*d));
	d->port = (unsigned int)(pq->port - droce_engine.ports);
	gid_of(a.ipv6, a.dst_ip, d->sgid);
	gid_of(a.ipv6, a.src_ip, d->dgid);
	d->traffic_class = a.tclass;
	d->hop_limit = a.ttl;
	d->flow_label = a.flow_label;
	d->pkey = f.pkey;
	d->remote_qpn = f.deth.sqpn;
	memcpy(d->mad, frame + pkt->payload_off, DROCE_MAD_LEN);
}

/* A MAD of the CM class into the consumer's queue; the eventfd when the queue was empty. */
static void rx_to_consumer(struct engine_pq *pq, const struct droce_pkt *pkt, const uint8_t *frame)
{
	struct engine_gsi *g = &droce_engine.gsi;
	struct droce_engine_mad d;
	uint64_t one = 1;

	rx_entry(pq, pkt, frame, &d);
	if (rte_ring_mp_enqueue_elem(g->rx, &d, ENTRY_SIZE) != 0) {
		pq->gsi.rx_dropped++; /* the consumer is behind by a whole queue */
		return;
	}
	pq->gsi.rx++;
	/*
	 * The exchange is a release after the enqueue: the consumer's exchange that reads this 1
	 * sees the entry. Only the producer that finds 0 writes (the consumer found the queue
	 * empty since the last write). The write fails only when the counter is at its maximum:
	 * readable anyway.
	 */
	if (__atomic_exchange_n(&g->signalled, 1, __ATOMIC_ACQ_REL) == 0 &&
	    write(g->efd, &one, sizeof(one)) < 0)
		return;
}

/*
 * The engine's answer to a Get or Set of a class nobody here serves (13.4.5: a GetResp with the
 * request's transaction ID; 13.4.7: status bad version/class), from QP1 to the requester's QP
 * (the DETH's SrcQP), to the MAC the request came from, from the address it was sent to.
 * 0, or -errno when it was not sent.
 */
static int rx_answer(struct engine_pq *pq, const struct droce_pkt *pkt, const uint8_t *frame)
{
	struct engine_port *p = pq->port;
	struct droce_addr req, a;
	struct droce_hdr_fields f;
	struct droce_mad_fields h;
	uint8_t mad[DROCE_MAD_LEN], sgid[16];
	struct rte_mbuf *m;
	uint16_t ip_id;

	droce_pkt_fields(pkt, frame, &f);
	droce_pkt_addr(pkt, frame, &req, &ip_id);
	gid_of(req.ipv6, req.dst_ip, sgid);
	/* the port answers only from an address of its own */
	if (gid_index(&p->addr, sgid) < 0)
		return -EADDRNOTAVAIL;
	memcpy(mad, frame + pkt->payload_off, DROCE_MAD_LEN);
	droce_mad_hdr_get(mad, &h);
	h.method = DROCE_MAD_METHOD_GET_RESP;
	h.status = MAD_STATUS_BAD_VERSION;
	droce_mad_hdr_set(mad, &h);
	memset(&a, 0, sizeof(a));
	memcpy(a.src_mac, p->addr.mac, 6);
	memcpy(a.dst_mac, req.src_mac, 6);
	a.has_vlan = req.has_vlan;
	a.vlan_tci = req.vlan_tci;
	a.ipv6 = req.ipv6;
	a.ipv4_df = !req.ipv6;
	memcpy(a.src_ip, req.dst_ip, 16);
	memcpy(a.dst_ip, req.src_ip, 16);
	a.tclass = req.tclass;
	a.ttl = 64;
	a.flow_label = req.flow_label;
	a.udp_sport = droce_udp_sport_for_qps(req.flow_label, DROCE_GSI_QPN, f.deth.sqpn);
	a.udp_dport = DROCE_ROCEV2_UDP_PORT;
	m = gsi_frame(pq, &a, f.pkey, f.deth.sqpn, mad);
	if (m == NULL)
		return -ENOBUFS;
	engine_pq_tx(pq, m);
	return 0;
}

/* A well-formed MAD of a class other than the CM's, or of a CM class version other than 2. */
static void rx_unsupported(struct engine_pq *pq, const struct droce_pkt *pkt, const uint8_t *frame)
{
	const struct droce_mad_hdr *h = (const void *)(frame + pkt->payload_off);

	/*
	 * Requests are answered (13.4.5, 13.4.7); responses, Sends and Traps have no answer. The
	 * subnet manager's classes travel on QP0, which RoCE does not have: on QP1 they are
	 * nobody's, not even to be refused.
	 */
	if ((h->method == DROCE_MAD_METHOD_GET || h->method == DROCE_MAD_METHOD_SET) &&
	    h->mgmt_class != MAD_CLASS_SUBN_LID_ROUTED &&
	    h->mgmt_class != MAD_CLASS_SUBN_DIRECTED && rx_answer(pq, pkt, frame) == 0) {
		pq->gsi.unsupported_answered++;
		return;
	}
	pq->gsi.rx_unsupported++;
}

void engine_gsi_rx(struct engine_pq *pq, struct rte_mbuf *m, const struct droce_pkt *pkt)
{
	uint8_t copy[GSI_BYTES_MAX];
	/* droce_gsi_parse() reads the headers, and the payload only when it is one MAD long */
	uint32_t len = pkt->payload_off +
		       (pkt->payload_len < DROCE_MAD_LEN ? pkt->payload_len : DROCE_MAD_LEN);
	const uint8_t *frame = len <= sizeof(copy) ? rte_pktmbuf_read(m, 0, len, copy) : NULL;
	enum droce_mad_status st =
		frame != NULL ? droce_gsi_parse(pkt, frame, NULL) : DROCE_MAD_NOT_GSI;

	switch (st) {
	case DROCE_MAD_OK:
	case DROCE_MAD_CLASS_PORT_INFO:
		rx_to_consumer(pq, pkt, frame);
		break;
	case DROCE_MAD_NOT_CM:
	case DROCE_MAD_BAD_CLASS_VERSION:
		rx_unsupported(pq, pkt, frame);
		break;
	default:
		/* malformed: silently dropped as the parser's rejects are (9.6), counted */
		pq->gsi.mad[st]++;
		break;
	}
	rte_pktmbuf_free(m);
}

/* ---- send */

/* One queued MAD into a frame on lcore 0: 0 (sent, waiting for a MAC, or lost, counted), or
 * -ENOBUFS (no mbuf, or the port's wait queue is full: it stays queued). */
static int tx_one(struct engine_pq *pq, const struct droce_engine_mad *r)
{
	struct engine_port *p = pq->port;
	struct ibv_global_route grh = {
		.flow_label = r->flow_label,
		.traffic_class = r->traffic_class,
		.hop_limit = r->hop_limit,
	};
	int idx = gid_index(&p->addr, r->sgid), rc;
	struct droce_addr a;
	struct rte_mbuf *m;

	/* the port's GIDs do not change while it runs: droce_engine_gsi_send() checked it */
	if (idx < 0)
		return 0;
	grh.sgid_index = (uint8_t)idx;
	memcpy(grh.dgid.raw, r->dgid, 16);
	rc = droce_path_addr(&pq->env, &grh, DROCE_GSI_QPN, r->remote_qpn, &a);
	if (rc == -EHOSTUNREACH) {
		/* nobody answered for it a moment ago: lost, as any UD datagram would be */
		pq->gsi.tx_unresolved_dropped++;
		return 0;
	}
	if (rc != 0 && rc != -EAGAIN)
		return 0; /* two families: droce_engine_gsi_send() refused them */
	m = gsi_frame(pq, &a, r->pkey, r->remote_qpn, r->mad);
	if (m == NULL)
		return -ENOBUFS;
	if (rc == -EAGAIN) {
		/* waits for the MAC with the port's UD frames, dropped (counted) if it never comes
		 */
		if (engine_tx_unresolved(pq, m, r->dgid, true) != 0) {
			rte_pktmbuf_free(m);
			return -ENOBUFS;
		}
	} else {
		engine_pq_tx(pq, m);
	}
	pq->gsi.tx++;
	return 0;
}

unsigned int engine_gsi_tx(struct engine_pq *pq)
{
	struct rte_ring *ring = pq->port->gsi_tx;
	struct droce_engine_mad r;
	unsigned int done = 0;

	/* a peek: what cannot be built now stays first in the ring for the next pass */
	while (done < GSI_TX_BUDGET &&
	       rte_ring_dequeue_bulk_elem_start(ring, &r, ENTRY_SIZE, 1, NULL) == 1) {
		if (tx_one(pq, &r) != 0) {
			rte_ring_dequeue_elem_finish(ring, 0);
			break;
		}
		rte_ring_dequeue_elem_finish(ring, 1);
		done++;
	}
	return done;
}

/* ---- the consumer's side */

/* Whether @p m may be queued on a running engine (the read lock held). */
static int send_check(const struct engine *e, const struct droce_engine_mad *m)
{
	if (!droce_engine_running() || e->gsi.rx == NULL)
		return -ENODEV;
	if (m->port >= e->n_ports)
		return -ENOENT;
	if (gid_index(&e->ports[m->port].addr, m->sgid) < 0)
		return -EADDRNOTAVAIL;
	/* 13.4.2: base version 1 is the only one */
	if (m->mad[0] != DROCE_MAD_BASE_VERSION || m->remote_qpn > DROCE_QPN_MASK ||
	    m->flow_label > 0xfffff || gid_is_ipv4(m->sgid) != gid_is_ipv4(m->dgid))
		return -EINVAL;
	return 0;
}

int droce_engine_gsi_send(const struct droce_engine_mad *m)
{
	struct engine *e = &droce_engine;
	int rc;

	if (m == NULL)
		return -EINVAL;
	pthread_rwlock_rdlock(&e->gsi.lock);
	rc = send_check(e, m);
	/* a copy into the ring: the caller's buffer is free again on return */
	if (rc == 0 && rte_ring_mp_enqueue_elem(e->ports[m->port].gsi_tx, (void *)(uintptr_t)m,
						ENTRY_SIZE) != 0)
		rc = -EAGAIN;
	pthread_rwlock_unlock(&e->gsi.lock);
	return rc;
}

int droce_engine_gsi_recv(struct droce_engine_mad *m, unsigned int n)
{
	struct engine_gsi *g = &droce_engine.gsi;
	unsigned int got;

	if (m == NULL && n > 0)
		return -EINVAL;
	pthread_rwlock_rdlock(&g->lock);
	if (!droce_engine_running() || g->rx == NULL) {
		pthread_rwlock_unlock(&g->lock);
		return -ENODEV;
	}
	got = rte_ring_sc_dequeue_burst_elem(g->rx, m, ENTRY_SIZE, n, NULL);
	if (got < n) {
		/*
		 * Found empty: the next MAD writes the eventfd again. The exchange (acquire) reads
		 * the flag a producer set after its enqueue (release), so whatever was enqueued
		 * before the producer saw 1 and stayed silent is taken here.
		 */
		__atomic_exchange_n(&g->signalled, 0, __ATOMIC_ACQ_REL);
		got += rte_ring_sc_dequeue_burst_elem(g->rx, m + got, ENTRY_SIZE, n - got, NULL);
	}
	pthread_rwlock_unlock(&g->lock);
	return (int)got;
}

int droce_engine_gsi_fd(void)
{
	struct engine_gsi *g = &droce_engine.gsi;
	int rc;

	pthread_rwlock_rdlock(&g->lock);
	rc = droce_engine_running() && g->rx != NULL ? g->efd : -ENODEV;
	pthread_rwlock_unlock(&g->lock);
	return rc;
}
