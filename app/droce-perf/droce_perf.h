/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf: perftest's bandwidth and latency tests (write, send, read,
 * atomic) on droce through the libibverbs API. Shared declarations of its
 * files: cli.c (options), res.c (verbs resources of one end, connection),
 * loopback.c (two ends in one process), twohost.c (one end, the other a
 * perftest or droce-perf elsewhere; perf_oob.h: the exchange), bw.c, lat.c,
 * lat_twohost.c (the measurements), wr.c (their work requests), events.c (-e: sleeping on
 * completion channels), pattern.c (payload pattern for --check), report.c (text and JSON output).
 */
#ifndef DROCE_PERF_H
#define DROCE_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "perf_oob.h"

#define PERF_EXIT_OK    0
#define PERF_EXIT_FAIL  1 /* a verbs call, a completion or --check failed */
#define PERF_EXIT_USAGE 2

#define PERF_MIN_ITERS     5
#define PERF_MAX_POST_LIST 256
#define PERF_MAX_SIZE      (1u << 23) /* -a runs 2 .. 2^23, as perftest */
#define PERF_UD_GRH        40         /* a UD receive starts with the GRH */
#define PERF_QP_TIMEOUT    14         /* -u: perftest's local ACK timeout exponent */
#define PERF_MAX_TIMEOUT   31         /* the QP attribute has 5 bits */

enum perf_verb {
	PERF_WRITE,
	PERF_SEND,
	PERF_READ,
	PERF_ATOMIC,
};

#define PERF_ATOMIC_SIZE 8 /* an atomic's operand, the only size of atomic tests */
#define PERF_ATOMIC_ADD  1 /* perftest's FETCH_AND_ADD adds 1 */
#define PERF_ATOMIC_SWAP 0 /* and its CMP_AND_SWAP compares and swaps 0 */

#define PERF_UD_QKEY 0x11111111u /* perftest's Q_Key */

/* READ and atomics: the request is the whole of a message, nothing is sent to a receive. */
static inline bool perf_verb_one_sided(enum perf_verb v)
{
	return v == PERF_READ || v == PERF_ATOMIC;
}

enum perf_kind {
	PERF_BW,
	PERF_LAT,
};

/* Options, as cli.c leaves them: every default applied. */
struct perf_opts {
	const char *test_name; /* "write_bw" ... */
	enum perf_verb verb;
	enum perf_kind kind;
	enum ibv_qp_type qp_type;
	bool loopback;
	const char *server;     /* two hosts: the server to connect to; NULL = be the server */
	uint16_t port;          /* -p: TCP port of the exchange */
	bool atomic_cas;        /* -A CMP_AND_SWAP (default FETCH_AND_ADD) */
	unsigned int post_list; /* -l: send WRs per ibv_post_send() */
	const char *ib_dev;     /* -d: first end's device, NULL = first device */
	uint8_t ib_port;        /* -i */
	int gid_index;          /* -x, -1 = the first IPv4-mapped GID */
	uint64_t size;          /* -s; 0: the path MTU (UD bandwidth default) */
	bool all;               /* -a */
	uint64_t max_size;      /* --max-size: bound of -a */
	uint64_t iters;         /* -n, per QP */
	unsigned int duration;  /* -D seconds, 0 = iteration mode */
	unsigned int num_qps;   /* -q */
	unsigned int tx_depth;  /* -t */
	unsigned int rx_depth;  /* -r */
	unsigned int cq_mod;    /* -Q */
	unsigned int outs;      /* -o: outstanding RDMA READs */
	unsigned int mtu;       /* -m bytes, 0 = the port's active MTU */
	int inline_size;        /* -I, -1 = default */
	bool cpu_freq_ok;       /* -F */
	bool no_peak;           /* -N */
	bool report_gbits;
	bool check;
	bool use_hugepages;    /* --use_hugepages: buffers on hugepages when there are free ones */
	const char *json_path; /* --out_json, NULL = none */
	uint8_t qp_timeout;    /* -u: RC local ACK timeout exponent (4.096 us x 2^N) */
	bool events;           /* -e: sleep on a completion channel instead of busy polling */
	bool bidirectional;    /* -b: both ends send at once (bw tests) */
	bool report_both;      /* --report-both: with -b, each direction's table too */
	bool use_srq;          /* --use-srq: a receiving end's QPs share one SRQ (send tests) */
};

/* cli.c: 0 when the test runs, PERF_EXIT_USAGE on a usage error (reported),
 * -1 when -h or -V printed what they print. */
int perf_cli_parse(int argc, char **argv, struct perf_opts *o);
void perf_cli_usage(FILE *out);
const char *perf_conn_name(enum ibv_qp_type t);

/*
 * One end: a device, its PD, CQ and MR, and its QPs; QP i owns buf + i * buf_len.
 * The buffer is droce_alloc_shared() memory, so that droced can register it too.
 */
