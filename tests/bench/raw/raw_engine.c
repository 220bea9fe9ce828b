/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine lcore of the baseline: per end, the requester turns work requests
 * into frames on its link and the responder takes the other end's frames off
 * it. One loop serves both ends, as droce's engine serves both ports of
 * droce-perf --loopback.
 */
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include "droce_wire_hdr.h"
#include "droce_wire_icrc.h"
#include "droce_wire_opcode.h"
#include "raw.h"

#define L2L3L4                                                          \
	(sizeof(struct droce_eth_hdr) + sizeof(struct droce_ipv4_hdr) + \
	 sizeof(struct droce_udp_hdr))
#define QPN(end)  (0x11u + (end))
#define RKEY(end) (0x100u + (end))

/* Ethernet, IPv4 and UDP as end @p me sends them: everything but the lengths and the checksum. */
void raw_end_template(struct raw_end *e, unsigned int me)
{
	struct droce_eth_hdr *eth = (struct droce_eth_hdr *)e->hdr_tmpl;
	struct droce_ipv4_hdr *ip = (struct droce_ipv4_hdr *)(eth + 1);
	struct droce_udp_hdr *udp = (struct droce_udp_hdr *)(ip + 1);
	static const uint8_t mac[RAW_ENDS][6] = {{0x02, 0xd0, 0x0c, 0, 0, 1},
						 {0x02, 0xd0, 0x0c, 0, 0, 2}};
	static const uint8_t ipa[RAW_ENDS][4] = {{10, 99, 0, 1}, {10, 99, 0, 2}};

	memset(e->hdr_tmpl, 0, sizeof(e->hdr_tmpl));
	memcpy(eth->dst, mac[!me], 6);
	memcpy(eth->src, mac[me], 6);
	eth->type = rte_cpu_to_be_16(DROCE_ETHERTYPE_IPV4);
	ip->version_ihl = 0x45;
	ip->frag_off = rte_cpu_to_be_16(DROCE_IPV4_DF);
	ip->ttl = 64;
	ip->proto = DROCE_IPPROTO_UDP;
	memcpy(ip->src, ipa[me], 4);
	memcpy(ip->dst, ipa[!me], 4);
	udp->sport = rte_cpu_to_be_16(DROCE_ROCEV2_SPORT_MIN | QPN(me));
	udp->dport = rte_cpu_to_be_16(DROCE_ROCEV2_UDP_PORT);
}

/* One packet of the WRITE in @p e->cur, @p len bytes from @p off, into @p m; the frame's length. */
static void build_packet(struct raw_end *e, unsigned int me, struct rte_mbuf *m, uint32_t off,
			 uint32_t len)
{
	const struct raw_wqe *w = &e->cur;
	bool first = off == 0, last = off + len == w->len;
	uint8_t opcode = first && last ? DROCE_OP_RC_WRITE_ONLY
			 : first       ? DROCE_OP_RC_WRITE_FIRST
			 : last        ? DROCE_OP_RC_WRITE_LAST
				       : DROCE_OP_RC_WRITE_MIDDLE;
	uint32_t pad = (4 - (len & 3)) & 3, psn = e->next_psn;
	uint32_t ext = first ? sizeof(struct droce_reth) : 0;
	uint32_t roce = (uint32_t)sizeof(struct droce_bth) + ext + len + pad + DROCE_ICRC_LEN;
	uint32_t frame_len = (uint32_t)L2L3L4 + roce;
	uint8_t *buf = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)frame_len);
	struct droce_ipv4_hdr *ip = (struct droce_ipv4_hdr *)(buf + sizeof(struct droce_eth_hdr));
	struct droce_udp_hdr *udp = (struct droce_udp_hdr *)(ip + 1);
	struct droce_bth *bth = (struct droce_bth *)(udp + 1);
	uint8_t *payload = (uint8_t *)(bth + 1) + ext;

	memcpy(buf, e->hdr_tmpl, L2L3L4);
	ip->total_len = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*udp) + roce));
	ip->id = rte_cpu_to_be_16((uint16_t)psn);
	ip->csum = rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip);
	udp->len = rte_cpu_to_be_16((uint16_t)(sizeof(*udp) + roce));
	bth->opcode = opcode;
	bth->flags = (uint8_t)(pad << DROCE_BTH_PAD_SHIFT);
	bth->pkey = rte_cpu_to_be_16(DROCE_PKEY_DEFAULT);
	bth->qpn = rte_cpu_to_be_32(QPN(!me));
	/* AckReq on the last packet of a signalled WRITE: the responder's answer completes it */
	bth->apsn = rte_cpu_to_be_32(psn | (last && w->signaled ? DROCE_BTH_ACKREQ : 0));
	if (first) {
		struct droce_reth *reth = (struct droce_reth *)(bth + 1);

		reth->va = rte_cpu_to_be_64(w->raddr);
		reth->rkey = rte_cpu_to_be_32(RKEY(!me));
		reth->len = rte_cpu_to_be_32(w->len);
	}
	memcpy(payload, (const uint8_t *)(uintptr_t)w->laddr + off, len);
	memset(payload + len, 0, pad);
	droce_icrc_store(
		buf + frame_len - DROCE_ICRC_LEN,
		droce_icrc_calc((const uint8_t *)ip, sizeof(*ip), false,
				frame_len - DROCE_ICRC_LEN - sizeof(struct droce_eth_hdr)));
	e->next_psn = (psn + 1) & DROCE_PSN_MASK;
}

