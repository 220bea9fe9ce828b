/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The embedded backend: librdmacm's ids on the CM agent of this process's engine, through
 * lib/cm's service. Each agent id's context is a small sink naming the librdmacm id that
 * owns it; a new child id has none until librdmacm takes it (set_owner), and its first event
 * reaches librdmacm through its listener's.
 */
#include <errno.h>
#include <stdlib.h>

#include "droce_cm_service.h"
#include "droce_rdmacm_backend.h"

struct embedded_sink {
	struct droce_cm_sink sink; /* first: the service calls it */
	void *owner;
};

static struct droce_cm_service *service;
static struct droce_cm *agent; /* while the service's lock is held */
static droce_rdmacm_event_fn event_fn;

static void sink_event(struct droce_cm_sink *sink, struct droce_cm_id *id,
		       const struct droce_cm_event *ev)
{
	struct embedded_sink *own = droce_cm_id_context(id);
	struct embedded_sink *listener;

	(void)sink;
	if (own != NULL) {
		event_fn(own->owner, NULL, id, ev);
		return;
	}
	listener = ev->listen_id != NULL ? droce_cm_id_context(ev->listen_id) : NULL;
	if (listener == NULL) {
		droce_cm_id_destroy(id); /* nobody to take it: refused */
		return;
	}
	event_fn(NULL, listener->owner, id, ev);
}

static int embedded_open(droce_rdmacm_event_fn fn)
{
	service = droce_cm_service_get();
	if (service == NULL)
		return errno != 0 ? -errno : -ENODEV;
	event_fn = fn;
	return 0;
}

static void embedded_lock(void)
{
	agent = droce_cm_service_lock(service);
}

static void embedded_unlock(void)
{
	droce_cm_service_unlock(service);
}

static int embedded_port_of(const char *device, unsigned int *port)
{
	return droce_cm_service_port(device, port);
}

static struct embedded_sink *sink_new(void *owner)
{
	struct embedded_sink *s = calloc(1, sizeof(*s));

	if (s != NULL) {
		s->sink.event = sink_event;
		s->owner = owner;
	}
	return s;
}

static int embedded_create_id(void *owner, void **cm)
{
	struct embedded_sink *s = sink_new(owner);
	struct droce_cm_id *id;

	if (s == NULL)
		return -ENOMEM;
	id = droce_cm_id_create(agent, s);
	if (id == NULL) {
		free(s);
		return errno != 0 ? -errno : -ENOMEM;
	}
	*cm = id;
	return 0;
}

static void embedded_set_owner(void *cm, void *owner)
{
	struct embedded_sink *s = droce_cm_id_context(cm);

	if (s == NULL) {
		s = sink_new(owner);
		if (s == NULL) {
			droce_cm_id_destroy(cm); /* refused rather than lost */
			return;
		}
		droce_cm_id_set_context(cm, s);
	}
	s->owner = owner;
}

static void embedded_destroy_id(void *cm)
{
	struct embedded_sink *s = droce_cm_id_context(cm);

	droce_cm_id_destroy(cm);
	free(s);
}

static int embedded_listen(void *cm, uint64_t service_id)
{
	return droce_cm_listen(cm, service_id, 0);
}

static int embedded_send_req(void *cm, const struct droce_cm_req_param *p)
{
	return droce_cm_send_req(cm, p);
}

static int embedded_send_rep(void *cm, const struct droce_cm_rep_param *p)
{
	return droce_cm_send_rep(cm, p);
}

static int embedded_send_rtu(void *cm, const void *private_data, uint8_t len)
{
	return droce_cm_send_rtu(cm, private_data, len);
}

static int embedded_send_rej(void *cm, uint16_t reason, const void *private_data, uint8_t len)
{
	return droce_cm_send_rej(cm, reason, NULL, 0, private_data, len);
}

static int embedded_send_dreq(void *cm, const void *private_data, uint8_t len)
{
	return droce_cm_send_dreq(cm, private_data, len);
}

static int embedded_send_drep(void *cm, const void *private_data, uint8_t len)
{
	return droce_cm_send_drep(cm, private_data, len);
}

static int embedded_established(void *cm)
{
	return droce_cm_established(cm);
}

static int embedded_send_sidr_req(void *cm, const struct droce_cm_sidr_req_param *p)
{
	return droce_cm_send_sidr_req(cm, p);
}

static int embedded_send_sidr_rep(void *cm, const struct droce_cm_sidr_rep_param *p)
{
	return droce_cm_send_sidr_rep(cm, p);
}

static enum droce_cm_state embedded_state(void *cm)
{
	return droce_cm_id_state(cm);
}

static const struct droce_rdmacm_backend_ops embedded_ops = {
	.open = embedded_open,
	.lock = embedded_lock,
	.unlock = embedded_unlock,
	.port_of = embedded_port_of,
	.create_id = embedded_create_id,
	.set_owner = embedded_set_owner,
	.destroy_id = embedded_destroy_id,
	.listen = embedded_listen,
	.send_req = embedded_send_req,
	.send_rep = embedded_send_rep,
	.send_rtu = embedded_send_rtu,
	.send_rej = embedded_send_rej,
	.send_dreq = embedded_send_dreq,
	.send_drep = embedded_send_drep,
	.established = embedded_established,
	.send_sidr_req = embedded_send_sidr_req,
	.send_sidr_rep = embedded_send_sidr_rep,
	.state = embedded_state,
};

const struct droce_rdmacm_backend_ops *droce_rdmacm_embedded_backend(void)
{
	return &embedded_ops;
}
