/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a stream posts and how it checks, per operation (run by the stream
 * thread). Message m uses slot m % depth of the buffers; a slot is used again
 * only once message m completed, so every check reads bytes nobody writes.
 *
 * - write: the payload of message m; on its completion (RC: the responder
 *   acknowledged it) the target slot must hold it. UC completes a WRITE when it
 *   leaves: unchecked.
 * - read: the responder's slots hold fixed payloads; each READ clears its
 *   local slot first and must bring the slot's payload back.
 * - send: the responder keeps depth receives posted; every message received
 *   must be the one expected (RC: in order; UC, UD: the number it carries, gaps
 *   are lost messages); the sender never has more messages in flight than
 *   receives are posted.
 * - atomic: FETCH_ADD 1 and CMP_SWAP (m, m + 1) in turn on one word from 0:
 *   message m must return m.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "droce_pmd.h"

#define POST_BATCH     32
#define LOSS_QUIET_NS  20000000ull /* UC, UD: in flight this long with nothing arriving: lost */
#define DRAIN_RETRY_NS 20000000ull
#define MEM_ALIGN      4096u

static int mem_alloc(struct pmd_mem *m, struct ibv_pd *pd, size_t len, int access)
{
	len = (len + MEM_ALIGN - 1) / MEM_ALIGN * MEM_ALIGN;
	m->buf = aligned_alloc(MEM_ALIGN, len);
	if (m->buf == NULL)
		return pmd_err("out of memory (%zu bytes)", len);
	memset(m->buf, 0, len);
	m->len = len;
	m->mr = ibv_reg_mr(pd, m->buf, len, access);
	if (m->mr == NULL)
		return pmd_err("ibv_reg_mr: %s", strerror(errno));
	return 0;
}

