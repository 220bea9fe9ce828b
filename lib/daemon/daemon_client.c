/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One application connection (doc/daemon.md): its requests, each checked
 * before droced's own verbs call runs it, and its objects, released when the
 * connection closes however the application ended. Handles are indices in
 * the connection's own table: an application can name only its own objects,
 * and the verbs layer checks that keys and AHs belong to the QP's PD.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon_priv.h"
#include "droce_mr.h"
#include "droce_shared.h"
#include "droce_verbs_engine.h"
#include "droce_verbs_export.h"

/* A request being served: the message, the descriptors it brought, the reply. */
struct dreq {
	struct droce_dproto_hdr h;
	uint8_t body[DROCE_DPROTO_MSG_MAX];
	size_t len;
	int fds[DROCE_DPROTO_FDS_MAX];
	unsigned int nfds;
	/* the reply */
	uint8_t rep[DROCE_DPROTO_MSG_MAX];
	size_t rep_len;
	uint32_t rep_handle;
	int rep_fd; /* sent, not owned */
};

uint32_t dclient_handle_of(const struct dclient *c, enum dobj_kind kind, const void *ptr)
{
	for (uint32_t h = 1; h < c->n_objs; h++)
		if (c->objs[h].kind == kind && c->objs[h].ptr == ptr)
			return h;
	return 0;
}

/* The object behind a handle the application sent, if it is of @p kind. */
static struct dobj *lookup(struct dclient *c, uint32_t handle, enum dobj_kind kind)
{
	if (handle == 0 || handle >= c->n_objs || c->objs[handle].kind != kind)
		return NULL;
	return &c->objs[handle];
}

static void *lookup_ptr(struct dclient *c, uint32_t handle, enum dobj_kind kind)
{
	struct dobj *o = lookup(c, handle, kind);

	return o != NULL ? o->ptr : NULL;
}

/* A free handle for a new object, 0 when the connection has its share. */
static uint32_t handle_new(struct dclient *c)
{
	uint32_t h;

	/* a connection's share, and all of droced's: no one application takes every mapping */
	if (c->live >= c->d->conf.max_objects || c->d->live_objects >= c->d->conf.max_objects_total)
		return 0;
	for (h = 1; h < c->n_objs; h++)
		if (c->objs[h].kind == DOBJ_FREE)
			return h;
	if (c->n_objs >= UINT32_MAX / 2)
		return 0;
	uint32_t n = c->n_objs ? c->n_objs * 2 : 64;
	struct dobj *v = realloc(c->objs, n * sizeof(*v));

	if (v == NULL)
		return 0;
	memset(v + c->n_objs, 0, (n - c->n_objs) * sizeof(*v));
	c->objs = v;
	h = c->n_objs ? c->n_objs : 1;
	c->n_objs = n;
	return h;
}

static uint32_t handle_set(struct dclient *c, uint32_t h, enum dobj_kind kind, void *ptr)
{
	c->objs[h].kind = kind;
	c->objs[h].ptr = ptr;
	c->live++;
	c->d->live_objects++;
	return h;
}

static void handle_free(struct dclient *c, uint32_t h)
{
	memset(&c->objs[h], 0, sizeof(c->objs[h]));
	c->live--;
	c->d->live_objects--;
}

/* ------------------------------------------------------------------ requests */

static int op_hello(struct dclient *c, struct dreq *r)
{
	const struct droce_dproto_hello_req *q = (const void *)r->body;
	struct droce_dproto_hello_rep *p = (void *)r->rep;

	if (q->version != DROCE_DPROTO_VERSION)
		return EPROTONOSUPPORT;
	p->version = DROCE_DPROTO_VERSION;
	p->n_devices = (uint32_t)c->d->n_devs;
	for (int i = 0; i < c->d->n_devs; i++)
		droce_export_device(c->d->devs[i], &p->dev[i]);
	return 0;
}

/* An application's descriptor droced will write to: an eventfd and nothing else. */
static bool is_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[eventfd]") == 0;
}

