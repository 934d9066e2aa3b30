#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A hostile local user: tools/testing/hostile/sroce-hostile, unprivileged
# (uid/gid 65534), writes raw WQEs and indices into the rxe-ABI rings it
# finds in its own /proc/self/maps, destroys objects under traffic and
# uses AHs, MRs and MWs of other PDs and processes.  Every scenario runs
# under a time bound (a hang is a failure, and the suite goes on); its
# "ok - "/"not ok - " lines become checks here, and the kernel log it
# caused must be clean (SLUB reports such as "BUG kmalloc-192 ...:
# Redzone overwritten" have no "BUG:", so they are looked for here).
# At the end the device must go and the module unload (nothing leaked),
# and the slab caches be back to their baseline.
#
# The index races of scenario c) can only catch the kernel in a loop
# with two vCPUs: with one, the racing thread cannot run while the kernel
# holds the spinlock (make check gives this suite two).
set -u
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${SROCE_HOSTILE:-$HERE/../hostile/sroce-hostile}
PROG=/tmp/sroce-hostile
DEV=sroce0
# Kernel log lines that fail a scenario.
KPAT='BUG|WARNING:|Oops|general protection|Redzone|Poison overwritten|Object padding|[Cc]orrupt|soft lockup|hard LOCKUP|\<stall|blocked for more than|KASAN|UBSAN|refcount_t:|Call Trace|INFO: task'

if ! install -m 755 "$SRC" "$PROG" 2>/dev/null; then
	not_ok "sroce-hostile built ($SRC; make -C tools/testing/hostile)"
	tap_done
	exit 1
fi
sroce_load || { not_ok "load sroce"; tap_done; exit 1; }
ip netns add peer
veth_pair v0 v1 peer
ip addr add 198.18.0.1/24 dev v0
ip -n peer addr add 198.18.0.2/24 dev v1
rdma link add "$DEV" type sroce netdev v0
wait_for 20 gid_present "$DEV" 0000:0000:0000:0000:0000:ffff:c612:0001
diag "$(nproc) vCPU(s), kernel $(uname -r)"

# Unprivileged, as the issue's local user: the uverbs node is 0666.
uvs=(/dev/infiniband/uverbs*)
uv=${uvs[0]}
check "uverbs node $uv is mode 0666 (any local user opens it)" \
	test "$(stat -c %a "$uv" 2>/dev/null)" = 666
AS_USER=(setpriv --reuid=65534 --regid=65534 --clear-groups)
user_opens() {
	"${AS_USER[@]}" ibv_devinfo -d "$DEV" >/dev/null
}
check "uid 65534 can open $DEV" user_opens

before=$(mktemp)
after=$(mktemp)
slab_snapshot >"$before"

# bounded SECS OUT cmd...: run cmd in its own process group, output to
# OUT; kill the group after SECS.  Status: cmd's, 124 when killed, 125
# when even SIGKILL did not end it (a task stuck in the kernel).
bounded() {
	local secs=$1 out=$2 pid i
	shift 2
	setsid "$@" >"$out" 2>&1 </dev/null &
	pid=$!
	for ((i = 0; i < secs * 4; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			return
		fi
		sleep 0.25
	done
	kill -KILL -- "-$pid" 2>/dev/null
	for ((i = 0; i < 40; i++)); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return 124; }
		sleep 0.25
	done
	return 125
}

# scenario LETTER NAME SECS: one run of sroce-hostile NAME.
scenario() {
	local l=$1 name=$2 secs out=/tmp/hostile-$2.log mark rc line k t0
	secs=$(hang_bound "$3")
	mark=$(kmsg_mark)
	t0=$SECONDS
	bounded "$secs" "$out" "${AS_USER[@]}" "$PROG" -d "$DEV" "$name"
	rc=$?
	diag "$l) $name: $((SECONDS - t0)) s"
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		"#"*) echo "$line" ;;
		esac
	done <"$out"
	case $rc in
	124) not_ok "$l) $name: finished within ${secs}s (killed: a hang)" ;;
	125) not_ok "$l) $name: finished within ${secs}s (unkillable: stuck in the kernel)"
	     grep -l ' D ' /proc/[0-9]*/stat 2>/dev/null | head -n 3 |
		     while read -r k; do diag "D state: $(cat "$k")"; done ;;
	*) check "$l) $name: ran to the end (status $rc)" \
		grep -q "^hostile $name done" "$out" ;;
	esac
	k=$(kmsg_since "$mark" | grep -E "$KPAT")
	if [ -z "$k" ]; then
		ok "$l) $name: kernel log clean"
	else
		not_ok "$l) $name: kernel log clean"
		head -n 8 <<<"$k" | sed 's/^/# kernel: /'
	fi
}

SCEN=${SROCE_HOSTILE_SCENARIOS:-a:caps:60 b:opcodes:90 c:race:60 d:destroy:90 e:cross:60 f:verbs:60}
for s in $SCEN; do
	IFS=: read -r l name secs <<<"$s"
	scenario "$l" "$name" "$secs"
done

rdma link delete "$DEV"
check "$DEV removed after the scenarios" wait_for 30 eval "! ibdev_exists $DEV"
check "sroce unloads (no object leaked)" sroce_unload
ip netns del peer
slab_snapshot >"$after"
slab_check "slab caches back to their baseline (no cache grew by >= 32 objects)" \
	"$before" "$after" 32
tap_done
