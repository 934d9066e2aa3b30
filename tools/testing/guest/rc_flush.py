#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""FLUSH and ATOMIC WRITE (IBTA 1.5 memory placement extensions) over RC,
from a requester QP on one device to a responder QP on another (or the
same) device.

  rc_flush.py REQ_DEV REQ_GID_SUFFIX RESP_DEV RESP_GID_SUFFIX LABEL \\
              flush|noflush|atomic|flush1 [strict]

flush: the kernel has FLUSH (6.2+): MRs and QPs take IB_ACCESS_FLUSH_GLOBAL,
       and FLUSHes must succeed, complete as IB_WC_FLUSH, and fail with
       the IBTA status where the rights or the range say so.
noflush: such MRs are refused, and a FLUSH to any MR is an access error.
atomic: ATOMIC WRITE only.
flush1: one WRITE and a FLUSH of its range only.
strict: the responder is sroce, which is also checked on what rdma_rxe
       handles differently (reserved selectivity level, persistence).

Debian 12's rdma-core (44) has no ibv_wr_flush() (it came in 47), so a
FLUSH is posted the way later rdma-core posts it: an RDMA READ is built
with ibv_wr_rdma_read(), and before ibv_wr_complete() rings the doorbell
its slot in the send ring (the rxe ABI's struct rxe_send_wqe, found by its
wr_id) is rewritten into IB_WR_FLUSH with the FLUSH fields.
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

REQ_DEV, REQ_SFX, RESP_DEV, RESP_SFX, LABEL = sys.argv[1:6]
MODE = sys.argv[6]
FLUSH = MODE in ('flush', 'flush1')
STRICT = 'strict' in sys.argv[7:]

ACCESS_FLUSH_GLOBAL = 1 << 8            # IB_UVERBS_ACCESS_FLUSH_GLOBAL
WR_FLUSH = 14                           # IB_UVERBS_WR_FLUSH
WC_FLUSH = 8                            # IB_UVERBS_WC_FLUSH
FLUSH_GLOBAL, FLUSH_PERSISTENT = 1, 2   # enum ib_placement_type
SEL_RANGE, SEL_MR = 0, 1                # enum ib_selectivity_level
# struct rxe_send_wqe (uapi rdma_user_rxe.h): offsets the FLUSH needs.
OFF_OPCODE, OFF_FLUSH, OFF_DMA_LEN, OFF_DMA_RESID = 12, 24, 184, 188
SIZE = 65536
POLL = float(os.environ.get('RC_FLUSH_POLL', '30'))   # s per completion

rctx = Context(name=REQ_DEV)
sctx = rctx if RESP_DEV == REQ_DEV else Context(name=RESP_DEV)
rgid, sgid = gid_index(rctx, REQ_SFX), gid_index(sctx, RESP_SFX)
rpd, spd = PD(rctx), PD(sctx)


def uverbs_maps():
    """Writable mappings of the uverbs device: the rings."""
    out = []
    with open('/proc/self/maps') as f:
        for line in f:
            if '/dev/infiniband/uverbs' in line:
                lo, hi = (int(x, 16) for x in line.split()[0].split('-'))
                if line.split()[1][1] == 'w':
                    out.append((lo, hi - lo))
    return out


def patch_flush(wr_id, rkey, addr, length, ptype, level):
    """Turn the RDMA READ posted with @wr_id into a FLUSH; True if found."""
    key = struct.pack('<Q', wr_id)
    for lo, size in uverbs_maps():
        mem = ctypes.string_at(lo, size)
        i = mem.find(key)
        while i >= 0:
            op = struct.unpack_from('<I', mem, i + OFF_OPCODE)[0]
            if i % 8 == 0 and op == e.IBV_WR_RDMA_READ:
                a = lo + i
                ctypes.memmove(a + OFF_OPCODE, struct.pack('<I', WR_FLUSH), 4)
                ctypes.memmove(a + OFF_FLUSH, struct.pack(
                    '<QIIBB', addr, length, rkey, ptype, level), 18)
                ctypes.memmove(a + OFF_DMA_LEN,
                               struct.pack('<II', length, length), 8)
                return True
            i = mem.find(key, i + 1)
    return False


