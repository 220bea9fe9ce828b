/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every CM MAD that Linux sent in the captures of tests/data (rping over rdma_cm), and every
 * MAD of tests/data/cm-mads.pcap (one of each CM message over IPv6, written from the spec's
 * tables by tools/gen-cm-fixture.py): it parses as a GSI packet and a CM message, its fields
 * equal tshark's decoding (tests/data/<capture>.cm.tsv, made by tools/gen-golden-cm.sh) and,
 * for the fixture, the values the generator wrote (cm-mads.expected.tsv); the MAD and the
 * whole frame are rebuilt byte for byte from the decoded fields.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <droce_wire.h>

#include "droce_test.h"

#define RPING   "linux-rxe-rping_cm.pcap"
#define FIXTURE "cm-mads.pcap"

/* ---- tshark's view: one row per GSI packet, columns by name */

#define MAX_COLS 128
#define MAX_ROWS 16

struct golden {
	char *cols[MAX_COLS];
	int ncols;
	char *rows[MAX_ROWS][MAX_COLS];
	uint64_t frame[MAX_ROWS];
	int nrows;
};

static void golden_load(struct golden *g, const char *name)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen(droce_test_data(name), "r");
	bool header = true;

	memset(g, 0, sizeof(*g));
	cr_assert_not_null(f, "missing golden file %s (tools/gen-golden-cm.sh makes it)", name);
	while (getline(&line, &cap, f) > 0) {
		char *s = strdup(line), *tok;
		char **dst = header ? g->cols : g->rows[g->nrows];
		int n = 0;

		s[strcspn(s, "\n")] = '\0';
		while ((tok = strsep(&s, "\t")) != NULL && n < MAX_COLS)
			dst[n++] = tok;
		if (header) {
			g->ncols = n;
			header = false;
		} else {
			cr_assert_lt(g->nrows, MAX_ROWS - 1);
			g->frame[g->nrows++] = strtoull(dst[0], NULL, 10);
		}
	}
	free(line);
	fclose(f);
}

static const char *golden_field(const struct golden *g, int row, const char *col)
{
	int i;

	for (i = 0; i < g->ncols; i++)
		if (strcmp(g->cols[i], col) == 0)
			return g->rows[row][i] != NULL ? g->rows[row][i] : "";
	cr_assert_fail("no column %s in the golden data", col);
	return NULL;
}

/* ---- which tshark column is which droce field */

enum col_kind {
	COL_HDR,      /* a MAD header field: id is the offset in struct droce_mad_fields */
	COL_CM,       /* a numeric CM field */
	COL_GID_IPV4, /* a GID field that tshark shows as the IPv4 address it maps */
	COL_GID_IPV6, /* a GID shown as IPv6 (tshark's other column for the same field) */
	COL_BYTES,    /* a byte-string CM field in hex */
	COL_CMA,      /* a field of the rdma_cm header in REQ's private data */
};

struct col_map {
	const char *tshark;
	enum col_kind kind;
	int id;
};

enum cma_col {
	CMA_MAJV,
	CMA_MINV,
	CMA_IPV,
	CMA_RESV,
	CMA_SPORT,
	CMA_SIP4,
	CMA_DIP4,
	CMA_SIP6,
	CMA_DIP6,
	CMA_PRIV,
};

#define HDR(col, member)                                                                  \
	{                                                                                 \
		"infiniband.mad." col, COL_HDR, offsetof(struct droce_mad_fields, member) \
	}
#define CM(col, f)                                         \
	{                                                  \
		"infiniband.cm." col, COL_CM, DROCE_CM_##f \
	}

/*
 * Not compared: tshark 4.0 reads REQ's flow label, the reserved bits after it and the packet
 * rate from the wrong bytes (it reports flow label 0x96b, reserved 2 and rate 0x16 where frame
 * 17 holds 96 b4 40 00 at class data offset 88: flow label 0x96b44, rate 0), and the
 * alternate path's the same way; the test
 * req_flow_label_gives_the_udp_source_port proves droce's reading against the UDP source port
 * Linux derived from the same flow label.
 */
