/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/verbs private declarations: droce's objects behind the libibverbs
 * handles, grouped by the file that defines them. Never installed.
 *
 * Every public handle (struct ibv_context, ibv_pd, ...) is the first member
 * (or, for the context, the last member of the embedded verbs_context) of a
 * droce object; to_d*() recover the droce object, as providers do.
 */
#ifndef DROCE_VERBS_PRIV_H
#define DROCE_VERBS_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce_dproto.h"
#include "droce_engine.h"
#include "droce_ring.h"
#include "droce_verbs_engine.h"
#include "droce_wqe.h"

#define DROCE_CONTAINER_OF(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/** The smallest power of two >= @p n (ring slot counts); @p n <= 2^31. */
static inline uint32_t droce_pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* ------------------------------------------------------------ verbs_config.c */

#define DROCE_NAME_MAX      64
#define DROCE_PORT_ADDR_MAX 8

/** One port as configured: the verbs device droceN is made from it. */
struct droce_port_cfg {
	char name[DROCE_NAME_MAX]; /**< device name, e.g. droce0 */
	char vdev[128];            /**< DPDK device (vdev arguments or PCI address) */
	char link[DROCE_NAME_MAX]; /**< back-to-back link name (ports joined in this process) */
	uint8_t mac[6];
	uint32_t eth_mtu;       /**< Ethernet MTU (IP packet size), 1500 by default */
	uint32_t speed_mbps;    /**< link speed the port reports, 0 = unknown */
	uint32_t window;        /**< window=: RC send window in packets (0: the engine's default,
				     UINT32_MAX: none) */
	uint32_t zero_copy_min; /**< zero_copy_min=: bytes (0: the default) */
	bool zero_copy_auto;    /**< zero_copy=auto (off by default) */
	unsigned int n_ipv4;
	uint8_t ipv4[DROCE_PORT_ADDR_MAX][4];
	unsigned int n_ipv6;
	uint8_t ipv6[DROCE_PORT_ADDR_MAX][16];
	char capture[256];    /**< capture=FILE: record the port to a pcap file */
	unsigned int n_neigh; /**< neigh=IP@MAC: static neighbour entries */
	struct droce_engine_neigh neigh[DROCE_ENGINE_NEIGH_MAX];
	struct droce_engine_fault_conf fault; /**< fault= (TX fault injection) */
};

#define DROCE_DEVICES_MAX 16

/**
 * Parse a device list: devices separated by blanks or ';', each
 * "NAME:key=value,key=value...". Keys: mac, ip (IPv4 or IPv6, repeatable),
 * mtu, speed, vdev (commas of its devargs written as '+'), link, neigh (IP@MAC, repeatable),
 * capture (a pcap file), window, zero_copy (off, the default, or auto), zero_copy_min (bytes),
 * fault
 * ('+'-separated kind:value items, doc/verbs.md). Returns the
 * device count or -EINVAL with a message in
 * @p err.
 */
int droce_config_parse(const char *text, struct droce_port_cfg *ports, int max, char *err,
		       size_t errlen);

/* ------------------------------------------------------------ verbs_device.c */

/** GID table entries per port: the link-local address plus the configured ones. */
#define DROCE_GID_TABLE_LEN (1 + 2 * DROCE_PORT_ADDR_MAX)

struct droce_device {
	struct ibv_device ibdev;
	struct droce_port_cfg port;
	/* no mac= for a DPDK device: its own MAC is the port's once the engine opened it (the
	 * index-based default until then) */
	bool mac_from_device;
	__be64 node_guid;
	unsigned int gid_count;
	union ibv_gid gid[DROCE_GID_TABLE_LEN];
	bool remote;           /**< a device of droced (DROCE_DAEMON), not of this process */
	uint32_t remote_index; /**< its index in droced's list */
};

/** The port's MAC is now @p mac: the node GUID and the GID table follow (verbs_device.c). */
void droce_device_set_mac(struct droce_device *d, const uint8_t mac[6]);

