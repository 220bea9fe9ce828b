/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture summary: per sender and destination QP, what crossed the wire and
 * how much of it was recovery traffic (retransmitted requests, NAKs, RNR NAKs).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "droce_pcap.h"

struct flow {
	uint8_t src[16];
	bool ipv6;
	uint32_t qpn;
	uint64_t packets;
	uint64_t payload_bytes;
	uint64_t messages;    /* request messages completed on the wire (LAST/ONLY) */
	uint64_t retransmits; /* request packets whose PSN did not move forward */
	uint64_t acks;
	uint64_t naks;
	uint64_t rnr_naks;
	uint32_t next_psn; /* expected PSN of the next new request packet */
	bool seen_request;
};

struct summary {
	struct flow *flows;
	size_t nflows, cap;
	uint64_t frames;
	uint64_t by_status[DROCE_PARSE_STATUS_COUNT];
	uint64_t by_opcode[256];
};

struct summary *summary_new(void)
{
	return calloc(1, sizeof(struct summary));
}

void summary_free(struct summary *s)
{
	if (s != NULL)
		free(s->flows);
	free(s);
}

static struct flow *flow_get(struct summary *s, const uint8_t *src, bool ipv6, uint32_t qpn)
{
	size_t i;

	for (i = 0; i < s->nflows; i++) {
		struct flow *f = &s->flows[i];

		if (f->qpn == qpn && f->ipv6 == ipv6 && memcmp(f->src, src, 16) == 0)
			return f;
	}
	if (s->nflows == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct flow *n = realloc(s->flows, cap * sizeof(*n));

		if (n == NULL)
			return NULL;
		s->flows = n;
		s->cap = cap;
	}
	memset(&s->flows[s->nflows], 0, sizeof(struct flow));
	memcpy(s->flows[s->nflows].src, src, 16);
	s->flows[s->nflows].ipv6 = ipv6;
	s->flows[s->nflows].qpn = qpn;
	return &s->flows[s->nflows++];
}

/* PSN a is before b in the 24-bit sequence space (IBTA 9.7.1 comparisons). */
static bool psn_before(uint32_t a, uint32_t b)
{
	return ((a - b) & DROCE_PSN_MASK) >= 0x800000u;
}

void summary_add_status(struct summary *s, enum droce_parse_status st)
{
	s->frames++;
	s->by_status[st]++;
}

void summary_add(struct summary *s, const struct pcap_frame *fr, const struct droce_pkt *pkt)
{
	uint8_t src[16] = {0};
	bool ipv6 = pkt->flags & DROCE_PKT_IPV6;
	struct flow *f;

	if (ipv6)
		memcpy(src, ((const struct droce_ipv6_hdr *)(fr->data + pkt->l3_off))->src, 16);
	else
		memcpy(src, ((const struct droce_ipv4_hdr *)(fr->data + pkt->l3_off))->src, 4);
	s->by_opcode[pkt->opcode]++;
	f = flow_get(s, src, ipv6, pkt->qpn);
	if (f == NULL)
		return;
	f->packets++;
	f->payload_bytes += pkt->payload_len;
	if (pkt->mask & DROCE_OPM_REQ) {
		uint32_t npsn;

		if (f->seen_request && psn_before(pkt->psn, f->next_psn)) {
			f->retransmits++;
			return;
		}
		/* a READ request covers as many PSNs as its response has packets;
		 * without the PMTU that is unknown here, so it counts as one */
		npsn = (pkt->psn + 1) & DROCE_PSN_MASK;
		f->next_psn = npsn;
		f->seen_request = true;
		if (pkt->mask & DROCE_OPM_LAST)
			f->messages++;
	}
	if (pkt->mask & DROCE_OPM_AETH) {
		const struct droce_aeth *ae = droce_pkt_ext(pkt, fr->data, DROCE_HDR_AETH);

		switch (droce_aeth_syndrome(ae) & DROCE_AETH_TYPE_MASK) {
		case DROCE_AETH_ACK:
			if (pkt->mask & DROCE_OPM_ACK)
				f->acks++;
			break;
		case DROCE_AETH_RNR_NAK:
			f->rnr_naks++;
			break;
		case DROCE_AETH_NAK:
			f->naks++;
			break;
		}
	}
}

