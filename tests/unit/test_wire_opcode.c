/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The opcode table of lib/wire against the InfiniBand specification, written
 * here again by hand rather than derived from wire_opcode.c: IBTA Vol. 1
 * section 9.2 (table "OpCode field"; headers per opcode, in the order
 * DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH) and the RoCEv2 annex
 * annex A17 (CNP, opcode 0x81, 16 reserved bytes after the BTH). RD and XRC are
 * not implemented, so their opcodes must be rejected like the reserved ones.
 *
 * Then the (work request, service, position) -> opcode table, every cell.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <droce_wire.h>

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------ the spec, by hand */

/* Direction of a packet. */
enum dir { DIR_NONE, DIR_REQ, DIR_RESP };
/* Operation family. */
enum kind { K_NONE, K_SEND, K_WRITE, K_READ, K_ATOMIC, K_ACK };
/* Position in the message. */
enum pos { P_NONE, P_FIRST, P_MIDDLE, P_LAST, P_ONLY };
/* Transport service. */
enum svc { S_RC, S_UC, S_UD, S_CNP };

/* An extended header and its offset from the start of the BTH. */
struct at {
	int hdr; /* enum droce_ext_hdr, or END */
	uint8_t off;
};

#define END      (-1)
#define MAX_HDRS 3

struct spec_op {
	uint8_t code;
	const char *name;
	struct at hdrs[MAX_HDRS]; /* in wire order; unused slots are {END, 0} */
	uint8_t hdr_len;          /* BTH + every extended header */
	enum dir dir;
	enum kind kind;
	bool recv; /* consumes a receive WQE */
	bool comp; /* completes a receive WQE */
	enum pos pos;
	bool payload;
	enum svc svc;
};

/* clang-format off */
#define NO_HDR {{END, 0}}
#define DETH(o) {DROCE_HDR_DETH, o}
#define RETH(o) {DROCE_HDR_RETH, o}
#define ATMETH(o) {DROCE_HDR_ATMETH, o}
#define AETH(o) {DROCE_HDR_AETH, o}
#define ATMACK(o) {DROCE_HDR_ATMACK, o}
#define IMMDT(o) {DROCE_HDR_IMMDT, o}
#define IETH(o) {DROCE_HDR_IETH, o}
#define CNPB(o) {DROCE_HDR_CNP, o}
#define H1(a) {a, {END, 0}}
#define H2(a, b) {a, b, {END, 0}}
/* clang-format on */

/*
 * code, name, headers at their offsets, header length, direction, operation,
 * recv, comp, position, payload, service.
 */
