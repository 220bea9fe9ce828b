#!/usr/bin/env bash
# droce's whole test suite: set up, build, run every suite, print the totals.
set -euo pipefail
. "$(dirname "$0")/setup.sh"
droce_setup
status=0
meson test -C "$DROCE_BUILD" --print-errorlogs --num-processes 2 \
	--suite unit --suite integration --suite rdmacore --suite interop --suite fuzz --suite style "$@" || status=$?
/usr/bin/python3 "$DROCE_ROOT/tools/test-summary.py" "$DROCE_BUILD/meson-logs/testlog.json" ||
	status=1
exit $status
