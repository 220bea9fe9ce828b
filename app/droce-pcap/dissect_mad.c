/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CM MADs of GSI packets (UD SEND to QP1), field by field from lib/wire's CM tables: the MAD
 * header, every field of the message by its table name, and the rdma_cm header of REQ and
 * SIDR_REQ private data when the service ID is an IP CM one.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <string.h>

#include "droce_pcap.h"

static const char *mad_method_name(uint8_t method)
{
	switch (method) {
	case DROCE_MAD_METHOD_GET:
		return "Get";
	case DROCE_MAD_METHOD_SET:
		return "Set";
	case DROCE_MAD_METHOD_SEND:
		return "Send";
	case DROCE_MAD_METHOD_GET_RESP:
		return "GetResp";
	default:
		return "?";
	}
}

/* The name of a coded value, for the fields that have a table. */
static const char *value_name(enum droce_cm_field f, uint64_t v)
{
	static const char *const rej_ref[] = {"REQ", "REP", "other"};
	static const char *const mra_ref[] = {"REQ", "REP", "LAP"};
	static const char *const transport[] = {"RC", "UC", "RD"};
	static const char *const sidr[] = {"valid", "unsupported", "reject",
					   "no_qp", "redirect",    "unsupported_version"};
	static const char *const apr[] = {
		"success",
		"invalid_comm_id",
		"unsupported",
		"reject",
		"redirect",
		"is_current",
		"invalid_qpn_eecn",
		"invalid_lid",
		"invalid_gid",
		"invalid_flow_label",
		"invalid_tclass",
		"invalid_hop_limit",
		"invalid_packet_rate",
		"invalid_sl",
	};

	switch (f) {
	case DROCE_CM_REJ_REASON:
		return droce_cm_rej_reason_name((uint16_t)v);
	case DROCE_CM_REJ_MESSAGE_REJECTED:
		return v < 3 ? rej_ref[v] : NULL;
	case DROCE_CM_MRA_MESSAGE_MRAED:
		return v < 3 ? mra_ref[v] : NULL;
	case DROCE_CM_REQ_TRANSPORT_SERVICE_TYPE:
		return v < 3 ? transport[v] : NULL;
	case DROCE_CM_SIDR_REP_STATUS:
		return v < 6 ? sidr[v] : NULL;
	case DROCE_CM_APR_AP_STATUS:
		return v < 14 ? apr[v] : NULL;
	default:
		return NULL;
	}
}

static bool all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

/* Bytes in hex; in text, trailing zeros as "+N*00" (or "N*00" when all are zero). */
static void print_hex(FILE *out, bool json, const uint8_t *p, size_t n)
{
	size_t end = n, i;

	while (!json && end > 0 && p[end - 1] == 0)
		end--;
	for (i = 0; i < end; i++)
		fprintf(out, "%02x", p[i]);
	if (end < n)
		fprintf(out, "%s%zu*00", end ? "+" : "", n - end);
}

static void print_gid(FILE *out, const uint8_t *gid)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, gid, buf, sizeof(buf));
	fputs(buf, out);
}

/* 16-byte fields are GIDs; other byte strings (ARI, private data) are shown in hex. */
static void print_bytes_value(FILE *out, bool json, const uint8_t *p, size_t n)
{
	if (json)
		fputc('"', out);
	if (n == 16)
		print_gid(out, p);
	else
		print_hex(out, json, p, n);
	if (json)
		fputc('"', out);
}

/*
 * Numbers 16 bits wide or more in hex (IDs, keys, QPNs, PSNs), narrower ones and coded values
 * (REJ reasons ...) in decimal, as the specification's tables give them.
 */
static void print_field(FILE *out, bool json, const uint8_t *mad, enum droce_cm_field f,
			const char *sep)
{
	const struct droce_cm_field_info *fi = &droce_cm_field_table[f];
	uint64_t v = droce_cm_get(mad, f);
	const char *name;

	/* reserved bits only when a sender set them */
	if (fi->reserved && (fi->bits == 0 ? all_zero(droce_cm_bytes(mad, f), fi->size) : v == 0))
		return;
	fprintf(out, json ? "%s\"%s\":" : "%s%s=", sep, fi->name);
	if (fi->bits == 0) {
		print_bytes_value(out, json, droce_cm_bytes(mad, f), fi->size);
		return;
	}
	name = value_name(f, v);
	if (json || fi->bits < 16 || f == DROCE_CM_REJ_REASON)
		fprintf(out, "%" PRIu64, v);
	else
		fprintf(out, "0x%0*" PRIx64, (fi->bits + 3) / 4, v);
	if (name != NULL && json)
		fprintf(out, ",\"%s_name\":\"%s\"", fi->name, name);
	else if (name != NULL)
		fprintf(out, "(%s)", name);
}

