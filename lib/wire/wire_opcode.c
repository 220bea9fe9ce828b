/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The opcode table of IBTA 9.2 (RC, UC, UD) and annex A17 (CNP).
 * RD and XRC opcodes are left out: droce does not implement those services,
 * so the parser rejects them as unsupported rather than misreading them.
 */
#include "droce_wire_hdr.h"
#include "droce_wire_opcode.h"

/* Header lengths as constants so the table below is computed at compile time. */
#define LEN_DETH   8
#define LEN_RETH   16
#define LEN_ATMETH 28
#define LEN_AETH   4
#define LEN_ATMACK 8
#define LEN_IMMDT  4
#define LEN_IETH   4
#define LEN_CNP    16

static_assert(LEN_DETH == sizeof(struct droce_deth), "DETH length");
static_assert(LEN_RETH == sizeof(struct droce_reth), "RETH length");
static_assert(LEN_ATMETH == sizeof(struct droce_atmeth), "AtomicETH length");
static_assert(LEN_AETH == sizeof(struct droce_aeth), "AETH length");
static_assert(LEN_ATMACK == sizeof(struct droce_atmack), "AtomicAckETH length");
static_assert(LEN_IMMDT == sizeof(struct droce_immdt), "ImmDt length");
static_assert(LEN_IETH == sizeof(struct droce_ieth), "IETH length");
static_assert(LEN_CNP == sizeof(struct droce_cnp), "CNP body length");

const uint8_t droce_ext_hdr_len[DROCE_HDR_COUNT] = {
	[DROCE_HDR_DETH] = LEN_DETH,     [DROCE_HDR_RETH] = LEN_RETH,
	[DROCE_HDR_ATMETH] = LEN_ATMETH, [DROCE_HDR_AETH] = LEN_AETH,
	[DROCE_HDR_ATMACK] = LEN_ATMACK, [DROCE_HDR_IMMDT] = LEN_IMMDT,
	[DROCE_HDR_IETH] = LEN_IETH,     [DROCE_HDR_CNP] = LEN_CNP,
};

const char *const droce_ext_hdr_name[DROCE_HDR_COUNT] = {
	[DROCE_HDR_DETH] = "DETH",           [DROCE_HDR_RETH] = "RETH",
	[DROCE_HDR_ATMETH] = "AtomicETH",    [DROCE_HDR_AETH] = "AETH",
	[DROCE_HDR_ATMACK] = "AtomicAckETH", [DROCE_HDR_IMMDT] = "ImmDt",
	[DROCE_HDR_IETH] = "IETH",           [DROCE_HDR_CNP] = "CNP",
};

/* Bytes a header takes in a packet of mask m (0 when absent). */
#define HAS(m, h) (((m) & (1u << DROCE_HDR_##h)) ? LEN_##h : 0)
/* Offsets from the BTH, following the wire order of enum droce_ext_hdr. */
#define OFF_DETH(m)   12
#define OFF_RETH(m)   (OFF_DETH(m) + HAS(m, DETH))
#define OFF_ATMETH(m) (OFF_RETH(m) + HAS(m, RETH))
#define OFF_AETH(m)   (OFF_ATMETH(m) + HAS(m, ATMETH))
#define OFF_ATMACK(m) (OFF_AETH(m) + HAS(m, AETH))
#define OFF_IMMDT(m)  (OFF_ATMACK(m) + HAS(m, ATMACK))
#define OFF_IETH(m)   (OFF_IMMDT(m) + HAS(m, IMMDT))
#define OFF_CNP(m)    (OFF_IETH(m) + HAS(m, IETH))
#define HDR_END(m)    (OFF_CNP(m) + HAS(m, CNP))
#define AT(m, h)      (HAS(m, h) ? OFF_##h(m) : 0)

#define OP(code, str, m)                                            \
	[code] = {                                                  \
		.name = str,                                        \
		.mask = (m),                                        \
		.hdr_len = HDR_END(m),                              \
		.offset =                                           \
			{                                           \
				[DROCE_HDR_DETH] = AT(m, DETH),     \
				[DROCE_HDR_RETH] = AT(m, RETH),     \
				[DROCE_HDR_ATMETH] = AT(m, ATMETH), \
				[DROCE_HDR_AETH] = AT(m, AETH),     \
				[DROCE_HDR_ATMACK] = AT(m, ATMACK), \
				[DROCE_HDR_IMMDT] = AT(m, IMMDT),   \
				[DROCE_HDR_IETH] = AT(m, IETH),     \
				[DROCE_HDR_CNP] = AT(m, CNP),       \
			},                                          \
	}

