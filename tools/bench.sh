#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make bench`: sroce against the kernel's rdma_rxe (and TCP) on every
# installed kernel, one guest boot per kernel (tools/testing/guest/bench.sh,
# table A: one device each, client and server on it).  Prints the table,
# writes bench-<kver>.json and bench-<kver>.png to results/bench-<time>/.
#
# The guests boot without slub_debug (the tests use it): a debugging
# allocator would weigh on whichever driver allocates more.  Qemu TCG runs
# ~100x below hardware: only the ratios within one boot mean anything.
#
# Environment: KVERS="k1 k2" to pick kernels; BENCH_MODE=smoke for a short
# run (1 sample per figure).
set -u
tree=$(cd "$(dirname "$0")/.." && pwd)
KVERS=${KVERS:-$(for d in /lib/modules/*/build; do
	k=$(basename "$(dirname "$d")")
	[ -e "$d/Makefile" ] && [ -e "/boot/vmlinuz-$k" ] && echo "$k"
done | sort -V)}
mode=${BENCH_MODE:-full}
out=${BENCH_RESULTS:-$tree/results/bench-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
rc=0
for k in $KVERS; do
	r=$out/$k
	echo "bench: $k ($mode), guest output in $r"
	if ! "$tree/tools/testing/vm/vm-run.sh" --kver "$k" --results "$r" \
		--timeout 5400 --append "slub_debug=-" --name bench \
		-- "$tree/tools/testing/guest/bench.sh" "$mode" >"$r.host.log" 2>&1; then
		echo "bench: $k: the guest run failed (see $r)"
		rc=1
	fi
	python3 "$tree/tools/sroce-bench/report.py" --kver "$k" --out "$out" \
		--plot "$tree/build/bench/bench_plot" \
		"table A (one device each, loopback)=$r/bench-a.tsv" || rc=1
done
echo "bench: results in $out"
exit $rc
