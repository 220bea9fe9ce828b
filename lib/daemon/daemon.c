/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced's loop (doc/daemon.md): the engine runs on its own lcores; this one
 * thread listens on the socket, serves control requests one at a time and
 * forwards async events. Nothing here is on the data path: applications post
 * and poll through rings the engine reads and writes directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon_priv.h"

/* How long a connection may stay without an open device. */
#define UNOPENED_MS 10000u
#include "droce_engine.h"

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* Pass the configuration to droce's verbs layer, which starts the engine. */
static int engine_env(const struct droce_daemon_conf *c)
{
	char devices[DROCE_DAEMON_DEVICES_MAX * 512 + 16] = "", eal[600] = "", n[16];

	for (unsigned int i = 0; i < c->n_devices; i++) {
		strcat(devices, i ? ";" : "");
		strcat(devices, c->device[i]);
	}
	if (c->memory_mb != 0)
		snprintf(eal + strlen(eal), sizeof(eal) - strlen(eal), "-m %u ", c->memory_mb);
	snprintf(eal + strlen(eal), sizeof(eal) - strlen(eal), "%s", c->eal_args);
	/* droced is the engine: it never reaches another droced */
	unsetenv("DROCE_DAEMON");
	if (setenv("DROCE_DEVICES", devices, 1) != 0)
		return -errno;
	if (eal[0] != '\0' && setenv("DROCE_EAL_ARGS", eal, 1) != 0)
		return -errno;
	if (c->lcores != 0) {
		snprintf(n, sizeof(n), "%u", c->lcores);
		if (setenv("DROCE_LCORES", n, 1) != 0)
			return -errno;
	}
	if (c->idle_sleep_us >= 0) {
		snprintf(n, sizeof(n), "%d", c->idle_sleep_us);
		if (setenv("DROCE_IDLE_SLEEP_US", n, 1) != 0)
			return -errno;
	}
	return 0;
}

/* A socket file left by a droced that died is removed; a live one is not taken over. */
static int socket_take(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct stat st;
	int s, rc;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	memcpy(a.sun_path, path, strlen(path) + 1);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	rc = connect(s, (struct sockaddr *)&a, sizeof(a));
	close(s);
	if (rc == 0)
		return -EADDRINUSE;
	return unlink(path) == 0 ? 0 : -errno;
}

static int listen_on(struct droce_daemon *d)
{
	const struct droce_daemon_conf *c = &d->conf;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char dir[sizeof(c->socket_path)], *slash;
	int s, rc;

	snprintf(dir, sizeof(dir), "%s", c->socket_path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return -errno;
	}
	rc = socket_take(c->socket_path);
	if (rc != 0)
		return rc;
	memcpy(a.sun_path, c->socket_path, strlen(c->socket_path) + 1);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -errno;
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 64) != 0)
		goto fail;
	/* who may connect: the socket file's owner, group and mode (doc/daemon.md) */
	if (chmod(c->socket_path, c->socket_mode) != 0)
		goto fail;
	if (c->socket_gid != (gid_t)-1 && chown(c->socket_path, (uid_t)-1, c->socket_gid) != 0)
		goto fail;
	d->listen_fd = s;
	return 0;
fail:
	rc = -errno;
	close(s);
	unlink(c->socket_path);
	return rc;
}

