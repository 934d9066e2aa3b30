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
import json
import mmap
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
peer = 'writer' if role == 'owner' else 'owner'
SIZE, DEPTH = 65536, 8

ctx = Context(name=dev)
gid = gid_index(ctx, suffix)
pd = PD(ctx)
cq = CQ(ctx, 64)
qp = mkqp(pd, cq)
buf = mmap.mmap(-1, SIZE * DEPTH)
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
mr = MR(pd, SIZE * DEPTH, RW, address=addr)
me = {'qpn': qp.qp_num, 'gid': str(ctx.query_gid(1, gid)),
      'addr': addr, 'rkey': mr.rkey}
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

if role == 'owner':
    end = time.time() + 120
    while not os.path.exists(os.path.join(xdir, 'running')):
        if time.time() > end:
            tap(False, 'owner: the writer never got going')
            sys.exit(1)
        time.sleep(0.01)
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
            if done == 50:
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

tap(done >= 50, 'writer: RDMA WRITEs completed before the deregistration '
    '(%d)' % done)
tap(first_err == e.IBV_WC_REM_ACCESS_ERR,
    'writer: first error once the MR is gone is REM_ACCESS_ERR (got %s)'
    % first_err)
tap(wait_state(qp, e.IBV_QPS_ERR), 'writer: QP in ERR')
tap(flushed == DEPTH - 1 and other == 0,
    'writer: the other %d outstanding WRITEs flushed (%d flushed, %d '
    'other)' % (DEPTH - 1, flushed, other))
end = time.time() + 30
while not os.path.exists(os.path.join(xdir, 'owner.done')):
    if time.time() > end:
        break
    time.sleep(0.05)
print('mr_race done')
