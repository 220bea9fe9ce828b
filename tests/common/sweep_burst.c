/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport sweep in bursts: every operation and size posted at once by one
 * ibv_post_send(), unsignaled RC requests among them (sweep.h, sw_burst()).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_priv.h"

/* ------------------------------------------------------------ bursts */

static bool burst_takes_recv(enum ibv_wr_opcode op)
{
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

static bool burst_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP;
}

/*
 * Post @p n messages of @p m from e0 in one ibv_post_send(): message i uses slot
 * i of each region (@p slot bytes apart; atomics the i-th 8 bytes of both ends'
 * ATOM regions).
 */
static void burst_post(struct sw_run *r, enum sw_kind k, struct sw_burst_msg *m, uint32_t n,
		       uint64_t slot)
{
	static struct ibv_send_wr wr[256];
	static struct ibv_sge sge[256][2];
	struct ibv_send_wr *bad = NULL;
	int rc;

	cr_assert_leq(n, 256);
	for (uint32_t i = 0; i < n; i++) {
		struct ibv_send_wr *w = &wr[i];
		uint64_t off = i * slot;
		uint32_t split;

		memset(w, 0, sizeof(*w));
		w->wr_id = m[i].seed;
		w->opcode = m[i].op;
		w->next = i + 1 < n ? &wr[i + 1] : NULL;
		w->sg_list = sge[i];
		w->send_flags = m[i].signaled ? IBV_SEND_SIGNALED : 0;
		if (burst_atomic(m[i].op)) {
			/* the original value into e0's ATOM region, as the target is the peer's */
			sge[i][0] =
				(struct ibv_sge){.addr = (uintptr_t)r->e0.buf + SW_ATOM(r) + 8 * i,
						 .length = 8,
						 .lkey = r->e0.mr->lkey};
			w->num_sge = 1;
			w->wr.atomic.remote_addr = r->i1.addr + SW_ATOM(r) + 8 * i;
			w->wr.atomic.rkey = r->i1.rkey;
			w->wr.atomic.compare_add =
				m[i].op == IBV_WR_ATOMIC_CMP_AND_SWP ? m[i].seed : i;
			w->wr.atomic.swap = ~(uint64_t)m[i].seed;
			continue;
		}
		/* READ: into two SGEs of DST; the rest: out of two SGEs of SRC */
		off += m[i].op == IBV_WR_RDMA_READ ? SW_DST(r) : SW_SRC(r);
		split = m[i].op == IBV_WR_RDMA_READ ? sw_recv_split(m[i].len)
						    : sw_send_split(m[i].len);
		sge[i][0] = (struct ibv_sge){.addr = (uintptr_t)r->e0.buf + off,
					     .length = (uint32_t)m[i].len,
					     .lkey = r->e0.mr->lkey};
		w->num_sge = m[i].len > 0 ? 1 : 0;
		if (split > 0) {
			sge[i][0].length = split;
			sge[i][1] = (struct ibv_sge){.addr = (uintptr_t)r->e0.buf + off + split +
							     SW_GAP,
						     .length = (uint32_t)m[i].len - split,
						     .lkey = r->e0.mr->lkey};
			w->num_sge = 2;
		}
		w->imm_data = htobe32(m[i].seed);
		if (k == SW_UD) {
			w->wr.ud.ah = r->e0.ah;
			w->wr.ud.remote_qpn = r->e0.ud_dqpn;
			w->wr.ud.remote_qkey = SW_QKEY;
		} else {
			w->wr.rdma.remote_addr =
				r->i1.addr + (m[i].op == IBV_WR_RDMA_READ ? SW_SRC(r) : SW_DST(r)) +
				i * slot;
			w->wr.rdma.rkey = r->i1.rkey;
		}
	}
	rc = ibv_post_send(r->e0.qp[k], wr, &bad);
	cr_assert_eq(rc, 0, "%s: post %u requests: %s (at %ld)", r->what, n, strerror(rc),
		     bad != NULL ? (long)(bad - wr) : -1L);
}

