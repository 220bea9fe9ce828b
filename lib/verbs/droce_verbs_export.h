/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * What droced (lib/daemon) needs of its own verbs objects to hand them to an
 * application: the memfd and layout of a queue's shared memory, a channel's
 * descriptor, the ids WQEs carry, a device as the engine runs it. Internal to
 * droce, not installed.
 */
#ifndef DROCE_VERBS_EXPORT_H
#define DROCE_VERBS_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce_dproto.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A queue's memfd (owned by the object: duplicate it to send) and its layout. */
int droce_export_cq(struct ibv_cq *cq, struct droce_dproto_shm *s, int *fd);
int droce_export_srq(struct ibv_srq *srq, struct droce_dproto_shm *s, int *fd);
int droce_export_qp(struct ibv_qp *qp, struct droce_dproto_shm *s, int *fd);

/**
 * The application's end of the channel: the read end of a pipe, 8 bytes per
 * event, whose non-blocking write end replaces the channel's eventfd, so no
 * application can make the engine's count block. Owned by the caller, who
 * closes it after the channel. From now on the channel only counts events:
 * the application tells CQs apart by their notify_count. -errno on failure.
 */
int droce_export_channel(struct ibv_comp_channel *ch);

/** Whether the application owning @p qp may set controlled Q_Keys (its uid, not droced's). */
void droce_export_qp_privileged(struct ibv_qp *qp, bool privileged);

/** The id UD work requests carry for @p ah. */
uint32_t droce_export_ah_id(struct ibv_ah *ah);
/** The key-table handle bind work requests carry for @p mw. */
uint32_t droce_export_mw_handle(struct ibv_mw *mw);

/** Async events of @p ctx not yet taken by ibv_get_async_event(). */
unsigned int droce_export_async_pending(struct ibv_context *ctx);

/** @p dev as the engine runs it (MAC, addresses, MTU, link, speed). */
void droce_export_device(struct ibv_device *dev, struct droce_dproto_device *out);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_VERBS_EXPORT_H */
