#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make bench`, table B: two guests over a virtual NIC (vm-pair.sh; server
# guest 198.18.0.1, client guest 198.18.0.2 on $SROCE_NETDEV, netdev MTU
# 9000 / RoCE MTU 4096 as table A).  Each run: rdma_rxe <-> rdma_rxe, then
# (rxe unloaded) sroce <-> sroce, then iperf3 single-stream TCP on the same
# link, then the link's own ceiling (link_ceiling()).
#
#   bench_pair.sh [full|smoke] [MTU]  (both guests run it; SROCE_ROLE says
#                                      which; MTU 1500 runs RoCE at 1024)
#
# The client guest drives, over a TCP control connection to the server
# guest (port $CTL_PORT): it asks the server to switch drivers and to start
# each tool server, runs its own client, then reports how that went, and
# the server stops its side before answering.  So both stay in step even
# when a run fails on one side.  The client guest writes
# $RESULTS/bench-b.tsv (driver metric param run value, as bench.sh).
#
# tools/bench.sh links the guests by datagrams (SROCE_VM_NET=dgram): over
# QEMU's stream netdev at MTU 9000 the client guest's virtio-net TX queue
# stalled during rdma_rxe's runs ("NETDEV WATCHDOG: transmit queue 0 timed
# out") and never recovered, on 6.1 and 6.12.
set -u
. "$(dirname "$0")/lib.sh" >/dev/null
. "$(dirname "$0")/lib_rdma.sh"
. "$(dirname "$0")/lib_bench.sh"

MODE_B=${1:-full}
if [ "$MODE_B" = smoke ]; then
	RUNS=1 DUR=1 LAT_N=100 SCALE_MIB=32 SCALE_T=8
else
	RUNS=3 DUR=2 LAT_N=1000 SCALE_MIB=256 SCALE_T=32
fi
NETDEV=${SROCE_NETDEV:?no NIC}
NET_MTU=${2:-9000} IB_MTU=1024
[ "$NET_MTU" -lt 4200 ] || IB_MTU=4096
case "${SROCE_ROLE:-}" in
server) ME=198.18.0.1 PEER=198.18.0.1 ;;
client) ME=198.18.0.2 PEER=198.18.0.1 ;;
*) echo "bench_pair: SROCE_ROLE unset"; exit 1 ;;
esac
OUT=${RESULTS:-/tmp}/bench-b.tsv
[ "$SROCE_ROLE" = client ] && : >"$OUT"
PORT=18600
CTL_PORT=18599
SRV_T=120	# a tool server is stopped after this long
CLI_T=60	# a client retries this long while its server is not up yet

say() { echo "bench_pair ($SROCE_ROLE): $*" >&2; }

# use DRIVER: that driver's device on the NIC, the other one gone.
use() {
	rdma link delete rxe0 2>/dev/null
	rdma link delete sroce0 2>/dev/null
	case "$1" in
	rxe)
		# Both want UDP port 4791 of this namespace.
		! sroce_loaded || sroce_unload || return 1
		modprobe rdma_rxe && rdma link add rxe0 type rxe netdev "$NETDEV" ||
			return 1
		DEV=rxe0
		;;
	sroce)
		modprobe -r rdma_rxe 2>/dev/null
		{ sroce_loaded || sroce_load; } || return 1
		rdma link add sroce0 type sroce netdev "$NETDEV" || return 1
		DEV=sroce0
		;;
	esac
	modprobe rdma_ucm
	wait_until 20 port_active "$DEV" &&
		wait_until 20 gid_index "$DEV" "$(gid_v4 "$ME")" >/dev/null || return 1
	GID=$(gid_index "$DEV" "$(gid_v4 "$ME")")
	wait_until 20 eval "[ \"\$(active_mtu $DEV)\" = $IB_MTU ]"
}

# ctl COMMAND...: (client) one request to the server guest; its answer in
# $REPLY.  A lost control connection ends the table: nothing can be in step.
ctl() {
	if ! { echo "$*" >&3 && read -r -t $((SRV_T + 60)) REPLY <&3; }; then
		say "control connection lost at: $*"
		exit 1
	fi
}

