#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build the libFuzzer target over the lib/wire parser with ASan + UBSan, run it
# once over every RoCEv2 frame of the captures in tests/data (and over the
# regression inputs kept in tests/fuzz/regressions/), then fuzz for a bounded
# time. Exits non-zero if anything is found. meson runs it as the test
# 'fuzz_wire_parse' (suite 'fuzz'); it also runs on its own:
#
#   tests/fuzz/run_fuzz.sh [options] [SECONDS]
#
#   SECONDS            how long to fuzz after the seed run (default 60)
#   --seeds-only       stop after the seed run
#   --srcdir DIR       source tree (default: two levels above this script)
#   --workdir DIR      where the binary, seeds, corpus, logs and crash inputs go
#                      (default: <srcdir>/build/tests/fuzz/fuzz_wire_parse.d)
#   --cc CLANG         the compiler (default: clang-14, else clang)
#   --source FILE      a lib/wire source to build in, repeatable (default: the
#                      wire_bytes_sources list of lib/wire/meson.build)
#   --missing-clang    report that meson found no clang, and fail
set -u

prog=fuzz_wire_parse
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=$(cd "$script_dir/../.." && pwd)
workdir=
cc=
seconds=60
seeds_only=0
sources=()

packages_hint="install the Debian packages clang and libclang-rt-14-dev"
packages_hint+=" (apt-get install clang libclang-rt-14-dev),"
packages_hint+=" then: meson setup --reconfigure <builddir>"

verdict() {
	# verdict PASS|FAIL text...
	local result=$1
	shift
	echo "$prog: $result: $*"
}

fail() {
	verdict FAIL "$*"
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--seeds-only) seeds_only=1 ;;
	--srcdir) srcdir=$2; shift ;;
	--workdir) workdir=$2; shift ;;
	--cc) cc=$2; shift ;;
	--source) sources+=("$2"); shift ;;
	--missing-clang) fail "meson found no clang to build the fuzz target; $packages_hint" ;;
	-h|--help) sed -n '3,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) fail "unknown option $1 (see --help)" ;;
	*) seconds=$1 ;;
	esac
	shift
done

case $seconds in
''|*[!0-9]*) fail "SECONDS must be a whole number of seconds, not '$seconds'" ;;
esac
[ "$seconds" -ge 1 ] || fail "SECONDS must be at least 1"
[ -n "$workdir" ] || workdir=$srcdir/build/tests/fuzz/$prog.d

if [ -z "$cc" ]; then
	cc=$(command -v clang-14 || command -v clang) ||
		fail "no clang in PATH; $packages_hint"
fi

