# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Shared helpers for the guest-side test scripts (sourced, bash).  Tests
# print TAP; the host counts "ok"/"not ok" lines (tools/testing/vm/tap.sh).
# Every assertion checks a real outcome; waits poll for a state with a
# generous bound and are never timing assertions.
#
# The plan: a suite whose number of checks is fixed declares it first
# (tap_plan N), and every check it does not reach (a crash, a timeout,
# an early exit) counts as a failure; a suite whose count depends on what
# it finds gets its plan from tap_done at the end, and one that never
# gets there fails as a whole.

TAP_N=0
TAP_FAILED=0
TAP_PLAN=
TAP_LAST=$EPOCHREALTIME

# Note steps that took long: where the time goes when a guest run is slow.
tap_time() {
	local dt
	dt=$(awk -v a="$TAP_LAST" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a }')
	[ "$dt" -ge 3 ] && echo "# (${dt}s)"
	TAP_LAST=$EPOCHREALTIME
}

echo "TAP version 13"

# tap_plan N: the suite runs N checks (before the first one).
tap_plan() {
	TAP_PLAN=$1
	echo "1..$1"
}

ok() {
	tap_time
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $*"
}

not_ok() {
	tap_time
	TAP_N=$((TAP_N + 1))
	TAP_FAILED=$((TAP_FAILED + 1))
	echo "not ok $TAP_N - $*"
}

# skip "description" "reason": a check that cannot run here (TAP's SKIP
# directive): counted apart, never as a pass.
skip() {
	tap_time
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $1 # SKIP $2"
}

# check "description" command...: one TAP line from a command's status.
# A command that cannot check anything here (kmemleak_sroce on a kernel
# without kmemleak) sets TAP_SKIP_WHY and returns 77: a SKIP line.
#
# Its locals have names no caller uses: a command run through eval sees
# them (bash scopes dynamically), and t_mcast's checks read their own $rc.
check() {
	local __check_desc=$1 __check_rc
	shift
	TAP_SKIP_WHY=
	"$@"
	__check_rc=$?
	if [ $__check_rc -eq 0 ]; then
		ok "$__check_desc"
	elif [ $__check_rc -eq 77 ] && [ -n "$TAP_SKIP_WHY" ]; then
		skip "$__check_desc" "$TAP_SKIP_WHY"
	else
		not_ok "$__check_desc"
	fi
	TAP_SKIP_WHY=
}

# todo "description" "reason": a failed check of a feature known to be
# missing: TAP's "# TODO reason" directive; it does not fail the script
# (check.sh counts it as a known gap).
todo() {
	tap_time
	TAP_N=$((TAP_N + 1))
	echo "not ok $TAP_N - $1 # TODO $2"
}

# check_todo "description" "reason" command...: a check of a feature known
# to be missing: ok, or a todo line.
check_todo() {
	local desc=$1 why=$2
	shift 2
	if "$@"; then
		ok "$desc"
	else
		todo "$desc" "$why"
	fi
}

diag() {
	echo "# $*"
}

# tap_done: the end of the suite: the plan (if not declared up front),
# and the exit status.
tap_done() {
	if [ -z "$TAP_PLAN" ]; then
		echo "1..$TAP_N"
	elif [ "$TAP_N" -ne "$TAP_PLAN" ]; then
		diag "planned $TAP_PLAN checks, ran $TAP_N"
		return 1
	fi
	[ "$TAP_FAILED" -eq 0 ]
}