static const struct col_map cols[] = {
	HDR("baseversion", base_version),
	HDR("mgmtclass", mgmt_class),
	HDR("classversion", class_version),
	HDR("method", method),
	HDR("status", status),
	HDR("classspecific", class_specific),
	HDR("transactionid", tid),
	HDR("attributeid", attr_id),
	HDR("attributemodifier", attr_mod),
	/* REQ */
	CM("req", REQ_LOCAL_COMM_ID),
	CM("req.serviceid", REQ_SERVICE_ID),
	CM("req.localcaguid", REQ_LOCAL_CA_GUID),
	CM("req.localqkey", REQ_LOCAL_QKEY),
	CM("req.localqpn", REQ_LOCAL_QPN),
	CM("req.responderres", REQ_RESPONDER_RESOURCES),
	CM("req.localeecn", REQ_LOCAL_EECN),
	CM("req.initdepth", REQ_INITIATOR_DEPTH),
	CM("req.remoteeecn", REQ_REMOTE_EECN),
	CM("req.remoteresptout", REQ_REMOTE_CM_RESPONSE_TIMEOUT),
	CM("req.transpsvctype", REQ_TRANSPORT_SERVICE_TYPE),
	CM("req.e2eflowctrl", REQ_END_TO_END_FLOW_CONTROL),
	CM("req.startpsn", REQ_STARTING_PSN),
	CM("req.localresptout", REQ_LOCAL_CM_RESPONSE_TIMEOUT),
	CM("req.retrcount", REQ_RETRY_COUNT),
	CM("req.pkey", REQ_PARTITION_KEY),
	CM("req.pppmtu", REQ_PATH_MTU),
	CM("req.rdcexist", REQ_RDC_EXISTS),
	CM("req.rnrretrcount", REQ_RNR_RETRY_COUNT),
	CM("req.maxcmretr", REQ_MAX_CM_RETRIES),
	CM("req.srq", REQ_SRQ),
	CM("req.ext_transport", REQ_EXTENDED_TRANSPORT_TYPE),
	CM("req.prim_locallid", REQ_PRIMARY_LOCAL_LID),
	CM("req.prim_remotelid", REQ_PRIMARY_REMOTE_LID),
	{"infiniband.cm.req.prim_localgid_ipv4", COL_GID_IPV4, DROCE_CM_REQ_PRIMARY_LOCAL_GID},
	{"infiniband.cm.req.prim_remotegid_ipv4", COL_GID_IPV4, DROCE_CM_REQ_PRIMARY_REMOTE_GID},
	{"infiniband.cm.req.prim_localgid", COL_GID_IPV6, DROCE_CM_REQ_PRIMARY_LOCAL_GID},
	{"infiniband.cm.req.prim_remotegid", COL_GID_IPV6, DROCE_CM_REQ_PRIMARY_REMOTE_GID},
	CM("req.prim_tfcclass", REQ_PRIMARY_TRAFFIC_CLASS),
	CM("req.prim_hoplim", REQ_PRIMARY_HOP_LIMIT),
	CM("req.prim_sl", REQ_PRIMARY_SL),
	CM("req.prim_subnetlocal", REQ_PRIMARY_SUBNET_LOCAL),
	CM("req.prim_localacktout", REQ_PRIMARY_LOCAL_ACK_TIMEOUT),
	CM("req.alt_locallid", REQ_ALTERNATE_LOCAL_LID),
	CM("req.alt_remotelid", REQ_ALTERNATE_REMOTE_LID),
	{"infiniband.cm.req.alt_localgid", COL_BYTES, DROCE_CM_REQ_ALTERNATE_LOCAL_GID},
	{"infiniband.cm.req.alt_remotegid", COL_BYTES, DROCE_CM_REQ_ALTERNATE_REMOTE_GID},
	CM("req.alt_tfcclass", REQ_ALTERNATE_TRAFFIC_CLASS),
	CM("req.alt_hoplim", REQ_ALTERNATE_HOP_LIMIT),
	CM("req.alt_sl", REQ_ALTERNATE_SL),
	CM("req.alt_subnetlocal", REQ_ALTERNATE_SUBNET_LOCAL),
	CM("req.alt_localacktout", REQ_ALTERNATE_LOCAL_ACK_TIMEOUT),
	{"infiniband.cm.req.ip_cm.majv", COL_CMA, CMA_MAJV},
	{"infiniband.cm.req.ip_cm.minv", COL_CMA, CMA_MINV},
	{"infiniband.cm.req.ip_cm.ipv", COL_CMA, CMA_IPV},
	{"infiniband.cm.req.ip_cm.reserved", COL_CMA, CMA_RESV},
	{"infiniband.cm.req.ip_cm.sport", COL_CMA, CMA_SPORT},
	{"infiniband.cm.req.ip_cm.sip4", COL_CMA, CMA_SIP4},
	{"infiniband.cm.req.ip_cm.dip4", COL_CMA, CMA_DIP4},
	{"infiniband.cm.req.ip_cm.sip6", COL_CMA, CMA_SIP6},
	{"infiniband.cm.req.ip_cm.dip6", COL_CMA, CMA_DIP6},
	{"infiniband.cm.req.ip_cm.private", COL_CMA, CMA_PRIV},
	/* REP */
	CM("rep", REP_LOCAL_COMM_ID),
	CM("rep.remotecommid", REP_REMOTE_COMM_ID),
	CM("rep.localqkey", REP_LOCAL_QKEY),
	CM("rep.localqpn", REP_LOCAL_QPN),
	CM("rep.localeecn", REP_LOCAL_EECN),
	CM("rep.startpsn", REP_STARTING_PSN),
	CM("rep.respres", REP_RESPONDER_RESOURCES),
	CM("rep.initdepth", REP_INITIATOR_DEPTH),
	CM("rep.tgtackdelay", REP_TARGET_ACK_DELAY),
	CM("rep.failoveracc", REP_FAILOVER_ACCEPTED),
	CM("rep.e2eflowctrl", REP_END_TO_END_FLOW_CONTROL),
	CM("rep.rnrretrcount", REP_RNR_RETRY_COUNT),
	CM("rep.srq", REP_SRQ),
	CM("rep.reserved", REP_RSVD27),
	CM("rep.localcaguid", REP_LOCAL_CA_GUID),
	{"infiniband.cm.rep.private", COL_BYTES, DROCE_CM_REP_PRIVATE_DATA},
	/* RTU */
	CM("rtu.localcommid", RTU_LOCAL_COMM_ID),
	CM("rtu.remotecommid", RTU_REMOTE_COMM_ID),
	{"infiniband.cm.rtu.private", COL_BYTES, DROCE_CM_RTU_PRIVATE_DATA},
	/* REJ */
	CM("rej.localcommid", REJ_LOCAL_COMM_ID),
	CM("rej.remotecommid", REJ_REMOTE_COMM_ID),
	CM("rej.msgrej", REJ_MESSAGE_REJECTED),
	CM("rej.rejinfolen", REJ_REJECTED_INFO_LENGTH),
	CM("rej.reason", REJ_REASON),
	{"infiniband.cm.rej.ari", COL_BYTES, DROCE_CM_REJ_ARI},
	{"infiniband.cm.rej.private", COL_BYTES, DROCE_CM_REJ_PRIVATE_DATA},
	/* DREQ (tshark files its remote QPN under req.) */
	CM("dreq.localcommid", DREQ_LOCAL_COMM_ID),
	CM("dreq.remotecommid", DREQ_REMOTE_COMM_ID),
	CM("req.remoteqpneecn", DREQ_REMOTE_QPN_EECN),
	{"infiniband.cm.dreq.private", COL_BYTES, DROCE_CM_DREQ_PRIVATE_DATA},
	/* DREP */
	CM("drsp.localcommid", DREP_LOCAL_COMM_ID),
	CM("drsp.remotecommid", DREP_REMOTE_COMM_ID),
	{"infiniband.cm.drsp.private", COL_BYTES, DROCE_CM_DREP_PRIVATE_DATA},
};

