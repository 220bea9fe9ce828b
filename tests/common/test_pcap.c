/* SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>

#include "droce_test.h"

const char *const droce_test_captures[] = {
	"linux-rxe-atomic_cs.pcap",
	"linux-rxe-atomic_fa.pcap",
	"linux-rxe-ipv6_rc_pingpong.pcap",
	"linux-rxe-lossy_read_bw-head.pcap",
	"linux-rxe-lossy_write_bw-head.pcap",
	"linux-rxe-rc_pingpong.pcap",
	"linux-rxe-read_bw-head.pcap",
	"linux-rxe-reorder_send_bw-head.pcap",
	"linux-rxe-rping_cm.pcap",
	"linux-rxe-send_lat_inl.pcap",
	"linux-rxe-srq_pingpong.pcap",
	"linux-rxe-uc_pingpong.pcap",
	"linux-rxe-ud_pingpong.pcap",
	"linux-rxe-write_bw-head.pcap",
	"linux-rxe-write_lat_v6.pcap",
	NULL,
};

const char *droce_test_data(const char *name)
{
	static char path[4096];
	const char *dir = getenv("DROCE_TEST_DATA");

	cr_assert_not_null(dir, "DROCE_TEST_DATA is not set (run the tests through meson)");
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

uint64_t droce_test_pcap_foreach(const char *name, droce_test_frame_fn fn, void *arg)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t n = 0;
	pcap_t *p;
	int rc;

	p = pcap_open_offline(droce_test_data(name), err);
	cr_assert_not_null(p, "cannot open %s: %s", name, err);
	cr_assert_eq(pcap_datalink(p), DLT_EN10MB, "%s is not an Ethernet capture", name);
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		cr_assert_eq(h->caplen, h->len, "%s frame %llu was cut by the snap length", name,
			     (unsigned long long)n + 1);
		fn(++n, data, h->caplen, arg);
	}
	cr_assert_eq(rc, PCAP_ERROR_BREAK, "%s: %s", name, pcap_geterr(p));
	pcap_close(p);
	return n;
}