static inline struct droce_device *to_ddev(struct ibv_device *d)
{
	return DROCE_CONTAINER_OF(d, struct droce_device, ibdev);
}

struct droce_backend_ops;

struct droce_context {
	struct verbs_context vctx; /* ends with the struct ibv_context handed out */
	struct droce_device *dev;
	int async_efd;        /**< eventfd behind context->async_fd */
	pthread_mutex_t lock; /**< serialises the control path of this context */
	unsigned int pd_count;
	/* async events not yet taken: a queue behind the async_efd counts */
	pthread_mutex_t async_lock;
	struct ibv_async_event *async_q;
	unsigned int async_head, async_count, async_cap;
	const struct droce_backend_ops *ops; /**< the backend, chosen when the context opened */
	struct droce_remote *remote;         /**< the connection to droced (its backend's own) */
};

static inline struct droce_context *to_dctx(struct ibv_context *c)
{
	return DROCE_CONTAINER_OF(c, struct droce_context, vctx.context);
}

/** MTU enum for an Ethernet MTU: the largest IB MTU whose packets fit in it. */
enum ibv_mtu droce_mtu_for_eth(uint32_t eth_mtu);

/** Fill the context's op tables (device verbs here, object verbs in their files). */
void droce_context_ops_init(struct droce_context *c);
void droce_context_ops_init_objects(struct droce_context *c);

/* -------------------------------------------------------------- verbs_pd.c */

struct droce_pd {
	struct ibv_pd ibpd;
	uint32_t id;
	uint32_t remote_handle; /**< droced's handle of the PD, 0 when embedded */
	uint32_t users;         /**< MRs, MWs, QPs, SRQs, AHs made in it (atomic) */
};

static inline void droce_pd_get(struct droce_pd *pd)
{
	__atomic_fetch_add(&pd->users, 1, __ATOMIC_RELAXED);
}

static inline void droce_pd_put(struct droce_pd *pd)
{
	__atomic_fetch_sub(&pd->users, 1, __ATOMIC_RELEASE);
}

static inline struct droce_pd *to_dpd(struct ibv_pd *p)
{
	return DROCE_CONTAINER_OF(p, struct droce_pd, ibpd);
}

/* -------------------------------------------------------------- verbs_shm.c */

/** A shared mapping: the engine maps the same file. */
struct droce_shm {
	void *addr;
	size_t len; /**< rounded up to pages */
	int fd;     /**< memfd, -1 when none */
};

/** Map @p len bytes of a new memfd named @p name. 0 or -errno. */
int droce_shm_alloc(struct droce_shm *m, size_t len, const char *name);
void droce_shm_free(struct droce_shm *m);

/* --------------------------------------------------------------- verbs_cq.c */

/*
 * CQ control words shared with the engine. Arming is two counters, one per
 * writer: the application bumps arm_seq (after storing arm_solicited) to arm;
 * the engine, when it signals the channel, copies arm_seq into notified_seq.
 * The CQ is armed while they differ.
 */
struct droce_cq_ctl {
	uint32_t arm_seq;       /**< written by the application (release) */
	uint32_t arm_solicited; /**< written by the application before arm_seq */
	uint8_t pad0[56];
	uint32_t notified_seq; /**< written by the engine (release) */
	uint32_t overrun;      /**< written by the engine: a CQE found the ring full */
	uint32_t notify_count; /**< written by the engine: channel events signalled (release) */
	uint8_t pad1[52];
};

struct droce_comp_channel;

/** Entries of a reset QP a CQ skips: those before ring index @c end (verbs_cq_purge.c). */
struct droce_cq_purge {
	uint32_t qp_num;
	uint32_t end;
	bool keep_srq_recv; /* receive completions from the QP's SRQ stay */
};

