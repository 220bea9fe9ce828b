/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs through the verbs API: creation (RC, UC, UD; caps; refusals),
 * ibv_modify_qp through every legal transition with the exact masks, states
 * the engine raises (SQE, ERR), ibv_query_qp, the rings emptied by RESET,
 * ibv_post_recv rules, QPN uniqueness and ibv_destroy_qp. The transition table
 * itself is checked in test_qp_attr.c; this file checks the QP object.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "verbs_harness.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static void setup(void)
{
	ctx = harness_open(&pd);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cr_assert_not_null(cq, "ibv_create_cq: %s", strerror(errno));
}

TestSuite(verbs_qp, .init = setup, .timeout = 30);

static const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : t == IBV_QPT_UD ? "UD" : "?";
}

static struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = {.max_send_wr = 8,
			.max_recv_wr = 8,
			.max_send_sge = 2,
			.max_recv_sge = 2,
			.max_inline_data = 32},
		.qp_type = type,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	cr_assert_not_null(qp, "ibv_create_qp(%s): %s", type_name(type), strerror(errno));
	return qp;
}

static enum ibv_qp_state query_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0, "ibv_query_qp");
	return a.qp_state;
}

/* ------------------------------------------------- transitions, exact masks */

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = qp->qp_type == IBV_QPT_RC
					   ? IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ
				   : qp->qp_type == IBV_QPT_UC ? IBV_ACCESS_REMOTE_WRITE
							       : 0,
		.qkey = 0x1234,
	};

	return ibv_modify_qp(
		qp, &a,
		IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			(qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
}

static void fill_av(struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->sl = 3;
	ah->grh.sgid_index = 2;
	ah->grh.hop_limit = 64;
	ah->grh.traffic_class = 0x20;
	ah->grh.flow_label = 0x12345;
	ah->grh.dgid.raw[0] = 0xfd;
	ah->grh.dgid.raw[15] = 0x02;
}

static int to_rtr(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_2048,
		.dest_qp_num = 0x4242,
		.rq_psn = 0x123456,
		.max_dest_rd_atomic = 3,
		.min_rnr_timer = 9,
	};

	fill_av(&a.ah_attr);
	switch (qp->qp_type) {
	case IBV_QPT_RC:
		return ibv_modify_qp(qp, &a,
				     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					     IBV_QP_MIN_RNR_TIMER);
	case IBV_QPT_UC:
		return ibv_modify_qp(qp, &a,
				     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					     IBV_QP_RQ_PSN);
	default:
		return ibv_modify_qp(qp, &a, IBV_QP_STATE);
	}
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = 0xabcdef,
		.timeout = 17,
		.retry_cnt = 5,
		.rnr_retry = 6,
		.max_rd_atomic = 4,
	};

	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_SQ_PSN |
				     (qp->qp_type == IBV_QPT_RC
					      ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
							IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC
					      : 0));
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = {.qp_state = s};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static void bring_to_rts(struct ibv_qp *qp)
{
	cr_assert_eq(to_init(qp), 0, "%s RESET->INIT", type_name(qp->qp_type));
	cr_assert_eq(to_rtr(qp), 0, "%s INIT->RTR", type_name(qp->qp_type));
	cr_assert_eq(to_rts(qp), 0, "%s RTR->RTS", type_name(qp->qp_type));
}

/* ------------------------------------------------------------ creation */

static void check_created(enum ibv_qp_type type)
{
	int marker;
	struct ibv_qp_init_attr ia = {
		.qp_context = &marker,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 5, .max_recv_wr = 3, .max_send_sge = 3, .max_recv_sge = 3},
		.qp_type = type,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	const char *t = type_name(type);

	cr_assert_not_null(qp, "ibv_create_qp(%s): %s", t, strerror(errno));
	cr_expect_eq(qp->qp_type, type, "%s: qp_type", t);
	cr_expect_eq(qp->state, IBV_QPS_RESET, "%s: created in RESET", t);
	cr_expect_eq(query_state(qp), IBV_QPS_RESET, "%s: query says RESET", t);
	cr_expect_eq(qp->context, ctx, "%s: context", t);
	cr_expect_eq(qp->pd, pd, "%s: pd", t);
	cr_expect_eq(qp->send_cq, cq, "%s: send_cq", t);
	cr_expect_eq(qp->recv_cq, cq, "%s: recv_cq", t);
	cr_expect_null(qp->srq, "%s: no srq", t);
	cr_expect_eq(qp->qp_context, &marker, "%s: qp_context", t);
	cr_expect_gt(qp->qp_num, 1, "%s: not a special QPN (0, 1)", t);
	cr_expect_leq(qp->qp_num, 0xffffff, "%s: QPN fits 24 bits", t);
	cr_expect_geq(ia.cap.max_send_wr, 5, "%s: max_send_wr", t);
	cr_expect_geq(ia.cap.max_recv_wr, 3, "%s: max_recv_wr", t);
	cr_expect_geq(ia.cap.max_send_sge, 3, "%s: max_send_sge", t);
	cr_expect_geq(ia.cap.max_recv_sge, 3, "%s: max_recv_sge", t);
	cr_expect_eq(ibv_destroy_qp(qp), 0, "%s: destroy", t);
}

Test(verbs_qp, create_rc)
{
	check_created(IBV_QPT_RC);
}

Test(verbs_qp, create_uc)
{
	check_created(IBV_QPT_UC);
}

Test(verbs_qp, create_ud)
{
	check_created(IBV_QPT_UD);
}

