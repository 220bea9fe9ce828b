/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's GSI (QP1) on two ports joined back to back (droce0, droce1: ud_pair.h): MADs
 * sent with droce_engine_gsi_send() from one port arrive in droce_engine_gsi_recv()'s queue with
 * their port, GIDs, IP fields, P_Key and source QP, byte for byte, over IPv4 and IPv6; the frame
 * on the wire; the eventfd; a Get of a class nobody serves answered by the engine (seen by a UD
 * QP that sent it with the GSI's Q_Key) and the answer dropped by a port's own GSI; malformed
 * GSI packets (sent by that UD QP) counted and never queued; a full queue; a destination nobody
 * answers for; every refused argument.
 */
#include <errno.h>
#include <poll.h>
#include <pcap/pcap.h>
#include <sched.h>
#include <unistd.h>

#include <droce_counters.h>
#include <droce_engine.h>
#include <droce_verbs_export.h>
#include <droce_wire.h>
#include <droce_wire_mad.h>

#include "ud_pair.h"

#define GSI_QKEY  0x80010000u
#define CLASS_PMA 0x04 /* performance management: served by nobody in droce */
/* MADs the consumer's queue holds (a ring of 1024 slots), and a port's send queue (256) */
#define RX_CAP 1023
#define TX_CAP 255

static const uint8_t gid0_v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
static const uint8_t gid1_v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
static const uint8_t gid0_v6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t gid1_v6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
static const uint8_t gid_dead[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 9};

static void setup(void)
{
	ud_pair_open(",ip=fd00::1", ",ip=fd00::2");
}

/* a destination nobody answers for takes its 3 s of ARP requests; two lcores on a loaded
 * machine take longer */
TestSuite(engine_gsi, .init = setup, .timeout = 120);

/* Seconds since @p t0. */
static double since(const struct timespec *t0)
{
	return pair_elapsed(t0);
}

static uint64_t tid_of(const uint8_t *mad)
{
	struct droce_mad_fields h;

	droce_mad_hdr_get(mad, &h);
	return h.tid;
}

/* A REQ of transaction @p tid with a recognisable private data. */
static void req_mad(uint8_t mad[DROCE_MAD_LEN], uint64_t tid)
{
	uint8_t priv[92];

	for (unsigned int i = 0; i < sizeof(priv); i++)
		priv[i] = (uint8_t)(i * 7 + tid);
	cr_assert_eq(droce_cm_init(mad, DROCE_MAD_LEN, DROCE_CM_REQ, tid), 0);
	cr_assert_eq(droce_cm_set(mad, DROCE_CM_REQ_LOCAL_COMM_ID, 0x12345678), 0);
	cr_assert_eq(droce_cm_set(mad, DROCE_CM_REQ_LOCAL_QPN, 0xabcdef), 0);
	cr_assert_eq(droce_cm_set_private(mad, DROCE_CM_REQ, priv, sizeof(priv)), 0);
}

/* A MAD of class @p cls, method @p method, base version 1. */
static void other_mad(uint8_t mad[DROCE_MAD_LEN], uint8_t cls, uint8_t method, uint64_t tid)
{
	struct droce_mad_fields h = {.base_version = 1,
				     .mgmt_class = cls,
				     .class_version = 1,
				     .method = method,
				     .tid = tid,
				     .attr_id = 0x0012,
				     .attr_mod = 0x01020304};

	memset(mad, 0, DROCE_MAD_LEN);
	for (unsigned int i = DROCE_MAD_HDR_LEN; i < DROCE_MAD_LEN; i++)
		mad[i] = (uint8_t)i;
	droce_mad_hdr_set(mad, &h);
}

/* A send request from port @p port, @p sgid to @p dgid. */
static struct droce_engine_mad request(unsigned int port, const uint8_t *sgid, const uint8_t *dgid)
{
	struct droce_engine_mad m = {.port = port, .pkey = 0xffff, .remote_qpn = 1};

	memcpy(m.sgid, sgid, 16);
	memcpy(m.dgid, dgid, 16);
	req_mad(m.mad, 1);
	return m;
}

/* droce_engine_gsi_send(), again while the port's queue is full. */
static void send_mad(const struct droce_engine_mad *m)
{
	struct timespec t0;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((rc = droce_engine_gsi_send(m)) == -EAGAIN) {
		cr_assert_lt(since(&t0), PAIR_LIVENESS, "the port's GSI queue stays full");
		sched_yield();
	}
	cr_assert_eq(rc, 0, "gsi_send: %d", rc);
}

/* The next MAD of the queue (fails after PAIR_LIVENESS). */
static struct droce_engine_mad recv_mad(void)
{
	struct droce_engine_mad m;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (droce_engine_gsi_recv(&m, 1) != 1) {
		cr_assert_lt(since(&t0), PAIR_LIVENESS, "no MAD received");
		usleep(100);
	}
	return m;
}

/* Wait until port counter @p name of @p ctx reaches @p want (fails after PAIR_LIVENESS). */
static void wait_counter(struct ibv_context *ctx, const char *name, uint64_t want)
{
	struct timespec t0;
	uint64_t v;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((v = port_counter(ctx, name)) < want) {
		cr_assert_lt(since(&t0), PAIR_LIVENESS, "%s stays at %llu, not %llu", name,
			     (unsigned long long)v, (unsigned long long)want);
		/* each read parks the lcores for a pass: not too often */
		usleep(10000);
	}
	cr_assert_eq(v, want, "%s went past %llu", name, (unsigned long long)want);
}

static void expect_queue_empty(const char *why)
{
	struct droce_engine_mad m;

	cr_expect_eq(droce_engine_gsi_recv(&m, 1), 0, "nothing queued: %s", why);
}

/* ------------------------------------------------------------ CM MADs */

static void one_mad(const uint8_t *sgid, const uint8_t *dgid, uint8_t tclass, uint8_t hop_limit,
		    uint32_t flow_label, uint8_t want_hop_limit, uint32_t want_flow_label)
{
	struct droce_engine_mad m = request(0, sgid, dgid), r;

	m.traffic_class = tclass;
	m.hop_limit = hop_limit;
	m.flow_label = flow_label;
	expect_queue_empty("before");
	send_mad(&m);
	r = recv_mad();
	cr_expect_eq(r.port, 1, "received by droce1 (index 1), not %u", r.port);
	cr_expect_arr_eq(r.sgid, dgid, 16, "sgid: the local GID, the packet's destination");
	cr_expect_arr_eq(r.dgid, sgid, 16, "dgid: the peer's, the packet's source");
	cr_expect_eq(r.pkey, 0xffff, "the packet's P_Key");
	cr_expect_eq(r.remote_qpn, 1, "SrcQP 1");
	cr_expect_eq(r.traffic_class, tclass, "traffic class");
	cr_expect_eq(r.hop_limit, want_hop_limit, "hop limit");
	cr_expect_eq(r.flow_label, want_flow_label, "flow label");
	cr_expect_arr_eq(r.mad, m.mad, DROCE_MAD_LEN, "the MAD byte for byte");
	expect_queue_empty("after");
	cr_expect_eq(port_counter(e0.ctx, "gsi_tx"), 1, "droce0 sent one");
	cr_expect_eq(port_counter(e1.ctx, "gsi_rx"), 1, "droce1 queued one");
	cr_expect_eq(port_counter(e0.ctx, "gsi_rx"), 0, "droce0 queued none");
}

Test(engine_gsi, cm_mad_over_ipv4)
{
	one_mad(gid0_v4, gid1_v4, 0x28, 0, 0, 64, 0);
}

Test(engine_gsi, cm_mad_over_ipv6)
{
	one_mad(gid0_v6, gid1_v6, 0x20, 7, 0x12345, 7, 0x12345);
}

Test(engine_gsi, cm_mad_to_the_port_itself)
{
	struct droce_engine_mad m = request(1, gid1_v4, gid1_v4), r;

	send_mad(&m);
	r = recv_mad();
	cr_expect_eq(r.port, 1, "droce1 to droce1");
	cr_expect_arr_eq(r.mad, m.mad, DROCE_MAD_LEN);
	cr_expect_eq(port_counter(e1.ctx, "loopback_pkts"), 1, "round the port's loopback");
}

Test(engine_gsi, cm_class_port_info_is_queued)
{
	struct droce_engine_mad m = request(0, gid0_v4, gid1_v4), r;
	struct droce_mad_fields h;

	droce_mad_hdr_get(m.mad, &h);
	h.method = DROCE_MAD_METHOD_GET;
	h.attr_id = DROCE_CM_ATTR_CLASS_PORT_INFO;
	droce_mad_hdr_set(m.mad, &h);
	send_mad(&m);
	r = recv_mad();
	cr_expect_arr_eq(r.mad, m.mad, DROCE_MAD_LEN, "the CM's to answer, not the engine's");
	cr_expect_eq(port_counter(e1.ctx, "gsi_unsupported_class"), 0);
}

/* The frame droce1 receives: GSI framing, AckReq, a good ICRC. */
Test(engine_gsi, frame_on_the_wire)
{
	char path[] = "/tmp/droce-gsi-XXXXXX";
	char err[PCAP_ERRBUF_SIZE];
	struct droce_engine_mad m = request(0, gid0_v4, gid1_v4);
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct pcap_pkthdr *h;
	const uint8_t *d;
	unsigned int gsi = 0;
	pcap_t *p;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(droce_engine_capture("droce1", path), 0);
	send_mad(&m);
	(void)recv_mad();
	cr_assert_eq(droce_engine_capture("droce1", NULL), 0);
	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	cr_assert_not_null(p, "%s", err);
	while (pcap_next_ex(p, &h, &d) == 1) {
		struct droce_hdr_fields f;
		struct droce_addr a;
		struct droce_pkt pkt;
		uint16_t ip_id;

		if (droce_parse(d, h->caplen, &cfg, &pkt) != DROCE_PARSE_OK || pkt.qpn != 1)
			continue;
		gsi++;
		droce_pkt_fields(&pkt, d, &f);
		droce_pkt_addr(&pkt, d, &a, &ip_id);
		cr_expect_eq(droce_gsi_parse(&pkt, d, NULL), DROCE_MAD_OK, "a GSI CM MAD");
		cr_expect_eq(f.opcode, DROCE_OP_UD_SEND_ONLY, "UD SEND Only");
		cr_expect(f.ackreq, "AckReq set, as Linux sets it");
		cr_expect_eq(f.pkey, 0xffff, "P_Key");
		cr_expect_eq(f.deth.qkey, GSI_QKEY, "the GSI's Q_Key");
		cr_expect_eq(f.deth.sqpn, 1, "SrcQP 1");
		cr_expect_eq(a.ttl, 64, "hop limit 0 is 64");
		cr_expect_arr_eq(a.src_ip, gid0_v4 + 12, 4, "from 10.0.0.1");
		cr_expect_arr_eq(a.dst_ip, gid1_v4 + 12, 4, "to 10.0.0.2");
		cr_expect_eq(a.udp_dport, DROCE_ROCEV2_UDP_PORT);
		cr_expect_eq(a.udp_sport, droce_udp_sport_for_qps(0, 1, 1),
			     "as UD frames choose it");
		cr_expect_eq(pkt.payload_len, DROCE_MAD_LEN, "one MAD");
		cr_expect_arr_eq(d + pkt.payload_off, m.mad, DROCE_MAD_LEN);
	}
	pcap_close(p);
	unlink(path);
	cr_expect_eq(gsi, 1, "one GSI frame received, ICRC good");
}

/* ------------------------------------------------------------ the eventfd */

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

Test(engine_gsi, eventfd_readable_once_mads_wait)
{
	struct droce_engine_mad m = request(0, gid0_v4, gid1_v4), got[4];
	int fd = droce_engine_gsi_fd();
	uint64_t v = 0;

	cr_assert_geq(fd, 0);
	cr_expect(!readable(fd, 0), "not readable before any MAD");
	for (int i = 0; i < 3; i++) {
		req_mad(m.mad, 100 + (uint64_t)i);
		send_mad(&m);
	}
	wait_counter(e1.ctx, "gsi_rx", 3);
	cr_expect(readable(fd, 1000), "readable once MADs wait");
	cr_assert_eq(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	cr_expect_eq(v, 1, "one write for three MADs: the queue was empty once");
	cr_expect(!readable(fd, 0), "cleared by the read");
	cr_expect_eq(droce_engine_gsi_recv(got, 4), 3, "three taken");
	for (int i = 0; i < 3; i++)
		cr_expect_eq(tid_of(got[i].mad), 100u + (unsigned int)i, "in order");
	/* found empty: the next MAD writes again */
	send_mad(&m);
	cr_expect(readable(fd, PAIR_LIVENESS * 1000), "readable again for the next MAD");
	cr_assert_eq(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	cr_expect_eq(droce_engine_gsi_recv(got, 4), 1);
	cr_expect(!readable(fd, 100), "nothing more");
}

/* ------------------------------------------------------------ classes nobody serves */

/* A UD QP on droce0 with the GSI's Q_Key (a controlled one: the QP made privileged). */
static struct ibv_qp *gsi_qkey_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e0.cq,
		.recv_cq = e0.cq,
		.cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = GSI_QKEY};
	struct ibv_qp *qp = ibv_create_qp(e0.pd, &ia);

	cr_assert_not_null(qp);
	droce_export_qp_privileged(qp, true);
	cr_assert_eq(
		ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
		0);
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	return qp;
}

/* @p len bytes of e0.buf (the MAD at its start) from @p qp to droce1's QP1, with @p qkey. */
static void ud_to_qp1(struct ibv_qp *qp, uint32_t len, uint32_t qkey, bool imm)
{
	union ibv_gid dgid;
	struct ibv_ah *ah;
	struct ibv_sge ss = {.addr = (uintptr_t)e0.buf, .length = len, .lkey = e0.mr->lkey};
	struct ibv_send_wr swr = {.wr_id = 7,
				  .sg_list = &ss,
				  .num_sge = 1,
				  .opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct ibv_wc wc;

	memcpy(dgid.raw, gid1_v4, 16);
	ah = ah_to(&dgid, 1);
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = 1;
	swr.wr.ud.remote_qkey = qkey;
	cr_assert_eq(ibv_post_send(qp, &swr, &bad), 0);
	wc = wait_wc(e0.cq);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "sent");
	cr_assert_eq(wc.wr_id, 7);
	ibv_destroy_ah(ah);
}

Test(engine_gsi, get_of_another_class_answered_to_the_requester)
{
	struct ibv_qp *qp = gsi_qkey_qp();
	struct ibv_sge rs = {.addr = (uintptr_t)e0.buf + 1024, .length = 1024, .lkey = e0.mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 9, .sg_list = &rs, .num_sge = 1}, *rbad;
	uint8_t sent[DROCE_MAD_LEN];
	const uint8_t *got = e0.buf + 1024 + 40;
	struct droce_mad_fields h, want;
	struct ibv_wc wc;

	cr_assert_eq(ibv_post_recv(qp, &rwr, &rbad), 0);
	other_mad(sent, CLASS_PMA, DROCE_MAD_METHOD_GET, 0x1122334455667788ull);
	memcpy(e0.buf, sent, sizeof(sent));
	ud_to_qp1(qp, DROCE_MAD_LEN, GSI_QKEY, false);
	wc = wait_wc(e0.cq);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 9, "the answer reached the requesting QP");
	cr_expect_eq(wc.byte_len, 40 + DROCE_MAD_LEN, "GRH and one MAD");
	cr_expect_eq(wc.src_qp, 1, "from QP1");
	droce_mad_hdr_get(got, &h);
	droce_mad_hdr_get(sent, &want);
	cr_expect_eq(h.method, DROCE_MAD_METHOD_GET_RESP, "GetResp");
	cr_expect_eq(h.status, 0x0004, "status: bad version/class (13.4.7)");
	cr_expect_eq(h.tid, want.tid, "the request's transaction ID");
	cr_expect_eq(h.mgmt_class, CLASS_PMA);
	cr_expect_eq(h.attr_id, want.attr_id);
	cr_expect_eq(h.attr_mod, want.attr_mod);
	cr_expect_arr_eq(got + DROCE_MAD_HDR_LEN, sent + DROCE_MAD_HDR_LEN, DROCE_MAD_DATA_LEN,
			 "the data as it came");
	cr_expect_eq(port_counter(e1.ctx, "gsi_unsupported_class"), 1, "answered");
	expect_queue_empty("not the CM's");
}

