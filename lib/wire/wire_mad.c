/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CM MADs: the common header (IBTA Vol. 1 13.4.2), the checks a received MAD passes before its
 * fields are read, decoding and encoding a whole message, and the GSI framing over RoCEv2.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "droce_wire_mad.h"
#include "droce_wire_opcode.h"

const char *const droce_mad_status_name[DROCE_MAD_STATUS_COUNT] = {
	[DROCE_MAD_OK] = "ok",
	[DROCE_MAD_NOT_CM] = "not_cm",
	[DROCE_MAD_CLASS_PORT_INFO] = "cm_class_port_info",
	[DROCE_MAD_TRUNC] = "mad_trunc",
	[DROCE_MAD_TOO_LONG] = "mad_too_long",
	[DROCE_MAD_BAD_BASE_VERSION] = "mad_bad_base_version",
	[DROCE_MAD_BAD_CLASS_VERSION] = "mad_bad_class_version",
	[DROCE_MAD_BAD_METHOD] = "mad_bad_method",
	[DROCE_MAD_BAD_ATTR] = "mad_bad_attr",
	[DROCE_MAD_BAD_INFO_LEN] = "mad_bad_info_len",
	[DROCE_MAD_NOT_GSI] = "not_gsi",
	[DROCE_MAD_BAD_QKEY] = "gsi_bad_qkey",
};

void droce_mad_hdr_get(const void *mad, struct droce_mad_fields *f)
{
	struct droce_mad_hdr h;

	memcpy(&h, mad, sizeof(h));
	f->base_version = h.base_version;
	f->mgmt_class = h.mgmt_class;
	f->class_version = h.class_version;
	f->method = h.method;
	f->status = be16toh(h.status);
	f->class_specific = be16toh(h.class_specific);
	f->tid = be64toh(h.tid);
	f->attr_id = be16toh(h.attr_id);
	f->resv = be16toh(h.resv);
	f->attr_mod = be32toh(h.attr_mod);
}

void droce_mad_hdr_set(void *mad, const struct droce_mad_fields *f)
{
	struct droce_mad_hdr h = {
		.base_version = f->base_version,
		.mgmt_class = f->mgmt_class,
		.class_version = f->class_version,
		.method = f->method,
		.status = htobe16(f->status),
		.class_specific = htobe16(f->class_specific),
		.tid = htobe64(f->tid),
		.attr_id = htobe16(f->attr_id),
		.resv = htobe16(f->resv),
		.attr_mod = htobe32(f->attr_mod),
	};

	memcpy(mad, &h, sizeof(h));
}

void droce_mad_cm_fields(struct droce_mad_fields *f, uint16_t attr_id, uint64_t tid)
{
	memset(f, 0, sizeof(*f));
	f->base_version = DROCE_MAD_BASE_VERSION;
	f->mgmt_class = DROCE_MAD_CLASS_CM;
	f->class_version = DROCE_MAD_CM_CLASS_VERSION;
	f->method = DROCE_MAD_METHOD_SEND;
	f->attr_id = attr_id;
	f->tid = tid;
}

/* The lengths a message announces for its variable parts stay within their fields. */
static enum droce_mad_status check_info_len(const void *mad, enum droce_cm_msg msg)
{
	uint64_t len;

	switch (msg) {
	case DROCE_CM_REJ: /* 12.6.7: ARI length, 0 to 72 */
		len = droce_cm_get(mad, DROCE_CM_REJ_REJECTED_INFO_LENGTH);
		break;
	case DROCE_CM_APR: /* 12.6.13 */
		len = droce_cm_get(mad, DROCE_CM_APR_ADDITIONAL_INFO_LENGTH);
		break;
	case DROCE_CM_SIDR_REP: /* 12.11.2 */
		len = droce_cm_get(mad, DROCE_CM_SIDR_REP_ADDITIONAL_INFO_LENGTH);
		break;
	default:
		return DROCE_MAD_OK;
	}
	return len > DROCE_CM_INFO_LEN_MAX ? DROCE_MAD_BAD_INFO_LEN : DROCE_MAD_OK;
}

