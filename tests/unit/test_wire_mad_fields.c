/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM field tables against IBTA Vol. 1 chapter 12: every bit of each message in exactly one
 * field, the private data lengths of each message, every accessor (round trip, bytes, neighbours
 * untouched, out-of-range values refused), and whole messages encoded and decoded.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <droce_wire.h>

/* One past the last field of message @p mi. */
static unsigned int fields_end(const struct droce_cm_msg_info *mi)
{
	return (unsigned int)mi->first_field + mi->nfields;
}

/* Set the bits of field @p fi in a bit map of the class data (bit 7 of byte 0 first). */
static void mark_bits(uint8_t *count, const struct droce_cm_field_info *fi)
{
	unsigned int b, first, nbits;

	if (fi->bits == 0) {
		first = fi->offset * 8u;
		nbits = fi->size * 8u;
	} else {
		/* a unit of size bytes: its msb is bit offset*8; the field ends shift bits before
		 * the unit's end */
		first = fi->offset * 8u + fi->size * 8u - fi->shift - fi->bits;
		nbits = fi->bits;
	}
	for (b = first; b < first + nbits; b++) {
		cr_assert_lt(b, DROCE_MAD_DATA_LEN * 8u, "%s runs past the MAD", fi->name);
		count[b]++;
	}
}

Test(cm_tables, every_bit_of_every_message_in_exactly_one_field)
{
	int m;

	for (m = 0; m < DROCE_CM_MSG_COUNT; m++) {
		const struct droce_cm_msg_info *mi = &droce_cm_msg_table[m];
		uint8_t count[DROCE_MAD_DATA_LEN * 8] = {0};
		unsigned int f, b;

		for (f = mi->first_field; f < fields_end(mi); f++) {
			const struct droce_cm_field_info *fi = &droce_cm_field_table[f];

			cr_expect_eq(fi->msg, m, "field %u (%s) filed under %s", f, fi->name,
				     mi->name);
			cr_expect(fi->bits == 0 || fi->size == 1 || fi->size == 2 ||
					  fi->size == 4 || fi->size == 8,
				  "%s %s: unit of %u bytes", mi->name, fi->name, fi->size);
			cr_expect(fi->bits == 0 || fi->shift + fi->bits <= fi->size * 8u,
				  "%s %s overflows its unit", mi->name, fi->name);
			mark_bits(count, fi);
		}
		for (b = 0; b < DROCE_MAD_DATA_LEN * 8; b++)
			cr_expect_eq(count[b], 1, "%s: bit %u of byte %u is in %u fields", mi->name,
				     7 - b % 8, b / 8, count[b]);
	}
}

Test(cm_tables, messages_partition_the_field_enum_in_order)
{
	unsigned int next = 0;
	int m;

	for (m = 0; m < DROCE_CM_MSG_COUNT; m++) {
		cr_expect_eq(droce_cm_msg_table[m].first_field, next, "%s starts at field %u",
			     droce_cm_msg_table[m].name, droce_cm_msg_table[m].first_field);
		next += droce_cm_msg_table[m].nfields;
	}
	cr_expect_eq(next, DROCE_CM_FIELD_COUNT, "fields of no message");
}

/* 12.6.5 ff., 12.11: each message's private data, last in it, to the end of the MAD. */
Test(cm_tables, private_data_lengths)
{
	static const struct {
		enum droce_cm_msg msg;
		uint8_t len;
	} expected[] = {
		{DROCE_CM_REQ, 92},   {DROCE_CM_MRA, 222},      {DROCE_CM_REJ, 148},
		{DROCE_CM_REP, 196},  {DROCE_CM_RTU, 224},      {DROCE_CM_DREQ, 220},
		{DROCE_CM_DREP, 224}, {DROCE_CM_SIDR_REQ, 216}, {DROCE_CM_SIDR_REP, 136},
		{DROCE_CM_LAP, 168},  {DROCE_CM_APR, 148},
	};
	size_t i;

	for (i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		const struct droce_cm_msg_info *mi = &droce_cm_msg_table[expected[i].msg];
		const struct droce_cm_field_info *last =
			&droce_cm_field_table[mi->first_field + mi->nfields - 1];

		cr_expect_eq(mi->private_len, expected[i].len, "%s private data: %u bytes",
			     mi->name, mi->private_len);
		cr_expect_eq(mi->private_off + mi->private_len, DROCE_MAD_DATA_LEN,
			     "%s private data does not end the MAD", mi->name);
		cr_expect_str_eq(last->name, "private_data", "%s ends with %s", mi->name,
				 last->name);
		cr_expect_eq(last->offset, mi->private_off, "%s private data offsets differ",
			     mi->name);
		cr_expect_eq(last->size, mi->private_len, "%s private data lengths differ",
			     mi->name);
	}
}