Test(verbs_qp, caps_at_least_asked)
{
	static const struct ibv_qp_cap asks[] = {
		{1, 1, 1, 1, 0},
		{0, 0, 0, 0, 0},
		{7, 9, 2, 5, 17},
		{100, 200, 4, 8, 64},
		{16384, 16384, 32, 32, 512},
	};

	for (unsigned int i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .cap = asks[i], .qp_type = IBV_QPT_RC};
		struct ibv_qp_init_attr qia;
		struct ibv_qp_attr qa;
		struct ibv_qp *qp = ibv_create_qp(pd, &ia);

		cr_assert_not_null(qp, "caps %u: %s", i, strerror(errno));
		cr_expect_geq(ia.cap.max_send_wr, asks[i].max_send_wr, "caps %u: max_send_wr", i);
		cr_expect_geq(ia.cap.max_recv_wr, asks[i].max_recv_wr, "caps %u: max_recv_wr", i);
		cr_expect_geq(ia.cap.max_send_sge, asks[i].max_send_sge, "caps %u: max_send_sge",
			      i);
		cr_expect_geq(ia.cap.max_recv_sge, asks[i].max_recv_sge, "caps %u: max_recv_sge",
			      i);
		cr_expect_geq(ia.cap.max_inline_data, asks[i].max_inline_data,
			      "caps %u: max_inline_data", i);
		cr_assert_eq(ibv_query_qp(qp, &qa, IBV_QP_CAP, &qia), 0, "caps %u: query", i);
		cr_expect_eq(memcmp(&qia.cap, &ia.cap, sizeof(ia.cap)), 0,
			     "caps %u: query returns the caps creation returned", i);
		cr_expect_eq(memcmp(&qa.cap, &ia.cap, sizeof(ia.cap)), 0,
			     "caps %u: attr.cap is the same", i);
		cr_expect_eq(ibv_destroy_qp(qp), 0, "caps %u: destroy", i);
	}
}

Test(verbs_qp, caps_too_large_refused)
{
	struct ibv_device_attr da;
	struct ibv_qp_init_attr base = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_init_attr ia;

	cr_assert_eq(ibv_query_device(ctx, &da), 0, "ibv_query_device");
#define REFUSED(field, value)                                                                      \
	do {                                                                                       \
		ia = base;                                                                         \
		ia.cap.field = (value);                                                            \
		errno = 0;                                                                         \
		cr_expect_null(ibv_create_qp(pd, &ia), #field " = %u refused", (unsigned)(value)); \
		cr_expect_eq(errno, EINVAL, #field ": errno EINVAL, got %d", errno);               \
	} while (0)
	REFUSED(max_send_wr, (uint32_t)da.max_qp_wr + 1);
	REFUSED(max_recv_wr, (uint32_t)da.max_qp_wr + 1);
	REFUSED(max_send_sge, (uint32_t)da.max_sge + 1);
	REFUSED(max_recv_sge, (uint32_t)da.max_sge + 1);
	REFUSED(max_inline_data, 513u);
	REFUSED(max_send_wr, UINT32_MAX);
#undef REFUSED
}

Test(verbs_qp, create_refuses_missing_cq)
{
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = NULL, .qp_type = IBV_QPT_RC};

	errno = 0;
	cr_expect_null(ibv_create_qp(pd, &ia), "no receive CQ: refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	ia.recv_cq = cq;
	ia.send_cq = NULL;
	errno = 0;
	cr_expect_null(ibv_create_qp(pd, &ia), "no send CQ: refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
}

Test(verbs_qp, create_refuses_cq_of_other_context)
{
	struct ibv_context *other = harness_open(NULL);
	struct ibv_cq *ocq = ibv_create_cq(other, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {.send_cq = ocq, .recv_cq = cq, .qp_type = IBV_QPT_RC};

	cr_assert_not_null(ocq, "CQ of another context");
	errno = 0;
	cr_expect_null(ibv_create_qp(pd, &ia), "a CQ of another context: refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
}

Test(verbs_qp, unsupported_types_refused)
{
	static const enum ibv_qp_type types[] = {IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND,
						 IBV_QPT_XRC_RECV, IBV_QPT_DRIVER, 0};

	for (unsigned int i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = types[i]};

		errno = 0;
		cr_expect_null(ibv_create_qp(pd, &ia), "QP type %d refused", types[i]);
		cr_expect_eq(errno, EOPNOTSUPP, "type %d: errno EOPNOTSUPP, got %d", types[i],
			     errno);
	}
}

Test(verbs_qp, create_qp_ex)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);

	cr_assert_not_null(qp, "ibv_create_qp_ex: %s", strerror(errno));
	cr_expect_eq(qp->qp_type, IBV_QPT_RC, "qp_type");
	cr_expect_eq(qp->pd, pd, "pd");
	cr_expect_geq(ia.cap.max_send_wr, 4, "caps returned");
	cr_expect_not_null(ibv_qp_to_qp_ex(qp), "extended send API present");
	cr_expect_eq(ibv_destroy_qp(qp), 0, "destroy");
}

Test(verbs_qp, create_qp_ex_pd_only)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_UD,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);

	cr_assert_not_null(qp, "ibv_create_qp_ex with a PD only: %s", strerror(errno));
	cr_expect_eq(qp->qp_type, IBV_QPT_UD, "qp_type");
	cr_expect_geq(ia.cap.max_recv_wr, 4, "caps returned");
	cr_expect_null(ibv_qp_to_qp_ex(qp), "no send_ops_flags: no extended send API");
}

/* A creation-flags mask with no flag set asks for nothing droce lacks: accepted. */
Test(verbs_qp, create_qp_ex_no_creation_flag)
{
	static const enum ibv_qp_type types[] = {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct ibv_qp_init_attr_ex ia = {
			.send_cq = cq,
			.recv_cq = cq,
			.cap = {.max_send_wr = 4,
				.max_recv_wr = 4,
				.max_send_sge = 1,
				.max_recv_sge = 1},
			.qp_type = types[i],
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
			.pd = pd,
			.create_flags = 0,
		};
		struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);

		cr_expect_not_null(qp, "%s: creation-flags mask with no flag: %s",
				   type_name(types[i]), strerror(errno));
		if (qp != NULL)
			cr_expect_eq(ibv_destroy_qp(qp), 0, "%s: ibv_destroy_qp",
				     type_name(types[i]));
	}
}

