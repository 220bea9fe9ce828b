/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_post_send(): the send-side rules of the seed documents (ibv_post_send
 * tutorial and ibv_post_send(3)), one test each: the opcode x QP type table,
 * the QP states a post is refused, held or flushed in, and the return values,
 * bad_wr and the fields a WQE carries. The harness (post_send_harness.h) takes
 * what the verbs layer publishes on the send ring, as droce's engine will, and
 * writes the completions the engine would write; the library fakes none.
 * SGEs and inline data: test_verbs_post_send_sge.c; atomics and send flags:
 * test_verbs_post_send_flags.c; UD and memory windows: test_verbs_post_send_ud_mw.c.
 *
 * Decision of droce checked here (the seed leaves it open):
 * - Keys are the engine's to check: post never looks at an rkey.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "post_send_harness.h"

TestSuite(post_send, .init = setup);
TestSuite(post_send_table, .init = setup);
TestSuite(post_send_state, .init = setup);
TestSuite(post_send_ret, .init = setup);

/* ------------------------------------------- opcode x QP type (the seed's table) */

struct cell {
	enum ibv_wr_opcode op;
	enum ibv_qp_type type;
	bool ok;
	uint8_t wqe_op; /* what the engine must see when accepted */
};

/* ibv_post_send(3): the opcode table, its RC, UC and UD columns; SEND_WITH_INV is RC's only
 * (no UC opcode carries an IETH: test_verbs_post_opcode.c). */
static const struct {
	enum ibv_wr_opcode op;
	bool rc, uc, ud;
	uint8_t wqe_op;
} opcode_table[] = {
	{IBV_WR_SEND, true, true, true, DROCE_WQE_SEND},
	{IBV_WR_SEND_WITH_IMM, true, true, true, DROCE_WQE_SEND_IMM},
	{IBV_WR_RDMA_WRITE, true, true, false, DROCE_WQE_WRITE},
	{IBV_WR_RDMA_WRITE_WITH_IMM, true, true, false, DROCE_WQE_WRITE_IMM},
	{IBV_WR_RDMA_READ, true, false, false, DROCE_WQE_READ},
	{IBV_WR_ATOMIC_CMP_AND_SWP, true, false, false, DROCE_WQE_CMP_SWAP},
	{IBV_WR_ATOMIC_FETCH_AND_ADD, true, false, false, DROCE_WQE_FETCH_ADD},
	{IBV_WR_LOCAL_INV, true, true, false, DROCE_WQE_LOCAL_INV},
	{IBV_WR_BIND_MW, true, true, false, DROCE_WQE_BIND_MW},
	{IBV_WR_SEND_WITH_INV, true, false, false, DROCE_WQE_SEND_INV},
	/* not droce's: TSO (raw packet QPs), driver-private and atomic-write opcodes */
	{IBV_WR_TSO, false, false, false, 0},
	{IBV_WR_DRIVER1, false, false, false, 0},
	{IBV_WR_ATOMIC_WRITE, false, false, false, 0},
	{(enum ibv_wr_opcode)99, false, false, false, 0},
};

static struct cell cells[3 * DIM(opcode_table)];

ParameterizedTestParameters(post_send_table, opcode_by_qp_type)
{
	for (size_t i = 0; i < DIM(opcode_table); i++) {
		uint8_t w = opcode_table[i].wqe_op;

		cells[3 * i] = (struct cell){opcode_table[i].op, IBV_QPT_RC, opcode_table[i].rc, w};
		cells[3 * i + 1] =
			(struct cell){opcode_table[i].op, IBV_QPT_UC, opcode_table[i].uc, w};
		cells[3 * i + 2] =
			(struct cell){opcode_table[i].op, IBV_QPT_UD, opcode_table[i].ud, w};
	}
	return cr_make_param_array(struct cell, cells, DIM(cells));
}

ParameterizedTest(struct cell *c, post_send_table, opcode_by_qp_type)
{
	struct ibv_qp *qp = qp_rts(c->type);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;
	char what[96];

	snprintf(what, sizeof(what), "%s on %s", op_name(c->op), type_name(c->type));
	wr_fill(qp, c->op, &wr, &sge);
	if (!c->ok) {
		expect_refused(qp, &wr, EINVAL, what);
		return;
	}
	expect_posted(qp, &wr, &s, what);
	cr_expect_eq(s.hdr.op, c->wqe_op, "%s: WQE op %u, want %u", what, s.hdr.op, c->wqe_op);
	cr_expect_eq(s.hdr.wr_id, wr.wr_id, "%s: WQE wr_id 0x%llx", what,
		     (unsigned long long)s.hdr.wr_id);
}

