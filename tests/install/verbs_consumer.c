/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A libibverbs program as people write them, built against droce with
 * `pkg-config --cflags --libs droce` and nothing else: the verbs API is
 * <infiniband/verbs.h>, the implementation is libdroce; droce's own additions
 * (<droce_counters.h>) come from the same flags.
 */
#include <droce_counters.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, what)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "verbs_consumer: %s failed\n", what); \
			return 1;                                             \
		}                                                             \
	} while (0)

int main(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_port_attr port;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr init = {0};
	struct ibv_qp_attr attr = {0};
	struct ibv_sge sge;
	struct ibv_recv_wr wr = {0}, *bad;
	union ibv_gid gid;
	static char buf[4096];
	int n;

	list = ibv_get_device_list(&n);
	CHECK(list != NULL && n >= 1, "ibv_get_device_list");
	ctx = ibv_open_device(list[0]);
	CHECK(ctx != NULL, "ibv_open_device");
	CHECK(ibv_query_port(ctx, 1, &port) == 0, "ibv_query_port");
	CHECK(port.link_layer == IBV_LINK_LAYER_ETHERNET, "link layer");
	CHECK(ibv_query_gid(ctx, 1, 1, &gid) == 0, "ibv_query_gid");
	ch = ibv_create_comp_channel(ctx);
	CHECK(ch != NULL, "ibv_create_comp_channel");
	pd = ibv_alloc_pd(ctx);
	CHECK(pd != NULL, "ibv_alloc_pd");
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr != NULL, "ibv_reg_mr");
	cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	CHECK(cq != NULL, "ibv_create_cq");
	CHECK(ibv_req_notify_cq(cq, 0) == 0, "ibv_req_notify_cq");
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 8;
	init.cap.max_recv_wr = 8;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &init);
	CHECK(qp != NULL, "ibv_create_qp");
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	CHECK(ibv_modify_qp(qp, &attr,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
		      0,
	      "ibv_modify_qp INIT");
	sge.addr = (uintptr_t)buf;
	sge.length = sizeof(buf);
	sge.lkey = mr->lkey;
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	CHECK(ibv_post_recv(qp, &wr, &bad) == 0, "ibv_post_recv");
	/* droce's own header: the counter table; no engine runs this device */
	CHECK(droce_counter_find("out_of_sequence") >= 0, "droce_counter_find");
	CHECK(droce_port_counters(ctx, 1, NULL, 0) == -ENODEV, "droce_port_counters");
	CHECK(ibv_destroy_qp(qp) == 0, "ibv_destroy_qp");
	CHECK(ibv_destroy_cq(cq) == 0, "ibv_destroy_cq");
	CHECK(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr");
	CHECK(ibv_dealloc_pd(pd) == 0, "ibv_dealloc_pd");
	CHECK(ibv_destroy_comp_channel(ch) == 0, "ibv_destroy_comp_channel");
	CHECK(ibv_close_device(ctx) == 0, "ibv_close_device");
	printf("verbs_consumer: %s, GID[1] ::ffff:%u.%u.%u.%u\n", ibv_get_device_name(list[0]),
	       gid.raw[12], gid.raw[13], gid.raw[14], gid.raw[15]);
	ibv_free_device_list(list);
	return 0;
}
