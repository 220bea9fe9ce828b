/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every accessor of droce_wire_hdr.h, field by field:
 *  - round trip: what is set is read back, with values wider than the field
 *    masked, on a header of zeroes and on one of 0xff;
 *  - bytes: the exact bytes written, in network order, against arrays written
 *    by hand from the IBTA Vol. 1 9.2/9.3 layouts (and the IEEE/IETF ones);
 *  - neighbours: on a header of 0xff clearing the field, and on a header of
 *    zeroes setting it to all ones, changes the field's bits and no others.
 * Getters without a setter read hand-written bytes, with 0xff around them.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <droce_wire.h>

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

/* Repeated bytes, to keep the hand-written arrays readable. */
#define Z2 0x00, 0x00
#define Z4 Z2, Z2
#define Z8 Z4, Z4
#define F2 0xff, 0xff
#define F4 F2, F2
#define F8 F4, F4

/* Each byte of @p obj against @p want, one assertion per byte. */
static void expect_bytes(const void *obj, const uint8_t *want, size_t len, const char *what)
{
	const uint8_t *got = obj;
	size_t i;

	for (i = 0; i < len; i++)
		cr_expect_eq(got[i], want[i], "%s: byte %zu is 0x%02x, want 0x%02x", what, i,
			     got[i], want[i]);
}

/* The whole header @p hdr must hold the bytes that follow, written by hand. */
#define EXPECT_BYTES(hdr, what, ...)                                                          \
	do {                                                                                  \
		static const uint8_t want_[] = {__VA_ARGS__};                                 \
		static_assert(sizeof(want_) == sizeof(*(hdr)), "one expected byte per byte"); \
		expect_bytes((hdr), want_, sizeof(want_), (what));                            \
	} while (0)

/* A header of type @p type whose every byte is @p fill. */
#define FILLED(type, name, fill) \
	struct type name;        \
	memset(&name, (fill), sizeof(name))

/* ------------------------------------------------------------ round trips */

struct rt_case {
	uint64_t in;  /* value given to the setter */
	uint64_t out; /* value the getter must return */
};

static const struct rt_case rt_u8[] = {
	{0x00, 0x00}, {0x01, 0x01}, {0x5a, 0x5a}, {0x80, 0x80}, {0xff, 0xff},
};

static const struct rt_case rt_u16[] = {
	{0x0000, 0x0000}, {0x0001, 0x0001}, {0x1234, 0x1234}, {0x8000, 0x8000}, {0xffff, 0xffff},
};

static const struct rt_case rt_u32[] = {
	{0x00000000, 0x00000000}, {0x00000001, 0x00000001}, {0x12345678, 0x12345678},
	{0x80000000, 0x80000000}, {0xffffffff, 0xffffffff},
};

static const struct rt_case rt_u64[] = {
	{0x0000000000000000, 0x0000000000000000}, {0x0000000000000001, 0x0000000000000001},
	{0x0123456789abcdef, 0x0123456789abcdef}, {0x8000000000000000, 0x8000000000000000},
	{0xffffffffffffffff, 0xffffffffffffffff},
};

/* 24-bit fields (QPN, PSN, MSN): the top byte of the argument is dropped. */
static const struct rt_case rt_u24[] = {
	{0x000000, 0x000000},   {0x000001, 0x000001},   {0x123456, 0x123456},
	{0x800000, 0x800000},   {0xffffff, 0xffffff},   {0x1000000, 0x000000},
	{0xabcdef12, 0xcdef12}, {0xff000001, 0x000001}, {0xffffffff, 0xffffff},
};

/* BTH PadCnt: 2 bits. */
static const struct rt_case rt_u2[] = {
	{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 0}, {5, 1}, {0x7, 3}, {0xfc, 0}, {0xff, 3},
};

/* BTH TVer: 4 bits. */
static const struct rt_case rt_u4[] = {
	{0x0, 0x0},  {0x1, 0x1},  {0xa, 0xa},  {0xf, 0xf},  {0x10, 0x0},
	{0x1f, 0xf}, {0xa5, 0x5}, {0xf0, 0x0}, {0xff, 0xf},
};

/* set then get on zeroes and on 0xff, for each case of @p cases. */
#define EXPECT_ROUND_TRIP(type, get, set, cases)                                              \
	do {                                                                                  \
		static const uint8_t fills_[] = {0x00, 0xff};                                 \
		size_t f_, c_;                                                                \
		for (f_ = 0; f_ < DIM(fills_); f_++) {                                        \
			for (c_ = 0; c_ < DIM(cases); c_++) {                                 \
				FILLED(type, h_, fills_[f_]);                                 \
				set(&h_, cases[c_].in);                                       \
				cr_expect_eq((uint64_t)get(&h_), cases[c_].out,               \
					     #get " after " #set "(0x%" PRIx64 ") on 0x%02x " \
						  "is 0x%" PRIx64 ", want 0x%" PRIx64,        \
					     cases[c_].in, fills_[f_], (uint64_t)get(&h_),    \
					     cases[c_].out);                                  \
			}                                                                     \
		}                                                                             \
	} while (0)

/* Boolean fields: both values, twice in a row, on zeroes and on 0xff. */
#define EXPECT_FLAG_ROUND_TRIP(type, get, set)                                                \
	do {                                                                                  \
		static const uint8_t fills_[] = {0x00, 0xff};                                 \
		static const bool seq_[] = {true, true, false, false, true};                  \
		size_t f_, s_;                                                                \
		for (f_ = 0; f_ < DIM(fills_); f_++) {                                        \
			FILLED(type, h_, fills_[f_]);                                         \
			for (s_ = 0; s_ < DIM(seq_); s_++) {                                  \
				set(&h_, seq_[s_]);                                           \
				cr_expect_eq(get(&h_), seq_[s_],                              \
					     #get " after " #set "(%d) (step %zu) on 0x%02x " \
						  "is %d",                                    \
					     seq_[s_], s_, fills_[f_], get(&h_));             \
			}                                                                     \
		}                                                                             \
	} while (0)

/* ------------------------------------------------------------------ sizes */

Test(sizes, l2_l3_l4_headers)
{
	cr_expect_eq(sizeof(struct droce_eth_hdr), 14, "Ethernet header is 14 bytes");
	cr_expect_eq(sizeof(struct droce_vlan_hdr), 4, "802.1Q tag is 4 bytes");
	cr_expect_eq(sizeof(struct droce_ipv4_hdr), 20, "IPv4 header without options is 20 bytes");
	cr_expect_eq(sizeof(struct droce_ipv6_hdr), 40, "IPv6 header is 40 bytes");
	cr_expect_eq(sizeof(struct droce_udp_hdr), 8, "UDP header is 8 bytes");
}

Test(sizes, transport_headers)
{
	cr_expect_eq(sizeof(struct droce_bth), 12, "BTH is 12 bytes (IBTA 9.2)");
	cr_expect_eq(sizeof(struct droce_reth), 16, "RETH is 16 bytes (IBTA 9.3.3)");
	cr_expect_eq(sizeof(struct droce_aeth), 4, "AETH is 4 bytes (IBTA 9.3.5)");
	cr_expect_eq(sizeof(struct droce_atmeth), 28, "AtomicETH is 28 bytes (IBTA 9.3.4)");
	cr_expect_eq(sizeof(struct droce_atmack), 8, "AtomicAckETH is 8 bytes (IBTA 9.3.6)");
	cr_expect_eq(sizeof(struct droce_deth), 8, "DETH is 8 bytes (IBTA 9.3.2)");
	cr_expect_eq(sizeof(struct droce_immdt), 4, "ImmDt is 4 bytes (IBTA 9.3.7)");
	cr_expect_eq(sizeof(struct droce_ieth), 4, "IETH is 4 bytes (IBTA 9.3.8)");
	cr_expect_eq(sizeof(struct droce_cnp), 16, "CNP body is 16 bytes (annex A17)");
	cr_expect_eq(DROCE_ICRC_LEN, 4, "ICRC is 4 bytes (IBTA 7.8.1)");
}

