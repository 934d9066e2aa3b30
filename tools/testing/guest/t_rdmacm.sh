#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The librdmacm examples between a server and a client device: rping (RC
# send + RDMA read/write, data validated), ucmatose (RC connections and
# sends), udaddy (UD through SIDR), mckey (UD multicast), rdma_server /
# rdma_client (the rdma_verbs convenience API) and rstream (rsockets over
# RC, data verified), over IPv4 and, where the tool takes it, IPv6.
#
#   t_rdmacm.sh [sroce|rxe]   sroce (default): sroce_a/sroce_b in two
#                             namespaces; rxe: the kernel's rdma_rxe
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

rdma_setup "${1:-sroce}" || { not_ok "topology (${1:-sroce})"; tap_done; exit 1; }
check "veth MTU 1500: active_mtu 1024" set_mtu 1500 1024

PORT=18800

# rping: the client writes COUNT pings of SIZE bytes; with -v both sides
# print each ping's payload ("ping data: rdma-ping-N: ...") and -V makes
# both compare the payload read back with what was sent.
rping_run() {	# SERVER_ADDR SIZE COUNT TAG
	PORT=$((PORT + 1))
	run_pair -l "cm:$PORT" \
		-x "log_count \"\$CLI_LOG\" '^ping data: rdma-ping-' $3 &&
		    log_count \"\$SRV_LOG\" '^server ping data: rdma-ping-' $3 &&
		    log_lacks \"\$CLI_LOG\" 'mismatch' && log_lacks \"\$SRV_LOG\" 'mismatch'" \
		"rping $2 B x $3, verified (-V)$4" \
		rping -s -v -V -a "$1" -p "$PORT" -S "$2" -C "$3" \
		-- rping -c -v -V -a "$1" -p "$PORT" -S "$2" -C "$3"
}
rping_run "$IP_S" 64 20 ''
rping_run "$IP_S" 4000 10 ', 4 packets per transfer'
# rping takes at most 65535 B (its message says 65536, its check says <).
rping_run "$IP_S" 65535 5 ', largest size'
rping_run "$IP6_S" 1024 10 ', IPv6'

# ucmatose: CONN connections, COUNT sends of SIZE each way on every one.
ucmatose_run() {	# SERVER_ADDR CLIENT_ADDR CONN COUNT SIZE TAG
	PORT=$((PORT + 1))
	run_pair -l "cm:$PORT" \
		-x "log_has \"\$CLI_LOG\" '^test complete' && log_has \"\$SRV_LOG\" '^test complete'" \
		"ucmatose $3 connections x $4 sends of $5 B$6" \
		ucmatose -b "$1" -p "$PORT" -c "$3" -C "$4" -S "$5" \
		-- ucmatose -s "$1" -b "$2" -p "$PORT" -c "$3" -C "$4" -S "$5"
}
ucmatose_run "$IP_S" "$IP_C" 1 10 100 ''
ucmatose_run "$IP_S" "$IP_C" 4 10 5000 ', 5 packets per send'
ucmatose_run "$IP6_S" "$IP6_C" 2 10 1000 ', IPv6'

# udaddy: UD QPs whose remote QPN and Q_Key come from SIDR through the
# kernel's GSI QP; the port is fixed (7174, -p is the port space).
udaddy_run() {	# SERVER_ADDR CLIENT_ADDR CONN COUNT SIZE TAG
	run_pair -l "cm:7174" \
		-x "log_has \"\$CLI_LOG\" '^test complete' && log_has \"\$SRV_LOG\" '^test complete'" \
		"udaddy $3 connections x $4 messages of $5 B$6" \
		udaddy -b "$1" -c "$3" -C "$4" -S "$5" \
		-- udaddy -s "$1" -b "$2" -c "$3" -C "$4" -S "$5"
}
udaddy_run "$IP_S" "$IP_C" 1 10 100 ''
udaddy_run "$IP_S" "$IP_C" 2 10 1024 ', one MTU'
udaddy_run "$IP6_S" "$IP6_C" 1 10 512 ', IPv6'

