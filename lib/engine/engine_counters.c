/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The counter table (include/droce_counters.h, doc/counters.md): every counter's
 * name, its Soft-RoCE and mlx5 names, what it counts, and where it lives, a
 * field of struct droce_tqp_stats (per QP, summed per port) or of what a port
 * counts by itself. A QP's counters are read on its lcore between two loop passes,
 * a port's while every lcore is parked (control commands): the lcores are the only
 * writers, so what is copied is exact.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "engine_priv.h"

/* What a port counts beside its QPs, gathered for one read. */
struct port_own {
	uint64_t send_err;
	uint64_t rx_not_roce;
	uint64_t rx_no_qp;
	uint64_t neigh_requests;
	uint64_t neigh_failed;
	uint64_t neigh_queued;
	uint64_t neigh_queue_dropped;
	uint64_t loopback_pkts;
	uint64_t loopback_dropped;
	uint64_t capture_frames;
	uint64_t capture_dropped;
	uint64_t parse[DROCE_PARSE_STATUS_COUNT];
	uint64_t gsi_rx;
	uint64_t gsi_rx_dropped;
	uint64_t gsi_rx_unsupported;
	uint64_t gsi_unsupported_class;
	uint64_t gsi_tx;
	uint64_t gsi_tx_unresolved_dropped;
	uint64_t mad[DROCE_MAD_STATUS_COUNT];
};

enum counter_home {
	HOME_QP,   /* struct droce_tqp_stats: per QP, summed per port */
	HOME_PORT, /* struct port_own */
};

struct counter {
	struct droce_counter_desc desc;
	enum counter_home home;
	uint16_t off; /* of the uint64_t in its home */
};

#define BOTH (DROCE_COUNTER_QP | DROCE_COUNTER_PORT)
#define QP(field, rxe_name, mlx5_name, text)                                    \
	{                                                                       \
		.desc = {.name = #field,                                        \
			 .rxe = rxe_name,                                       \
			 .mlx5 = mlx5_name,                                     \
			 .help = text,                                          \
			 .scope = BOTH},                                        \
		.home = HOME_QP, .off = offsetof(struct droce_tqp_stats, field) \
	}
#define PORT(field, rxe_name, mlx5_name, text)                             \
	{                                                                  \
		.desc = {.name = #field,                                   \
			 .rxe = rxe_name,                                  \
			 .mlx5 = mlx5_name,                                \
			 .help = text,                                     \
			 .scope = DROCE_COUNTER_PORT},                     \
		.home = HOME_PORT, .off = offsetof(struct port_own, field) \
	}
/* the parser's reasons keep droce_parse_status_name's names (test_counters.c checks) */
#define PARSE(status, status_name, text, mlx5_name)                                \
	{                                                                          \
		.desc = {.name = status_name,                                      \
			 .mlx5 = mlx5_name,                                        \
			 .help = text,                                             \
			 .scope = DROCE_COUNTER_PORT},                             \
		.home = HOME_PORT, .off = offsetof(struct port_own, parse[status]) \
	}

/* the GSI's malformed MADs keep droce_mad_status_name's names (test_engine_gsi.c checks) */
#define MAD(status, status_name, text)                                                    \
	{                                                                                 \
		.desc = {.name = status_name, .help = text, .scope = DROCE_COUNTER_PORT}, \
		.home = HOME_PORT, .off = offsetof(struct port_own, mad[status])          \
	}

