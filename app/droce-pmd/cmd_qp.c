/* SPDX-License-Identifier: BSD-3-Clause */
/* QP commands: create qp, modify qp, destroy qp, show qp list, show qp N. */
#include <errno.h>
#include <string.h>

#include "droce_pmd.h"

static const char *const state_words[] = {
	[IBV_QPS_RESET] = "reset", [IBV_QPS_INIT] = "init", [IBV_QPS_RTR] = "rtr",
	[IBV_QPS_RTS] = "rts",     [IBV_QPS_SQD] = "sqd",   [IBV_QPS_SQE] = "sqe",
	[IBV_QPS_ERR] = "err",
};

int pmd_cmd_qp_create(int argc, char **argv)
{
	enum ibv_qp_type type = strcmp(argv[2], "rc") == 0   ? IBV_QPT_RC
				: strcmp(argv[2], "uc") == 0 ? IBV_QPT_UC
							     : IBV_QPT_UD;
	struct pmd_port *a = pmd_port_get(argv[3]), *b;
	unsigned int ids[2];
	int rc;

	(void)argc;
	if (a == NULL)
		return -1;
	b = pmd_port_get(argv[4]);
	if (b == NULL)
		return -1;
	pmd_lock();
	rc = pmd_qp_pair_create(type, a, b, ids);
	pmd_unlock();
	if (rc != 0)
		return -1;
	printf("created qp %u (port %u, qpn 0x%06x) and qp %u (port %u, qpn 0x%06x): %s, RTS\n",
	       ids[0], a->id, pmd_qps[ids[0]].qp->qp_num, ids[1], b->id, pmd_qps[ids[1]].qp->qp_num,
	       pmd_qp_type_name(type));
	return 0;
}

int pmd_cmd_qp_modify(int argc, char **argv)
{
	enum ibv_qp_state to = IBV_QPS_RESET, from;
	struct pmd_qp *q;
	int rc = -1;

	(void)argc;
	for (unsigned int i = 0; i < sizeof(state_words) / sizeof(state_words[0]); i++)
		if (strcmp(argv[4], state_words[i]) == 0)
			to = (enum ibv_qp_state)i;
	pmd_lock();
	q = pmd_qp_get(argv[2]);
	if (q != NULL) {
		from = pmd_qp_state(q);
		rc = pmd_qp_modify(q, to);
		if (rc == 0)
			printf("qp %u: %s -> %s\n", q->id, pmd_qp_state_name(from),
			       pmd_qp_state_name(pmd_qp_state(q)));
	}
	pmd_unlock();
	return rc;
}

int pmd_cmd_qp_destroy(int argc, char **argv)
{
	struct pmd_qp *q;
	int rc = -1;

	(void)argc;
	pmd_lock();
	q = pmd_qp_get(argv[2]);
	if (q != NULL) {
		unsigned int id = q->id;

		rc = pmd_qp_destroy(q);
		if (rc == 0)
			printf("qp %u destroyed\n", id);
	}
	pmd_unlock();
	return rc;
}

static void stream_ids(const struct pmd_qp *q, char *buf, size_t len)
{
	if (q->tx != NULL && q->rx != NULL)
		snprintf(buf, len, "tx %u, rx %u", q->tx->id, q->rx->id);
	else if (q->tx != NULL)
		snprintf(buf, len, "tx %u", q->tx->id);
	else if (q->rx != NULL)
		snprintf(buf, len, "rx %u", q->rx->id);
	else
		snprintf(buf, len, "-");
}

int pmd_cmd_qp_list(int argc, char **argv)
{
	unsigned int n = 0;

	(void)argc;
	(void)argv;
	pmd_lock();
	printf("  qp  port  qpn       type  state  peer  peer-qpn  streams\n");
	for (int i = 0; i < PMD_QPS_MAX; i++) {
		struct pmd_qp *q = &pmd_qps[i];
		char peer[16] = "-", streams[32];

		if (!q->used)
			continue;
		if (q->peer >= 0)
			snprintf(peer, sizeof(peer), "%d", q->peer);
		stream_ids(q, streams, sizeof(streams));
		printf("  %-3u %-5u 0x%06x  %-5s %-6s %-5s 0x%06x  %s\n", q->id, q->port->id,
		       q->qp->qp_num, pmd_qp_type_name(q->type), pmd_qp_state_name(pmd_qp_state(q)),
		       peer, q->peer_qpn, streams);
		n++;
	}
	pmd_unlock();
	if (n == 0)
		printf("  (no QP: create qp rc|uc|ud <port> <port>)\n");
	return 0;
}

