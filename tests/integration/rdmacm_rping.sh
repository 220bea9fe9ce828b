#!/usr/bin/env bash
# Debian's unmodified rping with Debian's librdmacm (the second argument, preloaded: the
# drop-in folder has droce's own) on droce's drop-in libibverbs: it used to
# die of SIGSEGV in librdmacm's start-up. It must end with an error of its own
# (no rdma_cm device, no RDMA device), or still wait as a server where the kernel
# has rdma_cm; never by a signal. The dynamic loader's own trace (LD_DEBUG=libs)
# must show that rping ran the drop-in's libibverbs.so.1 and no other: without
# that, Debian's libibverbs would pass this test just as well.
set -u
dropin=$1
rdmacm=$2
command -v rping >/dev/null || { echo "rping is not installed (rdmacm-utils)"; exit 77; }
trace=$(mktemp -d)
trap 'rm -rf "$trace"' EXIT
run() {
	local devices=$1 out st inits
	rm -f "$trace"/ld.*
	out=$(DROCE_DEVICES="$devices" LD_LIBRARY_PATH="$dropin" LD_PRELOAD="$rdmacm" LD_DEBUG=libs \
		LD_DEBUG_OUTPUT="$trace/ld" timeout 5 rping -s -a 127.0.0.1 -C 1 2>&1)
	st=$?
	echo "DROCE_DEVICES='$devices': rping exited $st: $out"
	if [ "$st" -ge 128 ]; then
		echo "rping died of signal $((st - 128))"
		exit 1
	fi
	if [ "$st" -ne 124 ] && [ -z "$out" ]; then
		echo "rping failed without saying why"
		exit 1
	fi
	# the loader writes one file per process (timeout, rping): "calling init: PATH"
	inits=$(cat "$trace"/ld.* 2>/dev/null | grep -o 'calling init: .*/libibverbs\.so\.1$')
	echo "libibverbs initialised: ${inits:-none}"
	if ! grep -qxF "calling init: $dropin/libibverbs.so.1" <<<"$inits"; then
		echo "rping did not load the drop-in ($dropin/libibverbs.so.1)"
		exit 1
	fi
	if ! cat "$trace"/ld.* | grep -qE "calling init: $rdmacm$"; then
		echo "rping did not run Debian's librdmacm ($rdmacm)"
		exit 1
	fi
	if grep -vxF "calling init: $dropin/libibverbs.so.1" <<<"$inits" | grep -q .; then
		echo "rping loaded another libibverbs.so.1 beside the drop-in"
		exit 1
	fi
}
run ""
run "droce0:ip=10.99.0.1"
echo "rping on the drop-in: no crash"
