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

#include "pair_harness.h"

#define MIB (1u << 20)

static struct pair_end e0, e1;

static void setup_type(enum ibv_qp_type type)
{
	struct pair_opts o = pair_opts_default(type);

	o.buf_len = 4 * MIB;
	pair_open(&o, &e0, &e1);
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

static void post_recv(struct pair_end *x, uint64_t id, uint32_t len)
{
	pair_post_recv(x, id, 0, len, 0);
}

/* Atomics compare with (or add) 3 and swap in 11. */
static void post_send(struct pair_end *x, const struct pair_end *to, uint64_t id,
		      enum ibv_wr_opcode op, uint32_t off, uint32_t len, uint32_t roff)
{
	const struct pair_wr w = {.id = id,
				  .op = op,
				  .off = off,
				  .len = len,
				  .roff = roff,
				  .compare_add = 3,
				  .swap = 11};

	pair_post_send(x, to, &w);
}

static const uint32_t sizes[] = {0, 1, 1023, 1024, 1025, MIB};

static void sends_both_ways(void)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]) * 2; i++) {
		struct pair_end *from = i % 2 ? &e1 : &e0, *to = i % 2 ? &e0 : &e1;
		uint32_t len = sizes[i / 2];
		struct ibv_wc wc;

		pair_fill(from->buf + MIB, len, i);
		post_recv(to, 100 + i, MIB + 64);
		post_send(from, to, i, IBV_WR_SEND_WITH_IMM, MIB, len, 0);
		wc = pair_wait_wc(from->cq, i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%u: %s", len,
			     ibv_wc_status_str(wc.status));
		wc = pair_wait_wc(to->cq, 100 + i);
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

		pair_fill(e0.buf, len, i + 7);
		if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
			post_recv(&e1, 100 + i, 0);
		post_send(&e0, &e1, i, op, 0, len, 2 * MIB);
		wc = pair_wait_wc(e0.cq, i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
		if (op == IBV_WR_RDMA_WRITE_WITH_IMM) {
			wc = pair_wait_wc(e1.cq, 100 + i);
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

		pair_fill(e1.buf + MIB, len, i + 9);
		memset(e0.buf, 0, len);
		post_send(&e0, &e1, i, IBV_WR_RDMA_READ, 0, len, MIB);
		wc = pair_wait_wc(e0.cq, i);
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
	wc = pair_wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(*local, 3);
	cr_expect_eq(*remote, 11);
	post_send(&e0, &e1, 2, IBV_WR_ATOMIC_FETCH_AND_ADD, 128, 8, 64);
	wc = pair_wait_wc(e0.cq, 2);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(*local, 11);
	cr_expect_eq(*remote, 14);
}

Test(embedded_rc, rnr_then_receive_posted)
{
	struct ibv_wc wc;

	post_send(&e0, &e1, 1, IBV_WR_SEND, 0, 100, 0);
	post_recv(&e1, 10, 4096);
	wc = pair_wait_wc(e0.cq, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	wc = pair_wait_wc(e1.cq, 10);
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
	wc = pair_wait_wc(e0.cq, 1);
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
