/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The console on DPDK's cmdline library, as testpmd's: one cmdline instance
 * per command syntax (two when it ends in options), parsed and completed by the
 * library; the interactive console reads the terminal through the library's
 * line editor (history, tab completion, the [RETURN] help of a double tab).
 * Lines run through one function in both modes, which tells a line that
 * matches no command apart from a command that failed, and says why.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_rdline.h>

#include "droce_pmd.h"

#define PROMPT "droce-pmd> "

bool pmd_quit;

/* what the tokens of a command write: one word each, at index * PMD_WORD_LEN */
struct words {
	char w[PMD_WORDS_MAX][PMD_WORD_LEN];
};
static_assert(sizeof(struct words) <= CMDLINE_PARSE_RESULT_BUFSIZE, "the parser's result buffer");

static cmdline_parse_ctx_t *ctx;
static struct cmdline *cl;
static int status; /* of the command the parser ran last */

static void dispatch(void *result, struct cmdline *c, void *data)
{
	const struct pmd_cmd *cmd = data;
	struct words *r = result;
	char *argv[PMD_WORDS_MAX * 2];
	int argc = 0;

	(void)c;
	/* the words, and the optional rest split into its own words */
	for (unsigned int i = 0; i < PMD_WORDS_MAX && r->w[i][0] != '\0'; i++) {
		char *save = NULL;

		for (char *w = strtok_r(r->w[i], " \t", &save);
		     w != NULL && argc < (int)(sizeof(argv) / sizeof(argv[0])) - 1;
		     w = strtok_r(NULL, " \t", &save))
			argv[argc++] = w;
	}
	argv[argc] = NULL;
	status = cmd->fn(argc, argv);
	fflush(stdout);
}

/* One cmdline instance of @p cmd; with_rest: its trailing [options] too. */
static cmdline_parse_inst_t *inst_new(const struct pmd_cmd *cmd, bool with_rest)
{
	char syntax[512], *save = NULL, *w;
	const char *rest = strchr(cmd->syntax, '[');
	unsigned int n = 0;
	cmdline_parse_inst_t *inst =
		calloc(1, sizeof(*inst) + (PMD_WORDS_MAX + 1) * sizeof(inst->tokens[0]));

	if (inst == NULL)
		return NULL;
	inst->f = dispatch;
	inst->data = (void *)(uintptr_t)cmd;
	inst->help_str = cmd->help;
	snprintf(syntax, sizeof(syntax), "%.*s",
		 rest != NULL ? (int)(rest - cmd->syntax) : (int)strlen(cmd->syntax), cmd->syntax);
	for (w = strtok_r(syntax, " ", &save); w != NULL && n < PMD_WORDS_MAX - 1;
	     w = strtok_r(NULL, " ", &save)) {
		inst->tokens[n] = pmd_token_new(w, n, false);
		n++;
	}
	if (with_rest) {
		inst->tokens[n] = pmd_token_new(rest, n, true);
		n++;
	}
	for (unsigned int i = 0; i < n; i++)
		if (inst->tokens[i] == NULL)
			return NULL;
	return inst;
}

int pmd_console_init(void)
{
	unsigned int n = 0;

	ctx = calloc(2 * pmd_n_cmds + 1, sizeof(*ctx));
	if (ctx == NULL)
		return pmd_err("out of memory");
	for (unsigned int i = 0; i < pmd_n_cmds; i++) {
		ctx[n] = inst_new(&pmd_cmds[i], false);
		if (ctx[n++] == NULL)
			return pmd_err("out of memory");
		if (strchr(pmd_cmds[i].syntax, '[') != NULL) {
			ctx[n] = inst_new(&pmd_cmds[i], true);
			if (ctx[n++] == NULL)
				return pmd_err("out of memory");
		}
	}
	/* parsing and completion only: the console writes through its own line editor */
	cl = cmdline_new(ctx, PROMPT, -1, -1);
	if (cl == NULL)
		return pmd_err("cmdline_new failed");
	return 0;
}

void pmd_console_fini(void)
{
	if (cl != NULL)
		cmdline_free(cl);
	cl = NULL;
}

/* How many leading literal words of @p syntax the words of @p line match. */
static unsigned int literal_match(const char *syntax, char *const *words, unsigned int n)
{
	char copy[512], *save = NULL, *w;
	unsigned int k = 0;

	snprintf(copy, sizeof(copy), "%s", syntax);
	for (w = strtok_r(copy, " ", &save); w != NULL && k < n; w = strtok_r(NULL, " ", &save)) {
		if (strchr(w, '<') != NULL || strchr(w, '|') != NULL || w[0] == '[' ||
		    strcmp(w, words[k]) != 0)
			break;
		k++;
	}
	return k;
}

/* A line no command matches: the usage of the commands it begins like, or where to look. */
static int usage_error(const char *line)
{
	char copy[1024], *words[PMD_WORDS_MAX], *save = NULL, *w;
	unsigned int n = 0, best = 0;

	snprintf(copy, sizeof(copy), "%s", line);
	for (w = strtok_r(copy, " \t", &save); w != NULL && n < PMD_WORDS_MAX;
	     w = strtok_r(NULL, " \t", &save))
		words[n++] = w;
	for (unsigned int i = 0; i < pmd_n_cmds; i++) {
		unsigned int k = literal_match(pmd_cmds[i].syntax, words, n);

		best = k > best ? k : best;
	}
	if (best == 0)
		return pmd_err("unknown command '%s' (help lists the commands)", words[0]);
	fflush(stdout);
	fprintf(stderr, "error: bad arguments: '%s'; usage:\n", line);
	for (unsigned int i = 0; i < pmd_n_cmds; i++)
		if (literal_match(pmd_cmds[i].syntax, words, n) == best)
			fprintf(stderr, "  %s\n", pmd_cmds[i].syntax);
	fflush(stderr);
	return -1;
}

