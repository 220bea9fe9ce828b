/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport sweep's cases: one operation at one size, posted from e0,
 * its completions and bytes checked at both ends (sweep.h, sw_sweep()).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_priv.h"

/* ------------------------------------------------------------ the operations */

/* SEND, SEND_WITH_IMM, SEND_WITH_INV: into a receive posted at the peer. */
static void case_send(struct sw_run *r, enum sw_kind k, enum ibv_wr_opcode op, uint64_t len)
{
	uint32_t seed = ++r->seq, ss = sw_send_split(len), rs = k == SW_UD ? 0 : sw_recv_split(len);
	uint64_t roff = SW_RECV(r), grh = k == SW_UD ? 40 : 0;
	uint32_t imm = seed;
	struct sw_reply rep;
	struct ibv_wc wc;

	if (op == IBV_WR_SEND_WITH_INV) {
		/* a window the peer's QP bound, for this SEND to invalidate */
		rep = sw_peer(r, (struct sw_cmd){.op = SW_BIND,
						 .kind = k,
						 .id = seed,
						 .off = SW_WIN(r),
						 .len = 4096,
						 .val = IBV_ACCESS_REMOTE_WRITE});
		cr_assert_eq(rep.rc, 0, "%s: bind at the peer: %s", r->what, strerror(-rep.rc));
		cr_assert_eq(rep.wc.status, IBV_WC_SUCCESS, "%s: bind at the peer: %s", r->what,
			     ibv_wc_status_str(rep.wc.status));
		imm = (uint32_t)rep.val;
	}
	sw_fill_layout(r, true, roff, grh + len, rs, SW_ZERO);
	rep = sw_peer(r, (struct sw_cmd){.op = SW_RECV,
					 .kind = k,
					 .id = seed,
					 .off = roff,
					 .len = grh + len,
					 .split = rs});
	cr_assert_eq(rep.rc, 0, "%s: post_recv: %s", r->what, strerror(-rep.rc));
	sw_fill_layout(r, false, SW_SRC(r), len, ss, seed);
	rep = sw_local(r, (struct sw_cmd){.op = SW_POST,
					  .kind = k,
					  .wr_op = op,
					  .id = seed,
					  .off = SW_SRC(r),
					  .len = len,
					  .split = ss,
					  .imm = imm,
					  .flags = r->send_flags});
	cr_assert_eq(rep.rc, 0, "%s: post_send: %s", r->what, strerror(-rep.rc));
	/* inline: the bytes were copied at post, the buffer is free again */
	if (r->send_flags & IBV_SEND_INLINE)
		sw_fill_layout(r, false, SW_SRC(r), len, ss, SW_ZERO);
	wc = sw_wait_send(r, k, seed);
	sw_expect_success(r, &wc, IBV_WC_SEND, "send");
	wc = sw_peer_wait(r, k, true, seed);
	sw_expect_success(r, &wc, IBV_WC_RECV, "receive");
	cr_expect_eq(wc.byte_len, grh + len, "%s: received %u bytes", r->what, wc.byte_len);
	cr_expect_eq(wc.qp_num, r->i1.qpn[k], "%s: qp_num %u", r->what, wc.qp_num);
	switch (op) {
	case IBV_WR_SEND_WITH_IMM:
		cr_expect(wc.wc_flags & IBV_WC_WITH_IMM, "%s: no immediate", r->what);
		cr_expect_eq(be32toh(wc.imm_data), seed, "%s: immediate %u", r->what,
			     be32toh(wc.imm_data));
		break;
	case IBV_WR_SEND_WITH_INV:
		cr_expect(wc.wc_flags & IBV_WC_WITH_INV, "%s: no invalidation", r->what);
		cr_expect_eq(wc.invalidated_rkey, imm, "%s: invalidated %#x", r->what,
			     wc.invalidated_rkey);
		break;
	default:
		cr_expect_not(wc.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV), "%s: flags %#x",
			      r->what, wc.wc_flags);
		break;
	}
	if (k == SW_UD) {
		const union ibv_gid *src = &r->i0.gid[r->sgid], *dst = &r->i1.gid[r->sgid];
		bool v4 = r->sgid == SW_GID_IPV4;

		cr_expect(wc.wc_flags & IBV_WC_GRH, "%s: no GRH", r->what);
		cr_expect_eq(wc.src_qp, r->i0.qpn[k], "%s: src_qp %u", r->what, wc.src_qp);
		rep = sw_peer(r, (struct sw_cmd){.op = SW_PEEK, .off = roff, .len = 40});
		cr_assert_eq(rep.rc, 0);
		/* the GRH area (annex A17): IPv6 header, or 20 zero bytes and the IPv4 header */
		if (v4) {
			cr_expect_eq(rep.bytes[20], 0x45, "%s: IPv4 header %#x", r->what,
				     rep.bytes[20]);
			cr_expect(memcmp(rep.bytes + 32, src->raw + 12, 4) == 0, "%s: IPv4 source",
				  r->what);
			cr_expect(memcmp(rep.bytes + 36, dst->raw + 12, 4) == 0,
				  "%s: IPv4 destination", r->what);
		} else {
			cr_expect_eq(rep.bytes[0] >> 4, 6, "%s: IPv6 header %#x", r->what,
				     rep.bytes[0]);
			cr_expect(memcmp(rep.bytes + 8, src->raw, 16) == 0, "%s: IPv6 source",
				  r->what);
			cr_expect(memcmp(rep.bytes + 24, dst->raw, 16) == 0, "%s: IPv6 destination",
				  r->what);
		}
	}
	sw_expect_layout(r, true, roff + grh, len, rs, seed);
}

