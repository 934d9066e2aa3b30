#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# perftest between a server and a client device, as a correctness matrix
# (short iteration counts: the guest is an emulator, the numbers are not
# performance figures): send/write/read/atomic bandwidth and latency over
# RC, send over UD, send and write over UC, connected through perftest's
# TCP exchange and (RC, UD) through rdma_cm (-R); 2 B .. 8 MiB size
# sweeps (-a) of send/write/read bandwidth; 8 QPs (-q 8); bidirectional
# traffic (-b); inline sends (-I).  UC runs only with the TCP exchange:
# librdmacm connects RC and UD, not UC.  Each run checks both exit codes
# and the client's result table: one numeric line per expected size.
#
#   t_perf.sh [sroce|rxe]   sroce (default): sroce_a/sroce_b in two
#                           namespaces; rxe: the kernel's rdma_rxe
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

rdma_setup "${1:-sroce}" || { not_ok "topology (${1:-sroce})"; tap_done; exit 1; }

# Path MTU 4096 (veth MTU 9000): a quarter of the packets of MTU 1024 for
# the large sweeps; one run below covers MTU 1024.
check "veth MTU 9000: active_mtu 4096" set_mtu 9000 4096

PORT=18700
SWEEP=$(awk 'BEGIN { for (s = 2; s <= 8388608; s *= 2) printf "%d ", s }')
UD_SWEEP="2 4 8 16 32 64 128 256 512 1024 2048 4096"

# perf_ok TOOL SIZE...: the client printed a result line for every size:
# bandwidth "#bytes #iterations peak avg msgrate", latency "#bytes
# #iterations t_min t_max t_typical t_avg ...", all numeric (columns are
# separated by blanks and tabs).
#
# perftest times with the TSC and checks its MHz estimate; under TCG the
# estimate is often too noisy: perftest then writes "Correlation
# coefficient r^2: X < 0.9" to stderr (into the middle of the table in
# these logs) and, with an MHz of 0, reports 0.00 bandwidth or "inf"/"-nan"
# latencies for that run.  The transfers still completed (exit codes), so
# the warning is cut out before parsing, and after one the values of a
# result line may be inf/nan, with a diagnostic.
perf_ok() {
	local s cli=/tmp/perf_cli n='[0-9]+([.][0-9]+)?' w
	local corr='Correlation coefficient r\^2: [^<]*< 0\.9'
	shift
	sed -E "s/$corr//" "$CLI_LOG" >"$cli"
	w=$(cat "$CLI_LOG" "$SRV_LOG" | grep -cE "$corr")
	[ "$w" -gt 0 ] && diag "$w TSC calibration warning(s) (r^2 < 0.9)"
	[ "$w" -gt 0 ] && n='(-?nan|inf|[0-9]+([.][0-9]+)?)'
	for s in "$@"; do
		grep -qE "^[[:space:]]*$s[[:space:]]+[0-9]+[[:space:]]+$n[[:space:]]+$n[[:space:]]+$n([[:space:]]|$)" "$cli" ||
			{ diag "no numeric result line for size $s"; return 1; }
	done
	grep -qE '(inf|nan)[[:space:]]' "$cli" &&
		diag "client: $(grep -E '(inf|nan)[[:space:]]' "$cli" | head -1 | tr -s ' \t' ' ')"
	return 0
}

# perf TOOL SIZES [TIMEOUT] -- OPTS...: one perftest run; OPTS go to both
# sides, SIZES (a quoted list) must appear in the client's table.
perf() {
	local tool=$1 sizes=$2 tmo=$RUN_TIMEOUT ready
	shift 2
	if [ "$1" != -- ]; then
		tmo=$1
		shift
	fi
	shift
	PORT=$((PORT + 1))
	ready=tcp:$PORT
	case " $* " in *" -R "*) ready=cm:$PORT ;; esac
	# shellcheck disable=SC2086
	run_pair -l "$ready" -t "$tmo" -x "perf_ok $tool $sizes" "$tool $*" \
		"$tool" -d "$DEV_S" -x "$GID_S" -F -p "$PORT" "$@" \
		-- "$tool" -d "$DEV_C" -x "$GID_C" -F -p "$PORT" "$@" "$IP_S"
}