struct droce_cq {
	struct ibv_cq_ex ibcq; /* begins with the fields of struct ibv_cq */
	struct droce_shm shm;  /* control words, then the CQE ring */
	struct droce_cq_ctl *ctl;
	void *ring; /* the CQE ring inside shm */
	size_t ring_len;
	struct droce_ring_cons cons;
	uint32_t arm_seq; /* private copy of ctl->arm_seq */
	bool single_threaded;
	pthread_spinlock_t lock;      /* ibv_poll_cq may be called from several threads */
	uint64_t wc_flags;            /* extended CQ: the fields the user asked for */
	struct droce_cqe cur;         /* extended CQ: the entry being read */
	bool cur_held;                /* extended CQ: cur is still to be released */
	bool exported;                /* droced: an application's process polls this CQ */
	struct droce_cq_purge *purge; /* under lock: entries of reset QPs to skip */
	uint32_t purge_count, purge_cap;
	uint32_t users;           /* QPs and SRQs completing to it (atomic) */
	uint32_t events_reported; /* channel events handed out by ibv_get_cq_event() */
	int32_t engine_id;        /* the embedded engine's id of the CQ, -1 when none */
	uint32_t async_reported;  /* async events handed out by ibv_get_async_event() */
	uint32_t remote_handle;   /* droced's handle of the CQ, 0 when embedded */
	uint32_t notify_taken;    /* droced: ctl->notify_count already handed out */
};

static inline struct droce_cq *to_dcq(struct ibv_cq *cq)
{
	return DROCE_CONTAINER_OF((struct ibv_cq_ex *)cq, struct droce_cq, ibcq);
}

static inline struct ibv_cq *droce_cq_ibcq(struct droce_cq *cq)
{
	return ibv_cq_ex_to_cq(&cq->ibcq);
}

int droce_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc);
int droce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
struct ibv_cq_ex *droce_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr);
/* verbs_cq_purge.c: the completions of a QP moved to RESET */
/** Room for one more purge record: 0 or -ENOMEM. */
int droce_cq_purge_reserve(struct droce_cq *cq);
/** Skip what @p qp_num completed on @p cq so far (after the engine took its reset). */
void droce_cq_purge_qp(struct droce_cq *cq, uint32_t qp_num, bool keep_srq_recv);
/** Whether the entry @p e at ring index @p index is skipped. Under the CQ's lock. */
bool droce_cq_purged(const struct droce_cq *cq, uint32_t index, const struct droce_cqe *e);
/** Forget the records the consumer index has passed. Under the CQ's lock. */
void droce_cq_purge_expire(struct droce_cq *cq);
void droce_cq_purge_free(struct droce_cq *cq);
/* verbs_cq_ex.c: the extended poll API of a CQ */
void droce_cq_ex_init(struct droce_cq *cq);

/* ------------------------------------------------- verbs_embedded_channel.c */

/** Completion channel: an eventfd (one count per event) and the CQs behind the counts. */
struct droce_comp_channel {
	struct ibv_comp_channel ibch;
	pthread_mutex_t lock;
	struct droce_cq **pending; /* CQs with an event not yet taken, in order */
	unsigned int head, count, cap;
	uint32_t users; /* CQs using the channel */
	/* droced: the daemon's channel, whose events the CQs' notify_count tell apart */
	bool exported;          /* in droced: counted on the fd only, no pending queue */
	uint32_t remote_handle; /* in an application: droced's handle, 0 when embedded */
	struct droce_cq **cqs;  /* in an application: the CQs on a droced channel */
	unsigned int n_cqs, cqs_cap, next_cq;
};

static inline struct droce_comp_channel *to_dch(struct ibv_comp_channel *ch)
{
	return DROCE_CONTAINER_OF(ch, struct droce_comp_channel, ibch);
}

/** Queue an event of @p cq on its channel and wake the channel's fd. 0 or -errno. */
int droce_channel_push(struct droce_comp_channel *ch, struct droce_cq *cq);
/** Drop the events of @p cq not yet taken from the channel. */
void droce_channel_forget(struct droce_comp_channel *ch, struct droce_cq *cq);

