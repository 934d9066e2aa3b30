# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The RoCEv2 packets of a capture, for the tests' pcap checkers
(cc_pcap.py, read_pcap.py)."""
import struct


def roce_packets(path):
    """Yield (ip, ihl, tot) for each RoCEv2 packet (UDP port 4791 over
    IPv4) of a tcpdump -w capture of an Ethernet link: the IP packet as
    captured (the snap length may cut it short, but it holds at least the
    BTH opcode), its header length and its total length."""
    with open(path, 'rb') as f:
        hdr = f.read(24)
        magic = struct.unpack('<I', hdr[:4])[0]
        endian = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            _, _, caplen, _ = struct.unpack(endian + 'IIII', rec)
            frame = f.read(caplen)
            if len(frame) < 14 or frame[12:14] != b'\x08\x00':
                continue
            ip = frame[14:]
            ihl = (ip[0] & 0xf) * 4
            if ip[9] != 17 or len(ip) < ihl + 9:
                continue
            if struct.unpack('!H', ip[ihl + 2:ihl + 4])[0] != 4791:
                continue
            yield ip, ihl, struct.unpack('!H', ip[2:4])[0]
