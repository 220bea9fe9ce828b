/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The optional DPDK side of lib/mem: whether a range is DPDK memory and its IOVA. Walks the
 * memory segment lists run by run (rte_fbarray_find_contig_used), never page by page.
 */
#include <errno.h>

#include <rte_eal_memconfig.h>
#include <rte_fbarray.h>
#include <rte_memory.h>

#include "droce_mem_dpdk.h"

int droce_mem_dpdk_range(const void *addr, uint64_t len, struct droce_mem_dpdk_info *info)
{
	struct droce_mem_dpdk_info out = {
		.iova = DROCE_MEM_BAD_IOVA,
		.page_size = UINT64_MAX,
		.socket_id = -1,
	};
	uintptr_t p = (uintptr_t)addr, end;
	int ret = 0;

	if (addr == NULL || len == 0 || len > UINTPTR_MAX - p)
		return -EINVAL;
	end = p + (uintptr_t)len;

	rte_mcfg_mem_read_lock();
	while (p < end) {
		struct rte_memseg_list *msl = rte_mem_virt2memseg_list((const void *)p);
		const struct rte_memseg *ms;
		unsigned int idx;
		int n;

		if (msl == NULL) {
			ret = -ENOENT;
			break;
		}
		/* a list reserves virtual space for all its pages; only used ones are memory */
		idx = (unsigned int)((p - (uintptr_t)msl->base_va) / msl->page_sz);
		n = rte_fbarray_find_contig_used(&msl->memseg_arr, idx);
		if (n <= 0) {
			ret = -ENOENT;
			break;
		}
		if (p == (uintptr_t)addr) {
			ms = rte_fbarray_get(&msl->memseg_arr, idx);
			if (ms != NULL && ms->iova != RTE_BAD_IOVA)
				out.iova = ms->iova + (uint64_t)(p - (uintptr_t)ms->addr);
			out.socket_id = msl->socket_id;
		}
		if (msl->page_sz < out.page_size)
			out.page_size = msl->page_sz;
		out.external = out.external || msl->external != 0;
		p = (uintptr_t)msl->base_va + ((uintptr_t)idx + (uintptr_t)n) * msl->page_sz;
	}
	rte_mcfg_mem_read_unlock();

	if (ret == 0 && info != NULL)
		*info = out;
	return ret;
}
