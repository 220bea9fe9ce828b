/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timer wheel of lib/transport (droce_timer.h). Time is driven explicitly: no test reads a
 * clock or sleeps. The guarantee checked throughout: a timer armed for tick E while E is ahead
 * of the wheel's now becomes due at D, E rounded up to the grid of G-tick slots that starts at
 * the wheel's base (E <= D <= E + G - 1), and fires in the first run whose now is at or past D
 * (unless that run stops at its max). A timer armed for a tick already reached fires in the next
 * run. Runs driven by droce_timer_wheel_next() therefore fire every timer with now == D exactly.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <droce_timer.h>
#include <droce_wire_timer.h>

#define DIM(a)   (sizeof(a) / sizeof((a)[0]))
#define NO_LIMIT UINT_MAX

/* ------------------------------------------------------------ helpers */

struct fire {
	uint32_t id;
	uint64_t now;
};

/* What the recording callback saw, in firing order. */
static struct fire fires[1u << 17];
static size_t nfires;

static void record(struct droce_timer_wheel *w, struct droce_timer *t, void *arg)
{
	(void)arg;
	cr_assert_lt(nfires, DIM(fires), "fire log has room");
	cr_assert_not(droce_timer_is_armed(t), "timer %" PRIu32 " is disarmed in its callback",
		      t->id);
	fires[nfires].id = t->id;
	fires[nfires].now = droce_timer_wheel_now(w);
	nfires++;
}

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

/* 1 .. 2^bits, spread evenly over the powers of two so that every level gets timers. */
static uint64_t rnd_delta(unsigned int bits)
{
	unsigned int b = (unsigned int)rnd_below(bits + 1);

	return 1 + (b == 0 ? 0 : rnd() & ((UINT64_C(1) << b) - 1));
}

/* D: @e rounded up to the grid of @g-tick slots that starts at @base, modulo 2^64. */
static uint64_t grid_due(uint64_t base, uint64_t g, uint64_t e)
{
	uint64_t rel = e - base;

	return base + (rel / g + (rel % g != 0)) * g;
}

static void wheel_init(struct droce_timer_wheel *w, uint64_t now, uint64_t g)
{
	cr_assert_eq(droce_timer_wheel_init(w, now, g), 0, "wheel init at %" PRIu64 ", G %" PRIu64,
		     now, g);
	nfires = 0;
}

static void arm(struct droce_timer_wheel *w, struct droce_timer *t, uint64_t e)
{
	cr_assert_eq(droce_timer_arm(w, t, e), 0, "arm timer %" PRIu32 " at %" PRIu64, t->id, e);
}

static int run(struct droce_timer_wheel *w, uint64_t now, unsigned int max)
{
	int n = droce_timer_wheel_run(w, now, record, NULL, max);

	cr_assert_geq(n, 0, "run at %" PRIu64 " succeeds", now);
	return n;
}

/* Jump from run to run by droce_timer_wheel_next() until the wheel is empty; returns the runs. */
static unsigned int run_by_next(struct droce_timer_wheel *w, uint64_t *now, unsigned int limit)
{
	unsigned int runs = 0;
	uint64_t nx;

	while ((nx = droce_timer_wheel_next(w)) != UINT64_MAX) {
		cr_assert_lt(runs, limit, "the wheel empties within %u runs", limit);
		*now += nx;
		run(w, *now, NO_LIMIT);
		runs++;
	}
	return runs;
}

/* Index of @id in the fire log, asserting it fired exactly once. */
static size_t fired_once(uint32_t id)
{
	size_t i, at = SIZE_MAX, count = 0;

	for (i = 0; i < nfires; i++) {
		if (fires[i].id == id) {
			at = i;
			count++;
		}
	}
	cr_assert_eq(count, 1, "timer %" PRIu32 " fired once (%zu times)", id, count);
	return at;
}

/* ------------------------------------------------------------ conversions */

Test(timer_convert, ns_to_ticks_rounds_up)
{
	cr_expect_eq(droce_timer_ns_to_ticks(1000, 2600000000u), 2600, "1 us at 2.6 GHz");
	cr_expect_eq(droce_timer_ns_to_ticks(1, 2600000000u), 3, "1 ns at 2.6 GHz is 2.6: 3");
	cr_expect_eq(droce_timer_ns_to_ticks(1, 1), 1, "1 ns at 1 Hz rounds up to a tick");
	cr_expect_eq(droce_timer_ns_to_ticks(0, 2600000000u), 0, "0 ns is 0 ticks");
	cr_expect_eq(droce_timer_ns_to_ticks(8796093022208u, 3000000000u), UINT64_C(26388279066624),
		     "ACK timeout 31 (8796 s) at 3 GHz");
}

Test(timer_convert, ticks_to_ns_rounds_down)
{
	cr_expect_eq(droce_timer_ticks_to_ns(2600, 2600000000u), 1000, "2600 ticks at 2.6 GHz");
	cr_expect_eq(droce_timer_ticks_to_ns(3, 2600000000u), 1, "1.15 ns rounds down to 1");
	cr_expect_eq(droce_timer_ticks_to_ns(1, 2600000000u), 0, "0.38 ns rounds down to 0");
	cr_expect_eq(droce_timer_ticks_to_ns(5, 1), UINT64_C(5000000000), "5 ticks at 1 Hz");
}

Test(timer_convert, saturation_and_limits)
{
	cr_expect_eq(droce_timer_ns_to_ticks(UINT64_MAX / 2, 10000000000u), UINT64_MAX,
		     "ns to ticks saturates");
	cr_expect_eq(droce_timer_ticks_to_ns(UINT64_MAX / 2, 1), UINT64_MAX,
		     "ticks to ns saturates");
	cr_expect_eq(droce_timer_ns_to_ticks(UINT64_MAX, 1), UINT64_MAX,
		     "UINT64_MAX ns stays UINT64_MAX ticks");
	cr_expect_eq(droce_timer_ticks_to_ns(UINT64_MAX, 3000000000u), UINT64_MAX,
		     "UINT64_MAX ticks (no timer) stays UINT64_MAX ns at 3 GHz");
	cr_expect_eq(droce_timer_ns_to_ticks(1000, 0), 0, "hz 0 gives 0 ticks");
	cr_expect_eq(droce_timer_ticks_to_ns(1000, 0), 0, "hz 0 gives 0 ns");
}

