/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Message bytes between SGEs and packets. Every SGE is checked against the
 * key table (key, PD, bounds, access) before a byte moves; SGEs come from WQE
 * copies the engine took, never from shared memory directly. One walker finds
 * the pieces of a byte range of the message; gather and scatter move them.
 */
#include <errno.h>
#include <string.h>

#include "transport_priv.h"

/* Moves @p n bytes between the checked host memory @p host and the other side; 0 or -errno. */
typedef int (*sge_move_fn)(void *ctx, void *host, uint32_t n);

/*
 * Walk bytes [@p offset, @p offset + @p len) of the message over @p sge: each piece is
 * checked for @p access (0: a valid key is enough to read) and handed to @p move.
 * 0, -EACCES (a key check failed), -EMSGSIZE (the SGEs end first) or what @p move returned.
 */
static __rte_always_inline int sge_walk(const struct droce_transport_env *env, uint32_t pd,
					const struct droce_sge *sge, uint32_t num_sge,
					uint32_t offset, uint32_t len, uint32_t access,
					sge_move_fn move, void *ctx)
{
	uint32_t i;

	for (i = 0; i < num_sge && len > 0; i++) {
		uint32_t room, n;
		void *host;
		int rc;

		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		room = sge[i].length - offset;
		n = room < len ? room : len;
		if (droce_mr_check_local(env->keys, sge[i].lkey, pd, sge[i].addr + offset, n,
					 access, &host) != DROCE_MR_OK)
			return -EACCES;
		rc = move(ctx, host, n);
		if (rc != 0)
			return rc;
		len -= n;
		offset = 0;
	}
	return len == 0 ? 0 : -EMSGSIZE;
}

/* host -> a flat buffer */
static int move_to_buf(void *ctx, void *host, uint32_t n)
{
	uint8_t **dst = ctx;

	memcpy(*dst, host, n);
	*dst += n;
	return 0;
}

/* a flat buffer -> host */
static int move_from_buf(void *ctx, void *host, uint32_t n)
{
	const uint8_t **src = ctx;

	memcpy(host, *src, n);
	*src += n;
	return 0;
}

struct mbuf_src {
	const struct rte_mbuf *m;
	uint32_t off;
};

/* an mbuf chain -> host */
static int move_from_mbuf(void *ctx, void *host, uint32_t n)
{
	struct mbuf_src *s = ctx;
	/* rte_pktmbuf_read() copies into host when the bytes span segments, else it points
	 * into the segment and we copy once */
	const void *src = rte_pktmbuf_read(s->m, s->off, n, host);

	if (src == NULL)
		return -EINVAL;
	if (src != host)
		memcpy(host, src, n);
	s->off += n;
	return 0;
}

int droce_sge_gather(const struct droce_transport_env *env, uint32_t pd,
		     const struct droce_sge *sge, uint32_t num_sge, uint32_t offset, uint8_t *dst,
		     uint32_t len)
{
	/* reading local memory needs no access right beyond a valid key */
	return sge_walk(env, pd, sge, num_sge, offset, len, 0, move_to_buf, &dst);
}

int droce_sge_scatter_buf(const struct droce_transport_env *env, uint32_t pd,
			  const struct droce_sge *sge, uint32_t num_sge, const void *src,
			  uint32_t len)
{
	const uint8_t *p = src;

	return sge_walk(env, pd, sge, num_sge, 0, len, DROCE_ACCESS_LOCAL_WRITE, move_from_buf, &p);
}

int droce_sge_scatter(const struct droce_transport_env *env, uint32_t pd,
		      const struct droce_sge *sge, uint32_t num_sge, uint32_t offset,
		      const struct rte_mbuf *m, uint32_t m_off, uint32_t len)
{
	struct mbuf_src s = {.m = m, .off = m_off};

	return sge_walk(env, pd, sge, num_sge, offset, len, DROCE_ACCESS_LOCAL_WRITE,
			move_from_mbuf, &s);
}
