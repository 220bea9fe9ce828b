/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every completion status provoked on purpose over a ring link in one process
 * (tests/common/sweep_status.c has the cases and what each end must show):
 * REM_ACCESS_ERR, REM_INV_REQ_ERR, REM_OP_ERR, LOC_PROT_ERR, LOC_LEN_ERR,
 * MW_BIND_ERR, RNR_RETRY_EXC_ERR, RETRY_EXC_ERR (the peer gone, a link losing
 * everything), WR_FLUSH_ERR behind each, the QP states, the asynchronous
 * events, recovery through RESET, and the pools back where they started.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <stdio.h>

#include "sweep.h"

static void run(const char *name)
{
	static struct sw_run r;

	sw_ring_setup(&r, sw_eth_mtu(IBV_MTU_1024), sw_status_fault(name), 64 << 10);
	sw_status(&r, name);
	sw_finish(&r);
}

TestSuite(sweep_status, .timeout = 60);

Test(sweep_status, rem_access_bad_rkey)
{
	run("rem_access_bad_rkey");
}

Test(sweep_status, rem_access_write_beyond_mr)
{
	run("rem_access_write_beyond_mr");
}

Test(sweep_status, rem_access_read_without_right)
{
	run("rem_access_read_without_right");
}

Test(sweep_status, rem_access_atomic_without_right)
{
	run("rem_access_atomic_without_right");
}

Test(sweep_status, rem_access_qp_without_remote_read)
{
	run("rem_access_qp_without_remote_read");
}

Test(sweep_status, rem_access_invalidated_window)
{
	run("rem_access_invalidated_window");
}

Test(sweep_status, rem_inv_req_message_too_long)
{
	run("rem_inv_req_message_too_long");
}

Test(sweep_status, rem_inv_req_invalidate_bad_rkey)
{
	run("rem_inv_req_invalidate_bad_rkey");
}

Test(sweep_status, rem_op_receive_bad_lkey)
{
	run("rem_op_receive_bad_lkey");
}

Test(sweep_status, loc_prot_send_bad_lkey)
{
	run("loc_prot_send_bad_lkey");
}

Test(sweep_status, loc_prot_read_into_read_only)
{
	run("loc_prot_read_into_read_only");
}

Test(sweep_status, loc_prot_atomic_into_read_only)
{
	run("loc_prot_atomic_into_read_only");
}

Test(sweep_status, loc_prot_local_inv_bad_key)
{
	run("loc_prot_local_inv_bad_key");
}

Test(sweep_status, mw_bind_beyond_mr)
{
	run("mw_bind_beyond_mr");
}

Test(sweep_status, mw_bind_bound_window)
{
	run("mw_bind_bound_window");
}

Test(sweep_status, rnr_retry_exc)
{
	run("rnr_retry_exc");
}

Test(sweep_status, retry_exc_peer_gone)
{
	run("retry_exc_peer_gone");
}

Test(sweep_status, retry_exc_peer_gone_read)
{
	run("retry_exc_peer_gone_read");
}

Test(sweep_status, retry_exc_peer_gone_atomic)
{
	run("retry_exc_peer_gone_atomic");
}

Test(sweep_status, retry_exc_link_drops_all)
{
	run("retry_exc_link_drops_all");
}

Test(sweep_status, uc_loc_prot_receive_bad_lkey)
{
	run("uc_loc_prot_receive_bad_lkey");
}

Test(sweep_status, ud_loc_prot_receive_bad_lkey)
{
	run("ud_loc_prot_receive_bad_lkey");
}

/*
 * The application moves QPs to Error with work outstanding: RC SENDs held by RNR
 * NAKs (the peer has no receive) and what is queued behind them, and receives;
 * everything completes flushed, in order, with no event; nothing behind the
 * held SEND ran at the peer.
 */