/* -------------------------------------------------------------- verbs_srq.c */

/*
 * SRQ limit arming, one writer per word: the application stores limit then
 * bumps arm_seq (release); the engine, when fewer than limit WQEs remain,
 * raises IBV_EVENT_SRQ_LIMIT_REACHED and copies arm_seq into fired_seq.
 */
struct droce_srq_ctl {
	uint32_t limit;   /**< application */
	uint32_t arm_seq; /**< application */
	uint8_t pad0[56];
	uint32_t fired_seq; /**< engine */
	uint8_t pad1[60];
};

struct droce_srq {
	struct ibv_srq ibsrq;
	struct droce_shm shm;
	struct droce_srq_ctl *ctl;
	void *ring;
	size_t ring_len;
	struct droce_ring_prod rq;
	pthread_spinlock_t lock;
	uint32_t slot_size;
	uint32_t max_wr, max_sge;
	uint32_t arm_seq;        /* private copy of ctl->arm_seq */
	uint32_t users;          /* QPs attached (atomic) */
	int32_t engine_id;       /* the embedded engine's id of the SRQ, -1 when none */
	uint32_t async_reported; /* async events handed out by ibv_get_async_event() */
	uint32_t remote_handle;  /* droced's handle of the SRQ, 0 when embedded */
};

static inline struct droce_srq *to_dsrq(struct ibv_srq *s)
{
	return DROCE_CONTAINER_OF(s, struct droce_srq, ibsrq);
}

/* --------------------------------------------------------------- verbs_qp.c */

/*
 * QP state shared with the engine, one writer per word: the control path
 * writes state and gen (gen after state, release) on every modify; the engine
 * writes err_state then err_gen (release) when it moves the QP to SQE or ERR
 * by itself. The engine's state applies while err_gen equals gen.
 */
struct droce_qp_ctl {
	uint32_t state; /**< enum ibv_qp_state, control path */
	uint32_t gen;   /**< control path: bumped by every modify */
	uint8_t pad0[56];
	uint32_t err_state;   /**< engine: IBV_QPS_SQE or IBV_QPS_ERR */
	uint32_t err_gen;     /**< engine: the gen err_state belongs to */
	uint32_t drained_gen; /**< engine: the gen whose SQD drained the send queue */
	uint8_t pad1[52];
};

struct droce_srq;

struct droce_qp {
	struct ibv_qp_ex qpx; /* begins with struct ibv_qp */
	struct droce_shm shm; /* control words, send ring, receive ring */
	struct droce_qp_ctl *ctl;
	void *sq_ring, *rq_ring;
	size_t sq_len, rq_len;
	struct droce_ring_prod sq, rq;
	pthread_spinlock_t sq_lock, rq_lock;
	uint32_t sq_slot_size, rq_slot_size;
	struct ibv_qp_cap cap; /* what the QP was given (rounded up) */
	bool sq_sig_all;
	uint64_t send_ops_flags; /* extended send API: the operations allowed */
	struct droce_srq *srq;
	bool in_engine;          /* the embedded engine runs this QP */
	struct ibv_qp_attr attr; /* current attributes, for ibv_query_qp() */
	/* extended send API session (between ibv_wr_start and complete/abort) */
	uint32_t wr_pending; /* WQEs built, not yet published */
	int wr_err;          /* first error of the session */
	struct droce_send_wqe *wr_cur;
	uint32_t async_reported; /* async events handed out by ibv_get_async_event() */
	uint32_t remote_handle;  /* droced's handle of the QP, 0 when embedded */
	/* droced: whether the application behind the QP may set controlled Q_Keys;
	 * -1 until set, and then the process's own privilege counts */
	int8_t privileged;
	/* the state is droced's, read from the control words it writes (droced backend) */
	bool state_in_ctl;
	/*
	 * The state as the process running the engine knows it, out of the application's
	 * reach in droced (the control words are shared with it and may be forged): the
	 * same protocol as state/gen and err_state/err_gen of struct droce_qp_ctl, whose
	 * copies the control path and the engine write too. Unused by an application of
	 * droced (state_in_ctl), which reads the control words droced writes.
	 */
	uint32_t state_own, gen_own, err_state_own, err_gen_own;
};

