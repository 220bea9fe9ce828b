/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unreliable Datagram: one packet per message (SEND_ONLY or
 * SEND_ONLY_WITH_IMMEDIATE, with a DETH), addressed by an address handle per
 * work request; the receiver checks the Q_Key and puts the 40-byte GRH area
 * at the head of the receive buffer. IBTA 9.2 (opcodes), 9.3.2 (DETH), the
 * datagram service of chapter 10, and annex A17 (the GRH area of RoCEv2).
 */
#include <errno.h>
#include <string.h>

#include "droce_wire_icrc.h"
#include "droce_wire_mbuf.h"
#include "transport_priv.h"

/* A WQE copied out of the ring (the header and what follows it). */
struct wqe_copy {
	struct droce_send_wqe hdr;
	uint8_t data[DROCE_TQP_SLOT_MAX - sizeof(struct droce_send_wqe)];
};

struct rwqe_copy {
	struct droce_recv_wqe hdr;
	struct droce_sge sge[(DROCE_TQP_SLOT_MAX - sizeof(struct droce_recv_wqe)) /
			     sizeof(struct droce_sge)];
};

/* Address template of a UD send to @p ah; 0, -EAGAIN (MAC unknown yet) or -EINVAL. */
static int ud_addr(const struct droce_transport_env *env, const struct droce_tqp *q,
		   const struct droce_tah *ah, uint32_t dqpn, struct droce_addr *a)
{
	return droce_path_addr(env, &ah->attr.grh, q->qpn, dqpn, a);
}

/* Build the frame of one UD send in a new mbuf; NULL when the pool is empty. */
static struct rte_mbuf *ud_frame(const struct droce_transport_env *env, struct droce_tqp *q,
				 const struct wqe_copy *w, const struct droce_addr *a,
				 uint32_t qkey, int *err)
{
	struct droce_hdr_fields f;
	struct rte_mbuf *m = rte_pktmbuf_alloc(env->pool);
	uint32_t len = w->hdr.length;
	size_t frame_len;
	ssize_t hdr_len;
	uint8_t *buf, *l3;

	*err = 0;
	if (m == NULL)
		return NULL;
	memset(&f, 0, sizeof(f));
	f.opcode =
		w->hdr.op == DROCE_WQE_SEND_IMM ? DROCE_OP_UD_SEND_ONLY_IMM : DROCE_OP_UD_SEND_ONLY;
	f.se = w->hdr.flags & DROCE_WQE_SOLICITED;
	f.pkey = q->pkey;
	f.dqpn = w->hdr.u.ud.remote_qpn;
	f.psn = q->sq_psn;
	f.deth.qkey = qkey;
	f.deth.sqpn = q->qpn;
	f.imm_be = w->hdr.imm;
	frame_len = droce_frame_len(a, f.opcode, len);
	buf = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)frame_len);
	if (frame_len > UINT16_MAX || buf == NULL) {
		rte_pktmbuf_free(m);
		*err = -EMSGSIZE;
		return NULL;
	}
	hdr_len = droce_build_hdrs(buf, frame_len, a, (uint16_t)q->sq_psn, &f, len);
	if (hdr_len < 0) {
		rte_pktmbuf_free(m);
		*err = (int)hdr_len;
		return NULL;
	}
	if (w->hdr.flags & DROCE_WQE_INLINE)
		memcpy(buf + hdr_len, w->data, len);
	else
		*err = droce_sge_gather(env, q->pd, (const struct droce_sge *)w->data,
					w->hdr.num_sge, 0, buf + hdr_len, len);
	if (*err != 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(buf + hdr_len + len, 0, droce_pad_len(len));
	l3 = buf + sizeof(struct droce_eth_hdr);
	droce_icrc_store(
		buf + frame_len - DROCE_ICRC_LEN,
		droce_icrc_calc(l3, a->ipv6 ? 40 : 20, a->ipv6,
				frame_len - DROCE_ICRC_LEN - sizeof(struct droce_eth_hdr)));
	return m;
}

