#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run a test script inside a throw-away QEMU guest whose root filesystem is
# the host's "/" shared read-only over virtio-9p. See README.md.
#
#   vm-run.sh [options] -- SCRIPT [ARGS...]
#
# Exit status: 0 = script exited 0 and the kernel log is clean,
#              1 = script exited non-zero, 2 = no rc file (guest died/crashed
#              before the script finished), 3 = bad pattern in the kernel log,
#              124 = timeout (host- or guest-side), 125 = boot hung
#              (no test script within SROCE_VM_BOOT_TIMEOUT s), 64 = usage error.

set -eu

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tree=$(cd "$here/../../.." && pwd)

# Kernel log patterns that fail a run, and the helpers that apply them.
# shellcheck source=patterns.sh
. "$here/patterns.sh"

# Directories that the guest overlays with tmpfs: host files below them are
# invisible in the guest (keep in sync with initramfs-init.sh).
SHADOWED_DIRS=(/tmp /run /var/tmp /var/log /var/lib /var/cache /root /mnt)

usage() {
	cat >&2 <<EOF
usage: ${0##*/} [options] -- SCRIPT [ARGS...]
  --kver KVER           kernel release (/lib/modules/KVER, /boot/vmlinuz-KVER);
                        default: newest /boot/vmlinuz-*
  --kernel-image PATH   boot this bzImage instead of /boot/vmlinuz-KVER
  --results DIR         results directory (default: fresh mktemp -d)
  --timeout SECS        wall-clock limit, qemu is killed after it (default 600)
  --mem MB              guest memory (default 2048)
  --smp N               guest vCPUs (default 2)
  --append STR          extra kernel command line
  --name NAME           name for messages / hostname (default vm)
  --net-socket PATH     add a virtio-net NIC linked to a unix stream socket
  --net-role ROLE       server (listens on PATH; start first) or client
  --nic-dangling        add a virtio-net NIC attached to nothing (eth0)
env: SROCE_VM_KVM=1 use KVM instead of TCG; SROCE_VM_QEMU_EXTRA extra qemu args;
     SROCE_VM_NET=dgram links --net-socket guests by datagrams, not a stream
EOF
	exit 64
}

kver='' kernel_image='' results='' timeout_s=600 mem=2048 smp=2 append='' name=vm
net_socket='' net_role='' nic_dangling=0
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver=${2:?}; shift 2 ;;
	--kernel-image) kernel_image=${2:?}; shift 2 ;;
	--results) results=${2:?}; shift 2 ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--append) append=${2?}; shift 2 ;;
	--name) name=${2:?}; shift 2 ;;
	--net-socket) net_socket=${2:?}; shift 2 ;;
	--net-role) net_role=${2:?}; shift 2 ;;
	--nic-dangling) nic_dangling=1; shift ;;
	--) shift; break ;;
	-h | --help) usage ;;
	*) echo "${0##*/}: unknown option $1" >&2; usage ;;
	esac
done
[ $# -ge 1 ] || usage
script=$1
shift

msg() { echo "vm-run[$name]: $*" >&2; }
die() { msg "error: $*"; exit 64; }

case "$timeout_s" in '' | *[!0-9]*) die "bad --timeout $timeout_s" ;; esac
if [ -z "$kver" ]; then
	kver=$(find /boot -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' |
		sed 's/^vmlinuz-//' | sort -V | tail -n1)
fi
[ -n "$kver" ] || die "no kernel found in /boot, use --kver"
kernel_image=${kernel_image:-/boot/vmlinuz-$kver}
[ -r "$kernel_image" ] || die "kernel image $kernel_image not readable"
[ -d "/lib/modules/$kver" ] || msg "warning: /lib/modules/$kver missing (no module autoload)"

if [ -n "$net_socket" ]; then
	case "$net_role" in
	server) mac=52:54:00:12:34:01 ;;
	client) mac=52:54:00:12:34:02 ;;
	*) die "--net-socket needs --net-role server|client" ;;
	esac
elif [ -n "$net_role" ]; then
	die "--net-role needs --net-socket"
fi

# Results directory: the guest mounts it read-write at /mnt/results.
if [ -z "$results" ]; then
	results=$(mktemp -d "${TMPDIR:-/tmp}/sroce-vm.XXXXXX")
fi
mkdir -p "$results"
results=$(cd "$results" && pwd)
rm -rf "$results/.job"
rm -f "$results"/{rc,output.log,console.log,dmesg.log,timing}
mkdir -p "$results/.job"

