/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A droce port on the af_packet PMD (how droce meets a kernel interface, e.g. the
 * veth of the Linux Soft-RoCE interop suite): af_packet copies each received frame
 * from a 2 KiB ring slot into one mbuf, so the port's mbufs must hold a whole slot
 * even when the MTU is smaller. The interface is the loopback of a network
 * namespace private to the test process; without the right to make one the test
 * is skipped.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <droce_port.h>
#include <droce_wire.h>
#include <droce_wire_mbuf.h>

#include "droce_test.h"

/* Criterion forks per test: the namespace is this test process's alone. */
static bool private_loopback_up(void)
{
	struct ifreq ifr = {.ifr_name = "lo"};
	int s;
	bool ok;

	if (unshare(CLONE_NEWNET) != 0)
		return false;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return false;
	ok = ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
	ifr.ifr_flags |= IFF_UP;
	ok = ok && ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
	close(s);
	return ok;
}

static struct droce_port port;

static void open_port(uint32_t mtu)
{
	struct droce_port_conf conf = {.device = "net_af_packet0,iface=lo",
				       .nb_queues = 1,
				       .nb_mbufs = 1023,
				       .mtu = mtu,
				       .socket = SOCKET_ID_ANY};

	if (!private_loopback_up())
		cr_skip_test("no network namespace of our own (needs CAP_SYS_ADMIN): %s",
			     strerror(errno));
	droce_test_eal_init("port_af_packet");
	cr_assert_eq(droce_port_open(&port, &conf), 0, "open net_af_packet0 at MTU %u", mtu);
}

static void close_port(void)
{
	droce_port_close(&port);
	droce_test_eal_fini();
}

Test(port_af_packet, opens_at_the_default_mtu)
{
	open_port(1500);
	cr_expect_eq(port.mtu, 1500);
	cr_expect(port.started);
	close_port();
}

Test(port_af_packet, mbufs_hold_a_ring_frame)
{
	open_port(1500);
	cr_expect_geq(rte_pktmbuf_data_room_size(port.pool), RTE_MBUF_DEFAULT_BUF_SIZE,
		      "data room %u", rte_pktmbuf_data_room_size(port.pool));
	close_port();
}

Test(port_af_packet, opens_at_a_small_mtu)
{
	open_port(576);
	cr_expect_eq(port.mtu, 576);
	close_port();
}

/* What goes out on the loopback comes back in: af_packet sees it on its RX ring. */
Test(port_af_packet, frame_comes_back)
{
	static const struct droce_addr addr = {.src_ip = {10, 0, 0, 1},
					       .dst_ip = {10, 0, 0, 2},
					       .ttl = 64,
					       .udp_sport = 0xc000,
					       .udp_dport = 4791};
	struct droce_hdr_fields f = {.opcode = DROCE_OP_RC_SEND_ONLY, .pkey = 0xffff, .dqpn = 17};
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	static uint8_t payload[1024];
	struct rte_mbuf *m, *got[4];
	struct droce_pkt pkt;
	uint16_t n = 0, i;
	uint8_t *p;
	ssize_t len;
	int tries;

	memset(payload, 0x5a, sizeof(payload));
	open_port(1500);
	m = rte_pktmbuf_alloc(port.pool);
	cr_assert_not_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, 1400);
	cr_assert_not_null(p);
	len = droce_build_frame(p, 1400, &addr, 1, &f, payload, sizeof(payload));
	cr_assert_gt(len, 0);
	rte_pktmbuf_trim(m, (uint16_t)(1400 - len));
	droce_port_tx(&port, 0, m);
	cr_assert_eq(droce_port_tx_flush(&port, 0), 1);
	/* the kernel delivers it asynchronously: poll a bounded number of times */
	for (tries = 0; tries < 1000 && n == 0; tries++) {
		n = droce_port_rx(&port, 0, got, 4);
		if (n == 0)
			usleep(1000);
	}
	cr_assert_geq(n, 1, "nothing came back on the loopback");
	cr_expect_eq(rte_pktmbuf_pkt_len(got[0]), (uint32_t)len);
	cr_expect_eq(droce_parse_mbuf(got[0], &cfg, &pkt), DROCE_PARSE_OK);
	cr_expect_eq(pkt.payload_len, sizeof(payload));
	for (i = 0; i < n; i++)
		rte_pktmbuf_free(got[i]);
	close_port();
}
