/* SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <droce_transport.h>

#include "verbs_harness.h"

/* Handles per object: the engine keeps exactly one consumer or producer per ring. */
struct attach {
	const void *obj;
	struct droce_ring_cons sq, rq;
	struct droce_ring_prod cq;
};

static struct attach attached[256];

static struct attach *find(const void *obj)
{
	unsigned int i;

	for (i = 0; i < sizeof(attached) / sizeof(attached[0]); i++)
		if (attached[i].obj == obj)
			return &attached[i];
	for (i = 0; i < sizeof(attached) / sizeof(attached[0]); i++) {
		if (attached[i].obj == NULL) {
			memset(&attached[i], 0, sizeof(attached[i]));
			attached[i].obj = obj;
			return &attached[i];
		}
	}
	cr_assert_fail("harness: too many objects");
	return NULL;
}

static struct attach *qp_attach(struct ibv_qp *qp)
{
	struct attach *a;
	struct droce_qp_view v;
	bool fresh;

	for (unsigned int i = 0; i < sizeof(attached) / sizeof(attached[0]); i++)
		if (attached[i].obj == qp)
			return &attached[i];
	a = find(qp);
	fresh = true;
	cr_assert_eq(droce_verbs_qp_view(qp, &v), 0);
	cr_assert_eq(droce_ring_cons_attach(&a->sq, v.sq.addr, v.sq.len), 0);
	if (v.rq.addr != NULL)
		cr_assert_eq(droce_ring_cons_attach(&a->rq, v.rq.addr, v.rq.len), 0);
	(void)fresh;
	return a;
}

void harness_forget(const void *object)
{
	for (unsigned int i = 0; i < sizeof(attached) / sizeof(attached[0]); i++)
		if (attached[i].obj == object)
			attached[i].obj = NULL;
}

struct ibv_context *harness_open(struct ibv_pd **pd)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n;

	setenv("DROCE_DEVICES", HARNESS_DEVICES, 1);
	list = ibv_get_device_list(&n);
	cr_assert_not_null(list);
	cr_assert_geq(n, 1);
	ctx = ibv_open_device(list[0]);
	cr_assert_not_null(ctx);
	ibv_free_device_list(list);
	if (pd != NULL) {
		*pd = ibv_alloc_pd(ctx);
		cr_assert_not_null(*pd);
	}
	return ctx;
}

static bool take(struct droce_ring_cons *c, void *out, size_t max)
{
	int avail = droce_ring_cons_avail(c);

	cr_assert_geq(avail, 0, "ring corrupt");
	if (avail == 0)
		return false;
	memcpy(out, droce_ring_cons_slot(c, 0), c->slot_size < max ? c->slot_size : max);
	droce_ring_cons_release(c, 1);
	return true;
}

bool harness_take_send(struct ibv_qp *qp, struct harness_send *out)
{
	memset(out, 0, sizeof(*out));
	return take(&qp_attach(qp)->sq, out, sizeof(*out));
}

int harness_send_pending(struct ibv_qp *qp)
{
	return droce_ring_cons_avail(&qp_attach(qp)->sq);
}

bool harness_take_recv(struct ibv_qp *qp, struct harness_recv *out)
{
	if (qp->srq != NULL)
		return harness_take_srq_recv(qp->srq, out);
	memset(out, 0, sizeof(*out));
	return take(&qp_attach(qp)->rq, out, sizeof(*out));
}

static struct attach *srq_attach(struct ibv_srq *srq)
{
	struct droce_srq_view v;
	struct attach *a;

	for (unsigned int i = 0; i < sizeof(attached) / sizeof(attached[0]); i++)
		if (attached[i].obj == srq)
			return &attached[i];
	a = find(srq);
	cr_assert_eq(droce_verbs_srq_view(srq, &v), 0);
	cr_assert_eq(droce_ring_cons_attach(&a->rq, v.ring.addr, v.ring.len), 0);
	return a;
}

bool harness_take_srq_recv(struct ibv_srq *srq, struct harness_recv *out)
{
	memset(out, 0, sizeof(*out));
	return take(&srq_attach(srq)->rq, out, sizeof(*out));
}

int harness_srq_pending(struct ibv_srq *srq)
{
	return droce_ring_cons_avail(&srq_attach(srq)->rq);
}

bool harness_complete(struct ibv_cq *cq, const struct droce_cqe *cqe)
{
	struct droce_cq_view v;
	struct attach *a = NULL;

	for (unsigned int i = 0; i < sizeof(attached) / sizeof(attached[0]); i++)
		if (attached[i].obj == cq)
			a = &attached[i];
	if (a == NULL) {
		a = find(cq);
		cr_assert_eq(droce_verbs_cq_view(cq, &v), 0);
		cr_assert_eq(droce_ring_prod_attach(&a->cq, v.ring.addr, v.ring.len), 0);
	}
	return droce_ring_prod_enqueue_burst(&a->cq, cqe, 1) == 1;
}

int harness_complete_sends(struct ibv_qp *qp, enum ibv_wc_status status)
{
	struct harness_send s;
	int n = 0;

	while (harness_take_send(qp, &s)) {
		/* errors complete whether signaled or not, as on a NIC */
		if ((s.hdr.flags & DROCE_WQE_SIGNALED) || status != IBV_WC_SUCCESS) {
			struct droce_cqe e = {
				.wr_id = s.hdr.wr_id,
				.status = (uint8_t)status,
				.opcode = (uint8_t)droce_wqe_wc_opcode(s.hdr.op),
				.byte_len = s.hdr.length,
				.qp_num = qp->qp_num,
			};

			cr_assert(harness_complete(qp->send_cq, &e), "send CQ full");
		}
		n++;
	}
	return n;
}

int harness_qp_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = qp->qp_type == IBV_QPT_RC
				    ? IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
					      IBV_ACCESS_REMOTE_ATOMIC
				    : 0;
	a.qkey = 0x11111111;
	rc = ibv_modify_qp(qp, &a,
			   IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   (qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
	if (rc != 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (qp->qp_type == IBV_QPT_UD) {
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	} else {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = 0x12;
		a.rq_psn = 0;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 12;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.sgid_index = 1;
		a.ah_attr.grh.hop_limit = 64;
		rc = ibv_modify_qp(qp, &a,
				   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					   IBV_QP_RQ_PSN |
					   (qp->qp_type == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC |
										IBV_QP_MIN_RNR_TIMER
								      : 0));
	}
	if (rc != 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_SQ_PSN |
				     (qp->qp_type == IBV_QPT_RC
					      ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
							IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC
					      : 0));
}