/* Up then down never loses time: a timeout converted back is at least what was asked. */
Test(timer_convert, round_trip_never_shortens)
{
	static const uint64_t hz[] = {1000000000u, 2600000000u, 3000000000u, 2399999999u, 7};
	unsigned int i, h;

	for (h = 0; h < DIM(hz); h++) {
		for (i = 0; i < 2000; i++) {
			uint64_t ns = rnd_delta(44);
			uint64_t back =
				droce_timer_ticks_to_ns(droce_timer_ns_to_ticks(ns, hz[h]), hz[h]);

			cr_assert_geq(back, ns,
				      "%" PRIu64 " ns at %" PRIu64 " Hz comes back as %" PRIu64, ns,
				      hz[h], back);
		}
	}
}

/* ------------------------------------------------------------ init */

Test(timer_wheel, init_rejects_bad_arguments)
{
	struct droce_timer_wheel w;

	static unsigned char mem[sizeof(w) + DROCE_TIMER_LINE]
		__attribute__((aligned(DROCE_TIMER_LINE)));

	cr_expect_eq(droce_timer_wheel_init(NULL, 0, 1), -EINVAL, "NULL wheel");
	cr_expect_eq(droce_timer_wheel_init(&w, 0, 0), -EINVAL, "zero granularity");
	cr_expect_eq(droce_timer_wheel_init((struct droce_timer_wheel *)(void *)(mem + 8), 0, 1),
		     -EINVAL, "a wheel not 64-byte aligned");
	cr_expect_eq(droce_timer_wheel_init((struct droce_timer_wheel *)(void *)mem, 0, 1), 0,
		     "an aligned wheel");
}

Test(timer_wheel, granularity_rounds_down_to_power_of_two)
{
	static const struct {
		uint64_t asked, got;
	} g[] = {
		{1, 1},       {2, 2},       {3, 2},
		{1000, 512},  {1024, 1024}, {2600, 2048},
		{4095, 2048}, {4096, 4096}, {UINT64_MAX, UINT64_C(1) << 63},
	};
	struct droce_timer_wheel w;
	unsigned int i;

	for (i = 0; i < DIM(g); i++) {
		cr_assert_eq(droce_timer_wheel_init(&w, 5, g[i].asked), 0, "init");
		cr_expect_eq(droce_timer_wheel_granularity(&w), g[i].got,
			     "granularity %" PRIu64 " gives %" PRIu64 ", want %" PRIu64, g[i].asked,
			     droce_timer_wheel_granularity(&w), g[i].got);
	}
}

Test(timer_wheel, empty_wheel)
{
	struct droce_timer_wheel w;

	wheel_init(&w, 12345, 16);
	cr_expect_eq(droce_timer_wheel_now(&w), 12345, "now is the init now");
	cr_expect_eq(droce_timer_wheel_count(&w), 0, "no timer armed");
	cr_expect_eq(droce_timer_wheel_next(&w), UINT64_MAX, "next on an empty wheel");
	cr_expect_eq(run(&w, 1u << 30, NO_LIMIT), 0, "a run fires nothing");
	cr_expect_eq(droce_timer_wheel_now(&w), 1u << 30, "the run moved now");
	cr_expect_eq(droce_timer_wheel_next(&w), UINT64_MAX, "still empty");
}

Test(timer_wheel, run_rejects_bad_arguments)
{
	struct droce_timer_wheel w;

	wheel_init(&w, 0, 1);
	cr_expect_eq(droce_timer_wheel_run(NULL, 1, record, NULL, 1), -EINVAL, "NULL wheel");
	cr_expect_eq(droce_timer_wheel_run(&w, 1, NULL, NULL, 1), -EINVAL, "NULL callback");
}

Test(timer_wheel, sizes)
{
	cr_expect_eq(sizeof(struct droce_timer), 32, "a timer is 32 bytes");
	cr_expect_leq(sizeof(struct droce_timer_wheel), 7 * 1024, "a wheel is under 7 KiB");
}

/* ------------------------------------------------------------ arm and cancel */

Test(timer_arm, fresh_timers_are_idle)
{
	struct droce_timer z, t;

	memset(&z, 0, sizeof(z));
	memset(&t, 0xa5, sizeof(t));
	droce_timer_init(&t, 77);
	cr_expect_not(droce_timer_is_armed(&z), "zeroed memory is an idle timer");
	cr_expect_not(droce_timer_is_armed(&t), "droce_timer_init makes an idle timer");
	cr_expect_eq(t.id, 77, "droce_timer_init sets the id");
}

Test(timer_arm, null_arguments)
{
	struct droce_timer_wheel w;
	struct droce_timer t;

	wheel_init(&w, 0, 1);
	droce_timer_init(&t, 1);
	cr_expect_eq(droce_timer_arm(NULL, &t, 5), -EINVAL, "arm on a NULL wheel");
	cr_expect_eq(droce_timer_arm(&w, NULL, 5), -EINVAL, "arm a NULL timer");
	cr_expect_eq(droce_timer_cancel(NULL, &t), -EINVAL, "cancel on a NULL wheel");
	cr_expect_eq(droce_timer_cancel(&w, NULL), -EINVAL, "cancel a NULL timer");
	cr_expect_not(droce_timer_is_armed(&t), "nothing was armed");
}

Test(timer_arm, arm_then_cancel)
{
	struct droce_timer_wheel w;
	struct droce_timer t;

	wheel_init(&w, 1000, 4);
	droce_timer_init(&t, 1);
	cr_expect_eq(droce_timer_cancel(&w, &t), -ENOENT, "cancel a timer never armed");
	arm(&w, &t, 1100);
	cr_expect(droce_timer_is_armed(&t), "armed");
	cr_expect_eq(t.expire, 1100, "expire is the tick asked");
	cr_expect_eq(droce_timer_wheel_count(&w), 1, "count 1");
	arm(&w, &t, 1200);
	cr_expect_eq(droce_timer_wheel_count(&w), 1, "re-arming does not count twice");
	cr_expect_eq(droce_timer_cancel(&w, &t), 0, "cancel an armed timer");
	cr_expect_not(droce_timer_is_armed(&t), "no longer armed");
	cr_expect_eq(droce_timer_wheel_count(&w), 0, "count 0");
	cr_expect_eq(droce_timer_cancel(&w, &t), -ENOENT, "cancel twice");
	cr_expect_eq(droce_timer_wheel_next(&w), UINT64_MAX, "next on the emptied wheel");
}

