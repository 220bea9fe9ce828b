/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bandwidth: end 0 keeps every QP's send queue full of WRITEs, SENDs, READs or
 * atomics of one size, a completion every cq_mod messages, -l of them a post;
 * for SENDs end 1 keeps receives posted. With both ends here (--loopback) one
 * thread drives both, and the sender never has more messages in flight than
 * the receiver has receives (so UC and UD lose nothing to a missing receive);
 * in a two-host run this process is end 0 (the client) or, for SENDs, end 1
 * (the server), and RC's RNR retries pace the sender as they pace perftest's.
 * The average is over the whole run; the peak is the best rate over any span
 * of at least tx-depth x QPs messages and 1 ms (shorter spans measure how fast
 * CQEs already waiting are polled, not traffic).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "droce_perf.h"

#define POST_BATCH 32
#define POST_MAX   PERF_MAX_POST_LIST
#define POLL_BATCH 32
#define QP_SHIFT   56
#define MSG_MASK   ((1ull << QP_SHIFT) - 1)
#define LOSS_WAIT  1000000000ull /* UC/UD: wait this long for stragglers */

#define PEAK_MIN_NS  1000000ull
#define PEAK_SAMPLES 65536 /* when full the oldest goes: spans only get longer */

/* The best rate over any span of at least @p window messages and PEAK_MIN_NS. */
struct peak {
	uint64_t *t, *cnt;
	unsigned int cap, head, n;
	uint64_t window;
	double best;
};

struct bw {
	struct perf_ctx *c;
	const struct perf_opts *o;
	bool sender, receiver; /* which ends this process drives */
	uint32_t size, stride;
	unsigned int slots, remote_slots, limit, cq_mod;
	unsigned int batch, min_post; /* WRs a post at most, at least (-l: both the list) */
	uint64_t target;              /* messages per QP; UINT64_MAX until -D's time is up */
	uint64_t *posted, *completed, *rx_posted, *received;
	uint64_t *expect; /* --check of UC/UD SENDs: the next message number */
	uint64_t t_start, t_last, done, last_progress;
	struct peak peak;
};

static void peak_add(struct peak *p, uint64_t t, uint64_t cnt)
{
	unsigned int tail = (p->head + p->n) % p->cap;

	if (p->n == p->cap) {
		p->head = (p->head + 1) % p->cap;
		p->n--;
	}
	p->t[tail] = t;
	p->cnt[tail] = cnt;
	p->n++;
	while (p->n >= 2 && cnt - p->cnt[(p->head + 1) % p->cap] >= p->window &&
	       t - p->t[(p->head + 1) % p->cap] >= PEAK_MIN_NS) {
		p->head = (p->head + 1) % p->cap;
		p->n--;
	}
	if (cnt - p->cnt[p->head] >= p->window && t - p->t[p->head] >= PEAK_MIN_NS) {
		double r = (double)(cnt - p->cnt[p->head]) * 1e9 / (double)(t - p->t[p->head]);

		if (r > p->best)
			p->best = r;
	}
}

static int fail_wc(const struct ibv_wc *wc, const char *side)
{
	fprintf(stderr, "droce-perf: %s completion with error: %s (vendor err 0x%x, QP %u)\n", side,
		ibv_wc_status_str(wc->status), wc->vendor_err,
		(unsigned int)(wc->wr_id >> QP_SHIFT));
	return -1;
}

static uint8_t *slot(struct bw *b, int end, unsigned int q, uint64_t m)
{
	return b->c->end[end].buf + q * b->c->buf_len + (m % b->slots) * b->stride;
}