Test(verbs_qp, create_qp_ex_refusals)
{
	struct ibv_qp_init_attr_ex base = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_UD,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	struct ibv_qp_init_attr_ex ia = base;

	ia.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
	errno = 0;
	cr_expect_null(ibv_create_qp_ex(ctx, &ia), "RDMA WRITE on UD refused");
	cr_expect_eq(errno, EOPNOTSUPP, "errno EOPNOTSUPP, got %d", errno);
	ia = base;
	ia.comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	errno = 0;
	cr_expect_null(ibv_create_qp_ex(ctx, &ia), "no PD refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	ia = base;
	ia.comp_mask |= IBV_QP_INIT_ATTR_XRCD;
	errno = 0;
	cr_expect_null(ibv_create_qp_ex(ctx, &ia), "XRC domain refused");
	cr_expect_eq(errno, EOPNOTSUPP, "errno EOPNOTSUPP, got %d", errno);
	ia = base;
	ia.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ia.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	errno = 0;
	cr_expect_null(ibv_create_qp_ex(ctx, &ia), "a creation flag refused");
	cr_expect_eq(errno, EOPNOTSUPP, "a creation flag: errno EOPNOTSUPP, got %d", errno);
}

Test(verbs_qp, qpn_unique)
{
	enum { N = 96 };
	static const enum ibv_qp_type types[] = {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD};
	struct ibv_qp *qps[N];

	for (int i = 0; i < N; i++)
		qps[i] = make_qp(types[i % 3], NULL);
	for (int i = 0; i < N; i++)
		for (int j = i + 1; j < N; j++)
			cr_assert_neq(qps[i]->qp_num, qps[j]->qp_num, "QP %d and %d share QPN %#x",
				      i, j, qps[i]->qp_num);
	/* a QP created after a destroy gets a number no live QP has */
	{
		uint32_t old = qps[0]->qp_num;
		struct ibv_qp *n;

		cr_assert_eq(ibv_destroy_qp(qps[0]), 0, "destroy");
		n = make_qp(IBV_QPT_RC, NULL);
		cr_expect_neq(n->qp_num, old, "the destroyed QP's number is not reused at once");
		for (int i = 1; i < N; i++)
			cr_expect_neq(n->qp_num, qps[i]->qp_num, "new QPN differs from QP %d's", i);
	}
}

/* ------------------------------------------------------------ lifecycle */

static void expect_state(struct ibv_qp *qp, enum ibv_qp_state s, const char *step)
{
	cr_expect_eq(query_state(qp), s, "%s %s: query says state %d", type_name(qp->qp_type), step,
		     s);
	cr_expect_eq(qp->state, s, "%s %s: qp->state is %d", type_name(qp->qp_type), step, s);
	cr_expect_eq(droce_verbs_qp_state(qp), s, "%s %s: the engine sees state %d",
		     type_name(qp->qp_type), step, s);
}

static void lifecycle(enum ibv_qp_type type)
{
	struct ibv_qp *qp = make_qp(type, NULL);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1};

	cr_assert_eq(to_init(qp), 0, "RESET->INIT");
	expect_state(qp, IBV_QPS_INIT, "RESET->INIT");
	cr_assert_eq(to_init(qp), 0, "INIT->INIT with the same attributes");
	expect_state(qp, IBV_QPS_INIT, "INIT->INIT");
	cr_assert_eq(to_rtr(qp), 0, "INIT->RTR");
	expect_state(qp, IBV_QPS_RTR, "INIT->RTR");
	cr_assert_eq(to_rts(qp), 0, "RTR->RTS");
	expect_state(qp, IBV_QPS_RTS, "RTR->RTS");
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0,
		     "RTS->SQD");
	expect_state(qp, IBV_QPS_SQD, "RTS->SQD");
	cr_assert_eq(to_state(qp, IBV_QPS_RTS), 0, "SQD->RTS");
	expect_state(qp, IBV_QPS_RTS, "SQD->RTS");
	cr_assert_eq(to_state(qp, IBV_QPS_RTS), 0, "RTS->RTS");
	expect_state(qp, IBV_QPS_RTS, "RTS->RTS");
	cr_assert_eq(to_state(qp, IBV_QPS_ERR), 0, "RTS->ERR");
	expect_state(qp, IBV_QPS_ERR, "RTS->ERR");
	cr_assert_eq(to_state(qp, IBV_QPS_RESET), 0, "ERR->RESET");
	expect_state(qp, IBV_QPS_RESET, "ERR->RESET");
	/* and again from RESET: a reset QP is as new */
	bring_to_rts(qp);
	expect_state(qp, IBV_QPS_RTS, "second RTS");
}

Test(verbs_qp, lifecycle_rc)
{
	lifecycle(IBV_QPT_RC);
}

Test(verbs_qp, lifecycle_uc)
{
	lifecycle(IBV_QPT_UC);
}

Test(verbs_qp, lifecycle_ud)
{
	lifecycle(IBV_QPT_UD);
}

Test(verbs_qp, reset_and_err_from_every_state)
{
	static const enum ibv_qp_state targets[] = {IBV_QPS_RESET, IBV_QPS_ERR};

	for (unsigned int t = 0; t < 2; t++) {
		for (int depth = 0; depth <= 3; depth++) {
			struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);

			if (depth >= 1)
				cr_assert_eq(to_init(qp), 0, "INIT");
			if (depth >= 2)
				cr_assert_eq(to_rtr(qp), 0, "RTR");
			if (depth >= 3)
				cr_assert_eq(to_rts(qp), 0, "RTS");
			cr_expect_eq(to_state(qp, targets[t]), 0, "depth %d -> %d", depth,
				     targets[t]);
			cr_expect_eq(query_state(qp), targets[t], "depth %d: in %d", depth,
				     targets[t]);
			cr_assert_eq(ibv_destroy_qp(qp), 0, "destroy");
		}
	}
}

