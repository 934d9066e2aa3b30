// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completer (IBTA vol. 1 9.7.5.2 and 9.9, requester side): consumes ACKs,
 * NAKs, READ responses and atomic ACKs, completes send WQEs in order, and
 * runs the transport and RNR retry timers (go-back-N from the oldest
 * unacknowledged PSN, 9.7.6.1).
 *
 * Context: sroce_comp_rx() runs in the receive softirq, the timers in
 * timer softirq context; both take qp->sq.lock, which the requester holds
 * while it builds packets, so requester and completer state is one.  The
 * requester is never run from here, only kicked (STYLE rule 2).
 *
 * Trust model: responses are peer-controlled.  Their PSN must fall inside
 * what was sent and not yet acknowledged; everything else is counted as
 * stale and dropped.
 */
#include <linux/skbuff.h>

#include "sroce/sroce_hdr.h"
#include "sroce/sroce_opcode.h"
#include "sroce/sroce_psn.h"
#include "sroce_comp.h"
#include "sroce_compat.h"
#include "sroce_cq.h"
#include "sroce_dev.h"
#include "sroce_mr.h"
#include "sroce_net.h"
#include "sroce_qp.h"
#include "sroce_req.h"
#include "sroce_stats.h"
#include "sroce_wr.h"

/* Post the completion of @w (errors always, successes if signaled). */
static void sroce_comp_post(struct sroce_qp *qp, const struct sroce_swqe *w,
			    enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id		= w->wr_id,
		.status		= status,
		.opcode		= sroce_wr_desc(w->opcode)->wc_opcode,
		.byte_len	= w->length,
		.qp		= &qp->ibqp,
		.port_num	= 1,
	};

	if (status == IB_WC_SUCCESS && !qp->sq_sig_all &&
	    !(w->send_flags & IB_SEND_SIGNALED))
		return;
	sroce_cq_post(qp->scq, &wc, false);
}

/**
 * sroce_comp_advance() - complete finished WQEs at the head of the SQ
 * @qp: queue pair, qp->sq.lock held
 *
 * Completions are generated in posting order (IBTA 10.8.1.2), so a done
 * WQE waits behind one that is not.  Each completed slot goes back to the
 * poster.
 */
void sroce_comp_advance(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->sq.queue;
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *w;

	while (q->own != req->fetched) {
		w = sroce_swqe_at(req, q->own);
		if (!w->done)
			break;
		if (w->rd_out) {
			req->rd_atomic -= w->rd_out;
			w->rd_out = 0;
		}
		/*
		 * Slot first, completion second: a poster that sees the
		 * completion may post again at once, and a full ring (depth
		 * 1) must have room by then.  The shadow copy @w stays valid:
		 * it is only refilled under qp->sq.lock, which we hold.
		 */
		sroce_queue_advance_consumer(q);
		sroce_comp_post(qp, w, w->status);
	}
}

/*
 * IBTA 9.7.6.1.3: 4.096 us * 2^timeout; at least 10 ms here.  Timeouts in
 * a row (retries without progress) double it, up to 4 times: a queue that
 * takes longer than one timeout to drain then costs fewer retries and
 * fewer resent packets (NVIDIA NICs' adaptive retransmission backs off
 * too).  Progress restores retry, and with it the nominal value.
 */
static unsigned long sroce_comp_timeout(const struct sroce_qp *qp)
{
	u64 us = 4096ULL << min_t(u8, qp->attr.timeout, 31);
	u8 row = qp->attr.retry_cnt > qp->req.retry ?
		 qp->attr.retry_cnt - qp->req.retry : 0;

	us <<= min_t(u8, row, 2);
	return max(usecs_to_jiffies(div_u64(us, 1000)),
		   msecs_to_jiffies(10));
}

/*
 * (Re)start the transport timeout from now.  Sending and ACKs move only
 * its deadline: the kernel timer is left pending when everything is
 * answered, and one that fires before the deadline waits on for it
 * (sroce_comp_retry_timer()).  Re-arming and deleting a timer for every
 * message of a ping-pong cost more than the rest of its bookkeeping.
 */