enum droce_mad_status droce_mad_parse(const void *mad, size_t len, enum droce_cm_msg *msg)
{
	struct droce_mad_fields h;
	enum droce_mad_status st;
	int m;

	if (len < DROCE_MAD_LEN)
		return DROCE_MAD_TRUNC;
	if (len > DROCE_MAD_LEN)
		return DROCE_MAD_TOO_LONG;
	droce_mad_hdr_get(mad, &h);
	/* 13.4.2: a MAD of another base version is not understood at all */
	if (h.base_version != DROCE_MAD_BASE_VERSION)
		return DROCE_MAD_BAD_BASE_VERSION;
	if (h.mgmt_class != DROCE_MAD_CLASS_CM)
		return DROCE_MAD_NOT_CM;
	/* 12.6: the CM of this release speaks class version 2 */
	if (h.class_version != DROCE_MAD_CM_CLASS_VERSION)
		return DROCE_MAD_BAD_CLASS_VERSION;
	/*
	 * 16.7: the CM class also carries ClassPortInfo, the class management attribute of
	 * 13.4.8.1, read with Get (or written with Set) and answered with GetResp: well formed,
	 * but no CM message.
	 */
	if (h.attr_id == DROCE_CM_ATTR_CLASS_PORT_INFO)
		return h.method == DROCE_MAD_METHOD_GET || h.method == DROCE_MAD_METHOD_SET ||
				       h.method == DROCE_MAD_METHOD_GET_RESP
			       ? DROCE_MAD_CLASS_PORT_INFO
			       : DROCE_MAD_BAD_METHOD;
	/* 12.6: every CM message is sent with the Send method, not as a response */
	if (h.method != DROCE_MAD_METHOD_SEND)
		return DROCE_MAD_BAD_METHOD;
	m = droce_cm_msg_from_attr(h.attr_id);
	if (m < 0)
		return DROCE_MAD_BAD_ATTR;
	st = check_info_len(mad, (enum droce_cm_msg)m);
	if (st != DROCE_MAD_OK)
		return st;
	if (msg != NULL)
		*msg = (enum droce_cm_msg)m;
	return DROCE_MAD_OK;
}

enum droce_mad_status droce_cm_decode(const void *mad, size_t len, struct droce_cm_decoded *d)
{
	const struct droce_cm_msg_info *mi;
	enum droce_mad_status st;
	enum droce_cm_msg msg;
	unsigned int f;

	st = droce_mad_parse(mad, len, &msg);
	if (st != DROCE_MAD_OK)
		return st;
	memset(d, 0, sizeof(*d));
	droce_mad_hdr_get(mad, &d->hdr);
	d->msg = msg;
	mi = &droce_cm_msg_table[msg];
	for (f = mi->first_field; f < (unsigned int)mi->first_field + mi->nfields; f++) {
		const struct droce_cm_field_info *fi = &droce_cm_field_table[f];

		if (fi->bits != 0)
			d->value[f] = droce_cm_get(mad, (enum droce_cm_field)f);
		else
			memcpy(d->bytes + fi->offset, droce_cm_bytes(mad, (enum droce_cm_field)f),
			       fi->size);
	}
	return DROCE_MAD_OK;
}