/* Requester of end @p me: up to a burst of packets from its send ring onto its link; how many. */
static unsigned int requester(struct raw_ctx *c, unsigned int me)
{
	struct raw_end *e = &c->end[me];
	struct rte_mbuf *pkts[RAW_BURST];
	unsigned int n = 0, sent;

	while (n < RAW_BURST) {
		uint32_t len;

		if (!e->cur_busy) {
			if (rte_ring_sc_dequeue_elem(e->sq, &e->cur, sizeof(e->cur)) != 0)
				break;
			e->cur_busy = true;
			e->cur_off = 0;
		}
		pkts[n] = rte_pktmbuf_alloc(c->pool);
		if (pkts[n] == NULL) {
			c->stats.no_mbuf++;
			break;
		}
		len = e->cur.len - e->cur_off < RAW_MTU ? e->cur.len - e->cur_off : RAW_MTU;
		build_packet(e, me, pkts[n++], e->cur_off, len);
		e->cur_off += len;
		if (e->cur_off == e->cur.len)
			e->cur_busy = false;
	}
	if (n == 0)
		return 0;
	sent = rte_ring_sp_enqueue_burst(e->link, (void **)pkts, n, NULL);
	if (sent < n)
		rte_pktmbuf_free_bulk(pkts + sent, n - sent); /* the link dropped them */
	return n;
}