static void mem_free(struct pmd_mem *m)
{
	if (m->mr != NULL)
		ibv_dereg_mr(m->mr);
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

int pmd_stream_mem_init(struct pmd_stream *s)
{
	uint32_t grh = s->type == IBV_QPT_UD ? PMD_UD_GRH : 0;
	size_t remote;

	if (s->op == PMD_OP_ATOMIC) {
		s->slot = 8;
		remote = 64;
	} else {
		s->slot = (s->size + grh + 63) & ~63u;
		remote = (size_t)s->slot * s->depth;
	}
	if (mem_alloc(&s->local, s->req->port->pd, (size_t)s->slot * s->depth,
		      IBV_ACCESS_LOCAL_WRITE) != 0 ||
	    mem_alloc(&s->remote, s->resp->port->pd, remote,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC) != 0) {
		mem_free(&s->local);
		mem_free(&s->remote);
		return -1;
	}
	if (s->op == PMD_OP_READ)
		for (uint32_t i = 0; i < s->depth; i++)
			pmd_pattern_fill(s->remote.buf + (size_t)i * s->slot, s->size, s->id, i,
					 false);
	s->mem = true;
	return 0;
}

void pmd_stream_mem_free(struct pmd_stream *s)
{
	if (!s->mem)
		return;
	mem_free(&s->local);
	mem_free(&s->remote);
	s->mem = false;
}

static uint8_t *local_slot(const struct pmd_stream *s, uint64_t m)
{
	return s->local.buf + (size_t)(m % s->depth) * s->slot;
}

static uint8_t *remote_slot(const struct pmd_stream *s, uint64_t m)
{
	return s->remote.buf + (size_t)(m % s->depth) * s->slot;
}

static void check_error(struct pmd_stream *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void check_error(struct pmd_stream *s, const char *fmt, ...)
{
	va_list ap;

	s->check_errors++;
	if (s->error[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------ posting */

static int post_recv(struct pmd_stream *s, uint32_t slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)s->remote.buf + (size_t)slot * s->slot,
			      .length = s->slot,
			      .lkey = s->remote.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = PMD_WR_ID(s->id, PMD_WR_RECV | slot),
				 .sg_list = &sge,
				 .num_sge = 1},
			   *bad;
	int rc = ibv_post_recv(s->resp->qp, &wr, &bad);

	if (rc != 0) {
		pmd_stream_fail(s, "qp %u: ibv_post_recv: %s", s->resp_id, strerror(rc));
		return -1;
	}
	s->rx_posted++;
	return 0;
}

static void build(struct pmd_stream *s, uint64_t m, struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	uint8_t *lp = local_slot(s, m);

	*sge = (struct ibv_sge){
		.addr = (uintptr_t)lp, .length = s->size, .lkey = s->local.mr->lkey};
	*wr = (struct ibv_send_wr){
		.wr_id = PMD_WR_ID(s->id, m & PMD_WR_N_MASK),
		.sg_list = sge,
		.num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	};
	switch (s->op) {
	case PMD_OP_WRITE:
		if (s->checked)
			pmd_pattern_fill(lp, s->size, s->id, m, false);
		wr->opcode = IBV_WR_RDMA_WRITE;
		wr->wr.rdma.remote_addr = (uintptr_t)remote_slot(s, m);
		wr->wr.rdma.rkey = s->remote.mr->rkey;
		break;
	case PMD_OP_READ:
		memset(lp, 0, s->size);
		wr->opcode = IBV_WR_RDMA_READ;
		wr->wr.rdma.remote_addr = (uintptr_t)remote_slot(s, m);
		wr->wr.rdma.rkey = s->remote.mr->rkey;
		break;
	case PMD_OP_SEND:
		if (s->checked || s->numbered)
			pmd_pattern_fill(lp, s->size, s->id, m, s->numbered);
		wr->opcode = IBV_WR_SEND;
		if (s->type == IBV_QPT_UD)
			wr->wr.ud = (typeof(wr->wr.ud)){.ah = s->req->ah,
							.remote_qpn = s->req->peer_qpn,
							.remote_qkey = PMD_QKEY};
		break;
	case PMD_OP_ATOMIC:
		memset(lp, 0xff, 8); /* no atomic returns this in a stream's lifetime */
		wr->wr.atomic.remote_addr = (uintptr_t)s->remote.buf;
		wr->wr.atomic.rkey = s->remote.mr->rkey;
		if (m & 1) {
			wr->opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			wr->wr.atomic.compare_add = m;
			wr->wr.atomic.swap = m + 1;
		} else {
			wr->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr->wr.atomic.compare_add = 1;
		}
		break;
	}
}

/* How many messages the stream may post now. */
static uint64_t allowed(const struct pmd_stream *s, uint64_t now)
{
	uint64_t out = s->posted - s->send_cqes, n = out < s->depth ? s->depth - out : 0;

	if (s->op == PMD_OP_SEND) {
		/* every message in flight has a receive waiting for it */
		uint64_t done = s->received + s->lost;
		uint64_t flight = s->posted > done ? s->posted - done : 0;

		n = flight >= s->depth ? 0 : n < s->depth - flight ? n : s->depth - flight;
	}
	if (s->count != 0 && n > s->count - s->posted)
		n = s->count - s->posted;
	if (s->rate > 0.0) {
		uint64_t budget = (uint64_t)(s->rate * (double)(now - s->t_start_ns) / 1e9) + 1;

		n = budget > s->posted ? (n < budget - s->posted ? n : budget - s->posted) : 0;
	}
	return n < POST_BATCH ? n : POST_BATCH;
}

int pmd_stream_post(struct pmd_stream *s, uint64_t now)
{
	struct ibv_send_wr wr[POST_BATCH], *bad = NULL;
	struct ibv_sge sge[POST_BATCH];
	uint64_t n;
	int rc;

	if (s->op == PMD_OP_SEND && s->rx_posted == 0)
		for (uint32_t i = 0; i < s->depth; i++)
			if (post_recv(s, i) != 0)
				return -1;
	n = allowed(s, now);
	if (n == 0)
		return 0;
	for (uint64_t i = 0; i < n; i++) {
		build(s, s->posted + i, &wr[i], &sge[i]);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	rc = ibv_post_send(s->req->qp, wr, &bad);
	if (rc != 0) {
		/* the ones before the bad one are posted: their completions come */
		for (uint64_t i = 0; i < n && &wr[i] != bad; i++)
			s->posted++;
		pmd_stream_fail(s, "qp %u: ibv_post_send: %s", s->req_id, strerror(rc));
		return -1;
	}
	s->posted += n;
	return 0;
}

bool pmd_stream_drain_recvs(struct pmd_stream *s, uint64_t now)
{
	uint64_t leftover = s->recvs_gone ? 0 : s->rx_posted - s->rx_cqes;
	uint64_t pending = s->drains_posted - s->drain_rx, k;
	struct ibv_send_wr wr[POST_BATCH], *bad;

	if (leftover == 0)
		return true;
	if (s->sends_gone || s->drain_failed || s->drains_posted > s->drains_done)
		return false;
	if (s->type == IBV_QPT_RC) {
		/* exactly: a SEND with no receive waiting would meet RNR NAKs for ever */
		if (leftover <= pending)
			return false;
		k = leftover - pending;
	} else {
		/* drains that did not arrive were lost; one too many is dropped, harmlessly */
		if (pending > 0 && now - s->last_drain_ns < DRAIN_RETRY_NS)
			return false;
		k = leftover;
	}
	k = k < POST_BATCH ? k : POST_BATCH;
	for (uint64_t i = 0; i < k; i++) {
		wr[i] = (struct ibv_send_wr){
			.wr_id = PMD_WR_ID(s->id, PMD_WR_DRAIN),
			.next = i + 1 < k ? &wr[i + 1] : NULL,
			.opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		};
		if (s->type == IBV_QPT_UD)
			wr[i].wr.ud = (typeof(wr[i].wr.ud)){.ah = s->req->ah,
							    .remote_qpn = s->req->peer_qpn,
							    .remote_qkey = PMD_QKEY};
	}
	if (ibv_post_send(s->req->qp, wr, &bad) != 0) {
		for (uint64_t i = 0; i < k && &wr[i] != bad; i++)
			s->drains_posted++;
		s->drain_failed = true;
		return false;
	}
	s->drains_posted += k;
	s->last_drain_ns = now;
	return false;
}

/* The numbers from expect to @p to (excluded) did not arrive (yet): counted lost. */
static void expect_advance(struct pmd_stream *s, uint64_t to)
{
	s->lost += to - s->expect;
	if (to - s->expect >= PMD_SEEN_BITS)
		memset(s->seen, 0, sizeof(s->seen));
	else
		for (uint64_t k = s->expect; k < to; k++)
			s->seen[k / 64 % (PMD_SEEN_BITS / 64)] &= ~(1ull << (k % 64));
	s->expect = to;
}

void pmd_stream_lost_check(struct pmd_stream *s, uint64_t now)
{
	if (s->posted <= s->received + s->lost || s->posted + s->drains_posted > s->send_cqes)
		return;
	if (now - s->last_rx_ns < LOSS_QUIET_NS || now - s->last_tx_ns < LOSS_QUIET_NS)
		return;
	if (s->numbered)
		expect_advance(s, s->posted);
	else
		s->lost = s->posted - s->received;
}

/* ------------------------------------------------------------ completions */

static void send_done(struct pmd_stream *s, const struct ibv_wc *wc, uint64_t now)
{
	uint32_t low = (uint32_t)wc->wr_id;
	uint64_t m = s->completed;
	int64_t off = -1;

	s->send_cqes++;
	s->last_tx_ns = now;
	if (low & PMD_WR_DRAIN) {
		s->drains_done++;
		if (wc->status != IBV_WC_SUCCESS)
			s->drain_failed = true;
		return;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		s->errors++;
		pmd_stream_fail(s, "qp %u: %s (message %llu, vendor error 0x%x)", s->req_id,
				ibv_wc_status_str(wc->status),
				(unsigned long long)(low & PMD_WR_N_MASK), wc->vendor_err);
		return;
	}
	s->completed++;
	s->bytes += s->size;
	if ((low & PMD_WR_N_MASK) != (m & PMD_WR_N_MASK)) {
		check_error(s, "qp %u: message %llu completed in the place of %llu", s->req_id,
			    (unsigned long long)(low & PMD_WR_N_MASK), (unsigned long long)m);
		return;
	}
	if (!s->checked)
		return;
	switch (s->op) {
	case PMD_OP_WRITE:
		off = pmd_pattern_check(remote_slot(s, m), s->size, s->id, m, false);
		break;
	case PMD_OP_READ:
		off = pmd_pattern_check(local_slot(s, m), s->size, s->id, m % s->depth, false);
		break;
	case PMD_OP_ATOMIC:
		if (pmd_pattern_number(local_slot(s, m)) != m)
			check_error(s, "atomic %llu returned %llu, not %llu", (unsigned long long)m,
				    (unsigned long long)pmd_pattern_number(local_slot(s, m)),
				    (unsigned long long)m);
		break;
	case PMD_OP_SEND:
		break;
	}
	if (off >= 0)
		check_error(s, "%s %llu: byte %lld differs", pmd_op_name(s->op),
			    (unsigned long long)m, (long long)off);
}

enum arrival {
	ARRIVAL_NEW,
	ARRIVAL_DUP, /* a copy of a message that arrived already (UD may deliver one twice) */
	ARRIVAL_BAD, /* a number never sent */
};

/* UC, UD: which message arrived, from the number it carries; gaps are losses until filled. */
static enum arrival recv_number(struct pmd_stream *s, const uint8_t *p, uint64_t *m)
{
	uint64_t bit;

	*m = pmd_pattern_number(p);
	if (*m >= s->posted) {
		check_error(s, "received message number %llu: only %llu were sent",
			    (unsigned long long)*m, (unsigned long long)s->posted);
		return ARRIVAL_BAD;
	}
	if (*m >= s->expect)
		expect_advance(s, *m + 1); /* m too, until the next lines find it */
	else if (s->expect - *m > PMD_SEEN_BITS)
		return ARRIVAL_DUP; /* too far back to tell: not counted twice */
	bit = 1ull << (*m % 64);
	if (s->seen[*m / 64 % (PMD_SEEN_BITS / 64)] & bit)
		return ARRIVAL_DUP;
	s->seen[*m / 64 % (PMD_SEEN_BITS / 64)] |= bit;
	s->lost--; /* every number below expect not seen yet was counted lost */
	return ARRIVAL_NEW;
}

static void recv_done(struct pmd_stream *s, const struct ibv_wc *wc, uint64_t now)
{
	uint32_t slot = (uint32_t)wc->wr_id & PMD_WR_N_MASK;
	uint32_t grh = s->type == IBV_QPT_UD ? PMD_UD_GRH : 0;
	const uint8_t *p = s->remote.buf + (size_t)slot * s->slot + grh;
	uint64_t m;
	int64_t off;

	s->rx_cqes++;
	if (wc->status != IBV_WC_SUCCESS) {
		s->errors++;
		pmd_stream_fail(s, "qp %u: receive: %s (vendor error 0x%x)", s->resp_id,
				ibv_wc_status_str(wc->status), wc->vendor_err);
		return;
	}
	if (wc->byte_len == grh) {
		s->drain_rx++;
		return;
	}
	s->last_rx_ns = now;
	if (wc->byte_len != s->size + grh) {
		s->received++;
		check_error(s, "a message of %u bytes arrived, not %u", wc->byte_len - grh,
			    s->size);
	} else if (s->type != IBV_QPT_RC && s->numbered) {
		switch (recv_number(s, p, &m)) {
		case ARRIVAL_NEW:
			s->received++;
			break;
		case ARRIVAL_DUP:
			s->dups++;
			goto repost;
		case ARRIVAL_BAD:
			goto repost;
		}
		off = pmd_pattern_check(p, s->size, s->id, m, s->numbered);
		if (off >= 0)
			check_error(s, "send %llu: byte %lld differs", (unsigned long long)m,
				    (long long)off);
	} else {
		/* RC: in order; UC, UD under 8 bytes: counted, not checked */
		m = s->received++;
		if (!s->checked)
			goto repost;
		if (s->numbered && pmd_pattern_number(p) != m) {
			check_error(s, "message %llu arrived in the place of %llu",
				    (unsigned long long)pmd_pattern_number(p),
				    (unsigned long long)m);
			goto repost;
		}
		off = pmd_pattern_check(p, s->size, s->id, m, s->numbered);
		if (off >= 0)
			check_error(s, "send %llu: byte %lld differs", (unsigned long long)m,
				    (long long)off);
	}
repost:
	if (s->state == PMD_STREAM_RUNNING)
		post_recv(s, slot);
}

void pmd_stream_complete(struct pmd_stream *s, const struct ibv_wc *wc, uint64_t now)
{
	if ((uint32_t)wc->wr_id & PMD_WR_RECV)
		recv_done(s, wc, now);
	else
		send_done(s, wc, now);
}

/* ------------------------------------------------------------ reports */

void pmd_stream_format(const struct pmd_stream *s, char *buf, size_t len)
{
	uint64_t end = s->t_end_ns != 0 ? s->t_end_ns : pmd_now_ns();
	double secs = (double)(end - s->t_start_ns) / 1e9;
	int n;

	n = snprintf(buf, len,
		     "stream %u: qp %u -> qp %u %s %s size %u depth %u: %s, %llu messages, %llu "
		     "bytes, %llu errors",
		     s->id, s->req_id, s->resp_id, pmd_qp_type_name(s->type), pmd_op_name(s->op),
		     s->size, s->depth,
		     pmd_stream_state_name(__atomic_load_n(&s->state, __ATOMIC_ACQUIRE)),
		     (unsigned long long)s->completed, (unsigned long long)s->bytes,
		     (unsigned long long)s->errors);
	if (n > 0 && (size_t)n < len && s->op == PMD_OP_SEND)
		n += snprintf(buf + n, len - (size_t)n, ", %llu received, %llu lost",
			      (unsigned long long)s->received, (unsigned long long)s->lost);
	if (n > 0 && (size_t)n < len && s->dups > 0)
		n += snprintf(buf + n, len - (size_t)n, ", %llu duplicates",
			      (unsigned long long)s->dups);
	if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", %s",
			      s->checked ? "data checked" : "data not checked");
	if (n > 0 && (size_t)n < len && s->checked)
		n += snprintf(buf + n, len - (size_t)n, " (%llu check errors)",
			      (unsigned long long)s->check_errors);
	if (n > 0 && (size_t)n < len && secs > 0)
		n += snprintf(buf + n, len - (size_t)n, ", %.0f msg/s, %.2f MB/s",
			      (double)s->completed / secs, (double)s->bytes / secs / 1048576.0);
	if (n > 0 && (size_t)n < len && s->error[0] != '\0')
		snprintf(buf + n, len - (size_t)n, "; first error: %s", s->error);
}
