#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The `make bench` smoke: bench.sh's short mode produces every figure of
# the benchmark for both drivers (one sample each).  Completion only: a
# figure counts as produced when its run finished, whatever the number
# (this is an emulator, and benchmarks judge nothing).  check.sh turns
# the samples into the report (table, JSON, plot) next to this log.
set -u
. "$(dirname "$0")/lib.sh"

RESULTS=${RESULTS:-/tmp}
check "bench.sh smoke ran to the end" "$(dirname "$0")/bench.sh" smoke
tsv=$RESULTS/bench-a.tsv
for d in rxe sroce; do
	for want in write_bw_gbps:4096 write_bw_gbps:65536 write_bw_gbps:1048576 \
		send_bw_gbps:4096 send_bw_gbps:65536 send_bw_gbps:1048576 \
		read_bw_gbps:4096 read_bw_gbps:65536 read_bw_gbps:1048576 \
		msgrate_64b_mpps:1 msgrate_64b_mpps:8 post_us:1 post_cap_mpps:1 \
		write_lat_us:typ write_lat_us:p99 send_lat_us:typ send_lat_us:p99 \
		read_lat_us:typ read_lat_us:p99 cpu_s_per_gib:65536 \
		agg_bw_gbps:1 agg_bw_gbps:8 agg_bw_gbps:64 agg_bw_gbps:256 \
		tcp_gbps:1 kmem_kib_per_qp:16; do
		m=${want%:*} p=${want#*:}
		check "$d: $m $p produced" \
			grep -qP "^$d\t$m\t$p\t" "$tsv"
	done
done
n=$(awk -F'\t' '$5 + 0 > 0 && $5 !~ /inf|nan/' "$tsv" | wc -l)
diag "$n of $(wc -l <"$tsv") figures numeric (the rest: perftest's TSC calibration failed, or a 1 s run completed nothing)"
tap_done