/* Headers follow one another at 2-byte aligned offsets: every struct must be packed. */
Test(sizes, alignment_is_one)
{
	cr_expect_eq(alignof(struct droce_eth_hdr), 1, "Ethernet header alignment");
	cr_expect_eq(alignof(struct droce_vlan_hdr), 1, "802.1Q tag alignment");
	cr_expect_eq(alignof(struct droce_ipv4_hdr), 1, "IPv4 header alignment");
	cr_expect_eq(alignof(struct droce_ipv6_hdr), 1, "IPv6 header alignment");
	cr_expect_eq(alignof(struct droce_udp_hdr), 1, "UDP header alignment");
	cr_expect_eq(alignof(struct droce_bth), 1, "BTH alignment");
	cr_expect_eq(alignof(struct droce_reth), 1, "RETH alignment");
	cr_expect_eq(alignof(struct droce_aeth), 1, "AETH alignment");
	cr_expect_eq(alignof(struct droce_atmeth), 1, "AtomicETH alignment");
	cr_expect_eq(alignof(struct droce_atmack), 1, "AtomicAckETH alignment");
	cr_expect_eq(alignof(struct droce_deth), 1, "DETH alignment");
	cr_expect_eq(alignof(struct droce_immdt), 1, "ImmDt alignment");
	cr_expect_eq(alignof(struct droce_ieth), 1, "IETH alignment");
	cr_expect_eq(alignof(struct droce_cnp), 1, "CNP body alignment");
}

/* Wire constants from the standards, not from the header. */
Test(constants, wire_numbers)
{
	cr_expect_eq(DROCE_ETHERTYPE_IPV4, 0x0800, "IPv4 ethertype");
	cr_expect_eq(DROCE_ETHERTYPE_ARP, 0x0806, "ARP ethertype");
	cr_expect_eq(DROCE_ETHERTYPE_VLAN, 0x8100, "802.1Q TPID");
	cr_expect_eq(DROCE_ETHERTYPE_IPV6, 0x86dd, "IPv6 ethertype");
	cr_expect_eq(DROCE_IPPROTO_UDP, 17, "UDP protocol number");
	cr_expect_eq(DROCE_ROCEV2_UDP_PORT, 4791, "RoCEv2 UDP port (annex A17)");
	cr_expect_eq(DROCE_BTH_TVER, 0, "the only transport header version (IBTA 9.2)");
	cr_expect_eq(DROCE_PKEY_DEFAULT, 0xffff, "default full-member P_Key");
	cr_expect_eq(DROCE_QKEY_PRIVILEGED, 0x80000000u, "privileged Q_Key bit");
}

Test(constants, aeth_syndrome_encoding)
{
	cr_expect_eq(DROCE_AETH_ACK, 0x00, "ACK class is syndrome bits 6:5 = 00");
	cr_expect_eq(DROCE_AETH_RNR_NAK, 0x20, "RNR NAK class is syndrome bits 6:5 = 01");
	cr_expect_eq(DROCE_AETH_RESERVED, 0x40, "reserved class is syndrome bits 6:5 = 10");
	cr_expect_eq(DROCE_AETH_NAK, 0x60, "NAK class is syndrome bits 6:5 = 11");
	cr_expect_eq(DROCE_AETH_TYPE_MASK, 0x60, "class mask is bits 6:5");
	cr_expect_eq(DROCE_AETH_VALUE_MASK, 0x1f, "value mask is bits 4:0");
	cr_expect_eq(DROCE_NAK_PSN_SEQ_ERR, 0, "NAK code 0: PSN sequence error");
	cr_expect_eq(DROCE_NAK_INVALID_REQ, 1, "NAK code 1: invalid request");
	cr_expect_eq(DROCE_NAK_REM_ACCESS_ERR, 2, "NAK code 2: remote access error");
	cr_expect_eq(DROCE_NAK_REM_OP_ERR, 3, "NAK code 3: remote operational error");
	cr_expect_eq(DROCE_NAK_INVALID_RD_REQ, 4, "NAK code 4: invalid RD request");
	cr_expect_eq(DROCE_AETH_CREDIT_INVALID, 0x1f, "credit code 0x1f: no credits advertised");
}

/* --------------------------------------------------------------- Ethernet */

Test(eth, type_round_trip)
{
	EXPECT_ROUND_TRIP(droce_eth_hdr, droce_eth_type, droce_eth_set_type, rt_u16);
}

Test(eth, type_bytes)
{
	FILLED(droce_eth_hdr, h, 0x00);

	droce_eth_set_type(&h, DROCE_ETHERTYPE_IPV6);
	EXPECT_BYTES(&h, "set_type(0x86dd) on zeroes", Z4, Z4, Z4, 0x86, 0xdd);
}

Test(eth, type_neighbours)
{
	FILLED(droce_eth_hdr, ones, 0xff);
	FILLED(droce_eth_hdr, zeroes, 0x00);

	droce_eth_set_type(&ones, 0);
	EXPECT_BYTES(&ones, "set_type(0) on 0xff", F4, F4, F4, 0x00, 0x00);
	droce_eth_set_type(&zeroes, 0xffff);
	EXPECT_BYTES(&zeroes, "set_type(0xffff) on zeroes", Z4, Z4, Z4, 0xff, 0xff);
}

/* ------------------------------------------------------------------ 802.1Q */

Test(vlan, tci_round_trip)
{
	EXPECT_ROUND_TRIP(droce_vlan_hdr, droce_vlan_tci, droce_vlan_set_tci, rt_u16);
}

Test(vlan, tci_bytes)
{
	FILLED(droce_vlan_hdr, h, 0x00);

	/* PCP 5, DEI 0, VID 0x123 */
	droce_vlan_set_tci(&h, 0xa123);
	EXPECT_BYTES(&h, "set_tci(0xa123) on zeroes", 0xa1, 0x23, 0x00, 0x00);
}

Test(vlan, tci_neighbours)
{
	FILLED(droce_vlan_hdr, ones, 0xff);
	FILLED(droce_vlan_hdr, zeroes, 0x00);

	droce_vlan_set_tci(&ones, 0);
	EXPECT_BYTES(&ones, "set_tci(0) on 0xff", 0x00, 0x00, 0xff, 0xff);
	droce_vlan_set_tci(&zeroes, 0xffff);
	EXPECT_BYTES(&zeroes, "set_tci(0xffff) on zeroes", 0xff, 0xff, 0x00, 0x00);
}

Test(vlan, type_round_trip)
{
	EXPECT_ROUND_TRIP(droce_vlan_hdr, droce_vlan_type, droce_vlan_set_type, rt_u16);
}

Test(vlan, type_bytes)
{
	FILLED(droce_vlan_hdr, h, 0x00);

	droce_vlan_set_type(&h, DROCE_ETHERTYPE_IPV4);
	EXPECT_BYTES(&h, "set_type(0x0800) on zeroes", 0x00, 0x00, 0x08, 0x00);
}

Test(vlan, type_neighbours)
{
	FILLED(droce_vlan_hdr, ones, 0xff);
	FILLED(droce_vlan_hdr, zeroes, 0x00);

	droce_vlan_set_type(&ones, 0);
	EXPECT_BYTES(&ones, "set_type(0) on 0xff", 0xff, 0xff, 0x00, 0x00);
	droce_vlan_set_type(&zeroes, 0xffff);
	EXPECT_BYTES(&zeroes, "set_type(0xffff) on zeroes", 0x00, 0x00, 0xff, 0xff);
}

/* -------------------------------------------------------------------- IPv4 */

/* An IPv4 header: IHL 5, length 60, DF, TTL 64, UDP, 10.99.0.3 -> 10.99.0.2. */
static const uint8_t ipv4_sample[20] = {
	0x45, 0x00, 0x00, 0x3c, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x11,
	0x06, 0x07, 0x0a, 0x63, 0x00, 0x03, 0x0a, 0x63, 0x00, 0x02,
};

static void ipv4_from(struct droce_ipv4_hdr *h, const uint8_t *bytes)
{
	memcpy(h, bytes, sizeof(*h));
}

Test(ipv4, version_reads_high_nibble)
{
	struct droce_ipv4_hdr h;

	ipv4_from(&h, ipv4_sample);
	cr_expect_eq(droce_ipv4_version(&h), 4, "version of 0x45 is 4");
	h.version_ihl = 0x4f;
	cr_expect_eq(droce_ipv4_version(&h), 4, "version of 0x4f is 4 (IHL ignored)");
	h.version_ihl = 0x60;
	cr_expect_eq(droce_ipv4_version(&h), 6, "version of 0x60 is 6");
	h.version_ihl = 0xf0;
	cr_expect_eq(droce_ipv4_version(&h), 15, "version of 0xf0 is 15");
	memset(&h, 0xff, sizeof(h));
	h.version_ihl = 0x0f;
	cr_expect_eq(droce_ipv4_version(&h), 0, "version of 0x0f among 0xff is 0");
}

