#!/usr/bin/env bash
# The cost of the process boundary (doc/daemon.md): droce-perf's message rate
# with both ends in one process, once on the embedded engine and once through
# droced (DROCE_DAEMON), on two devices joined back to back in each case.
# Runs alternate between the two modes (and which goes first) so that what the
# machine's other load does falls on both. Other load only ever slows a run
# down, so the best run of each mode is its figure (the medians are shown too,
# and how far they agree says how noisy the machine was).
# A benchmark, not a test: the verdict against the goal (at most 10% fewer
# messages per second through droced) is reported, never an exit status.
#
# usage: tools/bench-daemon.sh [BUILD_DIR]         (default: build)
# environment: REPS (runs per test and mode, default 5), ITERS (messages per run,
# default 2000000), SIZE (bytes, default 64), TESTS (default "send_bw write_bw"),
# PERF_ARGS (more droce-perf options, e.g. --use_hugepages), GOAL (percent, 10),
# HUGEPAGES (1: the engines' DPDK memory on hugepages when free; default 0: both
# engines on plain pages, DROCE_NO_HUGE=1, so that both have the same memory and
# no run fails because another program took the hugepages meanwhile).
# Exit status: 0 when every run ran, 1 when droced or a droce-perf run failed.
# Builds nothing.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
reps=${REPS:-5}
iters=${ITERS:-2000000}
size=${SIZE:-64}
tests=${TESTS:-send_bw write_bw}
goal=${GOAL:-10}
if [ "${HUGEPAGES:-0}" = 1 ]; then
	engine_mem="hugepages when free"
else
	export DROCE_NO_HUGE=1
	engine_mem="plain pages (DROCE_NO_HUGE=1)"
fi
perf=$build/app/droce-perf/droce-perf
droced=$build/app/droced/droced

for b in "$perf" "$droced"; do
	[ -x "$b" ] || { echo "bench-daemon: no $b (build first: ninja -C $build)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/droce-bench.XXXXXX")
sock=$work/droced.sock
dpid=

stop_droced() {
	local st=0
	[ -n "$dpid" ] || return 0
	kill -TERM "$dpid" 2>/dev/null || true
	for _ in $(seq 200); do
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$dpid" 2>/dev/null; then
		echo "bench-daemon: droced did not stop on SIGTERM: killed" >&2
		kill -KILL "$dpid" 2>/dev/null || true
	fi
	wait "$dpid" 2>/dev/null || st=$?
	dpid=
	return "$st"
}
cleanup() {
	stop_droced || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# two devices joined back to back inside droced, as droce-perf --loopback makes embedded
env -u DROCE_DAEMON "$droced" -s "$sock" \
	-d "droce0:mac=02:d0:0c:00:01:01,ip=10.98.0.1,mtu=4200,link=bench" \
	-d "droce1:mac=02:d0:0c:00:01:02,ip=10.98.0.2,mtu=4200,link=bench" \
	> "$work/droced.log" 2>&1 &
dpid=$!
for _ in $(seq 300); do
	grep -q "serving" "$work/droced.log" 2>/dev/null && [ -S "$sock" ] && break
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.1
done
if ! [ -S "$sock" ] || ! kill -0 "$dpid" 2>/dev/null; then
	echo "bench-daemon: droced did not start:" >&2
	cat "$work/droced.log" >&2
	exit 1
fi

# One run: the message rate (Mpps) of droce-perf's table line, appended to $work/MODE.TEST.
run() {
	local mode=$1 test=$2 out=$work/run.txt rate
	local -a envs=(env -u DROCE_DEVICES -u DROCE_DAEMON)

	[ "$mode" = daemon ] && envs+=(DROCE_DAEMON="$sock")
	# shellcheck disable=SC2086 # PERF_ARGS is a list of options
	if ! "${envs[@]}" "$perf" "$test" --loopback -F -s "$size" -n "$iters" \
		${PERF_ARGS:-} > "$out" 2>&1; then
		echo "bench-daemon: $test ($mode) failed:" >&2
		cat "$out" >&2
		echo "bench-daemon: droced's log:" >&2
		tail -20 "$work/droced.log" >&2
		return 1
	fi
	rate=$(awk -v s="$size" '$1 == s && NF == 5 { print $5 }' "$out")
	[ -n "$rate" ] || { echo "bench-daemon: no result line:" >&2; cat "$out" >&2; return 1; }
	echo "$rate" >> "$work/$mode.$test"
	printf '  %-9s %-8s %s Mpps\n' "$test" "$mode" "$rate"
}

echo "droce-perf --loopback -s $size -n $iters ${PERF_ARGS:-}: $reps runs per test and mode"
echo "engines' DPDK memory: $engine_mem"
echo "CPUs: $(nproc) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'))"
for r in $(seq "$reps"); do
	order="embedded daemon"
	[ $((r % 2)) -eq 1 ] || order="daemon embedded"
	for t in $tests; do
		for m in $order; do
			run "$m" "$t" || exit 1
		done
	done
done

# best and median of a file of numbers
stats() { sort -g "$1" | awk '{ v[NR] = $1 } END {
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "%.3f %.3f\n", v[NR], m }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

echo
echo "Mpps, best and median of $reps runs; ratio = droced / embedded; cost = 1 - best ratio"
printf '%-9s | %-15s | %-15s | %-15s | %s\n' test "embedded" "droced" "ratio" cost
printf '%-9s | %-15s | %-15s | %-15s | %s\n' "" "best  median" "best  median" "best  median" ""
worst=-100
for t in $tests; do
	read -r eb em < <(stats "$work/embedded.$t")
	read -r db dm < <(stats "$work/daemon.$t")
	rb=$(div "$db" "$eb")
	rm=$(div "$dm" "$em")
	cost=$(awk -v r="$rb" 'BEGIN { printf "%.1f", (1 - r) * 100 }')
	worst=$(awk -v a="$worst" -v b="$cost" 'BEGIN { print (b > a ? b : a) }')
	printf '%-9s | %-15s | %-15s | %-15s | %s%%\n' "$t" "$eb $em" "$db $dm" "$rb $rm" \
		"$cost"
done
echo
if awk -v w="$worst" 'BEGIN { exit !(w <= 0) }'; then
	echo "verdict: no cost measured (droced as fast as the embedded engine or faster):" \
		"within the ${goal}% goal"
elif awk -v w="$worst" -v g="$goal" 'BEGIN { exit !(w <= g) }'; then
	echo "verdict: droced costs at most ${worst}% of the message rate: within the ${goal}% goal"
else
	echo "verdict: droced costs up to ${worst}% of the message rate: above the ${goal}% goal" \
		"(a noisy, shared machine can do this; run again)"
fi

st=0
stop_droced || st=$?
[ "$st" -eq 0 ] || { echo "bench-daemon: droced exited with status $st:" >&2; \
	cat "$work/droced.log" >&2; exit 1; }
