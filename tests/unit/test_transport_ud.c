/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UD transport between two QPs in one process, without a port: what QP A
 * sends (ibv_post_send -> droce_tqp_send -> a RoCEv2 frame) is parsed and fed
 * to QP B (droce_tqp_recv), whose receive completes through ibv_poll_cq with
 * the GRH area and the payload in its buffer. Every frame is also checked by
 * lib/wire's parser, ICRC included.
 */
#include <criterion/criterion.h>
#include <string.h>

#include <droce_transport.h>
#include <droce_wire.h>
#include <droce_wire_mbuf.h>

#include "droce_test.h"
#include "verbs_harness.h"

#define QKEY 0x11111111u

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct droce_tqp tqp;
	struct droce_tcq tcq;
	uint8_t buf[8192];
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct side a, b;
static struct rte_mempool *pool;
static struct droce_tport_addr port;
static struct droce_transport_env env;
static struct droce_tah ahs[4];
static struct ibv_ah *ah_b; /* A's handle on B */
static unsigned int frames, bad_frames;
static bool neigh_known = true;
static struct rte_mbuf *last_frame;

/* A's frames go straight to B after the parser checked them. */
static void tx_to_b(void *arg, struct rte_mbuf *m)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct droce_pkt pkt;

	(void)arg;
	frames++;
	if (droce_parse_mbuf(m, &cfg, &pkt) != DROCE_PARSE_OK || pkt.qpn != b.qp->qp_num) {
		bad_frames++;
		rte_pktmbuf_free(m);
		return;
	}
	if (last_frame != NULL)
		rte_pktmbuf_free(last_frame);
	last_frame = rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);
	droce_tqp_recv(&env, &b.tqp, m, &pkt);
}

static int neigh(void *arg, const uint8_t ip[16], uint8_t mac[6])
{
	static const uint8_t peer[6] = {0x02, 0, 0, 0, 0, 0x02};

	(void)arg;
	(void)ip;
	if (!neigh_known)
		return -EAGAIN;
	memcpy(mac, peer, 6);
	return 0;
}

static void cq_notify(void *arg, void *cq, bool solicited)
{
	(void)arg;
	droce_verbs_cq_notify(cq, solicited);
}

static void qp_error(void *arg, void *qp, enum ibv_qp_state state, enum ibv_event_type ev)
{
	(void)arg;
	droce_verbs_qp_error(qp, state, ev);
}

static const struct droce_tah *ah_lookup(void *arg, uint32_t id)
{
	(void)arg;
	return id < 4 ? &ahs[id] : NULL;
}

