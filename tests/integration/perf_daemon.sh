#!/usr/bin/env bash
# droce-perf --loopback through droced: droced starts on a socket in a
# temporary folder with two devices joined back to back, droce-perf runs with
# DROCE_DAEMON pointing at it (its buffers are droce_alloc_shared() memory,
# which droced registers), and must exit 0 with its results table, on
# droced's two devices; then droced must stop on SIGTERM with status 0 and
# remove its socket. Function only: the figures are printed, not judged.
#   perf_daemon.sh DROCED DROCE_PERF TEST ITERS [ARGS...]
set -euo pipefail
droced=$1 perf=$2 test=$3 iters=$4
shift 4
extra=("$@")
size=64
work=$(mktemp -d)
sock=$work/droced.sock
dpid=
# droced's DPDK memory on plain pages: no start fails because other tests hold the hugepages
export DROCE_NO_HUGE=1
cleanup() {
	if [ -n "$dpid" ] && kill -0 "$dpid" 2>/dev/null; then
		kill -KILL "$dpid" 2>/dev/null || true
		wait "$dpid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# device names of their own: the table must show droced's, not --loopback's defaults
env -u DROCE_DAEMON "$droced" -s "$sock" \
	-d "pd0:mac=02:00:00:00:0e:01,ip=10.97.0.1,mtu=4200,link=perf" \
	-d "pd1:mac=02:00:00:00:0e:02,ip=10.97.0.2,mtu=4200,link=perf" \
	> "$work/droced.log" 2>&1 &
dpid=$!
for _ in $(seq 300); do
	[ -S "$sock" ] && grep -q serving "$work/droced.log" && break
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.1
done
if ! [ -S "$sock" ]; then
	echo "FAIL: droced did not start"
	cat "$work/droced.log"
	exit 1
fi

rc=0
env -u DROCE_DEVICES DROCE_DAEMON="$sock" timeout 60 "$perf" "$test" --loopback -F \
	-s "$size" -n "$iters" "${extra[@]}" > "$work/perf.txt" 2>&1 || rc=$?
echo "== droce-perf $test --loopback -s $size -n $iters ${extra[*]} (DROCE_DAEMON)"
cat "$work/perf.txt"
failed=0
if [ "$rc" -ne 0 ]; then
	echo "FAIL: droce-perf exited with status $rc"
	failed=1
fi
if ! grep -q "#bytes" "$work/perf.txt"; then
	echo "FAIL: no results table title"
	failed=1
fi
if ! grep -Eq "^ $size +$iters +[0-9]" "$work/perf.txt"; then
	echo "FAIL: no result row for $size bytes x $iters"
	failed=1
fi
if ! grep -q "loopback (pd0 <-> pd1)" "$work/perf.txt"; then
	echo "FAIL: droce-perf did not run on droced's devices pd0 and pd1"
	failed=1
fi

kill -TERM "$dpid"
st=0
for _ in $(seq 200); do
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$dpid" 2>/dev/null; then
	echo "FAIL: droced did not stop within 20 s of SIGTERM"
	failed=1
else
	wait "$dpid" || st=$?
	dpid=
	if [ "$st" -ne 0 ]; then
		echo "FAIL: droced exited with status $st"
		failed=1
	fi
	if [ -e "$sock" ]; then
		echo "FAIL: droced left its socket"
		failed=1
	fi
fi
echo "== droced"
cat "$work/droced.log"
if ! grep -q "application pid [0-9]* closed" "$work/droced.log"; then
	echo "FAIL: droced served no application"
	failed=1
fi
[ "$failed" -eq 0 ] || exit 1
echo "perf_daemon $test: PASS"
