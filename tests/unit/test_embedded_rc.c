/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The libibverbs API alone, on the embedded engine: DROCE_DEVICES names two
 * ports joined back to back, ibv_open_device() starts the engine, and RC and
 * UC QPs connected across them carry every operation with nothing but verbs
 * calls.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#define DEVICES                                                      \
	"droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,mtu=4200,link=l0 " \
	"droce1:mac=02:00:00:00:00:02,ip=10.0.0.2,mtu=4200,link=l0"
#define BUF_LEN (4u << 20)
#define MIB     (1u << 20)

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

static void end_open(struct end *x, struct ibv_device *dev, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = type,
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qp_access_flags =
					IBV_ACCESS_REMOTE_WRITE |
					(type == IBV_QPT_RC
						 ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC
						 : 0)};

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
	cr_assert_not_null(x->qp, "create_qp: %s", strerror(errno));
	x->mr = ibv_reg_mr(x->pd, x->buf, BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	cr_assert_not_null(x->mr);
	cr_assert_eq(ibv_query_gid(x->ctx, 1, 1, &x->gid), 0);
	cr_assert_eq(
		ibv_modify_qp(x->qp, &a,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		0);
}

static void end_connect(struct end *x, const struct end *peer, enum ibv_qp_type type)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qp->qp_num,
		.rq_psn = 0x123,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = {.is_global = 1,
			    .port_num = 1,
			    .grh = {.dgid = peer->gid, .sgid_index = 1, .hop_limit = 64}},
	};
	int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	int rts = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (type == IBV_QPT_RC) {
		rtr |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		rts |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC;
	}
	cr_assert_eq(ibv_modify_qp(x->qp, &a, rtr), 0, "RTR: %s", strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	cr_assert_eq(ibv_modify_qp(x->qp, &a, rts), 0, "RTS: %s", strerror(errno));
}

static void setup_type(enum ibv_qp_type type)
{
	struct ibv_device **list;
	int n;

	setenv("DROCE_DEVICES", DEVICES, 1);
	list = ibv_get_device_list(&n);
	cr_assert_eq(n, 2);
	end_open(&e0, list[0], type);
	end_open(&e1, list[1], type);
	ibv_free_device_list(list);
	end_connect(&e0, &e1, type);
	end_connect(&e1, &e0, type);
}

static void setup_rc(void)
{
	setup_type(IBV_QPT_RC);
}

static void setup_uc(void)
{
	setup_type(IBV_QPT_UC);
}

TestSuite(embedded_rc, .init = setup_rc, .timeout = 60);
TestSuite(embedded_uc, .init = setup_uc, .timeout = 60);

/* Poll for one completion; a liveness bound only. */
static struct ibv_wc wait_wc(struct ibv_cq *cq, uint64_t id)
{
	struct timespec t0, t;
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n != 0) {
			cr_assert_eq(n, 1);
			cr_assert_eq(wc.wr_id, id, "completion %llu instead of %llu",
				     (unsigned long long)wc.wr_id, (unsigned long long)id);
			return wc;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 20);
	cr_assert_fail("no completion for %llu", (unsigned long long)id);
	return wc;
}

static void post_recv(struct end *x, uint64_t id, uint32_t len)
{
	struct ibv_sge s = {.addr = (uintptr_t)x->buf, .length = len, .lkey = x->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1}, *bad;

	cr_assert_eq(ibv_post_recv(x->qp, &wr, &bad), 0);
}

static void post_send(struct end *x, const struct end *to, uint64_t id, enum ibv_wr_opcode op,
		      uint32_t off, uint32_t len, uint32_t roff)
{
	struct ibv_sge s = {.addr = (uintptr_t)x->buf + off, .length = len, .lkey = x->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = id,
				 .sg_list = &s,
				 .num_sge = len ? 1 : 0,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED,
				 .imm_data = htobe32((uint32_t)id)},
			   *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = (uintptr_t)to->buf + roff;
		wr.wr.atomic.rkey = to->mr->rkey;
		wr.wr.atomic.compare_add = 3;
		wr.wr.atomic.swap = 11;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)to->buf + roff;
		wr.wr.rdma.rkey = to->mr->rkey;
	}
	cr_assert_eq(ibv_post_send(x->qp, &wr, &bad), 0);
}

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 31 + seed);
}

static const uint32_t sizes[] = {0, 1, 1023, 1024, 1025, MIB};