Test(timer_arm, cancel_before_expiry)
{
	struct droce_timer_wheel w;
	struct droce_timer t[3];
	uint64_t e[3] = {1000 + 50, 1000 + 5000, 1000 + 9000000}; /* levels 0, 1..2, 3 */
	unsigned int i;

	wheel_init(&w, 1000, 4);
	for (i = 0; i < 3; i++) {
		droce_timer_init(&t[i], i);
		arm(&w, &t[i], e[i]);
	}
	for (i = 0; i < 3; i++) {
		run(&w, grid_due(1000, 4, e[i]) - 1, NO_LIMIT);
		cr_expect_eq(nfires, 0, "nothing fired one tick before timer %u is due", i);
		cr_expect_eq(droce_timer_cancel(&w, &t[i]), 0, "cancel timer %u", i);
	}
	run(&w, 1000 + 100000000, NO_LIMIT);
	cr_expect_eq(nfires, 0, "cancelled timers never fire");
	cr_expect_eq(droce_timer_wheel_count(&w), 0, "nothing left");
	cr_expect_eq(droce_timer_wheel_next(&w), UINT64_MAX, "empty");
}

Test(timer_arm, rearm_later_moves_it)
{
	struct droce_timer_wheel w;
	struct droce_timer t;
	uint64_t now = 0;

	wheel_init(&w, 0, 1);
	droce_timer_init(&t, 9);
	arm(&w, &t, 100);
	arm(&w, &t, 70000); /* from level 1 to level 2 */
	run(&w, 100, NO_LIMIT);
	cr_expect_eq(nfires, 0, "nothing at the old expiry");
	cr_expect(droce_timer_is_armed(&t), "still armed");
	run(&w, 69999, NO_LIMIT);
	cr_expect_eq(nfires, 0, "nothing one tick before the new expiry");
	now = 69999;
	run_by_next(&w, &now, 10);
	cr_assert_eq(nfires, 1, "fired once");
	cr_expect_eq(fires[0].now, 70000, "at the new expiry");
}

Test(timer_arm, rearm_earlier_moves_it)
{
	struct droce_timer_wheel w;
	struct droce_timer t;
	uint64_t now = 0;

	wheel_init(&w, 0, 2);
	droce_timer_init(&t, 9);
	arm(&w, &t, UINT64_C(1) << 33); /* top levels */
	arm(&w, &t, 31);                /* level 0 */
	cr_expect_eq(droce_timer_wheel_next(&w), 32, "next follows the move (31 rounds up to 32)");
	run_by_next(&w, &now, 10);
	cr_assert_eq(nfires, 1, "fired once");
	cr_expect_eq(fires[0].now, 32, "at the new expiry's slot");
	cr_expect_eq(droce_timer_wheel_count(&w), 0, "nothing left");
}

Test(timer_arm, past_and_present_fire_on_next_run)
{
	struct droce_timer_wheel w;
	struct droce_timer t[4];
	unsigned int i;

	wheel_init(&w, 5000, 64);
	for (i = 0; i < 4; i++)
		droce_timer_init(&t[i], i);
	arm(&w, &t[0], 5000);                           /* now */
	arm(&w, &t[1], 4999);                           /* one tick ago */
	arm(&w, &t[2], 0);                              /* long ago */
	arm(&w, &t[3], 5000 + (UINT64_C(1) << 63) + 1); /* more than 2^63 ahead: the past */
	cr_expect_eq(droce_timer_wheel_next(&w), 0, "next is 0 with timers due");
	cr_expect_eq(run(&w, 5000, NO_LIMIT), 4, "a run at the same now fires all four");
	cr_expect_eq(droce_timer_wheel_count(&w), 0, "nothing left");
}

Test(timer_arm, rearm_a_due_timer)
{
	struct droce_timer_wheel w;
	struct droce_timer t;

	wheel_init(&w, 100, 1);
	droce_timer_init(&t, 1);
	arm(&w, &t, 50);
	arm(&w, &t, 300);
	cr_expect_eq(run(&w, 299, NO_LIMIT), 0, "moved out of the due list");
	cr_expect_eq(run(&w, 300, NO_LIMIT), 1, "fires at its new expiry");
}

Test(timer_arm, cancel_a_due_timer)
{
	struct droce_timer_wheel w;
	struct droce_timer t[2];

	wheel_init(&w, 0, 1);
	droce_timer_init(&t[0], 0);
	droce_timer_init(&t[1], 1);
	arm(&w, &t[0], 10);
	arm(&w, &t[1], 10);
	cr_expect_eq(run(&w, 10, 1), 1, "max 1: one of two fires");
	cr_assert_eq(nfires, 1, "one fired");
	cr_expect_eq(droce_timer_cancel(&w, &t[1 - fires[0].id]), 0, "cancel the one left due");
	cr_expect_eq(droce_timer_wheel_next(&w), UINT64_MAX, "empty");
	cr_expect_eq(run(&w, 20, NO_LIMIT), 0, "the cancelled one never fires");
}

/* ------------------------------------------------------------ precision */

/* Runs at every tick: each timer fires exactly at D, never before E, less than G after it. */
Test(timer_precision, every_tick_small_granularity)
{
	static struct droce_timer t[300];
	struct droce_timer_wheel w;
	const uint64_t base = 1000003, g = 8;
	uint64_t now;
	unsigned int i;

	wheel_init(&w, base, g);
	for (i = 0; i < DIM(t); i++) {
		droce_timer_init(&t[i], i);
		arm(&w, &t[i], base + 1 + i);
	}
	for (now = base + 1; now <= base + DIM(t) + g; now++)
		run(&w, now, NO_LIMIT);
	cr_assert_eq(nfires, DIM(t), "every timer fired");
	for (i = 0; i < DIM(t); i++) {
		uint64_t e = base + 1 + i, d = grid_due(base, g, e);
		size_t at = fired_once(i);

		cr_expect_eq(fires[at].now, d, "timer %u (E %" PRIu64 ") fires at D %" PRIu64, i, e,
			     d);
		cr_expect_geq(fires[at].now, e, "timer %u not early", i);
		cr_expect_lt(fires[at].now - e, g, "timer %u less than G late", i);
	}
}