Test(ipv4, hdr_len_is_ihl_times_four)
{
	struct droce_ipv4_hdr h;

	ipv4_from(&h, ipv4_sample);
	cr_expect_eq(droce_ipv4_hdr_len(&h), 20, "IHL 5 is 20 bytes");
	h.version_ihl = 0x46;
	cr_expect_eq(droce_ipv4_hdr_len(&h), 24, "IHL 6 is 24 bytes");
	h.version_ihl = 0x4f;
	cr_expect_eq(droce_ipv4_hdr_len(&h), 60, "IHL 15 is 60 bytes");
	h.version_ihl = 0x40;
	cr_expect_eq(droce_ipv4_hdr_len(&h), 0, "IHL 0 is 0 bytes");
	memset(&h, 0xff, sizeof(h));
	h.version_ihl = 0xf5;
	cr_expect_eq(droce_ipv4_hdr_len(&h), 20, "IHL 5 under version 15 among 0xff is 20 bytes");
}

Test(ipv4, total_len_reads_bytes_2_3)
{
	struct droce_ipv4_hdr h;

	ipv4_from(&h, ipv4_sample);
	cr_expect_eq(droce_ipv4_total_len(&h), 0x003c, "total length of the sample is 60");
	memset(&h, 0xff, sizeof(h));
	((uint8_t *)&h)[2] = 0x12;
	((uint8_t *)&h)[3] = 0x34;
	cr_expect_eq(droce_ipv4_total_len(&h), 0x1234, "bytes 12 34 among 0xff read 0x1234");
	memset(&h, 0x00, sizeof(h));
	((uint8_t *)&h)[2] = 0xff;
	((uint8_t *)&h)[3] = 0xff;
	cr_expect_eq(droce_ipv4_total_len(&h), 0xffff, "bytes ff ff among zeroes read 0xffff");
}

Test(ipv4, id_reads_bytes_4_5)
{
	struct droce_ipv4_hdr h;

	ipv4_from(&h, ipv4_sample);
	cr_expect_eq(droce_ipv4_id(&h), 0x1c46, "identification of the sample is 0x1c46");
	memset(&h, 0xff, sizeof(h));
	((uint8_t *)&h)[4] = 0x00;
	((uint8_t *)&h)[5] = 0x01;
	cr_expect_eq(droce_ipv4_id(&h), 0x0001, "bytes 00 01 among 0xff read 1");
	memset(&h, 0x00, sizeof(h));
	((uint8_t *)&h)[4] = 0xab;
	((uint8_t *)&h)[5] = 0xcd;
	cr_expect_eq(droce_ipv4_id(&h), 0xabcd, "bytes ab cd among zeroes read 0xabcd");
}

Test(ipv4, frag_off_reads_bytes_6_7)
{
	struct droce_ipv4_hdr h;

	ipv4_from(&h, ipv4_sample);
	cr_expect_eq(droce_ipv4_frag_off(&h), DROCE_IPV4_DF, "the sample has DF only");
	memset(&h, 0xff, sizeof(h));
	((uint8_t *)&h)[6] = 0x20;
	((uint8_t *)&h)[7] = 0x01;
	cr_expect_eq(droce_ipv4_frag_off(&h), 0x2001, "bytes 20 01 among 0xff read 0x2001");
	memset(&h, 0x00, sizeof(h));
	((uint8_t *)&h)[6] = 0xff;
	((uint8_t *)&h)[7] = 0xff;
	cr_expect_eq(droce_ipv4_frag_off(&h), 0xffff, "bytes ff ff among zeroes read 0xffff");
}

Test(ipv4, frag_flag_constants)
{
	cr_expect_eq(DROCE_IPV4_DF, 0x4000, "DF is bit 14 of the flags/offset word");
	cr_expect_eq(DROCE_IPV4_MF, 0x2000, "MF is bit 13 of the flags/offset word");
	cr_expect_eq(DROCE_IPV4_FRAG_OFF_MASK, 0x1fff, "the fragment offset is 13 bits");
}

static bool ipv4_is_fragment_of(uint8_t hi, uint8_t lo, uint8_t fill)
{
	struct droce_ipv4_hdr h;

	memset(&h, fill, sizeof(h));
	((uint8_t *)&h)[6] = hi;
	((uint8_t *)&h)[7] = lo;
	return droce_ipv4_is_fragment(&h);
}

Test(ipv4, is_fragment_on_mf_or_offset)
{
	cr_expect(!ipv4_is_fragment_of(0x00, 0x00, 0xff), "no flag, offset 0: not a fragment");
	cr_expect(!ipv4_is_fragment_of(0x40, 0x00, 0xff), "DF alone: not a fragment");
	cr_expect(!ipv4_is_fragment_of(0x80, 0x00, 0xff), "reserved bit alone: not a fragment");
	cr_expect(!ipv4_is_fragment_of(0xc0, 0x00, 0x00), "DF and reserved bit: not a fragment");
	cr_expect(ipv4_is_fragment_of(0x20, 0x00, 0x00), "MF, offset 0: first fragment");
	cr_expect(ipv4_is_fragment_of(0x00, 0x01, 0x00), "offset 1 (8 bytes): a fragment");
	cr_expect(ipv4_is_fragment_of(0x10, 0x00, 0x00), "offset 0x1000: a fragment");
	cr_expect(ipv4_is_fragment_of(0x1f, 0xff, 0x00), "largest offset: a fragment");
	cr_expect(ipv4_is_fragment_of(0x40, 0x01, 0x00), "DF with offset 1: a fragment");
	cr_expect(ipv4_is_fragment_of(0x60, 0x00, 0x00), "DF and MF: a fragment");
	cr_expect(ipv4_is_fragment_of(0xff, 0xff, 0x00), "all bits: a fragment");
}

/* -------------------------------------------------------------------- IPv6 */

Test(ipv6, vtc_flow_round_trip)
{
	static const struct {
		uint8_t tclass;
		uint32_t flow, want_flow;
	} cases[] = {
		{0x00, 0x00000, 0x00000},    {0x01, 0x00001, 0x00001},    {0xab, 0x12345, 0x12345},
		{0x80, 0x80000, 0x80000},    {0xff, 0xfffff, 0xfffff},    {0x00, 0x100000, 0x00000},
		{0x5a, 0xfff12345, 0x12345}, {0xff, 0xffffffff, 0xfffff},
	};
	static const uint8_t fills[] = {0x00, 0xff};
	size_t f, c;

	for (f = 0; f < DIM(fills); f++) {
		for (c = 0; c < DIM(cases); c++) {
			FILLED(droce_ipv6_hdr, h, fills[f]);

			droce_ipv6_set_vtc_flow(&h, cases[c].tclass, cases[c].flow);
			cr_expect_eq(droce_ipv6_version(&h), 6,
				     "version after set_vtc_flow(0x%02x, 0x%x) on 0x%02x is %u",
				     cases[c].tclass, cases[c].flow, fills[f],
				     droce_ipv6_version(&h));
			cr_expect_eq(droce_ipv6_tclass(&h), cases[c].tclass,
				     "tclass after set_vtc_flow(0x%02x, 0x%x) on 0x%02x is 0x%02x",
				     cases[c].tclass, cases[c].flow, fills[f],
				     droce_ipv6_tclass(&h));
			cr_expect_eq(droce_ipv6_flow_label(&h), cases[c].want_flow,
				     "flow label after set_vtc_flow(0x%02x, 0x%x) on 0x%02x is "
				     "0x%x, want 0x%x",
				     cases[c].tclass, cases[c].flow, fills[f],
				     droce_ipv6_flow_label(&h), cases[c].want_flow);
		}
	}
}

Test(ipv6, vtc_flow_bytes)
{
	FILLED(droce_ipv6_hdr, h, 0x00);

	/* version 6 | traffic class 0xab | flow label 0x12345 = 0x6ab12345 */
	droce_ipv6_set_vtc_flow(&h, 0xab, 0x12345);
	EXPECT_BYTES(&h, "set_vtc_flow(0xab, 0x12345) on zeroes", 0x6a, 0xb1, 0x23, 0x45, Z4, Z8,
		     Z8, Z8, Z8);
}

Test(ipv6, vtc_flow_neighbours)
{
	FILLED(droce_ipv6_hdr, ones, 0xff);
	FILLED(droce_ipv6_hdr, zeroes, 0x00);

	droce_ipv6_set_vtc_flow(&ones, 0, 0);
	EXPECT_BYTES(&ones, "set_vtc_flow(0, 0) on 0xff", 0x60, 0x00, 0x00, 0x00, F4, F8, F8, F8,
		     F8);
	droce_ipv6_set_vtc_flow(&zeroes, 0xff, 0xffffffff);
	EXPECT_BYTES(&zeroes, "set_vtc_flow(0xff, 0xffffffff) on zeroes", 0x6f, 0xff, 0xff, 0xff,
		     Z4, Z8, Z8, Z8, Z8);
}

