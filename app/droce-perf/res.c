/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs resources of one end: device context, PD, one CQ, one MR over
 * every QP's buffer, the QPs (moved to INIT here, to RTR and RTS by
 * perf_end_connect() from what the peer tells), and the address lines'
 * fields. Nothing here knows whether the peer is in this process, nor whether
 * the engine is in this process or in droced: the buffer is memory droced can
 * register (droce_alloc_shared()), which the embedded engine registers too.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <droce_shared.h>

#include "droce_perf.h"

#define PERF_HOP_LIMIT 64
#define PORT_WAIT_S    10

static int fail(const char *what)
{
	fprintf(stderr, "droce-perf: %s: %s\n", what, strerror(errno));
	return -1;
}

/* -x, or the first IPv4-mapped GID (perftest's default on Ethernet), else 0 */
static int pick_gid(const struct perf_ctx *c, struct perf_end *e, union ibv_gid *gid)
{
	int n = e->port.gid_tbl_len;

	if (c->o->gid_index >= 0) {
		if (ibv_query_gid(e->ctx, c->o->ib_port, c->o->gid_index, gid) != 0)
			return fail("ibv_query_gid");
		return c->o->gid_index;
	}
	for (int i = 0; i < n; i++) {
		static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

		if (ibv_query_gid(e->ctx, c->o->ib_port, i, gid) != 0)
			break;
		if (memcmp(gid->raw, v4, sizeof(v4)) == 0)
			return i;
	}
	if (ibv_query_gid(e->ctx, c->o->ib_port, 0, gid) != 0)
		return fail("ibv_query_gid");
	return 0;
}

static int qp_to_init(const struct perf_ctx *c, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = c->o->ib_port};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (c->o->qp_type == IBV_QPT_UD) {
		a.qkey = PERF_UD_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (c->o->qp_type == IBV_QPT_RC)
			a.qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (ibv_modify_qp(qp, &a, mask) != 0)
		return fail("ibv_modify_qp(INIT)");
	return 0;
}

static int create_qps(struct perf_ctx *c, struct perf_end *e)
{
	unsigned int n = c->o->num_qps;

	e->qp = calloc(n, sizeof(*e->qp));
	e->ah = calloc(n, sizeof(*e->ah));
	e->remote_qpn = calloc(n, sizeof(*e->remote_qpn));
	e->local = calloc(n, sizeof(*e->local));
	if (e->qp == NULL || e->ah == NULL || e->remote_qpn == NULL || e->local == NULL) {
		errno = ENOMEM;
		return fail("calloc");
	}
	for (unsigned int i = 0; i < n; i++) {
		/* an SRQ's QPs have no receive queue of their own */
		struct ibv_qp_init_attr ia = {
			.send_cq = e->cq,
			.recv_cq = e->cq,
			.srq = e->srq,
			.cap = {.max_send_wr = c->tx_depth,
				.max_recv_wr = e->srq != NULL ? 0 : c->rx_depth,
				.max_send_sge = 1,
				.max_recv_sge = e->srq != NULL ? 0 : 1,
				.max_inline_data = c->max_inline},
			.qp_type = c->o->qp_type,
		};

		e->qp[i] = ibv_create_qp(e->pd, &ia);
		if (e->qp[i] == NULL)
			return fail("ibv_create_qp");
		if (qp_to_init(c, e->qp[i]) != 0)
			return -1;
		/* READs and atomics: as many at once as the device answers (-o); else 1 */
		e->local[i] = (struct perf_dest){
			.lid = e->port.lid,
			.out_reads = (uint16_t)(perf_verb_one_sided(c->o->verb) ? c->outs : 1),
			.qpn = e->qp[i]->qp_num,
			.psn = (uint32_t)lrand48() & 0xffffff,
			.rkey = e->mr->rkey,
			.vaddr = (uintptr_t)e->buf + i * c->buf_len + c->vaddr_off,
			.gid = e->gid,
		};
	}
	return 0;
}

/* The device and its port's GID: the first ibv_open_device() starts the engine. */
int perf_end_open_device(struct perf_ctx *c, struct perf_end *e, struct ibv_device *dev)
{
	e->ctx = ibv_open_device(dev);
	if (e->ctx == NULL)
		return fail("ibv_open_device");
	if (ibv_query_port(e->ctx, c->o->ib_port, &e->port) != 0)
		return fail("ibv_query_port");
	e->gid_index = pick_gid(c, e, &e->gid);
	return e->gid_index < 0 ? -1 : 0;
}

