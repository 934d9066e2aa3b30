# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Topology and server/client helpers shared by the rdma-core tool suites
# (t_rc.sh, t_perf.sh, t_rdmacm.sh).  Sourced after lib.sh.
#
# rdma_setup MODE builds one of two topologies and exports the variables
# the suites use:
#
#   sroce  two namespaces na/nb joined by the veth pair va/vb
#          (198.18.0.1/24 + 2001:db8::1 on va, .2 + 2001:db8::2 on vb),
#          sroce_a on va in na (client), sroce_b on vb in nb (server).
#   hub    three namespaces na, nb, nc on one Ethernet segment: a bridge
#          br0 in the initial namespace with ports va0, vb0, vc0 that
#          learn no addresses, so it floods every frame to every port (a
#          hub, or a mirror port: nc sees what na and nb exchange); va,
#          vb, vc in na, nb, nc with 198.18.0.1, .2, .3 and 2001:db8::1,
#          ::2, ::3; sroce_a on va (client), sroce_b on vb (server).  nc,
#          without an RDMA device, is the third host (t_spoof.sh,
#          t_peerfuzz.sh).
#   rxe    the kernel's rdma_rxe as the reference: rdma_rxe's UDP socket
#          lives in the initial namespace only, and two rxe devices on two
#          local addresses do not reach each other (the receive side looks
#          the device up by the skb's netdev, which is lo for a local
#          destination).  So: one veth pair va/vb in the initial namespace,
#          198.18.0.1 on va, one device rxe0 on va, and server and client
#          both on rxe0 (rxe loops packets to its own address back inside
#          the driver).
#
#   MODE            sroce | hub | rxe
#   NS_S NS_C       namespace of server / client ("" = initial)
#   DEV_S DEV_C     RDMA device of server / client
#   NETDEV_S NETDEV_C  their netdevs
#   IP_S IP_C       IPv4 address of server / client
#   IP6_S IP6_C     IPv6 address of server / client
#   GID_S GID_C     GID index of the RoCE v2 IPv4 GID of server / client
#   GID6_S GID6_C   GID index of the RoCE v2 IPv6 GID of server / client
#
# run_pair [options] DESC SERVER-CMD... -- CLIENT-CMD...  starts the server
# in NS_S, waits until it is ready, runs the client in NS_C, waits for the
# server and prints one TAP line.

# The RoCE v2 GID of an IPv4 address: ::ffff:a.b.c.d in sysfs's form.
gid_v4() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$1" "$2" "$3" "$4"
}

