#!/usr/bin/env bash
# Debian's unmodified rping, server and client in two processes, each on droce through both
# drop-ins (librdmacm.so.1 and libibverbs.so.1) with its own embedded engine, the two droce
# ports joined by a memif link: the connection is made by droce's CM (REQ, REP, RTU over
# QP1), the pings are RDMA READ/WRITE and SENDs, and both sides disconnect cleanly.
# Arguments: the drop-in folder, the address family (4 or 6), the ping count.
set -euo pipefail
dropin=$1
family=${2:-4}
count=${3:-100}
command -v rping >/dev/null || { echo "rping is not installed (rdmacm-utils)"; exit 77; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
sock=$work/memif.sock
memif="socket=$sock+socket-abstract=no"
if [ "$family" = 6 ]; then
	srv_ip=fd00::1 cli_ip=fd00::2
else
	srv_ip=10.0.0.1 cli_ip=10.0.0.2
fi
port=$((20000 + RANDOM % 20000))
export LD_LIBRARY_PATH=$dropin
DROCE_DEVICES="droce0:mac=02:00:00:00:00:01,ip=$srv_ip,vdev=net_memif0+role=server+$memif" \
	LD_DEBUG=libs LD_DEBUG_OUTPUT="$work/ld" \
	timeout 60 rping -s -v -a "$srv_ip" -p "$port" -C "$count" > "$work/server.txt" 2> "$work/server.err" &
server=$!
sleep 2
rc=0
DROCE_DEVICES="droce0:mac=02:00:00:00:00:02,ip=$cli_ip,vdev=net_memif1+role=client+$memif" \
	timeout 50 rping -c -v -a "$srv_ip" -p "$port" -C "$count" > "$work/client.txt" 2> "$work/client.err" ||
	rc=$?
wait $server || rc=$?
echo "== server"; grep -v "ping data: " "$work/server.txt" || true; cat "$work/server.err"
echo "== client"; grep -v "ping data: " "$work/client.txt" || true; cat "$work/client.err"
# the loader's trace: the server ran droce's librdmacm, not Debian's
grep -h 'calling init: .*/librdmacm\.so\.1$' "$work"/ld.* | sort -u
grep -qh "calling init: $dropin/librdmacm.so.1" "$work"/ld.* ||
	{ echo "rping did not load the drop-in librdmacm.so.1"; exit 1; }
# every ping once (stdout alone: rping's messages on stderr would cut its lines)
pings=$(grep -o "ping data: rdma-ping-[0-9]*" "$work/client.txt" | sort -u | wc -l)
[ "$pings" -eq "$count" ] || { echo "client: $pings of $count pings"; exit 1; }
pings=$(grep -o "ping data: rdma-ping-[0-9]*" "$work/server.txt" | sort -u | wc -l)
[ "$pings" -eq "$count" ] || { echo "server: $pings of $count pings"; exit 1; }
[ "$rc" -eq 0 ] || { echo "exit status $rc"; exit 1; }
echo "rping IPv$family x $count on droce's librdmacm: PASS"