Test(ipv6, version_tclass_flow_read_first_word)
{
	struct droce_ipv6_hdr h;
	uint8_t *b = (uint8_t *)&h;

	memset(&h, 0xff, sizeof(h));
	b[0] = 0x60;
	b[1] = 0x00;
	b[2] = 0x00;
	b[3] = 0x00;
	cr_expect_eq(droce_ipv6_version(&h), 6, "version of 60 00 00 00 is 6");
	cr_expect_eq(droce_ipv6_tclass(&h), 0, "tclass of 60 00 00 00 is 0");
	cr_expect_eq(droce_ipv6_flow_label(&h), 0, "flow label of 60 00 00 00 is 0");
	memset(&h, 0x00, sizeof(h));
	b[0] = 0x0f;
	b[1] = 0xf0;
	cr_expect_eq(droce_ipv6_version(&h), 0, "version of 0f f0 00 00 is 0");
	cr_expect_eq(droce_ipv6_tclass(&h), 0xff, "tclass of 0f f0 00 00 is 0xff");
	cr_expect_eq(droce_ipv6_flow_label(&h), 0, "flow label of 0f f0 00 00 is 0");
	b[0] = 0x00;
	b[1] = 0x0f;
	b[2] = 0xff;
	b[3] = 0xff;
	cr_expect_eq(droce_ipv6_version(&h), 0, "version of 00 0f ff ff is 0");
	cr_expect_eq(droce_ipv6_tclass(&h), 0, "tclass of 00 0f ff ff is 0");
	cr_expect_eq(droce_ipv6_flow_label(&h), 0xfffff, "flow label of 00 0f ff ff is 0xfffff");
	b[0] = 0x6a;
	b[1] = 0xb1;
	b[2] = 0x23;
	b[3] = 0x45;
	cr_expect_eq(droce_ipv6_version(&h), 6, "version of 6a b1 23 45 is 6");
	cr_expect_eq(droce_ipv6_tclass(&h), 0xab, "tclass of 6a b1 23 45 is 0xab");
	cr_expect_eq(droce_ipv6_flow_label(&h), 0x12345, "flow label of 6a b1 23 45 is 0x12345");
}

Test(ipv6, payload_len_reads_bytes_4_5)
{
	struct droce_ipv6_hdr h;
	uint8_t *b = (uint8_t *)&h;

	memset(&h, 0xff, sizeof(h));
	b[4] = 0x00;
	b[5] = 0x2c;
	cr_expect_eq(droce_ipv6_payload_len(&h), 0x002c, "bytes 00 2c among 0xff read 44");
	memset(&h, 0x00, sizeof(h));
	b[4] = 0xff;
	b[5] = 0xfe;
	cr_expect_eq(droce_ipv6_payload_len(&h), 0xfffe, "bytes ff fe among zeroes read 0xfffe");
}

/* --------------------------------------------------------------------- UDP */

static void udp_from(struct droce_udp_hdr *h, uint8_t fill, unsigned int at, uint8_t hi, uint8_t lo)
{
	memset(h, fill, sizeof(*h));
	((uint8_t *)h)[at] = hi;
	((uint8_t *)h)[at + 1] = lo;
}

Test(udp, sport_reads_bytes_0_1)
{
	struct droce_udp_hdr h;

	udp_from(&h, 0xff, 0, 0xc1, 0x21);
	cr_expect_eq(droce_udp_sport(&h), 0xc121, "bytes c1 21 among 0xff read 0xc121");
	udp_from(&h, 0x00, 0, 0xff, 0xff);
	cr_expect_eq(droce_udp_sport(&h), 0xffff, "bytes ff ff among zeroes read 0xffff");
}

Test(udp, dport_reads_bytes_2_3)
{
	struct droce_udp_hdr h;

	udp_from(&h, 0xff, 2, 0x12, 0xb7);
	cr_expect_eq(droce_udp_dport(&h), DROCE_ROCEV2_UDP_PORT, "bytes 12 b7 read 4791");
	udp_from(&h, 0x00, 2, 0xff, 0xff);
	cr_expect_eq(droce_udp_dport(&h), 0xffff, "bytes ff ff among zeroes read 0xffff");
}

Test(udp, len_reads_bytes_4_5)
{
	struct droce_udp_hdr h;

	udp_from(&h, 0xff, 4, 0x00, 0x2c);
	cr_expect_eq(droce_udp_len(&h), 44, "bytes 00 2c among 0xff read 44");
	udp_from(&h, 0x00, 4, 0xff, 0xff);
	cr_expect_eq(droce_udp_len(&h), 0xffff, "bytes ff ff among zeroes read 0xffff");
}

/* --------------------------------------------------------------------- BTH */
/*
 * IBTA 9.2: byte 0 OpCode; byte 1 SE|M|PadCnt(2)|TVer(4); bytes 2-3 P_Key;
 * byte 4 FECN|BECN|resv6; bytes 5-7 DestQP; byte 8 AckReq|resv7; bytes 9-11 PSN.
 */

Test(bth, opcode_round_trip)
{
	EXPECT_ROUND_TRIP(droce_bth, droce_bth_opcode, droce_bth_set_opcode, rt_u8);
}

Test(bth, opcode_bytes)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_opcode(&h, DROCE_OP_CNP);
	EXPECT_BYTES(&h, "set_opcode(0x81) on zeroes", 0x81, 0x00, Z2, Z4, Z4);
}

Test(bth, opcode_neighbours)
{
	FILLED(droce_bth, ones, 0xff);
	FILLED(droce_bth, zeroes, 0x00);

	droce_bth_set_opcode(&ones, 0);
	EXPECT_BYTES(&ones, "set_opcode(0) on 0xff", 0x00, 0xff, F2, F4, F4);
	droce_bth_set_opcode(&zeroes, 0xff);
	EXPECT_BYTES(&zeroes, "set_opcode(0xff) on zeroes", 0xff, 0x00, Z2, Z4, Z4);
}

Test(bth, se_round_trip)
{
	EXPECT_FLAG_ROUND_TRIP(droce_bth, droce_bth_se, droce_bth_set_se);
}

Test(bth, se_bytes)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_se(&h, true);
	EXPECT_BYTES(&h, "set_se(true) on zeroes", 0x00, 0x80, Z2, Z4, Z4);
}

Test(bth, se_neighbours)
{
	FILLED(droce_bth, ones, 0xff);
	FILLED(droce_bth, zeroes, 0x00);

	droce_bth_set_se(&ones, false);
	EXPECT_BYTES(&ones, "set_se(false) on 0xff", 0xff, 0x7f, F2, F4, F4);
	droce_bth_set_se(&ones, true);
	EXPECT_BYTES(&ones, "set_se(true) back on 0xff", 0xff, 0xff, F2, F4, F4);
	droce_bth_set_se(&zeroes, true);
	EXPECT_BYTES(&zeroes, "set_se(true) on zeroes", 0x00, 0x80, Z2, Z4, Z4);
	droce_bth_set_se(&zeroes, false);
	EXPECT_BYTES(&zeroes, "set_se(false) back on zeroes", 0x00, 0x00, Z2, Z4, Z4);
}

Test(bth, mig_round_trip)
{
	EXPECT_FLAG_ROUND_TRIP(droce_bth, droce_bth_mig, droce_bth_set_mig);
}

Test(bth, mig_bytes)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_mig(&h, true);
	EXPECT_BYTES(&h, "set_mig(true) on zeroes", 0x00, 0x40, Z2, Z4, Z4);
}

Test(bth, mig_neighbours)
{
	FILLED(droce_bth, ones, 0xff);
	FILLED(droce_bth, zeroes, 0x00);

	droce_bth_set_mig(&ones, false);
	EXPECT_BYTES(&ones, "set_mig(false) on 0xff", 0xff, 0xbf, F2, F4, F4);
	droce_bth_set_mig(&ones, true);
	EXPECT_BYTES(&ones, "set_mig(true) back on 0xff", 0xff, 0xff, F2, F4, F4);
	droce_bth_set_mig(&zeroes, true);
	EXPECT_BYTES(&zeroes, "set_mig(true) on zeroes", 0x00, 0x40, Z2, Z4, Z4);
	droce_bth_set_mig(&zeroes, false);
	EXPECT_BYTES(&zeroes, "set_mig(false) back on zeroes", 0x00, 0x00, Z2, Z4, Z4);
}

Test(bth, pad_round_trip)
{
	EXPECT_ROUND_TRIP(droce_bth, droce_bth_pad, droce_bth_set_pad, rt_u2);
}

Test(bth, pad_bytes)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_pad(&h, 2);
	EXPECT_BYTES(&h, "set_pad(2) on zeroes", 0x00, 0x20, Z2, Z4, Z4);
	droce_bth_set_pad(&h, 1);
	EXPECT_BYTES(&h, "set_pad(1) after set_pad(2)", 0x00, 0x10, Z2, Z4, Z4);
}