static int op_open(struct dclient *c, struct dreq *r)
{
	const struct droce_dproto_open_req *q = (const void *)r->body;
	struct droce_dproto_open_rep *p = (void *)r->rep;
	int fd, fl;

	if (c->ctx != NULL || r->nfds != 1 || q->device >= (uint32_t)c->d->n_devs ||
	    !is_eventfd(r->fds[0]))
		return EINVAL;
	fd = devents_create(c);
	if (fd < 0)
		return -fd;
	c->ctx = ibv_open_device(c->d->devs[q->device]);
	if (c->ctx == NULL) {
		int err = errno;

		close(fd);
		munmap(c->ev_mem, c->ev_len);
		c->ev_mem = NULL;
		return err;
	}
	/* droced's own end: never block the loop on it */
	fl = fcntl(c->ctx->async_fd, F_GETFL);
	fcntl(c->ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	c->app_efd = r->fds[0];
	r->fds[0] = -1;
	r->nfds = 0;
	p->ring_len = c->ev_len;
	r->rep_fd = fd; /* closed once sent */
	return 0;
}

static int op_query_port(struct dclient *c, struct dreq *r)
{
	struct droce_dproto_port_rep *p = (void *)r->rep;

	droce_export_device(c->ctx->device, &p->dev);
	return 0;
}

static int op_alloc_pd(struct dclient *c, struct dreq *r)
{
	uint32_t h = handle_new(c);
	struct ibv_pd *pd;

	if (h == 0)
		return ENOMEM;
	pd = ibv_alloc_pd(c->ctx);
	if (pd == NULL)
		return errno;
	r->rep_handle = handle_set(c, h, DOBJ_PD, pd);
	return 0;
}

/*
 * The file an MR is mapped from: a regular file whose size is sealed (a memfd
 * with F_SEAL_SHRINK), long enough for the range. Anything else could shrink
 * under droced's mapping, and a copy into it would be droced's SIGBUS.
 */
static int mr_file_ok(int fd, uint64_t off, uint64_t len, struct stat *st)
{
	int seals = fcntl(fd, F_GET_SEALS);

	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))
		return EINVAL;
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return EINVAL;
	if (len == 0 || off > (uint64_t)st->st_size || len > (uint64_t)st->st_size - off)
		return EINVAL;
	return 0;
}

static int op_reg_mr(struct dclient *c, struct dreq *r)
{
	const struct droce_dproto_reg_mr_req *q = (const void *)r->body;
	struct droce_dproto_reg_mr_rep *p = (void *)r->rep;
	struct ibv_pd *pd = lookup_ptr(c, q->pd, DOBJ_PD);
	const unsigned int writes =
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	uint64_t align, map_off, delta;
	struct stat st;
	struct ibv_mr *mr;
	size_t map_len;
	uint32_t h;
	void *map;
	int rc;

	if (pd == NULL || r->nfds != 1)
		return EINVAL;
	rc = mr_file_ok(r->fds[0], q->file_off, q->length, &st);
	if (rc != 0)
		return rc;
	/* hugetlbfs maps in whole hugepages: its block size */
	align = st.st_blksize > 4096 ? (uint64_t)st.st_blksize : 4096;
	map_off = q->file_off / align * align;
	delta = q->file_off - map_off;
	if (delta + q->length > SIZE_MAX - align)
		return EINVAL;
	map_len = (size_t)((delta + q->length + align - 1) / align * align);
	h = handle_new(c);
	if (h == 0)
		return ENOMEM;
	map = mmap(NULL, map_len, PROT_READ | ((q->access & writes) ? PROT_WRITE : 0), MAP_SHARED,
		   r->fds[0], (off_t)map_off);
	if (map == MAP_FAILED)
		return errno == EACCES ? EACCES : EINVAL;
	mr = ibv_reg_mr_iova2(pd, (uint8_t *)map + delta, (size_t)q->length, q->iova, q->access);
	if (mr == NULL) {
		rc = errno;
		munmap(map, map_len);
		return rc;
	}
	handle_set(c, h, DOBJ_MR, mr);
	c->objs[h].map = map;
	c->objs[h].map_len = map_len;
	p->lkey = mr->lkey;
	p->rkey = mr->rkey;
	r->rep_handle = h;
	return 0;
}

/*
 * New rights or PD for an MR, its range unchanged (ibv_rereg_mr() keeps the keys). Rights
 * that write need droced's mapping writable first: it was mapped read-only for an MR
 * registered without them.
 */
