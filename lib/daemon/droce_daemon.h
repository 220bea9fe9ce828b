/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * droced, the daemon that owns droce's ports and engine and serves
 * application processes over a UNIX socket (doc/daemon.md). The program
 * app/droced is a thin wrapper around this.
 */
#ifndef DROCE_DAEMON_H
#define DROCE_DAEMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DROCE_DAEMON_DEVICES_MAX 16

/** droced's configuration: a file of `key = value` lines, or the same keys as options. */
struct droce_daemon_conf {
	char socket_path[108]; /**< socket: where applications connect */
	mode_t socket_mode;    /**< socket_mode: who may connect (octal, default 0660) */
	gid_t socket_gid;      /**< socket_group: group of the socket, (gid_t)-1 to keep */
	unsigned int n_devices;
	char device[DROCE_DAEMON_DEVICES_MAX][512]; /**< device: DROCE_DEVICES syntax, one each */
	char eal_args[512];                         /**< eal: extra EAL arguments */
	unsigned int memory_mb;         /**< memory: EAL -m (MB), 0 for DPDK's default */
	int idle_sleep_us;              /**< idle_sleep_us: engine back-off, -1 for the default */
	unsigned int lcores;            /**< lcores: engine lcores, 0 for the default (1) */
	unsigned int max_clients;       /**< max_clients: connections at once */
	unsigned int max_objects;       /**< max_objects: objects per connection */
	unsigned int max_objects_total; /**< max_objects_total: objects of all connections */
};

/**
 * The defaults: socket DROCE_DPROTO_SOCKET_DEFAULT, mode 0660, 64 clients, 4096 objects a
 * connection, 32768 in all (every MR and queue is a mapping in droced, and the kernel's
 * vm.max_map_count, 65530 by default, bounds them all).
 */
void droce_daemon_conf_init(struct droce_daemon_conf *c);

/** Set one key. 0, or -EINVAL with a message in @p err. */
int droce_daemon_conf_set(struct droce_daemon_conf *c, const char *key, const char *value,
			  char *err, size_t errlen);

/** Read a configuration file ('#' comments, blank lines). 0 or -errno with a message. */
int droce_daemon_conf_load(struct droce_daemon_conf *c, const char *path, char *err, size_t errlen);

struct droce_daemon;

/**
 * Start the engine on the configured devices and listen on the socket. NULL
 * with a message on stderr when either fails.
 */
struct droce_daemon *droce_daemon_start(const struct droce_daemon_conf *c);

/**
 * Serve until @p stop_fd (a signalfd or an eventfd) becomes readable. 0 or -errno.
 */
int droce_daemon_run(struct droce_daemon *d, int stop_fd);

/**
 * Stop: every QP of every application moves to ERR (their WRs are flushed to
 * their CQs), connections close, every object is released, the socket goes.
 */
void droce_daemon_stop(struct droce_daemon *d);

/** Connections being served (for tests and status). */
unsigned int droce_daemon_clients(const struct droce_daemon *d);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_DAEMON_H */
