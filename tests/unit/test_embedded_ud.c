/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The libibverbs API alone, on the embedded engine: DROCE_DEVICES names two
 * ports joined back to back, ibv_open_device() starts the engine, and a UD
 * message goes from droce0 to droce1 with nothing but verbs calls.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pair_harness.h"

#define QKEY 0x4791

static struct pair_end e0, e1;

static void setup(void)
{
	struct pair_opts o = pair_opts_default(IBV_QPT_UD);

	o.qkey = QKEY;
	o.buf_len = 8192;
	o.max_send_wr = o.max_recv_wr = 32;
	o.cq_depth = 64;
	o.mr_access = IBV_ACCESS_LOCAL_WRITE;
	pair_open(&o, &e0, &e1);
}

TestSuite(embedded_ud, .init = setup, .timeout = 60);

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n != 0)
			return n;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 10);
	return 0;
}

Test(embedded_ud, ports_active_once_the_engine_runs)
{
	struct ibv_port_attr pa;

	cr_assert_eq(ibv_query_port(e0.ctx, 1, &pa), 0);
	cr_expect_eq(pa.state, IBV_PORT_ACTIVE);
	cr_expect_eq(pa.active_mtu, IBV_MTU_4096);
}

Test(embedded_ud, messages_both_ways)
{
	union ibv_gid g0, g1;
	struct ibv_wc wc;

	cr_assert_eq(ibv_query_gid(e0.ctx, 1, 1, &g0), 0);
	cr_assert_eq(ibv_query_gid(e1.ctx, 1, 1, &g1), 0);
	for (int round = 0; round < 50; round++) {
		struct pair_end *from = round % 2 ? &e1 : &e0, *to = round % 2 ? &e0 : &e1;
		struct ibv_ah_attr aa = {
			.is_global = 1,
			.port_num = 1,
			.grh = {.dgid = round % 2 ? g0 : g1, .sgid_index = 1, .hop_limit = 64}};
		struct ibv_ah *ah = ibv_create_ah(from->pd, &aa);
		uint32_t len = (uint32_t)(round * 80 % 4096);
		struct ibv_sge rs = {
			.addr = (uintptr_t)to->buf, .length = 4200, .lkey = to->mr->lkey};
		struct ibv_recv_wr rwr = {.wr_id = 100 + (uint64_t)round,
					  .sg_list = &rs,
					  .num_sge = 1},
				   *rbad;
		struct ibv_sge ss = {
			.addr = (uintptr_t)from->buf, .length = len, .lkey = from->mr->lkey};
		struct ibv_send_wr swr =
					   {
						   .wr_id = (uint64_t)round,
						   .sg_list = &ss,
						   .num_sge = len ? 1 : 0,
						   .opcode = IBV_WR_SEND_WITH_IMM,
						   .send_flags = IBV_SEND_SIGNALED,
						   .imm_data = htobe32((uint32_t)round),
						   .wr = {.ud = {.ah = ah,
								 .remote_qpn = to->qp->qp_num,
								 .remote_qkey = QKEY}},
					   },
				   *sbad;

		cr_assert_not_null(ah);
		for (uint32_t i = 0; i < len; i++)
			from->buf[i] = (uint8_t)(i + (uint32_t)round);
		cr_assert_eq(ibv_post_recv(to->qp, &rwr, &rbad), 0);
		cr_assert_eq(ibv_post_send(from->qp, &swr, &sbad), 0);
		cr_assert_eq(poll_one(from->cq, &wc), 1, "round %d: no send completion", round);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert_eq(poll_one(to->cq, &wc), 1, "round %d: no receive completion", round);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.wr_id, 100 + (uint64_t)round);
		cr_expect_eq(wc.byte_len, 40 + len);
		cr_expect_eq(be32toh(wc.imm_data), (uint32_t)round);
		cr_expect_arr_eq(to->buf + 40, from->buf, len, "round %d", round);
		ibv_destroy_ah(ah);
	}
}

/* Move a QP through RESET and back to RTS with verbs calls. */
static void reset_and_rearm(struct pair_end *x)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};

	cr_assert_eq(ibv_modify_qp(x->qp, &a, IBV_QP_STATE), 0, "to RESET");
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = QKEY;
	cr_assert_eq(ibv_modify_qp(x->qp, &a,
				   IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
		     0, "RESET to INIT after traffic");
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(ibv_modify_qp(x->qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	cr_assert_eq(ibv_modify_qp(x->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

static void one_message(uint64_t id)
{
	union ibv_gid g1;
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1, .grh = {.sgid_index = 1}};
	struct ibv_ah *ah;
	struct ibv_sge rs = {.addr = (uintptr_t)e1.buf, .length = 256, .lkey = e1.mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = id, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_sge ss = {.addr = (uintptr_t)e0.buf, .length = 64, .lkey = e0.mr->lkey};
	struct ibv_send_wr swr = {.wr_id = id,
				  .sg_list = &ss,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED},
			   *sbad;
	struct ibv_wc wc;

	cr_assert_eq(ibv_query_gid(e1.ctx, 1, 1, &g1), 0);
	aa.grh.dgid = g1;
	ah = ibv_create_ah(e0.pd, &aa);
	cr_assert_not_null(ah);
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = e1.qp->qp_num;
	swr.wr.ud.remote_qkey = QKEY;
	cr_assert_eq(ibv_post_recv(e1.qp, &rwr, &rbad), 0);
	cr_assert_eq(ibv_post_send(e0.qp, &swr, &sbad), 0);
	cr_assert_eq(poll_one(e0.cq, &wc), 1, "message %llu: no send completion",
		     (unsigned long long)id);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(poll_one(e1.cq, &wc), 1, "message %llu: no receive completion",
		     (unsigned long long)id);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	ibv_destroy_ah(ah);
}

Test(embedded_ud, qp_reused_after_reset)
{
	one_message(1);
	one_message(2);
	reset_and_rearm(&e0);
	reset_and_rearm(&e1);
	one_message(3);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;

	cr_assert_eq(ibv_query_qp(e0.qp, &qa, IBV_QP_STATE, &qia), 0);
	cr_expect_eq(qa.qp_state, IBV_QPS_RTS);
}

Test(embedded_ud, forked_child_exits)
{
	pid_t pid;
	int st = 0;

	one_message(4);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		exit(7); /* runs the atexit handlers: the engine's must not wait for the parent's
			    lcore */
	for (int i = 0; i < 500 && waitpid(pid, &st, WNOHANG) == 0; i++)
		usleep(10000);
	cr_assert(WIFEXITED(st), "the child did not exit within 5 s");
	cr_expect_eq(WEXITSTATUS(st), 7);
	one_message(5);
}
