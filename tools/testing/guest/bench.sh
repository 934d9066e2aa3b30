#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make bench`, guest side, table A: sroce and the kernel's rdma_rxe side by
# side in one boot, each as one device with client and server on it (both
# drivers loop packets to their own address back), netdev MTU 9000 / RoCE
# MTU 4096, plus iperf3 TCP over the same path.  rdma_rxe lives in the
# initial namespace (its socket is there), sroce in namespace "sb".
#
#   bench.sh [full|smoke]
#
# For a quick A/B: BENCH_METRICS="msgrate qpmem" picks metrics, RUNS and
# MEMQ override the full mode's counts.
#
# Writes raw samples to $RESULTS/bench-a.tsv, one per line:
#   driver  metric  param  run  value
# (tools/sroce-bench/report.py turns them into the table, JSON and plot).  The
# drivers' runs alternate, so a drift of the emulator affects both alike.
# A perftest run whose TSC calibration failed (0, inf or nan) leaves no
# sample; the report shows how many samples each median has.  Exit status
# is non-zero only when the setup fails: this measures, it does not judge.
set -u
. "$(dirname "$0")/lib.sh" >/dev/null
. "$(dirname "$0")/lib_rdma.sh"
. "$(dirname "$0")/lib_bench.sh"

MODE_B=${1:-full}
OUT=${RESULTS:-/tmp}/bench-a.tsv
: >"$OUT"
if [ "$MODE_B" = smoke ]; then
	RUNS=1 DUR=1 LAT_N=100 CPU_N=200 QPS_LIST="1 8 64 256" MEMQ=16 POST_N=2000
	SCALE_MIB=32 SCALE_T=8	# (the smoke only shows the figure is produced)
else
	RUNS=${RUNS:-3} DUR=2 LAT_N=2000 CPU_N=1000 QPS_LIST="1 8 64 256"
	POST_N=100000
	MEMQ=${MEMQ:-256}
	SCALE_MIB=512 SCALE_T=64
fi
PORT=18600

say() { echo "bench: $*"; }

setup() {
	sroce_deps || return 1
	{ sroce_loaded || sroce_load; } || return 1
	modprobe rdma_rxe || return 1
	modprobe rdma_ucm
	ip link add rv0 mtu 9000 type veth peer name rv1 mtu 9000 || return 1
	ip link set rv0 up && ip link set rv1 up
	ip addr add 198.18.0.1/24 dev rv0
	rdma link add rxe0 type rxe netdev rv0 || return 1
	ip netns add sb || return 1
	ip -n sb link add sv0 mtu 9000 type veth peer name sv1 mtu 9000 || return 1
	ip -n sb link set lo up
	ip -n sb link set sv0 up && ip -n sb link set sv1 up
	ip -n sb addr add 198.18.1.1/24 dev sv0
	ip netns exec sb rdma link add sroce0 type sroce netdev sv0 || return 1
	wait_until 20 port_active rxe0 && wait_until 20 port_active sroce0 || return 1
	wait_until 20 gid_index rxe0 "$(gid_v4 198.18.0.1)" >/dev/null &&
		wait_until 20 gid_index sroce0 "$(gid_v4 198.18.1.1)" >/dev/null ||
		return 1
	G_rxe=$(gid_index rxe0 "$(gid_v4 198.18.0.1)")
	G_sroce=$(gid_index sroce0 "$(gid_v4 198.18.1.1)")
	for d in rxe0 sroce0; do
		[ "$(active_mtu $d)" = 4096 ] || wait_until 20 eval \
			"[ \"\$(active_mtu $d)\" = 4096 ]" || return 1
	done
}

# drv_env DRIVER: NS DEV GID IP of that driver's device.
drv_env() {
	case "$1" in
	rxe) NS='' DEV=rxe0 GID=$G_rxe IP=198.18.0.1 ;;
	sroce) NS=sb DEV=sroce0 GID=$G_sroce IP=198.18.1.1 ;;
	esac
}

# perftest's server on the first vCPU, its client on the last: two busy-
# polling processes left to the scheduler sometimes share a vCPU, and a
# ping-pong then waits a scheduler tick (4 ms) per turn, for either
# driver at random (seen in the smoke: 8 B latency 118 us or 3991 us).
CPU_S=0
CPU_C=$(($(nproc) - 1))