/* ------------------------------------------------------------ QP states */

/* Move @p qp to @p st with IBV_QP_STATE alone. */
static int qp_modify_state(struct ibv_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = {.qp_state = st};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* RESET -> INIT of an RC QP, with the attributes the harness uses. */
static void rc_to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qp_access_flags =
					IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};

	cr_assert_eq(
		ibv_modify_qp(qp, &a,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		0, "RC QP to INIT");
}

/* INIT -> RTR of an RC QP. */
static void rc_to_rtr(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR,
				.path_mtu = IBV_MTU_1024,
				.dest_qp_num = 0x12,
				.max_dest_rd_atomic = 1,
				.min_rnr_timer = 12,
				.ah_attr = {.is_global = 1,
					    .port_num = 1,
					    .grh = {.sgid_index = 1, .hop_limit = 64}}};

	cr_assert_eq(ibv_modify_qp(qp, &a,
				   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					   IBV_QP_MIN_RNR_TIMER),
		     0, "RC QP to RTR");
}

static void post_one_send(struct ibv_qp *qp, uint64_t wr_id, int *rc, struct ibv_send_wr **bad,
			  struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	wr_fill(qp, IBV_WR_SEND, wr, sge);
	wr->wr_id = wr_id;
	*bad = NULL;
	*rc = ibv_post_send(qp, wr, bad);
}

Test(post_send_state, reset_refused_at_once)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 0);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_refused(qp, &wr, EINVAL, "SEND on a RESET QP");
}

Test(post_send_state, init_refused_at_once)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 0);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	rc_to_init(qp);
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_refused(qp, &wr, EINVAL, "SEND on an INIT QP");
}

Test(post_send_state, rtr_refused_at_once)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 0);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	rc_to_init(qp);
	rc_to_rtr(qp);
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_refused(qp, &wr, EINVAL, "SEND on an RTR QP");
}

Test(post_send_state, ud_init_refused_at_once)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_UD, 4, 64, 0);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = UD_QKEY};
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	cr_assert_eq(
		ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
		0, "UD QP to INIT");
	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_refused(qp, &wr, EINVAL, "SEND on an INIT UD QP");
}

Test(post_send_state, rts_published)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	expect_posted(qp, &wr, &s, "SEND on an RTS QP");
	cr_expect_eq(s.hdr.op, DROCE_WQE_SEND, "WQE op %u is not SEND", s.hdr.op);
}

Test(post_send_state, sqd_accepted_and_held)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	int rc;

	cr_assert_eq(qp_modify_state(qp, IBV_QPS_SQD), 0, "RTS -> SQD");
	post_one_send(qp, 0x5d, &rc, &bad, &wr, &sge);
	cr_expect_eq(rc, 0, "SEND on an SQD QP returned %d (%s)", rc, strerror(rc));
	cr_expect_eq(harness_send_pending(qp), 1, "the WQE is published for the engine to hold");
	cr_expect_eq(droce_verbs_qp_state(qp), IBV_QPS_SQD,
		     "the engine sees SQD and does not start the WQE");
}

/* Post on a QP in an error state; the engine flushes: IBV_WC_WR_FLUSH_ERR with the wr_id. */
static void expect_flushed(struct ibv_qp *qp, const char *what)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	int rc;

	post_one_send(qp, 0xf1005e, &rc, &bad, &wr, &sge);
	cr_expect_eq(rc, 0, "%s: post returned %d (%s)", what, rc, strerror(rc));
	cr_expect_eq(harness_send_pending(qp), 1, "%s: the WQE is published", what);
	cr_expect_eq(harness_complete_sends(qp, IBV_WC_WR_FLUSH_ERR), 1,
		     "%s: the engine flushes one WQE", what);
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "%s: a completion is polled", what);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s: status %s", what,
		     ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, 0xf1005e, "%s: wr_id 0x%llx", what, (unsigned long long)wc.wr_id);
	cr_expect_eq(wc.qp_num, qp->qp_num, "%s: qp_num %u", what, wc.qp_num);
}