static void engine_sqe_then_rts(enum ibv_qp_type type)
{
	struct ibv_qp *qp = make_qp(type, NULL);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS, .cur_qp_state = IBV_QPS_RTS};
	const char *t = type_name(type);

	bring_to_rts(qp);
	cr_assert_eq(droce_verbs_qp_error(qp, IBV_QPS_SQE, 0), 0, "%s: engine raises SQE", t);
	cr_expect_eq(droce_verbs_qp_state(qp), IBV_QPS_SQE, "%s: the engine's state wins", t);
	cr_expect_eq(query_state(qp), IBV_QPS_SQE, "%s: ibv_query_qp says SQE", t);
	cr_expect_eq(qp->state, IBV_QPS_SQE, "%s: ibv_query_qp updated qp->state", t);
	cr_expect_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE), EINVAL,
		     "%s: SQE->RTS with a stale cur_qp_state (RTS) is refused", t);
	cr_expect_eq(query_state(qp), IBV_QPS_SQE, "%s: still SQE", t);
	a.cur_qp_state = IBV_QPS_SQE;
	cr_expect_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE), 0,
		     "%s: SQE->RTS with cur_qp_state SQE", t);
	cr_expect_eq(query_state(qp), IBV_QPS_RTS, "%s: RTS again", t);
	cr_expect_eq(droce_verbs_qp_state(qp), IBV_QPS_RTS, "%s: the engine sees RTS", t);
	cr_assert_eq(droce_verbs_qp_error(qp, IBV_QPS_SQE, 0), 0, "%s: SQE again", t);
	cr_expect_eq(to_state(qp, IBV_QPS_RTS), 0, "%s: SQE->RTS without cur_qp_state", t);
	cr_expect_eq(query_state(qp), IBV_QPS_RTS, "%s: RTS", t);
}

Test(verbs_qp, engine_sqe_uc)
{
	engine_sqe_then_rts(IBV_QPT_UC);
}

Test(verbs_qp, engine_sqe_ud)
{
	engine_sqe_then_rts(IBV_QPT_UD);
}

Test(verbs_qp, engine_error_rc)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);

	bring_to_rts(qp);
	cr_assert_eq(droce_verbs_qp_error(qp, IBV_QPS_ERR, 0), 0, "engine raises ERR");
	cr_expect_eq(query_state(qp), IBV_QPS_ERR, "ibv_query_qp says ERR");
	cr_expect_eq(to_state(qp, IBV_QPS_RTS), EINVAL, "ERR->RTS refused");
	cr_expect_eq(to_init(qp), EINVAL, "ERR->INIT refused");
	cr_expect_eq(query_state(qp), IBV_QPS_ERR, "still ERR");
	cr_expect_eq(to_state(qp, IBV_QPS_RESET), 0, "ERR->RESET");
	cr_expect_eq(query_state(qp), IBV_QPS_RESET, "RESET");
	cr_expect_eq(droce_verbs_qp_state(qp), IBV_QPS_RESET, "the engine sees RESET");
}

Test(verbs_qp, engine_sqe_rc_only_to_err)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);

	bring_to_rts(qp);
	cr_assert_eq(droce_verbs_qp_error(qp, IBV_QPS_SQE, 0), 0, "engine raises SQE");
	cr_expect_eq(to_state(qp, IBV_QPS_RTS), EINVAL, "RC SQE->RTS is not in the table");
	cr_expect_eq(to_state(qp, IBV_QPS_ERR), 0, "SQE->ERR");
	cr_expect_eq(query_state(qp), IBV_QPS_ERR, "ERR");
}

Test(verbs_qp, engine_error_refuses_other_states)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);

	bring_to_rts(qp);
	cr_expect_eq(droce_verbs_qp_error(qp, IBV_QPS_RTS, 0), -EINVAL, "only SQE or ERR");
	cr_expect_eq(droce_verbs_qp_error(qp, IBV_QPS_RESET, 0), -EINVAL, "not RESET");
	cr_expect_eq(query_state(qp), IBV_QPS_RTS, "unchanged");
}

/* ------------------------------------------------------------ wrong masks */

struct bad_modify {
	const char *what;
	int depth; /* 0 RESET, 1 INIT, 2 RTR, 3 RTS */
	enum ibv_qp_type type;
	enum ibv_qp_state to;
	int mask;
};

static void fill_good_values(struct ibv_qp_attr *a, enum ibv_qp_state to)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = to;
	a->port_num = 1;
	a->qkey = 0x1234;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = 0x99;
	a->max_dest_rd_atomic = 1;
	a->min_rnr_timer = 1;
	a->timeout = 1;
	a->retry_cnt = 1;
	a->rnr_retry = 1;
	a->max_rd_atomic = 1;
	a->sq_psn = 0x777;
	a->rq_psn = 0x888;
	a->path_mig_state = IBV_MIG_MIGRATED;
	fill_av(&a->ah_attr);
	fill_av(&a->alt_ah_attr);
}

