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

Test(sweep_status, retry_exc_link_drops_all)
{
	run("retry_exc_link_drops_all");
}

Test(sweep_status, uc_loc_len_message_too_long)
{
	run("uc_loc_len_message_too_long");
}

Test(sweep_status, uc_loc_prot_receive_bad_lkey)
{
	run("uc_loc_prot_receive_bad_lkey");
}

Test(sweep_status, ud_loc_len_message_too_long)
{
	run("ud_loc_len_message_too_long");
}

Test(sweep_status, ud_loc_prot_receive_bad_lkey)
{
	run("ud_loc_prot_receive_bad_lkey");
}
