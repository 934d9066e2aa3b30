#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Congestion control (issue 5) on a congested bottleneck:
#
#   s1 (sroce_s1) --\
#                    sw --[tbf RATE + RED ecn]--> r (sroce_r)
#   s2 (sroce_s2) --/
#
# Four namespaces, veths, the switch namespace routing between them.  Two
# RC flows, s1 -> r and s2 -> r (sroce-verify WRITEs, every byte checked),
# share the bottleneck, first with congestion control on, then off:
#   - on: the bottleneck drops <= 0.1% of the packets, each flow gets
#     >= 40% of the bottleneck, both together >= 85%; the CNPs r sends are
#     the ones s1 and s2 handle; a capture at r shows ECT(0) on the data
#     and well-formed CNPs (opcode 0x81, the senders' QPs, valid ICRC);
#   - off: the queue overflows: drops and retransmissions appear (the
#     transfers may fail: no check on them);
# then a knob check (EINVAL on bad values) and CNPs sent to rdma_rxe (whose
# packets a tc pedit marks CE): rxe drops them, the traffic goes on.
#
# The bottleneck is far below what a sender reaches in the guest, and the
# DCQCN knobs are scaled to it (rates of Mb/s, timers of ms: the paper's
# are for 40 Gb/s and us).  Throughput is counted at r's ingress, per
# source address, over a window while both flows run.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
RATE=${SROCE_CC_RATE:-16}	# Mbit/s
SECS=${SROCE_CC_SECS:-30}	# per run
WIN=${SROCE_CC_WIN:-16}		# measuring window inside the run
CAP=/tmp/cc.pcap
PORT=18900

if [ ! -x "$VERIFY" ]; then
	not_ok "sroce-verify is built"
	tap_done
	exit 1
fi

# --- topology ----------------------------------------------------------------
setup() {
	local i
	sroce_load || return 1
	for m in sch_tbf sch_red sch_prio cls_u32 act_gact act_pedit veth; do
		modprobe "$m" || return 1
	done
	for n in s1 s2 sw r; do
		ip netns add "$n" && ip -n "$n" link set lo up || return 1
	done
	ip netns exec sw sysctl -qw net.ipv4.ip_forward=1
	# sroce-verify's TCP control connections through the bottleneck
	# negotiate ECN too: RED marks them instead of dropping them.
	for n in s1 s2 r; do
		ip netns exec "$n" sysctl -qw net.ipv4.tcp_ecn=1
	done
	for i in 1 2 3; do
		ip link add "a$i" type veth peer name "w$i" || return 1
		ip link set "w$i" netns sw
		ip -n sw link set "w$i" mtu 4200 up
		ip -n sw addr add "198.18.$i.254/24" dev "w$i"
	done
	ip link set a1 netns s1
	ip link set a2 netns s2
	ip link set a3 netns r
	for i in 1 2 3; do
		n=$([ $i = 3 ] && echo r || echo "s$i")
		ip -n "$n" link set "a$i" mtu 4200 up
		ip -n "$n" addr add "198.18.$i.1/24" dev "a$i"
		ip -n "$n" route add default via "198.18.$i.254"
	done
	ip netns exec s1 rdma link add sroce_s1 type sroce netdev a1 &&
		ip netns exec s2 rdma link add sroce_s2 type sroce netdev a2 &&
		ip netns exec r rdma link add sroce_r type sroce netdev a3 ||
		return 1
	modprobe rdma_ucm
	for d in sroce_s1 sroce_s2 sroce_r; do
		wait_until 20 port_active "$d" || return 1
	done
	G1=$(gid_index sroce_s1 "$(gid_v4 198.18.1.1)")
	G2=$(gid_index sroce_s2 "$(gid_v4 198.18.2.1)")
	GR=$(gid_index sroce_r "$(gid_v4 198.18.3.1)")
	[ -n "$G1" ] && [ -n "$G2" ] && [ -n "$GR" ]
}