/* Receive one packet from end !me at end @p me: 0 when it is good and placed. */
static int place_packet(struct raw_ctx *c, unsigned int me, const struct rte_mbuf *m, bool *acked)
{
	struct raw_end *e = &c->end[me];
	const uint8_t *buf = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t frame_len = rte_pktmbuf_data_len(m),
		 hdr = (uint32_t)L2L3L4 + sizeof(struct droce_bth);
	const struct droce_eth_hdr *eth = (const struct droce_eth_hdr *)buf;
	const struct droce_ipv4_hdr *ip = (const struct droce_ipv4_hdr *)(eth + 1);
	const struct droce_udp_hdr *udp = (const struct droce_udp_hdr *)(ip + 1);
	const struct droce_bth *bth = (const struct droce_bth *)(udp + 1);
	uint32_t apsn, pad, plen;
	uint8_t opcode;

	if (frame_len < hdr + DROCE_ICRC_LEN ||
	    eth->type != rte_cpu_to_be_16(DROCE_ETHERTYPE_IPV4) || ip->version_ihl != 0x45 ||
	    ip->proto != DROCE_IPPROTO_UDP ||
	    udp->dport != rte_cpu_to_be_16(DROCE_ROCEV2_UDP_PORT) ||
	    rte_be_to_cpu_32(bth->qpn) != QPN(me))
		return c->stats.bad_hdr++, -1;
	if (droce_icrc_calc((const uint8_t *)ip, sizeof(*ip), false,
			    frame_len - DROCE_ICRC_LEN - sizeof(*eth)) !=
	    droce_icrc_load(buf + frame_len - DROCE_ICRC_LEN))
		return c->stats.bad_icrc++, -1;
	apsn = rte_be_to_cpu_32(bth->apsn);
	if ((apsn & DROCE_PSN_MASK) != e->expected_psn)
		return c->stats.bad_psn++, -1;
	opcode = bth->opcode;
	if (opcode == DROCE_OP_RC_WRITE_FIRST || opcode == DROCE_OP_RC_WRITE_ONLY) {
		const struct droce_reth *reth = (const struct droce_reth *)(bth + 1);
		uint64_t va = rte_be_to_cpu_64(reth->va);
		uint32_t dma_len = rte_be_to_cpu_32(reth->len);

		hdr += sizeof(*reth);
		if (frame_len < hdr + DROCE_ICRC_LEN)
			return c->stats.bad_hdr++, -1;
		/* the access check: the key, and the range within the buffer */
		if (rte_be_to_cpu_32(reth->rkey) != RKEY(me) || va < (uintptr_t)e->buf ||
		    va - (uintptr_t)e->buf > e->buf_len ||
		    dma_len > e->buf_len - (va - (uintptr_t)e->buf))
			return c->stats.bad_rkey++, -1;
		e->rx_va = va;
		e->rx_left = dma_len;
	} else if (opcode != DROCE_OP_RC_WRITE_MIDDLE && opcode != DROCE_OP_RC_WRITE_LAST) {
		return c->stats.bad_hdr++, -1;
	}
	pad = (bth->flags & DROCE_BTH_PAD_MASK) >> DROCE_BTH_PAD_SHIFT;
	plen = frame_len - hdr - DROCE_ICRC_LEN - pad;
	if (pad > frame_len - hdr - DROCE_ICRC_LEN || plen > e->rx_left)
		return c->stats.bad_hdr++, -1;
	memcpy((uint8_t *)(uintptr_t)e->rx_va, buf + hdr, plen);
	e->rx_va += plen;
	e->rx_left -= plen;
	e->expected_psn = (e->expected_psn + 1) & DROCE_PSN_MASK;
	*acked = (apsn & DROCE_BTH_ACKREQ) != 0;
	return 0;
}

/* Responder of end @p me: the other end's frames off its link, completions for AckReq; how many. */
static unsigned int responder(struct raw_ctx *c, unsigned int me)
{
	struct rte_mbuf *pkts[RAW_BURST];
	unsigned int n =
		rte_ring_sc_dequeue_burst(c->end[!me].link, (void **)pkts, RAW_BURST, NULL);

	for (unsigned int i = 0; i < n; i++) {
		bool acked = false;

		/* the answer to AckReq stands for the ACK: the requester's completion */
		if (place_packet(c, me, pkts[i], &acked) == 0 && acked) {
			struct raw_cqe cqe = {.len = 0, .status = 0};

			(void)rte_ring_sp_enqueue_elem(c->end[!me].cq, &cqe, sizeof(cqe));
		}
	}
	if (n > 0)
		rte_pktmbuf_free_bulk(pkts, n);
	return n;
}

/*
 * droce's engine loop, reduced to its work and its idle policy: after
 * RAW_IDLE_LOOPS passes with nothing to do it sleeps idle_sleep_us (droce's
 * DROCE_IDLE_SLEEP_US, default 50), otherwise it pauses between passes.
 */
int raw_engine_lcore(void *arg)
{
	struct raw_ctx *c = arg;
	unsigned int idle = 0;

	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		unsigned int work = 0;

		for (unsigned int me = 0; me < RAW_ENDS; me++) {
			work += requester(c, me);
			work += responder(c, me);
		}
		if (work > 0)
			idle = 0;
		else if (++idle >= RAW_IDLE_LOOPS && c->idle_sleep_us > 0)
			usleep(c->idle_sleep_us);
		else
			rte_pause();
	}
	return 0;
}
