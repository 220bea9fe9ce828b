/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Linux Soft-RoCE captures replayed into a droce responder, without a port.
 *
 * A droce RC QP stands for the capture's server (10.99.0.2 / fd00::2, QPN 0x11: the first
 * QP a test process creates through the verbs API). The client's requests to it are fed,
 * in capture order, into droce_tqp_recv(), each followed by a send pass (one frame per RX
 * burst); what droce transmits is compared with the responses Linux's server sent.
 *
 * Rewrites, the minimum that cannot match between two hosts:
 *  - RETH and AtomicETH: the virtual address is mapped onto droce's MR at the same offset
 *    from the lowest page the capture's requests touch, the rkey becomes the MR's; the frame
 *    is rebuilt with droce_build_frame() (new ICRC), every other byte as captured.
 *  - Receive WQEs: the server application's are not on the wire; the test posts them, one
 *    per SEND message the capture carries, each as long as the longest message, and keeps
 *    the receive queue topped up so that it never runs dry earlier than Linux's did (Linux
 *    sent no RNR NAK in these captures).
 *  - READ sources: the MR is filled beforehand with the bytes Linux's READ responses carried
 *    (placed by the READ request each response answers), so that droce's READ responses
 *    compare byte for byte.
 *  - Atomic targets start with the original value of the first AtomicAckETH for each address.
 *  - QP attributes Linux's server had: path MTU (from the full FIRST/MIDDLE packets, else the
 *    smallest of 1024/4096 that fits), rq_psn (the first request PSN), dest QPN, access flags
 *    (what the requests need), max_dest_rd_atomic 128 (rxe's and droce's max_qp_rd_atom, which
 *    perftest asks for: the lossy READ run has 17 READs in flight when it retries the oldest).
 *
 * What the capture cannot show (see linux_slots() and responses_compare()):
 *  - Frames the server sent that the capture lost (netem loss, the capture's own drops): the
 *    server's IPv4 IDs count them; each such hole may stand for one droce response.
 *  - The -head captures were cut: droce's responses to the last requests are not compared.
 *
 * Tolerated differences (each only where IBTA leaves a choice):
 *  - AETH credit count of an ACK: Linux rxe advertises 0x1f ("invalid", no end-to-end flow
 *    control), as does droce; any credit value is accepted. ACK vs RNR NAK vs NAK, the NAK
 *    code, the PSN and the MSN must match exactly.
 *  - ACK coalescing: ACKs are cumulative, so a responder may send fewer of them as long as
 *    every AckReq packet's PSN is eventually acknowledged in order. Both re-ACK duplicate
 *    SEND/WRITE packets (C9-105), Linux once per packet, droce once per burst of them: the
 *    reorder run shows it. See responses_compare().
 *  - IP ID, UDP source port, IPv4 DF/ECN/TTL and IPv6 flow label: not transport fields.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <droce_transport.h>
#include <droce_wire.h>
#include <droce_wire_mbuf.h>

#include "droce_test.h"
#include "verbs_harness.h"

#define SERVER_QPN 0x11u
#define RQ_DEPTH   256u
#define FAILS_MAX  30u
#define FRAME_MAX  9216u
#define PSN_SLOTS  16384u

/* A frame of the capture, or one droce sent. */
struct frame {
	uint64_t number; /* capture frame (1-based); droce: the request frame it answered */
	uint8_t *bytes;
	uint32_t len;
	struct droce_pkt pkt;
	struct droce_hdr_fields f;
	struct droce_addr a;
	bool roce;
};

struct frames {
	struct frame *v;
	size_t n, cap;
};

/* A READ request of the capture: where its response packets go in memory. */
struct read_req {
	uint32_t psn, npkts;
	uint64_t va;
};

static const char *cap_name;
static struct frames cap, out;
static uint64_t feeding; /* the request frame being fed */
static struct rte_mempool *pool;
static struct droce_tport_addr port;
static struct droce_timer_wheel wheel __attribute__((aligned(64)));
static uint8_t client_mac[6];
static unsigned int fails;

static void frames_push(struct frames *fs, uint64_t number, const uint8_t *bytes, uint32_t len)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct frame *fr;
	uint16_t ip_id;

	if (fs->n == fs->cap) {
		fs->cap = fs->cap ? fs->cap * 2 : 1024;
		fs->v = realloc(fs->v, fs->cap * sizeof(*fs->v));
		cr_assert_not_null(fs->v);
	}
	fr = &fs->v[fs->n++];
	memset(fr, 0, sizeof(*fr));
	fr->number = number;
	fr->len = len;
	fr->bytes = malloc(len);
	cr_assert_not_null(fr->bytes);
	memcpy(fr->bytes, bytes, len);
	fr->roce = droce_parse(fr->bytes, len, &cfg, &fr->pkt) == DROCE_PARSE_OK;
	if (fr->roce) {
		droce_pkt_fields(&fr->pkt, fr->bytes, &fr->f);
		droce_pkt_addr(&fr->pkt, fr->bytes, &fr->a, &ip_id);
	}
}

