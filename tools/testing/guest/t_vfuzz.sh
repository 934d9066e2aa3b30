#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Verbs fuzzer: tools/testing/vfuzz/sroce-vfuzz drives one sroce device
# with randomized create/modify/post/reg/bind/destroy sequences,
# out-of-range and boundary parameters, data moving between loopback QP
# pairs, and a checked pair whose transfers and misuse are verified
# (see vfuzz_main.c).  Each run must end without a hang (the fuzzer's
# watchdog, and a deadline here), its TAP lines are taken over, and the
# kernel log must stay clean through it (SLUB reports such as "BUG
# kmalloc-1k (...): Object corrupt" included).  At the end the device is
# deleted, the module must unload, every page pinned for an MR must be
# unpinned and the slab caches must be back to their baseline.
#
# CI: fixed seeds, so a failure reproduces: each run prints its seed and
# the command that repeats it (sroce-vfuzz -d sroce0 -s SEED -n OPS -m
# MODE, after this suite's device setup).  Before them, the minimal
# sequence of each finding the fuzzer made (sroce-vfuzz -r NAME) runs on
# its own, so that it fails by name.  Modes: single (reproducible
# sequence), threads (one thread posts and polls, the other modifies and
# destroys the same objects), fork (children exit or are killed in
# mid-sequence), and single as an unprivileged user (nobody).  About a
# minute and a half of fuzzing under TCG with one vCPU (9,400
# operations).
#
# Environment:
#   SROCE_VFUZZ_LONG=1     long mode, outside CI: random seeds (printed)
#                          and every mode in turn, for
#   SROCE_VFUZZ_MINUTES    minutes (default 30); give the guest a timeout
#                          to match, e.g. SROCE_VM_TIMEOUT=2700 for
#                          check.sh, or vm-run.sh --timeout 2700.
#   SROCE_VFUZZ_SEEDS      "SEED[:MODE[:OPS]] ..." instead of the CI runs
#                          (MODE single|threads|fork|nobody), e.g. to
#                          repeat a failing run.
set -u
. "$(dirname "$0")/lib.sh"

VFUZZ=$SROCE_TREE/tools/testing/vfuzz/sroce-vfuzz
# CI runs: seed:mode:ops.
CI_RUNS="1001:single:2500 1002:single:2500 1003:threads:2000 1004:fork:1200
1005:nobody:1200"
RUN_SECS=$(hang_bound 150)	# deadline of one CI run (it takes 5-25 s)
WATCHDOG=60		# no operation completing for this long: a hang
# Kernel log lines that fail a run: vm/patterns.sh's, and SLUB's reports,
# whose first line is "BUG <cache> (<taint>): <what>" (no colon after BUG).
KBAD='\<BUG[: ]|WARNING:|Oops|general protection|list_(add|del) corruption|refcount_t:|blocked for more than|\<stall|soft lockup|hard LOCKUP|KASAN|UBSAN|Redzone overwritten|Poison overwritten|Object corrupt|Freepointer corrupt|Object already free|Objects remaining'

if [ ! -x "$VFUZZ" ]; then
	not_ok "sroce-vfuzz is built (make -C tools/testing/vfuzz)"
	tap_done
	exit 1
fi

sroce_deps
ip netns add peer
veth_pair v0 v1 peer
ip addr add 198.18.0.1/24 dev v0
ip -n peer addr add 198.18.0.2/24 dev v1
ip -6 addr add 2001:db8::1/64 dev v0 nodad
ip -n peer -6 addr add 2001:db8::2/64 dev v1 nodad

dev_up() {
	insmod "$SROCE_KO" && rdma link add sroce0 type sroce netdev v0 &&
		wait_for 20 gid_present sroce0 0000:0000:0000:0000:0000:ffff:c612:0001 &&
		wait_for 20 gid_present sroce0 2001:0db8:0000:0000:0000:0000:0000:0001
}

