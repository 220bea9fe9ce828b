/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The counters of include/droce_counters.h, read through droce_port_counters()
 * and droce_qp_counters() while the embedded engine runs: two ports joined back
 * to back (link=), verbs calls only, and each counter provoked on purpose by
 * the traffic or by an exact fault on a port's transmit path (DROCE_DEVICES
 * fault=: drop_at drops the frames it names, a rate of 1 applies to every
 * RoCEv2 frame). Every check is an exact value, taken once the link is quiet:
 * no mbuf in flight, nothing held by an injector, over several loop passes.
 *
 * Frame sizes: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 58 bytes
 * around the extended headers and the payload. Timeouts are long enough
 * (timeout 16: about 270 ms) that no ACK on this link is ever late, except
 * where a test loses every frame.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "droce_counters.h"
#include "droce_engine.h"
#include "droce_wire_pkt.h"
#include "pair_harness.h"

#define QKEY 0x11111111u
#define HDRS 58u /* Ethernet, IPv4, UDP, BTH, ICRC */
#define PMTU 1024u

static struct pair_end e0, e1;

struct conn {
	uint8_t timeout, retry_cnt, rnr_retry;
};

static const struct conn conn_default = {.timeout = 16, .retry_cnt = 7, .rnr_retry = 7};

/* ------------------------------------------------------------ set-up */

/* Two ports back to back; @p f0 / @p f1 the fault= values of droce0 / droce1 (NULL: none). */
static void setup(enum ibv_qp_type type, const char *f0, const char *f1, const struct conn *c)
{
	struct pair_opts o = pair_opts_default(type);
	char k0[256], k1[256];

	snprintf(k0, sizeof(k0), "%s%s", f0 ? ",fault=" : "", f0 ? f0 : "");
	snprintf(k1, sizeof(k1), "%s%s", f1 ? ",fault=" : "", f1 ? f1 : "");
	o.keys[0] = k0;
	o.keys[1] = k1;
	o.eth_mtu = 1500;
	o.qkey = QKEY;
	o.timeout = c->timeout;
	o.retry_cnt = c->retry_cnt;
	o.rnr_retry = c->rnr_retry;
	o.no_huge = true;
	pair_open(&o, &e0, &e1);
}

static void setup_rc(const char *f0, const char *f1, const struct conn *c)
{
	setup(IBV_QPT_RC, f0, f1, c);
}

/* ------------------------------------------------------------ helpers */

/*
 * Wait until nothing is in flight: over three loop passes in a row both pools
 * hold what they held before the first packet and no injector holds a frame.
 */
static void quiet(void)
{
	static const char *const names[2] = {"droce0", "droce1"};
	struct droce_engine_port_stats st;
	struct timespec t0;
	int calm = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (calm < 3) {
		bool idle = true;

		cr_assert_lt(pair_elapsed(&t0), PAIR_LIVENESS, "the link never went quiet");
		droce_engine_sync();
		for (int i = 0; i < 2; i++) {
			cr_assert_eq(droce_engine_port_stats(names[i], &st), 0);
			idle = idle && st.fault_held == 0 && st.pool_avail == st.pool_avail_start;
		}
		calm = idle ? calm + 1 : 0;
	}
}

/* Receives land in the second half of the buffer. */
static void post_recv(struct pair_end *x, uint64_t id, uint32_t len, uint32_t lkey)
{
	pair_post_recv(x, id, (uint32_t)(x->len / 2), len, lkey);
}

/* From the start of x's buffer; atomics add 1 at offset 64 of the peer's, RDMA at 4096. */
static void post_send(struct pair_end *x, const struct pair_end *to, uint64_t id,
		      enum ibv_wr_opcode op, uint32_t len, uint32_t rkey)
{
	bool atomic = op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP;
	const struct pair_wr w = {.id = id,
				  .op = op,
				  .len = len,
				  .roff = atomic ? 64 : 4096,
				  .rkey = rkey,
				  .compare_add = 1};

	pair_post_send(x, to, &w);
}

/* A UD SEND through @p ah to QP @p dqpn with Q_Key @p qkey. */
static void post_ud(struct pair_end *x, struct ibv_ah *ah, uint32_t dqpn, uint64_t id, uint32_t len,
		    uint32_t qkey)
{
	const struct pair_wr w = {.id = id,
				  .op = IBV_WR_SEND,
				  .len = len,
				  .ah = ah,
				  .remote_qpn = dqpn,
				  .remote_qkey = qkey};

	pair_post_send(x, NULL, &w);
}