static inline struct droce_qp *to_dqp(struct ibv_qp *qp)
{
	return DROCE_CONTAINER_OF((struct ibv_qp_ex *)qp, struct droce_qp, qpx);
}

/** The state that governs posting: the engine's error state wins while current. */
static inline enum ibv_qp_state droce_qp_state(const struct droce_qp *qp)
{
	uint32_t gen;

	if (!qp->state_in_ctl) {
		/* the engine's process: its own copies, never the shared words */
		gen = __atomic_load_n(&qp->gen_own, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&qp->err_gen_own, __ATOMIC_ACQUIRE) == gen && gen != 0)
			return (enum ibv_qp_state)__atomic_load_n(&qp->err_state_own,
								  __ATOMIC_RELAXED);
		return (enum ibv_qp_state)__atomic_load_n(&qp->state_own, __ATOMIC_RELAXED);
	}
	gen = __atomic_load_n(&qp->ctl->gen, __ATOMIC_ACQUIRE);

	/* pairs with the engine's release store of err_gen after err_state */
	if (__atomic_load_n(&qp->ctl->err_gen, __ATOMIC_ACQUIRE) == gen && gen != 0)
		return (enum ibv_qp_state)__atomic_load_n(&qp->ctl->err_state, __ATOMIC_RELAXED);
	return (enum ibv_qp_state)__atomic_load_n(&qp->ctl->state, __ATOMIC_RELAXED);
}

struct ibv_qp *droce_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);

/* ------------------------------------------------------------- verbs_post.c */

int droce_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int droce_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int droce_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/** Check an encoded send WQE against the QP's type, limits and state rules: 0 or -EINVAL. */
int droce_send_wqe_check(const struct droce_qp *qp, const struct droce_send_wqe *w);

/* --------------------------------------------------------------- verbs_wr.c */

/** Install the extended send API (ibv_wr_*) of a QP created with send_ops_flags. */
void droce_qp_wr_init(struct droce_qp *qp);

/* --------------------------------------------------------------- verbs_ah.c */

struct droce_ah {
	struct ibv_ah ibah;
	uint32_t id; /**< what UD WQEs carry; the engine resolves it */
	struct ibv_ah_attr attr;
	uint32_t remote_handle; /**< droced's handle of the AH, 0 when embedded */
};

static inline struct droce_ah *to_dah(struct ibv_ah *a)
{
	return DROCE_CONTAINER_OF(a, struct droce_ah, ibah);
}

/** Fill the UD part of a send WQE. 0 or -EINVAL (no AH, or an AH of another PD). */
int droce_ah_encode(const struct droce_qp *qp, struct ibv_ah *ah, uint32_t remote_qpn,
		    uint32_t remote_qkey, struct droce_send_wqe *w);

/* --------------------------------------------------------------- verbs_mr.c */

struct droce_mr_table;

struct droce_mr {
	struct ibv_mr ibmr;
	uint32_t remote_handle; /**< droced's handle of the MR, 0 when embedded */
	unsigned int access;    /**< its rights (IBV_ACCESS_*), for a rereg that keeps them */
};

struct droce_mw {
	struct ibv_mw ibmw;
	uint32_t handle;        /**< the window in the key table */
	uint32_t remote_handle; /**< droced's handle of the MW, 0 when embedded */
};

static inline struct droce_mw *to_dmw(struct ibv_mw *m)
{
	return DROCE_CONTAINER_OF(m, struct droce_mw, ibmw);
}

