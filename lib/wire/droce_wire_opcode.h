/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The BTH opcode table (IBTA 9.2 table "OpCode field") and the table that maps
 * a work request to the opcode of each packet of its message.
 *
 * Almost every transport decision is one test of an opcode's mask.
 */
#ifndef DROCE_WIRE_OPCODE_H
#define DROCE_WIRE_OPCODE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Opcode values: transport class in bits 7:5, operation in bits 4:0. */
enum droce_opcode {
	DROCE_OP_RC_SEND_FIRST = 0x00,
	DROCE_OP_RC_SEND_MIDDLE = 0x01,
	DROCE_OP_RC_SEND_LAST = 0x02,
	DROCE_OP_RC_SEND_LAST_IMM = 0x03,
	DROCE_OP_RC_SEND_ONLY = 0x04,
	DROCE_OP_RC_SEND_ONLY_IMM = 0x05,
	DROCE_OP_RC_WRITE_FIRST = 0x06,
	DROCE_OP_RC_WRITE_MIDDLE = 0x07,
	DROCE_OP_RC_WRITE_LAST = 0x08,
	DROCE_OP_RC_WRITE_LAST_IMM = 0x09,
	DROCE_OP_RC_WRITE_ONLY = 0x0a,
	DROCE_OP_RC_WRITE_ONLY_IMM = 0x0b,
	DROCE_OP_RC_READ_REQ = 0x0c,
	DROCE_OP_RC_READ_RESP_FIRST = 0x0d,
	DROCE_OP_RC_READ_RESP_MIDDLE = 0x0e,
	DROCE_OP_RC_READ_RESP_LAST = 0x0f,
	DROCE_OP_RC_READ_RESP_ONLY = 0x10,
	DROCE_OP_RC_ACK = 0x11,
	DROCE_OP_RC_ATOMIC_ACK = 0x12,
	DROCE_OP_RC_CMP_SWAP = 0x13,
	DROCE_OP_RC_FETCH_ADD = 0x14,
	DROCE_OP_RC_SEND_LAST_INV = 0x16,
	DROCE_OP_RC_SEND_ONLY_INV = 0x17,

	DROCE_OP_UC_SEND_FIRST = 0x20,
	DROCE_OP_UC_SEND_MIDDLE = 0x21,
	DROCE_OP_UC_SEND_LAST = 0x22,
	DROCE_OP_UC_SEND_LAST_IMM = 0x23,
	DROCE_OP_UC_SEND_ONLY = 0x24,
	DROCE_OP_UC_SEND_ONLY_IMM = 0x25,
	DROCE_OP_UC_WRITE_FIRST = 0x26,
	DROCE_OP_UC_WRITE_MIDDLE = 0x27,
	DROCE_OP_UC_WRITE_LAST = 0x28,
	DROCE_OP_UC_WRITE_LAST_IMM = 0x29,
	DROCE_OP_UC_WRITE_ONLY = 0x2a,
	DROCE_OP_UC_WRITE_ONLY_IMM = 0x2b,

	DROCE_OP_UD_SEND_ONLY = 0x64,
	DROCE_OP_UD_SEND_ONLY_IMM = 0x65,

	/** RoCEv2 Congestion Notification Packet, annex A17. */
	DROCE_OP_CNP = 0x81,
};

/** Transport class of an opcode (bits 7:5), IBTA 9.2. */
#define DROCE_OP_CLASS_MASK 0xe0
#define DROCE_OP_CLASS_RC   0x00
#define DROCE_OP_CLASS_UC   0x20
#define DROCE_OP_CLASS_RD   0x40
#define DROCE_OP_CLASS_UD   0x60
#define DROCE_OP_CLASS_CNP  0x80
#define DROCE_OP_CLASS_XRC  0xa0

/** Extended headers that can follow the BTH, in their wire order (IBTA 9.2). */
enum droce_ext_hdr {
	DROCE_HDR_DETH,
	DROCE_HDR_RETH,
	DROCE_HDR_ATMETH,
	DROCE_HDR_AETH,
	DROCE_HDR_ATMACK,
	DROCE_HDR_IMMDT,
	DROCE_HDR_IETH,
	DROCE_HDR_CNP,
	DROCE_HDR_COUNT,
};

/** Opcode mask bits: which headers follow, and what the packet means. */
enum droce_opcode_mask {
	/* headers, bit n = 1 << enum droce_ext_hdr */
	DROCE_OPM_DETH = 1u << DROCE_HDR_DETH,
	DROCE_OPM_RETH = 1u << DROCE_HDR_RETH,
	DROCE_OPM_ATMETH = 1u << DROCE_HDR_ATMETH,
	DROCE_OPM_AETH = 1u << DROCE_HDR_AETH,
	DROCE_OPM_ATMACK = 1u << DROCE_HDR_ATMACK,
	DROCE_OPM_IMMDT = 1u << DROCE_HDR_IMMDT,
	DROCE_OPM_IETH = 1u << DROCE_HDR_IETH,
	DROCE_OPM_CNP = 1u << DROCE_HDR_CNP,
	DROCE_OPM_HDR_ALL = (1u << DROCE_HDR_COUNT) - 1,