/* One SEND of @p len from e0 into a receive of @p rlen at e1, both successful; then quiet. */
static void send_once(uint32_t len, uint32_t rlen)
{
	struct ibv_wc wc;

	post_recv(&e1, 100, rlen, e1.mr->lkey);
	post_send(&e0, &e1, 1, IBV_WR_SEND, len, e1.mr->rkey);
	wc = pair_wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	wc = pair_wait_wc(e1.cq, 100);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "receive: %s", ibv_wc_status_str(wc.status));
	quiet();
}

TestSuite(counters, .timeout = 60);

/* ------------------------------------------------------------ the table */

Test(counters, table_names_unique_and_described)
{
	unsigned int n = droce_counter_count();

	cr_assert_gt(n, 0);
	cr_expect_null(droce_counter_desc(n), "nothing past the end");
	for (unsigned int i = 0; i < n; i++) {
		const struct droce_counter_desc *d = droce_counter_desc(i);

		cr_assert_not_null(d);
		cr_expect_not_null(d->name, "counter %u has a name", i);
		cr_expect(d->help != NULL && d->help[0] != '\0', "%s is described", d->name);
		cr_expect(d->scope & DROCE_COUNTER_PORT, "%s is read per port", d->name);
		/* every name, rxe's and mlx5's included, leads back to this counter */
		cr_expect_eq(droce_counter_find(d->name), (int)i, "%s is found", d->name);
		if (d->rxe != NULL)
			cr_expect_eq(droce_counter_find(d->rxe), (int)i, "rxe's %s", d->rxe);
		if (d->mlx5 != NULL)
			cr_expect_eq(droce_counter_find(d->mlx5), (int)i, "mlx5's %s", d->mlx5);
	}
}

Test(counters, table_knows_rxe_and_mlx5_names)
{
	cr_expect_eq(droce_counter_find("rcvd_seq_err"), droce_counter_find("packet_seq_err"));
	cr_expect_eq(droce_counter_find("out_of_seq_request"),
		     droce_counter_find("out_of_sequence"));
	cr_expect_eq(droce_counter_find("rcvd_rnr_err"), droce_counter_find("rnr_nak_retry_err"));
	cr_expect_eq(droce_counter_find("retry_exceeded_err"),
		     droce_counter_find("req_transport_retries_exceeded"));
	cr_expect_eq(droce_counter_find("retry_rnr_exceeded_err"),
		     droce_counter_find("req_rnr_retries_exceeded"));
	cr_expect_eq(droce_counter_find("rx_icrc_encapsulated"), droce_counter_find("icrc_error"));
	cr_expect_geq(droce_counter_find("duplicate_request"), 0);
	cr_expect_eq(droce_counter_find("link_downed"), -ENOENT, "not counted: not listed");
	cr_expect_eq(droce_counter_find("ack_deferred"), -ENOENT, "not counted: not listed");
	cr_expect_eq(droce_counter_find(NULL), -EINVAL);
}

Test(counters, table_lists_every_parse_reason)
{
	for (int st = DROCE_PARSE_NOT_ROCE + 1; st < DROCE_PARSE_STATUS_COUNT; st++) {
		int id = droce_counter_find(droce_parse_status_name[st]);

		cr_expect_geq(id, 0, "%s is a counter", droce_parse_status_name[st]);
		if (id >= 0)
			cr_expect_eq(droce_counter_desc((unsigned int)id)->scope,
				     DROCE_COUNTER_PORT, "%s is the port's own",
				     droce_parse_status_name[st]);
	}
}

/* ------------------------------------------------------------ reading */

