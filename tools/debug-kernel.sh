#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build a 6.1 guest kernel with KASAN, lockdep, kmemleak, UBSAN and
# DEBUG_ATOMIC_SLEEP from Debian's linux-source-6.1, for `make check-debug`.
# Everything the VM harness needs is built in; the result is cached in
# OUTDIR (default /var/cache/sroce/debug-kernel): bzImage, kernel.release,
# and the modules under /lib/modules/<release> (host files only: nothing is
# loaded on the host).
set -eu
out=${1:-/var/cache/sroce/debug-kernel}
src=$out/src
bld=$out/build
mkdir -p "$out"
command -v flex >/dev/null && command -v bison >/dev/null ||
	apt-get install -y -q flex bison libelf-dev bc
[ -f /usr/src/linux-source-6.1.tar.xz ] || apt-get install -y -q linux-source-6.1
if [ ! -d "$src" ]; then
	mkdir -p "$src"
	tar -C "$src" --strip-components=1 -xJf /usr/src/linux-source-6.1.tar.xz
fi
cat >"$out/extra.config" <<'CFG'
CONFIG_INFINIBAND=y
CONFIG_INFINIBAND_USER_MAD=y
CONFIG_INFINIBAND_USER_ACCESS=y
CONFIG_INFINIBAND_ADDR_TRANS=y
CONFIG_RDMA_RXE=m
CONFIG_NET_9P=y
CONFIG_NET_9P_VIRTIO=y
CONFIG_9P_FS=y
CONFIG_VIRTIO=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_VETH=y
# t_spoof, t_peerfuzz: three namespaces on a flooding bridge
CONFIG_BRIDGE=y
CONFIG_VXLAN=y
CONFIG_NET_NS=y
CONFIG_IPV6=y
CONFIG_NET_SCH_NETEM=y
CONFIG_NET_SCH_TBF=y
CONFIG_NET_SCH_RED=y
CONFIG_NET_SCH_FQ_CODEL=y
# t_loss: a prio qdisc and a u32 filter steer RoCEv2 packets to netem
CONFIG_NET_SCH_PRIO=y
CONFIG_NET_CLS_U32=y
# t_cc: the congested switch counts per source at an ingress qdisc, and
# marks CE with gact, pedit and csum
CONFIG_NET_SCH_INGRESS=y
CONFIG_NET_CLS_ACT=y
CONFIG_NET_ACT_GACT=y
CONFIG_NET_ACT_PEDIT=y
CONFIG_NET_ACT_CSUM=y
CONFIG_DEVTMPFS=y
CONFIG_TMPFS=y
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_MODULE_SIG=n
CONFIG_KASAN=y
CONFIG_KASAN_GENERIC=y
CONFIG_KASAN_INLINE=y
CONFIG_PROVE_LOCKING=y
CONFIG_DEBUG_KMEMLEAK=y
CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF=n
CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN=y
CONFIG_UBSAN=y
CONFIG_UBSAN_BOUNDS=y
CONFIG_DEBUG_ATOMIC_SLEEP=y
CONFIG_DEBUG_LIST=y
CONFIG_SLUB_DEBUG=y
CONFIG_DRM=n
CONFIG_SOUND=n
CONFIG_USB_SUPPORT=n
CONFIG_WLAN=n
CONFIG_WIRELESS=n
CONFIG_DEBUG_INFO_NONE=y
CONFIG_DEBUG_INFO_BTF=n
CONFIG_LOCALVERSION="-sroce-debug"
CFG
cd "$src"
make O="$bld" defconfig kvm_guest.config
scripts/kconfig/merge_config.sh -m -O "$bld" "$bld/.config" "$out/extra.config"
make O="$bld" olddefconfig
make O="$bld" -j"$(nproc)" bzImage modules
make O="$bld" modules_install INSTALL_MOD_STRIP=1
cp "$bld/arch/x86/boot/bzImage" "$out/bzImage"
cp "$bld/include/config/kernel.release" "$out/kernel.release"
