#!/usr/bin/env bash
# Install droce into a scratch folder and build an application against it with
# nothing but `pkg-config --cflags --libs droce`, once against the shared and
# once against the static library; run both.
set -euo pipefail
build=$1
src=$(cd "$(dirname "$0")" && pwd)
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --quiet --no-rebuild
pc=$(find "$dest" -name droce.pc -print -quit)
[ -n "$pc" ] || { echo "droce.pc was not installed"; exit 1; }
prefix=$(sed -n 's/^prefix=//p' "$pc")
# the .pc names the final prefix: a copy of it points at the scratch install
mkdir "$dest/pc"
sed "s|^prefix=.*|prefix=$dest$prefix|" "$pc" > "$dest/pc/droce.pc"
export PKG_CONFIG_PATH=$dest/pc
libdir=$(pkg-config --variable=libdir droce)
cc -o "$dest/consumer" "$src/consumer.c" $(pkg-config --cflags --libs droce)
LD_LIBRARY_PATH=$libdir "$dest/consumer"
cc -o "$dest/consumer-static" "$src/consumer.c" \
	$(pkg-config --cflags droce) "$libdir/libdroce.a" \
	$(pkg-config --libs libdpdk libisal) -lz
"$dest/consumer-static"
if ldd "$dest/consumer-static" | grep -q libdroce; then
	echo "static consumer still links libdroce.so"
	exit 1
fi
# a libibverbs program builds unchanged against droce and runs on it
cc -o "$dest/verbs_consumer" "$src/verbs_consumer.c" $(pkg-config --cflags --libs droce)
if ldd "$dest/verbs_consumer" | grep -q 'libibverbs.so'; then
	echo "verbs consumer links rdma-core's libibverbs instead of droce"
	exit 1
fi
DROCE_DEVICES="droce0:ip=10.0.0.1" LD_LIBRARY_PATH=$libdir "$dest/verbs_consumer"
echo "install: droce.pc, shared and static libdroce, and a libibverbs program work"
