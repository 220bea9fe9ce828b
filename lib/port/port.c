/* SPDX-License-Identifier: BSD-3-Clause */
/* Bringing an ethdev up for droce, buffered TX, and back-to-back ring pairs. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "droce_port.h"

static_assert(DROCE_PORT_NAME_MAX == RTE_ETH_NAME_MAX_LEN, "droce_port.h's ethdev name size");

/*
 * Data room of the port's mbufs: a whole frame of the MTU, so RX seldom chains, and
 * never less than DPDK's default buffer, which PMDs that copy fixed-size frames into
 * one mbuf (af_packet's 2 KiB ring frames) require, nor less than the PMD asks for.
 */
static uint32_t port_data_room(const struct droce_port *p, uint32_t mtu)
{
	struct rte_eth_dev_info info;
	uint32_t room = RTE_PKTMBUF_HEADROOM + (mtu ? mtu : 1500) + RTE_ETHER_HDR_LEN +
			RTE_VLAN_HLEN + RTE_ETHER_CRC_LEN;

	if (room < RTE_MBUF_DEFAULT_BUF_SIZE)
		room = RTE_MBUF_DEFAULT_BUF_SIZE;
	if (rte_eth_dev_info_get(p->port_id, &info) == 0 &&
	    room < RTE_PKTMBUF_HEADROOM + info.min_rx_bufsize)
		room = RTE_PKTMBUF_HEADROOM + info.min_rx_bufsize;
	return room > UINT16_MAX ? UINT16_MAX : room;
}

/* Find the port of an ethdev name, hot-plugging the device when it is not there yet. */
static int port_find(struct droce_port *p, const char *device)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	const char *comma = strchr(device, ',');
	size_t len = comma != NULL ? (size_t)(comma - device) : strlen(device);
	int rc;

	if (len == 0 || len >= sizeof(name))
		return -EINVAL;
	memcpy(name, device, len);
	name[len] = '\0';
	if (rte_eth_dev_get_port_by_name(name, &p->port_id) == 0)
		return 0;
	rc = rte_dev_probe(device);
	if (rc != 0)
		return rc;
	p->probed = true;
	if (rte_eth_dev_get_port_by_name(name, &p->port_id) != 0)
		return -ENODEV;
	return 0;
}

