#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check a RoCEv2 capture (tcpdump -w, Ethernet, IPv4) for t_cc.sh:

  cc_pcap.py PCAP --qpns N,N,...

Data packets (any opcode but CNP) must be ECN-capable: ECT(0) as sent,
or CE where the bottleneck marked them.  CNPs (BTH
opcode 0x81, IBTA Annex A17.9.2) must be BTH + 16 reserved zero bytes +
ICRC, with a DestQP from --qpns, ECN not-ECT, and a valid ICRC (computed
by roce_pkt.py, independently of sroce).
Prints one summary line; exits 1 if any packet breaks a rule."""
import argparse
import sys

from pcap_roce import roce_packets
from roce_pkt import icrc

p = argparse.ArgumentParser()
p.add_argument('pcap')
p.add_argument('--qpns', required=True)
a = p.parse_args()
qpns = {int(x, 0) for x in a.qpns.split(',') if x}

data = ect0 = ce = cnps = good_cnps = 0
bad = []
# Data packets may be cut short by the snap length: their IP header and
# BTH opcode are all that is checked.
for ip, ihl, tot in roce_packets(a.pcap):
    udp = ip[ihl:ihl + 8]
    ib = ip[ihl + 8:tot]
    opcode = ib[0]
    ecn = ip[1] & 3
    if opcode != 0x81:
        data += 1
        ect0 += ecn == 2
        ce += ecn == 3
        continue
    if len(ip) < tot:
        bad.append('CNP cut short in the capture')
        continue
    cnps += 1
    dqpn = int.from_bytes(ib[5:8], 'big')
    why = []
    if len(ib) != 12 + 16 + 4:
        why.append('length %d' % len(ib))
    elif any(ib[12:28]):
        why.append('reserved bytes not zero')
    if dqpn not in qpns:
        why.append('DestQP %#x not a sender QP' % dqpn)
    if ecn != 0:
        why.append('ECN %d' % ecn)
    if icrc(ip[:ihl], udp, ib[:-4]) != ib[-4:]:
        why.append('bad ICRC')
    if why:
        bad.append('CNP: ' + ', '.join(why))
    else:
        good_cnps += 1

print('data packets %d (ECT(0) %d, CE %d), CNPs %d (well-formed %d)' %
      (data, ect0, ce, cnps, good_cnps))
for b in bad[:5]:
    print('  ' + b)
ok = data > 0 and ect0 + ce == data and cnps > 0 and good_cnps == cnps
sys.exit(0 if ok else 1)
