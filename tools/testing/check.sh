#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make check`: every test sroce has, on every installed kernel.
#
# Suites: native unit tests and a fuzz smoke of the portable core,
# checkpatch, a W=1 + sparse build per kernel, then the guest test scripts
# in VM boots of each kernel.  Every suite's output lands in
# $SROCE_RESULTS (default results/check-<time>/).  The last line is
# "N passed, N failed" (checks skipped by TAP's SKIP directive are counted
# on the line before, never as passed); the exit status is non-zero on
# any failure.
#
# A guest suite fails, besides on its own "not ok" lines, on a bad kernel
# log line (vm/patterns.sh) in its part of the console or of dmesg, on a
# timeout, and on a TAP plan it fell short of (vm/tap.sh): every planned
# check it did not reach counts as a failure.
#
# Environment: KVERS="k1 k2" to restrict kernels; SROCE_TESTS="t_x ..." to
# restrict guest tests (p_* boot two linked guests; the t_* suites share one
# boot, run one after another from a fresh state, t_pyverbs apart;
# SROCE_BATCH=0 boots once per suite); SROCE_VM_TIMEOUT per suite (default 900 s);
# SROCE_KERNEL_IMAGE boots that bzImage (a debug kernel) for every KVERS;
# SROCE_VM_APPEND adds to the guest kernel command line;
# SROCE_HOST_SUITES=0 skips the host-side suites (unit, fuzz, checkpatch);
# SROCE_PARALLEL=0 runs the kernels one after the other, not side by side;
# SROCE_VM_SMP sets the vCPUs of a one-guest suite (default 1 with kernels
# side by side, else 2); with kernels side by side, the SROCE_SMP_TESTS
# suites (default t_rc t_perf t_hostile t_peerfuzz: t_hostile's index
# races need a second CPU for the racer, t_peerfuzz's frames one to
# arrive while a reset is under way) run afterwards with two vCPUs;
# TEST_PROG_DIRS: the directories of test programs the guests run, each
# built with make -C in the tools step (a directory that does not exist
# is left out).
set -u
tree=$(cd "$(dirname "$0")/../.." && pwd)
cd "$tree"
# shellcheck source=vm/patterns.sh
. "$tree/tools/testing/vm/patterns.sh"
# shellcheck source=vm/tap.sh
. "$tree/tools/testing/vm/tap.sh"

