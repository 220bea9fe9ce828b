/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The modify-QP rules of lib/verbs/qp_attr.c against the spec, written here
 * again by hand, one row per (QP type, current state, target state): IBTA Vol. 1
 * chapter 11, "Modify Queue Pair", the table of QP state transitions with their
 * required and optional attributes (RC, UC, UD columns).
 *
 * For every row: accepted with exactly the required attributes; with each
 * optional one added; refused with any required one missing; refused with any
 * other IBV_QP_* bit (all 32 bit positions). Then every transition not in the
 * table, modifies without IBV_QP_STATE, and each value check at its boundary.
 * Last, the table printed in doc/qp_state.md against the code.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <droce_qp_attr.h>
#include <droce_test.h>

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------ the spec, by hand */

#define RESET IBV_QPS_RESET
#define INIT  IBV_QPS_INIT
#define RTR   IBV_QPS_RTR
#define RTS   IBV_QPS_RTS
#define SQD   IBV_QPS_SQD
#define SQE   IBV_QPS_SQE
#define ERR   IBV_QPS_ERR
#define RC    IBV_QPT_RC
#define UC    IBV_QPT_UC
#define UD    IBV_QPT_UD

#define STATE      IBV_QP_STATE
#define CUR_STATE  IBV_QP_CUR_STATE
#define SQD_NOTIFY IBV_QP_EN_SQD_ASYNC_NOTIFY
#define ACCESS     IBV_QP_ACCESS_FLAGS
#define PKEY       IBV_QP_PKEY_INDEX
#define PORT       IBV_QP_PORT
#define QKEY       IBV_QP_QKEY
#define AV         IBV_QP_AV
#define MTU        IBV_QP_PATH_MTU
#define TIMEOUT    IBV_QP_TIMEOUT
#define RETRY      IBV_QP_RETRY_CNT
#define RNR_RETRY  IBV_QP_RNR_RETRY
#define RQ_PSN     IBV_QP_RQ_PSN
#define RD_ATOMIC  IBV_QP_MAX_QP_RD_ATOMIC
#define ALT_PATH   IBV_QP_ALT_PATH
#define MIN_RNR    IBV_QP_MIN_RNR_TIMER
#define SQ_PSN     IBV_QP_SQ_PSN
#define DEST_RD    IBV_QP_MAX_DEST_RD_ATOMIC
#define MIG        IBV_QP_PATH_MIG_STATE
#define DEST_QPN   IBV_QP_DEST_QPN

/* One transition of one QP type: attributes besides IBV_QP_STATE. */
struct trans {
	enum ibv_qp_type type;
	enum ibv_qp_state cur;
	enum ibv_qp_state next;
	uint32_t req;
	uint32_t opt;
};

/* Every state may go to RESET and to ERR with nothing but the state. */
/* clang-format off */
#define TO_RESET_AND_ERR(t) \
	{t, RESET, RESET, 0, 0}, {t, INIT, RESET, 0, 0}, {t, RTR, RESET, 0, 0}, \
	{t, RTS, RESET, 0, 0},   {t, SQD, RESET, 0, 0},  {t, SQE, RESET, 0, 0}, \
	{t, ERR, RESET, 0, 0}, \
	{t, RESET, ERR, 0, 0},   {t, INIT, ERR, 0, 0},   {t, RTR, ERR, 0, 0}, \
	{t, RTS, ERR, 0, 0},     {t, SQD, ERR, 0, 0},    {t, SQE, ERR, 0, 0}, \
	{t, ERR, ERR, 0, 0}
/* clang-format on */

/* Not const: Criterion's parameter arrays are void *. */
static struct trans spec[] = {
	{RC, RESET, INIT, PKEY | PORT | ACCESS, 0},
	{RC, INIT, INIT, 0, PKEY | PORT | ACCESS},
	{RC, INIT, RTR, AV | MTU | DEST_QPN | RQ_PSN | DEST_RD | MIN_RNR, ALT_PATH | ACCESS | PKEY},
	{RC, RTR, RTS, SQ_PSN | TIMEOUT | RETRY | RNR_RETRY | RD_ATOMIC,
	 CUR_STATE | ALT_PATH | ACCESS | MIN_RNR | MIG},
	{RC, RTS, RTS, 0, CUR_STATE | ACCESS | ALT_PATH | MIG | MIN_RNR},
	{RC, RTS, SQD, 0, SQD_NOTIFY},
	{RC, SQD, RTS, 0, CUR_STATE | ALT_PATH | ACCESS | MIN_RNR | MIG},
	{RC, SQD, SQD, 0,
	 PORT | AV | TIMEOUT | RETRY | RNR_RETRY | RD_ATOMIC | DEST_RD | ALT_PATH | ACCESS | PKEY |
		 MIN_RNR | MIG},
	TO_RESET_AND_ERR(RC),

	{UC, RESET, INIT, PKEY | PORT | ACCESS, 0},
	{UC, INIT, INIT, 0, PKEY | PORT | ACCESS},
	{UC, INIT, RTR, AV | MTU | DEST_QPN | RQ_PSN, ALT_PATH | ACCESS | PKEY},
	{UC, RTR, RTS, SQ_PSN, CUR_STATE | ALT_PATH | ACCESS | MIG},
	{UC, RTS, RTS, 0, CUR_STATE | ACCESS | ALT_PATH | MIG},
	{UC, RTS, SQD, 0, SQD_NOTIFY},
	{UC, SQD, RTS, 0, CUR_STATE | ALT_PATH | ACCESS | MIG},
	{UC, SQD, SQD, 0, AV | ALT_PATH | ACCESS | PKEY | MIG},
	{UC, SQE, RTS, 0, CUR_STATE | ACCESS},
	TO_RESET_AND_ERR(UC),

	{UD, RESET, INIT, PKEY | PORT | QKEY, 0},
	{UD, INIT, INIT, 0, PKEY | PORT | QKEY},
	{UD, INIT, RTR, 0, PKEY | QKEY},
	{UD, RTR, RTS, SQ_PSN, CUR_STATE | QKEY},
	{UD, RTS, RTS, 0, CUR_STATE | QKEY},
	{UD, RTS, SQD, 0, SQD_NOTIFY},
	{UD, SQD, RTS, 0, CUR_STATE | QKEY},
	{UD, SQD, SQD, 0, PKEY | QKEY},
	{UD, SQE, RTS, 0, CUR_STATE | QKEY},
	TO_RESET_AND_ERR(UD),
};