Test(post_send_state, sqe_by_engine_accepted_and_flushed)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UC);

	cr_assert_eq(droce_verbs_qp_error(qp, IBV_QPS_SQE, 0), 0, "engine moves the QP to SQE");
	expect_flushed(qp, "UC QP in SQE");
}

Test(post_send_state, sqe_ud_by_engine_accepted_and_flushed)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UD);

	cr_assert_eq(droce_verbs_qp_error(qp, IBV_QPS_SQE, 0), 0, "engine moves the QP to SQE");
	expect_flushed(qp, "UD QP in SQE");
}

Test(post_send_state, err_by_engine_accepted_and_flushed)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);

	cr_assert_eq(droce_verbs_qp_error(qp, IBV_QPS_ERR, 0), 0, "engine moves the QP to ERR");
	expect_flushed(qp, "RC QP in ERR (engine)");
}

Test(post_send_state, err_by_modify_accepted_and_flushed)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);

	cr_assert_eq(qp_modify_state(qp, IBV_QPS_ERR), 0, "modify to ERR");
	expect_flushed(qp, "RC QP in ERR (modify)");
}

Test(post_send_state, err_from_reset_by_modify_accepted)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 0);

	cr_assert_eq(qp_modify_state(qp, IBV_QPS_ERR), 0, "RESET -> ERR");
	expect_flushed(qp, "RC QP moved to ERR from RESET");
}

/* ------------------------------------------------------------ return values, bad_wr */

Test(post_send_ret, queue_full_in_one_list)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	uint32_t n = cap.max_send_wr + 1, i;
	struct ibv_send_wr wr[64], *bad = NULL;
	struct ibv_sge sge[64];
	struct harness_send s;
	int rc;

	cr_assert(n <= DIM(wr), "max_send_wr %u fits the test", cap.max_send_wr);
	for (i = 0; i < n; i++) {
		wr_fill(qp, IBV_WR_SEND, &wr[i], &sge[i]);
		wr[i].wr_id = i;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	rc = ibv_post_send(qp, wr, &bad);
	cr_expect_eq(rc, ENOMEM, "max_send_wr + 1 WRs: returned %d (%s), want ENOMEM", rc,
		     strerror(rc));
	cr_expect_eq(bad, &wr[n - 1], "bad_wr is WR %ld, want the last (%u)",
		     bad != NULL ? (long)(bad - wr) : -1L, n - 1);
	cr_expect_eq(harness_send_pending(qp), (int)cap.max_send_wr,
		     "the %u WRs before it are posted", cap.max_send_wr);
	for (i = 0; i + 1 < n; i++) {
		cr_assert(harness_take_send(qp, &s), "WQE %u", i);
		cr_expect_eq(s.hdr.wr_id, i, "WQE %u has wr_id %llu", i,
			     (unsigned long long)s.hdr.wr_id);
	}
}

Test(post_send_ret, queue_full_across_posts_then_room_again)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct harness_send s;
	uint32_t i;
	int rc;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	for (i = 0; i < cap.max_send_wr; i++)
		cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0, "WR %u of max_send_wr", i);
	rc = ibv_post_send(qp, &wr, &bad);
	cr_expect_eq(rc, ENOMEM, "full queue: returned %d (%s)", rc, strerror(rc));
	cr_expect_eq(bad, &wr, "bad_wr on the refused WR");
	cr_assert(harness_take_send(qp, &s), "the engine takes one WQE");
	rc = ibv_post_send(qp, &wr, &bad);
	cr_expect_eq(rc, 0, "a slot was freed: returned %d (%s)", rc, strerror(rc));
	cr_expect_eq(harness_send_pending(qp), (int)cap.max_send_wr, "the ring is full again");
}

