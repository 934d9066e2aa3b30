#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Queue pair and SRQ objects through the rxe user ABI (pyverbs): creation
# with the granted caps, the IBTA 10.3 state machine with per-transition attribute
# masks, query returning what was set, refusals, and teardown.  Every
# state is the kernel's answer (ibv_query_qp), asked after each
# transition and each refused one: libibverbs' own copy (ibv_qp.state,
# pyverbs' qp.qp_state) only echoes what the caller asked for.
set -u
. "$(dirname "$0")/lib.sh"

# 76 checks from the pyverbs script, its end, the unload.
tap_plan 78
sroce_load || { not_ok "load sroce"; tap_done; exit 1; }
ip netns add peer
veth_pair v0 v1 peer
ip addr add 198.18.0.1/24 dev v0
ip -n peer addr add 198.18.0.2/24 dev v1
rdma link add sroce0 type sroce netdev v0
wait_for 20 gid_present sroce0 0000:0000:0000:0000:0000:ffff:c612:0001

out=$(python3 - <<'PY' 2>&1
import pyverbs.enums as e
from pyverbs.addr import GID, GlobalRoute, AHAttr
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr

import sys
import time
def check(cond, desc):
    print('%s - %s' % ('ok' if cond else 'not ok', desc))
    sys.stdout.flush()

def todo(cond, desc, why):
    """A check of a known gap: a failure is listed, not counted."""
    print(('ok - %s' if cond else 'todo - %s # TODO ' + why) % desc)
    sys.stdout.flush()

NAMES = {e.IBV_QPS_RESET: 'RESET', e.IBV_QPS_INIT: 'INIT',
         e.IBV_QPS_RTR: 'RTR', e.IBV_QPS_RTS: 'RTS', e.IBV_QPS_SQD: 'SQD',
         e.IBV_QPS_SQE: 'SQE', e.IBV_QPS_ERR: 'ERR'}

def kstate(qp):
    """The QP state the kernel reports (ibv_query_qp), by name."""
    try:
        return NAMES.get(qp.query(e.IBV_QP_STATE)[0].qp_state, '?')
    except Exception as ex:
        return 'query failed: %s' % str(ex).splitlines()[-1][:60]

def moved(qp, attr, mask, want, desc):
    """One transition, then the kernel's state: one check."""
    try:
        qp.modify(attr, mask)
    except Exception as ex:
        check(False, desc + ' (refused: %s)' % str(ex).splitlines()[-1][:60])
        return
    st = kstate(qp)
    check(st == want, desc + ': kernel reports %s' % st)

def expect_errno(fn, errno, desc, qp=None, still=None):
    """fn() fails with errno; with @qp, its kernel state is still @still."""
    try:
        fn()
        ok, why = False, 'accepted'
    except Exception as ex:
        s = str(ex)
        ok = ('rrno: %d' % errno) in s or ('returned %d' % errno) in s
        why = s.splitlines()[-1][:80]
    if qp is not None:
        st = kstate(qp)
        ok = ok and st == still
        why += '; kernel reports %s' % st
    check(ok, desc + ' (%s)' % why)

ctx = Context(name='sroce0')
dev = ctx.query_device()
check(dev.max_qp > 0 and dev.max_qp_wr > 0, 'device advertises QPs')
pd = PD(ctx)
cq = CQ(ctx, 256)
v4 = next(i for i in range(16)
          if str(ctx.query_gid(1, i)).endswith('ffff:c612:0001'))

def init_attr(qpt, wr=64, sge=4, inline=0):
    return QPInitAttr(qp_type=qpt, scq=cq, rcq=cq,
                      cap=QPCap(max_send_wr=wr, max_recv_wr=wr,
                                max_send_sge=sge, max_recv_sge=sge,
                                max_inline_data=inline))

S = e.IBV_QP_STATE
for qpt, name in ((e.IBV_QPT_RC, 'RC'), (e.IBV_QPT_UC, 'UC'),
                  (e.IBV_QPT_UD, 'UD')):
    qp = QP(pd, init_attr(qpt, inline=64))
    a, ia = qp.query(e.IBV_QP_CAP)
    check(a.cap.max_send_wr >= 64 and a.cap.max_recv_wr >= 64 and
          a.cap.max_inline_data >= 64, name + ': granted caps >= requested')
    st = kstate(qp)
    check(qp.qp_num >= 16 and st == 'RESET',
          name + ': QPN >= 16, starts in RESET (kernel reports %s)' % st)
    # RESET -> RTS skips states: IBTA 10.3 forbids it.
    bad = QPAttr(qp_state=e.IBV_QPS_RTS)
    expect_errno(lambda: qp.modify(bad, S), 22, name + ': RESET->RTS refused',
                 qp, 'RESET')
    # RESET -> INIT without its required attributes.
    bad = QPAttr(qp_state=e.IBV_QPS_INIT)
    expect_errno(lambda: qp.modify(bad, S), 22,
                 name + ': RESET->INIT without PORT/PKEY refused', qp, 'RESET')
    a = QPAttr(qp_state=e.IBV_QPS_INIT)
    a.pkey_index = 0
    a.port_num = 1
    mask = S | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT
    if qpt == e.IBV_QPT_UD:
        a.qkey = 0x11111111
        mask |= e.IBV_QP_QKEY
    else:
        a.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE | (
            e.IBV_ACCESS_REMOTE_READ if qpt == e.IBV_QPT_RC else 0)
        mask |= e.IBV_QP_ACCESS_FLAGS
    init, init_mask = a, mask
    moved(qp, a, mask, 'INIT', name + ': RESET->INIT')

    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    mask = S
    if qpt != e.IBV_QPT_UD:
        gr = GlobalRoute(dgid=GID('0000:0000:0000:0000:0000:ffff:c612:0002'),
                         sgid_index=v4)
        a.ah_attr = AHAttr(gr=gr, is_global=1, port_num=1)
        a.path_mtu = e.IBV_MTU_1024
        a.dest_qp_num = 0x123456
        a.rq_psn = 0xabcdef
        mask |= (e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN |
                 e.IBV_QP_RQ_PSN)
        if qpt == e.IBV_QPT_RC:
            a.max_dest_rd_atomic = 4
            a.min_rnr_timer = 12
            mask |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
        # A path MTU beyond 4096 is refused.
        a.path_mtu = 6
        expect_errno(lambda: qp.modify(a, mask), 22,
                     name + ': path_mtu 8192 refused', qp, 'INIT')
        a.path_mtu = e.IBV_MTU_1024
    moved(qp, a, mask, 'RTR', name + ': INIT->RTR')

    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    a.sq_psn = 0x1234
    mask = S | e.IBV_QP_SQ_PSN
    if qpt == e.IBV_QPT_RC:
        a.timeout = 14
        a.retry_cnt = 7
        a.rnr_retry = 7
        a.max_rd_atomic = 8
        mask |= (e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
                 e.IBV_QP_MAX_QP_RD_ATOMIC)
    moved(qp, a, mask, 'RTS', name + ': RTR->RTS')

    q, _ = qp.query(0x1fffff)
    check(q.qp_state == e.IBV_QPS_RTS and q.sq_psn == 0x1234,
          name + ': query returns state and sq_psn')
    if qpt != e.IBV_QPT_UD:
        check(q.dest_qp_num == 0x123456 and q.rq_psn == 0xabcdef and
              q.path_mtu == e.IBV_MTU_1024 and
              str(q.ah_attr.dgid).endswith('ffff:c612:0002'),
              name + ': query returns dest_qp_num, rq_psn, path_mtu, AV')
    else:
        check(q.qkey == 0x11111111, name + ': query returns qkey')
    if qpt == e.IBV_QPT_RC:
        check(q.timeout == 14 and q.retry_cnt == 7 and q.rnr_retry == 7 and
              q.max_rd_atomic == 8 and q.max_dest_rd_atomic == 4 and
              q.min_rnr_timer == 12, name + ': query returns RC timers')

    # SQE is the CI's to enter (a send error on UC/UD), never a
    # consumer's; and SQE->RTS is refused to a QP that is not in SQE.
    expect_errno(lambda: qp.modify(QPAttr(qp_state=e.IBV_QPS_SQE), S), 22,
                 name + ': RTS->SQE refused', qp, 'RTS')
    expect_errno(lambda: qp.modify(
        QPAttr(qp_state=e.IBV_QPS_RTS, cur_qp_state=e.IBV_QPS_SQE),
        S | e.IBV_QP_CUR_STATE), 22,
        name + ': SQE->RTS of a QP in RTS (IBV_QP_CUR_STATE) refused', qp,
        'RTS')
    moved(qp, QPAttr(qp_state=e.IBV_QPS_SQD), S, 'SQD', name + ': RTS->SQD')
    moved(qp, QPAttr(qp_state=e.IBV_QPS_RTS), S, 'RTS', name + ': SQD->RTS')
    moved(qp, QPAttr(qp_state=e.IBV_QPS_ERR), S, 'ERR', name + ': RTS->ERR')
    moved(qp, QPAttr(qp_state=e.IBV_QPS_RESET), S, 'RESET',
          name + ': ERR->RESET')
    # RESET is a fresh start: INIT again with the same attributes.
    moved(qp, init, init_mask, 'INIT', name + ': RESET->INIT after a reset')
    qp.close()

# A send that completes in error: on UD and UC the QP goes to SQE (IBTA
# 10.3.1: only the send queue stops), from which RTS resumes it.
from pyverbs.addr import AH
from pyverbs.mr import MR
from pyverbs.wr import SendWR, SGE
peer = GID('0000:0000:0000:0000:0000:ffff:c612:0002')

def poll1(c, secs=20):
    end = time.time() + secs
    while time.time() < end:
        n, wcs = c.poll(1)
        if n > 0:
            return wcs[0]
        time.sleep(0.01)
    return None

mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
for qpt, name in ((e.IBV_QPT_UD, 'UD'), (e.IBV_QPT_UC, 'UC')):
    scq = CQ(ctx, 16)
    qp = QP(pd, QPInitAttr(qp_type=qpt, scq=scq, rcq=scq,
                           cap=QPCap(max_send_wr=8, max_recv_wr=8,
                                     max_send_sge=1, max_recv_sge=1)))
    a = QPAttr(qp_state=e.IBV_QPS_INIT)
    a.pkey_index, a.port_num = 0, 1
    mask = S | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT
    if qpt == e.IBV_QPT_UD:
        a.qkey = 0x11111111
        mask |= e.IBV_QP_QKEY
    else:
        a.qp_access_flags = 0
        mask |= e.IBV_QP_ACCESS_FLAGS
    qp.modify(a, mask)
    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    mask = S
    if qpt == e.IBV_QPT_UC:
        a.ah_attr = AHAttr(gr=GlobalRoute(dgid=peer, sgid_index=v4),
                           is_global=1, port_num=1)
        a.path_mtu, a.dest_qp_num, a.rq_psn = e.IBV_MTU_1024, 0x123456, 0
        mask |= (e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN |
                 e.IBV_QP_RQ_PSN)
    qp.modify(a, mask)
    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    a.sq_psn = 0
    qp.modify(a, S | e.IBV_QP_SQ_PSN)
    wr = SendWR(opcode=e.IBV_WR_SEND, send_flags=e.IBV_SEND_SIGNALED,
                num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey ^ 0x5a5a00)])
    if qpt == e.IBV_QPT_UD:
        ah = AH(pd, attr=AHAttr(gr=GlobalRoute(dgid=peer, sgid_index=v4),
                                is_global=1, port_num=1))
        wr.set_wr_ud(ah, 0x123456, 0x11111111)
    qp.post_send(wr)
    wc = poll1(scq)
    check(wc is not None and wc.status == e.IBV_WC_LOC_PROT_ERR,
          name + ': SEND with an invalid lkey completes with LOC_PROT_ERR '
          '(got %s)' % (wc.status if wc else None))
    end = time.time() + 10
    while kstate(qp) == 'RTS' and time.time() < end:
        time.sleep(0.01)
    st = kstate(qp)
    check(st in ('SQE', 'ERR'),
          name + ': the send error stops the send queue: kernel reports %s'
          % st)
    todo(st == 'SQE', name + ': ...in SQE (IBTA 10.3.1), not ERR (kernel '
         'reports %s)' % st,
         'sroce has no SQE: a send error takes UC to ERR (UD: see above)')
    if st == 'SQE':
        moved(qp, QPAttr(qp_state=e.IBV_QPS_RTS), S, 'RTS',
              name + ': SQE->RTS after the send error')
    else:
        moved(qp, QPAttr(qp_state=e.IBV_QPS_RESET), S, 'RESET',
              name + ': %s->RESET after the send error' % st)
    qp.close()
    scq.close()