static const enum ibv_qp_type types[] = {RC, UC, UD};
static const enum ibv_qp_state states[] = {RESET, INIT, RTR, RTS, SQD, SQE, ERR};

/* rdma-core 44 <infiniband/verbs.h>, enum ibv_qp_attr_mask, by bit position. */
static const char *const bit_names[32] = {
	[0] = "STATE",
	[1] = "CUR_STATE",
	[2] = "EN_SQD_ASYNC_NOTIFY",
	[3] = "ACCESS_FLAGS",
	[4] = "PKEY_INDEX",
	[5] = "PORT",
	[6] = "QKEY",
	[7] = "AV",
	[8] = "PATH_MTU",
	[9] = "TIMEOUT",
	[10] = "RETRY_CNT",
	[11] = "RNR_RETRY",
	[12] = "RQ_PSN",
	[13] = "MAX_QP_RD_ATOMIC",
	[14] = "ALT_PATH",
	[15] = "MIN_RNR_TIMER",
	[16] = "SQ_PSN",
	[17] = "MAX_DEST_RD_ATOMIC",
	[18] = "PATH_MIG_STATE",
	[19] = "CAP",
	[20] = "DEST_QPN",
	[21] = "SMAC",
	[22] = "ALT_SMAC",
	[23] = "VID",
	[24] = "ALT_VID",
	[25] = "RATE_LIMIT",
};

static const char *type_name(enum ibv_qp_type t)
{
	return t == RC ? "RC" : t == UC ? "UC" : t == UD ? "UD" : "?";
}

static const char *state_name(enum ibv_qp_state s)
{
	static const char *const n[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

	return (unsigned int)s < DIM(n) ? n[s] : "UNKNOWN";
}

static const char *bit_name(unsigned int pos)
{
	return pos < 32 && bit_names[pos] != NULL ? bit_names[pos] : "(unnamed)";
}

static const struct trans *spec_find(enum ibv_qp_type t, enum ibv_qp_state cur,
				     enum ibv_qp_state next)
{
	size_t i;

	for (i = 0; i < DIM(spec); i++)
		if (spec[i].type == t && spec[i].cur == cur && spec[i].next == next)
			return &spec[i];
	return NULL;
}

/* ------------------------------------------------------- fixtures */

static const struct droce_qp_attr_limits lim = {
	.port_count = 2,
	.pkey_table_len = 4,
	.gid_table_len = 17,
	.max_rd_atomic = 16,
	.max_dest_rd_atomic = 16,
	.max_mtu = IBV_MTU_4096,
	.privileged = false,
};

/* Attributes valid for any transition from @p cur to @p next, for every type. */
static struct ibv_qp_attr good_attr(enum ibv_qp_state cur, enum ibv_qp_state next)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = next;
	a.cur_qp_state = cur;
	a.path_mtu = IBV_MTU_1024;
	a.path_mig_state = IBV_MIG_MIGRATED;
	a.qkey = 0x11111111;
	a.rq_psn = 0x123456;
	a.sq_psn = 0x654321;
	a.dest_qp_num = 0x11;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.dgid.raw[0] = 0xfe;
	a.ah_attr.grh.dgid.raw[1] = 0x80;
	a.ah_attr.grh.dgid.raw[15] = 0x02;
	a.alt_ah_attr = a.ah_attr;
	a.pkey_index = 0;
	a.alt_pkey_index = 0;
	a.en_sqd_async_notify = 1;
	a.max_rd_atomic = 4;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.port_num = 1;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.alt_port_num = 1;
	a.alt_timeout = 14;
	return a;
}

static int check_lim(const struct trans *t, uint32_t mask, const struct ibv_qp_attr *a,
		     const struct droce_qp_attr_limits *l)
{
	enum ibv_qp_state next = IBV_QPS_UNKNOWN;

	return -droce_qp_attr_check(t->type, t->cur, a, (int)mask, l, &next);
}

static int check(const struct trans *t, uint32_t mask, const struct ibv_qp_attr *a)
{
	return check_lim(t, mask, a, &lim);
}

/* --------------------------------------------- every row of the spec */

ParameterizedTestParameters(qp_trans, table_query)
{
	return cr_make_param_array(struct trans, spec, DIM(spec));
}

ParameterizedTest(struct trans *t, qp_trans, table_query)
{
	cr_expect(droce_qp_trans_is_valid(t->type, t->cur, t->next), "%s %s->%s is a transition",
		  type_name(t->type), state_name(t->cur), state_name(t->next));
	cr_expect_eq(droce_qp_attr_required(t->type, t->cur, t->next), t->req,
		     "%s %s->%s requires 0x%x, want 0x%x", type_name(t->type), state_name(t->cur),
		     state_name(t->next), droce_qp_attr_required(t->type, t->cur, t->next), t->req);
	cr_expect_eq(droce_qp_attr_optional(t->type, t->cur, t->next), t->opt,
		     "%s %s->%s allows 0x%x, want 0x%x", type_name(t->type), state_name(t->cur),
		     state_name(t->next), droce_qp_attr_optional(t->type, t->cur, t->next), t->opt);
}

ParameterizedTestParameters(qp_trans, exact_required)
{
	return cr_make_param_array(struct trans, spec, DIM(spec));
}

ParameterizedTest(struct trans *t, qp_trans, exact_required)
{
	struct ibv_qp_attr a = good_attr(t->cur, t->next);
	enum ibv_qp_state next = IBV_QPS_UNKNOWN;
	int rc;

	rc = -droce_qp_attr_check(t->type, t->cur, &a, (int)(STATE | t->req), &lim, &next);
	cr_expect_eq(rc, 0, "%s %s->%s with STATE + required 0x%x: %d, want 0", type_name(t->type),
		     state_name(t->cur), state_name(t->next), t->req, rc);
	cr_expect_eq(next, t->next, "%s %s->%s: next state %s", type_name(t->type),
		     state_name(t->cur), state_name(t->next), state_name(next));
	if (t->cur != t->next)
		return;
	/* A transition to the same state may leave IBV_QP_STATE out. */
	next = IBV_QPS_UNKNOWN;
	rc = -droce_qp_attr_check(t->type, t->cur, &a, (int)t->req, &lim, &next);
	cr_expect_eq(rc, 0, "%s %s->%s with required 0x%x and no STATE: %d, want 0",
		     type_name(t->type), state_name(t->cur), state_name(t->next), t->req, rc);
	cr_expect_eq(next, t->cur, "%s %s->%s without STATE: next state %s", type_name(t->type),
		     state_name(t->cur), state_name(t->next), state_name(next));
}

