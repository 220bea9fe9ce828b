/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zero-byte operations through the extended send API (ibv_wr_*) on the embedded engine:
 * RDMA WRITE and READ of 0 bytes on RC, SEND of 0 bytes on RC and UD, with no data setter,
 * with ibv_wr_set_sge_list(qp, 0, NULL) and with an empty inline list. Each must be accepted
 * by ibv_wr_complete() and complete like the same operation posted by ibv_post_send(): the
 * requester's completion IBV_WC_SUCCESS, a receiver's completion byte_len 0 (UD: the GRH's
 * 40 bytes only).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "pair_harness.h"

#define UD_GRH 40u

static struct pair_end e0, e1;
static struct pair_opts opts;

/* The first end's QP again, created by ibv_create_qp_ex() with send_ops_flags. */
static struct ibv_qp *qpx_qp;

static void replace_qp_with_ex(void)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = e0.cq,
		.recv_cq = e0.cq,
		.cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 1},
		.qp_type = opts.type,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = e0.pd,
		.send_ops_flags = opts.type == IBV_QPT_UD
					  ? IBV_QP_EX_WITH_SEND
					  : IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
						    IBV_QP_EX_WITH_RDMA_READ,
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qkey = opts.qkey,
				.qp_access_flags = opts.qp_access};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	qpx_qp = ibv_create_qp_ex(e0.ctx, &ia);
	cr_assert_not_null(qpx_qp, "create_qp_ex: %s", strerror(errno));
	mask |= opts.type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	cr_assert_eq(ibv_modify_qp(qpx_qp, &a, mask), 0, "INIT: %s", strerror(errno));
}

/* RC: e0's QP_EX connected to e1's QP and e1's QP to it; UD needs e1 only to answer. */
static void setup_type(enum ibv_qp_type type)
{
	opts = pair_opts_default(type);
	pair_open(&opts, &e0, &e1);
	replace_qp_with_ex();
	pair_qp_connect(&opts, qpx_qp, &e1.gid, e1.qp->qp_num);
	if (type == IBV_QPT_RC) {
		struct ibv_qp_attr r = {.qp_state = IBV_QPS_RESET};

		cr_assert_eq(ibv_modify_qp(e1.qp, &r, IBV_QP_STATE), 0, "e1 to RESET");
		r.qp_state = IBV_QPS_INIT;
		r.port_num = 1;
		r.qp_access_flags = opts.qp_access;
		cr_assert_eq(ibv_modify_qp(e1.qp, &r,
					   IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						   IBV_QP_ACCESS_FLAGS),
			     0, "e1 to INIT: %s", strerror(errno));
		pair_qp_connect(&opts, e1.qp, &e0.gid, qpx_qp->qp_num);
	}
}

static void setup_rc(void)
{
	setup_type(IBV_QPT_RC);
}

static void setup_ud(void)
{
	setup_type(IBV_QPT_UD);
}

TestSuite(wr_zero_rc, .init = setup_rc, .timeout = 60);
TestSuite(wr_zero_ud, .init = setup_ud, .timeout = 60);

/* How the WR's (absent) data is given. */
enum zero_data { NO_SETTER, EMPTY_SGE_LIST, EMPTY_INLINE_LIST };

static void set_zero_data(struct ibv_qp_ex *qpx, enum zero_data how)
{
	switch (how) {
	case NO_SETTER:
		break;
	case EMPTY_SGE_LIST:
		ibv_wr_set_sge_list(qpx, 0, NULL);
		break;
	case EMPTY_INLINE_LIST:
		ibv_wr_set_inline_data_list(qpx, 0, NULL);
		break;
	}
}

static void post_zero(uint64_t id, enum ibv_wr_opcode op, enum zero_data how)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qpx_qp);
	int rc;

	cr_assert_not_null(qpx, "ibv_qp_to_qp_ex");
	ibv_wr_start(qpx);
	qpx->wr_id = id;
	qpx->wr_flags = IBV_SEND_SIGNALED | (how == EMPTY_INLINE_LIST ? IBV_SEND_INLINE : 0);
	switch (op) {
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(qpx, e1.mr->rkey, (uintptr_t)e1.buf + 64);
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(qpx, e1.mr->rkey, (uintptr_t)e1.buf + 64);
		break;
	default:
		ibv_wr_send(qpx);
		break;
	}
	set_zero_data(qpx, how);
	if (opts.type == IBV_QPT_UD)
		ibv_wr_set_ud_addr(qpx, e0.ah, e1.qp->qp_num, e0.qkey);
	rc = ibv_wr_complete(qpx);
	cr_assert_eq(rc, 0, "ibv_wr_complete of a zero-byte WR (%d): %s", (int)how, strerror(rc));
}

static void expect_success(uint64_t id, const char *what)
{
	struct ibv_wc wc = pair_wait_wc(e0.cq, id);

	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s: %s", what, ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, 0, "%s: requester byte_len %u", what, wc.byte_len);
}