mr.close()

# Receives posted to a user QP's ring are flushed to the user CQ ring when
# the QP enters ERR (IBTA 10.3.1): the rxe ABI rings end to end.
from pyverbs.wr import RecvWR
mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
qp = QP(pd, init_attr(e.IBV_QPT_RC))
a = QPAttr(qp_state=e.IBV_QPS_INIT)
a.pkey_index = 0
a.port_num = 1
a.qp_access_flags = 0
qp.modify(a, S | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
for i in range(5):
    qp.post_recv(RecvWR(wr_id=100 + i, num_sge=1,
                        sg=[SGE(mr.buf, 512, mr.lkey)]))
n, wcs = cq.poll(8)
check(n == 0, 'no completion before the QP errs')
qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), S)
st = kstate(qp)
n, wcs = cq.poll(8)
check(st == 'ERR' and n == 5 and
      [w.wr_id for w in wcs] == list(range(100, 105)) and
      all(w.status == e.IBV_WC_WR_FLUSH_ERR and w.qp_num == qp.qp_num
          for w in wcs),
      'INIT->ERR (kernel reports %s) flushes the 5 posted receives, in '
      'order, with WR_FLUSH_ERR' % st)
qp.close()
mr.close()

# Shared receive queues: create, query, arm the limit, QPs on an SRQ.
from pyverbs.srq import SRQ, SrqInitAttr, SrqAttr
srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=100, max_sge=2)))
sa = srq.query()
check(sa.max_wr >= 100 and sa.max_sge == 2 and sa.srq_limit == 0,
      'SRQ created with the granted size')
