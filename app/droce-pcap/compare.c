/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-pcap --replay --compare: droce's responses against the server's in the capture.
 *
 * What the capture cannot show (see linux_slots() and replay_compare()):
 *  - Frames the server sent that the capture lost (netem loss, the capture's own drops): the
 *    server's IPv4 IDs count them; each such hole may stand for one droce response.
 *  - A truncated capture (--truncated) was cut: droce's responses to the last requests are
 *    not compared.
 *
 * Tolerated differences (each only where IBTA leaves a choice):
 *  - AETH credit count of an ACK: Linux rxe advertises 0x1f ("invalid", no end-to-end flow
 *    control), as does droce; any credit value is accepted. ACK vs RNR NAK vs NAK, the NAK
 *    code, the RNR timer, the PSN and the MSN must match exactly.
 *  - ACK coalescing: ACKs are cumulative, so a responder may send fewer of them as long as
 *    every AckReq packet's PSN is eventually acknowledged in order. Both re-ACK duplicate
 *    SEND/WRITE packets (C9-105), Linux once per packet, droce once per burst of them.
 *  - IP ID, UDP source port, IPv4 DF/ECN/TTL and IPv6 flow label: not transport fields.
 *
 * Everything else of a response is compared: opcode, PSN, destination QP, IP addresses,
 * payload length and bytes (READ responses), the original value of an atomic ACK. Besides,
 * droce's own frames must parse (its parser, ICRC included), be built in one mbuf segment,
 * and its QP must still be in RTS at the end.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "replay_priv.h"

/* Difference lines printed at most; the rest are counted. */
#define SHOWN_MAX 100u

void replay_diff(struct replay *rp, const char *fmt, ...)
{
	FILE *log = rp->o->log != NULL ? rp->o->log : stdout;
	va_list ap;

	rp->r->differences++;
	if (rp->shown == SHOWN_MAX)
		fprintf(log, "difference: more than %u, the rest not shown\n", SHOWN_MAX);
	if (rp->shown++ >= SHOWN_MAX)
		return;
	fprintf(log, "difference: ");
	va_start(ap, fmt);
	vfprintf(log, fmt, ap);
	va_end(ap);
	fputc('\n', log);
}

#define NUM(fr) ((unsigned long long)(fr)->number)

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

static bool ip_eq(const struct droce_addr *a, const uint8_t ip[16], bool src)
{
	return memcmp(src ? a->src_ip : a->dst_ip, ip, a->ipv6 ? 16 : 4) == 0;
}

/* AETH as IBTA requires it to match: the kind, the NAK code / RNR timer, the MSN. */
static void aeth_compare(struct replay *rp, const struct rframe *l, const struct rframe *d)
{
	uint8_t ls = l->f.aeth.syndrome, ds = d->f.aeth.syndrome;

	if ((ls & DROCE_AETH_TYPE_MASK) != (ds & DROCE_AETH_TYPE_MASK))
		replay_diff(rp,
			    "frame %llu: Linux sent %s (%#x), droce %s (%#x) answering frame %llu",
			    NUM(l), kind_name(ls), ls, kind_name(ds), ds, NUM(d));
	/* the credit count of an ACK may differ; a NAK's code and an RNR timer may not */
	else if ((ls & DROCE_AETH_TYPE_MASK) != DROCE_AETH_ACK && ls != ds)
		replay_diff(rp, "frame %llu: syndrome %#x, droce %#x (answering %llu)", NUM(l), ls,
			    ds, NUM(d));
	if (l->f.aeth.msn != d->f.aeth.msn)
		replay_diff(rp, "frame %llu: MSN %u, droce %u (answering %llu)", NUM(l),
			    l->f.aeth.msn, d->f.aeth.msn, NUM(d));
}

/*
 * The opcodes agree, READ responses to a request retried from inside an earlier READ
 * included: both answer with the continuation of the original response (MIDDLE... LAST).
 */
static bool opcode_ok(const struct rframe *l, const struct rframe *d)
{
	return l->f.opcode == d->f.opcode;
}

static void header_compare(struct replay *rp, const struct rframe *l, const struct rframe *d)
{
	if (!opcode_ok(l, d))
		replay_diff(rp, "frame %llu: opcode %s, droce %s (answering %llu)", NUM(l),
			    droce_opcode_table[l->f.opcode].name,
			    droce_opcode_table[d->f.opcode].name, NUM(d));
	if (l->f.psn != d->f.psn)
		replay_diff(rp, "frame %llu: PSN %u, droce %u (answering %llu)", NUM(l), l->f.psn,
			    d->f.psn, NUM(d));
	if (l->f.dqpn != d->f.dqpn)
		replay_diff(rp, "frame %llu: dest QP %#x, droce %#x (answering %llu)", NUM(l),
			    l->f.dqpn, d->f.dqpn, NUM(d));
	if (l->a.ipv6 != d->a.ipv6 || !ip_eq(&d->a, l->a.src_ip, true) ||
	    !ip_eq(&d->a, l->a.dst_ip, false))
		replay_diff(rp,
			    "frame %llu: droce's response has other IP addresses (answering %llu)",
			    NUM(l), NUM(d));
}

/* One response of Linux's against droce's: headers, AETH, READ bytes, atomic original value. */
static void response_compare(struct replay *rp, const struct rframe *l, const struct rframe *d)
{
	header_compare(rp, l, d);
	if ((l->pkt.mask & DROCE_OPM_AETH) && (d->pkt.mask & DROCE_OPM_AETH))
		aeth_compare(rp, l, d);
	if (l->pkt.payload_len != d->pkt.payload_len)
		replay_diff(rp, "frame %llu: payload %u bytes, droce %u (answering %llu)", NUM(l),
			    l->pkt.payload_len, d->pkt.payload_len, NUM(d));
	else if (memcmp(l->bytes + l->pkt.payload_off, d->bytes + d->pkt.payload_off,
			l->pkt.payload_len) != 0)
		replay_diff(rp, "frame %llu: READ response bytes differ (answering %llu)", NUM(l),
			    NUM(d));
	if ((l->pkt.mask & DROCE_OPM_ATMACK) && l->f.atmack_orig != d->f.atmack_orig)
		replay_diff(rp,
			    "frame %llu: atomic original value %#llx, droce %#llx (answering %llu)",
			    NUM(l), (unsigned long long)l->f.atmack_orig,
			    (unsigned long long)d->f.atmack_orig, NUM(d));
}

static bool is_pos_ack(const struct rframe *fr)
{
	return fr->pkt.opcode == DROCE_OP_RC_ACK &&
	       (fr->f.aeth.syndrome & DROCE_AETH_TYPE_MASK) == DROCE_AETH_ACK;
}

/* A frame the server sent, with its place in the server's send order. */
struct sent {
	const struct rframe *fr;
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
 * every IPv4 packet of a flow the next IP ID (one counter per address pair and protocol), so
 * the IDs of the server's frames give its send order, and a jump of k in the IDs means k - 1
 * frames sent and not captured: holes. IPv6 has no ID: capture order, no holes. The server's
 * frames other than responses of its QP (the ping-pongs make it a requester too) take their
 * place in the order and are left out: droce's server QP posts no send WQE.
 * Returns the slots (NULL: a hole) and their count, or NULL (-ENOMEM, -EINVAL in *rc).
 */
static const struct rframe **linux_slots(struct replay *rp, size_t *n, size_t *holes, int *rc)
{
	const struct plan *p = &rp->plan;
	struct sent *v = calloc(rp->cap.n + 1, sizeof(*v));
	const struct rframe **slots = NULL;
	size_t nv = 0, ns = 0, i;
	int64_t seq = 0;
	uint16_t prev = 0;

	*rc = -ENOMEM;
	if (v == NULL)
		return NULL;
	for (i = 0; i < rp->cap.n; i++) {
		const struct rframe *fr = &rp->cap.v[i];

		if (!replay_from_server(p, fr))
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
	if (slots == NULL)
		goto out_free;
	for (i = 0; i < nv; i++) {
		if (i > 0) {
			if (v[i].seq == v[i - 1].seq) {
				*rc = replay_error(rp, v[i].fr->number, "IP ID seen twice");
				free((void *)slots);
				slots = NULL;
				goto out_free;
			}
			for (int64_t k = v[i - 1].seq + 1; k < v[i].seq; k++) {
				slots[ns++] = NULL;
				(*holes)++;
			}
		}
		if (replay_is_response(p, v[i].fr))
			slots[ns++] = v[i].fr;
	}
	*n = ns;
	*rc = 0;
out_free:
	free(v);
	return slots;
}

static bool same_kind(const struct rframe *l, const struct rframe *d)
{
	return opcode_ok(l, d) && l->f.psn == d->f.psn &&
	       (!(l->pkt.mask & d->pkt.mask & DROCE_OPM_AETH) ||
		l->f.aeth.syndrome >> 5 == d->f.aeth.syndrome >> 5);
}

/* droce's own checks: its frames parse and are one segment each, its QP stays in RTS. */
static void droce_checks(struct replay *rp)
{
	for (size_t j = 0; j < rp->out.n; j++)
		if (!rp->out.v[j].roce)
			replay_diff(rp,
				    "droce sent a frame its own parser refuses (answering %llu)",
				    NUM(&rp->out.v[j]));
	if (rp->r->malformed > 0 && rp->out.n < rp->r->responses)
		replay_diff(rp, "droce sent %llu frames longer than any RoCEv2 frame",
			    (unsigned long long)(rp->r->responses - rp->out.n));
	if (rp->r->chained > 0)
		replay_diff(rp, "droce built %llu frames in more than one mbuf segment",
			    (unsigned long long)rp->r->chained);
	if (!rp->r->rts)
		replay_diff(rp, "droce's QP left RTS");
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
 * - A truncated capture was cut: responses to the last requests came after the cut, so
 *   droce's responses left over at the end are accepted there (and only there).
 */
int replay_compare(struct replay *rp)
{
	struct replay_result *r = rp->r;
	const struct rframes *out = &rp->out;
	size_t n = 0, holes = 0, pending = 0, j = 0;
	int rc;
	const struct rframe **slots = linux_slots(rp, &n, &holes, &rc);

	if (slots == NULL)
		return rc;
	droce_checks(rp);
	for (size_t k = 0; k < n; k++) {
		const struct rframe *l = slots[k], *d;

		if (l == NULL) {
			pending++;
			continue;
		}
		/* a hole may have been one of droce's responses, or another frame of the
		 * server's UDP flow: skip droce's only while it does not match the next known */
		while (pending > 0 && j < out->n && !same_kind(l, &out->v[j])) {
			pending--;
			j++;
			r->in_holes++;
		}
		pending = 0;
		if (j >= out->n) {
			replay_diff(rp, "frame %llu: Linux sent %s PSN %u, droce nothing more",
				    NUM(l), droce_opcode_table[l->f.opcode].name, l->f.psn);
			break;
		}
		d = &out->v[j];
		if (is_pos_ack(l) && is_pos_ack(d) &&
		    ((d->f.psn - l->f.psn) & DROCE_PSN_MASK) != 0 &&
		    ((d->f.psn - l->f.psn) & DROCE_PSN_MASK) < (1u << 23)) {
			r->coalesced++;
			continue;
		}
		response_compare(rp, l, d);
		j++;
	}
	/* holes at the end take what droce sent last */
	while (pending > 0 && j < out->n) {
		pending--;
		j++;
		r->in_holes++;
	}
	if (!rp->o->truncated && j < out->n)
		replay_diff(rp, "droce sent %zu responses more than Linux (first answering %llu)",
			    out->n - j, NUM(&out->v[j]));
	r->linux_responses = n - holes;
	r->holes = holes;
	r->after_end = out->n - j;
	free((void *)slots);
	return 0;
}

void replay_print(FILE *out, const char *path, const struct replay_opts *o,
		  const struct replay_result *r)
{
	char server[INET6_ADDRSTRLEN], client[INET6_ADDRSTRLEN];

	inet_ntop(r->ipv6 ? AF_INET6 : AF_INET, r->server_ip, server, sizeof(server));
	inet_ntop(r->ipv6 ? AF_INET6 : AF_INET, r->client_ip, client, sizeof(client));
	fprintf(out, "replay of %s: server %s QP 0x%06x, client %s QP 0x%06x, path MTU %u\n", path,
		server, r->server_qpn, client, r->client_qpn, r->pmtu);
	fprintf(out,
		"  %llu requests fed %s, droce sent %llu frames%s%s, %llu receive completions "
		"(%llu errors)%s\n",
		(unsigned long long)r->requests,
		o->timing ? "at the capture's times" : "as fast as possible",
		(unsigned long long)r->responses, o->out != NULL ? " to " : "",
		o->out != NULL ? o->out : "", (unsigned long long)r->recv_completions,
		(unsigned long long)r->recv_errors, r->rts ? "" : ", its QP left RTS");
	if (!o->compare)
		return;
	fprintf(out,
		"  compared: %llu Linux responses, %llu IP IDs not captured, %llu of droce's "
		"responses in their place, %llu Linux ACKs coalesced by droce, %llu droce "
		"responses after the capture's end\n",
		(unsigned long long)r->linux_responses, (unsigned long long)r->holes,
		(unsigned long long)r->in_holes, (unsigned long long)r->coalesced,
		(unsigned long long)r->after_end);
	if (r->differences == 0)
		fprintf(out, "verdict: equal within the tolerances\n");
	else
		fprintf(out, "verdict: %llu difference%s\n", (unsigned long long)r->differences,
			r->differences == 1 ? "" : "s");
}
