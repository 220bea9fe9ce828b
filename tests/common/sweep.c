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

#include "sweep_priv.h"

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