# pins [acquired]: pages pinned and not yet unpinned (or pinned in all).
pins() {
	awk -v what="${1:-}" '$1 == "nr_foll_pin_acquired" { a = $2 }
	     $1 == "nr_foll_pin_released" { r = $2 }
	     END { print what == "acquired" ? a : a - r }' /proc/vmstat
}

# Neighbour entries for the random addresses the fuzzer resolved live on
# until the table's garbage collection: not the driver's, out of the count.
snapshot() {
	ip neigh flush all 2>/dev/null
	ip -6 neigh flush all 2>/dev/null
	slab_snapshot
}

# alive PID: the process exists and is not a zombie.
alive() {
	local st

	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ]
}

HUNG=0
# run_vfuzz SEED MODE OPS: one fuzzer run (MODE nobody: single, as the
# unprivileged user); its TAP lines become ours, then one line for the
# kernel log of the run.
run_vfuzz() {
	local seed=$1 mode=$2 ops=$3 out pid t0 rc line mark
	local -a cmd=("$VFUZZ" -d sroce0 -s "$seed" -n "$ops" -w "$WATCHDOG")

	out=$(mktemp)
	if [ "$mode" = nobody ]; then
		# From tmpfs: the tree may not be reachable for nobody.
		cp "$VFUZZ" /tmp/sroce-vfuzz && chmod 755 /tmp/sroce-vfuzz
		cmd=(setpriv --reuid=nobody --regid=nogroup --clear-groups
		     /tmp/sroce-vfuzz -d sroce0 -s "$seed" -n "$ops" -w "$WATCHDOG")
	else
		cmd+=(-m "$mode")
	fi
	[ -n "${RUN_TIME:-}" ] && cmd+=(-t "$RUN_TIME")
	diag "run: ${cmd[*]}"
	mark=$(kmsg_mark)
	t0=$SECONDS
	"${cmd[@]}" >"$out" 2>&1 </dev/null &
	pid=$!
	while alive "$pid" && [ $((SECONDS - t0)) -lt "$RUN_SECS" ]; do
		sleep 0.2
	done
	if alive "$pid"; then
		kill -KILL "$pid" 2>/dev/null
		sleep 5
		not_ok "vfuzz seed $seed ($mode): ended within ${RUN_SECS}s (hang)"
		if alive "$pid"; then
			# Unkillable: stuck in the kernel.  Show where, then stop.
			diag "pid $pid cannot be killed; its kernel stack:"
			sed 's/^/#   /' "/proc/$pid/stack" 2>/dev/null
			echo w >/proc/sysrq-trigger
			HUNG=1
		fi
	fi
	if [ "$HUNG" = 0 ]; then
		wait "$pid"
		rc=$?
	else
		rc=124
	fi
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		"# op "* | "# verbs"* | "# completions"* | "# async"* | "# fork"* | \
		"# vfuzz"* | "# device"* | "# FINDING"* | "# HANG"* | "#   "* | \
		"# check failed"*)
			echo "$line" ;;
		esac
	done <"$out"
	if ! grep -q "^ok - vfuzz seed $seed .*ops, no hang" "$out" &&
	   ! grep -q "^not ok - vfuzz seed $seed .*ops, no hang" "$out"; then
		not_ok "vfuzz seed $seed ($mode): ran to the end (exit status $rc)"
		tail -n 5 "$out" | sed 's/^/# /'
	fi
	rm -f "$out"
	diag "run ended after $((SECONDS - t0)) s"
	log_clean "$mark" "vfuzz seed $seed ($mode)"
}

# log_clean MARK DESC: one TAP line: no bad kernel log line since MARK.
log_clean() {
	local bad

	bad=$(kmsg_since "$1" | grep -E "$KBAD")
	if [ -z "$bad" ]; then
		ok "$2: kernel log clean"
		return
	fi
	not_ok "$2: kernel log clean"
	head -n 12 <<<"$bad" | sed 's/^/# kernel: /'
	# Where a SLUB report's object came from.
	kmsg_since "$1" | grep -A3 -E 'Allocated in|Freed in' |
		head -n 8 | sed 's/^/# kernel: /'
}

