/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * droce's engine: the DPDK lcores that run the ports and the transport of
 * every QP, inside the application's process (the embedded engine) or inside
 * droced. Each QP belongs to one lcore. The verbs layer registers its objects
 * here (control path, one call at a time, from any thread); the lcore applies
 * each registration between two passes of its poll loop, so the data path
 * takes no lock.
 *
 * Errors: 0 or -errno.
 */
#ifndef DROCE_ENGINE_H
#define DROCE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DROCE_ENGINE_PORTS_MAX 16
#define DROCE_ENGINE_ADDR_MAX  8
#define DROCE_ENGINE_NEIGH_MAX 16

/** A static neighbour: @p ip (IPv6, or IPv4-mapped) always resolves to @p mac. */
struct droce_engine_neigh {
	uint8_t ip[16];
	uint8_t mac[6];
};
#define DROCE_ENGINE_NAME_MAX 64
/** Index ranges of droce_engine_fault_conf.drop_at. */
#define DROCE_ENGINE_FAULT_AT_MAX 8

/**
 * Faults the engine injects on a port's transmit path (lib/port/droce_fault.h,
 * doc/fault-injection.md): every frame the port sends, RoCEv2 or not unless
 * @c roce_only, meets one rule per kind with a non-zero rate. Rates are
 * probabilities per frame; times are microseconds of the engine's clock.
 */
struct droce_engine_fault_conf {
	bool enabled;            /**< create an injector (even with every rate 0) */
	bool roce_only;          /**< only RoCEv2 frames; ARP and ND pass untouched */
	double drop;             /**< frames freed */
	double dup;              /**< frames sent twice (a deep copy right after) */
	double reorder;          /**< frames held until @c reorder_after later ones left */
	double corrupt;          /**< frames with one bit flipped in payload or ICRC */
	double delay;            /**< frames held for @c delay_us */
	uint32_t reorder_after;  /**< 0: 3 */
	uint32_t reorder_max_us; /**< a reordered frame also leaves after this long (0: 100) */
	uint32_t delay_us;       /**< 0: 100 */
	uint64_t seed;           /**< the rules' generators derive from it (0 allowed) */
	/**
	 * Frames dropped by index besides @c drop: ranges first..last (ascending, not
	 * overlapping) of indices counted from 0 over the frames the rules see (RoCEv2
	 * frames only with @c roce_only). Exact faults for tests that count.
	 */
	struct {
		uint64_t first, last;
	} drop_at[DROCE_ENGINE_FAULT_AT_MAX];
	unsigned int n_drop_at;
};

/** One port the engine runs. */
struct droce_engine_port_conf {
	char name[DROCE_ENGINE_NAME_MAX]; /**< the verbs device name, e.g. droce0 */
	char device[256];                 /**< DPDK devargs / PCI address, or empty with link */
	char link[DROCE_ENGINE_NAME_MAX]; /**< two ports with the same link name are joined
					   *   back to back in this process (tests, demos) */
	uint32_t mtu;                     /**< Ethernet MTU */
	uint8_t mac[6];                   /**< the port's MAC (ring links; others keep the NIC's
					   *   unless set) */
	unsigned int n_ipv4, n_ipv6;
	uint8_t ipv4[DROCE_ENGINE_ADDR_MAX][4];
	uint8_t ipv6[DROCE_ENGINE_ADDR_MAX][16];
	char capture[256];    /**< a pcap file to record the port to from the start, or empty */
	unsigned int n_neigh; /**< static neighbour entries: no ARP/ND for these peers */
	struct droce_engine_neigh neigh[DROCE_ENGINE_NEIGH_MAX];
	struct droce_engine_fault_conf fault; /**< fault injection on TX (tests, demos) */
	/** RC send window in packets: 0 for DROCE_ENGINE_WINDOW_DEFAULT, UINT32_MAX for none */
	uint32_t send_window;
	/** RC zero copy from this many payload bytes per packet: 0 for DROCE_ZC_MIN_DEFAULT,
	 *  UINT32_MAX off; only where the device copies in software and no faults are injected */
	uint32_t zero_copy_min;
};