int pmd_console_exec(const char *line)
{
	char buf[1024];
	size_t len;
	int rc;

	line += strspn(line, " \t");
	len = strcspn(line, "\r\n");
	if (len == 0 || line[0] == '#')
		return 0;
	if (len + 2 > sizeof(buf))
		return pmd_err("a command of %zu characters: %zu at most", len, sizeof(buf) - 2);
	/* the parser runs a line once it sees its end */
	memcpy(buf, line, len);
	buf[len] = '\n';
	buf[len + 1] = '\0';
	status = 0;
	rc = cmdline_parse(cl, buf);
	if (rc == CMDLINE_PARSE_AMBIGUOUS)
		return pmd_err("ambiguous command '%.*s'", (int)len, line);
	if (rc < 0) {
		buf[len] = '\0';
		return usage_error(buf);
	}
	return status;
}

/* ------------------------------------------------------------ batch mode */

/* Run the commands of @p text separated by ';'; -1 once one failed and we stop. */
static int run_text(const struct pmd_opts *o, char *text, bool *failed)
{
	char *save = NULL;

	for (char *c = strtok_r(text, ";", &save); c != NULL; c = strtok_r(NULL, ";", &save)) {
		size_t len;

		c += strspn(c, " \t");
		len = strcspn(c, "\r\n");
		while (len > 0 && (c[len - 1] == ' ' || c[len - 1] == '\t'))
			len--;
		c[len] = '\0';
		if (len == 0 || c[0] == '#')
			continue;
		if (!o->quiet) {
			printf("%s%s\n", PROMPT, c);
			fflush(stdout);
		}
		if (pmd_console_exec(c) != 0) {
			*failed = true;
			if (!o->keep_going)
				return -1;
		}
		if (pmd_interrupted) {
			*failed = true;
			return -1;
		}
		if (pmd_quit)
			return -1;
	}
	return 0;
}

static int run_stream(const struct pmd_opts *o, FILE *f, bool *failed)
{
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;

	while (rc == 0 && getline(&line, &cap, f) >= 0)
		rc = run_text(o, line, failed);
	free(line);
	return rc;
}

int pmd_console_batch(const struct pmd_opts *o)
{
	bool failed = false;
	int rc = 0;

	if (o->file != NULL) {
		FILE *f = fopen(o->file, "r");

		if (f == NULL) {
			pmd_err("%s: %s", o->file, strerror(errno));
			return PMD_EXIT_USAGE;
		}
		rc = run_stream(o, f, &failed);
		fclose(f);
	}
	if (rc == 0 && o->commands != NULL) {
		char *text = strdup(o->commands);

		rc = text != NULL ? run_text(o, text, &failed) : -1;
		free(text);
	}
	if (rc == 0 && o->n_words > 0) {
		size_t len = 1;
		char *text;

		for (int i = 0; i < o->n_words; i++)
			len += strlen(o->words[i]) + 1;
		text = calloc(1, len);
		for (int i = 0; text != NULL && i < o->n_words; i++) {
			strcat(text, o->words[i]);
			strcat(text, " ");
		}
		rc = text != NULL ? run_text(o, text, &failed) : -1;
		free(text);
	}
	if (rc == 0 && o->file == NULL && o->commands == NULL && o->n_words == 0)
		rc = run_stream(o, stdin, &failed); /* commands piped in */
	if (rc == 0 && o->interactive && !pmd_quit)
		pmd_console_interact();
	return failed ? PMD_EXIT_FAIL : PMD_EXIT_OK;
}

/* ------------------------------------------------------------ interactive */

static int rl_write(struct rdline *rdl, char c)
{
	(void)rdl;
	return write(STDOUT_FILENO, &c, 1) == 1 ? 0 : -1;
}

static void rl_validate(struct rdline *rdl, const char *buf, unsigned int size)
{
	(void)rdl;
	(void)size;
	pmd_console_exec(buf);
}

static int rl_complete(struct rdline *rdl, const char *buf, char *dst, unsigned int size,
		       int *state)
{
	(void)rdl;
	return cmdline_complete(cl, buf, state, dst, size);
}

void pmd_console_interact(void)
{
	struct termios saved, raw;
	bool tty = tcgetattr(STDIN_FILENO, &saved) == 0;
	struct rdline *rdl = rdline_new(rl_write, rl_validate, rl_complete, NULL);

	if (rdl == NULL) {
		pmd_err("rdline_new failed");
		return;
	}
	if (tty) {
		/* characters one by one, echoed by the line editor */
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	rdline_newline(rdl, PROMPT);
	while (!pmd_quit && !pmd_interrupted) {
		char c;
		ssize_t r = read(STDIN_FILENO, &c, 1);
		int rc;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		rc = rdline_char_in(rdl, c);
		if (rc == RDLINE_RES_VALIDATED) {
			const char *line = rdline_get_buffer(rdl);
			const char *last = rdline_get_history_item(rdl, 0);
			size_t len = strcspn(line, "\n");

			if (len > 0 &&
			    (last == NULL || strlen(last) != len || strncmp(last, line, len) != 0))
				rdline_add_history(rdl, line);
			if (!pmd_quit)
				rdline_newline(rdl, PROMPT);
		} else if (rc == RDLINE_RES_EOF || rc == RDLINE_RES_EXITED) {
			break;
		}
	}
	if (tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	printf("\n");
	rdline_free(rdl);
}
