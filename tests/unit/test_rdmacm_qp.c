/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An id's QP: rdma_init_qp_attr's every attribute for INIT, RTR and RTS from the values the
 * CM exchanged (set here as the CM would), and rdma_create_qp with the device's default PD
 * and CQs of its own, in INIT (RC) or RTS (UD) on return.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "rdmacm_env.h"
#include "rdmacm_priv.h"

static struct rdma_cm_id *routed_id(enum rdma_port_space ps)
{
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(7471)};
	struct rdma_cm_id *id;

	rdmacm_test_env();
	cr_assert_eq(inet_pton(AF_INET, "10.0.0.2", &dst.sin_addr), 1);
	cr_assert_eq(rdma_create_id(NULL, &id, NULL, ps), 0);
	cr_assert_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	cr_assert_eq(rdma_resolve_route(id, 2000), 0);
	return id;
}

/* what the CM leaves once REQ and REP are through (cm: a placeholder, never called) */
static void as_connected(struct rdmacm_id *rid)
{
	static int placeholder;

	rid->cm = &placeholder;
	rid->remote_qpn = 0x123456;
	rid->remote_psn = 0xabcdef;
	rid->local_psn = 0x111111;
	rid->responder_resources = 4;
	rid->initiator_depth = 2;
	rid->retry_count = 6;
	rid->rnr_retry_count = 5;
	rid->tos = 0x20;
}

static void destroy(struct rdma_cm_id *id)
{
	to_rid(id)->cm = NULL;
	cr_assert_eq(rdma_destroy_id(id), 0);
}

Test(rdmacm_qp, init_before_the_cm)
{
	struct rdma_cm_id *id = routed_id(RDMA_PS_TCP);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT};
	int mask = 0;

	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), 0, "%s", strerror(errno));
	cr_assert_eq(mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	cr_assert_eq(a.port_num, 1, "port");
	cr_assert_eq(a.pkey_index, 0, "P_Key index");
	cr_assert_eq(a.qp_access_flags, 0, "no remote access before the CM agreed on any");
	a.qp_state = IBV_QPS_RTR;
	errno = 0;
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), -1, "RTR needs the peer");
	cr_assert_eq(errno, EINVAL);
	destroy(id);
}

Test(rdmacm_qp, init_after_the_cm)
{
	struct rdma_cm_id *id = routed_id(RDMA_PS_TCP);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT};
	int mask = 0;

	as_connected(to_rid(id));
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), 0);
	cr_assert_eq(a.qp_access_flags,
		     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		     "responder resources: READ and atomics too");
	to_rid(id)->responder_resources = 0;
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), 0);
	cr_assert_eq(a.qp_access_flags, IBV_ACCESS_REMOTE_WRITE, "none: WRITE only");
	destroy(id);
}

Test(rdmacm_qp, rtr)
{
	struct rdma_cm_id *id = routed_id(RDMA_PS_TCP);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR};
	struct ibv_port_attr pa;
	int mask = 0;

	as_connected(to_rid(id));
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), 0);
	cr_assert_eq(mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER);
	cr_assert_eq(a.dest_qp_num, 0x123456, "the peer's QPN");
	cr_assert_eq(a.rq_psn, 0xabcdef, "our RQ PSN, the one we offered");
	cr_assert_eq(ibv_query_port(id->verbs, 1, &pa), 0);
	cr_assert_eq(a.path_mtu, pa.active_mtu, "the route's MTU");
	cr_assert_eq(a.max_dest_rd_atomic, 4, "responder resources");
	cr_assert_eq(a.min_rnr_timer, 0);
	cr_assert_eq(a.ah_attr.is_global, 1, "GRH");
	cr_assert_eq(a.ah_attr.port_num, 1);
	cr_assert_eq(memcmp(&a.ah_attr.grh.dgid, &id->route.addr.addr.ibaddr.dgid, 16), 0, "dgid");
	cr_assert_eq(a.ah_attr.grh.hop_limit, 64, "hop limit");
	cr_assert_eq(a.ah_attr.grh.traffic_class, 0x20, "the TOS");
	{
		union ibv_gid g;

		cr_assert_eq(ibv_query_gid(id->verbs, 1, a.ah_attr.grh.sgid_index, &g), 0);
		cr_assert_eq(memcmp(&g, &id->route.addr.addr.ibaddr.sgid, 16), 0,
			     "the sgid index names the source's GID");
	}
	destroy(id);
}

Test(rdmacm_qp, rts)
{
	struct rdma_cm_id *id = routed_id(RDMA_PS_TCP);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS};
	struct ibv_device_attr da;
	unsigned int t = 17, d;
	uint8_t timeout = 9;
	int mask = 0;

	as_connected(to_rid(id));
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), 0);
	cr_assert_eq(mask, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	cr_assert_eq(a.sq_psn, 0x111111, "our SQ PSN, the one the peer offered");
	cr_assert_eq(a.retry_cnt, 6);
	cr_assert_eq(a.rnr_retry, 5);
	cr_assert_eq(a.max_rd_atomic, 2, "initiator depth");
	cr_assert_eq(ibv_query_device(id->verbs, &da), 0);
	d = da.local_ca_ack_delay;
	t = t >= d ? t + (d + 1 >= t) : d + (t + 1 >= d);
	cr_assert_eq(a.timeout, t > 31 ? 31 : t, "packet lifetime and ACK delay: %u", a.timeout);
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, 1),
		     0);
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), 0);
	cr_assert_eq(a.timeout, 9, "the ACK_TIMEOUT option");
	destroy(id);
}

