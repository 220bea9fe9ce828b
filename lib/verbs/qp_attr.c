/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Modify-QP rules as data: the transition table of IBTA Vol. 1 chapter 11
 * ("Modify Queue Pair": QP state transitions with their required and optional
 * attributes, RC/UC/UD columns) and one value check per attribute bit.
 * doc/qp_state.md prints the same table; tests/unit/test_qp_attr.c holds an
 * independent copy written by hand.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>

#include "droce_qp_attr.h"

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------ transition table */

/* QP types a row applies to. */
#define T_RC  (1u << 0)
#define T_UC  (1u << 1)
#define T_UD  (1u << 2)
#define T_ALL (T_RC | T_UC | T_UD)

/* Current states a row applies to. */
#define S(st)  (1u << IBV_QPS_##st)
#define S_ANY  (S(RESET) | S(INIT) | S(RTR) | S(RTS) | S(SQD) | S(SQE) | S(ERR))
#define A(bit) ((uint32_t)IBV_QP_##bit)

/* One or more transitions sharing their attribute sets. */
struct qp_trans_rule {
	uint8_t types;        /* T_* */
	uint8_t from;         /* S() of every current state */
	enum ibv_qp_state to; /* target state */
	uint32_t required;    /* IBV_QP_* bits besides IBV_QP_STATE */
	uint32_t optional;    /* IBV_QP_* bits the transition may carry */
};

/*
 * IBTA Vol. 1, chapter 11, Modify Queue Pair: the QP state transition table.
 * A (type, current, target) triple matches at most one row; one not listed is
 * not a modify-QP transition (RESET->RTR, INIT->RTS, RTR->RTR, RTR->SQD, any ->SQE,
 * SQE->SQE, RC SQE->RTS...). Only the QP itself enters SQE, after a send error on
 * UC or UD; the consumer resumes it with SQE->RTS. RC never enters SQE: a send
 * error breaks the connection and the QP goes to ERR.
 */
static const struct qp_trans_rule qp_trans_rules[] = {
	/* Any state to Reset or Error, nothing but the state. */
	{T_ALL, S_ANY, IBV_QPS_RESET, 0, 0},
	{T_ALL, S_ANY, IBV_QPS_ERR, 0, 0},

	/* Reset -> Init: the port, the partition and the local access rights. */
	{T_RC | T_UC, S(RESET), IBV_QPS_INIT, A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS), 0},
	{T_UD, S(RESET), IBV_QPS_INIT, A(PKEY_INDEX) | A(PORT) | A(QKEY), 0},

	/* Init -> Init: the same attributes, each optional. */
	{T_RC | T_UC, S(INIT), IBV_QPS_INIT, 0, A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS)},
	{T_UD, S(INIT), IBV_QPS_INIT, 0, A(PKEY_INDEX) | A(PORT) | A(QKEY)},

	/* Init -> RTR: the connection's remote end and receive side. */
	{T_RC, S(INIT), IBV_QPS_RTR,
	 A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) | A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER),
	 A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX)},
	{T_UC, S(INIT), IBV_QPS_RTR, A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN),
	 A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX)},
	{T_UD, S(INIT), IBV_QPS_RTR, 0, A(PKEY_INDEX) | A(QKEY)},

	/* RTR -> RTS: the send side. */
	{T_RC, S(RTR), IBV_QPS_RTS,
	 A(SQ_PSN) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC),
	 A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(MIN_RNR_TIMER) | A(PATH_MIG_STATE)},
	{T_UC, S(RTR), IBV_QPS_RTS, A(SQ_PSN),
	 A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PATH_MIG_STATE)},
	{T_UD, S(RTR), IBV_QPS_RTS, A(SQ_PSN), A(CUR_STATE) | A(QKEY)},

	/* RTS -> RTS and SQD -> RTS: the same optional attributes. */
	{T_RC, S(RTS) | S(SQD), IBV_QPS_RTS, 0,
	 A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(MIN_RNR_TIMER) | A(PATH_MIG_STATE)},
	{T_UC, S(RTS) | S(SQD), IBV_QPS_RTS, 0,
	 A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PATH_MIG_STATE)},
	{T_UD, S(RTS) | S(SQD), IBV_QPS_RTS, 0, A(CUR_STATE) | A(QKEY)},

	/* SQE -> RTS: UC and UD only. */
	{T_UC, S(SQE), IBV_QPS_RTS, 0, A(CUR_STATE) | A(ACCESS_FLAGS)},
	{T_UD, S(SQE), IBV_QPS_RTS, 0, A(CUR_STATE) | A(QKEY)},

	/* RTS -> SQD: drain the send queue, optionally with an event when drained. */
	{T_ALL, S(RTS), IBV_QPS_SQD, 0, A(EN_SQD_ASYNC_NOTIFY)},

	/* SQD -> SQD: what may change once the send queue is drained. */
	{T_RC, S(SQD), IBV_QPS_SQD, 0,
	 A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC) |
		 A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) |
		 A(MIN_RNR_TIMER) | A(PATH_MIG_STATE)},
	{T_UC, S(SQD), IBV_QPS_SQD, 0,
	 A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) | A(PATH_MIG_STATE)},
	{T_UD, S(SQD), IBV_QPS_SQD, 0, A(PKEY_INDEX) | A(QKEY)},
};