/* The remote side of WR @p wr (message @p m of QP @p q): READ, WRITE or atomic target. */
static void set_remote(struct bw *b, struct ibv_send_wr *wr, unsigned int q, uint64_t m)
{
	const struct perf_dest *peer = &b->c->peer[q];
	uint64_t addr = peer->vaddr + (m % b->remote_slots) * b->stride;

	switch (b->o->verb) {
	case PERF_WRITE:
		wr->opcode = IBV_WR_RDMA_WRITE;
		break;
	case PERF_READ:
		wr->opcode = IBV_WR_RDMA_READ;
		break;
	case PERF_ATOMIC:
		/* perftest's operands: add 1, or compare with 0 and swap in 0 */
		wr->opcode =
			b->o->atomic_cas ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.remote_addr = addr;
		wr->wr.atomic.rkey = peer->rkey;
		wr->wr.atomic.compare_add = b->o->atomic_cas ? 0 : PERF_ATOMIC_ADD;
		wr->wr.atomic.swap = PERF_ATOMIC_SWAP;
		return;
	case PERF_SEND:
		return;
	}
	wr->wr.rdma.remote_addr = addr;
	wr->wr.rdma.rkey = peer->rkey;
}

static int post_sends(struct bw *b, unsigned int q, unsigned int count)
{
	struct perf_ctx *c = b->c;
	struct perf_end *e = &c->end[0];
	struct ibv_send_wr wr[POST_MAX], *bad;
	struct ibv_sge sge[POST_MAX];
	unsigned int i;
	int rc;

	for (i = 0; i < count; i++) {
		uint64_t m = b->posted[q] + i;
		uint8_t *buf = slot(b, 0, q, m);

		if (b->o->check && (b->o->verb == PERF_READ || b->o->verb == PERF_ATOMIC))
			memset(buf, 0, b->size);
		else if (b->o->check)
			perf_pattern_fill(buf, b->size, q, m);
		sge[i] = (struct ibv_sge){
			.addr = (uintptr_t)buf, .length = b->size, .lkey = e->mr->lkey};
		wr[i] = (struct ibv_send_wr){
			.wr_id = (uint64_t)q << QP_SHIFT | m,
			.next = i + 1 < count ? &wr[i + 1] : NULL,
			.sg_list = &sge[i],
			.num_sge = 1,
		};
		if ((m + 1) % b->cq_mod == 0 || m + 1 == b->target)
			wr[i].send_flags |= IBV_SEND_SIGNALED;
		if ((b->o->verb == PERF_WRITE || b->o->verb == PERF_SEND) &&
		    b->size <= c->max_inline)
			wr[i].send_flags |= IBV_SEND_INLINE;
		wr[i].opcode = IBV_WR_SEND;
		set_remote(b, &wr[i], q, m);
		if (b->o->verb == PERF_SEND && b->o->qp_type == IBV_QPT_UD) {
			wr[i].wr.ud.ah = e->ah[q];
			wr[i].wr.ud.remote_qpn = e->remote_qpn[q];
			wr[i].wr.ud.remote_qkey = 0x11111111u;
		}
	}
	rc = ibv_post_send(e->qp[q], wr, &bad);
	if (rc != 0) {
		fprintf(stderr, "droce-perf: ibv_post_send: %s\n", strerror(rc));
		return -1;
	}
	b->posted[q] += count;
	return 0;
}

static int fill_queues(struct bw *b)
{
	for (unsigned int q = 0; q < b->o->num_qps; q++) {
		uint64_t room = b->limit - (b->posted[q] - b->completed[q]);
		uint64_t left = b->target - b->posted[q];

		if (b->o->verb == PERF_SEND && b->receiver && b->rx_posted[q] - b->posted[q] < room)
			room = b->rx_posted[q] - b->posted[q];
		if (left < room)
			room = left;
		/* -l: whole lists only, but for the end of a -D run */
		while (room >= b->min_post || (room > 0 && room == left)) {
			unsigned int n = room > b->batch ? b->batch : (unsigned int)room;

			if (post_sends(b, q, n) != 0)
				return -1;
			room -= n;
			left -= n;
		}
	}
	return 0;
}

/*
 * --check of WRITE and READ: the bytes a completed message put in place. UC
 * completes a WRITE once sent: its last bytes are awaited, and a message whose
 * end never lands was lost (UC drops the rest of a message after a gap).
 */
