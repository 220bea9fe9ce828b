/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-QP loopback harness of loop_pair.h. */
#include <time.h>

#include "loop_pair.h"

struct ibv_context *ctx;
struct ibv_pd *pd;
struct end e0, e1;

void end_create(struct end *x, enum ibv_qp_type type)
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

void rc_connect(struct end *x, const struct end *peer, int gid_index)
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

void open_droce0(void)
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

void setup_rc(int gid_index)
{
	open_droce0();
	end_create(&e0, IBV_QPT_RC);
	end_create(&e1, IBV_QPT_RC);
	rc_connect(&e0, &e1, gid_index);
	rc_connect(&e1, &e0, gid_index);
}

struct ibv_wc wait_wc(struct ibv_cq *cq)
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

void post_send(struct end *x, enum ibv_wr_opcode op, uint32_t len, const struct end *peer)
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

void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 13 + seed + (i >> 10));
}
