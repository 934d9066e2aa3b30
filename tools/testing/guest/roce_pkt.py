# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""RoCEv2 packets built and taken apart by the tests, independently of
sroce: the base and extension transport headers (IBTA vol. 1 9.2-9.4), the
IPv4 or IPv6 and UDP headers around them and the ICRC (Annex A17.9.1), and
the ways to send them from a namespace (a raw IP socket, or an Ethernet
socket on an interface).  Used by roce_inject.py, cc_pcap.py,
spoof_attack.py and peer_fuzz.py.

The ICRC is CRC-32 (zlib's) over 8 bytes of 0xff (the masked LRH RoCEv2
lacks), the IP header with its variant fields set to all ones (IPv4: TOS,
TTL, header checksum; IPv6: traffic class, flow label, hop limit), the UDP
header with its checksum set to 0xffff, the BTH with byte 4 (FECN, BECN,
reserved) set to 0xff, and everything after it up to the ICRC, which is
sent least significant byte first."""
import ctypes
import ipaddress
import socket
import struct
import zlib

ROCE_PORT = 4791

# Opcodes: RC (0x00-0x1d), UC (0x20 + the SEND/WRITE subset), CNP.
OP = {
    'SEND_FIRST': 0x00, 'SEND_MIDDLE': 0x01, 'SEND_LAST': 0x02,
    'SEND_LAST_IMM': 0x03, 'SEND_ONLY': 0x04, 'SEND_ONLY_IMM': 0x05,
    'WRITE_FIRST': 0x06, 'WRITE_MIDDLE': 0x07, 'WRITE_LAST': 0x08,
    'WRITE_LAST_IMM': 0x09, 'WRITE_ONLY': 0x0a, 'WRITE_ONLY_IMM': 0x0b,
    'READ_REQ': 0x0c, 'READ_RESP_FIRST': 0x0d, 'READ_RESP_MIDDLE': 0x0e,
    'READ_RESP_LAST': 0x0f, 'READ_RESP_ONLY': 0x10, 'ACK': 0x11,
    'ATOMIC_ACK': 0x12, 'CMP_SWAP': 0x13, 'FETCH_ADD': 0x14,
    'SEND_LAST_INV': 0x16, 'SEND_ONLY_INV': 0x17, 'FLUSH': 0x1c,
    'ATOMIC_WRITE': 0x1d,
}
UC = 0x20
CNP = 0x81
NAME = {v: k for k, v in OP.items()}

# Extension headers per RC opcode (low 5 bits), in wire order.
EXT = {
    0x03: ('imm',), 0x05: ('imm',), 0x06: ('reth',), 0x09: ('imm',),
    0x0a: ('reth',), 0x0b: ('reth', 'imm'), 0x0c: ('reth',),
    0x0d: ('aeth',), 0x0f: ('aeth',), 0x10: ('aeth',), 0x11: ('aeth',),
    0x12: ('aeth', 'atmack'), 0x13: ('atmeth',), 0x14: ('atmeth',),
    0x16: ('ieth',), 0x17: ('ieth',), 0x1c: ('feth', 'reth'),
    0x1d: ('reth',),
}
EXT_BYTES = {'imm': 4, 'reth': 16, 'aeth': 4, 'atmack': 8, 'atmeth': 28,
             'ieth': 4, 'feth': 4}
# Opcodes (low 5 bits) that carry a payload.
PAYLOAD = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
           0x0a, 0x0b, 0x0d, 0x0e, 0x0f, 0x10, 0x16, 0x17, 0x1d}
RESPONSES = {0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12}

# AETH syndromes (9.7.5.2.1 ff.): ACK with invalid credits, RNR NAK with
# a timer code, NAK with a code.
SYN_ACK = 0x1f
SYN_RNR = 0x20
SYN_NAK_SEQ = 0x60
SYN_NAK_INV = 0x61
SYN_NAK_ACCESS = 0x62
SYN_NAK_OP = 0x63
SYN_NAK_INV_RD = 0x64


def ext_len(opcode):
    """Bytes of the extension headers of @opcode (0 for a CNP)."""
    if opcode == CNP:
        return 16
    return sum(EXT_BYTES[h] for h in EXT.get(opcode & 0x1f, ()))


def bth(opcode, dqpn, psn, pkey=0xffff, pad=0, se=False, ack=False,
        mig=False, tver=0, fecn=False, becn=False):
    """The 12-byte base transport header."""
    return struct.pack('!BBHB3sB3s', opcode,
                       se << 7 | mig << 6 | (pad & 3) << 4 | (tver & 15),
                       pkey & 0xffff, fecn << 7 | becn << 6,
                       (dqpn & 0xffffff).to_bytes(3, 'big'),
                       ack << 7, (psn & 0xffffff).to_bytes(3, 'big'))


def reth(va, rkey, dlen):
    return struct.pack('!QII', va & (2**64 - 1), rkey & 0xffffffff,
                       dlen & 0xffffffff)


def aeth(syndrome, msn):
    return struct.pack('!B3s', syndrome & 0xff,
                       (msn & 0xffffff).to_bytes(3, 'big'))


def atmeth(va, rkey, swap_add, compare):
    return struct.pack('!QIQQ', va & (2**64 - 1), rkey & 0xffffffff,
                       swap_add & (2**64 - 1), compare & (2**64 - 1))


def u32(v):
    return struct.pack('!I', v & 0xffffffff)


def feth(sel, plt):
    return bytes((0, 0, 0, (sel & 3) << 4 | (plt & 15)))


def ib(opcode, dqpn, psn, payload=b'', pad=None, **kw):
    """BTH + extension headers + payload + pad (no ICRC).

    Extension header fields come as keywords: va, rkey, dlen (RETH),
    syndrome, msn (AETH), orig (AtomicAckETH), swap_add, compare (AtomicETH,
    with va and rkey), imm, inv_rkey, sel, plt (FETH).  @pad defaults to
    what aligns the payload; another value is a malformed packet."""
    if pad is None:
        pad = -len(payload) & 3
    b = bth(opcode, dqpn, psn, pad=pad,
            **{k: kw[k] for k in ('pkey', 'se', 'ack', 'mig', 'tver',
                                  'fecn', 'becn') if k in kw})
    if opcode == CNP:
        return b + bytes(16)
    for h in EXT.get(opcode & 0x1f, ()):
        if h == 'reth':
            b += reth(kw.get('va', 0), kw.get('rkey', 0), kw.get('dlen', 0))
        elif h == 'aeth':
            b += aeth(kw.get('syndrome', SYN_ACK), kw.get('msn', 0))
        elif h == 'atmack':
            b += struct.pack('!Q', kw.get('orig', 0) & (2**64 - 1))
        elif h == 'atmeth':
            b += atmeth(kw.get('va', 0), kw.get('rkey', 0),
                        kw.get('swap_add', 0), kw.get('compare', 0))
        elif h == 'imm':
            b += u32(kw.get('imm', 0))
        elif h == 'ieth':
            b += u32(kw.get('inv_rkey', 0))
        elif h == 'feth':
            b += feth(kw.get('sel', 0), kw.get('plt', 1))
    return b + payload + bytes(pad & 3)


def icrc(iph, udp, ibh):
    """The 4 ICRC bytes of a packet: @iph its IP header, @udp its UDP
    header, @ibh the IB headers, payload and pad (no ICRC)."""
    m = bytearray(iph)
    if m[0] >> 4 == 4:
        m[1] = 0xff
        m[8] = 0xff
        m[10:12] = b'\xff\xff'
    else:
        m[0] |= 0x0f
        m[1:4] = b'\xff\xff\xff'
        m[7] = 0xff
    u = bytearray(udp)
    u[6:8] = b'\xff\xff'
    b = bytearray(ibh[:12])
    if len(b) > 4:
        b[4] = 0xff
    crc = zlib.crc32(b'\xff' * 8 + bytes(m) + bytes(u) + bytes(b))
    return struct.pack('<I', zlib.crc32(ibh[12:], crc))


def _csum(data):
    if len(data) & 1:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ip_packet(src, dst, ibh, sport=49152, tos=0, ttl=64, ident=0x1234,
              bad_icrc=False):
    """The IP packet (IPv4 or IPv6, after @src's family) carrying @ibh
    over UDP to port 4791, its ICRC appended.  IPv4 goes with DF, a
    non-zero ID (kept by a raw socket) and a UDP checksum of 0; IPv6 with
    a real UDP checksum."""
    s, d = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    ulen = 8 + len(ibh) + 4
    if s.version == 4:
        iph = struct.pack('!BBHHHBBH4s4s', 0x45, tos, 20 + ulen, ident,
                          0x4000, ttl, 17, 0, s.packed, d.packed)
        iph = iph[:10] + struct.pack('!H', _csum(iph)) + iph[12:]
        udp = struct.pack('!HHHH', sport, ROCE_PORT, ulen, 0)
    else:
        iph = struct.pack('!IHBB16s16s', 6 << 28 | tos << 20, ulen, 17,
                          ttl, s.packed, d.packed)
        udp = struct.pack('!HHHH', sport, ROCE_PORT, ulen, 0)
    crc = icrc(iph, udp, ibh)
    if bad_icrc:
        crc = bytes((crc[0] ^ 1,)) + crc[1:]
    if s.version == 6:
        pseudo = s.packed + d.packed + struct.pack('!IxxxB', ulen, 17)
        c = _csum(pseudo + udp + ibh + crc) or 0xffff
        udp = udp[:6] + struct.pack('!H', c)
    return iph + udp + ibh + crc


def icrc_ok(ip):
    """Whether the ICRC of RoCEv2 packet @ip (IPv4 without options with
    exactly its packet, or IPv6) matches."""
    hl = 40 if ip[0] >> 4 == 6 else (ip[0] & 15) * 4
    return icrc(ip[:hl], ip[hl:hl + 8], ip[hl + 8:-4]) == ip[-4:]


def parse(ip, check_icrc=True):
    """A received or captured IP packet as a dict, or None when it is no
    RoCEv2 packet: len (of the IP packet), src, dst (strings), ib (the
    UDP payload, ICRC included), opcode, pad, pkey, dqpn, psn, ack, and
    for opcodes with them va, rkey, dlen (RETH), syndrome, msn (AETH),
    payload_len; icrc_ok says whether the ICRC matches (None unless
    @check_icrc)."""
    if len(ip) < 20:
        return None
    if ip[0] >> 4 == 4:
        ihl = (ip[0] & 15) * 4
        if ip[9] != 17:
            return None
        tot = struct.unpack('!H', ip[2:4])[0]
        src, dst = ip[12:16], ip[16:20]
    elif ip[0] >> 4 == 6 and len(ip) >= 40:
        ihl = 40
        if ip[6] != 17:
            return None
        tot = 40 + struct.unpack('!H', ip[4:6])[0]
        src, dst = ip[8:24], ip[24:40]
    else:
        return None
    if tot < ihl + 8 + 16 or len(ip) < min(tot, ihl + 8 + 12):
        return None
    udp = ip[ihl:ihl + 8]
    if struct.unpack('!H', udp[2:4])[0] != ROCE_PORT:
        return None
    # A capture may have cut the packet short: lengths come from IP.
    b = ip[ihl + 8:tot]
    blen = tot - ihl - 8
    p = {'len': tot, 'src': str(ipaddress.ip_address(src)),
         'dst': str(ipaddress.ip_address(dst)), 'ib': b,
         'opcode': b[0], 'pad': (b[1] >> 4) & 3,
         'pkey': struct.unpack('!H', b[2:4])[0],
         'dqpn': int.from_bytes(b[5:8], 'big'), 'ack': b[8] >> 7,
         'psn': int.from_bytes(b[9:12], 'big'),
         'icrc_ok': icrc_ok(ip[:tot]) if check_icrc and len(ip) >= tot
         else None}
    off = 12
    if b[0] == CNP:
        return p
    for h in EXT.get(b[0] & 0x1f, ()):
        if len(b) < off + EXT_BYTES[h]:
            return p
        if h == 'reth':
            p['va'], p['rkey'], p['dlen'] = struct.unpack(
                '!QII', b[off:off + 16])
        elif h == 'aeth':
            p['syndrome'] = b[off]
            p['msn'] = int.from_bytes(b[off + 1:off + 4], 'big')
        off += EXT_BYTES[h]
    p['payload_len'] = blen - off - 4 - p['pad']
    return p


class RawSender:
    """IPv4 packets through a raw socket (IP_HDRINCL): the namespace's
    routing and ARP pick the link and the next hop, any source address
    goes out as given."""

    def __init__(self):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                               socket.IPPROTO_RAW)

    def send(self, pkt):
        self.s.sendto(pkt, (str(ipaddress.ip_address(pkt[16:20])), 0))


class EthSender:
    """IPv4 and IPv6 packets in Ethernet frames on interface @ifname, to
    the MAC address a packet's destination maps to in @macs (a dict of
    address string -> 6 bytes), from the interface's own MAC."""

    def __init__(self, ifname, macs):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.s.bind((ifname, 0))
        self.mac = self.s.getsockname()[4]
        self.macs = macs

    def send(self, pkt):
        v6 = pkt[0] >> 4 == 6
        dst = pkt[24:40] if v6 else pkt[16:20]
        mac = self.macs[str(ipaddress.ip_address(dst))]
        self.s.send(mac + self.mac + (b'\x86\xdd' if v6 else b'\x08\x00') +
                    pkt)


