#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make check`: every test sroce has, on every installed kernel.
#
# Suites: native unit tests and a fuzz smoke of the portable core,
# checkpatch, a W=1 + sparse build per kernel, then the guest test scripts
# in VM boots of each kernel.  Every suite's output lands in
# $SROCE_RESULTS (default results/check-<time>/).  The last line is
# "N passed, N failed"; the exit status is non-zero on any failure.
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
# suites (default t_rc t_perf) run afterwards with two vCPUs.
set -u
tree=$(cd "$(dirname "$0")/../.." && pwd)
cd "$tree"
# shellcheck source=vm/patterns.sh
. "$tree/tools/testing/vm/patterns.sh"

KVERS=${KVERS:-$(for d in /lib/modules/*/build; do
	k=$(basename "$(dirname "$d")")
	[ -e "$d/Makefile" ] && [ -e "/boot/vmlinuz-$k" ] && echo "$k"
done | sort -V)}
SROCE_TESTS=${SROCE_TESTS:-t_badinput t_lifecycle t_cycles t_uverbs t_vfuzz t_qp t_ud t_rc t_rcerr t_frames t_integrity t_loss t_faults t_cc t_rdmacm t_mcast t_netns t_perf t_bench t_pyverbs p_wire p_interop}
SROCE_SMP_TESTS=${SROCE_SMP_TESTS-t_rc t_perf}
SROCE_VM_TIMEOUT=${SROCE_VM_TIMEOUT:-900}
results=${SROCE_RESULTS:-$tree/results/check-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$results"

PASSED=0
FAILED=0
TODO=0
start=$(date +%s)

# tally NAME LOG RC: count TAP lines of a suite; a failing suite without a
# "not ok" line still counts as one failure, a passing one without TAP as
# one pass.
#
# A "not ok ... # TODO reason" line (TAP's todo directive) is a check of a
# feature known to be missing: listed and counted apart, not a failure.
tally() {
	local name=$1 log=$2 rc=$3 p f t
	p=$(grep -cE '^ok [0-9]+' "$log")
	f=$(grep -E '^not ok [0-9]+' "$log" | grep -cv '# TODO')
	t=$(grep -E '^not ok [0-9]+' "$log" | grep -c '# TODO')
	TODO=$((TODO + t))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name: exit status $rc (see $log)" >>"$log"
	fi
	[ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && p=1
	PASSED=$((PASSED + p))
	FAILED=$((FAILED + f))
	local todo=""
	[ "$t" -gt 0 ] && todo=" $t todo"
	printf '%-44s %4d passed %3d failed  (%ds)%s\n' "$name" "$p" "$f" \
		"$(($(date +%s) - suite_start))" "$todo"
	# Each failure with the diagnostics right after it (a few "#" lines),
	# so a CI log explains itself without the results directory.
	awk '/^not ok/ { print "    " $0; d = ($0 !~ /# TODO/) ? 6 : 0; next }
	     d > 0 && /^#/ { print "      " $0; d--; next }
	     { d = 0 }' "$log"
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

# vm_tally NAME LOG RC: a harness-level failure (bad kernel log pattern,
# timeout) becomes a TAP failure of its own, then the suite is tallied.
vm_tally() {
	case $3 in
	3) echo "not ok - $1: kernel log shows a bad pattern" >>"$2" ;;
	124) echo "not ok - $1: timeout" >>"$2" ;;
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
	vm_tally "$k/$t" "$dir/suite.log" "$rc"
}

# vm_batch KVER TEST...: one guest boot running several suites one after
# the other (guest/run_batch.sh), then each tallied as if it had had a
# boot of its own: its output, its exit status, and the kernel messages
# logged while it ran checked against the bad patterns.
vm_batch() {
	local k=$1 dir="$results/$1/batch-$2" rc t n=$(($# - 1)) sdir
	shift
	mkdir -p "$dir"
	local bstart
	bstart=$(date +%s)
	vm_boot "$dir" "$k" batch 2048 $((SROCE_VM_TIMEOUT * n + 60)) \
		"$tree/tools/testing/guest/run_batch.sh" -t "$SROCE_VM_TIMEOUT" "$@"
	for t in "$@"; do
		sdir=$results/$k/$t
		mkdir -p "$sdir"
		suite_start=$bstart
		[ -r "$dir/$t/secs" ] && suite_start=$(($(date +%s) - $(cat "$dir/$t/secs")))
		cat "$dir/$t/output.log" >"$sdir/suite.log" 2>/dev/null
		# The kernel messages between this suite's markers.
		tr -d '\r' <"$dir/console.log" 2>/dev/null |
			awk -v t="$t" '/sroce-batch: begin / { on = ($NF == t); next }
				       /sroce-batch: end / { on = 0 } on' >"$sdir/console.log"
		rc=$(cat "$dir/$t/rc" 2>/dev/null)
		if [ -z "$rc" ]; then
			echo "not ok - $k/$t: did not run to the end (the batch guest stopped; see $dir/host.log)" >>"$sdir/suite.log"
			tail -n 5 "$dir/host.log" | sed 's/^/# /' >>"$sdir/suite.log"
			rc=1
		elif grep -qE "$BAD_PATTERNS" "$sdir/console.log"; then
			grep -E "$BAD_PATTERNS" "$sdir/console.log" | head -n 5 |
				sed 's/^/# console: /' >>"$sdir/suite.log"
			rc=3
		fi
		vm_tally "$k/$t" "$sdir/suite.log" "$rc"
		bstart=$(date +%s)
	done
	# A bad pattern outside every suite (boot, shutdown) is the batch's.
	local outside
	outside=$(tr -d '\r' <"$dir/console.log" 2>/dev/null |
		awk '/sroce-batch: begin /{ on = 1 } /sroce-batch: end /{ on = 0; next } !on' |
		grep -E "$BAD_PATTERNS" | grep -v 'sroce-batch: ')
	if [ -n "$outside" ]; then
		FAILED=$((FAILED + 1))
		echo "    not ok - $k/batch-$1: kernel log shows a bad pattern outside the suites (see $dir/console.log)"
		head -n 3 <<<"$outside" | sed 's/^/      # /'
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

# add_tally FILE: add a subshell's "passed failed todo" counts.
add_tally() {
	local p f t
	if read -r p f t <"$1" 2>/dev/null; then
		PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) TODO=$((TODO + t))
	else
		FAILED=$((FAILED + 1))
		echo "not ok - ${1##*/}: no counts (see $results)"
	fi
}

fuzz_pid=
if [ "${SROCE_HOST_SUITES:-1}" = 1 ]; then
	# The fuzz smoke keeps one CPU busy for 40 s: it runs beside the
	# other host suites and the builds, and reports after them.
	(PASSED=0 FAILED=0 TODO=0
	 suite fuzz make -C tools/testing/fuzz run FUZZ_SECONDS=10
	 echo "$PASSED $FAILED $TODO" >"$results/fuzz.tally") >"$results/fuzz.out" 2>&1 &
	fuzz_pid=$!
	suite unit make -C tools/testing/unit run
	suite checkpatch tools/checkpatch.sh
	suite sim make -s sim
	suite microbench make -s microbench
fi
# Userspace test tools the guests run (compiled against the host's libs).
suite tools sh -c 'make -C tools/sroce-verify && make -C tools/testing/vfuzz'
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
	PASSED=0 FAILED=0 TODO=0
	run_suites "$1" "${SIDE_TESTS[@]}"
	echo "$PASSED $FAILED $TODO" >"$results/$1.tally"
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
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
