/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Hierarchical timer wheel: the retransmission and RNR timers of the QPs an
 * engine lcore owns.
 *
 * Time is a 64-bit tick count the caller passes in (the engine passes TSC ticks); the wheel
 * reads no clock and uses no DPDK. A timer is a struct droce_timer embedded in its owner (the
 * QP): arming, re-arming and cancelling are O(1), never allocate, and never walk a list.
 * droce_timer_wheel_run() costs O(1) per timer fired or moved down a level and O(levels) per
 * slot it empties, never anything per tick or per empty slot passed; droce_timer_wheel_next()
 * tells an idle lcore how long it may back off.
 *
 * The wheel has DROCE_TIMER_LEVELS levels of DROCE_TIMER_SLOTS slots. A level-0 slot spans
 * the granularity G (a power of two number of ticks, chosen at init); a level-k slot spans
 * 64^k level-0 slots. Timers beyond the top level (2^36 G: 19.5 hours with 1024 ns slots)
 * wait in the top level's farthest slot and are placed again when it comes round.
 * doc/timers.md describes the design.
 *
 * Precision. Expiry ticks are rounded up to the grid of the wheel, the multiples of G counted
 * from the now given to droce_timer_wheel_init(): a timer armed for tick E becomes due at
 * D = E rounded up to that grid, E <= D <= E + G - 1. It fires in the first call of
 * droce_timer_wheel_run() whose now is at or past D, unless that call stops at its @p max
 * (then in the following calls, before anything that became due later): never before E, and
 * at most G - 1 ticks after E plus the caller's polling gap. A timer armed for a tick already
 * reached (E at or before the wheel's now) fires in the next call, whatever its now.
 *
 * Order. A call first fires what the previous call left due at its @p max, then the timers
 * armed for a tick already reached, then the wheel's timers slot by slot: a timer whose D is
 * earlier fires before one whose D is later; timers with the same D fire in no particular
 * order. Calls stopped by @p max defer timers, they never reorder the wheel's.
 *
 * Ticks are read modulo 2^64: a tick counter that wraps through 0 is no issue. An expiry is in
 * the future when it is 1 to 2^63 - 1 ticks after the wheel's now, and counts as already
 * reached otherwise. A wheel works for 2^63 ticks after its init (97 years of a 3 GHz TSC).
 *
 * Threads. A wheel and its timers belong to one thread (the lcore that owns the QPs): nothing
 * here is atomic and nothing takes a lock.
 *
 * Errors: -EINVAL (a NULL pointer, a misaligned wheel, a zero granularity), -ENOENT
 * (cancelling a timer that is not armed). droce_timer_wheel_run() returns a count.
 */
#ifndef DROCE_TIMER_H
#define DROCE_TIMER_H

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** log2 of the slots per level: a level's occupancy is one 64-bit word. */
#define DROCE_TIMER_SLOT_BITS 6
/** Slots per level. */
#define DROCE_TIMER_SLOTS (1u << DROCE_TIMER_SLOT_BITS)
/** Levels of the wheel. */
#define DROCE_TIMER_LEVELS 6
/** log2 of the level-0 slots the levels cover; timers further out wait at the top. */
#define DROCE_TIMER_SPAN_BITS (DROCE_TIMER_SLOT_BITS * DROCE_TIMER_LEVELS)

static_assert(DROCE_TIMER_SLOTS == 64, "a level's occupancy bitmap is one uint64_t");
static_assert(DROCE_TIMER_SPAN_BITS < 64, "the span fits a tick count");

/** A link of the wheel's intrusive circular lists. Private. */
struct droce_timer_link {
	struct droce_timer_link *next;
	struct droce_timer_link *prev;
};

/**
 * A timer, embedded in its owner. Zeroed memory (or droce_timer_init()) is a timer that is not
 * armed. While armed it is linked into the wheel: the memory must not be freed, moved or
 * cleared before droce_timer_cancel() (or before it fires). 32 bytes.
 */
struct droce_timer {
	struct droce_timer_link link; /**< private: slot or due list */
	uint64_t expire;              /**< tick it was last armed for; read-only */
	uint32_t id;                  /**< the owner's: the wheel never reads or writes it */
	uint8_t where;                /**< private: 0 idle, 1 + level in a slot, or due */
	uint8_t slot;                 /**< private: slot index when in a slot */
	uint8_t reserved[2];          /**< zero */
};

static_assert(sizeof(struct droce_timer) == 32, "a timer is half a cache line");

/** Cache line size the wheel's layout is built on. */
#define DROCE_TIMER_LINE 64

/**
 * A timer wheel, 64-byte aligned (static, on the stack, in a cache-aligned structure, or from
 * aligned_alloc()). Initialise with droce_timer_wheel_init(); it links to itself, so it must
 * not be copied or moved afterwards. Fields marked read-only may be read; the rest are private.
 * The first cache line holds all that a run with nothing due reads and writes. 6336 bytes, of
 * which 6 KiB of list heads.
 */
struct droce_timer_wheel {
	uint64_t now;                    /**< latest now given to init or run; read-only */
	uint64_t base;                   /**< now at init: the origin of the slot grid; read-only */
	uint64_t cur;                    /**< private: next level-0 slot unit to process */
	uint64_t next_unit;              /**< private: lower bound of the next unit with work */
	uint32_t shift;                  /**< log2 of the granularity; read-only */
	bool next_exact;                 /**< private: next_unit is exact, not only a bound */
	uint8_t reserved[3];             /**< zero */
	struct droce_timer_link due;     /**< private: due, fired by the current run */
	struct droce_timer_link pending; /**< private: armed for a tick already reached */
	uint64_t armed;                  /**< timers armed and not yet fired; read-only */
	uint64_t fired;                  /**< counter: timers fired */
	uint64_t cascaded;               /**< counter: timers moved from one level to a lower one */
	uint64_t occupied[DROCE_TIMER_LEVELS]; /**< private: bit s set iff slot s holds timers */
	struct droce_timer_link slots[DROCE_TIMER_LEVELS][DROCE_TIMER_SLOTS]; /**< private */
} __attribute__((aligned(DROCE_TIMER_LINE)));

static_assert(offsetof(struct droce_timer_wheel, pending) + sizeof(void *) <= DROCE_TIMER_LINE,
	      "an idle run reads the first cache line only (pending.next included)");

/**
 * Called by droce_timer_wheel_run() for each timer that fires. The timer is no longer armed
 * when it is called: the callback may re-arm it, arm or cancel any timer of @p w, or free the
 * timer's owner; it must not call droce_timer_wheel_run() on @p w. droce_timer_wheel_now()
 * gives the now of the run. Find the owner with container_of() and the timer's id.
 */
typedef void (*droce_timer_cb_t)(struct droce_timer_wheel *w, struct droce_timer *t, void *arg);

/** Prepare @p t as not armed, with the owner's @p id. Zeroed memory is the same with id 0. */
static inline void droce_timer_init(struct droce_timer *t, uint32_t id)
{
	memset(t, 0, sizeof(*t));
	t->id = id;
}

/** Whether @p t is armed: in the wheel, or due and not yet fired. */
static inline bool droce_timer_is_armed(const struct droce_timer *t)
{
	return t->where != 0;
}

/** The now of the last droce_timer_wheel_run() call, or of init: the wheel's present. */
static inline uint64_t droce_timer_wheel_now(const struct droce_timer_wheel *w)
{
	return w->now;
}

/** Ticks per level-0 slot, G: the power of two init chose. */
static inline uint64_t droce_timer_wheel_granularity(const struct droce_timer_wheel *w)
{
	return UINT64_C(1) << w->shift;
}

/** Timers armed and not yet fired. */
static inline uint64_t droce_timer_wheel_count(const struct droce_timer_wheel *w)
{
	return w->armed;
}

/**
 * Start an empty wheel at tick @p now with level-0 slots of @p granularity ticks, rounded
 * down to a power of two (so that placing a timer is shifts and masks, never a division):
 * 1000 gives 512, 2600 (1 us of a 2.6 GHz TSC) gives 2048. Use droce_timer_ns_to_ticks() to
 * turn a slot width in nanoseconds into ticks.
 *
 * @return 0, or -EINVAL for a NULL or not 64-byte aligned @p w, or a zero @p granularity.
 */
int droce_timer_wheel_init(struct droce_timer_wheel *w, uint64_t now, uint64_t granularity);

/**
 * Arm @p t to expire at tick @p expire_at, or move it there if it is armed already (in the
 * wheel or due): O(1), no allocation. An expiry at or before the wheel's now (modulo 2^64: 0 or
 * 2^63 and more ticks ahead) fires in the next droce_timer_wheel_run() call; when armed from a
 * callback, in the call after the current one.
 *
 * @return 0, or -EINVAL for a NULL @p w or @p t.
 */
int droce_timer_arm(struct droce_timer_wheel *w, struct droce_timer *t, uint64_t expire_at);

/**
 * Disarm @p t, armed on @p w: O(1). It will not fire.
 *
 * @return 0; -ENOENT when @p t is not armed (never armed, fired, or cancelled already);
 *   -EINVAL for a NULL @p w or @p t.
 */
int droce_timer_cancel(struct droce_timer_wheel *w, struct droce_timer *t);

/**
 * Advance the wheel to tick @p now and fire, through @p cb, up to @p max timers that are due:
 * first those armed for a tick already reached, then slot by slot those whose slot-rounded
 * expiry is at or before @p now (see the precision rules at the top of this file). Calling
 * with the same now again fires only what was left by @p max or armed since. A @p now before
 * the wheel's now is taken as the wheel's now: time never goes back.
 *
 * Cost: O(1) per timer fired or moved down a level, O(levels) per slot emptied; a call with
 * nothing due is a few compares, whatever the time since the previous call.
 *
 * @return the number of timers fired (0 to @p max, at most INT_MAX), or -EINVAL for a NULL
 *   @p w or @p cb.
 */
int droce_timer_wheel_run(struct droce_timer_wheel *w, uint64_t now, droce_timer_cb_t cb, void *arg,
			  unsigned int max);

/**
 * Ticks from the wheel's now until the earliest now at which droce_timer_wheel_run() may fire
 * a timer: 0 when timers are due already, UINT64_MAX when none is armed. Never late: no timer
 * fires in a run whose now is before droce_timer_wheel_now() + this. Exact when the earliest
 * timer sits in level 0; when it sits higher, this is the (earlier) tick at which it moves down,
 * and the runs there bring it down until the answer is exact. O(1), or O(levels) when a cancel
 * or a re-arm has emptied a slot since the last run.
 */
uint64_t droce_timer_wheel_next(const struct droce_timer_wheel *w);

/**
 * Ticks of a @p hz clock in @p ns nanoseconds, rounded up (a timeout is never shortened),
 * saturating at UINT64_MAX; UINT64_MAX stays UINT64_MAX. 0 when @p hz is 0.
 */
uint64_t droce_timer_ns_to_ticks(uint64_t ns, uint64_t hz);

/**
 * Nanoseconds in @p ticks ticks of a @p hz clock, rounded down (a back-off computed from
 * droce_timer_wheel_next() never oversleeps), saturating at UINT64_MAX; UINT64_MAX stays
 * UINT64_MAX. 0 when @p hz is 0.
 */
uint64_t droce_timer_ticks_to_ns(uint64_t ticks, uint64_t hz);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_TIMER_H */