Test(cm_tables, attribute_ids)
{
	static const struct {
		enum droce_cm_msg msg;
		uint16_t attr;
		const char *name;
	} expected[] = {
		{DROCE_CM_REQ, 0x10, "REQ"},           {DROCE_CM_MRA, 0x11, "MRA"},
		{DROCE_CM_REJ, 0x12, "REJ"},           {DROCE_CM_REP, 0x13, "REP"},
		{DROCE_CM_RTU, 0x14, "RTU"},           {DROCE_CM_DREQ, 0x15, "DREQ"},
		{DROCE_CM_DREP, 0x16, "DREP"},         {DROCE_CM_SIDR_REQ, 0x17, "SIDR_REQ"},
		{DROCE_CM_SIDR_REP, 0x18, "SIDR_REP"}, {DROCE_CM_LAP, 0x19, "LAP"},
		{DROCE_CM_APR, 0x1a, "APR"},
	};
	size_t i;

	for (i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		cr_expect_eq(droce_cm_msg_table[expected[i].msg].attr_id, expected[i].attr,
			     "%s attribute", expected[i].name);
		cr_expect_str_eq(droce_cm_msg_table[expected[i].msg].name, expected[i].name);
		cr_expect_eq(droce_cm_msg_from_attr(expected[i].attr), (int)expected[i].msg,
			     "attribute 0x%02x", expected[i].attr);
	}
	cr_expect_eq(droce_cm_msg_from_attr(DROCE_CM_ATTR_CLASS_PORT_INFO), -ENOENT);
	cr_expect_eq(droce_cm_msg_from_attr(0x1b), -ENOENT);
}

Test(cm_tables, field_names_unique_within_a_message)
{
	int m;

	for (m = 0; m < DROCE_CM_MSG_COUNT; m++) {
		const struct droce_cm_msg_info *mi = &droce_cm_msg_table[m];
		unsigned int f, g;

		for (f = mi->first_field; f < fields_end(mi); f++) {
			cr_assert_not_null(droce_cm_field_table[f].name, "field %u has no name", f);
			for (g = f + 1; g < (unsigned int)mi->first_field + mi->nfields; g++)
				cr_expect_str_neq(droce_cm_field_table[f].name,
						  droce_cm_field_table[g].name, "%s: two fields %s",
						  mi->name, droce_cm_field_table[g].name);
		}
	}
}

Test(cm_tables, rej_reasons_of_12_6_7_2)
{
	uint16_t r;

	for (r = 1; r <= 33; r++)
		cr_expect_not_null(droce_cm_rej_reason_name(r), "reason %u has no name", r);
	cr_expect_null(droce_cm_rej_reason_name(0));
	cr_expect_null(droce_cm_rej_reason_name(34));
	cr_expect_null(droce_cm_rej_reason_name(0xffff));
	cr_expect_str_eq(droce_cm_rej_reason_name(DROCE_CM_REJ_CONSUMER_DEFINED),
			 "consumer-defined");
	cr_expect_eq(DROCE_CM_REJ_CONSUMER_DEFINED, 28);
	cr_expect_eq(DROCE_CM_REJ_STALE_CONN, 10);
	cr_expect_eq(DROCE_CM_REJ_INVALID_SERVICE_ID, 8);
	cr_expect_eq(DROCE_CM_REJ_TIMEOUT, 4);
}

/* ---- accessors */

static uint64_t field_max(const struct droce_cm_field_info *fi)
{
	return fi->bits == 64 ? UINT64_MAX : (UINT64_C(1) << fi->bits) - 1;
}

/* Expected MAD after writing @p v into field @p fi of @p base, computed bit by bit. */
static void expect_write(uint8_t *exp, const struct droce_cm_field_info *fi, uint64_t v)
{
	unsigned int i, first = fi->offset * 8u + fi->size * 8u - fi->shift - fi->bits;

	for (i = 0; i < fi->bits; i++) {
		unsigned int bit = first + i; /* from the field's msb */
		uint8_t *byte = exp + DROCE_MAD_HDR_LEN + bit / 8;
		uint8_t mask = (uint8_t)(0x80 >> bit % 8);

		if (v >> (fi->bits - 1 - i) & 1)
			*byte |= mask;
		else
			*byte &= (uint8_t)~mask;
	}
}

