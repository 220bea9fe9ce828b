/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hierarchical timer wheel of droce_timer.h; doc/timers.md explains the design.
 *
 * Time inside the wheel is counted in units: level-0 slots of G = 2^shift ticks from the
 * wheel's base (the now of init). A timer armed for tick E is due in unit
 * u = ceil((E - base) / G). cur is the next unit to process: every unit before it has been
 * processed (its cascades done, its level-0 slot moved to the due list), nothing at cur has.
 *
 * Invariants between calls (and between callbacks), for every timer in a slot of level k:
 * - its unit u (clamped to cur + 2^36 - 1 at the top level) is in block b = u >> 6k, with
 *   b << 6k >= cur: the slot's "activation", the unit at which it cascades (level k >= 1) or
 *   becomes due (level 0), is not behind cur and not after u;
 * - the blocks held by the slots of one level are the 64 consecutive ones from
 *   ceil(cur / 64^k), so each slot holds one block and its activation is found by a rotate
 *   and a count of trailing zeros of the level's occupancy word;
 * - occupied[k] bit s is set iff slots[k][s] is not empty.
 * And cur <= floor((now - base) / G) + 1: what run has not processed yet may be due.
 * next_unit is never after the earliest activation (arms lower it, runs set it by a scan); it
 * is that activation exactly while next_exact holds, which a slot emptied by a cancel or a
 * re-arm clears. An idle run compares target with next_unit and touches nothing else.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "droce_timer.h"

#define SLOT_MASK      (DROCE_TIMER_SLOTS - 1)
#define SPAN           (UINT64_C(1) << DROCE_TIMER_SPAN_BITS)
#define WHERE_IDLE     0
#define WHERE_DUE      (DROCE_TIMER_LEVELS + 1) /* due or pending list */
#define NS_PER_S       UINT64_C(1000000000)
#define LEVEL_SHIFT(k) ((unsigned int)(k)*DROCE_TIMER_SLOT_BITS)

static_assert(WHERE_DUE <= UINT8_MAX, "where fits its byte");
static_assert(offsetof(struct droce_timer, link) == 0, "a link is its timer");

/* ------------------------------------------------------------ lists */

static inline void link_init(struct droce_timer_link *h)
{
	h->next = h;
	h->prev = h;
}

static inline bool link_empty(const struct droce_timer_link *h)
{
	return h->next == h;
}

