#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# sroce with ib_core's exclusive rdma network namespace mode
# (`rdma system set netns exclusive`): each RDMA device belongs to exactly
# one namespace and `rdma dev set DEV netns NS` moves it.
#
# Two namespaces na/nb joined by a veth pair, one sroce device on each end.
# The devices are created from inside the namespaces, land in the initial
# namespace (ib_core creates every device there), are moved into the
# namespace of their netdev and then carry verbs and rdma_cm traffic.  A
# device is moved while a process holds it open (ib_core disassociates the
# process's context) and moved back; namespaces holding devices are deleted.
#
# The mode can only be changed while no namespace but the initial one
# exists, so this suite runs in a guest of its own and sets it first.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

MODE=sroce

# visible NS DEV: is DEV listed by `rdma dev` in NS ("" = initial)?
visible() {
	in_ns "$1" rdma dev show 2>/dev/null | grep -qw "$2"
}

# uverbs_visible NS DEV: does libibverbs see DEV in NS?
uverbs_visible() {
	in_ns "$1" ibv_devices 2>/dev/null | awk '{ print $1 }' | grep -qx "$2"
}

# Leave a useful state behind even when a step fails: every check below
# is one TAP line, and later steps only run when the topology exists.
modprobe ib_core
check "rdma system set netns exclusive" rdma system set netns exclusive
check "rdma system show reports exclusive" \
	bash -c 'rdma system show | grep -q "netns exclusive"'

rdma_netns_pair || { not_ok "topology"; tap_done; exit 1; }
modprobe rdma_ucm

check "rdma link add sroce_a (netdev va in na)" \
	ip netns exec na rdma link add sroce_a type sroce netdev va
check "rdma link add sroce_b (netdev vb in nb)" \
	ip netns exec nb rdma link add sroce_b type sroce netdev vb
# ib_core registers every new device in the initial namespace.
check "new devices belong to the initial namespace" \
	bash -c "$(declare -f in_ns visible); visible '' sroce_a && visible '' sroce_b &&
		! visible na sroce_a && ! visible nb sroce_b"
check "UDP 4791 bound in na and nb, not in the initial namespace" \
	bash -c "$(declare -f in_ns udp_bound); udp_bound na && udp_bound nb && ! udp_bound ''"

check "rdma dev set sroce_a netns na" rdma dev set sroce_a netns na
check "rdma dev set sroce_b netns nb" rdma dev set sroce_b netns nb
check "each device is visible in its namespace only" \
	bash -c "$(declare -f in_ns visible); visible na sroce_a && visible nb sroce_b &&
		! visible '' sroce_a && ! visible '' sroce_b &&
		! visible na sroce_b && ! visible nb sroce_a"
check "libibverbs: na sees sroce_a and not sroce_b" \
	bash -c "$(declare -f in_ns uverbs_visible); uverbs_visible na sroce_a &&
		! uverbs_visible na sroce_b && ! uverbs_visible '' sroce_a"
# A device in another namespace is not there for `rdma dev set` either.
check "moving a device from a namespace it is not in fails" \
	bash -c '! ip netns exec na rdma dev set sroce_b netns na 2>/dev/null'

NS_S=nb NS_C=na DEV_S=sroce_b DEV_C=sroce_a NETDEV_S=vb NETDEV_C=va
IP_S=198.18.0.2 IP_C=198.18.0.1

# gids NS DEV ADDR: the RoCE v2 GID index of ADDR, read in NS (sysfs of
# the rdma class is per namespace in exclusive mode).
gidx() {
	ip netns exec "$1" bash -c "$(declare -f gid_index); gid_index $2 $3"
}
setup_gids() {
	GID_S=$(wait_until 20 gidx nb sroce_b "$(gid_v4 "$IP_S")") &&
		GID_C=$(wait_until 20 gidx na sroce_a "$(gid_v4 "$IP_C")")
}
ns_port_active() {
	ip netns exec "$1" grep -q ACTIVE "/sys/class/infiniband/$2/ports/1/state"
}
check "ports ACTIVE and RoCE v2 GIDs present inside the namespaces" \
	bash -c "$(declare -f wait_until ns_port_active); wait_until 20 ns_port_active na sroce_a &&
		wait_until 20 ns_port_active nb sroce_b" &&
	setup_gids
setup_gids || diag "GIDs: sroce_b ${GID_S:-?} sroce_a ${GID_C:-?}"

