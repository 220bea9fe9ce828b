/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Management datagrams (MADs) of the Communication Manager, byte for byte: the MAD common
 * header (IBTA Vol. 1 13.4.2), the CM messages of chapter 12 (REQ, MRA, REJ, REP, RTU, DREQ,
 * DREP, LAP, APR, SIDR_REQ, SIDR_REP), the GSI framing of a MAD over RoCEv2 (a UD SEND Only to
 * QP1), and the rdma_cm conventions carried in them (service IDs of the IP port spaces and the
 * private-data header ahead of the user's private data).
 *
 * A MAD is 256 bytes: the 24-byte common header, then 232 bytes of class data. Every CM field is
 * described once in droce_cm_field_table (which message, byte offset in the class data, the
 * big-endian unit read, shift and width, or a byte string), and read and written only through
 * droce_cm_get() / droce_cm_set() / droce_cm_bytes(), which convert byte order and apply the
 * masks; no bitfields. Reserved bits are fields too (DROCE_CM_*_RSVD*): every bit of each
 * message belongs to exactly one field, so a message decoded field by field is rebuilt byte for
 * byte.
 *
 * Error convention: droce_mad_parse() and droce_gsi_parse() return a droce_mad_status (a
 * malformed MAD is dropped and counted by reason); the other functions return 0 (or a length)
 * or -errno.
 */
#ifndef DROCE_WIRE_MAD_H
#define DROCE_WIRE_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "droce_wire_hdr.h"
#include "droce_wire_pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ MAD common header (13.4.2) */

/** Every MAD is 256 bytes (13.4.2); the GSI carries exactly one per packet. */
#define DROCE_MAD_LEN      256
#define DROCE_MAD_HDR_LEN  24
#define DROCE_MAD_DATA_LEN (DROCE_MAD_LEN - DROCE_MAD_HDR_LEN)

/** The base version every MAD of this specification carries (13.4.2). */
#define DROCE_MAD_BASE_VERSION 1
/** Management class of the Communication Manager (chapter 13's class table). */
#define DROCE_MAD_CLASS_CM 0x07
/** Class version of the CM messages of chapter 12 (12.6). */
#define DROCE_MAD_CM_CLASS_VERSION 2

/** Methods (13.4.2's Method field); the CM messages of 12.6 are all Send. */
#define DROCE_MAD_METHOD_GET      0x01
#define DROCE_MAD_METHOD_SET      0x02
#define DROCE_MAD_METHOD_SEND     0x03
#define DROCE_MAD_METHOD_GET_RESP 0x81
/** The R bit of the method byte: set in responses (13.4.2). */
#define DROCE_MAD_METHOD_RESP 0x80
#define DROCE_MAD_METHOD_MASK 0x7f

/** MAD common header, 13.4.2. */
struct droce_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method; /**< R(1) Method(7) */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint16_t resv;
	uint32_t attr_mod;
} DROCE_PACKED;
static_assert(sizeof(struct droce_mad_hdr) == DROCE_MAD_HDR_LEN, "MAD header is 24 bytes");

/** The header's values in host order. */
struct droce_mad_fields {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method; /**< the whole byte: R bit and method */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint16_t resv;
	uint32_t attr_mod;
};

/** Read every header field of @p mad (at least DROCE_MAD_HDR_LEN bytes). */
void droce_mad_hdr_get(const void *mad, struct droce_mad_fields *f);
/** Write every header field of @p mad (at least DROCE_MAD_HDR_LEN bytes). */
void droce_mad_hdr_set(void *mad, const struct droce_mad_fields *f);

/** A CM MAD header for message @p attr_id: base/class versions, Send, status 0 (12.6). */
void droce_mad_cm_fields(struct droce_mad_fields *f, uint16_t attr_id, uint64_t tid);

/* ------------------------------------------------------------ CM messages (12.6, 12.11) */