static void side_setup(struct side *s)
{
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = 4,
			.max_recv_sge = 4,
			.max_inline_data = 128},
		.qp_type = IBV_QPT_UD,
	};
	struct droce_qp_view v;
	struct droce_cq_view cv;
	struct ibv_qp_attr attr = {.qkey = QKEY};

	s->cq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	cr_assert_not_null(s->cq);
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd, &ia);
	cr_assert_not_null(s->qp);
	s->mr = ibv_reg_mr(pd, s->buf, sizeof(s->buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(s->mr);
	cr_assert_eq(harness_qp_to_rts(s->qp), 0);
	cr_assert_eq(droce_verbs_qp_view(s->qp, &v), 0);
	cr_assert_eq(droce_tqp_init(&s->tqp, v.qpn, IBV_QPT_UD, v.pd, v.sq.addr, v.sq.len,
				    v.rq.addr, v.rq.len),
		     0);
	cr_assert_eq(droce_verbs_cq_view(s->cq, &cv), 0);
	cr_assert_eq(droce_ring_prod_attach(&s->tcq.prod, cv.ring.addr, cv.ring.len), 0);
	s->tcq.user = s->cq;
	s->tqp.scq = &s->tcq;
	s->tqp.rcq = &s->tcq;
	s->tqp.user = s->qp;
	droce_tqp_modify(&env, &s->tqp, &attr, IBV_QP_QKEY, IBV_QPS_RTS);
}

static void setup(void)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1, .grh = {.sgid_index = 1, .hop_limit = 64}};

	droce_test_eal_init("transport_ud");
	pool = rte_pktmbuf_pool_create("ud_test", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE + 4096,
				       SOCKET_ID_ANY);
	cr_assert_not_null(pool);
	ctx = harness_open(&pd);
	memcpy(port.mac, (uint8_t[]){0x02, 0, 0, 0, 0, 0x01}, 6);
	port.mtu_bytes = 4096;
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &port.gid[0]), 0);
	cr_assert_eq(ibv_query_gid(ctx, 1, 1, &port.gid[1]), 0);
	cr_assert_eq(ibv_query_gid(ctx, 1, 2, &port.gid[2]), 0);
	port.gid_count = 3;
	env = (struct droce_transport_env){
		.pool = pool,
		.keys = droce_verbs_mr_table(),
		.port = &port,
		.tx = tx_to_b,
		.neigh = neigh,
		.cq_notify = cq_notify,
		.qp_error = qp_error,
		.ah = ah_lookup,
	};
	side_setup(&a);
	side_setup(&b);
	aa.grh.dgid = port.gid[1]; /* B listens on the same device: its IPv4 GID */
	ah_b = ibv_create_ah(pd, &aa);
	cr_assert_not_null(ah_b);
	cr_assert_lt(ah_b->handle, 4);
	ahs[ah_b->handle] = (struct droce_tah){.pd = a.tqp.pd, .valid = true, .attr = aa};
}

static void teardown(void)
{
	if (last_frame != NULL)
		rte_pktmbuf_free(last_frame);
	last_frame = NULL;
	droce_test_eal_fini();
}

TestSuite(transport_ud, .init = setup, .fini = teardown);

static void post_recv_b(uint64_t wr_id, uint32_t len)
{
	struct ibv_sge sge = {.addr = (uintptr_t)b.buf, .length = len, .lkey = b.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad;

	cr_assert_eq(ibv_post_recv(b.qp, &wr, &bad), 0);
}

static int post_send_a(uint64_t wr_id, uint32_t len, uint32_t qkey, enum ibv_wr_opcode op)
{
	struct ibv_sge sge = {.addr = (uintptr_t)a.buf, .length = len, .lkey = a.mr->lkey};
	struct ibv_send_wr wr =
				   {
					   .wr_id = wr_id,
					   .sg_list = &sge,
					   .num_sge = len != 0, /* a 0-byte datagram has no SGE */
					   .opcode = op,
					   .send_flags = IBV_SEND_SIGNALED,
					   .imm_data = htobe32(0xfeedbeef),
					   .wr = {.ud = {.ah = ah_b,
							 .remote_qpn = b.qp->qp_num,
							 .remote_qkey = qkey}},
				   },
			   *bad;

	return ibv_post_send(a.qp, &wr, &bad);
}

/* Poll @p cq for the completion of @p wr_id. */
static struct ibv_wc wait_wc(struct ibv_cq *cq, uint64_t wr_id)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "no completion for %llu",
		     (unsigned long long)wr_id);
	cr_assert_eq(wc.wr_id, wr_id);
	return wc;
}

Test(transport_ud, send_arrives_with_grh_and_payload)
{
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < 1000; i++)
		a.buf[i] = (uint8_t)(i * 13);
	post_recv_b(7, 2000);
	cr_assert_eq(post_send_a(1, 1000, QKEY, IBV_WR_SEND), 0);
	cr_expect_eq(droce_tqp_send(&env, &a.tqp, 0, 16), 1);
	cr_expect_eq(frames, 1);
	cr_expect_eq(bad_frames, 0, "the frame passes lib/wire's checks, ICRC included");
	wc = wait_wc(a.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_SEND);
	wc = wait_wc(b.cq, 7);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_RECV);
	cr_expect_eq(wc.byte_len, 1040, "payload plus the 40-byte GRH area");
	cr_expect_eq(wc.src_qp, a.qp->qp_num);
	cr_expect(wc.wc_flags & IBV_WC_GRH);
	cr_expect_arr_eq(b.buf + 40, a.buf, 1000);
	/* IPv4: 20 zero bytes, then the IPv4 header (version 4, IHL 5) */
	cr_expect_eq(b.buf[0], 0);
	cr_expect_eq(b.buf[20], 0x45);
}

