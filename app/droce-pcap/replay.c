/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-pcap --replay: a capture's client requests fed into a droce RC responder.
 *
 * A droce RC QP stands in for the capture's server (replay_plan.c finds the conversation). It
 * is a verbs QP of a device that starts no engine (no DPDK device): the replay plays the
 * engine, without a port. A transport QP (lib/transport's droce_tqp), numbered as the
 * server's QP, is attached to the verbs QP's rings; the client's requests are fed to it in
 * capture order through droce_tqp_recv(), each followed by a send pass (one frame per RX
 * burst). What droce transmits is recorded, written to --out, and compared with what the
 * server sent (compare.c). The DPDK EAL the mbufs need is the replay's own: file prefix
 * droce-pcap-<pid>, no PCI, no hugepages; its runtime folder is removed at the end.
 *
 * Rewrites, the minimum that cannot match between two hosts:
 *  - RETH and AtomicETH: the virtual address is mapped onto droce's MR at the same offset
 *    from the lowest page the capture's requests touch, the rkey becomes the MR's; the frame
 *    is rebuilt with droce_build_frame() (new ICRC), every other byte as captured. Other
 *    requests are fed byte for byte.
 *  - Receive WQEs: the server application's are not on the wire; the replay posts them, one
 *    per SEND message the capture carries, each as long as the longest message, and keeps
 *    the receive queue (256 deep) topped up so that it never runs dry earlier than the
 *    server's did (so these replays expect no RNR NAK where the server sent none).
 *  - READ sources: the MR is filled beforehand with the bytes the server's READ responses
 *    carried (placed by the READ request each response answers), so that droce's READ
 *    responses compare byte for byte.
 *  - Atomic targets start with the original value of the first AtomicAckETH for each address.
 *  - QP attributes the server had: path MTU (from the full FIRST/MIDDLE packets, else the
 *    smallest of 1024/4096 that fits), rq_psn (the first request PSN), dest QPN (the client's),
 *    access flags (what the requests need), traffic class and hop limit (the first
 *    request's), max_dest_rd_atomic 128 (Linux rxe's and droce's max_qp_rd_atom, which
 *    perftest asks for: a lossy READ run has 17 READs in flight when it retries the oldest).
 *  - The server's MAC and IP are the port's (GID 1); the client's MAC is what its IP resolves
 *    to. The replay handles one server QP and one MR: a second rkey is refused.
 *
 * Timing: --fast (the default) feeds each request as soon as droce has answered the one before;
 * --timing feeds each at its time in the capture relative to the first request, sleeping in
 * between. droce's frames are stamped with the first request's capture time plus the time
 * the replay had run when droce sent them: with --timing they fall near the server's own
 * responses in the capture.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <pcap/pcap.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include <droce_transport.h>
#include <droce_verbs_engine.h>
#include <droce_wire_mbuf.h>

#include "replay_priv.h"

#define RQ_DEPTH  256u
#define FRAME_MAX 9216u
#define POLL_MAX  32
#define MEM_MAX   (1u << 30) /* the memory the requests touch, the receive buffers */

/* The droce instance standing in for the server. */
struct server {
	struct replay *rp;
	struct rte_mempool *pool;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct droce_tqp tqp;
	bool tqp_ready;
	struct droce_tcq tcq;
	struct droce_transport_env env;
	struct droce_tport_addr port;
	uint8_t *buf;
	size_t len, target_len;
	uint32_t recv_posted;
	pcap_t *dead;
	pcap_dumper_t *dump;
	uint64_t t0_ns;    /* capture time of the first request */
	uint64_t start_ns; /* monotonic time the feeding began */
	int failed;        /* -ENOMEM from the tx callback */
};

/* The lcore's timer wheel: RC needs one; only a requester arms timers, so none fire here. */
static struct droce_timer_wheel wheel;
static char eal_prefix[64];

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ------------------------------------------------------------ DPDK */

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Stop the EAL (@p cleanup: it had started) and remove its runtime folder. */
static void eal_stop(bool cleanup)
{
	const char *run = getuid() == 0 ? "/var/run" : getenv("XDG_RUNTIME_DIR");
	char dir[256];

	if (cleanup)
		rte_eal_cleanup();
	snprintf(dir, sizeof(dir), "%.150s/dpdk/%.63s", run != NULL ? run : "/tmp", eal_prefix);
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static int eal_start(void)
{
	static char args[10][300];
	char *argv[10];
	char cpus[256] = "", *end = cpus;
	int argc = 0;
	cpu_set_t set;

	/* the main lcore keeps every CPU this process may use */
	if (sched_getaffinity(0, sizeof(set), &set) != 0) {
		CPU_ZERO(&set);
		CPU_SET(0, &set);
	}
	for (int cpu = 0; cpu < CPU_SETSIZE && end < cpus + sizeof(cpus) - 8; cpu++)
		if (CPU_ISSET(cpu, &set))
			end += snprintf(end, (size_t)(cpus + sizeof(cpus) - end), "%s%d",
					end == cpus ? "" : ",", cpu);
	snprintf(eal_prefix, sizeof(eal_prefix), "droce-pcap-%d", (int)getpid());
#define ARG(...) snprintf(args[argc], sizeof(args[0]), __VA_ARGS__), argv[argc] = args[argc], argc++
	ARG("droce-pcap");
	ARG("--file-prefix=%s", eal_prefix);
	ARG("--no-pci");
	ARG("--no-telemetry");
	ARG("--no-huge");
	ARG("-m");
	ARG("64");
	ARG("--log-level=error");
	ARG("--lcores=0@(%s)", cpus);
#undef ARG
	if (rte_eal_init(argc, argv) < 0) {
		int rc = rte_errno;

		fprintf(stderr, "droce-pcap: DPDK EAL: %s\n", rte_strerror(rc));
		eal_stop(false);
		return -rc;
	}
	return 0;
}

/* ------------------------------------------------------------ the transport's environment */

static uint64_t sent_ns(const struct server *s)
{
	return s->t0_ns + (mono_ns() - s->start_ns);
}

static void tx(void *arg, struct rte_mbuf *m)
{
	static uint8_t copy[FRAME_MAX];
	struct server *s = arg;
	struct replay *rp = s->rp;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint64_t t = sent_ns(s);
	const uint8_t *data;

	rp->r->responses++;
	if (m->nb_segs > 1)
		rp->r->chained++;
	if (len > FRAME_MAX) {
		rp->r->malformed++; /* no RoCEv2 frame of a 4096-byte MTU is that long */
		rte_pktmbuf_free(m);
		return;
	}
	data = rte_pktmbuf_read(m, 0, len, copy);
	if (rframes_push(&rp->out, rp->feeding, t, data, len) != 0)
		s->failed = -ENOMEM;
	else if (!rp->out.v[rp->out.n - 1].roce)
		rp->r->malformed++;
	if (s->dump != NULL) {
		struct pcap_pkthdr h = {
			.ts = {.tv_sec = (time_t)(t / 1000000000u),
			       .tv_usec = (suseconds_t)(t % 1000000000u)}, /* nanoseconds */
			.caplen = len,
			.len = len,
		};

		pcap_dump((u_char *)s->dump, &h, data);
	}
	rte_pktmbuf_free(m);
}

static int neigh(void *arg, const uint8_t ip[16], uint8_t mac[6])
{
	const struct server *s = arg;

	(void)ip;
	memcpy(mac, s->rp->plan.client_mac, 6);
	return 0;
}

static void cq_notify(void *arg, void *cq, bool solicited)
{
	(void)arg;
	droce_verbs_cq_notify(cq, solicited);
}

static void qp_error(void *arg, void *qp, enum ibv_qp_state state, enum ibv_event_type ev)
{
	(void)arg;
	droce_verbs_qp_error(qp, state, ev);
}

/* ------------------------------------------------------------ the droce server */

/* The server's address as a GID: IPv4-mapped or IPv6. */
static void server_gid(const struct plan *p, union ibv_gid *g)
{
	memset(g, 0, sizeof(*g));
	if (p->ipv6)
		memcpy(g->raw, p->server_ip, 16);
	else
		droce_ipv4_mapped(p->server_ip, g->raw);
}

/* A verbs device with the server's MAC and IP and no DPDK device: no engine starts. */
static int device_open(struct server *s)
{
	const struct plan *p = &s->rp->plan;
	const uint8_t *m = p->server_mac;
	char ip[INET6_ADDRSTRLEN], spec[160];
	struct ibv_device **list;
	int n;

	inet_ntop(p->ipv6 ? AF_INET6 : AF_INET, p->server_ip, ip, sizeof(ip));
	snprintf(spec, sizeof(spec), "replay0:mac=%02x:%02x:%02x:%02x:%02x:%02x,ip=%s,mtu=9000",
		 m[0], m[1], m[2], m[3], m[4], m[5], ip);
	setenv("DROCE_DEVICES", spec, 1);
	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1) {
		if (list != NULL)
			ibv_free_device_list(list);
		return replay_error(s->rp, 0, "no droce device for the server (%s)", spec);
	}
	s->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (s->ctx == NULL)
		return replay_error(s->rp, 0, "cannot open the server's droce device");
	s->pd = ibv_alloc_pd(s->ctx);
	if (s->pd == NULL)
		return -ENOMEM;
	return 0;
}

/* The server QP's attributes (the top of the file says where each comes from). */
static void server_attr(const struct plan *p, struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->path_mtu = (enum ibv_mtu)(__builtin_ctz(p->pmtu) - 7); /* 256: IBV_MTU_256 (1) */
	a->dest_qp_num = p->client_qpn;
	a->sq_psn = 0;
	a->rq_psn = p->first_psn;
	a->qp_access_flags = p->access;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.sgid_index = 1;
	a->ah_attr.grh.hop_limit = p->hop_limit;
	a->ah_attr.grh.traffic_class = p->tclass;
	if (p->ipv6)
		memcpy(a->ah_attr.grh.dgid.raw, p->client_ip, 16);
	else
		droce_ipv4_mapped(p->client_ip, a->ah_attr.grh.dgid.raw);
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->min_rnr_timer = 12;
	a->max_rd_atomic = 16;
	a->max_dest_rd_atomic = 128;
	a->port_num = 1;
}

#define RTR_MASK                                                                               \
	(IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_AV | IBV_QP_ACCESS_FLAGS | \
	 IBV_QP_MIN_RNR_TIMER | IBV_QP_MAX_DEST_RD_ATOMIC)
#define RTS_MASK                                                                \
	(IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
	 IBV_QP_MAX_QP_RD_ATOMIC)

/* The verbs QP through INIT, RTR and RTS; then the transport QP on its rings, the same way. */
static int server_connect(struct server *s)
{
	const struct plan *p = &s->rp->plan;
	struct ibv_qp_attr a;
	struct droce_qp_view v;
	struct droce_cq_view cv;
	int rc;

	server_attr(p, &a);
	a.qp_state = IBV_QPS_INIT;
	rc = ibv_modify_qp(s->qp, &a,
			   IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	a.qp_state = IBV_QPS_RTR;
	if (rc == 0)
		rc = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | RTR_MASK);
	a.qp_state = IBV_QPS_RTS;
	if (rc == 0)
		rc = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | RTS_MASK);
	if (rc != 0)
		return replay_error(s->rp, 0, "the server's QP refuses its attributes: %s",
				    strerror(rc));
	if (droce_verbs_qp_view(s->qp, &v) != 0 || droce_verbs_cq_view(s->cq, &cv) != 0)
		return replay_error(s->rp, 0, "no view of the server's rings");
	rc = droce_tqp_init(&s->tqp, p->server_qpn, IBV_QPT_RC, v.pd, v.sq.addr, v.sq.len,
			    v.rq.addr, v.rq.len);
	if (rc != 0)
		return rc;
	s->tqp_ready = true;
	rc = droce_ring_prod_attach(&s->tcq.prod, cv.ring.addr, cv.ring.len);
	if (rc != 0)
		return rc;
	s->tcq.user = s->cq;
	s->tqp.scq = &s->tcq;
	s->tqp.rcq = &s->tcq;
	s->tqp.user = s->qp;
	droce_tqp_modify(&s->env, &s->tqp, &a, RTR_MASK, IBV_QPS_RTR);
	droce_tqp_modify(&s->env, &s->tqp, &a, RTS_MASK, IBV_QPS_RTS);
	return 0;
}

static int server_setup(struct server *s)
{
	const struct plan *p = &s->rp->plan;
	struct ibv_qp_init_attr ia = {
		.cap = {.max_send_wr = 16,
			.max_recv_wr = RQ_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
	};
	int rc;

	s->pool = rte_pktmbuf_pool_create("droce_pcap_replay", 1023, 0, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE + 8192, SOCKET_ID_ANY);
	if (s->pool == NULL)
		return -ENOMEM;
	rc = device_open(s);
	if (rc != 0)
		return rc;
	memcpy(s->port.mac, p->server_mac, 6);
	s->port.mtu_bytes = 4096;
	/* the device's GID table: 0 the link-local address, 1 the server's */
	droce_ipv6_link_local(p->server_mac, s->port.gid[0].raw);
	server_gid(p, &s->port.gid[1]);
	s->port.gid_count = 2;
	rc = droce_timer_wheel_init(&wheel, 0, 1024);
	if (rc != 0)
		return rc;
	if (p->va_hi - p->va_lo > MEM_MAX || p->recv_len > MEM_MAX / RQ_DEPTH)
		return replay_error(s->rp, 0,
				    "the requests touch %llu bytes and SENDs of %u bytes: more "
				    "than the replay maps (%u MiB each)",
				    (unsigned long long)(p->va_hi - p->va_lo), p->recv_len,
				    MEM_MAX >> 20);
	s->target_len = (size_t)(p->va_hi - p->va_lo + 4095) & ~(size_t)4095;
	s->len = s->target_len + (size_t)RQ_DEPTH * ((p->recv_len + 63) & ~63u) + 4096;
	s->len = (s->len + 4095) & ~(size_t)4095;
	s->buf = aligned_alloc(4096, s->len);
	if (s->buf == NULL)
		return -ENOMEM;
	memset(s->buf, 0, s->len);
	s->cq = ibv_create_cq(s->ctx, 4096, NULL, NULL, 0);
	if (s->cq == NULL)
		return replay_error(s->rp, 0, "cannot create the server's CQ");
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &ia);
	if (s->qp == NULL)
		return replay_error(s->rp, 0, "cannot create the server's QP");
	s->mr = ibv_reg_mr(s->pd, s->buf, s->len, IBV_ACCESS_LOCAL_WRITE | p->access);
	if (s->mr == NULL)
		return replay_error(s->rp, 0, "cannot register the server's memory");
	rc = server_connect(s);
	if (rc != 0)
		return rc;
	s->env = (struct droce_transport_env){
		.pool = s->pool,
		.keys = droce_verbs_mr_table(),
		.port = &s->port,
		.tx = tx,
		.neigh = neigh,
		.cq_notify = cq_notify,
		.qp_error = qp_error,
		.arg = s,
		.wheel = &wheel,
		.tick_hz = 1000000000ull,
	};
	return 0;
}

static void server_free(struct server *s)
{
	if (s->tqp_ready)
		droce_tqp_fini(&s->env, &s->tqp);
	if (s->qp != NULL)
		ibv_destroy_qp(s->qp);
	if (s->mr != NULL)
		ibv_dereg_mr(s->mr);
	if (s->cq != NULL)
		ibv_destroy_cq(s->cq);
	if (s->pd != NULL)
		ibv_dealloc_pd(s->pd);
	if (s->ctx != NULL)
		ibv_close_device(s->ctx);
	free(s->buf);
	rte_mempool_free(s->pool);
}

/* Keep the receive queue full, up to the SEND messages of the capture. */
static void recv_top_up(struct server *s)
{
	const struct plan *p = &s->rp->plan;
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

/* Take droce's completions as the server application would. */
static void cq_drain(struct server *s)
{
	struct ibv_wc wc[POLL_MAX];
	int n;

	while ((n = ibv_poll_cq(s->cq, POLL_MAX, wc)) > 0)
		for (int i = 0; i < n; i++) {
			s->rp->r->recv_completions++;
			if (wc[i].status != IBV_WC_SUCCESS)
				s->rp->r->recv_errors++;
		}
}

/* Where @p va of the capture is in droce's MR; NULL when off the map. */
static uint8_t *target(struct server *s, uint64_t va, uint32_t len)
{
	const struct plan *p = &s->rp->plan;

	if (va < p->va_lo || va - p->va_lo > s->target_len || s->target_len - (va - p->va_lo) < len)
		return NULL;
	return s->buf + (va - p->va_lo);
}

/* The READ request (latest before the response) whose PSNs hold @p psn. */
static const struct read_req *read_of(const struct plan *p, size_t nreads, uint32_t psn)
{
	for (size_t k = nreads; k-- > 0;)
		if (((psn - p->reads[k].psn) & DROCE_PSN_MASK) < p->reads[k].npkts)
			return &p->reads[k];
	return NULL;
}

/* Server memory as the server's was: READ sources from its responses, atomic targets from
 * the original value of the first AtomicAckETH per address. */
static int server_fill(struct server *s)
{
	struct replay *rp = s->rp;
	const struct plan *p = &rp->plan;
	size_t r = 0, nreq = 0, nseen = 0;
	uint64_t *seen = calloc(rp->cap.n + 1, sizeof(*seen));
	struct {
		uint32_t psn;
		uint64_t va;
	} *atom = calloc(rp->cap.n + 1, sizeof(*atom));
	int rc = 0;

	if (seen == NULL || atom == NULL) {
		rc = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < rp->cap.n && rc == 0; i++) {
		const struct rframe *fr = &rp->cap.v[i];

		if (replay_is_request(p, fr)) {
			if (fr->pkt.mask & DROCE_OPM_READ)
				r++; /* READ requests seen so far: the responses answer these */
			if (fr->pkt.mask & DROCE_OPM_ATOMIC) {
				atom[nreq].psn = fr->pkt.psn;
				atom[nreq++].va = fr->f.atmeth.va;
			}
			continue;
		}
		if (!replay_is_response(p, fr))
			continue;
		if ((fr->pkt.mask & DROCE_OPM_READ) && fr->pkt.payload_len > 0) {
			const struct read_req *rq = read_of(p, r, fr->pkt.psn);
			uint8_t *to;

			if (rq == NULL) {
				rc = replay_error(rp, fr->number,
						  "a READ response with no request");
				break;
			}
			to = target(s,
				    rq->va + (uint64_t)((fr->pkt.psn - rq->psn) & DROCE_PSN_MASK) *
						     p->pmtu,
				    fr->pkt.payload_len);
			if (to == NULL) {
				rc = replay_error(rp, fr->number, "READ response off the map");
				break;
			}
			memcpy(to, fr->bytes + fr->pkt.payload_off, fr->pkt.payload_len);
		}
		if (fr->pkt.mask & DROCE_OPM_ATMACK) {
			uint64_t va = 0;
			bool have = false, known = false;

			for (size_t k = nreq; k-- > 0 && !have;)
				if (atom[k].psn == fr->pkt.psn) {
					va = atom[k].va;
					have = true;
				}
			if (!have) {
				rc = replay_error(rp, fr->number, "an atomic ACK with no request");
				break;
			}
			for (size_t k = 0; k < nseen; k++)
				known |= seen[k] == va;
			if (!known) {
				uint8_t *to = target(s, va, 8);

				if (to == NULL) {
					rc = replay_error(rp, fr->number,
							  "atomic target off the map");
					break;
				}
				seen[nseen++] = va;
				memcpy(to, &fr->f.atmack_orig, 8);
			}
		}
	}
out_free:
	free(seen);
	free(atom);
	return rc;
}

/* A request as droce's server receives it: RETH/AtomicETH mapped onto droce's MR. */
static struct rte_mbuf *request_mbuf(struct server *s, const struct rframe *fr)
{
	const struct plan *p = &s->rp->plan;
	struct rte_mbuf *m = rte_pktmbuf_alloc(s->pool);
	uint8_t *buf;

	if (m == NULL)
		return NULL;
	buf = (uint8_t *)rte_pktmbuf_append(m, FRAME_MAX);
	if (buf == NULL || fr->len > FRAME_MAX)
		goto out_free;
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
		if (len <= 0)
			goto out_free;
		rte_pktmbuf_trim(m, (uint16_t)(FRAME_MAX - len));
	} else {
		memcpy(buf, fr->bytes, fr->len);
		rte_pktmbuf_trim(m, (uint16_t)(FRAME_MAX - fr->len));
	}
	return m;
out_free:
	rte_pktmbuf_free(m);
	return NULL;
}

/* With --timing: wait until @p fr's time in the capture, relative to the first request. */
static void wait_for(const struct server *s, const struct rframe *fr)
{
	uint64_t at = s->start_ns + (fr->time_ns - s->t0_ns);
	struct timespec ts = {.tv_sec = (time_t)(at / 1000000000u),
			      .tv_nsec = (long)(at % 1000000000u)};

	if (fr->time_ns < s->t0_ns)
		return; /* a capture whose clock went back: no wait */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int feed(struct server *s)
{
	struct replay *rp = s->rp;
	const struct plan *p = &rp->plan;
	bool first = true;

	for (size_t i = 0; i < rp->cap.n; i++) {
		const struct rframe *fr = &rp->cap.v[i];
		struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
		struct droce_pkt pkt;
		struct rte_mbuf *m;

		if (!replay_is_request(p, fr))
			continue;
		if (first) {
			s->t0_ns = fr->time_ns;
			s->start_ns = mono_ns();
			first = false;
		} else if (rp->o->timing) {
			wait_for(s, fr);
		}
		rp->feeding = fr->number;
		m = request_mbuf(s, fr);
		if (m == NULL)
			return replay_error(rp, fr->number, "cannot build the request");
		if (droce_parse_mbuf(m, &cfg, &pkt) != DROCE_PARSE_OK) {
			rte_pktmbuf_free(m);
			return replay_error(rp, fr->number, "the rewritten request does not parse");
		}
		droce_tqp_recv(&s->env, &s->tqp, m, &pkt);
		/* one frame per RX burst: the send pass follows each */
		while (droce_tqp_send(&s->env, &s->tqp,
				      (uint32_t)((mono_ns() - s->start_ns) / 1000u), 64) > 0)
			;
		cq_drain(s);
		recv_top_up(s);
		rp->r->requests++;
		if (s->failed != 0)
			return s->failed;
	}
	return 0;
}

static int out_open(struct server *s, const char *path)
{
	s->dead =
		pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	if (s->dead == NULL)
		return -ENOMEM;
	s->dump = pcap_dump_open(s->dead, path);
	if (s->dump == NULL) {
		fprintf(stderr, "droce-pcap: %s\n", pcap_geterr(s->dead));
		return -EIO;
	}
	return 0;
}

static void out_close(struct server *s)
{
	if (s->dump != NULL)
		pcap_dump_close(s->dump);
	if (s->dead != NULL)
		pcap_close(s->dead);
}

int replay_run(const char *path, const struct replay_opts *o, struct replay_result *r)
{
	struct replay rp = {.name = path, .o = o, .r = r};
	struct server s = {.rp = &rp};
	int rc;

	memset(r, 0, sizeof(*r));
	rc = replay_load(&rp, path);
	if (rc == 0)
		rc = replay_plan_make(&rp);
	if (rc != 0)
		goto out_free_frames;
	r->ipv6 = rp.plan.ipv6;
	memcpy(r->server_ip, rp.plan.server_ip, 16);
	memcpy(r->client_ip, rp.plan.client_ip, 16);
	r->server_qpn = rp.plan.server_qpn;
	r->client_qpn = rp.plan.client_qpn;
	r->pmtu = rp.plan.pmtu;
	if (o->out != NULL) {
		rc = out_open(&s, o->out);
		if (rc != 0)
			goto out_close;
	}
	rc = eal_start();
	if (rc != 0)
		goto out_close;
	rc = server_setup(&s);
	if (rc == 0)
		rc = server_fill(&s);
	if (rc == 0) {
		recv_top_up(&s);
		rc = feed(&s);
	}
	if (rc == 0) {
		cq_drain(&s);
		r->rts = s.tqp.state == IBV_QPS_RTS;
		if (o->compare)
			rc = replay_compare(&rp);
	}
	server_free(&s);
	eal_stop(true);
out_close:
	out_close(&s);
out_free_frames:
	replay_plan_free(&rp.plan);
	rframes_free(&rp.out);
	rframes_free(&rp.cap);
	return rc;
}
