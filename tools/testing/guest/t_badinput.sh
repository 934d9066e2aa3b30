#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Bad input to `rdma link add`: each case returns its errno, logs at most
# one line, and leaves nothing behind.  Also: sroce beside rdma_rxe.
set -u
. "$(dirname "$0")/lib.sh"

sroce_load || { not_ok "load sroce"; tap_done; exit 1; }
veth_pair v0 v1
veth_pair v2 v3

# expect_fail DESC ERRTEXT MAXLINES cmd...: fails, says ERRTEXT, logs <= MAX.
expect_fail() {
	local desc=$1 err=$2 max=$3 mark out lines
	shift 3
	mark=$(kmsg_mark)
	if out=$("$@" 2>&1); then
		not_ok "$desc: unexpectedly succeeded"
		return
	fi
	lines=$(kmsg_since "$mark" | grep -c 'sroce')
	diag "$desc: '$out' ($lines sroce log lines)"
	if grep -q "$err" <<<"$out" && [ "$lines" -le "$max" ]; then
		ok "$desc -> $err"
	else
		not_ok "$desc -> expected '$err', <= $max log lines"
	fi
}

before=$(mktemp)
after=$(mktemp)
# Warm up every code path once so first-use allocations are not leaks.
for i in 1 2; do
	rdma link add sroce9 type sroce netdev nosuch 2>/dev/null
	rdma link add sroce9 type sroce netdev lo 2>/dev/null
done
slab_snapshot >"$before"

for round in $(seq 1 20); do
	quiet=1
	[ "$round" = 1 ] && quiet=0
	if [ "$quiet" = 0 ]; then
		expect_fail "unknown netdev" "No such device" 0 \
			rdma link add sroce0 type sroce netdev nosuch
		expect_fail "non-Ethernet netdev (lo)" "Invalid argument" 1 \
			rdma link add sroce0 type sroce netdev lo
		ip link set v2 mtu 300
		expect_fail "netdev MTU below 256 + headers" "Invalid argument" 1 \
			rdma link add sroce0 type sroce netdev v2
		ip link set v2 mtu 1500
		check "first device on v0" rdma link add sroce0 type sroce netdev v0
		expect_fail "duplicate device name" "File exists" 1 \
			rdma link add sroce0 type sroce netdev v2
		expect_fail "second device on the same netdev" "File exists" 1 \
			rdma link add sroce1 type sroce netdev v0
		check "no stray device after the failures" \
			eval '! ibdev_exists sroce1 && [ "$(ls /sys/class/infiniband | wc -l)" = 1 ]'
		rdma link delete sroce0
	else
		rdma link add sroce0 type sroce netdev nosuch 2>/dev/null
		rdma link add sroce0 type sroce netdev lo 2>/dev/null
		rdma link add sroce0 type sroce netdev v0
		rdma link add sroce0 type sroce netdev v2 2>/dev/null
		rdma link add sroce1 type sroce netdev v0 2>/dev/null
		rdma link delete sroce0
	fi
done
wait_for 10 eval '! ibdev_exists sroce0'
slab_snapshot >"$after"
slab_check "20 rounds of bad input: no slab cache grew by >= 20 objects" "$before" "$after" 20

# --- beside rdma_rxe -------------------------------------------------------
if modprobe rdma_rxe; then
	rdma link add rxe0 type rxe netdev v2
	if udp_bound ""; then
		expect_fail "sroce where rdma_rxe holds UDP 4791" \
			"Address already in use" 1 \
			rdma link add sroce0 type sroce netdev v0
		check "rxe0 unaffected by the failed sroce add" ibdev_exists rxe0
		ip netns add sns
		ip link set v1 netns sns
		ip -n sns link set v1 up
		check "sroce in its own namespace beside rdma_rxe" \
			ip netns exec sns rdma link add sroce0 type sroce netdev v1
		check "both devices present" \
			eval 'ibdev_exists rxe0 && ibdev_exists sroce0'
		check "rmmod sroce leaves rxe0 alone" \
			eval 'sroce_unload && ibdev_exists rxe0 && ! ibdev_exists sroce0'
		ip netns del sns
	else
		not_ok "rdma_rxe did not bind UDP 4791 (cannot test coexistence)"
	fi
	rdma link delete rxe0
	modprobe -r rdma_rxe
else
	not_ok "modprobe rdma_rxe"
fi
sroce_loaded && sroce_unload
rm -f "$before" "$after"
tap_done