struct perf_end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *channel; /* -e: the CQ's completion channel */
	struct ibv_cq *cq;
	struct ibv_srq *srq; /* --use-srq on an end that receives: every QP's receives */
	struct ibv_mr *mr;
	struct ibv_qp **qp;
	struct ibv_ah **ah; /* UD: the peer of each QP */
	uint32_t *remote_qpn;
	uint8_t *buf;
	size_t buf_size; /* of the whole buffer, for droce_free_shared() */
	struct ibv_port_attr port;
	int gid_index;
	union ibv_gid gid;
	struct perf_dest *local; /* one per QP */
};

enum perf_role {
	PERF_ROLE_LOOPBACK, /* both ends here */
	PERF_ROLE_CLIENT,   /* end 0 here: it requests */
	PERF_ROLE_SERVER,   /* end 1 here: it receives or answers */
};

/*
 * A run: the options, the two ends (0 requests, 1 responds; in two-host runs
 * only end me is here) and what they agreed.
 */
struct perf_ctx {
	const struct perf_opts *o;
	enum perf_role role;
	int me; /* the end this process reports on */
	struct perf_end end[2];
	const struct perf_dest *peer; /* the addresses of end me's peer QPs */
	const char *dev_name[2];
	char peer_name[64]; /* two hosts: the other side's address */
	size_t buf_len;     /* per QP and end */
	size_t vaddr_off;   /* where a QP's buffer starts for the peer (write_lat: its half) */
	unsigned int cycle; /* the larger page size: a peer may use this much from vaddr */
	enum ibv_mtu mtu;
	unsigned int max_inline;
	unsigned int outs;
	unsigned int tx_depth; /* send queue size */
	unsigned int rx_depth; /* receive queue size */
	uint64_t checked;      /* messages --check verified */
	uint64_t lost;         /* UC, UD: messages --check found missing */
	uint64_t cq_events;    /* -e: completion events taken from the channels */
	uint64_t srq_recvs;    /* --use-srq: receives posted to an SRQ */
	bool lat_rx_posted;    /* latency SEND: the receives are posted */
};

/* res.c */
int perf_end_open_device(struct perf_ctx *c, struct perf_end *e, struct ibv_device *dev);
int perf_end_create(struct perf_ctx *c, struct perf_end *e);
int perf_end_wait_active(struct perf_end *e, uint8_t port);
enum ibv_mtu perf_mtu_enum(unsigned int bytes);
void perf_leave_engine_cpu(void);
int perf_end_connect(struct perf_ctx *c, struct perf_end *e, const struct perf_dest *peer);
void perf_end_close(struct perf_ctx *c, struct perf_end *e);
/* whether end @p end receives on an SRQ (--use-srq), as perftest creates one */
bool perf_end_has_srq(const struct perf_ctx *c, int end);
/* the index of @p e's QP number @p qpn (an SRQ's completion names its QP so), or -1 */
int perf_end_qp_index(const struct perf_ctx *c, const struct perf_end *e, uint32_t qpn);
/* a receive of @p len bytes at QP @p qp's buffer + @p slot_off, on the QP or its end's SRQ */
int perf_post_recv(struct perf_ctx *c, struct perf_end *e, unsigned int qp, uint64_t slot_off,
		   uint32_t len, uint64_t wr_id);

/* loopback.c */
int perf_loopback_open(struct perf_ctx *c);
void perf_loopback_close(struct perf_ctx *c);
void perf_size_queues(struct perf_ctx *c);

/*
 * events.c (-e): the CQ of an end reports to a completion channel, armed once
 * it exists and again after every event; perf_events_wait() sleeps until one
 * of the ends in @p ends (bit i: end i) has an event or @p timeout_ms passes.
 * Callers sleep only after a poll of every CQ they wait for found nothing.
 */
int perf_events_open(struct perf_end *e);
int perf_events_arm(struct perf_end *e);
int perf_events_wait(struct perf_ctx *c, unsigned int ends, int timeout_ms);
#define PERF_EVENTS_WAIT_MS 100 /* the loops check their deadlines this often */

/* twohost.c: the whole run against the other host; 0, or -1 after reporting. */
int perf_twohost_run(struct perf_ctx *c);
void perf_twohost_close(struct perf_ctx *c);

/* bw.c, lat.c: one message size; 0, or -1 after reporting the failure. */
struct perf_bw_result {
	uint64_t bytes;
	uint64_t iters;
	double bw_peak; /* bytes per second */
	double bw_avg;
	double msg_rate; /* messages per second */
};

struct perf_lat_result {
	uint64_t bytes;
	uint64_t iters;
	double t_min, t_max, t_typical, t_avg, t_stdev, p99, p999; /* microseconds */
};

/* Called once a run is set up (receives posted), before it starts: the two-host SYNC. */
typedef int (*perf_ready_fn)(void *arg);

