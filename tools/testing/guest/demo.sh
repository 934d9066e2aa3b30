#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make demo`, guest side: load sroce, create two devices - sroce0 in the
# initial namespace, sroce1 in namespace "demo", joined by a veth pair -
# show what rdma-core sees, run ibv_rc_pingpong, ib_write_bw and
# ib_write_lat between them and print a short table.
set -u
. "$(dirname "$0")/lib.sh" >/dev/null

run() {
	echo
	echo "guest# $*"
	"$@"
}

ip netns add demo
ip link add name d0 mtu 9000 type veth peer name d1 mtu 9000
ip link set d1 netns demo
ip link set d0 up
ip -n demo link set d1 up
ip -n demo link set lo up
ip addr add 198.18.0.1/24 dev d0
ip -n demo addr add 198.18.0.2/24 dev d1

run sroce_deps
run insmod "$SROCE_KO"
run rdma link add sroce0 type sroce netdev d0
run ip netns exec demo rdma link add sroce1 type sroce netdev d1
wait_for 20 gid_present sroce0 0000:0000:0000:0000:0000:ffff:c612:0001
wait_for 20 gid_present sroce1 0000:0000:0000:0000:0000:ffff:c612:0002
gid() {
	basename "$(grep -lx "$2" /sys/class/infiniband/"$1"/ports/1/gids/* |
		head -1)"
}
g0=$(gid sroce0 0000:0000:0000:0000:0000:ffff:c612:0001)
g1=$(gid sroce1 0000:0000:0000:0000:0000:ffff:c612:0002)

run rdma link show
run ibv_devices
run ibv_devinfo -d sroce0

# pair OUT SERVER-CMD... -- CLIENT-CMD...: server in "demo", client here.
pair() {
	local out=$1 srv=() cli=()
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	ip netns exec demo timeout 120 "${srv[@]}" >/tmp/srv.log 2>&1 &
	wait_for 30 eval 'ip netns exec demo ss -ltn | grep -q ":18515 "'
	timeout 120 "${cli[@]}" 198.18.0.2 >"$out" 2>&1
	local rc=$?
	wait
	return $rc
}

echo
echo "guest# ibv_rc_pingpong, ib_write_bw, ib_write_lat: sroce0 -> sroce1"
pp="failed" bw="failed" lat="failed"
pair /tmp/pp.log ibv_rc_pingpong -d sroce1 -g "$g1" -s 65536 -n 200 -- \
	ibv_rc_pingpong -d sroce0 -g "$g0" -s 65536 -n 200 &&
	pp=$(awk '/Mbit\/sec/ { print $(NF-1) " Mbit/s"; exit }' /tmp/pp.log)
pair /tmp/bw.log ib_write_bw -d sroce1 -x "$g1" -F -s 65536 -D 3 \
	--report_gbits -- \
	ib_write_bw -d sroce0 -x "$g0" -F -s 65536 -D 3 --report_gbits &&
	bw=$(awk '$1 == 65536 { print $4 " Gb/s"; exit }' /tmp/bw.log)
pair /tmp/lat.log ib_write_lat -d sroce1 -x "$g1" -F -s 8 -n 1000 -- \
	ib_write_lat -d sroce0 -x "$g0" -F -s 8 -n 1000 &&
	lat=$(awk '$1 == 8 { print $5 " us"; exit }' /tmp/lat.log)

run rdma statistic show link sroce0/1
echo
echo "sroce demo (qemu TCG: absolute numbers are ~100x below hardware)"
printf '  %-36s %s\n' "test" "result"
printf '  %-36s %s\n' "ibv_rc_pingpong 64 KiB x 200" "$pp"
printf '  %-36s %s\n' "ib_write_bw 64 KiB, 3 s (average)" "$bw"
printf '  %-36s %s\n' "ib_write_lat 8 B (typical)" "$lat"

run rdma link delete sroce1
run rdma link delete sroce0
run rmmod sroce
