/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zero-copy TX through the engine (doc/transport.md, "Zero copy"): with zero_copy=auto on a
 * ring link (a driver that copies in software) RC WRITEs and READ responses of full packets
 * leave with their payload by reference to the MR, short ones are copied; without the key
 * (off, the default) every frame is copied;
 * the bytes arrive whole either way, and an MR deregistered right after its WQEs complete
 * waits for nothing the engine still holds. Verbs calls only.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "droce_counters.h"
#include "droce_engine.h"
#include "droce_mr.h"
#include "droce_verbs_engine.h"

#define DEV0    "droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,mtu=4200,link=l0"
#define DEV1    "droce1:mac=02:00:00:00:00:02,ip=10.0.0.2,mtu=4200,link=l0"
#define BUF_LEN (4u << 20)
#define MSG_LEN (1u << 20)

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	union ibv_gid gid;
	uint8_t *buf;
};

static struct end e0, e1;

static void end_open(struct end *x, struct ibv_device *dev)
{
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qp_access_flags =
					IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};

	x->buf = aligned_alloc(4096, BUF_LEN);
	cr_assert_not_null(x->buf);
	x->ctx = ibv_open_device(dev);
	cr_assert_not_null(x->ctx);
	x->pd = ibv_alloc_pd(x->ctx);
	x->cq = ibv_create_cq(x->ctx, 256, NULL, NULL, 0);
	cr_assert_not_null(x->cq);
	ia.send_cq = x->cq;
	ia.recv_cq = x->cq;
	x->qp = ibv_create_qp(x->pd, &ia);
	cr_assert_not_null(x->qp);
	x->mr = ibv_reg_mr(x->pd, x->buf, BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ);
	cr_assert_not_null(x->mr);
	cr_assert_eq(ibv_query_gid(x->ctx, 1, 1, &x->gid), 0);
	cr_assert_eq(
		ibv_modify_qp(x->qp, &a,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		0);
}

static void end_connect(struct end *x, const struct end *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_4096,
		.dest_qp_num = peer->qp->qp_num,
		.rq_psn = 1,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = {.is_global = 1,
			    .port_num = 1,
			    .grh = {.dgid = peer->gid, .sgid_index = 1, .hop_limit = 64}},
	};

	cr_assert_eq(ibv_modify_qp(x->qp, &a,
				   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					   IBV_QP_MIN_RNR_TIMER),
		     0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
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

static void setup_with(const char *extra)
{
	struct ibv_device **list;
	char devices[512];
	int n;

	snprintf(devices, sizeof(devices), "%s%s %s%s", DEV0, extra, DEV1, extra);
	setenv("DROCE_DEVICES", devices, 1);
	list = ibv_get_device_list(&n);
	cr_assert_eq(n, 2);
	end_open(&e0, list[0]);
	end_open(&e1, list[1]);
	ibv_free_device_list(list);
	end_connect(&e0, &e1);
	end_connect(&e1, &e0);
}

static void setup_auto(void)
{
	setup_with(",zero_copy=auto");
}

static void setup_off(void)
{
	setup_with(""); /* the default */
}

TestSuite(zero_copy, .init = setup_auto, .timeout = 60);
TestSuite(zero_copy_off, .init = setup_off, .timeout = 60);

static uint64_t qp_counter(const struct ibv_qp *qp, const char *name)
{
	struct droce_counter c[128];
	int n = droce_engine_qp_counters(qp->qp_num, c, 128);

	cr_assert_gt(n, 0);
	for (int i = 0; i < n && i < 128; i++)
		if (strcmp(c[i].name, name) == 0)
			return c[i].value;
	cr_assert_fail("no counter %s", name);
	return 0;
}

static void op(enum ibv_wr_opcode opcode, uint32_t off, uint32_t len, uint32_t roff)
{
	struct ibv_sge s = {.addr = (uintptr_t)e0.buf + off, .length = len, .lkey = e0.mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 7,
				 .sg_list = &s,
				 .num_sge = 1,
				 .opcode = opcode,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct timespec t0, t;
	struct ibv_wc wc;
	int got;

	wr.wr.rdma.remote_addr = (uintptr_t)e1.buf + roff;
	wr.wr.rdma.rkey = e1.mr->rkey;
	cr_assert_eq(ibv_post_send(e0.qp, &wr, &bad), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((got = ibv_poll_cq(e0.cq, 1, &wc)) == 0) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		cr_assert_lt(t.tv_sec - t0.tv_sec, 20, "no completion");
	}
	cr_assert_eq(got, 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
}

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

Test(zero_copy, large_write_goes_by_reference)
{
	fill(e0.buf, MSG_LEN, 1);
	op(IBV_WR_RDMA_WRITE, 0, MSG_LEN, MSG_LEN);
	cr_expect(memcmp(e1.buf + MSG_LEN, e0.buf, MSG_LEN) == 0, "the bytes arrived whole");
	cr_expect_geq(qp_counter(e0.qp, "zc_frames"), MSG_LEN / 4096,
		      "every full packet by reference");
}

Test(zero_copy, short_write_is_copied)
{
	uint64_t before = qp_counter(e0.qp, "zc_frames");

	fill(e0.buf, 100, 2);
	op(IBV_WR_RDMA_WRITE, 0, 100, 0);
	cr_expect(memcmp(e1.buf, e0.buf, 100) == 0);
	cr_expect_eq(qp_counter(e0.qp, "zc_frames"), before, "100 bytes are copied");
}

Test(zero_copy, read_responses_go_by_reference)
{
	fill(e1.buf + 2 * MSG_LEN, MSG_LEN, 3);
	op(IBV_WR_RDMA_READ, 0, MSG_LEN, 2 * MSG_LEN);
	cr_expect(memcmp(e0.buf, e1.buf + 2 * MSG_LEN, MSG_LEN) == 0);
	cr_expect_geq(qp_counter(e1.qp, "zc_frames"), MSG_LEN / 4096, "the responder's packets");
}

Test(zero_copy, dereg_right_after_completion)
{
	fill(e0.buf, MSG_LEN, 4);
	op(IBV_WR_RDMA_WRITE, 0, MSG_LEN, MSG_LEN);
	/* every frame of the completed WRITE was freed before its completion: nothing to wait */
	cr_expect_eq(droce_mr_busy(droce_verbs_mr_table(), e0.mr->lkey), 0,
		     "the WRITE completed once its frames were freed");
	cr_expect_eq(ibv_dereg_mr(e0.mr), 0);
	cr_expect(memcmp(e1.buf + MSG_LEN, e0.buf, MSG_LEN) == 0);
}

Test(zero_copy_off, every_frame_copied)
{
	fill(e0.buf, MSG_LEN, 5);
	op(IBV_WR_RDMA_WRITE, 0, MSG_LEN, MSG_LEN);
	cr_expect(memcmp(e1.buf + MSG_LEN, e0.buf, MSG_LEN) == 0);
	cr_expect_eq(qp_counter(e0.qp, "zc_frames"), 0, "off by default");
}
