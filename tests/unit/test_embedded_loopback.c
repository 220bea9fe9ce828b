/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Local loopback on the embedded engine: two QPs of the same port, addressed by
 * the port's own GIDs, talk to each other (what perftest or an application does
 * with both ends on one device). The frames go round the port's loopback ring and
 * never reach the link: the port at the link's other end receives nothing.
 */
#include <droce_engine.h>

#include "loop_pair.h"

static void setup_rc_ipv4(void)
{
	setup_rc(1); /* ::ffff:10.0.0.1 */
}

static void setup_rc_ipv6(void)
{
	setup_rc(0); /* the link-local GID */
}

static void stats(const char *port, struct droce_engine_port_stats *st)
{
	cr_assert_eq(droce_engine_port_stats(port, st), 0);
}

static void send_write_read(void)
{
	struct ibv_sge sge = {.addr = (uintptr_t)e1.buf, .length = MSG_LEN, .lkey = e1.mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 99, .sg_list = &sge, .num_sge = 1}, *rbad;
	struct droce_engine_port_stats s0, s1;
	struct ibv_wc wc;

	fill(e0.buf, MSG_LEN, 1);
	cr_assert_eq(ibv_post_recv(e1.qp, &rwr, &rbad), 0);
	post_send(&e0, IBV_WR_SEND, MSG_LEN, &e1);
	wc = wait_wc(e0.cq);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "SEND: %s", ibv_wc_status_str(wc.status));
	wc = wait_wc(e1.cq);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "receive: %s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, MSG_LEN);
	cr_expect(memcmp(e0.buf, e1.buf, MSG_LEN) == 0, "SEND bytes");

	fill(e0.buf, MSG_LEN, 2);
	post_send(&e0, IBV_WR_RDMA_WRITE, MSG_LEN, &e1);
	wc = wait_wc(e0.cq);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "WRITE: %s", ibv_wc_status_str(wc.status));
	cr_expect(memcmp(e0.buf, e1.buf, MSG_LEN) == 0, "WRITE bytes");

	fill(e1.buf, MSG_LEN, 3);
	post_send(&e0, IBV_WR_RDMA_READ, MSG_LEN, &e1);
	wc = wait_wc(e0.cq);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "READ: %s", ibv_wc_status_str(wc.status));
	cr_expect(memcmp(e0.buf, e1.buf, MSG_LEN) == 0, "READ bytes");

	memset(e1.buf, 0, 8);
	post_send(&e0, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, &e1);
	wc = wait_wc(e0.cq);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "FETCH_ADD: %s", ibv_wc_status_str(wc.status));
	cr_expect_eq(*(uint64_t *)e1.buf, 5);

	stats("droce0", &s0);
	stats("droce1", &s1);
	cr_expect_gt(s0.loopback_pkts, 3 * MSG_LEN / 1024, "every packet went round the loop");
	cr_expect_eq(s0.loopback_dropped, 0);
	cr_expect_eq(s0.tx_pkts, 0, "nothing reached the link");
	cr_expect_eq(s1.rx_pkts, 0, "the link's other end received nothing");
}

Test(embedded_loopback, rc_through_the_ipv4_gid, .init = setup_rc_ipv4, .timeout = 60)
{
	send_write_read();
}

Test(embedded_loopback, rc_through_the_link_local_gid, .init = setup_rc_ipv6, .timeout = 60)
{
	send_write_read();
}

Test(embedded_loopback, ud_to_its_own_port, .timeout = 60)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1234};
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	struct ibv_sge rsge, ssge;
	struct ibv_recv_wr rwr = {.wr_id = 1, .sg_list = &rsge, .num_sge = 1}, *rbad;
	struct ibv_send_wr swr = {.wr_id = 2,
				  .sg_list = &ssge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED},
			   *sbad;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	open_droce0();
	end_create(&e0, IBV_QPT_UD);
	end_create(&e1, IBV_QPT_UD);
	for (int i = 0; i < 2; i++) {
		struct end *x = i == 0 ? &e0 : &e1;

		a.qp_state = IBV_QPS_INIT;
		cr_assert_eq(
			ibv_modify_qp(x->qp, &a,
				      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
			0);
		a.qp_state = IBV_QPS_RTR;
		cr_assert_eq(ibv_modify_qp(x->qp, &a, IBV_QP_STATE), 0);
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		cr_assert_eq(ibv_modify_qp(x->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	}
	cr_assert_eq(ibv_query_gid(ctx, 1, 1, &aa.grh.dgid), 0);
	aa.grh.sgid_index = 1;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(pd, &aa);
	cr_assert_not_null(ah);
	rsge = (struct ibv_sge){
		.addr = (uintptr_t)e1.buf, .length = 1024 + 40, .lkey = e1.mr->lkey};
	cr_assert_eq(ibv_post_recv(e1.qp, &rwr, &rbad), 0);
	fill(e0.buf, 1000, 4);
	ssge = (struct ibv_sge){.addr = (uintptr_t)e0.buf, .length = 1000, .lkey = e0.mr->lkey};
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = e1.qp->qp_num;
	swr.wr.ud.remote_qkey = 0x1234;
	cr_assert_eq(ibv_post_send(e0.qp, &swr, &sbad), 0);
	wc = wait_wc(e0.cq);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	wc = wait_wc(e1.cq);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, 1000 + 40, "payload and the GRH area");
	cr_expect_eq(wc.src_qp, e0.qp->qp_num);
	cr_expect(memcmp(e1.buf + 40, e0.buf, 1000) == 0, "bytes after the GRH area");
}