/*
 * One size: r[0] is this process's direction (end 0's sends in --loopback);
 * with -b in --loopback r[1] is the other one (end 1's sends).
 */
int perf_bw_run(struct perf_ctx *c, uint32_t size, perf_ready_fn ready, void *arg,
		struct perf_bw_result r[2]);
int perf_lat_run(struct perf_ctx *c, uint32_t size, struct perf_lat_result *r);
/* lat_twohost.c: end me against perftest's ping-pong and one-sided latency */
int perf_lat_twohost_run(struct perf_ctx *c, uint32_t size, perf_ready_fn ready, void *arg,
			 struct perf_lat_result *r);
/* lat.c: the table's figures from @p n samples (sorted in place) */
void perf_lat_stats(double *samples, uint64_t n, uint32_t size, struct perf_lat_result *r);
/* the message sizes of the run (-s, or -a's); their count */
unsigned int perf_sizes(const struct perf_ctx *c, uint32_t *sizes, unsigned int cap);

/*
 * wr.c: a send WR's opcode and remote side for the test's verb (@p remote_addr and
 * @p rkey: the target of WRITE, READ, atomics; UD SENDs go through @p e's AH of QP @p q),
 * and whether @p size bytes go inline.
 */
void perf_wr_set_verb(const struct perf_ctx *c, const struct perf_end *e, unsigned int q,
		      uint64_t remote_addr, uint32_t rkey, struct ibv_send_wr *wr);
bool perf_wr_inline(const struct perf_ctx *c, uint32_t size);
#define PERF_LAT_SIGNAL_EVERY 64 /* of the latency tests' send queue: reaped in time */
/*
 * One latency message from @p buf on @p e's QP 0 to @p peer: one-sided requests
 * signaled, others every PERF_LAT_SIGNAL_EVERY-th (*@p sent counts them); 0 or -1 (reported).
 */
int perf_lat_post(const struct perf_ctx *c, struct perf_end *e, const struct perf_dest *peer,
		  uint8_t *buf, uint32_t size, uint64_t wr_id, uint64_t *sent);

/* pattern.c: the bytes of message @p msg of QP @p qp; its last byte is never 0
 * and differs from the previous message's. */
void perf_pattern_fill(uint8_t *p, uint32_t len, unsigned int qp, uint64_t msg);
/* -1 when @p p holds message @p msg, else the offset of the first wrong byte. */
int64_t perf_pattern_find_error(const uint8_t *p, uint32_t len, unsigned int qp, uint64_t msg);
uint8_t perf_pattern_byte(unsigned int qp, uint64_t msg, uint32_t len, uint32_t off);
/* true once the last bytes of @p p (written by the engine) are message @p msg's */
bool perf_pattern_tail_arrived(const uint8_t *p, uint32_t len, unsigned int qp, uint64_t msg);
int perf_pattern_report(unsigned int qp, uint64_t msg, const uint8_t *p, uint32_t len);
/* 0 once @p p holds message @p msg, or -1 (reported) when it does not within @p wait_ns */
int perf_pattern_await(const uint8_t *p, uint32_t len, unsigned int qp, uint64_t msg,
		       uint64_t wait_ns);
#define PERF_PLACE_WAIT_NS 100000000ull

/* report.c */
void perf_report_header(const struct perf_ctx *c);
void perf_report_remote_bw(const struct perf_ctx *c, const struct perf_oob_report *r);
void perf_report_oob(const struct perf_ctx *c, const struct perf_bw_result *r,
		     struct perf_oob_report *out);
void perf_report_addresses(const struct perf_ctx *c);
void perf_report_table_title(const struct perf_ctx *c);
void perf_report_bw(const struct perf_ctx *c, const struct perf_bw_result *r);
/* -b: one row of both directions' sums (own size and iterations), as perftest's */
void perf_report_bw_both(const struct perf_ctx *c, const struct perf_bw_result *own,
			 const struct perf_bw_result *other);
/* -b --report-both: a table of each direction after the summed one */
void perf_report_bw_each(const struct perf_ctx *c, const struct perf_bw_result *own,
			 const struct perf_bw_result *other, unsigned int n);
void perf_report_lat(const struct perf_ctx *c, const struct perf_lat_result *r);
void perf_report_end(const struct perf_ctx *c);
/* @p other: -b's other direction, one per row of @p bw (else NULL) */
int perf_report_json(const struct perf_ctx *c, const struct perf_bw_result *bw,
		     const struct perf_bw_result *other, const struct perf_lat_result *lat,
		     unsigned int n);
const char *perf_test_title(const struct perf_opts *o);

static inline uint64_t perf_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A completion or step that does not come within this time is a failure. */
#define PERF_STALL_NS (10ull * 1000000000u)

#endif /* DROCE_PERF_H */
