#!/usr/bin/env bash
# Regenerate tshark's view of the CM MADs in the captures of tests/data: one line per GSI
# packet (UD SEND to QP1), the MAD common header and CM message fields of tshark's InfiniBand
# dissector. test_wire_mad_captures compares lib/wire's decoding with it field by field.
# Needs tshark (Debian package tshark); the output is committed as test data.
set -euo pipefail
cd "$(dirname "$0")/../tests/data"
fields=(frame.number infiniband.bth.destqp infiniband.deth.q_key
	infiniband.mad.baseversion infiniband.mad.mgmtclass infiniband.mad.classversion
	infiniband.mad.method infiniband.mad.status infiniband.mad.classspecific
	infiniband.mad.transactionid infiniband.mad.attributeid infiniband.mad.attributemodifier
	infiniband.cm.req infiniband.cm.req.serviceid infiniband.cm.req.localcaguid
	infiniband.cm.req.localqkey infiniband.cm.req.localqpn infiniband.cm.req.responderres
	infiniband.cm.req.localeecn infiniband.cm.req.initdepth infiniband.cm.req.remoteeecn
	infiniband.cm.req.remoteresptout infiniband.cm.req.transpsvctype
	infiniband.cm.req.e2eflowctrl infiniband.cm.req.startpsn infiniband.cm.req.localresptout
	infiniband.cm.req.retrcount infiniband.cm.req.pkey infiniband.cm.req.pppmtu
	infiniband.cm.req.rdcexist infiniband.cm.req.rnrretrcount infiniband.cm.req.maxcmretr
	infiniband.cm.req.srq infiniband.cm.req.ext_transport infiniband.cm.req.prim_locallid
	infiniband.cm.req.prim_remotelid infiniband.cm.req.prim_localgid
	infiniband.cm.req.prim_remotegid infiniband.cm.req.prim_localgid_ipv4
	infiniband.cm.req.prim_remotegid_ipv4 infiniband.cm.req.prim_flowlabel
	infiniband.cm.req.prim_pktrate infiniband.cm.req.prim_tfcclass
	infiniband.cm.req.prim_hoplim infiniband.cm.req.prim_sl infiniband.cm.req.prim_subnetlocal
	infiniband.cm.req.prim_localacktout infiniband.cm.req.alt_locallid
	infiniband.cm.req.alt_remotelid infiniband.cm.req.alt_localgid
	infiniband.cm.req.alt_remotegid infiniband.cm.req.alt_flowlabel
	infiniband.cm.req.alt_pktrate infiniband.cm.req.alt_tfcclass infiniband.cm.req.alt_hoplim
	infiniband.cm.req.alt_sl infiniband.cm.req.alt_subnetlocal
	infiniband.cm.req.alt_localacktout infiniband.cm.req.ip_cm.majv
	infiniband.cm.req.ip_cm.minv infiniband.cm.req.ip_cm.ipv infiniband.cm.req.ip_cm.reserved
	infiniband.cm.req.ip_cm.sport infiniband.cm.req.ip_cm.sip4 infiniband.cm.req.ip_cm.dip4
	infiniband.cm.req.ip_cm.sip6 infiniband.cm.req.ip_cm.dip6 infiniband.cm.req.ip_cm.private
	infiniband.cm.rep infiniband.cm.rep.remotecommid infiniband.cm.rep.localqkey
	infiniband.cm.rep.localqpn infiniband.cm.rep.localeecn infiniband.cm.rep.startpsn
	infiniband.cm.rep.respres infiniband.cm.rep.initdepth infiniband.cm.rep.tgtackdelay
	infiniband.cm.rep.failoveracc infiniband.cm.rep.e2eflowctrl infiniband.cm.rep.rnrretrcount
	infiniband.cm.rep.srq infiniband.cm.rep.reserved infiniband.cm.rep.localcaguid
	infiniband.cm.rep.private infiniband.cm.rtu.localcommid infiniband.cm.rtu.remotecommid
	infiniband.cm.rtu.private infiniband.cm.rej.localcommid infiniband.cm.rej.remotecommid
	infiniband.cm.rej.msgrej infiniband.cm.rej.rejinfolen infiniband.cm.rej.reason
	infiniband.cm.rej.ari infiniband.cm.rej.private infiniband.cm.dreq.localcommid
	infiniband.cm.dreq.remotecommid infiniband.cm.req.remoteqpneecn infiniband.cm.dreq.private
	infiniband.cm.drsp.localcommid infiniband.cm.drsp.remotecommid infiniband.cm.drsp.private)
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
# only the captures that hold a MAD get a file
for pcap in *.pcap; do
	out=$(tshark -r "$pcap" -d udp.port==4791,infiniband -Y 'infiniband.bth.destqp == 1' \
		-T fields -E header=y -E separator=/t -E occurrence=f "${args[@]}")
	if [ "$(printf '%s\n' "$out" | wc -l)" -gt 1 ]; then
		printf '%s\n' "$out" > "${pcap%.pcap}.cm.tsv"
	fi
done