/* tshark columns deliberately not compared (see above), and the GSI header (test_wire_captures) */
static const char *const not_compared[] = {
	"frame.number",
	"infiniband.bth.destqp",
	"infiniband.deth.q_key",
	"infiniband.cm.req.prim_flowlabel",
	"infiniband.cm.req.prim_pktrate",
	"infiniband.cm.req.alt_flowlabel",
	"infiniband.cm.req.alt_pktrate",
};

/* A column tshark filled that is neither compared nor listed above would go unchecked. */
static void expect_column_known(const char *col)
{
	size_t i;

	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		if (strcmp(cols[i].tshark, col) == 0)
			return;
	for (i = 0; i < sizeof(not_compared) / sizeof(not_compared[0]); i++)
		if (strcmp(not_compared[i], col) == 0)
			return;
	cr_expect_fail("tshark column %s is not compared", col);
}

static uint64_t hdr_value(const struct droce_mad_fields *h, int off)
{
	switch (off) {
	case offsetof(struct droce_mad_fields, base_version):
		return h->base_version;
	case offsetof(struct droce_mad_fields, mgmt_class):
		return h->mgmt_class;
	case offsetof(struct droce_mad_fields, class_version):
		return h->class_version;
	case offsetof(struct droce_mad_fields, method):
		return h->method;
	case offsetof(struct droce_mad_fields, status):
		return h->status;
	case offsetof(struct droce_mad_fields, class_specific):
		return h->class_specific;
	case offsetof(struct droce_mad_fields, tid):
		return h->tid;
	case offsetof(struct droce_mad_fields, attr_id):
		return h->attr_id;
	default:
		return h->attr_mod;
	}
}

