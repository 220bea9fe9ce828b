/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replay's reading of a capture: its frames, and the plan deduced from them before
 * anything is fed (which conversation, the server QP's attributes, its memory, its receive
 * WQEs). replay.c says how the plan is used.
 *
 * The conversation: the first RC request of the capture (to the --server address when one is
 * given) names the server (its destination IP and QP) and the client (its source IP);
 * requests are the client's RC request frames to that QP. The client's QP is the destination of the
 * first RC response of the server that carries the PSN of a request already seen (the response
 * answers it); when none does, of the first RC frame of the server to the client.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "replay_priv.h"

int replay_error(const struct replay *rp, uint64_t frame, const char *fmt, ...)
{
	va_list ap;

	if (frame != 0)
		fprintf(stderr, "droce-pcap: %s frame %llu: ", rp->name, (unsigned long long)frame);
	else
		fprintf(stderr, "droce-pcap: %s: ", rp->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

int rframes_push(struct rframes *fs, uint64_t number, uint64_t time_ns, const uint8_t *bytes,
		 uint32_t len)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct rframe *fr;
	uint16_t ip_id;

	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 1024;
		struct rframe *v = realloc(fs->v, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		fs->v = v;
		fs->cap = cap;
	}
	fr = &fs->v[fs->n];
	memset(fr, 0, sizeof(*fr));
	fr->bytes = malloc(len == 0 ? 1 : len);
	if (fr->bytes == NULL)
		return -ENOMEM;
	fs->n++;
	fr->number = number;
	fr->time_ns = time_ns;
	fr->len = len;
	memcpy(fr->bytes, bytes, len);
	fr->roce = droce_parse(fr->bytes, len, &cfg, &fr->pkt) == DROCE_PARSE_OK;
	if (fr->roce) {
		droce_pkt_fields(&fr->pkt, fr->bytes, &fr->f);
		droce_pkt_addr(&fr->pkt, fr->bytes, &fr->a, &ip_id);
	}
	return 0;
}

void rframes_free(struct rframes *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free(fs->v[i].bytes);
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}

int replay_load(struct replay *rp, const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t n = 0;
	pcap_t *p;
	int rc;

	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	if (p == NULL) {
		/* libpcap names the file in some of its messages only */
		if (strstr(err, path) != NULL)
			fprintf(stderr, "droce-pcap: %s\n", err);
		else
			fprintf(stderr, "droce-pcap: %s: %s\n", path, err);
		return -EINVAL;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		const char *link = pcap_datalink_val_to_name(pcap_datalink(p));

		pcap_close(p);
		return replay_error(rp, 0, "link type %s is not Ethernet", link ? link : "unknown");
	}
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		uint64_t t = (uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec;

		n++;
		/* a cut frame cannot be told from a malformed one, nor fed */
		if (h->caplen != h->len) {
			pcap_close(p);
			return replay_error(rp, n, "cut by the snap length (%u of %u bytes)",
					    h->caplen, h->len);
		}
		if (rframes_push(&rp->cap, n, t, data, h->caplen) != 0) {
			pcap_close(p);
			return -ENOMEM;
		}
	}
	if (rc != PCAP_ERROR_BREAK) {
		fprintf(stderr, "droce-pcap: %s: %s\n", rp->name, pcap_geterr(p));
		pcap_close(p);
		return -EINVAL;
	}
	pcap_close(p);
	return 0;
}

/* ------------------------------------------------------------ the conversation */

static bool ip_eq(const struct droce_addr *a, const uint8_t ip[16], bool src)
{
	return memcmp(src ? a->src_ip : a->dst_ip, ip, a->ipv6 ? 16 : 4) == 0;
}

static bool from_client(const struct plan *p, const struct rframe *fr)
{
	return fr->roce && fr->a.ipv6 == p->ipv6 && ip_eq(&fr->a, p->client_ip, true) &&
	       ip_eq(&fr->a, p->server_ip, false);
}

bool replay_from_server(const struct plan *p, const struct rframe *fr)
{
	return fr->roce && fr->a.ipv6 == p->ipv6 && ip_eq(&fr->a, p->server_ip, true) &&
	       ip_eq(&fr->a, p->client_ip, false);
}

/* An RC request to the server QP. */
bool replay_is_request(const struct plan *p, const struct rframe *fr)
{
	return from_client(p, fr) && fr->pkt.qpn == p->server_qpn &&
	       (fr->pkt.mask & (DROCE_OPM_RC | DROCE_OPM_REQ)) == (DROCE_OPM_RC | DROCE_OPM_REQ);
}

/* An RC response of the server QP (to the client's QP). */
bool replay_is_response(const struct plan *p, const struct rframe *fr)
{
	return replay_from_server(p, fr) && fr->pkt.qpn == p->client_qpn &&
	       (fr->pkt.mask & (DROCE_OPM_RC | DROCE_OPM_RESP)) == (DROCE_OPM_RC | DROCE_OPM_RESP);
}

/* ------------------------------------------------------------ PSNs of the requests */

/* Request packets by PSN (open addressing): opcode + 1 (0: free) and payload length. */
struct psn_table {
	uint32_t *key;
	uint8_t *op;
	uint32_t *len;
	size_t cap; /* a power of two */
};

static int psn_table_init(struct psn_table *t, size_t entries)
{
	t->cap = 64;
	while (t->cap < entries * 2)
		t->cap *= 2;
	t->key = calloc(t->cap, sizeof(*t->key));
	t->op = calloc(t->cap, sizeof(*t->op));
	t->len = calloc(t->cap, sizeof(*t->len));
	return t->key && t->op && t->len ? 0 : -ENOMEM;
}

static void psn_table_free(struct psn_table *t)
{
	free(t->key);
	free(t->op);
	free(t->len);
}

/* The slot of @p psn: its own, or (with @p insert) a free one keyed to it; -1 if absent. */
static long psn_slot(struct psn_table *t, uint32_t psn, bool insert)
{
	size_t h = (psn * 2654435761u) & (t->cap - 1);

	for (size_t i = 0; i < t->cap; i++, h = (h + 1) & (t->cap - 1)) {
		if (t->op[h] != 0 && t->key[h] == psn)
			return (long)h;
		if (t->op[h] == 0) {
			if (!insert)
				return -1;
			t->key[h] = psn;
			return (long)h;
		}
	}
	return -1; /* never: the table holds twice the entries */
}

static uint32_t npkts(uint32_t len, uint32_t pmtu)
{
	return len == 0 ? 1 : (len + pmtu - 1) / pmtu;
}

/* The server, the client and the server's QP: from the first RC request (to the server). */
static int plan_conversation(struct replay *rp, struct plan *p)
{
	const char *server = rp->o->server;
	uint8_t want[16] = {0};
	int family = 0;

	if (server != NULL) {
		if (inet_pton(AF_INET, server, want) == 1)
			family = AF_INET;
		else if (inet_pton(AF_INET6, server, want) == 1)
			family = AF_INET6;
		else
			return replay_error(rp, 0, "'%s' is not an IPv4 or IPv6 address", server);
	}
	for (size_t i = 0; i < rp->cap.n; i++) {
		const struct rframe *fr = &rp->cap.v[i];
		size_t alen;

		if (!fr->roce || (fr->pkt.mask & (DROCE_OPM_RC | DROCE_OPM_REQ)) !=
					 (DROCE_OPM_RC | DROCE_OPM_REQ))
			continue;
		if (family != 0 && (fr->a.ipv6 != (family == AF_INET6) ||
				    memcmp(fr->a.dst_ip, want, fr->a.ipv6 ? 16 : 4) != 0))
			continue;
		p->ipv6 = fr->a.ipv6;
		alen = p->ipv6 ? 16 : 4;
		memcpy(p->server_ip, fr->a.dst_ip, alen);
		memcpy(p->client_ip, fr->a.src_ip, alen);
		memcpy(p->server_mac, fr->a.dst_mac, 6);
		memcpy(p->client_mac, fr->a.src_mac, 6);
		p->server_qpn = fr->pkt.qpn;
		p->first_psn = fr->pkt.psn;
		p->tclass = fr->a.tclass;
		p->hop_limit = fr->a.ttl;
		return 0;
	}
	if (server != NULL)
		return replay_error(rp, 0, "no RC request to %s", server);
	return replay_error(rp, 0, "no RC request: the replay stands in for an RC responder");
}

/* The client's QP: see the top of the file. */
static int plan_client_qp(struct replay *rp, struct plan *p, size_t nreq)
{
	struct psn_table seen;
	bool found = false;
	size_t i;

	if (psn_table_init(&seen, nreq) != 0) {
		psn_table_free(&seen);
		return -ENOMEM;
	}
	for (i = 0; i < rp->cap.n && !found; i++) {
		const struct rframe *fr = &rp->cap.v[i];

		if (replay_is_request(p, fr)) {
			seen.op[psn_slot(&seen, fr->pkt.psn, true)] = 1;
		} else if (replay_from_server(p, fr) &&
			   (fr->pkt.mask & (DROCE_OPM_RC | DROCE_OPM_RESP)) ==
				   (DROCE_OPM_RC | DROCE_OPM_RESP) &&
			   psn_slot(&seen, fr->pkt.psn, false) >= 0) {
			p->client_qpn = fr->pkt.qpn;
			found = true;
		}
	}
	psn_table_free(&seen);
	for (i = 0; i < rp->cap.n && !found; i++) {
		const struct rframe *fr = &rp->cap.v[i];

		if (replay_from_server(p, fr) && (fr->pkt.mask & DROCE_OPM_RC)) {
			p->client_qpn = fr->pkt.qpn;
			found = true;
		}
	}
	return found ? 0
		     : replay_error(rp, 0, "no RC frame of the server: the client's QP is unknown");
}

/* The SEND messages: how many, and the longest (from their packets, by PSN). */
static int plan_sends(struct replay *rp, struct plan *p, struct psn_table *t)
{
	for (size_t h = 0; h < t->cap; h++) {
		uint32_t mask, len, psn;

		if (t->op[h] == 0)
			continue;
		mask = droce_opcode_table[t->op[h] - 1].mask;
		if (!(mask & DROCE_OPM_LAST))
			continue;
		len = t->len[h];
		for (psn = t->key[h]; !(mask & DROCE_OPM_FIRST);) {
			long s;

			psn = (psn - 1) & DROCE_PSN_MASK;
			s = psn_slot(t, psn, false);
			if (s < 0)
				return replay_error(rp, 0, "SEND PSN %u missing from the capture",
						    psn);
			mask = droce_opcode_table[t->op[s] - 1].mask;
			len += t->len[s];
		}
		p->recv_msgs++;
		if (len > p->recv_len)
			p->recv_len = len;
	}
	return 0;
}

/* What each request needs: path MTU, access, the memory it touches, SEND packets by PSN. */
static int plan_requests(struct replay *rp, struct plan *p, struct psn_table *sends)
{
	uint32_t max_payload = 0;

	p->va_lo = UINT64_MAX;
	for (size_t i = 0; i < rp->cap.n; i++) {
		const struct rframe *fr = &rp->cap.v[i];
		uint32_t m = fr->pkt.mask;

		if (!replay_is_request(p, fr))
			continue;
		if ((m & DROCE_OPM_PAYLOAD) && !(m & DROCE_OPM_LAST))
			p->pmtu = fr->pkt.payload_len; /* FIRST and MIDDLE packets are full */
		if ((m & DROCE_OPM_PAYLOAD) && fr->pkt.payload_len > max_payload)
			max_payload = fr->pkt.payload_len;
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

			if (p->rkey != 0 && p->rkey != rkey)
				return replay_error(rp, fr->number,
						    "a second rkey (the replay maps one MR)");
			p->rkey = rkey;
			if (va < p->va_lo)
				p->va_lo = va;
			if (va + len > p->va_hi)
				p->va_hi = va + len;
		}
		if (m & DROCE_OPM_SEND) {
			long s = psn_slot(sends, fr->pkt.psn, true);

			sends->op[s] = (uint8_t)(fr->pkt.opcode + 1);
			sends->len[s] = fr->pkt.payload_len;
		}
	}
	if (p->pmtu == 0)
		p->pmtu = max_payload <= 1024 ? 1024 : 4096;
	if (p->pmtu < 256 || p->pmtu > 4096 || (p->pmtu & (p->pmtu - 1)) != 0)
		return replay_error(rp, 0, "path MTU %u is not an IB MTU", p->pmtu);
	if (p->va_lo == UINT64_MAX)
		p->va_lo = p->va_hi = 0;
	p->va_lo &= ~(uint64_t)4095; /* keep the offsets in a page, and 8-byte alignment */
	return 0;
}

