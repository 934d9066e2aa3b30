#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A misaligned atomic on the wire: the responder's answer (t_rcerr.sh).

  rc_atomic_align.py DEV GID_SUFFIX

rdma-core's rxe provider refuses an atomic whose remote address is not
8-byte aligned at post time (EINVAL), so the kernel never sees one that
way.  The WQE is built by hand instead, as rc_flush.py builds a FLUSH: an
RDMA READ of 8 bytes is posted with ibv_wr_rdma_read(), and before
ibv_wr_complete() rings the doorbell its slot in the send ring (the rxe
ABI's struct rxe_send_wqe, found by its wr_id) is rewritten into an
IB_WR_ATOMIC_FETCH_AND_ADD with the atomic fields.

First an aligned FETCH_AND_ADD built that way, which must work (the
rewrite itself is right: the old value comes back, the sum is in place);
then one at a misaligned address: the responder NAKs it as an invalid
request (IBTA 9.4.5: atomics need a naturally aligned address), the
requester completes it with IB_WC_REM_INV_REQ_ERR, both QPs go to ERR,
and the responder's memory is untouched.  Two QPs of DEV talk through
its GID ending in GID_SUFFIX (loopback).
"""
import ctypes
import os
import random
import struct
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.wr import SGE

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyv_rc import RW, connect, gid_index, poll, tap, wait_state  # noqa

DEV, SFX = sys.argv[1:3]
# struct rxe_send_wqe (uapi rdma_user_rxe.h): wr.opcode, and the atomic
# member of the wr union: remote_addr, compare_add, swap, rkey.
OFF_OPCODE, OFF_ATOMIC = 12, 24
WR_FETCH_ADD = 6                        # IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD

ctx = Context(name=DEV)
gid = gid_index(ctx, SFX)
pd = PD(ctx)


def uverbs_maps():
    """Writable mappings of the uverbs device: the rings."""
    out = []
    with open('/proc/self/maps') as f:
        for line in f:
            if '/dev/infiniband/uverbs' in line and line.split()[1][1] == 'w':
                lo, hi = (int(x, 16) for x in line.split()[0].split('-'))
                out.append((lo, hi - lo))
    return out


def patch_fetch_add(wr_id, rkey, addr, add):
    """Turn the RDMA READ posted with @wr_id into a FETCH_AND_ADD of @add
    at @addr; True if its slot was found."""
    key = struct.pack('<Q', wr_id)
    for lo, size in uverbs_maps():
        mem = ctypes.string_at(lo, size)
        i = mem.find(key)
        while i >= 0:
            op = struct.unpack_from('<I', mem, i + OFF_OPCODE)[0]
            if i % 8 == 0 and op == e.IBV_WR_RDMA_READ:
                a = lo + i
                ctypes.memmove(a + OFF_OPCODE,
                               struct.pack('<I', WR_FETCH_ADD), 4)
                ctypes.memmove(a + OFF_ATOMIC,
                               struct.pack('<QQQI', addr, add, 0, rkey), 28)
                return True
            i = mem.find(key, i + 1)
    return False


def pair():
    """A QPEx requester (RDMA READ posting) and a plain responder, RTS."""
    ccq, scq = CQ(ctx, 16), CQ(ctx, 16)
    cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1, max_recv_sge=1)
    c = QPEx(ctx, QPInitAttrEx(
        qp_type=e.IBV_QPT_RC, scq=ccq, rcq=ccq, cap=cap, pd=pd,
        comp_mask=e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        send_ops_flags=e.IBV_QP_EX_WITH_RDMA_READ))
    s = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=scq, rcq=scq, cap=cap))
    connect(c, gid, ctx.query_gid(1, gid), s.qp_num)
    connect(s, gid, ctx.query_gid(1, gid), c.qp_num)
    return ccq, c, s


def fetch_add(c, lmr, rmr, off, add):
    """Post a hand-built FETCH_AND_ADD at @rmr + @off into @lmr's first 8
    bytes; its wr_id, or None if the READ's slot was not found."""
    wr_id = random.getrandbits(63) | 1
    c.wr_start()
    c.wr_id = wr_id
    c.wr_flags = e.IBV_SEND_SIGNALED
    c.wr_rdma_read(rmr.rkey, rmr.buf + off)
    c.wr_set_sge(SGE(lmr.buf, 8, lmr.lkey))
    found = patch_fetch_add(wr_id, rmr.rkey, rmr.buf + off, add)
    c.wr_complete()
    return wr_id if found else None


lmr = MR(pd, 4096, RW)
rmr = MR(pd, 4096, RW)
old = struct.pack('<Q', 0x1111222233334444)
pattern = bytes(range(8)) + old + bytes(range(8, 16))

# Aligned: the hand-built WQE does what ibv_post_send's would.
ccq, c, s = pair()
rmr.write(pattern, len(pattern))
lmr.write(b'\0' * 8, 8)
wid = fetch_add(c, lmr, rmr, 8, 5)
w = poll(ccq)
got = (w.wr_id == wid, w.status, w.opcode) if w else None
tap(wid is not None and got == (True, e.IBV_WC_SUCCESS, e.IBV_WC_FETCH_ADD)
    and lmr.read(8, 0) == old and
    rmr.read(8, 8) == struct.pack('<Q', 0x1111222233334444 + 5) and
    rmr.read(8, 0) == pattern[:8] and rmr.read(8, 16) == pattern[16:],
    'hand-built FETCH_AND_ADD at an aligned address: success, old value '
    'fetched, sum in place, nothing else written (completion %s)' % (got,))
del c, s

# Misaligned by 4: NAKed as an invalid request, nothing written.
ccq, c, s = pair()
rmr.write(pattern, len(pattern))
wid = fetch_add(c, lmr, rmr, 12, 5)
w = poll(ccq)
got = (w.wr_id == wid, w.status) if w else None
tap(wid is not None and got == (True, e.IBV_WC_REM_INV_REQ_ERR),
    'FETCH_AND_ADD at a misaligned address (+4): the requester completes '
    'with IBV_WC_REM_INV_REQ_ERR (completion %s)' % (got,))
tap(wait_state(c, e.IBV_QPS_ERR) and wait_state(s, e.IBV_QPS_ERR),
    'misaligned FETCH_AND_ADD: requester and responder QPs in ERR')
tap(rmr.read(len(pattern), 0) == pattern,
    'misaligned FETCH_AND_ADD: the responder memory is untouched')
del c, s
print('done')
