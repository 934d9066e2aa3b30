#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The libibverbs example pingpongs (ibv_rc/uc/ud/srq_pingpong) between a
# server and a client device: polling and completion events (-e), path
# MTU 1024 (veth MTU 1500) and 4096 (veth MTU 9000), messages of one
# packet and of many (16 KiB > MTU: segmentation and reassembly) for the
# connected transports, data validation (-c), the new post-send API (-N)
# and IPv6 GIDs.  Each run checks both exit codes and the "N bytes in"
# line of both sides (N = size * iters * 2).
#
#   t_rc.sh [sroce|rxe]   sroce (default): sroce_a/sroce_b in two
#                         namespaces; rxe: the kernel's rdma_rxe (reference)
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

rdma_setup "${1:-sroce}" || { not_ok "topology (${1:-sroce})"; tap_done; exit 1; }

PORT=18600

# pp TOOL SIZE ITERS [OPTS...]: one pingpong on the current MTU; the
# remaining options go to both sides.  GIDX_S/GIDX_C pick the GIDs.
pp() {
	local tool=$1 size=$2 iters=$3 bytes
	shift 3
	bytes=$((size * iters * 2))
	PORT=$((PORT + 1))
	run_pair -l "tcp:$PORT" \
		-x "pp_ok $bytes" \
		"ibv_${tool}_pingpong $size B x $iters $* (MTU $CUR_MTU${GIDX_TAG:-})" \
		"ibv_${tool}_pingpong" -d "$DEV_S" -g "${GIDX_S:-$GID_S}" -p "$PORT" \
		-s "$size" -n "$iters" "$@" \
		-- "ibv_${tool}_pingpong" -d "$DEV_C" -g "${GIDX_C:-$GID_C}" -p "$PORT" \
		-s "$size" -n "$iters" "$@" "$IP_S"
}

# Both sides report the byte count; -c reports bad pages without failing.
pp_ok() {
	log_has "$CLI_LOG" "^$1 bytes in " && log_has "$SRV_LOG" "^$1 bytes in " &&
		log_lacks "$CLI_LOG" 'invalid data' && log_lacks "$SRV_LOG" 'invalid data'
}

for m in 1024:1500 4096:9000; do
	CUR_MTU=${m%%:*}
	if set_mtu "${m#*:}" "$CUR_MTU"; then
		ok "veth MTU ${m#*:}: active_mtu $CUR_MTU on $DEV_S and $DEV_C"
	else
		not_ok "veth MTU ${m#*:}: active_mtu $CUR_MTU on $DEV_S and $DEV_C"
		diag "active_mtu: $DEV_S $(active_mtu "$DEV_S"), $DEV_C $(active_mtu "$DEV_C")"
	fi
	for ev in '' -e; do
		for tool in rc uc srq; do
			xtra=()
			[ "$tool" = srq ] && xtra=(-q 4)
			# One packet per message, then 16 packets (or 4 at
			# MTU 4096) per message.
			pp "$tool" "$CUR_MTU" 50 -m "$CUR_MTU" -c $ev "${xtra[@]}"
			pp "$tool" 16384 20 -m "$CUR_MTU" -c $ev "${xtra[@]}"
		done
		# UD: one message is at most one MTU.
		pp ud "$CUR_MTU" 50 -c $ev
	done
done

# Path MTU 1024 on a 4096 port: the requester segments at the QP's MTU.
pp rc 16384 20 -m 1024 -c
pp rc 4096 20 -m 4096 -c -N
# A small message (well below any inline limit) and odd sizes.
pp rc 1 50 -m 4096 -c
pp uc 4097 20 -m 4096 -c
pp srq 5000 10 -m 1024 -c -q 16

GIDX_S=$GID6_S GIDX_C=$GID6_C GIDX_TAG=', IPv6 GIDs'
pp rc 16384 20 -m 4096 -c
pp ud 2048 50 -c
unset GIDX_S GIDX_C GIDX_TAG

# Loopback: server and client on the same device, through its own GIDs
# (the packets go out through the IP layer and come back on lo).
save=("$NS_S" "$DEV_S" "$GID_S" "$GID6_S" "$IP_S" "$IP6_S")
NS_S=$NS_C DEV_S=$DEV_C GID_S=$GID_C GID6_S=$GID6_C IP_S=$IP_C IP6_S=$IP6_C
GIDX_TAG=', loopback on one device'
pp rc 16384 20 -m 4096 -c
pp ud 2048 50 -c
GIDX_S=$GID6_C GIDX_C=$GID6_C GIDX_TAG=', loopback on one device, IPv6 GIDs'
pp rc 16384 20 -m 4096 -c
pp ud 2048 50 -c
unset GIDX_S GIDX_C GIDX_TAG
NS_S=${save[0]} DEV_S=${save[1]} GID_S=${save[2]} GID6_S=${save[3]}
IP_S=${save[4]} IP6_S=${save[5]}

rdma_teardown
tap_done
