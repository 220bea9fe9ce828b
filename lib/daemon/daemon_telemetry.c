/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced's own DPDK telemetry commands, beside the engine's (/droce/ports,
 * /droce/qps...): the applications it serves, and how often its loop woke. The commands run on the
 * EAL's telemetry thread; the client list is read under the daemon's list lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_telemetry.h>

#include "daemon_priv.h"

/* The droced whose clients the commands show (one per process). */
static struct droce_daemon *served;
static pthread_mutex_t served_lock = PTHREAD_MUTEX_INITIALIZER;

static int tel_clients(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	pthread_mutex_lock(&served_lock);
	if (served == NULL) {
		pthread_mutex_unlock(&served_lock);
		return -ENODEV;
	}
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	pthread_mutex_lock(&served->list_lock);
	for (struct dclient *c = served->clients; c != NULL; c = c->next)
		rte_tel_data_add_array_int(d, (int)c->pid);
	pthread_mutex_unlock(&served->list_lock);
	pthread_mutex_unlock(&served_lock);
	return 0;
}

static int tel_client(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char *end;
	long pid;
	int rc = -ENOENT;

	(void)cmd;
	if (params == NULL)
		return -EINVAL;
	pid = strtol(params, &end, 10);
	if (end == params || *end != '\0' || pid <= 0)
		return -EINVAL;
	pthread_mutex_lock(&served_lock);
	if (served == NULL) {
		pthread_mutex_unlock(&served_lock);
		return -ENODEV;
	}
	pthread_mutex_lock(&served->list_lock);
	for (struct dclient *c = served->clients; c != NULL; c = c->next) {
		if (c->pid != (pid_t)pid)
			continue;
		/* the first connection of that process; its others are listed apart */
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_int(d, "pid", (int)c->pid);
		rte_tel_data_add_dict_u64(d, "uid", c->uid);
		rte_tel_data_add_dict_u64(d, "connection", c->id);
		rte_tel_data_add_dict_u64(d, "objects", c->live);
		rte_tel_data_add_dict_string(
			d, "device", c->ctx != NULL ? ibv_get_device_name(c->ctx->device) : "");
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&served->list_lock);
	pthread_mutex_unlock(&served_lock);
	return rc;
}

static int tel_loop(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	pthread_mutex_lock(&served_lock);
	if (served == NULL) {
		pthread_mutex_unlock(&served_lock);
		return -ENODEV;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "passes",
				  __atomic_load_n(&served->loop_passes, __ATOMIC_RELAXED));
	pthread_mutex_unlock(&served_lock);
	return 0;
}

void dtelemetry_register(struct droce_daemon *d)
{
	static bool done;

	pthread_mutex_lock(&served_lock);
	served = d;
	pthread_mutex_unlock(&served_lock);
	/* commands live as long as the EAL: once per process */
	if (done)
		return;
	done = true;
	rte_telemetry_register_cmd("/droced/clients", tel_clients,
				   "The pids of droced's connected applications. No parameters");
	rte_telemetry_register_cmd(
		"/droced/client", tel_client,
		"A connected application: uid, objects, device. Parameter: its pid");
	rte_telemetry_register_cmd(
		"/droced/loop", tel_loop,
		"How often droced's loop has woken (each a pass over its events). No parameters");
}

void dtelemetry_unregister(void)
{
	/* DPDK 22.11 has no unregister: the commands answer -ENODEV from now on */
	pthread_mutex_lock(&served_lock);
	served = NULL;
	pthread_mutex_unlock(&served_lock);
}
