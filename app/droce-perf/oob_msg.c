/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The messages of perftest 4.5's out-of-band exchange (perf_oob.h), byte for
 * byte as the captures in tests/data show them:
 *   version   16 bytes: "6.06" and NULs
 *   sys data   4 bytes: a big-endian int (page size, then cache line size)
 *   MTU        2 bytes: the ibv_mtu value as one decimal digit, then NUL
 *   address  108 bytes: "LID:OUTREADS:QPN:PSN:RKEY:VADDR:G0:...:G15:SRQN:" in
 *                       hex (4, 4, 6, 6, 8, 16, 2 each, 8 digits), then NUL
 *   report   5 x 8 bytes: size, iterations (big-endian), then bandwidth peak,
 *                       average and message rate (doubles, bytes big-endian)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_oob.h"

#define KEYS_FIELDS 23 /* six numbers, sixteen GID bytes, the SRQ number */

void perf_oob_version_encode(uint8_t out[PERF_OOB_VERSION_LEN])
{
	memset(out, 0, PERF_OOB_VERSION_LEN);
	memcpy(out, PERF_OOB_VERSION_STR, strlen(PERF_OOB_VERSION_STR));
}

int perf_oob_version_decode(const uint8_t in[PERF_OOB_VERSION_LEN], double *version)
{
	char text[PERF_OOB_VERSION_LEN];
	char *end;

	if (memchr(in, '\0', PERF_OOB_VERSION_LEN) == NULL)
		return -EINVAL;
	memcpy(text, in, PERF_OOB_VERSION_LEN);
	*version = strtod(text, &end);
	if (end == text || *end != '\0')
		return -EINVAL;
	return 0;
}

static void put_be(uint8_t *out, uint64_t v, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++)
		out[i] = (uint8_t)(v >> (8 * (len - 1 - i)));
}

static uint64_t get_be(const uint8_t *in, unsigned int len)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < len; i++)
		v = v << 8 | in[i];
	return v;
}

void perf_oob_int_encode(uint8_t out[PERF_OOB_INT_LEN], int32_t v)
{
	put_be(out, (uint32_t)v, PERF_OOB_INT_LEN);
}

int32_t perf_oob_int_decode(const uint8_t in[PERF_OOB_INT_LEN])
{
	return (int32_t)(uint32_t)get_be(in, PERF_OOB_INT_LEN);
}

void perf_oob_mtu_encode(uint8_t out[PERF_OOB_MTU_LEN], enum ibv_mtu mtu)
{
	out[0] = (uint8_t)('0' + mtu);
	out[1] = '\0';
}

int perf_oob_mtu_decode(const uint8_t in[PERF_OOB_MTU_LEN], enum ibv_mtu *mtu)
{
	if (in[0] < '0' + IBV_MTU_256 || in[0] > '0' + IBV_MTU_4096 || in[1] != '\0')
		return -EINVAL;
	*mtu = (enum ibv_mtu)(in[0] - '0');
	return 0;
}

void perf_oob_keys_encode(uint8_t out[PERF_OOB_KEYS_LEN], const struct perf_dest *d)
{
	char text[PERF_OOB_KEYS_LEN + 16];
	int n = snprintf(text, sizeof(text), "%04x:%04x:%06x:%06x:%08x:%016llx:", d->lid,
			 d->out_reads, d->qpn, d->psn, d->rkey, (unsigned long long)d->vaddr);

	for (int i = 0; i < 16; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%02x:", d->gid.raw[i]);
	snprintf(text + n, sizeof(text) - (size_t)n, "%08x:", d->srqn);
	memset(out, 0, PERF_OOB_KEYS_LEN);
	memcpy(out, text, strnlen(text, PERF_OOB_KEYS_LEN - 1));
}

/* One hex field of at most @p max_digits digits, ended by ':'; the text after it, or NULL. */
static const char *hex_field(const char *p, unsigned int max_digits, uint64_t *v)
{
	unsigned int n = 0;

	*v = 0;
	for (; n < max_digits && p[n] != '\0' && strchr("0123456789abcdefABCDEF", p[n]); n++) {
		char ch = p[n];
		unsigned int digit = ch <= '9' ? (unsigned int)(ch - '0')
					       : (unsigned int)((ch | 0x20) - 'a' + 10);

		*v = *v << 4 | digit;
	}
	if (n == 0 || p[n] != ':')
		return NULL;
	return p + n + 1;
}

int perf_oob_keys_decode(const uint8_t in[PERF_OOB_KEYS_LEN], struct perf_dest *d)
{
	/* digits each field may have: the widths perftest prints, at most 64 bits */
	static const unsigned int width[6] = {4, 8, 6, 6, 8, 16};
	char text[PERF_OOB_KEYS_LEN];
	uint64_t v[KEYS_FIELDS];
	const char *p = text;

	if (memchr(in, '\0', PERF_OOB_KEYS_LEN) == NULL)
		return -EINVAL;
	memcpy(text, in, PERF_OOB_KEYS_LEN);
	for (unsigned int i = 0; i < KEYS_FIELDS && p != NULL; i++)
		p = hex_field(p, i < 6 ? width[i] : i < 22 ? 2 : 8, &v[i]);
	if (p == NULL || *p != '\0' || v[0] > UINT16_MAX || v[1] > UINT16_MAX)
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	d->lid = (uint16_t)v[0];
	d->out_reads = (uint16_t)v[1];
	d->qpn = (uint32_t)v[2];
	d->psn = (uint32_t)v[3];
	d->rkey = (uint32_t)v[4];
	d->vaddr = v[5];
	for (int i = 0; i < 16; i++)
		d->gid.raw[i] = (uint8_t)v[6 + i];
	d->srqn = (uint32_t)v[22];
	return 0;
}

static uint64_t double_bits(double x)
{
	uint64_t u;

	memcpy(&u, &x, sizeof(u));
	return u;
}

static double bits_double(uint64_t u)
{
	double x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

void perf_oob_report_encode(uint8_t out[PERF_OOB_REPORT_FIELDS][PERF_OOB_FIELD_LEN],
			    const struct perf_oob_report *r)
{
	put_be(out[0], r->size, PERF_OOB_FIELD_LEN);
	put_be(out[1], r->iters, PERF_OOB_FIELD_LEN);
	put_be(out[2], double_bits(r->bw_peak), PERF_OOB_FIELD_LEN);
	put_be(out[3], double_bits(r->bw_avg), PERF_OOB_FIELD_LEN);
	put_be(out[4], double_bits(r->msg_rate), PERF_OOB_FIELD_LEN);
}

void perf_oob_report_decode(const uint8_t in[PERF_OOB_REPORT_FIELDS][PERF_OOB_FIELD_LEN],
			    struct perf_oob_report *r)
{
	r->size = get_be(in[0], PERF_OOB_FIELD_LEN);
	r->iters = get_be(in[1], PERF_OOB_FIELD_LEN);
	r->bw_peak = bits_double(get_be(in[2], PERF_OOB_FIELD_LEN));
	r->bw_avg = bits_double(get_be(in[3], PERF_OOB_FIELD_LEN));
	r->msg_rate = bits_double(get_be(in[4], PERF_OOB_FIELD_LEN));
}
