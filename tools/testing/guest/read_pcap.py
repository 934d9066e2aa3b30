#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check the RDMA READs in a RoCEv2 capture (tcpdump -w, Ethernet, IPv4,
a clean link) for t_loss.sh:

  read_pcap.py PCAP --chunk N --min-bytes B

A requester asks for a long READ in requests of at most N response PSNs
(sroce_req.c), so its window bounds READ responses in flight.  Per
requester QP (the responses' DestQP), every READ request must:
- ask for at most N path-MTU packets, the path MTU being the payload of
  the READ responses that are not the last of their request;
- start at the PSN where the previous one's responses ended, when it
  continues the same message (its VA where the previous one's ended);
- be answered by exactly its number of responses, FIRST..LAST or ONLY,
  with consecutive PSNs and DMA length bytes in all.
At least one message must have needed more than one request, and the
requests must have asked for at least B bytes.  Prints one summary line;
exits 1 if any rule is broken."""
import argparse
import struct
import sys

from pcap_roce import roce_packets

RC_READ_REQ = 0x0c
RC_READ_RESP = {0x0d: 'FIRST', 0x0e: 'MIDDLE', 0x0f: 'LAST', 0x10: 'ONLY'}

p = argparse.ArgumentParser()
p.add_argument('pcap')
p.add_argument('--chunk', type=int, required=True)
p.add_argument('--min-bytes', type=int, default=1)
a = p.parse_args()


def packets(path):
    """(source IP, captured BTH on, IB length without ICRC) per RoCEv2
    packet: the capture may cut payloads short, lengths come from IP."""
    for ip, ihl, tot in roce_packets(path):
        if len(ip) >= ihl + 8 + 28:
            yield ip[12:16], ip[ihl + 8:tot], tot - ihl - 8 - 4


reqs = []       # (source, DestQP, PSN, VA, DMA length) in capture order
resps = {}      # requester QPN -> [(PSN, opcode, payload bytes)]
for src, ib, iblen in packets(a.pcap):
    op = ib[0]
    dqpn = int.from_bytes(ib[5:8], 'big')
    psn = int.from_bytes(ib[9:12], 'big')
    if op == RC_READ_REQ:
        va, _, dlen = struct.unpack('!QII', ib[12:28])
        reqs.append((src, dqpn, psn, va, dlen))
    elif op in RC_READ_RESP:
        # FIRST, LAST, ONLY carry an AETH; MIDDLE does not.  The pad
        # count (BTH byte 1) is 0 for the full packets the MTU comes from.
        hl = 12 if op == 0x0e else 16
        pad = (ib[1] >> 4) & 3
        resps.setdefault(dqpn, []).append((psn, op, iblen - hl - pad))

bad = []
mtu = 0
for lst in resps.values():
    for _, op, n in lst:
        if op in (0x0d, 0x0e):
            mtu = max(mtu, n)
if not reqs or not mtu:
    print('read_pcap: no READ requests or no full READ responses captured')
    sys.exit(1)

# The requests a QP sent, keyed by the QP they went to: the responses
# come back to the requester's QP, so match them in order, per pair.
by_dst = {}
for r in reqs:
    by_dst.setdefault((r[0], r[1]), []).append(r)
multi = total = 0
# A request stream and its response stream start at the same PSN.
pairs = list(by_dst.values())
streams = list(resps.values())
if len(pairs) != len(streams):
    bad.append('%d request streams, %d response streams'
               % (len(pairs), len(streams)))
for rq in pairs:
    st = [s for s in streams if s and s[0][0] == rq[0][2]]
    if len(st) != 1:
        bad.append('no single response stream for requests from PSN %#x'
                   % rq[0][2])
        continue
    it = iter(st[0])
    prev = None
    for src, dqpn, psn, va, dlen in rq:
        total += dlen
        n = max(1, -(-dlen // mtu))
        if n > a.chunk:
            bad.append('request at PSN %#x asks for %d packets (%d bytes)'
                       % (psn, n, dlen))
        if prev and va == prev[0]:
            multi += 1
            if psn != prev[1]:
                bad.append('request at PSN %#x continues one that ended '
                           'at PSN %#x' % (psn, prev[1]))
        prev = (va + dlen, (psn + n) & 0xffffff)
        got = 0
        for i in range(n):
            r = next(it, None)
            if r is None:
                bad.append('request at PSN %#x: %d of %d responses'
                           % (psn, i, n))
                break
            rpsn, op, ln = r
            want = ('ONLY' if n == 1 else 'FIRST' if i == 0 else
                    'LAST' if i == n - 1 else 'MIDDLE')
            if rpsn != (psn + i) & 0xffffff or RC_READ_RESP[op] != want:
                bad.append('request at PSN %#x: response %d is %s at %#x'
                           % (psn, i, RC_READ_RESP[op], rpsn))
                break
            got += ln
        else:
            if got != dlen:
                bad.append('request at PSN %#x: %d bytes, asked %d'
                           % (psn, got, dlen))
    if next(it, None) is not None:
        bad.append('responses beyond the requests from PSN %#x' % rq[0][2])
if not multi:
    bad.append('no message took more than one request')
if total < a.min_bytes:
    bad.append('%d bytes asked for, want >= %d' % (total, a.min_bytes))
print('read_pcap: %d READ requests (%d continuing a message), %d bytes, '
      'mtu %d, chunk <= %d packets: %s'
      % (len(reqs), multi, total, mtu, a.chunk,
         'ok' if not bad else '; '.join(bad[:5])))
sys.exit(1 if bad else 0)