static void zero_write(enum zero_data how)
{
	e1.buf[64] = 0x5a;
	post_zero(1, IBV_WR_RDMA_WRITE, how);
	expect_success(1, "WRITE of 0 bytes");
	cr_expect_eq(e1.buf[64], 0x5a, "a zero-byte WRITE changed the target");
}

static void zero_read(enum zero_data how)
{
	e0.buf[0] = 0xa5;
	post_zero(2, IBV_WR_RDMA_READ, how);
	expect_success(2, "READ of 0 bytes");
	cr_expect_eq(e0.buf[0], 0xa5, "a zero-byte READ changed the local buffer");
}

static void zero_send(enum zero_data how, uint32_t expect_len)
{
	struct ibv_wc wc;

	pair_post_recv(&e1, 100, 0, 4096, 0);
	post_zero(3, IBV_WR_SEND, how);
	expect_success(3, "SEND of 0 bytes");
	wc = pair_wait_wc(e1.cq, 100);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "receive: %s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_RECV, "receive opcode %d", wc.opcode);
	cr_expect_eq(wc.byte_len, expect_len, "receive byte_len %u", wc.byte_len);
}

Test(wr_zero_rc, write_without_setter)
{
	zero_write(NO_SETTER);
}

Test(wr_zero_rc, write_empty_sge_list)
{
	zero_write(EMPTY_SGE_LIST);
}

Test(wr_zero_rc, write_empty_inline_list)
{
	zero_write(EMPTY_INLINE_LIST);
}

Test(wr_zero_rc, read_without_setter)
{
	zero_read(NO_SETTER);
}

Test(wr_zero_rc, read_empty_sge_list)
{
	zero_read(EMPTY_SGE_LIST);
}

Test(wr_zero_rc, send_empty_sge_list)
{
	zero_send(EMPTY_SGE_LIST, 0);
}

Test(wr_zero_ud, send_without_setter)
{
	zero_send(NO_SETTER, UD_GRH);
}

Test(wr_zero_ud, send_empty_sge_list)
{
	zero_send(EMPTY_SGE_LIST, UD_GRH);
}

Test(wr_zero_ud, send_empty_inline_list)
{
	zero_send(EMPTY_INLINE_LIST, UD_GRH);
}

/*
 * An SGE of length 0 means 2^31 bytes (ibv_post_send(3); the project's reading of the verbs
 * documents): through ibv_wr_* it is what ibv_post_send() makes of it, on RC a WRITE the
 * 1 MiB MR cannot source, completed with the same status by both paths.
 */
Test(wr_zero_rc, sge_of_length_0_as_post_send)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qpx_qp);
	struct ibv_sge s = {.addr = (uintptr_t)e0.buf, .length = 0, .lkey = e0.mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 5,
				 .sg_list = &s,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr = {.rdma = {.remote_addr = (uintptr_t)e1.buf,
						 .rkey = e1.mr->rkey}}},
			   *bad;
	struct ibv_wc classic, ex;

	cr_assert_eq(ibv_post_send(qpx_qp, &wr, &bad), 0, "ibv_post_send: %s", strerror(errno));
	classic = pair_wait_wc(e0.cq, 5);
	cr_expect_neq(classic.status, IBV_WC_SUCCESS, "2^31 bytes from a 1 MiB MR");
	/* the first error moved the QP to ERR: the second WR completes flushed, so compare a
	 * fresh QP's answer */
	setup_rc();
	qpx = ibv_qp_to_qp_ex(qpx_qp);
	ibv_wr_start(qpx);
	qpx->wr_id = 6;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, e1.mr->rkey, (uintptr_t)e1.buf);
	ibv_wr_set_sge(qpx, e0.mr->lkey, (uintptr_t)e0.buf, 0);
	cr_assert_eq(ibv_wr_complete(qpx), 0, "ibv_wr_complete");
	ex = pair_wait_wc(e0.cq, 6);
	cr_expect_eq(ex.status, classic.status, "ibv_wr_*: %s, ibv_post_send: %s",
		     ibv_wc_status_str(ex.status), ibv_wc_status_str(classic.status));
}

/* UD: 2^31 bytes exceed the one-packet message, refused by both paths with EINVAL. */
Test(wr_zero_ud, sge_of_length_0_refused_as_post_send)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qpx_qp);
	struct ibv_sge s = {.addr = (uintptr_t)e0.buf, .length = 0, .lkey = e0.mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 7,
				 .sg_list = &s,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr = {.ud = {.ah = e0.ah,
					       .remote_qpn = e1.qp->qp_num,
					       .remote_qkey = e0.qkey}}},
			   *bad;

	cr_expect_eq(ibv_post_send(qpx_qp, &wr, &bad), EINVAL, "ibv_post_send");
	ibv_wr_start(qpx);
	qpx->wr_id = 8;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, e0.mr->lkey, (uintptr_t)e0.buf, 0);
	ibv_wr_set_ud_addr(qpx, e0.ah, e1.qp->qp_num, e0.qkey);
	cr_expect_eq(ibv_wr_complete(qpx), EINVAL, "ibv_wr_complete");
}