# wait_for SECONDS command...: poll until the command succeeds.
wait_for() {
	local limit=$1 i
	shift
	for ((i = 0; i < limit * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

SROCE_KO=${SROCE_KO:-$SROCE_TREE/build/$(uname -r)/sroce.ko}

sroce_deps() {
	modprobe ib_core && modprobe ib_uverbs && modprobe udp_tunnel &&
		modprobe ip6_udp_tunnel
}

sroce_load() {
	sroce_deps && insmod "$SROCE_KO"
}

sroce_loaded() {
	[ -d /sys/module/sroce ]
}

# sroce_unload: rmmod sroce.  A refusal is a failure of whatever check
# runs this (a reference the driver or a test left behind: a leak): what
# holds the module is printed.
sroce_unload() {
	local m=/sys/module/sroce h
	rmmod sroce && return 0
	h=("$m"/holders/*)
	diag "rmmod sroce refused: refcnt $(cat $m/refcnt 2>/dev/null)," \
		"holders: ${h[*]##*/}"
	return 1
}

# in_ns NS command...: run in a namespace ("" = the initial one).
in_ns() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi
}

# pyrun DESC NS CMD...: run a pyverbs script (in namespace NS, or here
# if NS is empty) and take its "ok - " and "not ok - " lines as TAP, and
# "skip - desc # SKIP why" and "todo - desc # TODO why" as skip and todo;
# it must end with "done".  Its output is left in PYRUN_OUT.
PYRUN_OUT=
pyrun() {
	local desc=$1 ns=$2 out line rc
	shift 2
	out=$(in_ns "$ns" timeout 300 python3 "$@" 2>&1)
	rc=$?
	# shellcheck disable=SC2034  # (for the caller)
	PYRUN_OUT=$out
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		"skip - "*" # SKIP "*)
			line=${line#skip - }
			skip "${line% # SKIP *}" "${line##* # SKIP }" ;;
		"todo - "*" # TODO "*)
			line=${line#todo - }
			todo "${line% # TODO *}" "${line##* # TODO }" ;;
		esac
	done <<<"$out"
	if [ $rc -ne 0 ] || ! grep -q 'done$' <<<"$out"; then
		not_ok "$desc ran to the end (rc $rc)"
		tail -n 5 <<<"$out" | sed 's/^/# /'
	fi
}

# udp_bound NS: is UDP 4791 (0x12B7) bound in namespace NS?
udp_bound() {
	in_ns "$1" cat /proc/net/udp /proc/net/udp6 2>/dev/null |
		awk '{print $2}' | grep -qi ':12B7$'
}

ibdev_exists() {
	[ -e "/sys/class/infiniband/$1" ]
}

port_state() {
	cat "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null
}

# gid_present DEV ADDR: is ADDR (IPv6 or IPv4-mapped form) a RoCE v2 GID?
gid_present() {
	local d=/sys/class/infiniband/$1/ports/1 g
	# One grep over the 1024-entry table; then check each hit's type.
	for g in $(grep -lx "$2" "$d"/gids/* 2>/dev/null); do
		[ "$(cat "$d/gid_attrs/types/${g##*/}" 2>/dev/null)" = "RoCE v2" ] &&
			return 0
	done
	return 1
}

# hw_snap ARRAY DEV: every hw counter of DEV's port 1 into the
# associative array ARRAY, as ARRAY[DEV.counter], with one rdma call.
hw_snap() {
	local -n hw_arr=$1
	local dev=$2
	# shellcheck disable=SC2046
	set -- $(rdma statistic show link "$dev/1")
	shift 2
	while [ $# -ge 2 ]; do
		# shellcheck disable=SC2034  # (a nameref)
		hw_arr[$dev.$1]=$2
		shift 2
	done
}

# hw_delta BEFORE AFTER DEV COUNTER: growth of a counter between two
# hw_snap arrays, or "absent" when the device has no such counter.
hw_delta() {
	local -n hw_b=$1 hw_a=$2
	local k=$3.$4
	local v0=${hw_b[$k]:-} v1=${hw_a[$k]:-}
	if [ -z "$v0" ] || [ -z "$v1" ]; then
		echo absent
	else
		echo $((v1 - v0))
	fi
}

# hw_stat DEV COUNTER: one sroce hw counter of port 1.
hw_stat() {
	rdma statistic show link "$1/1" |
		tr ' ' '\n' | awk -v k="$2" '$0 == k { getline; print; exit }'
}

# Slab accounting: active objects per cache, after dropping caches.
# vmap_area is left out: vfree() releases those lazily, in batches, so its
# count drifts without a leak.  So are the caches of process address spaces
# (anon_vma*, vm_area_struct, mm_struct): they follow whatever user
# processes happen to be alive, and a driver cannot leak them on its own.  Live vmalloc areas are counted instead, from
# /proc/vmallocinfo (minus its lazily freed "unpurged" entries), as the
# pseudo-cache "vmalloc_live".
#
# The shrink files stay open from the first snapshot on: every open of a
# sysfs file allocates a kernfs_open_node that its last close frees through
# kfree_rcu(), which batches for up to 5 s, so reopening ~200 of them per
# snapshot showed as ~200 objects of "growth" in kmalloc-96.
declare -A SLAB_SHRINK_FD
slab_snapshot() {
	local f fd
	sync
	echo 3 > /proc/sys/vm/drop_caches
	# SLUB counts the free objects of per-CPU slabs as active: flush
	# those first, or a burst of traffic shows as "growth" of caches
	# like skbuff_head_cache.
	for f in /sys/kernel/slab/*/shrink; do
		fd=${SLAB_SHRINK_FD[$f]:-}
		# (a cache destroyed and created again, as a module's are
		# on reload, leaves the old file dead: reopen it)
		if [ -n "$fd" ] && ! { echo 1 >&"$fd"; } 2>/dev/null; then
			exec {fd}>&-
			fd=
		fi
		[ -n "$fd" ] && continue
		{ exec {fd}>"$f"; } 2>/dev/null || continue
		SLAB_SHRINK_FD[$f]=$fd
		{ echo 1 >&"$fd"; } 2>/dev/null
	done
	sleep 1
	# Caches that follow processes' address spaces (vma_lock: one per
	# VMA, 6.4+) move with whatever user space runs meanwhile.
	{
		awk 'NR > 2 && $1 !~ /^(vmap_area|anon_vma|anon_vma_chain|vm_area_struct|vma_lock|mm_struct)$/ {
			print $1, $2 }' /proc/slabinfo
		echo "vmalloc_live $(grep -vc unpurged /proc/vmallocinfo)"
	} | sort
}

# slab_grown BEFORE AFTER LIMIT: print caches that grew by >= LIMIT objects.
slab_grown() {
	join "$1" "$2" | awk -v lim="$3" '$3 - $2 >= lim { print $1, $2, "->", $3 }'
}

# On a KASAN kernel freed objects sit in KASAN's quarantine and still count
# as active in /proc/slabinfo, so slab deltas say nothing there; kmemleak
# (present on the same debug kernel) is the leak check instead.
kasan_kernel() {
	if [ -z "${KASAN_KERNEL-}" ]; then
		KASAN_KERNEL=0
		# kallsyms first: a busy boot's log may have wrapped.
		grep -qw __asan_load8 /proc/kallsyms 2>/dev/null ||
			dmesg | grep -q 'KernelAddressSanitizer initialized' &&
			KASAN_KERNEL=1
	fi
	[ "$KASAN_KERNEL" = 1 ]
}

# hang_bound SECS: how long a step may take before it counts as hung:
# SECS, four times that on a KASAN + lockdep kernel (make check-debug),
# which does the same work several times slower.
hang_bound() {
	if kasan_kernel; then echo $(($1 * 4)); else echo "$1"; fi
}

# slab_settled BEFORE AFTER LIMIT [TRIES]: the caches that grew by >= LIMIT,
# once deferred frees have had their chance (AFTER is re-taken meanwhile,
# up to TRIES times, 5 s apart; default 3).
slab_settled() {
	local grown tries=0
	grown=$(slab_grown "$1" "$2" "$3")
	while [ -n "$grown" ] && [ $tries -lt "${4:-3}" ]; do
		# Some caches (radix_tree_node, ...) are freed through RCU
		# callbacks, and a deleted namespace is dismantled by a work
		# item: measure again once those have run, same bound.  A leak
		# stays.
		sleep 5
		slab_snapshot >"$2"
		grown=$(slab_grown "$1" "$2" "$3")
		tries=$((tries + 1))
	done
	[ -n "$grown" ] && echo "$grown"
	true
}

# slab_check DESC BEFORE AFTER LIMIT [TRIES]: one TAP line.
slab_check() {
	local grown
	if kasan_kernel; then
		skip "$1" "KASAN kernel: freed objects wait in quarantine (kmemleak checks instead)"
		return
	fi
	grown=$(slab_settled "$2" "$3" "$4" "${5-}")
	if [ -z "$grown" ]; then
		ok "$1"
	else
		not_ok "$1"
		diag "grown: $(tr '\n' ' ' <<<"$grown")"
		slab_owners "$grown"
	fi
}

# slab_owners GROWN: where the live objects of the caches listed (first
# word of each line) were allocated, from SLUB's user tracking (the
# guests boot with slub_debug=...U; debugfs has the traces), the biggest
# call sites first, each with the top of its stack.
slab_owners() {
	local c t
	[ -d /sys/kernel/debug/slab ] ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	for c in $(awk '{ print $1 }' <<<"$1"); do
		t=/sys/kernel/debug/slab/$c/alloc_traces
		[ -r "$t" ] || continue
		awk -v c="$c" '/^ *[0-9]+ / { n++; s = 0; if (n <= 3) print "# " c ": " $0; next }
			       n <= 3 && s < 5 && NF { s++; print "#     " $1 }' "$t"
	done
}

# kmsg_mark / kmsg_since: count kernel log lines after a point.
kmsg_mark() {
	dmesg | wc -l
}

kmsg_since() {
	dmesg | tail -n +"$(($1 + 1))"
}

# veth_pair A B [NS_B]: a veth pair with B optionally moved into NS_B.
veth_pair() {
	ip link add name "$1" type veth peer name "$2" || return 1
	if [ -n "${3:-}" ]; then
		ip link set "$2" netns "$3" || return 1
		ip -n "$3" link set "$2" up
	else
		ip link set "$2" up
	fi
	ip link set "$1" up
}

# kmemleak_sroce: on a kernel with kmemleak (the debug kernel), scan and
# print unreferenced objects allocated on a path through sroce.  Returns 0
# when there are none; without kmemleak (every distro kernel), 77 with
# TAP_SKIP_WHY set: check() prints a SKIP line, not a pass.
kmemleak_sroce() {
	local k=/sys/kernel/debug/kmemleak
	if [ ! -w "$k" ]; then
		TAP_SKIP_WHY="no kmemleak in this kernel"
		return 77
	fi
	echo scan >"$k"
	sleep 5
	echo scan >"$k"
	! grep -B2 -A20 'unreferenced object' "$k" | grep -q 'sroce'
}