static const struct counter table[] = {
	/* traffic */
	QP(sent_pkts, "sent_pkts", NULL, "frames QPs sent: requests, responses, ACKs and NAKs"),
	QP(sent_bytes, NULL, NULL, "bytes of those frames, Ethernet header to ICRC"),
	QP(rcvd_pkts, "rcvd_pkts", NULL, "frames QPs took in a receiving state"),
	QP(rcvd_bytes, NULL, NULL, "bytes of those frames, Ethernet header to ICRC"),
	QP(rdma_sends, "rdma_sends", NULL, "SEND work requests completed successfully"),
	QP(rdma_recvs, "rdma_recvs", NULL, "receive work requests completed successfully"),
	QP(rx_write_requests, NULL, "rx_write_requests", "RDMA WRITE messages received"),
	QP(rx_read_requests, NULL, "rx_read_requests", "RDMA READ requests received"),
	QP(rx_atomic_requests, NULL, "rx_atomic_requests", "atomic requests received"),
	/* responder */
	QP(duplicate_request, "duplicate_request", "duplicate_request",
	   "requests with a PSN already executed"),
	QP(out_of_sequence, "out_of_seq_request", "out_of_sequence",
	   "PSN gaps found; an RC responder sends one NAK sequence error for each"),
	QP(send_rnr_err, "send_rnr_err", NULL, "RNR NAKs sent: no receive work request posted"),
	QP(out_of_buffer, NULL, "out_of_buffer",
	   "UD and UC messages dropped: no receive work request posted"),
	QP(resp_local_length_error, NULL, "resp_local_length_error",
	   "messages longer than their receive work request"),
	QP(resp_remote_access_errors, NULL, "resp_remote_access_errors",
	   "requests refused for their access (RC: NAK remote access error sent)"),
	QP(resp_invalid_request, NULL, NULL,
	   "requests refused as invalid (RC: NAK invalid request sent)"),
	QP(resp_remote_op_errors, NULL, NULL,
	   "requests that failed at the responder (RC: NAK remote operational error sent)"),
	QP(resp_cqe_error, NULL, "resp_cqe_error", "receive completions with an error"),
	QP(resp_cqe_flush_error, NULL, "resp_cqe_flush_error", "receive completions flushed"),
	QP(uc_msg_drop, NULL, NULL, "UC packets dropped: bad opcode sequence or length"),
	QP(bad_state_drop, NULL, NULL, "packets for a QP in RESET, INIT or ERR"),
	QP(pkey_violations, NULL, NULL, "packets dropped for their P_Key"),
	QP(qkey_violations, NULL, NULL, "UD packets dropped for their Q_Key"),
	/* requester and completer */
	QP(packet_seq_err, "rcvd_seq_err", "packet_seq_err", "NAK sequence errors received"),
	QP(rnr_nak_retry_err, "rcvd_rnr_err", "rnr_nak_retry_err", "RNR NAKs received and retried"),
	QP(local_ack_timeout_err, NULL, "local_ack_timeout_err", "ACK timeouts that sent again"),
	QP(implied_nak_seq_err, NULL, "implied_nak_seq_err",
	   "READ and atomic responses found missing and asked for again"),
	QP(completer_retry_err, "completer_retry_err", NULL,
	   "go-back-N restarts, whatever the cause"),
	QP(req_transport_retries_exceeded, "retry_exceeded_err", "req_transport_retries_exceeded",
	   "work requests failed: retry_cnt used up"),
	QP(req_rnr_retries_exceeded, "retry_rnr_exceeded_err", "req_rnr_retries_exceeded",
	   "work requests failed: rnr_retry used up"),
	QP(req_remote_access_errors, NULL, "req_remote_access_errors",
	   "NAK remote access errors received"),
	QP(req_remote_invalid_request, NULL, "req_remote_invalid_request",
	   "NAK invalid requests received"),
	QP(req_remote_op_errors, NULL, NULL, "NAK remote operational errors received"),
	QP(req_cqe_error, NULL, "req_cqe_error", "send completions with an error"),
	QP(req_cqe_flush_error, NULL, "req_cqe_flush_error", "send completions flushed"),
	QP(rcvd_resp_drop, NULL, NULL,
	   "responses dropped: duplicate, stale or for no outstanding request"),
	QP(neigh_miss, NULL, NULL, "sends that waited for their destination's MAC"),
	QP(neigh_drop, NULL, NULL,
	   "packets dropped at once: nobody answered for their destination's address"),
	QP(window_waits, NULL, NULL, "RC send passes held back by the send window"),
	QP(zc_frames, NULL, NULL, "RC frames sent with their payload by reference to the MR"),
	QP(zc_copied, NULL, NULL,
	   "RC frames copied although zero copy was on: short, inline or in too many pieces"),
	QP(zc_waits, NULL, NULL, "RC send WQEs whose completion waited for their frames"),
	/* the port's own */
	PORT(send_err, "send_err", NULL,
	     "frames lost: the device was behind by a whole TX backlog"),
	PORT(rx_not_roce, NULL, NULL, "frames received that are not RoCEv2 (ARP, ND, other)"),
	PORT(rx_no_qp, NULL, NULL, "RoCEv2 packets for a QP the port does not have"),
	PORT(neigh_requests, NULL, NULL, "ARP and neighbour solicitation requests sent"),
	PORT(neigh_failed, NULL, NULL, "address resolutions that got no answer"),
	PORT(neigh_queued, NULL, NULL, "UD frames that waited for their destination's MAC"),
	PORT(neigh_queue_dropped, NULL, NULL,
	     "of those, dropped: their destination never resolved in time"),
	PORT(loopback_pkts, NULL, NULL, "frames to the port's own address, looped back"),
	PORT(loopback_dropped, NULL, NULL, "looped frames dropped: the loopback ring was full"),
	PORT(capture_frames, NULL, NULL, "frames offered to the port's capture"),
	PORT(capture_dropped, NULL, NULL, "of those, not recorded: the capture's ring was full"),
	PARSE(DROCE_PARSE_TRUNC_L2, "trunc_l2", "frames shorter than their Ethernet header", NULL),
	PARSE(DROCE_PARSE_TRUNC_IP, "trunc_ip", "frames shorter than their IP header", NULL),
	PARSE(DROCE_PARSE_BAD_IP_VERSION, "bad_ip_version", "IP version not that of the ethertype",
	      NULL),
	PARSE(DROCE_PARSE_BAD_IP_HDR_LEN, "bad_ip_hdr_len", "IPv4 header length below 5 words",
	      NULL),
	PARSE(DROCE_PARSE_BAD_IP_LEN, "bad_ip_len",
	      "IP length beyond the frame or below its headers", NULL),
	PARSE(DROCE_PARSE_BAD_IP_CSUM, "bad_ip_csum", "IPv4 header checksum wrong", NULL),
	PARSE(DROCE_PARSE_IP_FRAGMENT, "ip_fragment", "IPv4 fragments to the RoCEv2 port", NULL),
	PARSE(DROCE_PARSE_TRUNC_UDP, "trunc_udp", "no room for the UDP header", NULL),
	PARSE(DROCE_PARSE_BAD_UDP_LEN, "bad_udp_len", "UDP length not that of the IP packet", NULL),
	PARSE(DROCE_PARSE_TRUNC_BTH, "trunc_bth", "no room for the BTH and ICRC", NULL),
	PARSE(DROCE_PARSE_BAD_BTH_VERSION, "bad_bth_version", "BTH transport version not 0", NULL),
	PARSE(DROCE_PARSE_BAD_OPCODE, "bad_opcode", "reserved or unsupported opcodes", NULL),
	PARSE(DROCE_PARSE_TRUNC_EXT_HDR, "trunc_ext_hdr",
	      "no room for the opcode's extended headers", NULL),
	PARSE(DROCE_PARSE_BAD_PAD, "bad_pad",
	      "pad count beyond the payload, or length not 4-aligned", NULL),
	PARSE(DROCE_PARSE_BAD_PAYLOAD, "bad_payload", "payload on an opcode that carries none",
	      NULL),
	PARSE(DROCE_PARSE_PAYLOAD_TOO_LONG, "payload_too_long",
	      "payload longer than the port's MTU allows", NULL),
	PARSE(DROCE_PARSE_BAD_ICRC, "icrc_error", "packets whose ICRC is wrong",
	      "rx_icrc_encapsulated"),
	/* the GSI (QP1) */
	PORT(gsi_rx, NULL, NULL, "MADs QP1 received for the CM, queued for it"),
	PORT(gsi_rx_dropped, NULL, NULL, "MADs for the CM dropped: its queue was full"),
	PORT(gsi_rx_unsupported, NULL, NULL,
	     "MADs of a class or class version nobody serves dropped: no Get or Set"),
	PORT(gsi_unsupported_class, NULL, NULL,
	     "Get and Set of a class nobody serves answered: status bad version/class"),
	PORT(gsi_tx, NULL, NULL, "MADs sent from QP1 (or waiting for their destination's MAC)"),
	PORT(gsi_tx_unresolved_dropped, NULL, NULL,
	     "MADs from QP1 dropped: their destination's address never resolved"),
	MAD(DROCE_MAD_NOT_GSI, "not_gsi", "packets to QP1 that are not UD SEND Only"),
	MAD(DROCE_MAD_BAD_QKEY, "gsi_bad_qkey", "packets to QP1 without the GSI's Q_Key"),
	MAD(DROCE_MAD_TRUNC, "mad_trunc", "GSI packets shorter than a MAD"),
	MAD(DROCE_MAD_TOO_LONG, "mad_too_long", "GSI packets longer than a MAD"),
	MAD(DROCE_MAD_BAD_BASE_VERSION, "mad_bad_base_version", "MADs of a base version not 1"),
	MAD(DROCE_MAD_BAD_METHOD, "mad_bad_method",
	    "CM MADs whose method does not fit their attribute"),
	MAD(DROCE_MAD_BAD_ATTR, "mad_bad_attr", "CM MADs of an attribute the CM does not have"),
	MAD(DROCE_MAD_BAD_INFO_LEN, "mad_bad_info_len",
	    "CM REJ, APR or SIDR_REP announcing more than 72 bytes of information"),
};