# The script must be visible in the guest: paths under tmpfs-shadowed
# directories are copied into the results share.
script=$(realpath -e "$script") || die "script not found"
[ -x "$script" ] || die "$script is not executable"
guest_script=$script
# The source tree has its own share at its host path (see
# initramfs-init.sh), so scripts inside it are visible wherever it lives.
case "$script" in "$tree"/*) SHADOWED_DIRS=() ;; esac
for d in "${SHADOWED_DIRS[@]}"; do
	case "$script" in
	"$d"/*)
		cp -p "$script" "$results/.job/script"
		guest_script=/mnt/results/.job/script
		;;
	esac
done

# Guest-side timeout leaves time for boot and shutdown so that rc and the
# logs still get written when the script hangs.
guest_timeout=$((timeout_s * 9 / 10 - 20))
[ "$guest_timeout" -ge 10 ] || guest_timeout=10

{
	printf 'JOB_SCRIPT=%q\n' "$guest_script"
	printf 'JOB_TIMEOUT=%q\n' "$guest_timeout"
	printf 'JOB_TREE=%q\n' "$tree"
	printf 'JOB_ROLE=%q\n' "$net_role"
	printf 'JOB_NAME=%q\n' "$name"
} >"$results/.job/job.sh"
: >"$results/.job/args"
if [ $# -gt 0 ]; then
	printf '%s\0' "$@" >"$results/.job/args"
fi

initramfs=$tree/build/vm/initramfs-$kver.cpio.gz
"$here/mkinitramfs.sh" "$kver" "$initramfs"

cmdline="console=ttyS0,115200 slub_debug=FZPU panic=-1 log_buf_len=4M"
cmdline+=" mitigations=off random.trust_cpu=on"
# Under TCG every vCPU's TSC is QEMU's one virtual clock.  The kernel's
# checks of it against the emulated HPET (at boot, and by the clocksource
# watchdog later) still fail now and then, on emulation delays; the guest
# then falls back to the HPET for good, each clock read becomes an exit
# to QEMU, and everything runs slower and less evenly from that moment,
# tests and bench alike.  Seen in long boots on both kernels.
cmdline+=" tsc=reliable"
cmdline+=" sroce_vm.runner=$here/guest-run.sh sroce_vm.tree=$tree"
[ -z "$append" ] || cmdline+=" $append"

if [ "${SROCE_VM_KVM:-0}" = 1 ]; then
	accel=(-accel kvm -cpu host)
else
	accel=(-accel 'tcg,thread=multi' -cpu max)
fi

# Guest RAM is written once at start (prealloc), so that the host backs
# all of it with huge pages where it can (QEMU asks for THP): RAM faulted
# in later by the guest ended up partly on 4 KiB pages, and a guest whose
# buffers sat there ran up to 40% slower (the host's TLB misses, under
# nested paging on a cloud VM), in clusters of runs: the bench's 256-QP
# figure was bimodal.
# shellcheck disable=SC2054 # commas are qemu option syntax
qemu=(qemu-system-x86_64 -name "sroce-$name"
	-machine "${SROCE_VM_MACHINE:-q35},memory-backend=ram0" "${accel[@]}"
	-object "memory-backend-ram,id=ram0,size=${mem}M,prealloc=on"
	-m "$mem" -smp "$smp" -nodefaults -no-reboot -display none
	-serial "file:$results/console.log"
	-kernel "$kernel_image" -initrd "$initramfs" -append "$cmdline"
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
	-virtfs "local,path=$tree,mount_tag=srocetree,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$results,mount_tag=results,security_model=none,multidevs=remap"
	-device virtio-rng-pci)

if [ -n "$net_socket" ] && [ "${SROCE_VM_NET:-stream}" = dgram ]; then
	# Datagrams between two sockets: at MTU 9000 the stream netdev's
	# link stalled a guest's virtio-net TX queue for good, this one not.
	peer_role=client
	[ "$net_role" = server ] || peer_role=server
	rm -f "$net_socket.$net_role"
	qemu+=(-netdev "dgram,id=n0,local.type=unix,local.path=$net_socket.$net_role,remote.type=unix,remote.path=$net_socket.$peer_role"
		-device "virtio-net-pci,netdev=n0,mac=$mac")
elif [ -n "$net_socket" ]; then
	if [ "$net_role" = server ]; then
		rm -f "$net_socket"
		server=on
	else
		# The server guest creates the socket; wait for it.
		for _ in $(seq 120); do
			[ -S "$net_socket" ] && break
			sleep 0.5
		done
		[ -S "$net_socket" ] || die "socket $net_socket did not appear"
		server=off
	fi
	qemu+=(-netdev "stream,id=n0,server=$server,addr.type=unix,addr.path=$net_socket"
		-device "virtio-net-pci,netdev=n0,mac=$mac")
elif [ "$nic_dangling" = 1 ]; then
	# A virtio NIC (a netdev with a parent device) on a hub with no other
	# port: carrier up, and nothing it sends goes anywhere.
	qemu+=(-netdev hubport,id=n0,hubid=0
		-device "virtio-net-pci,netdev=n0,mac=52:54:00:12:34:99")
else
	qemu+=(-nic none)
fi
# shellcheck disable=SC2206 # word splitting intended
[ -z "${SROCE_VM_QEMU_EXTRA:-}" ] || qemu+=(${SROCE_VM_QEMU_EXTRA})

msg "kver=$kver results=$results"
start=$EPOCHREALTIME
# qemu runs in the background so that a TERM/INT sent to this script (e.g.
# by vm-pair.sh) can be forwarded to it.
timeout -k 5 "$timeout_s" "${qemu[@]}" </dev/null &
qemu_pid=$!
trap 'kill -TERM "$qemu_pid" 2>/dev/null || true' TERM INT HUP
# Boot watchdog: now and then a TCG guest hangs early in boot (seen once:
# console silent after "clocksource: Switched to clocksource hpet").  One
# that has not started its script within SROCE_VM_BOOT_TIMEOUT seconds is
# killed rather than left to use up the whole timeout; check.sh boots it
# again.
boot_tmo=${SROCE_VM_BOOT_TIMEOUT:-180}
rm -f "$results/boot-hung"
(
	for _ in $(seq "$boot_tmo"); do
		sleep 1
		[ -e "$results/output.log" ] && exit 0
		kill -0 "$qemu_pid" 2>/dev/null || exit 0
	done
	echo "no test script started within ${boot_tmo}s" >"$results/boot-hung"
	kill -TERM "$qemu_pid" 2>/dev/null
) &
watchdog_pid=$!
while :; do
	set +e
	wait "$qemu_pid"
	qemu_rc=$?
	set -e
	kill -0 "$qemu_pid" 2>/dev/null || break
done
trap - TERM INT HUP
kill "$watchdog_pid" 2>/dev/null || true
wait "$watchdog_pid" 2>/dev/null || true
elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')

# Kernel log check: console.log minus lines that are verbatim test output
# (so that a test printing e.g. "install" does not trip "stall"), plus the
# guest's full dmesg (which only has kernel messages and /dev/kmsg writes).
hits=$(
	if [ -f "$results/console.log" ]; then
		kernel_lines "$results/console.log" "$results/output.log" |
			bad_lines | sed 's/^/console: /'
	fi
	if [ -f "$results/dmesg.log" ]; then
		bad_lines <"$results/dmesg.log" | sed 's/^/dmesg: /'
	fi
	true
)

rc=
[ -f "$results/rc" ] && rc=$(cat "$results/rc")
timing=
[ -f "$results/timing" ] && timing=$(tr '\n' ' ' <"$results/timing")
msg "qemu exit $qemu_rc, script rc=${rc:-none}, wall ${elapsed}s, $timing"

if [ -n "$hits" ]; then
	msg "bad patterns in kernel log:"
	printf '%s\n' "$hits" >&2
fi

if [ -e "$results/boot-hung" ]; then
	msg "FAIL: boot hung, $(cat "$results/boot-hung") (see $results/console.log)"
	exit 125
fi
if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
	msg "FAIL: timeout after ${timeout_s}s (see $results/console.log)"
	exit 124
fi
if [ -n "$hits" ]; then
	msg "FAIL: kernel log not clean (see $results/console.log)"
	exit 3
fi
if [ -z "$rc" ]; then
	msg "FAIL: no rc file, guest did not finish (see $results/console.log)"
	exit 2
fi
if [ "$rc" = 124 ]; then
	msg "FAIL: script timed out in the guest after ${guest_timeout}s"
	exit 124
fi
if [ "$rc" != 0 ]; then
	msg "FAIL: script exited with $rc (see $results/output.log)"
	exit 1
fi
msg "PASS"
exit 0
