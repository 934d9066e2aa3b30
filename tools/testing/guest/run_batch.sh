#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Several guest suites in one boot (a boot costs ~7 s under TCG, and make
# check runs ~30 of them):
#
#   run_batch.sh -t SECS SUITE...
#
# Each SUITE (tools/testing/guest/SUITE.sh) runs under its own timeout of
# SECS, with its output in $RESULTS/SUITE/output.log, its exit status in
# $RESULTS/SUITE/rc and its run time in $RESULTS/SUITE/secs.  The kernel
# log gets a "sroce-batch: begin SUITE" line before each suite and an
# "sroce-batch: end" line after it, so the host can tell which suite a
# kernel message belongs to.  After each suite, whatever it left behind
# (devices, namespaces, veths, modules, the rdma netns mode) is removed,
# before its end marker (what the removal logs is the suite's), so every
# suite starts from the state of a fresh boot.  A module that cannot be
# unloaded then (a reference nothing gives back: a leak) fails the suite:
# a "not ok" line in its output and a non-zero status.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
RESULTS=${RESULTS:-/mnt/results}
TMO=900
if [ "${1:-}" = -t ]; then
	TMO=$2
	shift 2
fi

kmsg() {
	echo "sroce-batch: $*" >/dev/kmsg
}

# fresh_state: what a suite may leave behind, gone; prints what could
# not be undone.
fresh_state() {
	local d l m i h
	ip -all netns delete 2>/dev/null
	for d in /sys/class/infiniband/*; do
		[ -e "$d" ] && rdma link delete "${d##*/}" 2>/dev/null
	done
	for l in $(ip -o link show type veth 2>/dev/null |
		   awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
		ip link del "$l" 2>/dev/null
	done
	rdma system set netns shared 2>/dev/null
	for m in sroce rdma_rxe; do
		# (a killed process may take a moment to close its uverbs file)
		for ((i = 0; i < 100; i++)); do
			[ -d "/sys/module/$m" ] || break
			rmmod "$m" 2>/dev/null && break
			sleep 0.1
		done
		[ -d "/sys/module/$m" ] || continue
		h=("/sys/module/$m"/holders/*)
		echo "rmmod $m refused (refcnt $(cat "/sys/module/$m/refcnt"), holders: ${h[*]##*/})"
	done
	true
}

rc_all=0
for s in "$@"; do
	mkdir -p "$RESULTS/$s"
	kmsg "begin $s"
	t0=${EPOCHREALTIME%.*}
	# timeout(1) leads the suite's process group: whatever the suite
	# left running in the background goes with it afterwards.
	RESULTS=$RESULTS/$s timeout -k 10 "$TMO" "$HERE/$s.sh" </dev/null \
		>"$RESULTS/$s/output.log" 2>&1 &
	pid=$!
	wait "$pid"
	rc=$?
	kill -KILL -- "-$pid" 2>/dev/null
	left=$(fresh_state)
	if [ -n "$left" ]; then
		echo "not ok - $s: no fresh state after it: $left" >>"$RESULTS/$s/output.log"
		[ "$rc" -eq 0 ] && rc=1
	fi
	echo $((${EPOCHREALTIME%.*} - t0)) >"$RESULTS/$s/secs"
	echo "$rc" >"$RESULTS/$s/rc"
	kmsg "end $s rc $rc"
	echo "sroce-batch: $s exited with $rc"
	[ "$rc" -ne 0 ] && rc_all=1
done
exit $rc_all
