/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/engine private declarations. */
#ifndef DROCE_ENGINE_PRIV_H
#define DROCE_ENGINE_PRIV_H

#include <pthread.h>
#include <sys/types.h>

#include "droce_counters.h"
#include "droce_capture.h"
#include "droce_engine.h"
#include "droce_fault.h"
#include "droce_neigh.h"
#include "droce_port.h"
#include "droce_transport.h"
#include "droce_wire_pkt.h"

#define ENGINE_QPS_MAX  16384 /* open-addressing table: twice the QPs it holds */
#define ENGINE_CQS_MAX  16384
#define ENGINE_SRQS_MAX 4096
#define ENGINE_AHS_MAX  65536

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
};

/** What a port's RX path drops before any QP sees it (written by the lcore). */
struct engine_port_rx {
	uint64_t not_roce;                        /* frames that are not RoCEv2 */
	uint64_t no_qp;                           /* RoCEv2 packets for no QP of the port */
	uint64_t parse[DROCE_PARSE_STATUS_COUNT]; /* malformed RoCEv2, by reason */
};

/** One port run by the engine. */
struct engine_port {
	struct droce_engine_port_conf conf;
	struct droce_port port;
	struct droce_neigh *neigh;
	struct droce_tport_addr addr; /* what the transport builds packets from */
	struct droce_transport_env env;
	uint32_t pool_avail_start; /* free mbufs once the port was up */
	/* TX fault injection: NULL on the fast path (the only test it costs) */
	struct droce_fault *fault;
	/* capture of what the device receives and is given: NULL on the fast path */
	struct droce_capture *cap;
	uint16_t fault_n; /* frames waiting in fault_in for the injector */
	struct rte_mbuf *fault_in[DROCE_PORT_BURST];
	/*
	 * Local loopback: frames the transport addresses to the port's own MAC (a QP talking
	 * to another QP of the same port) never reach the wire; they wait here for the next
	 * RX pass. Written and read by the port's lcore only; free-running indices.
	 */
	uint32_t loop_head, loop_tail;
	uint64_t loop_pkts, loop_dropped;
	struct rte_mbuf *loop[ENGINE_LOOP_RING];
	/* UD frames waiting for a MAC (env->tx_unresolved), lcore-private, in arrival order */
	uint32_t n_unres;
	uint64_t unres_queued, unres_dropped;
	struct engine_unres unres[ENGINE_UNRES_MAX];
	struct engine_port_rx rx;
	/* what the port's QPs counted before they were destroyed or reset: the port's sums
	 * go on from there (engine_counters.c) */
	struct droce_tqp_stats retired;
};

/* Hold queue of a port's injector: reordered and delayed frames. */
#define ENGINE_FAULT_HOLD 64
/* Output room of one injector call: never short (droce_fault_process_burst()). */
#define ENGINE_FAULT_OUT (2 * DROCE_PORT_BURST + ENGINE_FAULT_HOLD)

struct engine_qp {
	struct droce_tqp tqp;
	struct engine_port *port;
	struct ibv_qp *qp;
	int32_t srq;
	unsigned int list_idx; /* position in engine.list */
};

struct engine_srq {
	struct droce_ring_cons ring;
	struct ibv_srq *srq;
	bool used;
};

struct engine_cq {
	struct droce_tcq tcq;
	bool used;
};

/** Control commands, applied by the lcore between two loop passes. */
enum engine_cmd_type {
	CMD_NONE,
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
	unsigned int n;
	int result;
};

struct engine {
	bool running;  /* the lcore runs (written by the control path) */
	bool eal_ours; /* droce initialised the EAL and cleans it up */
	pid_t pid;     /* the process the engine runs in (not a forked child) */
	/* the EAL droce started serves DPDK telemetry (not when turned off or impossible) */
	bool telemetry;
	unsigned int lcore;
	char file_prefix[64];
	struct droce_engine_conf conf;
	struct droce_engine_hooks hooks;
	struct droce_mr_table *keys;
	unsigned int n_ports;
	struct engine_port ports[DROCE_ENGINE_PORTS_MAX];
	uint64_t late_start_us; /* the lcore last tried to start stopped ports (late_starts()) */
	/* objects, touched by the lcore only (the control path goes through commands) */
	struct engine_qp *qps[ENGINE_QPS_MAX]; /* by QPN (open addressing) */
	unsigned int n_qps;
	struct engine_qp *list[ENGINE_QPS_MAX / 2]; /* dense, for the send pass */
	unsigned int n_list;
	struct engine_cq cqs[ENGINE_CQS_MAX];
	struct engine_srq srqs[ENGINE_SRQS_MAX];
	struct droce_tah *ahs; /* ENGINE_AHS_MAX entries */
	/* control: one command at a time, handed over through 'pending' */
	pthread_mutex_t ctl_lock;
	struct engine_cmd *pending; /* control path stores (release), lcore clears (release) */
	struct droce_engine_stats stats;
	uint64_t hz_per_us;
	/* RC retransmission and RNR timers, in timer cycles; run by the lcore each loop */
	struct droce_timer_wheel wheel;
};

extern struct engine droce_engine;

/* engine_ctl.c */
int engine_cmd_run(struct engine_cmd *cmd);
void engine_cmd_apply(struct engine *e);
struct engine_qp *engine_qp_find(struct engine *e, uint32_t qpn);

/* engine_loop.c */
int engine_lcore_main(void *arg);
void engine_env_init(struct engine *e, struct engine_port *p);
/* zero copy allowed on the port as it is now (its driver, its fault injector) */
void engine_env_zero_copy(struct engine_port *p);
void engine_port_tx(struct engine_port *p, struct rte_mbuf *m);

/* engine_counters.c: run by the lcore */
int engine_counters_port(struct engine *e, const char *name, struct droce_counter *c,
			 unsigned int n);
int engine_counters_qp(struct engine *e, uint32_t qpn, struct droce_counter *c, unsigned int n);
void engine_counters_retire(struct engine_qp *q);

/* engine_fault.c */
int engine_fault_build(const struct droce_engine_fault_conf *c, struct droce_fault **fp);
int engine_fault_create(struct engine_port *p);
/* run by the lcore: the old injector back, emptied into the port */
struct droce_fault *engine_fault_swap(struct engine_port *p, struct droce_fault *f,
				      const struct droce_engine_fault_conf *c);
void engine_fault_tx(struct engine_port *p, struct rte_mbuf *m);
unsigned int engine_fault_flush(struct engine_port *p, uint64_t now_us);
void engine_fault_drain(struct engine_port *p);

/* engine_devargs.c */
/** The devargs of @p device for a port of Ethernet MTU @p mtu, into @p out. 0 or -ENAMETOOLONG. */
int engine_devargs(const char *device, uint32_t mtu, char *out, size_t size);

/* engine_telemetry.c: the /droce/... telemetry commands, once the EAL runs */
void engine_telemetry_register(void);
/**
 * Whether DPDK can create its telemetry socket in the runtime folder @p dir (created if
 * missing, as the EAL creates it); false with the reason in @p why otherwise. The EAL fails
 * to start when it cannot, and it starts once per process: the engine asks first.
 */
bool engine_telemetry_possible(const char *dir, char *why, size_t len);

#endif /* DROCE_ENGINE_PRIV_H */
