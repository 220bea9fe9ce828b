/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MAD common header (IBTA 13.4.2) and the checks a received CM MAD passes: every
 * malformation refused with its own status, never a byte read beyond the length given.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <droce_wire.h>

/* A valid CM MAD of message @p attr, in a heap buffer of exactly @p len bytes. */
static uint8_t *cm_mad(uint16_t attr, size_t len)
{
	struct droce_mad_fields h;
	uint8_t *mad = calloc(1, len > DROCE_MAD_LEN ? len : DROCE_MAD_LEN);

	cr_assert_not_null(mad);
	droce_mad_cm_fields(&h, attr, 0x1122334455667788ull);
	droce_mad_hdr_set(mad, &h);
	return mad;
}

Test(mad_hdr, layout_is_13_4_2)
{
	struct droce_mad_fields h = {
		.base_version = 1,
		.mgmt_class = 0x07,
		.class_version = 2,
		.method = 0x83,
		.status = 0x1234,
		.class_specific = 0x5678,
		.tid = 0x0102030405060708ull,
		.attr_id = 0x0010,
		.resv = 0xabcd,
		.attr_mod = 0xdeadbeef,
	};
	static const uint8_t expected[DROCE_MAD_HDR_LEN] = {
		0x01, 0x07, 0x02, 0x83, 0x12, 0x34, 0x56, 0x78, 0x01, 0x02, 0x03, 0x04,
		0x05, 0x06, 0x07, 0x08, 0x00, 0x10, 0xab, 0xcd, 0xde, 0xad, 0xbe, 0xef,
	};
	uint8_t mad[DROCE_MAD_HDR_LEN + 1];
	struct droce_mad_fields back;

	memset(mad, 0x5a, sizeof(mad));
	droce_mad_hdr_set(mad, &h);
	cr_expect_arr_eq(mad, expected, sizeof(expected), "header bytes differ from 13.4.2");
	cr_expect_eq(mad[DROCE_MAD_HDR_LEN], 0x5a, "the byte after the header was written");
	droce_mad_hdr_get(mad, &back);
	cr_expect_eq(memcmp(&back, &h, sizeof(h)), 0, "header fields do not round-trip");
}

Test(mad_hdr, cm_fields_are_a_send_of_class_version_2)
{
	struct droce_mad_fields h;

	droce_mad_cm_fields(&h, DROCE_CM_ATTR_DREQ, 42);
	cr_expect_eq(h.base_version, 1, "base version");
	cr_expect_eq(h.mgmt_class, 0x07, "management class");
	cr_expect_eq(h.class_version, 2, "class version");
	cr_expect_eq(h.method, DROCE_MAD_METHOD_SEND, "method");
	cr_expect_eq(h.attr_id, DROCE_CM_ATTR_DREQ, "attribute");
	cr_expect_eq(h.tid, 42, "transaction ID");
	cr_expect_eq(h.status, 0, "status");
}

Test(mad_parse, every_message_accepted)
{
	int m;

	for (m = 0; m < DROCE_CM_MSG_COUNT; m++) {
		uint8_t *mad = cm_mad(droce_cm_msg_table[m].attr_id, DROCE_MAD_LEN);
		enum droce_cm_msg msg = DROCE_CM_MSG_COUNT;

		cr_expect_eq(droce_mad_parse(mad, DROCE_MAD_LEN, &msg), DROCE_MAD_OK, "%s refused",
			     droce_cm_msg_table[m].name);
		cr_expect_eq(msg, (enum droce_cm_msg)m, "%s parsed as %d",
			     droce_cm_msg_table[m].name, msg);
		free(mad);
	}
}

/* Short MADs in buffers of exactly their length: ASan would see a read past them. */
Test(mad_parse, short_mad_refused_at_every_length)
{
	uint8_t *full = cm_mad(DROCE_CM_ATTR_REQ, DROCE_MAD_LEN);
	size_t len;

	for (len = 0; len < DROCE_MAD_LEN; len++) {
		uint8_t *p = malloc(len ? len : 1);

		memcpy(p, full, len);
		cr_expect_eq(droce_mad_parse(p, len, NULL), DROCE_MAD_TRUNC, "%zu bytes accepted",
			     len);
		free(p);
	}
	free(full);
}

