/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zero-copy TX through the engine (doc/transport.md, "Zero copy"): with zero_copy=auto on a
 * ring link (a driver that copies in software) RC WRITEs and READ responses of full packets
 * leave with their payload by reference to the MR, short ones are copied; without the key
 * (off, the default) every frame is copied;
 * the bytes arrive whole either way, and an MR deregistered right after its WQEs complete
 * waits for nothing the engine still holds. Verbs calls only.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "droce_mr.h"
#include "droce_verbs_engine.h"
#include "pair_harness.h"

#define BUF_LEN (4u << 20)
#define MSG_LEN (1u << 20)

static struct pair_end e0, e1;

static void setup_with(const char *keys)
{
	struct pair_opts o = pair_opts_default(IBV_QPT_RC);

	o.keys[0] = o.keys[1] = keys;
	o.path_mtu = IBV_MTU_4096;
	o.buf_len = BUF_LEN;
	pair_open(&o, &e0, &e1);
}

static void setup_auto(void)
{
	setup_with(",zero_copy=auto");
}

static void setup_off(void)
{
	setup_with(NULL); /* the default */
}

TestSuite(zero_copy, .init = setup_auto, .timeout = 60);
TestSuite(zero_copy_off, .init = setup_off, .timeout = 60);

/* One signaled WRITE or READ of @p len bytes from e0 at @p off to e1 at @p roff, successful. */
static void op(enum ibv_wr_opcode opcode, uint32_t off, uint32_t len, uint32_t roff)
{
	const struct pair_wr w = {.id = 7, .op = opcode, .off = off, .len = len, .roff = roff};
	struct ibv_wc wc;

	pair_post_send(&e0, &e1, &w);
	wc = pair_wait_wc(e0.cq, 7);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
}

Test(zero_copy, large_write_goes_by_reference)
{
	pair_fill(e0.buf, MSG_LEN, 1);
	op(IBV_WR_RDMA_WRITE, 0, MSG_LEN, MSG_LEN);
	cr_expect(memcmp(e1.buf + MSG_LEN, e0.buf, MSG_LEN) == 0, "the bytes arrived whole");
	cr_expect_geq(pair_qp_counter(&e0, "zc_frames"), MSG_LEN / 4096,
		      "every full packet by reference");
}

Test(zero_copy, short_write_is_copied)
{
	uint64_t before = pair_qp_counter(&e0, "zc_frames");

	pair_fill(e0.buf, 100, 2);
	op(IBV_WR_RDMA_WRITE, 0, 100, 0);
	cr_expect(memcmp(e1.buf, e0.buf, 100) == 0);
	cr_expect_eq(pair_qp_counter(&e0, "zc_frames"), before, "100 bytes are copied");
}

Test(zero_copy, read_responses_go_by_reference)
{
	pair_fill(e1.buf + 2 * MSG_LEN, MSG_LEN, 3);
	op(IBV_WR_RDMA_READ, 0, MSG_LEN, 2 * MSG_LEN);
	cr_expect(memcmp(e0.buf, e1.buf + 2 * MSG_LEN, MSG_LEN) == 0);
	cr_expect_geq(pair_qp_counter(&e1, "zc_frames"), MSG_LEN / 4096, "the responder's packets");
}

Test(zero_copy, dereg_right_after_completion)
{
	pair_fill(e0.buf, MSG_LEN, 4);
	op(IBV_WR_RDMA_WRITE, 0, MSG_LEN, MSG_LEN);
	/* every frame of the completed WRITE was freed before its completion: nothing to wait */
	cr_expect_eq(droce_mr_busy(droce_verbs_mr_table(), e0.mr->lkey), 0,
		     "the WRITE completed once its frames were freed");
	cr_expect_eq(ibv_dereg_mr(e0.mr), 0);
	cr_expect(memcmp(e1.buf + MSG_LEN, e0.buf, MSG_LEN) == 0);
}

Test(zero_copy_off, every_frame_copied)
{
	pair_fill(e0.buf, MSG_LEN, 5);
	op(IBV_WR_RDMA_WRITE, 0, MSG_LEN, MSG_LEN);
	cr_expect(memcmp(e1.buf + MSG_LEN, e0.buf, MSG_LEN) == 0);
	cr_expect_eq(pair_qp_counter(&e0, "zc_frames"), 0, "off by default");
}