static void sroce_comp_set_deadline(struct sroce_qp *qp)
{
	unsigned long d = jiffies + sroce_comp_timeout(qp);

	qp->req.rto_deadline = d;
	qp->req.rto_armed = true;
	if (!timer_pending(&qp->retry_timer) ||
	    time_after(qp->retry_timer.expires, d))
		mod_timer(&qp->retry_timer, d);
}

/**
 * sroce_comp_arm() - start the transport timer if PSNs are outstanding
 * @qp: RC queue pair, qp->sq.lock held
 */
void sroce_comp_arm(struct sroce_qp *qp)
{
	if (!qp->attr.timeout || test_bit(SROCE_QP_DYING, &qp->flags))
		return;	/* timeout 0: wait forever (IBTA 9.7.6.1.3) */
	if (qp->req.acked_psn != qp->req.max_psn && !qp->req.rto_armed)
		sroce_comp_set_deadline(qp);
}

/*
 * The oldest WQE that still waits for the peer: the only one a response
 * can complete.  The responder executes requests and answers them in PSN
 * order (IBTA 9.7.5.1), so anything the peer says about a later PSN implies
 * everything before it, and a response that does not fit this WQE is a
 * duplicate or a sign that something before it was lost.
 */
static struct sroce_swqe *sroce_comp_head(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->sq.queue;
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *w;
	u32 i;

	for (i = q->own; i != req->fetched; i = (i + 1) & q->index_mask) {
		w = sroce_swqe_at(req, i);
		if (w->done)
			continue;
		if (!w->started || sroce_wqe_is_local(w))
			return NULL;
		return w;
	}
	return NULL;
}

/* The started, unfinished WQE holding @psn (ring index in *@idx), or NULL. */
static struct sroce_swqe *sroce_comp_find_at(struct sroce_qp *qp, u32 psn,
					     u32 *idx)
{
	struct sroce_queue *q = &qp->sq.queue;
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *w;
	u32 i;

	for (i = q->own; i != req->fetched; i = (i + 1) & q->index_mask) {
		w = sroce_swqe_at(req, i);
		if (!w->started)
			return NULL;
		if (sroce_wqe_is_local(w))
			continue;
		if (sroce_psn_in_window(psn, w->first_psn,
					sroce_psn_dist(w->first_psn,
						       w->last_psn) + 1)) {
			*idx = i;
			return w->done ? NULL : w;
		}
	}
	return NULL;
}

static struct sroce_swqe *sroce_comp_find(struct sroce_qp *qp, u32 psn)
{
	u32 i;

	return sroce_comp_find_at(qp, psn, &i);
}

/**
 * sroce_comp_rewind() - go back to @psn (IBTA 9.7.6.1: go-back-N)
 * @qp: RC queue pair, qp->sq.lock held
 * @psn: the requester resends from the packet with this PSN
 *
 * Nothing happens if no unfinished WQE holds @psn.
 */
void sroce_comp_rewind(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *w;
	u32 i;

	w = sroce_comp_find_at(qp, psn, &i);
	if (!w)
		return;
	ibdev_dbg(qp->ibqp.device,
		  "qp %u: rewind to psn %#x (wqe %u, psn %#x..%#x, acked %#x, max %#x)\n",
		  qp->ibqp.qp_num, psn, i, w->first_psn, w->last_psn,
		  req->acked_psn, req->max_psn);
	req->cur = i;
	req->psn = psn;
	req->offset = sroce_wqe_is_atomic(w) ? 0 :
		      sroce_psn_dist(w->first_psn, psn) * qp->mtu;
	/*
	 * The first packet sent again asks for an ACK: the responder
	 * answers it at once (a duplicate is ACKed up to what it has),
	 * so progress shows within one round trip, not after 32
	 * packets - which, on a slow host, may take longer than the
	 * timeout and turn go-back-N into a retry-exceeded livelock.
	 */
	req->since_ack = SROCE_PKTS_PER_ACK - 1;
}

