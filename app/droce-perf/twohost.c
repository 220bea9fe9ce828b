/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two-host runs: `droce-perf TEST` is the server (it waits on TCP port -p),
 * `droce-perf TEST HOST` the client; the other side is perftest 4.5's
 * ib_TEST or another droce-perf. The two sides walk the same plan of
 * out-of-band messages and local steps (oob_plan.c), perftest's: the version,
 * page and cache line sizes and MTU, every QP's address, the SYNCs that keep
 * the two in step, the client's result report and "done". The client is end 0
 * (it requests); the server is end 1 (it receives SENDs, answers the rest).
 * With -b both send, and after each size they trade their rows and print the
 * sums, as perftest's sides do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_perf.h"

#define CONNECT_WAIT_S 30 /* the server may still be starting its engine */
#define PLAN_MAX       128
#define SIZES_MAX      32
#define CACHE_LINE     64

struct twohost {
	struct perf_ctx *c;
	struct perf_oob oob;
	struct perf_dest *peer;
	struct perf_oob_step steps[PLAN_MAX];
	unsigned int n_steps, at;
	unsigned int me; /* PERF_OOB_CLIENT or PERF_OOB_SERVER */
	uint32_t sizes[SIZES_MAX];
	unsigned int n_sizes;
	struct perf_bw_result bw[SIZES_MAX];
	struct perf_bw_result other[SIZES_MAX]; /* -b: the other side's rows */
	struct perf_lat_result lat[SIZES_MAX];
	unsigned int n_rows;
	unsigned int keys_seen;
	bool title_printed;
};

static enum perf_oob_flow flow_of(const struct perf_opts *o)
{
	if (o->kind == PERF_BW && o->bidirectional)
		return o->verb == PERF_SEND ? PERF_OOB_FLOW_SEND_BW_BIDIR
					    : PERF_OOB_FLOW_BW_ONE_SIDED_BIDIR;
	if (o->kind == PERF_BW)
		return o->verb == PERF_SEND ? PERF_OOB_FLOW_SEND_BW : PERF_OOB_FLOW_BW_ONE_SIDED;
	if (o->verb == PERF_WRITE)
		return PERF_OOB_FLOW_WRITE_LAT;
	return o->verb == PERF_SEND ? PERF_OOB_FLOW_SEND_LAT : PERF_OOB_FLOW_LAT_ONE_SIDED;
}

static int bad_message(const char *what)
{
	fprintf(stderr, "droce-perf: the other side sent a malformed %s message\n", what);
	return -1;
}

/* -d, or the first device; the first open starts droce's engine. */
static int open_device(struct perf_ctx *c, struct perf_end *e)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_device_attr da;
	int n, rc = -1;

	list = ibv_get_device_list(&n);
	if (list == NULL) {
		fprintf(stderr, "droce-perf: ibv_get_device_list: %s\n", strerror(errno));
		return -1;
	}
	for (int i = 0; i < n && dev == NULL; i++)
		if (c->o->ib_dev == NULL || strcmp(ibv_get_device_name(list[i]), c->o->ib_dev) == 0)
			dev = list[i];
	if (dev == NULL) {
		fprintf(stderr,
			"droce-perf: no device %s (DROCE_DEVICES names droce's devices; "
			"see doc/verbs.md)\n",
			c->o->ib_dev != NULL ? c->o->ib_dev : "at all");
		goto out_free_list;
	}
	c->dev_name[c->me] = strdup(ibv_get_device_name(dev));
	if (perf_end_open_device(c, e, dev) != 0)
		goto out_free_list;
	c->outs = c->o->outs;
	if (ibv_query_device(e->ctx, &da) == 0 && c->outs > (unsigned int)da.max_qp_rd_atom)
		c->outs = (unsigned int)da.max_qp_rd_atom;
	perf_leave_engine_cpu();
	rc = 0;
out_free_list:
	ibv_free_device_list(list);
	return rc;
}