# pt DRIVER TOOL ARGS...: one perftest run on DRIVER's device, server and
# client on it; the client's table lands in /tmp/pt.cli.  Status of both.
pt() {
	local drv=$1 tool=$2 rc
	shift 2
	drv_env "$drv"
	PORT=$((PORT + 1))
	in_ns "$NS" taskset -c "$CPU_S" timeout 300 "$tool" -d "$DEV" -x "$GID" \
		-F -p "$PORT" "$@" >/tmp/pt.srv 2>&1 &
	local spid=$!
	wait_until 30 tcp_listening "$NS" "$PORT" || { kill $spid; wait; return 1; }
	in_ns "$NS" taskset -c "$CPU_C" timeout 300 "$tool" -d "$DEV" -x "$GID" \
		-F -p "$PORT" "$@" "$IP" >/tmp/pt.cli 2>&1
	rc=$?
	wait $spid || rc=1
	[ $rc -eq 0 ] || say "$drv $tool $*: failed ($(tail -n2 /tmp/pt.cli | tr '\n' ' '))"
	return $rc
}

busy_jiffies() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat
}

bw() {	# RUN: write/send/read bandwidth at 4 KiB, 64 KiB, 1 MiB
	local r=$1 op s d v
	for op in write send read; do
		for s in 4096 65536 1048576; do
			for d in rxe sroce; do
				pt "$d" "ib_${op}_bw" -s "$s" -D "$DUR" --report_gbits || continue
				v=$(row "$s" | awk '{ print $4 }')
				sample "$d" "${op}_bw_gbps" "$s" "$r" "$v"
			done
		done
	done
}

msgrate() {	# RUN: 64 B writes, 1 and 8 QPs, Mpps
	local r=$1 q d v
	for q in 1 8; do
		for d in rxe sroce; do
			pt "$d" ib_write_bw -s 64 -q "$q" -D "$DUR" || continue
			v=$(row 64 | awk '{ print $5 }')
			sample "$d" msgrate_64b_mpps "$q" "$r" "$v"
		done
	done
}

# The poster's floor (tools/sroce-bench/post_floor.c): an empty doorbell,
# the write() rdma-core's rxe provider makes per ibv_post_send(), on the
# client's vCPU.  msgrate()'s poster pays it per message, so 1/post_us is
# the most one posting thread can reach with either driver.
post() {	# RUN: us per empty post, and that cap in Mpps
	local r=$1 d v
	for d in rxe sroce; do
		drv_env "$d"
		v=$(in_ns "$NS" taskset -c "$CPU_C" \
			"$SROCE_TREE/build/bench/post_floor" "$DEV" "$GID" "$POST_N" |
			awk '$1 == "post_us" { print $2 }')
		[ -n "$v" ] || { say "$d post_floor failed"; continue; }
		sample "$d" post_us 1 "$r" "$v"
		sample "$d" post_cap_mpps 1 "$r" "$(awk -v u="$v" 'BEGIN { printf "%.4f", 1 / u }')"
	done
}

lat() {		# RUN: 8 B latency, typical and 99th percentile, us
	local r=$1 op d l
	for op in write send read; do
		for d in rxe sroce; do
			pt "$d" "ib_${op}_lat" -s 8 -n "$LAT_N" || continue
			l=$(row 8)
			sample "$d" "${op}_lat_us" typ "$r" "$(echo "$l" | awk '{ print $5 }')"
			sample "$d" "${op}_lat_us" p99 "$r" "$(echo "$l" | awk '{ print $8 }')"
		done
	done
}

# RUN: guest CPU seconds (all CPUs, both sides) per GiB written with
# 64 KiB messages.  Two runs of N and 5N messages: the difference leaves
# out perftest's setup, which costs more CPU than a short transfer.
cpu() {
	local r=$1 d j0 j1 j2 j3
	for d in rxe sroce; do
		j0=$(busy_jiffies)
		pt "$d" ib_write_bw -s 65536 -n "$CPU_N" --report_gbits || continue
		j1=$(busy_jiffies)
		pt "$d" ib_write_bw -s 65536 -n $((CPU_N * 5)) --report_gbits || continue
		j2=$(busy_jiffies)
		j3=$(((j2 - j1) - (j1 - j0)))
		[ "$j3" -gt 0 ] || j3=nan
		sample "$d" cpu_s_per_gib 65536 "$r" "$(awk -v j="$j3" \
			-v n="$CPU_N" 'BEGIN { printf "%.3f", j / 100 / (4 * n * 65536 / 2^30) }')"
	done
}