/* clang-format off */
static const struct spec_op spec[] = {
	/* Reliable Connection, IBTA 9.2 */
	{0x00, "RC_SEND_FIRST", NO_HDR, 12, DIR_REQ, K_SEND, 1, 0, P_FIRST, 1, S_RC},
	{0x01, "RC_SEND_MIDDLE", NO_HDR, 12, DIR_REQ, K_SEND, 0, 0, P_MIDDLE, 1, S_RC},
	{0x02, "RC_SEND_LAST", NO_HDR, 12, DIR_REQ, K_SEND, 0, 1, P_LAST, 1, S_RC},
	{0x03, "RC_SEND_LAST_WITH_IMMEDIATE", H1(IMMDT(12)), 16, DIR_REQ, K_SEND, 0, 1, P_LAST, 1,
	 S_RC},
	{0x04, "RC_SEND_ONLY", NO_HDR, 12, DIR_REQ, K_SEND, 1, 1, P_ONLY, 1, S_RC},
	{0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", H1(IMMDT(12)), 16, DIR_REQ, K_SEND, 1, 1, P_ONLY, 1,
	 S_RC},
	{0x06, "RC_RDMA_WRITE_FIRST", H1(RETH(12)), 28, DIR_REQ, K_WRITE, 0, 0, P_FIRST, 1, S_RC},
	{0x07, "RC_RDMA_WRITE_MIDDLE", NO_HDR, 12, DIR_REQ, K_WRITE, 0, 0, P_MIDDLE, 1, S_RC},
	{0x08, "RC_RDMA_WRITE_LAST", NO_HDR, 12, DIR_REQ, K_WRITE, 0, 0, P_LAST, 1, S_RC},
	{0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", H1(IMMDT(12)), 16, DIR_REQ, K_WRITE, 1, 1,
	 P_LAST, 1, S_RC},
	{0x0a, "RC_RDMA_WRITE_ONLY", H1(RETH(12)), 28, DIR_REQ, K_WRITE, 0, 0, P_ONLY, 1, S_RC},
	{0x0b, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", H2(RETH(12), IMMDT(28)), 32, DIR_REQ, K_WRITE,
	 1, 1, P_ONLY, 1, S_RC},
	{0x0c, "RC_RDMA_READ_REQUEST", H1(RETH(12)), 28, DIR_REQ, K_READ, 0, 0, P_ONLY, 0, S_RC},
	{0x0d, "RC_RDMA_READ_RESPONSE_FIRST", H1(AETH(12)), 16, DIR_RESP, K_READ, 0, 0, P_FIRST,
	 1, S_RC},
	{0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE", NO_HDR, 12, DIR_RESP, K_READ, 0, 0, P_MIDDLE, 1,
	 S_RC},
	{0x0f, "RC_RDMA_READ_RESPONSE_LAST", H1(AETH(12)), 16, DIR_RESP, K_READ, 0, 0, P_LAST, 1,
	 S_RC},
	{0x10, "RC_RDMA_READ_RESPONSE_ONLY", H1(AETH(12)), 16, DIR_RESP, K_READ, 0, 0, P_ONLY, 1,
	 S_RC},
	{0x11, "RC_ACKNOWLEDGE", H1(AETH(12)), 16, DIR_RESP, K_ACK, 0, 0, P_ONLY, 0, S_RC},
	{0x12, "RC_ATOMIC_ACKNOWLEDGE", H2(AETH(12), ATMACK(16)), 24, DIR_RESP, K_ATOMIC, 0, 0,
	 P_ONLY, 0, S_RC},
	{0x13, "RC_COMPARE_SWAP", H1(ATMETH(12)), 40, DIR_REQ, K_ATOMIC, 0, 0, P_ONLY, 0, S_RC},
	{0x14, "RC_FETCH_ADD", H1(ATMETH(12)), 40, DIR_REQ, K_ATOMIC, 0, 0, P_ONLY, 0, S_RC},
	/* 0x15 reserved */
	{0x16, "RC_SEND_LAST_WITH_INVALIDATE", H1(IETH(12)), 16, DIR_REQ, K_SEND, 0, 1, P_LAST, 1,
	 S_RC},
	{0x17, "RC_SEND_ONLY_WITH_INVALIDATE", H1(IETH(12)), 16, DIR_REQ, K_SEND, 1, 1, P_ONLY, 1,
	 S_RC},
	/* 0x18-0x1f reserved */

	/* Unreliable Connection: SEND and RDMA WRITE only */
	{0x20, "UC_SEND_FIRST", NO_HDR, 12, DIR_REQ, K_SEND, 1, 0, P_FIRST, 1, S_UC},
	{0x21, "UC_SEND_MIDDLE", NO_HDR, 12, DIR_REQ, K_SEND, 0, 0, P_MIDDLE, 1, S_UC},
	{0x22, "UC_SEND_LAST", NO_HDR, 12, DIR_REQ, K_SEND, 0, 1, P_LAST, 1, S_UC},
	{0x23, "UC_SEND_LAST_WITH_IMMEDIATE", H1(IMMDT(12)), 16, DIR_REQ, K_SEND, 0, 1, P_LAST, 1,
	 S_UC},
	{0x24, "UC_SEND_ONLY", NO_HDR, 12, DIR_REQ, K_SEND, 1, 1, P_ONLY, 1, S_UC},
	{0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", H1(IMMDT(12)), 16, DIR_REQ, K_SEND, 1, 1, P_ONLY, 1,
	 S_UC},
	{0x26, "UC_RDMA_WRITE_FIRST", H1(RETH(12)), 28, DIR_REQ, K_WRITE, 0, 0, P_FIRST, 1, S_UC},
	{0x27, "UC_RDMA_WRITE_MIDDLE", NO_HDR, 12, DIR_REQ, K_WRITE, 0, 0, P_MIDDLE, 1, S_UC},
	{0x28, "UC_RDMA_WRITE_LAST", NO_HDR, 12, DIR_REQ, K_WRITE, 0, 0, P_LAST, 1, S_UC},
	{0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", H1(IMMDT(12)), 16, DIR_REQ, K_WRITE, 1, 1,
	 P_LAST, 1, S_UC},
	{0x2a, "UC_RDMA_WRITE_ONLY", H1(RETH(12)), 28, DIR_REQ, K_WRITE, 0, 0, P_ONLY, 1, S_UC},
	{0x2b, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", H2(RETH(12), IMMDT(28)), 32, DIR_REQ, K_WRITE,
	 1, 1, P_ONLY, 1, S_UC},
	/* 0x2c-0x3f reserved, 0x40-0x5f Reliable Datagram (not implemented) */

	/* Unreliable Datagram: single-packet SENDs, each with a DETH */
	{0x64, "UD_SEND_ONLY", H1(DETH(12)), 20, DIR_REQ, K_SEND, 1, 1, P_ONLY, 1, S_UD},
	{0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", H2(DETH(12), IMMDT(20)), 24, DIR_REQ, K_SEND, 1, 1,
	 P_ONLY, 1, S_UD},

	/* RoCEv2 Congestion Notification Packet: BTH + 16 reserved bytes, no message */
	{0x81, "CNP", H1(CNPB(12)), 28, DIR_NONE, K_NONE, 0, 0, P_NONE, 0, S_CNP},
};
/* clang-format on */

static const struct spec_op *spec_find(unsigned int code)
{
	size_t i;

	for (i = 0; i < DIM(spec); i++)
		if (spec[i].code == code)
			return &spec[i];
	return NULL;
}

static uint32_t spec_hdr_bits(const struct spec_op *s)
{
	uint32_t m = 0;
	int i;

	for (i = 0; i < MAX_HDRS && s->hdrs[i].hdr != END; i++)
		m |= 1u << s->hdrs[i].hdr;
	return m;
}

static uint32_t mask_of(const struct spec_op *s)
{
	return droce_opcode_info(s->code)->mask;
}

/* ------------------------------------------------------- enum values */