/** Attribute IDs of the CM class (12.6: one per message). */
#define DROCE_CM_ATTR_CLASS_PORT_INFO 0x0001
#define DROCE_CM_ATTR_REQ             0x0010
#define DROCE_CM_ATTR_MRA             0x0011
#define DROCE_CM_ATTR_REJ             0x0012
#define DROCE_CM_ATTR_REP             0x0013
#define DROCE_CM_ATTR_RTU             0x0014
#define DROCE_CM_ATTR_DREQ            0x0015
#define DROCE_CM_ATTR_DREP            0x0016
#define DROCE_CM_ATTR_SIDR_REQ        0x0017
#define DROCE_CM_ATTR_SIDR_REP        0x0018
#define DROCE_CM_ATTR_LAP             0x0019
#define DROCE_CM_ATTR_APR             0x001a

/** The CM messages droce knows, in attribute ID order. */
enum droce_cm_msg {
	DROCE_CM_REQ,
	DROCE_CM_MRA,
	DROCE_CM_REJ,
	DROCE_CM_REP,
	DROCE_CM_RTU,
	DROCE_CM_DREQ,
	DROCE_CM_DREP,
	DROCE_CM_SIDR_REQ,
	DROCE_CM_SIDR_REP,
	DROCE_CM_LAP,
	DROCE_CM_APR,
	DROCE_CM_MSG_COUNT,
};

/**
 * Every field of every CM message, in wire order within each message. Offsets, units and widths
 * are in droce_cm_field_table; the comment at each group names the clause.
 */
