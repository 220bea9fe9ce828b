/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM service: one thread per process drives the CM agent of the engine running here.
 * It sleeps in poll() on two descriptors, the engine's GSI queue (MADs received on QP1)
 * and its own wake-up eventfd (a consumer's call may have set a sooner timer), with the
 * agent's next deadline as the timeout. MADs leave through the engine's GSI, from whichever
 * thread holds the lock. The thread ends by itself once the engine has stopped.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "droce_cm_service.h"
#include "droce_engine.h"

/* how long the thread sleeps at most: the engine's stop is seen within this */
#define SERVICE_POLL_MAX_MS 100
/* MADs taken from the GSI queue per lock hold */
#define SERVICE_RX_BURST 16

struct droce_cm_service {
	pthread_mutex_t lock; /* the agent's: every call on it, and the thread's work */
	struct droce_cm *cm;
	pthread_t thread;
	int wake_fd;
	bool stopping; /* set under `lock`: the thread leaves */
	bool ended;    /* set under `lock` by the thread when it left (the engine stopped) */
};

/* The one service of the process, and the lock that starts and stops it. */
static pthread_mutex_t service_gate = PTHREAD_MUTEX_INITIALIZER;
static struct droce_cm_service *service;

static uint64_t service_now_us(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int service_send(void *arg, const struct droce_cm_addr *to, const uint8_t *mad)
{
	struct droce_engine_mad m;

	(void)arg;
	memset(&m, 0, sizeof(m));
	m.port = to->port;
	memcpy(m.sgid, to->sgid, sizeof(m.sgid));
	memcpy(m.dgid, to->dgid, sizeof(m.dgid));
	m.traffic_class = to->traffic_class;
	m.hop_limit = to->hop_limit;
	m.flow_label = to->flow_label;
	m.pkey = to->pkey;
	m.remote_qpn = DROCE_GSI_QPN; /* the peer's CM listens on its GSI (13.5.1) */
	memcpy(m.mad, mad, sizeof(m.mad));
	return droce_engine_gsi_send(&m);
}

/* An event goes to its id's sink; a new child's to its listener's, which adopts it. */
static void service_event(void *arg, struct droce_cm_id *id, const struct droce_cm_event *ev)
{
	struct droce_cm_sink *sink = droce_cm_id_context(id);

	(void)arg;
	if (sink == NULL && ev->listen_id != NULL)
		sink = droce_cm_id_context(ev->listen_id);
	if (sink != NULL && sink->event != NULL)
		sink->event(sink, id, ev);
	else if (sink == NULL && ev->listen_id != NULL)
		/* nobody listens any more: the request is refused as for no listener */
		droce_cm_send_rej(id, DROCE_CM_REJ_INVALID_SERVICE_ID, NULL, 0, NULL, 0);
}

static void service_rx(struct droce_cm_service *s)
{
	struct droce_engine_mad m[SERVICE_RX_BURST];
	int n;

	do {
		n = droce_engine_gsi_recv(m, SERVICE_RX_BURST);
		for (int i = 0; i < n; i++) {
			struct droce_cm_addr from = {
				.port = m[i].port,
				.traffic_class = m[i].traffic_class,
				.hop_limit = m[i].hop_limit,
				.flow_label = m[i].flow_label,
				.pkey = m[i].pkey,
			};

			memcpy(from.sgid, m[i].sgid, sizeof(from.sgid));
			memcpy(from.dgid, m[i].dgid, sizeof(from.dgid));
			droce_cm_recv(s->cm, &from, m[i].mad, sizeof(m[i].mad));
		}
	} while (n == SERVICE_RX_BURST);
}

static int service_timeout_ms(uint64_t next_us)
{
	uint64_t now = service_now_us(NULL);
	uint64_t ms;

	if (next_us <= now)
		return 0;
	ms = (next_us - now + 999) / 1000; /* never wake before the deadline */
	return ms > SERVICE_POLL_MAX_MS ? SERVICE_POLL_MAX_MS : (int)ms;
}

static void drain_fd(int fd)
{
	uint64_t v;

	/* both descriptors are non-blocking counters: one read clears them */
	if (read(fd, &v, sizeof(v)) < 0)
		return;
}

static void *service_thread(void *arg)
{
	struct droce_cm_service *s = arg;
	uint64_t next = UINT64_MAX;

	for (;;) {
		int gsi_fd = droce_engine_gsi_fd();
		struct pollfd pfd[2] = {
			{.fd = s->wake_fd, .events = POLLIN},
			{.fd = gsi_fd, .events = POLLIN},
		};
		bool stop;

		poll(pfd, gsi_fd >= 0 ? 2 : 1, service_timeout_ms(next));
		if (pfd[0].revents & POLLIN)
			drain_fd(s->wake_fd);
		if (gsi_fd >= 0 && (pfd[1].revents & POLLIN))
			drain_fd(gsi_fd);
		pthread_mutex_lock(&s->lock);
		stop = s->stopping || !droce_engine_running();
		if (!stop) {
			service_rx(s);
			next = droce_cm_timers_run(s->cm);
		}
		s->ended = stop;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;
	}
	return NULL;
}

static void service_free(struct droce_cm_service *s)
{
	if (s->cm != NULL)
		droce_cm_destroy(s->cm);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static struct droce_cm_service *service_start(void)
{
	const struct droce_cm_ops ops = {
		.send = service_send,
		.event = service_event,
		.now_us = service_now_us,
	};
	struct droce_cm_service *s = calloc(1, sizeof(*s));
	int err;

	if (s == NULL)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->cm = droce_cm_create(&ops);
	if (s->wake_fd < 0 || s->cm == NULL) {
		err = errno;
		service_free(s);
		errno = err;
		return NULL;
	}
	err = pthread_create(&s->thread, NULL, service_thread, s);
	if (err != 0) {
		service_free(s);
		errno = err;
		return NULL;
	}
	return s;
}

/* Join and free a service whose thread has left or is told to; under service_gate. */
static void service_end(struct droce_cm_service *s)
{
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_mutex_unlock(&s->lock);
	/* on failure the thread still sees `stopping` within SERVICE_POLL_MAX_MS */
	(void)eventfd_write(s->wake_fd, 1);
	pthread_join(s->thread, NULL);
	service_free(s);
}

static bool service_ended(struct droce_cm_service *s)
{
	bool ended;

	pthread_mutex_lock(&s->lock);
	ended = s->ended;
	pthread_mutex_unlock(&s->lock);
	return ended;
}

struct droce_cm_service *droce_cm_service_get(void)
{
	struct droce_cm_service *s;

	pthread_mutex_lock(&service_gate);
	if (!droce_engine_running()) {
		/* a service left from an engine that stopped is ended here */
		if (service != NULL) {
			service_end(service);
			service = NULL;
		}
		pthread_mutex_unlock(&service_gate);
		errno = ENODEV;
		return NULL;
	}
	if (service != NULL && service_ended(service)) {
		/* the engine stopped and started again since: a new agent for the new engine */
		service_end(service);
		service = NULL;
	}
	if (service == NULL)
		service = service_start();
	s = service;
	pthread_mutex_unlock(&service_gate);
	return s;
}

void droce_cm_service_stop(void)
{
	pthread_mutex_lock(&service_gate);
	if (service != NULL) {
		service_end(service);
		service = NULL;
	}
	pthread_mutex_unlock(&service_gate);
}

int droce_cm_service_port(const char *device, unsigned int *port)
{
	int idx;

	if (device == NULL || port == NULL)
		return -EINVAL;
	if (!droce_engine_running())
		return -ENODEV;
	idx = droce_engine_port_index(device);
	if (idx < 0)
		return idx;
	*port = (unsigned int)idx;
	return 0;
}

struct droce_cm *droce_cm_service_lock(struct droce_cm_service *s)
{
	pthread_mutex_lock(&s->lock);
	return s->cm;
}

void droce_cm_service_unlock(struct droce_cm_service *s)
{
	pthread_mutex_unlock(&s->lock);
	(void)eventfd_write(s->wake_fd, 1);
}