static void load_frame(uint64_t index, const uint8_t *frame, uint32_t len, void *arg)
{
	(void)arg;
	frames_push(&cap, index, frame, len);
}

static void frames_free(struct frames *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free(fs->v[i].bytes);
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}

/* ------------------------------------------------------------ the environment */

static void tx(void *arg, struct rte_mbuf *m)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct droce_pkt pkt;

	(void)arg;
	cr_assert_eq(m->nb_segs, 1, "%s: droce sent a chained frame", cap_name);
	cr_assert_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_OK,
		     "%s: droce sent a frame its own parser refuses (answering frame %llu)",
		     cap_name, (unsigned long long)feeding);
	frames_push(&out, feeding, rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m));
	rte_pktmbuf_free(m);
}

static int neigh(void *arg, const uint8_t ip[16], uint8_t mac[6])
{
	(void)arg;
	(void)ip;
	memcpy(mac, client_mac, 6);
	return 0;
}

static void cq_notify(void *arg, void *cq, bool solicited)
{
	(void)arg;
	droce_engine_cq_notify(cq, solicited);
}

static void qp_error(void *arg, void *qp, enum ibv_qp_state state, enum ibv_event_type ev)
{
	(void)arg;
	droce_engine_qp_error(qp, state, ev);
}

/* ------------------------------------------------------------ what the capture says */

static bool ip_eq(const struct droce_addr *a, const uint8_t ip[16], bool src)
{
	return memcmp(src ? a->src_ip : a->dst_ip, ip, a->ipv6 ? 16 : 4) == 0;
}

/* What the replay deduces from the capture before it starts. */
struct plan {
	bool ipv6;
	uint8_t server_ip[16], client_ip[16];
	uint8_t server_mac[6];
	uint32_t client_qpn;
	uint32_t first_psn;
	bool have_first;
	uint32_t pmtu;
	unsigned int access;
	uint32_t rkey; /* the capture's rkey (0: none) */
	uint64_t va_lo, va_hi;
	uint32_t recv_len;  /* longest SEND message */
	uint32_t recv_msgs; /* SEND messages (distinct PSNs of LAST/ONLY) */
	uint8_t tclass, hop_limit;
	/* SEND packets by PSN: opcode + 1 (0 free) and payload length */
	uint32_t psn_key[PSN_SLOTS];
	uint8_t psn_op[PSN_SLOTS];
	uint16_t psn_len[PSN_SLOTS];
	struct read_req *reads;
	size_t nreads;
};

static bool from_client(const struct plan *p, const struct frame *fr)
{
	return fr->roce && ip_eq(&fr->a, p->client_ip, true) && ip_eq(&fr->a, p->server_ip, false);
}

static bool from_server(const struct plan *p, const struct frame *fr)
{
	return fr->roce && ip_eq(&fr->a, p->server_ip, true) && ip_eq(&fr->a, p->client_ip, false);
}

/* A request to the server QP, or a response of the server QP. */
static bool is_request(const struct plan *p, const struct frame *fr)
{
	return from_client(p, fr) && fr->pkt.qpn == SERVER_QPN && (fr->pkt.mask & DROCE_OPM_REQ);
}

static bool is_response(const struct plan *p, const struct frame *fr)
{
	return from_server(p, fr) && (fr->pkt.mask & DROCE_OPM_RESP);
}

static int psn_slot(struct plan *p, uint32_t psn, bool insert)
{
	uint32_t h = (psn * 2654435761u) % PSN_SLOTS;

	for (uint32_t i = 0; i < PSN_SLOTS; i++, h = (h + 1) % PSN_SLOTS) {
		if (p->psn_op[h] != 0 && p->psn_key[h] == psn)
			return (int)h;
		if (p->psn_op[h] == 0) {
			if (!insert)
				return -1;
			p->psn_key[h] = psn;
			return (int)h;
		}
	}
	cr_assert_fail("%s: too many SEND PSNs", cap_name);
	return -1;
}

static uint32_t npkts(uint32_t len, uint32_t pmtu)
{
	return len == 0 ? 1 : (len + pmtu - 1) / pmtu;
}

