/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Message bytes between SGEs and packets. Every SGE is checked against the
 * key table (key, PD, bounds, access) before a byte moves; SGEs come from WQE
 * copies the engine took, never from shared memory directly.
 */
#include <errno.h>
#include <string.h>

#include "transport_priv.h"

/* Gather @p len bytes of the message described by @p sge into @p dst. */
int droce_sge_gather(const struct droce_transport_env *env, uint32_t pd,
		     const struct droce_sge *sge, uint32_t num_sge, uint8_t *dst, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < num_sge && len > 0; i++) {
		uint32_t n = sge[i].length < len ? sge[i].length : len;
		void *host;

		/* reading local memory needs no access right beyond a valid key */
		if (droce_mr_check_local(env->keys, sge[i].lkey, pd, sge[i].addr, n, 0, &host) !=
		    DROCE_MR_OK)
			return -EACCES;
		if (n > 0)
			memcpy(dst, host, n);
		dst += n;
		len -= n;
	}
	return len == 0 ? 0 : -EMSGSIZE;
}

/* Gather @p len bytes of the message described by @p sge, from byte @p offset of it. */
int droce_sge_gather_at(const struct droce_transport_env *env, uint32_t pd,
			const struct droce_sge *sge, uint32_t num_sge, uint32_t offset,
			uint8_t *dst, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < num_sge && len > 0; i++) {
		uint32_t room, n;
		void *host;

		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		room = sge[i].length - offset;
		n = room < len ? room : len;
		if (droce_mr_check_local(env->keys, sge[i].lkey, pd, sge[i].addr + offset, n, 0,
					 &host) != DROCE_MR_OK)
			return -EACCES;
		memcpy(dst, host, n);
		dst += n;
		len -= n;
		offset = 0;
	}
	return len == 0 ? 0 : -EMSGSIZE;
}

/*
 * Scatter @p len bytes of mbuf chain @p m (from @p m_off) into the receive
 * buffers of @p sge, starting @p offset bytes into them. Needs LOCAL_WRITE.
 */
int droce_sge_scatter(const struct droce_transport_env *env, uint32_t pd,
		      const struct droce_sge *sge, uint32_t num_sge, uint32_t offset,
		      const struct rte_mbuf *m, uint32_t m_off, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < num_sge && len > 0; i++) {
		uint32_t room, n;
		const void *src;
		void *host;

		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		room = sge[i].length - offset;
		n = room < len ? room : len;
		if (droce_mr_check_local(env->keys, sge[i].lkey, pd, sge[i].addr + offset, n,
					 DROCE_ACCESS_LOCAL_WRITE, &host) != DROCE_MR_OK)
			return -EACCES;
		/* rte_pktmbuf_read() copies into host when the bytes span segments,
		 * else it points into the segment and we copy once */
		src = rte_pktmbuf_read(m, m_off, n, host);
		if (src == NULL)
			return -EINVAL;
		if (src != host)
			memcpy(host, src, n);
		m_off += n;
		len -= n;
		offset = 0;
	}
	return len == 0 ? 0 : -EMSGSIZE;
}

/* Scatter @p len bytes of @p src into the receive buffers of @p sge, from their start. */
int droce_sge_scatter_buf(const struct droce_transport_env *env, uint32_t pd,
			  const struct droce_sge *sge, uint32_t num_sge, const void *src,
			  uint32_t len)
{
	const uint8_t *p = src;
	uint32_t i;

	for (i = 0; i < num_sge && len > 0; i++) {
		uint32_t n = sge[i].length < len ? sge[i].length : len;
		void *host;

		if (droce_mr_check_local(env->keys, sge[i].lkey, pd, sge[i].addr, n,
					 DROCE_ACCESS_LOCAL_WRITE, &host) != DROCE_MR_OK)
			return -EACCES;
		if (n > 0)
			memcpy(host, p, n);
		p += n;
		len -= n;
	}
	return len == 0 ? 0 : -EMSGSIZE;
}
