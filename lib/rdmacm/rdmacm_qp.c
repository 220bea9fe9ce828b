/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP of an id: its attributes for each state as the CM set them (rdma_init_qp_attr),
 * the moves librdmacm makes on the program's behalf, and rdma_create_qp/_ex/srq with the
 * device's default PD and, when the program gives none, CQs with completion channels of
 * their own (rdma_verbs.h's rdma_get_*_comp wait on those).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_priv.h"

static int fail(int err)
{
	errno = err;
	return -1;
}

void rdmacm_ah_attr(const struct rdmacm_id *rid, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1; /* RoCE: every packet carries the GRH's addresses */
	ah->port_num = rid->id.port_num != 0 ? rid->id.port_num : 1;
	ah->grh.dgid = rid->id.route.addr.addr.ibaddr.dgid;
	ah->grh.sgid_index = rid->sgid_index;
	ah->grh.hop_limit = rid->path.hop_limit != 0 ? rid->path.hop_limit : RDMACM_HOP_LIMIT;
	ah->grh.traffic_class = rid->tos;
	ah->grh.flow_label = be32toh(rid->path.flow_label);
	ah->sl = rid->path.sl;
}

/*
 * The local ACK timeout REQ announces and the QP uses: the ACK_TIMEOUT option, or, as
 * Linux's CM computes it, about twice the packet lifetime plus the device's ACK delay.
 */
uint8_t rdmacm_local_ack_timeout(const struct rdmacm_id *rid)
{
	unsigned int t = RDMACM_PACKET_LIFETIME + 1; /* twice the packet lifetime */
	unsigned int delay = rid->dev != NULL ? rid->dev->ack_delay : 0;

	if (rid->timeout_set)
		return rid->ack_timeout;
	/* 4.096 us x (2^t + 2^delay): the larger exponent, one more when they are close */
	if (t >= delay)
		t += delay + 1 >= t ? 1u : 0u;
	else
		t = delay + (t + 1 >= delay ? 1u : 0u);
	return t > 31 ? 31 : (uint8_t)t;
}

static int init_qp_attr(struct rdmacm_id *rid, struct ibv_qp_attr *a, int *mask)
{
	bool connected = rid->cm != NULL && rid->id.qp_type != IBV_QPT_UD;
	struct ibv_port_attr pa;

	if (rid->id.verbs == NULL)
		return -EINVAL;
	switch (a->qp_state) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = rid->id.port_num;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (rid->id.qp_type == IBV_QPT_UD) {
			a->qkey = RDMA_UDP_QKEY;
			*mask |= IBV_QP_QKEY;
		} else {
			/* before the CM exchanged anything, no remote access; after, what the
			 * responder resources allow (IBTA 12.7.29: READ/atomic need them) */
			a->qp_access_flags = 0;
			if (connected) {
				a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
				if (rid->responder_resources > 0)
					a->qp_access_flags |=
						IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
			}
			*mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		if (rid->id.qp_type == IBV_QPT_UD) {
			*mask = IBV_QP_STATE;
			return 0;
		}
		if (!connected)
			return -EINVAL;
		a->path_mtu = (enum ibv_mtu)rid->path.mtu;
		if (a->path_mtu == 0)
			a->path_mtu = ibv_query_port(rid->id.verbs, 1, &pa) == 0 ? pa.active_mtu
										 : IBV_MTU_1024;
		a->dest_qp_num = rid->remote_qpn;
		a->rq_psn = rid->remote_psn;
		rdmacm_ah_attr(rid, &a->ah_attr);
		*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (rid->id.qp_type == IBV_QPT_RC) {
			a->max_dest_rd_atomic = rid->responder_resources;
			a->min_rnr_timer = 0; /* as Linux's CM: the smallest RNR NAK delay code */
			*mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
		return 0;
	case IBV_QPS_RTS:
		a->sq_psn = rid->id.qp_type == IBV_QPT_UD ? 0 : rid->local_psn;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (rid->id.qp_type == IBV_QPT_RC) {
			if (!connected)
				return -EINVAL;
			a->timeout = rdmacm_local_ack_timeout(rid);
			a->retry_cnt = rid->retry_count;
			a->rnr_retry = rid->rnr_retry_count;
			a->max_rd_atomic = rid->initiator_depth;
			*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				 IBV_QP_MAX_QP_RD_ATOMIC;
		}
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * The Starting PSN of a REQ or REP (IBTA 12.6.5, 12.6.8) is read as Linux's CM and other
 * implementations read it: the PSN the sender's receive queue expects first, i.e. the one the
 * receiver of the message starts its send queue with. Ours goes out as our RQ PSN ...
 */
uint32_t rdmacm_offered_psn(const struct rdmacm_id *rid)
{
	return rid->remote_psn;
}

/* ... and the peer's becomes our SQ PSN */
void rdmacm_take_starting_psn(struct rdmacm_id *rid, uint32_t starting_psn)
{
	rid->local_psn = starting_psn;
}

int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	int rc;

	if (id == NULL || qp_attr == NULL || qp_attr_mask == NULL)
		return fail(EINVAL);
	rdmacm_lock();
	rc = init_qp_attr(to_rid(id), qp_attr, qp_attr_mask);
	rdmacm_unlock();
	return rc < 0 ? fail(-rc) : 0;
}

int rdmacm_qp_modify(struct rdmacm_id *rid, enum ibv_qp_state state)
{
	struct ibv_qp_attr a;
	int mask, rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = state;
	rdmacm_lock();
	rc = init_qp_attr(rid, &a, &mask);
	rdmacm_unlock();
	if (rc < 0)
		return rc;
	rc = ibv_modify_qp(rid->id.qp, &a, mask);
	return rc > 0 ? -rc : rc;
}

int rdmacm_qp_to_err(struct rdmacm_id *rid)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
	int rc;

	if (rid->id.qp == NULL)
		return 0;
	rc = ibv_modify_qp(rid->id.qp, &a, IBV_QP_STATE);
	return rc > 0 ? -rc : rc;
}

/* a connected QP goes to INIT; a UD QP on to RTS with the rdma_cm Q_Key (sq PSN 0) */
static int qp_prepare(struct rdmacm_id *rid)
{
	int rc = rdmacm_qp_modify(rid, IBV_QPS_INIT);

	if (rc == 0 && rid->id.qp_type == IBV_QPT_UD)
		rc = rdmacm_qp_modify(rid, IBV_QPS_RTR);
	if (rc == 0 && rid->id.qp_type == IBV_QPT_UD)
		rc = rdmacm_qp_modify(rid, IBV_QPS_RTS);
	return rc;
}

static void cqs_destroy(struct rdma_cm_id *id)
{
	if (id->recv_cq != NULL)
		ibv_destroy_cq(id->recv_cq);
	if (id->recv_cq_channel != NULL)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	if (id->send_cq != NULL && id->send_cq != id->recv_cq)
		ibv_destroy_cq(id->send_cq);
	if (id->send_cq_channel != NULL)
		ibv_destroy_comp_channel(id->send_cq_channel);
	id->recv_cq = id->send_cq = NULL;
	id->recv_cq_channel = id->send_cq_channel = NULL;
}

static int cq_create(struct rdma_cm_id *id, uint32_t entries, struct ibv_comp_channel **ch,
		     struct ibv_cq **cq)
{
	*ch = ibv_create_comp_channel(id->verbs);
	if (*ch == NULL)
		return -errno;
	*cq = ibv_create_cq(id->verbs, entries > 0 ? (int)entries : 1, id, *ch, 0);
	return *cq == NULL ? -errno : 0;
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct rdmacm_id *rid = to_rid(id);
	struct ibv_qp_init_attr_ex a;
	bool own_send = false, own_recv = false;
	struct ibv_qp *qp;
	int rc;

	if (id == NULL || attr == NULL)
		return fail(EINVAL);
	if (id->verbs == NULL || rid->dev == NULL || id->qp != NULL)
		return fail(EINVAL);
	a = *attr;
	if (!(a.comp_mask & IBV_QP_INIT_ATTR_PD) || a.pd == NULL) {
		a.pd = id->pd != NULL ? id->pd : rdmacm_device_pd(rid->dev);
		if (a.pd == NULL)
			return fail(ENOMEM);
		a.comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (a.pd->context != id->verbs)
		return fail(EINVAL);
	if (a.send_cq == NULL && id->send_cq == NULL) {
		rc = cq_create(id, a.cap.max_send_wr, &id->send_cq_channel, &id->send_cq);
		if (rc < 0)
			goto out_cqs;
		own_send = true;
	}
	if (a.recv_cq == NULL && id->recv_cq == NULL && a.srq == NULL) {
		rc = cq_create(id, a.cap.max_recv_wr, &id->recv_cq_channel, &id->recv_cq);
		if (rc < 0)
			goto out_cqs;
		own_recv = true;
	}
	if (a.send_cq == NULL)
		a.send_cq = id->send_cq;
	if (a.recv_cq == NULL)
		a.recv_cq = id->recv_cq != NULL ? id->recv_cq : a.send_cq;
	if (a.srq == NULL)
		a.srq = id->srq;
	a.qp_type = id->qp_type;
	qp = ibv_create_qp_ex(id->verbs, &a);
	if (qp == NULL) {
		rc = -errno;
		goto out_cqs;
	}
	id->qp = qp;
	id->pd = a.pd;
	rc = qp_prepare(rid);
	if (rc < 0) {
		id->qp = NULL;
		ibv_destroy_qp(qp);
		goto out_cqs;
	}
	attr->cap = a.cap;
	return 0;
out_cqs:
	if (own_send || own_recv)
		cqs_destroy(id);
	return fail(-rc);
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a;
	int rc;

	if (id == NULL || qp_init_attr == NULL)
		return fail(EINVAL);
	if (pd != NULL && id->pd != NULL && pd != id->pd)
		return fail(EINVAL);
	memset(&a, 0, sizeof(a));
	memcpy(&a, qp_init_attr, sizeof(*qp_init_attr));
	a.qp_type = id->qp_type;
	a.pd = pd != NULL ? pd : id->pd;
	a.comp_mask = a.pd != NULL ? IBV_QP_INIT_ATTR_PD : 0;
	rc = rdma_create_qp_ex(id, &a);
	if (rc == 0)
		qp_init_attr->cap = a.cap;
	return rc;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id == NULL || id->qp == NULL)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	cqs_destroy(id);
}

int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct rdmacm_id *rid = to_rid(id);
	struct ibv_srq_init_attr_ex a;
	struct ibv_srq *srq;
	int rc;

	if (id == NULL || attr == NULL)
		return fail(EINVAL);
	if (id->verbs == NULL || rid->dev == NULL || id->srq != NULL)
		return fail(EINVAL);
	a = *attr;
	if (!(a.comp_mask & IBV_SRQ_INIT_ATTR_PD) || a.pd == NULL) {
		a.pd = id->pd != NULL ? id->pd : rdmacm_device_pd(rid->dev);
		if (a.pd == NULL)
			return fail(ENOMEM);
		a.comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	if ((a.comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && a.srq_type != IBV_SRQT_BASIC)
		return fail(EOPNOTSUPP); /* droce has no XRC */
	srq = ibv_create_srq(a.pd, (struct ibv_srq_init_attr *)&a);
	if (srq == NULL)
		return -1;
	if (id->recv_cq == NULL) {
		rc = cq_create(id, a.attr.max_wr, &id->recv_cq_channel, &id->recv_cq);
		if (rc < 0) {
			ibv_destroy_srq(srq);
			cqs_destroy(id);
			return fail(-rc);
		}
	}
	id->srq = srq;
	id->pd = a.pd;
	attr->attr = a.attr;
	return 0;
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex a;
	int rc;

	if (id == NULL || attr == NULL)
		return fail(EINVAL);
	memset(&a, 0, sizeof(a));
	memcpy(&a, attr, sizeof(*attr));
	a.pd = pd;
	a.comp_mask = pd != NULL ? IBV_SRQ_INIT_ATTR_PD : 0;
	rc = rdma_create_srq_ex(id, &a);
	if (rc == 0)
		attr->attr = a.attr;
	return rc;
}

void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id == NULL || id->srq == NULL)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
	if (id->qp == NULL)
		cqs_destroy(id);
}
