#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Send hand-built RoCEv2 packets over a raw IPv4 socket, for tests of
sroce's ingress validation.  The packet and its ICRC come from roce_pkt.py,
independently of sroce.  Addresses must be the test networks'
(198.18.0.0/15)."""
import argparse
import ipaddress
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from roce_pkt import RawSender, bth, ip_packet  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument('--src', required=True)
p.add_argument('--dst', required=True)
p.add_argument('--opcode', type=lambda x: int(x, 0), default=0x04)
p.add_argument('--qpn', type=lambda x: int(x, 0), default=0x11)
p.add_argument('--psn', type=lambda x: int(x, 0), default=1)
p.add_argument('--payload', type=int, default=0, help='payload bytes')
p.add_argument('--ext', default='', help='extension header bytes, hex')
p.add_argument('--count', type=int, default=1)
p.add_argument('--bad-icrc', action='store_true')
a = p.parse_args()

for ip in (a.src, a.dst):
    assert ipaddress.ip_address(ip) in ipaddress.ip_network('198.18.0.0/15'), ip

payload = bytes(i & 0xff for i in range(a.payload))
pad = -len(payload) & 3
ib = (bth(a.opcode, a.qpn, a.psn, pad=pad, ack=True) +
      bytes.fromhex(a.ext) + payload + bytes(pad))
pkt = ip_packet(a.src, a.dst, ib, bad_icrc=a.bad_icrc)
s = RawSender()
for _ in range(a.count):
    s.send(pkt)
