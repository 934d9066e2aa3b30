#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Wire interop with the kernel's rdma_rxe (the reference RoCEv2 stack) over
# two guests linked by a virtual NIC (vm-pair.sh).  One guest drives rxe0,
# the other sroce0, both on $SROCE_NETDEV (vm-pair server 198.18.0.1/24,
# client 198.18.0.2/24).  Every tool runs in both directions within one
# boot: phase 1, the vm-pair server guest runs the tool servers and the
# client guest the tool clients; phase 2, the other way round.
#
# Tools: ibv_{rc,uc,ud,srq}_pingpong (-c: data checked), perftest RC
# ib_{send,write,read,atomic}_{bw,lat} and rping -V (rdma_cm, data
# verified).  A run passes when both sides exit 0 and their output shows
# the work was done: pingpong "N bytes in" with N = size * iters * 2 on
# both sides, a numeric perftest result line for the size on the client,
# rping's 20 "ping data" lines on both sides and no "data mismatch".
# The side running the tool's client prints one TAP line per run; the
# vm-pair client guest ends with the interop matrix as TAP diagnostics.
# On a failure both guests print evidence: log tails, the changed
# `rdma statistic` counters of their device, and new kernel log lines.
#
#   p_interop.sh [MODE [MTUS [BUDGET]]]
#     MODE  SRV-CLI devices of the vm-pair server and client guests, each
#           rxe or sroce; default rxe-sroce; rxe-rxe validates the harness
#     MTUS  netdev MTUs to run at, default "1500 9000" (path MTU 1024 and
#           4096; the virtio link carries 9000-byte frames)
#     BUDGET  seconds of script time (default 480, 1440 on a KASAN kernel,
#           which runs 3-4x slower) after which runs are no longer started
#           but fail as "not run": a broken data path where every run
#           times out (45 s per tool client) still ends in time
#
# Synchronisation: a line protocol over TCP 18400 (the vm-pair client guest
# listens with nc before it configures its address; the server guest
# connects once it can ping the peer).  Per run:
#   tool-server side: starts the tool server, waits until it listens, sends
#                     "ready NAME" (or "fail NAME why")
#   tool-client side: runs the client, sends "cdone NAME rc"
#   tool-server side: waits for the server, checks its output, sends
#                     "sres NAME rc verdict"
#   tool-client side: prints the TAP line, sends "verdict NAME ok|fail"
# Each wait is bounded; a lost peer ends the run with a failure.
set -u
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/lib_rdma.sh"

MODE=${1:-rxe-sroce}
MTUS=${2:-1500}	# 9000 too: p_interop.sh MODE "1500 9000"
CTL_PORT=18400
CLI_T=45	# per tool client run
READY_T=60				# tool server start
if [ -n "${3:-}" ]; then BUDGET=$3
elif kasan_kernel; then BUDGET=1440
else BUDGET=480
fi
export LC_ALL=C

NETDEV=${SROCE_NETDEV:?no NIC}
case "$MODE" in
rxe-rxe | rxe-sroce | sroce-rxe | sroce-sroce) ;;
*) not_ok "mode $MODE (rxe|sroce)-(rxe|sroce)"; tap_done; exit 1 ;;
esac
case "${SROCE_ROLE:-}" in
server) ME=198.18.0.1 PEER=198.18.0.2 KIND=${MODE%-*} PEERKIND=${MODE#*-} ;;
client) ME=198.18.0.2 PEER=198.18.0.1 KIND=${MODE#*-} PEERKIND=${MODE%-*} ;;
*) not_ok "SROCE_ROLE unset"; tap_done; exit 1 ;;
esac
DEV=${KIND}0
TAG="$SROCE_ROLE guest $DEV"

diag "mode $MODE, MTUs $MTUS, kernel $(uname -r): this is the $SROCE_ROLE guest," \
	"$DEV on $NETDEV $ME; peer $PEERKIND on $PEER"

# --- setup -----------------------------------------------------------------

ip link set "$NETDEV" up
ip link set lo up
if [ "$KIND" = rxe ]; then
	check "$TAG: load rdma_rxe" modprobe rdma_rxe
	check "$TAG: rxe0 on $NETDEV" rdma link add rxe0 type rxe netdev "$NETDEV"