/* Fill what a burst sends and clear where it lands. */
static void burst_prepare(struct sw_run *r, enum sw_kind k, struct sw_burst_msg *m, uint32_t n,
			  uint64_t slot)
{
	uint32_t recvs = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = i * slot, grh = k == SW_UD ? 40 : 0;
		struct sw_reply rep;

		m[i].recv = UINT32_MAX;
		if (burst_atomic(m[i].op)) {
			sw_put64(r, true, SW_ATOM(r) + 8 * i, m[i].seed);
			sw_put64(r, false, SW_ATOM(r) + 8 * i, 0);
			continue;
		}
		if (m[i].op == IBV_WR_RDMA_READ) {
			rep = sw_peer(r, (struct sw_cmd){.op = SW_FILL,
							 .off = SW_SRC(r) + off,
							 .len = m[i].len,
							 .seed = m[i].seed});
			cr_assert_eq(rep.rc, 0);
			sw_fill_layout(r, false, SW_DST(r) + off, m[i].len, sw_recv_split(m[i].len),
				       SW_ZERO);
			continue;
		}
		sw_fill_layout(r, false, SW_SRC(r) + off, m[i].len, sw_send_split(m[i].len),
			       m[i].seed);
		if (m[i].op == IBV_WR_RDMA_WRITE || m[i].op == IBV_WR_RDMA_WRITE_WITH_IMM)
			sw_fill_layout(r, true, SW_DST(r) + off, m[i].len, 0, SW_ZERO);
		if (!burst_takes_recv(m[i].op))
			continue;
		/* receives in the order the messages arrive; a SEND lands in the slot of its
		 * receive, split in two as the sweep does */
		m[i].recv = recvs++;
		if (m[i].op == IBV_WR_RDMA_WRITE_WITH_IMM) {
			rep = sw_peer(r,
				      (struct sw_cmd){.op = SW_RECV, .kind = k, .id = m[i].seed});
		} else {
			sw_fill_layout(r, true, SW_RECV(r) + off, grh + m[i].len,
				       k == SW_UD ? 0 : sw_recv_split(m[i].len), SW_ZERO);
			rep = sw_peer(
				r,
				(struct sw_cmd){.op = SW_RECV,
						.kind = k,
						.id = m[i].seed,
						.off = SW_RECV(r) + off,
						.len = grh + m[i].len,
						.split = k == SW_UD ? 0 : sw_recv_split(m[i].len)});
		}
		cr_assert_eq(rep.rc, 0, "%s: post_recv: %s", r->what, strerror(-rep.rc));
	}
}

/* The completions of a burst, in order, and every byte where it belongs. */
static void burst_check(struct sw_run *r, enum sw_kind k, struct sw_burst_msg *m, uint32_t n,
			uint64_t slot)
{
	char what[64];

	snprintf(what, sizeof(what), "%.63s", r->what);
	/* the signaled requests complete in order, the unsignaled ones silently */
	for (uint32_t i = 0; i < n; i++) {
		struct ibv_wc wc;

		if (!m[i].signaled)
			continue;
		wc = sw_wait_send(r, k, m[i].seed);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s: message %u (op %d, %llu bytes): %s",
			     r->what, i, m[i].op, (unsigned long long)m[i].len,
			     ibv_wc_status_str(wc.status));
	}
	/* the receives in the order of their messages */
	for (uint32_t i = 0; i < n; i++) {
		uint64_t grh = k == SW_UD ? 40 : 0;
		struct ibv_wc wc;

		if (m[i].recv == UINT32_MAX)
			continue;
		snprintf(r->what, sizeof(r->what), "%s, message %u (op %d, %llu bytes)", what, i,
			 m[i].op, (unsigned long long)m[i].len);
		wc = sw_peer_wait(r, k, true, m[i].seed);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s: receive %s", r->what,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.byte_len, grh + m[i].len, "%s: %u bytes received", r->what,
			     wc.byte_len);
		if (m[i].op != IBV_WR_SEND)
			cr_expect_eq(be32toh(wc.imm_data), m[i].seed, "%s: immediate", r->what);
	}
	/* UC completes a WRITE once sent: a last SEND tells when everything arrived */
	if (k == SW_UC)
		sw_uc_marker(r);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = i * slot, grh = k == SW_UD ? 40 : 0;

		snprintf(r->what, sizeof(r->what), "%s, message %u (op %d, %llu bytes)", what, i,
			 m[i].op, (unsigned long long)m[i].len);
		if (burst_atomic(m[i].op)) {
			uint64_t want = m[i].op == IBV_WR_ATOMIC_CMP_AND_SWP ? ~(uint64_t)m[i].seed
									     : m[i].seed + i;

			cr_expect_eq(sw_get64(r, false, SW_ATOM(r) + 8 * i), m[i].seed,
				     "%s: original value", r->what);
			cr_expect_eq(sw_get64(r, true, SW_ATOM(r) + 8 * i), want, "%s: result",
				     r->what);
		} else if (m[i].op == IBV_WR_RDMA_READ) {
			sw_expect_layout(r, false, SW_DST(r) + off, m[i].len,
					 sw_recv_split(m[i].len), m[i].seed);
		} else if (m[i].op == IBV_WR_RDMA_WRITE || m[i].op == IBV_WR_RDMA_WRITE_WITH_IMM) {
			sw_expect_layout(r, true, SW_DST(r) + off, m[i].len, 0, m[i].seed);
		} else {
			sw_expect_layout(r, true, SW_RECV(r) + off + grh, m[i].len,
					 k == SW_UD ? 0 : sw_recv_split(m[i].len), m[i].seed);
		}
	}
	snprintf(r->what, sizeof(r->what), "%s", what);
}

