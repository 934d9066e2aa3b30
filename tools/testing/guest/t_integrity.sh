#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# RC data integrity: tools/sroce-verify (SEND with multi-SGE receives,
# RDMA WRITE, WRITE WITH IMM and READ at unaligned offsets across MR
# boundaries, every byte and the guard bytes around it checked on both
# sides) between two sroce devices in two network namespaces joined by a
# veth pair: one QP, four QPs at once, path MTUs 1024 and 4096, and
# buffers on huge pages.
#
#   t_integrity.sh [sroce|rxe] [SROCE-VERIFY CLIENT OPTIONS...]
#
# The options are added to every run (e.g. "-o send,write,imm" leaves out
# the operations a data path does not have yet, "-n 100" runs longer).
# "rxe" (or SROCE_VERIFY_PROVIDER=rxe) runs the same cases on the kernel's
# rdma_rxe as the reference: one rxe device on a veth in the initial
# namespace, server and client both on it (rdma_rxe's UDP socket lives in
# the initial namespace only).  Build the tool first:
# make -C tools/sroce-verify.
set -u
. "$(dirname "$0")/lib.sh"

MODE=${1:-${SROCE_VERIFY_PROVIDER:-sroce}}
[ $# -gt 0 ] && shift
EXTRA=("$@")
VERIFY=$SROCE_TREE/tools/sroce-verify/sroce-verify
# A fresh seed per run (the tool prints it; -s SEED reproduces a run).
SEED=${SROCE_VERIFY_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
PORT=18620
SRV_LOG=/tmp/verify_srv.log
CLI_LOG=/tmp/verify_cli.log

if [ ! -x "$VERIFY" ]; then
	not_ok "sroce-verify is built"
	diag "$VERIFY missing: make -C tools/sroce-verify"
	tap_done
	exit 1
fi

# roce2_gid DEV ADDR: index of the RoCE v2 GID ADDR (sysfs form) of DEV.
roce2_gid() {
	local d=/sys/class/infiniband/$1/ports/1 g
	for g in $(grep -lx "$2" "$d"/gids/* 2>/dev/null); do
		if [ "$(cat "$d/gid_attrs/types/${g##*/}" 2>/dev/null)" = "RoCE v2" ]; then
			echo "${g##*/}"
			return 0
		fi
	done
	return 1
}

setup_sroce() {
	{ sroce_loaded || sroce_load; } || return 1
	ip netns add na && ip netns add nb || return 1
	ip link add name va type veth peer name vb || return 1
	ip link set va netns na && ip link set vb netns nb || return 1
	ip -n na link set lo up
	ip -n nb link set lo up
	ip -n na link set va up
	ip -n nb link set vb up
	ip -n na addr add 198.18.0.1/24 dev va
	ip -n nb addr add 198.18.0.2/24 dev vb
	ip netns exec na rdma link add sroce_a type sroce netdev va || return 1
	ip netns exec nb rdma link add sroce_b type sroce netdev vb || return 1
	NS_S=nb NS_C=na DEV_S=sroce_b DEV_C=sroce_a IP_S=198.18.0.2
	GIDA_S=0000:0000:0000:0000:0000:ffff:c612:0002
	GIDA_C=0000:0000:0000:0000:0000:ffff:c612:0001
}

setup_rxe() {
	modprobe rdma_rxe || return 1
	veth_pair va vb || return 1
	ip addr add 198.18.0.1/24 dev va
	rdma link add rxe0 type rxe netdev va || return 1
	NS_S='' NS_C='' DEV_S=rxe0 DEV_C=rxe0 IP_S=198.18.0.1
	GIDA_S=0000:0000:0000:0000:0000:ffff:c612:0001
	GIDA_C=$GIDA_S
}

teardown() {
	case "$MODE" in
	sroce)
		ip netns exec na rdma link delete sroce_a
		ip netns exec nb rdma link delete sroce_b
		ip netns del na
		ip netns del nb
		check "module unloads after the RC traffic" sroce_unload
		;;
	rxe)
		rdma link delete rxe0
		ip link del va
		;;
	esac
}

active_mtu() {
	ibv_devinfo -d "$1" -i 1 2>/dev/null |
		awk '$1 == "active_mtu:" { print $2; exit }'
}

# set_mtu NETDEV_MTU IB_MTU: both veth ends, then wait for the ports.
set_mtu() {
	# shellcheck disable=SC2034 # used in the eval below
	local ib_mtu=$2
	in_ns "$NS_C" ip link set va mtu "$1" || return 1
	in_ns "$NS_S" ip link set vb mtu "$1" || return 1
	# (eval runs inside wait_for: its $2 is not ours, ib_mtu is seen)
	wait_for 10 eval '[ "$(active_mtu "$DEV_C")" = "$ib_mtu" ] &&
		[ "$(active_mtu "$DEV_S")" = "$ib_mtu" ]'
}