/* RDMA WRITE and WRITE_WITH_IMM into the peer's buffer. */
static void case_write(struct sw_run *r, enum sw_kind k, enum ibv_wr_opcode op, uint64_t len)
{
	uint32_t seed = ++r->seq, ss = sw_send_split(len);
	struct sw_reply rep;
	struct ibv_wc wc;

	sw_fill_layout(r, true, SW_DST(r), len, 0, SW_ZERO);
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		rep = sw_peer(r, (struct sw_cmd){.op = SW_RECV, .kind = k, .id = seed});
		cr_assert_eq(rep.rc, 0);
	}
	sw_fill_layout(r, false, SW_SRC(r), len, ss, seed);
	rep = sw_local(r, (struct sw_cmd){.op = SW_POST,
					  .kind = k,
					  .wr_op = op,
					  .id = seed,
					  .off = SW_SRC(r),
					  .len = len,
					  .split = ss,
					  .addr = r->i1.addr + SW_DST(r),
					  /* zero bytes touch no memory: no R_Key is checked */
					  .rkey = len > 0 ? r->i1.rkey : r->i1.rkey ^ 0x80,
					  .imm = seed,
					  .flags = r->send_flags});
	cr_assert_eq(rep.rc, 0, "%s: post_send: %s", r->what, strerror(-rep.rc));
	if (r->send_flags & IBV_SEND_INLINE)
		sw_fill_layout(r, false, SW_SRC(r), len, ss, SW_ZERO);
	wc = sw_wait_send(r, k, seed);
	sw_expect_success(r, &wc, IBV_WC_RDMA_WRITE, "send");
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		wc = sw_peer_wait(r, k, true, seed);
		sw_expect_success(r, &wc, IBV_WC_RECV_RDMA_WITH_IMM, "receive");
		cr_expect_eq(wc.byte_len, len, "%s: byte_len %u", r->what, wc.byte_len);
		cr_expect(wc.wc_flags & IBV_WC_WITH_IMM, "%s: no immediate", r->what);
		cr_expect_eq(be32toh(wc.imm_data), seed, "%s: immediate %u", r->what,
			     be32toh(wc.imm_data));
	} else if (k == SW_UC) {
		sw_uc_marker(r);
	}
	sw_expect_layout(r, true, SW_DST(r), len, 0, seed);
}