Test(opcode_values, enum_matches_spec_numbers)
{
	cr_expect_eq(DROCE_OP_RC_SEND_FIRST, 0x00, "RC SEND First");
	cr_expect_eq(DROCE_OP_RC_SEND_MIDDLE, 0x01, "RC SEND Middle");
	cr_expect_eq(DROCE_OP_RC_SEND_LAST, 0x02, "RC SEND Last");
	cr_expect_eq(DROCE_OP_RC_SEND_LAST_IMM, 0x03, "RC SEND Last with Immediate");
	cr_expect_eq(DROCE_OP_RC_SEND_ONLY, 0x04, "RC SEND Only");
	cr_expect_eq(DROCE_OP_RC_SEND_ONLY_IMM, 0x05, "RC SEND Only with Immediate");
	cr_expect_eq(DROCE_OP_RC_WRITE_FIRST, 0x06, "RC RDMA WRITE First");
	cr_expect_eq(DROCE_OP_RC_WRITE_MIDDLE, 0x07, "RC RDMA WRITE Middle");
	cr_expect_eq(DROCE_OP_RC_WRITE_LAST, 0x08, "RC RDMA WRITE Last");
	cr_expect_eq(DROCE_OP_RC_WRITE_LAST_IMM, 0x09, "RC RDMA WRITE Last with Immediate");
	cr_expect_eq(DROCE_OP_RC_WRITE_ONLY, 0x0a, "RC RDMA WRITE Only");
	cr_expect_eq(DROCE_OP_RC_WRITE_ONLY_IMM, 0x0b, "RC RDMA WRITE Only with Immediate");
	cr_expect_eq(DROCE_OP_RC_READ_REQ, 0x0c, "RC RDMA READ Request");
	cr_expect_eq(DROCE_OP_RC_READ_RESP_FIRST, 0x0d, "RC RDMA READ response First");
	cr_expect_eq(DROCE_OP_RC_READ_RESP_MIDDLE, 0x0e, "RC RDMA READ response Middle");
	cr_expect_eq(DROCE_OP_RC_READ_RESP_LAST, 0x0f, "RC RDMA READ response Last");
	cr_expect_eq(DROCE_OP_RC_READ_RESP_ONLY, 0x10, "RC RDMA READ response Only");
	cr_expect_eq(DROCE_OP_RC_ACK, 0x11, "RC Acknowledge");
	cr_expect_eq(DROCE_OP_RC_ATOMIC_ACK, 0x12, "RC ATOMIC Acknowledge");
	cr_expect_eq(DROCE_OP_RC_CMP_SWAP, 0x13, "RC CmpSwap");
	cr_expect_eq(DROCE_OP_RC_FETCH_ADD, 0x14, "RC FetchAdd");
	cr_expect_eq(DROCE_OP_RC_SEND_LAST_INV, 0x16, "RC SEND Last with Invalidate");
	cr_expect_eq(DROCE_OP_RC_SEND_ONLY_INV, 0x17, "RC SEND Only with Invalidate");
	cr_expect_eq(DROCE_OP_UC_SEND_FIRST, 0x20, "UC SEND First");
	cr_expect_eq(DROCE_OP_UC_SEND_MIDDLE, 0x21, "UC SEND Middle");
	cr_expect_eq(DROCE_OP_UC_SEND_LAST, 0x22, "UC SEND Last");
	cr_expect_eq(DROCE_OP_UC_SEND_LAST_IMM, 0x23, "UC SEND Last with Immediate");
	cr_expect_eq(DROCE_OP_UC_SEND_ONLY, 0x24, "UC SEND Only");
	cr_expect_eq(DROCE_OP_UC_SEND_ONLY_IMM, 0x25, "UC SEND Only with Immediate");
	cr_expect_eq(DROCE_OP_UC_WRITE_FIRST, 0x26, "UC RDMA WRITE First");
	cr_expect_eq(DROCE_OP_UC_WRITE_MIDDLE, 0x27, "UC RDMA WRITE Middle");
	cr_expect_eq(DROCE_OP_UC_WRITE_LAST, 0x28, "UC RDMA WRITE Last");
	cr_expect_eq(DROCE_OP_UC_WRITE_LAST_IMM, 0x29, "UC RDMA WRITE Last with Immediate");
	cr_expect_eq(DROCE_OP_UC_WRITE_ONLY, 0x2a, "UC RDMA WRITE Only");
	cr_expect_eq(DROCE_OP_UC_WRITE_ONLY_IMM, 0x2b, "UC RDMA WRITE Only with Immediate");
	cr_expect_eq(DROCE_OP_UD_SEND_ONLY, 0x64, "UD SEND Only");
	cr_expect_eq(DROCE_OP_UD_SEND_ONLY_IMM, 0x65, "UD SEND Only with Immediate");
	cr_expect_eq(DROCE_OP_CNP, 0x81, "RoCEv2 CNP (annex A17)");
}

Test(opcode_values, class_bits)
{
	cr_expect_eq(DROCE_OP_CLASS_MASK, 0xe0, "the transport class is opcode bits 7:5");
	cr_expect_eq(DROCE_OP_CLASS_RC, 0x00, "RC is class 000");
	cr_expect_eq(DROCE_OP_CLASS_UC, 0x20, "UC is class 001");
	cr_expect_eq(DROCE_OP_CLASS_RD, 0x40, "RD is class 010");
	cr_expect_eq(DROCE_OP_CLASS_UD, 0x60, "UD is class 011");
	cr_expect_eq(DROCE_OP_CLASS_CNP, 0x80, "CNP is class 100");
	cr_expect_eq(DROCE_OP_CLASS_XRC, 0xa0, "XRC is class 101");
}

/* The header enum follows the wire order of IBTA 9.2. */
Test(opcode_values, ext_hdr_enum_in_wire_order)
{
	cr_expect_lt(DROCE_HDR_DETH, DROCE_HDR_RETH, "DETH comes before RETH");
	cr_expect_lt(DROCE_HDR_RETH, DROCE_HDR_ATMETH, "RETH comes before AtomicETH");
	cr_expect_lt(DROCE_HDR_ATMETH, DROCE_HDR_AETH, "AtomicETH comes before AETH");
	cr_expect_lt(DROCE_HDR_AETH, DROCE_HDR_ATMACK, "AETH comes before AtomicAckETH");
	cr_expect_lt(DROCE_HDR_ATMACK, DROCE_HDR_IMMDT, "AtomicAckETH comes before ImmDt");
	cr_expect_lt(DROCE_HDR_IMMDT, DROCE_HDR_IETH, "ImmDt comes before IETH");
}

Test(opcode_values, op_none_is_not_an_opcode)
{
	cr_expect_eq(DROCE_OP_NONE, 0xff, "DROCE_OP_NONE is 0xff");
	cr_expect(!droce_opcode_is_valid(DROCE_OP_NONE), "0xff is not a valid opcode");
}