/*
 * The buffer of an end: a sealed memfd mapping, on hugepages with --use_hugepages
 * when the machine has free ones (else plain pages, with a note, as perftest
 * carries on without them). Zeroed, and touched here so that no first-touch
 * fault lands in the measurement.
 */
static int alloc_buffer(const struct perf_ctx *c, struct perf_end *e, size_t len)
{
	static bool told;

	e->buf = NULL;
	if (c->o->use_hugepages) {
		e->buf = droce_alloc_shared(len, DROCE_SHARED_HUGEPAGES);
		if (e->buf == NULL && !told) {
			fprintf(stderr,
				"droce-perf: no hugepages for the buffers (%s): using plain "
				"pages\n",
				strerror(errno));
			told = true;
		}
	}
	if (e->buf == NULL)
		e->buf = droce_alloc_shared(len, 0);
	if (e->buf == NULL)
		return fail("droce_alloc_shared");
	e->buf_size = len;
	memset(e->buf, 0, len);
	return 0;
}

/*
 * perftest's rule: an SRQ on the ends that receive, that is the server (end
 * 1), and the client too when it receives (latency ping-pongs, -b).
 */
bool perf_end_has_srq(const struct perf_ctx *c, int end)
{
	const struct perf_opts *o = c->o;

	return o->use_srq && (end == 1 || o->kind == PERF_LAT || o->bidirectional);
}

int perf_end_qp_index(const struct perf_ctx *c, const struct perf_end *e, uint32_t qpn)
{
	for (unsigned int i = 0; i < c->o->num_qps; i++)
		if (e->qp[i]->qp_num == qpn)
			return (int)i;
	return -1;
}

/* The SRQ holds the receive queue's worth (-r) for all the QPs, as perftest's. */
static int create_srq(struct perf_ctx *c, struct perf_end *e)
{
	struct ibv_srq_init_attr a = {.attr = {.max_wr = c->rx_depth, .max_sge = 1}};

	e->srq = ibv_create_srq(e->pd, &a);
	return e->srq != NULL ? 0 : fail("ibv_create_srq");
}

