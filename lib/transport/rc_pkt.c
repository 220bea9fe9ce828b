/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frames of a connected QP: the address template from the QP's primary path
 * (modify's ah_attr), a frame with room for its payload, the ICRC, and the
 * ACK/NAK frames of the responder (IBTA 9.3.5: AETH).
 */
#include <errno.h>
#include <string.h>

#include "droce_wire_icrc.h"
#include "rc_priv.h"

/*
 * Address template of the QP's peer: 0, -EAGAIN (MAC not resolved yet) or -EINVAL.
 * A wait for the MAC is one neigh_miss, however many packets and passes it holds up.
 */
int droce_rc_addr(const struct droce_transport_env *env, struct droce_tqp *q, struct droce_addr *a)
{
	int rc;

	/* RoCEv2 paths are always global: the GRH fields give the IP header */
	if (!q->av.is_global)
		return -EINVAL;
	rc = droce_path_addr(env, &q->av.grh, q->qpn, q->dest_qpn, a);
	if (unlikely(rc == -EAGAIN)) {
		if (q->neigh_tries++ == 0)
			q->stats.neigh_miss++;
	} else if (unlikely(q->neigh_tries != 0)) {
		q->neigh_tries = 0;
	}
	return rc;
}

/* A frame with every header written and @p len payload bytes at *payload; NULL: no mbuf. */
struct rte_mbuf *droce_rc_frame(const struct droce_transport_env *env, const struct droce_addr *a,
				const struct droce_hdr_fields *f, uint32_t len, uint8_t **payload)
{
	size_t frame_len = droce_frame_len(a, f->opcode, len);
	struct rte_mbuf *m;
	ssize_t hdr_len;
	uint8_t *buf;

	if (frame_len > UINT16_MAX)
		return NULL;
	m = rte_pktmbuf_alloc(env->pool);
	if (m == NULL)
		return NULL;
	buf = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)frame_len);
	if (buf == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	hdr_len = droce_build_hdrs(buf, frame_len, a, (uint16_t)f->psn, f, len);
	if (hdr_len < 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(buf + hdr_len + len, 0, droce_pad_len(len));
	*payload = buf + hdr_len;
	return m;
}

/* Store the ICRC of a frame whose payload is in place. */
void droce_rc_frame_seal(struct rte_mbuf *m, const struct droce_addr *a)
{
	uint8_t *buf = rte_pktmbuf_mtod(m, uint8_t *);
	size_t frame_len = rte_pktmbuf_data_len(m);
	uint8_t *l3 = buf + sizeof(struct droce_eth_hdr);

	droce_icrc_store(
		buf + frame_len - DROCE_ICRC_LEN,
		droce_icrc_calc(l3, a->ipv6 ? 40 : 20, a->ipv6,
				frame_len - DROCE_ICRC_LEN - sizeof(struct droce_eth_hdr)));
}

/* An ACKNOWLEDGE frame: ACK, RNR NAK or NAK by @p syndrome, for @p psn. 0 or -errno. */
int droce_rc_send_ack(const struct droce_transport_env *env, struct droce_tqp *q, uint8_t syndrome,
		      uint32_t psn)
{
	struct droce_hdr_fields f;
	struct droce_addr a;
	struct rte_mbuf *m;
	uint8_t *payload;
	int rc = droce_rc_addr(env, q, &a);

	if (rc != 0)
		return rc;
	memset(&f, 0, sizeof(f));
	f.opcode = DROCE_OP_RC_ACK;
	f.pkey = q->pkey;
	f.dqpn = q->dest_qpn;
	f.psn = psn;
	f.aeth.syndrome = syndrome;
	f.aeth.msn = q->rc->resp.msn;
	m = droce_rc_frame(env, &a, &f, 0, &payload);
	if (m == NULL)
		return -ENOBUFS;
	droce_rc_frame_seal(m, &a);
	droce_tqp_tx(env, q, m);
	return 0;
}