uint64_t summary_errors(const struct summary *s)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < DROCE_PARSE_STATUS_COUNT; i++)
		if (i != DROCE_PARSE_OK && i != DROCE_PARSE_NOT_ROCE)
			n += s->by_status[i];
	return n;
}

uint64_t summary_roce_frames(const struct summary *s)
{
	return s->frames - s->by_status[DROCE_PARSE_NOT_ROCE];
}

uint64_t summary_icrc_errors(const struct summary *s)
{
	return s->by_status[DROCE_PARSE_BAD_ICRC];
}

static void flow_src(const struct flow *f, char *buf, size_t len)
{
	inet_ntop(f->ipv6 ? AF_INET6 : AF_INET, f->src, buf, (socklen_t)len);
}

static void print_text(FILE *out, const struct summary *s)
{
	char src[INET6_ADDRSTRLEN];
	size_t i;
	int k;

	fprintf(out,
		"frames %" PRIu64 ", RoCEv2 %" PRIu64 ", other %" PRIu64 ", malformed %" PRIu64
		" (ICRC errors %" PRIu64 ")\n",
		s->frames, s->frames - s->by_status[DROCE_PARSE_NOT_ROCE],
		s->by_status[DROCE_PARSE_NOT_ROCE], summary_errors(s),
		s->by_status[DROCE_PARSE_BAD_ICRC]);
	for (k = 0; k < DROCE_PARSE_STATUS_COUNT; k++)
		if (k > DROCE_PARSE_NOT_ROCE && s->by_status[k])
			fprintf(out, "  dropped %-18s %" PRIu64 "\n", droce_parse_status_name[k],
				s->by_status[k]);
	fprintf(out, "opcodes:\n");
	for (k = 0; k < 256; k++)
		if (s->by_opcode[k])
			fprintf(out, "  0x%02x %-34s %" PRIu64 "\n", k, droce_opcode_table[k].name,
				s->by_opcode[k]);
	fprintf(out, "%-40s %8s %8s %12s %8s %6s %6s %6s\n", "sender -> dest QP", "packets",
		"messages", "payload", "retrans", "acks", "naks", "rnr");
	for (i = 0; i < s->nflows; i++) {
		const struct flow *f = &s->flows[i];
		char key[INET6_ADDRSTRLEN + 24];

		flow_src(f, src, sizeof(src));
		snprintf(key, sizeof(key), "%s -> 0x%06" PRIx32, src, f->qpn);
		fprintf(out,
			"%-40s %8" PRIu64 " %8" PRIu64 " %12" PRIu64 " %8" PRIu64 " %6" PRIu64
			" %6" PRIu64 " %6" PRIu64 "\n",
			key, f->packets, f->messages, f->payload_bytes, f->retransmits, f->acks,
			f->naks, f->rnr_naks);
	}
}

static void print_json(FILE *out, const struct summary *s)
{
	char src[INET6_ADDRSTRLEN];
	size_t i;
	int k;
	bool first = true;

	fprintf(out, "{\"summary\":{\"frames\":%" PRIu64 ",\"malformed\":%" PRIu64 ",\"status\":{",
		s->frames, summary_errors(s));
	for (k = 0; k < DROCE_PARSE_STATUS_COUNT; k++) {
		fprintf(out, "%s\"%s\":%" PRIu64, first ? "" : ",", droce_parse_status_name[k],
			s->by_status[k]);
		first = false;
	}
	fprintf(out, "},\"flows\":[");
	for (i = 0; i < s->nflows; i++) {
		const struct flow *f = &s->flows[i];

		flow_src(f, src, sizeof(src));
		fprintf(out,
			"%s{\"src\":\"%s\",\"qpn\":%" PRIu32 ",\"packets\":%" PRIu64
			",\"messages\":%" PRIu64 ",\"payload_bytes\":%" PRIu64
			",\"retransmits\":%" PRIu64 ",\"acks\":%" PRIu64 ",\"naks\":%" PRIu64
			",\"rnr_naks\":%" PRIu64 "}",
			i ? "," : "", src, f->qpn, f->packets, f->messages, f->payload_bytes,
			f->retransmits, f->acks, f->naks, f->rnr_naks);
	}
	fprintf(out, "]}}\n");
}

void summary_print(FILE *out, const struct summary *s, enum dissect_format fmt)
{
	if (fmt == FORMAT_JSON)
		print_json(out, s);
	else
		print_text(out, s);
}