# bottleneck: the switch's port toward r at RATE, RED marking ECN-capable
# packets from 12 KB of queue (a few packets: the deeper the queue, the
# later the marks reach r and the CNPs the senders, and the more the
# senders overshoot meanwhile).  "nodrop" queues the packets that cannot
# be marked (TCP's pure ACKs) instead of dropping them early, so every
# drop is an overflow of the queue limit.
bottleneck() {
	ip netns exec sw tc qdisc del dev w3 root 2>/dev/null
	ip netns exec sw tc qdisc add dev w3 root handle 1: tbf \
		rate "${RATE}mbit" burst 16kb latency 400ms &&
	ip netns exec sw tc qdisc add dev w3 parent 1:1 handle 10: red \
		limit 400000 min 12000 max 36000 avpkt 4200 burst 5 \
		probability 0.2 bandwidth "${RATE}mbit" ecn nodrop
}

# qstats: "sent_packets dropped marked" of the bottleneck: the root (tbf)
# counts what left and everything dropped below it, red what it marked.
qstats() {
	ip netns exec sw tc -s qdisc show dev w3 | awk '
		/Sent/ && !n++ { sent = $4; dropped = $7 + 0 }
		/marked/ { for (i = 1; i < NF; i++) if ($i == "marked") marked += $(i + 1) }
		END { printf "%d %d %d\n", sent, dropped, marked }'
}

# per-source bytes at r's ingress (u32 filters with a pass action).
count_setup() {
	ip netns exec r tc qdisc del dev a3 ingress 2>/dev/null
	ip netns exec r tc qdisc add dev a3 ingress &&
	ip netns exec r tc filter add dev a3 parent ffff: protocol ip prio 1 \
		u32 match ip src 198.18.1.1/32 action pass &&
	ip netns exec r tc filter add dev a3 parent ffff: protocol ip prio 2 \
		u32 match ip src 198.18.2.1/32 action pass
}
src_bytes() {	# prints "bytes_s1 bytes_s2"
	ip netns exec r tc -s filter show dev a3 ingress | awk '
		/match c6120101/ { f = 1 } /match c6120201/ { f = 2 }
		/Sent [0-9]+ bytes/ && f { b[f] = $2; f = 0 }
		END { printf "%d %d\n", b[1], b[2] }'
}

set_knob() {	# NAME VALUE: on the three devices
	local d
	for d in sroce_s1 sroce_s2 sroce_r; do
		echo "$2" >"/sys/class/infiniband/$d/ports/1/cc/$1" || return 1
	done
}

# DCQCN scaled to a few Mb/s and a TCG guest's ms-grain timing.
scaled_knobs() {
	set_knob rp_max_rate 400 &&
	set_knob rp_min_rate 1 &&
	set_knob rp_ai_rate 1 &&
	set_knob rp_hai_rate 2 &&
	set_knob rp_time_reset 60000 &&
	set_knob rp_byte_reset 262144 &&
	set_knob rp_dce_tcp_rtt 30000 &&
	set_knob np_min_time_between_cnps 10000
}

sum_stat() {	# COUNTER DEV...
	local c=$1 s=0 d
	shift
	for d in "$@"; do
		s=$((s + $(hw_stat "$d" "$c")))
	done
	echo $s
}