Test(cm_accessors, every_numeric_field_round_trips_alone)
{
	static const uint8_t fill[] = {0x00, 0xff, 0xa5};
	unsigned int f;
	size_t k;

	for (f = 0; f < DROCE_CM_FIELD_COUNT; f++) {
		const struct droce_cm_field_info *fi = &droce_cm_field_table[f];
		uint64_t vals[3] = {0, field_max(fi), 0x5a5a5a5a5a5a5a5aull & field_max(fi)};

		if (fi->bits == 0)
			continue;
		for (k = 0; k < sizeof(fill); k++) {
			size_t j;

			for (j = 0; j < 3; j++) {
				uint8_t mad[DROCE_MAD_LEN], exp[DROCE_MAD_LEN];

				memset(mad, fill[k], sizeof(mad));
				memcpy(exp, mad, sizeof(mad));
				expect_write(exp, fi, vals[j]);
				cr_assert_eq(droce_cm_set(mad, f, vals[j]), 0, "%s", fi->name);
				cr_expect_arr_eq(mad, exp, sizeof(mad),
						 "%s = 0x%" PRIx64 " on 0x%02x: wrong bytes",
						 fi->name, vals[j], fill[k]);
				cr_expect_eq(droce_cm_get(mad, f), vals[j],
					     "%s reads back 0x%" PRIx64, fi->name,
					     droce_cm_get(mad, f));
			}
		}
	}
}

Test(cm_accessors, values_wider_than_the_field_refused)
{
	unsigned int f;

	for (f = 0; f < DROCE_CM_FIELD_COUNT; f++) {
		const struct droce_cm_field_info *fi = &droce_cm_field_table[f];
		uint8_t mad[DROCE_MAD_LEN], before[DROCE_MAD_LEN];

		memset(mad, 0x3c, sizeof(mad));
		memcpy(before, mad, sizeof(mad));
		if (fi->bits == 0) {
			cr_expect_eq(droce_cm_set(mad, f, 0), -EINVAL, "%s is bytes", fi->name);
			cr_expect_eq(droce_cm_get(mad, f), 0, "%s is bytes", fi->name);
		} else if (fi->bits < 64) {
			cr_expect_eq(droce_cm_set(mad, f, UINT64_C(1) << fi->bits), -ERANGE,
				     "%s took a value of %u bits", fi->name, fi->bits + 1);
		}
		cr_expect_arr_eq(mad, before, sizeof(mad), "%s: refused write changed the MAD",
				 fi->name);
	}
}

/* A few fields at the bytes the spec gives them, written by hand. */
Test(cm_accessors, spot_bytes_of_table_106)
{
	uint8_t mad[DROCE_MAD_LEN] = {0};
	const uint8_t *d = mad + DROCE_MAD_HDR_LEN;

	droce_cm_set(mad, DROCE_CM_REQ_LOCAL_QPN, 0x123456);
	droce_cm_set(mad, DROCE_CM_REQ_RESPONDER_RESOURCES, 0x9a);
	droce_cm_set(mad, DROCE_CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, 0x14);
	droce_cm_set(mad, DROCE_CM_REQ_TRANSPORT_SERVICE_TYPE, DROCE_CM_TRANSPORT_UC);
	droce_cm_set(mad, DROCE_CM_REQ_PATH_MTU, 5);
	droce_cm_set(mad, DROCE_CM_REQ_RNR_RETRY_COUNT, 7);
	droce_cm_set(mad, DROCE_CM_REQ_MAX_CM_RETRIES, 15);
	droce_cm_set(mad, DROCE_CM_REQ_PRIMARY_FLOW_LABEL, 0x96b44);
	droce_cm_set(mad, DROCE_CM_REQ_PRIMARY_PACKET_RATE, 0x3f);
	cr_expect_eq(d[32], 0x12, "local QPN, byte 32");
	cr_expect_eq(d[33], 0x34, "local QPN, byte 33");
	cr_expect_eq(d[34], 0x56, "local QPN, byte 34");
	cr_expect_eq(d[35], 0x9a, "responder resources, byte 35");
	cr_expect_eq(d[43], 0x14 << 3 | 1 << 1, "byte 43: timeout 5 bits, service type 2 bits");
	cr_expect_eq(d[50], 0x57, "byte 50: MTU nibble, RDC, RNR retry");
	cr_expect_eq(d[51], 0xf0, "byte 51: max CM retries nibble");
	cr_expect_eq(d[88], 0x96, "flow label, byte 88");
	cr_expect_eq(d[89], 0xb4, "flow label, byte 89");
	cr_expect_eq(d[90], 0x40, "flow label low nibble, byte 90");
	cr_expect_eq(d[91], 0x3f, "packet rate, byte 91");
}

/* ---- whole messages */

