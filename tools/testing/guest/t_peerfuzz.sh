#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Deep peer fuzz: the hostile-frame tests (t_uverbs.sh: frames for QPs
# that do not exist) carried past every check a peer's frame meets before
# the transport logic.  peer_fuzz.py, in nc, makes itself the peer of live
# QPs (an RC and a UC QP on sroce_b, an RC QP on sroce_a, each connected
# to a QP number at nc's address) and sends them frames with a valid ICRC,
# the right QPN, from the right address, at PSNs in or near their window,
# everything else fuzzed (see peer_fuzz.py), seeded: SROCE_FUZZ_SEED
# reproduces a run, SROCE_FUZZ_FRAMES sets how many frames go out.  Before
# the fuzz, three checks of documented responder behaviour (payloads
# longer than the path MTU, first packets shorter than it, an RDMA
# WRITE's range checked at its first packet).
#
# Afterwards: every frame reached sroce and was counted (rx_packets), the
# drop, duplicate and NAK counters grew, the guest console is clean (the
# harness checks it), a fresh verified transfer between sroce_a and
# sroce_b on new QPs works, and the devices and the module go away.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SEED=${SROCE_FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
FRAMES=${SROCE_FUZZ_FRAMES:-2500}
diag "fuzz seed $SEED ($FRAMES frames), sroce-verify seed $VERIFY_SEED"

if ! rdma_setup hub; then
	not_ok "topology: na, nb, nc on a flooding bridge, sroce in na and nb"
	tap_done
	exit 1
fi
ok "topology: na, nb, nc on a flooding bridge, sroce in na and nb"

# What a frame of the fuzz can end in, besides an effect.
COUNTED="rx_drop_short rx_drop_bad_tver rx_drop_bad_pad rx_drop_bad_opcode
rx_drop_bad_len rx_drop_bad_ip rx_drop_bad_icrc rx_drop_no_qp
rx_drop_unsupported rx_drop_qp_state rx_drop_uc_msg rx_drop_stale_resp
rx_drop_bad_addr rx_drop_bad_pkey rx_dup_request rx_out_of_seq
rx_bad_request rx_access_err tx_rnr_nak tx_seq_nak rx_nak rx_rnr_nak
comp_resync"
# shellcheck disable=SC2034  # (filled and read by hw_snap, hw_delta)
declare -A F0 F1
hw_snap F0 sroce_a
hw_snap F0 sroce_b
pyrun "peer_fuzz.py" nc "$HERE/peer_fuzz.py" --me 198.18.0.3 \
	--a sroce_a,c612:0001,198.18.0.1 --b sroce_b,c612:0002,198.18.0.2 \
	--seed "$SEED" --frames "$FRAMES"
grep '^# ' <<<"$PYRUN_OUT"
declare -A SENT
read -r 'SENT[a]' 'SENT[b]' <<<"$(sed -n 's/^sent a=\([0-9]*\) b=\([0-9]*\)$/\1 \2/p' \
	<<<"$PYRUN_OUT")"

# arrived DEV N: rx_packets of DEV grew by N since the fuzz began.
arrived() {
	local -A now
	hw_snap now "$1"
	[ $((now[$1.rx_packets] - F0[$1.rx_packets])) -eq "$2" ]
}
for d in a b; do
	n=${SENT[$d]:-}
	dev=sroce_$d
	if [ -z "$n" ]; then
		not_ok "$dev: the fuzz reported the frames it sent"
		continue
	fi
	wait_until 10 arrived "$dev" "$n"
	hw_snap F1 "$dev"
	v=$(hw_delta F0 F1 "$dev" rx_packets)
	check "$dev: all $n frames of the fuzz reached sroce and were counted (rx_packets +$v)" \
		test "$v" = "$n"
	sum=0 list=
	for c in $COUNTED; do
		v=$(hw_delta F0 F1 "$dev" "$c")
		[ "$v" = absent ] || [ "$v" = 0 ] && continue
		sum=$((sum + v))
		list+=" $c +$v"
	done
	diag "$dev:$list"
	check "$dev: the drop, duplicate and NAK counters account for frames (+$sum)" \
		test "$sum" -gt 0
done

verify_pair "after the fuzz: a verified transfer on new QPs, sroce_a -> sroce_b" \
	-q 2 -n 4 -m 256K

rdma_teardown
check "sroce unloads" wait_until 30 sroce_unload
check "kmemleak: nothing unreferenced from sroce" kmemleak_sroce
tap_done
