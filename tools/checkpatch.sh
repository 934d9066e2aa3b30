#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# checkpatch.pl --strict over every C source and header of sroce.
# Prints TAP: one line per file.
set -u
cd "$(dirname "$0")/.."
CP=/var/cache/sroce/checkpatch/scripts/checkpatch.pl
[ -x "$CP" ] || tools/deps.sh >/dev/null
files=$(git ls-files 'drivers/*.c' 'drivers/*.h' 'include/*.h' 2>/dev/null ||
	find drivers include -name '*.[ch]')
n=0 fail=0
echo "TAP version 13"
for f in $files; do
	n=$((n + 1))
	if out=$("$CP" --strict --no-tree --terse --show-types \
		  --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f "$f" 2>&1) &&
	   ! grep -qE '(ERROR|WARNING|CHECK):' <<<"$out"; then
		echo "ok $n - checkpatch $f"
	else
		fail=$((fail + 1))
		echo "not ok $n - checkpatch $f"
		sed 's/^/# /' <<<"$out"
	fi
done
echo "1..$n"
[ "$fail" -eq 0 ]
