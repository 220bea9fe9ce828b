/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Application threads over a ring link (tests/common/sweep.c): four threads
 * post SEND_WITH_IMM on one QP at once (libibverbs makes posting thread-safe)
 * while the main thread polls both ends and posts receives again. Every message
 * arrives once, each thread's in its posting order, with its bytes; every send
 * completes once. UC, which drops a message finding no receive, gets them all
 * posted beforehand.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sweep.h"

#define THREADS 4
#define PER_RC  150
#define PER_UC  60 /* THREADS * PER_UC receives posted at once */
#define LEN     200u

static struct sw_run r;
static enum sw_kind kind;
static uint32_t per;

static void *poster(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg;

	for (uint32_t i = 0; i < per; i++) {
		uint32_t tag = t << 16 | i;
		struct ibv_sge s = {.addr = (uintptr_t)r.e0.buf + SW_SRC(&r) + t * 4096,
				    .length = LEN,
				    .lkey = r.e0.mr->lkey};
		struct ibv_send_wr wr = {.wr_id = tag,
					 .sg_list = &s,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND_WITH_IMM,
					 .send_flags = IBV_SEND_SIGNALED,
					 .imm_data = htobe32(tag)},
				   *bad;
		int rc;

		/* the send queue may be full for a while: the pollers empty it */
		while ((rc = ibv_post_send(r.e0.qp[kind], &wr, &bad)) == ENOMEM)
			sched_yield();
		if (rc != 0)
			return (void *)(uintptr_t)rc;
	}
	return NULL;
}

static void threads_post(enum sw_kind k)
{
	static uint32_t next[THREADS], sends;
	pthread_t th[THREADS];
	struct timespec t0, now;
	uint32_t got = 0;

	kind = k;
	per = k == SW_RC ? PER_RC : PER_UC;
	sw_ring_setup(&r, sw_eth_mtu(IBV_MTU_1024), NULL, 1u << 20);
	sw_connect(&r, k, NULL);
	snprintf(r.what, sizeof(r.what), "%s, %d threads posting", sw_kind_name[k], THREADS);
	/* each thread sends its own bytes */
	for (uint32_t t = 0; t < THREADS; t++)
		sw_fill(r.e0.buf + SW_SRC(&r) + t * 4096, LEN, 1000 + t, 0);
	for (uint32_t j = 0; j < 256; j++) {
		struct sw_reply rep = sw_peer(&r, (struct sw_cmd){.op = SW_RECV,
								  .kind = k,
								  .id = j,
								  .off = SW_RECV(&r) + j * 256,
								  .len = 256});

		cr_assert_eq(rep.rc, 0);
	}
	for (uintptr_t t = 0; t < THREADS; t++)
		cr_assert_eq(pthread_create(&th[t], NULL, poster, (void *)t), 0);
	/* receive, re-post, check order and bytes; count the send completions */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < THREADS * per || sends < THREADS * per) {
		struct ibv_wc wc;

		clock_gettime(CLOCK_MONOTONIC, &now);
		cr_assert_lt(now.tv_sec - t0.tv_sec, SW_LIVENESS,
			     "%s: hung with %u of %u received, %u sent", r.what, got, THREADS * per,
			     sends);
		if (sw_poll_one(r.e0.scq[k], &wc, 0) == 0) {
			cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s: send %s", r.what,
				     ibv_wc_status_str(wc.status));
			sends++;
		}
		if (sw_poll_one(r.e1.rcq[k], &wc, 0) == 0) {
			uint32_t tag = be32toh(wc.imm_data), t = tag >> 16,
				 slot = (uint32_t)wc.wr_id;
			struct sw_reply rep;

			cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s: receive %s", r.what,
				     ibv_wc_status_str(wc.status));
			cr_assert_lt(t, THREADS, "%s: tag %#x", r.what, tag);
			cr_assert_eq(tag & 0xffff, next[t],
				     "%s: thread %u's message %u, expected %u", r.what, t,
				     tag & 0xffff, next[t]);
			next[t]++;
			cr_assert_eq(wc.byte_len, LEN);
			cr_assert_eq(
				sw_mismatch(r.e1.buf + SW_RECV(&r) + slot * 256, LEN, 1000 + t, 0),
				-1, "%s: thread %u's bytes", r.what, t);
			got++;
			if (k == SW_UC)
				continue;
			rep = sw_peer(&r, (struct sw_cmd){.op = SW_RECV,
							  .kind = k,
							  .id = slot,
							  .off = SW_RECV(&r) + slot * 256,
							  .len = 256});
			cr_assert_eq(rep.rc, 0);
		}
	}
	for (int t = 0; t < THREADS; t++) {
		void *ret;

		cr_assert_eq(pthread_join(th[t], &ret), 0);
		cr_expect_null(ret, "thread %d: post_send %s", t, strerror((int)(uintptr_t)ret));
	}
	sw_quiet(&r, k);
	sw_finish(&r);
}

TestSuite(sweep_threads, .timeout = 60);

Test(sweep_threads, rc_posted_from_four_threads)
{
	threads_post(SW_RC);
}

Test(sweep_threads, uc_posted_from_four_threads)
{
	threads_post(SW_UC);
}