/** The RC send window of a port whose configuration names none (packets). */
#define DROCE_ENGINE_WINDOW_DEFAULT 512u
/** The smallest window a configuration may name (lib/transport's DROCE_RC_WINDOW_MIN). */
#define DROCE_ENGINE_WINDOW_MIN 128u

struct droce_engine_conf {
	unsigned int n_ports;
	struct droce_engine_port_conf port[DROCE_ENGINE_PORTS_MAX];
	/** extra EAL arguments, blank separated (DROCE_EAL_ARGS), or NULL */
	const char *eal_args;
	/** microseconds an lcore sleeps after a run of idle loops (0: never sleeps) */
	uint32_t idle_sleep_us;
	/**
	 * engine lcores (0: 1; at most DROCE_ENGINE_LCORES_MAX): each runs its share of the
	 * QPs and polls its own queue pair of every port, so every port's device must offer
	 * this many queue pairs
	 */
	unsigned int lcores;
};

/** Engine lcores at most (DROCE_PORT_QUEUES_MAX: a queue pair of every port each). */
#define DROCE_ENGINE_LCORES_MAX 8

struct droce_mr_table;

/** Calls back into the verbs layer (its side of the shared control words). */
struct droce_engine_hooks {
	int (*cq_notify)(struct ibv_cq *cq, bool solicited);
	int (*qp_error)(struct ibv_qp *qp, enum ibv_qp_state state, enum ibv_event_type event);
	int (*srq_limit)(struct ibv_srq *srq, uint32_t left);
	/** a CQ overran: the IBV_EVENT_CQ_ERR event (optional) */
	int (*cq_error)(struct ibv_cq *cq);
	/** a QP in SQD drained its send queue (optional) */
	int (*sq_drained)(struct ibv_qp *qp, bool notify);
};

/**
 * Start the engine in this process: the EAL (if it is not running yet), the
 * ports, and conf->lcores engine lcores. Idempotent while running.
 * @return 0; -EINVAL for a bad configuration; -EALREADY if the EAL runs but
 *   has no lcore to give; the DPDK error otherwise.
 */
int droce_engine_start(const struct droce_engine_conf *conf, const struct droce_engine_hooks *hooks,
		       struct droce_mr_table *keys);

/**
 * Stop the lcore, close the ports, clean the EAL up. At process exit a lighter
 * stop runs by itself (atexit): the lcore stops and the runtime folder goes.
 */
void droce_engine_stop(void);

bool droce_engine_running(void);

/**
 * Return once the engine lcore has finished the loop pass it was in (no-op
 * when it does not run): after a key was invalidated, no packet still uses it.
 */
void droce_engine_sync(void);

/**
 * Start (or restart, to a new file) or stop recording a port: every frame the port's
 * device receives and every frame the engine gives it (before a fault injector) go to
 * @p path as pcap with nanosecond timestamps, written by a thread of their own; the
 * lcore never waits for it (a full ring drops, counted: capture_dropped).
 * @param path the file (created, truncated), or NULL to stop
 * @return 0; -EINVAL (NULL port); -ENOENT (no such port); -ENODEV (no engine);
 *   -errno of creating the file.
 */
int droce_engine_capture(const char *port, const char *path);

/**
 * A decimal number in [@p min, @p max], the value of a DROCE_DEVICES key or a fault item:
 * digits only (no sign, no surrounding text; leading zeros are decimal, not octal).
 * @return 0 with *@p out written; -EINVAL (anything else, *@p out untouched).
 */
int droce_engine_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);

/**
 * Parse a fault specification, the text of DROCE_DEVICES' fault= key: items
 * kind:value joined by '+' (drop, dup, reorder, corrupt, delay: rates 0..1;
 * drop_at: indices I/J-K; after, reorder_us, delay_us, seed; match:roce|all),
 * doc/fault-injection.md. @p conf is written (enabled) only on success.
 * @return 0; -EINVAL (NULL argument, syntax, unknown item, value out of range,
 *   more than DROCE_ENGINE_FAULT_AT_MAX drop_at ranges, longer than 511 characters).
 */