Test(counters, no_engine_no_counters)
{
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
	};
	struct droce_counter c[4];
	struct ibv_device **list;
	int n;

	/* a device without vdev or link: no engine runs it */
	setenv("DROCE_DEVICES", "droce0:ip=10.0.0.1", 1);
	list = ibv_get_device_list(&n);
	cr_assert_eq(n, 1);
	e0.ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	cr_assert_not_null(e0.ctx);
	e0.pd = ibv_alloc_pd(e0.ctx);
	e0.cq = ibv_create_cq(e0.ctx, 8, NULL, NULL, 0);
	ia.send_cq = e0.cq;
	ia.recv_cq = e0.cq;
	e0.qp = ibv_create_qp(e0.pd, &ia);
	cr_assert_not_null(e0.qp);
	cr_expect_eq(droce_port_counters(e0.ctx, 1, c, 4), -ENODEV);
	cr_expect_eq(droce_qp_counters(e0.qp, c, 4), -ENODEV);
	cr_expect_eq(droce_port_counters(NULL, 1, c, 4), -EINVAL);
	cr_expect_eq(droce_port_counters(e0.ctx, 2, c, 4), -EINVAL, "one port, number 1");
	cr_expect_eq(droce_port_counters(e0.ctx, 1, NULL, 4), -EINVAL);
	cr_expect_eq(droce_qp_counters(NULL, c, 4), -EINVAL);
	cr_expect_eq(droce_qp_counters(e0.qp, NULL, 1), -EINVAL);
}

Test(counters, counts_and_order)
{
	struct droce_counter c[128], few[3];
	unsigned int want_qp = 0, want_port = 0;
	int n;

	for (unsigned int i = 0; i < droce_counter_count(); i++) {
		want_qp += (droce_counter_desc(i)->scope & DROCE_COUNTER_QP) != 0;
		want_port += (droce_counter_desc(i)->scope & DROCE_COUNTER_PORT) != 0;
	}
	setup_rc(NULL, NULL, &conn_default);
	n = droce_qp_counters(e0.qp, NULL, 0);
	cr_expect_eq(n, (int)want_qp, "n = 0 asks for the count");
	n = droce_port_counters(e0.ctx, 1, NULL, 0);
	cr_expect_eq(n, (int)want_port, "n = 0 asks for the count");
	n = droce_port_counters(e0.ctx, 1, c, 128);
	cr_assert_eq(n, (int)want_port);
	for (int i = 0; i < n; i++) {
		cr_expect_str_eq(c[i].name, droce_counter_desc(c[i].id)->name, "entry %d", i);
		if (i > 0)
			cr_expect_gt(c[i].id, c[i - 1].id, "in id order");
	}
	memset(few, 0xa5, sizeof(few));
	cr_expect_eq(droce_port_counters(e0.ctx, 1, few, 2), (int)want_port,
		     "the count, whatever n");
	cr_expect_eq(few[1].id, c[1].id, "the first n written");
	cr_expect_eq(few[2].id, 0xa5a5a5a5u, "nothing past n");
}

/* ------------------------------------------------------------ traffic */

Test(counters, rc_send_counts_packets_bytes_and_messages)
{
	setup_rc(NULL, NULL, &conn_default);
	send_once(100, 4096);
	cr_expect_eq(pair_qp_counter(&e0, "sent_pkts"), 1, "one SEND_ONLY");
	cr_expect_eq(pair_qp_counter(&e0, "sent_bytes"), HDRS + 100);
	cr_expect_eq(pair_qp_counter(&e0, "rcvd_pkts"), 1, "one ACK");
	cr_expect_eq(pair_qp_counter(&e0, "rcvd_bytes"), HDRS + 4, "BTH, AETH");
	cr_expect_eq(pair_qp_counter(&e0, "rdma_sends"), 1);
	cr_expect_eq(pair_qp_counter(&e1, "rcvd_pkts"), 1);
	cr_expect_eq(pair_qp_counter(&e1, "rcvd_bytes"), HDRS + 100);
	cr_expect_eq(pair_qp_counter(&e1, "sent_pkts"), 1);
	cr_expect_eq(pair_qp_counter(&e1, "sent_bytes"), HDRS + 4);
	cr_expect_eq(pair_qp_counter(&e1, "rdma_recvs"), 1);
	/* the ports: their one QP each */
	cr_expect_eq(pair_port_counter(&e0, "sent_pkts"), 1);
	cr_expect_eq(pair_port_counter(&e1, "rdma_recvs"), 1);
	cr_expect_eq(pair_port_counter(&e1, "rcvd_bytes"), HDRS + 100);
}

