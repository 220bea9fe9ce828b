/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine started explicitly (droce_engine_start) with two ports joined
 * back to back: the verbs layer registers its objects with the running
 * engine, ARP or IPv6 neighbour discovery resolves the peer, and a UD message
 * posted on droce0 arrives on droce1 through real ethdevs.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <droce_engine.h>
#include <droce_verbs_engine.h>

#include "pair_harness.h"

#define DEVICES                                                         \
	"droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,ip=fd00::1,mtu=1500 " \
	"droce1:mac=02:00:00:00:00:02,ip=10.0.0.2,ip=fd00::2,mtu=1500"
#define QKEY 0x1234

static struct pair_end e0, e1;

static int hook_cq(struct ibv_cq *cq, bool solicited)
{
	return droce_verbs_cq_notify(cq, solicited);
}

static int hook_qp(struct ibv_qp *qp, enum ibv_qp_state st, enum ibv_event_type ev)
{
	return droce_verbs_qp_error(qp, st, ev);
}

static int hook_srq(struct ibv_srq *srq, uint32_t left)
{
	return droce_verbs_srq_check_limit(srq, left);
}

static void port_conf(struct droce_engine_port_conf *p, const char *name, uint8_t last)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->link, sizeof(p->link), "l0");
	p->mtu = 1500;
	memcpy(p->mac, (uint8_t[]){0x02, 0, 0, 0, 0, last}, 6);
	p->n_ipv4 = 1;
	memcpy(p->ipv4[0], (uint8_t[]){10, 0, 0, last}, 4);
	p->n_ipv6 = 1;
	memset(p->ipv6[0], 0, 16);
	p->ipv6[0][0] = 0xfd;
	p->ipv6[0][15] = last;
}

/* A UD QP in RTS on @p dev; the engine runs: the verbs layer registers the CQ, the QP and
 * their changes with it. */
static void end_open(struct pair_end *x, struct ibv_device *dev)
{
	struct pair_opts o = pair_opts_default(IBV_QPT_UD);

	o.qkey = QKEY;
	o.buf_len = 4096;
	o.max_send_wr = o.max_recv_wr = 32;
	o.cq_depth = 64;
	o.mr_access = IBV_ACCESS_LOCAL_WRITE;
	pair_end_open(&o, x, dev);
	pair_qp_connect(&o, x->qp, NULL, 0);
}

static void setup(void)
{
	struct droce_engine_conf conf = {.n_ports = 2, .idle_sleep_us = 20};
	struct droce_engine_hooks hooks = {
		.cq_notify = hook_cq, .qp_error = hook_qp, .srq_limit = hook_srq};
	struct ibv_device **list;
	int n;

	setenv("DROCE_DEVICES", DEVICES, 1);
	port_conf(&conf.port[0], "droce0", 1);
	port_conf(&conf.port[1], "droce1", 2);
	cr_assert_eq(droce_engine_start(&conf, &hooks, droce_verbs_mr_table()), 0);
	list = ibv_get_device_list(&n);
	cr_assert_eq(n, 2);
	end_open(&e0, list[0]);
	end_open(&e1, list[1]);
	ibv_free_device_list(list);
}

static void teardown(void)
{
	droce_engine_stop();
}

TestSuite(engine_ud, .init = setup, .fini = teardown, .timeout = 60);

/* Poll until a completion arrives; a liveness bound, not a performance check. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n != 0)
			return n;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 10);
	return 0;
}

static void ud_round(const union ibv_gid *dgid, uint8_t sgid_index)
{
	struct ibv_ah_attr aa = {.is_global = 1,
				 .port_num = 1,
				 .grh = {.dgid = *dgid, .sgid_index = sgid_index, .hop_limit = 64}};
	struct ibv_ah *ah = ibv_create_ah(e0.pd, &aa);
	struct ibv_sge rs = {.addr = (uintptr_t)e1.buf, .length = 1024, .lkey = e1.mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 2, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_sge ss = {.addr = (uintptr_t)e0.buf, .length = 512, .lkey = e0.mr->lkey};
	struct ibv_send_wr swr =
				   {
					   .wr_id = 1,
					   .sg_list = &ss,
					   .num_sge = 1,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED,
					   .wr = {.ud = {.ah = ah,
							 .remote_qpn = e1.qp->qp_num,
							 .remote_qkey = QKEY}},
				   },
			   *sbad;
	struct ibv_wc wc;

	cr_assert_not_null(ah);
	for (int i = 0; i < 512; i++)
		e0.buf[i] = (uint8_t)(i ^ 0x5a);
	cr_assert_eq(ibv_post_recv(e1.qp, &rwr, &rbad), 0);
	cr_assert_eq(ibv_post_send(e0.qp, &swr, &sbad), 0);
	cr_assert_eq(poll_one(e0.cq, &wc), 1, "no send completion");
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(poll_one(e1.cq, &wc), 1, "no receive completion");
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.byte_len, 40 + 512);
	cr_expect_eq(wc.src_qp, e0.qp->qp_num);
	cr_expect_arr_eq(e1.buf + 40, e0.buf, 512);
}

Test(engine_ud, ipv4_through_arp)
{
	union ibv_gid peer = {.raw = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2}};

	ud_round(&peer, 1);
}

Test(engine_ud, ipv6_through_neighbour_discovery)
{
	union ibv_gid peer = {.raw = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}};

	ud_round(&peer, 2);
}

Test(engine_ud, links_are_up)
{
	struct droce_engine_port_info info;

	cr_assert_eq(droce_engine_port_info("droce0", &info), 0);
	cr_expect(info.link_up);
	cr_expect_eq(info.mac[5], 1);
	cr_expect_eq(droce_engine_port_info("nope", &info), -ENOENT);
}