int droce_engine_fault_parse(const char *spec, struct droce_engine_fault_conf *conf);

/**
 * Replace the faults of a running port: from the next frame the port sends, the
 * rules of @p conf apply (their frame indices and generators start afresh); @p conf
 * NULL or not enabled removes the injector. Frames the old injector held (reordered,
 * delayed) leave at once. droce_engine_port_stats()' fault_* counters are the new
 * injector's.
 * @return 0; -EINVAL (NULL port, a rule out of range); -ENOENT (no such port);
 *   -ENODEV (no engine); -ENOMEM.
 */
int droce_engine_fault_set(const char *port, const struct droce_engine_fault_conf *conf);

/**
 * The fault configuration port @p port runs now (enabled false: no injector).
 * @return 0; -EINVAL (NULL argument); -ENOENT (no such port); -ENODEV (no engine).
 */
int droce_engine_fault_get(const char *port, struct droce_engine_fault_conf *conf);

struct droce_engine_port_info {
	bool link_up;
	uint32_t speed_mbps;
	uint8_t mac[6];
	uint32_t mtu;
};

/** The state of the port named @p name. 0 or -ENOENT. */
int droce_engine_port_info(const char *name, struct droce_engine_port_info *info);

/**
 * One step of resolving @p ip (IPv6, or IPv4-mapped) on the port named @p port through its
 * neighbour table (ARP, IPv6 neighbour discovery: doc/neighbours.md); never waits for the
 * wire. Call again while it answers -EAGAIN: the engine sends the requests meanwhile.
 * @return 0 and @p mac; -EAGAIN (being asked); -EHOSTUNREACH (no answer to the last
 *   requests); -EINVAL (NULL argument, not a station address, or the port's own);
 *   -EADDRNOTAVAIL (the port has no address of that family); -ENOSPC (table full);
 *   -ENOENT (no such port); -ENODEV (engine not running).
 */
int droce_engine_neigh_resolve(const char *port, const uint8_t ip[16], uint8_t mac[6]);

/**
 * The index of the port named @p name in the engine's port order (droce_engine_conf.port[],
 * the index struct droce_engine_mad.port takes).
 * @return the index; -EINVAL (NULL name); -ENOENT (no such port); -ENODEV (engine not running).
 */
int droce_engine_port_index(const char *name);

/**
 * The GIDs of engine port @p port, the table its verbs device shows: the IPv6 link-local
 * address from its MAC first, then its IPv4 addresses (::ffff:a.b.c.d), then its IPv6 ones.
 * The first @p n go to @p gids.
 * @return how many the port has (may exceed @p n); -EINVAL (@p gids NULL with @p n > 0);
 *   -ENOENT (no such port); -ENODEV (engine not running).
 */
int droce_engine_port_gids(unsigned int port, uint8_t (*gids)[16], unsigned int n);

/* ---------------------------------------------------- the GSI: QP1 of every port */

/**
 * One MAD through a port's GSI (QP1, IBTA Vol. 1 chapter 13): a UD SEND Only from QP1 with the
 * GSI's Q_Key 0x80010000 (doc/cm.md, "QP1 in the engine").
 */
struct droce_engine_mad {
	unsigned int port; /**< engine port index (droce_engine_port_index()) */
	uint8_t sgid[16];  /**< local GID: IPv6, or IPv4 as ::ffff:a.b.c.d (the port's own) */
	uint8_t dgid[16];  /**< the peer's GID */
	uint8_t traffic_class, hop_limit; /**< of the IP header; send: hop limit 0 is 64 */
	uint32_t flow_label;              /**< IPv6 flow label (20 bits) */
	uint16_t pkey;                    /**< send: the BTH P_Key (0xffff); recv: the packet's */
	uint32_t remote_qpn; /**< send: the destination QP (1 normally); recv: the DETH's SrcQP */
	uint8_t mad[256];    /**< the MAD, common header first (13.4.2) */
};