static void plan_make(struct plan *p)
{
	size_t i;
	bool found = false;
	uint32_t max_only = 0;

	memset(p, 0, sizeof(*p));
	/* the server is 10.99.0.2 or fd00::2: the address of the first RoCE frame that has it */
	for (i = 0; i < cap.n && !found; i++) {
		const struct frame *fr = &cap.v[i];
		static const uint8_t v4[4] = {10, 99, 0, 2}, v4c[4] = {10, 99, 0, 3};
		static const uint8_t v6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
		static const uint8_t v6c[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3};

		if (!fr->roce)
			continue;
		p->ipv6 = fr->a.ipv6;
		memcpy(p->server_ip, p->ipv6 ? v6 : v4, p->ipv6 ? 16 : 4);
		memcpy(p->client_ip, p->ipv6 ? v6c : v4c, p->ipv6 ? 16 : 4);
		found = true;
	}
	cr_assert(found, "%s: no RoCEv2 frame", cap_name);
	p->va_lo = UINT64_MAX;
	for (i = 0; i < cap.n; i++) {
		const struct frame *fr = &cap.v[i];
		uint32_t m = fr->pkt.mask;

		if (from_server(p, fr)) {
			memcpy(p->server_mac, fr->bytes + 6, 6);
			p->client_qpn = fr->pkt.qpn;
			memcpy(client_mac, fr->bytes, 6);
		}
		if (!is_request(p, fr))
			continue;
		if (!p->have_first) {
			p->have_first = true;
			p->first_psn = fr->pkt.psn;
			p->tclass = fr->a.tclass;
			p->hop_limit = fr->a.ttl;
		}
		if ((m & DROCE_OPM_PAYLOAD) && !(m & DROCE_OPM_LAST))
			p->pmtu = fr->pkt.payload_len; /* FIRST and MIDDLE packets are full */
		if ((m & DROCE_OPM_PAYLOAD) && fr->pkt.payload_len > max_only)
			max_only = fr->pkt.payload_len;
		if (m & DROCE_OPM_WRITE)
			p->access |= IBV_ACCESS_REMOTE_WRITE;
		if (m & DROCE_OPM_READ)
			p->access |= IBV_ACCESS_REMOTE_READ;
		if (m & DROCE_OPM_ATOMIC)
			p->access |= IBV_ACCESS_REMOTE_ATOMIC;
		if (m & (DROCE_OPM_RETH | DROCE_OPM_ATMETH)) {
			bool atomic = m & DROCE_OPM_ATMETH;
			uint64_t va = atomic ? fr->f.atmeth.va : fr->f.reth.va;
			uint32_t rkey = atomic ? fr->f.atmeth.rkey : fr->f.reth.rkey;
			uint32_t len = atomic ? 8 : fr->f.reth.len;

			cr_assert(p->rkey == 0 || p->rkey == rkey,
				  "%s frame %llu: a second rkey (the replay maps one MR)", cap_name,
				  (unsigned long long)fr->number);
			p->rkey = rkey;
			if (va < p->va_lo)
				p->va_lo = va;
			if (va + len > p->va_hi)
				p->va_hi = va + len;
		}
		if (m & DROCE_OPM_SEND) {
			int s = psn_slot(p, fr->pkt.psn, true);

			p->psn_op[s] = (uint8_t)(fr->pkt.opcode + 1);
			p->psn_len[s] = fr->pkt.payload_len;
		}
	}
	cr_assert(p->have_first, "%s: no request to the server QP", cap_name);
	if (p->pmtu == 0)
		p->pmtu = max_only <= 1024 ? 1024 : 4096;
	cr_assert(p->pmtu == 1024 || p->pmtu == 4096, "%s: path MTU %u", cap_name, p->pmtu);
	if (p->va_lo == UINT64_MAX)
		p->va_lo = p->va_hi = 0;
	p->va_lo &= ~(uint64_t)4095; /* keep the offsets in a page, and 8-byte alignment */
	/* SEND messages: each LAST/ONLY PSN once; its length from its packets by PSN */
	for (uint32_t h = 0; h < PSN_SLOTS; h++) {
		uint32_t mask, len, psn;

		if (p->psn_op[h] == 0)
			continue;
		mask = droce_opcode_table[p->psn_op[h] - 1].mask;
		if (!(mask & DROCE_OPM_LAST))
			continue;
		len = p->psn_len[h];
		for (psn = p->psn_key[h]; !(mask & DROCE_OPM_FIRST);) {
			int s;

			psn = (psn - 1) & DROCE_PSN_MASK;
			s = psn_slot(p, psn, false);
			cr_assert_geq(s, 0, "%s: SEND PSN %u missing from the capture", cap_name,
				      psn);
			mask = droce_opcode_table[p->psn_op[s] - 1].mask;
			len += p->psn_len[s];
		}
		p->recv_msgs++;
		if (len > p->recv_len)
			p->recv_len = len;
	}
	/* READ requests, in capture order, to place the response bytes */
	p->reads = calloc(cap.n, sizeof(*p->reads));
	cr_assert_not_null(p->reads);
	for (i = 0; i < cap.n; i++) {
		const struct frame *fr = &cap.v[i];

		if (is_request(p, fr) && (fr->pkt.mask & DROCE_OPM_READ))
			p->reads[p->nreads++] = (struct read_req){
				.psn = fr->pkt.psn,
				.npkts = npkts(fr->f.reth.len, p->pmtu),
				.va = fr->f.reth.va,
			};
	}
}

/* ------------------------------------------------------------ the droce server */

