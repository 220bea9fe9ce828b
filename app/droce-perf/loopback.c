/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --loopback: both ends in this process. Unless the user named devices,
 * DROCE_DEVICES gets two devices joined back to back by a link, so the first
 * ibv_open_device() starts droce's embedded engine with the two ports
 * connected; the ends then exchange their addresses by assignment. With
 * DROCE_DAEMON set the devices are droced's, which droced must have joined by
 * a link (doc/daemon.md): this process starts no engine and sets nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_perf.h"

#define LOOPBACK_DEVICES                                                \
	"droce0:mac=02:d0:0c:00:00:01,ip=10.99.0.1,mtu=4200,link=perf " \
	"droce1:mac=02:d0:0c:00:00:02,ip=10.99.0.2,mtu=4200,link=perf"
#define BUF_CAP (4u << 20) /* messages per QP buffer when they are small */
#define LAT_SQ  128        /* latency tests: send queue, moderated */
#define LAT_RQ  16

/*
 * Queue depths and each QP's buffer: room for the messages in flight (bw), or
 * a send half and a receive half (lat, and bw with -b, where each end sends
 * from one half while the other end's messages land in the other); never
 * less than the page size the ends agreed on, which perftest may use from the
 * address it was given.
 */
void perf_size_queues(struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	size_t max = (o->all ? o->max_size : o->size ? o->size : 4096) + PERF_UD_GRH;
	size_t len;

	if (o->kind == PERF_LAT) {
		c->tx_depth = LAT_SQ;
		c->rx_depth = LAT_RQ;
		len = 2 * (max > c->cycle ? max : c->cycle);
	} else {
		unsigned int depth = o->tx_depth > o->rx_depth ? o->tx_depth : o->rx_depth;

		c->tx_depth = o->tx_depth;
		c->rx_depth = o->verb == PERF_SEND ? o->rx_depth : 1;
		len = max * depth;
		if (len > BUF_CAP)
			len = max > BUF_CAP ? max : BUF_CAP;
		if (len < c->cycle)
			len = c->cycle;
	}
	c->buf_len = (len + 63) / 64 * 64;
	/* write_lat: the peer writes into the receive half (lat.c) */
	if (o->kind == PERF_LAT && o->verb == PERF_WRITE)
		c->vaddr_off = c->buf_len / 2;
	/* -b: the peer's messages land in (or its READs read) the second half (bw.c) */
	if (o->kind == PERF_BW && o->bidirectional) {
		c->vaddr_off = c->buf_len;
		c->buf_len *= 2;
	}
	c->max_inline = (unsigned int)o->inline_size;
}

/* droced runs the engine and lists the devices (DROCE_DAEMON: unset, empty or 0 = not). */
static bool daemon_mode(void)
{
	const char *d = getenv("DROCE_DAEMON");

	return d != NULL && d[0] != '\0' && strcmp(d, "0") != 0;
}

/* The two devices: -d names the first (default the first listed), the second is the next other. */
static int pick_devices(struct perf_ctx *c, struct ibv_device **list, int n,
			struct ibv_device *dev[2])
{
	int first = -1;

	for (int i = 0; i < n && c->o->ib_dev != NULL; i++)
		if (strcmp(ibv_get_device_name(list[i]), c->o->ib_dev) == 0)
			first = i;
	if (c->o->ib_dev == NULL)
		first = 0;
	if (first < 0) {
		fprintf(stderr, "droce-perf: no device %s\n", c->o->ib_dev);
		return -1;
	}
	if (n < 2 && daemon_mode()) {
		fprintf(stderr,
			"droce-perf: --loopback needs two devices joined by a link: droced "
			"at DROCE_DAEMON serves %d (give it two -d with link=NAME on both; "
			"see doc/daemon.md)\n",
			n);
		return -1;
	}
	if (n < 2) {
		fprintf(stderr, "droce-perf: --loopback needs two droce devices joined by a link "
				"(DROCE_DEVICES with link=NAME on both; see doc/verbs.md)\n");
		return -1;
	}
	dev[0] = list[first];
	dev[1] = list[first == 0 ? 1 : 0];
	c->dev_name[0] = strdup(ibv_get_device_name(dev[0]));
	c->dev_name[1] = strdup(ibv_get_device_name(dev[1]));
	return 0;
}

/* Path MTU: -m, but not above either port's active MTU (perftest says so and lowers it). */
static void choose_mtu(struct perf_ctx *c)
{
	enum ibv_mtu active = c->end[0].port.active_mtu < c->end[1].port.active_mtu
				      ? c->end[0].port.active_mtu
				      : c->end[1].port.active_mtu;

	c->mtu = active;
	if (c->o->mtu == 0)
		return;
	c->mtu = perf_mtu_enum(c->o->mtu);
	if (c->mtu > active) {
		printf(" Requested mtu is higher than active mtu \n"
		       " Changing to active mtu - %d\n",
		       128 << active);
		c->mtu = active;
	}
}

int perf_loopback_open(struct perf_ctx *c)
{
	struct ibv_device **list, *dev[2];
	struct ibv_device_attr da;
	int n, rc = -1;

	/* before the first verbs call: it reads DROCE_DEVICES once (droced: its own devices) */
	if (!daemon_mode() && getenv("DROCE_DEVICES") == NULL)
		setenv("DROCE_DEVICES", LOOPBACK_DEVICES, 1);
	list = ibv_get_device_list(&n);
	if (list == NULL) {
		fprintf(stderr, "droce-perf: ibv_get_device_list: %s\n", strerror(errno));
		return -1;
	}
	if (pick_devices(c, list, n, dev) != 0)
		goto out_free_list;
	c->role = PERF_ROLE_LOOPBACK;
	c->me = 0;
	c->cycle = (unsigned int)sysconf(_SC_PAGESIZE);
	perf_size_queues(c);
	c->outs = c->o->outs;
	for (int i = 0; i < 2; i++) {
		if (perf_end_open_device(c, &c->end[i], dev[i]) != 0)
			goto out_free_list;
		if (ibv_query_device(c->end[i].ctx, &da) == 0 &&
		    c->outs > (unsigned int)da.max_qp_rd_atom)
			c->outs = (unsigned int)da.max_qp_rd_atom;
	}
	for (int i = 0; i < 2; i++)
		if (perf_end_create(c, &c->end[i]) != 0)
			goto out_free_list;
	if (perf_end_wait_active(&c->end[0], c->o->ib_port) != 0 ||
	    perf_end_wait_active(&c->end[1], c->o->ib_port) != 0)
		goto out_free_list;
	choose_mtu(c);
	perf_leave_engine_cpu();
	if (c->o->qp_type == IBV_QPT_UD && c->o->size > (128u << c->mtu) && !c->o->all) {
		fprintf(stderr, "droce-perf: a UD message fits one packet: -s up to %u\n",
			128u << c->mtu);
		goto out_free_list;
	}
	c->peer = c->end[1].local;
	if (perf_end_connect(c, &c->end[0], c->end[1].local) != 0 ||
	    perf_end_connect(c, &c->end[1], c->end[0].local) != 0)
		goto out_free_list;
	rc = 0;
out_free_list:
	ibv_free_device_list(list);
	return rc;
}

void perf_loopback_close(struct perf_ctx *c)
{
	perf_end_close(c, &c->end[0]);
	perf_end_close(c, &c->end[1]);
	free((char *)c->dev_name[0]);
	free((char *)c->dev_name[1]);
}