/**
 * Queue @p m for sending from QP1 of its port (any thread): lcore 0 builds the frame on its
 * next pass; a destination whose MAC is unknown waits for it as UD frames do, and is dropped
 * (counted: gsi_tx_unresolved_dropped) when nobody answers.
 * @return 0; -EINVAL (NULL @p m, base version not 1, remote_qpn beyond 24 bits, flow label
 *   beyond 20 bits, sgid and dgid of two families); -ENODEV (engine not running); -ENOENT (no
 *   such port); -EADDRNOTAVAIL (sgid is not one of the port's GIDs); -EAGAIN (the port's queue
 *   is full: try again).
 */
int droce_engine_gsi_send(const struct droce_engine_mad *m);

/**
 * Take up to @p n of the MADs the ports' QP1 received for the consumer (one thread: the CM
 * agent's): MADs of the CM class (chapter 12's messages and the class's ClassPortInfo), in
 * arrival order per lcore. Well-formed only: the engine dropped and counted the rest.
 * @return how many were taken (0 .. n); -EINVAL (@p m NULL with @p n > 0); -ENODEV (engine
 *   not running).
 */
int droce_engine_gsi_recv(struct droce_engine_mad *m, unsigned int n);

/**
 * An eventfd (non-blocking) that becomes readable when received MADs wait: written when the
 * queue goes from empty to not empty, never once per MAD. The consumer reads it to clear it,
 * then calls droce_engine_gsi_recv() until it takes fewer than it asked for. Closed by
 * droce_engine_stop().
 * @return the descriptor; -ENODEV (engine not running).
 */
int droce_engine_gsi_fd(void);

/* ---------------------------------------------------- objects (control path) */

/** A CQ the engine writes completions into; @p id names it in droce_engine_qp_add(). */
int droce_engine_cq_add(struct ibv_cq *cq, void *ring, size_t len, uint32_t *id);
int droce_engine_cq_del(uint32_t id);

int droce_engine_srq_add(struct ibv_srq *srq, void *ring, size_t len, uint32_t *id);
int droce_engine_srq_del(uint32_t id);

struct droce_engine_qp {
	const char *port; /**< device name: the QP's port */
	struct ibv_qp *qp;
	uint32_t qpn;
	enum ibv_qp_type type;
	uint32_t pd;
	void *sq_ring, *rq_ring; /**< rq_ring NULL on an SRQ */
	size_t sq_len, rq_len;
	uint32_t send_cq, recv_cq; /**< ids from droce_engine_cq_add() */
	int32_t srq;               /**< id from droce_engine_srq_add(), or -1 */
	bool sq_sig_all;
};

/** Register a QP (in RESET). -EOPNOTSUPP for a QP type the transport does not run yet. */
int droce_engine_qp_add(const struct droce_engine_qp *d);
int droce_engine_qp_modify(uint32_t qpn, const struct ibv_qp_attr *attr, int mask,
			   enum ibv_qp_state state);
int droce_engine_qp_del(uint32_t qpn);

int droce_engine_ah_add(uint32_t id, uint32_t pd, const struct ibv_ah_attr *attr);
int droce_engine_ah_del(uint32_t id);

/** Counters of the engine lcore. */
struct droce_engine_stats {
	uint64_t loops;
	uint64_t busy_loops;
	uint64_t rx_pkts;
	uint64_t rx_not_roce;
	uint64_t rx_no_qp;         /**< RoCE packets for a QPN nobody has */
	uint64_t parse_errors[32]; /**< by enum droce_parse_status */
	uint64_t tx_pkts;
	uint64_t tx_waits; /**< send passes a QP skipped: its port's device was behind */
	/** packets for a QP of another lcore, handed to it (several lcores) */
	uint64_t rx_dispatched;
	/** of those, dropped: the owner lcore's inbox was full */
	uint64_t rx_dispatch_dropped;
	/** timer cycles (rte_get_timer_hz() a second) of loop passes that found work */
	uint64_t busy_cycles;
	/** timer cycles of passes that found none, the idle back-off's sleeps included */
	uint64_t idle_cycles;
};