Test(counters, rc_requests_by_kind)
{
	struct ibv_wc wc;

	setup_rc(NULL, NULL, &conn_default);
	post_send(&e0, &e1, 1, IBV_WR_RDMA_WRITE, 3 * PMTU, e1.mr->rkey);
	post_send(&e0, &e1, 2, IBV_WR_RDMA_READ, 2 * PMTU, e1.mr->rkey);
	post_send(&e0, &e1, 3, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, e1.mr->rkey);
	post_send(&e0, &e1, 4, IBV_WR_ATOMIC_CMP_AND_SWP, 8, e1.mr->rkey);
	for (uint64_t id = 1; id <= 4; id++) {
		wc = pair_wait_wc(e0.cq, id);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%llu: %s", (unsigned long long)id,
			     ibv_wc_status_str(wc.status));
	}
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "rx_write_requests"), 1, "one WRITE of three packets");
	cr_expect_eq(pair_qp_counter(&e1, "rx_read_requests"), 1);
	cr_expect_eq(pair_qp_counter(&e1, "rx_atomic_requests"), 2);
	cr_expect_eq(pair_qp_counter(&e1, "rcvd_pkts"), 3 + 1 + 2);
	cr_expect_eq(pair_qp_counter(&e0, "rdma_sends"), 0, "no SEND");
	cr_expect_eq(pair_qp_counter(&e0, "sent_pkts"), 3 + 1 + 2);
	cr_expect_eq(pair_qp_counter(&e0, "sent_bytes"),
		     (HDRS + 16 + PMTU) + 2 * (HDRS + PMTU) + (HDRS + 16) + 2 * (HDRS + 28),
		     "WRITE FIRST with RETH, MIDDLE, LAST; READ with RETH; atomics with AtomicETH");
}

Test(counters, neighbour_miss_then_resolved)
{
	setup_rc(NULL, NULL, &conn_default);
	send_once(100, 4096);
	cr_expect_eq(pair_qp_counter(&e0, "neigh_miss"), 1, "the first packet waited for ARP");
	cr_expect_eq(pair_port_counter(&e0, "neigh_requests"), 1, "one ARP request");
	cr_expect_eq(pair_qp_counter(&e1, "neigh_miss"), 0,
		     "the request taught droce1 droce0's MAC");
	/* an entry learned from a request is confirmed by a unicast probe once used */
	cr_expect_eq(pair_port_counter(&e1, "neigh_requests"), 1, "droce1's probe");
	cr_expect_eq(pair_port_counter(&e1, "rx_not_roce"), 2,
		     "the request and the probe's answer");
	cr_expect_eq(pair_port_counter(&e0, "rx_not_roce"), 2, "the answer and the probe");
	cr_expect_eq(pair_port_counter(&e0, "neigh_failed"), 0);
}

/* ------------------------------------------------------------ responder */

Test(counters, duplicate_request)
{
	/* every RoCEv2 frame droce0 sends arrives twice */
	setup_rc("dup:1+match:roce", NULL, &conn_default);
	post_recv(&e1, 100, 8192, e1.mr->lkey);
	post_send(&e0, &e1, 1, IBV_WR_SEND, 3 * PMTU, e1.mr->rkey);
	cr_expect_eq(pair_wait_wc(e0.cq, 1).status, IBV_WC_SUCCESS);
	cr_expect_eq(pair_wait_wc(e1.cq, 100).status, IBV_WC_SUCCESS);
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "duplicate_request"), 3, "each of three packets again");
	cr_expect_eq(pair_qp_counter(&e1, "rdma_recvs"), 1, "delivered once");
	cr_expect_eq(pair_qp_counter(&e1, "rcvd_pkts"), 6);
	cr_expect_eq(pair_port_counter(&e1, "duplicate_request"), 3);
}

Test(counters, gap_out_of_sequence_and_packet_seq_err)
{
	/* the second packet of the message is lost: a gap, one NAK, go back N */
	setup_rc("drop_at:1+match:roce", NULL, &conn_default);
	post_recv(&e1, 100, 8192, e1.mr->lkey);
	post_send(&e0, &e1, 1, IBV_WR_SEND, 3 * PMTU, e1.mr->rkey);
	cr_expect_eq(pair_wait_wc(e0.cq, 1).status, IBV_WC_SUCCESS);
	cr_expect_eq(pair_wait_wc(e1.cq, 100).status, IBV_WC_SUCCESS);
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "out_of_sequence"), 1, "one gap");
	cr_expect_eq(pair_qp_counter(&e0, "packet_seq_err"), 1, "one NAK sequence error");
	cr_expect_eq(pair_qp_counter(&e0, "completer_retry_err"), 1, "one go-back-N");
	cr_expect_eq(pair_qp_counter(&e0, "sent_pkts"), 3 + 2, "packets 1 and 2 again");
	cr_expect_eq(pair_qp_counter(&e0, "local_ack_timeout_err"), 0);
	cr_expect_eq(pair_qp_counter(&e1, "duplicate_request"), 0);
	cr_expect_eq(pair_qp_counter(&e1, "rdma_recvs"), 1);
}

