/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Importing objects from another process by kernel handle (ibv_import_*)
 * needs a kernel uverbs device, which droce's devices are not: refused with
 * EOPNOTSUPP, as libibverbs answers for a device without the ioctl. droced
 * shares objects between processes its own way (the daemon issue).
 */
#include <errno.h>

#include "verbs_priv.h"

struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context;
	(void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd; /* nothing can have been imported */
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd;
	(void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context;
	(void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

/*
 * Whether a message's data lands in memory in order. The engine copies the
 * packets of a QP in PSN order, so for RC and UC the whole message is written
 * in order; the answer is still 0 (no promise) until the transport documents
 * it as a guarantee.
 */
int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0;
}
