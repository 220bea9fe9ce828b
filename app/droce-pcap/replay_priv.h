/* SPDX-License-Identifier: BSD-3-Clause */
/* droce-pcap's replay: what replay.c, replay_plan.c and compare.c share. */
#ifndef DROCE_PCAP_REPLAY_PRIV_H
#define DROCE_PCAP_REPLAY_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce_pcap.h"

/* A frame of the capture, or one droce sent. */
struct rframe {
	uint64_t number;  /* capture frame (1-based); droce's: the request frame it answered */
	uint64_t time_ns; /* capture timestamp; droce's: when it was sent (see replay.c) */
	uint8_t *bytes;
	uint32_t len;
	struct droce_pkt pkt;
	struct droce_hdr_fields f;
	struct droce_addr a;
	bool roce; /* RoCEv2, well formed, good ICRC: the fields above are valid */
};

struct rframes {
	struct rframe *v;
	size_t n, cap;
};

/* A READ request of the capture: where its response packets go in memory. */
struct read_req {
	uint32_t psn, npkts;
	uint64_t va;
};

/* What the replay deduces from the capture before it starts (replay_plan.c). */
struct plan {
	bool ipv6;
	uint8_t server_ip[16], client_ip[16];
	uint8_t server_mac[6], client_mac[6];
	uint32_t server_qpn, client_qpn;
	uint32_t first_psn; /* of the first request: the server's rq_psn */
	uint32_t pmtu;
	unsigned int access; /* remote access the requests need */
	uint32_t rkey;       /* the capture's rkey (0: none) */
	uint64_t va_lo, va_hi;
	uint32_t recv_len;  /* longest SEND message */
	uint32_t recv_msgs; /* SEND messages (distinct PSNs of LAST/ONLY) */
	uint8_t tclass, hop_limit;
	struct read_req *reads; /* READ requests, in capture order */
	size_t nreads;
};

/* One replay: the capture, droce's frames, the plan, the outcome. */
struct replay {
	const char *name; /* the capture, for messages */
	const struct replay_opts *o;
	struct replay_result *r;
	struct rframes cap, out;
	struct plan plan;
	uint64_t feeding;   /* the request frame being fed */
	unsigned int shown; /* difference lines printed */
};

/* replay_plan.c */
int rframes_push(struct rframes *fs, uint64_t number, uint64_t time_ns, const uint8_t *bytes,
		 uint32_t len);
void rframes_free(struct rframes *fs);
int replay_load(struct replay *rp, const char *path);
int replay_plan_make(struct replay *rp);
void replay_plan_free(struct plan *p);
bool replay_from_server(const struct plan *p, const struct rframe *fr);
bool replay_is_request(const struct plan *p, const struct rframe *fr);
bool replay_is_response(const struct plan *p, const struct rframe *fr);
/* A message on stderr about the capture (frame 0: the whole capture); returns -EINVAL. */
int replay_error(const struct replay *rp, uint64_t frame, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* compare.c */
/* One difference: a line on the log, counted. */
void replay_diff(struct replay *rp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The server's responses against droce's; differences counted in rp->r. 0 or -EINVAL/-ENOMEM. */
int replay_compare(struct replay *rp);

#endif /* DROCE_PCAP_REPLAY_PRIV_H */
