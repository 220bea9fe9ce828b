#!/usr/bin/env bash
# Regenerate the independent decoder's view of every capture in tests/data:
# tshark's InfiniBand dissector fields, one line per RoCEv2 frame. The wire
# tests compare lib/wire's decoding against these files field by field.
# Needs tshark (Debian package tshark); the output is committed as test data.
set -euo pipefail
cd "$(dirname "$0")/../tests/data"
fields=(frame.number udp.srcport udp.length infiniband.bth.opcode infiniband.bth.se
	infiniband.bth.m infiniband.bth.padcnt infiniband.bth.tver infiniband.bth.p_key
	infiniband.bth.destqp infiniband.bth.a infiniband.bth.psn infiniband.deth.q_key
	infiniband.deth.srcqp infiniband.reth.va infiniband.reth.r_key infiniband.reth.dmalen
	infiniband.atomiceth.swapdt infiniband.atomiceth.cmpdt infiniband.aeth.syndrome
	infiniband.aeth.msn infiniband.atomicacketh.origremdt infiniband.immdt infiniband.ieth
	infiniband.invariant.crc)
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
for pcap in *.pcap; do
	tshark -r "$pcap" -Y 'udp.dstport == 4791' -T fields -E header=y -E separator=/t \
		-E occurrence=f "${args[@]}" > "${pcap%.pcap}.tshark.tsv"
done