Test(bth, pad_neighbours)
{
	FILLED(droce_bth, ones, 0xff);
	FILLED(droce_bth, zeroes, 0x00);

	droce_bth_set_pad(&ones, 0);
	EXPECT_BYTES(&ones, "set_pad(0) on 0xff", 0xff, 0xcf, F2, F4, F4);
	droce_bth_set_pad(&zeroes, 0xff);
	EXPECT_BYTES(&zeroes, "set_pad(0xff) on zeroes", 0x00, 0x30, Z2, Z4, Z4);
}

Test(bth, tver_round_trip)
{
	EXPECT_ROUND_TRIP(droce_bth, droce_bth_tver, droce_bth_set_tver, rt_u4);
}

Test(bth, tver_bytes)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_tver(&h, 5);
	EXPECT_BYTES(&h, "set_tver(5) on zeroes", 0x00, 0x05, Z2, Z4, Z4);
}

Test(bth, tver_neighbours)
{
	FILLED(droce_bth, ones, 0xff);
	FILLED(droce_bth, zeroes, 0x00);

	droce_bth_set_tver(&ones, 0);
	EXPECT_BYTES(&ones, "set_tver(0) on 0xff", 0xff, 0xf0, F2, F4, F4);
	droce_bth_set_tver(&zeroes, 0xff);
	EXPECT_BYTES(&zeroes, "set_tver(0xff) on zeroes", 0x00, 0x0f, Z2, Z4, Z4);
}

Test(bth, pkey_round_trip)
{
	EXPECT_ROUND_TRIP(droce_bth, droce_bth_pkey, droce_bth_set_pkey, rt_u16);
}

Test(bth, pkey_bytes)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_pkey(&h, 0x8001);
	EXPECT_BYTES(&h, "set_pkey(0x8001) on zeroes", 0x00, 0x00, 0x80, 0x01, Z4, Z4);
}

Test(bth, pkey_neighbours)
{
	FILLED(droce_bth, ones, 0xff);
	FILLED(droce_bth, zeroes, 0x00);

	droce_bth_set_pkey(&ones, 0);
	EXPECT_BYTES(&ones, "set_pkey(0) on 0xff", 0xff, 0xff, 0x00, 0x00, F4, F4);
	droce_bth_set_pkey(&zeroes, 0xffff);
	EXPECT_BYTES(&zeroes, "set_pkey(0xffff) on zeroes", 0x00, 0x00, 0xff, 0xff, Z4, Z4);
}

Test(bth, fecn_round_trip)
{
	EXPECT_FLAG_ROUND_TRIP(droce_bth, droce_bth_fecn, droce_bth_set_fecn);
}

Test(bth, fecn_bytes)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_fecn(&h, true);
	EXPECT_BYTES(&h, "set_fecn(true) on zeroes", Z4, 0x80, 0x00, 0x00, 0x00, Z4);
}

Test(bth, fecn_neighbours)
{
	FILLED(droce_bth, ones, 0xff);
	FILLED(droce_bth, zeroes, 0x00);

	droce_bth_set_fecn(&ones, false);
	EXPECT_BYTES(&ones, "set_fecn(false) on 0xff", F4, 0x7f, 0xff, 0xff, 0xff, F4);
	droce_bth_set_fecn(&ones, true);
	EXPECT_BYTES(&ones, "set_fecn(true) back on 0xff", F4, 0xff, 0xff, 0xff, 0xff, F4);
	droce_bth_set_fecn(&zeroes, true);
	EXPECT_BYTES(&zeroes, "set_fecn(true) on zeroes", Z4, 0x80, 0x00, 0x00, 0x00, Z4);
	droce_bth_set_fecn(&zeroes, false);
	EXPECT_BYTES(&zeroes, "set_fecn(false) back on zeroes", Z4, Z4, Z4);
}

Test(bth, becn_round_trip)
{
	EXPECT_FLAG_ROUND_TRIP(droce_bth, droce_bth_becn, droce_bth_set_becn);
}

Test(bth, becn_bytes)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_becn(&h, true);
	EXPECT_BYTES(&h, "set_becn(true) on zeroes", Z4, 0x40, 0x00, 0x00, 0x00, Z4);
}

Test(bth, becn_neighbours)
{
	FILLED(droce_bth, ones, 0xff);
	FILLED(droce_bth, zeroes, 0x00);

	droce_bth_set_becn(&ones, false);
	EXPECT_BYTES(&ones, "set_becn(false) on 0xff", F4, 0xbf, 0xff, 0xff, 0xff, F4);
	droce_bth_set_becn(&ones, true);
	EXPECT_BYTES(&ones, "set_becn(true) back on 0xff", F4, 0xff, 0xff, 0xff, 0xff, F4);
	droce_bth_set_becn(&zeroes, true);
	EXPECT_BYTES(&zeroes, "set_becn(true) on zeroes", Z4, 0x40, 0x00, 0x00, 0x00, Z4);
	droce_bth_set_becn(&zeroes, false);
	EXPECT_BYTES(&zeroes, "set_becn(false) back on zeroes", Z4, Z4, Z4);
}

Test(bth, qpn_round_trip)
{
	EXPECT_ROUND_TRIP(droce_bth, droce_bth_qpn, droce_bth_set_qpn, rt_u24);
}

Test(bth, qpn_bytes)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_qpn(&h, 0x123456);
	EXPECT_BYTES(&h, "set_qpn(0x123456) on zeroes", Z4, 0x00, 0x12, 0x34, 0x56, Z4);
}

Test(bth, qpn_neighbours)
{
	FILLED(droce_bth, ones, 0xff);
	FILLED(droce_bth, zeroes, 0x00);

	droce_bth_set_qpn(&ones, 0);
	EXPECT_BYTES(&ones, "set_qpn(0) on 0xff", F4, 0xff, 0x00, 0x00, 0x00, F4);
	droce_bth_set_qpn(&zeroes, 0xffffffff);
	EXPECT_BYTES(&zeroes, "set_qpn(0xffffffff) on zeroes", Z4, 0x00, 0xff, 0xff, 0xff, Z4);
}

/* FECN, BECN and the QPN share one 32-bit word: each keeps the others. */
Test(bth, qpn_word_fields_independent)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_qpn(&h, 0xffffff);
	droce_bth_set_fecn(&h, true);
	cr_expect_eq(droce_bth_qpn(&h), 0xffffff, "set_fecn(true) keeps the QPN");
	cr_expect(!droce_bth_becn(&h), "set_fecn(true) leaves BECN clear");
	droce_bth_set_becn(&h, true);
	cr_expect_eq(droce_bth_qpn(&h), 0xffffff, "set_becn(true) keeps the QPN");
	cr_expect(droce_bth_fecn(&h), "set_becn(true) keeps FECN");
	droce_bth_set_qpn(&h, 0);
	cr_expect(droce_bth_fecn(&h), "set_qpn(0) keeps FECN");
	cr_expect(droce_bth_becn(&h), "set_qpn(0) keeps BECN");
	droce_bth_set_fecn(&h, false);
	cr_expect(droce_bth_becn(&h), "set_fecn(false) keeps BECN");
	cr_expect_eq(droce_bth_qpn(&h), 0, "set_fecn(false) keeps QPN 0");
}

Test(bth, ackreq_round_trip)
{
	EXPECT_FLAG_ROUND_TRIP(droce_bth, droce_bth_ackreq, droce_bth_set_ackreq);
}

Test(bth, ackreq_bytes)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_ackreq(&h, true);
	EXPECT_BYTES(&h, "set_ackreq(true) on zeroes", Z4, Z4, 0x80, 0x00, 0x00, 0x00);
}

Test(bth, ackreq_neighbours)
{
	FILLED(droce_bth, ones, 0xff);
	FILLED(droce_bth, zeroes, 0x00);

	droce_bth_set_ackreq(&ones, false);
	EXPECT_BYTES(&ones, "set_ackreq(false) on 0xff", F4, F4, 0x7f, 0xff, 0xff, 0xff);
	droce_bth_set_ackreq(&ones, true);
	EXPECT_BYTES(&ones, "set_ackreq(true) back on 0xff", F4, F4, F4);
	droce_bth_set_ackreq(&zeroes, true);
	EXPECT_BYTES(&zeroes, "set_ackreq(true) on zeroes", Z4, Z4, 0x80, 0x00, 0x00, 0x00);
	droce_bth_set_ackreq(&zeroes, false);
	EXPECT_BYTES(&zeroes, "set_ackreq(false) back on zeroes", Z4, Z4, Z4);
}

