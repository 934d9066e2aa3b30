#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# rdma-core's pyverbs suite (/usr/share/doc/rdma-core/tests) on rdma_rxe
# (rxe0, reference) and on sroce (sroce0) in one guest, and a comparison.
#
# rdma_rxe binds UDP 4791 in the initial network namespace, so sroce0 lives
# in its own namespace ns_s and its suite runs there (the rdmacm tests use
# the IP of the device's netdev and the namespace's routing).  rxe0 is on a
# veth in the initial namespace.  When the guest has a virtio NIC
# (vm-run.sh --nic-dangling), sroce0 is created on it: only a netdev with a
# parent device gives /sys/class/infiniband/sroce0/device/net/, without
# which the rdmacm tests skip ("doesn't have net interface").  Without a
# NIC, sroce0 is on a veth (and its rdmacm tests skip).
#
# Each suite runs under a watchdog: a test that prints nothing for
# PYVERBS_STALL seconds (default 180) is killed and recorded as hung, and
# the suite restarts on the tests that have not run yet; a device gets at
# most PYVERBS_BUDGET_RXE / PYVERBS_BUDGET_SROCE seconds in all.
#
# Results in $RESULTS (/mnt/results): pyverbs-DEV.partN.log (unittest -v
# output), pyverbs-DEV.json (per test outcome), pyverbs-DEV.times (seconds
# per test, approximate), pyverbs-summary.txt (table and failures).
#
#   vm-run.sh --kver K --timeout 1500 --mem 3072 [--nic-dangling] -- \
#       tools/testing/guest/t_pyverbs.sh
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SUM=$HERE/pyverbs_summary.py
PY=/usr/bin/python3 # the distro python: it has pyverbs
RES=${RESULTS:-/mnt/results}
T=/tmp/tests
STALL=${PYVERBS_STALL:-180}
BUDGET_RXE=${PYVERBS_BUDGET_RXE:-420}
BUDGET_SROCE=${PYVERBS_BUDGET_SROCE:-660}
mkdir -p "$RES"

now() { printf '%d' "${EPOCHREALTIME%.*}"; }

tap_plan 12

