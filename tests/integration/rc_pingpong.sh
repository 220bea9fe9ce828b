#!/usr/bin/env bash
# Debian's unmodified ibv_rc_pingpong (or ibv_uc_pingpong, the second argument),
# 4 KiB messages over a 1 KiB path MTU (4 packets each), server and client in
# two processes, each on droce through the drop-in libibverbs.so.1 with its
# own embedded engine, the two droce ports joined by a memif link; the
# out-of-band exchange is TCP on the loopback address. Both sides must finish
# every iteration.
set -euo pipefail
dropin=$1
prog=${2:-ibv_rc_pingpong}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
sock=$work/memif.sock
port=$((20000 + RANDOM % 20000))
common="-d droce0 -g 1 -n 50 -s 4096 -m 1024 -p $port"
memif="socket=$sock+socket-abstract=no"
export LD_LIBRARY_PATH=$dropin
DROCE_DEVICES="droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,vdev=net_memif0+role=server+$memif" \
	timeout 60 "$prog" $common > "$work/server.txt" 2>&1 &
server=$!
sleep 2
rc=0
DROCE_DEVICES="droce0:mac=02:00:00:00:00:02,ip=10.0.0.2,vdev=net_memif1+role=client+$memif" \
	timeout 50 "$prog" $common 127.0.0.1 > "$work/client.txt" 2>&1 || rc=$?
wait $server || rc=$?
echo "== server"; cat "$work/server.txt"
echo "== client"; cat "$work/client.txt"
grep -q "50 iters in" "$work/server.txt" || { echo "server did not finish"; exit 1; }
grep -q "50 iters in" "$work/client.txt" || { echo "client did not finish"; exit 1; }
grep -q "GID ::ffff:10.0.0.2" "$work/server.txt" || { echo "server saw the wrong peer"; exit 1; }
[ "$rc" -eq 0 ] || { echo "exit status $rc"; exit 1; }
echo "$prog: PASS"
