/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The application's end of droced (doc/daemon.md): with DROCE_DAEMON set, the
 * devices are droced's and every object is created there. Each context is one
 * connection to droced's socket; its requests go one at a time. What the
 * engine shares with the application (rings, control words, the async event
 * ring) comes back as memfds and is mapped here, so posting and polling are
 * the same loads and stores as with the embedded engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "droce_dproto.h"
#include "verbs_priv.h"

static const char *socket_path(void)
{
	const char *p = getenv("DROCE_DAEMON");

	if (p == NULL || p[0] == '\0' || strcmp(p, "0") == 0)
		return NULL;
	if (strcmp(p, "1") == 0 || strcmp(p, "default") == 0)
		return DROCE_DPROTO_SOCKET_DEFAULT;
	return p;
}

bool droce_remote_mode(void)
{
	return socket_path() != NULL;
}

static int remote_connect(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	const char *path = socket_path();
	int s;

	if (path == NULL || strlen(path) >= sizeof(a.sun_path))
		return -EINVAL;
	memcpy(a.sun_path, path, strlen(path) + 1);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) != 0) {
		int err = errno;

		close(s);
		return -err;
	}
	return s;
}

/* One request and its reply on @p sock. 0 or -errno (droced's refusal as its errno). */
static int call_sock(int sock, uint32_t *seq, uint32_t op, uint32_t handle, const void *req,
		     size_t req_len, int fd_in, void *rep, size_t rep_len, uint32_t *handle_out,
		     int *fd_out)
{
	struct droce_dproto_hdr h = {.op = op, .seq = ++*seq, .handle = handle};
	uint8_t body[DROCE_DPROTO_MSG_MAX];
	int fds[DROCE_DPROTO_FDS_MAX];
	unsigned int nfds = DROCE_DPROTO_FDS_MAX;
	ssize_t n;
	int rc;

	if (fd_out != NULL)
		*fd_out = -1;
	rc = droce_dproto_send(sock, &h, req, req_len, fd_in >= 0 ? &fd_in : NULL,
			       fd_in >= 0 ? 1 : 0);
	if (rc != 0)
		return rc == -ECONNRESET || rc == -ENOTCONN ? -EPIPE : rc;
	n = droce_dproto_recv(sock, &h, body, sizeof(body), fds, &nfds);
	if (n < 0)
		return n == -ECONNRESET ? -EPIPE : (int)n;
	rc = 0;
	/* droced answers 0 or a positive errno in the header (doc/daemon.md) */
	if (h.op != op || h.seq != *seq || h.status < 0)
		rc = -EPROTO;
	else if (h.status != 0)
		rc = -h.status;
	else if ((size_t)n != rep_len || nfds > (fd_out != NULL ? 1u : 0u))
		rc = -EPROTO;
	/* a reply that creates must name what it created: 0 is no handle */
	if (rc == 0 && handle_out != NULL && h.handle == 0)
		rc = -EPROTO;
	if (rc == 0) {
		memcpy(rep, body, rep_len);
		if (handle_out != NULL)
			*handle_out = h.handle;
		if (fd_out != NULL && nfds == 1) {
			*fd_out = fds[0];
			nfds = 0;
		}
	}
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	return rc;
}