#define TABLE_LEN (sizeof(table) / sizeof(table[0]))
static_assert(sizeof(struct droce_tqp_stats) % sizeof(uint64_t) == 0,
	      "the QP counters are an array of uint64_t");

unsigned int droce_counter_count(void)
{
	return TABLE_LEN;
}

const struct droce_counter_desc *droce_counter_desc(unsigned int id)
{
	return id < TABLE_LEN ? &table[id].desc : NULL;
}

int droce_counter_find(const char *name)
{
	if (name == NULL)
		return -EINVAL;
	for (unsigned int i = 0; i < TABLE_LEN; i++) {
		const struct droce_counter_desc *d = &table[i].desc;

		if (strcmp(d->name, name) == 0 || (d->rxe != NULL && strcmp(d->rxe, name) == 0) ||
		    (d->mlx5 != NULL && strcmp(d->mlx5, name) == 0))
			return (int)i;
	}
	return -ENOENT;
}

static void stats_add(struct droce_tqp_stats *sum, const struct droce_tqp_stats *s)
{
	uint64_t *d = (uint64_t *)sum;
	const uint64_t *v = (const uint64_t *)s;

	for (size_t i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		d[i] += v[i];
}

static uint64_t home_value(const void *home, uint16_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)home + off, sizeof(v));
	return v;
}

