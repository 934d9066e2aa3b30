#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make demo`, guest side: load sroce, bind it to the guest's NIC and to a
# veth in a network namespace, and show what rdma-core sees.
set -u
. "$(dirname "$0")/lib.sh" >/dev/null

run() {
	echo
	echo "guest# $*"
	"$@"
}

nic=$(basename "$(dirname "$(ls -d /sys/class/net/*/device | head -1)")")
ip link set "$nic" up
ip addr add 198.18.0.1/24 dev "$nic"
ip -6 addr add 2001:db8::1/64 dev "$nic" nodad

run sroce_deps
run insmod "$SROCE_KO"
run rdma link add sroce0 type sroce netdev "$nic"

ip netns add demo
ip link add name d0 type veth peer name d1
ip link set d0 netns demo
ip link set d1 up
ip -n demo link set d0 up
ip -n demo addr add 198.19.0.1/24 dev d0
run ip netns exec demo rdma link add sroce1 type sroce netdev d0
wait_for 20 gid_present sroce0 0000:0000:0000:0000:0000:ffff:c612:0001

run rdma link show
run ibv_devices
run ibv_devinfo -v -d sroce0
run rdma statistic show link sroce0/1
run rdma link delete sroce1
run rdma link delete sroce0
run rmmod sroce
echo
echo "demo: sroce0 came up on $nic (PORT_ACTIVE, RoCE v2 GIDs above)."
echo "demo: the data path (perftest) is not implemented yet."
