/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ports: every droce device DROCE_DEVICES lists, opened in order (the
 * first ibv_open_device() starts the embedded engine), numbered from 0 as
 * testpmd numbers its ports, each with a PD and the GID its QPs use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_pmd.h"
#include "droce_wire_pkt.h"

#define PORT_WAIT_NS (10ull * 1000000000ull)

struct pmd_port pmd_ports[PMD_PORTS_MAX];
unsigned int pmd_n_ports;
static struct ibv_device **dev_list;
/* counter ids that are the parser's reasons: RX-errors sums them */
static bool parse_reason[PMD_COUNTERS_MAX];

/* The first IPv4-mapped GID (as perftest picks on Ethernet), else the first. */
static int pick_gid(struct pmd_port *p)
{
	static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	for (int i = 0; i < p->attr.gid_tbl_len; i++) {
		union ibv_gid g;

		if (ibv_query_gid(p->ctx, 1, i, &g) != 0)
			break;
		if (memcmp(g.raw, v4, sizeof(v4)) == 0) {
			p->gid = g;
			return i;
		}
	}
	if (ibv_query_gid(p->ctx, 1, 0, &p->gid) != 0)
		return pmd_err("port %u (%s): ibv_query_gid: %s", p->id, p->name, strerror(errno));
	return 0;
}

static int wait_active(struct pmd_port *p, uint64_t deadline)
{
	struct droce_engine_port_info info;

	if (!droce_engine_running() || droce_engine_port_info(p->name, &info) != 0)
		return pmd_err("port %u (%s) is not ACTIVE: droce runs a port only when its "
			       "DROCE_DEVICES entry has vdev= or link= (doc/verbs.md)",
			       p->id, p->name);
	for (;;) {
		if (ibv_query_port(p->ctx, 1, &p->attr) != 0)
			return pmd_err("port %u (%s): ibv_query_port: %s", p->id, p->name,
				       strerror(errno));
		if (p->attr.state == IBV_PORT_ACTIVE)
			return 0;
		if (pmd_now_ns() > deadline || pmd_interrupted)
			return pmd_err("port %u (%s) is not ACTIVE after %llu s", p->id, p->name,
				       PORT_WAIT_NS / 1000000000ull);
		pmd_sleep_ns(1000000);
	}
}

static void find_parse_reasons(void)
{
	for (unsigned int s = DROCE_PARSE_NOT_ROCE + 1; s < DROCE_PARSE_STATUS_COUNT; s++) {
		int id = droce_counter_find(droce_parse_status_name[s]);

		if (id >= 0 && id < PMD_COUNTERS_MAX)
			parse_reason[id] = true;
	}
}

int pmd_ports_open(void)
{
	uint64_t deadline;
	int n;

	dev_list = ibv_get_device_list(&n);
	if (dev_list == NULL)
		return pmd_err("ibv_get_device_list: %s", strerror(errno));
	if (n == 0)
		return pmd_err("no droce device: DROCE_DEVICES lists none (doc/verbs.md)");
	if (n > PMD_PORTS_MAX)
		n = PMD_PORTS_MAX;
	for (int i = 0; i < n; i++) {
		struct pmd_port *p = &pmd_ports[i];

		p->id = (unsigned int)i;
		p->name = ibv_get_device_name(dev_list[i]);
		p->ctx = ibv_open_device(dev_list[i]);
		if (p->ctx == NULL)
			return pmd_err("ibv_open_device(%s): %s", p->name, strerror(errno));
		pmd_n_ports++;
		p->pd = ibv_alloc_pd(p->ctx);
		if (p->pd == NULL)
			return pmd_err("ibv_alloc_pd(%s): %s", p->name, strerror(errno));
	}
	deadline = pmd_now_ns() + PORT_WAIT_NS;
	for (unsigned int i = 0; i < pmd_n_ports; i++) {
		struct pmd_port *p = &pmd_ports[i];

		if (wait_active(p, deadline) != 0)
			return -1;
		p->gid_index = pick_gid(p);
		if (p->gid_index < 0)
			return -1;
		p->shown_ns = pmd_now_ns();
	}
	find_parse_reasons();
	return 0;
}

void pmd_ports_close(void)
{
	for (unsigned int i = 0; i < pmd_n_ports; i++) {
		struct pmd_port *p = &pmd_ports[i];

		if (p->capture[0] != '\0')
			droce_engine_capture(p->name, NULL);
		if (p->pd != NULL)
			ibv_dealloc_pd(p->pd);
		ibv_close_device(p->ctx);
	}
	pmd_n_ports = 0;
	if (dev_list != NULL)
		ibv_free_device_list(dev_list);
	dev_list = NULL;
}

struct pmd_port *pmd_port_get(const char *word)
{
	unsigned long n;
	char *end;

	n = strtoul(word, &end, 10);
	if (*word == '\0' || *end != '\0' || n >= pmd_n_ports) {
		pmd_err("no port %s: the ports are 0 to %u", word, pmd_n_ports - 1);
		return NULL;
	}
	return &pmd_ports[n];
}

unsigned int pmd_ports_select(const char *word, struct pmd_port **out)
{
	struct pmd_port *p;

	if (strcmp(word, "all") == 0) {
		for (unsigned int i = 0; i < pmd_n_ports; i++)
			out[i] = &pmd_ports[i];
		return pmd_n_ports;
	}
	p = pmd_port_get(word);
	if (p == NULL)
		return 0;
	out[0] = p;
	return 1;
}

int pmd_port_snap_read(struct pmd_port *p, struct pmd_port_snap *s)
{
	struct droce_counter c[PMD_COUNTERS_MAX];
	int rc, n;

	memset(s, 0, sizeof(*s));
	rc = droce_engine_port_stats(p->name, &s->st);
	if (rc != 0)
		return pmd_err("port %u (%s): droce_engine_port_stats: %s", p->id, p->name,
			       strerror(-rc));
	n = droce_engine_port_counters(p->name, c, PMD_COUNTERS_MAX);
	if (n < 0)
		return pmd_err("port %u (%s): droce_engine_port_counters: %s", p->id, p->name,
			       strerror(-n));
	s->n_ctr = n < PMD_COUNTERS_MAX ? (unsigned int)n : PMD_COUNTERS_MAX;
	for (unsigned int i = 0; i < s->n_ctr; i++) {
		s->ctr[i] = c[i].value;
		if (c[i].id < PMD_COUNTERS_MAX && parse_reason[c[i].id])
			s->rx_errors += c[i].value;
	}
	return 0;
}

uint64_t pmd_delta(uint64_t now, uint64_t base)
{
	/* a count below its zero started again (a new fault injector): all of it is new */
	return now >= base ? now - base : now;
}