struct ibv_mw *droce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int droce_dealloc_mw(struct ibv_mw *mw);
int droce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);

/** Fill the bind part of a send WQE (type-2 MW bind). 0 or -EINVAL. */
int droce_mw_bind_encode(const struct droce_qp *qp, struct ibv_mw *mw, uint32_t rkey,
			 const struct ibv_mw_bind_info *info, struct droce_send_wqe *w);

/* ------------------------------------------------------------ verbs_async.c */

/** Queue an async event on its context and wake async_fd: for the engine. 0 or -errno. */
int droce_async_push(struct ibv_context *context, const struct ibv_async_event *ev);
/** Queue an event whose count is already on async_fd (droced counted it), under async_lock. */
int droce_async_queue(struct droce_context *c, const struct ibv_async_event *ev);
void droce_async_fini(struct droce_context *c);
/**
 * Before a QP, CQ or SRQ is freed: drop its events not yet taken from the
 * context's queue (and their counts on async_fd), so that no event names a
 * freed object. The caller then waits for the acknowledgement of the events
 * already handed out (the object's async_reported), as libibverbs does.
 */
void droce_async_forget(struct ibv_context *context, const void *object);

/* ------------------------------------------------------------ verbs_sysfs.c */

/*
 * The sysfs helpers, ibv_query_gid_type() and the kernel-structure copies are
 * declared with rdma-core 44's prototypes in droce_ibverbs_abi.h, which the
 * build includes in every file of lib/verbs.
 */
#include "droce_ibverbs_abi.h"

/* ---------------------------------------------------------------- backends */

/*
 * What a backend does for each object verb, chosen once when a context opens
 * (verbs_device.c): the embedded engine of this process (verbs_embedded*.c) or
 * droced (verbs_remote*.c). The ibv_* entry points above them check the
 * arguments as libibverbs documents, build what both share (the object, its
 * locks, its counts on the PD, CQs and SRQ) and call one entry here; post and
 * poll never come here, they are the shared rings of both. Every entry is set
 * in both tables (no NULL checks) and returns 0 or -errno (doc/verbs.md).
 */
struct droce_backend_ops {
	const char *name;
	/* context */
	int (*open)(struct droce_context *c);
	void (*close)(struct droce_context *c);
	/** The port as the engine runs it: false when nothing runs it or it cannot say. */
	bool (*query_port)(struct droce_context *c, bool *link_up, uint32_t *speed_mbps);
	/** One step of neighbour resolution: 0 with @p mac, -EAGAIN while asking, -errno. */
	int (*resolve_l2)(struct droce_context *c, const union ibv_gid *gid, uint8_t mac[6]);
	/** Move async events the backend holds elsewhere into the context's queue. */
	void (*async_pull)(struct droce_context *c);
	/* protection domains */
	int (*alloc_pd)(struct droce_pd *pd);
	int (*dealloc_pd)(struct droce_pd *pd);
	/* memory regions and windows: the keys into mr->ibmr / mw->ibmw */
	int (*reg_mr)(struct droce_mr *mr, struct ibv_pd *pd, void *addr, size_t length,
		      uint64_t iova, unsigned int access);
	int (*rereg_mr)(struct droce_mr *mr, unsigned int flags, struct ibv_pd *pd, void *addr,
			size_t length, unsigned int access);
	int (*dereg_mr)(struct droce_mr *mr);
	int (*alloc_mw)(struct droce_mw *mw, struct ibv_pd *pd, enum ibv_mw_type type);
	int (*dealloc_mw)(struct droce_mw *mw);
	/* completion channels: the fd into ch->ibch.fd */
	int (*create_channel)(struct droce_comp_channel *ch);
	int (*destroy_channel)(struct droce_comp_channel *ch);
	int (*channel_join)(struct droce_comp_channel *ch, struct droce_cq *cq);
	void (*channel_forget)(struct droce_comp_channel *ch, struct droce_cq *cq);
	int (*get_cq_event)(struct droce_comp_channel *ch, struct droce_cq **cq);
	/*
	 * Queues: create makes the rings and hands the object to the engine (the object's
	 * verbs fields are set); destroy takes it back first, so that nothing signals about
	 * it while the entry point waits for its events and frees it.
	 */
	int (*create_cq)(struct droce_cq *cq, const struct ibv_cq_init_attr_ex *attr);
	int (*destroy_cq)(struct droce_cq *cq);
	int (*create_srq)(struct droce_srq *srq, struct ibv_srq_init_attr *attr);
	int (*destroy_srq)(struct droce_srq *srq);
	/** Rings, QPN and cap of a new QP (in RESET), handed to the engine. */
	int (*create_qp)(struct droce_qp *qp, const struct ibv_qp_init_attr_ex *attr);
	/** Apply a modify already checked (droce_qp_attr_check) towards @p next. */
	int (*modify_qp)(struct droce_qp *qp, struct ibv_qp_attr *attr, int mask,
			 enum ibv_qp_state next);
	int (*destroy_qp)(struct droce_qp *qp);
	/** The id UD WQEs carry, into ah->id. */
	int (*create_ah)(struct droce_ah *ah);
	int (*destroy_ah)(struct droce_ah *ah);
};