def post_flush(qp, rkey, addr, length, ptype=FLUSH_GLOBAL, level=SEL_RANGE):
    wr_id = random.getrandbits(63) | 1
    qp.wr_start()
    qp.wr_id = wr_id
    qp.wr_flags = e.IBV_SEND_SIGNALED
    qp.wr_rdma_read(rkey, addr)
    found = patch_flush(wr_id, rkey, addr, length, ptype, level)
    qp.wr_complete()
    return wr_id if found else None


def pair(qp_flush=True):
    """A QPEx requester and a plain responder, connected, RTS both."""
    ccq, scq = CQ(rctx, 64), CQ(sctx, 64)
    cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                max_recv_sge=1)
    ops = (e.IBV_QP_EX_WITH_RDMA_READ | e.IBV_QP_EX_WITH_RDMA_WRITE |
           e.IBV_QP_EX_WITH_ATOMIC_WRITE)
    c = QPEx(rctx, QPInitAttrEx(
        qp_type=e.IBV_QPT_RC, scq=ccq, rcq=ccq, cap=cap, pd=rpd,
        comp_mask=e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        send_ops_flags=ops))
    s = QP(spd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=scq, rcq=scq, cap=cap))
    connect(c, rgid, sctx.query_gid(1, sgid), s.qp_num)
    connect(s, sgid, rctx.query_gid(1, rgid), c.qp_num,
            access=(ACCESS_FLUSH_GLOBAL if qp_flush and FLUSH else 0))
    return ccq, c, s


def completes(cq, wr_id, status, opcode=None):
    w = poll(cq, POLL)
    if w is None:
        return 'no completion'
    if w.wr_id != wr_id or w.status != status or \
            (opcode is not None and w.opcode != opcode):
        return 'wr_id %#x status %d opcode %d' % (w.wr_id, w.status,
                                                  w.opcode)
    return ''


# Responder memory: one MR with FLUSH rights (where the kernel has them),
# one without.
try:
    fmr = MR(spd, SIZE, RW | ACCESS_FLUSH_GLOBAL)
except Exception as ex:  # pylint: disable=broad-except
    fmr = None
    ferr = str(ex)
nmr = MR(spd, SIZE, RW)
src = MR(rpd, SIZE, RW)
if FLUSH:
    tap(fmr is not None, '%s: MR with IB_ACCESS_FLUSH_GLOBAL registered'
        % LABEL)
elif MODE == 'atomic':
    fmr = None
else:
    tap(fmr is None, '%s: MR with IB_ACCESS_FLUSH_GLOBAL refused (%s)'
        % (LABEL, 'registered' if fmr else ferr.split('.')[0]))

if FLUSH and fmr is not None:
    ccq, c, s = pair()
    # WRITE a pattern, FLUSH the range: in order, both succeed, data there.
    data = bytes((i * 13 + 7) & 0xff for i in range(4096))
    src.write(data, len(data))
    fmr.write(b'\0' * SIZE, SIZE)
    c.wr_start()
    c.wr_id = 1
    c.wr_flags = e.IBV_SEND_SIGNALED
    c.wr_rdma_write(fmr.rkey, fmr.buf + 512)
    c.wr_set_sge(SGE(src.buf, len(data), src.lkey))
    c.wr_complete()
    wid = post_flush(c, fmr.rkey, fmr.buf + 512, len(data))
    tap(wid is not None, '%s: FLUSH WQE written into the send ring' % LABEL)
    r1 = completes(ccq, 1, e.IBV_WC_SUCCESS, e.IBV_WC_RDMA_WRITE)
    r2 = completes(ccq, wid, e.IBV_WC_SUCCESS, WC_FLUSH)
    tap(not r1 and not r2, '%s: WRITE then FLUSH (range, global) complete '
        'with IB_WC_SUCCESS, the FLUSH as IB_WC_FLUSH %s' % (LABEL, r1 + r2))
    tap(fmr.read(len(data), 512) == data,
        '%s: the written bytes are in the flushed range' % LABEL)
    if MODE == 'flush1':
        print('done')
        sys.exit(0)
    # Whole-region and zero-length FLUSHes.
    wid = post_flush(c, fmr.rkey, 0, 0, level=SEL_MR)
    r = completes(ccq, wid, e.IBV_WC_SUCCESS, WC_FLUSH)
    tap(not r, '%s: FLUSH of the whole MR succeeds %s' % (LABEL, r))
    wid = post_flush(c, fmr.rkey, fmr.buf, 0)
    r = completes(ccq, wid, e.IBV_WC_SUCCESS, WC_FLUSH)
    tap(not r, '%s: zero-length FLUSH succeeds %s' % (LABEL, r))
    tap(wait_state(c, e.IBV_QPS_RTS, 1) and wait_state(s, e.IBV_QPS_RTS, 1),
        '%s: both QPs still RTS after the good FLUSHes' % LABEL)
    del c, s

