/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perftest's out-of-band exchange over TCP, as perftest 4.5 (Debian 12) does
 * it, so that droce-perf and ib_*_bw / ib_*_lat run against each other:
 * oob_msg.c encodes and decodes each message, oob_plan.c gives the order of
 * messages and local steps of each test, oob_sock.c moves the bytes.
 *
 * Every exchange is symmetric: the client writes its message first and then
 * reads the server's, the server reads first and then writes. Numbers are
 * big-endian; the addresses travel as text.
 */
#ifndef PERF_OOB_H
#define PERF_OOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define PERF_OOB_PORT 18515 /* perftest's default TCP port */

/* The exchange version perftest 4.5 sends; perftest refuses a peer below 5.70. */
#define PERF_OOB_VERSION_STR   "6.06"
#define PERF_OOB_VERSION_MIN   5.70
#define PERF_OOB_VERSION_LEN   16
#define PERF_OOB_INT_LEN       4   /* page size, cache line size */
#define PERF_OOB_MTU_LEN       2   /* the ibv_mtu value as a decimal digit and a NUL */
#define PERF_OOB_KEYS_LEN      108 /* one QP's address, text with its GID, NUL-terminated */
#define PERF_OOB_FIELD_LEN     8   /* each of a result report's five numbers */
#define PERF_OOB_REPORT_FIELDS 5
#define PERF_OOB_DONE_STR      "done" /* sent with its NUL; perftest never reads it */
#define PERF_OOB_DONE_LEN      5

/* What one end tells the other about one of its QPs. */
struct perf_dest {
	uint16_t lid;
	uint16_t out_reads; /* RDMA READs and atomics it answers at once (1 for other tests) */
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t vaddr;
	union ibv_gid gid;
	uint32_t srqn; /* XRC and DC only: 0 here */
};

/* The result line the client of a write, read or atomic bandwidth test sends its server. */
struct perf_oob_report {
	uint64_t size;
	uint64_t iters; /* messages over every QP */
	double bw_peak; /* in the sender's unit: MB/sec or Gb/sec */
	double bw_avg;
	double msg_rate; /* Mpps */
};

/* oob_msg.c: encoders fill the whole buffer; decoders return 0 or -EINVAL. */
void perf_oob_version_encode(uint8_t out[PERF_OOB_VERSION_LEN]);
int perf_oob_version_decode(const uint8_t in[PERF_OOB_VERSION_LEN], double *version);
void perf_oob_int_encode(uint8_t out[PERF_OOB_INT_LEN], int32_t v);
int32_t perf_oob_int_decode(const uint8_t in[PERF_OOB_INT_LEN]);
void perf_oob_mtu_encode(uint8_t out[PERF_OOB_MTU_LEN], enum ibv_mtu mtu);
int perf_oob_mtu_decode(const uint8_t in[PERF_OOB_MTU_LEN], enum ibv_mtu *mtu);
void perf_oob_keys_encode(uint8_t out[PERF_OOB_KEYS_LEN], const struct perf_dest *d);
int perf_oob_keys_decode(const uint8_t in[PERF_OOB_KEYS_LEN], struct perf_dest *d);
void perf_oob_report_encode(uint8_t out[PERF_OOB_REPORT_FIELDS][PERF_OOB_FIELD_LEN],
			    const struct perf_oob_report *r);
void perf_oob_report_decode(const uint8_t in[PERF_OOB_REPORT_FIELDS][PERF_OOB_FIELD_LEN],
			    struct perf_oob_report *r);

/* oob_sock.c: the TCP connection; 0, or -1 after reporting why. */
struct perf_oob {
	int fd;
	bool client; /* the client writes first in each exchange */
};

int perf_oob_listen(uint16_t port); /* the listening socket, or -1 */
int perf_oob_accept(int listen_fd, struct perf_oob *s, char *peer, size_t peer_len);
/* Connect, trying again for @p wait_s seconds while nobody listens. */
int perf_oob_connect(const char *host, uint16_t port, unsigned int wait_s, struct perf_oob *s,
		     char *peer, size_t peer_len);
/* One exchange: @p mine goes, @p len bytes of the other side's come into @p theirs. */
int perf_oob_xchg(struct perf_oob *s, const void *mine, void *theirs, size_t len);
int perf_oob_done(struct perf_oob *s); /* "done" both ways and close */
void perf_oob_close(struct perf_oob *s);

/* oob_plan.c: the steps of a two-host run, the same list on both sides. */
enum perf_oob_step_kind {
	/* messages, each both ways */
	PERF_OOB_VERSION,    /* the exchange version */
	PERF_OOB_PAGE_SIZE,  /* each side's page size; both use the larger */
	PERF_OOB_CACHE_LINE, /* each side's cache line size; both use the larger */
	PERF_OOB_MTU,        /* each side's path MTU; both use the smaller */
	PERF_OOB_KEYS,       /* every QP's address, one message per QP in QP order */
	PERF_OOB_SYNC,       /* QP 0's address once more: both sides got this far */
	PERF_OOB_REPORT,     /* the client's last result line (five numbers); -b: each side's */
	PERF_OOB_DONE,       /* "done", then the connection closes */
	/* local steps */
	PERF_OOB_CONNECT, /* QPs to RTR and RTS towards the peer's addresses */
	PERF_OOB_RECV,    /* post the receives of message size @size_index */
	PERF_OOB_RUN,     /* measure message size @size_index */
};

#define PERF_OOB_CLIENT 1u
#define PERF_OOB_SERVER 2u

struct perf_oob_step {
	enum perf_oob_step_kind kind;
	unsigned int who;        /* local steps: PERF_OOB_CLIENT, PERF_OOB_SERVER or both */
	unsigned int size_index; /* PERF_OOB_RECV, PERF_OOB_RUN, -b's PERF_OOB_REPORT */
};

enum perf_oob_flow {
	PERF_OOB_FLOW_BW_ONE_SIDED, /* write_bw, read_bw, atomic_bw: the server only answers */
	PERF_OOB_FLOW_SEND_BW,
	PERF_OOB_FLOW_WRITE_LAT,
	PERF_OOB_FLOW_SEND_LAT,
	PERF_OOB_FLOW_LAT_ONE_SIDED, /* read_lat, atomic_lat */
	/* -b: both sides run, and trade their rows after each size */
	PERF_OOB_FLOW_BW_ONE_SIDED_BIDIR,
	PERF_OOB_FLOW_SEND_BW_BIDIR,
};

/*
 * The steps of @p flow for @p n_sizes message sizes (@p all: the sizes of -a,
 * which send_bw brackets with one more SYNC each); the count, or 0 when @p cap
 * is short.
 */
unsigned int perf_oob_plan(enum perf_oob_flow flow, unsigned int n_sizes, bool all,
			   struct perf_oob_step *out, unsigned int cap);
const char *perf_oob_step_name(enum perf_oob_step_kind kind);
/* Bytes one side sends for a message step with @p num_qps QPs (0 for a local step). */
size_t perf_oob_step_bytes(enum perf_oob_step_kind kind, unsigned int num_qps);

#endif /* PERF_OOB_H */