	/* the packet carries payload bytes (may be 0 for ONLY/LAST) */
	DROCE_OPM_PAYLOAD = 1u << 8,
	/* direction: sent by a requester, or by a responder */
	DROCE_OPM_REQ = 1u << 9,
	DROCE_OPM_RESP = 1u << 10,
	/* operation */
	DROCE_OPM_SEND = 1u << 11,
	DROCE_OPM_WRITE = 1u << 12,
	DROCE_OPM_READ = 1u << 13,   /**< READ request or READ response */
	DROCE_OPM_ATOMIC = 1u << 14, /**< atomic request or atomic ACK */
	DROCE_OPM_ACK = 1u << 15,    /**< ACK / NAK (AETH only) */
	/* the responder consumes a receive WQE (at the first/only packet) */
	DROCE_OPM_RECV = 1u << 16,
	/* the responder completes a receive WQE (at the last/only packet) */
	DROCE_OPM_COMP = 1u << 17,
	/* position in the message */
	DROCE_OPM_FIRST = 1u << 18,
	DROCE_OPM_MIDDLE = 1u << 19,
	DROCE_OPM_LAST = 1u << 20,
	DROCE_OPM_ONLY = DROCE_OPM_FIRST | DROCE_OPM_LAST,
	/* transport service */
	DROCE_OPM_RC = 1u << 21,
	DROCE_OPM_UC = 1u << 22,
	DROCE_OPM_UD = 1u << 23,
	DROCE_OPM_CNP_CLASS = 1u << 24,
	/* immediate data / invalidate (same as the header bits, named for use) */
	DROCE_OPM_WITH_IMM = DROCE_OPM_IMMDT,
	DROCE_OPM_WITH_INV = DROCE_OPM_IETH,
};

/** One row of the opcode table. A NULL name marks an opcode droce rejects. */
struct droce_opcode_info {
	const char *name;
	uint32_t mask;
	uint8_t hdr_len;                 /**< BTH + extended headers, bytes */
	uint8_t offset[DROCE_HDR_COUNT]; /**< each header's offset from the BTH */
};

extern const struct droce_opcode_info droce_opcode_table[256];

/** Bytes of each extended header (index: enum droce_ext_hdr). */
extern const uint8_t droce_ext_hdr_len[DROCE_HDR_COUNT];
/** Short names of the extended headers, for dissectors and traces. */
extern const char *const droce_ext_hdr_name[DROCE_HDR_COUNT];

static inline const struct droce_opcode_info *droce_opcode_info(uint8_t opcode)
{
	return &droce_opcode_table[opcode];
}

static inline int droce_opcode_is_valid(uint8_t opcode)
{
	return droce_opcode_table[opcode].name != NULL;
}

/* ------------------------------------------ work request -> wire opcode */

/** Work-request operations that put packets on the wire. */
enum droce_wr_op {
	DROCE_WR_SEND,
	DROCE_WR_SEND_IMM,
	DROCE_WR_SEND_INV,
	DROCE_WR_WRITE,
	DROCE_WR_WRITE_IMM,
	DROCE_WR_READ,
	DROCE_WR_CMP_SWAP,
	DROCE_WR_FETCH_ADD,
	DROCE_WR_OP_COUNT,
};

/** Transport services the requester speaks. */
enum droce_qp_service {
	DROCE_SVC_RC,
	DROCE_SVC_UC,
	DROCE_SVC_UD,
	DROCE_SVC_COUNT,
};

/** Position of a packet in its message. */
enum droce_msg_pos {
	DROCE_POS_FIRST,
	DROCE_POS_MIDDLE,
	DROCE_POS_LAST,
	DROCE_POS_ONLY,
	DROCE_POS_COUNT,
};

/** No wire opcode: the operation is not defined for that service/position. */
#define DROCE_OP_NONE 0xff

extern const uint8_t droce_wr_opcode_table[DROCE_WR_OP_COUNT][DROCE_SVC_COUNT][DROCE_POS_COUNT];

/**
 * Wire opcode of the packet at @p pos of a message made by @p op on a QP of
 * service @p svc, or DROCE_OP_NONE when that combination does not exist.
 */
static inline uint8_t droce_wr_opcode(enum droce_wr_op op, enum droce_qp_service svc,
				      enum droce_msg_pos pos)
{
	if ((unsigned)op >= DROCE_WR_OP_COUNT || (unsigned)svc >= DROCE_SVC_COUNT ||
	    (unsigned)pos >= DROCE_POS_COUNT)
		return DROCE_OP_NONE;
	return droce_wr_opcode_table[op][svc][pos];
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_OPCODE_H */
