/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * droce's counters, per port and per QP, under the names users know from the
 * hw_counters of mlx5 and of Linux Soft-RoCE (rxe): mlx5's name where mlx5
 * counts the same event, else Soft-RoCE's, else droce's own. doc/counters.md
 * lists every counter, what it counts and its rxe and mlx5 equivalents.
 *
 * The engine lcore that runs a port owns its counters and the counters of its
 * QPs: it increments them without atomics on the data path. A read goes
 * through the engine's control path: the lcore copies the values between two
 * passes of its poll loop, so the set a call returns is one snapshot (a port's
 * sums over its QPs included), and the caller waits about one loop pass. Reads
 * may come from any thread at any time; they are serialised with the other
 * control calls (creating, modifying, destroying objects).
 *
 * A port's counters are the sums of its QPs' counters (QPs destroyed or reset
 * since the engine started included) and the port's own (parse errors by
 * reason, frames for no QP, neighbour requests...). A QP's counters start at
 * zero when the QP is created and again when it is modified to RESET.
 *
 * Errors: the functions return a count or -errno (errors listed with each).
 */
#ifndef DROCE_COUNTERS_H
#define DROCE_COUNTERS_H

#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** droce_counter_desc.scope: the counter is read per QP (droce_qp_counters()). */
#define DROCE_COUNTER_QP 0x1
/** droce_counter_desc.scope: the counter is read per port (droce_port_counters()). */
#define DROCE_COUNTER_PORT 0x2

/** What a counter is. Every per-QP counter is also a per-port one (the sum). */
struct droce_counter_desc {
	const char *name; /**< droce's name, as the read functions report it */
	const char *rxe;  /**< Soft-RoCE's hw_counters name for the same count, or NULL */
	const char *mlx5; /**< mlx5's hw_counters name for the same count, or NULL */
	const char *help; /**< one line: what it counts */
	uint32_t scope;   /**< DROCE_COUNTER_QP and/or DROCE_COUNTER_PORT */
};

/** One value read. */
struct droce_counter {
	uint32_t id;      /**< index of its droce_counter_desc() */
	const char *name; /**< droce_counter_desc(id)->name */
	uint64_t value;
};

/** Counters known, the ids 0 .. droce_counter_count() - 1. */
unsigned int droce_counter_count(void);

/** The description of counter @p id, or NULL when @p id is not below droce_counter_count(). */
const struct droce_counter_desc *droce_counter_desc(unsigned int id);

/**
 * The id of the counter called @p name by droce, by rxe or by mlx5.
 * @return the id; -EINVAL (@p name NULL); -ENOENT (no such counter).
 */
int droce_counter_find(const char *name);

/**
 * The counters of port @p port_num of @p context's device (droce devices have
 * one port, number 1), in id order: the first @p n of them are written to
 * @p c (n may be 0 to ask for the count).
 * @return the number of per-port counters (may exceed @p n); -EINVAL (NULL
 *   @p context, @p c NULL with @p n > 0, no such port); -ENODEV (no engine
 *   runs the device's port in this process: DROCE_DEVICES gave it no vdev or
 *   link, or the engine did not start).
 */
int droce_port_counters(struct ibv_context *context, uint8_t port_num, struct droce_counter *c,
			unsigned int n);

/**
 * The counters of @p qp, in id order, as droce_port_counters() writes them.
 * @return the number of per-QP counters (may exceed @p n); -EINVAL (NULL @p qp,
 *   @p c NULL with @p n > 0); -ENODEV (no engine runs the QP: its device has
 *   none, or its type is not run by the engine).
 */
int droce_qp_counters(struct ibv_qp *qp, struct droce_counter *c, unsigned int n);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_COUNTERS_H */
