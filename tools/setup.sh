# shellcheck shell=bash
# Set-up shared by tools/run.sh and tools/test.sh (sourced, not run):
# Debian packages, hugepages, configure and build. Every step is idempotent
# and quick when there is nothing to do.

DROCE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DROCE_BUILD=${DROCE_BUILD:-$DROCE_ROOT/build}
# 2 MiB pages to reserve: 1 GiB, enough for the test suites and the main job.
DROCE_HUGEPAGES=${DROCE_HUGEPAGES:-512}

droce_note() { printf 'droce: %s\n' "$*" >&2; }

droce_install_deps() {
	local missing=() pkg
	while read -r pkg; do
		[ -n "$pkg" ] || continue
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$pkg")
	done < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$DROCE_ROOT/tools/deps.txt")
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		droce_note "missing Debian packages: ${missing[*]}; run as root to install them"
		return 1
	fi
	droce_note "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Reserve hugepages and mount hugetlbfs where the machine allows it; otherwise
# say so: DPDK then runs with --no-huge (slower, and no zero-copy registration).
droce_hugepages() {
	local total
	total=$(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo)
	if [ "${total:-0}" -lt "$DROCE_HUGEPAGES" ] && [ -w /proc/sys/vm/nr_hugepages ]; then
		echo "$DROCE_HUGEPAGES" > /proc/sys/vm/nr_hugepages 2>/dev/null || true
		total=$(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo)
	fi
	if ! grep -qs ' hugetlbfs ' /proc/mounts && [ "$(id -u)" -eq 0 ]; then
		mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null || true
	fi
	if [ "${total:-0}" -gt 0 ] && grep -qs ' hugetlbfs ' /proc/mounts; then
		export DROCE_NO_HUGE=0
		droce_note "hugepages: $total x 2 MiB reserved"
	else
		export DROCE_NO_HUGE=1
		droce_note "NOTE: no hugepages on this machine; DPDK runs with --no-huge (slower, no zero-copy)"
	fi
}

droce_build() {
	if [ ! -f "$DROCE_BUILD/build.ninja" ]; then
		meson setup "$DROCE_BUILD" "$DROCE_ROOT" -Dwerror=true "$@" >/dev/null ||
			{ droce_note "meson setup failed"; return 1; }
	fi
	ninja -C "$DROCE_BUILD" >/dev/null || ninja -C "$DROCE_BUILD"
}

droce_setup() {
	droce_install_deps && droce_hugepages && droce_build
}