Test(engine_gsi, answer_to_a_port_gsi_is_dropped_there)
{
	struct droce_engine_mad m = request(0, gid0_v4, gid1_v4);

	other_mad(m.mad, CLASS_PMA, DROCE_MAD_METHOD_SET, 5);
	send_mad(&m);
	wait_counter(e1.ctx, "gsi_unsupported_class", 1);
	/* droce0's QP1 receives the GetResp: a response of a class nobody there serves */
	wait_counter(e0.ctx, "gsi_rx_unsupported", 1);
	expect_queue_empty("neither the request nor its answer");
}

Test(engine_gsi, sends_and_sm_classes_are_not_answered)
{
	struct droce_engine_mad m = request(0, gid0_v4, gid1_v4);

	other_mad(m.mad, CLASS_PMA, DROCE_MAD_METHOD_SEND, 1);
	send_mad(&m);
	other_mad(m.mad, CLASS_PMA, DROCE_MAD_METHOD_GET_RESP, 2);
	send_mad(&m);
	other_mad(m.mad, 0x01, DROCE_MAD_METHOD_GET, 3); /* the SM's class: QP0's */
	send_mad(&m);
	wait_counter(e1.ctx, "gsi_rx_unsupported", 3);
	cr_expect_eq(port_counter(e1.ctx, "gsi_unsupported_class"), 0, "none answered");
	cr_expect_eq(port_counter(e0.ctx, "gsi_rx_unsupported"), 0, "nothing came back");
	expect_queue_empty("none is the CM's");
}

