/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Many QPs at once over a ring link (tests/common/sweep.c): six RC, three UC
 * and two UD pairs, each with its own part of the buffers, post their bursts
 * (every operation at sizes around the path MTU, unsignaled RC requests among
 * them) before any is waited for, so that the engine's send pass, its ACKs and
 * READ responses interleave QPs. Every completion of every pair in order, every
 * byte where it belongs, the pools back where they started.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sweep.h"

#define NPAIRS 11

static const enum sw_kind kind_of[NPAIRS] = {SW_RC, SW_UC, SW_RC, SW_UD, SW_RC, SW_UC,
					     SW_RC, SW_UD, SW_RC, SW_UC, SW_RC};

static struct sw_run base, pr[NPAIRS];
static struct sw_burst burst[NPAIRS];

/* An end sharing @p e's context, PD and MR, with a part of its buffer and a QP of its own. */
static void part_of(struct sw_end *x, const struct sw_end *e, size_t off, size_t len,
		    enum sw_kind k)
{
	static const enum ibv_qp_type type[SW_KINDS] = {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD};
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 256,
			.max_recv_wr = 256,
			.max_send_sge = 2,
			.max_recv_sge = 2},
		.qp_type = type[k],
	};

	*x = *e;
	x->buf = e->buf + off;
	x->len = len;
	x->ah = NULL;
	x->mw = NULL;
	for (int j = 0; j < SW_KINDS; j++)
		x->qp[j] = NULL;
	x->scq[k] = ibv_create_cq(x->ctx, 512, NULL, NULL, 0);
	x->rcq[k] = ibv_create_cq(x->ctx, 512, NULL, NULL, 0);
	cr_assert_not_null(x->scq[k]);
	cr_assert_not_null(x->rcq[k]);
	ia.send_cq = x->scq[k];
	ia.recv_cq = x->rcq[k];
	x->qp[k] = ibv_create_qp(x->pd, &ia);
	cr_assert_not_null(x->qp[k], "create_qp: %s", strerror(errno));
}

static void pairs_setup(void)
{
	size_t chunk;

	sw_ring_setup(&base, sw_eth_mtu(IBV_MTU_1024), NULL, 3u << 20);
	chunk = (base.e0.len / NPAIRS) & ~(size_t)4095;
	for (int i = 0; i < NPAIRS; i++) {
		enum sw_kind k = kind_of[i];
		struct sw_run *p = &pr[i];
		struct sw_path p0, p1;

		*p = base;
		part_of(&p->e0, &base.e0, i * chunk, chunk, k);
		part_of(&p->e1, &base.e1, i * chunk, chunk, k);
		p->region = ((chunk - 4096 - SW_WIN_LEN) / 3) & ~(uint64_t)4095;
		p->i0.addr = (uintptr_t)p->e0.buf;
		p->i1.addr = (uintptr_t)p->e1.buf;
		p->i0.len = chunk;
		p->i1.len = chunk;
		p->i0.qpn[k] = p->e0.qp[k]->qp_num;
		p->i1.qpn[k] = p->e1.qp[k]->qp_num;
		p->seq = (uint32_t)i << 20; /* each pair its own patterns */
		p0 = sw_path_of(p, k, false);
		p1 = sw_path_of(p, k, true);
		cr_assert_eq(sw_end_connect(&p->e0, &p0), 0);
		cr_assert_eq(sw_end_connect(&p->e1, &p1), 0);
	}
}

Test(sweep_many, qps_interleaved, .timeout = 120)
{
	uint64_t sizes[6];
	uint32_t cursor[NPAIRS] = {0};
	bool more = true;

	pairs_setup();
	sizes[0] = 1;
	sizes[1] = base.pmtu - 1;
	sizes[2] = base.pmtu + 1;
	sizes[3] = 2ull * base.pmtu;
	sizes[4] = 3ull * base.pmtu + 7;
	sizes[5] = 17ull * base.pmtu + 1;
	while (more) {
		more = false;
		for (int i = 0; i < NPAIRS; i++) {
			snprintf(pr[i].what, sizeof(pr[i].what), "pair %d (%s)", i,
				 sw_kind_name[kind_of[i]]);
			sw_burst_post(&pr[i], kind_of[i], &burst[i], sizes, 6, sizes[5],
				      &cursor[i]);
		}
		for (int i = 0; i < NPAIRS; i++) {
			snprintf(pr[i].what, sizeof(pr[i].what), "pair %d (%s)", i,
				 sw_kind_name[kind_of[i]]);
			sw_burst_check(&pr[i], kind_of[i], &burst[i]);
			more |= burst[i].n > 0;
		}
	}
	for (int i = 0; i < NPAIRS; i++) {
		enum sw_kind k = kind_of[i];

		sw_quiet(&pr[i], k);
		cr_expect_eq(ibv_destroy_qp(pr[i].e0.qp[k]), 0);
		cr_expect_eq(ibv_destroy_qp(pr[i].e1.qp[k]), 0);
		if (pr[i].e0.ah != NULL)
			ibv_destroy_ah(pr[i].e0.ah);
		if (pr[i].e1.ah != NULL)
			ibv_destroy_ah(pr[i].e1.ah);
	}
	sw_finish(&base);
}