/** Engine-wide counters: the sums over the lcores (and over the ports' queues). */
void droce_engine_stats_get(struct droce_engine_stats *stats);

/** The engine lcores that run (0 when the engine does not). */
unsigned int droce_engine_lcores(void);

/**
 * The counters of engine lcore @p idx alone (0 .. droce_engine_lcores() - 1): its loops,
 * busy loops, the frames its queues received and sent, what it handed to other lcores.
 * @return 0; -EINVAL (no such lcore); -ENODEV (engine not running).
 */
int droce_engine_lcore_stats(unsigned int idx, struct droce_engine_stats *stats);

/** The EAL lcore id engine lcore @p idx runs as; -EINVAL (no such lcore), -ENODEV. */
int droce_engine_lcore_id(unsigned int idx);

/** The lcore QP @p qpn runs on (an index as above), or -ENOENT / -ENODEV. */
int droce_engine_qp_lcore(uint32_t qpn);

struct droce_counter;

/**
 * The counters of the port named @p port, or of QP @p qpn, read on the engine
 * lcore between two loop passes (include/droce_counters.h: droce_port_counters()
 * and droce_qp_counters() are these for a verbs device and a verbs QP).
 * @return the number of counters of the scope; -EINVAL; -ENODEV (engine not
 *   running); -ENOENT (no such port or QP).
 */
int droce_engine_port_counters(const char *port, struct droce_counter *c, unsigned int n);
int droce_engine_qp_counters(uint32_t qpn, struct droce_counter *c, unsigned int n);

/**
 * The numbers of the QPs the engine runs: the first @p n into @p qpns.
 * @return how many there are (may exceed @p n); -EINVAL; -ENODEV (engine not running).
 */
int droce_engine_qp_list(uint32_t *qpns, unsigned int n);

/**
 * Counters of one port, for tests and tools. Read while the lcore runs: each
 * field is one plain load (64-bit loads do not tear on the targets droce runs
 * on), the set is not a snapshot; once the engine is idle it is exact.
 */
struct droce_engine_port_stats {
	/** mbufs in the port's pool */
	uint32_t pool_size;
	/** free mbufs once the port was up, before any packet (RX rings filled) */
	uint32_t pool_avail_start;
	/**
	 * free mbufs now: rte_mempool_avail_count(), which counts the per-lcore
	 * caches as free, so it equals pool_avail_start whenever no mbuf is held
	 * anywhere (in flight, in a TX buffer, in the fault injector, in a QP)
	 */
	uint32_t pool_avail;
	uint64_t rx_pkts;    /**< frames received */
	uint64_t tx_pkts;    /**< frames the device took */
	uint64_t tx_dropped; /**< frames lost: the device was behind by a whole TX backlog */
	uint64_t tx_full;    /**< flushes the device did not take whole: frames waited */
	uint32_t tx_waiting; /**< frames waiting for the device now (the TX backlog) */
	uint64_t rx_bytes;   /**< bytes of the frames received (no FCS) */
	uint64_t tx_bytes;   /**< bytes of the frames the device took (no FCS) */
	/** frames to the port's own MAC, looped back without reaching the device */
	uint64_t loopback_pkts;
	uint64_t loopback_dropped; /**< looped frames dropped: the loopback ring was full */
	/* the fault injector on the TX path, when configured (else all 0) */
	bool fault;                /**< an injector runs on the port */
	uint64_t fault_offered;    /**< frames offered to it */
	uint64_t fault_sent;       /**< frames it handed on (duplicates and releases included) */
	uint64_t fault_dropped;    /**< frames it freed */
	uint64_t fault_duplicated; /**< copies it made */
	uint64_t fault_reordered;  /**< frames it held back for reordering */
	uint64_t fault_corrupted;  /**< frames it corrupted */
	uint64_t fault_delayed;    /**< frames it delayed */
	uint64_t fault_held;       /**< frames it holds now */
};

/** Counters of the port named @p name. 0; -ENODEV (engine not running); -ENOENT. */
int droce_engine_port_stats(const char *name, struct droce_engine_port_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_ENGINE_H */