ParameterizedTestParameters(qp_trans, each_optional)
{
	return cr_make_param_array(struct trans, spec, DIM(spec));
}

ParameterizedTest(struct trans *t, qp_trans, each_optional)
{
	struct ibv_qp_attr a = good_attr(t->cur, t->next);
	uint32_t all = STATE | t->req | (t->opt & ~(uint32_t)ALT_PATH);
	unsigned int pos;
	int rc;

	for (pos = 0; pos < 32; pos++) {
		uint32_t bit = 1u << pos;
		int want = bit == ALT_PATH ? EINVAL : 0; /* droce has no alternate path */

		if (!(t->opt & bit))
			continue;
		rc = check(t, STATE | t->req | bit, &a);
		cr_expect_eq(rc, want, "%s %s->%s with optional %s: %d, want %d",
			     type_name(t->type), state_name(t->cur), state_name(t->next),
			     bit_name(pos), rc, want);
	}
	rc = check(t, all, &a);
	cr_expect_eq(rc, 0, "%s %s->%s with every optional but ALT_PATH (0x%x): %d, want 0",
		     type_name(t->type), state_name(t->cur), state_name(t->next), all, rc);
}

ParameterizedTestParameters(qp_trans, missing_required)
{
	return cr_make_param_array(struct trans, spec, DIM(spec));
}

ParameterizedTest(struct trans *t, qp_trans, missing_required)
{
	struct ibv_qp_attr a = good_attr(t->cur, t->next);
	uint32_t opt = t->opt & ~(uint32_t)ALT_PATH;
	unsigned int pos;
	int rc;

	for (pos = 0; pos < 32; pos++) {
		uint32_t bit = 1u << pos;

		if (!(t->req & bit))
			continue;
		rc = check(t, (STATE | t->req) & ~bit, &a);
		cr_expect_eq(rc, EINVAL, "%s %s->%s without required %s: %d, want EINVAL",
			     type_name(t->type), state_name(t->cur), state_name(t->next),
			     bit_name(pos), rc);
		rc = check(t, (STATE | t->req | opt) & ~bit, &a);
		cr_expect_eq(rc, EINVAL,
			     "%s %s->%s with every optional but without required %s: %d, "
			     "want EINVAL",
			     type_name(t->type), state_name(t->cur), state_name(t->next),
			     bit_name(pos), rc);
	}
	/* Without IBV_QP_STATE the target is the current state: judged as cur->cur. */
	if (t->cur != t->next) {
		const struct trans *same = spec_find(t->type, t->cur, t->cur);
		int want = EINVAL;

		if (same != NULL && (same->req & ~t->req) == 0 &&
		    (t->req & ~(same->req | same->opt)) == 0 && !(t->req & ALT_PATH))
			want = 0;
		rc = check(t, t->req, &a);
		cr_expect_eq(rc, want, "%s %s->%s without STATE (judged as %s->%s): %d, want %d",
			     type_name(t->type), state_name(t->cur), state_name(t->next),
			     state_name(t->cur), state_name(t->cur), rc, want);
	}
}

ParameterizedTestParameters(qp_trans, foreign_bit)
{
	return cr_make_param_array(struct trans, spec, DIM(spec));
}

ParameterizedTest(struct trans *t, qp_trans, foreign_bit)
{
	struct ibv_qp_attr a = good_attr(t->cur, t->next);
	unsigned int pos;

	for (pos = 0; pos < 32; pos++) {
		uint32_t bit = 1u << pos;
		int rc;

		if ((STATE | t->req | t->opt) & bit)
			continue;
		rc = check(t, STATE | t->req | bit, &a);
		cr_expect_eq(rc, EINVAL, "%s %s->%s with foreign %s (bit %u): %d, want EINVAL",
			     type_name(t->type), state_name(t->cur), state_name(t->next),
			     bit_name(pos), pos, rc);
	}
}

/* The spec copy above has one row per triple and lists every state for RESET and ERR. */
Test(qp_trans, spec_copy_is_consistent)
{
	size_t i, j;

	for (i = 0; i < DIM(spec); i++) {
		cr_expect_eq(spec[i].req & spec[i].opt, 0, "row %zu: required and optional overlap",
			     i);
		for (j = i + 1; j < DIM(spec); j++)
			cr_expect(!(spec[i].type == spec[j].type && spec[i].cur == spec[j].cur &&
				    spec[i].next == spec[j].next),
				  "rows %zu and %zu are the same transition", i, j);
	}
	cr_expect_eq(DIM(spec), 8 + 14 + 9 + 14 + 9 + 14, "row count");
}

/* ------------------------------------------- transitions not in the table */

Test(qp_trans, every_other_transition_refused)
{
	uint32_t every_bit = 0x03ffffffu; /* every IBV_QP_* bit of rdma-core 44 */
	size_t ti, ci, ni;

	for (ti = 0; ti < DIM(types); ti++)
		for (ci = 0; ci < DIM(states); ci++)
			for (ni = 0; ni < DIM(states); ni++) {
				struct trans t = {types[ti], states[ci], states[ni], 0, 0};
				struct ibv_qp_attr a = good_attr(t.cur, t.next);
				int rc;

				if (spec_find(t.type, t.cur, t.next) != NULL)
					continue;
				cr_expect(!droce_qp_trans_is_valid(t.type, t.cur, t.next),
					  "%s %s->%s is not a transition", type_name(t.type),
					  state_name(t.cur), state_name(t.next));
				cr_expect_eq(droce_qp_attr_required(t.type, t.cur, t.next), 0,
					     "%s %s->%s requires nothing", type_name(t.type),
					     state_name(t.cur), state_name(t.next));
				cr_expect_eq(droce_qp_attr_optional(t.type, t.cur, t.next), 0,
					     "%s %s->%s allows nothing", type_name(t.type),
					     state_name(t.cur), state_name(t.next));
				rc = check(&t, STATE, &a);
				cr_expect_eq(rc, EINVAL, "%s %s->%s with STATE: %d, want EINVAL",
					     type_name(t.type), state_name(t.cur),
					     state_name(t.next), rc);
				rc = check(&t, every_bit & ~(uint32_t)ALT_PATH, &a);
				cr_expect_eq(rc, EINVAL,
					     "%s %s->%s with every attribute: %d, want EINVAL",
					     type_name(t.type), state_name(t.cur),
					     state_name(t.next), rc);
			}
}