static void hex(const uint8_t *p, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = '\0';
}

/* A GID as tshark prints its IPv4 column: the address it maps (::ffff:a.b.c.d). */
static void gid_ipv4(const uint8_t *gid, char *out)
{
	inet_ntop(AF_INET, gid + 12, out, INET_ADDRSTRLEN);
}

struct cm_check {
	const char *capture;
	uint64_t frame;
	int checked; /* columns compared */
};

static void expect_num(struct cm_check *c, const char *col, uint64_t droce, const char *ts)
{
	cr_expect_eq(droce, strtoull(ts, NULL, 0),
		     "%s frame %" PRIu64 ": %s is 0x%" PRIx64 ", tshark says %s", c->capture,
		     c->frame, col, droce, ts);
	c->checked++;
}

static void expect_str(struct cm_check *c, const char *col, const char *droce, const char *ts)
{
	cr_expect_str_eq(droce, ts, "%s frame %" PRIu64 ": %s is %s, tshark says %s", c->capture,
			 c->frame, col, droce, ts);
	c->checked++;
}

static void check_cma_col(struct cm_check *c, const struct col_map *m, const uint8_t *mad,
			  const char *ts)
{
	const uint8_t *priv = droce_cm_bytes(mad, DROCE_CM_REQ_PRIVATE_DATA);
	struct droce_cma_fields f;
	char buf[512];

	cr_assert_eq(droce_cma_hdr_decode(priv, 92, &f), 0, "frame %" PRIu64 ": rdma_cm header",
		     c->frame);
	switch (m->id) {
	case CMA_MAJV:
		expect_num(c, m->tshark, f.version >> 4, ts);
		break;
	case CMA_MINV:
		expect_num(c, m->tshark, f.version & 0x0f, ts);
		break;
	case CMA_IPV:
		expect_num(c, m->tshark, f.ip_version, ts);
		break;
	case CMA_RESV:
		expect_num(c, m->tshark, f.resv, ts);
		break;
	case CMA_SPORT:
		expect_num(c, m->tshark, f.port, ts);
		break;
	case CMA_SIP4:
	case CMA_DIP4:
		cr_expect_eq(f.ip_version, 4, "frame %" PRIu64 ": IPv4 address in IPv%u header",
			     c->frame, f.ip_version);
		inet_ntop(AF_INET, m->id == CMA_SIP4 ? f.src : f.dst, buf, sizeof(buf));
		expect_str(c, m->tshark, buf, ts);
		break;
	case CMA_SIP6:
	case CMA_DIP6:
		cr_expect_eq(f.ip_version, 6, "frame %" PRIu64 ": IPv6 address in IPv%u header",
			     c->frame, f.ip_version);
		inet_ntop(AF_INET6, m->id == CMA_SIP6 ? f.src : f.dst, buf, sizeof(buf));
		expect_str(c, m->tshark, buf, ts);
		break;
	default:
		hex(priv + DROCE_CMA_HDR_LEN, 92 - DROCE_CMA_HDR_LEN, buf);
		expect_str(c, m->tshark, buf, ts);
		break;
	}
}

