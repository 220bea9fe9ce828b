/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * RoCEv2 wire headers: Ethernet, 802.1Q, IPv4, IPv6, UDP and the InfiniBand
 * transport headers (IBTA Vol. 1 rel. 1.4 section 9.2 and annex A17).
 *
 * Every multi-byte field is big-endian on the wire. Structs are packed
 * (alignment 1) because headers follow one another at offsets that are only
 * 2-byte aligned (the BTH sits at byte 42 of an untagged IPv4 frame). Fields
 * are read and written only through the accessors below, which convert byte
 * order and apply the masks; no bitfields.
 */
#ifndef DROCE_WIRE_HDR_H
#define DROCE_WIRE_HDR_H

#include <assert.h>
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DROCE_PACKED __attribute__((packed))

/* ---------------------------------------------------------------- L2/L3/L4 */

#define DROCE_ETHER_ADDR_LEN 6
#define DROCE_ETHERTYPE_IPV4 0x0800
#define DROCE_ETHERTYPE_ARP  0x0806
#define DROCE_ETHERTYPE_VLAN 0x8100
#define DROCE_ETHERTYPE_IPV6 0x86dd
#define DROCE_IPPROTO_UDP    17
/** IANA port of RoCEv2 (annex A17). */
#define DROCE_ROCEV2_UDP_PORT 4791
/** Source ports are taken from this range (annex A17, as Linux does). */
#define DROCE_ROCEV2_SPORT_MIN 0xc000

struct droce_eth_hdr {
	uint8_t dst[DROCE_ETHER_ADDR_LEN];
	uint8_t src[DROCE_ETHER_ADDR_LEN];
	uint16_t type; /**< big-endian ethertype */
} DROCE_PACKED;
static_assert(sizeof(struct droce_eth_hdr) == 14, "Ethernet header is 14 bytes");

/** 802.1Q tag: follows the source MAC; its own type field names what follows. */
struct droce_vlan_hdr {
	uint16_t tci;  /**< PCP(3) DEI(1) VID(12) */
	uint16_t type; /**< inner ethertype */
} DROCE_PACKED;
static_assert(sizeof(struct droce_vlan_hdr) == 4, "802.1Q tag is 4 bytes");

#define DROCE_IPV4_DF            0x4000
#define DROCE_IPV4_MF            0x2000
#define DROCE_IPV4_FRAG_OFF_MASK 0x1fff

struct droce_ipv4_hdr {
	uint8_t version_ihl;
	uint8_t tos;
	uint16_t total_len;
	uint16_t id;
	uint16_t frag_off; /**< flags(3) fragment offset(13) */
	uint8_t ttl;
	uint8_t proto;
	uint16_t csum;
	uint8_t src[4];
	uint8_t dst[4];
} DROCE_PACKED;
static_assert(sizeof(struct droce_ipv4_hdr) == 20, "IPv4 header is 20 bytes");

struct droce_ipv6_hdr {
	uint32_t vtc_flow; /**< version(4) traffic class(8) flow label(20) */
	uint16_t payload_len;
	uint8_t next_hdr;
	uint8_t hop_limit;
	uint8_t src[16];
	uint8_t dst[16];
} DROCE_PACKED;
static_assert(sizeof(struct droce_ipv6_hdr) == 40, "IPv6 header is 40 bytes");

struct droce_udp_hdr {
	uint16_t sport;
	uint16_t dport;
	uint16_t len;
	uint16_t csum;
} DROCE_PACKED;
static_assert(sizeof(struct droce_udp_hdr) == 8, "UDP header is 8 bytes");

/* ------------------------------------------------ InfiniBand transport */

/** Base Transport Header, IBTA 9.2. */
struct droce_bth {
	uint8_t opcode;
	uint8_t flags; /**< SE(1) MigReq(1) PadCnt(2) TVer(4) */
	uint16_t pkey;
	uint32_t qpn;  /**< FECN(1) BECN(1) resv6 | DestQP(24) */
	uint32_t apsn; /**< AckReq(1) resv7 | PSN(24) */
} DROCE_PACKED;
static_assert(sizeof(struct droce_bth) == 12, "BTH is 12 bytes");

