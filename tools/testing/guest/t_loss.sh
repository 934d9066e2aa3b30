#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# RC under a faulty network (IBTA 9.7.5-9.7.6: go-back-N, duplicate
# detection, READ re-requests, the atomic replay cache): tools/sroce-verify
# between sroce_a (na) and sroce_b (nb), with tc netem on both veth ends,
# for each profile below and each of SEND, WRITE (+WRITE_IMM) and READ,
# and FETCH_ADD/CMP_SWAP counters under duplication.  Every byte is checked
# on both sides; each profile must also show its fault in the counters
# (retransmissions, duplicates, ICRC drops), so a netem that did nothing
# cannot pass.  A table of bytes, retransmissions, NAKs, timeouts and time
# per profile and operation ends the output.
#
#   t_loss.sh                  the CI size (about 270 MiB in all)
#   SROCE_LOSS_ITERS=N         iterations per QP and run (default 20)
#   SROCE_LOSS_PROFILES="..."  a subset of the profile names
#   make soak                  the long run (>= 4 GiB)
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

ITERS=${SROCE_LOSS_ITERS:-20}
QPS=2
MAXSZ=2M
# name|netem arguments (the same on both ends, so requests and responses
# both suffer).  reorder: 25% of the packets go at once, the rest 10 ms
# later.
PROFILES=(
	"loss1|loss 1%"
	"loss5|loss 5%"
	"reorder|delay 10ms reorder 25% 50%"
	"dup|duplicate 5%"
	"corrupt|corrupt 1%"
	"all|loss 1% duplicate 5% corrupt 1% delay 10ms reorder 25% 50%"
)
WANT=${SROCE_LOSS_PROFILES:-}
COUNTERS="tx_retransmits rx_dup_request rx_out_of_seq rx_nak retry_timeout rx_drop_bad_icrc retry_exceeded"
TABLE=()

# counters: "name=a+b ..." for sroce_a and sroce_b together (one rdma
# call per device: each costs a fraction of a second under TCG).
counters() {
	{
		rdma statistic show link sroce_a/1
		rdma statistic show link sroce_b/1
	} | tr ' ' '\n' | awk -v want="$COUNTERS" '
		BEGIN { n = split(want, w); for (i = 1; i <= n; i++) k[w[i]] = 1 }
		($0 in k) { getline v; sum[$0] += v }
		END { for (i = 1; i <= n; i++) printf "%s=%d ", w[i], sum[w[i]] }'
}

# delta BEFORE AFTER NAME: the growth of one counter.
delta() {
	local b a
	b=$(tr ' ' '\n' <<<"$1" | sed -n "s/^$3=//p")
	a=$(tr ' ' '\n' <<<"$2" | sed -n "s/^$3=//p")
	echo $((a - b))
}

netem() {
	ip netns exec na tc qdisc replace dev va root netem "$@" &&
		ip netns exec nb tc qdisc replace dev vb root netem "$@"
}

netem_off() {
	ip netns exec na tc qdisc del dev va root 2>/dev/null
	ip netns exec nb tc qdisc del dev vb root 2>/dev/null
	true
}