/*
 * Resend from @psn because the peer's answers show a gap there (a NAK, or
 * responses beyond a missing one).  Every later response of the same
 * burst shows the same gap: rewind once per gap, not once per packet.
 */
static void sroce_comp_gap(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;

	if (req->gap_set && req->gap_psn == psn)
		return;
	req->gap_set = true;
	req->gap_psn = psn;
	sroce_count(to_sroce_dev(qp->ibqp.device)->stats, SROCE_CNT_RETRY_SEQ,
		    1);
	sroce_comp_rewind(qp, psn);
}

/*
 * The responder has executed every request up to and including @psn: an
 * ACK's PSN, or the one before a NAK or a response (IBTA 9.7.5.2.2,
 * implicit acknowledgment).  SENDs and WRITEs ending by then are done.
 * A READ or atomic whose response has not arrived by then had it lost
 * (9.7.5.2.8): it is returned, to be asked for again.
 */
static struct sroce_swqe *sroce_comp_ack_through(struct sroce_qp *qp,
						 u32 psn)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *w;

	while ((w = sroce_comp_head(qp))) {
		if (sroce_psn_after(req->acked_psn, psn))
			return NULL;
		if (sroce_wqe_has_resp(w))
			return w;
		if (sroce_psn_after(w->last_psn, psn)) {
			req->acked_psn = sroce_psn_add(psn, 1);
			return NULL;
		}
		w->done = true;
		req->acked_psn = sroce_psn_add(w->last_psn, 1);
	}
	return NULL;
}

/*
 * Late ACKs and responses can acknowledge PSNs the requester was rewound
 * to resend.  Move it forward so it never resends below acked_psn (its
 * window arithmetic assumes psn >= acked_psn).  Under qp->sq.lock, after
 * sroce_comp_advance().
 */
static void sroce_comp_fixup(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->sq.queue;
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *w;
	u32 i;

	if (!sroce_psn_before(req->psn, req->acked_psn))
		return;
	/*
	 * A WQE holds acked_psn: resume there.  That includes a message
	 * only partly sent when everything sent so far is acknowledged
	 * (acked_psn == max_psn): its rest must follow, or the next message
	 * would start inside it at the responder (an invalid request).
	 */
	if (sroce_comp_find(qp, req->acked_psn)) {
		sroce_comp_rewind(qp, req->acked_psn);
		return;
	}
	/* All sent is acknowledged: resume at the first unsent WQE. */
	for (i = q->own; i != req->fetched; i = (i + 1) & q->index_mask) {
		w = sroce_swqe_at(req, i);
		if (!w->started && !w->done)
			break;
	}
	req->cur = i;
	req->psn = req->max_psn;
	req->offset = 0;
}

/*
 * After a packet: if acked_psn moved, the peer is alive - restore the
 * retry budgets (IBTA 9.7.6.1.3) and restart or stop the timer.
 */
static void sroce_comp_progress(struct sroce_qp *qp, u32 old_acked)
{
	struct sroce_req *req = &qp->req;

	if (req->acked_psn == old_acked)
		return;
	if (sroce_psn_after(req->acked_psn, old_acked))
		sroce_cwnd_acked(&req->cwnd,
				 sroce_psn_dist(old_acked, req->acked_psn));
	req->retry = qp->attr.retry_cnt;
	req->rnr_retry = qp->attr.rnr_retry;
	req->gap_set = false;
	if (req->acked_psn == req->max_psn)
		req->rto_armed = false;
	else if (qp->attr.timeout)
		sroce_comp_set_deadline(qp);
}

/*
 * The READ response at @w->resp_psn: place its payload.  Returns true at
 * the end of one of the WQE's requests (the requester may send another).
 */