# The sysfs form of an IPv6 address (8 groups of 4 hex digits).  Pure
# bash, like the helpers below that the setup polls: under TCG each
# process a test starts costs a good fraction of a second.
gid_v6() {
	local head=$1 tail= g out= n i
	local -a h t
	if [[ $1 == *::* ]]; then
		head=${1%%::*} tail=${1#*::}
	fi
	IFS=: read -r -a h <<<"$head"
	IFS=: read -r -a t <<<"$tail"
	n=$((8 - ${#h[@]} - ${#t[@]}))
	for g in "${h[@]}"; do
		printf -v g '%04x' "0x${g:-0}"
		out+=":$g"
	done
	for ((i = 0; i < n; i++)); do
		out+=":0000"
	done
	for g in "${t[@]}"; do
		printf -v g '%04x' "0x${g:-0}"
		out+=":$g"
	done
	echo "${out#:}"
}

# gid_index DEV GID: index of a RoCE v2 GID in DEV's table (port 1).
gid_index() {
	local d=/sys/class/infiniband/$1/ports/1 g v ty
	for g in "$d"/gids/*; do
		read -r v <"$g" 2>/dev/null || continue
		[ "$v" = "$2" ] || continue
		read -r ty <"$d/gid_attrs/types/${g##*/}" 2>/dev/null
		if [ "$ty" = "RoCE v2" ]; then
			echo "${g##*/}"
			return 0
		fi
	done
	return 1
}

# rxe_veth_ns: rdma_rxe's rxe0 on vx0 (198.18.4.1, initial namespace) and
# vx0's veth peer vx1 (198.18.4.2) in namespace x, for a sroce device there.
rxe_veth_ns() {
	modprobe rdma_rxe || return 1
	ip netns add x || return 1
	ip link add vx0 type veth peer name vx1 || return 1
	ip link set vx1 netns x
	ip addr add 198.18.4.1/24 dev vx0
	ip -n x addr add 198.18.4.2/24 dev vx1
	ip link set vx0 up
	ip -n x link set vx1 up
	ip -n x link set lo up
	rdma link add rxe0 type rxe netdev vx0
}

# port_active DEV: is port 1 of DEV ACTIVE?
port_active() {
	local st
	read -r st <"/sys/class/infiniband/$1/ports/1/state" 2>/dev/null &&
		[[ $st == *ACTIVE* ]]
}

# rdma_netns_pair: sroce loaded, namespaces na/nb joined by va/vb with the
# addresses above; no RDMA device yet (t_netns makes its own).
rdma_netns_pair() {
	{ sroce_loaded || sroce_load; } || return 1
	ip netns add na && ip netns add nb || return 1
	veth_pair va vb nb || return 1
	ip link set va netns na || return 1
	ip -n na link set va up
	ip -n na link set lo up
	ip -n nb link set lo up
	ip -n na addr add 198.18.0.1/24 dev va
	ip -n nb addr add 198.18.0.2/24 dev vb
	ip -n na -6 addr add 2001:db8::1/64 dev va nodad
	ip -n nb -6 addr add 2001:db8::2/64 dev vb nodad
	# Multicast (mckey) leaves through the veth, not a default route.
	ip -n na route add 224.0.0.0/4 dev va
	ip -n nb route add 224.0.0.0/4 dev vb
}

rdma_setup_sroce() {
	rdma_netns_pair || return 1
	ip netns exec na rdma link add sroce_a type sroce netdev va || return 1
	ip netns exec nb rdma link add sroce_b type sroce netdev vb || return 1
	NS_S=nb NS_C=na DEV_S=sroce_b DEV_C=sroce_a NETDEV_S=vb NETDEV_C=va
	IP_S=198.18.0.2 IP_C=198.18.0.1 IP6_S=2001:db8::2 IP6_C=2001:db8::1
}

rdma_setup_hub() {
	local n
	{ sroce_loaded || sroce_load; } || return 1
	ip link add br0 type bridge || return 1
	ip link set br0 up
	for n in a b c; do
		ip netns add "n$n" || return 1
		ip link add "v${n}0" type veth peer name "v$n" netns "n$n" ||
			return 1
		ip link set "v${n}0" master br0 || return 1
		bridge link set dev "v${n}0" learning off || return 1
		ip link set "v${n}0" up
		ip -n "n$n" link set lo up
		ip -n "n$n" link set "v$n" up
	done
	ip -n na addr add 198.18.0.1/24 dev va
	ip -n nb addr add 198.18.0.2/24 dev vb
	ip -n nc addr add 198.18.0.3/24 dev vc
	ip -n na -6 addr add 2001:db8::1/64 dev va nodad
	ip -n nb -6 addr add 2001:db8::2/64 dev vb nodad
	ip -n nc -6 addr add 2001:db8::3/64 dev vc nodad
	ip netns exec na rdma link add sroce_a type sroce netdev va || return 1
	ip netns exec nb rdma link add sroce_b type sroce netdev vb || return 1
	NS_S=nb NS_C=na DEV_S=sroce_b DEV_C=sroce_a NETDEV_S=vb NETDEV_C=va
	IP_S=198.18.0.2 IP_C=198.18.0.1 IP6_S=2001:db8::2 IP6_C=2001:db8::1
}

rdma_setup_rxe() {
	modprobe rdma_rxe || return 1
	modprobe rdma_ucm
	veth_pair va vb || return 1
	ip addr add 198.18.0.1/24 dev va
	ip -6 addr add 2001:db8::1/64 dev va nodad
	ip route add 224.0.0.0/4 dev va
	rdma link add rxe0 type rxe netdev va || return 1
	NS_S='' NS_C='' DEV_S=rxe0 DEV_C=rxe0 NETDEV_S=va NETDEV_C=va
	IP_S=198.18.0.1 IP_C=198.18.0.1 IP6_S=2001:db8::1 IP6_C=2001:db8::1
}

# rdma_setup [MODE]: build the topology; returns non-zero (after a
# diagnostic) when it could not.
rdma_setup() {
	MODE=${1:-sroce}
	case "$MODE" in
	sroce) rdma_setup_sroce ;;
	hub) rdma_setup_hub ;;
	rxe) rdma_setup_rxe ;;
	*) diag "unknown mode $MODE (sroce|hub|rxe)"; return 1 ;;
	esac || return 1
	modprobe rdma_ucm
	wait_until 20 port_active "$DEV_S" && wait_until 20 port_active "$DEV_C" ||
		{ diag "ports not ACTIVE"; return 1; }
	local g4s g4c g6s g6c
	g4s=$(gid_v4 "$IP_S") g4c=$(gid_v4 "$IP_C")
	g6s=$(gid_v6 "$IP6_S") g6c=$(gid_v6 "$IP6_C")
	wait_until 20 gid_index "$DEV_S" "$g4s" >/dev/null &&
		wait_until 20 gid_index "$DEV_C" "$g4c" >/dev/null &&
		wait_until 20 gid_index "$DEV_S" "$g6s" >/dev/null &&
		wait_until 20 gid_index "$DEV_C" "$g6c" >/dev/null ||
		{ diag "RoCE v2 GIDs missing"; return 1; }
	GID_S=$(gid_index "$DEV_S" "$g4s") GID_C=$(gid_index "$DEV_C" "$g4c")
	GID6_S=$(gid_index "$DEV_S" "$g6s") GID6_C=$(gid_index "$DEV_C" "$g6c")
	diag "mode $MODE: server $DEV_S${NS_S:+ (ns $NS_S)} $IP_S gid $GID_S/$GID6_S," \
		"client $DEV_C${NS_C:+ (ns $NS_C)} $IP_C gid $GID_C/$GID6_C"
}

