/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues: creation bounds, ibv_post_srq_recv (limits, full
 * queue, bad_wr), several QPs drawing from one SRQ, the limit event the
 * engine raises (droce_verbs_srq_check_limit), resize and destroy rules.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include "verbs_harness.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static void setup(void)
{
	ctx = harness_open(&pd);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cr_assert_not_null(cq, "ibv_create_cq: %s", strerror(errno));
}

TestSuite(verbs_srq, .init = setup, .timeout = 20);

static struct ibv_srq *make_srq(uint32_t max_wr, uint32_t max_sge)
{
	struct ibv_srq_init_attr a = {.attr = {.max_wr = max_wr, .max_sge = max_sge}};
	struct ibv_srq *srq = ibv_create_srq(pd, &a);

	cr_assert_not_null(srq, "ibv_create_srq(%u, %u): %s", max_wr, max_sge, strerror(errno));
	return srq;
}

static struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = type,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	cr_assert_not_null(qp, "ibv_create_qp: %s", strerror(errno));
	return qp;
}

static struct ibv_sge sge_at(uint64_t i)
{
	return (struct ibv_sge){.addr = 0x10000 + 256 * i, .length = 256, .lkey = 7};
}

static int post_one(struct ibv_srq *srq, uint64_t wr_id)
{
	struct ibv_sge s = sge_at(wr_id);
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &s, .num_sge = 1};
	struct ibv_recv_wr *bad = NULL;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

static uint32_t query_limit(struct ibv_srq *srq)
{
	struct ibv_srq_attr a;

	cr_assert_eq(ibv_query_srq(srq, &a), 0, "ibv_query_srq");
	return a.srq_limit;
}

/* Take one async event without blocking: true when there was one. */
static bool take_async(struct ibv_async_event *ev)
{
	struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};

	if (poll(&p, 1, 0) != 1)
		return false;
	cr_assert_eq(ibv_get_async_event(ctx, ev), 0, "ibv_get_async_event");
	return true;
}

/* ------------------------------------------------------------ create */

Test(verbs_srq, create_returns_at_least_asked)
{
	static const struct {
		uint32_t wr, sge;
	} asks[] = {{1, 1}, {1, 0}, {3, 2}, {100, 3}, {1000, 16}, {16384, 32}};

	for (unsigned int i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		int marker;
		struct ibv_srq_init_attr a = {
			.srq_context = &marker,
			.attr = {.max_wr = asks[i].wr, .max_sge = asks[i].sge}};
		struct ibv_srq *srq = ibv_create_srq(pd, &a);
		struct ibv_srq_attr q;

		cr_assert_not_null(srq, "SRQ %u: %s", i, strerror(errno));
		cr_expect_geq(a.attr.max_wr, asks[i].wr, "SRQ %u: max_wr", i);
		cr_expect_geq(a.attr.max_sge, asks[i].sge, "SRQ %u: max_sge", i);
		cr_expect_eq(srq->context, ctx, "SRQ %u: context", i);
		cr_expect_eq(srq->pd, pd, "SRQ %u: pd", i);
		cr_expect_eq(srq->srq_context, &marker, "SRQ %u: srq_context", i);
		cr_assert_eq(ibv_query_srq(srq, &q), 0, "SRQ %u: query", i);
		cr_expect_eq(q.max_wr, a.attr.max_wr, "SRQ %u: query max_wr as returned", i);
		cr_expect_eq(q.max_sge, a.attr.max_sge, "SRQ %u: query max_sge as returned", i);
		cr_expect_eq(q.srq_limit, 0, "SRQ %u: not armed", i);
		cr_expect_eq(ibv_destroy_srq(srq), 0, "SRQ %u: destroy", i);
	}
}

