/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connected QP pairs: create qp makes one QP on each of two ports, each with a
 * CQ of its own, and connects them to each other (RC, UC: INIT, RTR, RTS; UD: an
 * address handle towards the peer). modify qp moves one QP to a state with the
 * attributes that transition needs, taken from the pair; destroy qp removes one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_pmd.h"

#define HOP_LIMIT     64
#define RD_ATOMIC     16
#define MIN_RNR_TIMER 12 /* 0.64 ms */
#define ACK_TIMEOUT   14 /* 4.096 us << 14: 67 ms */
#define RETRY_CNT     7
#define RNR_RETRY     7 /* for ever */
#define QP_ACCESS     (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

struct pmd_qp pmd_qps[PMD_QPS_MAX];

struct pmd_qp *pmd_qp_by_id(int id)
{
	if (id < 0 || id >= PMD_QPS_MAX || !pmd_qps[id].used)
		return NULL;
	return &pmd_qps[id];
}

struct pmd_qp *pmd_qp_get(const char *word)
{
	unsigned long n;
	struct pmd_qp *q;
	char *end;

	n = strtoul(word, &end, 10);
	q = *word != '\0' && *end == '\0' && n < PMD_QPS_MAX ? pmd_qp_by_id((int)n) : NULL;
	if (q == NULL)
		pmd_err("no qp %s (show qp list lists them)", word);
	return q;
}

enum ibv_qp_state pmd_qp_state(struct pmd_qp *q)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia) != 0)
		return IBV_QPS_UNKNOWN;
	return a.qp_state;
}

static enum ibv_mtu path_mtu(const struct pmd_qp *q)
{
	enum ibv_mtu a = q->port->attr.active_mtu, b = q->peer_port->attr.active_mtu;

	return a < b ? a : b;
}

static int fail_modify(struct pmd_qp *q, const char *to, int rc)
{
	return pmd_err("qp %u: ibv_modify_qp(%s): %s", q->id, to, strerror(rc));
}

static int to_init(struct pmd_qp *q)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT, rc;

	if (q->type == IBV_QPT_UD) {
		a.qkey = PMD_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = q->type == IBV_QPT_RC ? QP_ACCESS : IBV_ACCESS_REMOTE_WRITE;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	/* a QP starts from a fresh PSN every time it is brought up again */
	q->psn = (uint32_t)lrand48() & 0xffffff;
	rc = ibv_modify_qp(q->qp, &a, mask);
	return rc == 0 ? 0 : fail_modify(q, "INIT", rc);
}

static int to_rtr(struct pmd_qp *q)
{
	const struct pmd_qp *peer = pmd_qp_by_id(q->peer);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR};
	int mask = IBV_QP_STATE, rc;

	if (q->type != IBV_QPT_UD) {
		if (peer == NULL)
			return pmd_err("qp %u: its peer was destroyed: nothing to connect to",
				       q->id);
		a.path_mtu = path_mtu(q);
		a.dest_qp_num = q->peer_qpn;
		a.rq_psn = peer->psn;
		a.ah_attr = (struct ibv_ah_attr){
			.is_global = 1,
			.port_num = 1,
			.grh = {.dgid = q->peer_port->gid,
				.sgid_index = (uint8_t)q->port->gid_index,
				.hop_limit = HOP_LIMIT},
		};
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (q->type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = RD_ATOMIC;
			a.min_rnr_timer = MIN_RNR_TIMER;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	rc = ibv_modify_qp(q->qp, &a, mask);
	return rc == 0 ? 0 : fail_modify(q, "RTR", rc);
}

static int to_rts(struct pmd_qp *q, enum ibv_qp_state from)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS};
	int mask = IBV_QP_STATE, rc;

	if (from == IBV_QPS_RTR) {
		a.sq_psn = q->psn;
		mask |= IBV_QP_SQ_PSN;
		if (q->type == IBV_QPT_RC) {
			a.timeout = ACK_TIMEOUT;
			a.retry_cnt = RETRY_CNT;
			a.rnr_retry = RNR_RETRY;
			a.max_rd_atomic = RD_ATOMIC;
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				IBV_QP_MAX_QP_RD_ATOMIC;
		}
	}
	rc = ibv_modify_qp(q->qp, &a, mask);
	return rc == 0 ? 0 : fail_modify(q, "RTS", rc);
}

int pmd_qp_modify(struct pmd_qp *q, enum ibv_qp_state state)
{
	enum ibv_qp_state from = pmd_qp_state(q);
	struct ibv_qp_attr a = {.qp_state = state};
	int rc;

	switch (state) {
	case IBV_QPS_INIT:
		if (from == IBV_QPS_RESET)
			return to_init(q);
		break;
	case IBV_QPS_RTR:
		if (from == IBV_QPS_INIT)
			return to_rtr(q);
		break;
	case IBV_QPS_RTS:
		return to_rts(q, from);
	default:
		break;
	}
	rc = ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
	if (rc != 0)
		return fail_modify(q, pmd_qp_state_name(state), rc);
	if (state == IBV_QPS_RESET)
		pmd_streams_qp_gone(q, false); /* RESET empties its queues: nothing completes */
	return 0;
}

