#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Self-test of the harness (host side, run by check.sh as the suite
# "patterns"): the kernel log patterns (patterns.sh) catch a sample of
# every class of report and none of the lines a clean boot of each
# kernel prints; the batch slicing gives each suite its own messages; and
# the TAP reading (tap.sh) counts skips apart and turns a plan a suite
# fell short of into failures.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=patterns.sh
. "$here/patterns.sh"
# shellcheck source=tap.sh
. "$here/tap.sh"

n=0 failed=0
echo "TAP version 13"
t() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
	fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One line per report class, as the kernels print them (6.1 and 6.12).
bad=$(cat <<'EOF'
[   12.345678] BUG: KASAN: slab-use-after-free in sroce_req_step+0x1a2/0x2f0 [sroce]
[   12.345678] BUG: unable to handle page fault for address: ffffc90000a3f000
[   12.345678] BUG: kernel NULL pointer dereference, address: 0000000000000008
[   12.345678] BUG: scheduling while atomic: kworker/0:2/41/0x00000002
[   12.345678] BUG: sleeping function called from invalid context at mm/slub.c:3
[   33.123456] BUG kmalloc-192 (Tainted: G    B      OE     ): Redzone overwritten
[   33.123456] BUG kmalloc-192 (Not tainted): Poison overwritten
[   33.123456] BUG skbuff_head_cache (Tainted: G           OE     ): Object already free
[   33.123456] BUG kmalloc-1k (Tainted: G           OE     ): Freepointer corrupt
[   33.123456] BUG sroce_qp (Tainted: G           OE     ): Objects remaining in sroce_qp on __kmem_cache_shutdown()
[   33.123457] Redzone  ffff888004a1c0c0: bb bb bb bb bb bb bb bb                          ........
[   33.123458] FIX kmalloc-192: Restoring Redzone 0xffff888004a1c0c0-0xffff888004a1c0c7=0xbb
[   33.123459] Object corrupt
[   33.123459] Freepointer corrupt
[   33.123459] Freechain corrupt
[   33.123459] Poison overwritten
[   33.123459] Object padding overwritten. 0xffff888004a1c1f8-0xffff888004a1c1ff @offset=504
[   40.100000] kernel BUG at drivers/infiniband/sw/sroce/sroce_qp.c:431!
[   40.100001] invalid opcode: 0000 [#1] PREEMPT SMP NOPTI
[   40.100001] Oops: invalid opcode: 0000 [#1] PREEMPT SMP NOPTI
[   40.100002] Oops: 0002 [#1] PREEMPT SMP NOPTI
[   40.100003] general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] PREEMPT SMP NOPTI
[   40.100004] Oops: general protection fault, probably for non-canonical address 0xdead000000000122: 0000 [#1] PREEMPT SMP NOPTI
[   40.100005] list_del corruption. prev->next should be ffff888003e4c2a8, but was dead000000000100. (prev=ffff888003e4c000)
[   40.100005] list_del corruption, ffff8880049e1c48->next is LIST_POISON1 (dead000000000100)
[   40.100006] list_add corruption. next->prev should be prev (ffff888003e4c2a8), but was ffff888003e4c000. (next=ffff888003e4c2b0).
[   40.100007] list_add double add: new=ffff888003e4c2a8, prev=ffff888003e4c2a8, next=ffff888003e4c000.
[   40.100008] refcount_t: underflow; use-after-free.
[   40.100008] refcount_t: saturated; leaking memory.
[  243.100000] INFO: task kworker/0:1:12 blocked for more than 120 seconds.
[  243.100000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
[  243.100000] rcu: INFO: rcu_sched self-detected stall on CPU
[  243.100000] watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [kworker/0:1:12]
[  243.100000] Watchdog detected hard LOCKUP on cpu 1
[   12.300000] UBSAN: array-index-out-of-bounds in drivers/infiniband/sw/sroce/sroce_resp.c:907:3
[   12.300000] ================================================================== KASAN report
[    1.200000] WARNING: CPU: 0 PID: 123 at drivers/infiniband/sw/sroce/sroce_comp.c:642 sroce_comp_step+0x1/0x2 [sroce]
[    1.200000] WARNING: possible circular locking dependency detected
[    1.200000] Call Trace:
[    9.900000] Kernel panic - not syncing: Fatal exception in interrupt
EOF
)
missed=$(while IFS= read -r l; do
	bad_lines <<<"$l" >/dev/null || echo "$l"
done <<<"$bad")
t "$([ -z "$missed" ]; echo $?)" "every sample report line ($(wc -l <<<"$bad")) matches BAD_PATTERNS"
[ -n "$missed" ] && awk '{ print "# missed: " $0 }' <<<"$missed"

# A stack dump with no other bad line (a page allocation failure's):
# its Call Trace fails the run.
trace=$(cat <<'EOF'
[    5.000000] ip: page allocation failure: order:10, mode:0x40cc0(GFP_KERNEL|__GFP_COMP), nodemask=(null),cpuset=/,mems_allowed=0
[    5.000001] CPU: 0 PID: 311 Comm: ip Tainted: G           OE      6.1.0-57-amd64 #1  Debian 6.1.158-1
[    5.000002] Hardware name: QEMU Standard PC (Q35 + ICH9, 2009), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
[    5.000003] Call Trace:
[    5.000004]  <TASK>
[    5.000005]  dump_stack_lvl+0x44/0x5c
[    5.000006]  warn_alloc+0x137/0x1b0
[    5.000007]  </TASK>
EOF
)
t "$([ "$(bad_lines <<<"$trace" | wc -l)" = 1 ]; echo $?)" \
	"a stack dump without other report lines is caught by its Call Trace line"

# Lines of clean boots (6.1.0-57 and 6.12.118, console and dmesg, with
# slub_debug=FZPU; the debug kernel's KASAN/kmemleak/lockdep banners)
# that come close to a pattern: none may match.
good=$(cat <<'EOF'
[    0.000000] Command line: console=ttyS0,115200 slub_debug=FZPU panic=-1 log_buf_len=4M mitigations=off random.trust_cpu=on tsc=reliable
[    0.000000] NX (Execute Disable) protection: active
[    0.074677] mem auto-init: SLAB_POISON will take precedence over init_on_alloc/init_on_free
[    0.096323] ** If you see this message and you are not debugging    **
[    0.096349] **   NOTICE NOTICE NOTICE NOTICE NOTICE NOTICE NOTICE   **
[    0.104784] SLUB: HWalign=64, Order=0-3, MinObjects=0, CPUs=2, Nodes=1
[    0.144740] ftrace: allocating 45275 entries in 180 pages
[    0.170224] RCU Tasks Trace: Setting shift to 1 and lim to 1 rcu_task_cb_adjust=1 rcu_task_cpu_ids=2.
[    0.423052] x86/fpu: Supporting XSAVE feature 0x200: 'Protection Keys User registers'
[    1.559058] PCI: Using host bridge windows from ACPI; if necessary, use "pci=nocrs" and report a bug
[    1.914786] iommu: DMA domain TLB invalidation policy: lazy mode
[    4.093780] 9pnet: Installing 9P2000 support
[    0.032000] ..MP-BIOS bug: 8254 timer not connected to IO-APIC
[    8.088272] AMD-Vi: AMD IOMMUv2 functionality not available on this system - This is not a bug.
[    0.000000] calibrate_delay_direct() failed to get a good estimate for loops_per_jiffy.
[    1.090017] cblist_init_generic: Setting shift to 1 and lim to 1 rcu_task_cpu_ids=2.
[    4.130244] 9p: Installing v9fs 9p2000 file system support
[    0.000000] kasan: KernelAddressSanitizer initialized (generic)
[    0.000000] kmemleak: Kernel memory leak detector initialized (mem pool available: 15679)
[    0.000000] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar
[    0.000000] ... MAX_LOCKDEP_SUBCLASSES:  8
[    9.298635] sroce: loading out-of-tree module taints kernel.
[    9.299282] sroce: module verification failed: signature and/or required key missing - tainting kernel
[    9.651804] sroce: ICRC: lib (ns per 4 KiB: crypto 10981, lib 6302, table 20901)
[   10.755564] sroce: sroce9: lo is not an Ethernet device
[   15.873573] sroce: sroce0: v2 MTU 300 is below the 352 RoCEv2 needs
[    7.506197] sroce-batch: begin t_badinput
[   20.506197] sroce-batch: end t_badinput rc 0
sroce-vm: starting test script (uptime 4.2s, limit 790s)
sroce-batch: t_badinput exited with 0
EOF
)
hits=$(bad_lines <<<"$good")
t "$([ -z "$hits" ]; echo $?)" "no line of a clean boot ($(wc -l <<<"$good") samples) matches"
[ -n "$hits" ] && awk '{ print "# matched: " $0 }' <<<"$hits"

# Test output echoed to the console is not kernel log: a check whose name
# holds a pattern does not fail the run, the same words from the kernel do.
printf '%s\n' 'TAP version 13' 'ok 1 - no WARNING: in the log' >"$tmp/output.log"
printf '%s\r\n' '[    1.0] sroce0: created' 'ok 1 - no WARNING: in the log' \
	'[    2.0] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x1' >"$tmp/console.log"
hits=$(kernel_lines "$tmp/console.log" "$tmp/output.log" | bad_lines)
t "$([ "$hits" = '[    2.0] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x1' ]; echo $?)" \
	"console minus test output: the kernel's WARNING stays, the test's line goes"

# Batch slices: each suite gets the messages between its markers; what
# lies outside every suite (boot, shutdown) is the batch's.
cat >"$tmp/batch.log" <<'EOF'
[    1.0] Booting
[    2.0] sroce-batch: begin t_a
[    3.0] sroce0: created on v0 (ACTIVE)
[    4.0] sroce-batch: end t_a rc 0
[    5.0] sroce-batch: begin t_b
[    6.0] BUG kmalloc-192 (Not tainted): Redzone overwritten
[    7.0] sroce-batch: end t_b rc 0
[    8.0] sroce-batch: begin t_c
[    9.0] sroce-batch: end t_c rc 0
[   10.0] list_del corruption. next->prev should be ffff88800, but was dead000000000122
EOF
a=$(batch_slice t_a <"$tmp/batch.log" | bad_lines)
b=$(batch_slice t_b <"$tmp/batch.log" | bad_lines)
o=$(batch_outside <"$tmp/batch.log" | bad_lines)
t "$([ -z "$a" ] && [ "$b" = '[    6.0] BUG kmalloc-192 (Not tainted): Redzone overwritten' ]; echo $?)" \
	"batch slice: the SLUB report is t_b's, not t_a's"
t "$([ "$o" = '[   10.0] list_del corruption. next->prev should be ffff88800, but was dead000000000122' ]; echo $?)" \
	"batch slice: a report after the last suite is the batch's"

# TAP counts: a SKIP is not a pass, a TODO not a failure, the harness's
# "N planned checks did not run" counts N.
cat >"$tmp/suite.log" <<'EOF'
TAP version 13
1..9
ok 1 - a
ok 2 - kmemleak: nothing unreferenced # SKIP no kmemleak in this kernel
ok 3 - b # skip lower case
not ok 4 - c
not ok 5 - d # TODO known gap
# diagnostics
not ok - k/t_x: 4 planned checks did not run (9 planned, 5 ran)
not ok - k/t_x: kernel log shows a bad pattern
EOF
got=$(tap_counts "$tmp/suite.log")
t "$([ "$got" = "1 6 2 1" ]; echo $?)" "tap_counts: 1 passed, 6 failed (1 + 4 missing + 1), 2 skipped, 1 todo (got $got)"

# Plans: up front and kept; up front and fallen short of (a crash);
# up front and exceeded; at the end and kept; at the end and wrong; none.
plan() {
	printf '%s\n' "$@" >"$tmp/out.log"
	tap_plan_check k/t_x "$tmp/out.log"
}
t "$([ -z "$(plan 'TAP version 13' 1..2 'ok 1 - a' 'not ok 2 - b')" ]; echo $?)" \
	"plan 1..2 up front, 2 ran: nothing to add"
out=$(plan 'TAP version 13' 1..21 'ok 1 - a' 'ok 2 - b' '# Segmentation fault')
t "$([ "$out" = "not ok - k/t_x: 19 planned checks did not run (21 planned, 2 ran)" ] &&
	[ "$(tap_counts <(echo "$out"))" = "0 19 0 0" ]; echo $?)" \
	"plan 1..21 up front, 2 ran: 19 failures"
out=$(plan 'TAP version 13' 1..2 'ok 1 - a' 'not ok 2 - b' 'ok 3 - c')
t "$([ "$(tap_counts <(echo "$out"))" = "0 1 0 0" ]; echo $?)" \
	"plan 1..2 up front, 3 ran: a failure ($out)"
t "$([ -z "$(plan 'TAP version 13' 'ok 1 - a' 'ok 2 - a # SKIP x' 1..2)" ]; echo $?)" \
	"plan 1..2 at the end, 2 ran: nothing to add"
out=$(plan 'TAP version 13' 'ok 1 - a' 'ok 1 - a' 1..1)
t "$([ "$(tap_counts <(echo "$out"))" = "0 1 0 0" ]; echo $?)" \
	"plan 1..1 at the end, 2 ran: a failure ($out)"
out=$(plan 'TAP version 13' 'ok 1 - a' 'ok 2 - b')
t "$([ "$(tap_counts <(echo "$out"))" = "0 1 0 0" ]; echo $?)" \
	"no plan at all (the suite died): a failure ($out)"
out=$(tap_plan_check k/t_x "$tmp/none.log")
t "$([ "$(tap_counts <(echo "$out"))" = "0 1 0 0" ]; echo $?)" \
	"no output at all: a failure ($out)"

echo "1..$n"
[ "$failed" -eq 0 ]