# the byte-level lib/wire sources, as listed in lib/wire/meson.build
if [ ${#sources[@]} -eq 0 ]; then
	mapfile -t sources < <(awk '
		/^wire_bytes_sources *= *files\(/ { on = 1; next }
		on && /\)/ { exit }
		on { gsub(/[\t ,'\'']/, ""); if ($0 != "") print "'"$srcdir"'/lib/wire/" $0 }
	' "$srcdir/lib/wire/meson.build")
	[ ${#sources[@]} -gt 0 ] ||
		fail "found no wire_bytes_sources in $srcdir/lib/wire/meson.build"
fi

mkdir -p "$workdir" || fail "cannot create $workdir"
bin=$workdir/$prog
seeds=$workdir/seeds
corpus=$workdir/corpus
artifacts=$workdir/artifacts
log=$workdir/fuzz.log
# inputs found by an earlier run are kept aside, not lost
if [ -d "$artifacts" ] && [ -n "$(ls -A "$artifacts")" ]; then
	mv "$artifacts" "$artifacts.$(date +%Y%m%d-%H%M%S)"
fi
mkdir -p "$corpus" "$artifacts"

# ---- build
echo "$prog: building with $("$cc" --version | head -n 1)"
if ! "$cc" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1 \
	-std=gnu11 -D_GNU_SOURCE -Wall -Wextra \
	-I"$srcdir/lib/wire" -I"$srcdir/include" \
	"$script_dir/$prog.c" "${sources[@]}" \
	-lisal -lz -o "$bin" >"$workdir/build.log" 2>&1; then
	cat "$workdir/build.log"
	if grep -q -e 'libclang_rt\.' -e 'fsanitize' "$workdir/build.log"; then
		fail "the sanitizer or libFuzzer runtime of $cc is missing; $packages_hint"
	fi
	fail "the fuzz target does not build (log above; -lisal -lz: libisal-dev, zlib1g-dev)"
fi
if [ -s "$workdir/build.log" ]; then
	cat "$workdir/build.log"
fi

# symbolized stacks in any report; stop at the first finding
symbolizer=$(command -v llvm-symbolizer-14 || command -v llvm-symbolizer || true)
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# ---- seed corpus: one file per RoCEv2 frame of the captures (meson sets DROCE_TEST_DATA)
rm -rf "$seeds"
shopt -s nullglob
datadir=${DROCE_TEST_DATA:-$srcdir/tests/data}
pcaps=("$datadir"/*.pcap)
[ ${#pcaps[@]} -gt 0 ] || fail "no capture in $datadir"
/usr/bin/python3 "$script_dir/pcap_seeds.py" "$seeds" "${pcaps[@]}" ||
	fail "could not extract the seed corpus from $datadir"

# Print the last libFuzzer status line (#N DONE cov: .. ft: .. exec/s: ..) of a log.
stats_line() {
	grep -E '^#[0-9]+[[:space:]]+(DONE|INITED)' "$1" | tail -n 1
}

# Report a finding: the end of the log (the sanitizer or check report) and the input.
report_finding() {
	local what=$1 runlog=$2 found
	echo "---- last 80 lines of $runlog"
	tail -n 80 "$runlog"
	echo "----"
	for found in "$artifacts"/*; do
		echo "$prog: input kept as $found ($(stat -c %s "$found") bytes)"
		echo "$prog: reproduce with: $bin $found"
		echo "$prog: input hex: $(od -An -tx1 -v "$found" | tr -d ' \n' | cut -c1-512)"
	done
	fail "$what"
}

# ---- one run over the seeds and the kept regression inputs
seed_log=$workdir/seeds.log
regressions=()
for f in "$script_dir"/regressions/*; do
	[ -f "$f" ] && regressions+=("$f")
done
nseeds=$(find "$seeds" -type f | wc -l)
echo "$prog: running every seed once: $nseeds capture frames, ${#regressions[@]} regression inputs"
"$bin" -runs=0 -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$artifacts/" \
	"$seeds" >"$seed_log" 2>&1
rc=$?
[ $rc -eq 0 ] || report_finding "a capture frame failed a check (exit $rc)" "$seed_log"
seed_final=$(stats_line "$seed_log")
echo "$prog: seed run: $nseeds capture frames executed once, every check passed" \
	"($(echo "$seed_final" | grep -o 'cov: [0-9]* ft: [0-9]*'))"
if [ ${#regressions[@]} -gt 0 ]; then
	"$bin" -rss_limit_mb=2048 -timeout=10 "${regressions[@]}" >"$workdir/regressions.log" 2>&1
	rc=$?
	[ $rc -eq 0 ] || report_finding "a kept regression input fails again (exit $rc)" \
		"$workdir/regressions.log"
	echo "$prog: regressions: ${#regressions[@]} inputs pass"
fi
if [ $seeds_only -eq 1 ]; then
	verdict PASS "$nseeds capture frames and ${#regressions[@]} regression inputs" \
		"passed every check (no fuzzing: --seeds-only)"
	exit 0
fi

# ---- fuzz for a bounded time, the corpus kept in the work dir between runs
echo "$prog: fuzzing for $seconds s (corpus $corpus, log $log)"
"$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=10000 \
	-dict="$script_dir/$prog.dict" -print_final_stats=1 \
	-artifact_prefix="$artifacts/" "$corpus" "$seeds" >"$log" 2>&1
rc=$?
final=$(stats_line "$log")
echo "$prog: final: $final"
grep '^stat::' "$log"
if [ $rc -ne 0 ] || [ -n "$(ls -A "$artifacts")" ]; then
	report_finding "the fuzzer found a failing input (exit $rc)" "$log"
fi
[ -n "$final" ] || fail "no final stats line in $log: the fuzzer did not finish normally"
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
cov=$(echo "$final" | grep -o 'cov: [0-9]* ft: [0-9]*')
verdict PASS "$runs runs in ${took:-$seconds} s ($rate exec/s), $cov," \
	"corpus $(find "$corpus" -type f | wc -l) files: no crash, leak, timeout or failed check"