/* The server listens before its engine starts, so an early client waits in the backlog. */
static int connect_oob(struct twohost *t)
{
	struct perf_ctx *c = t->c;
	struct perf_end *e = &c->end[c->me];
	int lfd = -1, rc;

	if (t->me == PERF_OOB_SERVER) {
		lfd = perf_oob_listen(c->o->port);
		if (lfd < 0)
			return -1;
		printf("\n************************************\n"
		       "* Waiting for client to connect... *\n"
		       "************************************\n");
		fflush(stdout);
	}
	if (open_device(c, e) != 0) {
		if (lfd >= 0)
			close(lfd);
		return -1;
	}
	if (t->me == PERF_OOB_SERVER) {
		rc = perf_oob_accept(lfd, &t->oob, c->peer_name, sizeof(c->peer_name));
		close(lfd);
		return rc != 0 ? -1 : perf_end_wait_active(e, c->o->ib_port);
	}
	if (perf_end_wait_active(e, c->o->ib_port) != 0)
		return -1;
	return perf_oob_connect(c->o->server, c->o->port, CONNECT_WAIT_S, &t->oob, c->peer_name,
				sizeof(c->peer_name));
}

static int xchg_version(struct twohost *t)
{
	uint8_t mine[PERF_OOB_VERSION_LEN], theirs[PERF_OOB_VERSION_LEN];
	double v;

	perf_oob_version_encode(mine);
	if (perf_oob_xchg(&t->oob, mine, theirs, sizeof(mine)) != 0)
		return -1;
	if (perf_oob_version_decode(theirs, &v) != 0)
		return bad_message("version");
	if (v < PERF_OOB_VERSION_MIN) {
		fprintf(stderr,
			"droce-perf: the other side's exchange version is %.2f; perftest's "
			"exchange needs %.2f or later (perftest 4.5 sends %s)\n",
			v, PERF_OOB_VERSION_MIN, PERF_OOB_VERSION_STR);
		return -1;
	}
	return 0;
}

/* Page and cache line sizes: both sides use the larger (a peer may use a page from vaddr). */
static int xchg_int(struct twohost *t, int32_t mine, int32_t *larger)
{
	uint8_t m[PERF_OOB_INT_LEN], theirs[PERF_OOB_INT_LEN];
	int32_t v;

	perf_oob_int_encode(m, mine);
	if (perf_oob_xchg(&t->oob, m, theirs, sizeof(m)) != 0)
		return -1;
	v = perf_oob_int_decode(theirs);
	*larger = v > mine ? v : mine;
	return 0;
}

/* The path MTU: -m (not above the port's), or the port's; then the smaller of the two sides'. */
static int xchg_mtu(struct twohost *t)
{
	struct perf_ctx *c = t->c;
	enum ibv_mtu active = c->end[c->me].port.active_mtu, theirs;
	uint8_t m[PERF_OOB_MTU_LEN], in[PERF_OOB_MTU_LEN];

	c->mtu = c->o->mtu ? perf_mtu_enum(c->o->mtu) : active;
	if (c->mtu > active) {
		printf("Requested mtu is higher than active mtu \n"
		       "Changing to active mtu - %d\n",
		       128 << active);
		c->mtu = active;
	}
	perf_oob_mtu_encode(m, c->mtu);
	if (perf_oob_xchg(&t->oob, m, in, sizeof(m)) != 0)
		return -1;
	if (perf_oob_mtu_decode(in, &theirs) != 0)
		return bad_message("MTU");
	if (theirs < c->mtu)
		c->mtu = theirs;
	return 0;
}

/* Once the MTU is agreed: the sizes, the queues, the verbs resources, the header. */
static int create(struct twohost *t)
{
	struct perf_ctx *c = t->c;
	uint32_t mtu_bytes = 128u << c->mtu;

	if (c->o->qp_type == IBV_QPT_UD && !c->o->all && c->o->size > mtu_bytes) {
		fprintf(stderr, "droce-perf: a UD message fits one packet: -s up to %u\n",
			mtu_bytes);
		return -1;
	}
	t->n_sizes = perf_sizes(c, t->sizes, SIZES_MAX);
	t->n_steps = perf_oob_plan(flow_of(c->o), t->n_sizes, c->o->all, t->steps, PLAN_MAX);
	t->peer = calloc(c->o->num_qps, sizeof(*t->peer));
	if (t->n_steps == 0 || t->peer == NULL) {
		fprintf(stderr, "droce-perf: out of memory\n");
		return -1;
	}
	c->peer = t->peer;
	perf_size_queues(c);
	if (perf_end_create(c, &c->end[c->me]) != 0)
		return -1;
	perf_report_header(c);
	return 0;
}

static int xchg_keys(struct twohost *t, unsigned int q, struct perf_dest *into)
{
	uint8_t mine[PERF_OOB_KEYS_LEN], theirs[PERF_OOB_KEYS_LEN];

	perf_oob_keys_encode(mine, &t->c->end[t->c->me].local[q]);
	if (perf_oob_xchg(&t->oob, mine, theirs, sizeof(mine)) != 0)
		return -1;
	return perf_oob_keys_decode(theirs, into) == 0 ? 0 : bad_message("address");
}