Test(post_send_ret, efault_when_the_engine_breaks_the_ring)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct droce_qp_view v;
	struct droce_ring *ring;
	uint32_t i;
	int rc;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	for (i = 0; i < cap.max_send_wr; i++)
		cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0, "WR %u of max_send_wr", i);
	/* a consumer index no correct engine could write: ahead of everything published */
	cr_assert_eq(droce_verbs_qp_view(qp, &v), 0, "QP view");
	ring = v.sq.addr;
	__atomic_store_n(&ring->cons.idx, cap.max_send_wr + 100, __ATOMIC_RELEASE);
	rc = ibv_post_send(qp, &wr, &bad);
	cr_expect_eq(rc, EFAULT, "corrupt send ring: returned %d (%s), want EFAULT", rc,
		     strerror(rc));
	cr_expect_eq(bad, &wr, "bad_wr on the WR not posted");
}

Test(post_send_ret, bad_wr_in_the_middle)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr[5], *bad = NULL;
	struct ibv_sge sge[5];
	struct harness_send s;
	int rc;

	for (int i = 0; i < 5; i++) {
		wr_fill(qp, IBV_WR_SEND, &wr[i], &sge[i]);
		wr[i].wr_id = 0x700 + (uint64_t)i;
		wr[i].next = i < 4 ? &wr[i + 1] : NULL;
	}
	wr[2].num_sge = -1;
	rc = ibv_post_send(qp, wr, &bad);
	cr_expect_eq(rc, EINVAL, "returned %d (%s), want EINVAL", rc, strerror(rc));
	cr_expect_eq(bad, &wr[2], "bad_wr is WR %ld, want 2", bad != NULL ? (long)(bad - wr) : -1L);
	cr_expect_eq(harness_send_pending(qp), 2, "the two WRs before it are posted, %d WQEs",
		     harness_send_pending(qp));
	cr_assert(harness_take_send(qp, &s), "WQE 0");
	cr_expect_eq(s.hdr.wr_id, 0x700, "WQE 0 wr_id 0x%llx", (unsigned long long)s.hdr.wr_id);
	cr_assert(harness_take_send(qp, &s), "WQE 1");
	cr_expect_eq(s.hdr.wr_id, 0x701, "WQE 1 wr_id 0x%llx", (unsigned long long)s.hdr.wr_id);
	cr_expect_eq(harness_send_pending(qp), 0, "nothing after the bad WR is posted");
}

Test(post_send_ret, bad_first_wr_nothing_posted)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];
	int rc;

	for (int i = 0; i < 3; i++) {
		wr_fill(qp, IBV_WR_SEND, &wr[i], &sge[i]);
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[0].opcode = IBV_WR_TSO;
	rc = ibv_post_send(qp, wr, &bad);
	cr_expect_eq(rc, EINVAL, "returned %d (%s), want EINVAL", rc, strerror(rc));
	cr_expect_eq(bad, &wr[0], "bad_wr is the first WR");
	cr_expect_eq(harness_send_pending(qp), 0, "no WR is posted");
}

Test(post_send_ret, wrong_state_bad_wr_is_first)
{
	struct ibv_qp *qp = qp_new(IBV_QPT_RC, 4, 64, 0);
	struct ibv_send_wr wr[2], *bad = NULL;
	struct ibv_sge sge[2];
	int rc;

	wr_fill(qp, IBV_WR_SEND, &wr[0], &sge[0]);
	wr_fill(qp, IBV_WR_SEND, &wr[1], &sge[1]);
	wr[0].next = &wr[1];
	rc = ibv_post_send(qp, wr, &bad);
	cr_expect_eq(rc, EINVAL, "RESET: returned %d (%s), want EINVAL", rc, strerror(rc));
	cr_expect_eq(bad, &wr[0], "bad_wr is the first WR of the list");
	cr_expect_eq(harness_send_pending(qp), 0, "nothing is posted");
}

Test(post_send_ret, list_posted_in_order)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	static const enum ibv_wr_opcode ops[] = {IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
						 IBV_WR_ATOMIC_FETCH_AND_ADD};
	struct ibv_send_wr wr[4], *bad = NULL;
	struct ibv_sge sge[4];
	struct harness_send s;

	for (unsigned int i = 0; i < 4; i++) {
		wr_fill(qp, ops[i], &wr[i], &sge[i]);
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	cr_assert_eq(ibv_post_send(qp, wr, &bad), 0, "post four WRs");
	for (unsigned int i = 0; i < 4; i++) {
		cr_assert(harness_take_send(qp, &s), "WQE %u", i);
		cr_expect_eq(s.hdr.wr_id, wr[i].wr_id, "WQE %u is %s", i, op_name(ops[i]));
	}
}