/* Every column tshark filled for this frame, against droce's decoding of the same MAD. */
static void check_row(struct cm_check *c, const struct golden *g, int row, const uint8_t *mad)
{
	struct droce_cm_decoded d;
	char buf[512];
	size_t i;

	cr_assert_eq(droce_cm_decode(mad, DROCE_MAD_LEN, &d), DROCE_MAD_OK);
	for (i = 0; i < (size_t)g->ncols; i++)
		if (g->rows[row][i] != NULL && g->rows[row][i][0] != '\0')
			expect_column_known(g->cols[i]);
	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		const struct col_map *m = &cols[i];
		const char *ts = golden_field(g, row, m->tshark);
		const struct droce_cm_field_info *fi = &droce_cm_field_table[m->id];

		if (ts[0] == '\0')
			continue;
		/* tshark shows a field only for its own message */
		if (m->kind != COL_HDR && m->kind != COL_CMA)
			cr_expect_eq(fi->msg, d.msg, "frame %" PRIu64 ": tshark has %s in a %s",
				     c->frame, m->tshark, droce_cm_msg_table[d.msg].name);
		switch (m->kind) {
		case COL_HDR:
			expect_num(c, m->tshark, hdr_value(&d.hdr, m->id), ts);
			break;
		case COL_CM:
			expect_num(c, m->tshark, d.value[m->id], ts);
			break;
		case COL_GID_IPV4:
			gid_ipv4(d.bytes + fi->offset, buf);
			expect_str(c, m->tshark, buf, ts);
			break;
		case COL_GID_IPV6:
			inet_ntop(AF_INET6, d.bytes + fi->offset, buf, sizeof(buf));
			expect_str(c, m->tshark, buf, ts);
			break;
		case COL_BYTES:
			hex(d.bytes + fi->offset, fi->size, buf);
			expect_str(c, m->tshark, buf, ts);
			break;
		case COL_CMA:
			check_cma_col(c, m, mad, ts);
			break;
		}
	}
}

/* ---- walking the captures */

struct run {
	const char *capture;
	struct golden golden;
	int gsi;     /* GSI packets seen */
	int matched; /* of those, compared with tshark */
	int rebuilt; /* rebuilt byte for byte */
	int columns; /* tshark columns compared */
	enum droce_cm_msg order[MAX_ROWS];
	uint32_t req_flow_label;
	uint8_t req_src_ip[4];
	uint16_t client_sport; /* UDP source port of the requester's first RC packet */
};

static bool gsi_packet(const uint8_t *frame, uint32_t len, struct droce_pkt *pkt)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;

	return droce_parse(frame, len, &cfg, pkt) == DROCE_PARSE_OK && pkt->qpn == DROCE_GSI_QPN;
}

static void check_frame(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct run *r = arg;
	struct droce_pkt pkt;
	enum droce_mad_status st;
	enum droce_cm_msg msg;
	const uint8_t *mad;
	int row;

	if (!gsi_packet(frame, len, &pkt)) {
		struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
		const struct droce_ipv4_hdr *ip;

		if (r->client_sport != 0 || r->gsi == 0 ||
		    droce_parse(frame, len, &cfg, &pkt) != DROCE_PARSE_OK)
			return;
		ip = (const void *)(frame + pkt.l3_off);
		if (!(pkt.flags & DROCE_PKT_IPV6) && memcmp(ip->src, r->req_src_ip, 4) == 0)
			r->client_sport = droce_udp_sport((const void *)(frame + pkt.bth_off - 8));
		return;
	}
	st = droce_gsi_parse(&pkt, frame, &msg);
	cr_assert_eq(st, DROCE_MAD_OK, "%s frame %" PRIu64 ": %s", r->capture, index,
		     droce_mad_status_name[st]);
	cr_assert_lt(r->gsi, MAX_ROWS);
	r->order[r->gsi++] = msg;
	mad = frame + pkt.payload_off;
	if (msg == DROCE_CM_REQ) {
		const struct droce_ipv4_hdr *ip = (const void *)(frame + pkt.l3_off);

		r->req_flow_label = (uint32_t)droce_cm_get(mad, DROCE_CM_REQ_PRIMARY_FLOW_LABEL);
		if (!(pkt.flags & DROCE_PKT_IPV6))
			memcpy(r->req_src_ip, ip->src, 4);
	}
	for (row = 0; row < r->golden.nrows; row++)
		if (r->golden.frame[row] == index)
			break;
	cr_assert_lt(row, r->golden.nrows, "%s frame %" PRIu64 " is no MAD to tshark", r->capture,
		     index);
	{
		struct cm_check c = {.capture = r->capture, .frame = index};

		check_row(&c, &r->golden, row, mad);
		r->columns += c.checked;
	}
	r->matched++;
}