/* ------------------------------------------------ extended headers */

Test(ext_hdr, len_matches_struct_sizes)
{
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_DETH], sizeof(struct droce_deth), "DETH");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_RETH], sizeof(struct droce_reth), "RETH");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_ATMETH], sizeof(struct droce_atmeth), "AtomicETH");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_AETH], sizeof(struct droce_aeth), "AETH");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_ATMACK], sizeof(struct droce_atmack),
		     "AtomicAckETH");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_IMMDT], sizeof(struct droce_immdt), "ImmDt");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_IETH], sizeof(struct droce_ieth), "IETH");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_CNP], sizeof(struct droce_cnp), "CNP body");
}

Test(ext_hdr, len_matches_spec)
{
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_DETH], 8, "DETH is 8 bytes (IBTA 9.3.2)");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_RETH], 16, "RETH is 16 bytes (IBTA 9.3.3)");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_ATMETH], 28, "AtomicETH is 28 bytes (9.3.4)");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_AETH], 4, "AETH is 4 bytes (IBTA 9.3.5)");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_ATMACK], 8, "AtomicAckETH is 8 bytes (9.3.6)");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_IMMDT], 4, "ImmDt is 4 bytes (IBTA 9.3.7)");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_IETH], 4, "IETH is 4 bytes (IBTA 9.3.8)");
	cr_expect_eq(droce_ext_hdr_len[DROCE_HDR_CNP], 16, "CNP body is 16 bytes (annex A17)");
}

Test(ext_hdr, names)
{
	cr_expect_str_eq(droce_ext_hdr_name[DROCE_HDR_DETH], "DETH", "DETH name");
	cr_expect_str_eq(droce_ext_hdr_name[DROCE_HDR_RETH], "RETH", "RETH name");
	cr_expect_str_eq(droce_ext_hdr_name[DROCE_HDR_ATMETH], "AtomicETH", "AtomicETH name");
	cr_expect_str_eq(droce_ext_hdr_name[DROCE_HDR_AETH], "AETH", "AETH name");
	cr_expect_str_eq(droce_ext_hdr_name[DROCE_HDR_ATMACK], "AtomicAckETH", "AtomicAckETH name");
	cr_expect_str_eq(droce_ext_hdr_name[DROCE_HDR_IMMDT], "ImmDt", "ImmDt name");
	cr_expect_str_eq(droce_ext_hdr_name[DROCE_HDR_IETH], "IETH", "IETH name");
	cr_expect_str_eq(droce_ext_hdr_name[DROCE_HDR_CNP], "CNP", "CNP body name");
}

/* --------------------------------------------------- valid opcodes */

/* Exactly the opcodes of the spec list are valid, and they have a name. */
Test(opcode_table, valid_set_is_the_spec_list)
{
	unsigned int op;

	for (op = 0; op < 256; op++) {
		bool want = spec_find(op) != NULL;

		cr_expect_eq(droce_opcode_is_valid((uint8_t)op) != 0, want,
			     "opcode 0x%02x: valid is %d, the spec says %d", op,
			     droce_opcode_is_valid((uint8_t)op), want);
	}
}

Test(opcode_table, info_points_into_the_table)
{
	unsigned int op;

	for (op = 0; op < 256; op++)
		cr_expect_eq(droce_opcode_info((uint8_t)op), &droce_opcode_table[op],
			     "droce_opcode_info(0x%02x) is row 0x%02x", op, op);
}

Test(opcode_table, names)
{
	size_t i;

	for (i = 0; i < DIM(spec); i++) {
		const char *name = droce_opcode_info(spec[i].code)->name;

		cr_expect_not_null(name, "opcode 0x%02x has no name", spec[i].code);
		if (name != NULL)
			cr_expect_str_eq(name, spec[i].name, "opcode 0x%02x is named %s, want %s",
					 spec[i].code, name, spec[i].name);
	}
}

Test(opcode_table, header_bits)
{
	size_t i;

	for (i = 0; i < DIM(spec); i++) {
		uint32_t got = mask_of(&spec[i]) & DROCE_OPM_HDR_ALL;
		uint32_t want = spec_hdr_bits(&spec[i]);

		cr_expect_eq(got, want, "%s (0x%02x): header bits 0x%02x, want 0x%02x",
			     spec[i].name, spec[i].code, got, want);
	}
}

Test(opcode_table, header_offsets)
{
	size_t i;
	int h;

	for (i = 0; i < DIM(spec); i++) {
		const struct droce_opcode_info *info = droce_opcode_info(spec[i].code);

		for (h = 0; h < MAX_HDRS && spec[i].hdrs[h].hdr != END; h++) {
			int hdr = spec[i].hdrs[h].hdr;

			cr_expect_eq(info->offset[hdr], spec[i].hdrs[h].off,
				     "%s (0x%02x): %s at offset %u, want %u", spec[i].name,
				     spec[i].code, droce_ext_hdr_name[hdr], info->offset[hdr],
				     spec[i].hdrs[h].off);
		}
	}
}

/* Headers follow one another without gaps, in the spec's order, up to hdr_len. */
Test(opcode_table, header_order)
{
	size_t i;
	int h;

	for (i = 0; i < DIM(spec); i++) {
		const struct droce_opcode_info *info = droce_opcode_info(spec[i].code);
		unsigned int end = 12; /* the BTH */
		int prev = -1;

		for (h = 0; h < MAX_HDRS && spec[i].hdrs[h].hdr != END; h++) {
			int hdr = spec[i].hdrs[h].hdr;

			cr_expect_gt(hdr, prev, "%s: %s listed out of the wire order", spec[i].name,
				     droce_ext_hdr_name[hdr]);
			cr_expect_eq(info->offset[hdr], end,
				     "%s (0x%02x): %s starts at %u, the previous header ends at %u",
				     spec[i].name, spec[i].code, droce_ext_hdr_name[hdr],
				     info->offset[hdr], end);
			end = info->offset[hdr] + droce_ext_hdr_len[hdr];
			prev = hdr;
		}
		cr_expect_eq(info->hdr_len, end, "%s (0x%02x): hdr_len %u, headers end at %u",
			     spec[i].name, spec[i].code, info->hdr_len, end);
	}
}