enum droce_cm_field {
	/* REQ, 12.6.5 (table 106) */
	DROCE_CM_REQ_LOCAL_COMM_ID,
	DROCE_CM_REQ_RSVD4,
	DROCE_CM_REQ_SERVICE_ID,
	DROCE_CM_REQ_LOCAL_CA_GUID,
	DROCE_CM_REQ_RSVD24,
	DROCE_CM_REQ_LOCAL_QKEY,
	DROCE_CM_REQ_LOCAL_QPN,
	DROCE_CM_REQ_RESPONDER_RESOURCES,
	DROCE_CM_REQ_LOCAL_EECN,
	DROCE_CM_REQ_INITIATOR_DEPTH,
	DROCE_CM_REQ_REMOTE_EECN,
	DROCE_CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT,
	DROCE_CM_REQ_TRANSPORT_SERVICE_TYPE,
	DROCE_CM_REQ_END_TO_END_FLOW_CONTROL,
	DROCE_CM_REQ_STARTING_PSN,
	DROCE_CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT,
	DROCE_CM_REQ_RETRY_COUNT,
	DROCE_CM_REQ_PARTITION_KEY,
	DROCE_CM_REQ_PATH_MTU,
	DROCE_CM_REQ_RDC_EXISTS,
	DROCE_CM_REQ_RNR_RETRY_COUNT,
	DROCE_CM_REQ_MAX_CM_RETRIES,
	DROCE_CM_REQ_SRQ,
	DROCE_CM_REQ_EXTENDED_TRANSPORT_TYPE,
	DROCE_CM_REQ_PRIMARY_LOCAL_LID,
	DROCE_CM_REQ_PRIMARY_REMOTE_LID,
	DROCE_CM_REQ_PRIMARY_LOCAL_GID,
	DROCE_CM_REQ_PRIMARY_REMOTE_GID,
	DROCE_CM_REQ_PRIMARY_FLOW_LABEL,
	DROCE_CM_REQ_PRIMARY_RSVD90,
	DROCE_CM_REQ_PRIMARY_PACKET_RATE,
	DROCE_CM_REQ_PRIMARY_TRAFFIC_CLASS,
	DROCE_CM_REQ_PRIMARY_HOP_LIMIT,
	DROCE_CM_REQ_PRIMARY_SL,
	DROCE_CM_REQ_PRIMARY_SUBNET_LOCAL,
	DROCE_CM_REQ_PRIMARY_RSVD94,
	DROCE_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT,
	DROCE_CM_REQ_PRIMARY_RSVD95,
	DROCE_CM_REQ_ALTERNATE_LOCAL_LID,
	DROCE_CM_REQ_ALTERNATE_REMOTE_LID,
	DROCE_CM_REQ_ALTERNATE_LOCAL_GID,
	DROCE_CM_REQ_ALTERNATE_REMOTE_GID,
	DROCE_CM_REQ_ALTERNATE_FLOW_LABEL,
	DROCE_CM_REQ_ALTERNATE_RSVD134,
	DROCE_CM_REQ_ALTERNATE_PACKET_RATE,
	DROCE_CM_REQ_ALTERNATE_TRAFFIC_CLASS,
	DROCE_CM_REQ_ALTERNATE_HOP_LIMIT,
	DROCE_CM_REQ_ALTERNATE_SL,
	DROCE_CM_REQ_ALTERNATE_SUBNET_LOCAL,
	DROCE_CM_REQ_ALTERNATE_RSVD138,
	DROCE_CM_REQ_ALTERNATE_LOCAL_ACK_TIMEOUT,
	DROCE_CM_REQ_ALTERNATE_RSVD139,
	DROCE_CM_REQ_PRIVATE_DATA,
	/* MRA, 12.6.6 (table 107) */
	DROCE_CM_MRA_LOCAL_COMM_ID,
	DROCE_CM_MRA_REMOTE_COMM_ID,
	DROCE_CM_MRA_MESSAGE_MRAED,
	DROCE_CM_MRA_RSVD8,
	DROCE_CM_MRA_SERVICE_TIMEOUT,
	DROCE_CM_MRA_RSVD9,
	DROCE_CM_MRA_PRIVATE_DATA,
	/* REJ, 12.6.7 (table 108) */
	DROCE_CM_REJ_LOCAL_COMM_ID,
	DROCE_CM_REJ_REMOTE_COMM_ID,
	DROCE_CM_REJ_MESSAGE_REJECTED,
	DROCE_CM_REJ_RSVD8,
	DROCE_CM_REJ_REJECTED_INFO_LENGTH,
	DROCE_CM_REJ_RSVD9,
	DROCE_CM_REJ_REASON,
	DROCE_CM_REJ_ARI,
	DROCE_CM_REJ_PRIVATE_DATA,
	/* REP, 12.6.8 (table 110) */
	DROCE_CM_REP_LOCAL_COMM_ID,
	DROCE_CM_REP_REMOTE_COMM_ID,
	DROCE_CM_REP_LOCAL_QKEY,
	DROCE_CM_REP_LOCAL_QPN,
	DROCE_CM_REP_RSVD15,
	DROCE_CM_REP_LOCAL_EECN,
	DROCE_CM_REP_RSVD19,
	DROCE_CM_REP_STARTING_PSN,
	DROCE_CM_REP_RSVD23,
	DROCE_CM_REP_RESPONDER_RESOURCES,
	DROCE_CM_REP_INITIATOR_DEPTH,
	DROCE_CM_REP_TARGET_ACK_DELAY,
	DROCE_CM_REP_FAILOVER_ACCEPTED,
	DROCE_CM_REP_END_TO_END_FLOW_CONTROL,
	DROCE_CM_REP_RNR_RETRY_COUNT,
	DROCE_CM_REP_SRQ,
	DROCE_CM_REP_RSVD27,
	DROCE_CM_REP_LOCAL_CA_GUID,
	DROCE_CM_REP_PRIVATE_DATA,
	/* RTU, 12.6.9 (table 111) */
	DROCE_CM_RTU_LOCAL_COMM_ID,
	DROCE_CM_RTU_REMOTE_COMM_ID,
	DROCE_CM_RTU_PRIVATE_DATA,
	/* DREQ, 12.6.10 (table 112) */
	DROCE_CM_DREQ_LOCAL_COMM_ID,
	DROCE_CM_DREQ_REMOTE_COMM_ID,
	DROCE_CM_DREQ_REMOTE_QPN_EECN,
	DROCE_CM_DREQ_RSVD11,
	DROCE_CM_DREQ_PRIVATE_DATA,
	/* DREP, 12.6.11 (table 113) */
	DROCE_CM_DREP_LOCAL_COMM_ID,
	DROCE_CM_DREP_REMOTE_COMM_ID,
	DROCE_CM_DREP_PRIVATE_DATA,
	/* SIDR_REQ, 12.11 (table 119) */
	DROCE_CM_SIDR_REQ_REQUEST_ID,
	DROCE_CM_SIDR_REQ_PARTITION_KEY,
	DROCE_CM_SIDR_REQ_RSVD6,
	DROCE_CM_SIDR_REQ_SERVICE_ID,
	DROCE_CM_SIDR_REQ_PRIVATE_DATA,
	/* SIDR_REP, 12.11 (table 120) */
	DROCE_CM_SIDR_REP_REQUEST_ID,
	DROCE_CM_SIDR_REP_STATUS,
	DROCE_CM_SIDR_REP_ADDITIONAL_INFO_LENGTH,
	DROCE_CM_SIDR_REP_RSVD6,
	DROCE_CM_SIDR_REP_QPN,
	DROCE_CM_SIDR_REP_RSVD11,
	DROCE_CM_SIDR_REP_SERVICE_ID,
	DROCE_CM_SIDR_REP_QKEY,
	DROCE_CM_SIDR_REP_CLASS_PORT_INFO,
	DROCE_CM_SIDR_REP_PRIVATE_DATA,
	/* LAP, 12.6.12 (table 115) */
	DROCE_CM_LAP_LOCAL_COMM_ID,
	DROCE_CM_LAP_REMOTE_COMM_ID,
	DROCE_CM_LAP_RSVD8,
	DROCE_CM_LAP_REMOTE_QPN_EECN,
	DROCE_CM_LAP_REMOTE_CM_RESPONSE_TIMEOUT,
	DROCE_CM_LAP_RSVD15,
	DROCE_CM_LAP_RSVD16,
	DROCE_CM_LAP_ALTERNATE_LOCAL_LID,
	DROCE_CM_LAP_ALTERNATE_REMOTE_LID,
	DROCE_CM_LAP_ALTERNATE_LOCAL_GID,
	DROCE_CM_LAP_ALTERNATE_REMOTE_GID,
	DROCE_CM_LAP_ALTERNATE_FLOW_LABEL,
	DROCE_CM_LAP_RSVD58,
	DROCE_CM_LAP_ALTERNATE_TRAFFIC_CLASS,
	DROCE_CM_LAP_ALTERNATE_HOP_LIMIT,
	DROCE_CM_LAP_RSVD61,
	DROCE_CM_LAP_ALTERNATE_PACKET_RATE,
	DROCE_CM_LAP_ALTERNATE_SL,
	DROCE_CM_LAP_ALTERNATE_SUBNET_LOCAL,
	DROCE_CM_LAP_RSVD62,
	DROCE_CM_LAP_ALTERNATE_LOCAL_ACK_TIMEOUT,
	DROCE_CM_LAP_RSVD63,
	DROCE_CM_LAP_PRIVATE_DATA,
	/* APR, 12.6.13 (table 116) */
	DROCE_CM_APR_LOCAL_COMM_ID,
	DROCE_CM_APR_REMOTE_COMM_ID,
	DROCE_CM_APR_ADDITIONAL_INFO_LENGTH,
	DROCE_CM_APR_AP_STATUS,
	DROCE_CM_APR_RSVD10,
	DROCE_CM_APR_ADDITIONAL_INFO,
	DROCE_CM_APR_PRIVATE_DATA,
	DROCE_CM_FIELD_COUNT,
};