Test(mad_parse, long_mad_refused)
{
	uint8_t *mad = cm_mad(DROCE_CM_ATTR_REQ, DROCE_MAD_LEN + 4);

	cr_expect_eq(droce_mad_parse(mad, DROCE_MAD_LEN + 4, NULL), DROCE_MAD_TOO_LONG);
	free(mad);
}

static enum droce_mad_status parse_with(size_t off, uint8_t byte)
{
	uint8_t *mad = cm_mad(DROCE_CM_ATTR_REP, DROCE_MAD_LEN);
	enum droce_mad_status st;

	mad[off] = byte;
	st = droce_mad_parse(mad, DROCE_MAD_LEN, NULL);
	free(mad);
	return st;
}

Test(mad_parse, wrong_base_version_refused)
{
	cr_expect_eq(parse_with(0, 2), DROCE_MAD_BAD_BASE_VERSION, "base version 2");
	cr_expect_eq(parse_with(0, 0), DROCE_MAD_BAD_BASE_VERSION, "base version 0");
}

Test(mad_parse, other_class_is_not_cm)
{
	cr_expect_eq(parse_with(1, 0x03), DROCE_MAD_NOT_CM, "SA class taken as CM");
	cr_expect_eq(parse_with(1, 0x01), DROCE_MAD_NOT_CM, "SM class taken as CM");
}

Test(mad_parse, wrong_class_version_refused)
{
	cr_expect_eq(parse_with(2, 1), DROCE_MAD_BAD_CLASS_VERSION, "class version 1");
	cr_expect_eq(parse_with(2, 3), DROCE_MAD_BAD_CLASS_VERSION, "class version 3");
}

Test(mad_parse, methods_other_than_send_refused)
{
	cr_expect_eq(parse_with(3, DROCE_MAD_METHOD_GET), DROCE_MAD_BAD_METHOD, "Get");
	cr_expect_eq(parse_with(3, DROCE_MAD_METHOD_GET_RESP), DROCE_MAD_BAD_METHOD, "GetResp");
	cr_expect_eq(parse_with(3, DROCE_MAD_METHOD_SEND | DROCE_MAD_METHOD_RESP),
		     DROCE_MAD_BAD_METHOD, "Send with the R bit");
}

/* A CM-class MAD of attribute ClassPortInfo (0x0001) with method @p method. */
static enum droce_mad_status class_port_info_with(uint8_t method)
{
	uint8_t *mad = cm_mad(DROCE_CM_ATTR_CLASS_PORT_INFO, DROCE_MAD_LEN);
	enum droce_cm_msg msg = DROCE_CM_MSG_COUNT;
	enum droce_mad_status st;

	mad[3] = method;
	st = droce_mad_parse(mad, DROCE_MAD_LEN, &msg);
	cr_expect_eq(msg, DROCE_CM_MSG_COUNT, "method 0x%02x: no CM message set", method);
	free(mad);
	return st;
}

/* 16.7, 13.4.8.1: ClassPortInfo is the class's management attribute, not a CM message. */
Test(mad_parse, class_port_info_is_not_malformed)
{
	cr_expect_eq(class_port_info_with(DROCE_MAD_METHOD_GET), DROCE_MAD_CLASS_PORT_INFO, "Get");
	cr_expect_eq(class_port_info_with(DROCE_MAD_METHOD_SET), DROCE_MAD_CLASS_PORT_INFO, "Set");
	cr_expect_eq(class_port_info_with(DROCE_MAD_METHOD_GET_RESP), DROCE_MAD_CLASS_PORT_INFO,
		     "GetResp");
	cr_expect_str_eq(droce_mad_status_name[DROCE_MAD_CLASS_PORT_INFO], "cm_class_port_info",
			 "its name");
}