Test(verbs_qp, wrong_masks_refused_unchanged)
{
	const int rc_init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	const int rc_rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	const int rc_rts = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	const struct bad_modify cases[] = {
		{"RESET->INIT without PORT", 0, IBV_QPT_RC, IBV_QPS_INIT, rc_init & ~IBV_QP_PORT},
		{"RESET->INIT with SQ_PSN", 0, IBV_QPT_RC, IBV_QPS_INIT, rc_init | IBV_QP_SQ_PSN},
		{"RESET->INIT UD with ACCESS_FLAGS", 0, IBV_QPT_UD, IBV_QPS_INIT,
		 IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
		{"RESET->RTR", 0, IBV_QPT_RC, IBV_QPS_RTR, rc_rtr},
		{"INIT->RTS", 1, IBV_QPT_RC, IBV_QPS_RTS, rc_rts},
		{"INIT->RTR without MIN_RNR_TIMER", 1, IBV_QPT_RC, IBV_QPS_RTR,
		 rc_rtr & ~IBV_QP_MIN_RNR_TIMER},
		{"INIT->RTR with ALT_PATH", 1, IBV_QPT_RC, IBV_QPS_RTR, rc_rtr | IBV_QP_ALT_PATH},
		{"INIT->RTR with SQ_PSN", 1, IBV_QPT_RC, IBV_QPS_RTR, rc_rtr | IBV_QP_SQ_PSN},
		{"UC INIT->RTR with MAX_DEST_RD_ATOMIC", 1, IBV_QPT_UC, IBV_QPS_RTR,
		 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			 IBV_QP_MAX_DEST_RD_ATOMIC},
		{"RTR->RTS without TIMEOUT", 2, IBV_QPT_RC, IBV_QPS_RTS, rc_rts & ~IBV_QP_TIMEOUT},
		{"RTR->RTR", 2, IBV_QPT_RC, IBV_QPS_RTR, IBV_QP_STATE},
		{"RTR->SQD", 2, IBV_QPT_RC, IBV_QPS_SQD, IBV_QP_STATE},
		{"RTS->SQE", 3, IBV_QPT_UC, IBV_QPS_SQE, IBV_QP_STATE},
		{"RTS->INIT", 3, IBV_QPT_RC, IBV_QPS_INIT, rc_init},
		{"RTS->RTS with DEST_QPN", 3, IBV_QPT_RC, IBV_QPS_RTS,
		 IBV_QP_STATE | IBV_QP_DEST_QPN},
		{"RTS->RTS with CAP", 3, IBV_QPT_RC, IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_CAP},
		{"RTR->RTS with SQ_PSN beyond 24 bits", 2, IBV_QPT_UC, IBV_QPS_RTS, -1},
	};

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_modify *c = &cases[i];
		struct ibv_qp *qp = make_qp(c->type, NULL);
		enum ibv_qp_state before;
		struct ibv_qp_attr a, q;
		struct ibv_qp_init_attr qi;
		int mask = c->mask;

		if (c->depth >= 1)
			cr_assert_eq(to_init(qp), 0, "%s: INIT", c->what);
		if (c->depth >= 2)
			cr_assert_eq(to_rtr(qp), 0, "%s: RTR", c->what);
		if (c->depth >= 3)
			cr_assert_eq(to_rts(qp), 0, "%s: RTS", c->what);
		before = query_state(qp);
		fill_good_values(&a, c->to);
		if (mask == -1) {
			mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
			a.sq_psn = 0x1000000;
		}
		cr_expect_eq(ibv_modify_qp(qp, &a, mask), EINVAL, "%s: EINVAL", c->what);
		cr_assert_eq(ibv_query_qp(qp, &q, IBV_QP_STATE, &qi), 0, "%s: query", c->what);
		cr_expect_eq(q.qp_state, before, "%s: state unchanged", c->what);
		cr_expect_eq(qp->state, before, "%s: qp->state unchanged", c->what);
		if (c->depth >= 2)
			cr_expect_eq(q.dest_qp_num, 0x4242, "%s: dest_qp_num unchanged", c->what);
		if (c->depth >= 3)
			cr_expect_eq(q.sq_psn, 0xabcdef, "%s: sq_psn unchanged", c->what);
		if (c->depth == 0)
			cr_expect_eq(q.port_num, 0, "%s: nothing recorded", c->what);
		cr_assert_eq(ibv_destroy_qp(qp), 0, "%s: destroy", c->what);
	}
}

/* ------------------------------------------------------------ query */

Test(verbs_qp, query_returns_what_was_set_rc)
{
	int marker;
	struct ibv_qp_init_attr ia = {
		.qp_context = &marker,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2, .max_recv_sge = 2},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;

	cr_assert_not_null(qp, "ibv_create_qp");
	bring_to_rts(qp);
	cr_assert_eq(ibv_query_qp(qp, &q, ~0, &qi), 0, "ibv_query_qp");
	cr_expect_eq(q.qp_state, IBV_QPS_RTS, "qp_state");
	cr_expect_eq(q.cur_qp_state, IBV_QPS_RTS, "cur_qp_state");
	cr_expect_eq(q.pkey_index, 0, "pkey_index");
	cr_expect_eq(q.port_num, 1, "port_num");
	cr_expect_eq(q.qp_access_flags, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		     "qp_access_flags");
	cr_expect_eq(q.path_mtu, IBV_MTU_2048, "path_mtu");
	cr_expect_eq(q.dest_qp_num, 0x4242, "dest_qp_num");
	cr_expect_eq(q.rq_psn, 0x123456, "rq_psn");
	cr_expect_eq(q.max_dest_rd_atomic, 3, "max_dest_rd_atomic");
	cr_expect_eq(q.min_rnr_timer, 9, "min_rnr_timer");
	cr_expect_eq(q.sq_psn, 0xabcdef, "sq_psn");
	cr_expect_eq(q.timeout, 17, "timeout");
	cr_expect_eq(q.retry_cnt, 5, "retry_cnt");
	cr_expect_eq(q.rnr_retry, 6, "rnr_retry");
	cr_expect_eq(q.max_rd_atomic, 4, "max_rd_atomic");
	cr_expect_eq(q.ah_attr.is_global, 1, "ah_attr.is_global");
	cr_expect_eq(q.ah_attr.port_num, 1, "ah_attr.port_num");
	cr_expect_eq(q.ah_attr.sl, 3, "ah_attr.sl");
	cr_expect_eq(q.ah_attr.grh.sgid_index, 2, "ah_attr.grh.sgid_index");
	cr_expect_eq(q.ah_attr.grh.hop_limit, 64, "ah_attr.grh.hop_limit");
	cr_expect_eq(q.ah_attr.grh.traffic_class, 0x20, "ah_attr.grh.traffic_class");
	cr_expect_eq(q.ah_attr.grh.flow_label, 0x12345, "ah_attr.grh.flow_label");
	cr_expect_eq(q.ah_attr.grh.dgid.raw[0], 0xfd, "ah_attr.grh.dgid first byte");
	cr_expect_eq(q.ah_attr.grh.dgid.raw[15], 0x02, "ah_attr.grh.dgid last byte");
	cr_expect_eq(memcmp(&q.cap, &ia.cap, sizeof(ia.cap)), 0, "cap");
	cr_expect_eq(qi.qp_type, IBV_QPT_RC, "init_attr.qp_type");
	cr_expect_eq(qi.send_cq, cq, "init_attr.send_cq");
	cr_expect_eq(qi.recv_cq, cq, "init_attr.recv_cq");
	cr_expect_null(qi.srq, "init_attr.srq");
	cr_expect_eq(qi.qp_context, &marker, "init_attr.qp_context");
	cr_expect_eq(qi.sq_sig_all, 1, "init_attr.sq_sig_all");
	cr_expect_eq(memcmp(&qi.cap, &ia.cap, sizeof(ia.cap)), 0, "init_attr.cap");
}