Test(bth, psn_round_trip)
{
	EXPECT_ROUND_TRIP(droce_bth, droce_bth_psn, droce_bth_set_psn, rt_u24);
}

Test(bth, psn_bytes)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_psn(&h, 0xabcdef);
	EXPECT_BYTES(&h, "set_psn(0xabcdef) on zeroes", Z4, Z4, 0x00, 0xab, 0xcd, 0xef);
}

Test(bth, psn_neighbours)
{
	FILLED(droce_bth, ones, 0xff);
	FILLED(droce_bth, zeroes, 0x00);

	droce_bth_set_psn(&ones, 0);
	EXPECT_BYTES(&ones, "set_psn(0) on 0xff", F4, F4, 0xff, 0x00, 0x00, 0x00);
	droce_bth_set_psn(&zeroes, 0xffffffff);
	EXPECT_BYTES(&zeroes, "set_psn(0xffffffff) on zeroes", Z4, Z4, 0x00, 0xff, 0xff, 0xff);
}

/* AckReq and the PSN share one 32-bit word: each keeps the other. */
Test(bth, psn_word_fields_independent)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_psn(&h, 0xffffff);
	droce_bth_set_ackreq(&h, true);
	cr_expect_eq(droce_bth_psn(&h), 0xffffff, "set_ackreq(true) keeps the PSN");
	droce_bth_set_psn(&h, 0);
	cr_expect(droce_bth_ackreq(&h), "set_psn(0) keeps AckReq");
	droce_bth_set_ackreq(&h, false);
	cr_expect_eq(droce_bth_psn(&h), 0, "set_ackreq(false) keeps PSN 0");
}

/* All BTH setters together give the header written by hand, and read back. */
Test(bth, whole_header)
{
	FILLED(droce_bth, h, 0x00);

	droce_bth_set_opcode(&h, DROCE_OP_RC_WRITE_ONLY);
	droce_bth_set_se(&h, true);
	droce_bth_set_mig(&h, false);
	droce_bth_set_pad(&h, 3);
	droce_bth_set_tver(&h, DROCE_BTH_TVER);
	droce_bth_set_pkey(&h, DROCE_PKEY_DEFAULT);
	droce_bth_set_fecn(&h, false);
	droce_bth_set_becn(&h, true);
	droce_bth_set_qpn(&h, 0x000011);
	droce_bth_set_ackreq(&h, true);
	droce_bth_set_psn(&h, 0x123456);
	/* 0a | SE, PadCnt 3 | ffff | BECN | 000011 | AckReq | 123456 */
	EXPECT_BYTES(&h, "every BTH field", 0x0a, 0xb0, 0xff, 0xff, 0x40, 0x00, 0x00, 0x11, 0x80,
		     0x12, 0x34, 0x56);
	cr_expect_eq(droce_bth_opcode(&h), 0x0a, "opcode reads back");
	cr_expect(droce_bth_se(&h), "SE reads back");
	cr_expect(!droce_bth_mig(&h), "MigReq reads back");
	cr_expect_eq(droce_bth_pad(&h), 3, "PadCnt reads back");
	cr_expect_eq(droce_bth_tver(&h), 0, "TVer reads back");
	cr_expect_eq(droce_bth_pkey(&h), 0xffff, "P_Key reads back");
	cr_expect(!droce_bth_fecn(&h), "FECN reads back");
	cr_expect(droce_bth_becn(&h), "BECN reads back");
	cr_expect_eq(droce_bth_qpn(&h), 0x11, "DestQP reads back");
	cr_expect(droce_bth_ackreq(&h), "AckReq reads back");
	cr_expect_eq(droce_bth_psn(&h), 0x123456, "PSN reads back");
}

/* The getters ignore the reserved bits: resv6 of byte 4 and resv7 of byte 8. */
Test(bth, getters_ignore_reserved_bits)
{
	static const uint8_t bytes[12] = {
		0x04, 0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00, 0x00,
	};
	struct droce_bth h;

	memcpy(&h, bytes, sizeof(h));
	cr_expect(!droce_bth_fecn(&h), "resv6 set does not read as FECN");
	cr_expect(!droce_bth_becn(&h), "resv6 set does not read as BECN");
	cr_expect_eq(droce_bth_qpn(&h), 0, "resv6 set does not leak into the QPN");
	cr_expect(!droce_bth_ackreq(&h), "resv7 set does not read as AckReq");
	cr_expect_eq(droce_bth_psn(&h), 0, "resv7 set does not leak into the PSN");
}

/* -------------------------------------------------------------------- RETH */
/* IBTA 9.3.3: bytes 0-7 VA, 8-11 R_Key, 12-15 DMA Length. */

Test(reth, va_round_trip)
{
	EXPECT_ROUND_TRIP(droce_reth, droce_reth_va, droce_reth_set_va, rt_u64);
}

Test(reth, va_bytes)
{
	FILLED(droce_reth, h, 0x00);

	droce_reth_set_va(&h, 0x0123456789abcdef);
	EXPECT_BYTES(&h, "set_va(0x0123456789abcdef) on zeroes", 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
		     0xcd, 0xef, Z4, Z4);
}

Test(reth, va_neighbours)
{
	FILLED(droce_reth, ones, 0xff);
	FILLED(droce_reth, zeroes, 0x00);

	droce_reth_set_va(&ones, 0);
	EXPECT_BYTES(&ones, "set_va(0) on 0xff", Z8, F4, F4);
	droce_reth_set_va(&zeroes, UINT64_MAX);
	EXPECT_BYTES(&zeroes, "set_va(max) on zeroes", F8, Z4, Z4);
}

Test(reth, rkey_round_trip)
{
	EXPECT_ROUND_TRIP(droce_reth, droce_reth_rkey, droce_reth_set_rkey, rt_u32);
}

Test(reth, rkey_bytes)
{
	FILLED(droce_reth, h, 0x00);

	droce_reth_set_rkey(&h, 0xdeadbeef);
	EXPECT_BYTES(&h, "set_rkey(0xdeadbeef) on zeroes", Z8, 0xde, 0xad, 0xbe, 0xef, Z4);
}

Test(reth, rkey_neighbours)
{
	FILLED(droce_reth, ones, 0xff);
	FILLED(droce_reth, zeroes, 0x00);

	droce_reth_set_rkey(&ones, 0);
	EXPECT_BYTES(&ones, "set_rkey(0) on 0xff", F8, Z4, F4);
	droce_reth_set_rkey(&zeroes, UINT32_MAX);
	EXPECT_BYTES(&zeroes, "set_rkey(max) on zeroes", Z8, F4, Z4);
}

Test(reth, len_round_trip)
{
	EXPECT_ROUND_TRIP(droce_reth, droce_reth_len, droce_reth_set_len, rt_u32);
}

Test(reth, len_bytes)
{
	FILLED(droce_reth, h, 0x00);

	droce_reth_set_len(&h, 0x00010203);
	EXPECT_BYTES(&h, "set_len(0x00010203) on zeroes", Z8, Z4, 0x00, 0x01, 0x02, 0x03);
}

Test(reth, len_neighbours)
{
	FILLED(droce_reth, ones, 0xff);
	FILLED(droce_reth, zeroes, 0x00);

	droce_reth_set_len(&ones, 0);
	EXPECT_BYTES(&ones, "set_len(0) on 0xff", F8, F4, Z4);
	droce_reth_set_len(&zeroes, UINT32_MAX);
	EXPECT_BYTES(&zeroes, "set_len(max) on zeroes", Z8, Z4, F4);
}

/* -------------------------------------------------------------------- AETH */
/* IBTA 9.3.5: byte 0 Syndrome, bytes 1-3 MSN. */

Test(aeth, syndrome_round_trip)
{
	EXPECT_ROUND_TRIP(droce_aeth, droce_aeth_syndrome, droce_aeth_set_syndrome, rt_u8);
}

Test(aeth, syndrome_bytes)
{
	FILLED(droce_aeth, h, 0x00);

	droce_aeth_set_syndrome(&h, 0x63);
	EXPECT_BYTES(&h, "set_syndrome(0x63) on zeroes", 0x63, 0x00, 0x00, 0x00);
}

Test(aeth, syndrome_neighbours)
{
	FILLED(droce_aeth, ones, 0xff);
	FILLED(droce_aeth, zeroes, 0x00);

	droce_aeth_set_syndrome(&ones, 0);
	EXPECT_BYTES(&ones, "set_syndrome(0) on 0xff", 0x00, 0xff, 0xff, 0xff);
	droce_aeth_set_syndrome(&zeroes, 0xff);
	EXPECT_BYTES(&zeroes, "set_syndrome(0xff) on zeroes", 0xff, 0x00, 0x00, 0x00);
}

