/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-device verbs set-up of pair_harness.h. */
#include <criterion/criterion.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_engine.h"
#include "pair_harness.h"

#define ALL_MR_ACCESS                                                                \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	 IBV_ACCESS_REMOTE_ATOMIC)

struct pair_opts pair_opts_default(enum ibv_qp_type type)
{
	return (struct pair_opts){
		.type = type,
		.eth_mtu = 4200,
		.path_mtu = IBV_MTU_1024,
		.buf_len = 1u << 20,
		.max_send_wr = 64,
		.max_recv_wr = 64,
		.cq_depth = 256,
		.psn = 0x123,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.rd_atomic = 4,
		.qkey = 0x11111111u,
		.qp_access = IBV_ACCESS_REMOTE_WRITE |
			     (type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC
						 : 0),
		.mr_access = ALL_MR_ACCESS,
	};
}

void pair_env(const struct pair_opts *o)
{
	char devices[1024], lcores[16];
	int n;

	n = snprintf(devices, sizeof(devices),
		     "droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,mtu=%u,link=l0%s "
		     "droce1:mac=02:00:00:00:00:02,ip=10.0.0.2,mtu=%u,link=l0%s",
		     o->eth_mtu, o->keys[0] ? o->keys[0] : "", o->eth_mtu,
		     o->keys[1] ? o->keys[1] : "");
	cr_assert(n > 0 && (size_t)n < sizeof(devices), "DROCE_DEVICES too long");
	setenv("DROCE_DEVICES", devices, 1);
	/* ring links need no DMA memory: hugepages stay free for tests running beside */
	if (o->no_huge)
		setenv("DROCE_NO_HUGE", "1", 1);
	if (o->lcores != 0) {
		snprintf(lcores, sizeof(lcores), "%u", o->lcores);
		setenv("DROCE_LCORES", lcores, 1);
	}
}

static void end_device(const struct pair_opts *o, struct pair_end *x, struct ibv_device *dev)
{
	x->len = o->buf_len;
	x->qkey = o->qkey;
	x->buf = aligned_alloc(4096, x->len);
	cr_assert_not_null(x->buf);
	memset(x->buf, 0, x->len);
	x->ctx = ibv_open_device(dev);
	cr_assert_not_null(x->ctx, "open %s: %s", ibv_get_device_name(dev), strerror(errno));
	x->pd = ibv_alloc_pd(x->ctx);
	cr_assert_not_null(x->pd);
	x->mr = ibv_reg_mr(x->pd, x->buf, x->len, (int)o->mr_access);
	cr_assert_not_null(x->mr, "reg_mr: %s", strerror(errno));
	cr_assert_eq(ibv_query_gid(x->ctx, 1, 1, &x->gid), 0);
}

typedef void (*end_open_fn)(const struct pair_opts *o, struct pair_end *x, struct ibv_device *dev);

/* pair_env(), then @p open_end on droce0 (the engine starts) and droce1. */
static void open_both(const struct pair_opts *o, struct pair_end *e0, struct pair_end *e1,
		      end_open_fn open_end)
{
	struct ibv_device **list;
	int n;

	pair_env(o);
	list = ibv_get_device_list(&n);
	cr_assert_not_null(list);
	cr_assert_eq(n, 2, "DROCE_DEVICES names %d devices", n);
	open_end(o, e0, list[0]);
	cr_assert(droce_engine_running(), "the engine did not start");
	open_end(o, e1, list[1]);
	ibv_free_device_list(list);
}

void pair_open_devices(const struct pair_opts *o, struct pair_end *e0, struct pair_end *e1)
{
	open_both(o, e0, e1, end_device);
}

struct ibv_qp *pair_qp_create(const struct pair_opts *o, struct pair_end *x, struct ibv_cq *send_cq,
			      struct ibv_cq *recv_cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = send_cq,
		.recv_cq = recv_cq,
		.srq = srq,
		.cap = {.max_send_wr = o->max_send_wr,
			.max_recv_wr = srq ? 0 : o->max_recv_wr,
			.max_send_sge = 1,
			.max_recv_sge = 1},
		.qp_type = o->type,
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qkey = o->qkey,
				.qp_access_flags = o->qp_access};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	struct ibv_qp *qp = ibv_create_qp(x->pd, &ia);

	cr_assert_not_null(qp, "create_qp: %s", strerror(errno));
	mask |= o->type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	cr_assert_eq(ibv_modify_qp(qp, &a, mask), 0, "INIT: %s", strerror(errno));
	return qp;
}

void pair_qp_connect(const struct pair_opts *o, struct ibv_qp *qp, const union ibv_gid *dgid,
		     uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = o->path_mtu,
		.dest_qp_num = dqpn,
		.rq_psn = o->psn,
		.max_dest_rd_atomic = o->rd_atomic,
		.min_rnr_timer = 1, /* 0.01 ms */
		.ah_attr = {.is_global = 1,
			    .port_num = 1,
			    .grh = {.sgid_index = 1, .hop_limit = 64}},
	};
	int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	int rts = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (dgid != NULL)
		a.ah_attr.grh.dgid = *dgid;
	if (o->type == IBV_QPT_UD) {
		rtr = IBV_QP_STATE;
	} else if (o->type == IBV_QPT_RC) {
		rtr |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		rts |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC;
	}
	cr_assert_eq(ibv_modify_qp(qp, &a, rtr), 0, "RTR: %s", strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = o->psn;
	a.timeout = o->timeout;
	a.retry_cnt = o->retry_cnt;
	a.rnr_retry = o->rnr_retry;
	a.max_rd_atomic = o->rd_atomic;
	cr_assert_eq(ibv_modify_qp(qp, &a, rts), 0, "RTS: %s", strerror(errno));
}

