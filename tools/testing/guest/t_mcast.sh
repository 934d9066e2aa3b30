#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# UD multicast between two sroce devices in two network namespaces linked
# by a veth pair:
#  - the device attributes advertise multicast;
#  - ibv_attach_mcast/ibv_detach_mcast directly (a small verbs program
#    built here): the netdev joins the IP group on the first attach and
#    leaves it on the last detach or QP destroy, limits are enforced;
#  - rdmacm-utils' mckey over IPv4 and IPv6 groups: a receiver in nb gets
#    every message a sender in na sends to the group, the group shows in
#    `ip maddr` while joined and not after, and the hw counters count it.
#
# Groups: 239.198.18.0/24 (IPv4 administratively scoped, RFC 2365) and
# ff05::db8:* (IPv6 site-local scope); they never leave the guest's veth.
set -u
. "$(dirname "$0")/lib.sh"

G4=239.198.18.1
G6=ff05::db8:1
NMSG=50

sroce_load || { not_ok "load sroce"; tap_done; exit 1; }
modprobe rdma_ucm
ip netns add na
ip netns add nb
ip link add name va type veth peer name vb
ip link set va netns na
ip link set vb netns nb
ip -n na link set va up
ip -n nb link set vb up
ip -n na link set lo up
ip -n nb link set lo up
ip -n na addr add 198.18.0.1/24 dev va
ip -n nb addr add 198.18.0.2/24 dev vb
ip -n na -6 addr add 2001:db8::1/64 dev va nodad
ip -n nb -6 addr add 2001:db8::2/64 dev vb nodad
ip netns exec na rdma link add sroce_a type sroce netdev va
ip netns exec nb rdma link add sroce_b type sroce netdev vb
wait_for 20 gid_present sroce_a 0000:0000:0000:0000:0000:ffff:c612:0001
wait_for 20 gid_present sroce_b 0000:0000:0000:0000:0000:ffff:c612:0002
wait_for 20 gid_present sroce_a 2001:0db8:0000:0000:0000:0000:0000:0001
wait_for 20 gid_present sroce_b 2001:0db8:0000:0000:0000:0000:0000:0002

attrs=$(ibv_devinfo -v -d sroce_b)
diag "$(grep -E 'max_(total_)?mcast' <<<"$attrs" | tr -s '\t ' ' ' | tr '\n' ';')"
check "device attributes: max_mcast_grp, max_mcast_qp_attach, max_total_mcast_qp_attach > 0" \
	eval 'grep -Eq "max_mcast_grp:[[:space:]]+[1-9]" <<<"$attrs" &&
	      grep -Eq "max_mcast_qp_attach:[[:space:]]+[1-9]" <<<"$attrs" &&
	      grep -Eq "max_total_mcast_qp_attach:[[:space:]]+[1-9]" <<<"$attrs"'

# maddr_has NS DEV GROUP: is GROUP in DEV's multicast list in NS?
maddr_has() {
	ip -n "$1" maddr show dev "$2" | grep -qw -- "$3"
}

# mc_users NS DEV GROUP: users of GROUP on DEV, from /proc/net/igmp (IPv4)
# or /proc/net/igmp6; 0 if not joined.  rdma_cm's own join is one user,
# the membership of sroce's UDP socket another.
mc_users() {
	local n
	if [ "${3#*:}" = "$3" ]; then
		n=$(ip netns exec "$1" awk -v d="$2" \
			-v g="$(printf '%02X' $(tr . ' ' <<<"$3" | awk '{print $4, $3, $2, $1}'))" '
			/^[0-9]/ { dev = $2; next }
			dev == d && $1 == g { print $2; exit }' /proc/net/igmp)
	else
		n=$(ip netns exec "$1" awk -v d="$2" \
			-v g="$(python3 -c 'import ipaddress, sys
print(ipaddress.ip_address(sys.argv[1]).exploded.replace(":", ""))' "$3")" '
			$2 == d && $3 == g { print $4; exit }' /proc/net/igmp6)
	fi
	echo "${n:-0}"
}

# --- Direct verbs: attach/detach without rdma_cm (which joins on its own).
MC=/tmp/mcattach
cat >/tmp/mcattach.c <<'EOF'
/* mcattach DEV NETDEV: exercise ibv_attach_mcast/ibv_detach_mcast. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

static const char *netdev;

/* Is GROUP in NETDEV's multicast list (ip maddr)? */
static int joined(const char *group)
{
	char cmd[256];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof(cmd),
		 "ip maddr show dev %s | grep -cw -- '%s'", netdev, group);
	f = popen(cmd, "r");
	if (!f || fscanf(f, "%d", &n) != 1)
		n = -1;
	if (f)
		pclose(f);
	return n;
}

static void gid_of(const char *group, union ibv_gid *gid)
{
	char buf[64];

	if (strchr(group, ':'))
		snprintf(buf, sizeof(buf), "%s", group);
	else
		snprintf(buf, sizeof(buf), "::ffff:%s", group);
	if (inet_pton(AF_INET6, buf, gid->raw) != 1)
		exit(2);
}

static struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (!qp) {
		perror("ibv_create_qp");
		exit(2);
	}
	return qp;
}