/* Expiries on both sides of every level boundary, and beyond the top level. */
Test(timer_precision, level_boundaries)
{
	static const uint64_t gs[] = {1, 1024};
	static struct droce_timer t[64];
	struct droce_timer_wheel w;
	unsigned int gi, k, n;

	for (gi = 0; gi < DIM(gs); gi++) {
		const uint64_t base = UINT64_C(0x123456789), g = gs[gi];
		uint64_t deltas[DIM(t)], now = base;

		wheel_init(&w, base, g);
		n = 0;
		for (k = 1; k <= DROCE_TIMER_LEVELS + 2; k++) {
			uint64_t edge = UINT64_C(1) << (k * DROCE_TIMER_SLOT_BITS);

			deltas[n++] = (edge - 1) * g;
			deltas[n++] = edge * g;
			deltas[n++] = edge * g + 1;
			deltas[n++] = (edge + 1) * g - 1;
		}
		deltas[n++] = 1;
		deltas[n++] = g;
		for (k = 0; k < n; k++) {
			droce_timer_init(&t[k], k);
			arm(&w, &t[k], base + deltas[k]);
		}
		run_by_next(&w, &now, 100000);
		cr_assert_eq(nfires, n, "G %" PRIu64 ": all %u fired", g, n);
		for (k = 0; k < n; k++) {
			uint64_t e = base + deltas[k];
			size_t at = fired_once(k);

			cr_expect_eq(fires[at].now, grid_due(base, g, e),
				     "G %" PRIu64 ", delta %" PRIu64 ": fired at %" PRIu64
				     ", due at %" PRIu64,
				     g, deltas[k], fires[at].now, grid_due(base, g, e));
		}
		for (k = 1; k < nfires; k++)
			cr_expect_geq(fires[k].now, fires[k - 1].now,
				      "G %" PRIu64 ": fired in order", g);
		cr_expect_gt(w.cascaded, 0, "timers moved down levels");
	}
}

/*
 * Thousands of random expiries over all levels and beyond (up to 2^40 slots), for several
 * granularities, driven by next(): every timer fires exactly at D, so never early and less
 * than one slot late, and in order.
 */
Test(timer_precision, random_expiries_all_levels)
{
	static struct droce_timer t[5000];
	static uint64_t e[DIM(t)];
	static const unsigned int shifts[] = {0, 3, 10, 20};
	struct droce_timer_wheel w;
	unsigned int s, i;

	for (s = 0; s < DIM(shifts); s++) {
		const uint64_t g = UINT64_C(1) << shifts[s], base = rnd();
		uint64_t now = base;
		unsigned int runs;

		wheel_init(&w, base, g);
		for (i = 0; i < DIM(t); i++) {
			droce_timer_init(&t[i], i);
			e[i] = base + rnd_delta(40 + shifts[s]);
			arm(&w, &t[i], e[i]);
		}
		runs = run_by_next(&w, &now, 10 * DIM(t) * DROCE_TIMER_LEVELS);
		cr_assert_eq(nfires, DIM(t), "G %" PRIu64 ": every timer fired", g);
		cr_expect_leq(runs, nfires + w.cascaded,
			      "G %" PRIu64 ": %u runs, each fires or moves a timer down", g, runs);
		for (i = 0; i < nfires; i++) {
			uint32_t id = fires[i].id;
			uint64_t d = grid_due(base, g, e[id]);

			cr_expect_eq(fires[i].now, d,
				     "G %" PRIu64 ": timer %" PRIu32 " fired at %" PRIu64
				     ", due at %" PRIu64,
				     g, id, fires[i].now, d);
			cr_expect_geq(fires[i].now - base, e[id] - base,
				      "timer %" PRIu32 " not early", id);
			cr_expect_lt(fires[i].now - e[id], g, "timer %" PRIu32 " less than G late",
				     id);
			if (i > 0)
				cr_expect_geq(fires[i].now - base, fires[i - 1].now - base,
					      "fired in order");
		}
		cr_expect_eq(droce_timer_wheel_count(&w), 0, "nothing left");
	}
}

/* Runs at random steps: each timer fires in the first run whose now is at or past D. */
Test(timer_precision, random_steps_fire_in_first_run_past_due)
{
	static struct droce_timer t[4000];
	static uint64_t e[DIM(t)], fired_now[DIM(t)], prev_of[DIM(t)];
	struct droce_timer_wheel w;
	const uint64_t g = 16, base = UINT64_C(0xfedcba9876543210);
	uint64_t now = base, prev;
	size_t seen = 0, i;

	wheel_init(&w, base, g);
	for (i = 0; i < DIM(t); i++) {
		droce_timer_init(&t[i], (uint32_t)i);
		e[i] = base + rnd_delta(24);
		arm(&w, &t[i], e[i]);
	}
	while (droce_timer_wheel_count(&w) > 0) {
		prev = now;
		now += 1 + rnd_below(rnd_below(4) == 0 ? 50000 : 300);
		run(&w, now, NO_LIMIT);
		for (; seen < nfires; seen++) {
			fired_now[fires[seen].id] = fires[seen].now;
			prev_of[fires[seen].id] = prev;
		}
	}
	cr_assert_eq(nfires, DIM(t), "all fired");
	for (i = 0; i < DIM(t); i++) {
		uint64_t d = grid_due(base, g, e[i]);

		(void)fired_once((uint32_t)i);
		cr_expect_geq(fired_now[i] - base, d - base, "timer %zu not before D", i);
		cr_expect_lt(prev_of[i] - base, d - base, "timer %zu: the run before was before D",
			     i);
		cr_expect_leq(d - e[i], g - 1, "timer %zu: D at most G - 1 after E", i);
	}
}

/* The local ACK timeouts (8 us .. 2.4 hours) and RNR delays at 2.6 GHz with 1 us slots. */
Test(timer_precision, transport_timeouts)
{
	static struct droce_timer t[2 * 32];
	static uint64_t e[DIM(t)];
	const uint64_t hz = 2600000000u, base = UINT64_C(1) << 62;
	struct droce_timer_wheel w;
	uint64_t now = base, g;
	unsigned int i;

	wheel_init(&w, base, droce_timer_ns_to_ticks(1000, hz));
	g = droce_timer_wheel_granularity(&w);
	cr_expect_eq(g, 2048, "1 us at 2.6 GHz gives 2048-tick slots");
	for (i = 0; i < 32; i++) {
		droce_timer_init(&t[i], i);
		e[i] = base + droce_timer_ns_to_ticks(droce_ack_timeout_ns((uint8_t)i), hz);
		if (i > 0)
			arm(&w, &t[i], e[i]);
		droce_timer_init(&t[32 + i], 32 + i);
		e[32 + i] =
			base + droce_timer_ns_to_ticks(
				       1000 * (uint64_t)droce_rnr_timer_to_usec((uint8_t)i), hz);
		arm(&w, &t[32 + i], e[32 + i]);
	}
	run_by_next(&w, &now, 10000);
	cr_assert_eq(nfires, DIM(t) - 1, "every timer fired");
	for (i = 1; i < DIM(t); i++) {
		size_t at = fired_once(i);

		cr_expect_eq(fires[at].now, grid_due(base, g, e[i]), "timer %u fired at its D", i);
	}
}