static const enum ibv_wr_opcode burst_rc_ops[] = {IBV_WR_SEND,
						  IBV_WR_RDMA_WRITE,
						  IBV_WR_RDMA_READ,
						  IBV_WR_SEND_WITH_IMM,
						  IBV_WR_RDMA_READ,
						  IBV_WR_RDMA_WRITE_WITH_IMM,
						  IBV_WR_ATOMIC_FETCH_AND_ADD,
						  IBV_WR_RDMA_READ,
						  IBV_WR_ATOMIC_CMP_AND_SWP};
static const enum ibv_wr_opcode burst_uc_ops[] = {IBV_WR_SEND, IBV_WR_RDMA_WRITE,
						  IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM};
static const enum ibv_wr_opcode burst_ud_ops[] = {IBV_WR_SEND, IBV_WR_SEND_WITH_IMM};

/* Message @p i of the rotation: operation (o + s) % nops at size s. false past the end. */
static bool burst_next(const struct sw_run *r, enum sw_kind k, const uint64_t *sizes,
		       unsigned int nsizes, uint64_t max_len, uint32_t *cursor,
		       struct sw_burst_msg *m)
{
	const enum ibv_wr_opcode *ops = k == SW_RC   ? burst_rc_ops
					: k == SW_UC ? burst_uc_ops
						     : burst_ud_ops;
	unsigned int nops = k == SW_RC   ? sizeof(burst_rc_ops) / sizeof(burst_rc_ops[0])
			    : k == SW_UC ? sizeof(burst_uc_ops) / sizeof(burst_uc_ops[0])
					 : sizeof(burst_ud_ops) / sizeof(burst_ud_ops[0]);

	for (; *cursor < nsizes * nops; (*cursor)++) {
		unsigned int s = *cursor / nops, o = *cursor % nops;
		enum ibv_wr_opcode op = ops[(o + s) % nops];
		uint64_t len = burst_atomic(op) ? 8 : sizes[s];

		if (len > max_len || (k == SW_UD && len > r->i0.mtu))
			continue;
		*m = (struct sw_burst_msg){.op = op, .len = len};
		(*cursor)++;
		return true;
	}
	return false;
}

void sw_burst_post(struct sw_run *r, enum sw_kind k, struct sw_burst *b, const uint64_t *sizes,
		   unsigned int nsizes, uint64_t max_len, uint32_t *cursor)
{
	uint32_t per;

	b->slot = (max_len + 40 + SW_GAP + 64 + 4095) & ~(uint64_t)4095;
	per = (uint32_t)(r->region / b->slot);
	cr_assert_gt(per, 0, "%s: no room for a burst of %llu-byte messages", r->what,
		     (unsigned long long)max_len);
	if (per > SW_BURST_MAX)
		per = SW_BURST_MAX;
	/* every size with every operation, as many as the regions hold */
	for (b->n = 0; b->n < per; b->n++) {
		struct sw_burst_msg *m = &b->m[b->n];

		if (!burst_next(r, k, sizes, nsizes, max_len, cursor, m))
			break;
		m->seed = ++r->seq;
		/* unsignaled now and then (the last of a burst always signaled) */
		m->signaled = k != SW_RC || b->n % 4 != 1;
	}
	if (b->n == 0)
		return;
	b->m[b->n - 1].signaled = true;
	burst_prepare(r, k, b->m, b->n, b->slot);
	burst_post(r, k, b->m, b->n, b->slot);
}

void sw_burst_check(struct sw_run *r, enum sw_kind k, struct sw_burst *b)
{
	if (b->n > 0)
		burst_check(r, k, b->m, b->n, b->slot);
}

void sw_burst(struct sw_run *r, enum sw_kind k, const uint64_t *sizes, unsigned int nsizes,
	      uint64_t max_len)
{
	static struct sw_burst b;
	uint32_t cursor = 0;

	do {
		snprintf(r->what, sizeof(r->what), "%s burst, MTU %u", sw_kind_name[k], r->pmtu);
		sw_burst_post(r, k, &b, sizes, nsizes, max_len, &cursor);
		sw_burst_check(r, k, &b);
	} while (b.n > 0);
}