struct server {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct droce_tqp tqp;
	struct droce_tcq tcq;
	struct droce_transport_env env;
	uint8_t *buf;
	size_t len, target_len;
	uint32_t recv_posted;
};

static uint8_t *target(struct server *s, const struct plan *p, uint64_t va)
{
	cr_assert(va >= p->va_lo && va - p->va_lo < s->target_len, "%s: address %#llx off the map",
		  cap_name, (unsigned long long)va);
	return s->buf + (va - p->va_lo);
}

static void server_setup(struct server *s, const struct plan *p, const char *name)
{
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 16,
			.max_recv_wr = RQ_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
	};
	struct droce_qp_view v;
	struct droce_cq_view cv;

	droce_test_eal_init(name);
	pool = rte_pktmbuf_pool_create("replay", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE + 8192,
				       SOCKET_ID_ANY);
	cr_assert_not_null(pool);
	s->ctx = harness_open(&s->pd);
	memcpy(port.mac, p->server_mac, 6);
	port.mtu_bytes = 4096;
	/* GID 0: the server's IPv4 address (IPv4-mapped), GID 1: its IPv6 address */
	memset(&port.gid[0], 0, sizeof(port.gid[0]));
	port.gid[0].raw[10] = port.gid[0].raw[11] = 0xff;
	memcpy(&port.gid[0].raw[12], (uint8_t[]){10, 99, 0, 2}, 4);
	memcpy(port.gid[1].raw, (uint8_t[]){0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}, 16);
	port.gid_count = 2;
	cr_assert_eq(droce_timer_wheel_init(&wheel, 0, 1024), 0);

	s->target_len = (size_t)(p->va_hi - p->va_lo + 4095) & ~(size_t)4095;
	s->len = s->target_len + (size_t)RQ_DEPTH * ((p->recv_len + 63) & ~63u) + 4096;
	s->buf = aligned_alloc(4096, (s->len + 4095) & ~(size_t)4095);
	cr_assert_not_null(s->buf);
	memset(s->buf, 0, s->len);
	s->cq = ibv_create_cq(s->ctx, 4096, NULL, NULL, 0);
	cr_assert_not_null(s->cq);
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &ia);
	cr_assert_not_null(s->qp);
	cr_assert_eq(s->qp->qp_num, SERVER_QPN, "%s: the first QP is %#x, not the capture's %#x",
		     cap_name, s->qp->qp_num, SERVER_QPN);
	s->mr = ibv_reg_mr(s->pd, s->buf, s->len, IBV_ACCESS_LOCAL_WRITE | p->access);
	cr_assert_not_null(s->mr);
	cr_assert_eq(harness_qp_to_rts(s->qp), 0);
	cr_assert_eq(droce_engine_qp_view(s->qp, &v), 0);
	cr_assert_eq(droce_tqp_init(&s->tqp, v.qpn, IBV_QPT_RC, v.pd, v.sq.addr, v.sq.len,
				    v.rq.addr, v.rq.len),
		     0);
	cr_assert_eq(droce_engine_cq_view(s->cq, &cv), 0);
	cr_assert_eq(droce_ring_prod_attach(&s->tcq.prod, cv.ring.addr, cv.ring.len), 0);
	s->tcq.user = s->cq;
	s->tqp.scq = &s->tcq;
	s->tqp.rcq = &s->tcq;
	s->tqp.user = s->qp;
	s->env = (struct droce_transport_env){
		.pool = pool,
		.keys = droce_engine_mr_table(),
		.port = &port,
		.tx = tx,
		.neigh = neigh,
		.cq_notify = cq_notify,
		.qp_error = qp_error,
		.arg = s,
		.wheel = &wheel,
		.tick_hz = 1000000000ull,
	};
}

static void server_connect(struct server *s, const struct plan *p)
{
	struct ibv_qp_attr attr = {
		.path_mtu = p->pmtu == 4096 ? IBV_MTU_4096 : IBV_MTU_1024,
		.dest_qp_num = p->client_qpn,
		.sq_psn = 0,
		.rq_psn = p->first_psn,
		.qp_access_flags = p->access,
		.ah_attr = {.is_global = 1,
			    .port_num = 1,
			    .grh = {.sgid_index = p->ipv6 ? 1 : 0,
				    .hop_limit = p->hop_limit,
				    .traffic_class = p->tclass}},
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.min_rnr_timer = 12,
		.max_rd_atomic = 16,
		.max_dest_rd_atomic = 128,
	};
	int rtr = IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_AV |
		  IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER | IBV_QP_MAX_DEST_RD_ATOMIC;
	int rts = IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		  IBV_QP_MAX_QP_RD_ATOMIC;

	if (p->ipv6) {
		memcpy(attr.ah_attr.grh.dgid.raw, p->client_ip, 16);
	} else {
		attr.ah_attr.grh.dgid.raw[10] = attr.ah_attr.grh.dgid.raw[11] = 0xff;
		memcpy(&attr.ah_attr.grh.dgid.raw[12], p->client_ip, 4);
	}
	droce_tqp_modify(&s->tqp, &attr, rtr, IBV_QPS_RTR);
	droce_tqp_modify(&s->tqp, &attr, rts, IBV_QPS_RTS);
}