static struct pmd_qp *slot_new(void)
{
	for (int i = 0; i < PMD_QPS_MAX; i++)
		if (!pmd_qps[i].used) {
			memset(&pmd_qps[i], 0, sizeof(pmd_qps[i]));
			pmd_qps[i].id = (unsigned int)i;
			pmd_qps[i].peer = -1;
			return &pmd_qps[i];
		}
	pmd_err("no room for two more QPs (%d at most): destroy some", PMD_QPS_MAX);
	return NULL;
}

static void qp_free(struct pmd_qp *q)
{
	if (q->ah != NULL)
		ibv_destroy_ah(q->ah);
	if (q->qp != NULL)
		ibv_destroy_qp(q->qp);
	if (q->cq != NULL)
		ibv_destroy_cq(q->cq);
	q->used = false;
}

static int qp_open(struct pmd_qp *q, enum ibv_qp_type type, struct pmd_port *port)
{
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = PMD_QP_WR,
			.max_recv_wr = PMD_QP_WR,
			.max_send_sge = 1,
			.max_recv_sge = 1},
		.qp_type = type,
	};

	q->used = true;
	q->type = type;
	q->port = port;
	q->cq = ibv_create_cq(port->ctx, 2 * PMD_QP_WR, NULL, NULL, 0);
	if (q->cq == NULL)
		return pmd_err("port %u: ibv_create_cq: %s", port->id, strerror(errno));
	ia.send_cq = q->cq;
	ia.recv_cq = q->cq;
	q->qp = ibv_create_qp(port->pd, &ia);
	if (q->qp == NULL)
		return pmd_err("port %u: ibv_create_qp: %s", port->id, strerror(errno));
	return 0;
}

static int ud_ah(struct pmd_qp *q)
{
	struct ibv_ah_attr ah = {
		.is_global = 1,
		.port_num = 1,
		.grh = {.dgid = q->peer_port->gid,
			.sgid_index = (uint8_t)q->port->gid_index,
			.hop_limit = HOP_LIMIT},
	};

	q->ah = ibv_create_ah(q->port->pd, &ah);
	if (q->ah == NULL)
		return pmd_err("qp %u: ibv_create_ah: %s", q->id, strerror(errno));
	return 0;
}

int pmd_qp_pair_create(enum ibv_qp_type type, struct pmd_port *a, struct pmd_port *b,
		       unsigned int ids[2])
{
	struct pmd_qp *q[2] = {slot_new(), NULL};

	if (q[0] == NULL)
		return -1;
	q[0]->used = true; /* so that the second slot is another one */
	q[1] = slot_new();
	if (q[1] == NULL) {
		q[0]->used = false;
		return -1;
	}
	if (qp_open(q[0], type, a) != 0 || qp_open(q[1], type, b) != 0)
		goto out_free;
	for (int i = 0; i < 2; i++) {
		q[i]->peer = (int)q[1 - i]->id;
		q[i]->peer_qpn = q[1 - i]->qp->qp_num;
		q[i]->peer_port = q[1 - i]->port;
	}
	/* both to INIT first: each RTR needs the other's first PSN */
	if (to_init(q[0]) != 0 || to_init(q[1]) != 0)
		goto out_free;
	for (int i = 0; i < 2; i++)
		if (to_rtr(q[i]) != 0 || to_rts(q[i], IBV_QPS_RTR) != 0 ||
		    (type == IBV_QPT_UD && ud_ah(q[i]) != 0))
			goto out_free;
	ids[0] = q[0]->id;
	ids[1] = q[1]->id;
	return 0;

out_free:
	qp_free(q[0]);
	qp_free(q[1]);
	return -1;
}

int pmd_qp_destroy(struct pmd_qp *q)
{
	struct pmd_qp *peer = pmd_qp_by_id(q->peer);

	if (q->tx != NULL && !pmd_stream_finished(q->tx))
		return pmd_err("qp %u runs stream %u: stop it first", q->id, q->tx->id);
	if (q->rx != NULL && !pmd_stream_finished(q->rx))
		return pmd_err("qp %u takes stream %u: stop it first", q->id, q->rx->id);
	pmd_streams_qp_gone(q, true);
	qp_free(q);
	if (peer != NULL)
		peer->peer = -1;
	return 0;
}

void pmd_qps_destroy_all(void)
{
	for (int i = 0; i < PMD_QPS_MAX; i++)
		if (pmd_qps[i].used) {
			pmd_streams_qp_gone(&pmd_qps[i], true);
			qp_free(&pmd_qps[i]);
		}
}
