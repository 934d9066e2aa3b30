#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Deregistering an MR while RDMA WRITEs stream into it.

  rc_mr_race.py owner|writer DEV GID-SUFFIX DIR

The writer streams 64 KiB RDMA WRITEs (8 outstanding) into the owner's
MR, each with a new fill byte, after both swapped QP number, GID,
address and rkey through files in DIR.  After 50 completions it writes
DIR/running; the owner then deregisters the MR, its QP left alone, while
packets keep arriving (the responder places them in softirq on another
CPU than the deregistering process).  The data path holds no reference
on an MR (sroce_mem_find()): deregistration must still wait for every
placement that found the MR, and refuse every later one.

Owner: dereg succeeds; no byte of the buffer (the owner's own memory,
registered by address) changes once it returned; the next WRITE is NAKed
with an access error, so its QP goes to ERR.  Writer: the first error is
REM_ACCESS_ERR (IBTA 9.7.5.2.4), its QP goes to ERR and the WRITEs still
outstanding are flushed.
"""
import ctypes
import mmap
import os
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import GID
from pyverbs.mr import MR
from pyverbs.wr import SGE, SendWR

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyv_rc import (RW, connect, endpoint, exchange, stream,  # noqa
                    tap, tap_torn_down, wait_file, wait_state)

role, dev, suffix, xdir = sys.argv[1:5]
peer = 'writer' if role == 'owner' else 'owner'
SIZE, DEPTH = 65536, 8

ctx, gid, pd, cq, qp = endpoint(dev, suffix)
buf = mmap.mmap(-1, SIZE * DEPTH)
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
mr = MR(pd, SIZE * DEPTH, RW, address=addr)
me = {'qpn': qp.qp_num, 'gid': str(ctx.query_gid(1, gid)),
      'addr': addr, 'rkey': mr.rkey}
you = exchange(xdir, role, peer, me)
connect(qp, gid, GID(you['gid']), you['qpn'], timeout=14, retry_cnt=3,
        mtu=e.IBV_MTU_4096)

if role == 'owner':
    if not wait_file(os.path.join(xdir, 'running'), 120):
        tap(False, 'owner: the writer never got going')
        sys.exit(1)
    try:
        mr.close()
        ok = True
    except Exception as ex:  # pylint: disable=broad-except
        print('# dereg: %s' % ex)
        ok = False
    snap = bytes(buf)
    tap(ok, 'owner: deregistration with WRITEs arriving succeeds')
    tap(snap.strip(b'\0') != b'',
        'owner: WRITEs had placed data before the deregistration')
    tap(wait_state(qp, e.IBV_QPS_ERR),
        'owner: the next WRITE is refused, the QP goes to ERR')
    time.sleep(0.5)
    tap(bytes(buf) == snap,
        'owner: no byte changed once deregistration returned')
    open(os.path.join(xdir, 'owner.done'), 'w').close()
    print('mr_race done')
    sys.exit(0)


def post(i):
    off = (i % DEPTH) * SIZE
    buf[off:off + SIZE] = bytes([1 + i % 255]) * SIZE
    wr = SendWR(wr_id=i, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(addr + off, SIZE, mr.lkey)])
    wr.set_wr_rdma(you['rkey'], you['addr'] + off)
    qp.post_send(wr)


done, first_err, flushed, other = stream(
    cq, post, DEPTH, mark=os.path.join(xdir, 'running'))

tap(done >= 50, 'writer: RDMA WRITEs completed before the deregistration '
    '(%d)' % done)
tap(first_err == e.IBV_WC_REM_ACCESS_ERR,
    'writer: first error once the MR is gone is REM_ACCESS_ERR (got %s)'
    % first_err)
tap_torn_down('writer', qp, DEPTH, flushed, other)
wait_file(os.path.join(xdir, 'owner.done'), 30)
print('mr_race done')