#define DROCE_BTH_SE        0x80
#define DROCE_BTH_MIG       0x40
#define DROCE_BTH_PAD_MASK  0x30
#define DROCE_BTH_PAD_SHIFT 4
#define DROCE_BTH_TVER_MASK 0x0f
#define DROCE_BTH_FECN      0x80000000u
#define DROCE_BTH_BECN      0x40000000u
#define DROCE_BTH_QPN_MASK  0x00ffffffu
#define DROCE_BTH_ACKREQ    0x80000000u
#define DROCE_BTH_PSN_MASK  0x00ffffffu
/** The only transport header version defined (IBTA 9.2); others are dropped. */
#define DROCE_BTH_TVER     0
#define DROCE_PKEY_DEFAULT 0xffff
#define DROCE_QPN_MASK     0x00ffffffu
#define DROCE_PSN_MASK     0x00ffffffu

/** RDMA Extended Transport Header, IBTA 9.3.3. */
struct droce_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
} DROCE_PACKED;
static_assert(sizeof(struct droce_reth) == 16, "RETH is 16 bytes");

/** ACK Extended Transport Header, IBTA 9.3.5. */
struct droce_aeth {
	uint32_t smsn; /**< Syndrome(8) | MSN(24) */
} DROCE_PACKED;
static_assert(sizeof(struct droce_aeth) == 4, "AETH is 4 bytes");

#define DROCE_AETH_MSN_MASK 0x00ffffffu

/** Atomic Extended Transport Header, IBTA 9.3.4. */
struct droce_atmeth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap_add;
	uint64_t compare;
} DROCE_PACKED;
static_assert(sizeof(struct droce_atmeth) == 28, "AtomicETH is 28 bytes");

/** Atomic Acknowledge Extended Transport Header, IBTA 9.3.6. */
struct droce_atmack {
	uint64_t orig;
} DROCE_PACKED;
static_assert(sizeof(struct droce_atmack) == 8, "AtomicAckETH is 8 bytes");

/** Datagram Extended Transport Header, IBTA 9.3.2. */
struct droce_deth {
	uint32_t qkey;
	uint32_t sqpn; /**< resv8 | SrcQP(24) */
} DROCE_PACKED;
static_assert(sizeof(struct droce_deth) == 8, "DETH is 8 bytes");

/** Q_Keys with the high bit set are privileged (the Q_Key rules of IBTA chapter 10). */
#define DROCE_QKEY_PRIVILEGED 0x80000000u

/** Immediate Data Extended Transport Header, IBTA 9.3.7. */
struct droce_immdt {
	uint32_t imm; /**< opaque: carried to the completion as is */
} DROCE_PACKED;
static_assert(sizeof(struct droce_immdt) == 4, "ImmDt is 4 bytes");

/** Invalidate Extended Transport Header, IBTA 9.3.8. */
struct droce_ieth {
	uint32_t rkey;
} DROCE_PACKED;
static_assert(sizeof(struct droce_ieth) == 4, "IETH is 4 bytes");

/** RoCEv2 Congestion Notification Packet body after the BTH (annex A17). */
struct droce_cnp {
	uint8_t rsvd[16];
} DROCE_PACKED;
static_assert(sizeof(struct droce_cnp) == 16, "CNP body is 16 bytes");

/** Invariant CRC trailer, IBTA 7.8.1, stored little-endian on the wire. */
#define DROCE_ICRC_LEN 4

/**
 * Bytes a RoCEv2 packet adds to its payload inside the Ethernet MTU, at most:
 * an IPv6 header (40), UDP (8), BTH (12), the longest extended headers a
 * payload travels with (RETH and ImmDt of RDMA WRITE Only with Immediate, 20)
 * and the ICRC (4). Packets without payload are shorter (atomics: 28 bytes of
 * AtomicETH). The path MTU an Ethernet MTU carries leaves this room.
 */
#define DROCE_ROCE_OVERHEAD_MAX (40 + 8 + 12 + 20 + DROCE_ICRC_LEN)

/* ------------------------------------------------------------ accessors */

/* Ethernet / VLAN / IP / UDP */
static inline uint16_t droce_eth_type(const struct droce_eth_hdr *h)
{
	return be16toh(h->type);
}
static inline void droce_eth_set_type(struct droce_eth_hdr *h, uint16_t t)
{
	h->type = htobe16(t);
}

static inline uint16_t droce_vlan_tci(const struct droce_vlan_hdr *h)
{
	return be16toh(h->tci);
}
static inline void droce_vlan_set_tci(struct droce_vlan_hdr *h, uint16_t tci)
{
	h->tci = htobe16(tci);
}
static inline uint16_t droce_vlan_type(const struct droce_vlan_hdr *h)
{
	return be16toh(h->type);
}
static inline void droce_vlan_set_type(struct droce_vlan_hdr *h, uint16_t t)
{
	h->type = htobe16(t);
}

