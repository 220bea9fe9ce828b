/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues: creation bounds, ibv_poll_cq over the CQEs the engine
 * (here the harness) writes, the extended poll API (ibv_start_poll /
 * ibv_next_poll / ibv_end_poll, ibv_wc_read_*), and destroy while in use.
 */
#include <criterion/criterion.h>
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "verbs_harness.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static void setup(void)
{
	ctx = harness_open(&pd);
}

TestSuite(verbs_cq, .init = setup, .timeout = 20);

/* A CQE whose fields all differ from 0 and from each other. */
static struct droce_cqe full_cqe(uint64_t wr_id)
{
	struct droce_cqe e = {
		.wr_id = wr_id,
		.status = IBV_WC_REM_ACCESS_ERR,
		.opcode = IBV_WC_RECV_RDMA_WITH_IMM,
		.vendor_err = 0x77,
		.byte_len = 4000,
		.imm = htobe32(0x12345678),
		.qp_num = 0x123456,
		.src_qp = 0x654321,
		.wc_flags = IBV_WC_GRH | IBV_WC_WITH_IMM,
		.pkey_index = 0,
		.slid = 0x1234,
		.sl = 5,
		.dlid_path_bits = 3,
	};

	return e;
}

static struct droce_cqe simple_cqe(uint64_t wr_id)
{
	struct droce_cqe e = {
		.wr_id = wr_id,
		.status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_SEND,
		.qp_num = 0x11,
	};

	return e;
}

static struct ibv_qp *make_qp(struct ibv_cq *scq, struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	cr_assert_not_null(qp, "ibv_create_qp: %s", strerror(errno));
	return qp;
}

/* ------------------------------------------------------------ ibv_create_cq */

Test(verbs_cq, create_returns_at_least_asked)
{
	static const int sizes[] = {1, 2, 3, 63, 64, 65, 1000, 4096};
	int marker;

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct ibv_cq *cq = ibv_create_cq(ctx, sizes[i], &marker, NULL, 0);

		cr_assert_not_null(cq, "ibv_create_cq(%d): %s", sizes[i], strerror(errno));
		cr_expect_geq(cq->cqe, sizes[i], "cqe %d asked, %d returned", sizes[i], cq->cqe);
		cr_expect_eq(cq->context, ctx, "cq->context is the context");
		cr_expect_eq(cq->cq_context, &marker, "cq->cq_context is what was given");
		cr_expect_null(cq->channel, "no channel was given");
		cr_expect_eq(ibv_destroy_cq(cq), 0, "destroy of an unused CQ");
	}
}

Test(verbs_cq, create_refuses_bad_cqe)
{
	struct ibv_device_attr da;

	cr_assert_eq(ibv_query_device(ctx, &da), 0, "ibv_query_device");
	errno = 0;
	cr_expect_null(ibv_create_cq(ctx, 0, NULL, NULL, 0), "cqe 0 is refused");
	cr_expect_eq(errno, EINVAL, "cqe 0: errno EINVAL, got %d", errno);
	errno = 0;
	cr_expect_null(ibv_create_cq(ctx, -1, NULL, NULL, 0), "cqe -1 is refused");
	cr_expect_eq(errno, EINVAL, "cqe -1: errno EINVAL, got %d", errno);
	errno = 0;
	cr_expect_null(ibv_create_cq(ctx, da.max_cqe + 1, NULL, NULL, 0),
		       "cqe above max_cqe (%d) is refused", da.max_cqe);
	cr_expect_eq(errno, EINVAL, "cqe max+1: errno EINVAL, got %d", errno);
}

Test(verbs_cq, create_accepts_device_max)
{
	struct ibv_device_attr da;
	struct ibv_cq *cq;

	cr_assert_eq(ibv_query_device(ctx, &da), 0, "ibv_query_device");
	cq = ibv_create_cq(ctx, da.max_cqe, NULL, NULL, 0);
	cr_assert_not_null(cq, "cqe = max_cqe (%d) is accepted: %s", da.max_cqe, strerror(errno));
	cr_expect_geq(cq->cqe, da.max_cqe, "returned cqe %d >= asked %d", cq->cqe, da.max_cqe);
	cr_expect_leq(cq->cqe, da.max_cqe, "returned cqe %d within the device's max_cqe %d",
		      cq->cqe, da.max_cqe);
}

