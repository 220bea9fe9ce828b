/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bandwidth: a sending end keeps every QP's send queue full of WRITEs, SENDs,
 * READs or atomics of one size, a completion every cq_mod messages, -l of them
 * a post; for SENDs the receiving end keeps receives posted (on each QP, or on
 * its SRQ with --use-srq). A direction is one end's sends to the other: end 0
 * to end 1, and with -b end 1 to end 0 at the same time, each with its own
 * counts and figures. With both ends here (--loopback) one thread drives both,
 * and a sender never has more messages in flight than the receiver has
 * receives (so UC and UD lose nothing to a missing receive); in a two-host run
 * this process is end 0 (the client) or end 1 (the server), sending, receiving
 * SENDs, or both with -b, and RC's RNR retries pace the sender as they pace
 * perftest's. With -e the thread sleeps on the completion channels whenever a
 * poll of every CQ it drives found nothing.
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
#define QP_SHIFT   48 /* wr_id: RECV_BIT, the QP in bits 48..55, the message below */
#define QP_MASK    0xffull
#define MSG_MASK   ((1ull << QP_SHIFT) - 1)
#define RECV_BIT   (1ull << 63)
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

/* One direction: end @p from's messages to end @p to, and what this process does of them. */
struct dir {
	int from, to;
	bool send, recv;              /* this process posts the sends / the receives (SENDs) */
	bool srq;                     /* the receives go to end @p to's SRQ */
	const struct perf_dest *peer; /* end @p to's QPs */
	uint64_t *posted, *completed, *rx_posted, *received;
	uint64_t *expect;            /* --check of UC/UD SENDs: the next message number */
	uint64_t rx_total, tx_total; /* --use-srq: receives and sends over every QP */
	uint64_t done, t_last, last_progress;
	bool finished;
	struct peak peak;
};