else
	check "$TAG: load sroce" sroce_load
	check "$TAG: sroce0 on $NETDEV" rdma link add sroce0 type sroce netdev "$NETDEV"
fi
modprobe rdma_ucm

# The listener is up before the address: once the peer can ping us, it can
# connect.
if [ "$SROCE_ROLE" = client ]; then
	coproc CTL { exec nc -l -p "$CTL_PORT"; }
	# Duplicates: bash closes a coprocess's descriptors when it is reaped.
	exec {IN}<&"${CTL[0]}" {OUT}>&"${CTL[1]}"
fi
ip addr add "$ME/24" dev "$NETDEV"

check "$TAG: port ACTIVE" wait_until 20 port_active "$DEV"
GID=''
if wait_until 20 gid_index "$DEV" "$(gid_v4 "$ME")" >/dev/null; then
	GID=$(gid_index "$DEV" "$(gid_v4 "$ME")")
	ok "$TAG: RoCE v2 GID of $ME at index $GID"
else
	not_ok "$TAG: RoCE v2 GID of $ME"
	GID=1
fi
ping1() { ping -q -c 1 -W 1 "$PEER" >/dev/null 2>&1; }
check "$TAG: reaches $PEER" wait_until 180 ping1

LOST=''
if [ "$SROCE_ROLE" = server ]; then
	connect() { exec {IN}<>"/dev/tcp/$PEER/$CTL_PORT"; } 2>/dev/null
	if wait_until 60 connect; then
		OUT=$IN
	else
		LOST="could not connect to $PEER:$CTL_PORT"
	fi
fi

# send LINE / recv SECONDS: one protocol line; recv sets MSG (split: M).
send() {
	[ -z "$LOST" ] || return 1
	# A subshell: a closed peer kills it with SIGPIPE, not this script.
	(echo "$*" >&"$OUT") 2>/dev/null || { LOST="send failed: $*"; return 1; }
}
recv() {
	MSG=''
	[ -z "$LOST" ] || return 1
	if ! IFS= read -r -t "$1" MSG <&"$IN"; then
		LOST="no message from the peer within $1 s"
		return 1
	fi
	read -r -a M <<<"$MSG"
}

if [ -z "$LOST" ]; then
	send "hello $SROCE_ROLE $MODE $MTUS" && recv 120
fi
if [ -z "$LOST" ] && [ "$MSG" = "hello $([ "$SROCE_ROLE" = server ] && echo client || echo server) $MODE $MTUS" ]; then
	ok "$TAG: control channel to $PEER:$CTL_PORT"
else
	not_ok "$TAG: control channel to $PEER:$CTL_PORT"
	diag "${LOST:-peer said: $MSG}"
	LOST=${LOST:-handshake}
fi

# --- evidence ---------------------------------------------------------------

# counters FILE: the device's port counters, one "name value" a line.
counters() {
	rdma statistic show link "$DEV/1" 2>/dev/null |
		awk '{ for (i = 3; i < NF; i += 2) print $i, $(i + 1) }' | sort >"$1"
}

# evidence LOG BEFORE MARK: what this guest saw of a failed run.
evidence() {
	local after=/tmp/ctr_after
	counters "$after"
	# perftest's errors go to stderr, unbuffered: above its table.
	grep -iE 'error|fail|status|scnt|mismatch|unable|couldn|invalid' "$1" |
		head -n 8 | sed "s/^/# $TAG $LABEL_SIDE error: /"
	log_tail "$1" "$TAG $LABEL_SIDE output" 6
	diag "$TAG counters changed during the run:" \
		"$(join "$2" "$after" | awk '$3 != $2 { printf "%s +%d ", $1, $3 - $2 }')"
	diag "$TAG counters now: $(awk '$2 != 0 { printf "%s %s ", $1, $2 }' "$after")"
	kmsg_since "$3" | tail -n 20 | sed "s/^/# $TAG dmesg: /"
}

