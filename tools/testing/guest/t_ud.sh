#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# UD data path between two sroce devices in two network namespaces linked
# by a veth pair: the distro's ibv_ud_pingpong (rxe provider), with and
# without completion events, over IPv4 and IPv6, the counters that account
# for it, and rdma_cm's udaddy (kernel GSI QP sends and receives MADs).
set -u
. "$(dirname "$0")/lib.sh"

sroce_load || { not_ok "load sroce"; tap_done; exit 1; }
ip netns add na
ip netns add nb
ip link add name va type veth peer name vb
ip link set va netns na
ip link set vb netns nb
ip -n na link set va up
ip -n nb link set vb up
ip -n na link set lo up
ip -n nb link set lo up
ip -n na addr add 198.18.0.1/24 dev va
ip -n nb addr add 198.18.0.2/24 dev vb
ip -n na -6 addr add 2001:db8::1/64 dev va nodad
ip -n nb -6 addr add 2001:db8::2/64 dev vb nodad
ip netns exec na rdma link add sroce_a type sroce netdev va
ip netns exec nb rdma link add sroce_b type sroce netdev vb
wait_for 20 gid_present sroce_a 0000:0000:0000:0000:0000:ffff:c612:0001
wait_for 20 gid_present sroce_b 0000:0000:0000:0000:0000:ffff:c612:0002
wait_for 20 gid_present sroce_a 2001:0db8:0000:0000:0000:0000:0000:0001
wait_for 20 gid_present sroce_b 2001:0db8:0000:0000:0000:0000:0000:0002

gid_index() {
	local d=/sys/class/infiniband/$1/ports/1/gids
	basename "$(grep -lx "$2" "$d"/* | head -1)"
}
ga=$(gid_index sroce_a 0000:0000:0000:0000:0000:ffff:c612:0001)
gb=$(gid_index sroce_b 0000:0000:0000:0000:0000:ffff:c612:0002)

# pingpong SIZE ITERS [EXTRA...]: one server/client run; prints client output.
# The GID indices (and so the IP family) come from $ga and $gb.
pingpong() {
	local size=$1 iters=$2 srv out rc
	shift 2
	ip netns exec nb timeout 120 ibv_ud_pingpong -d sroce_b -g "$gb" \
		-s "$size" -n "$iters" "$@" >/tmp/srv.log 2>&1 &
	srv=$!
	# The server listens on TCP 18515 for the QP exchange.
	wait_for 60 eval 'ip netns exec nb ss -ltn | grep -q ":18515 "'
	out=$(ip netns exec na timeout 120 ibv_ud_pingpong -d sroce_a -g "$ga" \
		-s "$size" -n "$iters" "$@" "${peer:-198.18.0.2}" 2>&1)
	rc=$?
	wait "$srv"
	local src=$?
	echo "$out" | tail -2 | sed 's/^/# /'
	[ $rc -eq 0 ] && [ $src -eq 0 ] &&
		grep -q "$((size * iters * 2)) bytes in" <<<"$out"
}

b_deliv=$(hw_stat sroce_b rx_delivered)
check "ibv_ud_pingpong, 1024 B x 500, polling, data checked (-c)" \
	pingpong 1024 500 -c
check "ibv_ud_pingpong, 1024 B x 200, completion events (-e)" \
	pingpong 1024 200 -e -c
check "ibv_ud_pingpong, 64 B x 200, data checked" pingpong 64 200 -c
check "ibv_ud_pingpong, 2048 B x 100 on a 4096 path (MTU 9000)" \
	eval 'ip -n na link set va mtu 9000 && ip -n nb link set vb mtu 9000 &&
	      pingpong 2048 100 -c'
ga=$(gid_index sroce_a 2001:0db8:0000:0000:0000:0000:0000:0001)
gb=$(gid_index sroce_b 2001:0db8:0000:0000:0000:0000:0000:0002)
check "ibv_ud_pingpong over IPv6 GIDs, 1024 B x 200, data checked" \
	pingpong 1024 200 -c
check "responder delivered >= 1000 messages at sroce_b" \
	test "$(($(hw_stat sroce_b rx_delivered) - b_deliv))" -ge 1000
diag "sroce_b: delivered +$(($(hw_stat sroce_b rx_delivered) - b_deliv)), no_recv $(hw_stat sroce_b rx_drop_no_recv), qkey $(hw_stat sroce_b rx_drop_qkey)"

# Loopback: both ends on sroce_a, in one namespace (rdma-core's own test
# suite runs everything on one device).  The packets go through lo.
lo_pingpong() {
	local srv out rc src
	ip netns exec na timeout 120 ibv_ud_pingpong -d sroce_a -g "$1" \
		-s 1024 -n 200 -c -p 18600 >/tmp/srvl.log 2>&1 &
	srv=$!
	wait_for 60 eval 'ip netns exec na ss -ltn | grep -q ":18600 "'
	out=$(ip netns exec na timeout 120 ibv_ud_pingpong -d sroce_a -g "$1" \
		-s 1024 -n 200 -c -p 18600 "$2" 2>&1)
	rc=$?
	wait "$srv"
	src=$?
	echo "$out" | tail -1 | sed 's/^/# /'
	[ $rc -eq 0 ] || tail -3 /tmp/srvl.log | sed 's/^/# server: /'
	[ $rc -eq 0 ] && [ $src -eq 0 ] && grep -q "409600 bytes in" <<<"$out"
}
check "one device, IPv4 loopback: ibv_ud_pingpong on sroce_a alone" \
	lo_pingpong "$(gid_index sroce_a 0000:0000:0000:0000:0000:ffff:c612:0001)" 198.18.0.1

# rdma_cm over UD: address and route resolution in each namespace, SIDR
# REQ/REP through ib_cm on the kernel's GSI QP (kernel post_send), then
# user UD traffic.
modprobe rdma_ucm
ip netns exec nb timeout 120 udaddy -b 198.18.0.2 >/tmp/uds.log 2>&1 &
srv=$!
# The server is ready once its rdma_cm ID listens.
wait_for 60 eval 'rdma resource show cm_id | grep -q LISTEN'
out=$(ip netns exec na timeout 120 udaddy -s 198.18.0.2 -b 198.18.0.1 2>&1)
crc=$?
wait "$srv"
src=$?
diag "udaddy client: $(tail -2 <<<"$out" | tr '\n' ' ') server: $(tail -2 /tmp/uds.log | tr '\n' ' ')"
check "udaddy (rdma_cm UD, SIDR over GSI QP1) client and server succeed" \
	eval '[ $crc -eq 0 ] && [ $src -eq 0 ] && grep -q "test complete" <<<"$out" &&
	      grep -q "test complete" /tmp/uds.log'

ip netns exec na rdma link delete sroce_a
ip netns exec nb rdma link delete sroce_b
check "module unloads after UD traffic" sroce_unload
ip netns del na
ip netns del nb
tap_done
