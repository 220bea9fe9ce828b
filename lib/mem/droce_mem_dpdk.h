/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Optional DPDK helper of lib/mem: is an address range DPDK memory, and what is its IOVA. The
 * key table (droce_mr.h) never calls it; the verbs layer may, before registering, to insist on
 * memory the engine can reach (hugepages, or --no-huge's anonymous memory, or external memory
 * registered with rte_extmem_register()). Call it after rte_eal_init(), never from a memory
 * event callback (it read-locks the memory configuration).
 */
#ifndef DROCE_MEM_DPDK_H
#define DROCE_MEM_DPDK_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** IOVA reported when DPDK does not know one (RTE_BAD_IOVA). */
#define DROCE_MEM_BAD_IOVA UINT64_MAX

/** What droce_mem_dpdk_range() found. */
struct droce_mem_dpdk_info {
	uint64_t iova;      /**< IOVA of the first byte, or DROCE_MEM_BAD_IOVA */
	uint64_t page_size; /**< smallest page size over the range */
	int socket_id;      /**< NUMA socket of the first byte */
	bool external;      /**< some of the range is external memory (rte_extmem) */
};

/**
 * Check that every page of [@p addr, @p addr + @p len) is allocated DPDK memory. O(memory
 * segment lists crossed); not on any hot path.
 * @return 0 and @p info (may be NULL); -EINVAL for @p len 0, @p addr NULL or a range that
 * wraps; -ENOENT if some byte of the range is not DPDK memory.
 */
int droce_mem_dpdk_range(const void *addr, uint64_t len, struct droce_mem_dpdk_info *info);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_MEM_DPDK_H */