int replay_plan_make(struct replay *rp)
{
	struct plan *p = &rp->plan;
	struct psn_table sends;
	size_t nreq = 0, i;
	int rc;

	memset(p, 0, sizeof(*p));
	rc = plan_conversation(rp, p);
	if (rc != 0)
		return rc;
	for (i = 0; i < rp->cap.n; i++)
		nreq += replay_is_request(p, &rp->cap.v[i]);
	rc = plan_client_qp(rp, p, nreq);
	if (rc != 0)
		return rc;
	if (psn_table_init(&sends, nreq) != 0) {
		rc = -ENOMEM;
		goto out_free_sends;
	}
	rc = plan_requests(rp, p, &sends);
	if (rc == 0)
		rc = plan_sends(rp, p, &sends);
	if (rc != 0)
		goto out_free_sends;
	/* READ requests, in capture order, to place the response bytes */
	p->reads = calloc(nreq + 1, sizeof(*p->reads));
	if (p->reads == NULL) {
		rc = -ENOMEM;
		goto out_free_sends;
	}
	for (i = 0; i < rp->cap.n; i++) {
		const struct rframe *fr = &rp->cap.v[i];

		if (replay_is_request(p, fr) && (fr->pkt.mask & DROCE_OPM_READ))
			p->reads[p->nreads++] = (struct read_req){
				.psn = fr->pkt.psn,
				.npkts = npkts(fr->f.reth.len, p->pmtu),
				.va = fr->f.reth.va,
			};
	}
out_free_sends:
	psn_table_free(&sends);
	return rc;
}

void replay_plan_free(struct plan *p)
{
	free(p->reads);
	p->reads = NULL;
}