# pt DRIVER TOOL ARGS...: (client) one run; the client's table in /tmp/pt.cli.
pt() {
	local drv=$1 tool=$2 t0 rc
	shift 2
	PORT=$((PORT + 1))
	ctl pt "$PORT" "$tool" "$@"
	t0=$SECONDS
	while :; do
		timeout "$SRV_T" "$tool" -d "$DEV" -x "$GID" -F -p "$PORT" "$@" \
			"$PEER" >/tmp/pt.cli 2>&1
		rc=$?
		# perftest's client fails at once while no server listens.
		grep -q "Couldn't connect\|Unable to open file descriptor" /tmp/pt.cli ||
			break
		[ $((SECONDS - t0)) -lt "$CLI_T" ] || break
		sleep 0.5
	done
	ctl end "$rc"
	if [ $rc -ne 0 ]; then
		say "$drv $tool $*: failed (rc $rc, output in fail-$PORT.cli)"
		cp /tmp/pt.cli "${RESULTS:-/tmp}/fail-$PORT.cli"
	fi
	[ "$REPLY" = "rc 0" ] || say "$drv $tool $*: server side: $REPLY"
	return $rc
}

phase() {	# DRIVER RUN
	local d=$1 r=$2 op s q l n
	for op in write send read; do
		for s in 4096 65536 1048576; do
			pt "$d" "ib_${op}_bw" -s "$s" -D "$DUR" --report_gbits || continue
			sample "$d" "${op}_bw_gbps" "$s" "$r" "$(row "$s" | awk '{ print $4 }')"
		done
	done
	for q in 1 8; do
		pt "$d" ib_write_bw -s 64 -q "$q" -D "$DUR" || continue
		sample "$d" msgrate_64b_mpps "$q" "$r" "$(row 64 | awk '{ print $5 }')"
	done
	for op in write send read; do
		pt "$d" "ib_${op}_lat" -s 8 -n "$LAT_N" || continue
		l=$(row 8)
		sample "$d" "${op}_lat_us" typ "$r" "$(echo "$l" | awk '{ print $5 }')"
		sample "$d" "${op}_lat_us" p99 "$r" "$(echo "$l" | awk '{ print $8 }')"
	done
	# As bench.sh's scale(): SCALE_MIB over the QPs, not duration mode.
	# rdma_rxe is not run at 256 QPs over the NIC: on 6.1 its requester
	# tasklet then never leaves softirq ("soft lockup - CPU#0 stuck for
	# 611s", rxe_requester -> rxe_xmit_packet -> fq_codel_enqueue), the
	# guest is lost, and so is the rest of the table.  Nor at 64 QPs with
	# MTU 9000: on 6.12 the server guest's rdma_rxe then queued received
	# packets until the OOM killer struck (kmalloc-8k 1.3 GB of 1.5 GB),
	# and on 6.1 the run failed every time (status 9, remote invalid
	# request).
	for q in 1 8 64 256; do
		if [ "$d" = rxe ] && { [ "$q" = 256 ] ||
			{ [ "$q" = 64 ] && [ "$IB_MTU" = 4096 ]; }; }; then
			sample "$d" agg_bw_gbps "$q" "$r" nan
			continue
		fi
		n=$((SCALE_MIB * 16 / q))
		[ "$n" -ge "$SCALE_T" ] || n=$SCALE_T
		pt "$d" ib_write_bw -s 65536 -q "$q" -n "$n" --report_gbits \
			-t "$SCALE_T" || continue
		sample "$d" agg_bw_gbps "$q" "$r" "$(row 65536 | awk '{ print $4 }')"
	done
}

tcp() {		# RUN
	local v
	PORT=$((PORT + 1))
	ctl iperf "$PORT"
	v=$(iperf3 -c "$PEER" -p "$PORT" -t "$DUR" -J 2>/dev/null |
		jq -r '.end.sum_received.bits_per_second / 1e9' 2>/dev/null)
	[ -n "$v" ] && [ "$v" != null ] || v=nan
	ctl end 0
	sample tcp tcp_gbps 1 "$1" "$v"
}

