/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_resolve_eth_l2_from_gid: the Ethernet address behind a GID. A GID of
 * this port is answered from the port itself; any other is the neighbour
 * table's, ARP for an IPv4-mapped GID and IPv6 neighbour discovery otherwise
 * (doc/neighbours.md): the embedded engine's table, or droced's. The backend
 * answers one step at a time and -EAGAIN while the requests are out; this
 * waits for the answer as the kernel's resolution does, until the table gives
 * up (three requests a second apart) or RESOLVE_WAIT_MS have passed. As in
 * rdma-core, the result is 0 or a negative errno value.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "verbs_priv.h"

/* Longer than the table takes to give up: its own failure is the answer, not this bound. */
#define RESOLVE_WAIT_MS 10000u
/* Between two steps: from 100 us, doubling to 20 ms (an answer on a link takes microseconds). */
#define RESOLVE_POLL_MIN_US 100u
#define RESOLVE_POLL_MAX_US 20000u

static uint64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static void sleep_us(uint32_t us)
{
	struct timespec t = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000};

	nanosleep(&t, NULL);
}

int droce_verbs_resolve_l2_step(struct ibv_context *context, const union ibv_gid *gid,
				uint8_t mac[6])
{
	struct droce_context *c = to_dctx(context);
	const struct droce_device *d = c->dev;

	for (unsigned int i = 0; i < d->gid_count; i++) {
		if (memcmp(&d->gid[i], gid, sizeof(*gid)) == 0) {
			memcpy(mac, d->port.mac, 6);
			return 0;
		}
	}
	return c->ops->resolve_l2(c, gid, mac);
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
				uint8_t eth_mac[6], uint16_t *vid)
{
	const struct droce_device *d = to_dctx(context)->dev;
	uint64_t until = now_us() + RESOLVE_WAIT_MS * 1000u;
	uint32_t pause = RESOLVE_POLL_MIN_US;
	int rc;

	/* rdma-core returns these negative (-EINVAL, -EHOSTUNREACH), unlike most verbs */
	if (attr == NULL || eth_mac == NULL || attr->port_num != 1 || !attr->is_global ||
	    attr->grh.sgid_index >= d->gid_count)
		return -EINVAL;
	for (;;) {
		rc = droce_verbs_resolve_l2_step(context, &attr->grh.dgid, eth_mac);
		if (rc != -EAGAIN)
			break;
		if (now_us() >= until) {
			rc = -EHOSTUNREACH;
			break;
		}
		sleep_us(pause);
		if (pause < RESOLVE_POLL_MAX_US)
			pause *= 2;
	}
	if (rc == 0 && vid != NULL)
		*vid = 0xffff; /* droce ports are untagged; a NULL vid is not asked for */
	return rc;
}