Test(transport_ud, grh_answers_through_ibv_create_ah_from_wc)
{
	struct ibv_ah_attr back;
	struct ibv_wc wc;

	post_recv_b(8, 200);
	cr_assert_eq(post_send_a(2, 64, QKEY, IBV_WR_SEND), 0);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	wc = wait_wc(b.cq, 8);
	cr_assert_eq(ibv_init_ah_from_wc(ctx, 1, &wc, (struct ibv_grh *)b.buf, &back), 0);
	cr_expect_arr_eq(back.grh.dgid.raw, port.gid[1].raw, 16);
	cr_expect_eq(back.grh.sgid_index, 1);
}

Test(transport_ud, immediate_data_carried)
{
	struct ibv_wc wc;

	post_recv_b(9, 200);
	cr_assert_eq(post_send_a(3, 16, QKEY, IBV_WR_SEND_WITH_IMM), 0);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	wc = wait_wc(b.cq, 9);
	cr_expect(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_expect_eq(wc.imm_data, htobe32(0xfeedbeef));
}

Test(transport_ud, wrong_qkey_dropped_and_counted)
{
	struct ibv_wc wc;

	post_recv_b(10, 200);
	cr_assert_eq(post_send_a(4, 16, 0x2222, IBV_WR_SEND), 0);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	cr_expect_eq(b.tqp.stats.qkey_violations, 1);
	cr_expect_eq(harness_send_pending(a.qp), 0);
	wc = wait_wc(a.cq, 4);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "UD sends complete whether delivered or not");
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "the receive WQE is still posted");
}

Test(transport_ud, wrong_pkey_dropped_and_counted)
{
	struct ibv_wc wc;

	b.tqp.pkey = 0x1234; /* another partition than A's default one */
	post_recv_b(12, 200);
	cr_assert_eq(post_send_a(7, 16, QKEY, IBV_WR_SEND), 0);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	cr_expect_eq(b.tqp.stats.pkey_violations, 1);
	cr_expect_eq(b.tqp.stats.rcvd_pkts, 1, "taken by the QP, then dropped");
	cr_expect_eq(ibv_poll_cq(b.cq, 1, &wc), 0, "the receive WQE is still posted");
}

Test(transport_ud, privileged_qkey_uses_the_qps)
{
	struct ibv_wc wc;

	post_recv_b(11, 200);
	cr_assert_eq(post_send_a(5, 16, 0x80000000u, IBV_WR_SEND), 0);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	wc = wait_wc(b.cq, 11);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
}

Test(transport_ud, no_receive_wqe_drops)
{
	cr_assert_eq(post_send_a(6, 16, QKEY, IBV_WR_SEND), 0);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	cr_expect_eq(b.tqp.stats.out_of_buffer, 1);
}

/*
 * A datagram longer than the receive buffers (GRH area included) consumes the WQE, which
 * completes with IBV_WC_LOC_LEN_ERR; the QP stays in RTS, so that no sender can end a UD QP.
 */
Test(transport_ud, short_receive_buffer_completes_loc_len_err)
{
	struct ibv_wc wc;

	post_recv_b(12, 40 + 99);
	cr_assert_eq(post_send_a(7, 100, QKEY, IBV_WR_SEND), 0);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	cr_expect_eq(wait_wc(a.cq, 7).status, IBV_WC_SUCCESS, "UD sends complete once sent");
	wc = wait_wc(b.cq, 12);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.qp_num, b.qp->qp_num, "the QP the datagram came to");
	cr_expect_eq(droce_verbs_qp_state(b.qp), IBV_QPS_RTS, "the QP stays in RTS");
	cr_expect_eq(b.tqp.stats.resp_local_length_error, 1);
	cr_expect_eq(b.tqp.stats.resp_cqe_error, 1);
	cr_expect_eq(droce_ring_cons_avail(&b.tqp.rq), 0, "the receive WQE was consumed");
}

