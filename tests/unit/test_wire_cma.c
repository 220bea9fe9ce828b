/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm's IP addressing in CM messages (IBTA annex A11): service IDs of the port spaces, and
 * the 36-byte private-data header, IPv4 and IPv6, with every refusal.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <droce_wire.h>

Test(cma_service_id, port_spaces)
{
	uint16_t ps, port;

	cr_expect_eq(droce_cma_service_id(DROCE_CMA_PS_TCP, 7174), 0x0000000001061c06ull,
		     "TCP port 7174");
	cr_expect_eq(droce_cma_service_id(DROCE_CMA_PS_UDP, 1), 0x0000000001110001ull, "UDP");
	cr_expect_eq(droce_cma_service_id(DROCE_CMA_PS_IB, 0xffff), 0x00000000013fffffull, "IB");
	cr_assert_eq(droce_cma_service_id_parse(0x0000000001061c06ull, &ps, &port), 0);
	cr_expect_eq(ps, DROCE_CMA_PS_TCP, "port space 0x%04x", ps);
	cr_expect_eq(port, 7174, "port %u", port);
	cr_assert_eq(droce_cma_service_id_parse(0x0000000001110035ull, &ps, &port), 0);
	cr_expect_eq(ps, DROCE_CMA_PS_UDP);
	cr_expect_eq(port, 0x35);
}

Test(cma_service_id, other_service_ids_refused)
{
	uint16_t ps = 1, port = 1;

	cr_expect_eq(droce_cma_service_id_parse(0x0000000002061c06ull, &ps, &port), -EINVAL);
	cr_expect_eq(droce_cma_service_id_parse(0x1000000001061c06ull, &ps, &port), -EINVAL);
	cr_expect_eq(droce_cma_service_id_parse(0, &ps, &port), -EINVAL);
	cr_expect_eq(ps, 1, "port space written on refusal");
	cr_expect_eq(port, 1, "port written on refusal");
}

/* The header of the rping capture's REQ (frame 17), as Linux sent it. */
static const uint8_t rping_hdr[DROCE_CMA_HDR_LEN] = {
	0x00, 0x40, 0xd1, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,    0,    0x0a, 0x63,
	0x00, 0x03, 0,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a, 0x63, 0x00, 0x02,
};

Test(cma_hdr, ipv4_as_linux_sends_it)
{
	struct droce_cma_fields f;
	uint8_t out[DROCE_CMA_HDR_LEN];
	static const uint8_t src[4] = {10, 99, 0, 3}, dst[4] = {10, 99, 0, 2};

	cr_assert_eq(droce_cma_hdr_decode(rping_hdr, sizeof(rping_hdr), &f), 0);
	cr_expect_eq(f.version, 0, "version");
	cr_expect_eq(f.ip_version, 4, "IP version");
	cr_expect_eq(f.resv, 0, "reserved nibble");
	cr_expect_eq(f.port, 0xd102, "source port");
	cr_expect_arr_eq(f.src, src, 4, "source address");
	cr_expect_arr_eq(f.dst, dst, 4, "destination address");
	cr_assert_eq(droce_cma_hdr_encode(out, sizeof(out), &f), 0);
	cr_expect_arr_eq(out, rping_hdr, sizeof(out), "re-encoded header differs");
}

Test(cma_hdr, ipv6_round_trip)
{
	struct droce_cma_fields f = {.ip_version = 6, .port = 0xc000}, back;
	uint8_t out[DROCE_CMA_HDR_LEN + 4];

	inet_pton(AF_INET6, "fd00::3", f.src);
	inet_pton(AF_INET6, "fd00::2", f.dst);
	memset(out, 0xaa, sizeof(out));
	cr_assert_eq(droce_cma_hdr_encode(out, sizeof(out), &f), 0);
	cr_expect_eq(out[0], 0x00, "version byte");
	cr_expect_eq(out[1], 0x60, "IP version byte");
	cr_expect_eq(out[2], 0xc0, "port, high byte");
	cr_expect_eq(out[3], 0x00, "port, low byte");
	cr_expect_arr_eq(out + 4, f.src, 16, "source address");
	cr_expect_arr_eq(out + 20, f.dst, 16, "destination address");
	cr_expect_eq(out[DROCE_CMA_HDR_LEN], 0xaa, "byte after the header written");
	cr_assert_eq(droce_cma_hdr_decode(out, DROCE_CMA_HDR_LEN, &back), 0);
	cr_expect_eq(memcmp(&back, &f, sizeof(f)), 0, "decoded fields differ");
}

Test(cma_hdr, refusals)
{
	struct droce_cma_fields f;
	uint8_t h[DROCE_CMA_HDR_LEN];

	cr_expect_eq(droce_cma_hdr_decode(rping_hdr, DROCE_CMA_HDR_LEN - 1, &f), -EMSGSIZE,
		     "35 bytes");
	memcpy(h, rping_hdr, sizeof(h));
	h[0] = 0x10;
	cr_expect_eq(droce_cma_hdr_decode(h, sizeof(h), &f), -EPROTO, "version 1.0");
	memcpy(h, rping_hdr, sizeof(h));
	h[1] = 0x50;
	cr_expect_eq(droce_cma_hdr_decode(h, sizeof(h), &f), -EPROTO, "IP version 5");
	memcpy(h, rping_hdr, sizeof(h));
	h[4] = 1;
	cr_expect_eq(droce_cma_hdr_decode(h, sizeof(h), &f), -EINVAL, "IPv4 source padding");
	memcpy(h, rping_hdr, sizeof(h));
	h[31] = 1;
	cr_expect_eq(droce_cma_hdr_decode(h, sizeof(h), &f), -EINVAL, "IPv4 destination padding");

	memset(&f, 0, sizeof(f));
	f.ip_version = 5;
	cr_expect_eq(droce_cma_hdr_encode(h, sizeof(h), &f), -EINVAL, "encode IP version 5");
	f.ip_version = 4;
	f.resv = 16;
	cr_expect_eq(droce_cma_hdr_encode(h, sizeof(h), &f), -EINVAL, "reserved nibble 16");
	f.resv = 0;
	cr_expect_eq(droce_cma_hdr_encode(h, DROCE_CMA_HDR_LEN - 1, &f), -ENOSPC, "35 bytes");
}