/* ------------------------------------------------------------ order */

static void check_order(uint64_t base, uint64_t g, const uint64_t *e)
{
	size_t i;

	for (i = 1; i < nfires; i++) {
		uint64_t d0 = grid_due(base, g, e[fires[i - 1].id]) - base;
		uint64_t d1 = grid_due(base, g, e[fires[i].id]) - base;

		cr_expect_leq(d0, d1,
			      "fire %zu (D %" PRIu64 ") not before fire %zu (D %" PRIu64 ")", i - 1,
			      d0, i, d1);
	}
}

/* Armed in random order, run once far ahead: they fire slot by slot. */
Test(timer_order, one_run_fires_in_slot_order)
{
	static struct droce_timer t[3000];
	static uint64_t e[DIM(t)];
	struct droce_timer_wheel w;
	const uint64_t base = 77, g = 4;
	unsigned int i;

	wheel_init(&w, base, g);
	for (i = 0; i < DIM(t); i++) {
		droce_timer_init(&t[i], i);
		e[i] = base + rnd_delta(30);
		arm(&w, &t[i], e[i]);
	}
	cr_expect_eq(run(&w, base + (UINT64_C(1) << 31), NO_LIMIT), (int)DIM(t), "all fire");
	check_order(base, g, e);
}

/* The same with at most 7 per run: truncation defers, it never reorders. */
Test(timer_order, bounded_runs_keep_slot_order)
{
	static struct droce_timer t[3000];
	static uint64_t e[DIM(t)];
	struct droce_timer_wheel w;
	const uint64_t base = 77, g = 4, end = base + (UINT64_C(1) << 31);
	unsigned int i, runs = 0;
	int n;

	wheel_init(&w, base, g);
	for (i = 0; i < DIM(t); i++) {
		droce_timer_init(&t[i], i);
		e[i] = base + rnd_delta(30);
		arm(&w, &t[i], e[i]);
	}
	do {
		n = run(&w, end, 7);
		cr_assert_leq(n, 7, "at most max per run");
		runs++;
	} while (n > 0);
	cr_expect_eq(nfires, DIM(t), "all fired");
	cr_expect_eq(runs, (DIM(t) + 6) / 7 + 1, "ceil(n / 7) full runs and an empty one");
	check_order(base, g, e);
}

/* ------------------------------------------------------------ max */

Test(timer_max, bounds_each_run)
{
	static struct droce_timer t[100];
	struct droce_timer_wheel w;
	unsigned int i;

	wheel_init(&w, 0, 1);
	for (i = 0; i < DIM(t); i++) {
		droce_timer_init(&t[i], i);
		arm(&w, &t[i], 1 + i % 5);
	}
	cr_expect_eq(run(&w, 1000, 0), 0, "max 0 fires nothing");
	cr_expect_eq(droce_timer_wheel_count(&w), DIM(t), "all still armed");
	cr_expect_eq(droce_timer_wheel_next(&w), 0, "next says due");
	for (i = 0; i < 10; i++) {
		cr_expect_eq(run(&w, 1000, 10), 10, "run %u fires 10", i);
		cr_expect_eq(droce_timer_wheel_count(&w), DIM(t) - 10 * (i + 1),
			     "count after run %u", i);
		if (i < 9)
			cr_expect_eq(droce_timer_wheel_next(&w), 0, "next after run %u: more due",
				     i);
	}
	cr_expect_eq(run(&w, 1000, 10), 0, "nothing left");
	cr_expect_eq(droce_timer_wheel_next(&w), UINT64_MAX, "empty");
	for (i = 0; i < DIM(t); i++)
		(void)fired_once(i);
}

/* A bounded run leaves due timers that the next run takes first, before later slots. */
Test(timer_max, leftovers_first)
{
	static struct droce_timer t[20];
	struct droce_timer_wheel w;
	unsigned int i;

	wheel_init(&w, 0, 1);
	for (i = 0; i < DIM(t); i++) {
		droce_timer_init(&t[i], i);
		arm(&w, &t[i], i < 10 ? 5 : 50);
	}
	cr_expect_eq(run(&w, 5, 4), 4, "4 of the 10 due at 5");
	cr_expect_eq(run(&w, 50, NO_LIMIT), 16, "the rest");
	for (i = 0; i < 10; i++)
		cr_expect_lt(fires[i].id, 10, "fire %u is one of the first ten", i);
	for (i = 10; i < 20; i++)
		cr_expect_geq(fires[i].id, 10, "fire %u is one of the later ten", i);
}

/* ------------------------------------------------------------ next */

Test(timer_next, exact_in_level_zero)
{
	struct droce_timer_wheel w;
	struct droce_timer t;

	wheel_init(&w, 1000, 16);
	droce_timer_init(&t, 0);
	arm(&w, &t, 1000 + 17);
	cr_expect_eq(droce_timer_wheel_next(&w), 32, "E 17 ticks ahead rounds to 32");
	run(&w, 1010, NO_LIMIT);
	cr_expect_eq(droce_timer_wheel_next(&w), 22, "counted from the wheel's now");
	run(&w, 1031, NO_LIMIT);
	cr_expect_eq(nfires, 0, "not fired one tick before D");
	cr_expect_eq(droce_timer_wheel_next(&w), 1, "one tick to go");
	run(&w, 1032, NO_LIMIT);
	cr_expect_eq(nfires, 1, "fired at D");
	cr_expect_eq(droce_timer_wheel_next(&w), UINT64_MAX, "empty");
}

/* Higher levels: early (the tick it moves down), never late, exact after the moves. */
Test(timer_next, conservative_in_higher_levels)
{
	struct droce_timer_wheel w;
	struct droce_timer t;
	const uint64_t e = 3 * (UINT64_C(1) << 24) + 12345;
	uint64_t now = 0, nx;
	unsigned int steps = 0;

	wheel_init(&w, 0, 1);
	droce_timer_init(&t, 0);
	arm(&w, &t, e);
	while ((nx = droce_timer_wheel_next(&w)) != e - now) {
		cr_assert_gt(nx, 0, "next is not 0 before the timer is due");
		cr_assert_lt(nx, e - now, "next is early, never late");
		now += nx;
		run(&w, now, NO_LIMIT);
		cr_assert_eq(nfires, 0, "moving down fires nothing");
		cr_assert_lt(++steps, DROCE_TIMER_LEVELS, "exact after fewer moves than levels");
	}
	cr_expect_gt(steps, 0, "started early");
	run(&w, e, NO_LIMIT);
	cr_expect_eq(nfires, 1, "fires at the exact answer");
}