Test(aeth, msn_round_trip)
{
	EXPECT_ROUND_TRIP(droce_aeth, droce_aeth_msn, droce_aeth_set_msn, rt_u24);
}

Test(aeth, msn_bytes)
{
	FILLED(droce_aeth, h, 0x00);

	droce_aeth_set_msn(&h, 0x0a0b0c);
	EXPECT_BYTES(&h, "set_msn(0x0a0b0c) on zeroes", 0x00, 0x0a, 0x0b, 0x0c);
}

Test(aeth, msn_neighbours)
{
	FILLED(droce_aeth, ones, 0xff);
	FILLED(droce_aeth, zeroes, 0x00);

	droce_aeth_set_msn(&ones, 0);
	EXPECT_BYTES(&ones, "set_msn(0) on 0xff", 0xff, 0x00, 0x00, 0x00);
	droce_aeth_set_msn(&zeroes, 0xffffffff);
	EXPECT_BYTES(&zeroes, "set_msn(0xffffffff) on zeroes", 0x00, 0xff, 0xff, 0xff);
}

Test(aeth, syndrome_make_ack)
{
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_ACK, 0), 0x00, "ACK, credit 0");
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_ACK, 5), 0x05, "ACK, credit 5");
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_ACK, DROCE_AETH_CREDIT_INVALID), 0x1f,
		     "ACK, no credits advertised");
}

Test(aeth, syndrome_make_rnr_nak)
{
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_RNR_NAK, 0), 0x20, "RNR NAK, timer 0");
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_RNR_NAK, 14), 0x2e, "RNR NAK, timer 14");
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_RNR_NAK, 31), 0x3f, "RNR NAK, timer 31");
}

Test(aeth, syndrome_make_nak)
{
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_NAK, DROCE_NAK_PSN_SEQ_ERR), 0x60,
		     "NAK, PSN sequence error");
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_NAK, DROCE_NAK_INVALID_REQ), 0x61,
		     "NAK, invalid request");
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_NAK, DROCE_NAK_REM_ACCESS_ERR), 0x62,
		     "NAK, remote access error");
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_NAK, DROCE_NAK_REM_OP_ERR), 0x63,
		     "NAK, remote operational error");
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_NAK, DROCE_NAK_INVALID_RD_REQ), 0x64,
		     "NAK, invalid RD request");
}

Test(aeth, syndrome_make_masks_value)
{
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_ACK, 0x20), 0x00,
		     "ACK with value 0x20 keeps 5 bits: 0x00");
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_ACK, 0xff), 0x1f,
		     "ACK with value 0xff keeps 5 bits: 0x1f");
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_RNR_NAK, 0x40), 0x20,
		     "RNR NAK with value 0x40 keeps 5 bits: 0x20");
	cr_expect_eq(droce_aeth_syndrome_make(DROCE_AETH_NAK, 0xe1), 0x61,
		     "NAK with value 0xe1 keeps 5 bits: 0x61");
}

/* Every class and value: the class in bits 6:5, the value in 4:0, bit 7 clear. */
Test(aeth, syndrome_make_decodes_back)
{
	static const enum droce_aeth_type types[] = {
		DROCE_AETH_ACK,
		DROCE_AETH_RNR_NAK,
		DROCE_AETH_RESERVED,
		DROCE_AETH_NAK,
	};
	unsigned int t, v;

	for (t = 0; t < DIM(types); t++) {
		for (v = 0; v <= 0xff; v++) {
			uint8_t s = droce_aeth_syndrome_make(types[t], (uint8_t)v);

			cr_expect_eq(s & 0x60, (unsigned int)types[t],
				     "class of make(0x%02x, 0x%02x) = 0x%02x", types[t], v, s);
			cr_expect_eq(s & 0x1f, v & 0x1f, "value of make(0x%02x, 0x%02x) = 0x%02x",
				     types[t], v, s);
			cr_expect_eq(s & 0x80, 0, "reserved bit 7 of make(0x%02x, 0x%02x) = 0x%02x",
				     types[t], v, s);
		}
	}
}

/* --------------------------------------------------------------- AtomicETH */
/* IBTA 9.3.4: bytes 0-7 VA, 8-11 R_Key, 12-19 Swap/Add Data, 20-27 Compare Data. */

Test(atmeth, va_round_trip)
{
	EXPECT_ROUND_TRIP(droce_atmeth, droce_atmeth_va, droce_atmeth_set_va, rt_u64);
}

Test(atmeth, va_bytes)
{
	FILLED(droce_atmeth, h, 0x00);

	droce_atmeth_set_va(&h, 0x1122334455667788);
	EXPECT_BYTES(&h, "set_va(0x1122334455667788) on zeroes", 0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
		     0x77, 0x88, Z4, Z8, Z8);
}

Test(atmeth, va_neighbours)
{
	FILLED(droce_atmeth, ones, 0xff);
	FILLED(droce_atmeth, zeroes, 0x00);

	droce_atmeth_set_va(&ones, 0);
	EXPECT_BYTES(&ones, "set_va(0) on 0xff", Z8, F4, F8, F8);
	droce_atmeth_set_va(&zeroes, UINT64_MAX);
	EXPECT_BYTES(&zeroes, "set_va(max) on zeroes", F8, Z4, Z8, Z8);
}

Test(atmeth, rkey_round_trip)
{
	EXPECT_ROUND_TRIP(droce_atmeth, droce_atmeth_rkey, droce_atmeth_set_rkey, rt_u32);
}

Test(atmeth, rkey_bytes)
{
	FILLED(droce_atmeth, h, 0x00);

	droce_atmeth_set_rkey(&h, 0xa1b2c3d4);
	EXPECT_BYTES(&h, "set_rkey(0xa1b2c3d4) on zeroes", Z8, 0xa1, 0xb2, 0xc3, 0xd4, Z8, Z8);
}

Test(atmeth, rkey_neighbours)
{
	FILLED(droce_atmeth, ones, 0xff);
	FILLED(droce_atmeth, zeroes, 0x00);

	droce_atmeth_set_rkey(&ones, 0);
	EXPECT_BYTES(&ones, "set_rkey(0) on 0xff", F8, Z4, F8, F8);
	droce_atmeth_set_rkey(&zeroes, UINT32_MAX);
	EXPECT_BYTES(&zeroes, "set_rkey(max) on zeroes", Z8, F4, Z8, Z8);
}

Test(atmeth, swap_add_round_trip)
{
	EXPECT_ROUND_TRIP(droce_atmeth, droce_atmeth_swap_add, droce_atmeth_set_swap_add, rt_u64);
}

Test(atmeth, swap_add_bytes)
{
	FILLED(droce_atmeth, h, 0x00);

	droce_atmeth_set_swap_add(&h, 0x0102030405060708);
	EXPECT_BYTES(&h, "set_swap_add(0x0102030405060708) on zeroes", Z8, Z4, 0x01, 0x02, 0x03,
		     0x04, 0x05, 0x06, 0x07, 0x08, Z8);
}

Test(atmeth, swap_add_neighbours)
{
	FILLED(droce_atmeth, ones, 0xff);
	FILLED(droce_atmeth, zeroes, 0x00);

	droce_atmeth_set_swap_add(&ones, 0);
	EXPECT_BYTES(&ones, "set_swap_add(0) on 0xff", F8, F4, Z8, F8);
	droce_atmeth_set_swap_add(&zeroes, UINT64_MAX);
	EXPECT_BYTES(&zeroes, "set_swap_add(max) on zeroes", Z8, Z4, F8, Z8);
}

Test(atmeth, compare_round_trip)
{
	EXPECT_ROUND_TRIP(droce_atmeth, droce_atmeth_compare, droce_atmeth_set_compare, rt_u64);
}

Test(atmeth, compare_bytes)
{
	FILLED(droce_atmeth, h, 0x00);

	droce_atmeth_set_compare(&h, 0xf0e0d0c0b0a09080);
	EXPECT_BYTES(&h, "set_compare(0xf0e0d0c0b0a09080) on zeroes", Z8, Z4, Z8, 0xf0, 0xe0, 0xd0,
		     0xc0, 0xb0, 0xa0, 0x90, 0x80);
}

Test(atmeth, compare_neighbours)
{
	FILLED(droce_atmeth, ones, 0xff);
	FILLED(droce_atmeth, zeroes, 0x00);

	droce_atmeth_set_compare(&ones, 0);
	EXPECT_BYTES(&ones, "set_compare(0) on 0xff", F8, F4, F8, Z8);
	droce_atmeth_set_compare(&zeroes, UINT64_MAX);
	EXPECT_BYTES(&zeroes, "set_compare(max) on zeroes", Z8, Z4, Z8, F8);
}