Test(verbs_srq, create_bounds)
{
	struct ibv_device_attr da;
	struct ibv_srq_init_attr a;

	cr_assert_eq(ibv_query_device(ctx, &da), 0, "ibv_query_device");
	a = (struct ibv_srq_init_attr){.attr = {.max_wr = 0, .max_sge = 1}};
	errno = 0;
	cr_expect_null(ibv_create_srq(pd, &a), "max_wr 0 refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	a = (struct ibv_srq_init_attr){
		.attr = {.max_wr = (uint32_t)da.max_srq_wr + 1, .max_sge = 1}};
	errno = 0;
	cr_expect_null(ibv_create_srq(pd, &a), "max_wr above max_srq_wr refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	a = (struct ibv_srq_init_attr){
		.attr = {.max_wr = 4, .max_sge = (uint32_t)da.max_srq_sge + 1}};
	errno = 0;
	cr_expect_null(ibv_create_srq(pd, &a), "max_sge above max_srq_sge refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	a = (struct ibv_srq_init_attr){
		.attr = {.max_wr = (uint32_t)da.max_srq_wr, .max_sge = (uint32_t)da.max_srq_sge}};
	cr_expect_not_null(ibv_create_srq(pd, &a), "the device maxima are accepted");
}

Test(verbs_srq, create_ignores_srq_limit)
{
	struct ibv_srq_init_attr a = {.attr = {.max_wr = 8, .max_sge = 1, .srq_limit = 4}};
	struct ibv_srq *srq = ibv_create_srq(pd, &a);
	struct ibv_async_event ev;

	cr_assert_not_null(srq, "ibv_create_srq");
	cr_expect_eq(query_limit(srq), 0, "srq_limit at creation does not arm (ibv_create_srq(3))");
	cr_expect_eq(droce_verbs_srq_check_limit(srq, 0), 0, "no event");
	cr_expect_not(take_async(&ev), "no async event");
}

/* ------------------------------------------------------------ post */

Test(verbs_srq, post_reaches_ring)
{
	struct ibv_srq *srq = make_srq(8, 3);
	struct ibv_sge s[3] = {sge_at(1), sge_at(2), sge_at(3)};
	struct ibv_recv_wr wr = {.wr_id = 0xabcdef, .sg_list = s, .num_sge = 3};
	struct ibv_recv_wr *bad = NULL;
	struct harness_recv r;

	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0, "ibv_post_srq_recv");
	cr_expect_eq(harness_srq_pending(srq), 1, "one WQE pending");
	cr_assert(harness_take_srq_recv(srq, &r), "the engine takes it");
	cr_expect_eq(r.hdr.wr_id, 0xabcdef, "wr_id");
	cr_expect_eq(r.hdr.num_sge, 3, "num_sge");
	for (int i = 0; i < 3; i++) {
		cr_expect_eq(r.sge[i].addr, s[i].addr, "sge %d addr", i);
		cr_expect_eq(r.sge[i].length, s[i].length, "sge %d length", i);
		cr_expect_eq(r.sge[i].lkey, s[i].lkey, "sge %d lkey", i);
	}
}

Test(verbs_srq, post_num_sge_limit)
{
	struct ibv_srq *srq = make_srq(8, 2);
	struct ibv_srq_attr q;
	struct ibv_sge s[40];
	struct ibv_recv_wr w[2];
	struct ibv_recv_wr *bad = NULL;
	struct harness_recv r;
	int max;

	for (int i = 0; i < 40; i++)
		s[i] = sge_at((uint64_t)i);
	cr_assert_eq(ibv_query_srq(srq, &q), 0, "query");
	max = (int)q.max_sge;
	cr_assert_lt(max, 40, "test array large enough");
	w[0] = (struct ibv_recv_wr){.wr_id = 1, .sg_list = s, .num_sge = max, .next = &w[1]};
	w[1] = (struct ibv_recv_wr){.wr_id = 2, .sg_list = s, .num_sge = max + 1};
	cr_expect_eq(ibv_post_srq_recv(srq, w, &bad), EINVAL, "num_sge above max_sge: EINVAL");
	cr_expect_eq(bad, &w[1], "bad_wr is the WR over the limit");
	cr_assert(harness_take_srq_recv(srq, &r), "the one before was posted");
	cr_expect_eq(r.hdr.wr_id, 1, "the first WR");
	cr_expect_not(harness_take_srq_recv(srq, &r), "the bad one was not");
}

