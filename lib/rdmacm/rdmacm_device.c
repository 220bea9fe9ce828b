/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The devices librdmacm works with: every verbs device, opened once for the life of the
 * process (as librdmacm keeps its own open), each with its default PD made on first use and
 * the engine port the CM reaches it through. Opening the first device starts the embedded
 * engine; the backend is opened after it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_priv.h"

static pthread_once_t devices_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rdmacm_device *devices;
static int device_count;
static int devices_err;
static const struct droce_rdmacm_backend_ops *backend;
static int backend_err = -ENODEV;
static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;

static void devices_init(void)
{
	struct ibv_device **list = ibv_get_device_list(&device_count);
	struct ibv_device_attr attr;

	if (list == NULL) {
		devices_err = -errno;
		device_count = 0;
		return;
	}
	devices = calloc(device_count > 0 ? (size_t)device_count : 1, sizeof(*devices));
	if (devices == NULL) {
		devices_err = -ENOMEM;
		device_count = 0;
		ibv_free_device_list(list);
		return;
	}
	for (int i = 0; i < device_count; i++) {
		devices[i].verbs = ibv_open_device(list[i]);
		if (devices[i].verbs == NULL) {
			devices_err = errno != 0 ? -errno : -ENODEV;
			device_count = i;
			break;
		}
		if (ibv_query_device(devices[i].verbs, &attr) == 0) {
			devices[i].ack_delay = attr.local_ca_ack_delay;
			devices[i].max_rd_atom = (uint8_t)attr.max_qp_rd_atom;
			devices[i].max_init_rd_atom = (uint8_t)attr.max_qp_init_rd_atom;
		}
	}
	ibv_free_device_list(list);
	/* the engine runs now (the first open started it): its CM agent can start */
	if (droce_rdmacm_embedded_backend != NULL) {
		const struct droce_rdmacm_backend_ops *b = droce_rdmacm_embedded_backend();

		backend_err = b->open(rdmacm_on_cm_event);
		if (backend_err == 0)
			backend = b;
	}
	for (int i = 0; backend != NULL && i < device_count; i++)
		devices[i].has_engine_port =
			backend->port_of(ibv_get_device_name(devices[i].verbs->device),
					 &devices[i].engine_port) == 0;
}

int rdmacm_devices_open(void)
{
	pthread_once(&devices_once, devices_init);
	if (device_count == 0)
		return devices_err != 0 ? devices_err : -ENODEV;
	return 0;
}

const struct droce_rdmacm_backend_ops *rdmacm_backend(int *err)
{
	pthread_once(&devices_once, devices_init);
	if (backend == NULL)
		*err = backend_err;
	return backend;
}

void rdmacm_lock(void)
{
	pthread_once(&devices_once, devices_init);
	if (backend != NULL)
		backend->lock();
	else
		pthread_mutex_lock(&own_lock);
}

void rdmacm_unlock(void)
{
	if (backend != NULL)
		backend->unlock();
	else
		pthread_mutex_unlock(&own_lock);
}

int rdmacm_device_count(void)
{
	pthread_once(&devices_once, devices_init);
	return device_count;
}

struct rdmacm_device *rdmacm_device_nth(int i)
{
	return i >= 0 && i < rdmacm_device_count() ? &devices[i] : NULL;
}

struct rdmacm_device *rdmacm_device_of(struct ibv_context *verbs)
{
	for (int i = 0; i < rdmacm_device_count(); i++)
		if (devices[i].verbs == verbs)
			return &devices[i];
	return NULL;
}

struct rdmacm_device *rdmacm_device_at_port(unsigned int engine_port)
{
	for (int i = 0; i < rdmacm_device_count(); i++)
		if (devices[i].has_engine_port && devices[i].engine_port == engine_port)
			return &devices[i];
	return NULL;
}

struct ibv_pd *rdmacm_device_pd(struct rdmacm_device *d)
{
	pthread_mutex_lock(&devices_lock);
	if (d->pd == NULL)
		d->pd = ibv_alloc_pd(d->verbs);
	pthread_mutex_unlock(&devices_lock);
	return d->pd;
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	int n, rc;

	rc = rdmacm_devices_open();
	if (rc < 0) {
		errno = -rc; /* as librdmacm: no device, no list */
		return NULL;
	}
	n = rdmacm_device_count();
	list = calloc((size_t)n + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < n; i++)
		list[i] = devices[i].verbs;
	if (num_devices != NULL)
		*num_devices = n;
	return list;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
