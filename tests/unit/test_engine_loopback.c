/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QPs of one port talking to each other (tests/common/sweep.c's loopback set-up:
 * two contexts of droce0): the engine hands a frame for the port's own MAC to
 * its own RX instead of the link, which never brings a frame back to its
 * sender. RC and UD messages arrive, nothing crosses the link, the pools end
 * where they started.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "droce_engine.h"
#include "sweep.h"

Test(engine_loopback, qps_of_one_port_reach_each_other, .timeout = 60)
{
	static struct sw_run r;
	struct droce_engine_port_stats link_end;
	struct droce_engine_stats es;

	sw_loopback_setup(&r, sw_eth_mtu(IBV_MTU_1024), 64 << 10);
	for (enum sw_kind k = 0; k < SW_KINDS; k++) {
		sw_connect(&r, k, NULL);
		snprintf(r.what, sizeof(r.what), "%s between two QPs of droce0", sw_kind_name[k]);
		sw_send_once(&r, k, k == SW_UD ? 100 : 3 * r.pmtu + 1);
		sw_quiet(&r, k);
	}
	droce_engine_stats_get(&es);
	/* RC: 4 packets and an ACK; UC: 4; UD: 1 */
	cr_expect_geq(es.loopback_pkts, 10, "%llu frames looped back",
		      (unsigned long long)es.loopback_pkts);
	cr_expect_eq(es.loopback_dropped, 0);
	cr_assert_eq(droce_engine_port_stats("droce1", &link_end), 0);
	cr_expect_eq(link_end.rx_pkts, 0, "%llu frames crossed the link",
		     (unsigned long long)link_end.rx_pkts);
	sw_finish(&r);
}