/* Semantic groups shared by RC and UC (the service bit is added per row). */
#define SEND_REQ  (DROCE_OPM_REQ | DROCE_OPM_SEND | DROCE_OPM_PAYLOAD)
#define WRITE_REQ (DROCE_OPM_REQ | DROCE_OPM_WRITE | DROCE_OPM_PAYLOAD)
#define FIRST_    (DROCE_OPM_FIRST | DROCE_OPM_RECV)
#define LAST_     (DROCE_OPM_LAST | DROCE_OPM_COMP)
#define ONLY_     (DROCE_OPM_ONLY | DROCE_OPM_RECV | DROCE_OPM_COMP)
#define W_IMM     DROCE_OPM_IMMDT
#define W_RETH    DROCE_OPM_RETH

/* WRITE without immediate consumes no receive WQE (IBTA 9.4.2). */
#define SEND_WRITE_ROWS(cls, svc, pfx)                                                            \
	OP(cls | 0x00, pfx "SEND_FIRST", svc | SEND_REQ | FIRST_),                                \
		OP(cls | 0x01, pfx "SEND_MIDDLE", svc | SEND_REQ | DROCE_OPM_MIDDLE),             \
		OP(cls | 0x02, pfx "SEND_LAST", svc | SEND_REQ | LAST_),                          \
		OP(cls | 0x03, pfx "SEND_LAST_WITH_IMMEDIATE", svc | SEND_REQ | LAST_ | W_IMM),   \
		OP(cls | 0x04, pfx "SEND_ONLY", svc | SEND_REQ | ONLY_),                          \
		OP(cls | 0x05, pfx "SEND_ONLY_WITH_IMMEDIATE", svc | SEND_REQ | ONLY_ | W_IMM),   \
		OP(cls | 0x06, pfx "RDMA_WRITE_FIRST",                                            \
		   svc | WRITE_REQ | DROCE_OPM_FIRST | W_RETH),                                   \
		OP(cls | 0x07, pfx "RDMA_WRITE_MIDDLE", svc | WRITE_REQ | DROCE_OPM_MIDDLE),      \
		OP(cls | 0x08, pfx "RDMA_WRITE_LAST", svc | WRITE_REQ | DROCE_OPM_LAST),          \
		OP(cls | 0x09, pfx "RDMA_WRITE_LAST_WITH_IMMEDIATE",                              \
		   svc | WRITE_REQ | DROCE_OPM_LAST | DROCE_OPM_RECV | DROCE_OPM_COMP | W_IMM),   \
		OP(cls | 0x0a, pfx "RDMA_WRITE_ONLY", svc | WRITE_REQ | DROCE_OPM_ONLY | W_RETH), \
		OP(cls | 0x0b, pfx "RDMA_WRITE_ONLY_WITH_IMMEDIATE",                              \
		   svc | WRITE_REQ | DROCE_OPM_ONLY | DROCE_OPM_RECV | DROCE_OPM_COMP | W_RETH |  \
			   W_IMM)

#define RC         DROCE_OPM_RC
#define READ_RESP  (DROCE_OPM_RESP | DROCE_OPM_READ | DROCE_OPM_PAYLOAD | RC)
#define ATOMIC_REQ (DROCE_OPM_REQ | DROCE_OPM_ATOMIC | DROCE_OPM_ONLY | DROCE_OPM_ATMETH | RC)