static inline uint8_t droce_ipv4_version(const struct droce_ipv4_hdr *h)
{
	return h->version_ihl >> 4;
}
/** Header length in bytes (IHL counts 32-bit words). */
static inline uint8_t droce_ipv4_hdr_len(const struct droce_ipv4_hdr *h)
{
	return (uint8_t)((h->version_ihl & 0x0f) * 4);
}
static inline uint16_t droce_ipv4_total_len(const struct droce_ipv4_hdr *h)
{
	return be16toh(h->total_len);
}
static inline uint16_t droce_ipv4_id(const struct droce_ipv4_hdr *h)
{
	return be16toh(h->id);
}
static inline uint16_t droce_ipv4_frag_off(const struct droce_ipv4_hdr *h)
{
	return be16toh(h->frag_off);
}
static inline bool droce_ipv4_is_fragment(const struct droce_ipv4_hdr *h)
{
	return (droce_ipv4_frag_off(h) & (DROCE_IPV4_MF | DROCE_IPV4_FRAG_OFF_MASK)) != 0;
}

static inline uint8_t droce_ipv6_version(const struct droce_ipv6_hdr *h)
{
	return be32toh(h->vtc_flow) >> 28;
}
static inline uint8_t droce_ipv6_tclass(const struct droce_ipv6_hdr *h)
{
	return (uint8_t)(be32toh(h->vtc_flow) >> 20);
}
static inline uint32_t droce_ipv6_flow_label(const struct droce_ipv6_hdr *h)
{
	return be32toh(h->vtc_flow) & 0xfffff;
}
static inline void droce_ipv6_set_vtc_flow(struct droce_ipv6_hdr *h, uint8_t tclass, uint32_t flow)
{
	h->vtc_flow = htobe32(6u << 28 | (uint32_t)tclass << 20 | (flow & 0xfffff));
}
static inline uint16_t droce_ipv6_payload_len(const struct droce_ipv6_hdr *h)
{
	return be16toh(h->payload_len);
}

static inline uint16_t droce_udp_sport(const struct droce_udp_hdr *h)
{
	return be16toh(h->sport);
}
static inline uint16_t droce_udp_dport(const struct droce_udp_hdr *h)
{
	return be16toh(h->dport);
}
static inline uint16_t droce_udp_len(const struct droce_udp_hdr *h)
{
	return be16toh(h->len);
}

/* BTH */
static inline uint8_t droce_bth_opcode(const struct droce_bth *b)
{
	return b->opcode;
}
static inline void droce_bth_set_opcode(struct droce_bth *b, uint8_t op)
{
	b->opcode = op;
}

static inline bool droce_bth_se(const struct droce_bth *b)
{
	return b->flags & DROCE_BTH_SE;
}
static inline void droce_bth_set_se(struct droce_bth *b, bool se)
{
	b->flags = (uint8_t)((b->flags & ~DROCE_BTH_SE) | (se ? DROCE_BTH_SE : 0));
}
static inline bool droce_bth_mig(const struct droce_bth *b)
{
	return b->flags & DROCE_BTH_MIG;
}
static inline void droce_bth_set_mig(struct droce_bth *b, bool mig)
{
	b->flags = (uint8_t)((b->flags & ~DROCE_BTH_MIG) | (mig ? DROCE_BTH_MIG : 0));
}
static inline uint8_t droce_bth_pad(const struct droce_bth *b)
{
	return (b->flags & DROCE_BTH_PAD_MASK) >> DROCE_BTH_PAD_SHIFT;
}
static inline void droce_bth_set_pad(struct droce_bth *b, uint8_t pad)
{
	b->flags = (uint8_t)((b->flags & ~DROCE_BTH_PAD_MASK) |
			     ((pad << DROCE_BTH_PAD_SHIFT) & DROCE_BTH_PAD_MASK));
}
static inline uint8_t droce_bth_tver(const struct droce_bth *b)
{
	return b->flags & DROCE_BTH_TVER_MASK;
}
static inline void droce_bth_set_tver(struct droce_bth *b, uint8_t tver)
{
	b->flags = (uint8_t)((b->flags & ~DROCE_BTH_TVER_MASK) | (tver & DROCE_BTH_TVER_MASK));
}
static inline uint16_t droce_bth_pkey(const struct droce_bth *b)
{
	return be16toh(b->pkey);
}
static inline void droce_bth_set_pkey(struct droce_bth *b, uint16_t pkey)
{
	b->pkey = htobe16(pkey);
}