Test(mad_captures, every_mad_parses_and_matches_tshark)
{
	struct run r = {.capture = RPING};
	static const enum droce_cm_msg expected[] = {DROCE_CM_REQ, DROCE_CM_REP, DROCE_CM_RTU,
						     DROCE_CM_DREQ, DROCE_CM_DREP};
	size_t i;

	golden_load(&r.golden, "linux-rxe-rping_cm.cm.tsv");
	droce_test_pcap_foreach(RPING, check_frame, &r);
	cr_assert_eq(r.gsi, 5, "rping: %d GSI packets, expected REQ REP RTU DREQ DREP", r.gsi);
	for (i = 0; i < 5; i++)
		cr_expect_eq(r.order[i], expected[i], "MAD %zu is %s, expected %s", i,
			     droce_cm_msg_table[r.order[i]].name,
			     droce_cm_msg_table[expected[i]].name);
	cr_expect_eq(r.matched, r.golden.nrows, "droce decoded %d MADs, tshark %d", r.matched,
		     r.golden.nrows);
	/* tshark's columns filled, less the flow labels and rates: REQ 57 (9 of them the MAD
	 * header), REP 25, RTU 12, DREQ 13, DREP 12 */
	cr_expect_eq(r.columns, 57 + 25 + 12 + 13 + 12, "%d columns compared", r.columns);
}

/*
 * tshark cannot be trusted with REQ's flow label (see cols[]); Linux derives the UDP source
 * port of the connection from it (annex A17), so the requester's RC packets tell it.
 */
Test(mad_captures, req_flow_label_gives_the_udp_source_port)
{
	struct run r = {.capture = RPING};

	golden_load(&r.golden, "linux-rxe-rping_cm.cm.tsv");
	droce_test_pcap_foreach(RPING, check_frame, &r);
	cr_assert_neq(r.client_sport, 0, "no RC packet from the requester after the REQ");
	cr_expect_eq(droce_udp_sport_for_qps(r.req_flow_label, 0, 0), r.client_sport,
		     "flow label 0x%05x gives source port %u, the requester used %u",
		     r.req_flow_label, droce_udp_sport_for_qps(r.req_flow_label, 0, 0),
		     r.client_sport);
}

static void check_rebuild(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct run *r = arg;
	struct droce_hdr_fields f, gsi;
	struct droce_cm_decoded d;
	struct droce_addr a;
	struct droce_pkt pkt;
	uint8_t mad[DROCE_MAD_LEN], out[1024];
	uint16_t ip_id;
	ssize_t n;

	if (!gsi_packet(frame, len, &pkt))
		return;
	cr_assert_eq(droce_cm_decode(frame + pkt.payload_off, pkt.payload_len, &d), DROCE_MAD_OK);
	n = droce_cm_encode(mad, sizeof(mad), &d);
	cr_assert_eq(n, DROCE_MAD_LEN, "frame %" PRIu64 ": encode returned %zd", index, n);
	cr_expect_arr_eq(mad, frame + pkt.payload_off, DROCE_MAD_LEN,
			 "frame %" PRIu64 " (%s): MAD differs once rebuilt", index,
			 droce_cm_msg_table[d.msg].name);

	/* the GSI header droce writes is the one Linux wrote, but for Linux's AckReq bit */
	droce_pkt_fields(&pkt, frame, &f);
	droce_gsi_fields(&gsi, f.pkey, f.psn);
	gsi.ackreq = f.ackreq;
	cr_expect_eq(memcmp(&gsi, &f, sizeof(f)), 0, "frame %" PRIu64 ": GSI header fields differ",
		     index);
	droce_pkt_addr(&pkt, frame, &a, &ip_id);
	n = droce_build_frame(out, sizeof(out), &a, ip_id, &gsi, mad, sizeof(mad));
	cr_assert_eq(n, (ssize_t)len, "frame %" PRIu64 ": rebuilt %zd bytes of %u", index, n, len);
	cr_expect_arr_eq(out, frame, len, "frame %" PRIu64 " differs once rebuilt", index);
	r->rebuilt++;
}

Test(mad_captures, every_mad_rebuilt_byte_for_byte)
{
	struct run r = {.capture = RPING};

	droce_test_pcap_foreach(RPING, check_rebuild, &r);
	cr_expect_eq(r.rebuilt, 5, "%d of 5 MADs rebuilt", r.rebuilt);
}

/* No other capture holds a GSI packet: the walk above saw all there are. */
static void count_gsi(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct droce_pkt pkt;
	int *n = arg;

	(void)index;
	if (gsi_packet(frame, len, &pkt)) {
		cr_expect_eq(droce_gsi_parse(&pkt, frame, NULL), DROCE_MAD_OK);
		(*n)++;
	}
}