extern const struct droce_backend_ops droce_embedded_ops;
extern const struct droce_backend_ops droce_remote_ops;

static inline const struct droce_backend_ops *droce_ops(struct ibv_context *context)
{
	return to_dctx(context)->ops;
}

/* Shared by both backends (verbs_qp.c): attach the producers again after a modify to RESET;
 * with @p init the rings are emptied here too (no engine runs the QP). */
void droce_qp_rings_reset(struct droce_qp *qp, bool init);

/* ---------------------------------------------------------- verbs_embedded.c */

/** The devices of this process (verbs_device.c): the embedded engine runs their ports. */
struct droce_device *const *droce_devices(int *n);

/** Start the embedded engine if DROCE_DEVICES names DPDK devices or links (once). */
void droce_embedded_start(struct droce_device *const *devs, int n);
/** The engine's view of a port: false when the engine does not run it. */
bool droce_embedded_port(const struct droce_device *d, bool *link_up, uint32_t *speed_mbps);
/* the context's entries of the embedded table (verbs_embedded_obj.c holds the table) */
int droce_embedded_open(struct droce_context *c);
void droce_embedded_close(struct droce_context *c);
bool droce_embedded_query_port(struct droce_context *c, bool *link_up, uint32_t *speed_mbps);
int droce_embedded_resolve_l2(struct droce_context *c, const union ibv_gid *gid, uint8_t mac[6]);
void droce_embedded_async_pull(struct droce_context *c);

/* ------------------------------------------------- verbs_embedded_channel.c */

int droce_embedded_create_channel(struct droce_comp_channel *ch);
int droce_embedded_destroy_channel(struct droce_comp_channel *ch);
int droce_embedded_channel_join(struct droce_comp_channel *ch, struct droce_cq *cq);
/** ibv_get_cq_event() on a channel of this process. 0 or -errno. */
int droce_embedded_get_cq_event(struct droce_comp_channel *ch, struct droce_cq **cq);

/* ------------------------------------------------------------ verbs_remote.c */

/** The connection of a context to droced: the control path of its objects. */
struct droce_remote {
	int sock;
	uint32_t seq;
	pthread_mutex_t lock; /* one request on the socket at a time */
	struct droce_shm events;
	struct droce_ring_cons ev; /* async events droced produces */
	/* handle -> object, for the events; the kind is checked against the event's */
	struct droce_remote_obj *objs;
	uint32_t n_objs;
};

/** What a handle names, for droced's events. */
enum droce_remote_kind {
	DROCE_REMOTE_NONE = 0,
	DROCE_REMOTE_CQ,
	DROCE_REMOTE_SRQ,
	DROCE_REMOTE_QP,
};