/* Keep the receive queue full, up to the SEND messages of the capture. */
static void recv_top_up(struct server *s, const struct plan *p)
{
	uint32_t slot_len = (p->recv_len + 63) & ~63u;

	while (s->recv_posted < p->recv_msgs && droce_ring_cons_avail(&s->tqp.rq) < (int)RQ_DEPTH) {
		uint32_t k = s->recv_posted % RQ_DEPTH;
		struct ibv_sge sge = {.addr = (uintptr_t)s->buf + s->target_len + k * slot_len,
				      .length = p->recv_len,
				      .lkey = s->mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = s->recv_posted, .sg_list = &sge, .num_sge = 1};
		struct ibv_recv_wr *bad;

		if (ibv_post_recv(s->qp, &wr, &bad) != 0)
			break;
		s->recv_posted++;
	}
}

/* Server memory as Linux's was: READ sources from its responses, atomic targets from the
 * original value of the first AtomicAckETH per address. */
static void server_fill(struct server *s, const struct plan *p)
{
	size_t i, r = 0, nreq = 0;
	uint64_t *seen = calloc(cap.n + 1, sizeof(*seen));
	size_t nseen = 0;
	struct {
		uint32_t psn;
		uint64_t va;
	} *atom = calloc(cap.n + 1, sizeof(*atom));

	cr_assert_not_null(seen);
	cr_assert_not_null(atom);
	for (i = 0; i < cap.n; i++) {
		const struct frame *fr = &cap.v[i];

		if (is_request(p, fr)) {
			if (fr->pkt.mask & DROCE_OPM_READ)
				r++; /* READ requests seen so far: the responses answer these */
			if (fr->pkt.mask & DROCE_OPM_ATOMIC) {
				atom[nreq].psn = fr->pkt.psn;
				atom[nreq++].va = fr->f.atmeth.va;
			}
			continue;
		}
		if (!is_response(p, fr))
			continue;
		if ((fr->pkt.mask & DROCE_OPM_READ) && fr->pkt.payload_len > 0) {
			const struct read_req *rq = NULL;

			/* the latest READ request before it whose PSNs hold this response */
			for (size_t k = r; k-- > 0;) {
				uint32_t d = (fr->pkt.psn - p->reads[k].psn) & DROCE_PSN_MASK;

				if (d < p->reads[k].npkts) {
					rq = &p->reads[k];
					break;
				}
			}
			cr_assert_not_null(rq, "%s frame %llu: a READ response with no request",
					   cap_name, (unsigned long long)fr->number);
			memcpy(target(s, p,
				      rq->va +
					      (uint64_t)((fr->pkt.psn - rq->psn) & DROCE_PSN_MASK) *
						      p->pmtu),
			       fr->bytes + fr->pkt.payload_off, fr->pkt.payload_len);
		}
		if (fr->pkt.mask & DROCE_OPM_ATMACK) {
			uint64_t va = 0;
			bool have = false, known = false;

			for (size_t k = nreq; k-- > 0 && !have;)
				if (atom[k].psn == fr->pkt.psn) {
					va = atom[k].va;
					have = true;
				}
			cr_assert(have, "%s frame %llu: an atomic ACK with no request", cap_name,
				  (unsigned long long)fr->number);
			for (size_t k = 0; k < nseen; k++)
				known |= seen[k] == va;
			if (!known) {
				seen[nseen++] = va;
				memcpy(target(s, p, va), &fr->f.atmack_orig, 8);
			}
		}
	}
	free(seen);
	free(atom);
}

/* A request as droce's server receives it: RETH/AtomicETH mapped onto droce's MR. */
static struct rte_mbuf *request_mbuf(struct server *s, const struct plan *p, const struct frame *fr)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *buf;

	cr_assert_not_null(m);
	buf = (uint8_t *)rte_pktmbuf_append(m, FRAME_MAX);
	cr_assert_not_null(buf);
	if (fr->pkt.mask & (DROCE_OPM_RETH | DROCE_OPM_ATMETH)) {
		struct droce_addr a;
		struct droce_hdr_fields f = fr->f;
		uint16_t ip_id;
		ssize_t len;

		droce_pkt_addr(&fr->pkt, fr->bytes, &a, &ip_id);
		if (fr->pkt.mask & DROCE_OPM_RETH) {
			f.reth.va = (uintptr_t)s->buf + (f.reth.va - p->va_lo);
			f.reth.rkey = s->mr->rkey;
		} else {
			f.atmeth.va = (uintptr_t)s->buf + (f.atmeth.va - p->va_lo);
			f.atmeth.rkey = s->mr->rkey;
		}
		len = droce_build_frame(buf, FRAME_MAX, &a, ip_id, &f,
					fr->bytes + fr->pkt.payload_off, fr->pkt.payload_len);
		cr_assert_gt(len, 0, "%s frame %llu: cannot rebuild", cap_name,
			     (unsigned long long)fr->number);
		rte_pktmbuf_trim(m, (uint16_t)(FRAME_MAX - len));
	} else {
		memcpy(buf, fr->bytes, fr->len);
		rte_pktmbuf_trim(m, (uint16_t)(FRAME_MAX - fr->len));
	}
	return m;
}

