/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The CM service: the CM agent (droce_cm.h) of the engine running in this process (the
 * application's embedded engine, or droced's), driven by a thread of its own that takes the
 * MADs the engine's GSI (QP1) received, runs the agent's timers, and sends the agent's MADs
 * through the GSI.
 *
 * Consumers (droce's librdmacm, droced's clients) call the agent's functions between
 * droce_cm_service_lock() and droce_cm_service_unlock(). Events reach them through their ids'
 * contexts: every id's context is a struct droce_cm_sink (the consumer's, first member of its
 * own structure); a new child id (REQ_RCVD, SIDR_REQ_RCVD) has none yet and its event goes to
 * its listener's sink, which sets the child's context. Sinks are called by the service thread
 * with the lock held: they may call the agent, never block.
 *
 * Errors: 0 or -errno.
 */
#ifndef DROCE_CM_SERVICE_H
#define DROCE_CM_SERVICE_H

#include "droce_cm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct droce_cm_sink {
	void (*event)(struct droce_cm_sink *sink, struct droce_cm_id *id,
		      const struct droce_cm_event *ev);
};

struct droce_cm_service;

/**
 * The service of this process's running engine, started on the first call (its thread, the
 * engine's GSI opened). NULL with errno ENODEV when no engine runs.
 */
struct droce_cm_service *droce_cm_service_get(void);

/** Stop the thread and destroy the agent (the engine's stop calls it). */
void droce_cm_service_stop(void);

/**
 * The engine port index (struct droce_cm_addr.port) of the verbs device named @p device (its
 * one port): 0 with *@p port written; -ENOENT (no such device in the engine); -ENODEV (no
 * engine).
 */
int droce_cm_service_port(const char *device, unsigned int *port);

/** Take the service's lock and return its agent. */
struct droce_cm *droce_cm_service_lock(struct droce_cm_service *s);
/** Release the lock and wake the thread: a call may have set a timer sooner than it sleeps. */
void droce_cm_service_unlock(struct droce_cm_service *s);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_CM_SERVICE_H */
