/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The op tables of a context: what the inline wrappers of <infiniband/verbs.h>
 * (ibv_post_send, ibv_poll_cq, ibv_create_qp_ex, ...) call. Every entry points
 * to droce's implementation; none is left to fail at run time by accident.
 */
#include "verbs_priv.h"

void droce_context_ops_init_objects(struct droce_context *c)
{
	struct ibv_context_ops *ops = &c->vctx.context.ops;

	ops->poll_cq = droce_poll_cq;
	ops->req_notify_cq = droce_req_notify_cq;
	ops->post_send = droce_post_send;
	ops->post_recv = droce_post_recv;
	ops->post_srq_recv = droce_post_srq_recv;
	ops->alloc_mw = droce_alloc_mw;
	ops->dealloc_mw = droce_dealloc_mw;
	ops->bind_mw = droce_bind_mw;
	c->vctx.create_cq_ex = droce_create_cq_ex;
	c->vctx.create_qp_ex = droce_create_qp_ex;
}