static inline bool droce_bth_fecn(const struct droce_bth *b)
{
	return be32toh(b->qpn) & DROCE_BTH_FECN;
}
static inline void droce_bth_set_fecn(struct droce_bth *b, bool on)
{
	uint32_t v = be32toh(b->qpn);
	b->qpn = htobe32(on ? v | DROCE_BTH_FECN : v & ~DROCE_BTH_FECN);
}
static inline bool droce_bth_becn(const struct droce_bth *b)
{
	return be32toh(b->qpn) & DROCE_BTH_BECN;
}
static inline void droce_bth_set_becn(struct droce_bth *b, bool on)
{
	uint32_t v = be32toh(b->qpn);
	b->qpn = htobe32(on ? v | DROCE_BTH_BECN : v & ~DROCE_BTH_BECN);
}
static inline uint32_t droce_bth_qpn(const struct droce_bth *b)
{
	return be32toh(b->qpn) & DROCE_BTH_QPN_MASK;
}
static inline void droce_bth_set_qpn(struct droce_bth *b, uint32_t qpn)
{
	b->qpn = htobe32((be32toh(b->qpn) & ~DROCE_BTH_QPN_MASK) | (qpn & DROCE_BTH_QPN_MASK));
}
static inline bool droce_bth_ackreq(const struct droce_bth *b)
{
	return be32toh(b->apsn) & DROCE_BTH_ACKREQ;
}
static inline void droce_bth_set_ackreq(struct droce_bth *b, bool on)
{
	uint32_t v = be32toh(b->apsn);
	b->apsn = htobe32(on ? v | DROCE_BTH_ACKREQ : v & ~DROCE_BTH_ACKREQ);
}
static inline uint32_t droce_bth_psn(const struct droce_bth *b)
{
	return be32toh(b->apsn) & DROCE_BTH_PSN_MASK;
}
static inline void droce_bth_set_psn(struct droce_bth *b, uint32_t psn)
{
	b->apsn = htobe32((be32toh(b->apsn) & ~DROCE_BTH_PSN_MASK) | (psn & DROCE_BTH_PSN_MASK));
}

/* RETH */
static inline uint64_t droce_reth_va(const struct droce_reth *r)
{
	return be64toh(r->va);
}
static inline void droce_reth_set_va(struct droce_reth *r, uint64_t va)
{
	r->va = htobe64(va);
}
static inline uint32_t droce_reth_rkey(const struct droce_reth *r)
{
	return be32toh(r->rkey);
}
static inline void droce_reth_set_rkey(struct droce_reth *r, uint32_t rkey)
{
	r->rkey = htobe32(rkey);
}
static inline uint32_t droce_reth_len(const struct droce_reth *r)
{
	return be32toh(r->len);
}
static inline void droce_reth_set_len(struct droce_reth *r, uint32_t len)
{
	r->len = htobe32(len);
}

/* AETH */
static inline uint8_t droce_aeth_syndrome(const struct droce_aeth *a)
{
	return be32toh(a->smsn) >> 24;
}
static inline void droce_aeth_set_syndrome(struct droce_aeth *a, uint8_t syn)
{
	a->smsn = htobe32((be32toh(a->smsn) & DROCE_AETH_MSN_MASK) | (uint32_t)syn << 24);
}
static inline uint32_t droce_aeth_msn(const struct droce_aeth *a)
{
	return be32toh(a->smsn) & DROCE_AETH_MSN_MASK;
}
static inline void droce_aeth_set_msn(struct droce_aeth *a, uint32_t msn)
{
	a->smsn = htobe32((be32toh(a->smsn) & ~DROCE_AETH_MSN_MASK) | (msn & DROCE_AETH_MSN_MASK));
}

/* AtomicETH */
static inline uint64_t droce_atmeth_va(const struct droce_atmeth *a)
{
	return be64toh(a->va);
}
static inline void droce_atmeth_set_va(struct droce_atmeth *a, uint64_t va)
{
	a->va = htobe64(va);
}
static inline uint32_t droce_atmeth_rkey(const struct droce_atmeth *a)
{
	return be32toh(a->rkey);
}
static inline void droce_atmeth_set_rkey(struct droce_atmeth *a, uint32_t rkey)
{
	a->rkey = htobe32(rkey);
}
static inline uint64_t droce_atmeth_swap_add(const struct droce_atmeth *a)
{
	return be64toh(a->swap_add);
}
static inline void droce_atmeth_set_swap_add(struct droce_atmeth *a, uint64_t v)
{
	a->swap_add = htobe64(v);
}
static inline uint64_t droce_atmeth_compare(const struct droce_atmeth *a)
{
	return be64toh(a->compare);
}
static inline void droce_atmeth_set_compare(struct droce_atmeth *a, uint64_t v)
{
	a->compare = htobe64(v);
}