/* ------------------------------------------------------------ comparing */

static const char *kind_name(uint8_t syndrome)
{
	switch (syndrome & DROCE_AETH_TYPE_MASK) {
	case DROCE_AETH_ACK:
		return "ACK";
	case DROCE_AETH_RNR_NAK:
		return "RNR NAK";
	case DROCE_AETH_NAK:
		return "NAK";
	default:
		return "reserved";
	}
}

#define CHECK(cond, ...)                                                          \
	do {                                                                      \
		bool ok_ = (cond);                                                \
		cr_expect(ok_, __VA_ARGS__);                                      \
		if (!ok_)                                                         \
			cr_assert_lt(++fails, FAILS_MAX, "too many differences"); \
	} while (0)

/* AETH as IBTA requires it to match: the kind, the NAK code / RNR timer, the MSN. */
static void aeth_compare(const struct frame *l, const struct frame *d)
{
	uint8_t ls = l->f.aeth.syndrome, ds = d->f.aeth.syndrome;

	CHECK((ls & DROCE_AETH_TYPE_MASK) == (ds & DROCE_AETH_TYPE_MASK),
	      "%s frame %llu: Linux sent %s (%#x), droce %s (%#x) answering frame %llu", cap_name,
	      (unsigned long long)l->number, kind_name(ls), ls, kind_name(ds), ds,
	      (unsigned long long)d->number);
	/* the credit count of an ACK may differ; a NAK's code and an RNR timer may not */
	if ((ls & DROCE_AETH_TYPE_MASK) != DROCE_AETH_ACK)
		CHECK(ls == ds, "%s frame %llu: syndrome %#x, droce %#x", cap_name,
		      (unsigned long long)l->number, ls, ds);
	CHECK(l->f.aeth.msn == d->f.aeth.msn, "%s frame %llu: MSN %u, droce %u (answering %llu)",
	      cap_name, (unsigned long long)l->number, l->f.aeth.msn, d->f.aeth.msn,
	      (unsigned long long)d->number);
}

/*
 * The opcodes agree, READ responses to a request retried from inside an earlier READ
 * included: both answer with the continuation of the original response (MIDDLE... LAST).
 */
static bool opcode_ok(const struct frame *l, const struct frame *d)
{
	return l->f.opcode == d->f.opcode;
}

static void header_compare(const struct frame *l, const struct frame *d)
{
	CHECK(opcode_ok(l, d), "%s frame %llu: opcode %u, droce %u (answering %llu)", cap_name,
	      (unsigned long long)l->number, l->f.opcode, d->f.opcode,
	      (unsigned long long)d->number);
	CHECK(l->f.psn == d->f.psn, "%s frame %llu: PSN %u, droce %u (answering %llu)", cap_name,
	      (unsigned long long)l->number, l->f.psn, d->f.psn, (unsigned long long)d->number);
	CHECK(l->f.dqpn == d->f.dqpn, "%s frame %llu: dest QP %#x, droce %#x", cap_name,
	      (unsigned long long)l->number, l->f.dqpn, d->f.dqpn);
	CHECK(ip_eq(&d->a, l->a.src_ip, true) && ip_eq(&d->a, l->a.dst_ip, false) &&
		      l->a.ipv6 == d->a.ipv6,
	      "%s frame %llu: droce's response has other IP addresses", cap_name,
	      (unsigned long long)l->number);
}

/* One response of Linux's against droce's: headers, AETH, READ bytes, atomic original value. */
static void response_compare(const struct frame *l, const struct frame *d)
{
	header_compare(l, d);
	if ((l->pkt.mask & DROCE_OPM_AETH) && (d->pkt.mask & DROCE_OPM_AETH))
		aeth_compare(l, d);
	CHECK(l->pkt.payload_len == d->pkt.payload_len,
	      "%s frame %llu: payload %u bytes, droce %u (answering %llu)", cap_name,
	      (unsigned long long)l->number, l->pkt.payload_len, d->pkt.payload_len,
	      (unsigned long long)d->number);
	if (l->pkt.payload_len == d->pkt.payload_len)
		CHECK(memcmp(l->bytes + l->pkt.payload_off, d->bytes + d->pkt.payload_off,
			     l->pkt.payload_len) == 0,
		      "%s frame %llu: READ response bytes differ (answering %llu)", cap_name,
		      (unsigned long long)l->number, (unsigned long long)d->number);
	if (l->pkt.mask & DROCE_OPM_ATMACK)
		CHECK(l->f.atmack_orig == d->f.atmack_orig,
		      "%s frame %llu: atomic original value %#llx, droce %#llx", cap_name,
		      (unsigned long long)l->number, (unsigned long long)l->f.atmack_orig,
		      (unsigned long long)d->f.atmack_orig);
}

