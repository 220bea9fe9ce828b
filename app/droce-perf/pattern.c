/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The payload of every message when --check is on: a function of the QP, the
 * message number and the offset, so that a stale, misplaced or torn message
 * shows. The last byte is the message's tag: never 0 (fresh buffers) and never
 * the previous message's, which latency tests poll for.
 */
#include <inttypes.h>

#include "droce_perf.h"

static uint32_t seed_of(unsigned int qp, uint64_t msg)
{
	uint32_t x = (uint32_t)msg * 2654435761u ^ (uint32_t)(msg >> 32) ^ (qp + 1) * 0x9e3779b9u;

	x ^= x >> 15;
	return x * 0x85ebca6bu;
}

static uint8_t tag_of(uint64_t msg)
{
	return (uint8_t)(msg % 255 + 1);
}

uint8_t perf_pattern_byte(unsigned int qp, uint64_t msg, uint32_t len, uint32_t off)
{
	uint32_t s = seed_of(qp, msg);

	if (off == len - 1)
		return tag_of(msg);
	return (uint8_t)((s >> 24) + off * 31u + (off >> 8) * 7u);
}

void perf_pattern_fill(uint8_t *p, uint32_t len, unsigned int qp, uint64_t msg)
{
	uint32_t s = seed_of(qp, msg);
	uint8_t b = (uint8_t)(s >> 24);

	if (len == 0)
		return;
	/* byte i: (s >> 24) + 31 i + 7 (i >> 8), built incrementally */
	for (uint32_t i = 0; i < len - 1; i++) {
		p[i] = b;
		b = (uint8_t)(b + 31u + ((i + 1) % 256 == 0 ? 7u : 0u));
	}
	p[len - 1] = tag_of(msg);
}

int64_t perf_pattern_find_error(const uint8_t *p, uint32_t len, unsigned int qp, uint64_t msg)
{
	uint32_t s = seed_of(qp, msg);
	uint8_t b = (uint8_t)(s >> 24);

	if (len == 0)
		return -1;
	for (uint32_t i = 0; i < len - 1; i++) {
		if (p[i] != b)
			return i;
		b = (uint8_t)(b + 31u + ((i + 1) % 256 == 0 ? 7u : 0u));
	}
	return p[len - 1] == tag_of(msg) ? -1 : (int64_t)len - 1;
}

bool perf_pattern_tail_arrived(const uint8_t *p, uint32_t len, unsigned int qp, uint64_t msg)
{
	uint32_t from = len > 8 ? len - 8 : 0;

	for (uint32_t i = from; i < len; i++)
		if (__atomic_load_n(&p[i], __ATOMIC_ACQUIRE) != perf_pattern_byte(qp, msg, len, i))
			return false;
	return true;
}

int perf_pattern_report(unsigned int qp, uint64_t msg, const uint8_t *p, uint32_t len)
{
	int64_t at = perf_pattern_find_error(p, len, qp, msg);

	if (at < 0)
		return 0;
	fprintf(stderr,
		"droce-perf: data check failed: QP %u message %" PRIu64 " (%u bytes): byte %" PRId64
		" is 0x%02x, expected 0x%02x\n",
		qp, msg, len, at, p[at], perf_pattern_byte(qp, msg, len, (uint32_t)at));
	return -1;
}

/*
 * The engine places a packet's bytes in no promised order (a memcpy may write
 * the end first), so a message whose tag is there may still be landing: wait
 * up to @p wait_ns for all of it before calling it wrong.
 */
int perf_pattern_await(const uint8_t *p, uint32_t len, unsigned int qp, uint64_t msg,
		       uint64_t wait_ns)
{
	uint64_t t0 = perf_now_ns();

	for (;;) {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (perf_pattern_find_error(p, len, qp, msg) < 0)
			return 0;
		if (perf_now_ns() - t0 > wait_ns)
			return perf_pattern_report(qp, msg, p, len);
	}
}
