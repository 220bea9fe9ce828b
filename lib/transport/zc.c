/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zero-copy frames (doc/transport.md, "Zero copy"): a header mbuf, one
 * external-buffer mbuf per piece of payload attached to the MR's own bytes,
 * and a tail mbuf for the pad and the ICRC, computed over the chain. Nothing
 * is allocated besides the three (or more) pool mbufs: the shared info of each
 * external buffer, and what its free callback needs, sit in the unused data
 * room of the mbuf that carries it, which stays allocated until the callback
 * has run.
 *
 * Two counts make it safe. Per MR slot (lib/mem's busy count): deregistration
 * waits for the frames still holding the MR's bytes. Per WQE (struct
 * droce_zc, one count per shadow slot): the completer holds a WQE back until
 * the frames built from it are freed, since a go-back-N duplicate may still
 * wait in the port's TX backlog when the ACK of the original arrives, and the
 * application may reuse or unmap the buffer once the WQE completes. The
 * callback runs on whatever thread frees the frame (a PMD's, a peer port's
 * RX), so both counts are atomics.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_wire_icrc.h"
#include "droce_wire_mbuf.h"
#include "rc_priv.h"

/* Per QP: payload segments in flight by shadow slot; outlives the QP while any is. */
struct droce_zc {
	uint32_t refs; /* the QP's own + one per segment in flight */
	uint32_t size;
	uint32_t segs[]; /* by shadow slot (index & (size - 1)) */
};

/* In the data room of an external-buffer mbuf: its shared info and what its callback needs. */
struct zc_seg {
	struct rte_mbuf_ext_shared_info shinfo;
	struct droce_mr_table *keys;
	struct droce_zc *zc; /* NULL: no WQE waits for it (a READ response) */
	uint32_t slot;
	uint32_t key; /* the MR whose busy count the segment holds */
};

uint32_t droce_zc_min_for_port(bool copies_in_software, bool faults, uint32_t conf_min)
{
	if (conf_min == UINT32_MAX || faults || !copies_in_software)
		return 0;
	return conf_min == 0 ? DROCE_ZC_MIN_DEFAULT : conf_min;
}

struct droce_zc *droce_zc_create(uint32_t size)
{
	struct droce_zc *zc = calloc(1, sizeof(*zc) + (size_t)size * sizeof(zc->segs[0]));

	if (zc == NULL)
		return NULL;
	zc->refs = 1;
	zc->size = size;
	return zc;
}

static void zc_unref(struct droce_zc *zc)
{
	/* acq_rel: the last one to leave sees every other's writes before it frees */
	if (__atomic_sub_fetch(&zc->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(zc);
}

void droce_zc_release(struct droce_zc *zc)
{
	if (zc != NULL)
		zc_unref(zc);
}

uint32_t droce_zc_slot_busy(const struct droce_zc *zc, uint32_t slot)
{
	/* acquire: pairs with the callback's release, the PMD's reads are over once 0 */
	return zc == NULL ? 0 : __atomic_load_n(&zc->segs[slot & (zc->size - 1)], __ATOMIC_ACQUIRE);
}

uint32_t droce_zc_busy(const struct droce_zc *zc)
{
	return zc == NULL ? 0 : __atomic_load_n(&zc->refs, __ATOMIC_ACQUIRE) - 1;
}

static void zc_seg_free(void *addr, void *opaque)
{
	struct zc_seg *x = opaque;

	(void)addr;
	droce_mr_busy_put(x->keys, x->key);
	if (x->zc != NULL) {
		__atomic_fetch_sub(&x->zc->segs[x->slot], 1, __ATOMIC_RELEASE);
		zc_unref(x->zc);
	}
}

int droce_zc_pieces(const struct droce_transport_env *env, uint32_t pd, const struct droce_sge *sge,
		    uint32_t num_sge, uint32_t offset, uint32_t len, struct droce_zc_piece *p,
		    unsigned int max)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; i < num_sge && len > 0; i++) {
		uint32_t room, k;
		void *host;

		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		if (n == max)
			return -E2BIG;
		room = sge[i].length - offset;
		k = room < len ? room : len;
		if (droce_mr_check_local(env->keys, sge[i].lkey, pd, sge[i].addr + offset, k, 0,
					 &host) != DROCE_MR_OK)
			return -EACCES;
		p[n].host = host;
		p[n].len = k;
		p[n].key = sge[i].lkey;
		n++;
		len -= k;
		offset = 0;
	}
	return len == 0 ? (int)n : -EMSGSIZE;
}