KVERS=${KVERS:-$(for d in /lib/modules/*/build; do
	k=$(basename "$(dirname "$d")")
	[ -e "$d/Makefile" ] && [ -e "/boot/vmlinuz-$k" ] && echo "$k"
done | sort -V)}
SROCE_TESTS=${SROCE_TESTS:-t_badinput t_lifecycle t_cycles t_uverbs t_vfuzz t_qp t_ud t_rc t_rcerr t_spoof t_peerfuzz t_hostile t_frames t_integrity t_loss t_faults t_cc t_rdmacm t_mcast t_netns t_security t_perf t_bench t_pyverbs p_wire p_interop}
SROCE_SMP_TESTS=${SROCE_SMP_TESTS-t_rc t_perf t_hostile t_peerfuzz}
SROCE_VM_TIMEOUT=${SROCE_VM_TIMEOUT:-900}
TEST_PROG_DIRS=${TEST_PROG_DIRS-tools/sroce-verify tools/testing/security tools/testing/hostile tools/testing/vfuzz}
results=${SROCE_RESULTS:-$tree/results/check-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$results"

PASSED=0
FAILED=0
TODO=0
SKIPPED=0
start=$(date +%s)

# tally NAME LOG RC: count TAP lines of a suite (vm/tap.sh); a failing
# suite without a "not ok" line still counts as one failure, a passing
# one without TAP as one pass.
#
# A "not ok ... # TODO reason" line (TAP's todo directive) is a check of a
# feature known to be missing: listed and counted apart, not a failure.
# An "ok ... # SKIP reason" line is a check that could not run: listed
# and counted apart, not a pass.
tally() {
	local name=$1 log=$2 rc=$3 p f s t
	read -r p f s t < <(tap_counts "$log")
	TODO=$((TODO + t))
	SKIPPED=$((SKIPPED + s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name: exit status $rc (see $log)" >>"$log"
	fi
	[ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ] && p=1
	PASSED=$((PASSED + p))
	FAILED=$((FAILED + f))
	local extra=""
	[ "$s" -gt 0 ] && extra+=" $s skipped"
	[ "$t" -gt 0 ] && extra+=" $t todo"
	printf '%-44s %4d passed %3d failed  (%ds)%s\n' "$name" "$p" "$f" \
		"$(($(date +%s) - suite_start))" "$extra"
	# Each failure with the diagnostics right after it (a few "#" lines),
	# so a CI log explains itself without the results directory; each
	# skip on a line of its own.
	awk '/^not ok/ { print "    " $0; d = ($0 !~ /# TODO/) ? 6 : 0; next }
	     d > 0 && /^#/ { print "      " $0; d--; next }
	     { d = 0 }
	     /^ok [0-9]+/ && tolower($0) ~ / # skip/ { print "    " $0 }' "$log"
}

# suite NAME command...: run a host-side suite.
suite() {
	local name=$1 log="$results/$1.log" rc
	shift
	suite_start=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	tally "$name" "$log" "$rc"
}

# build_check KVER: fresh W=1 + sparse build; any warning fails.
build_check() {
	local k=$1 out
	local dir="$tree/build/check-$k"
	rm -rf "$dir"
	out=$(make -C "$tree" BUILD="$dir" KVER="$k" W=1 C=1 2>&1)
	local rc=$?
	echo "$out"
	echo "TAP version 13"
	if [ $rc -eq 0 ] && [ -f "$dir/$k/sroce.ko" ]; then
		echo "ok 1 - sroce.ko builds for $k"
	else
		echo "not ok 1 - sroce.ko builds for $k"
	fi
	if grep -E 'warning:|error:' <<<"$out" | grep -q 'sroce'; then
		echo "not ok 2 - W=1 and sparse clean for $k"
	else
		echo "ok 2 - W=1 and sparse clean for $k"
	fi
	rm -rf "$dir"
}

# klog_check LABEL CONSOLE OUTPUT DMESG: a "not ok" line, with the first
# lines found, if the kernel log shows a bad pattern (vm/patterns.sh):
# CONSOLE without the lines of OUTPUT (the test's own output; "" for
# none), and DMESG; missing files are left out.
klog_check() {
	local hits
	hits=$(
		[ -e "$2" ] && kernel_lines "$2" "$3" | bad_lines | sed 's/^/console: /'
		[ -e "$4" ] && bad_lines <"$4" | sed 's/^/dmesg: /'
		true
	)
	[ -n "$hits" ] || return 0
	echo "not ok - $1: kernel log shows a bad pattern"
	head -n 8 <<<"$hits" | sed 's/^/# /'
}

# vm_tally NAME LOG RC: a harness-level failure (timeout, a guest that
# died) becomes a TAP failure of its own, then the suite is tallied.  The
# kernel log and the plan are checked by the callers (klog_check,
# tap_plan_check); vm-run.sh's verdict on the kernel log (3) stands even
# if they found nothing.
vm_tally() {
	case $3 in
	2) echo "not ok - $1: the guest stopped before the script ended" >>"$2" ;;
	3) grep -q '^not ok - .*: kernel log shows a bad pattern' "$2" ||
		echo "not ok - $1: vm-run.sh found a bad pattern in the kernel log" >>"$2" ;;
	124) echo "not ok - $1: timeout" >>"$2" ;;
	125) echo "not ok - $1: boot hung" >>"$2" ;;
	esac
	tally "$1" "$2" "$3"
}

# vm_boot DIR KVER NAME MEM TIMEOUT SCRIPT [ARGS...]: one guest boot
# running SCRIPT, results in DIR; sets rc to vm-run.sh's status.  A guest
# that died before the test script started (no output.log) never loaded
# sroce: under TCG the distro kernel very rarely oopses in early boot (seen
# once: int3 in sched_clock_cpu during text patching) or hangs (seen once:
# silent after the switch to the hpet clocksource; vm-run.sh's boot
# watchdog kills it).  Boot once more, and keep the first console.
vm_boot() {
	local dir=$1 k=$2 name=$3 mem=$4 tmo=$5 try
	shift 5
	for try in 1 2; do
		tools/testing/vm/vm-run.sh --kver "$k" --results "$dir" --mem "$mem" \
			${SROCE_KERNEL_IMAGE:+--kernel-image "$SROCE_KERNEL_IMAGE"} \
			${SROCE_VM_APPEND:+--append "$SROCE_VM_APPEND"} \
			--smp "$SROCE_VM_SMP" --timeout "$tmo" --name "$name" --nic-dangling \
			-- "$@" >"$dir/host.log" 2>&1
		rc=$?
		[ "$rc" -ne 0 ] && [ ! -e "$dir/output.log" ] && [ "$try" = 1 ] || break
		mv "$dir/console.log" "$dir/console-boot-failure.log" 2>/dev/null
		mv "$dir/host.log" "$dir/host-boot-failure.log"
	done
}

# vm_suite KVER TEST: one guest boot running tools/testing/guest/TEST.sh.
vm_suite() {
	local k=$1 t=$2 dir="$results/$1/$2" rc mem=2048 tmo=$SROCE_VM_TIMEOUT
	mkdir -p "$dir"
	suite_start=$(date +%s)
	# The pyverbs suite runs twice (rdma_rxe, sroce) with huge pages.
	[ "$t" = t_pyverbs ] && { mem=3072; tmo=$((tmo > 1500 ? tmo : 1500)); }
	vm_boot "$dir" "$k" "$t" "$mem" "$tmo" "$tree/tools/testing/guest/$t.sh"
	cat "$dir/output.log" "$dir/host.log" >"$dir/suite.log" 2>/dev/null
	[ -e "$dir/host-boot-failure.log" ] &&
		echo "# the first boot died before the test started (see console-boot-failure.log); booted again" >>"$dir/suite.log"
	{
		tap_plan_check "$k/$t" "$dir/output.log"
		klog_check "$k/$t" "$dir/console.log" "$dir/output.log" "$dir/dmesg.log"
	} >>"$dir/suite.log"
	vm_tally "$k/$t" "$dir/suite.log" "$rc"
}

# vm_batch KVER TEST...: one guest boot running several suites one after
# the other (guest/run_batch.sh), then each tallied as if it had had a
# boot of its own: its output, its plan, its exit status, and the kernel
# messages logged while it ran (its slices of console.log and dmesg.log,
# between its markers) checked against the bad patterns.
vm_batch() {
	local k=$1 dir="$results/$1/batch-$2" rc t n=$(($# - 1)) sdir src brc hit=0
	shift
	mkdir -p "$dir"
	local bstart
	bstart=$(date +%s)
	vm_boot "$dir" "$k" batch 2048 $((SROCE_VM_TIMEOUT * n + 60)) \
		"$tree/tools/testing/guest/run_batch.sh" -t "$SROCE_VM_TIMEOUT" "$@"
	brc=$rc
	for t in "$@"; do
		sdir=$results/$k/$t
		mkdir -p "$sdir"
		suite_start=$bstart
		[ -r "$dir/$t/secs" ] && suite_start=$(($(date +%s) - $(cat "$dir/$t/secs")))
		cat "$dir/$t/output.log" >"$sdir/suite.log" 2>/dev/null
		# The kernel messages between this suite's markers.
		for src in console dmesg; do
			rm -f "$sdir/$src.log"
			[ -e "$dir/$src.log" ] &&
				batch_slice "$t" <"$dir/$src.log" >"$sdir/$src.log"
		done
		rc=$(cat "$dir/$t/rc" 2>/dev/null)
		{
			if [ -z "$rc" ]; then
				echo "not ok - $k/$t: did not run to the end (the batch guest stopped; see $dir/host.log)"
				tail -n 5 "$dir/host.log" | sed 's/^/# /'
			fi
			tap_plan_check "$k/$t" "$dir/$t/output.log"
			klog_check "$k/$t" "$sdir/console.log" "" "$sdir/dmesg.log"
		} >>"$sdir/suite.log"
		[ -z "$rc" ] && rc=1
		grep -q '^not ok - .*: kernel log shows a bad pattern' "$sdir/suite.log" &&
			hit=1
		# (the suite's own exit status: only run_batch.sh's timeout
		# gives it a meaning of the harness's)
		[ "$rc" = 124 ] && echo "not ok - $k/$t: timeout" >>"$sdir/suite.log"
		tally "$k/$t" "$sdir/suite.log" "$rc"
		bstart=$(date +%s)
	done
	# A bad pattern outside every suite (boot, shutdown) is the batch's;
	# so is one vm-run.sh saw that no suite's slice shows.
	local blog=$dir/batch.log
	: >"$blog"
	for src in console dmesg; do
		rm -f "$dir/$src-outside.log"
		[ -e "$dir/$src.log" ] && batch_outside <"$dir/$src.log" >"$dir/$src-outside.log"
	done
	klog_check "$k/batch-$1" "$dir/console-outside.log" "$dir/output.log" \
		"$dir/dmesg-outside.log" >>"$blog"
	if [ "$brc" = 3 ] && [ ! -s "$blog" ] && [ "$hit" = 0 ]; then
		echo "not ok - $k/batch-$1: vm-run.sh found a bad pattern in the kernel log (see $dir/host.log)" >>"$blog"
	fi
	if [ -s "$blog" ]; then
		local f
		read -r _ f _ _ < <(tap_counts "$blog")
		FAILED=$((FAILED + f))
		sed 's/^not ok/    not ok/; s/^#/      #/' "$blog"
	fi
}

# vm_pair_suite KVER TEST: two linked guests both running TEST.sh.
vm_pair_suite() {
	local k=$1 t=$2 dir="$results/$1/$2" rc try
	mkdir -p "$dir"
	suite_start=$(date +%s)
	for try in 1 2; do
		tools/testing/vm/vm-pair.sh --kver "$k" --results "$dir" \
			${SROCE_KERNEL_IMAGE:+--kernel-image "$SROCE_KERNEL_IMAGE"} \
			${SROCE_VM_APPEND:+--append "$SROCE_VM_APPEND"} \
			--timeout "$SROCE_VM_TIMEOUT" \
			-- "$tree/tools/testing/guest/$t.sh" \
			-- "$tree/tools/testing/guest/$t.sh" >"$dir/host.log" 2>&1
		rc=$?
		# 125: a guest's boot hung (vm-run.sh's watchdog): boot again.
		[ "$rc" = 125 ] && [ "$try" = 1 ] || break
		mv "$dir/host.log" "$dir/host-boot-failure.log"
	done
	cat "$dir/server/output.log" "$dir/client/output.log" "$dir/host.log" \
		>"$dir/suite.log" 2>/dev/null
	# Each guest on its own: vm-pair.sh's status is one guest's only.
	local g
	for g in server client; do
		tap_plan_check "$k/$t $g" "$dir/$g/output.log"
		klog_check "$k/$t $g" "$dir/$g/console.log" "$dir/$g/output.log" \
			"$dir/$g/dmesg.log"
	done >>"$dir/suite.log"
	vm_tally "$k/$t" "$dir/suite.log" "$rc"
}

# bench_report KVER: the bench smoke's samples (t_bench) as `make bench`
# shows them: table, JSON and plot in results/KVER/t_bench/.  Reporting
# only: t_bench's own checks are the test.  In a one-vCPU guest both
# perftest sides poll on one CPU, so the latencies are the scheduler's
# time slices there, not the drivers'.
bench_report() {
	local tsv
	tsv=$(ls "$results/$1"/batch-*/t_bench/bench-a.tsv "$results/$1"/t_bench/bench-a.tsv 2>/dev/null | head -n1)
	[ -n "$tsv" ] || return 0
	mkdir -p "$results/$1/t_bench"
	python3 tools/sroce-bench/report.py --kver "$1" --out "$results/$1/t_bench" \
		--plot "$tree/build/bench/bench_plot" "table A smoke ($SROCE_VM_SMP vCPU guest)=$tsv" \
		>"$results/$1/t_bench/report.txt" 2>&1 &&
		echo "    bench smoke report: $results/$1/t_bench/report.txt"
}

