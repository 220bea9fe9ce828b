#!/usr/bin/env bash
# droce's main job on its embedded default: live RDMA traffic between two droce
# devices joined back to back inside one process (droce-perf --loopback), RDMA
# WRITE bandwidth and latency in perftest's format; then the wire-format job:
# a Linux Soft-RoCE capture dissected and ICRC-checked by droce's own parser.
set -euo pipefail
. "$(dirname "$0")/setup.sh"
droce_setup
perf=$DROCE_BUILD/app/droce-perf/droce-perf
pcap=$DROCE_BUILD/app/droce-pcap/droce-pcap
data=$DROCE_ROOT/tests/data
"$perf" write_bw --loopback -F --report_gbits
"$perf" write_lat --loopback -F
"$pcap" --summary-only "$data"/*.pcap | tail -n 1
