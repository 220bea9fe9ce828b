/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Memory droced can register: with DROCE_DAEMON set, ibv_reg_mr() accepts only
 * shared mappings of a file droced can map and the application cannot shrink
 * (a memfd sealed with F_SEAL_SHRINK; doc/daemon.md). These calls make such
 * memory; with the embedded engine any memory registers, this included.
 */
#ifndef DROCE_SHARED_H
#define DROCE_SHARED_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Back the memory with hugepages (MFD_HUGETLB): needs free hugepages. */
#define DROCE_SHARED_HUGEPAGES 1u

/**
 * @p length bytes (rounded up to the page size) of zeroed shared memory from a
 * sealed memfd, mapped read-write. NULL with errno on failure.
 */
void *droce_alloc_shared(size_t length, unsigned int flags);

/** Unmap memory from droce_alloc_shared() and close its file. 0 or -errno. */
int droce_free_shared(void *addr, size_t length);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_SHARED_H */
