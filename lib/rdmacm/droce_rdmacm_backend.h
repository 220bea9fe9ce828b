/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The backend of droce's librdmacm: where the connection manager it drives lives. The
 * embedded backend is the CM agent of this process's engine (lib/cm's service); a backend
 * talking to droced's agent can be added beside it with the same table. librdmacm calls every
 * function but port_of and the lock pair between lock() and unlock(); the backend calls the
 * registered event handler with its lock held (the same lock), from a thread of its own.
 *
 * Errors: 0 or -errno.
 */
#ifndef DROCE_RDMACM_BACKEND_H
#define DROCE_RDMACM_BACKEND_H

#include <stdint.h>

#include "droce_cm.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * An event of the backend id @p cm whose owner is @p owner (the pointer given to
 * create_id or set_owner; NULL for a new child id, then @p listen_owner is its listener's).
 */
typedef void (*droce_rdmacm_event_fn)(void *owner, void *listen_owner, void *cm,
				      const struct droce_cm_event *ev);

struct droce_rdmacm_backend_ops {
	/** start (or find) the agent and register @p fn for every event: 0, -ENODEV */
	int (*open)(droce_rdmacm_event_fn fn);
	void (*lock)(void);
	void (*unlock)(void);
	/** the engine port of the verbs device @p device: 0, -ENOENT, -ENODEV */
	int (*port_of)(const char *device, unsigned int *port);
	/** a new backend id owned by @p owner: 0 with *@p cm, or -errno */
	int (*create_id)(void *owner, void **cm);
	void (*set_owner)(void *cm, void *owner);
	void (*destroy_id)(void *cm);
	int (*listen)(void *cm, uint64_t service_id);
	int (*send_req)(void *cm, const struct droce_cm_req_param *p);
	int (*send_rep)(void *cm, const struct droce_cm_rep_param *p);
	int (*send_rtu)(void *cm, const void *private_data, uint8_t len);
	int (*send_rej)(void *cm, uint16_t reason, const void *private_data, uint8_t len);
	int (*send_dreq)(void *cm, const void *private_data, uint8_t len);
	int (*send_drep)(void *cm, const void *private_data, uint8_t len);
	int (*established)(void *cm);
	int (*send_sidr_req)(void *cm, const struct droce_cm_sidr_req_param *p);
	int (*send_sidr_rep)(void *cm, const struct droce_cm_sidr_rep_param *p);
	enum droce_cm_state (*state)(void *cm);
};

/**
 * The embedded backend: the CM service of this process's engine. A weak reference: the
 * drop-in librdmacm.so.1 finds it in the drop-in libibverbs.so.1, which holds the engine; a
 * libibverbs without it leaves librdmacm without a CM (-ENODEV), not unloadable.
 */
const struct droce_rdmacm_backend_ops *droce_rdmacm_embedded_backend(void) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#endif /* DROCE_RDMACM_BACKEND_H */