static unsigned int qp_type_bit(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return T_RC;
	case IBV_QPT_UC:
		return T_UC;
	case IBV_QPT_UD:
		return T_UD;
	default:
		return 0;
	}
}

static bool qp_state_is_valid(enum ibv_qp_state state)
{
	return (unsigned int)state < IBV_QPS_UNKNOWN;
}

static const struct qp_trans_rule *qp_trans_find(enum ibv_qp_type type, enum ibv_qp_state cur,
						 enum ibv_qp_state next)
{
	unsigned int t = qp_type_bit(type);
	size_t i;

	if (t == 0 || !qp_state_is_valid(cur) || !qp_state_is_valid(next))
		return NULL;
	for (i = 0; i < DIM(qp_trans_rules); i++) {
		const struct qp_trans_rule *r = &qp_trans_rules[i];

		if ((r->types & t) && (r->from & (1u << cur)) && r->to == next)
			return r;
	}
	return NULL;
}

bool droce_qp_trans_is_valid(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next)
{
	return qp_trans_find(type, cur, next) != NULL;
}

uint32_t droce_qp_attr_required(enum ibv_qp_type type, enum ibv_qp_state cur,
				enum ibv_qp_state next)
{
	const struct qp_trans_rule *r = qp_trans_find(type, cur, next);

	return r != NULL ? r->required : 0;
}

uint32_t droce_qp_attr_optional(enum ibv_qp_type type, enum ibv_qp_state cur,
				enum ibv_qp_state next)
{
	const struct qp_trans_rule *r = qp_trans_find(type, cur, next);

	return r != NULL ? r->optional : 0;
}

/* ------------------------------------------------------------ state names */

static const char *const qp_state_names[IBV_QPS_UNKNOWN] = {
	[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
	[IBV_QPS_RTS] = "RTS",     [IBV_QPS_SQD] = "SQD",   [IBV_QPS_SQE] = "SQE",
	[IBV_QPS_ERR] = "ERR",
};

const char *droce_qp_state_name(enum ibv_qp_state state)
{
	return qp_state_is_valid(state) ? qp_state_names[state] : "UNKNOWN";
}

/* ----------------------------------------------------------- value checks */

/* What a value check may look at besides the attributes. */
struct qp_check_ctx {
	enum ibv_qp_type type;
	enum ibv_qp_state cur;
	const struct droce_qp_attr_limits *lim;
};

typedef bool (*qp_value_ok_fn)(const struct ibv_qp_attr *a, const struct qp_check_ctx *c);

static bool port_ok(uint8_t port, const struct droce_qp_attr_limits *lim)
{
	return port >= 1 && port <= lim->port_count;
}

/* The consumer's idea of the current state must be the right one (IBTA 11, Modify QP). */
static bool cur_state_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	return a->cur_qp_state == c->cur;
}

