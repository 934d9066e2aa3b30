# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Targeted checks of the security issue's defects (t_security.sh), on
one device talking to itself over its IPv4 GID (198.18.0.1).

  sec_checks.py DIR ah-pd     a UD send through an AH of another PD
  sec_checks.py DIR write-range
                              an RC WRITE whose RETH range overruns the
                              target MR after a few MTUs
  sec_checks.py DIR churn N   N MR registrations, windows and QPs made and
                              destroyed (t_security counts grace periods)
"""
import sys

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

sys.path.insert(0, sys.argv[1])
# pylint: disable=wrong-import-position
from pyv_rc import RW, connect, gid_index, mkqp, poll, tap, wait_state

ctx = Context(name='sroce0')
GID4 = gid_index(ctx, 'ffff:c612:0001')
QKEY = 0x11111111


def ud_qp(pd, cq):
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=4, max_recv_wr=4)))
    a = QPAttr(qp_state=e.IBV_QPS_INIT)
    a.qkey = QKEY
    a.pkey_index = 0
    a.port_num = 1
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
              e.IBV_QP_QKEY)
    qp.modify(QPAttr(qp_state=e.IBV_QPS_RTR), e.IBV_QP_STATE)
    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    a.sq_psn = 0
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)
    return qp


def ah_pd():
    """Item 4: an AH is usable only by QPs of its own PD."""
    pd1, pd2 = PD(ctx), PD(ctx)
    cq = CQ(ctx, 16)
    snd, rcv = ud_qp(pd1, cq), ud_qp(pd1, cq)
    rmr = MR(pd1, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    smr = MR(pd1, 64, 0)
    # Room for both: whatever is sent arrives.
    for i in range(2):
        rcv.post_recv(RecvWR(num_sge=1, sg=[SGE(rmr.buf + 2048 * i, 2048,
                                                 rmr.lkey)]))
    gr = GlobalRoute(dgid=ctx.query_gid(1, GID4), sgid_index=GID4)
    attr = AHAttr(gr=gr, is_global=1, port_num=1)
    recvd = 0
    cases = (('an AH of another PD', AH(pd2, attr=attr),
              e.IBV_WC_LOC_QP_OP_ERR),
             ('an AH of its own PD', AH(pd1, attr=attr), e.IBV_WC_SUCCESS))
    for i, (desc, ah, want) in enumerate(cases):
        wr = SendWR(wr_id=i, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(smr.buf, 64, smr.lkey)])
        wr.set_wr_ud(ah, rcv.qp_num, QKEY)
        snd.post_send(wr)
        wc = poll(cq, 10)
        while wc is not None and wc.qp_num != snd.qp_num:
            recvd += wc.status == e.IBV_WC_SUCCESS
            wc = poll(cq, 10)
        got = wc.status if wc else None
        tap(got == want, 'UD send through %s completes with status %d '
            '(got %s)' % (desc, want, got))
        if want != e.IBV_WC_SUCCESS:
            # IBTA 10.3.1: a UD send error takes the QP to SQE.
            tap(wait_state(snd, e.IBV_QPS_SQE), 'the UD QP went to SQE')
            snd.modify(QPAttr(qp_state=e.IBV_QPS_RTS), e.IBV_QP_STATE)
    wc = poll(cq, 2)
    while wc is not None:
        recvd += wc.qp_num == rcv.qp_num and wc.status == e.IBV_WC_SUCCESS
        wc = poll(cq, 2)
    tap(recvd == 1, 'only the send through its own PD\'s AH arrived '
        '(%d receives)' % recvd)


def write_range():
    """Item 8: a WRITE's whole RETH range is checked at its first packet:
    the target's bytes are untouched when the range overruns the MR."""
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    c, s = mkqp(pd, cq), mkqp(pd, cq)
    for qp, peer in ((c, s), (s, c)):
        connect(qp, GID4, ctx.query_gid(1, GID4), peer.qp_num,
                timeout=10, retry_cnt=1)
    src = MR(pd, 8192, RW)
    src.write(b'\xab' * 8192, 8192)
    dst = MR(pd, 4096, RW)
    dst.write(b'\x5a' * 4096, 4096)
    # 8 KiB at MTU 1024 is eight packets; the MR ends after the fourth.
    wr = SendWR(opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(src.buf, 8192, src.lkey)])
    wr.set_wr_rdma(dst.rkey, dst.buf)
    c.post_send(wr)
    wc = poll(cq)
    got = wc.status if wc else None
    tap(got == e.IBV_WC_REM_ACCESS_ERR,
        'WRITE overrunning the target MR: REM_ACCESS_ERR (got %s)' % got)
    tap(dst.read(4096, 0) == b'\x5a' * 4096,
        'WRITE overrunning the target MR placed no byte in it')
    tap(wait_state(s, e.IBV_QPS_ERR), 'responder QP in ERR')


def churn(n):
    """Item 12: objects made and destroyed; the suite counts how many
    grace periods sroce waited for meanwhile."""
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    for _ in range(n):
        MR(pd, 4096, RW | e.IBV_ACCESS_MW_BIND).close()
        MW(pd, e.IBV_MW_TYPE_2).close()
    for _ in range(max(n // 10, 1)):
        mkqp(pd, cq, depth=4).close()
    tap(True, 'churn: %d MRs, %d windows, %d QPs made and destroyed'
        % (n, n, max(n // 10, 1)))


CMDS = {'ah-pd': ah_pd, 'write-range': write_range}
if sys.argv[2] == 'churn':
    churn(int(sys.argv[3]))
else:
    CMDS[sys.argv[2]]()
print('done')
