/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection on a burst path (droce_fault.h, doc/fault-injection.md).
 *
 * The hold queue is an array kept in arrival order: entries leave from
 * anywhere, and the survivors are compacted in the same pass, so "oldest
 * first" is simply array order. It is bounded (hold_cap) and small; every scan
 * is skipped unless the cached earliest due time or emission count says that
 * some entry is due.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "droce_fault.h"
#include "droce_wire_mbuf.h"

const char *const droce_fault_kind_name[DROCE_FAULT_KIND_COUNT] = {
	[DROCE_FAULT_DROP] = "drop",       [DROCE_FAULT_DUP] = "duplicate",
	[DROCE_FAULT_REORDER] = "reorder", [DROCE_FAULT_CORRUPT] = "corrupt",
	[DROCE_FAULT_DELAY] = "delay",
};

#define MATCH_ALL (DROCE_FAULT_MATCH_ROCE | DROCE_FAULT_MATCH_OPCODE | DROCE_FAULT_MATCH_QPN)
/* 2^53: a rate is compared against the top 53 bits of a draw */
#define RATE_ONE 9007199254740992.0
#define NEVER    UINT64_MAX
#define GOLDEN   0x9e3779b97f4a7c15ull

struct fault_rule {
	/* per packet */
	uint32_t match; /* effective filter: DROCE_FAULT_MATCH_ROCE added where implied */
	uint32_t dqpn;
	uint8_t opcode;
	uint8_t kind;
	uint16_t nb_ranges;
	uint16_t cur;       /* first range that may still hold the next index */
	uint64_t threshold; /* by rate: selected when draw >> 11 < threshold */
	uint64_t rng;       /* xorshift64* state, never 0 */
	uint64_t matched;
	uint64_t selected;
	/* parameters */
	uint32_t after;
	uint64_t max_ticks;
	uint64_t delay_ticks;
	uint32_t region;
	uint32_t offset;
	uint8_t bit;
	struct droce_fault_range ranges[DROCE_FAULT_RANGES_MAX];
};

struct fault_held {
	struct rte_mbuf *m;
	uint64_t due;      /* leaves once now >= due; NEVER when time does not release it */
	uint64_t emit_due; /* leaves once emitted >= emit_due; NEVER for delayed packets */
};

struct droce_fault {
	struct droce_fault_stats st;
	struct droce_parse_cfg pcfg;
	struct rte_mempool *pool;
	uint64_t seed;
	uint64_t emitted;       /* packets handed out since creation: reorder counts in it */
	uint64_t next_due;      /* min held[].due */
	uint64_t next_emit_due; /* min held[].emit_due */
	uint32_t hold_cap;
	uint32_t nb_held;
	uint32_t parse_users; /* active rules that need the packet parsed */
	uint8_t nb_active;
	uint8_t active[DROCE_FAULT_RULES_MAX]; /* active rule ids, in the order they were added */
	bool used[DROCE_FAULT_RULES_MAX];
	struct fault_rule rules[DROCE_FAULT_RULES_MAX];
	struct fault_held held[]; /* hold_cap entries, oldest first */
};

/* ------------------------------------------------------------ generator */

