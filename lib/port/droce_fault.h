/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Fault injection on a burst path: drop, duplicate, reorder, corrupt and delay
 * packets, chosen by rate (a seeded, deterministic PRNG) or by exact packet
 * index, optionally only for RoCEv2 packets of a given opcode or destination QP.
 *
 * An injector sits between two burst calls (before rte_eth_tx_burst(), after
 * rte_eth_rx_burst(), or between two loopback queues):
 *
 * @code
 *   nb = droce_fault_process_burst(f, pkts, n, out, RTE_DIM(out), now);
 *   ... hand out[0 .. nb - 1] on ...
 *   nb = droce_fault_flush_burst(f, now, out, RTE_DIM(out));  (every loop, traffic or not)
 *   ... at shutdown: while ((nb = droce_fault_drain_burst(f, out, RTE_DIM(out))) > 0) ...
 * @endcode
 *
 * Time is whatever the caller counts in (TSC cycles, loop iterations, test
 * steps): the injector never reads a clock, it compares the @p now values it is
 * given. An injector is owned by one lcore: no call is thread-safe against
 * another on the same injector. doc/fault-injection.md describes the model.
 *
 * Errors (0 / -errno; bursts return a count):
 * - -EINVAL: a NULL argument where one is required, a configuration or rule
 *   field out of range (each function lists which);
 * - -ENOMEM: the injector could not be allocated;
 * - -ENOSPC: every rule slot is in use;
 * - -ENOENT: no rule has that id.
 */
#ifndef DROCE_FAULT_H
#define DROCE_FAULT_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a rule does to the packets it selects. */
enum droce_fault_kind {
	DROCE_FAULT_DROP = 0, /**< free the packet */
	DROCE_FAULT_DUP,      /**< hand out a deep copy right after the packet */
	DROCE_FAULT_REORDER,  /**< hold the packet until @c after later packets have left */
	DROCE_FAULT_CORRUPT,  /**< flip one bit */
	DROCE_FAULT_DELAY,    /**< hold the packet until @p now has advanced by @c ticks */
	DROCE_FAULT_KIND_COUNT,
};

/** Counter and command names of the kinds: "drop", "duplicate", "reorder", "corrupt", "delay". */
extern const char *const droce_fault_kind_name[DROCE_FAULT_KIND_COUNT];

/** Rule slots per injector. */
#define DROCE_FAULT_RULES_MAX 16
/** Index ranges per rule. */
#define DROCE_FAULT_RANGES_MAX 32
/** Largest hold queue (reordered and delayed packets) an injector may have. */
#define DROCE_FAULT_HOLD_MAX 4096
/** Hold queue size when the configuration gives 0. */
#define DROCE_FAULT_HOLD_DEFAULT 256

/** Filter flags of a rule (droce_fault_rule.match). Any flag limits the rule to RoCEv2. */
#define DROCE_FAULT_MATCH_ROCE   0x1 /**< only packets that parse as RoCEv2 */
#define DROCE_FAULT_MATCH_OPCODE 0x2 /**< only BTH opcode droce_fault_rule.opcode */
#define DROCE_FAULT_MATCH_QPN    0x4 /**< only BTH destination QP droce_fault_rule.dqpn */

/** Where a corruption may land (droce_fault_rule.corrupt.region). */
enum droce_fault_region {
	/**
	 * The RoCE payload, pad and ICRC: [payload_off, icrc_off + 4). Headers stay
	 * valid, so a receiver parses the packet and sees DROCE_PARSE_BAD_ICRC. The
	 * rule matches RoCEv2 packets only (as if DROCE_FAULT_MATCH_ROCE were set).
	 */
	DROCE_FAULT_REGION_ICRC = 0,
	/** Any byte of the frame, headers included: [0, pkt_len). */
	DROCE_FAULT_REGION_ANY,
};

/** droce_fault_rule.corrupt.offset: a fresh PRNG offset in the region for every packet. */
#define DROCE_FAULT_OFFSET_RANDOM UINT32_MAX
/** droce_fault_rule.corrupt.bit: a fresh PRNG bit (0..7) for every packet. */
#define DROCE_FAULT_BIT_RANDOM 0xff

/** Packet indices @c first to @c last, both included, counted from 0. */
struct droce_fault_range {
	uint64_t first;
	uint64_t last;
};

