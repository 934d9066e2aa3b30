#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Two guests over a virtual NIC (vm-pair.sh), sroce on each guest's eth0:
# RoCEv2 packets from one guest reach the other's sroce ingress and are
# accounted exactly: 9 with a valid ICRC (for a missing QP), 5 with a
# corrupted ICRC, 4 short.
set -u
. "$(dirname "$0")/lib.sh"

dev=${SROCE_NETDEV:?no NIC}
case "${SROCE_ROLE:-}" in
server) me=198.18.0.1 peer=198.18.0.2 ;;
client) me=198.18.0.2 peer=198.18.0.1 ;;
*) not_ok "SROCE_ROLE unset"; tap_done; exit 1 ;;
esac

ip link set "$dev" up
check "$SROCE_ROLE: load sroce" sroce_load
check "$SROCE_ROLE: sroce0 on $dev" rdma link add sroce0 type sroce netdev "$dev"
# The address comes last: once the peer can ping us, our sroce is listening.
ip addr add "$me/24" dev "$dev"
check "$SROCE_ROLE: port ACTIVE" \
	wait_for 20 eval '[ "$(port_state sroce0)" = "4: ACTIVE" ]'
check "$SROCE_ROLE: reaches $peer" \
	wait_for 120 eval "ping -q -c 1 -W 1 $peer >/dev/null"

stat() {
	hw_stat sroce0 "$1"
}

if [ "$SROCE_ROLE" = client ]; then
	inj="python3 $(dirname "$0")/roce_inject.py --src $me --dst $peer"
	check "client: packets sent" eval "$inj --payload 200 --count 9 &&
		$inj --payload 33 --count 5 --bad-icrc &&
		python3 -c \"
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(4):
    s.sendto(b'\\x04\\x00', ('$peer', 4791))\""
else
	check "server: 9 valid packets (ICRC verified) -> rx_drop_no_qp" \
		wait_for 120 eval '[ "$(stat rx_drop_no_qp)" = 9 ]'
	check "server: 5 corrupted packets -> rx_drop_bad_icrc" \
		wait_for 10 eval '[ "$(stat rx_drop_bad_icrc)" = 5 ]'
	check "server: 4 short packets -> rx_drop_short" \
		wait_for 10 eval '[ "$(stat rx_drop_short)" = 4 ]'
	check "server: rx_packets = 18" eval '[ "$(stat rx_packets)" = 18 ]'
fi
rdma link delete sroce0
check "$SROCE_ROLE: unload" sroce_unload
tap_done