Test(counters, rnr_sent_received_and_exceeded)
{
	const struct conn c = {.timeout = 16, .retry_cnt = 7, .rnr_retry = 1};
	struct ibv_wc wc;

	setup_rc(NULL, NULL, &c);
	/* no receive at droce1: RNR NAK, one retry, RNR NAK, rnr_retry used up */
	post_send(&e0, &e1, 1, IBV_WR_SEND, 100, e1.mr->rkey);
	wc = pair_wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_RNR_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "send_rnr_err"), 2);
	cr_expect_eq(pair_qp_counter(&e0, "rnr_nak_retry_err"), 1, "the first RNR NAK was retried");
	cr_expect_eq(pair_qp_counter(&e0, "req_rnr_retries_exceeded"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "req_cqe_error"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "completer_retry_err"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "sent_pkts"), 2);
}

Test(counters, remote_access_error_both_sides)
{
	struct ibv_wc wc;

	setup_rc(NULL, NULL, &conn_default);
	post_recv(&e1, 100, 64, e1.mr->lkey);
	post_send(&e0, &e1, 1, IBV_WR_RDMA_WRITE, 8, e1.mr->rkey ^ 0x80);
	wc = pair_wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc.status));
	wc = pair_wait_wc(e1.cq, 100);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "the responder is in ERR");
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "rx_write_requests"), 1);
	cr_expect_eq(pair_qp_counter(&e1, "resp_remote_access_errors"), 1);
	cr_expect_eq(pair_qp_counter(&e1, "resp_cqe_flush_error"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "req_remote_access_errors"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "req_cqe_error"), 1);
}

Test(counters, local_length_error_and_invalid_request)
{
	struct ibv_wc wc;

	setup_rc(NULL, NULL, &conn_default);
	post_recv(&e1, 100, 10, e1.mr->lkey);
	post_send(&e0, &e1, 1, IBV_WR_SEND, 100, e1.mr->rkey);
	wc = pair_wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_INV_REQ_ERR, "%s", ibv_wc_status_str(wc.status));
	wc = pair_wait_wc(e1.cq, 100);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR, "%s", ibv_wc_status_str(wc.status));
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "resp_local_length_error"), 1);
	cr_expect_eq(pair_qp_counter(&e1, "resp_invalid_request"), 1);
	cr_expect_eq(pair_qp_counter(&e1, "resp_cqe_error"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "req_remote_invalid_request"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "req_cqe_error"), 1);
}

Test(counters, remote_operational_error)
{
	struct ibv_wc wc;

	setup_rc(NULL, NULL, &conn_default);
	/* a receive whose lkey is no key: the responder cannot place the message */
	post_recv(&e1, 100, 4096, e1.mr->lkey ^ 0x80);
	post_send(&e0, &e1, 1, IBV_WR_SEND, 100, e1.mr->rkey);
	wc = pair_wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_OP_ERR, "%s", ibv_wc_status_str(wc.status));
	wc = pair_wait_wc(e1.cq, 100);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR, "%s", ibv_wc_status_str(wc.status));
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "resp_remote_op_errors"), 1);
	cr_expect_eq(pair_qp_counter(&e1, "resp_cqe_error"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "req_remote_op_errors"), 1);
}

Test(counters, bad_state_drop)
{
	const struct conn c = {.timeout = 14, .retry_cnt = 1, .rnr_retry = 7};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
	struct ibv_wc wc;

	setup_rc(NULL, NULL, &c);
	post_recv(&e1, 100, 64, e1.mr->lkey);
	post_recv(&e1, 101, 64, e1.mr->lkey);
	cr_assert_eq(ibv_modify_qp(e1.qp, &a, IBV_QP_STATE), 0);
	cr_expect_eq(pair_wait_wc(e1.cq, 100).status, IBV_WC_WR_FLUSH_ERR);
	cr_expect_eq(pair_wait_wc(e1.cq, 101).status, IBV_WC_WR_FLUSH_ERR);
	/* the SEND and its one retry reach a QP in ERR */
	post_send(&e0, &e1, 1, IBV_WR_SEND, 100, e1.mr->rkey);
	wc = pair_wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "resp_cqe_flush_error"), 2);
	cr_expect_eq(pair_qp_counter(&e1, "bad_state_drop"), 2);
	cr_expect_eq(pair_qp_counter(&e1, "rcvd_pkts"), 0, "dropped before the QP took them");
}