Test(verbs_srq, post_full_enomem)
{
	struct ibv_srq *srq = make_srq(5, 1);
	struct ibv_srq_attr q;
	struct ibv_sge s = sge_at(0);
	struct ibv_recv_wr w[2];
	struct ibv_recv_wr *bad = NULL;
	struct harness_recv r;
	uint32_t i;

	cr_assert_eq(ibv_query_srq(srq, &q), 0, "query");
	for (i = 0; i < q.max_wr; i++)
		cr_assert_eq(post_one(srq, i), 0, "post %u of max_wr %u", i, q.max_wr);
	w[0] = (struct ibv_recv_wr){.wr_id = 100, .sg_list = &s, .num_sge = 1, .next = &w[1]};
	w[1] = (struct ibv_recv_wr){.wr_id = 101, .sg_list = &s, .num_sge = 1};
	cr_expect_eq(ibv_post_srq_recv(srq, w, &bad), ENOMEM, "full: ENOMEM");
	cr_expect_eq(bad, &w[0], "bad_wr is the first WR");
	cr_assert(harness_take_srq_recv(srq, &r), "the engine takes one");
	bad = NULL;
	cr_expect_eq(ibv_post_srq_recv(srq, w, &bad), ENOMEM, "room for one of two: ENOMEM");
	cr_expect_eq(bad, &w[1], "bad_wr is the second");
	cr_expect_eq(harness_srq_pending(srq), (int)q.max_wr, "the SRQ is full again");
}

Test(verbs_srq, post_without_qp)
{
	struct ibv_srq *srq = make_srq(4, 1);

	/* ibv_post_srq_recv(3): allowed whether any QP is associated or not */
	cr_expect_eq(post_one(srq, 1), 0, "posting with no QP attached");
	cr_expect_eq(harness_srq_pending(srq), 1, "the WQE is there");
}

/* ------------------------------------------------------------ shared by QPs */

Test(verbs_srq, shared_by_several_qps)
{
	struct ibv_srq *srq = make_srq(16, 1);
	struct ibv_qp *qps[3];
	struct harness_recv r;

	qps[0] = make_qp(IBV_QPT_RC, srq);
	qps[1] = make_qp(IBV_QPT_UC, srq);
	qps[2] = make_qp(IBV_QPT_UD, srq);
	for (int i = 0; i < 3; i++) {
		struct ibv_qp_init_attr qi;
		struct ibv_qp_attr q;

		cr_expect_eq(qps[i]->srq, srq, "QP %d uses the SRQ", i);
		cr_assert_eq(ibv_query_qp(qps[i], &q, IBV_QP_CAP, &qi), 0, "query QP %d", i);
		cr_expect_eq(qi.srq, srq, "QP %d: init_attr.srq", i);
		cr_expect_eq(qi.cap.max_recv_wr, 0, "QP %d: no receive queue of its own", i);
		cr_assert_eq(harness_qp_to_rts(qps[i]), 0, "QP %d to RTS", i);
	}
	for (uint64_t id = 0; id < 6; id++)
		cr_assert_eq(post_one(srq, id), 0, "post %lu", (unsigned long)id);
	/* each QP the engine serves takes the SRQ's next WQE, in posting order */
	for (uint64_t id = 0; id < 6; id++) {
		struct ibv_qp *qp = qps[id % 3];

		cr_assert(harness_take_recv(qp, &r), "QP %lu takes a WQE", (unsigned long)(id % 3));
		cr_expect_eq(r.hdr.wr_id, id, "it is WQE %lu", (unsigned long)id);
	}
	cr_expect_not(harness_take_recv(qps[0], &r), "the SRQ is empty");
}