Test(mad_captures, only_the_rdma_cm_capture_holds_mads)
{
	const char *const *c;

	for (c = droce_test_captures; *c != NULL; c++) {
		int n = 0;

		droce_test_pcap_foreach(*c, count_gsi, &n);
		cr_expect_eq(n, strcmp(*c, RPING) == 0 ? 5 : 0, "%s: %d GSI packets", *c, n);
	}
}

/* The rping REQ's service ID is rdma_cm's TCP port space, rping's default port 7174. */
static void check_sid(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct droce_pkt pkt;
	enum droce_cm_msg msg;
	uint16_t ps, port;
	int *seen = arg;

	(void)index;
	if (!gsi_packet(frame, len, &pkt) || droce_gsi_parse(&pkt, frame, &msg) != DROCE_MAD_OK ||
	    msg != DROCE_CM_REQ)
		return;
	cr_assert_eq(
		droce_cma_service_id_parse(
			droce_cm_get(frame + pkt.payload_off, DROCE_CM_REQ_SERVICE_ID), &ps, &port),
		0);
	cr_expect_eq(ps, DROCE_CMA_PS_TCP, "port space 0x%04x", ps);
	cr_expect_eq(port, 7174, "port %u", port);
	(*seen)++;
}

Test(mad_captures, req_service_id_is_the_tcp_port_space)
{
	int seen = 0;

	droce_test_pcap_foreach(RPING, check_sid, &seen);
	cr_expect_eq(seen, 1);
}

/* ---- the fixture: one of each message, fields set, IPv6 */

Test(mad_captures, fixture_matches_tshark)
{
	struct run r = {.capture = FIXTURE};
	int i;

	golden_load(&r.golden, "cm-mads.cm.tsv");
	droce_test_pcap_foreach(FIXTURE, check_frame, &r);
	cr_assert_eq(r.gsi, 12, "%d GSI packets in the fixture", r.gsi);
	cr_expect_eq(r.matched, r.golden.nrows, "droce decoded %d MADs, tshark %d", r.matched,
		     r.golden.nrows);
	for (i = 0; i < DROCE_CM_MSG_COUNT; i++) {
		int j, n = 0;

		for (j = 0; j < r.gsi; j++)
			n += r.order[j] == (enum droce_cm_msg)i;
		cr_expect_geq(n, 1, "no %s in the fixture", droce_cm_msg_table[i].name);
	}
}

Test(mad_captures, fixture_rebuilt_byte_for_byte)
{
	struct run r = {.capture = FIXTURE};

	droce_test_pcap_foreach(FIXTURE, check_rebuild, &r);
	cr_expect_eq(r.rebuilt, 12, "%d of 12 MADs rebuilt", r.rebuilt);
}

/* The values tools/gen-cm-fixture.py wrote, by the spec's byte and bit positions. */
struct spec_value {
	uint64_t frame;
	char msg[16], field[64], value[512];
};

static int spec_load(struct spec_value *v, int cap)
{
	FILE *f = fopen(droce_test_data("cm-mads.expected.tsv"), "r");
	char line[1024];
	int n = 0;

	cr_assert_not_null(f, "missing cm-mads.expected.tsv (tools/gen-cm-fixture.py makes it)");
	cr_assert_not_null(fgets(line, sizeof(line), f), "empty cm-mads.expected.tsv");
	while (fgets(line, sizeof(line), f) != NULL) {
		cr_assert_lt(n, cap);
		cr_assert_eq(sscanf(line, "%" SCNu64 "\t%15s\t%63s\t%511s", &v[n].frame, v[n].msg,
				    v[n].field, v[n].value),
			     4, "bad line: %s", line);
		n++;
	}
	fclose(f);
	return n;
}

struct spec_run {
	struct spec_value v[256];
	int nv;
	int compared;
	int frames;
};

/* The field of message @p msg named @p name, or -1. */
static int field_by_name(enum droce_cm_msg msg, const char *name)
{
	const struct droce_cm_msg_info *mi = &droce_cm_msg_table[msg];
	unsigned int f;

	for (f = mi->first_field; f < (unsigned int)mi->first_field + mi->nfields; f++)
		if (strcmp(droce_cm_field_table[f].name, name) == 0)
			return (int)f;
	return -1;
}