static bool sroce_comp_read_resp(struct sroce_qp *qp, struct sroce_swqe *w,
				 const struct sroce_rxp *rx,
				 const struct sroce_pkt *pkt)
{
	u32 psn = pkt->bth.psn;
	u32 off = sroce_psn_dist(w->first_psn, psn) * qp->mtu;
	u8 op = pkt->bth.opcode & 0x1f;
	bool last = op == SROCE_OP_READ_RESPONSE_LAST ||
		    op == SROCE_OP_READ_RESPONSE_ONLY;
	bool end = psn == sroce_psn_chunk_end(w->first_psn, w->last_psn,
					      w->read_chunk, psn);
	bool final = psn == w->last_psn;
	u32 rest = w->length > off ? w->length - off : 0;
	enum ib_wc_status st;

	/* Each request's responses end where it asked them to end. */
	if (last != end ||
	    pkt->payload_len != (final ? rest : qp->mtu) ||
	    (!final && rest <= qp->mtu)) {
		w->status = IB_WC_BAD_RESP_ERR;
		w->done = true;
		return true;
	}
	st = sroce_sge_from_rxp(to_sroce_dev(qp->ibqp.device), qp->ibqp.pd,
				(const struct rxe_sge *)w->data, w->num_sge,
				off, rx, pkt->payload_len, &qp->req.mem_hint);
	if (st != IB_WC_SUCCESS) {
		w->status = st;
		w->done = true;
		return true;
	}
	/* Each response acknowledges its own PSN: a long READ progresses. */
	w->resp_psn = sroce_psn_add(psn, 1);
	qp->req.acked_psn = w->resp_psn;
	if (end && w->rd_out) {
		w->rd_out--;
		qp->req.rd_atomic--;
	}
	if (final)
		w->done = true;
	return end;
}

/* The 8-byte original value of an atomic into @w's buffer. */
static void sroce_comp_atomic_ack(struct sroce_qp *qp, struct sroce_swqe *w,
				  const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	const struct rxe_sge *sge = (const void *)w->data;
	u64 orig = pkt->atmack;
	struct sroce_mem *mem;

	w->done = true;
	rcu_read_lock();
	mem = w->num_sge ? sroce_mem_find(sdev, sge[0].lkey,
					  &qp->req.mem_hint) : NULL;
	if (!mem || sge[0].length < sizeof(u64) ||
	    sroce_mem_check(mem, qp->ibqp.pd, sge[0].addr, sizeof(u64),
			    IB_ACCESS_LOCAL_WRITE)) {
		w->status = IB_WC_LOC_PROT_ERR;
	} else {
		sroce_mem_copy(mem, sge[0].addr, &orig, sizeof(orig),
			       SROCE_TO_MEM);
	}
	rcu_read_unlock();
}

