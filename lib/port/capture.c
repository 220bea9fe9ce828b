/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port capture (droce_capture.h): the lcore copies frames into a byte ring, a writer
 * thread turns them into pcap records. A record is a header (lengths and the time) and
 * the frame's bytes, 8-byte aligned and contiguous in the ring: a record that would
 * cross the ring's end starts again at its beginning, after a pad record (or a gap too
 * short for a header) that the writer skips.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "droce_capture.h"

#define REC_PAD   UINT32_MAX /* caplen of a pad record: skip to the ring's start */
#define IDLE_WAIT 1000       /* us the writer sleeps when the ring is empty */

struct rec {
	uint32_t len;    /* the frame's length */
	uint32_t caplen; /* bytes recorded, or REC_PAD */
	uint64_t ts_ns;  /* since the epoch */
};

struct droce_capture {
	/* the lcore's */
	alignas(RTE_CACHE_LINE_SIZE) uint64_t head; /* bytes produced, free running */
	uint64_t frames, dropped;
	uint64_t tsc_base, ns_base;
	double ns_per_tsc;
	/* the writer's */
	alignas(RTE_CACHE_LINE_SIZE) uint64_t tail; /* bytes consumed, free running */
	uint64_t written;
	bool stop;
	pthread_t thread;
	pcap_t *pcap;
	pcap_dumper_t *dumper;
	/* fixed */
	alignas(RTE_CACHE_LINE_SIZE) uint32_t size;
	uint8_t *ring;
};

static uint32_t rec_bytes(uint32_t caplen)
{
	return (uint32_t)RTE_ALIGN_CEIL(sizeof(struct rec) + caplen, 8);
}

void droce_capture_frame(struct droce_capture *c, const struct rte_mbuf *m)
{
	uint32_t caplen = RTE_MIN(m->pkt_len, DROCE_CAPTURE_SNAPLEN), need = rec_bytes(caplen);
	/* pairs with the writer's release store of tail: the bytes before it are free again */
	uint64_t tail = __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE), head = c->head;
	uint32_t off = (uint32_t)(head & (c->size - 1)), to_end = c->size - off;
	uint32_t skip = to_end < need ? to_end : 0;
	struct rec *r;
	const void *data;

	c->frames++;
	if (head + skip + need - tail > c->size) {
		c->dropped++;
		return;
	}
	if (skip != 0) {
		if (to_end >= sizeof(struct rec))
			((struct rec *)(c->ring + off))->caplen = REC_PAD;
		head += skip;
		off = 0;
	}
	r = (struct rec *)(c->ring + off);
	r->len = m->pkt_len;
	r->caplen = caplen;
	r->ts_ns = c->ns_base +
		   (uint64_t)((double)(rte_get_tsc_cycles() - c->tsc_base) * c->ns_per_tsc);
	data = rte_pktmbuf_read(m, 0, caplen, r + 1);
	if (data != NULL && data != (const void *)(r + 1))
		memcpy(r + 1, data, caplen);
	/* pairs with the writer's acquire load of head: the record is complete */
	__atomic_store_n(&c->head, head + need, __ATOMIC_RELEASE);
}

/* Write the records between tail and head; the new tail. */
static uint64_t drain(struct droce_capture *c, uint64_t tail, uint64_t head)
{
	while (tail != head) {
		uint32_t off = (uint32_t)(tail & (c->size - 1)), to_end = c->size - off;
		const struct rec *r = (const struct rec *)(c->ring + off);
		struct pcap_pkthdr h;

		if (to_end < sizeof(struct rec) || r->caplen == REC_PAD) {
			tail += to_end;
			continue;
		}
		h.ts.tv_sec = (time_t)(r->ts_ns / 1000000000u);
		h.ts.tv_usec = (suseconds_t)(r->ts_ns % 1000000000u); /* ns: a nanosecond file */
		h.caplen = r->caplen;
		h.len = r->len;
		pcap_dump((u_char *)c->dumper, &h, (const u_char *)(r + 1));
		c->written++;
		tail += rec_bytes(r->caplen);
	}
	return tail;
}

static void *writer(void *arg)
{
	struct droce_capture *c = arg;
	uint64_t tail = c->tail;

	for (;;) {
		bool stop = __atomic_load_n(&c->stop, __ATOMIC_ACQUIRE);
		/* pairs with the lcore's release store of head */
		uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);

		if (head != tail) {
			tail = drain(c, tail, head);
			/* pairs with the lcore's acquire load of tail: the space may be reused */
			__atomic_store_n(&c->tail, tail, __ATOMIC_RELEASE);
			continue;
		}
		if (stop)
			break;
		pcap_dump_flush(c->dumper);
		usleep(IDLE_WAIT);
	}
	return NULL;
}

int droce_capture_open(const char *path, uint32_t ring_bytes, struct droce_capture **out)
{
	struct droce_capture *c;
	struct timespec now;
	int rc;

	if (path == NULL || path[0] == '\0' || out == NULL)
		return -EINVAL;
	if (ring_bytes == 0)
		ring_bytes = DROCE_CAPTURE_RING_DEFAULT;
	if (!rte_is_power_of_2(ring_bytes) || ring_bytes < (64u << 10) || ring_bytes > (1u << 30))
		return -EINVAL;
	c = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(sizeof(*c), RTE_CACHE_LINE_SIZE));
	if (c == NULL)
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	c->size = ring_bytes;
	c->ring = aligned_alloc(RTE_CACHE_LINE_SIZE, ring_bytes);
	if (c->ring == NULL) {
		rc = -ENOMEM;
		goto out_free;
	}
	c->pcap = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, DROCE_CAPTURE_SNAPLEN,
						       PCAP_TSTAMP_PRECISION_NANO);
	if (c->pcap == NULL) {
		rc = -ENOMEM;
		goto out_free;
	}
	errno = 0;
	c->dumper = pcap_dump_open(c->pcap, path);
	if (c->dumper == NULL) {
		rc = errno != 0 ? -errno : -EIO;
		goto out_close;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	c->tsc_base = rte_get_tsc_cycles();
	c->ns_base = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	c->ns_per_tsc = 1e9 / (double)rte_get_tsc_hz();
	rc = pthread_create(&c->thread, NULL, writer, c);
	if (rc != 0) {
		rc = -rc;
		pcap_dump_close(c->dumper);
		unlink(path);
		goto out_close;
	}
	*out = c;
	return 0;

out_close:
	pcap_close(c->pcap);
out_free:
	free(c->ring);
	free(c);
	return rc;
}

void droce_capture_stats_get(const struct droce_capture *c, struct droce_capture_stats *st)
{
	st->frames = c->frames;
	st->dropped = c->dropped;
	st->written = c->written;
}

void droce_capture_close(struct droce_capture *c)
{
	if (c == NULL)
		return;
	__atomic_store_n(&c->stop, true, __ATOMIC_RELEASE);
	pthread_join(c->thread, NULL);
	pcap_dump_close(c->dumper);
	pcap_close(c->pcap);
	free(c->ring);
	free(c);
}
