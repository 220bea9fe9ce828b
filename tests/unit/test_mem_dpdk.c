/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The optional DPDK helper of lib/mem (droce_mem_dpdk.h): DPDK memory is recognised with its
 * IOVA, other memory is not, nor a range that runs out of DPDK memory. Each test starts its own
 * EAL (hugepages when free ones exist, --no-huge otherwise).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <rte_malloc.h>
#include <rte_memory.h>

#include "droce_mem_dpdk.h"
#include "droce_test.h"

static void eal_up(void)
{
	droce_test_eal_init("mem_dpdk");
}

static void eal_down(void)
{
	droce_test_eal_fini();
}

TestSuite(mem_dpdk, .init = eal_up, .fini = eal_down);

Test(mem_dpdk, rte_malloc_memory)
{
	uint8_t *p = rte_malloc("droce-test", 65536, 64);
	struct droce_mem_dpdk_info i;
	rte_iova_t iova;

	cr_assert_not_null(p, "rte_malloc");
	iova = rte_malloc_virt2iova(p); /* takes the start of an allocation only */
	cr_expect_eq(droce_mem_dpdk_range(p + 100, 1000, &i), 0, "a piece of the allocation");
	cr_expect_eq(droce_mem_dpdk_range(p, 65536, &i), 0, "the whole allocation");
	if (iova != RTE_BAD_IOVA)
		cr_expect_eq(i.iova, (uint64_t)iova, "IOVA as rte_malloc_virt2iova() gives it");
	else
		cr_expect_eq(i.iova, DROCE_MEM_BAD_IOVA, "no IOVA known");
	cr_expect_geq(i.page_size, 4096, "a page size");
	cr_expect_not(i.external, "not external memory");
	cr_expect_eq(droce_mem_dpdk_range(p, 64, NULL), 0, "info may be NULL");
	rte_free(p);
}

Test(mem_dpdk, libc_memory_is_not_dpdk_memory)
{
	uint8_t *heap = malloc(4096);
	uint8_t stack[64];

	cr_assert_not_null(heap);
	cr_expect_eq(droce_mem_dpdk_range(heap, 4096, NULL), -ENOENT, "malloc() memory");
	cr_expect_eq(droce_mem_dpdk_range(stack, sizeof(stack), NULL), -ENOENT, "stack memory");
	free(heap);
}

Test(mem_dpdk, range_running_out_of_dpdk_memory)
{
	uint8_t *p = rte_malloc("droce-test", 4096, 64);

	cr_assert_not_null(p, "rte_malloc");
	cr_expect_eq(droce_mem_dpdk_range(p, 1ull << 40, NULL), -ENOENT,
		     "1 TiB from a DPDK address: leaves DPDK memory");
	rte_free(p);
}

Test(mem_dpdk, bad_arguments)
{
	uint8_t *p = rte_malloc("droce-test", 4096, 64);

	cr_assert_not_null(p, "rte_malloc");
	cr_expect_eq(droce_mem_dpdk_range(p, 0, NULL), -EINVAL, "length 0");
	cr_expect_eq(droce_mem_dpdk_range(NULL, 64, NULL), -EINVAL, "NULL");
	cr_expect_eq(droce_mem_dpdk_range(p, UINT64_MAX, NULL), -EINVAL, "range wraps");
	rte_free(p);
}