#define STEP(name, expr, group) do {					\
	int rc_ = (expr);						\
	printf("%s rc=%d joined=%d\n", name, rc_, joined(group));	\
} while (0)

int main(int argc, char **argv)
{
	const char *g4 = "239.198.18.2", *g6 = "ff05::db8:2";
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_qp *q1, *q2, *q3;
	union ibv_gid gid, gid6, bad;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i, n;

	if (argc < 3)
		return 2;
	netdev = argv[2];
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		return 2;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq)
		return 2;
	q1 = ud_qp(pd, cq);
	q2 = ud_qp(pd, cq);
	gid_of(g4, &gid);
	gid_of(g6, &gid6);
	gid_of("198.18.0.9", &bad);

	STEP("before", 0, g4);
	STEP("attach_q1", ibv_attach_mcast(q1, &gid, 0), g4);
	STEP("attach_q1_again", ibv_attach_mcast(q1, &gid, 0), g4);
	STEP("attach_q2", ibv_attach_mcast(q2, &gid, 0), g4);
	STEP("detach_q1", ibv_detach_mcast(q1, &gid, 0), g4);
	STEP("detach_q1_again", ibv_detach_mcast(q1, &gid, 0) ? 1 : 0, g4);
	STEP("detach_q2", ibv_detach_mcast(q2, &gid, 0), g4);
	STEP("attach_unicast", ibv_attach_mcast(q1, &bad, 0) ? 1 : 0, g4);
	STEP("attach6_q1", ibv_attach_mcast(q1, &gid6, 0), g6);
	STEP("detach6_q1", ibv_detach_mcast(q1, &gid6, 0), g6);
	/* uverbs refuses to destroy an attached QP (EBUSY). */
	q3 = ud_qp(pd, cq);
	STEP("attach_q3", ibv_attach_mcast(q3, &gid, 0), g4);
	STEP("destroy_q3", ibv_destroy_qp(q3), g4);
	STEP("detach_q3", ibv_detach_mcast(q3, &gid, 0), g4);
	ibv_destroy_qp(q3);
	/* Exit with an attached QP: the uverbs cleanup detaches it. */
	if (argc > 3) {
		gid_of(argv[3], &gid);
		STEP("attach_exit", ibv_attach_mcast(q1, &gid, 0), argv[3]);
		return 0;
	}

	/* Fill: how many IPv4 groups one QP can join (239.198.19.x/20.x). */
	for (n = 0; n < 1000; n++) {
		char g[32];

		snprintf(g, sizeof(g), "239.198.%d.%d", 19 + n / 250,
			 1 + n % 250);
		gid_of(g, &gid);
		if (ibv_attach_mcast(q1, &gid, 0))
			break;
	}
	printf("fill groups=%d errno=%d\n", n, errno);
	for (i = 0; i < n; i++) {
		char g[32];

		snprintf(g, sizeof(g), "239.198.%d.%d", 19 + i / 250,
			 1 + i % 250);
		gid_of(g, &gid);
		ibv_detach_mcast(q1, &gid, 0);
	}
	ibv_destroy_qp(q1);
	ibv_destroy_qp(q2);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