rdma_teardown() {
	case "$MODE" in
	sroce)
		ip netns exec na rdma link delete sroce_a
		ip netns exec nb rdma link delete sroce_b
		ip netns del na
		ip netns del nb
		;;
	hub)
		ip netns exec na rdma link delete sroce_a
		ip netns exec nb rdma link delete sroce_b
		ip netns del na
		ip netns del nb
		ip netns del nc
		ip link del br0
		;;
	rxe)
		rdma link delete rxe0
		ip link del va
		;;
	esac
}

# active_mtu DEV: port 1's active MTU in bytes.
active_mtu() {
	ibv_devinfo -d "$1" -i 1 2>/dev/null | awk '$1 == "active_mtu:" { print $2; exit }'
}

# set_mtu NETDEV_MTU IB_MTU: set the MTU of both veth ends and wait until
# the ports report IB_MTU as their active MTU.
set_mtu() {
	in_ns "$NS_C" ip link set "$NETDEV_C" mtu "$1" || return 1
	in_ns "$NS_S" ip link set "$NETDEV_S" mtu "$1" || return 1
	if [ "$MODE" = rxe ]; then
		ip link set vb mtu "$1" || return 1
	fi
	wait_until 20 mtu_is "$2"
}

mtu_is() {
	[ "$(active_mtu "$DEV_C")" = "$1" ] && [ "$(active_mtu "$DEV_S")" = "$1" ]
}

# Readiness probes for run_pair -l.
tcp_listening() {	# NS PORT
	in_ns "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q .
}

cm_listening() {	# PORT: an rdma_cm ID in LISTEN state on PORT
	# Asked in the server's namespace: with exclusive rdma netns mode the
	# server's device (and its cm_ids) are visible there only.
	in_ns "${NS_S:-}" rdma resource show cm_id 2>/dev/null |
		grep -E "state LISTEN" | grep -qE "src-addr [^ ]*:$1( |$)"
}

mcast_joined() {	# NS NETDEV GROUP: the group is joined on the netdev
	in_ns "$1" ip maddr show dev "$2" 2>/dev/null | grep -qw "$3"
}

# wait_until SECONDS command...: poll until the command succeeds, bounded
# by wall-clock time (each probe costs a process start or more under TCG,
# so a count of polls is no bound).
wait_until() {
	local end=$((SECONDS + $1))
	shift
	while :; do
		"$@" && return 0
		[ "$SECONDS" -ge "$end" ] && return 1
		sleep 0.2
	done
}

pid_gone() {
	! kill -0 "$1" 2>/dev/null
}

# server_ready PID READY: wait (60 s at most) for READY; give up early
# when the server process is gone.
server_ready() {
	local pid=$1 r=$2 end=$((SECONDS + 60))
	while kill -0 "$pid" 2>/dev/null; do
		case "$r" in
		tcp:*) tcp_listening "$NS_S" "${r#tcp:}" ;;
		cm:*) cm_listening "${r#cm:}" ;;
		mcast:*) mcast_joined "$NS_S" "$NETDEV_S" "${r#mcast:}" ;;
		sleep:*) sleep "${r#sleep:}" ;;
		*) false ;;
		esac && return 0
		[ "$SECONDS" -ge "$end" ] && return 1
		sleep 0.2
	done
	return 1
}

# Per-run log files (under /tmp: tmpfs in the guest).
SRV_LOG=/tmp/rdma_srv.log
CLI_LOG=/tmp/rdma_cli.log
RUN_TIMEOUT=${RUN_TIMEOUT:-120}

