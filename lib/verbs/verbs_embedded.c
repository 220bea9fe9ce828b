/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The embedded backend's context entries: the engine of this process, started
 * by the first ibv_open_device() of a process whose DROCE_DEVICES names DPDK
 * devices (vdev) or back-to-back links (link), its ports' state and their
 * neighbour tables. verbs_embedded_obj.c tells it about every queue, QP state
 * change and address handle. Without such devices nothing starts and the verbs
 * objects work alone (ports stay down).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "droce_engine.h"
#include "droce_verbs_engine.h"
#include "verbs_priv.h"

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static bool start_tried;

static int hook_cq(struct ibv_cq *cq, bool solicited)
{
	return droce_verbs_cq_notify(cq, solicited);
}

static int hook_qp(struct ibv_qp *qp, enum ibv_qp_state state, enum ibv_event_type event)
{
	return droce_verbs_qp_error(qp, state, event);
}

static int hook_cq_error(struct ibv_cq *cq)
{
	return droce_verbs_cq_error(cq);
}

static int hook_drained(struct ibv_qp *qp, bool notify)
{
	return droce_verbs_qp_drained(qp, notify);
}

static int hook_srq(struct ibv_srq *srq, uint32_t left)
{
	return droce_verbs_srq_check_limit(srq, left);
}

static void port_conf(const struct droce_port_cfg *c, struct droce_engine_port_conf *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", c->name);
	snprintf(p->device, sizeof(p->device), "%s", c->vdev);
	snprintf(p->link, sizeof(p->link), "%s", c->link);
	p->mtu = c->eth_mtu;
	memcpy(p->mac, c->mac, 6);
	p->n_ipv4 = c->n_ipv4 < DROCE_ENGINE_ADDR_MAX ? c->n_ipv4 : DROCE_ENGINE_ADDR_MAX;
	memcpy(p->ipv4, c->ipv4, p->n_ipv4 * 4);
	p->n_ipv6 = c->n_ipv6 < DROCE_ENGINE_ADDR_MAX ? c->n_ipv6 : DROCE_ENGINE_ADDR_MAX;
	memcpy(p->ipv6, c->ipv6, p->n_ipv6 * 16);
	snprintf(p->capture, sizeof(p->capture), "%s", c->capture);
	p->n_neigh = c->n_neigh;
	memcpy(p->neigh, c->neigh, sizeof(p->neigh));
	p->fault = c->fault;
	p->send_window = c->window;
	/* off unless asked for: on the software links measured it does not pay (doc/transport.md)
	 */
	p->zero_copy_min = c->zero_copy_auto ? c->zero_copy_min : UINT32_MAX;
}

/*
 * DROCE_LINK_WAIT_MS: wait that long for every port's link before the first
 * ibv_open_device() returns. Programs such as perftest refuse a port that is
 * not ACTIVE right after opening it, and a memif link is up only once the
 * peer process has started its engine too.
 */
static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static void wait_links(const struct droce_engine_conf *conf)
{
	const char *env = getenv("DROCE_LINK_WAIT_MS");
	uint64_t until = now_ms() + (env != NULL ? strtoull(env, NULL, 0) : 0);

	while (now_ms() < until) {
		unsigned int up = 0;

		for (unsigned int i = 0; i < conf->n_ports; i++) {
			struct droce_engine_port_info info;

			if (droce_engine_port_info(conf->port[i].name, &info) == 0 && info.link_up)
				up++;
		}
		if (up == conf->n_ports)
			return;
		usleep(1000);
	}
}

/* Devices without mac= take their DPDK device's MAC, now that the engine opened it. */
static void adopt_device_macs(struct droce_device *const *devs, int n)
{
	for (int i = 0; i < n; i++) {
		struct droce_engine_port_info info;

		if (devs[i]->mac_from_device &&
		    droce_engine_port_info(devs[i]->port.name, &info) == 0 && !(info.mac[0] & 1) &&
		    memcmp(info.mac, "\0\0\0\0\0\0", 6) != 0)
			droce_device_set_mac(devs[i], info.mac);
	}
}

