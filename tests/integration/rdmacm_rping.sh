#!/usr/bin/env bash
# Debian's unmodified rping (librdmacm) on droce's drop-in libibverbs: it used to
# die of SIGSEGV in librdmacm's start-up. It must end with an error of its own
# (no rdma_cm device, no RDMA device), or still wait as a server where the kernel
# has rdma_cm; never by a signal.
set -u
dropin=$1
command -v rping >/dev/null || { echo "rping is not installed (rdmacm-utils)"; exit 77; }
run() {
	local devices=$1 out st
	out=$(DROCE_DEVICES="$devices" LD_LIBRARY_PATH="$dropin" timeout 5 rping -s -a 127.0.0.1 -C 1 2>&1)
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
}
run ""
run "droce0:ip=10.99.0.1"
echo "rping on the drop-in: no crash"
