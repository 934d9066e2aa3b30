#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Deep peer fuzz, for t_peerfuzz.sh: frames that reach the responder's
and the completer's logic of live QPs.

  peer_fuzz.py --me ADDR_C --a DEV,GID_SUFFIX,ADDR_A --b DEV,GID_SUFFIX,ADDR_B
               --seed S --frames N

Runs in the namespace of ADDR_C, which this script makes the peer of every
QP it creates: an RC and a UC QP on device B (the responders) and an RC QP
on device A (the requester), each connected to a QP number at ADDR_C that
no device has.  So the frames it sends from ADDR_C, with a valid ICRC, the
QP's number and PSNs in or near its window, are the peer's as far as any
check of addresses, P_Key or QPN goes: what they meet is the logic behind
those checks.  It reads what the QPs send back (a UDP socket on port 4791)
to follow the PSNs.

First, documented behaviour (IBTA 9.7.4, C9-?? / 9.6.1: packets of a
request longer than the path MTU, or first and middle packets shorter than
it, are invalid; an RDMA WRITE's whole range is checked at its first
packet), one check each:
  - a SEND ONLY with 4 bytes more than the path MTU is not delivered;
  - a SEND FIRST of half the path MTU, then a SEND LAST, is not delivered;
  - a WRITE FIRST whose RETH range ends past its MR, the first packet
    inside it, writes nothing.