static int check_done(struct bw *b, unsigned int q, uint64_t from, uint64_t to)
{
	for (uint64_t m = from; b->o->verb == PERF_ATOMIC && m < to; m++) {
		uint64_t got, want = b->o->atomic_cas ? PERF_ATOMIC_SWAP : m * PERF_ATOMIC_ADD;

		/* a QP's atomics run in order on one word: the n-th fetches n adds */
		memcpy(&got, slot(b, 0, q, m), sizeof(got));
		if (got != want) {
			fprintf(stderr,
				"droce-perf: check failed: QP %u message %" PRIu64
				" fetched %" PRIu64 ", expected %" PRIu64 "\n",
				q, m, got, want);
			return -1;
		}
		b->c->checked++;
	}
	for (uint64_t m = from; b->o->verb != PERF_ATOMIC && m < to; m++) {
		int end = b->o->verb == PERF_WRITE ? 1 : 0;
		uint8_t *p = slot(b, end, q, m);
		uint64_t msg = b->o->verb == PERF_WRITE ? m : m % b->slots;
		uint64_t t0 = perf_now_ns();

		while (!perf_pattern_tail_arrived(p, b->size, q, msg)) {
			if (b->o->qp_type != IBV_QPT_UC || perf_now_ns() - t0 > PERF_PLACE_WAIT_NS)
				break;
		}
		if (b->o->qp_type == IBV_QPT_UC && !perf_pattern_tail_arrived(p, b->size, q, msg)) {
			b->c->lost++;
			continue;
		}
		if (perf_pattern_await(p, b->size, q, msg, PERF_PLACE_WAIT_NS) != 0)
			return -1;
		b->c->checked++;
	}
	return 0;
}

static void progress(struct bw *b, uint64_t now, uint64_t done)
{
	b->done += done;
	b->t_last = now;
	b->last_progress = now;
	if (!b->o->no_peak)
		peak_add(&b->peak, now, b->done);
}

static int poll_sender(struct bw *b)
{
	struct ibv_wc wc[POLL_BATCH];
	int n = ibv_poll_cq(b->c->end[0].cq, POLL_BATCH, wc);
	uint64_t done = 0;

	if (n < 0) {
		fprintf(stderr, "droce-perf: ibv_poll_cq failed\n");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		unsigned int q = (unsigned int)(wc[i].wr_id >> QP_SHIFT);
		uint64_t m = wc[i].wr_id & MSG_MASK;

		if (wc[i].status != IBV_WC_SUCCESS)
			return fail_wc(&wc[i], "send");
		if (b->o->check && b->o->verb != PERF_SEND &&
		    check_done(b, q, b->completed[q], m + 1) != 0)
			return -1;
		done += m + 1 - b->completed[q];
		b->completed[q] = m + 1;
	}
	if (n > 0 && (b->o->verb != PERF_SEND || !b->receiver))
		progress(b, perf_now_ns(), done);
	else if (n > 0)
		b->last_progress = perf_now_ns();
	return 0;
}

static int post_recv(struct bw *b, unsigned int q)
{
	uint64_t r = b->rx_posted[q];

	if (perf_post_recv(b->c, &b->c->end[1], q, (r % b->slots) * b->stride, b->stride,
			   (uint64_t)q << QP_SHIFT | r) != 0)
		return -1;
	b->rx_posted[q]++;
	return 0;
}

/*
 * --check of a received message: the next one in order; on UC and UD a later
 * one of the messages in flight means the ones between were lost.
 */
static int check_recv(struct bw *b, unsigned int q, const uint8_t *p)
{
	uint64_t m = b->expect[q];

	if (perf_pattern_find_error(p, b->size, q, m) >= 0 && b->o->qp_type != IBV_QPT_RC) {
		for (uint64_t k = m + 1; k <= m + 2ull * b->limit; k++) {
			if (perf_pattern_find_error(p, b->size, q, k) < 0) {
				b->c->lost += k - m;
				m = k;
				break;
			}
		}
	}
	if (perf_pattern_report(q, m, p, b->size) != 0)
		return -1;
	b->expect[q] = m + 1;
	b->c->checked++;
	return 0;
}