/* The rdma_cm header ahead of the consumer's private data (annex A11), when there is one. */
static void print_cma(FILE *out, bool json, const uint8_t *mad, enum droce_cm_msg msg,
		      const char *indent)
{
	const struct droce_cm_msg_info *mi = &droce_cm_msg_table[msg];
	enum droce_cm_field sid_field =
		msg == DROCE_CM_REQ ? DROCE_CM_REQ_SERVICE_ID : DROCE_CM_SIDR_REQ_SERVICE_ID;
	const uint8_t *priv = mad + DROCE_MAD_HDR_LEN + mi->private_off;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	struct droce_cma_fields c;
	uint16_t ps, port;
	int af;

	if (droce_cma_service_id_parse(droce_cm_get(mad, sid_field), &ps, &port) != 0)
		return;
	if (droce_cma_hdr_decode(priv, mi->private_len, &c) != 0) {
		if (json)
			fputs(",\"rdma_cm\":null", out);
		else
			fprintf(out, "%srdma_cm{malformed}\n", indent);
		return;
	}
	af = c.ip_version == 4 ? AF_INET : AF_INET6;
	inet_ntop(af, c.src, src, sizeof(src));
	inet_ntop(af, c.dst, dst, sizeof(dst));
	if (json)
		fprintf(out,
			",\"rdma_cm\":{\"port_space\":%u,\"port\":%u,\"version\":%u,"
			"\"ip_version\":%u,\"src_port\":%u,\"src\":\"%s\",\"dst\":\"%s\","
			"\"private_data\":",
			ps, port, c.version, c.ip_version, c.port, src, dst);
	else
		fprintf(out,
			"%srdma_cm{port_space=0x%04x port=%u version=%u ip_version=%u src_port=%u "
			"src=%s dst=%s private_data=",
			indent, ps, port, c.version, c.ip_version, c.port, src, dst);
	print_bytes_value(out, json, priv + DROCE_CMA_HDR_LEN, mi->private_len - DROCE_CMA_HDR_LEN);
	fputs(json ? "}" : "}\n", out);
}

/* The MAD header; @p attr_name names its attribute. */
static void print_mad_hdr(FILE *out, bool json, const uint8_t *mad, const char *attr_name,
			  const char *indent)
{
	struct droce_mad_fields h;

	droce_mad_hdr_get(mad, &h);
	if (json)
		fprintf(out,
			",\"mad\":{\"base_version\":%u,\"mgmt_class\":%u,\"class_version\":%u,"
			"\"method\":%u,\"method_name\":\"%s\",\"status\":%u,\"class_specific\":%u,"
			"\"tid\":%" PRIu64 ",\"attr_id\":%u,\"resv\":%u,\"attr_mod\":%" PRIu32 "}",
			h.base_version, h.mgmt_class, h.class_version, h.method,
			mad_method_name(h.method), h.status, h.class_specific, h.tid, h.attr_id,
			h.resv, h.attr_mod);
	else
		fprintf(out,
			"%sMAD{base_version=%u mgmt_class=0x%02x(CM) class_version=%u "
			"method=0x%02x(%s) status=0x%04x class_specific=0x%04x tid=0x%016" PRIx64
			" attr_id=0x%04x(%s) resv=0x%04x attr_mod=0x%08" PRIx32 "}\n",
			indent, h.base_version, h.mgmt_class, h.class_version, h.method,
			mad_method_name(h.method), h.status, h.class_specific, h.tid, h.attr_id,
			attr_name, h.resv, h.attr_mod);
}

void dissect_mad_print(FILE *out, enum dissect_format fmt, const struct pcap_frame *fr,
		       const struct droce_pkt *pkt)
{
	const bool json = fmt == FORMAT_JSON;
	const char *indent = "        ";
	const struct droce_cm_msg_info *mi;
	enum droce_mad_status st;
	enum droce_cm_msg msg;
	const uint8_t *mad;
	unsigned int f;

	if (fmt == FORMAT_NONE || pkt->qpn != DROCE_GSI_QPN)
		return;
	st = droce_gsi_parse(pkt, fr->data, &msg);
	if (st == DROCE_MAD_NOT_GSI)
		return;
	/* the CM class's management attribute (16.7): its header, no CM message */
	if (st == DROCE_MAD_CLASS_PORT_INFO) {
		print_mad_hdr(out, json, fr->data + pkt->payload_off, "ClassPortInfo", indent);
		return;
	}
	if (st != DROCE_MAD_OK) {
		if (json)
			fprintf(out, ",\"mad_error\":\"%s\"", droce_mad_status_name[st]);
		else
			fprintf(out, "%sMAD MALFORMED %s\n", indent, droce_mad_status_name[st]);
		return;
	}
	mad = fr->data + pkt->payload_off;
	mi = &droce_cm_msg_table[msg];
	print_mad_hdr(out, json, mad, mi->name, indent);
	if (json)
		fprintf(out, ",\"cm\":{\"msg\":\"%s\"", mi->name);
	else
		fprintf(out, "%sCM %s{", indent, mi->name);
	for (f = mi->first_field; f < (unsigned int)mi->first_field + mi->nfields; f++) {
		bool first = !json && f == mi->first_field;

		print_field(out, json, mad, (enum droce_cm_field)f, json ? "," : first ? "" : " ");
	}
	fputs(json ? "}" : "}\n", out);
	if (msg == DROCE_CM_REQ || msg == DROCE_CM_SIDR_REQ)
		print_cma(out, json, mad, msg, indent);
}
