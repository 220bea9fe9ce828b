/* SPDX-License-Identifier: BSD-3-Clause */
/* droced's view of its own verbs objects (droce_verbs_export.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "droce_verbs_export.h"
#include "verbs_priv.h"

static void shm_layout(const struct droce_shm *m, const void *ring0, size_t len0, uint32_t slot0,
		       const void *ring1, size_t len1, uint32_t slot1, struct droce_dproto_shm *s)
{
	memset(s, 0, sizeof(*s));
	s->len = m->len;
	s->ring_off[0] = (uint64_t)((const uint8_t *)ring0 - (const uint8_t *)m->addr);
	s->ring_len[0] = len0;
	s->slot_size[0] = slot0;
	if (ring1 != NULL) {
		s->ring_off[1] = (uint64_t)((const uint8_t *)ring1 - (const uint8_t *)m->addr);
		s->ring_len[1] = len1;
		s->slot_size[1] = slot1;
	}
}

int droce_export_cq(struct ibv_cq *ibcq, struct droce_dproto_shm *s, int *fd)
{
	struct droce_cq *cq = to_dcq(ibcq);

	shm_layout(&cq->shm, cq->ring, cq->ring_len, sizeof(struct droce_cqe), NULL, 0, 0, s);
	*fd = cq->shm.fd;
	/* the application polls it: a QP's reset is purged there, never here */
	cq->exported = true;
	return *fd >= 0 ? 0 : -EINVAL;
}

int droce_export_srq(struct ibv_srq *ibsrq, struct droce_dproto_shm *s, int *fd)
{
	struct droce_srq *srq = to_dsrq(ibsrq);

	shm_layout(&srq->shm, srq->ring, srq->ring_len, srq->slot_size, NULL, 0, 0, s);
	*fd = srq->shm.fd;
	return *fd >= 0 ? 0 : -EINVAL;
}

int droce_export_qp(struct ibv_qp *ibqp, struct droce_dproto_shm *s, int *fd)
{
	struct droce_qp *qp = to_dqp(ibqp);

	shm_layout(&qp->shm, qp->sq_ring, qp->sq_len, qp->sq_slot_size, qp->rq_ring, qp->rq_len,
		   qp->rq_slot_size, s);
	*fd = qp->shm.fd;
	return *fd >= 0 ? 0 : -EINVAL;
}

int droce_export_channel(struct ibv_comp_channel *channel)
{
	struct droce_comp_channel *ch = to_dch(channel);
	int p[2], old;

	/*
	 * Not the eventfd: every holder of an eventfd shares its count and its
	 * O_NONBLOCK, so an application could park the count at 2^64 - 2 (or clear
	 * O_NONBLOCK) and the engine lcore's next write would block for good. A pipe
	 * whose write end only droced holds, non-blocking: the application's end can
	 * only be read, and a full pipe is a count dropped, never a wait.
	 */
	if (pipe2(p, O_CLOEXEC) != 0)
		return -errno;
	if (fcntl(p[1], F_SETFL, O_NONBLOCK) != 0) {
		int err = errno;

		close(p[0]);
		close(p[1]);
		return -err;
	}
	pthread_mutex_lock(&ch->lock);
	old = channel->fd;
	channel->fd = p[1]; /* no CQ uses the channel yet: the engine has not seen the old one */
	ch->exported = true;
	pthread_mutex_unlock(&ch->lock);
	close(old);
	return p[0];
}

void droce_export_qp_privileged(struct ibv_qp *qp, bool privileged)
{
	to_dqp(qp)->privileged = privileged ? 1 : 0;
}

uint32_t droce_export_ah_id(struct ibv_ah *ah)
{
	return to_dah(ah)->id;
}

uint32_t droce_export_mw_handle(struct ibv_mw *mw)
{
	return to_dmw(mw)->handle;
}

unsigned int droce_export_async_pending(struct ibv_context *ctx)
{
	struct droce_context *c = to_dctx(ctx);
	unsigned int n;

	pthread_mutex_lock(&c->async_lock);
	n = c->async_count;
	pthread_mutex_unlock(&c->async_lock);
	return n;
}

void droce_export_device(struct ibv_device *dev, struct droce_dproto_device *out)
{
	const struct droce_device *d = to_ddev(dev);
	bool up = false;
	uint32_t speed = 0;

	memset(out, 0, sizeof(*out));
	memcpy(out->name, d->port.name, sizeof(out->name));
	out->name[sizeof(out->name) - 1] = '\0';
	memcpy(out->mac, d->port.mac, 6);
	out->eth_mtu = d->port.eth_mtu;
	if (droce_embedded_port(d, &up, &speed) && d->port.speed_mbps != 0)
		speed = d->port.speed_mbps; /* configured speeds win, as ibv_query_port() says */
	out->link_up = up;
	out->speed_mbps = speed;
	out->n_ipv4 =
		d->port.n_ipv4 < DROCE_DPROTO_ADDR_MAX ? d->port.n_ipv4 : DROCE_DPROTO_ADDR_MAX;
	memcpy(out->ipv4, d->port.ipv4, sizeof(out->ipv4[0]) * out->n_ipv4);
	out->n_ipv6 =
		d->port.n_ipv6 < DROCE_DPROTO_ADDR_MAX ? d->port.n_ipv6 : DROCE_DPROTO_ADDR_MAX;
	memcpy(out->ipv6, d->port.ipv6, sizeof(out->ipv6[0]) * out->n_ipv6);
}