# save_log KEY SIDE: keep the tool's output in the results directory.
save_log() {
	[ -d "${RESULTS:-}" ] || return 0
	mkdir -p "$RESULTS/runs"
	{ echo "# ${CMD[*]}"; cat "$LOG"; } >"$RESULTS/runs/${1//:/-}.$2-$DEV.log"
}

# --- tools ------------------------------------------------------------------

TESTS="rc_pingpong uc_pingpong ud_pingpong srq_pingpong
ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw
ib_send_lat ib_write_lat ib_read_lat ib_atomic_lat rping"
IBMTU=1024
RPING_N=20

# tool NAME PORT SIDE SRVIP: sets CMD (the command of side srv|cli),
# READY (how the server shows it listens), DESC, and CHK (a check of $LOG
# for this side; empty: the exit code is all).
tool() {
	local name=$1 port=$2 side=$3 srvip=$4 size iters opts=() dst=()
	[ "$side" = cli ] && dst=("$srvip")
	CHK=''
	case "$name" in
	*_pingpong)
		iters=20
		case "$name" in
		rc_* | uc_*) size=16384 opts=(-m "$IBMTU") ;;
		srq_*) size=4096 opts=(-m "$IBMTU" -q 4) ;;
		ud_*) size=$IBMTU iters=50 ;;
		esac
		CMD=("ibv_$name" -d "$DEV" -g "$GID" -p "$port" -s "$size"
			-n "$iters" -c "${opts[@]}" "${dst[@]}")
		READY=tcp:$port
		DESC="$name $size B x $iters"
		CHK="log_has \$LOG '^$((size * iters * 2)) bytes in ' && log_lacks \$LOG 'invalid data'"
		;;
	ib_*)
		case "$name" in
		ib_atomic_bw) size=8 opts=(-n 100) ;;
		ib_atomic_lat) size=8 opts=(-n 50) ;;
		*_bw) size=65536 opts=(-s 65536 -n 20) ;;
		*_lat) size=4096 opts=(-s 4096 -n 50) ;;
		esac
		CMD=("$name" -d "$DEV" -x "$GID" -F -p "$port" "${opts[@]}" "${dst[@]}")
		READY=tcp:$port
		DESC="$name ${opts[*]}"
		[ "$side" = cli ] && CHK="perf_ok $size"
		;;
	rping)
		size=16384
		if [ "$side" = srv ]; then
			CMD=(rping -s -a "$ME" -p "$port" -C "$RPING_N" -S "$size" -V -v)
			CHK="log_count \$LOG '^server ping data: ' $RPING_N"
		else
			CMD=(rping -c -a "$srvip" -p "$port" -C "$RPING_N" -S "$size" -V -v)
			CHK="log_count \$LOG '^ping data: ' $RPING_N"
		fi
		CHK="$CHK && log_lacks \$LOG 'mismatch'"
		READY=cm:$port
		DESC="rping -C $RPING_N -S $size -V"
		;;
	esac
}

# perf_ok SIZE: the client's table has a result line for SIZE: "#bytes
# #iterations" then three figures (bandwidth peak/avg/msgrate or latency
# min/max/typical).  perftest's TSC calibration warning under TCG
# ("Correlation coefficient r^2: X < 0.9", on stderr, lands inside the
# table) is cut out first.  A calibration that failed outright prints
# inf or nan for the figures of a run that completed (seen once in 40
# suites, ib_send_lat on 6.12): timing is not what this checks.
perf_ok() {
	local n='(-?nan|inf|[0-9]+([.][0-9]+)?)' s='[[:space:]]+'
	sed -E 's/Correlation coefficient r\^2: [^<]*< 0\.9//' "$LOG" |
		grep -qE "^[[:space:]]*$1${s}[0-9]+$s$n$s$n$s$n([[:space:]]|$)" ||
		return 1
	if grep -qE "^[[:space:]]*$1${s}[0-9]+${s}(-?nan|inf)" "$LOG"; then
		diag "perftest's clock calibration failed (inf/nan figures)"
	fi
	return 0
}