# flows TAG: both flows for SECS s; the window counts in W_*.
flows() {
	local tag=$1 i b0 b1 q0 q1 t0 t1
	for i in 1 2; do
		PORT=$((PORT + 1))
		ip netns exec r "$VERIFY" -d sroce_r -g "$GR" -p "$PORT" -t 60 \
			>"/tmp/cc_srv$i.log" 2>&1 &
		eval "SP$i=\$!"
		wait_until 30 tcp_listening r "$PORT"
		eval "P$i=$PORT"
	done
	ip netns exec s1 "$VERIFY" -d sroce_s1 -g "$G1" -p "$P1" -t 60 \
		-q 2 -n 1000000 -m 1M -o write -D "$SECS" 198.18.3.1 \
		>/tmp/cc_cli1.log 2>&1 &
	CP1=$!
	ip netns exec s2 "$VERIFY" -d sroce_s2 -g "$G2" -p "$P2" -t 60 \
		-q 2 -n 1000000 -m 1M -o write -D "$SECS" 198.18.3.1 \
		>/tmp/cc_cli2.log 2>&1 &
	CP2=$!
	# Let both settle, then count over the window; the QPs' rates and the
	# queue every 2 s, as a trace.
	sleep $(((SECS - WIN) / 2))
	t0=$EPOCHREALTIME b0=$(src_bytes) q0=$(qstats)
	# The senders' RC QPs, while they surely exist (the CNPs' DestQPs).
	W_QPNS=$(rdma resource show qp 2>/dev/null |
		awk '/sroce_s[12]/ && /type RC/ {
			for (i = 1; i < NF; i++) if ($i == "lqpn") print $(i + 1) }' |
		paste -sd,)
	while :; do
		sleep 2
		diag "$tag: rates (Mb/s) $(for d in sroce_s1 sroce_s2; do
			rdma -dd resource show qp link "$d/1" 2>/dev/null |
				grep -o 'cc_rate_mbps [0-9]*' | cut -d' ' -f2; done |
			paste -sd' '), queue $(ip netns exec sw tc -s qdisc show dev w3 |
				awk '/backlog/ { print $2; exit }')"
		[ $((${EPOCHREALTIME%.*} - ${t0%.*})) -ge "$WIN" ] && break
	done
	t1=$EPOCHREALTIME b1=$(src_bytes) q1=$(qstats)
	# The window as it was, in ms.
	W_MS=$(((${t1%.*} - ${t0%.*}) * 1000 + (10#${t1#*.} - 10#${t0#*.}) / 1000))
	local x0 y0 x1 y1
	read -r x0 y0 <<<"$b0"
	read -r x1 y1 <<<"$b1"
	W_B1=$((x1 - x0)) W_B2=$((y1 - y0))
	read -r s0 d0 m0 <<<"$q0"
	read -r s1 d1 m1 <<<"$q1"
	W_SENT=$((s1 - s0)) W_DROP=$((d1 - d0)) W_MARK=$((m1 - m0))
	W_OK=1
	for i in 1 2; do
		eval "wait \$CP$i" || W_OK=0
		eval "wait \$SP$i" || W_OK=0
	done
	diag "$tag: bottleneck: $(ip netns exec sw tc -s qdisc show dev w3 |
		tr -s ' \n' ' ')"
	diag "$tag: client 1: $(tail -n 1 /tmp/cc_cli1.log)"
	diag "$tag: client 2: $(tail -n 1 /tmp/cc_cli2.log)"
}

if ! setup; then
	not_ok "topology: s1, s2 -> sw -> r with sroce on each end"
	tap_done
	exit 1
fi
ok "topology: s1, s2 -> sw -> r with sroce on each end"
check "bottleneck: tbf ${RATE} Mbit/s with RED ECN marking on sw -> r" bottleneck
check "per-source counters at r" count_setup
check "DCQCN knobs scaled to the bottleneck on all three devices" scaled_knobs

# --- knobs ---------------------------------------------------------------------
K=/sys/class/infiniband/sroce_s1/ports/1/cc
bad_knob() {	# NAME VALUE: the write fails with EINVAL, the value stays
	local before after err
	before=$(cat "$K/$1")
	err=$( (echo "$2" >"$K/$1") 2>&1)
	after=$(cat "$K/$1")
	[[ $err == *"Invalid argument"* ]] && [ "$before" = "$after" ]
}
check "knobs: rp_gd 0 rejected (EINVAL)" bad_knob rp_gd 0
check "knobs: rp_min_dec_fac 101 rejected" bad_knob rp_min_dec_fac 101
check "knobs: rp_min_rate above rp_max_rate rejected" bad_knob rp_min_rate 100000
check "knobs: algo 'cubic' rejected" bad_knob algo cubic
check "knobs: enable 2 rejected" bad_knob enable 2
check "knobs: dscp 64 rejected" bad_knob dscp 64
check "knobs: algo dcqcn and enable 1 by default" \
	eval '[ "$(cat $K/algo)" = dcqcn ] && [ "$(cat $K/enable)" = 1 ]'

# --- CC on ---------------------------------------------------------------------
bottleneck
R0=$(sum_stat tx_retransmits sroce_s1 sroce_s2)
TO0=$(sum_stat retry_timeout sroce_s1 sroce_s2)
NK0=$(sum_stat rx_nak sroce_s1 sroce_s2)
NP0=$(hw_stat sroce_r np_cnp_sent)
RP0=$(sum_stat rp_cnp_handled sroce_s1 sroce_s2)
MK0=$(hw_stat sroce_r np_ecn_marked_roce_packets)
ip netns exec r timeout 15 tcpdump -i a3 -w "$CAP" -c 4000 -s 128 \
	udp port 4791 >/dev/null 2>&1 &
TD=$!
flows "CC on"
wait "$TD"
ON_R=$(($(sum_stat tx_retransmits sroce_s1 sroce_s2) - R0))
# What made them resend: a timeout (no answer in time) or a NAK (a gap).
ON_TO=$(($(sum_stat retry_timeout sroce_s1 sroce_s2) - TO0))
ON_NK=$(($(sum_stat rx_nak sroce_s1 sroce_s2) - NK0))
ON_NP=$(($(hw_stat sroce_r np_cnp_sent) - NP0))
ON_RP=$(($(sum_stat rp_cnp_handled sroce_s1 sroce_s2) - RP0))
ON_MK=$(($(hw_stat sroce_r np_ecn_marked_roce_packets) - MK0))
CAPB=$((RATE * 1000 / 8 * W_MS))
ON_B1=$W_B1 ON_B2=$W_B2 ON_DROP=$W_DROP ON_SENT=$W_SENT ON_MARK=$W_MARK
pct() { echo $(($1 * 1000 / $2)); }	# per mille
ON_K1=$((ON_B1 * 8 / W_MS)) ON_K2=$((ON_B2 * 8 / W_MS))
diag "CC on, over ${W_MS} ms: s1 $ON_K1 kbit/s ($(pct "$ON_B1" "$CAPB")‰)," \
	"s2 $ON_K2 kbit/s ($(pct "$ON_B2" "$CAPB")‰) of ${RATE} Mbit/s;" \
	"bottleneck sent $ON_SENT pkts, dropped $ON_DROP, marked $ON_MARK;" \
	"CE seen at r $ON_MK, CNPs sent $ON_NP, handled $ON_RP;" \
	"retransmits $ON_R (timeouts $ON_TO, NAKs $ON_NK)"
check "CC on: both transfers complete, every byte verified" [ "$W_OK" = 1 ]
check "CC on: the bottleneck marks packets CE ($ON_MARK) and r counts them ($ON_MK)" \
	[ "$ON_MARK" -gt 0 -a "$ON_MK" -gt 0 ]
check "CC on: bottleneck drops <= 0.1% ($ON_DROP of $((ON_SENT + ON_DROP)))" \
	[ $((ON_DROP * 1000)) -le $((ON_SENT + ON_DROP)) ]
check "CC on: s1 gets >= 40% of the bottleneck ($(pct "$ON_B1" "$CAPB")‰)" \
	[ $((ON_B1 * 10)) -ge $((CAPB * 4)) ]
check "CC on: s2 gets >= 40% of the bottleneck ($(pct "$ON_B2" "$CAPB")‰)" \
	[ $((ON_B2 * 10)) -ge $((CAPB * 4)) ]
check "CC on: together >= 85% ($(pct $((ON_B1 + ON_B2)) "$CAPB")‰)" \
	[ $(((ON_B1 + ON_B2) * 100)) -ge $((CAPB * 85)) ]
check "CC on: CNPs sent by r ($ON_NP) are the ones s1 and s2 handle ($ON_RP)" \
	[ "$ON_NP" -gt 0 -a "$ON_RP" -le "$ON_NP" -a $((ON_RP * 100)) -ge $((ON_NP * 99)) ]
QPNS=$W_QPNS
out=$(python3 "$HERE/cc_pcap.py" "$CAP" --qpns "$QPNS" 2>&1)
rc=$?
diag "capture at r (sender QPs $QPNS): $out"
check "capture: ECT(0) on every data packet, CNPs well-formed (0x81, sender QP, ICRC)" \
	[ $rc -eq 0 ]

# --- CC off --------------------------------------------------------------------
set_knob enable 0
bottleneck
R0=$(sum_stat tx_retransmits sroce_s1 sroce_s2)
NP0=$(hw_stat sroce_r np_cnp_sent)
flows "CC off"
OFF_R=$(($(sum_stat tx_retransmits sroce_s1 sroce_s2) - R0))
OFF_NP=$(($(hw_stat sroce_r np_cnp_sent) - NP0))
OFF_K1=$((W_B1 * 8 / W_MS)) OFF_K2=$((W_B2 * 8 / W_MS))
diag "CC off, over ${W_MS} ms: s1 $OFF_K1 kbit/s, s2 $OFF_K2 kbit/s;" \
	"bottleneck sent $W_SENT pkts, dropped $W_DROP, marked $W_MARK; retransmits $OFF_R" \
	"(transfers $([ "$W_OK" = 1 ] && echo completed || echo failed))"
check "CC off: the bottleneck drops packets ($W_DROP)" [ "$W_DROP" -gt 0 ]
check "CC off: the senders retransmit ($OFF_R)" [ "$OFF_R" -gt 0 ]
check "CC off: no CNP sent ($OFF_NP)" [ "$OFF_NP" -eq 0 ]
diag "table: mode s1_kbps s2_kbps drops/sent retransmits cnps"
diag "table: on  $ON_K1 $ON_K2 $ON_DROP/$ON_SENT $ON_R $ON_NP"
diag "table: off $OFF_K1 $OFF_K2 $W_DROP/$W_SENT $OFF_R $OFF_NP"
set_knob enable 1

# rdma_rxe shares sroce's driver id: loaded while sroce devices are up, its
# netdev notifier (replaying NETDEV_UP for every netdev, then every event)
# must not take them for its own (it once did, and wrote into them).
mark=$(kmsg_mark)
check "rdma_rxe loads beside live sroce devices" modprobe rdma_rxe
ip -n s1 link set a1 down
ip -n s1 link set a1 up
check "...and leaves them alone (no rxe port event on a sroce device)" \
	eval '! kmsg_since "$mark" | grep -E "sroce_(s1|s2|r): set (active|down)"'
check "...sroce_s1 sees its netdev go down and up itself" \
	wait_until 20 port_active sroce_s1
ip -all netns delete

# --- CNPs to rdma_rxe ------------------------------------------------------------
# rxe0 (initial namespace) sends WRITEs to sroce_x (namespace x); a pedit
# on sroce_x's ingress marks them CE, so sroce_x sends rxe CNPs, an opcode
# rxe does not know.
rxe_cnp() {
	modprobe act_csum && rxe_veth_ns &&
		ip netns exec x rdma link add sroce_x type sroce netdev vx1 ||
		return 1
	ip netns exec x tc qdisc add dev vx1 ingress &&
	ip netns exec x tc filter add dev vx1 parent ffff: protocol ip u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff \
		action pedit ex munge ip tos set 3 retain 3 pipe \
		action csum ip || return 1
	wait_until 20 port_active rxe0 && wait_until 20 port_active sroce_x
}
if rxe_cnp; then
	ok "rdma_rxe (rxe0) -> sroce_x with rxe's packets marked CE"
	NS_S=x NS_C= DEV_S=sroce_x DEV_C=rxe0 IP_S=198.18.4.2
	GID_S=$(gid_index sroce_x "$(gid_v4 198.18.4.2)")
	GID_C=$(gid_index rxe0 "$(gid_v4 198.18.4.1)")
	np0=$(hw_stat sroce_x np_cnp_sent)
	verify_pair "rxe -> sroce: WRITEs and SENDs verified while sroce sends rxe CNPs" \
		-q 1 -n 8 -m 256K -o write,send
	np=$(($(hw_stat sroce_x np_cnp_sent) - np0))
	check "CNPs sent to rxe ($np), which drops them harmlessly" [ "$np" -gt 0 ]
	verify_pair "rxe -> sroce: traffic goes on after the CNPs" -q 1 -n 4 -m 64K
else
	not_ok "rdma_rxe (rxe0) -> sroce_x with rxe's packets marked CE"
fi
rdma link delete rxe0 2>/dev/null
ip netns exec x rdma link delete sroce_x 2>/dev/null
ip link del vx0 2>/dev/null
ip -all netns delete
tap_done