# run_repro NAME: a finding's minimal sequence (sroce-vfuzz -r NAME), its
# TAP lines and its kernel log.
run_repro() {
	local out mark line

	mark=$(kmsg_mark)
	out=$(timeout -k 10 120 "$VFUZZ" -d sroce0 -r "$1" 2>&1 </dev/null)
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		"# atomic write"* | "# check failed"*) echo "$line" ;;
		esac
	done <<<"$out"
	grep -qE '^(not )?ok - ' <<<"$out" ||
		{ not_ok "vfuzz -r $1: ran"; tail -n 3 <<<"$out" | sed 's/^/# /'; }
	log_clean "$mark" "vfuzz -r $1"
}

uverbs_0666() {
	[ "$(stat -c %a /dev/infiniband/uverbs0)" = 666 ]
}

dev_up || { not_ok "sroce0 comes up"; tap_done; exit 1; }
check "/dev/infiniband/uverbs0 is 0666 (verbs for unprivileged users)" uverbs_0666

# Warm-up: first-use allocations (ib_core, uverbs, the provider) are not
# leaks.  Then the baseline, with the module unloaded again.
"$VFUZZ" -d sroce0 -s 1 -n 300 -C >/dev/null 2>&1
rdma link delete sroce0
sroce_unload
before=$(mktemp)
after=$(mktemp)
snapshot >"$before"
pins0=$(pins)
pinned0=$(pins acquired)
dev_up || { not_ok "sroce0 comes up"; tap_done; exit 1; }

# The findings' minimal sequences first: each fails alone, by name.
REPROS="atomic_write mcast_lid ud_ah_pd write_range path_mtu"
if [ -z "${SROCE_VFUZZ_SEEDS:-}" ]; then
	for r in $REPROS; do
		run_repro "$r"
	done
fi

start=$SECONDS
if [ "${SROCE_VFUZZ_LONG:-0}" = 1 ]; then
	mins=${SROCE_VFUZZ_MINUTES:-30}
	RUN_SECS=900
	RUN_TIME=600
	modes=(single threads fork nobody single)
	n=0
	diag "long mode: $mins minutes of random seeds"
	while [ $((SECONDS - start)) -lt $((mins * 60)) ] && [ "$HUNG" = 0 ]; do
		seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
		mode=${modes[$((n % ${#modes[@]}))]}
		ops=20000
		[ "$mode" = fork ] && ops=5000
		run_vfuzz "$seed" "$mode" "$ops"
		n=$((n + 1))
	done
else
	for r in ${SROCE_VFUZZ_SEEDS:-$CI_RUNS}; do
		IFS=: read -r seed mode ops <<<"$r"
		[ "$HUNG" = 0 ] && run_vfuzz "$seed" "${mode:-single}" "${ops:-3000}"
	done
fi
diag "fuzzing took $((SECONDS - start)) s"

if [ "$HUNG" = 1 ]; then
	not_ok "device delete, module unload and leak checks (skipped: a fuzzer process is stuck in the kernel)"
	tap_done
	exit 1
fi
mark=$(kmsg_mark)
check "rdma link delete sroce0 after the fuzzer" rdma link delete sroce0
wait_for 20 eval '! ibdev_exists sroce0'
check "module unloads (rmmod sroce) after the fuzzer" sroce_unload
# ib_core and sroce warn here about objects a process's exit left behind.
log_clean "$mark" "rdma link delete and rmmod"
diag "pages pinned meanwhile: $(($(pins acquired) - pinned0))"
check "every page pinned for an MR was unpinned (nr_foll_pin_acquired - released: $pins0 -> $(pins))" \
	test "$(pins)" = "$pins0"
snapshot >"$after"
slab_check "slab back to baseline after the fuzzer (no cache grew by >= 32 objects)" \
	"$before" "$after" 32 6
if [ -w /sys/kernel/debug/kmemleak ]; then
	check "kmemleak: no unreferenced object allocated through sroce" \
		kmemleak_sroce
fi
rm -f "$before" "$after"
ip netns del peer
tap_done
