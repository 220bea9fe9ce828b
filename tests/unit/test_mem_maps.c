/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mapping check of a registration (lib/mem/mem_maps.c): holes, edges, permissions, and
 * ranges spanning mappings, on pages this test maps and unmaps itself.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "droce_mem_maps.h"

#define PG 4096u

/* Three pages: read-write, nothing, read-only. */
static uint8_t *map3(void)
{
	uint8_t *p = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(p, MAP_FAILED, "mmap: %s", strerror(errno));
	cr_assert_eq(munmap(p + PG, PG), 0, "the hole");
	cr_assert_eq(mprotect(p + 2 * PG, PG, PROT_READ), 0, "the read-only page");
	return p;
}

static uint64_t a(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

Test(mem_maps, bad_ranges)
{
	cr_expect_eq(droce_mem_check_mapped(a(&errno), 0, false), -EINVAL, "length 0");
	cr_expect_eq(droce_mem_check_mapped(UINT64_MAX - 10, 100, false), -EINVAL, "wraps");
}

Test(mem_maps, holes)
{
	uint8_t *p = map3();

	cr_expect_eq(droce_mem_check_mapped(a(p), PG, true), 0, "the read-write page");
	cr_expect_eq(droce_mem_check_mapped(a(p + PG), 1, false), -EFAULT, "a byte of the hole");
	cr_expect_eq(droce_mem_check_mapped(a(p + PG - 1), 2, false), -EFAULT,
		     "the last byte before the hole and the first of it");
	cr_expect_eq(droce_mem_check_mapped(a(p), 3 * PG, false), -EFAULT, "across the hole");
	cr_expect_eq(droce_mem_check_mapped(0xdead0000ull, PG, false), -EFAULT, "0xdead0000");
	cr_expect_eq(droce_mem_check_mapped(a(p), 1ull << 46, false), -EFAULT, "2^46 bytes");
	munmap(p, PG);
	munmap(p + 2 * PG, PG);
}

Test(mem_maps, permissions)
{
	uint8_t *p = map3();
	uint8_t *none = mmap(NULL, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(none, MAP_FAILED, "mmap PROT_NONE");
	cr_expect_eq(droce_mem_check_mapped(a(p + 2 * PG), PG, false), 0, "read-only, read");
	cr_expect_eq(droce_mem_check_mapped(a(p + 2 * PG), PG, true), -EFAULT,
		     "read-only, written");
	cr_expect_eq(droce_mem_check_mapped(a(none), PG, false), -EFAULT, "PROT_NONE");
	munmap(none, PG);
	munmap(p, PG);
	munmap(p + 2 * PG, PG);
}

Test(mem_maps, across_mappings)
{
	uint8_t *p = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *m = malloc(1 << 20);
	int stack_byte = 0;

	cr_assert_neq(p, MAP_FAILED, "mmap");
	cr_assert_not_null(m, "malloc");
	/* two mappings side by side once their rights differ */
	cr_assert_eq(mprotect(p + PG, PG, PROT_READ | PROT_WRITE | PROT_EXEC), 0, "split");
	cr_expect_eq(droce_mem_check_mapped(a(p), 2 * PG, true), 0, "two adjacent mappings");
	cr_expect_eq(droce_mem_check_mapped(a(m), 1 << 20, true), 0, "1 MiB malloc");
	cr_expect_eq(droce_mem_check_mapped(a(&stack_byte), sizeof(stack_byte), true), 0,
		     "the stack");
	free(m);
	munmap(p, 2 * PG);
}