static int epoll_add(struct droce_daemon *d, int fd, struct dtag *tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

struct droce_daemon *droce_daemon_start(const struct droce_daemon_conf *conf)
{
	struct droce_daemon *d = calloc(1, sizeof(*d));
	int rc;

	if (d == NULL)
		return NULL;
	d->conf = *conf;
	pthread_mutex_init(&d->list_lock, NULL);
	d->listen_fd = -1;
	d->epfd = -1;
	d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (conf->n_devices == 0) {
		fprintf(stderr, "droced: no device configured\n");
		goto fail;
	}
	/* the socket first: a second droced must not start DPDK on the first one's ports */
	rc = listen_on(d);
	if (rc != 0) {
		fprintf(stderr, "droced: %s: %s\n", conf->socket_path,
			rc == -EADDRINUSE ? "another droced serves it" : strerror(-rc));
		goto fail;
	}
	/* the telemetry commands answer from the EAL's start on (an empty list until the
	 * loop serves clients): registered before it, as DPDK's own libraries do */
	dtelemetry_register(d);
	rc = engine_env(conf);
	if (rc != 0)
		goto fail;
	d->devs = ibv_get_device_list(&d->n_devs);
	if (d->devs == NULL || d->n_devs <= 0) {
		fprintf(stderr, "droced: no device: check the device lines\n");
		goto fail;
	}
	d->root = calloc((size_t)d->n_devs, sizeof(*d->root));
	if (d->root == NULL)
		goto fail;
	/* the first open starts the engine on every port */
	for (int i = 0; i < d->n_devs; i++) {
		d->root[i] = ibv_open_device(d->devs[i]);
		if (d->root[i] == NULL) {
			fprintf(stderr, "droced: %s: %s\n", ibv_get_device_name(d->devs[i]),
				strerror(errno));
			goto fail;
		}
	}
	if (!droce_engine_running()) {
		fprintf(stderr, "droced: the engine did not start\n");
		goto fail;
	}
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->listen_tag.type = TAG_LISTEN;
	if (d->epfd < 0 || epoll_add(d, d->listen_fd, &d->listen_tag) != 0)
		goto fail;
	fprintf(stderr, "droced: serving %d device%s on %s\n", d->n_devs, d->n_devs == 1 ? "" : "s",
		conf->socket_path);
	return d;
fail:
	droce_daemon_stop(d);
	return NULL;
}

static void client_accept(struct droce_daemon *d)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct dclient *c;
	int s = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (s < 0 && (errno == EMFILE || errno == ENFILE) && d->spare_fd >= 0) {
		/*
		 * Out of descriptors: the connection would stay queued and the listening
		 * socket readable, and the loop would spin on it. Take it with the spare
		 * descriptor and close it: the application sees droced refuse it.
		 */
		if (!d->out_of_fds)
			fprintf(stderr, "droced: out of file descriptors: refusing connections\n");
		d->out_of_fds = true;
		close(d->spare_fd);
		s = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (s >= 0)
			close(s);
		d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return;
	}
	if (s < 0)
		return;
	d->out_of_fds = false;
	if (d->n_clients >= d->conf.max_clients ||
	    getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
		close(s); /* the application sees its connection closed: EPIPE */
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(s);
		return;
	}
	c->d = d;
	c->id = ++d->next_id;
	c->sock = s;
	c->pid = cred.pid;
	c->uid = cred.uid;
	c->app_efd = -1;
	c->since_ms = now_ms();
	c->sock_tag = (struct dtag){.type = TAG_SOCK, .client = c};
	c->async_tag = (struct dtag){.type = TAG_ASYNC, .client = c};
	if (epoll_add(d, s, &c->sock_tag) != 0) {
		close(s);
		free(c);
		return;
	}
	pthread_mutex_lock(&d->list_lock);
	c->next = d->clients;
	d->clients = c;
	d->n_clients++;
	pthread_mutex_unlock(&d->list_lock);
}

static void client_close(struct droce_daemon *d, struct dclient *c)
{
	struct dclient **p;

	/* off the list before it is freed: the telemetry thread walks the list */
	pthread_mutex_lock(&d->list_lock);
	for (p = &d->clients; *p != NULL; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	d->n_clients--;
	pthread_mutex_unlock(&d->list_lock);
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->sock, NULL);
	if (c->ctx != NULL)
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->ctx->async_fd, NULL);
	if (c->ctx != NULL)
		fprintf(stderr, "droced: application pid %d closed: %u objects released\n",
			(int)c->pid, c->live);
	dclient_free(c);
}

static void client_readable(struct droce_daemon *d, struct dclient *c)
{
	bool had_ctx = c->ctx != NULL;

	if (!dclient_serve(c)) {
		client_close(d, c);
		return;
	}
	/* a context just opened: its events are forwarded from now on */
	if (!had_ctx && c->ctx != NULL && epoll_add(d, c->ctx->async_fd, &c->async_tag) != 0)
		client_close(d, c);
}