static int poll_receiver(struct bw *b)
{
	struct ibv_wc wc[POLL_BATCH];
	int n = ibv_poll_cq(b->c->end[1].cq, POLL_BATCH, wc);
	uint32_t grh = b->o->qp_type == IBV_QPT_UD ? PERF_UD_GRH : 0;

	if (n < 0) {
		fprintf(stderr, "droce-perf: ibv_poll_cq failed\n");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		unsigned int q = (unsigned int)(wc[i].wr_id >> QP_SHIFT);
		uint64_t r = wc[i].wr_id & MSG_MASK;

		if (wc[i].status != IBV_WC_SUCCESS)
			return fail_wc(&wc[i], "receive");
		if (wc[i].byte_len != b->size + grh) {
			fprintf(stderr, "droce-perf: received %u bytes, expected %u\n",
				wc[i].byte_len - grh, b->size);
			return -1;
		}
		if (b->o->check && check_recv(b, q, slot(b, 1, q, r) + grh) != 0)
			return -1;
		b->received[q]++;
		if (b->rx_posted[q] < b->target && post_recv(b, q) != 0)
			return -1;
	}
	if (n > 0)
		progress(b, perf_now_ns(), (uint64_t)n);
	return 0;
}

static bool all_done(const struct bw *b, const uint64_t *count)
{
	for (unsigned int q = 0; q < b->o->num_qps; q++)
		if (count[q] < b->target)
			return false;
	return true;
}

/* -D: once the time is up, each QP ends at its next signaled message. */
static void end_duration(struct bw *b)
{
	uint64_t t = 0;

	for (unsigned int q = 0; q < b->o->num_qps; q++) {
		uint64_t end = (b->posted[q] + b->cq_mod - 1) / b->cq_mod * b->cq_mod;

		if (end == 0)
			end = b->cq_mod;
		if (end > t)
			t = end;
	}
	/* one target for all QPs keeps the signaling rule simple */
	b->target = (t + b->cq_mod - 1) / b->cq_mod * b->cq_mod;
}

static int run(struct bw *b)
{
	uint64_t deadline = b->o->duration ? b->t_start + b->o->duration * 1000000000ull : 0;
	const uint64_t *count = b->o->verb == PERF_SEND ? b->received : b->completed;

	if (!b->receiver)
		count = b->completed;
	for (;;) {
		uint64_t now;

		if (b->sender && (fill_queues(b) != 0 || poll_sender(b) != 0))
			return -1;
		if (b->receiver && poll_receiver(b) != 0)
			return -1;
		if (all_done(b, count) && (!b->sender || all_done(b, b->completed)))
			return 0;
		now = perf_now_ns();
		if (deadline != 0 && now >= deadline && b->target == UINT64_MAX)
			end_duration(b);
		/* UC/UD: what did not arrive by now was lost (a receiver alone: once some came) */
		if (b->receiver && b->o->qp_type != IBV_QPT_RC &&
		    (b->sender ? all_done(b, b->completed) : b->done > 0) &&
		    now - b->last_progress > LOSS_WAIT)
			return 0;
		if (now - b->last_progress > PERF_STALL_NS) {
			fprintf(stderr, "droce-perf: no completion for %llu s\n",
				PERF_STALL_NS / 1000000000ull);
			return -1;
		}
	}
}