static int op_rereg_mr(struct dclient *c, struct dreq *r)
{
	const struct droce_dproto_rereg_mr_req *q = (const void *)r->body;
	struct droce_dproto_reg_mr_rep *p = (void *)r->rep;
	const unsigned int writes =
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	const uint32_t known = IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS;
	struct ibv_mr *mr = lookup_ptr(c, r->h.handle, DOBJ_MR);
	struct ibv_pd *pd = NULL;
	struct dobj *o;
	int rc;

	if (mr == NULL || r->nfds != 0 || q->flags == 0 || (q->flags & ~known))
		return EINVAL;
	if (q->flags & IBV_REREG_MR_CHANGE_PD) {
		pd = lookup_ptr(c, q->pd, DOBJ_PD);
		if (pd == NULL)
			return EINVAL;
	}
	o = &c->objs[r->h.handle];
	if ((q->flags & IBV_REREG_MR_CHANGE_ACCESS) && (q->access & writes) &&
	    mprotect(o->map, o->map_len, PROT_READ | PROT_WRITE) != 0)
		return EACCES; /* the application's file is not writable */
	errno = 0;
	rc = ibv_rereg_mr(mr, (int)q->flags, pd, NULL, 0,
			  (q->flags & IBV_REREG_MR_CHANGE_ACCESS) ? (int)q->access : 0);
	if (rc != 0)
		return errno != 0 ? errno : EINVAL;
	p->lkey = mr->lkey;
	p->rkey = mr->rkey;
	return 0;
}

static int op_alloc_mw(struct dclient *c, struct dreq *r)
{
	const struct droce_dproto_alloc_mw_req *q = (const void *)r->body;
	struct droce_dproto_alloc_mw_rep *p = (void *)r->rep;
	struct ibv_pd *pd = lookup_ptr(c, q->pd, DOBJ_PD);
	struct ibv_mw *mw;
	uint32_t h;

	if (pd == NULL || (q->type != IBV_MW_TYPE_1 && q->type != IBV_MW_TYPE_2))
		return EINVAL;
	h = handle_new(c);
	if (h == 0)
		return ENOMEM;
	mw = ibv_alloc_mw(pd, (enum ibv_mw_type)q->type);
	if (mw == NULL)
		return errno;
	p->rkey = mw->rkey;
	p->key_handle = droce_export_mw_handle(mw);
	r->rep_handle = handle_set(c, h, DOBJ_MW, mw);
	return 0;
}

static int op_create_channel(struct dclient *c, struct dreq *r)
{
	uint32_t h = handle_new(c);
	struct ibv_comp_channel *ch;
	int fd;

	if (h == 0)
		return ENOMEM;
	ch = ibv_create_comp_channel(c->ctx);
	if (ch == NULL)
		return errno;
	fd = droce_export_channel(ch);
	if (fd < 0) {
		ibv_destroy_comp_channel(ch);
		return -fd;
	}
	r->rep_fd = fd;
	r->rep_handle = handle_set(c, h, DOBJ_CHANNEL, ch);
	c->objs[h].fd = fd; /* kept open: the engine's writes always have a reader */
	return 0;
}

static int op_create_cq(struct dclient *c, struct dreq *r)
{
	const struct droce_dproto_create_cq_req *q = (const void *)r->body;
	struct droce_dproto_create_cq_rep *p = (void *)r->rep;
	struct ibv_cq_init_attr_ex a = {.cqe = q->cqe};
	struct ibv_cq_ex *cq;
	uint32_t h;
	int fd, rc;

	if (q->channel != 0) {
		a.channel = lookup_ptr(c, q->channel, DOBJ_CHANNEL);
		if (a.channel == NULL)
			return EINVAL;
	}
	if (q->flags != 0) {
		a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
		a.flags = q->flags; /* unknown ones are refused by the verbs layer */
	}
	h = handle_new(c);
	if (h == 0)
		return ENOMEM;
	cq = ibv_create_cq_ex(c->ctx, &a);
	if (cq == NULL)
		return errno;
	rc = droce_export_cq(ibv_cq_ex_to_cq(cq), &p->shm, &fd);
	if (rc != 0) {
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
		return -rc;
	}
	p->cqe = (uint32_t)cq->cqe;
	r->rep_fd = fd;
	r->rep_handle = handle_set(c, h, DOBJ_CQ, ibv_cq_ex_to_cq(cq));
	return 0;
}