struct droce_remote_obj {
	void *obj;
	enum droce_remote_kind kind;
};

/** DROCE_DAEMON names droced's socket: devices are droced's, objects live there. */
bool droce_remote_mode(void);
/** droced's devices as port configurations (no vdev: nothing starts here). Count or -errno. */
int droce_remote_devices(struct droce_port_cfg *cfg, int max);
/**
 * One request and its reply. @p fd_out (may be NULL) receives the reply's
 * descriptor, @p handle_out (may be NULL) its handle. 0 or -errno (-EPIPE once
 * droced is gone; droced's refusal as its errno).
 */
int droce_remote_call(struct droce_context *c, uint32_t op, uint32_t handle, const void *req,
		      size_t req_len, int fd_in, void *rep, size_t rep_len, uint32_t *handle_out,
		      int *fd_out);
/** Map a queue's memory droced sent (@p fd is consumed). 0 or -errno. */
int droce_remote_map(int fd, const struct droce_dproto_shm *s, struct droce_shm *m);
/** Let events name @p obj, of @p kind, by @p handle (DROCE_REMOTE_NONE forgets it). */
void droce_remote_bind(struct droce_context *c, uint32_t handle, void *obj,
		       enum droce_remote_kind kind);

/* ------------------------------------------------------- verbs_remote_obj.c */

/** Destroy droced's object behind @p handle (@p op a DESTROY/DEALLOC/DEREG). 0 or -errno. */
int droce_remote_destroy(struct ibv_context *context, uint32_t op, uint32_t handle, void *obj);
int droce_remote_alloc_pd(struct droce_pd *pd);
int droce_remote_dealloc_pd(struct droce_pd *pd);
int droce_remote_create_cq(struct droce_cq *cq, const struct ibv_cq_init_attr_ex *attr);
int droce_remote_destroy_cq(struct droce_cq *cq);
int droce_remote_create_srq(struct droce_srq *srq, struct ibv_srq_init_attr *attr);
int droce_remote_destroy_srq(struct droce_srq *srq);
int droce_remote_create_qp(struct droce_qp *qp, const struct ibv_qp_init_attr_ex *attr);
int droce_remote_modify_qp(struct droce_qp *qp, struct ibv_qp_attr *attr, int mask,
			   enum ibv_qp_state next);
int droce_remote_destroy_qp(struct droce_qp *qp);
int droce_remote_create_ah(struct droce_ah *ah);
int droce_remote_destroy_ah(struct droce_ah *ah);
int droce_remote_alloc_mw(struct droce_mw *mw, struct ibv_pd *pd, enum ibv_mw_type type);
int droce_remote_dealloc_mw(struct droce_mw *mw);
int droce_remote_create_channel(struct droce_comp_channel *ch);
int droce_remote_destroy_channel(struct droce_comp_channel *ch);
/** A CQ joins its droced channel. 0 or -ENOMEM. */
int droce_remote_channel_join(struct droce_comp_channel *ch, struct droce_cq *cq);
/** ibv_get_cq_event() on a droced channel. 0 or -errno. */
int droce_remote_get_cq_event(struct droce_comp_channel *ch, struct droce_cq **cq);
/** A CQ leaves its droced channel: take back its counts not yet taken. */
void droce_remote_channel_forget(struct droce_comp_channel *ch, struct droce_cq *cq);

/* ------------------------------------------------------- verbs_remote_mr.c */

int droce_remote_reg_mr(struct droce_mr *mr, struct ibv_pd *pd, void *addr, size_t length,
			uint64_t iova, unsigned int access);
int droce_remote_rereg_mr(struct droce_mr *mr, unsigned int flags, struct ibv_pd *pd, void *addr,
			  size_t length, unsigned int access);
int droce_remote_dereg_mr(struct droce_mr *mr);

#endif /* DROCE_VERBS_PRIV_H */