/* ------------------------------------------------------------ malformed */

/* A packet to droce1's QP1 from a UD QP: counter @p name moves by one, nothing is queued. */
static void malformed(struct ibv_qp *qp, const uint8_t *mad, uint32_t len, uint32_t qkey, bool imm,
		      const char *name)
{
	uint64_t before = port_counter(e1.ctx, name);

	memcpy(e0.buf, mad, DROCE_MAD_LEN);
	ud_to_qp1(qp, len, qkey, imm);
	wait_counter(e1.ctx, name, before + 1);
	expect_queue_empty(name);
}

Test(engine_gsi, malformed_counted_never_queued)
{
	struct ibv_qp *qp = gsi_qkey_qp();
	uint8_t mad[DROCE_MAD_LEN], bad[DROCE_MAD_LEN];

	req_mad(mad, 1);
	malformed(qp, mad, DROCE_MAD_LEN, 0x1234, false, "gsi_bad_qkey");
	malformed(qp, mad, 100, GSI_QKEY, false, "mad_trunc");
	malformed(qp, mad, DROCE_MAD_LEN - 4, GSI_QKEY, false, "mad_trunc");
	/* e0.buf beyond the MAD is zero: 300 bytes */
	malformed(qp, mad, 300, GSI_QKEY, false, "mad_too_long");
	malformed(qp, mad, DROCE_MAD_LEN, GSI_QKEY, true, "not_gsi");
	memcpy(bad, mad, sizeof(bad));
	bad[0] = 2;
	malformed(qp, bad, DROCE_MAD_LEN, GSI_QKEY, false, "mad_bad_base_version");
	memcpy(bad, mad, sizeof(bad));
	bad[17] = 0x30; /* attribute 0x0030: no CM message */
	malformed(qp, bad, DROCE_MAD_LEN, GSI_QKEY, false, "mad_bad_attr");
	memcpy(bad, mad, sizeof(bad));
	bad[3] = DROCE_MAD_METHOD_GET; /* a REQ with Get */
	malformed(qp, bad, DROCE_MAD_LEN, GSI_QKEY, false, "mad_bad_method");
	cr_assert_eq(droce_cm_init(bad, sizeof(bad), DROCE_CM_REJ, 3), 0);
	cr_assert_eq(droce_cm_set(bad, DROCE_CM_REJ_REJECTED_INFO_LENGTH, 73), 0);
	malformed(qp, bad, DROCE_MAD_LEN, GSI_QKEY, false, "mad_bad_info_len");
	cr_expect_eq(port_counter(e1.ctx, "gsi_rx"), 0, "none queued");
	/* and the well-formed one from the same QP is the CM's */
	memcpy(e0.buf, mad, DROCE_MAD_LEN);
	ud_to_qp1(qp, DROCE_MAD_LEN, GSI_QKEY, false);
	cr_expect_arr_eq(recv_mad().mad, mad, DROCE_MAD_LEN, "a good one goes through");
}