Test(mad_parse, class_port_info_with_other_methods_refused)
{
	cr_expect_eq(class_port_info_with(DROCE_MAD_METHOD_SEND), DROCE_MAD_BAD_METHOD, "Send");
	cr_expect_eq(class_port_info_with(0x07), DROCE_MAD_BAD_METHOD, "Trap");
	cr_expect_eq(class_port_info_with(DROCE_MAD_METHOD_SEND | DROCE_MAD_METHOD_RESP),
		     DROCE_MAD_BAD_METHOD, "Send with the R bit");
}

Test(mad_parse, unknown_attributes_refused)
{
	static const uint16_t bad[] = {0x0000, 0x0002, 0x000f, 0x001b, 0x0110, 0xffff};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t *mad = cm_mad(bad[i], DROCE_MAD_LEN);

		cr_expect_eq(droce_mad_parse(mad, DROCE_MAD_LEN, NULL), DROCE_MAD_BAD_ATTR,
			     "attribute 0x%04x accepted", bad[i]);
		free(mad);
	}
}

/* REJ's ARI, APR's and SIDR_REP's additional information: 72 bytes at most. */
static void info_len_case(uint16_t attr, enum droce_cm_field f, uint64_t max_field)
{
	uint64_t v;

	for (v = 0; v <= max_field; v++) {
		uint8_t *mad = cm_mad(attr, DROCE_MAD_LEN);
		enum droce_mad_status st;

		cr_assert_eq(droce_cm_set(mad, f, v), 0);
		st = droce_mad_parse(mad, DROCE_MAD_LEN, NULL);
		cr_expect_eq(st, v <= DROCE_CM_INFO_LEN_MAX ? DROCE_MAD_OK : DROCE_MAD_BAD_INFO_LEN,
			     "%s length %" PRIu64 ": %s", droce_cm_field_table[f].name, v,
			     droce_mad_status_name[st]);
		free(mad);
	}
}

Test(mad_parse, info_lengths_beyond_72_refused)
{
	info_len_case(DROCE_CM_ATTR_REJ, DROCE_CM_REJ_REJECTED_INFO_LENGTH, 127);
	info_len_case(DROCE_CM_ATTR_APR, DROCE_CM_APR_ADDITIONAL_INFO_LENGTH, 255);
	info_len_case(DROCE_CM_ATTR_SIDR_REP, DROCE_CM_SIDR_REP_ADDITIONAL_INFO_LENGTH, 255);
}

Test(mad_parse, decode_refuses_what_parse_refuses)
{
	uint8_t *mad = cm_mad(0x0042, DROCE_MAD_LEN);
	struct droce_cm_decoded d;

	cr_expect_eq(droce_cm_decode(mad, DROCE_MAD_LEN, &d), DROCE_MAD_BAD_ATTR);
	cr_expect_eq(droce_cm_decode(mad, 100, &d), DROCE_MAD_TRUNC);
	free(mad);
}

Test(mad_parse, status_names)
{
	int s;

	for (s = 0; s < DROCE_MAD_STATUS_COUNT; s++)
		cr_expect_not_null(droce_mad_status_name[s], "status %d has no name", s);
}

/* ---- the GSI framing */

static ssize_t gsi_frame(uint8_t *buf, size_t cap, const struct droce_hdr_fields *f,
			 const uint8_t *mad, uint32_t mad_len)
{
	struct droce_addr a = {
		.dst_mac = {2, 0, 0, 0, 0, 2},
		.src_mac = {2, 0, 0, 0, 0, 3},
		.src_ip = {10, 0, 0, 3},
		.dst_ip = {10, 0, 0, 2},
		.ttl = 64,
		.udp_sport = 0xc001,
		.udp_dport = DROCE_ROCEV2_UDP_PORT,
	};

	return droce_build_frame(buf, cap, &a, 1, f, mad, mad_len);
}

static enum droce_mad_status gsi_status(const struct droce_hdr_fields *f, uint32_t mad_len)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	uint8_t *mad = cm_mad(DROCE_CM_ATTR_RTU, 300);
	uint8_t frame[1024];
	struct droce_pkt pkt;
	ssize_t n = gsi_frame(frame, sizeof(frame), f, mad, mad_len);

	free(mad);
	cr_assert_gt(n, 0, "frame not built: %zd", n);
	cr_assert_eq(droce_parse(frame, (size_t)n, &cfg, &pkt), DROCE_PARSE_OK);
	return droce_gsi_parse(&pkt, frame, NULL);
}

