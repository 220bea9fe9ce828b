/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM messages of IBTA Vol. 1 chapter 12 as tables: where each field lives, and the
 * accessors that read and write a field through its table entry.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "droce_wire_mad.h"

/* A numeric field: @size-byte big-endian unit at @off, @bits wide, lsb at bit @shift. */
#define NUM(msg, id, nm, off, size, shift, bits) \
	[id] = {nm, DROCE_CM_##msg, off, size, shift, bits, false}
/* Reserved bits, numeric the same way. */
#define RSVD(msg, id, off, size, shift, bits) \
	[id] = {"rsvd" #off, DROCE_CM_##msg, off, size, shift, bits, true}
/* Reserved bits inside a unit that starts before them (named after their first byte). */
#define RSVD_IN(msg, id, at, off, size, shift, bits) \
	[id] = {"rsvd" #at, DROCE_CM_##msg, off, size, shift, bits, true}
/* A byte string: GIDs, additional information, private data; reserved runs of bytes. */
#define BYTES(msg, id, nm, off, len)  [id] = {nm, DROCE_CM_##msg, off, len, 0, 0, false}
#define RSVD_BYTES(msg, id, off, len) [id] = {"rsvd" #off, DROCE_CM_##msg, off, len, 0, 0, true}

/* clang-format off */
const struct droce_cm_field_info droce_cm_field_table[DROCE_CM_FIELD_COUNT] = {
	/* REQ, 12.6.5 (table 106) */
	NUM(REQ, DROCE_CM_REQ_LOCAL_COMM_ID, "local_comm_id", 0, 4, 0, 32),
	RSVD_BYTES(REQ, DROCE_CM_REQ_RSVD4, 4, 4),
	NUM(REQ, DROCE_CM_REQ_SERVICE_ID, "service_id", 8, 8, 0, 64),
	NUM(REQ, DROCE_CM_REQ_LOCAL_CA_GUID, "local_ca_guid", 16, 8, 0, 64),
	RSVD_BYTES(REQ, DROCE_CM_REQ_RSVD24, 24, 4),
	NUM(REQ, DROCE_CM_REQ_LOCAL_QKEY, "local_qkey", 28, 4, 0, 32),
	NUM(REQ, DROCE_CM_REQ_LOCAL_QPN, "local_qpn", 32, 4, 8, 24),
	NUM(REQ, DROCE_CM_REQ_RESPONDER_RESOURCES, "responder_resources", 35, 1, 0, 8),
	NUM(REQ, DROCE_CM_REQ_LOCAL_EECN, "local_eecn", 36, 4, 8, 24),
	NUM(REQ, DROCE_CM_REQ_INITIATOR_DEPTH, "initiator_depth", 39, 1, 0, 8),
	NUM(REQ, DROCE_CM_REQ_REMOTE_EECN, "remote_eecn", 40, 4, 8, 24),
	NUM(REQ, DROCE_CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, "remote_cm_response_timeout", 43, 1, 3, 5),
	NUM(REQ, DROCE_CM_REQ_TRANSPORT_SERVICE_TYPE, "transport_service_type", 43, 1, 1, 2),
	NUM(REQ, DROCE_CM_REQ_END_TO_END_FLOW_CONTROL, "end_to_end_flow_control", 43, 1, 0, 1),
	NUM(REQ, DROCE_CM_REQ_STARTING_PSN, "starting_psn", 44, 4, 8, 24),
	NUM(REQ, DROCE_CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, "local_cm_response_timeout", 47, 1, 3, 5),
	NUM(REQ, DROCE_CM_REQ_RETRY_COUNT, "retry_count", 47, 1, 0, 3),
	NUM(REQ, DROCE_CM_REQ_PARTITION_KEY, "partition_key", 48, 2, 0, 16),
	NUM(REQ, DROCE_CM_REQ_PATH_MTU, "path_mtu", 50, 1, 4, 4),
	NUM(REQ, DROCE_CM_REQ_RDC_EXISTS, "rdc_exists", 50, 1, 3, 1),
	NUM(REQ, DROCE_CM_REQ_RNR_RETRY_COUNT, "rnr_retry_count", 50, 1, 0, 3),
	NUM(REQ, DROCE_CM_REQ_MAX_CM_RETRIES, "max_cm_retries", 51, 1, 4, 4),
	NUM(REQ, DROCE_CM_REQ_SRQ, "srq", 51, 1, 3, 1),
	NUM(REQ, DROCE_CM_REQ_EXTENDED_TRANSPORT_TYPE, "extended_transport_type", 51, 1, 0, 3),
	NUM(REQ, DROCE_CM_REQ_PRIMARY_LOCAL_LID, "primary_local_lid", 52, 2, 0, 16),
	NUM(REQ, DROCE_CM_REQ_PRIMARY_REMOTE_LID, "primary_remote_lid", 54, 2, 0, 16),
	BYTES(REQ, DROCE_CM_REQ_PRIMARY_LOCAL_GID, "primary_local_gid", 56, 16),
	BYTES(REQ, DROCE_CM_REQ_PRIMARY_REMOTE_GID, "primary_remote_gid", 72, 16),
	NUM(REQ, DROCE_CM_REQ_PRIMARY_FLOW_LABEL, "primary_flow_label", 88, 4, 12, 20),
	RSVD_IN(REQ, DROCE_CM_REQ_PRIMARY_RSVD90, 90, 88, 4, 6, 6),
	NUM(REQ, DROCE_CM_REQ_PRIMARY_PACKET_RATE, "primary_packet_rate", 88, 4, 0, 6),
	NUM(REQ, DROCE_CM_REQ_PRIMARY_TRAFFIC_CLASS, "primary_traffic_class", 92, 1, 0, 8),
	NUM(REQ, DROCE_CM_REQ_PRIMARY_HOP_LIMIT, "primary_hop_limit", 93, 1, 0, 8),
	NUM(REQ, DROCE_CM_REQ_PRIMARY_SL, "primary_sl", 94, 1, 4, 4),
	NUM(REQ, DROCE_CM_REQ_PRIMARY_SUBNET_LOCAL, "primary_subnet_local", 94, 1, 3, 1),
	RSVD(REQ, DROCE_CM_REQ_PRIMARY_RSVD94, 94, 1, 0, 3),
	NUM(REQ, DROCE_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, "primary_local_ack_timeout", 95, 1, 3, 5),
	RSVD(REQ, DROCE_CM_REQ_PRIMARY_RSVD95, 95, 1, 0, 3),
	NUM(REQ, DROCE_CM_REQ_ALTERNATE_LOCAL_LID, "alternate_local_lid", 96, 2, 0, 16),
	NUM(REQ, DROCE_CM_REQ_ALTERNATE_REMOTE_LID, "alternate_remote_lid", 98, 2, 0, 16),
	BYTES(REQ, DROCE_CM_REQ_ALTERNATE_LOCAL_GID, "alternate_local_gid", 100, 16),
	BYTES(REQ, DROCE_CM_REQ_ALTERNATE_REMOTE_GID, "alternate_remote_gid", 116, 16),
	NUM(REQ, DROCE_CM_REQ_ALTERNATE_FLOW_LABEL, "alternate_flow_label", 132, 4, 12, 20),
	RSVD_IN(REQ, DROCE_CM_REQ_ALTERNATE_RSVD134, 134, 132, 4, 6, 6),
	NUM(REQ, DROCE_CM_REQ_ALTERNATE_PACKET_RATE, "alternate_packet_rate", 132, 4, 0, 6),
	NUM(REQ, DROCE_CM_REQ_ALTERNATE_TRAFFIC_CLASS, "alternate_traffic_class", 136, 1, 0, 8),
	NUM(REQ, DROCE_CM_REQ_ALTERNATE_HOP_LIMIT, "alternate_hop_limit", 137, 1, 0, 8),
	NUM(REQ, DROCE_CM_REQ_ALTERNATE_SL, "alternate_sl", 138, 1, 4, 4),
	NUM(REQ, DROCE_CM_REQ_ALTERNATE_SUBNET_LOCAL, "alternate_subnet_local", 138, 1, 3, 1),
	RSVD(REQ, DROCE_CM_REQ_ALTERNATE_RSVD138, 138, 1, 0, 3),
	NUM(REQ, DROCE_CM_REQ_ALTERNATE_LOCAL_ACK_TIMEOUT, "alternate_local_ack_timeout", 139, 1, 3, 5),
	RSVD(REQ, DROCE_CM_REQ_ALTERNATE_RSVD139, 139, 1, 0, 3),
	BYTES(REQ, DROCE_CM_REQ_PRIVATE_DATA, "private_data", 140, 92),

	/* MRA, 12.6.6 (table 107) */
	NUM(MRA, DROCE_CM_MRA_LOCAL_COMM_ID, "local_comm_id", 0, 4, 0, 32),
	NUM(MRA, DROCE_CM_MRA_REMOTE_COMM_ID, "remote_comm_id", 4, 4, 0, 32),
	NUM(MRA, DROCE_CM_MRA_MESSAGE_MRAED, "message_mraed", 8, 1, 6, 2),
	RSVD(MRA, DROCE_CM_MRA_RSVD8, 8, 1, 0, 6),
	NUM(MRA, DROCE_CM_MRA_SERVICE_TIMEOUT, "service_timeout", 9, 1, 3, 5),
	RSVD(MRA, DROCE_CM_MRA_RSVD9, 9, 1, 0, 3),
	BYTES(MRA, DROCE_CM_MRA_PRIVATE_DATA, "private_data", 10, 222),

	/* REJ, 12.6.7 (table 108) */
	NUM(REJ, DROCE_CM_REJ_LOCAL_COMM_ID, "local_comm_id", 0, 4, 0, 32),
	NUM(REJ, DROCE_CM_REJ_REMOTE_COMM_ID, "remote_comm_id", 4, 4, 0, 32),
	NUM(REJ, DROCE_CM_REJ_MESSAGE_REJECTED, "message_rejected", 8, 1, 6, 2),
	RSVD(REJ, DROCE_CM_REJ_RSVD8, 8, 1, 0, 6),
	NUM(REJ, DROCE_CM_REJ_REJECTED_INFO_LENGTH, "rejected_info_length", 9, 1, 1, 7),
	RSVD(REJ, DROCE_CM_REJ_RSVD9, 9, 1, 0, 1),
	NUM(REJ, DROCE_CM_REJ_REASON, "reason", 10, 2, 0, 16),
	BYTES(REJ, DROCE_CM_REJ_ARI, "ari", 12, 72),
	BYTES(REJ, DROCE_CM_REJ_PRIVATE_DATA, "private_data", 84, 148),

	/* REP, 12.6.8 (table 110) */
	NUM(REP, DROCE_CM_REP_LOCAL_COMM_ID, "local_comm_id", 0, 4, 0, 32),
	NUM(REP, DROCE_CM_REP_REMOTE_COMM_ID, "remote_comm_id", 4, 4, 0, 32),
	NUM(REP, DROCE_CM_REP_LOCAL_QKEY, "local_qkey", 8, 4, 0, 32),
	NUM(REP, DROCE_CM_REP_LOCAL_QPN, "local_qpn", 12, 4, 8, 24),
	RSVD(REP, DROCE_CM_REP_RSVD15, 15, 1, 0, 8),
	NUM(REP, DROCE_CM_REP_LOCAL_EECN, "local_eecn", 16, 4, 8, 24),
	RSVD(REP, DROCE_CM_REP_RSVD19, 19, 1, 0, 8),
	NUM(REP, DROCE_CM_REP_STARTING_PSN, "starting_psn", 20, 4, 8, 24),
	RSVD(REP, DROCE_CM_REP_RSVD23, 23, 1, 0, 8),
	NUM(REP, DROCE_CM_REP_RESPONDER_RESOURCES, "responder_resources", 24, 1, 0, 8),
	NUM(REP, DROCE_CM_REP_INITIATOR_DEPTH, "initiator_depth", 25, 1, 0, 8),
	NUM(REP, DROCE_CM_REP_TARGET_ACK_DELAY, "target_ack_delay", 26, 1, 3, 5),
	NUM(REP, DROCE_CM_REP_FAILOVER_ACCEPTED, "failover_accepted", 26, 1, 1, 2),
	NUM(REP, DROCE_CM_REP_END_TO_END_FLOW_CONTROL, "end_to_end_flow_control", 26, 1, 0, 1),
	NUM(REP, DROCE_CM_REP_RNR_RETRY_COUNT, "rnr_retry_count", 27, 1, 5, 3),
	NUM(REP, DROCE_CM_REP_SRQ, "srq", 27, 1, 4, 1),
	RSVD(REP, DROCE_CM_REP_RSVD27, 27, 1, 0, 4),
	NUM(REP, DROCE_CM_REP_LOCAL_CA_GUID, "local_ca_guid", 28, 8, 0, 64),
	BYTES(REP, DROCE_CM_REP_PRIVATE_DATA, "private_data", 36, 196),

	/* RTU, 12.6.9 (table 111) */
	NUM(RTU, DROCE_CM_RTU_LOCAL_COMM_ID, "local_comm_id", 0, 4, 0, 32),
	NUM(RTU, DROCE_CM_RTU_REMOTE_COMM_ID, "remote_comm_id", 4, 4, 0, 32),
	BYTES(RTU, DROCE_CM_RTU_PRIVATE_DATA, "private_data", 8, 224),

	/* DREQ, 12.6.10 (table 112) */
	NUM(DREQ, DROCE_CM_DREQ_LOCAL_COMM_ID, "local_comm_id", 0, 4, 0, 32),
	NUM(DREQ, DROCE_CM_DREQ_REMOTE_COMM_ID, "remote_comm_id", 4, 4, 0, 32),
	NUM(DREQ, DROCE_CM_DREQ_REMOTE_QPN_EECN, "remote_qpn_eecn", 8, 4, 8, 24),
	RSVD(DREQ, DROCE_CM_DREQ_RSVD11, 11, 1, 0, 8),
	BYTES(DREQ, DROCE_CM_DREQ_PRIVATE_DATA, "private_data", 12, 220),

	/* DREP, 12.6.11 (table 113) */
	NUM(DREP, DROCE_CM_DREP_LOCAL_COMM_ID, "local_comm_id", 0, 4, 0, 32),
	NUM(DREP, DROCE_CM_DREP_REMOTE_COMM_ID, "remote_comm_id", 4, 4, 0, 32),
	BYTES(DREP, DROCE_CM_DREP_PRIVATE_DATA, "private_data", 8, 224),

	/* SIDR_REQ, 12.11 (table 119) */
	NUM(SIDR_REQ, DROCE_CM_SIDR_REQ_REQUEST_ID, "request_id", 0, 4, 0, 32),
	NUM(SIDR_REQ, DROCE_CM_SIDR_REQ_PARTITION_KEY, "partition_key", 4, 2, 0, 16),
	RSVD(SIDR_REQ, DROCE_CM_SIDR_REQ_RSVD6, 6, 2, 0, 16),
	NUM(SIDR_REQ, DROCE_CM_SIDR_REQ_SERVICE_ID, "service_id", 8, 8, 0, 64),
	BYTES(SIDR_REQ, DROCE_CM_SIDR_REQ_PRIVATE_DATA, "private_data", 16, 216),

	/* SIDR_REP, 12.11 (table 120) */
	NUM(SIDR_REP, DROCE_CM_SIDR_REP_REQUEST_ID, "request_id", 0, 4, 0, 32),
	NUM(SIDR_REP, DROCE_CM_SIDR_REP_STATUS, "status", 4, 1, 0, 8),
	NUM(SIDR_REP, DROCE_CM_SIDR_REP_ADDITIONAL_INFO_LENGTH, "additional_info_length", 5, 1, 0, 8),
	RSVD(SIDR_REP, DROCE_CM_SIDR_REP_RSVD6, 6, 2, 0, 16),
	NUM(SIDR_REP, DROCE_CM_SIDR_REP_QPN, "qpn", 8, 4, 8, 24),
	RSVD(SIDR_REP, DROCE_CM_SIDR_REP_RSVD11, 11, 1, 0, 8),
	NUM(SIDR_REP, DROCE_CM_SIDR_REP_SERVICE_ID, "service_id", 12, 8, 0, 64),
	NUM(SIDR_REP, DROCE_CM_SIDR_REP_QKEY, "qkey", 20, 4, 0, 32),
	BYTES(SIDR_REP, DROCE_CM_SIDR_REP_CLASS_PORT_INFO, "class_port_info", 24, 72),
	BYTES(SIDR_REP, DROCE_CM_SIDR_REP_PRIVATE_DATA, "private_data", 96, 136),

	/* LAP, 12.6.12 (table 115) */
	NUM(LAP, DROCE_CM_LAP_LOCAL_COMM_ID, "local_comm_id", 0, 4, 0, 32),
	NUM(LAP, DROCE_CM_LAP_REMOTE_COMM_ID, "remote_comm_id", 4, 4, 0, 32),
	RSVD_BYTES(LAP, DROCE_CM_LAP_RSVD8, 8, 4),
	NUM(LAP, DROCE_CM_LAP_REMOTE_QPN_EECN, "remote_qpn_eecn", 12, 4, 8, 24),
	NUM(LAP, DROCE_CM_LAP_REMOTE_CM_RESPONSE_TIMEOUT, "remote_cm_response_timeout", 15, 1, 3, 5),
	RSVD(LAP, DROCE_CM_LAP_RSVD15, 15, 1, 0, 3),
	RSVD_BYTES(LAP, DROCE_CM_LAP_RSVD16, 16, 4),
	NUM(LAP, DROCE_CM_LAP_ALTERNATE_LOCAL_LID, "alternate_local_lid", 20, 2, 0, 16),
	NUM(LAP, DROCE_CM_LAP_ALTERNATE_REMOTE_LID, "alternate_remote_lid", 22, 2, 0, 16),
	BYTES(LAP, DROCE_CM_LAP_ALTERNATE_LOCAL_GID, "alternate_local_gid", 24, 16),
	BYTES(LAP, DROCE_CM_LAP_ALTERNATE_REMOTE_GID, "alternate_remote_gid", 40, 16),
	NUM(LAP, DROCE_CM_LAP_ALTERNATE_FLOW_LABEL, "alternate_flow_label", 56, 4, 12, 20),
	RSVD(LAP, DROCE_CM_LAP_RSVD58, 58, 1, 0, 4),
	NUM(LAP, DROCE_CM_LAP_ALTERNATE_TRAFFIC_CLASS, "alternate_traffic_class", 59, 1, 0, 8),
	NUM(LAP, DROCE_CM_LAP_ALTERNATE_HOP_LIMIT, "alternate_hop_limit", 60, 1, 0, 8),
	RSVD(LAP, DROCE_CM_LAP_RSVD61, 61, 1, 6, 2),
	NUM(LAP, DROCE_CM_LAP_ALTERNATE_PACKET_RATE, "alternate_packet_rate", 61, 1, 0, 6),
	NUM(LAP, DROCE_CM_LAP_ALTERNATE_SL, "alternate_sl", 62, 1, 4, 4),
	NUM(LAP, DROCE_CM_LAP_ALTERNATE_SUBNET_LOCAL, "alternate_subnet_local", 62, 1, 3, 1),
	RSVD(LAP, DROCE_CM_LAP_RSVD62, 62, 1, 0, 3),
	NUM(LAP, DROCE_CM_LAP_ALTERNATE_LOCAL_ACK_TIMEOUT, "alternate_local_ack_timeout", 63, 1, 3, 5),
	RSVD(LAP, DROCE_CM_LAP_RSVD63, 63, 1, 0, 3),
	BYTES(LAP, DROCE_CM_LAP_PRIVATE_DATA, "private_data", 64, 168),

	/* APR, 12.6.13 (table 116) */
	NUM(APR, DROCE_CM_APR_LOCAL_COMM_ID, "local_comm_id", 0, 4, 0, 32),
	NUM(APR, DROCE_CM_APR_REMOTE_COMM_ID, "remote_comm_id", 4, 4, 0, 32),
	NUM(APR, DROCE_CM_APR_ADDITIONAL_INFO_LENGTH, "additional_info_length", 8, 1, 0, 8),
	NUM(APR, DROCE_CM_APR_AP_STATUS, "ap_status", 9, 1, 0, 8),
	RSVD(APR, DROCE_CM_APR_RSVD10, 10, 2, 0, 16),
	BYTES(APR, DROCE_CM_APR_ADDITIONAL_INFO, "additional_info", 12, 72),
	BYTES(APR, DROCE_CM_APR_PRIVATE_DATA, "private_data", 84, 148),
};

/* Private data: the message's last field, @poff and @plen as in its table entry above. */
#define MSG(msg, nm, cl, attr, first, last, poff, plen) \
	[DROCE_CM_##msg] = {nm, cl, attr, first, (last) - (first) + 1, poff, plen}

const struct droce_cm_msg_info droce_cm_msg_table[DROCE_CM_MSG_COUNT] = {
	MSG(REQ, "REQ", "12.6.5", DROCE_CM_ATTR_REQ,
	    DROCE_CM_REQ_LOCAL_COMM_ID, DROCE_CM_REQ_PRIVATE_DATA, 140, 92),
	MSG(MRA, "MRA", "12.6.6", DROCE_CM_ATTR_MRA,
	    DROCE_CM_MRA_LOCAL_COMM_ID, DROCE_CM_MRA_PRIVATE_DATA, 10, 222),
	MSG(REJ, "REJ", "12.6.7", DROCE_CM_ATTR_REJ,
	    DROCE_CM_REJ_LOCAL_COMM_ID, DROCE_CM_REJ_PRIVATE_DATA, 84, 148),
	MSG(REP, "REP", "12.6.8", DROCE_CM_ATTR_REP,
	    DROCE_CM_REP_LOCAL_COMM_ID, DROCE_CM_REP_PRIVATE_DATA, 36, 196),
	MSG(RTU, "RTU", "12.6.9", DROCE_CM_ATTR_RTU,
	    DROCE_CM_RTU_LOCAL_COMM_ID, DROCE_CM_RTU_PRIVATE_DATA, 8, 224),
	MSG(DREQ, "DREQ", "12.6.10", DROCE_CM_ATTR_DREQ,
	    DROCE_CM_DREQ_LOCAL_COMM_ID, DROCE_CM_DREQ_PRIVATE_DATA, 12, 220),
	MSG(DREP, "DREP", "12.6.11", DROCE_CM_ATTR_DREP,
	    DROCE_CM_DREP_LOCAL_COMM_ID, DROCE_CM_DREP_PRIVATE_DATA, 8, 224),
	MSG(SIDR_REQ, "SIDR_REQ", "12.11", DROCE_CM_ATTR_SIDR_REQ,
	    DROCE_CM_SIDR_REQ_REQUEST_ID, DROCE_CM_SIDR_REQ_PRIVATE_DATA,
	    16, 216),
	MSG(SIDR_REP, "SIDR_REP", "12.11", DROCE_CM_ATTR_SIDR_REP,
	    DROCE_CM_SIDR_REP_REQUEST_ID, DROCE_CM_SIDR_REP_PRIVATE_DATA,
	    96, 136),
	MSG(LAP, "LAP", "12.6.12", DROCE_CM_ATTR_LAP,
	    DROCE_CM_LAP_LOCAL_COMM_ID, DROCE_CM_LAP_PRIVATE_DATA, 64, 168),
	MSG(APR, "APR", "12.6.13", DROCE_CM_ATTR_APR,
	    DROCE_CM_APR_LOCAL_COMM_ID, DROCE_CM_APR_PRIVATE_DATA, 84, 148),
};

/* 12.6.7.2 */
static const char *const rej_reason_name[DROCE_CM_REJ_REASON_MAX + 1] = {
	[DROCE_CM_REJ_NO_QP] = "no QP available",
	[DROCE_CM_REJ_NO_EEC] = "no EEC available",
	[DROCE_CM_REJ_NO_RESOURCES] = "no resources available",
	[DROCE_CM_REJ_TIMEOUT] = "timeout",
	[DROCE_CM_REJ_UNSUPPORTED_REQ] = "unsupported request",
	[DROCE_CM_REJ_INVALID_COMM_ID] = "invalid communication ID",
	[DROCE_CM_REJ_INVALID_COMM_INSTANCE] = "invalid communication instance",
	[DROCE_CM_REJ_INVALID_SERVICE_ID] = "invalid service ID",
	[DROCE_CM_REJ_INVALID_TRANSPORT_TYPE] = "invalid transport service type",
	[DROCE_CM_REJ_STALE_CONN] = "stale connection",
	[DROCE_CM_REJ_RDC_NOT_EXIST] = "RDC does not exist",
	[DROCE_CM_REJ_INVALID_GID] = "primary remote port GID rejected",
	[DROCE_CM_REJ_INVALID_LID] = "primary remote port LID rejected",
	[DROCE_CM_REJ_INVALID_SL] = "invalid primary SL",
	[DROCE_CM_REJ_INVALID_TRAFFIC_CLASS] = "invalid primary traffic class",
	[DROCE_CM_REJ_INVALID_HOP_LIMIT] = "invalid primary hop limit",
	[DROCE_CM_REJ_INVALID_PACKET_RATE] = "invalid primary packet rate",
	[DROCE_CM_REJ_INVALID_ALT_GID] = "alternate remote port GID rejected",
	[DROCE_CM_REJ_INVALID_ALT_LID] = "alternate remote port LID rejected",
	[DROCE_CM_REJ_INVALID_ALT_SL] = "invalid alternate SL",
	[DROCE_CM_REJ_INVALID_ALT_TRAFFIC_CLASS] = "invalid alternate traffic class",
	[DROCE_CM_REJ_INVALID_ALT_HOP_LIMIT] = "invalid alternate hop limit",
	[DROCE_CM_REJ_INVALID_ALT_PACKET_RATE] = "invalid alternate packet rate",
	[DROCE_CM_REJ_PORT_CM_REDIRECT] = "port and CM redirection",
	[DROCE_CM_REJ_PORT_REDIRECT] = "port redirection not supported",
	[DROCE_CM_REJ_INVALID_MTU] = "invalid path MTU",
	[DROCE_CM_REJ_INSUFFICIENT_RESP_RESOURCES] = "insufficient responder resources",
	[DROCE_CM_REJ_CONSUMER_DEFINED] = "consumer-defined",
	[DROCE_CM_REJ_INVALID_RNR_RETRY] = "invalid RNR NAK retry count",
	[DROCE_CM_REJ_DUPLICATE_LOCAL_COMM_ID] = "duplicate local communication ID",
	[DROCE_CM_REJ_INVALID_CLASS_VERSION] = "unsupported class version",
	[DROCE_CM_REJ_INVALID_FLOW_LABEL] = "invalid primary flow label",
	[DROCE_CM_REJ_INVALID_ALT_FLOW_LABEL] = "invalid alternate flow label",
};
/* clang-format on */

const char *droce_cm_rej_reason_name(uint16_t reason)
{
	return reason <= DROCE_CM_REJ_REASON_MAX ? rej_reason_name[reason] : NULL;
}

int droce_cm_msg_from_attr(uint16_t attr_id)
{
	int m;

	for (m = 0; m < DROCE_CM_MSG_COUNT; m++)
		if (droce_cm_msg_table[m].attr_id == attr_id)
			return m;
	return -ENOENT;
}

static uint64_t field_mask(const struct droce_cm_field_info *fi)
{
	return fi->bits == 64 ? UINT64_MAX : (UINT64_C(1) << fi->bits) - 1;
}

/* The big-endian unit of @p fi, read byte by byte (no alignment assumed). */
static uint64_t unit_load(const uint8_t *p, uint8_t size)
{
	uint64_t v = 0;
	uint8_t i;

	for (i = 0; i < size; i++)
		v = v << 8 | p[i];
	return v;
}

static void unit_store(uint8_t *p, uint8_t size, uint64_t v)
{
	uint8_t i;

	for (i = size; i > 0; i--) {
		p[i - 1] = (uint8_t)v;
		v >>= 8;
	}
}

uint64_t droce_cm_get(const void *mad, enum droce_cm_field f)
{
	const struct droce_cm_field_info *fi = &droce_cm_field_table[f];

	if (fi->bits == 0)
		return 0;
	return unit_load(droce_cm_bytes(mad, f), fi->size) >> fi->shift & field_mask(fi);
}

int droce_cm_set(void *mad, enum droce_cm_field f, uint64_t v)
{
	const struct droce_cm_field_info *fi = &droce_cm_field_table[f];
	uint8_t *p = (uint8_t *)mad + DROCE_MAD_HDR_LEN + fi->offset;
	uint64_t mask, unit;

	if (fi->bits == 0)
		return -EINVAL;
	mask = field_mask(fi);
	if (v & ~mask)
		return -ERANGE;
	unit = unit_load(p, fi->size);
	unit = (unit & ~(mask << fi->shift)) | v << fi->shift;
	unit_store(p, fi->size, unit);
	return 0;
}

int droce_cm_set_private(void *mad, enum droce_cm_msg msg, const void *data, size_t len)
{
	const struct droce_cm_msg_info *mi = &droce_cm_msg_table[msg];
	uint8_t *p = (uint8_t *)mad + DROCE_MAD_HDR_LEN + mi->private_off;

	if (len > mi->private_len)
		return -EMSGSIZE;
	if (len != 0)
		memcpy(p, data, len);
	memset(p + len, 0, mi->private_len - len);
	return 0;
}
