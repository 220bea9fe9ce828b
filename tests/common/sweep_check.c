/* SPDX-License-Identifier: BSD-3-Clause */
/* The transport sweep: waiting for completions, filling and checking bytes (sweep_priv.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_priv.h"

/* ------------------------------------------------------------ checking */

struct ibv_wc sw_wait(struct sw_run *r, bool peer, enum sw_kind k, bool recv, uint64_t id)
{
	struct sw_cmd c = {.op = SW_POLL, .kind = k, .recv = recv, .len = SW_LIVENESS};
	struct sw_reply rep = peer ? sw_peer(r, c) : sw_local(r, c);
	const char *side = peer ? "the peer's" : "e0's";

	cr_assert_eq(rep.rc, 0, "%s: no %s %s completion for %llu", r->what, side,
		     recv ? "receive" : "send", (unsigned long long)id);
	cr_assert_eq(rep.wc.wr_id, id, "%s: %s %s completion %llu, expected %llu (%s)", r->what,
		     side, recv ? "receive" : "send", (unsigned long long)rep.wc.wr_id,
		     (unsigned long long)id, ibv_wc_status_str(rep.wc.status));
	return rep.wc;
}

/* A send completion of e0's QP @p k: the next one must be @p id. */
struct ibv_wc sw_wait_send(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	return sw_wait(r, false, k, false, id);
}

/* A receive completion (@p recv) or send completion of the peer's QP @p k: @p id. */
struct ibv_wc sw_peer_wait(struct sw_run *r, enum sw_kind k, bool recv, uint64_t id)
{
	return sw_wait(r, true, k, recv, id);
}

void sw_expect_success(const struct sw_run *r, const struct ibv_wc *wc, enum ibv_wc_opcode op,
		       const char *side)
{
	cr_expect_eq(wc->status, IBV_WC_SUCCESS, "%s: %s completion %s", r->what, side,
		     ibv_wc_status_str(wc->status));
	cr_expect_eq(wc->opcode, op, "%s: %s completion opcode %d, expected %d", r->what, side,
		     wc->opcode, op);
}

struct sw_reply sw_on(struct sw_run *r, bool peer, struct sw_cmd c)
{
	return peer ? sw_peer(r, c) : sw_local(r, c);
}

/* The split layout: [0, split) pattern, SW_GAP bytes skipped, the rest; then 64 guard bytes. */
static uint64_t layout_span(uint64_t len, uint32_t split)
{
	return len + (split ? SW_GAP : 0) + 64;
}

/* Zero the span of a layout at @p off (peer or e0), then write pattern @p seed into it. */
void sw_fill_layout(struct sw_run *r, bool peer, uint64_t off, uint64_t len, uint32_t split,
		    uint32_t seed)
{
	struct sw_reply rep;

	rep = sw_on(r, peer,
		    (struct sw_cmd){.op = SW_FILL,
				    .off = off,
				    .len = layout_span(len, split),
				    .seed = SW_ZERO});
	cr_assert_eq(rep.rc, 0);
	if (seed == SW_ZERO || len == 0)
		return;
	if (split == 0) {
		rep = sw_on(r, peer,
			    (struct sw_cmd){.op = SW_FILL, .off = off, .len = len, .seed = seed});
		cr_assert_eq(rep.rc, 0);
		return;
	}
	rep = sw_on(r, peer,
		    (struct sw_cmd){.op = SW_FILL, .off = off, .len = split, .seed = seed});
	cr_assert_eq(rep.rc, 0);
	rep = sw_on(r, peer,
		    (struct sw_cmd){.op = SW_FILL,
				    .off = off + split + SW_GAP,
				    .len = len - split,
				    .seed = seed,
				    .pat = split});
	cr_assert_eq(rep.rc, 0);
}

static void expect_range(struct sw_run *r, bool peer, uint64_t off, uint64_t len, uint32_t seed,
			 uint64_t pat, const char *part)
{
	struct sw_reply rep = sw_on(
		r, peer,
		(struct sw_cmd){.op = SW_CHECK, .off = off, .len = len, .seed = seed, .pat = pat});

	cr_assert_eq(rep.rc, 0);
	cr_expect_eq(rep.val, -1, "%s: %s bytes: byte %lld of %llu differs", r->what, part,
		     (long long)rep.val, (unsigned long long)len);
}

/* The message's bytes in its layout, the gap and the guard after it untouched. */
void sw_expect_layout(struct sw_run *r, bool peer, uint64_t off, uint64_t len, uint32_t split,
		      uint32_t seed)
{
	if (split == 0) {
		expect_range(r, peer, off, len, seed, 0, "message");
		expect_range(r, peer, off + len, 64, SW_ZERO, 0, "guard");
		return;
	}
	expect_range(r, peer, off, split, seed, 0, "first SGE");
	expect_range(r, peer, off + split, SW_GAP, SW_ZERO, 0, "gap");
	expect_range(r, peer, off + split + SW_GAP, len - split, seed, split, "second SGE");
	expect_range(r, peer, off + len + SW_GAP, 64, SW_ZERO, 0, "guard");
}

/* Odd sizes above 2 go out of two SGEs and arrive into two, split at different bytes. */
uint32_t sw_send_split(uint64_t len)
{
	return len > 2 && (len & 1) ? (uint32_t)(len / 3) : 0;
}

uint32_t sw_recv_split(uint64_t len)
{
	return len > 2 && (len & 1) ? (uint32_t)(len / 2 + 1) : 0;
}

uint64_t sw_get64(struct sw_run *r, bool peer, uint64_t off)
{
	struct sw_reply rep = sw_on(r, peer, (struct sw_cmd){.op = SW_GET64, .off = off});

	cr_assert_eq(rep.rc, 0);
	return (uint64_t)rep.val;
}

void sw_put64(struct sw_run *r, bool peer, uint64_t off, uint64_t v)
{
	struct sw_reply rep = sw_on(r, peer, (struct sw_cmd){.op = SW_PUT64, .off = off, .val = v});

	cr_assert_eq(rep.rc, 0);
}

/* UC has no acknowledgement: a zero-byte SEND behind a WRITE tells when it is placed. */
void sw_uc_marker(struct sw_run *r)
{
	uint32_t id = ++r->seq;
	struct sw_reply rep;
	struct ibv_wc wc;

	rep = sw_peer(r, (struct sw_cmd){.op = SW_RECV, .kind = SW_UC, .id = id});
	cr_assert_eq(rep.rc, 0);
	rep = sw_local(r, (struct sw_cmd){.op = SW_POST,
					  .kind = SW_UC,
					  .wr_op = IBV_WR_SEND_WITH_IMM,
					  .id = id,
					  .imm = id});
	cr_assert_eq(rep.rc, 0);
	wc = sw_wait_send(r, SW_UC, id);
	sw_expect_success(r, &wc, IBV_WC_SEND, "marker send");
	wc = sw_peer_wait(r, SW_UC, true, id);
	sw_expect_success(r, &wc, IBV_WC_RECV, "marker receive");
}