static inline void link_add_tail(struct droce_timer_link *h, struct droce_timer_link *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void link_del(struct droce_timer_link *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
}

/* Move every node of @from, in order, to the tail of @to; @from ends empty. */
static inline void link_splice_tail(struct droce_timer_link *from, struct droce_timer_link *to)
{
	if (link_empty(from))
		return;
	from->next->prev = to->prev;
	to->prev->next = from->next;
	from->prev->next = to;
	to->prev = from->prev;
	link_init(from);
}

static inline struct droce_timer *link_timer(struct droce_timer_link *l)
{
	return (struct droce_timer *)(void *)l;
}

/* ------------------------------------------------------------ placement */

/* The unit a timer armed for @expire becomes due in: ceil((expire - base) / G). */
static inline uint64_t timer_unit(const struct droce_timer_wheel *w, uint64_t expire)
{
	uint64_t rel = expire - w->base;
	uint64_t frac = rel & ((UINT64_C(1) << w->shift) - 1);

	return (rel >> w->shift) + (frac != 0);
}

/* Link @t into the slot for @unit (>= cur); O(1). */
static inline void timer_place(struct droce_timer_wheel *w, struct droce_timer *t, uint64_t unit)
{
	uint64_t delta = unit - w->cur;
	unsigned int level = 0, slot, sh;
	uint64_t act;

	if (delta >= DROCE_TIMER_SLOTS) {
		if (delta >= SPAN) {
			/* Beyond the top level: wait in its farthest slot, placed again there. */
			delta = SPAN - 1;
			unit = w->cur + delta;
		}
		level = (63u - (unsigned int)__builtin_clzll(delta)) / DROCE_TIMER_SLOT_BITS;
	}
	sh = LEVEL_SHIFT(level);
	slot = (unsigned int)(unit >> sh) & SLOT_MASK;
	link_add_tail(&w->slots[level][slot], &t->link);
	w->occupied[level] |= UINT64_C(1) << slot;
	t->where = (uint8_t)(1 + level);
	t->slot = (uint8_t)slot;
	act = (unit >> sh) << sh;
	if (act < w->next_unit)
		w->next_unit = act;
}

/*
 * Unlink an armed @t. A timer moved to the due list with its slot keeps its where and slot
 * (the splice is O(1), nothing walks the list): clearing the occupancy bit only when that
 * slot is empty is right in both cases.
 */
static inline void timer_unlink(struct droce_timer_wheel *w, struct droce_timer *t)
{
	unsigned int level;

	link_del(&t->link);
	if (t->where == WHERE_DUE)
		return;
	level = t->where - 1u;
	if (link_empty(&w->slots[level][t->slot])) {
		w->occupied[level] &= ~(UINT64_C(1) << t->slot);
		/* a slot that still holds timers keeps its activation; an emptied one may not */
		w->next_exact = false;
	}
}

/* The earliest activation unit (>= cur) of any slot, or UINT64_MAX when all are empty. */
static uint64_t wheel_scan(const struct droce_timer_wheel *w)
{
	uint64_t best = UINT64_MAX;
	unsigned int k;

	for (k = 0; k < DROCE_TIMER_LEVELS; k++) {
		uint64_t bm = w->occupied[k], b0, act;
		unsigned int sh = LEVEL_SHIFT(k), idx;

		if (bm == 0)
			continue;
		/* first block a slot of this level can hold: ceil(cur / 64^k), cur >= 1 */
		b0 = ((w->cur - 1) >> sh) + 1;
		idx = (unsigned int)b0 & SLOT_MASK;
		if (idx != 0)
			bm = (bm >> idx) | (bm << (DROCE_TIMER_SLOTS - idx));
		act = (b0 + (unsigned int)__builtin_ctzll(bm)) << sh;
		if (act < best)
			best = act;
	}
	return best;
}

/*
 * Cascade the slots activated at unit cur, top level first: their timers are placed again
 * relative to cur, into lower levels (or into the top level again when they are still beyond
 * it). None lands in a slot activated at cur except level 0's, which the caller takes next.
 */
static void wheel_cascade(struct droce_timer_wheel *w)
{
	struct droce_timer_link moving;
	unsigned int k;

	if ((w->cur & SLOT_MASK) != 0)
		return;
	for (k = DROCE_TIMER_LEVELS - 1; k >= 1; k--) {
		unsigned int sh = LEVEL_SHIFT(k), slot;

		if ((w->cur & ((UINT64_C(1) << sh) - 1)) != 0)
			continue;
		slot = (unsigned int)(w->cur >> sh) & SLOT_MASK;
		if ((w->occupied[k] & (UINT64_C(1) << slot)) == 0)
			continue;
		link_init(&moving);
		link_splice_tail(&w->slots[k][slot], &moving);
		w->occupied[k] &= ~(UINT64_C(1) << slot);
		while (!link_empty(&moving)) {
			struct droce_timer *t = link_timer(moving.next);

			link_del(&t->link);
			timer_place(w, t, timer_unit(w, t->expire));
			w->cascaded++;
		}
	}
}

/* ------------------------------------------------------------ API */

int droce_timer_wheel_init(struct droce_timer_wheel *w, uint64_t now, uint64_t granularity)
{
	unsigned int k, s;

	if (w == NULL || (uintptr_t)w % DROCE_TIMER_LINE != 0 || granularity == 0)
		return -EINVAL;
	memset(w, 0, offsetof(struct droce_timer_wheel, slots));
	w->now = now;
	w->base = now;
	w->shift = 63u - (unsigned int)__builtin_clzll(granularity);
	w->cur = 1; /* unit 0 is now itself: nothing can be due in it */
	w->next_unit = UINT64_MAX;
	w->next_exact = true;
	link_init(&w->due);
	link_init(&w->pending);
	for (k = 0; k < DROCE_TIMER_LEVELS; k++)
		for (s = 0; s < DROCE_TIMER_SLOTS; s++)
			link_init(&w->slots[k][s]);
	return 0;
}

int droce_timer_arm(struct droce_timer_wheel *w, struct droce_timer *t, uint64_t expire_at)
{
	uint64_t ahead;

	if (w == NULL || t == NULL)
		return -EINVAL;
	if (t->where != WHERE_IDLE)
		timer_unlink(w, t);
	else
		w->armed++;
	t->expire = expire_at;
	ahead = expire_at - w->now;
	if (ahead == 0 || ahead > (uint64_t)INT64_MAX) {
		/* Reached already: the next run fires it, not the one calling us. */
		link_add_tail(&w->pending, &t->link);
		t->where = WHERE_DUE;
		return 0;
	}
	/* ahead > 0 puts the unit past floor((now - base) / G), so at or after cur. */
	timer_place(w, t, timer_unit(w, expire_at));
	return 0;
}

int droce_timer_cancel(struct droce_timer_wheel *w, struct droce_timer *t)
{
	if (w == NULL || t == NULL)
		return -EINVAL;
	if (t->where == WHERE_IDLE)
		return -ENOENT;
	timer_unlink(w, t);
	t->where = WHERE_IDLE;
	w->armed--;
	return 0;
}

int droce_timer_wheel_run(struct droce_timer_wheel *w, uint64_t now, droce_timer_cb_t cb, void *arg,
			  unsigned int max)
{
	uint64_t target, unit;
	unsigned int slot;
	int n = 0;

	if (w == NULL || cb == NULL)
		return -EINVAL;
	if (max > INT_MAX)
		max = INT_MAX;
	if ((int64_t)(now - w->now) > 0)
		w->now = now;
	/* units up to target have begun by now: their timers are due */
	target = (w->now - w->base) >> w->shift;
	/* timers armed in the past from now on go to pending and wait for the next call */
	link_splice_tail(&w->pending, &w->due);
	if (link_empty(&w->due) && target < w->next_unit) {
		/* nothing due: skip the empty units so later arms land low */
		if (w->cur <= target)
			w->cur = target + 1;
		return 0;
	}
	while ((unsigned int)n < max) {
		if (!link_empty(&w->due)) {
			struct droce_timer *t = link_timer(w->due.next);

			link_del(&t->link);
			t->where = WHERE_IDLE;
			w->armed--;
			w->fired++;
			n++;
			cb(w, t, arg);
			continue;
		}
		if (w->cur > target)
			break;
		unit = w->next_exact ? w->next_unit : wheel_scan(w);
		if (unit > target) {
			/* moving cur up to target + 1 changes no slot's activation */
			w->cur = target + 1;
			w->next_unit = unit;
			w->next_exact = true;
			break;
		}
		/* the cascade and the splice change the slots: scan again after them */
		w->next_exact = false;
		/* jump over the empty units: nothing to cascade or fire there */
		w->cur = unit;
		wheel_cascade(w);
		slot = (unsigned int)unit & SLOT_MASK;
		if ((w->occupied[0] & (UINT64_C(1) << slot)) != 0) {
			link_splice_tail(&w->slots[0][slot], &w->due);
			w->occupied[0] &= ~(UINT64_C(1) << slot);
		}
		w->cur = unit + 1;
	}
	if (!w->next_exact) {
		w->next_unit = wheel_scan(w);
		w->next_exact = true;
	}
	return n;
}

uint64_t droce_timer_wheel_next(const struct droce_timer_wheel *w)
{
	uint64_t unit, rel_now, at;

	if (w->armed == 0)
		return UINT64_MAX;
	if (!link_empty(&w->due) || !link_empty(&w->pending))
		return 0;
	unit = w->next_exact ? w->next_unit : wheel_scan(w);
	rel_now = w->now - w->base;
	/* beyond 64 bits of ticks: answer as far as they go, below the "empty" UINT64_MAX */
	at = unit > ((UINT64_MAX - 1) >> w->shift) ? UINT64_MAX - 1 : unit << w->shift;
	return at > rel_now ? at - rel_now : 0;
}

uint64_t droce_timer_ns_to_ticks(uint64_t ns, uint64_t hz)
{
	unsigned __int128 t;

	if (hz == 0)
		return 0;
	if (ns == UINT64_MAX)
		return UINT64_MAX;
	t = ((unsigned __int128)ns * hz + (NS_PER_S - 1)) / NS_PER_S;
	return t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
}

uint64_t droce_timer_ticks_to_ns(uint64_t ticks, uint64_t hz)
{
	unsigned __int128 ns;

	if (hz == 0)
		return 0;
	if (ticks == UINT64_MAX)
		return UINT64_MAX;
	ns = (unsigned __int128)ticks * NS_PER_S / hz;
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}