static void check_spec(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct spec_run *s = arg;
	const struct droce_cm_msg_info *mi;
	const uint8_t *mad;
	struct droce_pkt pkt;
	enum droce_cm_msg msg;
	bool listed[DROCE_CM_FIELD_COUNT] = {false};
	unsigned int f;
	char buf[512];
	int i;

	if (!gsi_packet(frame, len, &pkt))
		return;
	cr_assert_eq(droce_gsi_parse(&pkt, frame, &msg), DROCE_MAD_OK);
	mad = frame + pkt.payload_off;
	mi = &droce_cm_msg_table[msg];
	s->frames++;
	for (i = 0; i < s->nv; i++) {
		const struct spec_value *v = &s->v[i];
		int fid;

		if (v->frame != index)
			continue;
		cr_expect_str_eq(v->msg, mi->name, "frame %" PRIu64 " is a %s to the generator",
				 index, v->msg);
		fid = field_by_name(msg, v->field);
		cr_assert_geq(fid, 0, "%s has no field %s", mi->name, v->field);
		listed[fid] = true;
		if (droce_cm_field_table[fid].bits != 0) {
			cr_expect_eq(droce_cm_get(mad, fid), strtoull(v->value, NULL, 0),
				     "frame %" PRIu64 " %s %s: 0x%" PRIx64 ", written %s", index,
				     mi->name, v->field, droce_cm_get(mad, fid), v->value);
		} else {
			hex(droce_cm_bytes(mad, fid), droce_cm_field_table[fid].size, buf);
			cr_expect_str_eq(buf, v->value, "frame %" PRIu64 " %s %s", index, mi->name,
					 v->field);
		}
		s->compared++;
	}
	/* every field the spec names was written by the generator; reserved ones are zero */
	for (f = mi->first_field; f < (unsigned int)mi->first_field + mi->nfields; f++) {
		const struct droce_cm_field_info *fi = &droce_cm_field_table[f];

		if (fi->reserved)
			cr_expect(fi->bits != 0
					  ? droce_cm_get(mad, f) == 0
					  : memcmp(droce_cm_bytes(mad, f), "\0\0\0\0", 4) == 0,
				  "frame %" PRIu64 " %s %s not zero", index, mi->name, fi->name);
		else
			cr_expect(listed[f], "frame %" PRIu64 ": the generator did not write %s %s",
				  index, mi->name, fi->name);
	}
}

Test(mad_captures, fixture_matches_the_spec_layout)
{
	static struct spec_run s;

	s.nv = spec_load(s.v, 256);
	droce_test_pcap_foreach(FIXTURE, check_spec, &s);
	cr_expect_eq(s.frames, 12, "%d MADs", s.frames);
	cr_expect_eq(s.compared, s.nv, "%d of %d written values compared", s.compared, s.nv);
}

/* droce's refusal of the fixture's LAP is the fixture's APR, byte for byte. */
struct lap_apr {
	uint8_t lap[DROCE_MAD_LEN], apr[DROCE_MAD_LEN];
	bool have_lap, have_apr;
};

static void take_lap_apr(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	struct lap_apr *la = arg;
	struct droce_pkt pkt;
	enum droce_cm_msg msg;

	(void)index;
	if (!gsi_packet(frame, len, &pkt) || droce_gsi_parse(&pkt, frame, &msg) != DROCE_MAD_OK)
		return;
	if (msg == DROCE_CM_LAP) {
		memcpy(la->lap, frame + pkt.payload_off, DROCE_MAD_LEN);
		la->have_lap = true;
	} else if (msg == DROCE_CM_APR) {
		memcpy(la->apr, frame + pkt.payload_off, DROCE_MAD_LEN);
		la->have_apr = true;
	}
}

Test(mad_captures, lap_refused_with_the_fixture_apr)
{
	struct lap_apr la = {0};
	uint8_t apr[DROCE_MAD_LEN];

	droce_test_pcap_foreach(FIXTURE, take_lap_apr, &la);
	cr_assert(la.have_lap && la.have_apr, "the fixture has no LAP or no APR");
	cr_assert_eq(droce_cm_apr_refuse(apr, sizeof(apr), la.lap, sizeof(la.lap)), 0);
	cr_expect_arr_eq(apr, la.apr, sizeof(apr), "droce's APR differs from the fixture's");
	cr_expect_eq(droce_mad_parse(apr, sizeof(apr), NULL), DROCE_MAD_OK);
}