# ready_local PID READY: wait for the tool server to listen.
ready_local() {
	local pid=$1 r=$2 end=$((SECONDS + READY_T))
	while kill -0 "$pid" 2>/dev/null; do
		case "$r" in
		tcp:*) tcp_listening "" "${r#tcp:}" ;;
		cm:*) cm_listening "${r#cm:}" ;;
		esac && return 0
		[ "$SECONDS" -ge "$end" ] && return 1
		sleep 0.2
	done
	return 1
}

# run_srv NAME PORT KEY: this guest runs the tool server of one run.
run_srv() {
	local name=$1 port=$2 key=$3 pid src=-1 why='' mark before=/tmp/ctr_before
	LOG=/tmp/srv.log LABEL_SIDE=server
	tool "$name" "$port" srv "$ME"
	counters "$before"
	mark=$(kmsg_mark)
	: >"$LOG"
	if [ "$SECONDS" -ge "$BUDGET" ]; then
		send "fail $name not run: time budget ($BUDGET s) used up"
		send "sres $name -1 not-run"
		recv 60 && [ "${M[0]:-} ${M[1]:-}" = "verdict $name" ] && V[$key]=${M[2]}
		return
	fi
	timeout -k 5 $((CLI_T + READY_T + 60)) "${CMD[@]}" >"$LOG" 2>&1 &
	pid=$!
	if ready_local "$pid" "$READY"; then
		send "ready $name"
	else
		why="tool server not listening ($READY) within $READY_T s"
		kill -0 "$pid" 2>/dev/null || why="tool server exited before listening"
		send "fail $name $why"
	fi
	# The client runs (or gives up) on the other side.
	if [ -z "$why" ] && recv $((CLI_T + 30)); then
		[ "${M[0]:-} ${M[1]:-}" = "cdone $name" ] || LOST="expected cdone $name, got: $MSG"
	fi
	if ! wait_until 30 pid_gone "$pid"; then
		# A hang: the QPs as they are stuck.
		rdma resource show qp link "$DEV/1" 2>&1 | sed "s/^/# $TAG stuck qp: /"
		kill "$pid" 2>/dev/null
		why=${why:-"tool server still running 30 s after the client"}
	fi
	wait "$pid"
	src=$?
	if [ -z "$why" ] && [ "$src" -ne 0 ]; then
		why="server exit $src"
	elif [ -z "$why" ] && [ -n "$CHK" ] && ! eval "$CHK"; then
		why="server output check failed: $CHK"
	fi
	save_log "$key" srv
	send "sres $name $src ${why:-ok}"
	recv 60 && [ "${M[0]:-} ${M[1]:-}" = "verdict $name" ] && V[$key]=${M[2]}
	if [ "${V[$key]:-}" != ok ]; then
		diag "$TAG ran the server of: ${CMD[*]}"
		[ -n "$why" ] && diag "$TAG: $why"
		evidence "$LOG" "$before" "$mark"
	fi
}

# run_cli NAME PORT KEY PAIR: this guest runs the tool client; prints the
# TAP line of the run.
run_cli() {
	local name=$1 port=$2 key=$3 pair=$4 crc=-1 why='' mark before=/tmp/ctr_before
	LOG=/tmp/cli.log LABEL_SIDE=client
	tool "$name" "$port" cli "$PEER"
	counters "$before"
	mark=$(kmsg_mark)
	: >"$LOG"
	if recv $((READY_T + 30)); then
		case "${M[0]:-} ${M[1]:-}" in
		"ready $name")
			timeout -k 5 "$CLI_T" "${CMD[@]}" >"$LOG" 2>&1
			crc=$?
			send "cdone $name $crc"
			;;
		"fail $name") why="peer: ${MSG#fail "$name" }" ;;
		*) LOST="expected ready $name, got: $MSG" ;;
		esac
	fi
	# The server side reports in any case, also after "fail".
	if [ -z "$LOST" ] && recv $((CLI_T + 120)); then
		if [ "${M[0]:-} ${M[1]:-}" != "sres $name" ]; then
			LOST="expected sres $name, got: $MSG"
		elif [ "$crc" -ge 0 ]; then
			[ "${M[3]:-}" = ok ] || why="peer: ${MSG#sres "$name" "${M[2]}" }"
			if [ "$crc" -ne 0 ]; then
				why="client exit $crc${why:+; $why}"
				[ "$crc" -eq 124 ] && why="$why (timed out after $CLI_T s)"
			elif [ -n "$CHK" ] && ! eval "$CHK"; then
				why="client output check failed: $CHK${why:+; $why}"
			fi
		fi
	fi
	save_log "$key" cli
	[ -n "$LOST" ] && why="control channel: $LOST${why:+; $why}"
	if [ -z "$why" ]; then
		V[$key]=ok
		ok "$DESC, $pair"
	elif [ "${why#peer: not run}" != "$why" ]; then
		V[$key]=not-run
		not_ok "$DESC, $pair"
		diag "$why"
	else
		V[$key]=fail
		not_ok "$DESC, $pair"
		diag "$why"
		diag "$TAG ran the client of: ${CMD[*]}"
		evidence "$LOG" "$before" "$mark"
	fi
	send "verdict $name ${V[$key]}"
}