Test(verbs_cq, create_refuses_bad_comp_vector)
{
	errno = 0;
	cr_expect_null(ibv_create_cq(ctx, 8, NULL, NULL, ctx->num_comp_vectors),
		       "comp_vector == num_comp_vectors is refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	errno = 0;
	cr_expect_null(ibv_create_cq(ctx, 8, NULL, NULL, -1), "comp_vector -1 is refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
}

Test(verbs_cq, holds_cqe_entries)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 5, NULL, NULL, 0);
	struct ibv_wc wc[64];
	int i, n;

	cr_assert_not_null(cq, "ibv_create_cq");
	cr_assert_leq(cq->cqe, 64, "test array holds the CQ");
	for (i = 0; i < cq->cqe; i++) {
		struct droce_cqe e = simple_cqe((uint64_t)i);

		cr_assert(harness_complete(cq, &e), "CQE %d of %d fits", i, cq->cqe);
	}
	n = ibv_poll_cq(cq, 64, wc);
	cr_assert_eq(n, cq->cqe, "poll returns all %d CQEs, got %d", cq->cqe, n);
	for (i = 0; i < n; i++)
		cr_expect_eq(wc[i].wr_id, (uint64_t)i, "CQE %d in order", i);
}

/* ------------------------------------------------------------ ibv_poll_cq */

Test(verbs_cq, poll_returns_every_field)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct droce_cqe e = full_cqe(0xfeedface12345678ull);
	struct ibv_wc wc;

	cr_assert_not_null(cq, "ibv_create_cq");
	cr_assert(harness_complete(cq, &e), "harness writes the CQE");
	memset(&wc, 0xa5, sizeof(wc));
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "one CQE polled");
	cr_expect_eq(wc.wr_id, 0xfeedface12345678ull, "wr_id");
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "status");
	cr_expect_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM, "opcode");
	cr_expect_eq(wc.vendor_err, 0x77, "vendor_err");
	cr_expect_eq(wc.byte_len, 4000, "byte_len");
	cr_expect_eq(wc.imm_data, htobe32(0x12345678), "imm_data, big-endian as sent");
	cr_expect_eq(wc.qp_num, 0x123456, "qp_num");
	cr_expect_eq(wc.src_qp, 0x654321, "src_qp");
	cr_expect_eq(wc.wc_flags, IBV_WC_GRH | IBV_WC_WITH_IMM, "wc_flags");
	cr_expect_eq(wc.pkey_index, 0, "pkey_index");
	cr_expect_eq(wc.slid, 0x1234, "slid");
	cr_expect_eq(wc.sl, 5, "sl");
	cr_expect_eq(wc.dlid_path_bits, 3, "dlid_path_bits");
}

Test(verbs_cq, poll_returns_invalidated_rkey)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct droce_cqe e = simple_cqe(9);
	struct ibv_wc wc;

	cr_assert_not_null(cq, "ibv_create_cq");
	e.opcode = IBV_WC_RECV;
	e.wc_flags = IBV_WC_WITH_INV;
	e.imm = 0xabcd1234;
	cr_assert(harness_complete(cq, &e), "harness writes the CQE");
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "one CQE polled");
	cr_expect_eq(wc.wc_flags, IBV_WC_WITH_INV, "wc_flags says invalidated");
	cr_expect_eq(wc.invalidated_rkey, 0xabcd1234, "invalidated_rkey");
}

Test(verbs_cq, poll_empty_returns_zero)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_wc wc[4];

	cr_assert_not_null(cq, "ibv_create_cq");
	cr_expect_eq(ibv_poll_cq(cq, 4, wc), 0, "a new CQ is empty");
}

Test(verbs_cq, poll_in_order_and_partial)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_wc wc[4];
	int n;

	cr_assert_not_null(cq, "ibv_create_cq");
	for (int i = 0; i < 5; i++) {
		struct droce_cqe e = simple_cqe(100 + (uint64_t)i);

		cr_assert(harness_complete(cq, &e), "CQE %d written", i);
	}
	cr_expect_eq(ibv_poll_cq(cq, 0, wc), 0, "polling 0 entries returns 0");
	n = ibv_poll_cq(cq, 2, wc);
	cr_assert_eq(n, 2, "first poll of 2 returns 2, got %d", n);
	cr_expect_eq(wc[0].wr_id, 100, "first CQE first");
	cr_expect_eq(wc[1].wr_id, 101, "second CQE second");
	n = ibv_poll_cq(cq, 2, wc);
	cr_assert_eq(n, 2, "second poll of 2 returns 2, got %d", n);
	cr_expect_eq(wc[0].wr_id, 102, "third CQE");
	cr_expect_eq(wc[1].wr_id, 103, "fourth CQE");
	n = ibv_poll_cq(cq, 4, wc);
	cr_assert_eq(n, 1, "third poll returns the last one, got %d", n);
	cr_expect_eq(wc[0].wr_id, 104, "fifth CQE");
	cr_expect_eq(ibv_poll_cq(cq, 4, wc), 0, "then the CQ is empty");
}

