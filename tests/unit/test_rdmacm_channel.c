/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event channels: a pollable descriptor (O_CLOEXEC), rdma_get_cm_event blocking or, on an
 * O_NONBLOCK descriptor, EAGAIN; events in order, acknowledged, and the NULL arguments.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "rdmacm_env.h"

static struct sockaddr_in ip4(const char *a, uint16_t port)
{
	struct sockaddr_in s = {.sin_family = AF_INET, .sin_port = htons(port)};

	cr_assert_eq(inet_pton(AF_INET, a, &s.sin_addr), 1);
	return s;
}

static bool readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

Test(rdmacm_channel, pollable_cloexec)
{
	struct rdma_event_channel *ch;

	rdmacm_test_env();
	ch = rdma_create_event_channel();

	cr_assert_not_null(ch, "create: %s", strerror(errno));
	cr_assert_geq(ch->fd, 0, "a descriptor");
	cr_assert(fcntl(ch->fd, F_GETFD) & FD_CLOEXEC, "close-on-exec");
	cr_assert_not(readable(ch->fd), "nothing to read yet");
	rdma_destroy_event_channel(ch);
}

Test(rdmacm_channel, nonblocking_empty_is_eagain)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev = NULL;

	rdmacm_test_env();
	ch = rdma_create_event_channel();

	cr_assert_not_null(ch);
	cr_assert_eq(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
	errno = 0;
	cr_assert_eq(rdma_get_cm_event(ch, &ev), -1, "no event");
	cr_assert_eq(errno, EAGAIN, "EAGAIN, got %s", strerror(errno));
	cr_assert_null(ev, "nothing handed out");
	rdma_destroy_event_channel(ch);
}

Test(rdmacm_channel, no_device_no_channel)
{
	struct rdma_cm_id *id;

	setenv("DROCE_DEVICES", "", 1);
	errno = 0;
	cr_assert_null(rdma_create_event_channel(), "no RDMA device");
	cr_assert_eq(errno, ENODEV, "ENODEV as librdmacm, got %s", strerror(errno));
	errno = 0;
	cr_assert_eq(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), -1);
	cr_assert_eq(errno, ENODEV);
	errno = 0;
	cr_assert_null(rdma_get_devices(NULL));
	cr_assert_eq(errno, ENODEV);
}

Test(rdmacm_channel, null_arguments)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;

	rdmacm_test_env();
	ch = rdma_create_event_channel();

	errno = 0;
	cr_assert_eq(rdma_get_cm_event(NULL, &ev), -1);
	cr_assert_eq(errno, EINVAL, "NULL channel: EINVAL");
	errno = 0;
	cr_assert_eq(rdma_get_cm_event(ch, NULL), -1);
	cr_assert_eq(errno, EINVAL, "NULL event: EINVAL");
	errno = 0;
	cr_assert_eq(rdma_ack_cm_event(NULL), -1);
	cr_assert_eq(errno, EINVAL, "ack NULL: EINVAL");
	rdma_destroy_event_channel(NULL); /* nothing, no crash */
	rdma_destroy_event_channel(ch);
}

Test(rdmacm_channel, events_in_order_then_empty)
{
	struct rdma_event_channel *ch;
	struct sockaddr_in dst = ip4("10.0.0.2", 7471);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int ctx_token;

	rdmacm_test_env();
	ch = rdma_create_event_channel();
	cr_assert_not_null(ch);
	cr_assert_eq(rdma_create_id(ch, &id, &ctx_token, RDMA_PS_TCP), 0, "%s", strerror(errno));
	cr_assert_eq(id->channel, ch, "the id's channel");
	cr_assert_eq(id->context, &ctx_token, "the id's context");
	cr_assert_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0, "%s",
		     strerror(errno));
	cr_assert(readable(ch->fd), "the event makes the descriptor readable");
	cr_assert_eq(rdma_get_cm_event(ch, &ev), 0);
	cr_assert_eq(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED, "%s", rdma_event_str(ev->event));
	cr_assert_eq(ev->id, id, "the event's id");
	cr_assert_eq(ev->status, 0);
	cr_assert_eq(rdma_ack_cm_event(ev), 0);
	cr_assert_eq(rdma_resolve_route(id, 2000), 0, "%s", strerror(errno));
	cr_assert_eq(rdma_get_cm_event(ch, &ev), 0);
	cr_assert_eq(ev->event, RDMA_CM_EVENT_ROUTE_RESOLVED, "%s", rdma_event_str(ev->event));
	cr_assert_eq(rdma_ack_cm_event(ev), 0);
	cr_assert_not(readable(ch->fd), "all taken");
	cr_assert_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

Test(rdmacm_channel, blocking_get_waits_for_the_event)
{
	struct rdma_event_channel *ch;
	struct sockaddr_in dst = ip4("10.0.0.2", 7471);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	rdmacm_test_env();
	ch = rdma_create_event_channel();
	cr_assert_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	/* blocking descriptor with one event: the call returns it */
	cr_assert_eq(rdma_get_cm_event(ch, &ev), 0);
	cr_assert_eq(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	rdma_ack_cm_event(ev);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

Test(rdmacm_channel, migrate_moves_queued_events)
{
	struct rdma_event_channel *a, *b;
	struct sockaddr_in dst = ip4("10.0.0.2", 7471);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	rdmacm_test_env();
	a = rdma_create_event_channel();
	b = rdma_create_event_channel();
	cr_assert_eq(rdma_create_id(a, &id, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	cr_assert_eq(rdma_migrate_id(id, b), 0, "%s", strerror(errno));
	cr_assert_eq(id->channel, b, "the id is on the new channel");
	cr_assert(readable(b->fd), "its event went along");
	cr_assert_eq(rdma_get_cm_event(b, &ev), 0);
	cr_assert_eq(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	rdma_ack_cm_event(ev);
	cr_assert_eq(fcntl(a->fd, F_SETFL, O_NONBLOCK), 0);
	cr_assert_eq(rdma_get_cm_event(a, &ev), -1, "nothing left on the old channel");
	cr_assert_eq(errno, EAGAIN);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(a);
	rdma_destroy_event_channel(b);
}