# The suite, uncompressed, writable (python writes __pycache__).
rm -rf "$T"
cp -r /usr/share/doc/rdma-core/tests "$T" && gunzip -f "$T"/*.gz
check "pyverbs suite copied to $T ($(ls "$T"/test_*.py | wc -l) test files)" \
	test -f "$T/run_tests.py" -a -f "$T/base.py"

# test_parent_domain's huge page test maps 2 MiB MAP_HUGETLB pages (one per
# player); utils.requires_huge_pages() wants 2048kB nr_hugepages > 0.
HP=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
echo 64 >"$HP" 2>/dev/null
check "2 MiB huge pages reserved ($(cat "$HP" 2>/dev/null))" \
	test "$(cat "$HP" 2>/dev/null || echo 0)" -ge 8

# rxe0 on a veth in the initial namespace.
modprobe rdma_rxe
veth_pair vr0 vr1
ip addr add 198.18.0.1/24 dev vr0
ip -6 addr add 2001:db8::1/64 dev vr0 nodad
rdma link add rxe0 type rxe netdev vr0
check "rxe0 on vr0 (initial namespace), port ACTIVE" \
	wait_for 30 eval '[ "$(port_state rxe0)" = "4: ACTIVE" ]'

# sroce0 in namespace ns_s.
if ! sroce_load; then
	not_ok "load sroce"
	tap_done
	exit 1
fi
ip netns add ns_s
ip -n ns_s link set lo up
if [ -n "${SROCE_NETDEV:-}" ] && [ -e "/sys/class/net/$SROCE_NETDEV/device" ]; then
	snd=$SROCE_NETDEV
	ip link set "$snd" netns ns_s
	diag "sroce0 on the virtio NIC $snd (moved into ns_s)"
else
	snd=vs0
	ip link add name vs0 type veth peer name vs1
	ip link set vs0 netns ns_s
	ip link set vs1 netns ns_s
	ip -n ns_s link set vs1 up
	diag "sroce0 on veth vs0 in ns_s (no virtio NIC: rdmacm tests will skip)"
fi
# IPv4 first: base.py takes the netdev's first address ('ip -j addr').
ip -n ns_s addr add 198.18.1.1/24 dev "$snd"
ip -n ns_s -6 addr add 2001:db8:1::1/64 dev "$snd" nodad
ip -n ns_s link set "$snd" up
ip netns exec ns_s rdma link add sroce0 type sroce netdev "$snd"
check "sroce0 on $snd (namespace ns_s), port ACTIVE, IPv4 GID" eval '
	wait_for 30 eval "[ \"\$(port_state sroce0)\" = \"4: ACTIVE\" ]" &&
	wait_for 30 gid_present sroce0 0000:0000:0000:0000:0000:ffff:c612:0101'
# What base.py's _get_ip_mac() sees: it lists device/net/ and takes the
# first interface's first address from 'ip -j addr show'.
for d in rxe0 sroce0; do
	ns=; [ $d = sroce0 ] && ns=ns_s
	diag "$d: device -> $(readlink /sys/class/infiniband/$d/device 2>/dev/null || echo '(none)')," \
		"device/net/: $(in_ns "$ns" ls /sys/class/infiniband/$d/device/net/ 2>&1 | tr '\n' ' ')"
done

# run_suite DEV NS BUDGET: the suite on DEV inside namespace NS ("" = the
# initial one) under the stall watchdog; writes $RES/pyverbs-DEV.json.
run_suite() {
	local dev=$1 ns=$2 budget=$3
	local base=$RES/pyverbs-$dev pre=() t0 deadline part=0 pid plog
	local size last_size last_change cur prev_cur prev_t killed=0 stalled
	local parts=() hung=() args=() t prev_cur='' prev_t=0 cur=''
	[ -n "$ns" ] && pre=(ip netns exec "$ns")
	rm -f "$base".*
	(cd "$T" && "${pre[@]}" "$PY" run_tests.py --list-tests) 2>/dev/null |
		grep '^tests\.' >"$base.all"
	: >"$base.hung"
	: >"$base.times"
	t0=$(now)
	deadline=$((t0 + budget))
	while :; do
		part=$((part + 1))
		plog=$base.part$part.log
		args=()
		if [ $part -gt 1 ]; then
			mapfile -t args < <("$PY" "$SUM" remaining "$base.all" "${parts[@]}" |
				grep -vxF -f "$base.hung")
			[ ${#args[@]} -eq 0 ] && break
			diag "$dev: restarting on the ${#args[@]} tests not run yet"
		fi
		if [ "$(now)" -ge $((deadline - 10)) ]; then
			killed=1
			break
		fi
		parts+=("$plog")
		# setsid: the suite and its forked players are one process
		# group, killed together.
		(cd "$T" && exec setsid "${pre[@]}" "$PY" -u run_tests.py \
			--dev "$dev" ${GID[$dev]:+--gid "${GID[$dev]}"} -v \
			"${args[@]}") >"$plog" 2>&1 &
		pid=$!
		last_size=-1 last_change=$(now) prev_cur='' prev_t=$(now) stalled=0
		while kill -0 "$pid" 2>/dev/null; do
			sleep 1
			t=$(now)
			size=$(stat -c %s "$plog")
			if [ "$size" != "$last_size" ]; then
				last_size=$size last_change=$t
				# Test started last: the unterminated " ... " line.
				cur=$(tail -c 400 "$plog" | tail -n 1 |
					sed -n 's/^ *\(test_[A-Za-z0-9_]*\) (.*) \.\.\. $/\1/p')
				if [ "$cur" != "$prev_cur" ]; then
					[ -n "$prev_cur" ] && echo "$((t - prev_t)) $prev_cur" >>"$base.times"
					prev_cur=$cur prev_t=$t
				fi
			elif [ $((t - last_change)) -ge "$STALL" ]; then
				stalled=1
			fi
			[ "$t" -ge "$deadline" ] && killed=1
			[ $stalled = 1 ] || [ $killed = 1 ] || continue
			cur=$("$PY" "$SUM" running "$plog")
			diag "$dev: ${cur:-?} made no progress for $((t - last_change))s" \
				"$([ $killed = 1 ] && echo "(budget of ${budget}s used up)"): killing the suite"
			diag "suite process tree:"; ps -o pid,stat,wchan:20,etimes,args -g "$pid" 2>/dev/null | sed 's/^/# /'
			for p in $(ps -o pid= -g "$pid" 2>/dev/null); do
				grep -q '^State:.*D' "/proc/$p/status" 2>/dev/null &&
					sed "s/^/# $p D-state stack: /" "/proc/$p/stack" 2>/dev/null
			done
			kill -KILL -- "-$pid" 2>/dev/null
			[ -n "$cur" ] && [ $killed = 0 ] && echo "$cur" >>"$base.hung"
			[ -n "$cur" ] && hung+=(--hung "$cur")
			break
		done
		# A process stuck in the kernel does not die: do not wait forever.
		if { wait_for 30 eval "! kill -0 $pid"; } 2>/dev/null; then
			wait "$pid" 2>/dev/null
		else
			diag "$dev: suite does not die after SIGKILL"
			killed=1
		fi
		[ $stalled = 1 ] && [ $killed = 0 ] && [ -n "$cur" ] && continue
		[ $stalled = 1 ] && killed=1
		break
	done
	[ -n "$prev_cur" ] && echo "$(($(now) - prev_t)) $prev_cur" >>"$base.times"
	local secs=$(($(now) - t0))
	diag "$dev: suite took ${secs}s in $part part(s)"
	[ $killed = 1 ] && diag "$dev: killed; $("$PY" "$SUM" remaining "$base.all" \
		"${parts[@]}" | grep -cvxF -f "$base.hung") tests did not run"
	[ $killed = 1 ] && hung+=(--killed)
	"$PY" "$SUM" parse "$base.json" "${parts[@]}" "${hung[@]}" --seconds "$secs"
}

# Both suites use the IPv4 RoCE v2 GID (--gid): without it every test's
# setUp walks all GIDs and, on a device with a netdev link (sroce0 on the
# virtio NIC), runs "ls" and "ip -j addr" for each, about 0.3 s a test
# under TCG.
declare -A GID
GID[rxe0]=$(gid_index rxe0 "$(gid_v4 198.18.0.1)")
GID[sroce0]=$(gid_index sroce0 "$(gid_v4 198.18.1.1)")
diag "IPv4 GID index: rxe0 ${GID[rxe0]:-none}, sroce0 ${GID[sroce0]:-none}"

modprobe rdma_ucm
run_suite rxe0 "" "$BUDGET_RXE"
check "pyverbs on rxe0 ran to completion" \
	eval '! grep -q "\"killed\": true" "$RES/pyverbs-rxe0.json" && [ ! -s "$RES/pyverbs-rxe0.hung" ]'
run_suite sroce0 ns_s "$BUDGET_SROCE"

S=$RES/pyverbs-summary.txt
{
	echo "pyverbs suite, kernel $(uname -r), sroce0 on $snd"
	"$PY" "$SUM" table rxe0="$RES/pyverbs-rxe0.json" sroce0="$RES/pyverbs-sroce0.json"
	echo
	echo "slowest tests (s): rxe0: $(sort -rn "$RES/pyverbs-rxe0.times" | head -5 | tr '\n' ' ')"
	echo "slowest tests (s): sroce0: $(sort -rn "$RES/pyverbs-sroce0.times" | head -5 | tr '\n' ' ')"
	echo
	echo "rxe0 failures:"
	"$PY" "$SUM" failures "$RES/pyverbs-rxe0.json"
	echo
	echo "sroce0 failures, by exception:"
	"$PY" "$SUM" failures "$RES/pyverbs-sroce0.json"
} >"$S" 2>&1
sed 's/^/# /' "$S"

SJ=$RES/pyverbs-sroce0.json
check "pyverbs on sroce0 ran to completion (no hung test, not killed)" \
	eval '! grep -q "\"killed\": true" "$SJ" && [ ! -s "$RES/pyverbs-sroce0.hung" ]'
# (an expected failure is no pass, nor a failure: see pyverbs_summary.py)
check "pyverbs on sroce0: 0 failures, 0 errors, 0 unexpected successes" \
	"$PY" "$SUM" clean "$SJ"
out=$("$PY" "$SUM" superset "$RES/pyverbs-rxe0.json" "$SJ")
check "every test that passes on rxe0 passes on sroce0 ($(grep -c . <<<"$out") do not)" \
	test -z "$out"
[ -n "$out" ] && sed 's/^/#   /' <<<"$out"
# mlx5-only tests skip on anything else; the ODP huge page tests belong to
# the ODP tests.
for g in "rdmacm:^test_rdmacm" "rereg MR:rereg" "huge page:huge !\.test_odp\."; do
	# shellcheck disable=SC2086 # the regexes are words
	out=$("$PY" "$SUM" match "$SJ" ${g#*:} '!\.test_mlx5_')
	rc=$?
	case $g in
	rereg*)
		# The kernel side is there (sroce_rereg_user_mr), but rdma-core's
		# rxe provider has no rereg_mr op: libibverbs answers EOPNOTSUPP.
		check_todo "sroce0: the ${g%%:*} tests pass" \
			"rdma-core's rxe provider has no rereg_mr" \
			test $rc -eq 0 ;;
	huge*)
		# rdma-core's rxe provider has no parent domains, which the
		# only huge page traffic test needs: not reachable for any
		# device driven through the rxe ABI.  t_integrity moves
		# verified data between MRs on huge pages instead.
		check_todo "sroce0: the ${g%%:*} tests pass" \
			"needs ibv_alloc_parent_domain (rxe provider has none)" \
			test $rc -eq 0 ;;
	*) check "sroce0: the ${g%%:*} tests pass" test $rc -eq 0 ;;
	esac
	[ -n "$out" ] && sed 's/^/#   /' <<<"$out"
done
grep -q "Parent Domain is not supported" "$SJ" &&
	diag "test_huge_page_traffic needs ibv_alloc_parent_domain(): the rxe provider of rdma-core has none"

ip netns exec ns_s rdma link delete sroce0
check "sroce0 deleted and the module unloads after the suite" \
	eval 'wait_for 30 eval "! ibdev_exists sroce0" && sroce_unload'
rdma link delete rxe0
ip netns del ns_s
tap_done