Test(opcode_table, hdr_len)
{
	size_t i;

	for (i = 0; i < DIM(spec); i++) {
		uint8_t got = droce_opcode_info(spec[i].code)->hdr_len;

		cr_expect_eq(got, spec[i].hdr_len, "%s (0x%02x): hdr_len %u, want %u", spec[i].name,
			     spec[i].code, got, spec[i].hdr_len);
	}
}

Test(opcode_table, direction)
{
	size_t i;

	for (i = 0; i < DIM(spec); i++) {
		uint32_t m = mask_of(&spec[i]);

		cr_expect_eq((m & DROCE_OPM_REQ) != 0, spec[i].dir == DIR_REQ,
			     "%s (0x%02x): REQ bit is %d", spec[i].name, spec[i].code,
			     (m & DROCE_OPM_REQ) != 0);
		cr_expect_eq((m & DROCE_OPM_RESP) != 0, spec[i].dir == DIR_RESP,
			     "%s (0x%02x): RESP bit is %d", spec[i].name, spec[i].code,
			     (m & DROCE_OPM_RESP) != 0);
	}
}

Test(opcode_table, operation)
{
	static const struct {
		uint32_t bit;
		enum kind kind;
		const char *name;
	} ops[] = {
		{DROCE_OPM_SEND, K_SEND, "SEND"}, {DROCE_OPM_WRITE, K_WRITE, "WRITE"},
		{DROCE_OPM_READ, K_READ, "READ"}, {DROCE_OPM_ATOMIC, K_ATOMIC, "ATOMIC"},
		{DROCE_OPM_ACK, K_ACK, "ACK"},
	};
	size_t i, o;

	for (i = 0; i < DIM(spec); i++) {
		uint32_t m = mask_of(&spec[i]);

		for (o = 0; o < DIM(ops); o++)
			cr_expect_eq((m & ops[o].bit) != 0, spec[i].kind == ops[o].kind,
				     "%s (0x%02x): %s bit is %d", spec[i].name, spec[i].code,
				     ops[o].name, (m & ops[o].bit) != 0);
	}
}

Test(opcode_table, recv)
{
	size_t i;

	for (i = 0; i < DIM(spec); i++) {
		bool got = (mask_of(&spec[i]) & DROCE_OPM_RECV) != 0;

		cr_expect_eq(got, spec[i].recv, "%s (0x%02x): RECV bit is %d, want %d",
			     spec[i].name, spec[i].code, got, spec[i].recv);
	}
}

Test(opcode_table, comp)
{
	size_t i;

	for (i = 0; i < DIM(spec); i++) {
		bool got = (mask_of(&spec[i]) & DROCE_OPM_COMP) != 0;

		cr_expect_eq(got, spec[i].comp, "%s (0x%02x): COMP bit is %d, want %d",
			     spec[i].name, spec[i].code, got, spec[i].comp);
	}
}

Test(opcode_table, position)
{
	static const uint32_t bits[] = {
		[P_NONE] = 0,
		[P_FIRST] = DROCE_OPM_FIRST,
		[P_MIDDLE] = DROCE_OPM_MIDDLE,
		[P_LAST] = DROCE_OPM_LAST,
		[P_ONLY] = DROCE_OPM_FIRST | DROCE_OPM_LAST,
	};
	const uint32_t all = DROCE_OPM_FIRST | DROCE_OPM_MIDDLE | DROCE_OPM_LAST;
	size_t i;

	for (i = 0; i < DIM(spec); i++) {
		uint32_t got = mask_of(&spec[i]) & all;

		cr_expect_eq(got, bits[spec[i].pos], "%s (0x%02x): position bits 0x%x, want 0x%x",
			     spec[i].name, spec[i].code, got, bits[spec[i].pos]);
	}
}

Test(opcode_table, payload)
{
	size_t i;

	for (i = 0; i < DIM(spec); i++) {
		bool got = (mask_of(&spec[i]) & DROCE_OPM_PAYLOAD) != 0;

		cr_expect_eq(got, spec[i].payload, "%s (0x%02x): PAYLOAD bit is %d, want %d",
			     spec[i].name, spec[i].code, got, spec[i].payload);
	}
}

Test(opcode_table, service)
{
	static const struct {
		uint32_t bit;
		enum svc svc;
		const char *name;
	} svcs[] = {
		{DROCE_OPM_RC, S_RC, "RC"},
		{DROCE_OPM_UC, S_UC, "UC"},
		{DROCE_OPM_UD, S_UD, "UD"},
		{DROCE_OPM_CNP_CLASS, S_CNP, "CNP"},
	};
	size_t i, s;

	for (i = 0; i < DIM(spec); i++) {
		uint32_t m = mask_of(&spec[i]);

		for (s = 0; s < DIM(svcs); s++)
			cr_expect_eq((m & svcs[s].bit) != 0, spec[i].svc == svcs[s].svc,
				     "%s (0x%02x): %s bit is %d", spec[i].name, spec[i].code,
				     svcs[s].name, (m & svcs[s].bit) != 0);
	}
}