int droce_remote_call(struct droce_context *c, uint32_t op, uint32_t handle, const void *req,
		      size_t req_len, int fd_in, void *rep, size_t rep_len, uint32_t *handle_out,
		      int *fd_out)
{
	struct droce_remote *r = c->remote;
	int rc;

	if (r == NULL)
		return -EPIPE;
	pthread_mutex_lock(&r->lock);
	rc = call_sock(r->sock, &r->seq, op, handle, req, req_len, fd_in, rep, rep_len, handle_out,
		       fd_out);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

static void device_to_cfg(const struct droce_dproto_device *d, struct droce_port_cfg *c)
{
	memset(c, 0, sizeof(*c));
	memcpy(c->name, d->name, sizeof(c->name));
	c->name[sizeof(c->name) - 1] = '\0';
	memcpy(c->mac, d->mac, 6);
	c->eth_mtu = d->eth_mtu;
	c->speed_mbps = 0; /* droced reports the speed on every query */
	c->n_ipv4 = d->n_ipv4 < DROCE_PORT_ADDR_MAX ? d->n_ipv4 : DROCE_PORT_ADDR_MAX;
	memcpy(c->ipv4, d->ipv4, sizeof(c->ipv4[0]) * c->n_ipv4);
	c->n_ipv6 = d->n_ipv6 < DROCE_PORT_ADDR_MAX ? d->n_ipv6 : DROCE_PORT_ADDR_MAX;
	memcpy(c->ipv6, d->ipv6, sizeof(c->ipv6[0]) * c->n_ipv6);
}

int droce_remote_devices(struct droce_port_cfg *cfg, int max)
{
	struct droce_dproto_hello_req req = {.version = DROCE_DPROTO_VERSION};
	static struct droce_dproto_hello_rep rep; /* under the devices lock */
	uint32_t seq = 0;
	int s = remote_connect(), rc;

	if (s < 0) {
		fprintf(stderr, "droce: cannot reach droced at %s: %s\n", socket_path(),
			strerror(-s));
		return s;
	}
	rc = call_sock(s, &seq, DPROTO_HELLO, 0, &req, sizeof(req), -1, &rep, sizeof(rep), NULL,
		       NULL);
	close(s);
	if (rc == 0 && rep.version != DROCE_DPROTO_VERSION)
		rc = -EPROTO;
	if (rc != 0) {
		fprintf(stderr, "droce: droced at %s refused us: %s\n", socket_path(),
			strerror(-rc));
		return rc;
	}
	if (rep.n_devices > DROCE_DPROTO_DEVICES_MAX)
		return -EPROTO;
	for (uint32_t i = 0; i < rep.n_devices && (int)i < max; i++)
		device_to_cfg(&rep.dev[i], &cfg[i]);
	return (int)rep.n_devices < max ? (int)rep.n_devices : max;
}

static int remote_open(struct droce_context *c)
{
	struct droce_dproto_open_req req = {.device = c->dev->remote_index};
	struct droce_dproto_open_rep rep;
	struct droce_dproto_shm s = {0};
	struct droce_remote *r = calloc(1, sizeof(*r));
	int fd = -1, rc;

	if (r == NULL)
		return -ENOMEM;
	r->events.fd = -1;
	r->sock = remote_connect();
	if (r->sock < 0) {
		rc = r->sock;
		free(r);
		return rc;
	}
	pthread_mutex_init(&r->lock, NULL);
	/* droced counts the events it publishes on our async_fd */
	rc = call_sock(r->sock, &r->seq, DPROTO_OPEN, 0, &req, sizeof(req), c->async_efd, &rep,
		       sizeof(rep), NULL, &fd);
	if (rc == 0 && fd < 0)
		rc = -EPROTO;
	if (rc == 0) {
		s.len = rep.ring_len;
		s.ring_len[0] = rep.ring_len;
		rc = droce_remote_map(fd, &s, &r->events);
		fd = -1;
	}
	if (rc == 0)
		rc = droce_ring_cons_attach(&r->ev, r->events.addr, r->events.len);
	if (rc == 0 && r->ev.slot_size != sizeof(struct droce_dproto_event))
		rc = -EPROTO;
	if (rc != 0) {
		if (fd >= 0)
			close(fd);
		droce_shm_free(&r->events);
		close(r->sock);
		pthread_mutex_destroy(&r->lock);
		free(r);
		return rc;
	}
	c->remote = r;
	return 0;
}

static void remote_close(struct droce_context *c)
{
	struct droce_remote *r = c->remote;

	if (r == NULL)
		return;
	/* droced releases whatever this context still holds when the socket closes */
	close(r->sock);
	droce_shm_free(&r->events);
	pthread_mutex_destroy(&r->lock);
	free(r->objs);
	free(r);
	c->remote = NULL;
}

int droce_remote_map(int fd, const struct droce_dproto_shm *s, struct droce_shm *m)
{
	struct stat st;
	void *addr;

	m->addr = NULL;
	m->fd = -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || s->len == 0 ||
	    (uint64_t)st.st_size < s->len || s->len > SIZE_MAX) {
		close(fd);
		return -EPROTO;
	}
	for (int i = 0; i < 2; i++)
		if (s->ring_off[i] > s->len || s->ring_len[i] > s->len - s->ring_off[i]) {
			close(fd);
			return -EPROTO;
		}
	addr = mmap(NULL, (size_t)s->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED) {
		int err = errno;

		close(fd);
		return -err;
	}
	m->addr = addr;
	m->len = (size_t)s->len;
	m->fd = fd;
	return 0;
}

void droce_remote_bind(struct droce_context *c, uint32_t handle, void *obj,
		       enum droce_remote_kind kind)
{
	struct droce_remote *r = c->remote;

	if (r == NULL || handle == 0)
		return;
	pthread_mutex_lock(&c->async_lock);
	if (handle >= r->n_objs && kind != DROCE_REMOTE_NONE) {
		uint32_t n = r->n_objs ? r->n_objs : 64;
		struct droce_remote_obj *v;

		while (n <= handle)
			n *= 2;
		v = realloc(r->objs, n * sizeof(*v));
		if (v != NULL) {
			memset(v + r->n_objs, 0, (n - r->n_objs) * sizeof(*v));
			r->objs = v;
			r->n_objs = n;
		}
	}
	if (handle < r->n_objs)
		r->objs[handle] = (struct droce_remote_obj){.obj = obj, .kind = kind};
	pthread_mutex_unlock(&c->async_lock);
}

/* The object of @p kind behind @p handle, NULL when gone or of another kind. */
static void *remote_obj(const struct droce_remote *r, uint32_t handle, enum droce_remote_kind kind)
{
	if (handle >= r->n_objs || r->objs[handle].kind != kind)
		return NULL;
	return r->objs[handle].obj;
}