/* Complete the send at the head of the ring and release its slot. */
static void ud_send_done(const struct droce_transport_env *env, struct droce_tqp *q,
			 const struct wqe_copy *w, enum ibv_wc_status status)
{
	droce_ring_cons_release(&q->sq, 1);
	q->neigh_tries = 0;
	if (status == IBV_WC_SUCCESS && !(w->hdr.flags & DROCE_WQE_SIGNALED))
		return;
	struct droce_cqe e = {
		.wr_id = w->hdr.wr_id,
		.status = (uint8_t)status,
		.opcode = IBV_WC_SEND,
		.byte_len = w->hdr.length,
		.qp_num = q->qpn,
	};

	droce_tqp_complete_send(env, q, &e);
	/* a local error on a UD send queue stops it: the Send Queue Error state */
	if (status != IBV_WC_SUCCESS)
		droce_tqp_to_error(env, q, IBV_QPS_SQE, 0);
}

/* Check a WQE copy for UD: 0 or the completion status it fails with. */
static enum ibv_wc_status ud_check(const struct droce_transport_env *env, const struct droce_tqp *q,
				   const struct wqe_copy *w, const struct droce_tah **ah)
{
	uint32_t room = q->sq.slot_size - (uint32_t)sizeof(w->hdr);

	if (w->hdr.op != DROCE_WQE_SEND && w->hdr.op != DROCE_WQE_SEND_IMM)
		return IBV_WC_LOC_QP_OP_ERR;
	if ((w->hdr.flags & DROCE_WQE_INLINE) ? w->hdr.length > room
					      : (uint32_t)w->hdr.num_sge * 16 > room)
		return IBV_WC_LOC_QP_OP_ERR;
	/* a UD message is one packet: no longer than the path MTU */
	if (w->hdr.length > env->port->mtu_bytes)
		return IBV_WC_LOC_LEN_ERR;
	*ah = env->ah(env->arg, w->hdr.u.ud.ah);
	if (*ah == NULL || !(*ah)->valid || (*ah)->pd != q->pd || !(*ah)->attr.is_global)
		return IBV_WC_LOC_QP_OP_ERR;
	return IBV_WC_SUCCESS;
}

int droce_ud_send(const struct droce_transport_env *env, struct droce_tqp *q, uint32_t now_us,
		  int budget)
{
	int avail = droce_ring_cons_avail(&q->sq), done = 0;

	if (avail < 0) {
		droce_tqp_to_error(env, q, IBV_QPS_ERR, IBV_EVENT_QP_FATAL);
		return avail;
	}
	while (done < avail && done < budget && q->state == IBV_QPS_RTS) {
		struct wqe_copy w;
		const struct droce_tah *ah = NULL;
		struct droce_addr a;
		struct rte_mbuf *m;
		enum ibv_wc_status st;
		uint32_t qkey;
		bool unresolved;
		int rc;

		memcpy(&w, droce_ring_cons_slot(&q->sq, 0), q->sq.slot_size);
		st = ud_check(env, q, &w, &ah);
		if (st != IBV_WC_SUCCESS) {
			ud_send_done(env, q, &w, st);
			done++;
			continue;
		}
		rc = ud_addr(env, q, ah, w.hdr.u.ud.remote_qpn, &a);
		if (rc == -EHOSTUNREACH) {
			/* nobody answered for it a moment ago: lost, as on a wire (UD) */
			q->stats.neigh_drop++;
			ud_send_done(env, q, &w, IBV_WC_SUCCESS);
			done++;
			continue;
		}
		unresolved = rc == -EAGAIN && env->tx_unresolved != NULL;
		if (unresolved) {
			rc = 0; /* built now, sent by the port once the MAC is known */
		} else if (rc == -EAGAIN) {
			/* wait for the neighbour; UD is unreliable: give up after a while */
			if (q->neigh_tries++ == 0) {
				q->neigh_since = now_us;
				q->stats.neigh_miss++;
			}
			if (now_us - q->neigh_since < DROCE_UD_NEIGH_WAIT_US)
				break;
			q->stats.neigh_drop++;
			ud_send_done(env, q, &w, IBV_WC_SUCCESS);
			done++;
			continue;
		}
		if (rc != 0) {
			ud_send_done(env, q, &w, IBV_WC_LOC_QP_OP_ERR);
			done++;
			continue;
		}
		/* a WR Q_Key with the high bit set means "use the QP's own" (IBTA Q_Key rules) */
		qkey = (w.hdr.u.ud.remote_qkey & DROCE_QKEY_PRIVILEGED) ? q->qkey
									: w.hdr.u.ud.remote_qkey;
		m = ud_frame(env, q, &w, &a, qkey, &rc);
		if (m == NULL) {
			if (rc == 0)
				break; /* no mbuf now: retry on the next loop */
			ud_send_done(env, q, &w,
				     rc == -EACCES ? IBV_WC_LOC_PROT_ERR : IBV_WC_LOC_LEN_ERR);
			done++;
			continue;
		}
		if (unresolved) {
			uint32_t bytes = m->pkt_len;

			if (env->tx_unresolved(env->arg, m, ah->attr.grh.dgid.raw) != 0) {
				rte_pktmbuf_free(m);
				break; /* the port's queue is full: this WQE waits for room */
			}
			q->stats.neigh_miss++;
			q->stats.sent_pkts++;
			q->stats.sent_bytes += bytes;
		} else {
			droce_tqp_tx(env, q, m);
		}
		q->stats.rdma_sends++;
		q->sq_psn = (q->sq_psn + 1) & DROCE_PSN_MASK;
		ud_send_done(env, q, &w, IBV_WC_SUCCESS);
		done++;
	}
	return done;
}