static void sends_both_ways(void)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]) * 2; i++) {
		struct end *from = i % 2 ? &e1 : &e0, *to = i % 2 ? &e0 : &e1;
		uint32_t len = sizes[i / 2];
		struct ibv_wc wc;

		fill(from->buf + MIB, len, i);
		post_recv(to, 100 + i, MIB + 64);
		post_send(from, to, i, IBV_WR_SEND_WITH_IMM, MIB, len, 0);
		wc = wait_wc(from->cq, i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%u: %s", len,
			     ibv_wc_status_str(wc.status));
		wc = wait_wc(to->cq, 100 + i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%u: %s", len,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.byte_len, len);
		cr_expect_eq(be32toh(wc.imm_data), i);
		cr_expect(memcmp(to->buf, from->buf + MIB, len) == 0, "size %u: bytes", len);
	}
}

/*
 * RC: the WRITE's completion means the data is placed. UC completes a WRITE once
 * sent, so the immediate's receive completion tells when the data is there.
 */
static void writes(enum ibv_wr_opcode op)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		struct ibv_wc wc;

		fill(e0.buf, len, i + 7);
		if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
			post_recv(&e1, 100 + i, 0);
		post_send(&e0, &e1, i, op, 0, len, 2 * MIB);
		wc = wait_wc(e0.cq, i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
		if (op == IBV_WR_RDMA_WRITE_WITH_IMM) {
			wc = wait_wc(e1.cq, 100 + i);
			cr_expect_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
			cr_expect_eq(wc.byte_len, len);
		}
		cr_expect(memcmp(e1.buf + 2 * MIB, e0.buf, len) == 0, "size %u: bytes", len);
	}
}

Test(embedded_rc, sends_both_ways_every_size)
{
	sends_both_ways();
}

Test(embedded_rc, writes_every_size)
{
	writes(IBV_WR_RDMA_WRITE);
}

Test(embedded_rc, writes_with_imm_every_size)
{
	writes(IBV_WR_RDMA_WRITE_WITH_IMM);
}

Test(embedded_rc, reads_every_size)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		struct ibv_wc wc;

		fill(e1.buf + MIB, len, i + 9);
		memset(e0.buf, 0, len);
		post_send(&e0, &e1, i, IBV_WR_RDMA_READ, 0, len, MIB);
		wc = wait_wc(e0.cq, i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
		cr_expect(memcmp(e0.buf, e1.buf + MIB, len) == 0, "size %u: bytes", len);
	}
}

Test(embedded_rc, atomics)
{
	uint64_t *remote = (uint64_t *)(e1.buf + 64), *local = (uint64_t *)(e0.buf + 128);
	struct ibv_wc wc;

	*remote = 3;
	post_send(&e0, &e1, 1, IBV_WR_ATOMIC_CMP_AND_SWP, 128, 8, 64);
	wc = wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(*local, 3);
	cr_expect_eq(*remote, 11);
	post_send(&e0, &e1, 2, IBV_WR_ATOMIC_FETCH_AND_ADD, 128, 8, 64);
	wc = wait_wc(e0.cq, 2);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(*local, 11);
	cr_expect_eq(*remote, 14);
}

Test(embedded_rc, rnr_then_receive_posted)
{
	struct ibv_wc wc;

	post_send(&e0, &e1, 1, IBV_WR_SEND, 0, 100, 0);
	post_recv(&e1, 10, 4096);
	wc = wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	wc = wait_wc(e1.cq, 10);
	cr_expect_eq(wc.byte_len, 100);
}

Test(embedded_rc, remote_access_error_moves_to_error)
{
	struct ibv_sge s = {.addr = (uintptr_t)e0.buf, .length = 8, .lkey = e0.mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 1,
				 .sg_list = &s,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr = {.rdma = {.remote_addr = (uintptr_t)e1.buf,
						 .rkey = e1.mr->rkey ^ 0x80}}},
			   *bad;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;

	cr_assert_eq(ibv_post_send(e0.qp, &wr, &bad), 0);
	wc = wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	cr_assert_eq(ibv_query_qp(e0.qp, &attr, IBV_QP_STATE, &init), 0);
	cr_expect_eq(attr.qp_state, IBV_QPS_ERR);
}

Test(embedded_uc, sends_both_ways_every_size)
{
	sends_both_ways();
}

Test(embedded_uc, writes_with_imm_every_size)
{
	writes(IBV_WR_RDMA_WRITE_WITH_IMM);
}