static int setup(struct bw *b)
{
	unsigned int n = b->o->num_qps;
	struct perf_ctx *c = b->c;

	b->sender = c->role != PERF_ROLE_SERVER;
	b->receiver = b->o->verb == PERF_SEND && c->role != PERF_ROLE_CLIENT;
	b->stride = b->size + (b->o->qp_type == IBV_QPT_UD ? PERF_UD_GRH : 0);
	b->slots = (unsigned int)(c->buf_len / b->stride);
	/* the peer's buffer is known to hold one message; an atomic's target is one word */
	b->remote_slots = c->role == PERF_ROLE_LOOPBACK && b->o->verb != PERF_ATOMIC ? b->slots : 1;
	b->batch = b->o->post_list > 1 ? b->o->post_list : POST_BATCH;
	b->min_post = b->o->post_list;
	if (b->slots > 1 && b->slots % 255 == 0)
		b->slots--; /* a slot's next message gets another tag byte (pattern.c) */
	b->limit = c->tx_depth;
	if (b->o->check && b->limit > b->slots)
		b->limit = b->slots; /* a slot is rewritten only once checked */
	b->cq_mod = b->o->cq_mod < b->limit ? b->o->cq_mod : b->limit;
	b->target = b->o->duration ? UINT64_MAX : b->o->iters;
	b->posted = calloc(n, sizeof(uint64_t));
	b->completed = calloc(n, sizeof(uint64_t));
	b->rx_posted = calloc(n, sizeof(uint64_t));
	b->received = calloc(n, sizeof(uint64_t));
	b->expect = calloc(n, sizeof(uint64_t));
	b->peak.window = (uint64_t)c->tx_depth * n;
	b->peak.cap = PEAK_SAMPLES;
	b->peak.t = calloc(b->peak.cap, sizeof(uint64_t));
	b->peak.cnt = calloc(b->peak.cap, sizeof(uint64_t));
	if (b->posted == NULL || b->completed == NULL || b->rx_posted == NULL ||
	    b->received == NULL || b->expect == NULL || b->peak.t == NULL || b->peak.cnt == NULL) {
		fprintf(stderr, "droce-perf: out of memory\n");
		return -1;
	}
	for (unsigned int q = 0; q < n; q++) {
		unsigned int rx = c->rx_depth < b->slots ? c->rx_depth : b->slots;

		/* atomic --check: each size starts from a target word of 0 */
		if (b->o->check && b->o->verb == PERF_ATOMIC)
			memset(slot(b, 1, q, 0), 0, PERF_ATOMIC_SIZE);

		/* READ --check: remote slot k holds message k's pattern */
		for (unsigned int k = 0; b->o->check && b->o->verb == PERF_READ && k < b->slots;
		     k++)
			perf_pattern_fill(slot(b, 1, q, k), b->size, q, k);
		while (b->receiver && b->rx_posted[q] < rx && b->rx_posted[q] < b->target)
			if (post_recv(b, q) != 0)
				return -1;
	}
	return 0;
}

static void teardown(struct bw *b)
{
	free(b->posted);
	free(b->completed);
	free(b->rx_posted);
	free(b->received);
	free(b->expect);
	free(b->peak.t);
	free(b->peak.cnt);
}

int perf_bw_run(struct perf_ctx *c, uint32_t size, perf_ready_fn ready, void *arg,
		struct perf_bw_result *r)
{
	struct bw b = {.c = c, .o = c->o, .size = size};
	int rc = setup(&b);
	double secs;

	if (rc == 0 && ready != NULL)
		rc = ready(arg);
	if (rc == 0) {
		b.t_start = b.t_last = b.last_progress = perf_now_ns();
		if (!b.o->no_peak)
			peak_add(&b.peak, b.t_start, 0);
		rc = run(&b);
	}
	if (rc == 0) {
		secs = (double)(b.t_last - b.t_start) / 1e9;
		r->bytes = size;
		r->iters = b.done; /* over every QP, as perftest counts */
		r->msg_rate = secs > 0 ? (double)b.done / secs : 0;
		r->bw_avg = r->msg_rate * size;
		r->bw_peak = c->o->no_peak ? 0 : b.peak.best * size;
		if (!c->o->no_peak && r->bw_peak < r->bw_avg)
			r->bw_peak = r->bw_avg; /* a run shorter than the peak's span */
	}
	teardown(&b);
	return rc;
}