/**
 * One rule. Every rule sees every packet offered to droce_fault_process_burst()
 * (not the duplicates it makes, not held packets when they leave), keeps its own
 * index of the packets its filter matches (0 for the first match after the rule
 * was added) and decides independently of the other rules.
 *
 * Selection: by index when @c nb_ranges > 0 (the packets whose index lies in a
 * range), by @c rate otherwise (each matching packet with probability @c rate,
 * drawn from the rule's own xorshift64* generator: the same seed and the same
 * packets give the same decisions).
 */
struct droce_fault_rule {
	enum droce_fault_kind kind;
	uint32_t match; /**< DROCE_FAULT_MATCH_* flags; 0 = every packet */
	uint8_t opcode; /**< with DROCE_FAULT_MATCH_OPCODE */
	uint32_t dqpn;  /**< with DROCE_FAULT_MATCH_QPN (24 bits) */
	/** Ranges in ascending order, not overlapping; copied by droce_fault_rule_add(). */
	const struct droce_fault_range *ranges;
	uint16_t nb_ranges; /**< 0..DROCE_FAULT_RANGES_MAX; 0 selects by @c rate */
	double rate;        /**< probability per matching packet, 0..1 */
	uint64_t seed;      /**< 0: derived from the injector's seed and the rule id */
	struct {
		uint32_t after;     /**< later packets that leave first: 1 swaps neighbours */
		uint64_t max_ticks; /**< also leave once @p now advanced this much; 0 = never */
	} reorder;
	struct {
		uint64_t ticks; /**< how far @p now must advance before the packet leaves (>= 1) */
	} delay;
	struct {
		enum droce_fault_region region;
		uint32_t offset; /**< byte offset from the region's start, or
				    DROCE_FAULT_OFFSET_RANDOM */
		uint8_t bit;     /**< 0..7 (mask 1 << bit), or DROCE_FAULT_BIT_RANDOM */
	} corrupt;
};

/** Injector configuration. */
struct droce_fault_conf {
	/** Pool of duplicates and copy-on-write copies; NULL: the pool of the packet copied. */
	struct rte_mempool *pool;
	uint32_t hold_cap; /**< hold queue slots, up to DROCE_FAULT_HOLD_MAX; 0 = default */
	uint16_t udp_port; /**< UDP port that means RoCEv2; 0 = 4791 */
	uint64_t seed;     /**< seed the rules' generators derive from */
	int socket_id;     /**< NUMA socket of the injector's memory, or SOCKET_ID_ANY */
};

/** Counters of an injector: plain per-lcore counts, read with droce_fault_stats_get(). */
struct droce_fault_stats {
	uint64_t rx_pkts; /**< packets offered to droce_fault_process_burst() */
	uint64_t
		tx_pkts; /**< packets handed out by every call (duplicates and released included) */
	uint64_t injected[DROCE_FAULT_KIND_COUNT]; /**< packets each kind was applied to */
	uint64_t held;                             /**< packets that entered the hold queue */
	uint64_t released;         /**< held packets handed out (any reason, drain included) */
	uint64_t hold_full;        /**< held packets released early because the queue was full */
	uint64_t reorder_timeout;  /**< reordered packets released by reorder.max_ticks */
	uint64_t dup_nomem;        /**< duplicates not made: the pool was empty */
	uint64_t dup_no_room;      /**< duplicates not made: no room left in the output array */
	uint64_t corrupt_cow;      /**< shared packets copied before being corrupted */
	uint64_t corrupt_nomem;    /**< corruptions not done: no mbuf for the copy */
	uint64_t corrupt_skipped;  /**< corruptions not done: offset beyond the region */
	uint64_t release_deferred; /**< due releases left for a later call: no room in the output */
};

/** Counters of one rule. */
struct droce_fault_rule_stats {
	uint64_t matched;  /**< packets the filter matched: the next packet index */
	uint64_t selected; /**< packets the rule selected */
};

/** Opaque injector. */
struct droce_fault;

/**
 * Create an injector with no rules, in DPDK's heap (rte_zmalloc_socket()): the
 * EAL must be running. The burst calls take a valid injector and do not check it.
 * @return 0 and *@p fp set; -EINVAL (@p conf or @p fp NULL, hold_cap above
 *         DROCE_FAULT_HOLD_MAX); -ENOMEM.
 */