/* The counters of @p scope, in id order, from the two homes; returns how many exist. */
static int counters_fill(uint32_t scope, const struct droce_tqp_stats *qp,
			 const struct port_own *port, struct droce_counter *c, unsigned int n)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < TABLE_LEN; i++) {
		if (!(table[i].desc.scope & scope))
			continue;
		if (k < n) {
			c[k].id = i;
			c[k].name = table[i].desc.name;
			c[k].value = home_value(table[i].home == HOME_QP ? (const void *)qp
									 : (const void *)port,
						table[i].off);
		}
		k++;
	}
	return (int)k;
}

int engine_counters_port(struct engine *e, const char *name, struct droce_counter *c,
			 unsigned int n)
{
	struct droce_tqp_stats sum;
	struct droce_neigh_stats ns;
	struct port_own own;
	struct engine_port *p = NULL;
	unsigned int i, k;

	for (i = 0; i < e->n_ports && p == NULL; i++)
		if (strcmp(e->ports[i].conf.name, name) == 0)
			p = &e->ports[i];
	if (p == NULL)
		return -ENOENT;
	/* every lcore's share of the port: run with every lcore parked (engine_ctl.c) */
	memset(&sum, 0, sizeof(sum));
	memset(&own, 0, sizeof(own));
	for (k = 0; k < e->n_lcores; k++) {
		const struct engine_lcore *lc = &e->lcores[k];
		const struct engine_pq *pq = &p->pq[k];

		stats_add(&sum, &pq->retired);
		for (i = 0; i < lc->n_list; i++)
			if (lc->list[i]->port == p)
				stats_add(&sum, &lc->list[i]->tqp.stats);
		own.send_err += p->port.qstats[k].tx_dropped;
		own.rx_not_roce += pq->rx.not_roce;
		own.rx_no_qp += pq->rx.no_qp;
		own.neigh_queued += pq->unres_queued;
		own.neigh_queue_dropped += pq->unres_dropped;
		own.loopback_pkts += pq->loop_pkts;
		own.loopback_dropped += pq->loop_dropped;
		for (i = 0; i < DROCE_PARSE_STATUS_COUNT; i++)
			own.parse[i] += pq->rx.parse[i];
		own.gsi_rx += pq->gsi.rx;
		own.gsi_rx_dropped += pq->gsi.rx_dropped;
		own.gsi_rx_unsupported += pq->gsi.rx_unsupported;
		own.gsi_unsupported_class += pq->gsi.unsupported_answered;
		own.gsi_tx += pq->gsi.tx;
		own.gsi_tx_unresolved_dropped += pq->gsi.tx_unresolved_dropped;
		for (i = 0; i < DROCE_MAD_STATUS_COUNT; i++)
			own.mad[i] += pq->gsi.mad[i];
	}
	droce_neigh_stats_get(p->neigh, &ns);
	own.neigh_requests = ns.requests;
	own.neigh_failed = ns.failed;
	if (p->cap != NULL) {
		struct droce_capture_stats cs;

		droce_capture_stats_get(p->cap, &cs);
		own.capture_frames = cs.frames;
		own.capture_dropped = cs.dropped;
	}
	return counters_fill(DROCE_COUNTER_PORT, &sum, &own, c, n);
}