/* An mbuf of the pool attached to @p p's bytes, its counts taken; NULL: no mbuf. */
static struct rte_mbuf *zc_seg(const struct droce_transport_env *env,
			       const struct droce_zc_piece *p, struct droce_zc *zc, uint32_t slot)
{
	struct rte_mbuf *s = rte_pktmbuf_alloc(env->pool);
	struct zc_seg *x;

	if (s == NULL)
		return NULL;
	if (unlikely(s->buf_len < sizeof(*x) + sizeof(void *))) {
		rte_pktmbuf_free(s);
		return NULL;
	}
	/* the mbuf's own room, unused once it is attached elsewhere, until it is freed */
	x = (struct zc_seg *)RTE_PTR_ALIGN_CEIL(s->buf_addr, sizeof(void *));
	x->keys = env->keys;
	x->zc = zc;
	x->slot = zc != NULL ? slot & (zc->size - 1) : 0;
	x->key = p->key;
	x->shinfo.free_cb = zc_seg_free;
	x->shinfo.fcb_opaque = x;
	rte_mbuf_ext_refcnt_set(&x->shinfo, 1);
	droce_mr_busy_get(env->keys, p->key);
	if (zc != NULL) {
		__atomic_fetch_add(&zc->refs, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&zc->segs[x->slot], 1, __ATOMIC_RELAXED);
	}
	/* software PMDs only (droce_port_driver_copies_in_software()): the IOVA is never used */
	rte_pktmbuf_attach_extbuf(s, p->host, RTE_BAD_IOVA, (uint16_t)p->len, &x->shinfo);
	s->data_len = (uint16_t)p->len;
	s->pkt_len = p->len;
	return s;
}

struct rte_mbuf *droce_zc_frame(const struct droce_transport_env *env, const struct droce_addr *a,
				const struct droce_hdr_fields *f, uint32_t len,
				const struct droce_zc_piece *p, unsigned int n, struct droce_zc *zc,
				uint32_t slot)
{
	size_t frame_len = droce_frame_len(a, f->opcode, len);
	uint32_t pad = droce_pad_len(len), hdr_len, l3_off = sizeof(struct droce_eth_hdr);
	struct rte_mbuf *h, *s, *t;
	uint8_t *buf, *tail;
	unsigned int i;

	if (frame_len > UINT16_MAX || frame_len < len + pad + DROCE_ICRC_LEN)
		return NULL;
	hdr_len = (uint32_t)(frame_len - len - pad - DROCE_ICRC_LEN);
	h = rte_pktmbuf_alloc(env->pool);
	if (h == NULL)
		return NULL;
	/* every header in the first segment: the parser and the ICRC read them there */
	buf = (uint8_t *)rte_pktmbuf_append(h, (uint16_t)hdr_len);
	if (buf == NULL ||
	    droce_build_hdrs(buf, hdr_len, a, (uint16_t)f->psn, f, len) != (ssize_t)hdr_len)
		goto out_free;
	for (i = 0; i < n; i++) {
		s = zc_seg(env, &p[i], zc, slot);
		if (s == NULL)
			goto out_free;
		if (rte_pktmbuf_chain(h, s) != 0) {
			rte_pktmbuf_free(s);
			goto out_free;
		}
	}
	t = rte_pktmbuf_alloc(env->pool);
	if (t == NULL)
		goto out_free;
	tail = (uint8_t *)rte_pktmbuf_append(t, (uint16_t)(pad + DROCE_ICRC_LEN));
	if (tail == NULL || rte_pktmbuf_chain(h, t) != 0) {
		rte_pktmbuf_free(t);
		goto out_free;
	}
	memset(tail, 0, pad);
	droce_icrc_store(tail + pad, droce_icrc_calc_mbuf(h, l3_off, a->ipv6 ? 40 : 20, a->ipv6,
							  (uint32_t)(frame_len - DROCE_ICRC_LEN)));
	return h;

out_free:
	rte_pktmbuf_free(h); /* the segments chained so far give their counts back */
	return NULL;
}
