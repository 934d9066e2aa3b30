#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Not part of `make check`: a reproduction for the RC loss work (issue 4).
# perftest between sroce_a and sroce_b with netem dropping LOSS percent
# (default 2) of the packets on both veth ends, then the retransmission
# counters.  Seen on 6.12 (2026-12-03): write, send and atomic complete;
# ib_read_bw -s 65536 -n 100 hangs until its 120 s timeout with
# retry_timeout 0 (the transport timer never fired) - a READ stall.
#
#   tools/testing/vm/vm-run.sh --kver KVER -- \
#       tools/testing/guest/repro_rc_loss.sh
#   TOOLS="'ib_write_bw -s 65536 -n 200'" LOSS=5 ... (any perftest runs)
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

rdma_setup sroce >/dev/null || exit 1
modprobe sch_netem
ip netns exec na tc qdisc add dev va root netem loss "${LOSS:-2}%"
ip netns exec nb tc qdisc add dev vb root netem loss "${LOSS:-2}%"
PORT=19100
eval "set -- ${TOOLS:-"'ib_write_bw -s 65536 -n 200' 'ib_read_bw -s 65536 -n 100' 'ib_send_bw -s 65536 -n 200' 'ib_atomic_bw -n 500'"}"
for t in "$@"; do
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086 # $t is a command line
	ip netns exec nb timeout 120 $t -d sroce_b -x "$GID_S" -F -p $PORT >/tmp/s.log 2>&1 &
	wait_until 30 tcp_listening nb $PORT
	# shellcheck disable=SC2086
	ip netns exec na timeout 120 $t -d sroce_a -x "$GID_C" -F -p $PORT 198.18.0.2 >/tmp/c.log 2>&1
	rc=$?
	wait $!
	echo "== $t: client=$rc server=$?"
	grep -iE "error|fail|^ *[0-9]+ +[0-9]+ " /tmp/c.log | head -3
done
for k in rx_dup_request rx_out_of_seq tx_seq_nak rx_nak retry_timeout retry_seq \
	 retry_exceeded rx_drop_stale_resp; do
	echo "$k a=$(hw_stat sroce_a "$k") b=$(hw_stat sroce_b "$k")"
done