/* ------------------------------------------------------------ requester */

Test(counters, lost_packet_local_ack_timeout)
{
	setup_rc("drop_at:0+match:roce", NULL, &conn_default);
	send_once(100, 4096);
	cr_expect_eq(pair_qp_counter(&e0, "local_ack_timeout_err"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "completer_retry_err"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "sent_pkts"), 2);
	cr_expect_eq(pair_qp_counter(&e0, "req_transport_retries_exceeded"), 0);
	cr_expect_eq(pair_qp_counter(&e1, "duplicate_request"), 0, "the first never arrived");
}

Test(counters, lost_read_response_implied_nak)
{
	struct ibv_wc wc;

	/* droce1's second RoCEv2 frame, the READ's second response packet, is lost */
	setup_rc(NULL, "drop_at:1+match:roce", &conn_default);
	post_send(&e0, &e1, 1, IBV_WR_RDMA_READ, 3 * PMTU, e1.mr->rkey);
	wc = pair_wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	quiet();
	cr_expect_eq(pair_qp_counter(&e0, "implied_nak_seq_err"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "completer_retry_err"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "sent_pkts"), 2, "the READ request, then the rest of it");
	cr_expect_eq(pair_qp_counter(&e1, "duplicate_request"), 1, "the re-request, replayed");
	cr_expect_eq(pair_qp_counter(&e1, "rx_read_requests"), 1, "executed once");
	cr_expect_eq(pair_qp_counter(&e1, "sent_pkts"), 3 + 2);
	cr_expect_eq(pair_qp_counter(&e0, "rcvd_resp_drop"), 0);
}

Test(counters, duplicate_response_dropped)
{
	/* every RoCEv2 frame droce1 sends arrives twice: the READ response too */
	setup_rc(NULL, "dup:1+match:roce", &conn_default);
	post_send(&e0, &e1, 1, IBV_WR_RDMA_READ, 100, e1.mr->rkey);
	cr_expect_eq(pair_wait_wc(e0.cq, 1).status, IBV_WC_SUCCESS);
	quiet();
	cr_expect_eq(pair_qp_counter(&e0, "rcvd_resp_drop"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "rcvd_pkts"), 2);
}

Test(counters, total_loss_retries_exceeded_and_flush)
{
	const struct conn c = {.timeout = 14, .retry_cnt = 2, .rnr_retry = 7};
	struct ibv_wc wc;

	setup_rc("drop:1+match:roce", NULL, &c);
	post_send(&e0, &e1, 1, IBV_WR_SEND, 100, e1.mr->rkey);
	post_send(&e0, &e1, 2, IBV_WR_SEND, 100, e1.mr->rkey);
	wc = pair_wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
	wc = pair_wait_wc(e0.cq, 2);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s", ibv_wc_status_str(wc.status));
	quiet();
	cr_expect_eq(pair_qp_counter(&e0, "local_ack_timeout_err"), 2,
		     "three expiries, two retried");
	cr_expect_eq(pair_qp_counter(&e0, "req_transport_retries_exceeded"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "completer_retry_err"), 2);
	cr_expect_eq(pair_qp_counter(&e0, "req_cqe_error"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "req_cqe_flush_error"), 1);
	cr_expect_eq(pair_qp_counter(&e1, "rcvd_pkts"), 0);
}

/* ------------------------------------------------------------ the port's own */