# Aggregate bandwidth: SCALE_MIB split over the QPs (each at least one
# send queue, SCALE_T, of messages), timed from the first post to the
# last completion.  Not perftest's duration mode: 256 QPs with 64 KiB
# messages keep up to 1 GiB in flight, several seconds under TCG, so its
# sample window saw a fraction of a round and reported ~2% of the real
# rate (the bytes the device moved in the window matched 8 QPs').
scale() {	# RUN: aggregate 64 KiB write bandwidth over 1..256 QPs
	local r=$1 q d v n
	for q in $QPS_LIST; do
		n=$((SCALE_MIB * 16 / q))
		[ "$n" -ge "$SCALE_T" ] || n=$SCALE_T
		for d in rxe sroce; do
			pt "$d" ib_write_bw -s 65536 -q "$q" -n "$n" \
				--report_gbits -t "$SCALE_T" || continue
			v=$(row 65536 | awk '{ print $4 }')
			sample "$d" agg_bw_gbps "$q" "$r" "$v"
		done
	done
}

# Memory per QP: the growth of Slab + VmallocUsed (slab objects, and the
# vmalloc'ed rings and WQE copies: every per-QP allocation of both
# drivers) while a pyverbs process holds MEMQ RC QPs (perftest's queue
# sizes, moved to INIT), divided by MEMQ.  MemTotal - MemFree, used before,
# moved by tens of KiB per QP between runs (page cache, per-CPU lists).
qpmem() {
	local r=$1 d
	for d in rxe sroce; do
		drv_env "$d"
		in_ns "$NS" python3 - "$DEV" "$MEMQ" >/tmp/qpmem.log 2>&1 <<'EOF' || { say "$d qpmem: $(tail -n1 /tmp/qpmem.log)"; continue; }
import sys, time
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.qp import QP, QPInitAttr, QPCap, QPAttr
import pyverbs.enums as e

def kmem():
    # Reclaimable slab (dentries, inodes) moves by megabytes: drop it.
    open('/proc/sys/vm/drop_caches', 'w').write('3')
    time.sleep(0.5)
    m = {}
    for line in open('/proc/meminfo'):
        k, v = line.split(':')
        m[k] = int(v.split()[0])
    return m['Slab'] + m['VmallocUsed']

dev, n = sys.argv[1], int(sys.argv[2])
ctx = Context(name=dev)
pd = PD(ctx)
cq = CQ(ctx, 4096)
time.sleep(1)
before = kmem()
qps = []
for i in range(n):
    cap = QPCap(max_send_wr=128, max_recv_wr=512, max_send_sge=1,
                max_recv_sge=1, max_inline_data=0)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
    qp.to_init(QPAttr())
    qps.append(qp)
time.sleep(1)
after = kmem()
print("%.2f" % ((after - before) / n))
EOF
		sample "$d" kmem_kib_per_qp "$MEMQ" "$r" "$(tail -n1 /tmp/qpmem.log)"
	done
}

tcp() {		# RUN: iperf3 single stream over each driver's path
	local r=$1 d v
	for d in rxe sroce; do
		drv_env "$d"
		in_ns "$NS" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
		wait_until 20 tcp_listening "$NS" 5201
		v=$(in_ns "$NS" iperf3 -c "$IP" -p 5201 -t "$DUR" -J 2>/dev/null |
			jq -r '.end.sum_received.bits_per_second / 1e9')
		wait
		sample "$d" tcp_gbps 1 "$r" "$v"
	done
}

setup || { say "setup failed"; exit 1; }
say "mode $MODE_B, $RUNS run(s), $DUR s each; rxe0 gid $G_rxe, sroce0 (ns sb) gid $G_sroce"
for r in $(seq 1 "$RUNS"); do
	for m in ${BENCH_METRICS:-bw msgrate post lat cpu scale tcp qpmem}; do
		t0=$SECONDS
		"$m" "$r"
		say "run $r: $m ($((SECONDS - t0)) s)"
	done
done
say "$(wc -l <"$OUT") samples in $OUT"