static int op_create_srq(struct dclient *c, struct dreq *r)
{
	const struct droce_dproto_create_srq_req *q = (const void *)r->body;
	struct droce_dproto_create_srq_rep *p = (void *)r->rep;
	struct ibv_pd *pd = lookup_ptr(c, q->pd, DOBJ_PD);
	struct ibv_srq_init_attr a = {.attr = {.max_wr = q->max_wr, .max_sge = q->max_sge}};
	struct ibv_srq *srq;
	uint32_t h;
	int fd, rc;

	if (pd == NULL)
		return EINVAL;
	h = handle_new(c);
	if (h == 0)
		return ENOMEM;
	srq = ibv_create_srq(pd, &a);
	if (srq == NULL)
		return errno;
	rc = droce_export_srq(srq, &p->shm, &fd);
	if (rc != 0) {
		ibv_destroy_srq(srq);
		return -rc;
	}
	p->max_wr = a.attr.max_wr;
	p->max_sge = a.attr.max_sge;
	r->rep_fd = fd;
	r->rep_handle = handle_set(c, h, DOBJ_SRQ, srq);
	return 0;
}

static int op_create_qp(struct dclient *c, struct dreq *r)
{
	const struct droce_dproto_create_qp_req *q = (const void *)r->body;
	struct droce_dproto_create_qp_rep *p = (void *)r->rep;
	struct ibv_pd *pd = lookup_ptr(c, q->pd, DOBJ_PD);
	struct ibv_qp_init_attr a = {
		.send_cq = lookup_ptr(c, q->send_cq, DOBJ_CQ),
		.recv_cq = lookup_ptr(c, q->recv_cq, DOBJ_CQ),
		.cap = q->cap,
		.qp_type = (enum ibv_qp_type)q->qp_type,
		.sq_sig_all = q->sq_sig_all != 0,
	};
	struct ibv_qp *qp;
	uint32_t h;
	int fd, rc;

	if (pd == NULL || a.send_cq == NULL || a.recv_cq == NULL)
		return EINVAL;
	if (q->srq != 0) {
		a.srq = lookup_ptr(c, q->srq, DOBJ_SRQ);
		if (a.srq == NULL)
			return EINVAL;
	}
	h = handle_new(c);
	if (h == 0)
		return ENOMEM;
	qp = ibv_create_qp(pd, &a);
	if (qp == NULL)
		return errno;
	/* controlled Q_Keys follow the application's uid, not droced's */
	droce_export_qp_privileged(qp, c->uid == 0);
	rc = droce_export_qp(qp, &p->shm, &fd);
	if (rc != 0) {
		ibv_destroy_qp(qp);
		return -rc;
	}
	p->qpn = qp->qp_num;
	p->cap = a.cap;
	r->rep_fd = fd;
	r->rep_handle = handle_set(c, h, DOBJ_QP, qp);
	return 0;
}

static int op_modify_qp(struct dclient *c, struct dreq *r)
{
	struct droce_dproto_modify_qp_req *q = (void *)r->body;
	struct ibv_qp *qp = lookup_ptr(c, r->h.handle, DOBJ_QP);

	if (qp == NULL)
		return EINVAL;
	return ibv_modify_qp(qp, &q->attr, q->mask);
}

static int op_create_ah(struct dclient *c, struct dreq *r)
{
	struct droce_dproto_create_ah_req *q = (void *)r->body;
	struct droce_dproto_create_ah_rep *p = (void *)r->rep;
	struct ibv_pd *pd = lookup_ptr(c, q->pd, DOBJ_PD);
	struct ibv_ah *ah;
	uint32_t h;

	if (pd == NULL)
		return EINVAL;
	h = handle_new(c);
	if (h == 0)
		return ENOMEM;
	ah = ibv_create_ah(pd, &q->attr);
	if (ah == NULL)
		return errno;
	p->ah_id = droce_export_ah_id(ah);
	r->rep_handle = handle_set(c, h, DOBJ_AH, ah);
	return 0;
}

static uint64_t resolve_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u + 1; /* never 0 */
}

/*
 * The slot of @p gid among @p c's resolutions under way: its own, else a free one (an
 * address not asked about for DCLIENT_RESOLVING_IDLE_MS is given up first); NULL when the
 * connection already has DCLIENT_RESOLVING_MAX others under way.
 */
static struct dresolving *resolving_slot(struct dclient *c, const union ibv_gid *gid, uint64_t now)
{
	struct dresolving *free_slot = NULL;