/* RDMA READ of the peer's buffer into two SGEs (odd sizes) or one. */
static void case_read(struct sw_run *r, enum sw_kind k, enum ibv_wr_opcode op, uint64_t len)
{
	uint32_t seed = ++r->seq, rs = sw_recv_split(len);
	struct sw_reply rep;
	struct ibv_wc wc;

	rep = sw_peer(r,
		      (struct sw_cmd){.op = SW_FILL, .off = SW_SRC(r), .len = len, .seed = seed});
	cr_assert_eq(rep.rc, 0);
	sw_fill_layout(r, false, SW_DST(r), len, rs, SW_ZERO);
	rep = sw_local(r, (struct sw_cmd){.op = SW_POST,
					  .kind = k,
					  .wr_op = op,
					  .id = seed,
					  .off = SW_DST(r),
					  .len = len,
					  .split = rs,
					  .addr = r->i1.addr + SW_SRC(r),
					  .rkey = len > 0 ? r->i1.rkey : r->i1.rkey ^ 0x80});
	cr_assert_eq(rep.rc, 0, "%s: post_send: %s", r->what, strerror(-rep.rc));
	wc = sw_wait_send(r, k, seed);
	sw_expect_success(r, &wc, IBV_WC_RDMA_READ, "send");
	cr_expect_eq(wc.byte_len, len, "%s: byte_len %u", r->what, wc.byte_len);
	sw_expect_layout(r, false, SW_DST(r), len, rs, seed);
}

/* One atomic on the peer's 8 bytes at @p off; the original value lands in e0's DST. */
static void atomic_once(struct sw_run *r, enum ibv_wr_opcode op, uint64_t off, uint64_t cmp_add,
			uint64_t swap)
{
	uint32_t id = ++r->seq;
	struct sw_reply rep;
	struct ibv_wc wc;

	rep = sw_local(r, (struct sw_cmd){.op = SW_POST,
					  .kind = SW_RC,
					  .wr_op = op,
					  .id = id,
					  .off = SW_DST(r),
					  .len = 8,
					  .addr = r->i1.addr + off,
					  .rkey = r->i1.rkey,
					  .val = cmp_add,
					  .swap = swap});
	cr_assert_eq(rep.rc, 0, "%s: post_send: %s", r->what, strerror(-rep.rc));
	wc = sw_wait_send(r, SW_RC, id);
	sw_expect_success(r, &wc,
			  op == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD,
			  "send");
	cr_expect_eq(wc.byte_len, 8, "%s: byte_len %u", r->what, wc.byte_len);
}

/* Atomics at the start of a region, inside it, and on the last 8 bytes of the MR. */
static void case_atomic(struct sw_run *r, enum sw_kind k, enum ibv_wr_opcode op, uint64_t len)
{
	const uint64_t offs[] = {SW_ATOM(r), SW_ATOM(r) + 8 * 37, r->i1.len - 8};

	(void)k;
	(void)len;
	for (unsigned int i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		uint64_t v0 = 0x0123456789abcdefull ^ ((uint64_t)r->seq << 32), v1 = ~v0;

		sw_put64(r, true, offs[i], v0);
		sw_put64(r, false, SW_DST(r), 0x5a5a5a5a5a5a5a5aull);
		if (op == IBV_WR_ATOMIC_CMP_AND_SWP) {
			/* equal: swapped */
			atomic_once(r, op, offs[i], v0, v1);
			cr_expect_eq(sw_get64(r, false, SW_DST(r)), v0, "%s: original value",
				     r->what);
			cr_expect_eq(sw_get64(r, true, offs[i]), v1, "%s: swapped value", r->what);
			/* different: left alone, the current value returned */
			atomic_once(r, op, offs[i], v0, 77);
			cr_expect_eq(sw_get64(r, false, SW_DST(r)), v1, "%s: current value",
				     r->what);
			cr_expect_eq(sw_get64(r, true, offs[i]), v1, "%s: not swapped", r->what);
		} else {
			/* the sum wraps at 2^64 */
			sw_put64(r, true, offs[i], ~0ull - 0x10);
			atomic_once(r, op, offs[i], 0x25, 0);
			cr_expect_eq(sw_get64(r, false, SW_DST(r)), ~0ull - 0x10,
				     "%s: original value", r->what);
			cr_expect_eq(sw_get64(r, true, offs[i]), 0x14, "%s: sum", r->what);
		}
	}
}

