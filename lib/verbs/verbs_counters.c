/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters of a verbs device's port and of a verbs QP (include/droce_counters.h):
 * the embedded engine that runs them reads them on its lcore.
 */
#include <errno.h>

#include "droce_counters.h"
#include "verbs_priv.h"

int droce_port_counters(struct ibv_context *context, uint8_t port_num, struct droce_counter *c,
			unsigned int n)
{
	int rc;

	if (context == NULL || port_num != 1 || (c == NULL && n > 0))
		return -EINVAL;
	rc = droce_engine_port_counters(to_dctx(context)->dev->port.name, c, n);
	/* not running, or running without this device's port */
	return rc == -ENOENT ? -ENODEV : rc;
}

int droce_qp_counters(struct ibv_qp *qp, struct droce_counter *c, unsigned int n)
{
	int rc;

	if (qp == NULL || (c == NULL && n > 0))
		return -EINVAL;
	if (!to_dqp(qp)->in_engine)
		return -ENODEV;
	rc = droce_engine_qp_counters(qp->qp_num, c, n);
	return rc == -ENOENT ? -ENODEV : rc;
}
