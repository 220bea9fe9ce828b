#!/usr/bin/env bash
# droce's main job on its embedded default: live RDMA traffic between two droce
# devices joined back to back inside one process (droce-perf --loopback), RDMA
# WRITE bandwidth and latency for every message size from 2 bytes to 8 MiB in
# perftest's format, kept as JSON and drawn into build/droce-perf.png
# (tools/plot-perf.py); then the wire-format job: the Linux Soft-RoCE captures
# dissected and ICRC-checked by droce's own parser.
set -euo pipefail
. "$(dirname "$0")/setup.sh"
droce_setup
perf=$DROCE_BUILD/app/droce-perf/droce-perf
pcap=$DROCE_BUILD/app/droce-pcap/droce-pcap
data=$DROCE_ROOT/tests/data
# perftest's default iterations (5000 bw, 1000 lat) over all 23 sizes: about
# 15 s on a 2-CPU machine with hugepages.
"$perf" write_bw --loopback -F --report_gbits -a --out_json "$DROCE_BUILD/droce-perf-write_bw.json"
"$perf" write_lat --loopback -F -a --out_json "$DROCE_BUILD/droce-perf-write_lat.json"
png=$(/usr/bin/python3 "$DROCE_ROOT/tools/plot-perf.py" "$DROCE_BUILD/droce-perf-write_bw.json" \
	"$DROCE_BUILD/droce-perf-write_lat.json" "$DROCE_BUILD/droce-perf.png")
echo "bandwidth and latency against message size: $png"
"$pcap" --summary-only "$data"/*.pcap | tail -n 1