KVERS=$(echo $KVERS)
# Several kernels run side by side, one vCPU per guest (see below); a
# single kernel, or SROCE_PARALLEL=0, gets two vCPUs per guest.
set -- $KVERS
[ $# -gt 1 ] || SROCE_PARALLEL=0

# in_list WORD LIST...: WORD is one of LIST.
in_list() {
	local w=$1
	shift
	case " $* " in *" $w "*) return 0 ;; esac
	return 1
}

# SIDE_TESTS run with the kernels side by side, SMP_TESTS after them
# (see the end).
SIDE_TESTS=() SMP_TESTS=()
for t in $SROCE_TESTS; do
	if [ "${SROCE_PARALLEL:-1}" = 1 ] && in_list "$t" $SROCE_SMP_TESTS; then
		SMP_TESTS+=("$t")
	else
		SIDE_TESTS+=("$t")
	fi
done
if [ "${SROCE_PARALLEL:-1}" = 1 ]; then
	SROCE_VM_SMP=${SROCE_VM_SMP:-1}
	mode="side by side, $SROCE_VM_SMP vCPU each"
	[ ${#SMP_TESTS[@]} -gt 0 ] && mode+=", then ${SMP_TESTS[*]} with 2"
else
	SROCE_VM_SMP=${SROCE_VM_SMP:-2}
	mode="one after the other, $SROCE_VM_SMP vCPUs each"
fi
echo "sroce check: kernels: $KVERS ($mode); results in $results"

# add_tally FILE: add a subshell's "passed failed todo skipped" counts.
add_tally() {
	local p f t s
	if read -r p f t s <"$1" 2>/dev/null; then
		PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) TODO=$((TODO + t))
		SKIPPED=$((SKIPPED + ${s:-0}))
	else
		FAILED=$((FAILED + 1))
		echo "not ok - ${1##*/}: no counts (see $results)"
	fi
}

fuzz_pid=
if [ "${SROCE_HOST_SUITES:-1}" = 1 ]; then
	# The fuzz smoke keeps one CPU busy for 40 s: it runs beside the
	# other host suites and the builds, and reports after them.
	(PASSED=0 FAILED=0 TODO=0 SKIPPED=0
	 suite fuzz make -C tools/testing/fuzz run FUZZ_SECONDS=10
	 echo "$PASSED $FAILED $TODO $SKIPPED" >"$results/fuzz.tally") >"$results/fuzz.out" 2>&1 &
	fuzz_pid=$!
	suite unit make -C tools/testing/unit run
	suite checkpatch tools/checkpatch.sh
	suite sim make -s sim
	suite microbench make -s microbench
fi
# build_test_progs: make -C each TEST_PROG_DIRS directory that exists;
# one TAP line each.
build_test_progs() {
	local d n=0 fail=0
	echo "TAP version 13"
	for d in $TEST_PROG_DIRS; do
		[ -d "$d" ] || continue
		n=$((n + 1))
		if make -C "$d"; then
			echo "ok $n - make -C $d"
		else
			fail=1
			echo "not ok $n - make -C $d"
		fi
	done
	echo "1..$n"
	return $fail
}

# The harness's own kernel log patterns and TAP reading, on sample lines
# (always: the guest suites' verdicts rest on them).
suite patterns tools/testing/vm/test_patterns.sh
# Userspace test tools the guests run (compiled against the host's libs).
suite tools build_test_progs
make -s bench-plot >/dev/null 2>&1
GUEST_KVERS=
for k in $KVERS; do
	suite "build-$k" build_check "$k"
	if make -s KVER="$k" >"$results/make-$k.log" 2>&1; then
		GUEST_KVERS+=" $k"
	else
		FAILED=$((FAILED + 1))
		echo "build for $k failed"
	fi
done
if [ -n "$fuzz_pid" ]; then
	wait "$fuzz_pid"
	cat "$results/fuzz.out"
	add_tally "$results/fuzz.tally"
fi

# run_suites KVER TEST...: guest suites on one kernel: the t_* ones in
# shared boots (guest/run_batch.sh), t_pyverbs and the p_* pairs in boots
# of their own; then the bench smoke's report if t_bench ran.
run_suites() {
	local k=$1 t batch=()
	shift
	for t in "$@"; do
		case $t in
		p_* | t_pyverbs)
			[ ${#batch[@]} -gt 0 ] && vm_batch "$k" "${batch[@]}"
			batch=()
			case $t in
			p_*) vm_pair_suite "$k" "$t" ;;
			*) vm_suite "$k" "$t" ;;
			esac
			;;
		*)
			if [ "${SROCE_BATCH:-1}" = 1 ]; then
				batch+=("$t")
			else
				vm_suite "$k" "$t"
			fi
			;;
		esac
	done
	[ ${#batch[@]} -gt 0 ] && vm_batch "$k" "${batch[@]}"
	in_list t_bench "$@" && bench_report "$k"
	return 0
}

# guest_suites KVER: SIDE_TESTS on one kernel, in a subshell of its own;
# the counts go to $results/KVER.tally.
guest_suites() {
	PASSED=0 FAILED=0 TODO=0 SKIPPED=0
	run_suites "$1" "${SIDE_TESTS[@]}"
	echo "$PASSED $FAILED $TODO $SKIPPED" >"$results/$1.tally"
}

# The kernels' guests run side by side, one vCPU each (SROCE_PARALLEL=0:
# one kernel after the other, two vCPUs per guest).  An emulated CPU keeps
# one host CPU busy, and this machine has two: two one-vCPU guests take no
# longer side by side than one of them alone, about 1.35x a two-vCPU
# guest's time, so make check takes about two thirds as long.  Two
# two-vCPU guests side by side would each take twice as long (their
# vCPUs wait on each other's preempted ones).  The first kernel reports
# as it goes, the others after it.
pids=()
first=${GUEST_KVERS# }
first=${first%% *}
for k in $GUEST_KVERS; do
	[ "$k" != "$first" ] && [ "${SROCE_PARALLEL:-1}" = 1 ] || continue
	(guest_suites "$k" >"$results/$k.out" 2>&1) &
	pids+=($!)
done
[ -n "$first" ] && (guest_suites "$first")
[ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"
for k in $GUEST_KVERS; do
	[ "$k" != "$first" ] && [ "${SROCE_PARALLEL:-1}" = 0 ] && (guest_suites "$k")
	[ -e "$results/$k.out" ] && cat "$results/$k.out"
	add_tally "$results/$k.tally"
done

# With one vCPU the requester never leaves a streaming poster's CPU for
# a worker on another (t_perf counts 0 deferred doorbells), and no two
# CPUs run one QP's paths at once: the SROCE_SMP_TESTS suites run after
# the others, in two-vCPU guests, one kernel at a time.
if [ ${#SMP_TESTS[@]} -gt 0 ]; then
	for k in $GUEST_KVERS; do
		SROCE_VM_SMP=2 run_suites "$k" "${SMP_TESTS[@]}"
	done
fi

echo "elapsed: $(($(date +%s) - start)) s"
[ "$TODO" -gt 0 ] && echo "$TODO known gaps (TAP TODO, not counted as failures)"
echo "$SKIPPED skipped (TAP SKIP, not counted as passed)"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