/*
 * BIND_MW and LOCAL_INV: e0 binds a type-2 window through its QP; on RC the
 * peer writes and reads through it; LOCAL_INV invalidates it, which the next
 * bind of the same window proves (a bound type-2 window cannot be bound).
 */
static void case_window(struct sw_run *r, enum sw_kind k, enum ibv_wr_opcode op, uint64_t len)
{
	uint32_t seed = ++r->seq;
	uint64_t n = len < SW_WIN_LEN ? len : SW_WIN_LEN;
	struct sw_reply rep;
	struct ibv_wc wc;
	uint32_t rkey;

	(void)op;
	rep = sw_local(r, (struct sw_cmd){.op = SW_BIND,
					  .kind = k,
					  .id = seed,
					  .off = SW_WIN(r),
					  .len = SW_WIN_LEN,
					  .val = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ});
	cr_assert_eq(rep.rc, 0, "%s: bind: %s", r->what, strerror(-rep.rc));
	sw_expect_success(r, &rep.wc, IBV_WC_BIND_MW, "bind");
	rkey = (uint32_t)rep.val;
	if (k == SW_RC) {
		sw_fill_layout(r, false, SW_WIN(r), n, 0, SW_ZERO);
		rep = sw_peer(r, (struct sw_cmd){
					 .op = SW_FILL, .off = SW_SRC(r), .len = n, .seed = seed});
		cr_assert_eq(rep.rc, 0);
		rep = sw_peer(r, (struct sw_cmd){.op = SW_POST,
						 .kind = k,
						 .wr_op = IBV_WR_RDMA_WRITE,
						 .id = seed,
						 .off = SW_SRC(r),
						 .len = n,
						 .addr = r->i0.addr + SW_WIN(r),
						 .rkey = rkey});
		cr_assert_eq(rep.rc, 0);
		wc = sw_peer_wait(r, k, false, seed);
		sw_expect_success(r, &wc, IBV_WC_RDMA_WRITE, "WRITE through the window");
		sw_expect_layout(r, false, SW_WIN(r), n, 0, seed);
		sw_fill_layout(r, true, SW_DST(r), n, 0, SW_ZERO);
		rep = sw_peer(r, (struct sw_cmd){.op = SW_POST,
						 .kind = k,
						 .wr_op = IBV_WR_RDMA_READ,
						 .id = seed + 1,
						 .off = SW_DST(r),
						 .len = n,
						 .addr = r->i0.addr + SW_WIN(r),
						 .rkey = rkey});
		cr_assert_eq(rep.rc, 0);
		wc = sw_peer_wait(r, k, false, seed + 1);
		sw_expect_success(r, &wc, IBV_WC_RDMA_READ, "READ through the window");
		sw_expect_layout(r, true, SW_DST(r), n, 0, seed);
		r->seq++;
	}
	rep = sw_local(r, (struct sw_cmd){.op = SW_POST,
					  .kind = k,
					  .wr_op = IBV_WR_LOCAL_INV,
					  .id = seed + 2,
					  .imm = rkey});
	cr_assert_eq(rep.rc, 0, "%s: post LOCAL_INV: %s", r->what, strerror(-rep.rc));
	wc = sw_wait_send(r, k, seed + 2);
	sw_expect_success(r, &wc, IBV_WC_LOCAL_INV, "LOCAL_INV");
	rep = sw_local(r, (struct sw_cmd){.op = SW_BIND,
					  .kind = k,
					  .id = seed + 3,
					  .recv = 1, /* the same window again */
					  .off = SW_WIN(r),
					  .len = 64,
					  .val = IBV_ACCESS_REMOTE_READ});
	cr_assert_eq(rep.rc, 0);
	sw_expect_success(r, &rep.wc, IBV_WC_BIND_MW, "bind after LOCAL_INV");
	r->seq += 3;
}