Test(gsi, ud_send_to_qp1_with_the_gsi_qkey_accepted)
{
	struct droce_hdr_fields f;

	droce_gsi_fields(&f, 0xffff, 7);
	cr_expect_eq(f.opcode, DROCE_OP_UD_SEND_ONLY, "opcode");
	cr_expect_eq(f.dqpn, 1, "destination QP");
	cr_expect_eq(f.deth.sqpn, 1, "source QP");
	cr_expect_eq(f.deth.qkey, 0x80010000u, "Q_Key");
	cr_expect_eq(f.pkey, 0xffff, "P_Key");
	cr_expect_eq(f.psn, 7, "PSN");
	cr_expect_eq(gsi_status(&f, DROCE_MAD_LEN), DROCE_MAD_OK);
}

Test(gsi, other_qkey_refused)
{
	struct droce_hdr_fields f;

	droce_gsi_fields(&f, 0xffff, 0);
	f.deth.qkey = 0x80010001u;
	cr_expect_eq(gsi_status(&f, DROCE_MAD_LEN), DROCE_MAD_BAD_QKEY);
}

Test(gsi, other_qp_or_opcode_is_not_gsi)
{
	struct droce_hdr_fields f;

	droce_gsi_fields(&f, 0xffff, 0);
	f.dqpn = 2;
	cr_expect_eq(gsi_status(&f, DROCE_MAD_LEN), DROCE_MAD_NOT_GSI, "QP 2");
	droce_gsi_fields(&f, 0xffff, 0);
	f.opcode = DROCE_OP_UD_SEND_ONLY_IMM;
	cr_expect_eq(gsi_status(&f, DROCE_MAD_LEN), DROCE_MAD_NOT_GSI, "SEND with immediate");
}

Test(gsi, payload_other_than_256_bytes_refused)
{
	struct droce_hdr_fields f;

	droce_gsi_fields(&f, 0xffff, 0);
	cr_expect_eq(gsi_status(&f, 252), DROCE_MAD_TRUNC, "252 bytes");
	cr_expect_eq(gsi_status(&f, 0), DROCE_MAD_TRUNC, "no payload");
	cr_expect_eq(gsi_status(&f, 260), DROCE_MAD_TOO_LONG, "260 bytes");
}

/* ---- building */

Test(cm_build, init_writes_a_zeroed_cm_send)
{
	uint8_t mad[DROCE_MAD_LEN + 1];
	struct droce_mad_fields h;
	enum droce_cm_msg msg;
	size_t i;

	memset(mad, 0xee, sizeof(mad));
	cr_assert_eq(droce_cm_init(mad, DROCE_MAD_LEN, DROCE_CM_DREQ, 99), 0);
	droce_mad_hdr_get(mad, &h);
	cr_expect_eq(h.attr_id, DROCE_CM_ATTR_DREQ, "attribute");
	cr_expect_eq(h.tid, 99, "transaction ID");
	for (i = DROCE_MAD_HDR_LEN; i < DROCE_MAD_LEN; i++)
		cr_expect_eq(mad[i], 0, "byte %zu not zero", i);
	cr_expect_eq(mad[DROCE_MAD_LEN], 0xee, "byte past the MAD written");
	cr_expect_eq(droce_mad_parse(mad, DROCE_MAD_LEN, &msg), DROCE_MAD_OK);
	cr_expect_eq(msg, DROCE_CM_DREQ);
	cr_expect_eq(droce_cm_init(mad, DROCE_MAD_LEN - 1, DROCE_CM_DREQ, 1), -ENOSPC);
	cr_expect_eq(droce_cm_init(mad, DROCE_MAD_LEN, DROCE_CM_MSG_COUNT, 1), -EINVAL);
}

