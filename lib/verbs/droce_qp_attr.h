/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The rules ibv_modify_qp() enforces: which QP state transitions exist, which
 * attributes (IBV_QP_* mask bits) each one requires or accepts, and the range of
 * each attribute value. Pure functions over a table: no QP object, no locking.
 *
 * Source: IBTA Vol. 1, chapter 11 (Software Transport Verbs), "Modify Queue Pair"
 * and its table of QP state transitions with required and optional attributes,
 * for the RC, UC and UD services; the states are those of the QP state diagram
 * (IBTA 10.3). doc/qp_state.md prints the table and the decisions below.
 *
 * Error convention: lib/verbs' own, 0 or -errno (only -EINVAL).
 */
#ifndef DROCE_QP_ATTR_H
#define DROCE_QP_ATTR_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Attributes the spec lists for some transitions but droce refuses (EINVAL):
 * droce implements no automatic path migration, so there is never an alternate path.
 */
#define DROCE_QP_ATTR_UNSUPPORTED ((uint32_t)IBV_QP_ALT_PATH)

/** Q_Keys with this bit set are controlled (privileged) Q_Keys (IBTA chapter 10, Q_Keys). */
#define DROCE_QKEY_PRIVILEGED 0x80000000u

/** Largest 24-bit value: PSNs and QP numbers. */
#define DROCE_QP_24BIT_MAX 0xffffffu

/** What the device and the caller allow; only what the value checks need. */
struct droce_qp_attr_limits {
	uint8_t port_count;         /**< ports are numbered 1..port_count */
	uint16_t pkey_table_len;    /**< pkey_index < pkey_table_len */
	uint16_t gid_table_len;     /**< ah_attr.grh.sgid_index < gid_table_len */
	uint8_t max_rd_atomic;      /**< bound of max_rd_atomic (device max_qp_init_rd_atom) */
	uint8_t max_dest_rd_atomic; /**< bound of max_dest_rd_atomic (device max_qp_rd_atom) */
	enum ibv_mtu max_mtu;       /**< largest path_mtu (the port's active MTU) */
	bool privileged;            /**< the caller may set controlled Q_Keys */
};

/**
 * Check a modify-QP request against the transition table and the value ranges.
 *
 * The target state is attr->qp_state when @p attr_mask holds IBV_QP_STATE, the
 * current state otherwise; a request without IBV_QP_STATE is therefore valid
 * only where the table has a transition from a state to itself (RESET, INIT,
 * RTS, SQD, ERR).
 *
 * -EINVAL when: @p attr or @p lim is NULL; @p type is not RC, UC or UD; @p cur or
 * attr->qp_state is not a state (IBV_QPS_UNKNOWN included); the transition is not
 * in the table; a required attribute is missing; an attribute outside required +
 * optional is present (unknown bits included); an attribute of
 * DROCE_QP_ATTR_UNSUPPORTED is present; IBV_QP_CUR_STATE names another state than
 * @p cur; a value is out of range (see doc/qp_state.md, "Value checks").
 *
 * @param type QP service type.
 * @param cur state the QP is in.
 * @param attr attributes, read only for the bits of @p attr_mask.
 * @param attr_mask IBV_QP_* bits (enum ibv_qp_attr_mask).
 * @param lim device limits and caller privilege.
 * @param next if not NULL and the request is valid, receives the state to enter.
 * @return 0 or -EINVAL.
 */
int droce_qp_attr_check(enum ibv_qp_type type, enum ibv_qp_state cur,
			const struct ibv_qp_attr *attr, int attr_mask,
			const struct droce_qp_attr_limits *lim, enum ibv_qp_state *next);

/** True when the spec lets a QP of @p type go from @p cur to @p next through modify QP. */
bool droce_qp_trans_is_valid(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next);

/**
 * Attributes the transition requires besides IBV_QP_STATE (which a transition to
 * another state needs to name its target); 0 for a transition not in the table.
 */
uint32_t droce_qp_attr_required(enum ibv_qp_type type, enum ibv_qp_state cur,
				enum ibv_qp_state next);

/**
 * Attributes the spec lets the transition carry besides the required ones and
 * IBV_QP_STATE; 0 for a transition not in the table. Bits of
 * DROCE_QP_ATTR_UNSUPPORTED are included here (they are spec facts) and refused
 * by droce_qp_attr_check().
 */
uint32_t droce_qp_attr_optional(enum ibv_qp_type type, enum ibv_qp_state cur,
				enum ibv_qp_state next);

/** "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"; "UNKNOWN" for anything else. */
const char *droce_qp_state_name(enum ibv_qp_state state);

/** Name of one IBV_QP_* bit without its prefix ("PKEY_INDEX"); NULL if not a single known bit. */
const char *droce_qp_attr_name(uint32_t bit);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_QP_ATTR_H */
