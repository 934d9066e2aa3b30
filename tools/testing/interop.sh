#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Wire interop of sroce with the kernel's rdma_rxe: one vm-pair.sh boot per
# kernel running tools/testing/guest/p_interop.sh in both guests (see
# there), then the TAP failures and the interop matrix of each.
#
#   tools/testing/interop.sh [--kver KVER]... [MODE [MTUS]]
#
# MODE rxe-sroce (default; the vm-pair server guest has rxe0, the client
# sroce0; each tool runs in both directions), sroce-rxe, rxe-rxe (the
# harness against the reference alone), sroce-sroce.  MTUS default
# "1500 9000".  Kernels default to 6.1.0-57-amd64.  Results in
# $SROCE_RESULTS (default results/interop-<time>/<kver>/).
set -u
tree=$(cd "$(dirname "$0")/../.." && pwd)
cd "$tree" || exit 1

kvers=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kvers+=("${2:?}"); shift 2 ;;
	*) break ;;
	esac
done
[ ${#kvers[@]} -gt 0 ] || kvers=(6.1.0-57-amd64)
mode=${1:-rxe-sroce}
mtus=${2:-1500 9000}
results=${SROCE_RESULTS:-$tree/results/interop-$(date +%Y%m%d-%H%M%S)}

rc=0
for k in "${kvers[@]}"; do
	[ -f "build/$k/sroce.ko" ] || make -s KVER="$k" || { rc=1; continue; }
	dir=$results/$k
	mkdir -p "$dir"
	start=$(date +%s)
	tools/testing/vm/vm-pair.sh --kver "$k" --results "$dir" --timeout 900 \
		-- tools/testing/guest/p_interop.sh "$mode" "$mtus" \
		-- tools/testing/guest/p_interop.sh "$mode" "$mtus" >"$dir/host.log" 2>&1
	r=$?
	[ "$r" -eq 0 ] || rc=1
	echo "== $k, $mode, MTU $mtus: vm-pair exit $r, $(($(date +%s) - start)) s," \
		"$(cat "$dir"/server/output.log "$dir"/client/output.log 2>/dev/null |
			grep -cE '^ok [0-9]') ok," \
		"$(cat "$dir"/server/output.log "$dir"/client/output.log 2>/dev/null |
			grep -cE '^not ok') not ok; results in $dir"
	grep -hE '^not ok' "$dir"/server/output.log "$dir"/client/output.log 2>/dev/null |
		sed 's/^/    /'
	sed -n '/^# interop matrix/,/^ok\|^not ok/p' "$dir/client/output.log" 2>/dev/null |
		grep '^#'
	[ "$r" -eq 0 ] || sed 's/^/    /' "$dir/host.log"
done
exit "$rc"