# link_ceiling RUN: the link's own ceiling.  The kernel's packet generator
# (pktgen) sends UDP datagrams the size of a RoCE MTU packet (4096 B of
# payload and its headers) to a port nobody listens on, and the server
# counts what its NIC delivered: no user space and no transport on either
# side, i.e. what a transport of no cost of its own could move over this
# link, for the drivers' figures to be read against (Gb/s of the 4 KiB
# payloads, as perftest counts).
link_ceiling() {
	local pg=/proc/net/pktgen dev=$NETDEV n=40000 mac t0 t1 rx0 v=nan
	local dgram=$((IB_MTU + 32))	# payload, BTH, RETH, ICRC
	if modprobe pktgen 2>/dev/null && [ -e $pg/kpktgend_0 ] &&
		ping -c1 -W1 "$PEER" >/dev/null; then
		mac=$(ip neigh show "$PEER" dev "$NETDEV" | awk '{ print $3 }')
		[ -e $pg/"$dev" ] || echo "add_device $dev" >$pg/kpktgend_0
		{
			echo "count $n"
			echo "pkt_size $((dgram + 42))"	# + Ethernet, IPv4, UDP
			echo "dst $PEER"
			echo "dst_mac $mac"
			echo "udp_dst_min 9"
			echo "udp_dst_max 9"
			echo "delay 0"
		} | while read -r l; do echo "$l" >$pg/"$dev"; done
		ctl rx
		rx0=${REPLY#rx }
		t0=$(date +%s%N)
		timeout 60 sh -c "echo start >$pg/pgctrl"
		t1=$(date +%s%N)
		sleep 0.2	# the last datagrams still on their way
		ctl rx
		v=$(awk -v a="$rx0" -v b="${REPLY#rx }" -v s="$IB_MTU" \
			-v ns=$((t1 - t0)) 'BEGIN { print (b - a) * s * 8 / ns }')
	fi
	sample link link_udp_gbps "$IB_MTU" "$1" "$v"
}

# serve: (server) answer the client's requests, one per line on stdin,
# one reply line each on stdout (both are the control connection).
serve() {
	local cmd port tool rest bg='' rc
	while read -r cmd port tool rest; do
		case "$cmd" in
		use)	# use DRIVER
			use "$port" >/tmp/use.log 2>&1
			echo "rc $?"
			;;
		pt)	# pt PORT TOOL ARGS...: start the tool server
			# shellcheck disable=SC2086 # perftest options, one word each
			timeout "$SRV_T" "$tool" -d "$DEV" -x "$GID" -F -p "$port" \
				$rest >/tmp/pt.srv 2>&1 &
			bg=$!
			echo ok
			;;
		iperf)	# iperf PORT: start iperf3's server, answer once it listens
			timeout "$SRV_T" iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
			bg=$!
			wait_until 20 tcp_listening "" "$port"
			echo ok
			;;
		rx)	# rx: the NIC's received packets so far
			echo "rx $(cat /sys/class/net/"$NETDEV"/statistics/rx_packets)"
			;;
		end)	# end CLIENT_RC: stop the tool server unless that went well
			[ "$port" = 0 ] || kill "$bg" 2>/dev/null
			wait "$bg"
			rc=$?
			[ $rc -eq 0 ] || [ ! -s /tmp/pt.srv ] ||
				cp /tmp/pt.srv "${RESULTS:-/tmp}/fail-srv.$SECONDS"
			bg=''
			echo "rc $rc"
			;;
		quit)
			echo bye
			return 0
			;;
		*)
			echo "error: unknown request $cmd"
			;;
		esac
	done
}

if [ "${3:-}" = __serve ]; then
	# The control connection is our stdin/stdout (see below).
	serve
	exit 0
fi

ip link set "$NETDEV" mtu "$NET_MTU" up
ip link set lo up
ip addr add "$ME/24" dev "$NETDEV"
sroce_deps || exit 1
wait_until 60 ping -c1 -W1 "198.18.0.$([ "$SROCE_ROLE" = server ] && echo 2 || echo 1)" \
	>/dev/null || { say "no link to the peer"; exit 1; }
if [ "$SROCE_ROLE" = server ]; then
	# Accept the client's control connection and serve it from a fresh
	# shell (this script again) whose stdin/stdout are that connection.
	python3 - "$ME" "$CTL_PORT" "$0" "$MODE_B" "$NET_MTU" <<'EOF'
import os
import socket
import sys

me, port, script, mode, mtu = sys.argv[1], int(sys.argv[2]), *sys.argv[3:6]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((me, port))
srv.listen(1)
srv.settimeout(300)
conn, _ = srv.accept()
srv.close()
os.dup2(conn.fileno(), 0)
os.dup2(conn.fileno(), 1)
os.execv('/bin/bash', ['bash', script, mode, mtu, '__serve'])
EOF
	rc=$?
	say "done (control exit $rc)"
	exit $rc
fi

t0=$SECONDS
until exec 3<>"/dev/tcp/$PEER/$CTL_PORT"; do
	[ $((SECONDS - t0)) -lt 300 ] || { say "no control connection"; exit 1; }
	sleep 1
done 2>/dev/null
# The drivers take turns, run by run (as in bench.sh), so a drift of the
# emulator or of the host's load affects both alike.
for r in $(seq 1 "$RUNS"); do
	for d in rxe sroce; do
		ctl use "$d"
		[ "$REPLY" = "rc 0" ] || { say "server: $d setup failed"; ctl quit; exit 1; }
		use "$d" || { say "$d setup failed"; ctl quit; exit 1; }
		say "run $r: $d: $DEV gid $GID"
		phase "$d" "$r"
	done
	tcp "$r"
	link_ceiling "$r"
done
ctl quit
say "$(wc -l <"$OUT") samples in $OUT"
exit 0
