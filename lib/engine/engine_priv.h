/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/engine private declarations. */
#ifndef DROCE_ENGINE_PRIV_H
#define DROCE_ENGINE_PRIV_H

#include <pthread.h>
#include <sys/types.h>

#include <rte_ring.h>
#include <rte_spinlock.h>

#include "droce_counters.h"
#include "droce_capture.h"
#include "droce_engine.h"
#include "droce_fault.h"
#include "droce_neigh.h"
#include "droce_port.h"
#include "droce_transport.h"
#include "droce_wire_mad.h"
#include "droce_wire_pkt.h"

#define ENGINE_QPS_MAX  16384 /* open-addressing table: twice the QPs it holds */
#define ENGINE_CQS_MAX  16384
#define ENGINE_SRQS_MAX 4096
#define ENGINE_AHS_MAX  65536
/** Engine lcores at most: one queue pair of every port each. */
#define ENGINE_LCORES_MAX DROCE_ENGINE_LCORES_MAX
_Static_assert(ENGINE_LCORES_MAX <= DROCE_PORT_QUEUES_MAX, "a queue pair per lcore");
/** Frames another lcore received for an lcore's QPs, waiting for it (a power of two). */
#define ENGINE_INBOX 4096

/** Frames a port's local loopback holds at most (a power of two). */
#define ENGINE_LOOP_RING 1024
/** UD frames a port keeps waiting for their destination's MAC, and for how long. */
#define ENGINE_UNRES_MAX 64
/* longer than a resolution takes (3 requests, 1 s apart): a failed one drops them first */
#define ENGINE_UNRES_WAIT_US 5000000u

/** A frame waiting for its destination's MAC. */
struct engine_unres {
	struct rte_mbuf *m;
	uint64_t since_us;
	uint8_t ip[16];
	bool gsi; /* a GSI frame: its loss is also counted as the GSI's */
};

/* MADs received for the consumer, waiting for it (a power of two: it holds one fewer). */
#define ENGINE_GSI_RX_SLOTS 1024
/* MADs droce_engine_gsi_send() queued on a port, waiting for lcore 0 (as above). */
#define ENGINE_GSI_TX_SLOTS 256

/* What an lcore's share of a port counts of the port's GSI (engine_gsi.c). */
struct engine_pq_gsi {
	uint32_t psn;                  /* of the GSI frames this lcore sends on the port */
	uint64_t rx;                   /* MADs queued for the consumer */
	uint64_t rx_dropped;           /* of the consumer's, dropped: its queue was full */
	uint64_t rx_unsupported;       /* MADs of a class nobody serves, dropped */
	uint64_t unsupported_answered; /* Get/Set of such a class answered by the engine */
	uint64_t tx; /* MADs of droce_engine_gsi_send() sent or waiting for a MAC */
	uint64_t tx_unresolved_dropped;       /* GSI frames whose destination never resolved */
	uint64_t mad[DROCE_MAD_STATUS_COUNT]; /* malformed GSI packets, by reason */
};

/*
 * The engine's GSI: what its ports' QP1 received for the consumer (the CM agent's thread), and
 * the eventfd that tells it. The API calls hold @c lock for reading, the stop that frees the
 * queues for writing.
 */
struct engine_gsi {
	pthread_rwlock_t lock;
	/* struct droce_engine_mad entries: the lcores produce, the consumer takes */
	struct rte_ring *rx;
	int efd; /* eventfd, valid while rx is not NULL */
	/* the eventfd was written since the consumer last found the queue empty (1) */
	uint32_t signalled;
};

/** What a port's RX path drops before any QP sees it (written by the lcore). */
struct engine_port_rx {
	uint64_t not_roce;                        /* frames that are not RoCEv2 */
	uint64_t no_qp;                           /* RoCEv2 packets for no QP of the port */
	uint64_t parse[DROCE_PARSE_STATUS_COUNT]; /* malformed RoCEv2, by reason */
};

struct engine_lcore;

/*
 * One lcore's share of a port: its queue pair, the transport's environment its QPs
 * send through, and what only that lcore writes.
 */
