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

#endif /* DROCE_PCAP_H */