/* The object an event of droced names, under async_lock; false when it is gone. */
static bool event_element(struct droce_remote *r, const struct droce_dproto_event *e,
			  struct ibv_async_event *ev)
{
	void *obj;

	memset(ev, 0, sizeof(*ev));
	ev->event_type = (enum ibv_event_type)e->event_type;
	switch (droce_dproto_event_element(ev->event_type)) {
	case DPROTO_ELEMENT_CQ:
		obj = remote_obj(r, e->handle, DROCE_REMOTE_CQ);
		if (obj != NULL)
			ev->element.cq = droce_cq_ibcq(obj);
		return obj != NULL;
	case DPROTO_ELEMENT_QP:
		obj = remote_obj(r, e->handle, DROCE_REMOTE_QP);
		if (obj != NULL)
			ev->element.qp = &((struct droce_qp *)obj)->qpx.qp_base;
		return obj != NULL;
	case DPROTO_ELEMENT_SRQ:
		obj = remote_obj(r, e->handle, DROCE_REMOTE_SRQ);
		if (obj != NULL)
			ev->element.srq = &((struct droce_srq *)obj)->ibsrq;
		return obj != NULL;
	case DPROTO_ELEMENT_PORT:
		ev->element.port_num = (int)e->handle;
		return true;
	case DPROTO_ELEMENT_DEVICE:
		return true;
	default:
		return false;
	}
}

static void remote_async_pull(struct droce_context *c)
{
	struct droce_remote *r = c->remote;
	int avail;

	if (r == NULL)
		return;
	pthread_mutex_lock(&c->async_lock);
	avail = droce_ring_cons_avail(&r->ev);
	for (int i = 0; i < avail; i++) {
		struct droce_dproto_event e;
		struct ibv_async_event ev;

		/* copy first: droced writes the ring */
		memcpy(&e, droce_ring_cons_slot(&r->ev, (uint32_t)i), sizeof(e));
		if (event_element(r, &e, &ev) && droce_async_queue(c, &ev) == 0)
			continue;
		/* an object already destroyed, or no memory: take back its count */
		int fl = fcntl(c->async_efd, F_GETFL);
		uint64_t v;

		fcntl(c->async_efd, F_SETFL, fl | O_NONBLOCK);
		if (read(c->async_efd, &v, sizeof(v)) < 0)
			(void)0; /* a reader took it: it finds no event, reads again */
		fcntl(c->async_efd, F_SETFL, fl);
	}
	if (avail > 0)
		droce_ring_cons_release(&r->ev, (uint32_t)avail);
	pthread_mutex_unlock(&c->async_lock);
}

static bool remote_query_port(struct droce_context *c, bool *link_up, uint32_t *speed_mbps)
{
	struct droce_dproto_port_rep rep;

	if (droce_remote_call(c, DPROTO_QUERY_PORT, 0, NULL, 0, -1, &rep, sizeof(rep), NULL,
			      NULL) != 0)
		return false;
	*link_up = rep.dev.link_up != 0;
	*speed_mbps = rep.dev.speed_mbps;
	return true;
}

/* One step in droced's neighbour table: droced never waits on the wire for one client. */
static int remote_resolve_l2(struct droce_context *c, const union ibv_gid *gid, uint8_t mac[6])
{
	struct droce_dproto_resolve_req req = {.gid = *gid};
	struct droce_dproto_resolve_rep rep;
	int rc = droce_remote_call(c, DPROTO_RESOLVE_L2, 0, &req, sizeof(req), -1, &rep,
				   sizeof(rep), NULL, NULL);

	if (rc == 0)
		memcpy(mac, rep.mac, 6);
	return rc;
}

const struct droce_backend_ops droce_remote_ops = {
	.name = "droced",
	.open = remote_open,
	.close = remote_close,
	.query_port = remote_query_port,
	.resolve_l2 = remote_resolve_l2,
	.async_pull = remote_async_pull,
	.alloc_pd = droce_remote_alloc_pd,
	.dealloc_pd = droce_remote_dealloc_pd,
	.reg_mr = droce_remote_reg_mr,
	.rereg_mr = droce_remote_rereg_mr,
	.dereg_mr = droce_remote_dereg_mr,
	.alloc_mw = droce_remote_alloc_mw,
	.dealloc_mw = droce_remote_dealloc_mw,
	.create_channel = droce_remote_create_channel,
	.destroy_channel = droce_remote_destroy_channel,
	.channel_join = droce_remote_channel_join,
	.channel_forget = droce_remote_channel_forget,
	.get_cq_event = droce_remote_get_cq_event,
	.create_cq = droce_remote_create_cq,
	.destroy_cq = droce_remote_destroy_cq,
	.create_srq = droce_remote_create_srq,
	.destroy_srq = droce_remote_destroy_srq,
	.create_qp = droce_remote_create_qp,
	.modify_qp = droce_remote_modify_qp,
	.destroy_qp = droce_remote_destroy_qp,
	.create_ah = droce_remote_create_ah,
	.destroy_ah = droce_remote_destroy_ah,
};
