#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Two-guest smoke test of the VM harness (TAP output), used for both roles:
#   tools/testing/vm/vm-pair.sh --kver KVER -- \
#       tools/testing/vm/smoke-pair.sh -- tools/testing/vm/smoke-pair.sh
# The server (198.18.0.1/24) waits until it can reach the client and then
# stays up a little while; the client (198.18.0.2/24) pings the server.

set -u

dev=${SROCE_NETDEV:?no virtio-net interface in the guest}
case "${SROCE_ROLE:-}" in
server) me=198.18.0.1 peer=198.18.0.2 ;;
client) me=198.18.0.2 peer=198.18.0.1 ;;
*) echo "SROCE_ROLE must be server or client" >&2; exit 1 ;;
esac

echo "1..2"
if ip addr add "$me/24" dev "$dev" && ip link set "$dev" up; then
	echo "ok 1 - $SROCE_ROLE: $me/24 on $dev"
else
	echo "not ok 1 - $SROCE_ROLE: $me/24 on $dev"
	exit 1
fi

# The other guest may still be booting: retry for up to ~2 minutes.
reached=0
for _ in $(seq 60); do
	if ping -q -c 1 -W 2 "$peer" >/dev/null 2>&1; then
		reached=1
		break
	fi
done

if [ "$SROCE_ROLE" = server ]; then
	[ "$reached" = 1 ] && echo "ok 2 - server reaches $peer" ||
		echo "not ok 2 - server reaches $peer"
	# Let the client finish its own pings before this guest goes away.
	sleep 15
else
	if [ "$reached" = 1 ] && ping -c 3 "$peer"; then
		echo "ok 2 - client: ping -c 3 $peer"
	else
		echo "not ok 2 - client: ping -c 3 $peer"
		reached=0
	fi
fi
[ "$reached" = 1 ]