/** Where a field lives in the class data (the 232 bytes after the MAD header). */
struct droce_cm_field_info {
	const char *name; /**< lower case, as droce-pcap prints it; reserved fields "rsvd<byte>" */
	uint8_t msg;      /**< enum droce_cm_msg */
	uint8_t offset;   /**< first byte of the unit, from the start of the class data */
	uint8_t size;     /**< bytes of the big-endian unit (1, 2, 4, 8), or of the byte string */
	uint8_t shift;    /**< bit position of the field's least significant bit in the unit */
	uint8_t bits;     /**< width in bits; 0 for a byte string (GIDs, ARI, private data) */
	bool reserved;    /**< sent as zero, ignored on receipt */
};

extern const struct droce_cm_field_info droce_cm_field_table[DROCE_CM_FIELD_COUNT];

/** One CM message: its attribute, clause, fields and private data. */
struct droce_cm_msg_info {
	const char *name; /**< "REQ", "SIDR_REP" ... */
	const char *clause;
	uint16_t attr_id;
	uint16_t first_field; /**< enum droce_cm_field: [first_field, first_field + nfields) */
	uint16_t nfields;
	uint8_t private_off; /**< private data: offset in the class data */
	uint8_t private_len; /**< and its fixed length on the wire */
};

extern const struct droce_cm_msg_info droce_cm_msg_table[DROCE_CM_MSG_COUNT];