Test(verbs_srq, qp_caps_with_srq)
{
	struct ibv_srq *srq = make_srq(16, 1);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		/* receive caps are ignored with an SRQ (ibv_create_qp(3)), even too large ones */
		.cap = {.max_send_wr = 4,
			.max_recv_wr = UINT32_MAX,
			.max_send_sge = 1,
			.max_recv_sge = UINT32_MAX},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	cr_assert_not_null(qp, "ibv_create_qp with an SRQ: %s", strerror(errno));
	cr_expect_eq(ia.cap.max_recv_wr, 0, "max_recv_wr 0");
	cr_expect_eq(ia.cap.max_recv_sge, 0, "max_recv_sge 0");
	cr_expect_geq(ia.cap.max_send_wr, 4, "send caps as usual");
}

Test(verbs_srq, qp_refuses_srq_of_other_context)
{
	struct ibv_pd *opd;
	struct ibv_context *other = harness_open(&opd);
	struct ibv_srq_init_attr a = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *osrq = ibv_create_srq(opd, &a);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = osrq, .qp_type = IBV_QPT_RC};

	cr_assert_not_null(other, "a second context");
	cr_assert_not_null(osrq, "an SRQ of the second context");
	errno = 0;
	cr_expect_null(ibv_create_qp(pd, &ia), "an SRQ of another context: refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	cr_expect_eq(ibv_destroy_srq(osrq), 0, "the SRQ was not taken by the refused QP");
}

/* ------------------------------------------------------------ limit */

Test(verbs_srq, limit_event_once)
{
	struct ibv_srq *srq = make_srq(16, 1);
	struct ibv_srq_attr a = {.srq_limit = 4};
	struct ibv_async_event ev;

	cr_assert_eq(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), 0, "arm limit 4");
	cr_expect_eq(query_limit(srq), 4, "query shows the armed limit");
	cr_expect_eq(droce_verbs_srq_check_limit(srq, 10), 0, "10 left: not below 4");
	cr_expect_eq(droce_verbs_srq_check_limit(srq, 4), 0, "4 left: not below 4");
	cr_expect_not(take_async(&ev), "no event yet");
	cr_expect_eq(droce_verbs_srq_check_limit(srq, 3), 1, "3 left: below 4, raised");
	cr_assert(take_async(&ev), "an async event");
	cr_expect_eq(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED, "IBV_EVENT_SRQ_LIMIT_REACHED");
	cr_expect_eq(ev.element.srq, srq, "for the SRQ");
	ibv_ack_async_event(&ev);
	cr_expect_eq(srq->events_completed, 1, "the ack is counted on the SRQ");
	cr_expect_eq(query_limit(srq), 0, "disarmed: query shows limit 0");
	cr_expect_eq(droce_verbs_srq_check_limit(srq, 0), 0, "no second event");
	cr_expect_not(take_async(&ev), "no second event queued");
}

Test(verbs_srq, limit_rearm)
{
	struct ibv_srq *srq = make_srq(16, 1);
	struct ibv_srq_attr a = {.srq_limit = 2};
	struct ibv_async_event ev;

	cr_assert_eq(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), 0, "arm limit 2");
	cr_expect_eq(droce_verbs_srq_check_limit(srq, 1), 1, "raised");
	cr_assert(take_async(&ev), "first event");
	ibv_ack_async_event(&ev);
	a.srq_limit = 8;
	cr_assert_eq(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), 0, "re-arm with limit 8");
	cr_expect_eq(query_limit(srq), 8, "armed again");
	cr_expect_eq(droce_verbs_srq_check_limit(srq, 7), 1, "raised again");
	cr_assert(take_async(&ev), "second event");
	cr_expect_eq(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED, "limit event");
	ibv_ack_async_event(&ev);
	cr_expect_eq(srq->events_completed, 2, "two acks counted");
}

Test(verbs_srq, limit_zero_disarms)
{
	struct ibv_srq *srq = make_srq(16, 1);
	struct ibv_srq_attr a = {.srq_limit = 4};
	struct ibv_async_event ev;

	cr_assert_eq(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), 0, "arm");
	a.srq_limit = 0;
	cr_assert_eq(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), 0, "limit 0");
	cr_expect_eq(query_limit(srq), 0, "disarmed");
	cr_expect_eq(droce_verbs_srq_check_limit(srq, 0), 0, "no event");
	cr_expect_not(take_async(&ev), "nothing queued");
}

