#!/usr/bin/env bash
# A server and a client program of Debian's rdmacm-utils (udaddy, rdma_server/rdma_client ...)
# in two processes on droce's drop-ins, each with its embedded engine, joined by memif: both
# must end with exit status 0. The server has 10.0.0.1 and fd00::1, the client 10.0.0.2 and
# fd00::2; "@PORT@" in either command becomes a free-looking port.
# Arguments: the drop-in folder, the server's command, the client's command.
set -euo pipefail
dropin=$1
server_cmd=$2
client_cmd=$3
prog=${server_cmd%% *}
command -v "$prog" >/dev/null || { echo "$prog is not installed (rdmacm-utils)"; exit 77; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
memif="socket=$work/memif.sock+socket-abstract=no"
port=$((20000 + RANDOM % 20000))
export LD_LIBRARY_PATH=$dropin
DROCE_DEVICES="droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,ip=fd00::1,vdev=net_memif0+role=server+$memif" \
	timeout 60 ${server_cmd//@PORT@/$port} > "$work/server.txt" 2>&1 &
server=$!
sleep 2
rc=0
DROCE_DEVICES="droce0:mac=02:00:00:00:00:02,ip=10.0.0.2,ip=fd00::2,vdev=net_memif1+role=client+$memif" \
	timeout 50 ${client_cmd//@PORT@/$port} > "$work/client.txt" 2>&1 || rc=$?
wait $server || rc=$?
echo "== server: $server_cmd"; cat "$work/server.txt"
echo "== client: $client_cmd"; cat "$work/client.txt"
[ "$rc" -eq 0 ] || { echo "exit status $rc"; exit 1; }
echo "$prog on droce's librdmacm: PASS"