/* The GRH area: the packet's IPv6 header, or 20 zero bytes and its IPv4 header. */
static void grh_area(const struct rte_mbuf *m, const struct droce_pkt *pkt, uint8_t grh[40])
{
	memset(grh, 0, 40);
	if (pkt->flags & DROCE_PKT_IPV6) {
		const void *p = rte_pktmbuf_read(m, pkt->l3_off, 40, grh);

		if (p != NULL && p != grh)
			memcpy(grh, p, 40);
	} else {
		const void *p = rte_pktmbuf_read(m, pkt->l3_off, 20, grh + 20);

		if (p != NULL && p != grh + 20)
			memcpy(grh + 20, p, 20);
	}
}

/*
 * Copy the next receive WQE of the QP (or its SRQ) into @p r, leaving it posted: a datagram
 * the WQE cannot hold must not use it up. Returns the WQEs posted (<= 0: none). A shared
 * SRQ stays locked until take_recv() or leave_recv(): no other lcore takes that WQE.
 */
static int peek_recv(struct droce_tqp *q, struct rwqe_copy *r)
{
	struct droce_ring_cons *ring = q->srq != NULL ? q->srq : &q->rq;
	int avail;

	droce_shared_lock_take(q->srq_lock);
	avail = droce_ring_cons_avail(ring);
	if (avail > 0)
		memcpy(r, droce_ring_cons_slot(ring, 0), ring->slot_size);
	return avail;
}

/* Leave the WQE peek_recv() copied where it is. */
static void leave_recv(struct droce_tqp *q)
{
	droce_shared_lock_give(q->srq_lock);
}

/* Take the WQE peek_recv() copied out of the @p avail posted. */
static void take_recv(const struct droce_transport_env *env, struct droce_tqp *q, int avail)
{
	droce_ring_cons_release(q->srq != NULL ? q->srq : &q->rq, 1);
	droce_shared_lock_give(q->srq_lock);
	if (q->srq != NULL && env->srq_limit != NULL)
		env->srq_limit(env->arg, q->srq_user, (uint32_t)avail - 1);
}

/*
 * A datagram the receive WQE cannot hold: its buffers lack room for the 40-byte GRH area, or
 * for the GRH area and the payload. The WQE is consumed and completes with IBV_WC_LOC_LEN_ERR
 * (Local Length Error, IBTA 11.6.2's completion statuses; ibv_post_srq_recv(): a UD receive
 * buffer needs 40 bytes more than the payload, or its Work Completion is in error),
 * from the QP's own receive queue and from an SRQ alike, as RoCE NICs report it. UD has no
 * NAK (IBTA 9.9.3): the sender is not told, and the QP stays in RTS, so that no remote
 * sender can end a UD QP by sending too much (Linux kernels 6.2 to 6.9 moved it to Error:
 * CVE-2024-40992). Kept posted instead, the WQE would be offered to the next datagram and
 * the receiver never told why one was lost.
 */
