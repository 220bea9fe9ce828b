/* SPDX-License-Identifier: BSD-3-Clause */
/* One end of the transport sweep and the commands it runs (sweep_end.h). */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "droce_engine.h"
#include "sweep_end.h"

void sw_fill(uint8_t *p, uint64_t len, uint32_t seed, uint64_t pat)
{
	for (uint64_t i = 0; i < len; i++)
		p[i] = sw_pattern(pat + i, seed);
}

int64_t sw_mismatch(const uint8_t *p, uint64_t len, uint32_t seed, uint64_t pat)
{
	for (uint64_t i = 0; i < len; i++)
		if (p[i] != sw_pattern(pat + i, seed))
			return (int64_t)i;
	return -1;
}

/* The SGEs of a request: one, none (len 0), or two around a gap of SW_GAP bytes. */
static int sges(const struct sw_end *e, const struct sw_cmd *c, struct ibv_sge s[2])
{
	uint32_t lkey = c->lkey ? c->lkey : e->mr->lkey;

	s[0] = (struct ibv_sge){
		.addr = (uintptr_t)e->buf + c->off, .length = (uint32_t)c->len, .lkey = lkey};
	if (c->len == 0)
		return 0;
	if (c->split == 0 || c->split >= c->len)
		return 1;
	s[0].length = c->split;
	s[1] = (struct ibv_sge){.addr = (uintptr_t)e->buf + c->off + c->split + SW_GAP,
				.length = (uint32_t)c->len - c->split,
				.lkey = lkey};
	return 2;
}

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

int sw_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, unsigned int seconds)
{
	struct timespec t0;

	memset(wc, 0, sizeof(*wc));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n == 1)
			return 0;
		if (n < 0)
			return -EIO;
		/* two cores for two engines and two tests: leave them the CPU */
		sched_yield();
	} while (seconds > 0 && since(&t0) < seconds);
	return -EAGAIN;
}

int64_t sw_pool_missing(const char *port)
{
	struct droce_engine_port_stats st;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (droce_engine_port_stats(port, &st) != 0)
			return -1;
		if (st.pool_avail == st.pool_avail_start && st.fault_held == 0)
			return 0;
	} while (since(&t0) < 5);
	return (int64_t)st.pool_avail_start - (int64_t)st.pool_avail;
}

int sw_end_open(struct sw_end *e, struct ibv_device *dev, size_t len)
{
	static const enum ibv_qp_type type[SW_KINDS] = {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD};
	unsigned int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND;

	memset(e, 0, sizeof(*e));
	e->len = len;
	e->buf = aligned_alloc(4096, len);
	if (e->buf == NULL)
		return -ENOMEM;
	memset(e->buf, 0, len);
	snprintf(e->port, sizeof(e->port), "%s", ibv_get_device_name(dev));
	e->ctx = ibv_open_device(dev);
	if (e->ctx == NULL)
		return -errno;
	e->pd = ibv_alloc_pd(e->ctx);
	if (e->pd == NULL)
		return -errno;
	e->mr = ibv_reg_mr(e->pd, e->buf, len, all);
	e->ro = ibv_reg_mr(e->pd, e->buf, len, 0);
	if (e->mr == NULL || e->ro == NULL)
		return -errno;
	for (int k = 0; k < SW_KINDS; k++) {
		struct ibv_qp_init_attr ia = {
			.cap = {.max_send_wr = 256,
				.max_recv_wr = 256,
				.max_send_sge = 2,
				.max_recv_sge = 2,
				.max_inline_data = SW_INLINE},
			.qp_type = type[k],
		};

		e->scq[k] = ibv_create_cq(e->ctx, 1024, NULL, NULL, 0);
		e->rcq[k] = ibv_create_cq(e->ctx, 1024, NULL, NULL, 0);
		if (e->scq[k] == NULL || e->rcq[k] == NULL)
			return -errno;
		ia.send_cq = e->scq[k];
		ia.recv_cq = e->rcq[k];
		e->qp[k] = ibv_create_qp(e->pd, &ia);
		if (e->qp[k] == NULL)
			return -errno;
	}
	return 0;
}

