#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A third host's attack on a live RC connection, for t_spoof.sh:

  spoof_attack.py --if IF --a ADDR_A --b ADDR_B --me ADDR_C
                  [--alt ADDR_B2] --round ROUND [--count N] [--seed S]

Runs in the attacker's namespace, whose interface IF sits on a segment
that floods every frame to it (a bridge that learns no addresses).  It
watches the connection between A (the requester: the client of
sroce-verify) and B until it knows both QPNs, the next PSN B expects, the
PSNs A has in flight, the R_Keys and addresses A's WRITEs and READs use,
and the MAC addresses; then it sends N packets of ROUND, each with a valid
ICRC, while the connection runs:

  req    requests into B's QP at the PSN B expects (SEND, WRITE with A's
         R_Key and address, READ, WRITE FIRST, FETCH_ADD) from ADDR_C
  resp   ACKs, NAKs (PSN sequence error, RNR, remote access error, invalid
         request, remote operational error), READ responses and atomic
         ACKs into A's QP at PSNs A has in flight, from ADDR_C
  cnp    CNPs to A's QP from ADDR_C, in bursts
  pkey   the requests (from ADDR_A), responses and CNPs (from ADDR_B) with
         P_Keys other than 0xffff and 0x7fff
  dst    the requests from ADDR_A, to ADDR_B2 (another address of B's)
  mixed  all of the above, in turn (the IPv6 round)

The capture skips the middle packets of messages (in the kernel: a
socket filter), so that it keeps up with the connection.  Requests go
when A has been quiet for --idle seconds (B then expects exactly the PSN
after A's last request), responses right after A sent a request, at its
PSNs (the caller delays the frames to B, in order: the attacker is nearer
to A than B is, and A's requests stay in flight for a while).

What sroce must do with them, the caller checks.  Prints, as its last
line: "result qpn_a=.. qpn_b=.. a_addr=N a_cnp=N a_pkey=N b_addr=N
b_pkey=N sniffed=N hdr_only=N icrc_bad=N mtu=N": how many packets went to
each device that only a check of the source or destination address
(addr) or of the P_Key (pkey) can tell from the peer's, how many of A's
were CNPs, how many RoCE packets of the connection it captured, how many
of those had no payload, and how many of these an ICRC other than
roce_pkt.icrc() computes (0, or the attacker's packets would prove
nothing).  Packets with a payload are left out: the capture cuts them
short, and sroce sends payloads from the user's pages, which the
application may rewrite once B has taken a packet, before a capture
reads it."""
import argparse
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from roce_pkt import (CNP, OP, RESPONSES, SYN_ACK, SYN_NAK_ACCESS,  # noqa
                      SYN_NAK_INV, SYN_NAK_OP, SYN_NAK_SEQ, SYN_RNR,
                      EthSender, frame_ip, ib, icrc_ok, ip_packet, parse,
                      sniffer)

PACKET_OUTGOING = 4
WRONG_PKEYS = (0x0000, 0x1234, 0x7ffe, 0xfffe, 0x8000, 0xbeef, 0x7f7f,
               0x8001)
REQ_KINDS = ('send', 'write', 'read', 'write_first', 'fetch_add')
RESP_KINDS = ('nak_access', 'read_resp', 'ack', 'nak_inv', 'nak_seq',
              'read_resp', 'rnr', 'nak_op', 'atomic_ack')

p = argparse.ArgumentParser()
p.add_argument('--if', dest='ifname', required=True)
p.add_argument('--a', required=True)
p.add_argument('--b', required=True)
p.add_argument('--me', required=True)
p.add_argument('--alt')
p.add_argument('--round', required=True,
               choices=('req', 'resp', 'cnp', 'pkey', 'dst', 'mixed'))
p.add_argument('--count', type=int, default=60)
p.add_argument('--seed', type=int, default=1)
p.add_argument('--idle', type=float, default=0.03,
               help='seconds A must be quiet before a request goes')
p.add_argument('--wait', type=float, default=40,
               help='seconds to wait for the connection')
a = p.parse_args()
rnd = random.Random(a.seed)

# What the attacker knows.
st = {'qpn_a': None, 'qpn_b': None, 'next_b': None, 'last': None,
      'read': None, 'write': None, 'mtu': 0, 'req_seen': 0}
macs = {}
sniffed = hdr_only = icrc_bad = 0


def learn(fr, pkttype):
    """Take in one captured frame."""
    global sniffed, hdr_only, icrc_bad
    x = frame_ip(fr)
    if not x or pkttype == PACKET_OUTGOING:
        return
    mac, ip = x
    pk = parse(ip, check_icrc=False)
    if not pk or pk['opcode'] == CNP:
        return
    if pk['src'] in (a.a, a.b):
        macs[pk['src']] = mac
    if {pk['src'], pk['dst']} != {a.a, a.b}:
        return
    sniffed += 1
    op = pk['opcode'] & 0x1f
    # Packets with a payload come cut short (see below); and a payload
    # sroce sends from the user's pages (zero copy) may change once B has
    # taken the packet, before this capture reads it.
    if not pk.get('payload_len') and len(ip) >= pk['len']:
        hdr_only += 1
        icrc_bad += not icrc_ok(ip[:pk['len']])
    if pk['src'] == a.b:
        st['qpn_a'] = pk['dqpn']
        return
    st['qpn_b'] = pk['dqpn']
    if op in RESPONSES:
        return
    # A request of A's: B expects the next PSN (a READ takes one per
    # response packet), and A waits for its answer.
    n = 1
    if op in (OP['WRITE_FIRST'], OP['WRITE_MIDDLE'], OP['SEND_FIRST'],
              OP['SEND_MIDDLE']):
        st['mtu'] = max(st['mtu'], pk['payload_len'])
    if op == OP['READ_REQ']:
        mtu = st['mtu'] or 1024
        n = max(1, -(-pk['dlen'] // mtu))
        st['read'] = (pk['va'], pk['rkey'], pk['psn'], n, pk['dlen'])
    elif 'rkey' in pk:
        st['write'] = (pk['va'], pk['rkey'])
    st['next_b'] = (pk['psn'] + n) & 0xffffff
    st['last'] = (pk['psn'], n, op)
    st['req_seen'] += 1


T0 = time.time()
# The middle packets of messages (most of them) tell nothing new: the
# kernel keeps them away, and cuts the others after the headers.
sn = sniffer(a.ifname, snap=128,
             skip=(OP['SEND_MIDDLE'], OP['WRITE_MIDDLE'],
                   OP['READ_RESP_MIDDLE']))
# Room for every frame of a busy second: a frame missed is a PSN missed.
sn.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33),
              32 << 20)


sn.setsockopt(socket.SOL_SOCKET, 35, 1)  # SO_TIMESTAMPNS
lags = []       # how old a request was when the attacker answered it


def recv():
    """Take in the next frame captured (socket.timeout, BlockingIOError
    when none comes); True when it was a request of A's."""
    fr, anc, _, addr = sn.recvmsg(2048, 64)
    before = st['req_seen']
    learn(fr, addr[2])
    if st['req_seen'] == before:
        return False
    for lvl, typ, data in anc:
        if lvl == socket.SOL_SOCKET and typ == 35 and len(data) >= 16:
            sec, nsec = struct.unpack('qq', data[:16])
            st['req_at'] = sec + nsec / 1e9
    return True


def drain():
    """Take in every frame captured so far (for a second at most): what
    comes next is new."""
    end = time.time() + 1
    sn.settimeout(0)
    while time.time() < end:
        try:
            recv()
        except (socket.timeout, BlockingIOError):
            return


def pump(secs, want=None):
    """Capture.  want=None: for @secs.  want='req': until a request of
    A's comes (True: A has it in flight) or @secs pass (False).
    want='idle': until no request of A's came for @secs (True: B expects
    the PSN captured last), giving up after 2 s (False)."""
    start = time.time()
    end = start + secs
    while True:
        now = time.time()
        if want == 'idle' and now - start > 2:
            return False
        if now >= end:
            return want == 'idle'
        sn.settimeout(max(end - now, 0.001))
        try:
            if not recv():
                continue
        except (socket.timeout, BlockingIOError):
            continue
        if want == 'req':
            return True
        if want == 'idle':
            end = time.time() + secs


end = time.time() + a.wait
while time.time() < end and not (
        st['qpn_a'] is not None and st['qpn_b'] is not None and
        st['next_b'] is not None and a.a in macs and a.b in macs and
        st['write'] and st['read']):
    pump(0.1)
if st['qpn_a'] is None or st['qpn_b'] is None or st['next_b'] is None:
    print('no connection seen: %s' % st)
    print('result none')
    sys.exit(1)
print('# connection (after %.1f s): A %s QP %#x, B %s QP %#x, B expects '
      'PSN %#x, WRITE to %s, READ from %s, MTU %d' % (
          time.time() - T0, a.a, st['qpn_a'], a.b, st['qpn_b'],
          st['next_b'], st['write'], st['read'], st['mtu']))
if a.alt:
    macs[a.alt] = macs[a.b]
tx = EthSender(a.ifname, macs)
sent = {'a_addr': 0, 'a_pkey': 0, 'b_addr': 0, 'b_pkey': 0, 'a_cnp': 0}
garbage = bytes(rnd.randrange(256) for _ in range(4096))


def request(kind, pkey):
    """A request B would take from A, at the PSN B expects."""
    wva, wkey = st['write'] or (0, 0)
    psn, mtu = st['next_b'], st['mtu'] or 1024
    kw = {'pkey': pkey, 'ack': True}
    if kind == 'send':
        return ib(OP['SEND_ONLY'], st['qpn_b'], psn, garbage[:64], **kw)
    if kind == 'write':
        return ib(OP['WRITE_ONLY'], st['qpn_b'], psn, garbage[:64],
                  va=wva, rkey=wkey, dlen=64, **kw)
    if kind == 'read':
        rva, rkey = (st['read'] or (0, 0))[:2]
        return ib(OP['READ_REQ'], st['qpn_b'], psn, va=rva, rkey=rkey,
                  dlen=64, **kw)
    if kind == 'write_first':
        return ib(OP['WRITE_FIRST'], st['qpn_b'], psn, garbage[:mtu],
                  va=wva, rkey=wkey, dlen=2 * mtu, **kw)
    return ib(OP['FETCH_ADD'], st['qpn_b'], psn, va=wva & ~7, rkey=wkey,
              swap_add=1 << 40, **kw)


def response(kind, pkey, i):
    """A response A would take from B, at a PSN A has in flight: its
    latest request's (@i = 0), the one before (1) or after it (2); after
    a READ, its first response's and its last's, READ responses at its
    first (@i = 0) or a random one of its PSNs."""
    psn, n, op = st['last'] or (0, 1, 0)
    if op == OP['READ_REQ']:
        psn = (psn + (0, n - 1, n // 2)[i % 3]) & 0xffffff
    else:
        psn = (psn + (0, -1, 1)[i % 3]) & 0xffffff
    mtu = st['mtu'] or 1024
    kw = {'pkey': pkey, 'msn': rnd.randrange(1 << 24)}
    syn = {'ack': SYN_ACK, 'nak_seq': SYN_NAK_SEQ, 'rnr': SYN_RNR | 14,
           'nak_access': SYN_NAK_ACCESS, 'nak_inv': SYN_NAK_INV,
           'nak_op': SYN_NAK_OP}
    if kind in syn:
        return ib(OP['ACK'], st['qpn_a'], psn, syndrome=syn[kind], **kw)
    if kind == 'atomic_ack':
        return ib(OP['ATOMIC_ACK'], st['qpn_a'], psn, syndrome=SYN_ACK,
                  orig=1 << 50, **kw)
    _, _, rpsn, n, dlen = st['read'] or (0, 0, psn, 1, 64)
    k = 0 if i == 0 else rnd.randrange(n)
    psn = (rpsn + k) & 0xffffff
    if n == 1:
        return ib(OP['READ_RESP_ONLY'], st['qpn_a'], psn, garbage[:dlen],
                  syndrome=SYN_ACK, **kw)
    if k == n - 1:
        return ib(OP['READ_RESP_LAST'], st['qpn_a'], psn,
                  garbage[:dlen - k * mtu], syndrome=SYN_ACK, **kw)
    if k == 0:
        return ib(OP['READ_RESP_FIRST'], st['qpn_a'], psn, garbage[:mtu],
                  syndrome=SYN_ACK, **kw)
    return ib(OP['READ_RESP_MIDDLE'], st['qpn_a'], psn, garbage[:mtu],
              **kw)


def cnp(pkey):
    return ib(CNP, st['qpn_a'], 0, pkey=pkey, becn=True)


def attacks():
    """The round's packets, in turn: (target, kind, spoofed, pkey, alt)."""
    pk = lambda i: WRONG_PKEYS[i % len(WRONG_PKEYS)]  # noqa: E731
    if a.round == 'req':
        lst = [('b', k, False, 0xffff, False) for k in REQ_KINDS]
    elif a.round == 'resp':
        lst = [('a', k, False, 0xffff, False) for k in RESP_KINDS]
    elif a.round == 'cnp':
        lst = [('a', 'cnp', False, 0xffff, False)]
    elif a.round == 'pkey':
        lst = ([('b', k, True, pk(i), False)
                for i, k in enumerate(REQ_KINDS)] +
               [('a', k, True, pk(i + 3), False)
                for i, k in enumerate(RESP_KINDS)] +
               [('a', 'cnp', True, pk(i), False) for i in range(3)])
    elif a.round == 'dst':
        lst = [('b', k, True, 0xffff, True) for k in REQ_KINDS]
    else:
        # Each kind in turn, so that a few dozen packets have them all.
        parts = [[('b', k, False, 0xffff, False) for k in REQ_KINDS],
                 [('a', k, False, 0xffff, False) for k in RESP_KINDS],
                 [('a', 'cnp', False, 0xffff, False)],
                 [('b', k, True, pk(i), False)
                  for i, k in enumerate(REQ_KINDS)],
                 [('a', k, True, pk(i + 1), False)
                  for i, k in enumerate(RESP_KINDS)]]
        lst = [part[i % len(part)] for i in range(9) for part in parts]
    i = 0
    while True:
        yield lst[i % len(lst)]
        i += 1


def send_one(target, kind, spoofed, pkey, alt, i):
    if target == 'b':
        body = request(kind, pkey)
        src, dst = (a.a if spoofed else a.me), (a.alt if alt else a.b)
    else:
        body = cnp(pkey) if kind == 'cnp' else response(kind, pkey, i)
        src, dst = (a.b if spoofed else a.me), a.a
    tx.send(ip_packet(src, dst, body, sport=rnd.randrange(49152, 65536)))
    why = 'pkey' if spoofed and not alt else 'addr'
    sent['%s_%s' % (target, why)] += 1
    sent['a_cnp'] += kind == 'cnp'


# Requests go when A has been quiet for a moment (B then expects exactly
# the PSN after A's last request), responses right after a request of A's
# (A then waits for an answer to it), three PSNs at a time around it; CNPs
# in bursts of 10.
gen = attacks()
n = 0
deadline = time.time() + 30
while n < a.count and time.time() < deadline:
    target, kind, spoofed, pkey, alt = next(gen)
    drain()
    if kind == 'cnp':
        k = 10 if a.round == 'cnp' else 1
        pump(0.03)
    elif target == 'b':
        k = 1
        pump(a.idle, 'idle')
    else:
        k = 3
        pump(0.5, 'req')
    for i in range(min(k, a.count - n)):
        send_one(target, kind, spoofed, pkey, alt, i)
        n += 1
    if target == 'a' and kind != 'cnp' and st.get('req_at'):
        lags.append(time.time() - st['req_at'])
print('# %d packets sent by %.1f s' % (n, time.time() - T0))
if lags:
    lags.sort()
    print('# responses sent %.1f ms (median; %.1f-%.1f) after the request '
          'they answer reached the attacker' % (
              lags[len(lags) // 2] * 1e3, lags[0] * 1e3, lags[-1] * 1e3))
# Let the last ones land before the caller reads the counters.
time.sleep(0.3)
print('result qpn_a=%d qpn_b=%d %s sniffed=%d hdr_only=%d icrc_bad=%d '
      'mtu=%d' % (st['qpn_a'], st['qpn_b'],
                  ' '.join('%s=%d' % kv for kv in sorted(sent.items())),
                  sniffed, hdr_only, icrc_bad, st['mtu']))