static bool v4_mapped(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(g->raw, prefix, sizeof(prefix)) == 0;
}

static int keys(struct twohost *t)
{
	struct perf_ctx *c = t->c;

	for (unsigned int q = 0; q < c->o->num_qps; q++)
		if (xchg_keys(t, q, &t->peer[q]) != 0)
			return -1;
	/* RoCEv2 over IPv4 or IPv6: both GIDs of one kind, as perftest insists */
	if (v4_mapped(&t->peer[0].gid) != v4_mapped(&c->end[c->me].gid)) {
		fprintf(stderr,
			"droce-perf: this side's GID is %s, the other side's is not: "
			"choose GIDs of one IP version (-x)\n",
			v4_mapped(&c->end[c->me].gid) ? "IPv4-mapped" : "IPv6");
		return -1;
	}
	if (++t->keys_seen == 2)
		perf_report_addresses(c); /* perftest prints them after the second round */
	return 0;
}

static int sync_peer(void *arg)
{
	struct twohost *t = arg;
	struct perf_dest d;

	return xchg_keys(t, 0, &d);
}

static void title(struct twohost *t)
{
	if (!t->title_printed)
		perf_report_table_title(t->c);
	t->title_printed = true;
}

/* One size; @p ready (the SYNC) runs once its receives are posted. */
static int run(struct twohost *t, unsigned int i, perf_ready_fn ready)
{
	struct perf_ctx *c = t->c;
	int rc;

	title(t);
	if (c->o->kind == PERF_BW) {
		struct perf_bw_result r[2];

		rc = perf_bw_run(c, t->sizes[i], ready, t, r);
		if (rc == 0)
			t->bw[t->n_rows] = r[0];
		/* -b: the row comes once the other side's is here (report_both()) */
		if (rc == 0 && !c->o->bidirectional)
			perf_report_bw(c, &r[0]);
	} else {
		rc = perf_lat_twohost_run(c, t->sizes[i], ready, t, &t->lat[t->n_rows]);
		if (rc == 0)
			perf_report_lat(c, &t->lat[t->n_rows]);
	}
	if (rc == 0)
		t->n_rows++;
	return rc;
}

/* Receives, SYNC and the run of one size: the receives go up before the SYNC. */
static int recv_sync_run(struct twohost *t)
{
	const struct perf_oob_step *s = &t->steps[t->at];

	if (t->at + 2 >= t->n_steps || s[1].kind != PERF_OOB_SYNC || s[2].kind != PERF_OOB_RUN ||
	    !(s[2].who & t->me)) {
		fprintf(stderr, "droce-perf: internal error: receives not followed by a run\n");
		return -1;
	}
	t->at += 2;
	return run(t, s->size_index, sync_peer);
}

/* Trade rows: @p mine goes (none: zeros), the other side's comes back as it sent it. */
static int xchg_row(struct twohost *t, const struct perf_bw_result *mine,
		    struct perf_oob_report *theirs)
{
	struct perf_oob_report out = {0};
	uint8_t m[PERF_OOB_REPORT_FIELDS][PERF_OOB_FIELD_LEN];
	uint8_t in[PERF_OOB_REPORT_FIELDS][PERF_OOB_FIELD_LEN];

	if (mine != NULL)
		perf_report_oob(t->c, mine, &out);
	perf_oob_report_encode(m, &out);
	for (int i = 0; i < PERF_OOB_REPORT_FIELDS; i++)
		if (perf_oob_xchg(&t->oob, m[i], in[i], PERF_OOB_FIELD_LEN) != 0)
			return -1;
	perf_oob_report_decode(in, theirs);
	return 0;
}

/* A row in the table's unit as a result in bytes and messages a second. */
static struct perf_bw_result from_row(const struct perf_ctx *c, const struct perf_oob_report *r)
{
	double unit = c->o->report_gbits ? 1e9 / 8 : 1 << 20;

	return (struct perf_bw_result){.bytes = r->size,
				       .iters = r->iters,
				       .bw_peak = r->bw_peak * unit,
				       .bw_avg = r->bw_avg * unit,
				       .msg_rate = r->msg_rate * 1e6};
}