srq.modify(SrqAttr(srq_limit=10), e.IBV_SRQ_LIMIT)
check(srq.query().srq_limit == 10, 'SRQ limit armed and queried back')
expect_errno(lambda: srq.modify(SrqAttr(srq_limit=100000), e.IBV_SRQ_LIMIT),
             22, 'SRQ limit beyond its size -> EINVAL')
for i in range(20):
    srq.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(0, 0, 0)]))
ia = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, srq=srq,
                cap=QPCap(max_send_wr=8, max_send_sge=1))
srq_qps = [QP(pd, ia) for _ in range(4)]
check(len(srq_qps) == 4, 'four RC QPs share one SRQ')
for q in srq_qps:
    q.close()
srq.close()

# SRQ resize (IBV_SRQ_MAX_WR): the posted, unconsumed receives move to the
# new ring in order and are then consumed by traffic from a QP of the same
# device (loopback through its own GID), each landing in its own buffer.
N1, N2, SZ = 20, 30, 64
rmr = MR(pd, (N1 + N2) * SZ, e.IBV_ACCESS_LOCAL_WRITE)
smr = MR(pd, (N1 + N2) * SZ, e.IBV_ACCESS_LOCAL_WRITE)
rcq, scq = CQ(ctx, 128), CQ(ctx, 128)
srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=N1 + 1, max_sge=1)))
post = lambda i: srq.post_recv(RecvWR(wr_id=i, num_sge=1,
                                      sg=[SGE(rmr.buf + i * SZ, SZ, rmr.lkey)]))
