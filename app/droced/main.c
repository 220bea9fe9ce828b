/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced: the droce daemon (doc/daemon.md). Owns the DPDK ports and the
 * engine's lcores and serves applications over a UNIX socket; runs in the
 * foreground (systemd: droced.service), logs to stderr, stops on SIGTERM or
 * SIGINT after flushing every application's work requests.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "droce_daemon.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: droced [-c FILE] [options]\n"
		   "  -c, --config FILE       read FILE (key = value lines; doc/daemon.md)\n"
		   "  -s, --socket PATH       listen on PATH (default /run/droce/droced.sock)\n"
		   "  -d, --device DEV        a device, NAME:key=value,... (repeatable)\n"
		   "  -o, --set KEY=VALUE     any configuration key (repeatable)\n"
		   "  -h, --help              this text\n"
		   "Options apply after the file, in order.\n");
}

static int set_kv(struct droce_daemon_conf *c, const char *kv)
{
	char key[64], err[256];
	const char *eq = strchr(kv, '=');

	if (eq == NULL || (size_t)(eq - kv) >= sizeof(key)) {
		fprintf(stderr, "droced: --set %s: not KEY=VALUE\n", kv);
		return -1;
	}
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = '\0';
	if (droce_daemon_conf_set(c, key, eq + 1, err, sizeof(err)) != 0) {
		fprintf(stderr, "droced: %s\n", err);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"socket", required_argument, NULL, 's'},
		{"device", required_argument, NULL, 'd'}, {"set", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	struct droce_daemon_conf conf;
	struct droce_daemon *d;
	struct rlimit nofile;
	char err[512], buf[600];
	sigset_t stop;
	int opt, sfd, rc;

	droce_daemon_conf_init(&conf);
	/* the file first, so that options given after it override it: a pass of its own, which
	 * sees it however it is spelt (-c FILE, -cFILE, --config FILE, --config=FILE) */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "c:s:d:o:h", opts, NULL)) != -1)
		if (opt == 'c' && droce_daemon_conf_load(&conf, optarg, err, sizeof(err)) != 0) {
			fprintf(stderr, "droced: %s\n", err);
			return 2;
		}
	opterr = 1;
	optind = 0; /* glibc: start over */
	while ((opt = getopt_long(argc, argv, "c:s:d:o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			break; /* read above */
		case 's':
			snprintf(buf, sizeof(buf), "socket=%s", optarg);
			if (set_kv(&conf, buf) != 0)
				return 2;
			break;
		case 'd':
			snprintf(buf, sizeof(buf), "device=%s", optarg);
			if (set_kv(&conf, buf) != 0)
				return 2;
			break;
		case 'o':
			if (set_kv(&conf, optarg) != 0)
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	/* each queue and channel of every application holds descriptors here: all we may have */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &nofile) != 0)
			perror("droced: RLIMIT_NOFILE");
	}
	/* SIGTERM and SIGINT end the loop through a signalfd: a clean stop, not a kill */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &stop, SFD_CLOEXEC);
	if (sfd < 0) {
		perror("droced: signalfd");
		return 1;
	}
	d = droce_daemon_start(&conf);
	if (d == NULL)
		return 1;
	rc = droce_daemon_run(d, sfd);
	fprintf(stderr, "droced: stopping (%u application%s connected)\n", droce_daemon_clients(d),
		droce_daemon_clients(d) == 1 ? "" : "s");
	droce_daemon_stop(d);
	close(sfd);
	return rc == 0 ? 0 : 1;
}