/* The classic mistakes, by name. */
Test(qp_trans, named_refusals)
{
	static const struct trans bad[] = {
		{RC, RESET, RTR, 0, 0}, {RC, RESET, RTS, 0, 0}, {RC, INIT, RTS, 0, 0},
		{RC, RTR, SQD, 0, 0},   {RC, RTR, RTR, 0, 0},   {RC, RTS, INIT, 0, 0},
		{RC, RTS, RTR, 0, 0},   {RC, SQE, RTS, 0, 0},   {RC, RTS, SQE, 0, 0},
		{UC, INIT, SQD, 0, 0},  {UC, SQD, INIT, 0, 0},  {UC, SQE, SQE, 0, 0},
		{UD, RESET, RTR, 0, 0}, {UD, ERR, INIT, 0, 0},  {UD, ERR, RTS, 0, 0},
		{UD, SQE, SQD, 0, 0},   {UD, RTR, SQD, 0, 0},   {UD, INIT, RTS, 0, 0},
	};
	size_t i;

	for (i = 0; i < DIM(bad); i++) {
		struct ibv_qp_attr a = good_attr(bad[i].cur, bad[i].next);
		/* The attributes of the legal path through, all together. */
		uint32_t mask = 0x03ffffffu & ~(uint32_t)ALT_PATH;

		cr_expect_eq(check(&bad[i], STATE, &a), EINVAL, "%s %s->%s refused",
			     type_name(bad[i].type), state_name(bad[i].cur),
			     state_name(bad[i].next));
		cr_expect_eq(check(&bad[i], mask, &a), EINVAL,
			     "%s %s->%s refused with every attribute", type_name(bad[i].type),
			     state_name(bad[i].cur), state_name(bad[i].next));
	}
}

/* Without IBV_QP_STATE the QP stays where it is: only RESET, INIT, RTS, SQD and ERR allow that. */
Test(qp_trans, without_state)
{
	size_t ti, si;

	for (ti = 0; ti < DIM(types); ti++)
		for (si = 0; si < DIM(states); si++) {
			enum ibv_qp_state s = states[si];
			bool ok = s != RTR && s != SQE;
			struct trans t = {types[ti], s, s, 0, 0};
			struct ibv_qp_attr a = good_attr(s, IBV_QPS_UNKNOWN);
			enum ibv_qp_state next = IBV_QPS_UNKNOWN;
			int rc;

			cr_expect_eq(spec_find(t.type, s, s) != NULL, ok,
				     "spec copy: %s %s->%s listed", type_name(t.type),
				     state_name(s), state_name(s));
			/* qp_state holds garbage: it must not be read without IBV_QP_STATE. */
			rc = -droce_qp_attr_check(t.type, s, &a, 0, &lim, &next);
			cr_expect_eq(rc, ok ? 0 : EINVAL, "%s in %s, empty mask: %d",
				     type_name(t.type), state_name(s), rc);
			if (ok)
				cr_expect_eq(next, s, "%s in %s, empty mask: stays, got %s",
					     type_name(t.type), state_name(s), state_name(next));
		}
}

/* -------------------------------------------------------- CUR_STATE */

Test(qp_attr, cur_state_must_match)
{
	size_t i, si;

	for (i = 0; i < DIM(spec); i++) {
		const struct trans *t = &spec[i];

		if (!(t->opt & CUR_STATE))
			continue;
		for (si = 0; si < DIM(states); si++) {
			struct ibv_qp_attr a = good_attr(t->cur, t->next);
			int want = states[si] == t->cur ? 0 : EINVAL;
			int rc;

			a.cur_qp_state = states[si];
			rc = check(t, STATE | t->req | CUR_STATE, &a);
			cr_expect_eq(rc, want, "%s %s->%s with CUR_STATE %s: %d, want %d",
				     type_name(t->type), state_name(t->cur), state_name(t->next),
				     state_name(states[si]), rc, want);
		}
	}
}

/* ------------------------------------------------ value boundaries */

/* Check one value in every spec row of @p type that allows @p bit. */
static void expect_value(enum ibv_qp_type type, uint32_t bit, const char *what,
			 void (*set)(struct ibv_qp_attr *, uint64_t), uint64_t v, int want,
			 const struct droce_qp_attr_limits *l)
{
	unsigned int rows = 0;
	size_t i;

	for (i = 0; i < DIM(spec); i++) {
		const struct trans *t = &spec[i];
		struct ibv_qp_attr a = good_attr(t->cur, t->next);
		int rc;

		if (t->type != type || !((t->req | t->opt) & bit))
			continue;
		set(&a, v);
		rc = check_lim(t, STATE | t->req | bit, &a, l);
		cr_expect_eq(rc, want, "%s %s->%s %s = %llu: %d, want %d", type_name(t->type),
			     state_name(t->cur), state_name(t->next), what, (unsigned long long)v,
			     rc, want);
		rows++;
	}
	cr_expect_gt(rows, 0, "%s: some %s transition takes %s", what, type_name(type), what);
}

#define SETTER(field)                                              \
	static void set_##field(struct ibv_qp_attr *a, uint64_t v) \
	{                                                          \
		a->field = (__typeof__(a->field))v;                \
	}

SETTER(path_mtu)
SETTER(timeout)
SETTER(retry_cnt)
SETTER(rnr_retry)
SETTER(min_rnr_timer)
SETTER(sq_psn)
SETTER(rq_psn)
SETTER(dest_qp_num)
SETTER(port_num)
SETTER(pkey_index)
SETTER(max_rd_atomic)
SETTER(max_dest_rd_atomic)
SETTER(qp_access_flags)
SETTER(qkey)
SETTER(path_mig_state)
SETTER(en_sqd_async_notify)