Test(verbs_cq, poll_wraps_around)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 3, NULL, NULL, 0);
	uint64_t next = 0, want = 0;
	struct ibv_wc wc[2];

	cr_assert_not_null(cq, "ibv_create_cq");
	/* 3 in, 2 out, many times: the indices wrap the ring many times */
	for (int round = 0; round < 200; round++) {
		int n;

		for (int i = 0; i < 2; i++) {
			struct droce_cqe e = simple_cqe(next++);

			cr_assert(harness_complete(cq, &e), "round %d: CQE written", round);
		}
		n = ibv_poll_cq(cq, 2, wc);
		cr_assert_eq(n, 2, "round %d: 2 polled, got %d", round, n);
		for (int i = 0; i < n; i++)
			cr_assert_eq(wc[i].wr_id, want++, "round %d: CQE %d in order", round, i);
	}
}

Test(verbs_cq, poll_reports_corrupt_ring)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct droce_cq_view v;
	struct droce_ring *r;
	struct ibv_wc wc;

	cr_assert_not_null(cq, "ibv_create_cq");
	cr_assert_eq(droce_verbs_cq_view(cq, &v), 0, "engine view of the CQ");
	r = v.ring.addr;
	/* a broken engine publishes far more CQEs than the ring holds */
	__atomic_store_n(&r->prod.idx, 1000u, __ATOMIC_RELEASE);
	cr_expect_lt(ibv_poll_cq(cq, 1, &wc), 0, "a corrupt ring polls negative");
}

struct producer {
	struct ibv_cq *cq;
	uint64_t n;
};

/* The engine: one producer thread writing n CQEs, retrying while the CQ is full. */
static void *produce(void *arg)
{
	struct producer *p = arg;

	for (uint64_t i = 0; i < p->n; i++) {
		struct droce_cqe e = simple_cqe(i);

		while (!harness_complete(p->cq, &e))
			sched_yield();
	}
	return NULL;
}

struct consumer {
	struct ibv_cq *cq;
	uint8_t *seen; /* shared; each slot written by the one poller that got it */
	uint64_t n;
	uint64_t *total; /* atomic */
	int bad;
};

static void *consume(void *arg)
{
	struct consumer *c = arg;
	struct ibv_wc wc[8];

	while (__atomic_load_n(c->total, __ATOMIC_RELAXED) < c->n) {
		int got = ibv_poll_cq(c->cq, 8, wc);

		if (got < 0) {
			c->bad = 1;
			break;
		}
		for (int i = 0; i < got; i++) {
			if (wc[i].wr_id >= c->n ||
			    __atomic_fetch_add(&c->seen[wc[i].wr_id], 1, __ATOMIC_RELAXED) != 0)
				c->bad = 1;
		}
		__atomic_fetch_add(c->total, (uint64_t)got, __ATOMIC_RELAXED);
	}
	return NULL;
}

Test(verbs_cq, poll_from_several_threads)
{
	enum { N = 50000 };
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	static uint8_t seen[N];
	uint64_t total = 0;
	struct producer p = {.cq = cq, .n = N};
	struct consumer c[2] = {{cq, seen, N, &total, 0}, {cq, seen, N, &total, 0}};
	pthread_t tp, tc[2];

	cr_assert_not_null(cq, "ibv_create_cq");
	/* the harness attaches its producer here, before the threads start */
	{
		struct droce_cqe e = simple_cqe(0);
		struct ibv_wc wc;

		cr_assert(harness_complete(cq, &e), "attach");
		cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "drain");
	}
	cr_assert_eq(pthread_create(&tp, NULL, produce, &p), 0, "producer");
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&tc[i], NULL, consume, &c[i]), 0, "consumer %d", i);
	pthread_join(tp, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(tc[i], NULL);
	cr_expect_eq(total, N, "every CQE polled: %lu", (unsigned long)total);
	cr_expect_eq(c[0].bad + c[1].bad, 0, "no CQE polled twice, none out of range");
	for (int i = 0; i < N; i++)
		if (seen[i] != 1)
			cr_assert_fail("CQE %d seen %d times", i, seen[i]);
}