Test(counters, corrupted_frames_icrc_error)
{
	const struct conn c = {.timeout = 14, .retry_cnt = 1, .rnr_retry = 7};
	struct droce_engine_stats es;
	struct ibv_wc wc;

	/* every RoCEv2 frame droce0 sends has one bit flipped past its headers */
	setup_rc("corrupt:1", NULL, &c);
	post_send(&e0, &e1, 1, IBV_WR_SEND, 100, e1.mr->rkey);
	wc = pair_wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
	quiet();
	cr_expect_eq(pair_qp_counter(&e0, "sent_pkts"), 2, "the SEND and its retry");
	cr_expect_eq(pair_port_counter(&e1, "icrc_error"), 2, "each failed droce1's ICRC check");
	cr_expect_eq(pair_port_counter(&e0, "icrc_error"), 0);
	cr_expect_eq(pair_qp_counter(&e1, "rcvd_pkts"), 0);
	droce_engine_stats_get(&es);
	cr_expect_eq(es.parse_errors[DROCE_PARSE_BAD_ICRC], 2, "the engine's sum");
}

Test(counters, packets_for_no_qp)
{
	const struct conn c = {.timeout = 14, .retry_cnt = 1, .rnr_retry = 7};
	struct ibv_wc wc;

	setup_rc(NULL, NULL, &c);
	send_once(100, 4096);
	cr_assert_eq(ibv_destroy_qp(e1.qp), 0);
	/* droce1's QP is gone: the port keeps what it counted */
	cr_expect_eq(pair_port_counter(&e1, "rcvd_pkts"), 1);
	cr_expect_eq(pair_port_counter(&e1, "rdma_recvs"), 1);
	post_send(&e0, &e1, 2, IBV_WR_SEND, 100, e1.mr->rkey);
	wc = pair_wait_wc(e0.cq, 2);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
	quiet();
	cr_expect_eq(pair_port_counter(&e1, "rx_no_qp"), 2, "the SEND and its retry");
	cr_expect_eq(pair_port_counter(&e1, "rcvd_pkts"), 1, "nothing more for a QP");
}

Test(counters, reset_zeroes_the_qp_not_the_port)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};

	setup_rc(NULL, NULL, &conn_default);
	send_once(100, 4096);
	cr_assert_eq(ibv_modify_qp(e0.qp, &a, IBV_QP_STATE), 0);
	cr_expect_eq(pair_qp_counter(&e0, "sent_pkts"), 0, "a QP starts again at RESET");
	cr_expect_eq(pair_qp_counter(&e0, "rdma_sends"), 0);
	cr_expect_eq(pair_port_counter(&e0, "sent_pkts"), 1, "the port keeps its sum");
	cr_expect_eq(pair_port_counter(&e0, "rdma_sends"), 1);
}

/* ------------------------------------------------------------ UC */

Test(counters, uc_gap_and_no_receive)
{
	struct ibv_wc wc;

	/* droce0's second frame is lost: the first message breaks, the next arrives */
	setup(IBV_QPT_UC, "drop_at:1+match:roce", NULL, &conn_default);
	post_recv(&e1, 100, 8192, e1.mr->lkey);
	post_send(&e0, &e1, 1, IBV_WR_SEND, 3 * PMTU, e1.mr->rkey);
	post_send(&e0, &e1, 2, IBV_WR_SEND, 100, e1.mr->rkey);
	cr_expect_eq(pair_wait_wc(e0.cq, 1).status, IBV_WC_SUCCESS);
	cr_expect_eq(pair_wait_wc(e0.cq, 2).status, IBV_WC_SUCCESS);
	wc = pair_wait_wc(e1.cq, 100);
	cr_expect_eq(wc.byte_len, 100, "the broken message is dropped");
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "out_of_sequence"), 1, "one gap");
	cr_expect_eq(pair_qp_counter(&e1, "uc_msg_drop"), 1,
		     "the LAST after the gap, out of its message");
	cr_expect_eq(pair_qp_counter(&e1, "rdma_recvs"), 1);
	/* no receive posted: the message is dropped at its first packet, its last follows */
	post_send(&e0, &e1, 3, IBV_WR_SEND, 2 * PMTU, e1.mr->rkey);
	cr_expect_eq(pair_wait_wc(e0.cq, 3).status, IBV_WC_SUCCESS);
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "out_of_buffer"), 1);
	cr_expect_eq(pair_qp_counter(&e1, "uc_msg_drop"), 2, "and the LAST without its FIRST");
	cr_expect_eq(pair_qp_counter(&e0, "rdma_sends"), 3, "UC sends complete once sent");
}

/* ------------------------------------------------------------ UD */