struct engine_pq {
	struct engine_port *port;
	struct engine_lcore *lc;
	uint16_t queue; /* the device queue pair: the lcore's index */
	struct droce_transport_env env;
	/*
	 * Local loopback: frames the transport addresses to the port's own MAC (a QP talking
	 * to another QP of the same port) never reach the wire; they wait here for the lcore's
	 * next RX pass. Free-running indices.
	 */
	uint32_t loop_head, loop_tail;
	uint64_t loop_pkts, loop_dropped;
	struct rte_mbuf *loop[ENGINE_LOOP_RING];
	/* UD frames waiting for a MAC (env->tx_unresolved), in arrival order */
	uint32_t n_unres;
	uint64_t unres_queued, unres_dropped;
	struct engine_unres unres[ENGINE_UNRES_MAX];
	struct engine_port_rx rx;
	/* TX fault injection: NULL on the fast path (the only test it costs) */
	struct droce_fault *fault;
	uint16_t fault_n; /* frames waiting in fault_in for the injector */
	struct rte_mbuf *fault_in[DROCE_PORT_BURST];
	/* what the lcore's QPs of the port counted before they were destroyed or reset: the
	 * port's sums go on from there (engine_counters.c) */
	struct droce_tqp_stats retired;
	struct engine_pq_gsi gsi; /* QP1: off the fast path, last */
};

/** One port run by the engine. */
struct engine_port {
	struct droce_engine_port_conf conf;
	struct droce_port port;
	struct droce_neigh *neigh;
	struct droce_tport_addr addr; /* what the transport builds packets from */
	uint32_t pool_avail_start;    /* free mbufs once the port was up */
	/* several lcores share the neighbour table and the capture: each has a lock, taken
	 * only when the engine runs more than one lcore (engine.multi) */
	rte_spinlock_t neigh_lock, cap_lock;
	uint64_t neigh_now; /* the neighbour table's clock (engine_neigh_lock()) */
	/* capture of what the device receives and is given: NULL on the fast path */
	struct droce_capture *cap;
	/* MADs to send from QP1 (struct droce_engine_mad entries): any thread produces, lcore 0
	 * consumes */
	struct rte_ring *gsi_tx;
	struct engine_pq pq[ENGINE_LCORES_MAX];
};

/* Hold queue of a port's injector: reordered and delayed frames. */
#define ENGINE_FAULT_HOLD 64
/* Output room of one injector call: never short (droce_fault_process_burst()). */
#define ENGINE_FAULT_OUT (2 * DROCE_PORT_BURST + ENGINE_FAULT_HOLD)

struct engine_qp {
	struct droce_tqp tqp;
	struct engine_port *port;
	struct engine_pq *pq; /* the owner lcore's share of the port: the QP's environment */
	struct ibv_qp *qp;
	int32_t srq;
	uint32_t send_cq, recv_cq;
	unsigned int list_idx; /* position in its lcore's list */
};

/*
 * Which lcore a CQ or an SRQ belongs to: the lcore of the first QP that uses it. A QP
 * goes to the lcore its queues belong to; one whose queues belong to different lcores
 * makes them shared (locked). Control path only, under ctl_lock.
 */
struct engine_home {
	int owner;                          /* lcore index, -1 while no QP uses it */
	unsigned int on[ENGINE_LCORES_MAX]; /* QPs using it, per lcore */
};

struct engine_srq {
	struct droce_ring_cons ring;
	struct droce_shared_lock lock;
	struct ibv_srq *srq;
	struct engine_home home;
	bool used;
};

struct engine_cq {
	struct droce_tcq tcq;
	struct engine_home home;
	bool used;
};

/** Control commands, applied by the lcore between two loop passes. */
enum engine_cmd_type {
	CMD_NONE, /* a round trip through one lcore */
	CMD_PARK, /* the lcore waits until engine.park is cleared */
	CMD_CQ_ADD,
	CMD_CQ_DEL,
	CMD_SRQ_ADD,
	CMD_SRQ_DEL,
	CMD_QP_ADD,
	CMD_QP_MODIFY,
	CMD_QP_DEL,
	CMD_AH_ADD,
	CMD_AH_DEL,
	CMD_COUNTERS_PORT,
	CMD_COUNTERS_QP,
	CMD_QP_LIST, /* the QP numbers into ctrs' place: qpns, n */
	CMD_CAPTURE, /* swap a port's capture (obj: the new one or NULL; the old one back in obj) */
	CMD_FAULT,   /* swap a port's injector (obj, fault: the new one and its configuration) */
	CMD_NEIGH,   /* resolve an address in a port's neighbour table (name, ip, mac) */
};