PORT=18900
pp_ok() {
	log_has "$CLI_LOG" "^$1 bytes in " && log_has "$SRV_LOG" "^$1 bytes in " &&
		log_lacks "$CLI_LOG" 'invalid data' && log_lacks "$SRV_LOG" 'invalid data'
}
rc_pp() {	# TAG
	PORT=$((PORT + 1))
	run_pair -l "tcp:$PORT" -x "pp_ok $((16384 * 20 * 2))" \
		"ibv_rc_pingpong 16 KiB x 20, data checked$1" \
		ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$PORT" -s 16384 -n 20 -c \
		-- ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$PORT" -s 16384 -n 20 -c "$IP_S"
}
rc_pp ''

PORT=$((PORT + 1))
run_pair -l "cm:$PORT" \
	-x "log_count \"\$CLI_LOG\" '^ping data: rdma-ping-' 10 &&
	    log_lacks \"\$CLI_LOG\" 'mismatch' && log_lacks \"\$SRV_LOG\" 'mismatch'" \
	"rping (rdma_cm resolves the device inside the namespace) 4000 B x 10, verified" \
	rping -s -v -V -a "$IP_S" -p "$PORT" -S 4000 -C 10 \
	-- rping -c -v -V -a "$IP_S" -p "$PORT" -S 4000 -C 10

PORT=$((PORT + 1))
run_pair -l "tcp:$PORT" \
	-x 'log_has "$CLI_LOG" "^[[:space:]]*65536[[:space:]]+200[[:space:]]"' \
	"ib_write_bw 64 KiB over RC inside the namespaces" \
	ib_write_bw -d "$DEV_S" -x "$GID_S" -p "$PORT" -s 65536 -n 200 -F \
	-- ib_write_bw -d "$DEV_C" -x "$GID_C" -p "$PORT" -s 65536 -n 200 -F "$IP_S"

# Move a device while a process holds a context, QPs and mapped rings on it:
# ib_core disassociates the context (sroce_disassociate_ucontext), destroys
# the objects and re-registers the device in the new namespace.  The
# process keeps its mappings until it exits.
# A name for the initial namespace, as `ip netns attach init 1` would make.
touch /run/netns/init && mount --bind /proc/1/ns/net /run/netns/init
PORT=$((PORT + 1))
ip netns exec nb ibv_rc_pingpong -d sroce_b -g "$GID_S" -p "$PORT" \
	>/tmp/held.log 2>&1 &
held=$!
wait_until 30 tcp_listening nb "$PORT" ||
	diag "holder not listening: $(tail -n 3 /tmp/held.log)"
mark=$(kmsg_mark)
check "move sroce_b to the initial namespace while a process holds it" \
	ip netns exec nb rdma dev set sroce_b netns init
check "sroce_b is now visible in the initial namespace only" \
	bash -c "$(declare -f in_ns visible); visible '' sroce_b && ! visible nb sroce_b"
kill "$held" 2>/dev/null
wait "$held" 2>/dev/null
check "move sroce_b back into nb" rdma dev set sroce_b netns nb
check "no kernel warnings from the moves" \
	bash -c "! dmesg | tail -n +$((mark + 1)) | grep -Eq 'WARNING|BUG|refcount|Oops'"
check "ports ACTIVE and GIDs again after the moves" \
	bash -c "$(declare -f wait_until ns_port_active); wait_until 20 ns_port_active nb sroce_b" &&
	setup_gids
rc_pp ', after the moves'

# Deleting a namespace whose rdma device's netdev lives elsewhere: ib_core
# moves the device back to the initial namespace, and it keeps working.
veth_pair vc vd
check "rdma link add sroce_c (netdev vc in the initial namespace)" \
	rdma link add sroce_c type sroce netdev vc
ip netns add nc
check "rdma dev set sroce_c netns nc" rdma dev set sroce_c netns nc
ip netns del nc
check "deleting nc moves sroce_c back to the initial namespace" \
	wait_until 30 visible '' sroce_c
check "sroce_c's port is ACTIVE again" wait_until 20 port_active sroce_c
check "rdma link delete sroce_c" rdma link delete sroce_c
ip link del vc

# Deleting a namespace that holds a device and its netdev: the veth pair
# dies with it (both ends), which unregisters both devices.
ip netns del na
check "deleting na removes sroce_a and, with the veth pair, sroce_b" \
	wait_until 30 bash -c "! rdma dev show sroce_a >/dev/null 2>&1 &&
		! ip netns exec nb rdma dev show sroce_b >/dev/null 2>&1"
ip netns del nb
umount /run/netns/init && rm -f /run/netns/init
check "sroce unloads" wait_until 30 sroce_unload
check "kmemleak: nothing unreferenced from sroce" kmemleak_sroce
tap_done