tcp_listening() {
	in_ns "$NS_S" ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q .
}

# verify DESC [-x ERE] ARGS...: one server/client run of sroce-verify with
# ARGS for the client; one TAP line.  Both must exit 0 and print OK
# summaries; -x ERE must also match the client's summary.
verify() {
	local desc=$1 ere='' srv crc src why=''
	shift
	if [ "${1:-}" = -x ]; then
		ere=$2
		shift 2
	fi
	PORT=$((PORT + 1))
	in_ns "$NS_S" timeout -k 5 300 "$VERIFY" -d "$DEV_S" -t 30 -g "$GID_S" \
		-p "$PORT" ${SRV_HUGE:+-H} >"$SRV_LOG" 2>&1 &
	srv=$!
	if wait_for "$(hang_bound 30)" tcp_listening; then
		in_ns "$NS_C" timeout -k 5 240 "$VERIFY" -d "$DEV_C" -t 30 \
			-g "$GID_C" -p "$PORT" -s "$SEED" "$@" "${EXTRA[@]}" "$IP_S" \
			>"$CLI_LOG" 2>&1
		crc=$?
	else
		why="server not listening after $(hang_bound 30) s"
		crc=-1
	fi
	if ! wait_for 30 eval '! kill -0 '"$srv"' 2>/dev/null'; then
		kill "$srv" 2>/dev/null
		[ -z "$why" ] && why="server still running 30 s after the client"
	fi
	wait "$srv"
	src=$?
	if [ -z "$why" ]; then
		if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
			why="exit codes: client $crc, server $src"
		elif ! grep -q '^sroce-verify: OK qps=' "$CLI_LOG" ||
		     ! grep -q '^sroce-verify: OK (server) qps=' "$SRV_LOG"; then
			why="no OK summary"
		elif [ -n "$ere" ] && ! grep -qE "$ere" "$CLI_LOG"; then
			why="client summary does not match $ere"
		fi
	fi
	if [ -z "$why" ]; then
		ok "$desc"
		grep '^sroce-verify: OK qps=' "$CLI_LOG" | sed 's/^/# /'
		return 0
	fi
	not_ok "$desc"
	diag "$why"
	diag "client args: $* ${EXTRA[*]} $IP_S"
	grep -E 'FAIL|error|warning' "$SRV_LOG" | head -5 | sed 's/^/# server: /'
	if grep -qE 'FAIL|error|warning' "$CLI_LOG"; then
		grep -E 'FAIL|error|warning' "$CLI_LOG" | head -5
	else
		tail -n 3 "$CLI_LOG"
	fi | sed 's/^/# client: /'
	return 1
}

case "$MODE" in
sroce | rxe) ;;
*) diag "unknown mode $MODE (sroce|rxe)"; not_ok "mode"; tap_done; exit 1 ;;
esac
if ! "setup_$MODE"; then
	not_ok "set up the $MODE ports"
	tap_done
	exit 1
fi
check "$MODE: RoCE v2 IPv4 GIDs present" eval \
	'wait_for 20 roce2_gid "$DEV_S" "$GIDA_S" >/dev/null &&
	 wait_for 20 roce2_gid "$DEV_C" "$GIDA_C" >/dev/null'
GID_S=$(roce2_gid "$DEV_S" "$GIDA_S")
GID_C=$(roce2_gid "$DEV_C" "$GIDA_C")
diag "mode $MODE: server $DEV_S${NS_S:+ (ns $NS_S)} gid $GID_S, client $DEV_C${NS_C:+ (ns $NS_C)} gid $GID_C, seed $SEED${EXTRA[*]:+, options ${EXTRA[*]}}"

verify "1 QP: SEND/WRITE/WRITE_IMM/READ, 1 B..4 MiB, every byte checked" \
	-q 1
verify "4 QPs at once, every byte checked" -q 4
check "veth MTU 1500: active MTU 1024" set_mtu 1500 1024
verify "path MTU 1024, 2 QPs" -x ' mtu=1024 ' -q 2 -n 10
check "veth MTU 9000: active MTU 4096" set_mtu 9000 4096
verify "path MTU 4096, 2 QPs" -x ' mtu=4096 ' -q 2 -n 10

# MRs over huge pages.  (rdma-core's own huge page test needs parent
# domains, which its rxe provider does not have.)
echo 128 >/proc/sys/vm/nr_hugepages
check "128 huge pages of 2 MiB reserved" \
	[ "$(cat /proc/sys/vm/nr_hugepages)" -ge 128 ]
SRV_HUGE=1 verify "buffers on 2 MiB huge pages on both sides, 2 QPs" \
	-q 2 -n 6 -m 1M -H
echo 0 >/proc/sys/vm/nr_hugepages

teardown
tap_done