static int port_setup(struct droce_port *p, const struct droce_port_conf *c)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t nb_desc = c->nb_desc ? c->nb_desc : 1024;
	uint16_t rxd = nb_desc, txd = nb_desc, q;
	int socket = c->socket;
	int rc;

	rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc != 0)
		return rc;
	if (socket == SOCKET_ID_ANY) {
		socket = rte_eth_dev_socket_id(p->port_id);
		if (socket < 0)
			socket = (int)rte_socket_id();
	}
	/* a queue pair per engine lcore: a device with fewer cannot serve them */
	if (p->nb_queues > info.max_rx_queues || p->nb_queues > info.max_tx_queues)
		return -ENOTSUP;
	memset(&conf, 0, sizeof(conf));
	/* several RX queues: the device spreads flows over them by hash where it can (the
	 * engine hands each packet to its QP's lcore whatever queue it came in on) */
	if (p->nb_queues > 1 &&
	    (info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP))) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
	}
	/* scattered RX: jumbo frames land in chained mbufs when a segment is short */
	if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	rc = rte_eth_dev_configure(p->port_id, p->nb_queues, p->nb_queues, &conf);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &rxd, &txd);
	if (rc != 0)
		return rc;
	if (c->mtu != 0) {
		rc = rte_eth_dev_set_mtu(p->port_id, (uint16_t)c->mtu);
		if (rc != 0 && rc != -ENOTSUP)
			return rc;
		/* a PMD without an MTU of its own (rings, memif) carries what droce sends */
		p->mtu_fixed = rc == -ENOTSUP;
	}
	for (q = 0; q < p->nb_queues; q++) {
		rc = rte_eth_rx_queue_setup(p->port_id, q, rxd, (unsigned int)socket, NULL,
					    p->pool);
		if (rc != 0)
			return rc;
		rc = rte_eth_tx_queue_setup(p->port_id, q, txd, (unsigned int)socket, NULL);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int droce_port_open(struct droce_port *p, const struct droce_port_conf *c)
{
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	uint16_t mtu = 0;
	uint32_t room;
	int rc;

	if (p == NULL || c == NULL || c->device == NULL || c->nb_queues == 0 ||
	    c->nb_queues > DROCE_PORT_QUEUES_MAX)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->nb_queues = c->nb_queues;
	rc = port_find(p, c->device);
	if (rc != 0)
		return rc;
	rte_eth_dev_get_name_by_port(p->port_id, p->name);
	room = c->mbuf_size ? c->mbuf_size : port_data_room(p, c->mtu);
	snprintf(pool_name, sizeof(pool_name), "droce_port%u", p->port_id);
	p->pool = rte_pktmbuf_pool_create(
		pool_name, c->nb_mbufs ? c->nb_mbufs : 8191, 256, 0, (uint16_t)room,
		c->socket == SOCKET_ID_ANY ? (int)rte_socket_id() : c->socket);
	if (p->pool == NULL) {
		rc = -rte_errno;
		goto out_remove;
	}
	rc = port_setup(p, c);
	if (rc != 0)
		goto out_free_pool;
	p->configured = true;
	rc = rte_eth_dev_start(p->port_id);
	if (rc != 0 && !c->start_later) {
		p->configured = false;
		goto out_free_pool;
	}
	p->started = rc == 0;
	rte_eth_macaddr_get(p->port_id, &p->mac);
	if (p->mtu_fixed || rte_eth_dev_get_mtu(p->port_id, &mtu) != 0)
		p->mtu = c->mtu ? c->mtu : 1500;
	else
		p->mtu = mtu;
	return 0;

out_free_pool:
	rte_mempool_free(p->pool);
	p->pool = NULL;
out_remove:
	if (p->probed) {
		struct rte_eth_dev_info info;

		if (rte_eth_dev_info_get(p->port_id, &info) == 0 && info.device != NULL)
			rte_dev_remove(info.device);
	}
	return rc;
}

/* Hand @p n frames to the device; returns how many it took, their bytes counted. */
static uint16_t tx_burst(struct droce_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct droce_port_qstats *s = &p->qstats[q];
	uint32_t len[DROCE_PORT_BURST];
	uint16_t sent, i;

	/* lengths first: a device may free what it took inside rte_eth_tx_burst() (af_packet) */
	for (i = 0; i < n; i++)
		len[i] = pkts[i]->pkt_len;
	sent = rte_eth_tx_burst(p->port_id, q, pkts, n);
	for (i = 0; i < sent; i++)
		s->tx_bytes += len[i];
	s->tx_pkts += sent;
	return sent;
}

/* The backlog, oldest first, in bursts until the device is full. */
static uint16_t tx_backlog(struct droce_port *p, uint16_t q, bool *full)
{
	struct droce_port_txq *t = &p->txq[q];
	uint16_t sent = 0;

	while (t->wait_tail != t->wait_head) {
		uint32_t at = t->wait_head & (DROCE_PORT_TX_BACKLOG - 1);
		uint32_t n = t->wait_tail - t->wait_head, k;

		/* contiguous in the array, at most a burst */
		if (n > DROCE_PORT_TX_BACKLOG - at)
			n = DROCE_PORT_TX_BACKLOG - at;
		if (n > DROCE_PORT_BURST)
			n = DROCE_PORT_BURST;
		k = tx_burst(p, q, &t->wait[at], (uint16_t)n);
		t->wait_head += k;
		sent = (uint16_t)(sent + k);
		if (k < n) {
			*full = true;
			break;
		}
	}
	return sent;
}

int droce_port_try_start(struct droce_port *p)
{
	uint16_t mtu;
	int rc;

	if (p->started)
		return 0;
	if (!p->configured)
		return -EINVAL;
	rc = rte_eth_dev_start(p->port_id);
	if (rc != 0)
		return rc;
	p->started = true;
	if (!p->mtu_fixed && rte_eth_dev_get_mtu(p->port_id, &mtu) == 0)
		p->mtu = mtu;
	return 0;
}

uint16_t droce_port_tx_flush(struct droce_port *p, uint16_t q)
{
	struct droce_port_txq *t = &p->txq[q];
	struct droce_port_qstats *s = &p->qstats[q];
	bool full = false;
	uint16_t sent = 0, i;

	if (unlikely(!p->started)) {
		/* nothing to send on: what waits is lost, as on a link that is down */
		s->tx_dropped += t->n + (t->wait_tail - t->wait_head);
		rte_pktmbuf_free_bulk(t->pkts, t->n);
		t->n = 0;
		while (t->wait_tail != t->wait_head)
			rte_pktmbuf_free(t->wait[t->wait_head++ & (DROCE_PORT_TX_BACKLOG - 1)]);
		return 0;
	}

	if (t->wait_tail != t->wait_head)
		sent = tx_backlog(p, q, &full);
	/* nothing newer overtakes a frame that waits */
	if (t->n > 0 && t->wait_tail == t->wait_head) {
		i = tx_burst(p, q, t->pkts, t->n);
		sent = (uint16_t)(sent + i);
		full = i < t->n;
	} else {
		i = 0;
	}
	for (; i < t->n; i++) {
		if (t->wait_tail - t->wait_head == DROCE_PORT_TX_BACKLOG) {
			/* the device is behind by a whole backlog: lost, reliable QPs resend */
			s->tx_dropped += t->n - i;
			rte_pktmbuf_free_bulk(t->pkts + i, t->n - i);
			break;
		}
		t->wait[t->wait_tail++ & (DROCE_PORT_TX_BACKLOG - 1)] = t->pkts[i];
	}
	t->n = 0;
	if (full) {
		s->tx_full++;
		/* a device whose link is down takes nothing more: what waits is lost now,
		 * rather than held (with its mbufs) until the link comes back */
		if (!droce_port_link_up(p)) {
			s->tx_dropped += t->wait_tail - t->wait_head;
			while (t->wait_tail != t->wait_head)
				rte_pktmbuf_free(
					t->wait[t->wait_head++ & (DROCE_PORT_TX_BACKLOG - 1)]);
		}
	}
	return sent;
}

void droce_port_close(struct droce_port *p)
{
	struct rte_eth_dev_info info;
	struct rte_device *dev = NULL;
	uint16_t q;

	/* the device handle is taken before close: a closed port has no info */
	if (p->probed && rte_eth_dev_info_get(p->port_id, &info) == 0)
		dev = info.device;
	if (p->configured) {
		for (q = 0; q < p->nb_queues; q++) {
			struct droce_port_txq *t = &p->txq[q];

			droce_port_tx_flush(p, q);
			/* what the device never took goes back to the pool before it is freed */
			while (t->wait_tail != t->wait_head)
				rte_pktmbuf_free(
					t->wait[t->wait_head++ & (DROCE_PORT_TX_BACKLOG - 1)]);
		}
		if (p->started)
			rte_eth_dev_stop(p->port_id);
		rte_eth_dev_close(p->port_id);
		p->started = false;
		p->configured = false;
	}
	if (dev != NULL)
		rte_dev_remove(dev);
	p->probed = false;
	rte_mempool_free(p->pool);
	p->pool = NULL;
}

bool droce_port_link_up(const struct droce_port *p)
{
	struct rte_eth_link link;

	if (!p->started || rte_eth_link_get_nowait(p->port_id, &link) != 0)
		return false;
	return link.link_status == RTE_ETH_LINK_UP;
}

uint32_t droce_port_link_speed(const struct droce_port *p)
{
	struct rte_eth_link link;

	if (!p->started || rte_eth_link_get_nowait(p->port_id, &link) != 0 ||
	    link.link_status != RTE_ETH_LINK_UP || link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN)
		return 0;
	return link.link_speed;
}

int droce_port_ring_device(const char *name, char *out, size_t size)
{
	/* the ring PMD's prefix, which rte_eth_from_rings() puts before the name */
	int n = snprintf(out, size, "net_ring_%s", name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int droce_port_ring_pair(const char *name_a, const char *name_b, uint16_t nb_queues)
{
	struct rte_ring *a_to_b[DROCE_PORT_QUEUES_MAX], *b_to_a[DROCE_PORT_QUEUES_MAX];
	char rname[RTE_RING_NAMESIZE];
	uint16_t q;

	if (name_a == NULL || name_b == NULL || nb_queues == 0 || nb_queues > DROCE_PORT_QUEUES_MAX)
		return -EINVAL;
	for (q = 0; q < nb_queues; q++) {
		/* one producer lcore and one consumer lcore per queue */
		snprintf(rname, sizeof(rname), "%.12s>%.12s%u", name_a, name_b, q);
		a_to_b[q] = rte_ring_create(rname, 4096, (int)rte_socket_id(),
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(rname, sizeof(rname), "%.12s>%.12s%u", name_b, name_a, q);
		b_to_a[q] = rte_ring_create(rname, 4096, (int)rte_socket_id(),
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (a_to_b[q] == NULL || b_to_a[q] == NULL)
			return -rte_errno;
	}
	if (rte_eth_from_rings(name_a, b_to_a, nb_queues, a_to_b, nb_queues,
			       (unsigned int)rte_socket_id()) < 0)
		return -rte_errno;
	if (rte_eth_from_rings(name_b, a_to_b, nb_queues, b_to_a, nb_queues,
			       (unsigned int)rte_socket_id()) < 0)
		return -rte_errno;
	return 0;
}

uint16_t droce_port_rx(struct droce_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct droce_port_qstats *s = &p->qstats[q];
	uint16_t got;

	if (unlikely(!p->started))
		return 0; /* a stopped device is not polled */
	got = rte_eth_rx_burst(p->port_id, q, pkts, n);
	s->rx_pkts += got;
	for (uint16_t i = 0; i < got; i++)
		s->rx_bytes += pkts[i]->pkt_len;
	return got;
}

int droce_port_set_default_mac(struct droce_port *p, const struct rte_ether_addr *mac,
			       bool promiscuous_if_refused)
{
	struct rte_ether_addr a = *mac;
	int rc = rte_eth_dev_default_mac_addr_set(p->port_id, &a);

	if (rc != 0 && promiscuous_if_refused)
		rte_eth_promiscuous_enable(p->port_id);
	p->mac = a;
	return rc;
}