Test(verbs_qp, query_changes_in_later_transitions)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS,
				.min_rnr_timer = 20,
				.qp_access_flags = IBV_ACCESS_REMOTE_ATOMIC};
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;

	bring_to_rts(qp);
	cr_assert_eq(
		ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS), 0,
		"RTS->RTS with optional attributes");
	cr_assert_eq(ibv_query_qp(qp, &q, ~0, &qi), 0, "ibv_query_qp");
	cr_expect_eq(q.min_rnr_timer, 20, "min_rnr_timer changed");
	cr_expect_eq(q.qp_access_flags, IBV_ACCESS_REMOTE_ATOMIC, "access flags changed");
	cr_expect_eq(q.timeout, 17, "timeout kept");
	cr_expect_eq(q.sq_psn, 0xabcdef, "sq_psn kept");
}

Test(verbs_qp, query_ud_qkey)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UD, NULL);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS, .qkey = 0x5678};
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;

	cr_assert_eq(to_init(qp), 0, "INIT");
	cr_assert_eq(ibv_query_qp(qp, &q, IBV_QP_QKEY, &qi), 0, "query");
	cr_expect_eq(q.qkey, 0x1234, "qkey set at INIT");
	cr_assert_eq(to_rtr(qp), 0, "RTR");
	cr_assert_eq(to_rts(qp), 0, "RTS");
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_QKEY), 0, "RTS->RTS with QKEY");
	cr_assert_eq(ibv_query_qp(qp, &q, IBV_QP_QKEY | IBV_QP_SQ_PSN, &qi), 0, "query");
	cr_expect_eq(q.qkey, 0x5678, "qkey changed");
	cr_expect_eq(q.sq_psn, 0xabcdef, "sq_psn");
	cr_expect_eq(qi.qp_type, IBV_QPT_UD, "qp_type");
}

Test(verbs_qp, reset_clears_attributes)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;
	struct ibv_qp_cap cap;

	bring_to_rts(qp);
	cr_assert_eq(ibv_query_qp(qp, &q, IBV_QP_CAP, &qi), 0, "query");
	cap = q.cap;
	cr_assert_eq(to_state(qp, IBV_QPS_RESET), 0, "RTS->RESET");
	cr_assert_eq(ibv_query_qp(qp, &q, ~0, &qi), 0, "query");
	cr_expect_eq(q.qp_state, IBV_QPS_RESET, "RESET");
	cr_expect_eq(q.dest_qp_num, 0, "dest_qp_num cleared");
	cr_expect_eq(q.sq_psn, 0, "sq_psn cleared");
	cr_expect_eq(q.port_num, 0, "port_num cleared");
	cr_expect_eq(memcmp(&q.cap, &cap, sizeof(cap)), 0, "caps kept");
}

/* ------------------------------------------------------------ RESET empties */

static struct ibv_sge dummy_sge = {.addr = 0x1000, .length = 64, .lkey = 1};

static int post_recv_id(struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &dummy_sge, .num_sge = 1};
	struct ibv_recv_wr *bad = NULL;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_send_id(struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_send_wr wr = {.wr_id = wr_id,
				 .sg_list = &dummy_sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad = NULL;

	return ibv_post_send(qp, &wr, &bad);
}

Test(verbs_qp, reset_empties_rings)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct harness_recv r;
	struct harness_send s;
	struct ibv_wc wc;

	bring_to_rts(qp);
	for (uint64_t i = 0; i < 3; i++) {
		cr_assert_eq(post_recv_id(qp, 10 + i), 0, "post recv %lu", (unsigned long)i);
		cr_assert_eq(post_send_id(qp, 20 + i), 0, "post send %lu", (unsigned long)i);
	}
	cr_assert_eq(to_state(qp, IBV_QPS_RESET), 0, "RTS->RESET");
	cr_expect_eq(droce_verbs_qp_state(qp), IBV_QPS_RESET, "the engine sees RESET");
	/* the engine attaches to the rings after the reset */
	cr_expect_eq(harness_send_pending(qp), 0, "the send ring is empty");
	cr_expect_not(harness_take_recv(qp, &r), "the receive ring is empty");
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0, "the dropped WQEs completed nowhere");
	/* the rings work again */
	bring_to_rts(qp);
	cr_assert_eq(post_recv_id(qp, 30), 0, "post recv after reset");
	cr_assert_eq(post_send_id(qp, 31), 0, "post send after reset");
	cr_assert(harness_take_recv(qp, &r), "the engine takes the new receive");
	cr_expect_eq(r.hdr.wr_id, 30, "only the new receive");
	cr_expect_not(harness_take_recv(qp, &r), "and nothing else");
	cr_assert(harness_take_send(qp, &s), "the engine takes the new send");
	cr_expect_eq(s.hdr.wr_id, 31, "only the new send");
	cr_expect_not(harness_take_send(qp, &s), "and nothing else");
}

static void complete_on(struct ibv_cq *c, struct ibv_qp *qp, uint64_t wr_id, enum ibv_wc_opcode op,
			enum ibv_wc_status status)
{
	struct droce_cqe e = {.wr_id = wr_id, .qp_num = qp->qp_num, .opcode = op, .status = status};

	cr_assert(harness_complete(c, &e), "the engine completes %lu", (unsigned long)wr_id);
}

/*
 * A QP moved to RESET takes its completions out of its CQs (as providers do):
 * what it completed before is never polled, another QP's entries and what it
 * completes after stay. @p ex polls with the extended API.
 */
