#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make bench`, table B: two guests over a virtual NIC (vm-pair.sh; server
# guest 198.18.0.1, client guest 198.18.0.2 on $SROCE_NETDEV, netdev MTU
# 1500 / RoCE MTU 1024).  Phase 1 rdma_rxe <-> rdma_rxe, phase 2 (rxe
# unloaded) sroce <-> sroce, then iperf3 single-stream TCP on the same link.
#
#   bench_pair.sh [full|smoke]      (both guests run it; SROCE_ROLE says which)
#
# No control channel: both guests walk the same list of runs, each on its
# own TCP port.  The server guest starts each tool server (bounded by a
# timeout) and waits for it; the client guest retries its client until
# the server listens.  A run lost on one side costs that run only.  The
# client guest writes $RESULTS/bench-b.tsv (driver metric param run value,
# as bench.sh).
#
# Experimental (not in `make bench` by default: BENCH_TABLES="a b"): at
# netdev MTU 9000 the client guest's virtio-net TX queue stalls ("NETDEV
# WATCHDOG: transmit queue 0 timed out") during rdma_rxe's runs and never
# recovers (6.1 and 6.12, QEMU's stream netdev under TCG); p_interop runs
# this link at MTU 1500, and so does this table.
set -u
. "$(dirname "$0")/lib.sh" >/dev/null
. "$(dirname "$0")/lib_rdma.sh"
. "$(dirname "$0")/lib_bench.sh"

MODE_B=${1:-full}
if [ "$MODE_B" = smoke ]; then
	RUNS=1 DUR=1 LAT_N=100
else
	RUNS=3 DUR=2 LAT_N=1000
fi
NETDEV=${SROCE_NETDEV:?no NIC}
# Link MTU 1500 (RoCE 1024): at 9000 the virtual NIC stalls (above).
NET_MTU=1500 IB_MTU=1024
case "${SROCE_ROLE:-}" in
server) ME=198.18.0.1 PEER=198.18.0.1 ;;
client) ME=198.18.0.2 PEER=198.18.0.1 ;;
*) echo "bench_pair: SROCE_ROLE unset"; exit 1 ;;
esac
OUT=${RESULTS:-/tmp}/bench-b.tsv
[ "$SROCE_ROLE" = client ] && : >"$OUT"
PORT=18600
SRV_T=90	# a tool server waits this long for its client
CLI_T=90	# a client retries this long for its server

say() { echo "bench_pair ($SROCE_ROLE): $*"; }

ip link set "$NETDEV" mtu "$NET_MTU" up
ip link set lo up
ip addr add "$ME/24" dev "$NETDEV"

# use DRIVER: that driver's device on the NIC, the other one gone.
use() {
	rdma link delete rxe0 2>/dev/null
	rdma link delete sroce0 2>/dev/null
	case "$1" in
	rxe)
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

# pt DRIVER TOOL ARGS...: one run; the client's table in /tmp/pt.cli.
pt() {
	local drv=$1 tool=$2 t0 rc
	shift 2
	PORT=$((PORT + 1))
	if [ "$SROCE_ROLE" = server ]; then
		timeout "$SRV_T" "$tool" -d "$DEV" -x "$GID" -F -p "$PORT" "$@" \
			>/tmp/pt.srv 2>&1
		return 0
	fi
	t0=$SECONDS
	while :; do
		timeout 120 "$tool" -d "$DEV" -x "$GID" -F -p "$PORT" "$@" "$PEER" \
			>/tmp/pt.cli 2>&1
		rc=$?
		# perftest's client fails at once while no server listens.
		grep -q "Couldn't connect\|Unable to open file descriptor" /tmp/pt.cli ||
			break
		[ $((SECONDS - t0)) -lt "$CLI_T" ] || break
		sleep 0.5
	done
	[ $rc -eq 0 ] || say "$drv $tool $*: failed ($(tail -n2 /tmp/pt.cli | tr '\n' ' '))"
	return $rc
}

phase() {	# DRIVER RUN
	local d=$1 r=$2 op s q l
	for op in write send read; do
		for s in 4096 65536 1048576; do
			pt "$d" "ib_${op}_bw" -s "$s" -D "$DUR" --report_gbits || continue
			[ "$SROCE_ROLE" = client ] || continue
			sample "$d" "${op}_bw_gbps" "$s" "$r" "$(row "$s" | awk '{ print $4 }')"
		done
	done
	for q in 1 8; do
		pt "$d" ib_write_bw -s 64 -q "$q" -D "$DUR" || continue
		[ "$SROCE_ROLE" = client ] || continue
		sample "$d" msgrate_64b_mpps "$q" "$r" "$(row 64 | awk '{ print $5 }')"
	done
	for op in write send read; do
		pt "$d" "ib_${op}_lat" -s 8 -n "$LAT_N" || continue
		[ "$SROCE_ROLE" = client ] || continue
		l=$(row 8)
		sample "$d" "${op}_lat_us" typ "$r" "$(echo "$l" | awk '{ print $5 }')"
		sample "$d" "${op}_lat_us" p99 "$r" "$(echo "$l" | awk '{ print $8 }')"
	done
	for q in 1 8 64 256; do
		pt "$d" ib_write_bw -s 65536 -q "$q" -D $((DUR > 3 ? DUR : 3)) \
			--report_gbits -t 64 || continue
		[ "$SROCE_ROLE" = client ] || continue
		sample "$d" agg_bw_gbps "$q" "$r" "$(row 65536 | awk '{ print $4 }')"
	done
}

tcp() {		# RUN
	local v t0
	PORT=$((PORT + 1))
	if [ "$SROCE_ROLE" = server ]; then
		timeout "$SRV_T" iperf3 -s -1 -p "$PORT" >/dev/null 2>&1
		return 0
	fi
	t0=$SECONDS
	until v=$(iperf3 -c "$PEER" -p "$PORT" -t "$DUR" -J 2>/dev/null |
		  jq -r '.end.sum_received.bits_per_second / 1e9' 2>/dev/null) &&
		[ -n "$v" ] && [ "$v" != null ]; do
		[ $((SECONDS - t0)) -lt "$CLI_T" ] || { v=nan; break; }
		sleep 0.5
	done
	sample tcp tcp_gbps 1 "$1" "$v"
}

sroce_deps || exit 1
wait_until 60 ping -c1 -W1 198.18.0.$([ "$SROCE_ROLE" = server ] && echo 2 || echo 1) \
	>/dev/null || { say "no link to the peer"; exit 1; }
for d in rxe sroce; do
	use "$d" || { say "$d setup failed"; exit 1; }
	say "$d: $DEV gid $GID"
	for r in $(seq 1 "$RUNS"); do
		phase "$d" "$r"
	done
done
for r in $(seq 1 "$RUNS"); do
	tcp "$r"
done
[ "$SROCE_ROLE" = client ] && say "$(wc -l <"$OUT") samples in $OUT"
exit 0