Test(engine_gsi, every_mad_status_of_a_malformed_packet_is_a_counter)
{
	for (int st = DROCE_MAD_OK + 1; st < DROCE_MAD_STATUS_COUNT; st++) {
		int id = droce_counter_find(droce_mad_status_name[st]);

		/* not malformed: another class, or class version, and the CM's ClassPortInfo */
		if (st == DROCE_MAD_NOT_CM || st == DROCE_MAD_CLASS_PORT_INFO ||
		    st == DROCE_MAD_BAD_CLASS_VERSION) {
			cr_expect_eq(id, -ENOENT, "%s is no counter", droce_mad_status_name[st]);
			continue;
		}
		cr_expect_geq(id, 0, "%s is a counter", droce_mad_status_name[st]);
		if (id >= 0)
			cr_expect_eq(droce_counter_desc((unsigned int)id)->scope,
				     DROCE_COUNTER_PORT, "%s is the port's own",
				     droce_mad_status_name[st]);
	}
}

/* ------------------------------------------------------------ limits */

Test(engine_gsi, full_queue_drops_counted)
{
	enum { SENT = RX_CAP + 77 };
	static struct droce_engine_mad got[RX_CAP + 1];
	struct droce_engine_mad m = request(0, gid0_v4, gid1_v4);
	int n;

	for (unsigned int i = 0; i < SENT; i++) {
		req_mad(m.mad, i);
		send_mad(&m);
	}
	wait_counter(e0.ctx, "gsi_tx", SENT);
	wait_counter(e1.ctx, "gsi_rx", RX_CAP);
	wait_counter(e1.ctx, "gsi_rx_dropped", SENT - RX_CAP);
	n = droce_engine_gsi_recv(got, RX_CAP + 1);
	cr_assert_eq(n, RX_CAP, "the queue held %d", n);
	for (int i = 0; i < n; i++)
		cr_expect_eq(tid_of(got[i].mad), (uint64_t)i, "MAD %d in order", i);
	expect_queue_empty("drained");
}