/* ------------------------------------------------------------ extended CQ */

#define ALL_WC_FLAGS                                                            \
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | \
	 IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |      \
	 IBV_WC_EX_WITH_DLID_PATH_BITS)

static struct ibv_cq_ex *make_cq_ex(uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex a = {.cqe = 16, .wc_flags = wc_flags};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);

	cr_assert_not_null(cq, "ibv_create_cq_ex: %s", strerror(errno));
	return cq;
}

Test(verbs_cq, ex_create)
{
	struct ibv_cq_init_attr_ex a = {.cqe = 100, .cq_context = &a, .wc_flags = ALL_WC_FLAGS};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);

	cr_assert_not_null(cq, "ibv_create_cq_ex: %s", strerror(errno));
	cr_expect_geq(cq->cqe, 100, "cqe at least asked, got %d", cq->cqe);
	cr_expect_eq(cq->context, ctx, "context");
	cr_expect_eq(cq->cq_context, &a, "cq_context");
	cr_expect_not_null(cq->start_poll, "start_poll set");
	cr_expect_not_null(cq->read_byte_len, "read_byte_len set for IBV_WC_EX_WITH_BYTE_LEN");
	cr_expect_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0, "destroy");
}

Test(verbs_cq, ex_empty_start_poll_enoent)
{
	struct ibv_cq_ex *cq = make_cq_ex(ALL_WC_FLAGS);
	struct ibv_poll_cq_attr pa = {0};

	cr_expect_eq(ibv_start_poll(cq, &pa), ENOENT, "start_poll on an empty CQ: ENOENT");
	/* no end_poll after ENOENT: the CQ must still be usable */
	cr_expect_eq(ibv_start_poll(cq, &pa), ENOENT, "again ENOENT (no lock left held)");
}

Test(verbs_cq, ex_reads_every_field)
{
	struct ibv_cq_ex *cq = make_cq_ex(ALL_WC_FLAGS);
	struct droce_cqe e = full_cqe(0x1122334455667788ull);
	struct ibv_poll_cq_attr pa = {0};

	cr_assert(harness_complete(ibv_cq_ex_to_cq(cq), &e), "harness writes the CQE");
	cr_assert_eq(ibv_start_poll(cq, &pa), 0, "start_poll finds the CQE");
	cr_expect_eq(cq->wr_id, 0x1122334455667788ull, "cq->wr_id");
	cr_expect_eq(cq->status, IBV_WC_REM_ACCESS_ERR, "cq->status");
	cr_expect_eq(ibv_wc_read_opcode(cq), IBV_WC_RECV_RDMA_WITH_IMM, "opcode");
	cr_expect_eq(ibv_wc_read_vendor_err(cq), 0x77, "vendor_err");
	cr_expect_eq(ibv_wc_read_byte_len(cq), 4000, "byte_len");
	cr_expect_eq(ibv_wc_read_imm_data(cq), htobe32(0x12345678), "imm_data");
	cr_expect_eq(ibv_wc_read_qp_num(cq), 0x123456, "qp_num");
	cr_expect_eq(ibv_wc_read_src_qp(cq), 0x654321, "src_qp");
	cr_expect_eq(ibv_wc_read_wc_flags(cq), IBV_WC_GRH | IBV_WC_WITH_IMM, "wc_flags");
	cr_expect_eq(ibv_wc_read_slid(cq), 0x1234, "slid");
	cr_expect_eq(ibv_wc_read_sl(cq), 5, "sl");
	cr_expect_eq(ibv_wc_read_dlid_path_bits(cq), 3, "dlid_path_bits");
	ibv_end_poll(cq);
	cr_expect_eq(ibv_start_poll(cq, &pa), ENOENT, "the CQE was consumed");
}

