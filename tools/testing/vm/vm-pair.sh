#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run two guests linked by a virtual Ethernet cable (QEMU "-netdev stream"
# over a unix socket): a server and a client. See README.md.
#
#   vm-pair.sh [options] -- SERVER_SCRIPT [ARGS...] -- CLIENT_SCRIPT [ARGS...]
#
# Each script sees SROCE_ROLE=server|client and SROCE_NETDEV (the virtio-net
# interface, normally eth0). Results go to DIR/server/ and DIR/client/.
# Exit status: 0 if both guests passed, else the server's vm-run.sh status
# if it failed, else the client's.

set -eu

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
	cat >&2 <<EOF
usage: ${0##*/} [options] -- SERVER_SCRIPT [ARGS...] -- CLIENT_SCRIPT [ARGS...]
  --kver KVER  --kernel-image PATH  --results DIR  --timeout SECS
  --mem MB (default 1536)  --smp N (default 1)  --append STR
  --linger SECS (default 300): how long one guest may outlive the other
EOF
	exit 64
}

results='' timeout_s=600 mem=1536 smp=1 linger=300
common=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kver | --kernel-image | --append) common+=("$1" "${2?}"); shift 2 ;;
	--results) results=${2:?}; shift 2 ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--linger) linger=${2:?}; shift 2 ;;
	--) shift; break ;;
	-h | --help) usage ;;
	*) echo "${0##*/}: unknown option $1" >&2; usage ;;
	esac
done

# Split "SERVER_SCRIPT [ARGS] -- CLIENT_SCRIPT [ARGS]".
server_cmd=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	server_cmd+=("$1")
	shift
done
if [ $# -lt 2 ] || [ ${#server_cmd[@]} -eq 0 ]; then
	usage
fi
shift
client_cmd=("$@")

if [ -z "$results" ]; then
	results=$(mktemp -d "${TMPDIR:-/tmp}/sroce-pair.XXXXXX")
fi
mkdir -p "$results/server" "$results/client"

# Unix socket paths are limited to 108 bytes: keep it in a short temp dir.
sockdir=$(mktemp -d /tmp/sroce-sock.XXXXXX)
sock=$sockdir/link
server_pid='' client_pid=''
# shellcheck disable=SC2317 # invoked via trap
cleanup() {
	# Only our own children, by pid (vm-run.sh forwards TERM to its qemu).
	[ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
	[ -z "$client_pid" ] || kill "$client_pid" 2>/dev/null || true
	rm -rf "$sockdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# (Both vm-run.sh instances may want to build the initramfs; mkinitramfs.sh
# serialises them with flock.)
vmrun=(
	"$here/vm-run.sh" "${common[@]}" --timeout "$timeout_s" --mem "$mem"
	--smp "$smp" --net-socket "$sock"
)

"${vmrun[@]}" --name server --net-role server --results "$results/server" \
	-- "${server_cmd[@]}" &
server_pid=$!
# vm-run.sh --net-role client waits for the socket the server's qemu creates.
"${vmrun[@]}" --name client --net-role client --results "$results/client" \
	-- "${client_cmd[@]}" &
client_pid=$!

set +e
wait -n -p first_pid "$server_pid" "$client_pid"
first_rc=$?
if [ "$first_rc" = 125 ]; then
	# One guest never started its script: the other would only wait for
	# its peer until its own timeouts.
	echo "vm-pair: a guest's boot hung; stopping the other" >&2
	kill "$server_pid" "$client_pid" 2>/dev/null
fi
# The guests only work together: once one is gone, the other can at most
# finish up.  One that lingers is stuck, e.g. a server guest whose NIC
# stopped transmitting (virtio-net "transmit queue 0 timed out") waits for
# a client that has given up; it would otherwise hold on to its whole
# timeout.
# outlive PID ROLE: wait for the remaining guest, at most $linger seconds.
outlive() {
	local t=0
	while kill -0 "$1" 2>/dev/null && [ "$t" -lt "$linger" ]; do
		sleep 1
		t=$((t + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		echo "vm-pair: the $2 guest outlived its peer by ${linger}s; stopping it" >&2
		kill "$1" 2>/dev/null
	fi
	wait "$1"
}
if [ "$first_pid" = "$server_pid" ]; then
	server_rc=$first_rc
	server_pid=''
	outlive "$client_pid" client
	client_rc=$?
else
	client_rc=$first_rc
	client_pid=''
	outlive "$server_pid" server
	server_rc=$?
fi
server_pid='' client_pid=''
set -e

echo "vm-pair: server exit $server_rc, client exit $client_rc, results in $results" >&2
if [ "$server_rc" = 125 ] || [ "$client_rc" = 125 ]; then
	exit 125
fi
if [ "$server_rc" != 0 ]; then
	exit "$server_rc"
fi
exit "$client_rc"
