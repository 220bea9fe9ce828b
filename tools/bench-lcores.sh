#!/usr/bin/env bash
# Engine lcores (doc/transport.md, "Several engine lcores"): droce-perf --loopback
# on the embedded engine with one engine lcore and with two (DROCE_LCORES), the
# same tests in the same run. With two, the sender's QPs and the receiver's run
# on different lcores and every packet crosses from one to the other through
# the receiving lcore's inbox. Runs alternate between the two settings (and
# which goes first) so that the machine's other load falls on both; other load
# only ever slows a run down, so the best run of each is its figure (medians
# shown too). A benchmark, not a test: figures and ratios, never a verdict by
# exit status. On a machine with fewer than three CPUs the application's thread
# and two engine lcores share CPUs, and the figures say so.
#
# usage: tools/bench-lcores.sh [BUILD_DIR]           (default: build)
# environment: REPS (runs per test and setting, default 5), ITERS (messages per
# run, default 1000000), SIZES (bytes, default "64 4096 65536"), TESTS (default
# "send_bw write_bw"), QPS (QPs per run, -q, default 4), PERF_ARGS (more
# droce-perf options).
# Exit status: 0 when every run ran, 1 when a droce-perf run failed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
reps=${REPS:-5}
iters=${ITERS:-1000000}
sizes=${SIZES:-64 4096 65536}
tests=${TESTS:-send_bw write_bw}
qps=${QPS:-4}
perf=$build/app/droce-perf/droce-perf
[ -x "$perf" ] || { echo "bench-lcores: no $perf (build first: ninja -C $build)" >&2; exit 1; }
export DROCE_NO_HUGE=1 # both settings on the same memory, no run lost to hugepages taken

work=$(mktemp -d "${TMPDIR:-/tmp}/droce-lcores.XXXXXX")
trap 'rm -rf "$work"' EXIT

# One run: the bandwidth (MB/s, perftest's unit) and message rate (Mpps) of droce-perf's
# result line.
run() {
	local lcores=$1 test=$2 size=$3 out=$work/run.txt line n
	n=$iters
	[ "$size" -le 4096 ] || n=$((iters / 16))
	# shellcheck disable=SC2086 # PERF_ARGS is a list of options
	if ! env -u DROCE_DEVICES -u DROCE_DAEMON DROCE_LCORES="$lcores" "$perf" "$test" \
		--loopback -F -q "$qps" -s "$size" -n "$n" ${PERF_ARGS:-} > "$out" 2>&1; then
		echo "bench-lcores: $test -s $size with $lcores lcores failed:" >&2
		cat "$out" >&2
		return 1
	fi
	line=$(awk -v s="$size" '$1 == s && NF == 5 { print $4, $5 }' "$out")
	[ -n "$line" ] || { echo "bench-lcores: no result line:" >&2; cat "$out" >&2; return 1; }
	echo "$line" >> "$work/$lcores.$test.$size"
	printf '  %-9s %7s B  %s lcore(s)  %s MB/s %s Mpps\n' "$test" "$size" "$lcores" $line
}

echo "droce-perf --loopback -q $qps ${PERF_ARGS:-}: $reps runs per test, size and setting"
echo "CPUs: $(nproc) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'))"
[ "$(nproc)" -ge 3 ] || echo "note: fewer than 3 CPUs: the application's thread and two" \
	"engine lcores share them"
for r in $(seq "$reps"); do
	order="1 2"
	[ $((r % 2)) -eq 1 ] || order="2 1"
	for t in $tests; do
		for s in $sizes; do
			for l in $order; do
				run "$l" "$t" "$s" || exit 1
			done
		done
	done
done

# best and median of column $2 of file $1
stats() { awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END {
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "%.3f %.3f\n", v[NR], m }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

echo
echo "Mpps, best and median of $reps runs; ratio = two lcores / one lcore (best, median)"
printf '%-9s %8s | %-15s | %-15s | %s\n' test size "1 lcore" "2 lcores" ratio
for t in $tests; do
	for s in $sizes; do
		read -r ob om < <(stats "$work/1.$t.$s" 2)
		read -r tb tm < <(stats "$work/2.$t.$s" 2)
		printf '%-9s %8s | %-15s | %-15s | %s %s\n' "$t" "$s" "$ob $om" "$tb $tm" \
			"$(div "$tb" "$ob")" "$(div "$tm" "$om")"
	done
done