ssize_t droce_cm_encode(void *mad, size_t cap, const struct droce_cm_decoded *d)
{
	const struct droce_cm_msg_info *mi;
	uint8_t *data = (uint8_t *)mad + DROCE_MAD_HDR_LEN;
	unsigned int f;

	if ((unsigned int)d->msg >= DROCE_CM_MSG_COUNT)
		return -EINVAL;
	if (cap < DROCE_MAD_LEN)
		return -ENOSPC;
	mi = &droce_cm_msg_table[d->msg];
	/* check every value before writing anything: nothing half-done */
	for (f = mi->first_field; f < (unsigned int)mi->first_field + mi->nfields; f++) {
		const struct droce_cm_field_info *fi = &droce_cm_field_table[f];

		if (fi->bits != 0 && fi->bits < 64 && d->value[f] >> fi->bits != 0)
			return -ERANGE;
	}
	memset(mad, 0, DROCE_MAD_LEN);
	droce_mad_hdr_set(mad, &d->hdr);
	for (f = mi->first_field; f < (unsigned int)mi->first_field + mi->nfields; f++) {
		const struct droce_cm_field_info *fi = &droce_cm_field_table[f];

		if (fi->bits != 0)
			droce_cm_set(mad, (enum droce_cm_field)f, d->value[f]);
		else
			memcpy(data + fi->offset, d->bytes + fi->offset, fi->size);
	}
	return DROCE_MAD_LEN;
}

int droce_cm_init(void *mad, size_t cap, enum droce_cm_msg msg, uint64_t tid)
{
	struct droce_mad_fields h;

	if ((unsigned int)msg >= DROCE_CM_MSG_COUNT)
		return -EINVAL;
	if (cap < DROCE_MAD_LEN)
		return -ENOSPC;
	memset(mad, 0, DROCE_MAD_LEN);
	droce_mad_cm_fields(&h, droce_cm_msg_table[msg].attr_id, tid);
	droce_mad_hdr_set(mad, &h);
	return 0;
}

int droce_cm_apr_refuse(void *apr, size_t cap, const void *lap, size_t lap_len)
{
	struct droce_mad_fields h;
	enum droce_cm_msg msg;
	uint64_t local, remote;
	int ret;

	/* the LAP is a peer's: its length and header are checked before any field is read */
	if (droce_mad_parse(lap, lap_len, &msg) != DROCE_MAD_OK || msg != DROCE_CM_LAP)
		return -EINVAL;
	droce_mad_hdr_get(lap, &h);
	/* read before writing: @p apr may be @p lap */
	local = droce_cm_get(lap, DROCE_CM_LAP_LOCAL_COMM_ID);
	remote = droce_cm_get(lap, DROCE_CM_LAP_REMOTE_COMM_ID);
	ret = droce_cm_init(apr, cap, DROCE_CM_APR, h.tid);
	if (ret < 0)
		return ret;
	droce_cm_set(apr, DROCE_CM_APR_LOCAL_COMM_ID, remote);
	droce_cm_set(apr, DROCE_CM_APR_REMOTE_COMM_ID, local);
	droce_cm_set(apr, DROCE_CM_APR_AP_STATUS, DROCE_CM_APR_UNSUPPORTED);
	return 0;
}

enum droce_mad_status droce_gsi_parse(const struct droce_pkt *pkt, const uint8_t *frame,
				      enum droce_cm_msg *msg)
{
	const struct droce_deth *deth;

	/* chapter 13: the GSI is QP1, reached by UD SENDs; nothing else is a MAD */
	if (pkt->qpn != DROCE_GSI_QPN || pkt->opcode != DROCE_OP_UD_SEND_ONLY)
		return DROCE_MAD_NOT_GSI;
	deth = droce_pkt_ext(pkt, frame, DROCE_HDR_DETH);
	/* chapter 13: QP1 takes only the GSI's well-known Q_Key */
	if (droce_deth_qkey(deth) != DROCE_GSI_QKEY)
		return DROCE_MAD_BAD_QKEY;
	return droce_mad_parse(frame + pkt->payload_off, pkt->payload_len, msg);
}

void droce_gsi_fields(struct droce_hdr_fields *f, uint16_t pkey, uint32_t psn)
{
	memset(f, 0, sizeof(*f));
	f->opcode = DROCE_OP_UD_SEND_ONLY;
	f->pkey = pkey;
	f->dqpn = DROCE_GSI_QPN;
	f->psn = psn & DROCE_PSN_MASK;
	f->deth.qkey = DROCE_GSI_QKEY;
	f->deth.sqpn = DROCE_GSI_QPN;
}
