#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Guest-side runner of the sroce test VM. Runs as PID 1 right after the
# initramfs switch_root'ed into the host's root (shared read-only over 9p),
# so it uses the host's full userland.
#
# It reads the job description written by vm-run.sh into the results share
# (/mnt/results/.job/job.sh: shell variable assignments, and
# /mnt/results/.job/args: NUL-separated script arguments), sets up a minimal
# environment, runs the test script under a timeout with its output going to
# /mnt/results/output.log and the console, writes the script's exit status to
# /mnt/results/rc, saves dmesg to /mnt/results/dmesg.log and powers off.

set -u

# Busybox applets are appended to PATH as a fallback for tools the host
# lacks (e.g. ping, nc); host tools take precedence.
bbdir=/run/sroce-vm/busybox
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$bbdir
export HOME=/root LANG=C.UTF-8 TERM=dumb
RESULTS=/mnt/results
export RESULTS
cd /

log() { echo "sroce-vm: $*"; }

power_off() {
	sync
	# sysrq works regardless of kernel.sysrq; if the power-off does not
	# happen, PID 1 exits, the kernel panics and panic=-1 + qemu's
	# -no-reboot end the VM anyway.
	echo o >/proc/sysrq-trigger
	sleep 30
	exit 1
}

job=$RESULTS/.job
if [ ! -r "$job/job.sh" ]; then
	log "FATAL: $job/job.sh missing"
	power_off
fi
# Variables provided by the host: JOB_SCRIPT, JOB_TIMEOUT, JOB_TREE,
# JOB_ROLE, JOB_NAME.
JOB_ROLE='' JOB_NAME=vm
# shellcheck source=/dev/null
. "$job/job.sh"
args=()
if [ -s "$job/args" ]; then
	mapfile -d '' -t args <"$job/args"
fi

{ mkdir -p "$bbdir" && /bin/busybox --install -s "$bbdir"; } 2>/dev/null || true
hostname "sroce-${JOB_ROLE:-$JOB_NAME}" 2>/dev/null || true
ip link set lo up

# Poor man's coldplug: there is no udev, so load the drivers of the virtio
# devices present at boot (virtio_net for the two-guest link, virtio_rng).
# Other devices (floppy, ata, kvm, ...) are deliberately left alone: loading
# them costs seconds under TCG. Later request_module() calls (veth,
# rdma_rxe, ...) go to /sbin/modprobe of the host root, which reads the
# host's /lib/modules/$(uname -r).
cat /sys/bus/virtio/devices/*/modalias 2>/dev/null | sort -u |
	xargs -r modprobe -qab 2>/dev/null || true

export SROCE_TREE=$JOB_TREE
SROCE_KVER=$(uname -r)
export SROCE_KVER
export SROCE_KO=$SROCE_TREE/build/$SROCE_KVER/sroce.ko
export SROCE_ROLE=$JOB_ROLE
# Name of the first (only) virtio-net interface, if any.
SROCE_NETDEV=
for dev in /sys/class/net/*; do
	[ -e "$dev/device" ] || continue
	SROCE_NETDEV=${dev##*/}
	break
done
export SROCE_NETDEV

cd "$SROCE_TREE" || cd /
uptime_s=$(cut -d' ' -f1 /proc/uptime)
# Keep test names off the console line: the host greps the console.
log "starting test script (uptime ${uptime_s}s, limit ${JOB_TIMEOUT}s)"

# timeout(1) puts the script in its own process group and signals the
# whole group on expiry.
# stdout+stderr go to output.log and to the console (our stdout).
timeout -k 10 "$JOB_TIMEOUT" "$JOB_SCRIPT" "${args[@]}" </dev/null 2>&1 |
	tee "$RESULTS/output.log"
rc=${PIPESTATUS[0]}

uptime_e=$(cut -d' ' -f1 /proc/uptime)
log "script exited with $rc (uptime ${uptime_e}s)"
dmesg >"$RESULTS/dmesg.log" 2>&1 || true
echo "boot_to_script=${uptime_s}s script=$(awk -v a="$uptime_s" -v b="$uptime_e" \
	'BEGIN { printf "%.1f", b - a }')s" >"$RESULTS/timing"
echo "$rc" >"$RESULTS/rc"
power_off