	for (unsigned int i = 0; i < DCLIENT_RESOLVING_MAX; i++) {
		struct dresolving *s = &c->resolving[i];

		if (s->asked_ms != 0 && now - s->asked_ms > DCLIENT_RESOLVING_IDLE_MS)
			s->asked_ms = 0;
		if (s->asked_ms != 0 && memcmp(&s->gid, gid, sizeof(*gid)) == 0)
			return s;
		if (s->asked_ms == 0 && free_slot == NULL)
			free_slot = s;
	}
	return free_slot;
}

static int op_resolve(struct dclient *c, struct dreq *r)
{
	const struct droce_dproto_resolve_req *q = (const void *)r->body;
	struct droce_dproto_resolve_rep *p = (void *)r->rep;
	uint64_t now = resolve_now_ms();
	struct dresolving *s = resolving_slot(c, &q->gid, now);
	int rc;

	/*
	 * The neighbour table is every connection's: one connection may keep at most
	 * DCLIENT_RESOLVING_MAX of its entries in resolution (each one a request a second on
	 * the wire and a place in the table), so that it cannot fill the table for the others.
	 */
	if (s == NULL)
		return EBUSY;
	/* one step: EAGAIN while the requests are out, and the application asks again */
	rc = -droce_verbs_resolve_l2_step(c->ctx, &q->gid, p->mac);
	if (rc == EAGAIN) {
		s->gid = q->gid;
		s->asked_ms = now;
	} else {
		s->asked_ms = 0;
	}
	return rc;
}

/* Destroy one object through droced's verbs. 0 or the verbs call's errno. */
static int obj_destroy(struct dclient *c, uint32_t h)
{
	struct dobj *o = &c->objs[h];
	int rc;

	switch (o->kind) {
	case DOBJ_PD:
		rc = ibv_dealloc_pd(o->ptr);
		break;
	case DOBJ_MR: {
		uint32_t lkey = ((struct ibv_mr *)o->ptr)->lkey;

		rc = ibv_dereg_mr(o->ptr); /* waits for the engine: the mapping is unused */
		/* ... and for the zero-copy frames on its bytes, for a bounded time: a mapping
		 * a frame still holds is kept (leaked) rather than read once unmapped */
		if (rc == 0 && droce_mr_busy(droce_verbs_mr_table(), lkey) == 0)
			munmap(o->map, o->map_len);
		else if (rc == 0)
			fprintf(stderr, "droced: MR 0x%x kept mapped: frames still hold it\n",
				lkey);
		break;
	}
	case DOBJ_MW:
		rc = ibv_dealloc_mw(o->ptr);
		break;
	case DOBJ_CHANNEL:
		rc = ibv_destroy_comp_channel(o->ptr);
		if (rc == 0)
			close(o->fd);
		break;
	case DOBJ_CQ:
		rc = ibv_destroy_cq(o->ptr);
		break;
	case DOBJ_SRQ:
		rc = ibv_destroy_srq(o->ptr);
		break;
	case DOBJ_QP:
		rc = ibv_destroy_qp(o->ptr);
		break;
	case DOBJ_AH:
		rc = ibv_destroy_ah(o->ptr);
		break;
	default:
		return EINVAL;
	}
	if (rc == 0)
		handle_free(c, h);
	return rc;
}

static int op_destroy(struct dclient *c, struct dreq *r, enum dobj_kind kind)
{
	if (lookup(c, r->h.handle, kind) == NULL)
		return EINVAL;
	return obj_destroy(c, r->h.handle);
}