static void flush_by_modify(enum sw_kind k)
{
	static struct sw_run r;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
	struct sw_reply rep;
	struct ibv_wc wc;

	sw_ring_setup(&r, sw_eth_mtu(IBV_MTU_1024), NULL, 64 << 10);
	snprintf(r.what, sizeof(r.what), "%s modified to Error", sw_kind_name[k]);
	sw_connect(&r, k, NULL);
	sw_send_once(&r, k, 10);
	rep = sw_peer(
		&r, (struct sw_cmd){.op = SW_FILL, .off = SW_DST(&r), .len = 64, .seed = SW_ZERO});
	cr_assert_eq(rep.rc, 0);
	for (uint64_t id = 11; id <= 13; id++) {
		rep = sw_local(
			&r,
			(struct sw_cmd){
				.op = SW_RECV, .kind = k, .id = id, .off = SW_RECV(&r), .len = 64});
		cr_assert_eq(rep.rc, 0);
	}
	if (k == SW_RC) {
		/* a SEND the peer has no receive for, a WRITE and a READ behind it */
		sw_fill(r.e0.buf + SW_SRC(&r), 64, 5, 0);
		rep = sw_local(&r, (struct sw_cmd){.op = SW_POST,
						   .kind = k,
						   .wr_op = IBV_WR_SEND,
						   .id = 1,
						   .len = 64});
		cr_assert_eq(rep.rc, 0);
		rep = sw_local(&r, (struct sw_cmd){.op = SW_POST,
						   .kind = k,
						   .wr_op = IBV_WR_RDMA_WRITE,
						   .id = 2,
						   .off = SW_SRC(&r),
						   .len = 64,
						   .addr = r.i1.addr + SW_DST(&r),
						   .rkey = r.i1.rkey});
		cr_assert_eq(rep.rc, 0);
		rep = sw_local(&r, (struct sw_cmd){.op = SW_POST,
						   .kind = k,
						   .wr_op = IBV_WR_RDMA_READ,
						   .id = 3,
						   .off = SW_DST(&r),
						   .len = 64,
						   .addr = r.i1.addr + SW_SRC(&r),
						   .rkey = r.i1.rkey});
		cr_assert_eq(rep.rc, 0);
		/* the SEND is being refused: nothing completes */
		cr_expect_eq(sw_poll_one(r.e0.scq[k], &wc, 0), -EAGAIN, "%s: %llu completed (%s)",
			     r.what, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	}
	cr_assert_eq(ibv_modify_qp(r.e0.qp[k], &a, IBV_QP_STATE), 0);
	for (uint64_t id = 1; k == SW_RC && id <= 3; id++) {
		wc = sw_wait(&r, false, k, false, id);
		cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s: send %llu %s", r.what,
			     (unsigned long long)id, ibv_wc_status_str(wc.status));
	}
	for (uint64_t id = 11; id <= 13; id++) {
		wc = sw_wait(&r, false, k, true, id);
		cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s: receive %llu %s", r.what,
			     (unsigned long long)id, ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.qp_num, r.i0.qpn[k]);
	}
	cr_expect_eq(sw_state(&r, k, false), IBV_QPS_ERR);
	rep = sw_local(&r, (struct sw_cmd){.op = SW_ASYNC});
	cr_expect_eq(rep.rc, -EAGAIN, "%s: event %s", r.what,
		     ibv_event_type_str((enum ibv_event_type)rep.val));
	/* the peer: still RTS, nothing received, the WRITE behind the held SEND not done */
	sw_settle(&r);
	cr_expect_eq(sw_state(&r, k, true), IBV_QPS_RTS);
	rep = sw_peer(&r, (struct sw_cmd){.op = SW_POLL, .kind = k, .recv = 1});
	cr_expect_eq(rep.rc, -EAGAIN, "%s: the peer received %llu", r.what,
		     (unsigned long long)rep.wc.wr_id);
	rep = sw_peer(
		&r, (struct sw_cmd){.op = SW_CHECK, .off = SW_DST(&r), .len = 64, .seed = SW_ZERO});
	cr_expect_eq(rep.val, -1, "%s: the WRITE behind the held SEND ran", r.what);
	sw_finish(&r);
}

Test(sweep_status, wr_flush_err_rc_modified_to_error)
{
	flush_by_modify(SW_RC);
}

