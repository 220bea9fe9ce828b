/* SPDX-License-Identifier: BSD-3-Clause */
/* The transport sweep, driving side (sweep.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sweep.h"

/*
 * Frame bytes around a payload of the path MTU, at most: IPv6 (40), UDP (8),
 * BTH (12), RETH and ImmDt (RDMA WRITE Only with Immediate, 20), ICRC (4).
 */
#define SW_FRAME_OVERHEAD 84

const char *const sw_kind_name[SW_KINDS] = {"RC", "UC", "UD"};

uint32_t sw_eth_mtu(enum ibv_mtu mtu)
{
	uint32_t eth = (128u << mtu) + SW_FRAME_OVERHEAD;

	return eth < 576 ? 576 : eth;
}

/* Regions large enough for @p max_msg bytes, two SGEs apart and the guard after them. */
static uint64_t regions(struct sw_run *r, uint64_t max_msg)
{
	r->region = (max_msg + SW_GAP + 64 + 4095) & ~(uint64_t)4095;
	return SW_WIN(r) + SW_WIN_LEN;
}

static void defaults(struct sw_run *r)
{
	struct sw_reply rep = sw_peer(r, (struct sw_cmd){.op = SW_INFO});

	sw_end_info(&r->e0, &r->i0);
	r->i1 = rep.info;
	cr_assert_geq(r->i0.gid_count, 3, "e0 has %u GIDs", r->i0.gid_count);
	cr_assert_geq(r->i1.gid_count, 3, "the peer has %u GIDs", r->i1.gid_count);
	r->sgid = SW_GID_IPV4;
	r->pmtu = r->i0.mtu;
	r->mtu = IBV_MTU_256;
	while ((128u << r->mtu) < r->pmtu && r->mtu < IBV_MTU_4096)
		r->mtu++;
	/* long messages: mid-message ACKs do not restart the timer yet */
	r->timeout = 18;
}

static void ring_setup(struct sw_run *r, uint32_t eth_mtu, const char *fault, uint64_t max_msg,
		       bool loopback)
{
	char devices[1024];
	struct ibv_device **list;
	uint64_t len;
	int n;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->loopback = loopback;
	snprintf(devices, sizeof(devices),
		 "droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,ip=fd00::1,mtu=%u,link=l0%s%s "
		 "droce1:mac=02:00:00:00:00:02,ip=10.0.0.2,ip=fd00::2,mtu=%u,link=l0%s%s",
		 eth_mtu, fault != NULL ? ",fault=" : "", fault != NULL ? fault : "", eth_mtu,
		 fault != NULL ? ",fault=" : "", fault != NULL ? fault : "");
	setenv("DROCE_DEVICES", devices, 1);
	/* ring links need no DMA memory: tests side by side never fight for hugepages */
	setenv("DROCE_NO_HUGE", "1", 1);
	list = ibv_get_device_list(&n);
	cr_assert_not_null(list);
	cr_assert_geq(n, 2);
	len = regions(r, max_msg);
	cr_assert_eq(sw_end_open(&r->e0, list[0], len), 0, "open e0: %s", strerror(errno));
	/* loopback: the peer is another context of the same device */
	cr_assert_eq(sw_end_open(&r->e1, list[r->loopback ? 0 : 1], len), 0, "open e1: %s",
		     strerror(errno));
	ibv_free_device_list(list);
	defaults(r);
}

void sw_ring_setup(struct sw_run *r, uint32_t eth_mtu, const char *fault, uint64_t max_msg)
{
	ring_setup(r, eth_mtu, fault, max_msg, false);
}

void sw_loopback_setup(struct sw_run *r, uint32_t eth_mtu, uint64_t max_msg)
{
	ring_setup(r, eth_mtu, NULL, max_msg, true);
}