struct engine_cmd {
	enum engine_cmd_type type;
	uint32_t id;
	void *obj;
	void *ring;
	size_t len;
	const struct droce_engine_qp *qp;
	const struct ibv_qp_attr *attr;
	int mask;
	enum ibv_qp_state state;
	uint32_t pd;
	const struct ibv_ah_attr *ah;
	const struct droce_engine_fault_conf *fault; /* CMD_FAULT */
	const char *name;           /* CMD_COUNTERS_PORT, CMD_CAPTURE, CMD_FAULT: the port */
	struct droce_counter *ctrs; /* CMD_COUNTERS_*: where the values go */
	uint32_t *qpns;             /* CMD_QP_LIST: where the numbers go */
	const uint8_t *ip;          /* CMD_NEIGH: the address (IPv6 or IPv4-mapped) */
	uint8_t *mac;               /* CMD_NEIGH: where its MAC goes */
	unsigned int n;
	uint32_t send_cq, recv_cq; /* CMD_QP_DEL: the removed QP's queues, for placement */
	int32_t srq;
	int result;
};

/** One engine lcore: its QPs, its timers, its commands. */
struct engine_lcore {
	struct engine *e;
	unsigned int idx;      /* in engine.lcores, and the queue pair it polls on every port */
	unsigned int lcore_id; /* the EAL's */
	/* QPs, touched by this lcore only (the control path goes through commands) */
	struct engine_qp *qps[ENGINE_QPS_MAX]; /* by QPN (open addressing) */
	unsigned int n_qps;
	struct engine_qp *list[ENGINE_QPS_MAX / 2]; /* dense, for the send pass */
	unsigned int n_list;
	/* frames other lcores received for this lcore's QPs (multi-producer, this lcore
	 * consumes); NULL with a single lcore */
	struct rte_ring *inbox;
	/* packets this lcore received for each other lcore, handed over a burst at a time */
	uint16_t out_n[ENGINE_LCORES_MAX];
	struct rte_mbuf *out[ENGINE_LCORES_MAX][DROCE_PORT_BURST];
	struct engine_cmd *pending; /* control path stores (release), lcore clears (release) */
	struct droce_engine_stats stats;
	/* RC retransmission and RNR timers, in timer cycles */
	struct droce_timer_wheel wheel;
} __rte_cache_aligned;

struct engine {
	bool running;     /* the lcores run (written by the control path) */
	bool eal_ours;    /* droce initialised the EAL and cleans it up */
	uint32_t unparks; /* parked lcores wait until it changes (engine_ctl.c) */
	bool multi;       /* more than one lcore: RX dispatch, locks on what they share */
	pid_t pid;        /* the process the engine runs in (not a forked child) */
	/* the EAL droce started serves DPDK telemetry (not when turned off or impossible) */
	bool telemetry;
	char file_prefix[64];
	struct droce_engine_conf conf;
	struct droce_engine_hooks hooks;
	struct droce_mr_table *keys;
	unsigned int n_ports;
	struct engine_port ports[DROCE_ENGINE_PORTS_MAX];
	uint64_t late_start_us; /* lcore 0 last tried to start stopped ports (late_starts()) */
	unsigned int n_lcores;
	struct engine_lcore lcores[ENGINE_LCORES_MAX];
	/*
	 * QPN -> owner lcore index + 1 (0: no QP), for RX dispatch with several lcores: one
	 * byte per QPN, mapped lazily (only the pages of QPNs in use are touched). Written
	 * by the control path before a QP is added and after it is removed; lcores read it.
	 */
	uint8_t *qp_owner;
	int mbuf_pkt_off; /* the mbuf field that carries a dispatched frame's parse, or -1 */
	/* objects the lcores share, changed by the control path with every lcore parked */
	struct engine_cq cqs[ENGINE_CQS_MAX];
	struct engine_srq srqs[ENGINE_SRQS_MAX];
	struct droce_tah *ahs; /* ENGINE_AHS_MAX entries */
	struct engine_gsi gsi;
	/* control: one command at a time */
	pthread_mutex_t ctl_lock;
	uint64_t hz_per_us;
};

extern struct engine droce_engine;

