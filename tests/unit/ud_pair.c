/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-device UD harness of ud_pair.h. */
#include <time.h>

#include <droce_counters.h>

#include "ud_pair.h"

struct pair_end e0, e1;

void ud_pair_open(const char *keys0, const char *keys1)
{
	struct pair_opts o = pair_opts_default(IBV_QPT_UD);

	o.keys[0] = keys0;
	o.keys[1] = keys1;
	o.eth_mtu = 1500;
	o.qkey = QKEY;
	o.buf_len = 4096;
	o.max_send_wr = o.max_recv_wr = 128;
	o.cq_depth = 512;
	o.mr_access = IBV_ACCESS_LOCAL_WRITE;
	pair_open(&o, &e0, &e1);
}

struct ibv_wc wait_wc(struct ibv_cq *cq)
{
	struct timespec t0, t;
	struct ibv_wc wc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			return wc;
		clock_gettime(CLOCK_MONOTONIC, &t);
		cr_assert_lt(t.tv_sec - t0.tv_sec, 20, "no completion");
	}
}

struct ibv_ah *ah_to(const union ibv_gid *dgid, int sgid_index)
{
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	struct ibv_ah *ah;

	aa.grh.dgid = *dgid;
	aa.grh.sgid_index = (uint8_t)sgid_index;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(e0.pd, &aa);
	cr_assert_not_null(ah);
	return ah;
}

void post_ud(struct ibv_ah *ah, uint64_t id)
{
	struct ibv_sge ss = {.addr = (uintptr_t)e0.buf, .length = 100, .lkey = e0.mr->lkey};
	struct ibv_send_wr swr = {.wr_id = id,
				  .sg_list = &ss,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED},
			   *sbad;

	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = e1.qp->qp_num;
	swr.wr.ud.remote_qkey = QKEY;
	cr_assert_eq(ibv_post_send(e0.qp, &swr, &sbad), 0);
}

/* One UD SEND from droce0 to droce1 through droce1's GID @p gid_index. */
void send_one(int gid_index)
{
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	struct ibv_sge rs = {.addr = (uintptr_t)e1.buf, .length = 1064, .lkey = e1.mr->lkey};
	struct ibv_sge ss = {.addr = (uintptr_t)e0.buf, .length = 100, .lkey = e0.mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_send_wr swr = {.wr_id = 2,
				  .sg_list = &ss,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED},
			   *sbad;
	struct ibv_ah *ah;

	cr_assert_eq(ibv_query_gid(e1.ctx, 1, gid_index, &aa.grh.dgid), 0);
	aa.grh.sgid_index = (uint8_t)gid_index;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(e0.pd, &aa);
	cr_assert_not_null(ah);
	cr_assert_eq(ibv_post_recv(e1.qp, &rwr, &rbad), 0);
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = e1.qp->qp_num;
	swr.wr.ud.remote_qkey = QKEY;
	cr_assert_eq(ibv_post_send(e0.qp, &swr, &sbad), 0);
	cr_expect_eq(wait_wc(e0.cq).status, IBV_WC_SUCCESS);
	cr_expect_eq(wait_wc(e1.cq).byte_len, 100 + 40, "delivered");
}

uint64_t port_counter(struct ibv_context *ctx, const char *name)
{
	struct droce_counter c[128];
	int id = droce_counter_find(name);
	int n = droce_port_counters(ctx, 1, c, 128);

	cr_assert_geq(id, 0);
	cr_assert_gt(n, 0);
	for (int i = 0; i < n && i < 128; i++)
		if (c[i].id == (uint32_t)id)
			return c[i].value;
	cr_assert_fail("no %s counter", name);
	return 0;
}
