#!/usr/bin/env bash
# droce's main job on its embedded default. Until the transport exists, it is
# the wire-format job: dissect a bundled Linux Soft-RoCE capture with lib/wire,
# verify every ICRC, and summarise every bundled capture.
set -euo pipefail
. "$(dirname "$0")/setup.sh"
droce_setup
pcap=$DROCE_BUILD/app/droce-pcap/droce-pcap
data=$DROCE_ROOT/tests/data
"$pcap" "$data/linux-rxe-rc_pingpong.pcap"
"$pcap" --summary-only "$data"/*.pcap
