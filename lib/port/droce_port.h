/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A droce port: one DPDK ethdev (any PMD) with its mempool, RX/TX queues,
 * buffered transmission and counters. lib/port is the only component that
 * includes rte_ethdev.h or knows a driver by name: this header does not
 * include it, and what the rest of droce needs of a device (its MAC, whether
 * its driver copies frames in software, whether it waits for a peer) is asked
 * through the functions below.
 *
 * Errors: 0 or -errno (the DPDK call's error, or -EINVAL for bad arguments).
 * Bursts return a count.
 */
#ifndef DROCE_PORT_H
#define DROCE_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DROCE_PORT_QUEUES_MAX 8
#define DROCE_PORT_BURST      32
/** Frames a full device leaves waiting per queue, in order, before any is dropped (2^n). */
#define DROCE_PORT_TX_BACKLOG 1024
/** An ethdev name with its terminator (DPDK's RTE_ETH_NAME_MAX_LEN, asserted in port.c). */
#define DROCE_PORT_NAME_MAX 64

/** How to bring a port up. */
struct droce_port_conf {
	/**
	 * The device: DPDK devargs of a vdev ("net_memif0,role=server,socket=..."),
	 * a PCI address, or the name of an ethdev that already exists (made by
	 * droce_port_ring_pair() for instance).
	 */
	const char *device;
	uint16_t nb_queues; /**< RX and TX queue pairs, one per engine lcore (1..8) */
	uint16_t nb_desc;   /**< descriptors per queue (0: 1024) */
	uint32_t nb_mbufs;  /**< mbufs in the port's pool (0: 8191) */
	uint16_t mbuf_size; /**< data room per mbuf (0: a frame of the MTU, at least DPDK's default)
			     */
	uint32_t mtu;       /**< Ethernet MTU to set (0: leave the device's) */
	int socket;         /**< NUMA socket for memory (SOCKET_ID_ANY: the device's) */
	/**
	 * A device that may not start yet (a memif client whose server is not up):
	 * the port opens configured but stopped, link down, and droce_port_try_start()
	 * starts it later. Otherwise a failed start fails the open.
	 */
	bool start_later;
};

/** Per-queue counters, written by the lcore that owns the queue only. */
struct droce_port_qstats {
	uint64_t rx_pkts;
	uint64_t rx_bytes;
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t tx_dropped; /**< the backlog was full too: lost */
	uint64_t tx_full;    /**< flushes the device could not take whole (frames waited) */
} __rte_cache_aligned;

/**
 * TX buffer of one queue: packets wait here until the loop flushes. What the
 * device does not take (a full ring, a memif peer behind) waits in the backlog
 * and goes first at the next flush: back-pressure, not loss, so a reliable
 * QP is not sent into go-back-N by its own port.
 */
struct droce_port_txq {
	uint16_t n;
	struct rte_mbuf *pkts[DROCE_PORT_BURST];
	uint32_t wait_head, wait_tail; /**< free-running; wait_tail - wait_head frames wait */
	struct rte_mbuf *wait[DROCE_PORT_TX_BACKLOG];
} __rte_cache_aligned;

struct droce_port {
	uint16_t port_id;
	uint16_t nb_queues;
	uint32_t mtu;
	struct rte_ether_addr mac;
	struct rte_mempool *pool;
	bool started;
	bool configured; /**< set up, started or not: droce_port_try_start() can start it */
	bool mtu_fixed;  /**< the PMD has no MTU setting: the configured one applies */
	bool probed;     /**< droce hot-plugged the device and removes it at close */
	char name[DROCE_PORT_NAME_MAX];
	struct droce_port_txq txq[DROCE_PORT_QUEUES_MAX];
	struct droce_port_qstats qstats[DROCE_PORT_QUEUES_MAX];
};

/** Probe (if needed), configure and start the port. */
int droce_port_open(struct droce_port *p, const struct droce_port_conf *conf);

/** Flush, stop and close the port, free its pool; a probed vdev is removed. */
void droce_port_close(struct droce_port *p);

/** Link up as the PMD reports it now (no waiting). */
bool droce_port_link_up(const struct droce_port *p);

/** Link speed in Mb/s (0 when unknown or down). */
uint32_t droce_port_link_speed(const struct droce_port *p);

/**
 * Two ethdevs named @p name_a and @p name_b joined back to back by rte_rings
 * (what one sends the other receives), for tests and the embedded default link.
 * The ethdevs are named "net_ring_<name>" (the ring PMD's prefix) and are
 * opened by those names with droce_port_open(). Returns 0 or -errno.
 */
int droce_port_ring_pair(const char *name_a, const char *name_b, uint16_t nb_queues);

/**
 * The name droce_port_open() takes for the end @p name of a droce_port_ring_pair(), in
 * @p out of @p size bytes. 0 or -ENAMETOOLONG.
 */
int droce_port_ring_device(const char *name, char *out, size_t size);

/**
 * Make @p mac the device's address and the port's (p->mac). A device that refuses it (memif,
 * a VF without the right) is put in promiscuous mode when @p promiscuous_if_refused, so that
 * it still receives frames for @p mac. 0, or the device's -errno (p->mac is set either way).
 */
int droce_port_set_default_mac(struct droce_port *p, const struct rte_ether_addr *mac,
			       bool promiscuous_if_refused);

/**
 * True when the port's driver copies every frame in software at TX (memif, ring, af_packet,
 * tap, vhost): the IOVA of an external buffer is never used, and a frame is done with once
 * the burst returns or droce frees it, so payload may be sent from an MR by reference.
 */
bool droce_port_driver_copies_in_software(const struct droce_port *p);

/**
 * True when the device @p devargs names may come up before its peer and cannot start until
 * the peer is there (a memif client whose server is not up yet): open it with start_later.
 */
bool droce_port_devargs_waits_for_peer(const char *devargs);

/**
 * The devargs to open @p device with, in @p out of @p size bytes: the user's, plus what its
 * driver needs to carry frames of @p mtu whole (memif buffers that hold a frame) and one
 * queue pair per engine lcore (@p queues, af_packet's qpairs=). 0 or -ENAMETOOLONG.
 */
int droce_port_devargs(const char *device, uint32_t mtu, unsigned int queues, char *out,
		       size_t size);

/** Start a port opened with start_later that is not started yet. 0 (started) or -errno. */
int droce_port_try_start(struct droce_port *p);

/** Receive up to @p n frames from queue @p q (none from a stopped device); counted. */
uint16_t droce_port_rx(struct droce_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n);

/**
 * Send what waits on queue @p q, the backlog first; what the device does not
 * take joins the backlog (dropped, and counted, only when that is full).
 * Returns the packets the device took.
 */
uint16_t droce_port_tx_flush(struct droce_port *p, uint16_t q);

/** Frames queued on @p q and not yet taken by the device (the buffer and the backlog). */
static inline uint32_t droce_port_tx_pending(const struct droce_port *p, uint16_t q)
{
	const struct droce_port_txq *t = &p->txq[q];

	return t->n + (t->wait_tail - t->wait_head);
}

/** Frames queue @p q can still hold before it drops: what a sender may queue now. */
static inline uint32_t droce_port_tx_room(const struct droce_port *p, uint16_t q)
{
	return DROCE_PORT_TX_BACKLOG - (p->txq[q].wait_tail - p->txq[q].wait_head);
}

/** Queue @p m for transmission on @p q; the buffer is flushed when full. */
static inline void droce_port_tx(struct droce_port *p, uint16_t q, struct rte_mbuf *m)
{
	struct droce_port_txq *t = &p->txq[q];

	t->pkts[t->n++] = m;
	if (t->n == DROCE_PORT_BURST)
		droce_port_tx_flush(p, q);
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_PORT_H */