/* A type-1 window bound with ibv_bind_mw(): the peer writes through it, then it is unbound. */
static void case_window1(struct sw_run *r, enum sw_kind k, enum ibv_wr_opcode op, uint64_t len)
{
	struct ibv_mw *mw = ibv_alloc_mw(r->e0.pd, IBV_MW_TYPE_1);
	uint32_t seed = ++r->seq;
	uint64_t n = len < SW_WIN_LEN ? len : SW_WIN_LEN;
	struct ibv_mw_bind b = {.wr_id = seed,
				.send_flags = IBV_SEND_SIGNALED,
				.bind_info = {.mr = r->e0.mr,
					      .addr = (uintptr_t)r->e0.buf + SW_WIN(r),
					      .length = SW_WIN_LEN,
					      .mw_access_flags = IBV_ACCESS_REMOTE_WRITE}};
	struct sw_reply rep;
	struct ibv_wc wc;

	(void)op;
	cr_assert_not_null(mw);
	cr_assert_eq(ibv_bind_mw(r->e0.qp[k], mw, &b), 0, "%s: ibv_bind_mw: %s", r->what,
		     strerror(errno));
	wc = sw_wait_send(r, k, seed);
	sw_expect_success(r, &wc, IBV_WC_BIND_MW, "bind");
	sw_fill_layout(r, false, SW_WIN(r), n, 0, SW_ZERO);
	rep = sw_peer(r, (struct sw_cmd){.op = SW_FILL, .off = SW_SRC(r), .len = n, .seed = seed});
	cr_assert_eq(rep.rc, 0);
	rep = sw_peer(r, (struct sw_cmd){.op = SW_POST,
					 .kind = k,
					 .wr_op = IBV_WR_RDMA_WRITE,
					 .id = seed,
					 .off = SW_SRC(r),
					 .len = n,
					 .addr = r->i0.addr + SW_WIN(r),
					 .rkey = mw->rkey});
	cr_assert_eq(rep.rc, 0);
	wc = sw_peer_wait(r, k, false, seed);
	sw_expect_success(r, &wc, IBV_WC_RDMA_WRITE, "WRITE through the window");
	sw_expect_layout(r, false, SW_WIN(r), n, 0, seed);
	/* unbind: a zero-length bind */
	b.wr_id = ++r->seq;
	b.bind_info.length = 0;
	b.bind_info.mr = NULL;
	b.bind_info.addr = 0;
	cr_assert_eq(ibv_bind_mw(r->e0.qp[k], mw, &b), 0, "%s: unbind: %s", r->what,
		     strerror(errno));
	wc = sw_wait_send(r, k, b.wr_id);
	sw_expect_success(r, &wc, IBV_WC_BIND_MW, "unbind");
	cr_expect_eq(ibv_dealloc_mw(mw), 0);
}

typedef void (*sw_case_fn)(struct sw_run *r, enum sw_kind k, enum ibv_wr_opcode op, uint64_t len);

