/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-pmd: a testpmd-like console on droce's own API. It opens every droce
 * device (DROCE_DEVICES, --devices, or two ports joined by a link), then runs
 * commands: interactively on DPDK's cmdline, or in batch mode from -f FILE,
 * -c 'CMD; CMD', the words after --, or a pipe. Exit status 0 when every
 * command succeeded, 1 when one failed (batch mode: the rest is skipped unless
 * -k) or the ports did not come up, 2 on a usage error.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "droce_pmd.h"

/* two ports joined back to back, as droce-perf --loopback */
#define DEFAULT_DEVICES                                                \
	"droce0:mac=02:d0:0c:00:00:01,ip=10.99.0.1,mtu=4200,link=pmd " \
	"droce1:mac=02:d0:0c:00:00:02,ip=10.99.0.2,mtu=4200,link=pmd"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: droce-pmd [options] [-- COMMAND...]\n"
		"  -d, --devices=LIST    the devices (DROCE_DEVICES syntax, doc/verbs.md); "
		"default\n"
		"                        DROCE_DEVICES, else two ports joined by a link\n"
		"  -f, --file=FILE       run the commands of FILE (batch mode)\n"
		"  -c, --commands=CMDS   run these commands, separated by ';' (batch mode)\n"
		"  -k, --keep-going      batch mode: go on after a command failed (exit status 1)\n"
		"  -i, --interactive     the console after the batch commands\n"
		"  -q, --quiet           batch mode: do not echo the commands\n"
		"  -h, --help            -V, --version\n"
		"Words after -- are commands too (';' between them). Without a batch command the\n"
		"console is interactive (commands piped in run as a batch). 'help' lists the\n"
		"commands (doc/tools.md).\n");
}

static void on_signal(int sig)
{
	(void)sig;
	pmd_interrupted = 1;
}

static void signals_catch(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: a blocked read returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int parse(int argc, char **argv, struct pmd_opts *o)
{
	static const struct option longs[] = {
		{"devices", required_argument, NULL, 'd'},
		{"file", required_argument, NULL, 'f'},
		{"commands", required_argument, NULL, 'c'},
		{"keep-going", no_argument, NULL, 'k'},
		{"interactive", no_argument, NULL, 'i'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "+d:f:c:kiqhV", longs, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->devices = optarg;
			break;
		case 'f':
			o->file = optarg;
			break;
		case 'c':
			o->commands = optarg;
			break;
		case 'k':
			o->keep_going = true;
			break;
		case 'i':
			o->interactive = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			printf("droce-pmd %s\n", DROCE_VERSION);
			return -1;
		default:
			usage(stderr);
			return PMD_EXIT_USAGE;
		}
	}
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0) {
		fprintf(stderr, "droce-pmd: '%s': commands go after -- or in -c\n", argv[optind]);
		usage(stderr);
		return PMD_EXIT_USAGE;
	}
	o->words = argv + optind;
	o->n_words = argc - optind;
	return 0;
}

int main(int argc, char **argv)
{
	struct pmd_opts o;
	int rc = parse(argc, argv, &o);
	bool batch;

	if (rc != 0)
		return rc < 0 ? PMD_EXIT_OK : rc;
	/* before the first verbs call: it reads DROCE_DEVICES once */
	if (o.devices != NULL)
		setenv("DROCE_DEVICES", o.devices, 1);
	else if (getenv("DROCE_DEVICES") == NULL)
		setenv("DROCE_DEVICES", DEFAULT_DEVICES, 1);
	srand48((long)time(NULL) ^ (long)getpid());
	signals_catch();
	batch = o.file != NULL || o.commands != NULL || o.n_words > 0 || !isatty(STDIN_FILENO);
	rc = PMD_EXIT_FAIL;
	if (pmd_ports_open() != 0 || pmd_stream_thread_start() != 0 || pmd_console_init() != 0)
		goto out;
	if (batch) {
		rc = pmd_console_batch(&o);
	} else {
		printf("droce-pmd: %u ports; help lists the commands, Tab completes them\n",
		       pmd_n_ports);
		pmd_console_interact();
		rc = PMD_EXIT_OK;
	}
out:
	fflush(stdout);
	pmd_streams_stop_all();
	pmd_stream_thread_stop();
	pmd_lock();
	pmd_qps_destroy_all();
	pmd_unlock();
	pmd_streams_free_all();
	pmd_console_fini();
	pmd_ports_close();
	return rc;
}