Test(engine_gsi, destination_nobody_answers_for)
{
	struct droce_engine_mad m = request(0, gid0_v4, gid_dead);
	unsigned int accepted = 0;
	int rc;

	/* 64 wait in the port's queue for a MAC, the next stays first in the GSI's: it fills */
	while ((rc = droce_engine_gsi_send(&m)) == 0)
		cr_assert_lt(++accepted, 100000, "the port's GSI queue never fills");
	cr_expect_eq(rc, -EAGAIN, "a full queue: try again");
	wait_counter(e0.ctx, "gsi_tx", 64);
	while (droce_engine_gsi_send(&m) == 0)
		cr_assert_lt(++accepted, 100000, "the port's GSI queue never fills");
	cr_expect_eq(accepted, 64 + TX_CAP, "the port's wait queue and the GSI's: %u", accepted);
	/* nobody answers the ARP requests (1 s apart, 3 of them): every one dropped, counted */
	wait_counter(e0.ctx, "gsi_tx_unresolved_dropped", accepted);
	cr_expect_eq(port_counter(e0.ctx, "gsi_tx"), 64, "those that waited for the MAC");
	cr_expect_eq(port_counter(e0.ctx, "neigh_queue_dropped"), 64, "the port's count too");
	cr_expect_eq(droce_engine_gsi_send(&m), 0, "room again");
}

