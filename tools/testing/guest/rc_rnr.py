#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""RNR storm (IBTA 9.7.5.2.8, 9.7.6.1.6): SENDs to a QP with no receive
posted are RNR NAKed and retried, with rnr_retry 7 (infinite) until
receives appear - then every message lands once, in order, intact; with
rnr_retry 1 the SEND fails with RNR_RETRY_EXC_ERR and the QP errors.
Two RC QPs of one device, through its own GID.

  rc_rnr.py DEV GID-SUFFIX
"""
import os
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.wr import SGE, RecvWR, SendWR

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyv_rc import RW, connect, gid_index, mkqp, poll, tap, wait_state  # noqa

ctx = Context(name=sys.argv[1])
gid = gid_index(ctx, sys.argv[2])
N, SIZE = 16, 3000      # three packets each at MTU 1024


def pair(rnr_retry):
    pd = PD(ctx)
    ccq, scq = CQ(ctx, 64), CQ(ctx, 64)
    c, s = mkqp(pd, ccq), mkqp(pd, scq)
    dgid = ctx.query_gid(1, gid)
    connect(c, gid, dgid, s.qp_num, rnr_retry=rnr_retry)
    connect(s, gid, dgid, c.qp_num, rnr_retry=rnr_retry)
    return pd, ccq, scq, c, s


pd, ccq, scq, c, s = pair(7)
cmr, smr = MR(pd, N * SIZE, RW), MR(pd, N * SIZE, RW)
data = bytes((i * 7 + i // 251) & 0xff for i in range(N * SIZE))
cmr.write(data, len(data))
smr.write(b'\x5a' * len(data), len(data))
for i in range(N):
    c.post_send(SendWR(wr_id=i, opcode=e.IBV_WR_SEND, num_sge=1,
                       sg=[SGE(cmr.buf + i * SIZE, SIZE, cmr.lkey)]))
time.sleep(2)
n, _ = ccq.poll(1)
tap(n == 0, 'rnr_retry 7: no SEND completes while no receive is posted')
tap(wait_state(c, e.IBV_QPS_RTS, 1), 'rnr_retry 7: requester QP stays RTS')
for i in range(N):
    s.post_recv(RecvWR(wr_id=100 + i, num_sge=1,
                       sg=[SGE(smr.buf + i * SIZE, SIZE, smr.lkey)]))
sends = [poll(ccq, 60) for _ in range(N)]
recvs = [poll(scq, 60) for _ in range(N)]
tap(all(w is not None and w.status == e.IBV_WC_SUCCESS for w in sends) and
    [w.wr_id for w in sends] == list(range(N)),
    'rnr_retry 7: all %d SENDs complete, in order, once receives are posted'
    % N)
tap(all(w is not None and w.status == e.IBV_WC_SUCCESS and
        w.byte_len == SIZE for w in recvs) and
    [w.wr_id for w in recvs] == [100 + i for i in range(N)],
    'rnr_retry 7: %d receives complete once each, %d bytes, in order'
    % (N, SIZE))
tap(smr.read(len(data), 0) == data,
    'rnr_retry 7: every byte of the %d messages arrived intact' % N)
n, _ = scq.poll(1)
tap(n == 0, 'rnr_retry 7: no duplicate delivery')
del c, s

pd, ccq, scq, c, s = pair(1)
cmr = MR(pd, SIZE, RW)
c.post_send(SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                   sg=[SGE(cmr.buf, SIZE, cmr.lkey)]))
w = poll(ccq, 30)
tap(w is not None and w.status == e.IBV_WC_RNR_RETRY_EXC_ERR,
    'rnr_retry 1: SEND completes with RNR_RETRY_EXC_ERR (got %s)' %
    (w.status if w else None))
tap(wait_state(c, e.IBV_QPS_ERR), 'rnr_retry 1: requester QP in ERR')
print('rnr done')
