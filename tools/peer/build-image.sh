#!/usr/bin/env bash
# The Linux Soft-RoCE peer droce's interop suite boots under qemu: Debian's stock
# kernel (whose rdma_rxe module is the reference software RoCEv2 stack) and an
# initramfs of busybox, the modules rdma_rxe needs, rdma-core's unmodified tools
# (ibverbs-utils, perftest, rdmacm-utils, the rxe provider) and iproute2.
#
#   tools/peer/build-image.sh OUTDIR
#
# Writes OUTDIR/vmlinuz and OUTDIR/initrd.gz and keeps the kernel .deb in
# OUTDIR/debs. It rebuilds only when an input changed: the kernel package
# linux-image-amd64 points at, the versions of the host packages whose files go
# into the image, or this folder's scripts (OUTDIR/image.key records them).
#
# Exit status: 0 built or up to date; 77 the machine cannot build it (a host
# package missing, the kernel package cannot be downloaded); 1 anything else.
set -euo pipefail
# The image takes the host's own libraries: not the drop-in libibverbs a test run puts
# first on the library path (ldd would copy droce's in place of rdma-core's).
unset LD_LIBRARY_PATH LD_PRELOAD

out=$(realpath -m "${1:?usage: build-image.sh OUTDIR}")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

note() { printf 'peer image: %s\n' "$*" >&2; }
cannot() {
	note "$*"
	exit 77
}

# Host packages whose files the image carries; the versions go into the key.
host_pkgs=(busybox-static kmod iproute2 libibverbs1 ibverbs-providers ibverbs-utils perftest
	librdmacm1 rdmacm-utils cpio libc6 libgcc-s1)
# Kernel modules the peer loads, with their dependencies: virtio for the NIC, a
# crc32 for rxe's ICRC (6.1 computes it through the crypto API: without one, rdma
# link add fails with ENOENT), the RDMA core and uverbs for userspace, netem
# behind a prio qdisc and a u32 filter to impair RoCEv2 frames alone.
modules=(virtio_pci virtio_net crc32_generic crc32_pclmul rdma_rxe ib_uverbs rdma_ucm
	sch_netem sch_prio cls_u32)
# Programs the peer runs (full paths on this Debian host).
programs=(/usr/bin/ibv_rc_pingpong /usr/bin/ibv_uc_pingpong /usr/bin/ibv_ud_pingpong
	/usr/bin/ibv_srq_pingpong /usr/bin/ibv_devinfo /usr/bin/ibv_devices
	/usr/bin/ib_send_bw /usr/bin/ib_send_lat /usr/bin/ib_write_bw /usr/bin/ib_write_lat
	/usr/bin/ib_read_bw /usr/bin/ib_read_lat /usr/bin/ib_atomic_bw /usr/bin/ib_atomic_lat
	/usr/bin/rping /usr/bin/udaddy /usr/bin/ucmatose
	/usr/bin/rdma /usr/bin/ip /usr/sbin/tc /usr/bin/ss)
provider=/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so

for pkg in "${host_pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
		cannot "the host package $pkg is missing (tools/setup.sh installs tools/deps.txt)"
done
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -1)
[ -n "$kpkg" ] || cannot "apt knows no linux-image-amd64 (apt-get update?)"
kver=$(apt-cache policy "$kpkg" | sed -n 's/^ *Candidate: //p')

key=$(
	echo "kernel $kpkg $kver"
	dpkg-query -W -f='${Package} ${Version}\n' "${host_pkgs[@]}"
	cd "$here" && sha256sum build-image.sh init agent
)
if [ -f "$out/image.key" ] && [ -f "$out/vmlinuz" ] && [ -f "$out/initrd.gz" ] &&
	[ "$key" = "$(cat "$out/image.key")" ]; then
	exit 0
fi
note "building into $out"
mkdir -p "$out/debs"

debs=("$out/debs/${kpkg}_"*.deb)
deb=${debs[0]}
if [ ! -e "$deb" ]; then
	# apt drops privileges to _apt for downloads; a folder it may write avoids its warning
	dl=$(mktemp -d)
	chmod 0777 "$dl"
	(cd "$dl" && apt-get download -q "$kpkg" >/dev/null 2>&1) ||
		(apt-get update -qq >/dev/null 2>&1 && cd "$dl" && apt-get download -q "$kpkg" >/dev/null 2>&1) ||
		{
			rm -rf "$dl"
			cannot "cannot download $kpkg"
		}
	mv "$dl"/*.deb "$out/debs/"
	rm -rf "$dl"
	debs=("$out/debs/${kpkg}_"*.deb)
	deb=${debs[0]}
fi

stage=$(mktemp -d "$out/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
kroot=$stage/kernel
root=$stage/root
mkdir -p "$kroot" "$root"

# The kernel package: its modules (the .deb has no modules.dep: depmod makes it).
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$kroot" ./boot ./lib/modules
kv=$(basename "$(find "$kroot/lib/modules" -mindepth 1 -maxdepth 1 -type d | head -1)")
depmod -b "$kroot" "$kv"

# A merged-/usr tree like Debian's: /bin, /sbin, /lib, /lib64 point into /usr.
mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,proc,sys,dev,tmp,run,root}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done

# Modules with their dependencies, in the layout depmod expects.
for m in "${modules[@]}"; do
	modprobe -d "$kroot" -S "$kv" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | sort -u | while read -r ko; do
	rel=${ko#"$kroot"/}
	mkdir -p "$root/$(dirname "$rel")"
	cp "$ko" "$root/$rel"
done
cp "$kroot/lib/modules/$kv"/modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$kv/"
depmod -b "$root" "$kv"

# A file and the shared libraries it loads, at their paths (ld.so's own paths
# resolve through the /lib and /lib64 links).
copy_with_libs() {
	local f=$1 lib
	mkdir -p "$root$(dirname "$f")"
	cp -L "$f" "$root$f"
	for lib in $(ldd "$f" | grep -o '/[^ ]*'); do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
for p in "${programs[@]}" "$provider"; do copy_with_libs "$p"; done
# glibc loads libgcc_s when a thread exits or is cancelled (rping's threads do): ldd does not
# list it, and without it the program aborts
copy_with_libs /usr/lib/x86_64-linux-gnu/libgcc_s.so.1
mkdir -p "$root/etc/libibverbs.d"
cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"

# busybox for everything else (iproute2's ip, tc and ss keep their names)
cp /bin/busybox "$root/usr/bin/busybox"
for a in $("$root/usr/bin/busybox" --list); do
	[ -e "$root/usr/bin/$a" ] || [ -e "$root/usr/sbin/$a" ] || ln -s busybox "$root/usr/bin/$a"
done

echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
echo 'root:x:0:' > "$root/etc/group"
install -m 0755 "$here/init" "$root/init"
install -m 0755 "$here/agent" "$root/usr/bin/peer-agent"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 > "$stage/initrd.gz"
mv "$stage/initrd.gz" "$out/initrd.gz"
cp "$kroot/boot/vmlinuz-$kv" "$out/vmlinuz"
printf '%s\n' "$key" > "$out/image.key"
note "kernel $kv, initrd $(du -h "$out/initrd.gz" | cut -f1)"