/* A receive buffer without room for the 40-byte GRH area cannot take even a 0-byte datagram. */
Test(transport_ud, receive_buffer_without_grh_room_completes_loc_len_err)
{
	struct ibv_wc wc;

	post_recv_b(20, 39);
	post_recv_b(21, 40);
	cr_assert_eq(post_send_a(30, 0, QKEY, IBV_WR_SEND), 0);
	cr_assert_eq(post_send_a(31, 0, QKEY, IBV_WR_SEND), 0);
	cr_expect_eq(droce_tqp_send(&env, &a.tqp, 0, 16), 2);
	wc = wait_wc(b.cq, 20);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR, "39 bytes: %s", ibv_wc_status_str(wc.status));
	wc = wait_wc(b.cq, 21);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "40 bytes: %s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, 40, "the GRH area alone");
	cr_expect_eq(droce_verbs_qp_state(b.qp), IBV_QPS_RTS, "the QP stays in RTS");
	cr_expect_eq(b.tqp.stats.resp_local_length_error, 1);
}

Test(transport_ud, short_receive_buffer_then_the_next_datagram_that_fits)
{
	struct ibv_wc wc;

	post_recv_b(13, 40 + 99);
	post_recv_b(14, 40 + 99);
	cr_assert_eq(post_send_a(8, 100, QKEY, IBV_WR_SEND), 0);
	cr_assert_eq(post_send_a(10, 99, QKEY, IBV_WR_SEND), 0);
	cr_expect_eq(droce_tqp_send(&env, &a.tqp, 0, 16), 2);
	wc = wait_wc(b.cq, 13);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR, "%s", ibv_wc_status_str(wc.status));
	wc = wait_wc(b.cq, 14);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, 40 + 99, "the datagram that fits");
	cr_expect_eq(b.tqp.stats.resp_local_length_error, 1);
	cr_expect_eq(droce_verbs_qp_state(b.qp), IBV_QPS_RTS);
}

/*
 * An SRQ's WQE of @p wqe_len bytes, too short for a datagram of @p datagram (GRH area
 * included), completes the same way; the next WQE (40 + @p fits bytes) takes the next one.
 */
static void srq_short(uint32_t wqe_len, uint32_t datagram, uint32_t fits)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct droce_srq_view v;
	struct droce_ring_cons ring;
	struct ibv_sge sge = {.addr = (uintptr_t)b.buf, .length = wqe_len, .lkey = b.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 14, .sg_list = &sge, .num_sge = 1}, *bad;
	struct ibv_wc wc;

	cr_assert_not_null(srq);
	cr_assert_eq(droce_verbs_srq_view(srq, &v), 0);
	cr_assert_eq(droce_ring_cons_attach(&ring, v.ring.addr, v.ring.len), 0);
	b.tqp.srq = &ring;
	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	wr.wr_id = 15;
	sge.length = 40 + fits;
	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	cr_assert_eq(post_send_a(11, datagram, QKEY, IBV_WR_SEND), 0);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	wc = wait_wc(b.cq, 14);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.qp_num, b.qp->qp_num, "the QP the datagram came to");
	cr_expect_eq(droce_ring_cons_avail(&ring), 1, "the short WQE consumed, the other posted");
	cr_expect_eq(b.tqp.stats.resp_local_length_error, 1);
	cr_expect_eq(droce_verbs_qp_state(b.qp), IBV_QPS_RTS, "the QP stays in RTS");
	cr_assert_eq(post_send_a(12, fits, QKEY, IBV_WR_SEND), 0);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	wc = wait_wc(b.cq, 15);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, 40 + fits, "the datagram that fits");
	cr_expect_eq(droce_ring_cons_avail(&ring), 0);
	b.tqp.srq = NULL;
}

