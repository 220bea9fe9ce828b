/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour table: a fixed array of slots with open addressing (linear
 * probing, at most half full, backward-shift deletion so that no tombstones
 * build up), the entry states of RFC 4861 7.3.2 and the timers that move them.
 */
#include <errno.h>
#include <string.h>

#include "neigh_priv.h"

#define NO_SLOT UINT32_MAX

static uint32_t ip_hash(const uint8_t ip[DROCE_NEIGH_IP_LEN])
{
	uint64_t a, b;

	memcpy(&a, ip, sizeof(a));
	memcpy(&b, ip + sizeof(a), sizeof(b));
	a ^= b * 0x9e3779b97f4a7c15ull; /* 2^64 / golden ratio */
	a ^= a >> 32;
	a *= 0xbf58476d1ce4e5b9ull;
	a ^= a >> 29;
	return (uint32_t)a;
}

static uint32_t slot_of(const struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN])
{
	uint32_t i = ip_hash(ip) & n->mask;

	/* ends: the table is never more than half full */
	while (n->slot[i].state != DROCE_NEIGH_NONE) {
		if (memcmp(n->slot[i].ip, ip, DROCE_NEIGH_IP_LEN) == 0)
			return i;
		i = (i + 1) & n->mask;
	}
	return NO_SLOT;
}

struct neigh_entry *neigh_find(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN])
{
	uint32_t i = slot_of(n, ip);

	return i == NO_SLOT ? NULL : &n->slot[i];
}

/* Empty slot @p hole, moving back the entries after it that probed past it. */
static void slot_remove(struct droce_neigh *n, uint32_t hole)
{
	uint32_t j = hole;

	for (;;) {
		uint32_t home;

		j = (j + 1) & n->mask;
		if (n->slot[j].state == DROCE_NEIGH_NONE)
			break;
		home = ip_hash(n->slot[j].ip) & n->mask;
		/* an entry whose home lies after the hole (cyclically) must stay */
		if (((j - home) & n->mask) < ((j - hole) & n->mask))
			continue;
		n->slot[hole] = n->slot[j];
		hole = j;
	}
	memset(&n->slot[hole], 0, sizeof(n->slot[hole]));
	n->count--;
}

/* Make sure droce_neigh_pending() looks again at @p when. */
static void timer_arm(struct droce_neigh *n, uint64_t when)
{
	if (when < n->next_due)
		n->next_due = when;
}

/* FAILED entries first, then STALE ones; the least recently updated of them. */
static bool reclaim_one(struct droce_neigh *n)
{
	uint32_t i, victim = NO_SLOT;

	for (i = 0; i <= n->mask; i++) {
		const struct neigh_entry *e = &n->slot[i];
		const struct neigh_entry *v;

		if (e->state != DROCE_NEIGH_FAILED && e->state != DROCE_NEIGH_STALE)
			continue;
		if (victim == NO_SLOT) {
			victim = i;
			continue;
		}
		v = &n->slot[victim];
		if (e->state != v->state ? e->state == DROCE_NEIGH_FAILED : e->updated < v->updated)
			victim = i;
	}
	if (victim == NO_SLOT)
		return false;
	slot_remove(n, victim);
	n->stats.reclaimed++;
	return true;
}

struct neigh_entry *neigh_insert(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN],
				 uint64_t now, bool reclaim)
{
	struct neigh_entry *e;
	uint32_t i;

	if (n->count >= n->cfg.capacity && !(reclaim && reclaim_one(n))) {
		n->stats.table_full++;
		return NULL;
	}
	i = ip_hash(ip) & n->mask;
	while (n->slot[i].state != DROCE_NEIGH_NONE)
		i = (i + 1) & n->mask;
	e = &n->slot[i];
	memset(e, 0, sizeof(*e));
	memcpy(e->ip, ip, DROCE_NEIGH_IP_LEN);
	e->state = DROCE_NEIGH_INCOMPLETE;
	e->expires = NEIGH_NEVER;
	e->updated = now;
	n->count++;
	return e;
}