Then episodes of fuzz until N frames went out (seeded: S reproduces a
run): each takes a QP (reset to fresh PSNs, now and then at the 2^24
wrap, when a frame broke it and now and then anyway), posts receives or
requests, and sends 1-12 frames: every opcode (RC, UC,
now and then another transport's), RETH addresses, R_Keys and lengths at
their extremes (0, 2^31, 2^31 + 1, 2^32 - 1, past the MR, wrapping),
payloads longer than the path MTU, first and middle packets shorter,
last packets longer, AETH syndromes of every kind and MSNs, AtomicETH
addresses misaligned, immediate data and invalidated R_Keys, pad counts,
truncated headers, PSNs expected, duplicate, ahead and at the window's
edges (2^23 away); multi-packet messages with one packet spoiled; and,
for the requester, ACKs, NAKs, READ responses and atomic ACKs at the PSNs
it has outstanding, at the edges of its window and beyond.

Prints "ok - "/"not ok - " lines and, last, "sent a=N b=N" (frames per
device) and "done"."""
import argparse
import json
import os
import random
import socket
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyv_rc import RW, gid_index, tap  # noqa: E402
from roce_pkt import (CNP, OP, PAYLOAD, RESPONSES, SYN_ACK,  # noqa: E402
                      SYN_NAK_SEQ, SYN_RNR, UC, RawSender, ib, ip_packet)

MTU = 1024
MR_LEN = 65536
RECV_LEN = 4096                 # receive buffers in the MR's first 16 KiB
FAKE = {'b_rc': 0xc0de, 'b_uc': 0xc0df, 'a_rc': 0xc0e0}
RC_OPS = sorted(OP.values())
UC_OPS = [UC | o for o in range(0x0c)]
FIRST = {0x00, 0x06}
MIDDLE = {0x01, 0x07}

p = argparse.ArgumentParser()
p.add_argument('--me', required=True)
p.add_argument('--a', required=True)
p.add_argument('--b', required=True)
p.add_argument('--seed', type=int, required=True)
p.add_argument('--frames', type=int, default=2500)
a = p.parse_args()
rnd = random.Random(a.seed)
print('# seed %d, %d frames' % (a.seed, a.frames))

tx = RawSender()
rxs = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rxs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
rxs.bind((a.me, 4791))
rxs.setblocking(False)
sent = {'a': 0, 'b': 0}


def answers(wait=0.0):
    """The (opcode, PSN, syndrome) of every packet the QPs sent to this
    host since the last call (after @wait seconds, for late ones)."""
    if wait:
        time.sleep(wait)
    out = []
    while True:
        try:
            b, _ = rxs.recvfrom(4096)
        except BlockingIOError:
            return out
        if len(b) >= 12:
            syn = b[12] if (b[0] & 0x1f) in (0x0d, 0x0f, 0x10, 0x11,
                                             0x12) and len(b) > 12 else None
            out.append((b[0], int.from_bytes(b[9:12], 'big'), syn, b))


class Dev:
    def __init__(self, spec):
        self.name, suffix, self.ip = spec.split(',')
        self.ctx = Context(name=self.name)
        self.gidx = gid_index(self.ctx, suffix)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 256)
        self.mr = MR(self.pd, MR_LEN, RW)

    def drain(self):
        """Completions so far: a list of (status, opcode, byte_len)."""
        out = []
        while True:
            n, wcs = self.cq.poll(16)
            if n <= 0:
                return out
            out += [(w.status, w.opcode, w.byte_len) for w in wcs[:n]]


def c_gid():
    o = [int(x) for x in a.me.split('.')]
    return GID('0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' % tuple(o))


class Qp:
    """One QP of @dev towards FAKE[@key] at ADDR_C."""

    def __init__(self, dev, qpt, key):
        self.dev, self.qpt, self.key = dev, qpt, key
        self.qp = QP(dev.pd, QPInitAttr(
            qp_type=qpt, scq=dev.cq, rcq=dev.cq,
            cap=QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                      max_recv_sge=1)))
        self.num = self.qp.qp_num
        self.rq_psn = self.sq_psn = self.epsn = 0
        self.fresh = True

    def reset(self, rq_psn=0, sq_psn=0, timeout=14, retry=7, rnr=7):
        """To ERR (flushing what is posted), RESET, and up to RTS again."""
        for st in (e.IBV_QPS_ERR, e.IBV_QPS_RESET)[self.fresh:]:
            self.qp.modify(QPAttr(qp_state=st), e.IBV_QP_STATE)
            self.dev.drain()
        self.fresh = False
        rc = self.qpt == e.IBV_QPT_RC
        x = QPAttr(qp_state=e.IBV_QPS_INIT)
        x.pkey_index = 0
        x.port_num = 1
        x.qp_access_flags = (e.IBV_ACCESS_REMOTE_WRITE |
                             (e.IBV_ACCESS_REMOTE_READ |
                              e.IBV_ACCESS_REMOTE_ATOMIC if rc else 0))
        self.qp.modify(x, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                       e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
        x = QPAttr(qp_state=e.IBV_QPS_RTR)
        x.ah_attr = AHAttr(gr=GlobalRoute(dgid=c_gid(),
                                          sgid_index=self.dev.gidx),
                           is_global=1, port_num=1)
        x.path_mtu = e.IBV_MTU_1024
        x.dest_qp_num = FAKE[self.key]
        x.rq_psn = rq_psn
        mask = (e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
                e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN)
        if rc:
            x.max_dest_rd_atomic = 4
            x.min_rnr_timer = 1
            mask |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
        self.qp.modify(x, mask)
        x = QPAttr(qp_state=e.IBV_QPS_RTS)
        x.sq_psn = sq_psn
        mask = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
        if rc:
            x.timeout = timeout
            x.retry_cnt = retry
            x.rnr_retry = rnr
            x.max_rd_atomic = 4
            mask |= (e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
                     e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)
        self.qp.modify(x, mask)
        self.rq_psn, self.sq_psn = rq_psn, sq_psn

    def broken(self):
        """Whether a frame put the QP in an error state."""
        return self.qp.query(e.IBV_QP_STATE)[0].qp_state in (
            e.IBV_QPS_ERR, e.IBV_QPS_SQE)

    def post_recvs(self, n):
        mr = self.dev.mr
        for i in range(n):
            self.qp.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[
                SGE(mr.buf + (i % 4) * RECV_LEN, RECV_LEN, mr.lkey)]))


def send(dev, body, key='b'):
    tx.send(ip_packet(a.me, dev.ip, body, sport=rnd.randrange(49152, 65536)))
    sent[key] += 1


A, B = Dev(a.a), Dev(a.b)
b_rc = Qp(B, e.IBV_QPT_RC, 'b_rc')
b_uc = Qp(B, e.IBV_QPT_UC, 'b_uc')
a_rc = Qp(A, e.IBV_QPT_RC, 'a_rc')
garbage = bytes(rnd.randrange(256) for _ in range(8192))

# ---- documented behaviour --------------------------------------------------


def rx_packets(dev):
    out = subprocess.run(['rdma', '-j', 'statistic', 'show', 'link',
                          dev.name + '/1'], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)[0]['rx_packets']



def delivered(dev, length, wait=0.3):
    """Whether a receive completed successfully with @length bytes."""
    time.sleep(wait)
    return any(s == e.IBV_WC_SUCCESS and n == length
               for s, _, n in dev.drain())


rx0 = rx_packets(B)
b_rc.reset(rq_psn=0x100)
b_rc.post_recvs(2)
send(B, ib(OP['SEND_ONLY'], b_rc.num, 0x100, garbage[:MTU + 4], ack=True))
tap(not delivered(B, MTU + 4),
    'a SEND ONLY of path MTU + 4 bytes (%d) is not delivered' % (MTU + 4))

b_rc.reset(rq_psn=0x200)
b_rc.post_recvs(2)
send(B, ib(OP['SEND_FIRST'], b_rc.num, 0x200, garbage[:MTU // 2]))
send(B, ib(OP['SEND_LAST'], b_rc.num, 0x201, garbage[:16], ack=True))
tap(not delivered(B, MTU // 2 + 16),
    'a SEND FIRST of half the path MTU, then a SEND LAST: not delivered')

b_rc.reset(rq_psn=0x300)
mark = bytes(range(256)) * (MTU // 256)
B.mr.write(mark, MTU, MR_LEN - MTU)
send(B, ib(OP['WRITE_FIRST'], b_rc.num, 0x300, garbage[:MTU],
           va=B.mr.buf + MR_LEN - MTU, rkey=B.mr.rkey, dlen=2 * MTU,
           ack=True))
time.sleep(0.3)
tap(B.mr.read(MTU, MR_LEN - MTU) == mark,
    'a WRITE FIRST whose RETH range ends %d bytes past its MR (the first '
    'packet inside) writes nothing' % MTU)
n = rx_packets(B) - rx0
tap(n == 4, '%s got the 4 frames of these checks (rx_packets +%d)'
    % (B.name, n))
answers()

# ---- fuzz ------------------------------------------------------------------


def pick(*weighted):
    """One of (weight, value) pairs."""
    t = rnd.uniform(0, sum(w for w, _ in weighted))
    for w, v in weighted:
        t -= w
        if t <= 0:
            return v
    return weighted[-1][1]


def psn_near(base):
    d = pick((60, 0), (6, -1), (6, 1), (3, -2), (3, 2),
             (2, -(1 << 23)), (2, -(1 << 23) - 1), (2, (1 << 23) - 1),
             (2, 1 << 23), (2, rnd.randrange(1 << 24)), (2, 16))
    return (base + d) & 0xffffff


def va_of(mr, length):
    return pick((30, mr.buf + rnd.randrange(0, MR_LEN - 64) & ~3),
                (10, mr.buf), (10, mr.buf + MR_LEN - max(length, 1)),
                (5, mr.buf + MR_LEN - 8), (5, mr.buf - 1), (5, 0),
                (4, 2**64 - 16), (4, 2**64 - 1), (3, mr.buf + MR_LEN),
                (3, rnd.randrange(2**64)))


def rkey_of(mr):
    return pick((75, mr.rkey), (5, mr.rkey ^ 1), (5, mr.rkey ^ 0x100),
                (5, 0), (5, 0xffffffff), (5, rnd.randrange(2**32)))


def dlen_of(n):
    return pick((30, n), (6, 0), (6, 1), (6, MTU), (6, 2 * MTU),
                (6, 3 * MTU + 5), (5, 1 << 31), (5, (1 << 31) + 1),
                (5, (1 << 31) - 1), (5, 2**32 - 1), (5, MR_LEN),
                (5, rnd.randrange(2**32)))


def payload_len(op):
    """A payload length for opcode @op (low 5 bits), mostly a valid one."""
    if op not in PAYLOAD:
        return pick((95, 0), (5, 4))
    if op == OP['ATOMIC_WRITE']:
        return pick((85, 8), (5, 0), (5, 4), (5, 16))
    if op in FIRST or op in MIDDLE or op in (0x0d, 0x0e):
        return pick((70, MTU), (8, MTU - 4), (8, MTU // 2), (4, 4),
                    (5, MTU + 4), (5, 1400))
    return pick((40, rnd.randrange(0, 64)), (25, rnd.randrange(MTU + 1)),
                (10, MTU), (8, MTU + 4), (7, 1400), (10, 0))


def frame(q, op, psn, n=None):
    """A request or response for @q with opcode @op at @psn, its fields
    fuzzed; a payload of @n bytes, or a fuzzed length."""
    mr = q.dev.mr
    low = op & 0x1f
    if n is None:
        n = payload_len(low) if op != CNP else 0
    body = garbage[:n]
    kw = {'ack': rnd.random() < 0.5,
          'pkey': pick((90, 0xffff), (10, 0x7fff)),
          'se': rnd.random() < 0.2, 'mig': rnd.random() < 0.5}
    if rnd.random() < 0.04:
        kw['pad'] = rnd.randrange(4)
    kw.update(va=va_of(mr, n), rkey=rkey_of(mr), dlen=dlen_of(n),
              syndrome=pick((40, SYN_ACK), (10, rnd.randrange(0x20)),
                            (10, SYN_RNR | rnd.randrange(32)),
                            (20, 0x60 | rnd.randrange(5)),
                            (10, 0x60 | rnd.randrange(5, 32)),
                            (10, rnd.randrange(0x40, 0x60)),
                            (5, rnd.randrange(0x80, 0x100))),
              msn=pick((50, 0), (50, rnd.randrange(1 << 24))),
              orig=rnd.randrange(2**64), swap_add=rnd.randrange(2**64),
              compare=rnd.randrange(2**64), imm=rnd.randrange(2**32),
              inv_rkey=pick((50, mr.rkey), (50, rnd.randrange(2**32))),
              sel=rnd.randrange(4), plt=rnd.randrange(16))
    if low in (0x13, 0x14):
        kw['va'] = pick((50, mr.buf + 8 * rnd.randrange(MR_LEN // 8)),
                        (30, mr.buf + 8 * rnd.randrange(64) +
                         rnd.randrange(1, 8)),
                        (20, kw['va']))
    b = ib(op, q.num, psn, body, **kw)
    if rnd.random() < 0.02:
        b = b[:rnd.randrange(4, len(b))]        # truncated
    return b


def reset_psn():
    return pick((70, rnd.randrange(1 << 24)),
                (20, (1 << 24) - rnd.randrange(1, 8)), (10, 0))


def follow(epsn):
    """The PSN a responder expects, after what it answered: an ACK or a
    READ response acknowledges up to its PSN, a sequence NAK or an RNR NAK
    names the PSN it expects."""
    for aop, apsn, syn, _ in answers():
        if aop & 0x1f in (0x0d, 0x0e, 0x0f, 0x10, 0x12) or \
                (aop & 0x1f == 0x11 and syn is not None and syn < 0x20):
            epsn = (apsn + 1) & 0xffffff
        elif syn is not None and (syn & 0xe0 == SYN_RNR or
                                  syn == SYN_NAK_SEQ):
            epsn = apsn
    return epsn


def responder_episode(q):
    """Post receives to @q (reset first when a frame broke it, and now and
    then anyway, to fresh PSNs), send it 1-12 requests (or a message with
    one packet spoiled), following its PSN by what it answers."""
    rc = q.qpt == e.IBV_QPT_RC
    if q.fresh or q.broken() or rnd.random() < 0.15:
        q.reset(rq_psn=reset_psn())
        q.epsn = q.rq_psn
    try:
        q.post_recvs(rnd.randrange(0, 3))
    except Exception:  # pylint: disable=broad-except
        pass                            # the receive queue is full
    epsn = q.epsn
    ops = RC_OPS if rc else UC_OPS
    other = UC_OPS if rc else RC_OPS + [CNP]
    if rnd.random() < 0.35:
        # A message of 2-5 packets, one of them spoiled.
        k = rnd.randrange(2, 6)
        kind = rnd.choice(('send', 'write', 'write_imm', 'send_imm',
                           'send_inv'))
        base = {'send': (0x00, 0x01, 0x02), 'send_imm': (0x00, 0x01, 0x03),
                'send_inv': (0x00, 0x01, 0x16),
                'write': (0x06, 0x07, 0x08),
                'write_imm': (0x06, 0x07, 0x09)}[kind]
        if not rc and kind == 'send_inv':
            base = (0x00, 0x01, 0x02)
        bad = rnd.randrange(k)
        last = rnd.randrange(1, MTU + 1)
        for i in range(k):
            op = base[0] if i == 0 else base[2] if i == k - 1 else base[1]
            n = MTU if i < k - 1 else last
            op |= 0 if rc else UC
            if i != bad:
                body = frame(q, op, (epsn + i) & 0xffffff, n)
                # A sane RETH for the message: inside the MR.
                if i == 0 and 'write' in kind:
                    body = ib(op, q.num, (epsn + i) & 0xffffff,
                              garbage[:n], va=q.dev.mr.buf + 16384,
                              rkey=q.dev.mr.rkey,
                              dlen=(k - 1) * MTU + last, ack=True)
                elif i > 0:
                    body = ib(op, q.num, (epsn + i) & 0xffffff,
                              garbage[:n], ack=i == k - 1,
                              imm=i, inv_rkey=q.dev.mr.rkey)
            else:
                body = frame(q, pick((50, op), (50, rnd.choice(ops))),
                             psn_near((epsn + i) & 0xffffff))
            send(q.dev, body)
        q.epsn = follow((epsn + k) & 0xffffff)
        return
    for _ in range(rnd.randrange(1, 13)):
        op = pick((94, rnd.choice(ops)), (6, rnd.choice(other)))
        psn = psn_near(epsn)
        send(q.dev, frame(q, op, psn))
        epsn = follow(epsn)
        if not rc and psn == epsn:
            epsn = (epsn + 1) & 0xffffff
        if q.broken():
            break
    q.epsn = epsn


def requester_episode(q):
    """Post 1-4 requests to ADDR_C on @q (reset first when a frame broke
    it, or now and then anyway, to fresh PSNs and retry counts), and
    answer what it sends with 1-12 fuzzed ACKs, NAKs, READ responses and
    atomic ACKs."""
    mr = q.dev.mr
    if q.fresh or q.broken() or rnd.random() < 0.3:
        q.reset(sq_psn=reset_psn(), timeout=rnd.randrange(1, 9),
                retry=rnd.randrange(8), rnr=rnd.randrange(8))
    q.dev.drain()
    for i in range(rnd.randrange(1, 5)):
        kind = rnd.choice(('write', 'read', 'send', 'fadd', 'cswap'))
        n = rnd.choice((1, 8, 64, MTU, MTU + 1, 2 * MTU, 3 * MTU - 3))
        off = 16384 + i * 4 * MTU
        if kind in ('fadd', 'cswap'):
            n = 8
        wr = SendWR(wr_id=i, opcode={
            'write': e.IBV_WR_RDMA_WRITE, 'read': e.IBV_WR_RDMA_READ,
            'send': e.IBV_WR_SEND, 'fadd': e.IBV_WR_ATOMIC_FETCH_AND_ADD,
            'cswap': e.IBV_WR_ATOMIC_CMP_AND_SWP}[kind], num_sge=1,
            send_flags=e.IBV_SEND_SIGNALED,
            sg=[SGE(mr.buf + off, n, mr.lkey)])
        if kind in ('fadd', 'cswap'):
            wr.set_wr_atomic(rkey=0x1234, addr=0x10000, compare_add=1,
                             swap=2)
        elif kind != 'send':
            wr.set_wr_rdma(0x1234, 0x10000 + off)
        try:
            q.qp.post_send(wr)
        except Exception:  # pylint: disable=broad-except
            break                       # the send queue is full
    # What it sent: the PSNs outstanding, and its READs.
    reqs = [x for x in answers(0.005) if x[0] & 0x1f not in RESPONSES]
    first = reqs[0][1] if reqs else q.sq_psn
    end = first
    reads = []
    for op, psn, _, b in reqs:
        n = 1
        if op & 0x1f == OP['READ_REQ'] and len(b) >= 28:
            dlen = int.from_bytes(b[24:28], 'big')
            n = max(1, -(-dlen // MTU))
            reads.append((psn, n, dlen))
        if (psn + n - first) & 0xffffff > (end - first) & 0xffffff:
            end = (psn + n) & 0xffffff
    for _ in range(rnd.randrange(1, 13)):
        span = (end - first) & 0xffffff
        psn = pick((30, (first + rnd.randrange(max(span, 1))) & 0xffffff),
                   (10, (first - 1) & 0xffffff), (10, first),
                   (10, (end - 1) & 0xffffff), (10, end),
                   (5, (end + 1) & 0xffffff),
                   (5, (first - (1 << 23)) & 0xffffff),
                   (5, (first + (1 << 23)) & 0xffffff),
                   (5, rnd.randrange(1 << 24)))
        op = pick((40, OP['ACK']), (30, rnd.choice((0x0d, 0x0e, 0x0f, 0x10))),
                  (10, OP['ATOMIC_ACK']), (15, rnd.choice(RC_OPS)),
                  (5, rnd.choice(UC_OPS + [CNP])))
        n = None
        if reads and op in (0x0d, 0x0e, 0x0f, 0x10) and rnd.random() < 0.7:
            rpsn, rn, dlen = rnd.choice(reads)
            k = rnd.randrange(rn)
            psn = (rpsn + k) & 0xffffff
            n = pick((60, min(MTU, dlen - k * MTU)), (40, None))
            op = pick((70, 0x10 if rn == 1 else 0x0d if k == 0 else
                       0x0f if k == rn - 1 else 0x0e), (30, op))
        send(q.dev, frame(q, op, psn, n), 'a')
        if rnd.random() < 0.2:
            time.sleep(0.005)           # a timer may fire meanwhile
        answers()
        if q.broken():
            break
    q.dev.drain()


t0 = time.time()
ep = {'b_rc': 0, 'b_uc': 0, 'a_rc': 0}
while sent['a'] + sent['b'] < a.frames:
    which = pick((45, 'b_rc'), (20, 'b_uc'), (35, 'a_rc'))
    ep[which] += 1
    if which == 'a_rc':
        requester_episode(a_rc)
    else:
        responder_episode(b_rc if which == 'b_rc' else b_uc)
answers(0.2)
A.drain()
B.drain()
print('# %d episodes (B RC %d, B UC %d, A RC %d) in %.0f s' % (
    sum(ep.values()), ep['b_rc'], ep['b_uc'], ep['a_rc'], time.time() - t0))
for q in (b_rc, b_uc, a_rc):
    q.qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
A.drain()
B.drain()
print('sent a=%d b=%d' % (sent['a'], sent['b']))
print('done')