int droce_fault_create(const struct droce_fault_conf *conf, struct droce_fault **fp);

/** Free an injector and every packet it still holds. NULL is a no-op. */
void droce_fault_free(struct droce_fault *f);

/**
 * Add a rule; it takes effect from the next packet offered.
 * @return the rule id (0..DROCE_FAULT_RULES_MAX - 1); -EINVAL (unknown kind,
 *         unknown match flag, dqpn beyond 24 bits, rate not in [0, 1], more than
 *         DROCE_FAULT_RANGES_MAX ranges or ranges NULL, out of order or
 *         overlapping, reorder.after 0, delay.ticks 0, unknown region, bit above
 *         7); -ENOSPC (every slot in use).
 */
int droce_fault_rule_add(struct droce_fault *f, const struct droce_fault_rule *r);

/**
 * Remove a rule. Packets it holds stay held and leave as they would have.
 * @return 0; -EINVAL (@p f NULL); -ENOENT (no rule @p id).
 */
int droce_fault_rule_del(struct droce_fault *f, int id);

/** Remove every rule (held packets stay held). */
void droce_fault_rule_clear(struct droce_fault *f);

/**
 * Read the counters of rule @p id.
 * @return 0; -EINVAL (@p f or @p st NULL); -ENOENT (no rule @p id).
 */
int droce_fault_rule_stats_get(const struct droce_fault *f, int id,
			       struct droce_fault_rule_stats *st);

/**
 * Apply the rules to a burst.
 *
 * First, held packets that are due at @p now leave (in the order they were
 * held). Then each of pkts[0 .. min(n, cap) - 1] is, in this order: dropped
 * (and freed) if a drop rule selects it; else duplicated if a duplicate rule
 * selects it (the copy is taken before any corruption and leaves in the
 * packet's place); corrupted if a corrupt rule selects it; held if a delay rule
 * (or else a reorder rule) selects it; handed out otherwise. Reordered packets
 * leave as soon as their count of later packets is reached, within this call
 * or a later one.
 *
 * Every packet consumed ends in @p out, in the hold queue or freed: nothing is
 * lost, whatever @p cap is. Each input packet is guaranteed one output slot;
 * duplicates and releases use the rest, and when none is left a duplicate is
 * skipped (dup_no_room) and a release waits for a later call
 * (release_deferred). cap >= 2 * n + hold_cap never runs short.
 *
 * @param now   the caller's time, in the unit of delay.ticks and reorder.max_ticks
 * @param cap   room in @p out; packets pkts[cap ..] are not touched (the caller keeps them)
 * @return how many mbufs were written to @p out.
 */
uint16_t droce_fault_process_burst(struct droce_fault *f, struct rte_mbuf **pkts, uint16_t n,
				   struct rte_mbuf **out, uint16_t cap, uint64_t now);

/**
 * Hand out held packets that are due at @p now (delays elapsed, reorder
 * max_ticks reached), oldest first, up to @p cap; the rest wait for the next call.
 * @return how many mbufs were written to @p out.
 */
uint16_t droce_fault_flush_burst(struct droce_fault *f, uint64_t now, struct rte_mbuf **out,
				 uint16_t cap);

/**
 * Hand out held packets whether due or not, oldest first, up to @p cap. Call
 * until it returns 0 to empty the hold queue (at shutdown, or to end a test).
 * @return how many mbufs were written to @p out.
 */
uint16_t droce_fault_drain_burst(struct droce_fault *f, struct rte_mbuf **out, uint16_t cap);

/** Packets held now (reordered and delayed). */
uint32_t droce_fault_held_count(const struct droce_fault *f);

/** Copy the injector's counters into @p st. */
void droce_fault_stats_get(const struct droce_fault *f, struct droce_fault_stats *st);

/** Zero the injector's counters (the rules' counters and packet indices are kept). */
void droce_fault_stats_reset(struct droce_fault *f);

/**
 * Parse a list of packet indices such as "3,7,100-105" (decimal, ranges
 * inclusive, ascending, not overlapping; spaces allowed around items) into @p r.
 * @return the number of ranges; -EINVAL (syntax, order, overlap, NULL argument);
 *         -ENOSPC (more than @p max ranges).
 */
int droce_fault_ranges_parse(const char *s, struct droce_fault_range *r, unsigned int max);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_FAULT_H */