static void set_av_is_global(struct ibv_qp_attr *a, uint64_t v)
{
	a->ah_attr.is_global = (uint8_t)v;
}

static void set_av_sgid_index(struct ibv_qp_attr *a, uint64_t v)
{
	a->ah_attr.grh.sgid_index = (uint8_t)v;
}

static void set_av_port(struct ibv_qp_attr *a, uint64_t v)
{
	a->ah_attr.port_num = (uint8_t)v;
}

static void set_av_sl(struct ibv_qp_attr *a, uint64_t v)
{
	a->ah_attr.sl = (uint8_t)v;
}

static void set_av_flow_label(struct ibv_qp_attr *a, uint64_t v)
{
	a->ah_attr.grh.flow_label = (uint32_t)v;
}

static void set_av_static_rate(struct ibv_qp_attr *a, uint64_t v)
{
	a->ah_attr.static_rate = (uint8_t)v;
}

static void set_av_dlid(struct ibv_qp_attr *a, uint64_t v)
{
	a->ah_attr.dlid = (uint16_t)v;
}

#define EXPECT(type, bit, field, v, want) \
	expect_value(type, bit, #field, set_##field, v, want, &lim)

Test(qp_attr_value, path_mtu)
{
	struct droce_qp_attr_limits small = lim;
	enum ibv_qp_type t;

	small.max_mtu = IBV_MTU_1024;
	for (t = RC; t <= UC; t++) {
		EXPECT(t, MTU, path_mtu, 0, EINVAL);
		EXPECT(t, MTU, path_mtu, IBV_MTU_256, 0);
		EXPECT(t, MTU, path_mtu, IBV_MTU_512, 0);
		EXPECT(t, MTU, path_mtu, IBV_MTU_2048, 0);
		EXPECT(t, MTU, path_mtu, IBV_MTU_4096, 0);
		EXPECT(t, MTU, path_mtu, IBV_MTU_4096 + 1, EINVAL);
		EXPECT(t, MTU, path_mtu, 0xffffffffu, EINVAL);
		expect_value(t, MTU, "path_mtu (port at 1024)", set_path_mtu, IBV_MTU_1024, 0,
			     &small);
		expect_value(t, MTU, "path_mtu (port at 1024)", set_path_mtu, IBV_MTU_2048, EINVAL,
			     &small);
	}
}

Test(qp_attr_value, timeout)
{
	EXPECT(RC, TIMEOUT, timeout, 0, 0);
	EXPECT(RC, TIMEOUT, timeout, 31, 0);
	EXPECT(RC, TIMEOUT, timeout, 32, EINVAL);
	EXPECT(RC, TIMEOUT, timeout, 255, EINVAL);
}

Test(qp_attr_value, retry_cnt)
{
	EXPECT(RC, RETRY, retry_cnt, 0, 0);
	EXPECT(RC, RETRY, retry_cnt, 7, 0);
	EXPECT(RC, RETRY, retry_cnt, 8, EINVAL);
	EXPECT(RC, RETRY, retry_cnt, 255, EINVAL);
}

Test(qp_attr_value, rnr_retry)
{
	EXPECT(RC, RNR_RETRY, rnr_retry, 0, 0);
	EXPECT(RC, RNR_RETRY, rnr_retry, 7, 0);
	EXPECT(RC, RNR_RETRY, rnr_retry, 8, EINVAL);
	EXPECT(RC, RNR_RETRY, rnr_retry, 255, EINVAL);
}

Test(qp_attr_value, min_rnr_timer)
{
	EXPECT(RC, MIN_RNR, min_rnr_timer, 0, 0);
	EXPECT(RC, MIN_RNR, min_rnr_timer, 31, 0);
	EXPECT(RC, MIN_RNR, min_rnr_timer, 32, EINVAL);
	EXPECT(RC, MIN_RNR, min_rnr_timer, 255, EINVAL);
}

Test(qp_attr_value, psn_and_qpn_are_24_bits)
{
	enum ibv_qp_type t;

	for (t = RC; t <= UD; t++) {
		EXPECT(t, SQ_PSN, sq_psn, 0, 0);
		EXPECT(t, SQ_PSN, sq_psn, 0xffffff, 0);
		EXPECT(t, SQ_PSN, sq_psn, 0x1000000, EINVAL);
		EXPECT(t, SQ_PSN, sq_psn, 0xffffffff, EINVAL);
	}
	for (t = RC; t <= UC; t++) {
		EXPECT(t, RQ_PSN, rq_psn, 0, 0);
		EXPECT(t, RQ_PSN, rq_psn, 0xffffff, 0);
		EXPECT(t, RQ_PSN, rq_psn, 0x1000000, EINVAL);
		EXPECT(t, RQ_PSN, rq_psn, 0xffffffff, EINVAL);
		EXPECT(t, DEST_QPN, dest_qp_num, 0, 0);
		EXPECT(t, DEST_QPN, dest_qp_num, 0xffffff, 0);
		EXPECT(t, DEST_QPN, dest_qp_num, 0x1000000, EINVAL);
		EXPECT(t, DEST_QPN, dest_qp_num, 0xffffffff, EINVAL);
	}
}

Test(qp_attr_value, port_num)
{
	enum ibv_qp_type t;

	for (t = RC; t <= UD; t++) {
		EXPECT(t, PORT, port_num, 0, EINVAL);
		EXPECT(t, PORT, port_num, 1, 0);
		EXPECT(t, PORT, port_num, 2, 0); /* lim.port_count */
		EXPECT(t, PORT, port_num, 3, EINVAL);
		EXPECT(t, PORT, port_num, 255, EINVAL);
	}
}

Test(qp_attr_value, pkey_index)
{
	enum ibv_qp_type t;

	for (t = RC; t <= UD; t++) {
		EXPECT(t, PKEY, pkey_index, 0, 0);
		EXPECT(t, PKEY, pkey_index, 3, 0); /* lim.pkey_table_len - 1 */
		EXPECT(t, PKEY, pkey_index, 4, EINVAL);
		EXPECT(t, PKEY, pkey_index, 0xffff, EINVAL);
	}
}

Test(qp_attr_value, rd_atomic)
{
	EXPECT(RC, RD_ATOMIC, max_rd_atomic, 0, 0);
	EXPECT(RC, RD_ATOMIC, max_rd_atomic, 16, 0); /* lim.max_rd_atomic */
	EXPECT(RC, RD_ATOMIC, max_rd_atomic, 17, EINVAL);
	EXPECT(RC, RD_ATOMIC, max_rd_atomic, 255, EINVAL);
	EXPECT(RC, DEST_RD, max_dest_rd_atomic, 0, 0);
	EXPECT(RC, DEST_RD, max_dest_rd_atomic, 16, 0); /* lim.max_dest_rd_atomic */
	EXPECT(RC, DEST_RD, max_dest_rd_atomic, 17, EINVAL);
	EXPECT(RC, DEST_RD, max_dest_rd_atomic, 255, EINVAL);
}

Test(qp_attr_value, access_flags)
{
	static const struct {
		unsigned int flags;
		int rc, uc;
	} cases[] = {
		{0, 0, 0},
		{IBV_ACCESS_REMOTE_WRITE, 0, 0},
		{IBV_ACCESS_LOCAL_WRITE, 0, 0}, /* meaningless on a QP, tolerated */
		{IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0, 0},
		{IBV_ACCESS_REMOTE_READ, 0, EINVAL},
		{IBV_ACCESS_REMOTE_ATOMIC, 0, EINVAL},
		{IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, 0,
		 EINVAL},
		{IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_REMOTE_ATOMIC,
		 0, EINVAL},
		{IBV_ACCESS_MW_BIND, EINVAL, EINVAL},
		{IBV_ACCESS_ZERO_BASED, EINVAL, EINVAL},
		{IBV_ACCESS_ON_DEMAND, EINVAL, EINVAL},
		{IBV_ACCESS_HUGETLB, EINVAL, EINVAL},
		{IBV_ACCESS_RELAXED_ORDERING, EINVAL, EINVAL},
		{IBV_ACCESS_REMOTE_WRITE | (1u << 31), EINVAL, EINVAL},
	};
	size_t i;

	for (i = 0; i < DIM(cases); i++) {
		EXPECT(RC, ACCESS, qp_access_flags, cases[i].flags, cases[i].rc);
		EXPECT(UC, ACCESS, qp_access_flags, cases[i].flags, cases[i].uc);
	}
}

Test(qp_attr_value, qkey)
{
	struct droce_qp_attr_limits root = lim;

	root.privileged = true;
	EXPECT(UD, QKEY, qkey, 0, 0);
	EXPECT(UD, QKEY, qkey, 0x7fffffff, 0);
	EXPECT(UD, QKEY, qkey, 0x80000000, EINVAL);
	EXPECT(UD, QKEY, qkey, 0xffffffff, EINVAL);
	expect_value(UD, QKEY, "qkey (privileged)", set_qkey, 0x80000000, 0, &root);
	expect_value(UD, QKEY, "qkey (privileged)", set_qkey, 0xffffffff, 0, &root);
}

Test(qp_attr_value, path_mig_state)
{
	enum ibv_qp_type t;

	for (t = RC; t <= UC; t++) {
		EXPECT(t, MIG, path_mig_state, IBV_MIG_MIGRATED, 0);
		EXPECT(t, MIG, path_mig_state, IBV_MIG_REARM, EINVAL);
		EXPECT(t, MIG, path_mig_state, IBV_MIG_ARMED, EINVAL);
		EXPECT(t, MIG, path_mig_state, 3, EINVAL);
	}
}

Test(qp_attr_value, en_sqd_async_notify_any)
{
	enum ibv_qp_type t;

	for (t = RC; t <= UD; t++) {
		EXPECT(t, SQD_NOTIFY, en_sqd_async_notify, 0, 0);
		EXPECT(t, SQD_NOTIFY, en_sqd_async_notify, 1, 0);
		EXPECT(t, SQD_NOTIFY, en_sqd_async_notify, 255, 0);
	}
}

Test(qp_attr_value, av)
{
	enum ibv_qp_type t;

	for (t = RC; t <= UC; t++) {
		EXPECT(t, AV, av_is_global, 0, EINVAL); /* RoCE: the GRH is mandatory */
		EXPECT(t, AV, av_is_global, 1, 0);
		EXPECT(t, AV, av_sgid_index, 0, 0);
		EXPECT(t, AV, av_sgid_index, 16, 0); /* lim.gid_table_len - 1 */
		EXPECT(t, AV, av_sgid_index, 17, EINVAL);
		EXPECT(t, AV, av_sgid_index, 255, EINVAL);
		EXPECT(t, AV, av_port, 0, EINVAL);
		EXPECT(t, AV, av_port, 2, 0);
		EXPECT(t, AV, av_port, 3, EINVAL);
		EXPECT(t, AV, av_sl, 15, 0);
		EXPECT(t, AV, av_sl, 16, EINVAL);
		EXPECT(t, AV, av_flow_label, 0xfffff, 0);
		EXPECT(t, AV, av_flow_label, 0x100000, EINVAL);
		EXPECT(t, AV, av_static_rate, 0, 0);
		EXPECT(t, AV, av_static_rate, 255, 0);
		EXPECT(t, AV, av_dlid, 0xffff, 0);
	}
}

/* UD takes its address with each work request: never an AV in modify QP. */
Test(qp_attr_value, ud_never_takes_an_av)
{
	size_t i;

	for (i = 0; i < DIM(spec); i++) {
		const struct trans *t = &spec[i];
		struct ibv_qp_attr a = good_attr(t->cur, t->next);

		if (t->type != UD)
			continue;
		cr_expect_eq(check(t, STATE | t->req | AV, &a), EINVAL, "UD %s->%s with a valid AV",
			     state_name(t->cur), state_name(t->next));
	}
}

/* The spec offers ALT_PATH on several transitions; droce has no APM and refuses it. */
Test(qp_attr_value, alt_path_refused)
{
	unsigned int rows = 0;
	size_t i;

	for (i = 0; i < DIM(spec); i++) {
		const struct trans *t = &spec[i];
		struct ibv_qp_attr a = good_attr(t->cur, t->next);

		if (!(t->opt & ALT_PATH))
			continue;
		cr_expect_eq(check(t, STATE | t->req | ALT_PATH, &a), EINVAL,
			     "%s %s->%s with a valid alternate path", type_name(t->type),
			     state_name(t->cur), state_name(t->next));
		rows++;
	}
	cr_expect_eq(rows, 2 * 5, "ALT_PATH is optional on 5 RC and 5 UC transitions");
	cr_expect_eq(DROCE_QP_ATTR_UNSUPPORTED, (uint32_t)ALT_PATH, "unsupported: ALT_PATH only");
}

/* Values of attributes outside the mask are not looked at. */
Test(qp_attr_value, absent_attributes_ignored)
{
	size_t i;

	for (i = 0; i < DIM(spec); i++) {
		const struct trans *t = &spec[i];
		struct ibv_qp_attr a;
		uint32_t mask = STATE | t->req;
		int rc;

		a = good_attr(t->cur, t->next);
		if (!(mask & MTU))
			a.path_mtu = 0;
		if (!(mask & TIMEOUT))
			a.timeout = 200;
		if (!(mask & RETRY))
			a.retry_cnt = 200;
		if (!(mask & RNR_RETRY))
			a.rnr_retry = 200;
		if (!(mask & SQ_PSN))
			a.sq_psn = 0xffffffff;
		if (!(mask & RQ_PSN))
			a.rq_psn = 0xffffffff;
		if (!(mask & DEST_QPN))
			a.dest_qp_num = 0xffffffff;
		if (!(mask & PORT))
			a.port_num = 0;
		if (!(mask & PKEY))
			a.pkey_index = 0xffff;
		if (!(mask & ACCESS))
			a.qp_access_flags = ~0u;
		if (!(mask & QKEY))
			a.qkey = 0xffffffff;
		if (!(mask & AV))
			a.ah_attr.is_global = 0;
		a.cur_qp_state = IBV_QPS_UNKNOWN;
		a.path_mig_state = IBV_MIG_ARMED;
		rc = check(t, mask, &a);
		cr_expect_eq(rc, 0, "%s %s->%s: bad values outside the mask: %d, want 0",
			     type_name(t->type), state_name(t->cur), state_name(t->next), rc);
	}
}

/* ------------------------------------------------------ arguments */

Test(qp_attr_args, null_pointers)
{
	struct ibv_qp_attr a = good_attr(RESET, INIT);
	uint32_t mask = STATE | PKEY | PORT | ACCESS;
	enum ibv_qp_state next = IBV_QPS_UNKNOWN;

	cr_expect_eq(-droce_qp_attr_check(RC, RESET, NULL, (int)mask, &lim, &next), EINVAL,
		     "NULL attr");
	cr_expect_eq(-droce_qp_attr_check(RC, RESET, NULL, 0, &lim, &next), EINVAL,
		     "NULL attr, empty mask");
	cr_expect_eq(-droce_qp_attr_check(RC, RESET, &a, (int)mask, NULL, &next), EINVAL,
		     "NULL limits");
	cr_expect_eq(next, IBV_QPS_UNKNOWN, "next untouched on failure");
	cr_expect_eq(-droce_qp_attr_check(RC, RESET, &a, (int)mask, &lim, NULL), 0,
		     "NULL next is allowed");
}

Test(qp_attr_args, unsupported_types)
{
	static const enum ibv_qp_type bad[] = {
		0, 1, 5, IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV, IBV_QPT_DRIVER,
	};
	struct ibv_qp_attr a = good_attr(RESET, INIT);
	size_t i;

	for (i = 0; i < DIM(bad); i++) {
		cr_expect_eq(-droce_qp_attr_check(bad[i], RESET, &a,
						  (int)(STATE | PKEY | PORT | ACCESS), &lim, NULL),
			     EINVAL, "QP type %d RESET->INIT", bad[i]);
		cr_expect_eq(-droce_qp_attr_check(bad[i], INIT, &a, (int)STATE, &lim, NULL), EINVAL,
			     "QP type %d INIT->RESET", bad[i]);
		cr_expect(!droce_qp_trans_is_valid(bad[i], INIT, RESET),
			  "QP type %d: no transition", bad[i]);
		cr_expect_eq(droce_qp_attr_required(bad[i], RESET, INIT), 0,
			     "QP type %d: nothing required", bad[i]);
		cr_expect_eq(droce_qp_attr_optional(bad[i], INIT, INIT), 0,
			     "QP type %d: nothing optional", bad[i]);
	}
}

Test(qp_attr_args, bad_states)
{
	static const int bad[] = {IBV_QPS_UNKNOWN, IBV_QPS_UNKNOWN + 1, 100, -1};
	size_t i;

	for (i = 0; i < DIM(bad); i++) {
		enum ibv_qp_state s = (enum ibv_qp_state)bad[i];
		struct ibv_qp_attr a = good_attr(RESET, s);

		cr_expect_eq(-droce_qp_attr_check(RC, RESET, &a, (int)STATE, &lim, NULL), EINVAL,
			     "RC RESET->state %d", bad[i]);
		a = good_attr(s, RESET);
		cr_expect_eq(-droce_qp_attr_check(RC, s, &a, (int)STATE, &lim, NULL), EINVAL,
			     "RC state %d->RESET", bad[i]);
		cr_expect_eq(-droce_qp_attr_check(UD, s, &a, 0, &lim, NULL), EINVAL,
			     "UD in state %d, empty mask", bad[i]);
		cr_expect(!droce_qp_trans_is_valid(RC, s, ERR), "RC state %d->ERR", bad[i]);
		cr_expect(!droce_qp_trans_is_valid(RC, RESET, s), "RC RESET->state %d", bad[i]);
	}
}

/* --------------------------------------------------------- names */

Test(qp_names, states)
{
	size_t i;

	for (i = 0; i < DIM(states); i++)
		cr_expect_str_eq(droce_qp_state_name(states[i]), state_name(states[i]),
				 "state %d is %s", states[i], state_name(states[i]));
	cr_expect_str_eq(droce_qp_state_name(IBV_QPS_UNKNOWN), "UNKNOWN", "IBV_QPS_UNKNOWN");
	cr_expect_str_eq(droce_qp_state_name((enum ibv_qp_state)99), "UNKNOWN", "state 99");
	cr_expect_str_eq(droce_qp_state_name((enum ibv_qp_state) - 1), "UNKNOWN", "state -1");
}

Test(qp_names, attribute_bits)
{
	unsigned int pos;

	for (pos = 0; pos < 32; pos++) {
		const char *got = droce_qp_attr_name(1u << pos);

		if (bit_names[pos] == NULL)
			cr_expect_null(got, "bit %u has no name", pos);
		else
			cr_expect(got != NULL && strcmp(got, bit_names[pos]) == 0,
				  "bit %u is %s, got %s", pos, bit_names[pos],
				  got != NULL ? got : "NULL");
	}
	cr_expect_null(droce_qp_attr_name(0), "no bit");
	cr_expect_null(droce_qp_attr_name(IBV_QP_STATE | IBV_QP_PORT), "two bits");
	cr_expect_str_eq(droce_qp_attr_name(IBV_QP_DEST_QPN), "DEST_QPN", "IBV_QP_DEST_QPN");
}

/* ------------------------------------------- doc/qp_state.md against the code */

#define DOC_ROWS_MAX 64

/* One row of the markdown table: sets of types and current states, one target. */
struct doc_row {
	unsigned int types; /* 1 << enum ibv_qp_type */
	unsigned int from;  /* 1 << enum ibv_qp_state */
	enum ibv_qp_state to;
	uint32_t req, opt;
};

static char *trim(char *p)
{
	char *end;

	while (*p == ' ')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\n'))
		*--end = '\0';
	return p;
}

static int state_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < DIM(states); i++)
		if (strcmp(name, state_name(states[i])) == 0)
			return (int)states[i];
	return -1;
}