Test(counters, ud_qkey_no_buffer_and_length)
{
	setup(IBV_QPT_UD, NULL, NULL, &conn_default);
	post_ud(&e0, e0.ah, e1.qp->qp_num, 1, 100, QKEY ^ 1);
	cr_expect_eq(pair_wait_wc(e0.cq, 1).status, IBV_WC_SUCCESS,
		     "UD completes, delivered or not");
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "qkey_violations"), 1);
	post_ud(&e0, e0.ah, e1.qp->qp_num, 2, 100, QKEY);
	cr_expect_eq(pair_wait_wc(e0.cq, 2).status, IBV_WC_SUCCESS);
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "out_of_buffer"), 1, "no receive posted");
	post_recv(&e1, 100, 40 + 99, e1.mr->lkey);
	post_ud(&e0, e0.ah, e1.qp->qp_num, 3, 100, QKEY);
	cr_expect_eq(pair_wait_wc(e0.cq, 3).status, IBV_WC_SUCCESS);
	/* GRH + 100 > 139 bytes: the receive completes with a local length error */
	cr_expect_eq(pair_wait_wc(e1.cq, 100).status, IBV_WC_LOC_LEN_ERR, "GRH + 100 bytes");
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "resp_local_length_error"), 1);
	cr_expect_eq(pair_qp_counter(&e1, "resp_cqe_error"), 1);
	post_recv(&e1, 101, 40 + 99, e1.mr->lkey);
	post_ud(&e0, e0.ah, e1.qp->qp_num, 4, 99, QKEY);
	cr_expect_eq(pair_wait_wc(e0.cq, 4).status, IBV_WC_SUCCESS);
	cr_expect_eq(pair_wait_wc(e1.cq, 101).status, IBV_WC_SUCCESS, "GRH + 99 bytes fit");
	quiet();
	cr_expect_eq(pair_qp_counter(&e1, "rdma_recvs"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "rdma_sends"), 4);
	cr_expect_eq(pair_qp_counter(&e1, "rcvd_pkts"), 4);
}

Test(counters, ud_unresolved_destination_dropped)
{
	union ibv_gid nobody = {.raw = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 99}};
	struct ibv_ah_attr ah = {.is_global = 1,
				 .port_num = 1,
				 .grh = {.dgid = nobody, .sgid_index = 1, .hop_limit = 64}};
	struct ibv_ah *to_nobody;
	struct timespec t0;

	setup(IBV_QPT_UD, NULL, NULL, &conn_default);
	to_nobody = ibv_create_ah(e0.pd, &ah);
	cr_assert_not_null(to_nobody);
	post_ud(&e0, to_nobody, 5, 1, 100, QKEY);
	/* the frame waits in the port's queue, not the send queue: UD completes at once */
	cr_expect_eq(pair_wait_wc(e0.cq, 1).status, IBV_WC_SUCCESS,
		     "UD completes, delivered or not");
	/* about three seconds: three ARP requests a second apart, then the frame is dropped */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (pair_port_counter(&e0, "neigh_queue_dropped") == 0)
		cr_assert_lt(pair_elapsed(&t0), PAIR_LIVENESS,
			     "the waiting frame was never dropped");
	quiet();
	cr_expect_eq(pair_qp_counter(&e0, "neigh_miss"), 1);
	cr_expect_eq(pair_qp_counter(&e0, "sent_pkts"), 1, "built, handed to the port");
	cr_expect_eq(pair_port_counter(&e0, "neigh_queued"), 1);
	cr_expect_eq(pair_port_counter(&e0, "neigh_queue_dropped"), 1);
	cr_expect_eq(pair_port_counter(&e0, "neigh_requests"), 3);
	cr_expect_eq(pair_port_counter(&e0, "neigh_failed"), 1);
	/* a send to it now, while it is known to be dead (1 s after the failure), is dropped at
	 * once; a loaded machine may post it after that second, when it is queued for a new
	 * resolution instead: one of the two, never both, never neither */
	post_ud(&e0, to_nobody, 6, 1, 100, QKEY);
	cr_expect_eq(pair_wait_wc(e0.cq, 1).status, IBV_WC_SUCCESS);
	quiet();
	cr_expect_eq(pair_qp_counter(&e0, "neigh_drop") + pair_port_counter(&e0, "neigh_queued"), 2,
		     "dropped at once (neigh_drop %llu) or queued again (neigh_queued %llu)",
		     (unsigned long long)pair_qp_counter(&e0, "neigh_drop"),
		     (unsigned long long)pair_port_counter(&e0, "neigh_queued"));
}