static enum ib_wc_status sroce_nak_status(u8 code)
{
	switch (code) {
	case SROCE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SROCE_NAK_REMOTE_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case SROCE_NAK_INVALID_RD_REQ:
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/*
 * An ACK/NAK (IBTA 9.7.5.2).  Returns true when the QP must go to ERR.
 * *@kick is set when the requester has something new to do.
 */
static bool sroce_comp_ack(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			   bool *kick)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;
	u8 syn = pkt->aeth.syndrome;
	u32 psn = pkt->bth.psn;
	struct sroce_swqe *w;

	switch (sroce_aeth_type(syn)) {
	case SROCE_AETH_ACK:
		*kick = true;
		w = sroce_comp_ack_through(qp, psn);
		if (w)
			sroce_comp_gap(qp, w->resp_psn);
		return false;
	case SROCE_AETH_RNR_NAK:
		sroce_count(sdev->stats, SROCE_CNT_RX_RNR_NAK, 1);
		if (sroce_comp_ack_through(qp, sroce_psn_sub(psn, 1)))
			return false;	/* stale: a READ before it is lost */
		w = sroce_comp_head(qp);
		if (!w || psn != req->acked_psn)
			return false;
		if (req->rnr_retry == 0) {
			w->status = IB_WC_RNR_RETRY_EXC_ERR;
			w->done = true;
			sroce_count(sdev->stats, SROCE_CNT_RETRY_EXCEEDED, 1);
			return true;
		}
		if (req->rnr_retry != 7)	/* 7: retry forever */
			req->rnr_retry--;
		sroce_comp_rewind(qp, psn);
		req->gap_set = false;
		req->rnr_wait = true;
		req->rto_armed = false;
		del_timer(&qp->retry_timer);
		/* Armed under sq.lock only while not DYING (sroce_qp_quiesce()). */
		if (!test_bit(SROCE_QP_DYING, &qp->flags))
			mod_timer(&qp->rnr_timer, jiffies +
				  usecs_to_jiffies(sroce_rnr_timer_us(sroce_aeth_value(syn))));
		return false;
	case SROCE_AETH_NAK:
		sroce_count(sdev->stats, SROCE_CNT_RX_NAK, 1);
		w = sroce_comp_ack_through(qp, sroce_psn_sub(psn, 1));
		if (sroce_aeth_value(syn) == SROCE_NAK_PSN_SEQ_ERR) {
			/* Resend from the oldest unanswered PSN. */
			sroce_comp_gap(qp, w ? w->resp_psn : req->acked_psn);
			*kick = true;
			return false;
		}
		w = sroce_comp_find(qp, psn);
		if (!w)
			return false;
		w->status = sroce_nak_status(sroce_aeth_value(syn));
		w->done = true;
		return true;
	default:
		return false;	/* reserved syndrome: ignore (C9-112) */
	}
}

/*
 * A READ response or atomic ACK at @psn.  Returns true when the QP must go
 * to ERR; *@kick as for sroce_comp_ack().
 */
static bool sroce_comp_resp(struct sroce_qp *qp, const struct sroce_rxp *rx,
			    const struct sroce_pkt *pkt, bool *kick)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	bool read = pkt->info->kind == SROCE_KIND_READ_RESP;
	u32 psn = pkt->bth.psn;
	struct sroce_swqe *w;

	/* Everything before it was executed by the responder. */
	w = sroce_comp_ack_through(qp, sroce_psn_sub(psn, 1));
	if (w) {
		/* Responses beyond a missing one: ask again from the gap. */
		sroce_comp_gap(qp, w->resp_psn);
		*kick = true;
		return false;
	}
	w = sroce_comp_head(qp);
	/*
	 * ATOMIC WRITE and FLUSH are answered by an RDMA READ response of
	 * length zero (as rdma_rxe does): an acknowledgment of their PSN.
	 */
	if (read && w && w->first_psn == psn && !pkt->payload_len &&
	    (pkt->bth.opcode & 0x1f) == SROCE_OP_READ_RESPONSE_ONLY &&
	    (w->opcode == SROCE_WR_ATOMIC_WRITE ||
	     w->opcode == SROCE_WR_FLUSH)) {
		sroce_comp_ack_through(qp, psn);
		*kick = true;
		return false;
	}
	if (!w || w->resp_psn != psn ||
	    (read ? w->opcode != IB_WR_RDMA_READ : !sroce_wqe_is_atomic(w))) {
		/* A duplicate, or a response to nothing we asked. */
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_STALE_RESP, 1);
		return false;
	}
	if (read) {
		if (sroce_comp_read_resp(qp, w, rx, pkt))
			*kick = true;
	} else {
		sroce_comp_atomic_ack(qp, w, pkt);
		w->resp_psn = sroce_psn_add(psn, 1);
		qp->req.acked_psn = w->resp_psn;
	}
	if (w->done)
		*kick = true;
	return w->done && w->status != IB_WC_SUCCESS;
}

/**
 * sroce_comp_rx() - a response packet for requester @qp
 * @qp: RC queue pair
 * @rx: the packet
 * @pkt: its decoded headers
 */
