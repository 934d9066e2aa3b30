#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""kill -9 of one end of an RC connection with traffic in flight.

  rc_peer_kill.py victim|survivor DEV GID-SUFFIX DIR

Both ends stream 64 KiB RDMA WRITEs at each other (8 outstanding), after
swapping QP number, GID, address and rkey through files in DIR.  The
victim runs until it is killed.  The survivor writes DIR/running after
50 completions; once the victim is gone (its QP with it) the survivor's
WRITEs are not acknowledged: IBTA 9.7.6.1.3 says the requester fails the
oldest WQE with RETRY_EXC_ERR after retry_cnt retries, the QP goes to
ERR and the rest are flushed.  (A WRITE that reaches the victim's QP
after its MR was torn down is NAKed with REM_ACCESS_ERR instead.)
"""
import json
import os
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import GID
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.wr import SGE, SendWR

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyv_rc import RW, connect, gid_index, mkqp, tap, wait_state  # noqa

role, dev, suffix, xdir = sys.argv[1:5]
peer = 'survivor' if role == 'victim' else 'victim'
SIZE, DEPTH = 65536, 8

ctx = Context(name=dev)
gid = gid_index(ctx, suffix)
pd = PD(ctx)
cq = CQ(ctx, 64)
qp = mkqp(pd, cq)
mr = MR(pd, SIZE * DEPTH, RW)
me = {'qpn': qp.qp_num, 'gid': str(ctx.query_gid(1, gid)),
      'addr': mr.buf, 'rkey': mr.rkey}
with open(os.path.join(xdir, role + '.tmp'), 'w') as f:
    json.dump(me, f)
os.rename(os.path.join(xdir, role + '.tmp'), os.path.join(xdir, role))
end = time.time() + 60
while not os.path.exists(os.path.join(xdir, peer)):
    if time.time() > end:
        tap(False, role + ': peer never showed up')
        sys.exit(1)
    time.sleep(0.05)
with open(os.path.join(xdir, peer)) as f:
    you = json.load(f)
connect(qp, gid, GID(you['gid']), you['qpn'], timeout=14, retry_cnt=3,
        mtu=e.IBV_MTU_4096)


def post(i):
    wr = SendWR(wr_id=i, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(mr.buf + (i % DEPTH) * SIZE, SIZE, mr.lkey)])
    wr.set_wr_rdma(you['rkey'], you['addr'] + (i % DEPTH) * SIZE)
    qp.post_send(wr)


nxt, done, first_err, flushed, other = 0, 0, None, 0, 0
for nxt in range(DEPTH):
    post(nxt)
nxt = DEPTH
end = time.time() + 120
while time.time() < end:
    n, wcs = cq.poll(8)
    for w in wcs[:n] if n > 0 else []:
        if w.status == e.IBV_WC_SUCCESS and first_err is None:
            done += 1
            if done == 50 and role == 'survivor':
                open(os.path.join(xdir, 'running'), 'w').close()
            post(nxt)
            nxt += 1
        elif first_err is None:
            first_err = w.status
        elif w.status == e.IBV_WC_WR_FLUSH_ERR:
            flushed += 1
        else:
            other += 1
    if first_err is not None and flushed == DEPTH - 1:
        break
    if n <= 0:
        time.sleep(0.001)

if role == 'victim':
    sys.exit(1)     # killed before this, normally
tap(done >= 50, 'survivor: RDMA WRITEs completed while the peer lived (%d)'
    % done)
# Process exit tears the victim's objects down in uverbs' order: if its
# MR goes before its QP, the QP still answers and NAKs the WRITE with a
# remote access error (IBTA 9.7.5.2.4); once the QP is gone nothing
# answers and the retries run out.  Both are the spec's outcome.
tap(first_err in (e.IBV_WC_RETRY_EXC_ERR, e.IBV_WC_REM_ACCESS_ERR),
    'survivor: first error once the peer is gone is RETRY_EXC_ERR or '
    'REM_ACCESS_ERR (got %s)' % first_err)
tap(wait_state(qp, e.IBV_QPS_ERR), 'survivor: QP in ERR')
tap(flushed == DEPTH - 1 and other == 0,
    'survivor: the other %d outstanding WRITEs flushed (%d flushed, %d '
    'other)' % (DEPTH - 1, flushed, other))
print('peer_kill done')