int engine_counters_qp(struct engine_lcore *lc, uint32_t qpn, struct droce_counter *c,
		       unsigned int n)
{
	struct engine_qp *q = engine_qp_find(lc, qpn);

	if (q == NULL)
		return -ENOENT;
	return counters_fill(DROCE_COUNTER_QP, &q->tqp.stats, NULL, c, n);
}

void engine_counters_retire(struct engine_qp *q)
{
	stats_add(&q->pq->retired, &q->tqp.stats);
}

int droce_engine_port_counters(const char *port, struct droce_counter *c, unsigned int n)
{
	struct engine_cmd cmd = {.type = CMD_COUNTERS_PORT, .name = port, .ctrs = c, .n = n};

	if (port == NULL || (c == NULL && n > 0))
		return -EINVAL;
	return engine_cmd_run(&cmd);
}

int droce_engine_qp_counters(uint32_t qpn, struct droce_counter *c, unsigned int n)
{
	struct engine_cmd cmd = {.type = CMD_COUNTERS_QP, .id = qpn, .ctrs = c, .n = n};

	if (c == NULL && n > 0)
		return -EINVAL;
	return engine_cmd_run(&cmd);
}

/*
 * The verbs face of the same counters: a verbs device is named after the port the engine
 * runs for it, and a verbs QP is the engine's QP of the same number.
 */
int droce_port_counters(struct ibv_context *context, uint8_t port_num, struct droce_counter *c,
			unsigned int n)
{
	int rc;

	if (context == NULL || context->device == NULL || port_num != 1 || (c == NULL && n > 0))
		return -EINVAL;
	rc = droce_engine_port_counters(context->device->name, c, n);
	/* not running, or running without this device's port */
	return rc == -ENOENT ? -ENODEV : rc;
}

int droce_qp_counters(struct ibv_qp *qp, struct droce_counter *c, unsigned int n)
{
	int rc;

	if (qp == NULL || (c == NULL && n > 0))
		return -EINVAL;
	rc = droce_engine_qp_counters(qp->qp_num, c, n);
	/* not running, or the engine does not run this QP */
	return rc == -ENOENT ? -ENODEV : rc;
}