Test(timer_next, ignores_cancelled_and_sees_pending)
{
	struct droce_timer_wheel w;
	struct droce_timer a, b;

	wheel_init(&w, 0, 1);
	droce_timer_init(&a, 0);
	droce_timer_init(&b, 1);
	arm(&w, &a, 10);
	arm(&w, &b, 40);
	cr_expect_eq(droce_timer_wheel_next(&w), 10, "the earlier timer");
	cr_expect_eq(droce_timer_cancel(&w, &a), 0, "cancel it");
	cr_expect_eq(droce_timer_wheel_next(&w), 40, "the later one after the cancel");
	run(&w, 20, NO_LIMIT);
	arm(&w, &a, 20);
	cr_expect_eq(droce_timer_wheel_next(&w), 0, "0 with a timer armed at now");
	run(&w, 20, NO_LIMIT);
	cr_expect_eq(droce_timer_wheel_next(&w), 20, "20 ticks to the other");
	cr_expect_eq(droce_timer_cancel(&w, &b), 0, "cancel it");
	cr_expect_eq(droce_timer_wheel_next(&w), UINT64_MAX, "empty");
}

/* ------------------------------------------------------------ time */

/* The tick counter wraps through 0 in the middle: nothing changes. */
Test(timer_time, wrap_through_zero)
{
	static struct droce_timer t[2000];
	static uint64_t e[DIM(t)];
	struct droce_timer_wheel w;
	const uint64_t base = UINT64_MAX - 100000, g = 4;
	uint64_t now = base;
	unsigned int i;

	wheel_init(&w, base, g);
	for (i = 0; i < DIM(t); i++) {
		droce_timer_init(&t[i], i);
		e[i] = base + 1 + rnd_below(200000);
		arm(&w, &t[i], e[i]);
	}
	run_by_next(&w, &now, 10 * DIM(t));
	cr_expect_lt(now, base, "time wrapped through 0");
	cr_assert_eq(nfires, DIM(t), "all fired");
	for (i = 0; i < nfires; i++)
		cr_expect_eq(fires[i].now, grid_due(base, g, e[fires[i].id]),
			     "timer %" PRIu32 " fired at D across the wrap", fires[i].id);
}

Test(timer_time, now_never_goes_back)
{
	struct droce_timer_wheel w;
	struct droce_timer t;

	wheel_init(&w, 1000, 1);
	droce_timer_init(&t, 0);
	run(&w, 1400, NO_LIMIT);
	arm(&w, &t, 1430);
	cr_expect_eq(run(&w, 900, NO_LIMIT), 0, "an older now fires nothing");
	cr_expect_eq(droce_timer_wheel_now(&w), 1400, "and leaves now where it was");
	cr_expect_eq(droce_timer_wheel_next(&w), 30, "next from the kept now");
	cr_expect_eq(run(&w, 1430, NO_LIMIT), 1, "fires at its expiry");
}

/* Hours at 1-tick slots: far beyond the top level (2^36), placed again until due. */
Test(timer_time, far_beyond_the_top_level)
{
	static const uint64_t d[] = {UINT64_C(1) << 36, (UINT64_C(1) << 36) + 1, UINT64_C(1) << 40,
				     (UINT64_C(1) << 44) + 3};
	struct droce_timer t[DIM(d)];
	struct droce_timer_wheel w;
	const uint64_t base = UINT64_MAX - (UINT64_C(1) << 42);
	uint64_t now = base;
	unsigned int i, runs;

	wheel_init(&w, base, 1);
	for (i = 0; i < DIM(d); i++) {
		droce_timer_init(&t[i], i);
		arm(&w, &t[i], base + d[i]);
	}
	runs = run_by_next(&w, &now, 10000);
	cr_assert_eq(nfires, DIM(d), "all fired");
	for (i = 0; i < DIM(d); i++) {
		size_t at = fired_once(i);

		cr_expect_eq(fires[at].now, base + d[i], "timer %u fired exactly", i);
	}
	cr_expect_lt(runs, 2000, "%u runs for 2^44 ticks", runs);
}

/*
 * A timer beyond the top level sits in the top level's farthest slot, which has the slot
 * index of the current block when now is not on a block boundary; a level-0 timer in the
 * same index must still wait for its own slot.
 */
Test(timer_time, far_timer_beside_level_zero)
{
	struct droce_timer_wheel w;
	struct droce_timer far, near;
	uint64_t now = 5;

	wheel_init(&w, 0, 1);
	droce_timer_init(&far, 0);
	droce_timer_init(&near, 1);
	run(&w, now, NO_LIMIT);
	arm(&w, &far, UINT64_C(1) << 37);
	arm(&w, &near, 64);
	cr_expect_eq(droce_timer_wheel_next(&w), 59, "next is the level-0 timer");
	run(&w, 63, NO_LIMIT);
	cr_expect_eq(nfires, 0, "nothing before 64");
	run(&w, 64, NO_LIMIT);
	cr_assert_eq(nfires, 1, "the level-0 timer at 64");
	cr_expect_eq(fires[0].id, 1, "it is the near one");
	now = 64;
	run_by_next(&w, &now, 1000);
	cr_assert_eq(nfires, 2, "the far one fired");
	cr_expect_eq(fires[1].now, UINT64_C(1) << 37, "at its expiry");
}

/* ------------------------------------------------------------ callbacks */

struct cb_ctx {
	struct droce_timer *t;
	unsigned int n;
	uint64_t period;
	int ret[8];
	unsigned int fired;
	uint64_t when[16];
};

static void cb_periodic(struct droce_timer_wheel *w, struct droce_timer *t, void *arg)
{
	struct cb_ctx *c = arg;

	c->when[c->fired++] = droce_timer_wheel_now(w);
	if (c->fired < 10)
		cr_assert_eq(droce_timer_arm(w, t, droce_timer_wheel_now(w) + c->period), 0,
			     "re-arm from the callback");
}

