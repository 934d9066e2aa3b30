#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Send hand-built RoCEv2 packets over a raw IPv4 socket, for tests of
sroce's ingress validation.  The ICRC (IBTA Annex A17.9.1) is computed here
independently of sroce: CRC-32 (zlib's) over 8 bytes of 0xff, the IPv4
header with TOS/TTL/checksum set to 0xff, the UDP header with checksum
0xffff, the BTH with byte 4 set to 0xff, and the rest; sent LSB first.
Addresses must be the test networks' (198.18.0.0/15)."""
import argparse
import ipaddress
import socket
import struct
import zlib

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
bth = struct.pack('!BBHB3sB3s', a.opcode, pad << 4, 0xffff, 0,
                  a.qpn.to_bytes(3, 'big'), 0x80, a.psn.to_bytes(3, 'big'))
ib = bth + bytes.fromhex(a.ext) + payload + bytes(pad)
udp_len = 8 + len(ib) + 4
udp = struct.pack('!HHHH', 49152, 4791, udp_len, 0)
tot = 20 + udp_len
iph = struct.pack('!BBHHHBBH4s4s', 0x45, 0, tot, 0x1234, 0x4000, 64, 17, 0,
                  socket.inet_aton(a.src), socket.inet_aton(a.dst))

masked = bytearray(iph)
masked[1] = 0xff
masked[8] = 0xff
masked[10:12] = b'\xff\xff'
mudp = bytearray(udp)
mudp[6:8] = b'\xff\xff'
mib = bytearray(ib)
mib[4] = 0xff
icrc = zlib.crc32(b'\xff' * 8 + bytes(masked) + bytes(mudp) + bytes(mib))
if a.bad_icrc:
    icrc ^= 1
pkt = iph + udp + ib + struct.pack('<I', icrc)

s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
for _ in range(a.count):
    s.sendto(pkt, (a.dst, 0))
