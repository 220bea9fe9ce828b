/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The engine's side of the verbs objects: where a QP's, CQ's or SRQ's rings
 * are, and the few things the engine does to them besides consuming WQEs and
 * producing CQEs (signal a completion channel, raise an async event, move a
 * QP to an error state). The embedded engine calls these in the application's
 * process; droced gets the same memory through file descriptors.
 *
 * Ring memory and control words are shared with the application, which may
 * be buggy: the engine reads them through droce_ring handles and checks every
 * value (doc/rings.md).
 */
#ifndef DROCE_VERBS_ENGINE_H
#define DROCE_VERBS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A shared mapping: @p addr in this process, @p fd for another one. */
struct droce_shm_view {
	void *addr;
	size_t len;
	int fd;
	size_t off; /**< offset of addr in the file */
};

struct droce_qp_view {
	uint32_t qpn;
	enum ibv_qp_type type;
	uint32_t pd;              /**< PD id keys are checked against */
	struct droce_shm_view sq; /**< send ring: the engine consumes */
	struct droce_shm_view rq; /**< receive ring (addr NULL on an SRQ): the engine consumes */
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_srq *srq;
	bool sq_sig_all;
};

struct droce_cq_view {
	struct droce_shm_view ring; /**< CQE ring: the engine produces */
};

struct droce_srq_view {
	struct droce_shm_view ring; /**< receive ring: the engine consumes */
	uint32_t pd;
};

struct droce_mr_table;

/** The key table of every MR and MW of this process (made on first use), NULL without memory. */
struct droce_mr_table *droce_verbs_mr_table(void);

/** The id a PD's objects and keys are checked against. */
uint32_t droce_verbs_pd_id(struct ibv_pd *pd);

/** Where a QP's rings are. 0 or -EINVAL. */
int droce_verbs_qp_view(struct ibv_qp *qp, struct droce_qp_view *v);
int droce_verbs_cq_view(struct ibv_cq *cq, struct droce_cq_view *v);
int droce_verbs_srq_view(struct ibv_srq *srq, struct droce_srq_view *v);

/** The QP's state as the engine must honour it (after modify, or its own error). */
enum ibv_qp_state droce_verbs_qp_state(struct ibv_qp *qp);

/**
 * Move a QP to IBV_QPS_SQE or IBV_QPS_ERR from the engine (a fatal completion
 * error): posting then completes with IBV_WC_WR_FLUSH_ERR. Raises the
 * matching async event when @p event is not 0. 0 or -EINVAL.
 */
int droce_verbs_qp_error(struct ibv_qp *qp, enum ibv_qp_state state, enum ibv_event_type event);

/**
 * The QP in SQD has drained its send queue: ibv_query_qp() stops reporting sq_draining, and
 * with @p notify the IBV_EVENT_SQ_DRAINED async event is raised. 0 or -errno.
 */
int droce_verbs_qp_drained(struct ibv_qp *qp, bool notify);

/**
 * After CQEs were published on @p cq: if the CQ is armed (for any completion,
 * or for solicited ones and @p solicited is true), disarm it and signal its
 * completion channel. Returns 1 when signalled, 0 when not armed, -errno.
 */
int droce_verbs_cq_notify(struct ibv_cq *cq, bool solicited);

/** Completions were lost to a full @p cq: queue IBV_EVENT_CQ_ERR on its context. */
int droce_verbs_cq_error(struct ibv_cq *cq);

/**
 * SRQ limit: call with the WQEs left on @p srq; when armed and below the
 * limit, disarm and raise IBV_EVENT_SRQ_LIMIT_REACHED. 1 when raised, 0, -errno.
 */
int droce_verbs_srq_check_limit(struct ibv_srq *srq, uint32_t wqes_left);

/**
 * One step of ibv_resolve_eth_l2_from_gid() for droced, which must not wait: the port's own
 * GIDs at once, any other through the engine's neighbour table. 0 with @p mac; -EAGAIN while
 * the requests are out (ask again); -EHOSTUNREACH (no answer); -EINVAL (not a station's).
 */
int droce_verbs_resolve_l2_step(struct ibv_context *context, const union ibv_gid *gid,
				uint8_t mac[6]);

/** Raise an async event on @p context (QP, CQ, SRQ or port event). 0 or -errno. */
int droce_verbs_async_event(struct ibv_context *context, const struct ibv_async_event *ev);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_VERBS_ENGINE_H */