/* The service bit agrees with the class in the opcode's top three bits. */
Test(opcode_table, service_matches_class_bits)
{
	static const uint8_t cls[] = {
		[S_RC] = DROCE_OP_CLASS_RC,
		[S_UC] = DROCE_OP_CLASS_UC,
		[S_UD] = DROCE_OP_CLASS_UD,
		[S_CNP] = DROCE_OP_CLASS_CNP,
	};
	size_t i;

	for (i = 0; i < DIM(spec); i++)
		cr_expect_eq(spec[i].code & DROCE_OP_CLASS_MASK, cls[spec[i].svc],
			     "%s (0x%02x) is in class 0x%02x", spec[i].name, spec[i].code,
			     spec[i].code & DROCE_OP_CLASS_MASK);
}

Test(opcode_table, with_imm_and_inv_name_the_header_bits)
{
	cr_expect_eq(DROCE_OPM_WITH_IMM, DROCE_OPM_IMMDT, "WITH_IMM is the ImmDt header bit");
	cr_expect_eq(DROCE_OPM_WITH_INV, DROCE_OPM_IETH, "WITH_INV is the IETH header bit");
	cr_expect_eq(DROCE_OPM_ONLY, DROCE_OPM_FIRST | DROCE_OPM_LAST, "ONLY is FIRST | LAST");
}

/* No mask holds a bit that enum droce_opcode_mask does not define. */
Test(opcode_table, no_undefined_mask_bits)
{
	const uint32_t defined = DROCE_OPM_HDR_ALL | DROCE_OPM_PAYLOAD | DROCE_OPM_REQ |
				 DROCE_OPM_RESP | DROCE_OPM_SEND | DROCE_OPM_WRITE |
				 DROCE_OPM_READ | DROCE_OPM_ATOMIC | DROCE_OPM_ACK |
				 DROCE_OPM_RECV | DROCE_OPM_COMP | DROCE_OPM_FIRST |
				 DROCE_OPM_MIDDLE | DROCE_OPM_LAST | DROCE_OPM_RC | DROCE_OPM_UC |
				 DROCE_OPM_UD | DROCE_OPM_CNP_CLASS;
	size_t i;

	for (i = 0; i < DIM(spec); i++)
		cr_expect_eq(mask_of(&spec[i]) & ~defined, 0,
			     "%s (0x%02x): undefined mask bits 0x%x", spec[i].name, spec[i].code,
			     mask_of(&spec[i]) & ~defined);
}

/* ---------------------------------------------- rejected opcodes */

static void expect_rejected(unsigned int first, unsigned int last, const char *what)
{
	unsigned int op;

	for (op = first; op <= last; op++) {
		const char *name = droce_opcode_info((uint8_t)op)->name;

		cr_expect_null(name, "%s opcode 0x%02x has name %s", what, op, name);
		cr_expect(!droce_opcode_is_valid((uint8_t)op), "%s opcode 0x%02x is valid", what,
			  op);
	}
}

Test(opcode_rejected, rc_reserved)
{
	expect_rejected(0x15, 0x15, "reserved RC");
	expect_rejected(0x18, 0x1f, "reserved RC");
}

Test(opcode_rejected, uc_reserved)
{
	expect_rejected(0x2c, 0x3f, "reserved UC");
}

Test(opcode_rejected, rd)
{
	expect_rejected(0x40, 0x5f, "RD (not implemented)");
}

Test(opcode_rejected, ud_reserved)
{
	expect_rejected(0x60, 0x63, "UD (no SEND Only)");
	expect_rejected(0x66, 0x7f, "reserved UD");
}

Test(opcode_rejected, cnp_class_others)
{
	expect_rejected(0x80, 0x80, "CNP class, not the CNP");
	expect_rejected(0x82, 0x9f, "CNP class, not the CNP");
}

Test(opcode_rejected, xrc)
{
	expect_rejected(0xa0, 0xbf, "XRC (not implemented)");
}

Test(opcode_rejected, manufacturer_and_reserved)
{
	expect_rejected(0xc0, 0xff, "reserved or manufacturer specific");
}

/* --------------------------------------- work request -> opcode */

#define N DROCE_OP_NONE

/*
 * [op][service][FIRST, MIDDLE, LAST, ONLY], from IBTA 9.2 and the rules of
 * 9.4: a SEND with immediate or invalidate carries it in its last (or only)
 * packet, so its first and middle packets are plain SEND First/Middle; the
 * same for RDMA WRITE with immediate. UC has no READ, atomics or SEND with
 * invalidate; UD has single-packet SENDs only; a READ request and an atomic
 * request are one packet whatever the length.
 */
/* clang-format off */
static const uint8_t wr_spec[DROCE_WR_OP_COUNT][DROCE_SVC_COUNT][DROCE_POS_COUNT] = {
	[DROCE_WR_SEND] = {
		[DROCE_SVC_RC] = {0x00, 0x01, 0x02, 0x04},
		[DROCE_SVC_UC] = {0x20, 0x21, 0x22, 0x24},
		[DROCE_SVC_UD] = {N, N, N, 0x64},
	},
	[DROCE_WR_SEND_IMM] = {
		[DROCE_SVC_RC] = {0x00, 0x01, 0x03, 0x05},
		[DROCE_SVC_UC] = {0x20, 0x21, 0x23, 0x25},
		[DROCE_SVC_UD] = {N, N, N, 0x65},
	},
	[DROCE_WR_SEND_INV] = {
		[DROCE_SVC_RC] = {0x00, 0x01, 0x16, 0x17},
		[DROCE_SVC_UC] = {N, N, N, N},
		[DROCE_SVC_UD] = {N, N, N, N},
	},
	[DROCE_WR_WRITE] = {
		[DROCE_SVC_RC] = {0x06, 0x07, 0x08, 0x0a},
		[DROCE_SVC_UC] = {0x26, 0x27, 0x28, 0x2a},
		[DROCE_SVC_UD] = {N, N, N, N},
	},
	[DROCE_WR_WRITE_IMM] = {
		[DROCE_SVC_RC] = {0x06, 0x07, 0x09, 0x0b},
		[DROCE_SVC_UC] = {0x26, 0x27, 0x29, 0x2b},
		[DROCE_SVC_UD] = {N, N, N, N},
	},
	[DROCE_WR_READ] = {
		[DROCE_SVC_RC] = {N, N, N, 0x0c},
		[DROCE_SVC_UC] = {N, N, N, N},
		[DROCE_SVC_UD] = {N, N, N, N},
	},
	[DROCE_WR_CMP_SWAP] = {
		[DROCE_SVC_RC] = {N, N, N, 0x13},
		[DROCE_SVC_UC] = {N, N, N, N},
		[DROCE_SVC_UD] = {N, N, N, N},
	},
	[DROCE_WR_FETCH_ADD] = {
		[DROCE_SVC_RC] = {N, N, N, 0x14},
		[DROCE_SVC_UC] = {N, N, N, N},
		[DROCE_SVC_UD] = {N, N, N, N},
	},
};
/* clang-format on */

