/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-pmd: a testpmd-like console on droce's own API. Shared declarations of
 * its files: main.c (options, start, exit), console.c (DPDK's cmdline: the
 * interactive console and batch mode), token.c (the command words), commands.c
 * (the command table, help, lcores), cmd_port.c, cmd_qp.c, cmd_stream.c (the
 * commands), ports.c (devices), qp.c (connected QP pairs), stream.c (streams and
 * the thread that runs them), stream_ops.c (posting and checking per operation),
 * pattern.c (payload), util.c (numbers, messages, time).
 */
#ifndef DROCE_PMD_H
#define DROCE_PMD_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#include "droce_counters.h"
#include "droce_engine.h"

#define PMD_EXIT_OK    0
#define PMD_EXIT_FAIL  1 /* a command failed (batch mode), or the devices did not open */
#define PMD_EXIT_USAGE 2

#define PMD_PORTS_MAX    DROCE_ENGINE_PORTS_MAX
#define PMD_QPS_MAX      64
#define PMD_STREAMS_MAX  64   /* stream records kept (running and finished) */
#define PMD_QP_WR        1024 /* send and receive queue of every QP: the deepest stream */
#define PMD_COUNTERS_MAX 128
#define PMD_WORDS_MAX    24
#define PMD_WORD_LEN     256
#define PMD_UD_GRH       40           /* a UD receive starts with the GRH */
#define PMD_MEM_MAX      (256u << 20) /* size x depth of one side of a stream */
#define PMD_QKEY         0x11111111u
#define PMD_SEEN_BITS    4096 /* UC, UD: how far back a late message is told from a copy */

/* ------------------------------------------------------------ util.c */

extern volatile sig_atomic_t pmd_interrupted; /* SIGINT or SIGTERM arrived */

/* Print "error: ..." (stderr, after what stdout holds); returns -1 for the command. */
int pmd_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t pmd_now_ns(void);
void pmd_sleep_ns(uint64_t ns);
/* A whole number with an optional K/M/G suffix (powers of 1024) in [min, max]; -1 (reported). */
int pmd_parse_u64(const char *word, const char *what, uint64_t min, uint64_t max, uint64_t *out);
/* A number of seconds, decimals allowed, in [0, max]; -1 (reported). */
int pmd_parse_seconds(const char *word, double max, double *out);
const char *pmd_qp_type_name(enum ibv_qp_type t);
const char *pmd_qp_state_name(enum ibv_qp_state s);

/* ------------------------------------------------------------ ports.c */

/* What show port stats and xstats count from (clear port stats keeps one as the zero). */
struct pmd_port_snap {
	struct droce_engine_port_stats st;
	uint64_t rx_errors; /* malformed RoCEv2: the parser's reasons summed */
	unsigned int n_ctr;
	uint64_t ctr[PMD_COUNTERS_MAX]; /* droce's port counters, in id order */
};

struct pmd_port {
	unsigned int id;
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr attr; /* when the port became active */
	union ibv_gid gid;         /* the GID QPs of the port use */
	int gid_index;
	char capture[256]; /* the file being recorded, or empty */
	struct pmd_port_snap base;
	struct pmd_port_snap shown; /* at the last show port stats: its rates */
	uint64_t shown_ns;
};

int pmd_ports_open(void);
void pmd_ports_close(void);
/* Port @p word ("0", "1"...); NULL (reported) when there is none. */
struct pmd_port *pmd_port_get(const char *word);
/* Ports named by @p word: "all" or one number; the count, 0 (reported) when none. */
unsigned int pmd_ports_select(const char *word, struct pmd_port **out);
int pmd_port_snap_read(struct pmd_port *p, struct pmd_port_snap *s);
/* The counter value of @p s minus the base, tolerant of counters that started again. */
uint64_t pmd_delta(uint64_t now, uint64_t base);

/* ------------------------------------------------------------ qp.c */

struct pmd_stream;

struct pmd_qp {
	bool used;
	unsigned int id;
	struct pmd_port *port;
	enum ibv_qp_type type;
	struct ibv_qp *qp;
	struct ibv_cq *cq; /* sends and receives */
	struct ibv_ah *ah; /* UD: towards the peer */
	int peer;          /* the other QP of the pair, -1 once destroyed */
	uint32_t peer_qpn;
	struct pmd_port *peer_port;
	uint32_t psn;          /* the first PSN this QP sends */
	struct pmd_stream *tx; /* the stream it sends for, or NULL */
	struct pmd_stream *rx; /* the stream it receives or responds for, or NULL */
	uint64_t stale_cqes;   /* completions of streams already gone */
};

struct pmd_qp *pmd_qp_get(const char *word);
struct pmd_qp *pmd_qp_by_id(int id);
/* A pair of @p type between two ports, connected to RTS; the ids in @p ids. 0 or -1 (reported). */
int pmd_qp_pair_create(enum ibv_qp_type type, struct pmd_port *a, struct pmd_port *b,
		       unsigned int ids[2]);