/*
 * The Starting PSN of REQ and REP (IBTA 12.6.5, 12.6.8) as Linux's CM reads it: the PSN the
 * sender's receive queue expects. What we offer is our RQ PSN, what the peer offers our SQ
 * PSN; taken the other way round, the two ends' PSNs never meet (each end's first packet is
 * a duplicate to the other).
 */
Test(rdmacm_qp, starting_psn_is_the_senders_receive_psn)
{
	struct rdma_cm_id *id = routed_id(RDMA_PS_TCP);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR};
	int mask = 0;

	as_connected(to_rid(id));
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), 0);
	cr_assert_eq(a.rq_psn, rdmacm_offered_psn(to_rid(id)),
		     "the Starting PSN we send is what our RQ expects");
	rdmacm_take_starting_psn(to_rid(id), 0x654321);
	a.qp_state = IBV_QPS_RTS;
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), 0);
	cr_assert_eq(a.sq_psn, 0x654321, "the peer's Starting PSN is where our SQ starts");
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), 0);
	cr_assert_eq(a.rq_psn, 0xabcdef, "and leaves our RQ PSN alone");
	destroy(id);
}

Test(rdmacm_qp, ud_attributes)
{
	struct rdma_cm_id *id = routed_id(RDMA_PS_UDP);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT};
	int mask = 0;

	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), 0);
	cr_assert_eq(mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	cr_assert_eq(a.qkey, RDMA_UDP_QKEY, "rdma_cm's Q_Key");
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), 0);
	cr_assert_eq(mask, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), 0);
	cr_assert_eq(mask, IBV_QP_STATE | IBV_QP_SQ_PSN);
	cr_assert_eq(a.sq_psn, 0);
	cr_assert_eq(rdma_destroy_id(id), 0);
}

Test(rdmacm_qp, init_attr_errors)
{
	struct rdma_cm_id *id;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT};
	int mask;

	rdmacm_test_env();
	cr_assert_eq(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	errno = 0;
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), -1, "no device yet");
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_init_qp_attr(NULL, &a, &mask), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_init_qp_attr(id, NULL, &mask), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_init_qp_attr(id, &a, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	a.qp_state = IBV_QPS_SQD;
	errno = 0;
	cr_assert_eq(rdma_init_qp_attr(id, &a, &mask), -1, "no attributes for SQD");
	cr_assert_eq(errno, EINVAL);
	rdma_destroy_id(id);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

Test(rdmacm_qp, create_qp_default_pd_and_cqs)
{
	struct rdma_cm_id *id = routed_id(RDMA_PS_TCP);
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};

	cr_assert_eq(rdma_create_qp(id, NULL, &ia), 0, "%s", strerror(errno));
	cr_assert_not_null(id->qp);
	cr_assert_not_null(id->pd, "the device's default PD");
	cr_assert_eq(id->qp->pd, id->pd);
	cr_assert_not_null(id->send_cq, "a send CQ of its own");
	cr_assert_not_null(id->recv_cq, "a receive CQ of its own");
	cr_assert_not_null(id->send_cq_channel);
	cr_assert_not_null(id->recv_cq_channel);
	cr_assert_eq(id->qp->qp_type, IBV_QPT_RC);
	cr_assert_eq(qp_state(id->qp), IBV_QPS_INIT, "RC: INIT on return");
	errno = 0;
	cr_assert_eq(rdma_create_qp(id, NULL, &ia), -1, "one QP per id");
	cr_assert_eq(errno, EINVAL);
	rdma_destroy_qp(id);
	cr_assert_null(id->qp);
	cr_assert_null(id->send_cq, "its CQs went with it");
	cr_assert_eq(rdma_destroy_id(id), 0);
}

Test(rdmacm_qp, create_ud_qp_is_rts)
{
	struct rdma_cm_id *id = routed_id(RDMA_PS_UDP);
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr qa;

	cr_assert_eq(rdma_create_qp(id, NULL, &ia), 0, "%s", strerror(errno));
	cr_assert_eq(id->qp->qp_type, IBV_QPT_UD);
	cr_assert_eq(ibv_query_qp(id->qp, &a, IBV_QP_STATE | IBV_QP_QKEY, &qa), 0);
	cr_assert_eq(a.qp_state, IBV_QPS_RTS, "UD: ready to send");
	cr_assert_eq(a.qkey, RDMA_UDP_QKEY);
	rdma_destroy_qp(id);
	cr_assert_eq(rdma_destroy_id(id), 0);
}

Test(rdmacm_qp, create_qp_errors)
{
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	struct rdma_cm_id *id;

	rdmacm_test_env();
	cr_assert_eq(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	errno = 0;
	cr_assert_eq(rdma_create_qp(id, NULL, &ia), -1, "no device yet");
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_create_qp(NULL, NULL, &ia), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rdma_create_qp(id, NULL, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	rdma_destroy_qp(NULL); /* nothing, no crash */
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
}