static const char *const wr_name[DROCE_WR_OP_COUNT] = {
	[DROCE_WR_SEND] = "SEND",           [DROCE_WR_SEND_IMM] = "SEND_IMM",
	[DROCE_WR_SEND_INV] = "SEND_INV",   [DROCE_WR_WRITE] = "WRITE",
	[DROCE_WR_WRITE_IMM] = "WRITE_IMM", [DROCE_WR_READ] = "READ",
	[DROCE_WR_CMP_SWAP] = "CMP_SWAP",   [DROCE_WR_FETCH_ADD] = "FETCH_ADD",
};
static const char *const svc_name[DROCE_SVC_COUNT] = {"RC", "UC", "UD"};
static const char *const pos_name[DROCE_POS_COUNT] = {"FIRST", "MIDDLE", "LAST", "ONLY"};

Test(wr_opcode, enum_counts)
{
	cr_expect_eq(DROCE_WR_OP_COUNT, 8, "eight work-request operations");
	cr_expect_eq(DROCE_SVC_COUNT, 3, "three services: RC, UC, UD");
	cr_expect_eq(DROCE_POS_COUNT, 4, "four positions: FIRST, MIDDLE, LAST, ONLY");
}

/* "SEND/RC/LAST": the cell of a combination, for messages. */
static const char *cell(unsigned int op, unsigned int svc, unsigned int pos)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%s/%s/%s", wr_name[op], svc_name[svc], pos_name[pos]);
	return buf;
}

Test(wr_opcode, every_combination)
{
	unsigned int op, svc, pos;

	for (op = 0; op < DROCE_WR_OP_COUNT; op++) {
		for (svc = 0; svc < DROCE_SVC_COUNT; svc++) {
			for (pos = 0; pos < DROCE_POS_COUNT; pos++) {
				uint8_t got = droce_wr_opcode(op, svc, pos);
				uint8_t want = wr_spec[op][svc][pos];

				cr_expect_eq(got, want, "%s: opcode 0x%02x, want 0x%02x",
					     cell(op, svc, pos), got, want);
			}
		}
	}
}

/* The opcode of one cell is valid and means what the work request asked for. */
static void expect_cell_agrees(unsigned int op, unsigned int svc, unsigned int pos)
{
	static const uint32_t op_bit[DROCE_WR_OP_COUNT] = {
		[DROCE_WR_SEND] = DROCE_OPM_SEND,       [DROCE_WR_SEND_IMM] = DROCE_OPM_SEND,
		[DROCE_WR_SEND_INV] = DROCE_OPM_SEND,   [DROCE_WR_WRITE] = DROCE_OPM_WRITE,
		[DROCE_WR_WRITE_IMM] = DROCE_OPM_WRITE, [DROCE_WR_READ] = DROCE_OPM_READ,
		[DROCE_WR_CMP_SWAP] = DROCE_OPM_ATOMIC, [DROCE_WR_FETCH_ADD] = DROCE_OPM_ATOMIC,
	};
	static const uint32_t svc_bit[DROCE_SVC_COUNT] = {
		[DROCE_SVC_RC] = DROCE_OPM_RC,
		[DROCE_SVC_UC] = DROCE_OPM_UC,
		[DROCE_SVC_UD] = DROCE_OPM_UD,
	};
	static const uint32_t pos_bits[DROCE_POS_COUNT] = {
		[DROCE_POS_FIRST] = DROCE_OPM_FIRST,
		[DROCE_POS_MIDDLE] = DROCE_OPM_MIDDLE,
		[DROCE_POS_LAST] = DROCE_OPM_LAST,
		[DROCE_POS_ONLY] = DROCE_OPM_FIRST | DROCE_OPM_LAST,
	};
	const uint32_t all_pos = DROCE_OPM_FIRST | DROCE_OPM_MIDDLE | DROCE_OPM_LAST;
	uint8_t code = droce_wr_opcode(op, svc, pos);
	bool ends = pos == DROCE_POS_LAST || pos == DROCE_POS_ONLY;
	bool imm = op == DROCE_WR_SEND_IMM || op == DROCE_WR_WRITE_IMM;
	bool inv = op == DROCE_WR_SEND_INV;
	uint32_t m;

	if (code == DROCE_OP_NONE)
		return;
	m = droce_opcode_info(code)->mask;
	cr_expect(droce_opcode_is_valid(code), "%s gives invalid opcode 0x%02x", cell(op, svc, pos),
		  code);
	cr_expect(m & DROCE_OPM_REQ, "%s: 0x%02x is not a request", cell(op, svc, pos), code);
	cr_expect(m & op_bit[op], "%s: 0x%02x has another operation", cell(op, svc, pos), code);
	cr_expect(m & svc_bit[svc], "%s: 0x%02x has another service", cell(op, svc, pos), code);
	cr_expect_eq(m & all_pos, pos_bits[pos], "%s: 0x%02x has position bits 0x%x",
		     cell(op, svc, pos), code, m & all_pos);
	cr_expect_eq((m & DROCE_OPM_WITH_IMM) != 0, imm && ends, "%s: 0x%02x has ImmDt %d",
		     cell(op, svc, pos), code, (m & DROCE_OPM_WITH_IMM) != 0);
	cr_expect_eq((m & DROCE_OPM_WITH_INV) != 0, inv && ends, "%s: 0x%02x has IETH %d",
		     cell(op, svc, pos), code, (m & DROCE_OPM_WITH_INV) != 0);
}

