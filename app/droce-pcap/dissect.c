/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One line per RoCEv2 frame, text or JSON, from lib/wire's descriptor and tables; a GSI packet's
 * CM MAD follows (dissect_mad.c).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <string.h>

#include "droce_pcap.h"

static void format_ip(const struct droce_pkt *pkt, const uint8_t *frame, bool src, char *buf,
		      size_t len)
{
	const uint8_t *l3 = frame + pkt->l3_off;

	if (pkt->flags & DROCE_PKT_IPV6) {
		const struct droce_ipv6_hdr *ip6 = (const void *)l3;

		inet_ntop(AF_INET6, src ? ip6->src : ip6->dst, buf, (socklen_t)len);
	} else {
		const struct droce_ipv4_hdr *ip = (const void *)l3;

		inet_ntop(AF_INET, src ? ip->src : ip->dst, buf, (socklen_t)len);
	}
}

static const char *aeth_kind(uint8_t syndrome)
{
	switch (syndrome & DROCE_AETH_TYPE_MASK) {
	case DROCE_AETH_ACK:
		return "ACK";
	case DROCE_AETH_RNR_NAK:
		return "RNR_NAK";
	case DROCE_AETH_NAK:
		return "NAK";
	default:
		return "RESERVED";
	}
}

/* Extended headers as "NAME{k=v ...}" (text) or "\"name\":{...}" (JSON). */
static void print_ext(FILE *out, bool json, const struct droce_hdr_fields *f, uint32_t mask)
{
	const char *sep = json ? "," : " ";

	if (mask & DROCE_OPM_DETH)
		fprintf(out,
			json ? "%s\"deth\":{\"qkey\":%" PRIu32 ",\"src_qp\":%" PRIu32 "}"
			     : "%sDETH{qkey=0x%08" PRIx32 " src_qp=0x%06" PRIx32 "}",
			sep, f->deth.qkey, f->deth.sqpn);
	if (mask & DROCE_OPM_RETH)
		fprintf(out,
			json ? "%s\"reth\":{\"va\":%" PRIu64 ",\"rkey\":%" PRIu32
			       ",\"len\":%" PRIu32 "}"
			     : "%sRETH{va=0x%" PRIx64 " rkey=0x%08" PRIx32 " len=%" PRIu32 "}",
			sep, f->reth.va, f->reth.rkey, f->reth.len);
	if (mask & DROCE_OPM_ATMETH)
		fprintf(out,
			json ? "%s\"atomiceth\":{\"va\":%" PRIu64 ",\"rkey\":%" PRIu32
			       ",\"swap_add\":%" PRIu64 ",\"compare\":%" PRIu64 "}"
			     : "%sAtomicETH{va=0x%" PRIx64 " rkey=0x%08" PRIx32
			       " swap_add=0x%" PRIx64 " compare=0x%" PRIx64 "}",
			sep, f->atmeth.va, f->atmeth.rkey, f->atmeth.swap_add, f->atmeth.compare);
	if (mask & DROCE_OPM_AETH)
		fprintf(out,
			json ? "%s\"aeth\":{\"syndrome\":%u,\"kind\":\"%s\",\"msn\":%" PRIu32 "}"
			     : "%sAETH{syndrome=0x%02x %s msn=%" PRIu32 "}",
			sep, f->aeth.syndrome, aeth_kind(f->aeth.syndrome), f->aeth.msn);
	if (mask & DROCE_OPM_ATMACK)
		fprintf(out,
			json ? "%s\"atomicacketh\":{\"orig\":%" PRIu64 "}"
			     : "%sAtomicAckETH{orig=0x%" PRIx64 "}",
			sep, f->atmack_orig);
	if (mask & DROCE_OPM_IMMDT)
		fprintf(out, json ? "%s\"immdt\":%" PRIu32 : "%sImmDt{0x%08" PRIx32 "}", sep,
			ntohl(f->imm_be));
	if (mask & DROCE_OPM_IETH)
		fprintf(out,
			json ? "%s\"ieth\":{\"rkey\":%" PRIu32 "}" : "%sIETH{rkey=0x%08" PRIx32 "}",
			sep, f->ieth_rkey);
}

static void print_text(FILE *out, const struct pcap_frame *fr, enum droce_parse_status st,
		       const struct droce_pkt *pkt)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	struct droce_hdr_fields f;

	fprintf(out, "%6" PRIu64 " %10.6f ", fr->index, fr->time);
	if (st != DROCE_PARSE_OK && st != DROCE_PARSE_BAD_ICRC) {
		fprintf(out, "MALFORMED %s (%" PRIu32 " bytes)\n", droce_parse_status_name[st],
			fr->len);
		return;
	}
	format_ip(pkt, fr->data, true, src, sizeof(src));
	format_ip(pkt, fr->data, false, dst, sizeof(dst));
	droce_pkt_fields(pkt, fr->data, &f);
	fprintf(out, "%s > %s %s qp 0x%06" PRIx32 " psn %" PRIu32 "%s%s len %u", src, dst,
		droce_opcode_table[pkt->opcode].name, pkt->qpn, pkt->psn, f.ackreq ? " A" : "",
		f.se ? " SE" : "", pkt->payload_len);
	print_ext(out, false, &f, pkt->mask);
	fprintf(out, " icrc %s\n", st == DROCE_PARSE_OK ? "ok" : "BAD");
	dissect_mad_print(out, FORMAT_TEXT, fr, pkt);
}

static void print_json(FILE *out, const struct pcap_frame *fr, enum droce_parse_status st,
		       const struct droce_pkt *pkt)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	struct droce_hdr_fields f;

	fprintf(out, "{\"frame\":%" PRIu64 ",\"time\":%.9f", fr->index, fr->time);
	if (st != DROCE_PARSE_OK && st != DROCE_PARSE_BAD_ICRC) {
		fprintf(out, ",\"error\":\"%s\",\"len\":%" PRIu32 "}\n",
			droce_parse_status_name[st], fr->len);
		return;
	}
	format_ip(pkt, fr->data, true, src, sizeof(src));
	format_ip(pkt, fr->data, false, dst, sizeof(dst));
	droce_pkt_fields(pkt, fr->data, &f);
	fprintf(out,
		",\"src\":\"%s\",\"dst\":\"%s\",\"opcode\":%u,\"name\":\"%s\",\"qpn\":%" PRIu32
		",\"psn\":%" PRIu32 ",\"ackreq\":%s,\"se\":%s,\"pkey\":%u,\"pad\":%u,\"len\":%u",
		src, dst, pkt->opcode, droce_opcode_table[pkt->opcode].name, pkt->qpn, pkt->psn,
		f.ackreq ? "true" : "false", f.se ? "true" : "false", f.pkey, pkt->pad,
		pkt->payload_len);
	print_ext(out, true, &f, pkt->mask);
	dissect_mad_print(out, FORMAT_JSON, fr, pkt);
	fprintf(out, ",\"icrc_ok\":%s}\n", st == DROCE_PARSE_OK ? "true" : "false");
}

void dissect_print(FILE *out, enum dissect_format fmt, const struct pcap_frame *fr,
		   enum droce_parse_status st, const struct droce_pkt *pkt)
{
	if (fmt == FORMAT_TEXT)
		print_text(out, fr, st, pkt);
	else if (fmt == FORMAT_JSON)
		print_json(out, fr, st, pkt);
}
