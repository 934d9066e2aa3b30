#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# User verbs through the distro's rdma-core (rxe provider, pyverbs), and
# ingress validation: every malformed RoCEv2 packet is dropped and counted
# by reason; packets with a valid ICRC (built independently by
# roce_inject.py) pass validation.
set -u
. "$(dirname "$0")/lib.sh"

sroce_load || { not_ok "load sroce"; tap_done; exit 1; }
ip netns add peer
veth_pair v0 v1 peer
ip addr add 198.18.0.1/24 dev v0
ip -n peer addr add 198.18.0.2/24 dev v1
ip -6 addr add 2001:db8::1/64 dev v0 nodad
ip -n peer -6 addr add 2001:db8::2/64 dev v1 nodad
rdma link add sroce0 type sroce netdev v0
wait_for 20 gid_present sroce0 0000:0000:0000:0000:0000:ffff:c612:0001

out=$(python3 - <<'PY' 2>&1
from pyverbs.device import Context
from pyverbs.pd import PD
ctx = Context(name='sroce0')
dev = ctx.query_device()
port = ctx.query_port(1)
assert port.state == 4, port.state            # IBV_PORT_ACTIVE
assert port.link_layer == 2, port.link_layer  # IBV_LINK_LAYER_ETHERNET
assert dev.max_pd > 0
pds = [PD(ctx) for _ in range(64)]
for pd in pds:
    pd.close()
gids = [str(ctx.query_gid(1, i)) for i in range(4)]
assert any(g.endswith('ffff:c612:0001') for g in gids), gids
ctx.close()
print('pyverbs ok', gids)
PY
)
diag "$out"
check "pyverbs: open sroce0, query device/port/GIDs, 64 PDs" \
	grep -q 'pyverbs ok' <<<"$out"

out=$(python3 - <<'PY' 2>&1
from pyverbs.device import Context
from pyverbs.cq import CQ, CompChannel
import pyverbs.enums as e
ctx = Context(name='sroce0')
attr = ctx.query_device()
assert attr.max_cq > 0 and attr.max_cqe >= 4096, (attr.max_cq, attr.max_cqe)
# Create, poll (empty), resize and destroy user CQs through the rxe ABI's
# mmap'ed rings.
for n in (1, 64, 4096):
    cq = CQ(ctx, n)
    npolled, wcs = cq.poll(4)
    assert npolled == 0, npolled
    cq.resize(n * 2)
    npolled, wcs = cq.poll(4)
    assert npolled == 0, npolled
    cq.close()
ch = CompChannel(ctx)
cq = CQ(ctx, 16, None, ch)
cq.req_notify()
cq.req_notify(solicited_only=True)
cq.close()
ch.close()
# Limits: too many CQEs is refused with EINVAL, not a crash.
try:
    CQ(ctx, attr.max_cqe + 1)
    raise SystemExit('oversized CQ accepted')
except Exception as ex:
    assert 'Invalid argument' in str(ex) or 'errno: 22' in str(ex), str(ex)
cqs = [CQ(ctx, 32) for _ in range(200)]
for cq in cqs:
    cq.close()
ctx.close()
print('cq ok')
PY
)
diag "$out"
check "pyverbs: user CQs create/poll/resize/notify/destroy; oversize -> EINVAL" \
	grep -q 'cq ok' <<<"$out"

out=$(python3 - <<'PY' 2>&1
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.mr import MR
import pyverbs.enums as e
ctx = Context(name='sroce0')
attr = ctx.query_device()
assert attr.max_mr > 0, attr.max_mr
pd = PD(ctx)
lw = e.IBV_ACCESS_LOCAL_WRITE
full = lw | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC
mrs = []
for size in (1, 4095, 4096, 65537, 4 << 20):
    for acc in (0, lw, full):
        mr = MR(pd, size, acc)
        assert mr.lkey == mr.rkey
        mr.write(b'x' * min(size, 16), min(size, 16))
        mrs.append(mr)
keys = [m.lkey for m in mrs]
assert len(set(k >> 8 for k in keys)) == len(keys), keys
for m in mrs:
    m.close()
# o10-36: remote write/atomic without local write is refused.
for bad in (e.IBV_ACCESS_REMOTE_WRITE, e.IBV_ACCESS_REMOTE_ATOMIC):
    try:
        MR(pd, 4096, bad)
        raise SystemExit('MR with remote access but no local write accepted')
    except Exception as ex:
        assert 'errno: 22' in str(ex) or 'Invalid argument' in str(ex), str(ex)
for _ in range(300):
    MR(pd, 8192, full).close()
pd.close()
ctx.close()
print('mr ok')
PY
)
diag "$out"
check "pyverbs: user MRs of 1 B..4 MiB, unique keys, access rules (o10-36)" \
	grep -q 'mr ok' <<<"$out"