struct bw {
	struct perf_ctx *c;
	const struct perf_opts *o;
	uint32_t size, stride;
	unsigned int slots, remote_slots, limit, cq_mod, rx_per_qp;
	unsigned int batch, min_post; /* WRs a post at most, at least (-l: both the list) */
	uint64_t target;              /* messages per QP; UINT64_MAX until -D's time is up */
	uint64_t t_start;
	unsigned int ends; /* bit i: this process polls end i's CQ */
	struct dir dir[2]; /* dir[0]: this process's own sends (end 0's in --loopback) */
	unsigned int n_dirs;
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

static int fail_wc(const struct ibv_wc *wc)
{
	fprintf(stderr, "droce-perf: %s completion with error: %s (vendor err 0x%x, QP %u)\n",
		wc->wr_id & RECV_BIT ? "receive" : "send", ibv_wc_status_str(wc->status),
		wc->vendor_err, (unsigned int)((wc->wr_id >> QP_SHIFT) & QP_MASK));
	return -1;
}

/* Message @p m's slot in the sender's QP @p q: it sends from there, READs and atomics land there.
 */
static uint8_t *local_slot(struct bw *b, const struct dir *d, unsigned int q, uint64_t m)
{
	return b->c->end[d->from].buf + q * b->c->buf_len + (m % b->slots) * b->stride;
}

/* Its slot at the receiver: where a WRITE or SEND lands, a READ or atomic reads (vaddr_off on). */
static uint8_t *target_slot(struct bw *b, const struct dir *d, unsigned int q, uint64_t m)
{
	return b->c->end[d->to].buf + q * b->c->buf_len + b->c->vaddr_off +
	       (m % b->slots) * b->stride;
}

static int post_sends(struct bw *b, struct dir *d, unsigned int q, unsigned int count)
{
	struct perf_ctx *c = b->c;
	struct perf_end *e = &c->end[d->from];
	struct ibv_send_wr wr[POST_MAX], *bad;
	struct ibv_sge sge[POST_MAX];
	unsigned int i;
	int rc;

	for (i = 0; i < count; i++) {
		uint64_t m = d->posted[q] + i;
		uint8_t *buf = local_slot(b, d, q, m);

		if (b->o->check && perf_verb_one_sided(b->o->verb))
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
		if (perf_wr_inline(c, b->size))
			wr[i].send_flags |= IBV_SEND_INLINE;
		/* the READ, WRITE or atomic target of message m at the peer's QP q */
		perf_wr_set_verb(c, e, q, d->peer[q].vaddr + (m % b->remote_slots) * b->stride,
				 d->peer[q].rkey, &wr[i]);
	}
	rc = ibv_post_send(e->qp[q], wr, &bad);
	if (rc != 0) {
		fprintf(stderr, "droce-perf: ibv_post_send: %s\n", strerror(rc));
		return -1;
	}
	d->posted[q] += count;
	d->tx_total += count;
	return 0;
}

/* Receives this process posted and the sends have not used yet (an SRQ's: all QPs'). */
static uint64_t rx_room(const struct dir *d, unsigned int q)
{
	return d->srq ? d->rx_total - d->tx_total : d->rx_posted[q] - d->posted[q];
}

static int fill_queues(struct bw *b, struct dir *d)
{
	for (unsigned int q = 0; q < b->o->num_qps; q++) {
		uint64_t room = b->limit - (d->posted[q] - d->completed[q]);
		uint64_t left = b->target - d->posted[q];

		if (b->o->verb == PERF_SEND && d->recv && rx_room(d, q) < room)
			room = rx_room(d, q);
		if (left < room)
			room = left;
		/* -l: whole lists only, but for the end of a -D run */
		while (room >= b->min_post || (room > 0 && room == left)) {
			unsigned int n = room > b->batch ? b->batch : (unsigned int)room;

			if (post_sends(b, d, q, n) != 0)
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
static int check_done(struct bw *b, struct dir *d, unsigned int q, uint64_t from, uint64_t to)
{
	for (uint64_t m = from; b->o->verb == PERF_ATOMIC && m < to; m++) {
		uint64_t got, want = b->o->atomic_cas ? PERF_ATOMIC_SWAP : m * PERF_ATOMIC_ADD;

		/* a QP's atomics run in order on one word: the n-th fetches n adds */
		memcpy(&got, local_slot(b, d, q, m), sizeof(got));
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
		bool write = b->o->verb == PERF_WRITE;
		uint8_t *p = write ? target_slot(b, d, q, m) : local_slot(b, d, q, m);
		uint64_t msg = write ? m : m % b->slots;
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

static void progress(struct bw *b, struct dir *d, uint64_t now, uint64_t done)
{
	d->done += done;
	d->t_last = now;
	d->last_progress = now;
	if (!b->o->no_peak)
		peak_add(&d->peak, now, d->done);
}

/* A send completion: every message of the QP up to this signaled one is done. */
static int on_send(struct bw *b, struct dir *d, const struct ibv_wc *wc, uint64_t *done)
{
	unsigned int q = (unsigned int)((wc->wr_id >> QP_SHIFT) & QP_MASK);
	uint64_t m = wc->wr_id & MSG_MASK;

	if (b->o->check && b->o->verb != PERF_SEND &&
	    check_done(b, d, q, d->completed[q], m + 1) != 0)
		return -1;
	*done += m + 1 - d->completed[q];
	d->completed[q] = m + 1;
	return 0;
}

static int post_recv(struct bw *b, struct dir *d, unsigned int q)
{
	uint64_t r = d->rx_posted[q];

	if (perf_post_recv(b->c, &b->c->end[d->to], q, b->c->vaddr_off + (r % b->slots) * b->stride,
			   b->stride, RECV_BIT | (uint64_t)q << QP_SHIFT | r) != 0)
		return -1;
	d->rx_posted[q]++;
	d->rx_total++;
	return 0;
}

/*
 * --check of a received message: the next one in order; on UC and UD a later
 * one of the messages in flight means the ones between were lost.
 */
static int check_recv(struct bw *b, struct dir *d, unsigned int q, const uint8_t *p)
{
	uint64_t m = d->expect[q];

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
	d->expect[q] = m + 1;
	b->c->checked++;
	return 0;
}

/*
 * A receive: the buffer is the one posted for QP @p owner (wr_id); the message
 * came on that QP, or with an SRQ on the QP the completion names.
 */
static int on_recv(struct bw *b, struct dir *d, const struct ibv_wc *wc)
{
	unsigned int owner = (unsigned int)((wc->wr_id >> QP_SHIFT) & QP_MASK), q = owner;
	uint64_t r = wc->wr_id & MSG_MASK;
	uint32_t grh = b->o->qp_type == IBV_QPT_UD ? PERF_UD_GRH : 0;

	if (d->srq) {
		int i = perf_end_qp_index(b->c, &b->c->end[d->to], wc->qp_num);

		if (i < 0) {
			fprintf(stderr, "droce-perf: a receive on an unknown QP 0x%x\n",
				wc->qp_num);
			return -1;
		}
		q = (unsigned int)i;
	}
	if (wc->byte_len != b->size + grh) {
		fprintf(stderr, "droce-perf: received %u bytes, expected %u\n", wc->byte_len - grh,
			b->size);
		return -1;
	}
	if (b->o->check && check_recv(b, d, q, target_slot(b, d, owner, r) + grh) != 0)
		return -1;
	d->received[q]++;
	if (d->rx_posted[owner] < b->target && post_recv(b, d, owner) != 0)
		return -1;
	return 0;
}

/* A direction's messages count as they arrive when this process receives them (SENDs). */
static bool counts_receives(const struct bw *b, const struct dir *d)
{
	return b->o->verb == PERF_SEND && d->recv;
}

/* The direction whose sends (or receives) end @p end's CQ reports. */
static struct dir *dir_of(struct bw *b, int end, bool recv)
{
	for (unsigned int i = 0; i < b->n_dirs; i++) {
		struct dir *d = &b->dir[i];

		if (recv ? d->recv && d->to == end : d->send && d->from == end)
			return d;
	}
	return NULL;
}

/* Poll end @p end's CQ once: the number of completions, or -1. */
static int poll_end(struct bw *b, int end)
{
	struct ibv_wc wc[POLL_BATCH];
	uint64_t sent[2] = {0, 0}, recvd[2] = {0, 0};
	int n = ibv_poll_cq(b->c->end[end].cq, POLL_BATCH, wc);
	uint64_t now;

	if (n < 0) {
		fprintf(stderr, "droce-perf: ibv_poll_cq failed\n");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		bool recv = (wc[i].wr_id & RECV_BIT) != 0;
		struct dir *d = dir_of(b, end, recv);
		ptrdiff_t k;

		if (wc[i].status != IBV_WC_SUCCESS)
			return fail_wc(&wc[i]);
		if (d == NULL) {
			fprintf(stderr, "droce-perf: an unexpected completion\n");
			return -1;
		}
		k = d - b->dir;
		if (recv && on_recv(b, d, &wc[i]) != 0)
			return -1;
		if (!recv && on_send(b, d, &wc[i], &sent[k]) != 0)
			return -1;
		recvd[k] += recv;
	}
	now = n > 0 ? perf_now_ns() : 0;
	for (unsigned int i = 0; n > 0 && i < b->n_dirs; i++) {
		struct dir *d = &b->dir[i];

		/* SENDs count as they arrive when this process receives them */
		if (counts_receives(b, d) && recvd[i] > 0)
			progress(b, d, now, recvd[i]);
		else if (!counts_receives(b, d) && sent[i] > 0)
			progress(b, d, now, sent[i]);
		else if (sent[i] > 0)
			d->last_progress = now;
	}
	return n;
}

static bool all_done(const struct bw *b, const uint64_t *count)
{
	for (unsigned int q = 0; q < b->o->num_qps; q++)
		if (count[q] < b->target)
			return false;
	return true;
}

static bool dir_done(const struct bw *b, const struct dir *d)
{
	const uint64_t *count = counts_receives(b, d) ? d->received : d->completed;

	return all_done(b, count) && (!d->send || all_done(b, d->completed));
}

/* -D: once the time is up, each QP ends at its next signaled message. */
static void end_duration(struct bw *b)
{
	uint64_t t = 0;

	for (unsigned int i = 0; i < b->n_dirs; i++) {
		for (unsigned int q = 0; b->dir[i].send && q < b->o->num_qps; q++) {
			uint64_t end =
				(b->dir[i].posted[q] + b->cq_mod - 1) / b->cq_mod * b->cq_mod;

			if (end > t)
				t = end;
		}
	}
	if (t == 0)
		t = b->cq_mod;
	/* one target for all QPs keeps the signaling rule simple */
	b->target = (t + b->cq_mod - 1) / b->cq_mod * b->cq_mod;
}

/* Whether @p d is over (all done, or on UC/UD what did not come by now was lost); -1 on a stall. */
static int dir_over(struct bw *b, struct dir *d, uint64_t now)
{
	if (d->finished || dir_done(b, d))
		return 1;
	/* a receiver alone: once some came */
	if (d->recv && b->o->qp_type != IBV_QPT_RC &&
	    (d->send ? all_done(b, d->completed) : d->done > 0) &&
	    now - d->last_progress > LOSS_WAIT)
		return 1;
	if (now - d->last_progress > PERF_STALL_NS) {
		fprintf(stderr, "droce-perf: no completion for %llu s\n",
			PERF_STALL_NS / 1000000000ull);
		return -1;
	}
	return 0;
}

static int run(struct bw *b)
{
	uint64_t deadline = b->o->duration ? b->t_start + b->o->duration * 1000000000ull : 0;

	for (;;) {
		bool over = true;
		int got = 0;
		uint64_t now;

		for (unsigned int i = 0; i < b->n_dirs; i++)
			if (b->dir[i].send && fill_queues(b, &b->dir[i]) != 0)
				return -1;
		for (int end = 0; end < 2; end++) {
			int n = b->ends & (1u << end) ? poll_end(b, end) : 0;

			if (n < 0)
				return -1;
			got += n;
		}
		now = perf_now_ns();
		for (unsigned int i = 0; i < b->n_dirs; i++) {
			int rc = dir_over(b, &b->dir[i], now);

			if (rc < 0)
				return -1;
			b->dir[i].finished = rc == 1;
			over = over && b->dir[i].finished;
		}
		if (over)
			return 0;
		if (deadline != 0 && now >= deadline && b->target == UINT64_MAX)
			end_duration(b);
		/* -e: every CQ was empty since its last arming: sleep until one is not */
		if (b->o->events && got == 0 &&
		    perf_events_wait(b->c, b->ends, PERF_EVENTS_WAIT_MS) != 0)
			return -1;
	}
}

/* Which directions this process drives: the ends here, and for SENDs the receives. */
static void set_dirs(struct bw *b)
{
	struct perf_ctx *c = b->c;
	bool bidir = b->o->bidirectional, send = b->o->verb == PERF_SEND;
	struct dir *d = b->dir;

	switch (c->role) {
	case PERF_ROLE_LOOPBACK:
		d[0] = (struct dir){.from = 0, .to = 1, .send = true, .recv = send};
		d[1] = (struct dir){.from = 1, .to = 0, .send = true, .recv = send};
		b->n_dirs = bidir ? 2 : 1;
		b->ends = 3;
		break;
	case PERF_ROLE_CLIENT:
		d[0] = (struct dir){.from = 0, .to = 1, .send = true};
		d[1] = (struct dir){.from = 1, .to = 0, .recv = true};
		b->n_dirs = bidir && send ? 2 : 1;
		b->ends = 1;
		break;
	case PERF_ROLE_SERVER:
		/* unidirectional: the server runs only to receive SENDs */
		d[0] = (struct dir){.from = 1, .to = 0, .send = true};
		d[1] = (struct dir){.from = 0, .to = 1, .recv = true};
		if (!bidir)
			d[0] = d[1];
		b->n_dirs = bidir && send ? 2 : 1;
		b->ends = 2;
		break;
	}
	for (unsigned int i = 0; i < b->n_dirs; i++) {
		d[i].peer = c->role == PERF_ROLE_LOOPBACK ? c->end[d[i].to].local : c->peer;
		d[i].srq = d[i].recv && c->end[d[i].to].srq != NULL;
	}
}

static int dir_setup(struct bw *b, struct dir *d)
{
	unsigned int n = b->o->num_qps;

	d->posted = calloc(n, sizeof(uint64_t));
	d->completed = calloc(n, sizeof(uint64_t));
	d->rx_posted = calloc(n, sizeof(uint64_t));
	d->received = calloc(n, sizeof(uint64_t));
	d->expect = calloc(n, sizeof(uint64_t));
	d->peak.window = (uint64_t)b->c->tx_depth * n;
	d->peak.cap = PEAK_SAMPLES;
	d->peak.t = calloc(d->peak.cap, sizeof(uint64_t));
	d->peak.cnt = calloc(d->peak.cap, sizeof(uint64_t));
	if (d->posted == NULL || d->completed == NULL || d->rx_posted == NULL ||
	    d->received == NULL || d->expect == NULL || d->peak.t == NULL || d->peak.cnt == NULL) {
		fprintf(stderr, "droce-perf: out of memory\n");
		return -1;
	}
	for (unsigned int q = 0; q < n; q++) {
		unsigned int rx = b->rx_per_qp < b->slots ? b->rx_per_qp : b->slots;

		/* atomic --check: each size starts from a target word of 0 */
		if (b->o->check && b->o->verb == PERF_ATOMIC)
			memset(target_slot(b, d, q, 0), 0, PERF_ATOMIC_SIZE);

		/* READ --check: remote slot k holds message k's pattern */
		for (unsigned int k = 0; b->o->check && b->o->verb == PERF_READ && k < b->slots;
		     k++)
			perf_pattern_fill(target_slot(b, d, q, k), b->size, q, k);
		while (d->recv && d->rx_posted[q] < rx && d->rx_posted[q] < b->target)
			if (post_recv(b, d, q) != 0)
				return -1;
	}
	return 0;
}

static int setup(struct bw *b)
{
	struct perf_ctx *c = b->c;
	/* -b: each end's first half sends, the second (from vaddr_off) is the peer's target */
	size_t area = b->o->bidirectional ? c->vaddr_off : c->buf_len;

	set_dirs(b);
	b->stride = b->size + (b->o->qp_type == IBV_QPT_UD ? PERF_UD_GRH : 0);
	b->slots = (unsigned int)(area / b->stride);
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
	/* an SRQ's receives are shared out among the QPs' buffers, as perftest's */
	b->rx_per_qp = c->rx_depth;
	if (b->o->use_srq && c->rx_depth / b->o->num_qps < b->rx_per_qp)
		b->rx_per_qp = c->rx_depth / b->o->num_qps;
	for (unsigned int i = 0; i < b->n_dirs; i++)
		if (dir_setup(b, &b->dir[i]) != 0)
			return -1;
	return 0;
}

static void teardown(struct bw *b)
{
	for (unsigned int i = 0; i < 2; i++) {
		struct dir *d = &b->dir[i];

		free(d->posted);
		free(d->completed);
		free(d->rx_posted);
		free(d->received);
		free(d->expect);
		free(d->peak.t);
		free(d->peak.cnt);
	}
}

static void result(const struct bw *b, const struct dir *d, struct perf_bw_result *r)
{
	double secs = (double)(d->t_last - b->t_start) / 1e9;

	r->bytes = b->size;
	r->iters = d->done; /* over every QP, as perftest counts */
	r->msg_rate = secs > 0 ? (double)d->done / secs : 0;
	r->bw_avg = r->msg_rate * b->size;
	r->bw_peak = b->o->no_peak ? 0 : d->peak.best * b->size;
	if (!b->o->no_peak && r->bw_peak < r->bw_avg)
		r->bw_peak = r->bw_avg; /* a run shorter than the peak's span */
}

int perf_bw_run(struct perf_ctx *c, uint32_t size, perf_ready_fn ready, void *arg,
		struct perf_bw_result r[2])
{
	struct bw b = {.c = c, .o = c->o, .size = size};
	int rc = setup(&b);

	if (rc == 0 && ready != NULL)
		rc = ready(arg);
	if (rc == 0) {
		b.t_start = perf_now_ns();
		for (unsigned int i = 0; i < b.n_dirs; i++) {
			b.dir[i].t_last = b.dir[i].last_progress = b.t_start;
			if (!b.o->no_peak)
				peak_add(&b.dir[i].peak, b.t_start, 0);
		}
		rc = run(&b);
	}
	if (rc == 0) {
		result(&b, &b.dir[0], &r[0]);
		/* -b in --loopback: end 1's sends (two hosts: the peer reports its own) */
		if (c->role == PERF_ROLE_LOOPBACK && b.n_dirs == 2)
			result(&b, &b.dir[1], &r[1]);
	}
	teardown(&b);
	return rc;
}
