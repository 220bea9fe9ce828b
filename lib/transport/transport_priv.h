/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/transport private declarations, grouped by the file that defines them. */
#ifndef DROCE_TRANSPORT_PRIV_H
#define DROCE_TRANSPORT_PRIV_H

#include "droce_transport.h"

/** Largest ring slot the engine copies out (send: 64 + 32 SGEs or 512 inline bytes). */
#define DROCE_TQP_SLOT_MAX 1024

/** How long a UD send waits for its destination's MAC before it is dropped. */
#define DROCE_UD_NEIGH_WAIT_US 3000000u

/* tqp_svc.c: the QP services below the roles */
/* Write a CQE to the QP's send / receive CQ, counted (req_cqe_*, rdma_recvs, resp_cqe_*). */
void droce_tqp_complete_send(const struct droce_transport_env *env, struct droce_tqp *q,
			     const struct droce_cqe *cqe);
void droce_tqp_complete_recv(const struct droce_transport_env *env, struct droce_tqp *q,
			     const struct droce_cqe *cqe, bool solicited);
/* Hand a built frame of the QP to the port, counted (sent_pkts, sent_bytes). */
void droce_tqp_tx(const struct droce_transport_env *env, struct droce_tqp *q, struct rte_mbuf *m);
/* The QP enters @p state (SQE or ERR) by itself: the verbs layer is told, @p event raised. */
void droce_tqp_to_error(const struct droce_transport_env *env, struct droce_tqp *q,
			enum ibv_qp_state state, enum ibv_event_type event);
int droce_tqp_flush_sq(const struct droce_transport_env *env, struct droce_tqp *q, int budget);
int droce_tqp_flush_rq(const struct droce_transport_env *env, struct droce_tqp *q, int budget);

/* ud.c */
int droce_ud_send(const struct droce_transport_env *env, struct droce_tqp *q, uint32_t now_us,
		  int budget);
int droce_ud_recv(const struct droce_transport_env *env, struct droce_tqp *q, struct rte_mbuf *m,
		  const struct droce_pkt *pkt);

/* sge.c: moving message bytes between SGEs and packets, with key checks; 0, -EACCES (a key
 * check failed), -EMSGSIZE (the SGEs hold fewer bytes) or -EINVAL (the mbuf is short) */
/** Gather bytes [@p offset, @p offset + @p len) of the message over @p sge into @p dst. */
int droce_sge_gather(const struct droce_transport_env *env, uint32_t pd,
		     const struct droce_sge *sge, uint32_t num_sge, uint32_t offset, uint8_t *dst,
		     uint32_t len);
/** Scatter @p len bytes of @p src into the buffers of @p sge from their start (LOCAL_WRITE). */
int droce_sge_scatter_buf(const struct droce_transport_env *env, uint32_t pd,
			  const struct droce_sge *sge, uint32_t num_sge, const void *src,
			  uint32_t len);
/** Scatter @p len bytes of chain @p m (from @p m_off) into @p sge from byte @p offset. */
int droce_sge_scatter(const struct droce_transport_env *env, uint32_t pd,
		      const struct droce_sge *sge, uint32_t num_sge, uint32_t offset,
		      const struct rte_mbuf *m, uint32_t m_off, uint32_t len);

/* zc.c: zero-copy frames (doc/transport.md) */
struct droce_zc;
/** Payload pieces a zero-copy frame takes at most (one per SGE it spans). */
#define DROCE_ZC_PIECES_MAX 4
struct droce_zc_piece {
	void *host;
	uint32_t len;
	uint32_t key; /**< an MR's key: its busy count is held while the frame lives */
};
/** Per-QP counts of segments in flight by shadow slot (@p size a power of two); NULL: no memory. */
struct droce_zc *droce_zc_create(uint32_t size);
/** The QP lets go: freed once no segment is in flight. NULL is ignored. */
void droce_zc_release(struct droce_zc *zc);
/** Segments in flight of the WQE in shadow slot @p slot; of the whole QP. */
uint32_t droce_zc_slot_busy(const struct droce_zc *zc, uint32_t slot);
uint32_t droce_zc_busy(const struct droce_zc *zc);
/**
 * The pieces of bytes [@p offset, @p offset + @p len) of a message over @p sge, keys checked:
 * their count, -EACCES (a key check failed), -E2BIG (more than @p max pieces), -EMSGSIZE.
 */
int droce_zc_pieces(const struct droce_transport_env *env, uint32_t pd, const struct droce_sge *sge,
		    uint32_t num_sge, uint32_t offset, uint32_t len, struct droce_zc_piece *p,
		    unsigned int max);
/**
 * A frame of headers (first segment), @p n external-buffer segments over @p p and a tail
 * with pad and ICRC; the segments hold the pieces' MR counts and, when @p zc, slot @p slot's
 * count. NULL: no mbuf (nothing held).
 */
struct rte_mbuf *droce_zc_frame(const struct droce_transport_env *env, const struct droce_addr *a,
				const struct droce_hdr_fields *f, uint32_t len,
				const struct droce_zc_piece *p, unsigned int n, struct droce_zc *zc,
				uint32_t slot);

#endif /* DROCE_TRANSPORT_PRIV_H */