/* PD, CQ, buffer and MR, SRQ, QPs in INIT: once the queue and buffer sizes are known. */
int perf_end_create(struct perf_ctx *c, struct perf_end *e)
{
	unsigned int n = c->o->num_qps;
	size_t len = c->buf_len * n;
	int cqe = (int)((c->tx_depth + c->rx_depth) * n + 16);

	e->pd = ibv_alloc_pd(e->ctx);
	if (e->pd == NULL)
		return fail("ibv_alloc_pd");
	if (c->o->events && perf_events_open(e) != 0)
		return -1;
	e->cq = ibv_create_cq(e->ctx, cqe, NULL, e->channel, 0);
	if (e->cq == NULL)
		return fail("ibv_create_cq");
	if (c->o->events && perf_events_arm(e) != 0)
		return -1;
	if (perf_end_has_srq(c, (int)(e - c->end)) && create_srq(c, e) != 0)
		return -1;
	if (alloc_buffer(c, e, len) != 0)
		return -1;
	e->mr = ibv_reg_mr(e->pd, e->buf, len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (e->mr == NULL)
		return fail("ibv_reg_mr");
	return create_qps(c, e);
}

int perf_end_wait_active(struct perf_end *e, uint8_t port)
{
	for (int i = 0; i < PORT_WAIT_S * 1000; i++) {
		if (ibv_query_port(e->ctx, port, &e->port) != 0)
			return fail("ibv_query_port");
		if (e->port.state == IBV_PORT_ACTIVE)
			return 0;
		usleep(1000);
	}
	fprintf(stderr, "droce-perf: port %u is not ACTIVE after %d s\n", port, PORT_WAIT_S);
	return -1;
}

enum ibv_mtu perf_mtu_enum(unsigned int bytes)
{
	switch (bytes) {
	case 256:
		return IBV_MTU_256;
	case 512:
		return IBV_MTU_512;
	case 1024:
		return IBV_MTU_1024;
	case 2048:
		return IBV_MTU_2048;
	default:
		return IBV_MTU_4096;
	}
}

/*
 * The engine polls on the last CPU (doc/verbs.md); this thread spins too, so it
 * keeps off that CPU when it has another one.
 */
void perf_leave_engine_cpu(void)
{
	cpu_set_t set;
	int last = -1;

	if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) < 2)
		return;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			last = i;
	CPU_CLR(last, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

static int connect_ud(struct perf_ctx *c, struct perf_end *e, unsigned int i,
		      const struct perf_dest *peer)
{
	struct ibv_ah_attr ah = {
		.is_global = 1,
		.port_num = c->o->ib_port,
		.dlid = peer->lid,
		.grh = {.dgid = peer->gid,
			.sgid_index = (uint8_t)e->gid_index,
			.hop_limit = PERF_HOP_LIMIT},
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR};

	if (ibv_modify_qp(e->qp[i], &a, IBV_QP_STATE) != 0)
		return fail("ibv_modify_qp(RTR)");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = e->local[i].psn;
	if (ibv_modify_qp(e->qp[i], &a, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0)
		return fail("ibv_modify_qp(RTS)");
	e->ah[i] = ibv_create_ah(e->pd, &ah);
	if (e->ah[i] == NULL)
		return fail("ibv_create_ah");
	e->remote_qpn[i] = peer->qpn;
	return 0;
}

/* Connect QP @p i of @p e to @p peer (RC, UC: RTR then RTS; UD: an AH). */
static int connect_qp(struct perf_ctx *c, struct perf_end *e, unsigned int i,
		      const struct perf_dest *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = c->mtu,
		.dest_qp_num = peer->qpn,
		.rq_psn = peer->psn,
		.max_dest_rd_atomic = (uint8_t)e->local[i].out_reads,
		.min_rnr_timer = 12,
		.ah_attr = {.is_global = 1,
			    .dlid = peer->lid,
			    .port_num = c->o->ib_port,
			    .grh = {.dgid = peer->gid,
				    .sgid_index = (uint8_t)e->gid_index,
				    .hop_limit = PERF_HOP_LIMIT}},
	};
	int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	int rts = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (c->o->qp_type == IBV_QPT_UD)
		return connect_ud(c, e, i, peer);
	if (c->o->qp_type == IBV_QPT_RC) {
		rtr |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		rts |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(e->qp[i], &a, rtr) != 0)
		return fail("ibv_modify_qp(RTR)");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = e->local[i].psn;
	a.timeout = c->o->qp_timeout; /* -u */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	/* as many READs and atomics at once as the peer said it answers, at most -o */
	a.max_rd_atomic = (uint8_t)(peer->out_reads < c->outs ? peer->out_reads : c->outs);
	if (ibv_modify_qp(e->qp[i], &a, rts) != 0)
		return fail("ibv_modify_qp(RTS)");
	e->remote_qpn[i] = peer->qpn;
	return 0;
}

int perf_end_connect(struct perf_ctx *c, struct perf_end *e, const struct perf_dest *peer)
{
	for (unsigned int i = 0; i < c->o->num_qps; i++)
		if (connect_qp(c, e, i, &peer[i]) != 0)
			return -1;
	return 0;
}

int perf_post_recv(struct perf_ctx *c, struct perf_end *e, unsigned int qp, uint64_t slot_off,
		   uint32_t len, uint64_t wr_id)
{
	struct ibv_sge s = {
		.addr = (uintptr_t)e->buf + qp * c->buf_len + slot_off,
		.length = len,
		.lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &s, .num_sge = 1}, *bad;
	int rc;

	if (e->srq != NULL) {
		rc = ibv_post_srq_recv(e->srq, &wr, &bad);
		if (rc != 0) {
			fprintf(stderr, "droce-perf: ibv_post_srq_recv: %s\n", strerror(rc));
			return -1;
		}
		c->srq_recvs++;
		return 0;
	}
	rc = ibv_post_recv(e->qp[qp], &wr, &bad);
	if (rc != 0) {
		fprintf(stderr, "droce-perf: ibv_post_recv: %s\n", strerror(rc));
		return -1;
	}
	return 0;
}

void perf_end_close(struct perf_ctx *c, struct perf_end *e)
{
	for (unsigned int i = 0; e->qp != NULL && i < c->o->num_qps; i++) {
		if (e->ah != NULL && e->ah[i] != NULL)
			ibv_destroy_ah(e->ah[i]);
		if (e->qp[i] != NULL)
			ibv_destroy_qp(e->qp[i]);
	}
	if (e->srq != NULL)
		ibv_destroy_srq(e->srq);
	if (e->mr != NULL)
		ibv_dereg_mr(e->mr);
	if (e->cq != NULL)
		ibv_destroy_cq(e->cq);
	if (e->channel != NULL)
		ibv_destroy_comp_channel(e->channel);
	if (e->pd != NULL)
		ibv_dealloc_pd(e->pd);
	if (e->ctx != NULL)
		ibv_close_device(e->ctx);
	if (e->buf != NULL)
		droce_free_shared(e->buf, e->buf_size);
	free(e->qp);
	free(e->ah);
	free(e->remote_qpn);
	free(e->local);
	memset(e, 0, sizeof(*e));
}