/* Comma-separated names -> bit set; "-" is the empty set; asserts on an unknown name. */
static uint32_t doc_list(char *text, int (*lookup)(const char *), const char *what)
{
	uint32_t set = 0;
	char *save = NULL, *tok;

	if (strcmp(trim(text), "-") == 0)
		return 0;
	for (tok = strtok_r(text, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		int v = lookup(trim(tok));

		cr_assert_geq(v, 0, "doc/qp_state.md: unknown %s \"%s\"", what, trim(tok));
		set |= 1u << v;
	}
	return set;
}

static int type_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < DIM(types); i++)
		if (strcmp(name, type_name(types[i])) == 0)
			return (int)types[i];
	return -1;
}

static int from_by_name(const char *name)
{
	return strcmp(name, "any") == 0 ? 31 : state_by_name(name);
}

static int bit_by_name(const char *name)
{
	int pos;

	for (pos = 0; pos < 32; pos++)
		if (bit_names[pos] != NULL && strcmp(name, bit_names[pos]) == 0)
			return pos;
	return -1;
}

static size_t doc_read(struct doc_row *rows)
{
	char line[1024];
	bool in = false;
	size_t n = 0;
	FILE *f = fopen(droce_test_data("../../doc/qp_state.md"), "r");

	cr_assert_not_null(f, "doc/qp_state.md opens");
	while (fgets(line, sizeof(line), f) != NULL) {
		char *col[6], *save = NULL, *arrow;
		int ncol = 0, to;

		if (strncmp(line, "<!-- qp-table begin", 19) == 0)
			in = true;
		else if (strncmp(line, "<!-- qp-table end", 17) == 0)
			in = false;
		if (!in || line[0] != '|' || strncmp(line, "| types", 7) == 0 ||
		    strncmp(line, "|---", 4) == 0)
			continue;
		cr_assert_lt(n, DOC_ROWS_MAX, "doc/qp_state.md: too many rows");
		for (col[ncol] = strtok_r(line, "|", &save); col[ncol] != NULL && ncol < 5;)
			col[++ncol] = strtok_r(NULL, "|", &save);
		cr_assert_eq(ncol, 5, "doc/qp_state.md row %zu has 4 columns", n + 1);
		arrow = strstr(col[1], "->");
		cr_assert_not_null(arrow, "doc/qp_state.md row %zu: transition has ->", n + 1);
		*arrow = '\0';
		to = state_by_name(trim(arrow + 2));
		cr_assert_geq(to, 0, "doc/qp_state.md row %zu: target state", n + 1);
		rows[n].types = doc_list(col[0], type_by_name, "QP type");
		rows[n].from = doc_list(col[1], from_by_name, "state");
		if (rows[n].from & (1u << 31))
			rows[n].from = (1u << IBV_QPS_UNKNOWN) - 1;
		rows[n].to = (enum ibv_qp_state)to;
		rows[n].req = doc_list(col[2], bit_by_name, "attribute");
		rows[n].opt = doc_list(col[3], bit_by_name, "attribute");
		n++;
	}
	fclose(f);
	return n;
}

