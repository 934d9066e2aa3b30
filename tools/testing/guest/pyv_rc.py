# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""RC queue-pair helpers for the pyverbs guest tests (t_rcerr.sh,
rc_rnr.py, rc_flush.py, rc_peer_kill.py, rc_mr_race.py): TAP output, QP
creation, connection, polling, and the two-process exchange and WRITE
stream."""
import json
import os
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr

RW = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
      e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)


def tap(cond, desc):
    """One result line; the shell suite turns it into TAP."""
    print('%s - %s' % ('ok' if cond else 'not ok', desc))
    sys.stdout.flush()
    return cond


def gid_index(ctx, suffix):
    """Index of the GID of port 1 ending in @suffix (e.g. 'c612:0001')."""
    for i in range(16):
        try:
            if str(ctx.query_gid(1, i)).endswith(suffix):
                return i
        except Exception:  # pylint: disable=broad-except
            pass
    raise RuntimeError('no GID ending in ' + suffix)


def mkqp(pd, cq, depth=64, sge=1):
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                             cap=QPCap(max_send_wr=depth, max_recv_wr=depth,
                                       max_send_sge=sge, max_recv_sge=sge)))


def endpoint(dev, suffix, cqe=64):
    """Context of @dev, index of its GID ending in @suffix, a PD, a CQ
    and an RC QP on it: one end of a two-process test."""
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, cqe)
    return ctx, gid_index(ctx, suffix), pd, cq, mkqp(pd, cq)


def connect(qp, sgid_index, dgid, dqpn, timeout=14, retry_cnt=7,
            rnr_retry=7, min_rnr_timer=1, mtu=e.IBV_MTU_1024, access=0):
    """RESET -> INIT -> RTR -> RTS towards @dqpn at @dgid (a GID); the QP
    grants remote write, read and atomics, and @access too."""
    a = QPAttr(qp_state=e.IBV_QPS_INIT)
    a.pkey_index = 0
    a.port_num = 1
    a.qp_access_flags = (e.IBV_ACCESS_REMOTE_WRITE |
                         e.IBV_ACCESS_REMOTE_READ |
                         e.IBV_ACCESS_REMOTE_ATOMIC | access)
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
              e.IBV_QP_ACCESS_FLAGS)
    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    gr = GlobalRoute(dgid=dgid, sgid_index=sgid_index)
    a.ah_attr = AHAttr(gr=gr, is_global=1, port_num=1)
    a.path_mtu = mtu
    a.dest_qp_num = dqpn
    a.rq_psn = 0x100
    a.max_dest_rd_atomic = 4
    a.min_rnr_timer = min_rnr_timer
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
              e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN |
              e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    a.sq_psn = 0x100
    a.timeout = timeout
    a.retry_cnt = retry_cnt
    a.rnr_retry = rnr_retry
    a.max_rd_atomic = 4
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN | e.IBV_QP_TIMEOUT |
              e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
              e.IBV_QP_MAX_QP_RD_ATOMIC)


def poll(cq, secs=30):
    """The next completion, or None after @secs."""
    end = time.time() + secs
    while time.time() < end:
        n, wcs = cq.poll(1)
        if n > 0:
            return wcs[0]
        time.sleep(0.001)
    return None


def state(qp):
    return qp.query(e.IBV_QP_STATE)[0].qp_state


def wait_state(qp, want, secs=20):
    end = time.time() + secs
    while time.time() < end:
        if state(qp) == want:
            return True
        time.sleep(0.01)
    return False


def wait_file(path, secs):
    """Whether @path shows up within @secs."""
    end = time.time() + secs
    while not os.path.exists(path):
        if time.time() > end:
            return False
        time.sleep(0.01)
    return True


def exchange(xdir, role, peer, me, secs=60):
    """Publish @me (a dict) as DIR/@role, atomically, and return what
    @peer published; exit with a failed check if it never does."""
    tmp = os.path.join(xdir, role + '.tmp')
    with open(tmp, 'w') as f:
        json.dump(me, f)
    os.rename(tmp, os.path.join(xdir, role))
    if not wait_file(os.path.join(xdir, peer), secs):
        tap(False, role + ': peer never showed up')
        sys.exit(1)
    with open(os.path.join(xdir, peer)) as f:
        return json.load(f)


def stream(cq, post, depth, mark=None, mark_at=50, secs=120):
    """Keep @depth WRs posted (post(i) posts the i-th) and repost on
    each success until the first error, then count the flushes of the
    rest.  Touches @mark after @mark_at successes.

    Return: (successes, first error status or None, flushed, other)."""
    done, first_err, flushed, other = 0, None, 0, 0
    for i in range(depth):
        post(i)
    nxt = depth
    end = time.time() + secs
    while time.time() < end:
        n, wcs = cq.poll(8)
        for w in wcs[:n] if n > 0 else []:
            if w.status == e.IBV_WC_SUCCESS and first_err is None:
                done += 1
                if done == mark_at and mark:
                    open(mark, 'w').close()
                post(nxt)
                nxt += 1
            elif first_err is None:
                first_err = w.status
            elif w.status == e.IBV_WC_WR_FLUSH_ERR:
                flushed += 1
            else:
                other += 1
        if first_err is not None and flushed == depth - 1:
            break
        if n <= 0:
            time.sleep(0.001)
    return done, first_err, flushed, other


def tap_torn_down(who, qp, depth, flushed, other):
    """The checks after a stream's first error: the QP is in ERR and the
    other outstanding WRs were flushed, nothing else."""
    tap(wait_state(qp, e.IBV_QPS_ERR), who + ': QP in ERR')
    tap(flushed == depth - 1 and other == 0,
        '%s: the other %d outstanding WRITEs flushed (%d flushed, %d '
        'other)' % (who, depth - 1, flushed, other))