Test(sweep_status, wr_flush_err_uc_modified_to_error)
{
	flush_by_modify(SW_UC);
}

Test(sweep_status, wr_flush_err_ud_modified_to_error)
{
	flush_by_modify(SW_UD);
}

static void t_peer_rtr_only(struct sw_path *p, bool peer)
{
	p->rtr_only = peer;
}

/* A responder answers from RTR on: every operation to a peer that never reached RTS. */
Test(sweep_status, responder_in_rtr_answers)
{
	static struct sw_run r;
	uint64_t sizes[] = {0, 1, 1025, 5000};

	sw_ring_setup(&r, sw_eth_mtu(IBV_MTU_1024), NULL, 64 << 10);
	r.peer_rtr = true;
	sw_connect(&r, SW_RC, t_peer_rtr_only);
	cr_assert_eq(sw_state(&r, SW_RC, true), IBV_QPS_RTR);
	sw_sweep(&r, SW_RC, sizes, 4);
	cr_expect_eq(sw_state(&r, SW_RC, true), IBV_QPS_RTR);
	cr_expect_eq(sw_state(&r, SW_RC, false), IBV_QPS_RTS);
	sw_finish(&r);
}

/*
 * More completions than a CQ holds: the ones that do not fit are lost, and the
 * application must learn it: a CQ error event (IBV_EVENT_CQ_ERR), once.
 */
Test(sweep_status, cq_overrun_raises_cq_error)
{
	static struct sw_run r;
	struct ibv_cq *small;
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 64, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_async_event ev;
	struct sw_reply rep;
	struct pollfd pfd;
	int i;

	sw_ring_setup(&r, sw_eth_mtu(IBV_MTU_1024), NULL, 64 << 10);
	/* e0's RC QP again, its send CQ a small one */
	small = ibv_create_cq(r.e0.ctx, 4, NULL, NULL, 0);
	cr_assert_not_null(small);
	cr_assert_eq(ibv_destroy_qp(r.e0.qp[SW_RC]), 0);
	ia.send_cq = small;
	ia.recv_cq = r.e0.rcq[SW_RC];
	r.e0.qp[SW_RC] = ibv_create_qp(r.e0.pd, &ia);
	cr_assert_not_null(r.e0.qp[SW_RC]);
	r.e0.scq[SW_RC] = small;
	r.i0.qpn[SW_RC] = r.e0.qp[SW_RC]->qp_num;
	sw_connect(&r, SW_RC, NULL);
	snprintf(r.what, sizeof(r.what), "CQ of %d entries", small->cqe);
	for (i = 0; i < small->cqe + 8; i++) {
		rep = sw_local(&r, (struct sw_cmd){.op = SW_POST,
						   .kind = SW_RC,
						   .wr_op = IBV_WR_RDMA_WRITE,
						   .id = (uint64_t)i,
						   .len = 1,
						   .addr = r.i1.addr + SW_DST(&r),
						   .rkey = r.i1.rkey});
		cr_assert_eq(rep.rc, 0, "post %d: %s", i, strerror(-rep.rc));
	}
	sw_settle(&r);
	pfd = (struct pollfd){.fd = r.e0.ctx->async_fd, .events = POLLIN};
	cr_assert_eq(poll(&pfd, 1, 5000), 1, "%s: %d completions and no CQ error", r.what,
		     small->cqe + 8);
	cr_assert_eq(ibv_get_async_event(r.e0.ctx, &ev), 0);
	cr_expect_eq(ev.event_type, IBV_EVENT_CQ_ERR, "%s: event %s", r.what,
		     ibv_event_type_str(ev.event_type));
	cr_expect_eq(ev.element.cq, small);
	ibv_ack_async_event(&ev);
	/* once */
	cr_expect_eq(poll(&pfd, 1, 0), 0, "%s: a second event", r.what);
	sw_finish(&r);
}

/*
 * UD Q_Keys: a datagram with another Q_Key is dropped and takes no receive; one
 * whose work request sets the Q_Key's high bit goes with the sending QP's own
 * Q_Key (the Q_Key rules of IBTA chapter 10) and arrives.
 */
