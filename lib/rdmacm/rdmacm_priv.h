/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce's librdmacm, inside: the structures behind the public ones of <rdma/rdma_cma.h>
 * (each public structure is the first member of droce's), and the prototypes shared by the
 * files of lib/rdmacm. The public calls follow librdmacm's convention: 0 or -1 with errno,
 * NULL with errno; the helpers here return 0 or -errno.
 */
#ifndef RDMACM_PRIV_H
#define RDMACM_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "droce_rdmacm.h"
#include "droce_rdmacm_backend.h"

/* The CM's timing as Linux's rdma_cm sets it: 4.096 us x 2^20 to answer, 15 retries. */
#define RDMACM_CM_RESPONSE_TIMEOUT 20
#define RDMACM_MAX_CM_RETRIES      15
/* Packet lifetime of a RoCE path as Linux's rdma_cm gives it (4.096 us x 2^16). */
#define RDMACM_PACKET_LIFETIME 16
/* Hop limit of the path record: the IP default TTL. */
#define RDMACM_HOP_LIMIT 64
/* Private data of each message after the rdma_cm header (IBTA 12.6.5 and following). */
#define RDMACM_REQ_PRIVATE_MAX      92
#define RDMACM_REP_PRIVATE_MAX      196
#define RDMACM_REJ_PRIVATE_MAX      148
#define RDMACM_DREQ_PRIVATE_MAX     220
#define RDMACM_SIDR_REQ_PRIVATE_MAX 216
#define RDMACM_SIDR_REP_PRIVATE_MAX 136
#define RDMACM_EVENT_PRIVATE_MAX    256

/** The life of an id, as librdmacm's users see it. */
enum rdmacm_state {
	RDMACM_IDLE,
	RDMACM_ADDR_QUERY,
	RDMACM_ADDR_RESOLVED,
	RDMACM_ROUTE_QUERY,
	RDMACM_ROUTE_RESOLVED,
	RDMACM_CONNECT,          /**< REQ or SIDR_REQ sent */
	RDMACM_CONNECT_RESPONSE, /**< REP received, RTU not yet sent (no QP) */
	RDMACM_REQUEST,          /**< a child: REQ/SIDR_REQ received, not yet answered */
	RDMACM_ACCEPTED,         /**< REP sent */
	RDMACM_LISTEN,
	RDMACM_ESTABLISHED,
	RDMACM_DISCONNECT, /**< DREQ sent or received, or the connection failed */
	RDMACM_STATE_COUNT
};

extern const char *const rdmacm_state_name[RDMACM_STATE_COUNT];

struct rdmacm_event {
	struct rdma_cm_event ev; /* first: what rdma_get_cm_event hands out */
	TAILQ_ENTRY(rdmacm_event) link;
	uint8_t private_data[RDMACM_EVENT_PRIVATE_MAX];
};

TAILQ_HEAD(rdmacm_event_list, rdmacm_event);

struct rdmacm_channel {
	struct rdma_event_channel ch; /* first: its fd is an eventfd counting queued events */
	pthread_mutex_t lock;
	struct rdmacm_event_list queue;
};

/** A device librdmacm opened (rdma_get_devices), for the life of the process. */
struct rdmacm_device {
	struct ibv_context *verbs;
	struct ibv_pd *pd; /* the default PD, made on first use */
	unsigned int engine_port;
	bool has_engine_port;
	uint8_t ack_delay;                     /* the device's local CA ACK delay */
	uint8_t max_rd_atom, max_init_rd_atom; /* its RDMA READ/atomic depths */
};

struct rdmacm_id {
	struct rdma_cm_id id; /* first */
	enum rdmacm_state state;
	bool sync; /* made with no channel: calls wait for their event */
	void *cm;  /* the backend's id, NULL until the CM is used */
	struct rdmacm_device *dev;
	struct rdmacm_id *listen; /* a child's listener */
	/* options (rdma_set_option) */
	bool reuseaddr, afonly, tos_set, timeout_set;
	uint8_t tos, ack_timeout;
	/* the binding (rdmacm_port.c) */
	bool bound;
	LIST_ENTRY(rdmacm_id) bound_link;
	/* the route: one path record */
	struct ibv_sa_path_rec path;
	uint8_t sgid_index;
	/* what the CM exchanged; local_psn: our SQ PSN, remote_psn: our RQ PSN (the peer's SQ) */
	uint32_t local_psn, remote_qpn, remote_psn, remote_qkey;
	uint8_t responder_resources, initiator_depth, retry_count, rnr_retry_count;
	uint8_t target_ack_delay;
	bool srq;
	bool disconnect_reported; /* DISCONNECTED was queued */
	/* events handed out and not yet acknowledged */
	unsigned int events_out;
	/* rdma_create_ep's QP attributes for the ids rdma_get_request hands out */
	struct ibv_qp_init_attr *ep_qp_attr;
};

static inline struct rdmacm_id *to_rid(struct rdma_cm_id *id)
{
	return (struct rdmacm_id *)id;
}

static inline struct rdmacm_channel *to_rch(struct rdma_event_channel *ch)
{
	return (struct rdmacm_channel *)ch;
}

/* the lock guarding every id's state: the backend's, or ours when there is none */
void rdmacm_lock(void);
void rdmacm_unlock(void);
/* the backend, opened on first use: NULL with -errno in *err */
const struct droce_rdmacm_backend_ops *rdmacm_backend(int *err);

/* rdmacm_channel.c */
struct rdmacm_channel *rdmacm_channel_new(void);
void rdmacm_channel_free(struct rdmacm_channel *c);
/*
 * Queue an event of @p rid (on @p listen's channel for a connection request): @p param's
 * parameters (may be NULL), @p data of @p len as private data, copied into the event.
 */
int rdmacm_event_queue(struct rdmacm_id *rid, enum rdma_cm_event_type type, int status,
		       struct rdmacm_id *listen, const void *data, size_t len,
		       const struct rdma_cm_event *param);
/* drop @p rid's queued events; children of a listener @p rid are handed to @p orphan */
/* wait until every event of @p rid handed out was acknowledged */
void rdmacm_events_wait(struct rdmacm_id *rid);
void rdmacm_channel_forget(struct rdmacm_channel *c, struct rdmacm_id *rid,
			   void (*orphan)(struct rdmacm_id *child));

/* rdmacm_device.c */
int rdmacm_devices_open(void);
struct rdmacm_device *rdmacm_device_of(struct ibv_context *verbs);
struct rdmacm_device *rdmacm_device_at_port(unsigned int engine_port);
struct ibv_pd *rdmacm_device_pd(struct rdmacm_device *d);
int rdmacm_device_count(void);
struct rdmacm_device *rdmacm_device_nth(int i);

/* rdmacm_port.c: the process's table of bound (port space, address, port) */
int rdmacm_port_bind(struct rdmacm_id *rid, struct sockaddr *addr);
void rdmacm_port_unbind(struct rdmacm_id *rid);
/* -EADDRINUSE when another id listens on the same port space, port and address */
int rdmacm_port_check_listen(struct rdmacm_id *rid);

/* rdmacm_addr.c */
socklen_t rdmacm_sockaddr_len(const struct sockaddr *sa);
uint16_t rdmacm_sockaddr_port(const struct sockaddr *sa);
void rdmacm_sockaddr_set_port(struct sockaddr *sa, uint16_t port);
bool rdmacm_sockaddr_any(const struct sockaddr *sa);
/* the GID of an IP address (IPv4 mapped), or -EAFNOSUPPORT */
int rdmacm_sockaddr_gid(const struct sockaddr *sa, union ibv_gid *gid);
void rdmacm_gid_sockaddr(const union ibv_gid *gid, uint16_t port, struct sockaddr_storage *ss);

int rdmacm_id_bind_device(struct rdmacm_id *rid, const struct sockaddr *addr);

/* rdmacm_qp.c */
int rdmacm_qp_modify(struct rdmacm_id *rid, enum ibv_qp_state state);
uint32_t rdmacm_offered_psn(const struct rdmacm_id *rid);
void rdmacm_take_starting_psn(struct rdmacm_id *rid, uint32_t starting_psn);
int rdmacm_qp_to_err(struct rdmacm_id *rid);
uint8_t rdmacm_local_ack_timeout(const struct rdmacm_id *rid);
void rdmacm_ah_attr(const struct rdmacm_id *rid, struct ibv_ah_attr *ah);

/* rdmacm_conn.c */
void rdmacm_on_cm_event(void *owner, void *listen_owner, void *cm, const struct droce_cm_event *ev);
/* the first step of rdma_get_cm_event on an event of the active side (CONNECT_RESPONSE) */
void rdmacm_event_process(struct rdmacm_event *e);
/* an id of a listener that nobody took: refused and freed */
void rdmacm_child_orphan(struct rdmacm_id *child);
/* synchronous ids: wait for the event of the call just made */
int rdmacm_sync_complete(struct rdmacm_id *rid);

/* rdmacm_id.c */
struct rdmacm_id *rdmacm_id_new(struct rdmacm_channel *ch, void *context, enum rdma_port_space ps,
				enum ibv_qp_type qp_type);
void rdmacm_id_free(struct rdmacm_id *rid);

#endif /* RDMACM_PRIV_H */
