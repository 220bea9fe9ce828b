/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbours through the engine. Static entries (DROCE_DEVICES neigh=IP@MAC): a port sends
 * to a peer it has a static entry for without asking for its MAC (no ARP request, no
 * neighbour solicitation); without the entry the same traffic asks first. A destination
 * nobody answers for: a UD send to it waits in the port's queue, not in the send queue, so
 * the sends behind it go at once and it is dropped when resolution fails; an RC QP to it
 * ends in RETRY_EXC_ERR instead of waiting for ever.
 */
#include <unistd.h>

#include "ud_pair.h"

#define STATIC ",neigh=10.0.0.2@02:00:00:00:00:02,neigh=fd00::2@02:00:00:00:00:02"

static void open_both(bool with_static)
{
	ud_pair_open(with_static ? ",ip=fd00::1" STATIC : ",ip=fd00::1", ",ip=fd00::2");
}

static uint64_t neigh_requests(struct ibv_context *ctx)
{
	return port_counter(ctx, "neigh_requests");
}

Test(embedded_neigh, ipv4_peer_without_arp, .timeout = 60)
{
	open_both(true);
	send_one(1); /* ::ffff:10.0.0.2 */
	cr_expect_eq(neigh_requests(e0.ctx), 0, "the static entry answered");
}

Test(embedded_neigh, ipv6_peer_without_solicitation, .timeout = 60)
{
	open_both(true);
	send_one(2); /* fd00::2 */
	cr_expect_eq(neigh_requests(e0.ctx), 0, "the static entry answered");
}

Test(embedded_neigh, without_the_entry_the_port_asks, .timeout = 60)
{
	open_both(false);
	send_one(1);
	cr_expect_geq(neigh_requests(e0.ctx), 1, "an ARP request went out");
}

/* ------------------------------------------------------------ nobody answers */

Test(embedded_neigh, ud_send_behind_a_dead_destination_goes_at_once, .timeout = 60)
{
	union ibv_gid dead = {.raw = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 9}};
	union ibv_gid peer;
	struct ibv_sge rs;
	struct ibv_recv_wr rwr = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_ah *ah_dead, *ah_peer;
	struct ibv_wc wc;

	open_both(true); /* the peer has a static entry: only 10.0.0.9 is unknown */
	cr_assert_eq(ibv_query_gid(e1.ctx, 1, 1, &peer), 0);
	ah_dead = ah_to(&dead, 1);
	ah_peer = ah_to(&peer, 1);
	rs = (struct ibv_sge){.addr = (uintptr_t)e1.buf, .length = 1064, .lkey = e1.mr->lkey};
	cr_assert_eq(ibv_post_recv(e1.qp, &rwr, &rbad), 0);
	post_ud(ah_dead, 10);
	post_ud(ah_peer, 11);
	wc = wait_wc(e1.cq);
	cr_expect_eq(wc.byte_len, 100 + 40, "the send behind the dead one arrived");
	cr_expect_eq(port_counter(e0.ctx, "neigh_queue_dropped"), 0,
		     "while the dead one still waits for its MAC in the port's queue");
	cr_expect_eq(wait_wc(e0.cq).wr_id, 10, "send completions in order");
	cr_expect_eq(wait_wc(e0.cq).wr_id, 11);
	/* resolution fails after three requests a second apart; the frame goes with it (or at
	 * the latest after 5 s); bounded by liveness, not by a timing claim */
	for (int i = 0; i < 600 && (port_counter(e0.ctx, "neigh_queue_dropped") == 0 ||
				    port_counter(e0.ctx, "neigh_failed") == 0);
	     i++)
		usleep(50000);
	cr_expect_eq(port_counter(e0.ctx, "neigh_queue_dropped"), 1,
		     "dropped, its destination never resolved");
	cr_expect_geq(port_counter(e0.ctx, "neigh_failed"), 1);
}

Test(embedded_neigh, rc_to_a_dead_destination_ends_in_retry_exceeded, .timeout = 60)
{
	union ibv_gid dead = {.raw = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 9}};
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};
	struct ibv_sge sge;
	struct ibv_send_wr wr = {.wr_id = 7,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc;

	open_both(false);
	cq = ibv_create_cq(e0.ctx, 8, NULL, NULL, 0);
	cr_assert_not_null(cq);
	ia.send_cq = ia.recv_cq = cq;
	qp = ibv_create_qp(e0.pd, &ia);
	cr_assert_not_null(qp);
	cr_assert_eq(
		ibv_modify_qp(qp, &a,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		0);
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = 0x99,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = {.is_global = 1,
			    .port_num = 1,
			    .grh = {.dgid = dead, .sgid_index = 1, .hop_limit = 64}}};
	cr_assert_eq(ibv_modify_qp(qp, &a,
				   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					   IBV_QP_MIN_RNR_TIMER),
		     0);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 10; /* 4 ms */
	a.retry_cnt = 2;
	a.rnr_retry = 0;
	a.max_rd_atomic = 1;
	cr_assert_eq(ibv_modify_qp(qp, &a,
				   IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					   IBV_QP_MAX_QP_RD_ATOMIC),
		     0);
	sge = (struct ibv_sge){.addr = (uintptr_t)e0.buf, .length = 10, .lkey = e0.mr->lkey};
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0);
	wc = wait_wc(cq);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, 7);
}

Test(embedded_neigh, first_burst_to_a_new_peer_loses_nothing, .timeout = 60)
{
	union ibv_gid peer;
	struct ibv_ah *ah;
	unsigned int got = 0;

	open_both(false); /* droce0 must ask for droce1's MAC first */
	cr_assert_eq(ibv_query_gid(e1.ctx, 1, 1, &peer), 0);
	ah = ah_to(&peer, 1);
	for (int i = 0; i < 100; i++) {
		struct ibv_sge rs = {
			.addr = (uintptr_t)e1.buf, .length = 1064, .lkey = e1.mr->lkey};
		struct ibv_recv_wr rwr = {.wr_id = (uint64_t)i, .sg_list = &rs, .num_sge = 1},
				   *rbad;

		cr_assert_eq(ibv_post_recv(e1.qp, &rwr, &rbad), 0);
	}
	/* more than the port's unresolved queue (64) holds: the rest wait in the send queue */
	for (int i = 0; i < 100; i++)
		post_ud(ah, (uint64_t)i);
	for (int i = 0; i < 100; i++)
		got += wait_wc(e1.cq).status == IBV_WC_SUCCESS;
	cr_expect_eq(got, 100, "every one of the burst arrived");
	cr_expect_eq(port_counter(e0.ctx, "neigh_queue_dropped"), 0);
}