static const char *mtu_name(enum ibv_mtu m)
{
	static char buf[16];

	snprintf(buf, sizeof(buf), "%u", m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0);
	return buf;
}

static void print_counters(struct pmd_qp *q)
{
	struct droce_counter c[PMD_COUNTERS_MAX];
	int n = droce_qp_counters(q->qp, c, PMD_COUNTERS_MAX);

	if (n < 0) {
		printf("  counters: %s\n", strerror(-n));
		return;
	}
	printf("  counters:\n");
	for (int i = 0; i < n && i < PMD_COUNTERS_MAX; i++)
		printf("    %-32s %llu\n", c[i].name, (unsigned long long)c[i].value);
}

int pmd_cmd_qp_show(int argc, char **argv)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct pmd_qp *q;
	char streams[32];
	int rc;

	(void)argc;
	pmd_lock();
	q = pmd_qp_get(argv[2]);
	if (q == NULL) {
		pmd_unlock();
		return -1;
	}
	rc = ibv_query_qp(q->qp, &a, 0, &ia);
	if (rc != 0) {
		pmd_unlock();
		return pmd_err("qp %u: ibv_query_qp: %s", q->id, strerror(rc));
	}
	printf("qp %u: %s, port %u (%s), qpn 0x%06x, state %s\n", q->id, pmd_qp_type_name(q->type),
	       q->port->id, q->port->name, q->qp->qp_num, pmd_qp_state_name(a.qp_state));
	if (q->peer >= 0)
		printf("  peer: qp %d, port %u (%s), qpn 0x%06x\n", q->peer, q->peer_port->id,
		       q->peer_port->name, q->peer_qpn);
	else
		printf("  peer: destroyed (qpn 0x%06x)\n", q->peer_qpn);
	if (q->type == IBV_QPT_UD)
		printf("  qkey 0x%08x, sq_psn 0x%06x\n", a.qkey, a.sq_psn);
	else
		printf("  path_mtu %s, sq_psn 0x%06x, rq_psn 0x%06x, dest_qp_num 0x%06x\n",
		       mtu_name(a.path_mtu), a.sq_psn, a.rq_psn, a.dest_qp_num);
	if (q->type == IBV_QPT_RC)
		printf("  timeout %u, retry_cnt %u, rnr_retry %u, min_rnr_timer %u, "
		       "max_rd_atomic %u, max_dest_rd_atomic %u\n",
		       a.timeout, a.retry_cnt, a.rnr_retry, a.min_rnr_timer, a.max_rd_atomic,
		       a.max_dest_rd_atomic);
	if (q->type != IBV_QPT_UD)
		printf("  access%s%s%s%s\n", a.qp_access_flags == 0 ? " none" : "",
		       a.qp_access_flags & IBV_ACCESS_REMOTE_WRITE ? " remote_write" : "",
		       a.qp_access_flags & IBV_ACCESS_REMOTE_READ ? " remote_read" : "",
		       a.qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC ? " remote_atomic" : "");
	printf("  cap: send_wr %u, recv_wr %u, send_sge %u, recv_sge %u, inline %u\n",
	       a.cap.max_send_wr, a.cap.max_recv_wr, a.cap.max_send_sge, a.cap.max_recv_sge,
	       a.cap.max_inline_data);
	stream_ids(q, streams, sizeof(streams));
	printf("  streams: %s; stale completions %llu\n", streams,
	       (unsigned long long)q->stale_cqes);
	print_counters(q);
	pmd_unlock();
	return 0;
}
