/* SPDX-License-Identifier: BSD-3-Clause */
/* Protection domains: an id every object and key is checked against. */
#include <errno.h>
#include <stdlib.h>

#include "verbs_priv.h"

static uint32_t next_pd_id = 1;

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct droce_context *c = to_dctx(context);
	struct droce_pd *pd = calloc(1, sizeof(*pd));
	int rc;

	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&c->lock);
	pd->id = __atomic_fetch_add(&next_pd_id, 1, __ATOMIC_RELAXED);
	c->pd_count++;
	pthread_mutex_unlock(&c->lock);
	pd->ibpd.context = context;
	pd->ibpd.handle = pd->id;
	rc = c->ops->alloc_pd(pd);
	if (rc != 0) {
		pthread_mutex_lock(&c->lock);
		c->pd_count--;
		pthread_mutex_unlock(&c->lock);
		free(pd);
		errno = -rc;
		return NULL;
	}
	return &pd->ibpd;
}

int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct droce_pd *pd = to_dpd(ibpd);
	struct droce_context *c = to_dctx(ibpd->context);
	int rc;

	/* libibverbs: EBUSY while objects still use the PD */
	if (__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	rc = c->ops->dealloc_pd(pd);
	if (rc != 0)
		return -rc;
	pthread_mutex_lock(&c->lock);
	c->pd_count--;
	pthread_mutex_unlock(&c->lock);
	free(pd);
	return 0;
}