static void fill_random(struct droce_cm_decoded *d, enum droce_cm_msg msg, unsigned int seed)
{
	const struct droce_cm_msg_info *mi = &droce_cm_msg_table[msg];
	unsigned int f;

	memset(d, 0, sizeof(*d));
	srandom(seed);
	droce_mad_cm_fields(&d->hdr, mi->attr_id, (uint64_t)random() << 32 | (uint64_t)random());
	d->msg = msg;
	for (f = mi->first_field; f < fields_end(mi); f++) {
		const struct droce_cm_field_info *fi = &droce_cm_field_table[f];
		unsigned int i;

		if (fi->bits != 0)
			d->value[f] =
				((uint64_t)random() << 33 ^ (uint64_t)random()) & field_max(fi);
		else
			for (i = 0; i < fi->size; i++)
				d->bytes[fi->offset + i] = (uint8_t)random();
	}
	/* lengths the parser checks stay legal */
	if (msg == DROCE_CM_REJ)
		d->value[DROCE_CM_REJ_REJECTED_INFO_LENGTH] %= 73;
	if (msg == DROCE_CM_APR)
		d->value[DROCE_CM_APR_ADDITIONAL_INFO_LENGTH] %= 73;
	if (msg == DROCE_CM_SIDR_REP)
		d->value[DROCE_CM_SIDR_REP_ADDITIONAL_INFO_LENGTH] %= 73;
}

Test(cm_messages, encode_decode_round_trip)
{
	int m;
	unsigned int seed;

	for (m = 0; m < DROCE_CM_MSG_COUNT; m++) {
		for (seed = 1; seed <= 20; seed++) {
			struct droce_cm_decoded d, back;
			uint8_t mad[DROCE_MAD_LEN], again[DROCE_MAD_LEN];

			fill_random(&d, (enum droce_cm_msg)m, seed * 131 + (unsigned int)m);
			cr_assert_eq(droce_cm_encode(mad, sizeof(mad), &d), DROCE_MAD_LEN);
			cr_assert_eq(droce_cm_decode(mad, sizeof(mad), &back), DROCE_MAD_OK,
				     "%s seed %u", droce_cm_msg_table[m].name, seed);
			cr_expect_eq(memcmp(&back, &d, sizeof(d)), 0,
				     "%s seed %u: decoded fields differ",
				     droce_cm_msg_table[m].name, seed);
			cr_assert_eq(droce_cm_encode(again, sizeof(again), &back), DROCE_MAD_LEN);
			cr_expect_arr_eq(again, mad, sizeof(mad), "%s seed %u: re-encoded differs",
					 droce_cm_msg_table[m].name, seed);
		}
	}
}

Test(cm_messages, encode_refusals_write_nothing)
{
	struct droce_cm_decoded d;
	uint8_t mad[DROCE_MAD_LEN], before[DROCE_MAD_LEN];

	memset(mad, 0x77, sizeof(mad));
	memcpy(before, mad, sizeof(mad));
	fill_random(&d, DROCE_CM_REP, 7);
	cr_expect_eq(droce_cm_encode(mad, DROCE_MAD_LEN - 1, &d), -ENOSPC, "short buffer");
	d.value[DROCE_CM_REP_LOCAL_QPN] = 1u << 24;
	cr_expect_eq(droce_cm_encode(mad, sizeof(mad), &d), -ERANGE, "25-bit QPN");
	d.value[DROCE_CM_REP_LOCAL_QPN] = 1;
	d.msg = DROCE_CM_MSG_COUNT;
	cr_expect_eq(droce_cm_encode(mad, sizeof(mad), &d), -EINVAL, "no such message");
	cr_expect_arr_eq(mad, before, sizeof(mad), "a refused encode wrote the buffer");
}

Test(cm_messages, private_data_written_and_zero_filled)
{
	int m;

	for (m = 0; m < DROCE_CM_MSG_COUNT; m++) {
		const struct droce_cm_msg_info *mi = &droce_cm_msg_table[m];
		uint8_t mad[DROCE_MAD_LEN], data[DROCE_MAD_DATA_LEN], before[DROCE_MAD_LEN];
		const uint8_t *p = mad + DROCE_MAD_HDR_LEN + mi->private_off;
		size_t i;

		memset(data, 0xc3, sizeof(data));
		memset(mad, 0xee, sizeof(mad));
		cr_assert_eq(droce_cm_set_private(mad, m, data, 5), 0);
		cr_expect_arr_eq(p, data, 5, "%s: private data not written", mi->name);
		for (i = 5; i < mi->private_len; i++)
			cr_expect_eq(p[i], 0, "%s: private byte %zu not zero", mi->name, i);
		cr_expect_eq(mad[DROCE_MAD_HDR_LEN + mi->private_off - 1], 0xee,
			     "%s: byte before the private data written", mi->name);
		cr_assert_eq(droce_cm_set_private(mad, m, data, mi->private_len), 0,
			     "%s: %u bytes refused", mi->name, mi->private_len);
		memcpy(before, mad, sizeof(mad));
		cr_expect_eq(droce_cm_set_private(mad, m, data, mi->private_len + 1u), -EMSGSIZE,
			     "%s: %u bytes taken", mi->name, mi->private_len + 1u);
		cr_expect_arr_eq(mad, before, sizeof(mad), "%s: refused private data written",
				 mi->name);
	}
}