void droce_embedded_start(struct droce_device *const *devs, int n)
{
	struct droce_engine_hooks hooks = {.cq_notify = hook_cq,
					   .qp_error = hook_qp,
					   .srq_limit = hook_srq,
					   .sq_drained = hook_drained,
					   .cq_error = hook_cq_error};
	struct droce_engine_conf *conf;
	struct droce_mr_table *keys;
	int i, rc;

	pthread_mutex_lock(&start_lock);
	if (start_tried) {
		pthread_mutex_unlock(&start_lock);
		return;
	}
	start_tried = true;
	conf = calloc(1, sizeof(*conf));
	keys = droce_verbs_mr_table();
	if (conf == NULL || keys == NULL) {
		free(conf);
		pthread_mutex_unlock(&start_lock);
		return;
	}
	for (i = 0; i < n && conf->n_ports < DROCE_ENGINE_PORTS_MAX; i++) {
		struct droce_engine_port_conf *p = &conf->port[conf->n_ports];

		if (devs[i]->port.vdev[0] == '\0' && devs[i]->port.link[0] == '\0')
			continue;
		port_conf(&devs[i]->port, p);
		if (devs[i]->mac_from_device)
			memset(p->mac, 0, 6); /* the device keeps its own */
		conf->n_ports++;
	}
	if (conf->n_ports > 0) {
		const char *sleep_us = getenv("DROCE_IDLE_SLEEP_US");
		const char *lcores = getenv("DROCE_LCORES");

		conf->eal_args = getenv("DROCE_EAL_ARGS");
		conf->idle_sleep_us = sleep_us != NULL ? (uint32_t)strtoul(sleep_us, NULL, 0) : 50;
		conf->lcores = lcores != NULL ? (unsigned int)strtoul(lcores, NULL, 10) : 1;
		rc = droce_engine_start(conf, &hooks, keys);
		if (rc != 0)
			fprintf(stderr, "droce: the engine did not start (%s): ports stay down\n",
				strerror(-rc));
		else
			adopt_device_macs(devs, n);
		if (rc == 0)
			wait_links(conf);
	}
	free(conf);
	pthread_mutex_unlock(&start_lock);
}

/* ------------------------------------------------------------- the context */

int droce_embedded_open(struct droce_context *c)
{
	int n;
	struct droce_device *const *devs = droce_devices(&n);

	(void)c;
	droce_embedded_start(devs, n);
	return 0;
}

void droce_embedded_close(struct droce_context *c)
{
	(void)c; /* the engine outlives its contexts: it stops with the process */
}

bool droce_embedded_port(const struct droce_device *d, bool *link_up, uint32_t *speed_mbps)
{
	struct droce_engine_port_info info;

	if (!droce_engine_running() || droce_engine_port_info(d->port.name, &info) != 0)
		return false;
	*link_up = info.link_up;
	*speed_mbps = info.speed_mbps;
	return true;
}

bool droce_embedded_query_port(struct droce_context *c, bool *link_up, uint32_t *speed_mbps)
{
	return droce_embedded_port(c->dev, link_up, speed_mbps);
}

/* The port's neighbour table: ARP or neighbour discovery asks while it answers -EAGAIN. */
int droce_embedded_resolve_l2(struct droce_context *c, const union ibv_gid *gid, uint8_t mac[6])
{
	int rc = droce_engine_neigh_resolve(c->dev->port.name, gid->raw, mac);

	/* no engine runs the port: no neighbour is known, and none can be asked */
	if (rc == -ENODEV || rc == -ENOENT)
		return -EHOSTUNREACH;
	/* the port has no address of the GID's family to ask from */
	if (rc == -EADDRNOTAVAIL)
		return -EHOSTUNREACH;
	return rc;
}

void droce_embedded_async_pull(struct droce_context *c)
{
	(void)c; /* the engine queues its events on the context itself (droce_async_push) */
}
