#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Repro for the deferred-doorbell starvation (wip/doorbell-defer): eight
# rounds of t_perf's ib_send_bw -q 8 -s 65536 -n 20 between sroce_a and
# sroce_b, then a 200-message write_bw -q 8, printing after each the
# counters that showed it (tx_errors, retry_*, rx_dup_request) and the
# doorbell split.  Not TAP-judged beyond perftest's own exit status.
#
#   vm-run.sh --kver K --results DIR -- tools/testing/guest/repro_sendbw_q8.sh
HERE=$(dirname "$0")
. "$HERE/lib.sh"
. "$HERE/lib_rdma.sh"
rdma_setup sroce || { echo "setup failed"; exit 1; }
set_mtu 9000 4096
PORT=18900
cnt() {
	local k
	for k in retry_timeout retry_seq retry_exceeded rx_nak tx_seq_nak \
		rx_out_of_seq rx_dup_request tx_errors doorbell_inline \
		doorbell_deferred; do
		printf "%s=%s/%s " "$k" "$(hw_stat sroce_a "$k")" "$(hw_stat sroce_b "$k")"
	done
	echo
}
for i in $(seq 8); do
	PORT=$((PORT + 1))
	run_pair -l tcp:$PORT -t 120 "send_bw q8 #$i" \
		ib_send_bw -d "$DEV_S" -x "$GID_S" -F -p $PORT -q 8 -s 65536 -n 20 \
		-- ib_send_bw -d "$DEV_C" -x "$GID_C" -F -p $PORT -q 8 -s 65536 -n 20 "$IP_S"
	cnt
done
PORT=$((PORT + 1))
run_pair -l tcp:$PORT -t 120 "write_bw q8" \
	ib_write_bw -d "$DEV_S" -x "$GID_S" -F -p $PORT -q 8 -s 65536 -n 200 \
	-- ib_write_bw -d "$DEV_C" -x "$GID_C" -F -p $PORT -q 8 -s 65536 -n 200 "$IP_S"
cnt
tap_done