Test(timer_callback, rearm_self_periodic)
{
	struct droce_timer_wheel w;
	struct droce_timer t;
	struct cb_ctx c = {.period = 1000};
	uint64_t now = 0, nx;
	unsigned int i;

	cr_assert_eq(droce_timer_wheel_init(&w, 0, 1), 0, "init");
	droce_timer_init(&t, 0);
	arm(&w, &t, 500);
	while ((nx = droce_timer_wheel_next(&w)) != UINT64_MAX) {
		now += nx;
		cr_assert_geq(droce_timer_wheel_run(&w, now, cb_periodic, &c, NO_LIMIT), 0, "run");
	}
	cr_assert_eq(c.fired, 10, "fired ten times");
	for (i = 0; i < 10; i++)
		cr_expect_eq(c.when[i], 500 + 1000 * (uint64_t)i, "period %u on time", i);
}

static void cb_cancel_peer(struct droce_timer_wheel *w, struct droce_timer *t, void *arg)
{
	struct cb_ctx *c = arg;

	c->ret[0] = droce_timer_cancel(w, &c->t[1 - t->id]);
	c->ret[1] = droce_timer_cancel(w, t);
	c->fired++;
}

Test(timer_callback, cancel_peer_due_in_same_run)
{
	struct droce_timer_wheel w;
	struct droce_timer t[2];
	struct cb_ctx c = {.t = t};

	cr_assert_eq(droce_timer_wheel_init(&w, 0, 1), 0, "init");
	droce_timer_init(&t[0], 0);
	droce_timer_init(&t[1], 1);
	arm(&w, &t[0], 10);
	arm(&w, &t[1], 10);
	cr_expect_eq(droce_timer_wheel_run(&w, 10, cb_cancel_peer, &c, NO_LIMIT), 1,
		     "one fires, the other is cancelled by it");
	cr_expect_eq(c.fired, 1, "one callback");
	cr_expect_eq(c.ret[0], 0, "the peer was armed and due");
	cr_expect_eq(c.ret[1], -ENOENT, "a firing timer is not armed");
	cr_expect_eq(droce_timer_wheel_count(&w), 0, "nothing left");
}

static void cb_arm_past(struct droce_timer_wheel *w, struct droce_timer *t, void *arg)
{
	struct cb_ctx *c = arg;

	(void)t;
	c->when[c->fired++] = droce_timer_wheel_now(w);
	c->ret[0] = droce_timer_arm(w, c->t, droce_timer_wheel_now(w) - 1);
}

/* A timer armed in the past from a callback (itself here) fires in the next run, not this one. */
Test(timer_callback, arm_past_waits_for_next_run)
{
	struct droce_timer_wheel w;
	struct droce_timer t;
	struct cb_ctx c = {.t = &t};
	unsigned int i;

	cr_assert_eq(droce_timer_wheel_init(&w, 0, 1), 0, "init");
	droce_timer_init(&t, 0);
	arm(&w, &t, 10);
	for (i = 0; i < 3; i++) {
		cr_expect_eq(droce_timer_wheel_run(&w, 10, cb_arm_past, &c, NO_LIMIT), 1,
			     "run %u fires once", i);
		cr_expect_eq(c.ret[0], 0, "re-armed in the past");
		cr_expect_eq(droce_timer_wheel_next(&w), 0, "due for the next run");
	}
}

static void cb_arm_same_slot(struct droce_timer_wheel *w, struct droce_timer *t, void *arg)
{
	struct cb_ctx *c = arg;

	c->when[c->fired++] = droce_timer_wheel_now(w);
	if (t->id == 0)
		c->ret[0] = droce_timer_arm(w, &c->t[1], droce_timer_wheel_now(w) + c->period);
}

/*
 * The callback arms one rotation of level 0 ahead (64 slots): the same slot index as the one
 * being fired. It must wait for its own time.
 */
Test(timer_callback, arm_one_rotation_ahead)
{
	struct droce_timer_wheel w;
	struct droce_timer t[2];
	struct cb_ctx c = {.t = t, .period = DROCE_TIMER_SLOTS * 8};
	uint64_t now = 0, nx;

	cr_assert_eq(droce_timer_wheel_init(&w, 0, 8), 0, "init");
	droce_timer_init(&t[0], 0);
	droce_timer_init(&t[1], 1);
	arm(&w, &t[0], 80);
	while ((nx = droce_timer_wheel_next(&w)) != UINT64_MAX) {
		now += nx;
		cr_assert_geq(droce_timer_wheel_run(&w, now, cb_arm_same_slot, &c, NO_LIMIT), 0,
			      "run");
	}
	cr_assert_eq(c.fired, 2, "both fired");
	cr_expect_eq(c.ret[0], 0, "armed from the callback");
	cr_expect_eq(c.when[0], 80, "first at 80");
	cr_expect_eq(c.when[1], 80 + c.period, "second one rotation later");
}

/* ------------------------------------------------------------ stress */

/*
 * 100k random operations on 4096 timers (arm, re-arm, cancel, cancel idle, run at random steps
 * with random max; callbacks that re-arm and cancel) against a reference model: the armed
 * timers as an array sorted by (D, id). Checked after every step: the count, the timer
 * touched, and next() against the model's earliest D; after every run: each fire was armed,
 * due and not early; a run not stopped by max left nothing due; fires in slot order.
 */
#define ST_TIMERS 4096
#define ST_OPS    100000

struct st_entry {
	uint64_t d; /* due tick relative to base; the arm-time now for a past arm */
	uint32_t id;
	bool past; /* armed for a tick already reached */
};

static struct {
	struct droce_timer_wheel w;
	struct droce_timer t[ST_TIMERS];
	struct st_entry model[ST_TIMERS];
	struct st_entry of[ST_TIMERS]; /* the model entry of each armed timer */
	bool armed[ST_TIMERS];
	unsigned int n;
	uint64_t base, g;
	uint64_t last_d; /* D of the last fire from the wheel in this run */
	bool seen_wheel; /* a fire from the wheel in this run: past arms no longer expected */
	bool check_order;
	unsigned int fired_in_run;
} st;