static void reset_purges(bool ex)
{
	struct ibv_cq_init_attr_ex ca = {.cqe = 64, .wc_flags = IBV_WC_EX_WITH_QP_NUM};
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
	struct ibv_poll_cq_attr pa = {0};
	struct ibv_cq *c;
	struct ibv_qp *a, *b;
	struct ibv_wc later;
	uint64_t got[8];
	int n = 0;

	cr_assert_not_null(cqx, "ibv_create_cq_ex: %s", strerror(errno));
	c = ibv_cq_ex_to_cq(cqx);
	cq = c; /* make_qp completes on the file's cq */
	a = make_qp(IBV_QPT_RC, NULL);
	b = make_qp(IBV_QPT_RC, NULL);
	bring_to_rts(a);
	bring_to_rts(b);
	complete_on(c, a, 1, IBV_WC_RECV, IBV_WC_WR_FLUSH_ERR);
	complete_on(c, b, 2, IBV_WC_SEND, IBV_WC_SUCCESS);
	complete_on(c, a, 3, IBV_WC_SEND, IBV_WC_WR_FLUSH_ERR);
	cr_assert_eq(to_state(a, IBV_QPS_RESET), 0, "RTS->RESET");
	bring_to_rts(a);
	complete_on(c, a, 4, IBV_WC_SEND, IBV_WC_SUCCESS);
	if (ex) {
		int rc = ibv_start_poll(cqx, &pa);

		while (rc == 0 && n < 8) {
			got[n++] = cqx->wr_id;
			rc = ibv_next_poll(cqx);
		}
		cr_expect_eq(rc, ENOENT, "the extended poll ends with ENOENT, got %d", rc);
		if (n > 0)
			ibv_end_poll(cqx);
	} else {
		struct ibv_wc wc[8];

		n = ibv_poll_cq(c, 8, wc);
		for (int i = 0; i < n; i++)
			got[i] = wc[i].wr_id;
	}
	cr_assert_eq(n, 2, "two completions left (the other QP's, the new one's), got %d", n);
	cr_expect_eq(got[0], 2, "the other QP's completion stays, got %lu", (unsigned long)got[0]);
	cr_expect_eq(got[1], 4, "the completion after the reset stays, got %lu",
		     (unsigned long)got[1]);
	cr_expect_eq(ibv_poll_cq(c, 1, (struct ibv_wc[1]){}), 0, "and nothing else");
	/* the skipped entries were released: the ring takes entries again after them */
	complete_on(c, a, 5, IBV_WC_SEND, IBV_WC_SUCCESS);
	cr_expect_eq(ibv_poll_cq(c, 1, &later), 1, "a later completion is polled");
	cr_expect_eq(later.wr_id, 5, "the later completion, got %lu", (unsigned long)later.wr_id);
}

Test(verbs_qp, reset_purges_completions)
{
	reset_purges(false);
}

Test(verbs_qp, reset_purges_completions_ex)
{
	reset_purges(true);
}

/* A receive completed from an SRQ stays: its WQE was the SRQ's, not the QP's. */
Test(verbs_qp, reset_keeps_srq_receives)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 8, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_qp *qp;
	struct ibv_wc wc[4];
	int n;

	cr_assert_not_null(srq, "ibv_create_srq: %s", strerror(errno));
	qp = make_qp(IBV_QPT_RC, srq);
	bring_to_rts(qp);
	complete_on(cq, qp, 1, IBV_WC_RECV, IBV_WC_SUCCESS);
	complete_on(cq, qp, 2, IBV_WC_SEND, IBV_WC_WR_FLUSH_ERR);
	cr_assert_eq(to_state(qp, IBV_QPS_RESET), 0, "RTS->RESET");
	n = ibv_poll_cq(cq, 4, wc);
	cr_assert_eq(n, 1, "one completion left, got %d", n);
	cr_expect_eq(wc[0].wr_id, 1, "the SRQ's receive stays, got %lu",
		     (unsigned long)wc[0].wr_id);
}

Test(verbs_qp, reset_empties_full_rings)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UC, NULL);
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr q;
	uint32_t i;

	cr_assert_eq(ibv_query_qp(qp, &q, IBV_QP_CAP, &qi), 0, "query");
	cr_assert_eq(to_init(qp), 0, "INIT");
	for (i = 0; i < qi.cap.max_recv_wr; i++)
		cr_assert_eq(post_recv_id(qp, i), 0, "post recv %u", i);
	cr_expect_eq(post_recv_id(qp, 999), ENOMEM, "the receive ring is full");
	cr_assert_eq(to_state(qp, IBV_QPS_RESET), 0, "INIT->RESET");
	cr_assert_eq(to_init(qp), 0, "INIT again");
	for (i = 0; i < qi.cap.max_recv_wr; i++)
		cr_expect_eq(post_recv_id(qp, 100 + i), 0, "after reset the whole ring is free: %u",
			     i);
}

/* ------------------------------------------------------------ ibv_post_recv */

Test(verbs_qp, post_recv_state_rules)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = &dummy_sge, .num_sge = 1};
	struct ibv_recv_wr *bad = NULL;
	struct harness_recv r;
	struct ibv_wc wc;

	cr_expect_eq(ibv_post_recv(qp, &wr, &bad), EINVAL, "RESET refuses receives");
	cr_expect_eq(bad, &wr, "bad_wr is the refused WR");
	cr_assert_eq(to_init(qp), 0, "INIT");
	cr_expect_eq(post_recv_id(qp, 2), 0, "INIT accepts");
	cr_assert_eq(to_rtr(qp), 0, "RTR");
	cr_expect_eq(post_recv_id(qp, 3), 0, "RTR accepts");
	cr_assert_eq(to_rts(qp), 0, "RTS");
	cr_expect_eq(post_recv_id(qp, 4), 0, "RTS accepts");
	cr_assert_eq(to_state(qp, IBV_QPS_ERR), 0, "ERR");
	cr_expect_eq(post_recv_id(qp, 5), 0, "ERR accepts (the engine flushes)");
	for (uint64_t id = 2; id <= 5; id++) {
		cr_assert(harness_take_recv(qp, &r), "the engine takes receive %lu",
			  (unsigned long)id);
		cr_expect_eq(r.hdr.wr_id, id, "in order: %lu", (unsigned long)id);
	}
	cr_expect_not(harness_take_recv(qp, &r), "the refused one never reached the ring");
	/* the library never completes by itself: only the engine does */
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0, "no completion made by the library");
}

Test(verbs_qp, post_recv_after_engine_error)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UC, NULL);
	struct harness_recv r;
	struct ibv_wc wc;

	bring_to_rts(qp);
	cr_assert_eq(droce_verbs_qp_error(qp, IBV_QPS_ERR, 0), 0, "engine raises ERR");
	cr_expect_eq(post_recv_id(qp, 7), 0, "ERR raised by the engine accepts receives");
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0, "no completion made by the library");
	cr_assert(harness_take_recv(qp, &r), "the engine takes it to flush it");
	cr_expect_eq(r.hdr.wr_id, 7, "the WQE");
	{
		struct droce_cqe e = {.wr_id = r.hdr.wr_id,
				      .status = IBV_WC_WR_FLUSH_ERR,
				      .opcode = IBV_WC_RECV,
				      .qp_num = qp->qp_num};

		cr_assert(harness_complete(cq, &e), "the engine flushes");
	}
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "the flush completion");
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "flush status");
	cr_expect_eq(wc.wr_id, 7, "of the WQE");
}