/** The message with attribute @p attr_id, or -ENOENT. */
int droce_cm_msg_from_attr(uint16_t attr_id);

/**
 * Value of numeric field @p f of the CM MAD @p mad (DROCE_MAD_LEN bytes).
 * A byte-string field reads as 0: use droce_cm_bytes().
 */
uint64_t droce_cm_get(const void *mad, enum droce_cm_field f);

/**
 * Write numeric field @p f of @p mad, leaving every other bit as it is. Returns 0, -ERANGE if
 * @p v does not fit the field's width, -EINVAL for a byte-string field.
 */
int droce_cm_set(void *mad, enum droce_cm_field f, uint64_t v);

/** First byte of field @p f of @p mad (numeric or not); its length is the table's size. */
static inline const uint8_t *droce_cm_bytes(const void *mad, enum droce_cm_field f)
{
	return (const uint8_t *)mad + DROCE_MAD_HDR_LEN + droce_cm_field_table[f].offset;
}

/**
 * Write the private data of message @p msg in @p mad: @p len bytes, the rest of the field zero
 * (12.6.5 to 12.6.13, 12.11: private data has a fixed length; what the consumer does not fill
 * is zero).
 * Returns 0, or -EMSGSIZE when @p len is longer than the message carries.
 */
int droce_cm_set_private(void *mad, enum droce_cm_msg msg, const void *data, size_t len);

/** REJ reasons, 12.6.7.2. */
enum droce_cm_rej_reason {
	DROCE_CM_REJ_NO_QP = 1,
	DROCE_CM_REJ_NO_EEC = 2,
	DROCE_CM_REJ_NO_RESOURCES = 3,
	DROCE_CM_REJ_TIMEOUT = 4,
	DROCE_CM_REJ_UNSUPPORTED_REQ = 5,
	DROCE_CM_REJ_INVALID_COMM_ID = 6,
	DROCE_CM_REJ_INVALID_COMM_INSTANCE = 7,
	DROCE_CM_REJ_INVALID_SERVICE_ID = 8,
	DROCE_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	DROCE_CM_REJ_STALE_CONN = 10,
	DROCE_CM_REJ_RDC_NOT_EXIST = 11,
	DROCE_CM_REJ_INVALID_GID = 12,
	DROCE_CM_REJ_INVALID_LID = 13,
	DROCE_CM_REJ_INVALID_SL = 14,
	DROCE_CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	DROCE_CM_REJ_INVALID_HOP_LIMIT = 16,
	DROCE_CM_REJ_INVALID_PACKET_RATE = 17,
	DROCE_CM_REJ_INVALID_ALT_GID = 18,
	DROCE_CM_REJ_INVALID_ALT_LID = 19,
	DROCE_CM_REJ_INVALID_ALT_SL = 20,
	DROCE_CM_REJ_INVALID_ALT_TRAFFIC_CLASS = 21,
	DROCE_CM_REJ_INVALID_ALT_HOP_LIMIT = 22,
	DROCE_CM_REJ_INVALID_ALT_PACKET_RATE = 23,
	DROCE_CM_REJ_PORT_CM_REDIRECT = 24,
	DROCE_CM_REJ_PORT_REDIRECT = 25,
	DROCE_CM_REJ_INVALID_MTU = 26,
	DROCE_CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	DROCE_CM_REJ_CONSUMER_DEFINED = 28,
	DROCE_CM_REJ_INVALID_RNR_RETRY = 29,
	DROCE_CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	DROCE_CM_REJ_INVALID_CLASS_VERSION = 31,
	DROCE_CM_REJ_INVALID_FLOW_LABEL = 32,
	DROCE_CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
	DROCE_CM_REJ_REASON_MAX = 33,
};