void pair_end_open(const struct pair_opts *o, struct pair_end *x, struct ibv_device *dev)
{
	end_device(o, x, dev);
	x->cq = ibv_create_cq(x->ctx, o->cq_depth, NULL, NULL, 0);
	cr_assert_not_null(x->cq, "create_cq: %s", strerror(errno));
	x->qp = pair_qp_create(o, x, x->cq, x->cq, NULL);
}

/* @p x to RTS towards @p peer; a UD end gets its address handle to the peer. */
static void end_connect(const struct pair_opts *o, struct pair_end *x, const struct pair_end *peer)
{
	struct ibv_ah_attr ah = {.is_global = 1,
				 .port_num = 1,
				 .grh = {.dgid = peer->gid, .sgid_index = 1, .hop_limit = 64}};

	pair_qp_connect(o, x->qp, &peer->gid, peer->qp->qp_num);
	if (o->type != IBV_QPT_UD)
		return;
	x->ah = ibv_create_ah(x->pd, &ah);
	cr_assert_not_null(x->ah, "create_ah: %s", strerror(errno));
}

void pair_open(const struct pair_opts *o, struct pair_end *e0, struct pair_end *e1)
{
	open_both(o, e0, e1, pair_end_open);
	end_connect(o, e0, e1);
	end_connect(o, e1, e0);
}

/* ------------------------------------------------------------ traffic */

void pair_post_send(struct pair_end *x, const struct pair_end *to, const struct pair_wr *w)
{
	struct ibv_sge s = {
		.addr = (uintptr_t)x->buf + w->off, .length = w->len, .lkey = x->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = w->id,
				 .sg_list = &s,
				 .num_sge = w->len ? 1 : 0,
				 .opcode = w->op,
				 .send_flags = w->flags ? w->flags : IBV_SEND_SIGNALED,
				 .imm_data = htobe32((uint32_t)w->id)},
			   *bad;

	cr_assert_leq((size_t)w->off + w->len, x->len, "a send past the buffer");
	if (x->qp->qp_type == IBV_QPT_UD) {
		wr.wr.ud.ah = w->ah ? w->ah : x->ah;
		wr.wr.ud.remote_qpn = w->remote_qpn ? w->remote_qpn : to->qp->qp_num;
		wr.wr.ud.remote_qkey = w->remote_qkey ? w->remote_qkey : x->qkey;
	} else if (w->op == IBV_WR_ATOMIC_FETCH_AND_ADD || w->op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = (uintptr_t)to->buf + w->roff;
		wr.wr.atomic.rkey = w->rkey ? w->rkey : to->mr->rkey;
		wr.wr.atomic.compare_add = w->compare_add;
		wr.wr.atomic.swap = w->swap;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)to->buf + w->roff;
		wr.wr.rdma.rkey = w->rkey ? w->rkey : to->mr->rkey;
	}
	cr_assert_eq(ibv_post_send(x->qp, &wr, &bad), 0, "post_send %llu: %s",
		     (unsigned long long)w->id, strerror(errno));
}

void pair_post_recv(struct pair_end *x, uint64_t id, uint32_t off, uint32_t len, uint32_t lkey)
{
	struct ibv_sge s = {
		.addr = (uintptr_t)x->buf + off, .length = len, .lkey = lkey ? lkey : x->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1}, *bad;

	cr_assert_leq((size_t)off + len, x->len, "a receive past the buffer");
	cr_assert_eq(ibv_post_recv(x->qp, &wr, &bad), 0, "post_recv %llu: %s",
		     (unsigned long long)id, strerror(errno));
}

double pair_elapsed(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

struct ibv_wc pair_wait_wc(struct ibv_cq *cq, uint64_t id)
{
	struct timespec t0;
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (pair_elapsed(&t0) < PAIR_LIVENESS) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n == 0)
			continue;
		cr_assert_eq(n, 1, "ibv_poll_cq: %d", n);
		cr_assert_eq(wc.wr_id, id, "completion %llu, expected %llu",
			     (unsigned long long)wc.wr_id, (unsigned long long)id);
		return wc;
	}
	cr_assert_fail("no completion %llu", (unsigned long long)id);
	return wc;
}

static uint8_t pattern(uint32_t i, uint32_t seed)
{
	return (uint8_t)((i * 131u + seed * 7u + (i >> 8)) ^ (seed >> 3));
}

void pair_fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = pattern(i, seed);
}

long pair_mismatch(const uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != pattern(i, seed))
			return (long)i;
	return -1;
}

static uint64_t find_value(const struct droce_counter *c, int n, const char *name, const char *of)
{
	for (int i = 0; i < n; i++)
		if (strcmp(c[i].name, name) == 0)
			return c[i].value;
	cr_assert_fail("%s has no counter %s", of, name);
	return 0;
}

uint64_t pair_qp_counter(const struct pair_end *x, const char *name)
{
	struct droce_counter c[128];
	int n = droce_qp_counters(x->qp, c, 128);

	cr_assert_gt(n, 0, "droce_qp_counters: %s", strerror(-n));
	cr_assert_leq(n, 128);
	return find_value(c, n, name, "the QP");
}

uint64_t pair_port_counter(const struct pair_end *x, const char *name)
{
	struct droce_counter c[128];
	int n = droce_port_counters(x->ctx, 1, c, 128);

	cr_assert_gt(n, 0, "droce_port_counters: %s", strerror(-n));
	cr_assert_leq(n, 128);
	return find_value(c, n, name, "the port");
}