static int st_cmp(const struct st_entry *a, const struct st_entry *b)
{
	if (a->d != b->d)
		return a->d < b->d ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* First position whose entry is not below @e. */
static unsigned int st_find(const struct st_entry *e)
{
	unsigned int lo = 0, hi = st.n;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (st_cmp(&st.model[mid], e) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void st_remove(uint32_t id)
{
	unsigned int at = st_find(&st.of[id]);

	cr_assert_lt(at, st.n, "model holds timer %" PRIu32, id);
	cr_assert_eq(st.model[at].id, id, "model entry is timer %" PRIu32, id);
	memmove(&st.model[at], &st.model[at + 1], (st.n - at - 1) * sizeof(st.model[0]));
	st.n--;
	st.armed[id] = false;
}

static void st_arm(uint32_t id, uint64_t e)
{
	uint64_t now = droce_timer_wheel_now(&st.w), ahead = e - now;
	struct st_entry ent = {.id = id};
	unsigned int at;

	if (st.armed[id])
		st_remove(id);
	cr_assert_eq(droce_timer_arm(&st.w, &st.t[id], e), 0, "arm %" PRIu32, id);
	ent.past = ahead == 0 || ahead > (uint64_t)INT64_MAX;
	ent.d = ent.past ? now - st.base : grid_due(st.base, st.g, e) - st.base;
	if (!ent.past)
		cr_assert_lt(ent.d - (e - st.base), st.g, "D less than G after E");
	at = st_find(&ent);
	memmove(&st.model[at + 1], &st.model[at], (st.n - at) * sizeof(st.model[0]));
	st.model[at] = ent;
	st.of[id] = ent;
	st.armed[id] = true;
	st.n++;
}

static void st_cancel(uint32_t id)
{
	int want = st.armed[id] ? 0 : -ENOENT;

	cr_assert_eq(droce_timer_cancel(&st.w, &st.t[id]), want, "cancel %" PRIu32, id);
	if (want == 0)
		st_remove(id);
}

static void st_check(uint32_t touched)
{
	uint64_t nx = droce_timer_wheel_next(&st.w);
	uint64_t rel_now = droce_timer_wheel_now(&st.w) - st.base;

	cr_assert_eq(droce_timer_wheel_count(&st.w), st.n, "count matches the model");
	cr_assert_eq(droce_timer_is_armed(&st.t[touched]), st.armed[touched],
		     "timer %" PRIu32 " armed state matches", touched);
	if (st.n == 0) {
		cr_assert_eq(nx, UINT64_MAX, "next says empty with the model empty");
		return;
	}
	cr_assert_neq(nx, UINT64_MAX, "next says armed");
	if (st.model[0].d <= rel_now)
		cr_assert_eq(nx, 0, "next is 0 with a timer due");
	else
		cr_assert_leq(nx, st.model[0].d - rel_now, "next is never late");
}

static void st_fire(struct droce_timer_wheel *w, struct droce_timer *t, void *arg)
{
	uint64_t rel_now = droce_timer_wheel_now(w) - st.base;
	uint32_t id = t->id;
	struct st_entry ent;

	(void)arg;
	cr_assert(st.armed[id], "fired timer %" PRIu32 " was armed", id);
	ent = st.of[id];
	cr_assert_leq(ent.d, rel_now, "timer %" PRIu32 " not early", id);
	if (st.check_order) {
		if (ent.past) {
			cr_assert_not(st.seen_wheel, "past arms fire before the wheel's timers");
		} else {
			cr_assert_geq(ent.d, st.last_d, "slot order");
			st.last_d = ent.d;
			st.seen_wheel = true;
		}
	}
	st_remove(id);
	st.fired_in_run++;
	/* sometimes act from inside the callback, always for the future */
	switch (rnd_below(8)) {
	case 0:
		st_arm(id, droce_timer_wheel_now(w) + rnd_delta(20));
		break;
	case 1:
		st_cancel((uint32_t)rnd_below(ST_TIMERS));
		break;
	case 2:
		st_arm((uint32_t)rnd_below(ST_TIMERS), droce_timer_wheel_now(w) + rnd_delta(30));
		break;
	default:
		break;
	}
}

static void st_run(uint64_t now, unsigned int max)
{
	uint64_t rel_now;
	bool complete;
	int n;

	st.last_d = 0;
	st.seen_wheel = false;
	st.fired_in_run = 0;
	n = droce_timer_wheel_run(&st.w, now, st_fire, NULL, max);
	cr_assert_geq(n, 0, "run");
	cr_assert_eq((unsigned int)n, st.fired_in_run, "run counts its fires");
	cr_assert_leq((unsigned int)n, max, "at most max");
	complete = (unsigned int)n < max;
	rel_now = droce_timer_wheel_now(&st.w) - st.base;
	if (complete) {
		/* arms from callbacks are all in the future: nothing may be left due */
		cr_assert(st.n == 0 || st.model[0].d > rel_now,
			  "a complete run leaves nothing due (earliest D %" PRIu64 ", now %" PRIu64
			  ")",
			  st.n ? st.model[0].d : 0, rel_now);
	}
	/* order holds for runs that start from a complete one */
	st.check_order = complete;
}

Test(timer_stress, random_against_model)
{
	uint64_t now, step;
	unsigned int op;
	uint32_t id;

	memset(&st, 0, sizeof(st));
	st.base = UINT64_MAX - (UINT64_C(1) << 26); /* the ticks wrap during the test */
	st.g = 16;
	st.check_order = true;
	cr_assert_eq(droce_timer_wheel_init(&st.w, st.base, st.g), 0, "init");
	for (id = 0; id < ST_TIMERS; id++)
		droce_timer_init(&st.t[id], id);
	now = st.base;
	for (op = 0; op < ST_OPS; op++) {
		unsigned int kind = (unsigned int)rnd_below(100);

		id = (uint32_t)rnd_below(ST_TIMERS);
		if (kind < 35) {
			st_arm(id, now + rnd_delta(rnd_below(4) == 0 ? 40 : 16));
		} else if (kind < 40) {
			st_arm(id, now - rnd_below(1000)); /* the past, or now */
		} else if (kind < 55) {
			st_cancel(id);
		} else {
			unsigned int max =
				rnd_below(4) == 0 ? 1 + (unsigned int)rnd_below(8) : NO_LIMIT;

			switch (rnd_below(4)) {
			case 0:
				step = droce_timer_wheel_next(&st.w);
				step = step == UINT64_MAX ? 1000 : step;
				break;
			case 1:
				step = rnd_below(4 * st.g);
				break;
			case 2:
				step = rnd_below(1u << 16);
				break;
			default:
				step = rnd_below(UINT64_C(1) << 28);
				break;
			}
			now += step;
			st_run(now, max);
		}
		st_check(id);
	}
	cr_expect_gt(st.w.fired, ST_OPS / 10, "a good share fired (%" PRIu64 ")", st.w.fired);
	cr_expect_gt(st.w.cascaded, 0, "timers moved down levels");
	cr_expect_lt(now, st.base, "time wrapped through 0");
	for (id = 0; id < ST_TIMERS; id++)
		cr_expect_eq(droce_timer_is_armed(&st.t[id]), st.armed[id],
			     "timer %" PRIu32 " state at the end", id);
}
