#!/usr/bin/env bash
# Debian's unmodified ibv_devinfo and ibv_rc_pingpong / ibv_ud_pingpong through the drop-in
# libibverbs.so.1 on droced: one droced owns two devices joined back to back, the
# server runs on droce0 and the client on droce1, two processes reaching droced's engine
# over its socket (DROCE_DAEMON). ibv_rc_pingpong registers memalign memory:
# DROCE_SHARE_PRIVATE=1 moves it onto shared memory droced can map (doc/daemon.md).
# droced must stop with status 0 on SIGTERM.
set -euo pipefail
dropin=$1
droced=$2
prog=${3:-ibv_rc_pingpong}
work=$(mktemp -d /tmp/droced-it-XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
	kill $(jobs -p) 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
sock=$work/droced.sock
DROCE_NO_HUGE=1 "$droced" -s "$sock" \
	-d "droce0:mac=02:00:00:00:0e:01,ip=10.8.0.1,mtu=1500,link=p" \
	-d "droce1:mac=02:00:00:00:0e:02,ip=10.8.0.2,mtu=1500,link=p" 2> "$work/droced.log" &
pid=$!
for _ in $(seq 1 300); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { cat "$work/droced.log"; echo "droced did not start"; exit 1; }
export LD_LIBRARY_PATH=$dropin DROCE_DAEMON=$sock DROCE_SHARE_PRIVATE=1
ibv_devinfo -d droce1 > "$work/devinfo.txt"
grep -q "hca_id:	droce1" "$work/devinfo.txt" || { cat "$work/devinfo.txt"; exit 1; }
grep -q "state:			PORT_ACTIVE" "$work/devinfo.txt" || { cat "$work/devinfo.txt"; exit 1; }
port=$((20000 + RANDOM % 20000))
common="-g 1 -n 50 -s 1024 -p $port"
[ "$prog" = ibv_rc_pingpong ] && common="$common -s 4096 -m 1024"
timeout 60 "$prog" -d droce0 $common > "$work/server.txt" 2>&1 &
server=$!
sleep 1
rc=0
timeout 50 "$prog" -d droce1 $common 127.0.0.1 > "$work/client.txt" 2>&1 || rc=$?
wait $server || rc=$?
echo "== server"; cat "$work/server.txt"
echo "== client"; cat "$work/client.txt"
grep -q "50 iters in" "$work/server.txt" || { echo "server did not finish"; exit 1; }
grep -q "50 iters in" "$work/client.txt" || { echo "client did not finish"; exit 1; }
[ "$rc" -eq 0 ] || { echo "exit status $rc"; exit 1; }
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
echo "== droced"; cat "$work/droced.log"
[ "$status" -eq 0 ] || { echo "droced exited $status"; exit 1; }
grep -q "objects released" "$work/droced.log" || { echo "droced released nothing"; exit 1; }
echo "$prog on droced: PASS"