EOF
if gcc -O1 -Wall -o "$MC" /tmp/mcattach.c -libverbs 2>/tmp/mcattach.err; then
	out=$(ip netns exec nb timeout 60 "$MC" sroce_b vb 2>&1)
	sed 's/^/# /' <<<"$out"
	step() { grep -qx "$1 rc=$2 joined=$3" <<<"$out"; }
	check "not joined before attach" step before 0 0
	check "first attach joins the IP group on vb" step attach_q1 0 1
	check "attaching the same QP again succeeds" step attach_q1_again 0 1
	check "second QP attaches to the same group" step attach_q2 0 1
	check "group stays joined while a QP is attached" step detach_q1 0 1
	check "detaching a QP that is not attached fails" step detach_q1_again 1 1
	check "last detach leaves the IP group" step detach_q2 0 0
	check "attaching to a unicast GID fails" step attach_unicast 1 0
	check "IPv6 group: attach joins (MLD), detach leaves" \
		eval 'step attach6_q1 0 1 && step detach6_q1 0 0'
	check "QP destroy refused while attached (uverbs EBUSY), detach leaves" \
		eval 'step attach_q3 0 1 && step destroy_q3 16 1 && step detach_q3 0 0'
	fill=$(sed -n 's/^fill groups=\([0-9]*\).*/\1/p' <<<"$out")
	check "one QP joins several IPv4 groups (got ${fill:-?}, igmp_max_memberships $(ip netns exec nb sysctl -n net.ipv4.igmp_max_memberships))" \
		test "${fill:-0}" -ge 10
	# With the per-socket IGMP limit raised, the device's own limit rules.
	ip netns exec nb sysctl -qw net.ipv4.igmp_max_memberships=1000
	out=$(ip netns exec nb timeout 120 "$MC" sroce_b vb 2>&1)
	fill=$(sed -n 's/^fill groups=\([0-9]*\) errno=\([0-9]*\).*/\1 \2/p' <<<"$out")
	max=$(sed -n 's/.*max_mcast_grp:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$attrs")
	check "attach stops at max_mcast_grp ($max) with ENOMEM (got: $fill)" \
		test "$fill" = "$max 12"
	out=$(ip netns exec nb timeout 60 "$MC" sroce_b vb 239.198.18.3 2>&1)
	sed -n 's/^attach_exit/# &/p' <<<"$out"
	check "process exits with a QP attached: the group is left" \
		eval 'step attach_exit 0 1 && wait_for 10 eval "! maddr_has nb vb 239.198.18.3"'
	check "no group left on vb after the verbs test" \
		eval '! ip -n nb maddr show dev vb | grep -q "239.198.1[89]\|239.198.2[0-9]"'
else
	not_ok "build the attach/detach helper"
	sed 's/^/# /' /tmp/mcattach.err
fi

# --- mckey: one receiver in nb, one sender in na.
# mckey_run GROUP RX_BIND TX_BIND MAPPED_GROUP_IN_MADDR
mckey_run() {
	local grp=$1 rxb=$2 txb=$3 srv out rc src
	ip netns exec nb timeout 60 mckey -m "$grp" -b "$rxb" -C $NMSG \
		>/tmp/mck_rx.log 2>&1 &
	srv=$!
	if ! wait_for 60 maddr_has nb vb "$grp"; then
		diag "receiver never joined: $(cat /tmp/mck_rx.log | tr '\n' ' ')"
		kill "$srv" 2>/dev/null
		wait "$srv"
		return 1
	fi
	joined_ok=1
	# rdma_cm joins first; sroce's own membership follows ibv_attach_mcast,
	# after which the receiver's QP has its receives posted.
	wait_for 30 eval '[ "$(mc_users nb vb "$grp")" -ge 2 ]'
	users=$(mc_users nb vb "$grp")
	out=$(ip netns exec na timeout 60 mckey -m "$grp" -b "$txb" -s -C $NMSG 2>&1)
	rc=$?
	wait "$srv"
	src=$?
	diag "sender: $(tr '\n' ' ' <<<"$out")"
	diag "receiver: $(tr '\n' ' ' </tmp/mck_rx.log)"
	[ $rc -eq 0 ] && [ $src -eq 0 ] &&
		grep -q "data transfers complete" /tmp/mck_rx.log &&
		grep -q "receiving data transfers" /tmp/mck_rx.log
}

b_deliv=$(hw_stat sroce_b rx_delivered)
b_rx=$(hw_stat sroce_b rx_packets)
joined_ok=0 users=
check "mckey IPv4 $G4: receiver in nb gets all $NMSG messages from na" \
	mckey_run $G4 198.18.0.2 198.18.0.1
check "IPv4 group listed in 'ip maddr' of vb while joined" test $joined_ok = 1
check "IGMP: $G4 on vb has $users users while joined (rdma_cm's + sroce's socket)" \
	test "${users:-0}" -ge 2
check "IPv4 group gone from 'ip maddr' of vb after the receiver left" \
	wait_for 20 eval '! maddr_has nb vb $G4'
d=$(($(hw_stat sroce_b rx_delivered) - b_deliv))
diag "sroce_b: rx_packets +$(($(hw_stat sroce_b rx_packets) - b_rx)), rx_delivered +$d, rx_drop_no_qp $(hw_stat sroce_b rx_drop_no_qp), rx_drop_no_recv $(hw_stat sroce_b rx_drop_no_recv)"
check "hw counter rx_delivered at sroce_b counted >= $NMSG multicast messages" \
	test "$d" -ge $NMSG

# IPv6 groups cannot be tested with mckey: the kernel's rdma_cm refuses
# IPv6 multicast joins on RoCEv2 ports (cma_iboe_join_multicast() returns
# -ENOTSUPP, "Unknown error 524"); the verbs test above covers MLD.
out=$(ip netns exec nb timeout 30 mckey -m $G6 -b 2001:db8::2 -C 1 2>&1)
diag "mckey IPv6 $G6 (rdma_cm limitation): $(tr '\n' ' ' <<<"$out")"

# mckey_pair QPS USERS TX_NS TX_BIND LOG: a receiver with QPS QPs on
# sroce_b, started once vb's group has USERS users, and a sender in TX_NS
# bound to TX_BIND; sets rc/src (exit codes) and d (rx_delivered delta).
mckey_pair() {
	local b_deliv srv
	b_deliv=$(hw_stat sroce_b rx_delivered)
	ip netns exec nb timeout 60 mckey -m $G4 -b 198.18.0.2 -c "$1" -C $NMSG \
		>"$5" 2>&1 &
	srv=$!
	wait_for 60 eval '[ "$(mc_users nb vb $G4)" -ge '"$2"' ]'
	sleep 1
	out=$(ip netns exec "$3" timeout 60 mckey -m $G4 -b "$4" -s -C $NMSG 2>&1)
	rc=$?
	wait "$srv"
	src=$?
	d=$(($(hw_stat sroce_b rx_delivered) - b_deliv))
}

# Two receiving QPs on one device (mckey -c 2): each gets its own copy.
mckey_pair 2 3 na 198.18.0.1 /tmp/mck_rx2.log
diag "two QPs: receiver: $(tr '\n' ' ' </tmp/mck_rx2.log); delivered +$d"
check "two QPs attached on sroce_b each get every message (delivered >= $((2 * NMSG)))" \
	eval '[ $rc -eq 0 ] && [ $src -eq 0 ] && [ $d -ge $((2 * NMSG)) ] &&
	      grep -q "data transfers complete" /tmp/mck_rx2.log'

# Loopback: receiver and sender on the same device.  The IP layer loops
# the sender's packet back (multicast loopback is on for sroce's socket),
# and it reaches the receiving QP of the sending device; the sender's own
# QP is attached too and, having no receive posted, drops its copy.
b_norecv=$(hw_stat sroce_b rx_drop_no_recv)
mckey_pair 1 2 nb 198.18.0.2 /tmp/mck_rx3.log
nr=$(($(hw_stat sroce_b rx_drop_no_recv) - b_norecv))
diag "loopback: receiver: $(tr '\n' ' ' </tmp/mck_rx3.log); delivered +$d, rx_drop_no_recv +$nr"
check "mckey on one device: the receiver gets all $NMSG messages its own device sent" \
	eval '[ $rc -eq 0 ] && [ $src -eq 0 ] && [ $d -ge $NMSG ] &&
	      grep -q "data transfers complete" /tmp/mck_rx3.log'
check "the sending QP's own copy is dropped for lack of a receive and counted" \
	test "$nr" -ge $NMSG

ip netns exec na rdma link delete sroce_a
ip netns exec nb rdma link delete sroce_b
check "module unloads after multicast traffic" sroce_unload
ip netns del na
ip netns del nb
tap_done