# log_tail FILE LABEL [N]: the last lines of a log as TAP diagnostics.
log_tail() {
	tail -n "${3:-6}" "$1" 2>/dev/null | sed "s/^/# $2: /"
}

# run_pair [options] DESC SERVER-CMD... -- CLIENT-CMD...
#
#   -l READY   how to tell that the server is ready before the client starts:
#              tcp:PORT (a TCP listener in NS_S: the verbs examples and
#              perftest without -R exchange QP numbers over TCP),
#              cm:PORT (an rdma_cm ID listening on PORT), mcast:GROUP
#              (GROUP joined on NETDEV_S), sleep:SECS
#   -t SECS    timeout of the client (default $RUN_TIMEOUT); the server
#              gets SECS + 60
#   -x CHECK   shell code evaluated when both exited 0; it sees
#              $SRV_LOG and $CLI_LOG and decides the outcome
#
# Prints one TAP line; on failure the tails of both logs follow as
# diagnostics.  Returns 0 when the check passed.
run_pair() {
	local ready='' tmo=$RUN_TIMEOUT chk='' opt srv=() cli=() pid crc src why=''
	OPTIND=1
	while getopts 'l:t:x:' opt; do
		case "$opt" in
		l) ready=$OPTARG ;;
		t) tmo=$OPTARG ;;
		x) chk=$OPTARG ;;
		*) return 2 ;;
		esac
	done
	shift $((OPTIND - 1))
	local desc=$1
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	cli=("$@")

	: >"$SRV_LOG"
	: >"$CLI_LOG"
	in_ns "$NS_S" timeout -k 5 "$((tmo + 60))" "${srv[@]}" >"$SRV_LOG" 2>&1 &
	pid=$!
	if [ -n "$ready" ] && ! server_ready "$pid" "$ready"; then
		if kill -0 "$pid" 2>/dev/null; then
			why="server not ready ($ready) after 60 s"
		else
			why="server exited before it was ready ($ready)"
		fi
	fi

	if [ -z "$why" ]; then
		in_ns "$NS_C" timeout -k 5 "$tmo" "${cli[@]}" >"$CLI_LOG" 2>&1
		crc=$?
	else
		crc=-1
	fi
	# The server ends by itself once the client is done (or gave up):
	# allow it a bounded grace, then stop it.
	if ! wait_until 30 pid_gone "$pid"; then
		kill "$pid" 2>/dev/null
		[ -z "$why" ] && why="server still running 30 s after the client"
	fi
	wait "$pid"
	src=$?
	if [ -z "$why" ]; then
		if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
			why="exit codes: client $crc, server $src"
			[ "$crc" -eq 124 ] && why="$why (client timed out after ${tmo}s)"
		elif [ -n "$chk" ] && ! eval "$chk"; then
			why="output check failed: $chk"
		fi
	fi
	if [ -z "$why" ]; then
		ok "$desc"
		return 0
	fi
	not_ok "$desc"
	diag "$why"
	diag "server: ${srv[*]}"
	diag "client: ${cli[*]}"
	# stderr is unbuffered and stdout is not: a tool's error message sits
	# above the output it flushed at exit, out of reach of the tail.
	log_errors "$SRV_LOG" server
	log_errors "$CLI_LOG" client
	log_tail "$SRV_LOG" server
	log_tail "$CLI_LOG" client
	return 1
}

# log_errors FILE LABEL: the first lines that look like an error report.
log_errors() {
	grep -iE "error|fail|couldn|unable|status|timeout|timed out" "$1" 2>/dev/null |
		head -n 4 | sed "s/^/# $2 (error): /"
}

# Output checks for run_pair -x.

# log_has FILE ERE: the log has a matching line.
log_has() {
	grep -qE -- "$2" "$1"
}

# log_lacks FILE ERE: the log has no matching line.
log_lacks() {
	! grep -qE -- "$2" "$1"
}

# log_count FILE ERE N: exactly N lines match.
log_count() {
	[ "$(grep -cE -- "$2" "$1")" -eq "$3" ]
}

