/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * droced's control-socket protocol (doc/daemon.md): what an application and
 * the daemon say to each other on the control path. The data path never uses
 * the socket: work requests and completions go through rings in shared memory
 * whose file descriptors travel here.
 *
 * The socket is AF_UNIX SOCK_SEQPACKET, so a message is one datagram: a
 * header, a body whose layout the operation fixes, and up to
 * DROCE_DPROTO_FDS_MAX file descriptors (SCM_RIGHTS). The application sends a
 * request and waits for the reply with the same sequence number; the daemon
 * never speaks first. Everything here is checked by the receiver: sizes, the
 * operation, the descriptors' count.
 *
 * Both ends are built from the same source: the version in HELLO must match.
 */
#ifndef DROCE_DPROTO_H
#define DROCE_DPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DROCE_DPROTO_VERSION 1u
/** Where droced listens unless configured otherwise. */
#define DROCE_DPROTO_SOCKET_DEFAULT "/run/droce/droced.sock"
#define DROCE_DPROTO_FDS_MAX        2u
#define DROCE_DPROTO_DEVICES_MAX    16u
#define DROCE_DPROTO_ADDR_MAX       8u
/** Async events waiting in the ring shared per connection (daemon produces). */
#define DROCE_DPROTO_EVENT_SLOTS 256u

enum droce_dproto_op {
	DPROTO_HELLO = 1,  /**< version check and the device list */
	DPROTO_OPEN,       /**< open a device: this connection is its context */
	DPROTO_QUERY_PORT, /**< the port as the engine runs it */
	DPROTO_ALLOC_PD,
	DPROTO_DEALLOC_PD,
	DPROTO_REG_MR,
	DPROTO_DEREG_MR,
	DPROTO_ALLOC_MW,
	DPROTO_DEALLOC_MW,
	DPROTO_CREATE_CHANNEL,
	DPROTO_DESTROY_CHANNEL,
	DPROTO_CREATE_CQ,
	DPROTO_DESTROY_CQ,
	DPROTO_CREATE_SRQ,
	DPROTO_DESTROY_SRQ,
	DPROTO_CREATE_QP,
	DPROTO_MODIFY_QP,
	DPROTO_DESTROY_QP,
	DPROTO_CREATE_AH,
	DPROTO_DESTROY_AH,
	DPROTO_RESOLVE_L2,
	DPROTO_REREG_MR, /**< new rights or PD for an MR, its range unchanged */
	DPROTO_OP_COUNT
};

/** Every message starts with this. */
struct droce_dproto_hdr {
	uint32_t op;     /**< enum droce_dproto_op */
	uint32_t seq;    /**< request's number, echoed by the reply */
	int32_t status;  /**< reply: 0 or a positive errno; request: 0 */
	uint32_t handle; /**< the object a request is about, or the one a reply created */
};

/** A device as the daemon runs it. */
struct droce_dproto_device {
	char name[64];
	uint8_t mac[6];
	uint8_t link_up;
	uint8_t pad;
	uint32_t eth_mtu;
	uint32_t speed_mbps;
	uint32_t n_ipv4, n_ipv6;
	uint8_t ipv4[DROCE_DPROTO_ADDR_MAX][4];
	uint8_t ipv6[DROCE_DPROTO_ADDR_MAX][16];
};

struct droce_dproto_hello_req {
	uint32_t version;
	uint32_t pad;
};

struct droce_dproto_hello_rep {
	uint32_t version;
	uint32_t n_devices;
	struct droce_dproto_device dev[DROCE_DPROTO_DEVICES_MAX];
};

/** OPEN carries the application's async eventfd; the reply the event ring's memfd. */
struct droce_dproto_open_req {
	uint32_t device; /**< index in HELLO's list */
	uint32_t pad;
};

struct droce_dproto_open_rep {
	uint64_t ring_len; /**< the event ring (droce_ring of struct droce_dproto_event) */
};

/** What an async event names (its element), by event type. */
enum droce_dproto_element {
	DPROTO_ELEMENT_NONE, /**< an unknown event type */
	DPROTO_ELEMENT_CQ,
	DPROTO_ELEMENT_QP,
	DPROTO_ELEMENT_SRQ,
	DPROTO_ELEMENT_PORT,   /**< element.port_num */
	DPROTO_ELEMENT_DEVICE, /**< nothing: the device as a whole */
};

/** The kind of object an event of type @p type names (libibverbs' ibv_async_event). */
enum droce_dproto_element droce_dproto_event_element(enum ibv_event_type type);

/** One async event in the per-connection event ring. */
struct droce_dproto_event {
	uint32_t event_type; /**< enum ibv_event_type */
	uint32_t handle;     /**< the QP, CQ or SRQ; the port number for port events */
};

struct droce_dproto_port_rep {
	struct droce_dproto_device dev;
};

/** REG_MR carries the file descriptor the memory is mapped from. */
struct droce_dproto_reg_mr_req {
	uint32_t pd;
	uint32_t access;
	uint64_t iova; /**< the address the application registered */
	uint64_t length;
	uint64_t file_off; /**< offset of byte iova in the file */
};