/* AtomicAckETH */
static inline uint64_t droce_atmack_orig(const struct droce_atmack *a)
{
	return be64toh(a->orig);
}
static inline void droce_atmack_set_orig(struct droce_atmack *a, uint64_t v)
{
	a->orig = htobe64(v);
}

/* DETH */
static inline uint32_t droce_deth_qkey(const struct droce_deth *d)
{
	return be32toh(d->qkey);
}
static inline void droce_deth_set_qkey(struct droce_deth *d, uint32_t qkey)
{
	d->qkey = htobe32(qkey);
}
static inline uint32_t droce_deth_sqpn(const struct droce_deth *d)
{
	return be32toh(d->sqpn) & DROCE_QPN_MASK;
}
static inline void droce_deth_set_sqpn(struct droce_deth *d, uint32_t sqpn)
{
	d->sqpn = htobe32((be32toh(d->sqpn) & ~DROCE_QPN_MASK) | (sqpn & DROCE_QPN_MASK));
}

/*
 * ImmDt is opaque to the transport: it is carried as the big-endian word it
 * is on the wire (libibverbs' imm_data is __be32 too), so no conversion.
 */
static inline uint32_t droce_immdt_imm(const struct droce_immdt *i)
{
	return i->imm;
}
static inline void droce_immdt_set_imm(struct droce_immdt *i, uint32_t be_imm)
{
	i->imm = be_imm;
}

/* IETH */
static inline uint32_t droce_ieth_rkey(const struct droce_ieth *i)
{
	return be32toh(i->rkey);
}
static inline void droce_ieth_set_rkey(struct droce_ieth *i, uint32_t rkey)
{
	i->rkey = htobe32(rkey);
}

/* ------------------------------------------------------- addresses */

/** Modified EUI-64 of a MAC (RFC 4291 appendix A): node GUIDs, link-local addresses. */
static inline void droce_eui64_from_mac(const uint8_t mac[DROCE_ETHER_ADDR_LEN], uint8_t eui[8])
{
	eui[0] = mac[0] ^ 0x02; /* the universal/local bit inverted */
	eui[1] = mac[1];
	eui[2] = mac[2];
	eui[3] = 0xff;
	eui[4] = 0xfe;
	eui[5] = mac[3];
	eui[6] = mac[4];
	eui[7] = mac[5];
}

/** The IPv6 link-local address of a MAC (fe80::/64 + EUI-64): a RoCE port's GID 0. */
static inline void droce_ipv6_link_local(const uint8_t mac[DROCE_ETHER_ADDR_LEN], uint8_t ip[16])
{
	memset(ip, 0, 16);
	ip[0] = 0xfe;
	ip[1] = 0x80;
	droce_eui64_from_mac(mac, ip + 8);
}

/** An IPv4 address as IPv4-mapped IPv6 (::ffff:a.b.c.d), the form RoCEv2 GIDs carry. */
static inline void droce_ipv4_mapped(const uint8_t ipv4[4], uint8_t ip[16])
{
	memset(ip, 0, 10);
	ip[10] = 0xff;
	ip[11] = 0xff;
	memcpy(ip + 12, ipv4, 4);
}

/* ------------------------------------------------------- AETH syndromes */

/** AETH syndrome classes (bits 6:5 of the syndrome), IBTA 9.3.5. */
enum droce_aeth_type {
	DROCE_AETH_ACK = 0x00,
	DROCE_AETH_RNR_NAK = 0x20,
	DROCE_AETH_RESERVED = 0x40,
	DROCE_AETH_NAK = 0x60,
};
#define DROCE_AETH_TYPE_MASK  0x60
#define DROCE_AETH_VALUE_MASK 0x1f

/** NAK codes (syndrome bits 4:0 when the class is NAK), IBTA 9.3.5. */
enum droce_nak_code {
	DROCE_NAK_PSN_SEQ_ERR = 0,
	DROCE_NAK_INVALID_REQ = 1,
	DROCE_NAK_REM_ACCESS_ERR = 2,
	DROCE_NAK_REM_OP_ERR = 3,
	DROCE_NAK_INVALID_RD_REQ = 4,
};

/** Credit count 0x1f: the responder advertises no end-to-end credits (IBTA 9.7). */
#define DROCE_AETH_CREDIT_INVALID 0x1f

static inline uint8_t droce_aeth_syndrome_make(enum droce_aeth_type type, uint8_t value)
{
	return (uint8_t)(type | (value & DROCE_AETH_VALUE_MASK));
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_HDR_H */