/* ------------------------------------------------------------ arguments */

Test(engine_gsi, bad_arguments)
{
	struct droce_engine_mad m = request(0, gid0_v4, gid1_v4), bad;
	uint8_t gids[4][16];

	cr_expect_eq(droce_engine_gsi_send(NULL), -EINVAL);
	bad = m;
	bad.port = 2;
	cr_expect_eq(droce_engine_gsi_send(&bad), -ENOENT, "no port 2");
	bad = m;
	memcpy(bad.sgid, gid1_v4, 16);
	cr_expect_eq(droce_engine_gsi_send(&bad), -EADDRNOTAVAIL, "droce1's GID from droce0");
	bad = m;
	bad.mad[0] = 2;
	cr_expect_eq(droce_engine_gsi_send(&bad), -EINVAL, "base version 2");
	bad = m;
	bad.remote_qpn = 1u << 24;
	cr_expect_eq(droce_engine_gsi_send(&bad), -EINVAL, "a QPN of 25 bits");
	bad = m;
	bad.flow_label = 1u << 20;
	cr_expect_eq(droce_engine_gsi_send(&bad), -EINVAL, "a flow label of 21 bits");
	bad = m;
	memcpy(bad.dgid, gid1_v6, 16);
	cr_expect_eq(droce_engine_gsi_send(&bad), -EINVAL, "IPv4 to IPv6");
	cr_expect_eq(droce_engine_gsi_recv(NULL, 1), -EINVAL);
	cr_expect_eq(droce_engine_gsi_recv(NULL, 0), 0, "nothing asked, nothing taken");
	cr_expect_eq(droce_engine_port_index(NULL), -EINVAL);
	cr_expect_eq(droce_engine_port_index("droce9"), -ENOENT);
	cr_expect_eq(droce_engine_port_index("droce0"), 0);
	cr_expect_eq(droce_engine_port_index("droce1"), 1);
	cr_expect_eq(droce_engine_port_gids(2, gids, 4), -ENOENT);
	cr_expect_eq(droce_engine_port_gids(0, NULL, 1), -EINVAL);
	cr_expect_eq(droce_engine_port_gids(0, NULL, 0), 3, "link-local, IPv4, IPv6");
	cr_assert_eq(droce_engine_port_gids(1, gids, 4), 3);
	cr_expect_eq(gids[0][0], 0xfe, "link-local first");
	cr_expect_arr_eq(gids[1], gid1_v4, 16, "then IPv4");
	cr_expect_arr_eq(gids[2], gid1_v6, 16, "then IPv6");
	cr_expect_eq(port_counter(e0.ctx, "gsi_tx"), 0, "nothing refused was sent");
	droce_engine_stop();
	cr_expect_eq(droce_engine_gsi_send(&m), -ENODEV, "no engine");
	cr_expect_eq(droce_engine_gsi_recv(&bad, 1), -ENODEV);
	cr_expect_eq(droce_engine_gsi_fd(), -ENODEV);
	cr_expect_eq(droce_engine_port_index("droce0"), -ENODEV);
	cr_expect_eq(droce_engine_port_gids(0, gids, 4), -ENODEV);
}
