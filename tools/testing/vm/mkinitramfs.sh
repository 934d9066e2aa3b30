#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build (or reuse from cache) the busybox initramfs for the sroce test VM.
#
#   mkinitramfs.sh KVER OUTPUT.cpio.gz
#
# The image contains /bin/busybox (static), /init (initramfs-init.sh) and the
# virtio/9p modules of /lib/modules/KVER needed to mount the host root over
# virtio-9p, in dependency order. Nothing is loaded on the host: the order is
# computed with "modprobe -S KVER --show-depends", which only reads files.
#
# The output is rebuilt when its stamp (a hash of this script, the init
# script, busybox and the module list) changes. Concurrent callers (e.g. the
# two guests of vm-pair.sh) are serialised with flock.

set -eu

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kver=${1:?usage: mkinitramfs.sh KVER OUTPUT.cpio.gz}
out=${2:?usage: mkinitramfs.sh KVER OUTPUT.cpio.gz}
busybox=/bin/busybox
init_script=$here/initramfs-init.sh
modules=(9p 9pnet_virtio virtio_pci)

# Print the module files (one path per line, deduplicated, dependency
# order) that must be insmod'ed for "${modules[@]}". Built-in or unknown
# modules are skipped: a custom kernel may have everything built in.
module_files() {
	[ -d "/lib/modules/$kver" ] || return 0
	local m
	for m in "${modules[@]}"; do
		/sbin/modprobe -S "$kver" --show-depends "$m" 2>/dev/null || true
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }'
}

mapfile -t kos < <(module_files)

stamp=$({
	sha256sum "${BASH_SOURCE[0]}" "$init_script" "$busybox"
	printf '%s\n' "$kver" "${kos[@]}"
	for ko in "${kos[@]}"; do stat -c '%n %s %Y' "$ko"; done
} | sha256sum | cut -d' ' -f1)

mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
flock 9

if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi

echo "mkinitramfs: building $out (${#kos[@]} modules)" >&2
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT

mkdir -p "$staging"/{bin,dev,proc,sys,newroot,lib/modules-initramfs}
cp "$busybox" "$staging/bin/busybox"
cp "$init_script" "$staging/init"
chmod 0755 "$staging/init" "$staging/bin/busybox"
ln -s busybox "$staging/bin/sh"    # interpreter of /init
# The kernel opens /dev/console before running /init; devtmpfs is not
# mounted yet at that point, so the node must be in the archive.
mknod -m 600 "$staging/dev/console" c 5 1
mknod -m 666 "$staging/dev/null" c 1 3

: >"$staging/lib/modules-initramfs/order"
for ko in "${kos[@]}"; do
	name=$(basename "$ko")
	case "$name" in
	*.ko.xz) xz -dc "$ko" >"$staging/lib/modules-initramfs/${name%.xz}"; name=${name%.xz} ;;
	*.ko.zst) zstd -qdc "$ko" >"$staging/lib/modules-initramfs/${name%.zst}"; name=${name%.zst} ;;
	*.ko.gz) gzip -dc "$ko" >"$staging/lib/modules-initramfs/${name%.gz}"; name=${name%.gz} ;;
	*) cp "$ko" "$staging/lib/modules-initramfs/$name" ;;
	esac
	echo "$name" >>"$staging/lib/modules-initramfs/order"
done

(cd "$staging" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --quiet -R 0:0) | gzip -1 >"$out.tmp"
mv -f "$out.tmp" "$out"
echo "$stamp" >"$out.stamp"
