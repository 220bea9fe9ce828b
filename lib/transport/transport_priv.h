/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/transport private declarations, grouped by the file that defines them. */
#ifndef DROCE_TRANSPORT_PRIV_H
#define DROCE_TRANSPORT_PRIV_H

#include "droce_transport.h"

/** Largest ring slot the engine copies out (send: 64 + 32 SGEs or 512 inline bytes). */
#define DROCE_TQP_SLOT_MAX 1024

/** How long a UD send waits for its destination's MAC before it is dropped. */
#define DROCE_UD_NEIGH_WAIT_US 3000000u

/* tqp.c */
/* Write a CQE to the QP's send / receive CQ, counted (req_cqe_*, rdma_recvs, resp_cqe_*). */
void droce_tqp_complete_send(const struct droce_transport_env *env, struct droce_tqp *q,
			     const struct droce_cqe *cqe);
void droce_tqp_complete_recv(const struct droce_transport_env *env, struct droce_tqp *q,
			     const struct droce_cqe *cqe, bool solicited);
/* Hand a built frame of the QP to the port, counted (sent_pkts, sent_bytes). */
void droce_tqp_tx(const struct droce_transport_env *env, struct droce_tqp *q, struct rte_mbuf *m);
void droce_tqp_to_error(const struct droce_transport_env *env, struct droce_tqp *q,
			enum ibv_qp_state state, enum ibv_event_type event);
int droce_tqp_flush_sq(const struct droce_transport_env *env, struct droce_tqp *q, int budget);
int droce_tqp_flush_rq(const struct droce_transport_env *env, struct droce_tqp *q, int budget);

/* path.c */
/** Address template from a GRH; 0, -EAGAIN (MAC being resolved) or -EINVAL. */
int droce_path_addr(const struct droce_transport_env *env, const struct ibv_global_route *grh,
		    uint32_t qpn, uint32_t dqpn, struct droce_addr *a);

/* ud.c */
int droce_ud_send(const struct droce_transport_env *env, struct droce_tqp *q, uint32_t now_us,
		  int budget);
int droce_ud_recv(const struct droce_transport_env *env, struct droce_tqp *q, struct rte_mbuf *m,
		  const struct droce_pkt *pkt);

/* sge.c: moving message bytes between SGEs and packets, with key checks */
int droce_sge_gather(const struct droce_transport_env *env, uint32_t pd,
		     const struct droce_sge *sge, uint32_t num_sge, uint8_t *dst, uint32_t len);
int droce_sge_gather_at(const struct droce_transport_env *env, uint32_t pd,
			const struct droce_sge *sge, uint32_t num_sge, uint32_t offset,
			uint8_t *dst, uint32_t len);
int droce_sge_scatter_buf(const struct droce_transport_env *env, uint32_t pd,
			  const struct droce_sge *sge, uint32_t num_sge, const void *src,
			  uint32_t len);
int droce_sge_scatter(const struct droce_transport_env *env, uint32_t pd,
		      const struct droce_sge *sge, uint32_t num_sge, uint32_t offset,
		      const struct rte_mbuf *m, uint32_t m_off, uint32_t len);

#endif /* DROCE_TRANSPORT_PRIV_H */
