#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Install everything sroce needs to build and test, from Debian's archive:
# both Debian 12 kernels (6.1 and the newest 6.12 whose image and headers
# are both published) with headers, qemu, busybox, rdma-core and friends.
#
#   tools/deps.sh              install/upgrade unconditionally
#   tools/deps.sh --if-missing do nothing when everything is already there
set -eu

PKGS="linux-image-amd64 linux-headers-amd64 qemu-system-x86 busybox-static
rdma-core ibverbs-utils ibverbs-providers perftest rdmacm-utils
python3-pyverbs iproute2 kmod sparse iperf3 clang xz-utils
libibverbs-dev librdmacm-dev tcpdump cpio gzip procps jq valgrind"

have_all() {
	local p
	for p in $PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || return 1
	done
	ls /lib/modules/6.12.*+deb12-amd64/build/Makefile >/dev/null 2>&1 ||
		return 1
	[ -x "$(checkpatch_path)" ] || return 1
}

# checkpatch.pl ships in linux-source-6.1; we unpack only that script.
checkpatch_path() {
	echo /var/cache/sroce/checkpatch/scripts/checkpatch.pl
}

install_checkpatch() {
	local dst=/var/cache/sroce/checkpatch
	[ -x "$dst/scripts/checkpatch.pl" ] && return 0
	mkdir -p "$dst"
	tar -C "$dst" --strip-components=1 -xJf /usr/src/linux-source-6.1.tar.xz \
		--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
}

# Newest 6.12 flavour whose image and headers are both in the archive.
pick_612() {
	local v
	for v in $(apt-cache search --names-only \
		   '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' |
		   sed -n 's/^linux-image-\(6\.12\.[0-9]*+deb12-amd64\) .*/\1/p' |
		   sort -rV); do
		if apt-cache show "linux-headers-$v" >/dev/null 2>&1; then
			echo "$v"
			return 0
		fi
	done
	return 1
}

if [ "${1:-}" = --if-missing ] && have_all; then
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
k612=$(pick_612) || { echo "deps: no 6.12 kernel with headers found" >&2; exit 1; }
# A 6.12 already installed is fine; otherwise install the newest pair.
if ! ls /lib/modules/6.12.*+deb12-amd64/build/Makefile >/dev/null 2>&1; then
	PKGS="$PKGS linux-image-$k612 linux-headers-$k612"
fi
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $PKGS linux-source-6.1
install_checkpatch
