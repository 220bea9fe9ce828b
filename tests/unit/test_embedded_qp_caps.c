/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP capabilities on the embedded engine: RC, UC and UD QPs created with random caps within
 * what ibv_query_device() reports (max_qp_wr, max_sge; max_inline_data up to the documented
 * 512 bytes) through ibv_create_qp() and ibv_create_qp_ex() (with every operation of the
 * type in send_ops_flags), embedded and through droced. Every one must be created, its
 * returned caps at least what was asked (ibv_create_qp(3)), and ibv_query_qp() must say the
 * same. The sweep is seeded: a failure names the combination, and it is the same each run.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_harness.h"
#include "pair_harness.h"

#define SEED       0x18c0ffeeu
#define COMBOS     300
#define MAX_INLINE 512u /* doc/verbs.md: the inline limit ibv_create_qp() takes */

static struct pair_end e0, e1;
static struct ibv_device_attr dev;

static void setup(void)
{
	struct pair_opts o = pair_opts_default(IBV_QPT_RC);

	o.buf_len = 4096;
	pair_open(&o, &e0, &e1);
	cr_assert_eq(ibv_query_device(e0.ctx, &dev), 0, "ibv_query_device");
}

TestSuite(qp_caps, .init = setup, .timeout = 120);
TestSuite(qp_caps_daemon);

static const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : "UD";
}

/* Every operation of the type (the ibv_wr_* table; SEND_WITH_INV on RC only here). */
static uint64_t all_ops(enum ibv_qp_type type)
{
	const uint64_t uc = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			    IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW;

	if (type == IBV_QPT_RC)
		return uc | IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_READ |
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	if (type == IBV_QPT_UC)
		return uc;
	return IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
}

/* A value in [0, max], the edges chosen more often than the middle. */
static uint32_t pick(unsigned int *seed, uint32_t max)
{
	switch (rand_r(seed) % 4) {
	case 0:
		return max;
	case 1:
		return rand_r(seed) % 2;
	default:
		return (uint32_t)rand_r(seed) % (max + 1);
	}
}

static struct ibv_qp_cap random_cap(unsigned int *seed, const struct ibv_device_attr *d)
{
	struct ibv_qp_cap c = {
		.max_send_wr = pick(seed, (uint32_t)d->max_qp_wr),
		.max_recv_wr = pick(seed, (uint32_t)d->max_qp_wr),
		.max_send_sge = pick(seed, (uint32_t)d->max_sge),
		.max_recv_sge = pick(seed, (uint32_t)d->max_sge),
		.max_inline_data = pick(seed, MAX_INLINE),
	};

	return c;
}

/* A failure's description, or "" while every QP is as asked. */
struct verdict {
	char why[256];
};

static bool caps_short(const struct ibv_qp_cap *got, const struct ibv_qp_cap *asked)
{
	return got->max_send_wr < asked->max_send_wr || got->max_recv_wr < asked->max_recv_wr ||
	       got->max_send_sge < asked->max_send_sge || got->max_recv_sge < asked->max_recv_sge ||
	       got->max_inline_data < asked->max_inline_data;
}

static void verdict_caps(struct verdict *v, const char *what, const char *where,
			 const struct ibv_qp_cap *got)
{
	snprintf(v->why, sizeof(v->why),
		 "%s: %s gave send_wr %u recv_wr %u send_sge %u "
		 "recv_sge %u inline %u",
		 what, where, got->max_send_wr, got->max_recv_wr, got->max_send_sge,
		 got->max_recv_sge, got->max_inline_data);
}

/* The QPs of one context live in @p pd with @p cq; the outcome goes to @p v. */
static void create_one(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type type, bool ex,
		       const struct ibv_qp_cap *cap, unsigned int n, struct verdict *v)
{
	char what[160];
	struct ibv_qp_init_attr qa;
	struct ibv_qp_attr attr;
	struct ibv_qp_cap got;
	struct ibv_qp *qp;

	snprintf(what, sizeof(what),
		 "#%u %s %s send_wr %u recv_wr %u send_sge %u recv_sge %u "
		 "inline %u",
		 n, type_name(type), ex ? "ibv_create_qp_ex" : "ibv_create_qp", cap->max_send_wr,
		 cap->max_recv_wr, cap->max_send_sge, cap->max_recv_sge, cap->max_inline_data);
	if (ex) {
		struct ibv_qp_init_attr_ex ia = {.send_cq = cq,
						 .recv_cq = cq,
						 .cap = *cap,
						 .qp_type = type,
						 .comp_mask = IBV_QP_INIT_ATTR_PD |
							      IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
						 .pd = pd,
						 .send_ops_flags = all_ops(type)};

		qp = ibv_create_qp_ex(pd->context, &ia);
		got = ia.cap;
	} else {
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .cap = *cap, .qp_type = type};

		qp = ibv_create_qp(pd, &ia);
		got = ia.cap;
	}
	if (qp == NULL) {
		snprintf(v->why, sizeof(v->why), "%s: %s", what, strerror(errno));
		return;
	}
	if (caps_short(&got, cap))
		verdict_caps(v, what, "create", &got);
	else if (ibv_query_qp(qp, &attr, IBV_QP_CAP, &qa) != 0)
		snprintf(v->why, sizeof(v->why), "%s: ibv_query_qp: %s", what, strerror(errno));
	else if (caps_short(&attr.cap, cap))
		verdict_caps(v, what, "ibv_query_qp", &attr.cap);
	if (ibv_destroy_qp(qp) != 0 && v->why[0] == '\0')
		snprintf(v->why, sizeof(v->why), "%s: ibv_destroy_qp: %s", what, strerror(errno));
}