wait_for 20 gid_present sroce0 2001:0db8:0000:0000:0000:0000:0000:0001
out=$(python3 - <<'PY' 2>&1
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.addr import GID, GlobalRoute, AHAttr, AH
ctx = Context(name='sroce0')
pd = PD(ctx)
def gid_index(suffix):
    for i in range(16):
        if str(ctx.query_gid(1, i)).endswith(suffix):
            return i
    raise SystemExit('no GID ending ' + suffix)
v4 = gid_index('ffff:c612:0001')
v6 = gid_index('2001:0db8:0000:0000:0000:0000:0000:0001')
def ah(dgid, sidx, **kw):
    gr = GlobalRoute(dgid=GID(dgid), sgid_index=sidx, **kw)
    return AH(pd, attr=AHAttr(gr=gr, is_global=1, port_num=1))
ahs = []
for _ in range(50):
    ahs.append(ah('0000:0000:0000:0000:0000:ffff:c612:0002', v4,
                  hop_limit=7, traffic_class=0x68, flow_label=0x12345))
    ahs.append(ah('2001:0db8:0000:0000:0000:0000:0000:0002', v6))
for a in ahs:
    a.close()
# IPv4 source with an IPv6 destination (and the reverse) is refused.
for dgid, sidx in (('2001:0db8:0000:0000:0000:0000:0000:0002', v4),
                   ('0000:0000:0000:0000:0000:ffff:c612:0002', v6)):
    try:
        ah(dgid, sidx)
        raise SystemExit('mixed-family AH accepted')
    except Exception as ex:
        assert 'errno: 22' in str(ex) or 'Invalid argument' in str(ex) or \
               'rrno: 22' in str(ex), str(ex)
pd.close()
ctx.close()
print('ah ok')
PY
)
diag "$out"
check "pyverbs: IPv4 and IPv6 AHs; mixed-family AH -> EINVAL" \
	grep -q 'ah ok' <<<"$out"

stat() {
	hw_stat sroce0 "$1"
}

send_udp() {
	ip netns exec peer python3 -c "
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range($2):
    s.sendto(bytes.fromhex('$1'), ('198.18.0.1', 4791))
"
}

inject() {
	ip netns exec peer python3 "$(dirname "$0")/roce_inject.py" \
		--src 198.18.0.2 --dst 198.18.0.1 "$@"
}

names="rx_packets rx_drop_short rx_drop_bad_tver rx_drop_bad_pad
rx_drop_bad_opcode rx_drop_bad_len rx_drop_bad_icrc rx_drop_no_qp"
declare -A base
for n in $names; do base[$n]=$(stat "$n"); done
send_udp 0a0b0c 5				# short
send_udp 0401ffff00000011000000010000000000 7	# TVer 1
send_udp 0430ffff000000110000000100000000 3	# pad 3, no payload
send_udp 0400ffff000000110000000100000000 11	# ICRC all zero
inject --opcode 0x04 --payload 100 --count 13	# SEND ONLY, good ICRC
inject --opcode 0x04 --payload 100 --count 4 --bad-icrc
inject --opcode 0x1f --count 6			# opcode sroce lacks
inject --opcode 0x11 --payload 8 --count 2	# ACK with payload
inject --opcode 0x0a --payload 64 --count 3 \
	--ext 00000000000010000000000100000040	# WRITE ONLY + RETH, good
sleep 1
delta() { echo $(($(stat "$1") - base[$1])); }
check "5 short packets -> rx_drop_short" test "$(delta rx_drop_short)" -eq 5
check "7 TVer=1 packets -> rx_drop_bad_tver" \
	test "$(delta rx_drop_bad_tver)" -eq 7
check "3 bad-pad packets -> rx_drop_bad_pad" test "$(delta rx_drop_bad_pad)" -eq 3
check "6 unknown-opcode packets -> rx_drop_bad_opcode" \
	test "$(delta rx_drop_bad_opcode)" -eq 6
check "2 ACKs with payload -> rx_drop_bad_len" \
	test "$(delta rx_drop_bad_len)" -eq 2
check "11 zero-ICRC + 4 corrupted-ICRC packets -> rx_drop_bad_icrc" \
	test "$(delta rx_drop_bad_icrc)" -eq 15
check "16 valid packets (ICRC verified) for a missing QP -> rx_drop_no_qp" \
	test "$(delta rx_drop_no_qp)" -eq 16
check "rx_packets counted all 54, each in exactly one drop reason" \
	test "$(delta rx_packets)" -eq 54 -a "$(($(delta rx_drop_short) + $(delta rx_drop_bad_tver) + $(delta rx_drop_bad_pad) + $(delta rx_drop_bad_opcode) + $(delta rx_drop_bad_len) + $(delta rx_drop_bad_icrc) + $(delta rx_drop_no_qp)))" -eq 54
for n in $names; do diag "$n +$(delta "$n")"; done

rdma link delete sroce0
sroce_unload
check "module unloads after user verbs use" eval '! sroce_loaded'
ip netns del peer
tap_done