/* Any value: non-zero asks for the "send queue drained" event. */
static bool any_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	(void)a;
	(void)c;
	return true;
}

/*
 * Remote access rights: RC may allow RDMA Write, Read and Atomic; UC carries
 * RDMA Write but no Read or Atomic (IBTA 9.2, the UC opcodes), so those are refused.
 * IBV_ACCESS_LOCAL_WRITE means nothing on a QP but many applications pass it: tolerated.
 */
static bool access_flags_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	unsigned int allowed = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	if (c->type == IBV_QPT_RC)
		allowed |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	return (a->qp_access_flags & ~allowed) == 0;
}

static bool pkey_index_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	return a->pkey_index < c->lim->pkey_table_len;
}

static bool port_num_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	return port_ok(a->port_num, c->lim);
}

/* A controlled Q_Key (high bit set) is for privileged consumers only. */
static bool qkey_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	return (a->qkey & DROCE_QKEY_PRIVILEGED) == 0 || c->lim->privileged;
}

/*
 * The primary path. RoCE addresses by GID: the GRH is mandatory (IBTA annexes A16
 * and A17; RoCEv2 turns it into the IP header), the source GID is an index into
 * the port's table, the SL is a 4-bit field and the flow label a 20-bit one. DLID, source path bits
 * and static rate are not used on Ethernet: any value.
 */
static bool av_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	const struct ibv_ah_attr *ah = &a->ah_attr;

	return ah->is_global != 0 && ah->grh.sgid_index < c->lim->gid_table_len &&
	       ah->grh.flow_label <= 0xfffffu && ah->sl <= 15 && port_ok(ah->port_num, c->lim);
}

static bool path_mtu_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	return a->path_mtu >= IBV_MTU_256 && a->path_mtu <= IBV_MTU_4096 &&
	       a->path_mtu <= c->lim->max_mtu;
}

/* 5-bit local ACK timeout code (IBTA 9.7, Local ACK Timeout); 0 means infinite. */
static bool timeout_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	(void)c;
	return a->timeout <= 31;
}

/* 3-bit retry counters; a RNR retry count of 7 means "retry forever". */
static bool retry_cnt_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	(void)c;
	return a->retry_cnt <= 7;
}

static bool rnr_retry_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	(void)c;
	return a->rnr_retry <= 7;
}

static bool rq_psn_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	(void)c;
	return a->rq_psn <= DROCE_QP_24BIT_MAX;
}

static bool sq_psn_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	(void)c;
	return a->sq_psn <= DROCE_QP_24BIT_MAX;
}

static bool max_rd_atomic_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	return a->max_rd_atomic <= c->lim->max_rd_atomic;
}

static bool max_dest_rd_atomic_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	return a->max_dest_rd_atomic <= c->lim->max_dest_rd_atomic;
}

/* 5-bit RNR NAK timer code (IBTA 9.7.5.2). */
static bool min_rnr_timer_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	(void)c;
	return a->min_rnr_timer <= 31;
}

/* No alternate path ever exists, so the only migration state is "migrated". */
static bool path_mig_state_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	(void)c;
	return a->path_mig_state == IBV_MIG_MIGRATED;
}

static bool dest_qpn_ok(const struct ibv_qp_attr *a, const struct qp_check_ctx *c)
{
	(void)c;
	return a->dest_qp_num <= DROCE_QP_24BIT_MAX;
}

