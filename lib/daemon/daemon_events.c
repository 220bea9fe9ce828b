/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Async events of an application's context: droced takes them from its own
 * context (QP, CQ, SRQ and port events its engine raised), names their object
 * by the application's handle, publishes them in a ring the application maps
 * and counts each on the application's async eventfd. A full ring holds the
 * rest in droced's context until the application has taken some: none is lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon_priv.h"

int devents_create(struct dclient *c)
{
	size_t len = droce_ring_mem_size(DROCE_DPROTO_EVENT_SLOTS, sizeof(struct droce_dproto_event));
	int fd, rc;

	len = (len + 4095) & ~(size_t)4095;
	fd = memfd_create("droced-events", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		goto fail;
	c->ev_mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c->ev_mem == MAP_FAILED) {
		c->ev_mem = NULL;
		goto fail;
	}
	c->ev_len = len;
	rc = droce_ring_init(c->ev_mem, len, DROCE_DPROTO_EVENT_SLOTS,
			     sizeof(struct droce_dproto_event));
	if (rc == 0)
		rc = droce_ring_prod_attach(&c->ev, c->ev_mem, len);
	if (rc != 0) {
		munmap(c->ev_mem, len);
		c->ev_mem = NULL;
		close(fd);
		return rc;
	}
	return fd;
fail:
	rc = -errno;
	close(fd);
	return rc;
}

/* The application's handle of the event's object; the port for port events; 0 when gone. */
static uint32_t event_handle(const struct dclient *c, const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return dclient_handle_of(c, DOBJ_CQ, ev->element.cq);
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return dclient_handle_of(c, DOBJ_QP, ev->element.qp);
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return dclient_handle_of(c, DOBJ_SRQ, ev->element.srq);
	default:
		return (uint32_t)ev->element.port_num;
	}
}

void devents_forward(struct dclient *c)
{
	static const uint64_t one = 1;

	if (c->ctx == NULL)
		return;
	for (;;) {
		struct ibv_async_event ev;
		struct droce_dproto_event *slot;
		int room = droce_ring_prod_free(&c->ev);

		if (room < 0)
			return; /* the application broke its ring: its events stop */
		if (room == 0) {
			c->ev_throttled = true; /* retried on droced's next tick */
			return;
		}
		c->ev_throttled = false;
		/* droced's async_fd is non-blocking: -1 when none is left */
		if (ibv_get_async_event(c->ctx, &ev) != 0)
			return;
		slot = droce_ring_prod_slot(&c->ev, 0);
		slot->event_type = ev.event_type;
		slot->handle = event_handle(c, &ev);
		ibv_ack_async_event(&ev);
		if (slot->handle == 0 && ev.event_type != IBV_EVENT_DEVICE_FATAL)
			continue; /* about an object already destroyed */
		/* the slot, then the count: the application finds the event when it wakes */
		droce_ring_prod_publish(&c->ev, 1);
		if (write(c->app_efd, &one, sizeof(one)) != sizeof(one))
			(void)0; /* an eventfd only refuses at 2^64 - 2 counts */
	}
}