const struct droce_opcode_info droce_opcode_table[256] = {
	SEND_WRITE_ROWS(DROCE_OP_CLASS_RC, RC, "RC_"),
	OP(DROCE_OP_RC_READ_REQ, "RC_RDMA_READ_REQUEST",
	   RC | DROCE_OPM_REQ | DROCE_OPM_READ | DROCE_OPM_ONLY | W_RETH),
	OP(DROCE_OP_RC_READ_RESP_FIRST, "RC_RDMA_READ_RESPONSE_FIRST",
	   READ_RESP | DROCE_OPM_FIRST | DROCE_OPM_AETH),
	OP(DROCE_OP_RC_READ_RESP_MIDDLE, "RC_RDMA_READ_RESPONSE_MIDDLE",
	   READ_RESP | DROCE_OPM_MIDDLE),
	OP(DROCE_OP_RC_READ_RESP_LAST, "RC_RDMA_READ_RESPONSE_LAST",
	   READ_RESP | DROCE_OPM_LAST | DROCE_OPM_AETH),
	OP(DROCE_OP_RC_READ_RESP_ONLY, "RC_RDMA_READ_RESPONSE_ONLY",
	   READ_RESP | DROCE_OPM_ONLY | DROCE_OPM_AETH),
	OP(DROCE_OP_RC_ACK, "RC_ACKNOWLEDGE",
	   RC | DROCE_OPM_RESP | DROCE_OPM_ACK | DROCE_OPM_ONLY | DROCE_OPM_AETH),
	OP(DROCE_OP_RC_ATOMIC_ACK, "RC_ATOMIC_ACKNOWLEDGE",
	   RC | DROCE_OPM_RESP | DROCE_OPM_ATOMIC | DROCE_OPM_ONLY | DROCE_OPM_AETH |
		   DROCE_OPM_ATMACK),
	OP(DROCE_OP_RC_CMP_SWAP, "RC_COMPARE_SWAP", ATOMIC_REQ),
	OP(DROCE_OP_RC_FETCH_ADD, "RC_FETCH_ADD", ATOMIC_REQ),
	OP(DROCE_OP_RC_SEND_LAST_INV, "RC_SEND_LAST_WITH_INVALIDATE",
	   RC | SEND_REQ | LAST_ | DROCE_OPM_IETH),
	OP(DROCE_OP_RC_SEND_ONLY_INV, "RC_SEND_ONLY_WITH_INVALIDATE",
	   RC | SEND_REQ | ONLY_ | DROCE_OPM_IETH),

	SEND_WRITE_ROWS(DROCE_OP_CLASS_UC, DROCE_OPM_UC, "UC_"),

	OP(DROCE_OP_UD_SEND_ONLY, "UD_SEND_ONLY", DROCE_OPM_UD | SEND_REQ | ONLY_ | DROCE_OPM_DETH),
	OP(DROCE_OP_UD_SEND_ONLY_IMM, "UD_SEND_ONLY_WITH_IMMEDIATE",
	   DROCE_OPM_UD | SEND_REQ | ONLY_ | DROCE_OPM_DETH | W_IMM),

	OP(DROCE_OP_CNP, "CNP", DROCE_OPM_CNP_CLASS | DROCE_OPM_CNP),
};

#define N DROCE_OP_NONE
/*
 * [operation][service][FIRST, MIDDLE, LAST, ONLY]. UC has no READ, atomics or
 * invalidate opcodes and UD sends single-packet messages only (IBTA 9.2).
 */
const uint8_t droce_wr_opcode_table[DROCE_WR_OP_COUNT][DROCE_SVC_COUNT][DROCE_POS_COUNT] =
	{
		[DROCE_WR_SEND] =
			{
				[DROCE_SVC_RC] = {0x00, 0x01, 0x02, 0x04},
				[DROCE_SVC_UC] = {0x20, 0x21, 0x22, 0x24},
				[DROCE_SVC_UD] = {N, N, N, 0x64},
			},
		[DROCE_WR_SEND_IMM] =
			{
				[DROCE_SVC_RC] = {0x00, 0x01, 0x03, 0x05},
				[DROCE_SVC_UC] = {0x20, 0x21, 0x23, 0x25},
				[DROCE_SVC_UD] = {N, N, N, 0x65},
			},
		[DROCE_WR_SEND_INV] =
			{
				[DROCE_SVC_RC] = {0x00, 0x01, 0x16, 0x17},
				[DROCE_SVC_UC] = {N, N, N, N},
				[DROCE_SVC_UD] = {N, N, N, N},
			},
		[DROCE_WR_WRITE] =
			{
				[DROCE_SVC_RC] = {0x06, 0x07, 0x08, 0x0a},
				[DROCE_SVC_UC] = {0x26, 0x27, 0x28, 0x2a},
				[DROCE_SVC_UD] = {N, N, N, N},
			},
		[DROCE_WR_WRITE_IMM] =
			{
				[DROCE_SVC_RC] = {0x06, 0x07, 0x09, 0x0b},
				[DROCE_SVC_UC] = {0x26, 0x27, 0x29, 0x2b},
				[DROCE_SVC_UD] = {N, N, N, N},
			},
		/* a READ request is one packet whatever the length (IBTA 9.4.3) */
		[DROCE_WR_READ] =
			{
				[DROCE_SVC_RC] = {N, N, N, 0x0c},
				[DROCE_SVC_UC] = {N, N, N, N},
				[DROCE_SVC_UD] = {N, N, N, N},
			},
		[DROCE_WR_CMP_SWAP] =
			{
				[DROCE_SVC_RC] = {N, N, N, 0x13},
				[DROCE_SVC_UC] = {N, N, N, N},
				[DROCE_SVC_UD] = {N, N, N, N},
			},
		[DROCE_WR_FETCH_ADD] =
			{
				[DROCE_SVC_RC] = {N, N, N, 0x14},
				[DROCE_SVC_UC] = {N, N, N, N},
				[DROCE_SVC_UD] = {N, N, N, N},
			},
};