/* ------------------------------------------------------------ AtomicAckETH */
/* IBTA 9.3.6: bytes 0-7 Original Remote Data. */

Test(atmack, orig_round_trip)
{
	EXPECT_ROUND_TRIP(droce_atmack, droce_atmack_orig, droce_atmack_set_orig, rt_u64);
}

Test(atmack, orig_bytes)
{
	FILLED(droce_atmack, h, 0x00);

	droce_atmack_set_orig(&h, 0x00000000deadbeef);
	EXPECT_BYTES(&h, "set_orig(0xdeadbeef) on zeroes", Z4, 0xde, 0xad, 0xbe, 0xef);
	droce_atmack_set_orig(&h, 0x8000000000000001);
	EXPECT_BYTES(&h, "set_orig(0x8000000000000001) on zeroes", 0x80, 0x00, 0x00, 0x00, 0x00,
		     0x00, 0x00, 0x01);
}

Test(atmack, orig_neighbours)
{
	/* the field is the whole header: check it against the bytes around it */
	struct {
		uint8_t before[4];
		struct droce_atmack h;
		uint8_t after[4];
	} DROCE_PACKED ones, zeroes;

	memset(&ones, 0xff, sizeof(ones));
	memset(&zeroes, 0x00, sizeof(zeroes));
	droce_atmack_set_orig(&ones.h, 0);
	EXPECT_BYTES(&ones, "set_orig(0) inside 0xff", F4, Z8, F4);
	droce_atmack_set_orig(&zeroes.h, UINT64_MAX);
	EXPECT_BYTES(&zeroes, "set_orig(max) inside zeroes", Z4, F8, Z4);
}

/* -------------------------------------------------------------------- DETH */
/* IBTA 9.3.2: bytes 0-3 Q_Key, byte 4 reserved, bytes 5-7 SrcQP. */

Test(deth, qkey_round_trip)
{
	EXPECT_ROUND_TRIP(droce_deth, droce_deth_qkey, droce_deth_set_qkey, rt_u32);
}

Test(deth, qkey_bytes)
{
	FILLED(droce_deth, h, 0x00);

	droce_deth_set_qkey(&h, 0x80010203);
	EXPECT_BYTES(&h, "set_qkey(0x80010203) on zeroes", 0x80, 0x01, 0x02, 0x03, Z4);
}

Test(deth, qkey_neighbours)
{
	FILLED(droce_deth, ones, 0xff);
	FILLED(droce_deth, zeroes, 0x00);

	droce_deth_set_qkey(&ones, 0);
	EXPECT_BYTES(&ones, "set_qkey(0) on 0xff", Z4, F4);
	droce_deth_set_qkey(&zeroes, UINT32_MAX);
	EXPECT_BYTES(&zeroes, "set_qkey(max) on zeroes", F4, Z4);
}

Test(deth, sqpn_round_trip)
{
	EXPECT_ROUND_TRIP(droce_deth, droce_deth_sqpn, droce_deth_set_sqpn, rt_u24);
}

Test(deth, sqpn_bytes)
{
	FILLED(droce_deth, h, 0x00);

	droce_deth_set_sqpn(&h, 0x654321);
	EXPECT_BYTES(&h, "set_sqpn(0x654321) on zeroes", Z4, 0x00, 0x65, 0x43, 0x21);
}

Test(deth, sqpn_neighbours)
{
	FILLED(droce_deth, ones, 0xff);
	FILLED(droce_deth, zeroes, 0x00);

	droce_deth_set_sqpn(&ones, 0);
	EXPECT_BYTES(&ones, "set_sqpn(0) on 0xff", F4, 0xff, 0x00, 0x00, 0x00);
	droce_deth_set_sqpn(&zeroes, 0xffffffff);
	EXPECT_BYTES(&zeroes, "set_sqpn(0xffffffff) on zeroes", Z4, 0x00, 0xff, 0xff, 0xff);
}

Test(deth, sqpn_ignores_reserved_byte)
{
	static const uint8_t bytes[8] = {0x00, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00, 0x01};
	struct droce_deth h;

	memcpy(&h, bytes, sizeof(h));
	cr_expect_eq(droce_deth_sqpn(&h), 1, "reserved byte 4 does not leak into SrcQP");
}

/* ------------------------------------------------------------------- ImmDt */
/* IBTA 9.3.7: 4 opaque bytes, kept in network order by the accessors. */

Test(immdt, imm_round_trip)
{
	static const uint32_t values[] = {0, 1, 0x12345678, 0x80000000, 0xffffffff};
	static const uint8_t fills[] = {0x00, 0xff};
	size_t f, v;

	for (f = 0; f < DIM(fills); f++) {
		for (v = 0; v < DIM(values); v++) {
			FILLED(droce_immdt, h, fills[f]);

			droce_immdt_set_imm(&h, values[v]);
			cr_expect_eq(droce_immdt_imm(&h), values[v],
				     "imm after set_imm(0x%08x) on 0x%02x is 0x%08x", values[v],
				     fills[f], droce_immdt_imm(&h));
		}
	}
}

Test(immdt, imm_bytes)
{
	FILLED(droce_immdt, h, 0x00);

	/* the argument is already big-endian: its bytes go to the wire as they are */
	droce_immdt_set_imm(&h, htobe32(0x11223344));
	EXPECT_BYTES(&h, "set_imm(htobe32(0x11223344)) on zeroes", 0x11, 0x22, 0x33, 0x44);
	cr_expect_eq(be32toh(droce_immdt_imm(&h)), 0x11223344,
		     "imm reads back the big-endian word");
}

Test(immdt, imm_neighbours)
{
	struct {
		uint8_t before[4];
		struct droce_immdt h;
		uint8_t after[4];
	} DROCE_PACKED ones, zeroes;

	memset(&ones, 0xff, sizeof(ones));
	memset(&zeroes, 0x00, sizeof(zeroes));
	droce_immdt_set_imm(&ones.h, 0);
	EXPECT_BYTES(&ones, "set_imm(0) inside 0xff", F4, Z4, F4);
	droce_immdt_set_imm(&zeroes.h, UINT32_MAX);
	EXPECT_BYTES(&zeroes, "set_imm(max) inside zeroes", Z4, F4, Z4);
}

/* -------------------------------------------------------------------- IETH */
/* IBTA 9.3.8: bytes 0-3 R_Key to invalidate. */

Test(ieth, rkey_round_trip)
{
	EXPECT_ROUND_TRIP(droce_ieth, droce_ieth_rkey, droce_ieth_set_rkey, rt_u32);
}

Test(ieth, rkey_bytes)
{
	FILLED(droce_ieth, h, 0x00);

	droce_ieth_set_rkey(&h, 0x0badcafe);
	EXPECT_BYTES(&h, "set_rkey(0x0badcafe) on zeroes", 0x0b, 0xad, 0xca, 0xfe);
}

Test(ieth, rkey_neighbours)
{
	struct {
		uint8_t before[4];
		struct droce_ieth h;
		uint8_t after[4];
	} DROCE_PACKED ones, zeroes;

	memset(&ones, 0xff, sizeof(ones));
	memset(&zeroes, 0x00, sizeof(zeroes));
	droce_ieth_set_rkey(&ones.h, 0);
	EXPECT_BYTES(&ones, "set_rkey(0) inside 0xff", F4, Z4, F4);
	droce_ieth_set_rkey(&zeroes.h, UINT32_MAX);
	EXPECT_BYTES(&zeroes, "set_rkey(max) inside zeroes", Z4, F4, Z4);
}

/* ---- address helpers */

Test(addr, eui64_from_mac)
{
	static const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x01};
	static const uint8_t want[8] = {0x50, 0x54, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x01};
	uint8_t eui[8];

	droce_eui64_from_mac(mac, eui);
	cr_expect_arr_eq(eui, want, 8, "the universal/local bit flipped, ff:fe in the middle");
}

Test(addr, ipv6_link_local)
{
	static const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x01};
	/* fe80::5054:ff:fe00:1, GID 0 of ibv_devinfo for that MAC */
	static const uint8_t want[16] = {0xfe, 0x80, 0,    0,    0,    0,    0,    0,
					 0x50, 0x54, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x01};
	uint8_t ip[16];

	memset(ip, 0xaa, sizeof(ip));
	droce_ipv6_link_local(mac, ip);
	cr_expect_arr_eq(ip, want, 16);
}

Test(addr, ipv4_mapped)
{
	static const uint8_t v4[4] = {10, 99, 0, 2};
	static const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 99, 0, 2};
	uint8_t ip[16];

	memset(ip, 0xaa, sizeof(ip));
	droce_ipv4_mapped(v4, ip);
	cr_expect_arr_eq(ip, want, 16);
}