# verify_pair DESC [-x ERE] CLIENT-ARGS...: one run of tools/sroce-verify,
# the server on DEV_S in NS_S, the client on DEV_C in NS_C, over the IPv4
# GIDs; one TAP line.  Both sides must exit 0 with an OK summary (every
# byte checked on both sides); -x ERE must also match the client's
# summary, which is left in VERIFY_SUMMARY.  VERIFY_SEED (default: fresh
# per suite, printed) reproduces a run; VERIFY_STALL is the tool's
# no-progress limit in seconds (default 30); VERIFY_WALL bounds the whole
# run (default 300 s); VERIFY_SARGS are more options for the server.
#
# verify_start CLIENT-ARGS... and verify_finish [-x ERE] split it for
# tests that act while the transfer runs: verify_finish leaves the reason
# of a failure in VERIFY_WHY (empty: both sides OK), the client's log in
# VERIFY_CLOG and prints nothing.
VERIFY=$SROCE_TREE/tools/sroce-verify/sroce-verify
VERIFY_SEED=${VERIFY_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
VERIFY_PORT=18700
VERIFY_SUMMARY=
VERIFY_WHY=
VERIFY_SLOG=/tmp/verify_srv.log
VERIFY_CLOG=/tmp/verify_cli.log
VERIFY_SPID=
VERIFY_CPID=

verify_start() {
	local wall=${VERIFY_WALL:-300} listen stall
	# A debug kernel runs everything several times slower.
	listen=$(hang_bound 30)
	stall=$(hang_bound "${VERIFY_STALL:-30}")
	VERIFY_SUMMARY= VERIFY_WHY= VERIFY_CPID=
	VERIFY_PORT=$((VERIFY_PORT + 1))
	: >"$VERIFY_CLOG"
	in_ns "$NS_S" timeout -k 5 $((wall + 30)) "$VERIFY" -d "$DEV_S" \
		-t "$stall" -g "$GID_S" -p "$VERIFY_PORT" ${VERIFY_SARGS:-} \
		>"$VERIFY_SLOG" 2>&1 &
	VERIFY_SPID=$!
	if ! wait_until "$listen" tcp_listening "$NS_S" "$VERIFY_PORT"; then
		VERIFY_WHY="server not listening after $listen s"
		return 1
	fi
	in_ns "$NS_C" timeout -k 5 "$wall" "$VERIFY" -d "$DEV_C" \
		-t "$stall" -g "$GID_C" -p "$VERIFY_PORT" \
		-s "$VERIFY_SEED" "$@" "$IP_S" >"$VERIFY_CLOG" 2>&1 &
	VERIFY_CPID=$!
}

verify_finish() {
	local ere='' crc=-1 src
	if [ "${1:-}" = -x ]; then
		ere=$2
		shift 2
	fi
	if [ -n "$VERIFY_CPID" ]; then
		wait "$VERIFY_CPID"
		crc=$?
	fi
	if ! wait_until 30 pid_gone "$VERIFY_SPID"; then
		# $! is the shell that runs in_ns: the tool is the child of
		# its timeout(1), which a signal to the shell never reaches.
		# Left alive, it wrote its late FAIL into the next run's log.
		pkill -f -- "sroce-verify -d $DEV_S .*-p $VERIFY_PORT( |\$)"
		kill "$VERIFY_SPID" 2>/dev/null
		[ -z "$VERIFY_WHY" ] &&
			VERIFY_WHY="server still running 30 s after the client"
	fi
	wait "$VERIFY_SPID"
	src=$?
	VERIFY_SUMMARY=$(grep '^sroce-verify: OK qps=' "$VERIFY_CLOG")
	[ -n "$VERIFY_WHY" ] && return 1
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
		VERIFY_WHY="exit codes: client $crc, server $src"
	elif [ -z "$VERIFY_SUMMARY" ] ||
	     ! grep -q '^sroce-verify: OK (server) qps=' "$VERIFY_SLOG"; then
		VERIFY_WHY="no OK summary"
	elif [ -n "$ere" ] && ! grep -qE "$ere" <<<"$VERIFY_SUMMARY"; then
		VERIFY_WHY="client summary does not match $ere"
	fi
	[ -z "$VERIFY_WHY" ]
}

# verify_diag: the logs of a failed run, as TAP comments.
verify_diag() {
	diag "$VERIFY_WHY"
	grep -E 'FAIL|error|warning' "$VERIFY_SLOG" | head -5 | sed 's/^/# server: /'
	if grep -qE 'FAIL|error|warning' "$VERIFY_CLOG"; then
		grep -E 'FAIL|error|warning' "$VERIFY_CLOG" | head -5
	else
		tail -n 3 "$VERIFY_CLOG"
	fi | sed 's/^/# client: /'
}

verify_pair() {
	local desc=$1 x=()
	shift
	if [ "${1:-}" = -x ]; then
		x=(-x "$2")
		shift 2
	fi
	verify_start "$@"
	if verify_finish "${x[@]}"; then
		ok "$desc"
		diag "$VERIFY_SUMMARY"
		return 0
	fi
	not_ok "$desc"
	diag "client args: -s $VERIFY_SEED $* $IP_S"
	verify_diag
	return 1
}
