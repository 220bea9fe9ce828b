/* SPDX-License-Identifier: BSD-3-Clause */
/* An application built only with `pkg-config --cflags --libs droce`: it parses a frame it builds.
 */
#include <stdio.h>

#include <droce.h>

int main(void)
{
	struct droce_parse_cfg cfg = DROCE_PARSE_CFG_DEFAULT;
	struct droce_hdr_fields f = {.opcode = DROCE_OP_RC_SEND_ONLY, .pkey = 0xffff, .dqpn = 17};
	struct droce_addr a = {.src_ip = {10, 0, 0, 1},
			       .dst_ip = {10, 0, 0, 2},
			       .ttl = 64,
			       .udp_sport = 0xc000,
			       .udp_dport = DROCE_ROCEV2_UDP_PORT};
	struct droce_pkt pkt;
	uint8_t frame[128];
	ssize_t n = droce_build_frame(frame, sizeof(frame), &a, 0, &f, "ping", 4);

	if (n < 0 || droce_parse(frame, (size_t)n, &cfg, &pkt) != DROCE_PARSE_OK) {
		fprintf(stderr, "consumer: round trip failed\n");
		return 1;
	}
	printf("consumer: %s to QP %u, %u bytes, ICRC ok\n", droce_opcode_table[pkt.opcode].name,
	       pkt.qpn, pkt.payload_len);
	return 0;
}