# ATOMIC WRITE (answered by a zero-length READ response), then a FLUSH of
# its 8 bytes where there is FLUSH.
ccq, c, s = pair()
amr = fmr if FLUSH and fmr is not None else nmr
val = struct.pack('<Q', 0x0123456789abcdef)
amr.write(b'\0' * 16, 16)
c.wr_start()
c.wr_id = 2
c.wr_flags = e.IBV_SEND_SIGNALED
c.wr_atomic_write(amr.rkey, amr.buf + 8, val)
c.wr_complete()
r = completes(ccq, 2, e.IBV_WC_SUCCESS, e.IBV_WC_ATOMIC_WRITE)
if amr is fmr:
    wid = post_flush(c, amr.rkey, amr.buf + 8, 8)
    r += completes(ccq, wid, e.IBV_WC_SUCCESS, WC_FLUSH)
tap(not r and amr.read(8, 8) == val and amr.read(8, 0) == b'\0' * 8 and
    amr.read(8, 16) == b'\0' * 8,
    '%s: ATOMIC WRITE%s succeeds, its 8 bytes land, no others %s'
    % (LABEL, ' then FLUSH' if amr is fmr else '', r))
del c, s

if MODE == 'atomic':
    print('done')
    sys.exit(0)

# Bad FLUSHes: each completes in error at the requester, the QP in ERR.
bad = [('an MR without FLUSH rights', nmr, 0, 16, FLUSH_GLOBAL, SEL_RANGE,
        True, e.IBV_WC_REM_ACCESS_ERR)]
if FLUSH and fmr is not None:
    bad += [('a range past the MR end', fmr, SIZE - 8, 16, FLUSH_GLOBAL,
             SEL_RANGE, True, e.IBV_WC_REM_ACCESS_ERR),
            ('a responder QP without FLUSH rights', fmr, 0, 16,
             FLUSH_GLOBAL, SEL_RANGE, False, None)]
    if STRICT:
        bad += [('persistence (never granted)', fmr, 0, 16,
                 FLUSH_PERSISTENT, SEL_RANGE, True, e.IBV_WC_REM_ACCESS_ERR),
                ('a reserved selectivity level', fmr, 0, 16, FLUSH_GLOBAL,
                 2, True, e.IBV_WC_REM_INV_REQ_ERR)]
for desc, mr, off, length, ptype, level, qpf, want in bad:
    ccq, c, s = pair(qp_flush=qpf)
    wid = post_flush(c, mr.rkey, mr.buf + off, length, ptype, level)
    w = poll(ccq, POLL)
    # The QP rights: sroce answers REM_ACCESS_ERR, rdma_rxe REM_INV_REQ_ERR.
    ok_st = (want,) if want else (e.IBV_WC_REM_ACCESS_ERR,
                                  e.IBV_WC_REM_INV_REQ_ERR)
    if want is None and STRICT:
        ok_st = (e.IBV_WC_REM_ACCESS_ERR,)
    tap(w is not None and w.wr_id == wid and w.status in ok_st,
        '%s: FLUSH to %s completes with %s (got %s)' %
        (LABEL, desc, '/'.join(str(x) for x in ok_st),
         w.status if w else None))
    tap(wait_state(c, e.IBV_QPS_ERR), '%s: FLUSH to %s: requester QP in ERR'
        % (LABEL, desc))
    del c, s
print('done')