void sroce_comp_rx(struct sroce_qp *qp, const struct sroce_rxp *rx,
		   const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;
	u32 psn = pkt->bth.psn, old_acked;
	bool kick = false, err = false;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_QP_STATE, 1);
		goto out;
	}
	/*
	 * Only PSNs sent and not yet acknowledged can be answered (an ACK
	 * may repeat the last acknowledged one).
	 */
	if (!sroce_psn_before(psn, req->max_psn) ||
	    sroce_psn_before(psn, sroce_psn_sub(req->acked_psn, 1))) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_STALE_RESP, 1);
		goto out;
	}
	old_acked = req->acked_psn;
	switch (pkt->info->kind) {
	case SROCE_KIND_ACK:
		err = sroce_comp_ack(qp, pkt, &kick);
		break;
	case SROCE_KIND_READ_RESP:
	case SROCE_KIND_ATOMIC_ACK:
		sroce_req_heard(qp);
		err = sroce_comp_resp(qp, rx, pkt, &kick);
		break;
	default:
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_BAD_OPCODE, 1);
		break;
	}
	if (!err)
		sroce_comp_progress(qp, old_acked);
	sroce_comp_advance(qp);
	sroce_comp_fixup(qp);
	/*
	 * A requester that ran dry has nothing an ACK could release: the
	 * next doorbell runs it.  Kicking it anyway costs a work item (a
	 * context switch) per ACK.
	 */
	kick = kick && sroce_req_has_work(qp);
out:
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (err)
		sroce_qp_error(qp);
	else if (kick)
		sroce_req_kick(qp);
}

/* Transport timer: no ACK progress for a whole timeout (IBTA 9.7.6.1.3). */
void sroce_comp_retry_timer(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, retry_timer);
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *w;
	unsigned long flags;
	bool err = false, kick = false;

	spin_lock_irqsave(&qp->sq.lock, flags);
	if ((qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) ||
	    !req->rto_armed || req->acked_psn == req->max_psn ||
	    req->rnr_wait)
		goto out;
	if (time_before(jiffies, req->rto_deadline)) {
		/* Progress moved the deadline since this was set. */
		mod_timer(&qp->retry_timer, req->rto_deadline);
		goto out;
	}
	w = sroce_comp_head(qp);
	ibdev_dbg(qp->ibqp.device,
		  "qp %u: timeout, acked %#x max %#x psn %#x cur %u own %u fetched %u retry %u\n",
		  qp->ibqp.qp_num, req->acked_psn, req->max_psn, req->psn,
		  req->cur, qp->sq.queue.own, req->fetched, req->retry);
	if (!w) {
		/*
		 * Nothing waits for the peer, though PSNs are unacknowledged:
		 * the peer's answers got the requester here (a state no
		 * test has reached).  A peer must not make the kernel warn:
		 * count it, resync and go on.
		 */
		sroce_count(sdev->stats, SROCE_CNT_COMP_RESYNC, 1);
		req->acked_psn = req->max_psn;
		sroce_comp_advance(qp);
		sroce_comp_fixup(qp);
		kick = true;
		goto out;
	}
	if (req->retry == 0) {
		w->status = IB_WC_RETRY_EXC_ERR;
		w->done = true;
		sroce_count(sdev->stats, SROCE_CNT_RETRY_EXCEEDED, 1);
		sroce_comp_advance(qp);
		err = true;
		goto out;
	}
	req->retry--;
	req->gap_set = false;
	sroce_count(sdev->stats, SROCE_CNT_RETRY_TIMEOUT, 1);
	/* The path queues more than the timeout allows: send less. */
	sroce_cwnd_timeout(&req->cwnd);
	/* acked_psn is the head's oldest unanswered PSN (a READ's resp_psn). */
	sroce_comp_rewind(qp, req->acked_psn);
	sroce_comp_set_deadline(qp);
	kick = true;
out:
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (err)
		sroce_qp_error(qp);
	else if (kick)
		sroce_req_kick(qp);
}

/* The RNR NAK's wait is over: resend (IBTA 9.7.5.2.8). */
void sroce_comp_rnr_timer(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, rnr_timer);
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->req.rnr_wait = false;
	sroce_comp_arm(qp);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	sroce_req_kick(qp);
}