static int dispatch(struct dclient *c, struct dreq *r)
{
	if (r->h.op != DPROTO_HELLO && r->h.op != DPROTO_OPEN && c->ctx == NULL)
		return EBADF; /* a device must be open first */
	switch (r->h.op) {
	case DPROTO_HELLO:
		return op_hello(c, r);
	case DPROTO_OPEN:
		return op_open(c, r);
	case DPROTO_QUERY_PORT:
		return op_query_port(c, r);
	case DPROTO_ALLOC_PD:
		return op_alloc_pd(c, r);
	case DPROTO_DEALLOC_PD:
		return op_destroy(c, r, DOBJ_PD);
	case DPROTO_REG_MR:
		return op_reg_mr(c, r);
	case DPROTO_DEREG_MR:
		return op_destroy(c, r, DOBJ_MR);
	case DPROTO_ALLOC_MW:
		return op_alloc_mw(c, r);
	case DPROTO_DEALLOC_MW:
		return op_destroy(c, r, DOBJ_MW);
	case DPROTO_CREATE_CHANNEL:
		return op_create_channel(c, r);
	case DPROTO_DESTROY_CHANNEL:
		return op_destroy(c, r, DOBJ_CHANNEL);
	case DPROTO_CREATE_CQ:
		return op_create_cq(c, r);
	case DPROTO_DESTROY_CQ:
		return op_destroy(c, r, DOBJ_CQ);
	case DPROTO_CREATE_SRQ:
		return op_create_srq(c, r);
	case DPROTO_DESTROY_SRQ:
		return op_destroy(c, r, DOBJ_SRQ);
	case DPROTO_CREATE_QP:
		return op_create_qp(c, r);
	case DPROTO_MODIFY_QP:
		return op_modify_qp(c, r);
	case DPROTO_DESTROY_QP:
		return op_destroy(c, r, DOBJ_QP);
	case DPROTO_CREATE_AH:
		return op_create_ah(c, r);
	case DPROTO_DESTROY_AH:
		return op_destroy(c, r, DOBJ_AH);
	case DPROTO_RESOLVE_L2:
		return op_resolve(c, r);
	case DPROTO_REREG_MR:
		return op_rereg_mr(c, r);
	default:
		return EOPNOTSUPP;
	}
}

bool dclient_serve(struct dclient *c)
{
	static struct dreq r; /* one request at a time in droced's loop */
	ssize_t n, want;
	int status, rc;

	r.nfds = DROCE_DPROTO_FDS_MAX;
	n = droce_dproto_recv(c->sock, &r.h, r.body, sizeof(r.body), r.fds, &r.nfds);
	if (n == -EAGAIN)
		return true;
	if (n < 0)
		return false; /* gone, or a message no correct application sends */
	r.len = (size_t)n;
	r.rep_len = 0;
	r.rep_handle = 0;
	r.rep_fd = -1;
	memset(r.rep, 0, sizeof(r.rep));
	want = droce_dproto_body_size(r.h.op, false);
	if (want < 0 || (size_t)want != r.len || r.h.status != 0) {
		status = EPROTO;
	} else {
		if (r.len < sizeof(r.body))
			memset(r.body + r.len, 0, sizeof(r.body) - r.len);
		status = dispatch(c, &r);
	}
	for (unsigned int i = 0; i < r.nfds; i++)
		if (r.fds[i] >= 0)
			close(r.fds[i]);
	if (status == 0)
		r.rep_len = (size_t)droce_dproto_body_size(r.h.op, true);
	r.h.status = status;
	r.h.handle = status == 0 ? r.rep_handle : 0;
	rc = droce_dproto_send(c->sock, &r.h, r.rep, r.rep_len,
			       status == 0 && r.rep_fd >= 0 ? &r.rep_fd : NULL,
			       status == 0 && r.rep_fd >= 0 ? 1 : 0);
	/* OPEN's event ring descriptor is droced's to close; queue memfds are the objects' */
	if (r.h.op == DPROTO_OPEN && r.rep_fd >= 0)
		close(r.rep_fd);
	/* a socket full of replies the application does not read: it goes */
	return rc == 0;
}

void dclient_flush_qps(struct dclient *c)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

	for (uint32_t h = 1; h < c->n_objs; h++)
		if (c->objs[h].kind == DOBJ_QP)
			ibv_modify_qp(c->objs[h].ptr, &a, IBV_QP_STATE);
}

void dclient_free(struct dclient *c)
{
	/* users before what they use: QPs hold CQs, SRQs and PDs; MWs hold MRs */
	static const enum dobj_kind order[] = {DOBJ_QP, DOBJ_AH,      DOBJ_SRQ, DOBJ_CQ,
					       DOBJ_MW, DOBJ_CHANNEL, DOBJ_MR,  DOBJ_PD};

	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (uint32_t h = 1; h < c->n_objs; h++)
			if (c->objs[h].kind == order[k] && obj_destroy(c, h) != 0)
				fprintf(stderr, "droced: client %u: could not release handle %u\n",
					c->id, h);
	if (c->ctx != NULL)
		ibv_close_device(c->ctx);
	if (c->ev_mem != NULL)
		munmap(c->ev_mem, c->ev_len);
	if (c->app_efd >= 0)
		close(c->app_efd);
	if (c->sock >= 0)
		close(c->sock);
	free(c->objs);
	free(c);
}