/* Move @p q to @p state, with the attributes the transition needs. 0 or -1 (reported). */
int pmd_qp_modify(struct pmd_qp *q, enum ibv_qp_state state);
int pmd_qp_destroy(struct pmd_qp *q);
enum ibv_qp_state pmd_qp_state(struct pmd_qp *q);
void pmd_qps_destroy_all(void);

/* ------------------------------------------------------------ pattern.c */

/* Message @p msg of stream @p seed: its first 8 bytes its number when @p numbered. */
void pmd_pattern_fill(uint8_t *p, uint32_t len, uint32_t seed, uint64_t msg, bool numbered);
/* -1 when @p p holds message @p msg, else the offset of the first wrong byte. */
int64_t pmd_pattern_check(const uint8_t *p, uint32_t len, uint32_t seed, uint64_t msg,
			  bool numbered);
uint64_t pmd_pattern_number(const uint8_t *p);

/* ------------------------------------------------------------ stream.c, stream_ops.c */

enum pmd_op {
	PMD_OP_WRITE,
	PMD_OP_READ,
	PMD_OP_SEND,
	PMD_OP_ATOMIC,
};

enum pmd_stream_state {
	PMD_STREAM_RUNNING,
	PMD_STREAM_STOPPING, /* no new message: waiting for completions */
	PMD_STREAM_DONE,     /* its count of messages completed */
	PMD_STREAM_STOPPED,  /* stopped by stop stream */
	PMD_STREAM_FAILED,   /* a completion, a post or a check failed */
};

struct pmd_mem {
	uint8_t *buf;
	size_t len;
	struct ibv_mr *mr;
};

/* A stream: one QP posting messages of one operation to its peer, checked where it can be. */
struct pmd_stream {
	unsigned int id;
	struct pmd_qp *req, *resp;
	unsigned int req_id, resp_id;
	enum ibv_qp_type type;
	enum pmd_op op;
	uint32_t size, depth;
	uint32_t slot;  /* bytes between two messages in a buffer */
	double rate;    /* messages per second; 0: as fast as it goes */
	uint64_t count; /* messages; 0: until stopped */
	bool checked;   /* the data are checked */
	bool numbered;  /* messages carry their number (checked UC and UD SENDs) */
	struct pmd_mem local, remote;

	/* written by the stream thread; read by the console with relaxed loads */
	uint64_t posted;    /* messages posted */
	uint64_t completed; /* messages completed at the requester */
	uint64_t bytes;     /* their bytes */
	uint64_t received;  /* SEND: messages received */
	uint64_t errors;    /* completions with an error */
	uint64_t check_errors;
	uint64_t lost; /* UC, UD SEND: messages that never arrived */
	uint64_t t_start_ns, t_end_ns;
	int state;       /* enum pmd_stream_state */
	char error[192]; /* the first failure */

	/* the stream thread's own */
	bool stop;          /* asked by stop stream (under the lock) */
	bool reported;      /* stop or wait printed its totals (the console's) */
	int final;          /* the state STOPPING ends in */
	bool mem;           /* its buffers are allocated (freed once nothing uses them) */
	bool sends_gone;    /* the requester was reset or destroyed: no completion will come */
	bool recvs_gone;    /* the responder was reset or destroyed */
	bool live;          /* the thread polls for it */
	uint64_t rx_posted; /* SEND: receives posted */
	uint64_t rx_cqes;   /* receive completions, any status */
	uint64_t send_cqes; /* send completions (messages and drains), any status */
	uint64_t drains_posted, drains_done; /* zero-length SENDs that use up leftover receives */
	uint64_t drain_rx;                   /* leftover receives used up */
	uint64_t expect;                     /* UC, UD SEND: the next number expected */
	uint64_t dups;                       /* UC, UD SEND: messages that arrived twice */
	/* UC, UD SEND: which of the PMD_SEEN_BITS numbers below expect arrived */
	uint64_t seen[PMD_SEEN_BITS / 64];
	bool drain_failed; /* a drain failed: the receives stay */
	uint64_t stop_ns, last_rx_ns, last_tx_ns, last_drain_ns;
};

/* The console holds the lock while it reads or changes streams and QPs. */
void pmd_lock(void);
void pmd_unlock(void);
int pmd_stream_thread_start(void);
void pmd_stream_thread_stop(void);
/* Start a stream (under the lock): its record, or NULL (reported). */
struct pmd_stream *pmd_stream_start(struct pmd_qp *req, enum pmd_op op, uint32_t size,
				    uint32_t depth, double rate, uint64_t count);
void pmd_stream_request_stop(struct pmd_stream *s);
bool pmd_stream_finished(const struct pmd_stream *s);
struct pmd_stream *pmd_stream_by_id(unsigned int id);
/* Streams in id order (under the lock); the count. */
unsigned int pmd_streams(struct pmd_stream **out, unsigned int max);
/*
 * @p q was reset (or is about to be destroyed, @p destroyed): nothing it had posted
 * completes; streams forget a destroyed QP (under the lock).
 */