# The 2 B .. 8 MiB sweeps (the slowest runs: 15-40 s each in the guest)
# once, with perftest's own exchange; the rdma_cm variants move one size.
perf ib_send_bw "$SWEEP" 240 -- -a -n 5
perf ib_write_bw "$SWEEP" 240 -- -a -n 5
perf ib_read_bw "$SWEEP" 240 -- -a -n 5
perf ib_send_bw 65536 -- -s 65536 -n 20 -R
perf ib_write_bw 65536 -- -s 65536 -n 20 -R
perf ib_read_bw 65536 -- -s 65536 -n 20 -R
# UD: send only, one MTU at most.
perf ib_send_bw "$UD_SWEEP" -- -c UD -a -n 5
perf ib_send_bw 4096 -- -c UD -s 4096 -n 20 -R
for cm in '' -R; do
	# RC, every operation, bandwidth and latency.
	perf ib_atomic_bw 8 -- -n 100 $cm
	perf ib_send_lat 4096 -- -s 4096 -n 50 $cm
	perf ib_write_lat 4096 -- -s 4096 -n 50 $cm
	perf ib_read_lat 4096 -- -s 4096 -n 50 $cm
	perf ib_atomic_lat 8 -- -n 50 $cm
	perf ib_send_lat 2048 -- -c UD -s 2048 -n 50 $cm
done
# UC: send and write.  No -R: librdmacm has no UC ("UC is not supported
# in librdmacm", says perftest).
perf ib_send_bw 65536 -- -c UC -s 65536 -n 50
perf ib_write_bw 65536 -- -c UC -s 65536 -n 50
perf ib_send_lat 4096 -- -c UC -s 4096 -n 50
perf ib_write_lat 4096 -- -c UC -s 4096 -n 50

# Eight QPs, each with its own connection.
perf ib_send_bw 65536 -- -q 8 -s 65536 -n 20
perf ib_write_bw 65536 -- -q 8 -s 65536 -n 20 -R
perf ib_read_bw 65536 -- -q 8 -s 65536 -n 20
# Both directions at once.
perf ib_send_bw 65536 -- -b -s 65536 -n 50
perf ib_write_bw 65536 -- -b -s 65536 -n 50
perf ib_read_bw 65536 -- -b -s 65536 -n 50 -R
# Inline sends and writes (payload in the WQE, no local MR access).
perf ib_send_bw 32 -- -I 64 -s 32 -n 200
perf ib_write_lat 32 -- -I 64 -s 32 -n 100
perf ib_send_lat 64 -- -I 64 -s 64 -n 100 -c UD
# Path MTU 1024 on the 4096 port: more segments per message.
perf ib_write_bw 1048576 -- -m 1024 -s 1048576 -n 5
perf ib_send_bw 1048576 -- -m 1024 -s 1048576 -n 5 -c UC

# loop_perf TOOL SIZES -- OPTS: perf with client and server on sroce_a,
# which then talks to itself (packets delivered in the sender's context).
loop_perf() {
	# shellcheck disable=SC2034  # read by perf and run_pair
	local NS_S=$NS_C DEV_S=$DEV_C GID_S=$GID_C IP_S=$IP_C
	perf "$@"
}

ge_times() {	# A N B: A >= N * B
	[ "$1" -ge $(($2 * $3)) ]
}

if [ "${1:-sroce}" = sroce ]; then
	# 64 B writes posted in lists of 16: one doorbell, one requester
	# run, one AckReq per list (and every 32 packets), not one per
	# message.  In the write test only the server's ACKs leave sroce_b.
	TX_C=$(hw_stat "$DEV_C" tx_packets)
	TX_S=$(hw_stat "$DEV_S" tx_packets)
	perf ib_write_bw 64 -- -s 64 -n 1600 -l 16
	TX_C=$(($(hw_stat "$DEV_C" tx_packets) - TX_C))
	TX_S=$(($(hw_stat "$DEV_S" tx_packets) - TX_S))
	diag "64 B writes in lists of 16: $TX_C requests, $TX_S ACKs"
	check "every write sent" [ "$TX_C" -ge 1600 ]
	check "ACKs coalesced: at most one per 4 requests" ge_times "$TX_C" 4 "$TX_S"

	# Streaming over 8 QPs of one device: the doorbells may leave the
	# requester to the QPs' worker (the poster's pace decides, so the
	# split is a diagnostic); every WQE completes either way.
	loop_perf ib_write_bw 64 -- -s 64 -q 8 -n 2000
	loop_perf ib_send_bw 65536 -- -s 65536 -q 8 -n 20
	# Every user post_send rang a doorbell that either ran the
	# requester or left it to the QP's worker.
	DB_I=$(($(hw_stat "$DEV_C" doorbell_inline) + $(hw_stat "$DEV_S" doorbell_inline)))
	DB_D=$(($(hw_stat "$DEV_C" doorbell_deferred) + $(hw_stat "$DEV_S" doorbell_deferred)))
	diag "doorbells: $DB_I run inline, $DB_D deferred to the QP's worker"
	check "doorbell counters count the user doorbells" [ $((DB_I + DB_D)) -gt 0 ]
fi

rdma_teardown
tap_done
