#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Device lifecycle: rdma link add/delete, uverbs visibility through the
# distro's rdma-core (rxe provider), RoCE v2 GIDs following ip addr, port
# state and async events following carrier, MTU, parent device, per-netns
# UDP socket, and teardown by netdev removal and module unload; then the
# ICRC's CRC-32 picked at load (icrc=), each choice checked against
# rdma_rxe, which drops packets whose ICRC is wrong.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

# (a branch taken on a failure may run fewer: the rest count as failed)
tap_plan 62
check "load sroce.ko and its dependencies" sroce_load
check "no UDP 4791 socket before the first device" eval '! udp_bound ""'

# --- a device on a veth in the initial namespace --------------------------
veth_pair v0 v1
check "rdma link add sroce0 type sroce netdev v0" \
	rdma link add sroce0 type sroce netdev v0
check "ib device sroce0 exists" ibdev_exists sroce0
check "UDP 4791 bound once the first device exists" udp_bound ""
check "rdma link show lists sroce0 on v0" \
	eval 'rdma link show sroce0/1 | grep -q "netdev v0"'
check "port ACTIVE with carrier" \
	wait_for 10 eval '[ "$(port_state sroce0)" = "4: ACTIVE" ]'

out=$(ibv_devices 2>&1)
check "ibv_devices lists sroce0" grep -q sroce0 <<<"$out"
info=$(ibv_devinfo -v -d sroce0 2>&1)
diag "$(head -30 <<<"$info" | tr '\n' '|')"
check "ibv_devinfo opens sroce0 through the rxe provider" \
	grep -q 'hca_id:.*sroce0' <<<"$info"
check "ibv_devinfo: PORT_ACTIVE" grep -q 'state:.*PORT_ACTIVE' <<<"$info"
check "ibv_devinfo: link_layer Ethernet" \
	grep -q 'link_layer:.*Ethernet' <<<"$info"
check "ibv_devinfo: transport InfiniBand (RoCE)" \
	grep -q 'transport:.*InfiniBand' <<<"$info"
check "ibv_devinfo: node_guid from the MAC (EUI-64)" \
	eval "grep -qE 'node_guid:.*ff:fe' <<<\"\$info\""

# --- GIDs follow addresses --------------------------------------------------
ip addr add 198.18.0.1/24 dev v0
ip -6 addr add 2001:db8::1/64 dev v0 nodad
check "IPv4 address appears as a RoCE v2 GID" \
	wait_for 20 gid_present sroce0 0000:0000:0000:0000:0000:ffff:c612:0001
check "IPv6 address appears as a RoCE v2 GID" \
	wait_for 20 gid_present sroce0 2001:0db8:0000:0000:0000:0000:0000:0001
info=$(ibv_devinfo -v -d sroce0 2>&1)
check "ibv_devinfo shows the IPv4 GID" \
	grep -q '198.18.0.1, RoCE v2' <<<"$info"
ip addr del 198.18.0.1/24 dev v0
ip -6 addr del 2001:db8::1/64 dev v0
check "IPv4 GID disappears with the address" \
	wait_for 20 eval '! gid_present sroce0 0000:0000:0000:0000:0000:ffff:c612:0001'
check "IPv6 GID disappears with the address" \
	wait_for 20 eval '! gid_present sroce0 2001:0db8:0000:0000:0000:0000:0000:0001'

# --- carrier down/up: port state and async events --------------------------
ev=$(mktemp)
ibv_asyncwatch -d sroce0 >"$ev" 2>&1 &
watch=$!
sleep 2
ip link set v1 down
check "carrier loss takes the port DOWN" \
	wait_for 10 eval '[ "$(port_state sroce0)" = "1: DOWN" ]'
check "IBV_EVENT_PORT_ERR delivered to user space" \
	wait_for 10 grep -q 'PORT_ERR' "$ev"
ip link set v1 up
check "carrier back takes the port ACTIVE" \
	wait_for 10 eval '[ "$(port_state sroce0)" = "4: ACTIVE" ]'
check "IBV_EVENT_PORT_ACTIVE delivered to user space" \
	wait_for 10 grep -q 'PORT_ACTIVE' "$ev"
kill "$watch" 2>/dev/null
wait "$watch" 2>/dev/null
diag "asyncwatch: $(tr '\n' '|' <"$ev")"
rm -f "$ev"

# --- MTU follows the netdev -------------------------------------------------
active_mtu() {
	ibv_devinfo -d sroce0 | awk '/active_mtu/ { print $2; exit }'
}
ip link set v0 mtu 9000
check "netdev MTU 9000 -> active_mtu 4096" eval '[ "$(active_mtu)" = 4096 ]'
ip link set v0 mtu 1500
check "netdev MTU 1500 -> active_mtu 1024" eval '[ "$(active_mtu)" = 1024 ]'
ip link set v0 mtu 600
check "netdev MTU 600 -> active_mtu 256" eval '[ "$(active_mtu)" = 256 ]'
ip link set v0 mtu 1500

# --- hw counters ------------------------------------------------------------
check "rdma statistic shows sroce counters" \
	eval 'rdma statistic show link sroce0/1 | grep -q rx_drop_no_qp'