struct droce_dproto_reg_mr_rep {
	uint32_t lkey, rkey;
};

/**
 * REREG_MR: IBV_REREG_MR_CHANGE_PD and/or _ACCESS of the MR the header names (a new range is
 * registered anew by the application: REG_MR, then DEREG_MR of the old one). The reply is a
 * droce_dproto_reg_mr_rep: the keys, kept as ibv_rereg_mr() keeps them.
 */
struct droce_dproto_rereg_mr_req {
	uint32_t flags; /**< IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS */
	uint32_t pd;    /**< with CHANGE_PD: the new PD's handle */
	uint32_t access;
	uint32_t pad;
};

struct droce_dproto_alloc_mw_req {
	uint32_t pd;
	uint32_t type;
};

struct droce_dproto_alloc_mw_rep {
	uint32_t rkey;
	uint32_t key_handle; /**< the window in the daemon's key table (bind WQEs carry it) */
};

/** CREATE_CHANNEL's reply carries the channel's eventfd. */

struct droce_dproto_create_cq_req {
	uint32_t cqe;
	uint32_t channel; /**< handle, 0 for none */
	uint32_t flags;   /**< IBV_CREATE_CQ_ATTR_* */
	uint32_t pad;
};

/** A queue's shared memory (the reply carries its memfd). */
struct droce_dproto_shm {
	uint64_t len; /**< bytes to map from offset 0 */
	uint64_t ring_off[2];
	uint64_t ring_len[2];
	uint32_t slot_size[2];
};

struct droce_dproto_create_cq_rep {
	uint32_t cqe;
	uint32_t pad;
	struct droce_dproto_shm shm; /**< control words at 0, CQE ring 0 */
};

struct droce_dproto_create_srq_req {
	uint32_t pd;
	uint32_t max_wr, max_sge, srq_limit;
};

struct droce_dproto_create_srq_rep {
	uint32_t max_wr, max_sge;
	struct droce_dproto_shm shm; /**< control words at 0, receive ring 0 */
};

struct droce_dproto_create_qp_req {
	uint32_t pd, send_cq, recv_cq, srq; /**< handles; srq 0 for none */
	uint32_t qp_type;
	uint32_t sq_sig_all;
	struct ibv_qp_cap cap;
	uint32_t pad;
};

struct droce_dproto_create_qp_rep {
	uint32_t qpn;
	struct ibv_qp_cap cap;
	struct droce_dproto_shm shm; /**< control words at 0, send ring 0, receive ring 1 */
};

struct droce_dproto_modify_qp_req {
	struct ibv_qp_attr attr;
	int32_t mask;
	uint32_t pad;
};

struct droce_dproto_create_ah_req {
	uint32_t pd;
	uint32_t pad;
	struct ibv_ah_attr attr;
};

struct droce_dproto_create_ah_rep {
	uint32_t ah_id; /**< what UD WQEs carry */
};

struct droce_dproto_resolve_req {
	union ibv_gid gid;
};

struct droce_dproto_resolve_rep {
	uint8_t mac[6];
	uint8_t pad[2];
};

/** The largest message either side sends. */
#define DROCE_DPROTO_MSG_MAX \
	(sizeof(struct droce_dproto_hdr) + sizeof(struct droce_dproto_hello_rep))

/** The body size of a request (@p reply false) or a reply of @p op; -1 for no such op. */
ssize_t droce_dproto_body_size(uint32_t op, bool reply);

/**
 * Send one message: @p hdr, then @p len bytes of @p body, with @p nfds
 * descriptors. 0 or -errno (-EPIPE when the peer is gone).
 */
int droce_dproto_send(int sock, const struct droce_dproto_hdr *hdr, const void *body, size_t len,
		      const int *fds, unsigned int nfds);

/**
 * Receive one message into @p hdr and @p body (at most @p cap bytes). Returns
 * the body's length, 0 for an empty body, -ECONNRESET when the peer closed,
 * -EMSGSIZE for a message too long or with too many descriptors (any it
 * carried are closed), -errno otherwise. *@p nfds gives the room in @p fds
 * and returns the count received (close-on-exec).
 */
ssize_t droce_dproto_recv(int sock, struct droce_dproto_hdr *hdr, void *body, size_t cap, int *fds,
			  unsigned int *nfds);

/**
 * A memfd of @p len bytes for memory shared with droced or its applications,
 * rounded up to the file's block (a page; a hugepage with MFD_HUGETLB in
 * @p mfd_flags) and sealed against shrinking and growing, so that no process
 * holding the descriptor can resize it under another's mapping (a SIGBUS
 * there). Returns the descriptor (close-on-exec) and the rounded length in
 * *@p len_out (may be NULL), or -errno.
 */
int droce_dproto_memfd(const char *name, size_t len, unsigned int mfd_flags, size_t *len_out);

/** The name of an operation, for logs. */
const char *droce_dproto_op_name(uint32_t op);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_DPROTO_H */
