#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Frames: small RC packets between two QPs of one device (sroce_tx_frame()).

  frames.py DEV GID_SUFFIX NETDEV

Two RC QPs of DEV talk through its own GID.  After the first packet, small
requests, ACKs and READ responses go as frames: every byte is checked, for
each opcode and for payloads of 1 to 88 bytes (pads 0-3), and tx_frames
must count them.  Halfway, an address added to and removed from NETDEV
bumps the routing generation: the next packet takes the IP path, and
frames resume after it.  A 4 KiB WRITE and READ (several packets, never
frames) check the skb path in between.  No packet may be dropped.
"""
import json
import os
import subprocess
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyv_rc import RW, connect, gid_index, poll, tap as check  # noqa: E402

DEV, SUFFIX, NETDEV = sys.argv[1:4]
ITERS = 120


def stats():
    out = subprocess.run(['rdma', '-j', 'statistic', 'show', 'link',
                          DEV + '/1'], capture_output=True, text=True,
                         check=True).stdout
    return {k: v for k, v in json.loads(out)[0].items()
            if isinstance(v, int)}


ctx = Context(name=DEV)
gid = gid_index(ctx, SUFFIX)
pd = PD(ctx)
ccq, scq = CQ(ctx, 64), CQ(ctx, 64)


def mkqp(cq):
    # Two SGEs and inline data, unlike pyv_rc.mkqp().
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                             cap=QPCap(max_send_wr=16, max_recv_wr=16,
                                       max_send_sge=2, max_recv_sge=2,
                                       max_inline_data=64)))


c, s = mkqp(ccq), mkqp(scq)
connect(c, gid, ctx.query_gid(1, gid), s.qp_num)
connect(s, gid, ctx.query_gid(1, gid), c.qp_num)
cmr, smr = MR(pd, 8192, RW), MR(pd, 8192, RW)
bad = []


def pattern(i, n):
    return bytes((i * 7 + k * 13 + 1) & 0xff for k in range(n))


def run(wr, what, recv=False):
    """Post @wr on c; its completion (and s's, with @recv) must succeed."""
    c.post_send(wr)
    wc = poll(ccq)
    if not wc or wc.status != e.IBV_WC_SUCCESS:
        bad.append('%s: send status %s' % (what, wc.status if wc else None))
        return None
    if not recv:
        return wc
    rwc = poll(scq)
    if not rwc or rwc.status != e.IBV_WC_SUCCESS:
        bad.append('%s: recv status %s' % (what,
                                           rwc.status if rwc else None))
    return rwc


def rdma(op, i, n, loff, roff, inline=False):
    flags = e.IBV_SEND_SIGNALED | (e.IBV_SEND_INLINE if inline else 0)
    wr = SendWR(opcode=op, num_sge=1, send_flags=flags,
                sg=[SGE(cmr.buf + loff, n, cmr.lkey)])
    wr.set_wr_rdma(smr.rkey, smr.buf + roff)
    return run(wr, 'op %d size %d' % (op, n))


def one(i):
    n = 1 + (i * 5) % 88		# 1..88 bytes: every pad count
    data = pattern(i, n)
    # WRITE (inline and from the MR), checked at the responder.
    cmr.write(data, n, 0)
    rdma(e.IBV_WR_RDMA_WRITE, i, n, 0, 64, inline=i % 2 == 0 and n <= 64)
    if smr.read(n, 64) != data:
        bad.append('WRITE %d bytes: data differ' % n)
    # SEND into a posted receive.
    s.post_recv(RecvWR(num_sge=1, sg=[SGE(smr.buf + 256, 128, smr.lkey)]))
    data = pattern(i + 1, n)
    cmr.write(data, n, 0)
    wr = SendWR(opcode=e.IBV_WR_SEND, num_sge=1,
                send_flags=e.IBV_SEND_SIGNALED,
                sg=[SGE(cmr.buf, n, cmr.lkey)])
    rwc = run(wr, 'SEND %d' % n, recv=True)
    if rwc and (rwc.byte_len != n or smr.read(n, 256) != data):
        bad.append('SEND %d bytes: got %d bytes, data %s' % (
            n, rwc.byte_len, smr.read(n, 256) == data))
    # WRITE with immediate: data and the immediate value.
    s.post_recv(RecvWR(num_sge=1, sg=[SGE(smr.buf + 512, 16, smr.lkey)]))
    data = pattern(i + 2, n)
    cmr.write(data, n, 0)
    wr = SendWR(opcode=e.IBV_WR_RDMA_WRITE_WITH_IMM, num_sge=1,
                send_flags=e.IBV_SEND_SIGNALED,
                sg=[SGE(cmr.buf, n, cmr.lkey)], imm_data=0x1000 + i)
    wr.set_wr_rdma(smr.rkey, smr.buf + 1024)
    rwc = run(wr, 'WRITE_WITH_IMM %d' % n, recv=True)
    if rwc and (rwc.imm_data != 0x1000 + i and
                rwc.imm_data != int.from_bytes((0x1000 + i).to_bytes(
                    4, 'big'), 'little')):
        bad.append('WRITE_WITH_IMM: immediate %#x' % rwc.imm_data)
    if smr.read(n, 1024) != data:
        bad.append('WRITE_WITH_IMM %d bytes: data differ' % n)
    # READ back what the responder holds.
    data = pattern(i + 3, n)
    smr.write(data, n, 2048)
    rdma(e.IBV_WR_RDMA_READ, i, n, 4096, 2048)
    if cmr.read(n, 4096) != data:
        bad.append('READ %d bytes: data differ' % n)
    # FETCH_ADD: the original value comes back, the sum stays.
    smr.write((i * 1000).to_bytes(8, 'little'), 8, 3072)
    wr = SendWR(opcode=e.IBV_WR_ATOMIC_FETCH_AND_ADD, num_sge=1,
                send_flags=e.IBV_SEND_SIGNALED,
                sg=[SGE(cmr.buf + 3072, 8, cmr.lkey)])
    wr.set_wr_atomic(rkey=smr.rkey, addr=smr.buf + 3072, compare_add=i + 1,
                     swap=0)
    run(wr, 'FETCH_ADD')
    if (int.from_bytes(cmr.read(8, 3072), 'little') != i * 1000 or
            int.from_bytes(smr.read(8, 3072), 'little') != i * 1001 + 1):
        bad.append('FETCH_ADD %d: values differ' % i)


def big(i):
    """4 KiB WRITE and READ: several packets, skbs (page fragments)."""
    data = pattern(i, 4096)
    cmr.write(data, 4096, 0)
    rdma(e.IBV_WR_RDMA_WRITE, i, 4096, 0, 4096)
    if smr.read(4096, 4096) != data:
        bad.append('WRITE 4096 bytes: data differ')
    data = pattern(i + 9, 4096)
    smr.write(data, 4096, 4096)
    rdma(e.IBV_WR_RDMA_READ, i, 4096, 4096, 4096)
    if cmr.read(4096, 4096) != data:
        bad.append('READ 4096 bytes: data differ')


s0 = stats()
for i in range(ITERS // 2):
    one(i)
big(1)
s1 = stats()
# Any address change bumps the routing generation.
subprocess.run(['ip', 'addr', 'add', '198.18.0.77/32', 'dev', NETDEV],
               check=True)
subprocess.run(['ip', 'addr', 'del', '198.18.0.77/32', 'dev', NETDEV],
               check=True)
for i in range(ITERS // 2, ITERS):
    one(i)
big(2)
s2 = stats()

check(not bad, 'every small WRITE, SEND, WRITE_WITH_IMM, READ and FETCH_ADD '
      'of 1-88 bytes and every 4 KiB WRITE/READ completes with its data '
      '(%d iterations)%s' % (ITERS, ': ' + '; '.join(bad[:3]) if bad else ''))
# Per iteration 5 requests and 5 answers, all small.
f1 = s1['tx_frames'] - s0['tx_frames']
f2 = s2['tx_frames'] - s1['tx_frames']
p2 = s2['tx_packets'] - s0['tx_packets']
print('# tx_frames %d then %d, tx_packets %d' % (f1, f2, p2))
# ... and big() sends 2 small ones (an ACK, a READ request).
small = 10 * (ITERS // 2) + 2
check(f1 >= small - 10,
      'small packets go as frames (%d of %d)' % (f1, small))
check(f1 < small, 'the first ones, before a packet came back to its '
      'sender, go the IP way (%d of %d)' % (small - f1, small))
check(small - 10 <= f2 < small,
      'after a routing change one goes the IP way, then frames resume '
      '(%d of %d frames)' % (f2, small))
check(p2 > f1 + f2, 'multi-packet messages still go as skbs (%d packets, '
      '%d frames)' % (p2, f1 + f2))
drops = {k: s2[k] - s0[k] for k in s2
         if k.startswith('rx_drop') or k in ('retry_timeout', 'retry_seq',
                                             'tx_errors', 'rx_nak')}
check(not any(drops.values()), 'nothing dropped or resent: %s' %
      ', '.join('%s %d' % kv for kv in drops.items() if kv[1]) or 'none')
print('frames done')
