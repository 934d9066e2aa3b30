#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Instructions per 4 KiB RoCEv2 packet in the portable core, counted by
# valgrind's callgrind (repeatable, unlike time under an emulator): each
# case runs with 1 and with 1 + N packets, the difference divided by N.
#
#   callgrind.sh CORE_BENCH [N]
set -eu
bin=$1
n=${2:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ir() {
	valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$bin" "$@" \
		>/dev/null 2>&1 || { echo "core_bench $* failed" >&2; exit 1; }
	awk '/^(summary|totals):/ { print $2; exit }' "$tmp/out"
}
printf '%-12s %-8s %14s %14s\n' case crc "instr/packet" "instr/byte"
for c in build parse hdrs-build hdrs-parse; do
	for f in byte slice8; do
		case $c in hdrs-*) [ "$f" = byte ] || continue ;; esac
		a=$(ir "$c" "$f" 1)
		b=$(ir "$c" "$f" $((n + 1)))
		awk -v c="$c" -v f="$f" -v a="$a" -v b="$b" -v n="$n" 'BEGIN {
			p = (b - a) / n
			if (c ~ /^hdrs-/) f = "-"
			printf "%-12s %-8s %14.0f %14.2f\n", c, f, p, p / 4096 }'
	done
done
