/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The text form of a port's faults (DROCE_DEVICES fault=, droce-pmd's set fault):
 * items kind:value joined by '+', doc/fault-injection.md "In the engine".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_priv.h"

/* Longest specification: what a DROCE_DEVICES entry can carry. */
#define SPEC_MAX 512

static int parse_rate(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *s == '\0' || *end != '\0' || !(v >= 0.0 && v <= 1.0)) /* NaN fails */
		return -EINVAL;
	*out = v;
	return 0;
}

int droce_engine_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (s == NULL || out == NULL || *s < '0' || *s > '9')
		return -EINVAL; /* strtoul would take a sign or white space */
	errno = 0;
	v = strtoul(s, &end, 10); /* decimal: "0100" is 100, not octal */
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *s == '\0' || *s == '-' || *end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

/* drop_at:N/N-M...: frame indices, '/' between items (',' separates DROCE_DEVICES' keys). */
static int parse_drop_at(struct droce_engine_fault_conf *f, char *s)
{
	struct droce_fault_range r[DROCE_ENGINE_FAULT_AT_MAX];
	int n;

	for (char *c = s; *c != '\0'; c++)
		if (*c == '/')
			*c = ',';
	n = droce_fault_ranges_parse(s, r, DROCE_ENGINE_FAULT_AT_MAX);
	if (n <= 0)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		f->drop_at[i].first = r[i].first;
		f->drop_at[i].last = r[i].last;
	}
	f->n_drop_at = (unsigned int)n;
	return 0;
}

static int parse_item(struct droce_engine_fault_conf *f, const char *kind, char *v)
{
	if (strcmp(kind, "drop") == 0)
		return parse_rate(v, &f->drop);
	if (strcmp(kind, "drop_at") == 0)
		return parse_drop_at(f, v);
	if (strcmp(kind, "dup") == 0)
		return parse_rate(v, &f->dup);
	if (strcmp(kind, "reorder") == 0)
		return parse_rate(v, &f->reorder);
	if (strcmp(kind, "corrupt") == 0)
		return parse_rate(v, &f->corrupt);
	if (strcmp(kind, "delay") == 0)
		return parse_rate(v, &f->delay);
	if (strcmp(kind, "after") == 0)
		return droce_engine_parse_u32(v, 1, 1024, &f->reorder_after);
	if (strcmp(kind, "reorder_us") == 0)
		return droce_engine_parse_u32(v, 1, 1000000, &f->reorder_max_us);
	if (strcmp(kind, "delay_us") == 0)
		return droce_engine_parse_u32(v, 1, 1000000, &f->delay_us);
	if (strcmp(kind, "seed") == 0)
		return parse_u64(v, &f->seed);
	if (strcmp(kind, "match") == 0) {
		if (strcmp(v, "roce") != 0 && strcmp(v, "all") != 0)
			return -EINVAL;
		f->roce_only = strcmp(v, "roce") == 0;
		return 0;
	}
	return -EINVAL;
}

int droce_engine_fault_parse(const char *spec, struct droce_engine_fault_conf *conf)
{
	struct droce_engine_fault_conf f = {.enabled = true};
	char copy[SPEC_MAX], *item, *save = NULL;

	if (spec == NULL || conf == NULL ||
	    (size_t)snprintf(copy, sizeof(copy), "%s", spec) >= sizeof(copy))
		return -EINVAL;
	for (item = strtok_r(copy, "+", &save); item != NULL; item = strtok_r(NULL, "+", &save)) {
		char *v = strchr(item, ':');
		int rc;

		if (v == NULL)
			return -EINVAL;
		*v++ = '\0';
		rc = parse_item(&f, item, v);
		if (rc != 0)
			return rc;
	}
	*conf = f;
	return 0;
}