void sw_memif_setup(struct sw_run *r, uint32_t eth_mtu, uint64_t max_msg, unsigned int rsize)
{
	const char *peer = getenv("DROCE_SWEEP_PEER"), *tmp = getenv("TMPDIR");
	char devices[512], sock[128], len_arg[32];
	struct timeval tv = {.tv_sec = 3 * SW_LIVENESS};
	struct ibv_device **list;
	uint64_t len;
	int sv[2], n;

	memset(r, 0, sizeof(*r));
	cr_assert_not_null(peer, "DROCE_SWEEP_PEER names the peer program");
	len = regions(r, max_msg);
	snprintf(r->dir, sizeof(r->dir), "%s/droce-sweep-XXXXXX", tmp != NULL ? tmp : "/tmp");
	cr_assert_not_null(mkdtemp(r->dir));
	snprintf(sock, sizeof(sock), "%s/memif.sock", r->dir);
	snprintf(len_arg, sizeof(len_arg), "%llu", (unsigned long long)len);
	/* this process first: the server end listens before the client connects */
	snprintf(devices, sizeof(devices),
		 "droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,ip=fd00::1,mtu=%u,"
		 "vdev=net_memif0+role=server+socket=%s+socket-abstract=no+rsize=%u",
		 eth_mtu, sock, rsize);
	setenv("DROCE_DEVICES", devices, 1);
	setenv("DROCE_NO_HUGE", "1", 1);
	list = ibv_get_device_list(&n);
	cr_assert_not_null(list);
	cr_assert_geq(n, 1);
	cr_assert_eq(sw_end_open(&r->e0, list[0], len), 0, "open e0: %s", strerror(errno));
	ibv_free_device_list(list);
	/* close-on-exec: the peer holds its end only (fd 3), and sees this one close */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	r->pid = fork();
	cr_assert_geq(r->pid, 0);
	if (r->pid == 0) {
		/* the peer: its own process, its own engine, the client end of the link */
		snprintf(devices, sizeof(devices),
			 "droce0:mac=02:00:00:00:00:02,ip=10.0.0.2,ip=fd00::2,mtu=%u,"
			 "vdev=net_memif1+role=client+socket=%s+socket-abstract=no+rsize=%u",
			 eth_mtu, sock, rsize);
		setenv("DROCE_DEVICES", devices, 1);
		if (dup2(sv[1], 3) < 0)
			_exit(126);
		execl(peer, peer, "3", len_arg, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	r->fd = sv[0];
	r->remote = true;
	setsockopt(r->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	defaults(r);
}

struct sw_reply sw_peer(struct sw_run *r, struct sw_cmd c)
{
	struct sw_reply rep;

	cr_assert_not(r->gone, "%s: command %u for a peer that is gone", r->what, c.op);
	if (!r->remote) {
		sw_serve(&r->e1, &c, &rep);
		return rep;
	}
	cr_assert_eq(send(r->fd, &c, sizeof(c), MSG_NOSIGNAL), (ssize_t)sizeof(c),
		     "%s: command %u not sent: %s", r->what, c.op, strerror(errno));
	cr_assert_eq(recv(r->fd, &rep, sizeof(rep), 0), (ssize_t)sizeof(rep),
		     "%s: no reply to command %u: %s", r->what, c.op, strerror(errno));
	return rep;
}

struct sw_reply sw_local(struct sw_run *r, struct sw_cmd c)
{
	struct sw_reply rep;

	sw_serve(&r->e0, &c, &rep);
	return rep;
}

struct sw_path sw_path_of(const struct sw_run *r, enum sw_kind k, bool peer)
{
	const struct sw_info *to = peer ? &r->i0 : &r->i1;
	struct sw_path p = {
		.kind = k,
		.dest_qpn = to->qpn[k],
		.dgid = to->gid[r->sgid],
		.sgid_index = r->sgid,
		.path_mtu = (uint8_t)r->mtu,
		.timeout = r->timeout,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.min_rnr_timer = 1,
		.max_rd_atomic = 16,
		.max_dest_rd_atomic = 16,
		/* both directions' PSNs wrap during the long messages */
		.sq_psn = peer ? 0xffff00 : 0xfff000,
		.rq_psn = peer ? 0xfff000 : 0xffff00,
		.access = IBV_ACCESS_REMOTE_WRITE |
			  (k == SW_RC ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0),
	};

	return p;
}

void sw_connect(struct sw_run *r, enum sw_kind k, void (*tune)(struct sw_path *p, bool peer))
{
	struct sw_path p0 = sw_path_of(r, k, false), p1 = sw_path_of(r, k, true);
	struct sw_reply rep;
	int rc;

	if (tune != NULL) {
		tune(&p0, false);
		tune(&p1, true);
	}
	rc = sw_end_connect(&r->e0, &p0);
	cr_assert_eq(rc, 0, "connect e0 %s: %s", sw_kind_name[k], strerror(-rc));
	rep = sw_peer(r, (struct sw_cmd){.op = SW_CONNECT, .path = p1});
	cr_assert_eq(rep.rc, 0, "connect the peer's %s: %s", sw_kind_name[k], strerror(-rep.rc));
}

enum ibv_qp_state sw_state(struct sw_run *r, enum sw_kind k, bool peer)
{
	struct sw_cmd c = {.op = SW_STATE, .kind = k};
	struct sw_reply rep = peer ? sw_peer(r, c) : sw_local(r, c);

	cr_assert_eq(rep.rc, 0, "query %s QP: %s", sw_kind_name[k], strerror(-rep.rc));
	return (enum ibv_qp_state)rep.val;
}

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
static struct ibv_wc wait_send(struct sw_run *r, enum sw_kind k, uint64_t id)
{
	return sw_wait(r, false, k, false, id);
}

/* A receive completion (@p recv) or send completion of the peer's QP @p k: @p id. */
static struct ibv_wc peer_wait(struct sw_run *r, enum sw_kind k, bool recv, uint64_t id)
{
	return sw_wait(r, true, k, recv, id);
}

static void expect_success(const struct sw_run *r, const struct ibv_wc *wc, enum ibv_wc_opcode op,
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
static void fill_layout(struct sw_run *r, bool peer, uint64_t off, uint64_t len, uint32_t split,
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
static void expect_layout(struct sw_run *r, bool peer, uint64_t off, uint64_t len, uint32_t split,
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
static uint32_t send_split(uint64_t len)
{
	return len > 2 && (len & 1) ? (uint32_t)(len / 3) : 0;
}

static uint32_t recv_split(uint64_t len)
{
	return len > 2 && (len & 1) ? (uint32_t)(len / 2 + 1) : 0;
}

/* ------------------------------------------------------------ the operations */

/* SEND, SEND_WITH_IMM, SEND_WITH_INV: into a receive posted at the peer. */
static void case_send(struct sw_run *r, enum sw_kind k, enum ibv_wr_opcode op, uint64_t len)
{
	uint32_t seed = ++r->seq, ss = send_split(len), rs = k == SW_UD ? 0 : recv_split(len);
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
	fill_layout(r, true, roff, grh + len, rs, SW_ZERO);
	rep = sw_peer(r, (struct sw_cmd){.op = SW_RECV,
					 .kind = k,
					 .id = seed,
					 .off = roff,
					 .len = grh + len,
					 .split = rs});
	cr_assert_eq(rep.rc, 0, "%s: post_recv: %s", r->what, strerror(-rep.rc));
	fill_layout(r, false, SW_SRC(r), len, ss, seed);
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
		fill_layout(r, false, SW_SRC(r), len, ss, SW_ZERO);
	wc = wait_send(r, k, seed);
	expect_success(r, &wc, IBV_WC_SEND, "send");
	wc = peer_wait(r, k, true, seed);
	expect_success(r, &wc, IBV_WC_RECV, "receive");
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
	expect_layout(r, true, roff + grh, len, rs, seed);
}

/* UC has no acknowledgement: a zero-byte SEND behind a WRITE tells when it is placed. */
static void uc_marker(struct sw_run *r)
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
	wc = wait_send(r, SW_UC, id);
	expect_success(r, &wc, IBV_WC_SEND, "marker send");
	wc = peer_wait(r, SW_UC, true, id);
	expect_success(r, &wc, IBV_WC_RECV, "marker receive");
}

/* RDMA WRITE and WRITE_WITH_IMM into the peer's buffer. */
static void case_write(struct sw_run *r, enum sw_kind k, enum ibv_wr_opcode op, uint64_t len)
{
	uint32_t seed = ++r->seq, ss = send_split(len);
	struct sw_reply rep;
	struct ibv_wc wc;

	fill_layout(r, true, SW_DST(r), len, 0, SW_ZERO);
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		rep = sw_peer(r, (struct sw_cmd){.op = SW_RECV, .kind = k, .id = seed});
		cr_assert_eq(rep.rc, 0);
	}
	fill_layout(r, false, SW_SRC(r), len, ss, seed);
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
		fill_layout(r, false, SW_SRC(r), len, ss, SW_ZERO);
	wc = wait_send(r, k, seed);
	expect_success(r, &wc, IBV_WC_RDMA_WRITE, "send");
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		wc = peer_wait(r, k, true, seed);
		expect_success(r, &wc, IBV_WC_RECV_RDMA_WITH_IMM, "receive");
		cr_expect_eq(wc.byte_len, len, "%s: byte_len %u", r->what, wc.byte_len);
		cr_expect(wc.wc_flags & IBV_WC_WITH_IMM, "%s: no immediate", r->what);
		cr_expect_eq(be32toh(wc.imm_data), seed, "%s: immediate %u", r->what,
			     be32toh(wc.imm_data));
	} else if (k == SW_UC) {
		uc_marker(r);
	}
	expect_layout(r, true, SW_DST(r), len, 0, seed);
}

/* RDMA READ of the peer's buffer into two SGEs (odd sizes) or one. */
static void case_read(struct sw_run *r, enum sw_kind k, enum ibv_wr_opcode op, uint64_t len)
{
	uint32_t seed = ++r->seq, rs = recv_split(len);
	struct sw_reply rep;
	struct ibv_wc wc;

	rep = sw_peer(r,
		      (struct sw_cmd){.op = SW_FILL, .off = SW_SRC(r), .len = len, .seed = seed});
	cr_assert_eq(rep.rc, 0);
	fill_layout(r, false, SW_DST(r), len, rs, SW_ZERO);
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
	wc = wait_send(r, k, seed);
	expect_success(r, &wc, IBV_WC_RDMA_READ, "send");
	cr_expect_eq(wc.byte_len, len, "%s: byte_len %u", r->what, wc.byte_len);
	expect_layout(r, false, SW_DST(r), len, rs, seed);
}

static uint64_t get64(struct sw_run *r, bool peer, uint64_t off)
{
	struct sw_reply rep = sw_on(r, peer, (struct sw_cmd){.op = SW_GET64, .off = off});

	cr_assert_eq(rep.rc, 0);
	return (uint64_t)rep.val;
}

static void put64(struct sw_run *r, bool peer, uint64_t off, uint64_t v)
{
	struct sw_reply rep = sw_on(r, peer, (struct sw_cmd){.op = SW_PUT64, .off = off, .val = v});

	cr_assert_eq(rep.rc, 0);
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
	wc = wait_send(r, SW_RC, id);
	expect_success(r, &wc,
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

		put64(r, true, offs[i], v0);
		put64(r, false, SW_DST(r), 0x5a5a5a5a5a5a5a5aull);
		if (op == IBV_WR_ATOMIC_CMP_AND_SWP) {
			/* equal: swapped */
			atomic_once(r, op, offs[i], v0, v1);
			cr_expect_eq(get64(r, false, SW_DST(r)), v0, "%s: original value", r->what);
			cr_expect_eq(get64(r, true, offs[i]), v1, "%s: swapped value", r->what);
			/* different: left alone, the current value returned */
			atomic_once(r, op, offs[i], v0, 77);
			cr_expect_eq(get64(r, false, SW_DST(r)), v1, "%s: current value", r->what);
			cr_expect_eq(get64(r, true, offs[i]), v1, "%s: not swapped", r->what);
		} else {
			/* the sum wraps at 2^64 */
			put64(r, true, offs[i], ~0ull - 0x10);
			atomic_once(r, op, offs[i], 0x25, 0);
			cr_expect_eq(get64(r, false, SW_DST(r)), ~0ull - 0x10, "%s: original value",
				     r->what);
			cr_expect_eq(get64(r, true, offs[i]), 0x14, "%s: sum", r->what);
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
	expect_success(r, &rep.wc, IBV_WC_BIND_MW, "bind");
	rkey = (uint32_t)rep.val;
	if (k == SW_RC) {
		fill_layout(r, false, SW_WIN(r), n, 0, SW_ZERO);
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
		wc = peer_wait(r, k, false, seed);
		expect_success(r, &wc, IBV_WC_RDMA_WRITE, "WRITE through the window");
		expect_layout(r, false, SW_WIN(r), n, 0, seed);
		fill_layout(r, true, SW_DST(r), n, 0, SW_ZERO);
		rep = sw_peer(r, (struct sw_cmd){.op = SW_POST,
						 .kind = k,
						 .wr_op = IBV_WR_RDMA_READ,
						 .id = seed + 1,
						 .off = SW_DST(r),
						 .len = n,
						 .addr = r->i0.addr + SW_WIN(r),
						 .rkey = rkey});
		cr_assert_eq(rep.rc, 0);
		wc = peer_wait(r, k, false, seed + 1);
		expect_success(r, &wc, IBV_WC_RDMA_READ, "READ through the window");
		expect_layout(r, true, SW_DST(r), n, 0, seed);
		r->seq++;
	}
	rep = sw_local(r, (struct sw_cmd){.op = SW_POST,
					  .kind = k,
					  .wr_op = IBV_WR_LOCAL_INV,
					  .id = seed + 2,
					  .imm = rkey});
	cr_assert_eq(rep.rc, 0, "%s: post LOCAL_INV: %s", r->what, strerror(-rep.rc));
	wc = wait_send(r, k, seed + 2);
	expect_success(r, &wc, IBV_WC_LOCAL_INV, "LOCAL_INV");
	rep = sw_local(r, (struct sw_cmd){.op = SW_BIND,
					  .kind = k,
					  .id = seed + 3,
					  .recv = 1, /* the same window again */
					  .off = SW_WIN(r),
					  .len = 64,
					  .val = IBV_ACCESS_REMOTE_READ});
	cr_assert_eq(rep.rc, 0);
	expect_success(r, &rep.wc, IBV_WC_BIND_MW, "bind after LOCAL_INV");
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
	wc = wait_send(r, k, seed);
	expect_success(r, &wc, IBV_WC_BIND_MW, "bind");
	fill_layout(r, false, SW_WIN(r), n, 0, SW_ZERO);
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
	wc = peer_wait(r, k, false, seed);
	expect_success(r, &wc, IBV_WC_RDMA_WRITE, "WRITE through the window");
	expect_layout(r, false, SW_WIN(r), n, 0, seed);
	/* unbind: a zero-length bind */
	b.wr_id = ++r->seq;
	b.bind_info.length = 0;
	b.bind_info.mr = NULL;
	b.bind_info.addr = 0;
	cr_assert_eq(ibv_bind_mw(r->e0.qp[k], mw, &b), 0, "%s: unbind: %s", r->what,
		     strerror(errno));
	wc = wait_send(r, k, b.wr_id);
	expect_success(r, &wc, IBV_WC_BIND_MW, "unbind");
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

/* ------------------------------------------------------------ bursts */

static bool burst_takes_recv(enum ibv_wr_opcode op)
{
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

static bool burst_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP;
}

/*
 * Post @p n messages of @p m from e0 in one ibv_post_send(): message i uses slot
 * i of each region (@p slot bytes apart; atomics the i-th 8 bytes of both ends'
 * ATOM regions).
 */
static void burst_post(struct sw_run *r, enum sw_kind k, struct sw_burst_msg *m, uint32_t n,
		       uint64_t slot)
{
	static struct ibv_send_wr wr[256];
	static struct ibv_sge sge[256][2];
	struct ibv_send_wr *bad = NULL;
	int rc;

	cr_assert_leq(n, 256);
	for (uint32_t i = 0; i < n; i++) {
		struct ibv_send_wr *w = &wr[i];
		uint64_t off = i * slot;
		uint32_t split;

		memset(w, 0, sizeof(*w));
		w->wr_id = m[i].seed;
		w->opcode = m[i].op;
		w->next = i + 1 < n ? &wr[i + 1] : NULL;
		w->sg_list = sge[i];
		w->send_flags = m[i].signaled ? IBV_SEND_SIGNALED : 0;
		if (burst_atomic(m[i].op)) {
			/* the original value into e0's ATOM region, as the target is the peer's */
			sge[i][0] =
				(struct ibv_sge){.addr = (uintptr_t)r->e0.buf + SW_ATOM(r) + 8 * i,
						 .length = 8,
						 .lkey = r->e0.mr->lkey};
			w->num_sge = 1;
			w->wr.atomic.remote_addr = r->i1.addr + SW_ATOM(r) + 8 * i;
			w->wr.atomic.rkey = r->i1.rkey;
			w->wr.atomic.compare_add =
				m[i].op == IBV_WR_ATOMIC_CMP_AND_SWP ? m[i].seed : i;
			w->wr.atomic.swap = ~(uint64_t)m[i].seed;
			continue;
		}
		/* READ: into two SGEs of DST; the rest: out of two SGEs of SRC */
		off += m[i].op == IBV_WR_RDMA_READ ? SW_DST(r) : SW_SRC(r);
		split = m[i].op == IBV_WR_RDMA_READ ? recv_split(m[i].len) : send_split(m[i].len);
		sge[i][0] = (struct ibv_sge){.addr = (uintptr_t)r->e0.buf + off,
					     .length = (uint32_t)m[i].len,
					     .lkey = r->e0.mr->lkey};
		w->num_sge = m[i].len > 0 ? 1 : 0;
		if (split > 0) {
			sge[i][0].length = split;
			sge[i][1] = (struct ibv_sge){.addr = (uintptr_t)r->e0.buf + off + split +
							     SW_GAP,
						     .length = (uint32_t)m[i].len - split,
						     .lkey = r->e0.mr->lkey};
			w->num_sge = 2;
		}
		w->imm_data = htobe32(m[i].seed);
		if (k == SW_UD) {
			w->wr.ud.ah = r->e0.ah;
			w->wr.ud.remote_qpn = r->e0.ud_dqpn;
			w->wr.ud.remote_qkey = SW_QKEY;
		} else {
			w->wr.rdma.remote_addr =
				r->i1.addr + (m[i].op == IBV_WR_RDMA_READ ? SW_SRC(r) : SW_DST(r)) +
				i * slot;
			w->wr.rdma.rkey = r->i1.rkey;
		}
	}
	rc = ibv_post_send(r->e0.qp[k], wr, &bad);
	cr_assert_eq(rc, 0, "%s: post %u requests: %s (at %ld)", r->what, n, strerror(rc),
		     bad != NULL ? (long)(bad - wr) : -1L);
}

/* Fill what a burst sends and clear where it lands. */
static void burst_prepare(struct sw_run *r, enum sw_kind k, struct sw_burst_msg *m, uint32_t n,
			  uint64_t slot)
{
	uint32_t recvs = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = i * slot, grh = k == SW_UD ? 40 : 0;
		struct sw_reply rep;

		m[i].recv = UINT32_MAX;
		if (burst_atomic(m[i].op)) {
			put64(r, true, SW_ATOM(r) + 8 * i, m[i].seed);
			put64(r, false, SW_ATOM(r) + 8 * i, 0);
			continue;
		}
		if (m[i].op == IBV_WR_RDMA_READ) {
			rep = sw_peer(r, (struct sw_cmd){.op = SW_FILL,
							 .off = SW_SRC(r) + off,
							 .len = m[i].len,
							 .seed = m[i].seed});
			cr_assert_eq(rep.rc, 0);
			fill_layout(r, false, SW_DST(r) + off, m[i].len, recv_split(m[i].len),
				    SW_ZERO);
			continue;
		}
		fill_layout(r, false, SW_SRC(r) + off, m[i].len, send_split(m[i].len), m[i].seed);
		if (m[i].op == IBV_WR_RDMA_WRITE || m[i].op == IBV_WR_RDMA_WRITE_WITH_IMM)
			fill_layout(r, true, SW_DST(r) + off, m[i].len, 0, SW_ZERO);
		if (!burst_takes_recv(m[i].op))
			continue;
		/* receives in the order the messages arrive; a SEND lands in the slot of its
		 * receive, split in two as the sweep does */
		m[i].recv = recvs++;
		if (m[i].op == IBV_WR_RDMA_WRITE_WITH_IMM) {
			rep = sw_peer(r,
				      (struct sw_cmd){.op = SW_RECV, .kind = k, .id = m[i].seed});
		} else {
			fill_layout(r, true, SW_RECV(r) + off, grh + m[i].len,
				    k == SW_UD ? 0 : recv_split(m[i].len), SW_ZERO);
			rep = sw_peer(
				r, (struct sw_cmd){.op = SW_RECV,
						   .kind = k,
						   .id = m[i].seed,
						   .off = SW_RECV(r) + off,
						   .len = grh + m[i].len,
						   .split = k == SW_UD ? 0 : recv_split(m[i].len)});
		}
		cr_assert_eq(rep.rc, 0, "%s: post_recv: %s", r->what, strerror(-rep.rc));
	}
}

/* The completions of a burst, in order, and every byte where it belongs. */
static void burst_check(struct sw_run *r, enum sw_kind k, struct sw_burst_msg *m, uint32_t n,
			uint64_t slot)
{
	char what[64];

	snprintf(what, sizeof(what), "%.63s", r->what);
	/* the signaled requests complete in order, the unsignaled ones silently */
	for (uint32_t i = 0; i < n; i++) {
		struct ibv_wc wc;

		if (!m[i].signaled)
			continue;
		wc = wait_send(r, k, m[i].seed);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s: message %u (op %d, %llu bytes): %s",
			     r->what, i, m[i].op, (unsigned long long)m[i].len,
			     ibv_wc_status_str(wc.status));
	}
	/* the receives in the order of their messages */
	for (uint32_t i = 0; i < n; i++) {
		uint64_t grh = k == SW_UD ? 40 : 0;
		struct ibv_wc wc;

		if (m[i].recv == UINT32_MAX)
			continue;
		snprintf(r->what, sizeof(r->what), "%s, message %u (op %d, %llu bytes)", what, i,
			 m[i].op, (unsigned long long)m[i].len);
		wc = peer_wait(r, k, true, m[i].seed);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s: receive %s", r->what,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.byte_len, grh + m[i].len, "%s: %u bytes received", r->what,
			     wc.byte_len);
		if (m[i].op != IBV_WR_SEND)
			cr_expect_eq(be32toh(wc.imm_data), m[i].seed, "%s: immediate", r->what);
	}
	/* UC completes a WRITE once sent: a last SEND tells when everything arrived */
	if (k == SW_UC)
		uc_marker(r);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = i * slot, grh = k == SW_UD ? 40 : 0;

		snprintf(r->what, sizeof(r->what), "%s, message %u (op %d, %llu bytes)", what, i,
			 m[i].op, (unsigned long long)m[i].len);
		if (burst_atomic(m[i].op)) {
			uint64_t want = m[i].op == IBV_WR_ATOMIC_CMP_AND_SWP ? ~(uint64_t)m[i].seed
									     : m[i].seed + i;

			cr_expect_eq(get64(r, false, SW_ATOM(r) + 8 * i), m[i].seed,
				     "%s: original value", r->what);
			cr_expect_eq(get64(r, true, SW_ATOM(r) + 8 * i), want, "%s: result",
				     r->what);
		} else if (m[i].op == IBV_WR_RDMA_READ) {
			expect_layout(r, false, SW_DST(r) + off, m[i].len, recv_split(m[i].len),
				      m[i].seed);
		} else if (m[i].op == IBV_WR_RDMA_WRITE || m[i].op == IBV_WR_RDMA_WRITE_WITH_IMM) {
			expect_layout(r, true, SW_DST(r) + off, m[i].len, 0, m[i].seed);
		} else {
			expect_layout(r, true, SW_RECV(r) + off + grh, m[i].len,
				      k == SW_UD ? 0 : recv_split(m[i].len), m[i].seed);
		}
	}
	snprintf(r->what, sizeof(r->what), "%s", what);
}

static const enum ibv_wr_opcode burst_rc_ops[] = {IBV_WR_SEND,
						  IBV_WR_RDMA_WRITE,
						  IBV_WR_RDMA_READ,
						  IBV_WR_SEND_WITH_IMM,
						  IBV_WR_RDMA_READ,
						  IBV_WR_RDMA_WRITE_WITH_IMM,
						  IBV_WR_ATOMIC_FETCH_AND_ADD,
						  IBV_WR_RDMA_READ,
						  IBV_WR_ATOMIC_CMP_AND_SWP};
static const enum ibv_wr_opcode burst_uc_ops[] = {IBV_WR_SEND, IBV_WR_RDMA_WRITE,
						  IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM};
static const enum ibv_wr_opcode burst_ud_ops[] = {IBV_WR_SEND, IBV_WR_SEND_WITH_IMM};

/* Message @p i of the rotation: operation (o + s) % nops at size s. false past the end. */
static bool burst_next(const struct sw_run *r, enum sw_kind k, const uint64_t *sizes,
		       unsigned int nsizes, uint64_t max_len, uint32_t *cursor,
		       struct sw_burst_msg *m)
{
	const enum ibv_wr_opcode *ops = k == SW_RC   ? burst_rc_ops
					: k == SW_UC ? burst_uc_ops
						     : burst_ud_ops;
	unsigned int nops = k == SW_RC   ? sizeof(burst_rc_ops) / sizeof(burst_rc_ops[0])
			    : k == SW_UC ? sizeof(burst_uc_ops) / sizeof(burst_uc_ops[0])
					 : sizeof(burst_ud_ops) / sizeof(burst_ud_ops[0]);

	for (; *cursor < nsizes * nops; (*cursor)++) {
		unsigned int s = *cursor / nops, o = *cursor % nops;
		enum ibv_wr_opcode op = ops[(o + s) % nops];
		uint64_t len = burst_atomic(op) ? 8 : sizes[s];

		if (len > max_len || (k == SW_UD && len > r->i0.mtu))
			continue;
		*m = (struct sw_burst_msg){.op = op, .len = len};
		(*cursor)++;
		return true;
	}
	return false;
}

void sw_burst_post(struct sw_run *r, enum sw_kind k, struct sw_burst *b, const uint64_t *sizes,
		   unsigned int nsizes, uint64_t max_len, uint32_t *cursor)
{
	uint32_t per;

	b->slot = (max_len + 40 + SW_GAP + 64 + 4095) & ~(uint64_t)4095;
	per = (uint32_t)(r->region / b->slot);
	cr_assert_gt(per, 0, "%s: no room for a burst of %llu-byte messages", r->what,
		     (unsigned long long)max_len);
	if (per > SW_BURST_MAX)
		per = SW_BURST_MAX;
	/* every size with every operation, as many as the regions hold */
	for (b->n = 0; b->n < per; b->n++) {
		struct sw_burst_msg *m = &b->m[b->n];

		if (!burst_next(r, k, sizes, nsizes, max_len, cursor, m))
			break;
		m->seed = ++r->seq;
		/* unsignaled now and then (the last of a burst always signaled) */
		m->signaled = k != SW_RC || b->n % 4 != 1;
	}
	if (b->n == 0)
		return;
	b->m[b->n - 1].signaled = true;
	burst_prepare(r, k, b->m, b->n, b->slot);
	burst_post(r, k, b->m, b->n, b->slot);
}

void sw_burst_check(struct sw_run *r, enum sw_kind k, struct sw_burst *b)
{
	if (b->n > 0)
		burst_check(r, k, b->m, b->n, b->slot);
}

void sw_burst(struct sw_run *r, enum sw_kind k, const uint64_t *sizes, unsigned int nsizes,
	      uint64_t max_len)
{
	static struct sw_burst b;
	uint32_t cursor = 0;

	do {
		snprintf(r->what, sizeof(r->what), "%s burst, MTU %u", sw_kind_name[k], r->pmtu);
		sw_burst_post(r, k, &b, sizes, nsizes, max_len, &cursor);
		sw_burst_check(r, k, &b);
	} while (b.n > 0);
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

void sw_settle(struct sw_run *r)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct sw_reply a = sw_peer(r, (struct sw_cmd){.op = SW_STATS});
		struct sw_reply b = sw_local(r, (struct sw_cmd){.op = SW_STATS});

		cr_assert_eq(a.rc, 0);
		cr_assert_eq(b.rc, 0);
		/* every frame sent either way was received and processed */
		if ((uint64_t)a.val == b.wc.wr_id && (uint64_t)b.val == a.wc.wr_id)
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 5);
	cr_assert_fail("%s: the link never settled", r->what);
}

void sw_quiet(struct sw_run *r, enum sw_kind k)
{
	for (int peer = 0; peer < 2; peer++) {
		for (int recv = 0; recv < 2; recv++) {
			struct sw_reply rep = sw_on(
				r, peer,
				(struct sw_cmd){.op = SW_POLL, .kind = k, .recv = (uint32_t)recv});

			cr_expect_eq(rep.rc, -EAGAIN, "%s %s: a %s completion too many (%llu, %s)",
				     sw_kind_name[k], peer ? "peer" : "e0",
				     recv ? "receive" : "send", (unsigned long long)rep.wc.wr_id,
				     ibv_wc_status_str(rep.wc.status));
		}
		cr_expect_eq(sw_state(r, k, peer), IBV_QPS_RTS, "%s %s QP left RTS",
			     sw_kind_name[k], peer ? "peer" : "e0");
	}
}

void sw_finish(struct sw_run *r)
{
	struct sw_reply rep = sw_local(r, (struct sw_cmd){.op = SW_FINISH});

	cr_expect_eq(rep.rc, 0, "destroy e0's QPs: %s", strerror(-rep.rc));
	cr_expect_eq(rep.val, 0, "e0's port: %lld mbufs not back in the pool", (long long)rep.val);
	if (r->gone)
		return;
	rep = sw_peer(r, (struct sw_cmd){.op = SW_FINISH});
	cr_expect_eq(rep.rc, 0, "destroy the peer's QPs: %s", strerror(-rep.rc));
	cr_expect_eq(rep.val, 0, "the peer's port: %lld mbufs not back in the pool",
		     (long long)rep.val);
	sw_peer_exit(r);
}

void sw_cleanup(struct sw_run *r)
{
	/* a test that failed half way: the peer sees its socket close and exits */
	if (r->remote) {
		close(r->fd);
		waitpid(r->pid, NULL, 0);
		r->remote = false;
		r->gone = true;
	}
	if (r->dir[0] != '\0') {
		char sock[128];

		snprintf(sock, sizeof(sock), "%s/memif.sock", r->dir);
		unlink(sock);
		rmdir(r->dir);
		r->dir[0] = '\0';
	}
}

void sw_peer_exit(struct sw_run *r)
{
	int status = 0;

	if (!r->remote)
		return;
	sw_peer(r, (struct sw_cmd){.op = SW_EXIT});
	cr_expect_eq(waitpid(r->pid, &status, 0), r->pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "peer exit status %#x", status);
	close(r->fd);
	r->remote = false;
	r->gone = true;
	sw_cleanup(r);
}

unsigned int sw_sizes(const struct sw_run *r, uint64_t big, uint64_t *out)
{
	unsigned int n = 0;

	out[n++] = 0;
	out[n++] = 1;
	out[n++] = r->pmtu - 1;
	out[n++] = r->pmtu;
	out[n++] = r->pmtu + 1;
	out[n++] = 64ull * r->pmtu + 1;
	if (big > 0)
		out[n++] = big;
	return n;
}
