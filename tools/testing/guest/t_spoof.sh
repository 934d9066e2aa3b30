#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Spoofed peer: a third host on the segment of a live RC connection knows
# its QPNs and PSNs (it captures them: the bridge floods every frame to
# every port) and sends it packets with valid ICRCs that only the source
# or destination address or the P_Key tell from the peer's.
#
#   na (sroce_a, client) --\
#   nb (sroce_b, server) ---- br0 (learns no addresses) in the initial ns
#   nc (attacker)        --/
#
# The bridge's port toward nb delays frames by 50 ms (netem): the attacker
# is nearer to A than B is, so A's requests stay in flight for 50 ms,
# long enough for an attacker in Python to answer them first.
#
# Each round runs a verified transfer (sroce-verify: one RC QP, SEND,
# WRITE, WRITE_IMM, READ and server-to-client SEND, every byte checked)
# while spoof_attack.py, in nc, sends one kind of attack:
#   req   SEND, WRITE (A's R_Key and address), READ, WRITE FIRST and
#         FETCH_ADD requests into B's QP at the PSN B expects, from nc's
#         address
#   resp  ACKs, NAKs (PSN sequence error, RNR, remote access error,
#         invalid request, remote operational error), READ responses and
#         atomic ACKs into A's QP at PSNs A has in flight, from nc's address
#   cnp   a flood of CNPs to A's QP from nc's address
#   pkey  the same requests, responses and CNPs from the peer's address,
#         with P_Keys other than 0xffff and 0x7fff
#   dst   the requests from A's address to another address of B's
#   mixed all of them over IPv6
# and after each round: every spoofed packet was dropped and counted
# (rx_drop_bad_addr for a source or destination that is not the QP's
# path, rx_drop_bad_pkey for a P_Key not the port's), none as a bad ICRC
# (the attacker's ICRCs are valid: it checks its ICRC code on every packet
# of the connection it captures), the transfer completed with every byte
# verified, neither QP went to an error state, and the CNPs fed no rate
# control: rp_cnp_handled stays 0 and A's QP is not rate limited
# (`rdma resource show qp -dd`: cc_limited 0).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ATTACK=$HERE/spoof_attack.py
ALOG=/tmp/attack.log
STOP=/tmp/spoof_stop	# the transfer stops when it exists
COUNT=${SROCE_SPOOF_COUNT:-36}	# packets per round
ME=198.18.0.3 ME6=2001:db8::3 ALT=198.18.0.12
SEED=${SROCE_SPOOF_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
diag "attacker seed $SEED, sroce-verify seed $VERIFY_SEED"

if [ ! -x "$VERIFY" ]; then
	not_ok "sroce-verify is built"
	tap_done
	exit 1
fi
if ! rdma_setup hub; then
	not_ok "topology: na, nb, nc on a flooding bridge, sroce in na and nb"
	tap_done
	exit 1
fi
ok "topology: na, nb, nc on a flooding bridge, sroce in na and nb"
ip -n nb addr add "$ALT/24" dev vb
check "a 50 ms delay toward nb" eval 'modprobe sch_netem &&
	tc qdisc add dev vb0 root netem delay 50ms'
# A QP whose rate a CNP cut stays cut for 10 s (DCQCN's timers and byte
# counter, the only ways back up): a CNP that got through still shows
# when a round checks the rate.
K=/sys/class/infiniband/sroce_a/ports/1/cc
check "sroce_a: DCQCN recovers from a cut only after 10 s" eval "
	echo 10000000 >$K/rp_time_reset && echo 10000000 >$K/rp_dce_tcp_rtt &&
	echo 4000000000 >$K/rp_byte_reset"

# How HEAD-era drivers took the packets, for the diagnostics.
SEEN="rx_dup_request rx_out_of_seq rx_bad_request rx_access_err tx_seq_nak tx_rnr_nak rx_nak rx_rnr_nak rx_drop_stale_resp retry_seq
rp_cnp_handled"
declare -A S0 S1

delta() {	# DEV COUNTER: growth over the round, or "absent"
	hw_delta S0 S1 "$1" "$2"
}

# qp_show DEV QPN: `rdma -dd resource show qp` for QP QPN of DEV, one
# word a line ("gone" when the QP is not there); qp_field TEXT FIELD: the
# value of FIELD in it.
qp_show() {
	local out
	out=$(rdma -dd resource show qp link "$1/1" lqpn "$2" 2>/dev/null)
	if [ -n "$out" ]; then tr -s ' \n' '\n' <<<"$out"; else echo gone; fi
}
qp_field() {
	awk -v k="$2" '$0 == "gone" { print; exit }
		$0 == k { getline; print; exit }' <<<"$1"
}

# round NAME ADDR_A ADDR_B ME: one verified transfer under attack NAME.
round() {
	local r=$1 aa=$2 ab=$3 me=$4 d c res kv arc sa sb lim rate
	local R_qpn_a='' R_qpn_b='' R_a_addr=0 R_a_pkey=0 R_b_addr=0
	local R_b_pkey=0 R_a_cnp=0 R_sniffed=0 R_hdr_only=0 R_icrc_bad=0
	local R_mtu=0
	# shellcheck disable=SC2034  # (hw_snap's and delta's)
	S0=() S1=()
	hw_snap S0 sroce_a
	hw_snap S0 sroce_b
	# Real-time priority: the attacker is another host, with a CPU of its
	# own, not a process queued behind the transfer on this one.
	ip netns exec nc timeout "$(hang_bound 120)" chrt -f 10 python3 "$ATTACK" --if vc --a "$aa" \
		--b "$ab" --me "$me" --alt "$ALT" --round "$r" --count "$COUNT" \
		--seed "$SEED" >"$ALOG" 2>&1 &
	local apid=$!
	rm -f "$STOP"
	verify_start -q 1 -n 1000000 -m 64K -D 90 -F "$STOP"
	wait "$apid"
	arc=$?
	res=$(grep '^result ' "$ALOG")
	for kv in ${res#result }; do
		case $kv in
		[a-z]*=[0-9]*) local "R_$kv" ;;
		esac
	done
	grep '^# ' "$ALOG"
	if [ $arc -eq 0 ] && [ -n "$R_qpn_a" ] && [ "$R_hdr_only" -gt 0 ] &&
	   [ "$R_icrc_bad" -eq 0 ]; then
		ok "$r: the attacker saw the connection ($R_sniffed packets; the ICRCs of all $R_hdr_only without payload as it computes them) and sent $COUNT packets"
	else
		not_ok "$r: the attacker saw the connection ($R_sniffed packets; the ICRCs of all $R_hdr_only without payload as it computes them) and sent $COUNT packets"
		tail -n 5 "$ALOG" | sed 's/^/# attacker: /'
	fi
	diag "$r: sent to A: $R_a_addr from a wrong address, $R_a_pkey with a wrong P_Key ($R_a_cnp CNPs); to B: $R_b_addr, $R_b_pkey (path MTU seen: $R_mtu)"
	# While the transfer still runs.
	local qa qb
	qa=$(qp_show sroce_a "${R_qpn_a:-0}")
	qb=$(qp_show sroce_b "${R_qpn_b:-0}")
	sa=$(qp_field "$qa" state)
	sb=$(qp_field "$qb" state)
	check "$r: neither QP in an error state after the attack (A's QP ${R_qpn_a:-?} $sa, B's QP ${R_qpn_b:-?} $sb)" \
		test "$sa" = RTS -a "$sb" = RTS
	if [ "$R_a_cnp" -gt 0 ]; then
		lim=$(qp_field "$qa" drv_cc_limited)
		rate=$(qp_field "$qa" drv_cc_rate_mbps)
		check "$r: A's QP not rate limited after $R_a_cnp spoofed CNPs (cc_limited $lim, cc_rate_mbps $rate)" \
			test "$lim" = 0
	fi
	touch "$STOP"
	if verify_finish; then
		ok "$r: the transfer completes, every byte verified"
		diag "$VERIFY_SUMMARY"
	else
		not_ok "$r: the transfer completes, every byte verified"
		verify_diag
	fi
	hw_snap S1 sroce_a
	hw_snap S1 sroce_b
	for d in a b; do
		local dev=sroce_$d na nb v
		eval "na=\$R_${d}_addr nb=\$R_${d}_pkey"
		v=$(delta "$dev" rx_drop_bad_addr)
		check "$r: $dev: rx_drop_bad_addr counts the $na packets from a wrong address (+$v)" \
			test "$v" = "$na"
		v=$(delta "$dev" rx_drop_bad_pkey)
		check "$r: $dev: rx_drop_bad_pkey counts the $nb packets with a wrong P_Key (+$v)" \
			test "$v" = "$nb"
		v=$(delta "$dev" rx_drop_bad_icrc)
		check "$r: $dev: no ICRC drop (+$v)" test "$v" = 0
		v=$(delta "$dev" rp_cnp_handled)
		check "$r: $dev: no CNP fed rate control (rp_cnp_handled +$v)" \
			test "$v" = 0
		v=
		for c in $SEEN; do
			[ "$(delta "$dev" "$c")" != 0 ] && v+=" $c +$(delta "$dev" "$c")"
		done
		diag "$r: $dev:${v:- no error, duplicate or NAK counted}"
	done
}

ROUNDS=${SROCE_SPOOF_ROUNDS:-req resp cnp pkey dst mixed}
for r in $ROUNDS; do
	[ "$r" = mixed ] && continue
	round "$r" "$IP_C" "$IP_S" "$ME"
done

# All of them over IPv6.
if [[ " $ROUNDS " == *" mixed "* ]]; then
	IP_S=$IP6_S GID_S=$GID6_S GID_C=$GID6_C
	round mixed "$IP6_C" "$IP6_S" "$ME6"
fi

rdma_teardown
check "sroce unloads" wait_until 30 sroce_unload
tap_done
