/* SPDX-License-Identifier: BSD-3-Clause */
/* Stream commands: start stream, stop stream, wait stream, show stream. */
#include <stdlib.h>
#include <string.h>

#include "droce_pmd.h"

#define SIZE_MAX_BYTES (1ull << 30)
#define COUNT_MAX      (1ull << 62)
#define RATE_MAX       1000000000ull

static const char *const op_words[] = {
	[PMD_OP_WRITE] = "write",
	[PMD_OP_READ] = "read",
	[PMD_OP_SEND] = "send",
	[PMD_OP_ATOMIC] = "atomic",
};

/* rate R, count N, in any order */
static int parse_options(int argc, char **argv, double *rate, uint64_t *count)
{
	for (int i = 0; i < argc; i += 2) {
		uint64_t v;

		if (strcmp(argv[i], "rate") != 0 && strcmp(argv[i], "count") != 0)
			return pmd_err("unknown option '%s': rate <msg/s>, count <n>", argv[i]);
		if (i + 1 == argc)
			return pmd_err("%s needs a value", argv[i]);
		if (strcmp(argv[i], "rate") == 0) {
			if (pmd_parse_u64(argv[i + 1], "rate", 1, RATE_MAX, &v) != 0)
				return -1;
			*rate = (double)v;
		} else {
			if (pmd_parse_u64(argv[i + 1], "count", 1, COUNT_MAX, &v) != 0)
				return -1;
			*count = v;
		}
	}
	return 0;
}

int pmd_cmd_stream_start(int argc, char **argv)
{
	enum pmd_op op = PMD_OP_WRITE;
	uint64_t size, depth, count = 0;
	struct pmd_stream *s;
	struct pmd_qp *q;
	double rate = 0;

	for (unsigned int i = 0; i < sizeof(op_words) / sizeof(op_words[0]); i++)
		if (strcmp(argv[3], op_words[i]) == 0)
			op = (enum pmd_op)i;
	if (pmd_parse_u64(argv[5], "size", 1, SIZE_MAX_BYTES, &size) != 0 ||
	    pmd_parse_u64(argv[7], "depth", 1, PMD_QP_WR, &depth) != 0 ||
	    parse_options(argc - 8, argv + 8, &rate, &count) != 0)
		return -1;
	pmd_lock();
	q = pmd_qp_get(argv[2]);
	s = q != NULL ? pmd_stream_start(q, op, (uint32_t)size, (uint32_t)depth, rate, count)
		      : NULL;
	if (s != NULL) {
		printf("stream %u: qp %u -> qp %u, %s %s, size %u, depth %u", s->id, s->req_id,
		       s->resp_id, pmd_qp_type_name(s->type), pmd_op_name(s->op), s->size,
		       s->depth);
		if (rate > 0)
			printf(", rate %.0f msg/s", rate);
		if (count > 0)
			printf(", count %llu", (unsigned long long)count);
		printf(": started, data %s\n", s->checked ? "checked" : "not checked");
	}
	pmd_unlock();
	return s != NULL ? 0 : -1;
}

/*
 * Streams named by @p word: an id, or "all": those running and those that ended
 * since stop or wait last reported them (a script sees each stream's totals once,
 * whichever command it ended under). The count, or -1.
 */
static int select_streams(const char *word, struct pmd_stream **out)
{
	struct pmd_stream *s[PMD_STREAMS_MAX];
	unsigned int n;
	int k = 0;
	uint64_t id;

	if (strcmp(word, "all") == 0) {
		n = pmd_streams(s, PMD_STREAMS_MAX);
		for (unsigned int i = 0; i < n; i++)
			if (!pmd_stream_finished(s[i]) || !s[i]->reported)
				out[k++] = s[i];
		return k;
	}
	id = strtoull(word, NULL, 10); /* the token took digits only */
	out[0] = id <= UINT32_MAX ? pmd_stream_by_id((unsigned int)id) : NULL;
	if (out[0] == NULL)
		return pmd_err("no stream %s (show stream lists them)", word);
	return 1;
}