void pmd_streams_qp_gone(struct pmd_qp *q, bool destroyed);
/* Stop every stream and wait for them (at exit). */
void pmd_streams_stop_all(void);
/* Free every stream record and buffer: after the thread stopped and the QPs are gone. */
void pmd_streams_free_all(void);
const char *pmd_op_name(enum pmd_op op);
const char *pmd_stream_state_name(int state);
/* stream thread busy share (show lcores) */
void pmd_stream_thread_stats(uint64_t *loops, uint64_t *busy, int *cpu);

/* stream_ops.c: run by the stream thread */
int pmd_stream_mem_init(struct pmd_stream *s);
void pmd_stream_mem_free(struct pmd_stream *s);
/* Post what the stream may post now; 0, or -1 after failing the stream. */
int pmd_stream_post(struct pmd_stream *s, uint64_t now);
/* One completion of the stream's requester or responder. */
void pmd_stream_complete(struct pmd_stream *s, const struct ibv_wc *wc, uint64_t now);
/* Post zero-length SENDs for the receives left posted; true once none is left. */
bool pmd_stream_drain_recvs(struct pmd_stream *s, uint64_t now);
void pmd_stream_fail(struct pmd_stream *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* UC, UD SEND: messages in flight for a while are lost. */
void pmd_stream_lost_check(struct pmd_stream *s, uint64_t now);
/* A final report line of @p s, without a newline. */
void pmd_stream_format(const struct pmd_stream *s, char *buf, size_t len);

/*
 * Work request ids: the stream in the high 32 bits; then a receive flag, a drain flag
 * (a zero-length SEND that uses up a receive left posted) and the message number (a
 * SEND) or the receive's slot, modulo 2^30. Error completions carry no valid opcode:
 * the id says what completed.
 */
#define PMD_WR_ID(stream, low) ((uint64_t)(stream) << 32 | (uint32_t)(low))
#define PMD_WR_STREAM(id)      ((unsigned int)((id) >> 32))
#define PMD_WR_RECV            0x80000000u
#define PMD_WR_DRAIN           0x40000000u
#define PMD_WR_N_MASK          0x3fffffffu

/* ------------------------------------------------------------ console.c, commands.c */

struct pmd_cmd {
	const char *syntax; /* words; a|b choices, <x> arguments, [x] optional rest */
	const char *help;
	int (*fn)(int argc, char **argv);
};

extern const struct pmd_cmd pmd_cmds[];
extern const unsigned int pmd_n_cmds;

struct pmd_opts {
	const char *devices;
	const char *file;
	const char *commands;
	char **words; /* after --, NULL when none */
	int n_words;
	bool keep_going;
	bool interactive;
	bool quiet;
};

int pmd_console_init(void);
void pmd_console_fini(void);
/* Run one line: 0, -1 when it failed (reported). */
int pmd_console_exec(const char *line);
/* Batch mode: every command of @p o; the exit status. */
int pmd_console_batch(const struct pmd_opts *o);
void pmd_console_interact(void);
/* quit asked */
extern bool pmd_quit;

/* token.c: cmdline tokens built from a syntax word */
struct cmdline_token_hdr;
struct cmdline_token_hdr *pmd_token_new(const char *word, unsigned int index, bool rest);

/* commands */
int pmd_cmd_help(int argc, char **argv);
int pmd_cmd_quit(int argc, char **argv);
int pmd_cmd_sleep(int argc, char **argv);
int pmd_cmd_lcores(int argc, char **argv);
int pmd_cmd_port_info(int argc, char **argv);
int pmd_cmd_port_stats(int argc, char **argv);
int pmd_cmd_port_xstats(int argc, char **argv);
int pmd_cmd_port_clear(int argc, char **argv);
int pmd_cmd_fault(int argc, char **argv);
int pmd_cmd_capture_start(int argc, char **argv);
int pmd_cmd_capture_stop(int argc, char **argv);
int pmd_cmd_qp_create(int argc, char **argv);
int pmd_cmd_qp_modify(int argc, char **argv);
int pmd_cmd_qp_destroy(int argc, char **argv);
int pmd_cmd_qp_list(int argc, char **argv);
int pmd_cmd_qp_show(int argc, char **argv);
int pmd_cmd_stream_start(int argc, char **argv);
int pmd_cmd_stream_stop(int argc, char **argv);
int pmd_cmd_stream_show(int argc, char **argv);
int pmd_cmd_stream_wait(int argc, char **argv);

/* The port list, for token completion. */
extern struct pmd_port pmd_ports[PMD_PORTS_MAX];
extern unsigned int pmd_n_ports;
extern struct pmd_qp pmd_qps[PMD_QPS_MAX];

#endif /* DROCE_PMD_H */