static bool is_pos_ack(const struct frame *fr)
{
	return fr->pkt.opcode == DROCE_OP_RC_ACK &&
	       (fr->f.aeth.syndrome & DROCE_AETH_TYPE_MASK) == DROCE_AETH_ACK;
}

/* A frame the server sent, with its place in the server's send order. */
struct sent {
	const struct frame *fr;
	int64_t seq;
};

static int sent_cmp(const void *x, const void *y)
{
	const struct sent *a = x, *b = y;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/*
 * What Linux's server sent, in the order it sent it, with holes.
 *
 * The capture holds what crossed the wire after netem: on the lossy runs frames the server
 * sent were lost (and so never captured), on the reorder run they were captured out of
 * order, and the bandwidth runs also miss a few frames the capture itself lost. Linux gives
 * every IPv4 packet of a flow the next IP ID (__ip_select_ident: one counter per address
 * pair and protocol), so the IDs of the server's frames give its send order, and a jump of
 * k in the IDs means k - 1 frames sent and not captured: holes. IPv6 has no ID: capture
 * order, no holes (the IPv6 capture is lossless). The server's own requests (the ping-pongs
 * make it a requester too) are left out: droce's server QP posts no send WQE.
 * Returns the slots (NULL: a hole) and their count.
 */
static const struct frame **linux_slots(const struct plan *p, size_t *n, size_t *holes)
{
	struct sent *v = calloc(cap.n + 1, sizeof(*v));
	const struct frame **slots;
	size_t nv = 0, ns = 0, i;
	int64_t seq = 0;
	uint16_t prev = 0;

	cr_assert_not_null(v);
	for (i = 0; i < cap.n; i++) {
		const struct frame *fr = &cap.v[i];

		if (!from_server(p, fr))
			continue;
		if (!p->ipv6) {
			const struct droce_ipv4_hdr *ip =
				(const void *)(fr->bytes + fr->pkt.l3_off);
			uint16_t id = be16toh(ip->id);

			seq = nv == 0 ? 0 : seq + (int16_t)(uint16_t)(id - prev);
			prev = id;
		} else {
			seq = (int64_t)nv;
		}
		v[nv++] = (struct sent){.fr = fr, .seq = seq};
	}
	qsort(v, nv, sizeof(*v), sent_cmp);
	*holes = 0;
	slots = calloc(nv == 0 ? 1 : (size_t)(v[nv - 1].seq - v[0].seq) + nv + 1, sizeof(*slots));
	cr_assert_not_null(slots);
	for (i = 0; i < nv; i++) {
		if (i > 0) {
			cr_assert_neq(v[i].seq, v[i - 1].seq, "%s frame %llu: IP ID seen twice",
				      cap_name, (unsigned long long)v[i].fr->number);
			for (int64_t k = v[i - 1].seq + 1; k < v[i].seq; k++) {
				slots[ns++] = NULL;
				(*holes)++;
			}
		}
		if (v[i].fr->pkt.mask & DROCE_OPM_RESP)
			slots[ns++] = v[i].fr;
	}
	free(v);
	*n = ns;
	return slots;
}

/*
 * Linux's responses against droce's, in send order.
 *
 * - A Linux response is compared with droce's next one field by field (response_compare).
 * - A hole (a frame Linux sent that the capture lost) takes droce's next response unchecked.
 * - ACK coalescing: a positive ACK is cumulative (IBTA 9.7.5.1.1: it acknowledges every
 *   request up to its PSN), so a responder may leave one out when a later ACK covers it. A
 *   Linux positive ACK droce did not send is accepted when droce's next response is a
 *   positive ACK for a later PSN (that covers it, in order); NAKs, RNR NAKs, READ responses and
 *   atomic ACKs are never coalesced and must match one for one. droce sending an ACK Linux
 *   did not is a difference.
 * - The -head captures were cut: responses to the last requests came after the cut, so droce's
 *   responses left over at the end are accepted there (and only there).
 */
static bool same_kind(const struct frame *l, const struct frame *d)
{
	return opcode_ok(l, d) && l->f.psn == d->f.psn &&
	       (!(l->pkt.mask & d->pkt.mask & DROCE_OPM_AETH) ||
		l->f.aeth.syndrome >> 5 == d->f.aeth.syndrome >> 5);
}

static void responses_compare(const struct plan *p, bool head)
{
	size_t n, holes, pending = 0, j = 0, lost = 0, coalesced = 0;
	const struct frame **slots = linux_slots(p, &n, &holes);

	for (size_t k = 0; k < n; k++) {
		const struct frame *l = slots[k], *d;

		if (l == NULL) {
			pending++;
			continue;
		}
		/* a hole may have been one of droce's responses, or another frame of the
		 * server's UDP flow: skip droce's only while it does not match the next known */
		while (pending > 0 && j < out.n && !same_kind(l, &out.v[j])) {
			pending--;
			j++;
			lost++;
		}
		pending = 0;
		CHECK(j < out.n, "%s frame %llu: Linux sent %s PSN %u, droce nothing more",
		      cap_name, (unsigned long long)l->number, droce_opcode_table[l->f.opcode].name,
		      l->f.psn);
		if (j >= out.n)
			break;
		d = &out.v[j];
		if (is_pos_ack(l) && is_pos_ack(d) &&
		    ((d->f.psn - l->f.psn) & DROCE_PSN_MASK) != 0 &&
		    ((d->f.psn - l->f.psn) & DROCE_PSN_MASK) < (1u << 23)) {
			coalesced++;
			continue;
		}
		response_compare(l, d);
		j++;
	}
	/* holes at the end take what droce sent last */
	while (pending > 0 && j < out.n) {
		pending--;
		j++;
		lost++;
	}
	if (!head)
		CHECK(j == out.n,
		      "%s: droce sent %zu responses more than Linux (first answering %llu)",
		      cap_name, out.n - j, j < out.n ? (unsigned long long)out.v[j].number : 0ull);
	cr_log_info(
		"%s: %zu Linux responses, %zu IP IDs not captured, %zu of droce's responses "
		"in their place, %zu Linux ACKs coalesced by droce, %zu droce responses after the "
		"capture's end",
		cap_name, n - holes, holes, lost, coalesced, out.n - j);
	free((void *)slots);
}

/* ------------------------------------------------------------ the replay */

static void replay(const char *name, const char *test_name, bool head)
{
	static struct plan plan;
	static struct server s;
	size_t fed = 0;

	cap_name = name;
	droce_test_pcap_foreach(name, load_frame, NULL);
	plan_make(&plan);
	server_setup(&s, &plan, test_name);
	server_connect(&s, &plan);
	server_fill(&s, &plan);
	recv_top_up(&s, &plan);
	for (size_t i = 0; i < cap.n; i++) {
		const struct frame *fr = &cap.v[i];
		struct rte_mbuf *m;
		struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
		struct droce_pkt pkt;

		if (!is_request(&plan, fr))
			continue;
		feeding = fr->number;
		m = request_mbuf(&s, &plan, fr);
		cr_assert_eq(droce_parse_mbuf(m, &cfg, &pkt), DROCE_PARSE_OK,
			     "%s frame %llu: the rewritten request does not parse", name,
			     (unsigned long long)fr->number);
		droce_tqp_recv(&s.env, &s.tqp, m, &pkt);
		/* one frame per RX burst: the send pass follows each */
		while (droce_tqp_send(&s.env, &s.tqp, 0, 64) > 0)
			;
		recv_top_up(&s, &plan);
		fed++;
	}
	cr_assert_gt(fed, 0);
	CHECK(s.tqp.state == IBV_QPS_RTS, "%s: droce's QP left RTS (state %d)", name, s.tqp.state);
	responses_compare(&plan, head);
	droce_tqp_fini(&s.env, &s.tqp);
	frames_free(&out);
	frames_free(&cap);
	free(plan.reads);
	droce_test_eal_fini();
}

TestSuite(replay_captures, .timeout = 120);

Test(replay_captures, rc_pingpong)
{
	replay("linux-rxe-rc_pingpong.pcap", "replay_rc_pingpong", false);
}

Test(replay_captures, send_lat_inl)
{
	replay("linux-rxe-send_lat_inl.pcap", "replay_send_lat_inl", false);
}

Test(replay_captures, write_bw)
{
	replay("linux-rxe-write_bw-head.pcap", "replay_write_bw", true);
}

Test(replay_captures, read_bw)
{
	replay("linux-rxe-read_bw-head.pcap", "replay_read_bw", true);
}

Test(replay_captures, atomic_fa)
{
	replay("linux-rxe-atomic_fa.pcap", "replay_atomic_fa", false);
}

Test(replay_captures, atomic_cs)
{
	replay("linux-rxe-atomic_cs.pcap", "replay_atomic_cs", false);
}

Test(replay_captures, write_lat_v6)
{
	replay("linux-rxe-write_lat_v6.pcap", "replay_write_lat_v6", false);
}

Test(replay_captures, lossy_write_bw)
{
	replay("linux-rxe-lossy_write_bw-head.pcap", "replay_lossy_write_bw", true);
}

Test(replay_captures, lossy_read_bw)
{
	replay("linux-rxe-lossy_read_bw-head.pcap", "replay_lossy_read_bw", true);
}

Test(replay_captures, reorder_send_bw)
{
	replay("linux-rxe-reorder_send_bw-head.pcap", "replay_reorder_send_bw", true);
}