static int wqe_too_short(const struct droce_transport_env *env, struct droce_tqp *q,
			 struct rte_mbuf *m, struct droce_cqe *e, int avail)
{
	q->stats.resp_local_length_error++;
	take_recv(env, q, avail);
	e->status = IBV_WC_LOC_LEN_ERR;
	droce_tqp_complete_recv(env, q, e, false);
	rte_pktmbuf_free(m);
	return -EMSGSIZE;
}

int droce_ud_recv(const struct droce_transport_env *env, struct droce_tqp *q, struct rte_mbuf *m,
		  const struct droce_pkt *pkt)
{
	struct droce_ring_cons *ring = q->srq != NULL ? q->srq : &q->rq;
	struct droce_hdr_fields f;
	struct rwqe_copy r;
	struct droce_cqe e;
	uint64_t total = 0;
	uint32_t max_sge, i;
	uint8_t grh[40];
	int avail, rc;

	if (!(pkt->mask & DROCE_OPM_UD)) {
		rte_pktmbuf_free(m);
		return -EPROTO; /* an RC/UC opcode sent to a UD QP: silently dropped */
	}
	droce_pkt_fields_mbuf(pkt, m, &f);
	/* P_Key: the default partition, full or limited member */
	if ((f.pkey & 0x7fff) != (q->pkey & 0x7fff)) {
		q->stats.pkey_violations++;
		rte_pktmbuf_free(m);
		return -EACCES;
	}
	/* Q_Key: the packet's must equal the QP's */
	if (f.deth.qkey != q->qkey) {
		q->stats.qkey_violations++;
		rte_pktmbuf_free(m);
		return -EACCES;
	}
	avail = peek_recv(q, &r);
	if (avail <= 0) {
		leave_recv(q);
		/* UD has no RNR: with no receive WQE the packet is dropped */
		q->stats.out_of_buffer++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	memset(&e, 0, sizeof(e));
	e.wr_id = r.hdr.wr_id;
	e.qp_num = q->qpn;
	e.opcode = IBV_WC_RECV;
	max_sge = (ring->slot_size - (uint32_t)sizeof(r.hdr)) / (uint32_t)sizeof(struct droce_sge);
	if (r.hdr.num_sge > max_sge) {
		/* a malformed WQE is the local application's error: it ends the QP */
		take_recv(env, q, avail);
		e.status = IBV_WC_LOC_QP_OP_ERR;
		goto out_error;
	}
	for (i = 0; i < r.hdr.num_sge; i++)
		total += r.sge[i].length;
	/* the GRH area first, then the payload: a WQE short of either cannot take it */
	if (total < 40u + pkt->payload_len)
		return wqe_too_short(env, q, m, &e, avail);
	take_recv(env, q, avail);
	grh_area(m, pkt, grh);
	rc = droce_sge_scatter_buf(env, q->pd, r.sge, r.hdr.num_sge, grh, 40);
	if (rc == 0)
		rc = droce_sge_scatter(env, q->pd, r.sge, r.hdr.num_sge, 40, m, pkt->payload_off,
				       pkt->payload_len);
	if (rc != 0) {
		e.status = IBV_WC_LOC_PROT_ERR;
		goto out_error;
	}
	e.status = IBV_WC_SUCCESS;
	e.byte_len = 40u + pkt->payload_len;
	e.src_qp = f.deth.sqpn;
	e.wc_flags = IBV_WC_GRH;
	if (pkt->mask & DROCE_OPM_IMMDT) {
		e.imm = f.imm_be;
		e.wc_flags |= IBV_WC_WITH_IMM;
	}
	droce_tqp_complete_recv(env, q, &e, f.se);
	rte_pktmbuf_free(m);
	return 0;

out_error:
	/* a local error of the receive side moves the QP to the Error state */
	droce_tqp_complete_recv(env, q, &e, false);
	droce_tqp_to_error(env, q, IBV_QPS_ERR, IBV_EVENT_QP_FATAL);
	rte_pktmbuf_free(m);
	return -EIO;
}