Test(verbs_cq, ex_next_poll_in_order_then_enoent)
{
	struct ibv_cq_ex *cq = make_cq_ex(ALL_WC_FLAGS);
	struct ibv_poll_cq_attr pa = {0};
	struct ibv_wc wc;

	for (int i = 0; i < 3; i++) {
		struct droce_cqe e = simple_cqe(10 + (uint64_t)i);

		cr_assert(harness_complete(ibv_cq_ex_to_cq(cq), &e), "CQE %d written", i);
	}
	cr_assert_eq(ibv_start_poll(cq, &pa), 0, "start_poll");
	cr_expect_eq(cq->wr_id, 10, "first CQE");
	cr_assert_eq(ibv_next_poll(cq), 0, "next_poll finds the second");
	cr_expect_eq(cq->wr_id, 11, "second CQE");
	cr_assert_eq(ibv_next_poll(cq), 0, "next_poll finds the third");
	cr_expect_eq(cq->wr_id, 12, "third CQE");
	cr_expect_eq(ibv_next_poll(cq), ENOENT, "next_poll past the last: ENOENT");
	ibv_end_poll(cq);
	/* the CQ must still work after next_poll's ENOENT and end_poll */
	cr_expect_eq(ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc), 0, "empty after the session");
	{
		struct droce_cqe e = simple_cqe(13);

		cr_assert(harness_complete(ibv_cq_ex_to_cq(cq), &e), "a later CQE written");
	}
	cr_assert_eq(ibv_start_poll(cq, &pa), 0, "start_poll finds the later CQE");
	cr_expect_eq(cq->wr_id, 13, "the later CQE, not lost");
	ibv_end_poll(cq);
}

Test(verbs_cq, ex_end_poll_after_enoent_keeps_late_cqe)
{
	struct ibv_cq_ex *cq = make_cq_ex(0);
	struct ibv_poll_cq_attr pa = {0};
	struct droce_cqe e = simple_cqe(1);
	struct ibv_wc wc;

	cr_assert(harness_complete(ibv_cq_ex_to_cq(cq), &e), "CQE written");
	cr_assert_eq(ibv_start_poll(cq, &pa), 0, "start_poll");
	cr_assert_eq(ibv_next_poll(cq), ENOENT, "next_poll: nothing more");
	/* the engine writes a CQE between next_poll's ENOENT and end_poll */
	e = simple_cqe(2);
	cr_assert(harness_complete(ibv_cq_ex_to_cq(cq), &e), "late CQE written");
	ibv_end_poll(cq);
	cr_assert_eq(ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc), 1, "the late CQE is still there");
	cr_expect_eq(wc.wr_id, 2, "it is the late CQE");
}

Test(verbs_cq, ex_shares_ring_with_poll_cq)
{
	struct ibv_cq_ex *cq = make_cq_ex(IBV_WC_EX_WITH_BYTE_LEN);
	struct ibv_poll_cq_attr pa = {0};
	struct ibv_wc wc;

	for (int i = 0; i < 2; i++) {
		struct droce_cqe e = simple_cqe((uint64_t)i);

		cr_assert(harness_complete(ibv_cq_ex_to_cq(cq), &e), "CQE %d written", i);
	}
	cr_assert_eq(ibv_start_poll(cq, &pa), 0, "start_poll");
	cr_expect_eq(cq->wr_id, 0, "extended API reads the first");
	ibv_end_poll(cq);
	cr_assert_eq(ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc), 1, "ibv_poll_cq reads the second");
	cr_expect_eq(wc.wr_id, 1, "the second");
}

Test(verbs_cq, ex_start_poll_refuses_comp_mask)
{
	struct ibv_cq_ex *cq = make_cq_ex(0);
	struct ibv_poll_cq_attr pa = {.comp_mask = 1};
	struct droce_cqe e = simple_cqe(5);

	cr_assert(harness_complete(ibv_cq_ex_to_cq(cq), &e), "CQE written");
	cr_expect_eq(ibv_start_poll(cq, &pa), EINVAL, "unknown comp_mask: EINVAL");
	pa.comp_mask = 0;
	cr_assert_eq(ibv_start_poll(cq, &pa), 0, "the CQ is still usable");
	cr_expect_eq(cq->wr_id, 5, "and the CQE was not consumed");
	ibv_end_poll(cq);
}

Test(verbs_cq, ex_single_threaded)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 4,
		.wc_flags = IBV_WC_EX_WITH_QP_NUM,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);
	struct ibv_poll_cq_attr pa = {0};
	struct droce_cqe e = simple_cqe(3);

	cr_assert_not_null(cq, "single-threaded CQ: %s", strerror(errno));
	cr_assert(harness_complete(ibv_cq_ex_to_cq(cq), &e), "CQE written");
	cr_assert_eq(ibv_start_poll(cq, &pa), 0, "start_poll");
	cr_expect_eq(ibv_wc_read_qp_num(cq), 0x11, "qp_num");
	ibv_end_poll(cq);
}