/* COMBOS random caps of each type, alternately through both calls; stops at a failure. */
static void sweep_all(struct ibv_pd *pd, struct ibv_cq *cq, const struct ibv_device_attr *d,
		      struct verdict *v)
{
	const enum ibv_qp_type types[] = {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD};

	for (unsigned int t = 0; t < 3 && v->why[0] == '\0'; t++) {
		unsigned int seed = SEED + (unsigned int)types[t];

		for (unsigned int n = 0; n < COMBOS && v->why[0] == '\0'; n++) {
			struct ibv_qp_cap cap = random_cap(&seed, d);

			create_one(pd, cq, types[t], n % 2 != 0, &cap, n, v);
		}
	}
}

/* The largest of everything at once: the combination a slot limit would refuse first. */
static void every_maximum(struct ibv_pd *pd, struct ibv_cq *cq, const struct ibv_device_attr *d,
			  struct verdict *v)
{
	const enum ibv_qp_type types[] = {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD};
	const struct ibv_qp_cap cap = {.max_send_wr = (uint32_t)d->max_qp_wr,
				       .max_recv_wr = (uint32_t)d->max_qp_wr,
				       .max_send_sge = (uint32_t)d->max_sge,
				       .max_recv_sge = (uint32_t)d->max_sge,
				       .max_inline_data = MAX_INLINE};

	for (unsigned int t = 0; t < 3 && v->why[0] == '\0'; t++) {
		create_one(pd, cq, types[t], false, &cap, 0, v);
		if (v->why[0] == '\0')
			create_one(pd, cq, types[t], true, &cap, 1, v);
	}
}

Test(qp_caps, random_within_device_limits)
{
	struct verdict v = {""};

	sweep_all(e0.pd, e0.cq, &dev, &v);
	cr_expect_str_empty(v.why, "%s", v.why);
}

Test(qp_caps, every_maximum_together)
{
	struct verdict v = {""};

	every_maximum(e0.pd, e0.cq, &dev, &v);
	cr_expect_str_empty(v.why, "%s", v.why);
}

/* ------------------------------------------------------------ through droced */

static struct verdict *shared_verdict;

static int app_sweep(void *arg)
{
	struct test_app_end e;
	struct ibv_device_attr d;
	int rc = test_app_end_open(&e, 0, IBV_QPT_RC, 4096);

	(void)arg;
	if (rc != 0) {
		snprintf(shared_verdict->why, sizeof(shared_verdict->why), "open: %s",
			 strerror(rc));
		return 1;
	}
	if (ibv_query_device(e.ctx, &d) != 0) {
		snprintf(shared_verdict->why, sizeof(shared_verdict->why), "query_device");
		return 1;
	}
	sweep_all(e.pd, e.cq, &d, shared_verdict);
	if (shared_verdict->why[0] == '\0')
		every_maximum(e.pd, e.cq, &d, shared_verdict);
	test_app_end_close(&e);
	return shared_verdict->why[0] != '\0';
}

Test(qp_caps_daemon, random_within_device_limits, .timeout = 180)
{
	struct test_daemon t = {.pid = -1};
	pid_t app;
	int rc;

	shared_verdict = test_shared_mem(sizeof(*shared_verdict));
	test_daemon_start(&t, NULL);
	app = test_app_start(&t, app_sweep, NULL);
	rc = test_app_wait(app, 150);
	cr_expect_eq(rc, 0, "application exit %d: %s", rc, shared_verdict->why);
	cr_expect_eq(test_daemon_stop(&t), 0, "droced exits 0 on SIGTERM");
}
