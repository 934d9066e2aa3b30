#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make bench`: sroce against the kernel's rdma_rxe (and TCP) on every
# installed kernel: table A in one guest (tools/testing/guest/bench.sh: one
# device each, client and server on it); table B in two guests linked by
# a virtual NIC (bench_pair.sh: rxe<->rxe, then sroce<->sroce, then TCP).
# Prints the tables, writes bench-<kver>.json and a PNG per table to
# results/bench-<time>/.
#
# The guests boot without slub_debug (the tests use it): a debugging
# allocator would weigh on whichever driver allocates more.  Qemu TCG runs
# ~100x below hardware: only the ratios within one boot mean anything.
#
# Environment: KVERS="k1 k2" to pick kernels; BENCH_MODE=smoke for a short
# run (1 sample per figure); BENCH_TABLES="a" or "b" for one table only;
# BENCH_B_MTU=1500 for table B's link at 1500 (RoCE 1024; default 9000);
# SROCE_VM_NET=stream for table B's guests on QEMU's stream netdev.
set -u
tree=$(cd "$(dirname "$0")/.." && pwd)
KVERS=${KVERS:-$(for d in /lib/modules/*/build; do
	k=$(basename "$(dirname "$d")")
	[ -e "$d/Makefile" ] && [ -e "/boot/vmlinuz-$k" ] && echo "$k"
done | sort -V)}
mode=${BENCH_MODE:-full}
mtu_b=${BENCH_B_MTU:-9000}
tables=" ${BENCH_TABLES:-a b} "
out=${BENCH_RESULTS:-$tree/results/bench-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
rc=0
for k in $KVERS; do
	r=$out/$k
	if [[ $tables == *" a "* ]]; then
		echo "bench: $k ($mode), table A: one guest, output in $r"
		"$tree/tools/testing/vm/vm-run.sh" --kver "$k" --results "$r" \
			--timeout 5400 --append "slub_debug=-" --name bench \
			-- "$tree/tools/testing/guest/bench.sh" "$mode" \
			>"$r.host.log" 2>&1 ||
			{ echo "bench: $k: the guest run failed (see $r)"; rc=1; }
	fi
	[[ $tables == *" b "* ]] && echo "bench: $k ($mode), table B: two guests, output in $r-pair"
	if [[ $tables == *" b "* ]] && ! SROCE_VM_NET=${SROCE_VM_NET:-dgram} \
		"$tree/tools/testing/vm/vm-pair.sh" --kver "$k" --results "$r-pair" \
		--timeout 5400 --append "slub_debug=-" \
		-- "$tree/tools/testing/guest/bench_pair.sh" "$mode" "$mtu_b" \
		-- "$tree/tools/testing/guest/bench_pair.sh" "$mode" "$mtu_b" \
		>"$r-pair.host.log" 2>&1; then
		echo "bench: $k: the guest pair failed (see $r-pair)"
		rc=1
	fi
	specs=()
	[[ $tables == *" a "* ]] && specs+=("table A (one device each, loopback)=$r/bench-a.tsv")
	[[ $tables == *" b "* ]] && specs+=("table B (two guests, virtio-net link MTU $mtu_b, 1 vCPU each)=$r-pair/client/bench-b.tsv")
	python3 "$tree/tools/sroce-bench/report.py" --kver "$k" --out "$out" \
		--plot "$tree/build/bench/bench_plot" "${specs[@]}" || rc=1
done
echo "bench: results in $out"
exit $rc