Test(verbs_srq, limit_bounds)
{
	struct ibv_srq *srq = make_srq(16, 1);
	struct ibv_srq_attr q, a;

	cr_assert_eq(ibv_query_srq(srq, &q), 0, "query");
	a = (struct ibv_srq_attr){.srq_limit = q.max_wr + 1};
	cr_expect_eq(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), EINVAL, "limit above max_wr: EINVAL");
	cr_expect_eq(query_limit(srq), 0, "not armed");
	a.srq_limit = q.max_wr;
	cr_expect_eq(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), 0, "limit == max_wr accepted");
	cr_expect_eq(query_limit(srq), q.max_wr, "armed at max_wr");
}

Test(verbs_srq, resize_refused)
{
	struct ibv_srq *srq = make_srq(16, 1);
	struct ibv_srq_attr q, a = {.max_wr = 64, .srq_limit = 3};
	struct ibv_device_attr da;

	/* doc/verbs.md: resizing needs the engine's cooperation; refused with EINVAL */
	cr_expect_eq(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR), EINVAL, "IBV_SRQ_MAX_WR: EINVAL");
	cr_expect_eq(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT), EINVAL,
		     "MAX_WR with LIMIT: EINVAL as a whole");
	cr_assert_eq(ibv_query_srq(srq, &q), 0, "query");
	cr_expect_eq(q.max_wr, 16, "max_wr unchanged");
	cr_expect_eq(q.srq_limit, 0, "the limit of the refused request was not armed");
	cr_assert_eq(ibv_query_device(ctx, &da), 0, "ibv_query_device");
	cr_expect_not(da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE,
		      "the device does not claim IBV_DEVICE_SRQ_RESIZE");
}

Test(verbs_srq, modify_unknown_mask)
{
	struct ibv_srq *srq = make_srq(16, 1);
	struct ibv_srq_attr a = {.srq_limit = 1};

	cr_expect_eq(ibv_modify_srq(srq, &a, 1 << 5), EINVAL, "unknown mask bit: EINVAL");
	cr_expect_eq(ibv_modify_srq(srq, &a, 0), 0, "empty mask: nothing to do");
	cr_expect_eq(query_limit(srq), 0, "not armed");
}

/* ------------------------------------------------------------ destroy */

Test(verbs_srq, destroy_refused_while_attached)
{
	struct ibv_srq *srq = make_srq(8, 1);
	struct ibv_qp *a = make_qp(IBV_QPT_RC, srq), *b = make_qp(IBV_QPT_UD, srq);

	cr_expect_eq(ibv_destroy_srq(srq), EBUSY, "two QPs attached: EBUSY");
	cr_expect_eq(post_one(srq, 1), 0, "the SRQ still works");
	cr_assert_eq(ibv_destroy_qp(a), 0, "destroy one QP");
	cr_expect_eq(ibv_destroy_srq(srq), EBUSY, "one QP attached: EBUSY");
	cr_assert_eq(ibv_destroy_qp(b), 0, "destroy the other");
	harness_forget(srq);
	cr_expect_eq(ibv_destroy_srq(srq), 0, "then the SRQ can be destroyed");
}

Test(verbs_srq, pd_busy_while_srq_exists)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_srq_init_attr a = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *srq;

	cr_assert_not_null(pd2, "PD");
	srq = ibv_create_srq(pd2, &a);
	cr_assert_not_null(srq, "SRQ");
	cr_expect_eq(ibv_dealloc_pd(pd2), EBUSY, "the PD is busy");
	cr_assert_eq(ibv_destroy_srq(srq), 0, "destroy the SRQ");
	cr_expect_eq(ibv_dealloc_pd(pd2), 0, "the PD is free");
}
