/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/daemon private declarations. Never installed. */
#ifndef DROCE_DAEMON_PRIV_H
#define DROCE_DAEMON_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "droce_daemon.h"
#include "droce_dproto.h"
#include "droce_ring.h"

enum dobj_kind {
	DOBJ_FREE = 0,
	DOBJ_PD,
	DOBJ_MR,
	DOBJ_MW,
	DOBJ_CHANNEL,
	DOBJ_CQ,
	DOBJ_SRQ,
	DOBJ_QP,
	DOBJ_AH,
	DOBJ_KINDS
};

/** One object of a connection: droced's verbs object behind the application's handle. */
struct dobj {
	enum dobj_kind kind;
	void *ptr;
	void *map; /* an MR: droced's mapping of the application's file */
	size_t map_len;
	int fd; /* a channel: droced's copy of the application's end */
};

/** What an epoll event is about. */
struct dtag {
	enum { TAG_LISTEN, TAG_SOCK, TAG_ASYNC } type;
	struct dclient *client;
};

/** One connection: one application context. */
/*
 * Addresses one connection may have droced's shared neighbour table resolve at once, and
 * how long one it stops asking about stays its (its application asks every 20 ms at most).
 */
#define DCLIENT_RESOLVING_MAX     8u
#define DCLIENT_RESOLVING_IDLE_MS 1000u

/** An address a connection's resolution is waiting for (RESOLVE_L2 answered EAGAIN). */
struct dresolving {
	union ibv_gid gid;
	uint64_t asked_ms; /* last asked at (CLOCK_MONOTONIC); 0: a free slot */
};

struct dclient {
	struct droce_daemon *d;
	unsigned int id;
	int sock;
	pid_t pid;
	uid_t uid;
	uint64_t since_ms; /* accepted at (CLOCK_MONOTONIC) */
	struct dtag sock_tag, async_tag;
	struct ibv_context *ctx; /* after OPEN */
	int app_efd;             /* the application's async eventfd */
	void *ev_mem;            /* the event ring, shared with the application */
	size_t ev_len;
	struct droce_ring_prod ev;
	bool ev_throttled; /* the ring was full: the context's events wait */
	struct dobj *objs; /* handle -> object; 0 is never a handle */
	uint32_t n_objs, live;
	struct dresolving resolving[DCLIENT_RESOLVING_MAX];
	struct dclient *next;
};

struct droce_daemon {
	struct droce_daemon_conf conf;
	int listen_fd, epfd;
	int spare_fd; /* given up to accept, and close, a connection when out of descriptors */
	bool out_of_fds;
	struct dtag listen_tag;
	struct ibv_device **devs;
	int n_devs;
	struct ibv_context **root; /* one per device: keeps the engine's ports open */
	struct dclient *clients;
	/* the list and its clients' fields, for the telemetry thread (daemon_telemetry.c):
	 * the loop takes it to add or remove a client, the reader to walk the list */
	pthread_mutex_t list_lock;
	unsigned int n_clients, next_id, throttled;
	unsigned int live_objects; /* objects of every connection (max_objects_total) */
	timer_t guard; /* interrupts a write to an application's eventfd that would block */
	/* times the loop woke from epoll_wait (/droced/loop): written by the loop, read by the
	 * telemetry thread, a count only (relaxed) */
	uint64_t loop_passes;
	bool guard_ok;
};

/* daemon_client.c */
/** Serve one request of @p c. false when the connection must close. */
bool dclient_serve(struct dclient *c);
/** Release everything @p c holds, then @p c itself. */
void dclient_free(struct dclient *c);
/** Move every QP of @p c to ERR: their outstanding WRs are flushed. */
void dclient_flush_qps(struct dclient *c);

/* daemon_events.c */
/** Create the event ring of @p c: a sealed memfd. Its fd, or -errno. */
int devents_create(struct dclient *c);
/** Forward the context's async events into the ring. false when the connection must close. */
bool devents_forward(struct dclient *c);
/** Arm droced's guard against eventfds that do not take a count, for the calling thread. */
int devents_guard_init(struct droce_daemon *d);

/* daemon_telemetry.c */
/** /droced/clients, /droced/client and /droced/loop on DPDK telemetry, showing @p d. */
void dtelemetry_register(struct droce_daemon *d);
void dtelemetry_unregister(void);

/** The handle of @p ptr in @p c, 0 when none. */
uint32_t dclient_handle_of(const struct dclient *c, enum dobj_kind kind, const void *ptr);

#endif /* DROCE_DAEMON_PRIV_H */
