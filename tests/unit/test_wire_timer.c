/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timer encodings of droce_wire_timer.h against the spec, written by hand:
 * the RNR NAK timer field (IBTA Vol. 1 9.7.5.2, table "Encoding for RNR NAK
 * Timer Field") and the local ACK timeout (IBTA 9.7: 4.096 us * 2^timeout,
 * 0 meaning infinite).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdint.h>

#include <droce_wire.h>

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------- RNR NAK timer */

struct rnr_code {
	uint8_t code;
	uint32_t usec;
	const char *spec; /* as the IBTA table prints it */
};

static const struct rnr_code rnr_spec[] = {
	{0, 655360, "655.36 ms"},  {1, 10, "0.01 ms"},        {2, 20, "0.02 ms"},
	{3, 30, "0.03 ms"},        {4, 40, "0.04 ms"},        {5, 60, "0.06 ms"},
	{6, 80, "0.08 ms"},        {7, 120, "0.12 ms"},       {8, 160, "0.16 ms"},
	{9, 240, "0.24 ms"},       {10, 320, "0.32 ms"},      {11, 480, "0.48 ms"},
	{12, 640, "0.64 ms"},      {13, 960, "0.96 ms"},      {14, 1280, "1.28 ms"},
	{15, 1920, "1.92 ms"},     {16, 2560, "2.56 ms"},     {17, 3840, "3.84 ms"},
	{18, 5120, "5.12 ms"},     {19, 7680, "7.68 ms"},     {20, 10240, "10.24 ms"},
	{21, 15360, "15.36 ms"},   {22, 20480, "20.48 ms"},   {23, 30720, "30.72 ms"},
	{24, 40960, "40.96 ms"},   {25, 61440, "61.44 ms"},   {26, 81920, "81.92 ms"},
	{27, 122880, "122.88 ms"}, {28, 163840, "163.84 ms"}, {29, 245760, "245.76 ms"},
	{30, 327680, "327.68 ms"}, {31, 491520, "491.52 ms"},
};

Test(rnr_timer, field_has_32_codes)
{
	cr_expect_eq(DROCE_RNR_TIMER_CODES, 32, "the RNR NAK timer field is 5 bits");
	cr_expect_eq(DIM(rnr_spec), 32, "the spec table above lists every code");
}

Test(rnr_timer, every_code)
{
	size_t i;

	for (i = 0; i < DIM(rnr_spec); i++) {
		uint32_t got = droce_rnr_timer_to_usec(rnr_spec[i].code);

		cr_expect_eq(got, rnr_spec[i].usec, "RNR code %u is %" PRIu32 " us, want %s",
			     rnr_spec[i].code, got, rnr_spec[i].spec);
	}
}

Test(rnr_timer, table_matches_function)
{
	size_t i;

	for (i = 0; i < DIM(rnr_spec); i++)
		cr_expect_eq(droce_rnr_timer_usec[rnr_spec[i].code], rnr_spec[i].usec,
			     "droce_rnr_timer_usec[%u] is %" PRIu32 ", want %s", rnr_spec[i].code,
			     droce_rnr_timer_usec[rnr_spec[i].code], rnr_spec[i].spec);
}

/* Code 0 is the longest wait; codes 1..31 grow strictly. */
Test(rnr_timer, ordering)
{
	uint8_t c;

	for (c = 1; c < 31; c++)
		cr_expect_lt(droce_rnr_timer_to_usec(c), droce_rnr_timer_to_usec(c + 1),
			     "RNR code %u waits less than code %u", c, c + 1);
	for (c = 1; c < 32; c++)
		cr_expect_gt(droce_rnr_timer_to_usec(0), droce_rnr_timer_to_usec(c),
			     "RNR code 0 waits longer than code %u", c);
}

/* A wider byte (a whole AETH syndrome, say) is read through its low 5 bits, inside the table. */
Test(rnr_timer, wider_codes_use_low_five_bits)
{
	unsigned int v;

	for (v = 32; v <= 0xff; v++)
		cr_expect_eq(droce_rnr_timer_to_usec((uint8_t)v), rnr_spec[v & 0x1f].usec,
			     "RNR code 0x%02x reads as code %u", v, v & 0x1f);
	cr_expect_eq(droce_rnr_timer_to_usec(DROCE_AETH_RNR_NAK | 14), 1280,
		     "syndrome RNR NAK | 14 reads 1.28 ms");
}

/* ------------------------------------------------------ local ACK timeout */

Test(ack_timeout, zero_is_infinite)
{
	cr_expect_eq(droce_ack_timeout_ns(0), 0, "timeout 0 disables the timer (returns 0)");
}

Test(ack_timeout, spec_anchors)
{
	cr_expect_eq(droce_ack_timeout_ns(1), UINT64_C(8192), "timeout 1 is 8.192 us");
	cr_expect_eq(droce_ack_timeout_ns(2), UINT64_C(16384), "timeout 2 is 16.384 us");
	cr_expect_eq(droce_ack_timeout_ns(8), UINT64_C(1048576), "timeout 8 is 1.048576 ms");
	cr_expect_eq(droce_ack_timeout_ns(14), UINT64_C(67108864), "timeout 14 is 67.108864 ms");
	cr_expect_eq(droce_ack_timeout_ns(18), UINT64_C(1073741824), "timeout 18 is 1.074 s");
	cr_expect_eq(droce_ack_timeout_ns(31), UINT64_C(8796093022208), "timeout 31 is 8796.09 s");
}

/* 4.096 us times 2^t, computed by repeated doubling for every t of the field. */
Test(ack_timeout, every_code)
{
	uint64_t want = 4096;
	uint8_t t;

	for (t = 1; t < 32; t++) {
		want *= 2;
		cr_expect_eq(droce_ack_timeout_ns(t), want,
			     "timeout %u is %" PRIu64 " ns, want %" PRIu64 " ns", t,
			     droce_ack_timeout_ns(t), want);
	}
}

/* The timeout is a 5-bit field: a wider value means what its low 5 bits mean (0x20 is infinite). */
Test(ack_timeout, wider_values_use_low_five_bits)
{
	unsigned int v;

	for (v = 32; v <= 0xff; v++)
		cr_expect_eq(droce_ack_timeout_ns((uint8_t)v), droce_ack_timeout_ns(v & 0x1f),
			     "timeout 0x%02x is %" PRIu64 " ns, timeout %u is %" PRIu64 " ns", v,
			     droce_ack_timeout_ns((uint8_t)v), v & 0x1f,
			     droce_ack_timeout_ns(v & 0x1f));
}