/*
 * A connection that has not opened a device within UNOPENED_MS holds a place of
 * max_clients for nothing (an application lists the devices and opens them at
 * once): it is closed. true when one was.
 */
static bool close_unopened(struct droce_daemon *d)
{
	uint64_t now = now_ms();
	bool closed = false;

	for (struct dclient *c = d->clients, *next; c != NULL; c = next) {
		next = c->next;
		if (c->ctx == NULL && now - c->since_ms > UNOPENED_MS) {
			client_close(d, c);
			closed = true;
		}
	}
	return closed;
}

int droce_daemon_run(struct droce_daemon *d, int stop_fd)
{
	struct dtag stop_tag = {.type = TAG_LISTEN, .client = NULL};
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &stop_tag};
	int rc = devents_guard_init(d);

	if (rc != 0)
		return rc;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, stop_fd, &ev) != 0)
		return -errno;
	for (;;) {
		struct epoll_event evs[32];
		bool throttled = false, closed = false, unopened = false;
		int n;

		for (struct dclient *c = d->clients; c != NULL; c = c->next) {
			throttled |= c->ev_throttled;
			unopened |= c->ctx == NULL;
		}
		/* a full event ring is retried every 10 ms until its application takes some;
		 * connections that never open a device are looked at every second */
		n = epoll_wait(d->epfd, evs, 32, throttled ? 10 : unopened ? 1000 : -1);
		__atomic_store_n(&d->loop_passes, d->loop_passes + 1, __ATOMIC_RELAXED);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (unopened)
			closed |= close_unopened(d);
		for (struct dclient *c = d->clients, *next; throttled && c != NULL; c = next) {
			next = c->next;
			if (c->ev_throttled && !devents_forward(c)) {
				client_close(d, c);
				closed = true;
			}
		}
		/* events of this batch may be a closed client's: epoll reports the rest again */
		if (closed)
			continue;
		for (int i = 0; i < n; i++) {
			struct dtag *t = evs[i].data.ptr;

			if (t == &stop_tag) {
				epoll_ctl(d->epfd, EPOLL_CTL_DEL, stop_fd, NULL);
				return 0;
			}
			if (t->type == TAG_LISTEN) {
				client_accept(d);
			} else if (t->type == TAG_ASYNC) {
				/* as below: a client closed here ends the batch */
				if (!devents_forward(t->client)) {
					client_close(d, t->client);
					break;
				}
			} else {
				/* the client may close here: later events of this batch about
				 * it are stale, so the batch ends with it */
				struct dclient *c = t->client;
				bool gone = (evs[i].events & (EPOLLHUP | EPOLLERR)) &&
					    !(evs[i].events & EPOLLIN);

				if (gone) {
					client_close(d, c);
					break;
				}
				unsigned int before = d->n_clients;

				client_readable(d, c);
				if (d->n_clients != before)
					break;
			}
		}
	}
}

unsigned int droce_daemon_clients(const struct droce_daemon *d)
{
	return d->n_clients;
}

void droce_daemon_stop(struct droce_daemon *d)
{
	if (d == NULL)
		return;
	dtelemetry_unregister();
	/* every application's WRs are flushed to its CQs before it loses droced */
	for (struct dclient *c = d->clients; c != NULL; c = c->next)
		dclient_flush_qps(c);
	while (d->clients != NULL)
		client_close(d, d->clients);
	if (d->listen_fd >= 0) {
		close(d->listen_fd);
		unlink(d->conf.socket_path);
	}
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->guard_ok)
		timer_delete(d->guard);
	if (d->spare_fd >= 0)
		close(d->spare_fd);
	for (int i = 0; d->root != NULL && i < d->n_devs; i++)
		if (d->root[i] != NULL)
			ibv_close_device(d->root[i]);
	free(d->root);
	if (d->devs != NULL)
		ibv_free_device_list(d->devs);
	pthread_mutex_destroy(&d->list_lock);
	free(d);
}
