/* SPDX-License-Identifier: BSD-3-Clause */
/* droce-pcap: private declarations shared by its files. */
#ifndef DROCE_PCAP_H
#define DROCE_PCAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <droce_wire.h>

/** One frame of a capture as the dissector sees it. */
struct pcap_frame {
	uint64_t index; /**< 1-based, as tshark numbers frames */
	double time;    /**< seconds since the first frame */
	const uint8_t *data;
	uint32_t len;      /**< captured bytes */
	uint32_t wire_len; /**< bytes on the wire */
};

enum dissect_format {
	FORMAT_TEXT,
	FORMAT_JSON,
	FORMAT_NONE,
};

/** Print one parsed (or rejected) RoCE frame. */
void dissect_print(FILE *out, enum dissect_format fmt, const struct pcap_frame *fr,
		   enum droce_parse_status st, const struct droce_pkt *pkt);

/**
 * After a frame's own output: the CM MAD of a GSI packet (UD SEND to QP1), every field named;
 * a MAD lib/wire refuses prints its reason. Frames to other QPs print nothing here.
 */
void dissect_mad_print(FILE *out, enum dissect_format fmt, const struct pcap_frame *fr,
		       const struct droce_pkt *pkt);

/* Per-capture summary: per direction and QP, messages, bytes, retransmissions, NAKs, RNRs. */
struct summary;
struct summary *summary_new(void);
void summary_add(struct summary *s, const struct pcap_frame *fr, const struct droce_pkt *pkt);
void summary_add_status(struct summary *s, enum droce_parse_status st);
void summary_print(FILE *out, const struct summary *s, enum dissect_format fmt);
void summary_free(struct summary *s);
/** Frames that were RoCE but malformed (bad ICRC included). */
uint64_t summary_errors(const struct summary *s);
/** Frames that were RoCEv2, well formed or not. */
uint64_t summary_roce_frames(const struct summary *s);
/** Frames with a bad ICRC. */
uint64_t summary_icrc_errors(const struct summary *s);

/*
 * Replay (replay.c, replay_plan.c, compare.c): the client's requests of a capture fed into a
 * droce RC responder standing in for the capture's server, what droce sends back recorded
 * and, optionally, compared with the server's responses in the capture. replay.c lists the
 * rewrites, compare.c the tolerated differences.
 */
struct replay_opts {
	bool compare;    /**< compare droce's responses with the server's in the capture */
	bool timing;     /**< feed at the capture's relative times; else as fast as possible */
	bool truncated;  /**< the capture was cut: droce's responses past its end not compared */
	const char *out; /**< pcap file (nanosecond timestamps) for droce's frames, or NULL */
	/** the server's IPv4 or IPv6 address; NULL: the destination of the first RC request */
	const char *server;
	FILE *log; /**< one line per difference (NULL: stdout) */
};

struct replay_result {
	/* the conversation the replay stood in for */
	bool ipv6;
	uint8_t server_ip[16], client_ip[16]; /**< IPv4 in the first 4 bytes */
	uint32_t server_qpn, client_qpn;
	uint32_t pmtu;      /**< path MTU the server's QP was given */
	uint64_t requests;  /**< request frames fed */
	uint64_t responses; /**< frames droce sent */
	uint64_t chained;   /**< of those, built in more than one mbuf segment */
	uint64_t malformed; /**< of those, refused by droce's own parser */
	uint64_t recv_completions, recv_errors; /**< droce's receive completions */
	bool rts;                               /**< droce's QP still in RTS at the end */
	/* the comparison (opts.compare) */
	uint64_t linux_responses; /**< the server's responses in the capture */
	uint64_t holes;           /**< server frames the capture lost (IPv4 ID gaps) */
	uint64_t in_holes;        /**< droce's responses taken as one of those */
	uint64_t coalesced;       /**< Linux ACKs a later droce ACK covers */
	uint64_t after_end;       /**< droce's responses past the cut of a truncated capture */
	uint64_t differences;     /**< differences beyond the tolerances (each one line) */
};

/**
 * Replay the capture at @p path. Starts and stops a DPDK EAL of its own (file prefix
 * droce-pcap-<pid>, no hugepages), so it runs once per process.
 * Returns 0 when replayed (@p r says how it went); -EINVAL when the capture cannot be read
 * or replayed (not a capture, not Ethernet, no RC request, a frame cut by the snap length, an
 * inconsistency the rewrites cannot resolve), -EIO when @p o->out cannot be created, -ENOMEM,
 * or DPDK's -rte_errno; each error with a message on stderr.
 */
int replay_run(const char *path, const struct replay_opts *o, struct replay_result *r);

/** What was replayed and, with opts.compare, the comparison and its verdict. */
void replay_print(FILE *out, const char *path, const struct replay_opts *o,
		  const struct replay_result *r);

#endif /* DROCE_PCAP_H */
