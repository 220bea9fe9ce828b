#!/usr/bin/env bash
# droce-perf against Debian's unmodified perftest 4.5 (ib_TEST on the drop-in
# libibverbs.so.1), in both roles: first ib_TEST serves and droce-perf
# connects, then droce-perf serves and ib_TEST connects. Each side is a process
# with its own engine; their droce ports are joined by a memif link, and
# perftest's out-of-band exchange runs over TCP on the loopback address. Both
# sides must exit 0 and print a result row of the size and iterations asked
# (but the servers of read_lat and atomic_lat, which measure nothing).
#   perftest_pair.sh DROPIN_DIR DROCE_PERF TEST SIZE_PERFTEST_SERVES SIZE_DROCE_SERVES [ARGS...]
set -euo pipefail
dropin=$1 perf=$2 test=$3 size_a=$4 size_b=$5
shift 5
extra=("$@")
iters=200
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
memif="socket-abstract=no"
# perftest refuses a port that is not ACTIVE when it opens it: its engine waits for the link
export DROCE_LINK_WAIT_MS=20000
failed=0
server_rows=1
case $test in read_lat | atomic_lat) server_rows=0 ;; esac

# The memif server side starts first (the client side's engine needs its socket).
wait_socket() {
	for _ in $(seq 200); do
		[ -S "$1" ] && return 0
		sleep 0.1
	done
	echo "no memif socket $1"
	return 1
}

# A table row: the size, then the iterations, then figures.
expect_row() { # FILE SIZE WHO
	if ! grep -Eq "^ $2 +$iters +[0-9]" "$1"; then
		echo "FAIL: $3 printed no result row for $2 bytes x $iters"
		failed=1
	fi
}

# run NAME SIZE SERVER_IS_PERFTEST
run() {
	local name=$1 size=$2 perftest_serves=$3 port=$((20000 + RANDOM % 20000)) rc=0
	local sock=$work/$name.sock
	local srv_dev="droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,vdev=net_memif0+role=server+socket=$sock+$memif"
	local cli_dev="droce0:mac=02:00:00:00:00:02,ip=10.0.0.2,vdev=net_memif1+role=client+socket=$sock+$memif"
	local common=(-s "$size" -n "$iters" -F -p "$port" "${extra[@]}")
	local ib=(env LD_LIBRARY_PATH="$dropin" "ib_$test" -d droce0 "${common[@]}")
	local dp=("$perf" "$test" "${common[@]}")
	local server client

	if [ "$perftest_serves" = 1 ]; then
		server=("${ib[@]}") client=("${dp[@]}" 127.0.0.1)
	else
		server=("${dp[@]}") client=("${ib[@]}" 127.0.0.1)
	fi
	DROCE_DEVICES=$srv_dev timeout 60 "${server[@]}" > "$work/$name.server" 2>&1 &
	local spid=$!
	wait_socket "$sock" || rc=1
	DROCE_DEVICES=$cli_dev timeout 50 "${client[@]}" > "$work/$name.client" 2>&1 || rc=$?
	wait $spid || rc=$?
	echo "== $name: server: ${server[*]}"
	cat "$work/$name.server"
	echo "== $name: client: ${client[*]}"
	cat "$work/$name.client"
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: $name: exit status $rc"
		failed=1
	fi
	[ "$server_rows" = 0 ] || expect_row "$work/$name.server" "$size" "$name server"
	expect_row "$work/$name.client" "$size" "$name client"
}

run "ib_$test-serves" "$size_a" 1
run "droce-perf-serves" "$size_b" 0
[ "$failed" -eq 0 ] || exit 1
echo "$test against ib_$test, both roles: PASS"