/* Every IBV_QP_* bit of rdma-core 44 by position: its name and its value check. */
static const struct qp_attr_bit {
	const char *name;
	qp_value_ok_fn ok; /* NULL: refused (IBV_QP_STATE is read before the table lookup) */
} qp_attr_bits[] = {
	[0] = {"STATE", NULL},
	[1] = {"CUR_STATE", cur_state_ok},
	[2] = {"EN_SQD_ASYNC_NOTIFY", any_ok},
	[3] = {"ACCESS_FLAGS", access_flags_ok},
	[4] = {"PKEY_INDEX", pkey_index_ok},
	[5] = {"PORT", port_num_ok},
	[6] = {"QKEY", qkey_ok},
	[7] = {"AV", av_ok},
	[8] = {"PATH_MTU", path_mtu_ok},
	[9] = {"TIMEOUT", timeout_ok},
	[10] = {"RETRY_CNT", retry_cnt_ok},
	[11] = {"RNR_RETRY", rnr_retry_ok},
	[12] = {"RQ_PSN", rq_psn_ok},
	[13] = {"MAX_QP_RD_ATOMIC", max_rd_atomic_ok},
	[14] = {"ALT_PATH", NULL}, /* DROCE_QP_ATTR_UNSUPPORTED */
	[15] = {"MIN_RNR_TIMER", min_rnr_timer_ok},
	[16] = {"SQ_PSN", sq_psn_ok},
	[17] = {"MAX_DEST_RD_ATOMIC", max_dest_rd_atomic_ok},
	[18] = {"PATH_MIG_STATE", path_mig_state_ok},
	[19] = {"CAP", NULL},
	[20] = {"DEST_QPN", dest_qpn_ok},
	[21] = {"SMAC", NULL},
	[22] = {"ALT_SMAC", NULL},
	[23] = {"VID", NULL},
	[24] = {"ALT_VID", NULL},
	[25] = {"RATE_LIMIT", NULL},
};

static_assert(IBV_QP_STATE == 1u << 0 && IBV_QP_ALT_PATH == 1u << 14, "IBV_QP_* bit positions");
static_assert(IBV_QP_DEST_QPN == 1u << 20 && IBV_QP_RATE_LIMIT == 1u << 25, "IBV_QP_* bits");

const char *droce_qp_attr_name(uint32_t bit)
{
	unsigned int pos;

	if (bit == 0 || (bit & (bit - 1)) != 0)
		return NULL;
	pos = (unsigned int)__builtin_ctz(bit);
	return pos < DIM(qp_attr_bits) ? qp_attr_bits[pos].name : NULL;
}

/* ------------------------------------------------------------------ check */

int droce_qp_attr_check(enum ibv_qp_type type, enum ibv_qp_state cur,
			const struct ibv_qp_attr *attr, int attr_mask,
			const struct droce_qp_attr_limits *lim, enum ibv_qp_state *next)
{
	uint32_t mask = (uint32_t)attr_mask;
	const struct qp_trans_rule *r;
	struct qp_check_ctx c = {.type = type, .cur = cur, .lim = lim};
	enum ibv_qp_state to;
	uint32_t left;

	if (attr == NULL || lim == NULL)
		return -EINVAL;
	to = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	r = qp_trans_find(type, cur, to);
	if (r == NULL)
		return -EINVAL;
	mask &= ~(uint32_t)IBV_QP_STATE;
	if ((mask & r->required) != r->required)
		return -EINVAL;
	if ((mask & ~(r->required | r->optional)) != 0 || (mask & DROCE_QP_ATTR_UNSUPPORTED) != 0)
		return -EINVAL;
	for (left = mask; left != 0; left &= left - 1) {
		unsigned int pos = (unsigned int)__builtin_ctz(left);

		if (pos >= DIM(qp_attr_bits) || qp_attr_bits[pos].ok == NULL ||
		    !qp_attr_bits[pos].ok(attr, &c))
			return -EINVAL;
	}
	if (next != NULL)
		*next = to;
	return 0;
}
