/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Local loopback on the embedded engine: two QPs of the same port, addressed by
 * the port's own GIDs, talk to each other (what perftest or an application does
 * with both ends on one device). The frames go round the port's loopback ring and
 * never reach the link: the port at the link's other end receives nothing.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include <droce_engine.h>

#define DEVICES                                                      \
	"droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,mtu=4200,link=l0 " \
	"droce1:mac=02:00:00:00:00:02,ip=10.0.0.2,mtu=4200,link=l0"
#define BUF_LEN (1u << 20)
#define MSG_LEN (256u * 1024) /* many packets at MTU 1024 */

struct end {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct end e0, e1;

static void end_create(struct end *x, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = type,
	};

	x->buf = aligned_alloc(4096, BUF_LEN);
	cr_assert_not_null(x->buf);
	memset(x->buf, 0, BUF_LEN);
	x->cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cr_assert_not_null(x->cq);
	ia.send_cq = x->cq;
	ia.recv_cq = x->cq;
	x->qp = ibv_create_qp(pd, &ia);
	cr_assert_not_null(x->qp);
	x->mr = ibv_reg_mr(pd, x->buf, BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	cr_assert_not_null(x->mr);
}

/* RC to RTS towards @p peer through the port's own GID @p gid_index. */
static void rc_connect(struct end *x, const struct end *peer, int gid_index)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags =
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};
	union ibv_gid gid;

	cr_assert_eq(ibv_query_gid(ctx, 1, gid_index, &gid), 0);
	cr_assert_eq(
		ibv_modify_qp(x->qp, &a,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		0);
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qp->qp_num,
		.rq_psn = 7,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = {.is_global = 1,
			    .port_num = 1,
			    .grh = {.dgid = gid,
				    .sgid_index = (uint8_t)gid_index,
				    .hop_limit = 64}},
	};
	cr_assert_eq(ibv_modify_qp(x->qp, &a,
				   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					   IBV_QP_MIN_RNR_TIMER),
		     0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 7;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	cr_assert_eq(ibv_modify_qp(x->qp, &a,
				   IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					   IBV_QP_MAX_QP_RD_ATOMIC),
		     0);
}

static void open_droce0(void)
{
	struct ibv_device **list;
	int n;

	setenv("DROCE_DEVICES", DEVICES, 1);
	list = ibv_get_device_list(&n);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(ibv_get_device_name(list[0]), "droce0");
	ctx = ibv_open_device(list[0]);
	cr_assert_not_null(ctx);
	ibv_free_device_list(list);
	pd = ibv_alloc_pd(ctx);
	cr_assert_not_null(pd);
}

static void setup_rc(int gid_index)
{
	open_droce0();
	end_create(&e0, IBV_QPT_RC);
	end_create(&e1, IBV_QPT_RC);
	rc_connect(&e0, &e1, gid_index);
	rc_connect(&e1, &e0, gid_index);
}

static void setup_rc_ipv4(void)
{
	setup_rc(1); /* ::ffff:10.0.0.1 */
}

static void setup_rc_ipv6(void)
{
	setup_rc(0); /* the link-local GID */
}

static struct ibv_wc wait_wc(struct ibv_cq *cq)
{
	struct timespec t0, t;
	struct ibv_wc wc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);

		cr_assert_geq(n, 0);
		if (n == 1)
			return wc;
		clock_gettime(CLOCK_MONOTONIC, &t);
		cr_assert_lt(t.tv_sec - t0.tv_sec, 20, "no completion");
	}
}

static void post_send(struct end *x, enum ibv_wr_opcode op, uint32_t len, const struct end *peer)
{
	struct ibv_sge sge = {.addr = (uintptr_t)x->buf, .length = len, .lkey = x->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = op,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)peer->buf;
		wr.wr.atomic.rkey = peer->mr->rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)peer->buf;
		wr.wr.rdma.rkey = peer->mr->rkey;
	}
	cr_assert_eq(ibv_post_send(x->qp, &wr, &bad), 0);
}

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 13 + seed + (i >> 10));
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