void sw_end_info(const struct sw_end *e, struct sw_info *info)
{
	struct ibv_port_attr pa;

	memset(info, 0, sizeof(*info));
	for (int k = 0; k < SW_KINDS; k++)
		info->qpn[k] = e->qp[k] != NULL ? e->qp[k]->qp_num : 0;
	if (ibv_query_port(e->ctx, 1, &pa) == 0) {
		info->gid_count = pa.gid_tbl_len < SW_GIDS ? (uint32_t)pa.gid_tbl_len : SW_GIDS;
		info->mtu = 128u << pa.active_mtu;
	}
	for (uint32_t i = 0; i < info->gid_count; i++)
		if (ibv_query_gid(e->ctx, 1, (int)i, &info->gid[i]) != 0)
			break;
	info->addr = (uintptr_t)e->buf;
	info->len = e->len;
	info->rkey = e->mr->rkey;
	info->ro_rkey = e->ro->rkey;
}

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	return ibv_modify_qp(qp, a, mask) != 0 ? -errno : 0;
}

int sw_end_connect(struct sw_end *e, const struct sw_path *p)
{
	struct ibv_qp *qp = p->kind < SW_KINDS ? e->qp[p->kind] : NULL;
	struct ibv_ah_attr ah = {
		.is_global = 1,
		.port_num = 1,
		.grh = {.dgid = p->dgid, .sgid_index = p->sgid_index, .hop_limit = 64}};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};
	struct ibv_wc wc;
	int rc, mask;

	if (qp == NULL)
		return -EINVAL;
	rc = modify(qp, &a, IBV_QP_STATE);
	/* what the QP completed before is the caller's business; start clean */
	while (ibv_poll_cq(e->scq[p->kind], 1, &wc) > 0 || ibv_poll_cq(e->rcq[p->kind], 1, &wc) > 0)
		;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (p->kind == SW_UD) {
		a.qkey = SW_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = p->access;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (rc == 0)
		rc = modify(qp, &a, mask);
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (p->kind != SW_UD) {
		a.path_mtu = (enum ibv_mtu)p->path_mtu;
		a.dest_qp_num = p->dest_qpn;
		a.rq_psn = p->rq_psn;
		a.ah_attr = ah;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	}
	if (p->kind == SW_RC) {
		a.max_dest_rd_atomic = p->max_dest_rd_atomic;
		a.min_rnr_timer = p->min_rnr_timer;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if (rc == 0)
		rc = modify(qp, &a, mask);
	if (p->rtr_only)
		return rc;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = p->sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (p->kind == SW_RC) {
		a.timeout = p->timeout;
		a.retry_cnt = p->retry_cnt;
		a.rnr_retry = p->rnr_retry;
		a.max_rd_atomic = p->max_rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (rc == 0)
		rc = modify(qp, &a, mask);
	if (rc == 0 && p->kind == SW_UD) {
		if (e->ah != NULL)
			ibv_destroy_ah(e->ah);
		e->ah = ibv_create_ah(e->pd, &ah);
		e->ud_dqpn = p->dest_qpn;
		if (e->ah == NULL)
			rc = -errno;
	}
	return rc;
}

static int do_post(struct sw_end *e, const struct sw_cmd *c)
{
	struct ibv_sge s[2];
	struct ibv_send_wr wr = {.wr_id = c->id,
				 .sg_list = s,
				 .num_sge = sges(e, c, s),
				 .opcode = (enum ibv_wr_opcode)c->wr_op,
				 .send_flags = IBV_SEND_SIGNALED | c->flags};
	struct ibv_qp *qp = c->kind < SW_KINDS ? e->qp[c->kind] : NULL;

	if (qp == NULL)
		return -EINVAL;
	switch (wr.opcode) {
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		wr.invalidate_rkey = c->imm;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wr.wr.atomic.remote_addr = c->addr;
		wr.wr.atomic.rkey = c->rkey;
		wr.wr.atomic.compare_add = c->val;
		wr.wr.atomic.swap = c->swap;
		break;
	default:
		wr.imm_data = htobe32(c->imm);
		wr.wr.rdma.remote_addr = c->addr;
		wr.wr.rdma.rkey = c->rkey;
		break;
	}
	if (c->kind == SW_UD) {
		wr.wr.ud.ah = e->ah;
		wr.wr.ud.remote_qpn = e->ud_dqpn;
		/* UD: rkey, when set, is the Q_Key to send with */
		wr.wr.ud.remote_qkey = c->rkey ? c->rkey : SW_QKEY;
	}
	return sw_post_chain(e, c->kind, &wr, c->chain);
}

int sw_post_chain(struct sw_end *e, enum sw_kind k, struct ibv_send_wr *wr, uint32_t chain)
{
	struct ibv_sge s[SW_CHAIN_MAX];
	struct ibv_send_wr more[SW_CHAIN_MAX], *bad;

	if (chain > SW_CHAIN_MAX || k >= SW_KINDS || e->qp[k] == NULL)
		return -EINVAL;
	for (uint32_t i = 0; i < chain; i++) {
		s[i] = (struct ibv_sge){
			.addr = (uintptr_t)e->buf, .length = 16, .lkey = e->mr->lkey};
		more[i] = (struct ibv_send_wr){
			.wr_id = wr->wr_id + 1 + i,
			.next = i + 1 < chain ? &more[i + 1] : NULL,
			.sg_list = &s[i],
			.num_sge = 1,
			.opcode = IBV_WR_SEND,
			/* on RC after a READ or an atomic only once it completed */
			.send_flags = IBV_SEND_SIGNALED | (k == SW_RC ? IBV_SEND_FENCE : 0)};
		if (k == SW_UD) {
			more[i].wr.ud.ah = e->ah;
			more[i].wr.ud.remote_qpn = e->ud_dqpn;
			more[i].wr.ud.remote_qkey = SW_QKEY;
		}
	}
	wr->next = chain > 0 ? &more[0] : NULL;
	return -ibv_post_send(e->qp[k], wr, &bad);
}

static int do_recv(struct sw_end *e, const struct sw_cmd *c)
{
	struct ibv_sge s[2];
	struct ibv_recv_wr wr = {.wr_id = c->id, .sg_list = s, .num_sge = sges(e, c, s)}, *bad;
	struct ibv_qp *qp = c->kind < SW_KINDS ? e->qp[c->kind] : NULL;

	if (qp == NULL)
		return -EINVAL;
	return -ibv_post_recv(qp, &wr, &bad);
}

/* A type-2 window over [off, off + len) bound by QP kind; its rkey in r->val. */
static int do_bind(struct sw_end *e, const struct sw_cmd *c, struct sw_reply *r)
{
	struct ibv_qp *qp = c->kind < SW_KINDS ? e->qp[c->kind] : NULL;
	struct ibv_send_wr wr = {.wr_id = c->id,
				 .opcode = IBV_WR_BIND_MW,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	int rc;

	if (qp == NULL)
		return -EINVAL;
	/* a new window, or (recv set) the last one again */
	if (!c->recv || e->mw == NULL) {
		if (e->mw != NULL)
			ibv_dealloc_mw(e->mw);
		e->mw = ibv_alloc_mw(e->pd, IBV_MW_TYPE_2);
		if (e->mw == NULL)
			return -errno;
		e->mw_rkey = e->mw->rkey;
	}
	e->mw_rkey = ibv_inc_rkey(e->mw_rkey);
	wr.bind_mw.mw = e->mw;
	wr.bind_mw.rkey = e->mw_rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){.mr = e->mr,
							 .addr = (uintptr_t)e->buf + c->off,
							 .length = c->len,
							 .mw_access_flags = (unsigned int)c->val};
	rc = ibv_post_send(qp, &wr, &bad);
	if (rc != 0)
		return -rc;
	r->val = wr.bind_mw.rkey;
	return sw_poll_one(e->scq[c->kind], &r->wc, SW_LIVENESS);
}

static int do_async(struct sw_end *e, unsigned int seconds, struct sw_reply *r)
{
	struct pollfd pfd = {.fd = e->ctx->async_fd, .events = POLLIN};
	struct ibv_async_event ev;

	if (poll(&pfd, 1, (int)seconds * 1000) != 1)
		return -EAGAIN;
	if (ibv_get_async_event(e->ctx, &ev) != 0)
		return -EIO;
	r->val = ev.event_type;
	switch (ev.event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		r->wc.qp_num = ev.element.qp->qp_num;
		break;
	default:
		break;
	}
	ibv_ack_async_event(&ev);
	return 0;
}

static int finish(struct sw_end *e, struct sw_reply *r)
{
	for (int k = 0; k < SW_KINDS; k++) {
		if (e->qp[k] != NULL && ibv_destroy_qp(e->qp[k]) != 0)
			return -errno;
		e->qp[k] = NULL;
	}
	r->val = sw_pool_missing(e->port);
	return 0;
}

static bool in_buf(const struct sw_end *e, uint64_t off, uint64_t len)
{
	return off <= e->len && len <= e->len - off;
}

void sw_serve(struct sw_end *e, const struct sw_cmd *c, struct sw_reply *r)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	uint64_t v;

	memset(r, 0, sizeof(*r));
	switch (c->op) {
	case SW_INFO:
		sw_end_info(e, &r->info);
		break;
	case SW_CONNECT:
		r->rc = sw_end_connect(e, &c->path);
		break;
	case SW_RECV:
		r->rc = do_recv(e, c);
		break;
	case SW_FILL:
		if (!in_buf(e, c->off, c->len))
			r->rc = -ERANGE;
		else
			sw_fill(e->buf + c->off, c->len, c->seed, c->pat);
		break;
	case SW_CHECK:
		if (!in_buf(e, c->off, c->len))
			r->rc = -ERANGE;
		else
			r->val = sw_mismatch(e->buf + c->off, c->len, c->seed, c->pat);
		break;
	case SW_PEEK:
		if (c->len > sizeof(r->bytes) || !in_buf(e, c->off, c->len))
			r->rc = -ERANGE;
		else
			memcpy(r->bytes, e->buf + c->off, c->len);
		break;
	case SW_POLL:
		if (c->kind >= SW_KINDS)
			r->rc = -EINVAL;
		else
			r->rc = sw_poll_one(c->recv ? e->rcq[c->kind] : e->scq[c->kind], &r->wc,
					    (unsigned int)c->len);
		break;
	case SW_STATE:
		if (c->kind >= SW_KINDS || e->qp[c->kind] == NULL)
			r->rc = -EINVAL;
		else if (ibv_query_qp(e->qp[c->kind], &attr, IBV_QP_STATE, &init) != 0)
			r->rc = -errno;
		else
			r->val = attr.qp_state;
		break;
	case SW_GET64:
		if (!in_buf(e, c->off, 8)) {
			r->rc = -ERANGE;
			break;
		}
		memcpy(&v, e->buf + c->off, 8);
		r->val = (int64_t)v;
		break;
	case SW_PUT64:
		if (!in_buf(e, c->off, 8))
			r->rc = -ERANGE;
		else
			memcpy(e->buf + c->off, &c->val, 8);
		break;
	case SW_POST:
		r->rc = do_post(e, c);
		break;
	case SW_BIND:
		r->rc = do_bind(e, c, r);
		break;
	case SW_ASYNC:
		r->rc = do_async(e, (unsigned int)c->len, r);
		break;
	case SW_DESTROY:
		if (c->kind >= SW_KINDS || e->qp[c->kind] == NULL)
			r->rc = -EINVAL;
		else if (ibv_destroy_qp(e->qp[c->kind]) != 0)
			r->rc = -errno;
		else
			e->qp[c->kind] = NULL;
		break;
	case SW_FINISH:
		r->rc = finish(e, r);
		break;
	case SW_STATS: {
		struct droce_engine_port_stats st;

		/* what was received was also processed */
		droce_engine_sync();
		r->rc = droce_engine_port_stats(e->port, &st);
		r->val = (int64_t)st.rx_pkts;
		r->wc.wr_id = st.tx_pkts;
		break;
	}
	case SW_EXIT:
		break;
	default:
		r->rc = -EINVAL;
		break;
	}
}

int sw_serve_fd(struct sw_end *e, int fd)
{
	struct sw_cmd c;
	struct sw_reply r;

	for (;;) {
		ssize_t n = recv(fd, &c, sizeof(c), 0);

		if (n == 0)
			return 0;
		if (n != (ssize_t)sizeof(c))
			return -EPROTO;
		sw_serve(e, &c, &r);
		if (send(fd, &r, sizeof(r), MSG_NOSIGNAL) != (ssize_t)sizeof(r))
			return -EPIPE;
		if (c.op == SW_EXIT)
			return 0;
	}
}
