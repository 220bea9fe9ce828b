/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Is a range of this process mapped with the access a registration asks for? The embedded
 * backend asks before it registers memory, as the kernel's ib_umem_get() pins the pages (and
 * fails with EFAULT) before a NIC's MR exists: the engine copies into and out of registered
 * memory, and a range with nothing behind it would fault there (doc/memory.md).
 */
#ifndef DROCE_MEM_MAPS_H
#define DROCE_MEM_MAPS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Whether [@p addr, @p addr + @p length) is mapped, readable, and writable when @p writable,
 * from one pass over /proc/self/maps.
 * @return 0; -EINVAL if @p length is 0 or the range wraps past 2^64; -EFAULT if a byte of it
 *  has no mapping or one without the access; -errno if /proc/self/maps cannot be read.
 */
int droce_mem_check_mapped(uint64_t addr, uint64_t length, bool writable);

#endif /* DROCE_MEM_MAPS_H */