Test(post_send_ret, wr_id_in_completion)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;

	wr_fill(qp, IBV_WR_SEND, &wr, &sge);
	wr.wr_id = 0xdeadbeefcafef00dull;
	wr.send_flags = IBV_SEND_SIGNALED;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0, "post");
	cr_expect_eq(harness_complete_sends(qp, IBV_WC_SUCCESS), 1, "the engine completes it");
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "one completion");
	cr_expect_eq(wc.wr_id, 0xdeadbeefcafef00dull, "wr_id 0x%llx", (unsigned long long)wc.wr_id);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "status %s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_SEND, "opcode %d", wc.opcode);
	cr_expect_eq(wc.byte_len, 64, "byte_len %u", wc.byte_len);
	cr_expect_eq(wc.qp_num, qp->qp_num, "qp_num %u", wc.qp_num);
}

Test(post_send_ret, wr_ids_in_completion_order)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];
	struct ibv_wc wc[3];

	for (int i = 0; i < 3; i++) {
		wr_fill(qp, i == 1 ? IBV_WR_RDMA_READ : IBV_WR_SEND, &wr[i], &sge[i]);
		wr[i].wr_id = 0xa0 + (uint64_t)i;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	cr_assert_eq(ibv_post_send(qp, wr, &bad), 0, "post three");
	cr_expect_eq(harness_complete_sends(qp, IBV_WC_SUCCESS), 3, "the engine completes three");
	cr_assert_eq(ibv_poll_cq(cq, 3, wc), 3, "three completions");
	for (int i = 0; i < 3; i++)
		cr_expect_eq(wc[i].wr_id, 0xa0 + (uint64_t)i, "completion %d wr_id 0x%llx", i,
			     (unsigned long long)wc[i].wr_id);
	cr_expect_eq(wc[1].opcode, IBV_WC_RDMA_READ, "completion 1 is the READ");
}

Test(post_send_ret, imm_data_carried_big_endian)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;
	const uint8_t want[4] = {0x12, 0x34, 0x56, 0x78};

	wr_fill(qp, IBV_WR_SEND_WITH_IMM, &wr, &sge);
	wr.imm_data = htonl(0x12345678);
	expect_posted(qp, &wr, &s, "SEND_WITH_IMM");
	cr_expect_eq(s.hdr.imm, htonl(0x12345678), "imm 0x%08x as posted", s.hdr.imm);
	cr_expect_arr_eq(&s.hdr.imm, want, 4, "imm bytes in network order");
}

Test(post_send_ret, write_imm_data_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_UC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_RDMA_WRITE_WITH_IMM, &wr, &sge);
	wr.imm_data = htonl(0xfeedf00d);
	expect_posted(qp, &wr, &s, "RDMA_WRITE_WITH_IMM");
	cr_expect_eq(s.hdr.imm, htonl(0xfeedf00d), "imm 0x%08x as posted", s.hdr.imm);
	cr_expect_eq(s.hdr.u.rdma.remote_addr, REMOTE_VA, "remote_addr");
	cr_expect_eq(s.hdr.u.rdma.rkey, REMOTE_KEY, "rkey");
}

Test(post_send_ret, rdma_fields_carried)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct harness_send s;

	wr_fill(qp, IBV_WR_RDMA_READ, &wr, &sge);
	wr.wr.rdma.remote_addr = 0x123456789abcull;
	wr.wr.rdma.rkey = 0x77665544;
	expect_posted(qp, &wr, &s, "RDMA_READ");
	cr_expect_eq(s.hdr.u.rdma.remote_addr, 0x123456789abcull, "remote_addr");
	cr_expect_eq(s.hdr.u.rdma.rkey, 0x77665544, "rkey (not checked at post)");
	cr_expect_eq(s.hdr.length, 64, "length");
}

Test(post_send_ret, empty_list_is_success)
{
	struct ibv_qp *qp = qp_rts(IBV_QPT_RC);
	struct ibv_send_wr *bad = NULL;

	cr_expect_eq(ibv_post_send(qp, NULL, &bad), 0, "an empty list posts nothing");
	cr_expect_eq(harness_send_pending(qp), 0, "nothing on the ring");
}
