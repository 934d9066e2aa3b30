#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# 20 cycles of module load/unload (with a device each time) and 20 cycles of
# link add/delete; slab usage must come back to its baseline.
set -u
. "$(dirname "$0")/lib.sh"

N=20
# Per batch (three): the runs and the slab baseline; then the unload and
# kmemleak.
tap_plan 8
sroce_deps
veth_pair v0 v1
ip addr add 198.18.0.1/24 dev v0
ip -6 addr add 2001:db8::1/64 dev v0 nodad

one_load_cycle() {
	insmod "$SROCE_KO" &&
		rdma link add sroce0 type sroce netdev v0 &&
		ibv_devinfo -d sroce0 >/dev/null &&
		rmmod sroce && ! ibdev_exists sroce0
}

one_link_cycle() {
	rdma link add sroce0 type sroce netdev v0 &&
		wait_for 10 gid_present sroce0 0000:0000:0000:0000:0000:ffff:c612:0001 &&
		ibv_devinfo -d sroce0 >/dev/null &&
		rdma link delete sroce0 &&
		wait_for 10 eval '! ibdev_exists sroce0'
}

one_netdev_cycle() {
	veth_pair x0 x1 && rdma link add sroce_x type sroce netdev x0 &&
		ip link del x0 && wait_for 10 eval '! ibdev_exists sroce_x'
}

before=$(mktemp)
after=$(mktemp)

# run_batch FN: N runs of FN; prints how many failed.
run_batch() {
	local fails=0 i
	for i in $(seq 1 $N); do
		"$1" || fails=$((fails + 1))
	done
	echo $fails
}

# batch WHAT FN: N runs of FN, then one TAP line for the runs and one for
# the slab baseline.  A leak grows every cache it leaks from by >= N with
# every batch; something else refilling a cache meanwhile (seen once on
# 6.12, cause unknown) does not do it twice.  So a cache that grew is only
# a failure if a second batch grows it by >= N again.
batch() {
	local what=$1 fn=$2 fails grown again

	slab_snapshot >"$before"
	fails=$(run_batch "$fn")
	check "$N $what succeeded ($fails failed)" test "$fails" -eq 0
	slab_snapshot >"$after"
	if kasan_kernel; then
		skip "slab back to baseline after $N $what" \
			"KASAN kernel: freed objects wait in quarantine (kmemleak checks instead)"
		return
	fi
	grown=$(slab_settled "$before" "$after" $N)
	if [ -n "$grown" ]; then
		diag "grown after the first batch: $(tr '\n' ' ' <<<"$grown")"
		cp "$after" "$before"
		fails=$(run_batch "$fn")
		slab_snapshot >"$after"
		again=$(slab_settled "$before" "$after" $N)
		[ -n "$again" ] &&
			diag "grown after a second batch: $(tr '\n' ' ' <<<"$again")"
		grown=$(join <(awk '{ print $1 }' <<<"$grown" | sort) \
			     <(awk '{ print $1 }' <<<"$again" | sort))
	fi
	check "slab back to baseline after $N $what (no cache grows by >= $N in each of two batches)" \
		test -z "$grown"
}

one_load_cycle	# warm-up: first-use allocations in ib_core are not leaks
batch "load/add/unload cycles" one_load_cycle

sroce_load
one_link_cycle
batch "link add/delete cycles" one_link_cycle
batch "netdev-removal teardowns" one_netdev_cycle

check "module unloads after the cycles" sroce_unload
check "kmemleak: no unreferenced object allocated through sroce" kmemleak_sroce
if [ -r /sys/kernel/debug/kmemleak ]; then
	grep -B2 -A20 'unreferenced object' /sys/kernel/debug/kmemleak |
		grep -B10 -A10 sroce | sed 's/^/# /' | head -60
fi
rm -f "$before" "$after"
tap_done