Test(qp_doc, table_matches_code)
{
	struct doc_row rows[DOC_ROWS_MAX];
	size_t n = doc_read(rows), ti, ci, ni, i;

	cr_expect_gt(n, 0, "doc/qp_state.md has a table");
	for (ti = 0; ti < DIM(types); ti++)
		for (ci = 0; ci < DIM(states); ci++)
			for (ni = 0; ni < DIM(states); ni++) {
				enum ibv_qp_type t = types[ti];
				enum ibv_qp_state c = states[ci], x = states[ni];
				const struct doc_row *hit = NULL;
				unsigned int hits = 0;

				for (i = 0; i < n; i++)
					if ((rows[i].types & (1u << t)) &&
					    (rows[i].from & (1u << c)) && rows[i].to == x) {
						hit = &rows[i];
						hits++;
					}
				cr_expect_leq(hits, 1, "doc: %s %s->%s in %u rows", type_name(t),
					      state_name(c), state_name(x), hits);
				cr_expect_eq(hit != NULL, droce_qp_trans_is_valid(t, c, x),
					     "doc: %s %s->%s listed %d, code says %d", type_name(t),
					     state_name(c), state_name(x), hit != NULL,
					     droce_qp_trans_is_valid(t, c, x));
				if (hit == NULL)
					continue;
				cr_expect_eq(hit->req, droce_qp_attr_required(t, c, x),
					     "doc: %s %s->%s requires 0x%x, code 0x%x",
					     type_name(t), state_name(c), state_name(x), hit->req,
					     droce_qp_attr_required(t, c, x));
				cr_expect_eq(hit->opt, droce_qp_attr_optional(t, c, x),
					     "doc: %s %s->%s allows 0x%x, code 0x%x", type_name(t),
					     state_name(c), state_name(x), hit->opt,
					     droce_qp_attr_optional(t, c, x));
			}
}