/** Name of REJ reason @p reason ("no QP available" ...), or NULL when the table has none. */
const char *droce_cm_rej_reason_name(uint16_t reason);

/** The message a REJ or MRA answers: "Message REJected" (12.6.7), "Message MRAed" (12.6.6). */
enum droce_cm_msg_ref {
	DROCE_CM_REF_REQ = 0,
	DROCE_CM_REF_REP = 1,
	DROCE_CM_REF_OTHER = 2, /**< REJ: none in particular; MRA: the LAP */
};

/** Transport service types of REQ (12.6.5): RC, UC, RD. */
enum droce_cm_transport {
	DROCE_CM_TRANSPORT_RC = 0,
	DROCE_CM_TRANSPORT_UC = 1,
	DROCE_CM_TRANSPORT_RD = 2,
};

/** AP status of APR, 12.6.13; droce refuses LAP with UNSUPPORTED. */
enum droce_cm_ap_status {
	DROCE_CM_APR_SUCCESS = 0,
	DROCE_CM_APR_INVALID_COMM_ID = 1,
	DROCE_CM_APR_UNSUPPORTED = 2,
	DROCE_CM_APR_REJECT = 3,
	DROCE_CM_APR_REDIRECT = 4,
	DROCE_CM_APR_IS_CURRENT = 5,
	DROCE_CM_APR_INVALID_QPN_EECN = 6,
	DROCE_CM_APR_INVALID_LID = 7,
	DROCE_CM_APR_INVALID_GID = 8,
	DROCE_CM_APR_INVALID_FLOW_LABEL = 9,
	DROCE_CM_APR_INVALID_TCLASS = 10,
	DROCE_CM_APR_INVALID_HOP_LIMIT = 11,
	DROCE_CM_APR_INVALID_PACKET_RATE = 12,
	DROCE_CM_APR_INVALID_SL = 13,
};

/** Status of SIDR_REP, 12.11. */
enum droce_cm_sidr_status {
	DROCE_CM_SIDR_VALID = 0,
	DROCE_CM_SIDR_UNSUPPORTED = 1, /**< service ID not supported */
	DROCE_CM_SIDR_REJECT = 2,
	DROCE_CM_SIDR_NO_QP = 3,
	DROCE_CM_SIDR_REDIRECT = 4,
	DROCE_CM_SIDR_UNSUPPORTED_VERSION = 5,
};

/** Longest additional information of REJ (ARI), APR and SIDR_REP: 72 bytes (12.6.7). */
#define DROCE_CM_INFO_LEN_MAX 72

/* ------------------------------------------------------------ parsing and building */

/**
 * Why a MAD was refused. Everything but OK, NOT_CM and CLASS_PORT_INFO is malformed: dropped
 * and counted.
 */