# --- delete ------------------------------------------------------------------
check "rdma link delete sroce0" rdma link delete sroce0
check "sroce0 gone after delete" wait_for 10 eval '! ibdev_exists sroce0'
check "UDP 4791 released with the last device" \
	wait_for 10 eval '! udp_bound ""'

# --- parent device: a NIC with a bus device ----------------------------------
nic=
for n in /sys/class/net/*; do
	[ -e "$n/device" ] && [ "$(cat "$n/type")" = 1 ] && nic=${n##*/} && break
done
if [ -n "$nic" ]; then
	ip link set "$nic" up
	rdma link add sroce1 type sroce netdev "$nic"
	check "device/net/ of sroce1 names its netdev ($nic)" \
		test -e "/sys/class/infiniband/sroce1/device/net/$nic"
	check "parent attribute names the netdev" \
		eval '[ "$(cat /sys/class/infiniband/sroce1/parent)" = "$nic" ]'
	rdma link delete sroce1
else
	not_ok "no NIC with a parent device in this guest (harness must add one)"
fi

# --- per-namespace sockets -----------------------------------------------------
ip netns add ns1
ip netns add ns2
veth_pair v2 v3 ns1
ip link set v2 netns ns2
ip -n ns2 link set v2 up
check "link add inside ns1" ip netns exec ns1 rdma link add sroce_a type sroce netdev v3
check "UDP 4791 bound in ns1" udp_bound ns1
check "...and not in the initial namespace" eval '! udp_bound ""'
check "link add inside ns2" ip netns exec ns2 rdma link add sroce_b type sroce netdev v2
check "UDP 4791 bound in ns2" udp_bound ns2
check "rdma link delete in ns1 releases only ns1's socket" \
	eval 'rdma link delete sroce_a && wait_for 10 eval "! udp_bound ns1" && udp_bound ns2'

# --- teardown by netdev removal, namespace removal and unload -----------------
check "deleting the netdev removes its device" \
	eval 'ip -n ns2 link del v2 && wait_for 10 eval "! ibdev_exists sroce_b"'
check "UDP 4791 released in ns2" wait_for 10 eval '! udp_bound ns2'

veth_pair v4 v5 ns1
ip netns exec ns1 rdma link add sroce_c type sroce netdev v5
check "device in ns1 exists before namespace removal" ibdev_exists sroce_c
ip netns del ns1
check "removing the namespace removes its device" \
	wait_for 20 eval '! ibdev_exists sroce_c'
ip netns del ns2

veth_pair v6 v7
rdma link add sroce_d type sroce netdev v6
check "rmmod with a device present succeeds" sroce_unload
check "...and removes the device" eval '! ibdev_exists sroce_d'
check "...and the socket" eval '! udp_bound ""'
ip link del v6 2>/dev/null
ip link del v0 2>/dev/null

# --- icrc=: the CRC-32 behind the ICRC ------------------------------------
icrc_param() { cat /sys/module/sroce/parameters/icrc 2>/dev/null; }
sroce_deps
check "icrc=bogus: load refused (EINVAL)" \
	eval '! insmod "$SROCE_KO" icrc=bogus 2>/dev/null && ! sroce_loaded'
check "rdma_rxe's rxe0 beside namespace x" rxe_veth_ns
NS_S=x NS_C= DEV_S=sroce_x DEV_C=rxe0 IP_S=198.18.4.2
for impl in auto crypto lib table; do
	mark=$(kmsg_mark)
	if ! insmod "$SROCE_KO" icrc=$impl; then
		not_ok "icrc=$impl: sroce loads"
		continue
	fi
	p=$(icrc_param)
	diag "icrc=$impl: $(kmsg_since "$mark" | grep -o 'ICRC: .*')"
	case $impl in
	auto) check "icrc=auto: one implementation chosen ($p)" \
		eval '[[ "$p" =~ ^(crypto|lib|table)\ \(auto\)$ ]]' ;;
	*) check "icrc=$impl: in use ($p)" [ "$p" = "$impl ($impl)" ] ;;
	esac
	ip netns exec x rdma link add sroce_x type sroce netdev vx1
	if wait_until 20 port_active rxe0 && wait_until 20 port_active sroce_x; then
		GID_S=$(gid_index sroce_x "$(gid_v4 198.18.4.2)")
		GID_C=$(gid_index rxe0 "$(gid_v4 198.18.4.1)")
		d0=$(hw_stat sroce_x rx_drop_bad_icrc)
		verify_pair "icrc=$impl: rdma_rxe <-> sroce WRITE/SEND/READ verified" \
			-q 1 -n 4 -m 64K -o write,send,read
		check "icrc=$impl: no ICRC drops at sroce" \
			[ "$(hw_stat sroce_x rx_drop_bad_icrc)" = "$d0" ]
	else
		not_ok "icrc=$impl: rxe0 and sroce_x ports active"
	fi
	ip netns exec x rdma link delete sroce_x
	check "icrc=$impl: rmmod" sroce_unload
done
rdma link delete rxe0
ip link del vx0 2>/dev/null
ip netns del x
tap_done