Test(transport_ud, short_srq_receive_buffer_completes_loc_len_err)
{
	srq_short(40 + 99, 100, 99);
}

Test(transport_ud, srq_receive_buffer_without_grh_room_completes_loc_len_err)
{
	/* 39 bytes: no room for the GRH area, not even with an empty datagram */
	srq_short(39, 0, 0);
}

Test(transport_ud, bad_lkey_is_a_protection_error_and_sqe)
{
	struct ibv_sge sge = {.addr = (uintptr_t)a.buf, .length = 8, .lkey = a.mr->lkey + 1};
	struct ibv_send_wr wr =
				   {
					   .wr_id = 13,
					   .sg_list = &sge,
					   .num_sge = 1,
					   .opcode = IBV_WR_SEND,
					   .wr = {.ud = {.ah = ah_b,
							 .remote_qpn = b.qp->qp_num,
							 .remote_qkey = QKEY}},
				   },
			   *bad;
	struct ibv_wc wc;

	cr_assert_eq(ibv_post_send(a.qp, &wr, &bad), 0);
	cr_assert_eq(post_send_a(14, 8, QKEY, IBV_WR_SEND), 0);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	wc = wait_wc(a.cq, 13);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR, "errors complete even unsignaled");
	cr_expect_eq(droce_verbs_qp_state(a.qp), IBV_QPS_SQE);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	wc = wait_wc(a.cq, 14);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "what follows in SQE is flushed");
	cr_expect_eq(frames, 0);
}

Test(transport_ud, waits_for_the_neighbour_then_gives_up)
{
	struct ibv_wc wc;

	neigh_known = false;
	cr_assert_eq(post_send_a(15, 8, QKEY, IBV_WR_SEND), 0);
	cr_expect_eq(droce_tqp_send(&env, &a.tqp, 100, 16), 0);
	cr_expect_eq(ibv_poll_cq(a.cq, 1, &wc), 0, "still waiting");
	cr_expect_eq(droce_tqp_send(&env, &a.tqp, 100 + 3000000, 16), 1);
	wc = wait_wc(a.cq, 15);
	cr_expect_eq(a.tqp.stats.neigh_drop, 1);
	cr_expect_eq(frames, 0);
}

Test(transport_ud, message_over_mtu_is_a_length_error)
{
	struct ibv_wc wc;

	port.mtu_bytes = 1024;
	cr_assert_eq(post_send_a(16, 2000, QKEY, IBV_WR_SEND), 0);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	wc = wait_wc(a.cq, 16);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR);
}

Test(transport_ud, frame_fields_on_the_wire)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct droce_hdr_fields f;
	struct droce_addr ad;
	struct droce_pkt pkt;
	uint16_t id;

	post_recv_b(17, 200);
	cr_assert_eq(post_send_a(18, 33, QKEY, IBV_WR_SEND), 0);
	droce_tqp_send(&env, &a.tqp, 0, 16);
	cr_assert_not_null(last_frame);
	cr_assert_eq(droce_parse_mbuf(last_frame, &cfg, &pkt), DROCE_PARSE_OK);
	droce_pkt_fields(&pkt, rte_pktmbuf_mtod(last_frame, const uint8_t *), &f);
	droce_pkt_addr(&pkt, rte_pktmbuf_mtod(last_frame, const uint8_t *), &ad, &id);
	cr_expect_eq(f.opcode, DROCE_OP_UD_SEND_ONLY);
	cr_expect_eq(f.pkey, 0xffff);
	cr_expect_eq(f.deth.qkey, QKEY);
	cr_expect_eq(f.deth.sqpn, a.qp->qp_num);
	cr_expect_eq(pkt.pad, 3);
	cr_expect_eq(ad.udp_sport, droce_udp_sport_for_qps(0, a.qp->qp_num, b.qp->qp_num));
	cr_expect_eq(ad.ttl, 64);
	cr_expect(ad.ipv4_df);
}