enum droce_mad_status {
	DROCE_MAD_OK = 0,
	DROCE_MAD_NOT_CM,            /**< a management class other than CM: not ours */
	DROCE_MAD_CLASS_PORT_INFO,   /**< the CM class's ClassPortInfo Get/Set/GetResp: well
				      *   formed, but class management, not a CM message */
	DROCE_MAD_TRUNC,             /**< shorter than 256 bytes */
	DROCE_MAD_TOO_LONG,          /**< longer than 256 bytes: a GSI packet carries one MAD */
	DROCE_MAD_BAD_BASE_VERSION,  /**< base version other than 1 (13.4.2) */
	DROCE_MAD_BAD_CLASS_VERSION, /**< CM class version other than 2 (12.6) */
	DROCE_MAD_BAD_METHOD,        /**< a CM message not sent with Send (12.6), or ClassPortInfo
				      *   with a method other than Get, Set, GetResp (13.4.8.1) */
	DROCE_MAD_BAD_ATTR,          /**< an attribute ID that names no CM message */
	DROCE_MAD_BAD_INFO_LEN,      /**< ARI / additional information longer than 72 bytes */
	DROCE_MAD_NOT_GSI,           /**< not a UD SEND Only to QP1 (droce_gsi_parse) */
	DROCE_MAD_BAD_QKEY,          /**< to QP1 without the GSI's Q_Key 0x80010000 */
	DROCE_MAD_STATUS_COUNT,
};

/** Counter names of droce_mad_status. */
extern const char *const droce_mad_status_name[DROCE_MAD_STATUS_COUNT];

/**
 * Check @p len bytes at @p mad as one CM MAD: length, base version, class, class version,
 * method, attribute, the lengths its fields announce. Reads nothing unless @p len is 256.
 * On DROCE_MAD_OK, @p msg (may be NULL) is the message; a well-formed ClassPortInfo of the CM
 * class is DROCE_MAD_CLASS_PORT_INFO, with no message.
 */
enum droce_mad_status droce_mad_parse(const void *mad, size_t len, enum droce_cm_msg *msg);

/** A CM message decoded field by field. */
struct droce_cm_decoded {
	struct droce_mad_fields hdr;
	enum droce_cm_msg msg;
	uint64_t value[DROCE_CM_FIELD_COUNT]; /**< numeric fields of msg (others 0) */
	uint8_t bytes[DROCE_MAD_DATA_LEN]; /**< byte strings of msg, each at its offset (rest 0) */
};

/** Parse @p mad (droce_mad_parse()) and decode every field of its message into @p d. */
enum droce_mad_status droce_cm_decode(const void *mad, size_t len, struct droce_cm_decoded *d);

/**
 * Write the 256-byte MAD @p d describes into @p mad: header, every field of d->msg, zero
 * elsewhere. Returns DROCE_MAD_LEN, -ENOSPC if @p cap is short, -EINVAL for an unknown
 * message, -ERANGE for a value wider than its field.
 */
ssize_t droce_cm_encode(void *mad, size_t cap, const struct droce_cm_decoded *d);

/**
 * Start a CM MAD of message @p msg in @p mad: zeroed, then the header of droce_mad_cm_fields()
 * with transaction ID @p tid. Returns 0, -ENOSPC if @p cap is below 256, -EINVAL for an
 * unknown message.
 */
int droce_cm_init(void *mad, size_t cap, enum droce_cm_msg msg, uint64_t tid);

/**
 * Write into @p apr the APR that refuses the LAP of @p lap_len bytes at @p lap: the LAP's
 * transaction ID, its communication IDs swapped, AP status DROCE_CM_APR_UNSUPPORTED, no
 * additional information, no private data (12.6.13; droce loads no alternate path). @p lap
 * is checked with droce_mad_parse() first, so nothing beyond @p lap_len is read. Returns 0,
 * -ENOSPC if @p cap is below 256, -EINVAL when @p lap is malformed (anything
 * droce_mad_parse() refuses) or not a LAP; @p apr is untouched on failure.
 */
int droce_cm_apr_refuse(void *apr, size_t cap, const void *lap, size_t lap_len);

/* ------------------------------------------------------------ GSI over RoCEv2 (chapter 13) */