void neigh_entry_set(struct droce_neigh *n, struct neigh_entry *e,
		     const uint8_t mac[DROCE_ETHER_ADDR_LEN], enum droce_neigh_state state,
		     uint64_t now)
{
	if (!neigh_mac_eq(e->mac, mac)) {
		memcpy(e->mac, mac, DROCE_ETHER_ADDR_LEN);
		n->stats.learned++;
	}
	e->state = (uint8_t)state;
	e->probes = 0;
	e->updated = now;
	e->expires = NEIGH_NEVER;
	if (state == DROCE_NEIGH_REACHABLE) {
		e->expires = now + n->cfg.reachable_us;
		n->stats.confirmed++;
		timer_arm(n, e->expires);
	}
}

/* RFC 4861 7.2.3 (and RFC 826's merge): a new or changed MAC makes the entry STALE. */
static bool learn(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN],
		  const uint8_t mac[DROCE_ETHER_ADDR_LEN], uint64_t now, bool create)
{
	struct neigh_entry *e = neigh_find(n, ip);

	if (e == NULL) {
		if (!create)
			return false;
		e = neigh_insert(n, ip, now, false);
		if (e == NULL)
			return false;
	} else if (e->state == DROCE_NEIGH_STATIC) {
		return false;
	} else if (e->state != DROCE_NEIGH_INCOMPLETE && e->state != DROCE_NEIGH_FAILED &&
		   neigh_mac_eq(e->mac, mac)) {
		return false;
	}
	neigh_entry_set(n, e, mac, DROCE_NEIGH_STALE, now);
	return true;
}

bool neigh_learn_request(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN],
			 const uint8_t mac[DROCE_ETHER_ADDR_LEN], uint64_t now)
{
	return learn(n, ip, mac, now, true);
}

bool neigh_learn_announce(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN],
			  const uint8_t mac[DROCE_ETHER_ADDR_LEN], uint64_t now)
{
	return learn(n, ip, mac, now, false);
}

/* ---- the public table calls */

int droce_neigh_lookup(const struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN],
		       struct droce_neigh_info *info)
{
	const struct neigh_entry *e;
	uint32_t i;

	if (n == NULL || ip == NULL || info == NULL)
		return -EINVAL;
	i = slot_of(n, ip);
	if (i == NO_SLOT)
		return -ENOENT;
	e = &n->slot[i];
	memcpy(info->ip, e->ip, DROCE_NEIGH_IP_LEN);
	memcpy(info->mac, e->mac, DROCE_ETHER_ADDR_LEN);
	info->state = (enum droce_neigh_state)e->state;
	info->probes = e->probes;
	info->last_request = e->last_request;
	info->expires = e->expires;
	info->updated = e->updated;
	return 0;
}

/* RFC 4861 7.2.2: a new resolution; its first request is due at once. */
static void start_incomplete(struct droce_neigh *n, struct neigh_entry *e, uint64_t now)
{
	memset(e->mac, 0, sizeof(e->mac));
	e->state = DROCE_NEIGH_INCOMPLETE;
	e->probes = 0;
	e->expires = now;
	e->updated = now;
	timer_arm(n, now);
}

int droce_neigh_resolve(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN], uint64_t now,
			uint8_t mac[DROCE_ETHER_ADDR_LEN])
{
	struct neigh_entry *e;

	if (n == NULL || ip == NULL || mac == NULL)
		return -EINVAL;
	if (!neigh_ip_is_station(ip) || neigh_ip_is_own(n, ip))
		return -EINVAL;
	e = neigh_find(n, ip);
	switch (e != NULL ? e->state : DROCE_NEIGH_NONE) {
	case DROCE_NEIGH_STALE:
		/* RFC 4861 7.3.3: an entry in use is confirmed by unicast probes */
		e->state = DROCE_NEIGH_PROBE;
		e->probes = 0;
		e->expires = now;
		timer_arm(n, now);
		/* fall through */
	case DROCE_NEIGH_REACHABLE:
	case DROCE_NEIGH_PROBE:
	case DROCE_NEIGH_STATIC:
		memcpy(mac, e->mac, DROCE_ETHER_ADDR_LEN);
		return 0;
	case DROCE_NEIGH_INCOMPLETE:
		return -EAGAIN;
	case DROCE_NEIGH_FAILED:
		if (now - e->updated < n->cfg.retrans_us)
			return -EHOSTUNREACH;
		break;
	default:
		break;
	}
	/* a request is needed: it needs an address of ours to come from */
	if (neigh_src_for(n, ip) == NULL)
		return -EADDRNOTAVAIL;
	if (e == NULL) {
		e = neigh_insert(n, ip, now, true);
		if (e == NULL)
			return -ENOSPC;
	}
	start_incomplete(n, e, now);
	return -EAGAIN;
}

