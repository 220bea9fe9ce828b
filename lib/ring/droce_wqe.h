/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The entries that travel in the rings between an application (verbs layer)
 * and droce's engine: send WQEs, receive WQEs and CQEs.
 *
 * The application writes WQEs and the engine reads them; the engine writes
 * CQEs and the application reads them. Whoever reads an entry written by the
 * other side treats it as untrusted: the engine validates every field of a WQE
 * (opcode, counts, keys, lengths) before acting on it, and the verbs layer
 * never follows anything in a CQE but the values it returns. Entries hold no
 * pointers of one process that the other would dereference: addresses in SGEs
 * are application virtual addresses checked against memory registrations.
 */
#ifndef DROCE_WQE_H
#define DROCE_WQE_H

#include <assert.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Scatter/gather element, as struct ibv_sge. */
struct droce_sge {
	uint64_t addr;
	uint32_t length; /**< bytes; the verbs layer has already turned 0 into 2^31 */
	uint32_t lkey;
};
static_assert(sizeof(struct droce_sge) == 16, "SGE is 16 bytes");

/** Send-queue operations. */
enum droce_wqe_op {
	DROCE_WQE_SEND,
	DROCE_WQE_SEND_IMM,
	DROCE_WQE_SEND_INV,
	DROCE_WQE_WRITE,
	DROCE_WQE_WRITE_IMM,
	DROCE_WQE_READ,
	DROCE_WQE_CMP_SWAP,
	DROCE_WQE_FETCH_ADD,
	DROCE_WQE_LOCAL_INV,
	DROCE_WQE_BIND_MW,
	DROCE_WQE_OP_COUNT,
};

/** Send WQE flags. */
#define DROCE_WQE_SIGNALED  0x01 /**< generate a completion (or the QP signals all) */
#define DROCE_WQE_FENCE     0x02 /**< wait for earlier READs and atomics */
#define DROCE_WQE_SOLICITED 0x04 /**< set SE in the last packet */
#define DROCE_WQE_INLINE    0x08 /**< payload follows the header instead of SGEs */

/**
 * Send WQE header (64 bytes); num_sge SGEs or @c length inline bytes follow it
 * in the same slot. The slot size of a QP's send ring fits its max_send_sge
 * and max_inline_data.
 */
struct droce_send_wqe {
	uint64_t wr_id;
	uint8_t op;       /**< enum droce_wqe_op */
	uint8_t flags;    /**< DROCE_WQE_* */
	uint16_t num_sge; /**< SGEs that follow (0 for inline) */
	uint32_t length;  /**< message bytes: sum of SGE lengths, or inline bytes */
	uint32_t imm;     /**< immediate data (big-endian as posted), the rkey to invalidate,
			       or for BIND_MW the window type (1 or 2) */
	uint32_t reserved;
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			uint32_t ah; /**< address handle id */
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
		struct {
			uint32_t mw_handle; /**< the window in the key table */
			uint32_t new_rkey;  /**< its rkey once bound */
			uint32_t mr_lkey;   /**< the MR the window is bound to */
			uint32_t access;    /**< IBV_ACCESS_* granted through the window */
			uint64_t addr;
			uint64_t length;
		} bind;
	} u;
	uint64_t reserved2;
};
static_assert(sizeof(struct droce_send_wqe) == 64, "send WQE header is one cache line");

/** Receive WQE header (16 bytes); num_sge SGEs follow it. */
struct droce_recv_wqe {
	uint64_t wr_id;
	uint16_t num_sge;
	uint16_t reserved16;
	uint32_t reserved32;
};
static_assert(sizeof(struct droce_recv_wqe) == 16, "receive WQE header is 16 bytes");

/**
 * Completion entry (64 bytes): the fields of struct ibv_wc, plus the flags
 * the extended CQ API reads. Values are the libibverbs enum values.
 */
struct droce_cqe {
	uint64_t wr_id;
	uint32_t byte_len;
	uint32_t imm; /**< immediate data (big-endian) or invalidated rkey */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t vendor_err;
	uint16_t wc_flags; /**< IBV_WC_GRH, IBV_WC_WITH_IMM, IBV_WC_WITH_INV, IBV_WC_IP_CSUM_OK */
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t status; /**< enum ibv_wc_status */
	uint8_t opcode; /**< enum ibv_wc_opcode */
	uint8_t sl;
	uint8_t dlid_path_bits;
	uint8_t reserved[26];
};
static_assert(sizeof(struct droce_cqe) == 64, "CQE is one cache line");

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WQE_H */