Test(sweep_status, ud_qkeys)
{
	static struct sw_run r;
	struct sw_reply rep;
	struct ibv_wc wc;

	sw_ring_setup(&r, sw_eth_mtu(IBV_MTU_1024), NULL, 64 << 10);
	sw_connect(&r, SW_UD, NULL);
	snprintf(r.what, sizeof(r.what), "UD Q_Keys");
	rep = sw_peer(
		&r,
		(struct sw_cmd){
			.op = SW_RECV, .kind = SW_UD, .id = 7, .off = SW_RECV(&r), .len = 40 + 64});
	cr_assert_eq(rep.rc, 0);
	/* another Q_Key: sent, never received */
	rep = sw_local(&r, (struct sw_cmd){.op = SW_POST,
					   .kind = SW_UD,
					   .wr_op = IBV_WR_SEND,
					   .id = 1,
					   .len = 64,
					   .rkey = SW_QKEY ^ 1});
	cr_assert_eq(rep.rc, 0);
	wc = sw_wait(&r, false, SW_UD, false, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	sw_settle(&r);
	rep = sw_peer(&r, (struct sw_cmd){.op = SW_POLL, .kind = SW_UD, .recv = 1});
	cr_expect_eq(rep.rc, -EAGAIN, "a datagram with another Q_Key was received");
	/* the high bit: the sending QP's own Q_Key, which the receiver's is */
	sw_fill(r.e0.buf + SW_SRC(&r), 64, 9, 0);
	rep = sw_local(&r, (struct sw_cmd){.op = SW_POST,
					   .kind = SW_UD,
					   .wr_op = IBV_WR_SEND,
					   .id = 2,
					   .off = SW_SRC(&r),
					   .len = 64,
					   .rkey = 0x80000000u});
	cr_assert_eq(rep.rc, 0);
	wc = sw_wait(&r, false, SW_UD, false, 2);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	wc = sw_wait(&r, true, SW_UD, true, 7);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, 40 + 64);
	rep = sw_peer(
		&r, (struct sw_cmd){.op = SW_CHECK, .off = SW_RECV(&r) + 40, .len = 64, .seed = 9});
	cr_expect_eq(rep.val, -1);
	sw_quiet(&r, SW_UD);
	sw_finish(&r);
}

static void t_unreachable(struct sw_path *p, bool peer)
{
	if (peer)
		return;
	/* an address no one on the link has: ARP never answers */
	memset(p->dgid.raw, 0, 16);
	p->dgid.raw[10] = 0xff;
	p->dgid.raw[11] = 0xff;
	p->dgid.raw[12] = 10;
	p->dgid.raw[15] = 99;
	p->timeout = 8;
	p->retry_cnt = 2;
}

/*
 * A path to an address no neighbour answers for: nothing can be sent, which for
 * RC is a loss like any other: RETRY_EXC_ERR once the retries are spent, the
 * rest flushed, the QP in Error (never a WQE waiting for ever).
 */
Test(sweep_status, retry_exc_destination_unreachable)
{
	static struct sw_run r;
	struct sw_reply rep;
	struct ibv_wc wc;

	sw_ring_setup(&r, sw_eth_mtu(IBV_MTU_1024), NULL, 64 << 10);
	sw_connect(&r, SW_RC, t_unreachable);
	snprintf(r.what, sizeof(r.what), "RC to an unreachable address");
	rep = sw_local(&r, (struct sw_cmd){.op = SW_POST,
					   .kind = SW_RC,
					   .wr_op = IBV_WR_SEND,
					   .id = 1,
					   .len = 64,
					   .chain = 1});
	cr_assert_eq(rep.rc, 0);
	wc = sw_wait(&r, false, SW_RC, false, 1);
	cr_expect_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
	wc = sw_wait(&r, false, SW_RC, false, 2);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(sw_state(&r, SW_RC, false), IBV_QPS_ERR);
	sw_finish(&r);
}
