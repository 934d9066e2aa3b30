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
import os
import sys

import pyverbs.enums as e
from pyverbs.addr import GID
from pyverbs.mr import MR
from pyverbs.wr import SGE, SendWR

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyv_rc import (RW, connect, endpoint, exchange, stream,  # noqa
                    tap, tap_torn_down)

role, dev, suffix, xdir = sys.argv[1:5]
peer = 'survivor' if role == 'victim' else 'victim'
SIZE, DEPTH = 65536, 8

ctx, gid, pd, cq, qp = endpoint(dev, suffix)
mr = MR(pd, SIZE * DEPTH, RW)
me = {'qpn': qp.qp_num, 'gid': str(ctx.query_gid(1, gid)),
      'addr': mr.buf, 'rkey': mr.rkey}
you = exchange(xdir, role, peer, me)
connect(qp, gid, GID(you['gid']), you['qpn'], timeout=14, retry_cnt=3,
        mtu=e.IBV_MTU_4096)


def post(i):
    wr = SendWR(wr_id=i, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(mr.buf + (i % DEPTH) * SIZE, SIZE, mr.lkey)])
    wr.set_wr_rdma(you['rkey'], you['addr'] + (i % DEPTH) * SIZE)
    qp.post_send(wr)


done, first_err, flushed, other = stream(
    cq, post, DEPTH,
    mark=os.path.join(xdir, 'running') if role == 'survivor' else None)

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
tap_torn_down('survivor', qp, DEPTH, flushed, other)
print('peer_kill done')