# run PROFILE OP DESC SROCE-VERIFY-ARGS...: one verified run, its table
# row, and the counter growth added to PGROW (for the profile's check).
run() {
	local prof=$1 op=$2 desc=$3 before after bytes secs
	shift 3
	before=$(counters)
	verify_pair "$prof: $desc" "$@"
	after=$(counters)
	bytes=$(sed -n 's/.* bytes=\([0-9]*\) .*/\1/p' <<<"$VERIFY_SUMMARY")
	secs=$(sed -n 's/.* secs=\([0-9.]*\).*/\1/p' <<<"$VERIFY_SUMMARY")
	[ -n "$VERIFY_SUMMARY" ] || bytes=FAIL secs=-
	TOTAL=$((TOTAL + ${bytes//FAIL/0}))
	TABLE+=("$(printf '%-8s %-7s %11s %8s %8s %8s %6s %6s %6s %6s' \
		"$prof" "$op" "$bytes" \
		"$(delta "$before" "$after" tx_retransmits)" \
		"$(delta "$before" "$after" rx_dup_request)" \
		"$(delta "$before" "$after" rx_out_of_seq)" \
		"$(delta "$before" "$after" rx_nak)" \
		"$(delta "$before" "$after" retry_timeout)" \
		"$(delta "$before" "$after" rx_drop_bad_icrc)" "$secs")")
}

if [ ! -x "$VERIFY" ]; then
	not_ok "sroce-verify is built"
	diag "$VERIFY missing: make -C tools/sroce-verify"
	tap_done
	exit 1
fi
if ! rdma_setup sroce || ! modprobe sch_netem; then
	not_ok "set up sroce_a/sroce_b and netem"
	tap_done
	exit 1
fi
check "veth MTU 4200: active MTU 4096" set_mtu 4200 4096 2>/dev/null ||
	true
diag "seed $VERIFY_SEED, $QPS QPs x $ITERS iterations per run, messages up to $MAXSZ"

TOTAL=0
slab_snapshot >/tmp/loss_slab0
for p in "${PROFILES[@]}"; do
	name=${p%%|*}
	args=${p#*|}
	if [ -n "$WANT" ] && ! grep -qw "$name" <<<"$WANT"; then
		continue
	fi
	# shellcheck disable=SC2086 # netem arguments are words
	if ! netem $args; then
		not_ok "$name: netem $args"
		continue
	fi
	pbefore=$(counters)
	run "$name" send "SEND, multi-SGE receives, every byte checked" \
		-q "$QPS" -n "$ITERS" -m "$MAXSZ" -o send
	run "$name" write "WRITE and WRITE_IMM, every byte checked" \
		-q "$QPS" -n "$ITERS" -m "$MAXSZ" -o write,imm
	run "$name" read "READ, every byte checked" \
		-q "$QPS" -n "$ITERS" -m "$MAXSZ" -o read
	case $name in
	dup | all)
		run "$name" atomic "FETCH_ADD/CMP_SWAP counters exact (x4 per iteration)" \
			-q "$QPS" -n $((ITERS * 10)) -o atomic
		;;
	esac
	pafter=$(counters)
	# The fault must have happened (and been dealt with).
	case $name in
	loss* | reorder)
		grown=$(($(delta "$pbefore" "$pafter" tx_retransmits) +
			 $(delta "$pbefore" "$pafter" rx_dup_request)))
		what="retransmissions" ;;
	dup)
		grown=$(delta "$pbefore" "$pafter" rx_dup_request)
		what="duplicate requests detected" ;;
	corrupt | all)
		grown=$(delta "$pbefore" "$pafter" rx_drop_bad_icrc)
		what="packets dropped for a bad ICRC" ;;
	esac
	check "$name: $what counted ($grown)" [ "$grown" -gt 0 ]
	check "$name: no WQE failed (retry_exceeded unchanged)" \
		[ "$(delta "$pbefore" "$pafter" retry_exceeded)" -eq 0 ]
	netem_off
done

# (a subset of the profiles, or fewer iterations, is not the CI size)
enough=$(( ${#WANT} > 0 || ITERS < 20 || TOTAL >= (256 << 20) ))
check "bytes verified in all: $TOTAL ($((TOTAL >> 20)) MiB; >= 256 MiB at the CI size)" \
	[ "$enough" -eq 1 ]
diag "$(printf '%-8s %-7s %11s %8s %8s %8s %6s %6s %6s %6s' profile op bytes \
	retrans dup_req out_seq naks tmouts icrc secs)"
for r in "${TABLE[@]}"; do
	diag "$r"
done

rdma_teardown
slab_snapshot >/tmp/loss_slab1
slab_check "slab usage back to baseline after the fault runs" \
	/tmp/loss_slab0 /tmp/loss_slab1 64
tap_done