int droce_neigh_add_static(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN],
			   const uint8_t mac[DROCE_ETHER_ADDR_LEN], uint64_t now)
{
	struct neigh_entry *e;

	if (n == NULL || ip == NULL || mac == NULL)
		return -EINVAL;
	if (!neigh_ip_is_station(ip) || neigh_ip_is_own(n, ip) || !neigh_mac_is_unicast(mac))
		return -EINVAL;
	e = neigh_find(n, ip);
	if (e == NULL) {
		e = neigh_insert(n, ip, now, true);
		if (e == NULL)
			return -ENOSPC;
	}
	memcpy(e->mac, mac, DROCE_ETHER_ADDR_LEN);
	e->state = DROCE_NEIGH_STATIC;
	e->probes = 0;
	e->expires = NEIGH_NEVER;
	e->updated = now;
	return 0;
}

int droce_neigh_delete(struct droce_neigh *n, const uint8_t ip[DROCE_NEIGH_IP_LEN])
{
	uint32_t i;

	if (n == NULL || ip == NULL)
		return -EINVAL;
	i = slot_of(n, ip);
	if (i == NO_SLOT)
		return -ENOENT;
	slot_remove(n, i);
	return 0;
}

/* ---- timers */

static void entry_fail(struct droce_neigh *n, struct neigh_entry *e, uint64_t now)
{
	e->state = DROCE_NEIGH_FAILED;
	e->expires = NEIGH_NEVER;
	e->updated = now;
	n->stats.failed++;
}

/*
 * INCOMPLETE and PROBE send a request every retrans_us, max_multicast resp.
 * max_unicast of them, and fail once retrans_us has passed after the last one
 * with no answer (RFC 4861 7.2.2, 7.3.3).
 */
static uint8_t entry_request_limit(const struct droce_neigh *n, const struct neigh_entry *e)
{
	return e->state == DROCE_NEIGH_PROBE ? n->cfg.max_unicast : n->cfg.max_multicast;
}

static void entry_request(struct droce_neigh *n, struct neigh_entry *e, uint64_t now,
			  struct droce_neigh_req *req)
{
	memcpy(req->ip, e->ip, DROCE_NEIGH_IP_LEN);
	req->unicast = e->state == DROCE_NEIGH_PROBE;
	memcpy(req->mac, e->mac, DROCE_ETHER_ADDR_LEN);
	e->probes++;
	e->last_request = now;
	e->expires = now + n->cfg.retrans_us;
	n->stats.requests++;
}

unsigned int droce_neigh_pending(struct droce_neigh *n, uint64_t now, struct droce_neigh_req *reqs,
				 unsigned int max)
{
	uint64_t next = NEIGH_NEVER;
	unsigned int count = 0;
	uint32_t i;

	if (n == NULL || (reqs == NULL && max > 0))
		return 0;
	if (now < n->next_due)
		return 0;
	for (i = 0; i <= n->mask; i++) {
		struct neigh_entry *e = &n->slot[i];

		switch (e->state) {
		case DROCE_NEIGH_REACHABLE:
			/* RFC 4861 7.3.3: ReachableTime without a confirmation makes it STALE */
			if (now >= e->expires) {
				e->state = DROCE_NEIGH_STALE;
				e->expires = NEIGH_NEVER;
				e->updated = now;
			}
			break;
		case DROCE_NEIGH_INCOMPLETE:
		case DROCE_NEIGH_PROBE:
			if (now < e->expires)
				break;
			if (e->probes >= entry_request_limit(n, e))
				entry_fail(n, e, now);
			else if (count < max)
				entry_request(n, e, now, &reqs[count++]);
			else
				next = now; /* due, but no room left: the next call sends it */
			break;
		default:
			continue; /* no timer runs */
		}
		if (e->expires < next) /* NEIGH_NEVER once STALE or FAILED */
			next = e->expires;
	}
	n->next_due = next;
	return count;
}