Test(verbs_cq, ex_refuses_unsupported_wc_flags)
{
	static const struct {
		uint64_t flag;
		const char *name;
	} unsupported[] = {
		{IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, "COMPLETION_TIMESTAMP"},
		{IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, "COMPLETION_TIMESTAMP_WALLCLOCK"},
		{IBV_WC_EX_WITH_CVLAN, "CVLAN"},
		{IBV_WC_EX_WITH_FLOW_TAG, "FLOW_TAG"},
		{IBV_WC_EX_WITH_TM_INFO, "TM_INFO"},
	};

	for (unsigned int i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		struct ibv_cq_init_attr_ex a = {
			.cqe = 8, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | unsupported[i].flag};

		errno = 0;
		cr_expect_null(ibv_create_cq_ex(ctx, &a), "wc_flags %s refused",
			       unsupported[i].name);
		cr_expect_eq(errno, EOPNOTSUPP, "%s: errno EOPNOTSUPP, got %d", unsupported[i].name,
			     errno);
	}
}

Test(verbs_cq, ex_refuses_unknown_attrs)
{
	struct ibv_cq_init_attr_ex a = {.cqe = 8, .comp_mask = 1u << 7};

	errno = 0;
	cr_expect_null(ibv_create_cq_ex(ctx, &a), "unknown comp_mask bit refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = 1u << 10;
	errno = 0;
	cr_expect_null(ibv_create_cq_ex(ctx, &a), "unknown create flag refused");
	cr_expect_eq(errno, EINVAL, "errno EINVAL, got %d", errno);
}

/* ------------------------------------------------------------ destroy, resize */

Test(verbs_cq, destroy_refused_while_qp_uses_it)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct droce_cqe e = simple_cqe(77);
	struct ibv_qp *qp;
	struct ibv_wc wc;

	cr_assert_not_null(cq, "ibv_create_cq");
	qp = make_qp(cq, cq);
	cr_expect_eq(ibv_destroy_cq(cq), EBUSY, "destroy while a QP uses the CQ: EBUSY");
	cr_assert(harness_complete(cq, &e), "the CQ still works after the refusal");
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 1, "and polls");
	cr_expect_eq(wc.wr_id, 77, "its CQE");
	harness_forget(qp);
	cr_assert_eq(ibv_destroy_qp(qp), 0, "destroy the QP");
	harness_forget(cq);
	cr_expect_eq(ibv_destroy_cq(cq), 0, "then the CQ can be destroyed");
}

Test(verbs_cq, destroy_refused_for_send_or_recv_use)
{
	struct ibv_cq *scq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp;

	cr_assert_not_null(scq, "send CQ");
	cr_assert_not_null(rcq, "recv CQ");
	qp = make_qp(scq, rcq);
	cr_expect_eq(ibv_destroy_cq(scq), EBUSY, "the send CQ is busy");
	cr_expect_eq(ibv_destroy_cq(rcq), EBUSY, "the receive CQ is busy");
	cr_assert_eq(ibv_destroy_qp(qp), 0, "destroy the QP");
	cr_expect_eq(ibv_destroy_cq(scq), 0, "send CQ free");
	cr_expect_eq(ibv_destroy_cq(rcq), 0, "receive CQ free");
}

Test(verbs_cq, destroy_counts_every_qp)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *a, *b;

	cr_assert_not_null(cq, "ibv_create_cq");
	a = make_qp(cq, cq);
	b = make_qp(cq, cq);
	cr_assert_eq(ibv_destroy_qp(a), 0, "destroy one QP");
	cr_expect_eq(ibv_destroy_cq(cq), EBUSY, "still busy with the other QP");
	cr_assert_eq(ibv_destroy_qp(b), 0, "destroy the other QP");
	cr_expect_eq(ibv_destroy_cq(cq), 0, "now free");
}

Test(verbs_cq, resize_refused)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);

	cr_assert_not_null(cq, "ibv_create_cq");
	/* doc/verbs.md: the ring is shared with the engine; resizing is not offered yet */
	cr_expect_eq(ibv_resize_cq(cq, 64), EOPNOTSUPP, "ibv_resize_cq: EOPNOTSUPP");
}
