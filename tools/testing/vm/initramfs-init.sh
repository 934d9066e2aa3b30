#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# /init of the sroce test-VM initramfs (run by busybox sh, PID 1).
#
# Loads the virtio/9p modules shipped in /lib/modules-initramfs (in the
# order given by /lib/modules-initramfs/order), mounts the host's "/"
# (9p tag "hostroot") read-only at /newroot, puts tmpfs over the directories
# that must be writable, mounts the read-write results share (9p tag
# "results") at /mnt/results and then switch_root's into the guest-side
# runner named by "sroce_vm.runner=" on the kernel command line.
#
# Any failure drops to a shell-less power-off after printing a message, so
# the host sees a missing rc file rather than a hung VM.

/bin/busybox --install -s /bin
export PATH=/bin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1

die() {
	echo "sroce-vm-init: FATAL: $*"
	echo o >/proc/sysrq-trigger
	sleep 10
	exit 1
}

# Kernel command line options for us: sroce_vm.runner=PATH, sroce_vm.msize=N,
# sroce_vm.tree=PATH (the source tree, shared on its own as 9p tag srocetree)
runner=
tree=
msize=512000
# shellcheck disable=SC2013 # words, not lines
for opt in $(cat /proc/cmdline); do
	case "$opt" in
	sroce_vm.runner=*) runner=${opt#sroce_vm.runner=} ;;
	sroce_vm.msize=*) msize=${opt#sroce_vm.msize=} ;;
	sroce_vm.tree=*) tree=${opt#sroce_vm.tree=} ;;
	esac
done
[ -n "$runner" ] || die "no sroce_vm.runner= on the kernel command line"

# Load modules. Failures are tolerated: a custom kernel may have them
# built in (insmod then fails with "File exists" or the file is absent).
if [ -f /lib/modules-initramfs/order ]; then
	while read -r ko; do
		[ -n "$ko" ] || continue
		insmod "/lib/modules-initramfs/$ko" 2>/dev/null ||
			echo "sroce-vm-init: note: insmod $ko failed (built in?)"
	done </lib/modules-initramfs/order
fi

mkdir -p /newroot
mount -t 9p -o "ro,trans=virtio,version=9p2000.L,msize=$msize,cache=loose" \
	hostroot /newroot || die "cannot mount 9p root (tag hostroot)"

# Writable scratch directories (the host root is read-only).
for d in tmp run var/tmp var/log var/lib var/cache root mnt; do
	[ -d "/newroot/$d" ] || continue
	case "$d" in tmp | var/tmp) mode=1777 ;; root) mode=0700 ;; *) mode=0755 ;; esac
	mount -t tmpfs -o "mode=$mode,size=50%" tmpfs "/newroot/$d" ||
		die "cannot mount tmpfs on /$d"
done
mkdir -p /newroot/run/lock /newroot/run/netns /newroot/mnt/results

# The source tree has a share of its own, mounted at its host path: a CI
# clone may live under a directory the guest shadows with tmpfs (/tmp).
if [ -n "$tree" ]; then
	mkdir -p "/newroot$tree" 2>/dev/null
	mount -t 9p -o "ro,trans=virtio,version=9p2000.L,msize=$msize,cache=loose" \
		srocetree "/newroot$tree" || die "cannot mount 9p tree share at $tree"
fi

# Results share: read-write, uncached so that everything written is on the
# host the moment the guest powers off.
mount -t 9p -o "trans=virtio,version=9p2000.L,msize=$msize" \
	results /newroot/mnt/results || die "cannot mount 9p results share"

# Move the API filesystems into the new root and add the extras.
mount --move /dev /newroot/dev
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /newroot/dev/pts
mount -t tmpfs -o mode=1777 tmpfs /newroot/dev/shm
mount -t debugfs debugfs /newroot/sys/kernel/debug 2>/dev/null || true
mount -t tracefs tracefs /newroot/sys/kernel/tracing 2>/dev/null || true
mount -t configfs configfs /newroot/sys/kernel/config 2>/dev/null || true

[ -x "/newroot$runner" ] || die "runner $runner not found/executable in guest root"
exec switch_root /newroot "$runner"
