#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Targeted checks of the security issue's defects that the hostile-user
# program, the verbs fuzzer and the spoofed-peer suite do not already
# show (each fails on the driver before its fix):
#
#   limits       the advertised object limits hold (item 11)
#   ah-pd        a UD send through another PD's AH fails (item 4)
#   write-range  a WRITE overrunning its MR places nothing (item 8)
#   grace        making and destroying MRs, windows and QPs waits for no
#                RCU grace period, expedited or not (item 12): kprobes
#                count sroce's calls of synchronize_rcu*()
#   throttle     QPs destroyed while the transmit queues hold them back
#                (item 3): the console stays clean
#   netns        netdevs moved to another namespace while `rdma link add`
#                registers a device (item 10): the module still unloads
#
# One device talks to itself over 198.18.0.1; a second one in namespace
# peer (198.18.0.2) is the far end of the throttle runs.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SEC=$SROCE_TREE/tools/testing/security/sroce-sec

sroce_load || { not_ok "load sroce"; tap_done; exit 1; }
ip netns add peer
veth_pair v0 v1 peer
ip addr add 198.18.0.1/24 dev v0
ip -n peer addr add 198.18.0.2/24 dev v1
ip -n peer link set lo up
rdma link add sroce0 type sroce netdev v0
ip netns exec peer rdma link add sroce1 type sroce netdev v1
G0=$(gid_v4 198.18.0.1) G1=$(gid_v4 198.18.0.2)
if ! wait_for 20 gid_present sroce0 "$G0" ||
	! wait_for 20 gid_present sroce1 "$G1"; then
	diag "GIDs missing"
fi

# --- limits (item 11)
# PDs and CQs others hold on the device (ib_mad: one of each per port).
res=$(rdma resource show | grep " sroce0: ")
held_pd=$(awk '{ for (i = 1; i < NF; i++) if ($i == "pd") print $(i + 1) }' <<<"$res")
held_cq=$(awk '{ for (i = 1; i < NF; i++) if ($i == "cq") print $(i + 1) }' <<<"$res")
diag "held already: $res"
lim_secs=$(hang_bound 600)
out=$(timeout $lim_secs "$SEC" -d sroce0 limits "${held_pd:-0}" "${held_cq:-0}" 2>&1)
rc=$?
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	"# "*) echo "$line" ;;
	esac
done <<<"$out"
if [ $rc -ne 0 ] || ! grep -q '^done$' <<<"$out"; then
	not_ok "sroce-sec limits ran to the end (rc $rc)"
	tail -n 5 <<<"$out" | sed 's/^/# /'
fi

# --- ah-pd (item 4), write-range (item 8)
pyrun "ah-pd" "" "$HERE/sec_checks.py" "$HERE" ah-pd
pyrun "write-range" "" "$HERE/sec_checks.py" "$HERE" write-range

# --- grace (item 12)
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
probes="synchronize_rcu_expedited synchronize_rcu"
armed=1
for f in $probes; do
	if ! echo "p:sroce_sec_$f $f caller=+0(%sp):symbol" >>$T/kprobe_events ||
		! echo 1 >$T/events/kprobes/sroce_sec_$f/enable; then
		armed=0
	fi
done
if [ $armed = 1 ]; then
	echo >$T/trace
	pyrun "churn" "" "$HERE/sec_checks.py" "$HERE" churn 300
	hits=$(grep -c 'sroce_sec_.*caller=.*\[sroce\]' $T/trace)
	total=$(grep -c 'sroce_sec_' $T/trace)
	check "300 MRs and windows, 30 QPs made and destroyed: sroce waited for no grace period ($hits of $total calls were sroce's)" \
		test "$hits" -eq 0
	grep 'sroce_sec_.*\[sroce\]' $T/trace | awk '{ print $NF }' | sort |
		uniq -c | head -n 5 | sed 's/^/# /'
	for f in $probes; do
		echo 0 >$T/events/kprobes/sroce_sec_$f/enable
		echo "-:sroce_sec_$f" >>$T/kprobe_events
	done
else
	not_ok "kprobes on synchronize_rcu*() (tracefs at $T)"
fi

# --- throttle (item 3): a slow link makes the transmit queues fill, the
# requesters wait on the namespace's list, and their QPs are destroyed
# then (the process is killed).
tx_full_above() {
	[ "$(hw_stat sroce0 tx_queue_full)" -gt "$1" ]
}
tc qdisc add dev v0 root tbf rate 20mbit burst 32k latency 500ms
gs=$(gid_index sroce1 "$G1") gc=$(gid_index sroce0 "$G0")
full0=$(hw_stat sroce0 tx_queue_full)
for _ in 1 2 3; do
	ip netns exec peer timeout 60 ib_write_bw -d sroce1 -x "$gs" -q 8 \
		-s 65536 -D 30 -F >/tmp/thr_srv.log 2>&1 &
	spid=$!
	wait_until 20 tcp_listening peer 18515
	timeout 60 ib_write_bw -d sroce0 -x "$gc" -q 8 -s 65536 -D 30 -F \
		198.18.0.2 >/tmp/thr_cli.log 2>&1 &
	cpid=$!
	before=$(hw_stat sroce0 tx_queue_full)
	wait_until 30 tx_full_above "$before"
	kill -9 "$cpid" "$spid" 2>/dev/null
	wait "$cpid" "$spid" 2>/dev/null
done
full=$(($(hw_stat sroce0 tx_queue_full) - full0))
check "3 runs of 8 streaming QPs killed while throttled by full queues ($full throttled requester runs)" \
	test "$full" -gt 0
tc qdisc del dev v0 root
rdma link delete sroce0
ip netns exec peer rdma link delete sroce1
ip netns del peer

# --- netns (item 10): the netdev moves to namespace b while `rdma link
# add` registers a device on it in namespace a.  Whenever the move
# happens, no device may stay: a move after the registration unregisters
# it (netdev notifier), one during it must be caught at its end.  A
# device left behind keeps a's sockets, and a's exit (with every later
# namespace exit: one cleanup work) waits for it as long as it lives.
moved=0 made=0 left=''
for i in $(seq 1 12); do
	ip netns add a$i
	ip netns add b$i
	ip -n a$i link add m$i type dummy
	ip -n a$i link set m$i up
	ip netns exec a$i rdma link add srm$i type sroce netdev m$i 2>/dev/null &
	apid=$!
	# Anywhere between the start of the registration and its end.
	sleep "0.$((i % 4))"
	ip -n a$i link set m$i netns b$i && moved=$((moved + 1))
	wait "$apid" && made=$((made + 1))
	# Unregistration is queued (ib_core's work): let it run.
	wait_for 10 eval "! ibdev_exists srm$i" || left+=" srm$i"
	[ -e /sys/class/infiniband/srm$i ] && rdma link delete srm$i
	ip netns del a$i
	ip netns del b$i
done
diag "$made devices created, $moved netdevs moved during or after it"
check "no device outlives its netdev's move to another namespace (left:${left:- none})" \
	test -z "$left"
timeout 120 rmmod sroce
rc=$?
check "the module unloads after the moves (rmmod status $rc)" test $rc -eq 0
tap_done
