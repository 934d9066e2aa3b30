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
#include "sroce_qp.h"
#include "sroce_req.h"
#include "sroce_stats.h"

static enum ib_wc_opcode sroce_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case SROCE_WR_ATOMIC_WRITE:
		return SROCE_WC_ATOMIC_WRITE;
	default:
		return IB_WC_SEND;
	}
}

/* Post the completion of @w (errors always, successes if signaled). */
static void sroce_comp_post(struct sroce_qp *qp, const struct sroce_swqe *w,
			    enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id		= w->wr_id,
		.status		= status,
		.opcode		= sroce_wc_opcode(w->opcode),
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
		w = sroce_swqe_at(req, q->index_mask, q->own);
		if (!w->done)
			break;
		if (w->rd_atomic) {
			w->rd_atomic = false;
			req->rd_atomic--;
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

static unsigned long sroce_comp_timeout(const struct sroce_qp *qp)
{
	/* IBTA 9.7.6.1.3: 4.096 us * 2^timeout; at least 10 ms here. */
	u64 us = 4096ULL << min_t(u8, qp->attr.timeout, 31);

	return max(usecs_to_jiffies(div_u64(us, 1000)),
		   msecs_to_jiffies(10));
}

/**
 * sroce_comp_arm() - start the transport timer if PSNs are outstanding
 * @qp: RC queue pair, qp->sq.lock held
 */
void sroce_comp_arm(struct sroce_qp *qp)
{
	if (!qp->attr.timeout || test_bit(SROCE_QP_DYING, &qp->flags))
		return;	/* timeout 0: wait forever (IBTA 9.7.6.1.3) */
	if (qp->req.acked_psn != qp->req.max_psn &&
	    !timer_pending(&qp->retry_timer))
		mod_timer(&qp->retry_timer, jiffies + sroce_comp_timeout(qp));
}

/* The started, unfinished WQE holding @psn, or NULL. */
static struct sroce_swqe *sroce_comp_find(struct sroce_qp *qp, u32 psn)
{
	struct sroce_queue *q = &qp->sq.queue;
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *w;
	u32 i;

	for (i = q->own; i != req->fetched; i = (i + 1) & q->index_mask) {
		w = sroce_swqe_at(req, q->index_mask, i);
		if (!w->started)
			return NULL;
		if (sroce_wqe_is_local(w))
			continue;
		if (sroce_psn_in_window(psn, w->first_psn,
					sroce_psn_dist(w->first_psn,
						       w->last_psn) + 1))
			return w->done ? NULL : w;
	}
	return NULL;
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
	struct sroce_queue *q = &qp->sq.queue;
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *w;
	u32 i;

	for (i = q->own; i != req->fetched; i = (i + 1) & q->index_mask) {
		w = sroce_swqe_at(req, q->index_mask, i);
		if (!w->started)
			return;
		if (sroce_wqe_is_local(w) || w->done)
			continue;
		if (!sroce_psn_in_window(psn, w->first_psn,
					 sroce_psn_dist(w->first_psn,
							w->last_psn) + 1))
			continue;
		ibdev_dbg(qp->ibqp.device,
			  "qp %u: rewind to psn %#x (wqe %u, psn %#x..%#x, acked %#x, max %#x) from %pS\n",
			  qp->ibqp.qp_num, psn, i, w->first_psn, w->last_psn,
			  req->acked_psn, req->max_psn,
			  __builtin_return_address(0));
		req->cur = i;
		req->psn = psn;
		req->offset = w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
			      w->opcode == IB_WR_ATOMIC_FETCH_AND_ADD ? 0 :
			      sroce_psn_dist(w->first_psn, psn) * qp->mtu;
		/*
		 * The first packet sent again asks for an ACK: the responder
		 * answers it at once (a duplicate is ACKed up to what it has),
		 * so progress shows within one round trip, not after 32
		 * packets - which, on a slow host, may take longer than the
		 * timeout and turn go-back-N into a retry-exceeded livelock.
		 */
		req->since_ack = SROCE_PKTS_PER_ACK - 1;
		return;
	}
}

/*
 * Everything up to and including @psn is acknowledged: finish SENDs and
 * WRITEs it covers.  A READ or atomic it covers without its response means
 * the response was lost (IBTA 9.7.5.2.8): resend from there.  Returns true
 * when a rewind was needed.
 */
static bool sroce_comp_ack_through(struct sroce_qp *qp, u32 psn)
{
	struct sroce_queue *q = &qp->sq.queue;
	struct sroce_req *req = &qp->req;
	u32 next = sroce_psn_add(psn, 1);
	struct sroce_swqe *w;
	u32 i;

	if (!sroce_psn_after(next, req->acked_psn))
		return false;
	for (i = q->own; i != req->fetched; i = (i + 1) & q->index_mask) {
		w = sroce_swqe_at(req, q->index_mask, i);
		if (!w->started)
			break;
		if (w->done || sroce_wqe_is_local(w))
			continue;
		if (sroce_psn_after(w->first_psn, psn))
			break;
		if (w->opcode == IB_WR_RDMA_READ ||
		    w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		    w->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
			req->acked_psn = w->resp_psn;
			sroce_comp_rewind(qp, w->resp_psn);
			return true;
		}
		if (sroce_psn_after(w->last_psn, psn))
			break;
		w->done = true;
	}
	req->acked_psn = next;
	return false;
}

/*
 * acked_psn never rests inside a WQE that has finished: step over those.
 * A READ that completes while an earlier one is re-requested is done
 * before acked_psn reaches it; when the earlier one completes, acked_psn
 * stops at the later one's first PSN, and once both retire nothing holds
 * that PSN - the timer would find no WQE to resend and the window would
 * stay shut.
 */
static void sroce_comp_skip_done(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->sq.queue;
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *w;
	bool head = true;
	u32 i;

	for (i = q->own; i != req->fetched; i = (i + 1) & q->index_mask) {
		w = sroce_swqe_at(req, q->index_mask, i);
		if (!w->started)
			break;
		if (sroce_wqe_is_local(w))
			continue;
		/*
		 * Everything before the oldest WQE still held has completed,
		 * so it is acknowledged, whatever a late ACK or NAK said.
		 */
		if (head && sroce_psn_after(w->first_psn, req->acked_psn))
			req->acked_psn = w->first_psn;
		head = false;
		if (!sroce_psn_in_window(req->acked_psn, w->first_psn,
					 sroce_psn_dist(w->first_psn,
							w->last_psn) + 1)) {
			if (sroce_psn_after(w->first_psn, req->acked_psn))
				break;
			continue;
		}
		if (!w->done)
			break;
		req->acked_psn = sroce_psn_add(w->last_psn, 1);
	}
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
	if (req->acked_psn != req->max_psn) {
		sroce_comp_rewind(qp, req->acked_psn);
		return;
	}
	/* All sent is acknowledged: resume at the first unsent WQE. */
	for (i = q->own; i != req->fetched; i = (i + 1) & q->index_mask) {
		w = sroce_swqe_at(req, q->index_mask, i);
		if (!w->started && !w->done)
			break;
	}
	req->cur = i;
	req->psn = req->max_psn;
	req->offset = 0;
}

/* ACK progress: reset the retry budget and restart (or stop) the timer. */
static void sroce_comp_progress(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	req->retry = qp->attr.retry_cnt;
	req->rnr_retry = qp->attr.rnr_retry;
	if (req->acked_psn == req->max_psn)
		del_timer(&qp->retry_timer);
	else if (qp->attr.timeout)
		mod_timer(&qp->retry_timer, jiffies + sroce_comp_timeout(qp));
}

/* A READ response for @w at PSN @psn. */
static bool sroce_comp_read_resp(struct sroce_qp *qp, struct sroce_swqe *w,
				 struct sk_buff *skb,
				 const struct sroce_pkt *pkt,
				 unsigned int payload_off)
{
	u32 psn = pkt->bth.psn;
	u32 off = sroce_psn_dist(w->first_psn, psn) * qp->mtu;
	u8 op = pkt->bth.opcode & 0x1f;
	bool last = op == SROCE_OP_READ_RESPONSE_LAST ||
		    op == SROCE_OP_READ_RESPONSE_ONLY;
	u32 rest = w->length > off ? w->length - off : 0;
	enum ib_wc_status st;

	if (psn != w->resp_psn) {
		/*
		 * A response was lost (or overtaken): ask again from there,
		 * once per gap - the later responses of the same burst say
		 * nothing new.
		 */
		if (sroce_psn_after(psn, w->resp_psn) &&
		    !(qp->req.gap_set && qp->req.gap_psn == w->resp_psn)) {
			sroce_count(to_sroce_dev(qp->ibqp.device)->stats,
				    SROCE_CNT_RETRY_SEQ, 1);
			qp->req.gap_set = true;
			qp->req.gap_psn = w->resp_psn;
			sroce_comp_rewind(qp, w->resp_psn);
			return true;
		}
		return false;	/* duplicate */
	}
	/* FIRST/ONLY open at the PSN the request (re-)started from. */
	if ((last && pkt->payload_len != rest) ||
	    (!last && pkt->payload_len != qp->mtu) ||
	    (!last && rest <= qp->mtu)) {
		w->status = IB_WC_BAD_RESP_ERR;
		w->done = true;
		return false;
	}
	st = sroce_sge_from_skb(to_sroce_dev(qp->ibqp.device), qp->ibqp.pd,
				(const struct rxe_sge *)w->data, w->num_sge,
				off, skb, payload_off, pkt->payload_len);
	if (st != IB_WC_SUCCESS) {
		w->status = st;
		w->done = true;
		return false;
	}
	w->resp_psn = sroce_psn_add(psn, 1);
	qp->req.gap_set = false;
	/*
	 * The READ's PSNs up to here are answered: count them as acknowledged
	 * (when everything before the READ is), so the requester's window
	 * and the retry timer see the progress of a long READ.
	 */
	if (!sroce_psn_before(qp->req.acked_psn, w->first_psn) &&
	    sroce_psn_after(w->resp_psn, qp->req.acked_psn))
		qp->req.acked_psn = w->resp_psn;
	if (last)
		w->done = true;
	return false;
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
	mem = w->num_sge ? sroce_mem_get(sdev, sge[0].lkey) : NULL;
	if (!mem || sge[0].length < sizeof(u64) ||
	    sroce_mem_check(mem, qp->ibqp.pd, sge[0].addr, sizeof(u64),
			    IB_ACCESS_LOCAL_WRITE)) {
		w->status = IB_WC_LOC_PROT_ERR;
	} else {
		sroce_mem_copy(mem, sge[0].addr, &orig, sizeof(orig),
			       SROCE_TO_MEM);
	}
	if (mem)
		sroce_mem_put(mem);
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
		sroce_comp_ack_through(qp, psn);
		sroce_comp_progress(qp);
		return false;
	case SROCE_AETH_RNR_NAK:
		sroce_count(sdev->stats, SROCE_CNT_RX_RNR_NAK, 1);
		sroce_comp_ack_through(qp, sroce_psn_sub(psn, 1));
		w = sroce_comp_find(qp, psn);
		if (!w)
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
		req->rnr_wait = true;
		del_timer(&qp->retry_timer);
		mod_timer(&qp->rnr_timer, jiffies +
			  usecs_to_jiffies(sroce_rnr_timer_us(sroce_aeth_value(syn))));
		return false;
	case SROCE_AETH_NAK:
		sroce_count(sdev->stats, SROCE_CNT_RX_NAK, 1);
		sroce_comp_ack_through(qp, sroce_psn_sub(psn, 1));
		w = sroce_comp_find(qp, psn);
		if (!w)
			return false;
		if (sroce_aeth_value(syn) == SROCE_NAK_PSN_SEQ_ERR) {
			sroce_count(sdev->stats, SROCE_CNT_RETRY_SEQ, 1);
			sroce_comp_rewind(qp, psn);
			*kick = true;
			return false;
		}
		w->status = sroce_nak_status(sroce_aeth_value(syn));
		w->done = true;
		return true;
	default:
		return false;	/* reserved syndrome: ignore (C9-112) */
	}
}

/**
 * sroce_comp_rx() - a response packet for requester @qp
 * @qp: RC queue pair
 * @skb: the packet
 * @pkt: its decoded headers
 * @payload_off: offset of its payload in @skb
 */
void sroce_comp_rx(struct sroce_qp *qp, struct sk_buff *skb,
		   const struct sroce_pkt *pkt, unsigned int payload_off)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;
	u32 psn = pkt->bth.psn;
	bool kick = false, err = false;
	struct sroce_swqe *w;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_QP_STATE, 1);
		goto out;
	}
	/* Only PSNs sent and not yet acknowledged can be answered. */
	if (!sroce_psn_before(psn, req->max_psn) ||
	    sroce_psn_before(psn, sroce_psn_sub(req->acked_psn, 1))) {
		ibdev_dbg(qp->ibqp.device, "qp %u: stale %#x op %#x acked %#x max %#x\n",
			  qp->ibqp.qp_num, psn, pkt->bth.opcode, req->acked_psn, req->max_psn);
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_STALE_RESP, 1);
		goto out;
	}

	switch (pkt->info->kind) {
	case SROCE_KIND_ACK:
		err = sroce_comp_ack(qp, pkt, &kick);
		break;
	case SROCE_KIND_READ_RESP:
		w = sroce_comp_find(qp, psn);
		if (!w || w->opcode != IB_WR_RDMA_READ) {
			sroce_count(sdev->stats, SROCE_CNT_RX_DROP_STALE_RESP,
				    1);
			ibdev_dbg(qp->ibqp.device, "qp %u: stale read resp %#x acked %#x own %u\n",
				  qp->ibqp.qp_num, psn, req->acked_psn, qp->sq.queue.own);
			break;
		}
		if (psn != w->resp_psn)
			ibdev_dbg(qp->ibqp.device, "qp %u: read resp %#x want %#x\n",
				  qp->ibqp.qp_num, psn, w->resp_psn);
		/* Responses imply the ACK of every earlier request. */
		sroce_comp_ack_through(qp, sroce_psn_sub(w->first_psn, 1));
		kick = sroce_comp_read_resp(qp, w, skb, pkt, payload_off);
		if (w->done && w->status != IB_WC_SUCCESS) {
			err = true;
			break;
		}
		if (w->done) {
			sroce_comp_ack_through(qp, w->last_psn);
			kick = true;
		}
		sroce_comp_progress(qp);
		break;
	case SROCE_KIND_ATOMIC_ACK:
		w = sroce_comp_find(qp, psn);
		if (!w || w->first_psn != psn ||
		    (w->opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
		     w->opcode != IB_WR_ATOMIC_FETCH_AND_ADD)) {
			sroce_count(sdev->stats, SROCE_CNT_RX_DROP_STALE_RESP,
				    1);
			break;
		}
		sroce_comp_ack_through(qp, sroce_psn_sub(psn, 1));
		sroce_comp_atomic_ack(qp, w, pkt);
		w->resp_psn = sroce_psn_add(psn, 1);
		if (w->status != IB_WC_SUCCESS) {
			err = true;
			break;
		}
		sroce_comp_ack_through(qp, psn);
		sroce_comp_progress(qp);
		kick = true;
		break;
	default:
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_BAD_OPCODE, 1);
		break;
	}
	sroce_comp_skip_done(qp);
	sroce_comp_advance(qp);
	sroce_comp_fixup(qp);
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
	    req->acked_psn == req->max_psn || req->rnr_wait) {
		ibdev_dbg(qp->ibqp.device, "qp %u: timer idle state %d acked %#x max %#x\n",
			  qp->ibqp.qp_num, qp->state, req->acked_psn, req->max_psn);
		goto out;
	}
	sroce_comp_skip_done(qp);
	w = sroce_comp_find(qp, req->acked_psn);
	ibdev_dbg(qp->ibqp.device,
		  "qp %u: timeout, acked %#x max %#x psn %#x cur %u own %u fetched %u wqe %s retry %u\n",
		  qp->ibqp.qp_num, req->acked_psn, req->max_psn, req->psn,
		  req->cur, qp->sq.queue.own, req->fetched, w ? "found" : "none",
		  req->retry);
	if (!w) {
		/*
		 * Nothing left to resend: retire what finished, let the
		 * requester past the window, and keep the timer running while
		 * PSNs are still outstanding rather than go quiet for good.
		 */
		sroce_comp_advance(qp);
		sroce_comp_fixup(qp);
		sroce_comp_arm(qp);
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
	/* A READ resumes at its first missing response. */
	sroce_comp_rewind(qp, w->opcode == IB_WR_RDMA_READ ? w->resp_psn :
							     req->acked_psn);
	mod_timer(&qp->retry_timer, jiffies + sroce_comp_timeout(qp));
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