# --- the matrix ---------------------------------------------------------------

declare -A V
SRVDEV=${MODE%-*}0 CLIDEV=${MODE#*-}0	# of the vm-pair server / client guest
P1="srv $SRVDEV@.1/cli $CLIDEV@.2"	# phase 1: the vm-pair server guest serves
P2="srv $CLIDEV@.2/cli $SRVDEV@.1"
port=18515
for mtu in $MTUS; do
	[ -n "$LOST" ] && break
	want=1024
	[ "$mtu" -ge 4200 ] && want=4096
	ip link set "$NETDEV" mtu "$mtu"
	if wait_until 20 eval '[ "$(active_mtu "$DEV")" = "$want" ]'; then
		ok "$TAG: netdev MTU $mtu, active_mtu $want"
	else
		not_ok "$TAG: netdev MTU $mtu, active_mtu $want"
		diag "active_mtu $(active_mtu "$DEV")"
	fi
	IBMTU=$want
	# Both sides have switched before either starts a tool.
	send "mtu $mtu" && recv 60
	[ "$MSG" = "mtu $mtu" ] || LOST=${LOST:-"mtu sync: $MSG"}
	for phase in 1 2; do
		pair=$P1
		[ "$phase" = 2 ] && pair=$P2
		diag "--- MTU $mtu: $pair ---"
		for t in $TESTS; do
			[ -n "$LOST" ] && break
			port=$((port + 1))
			if { [ "$phase" = 1 ] && [ "$SROCE_ROLE" = server ]; } ||
				{ [ "$phase" = 2 ] && [ "$SROCE_ROLE" = client ]; }; then
				run_srv "$t" "$port" "$mtu:$phase:$t"
			else
				run_cli "$t" "$port" "$mtu:$phase:$t" "$pair (MTU $mtu)"
			fi
		done
	done
done
if [ -n "$LOST" ]; then
	not_ok "$TAG: control channel: $LOST"
else
	send "bye" && recv 30
	check "$TAG: both guests finished the matrix" [ "$MSG" = bye ]
fi

if [ "$SROCE_ROLE" = client ]; then
	diag "interop matrix ($MODE, $(uname -r)):"
	for mtu in $MTUS; do
		diag "$(printf '%-14s %-6s %-26s %s' test MTU "$P1" "$P2")"
		for t in $TESTS; do
			diag "$(printf '%-14s %-6s %-26s %s' "$t" "$mtu" \
				"${V[$mtu:1:$t]:-n/a}" "${V[$mtu:2:$t]:-n/a}")"
		done
	done
fi

counters /tmp/ctr_end
diag "$TAG counters at the end: $(awk '$2 != 0 { printf "%s %s ", $1, $2 }' /tmp/ctr_end)"

# --- teardown ---------------------------------------------------------------

exec {IN}<&-
[ "$OUT" != "$IN" ] && exec {OUT}>&-
check "$TAG: delete $DEV" rdma link delete "$DEV"
if [ "$KIND" = sroce ]; then
	check "$TAG: unload sroce" sroce_unload
else
	check "$TAG: unload rdma_rxe" modprobe -r rdma_rxe
fi
tap_done