for i in range(N1):
    post(i)
srq.modify(SrqAttr(srq_limit=5), e.IBV_SRQ_LIMIT)
srq.modify(SrqAttr(max_wr=200), e.IBV_SRQ_MAX_WR)
sa = srq.query()
check(sa.max_wr >= 200 and sa.srq_limit == 5,
      'SRQ resized from %d to 200 WRs with %d posted (max_wr %d, limit kept)' %
      (N1 + 1, N1, sa.max_wr))
for i in range(N1, N1 + N2):
    post(i)
expect_errno(lambda: srq.modify(SrqAttr(max_wr=N1), e.IBV_SRQ_MAX_WR),
             22, 'SRQ shrink below the %d posted receives -> EINVAL' % (N1 + N2))
expect_errno(lambda: srq.modify(SrqAttr(max_wr=dev.max_srq_wr + 1),
                                e.IBV_SRQ_MAX_WR),
             22, 'SRQ resize beyond max_srq_wr -> EINVAL')
mk = lambda c, q: QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=c, rcq=c, srq=q,
                                    cap=QPCap(max_send_wr=64, max_recv_wr=0 if q else 1,
                                              max_send_sge=1, max_recv_sge=1)))
qa, qb = mk(scq, None), mk(rcq, srq)
own = ctx.query_gid(1, v4)
for q, peer in ((qa, qb), (qb, qa)):
    a = QPAttr(qp_state=e.IBV_QPS_INIT)
    a.pkey_index, a.port_num, a.qp_access_flags = 0, 1, 0
    q.modify(a, S | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=own, sgid_index=v4), is_global=1,
                       port_num=1)
    a.path_mtu, a.dest_qp_num, a.rq_psn = e.IBV_MTU_1024, peer.qp_num, 0
    a.max_dest_rd_atomic, a.min_rnr_timer = 1, 12
    q.modify(a, S | e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN |
             e.IBV_QP_RQ_PSN | e.IBV_QP_MAX_DEST_RD_ATOMIC |
             e.IBV_QP_MIN_RNR_TIMER)
    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    a.sq_psn, a.timeout, a.retry_cnt, a.rnr_retry, a.max_rd_atomic = 0, 14, 7, 7, 1
    q.modify(a, S | e.IBV_QP_SQ_PSN | e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
             e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)
