/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Payload of stream messages: 8-byte words mixed from the stream, the message
 * number and the word's index, so that a message in another's place, a stale
 * buffer or a shifted copy all differ. A numbered message carries its number
 * in its first 8 bytes: UC and UD receivers learn which message arrived.
 */
#include <string.h>

#include "droce_pmd.h"

static inline uint64_t word_of(uint32_t seed, uint64_t msg, uint64_t i)
{
	uint64_t z =
		((uint64_t)seed << 40 ^ msg) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;

	z ^= z >> 31;
	z *= 0x94d049bb133111ebull;
	z ^= z >> 29;
	return z;
}

static inline uint64_t word_at(uint32_t seed, uint64_t msg, bool numbered, uint64_t i)
{
	return numbered && i == 0 ? msg : word_of(seed, msg, i);
}

void pmd_pattern_fill(uint8_t *p, uint32_t len, uint32_t seed, uint64_t msg, bool numbered)
{
	uint32_t off = 0;
	uint64_t i = 0;

	for (; off + 8 <= len; off += 8, i++) {
		uint64_t w = word_at(seed, msg, numbered, i);

		memcpy(p + off, &w, 8);
	}
	if (off < len) {
		uint64_t w = word_at(seed, msg, numbered, i);

		memcpy(p + off, &w, len - off);
	}
}

int64_t pmd_pattern_check(const uint8_t *p, uint32_t len, uint32_t seed, uint64_t msg,
			  bool numbered)
{
	uint32_t off = 0;
	uint64_t i = 0;

	for (; off < len; off += 8, i++) {
		uint64_t w = word_at(seed, msg, numbered, i);
		uint32_t n = len - off < 8 ? len - off : 8;

		if (memcmp(p + off, &w, n) != 0) {
			const uint8_t *b = (const uint8_t *)&w;

			for (uint32_t k = 0; k < n; k++)
				if (p[off + k] != b[k])
					return off + k;
		}
	}
	return -1;
}

uint64_t pmd_pattern_number(const uint8_t *p)
{
	uint64_t n;

	memcpy(&n, p, 8);
	return n;
}