/* Wait until every one of @p s has ended; then print their totals. 0, or -1 if one failed. */
static int wait_and_report(struct pmd_stream **s, int n)
{
	char line[512];
	bool waiting = true;
	int rc = 0;

	while (waiting) {
		waiting = false;
		pmd_lock();
		for (int i = 0; i < n; i++)
			waiting = waiting || !pmd_stream_finished(s[i]);
		pmd_unlock();
		if (!waiting)
			break;
		if (pmd_interrupted)
			return pmd_err("interrupted");
		pmd_sleep_ns(1000000);
	}
	pmd_lock();
	for (int i = 0; i < n; i++) {
		pmd_stream_format(s[i], line, sizeof(line));
		printf("%s\n", line);
		s[i]->reported = true;
	}
	for (int i = 0; i < n; i++)
		if (s[i]->state == PMD_STREAM_FAILED)
			rc = pmd_err("stream %u failed: %s", s[i]->id, s[i]->error);
	pmd_unlock();
	return rc;
}

int pmd_cmd_stream_stop(int argc, char **argv)
{
	struct pmd_stream *s[PMD_STREAMS_MAX];
	int n;

	(void)argc;
	pmd_lock();
	n = select_streams(argv[2], s);
	for (int i = 0; i < n; i++)
		pmd_stream_request_stop(s[i]);
	pmd_unlock();
	if (n < 0)
		return -1;
	if (n == 0) {
		printf("no stream to report\n");
		return 0;
	}
	return wait_and_report(s, n);
}

int pmd_cmd_stream_wait(int argc, char **argv)
{
	struct pmd_stream *s[PMD_STREAMS_MAX];
	int n, rc = 0;

	(void)argc;
	pmd_lock();
	n = select_streams(argv[2], s);
	for (int i = 0; i < n && rc == 0; i++)
		if (s[i]->count == 0 && !pmd_stream_finished(s[i]))
			rc = pmd_err("stream %u has no count: it runs until stop stream %u",
				     s[i]->id, s[i]->id);
	pmd_unlock();
	if (n < 0 || rc != 0)
		return -1;
	if (n == 0) {
		printf("no stream to report\n");
		return 0;
	}
	return wait_and_report(s, n);
}

int pmd_cmd_stream_show(int argc, char **argv)
{
	struct pmd_stream *s[PMD_STREAMS_MAX];
	unsigned int n;
	uint64_t now = pmd_now_ns();

	(void)argc;
	(void)argv;
	pmd_lock();
	n = pmd_streams(s, PMD_STREAMS_MAX);
	if (n == 0) {
		pmd_unlock();
		printf("  (no stream: start stream <qp> write|read|send|atomic size <bytes> depth "
		       "<n>)\n");
		return 0;
	}
	printf("  id  qp      type  op      size      depth  state     messages      bytes      "
	       "    errors  check-errors  lost      msg/s       MB/s\n");
	for (unsigned int i = 0; i < n; i++) {
		const struct pmd_stream *t = s[i];
		uint64_t end = t->t_end_ns != 0 ? t->t_end_ns : now;
		double secs = (double)(end - t->t_start_ns) / 1e9;
		char qps[16], check[24];

		snprintf(qps, sizeof(qps), "%u->%u", t->req_id, t->resp_id);
		if (t->checked)
			snprintf(check, sizeof(check), "%llu", (unsigned long long)t->check_errors);
		else
			snprintf(check, sizeof(check), "unchecked");
		printf("  %-3u %-7s %-5s %-7s %-9u %-6u %-9s %-13llu %-14llu %-7llu %-13s %-9llu "
		       "%-11.0f %.2f\n",
		       t->id, qps, pmd_qp_type_name(t->type), pmd_op_name(t->op), t->size, t->depth,
		       pmd_stream_state_name(t->state), (unsigned long long)t->completed,
		       (unsigned long long)t->bytes, (unsigned long long)t->errors, check,
		       (unsigned long long)t->lost, secs > 0 ? (double)t->completed / secs : 0.0,
		       secs > 0 ? (double)t->bytes / secs / 1048576.0 : 0.0);
	}
	for (unsigned int i = 0; i < n; i++)
		if (s[i]->error[0] != '\0')
			printf("  stream %u: %s\n", s[i]->id, s[i]->error);
	pmd_unlock();
	return 0;
}