Test(cm_build, apr_refusal_of_a_lap)
{
	uint8_t lap[DROCE_MAD_LEN], apr[DROCE_MAD_LEN];
	struct droce_mad_fields h;

	cr_assert_eq(droce_cm_init(lap, sizeof(lap), DROCE_CM_LAP, 0x77), 0);
	droce_cm_set(lap, DROCE_CM_LAP_LOCAL_COMM_ID, 0x11111111);
	droce_cm_set(lap, DROCE_CM_LAP_REMOTE_COMM_ID, 0x22222222);
	droce_cm_set(lap, DROCE_CM_LAP_REMOTE_QPN_EECN, 0x123);
	memset(apr, 0xee, sizeof(apr));
	cr_assert_eq(droce_cm_apr_refuse(apr, sizeof(apr), lap, sizeof(lap)), 0);
	droce_mad_hdr_get(apr, &h);
	cr_expect_eq(h.attr_id, DROCE_CM_ATTR_APR, "attribute");
	cr_expect_eq(h.tid, 0x77, "the LAP's transaction ID");
	cr_expect_eq(droce_cm_get(apr, DROCE_CM_APR_LOCAL_COMM_ID), 0x22222222, "local comm ID");
	cr_expect_eq(droce_cm_get(apr, DROCE_CM_APR_REMOTE_COMM_ID), 0x11111111, "remote comm ID");
	cr_expect_eq(droce_cm_get(apr, DROCE_CM_APR_AP_STATUS), DROCE_CM_APR_UNSUPPORTED);
	cr_expect_eq(droce_cm_get(apr, DROCE_CM_APR_ADDITIONAL_INFO_LENGTH), 0);

	/* in place: the LAP's buffer becomes the APR */
	cr_assert_eq(droce_cm_apr_refuse(lap, sizeof(lap), lap, sizeof(lap)), 0);
	cr_expect_arr_eq(lap, apr, sizeof(apr), "in-place refusal differs");

	cr_expect_eq(droce_cm_apr_refuse(apr, sizeof(apr), apr, sizeof(apr)), -EINVAL,
		     "an APR is no LAP");
	cr_assert_eq(droce_cm_init(lap, sizeof(lap), DROCE_CM_LAP, 1), 0);
	cr_expect_eq(droce_cm_apr_refuse(apr, DROCE_MAD_LEN - 1, lap, sizeof(lap)), -ENOSPC);
}

/* A LAP shorter than a MAD, or one droce_mad_parse() refuses, is read no further. */
Test(cm_build, apr_refusal_checks_the_lap)
{
	uint8_t lap[DROCE_MAD_LEN], apr[DROCE_MAD_LEN], untouched[DROCE_MAD_LEN];
	uint8_t *short_lap;
	size_t len;

	memset(apr, 0xee, sizeof(apr));
	memset(untouched, 0xee, sizeof(untouched));
	cr_assert_eq(droce_cm_init(lap, sizeof(lap), DROCE_CM_LAP, 0x77), 0);
	/* at every length short of a MAD, in a buffer of exactly that length */
	for (len = 0; len < DROCE_MAD_LEN; len++) {
		short_lap = malloc(len > 0 ? len : 1);
		cr_assert_not_null(short_lap);
		memcpy(short_lap, lap, len);
		cr_expect_eq(droce_cm_apr_refuse(apr, sizeof(apr), short_lap, len), -EINVAL,
			     "a LAP of %zu bytes", len);
		free(short_lap);
	}
	cr_expect_eq(droce_cm_apr_refuse(apr, sizeof(apr), lap, DROCE_MAD_LEN + 1), -EINVAL,
		     "a LAP longer than a MAD");
	lap[3] = DROCE_MAD_METHOD_GET;
	cr_expect_eq(droce_cm_apr_refuse(apr, sizeof(apr), lap, sizeof(lap)), -EINVAL,
		     "a LAP not sent with Send");
	lap[3] = DROCE_MAD_METHOD_SEND;
	lap[2] = 1;
	cr_expect_eq(droce_cm_apr_refuse(apr, sizeof(apr), lap, sizeof(lap)), -EINVAL,
		     "a LAP of class version 1");
	cr_expect_arr_eq(apr, untouched, sizeof(apr), "nothing written for a refused LAP");
}