def _bpf(prog):
    """Assemble classic BPF: a list of (code, k) and (code, k, label,
    label) with labels as strings, and label strings between them."""
    at, out, n = {}, [], 0
    for i in prog:
        if isinstance(i, str):
            at[i] = n
        else:
            n += 1
    n = 0
    for i in prog:
        if isinstance(i, str):
            continue
        n += 1
        if len(i) == 2:
            out.append(struct.pack('HBBI', i[0], 0, 0, i[1]))
        else:
            out.append(struct.pack('HBBI', i[0], at[i[2]] - n,
                                   at[i[3]] - n, i[1]))
    return b''.join(out)


def sniffer(ifname, snap=0, skip=()):
    """An Ethernet socket that receives the RoCEv2 frames (UDP port 4791,
    IPv4 without options or IPv6) on @ifname: the host's own and, with a
    hub in front of it, everyone else's.  The kernel filters: frames
    whose BTH opcode, its low 5 bits, is in @skip never come, and with
    @snap the rest are cut to that many bytes."""
    ld_h, ld_b, jeq, and_k, ret = 0x28, 0x30, 0x15, 0x54, 0x06
    keep = snap or 0x40000
    prog = [(ld_h, 12), (jeq, 0x0800, 'v4', 'n6'), 'n6',
            (jeq, 0x86dd, 'v6', 'drop'),
            'v4', (ld_b, 14), (jeq, 0x45, 'v4b', 'drop'), 'v4b',
            (ld_b, 23), (jeq, 17, 'v4c', 'drop'), 'v4c',
            (ld_h, 36), (jeq, ROCE_PORT, 'v4d', 'drop'), 'v4d',
            (ld_b, 42), (jeq, 0, 'op', 'op'),
            'v6', (ld_b, 20), (jeq, 17, 'v6b', 'drop'), 'v6b',
            (ld_h, 56), (jeq, ROCE_PORT, 'v6c', 'drop'), 'v6c',
            (ld_b, 62), 'op', (and_k, 0x1f)]
    for j, op in enumerate(skip):
        prog += [(jeq, op, 'drop', 's%d' % j), 's%d' % j]
    prog += [(ret, keep), 'drop', (ret, 0)]
    code = _bpf(prog)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(0x0003))
    buf = ctypes.create_string_buffer(code)
    fprog = struct.pack('HL', len(code) // 8, ctypes.addressof(buf))
    s.setsockopt(socket.SOL_SOCKET, 26, fprog)  # SO_ATTACH_FILTER
    s.bind((ifname, 0))
    return s


def frame_ip(frame):
    """(source MAC, IP packet) of an Ethernet frame, or None."""
    if len(frame) < 14 or frame[12:14] not in (b'\x08\x00', b'\x86\xdd'):
        return None
    return frame[6:12], frame[14:]