/* Every operation each QP type may carry; sized ones run at every size. */
static const struct {
	enum sw_kind kind;
	enum ibv_wr_opcode op;
	const char *name;
	sw_case_fn run;
	bool sized;
	uint32_t flags; /* IBV_SEND_INLINE: the sizes up to SW_INLINE */
} sw_cases[] = {
	{SW_RC, IBV_WR_SEND, "SEND", case_send, true, 0},
	{SW_RC, IBV_WR_SEND_WITH_IMM, "SEND_WITH_IMM", case_send, true, 0},
	{SW_RC, IBV_WR_SEND_WITH_INV, "SEND_WITH_INV", case_send, true, 0},
	{SW_RC, IBV_WR_RDMA_WRITE, "RDMA_WRITE", case_write, true, 0},
	{SW_RC, IBV_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM", case_write, true, 0},
	{SW_RC, IBV_WR_RDMA_READ, "RDMA_READ", case_read, true, 0},
	{SW_RC, IBV_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP", case_atomic, false, 0},
	{SW_RC, IBV_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD", case_atomic, false, 0},
	{SW_RC, IBV_WR_BIND_MW, "BIND_MW and LOCAL_INV (type 2)", case_window, true, 0},
	{SW_RC, IBV_WR_BIND_MW, "ibv_bind_mw (type 1)", case_window1, true, 0},
	{SW_RC, IBV_WR_SEND, "SEND inline", case_send, true, IBV_SEND_INLINE},
	{SW_RC, IBV_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM inline", case_write, true,
	 IBV_SEND_INLINE},
	{SW_UC, IBV_WR_SEND, "SEND", case_send, true, 0},
	{SW_UC, IBV_WR_SEND_WITH_IMM, "SEND_WITH_IMM", case_send, true, 0},
	{SW_UC, IBV_WR_RDMA_WRITE, "RDMA_WRITE", case_write, true, 0},
	{SW_UC, IBV_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM", case_write, true, 0},
	{SW_UC, IBV_WR_BIND_MW, "BIND_MW and LOCAL_INV (type 2)", case_window, false, 0},
	{SW_UC, IBV_WR_RDMA_WRITE, "RDMA_WRITE inline", case_write, true, IBV_SEND_INLINE},
	{SW_UD, IBV_WR_SEND, "SEND", case_send, true, 0},
	{SW_UD, IBV_WR_SEND_WITH_IMM, "SEND_WITH_IMM", case_send, true, 0},
	{SW_UD, IBV_WR_SEND_WITH_IMM, "SEND_WITH_IMM inline", case_send, true, IBV_SEND_INLINE},
};

static const char *family(const struct sw_run *r)
{
	return r->sgid == SW_GID_IPV4 ? "IPv4" : r->sgid == SW_GID_IPV6 ? "IPv6" : "link-local";
}

void sw_send_once(struct sw_run *r, enum sw_kind k, uint64_t len)
{
	case_send(r, k, IBV_WR_SEND_WITH_IMM, len);
}

void sw_sweep(struct sw_run *r, enum sw_kind k, const uint64_t *sizes, unsigned int n)
{
	for (unsigned int c = 0; c < sizeof(sw_cases) / sizeof(sw_cases[0]); c++) {
		if (sw_cases[c].kind != k)
			continue;
		for (unsigned int s = 0; s < (sw_cases[c].sized ? n : 1); s++) {
			uint64_t len = sw_cases[c].sized ? sizes[s] : 8;

			/* a UD message is one packet of the port's MTU */
			if (k == SW_UD && len > r->i0.mtu)
				continue;
			if ((sw_cases[c].flags & IBV_SEND_INLINE) && len > SW_INLINE)
				continue;
			/* a peer in RTR binds no window and writes nothing */
			if (r->peer_rtr && (sw_cases[c].op == IBV_WR_SEND_WITH_INV ||
					    sw_cases[c].op == IBV_WR_BIND_MW))
				continue;
			/* windows: the sizes that fit one, 1 byte and more than a packet */
			if (sw_cases[c].run == case_window || sw_cases[c].run == case_window1) {
				if (sw_cases[c].sized && len != 1 && len != r->pmtu + 1)
					continue;
				if (!sw_cases[c].sized)
					len = 1;
			}
			snprintf(r->what, sizeof(r->what), "%s %s, %llu bytes, MTU %u, %s",
				 sw_kind_name[k], sw_cases[c].name, (unsigned long long)len,
				 r->pmtu, family(r));
			r->send_flags = sw_cases[c].flags;
			sw_cases[c].run(r, k, sw_cases[c].op, len);
			r->send_flags = 0;
		}
	}
	if (k == SW_UD) {
		/* one byte more than a UD message may carry is refused at post */
		struct sw_reply rep = sw_local(r, (struct sw_cmd){.op = SW_POST,
								  .kind = k,
								  .wr_op = IBV_WR_SEND,
								  .id = ++r->seq,
								  .len = r->i0.mtu + 1});

		cr_expect_eq(rep.rc, -EINVAL, "UD SEND of MTU + 1 bytes: %d", rep.rc);
	}
}