/* The client's last row goes to the server, which prints it as its own result. */
static int report(struct twohost *t)
{
	struct perf_ctx *c = t->c;
	struct perf_oob_report theirs;

	if (xchg_row(t, t->me == PERF_OOB_CLIENT && t->n_rows > 0 ? &t->bw[t->n_rows - 1] : NULL,
		     &theirs) != 0)
		return -1;
	if (t->me == PERF_OOB_CLIENT)
		return 0;
	title(t);
	perf_report_remote_bw(c, &theirs);
	t->bw[0] = from_row(c, &theirs);
	t->n_rows = 1;
	return 0;
}

/* -b: both sides' rows of the size just run, each side printing the sums. */
static int report_both(struct twohost *t)
{
	struct perf_oob_report theirs;
	unsigned int i = t->n_rows - 1;

	if (t->n_rows == 0 || xchg_row(t, &t->bw[i], &theirs) != 0)
		return -1;
	t->other[i] = from_row(t->c, &theirs);
	perf_report_bw_both(t->c, &t->bw[i], &t->other[i]);
	return 0;
}

static int step(struct twohost *t)
{
	struct perf_ctx *c = t->c;
	const struct perf_oob_step *s = &t->steps[t->at];
	int32_t larger;

	switch (s->kind) {
	case PERF_OOB_VERSION:
		return xchg_version(t);
	case PERF_OOB_PAGE_SIZE:
		if (xchg_int(t, (int32_t)sysconf(_SC_PAGESIZE), &larger) != 0)
			return -1;
		c->cycle = larger > 0 && larger <= (1 << 30) ? (unsigned int)larger : 0;
		return c->cycle != 0 ? 0 : bad_message("page size");
	case PERF_OOB_CACHE_LINE:
		/* perftest spaces its addresses by it; droce-perf's need not know */
		return xchg_int(t, CACHE_LINE, &larger);
	case PERF_OOB_MTU:
		return xchg_mtu(t) == 0 ? create(t) : -1;
	case PERF_OOB_KEYS:
		return keys(t);
	case PERF_OOB_SYNC:
		return sync_peer(t);
	case PERF_OOB_REPORT:
		return c->o->bidirectional ? report_both(t) : report(t);
	case PERF_OOB_DONE:
		return perf_oob_done(&t->oob);
	case PERF_OOB_CONNECT:
		return perf_end_connect(c, &c->end[c->me], t->peer);
	case PERF_OOB_RECV:
		return s->who & t->me ? recv_sync_run(t) : 0;
	case PERF_OOB_RUN:
		return s->who & t->me ? run(t, s->size_index, NULL) : 0;
	}
	return -1;
}

int perf_twohost_run(struct perf_ctx *c)
{
	static struct twohost t;
	bool bidir = c->o->kind == PERF_BW && c->o->bidirectional;
	int rc = 0;

	memset(&t, 0, sizeof(t));
	t.c = c;
	t.oob.fd = -1;
	c->role = c->o->server != NULL ? PERF_ROLE_CLIENT : PERF_ROLE_SERVER;
	c->me = c->role == PERF_ROLE_CLIENT ? 0 : 1;
	t.me = c->role == PERF_ROLE_CLIENT ? PERF_OOB_CLIENT : PERF_OOB_SERVER;
	if (connect_oob(&t) != 0)
		return -1;
	/* -a's sizes are known once the MTU is (create() plans again); the steps before are
	 * the same */
	t.n_steps = perf_oob_plan(flow_of(c->o), 1, c->o->all, t.steps, PLAN_MAX);
	for (t.at = 0; rc == 0 && t.at < t.n_steps; t.at++) {
		rc = step(&t);
		if (rc != 0)
			fprintf(stderr, "droce-perf: failed at the %s step\n",
				perf_oob_step_name(t.steps[t.at].kind));
	}
	perf_oob_close(&t.oob);
	if (rc != 0)
		return -1;
	if (bidir && c->o->report_both)
		perf_report_bw_each(c, t.bw, t.other, t.n_rows);
	perf_report_end(c);
	if (c->o->json_path != NULL &&
	    perf_report_json(c, c->o->kind == PERF_BW ? t.bw : NULL, bidir ? t.other : NULL,
			     c->o->kind == PERF_LAT ? t.lat : NULL, t.n_rows) != 0)
		return -1;
	return 0;
}

void perf_twohost_close(struct perf_ctx *c)
{
	perf_end_close(c, &c->end[c->me]);
	free((void *)c->peer);
	c->peer = NULL;
	free((char *)c->dev_name[c->me]);
}