/* Steele, Lea, Flood's SplitMix64 finaliser: spreads a seed over 64 bits. */
static uint64_t splitmix64(uint64_t x)
{
	x += GOLDEN;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * Marsaglia's xorshift64 with Vigna's multiplier (xorshift64*): period 2^64 - 1. Callers use
 * the top bits: the low ones are the weakest.
 */
static inline uint64_t xorshift64s(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* ------------------------------------------------------------ creation and rules */

int droce_fault_create(const struct droce_fault_conf *conf, struct droce_fault **fp)
{
	struct droce_fault *f;
	uint32_t cap;

	if (conf == NULL || fp == NULL || conf->hold_cap > DROCE_FAULT_HOLD_MAX)
		return -EINVAL;
	cap = conf->hold_cap != 0 ? conf->hold_cap : DROCE_FAULT_HOLD_DEFAULT;
	f = rte_zmalloc_socket("droce_fault", sizeof(*f) + cap * sizeof(f->held[0]),
			       RTE_CACHE_LINE_SIZE, conf->socket_id);
	if (f == NULL)
		return -ENOMEM;
	f->pool = conf->pool;
	f->seed = conf->seed;
	f->hold_cap = cap;
	f->next_due = NEVER;
	f->next_emit_due = NEVER;
	/* classify only: headers must be RoCEv2, nothing is verified */
	f->pcfg = (struct droce_parse_cfg){
		.udp_port = conf->udp_port != 0 ? conf->udp_port : DROCE_ROCEV2_UDP_PORT,
		.max_payload = UINT16_MAX,
		.verify_icrc = false,
		.verify_ip_csum = false,
	};
	*fp = f;
	return 0;
}

void droce_fault_free(struct droce_fault *f)
{
	uint32_t i;

	if (f == NULL)
		return;
	for (i = 0; i < f->nb_held; i++)
		rte_pktmbuf_free(f->held[i].m);
	rte_free(f);
}

static bool rule_needs_parse(const struct fault_rule *r)
{
	return r->match != 0;
}

static int rule_check(const struct droce_fault_rule *r)
{
	uint16_t i;

	if ((unsigned int)r->kind >= DROCE_FAULT_KIND_COUNT || (r->match & ~MATCH_ALL) != 0 ||
	    (r->dqpn & ~DROCE_QPN_MASK) != 0 || r->nb_ranges > DROCE_FAULT_RANGES_MAX ||
	    (r->nb_ranges > 0 && r->ranges == NULL))
		return -EINVAL;
	if (r->nb_ranges == 0 && !(r->rate >= 0.0 && r->rate <= 1.0)) /* NaN fails too */
		return -EINVAL;
	for (i = 0; i < r->nb_ranges; i++) {
		if (r->ranges[i].first > r->ranges[i].last)
			return -EINVAL;
		if (i > 0 && r->ranges[i].first <= r->ranges[i - 1].last)
			return -EINVAL;
	}
	switch (r->kind) {
	case DROCE_FAULT_REORDER:
		return r->reorder.after == 0 ? -EINVAL : 0;
	case DROCE_FAULT_DELAY:
		return r->delay.ticks == 0 ? -EINVAL : 0;
	case DROCE_FAULT_CORRUPT:
		if (r->corrupt.region != DROCE_FAULT_REGION_ICRC &&
		    r->corrupt.region != DROCE_FAULT_REGION_ANY)
			return -EINVAL;
		return r->corrupt.bit > 7 && r->corrupt.bit != DROCE_FAULT_BIT_RANDOM ? -EINVAL : 0;
	default:
		return 0;
	}
}

int droce_fault_rule_add(struct droce_fault *f, const struct droce_fault_rule *r)
{
	struct fault_rule *fr;
	uint64_t state;
	int id, rc;

	if (f == NULL || r == NULL)
		return -EINVAL;
	rc = rule_check(r);
	if (rc != 0)
		return rc;
	for (id = 0; id < DROCE_FAULT_RULES_MAX && f->used[id]; id++)
		;
	if (id == DROCE_FAULT_RULES_MAX)
		return -ENOSPC;
	fr = &f->rules[id];
	memset(fr, 0, sizeof(*fr));
	fr->kind = (uint8_t)r->kind;
	fr->match = r->match;
	if ((r->match & (DROCE_FAULT_MATCH_OPCODE | DROCE_FAULT_MATCH_QPN)) != 0 ||
	    (r->kind == DROCE_FAULT_CORRUPT && r->corrupt.region == DROCE_FAULT_REGION_ICRC))
		fr->match |= DROCE_FAULT_MATCH_ROCE;
	fr->opcode = r->opcode;
	fr->dqpn = r->dqpn;
	fr->nb_ranges = r->nb_ranges;
	if (r->nb_ranges > 0)
		memcpy(fr->ranges, r->ranges, r->nb_ranges * sizeof(r->ranges[0]));
	else
		fr->threshold = (uint64_t)(r->rate * RATE_ONE);
	/* each rule has its own stream, so adding a rule never changes another's decisions */
	state = splitmix64(r->seed != 0 ? r->seed : f->seed + GOLDEN * (uint64_t)(id + 1));
	fr->rng = state != 0 ? state : GOLDEN;
	fr->after = r->reorder.after;
	fr->max_ticks = r->reorder.max_ticks;
	fr->delay_ticks = r->delay.ticks;
	fr->region = r->corrupt.region;
	fr->offset = r->corrupt.offset;
	fr->bit = r->corrupt.bit;
	f->used[id] = true;
	f->active[f->nb_active++] = (uint8_t)id;
	if (rule_needs_parse(fr))
		f->parse_users++;
	return id;
}

int droce_fault_rule_del(struct droce_fault *f, int id)
{
	unsigned int i;

	if (f == NULL)
		return -EINVAL;
	if (id < 0 || id >= DROCE_FAULT_RULES_MAX || !f->used[id])
		return -ENOENT;
	f->used[id] = false;
	if (rule_needs_parse(&f->rules[id]))
		f->parse_users--;
	for (i = 0; f->active[i] != id; i++)
		;
	memmove(&f->active[i], &f->active[i + 1], (size_t)(f->nb_active - i - 1));
	f->nb_active--;
	return 0;
}

void droce_fault_rule_clear(struct droce_fault *f)
{
	if (f == NULL)
		return;
	memset(f->used, 0, sizeof(f->used));
	f->nb_active = 0;
	f->parse_users = 0;
}

int droce_fault_rule_stats_get(const struct droce_fault *f, int id,
			       struct droce_fault_rule_stats *st)
{
	if (f == NULL || st == NULL)
		return -EINVAL;
	if (id < 0 || id >= DROCE_FAULT_RULES_MAX || !f->used[id])
		return -ENOENT;
	st->matched = f->rules[id].matched;
	st->selected = f->rules[id].selected;
	return 0;
}

/* ------------------------------------------------------------ decisions */

static inline bool rule_selects(struct fault_rule *r)
{
	uint64_t idx = r->matched++;

	if (r->nb_ranges == 0)
		return (xorshift64s(&r->rng) >> 11) < r->threshold;
	/* indices only grow: the cursor never moves back */
	while (r->cur < r->nb_ranges && r->ranges[r->cur].last < idx)
		r->cur++;
	return r->cur < r->nb_ranges && r->ranges[r->cur].first <= idx;
}

/*
 * Offer one packet to every active rule; returns the kinds selected and, per kind, the first
 * rule (in the order rules were added) that selected it.
 */
static uint32_t decide(struct droce_fault *f, const struct rte_mbuf *m, struct droce_pkt *pkt,
		       bool *roce, struct fault_rule **by)
{
	uint32_t kinds = 0;
	unsigned int i;

	*roce = false;
	if (f->parse_users > 0)
		*roce = droce_parse_mbuf(m, &f->pcfg, pkt) == DROCE_PARSE_OK;
	for (i = 0; i < f->nb_active; i++) {
		struct fault_rule *r = &f->rules[f->active[i]];

		if (r->match != 0) {
			if (!*roce)
				continue;
			if ((r->match & DROCE_FAULT_MATCH_OPCODE) && pkt->opcode != r->opcode)
				continue;
			if ((r->match & DROCE_FAULT_MATCH_QPN) && pkt->qpn != r->dqpn)
				continue;
		}
		if (!rule_selects(r))
			continue;
		r->selected++;
		if ((kinds & (1u << r->kind)) == 0)
			by[r->kind] = r;
		kinds |= 1u << r->kind;
	}
	return kinds;
}

/* ------------------------------------------------------------ corruption */

/* A byte of @p seg may be written only if nobody else can see it. */
static inline bool seg_writable(const struct rte_mbuf *m, const struct rte_mbuf *seg)
{
	return rte_mbuf_refcnt_read(m) == 1 && RTE_MBUF_DIRECT(seg) &&
	       rte_mbuf_refcnt_read(seg) == 1;
}

static struct rte_mbuf *seg_at(struct rte_mbuf *m, uint32_t *off)
{
	while (m != NULL && *off >= m->data_len) {
		*off -= m->data_len;
		m = m->next;
	}
	return m;
}

/* Flip one bit of @p m; returns the packet to hand on (a copy if @p m was shared). */
static struct rte_mbuf *corrupt(struct droce_fault *f, struct fault_rule *r, struct rte_mbuf *m,
				const struct droce_pkt *pkt)
{
	uint32_t start = 0, len = m->pkt_len, off, frame_off;
	struct rte_mbuf *seg, *copy;
	uint8_t bit;

	if (r->region == DROCE_FAULT_REGION_ICRC) {
		start = pkt->payload_off;
		len = (uint32_t)pkt->icrc_off + DROCE_ICRC_LEN - start;
	}
	if (r->offset == DROCE_FAULT_OFFSET_RANDOM && len > 0) {
		/* Lemire's multiply-shift: uniform in [0, len) up to len / 2^32 */
		off = (uint32_t)(((xorshift64s(&r->rng) >> 32) * len) >> 32);
	} else if (r->offset < len) {
		off = r->offset;
	} else {
		f->st.corrupt_skipped++;
		return m;
	}
	bit = r->bit == DROCE_FAULT_BIT_RANDOM ? (uint8_t)(xorshift64s(&r->rng) >> 61) : r->bit;
	frame_off = start + off;
	off = frame_off;
	seg = seg_at(m, &off);
	if (unlikely(seg == NULL)) { /* pkt_len larger than its segments: not ours to fix */
		f->st.corrupt_skipped++;
		return m;
	}
	if (!seg_writable(m, seg)) {
		/*
		 * Someone else sees these bytes (a retransmit reference, an external buffer in
		 * application memory): corrupt a private copy instead.
		 */
		copy = rte_pktmbuf_copy(m, f->pool != NULL ? f->pool : m->pool, 0, UINT32_MAX);
		if (copy == NULL) {
			f->st.corrupt_nomem++;
			return m;
		}
		rte_pktmbuf_free(m);
		m = copy;
		off = frame_off;
		seg = seg_at(m, &off);
		f->st.corrupt_cow++;
	}
	*rte_pktmbuf_mtod_offset(seg, uint8_t *, off) ^= (uint8_t)(1u << bit);
	f->st.injected[DROCE_FAULT_CORRUPT]++;
	return m;
}

/* ------------------------------------------------------------ hold queue */

static inline void emit(struct droce_fault *f, struct rte_mbuf **out, uint16_t *w,
			struct rte_mbuf *m)
{
	out[(*w)++] = m;
	f->emitted++;
	f->st.tx_pkts++;
}

static inline bool held_due(const struct droce_fault *f, const struct fault_held *h, uint64_t now)
{
	return h->due <= now || h->emit_due <= f->emitted;
}

/*
 * One pass, oldest first: hand out the entries that are due (all of them when @p all) while
 * room lasts, and compact the rest. Releases count as emissions as they happen, so an entry
 * later in the array may become due within the same pass.
 */
static void hold_pass(struct droce_fault *f, uint64_t now, bool all, struct rte_mbuf **out,
		      uint16_t *w, uint16_t cap)
{
	uint64_t next_due = NEVER, next_emit_due = NEVER;
	uint32_t i, keep = 0;

	for (i = 0; i < f->nb_held; i++) {
		struct fault_held *h = &f->held[i];

		if (all || held_due(f, h, now)) {
			if (*w < cap) {
				if (!all && h->emit_due != NEVER && h->emit_due > f->emitted)
					f->st.reorder_timeout++;
				emit(f, out, w, h->m);
				f->st.released++;
				continue;
			}
			f->st.release_deferred++;
		}
		next_due = RTE_MIN(next_due, h->due);
		next_emit_due = RTE_MIN(next_emit_due, h->emit_due);
		f->held[keep++] = *h;
	}
	f->nb_held = keep;
	f->next_due = next_due;
	f->next_emit_due = next_emit_due;
}

/* Hand out everything due at @p now, as room allows. */
static inline void hold_release(struct droce_fault *f, uint64_t now, struct rte_mbuf **out,
				uint16_t *w, uint16_t cap)
{
	while (*w < cap && (f->next_due <= now || f->next_emit_due <= f->emitted))
		hold_pass(f, now, false, out, w, cap);
}

/* Hold @p m; when the queue is full the oldest entry leaves early through @p out. */
static void hold_push(struct droce_fault *f, struct rte_mbuf *m, uint64_t due, uint64_t emit_due,
		      struct rte_mbuf **out, uint16_t *w)
{
	if (f->nb_held == f->hold_cap) {
		emit(f, out, w, f->held[0].m);
		f->st.released++;
		f->st.hold_full++;
		memmove(&f->held[0], &f->held[1], (f->nb_held - 1) * sizeof(f->held[0]));
		f->nb_held--;
		/* the minima may have left with it: a stale low value only costs one pass */
	}
	f->held[f->nb_held++] = (struct fault_held){.m = m, .due = due, .emit_due = emit_due};
	f->next_due = RTE_MIN(f->next_due, due);
	f->next_emit_due = RTE_MIN(f->next_emit_due, emit_due);
	f->st.held++;
}

static inline uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > NEVER - b ? NEVER : a + b;
}

/* ------------------------------------------------------------ bursts */

uint16_t droce_fault_process_burst(struct droce_fault *f, struct rte_mbuf **pkts, uint16_t n,
				   struct rte_mbuf **out, uint16_t cap, uint64_t now)
{
	uint16_t nb_in = RTE_MIN(n, cap);
	uint16_t w = 0, i;

	if (f->nb_active == 0 && f->nb_held == 0) {
		memcpy(out, pkts, nb_in * sizeof(pkts[0]));
		f->st.rx_pkts += nb_in;
		f->st.tx_pkts += nb_in;
		f->emitted += nb_in;
		return nb_in;
	}
	/* packets held earlier leave first, in the room the inputs do not need */
	hold_release(f, now, out, &w, (uint16_t)(cap - nb_in));
	for (i = 0; i < nb_in; i++) {
		struct fault_rule *by[DROCE_FAULT_KIND_COUNT];
		struct rte_mbuf *m = pkts[i], *dup = NULL;
		/* room beyond one slot for each input not yet handled, this one included */
		uint16_t spare = (uint16_t)(cap - w - (nb_in - i));
		struct droce_pkt pkt;
		uint32_t kinds;
		bool roce;

		f->st.rx_pkts++;
		kinds = decide(f, m, &pkt, &roce, by);
		if (kinds & (1u << DROCE_FAULT_DROP)) {
			rte_pktmbuf_free(m);
			f->st.injected[DROCE_FAULT_DROP]++;
			continue;
		}
		if (kinds & (1u << DROCE_FAULT_DUP)) {
			if (spare == 0) {
				f->st.dup_no_room++;
			} else {
				dup = rte_pktmbuf_copy(m, f->pool != NULL ? f->pool : m->pool, 0,
						       UINT32_MAX);
				if (dup == NULL)
					f->st.dup_nomem++;
				else
					f->st.injected[DROCE_FAULT_DUP]++;
			}
		}
		if (kinds & (1u << DROCE_FAULT_CORRUPT))
			m = corrupt(f, by[DROCE_FAULT_CORRUPT], m, &pkt);
		if (kinds & (1u << DROCE_FAULT_DELAY)) {
			hold_push(f, m, add_sat(now, by[DROCE_FAULT_DELAY]->delay_ticks), NEVER,
				  out, &w);
			f->st.injected[DROCE_FAULT_DELAY]++;
		} else if (kinds & (1u << DROCE_FAULT_REORDER)) {
			struct fault_rule *r = by[DROCE_FAULT_REORDER];

			hold_push(f, m, r->max_ticks != 0 ? add_sat(now, r->max_ticks) : NEVER,
				  f->emitted + r->after, out, &w);
			f->st.injected[DROCE_FAULT_REORDER]++;
		} else {
			emit(f, out, &w, m);
		}
		if (dup != NULL)
			emit(f, out, &w, dup);
		/* reordered packets whose count of later packets is now reached */
		if (f->next_emit_due <= f->emitted)
			hold_release(f, now, out, &w, (uint16_t)(cap - (nb_in - i - 1)));
	}
	return w;
}

uint16_t droce_fault_flush_burst(struct droce_fault *f, uint64_t now, struct rte_mbuf **out,
				 uint16_t cap)
{
	uint16_t w = 0;

	hold_release(f, now, out, &w, cap);
	return w;
}

uint16_t droce_fault_drain_burst(struct droce_fault *f, struct rte_mbuf **out, uint16_t cap)
{
	uint16_t w = 0;

	if (f->nb_held > 0 && cap > 0)
		hold_pass(f, 0, true, out, &w, cap);
	return w;
}

uint32_t droce_fault_held_count(const struct droce_fault *f)
{
	return f->nb_held;
}

void droce_fault_stats_get(const struct droce_fault *f, struct droce_fault_stats *st)
{
	*st = f->st;
}

void droce_fault_stats_reset(struct droce_fault *f)
{
	memset(&f->st, 0, sizeof(f->st));
}

/* ------------------------------------------------------------ index lists */

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* A decimal number at *s (no sign); advances *s. */
static int parse_u64(const char **s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)**s))
		return -EINVAL;
	errno = 0;
	*v = strtoull(*s, &end, 10);
	if (errno != 0)
		return -EINVAL;
	*s = end;
	return 0;
}

int droce_fault_ranges_parse(const char *s, struct droce_fault_range *r, unsigned int max)
{
	unsigned int nb = 0;
	uint64_t first, last;

	if (s == NULL || r == NULL)
		return -EINVAL;
	for (;;) {
		s = skip_space(s);
		if (parse_u64(&s, &first) != 0)
			return -EINVAL;
		last = first;
		s = skip_space(s);
		if (*s == '-') {
			s = skip_space(s + 1);
			if (parse_u64(&s, &last) != 0 || last < first)
				return -EINVAL;
			s = skip_space(s);
		}
		if (nb > 0 && first <= r[nb - 1].last)
			return -EINVAL;
		if (nb == max)
			return -ENOSPC;
		r[nb].first = first;
		r[nb].last = last;
		nb++;
		if (*s == '\0')
			return (int)nb;
		if (*s != ',')
			return -EINVAL;
		s++;
	}
}
