/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tokens of droce-pmd's commands, a token type of DPDK's cmdline library
 * built from one word of a command's syntax: "show" (that word), "rc|uc|ud"
 * (one of them), "<port>", "<qp>", "<stream>" (a number; completion offers the
 * ones that exist), "all|<port>" (either), "<file>" (any word), and "[...]" (the
 * rest of the line, options the command parses). The parsed word lands in the
 * command's result at the token's offset.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <cmdline_parse.h>

#include "droce_pmd.h"

#define CHOICES_MAX 8

enum token_arg {
	ARG_NONE,   /* only the choices */
	ARG_WORD,   /* any word */
	ARG_PORT,   /* a number; completion: the ports */
	ARG_QP,     /* a number; completion: the QPs */
	ARG_STREAM, /* a number; completion: the streams */
	ARG_REST,   /* the rest of the command */
};

struct token {
	struct cmdline_token_hdr hdr;
	enum token_arg arg;
	unsigned int n_choices;
	char *choices[CHOICES_MAX];
	char label[PMD_WORD_LEN];
};

/* the parser's ends: a blank ends a word; a comment or the end of the line ends both */
static bool end_of_command(char c)
{
	return c == '\0' || c == '#' || c == '\n' || c == '\r';
}

static bool end_of_word(char c)
{
	return end_of_command(c) || c == ' ' || c == '\t';
}

static bool all_digits(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return len > 0;
}

static int token_parse(cmdline_parse_token_hdr_t *hdr, const char *buf, void *res,
		       unsigned int ressize)
{
	const struct token *t = (const struct token *)hdr;
	size_t len = 0;
	bool ok = false;

	if (t->arg == ARG_REST) {
		while (!end_of_command(buf[len]))
			len++;
		while (len > 0 && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
			len--;
		ok = len > 0;
	} else {
		while (!end_of_word(buf[len]))
			len++;
		for (unsigned int i = 0; i < t->n_choices && !ok; i++)
			ok = strlen(t->choices[i]) == len && strncmp(buf, t->choices[i], len) == 0;
		if (!ok && len > 0)
			ok = t->arg == ARG_WORD ||
			     ((t->arg == ARG_PORT || t->arg == ARG_QP || t->arg == ARG_STREAM) &&
			      all_digits(buf, len));
	}
	if (!ok || len >= PMD_WORD_LEN)
		return -1;
	if (res != NULL) {
		if (ressize < len + 1)
			return -1;
		memcpy(res, buf, len);
		((char *)res)[len] = '\0';
	}
	return (int)len;
}

/* The numbers completion offers for an argument: ports, QPs or streams that exist. */
static unsigned int ids_of(enum token_arg arg, unsigned int *ids, unsigned int max)
{
	struct pmd_stream *s[PMD_STREAMS_MAX];
	unsigned int n = 0;

	switch (arg) {
	case ARG_PORT:
		for (unsigned int i = 0; i < pmd_n_ports && n < max; i++)
			ids[n++] = i;
		break;
	case ARG_QP:
		for (unsigned int i = 0; i < PMD_QPS_MAX && n < max; i++)
			if (pmd_qps[i].used)
				ids[n++] = i;
		break;
	case ARG_STREAM:
		/* the console alone adds and removes records: no lock needed to list them */
		for (unsigned int i = 0, k = pmd_streams(s, PMD_STREAMS_MAX); i < k && n < max; i++)
			ids[n++] = s[i]->id;
		break;
	default:
		break;
	}
	return n;
}

static int token_complete_nb(cmdline_parse_token_hdr_t *hdr)
{
	const struct token *t = (const struct token *)hdr;
	unsigned int ids[PMD_QPS_MAX + PMD_STREAMS_MAX];

	return (int)(t->n_choices + ids_of(t->arg, ids, sizeof(ids) / sizeof(ids[0])));
}

static int token_complete_elt(cmdline_parse_token_hdr_t *hdr, int idx, char *dst, unsigned int size)
{
	const struct token *t = (const struct token *)hdr;
	unsigned int ids[PMD_QPS_MAX + PMD_STREAMS_MAX], n;

	if (idx < 0)
		return -1;
	if ((unsigned int)idx < t->n_choices)
		return snprintf(dst, size, "%s", t->choices[idx]) < (int)size ? 0 : -1;
	n = ids_of(t->arg, ids, sizeof(ids) / sizeof(ids[0]));
	idx -= (int)t->n_choices;
	if ((unsigned int)idx >= n)
		return -1;
	return snprintf(dst, size, "%u", ids[idx]) < (int)size ? 0 : -1;
}

static int token_help(cmdline_parse_token_hdr_t *hdr, char *dst, unsigned int size)
{
	const struct token *t = (const struct token *)hdr;

	snprintf(dst, size, "%s", t->label);
	return 0;
}

static struct cmdline_token_ops token_ops = {
	.parse = token_parse,
	.complete_get_nb = token_complete_nb,
	.complete_get_elt = token_complete_elt,
	.get_help = token_help,
};

static enum token_arg arg_of(const char *name, size_t len)
{
	if (len == 4 && strncmp(name, "port", 4) == 0)
		return ARG_PORT;
	if (len == 2 && strncmp(name, "qp", 2) == 0)
		return ARG_QP;
	if (len == 6 && strncmp(name, "stream", 6) == 0)
		return ARG_STREAM;
	return ARG_WORD;
}

struct cmdline_token_hdr *pmd_token_new(const char *word, unsigned int index, bool rest)
{
	struct token *t = calloc(1, sizeof(*t));
	const char *p = word;

	if (t == NULL)
		return NULL;
	t->hdr.ops = &token_ops;
	t->hdr.offset = index * PMD_WORD_LEN;
	snprintf(t->label, sizeof(t->label), "%s", word);
	if (rest) {
		t->arg = ARG_REST;
		return &t->hdr;
	}
	while (*p != '\0') {
		size_t len = strcspn(p, "|");

		if (p[0] == '<' && len > 2 && p[len - 1] == '>')
			t->arg = arg_of(p + 1, len - 2);
		else if (t->n_choices < CHOICES_MAX)
			t->choices[t->n_choices++] = strndup(p, len);
		p += len + (p[len] == '|');
	}
	return &t->hdr;
}