/** The General Services Interface's queue pair (chapter 13). */
#define DROCE_GSI_QPN 1
/** The well-known Q_Key of QP1 (chapter 13's GSI). */
#define DROCE_GSI_QKEY 0x80010000u

/**
 * Check a parsed RoCEv2 packet as a GSI MAD: UD SEND Only to QP1 with the GSI Q_Key and a
 * 256-byte payload, then droce_mad_parse() on the payload. @p frame holds the whole packet.
 */
enum droce_mad_status droce_gsi_parse(const struct droce_pkt *pkt, const uint8_t *frame,
				      enum droce_cm_msg *msg);

/**
 * Header fields of a GSI packet: UD SEND Only to QP1 from QP1, the GSI Q_Key, P_Key @p pkey,
 * PSN @p psn (the rest zero).
 */
void droce_gsi_fields(struct droce_hdr_fields *f, uint16_t pkey, uint32_t psn);

/* ------------------------------------------------------------ rdma_cm over the CM */

/**
 * Port spaces of rdma_cm IP addressing (annex A11, "RDMA IP CM Service"): the service ID is
 * the prefix 0x0000000001, the protocol byte, the port; Linux names prefix and protocol
 * together the port space (RDMA_PS_TCP 0x0106 ...), and so does droce.
 */
#define DROCE_CMA_PS_TCP          0x0106
#define DROCE_CMA_PS_UDP          0x0111
#define DROCE_CMA_PS_IB           0x013f
#define DROCE_CMA_SID_PREFIX      0x0000000001000000ull
#define DROCE_CMA_SID_PREFIX_MASK 0xffffffffff000000ull

/** Service ID of port @p port in port space @p ps (a DROCE_CMA_PS_*). */
static inline uint64_t droce_cma_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

/** Port space and port of @p sid; -EINVAL when it is not an IP CM service ID. */
int droce_cma_service_id_parse(uint64_t sid, uint16_t *ps, uint16_t *port);

/** Version of the private-data header (annex A11: 0). */
#define DROCE_CMA_VERSION 0x00
#define DROCE_CMA_HDR_LEN 36

/**
 * The rdma_cm private-data header ahead of the user's in REQ and SIDR_REQ (annex A11):
 * version, IP version in the high nibble, source port, then source and destination addresses,
 * IPv6 in 16 bytes, IPv4 in the last 4 of them behind 12 zero bytes.
 */
struct droce_cma_hdr {
	uint8_t version;
	uint8_t ip_version; /**< IP version(4) reserved(4) */
	uint16_t port;
	uint8_t src[16];
	uint8_t dst[16];
} DROCE_PACKED;
static_assert(sizeof(struct droce_cma_hdr) == DROCE_CMA_HDR_LEN, "rdma_cm header is 36 bytes");

#define DROCE_CMA_IP_VERSION_SHIFT 4

/** The header's values; addresses as in struct droce_addr (IPv4 in the first 4 bytes). */
struct droce_cma_fields {
	uint8_t version;
	uint8_t ip_version; /**< 4 or 6 */
	uint8_t resv;       /**< the low nibble of the IP version byte */
	uint16_t port;      /**< the source port */
	uint8_t src[16];
	uint8_t dst[16];
};

/**
 * Decode the header at the start of @p len bytes of private data. Returns 0, -EMSGSIZE when
 * @p len is below 36, -EPROTO for a version other than 0 or an IP version other than 4 or 6,
 * -EINVAL for an IPv4 header whose 12 bytes ahead of the address are not zero.
 */
int droce_cma_hdr_decode(const void *priv, size_t len, struct droce_cma_fields *f);

/**
 * Write the header into @p priv. Returns 0, -ENOSPC when @p cap is below 36, -EINVAL for an IP
 * version other than 4 or 6 or a reserved nibble above 15.
 */
int droce_cma_hdr_encode(void *priv, size_t cap, const struct droce_cma_fields *f);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_MAD_H */