Test(wr_opcode, results_agree_with_opcode_masks)
{
	unsigned int op, svc, pos;

	for (op = 0; op < DROCE_WR_OP_COUNT; op++)
		for (svc = 0; svc < DROCE_SVC_COUNT; svc++)
			for (pos = 0; pos < DROCE_POS_COUNT; pos++)
				expect_cell_agrees(op, svc, pos);
}

Test(wr_opcode, uc_has_no_read_atomic_or_invalidate)
{
	unsigned int pos;

	for (pos = 0; pos < DROCE_POS_COUNT; pos++) {
		cr_expect_eq(droce_wr_opcode(DROCE_WR_READ, DROCE_SVC_UC, pos), DROCE_OP_NONE,
			     "UC READ at %s", pos_name[pos]);
		cr_expect_eq(droce_wr_opcode(DROCE_WR_CMP_SWAP, DROCE_SVC_UC, pos), DROCE_OP_NONE,
			     "UC CMP_SWAP at %s", pos_name[pos]);
		cr_expect_eq(droce_wr_opcode(DROCE_WR_FETCH_ADD, DROCE_SVC_UC, pos), DROCE_OP_NONE,
			     "UC FETCH_ADD at %s", pos_name[pos]);
		cr_expect_eq(droce_wr_opcode(DROCE_WR_SEND_INV, DROCE_SVC_UC, pos), DROCE_OP_NONE,
			     "UC SEND_INV at %s", pos_name[pos]);
	}
}

Test(wr_opcode, ud_sends_single_packets_only)
{
	unsigned int op, pos;

	for (op = 0; op < DROCE_WR_OP_COUNT; op++)
		for (pos = 0; pos < DROCE_POS_COUNT; pos++) {
			bool allowed = (op == DROCE_WR_SEND || op == DROCE_WR_SEND_IMM) &&
				       pos == DROCE_POS_ONLY;
			bool defined = droce_wr_opcode(op, DROCE_SVC_UD, pos) != DROCE_OP_NONE;

			cr_expect_eq(defined, allowed, "UD %s at %s: defined is %d, want %d",
				     wr_name[op], pos_name[pos], defined, allowed);
		}
}

Test(wr_opcode, single_packet_requests)
{
	static const enum droce_wr_op ops[] = {
		DROCE_WR_READ,
		DROCE_WR_CMP_SWAP,
		DROCE_WR_FETCH_ADD,
	};
	unsigned int o, pos;

	for (o = 0; o < DIM(ops); o++)
		for (pos = DROCE_POS_FIRST; pos <= DROCE_POS_LAST; pos++)
			cr_expect_eq(droce_wr_opcode(ops[o], DROCE_SVC_RC, pos), DROCE_OP_NONE,
				     "RC %s at %s", wr_name[ops[o]], pos_name[pos]);
}

Test(wr_opcode, out_of_range_op)
{
	cr_expect_eq(droce_wr_opcode(DROCE_WR_OP_COUNT, DROCE_SVC_RC, DROCE_POS_ONLY),
		     DROCE_OP_NONE, "op = DROCE_WR_OP_COUNT");
	cr_expect_eq(droce_wr_opcode((enum droce_wr_op)(DROCE_WR_OP_COUNT + 1), DROCE_SVC_RC,
				     DROCE_POS_ONLY),
		     DROCE_OP_NONE, "op = DROCE_WR_OP_COUNT + 1");
	cr_expect_eq(droce_wr_opcode((enum droce_wr_op) - 1, DROCE_SVC_RC, DROCE_POS_ONLY),
		     DROCE_OP_NONE, "op = -1");
	cr_expect_eq(droce_wr_opcode((enum droce_wr_op)INT_MAX, DROCE_SVC_RC, DROCE_POS_ONLY),
		     DROCE_OP_NONE, "op = INT_MAX");
}

Test(wr_opcode, out_of_range_service)
{
	cr_expect_eq(droce_wr_opcode(DROCE_WR_SEND, DROCE_SVC_COUNT, DROCE_POS_ONLY), DROCE_OP_NONE,
		     "service = DROCE_SVC_COUNT");
	cr_expect_eq(droce_wr_opcode(DROCE_WR_SEND, (enum droce_qp_service) - 1, DROCE_POS_ONLY),
		     DROCE_OP_NONE, "service = -1");
	cr_expect_eq(droce_wr_opcode(DROCE_WR_SEND, (enum droce_qp_service)INT_MAX, DROCE_POS_ONLY),
		     DROCE_OP_NONE, "service = INT_MAX");
}

Test(wr_opcode, out_of_range_position)
{
	cr_expect_eq(droce_wr_opcode(DROCE_WR_SEND, DROCE_SVC_RC, DROCE_POS_COUNT), DROCE_OP_NONE,
		     "position = DROCE_POS_COUNT");
	cr_expect_eq(droce_wr_opcode(DROCE_WR_SEND, DROCE_SVC_RC, (enum droce_msg_pos) - 1),
		     DROCE_OP_NONE, "position = -1");
	cr_expect_eq(droce_wr_opcode(DROCE_WR_SEND, DROCE_SVC_RC, (enum droce_msg_pos)INT_MAX),
		     DROCE_OP_NONE, "position = INT_MAX");
}
