/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bandwidth: end 0 WRITEs @p iters messages to end 1 with at most tx_depth of
 * them outstanding and a completion every cq_mod, as droce-perf write_bw does;
 * the rate is over the time from the first post to the last completion.
 */
#include <stdio.h>

#include "raw.h"

int raw_bw_run(struct raw_ctx *c, uint32_t size, uint64_t iters, struct raw_bw_result *r)
{
	struct raw_end *from = &c->end[0], *to = &c->end[1];
	uint64_t slots = RAW_BUF_CAP / size, posted = 0, completed = 0, cqes = 0, t0, t1, stall;
	uint64_t spins = 0;

	if (slots > c->tx_depth)
		slots = c->tx_depth;
	if (slots == 0)
		slots = 1;
	t0 = raw_now_ns();
	stall = t0;
	while (completed < iters) {
		struct raw_wqe w[RAW_BURST];
		struct raw_cqe cqe[RAW_BURST];
		uint64_t room = c->tx_depth - (posted - completed);
		unsigned int n = 0, k;

		if (room > iters - posted)
			room = iters - posted;
		for (; n < room && n < RAW_BURST; n++) {
			uint64_t m = posted + n;

			w[n] = (struct raw_wqe){
				.laddr = (uintptr_t)from->buf + (m % slots) * size,
				.raddr = (uintptr_t)to->buf + (m % slots) * size,
				.len = size,
				.signaled = (m + 1) % c->cq_mod == 0 || m + 1 == iters,
			};
		}
		if (n > 0)
			posted +=
				rte_ring_sp_enqueue_burst_elem(from->sq, w, sizeof(w[0]), n, NULL);
		k = rte_ring_sc_dequeue_burst_elem(from->cq, cqe, sizeof(cqe[0]), RAW_BURST, NULL);
		for (unsigned int i = 0; i < k; i++)
			if (cqe[i].status != 0) {
				fprintf(stderr, "bench_raw: completion with error %u\n",
					cqe[i].status);
				return -1;
			}
		if (k > 0) {
			/* the k-th signalled message ends each run of cq_mod, or the last */
			cqes += k;
			completed = cqes * c->cq_mod < iters ? cqes * c->cq_mod : iters;
			stall = raw_now_ns();
		} else if ((++spins & 0xfff) == 0 && raw_now_ns() - stall > RAW_STALL_NS) {
			fprintf(stderr, "bench_raw: no completion for 10 s (%llu of %llu done)\n",
				(unsigned long long)completed, (unsigned long long)iters);
			return -1;
		}
	}
	t1 = raw_now_ns();
	r->size = size;
	r->iters = iters;
	r->mpps = (double)iters * 1e3 / (double)(t1 - t0);
	r->gbits = (double)iters * size * 8 / (double)(t1 - t0);
	return 0;
}