Test(verbs_qp, post_recv_refused_with_srq)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 8, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_qp *qp;
	struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = &dummy_sge, .num_sge = 1};
	struct ibv_recv_wr *bad = NULL;

	cr_assert_not_null(srq, "ibv_create_srq");
	qp = make_qp(IBV_QPT_RC, srq);
	cr_expect_eq(qp->srq, srq, "qp->srq");
	cr_assert_eq(to_init(qp), 0, "INIT");
	cr_expect_eq(ibv_post_recv(qp, &wr, &bad), EINVAL, "a QP on an SRQ refuses ibv_post_recv");
	cr_expect_eq(bad, &wr, "bad_wr");
	cr_expect_eq(harness_srq_pending(srq), 0, "nothing reached the SRQ either");
}

Test(verbs_qp, post_recv_num_sge_limit)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct ibv_sge sges[40];
	struct ibv_recv_wr w[3];
	struct ibv_recv_wr *bad = NULL;
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr q;
	struct harness_recv r;
	int max;

	for (int i = 0; i < 40; i++)
		sges[i] = (struct ibv_sge){
			.addr = 0x1000 + 64 * (uint64_t)i, .length = 64, .lkey = 1};
	cr_assert_eq(ibv_query_qp(qp, &q, IBV_QP_CAP, &qi), 0, "query");
	max = (int)qi.cap.max_recv_sge;
	cr_assert_leq(max, 39, "test array is large enough");
	cr_assert_eq(to_init(qp), 0, "INIT");
	memset(w, 0, sizeof(w));
	w[0] = (struct ibv_recv_wr){.wr_id = 1, .sg_list = sges, .num_sge = max, .next = &w[1]};
	w[1] = (struct ibv_recv_wr){.wr_id = 2, .sg_list = sges, .num_sge = max + 1, .next = &w[2]};
	w[2] = (struct ibv_recv_wr){.wr_id = 3, .sg_list = sges, .num_sge = 1};
	cr_expect_eq(ibv_post_recv(qp, w, &bad), EINVAL, "num_sge above max_recv_sge: EINVAL");
	cr_expect_eq(bad, &w[1], "bad_wr is the WR over the limit");
	cr_assert(harness_take_recv(qp, &r), "the WR before it was posted");
	cr_expect_eq(r.hdr.wr_id, 1, "the first WR");
	cr_expect_eq(r.hdr.num_sge, max, "with max_recv_sge SGEs");
	cr_expect_not(harness_take_recv(qp, &r), "nothing after the bad WR was posted");
	w[0].num_sge = -1;
	w[0].next = NULL;
	bad = NULL;
	cr_expect_eq(ibv_post_recv(qp, w, &bad), EINVAL, "negative num_sge: EINVAL");
	cr_expect_eq(bad, &w[0], "bad_wr");
}

Test(verbs_qp, post_recv_full_enomem)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr q;
	struct ibv_recv_wr w[3];
	struct ibv_recv_wr *bad = NULL;
	struct harness_recv r;
	uint32_t i;

	cr_assert_eq(ibv_query_qp(qp, &q, IBV_QP_CAP, &qi), 0, "query");
	cr_assert_eq(to_init(qp), 0, "INIT");
	for (i = 0; i < qi.cap.max_recv_wr; i++)
		cr_assert_eq(post_recv_id(qp, i), 0, "post %u of max_recv_wr %u", i,
			     qi.cap.max_recv_wr);
	memset(w, 0, sizeof(w));
	for (i = 0; i < 3; i++)
		w[i] = (struct ibv_recv_wr){.wr_id = 100 + i,
					    .sg_list = &dummy_sge,
					    .num_sge = 1,
					    .next = i < 2 ? &w[i + 1] : NULL};
	cr_expect_eq(ibv_post_recv(qp, w, &bad), ENOMEM, "full: ENOMEM");
	cr_expect_eq(bad, &w[0], "bad_wr is the first WR");
	cr_assert(harness_take_recv(qp, &r), "the engine takes one");
	cr_expect_eq(r.hdr.wr_id, 0, "the oldest");
	bad = NULL;
	cr_expect_eq(ibv_post_recv(qp, w, &bad), ENOMEM, "room for one of three: ENOMEM");
	cr_expect_eq(bad, &w[1], "bad_wr is the second WR: the first was posted");
	for (i = 1; i < qi.cap.max_recv_wr; i++) {
		cr_assert(harness_take_recv(qp, &r), "take %u", i);
		cr_expect_eq(r.hdr.wr_id, i, "in order");
	}
	cr_assert(harness_take_recv(qp, &r), "the last one posted");
	cr_expect_eq(r.hdr.wr_id, 100, "is the first WR of the chain");
	cr_expect_not(harness_take_recv(qp, &r), "nothing more");
}

/* ------------------------------------------------------------ destroy */

Test(verbs_qp, destroy_releases_users)
{
	struct ibv_cq *c2 = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_qp_init_attr ia = {.send_cq = c2, .recv_cq = c2, .qp_type = IBV_QPT_UD};
	struct ibv_qp *qp;

	cr_assert_not_null(c2, "CQ");
	cr_assert_not_null(pd2, "PD");
	qp = ibv_create_qp(pd2, &ia);
	cr_assert_not_null(qp, "QP");
	cr_expect_eq(ibv_dealloc_pd(pd2), EBUSY, "the PD is busy while the QP exists");
	cr_expect_eq(ibv_destroy_cq(c2), EBUSY, "the CQ is busy while the QP exists");
	bring_to_rts(qp);
	cr_expect_eq(ibv_destroy_qp(qp), 0, "destroy a QP in RTS");
	cr_expect_eq(ibv_destroy_cq(c2), 0, "the CQ is free");
	cr_expect_eq(ibv_dealloc_pd(pd2), 0, "the PD is free");
}