# mckey: the server joins a multicast group and receives COUNT messages,
# the client joins it as a sender (-s) and sends them.
#
# The group: rdma_cm does not join IPv6 groups on RoCE v2 at all (the
# kernel's cma_iboe_join_multicast() answers ENOTSUPP, 524, for AF_INET6
# with a RoCE v2 GID type: "mckey -m ff0e::db8:0:1" fails so on rdma_rxe,
# as does the link-local ff02::db8:0:1), and -M (an unmapped MGID, AF_IB)
# fails address resolution on a RoCE device (EINVAL).  So the group is an
# IPv4 one, from the block set aside for documentation, MCAST-TEST-NET
# 233.252.0.0/24 (RFC 5771 section 9.2, RFC 6676), not one of the 239/8
# groups a real network may use.  It never leaves the guest: the join
# (IGMP) and the datagrams go out of the veth only (multicast routes point
# at it, see lib_rdma.sh), and the guest has no other link.
MCAST=233.252.0.1
mckey_run() {	# COUNT SIZE TAG
	run_pair -l "mcast:$MCAST" \
		-x "log_has \"\$CLI_LOG\" '^test complete' && log_has \"\$SRV_LOG\" '^test complete'" \
		"mckey multicast $MCAST, $1 messages of $2 B$3" \
		mckey -m "$MCAST" -b "$IP_S" -C "$1" -S "$2" \
		-- mckey -m "$MCAST" -b "$IP_C" -s -C "$1" -S "$2"
}
mckey_run 10 100 ''
mckey_run 10 1024 ', one MTU'

# rdma_server / rdma_client: one connection, one message each way.
PORT=$((PORT + 1))
run_pair -l "cm:$PORT" \
	-x "log_has \"\$CLI_LOG\" 'rdma_client: end 0' && log_has \"\$SRV_LOG\" 'rdma_server: end 0'" \
	"rdma_server / rdma_client" \
	rdma_server -s "$IP_S" -p "$PORT" \
	-- rdma_client -s "$IP_S" -p "$PORT"
PORT=$((PORT + 1))
run_pair -l "cm:$PORT" \
	-x "log_has \"\$CLI_LOG\" 'rdma_client: end 0' && log_has \"\$SRV_LOG\" 'rdma_server: end 0'" \
	"rdma_server / rdma_client, IPv6" \
	rdma_server -s "$IP6_S" -p "$PORT" \
	-- rdma_client -s "$IP6_S" -p "$PORT"

# rstream: rsockets (a socket API over RC QPs: RDMA writes into the
# peer's receive ring, credits in immediate data) moving COUNT transfers
# of SIZE with the payload verified on receipt (-T v); SRV_OPTS/CLI_OPTS
# pick blocking (none), nonblocking (-T n) or poll()-driven (-T a) calls
# on each side.  Both sides print a result row "custom SIZE COUNT 1 ..."
# (SIZE as rstream abbreviates it: 64, 64k, 1m).
rstream_run() {	# SERVER_ADDR SIZE SIZE_STR COUNT TAG SRV_OPTS CLI_OPTS
	local addr=$1 size=$2 sstr=$3 count=$4 tag=$5 row
	local -a sopt copt
	read -r -a sopt <<<"$6"
	read -r -a copt <<<"$7"
	PORT=$((PORT + 1))
	row="^custom +$sstr +$count +1 +"
	run_pair -l "cm:$PORT" \
		-x "log_has \"\$CLI_LOG\" '$row' && log_has \"\$SRV_LOG\" '$row' &&
		    log_lacks \"\$CLI_LOG\" 'verification failed' &&
		    log_lacks \"\$SRV_LOG\" 'verification failed'" \
		"rstream $size B x $count, verified (-T v)$tag" \
		rstream -b "$addr" -p "$PORT" -S "$size" -C "$count" -T v "${sopt[@]}" \
		-- rstream -s "$addr" -p "$PORT" -S "$size" -C "$count" -T v "${copt[@]}"
}
rstream_run "$IP_S" 64 64 100 ', blocking' "" ""
rstream_run "$IP_S" 65536 64k 20 ', nonblocking' "-T n" "-T n"
# poll() on the server only: the client's last call is a receive, and
# rstream's do_poll() fails on POLLHUP even when POLLIN is set with it, so
# a poll()-driven client exits 16 whenever the server's disconnect is seen
# before the last data is read (a race in the example, with rdma_rxe too).
rstream_run "$IP_S" 1048576 1m 5 ', poll() on the server' "-T a" ""
rstream_run "$IP6_S" 4096 4k 50 ', IPv6' "" ""

rdma_teardown
tap_done
