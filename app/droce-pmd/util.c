/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers of droce-pmd: error messages, time, numbers, names. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "droce_pmd.h"

volatile sig_atomic_t pmd_interrupted;

int pmd_err(const char *fmt, ...)
{
	va_list ap;

	/* what the command printed so far comes first, whatever buffers the two streams */
	fflush(stdout);
	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	return -1;
}

uint64_t pmd_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

void pmd_sleep_ns(uint64_t ns)
{
	struct timespec t = {.tv_sec = (time_t)(ns / 1000000000ull),
			     .tv_nsec = (long)(ns % 1000000000ull)};

	nanosleep(&t, NULL);
}

int pmd_parse_u64(const char *word, const char *what, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(word, &end, 10);
	if (end != word && end[0] != '\0' && end[1] == '\0') {
		switch (end[0]) {
		case 'k':
		case 'K':
			shift = 10;
			end++;
			break;
		case 'm':
		case 'M':
			shift = 20;
			end++;
			break;
		case 'g':
		case 'G':
			shift = 30;
			end++;
			break;
		default:
			break;
		}
	}
	if (errno != 0 || end == word || *end != '\0' || word[0] == '-' ||
	    (shift != 0 && v > (UINT64_MAX >> shift)) || (v << shift) < min || (v << shift) > max)
		return pmd_err("bad %s '%s': a whole number from %llu to %llu (K, M, G: 2^10, "
			       "2^20, 2^30)",
			       what, word, (unsigned long long)min, (unsigned long long)max);
	*out = (uint64_t)v << shift;
	return 0;
}

int pmd_parse_seconds(const char *word, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(word, &end);
	if (errno != 0 || end == word || *end != '\0' || !(v >= 0.0 && v <= max))
		return pmd_err("bad seconds '%s': a number from 0 to %g", word, max);
	*out = v;
	return 0;
}

const char *pmd_qp_type_name(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	default:
		return "?";
	}
}

const char *pmd_qp_state_name(enum ibv_qp_state s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
		[IBV_QPS_RTS] = "RTS",     [IBV_QPS_SQD] = "SQD",   [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) && names[s] != NULL ? names[s]
										      : "?";
}