/*
 * The neighbour table of @p p, taken under its lock and with its own clock: each lcore reads
 * the time at the top of its pass, so one lcore's "now" can be a little older than what
 * another (or the control path on lcore 0) has just stamped an entry with; the table needs
 * its time never to go back (an age computed backwards would expire a fresh entry). Locked
 * only when @p e runs several lcores. Returns the table's now, @p now or later.
 */
static inline uint64_t engine_neigh_lock(const struct engine *e, struct engine_port *p,
					 uint64_t now)
{
	if (!e->multi)
		return now;
	rte_spinlock_lock(&p->neigh_lock);
	if (now < p->neigh_now)
		return p->neigh_now;
	p->neigh_now = now;
	return now;
}

static inline void engine_neigh_unlock(const struct engine *e, struct engine_port *p)
{
	if (e->multi)
		rte_spinlock_unlock(&p->neigh_lock);
}

/* engine_ctl.c */
int engine_cmd_run(struct engine_cmd *cmd);
void engine_cmd_apply(struct engine_lcore *lc);
struct engine_qp *engine_qp_find(const struct engine_lcore *lc, uint32_t qpn);
/** The lcore QP @p qpn belongs to (index), or -1. */
int engine_qp_owner(const struct engine *e, uint32_t qpn);

/* engine_loop.c */
int engine_lcore_main(void *arg);
void engine_env_init(struct engine *e, struct engine_port *p);
/* zero copy allowed on the port as it is now (its driver, each lcore's fault injector) */
void engine_env_zero_copy(struct engine_port *p);
void engine_port_tx(struct engine_pq *pq, struct rte_mbuf *m);
/* a built frame of @p pq's port: to the wire, or round the port's loopback to itself */
void engine_pq_tx(struct engine_pq *pq, struct rte_mbuf *m);
/* a built frame waits on @p pq for the MAC of @p ip (@p gsi: a GSI frame); 0 or -ENOBUFS */
int engine_tx_unresolved(struct engine_pq *pq, struct rte_mbuf *m, const uint8_t ip[16], bool gsi);

/* engine_counters.c: run by the lcore */
int engine_counters_port(struct engine *e, const char *name, struct droce_counter *c,
			 unsigned int n);
int engine_counters_qp(struct engine_lcore *lc, uint32_t qpn, struct droce_counter *c,
		       unsigned int n);
void engine_counters_retire(struct engine_qp *q);

/* engine_fault.c */
int engine_fault_build(const struct droce_engine_fault_conf *c, struct droce_fault **fp);
/* one injector per lcore (@p n), into @p f: all or none */
int engine_fault_build_all(const struct droce_engine_fault_conf *c, unsigned int n,
			   struct droce_fault **f);
int engine_fault_create(struct engine_port *p);
/* with the lcores parked: the injectors @p f in place, the old ones back in @p f, emptied
 * into their queues */
void engine_fault_swap(struct engine_port *p, struct droce_fault **f,
		       const struct droce_engine_fault_conf *c);
/* the frame into the lcore's injector; what it lets go leaves on the lcore's queue */
void engine_fault_tx(struct engine_pq *pq, struct rte_mbuf *m);
unsigned int engine_fault_flush(struct engine_pq *pq, uint64_t now_us);
void engine_fault_drain(struct engine_port *p);

/* engine_gsi.c: QP1 of every port */
/* the queues and the eventfd, once the ports are open; 0 or -errno */
int engine_gsi_start(struct engine *e);
/* free what engine_gsi_start() made and every MAD still queued (the lcores stopped) */
void engine_gsi_stop(struct engine *e);
/* a packet to QP1 that parsed, on the lcore that received it: consumed */
void engine_gsi_rx(struct engine_pq *pq, struct rte_mbuf *m, const struct droce_pkt *pkt);
/* lcore 0: frames of the MADs queued on @p pq's port, a bounded number; how many left */
unsigned int engine_gsi_tx(struct engine_pq *pq);

/* engine_telemetry.c: the /droce/... telemetry commands, once the EAL runs */
void engine_telemetry_register(void);
/**
 * Whether DPDK can create its telemetry socket in the runtime folder @p dir (created if
 * missing, as the EAL creates it); false with the reason in @p why otherwise. The EAL fails
 * to start when it cannot, and it starts once per process: the engine asks first.
 */
bool engine_telemetry_possible(const char *dir, char *why, size_t len);

#endif /* DROCE_ENGINE_PRIV_H */
