#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make demo`: boot a guest on the newest installed kernel (KVER= to pick
# another) and run tools/testing/guest/demo.sh in it.  sroce.ko must be
# built (the Makefile does that first).
set -eu
tree=$(cd "$(dirname "$0")/.." && pwd)
kver=${KVER:-$(for d in /lib/modules/*/build; do k=$(basename "$(dirname "$d")")
	[ -e "$d/Makefile" ] && [ -e "/boot/vmlinuz-$k" ] && echo "$k"; done |
	sort -V | tail -n1)}
results=$tree/results/demo-$kver
mkdir -p "$results"
echo "demo: booting $kver under qemu (TCG), this takes a minute..."
rc=0
"$tree/tools/testing/vm/vm-run.sh" --kver "$kver" --results "$results" \
	--timeout 600 --nic-dangling --name demo \
	-- "$tree/tools/testing/guest/demo.sh" >"$results/host.log" 2>&1 || rc=$?
cat "$results/output.log" 2>/dev/null
[ "$rc" -eq 0 ] || { echo "demo failed (rc $rc): see $results"; exit 1; }