for i in range(N1 + N2):
    smr.write(bytes([i + 1]) * SZ, SZ, i * SZ)
    qa.post_send(SendWR(wr_id=i, opcode=e.IBV_WR_SEND,
                        send_flags=e.IBV_SEND_SIGNALED, num_sge=1,
                        sg=[SGE(smr.buf + i * SZ, SZ, smr.lkey)]))
    if i % 16 == 15:
        import time
        time.sleep(0.05)
import time
got, sent = [], 0
end = time.time() + 60
while (len(got) < N1 + N2 or sent < N1 + N2) and time.time() < end:
    n, wcs = rcq.poll(16)
    got += [(w.wr_id, w.status, w.byte_len) for w in wcs[:n]]
    n, wcs = scq.poll(16)
    sent += sum(1 for w in wcs[:n] if w.status == e.IBV_WC_SUCCESS)
    time.sleep(0.01)
check(sent == N1 + N2 and [g[0] for g in got] == list(range(N1 + N2)) and
      all(g[1] == e.IBV_WC_SUCCESS and g[2] == SZ for g in got),
      'after the resize %d sends consume the SRQ receives in posting order '
      '(%d sent, %d received)' % (N1 + N2, sent, len(got)))
data = rmr.read((N1 + N2) * SZ, 0)
check(all(data[i * SZ:(i + 1) * SZ] == bytes([i + 1]) * SZ
          for i in range(N1 + N2)),
      'every receive buffer holds the payload of its message')
for o in (qa, qb, srq, rcq, scq, rmr, smr):
    o.close()

expect_errno(lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=dev.max_srq_wr + 1))),
             22, 'SRQ beyond max_srq_wr -> EINVAL')

expect_errno(lambda: QP(pd, init_attr(e.IBV_QPT_RC, wr=dev.max_qp_wr + 1)),
             22, 'max_send_wr beyond the device limit -> EINVAL')
expect_errno(lambda: QP(pd, init_attr(e.IBV_QPT_RC, sge=dev.max_sge + 1)),
             22, 'max_sge beyond the device limit -> EINVAL')
expect_errno(lambda: QP(pd, init_attr(e.IBV_QPT_RC, inline=100000)),
             22, 'inline beyond the device limit -> EINVAL')

qps = [QP(pd, init_attr(e.IBV_QPT_RC)) for _ in range(100)]
check(len({q.qp_num for q in qps}) == 100, '100 QPs, distinct QPNs')
for q in qps:
    q.close()
cq.close()
pd.close()
ctx.close()
print('qp done')
PY
)
while read -r line; do
	case "$line" in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	"todo - "*) line=${line#todo - }; todo "${line% # TODO *}" "${line##* # TODO }" ;;
	*) diag "$line" ;;
	esac
done <<<"$out"
check "pyverbs QP script ran to the end" grep -q 'qp done' <<<"$out"

rdma link delete sroce0
check "module unloads after QP use" sroce_unload
ip netns del peer
tap_done
