# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Kernel log lines that fail a test run: the one list, sourced by
# vm-run.sh (every guest, single, batch or pair) and check.sh (each
# suite of a batch: its slice of console.log and of dmesg.log), and
# tested by test_patterns.sh (run by check.sh as the host suite
# "patterns"): add a sample line there for every class added here.
#
# grep -E, case sensitive:
#   BUG:                   BUG()/BUG_ON() on 6.12, KASAN/KFENCE/lockdep
#                          headers, "BUG: scheduling while atomic", ...
#   kernel BUG at          BUG()/BUG_ON() on 6.1 ("kernel BUG at f.c:12!")
#   BUG <cache> (...)      SLUB's own reports (slub_debug=FZPU): "BUG
#                          kmalloc-192 (Tainted: G B O): Redzone overwritten",
#                          no colon after BUG; and the lines of such a
#                          report: Redzone / Poison overwritten / Object
#                          or Freepointer or Freechain corrupt / padding
#   WARNING:, Oops, general protection, invalid opcode: (a BUG's trap on
#   6.1, "invalid opcode: 0000 [#1]"), Kernel panic
#   list_add/list_del corruption, list_add double add (CONFIG_LIST_HARDENED
#   and DEBUG_LIST reports), refcount_t: (saturation, use after free)
#   blocked for more than (hung task), \<stall (RCU stalls; anchored at a
#   word start: "9pnet: Installing 9P2000 support" is on every boot),
#   soft lockup, hard LOCKUP, KASAN, UBSAN
#   Call Trace:            any stack dump: no suite provokes one on
#                          purpose (none is expected anywhere today; a
#                          suite that meant to would have to say so here)
# shellcheck disable=SC2034
BAD_PATTERNS='BUG:|kernel BUG at|BUG [^ ]+ \((Not tainted|Tainted:[^)]*)\)'
BAD_PATTERNS+='|Redzone|Poison overwritten|(Object|Freepointer|Freechain) corrupt'
BAD_PATTERNS+='|[Pp]adding overwritten'
BAD_PATTERNS+='|WARNING:|Oops|general protection|invalid opcode:|Kernel panic'
BAD_PATTERNS+='|list_(add|del) corruption|list_add double add|refcount_t:'
BAD_PATTERNS+='|blocked for more than|\<stall|soft lockup|hard LOCKUP'
BAD_PATTERNS+='|KASAN|UBSAN|Call Trace:'

# bad_lines: the lines of stdin that match.
bad_lines() {
	tr -d '\r' | grep -E -- "$BAD_PATTERNS"
}

# kernel_lines CONSOLE [OUTPUT]: CONSOLE (a serial console log) without
# the lines that are verbatim lines of OUTPUT (the test script's own
# output, which the guest echoes to the console: a check named "no
# WARNING: ..." is not a kernel message).  Kernel lines carry a
# timestamp, so none of them is verbatim test output.
kernel_lines() {
	if [ -s "${2:-}" ]; then
		tr -d '\r' <"$1" | grep -vxF -f <(tr -d '\r' <"$2")
	else
		tr -d '\r' <"$1"
	fi
	true
}

# batch_slice SUITE: the lines of stdin (a console or dmesg log of a
# guest/run_batch.sh boot) between "sroce-batch: begin SUITE" and the
# next "sroce-batch: end" marker: what the kernel logged while SUITE ran
# (and while the batch cleaned up after it).
batch_slice() {
	tr -d '\r' | awk -v t="$1" '
		/sroce-batch: begin / { on = ($NF == t); next }
		/sroce-batch: end / { on = 0 }
		on'
}

# batch_outside: the lines of stdin outside every suite's markers (boot,
# shutdown), the markers themselves left out.
batch_outside() {
	tr -d '\r' | awk '
		/sroce-batch: begin / { on = 1; next }
		/sroce-batch: end / { on = 0; next }
		!on'
}
