// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Responder (IBTA vol. 1 9.7.4, 9.7.5.1, 9.9.3): executes requests -
 * SEND, RDMA WRITE, RDMA READ, atomics - checks PSNs, opcode sequence,
 * R_Keys and access rights, and answers with ACKs, NAKs, RNR NAKs, READ
 * responses and atomic ACKs.
 *
 * Context: the UDP receive softirq, to completion, with RCU held by the
 * caller, which also holds the QP (sroce_qp_rx_get()).  Only READ responses longer than one
 * packet are generated later, from the QP's resp_work (STYLE rule 2).
 * Responder state is under qp->resp.lock; ACKs go out after it is dropped.
 *
 * Trust model: the packet is peer-controlled (already validated by the
 * portable core and the ICRC); the receive WQE may be user-controlled and
 * is copied out of the ring before use.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

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
#include "sroce_resp.h"
#include "sroce_req.h"
#include "sroce_srq.h"
#include "sroce_stats.h"
#include "sroce_tx.h"

#define SROCE_GRH_BYTES		40

/*
 * Take the next receive WQE (from the QP's RQ or its SRQ) into @rc, which
 * has @size bytes (room for the queue's max_sge SGEs); false if none.
 */
static bool sroce_resp_get_wqe(struct sroce_qp *qp, struct sroce_recv_copy *rc,
			       size_t size)
{
	struct sroce_srq *srq = qp->ibqp.srq ? to_sroce_srq(qp->ibqp.srq) :
					       NULL;
	struct sroce_wq *wq = srq ? &srq->rq : &qp->rq;
	struct sroce_queue *q = &wq->queue;
	const struct sroce_recv_copy *src;
	struct ib_event ev;
	unsigned long flags;
	bool got = false, limit = false;
	u32 i, max;

	spin_lock_irqsave(&wq->lock, flags);
	if (sroce_queue_next(q)) {
		/* SGEs that fit both the ring's slots and @rc. */
		max = (min_t(size_t, q->elem_size, size) - sizeof(rc->wqe)) /
		      sizeof(struct rxe_sge);
		max = min3(max, wq->max_sge, (u32)SROCE_MAX_SGE);
		/* The header, then only the SGEs it claims (bounded). */
		src = sroce_queue_consumer_addr(q);
		memcpy(&rc->wqe, &src->wqe, sizeof(rc->wqe));
		if (rc->wqe.dma.num_sge > max)
			rc->wqe.dma.num_sge = U32_MAX;
		else
			for (i = 0; i < rc->wqe.dma.num_sge; i++)
				rc->sge[i] = src->sge[i];
		sroce_queue_advance_consumer(q);
		got = true;
		/* IBTA 10.2.9.2: the armed limit fires once, then disarms. */
		if (srq && srq->limit && sroce_queue_count(q) < srq->limit) {
			srq->limit = 0;
			limit = true;
		}
	}
	spin_unlock_irqrestore(&wq->lock, flags);
	if (limit && srq->ibsrq.event_handler) {
		ev.device = srq->ibsrq.device;
		ev.element.srq = &srq->ibsrq;
		ev.event = IB_EVENT_SRQ_LIMIT_REACHED;
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	return got;
}

/* Scatter @len bytes of @buf over the WQE's SGEs; an IBTA status. */
static enum ib_wc_status sroce_scatter(struct sroce_qp *qp,
				       const struct sroce_recv_copy *rc,
				       const u8 *buf, u32 len)
{
	if (rc->wqe.dma.num_sge == U32_MAX)
		return IB_WC_LOC_LEN_ERR;
	return sroce_sge_copy(to_sroce_dev(qp->ibqp.device), qp->ibqp.pd,
			      rc->sge, rc->wqe.dma.num_sge, 0, (void *)buf,
			      len, SROCE_TO_MEM, NULL);
}

/*
 * A UD receive: the 40-byte GRH slot (RoCEv2: the IPv4 header in its last
 * 20 bytes, or the IPv6 header), then the payload, scattered straight
 * from the packet.  Under resp.lock, which owns resp.wqe.
 */
static enum ib_wc_status sroce_resp_ud_place(struct sroce_qp *qp,
					     const struct sroce_rxp *rx,
					     const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	const struct sroce_recv_copy *rc = qp->resp.wqe;
	const struct sk_buff *skb = rx->skb;	/* UD never comes as a frame */
	u8 grh[SROCE_GRH_BYTES] = {};
	enum ib_wc_status st;

	if (ip_hdr(skb)->version == 4)
		memcpy(grh + SROCE_GRH_BYTES - sizeof(struct iphdr),
		       ip_hdr(skb), sizeof(struct iphdr));
	else
		memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
	st = sroce_scatter(qp, rc, grh, SROCE_GRH_BYTES);
	if (st != IB_WC_SUCCESS || !pkt->payload_len)
		return st;
	return sroce_sge_from_rxp(sdev, qp->ibqp.pd, rc->sge,
				  rc->wqe.dma.num_sge, SROCE_GRH_BYTES, rx,
				  pkt->payload_len, NULL);
}

static void sroce_resp_ud(struct sroce_qp *qp, const struct sroce_rxp *rx,
			  const struct sroce_pkt *pkt)
{
	const struct sk_buff *skb = rx->skb;
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *rs = &qp->resp;
	struct ib_wc wc = {};
	unsigned long flags;

	/* IBTA 10.2.5 / C10-15: a Q_Key mismatch is a silent drop. */
	if (pkt->deth.qkey != qp->attr.qkey) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_QKEY, 1);
		return;
	}
	/* A UD message is one packet, at most the path MTU (IBTA 9.8). */
	if (pkt->payload_len > sroce_path_mtu(READ_ONCE(sdev->ndev->mtu))) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_BAD_LEN, 1);
		return;
	}
	spin_lock_irqsave(&rs->lock, flags);
	/* UD has no RNR: without a posted receive the packet is dropped. */
	if (!sroce_resp_get_wqe(qp, rs->wqe, rs->wqe_size)) {
		spin_unlock_irqrestore(&rs->lock, flags);
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_NO_RECV, 1);
		return;
	}
	wc.wr_id = rs->wqe->wqe.wr_id;
	wc.status = sroce_resp_ud_place(qp, rx, pkt);
	spin_unlock_irqrestore(&rs->lock, flags);
	wc.opcode = IB_WC_RECV;
	wc.byte_len = SROCE_GRH_BYTES + pkt->payload_len;
	wc.qp = &qp->ibqp;
	wc.src_qp = pkt->deth.sqpn;
	wc.wc_flags = IB_WC_GRH;
	if (pkt->info->hdrs & SROCE_HDRF(SROCE_HDR_IMMDT)) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = cpu_to_be32(pkt->imm);
	}
	wc.port_num = 1;
	wc.network_hdr_type = ip_hdr(skb)->version == 4 ? RDMA_NETWORK_IPV4 :
							   RDMA_NETWORK_IPV6;
	sroce_cq_post(qp->rcq, &wc, pkt->bth.se);
	sroce_count(sdev->stats, SROCE_CNT_RX_DELIVERED, 1);
}

#define SROCE_KIND_NONE		0xff

/* What a request leaves for after the responder lock is dropped. */
struct sroce_resp_out {
	bool ack;		/* send an ACK, NAK or atomic ACK */
	bool atomic;		/* ... an atomic ACK */
	bool zero_read;		/* ... an RDMA READ response of length 0 */
	u8 syndrome;
	u32 psn;
	u32 msn;
	u64 orig;
	bool error;		/* move the QP to ERR */
	bool read;		/* READ responses to generate */
	int event;		/* async event, or -1 */
};

static void sroce_resp_nak(struct sroce_resp_out *out, u32 psn, u32 msn,
			   u8 code, int event)
{
	out->ack = true;
	out->syndrome = sroce_aeth_nak(code);
	out->psn = psn;
	out->msn = msn;
	out->error = true;
	out->event = event;
}

/* NAK a request as invalid (IBTA 9.9.3.1.2); the responder QP fails. */
static void sroce_resp_bad_request(struct sroce_qp *qp, u32 psn,
				   struct sroce_resp_out *out)
{
	sroce_count(to_sroce_dev(qp->ibqp.device)->stats,
		    SROCE_CNT_RX_BAD_REQUEST, 1);
	sroce_resp_nak(out, psn, qp->resp.msn, SROCE_NAK_INVALID_REQ,
		       IB_EVENT_QP_REQ_ERR);
}

/* NAK an R_Key or access violation (IBTA 9.9.3.1.3); the QP fails. */
static void sroce_resp_access_error(struct sroce_qp *qp, u32 psn,
				    struct sroce_resp_out *out)
{
	sroce_count(to_sroce_dev(qp->ibqp.device)->stats,
		    SROCE_CNT_RX_ACCESS_ERR, 1);
	sroce_resp_nak(out, psn, qp->resp.msn, SROCE_NAK_REMOTE_ACCESS_ERR,
		       IB_EVENT_QP_ACCESS_ERR);
}

static void sroce_resp_ack(struct sroce_resp_out *out, u32 psn, u32 msn)
{
	out->ack = true;
	out->syndrome = sroce_aeth_ack(SROCE_CREDIT_INVALID);
	out->psn = psn;
	out->msn = msn;
}

/* Send an ACK/NAK (IBTA 9.7.5.1) or an atomic ACK; any context. */
static void sroce_resp_send_ack(struct sroce_qp *qp,
				const struct sroce_resp_out *out)
{
	struct sroce_frame f __uninitialized;	/* (sroce_req_run()) */
	struct sroce_pkt *pkt = &f.pkt;
	bool local;
	int len;

	memset(pkt, 0, sizeof(*pkt));
	if (out->atomic)
		pkt->bth.opcode = SROCE_OPC_RC | SROCE_OP_ATOMIC_ACKNOWLEDGE;
	else if (out->zero_read)
		pkt->bth.opcode = SROCE_OPC_RC | SROCE_OP_READ_RESPONSE_ONLY;
	else
		pkt->bth.opcode = SROCE_OPC_RC | SROCE_OP_ACKNOWLEDGE;
	pkt->bth.pkey = 0xffff;
	pkt->bth.dqpn = qp->attr.dest_qp_num;
	pkt->bth.psn = out->psn;
	pkt->aeth.syndrome = out->syndrome;
	pkt->aeth.msn = out->msn;
	pkt->atmack = out->orig;
	len = sroce_pkt_finish(pkt);
	if (len <= 0)
		return;
	f.len = len;
	sroce_tx_qp(qp, &qp->av, NULL, &f, &local);
}

/* Receive completion for the WQE held in resp state. */
static void sroce_resp_complete(struct sroce_qp *qp, const struct sroce_pkt *pkt,
				enum ib_wc_opcode opcode, u32 len,
				enum ib_wc_status status)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *rs = &qp->resp;
	struct ib_wc wc = {
		.wr_id		= rs->wqe->wqe.wr_id,
		.status		= status,
		.opcode		= opcode,
		.byte_len	= len,
		.qp		= &qp->ibqp,
		.src_qp		= qp->attr.dest_qp_num,
		.port_num	= 1,
	};

	if (status == IB_WC_SUCCESS) {
		if (sroce_opcode_has(pkt->info, SROCE_HDR_IMMDT)) {
			wc.wc_flags |= IB_WC_WITH_IMM;
			wc.ex.imm_data = cpu_to_be32(pkt->imm);
		} else if (sroce_opcode_has(pkt->info, SROCE_HDR_IETH)) {
			wc.wc_flags |= IB_WC_WITH_INVALIDATE;
			wc.ex.invalidate_rkey = pkt->ieth_rkey;
		}
		sroce_count(sdev->stats, SROCE_CNT_RX_DELIVERED, 1);
	}
	rs->have_wqe = false;
	sroce_cq_post(qp->rcq, &wc, pkt->bth.se);
}

/* SEND FIRST/MIDDLE/LAST/ONLY (IBTA 9.7.4.1.3 ff.). */
static void sroce_resp_send(struct sroce_qp *qp, const struct sroce_rxp *rx,
			    const struct sroce_pkt *pkt,
			    struct sroce_resp_out *out)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *rs = &qp->resp;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	bool first = pkt->info->flags & SROCE_OPF_FIRST;
	bool last = pkt->info->flags & SROCE_OPF_LAST;
	u32 psn = pkt->bth.psn;
	enum ib_wc_status st;

	if (first) {
		if (!rs->have_wqe &&
		    !sroce_resp_get_wqe(qp, rs->wqe, rs->wqe_size)) {
			if (rc) {
				/* IBTA 9.7.5.1.3: RNR NAK, PSN not consumed. */
				sroce_count(sdev->stats, SROCE_CNT_TX_RNR_NAK, 1);
				out->ack = true;
				out->syndrome =
					sroce_aeth_rnr(qp->attr.min_rnr_timer);
				out->psn = psn;
				out->msn = rs->msn;
				return;
			}
			/* UC: the message is dropped (IBTA 9.8.3.1). */
			sroce_count(sdev->stats, SROCE_CNT_RX_DROP_NO_RECV, 1);
			rs->uc_drop = !last;
			rs->cur_kind = last ? SROCE_KIND_NONE : SROCE_KIND_SEND;
			rs->epsn = sroce_psn_add(psn, 1);
			return;
		}
		rs->have_wqe = true;
		rs->offset = 0;
		rs->cur_kind = SROCE_KIND_SEND;
	}
	rs->epsn = sroce_psn_add(psn, 1);
	if (rs->uc_drop) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_UC_MSG, 1);
		if (last) {
			rs->uc_drop = false;
			rs->cur_kind = SROCE_KIND_NONE;
		}
		return;
	}

	st = rs->wqe->wqe.dma.num_sge == U32_MAX ? IB_WC_LOC_LEN_ERR :
	     sroce_sge_from_rxp(sdev, qp->ibqp.pd, rs->wqe->sge,
				rs->wqe->wqe.dma.num_sge, rs->offset, rx,
				pkt->payload_len, &rs->mem_hint);
	if (st != IB_WC_SUCCESS) {
		/* IBTA 9.9.3.1: the message cannot be placed. */
		sroce_resp_complete(qp, pkt, IB_WC_RECV, rs->offset, st);
		rs->cur_kind = SROCE_KIND_NONE;
		sroce_count(sdev->stats, SROCE_CNT_RX_BAD_REQUEST, 1);
		if (rc)
			sroce_resp_nak(out, psn, rs->msn,
				       st == IB_WC_LOC_LEN_ERR ?
				       SROCE_NAK_INVALID_REQ :
				       SROCE_NAK_REMOTE_OP_ERR, -1);
		else
			out->error = true;
		return;
	}
	rs->offset += pkt->payload_len;
	if (last) {
		st = IB_WC_SUCCESS;
		if (sroce_opcode_has(pkt->info, SROCE_HDR_IETH) &&
		    sroce_mem_invalidate(sdev, pkt->ieth_rkey, qp->ibqp.pd,
					 qp->ibqp.qp_num, true)) {
			st = IB_WC_REM_INV_REQ_ERR;
			sroce_resp_nak(out, psn, rs->msn,
				       SROCE_NAK_INVALID_REQ, -1);
		}
		sroce_resp_complete(qp, pkt, IB_WC_RECV, rs->offset, st);
		rs->cur_kind = SROCE_KIND_NONE;
		rs->msn = sroce_msn_add(rs->msn, 1);
	}
	if (rc && pkt->bth.ack_req && !out->ack)
		sroce_resp_ack(out, psn, rs->msn);
}

/*
 * Resolve @rkey (MR or window) for @access over [va, va + len).  Under
 * the responder lock, which also guards its lookup hint, and under
 * rcu_read_lock(), which keeps the result usable (sroce_mem_find()).
 */
static struct sroce_mem *sroce_resp_rkey(struct sroce_qp *qp, u32 rkey,
					 u64 va, u32 len, int access)
{
	lockdep_assert_held(&qp->resp.lock);
	return sroce_mem_find_remote(to_sroce_dev(qp->ibqp.device), rkey,
				    qp->ibqp.pd, qp->ibqp.qp_num, va, len,
				    access, &qp->resp.mem_hint);
}

/*
 * The first packet of a WRITE: its RETH, checked for the whole message
 * before a byte is placed (IBTA 9.7.4.1.4 ff.: an invalid or refused
 * request is NAKed, and must not have written part of its range).
 * Return: 0, -EINVAL (invalid request) or -EACCES (access error).
 */
static int sroce_resp_write_begin(struct sroce_qp *qp,
				  const struct sroce_pkt *pkt)
{
	struct sroce_resp *rs = &qp->resp;
	struct sroce_mem *mem;

	rs->va = pkt->reth.va;
	rs->rkey = pkt->reth.rkey;
	rs->wlen = pkt->reth.dma_len;
	rs->offset = 0;
	rs->uc_drop = false;
	rs->cur_kind = SROCE_KIND_WRITE;
	if (!sroce_reth_len_ok(rs->wlen))
		return -EINVAL;
	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE))
		return -EACCES;
	if (!rs->wlen)
		return 0;	/* a zero-length WRITE checks no key */
	rcu_read_lock();
	mem = sroce_resp_rkey(qp, rs->rkey, rs->va, rs->wlen,
			      IB_ACCESS_REMOTE_WRITE);
	rcu_read_unlock();
	return mem ? 0 : -EACCES;
}

/* RDMA WRITE FIRST/MIDDLE/LAST/ONLY (IBTA 9.7.4.1.4). */
static void sroce_resp_write(struct sroce_qp *qp, const struct sroce_rxp *rx,
			     const struct sroce_pkt *pkt,
			     struct sroce_resp_out *out)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *rs = &qp->resp;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	bool first = pkt->info->flags & SROCE_OPF_FIRST;
	bool last = pkt->info->flags & SROCE_OPF_LAST;
	bool imm = sroce_opcode_has(pkt->info, SROCE_HDR_IMMDT);
	u32 psn = pkt->bth.psn, len = pkt->payload_len;
	struct sroce_mem *mem = NULL;
	int err = 0;

	if (first) {
		err = sroce_resp_write_begin(qp, pkt);
		if (err == -EINVAL) {
			sroce_count(sdev->stats, SROCE_CNT_RX_BAD_REQUEST, 1);
			goto bad_req;
		}
		if (err)
			goto access;
	}
	if (rs->uc_drop) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_UC_MSG, 1);
		rs->epsn = sroce_psn_add(psn, 1);
		if (last) {
			rs->uc_drop = false;
			rs->cur_kind = SROCE_KIND_NONE;
		}
		return;
	}
	/* The message may not overrun (or, at its end, fall short of) RETH. */
	if (len > rs->wlen - rs->offset ||
	    (last && rs->offset + len != rs->wlen)) {
		sroce_count(sdev->stats, SROCE_CNT_RX_BAD_REQUEST, 1);
		goto bad_req;
	}
	/* With immediate, a receive WQE is consumed: need one first. */
	if (last && imm && !rs->have_wqe) {
		if (!sroce_resp_get_wqe(qp, rs->wqe, rs->wqe_size)) {
			if (rc) {
				sroce_count(sdev->stats, SROCE_CNT_TX_RNR_NAK, 1);
				out->ack = true;
				out->syndrome =
					sroce_aeth_rnr(qp->attr.min_rnr_timer);
				out->psn = psn;
				out->msn = rs->msn;
				return;
			}
			sroce_count(sdev->stats, SROCE_CNT_RX_DROP_NO_RECV, 1);
			rs->epsn = sroce_psn_add(psn, 1);
			rs->cur_kind = SROCE_KIND_NONE;
			return;
		}
		rs->have_wqe = true;
	}
	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE))
		goto access;
	if (len) {
		rcu_read_lock();
		mem = sroce_resp_rkey(qp, rs->rkey, rs->va + rs->offset, len,
				      IB_ACCESS_REMOTE_WRITE);
		err = mem ? sroce_mem_from_rxp(mem, rs->va + rs->offset, rx,
					       0, len) : -EACCES;
		rcu_read_unlock();
		if (err)
			goto access;
	}
	rs->offset += len;
	rs->epsn = sroce_psn_add(psn, 1);
	if (last) {
		if (imm)
			sroce_resp_complete(qp, pkt, IB_WC_RECV_RDMA_WITH_IMM,
					    rs->wlen, IB_WC_SUCCESS);
		rs->cur_kind = SROCE_KIND_NONE;
		rs->msn = sroce_msn_add(rs->msn, 1);
	}
	if (rc && pkt->bth.ack_req)
		sroce_resp_ack(out, psn, rs->msn);
	return;

access:
	rs->cur_kind = SROCE_KIND_NONE;
	if (rc) {
		sroce_resp_access_error(qp, psn, out);
	} else {
		sroce_count(sdev->stats, SROCE_CNT_RX_ACCESS_ERR, 1);
		rs->uc_drop = !last;
		rs->epsn = sroce_psn_add(psn, 1);
	}
	return;
bad_req:
	rs->cur_kind = SROCE_KIND_NONE;
	if (rc) {
		sroce_resp_nak(out, psn, rs->msn, SROCE_NAK_INVALID_REQ,
			       IB_EVENT_QP_REQ_ERR);
	} else {
		rs->uc_drop = !last;
		rs->epsn = sroce_psn_add(psn, 1);
	}
}

static struct sroce_rdres *sroce_resp_new_res(struct sroce_resp *rs)
{
	struct sroce_rdres *res = &rs->res[rs->res_head];

	rs->res_head = (rs->res_head + 1) % rs->nres;
	rs->reads_unsent -= sroce_rdres_unsent(res);
	memset(res, 0, sizeof(*res));
	return res;
}

/*
 * Move the send point of READ entry @res, keeping count of the entries
 * with responses to send: that count spares sroce_resp_read_next() a scan
 * of every entry when there is none (after each READ, for one).
 */
static void sroce_rdres_set_sent(struct sroce_resp *rs,
				 struct sroce_rdres *res, u32 sent)
{
	rs->reads_unsent -= sroce_rdres_unsent(res);
	res->sent = sent;
	rs->reads_unsent += sroce_rdres_unsent(res);
}

/* RDMA READ request (IBTA 9.7.4.1.5): responses are generated later. */
static void sroce_resp_read(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			    struct sroce_resp_out *out)
{
	struct sroce_resp *rs = &qp->resp;
	u32 len = pkt->reth.dma_len;
	struct sroce_rdres *res;
	struct sroce_mem *mem;

	if (!sroce_reth_len_ok(len)) {
		sroce_resp_bad_request(qp, pkt->bth.psn, out);
		return;
	}
	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_READ))
		goto access;
	if (len) {
		rcu_read_lock();
		mem = sroce_resp_rkey(qp, pkt->reth.rkey, pkt->reth.va, len,
				      IB_ACCESS_REMOTE_READ);
		rcu_read_unlock();
		if (!mem)
			goto access;
	}
	res = sroce_resp_new_res(rs);
	res->kind = SROCE_KIND_READ_REQ;
	res->psn = pkt->bth.psn;
	res->npkts = max_t(u32, DIV_ROUND_UP(len, qp->mtu), 1);
	res->va = pkt->reth.va;
	res->rkey = pkt->reth.rkey;
	res->length = len;
	rs->reads_unsent++;
	rs->msn = sroce_msn_add(rs->msn, 1);
	res->msn = rs->msn;
	rs->epsn = sroce_psn_add(pkt->bth.psn, res->npkts);
	out->read = true;
	return;
access:
	sroce_resp_access_error(qp, pkt->bth.psn, out);
}

/* CmpSwap / FetchAdd (IBTA 9.7.4.1.6 ff.), executed here and now. */
static void sroce_resp_atomic(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			      struct sroce_resp_out *out)
{
	struct sroce_resp *rs = &qp->resp;
	const struct sroce_atmeth *a = &pkt->atmeth;
	struct sroce_rdres *res;
	struct sroce_mem *mem;
	u64 orig;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_ATOMIC))
		goto access;
	if (a->va & 7) {
		/* IBTA 9.4.5: atomics need a naturally aligned address. */
		sroce_resp_bad_request(qp, pkt->bth.psn, out);
		return;
	}
	rcu_read_lock();
	mem = sroce_resp_rkey(qp, a->rkey, a->va, sizeof(u64),
			      IB_ACCESS_REMOTE_ATOMIC);
	if (!mem) {
		rcu_read_unlock();
		goto access;
	}
	orig = sroce_mem_atomic(mem, a->va,
				(pkt->bth.opcode & 0x1f) ==
				SROCE_OP_COMPARE_SWAP,
				(pkt->bth.opcode & 0x1f) ==
				SROCE_OP_COMPARE_SWAP ? a->compare :
				a->swap_add, a->swap_add);
	rcu_read_unlock();

	res = sroce_resp_new_res(rs);
	res->kind = SROCE_KIND_ATOMIC;
	res->psn = pkt->bth.psn;
	res->orig = orig;
	rs->msn = sroce_msn_add(rs->msn, 1);
	res->msn = rs->msn;
	rs->epsn = sroce_psn_add(pkt->bth.psn, 1);
	sroce_resp_ack(out, pkt->bth.psn, rs->msn);
	out->atomic = true;
	out->orig = orig;
	return;
access:
	sroce_resp_access_error(qp, pkt->bth.psn, out);
}

/* ATOMIC WRITE (IBTA 1.5 9.4.6): one aligned 64-bit store, then an ACK. */
static void sroce_resp_atomic_write(struct sroce_qp *qp,
				    const struct sroce_rxp *rx,
				    const struct sroce_pkt *pkt,
				    struct sroce_resp_out *out)
{
	struct sroce_resp *rs = &qp->resp;
	u64 va = pkt->reth.va, val;
	struct sroce_mem *mem;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE))
		goto access;
	if ((va & 7) || pkt->payload_len != sizeof(val) ||
	    sroce_rxp_copy(rx, 0, &val, sizeof(val))) {
		sroce_resp_bad_request(qp, pkt->bth.psn, out);
		return;
	}
	rcu_read_lock();
	mem = sroce_resp_rkey(qp, pkt->reth.rkey, va, sizeof(val),
			      IB_ACCESS_REMOTE_WRITE);
	/* Aligned and inside one page: a single 64-bit store. */
	if (mem)
		sroce_mem_copy(mem, va, &val, sizeof(val), SROCE_TO_MEM);
	rcu_read_unlock();
	if (!mem)
		goto access;
	rs->epsn = sroce_psn_add(pkt->bth.psn, 1);
	rs->msn = sroce_msn_add(rs->msn, 1);
	sroce_resp_ack(out, pkt->bth.psn, rs->msn);
	out->zero_read = true;
	return;
access:
	sroce_resp_access_error(qp, pkt->bth.psn, out);
}

/*
 * FLUSH (IBTA 1.5 memory placement extensions): what earlier requests
 * placed in the range (or the whole region) must be visible before the
 * answer, an RDMA READ response of length zero.  Placement here is a CPU
 * copy, so global visibility takes a write barrier.  Persistence needs an
 * MR registered for it, which sroce never grants (it has no persistent
 * memory to offer): such a FLUSH fails the R_Key check.
 */
static void sroce_resp_flush(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			     struct sroce_resp_out *out)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *rs = &qp->resp;
	u8 plt = pkt->feth.plt, sel = pkt->feth.sel;
	u32 len = pkt->reth.dma_len;
	u64 va = pkt->reth.va;
	struct sroce_mem *mem;
	int access = 0;

	if (plt & SROCE_FLUSH_GLOBAL)
		access |= SROCE_ACCESS_FLUSH_GLOBAL;
	if (plt & SROCE_FLUSH_PERSISTENT)
		access |= SROCE_ACCESS_FLUSH_PERSISTENT;
	if (!access || plt > (SROCE_FLUSH_GLOBAL | SROCE_FLUSH_PERSISTENT) ||
	    sel > SROCE_FLUSH_MR || !sroce_reth_len_ok(len)) {
		sroce_resp_bad_request(qp, pkt->bth.psn, out);
		return;
	}
	/* The QP must allow the placement type, as for READ and WRITE. */
	if ((qp->attr.qp_access_flags & access) != access)
		goto access;
	rcu_read_lock();
	if (sel == SROCE_FLUSH_MR) {
		/* Address and length are ignored: check the key's start. */
		mem = sroce_mem_find(sdev, pkt->reth.rkey, &rs->mem_hint);
		va = mem ? mem->iova : 0;
		len = 1;
	}
	/* As for a READ or WRITE, a zero-length range checks no key. */
	mem = len ? sroce_resp_rkey(qp, pkt->reth.rkey, va, len, access) :
		    NULL;
	rcu_read_unlock();
	if (len && !mem)
		goto access;
	/* Earlier requests' stores before the answer that vouches for them. */
	wmb();
	rs->epsn = sroce_psn_add(pkt->bth.psn, 1);
	rs->msn = sroce_msn_add(rs->msn, 1);
	sroce_resp_ack(out, pkt->bth.psn, rs->msn);
	out->zero_read = true;
	return;
access:
	sroce_resp_access_error(qp, pkt->bth.psn, out);
}

/*
 * A duplicate request (IBTA 9.7.5.1.2): SENDs and WRITEs are acknowledged
 * again without being executed; READs are answered again from the
 * duplicate's PSN on; atomics replay the saved result.
 */
static void sroce_resp_dup(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			   struct sroce_resp_out *out)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *rs = &qp->resp;
	u32 psn = pkt->bth.psn, i;
	struct sroce_rdres *res;

	sroce_count(sdev->stats, SROCE_CNT_RX_DUP_REQUEST, 1);
	switch (pkt->info->kind) {
	case SROCE_KIND_READ_REQ:
		for (i = 0; i < rs->nres; i++) {
			res = &rs->res[i];
			if (res->kind != SROCE_KIND_READ_REQ ||
			    !sroce_psn_in_window(psn, res->psn, res->npkts))
				continue;
			sroce_rdres_set_sent(rs, res,
					     sroce_psn_dist(res->psn, psn));
			out->read = true;
			ibdev_dbg(qp->ibqp.device, "qp %u: dup read %#x entry %u psn %#x n %u\n",
				  qp->ibqp.qp_num, psn, i, res->psn, res->npkts);
			return;
		}
		return;
	case SROCE_KIND_ATOMIC:
		for (i = 0; i < rs->nres; i++) {
			res = &rs->res[i];
			if (res->kind != SROCE_KIND_ATOMIC || res->psn != psn)
				continue;
			sroce_resp_ack(out, psn, res->msn);
			out->atomic = true;
			out->orig = res->orig;
			return;
		}
		return;
	case SROCE_KIND_ATOMIC_WRITE:
	case SROCE_KIND_FLUSH:
		/* Executed once; answered again as the first time. */
		sroce_resp_ack(out, psn, rs->msn);
		out->zero_read = true;
		return;
	default:
		if (pkt->bth.ack_req)
			sroce_resp_ack(out, psn, rs->msn);
		return;
	}
}

/* An RC/UC request at the expected PSN, opcode sequence checked. */
static void sroce_resp_request(struct sroce_qp *qp, const struct sroce_rxp *rx,
			       const struct sroce_pkt *pkt,
			       struct sroce_resp_out *out)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *rs = &qp->resp;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	bool first = pkt->info->flags & SROCE_OPF_FIRST;
	u8 kind = pkt->info->kind;

	/*
	 * IBTA 9.7.4.1.1 (C9-84): a message continues with its own kind;
	 * and its packets fill the path MTU but for the last, which may
	 * not exceed it (9.7.4.1.4).
	 */
	if ((rs->cur_kind != SROCE_KIND_NONE ?
	     (first || kind != rs->cur_kind) : !first) ||
	    sroce_pkt_check_mtu(pkt, qp->mtu) != SROCE_OK) {
		if (!rc) {
			/* UC: abandon the message; resync at the next one. */
			sroce_count(sdev->stats, SROCE_CNT_RX_DROP_UC_MSG, 1);
			rs->epsn = sroce_psn_add(pkt->bth.psn, 1);
			if (rs->cur_kind == SROCE_KIND_NONE || first ||
			    (pkt->info->flags & SROCE_OPF_LAST)) {
				rs->cur_kind = SROCE_KIND_NONE;
				rs->uc_drop = false;
			} else {
				rs->uc_drop = true;
			}
			return;
		}
		sroce_resp_bad_request(qp, pkt->bth.psn, out);
		return;
	}

	switch (kind) {
	case SROCE_KIND_SEND:
		sroce_resp_send(qp, rx, pkt, out);
		break;
	case SROCE_KIND_WRITE:
		sroce_resp_write(qp, rx, pkt, out);
		break;
	case SROCE_KIND_READ_REQ:
		sroce_resp_read(qp, pkt, out);
		break;
	case SROCE_KIND_ATOMIC:
		sroce_resp_atomic(qp, pkt, out);
		break;
	case SROCE_KIND_ATOMIC_WRITE:
		sroce_resp_atomic_write(qp, rx, pkt, out);
		break;
	case SROCE_KIND_FLUSH:
		sroce_resp_flush(qp, pkt, out);
		break;
	default:
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_UNSUPPORTED, 1);
		break;
	}
}

static void sroce_resp_read_rx(struct sroce_qp *qp);

/* RC and UC requests. */
static void sroce_resp_conn(struct sroce_qp *qp, const struct sroce_rxp *rx,
			    const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp_out out = { .event = -1 };
	struct sroce_resp *rs = &qp->resp;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	bool comm_est = false;
	unsigned long flags;

	sroce_req_heard(qp);
	spin_lock_irqsave(&rs->lock, flags);
	/*
	 * Again under the lock that a reset takes to start the connection
	 * over: a packet of the old one must not act on the new one (its
	 * receive WQEs, its state) once the QP went through RESET.
	 */
	if (!sroce_qp_state_live(READ_ONCE(qp->state))) {
		spin_unlock_irqrestore(&rs->lock, flags);
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_QP_STATE, 1);
		return;
	}
	if (!rs->comm_est) {
		/* IBTA 11.6.3: the first packet received in RTR. */
		rs->comm_est = true;
		comm_est = qp->state == IB_QPS_RTR;
	}
	switch (sroce_psn_classify(pkt->bth.psn, rs->epsn)) {
	case SROCE_PSN_DUPLICATE:
		if (rc)
			sroce_resp_dup(qp, pkt, &out);
		else
			sroce_count(sdev->stats, SROCE_CNT_RX_DROP_UC_MSG, 1);
		break;
	case SROCE_PSN_AHEAD:
		sroce_count(sdev->stats, SROCE_CNT_RX_OUT_OF_SEQ, 1);
		if (rc) {
			/* IBTA 9.7.5.1.1: one NAK until the gap is filled. */
			if (!rs->nak_sent) {
				rs->nak_sent = true;
				sroce_count(sdev->stats, SROCE_CNT_TX_SEQ_NAK, 1);
				out.ack = true;
				out.syndrome =
					sroce_aeth_nak(SROCE_NAK_PSN_SEQ_ERR);
				out.psn = rs->epsn;
				out.msn = rs->msn;
			}
			break;
		}
		/* UC (IBTA 9.8.3.1): packets were lost; start over here. */
		if (rs->cur_kind != SROCE_KIND_NONE)
			rs->uc_drop = true;
		rs->epsn = pkt->bth.psn;
		fallthrough;
	case SROCE_PSN_EXPECTED:
		rs->nak_sent = false;
		sroce_resp_request(qp, rx, pkt, &out);
		break;
	}
	if (out.read)
		rs->read_busy = true;
	if (out.ack && rs->read_busy && !out.error) {
		/* Not ahead of the READ responses still to go. */
		rs->held = true;
		rs->held_atomic = out.atomic;
		rs->held_zero_read = out.zero_read;
		rs->held_syndrome = out.syndrome;
		rs->held_psn = out.psn;
		rs->held_msn = out.msn;
		rs->held_orig = out.orig;
		out.ack = false;
	}
	spin_unlock_irqrestore(&rs->lock, flags);

	if (comm_est)
		sroce_qp_event(qp, IB_EVENT_COMM_EST);
	if (out.ack)
		sroce_resp_send_ack(qp, &out);
	if (out.read)
		sroce_resp_read_rx(qp);
	if (out.error) {
		if (out.event >= 0)
			sroce_qp_event(qp, out.event);
		sroce_qp_error(qp);
	}
}

/* The READ resource of the request at @psn, under the responder lock. */
static struct sroce_rdres *sroce_resp_find_read(struct sroce_resp *rs,
						u32 psn)
{
	u32 i;

	for (i = 0; i < rs->nres; i++)
		if (rs->res[i].kind == SROCE_KIND_READ_REQ &&
		    rs->res[i].psn == psn)
			return &rs->res[i];
	return NULL;
}

/*
 * Build the next READ response packet under the responder lock: an skb,
 * or frame @frame (its len set, 0 on entry); NULL and no frame when none
 * is due.
 * Responses go out in request order.
 */
static struct sk_buff *sroce_resp_read_next(struct sroce_qp *qp,
					    struct sroce_rdres **resp,
					    u32 *psnp,
					    struct sroce_frame *frame)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *rs = &qp->resp;
	struct sroce_rdres *res = NULL;
	struct sroce_pkt pkt = {};
	struct sroce_mem *mem = NULL;
	struct sk_buff *skb = NULL;
	u32 i, j, off, len, pad;
	bool zcopy;
	u8 op;
	int hdr;

	if (!rs->reads_unsent)
		return NULL;
	/* The oldest first: responses go out in request order. */
	for (i = 0, j = rs->res_head; i < rs->nres; i++) {
		if (sroce_rdres_unsent(&rs->res[j])) {
			res = &rs->res[j];
			break;
		}
		if (++j == rs->nres)
			j = 0;
	}
	if (!res) {
		/* The count drifted from the entries: trust the entries. */
		rs->reads_unsent = 0;
		return NULL;
	}

	off = res->sent * qp->mtu;
	len = min(qp->mtu, res->length - off);
	if (res->npkts == 1)
		op = SROCE_OP_READ_RESPONSE_ONLY;
	else if (res->sent == 0)
		op = SROCE_OP_READ_RESPONSE_FIRST;
	else if (res->sent == res->npkts - 1)
		op = SROCE_OP_READ_RESPONSE_LAST;
	else
		op = SROCE_OP_READ_RESPONSE_MIDDLE;
	pkt.bth.opcode = SROCE_OPC_RC | op;
	pkt.bth.pkey = 0xffff;
	pkt.bth.dqpn = qp->attr.dest_qp_num;
	pkt.bth.psn = sroce_psn_add(res->psn, res->sent);
	pkt.aeth.syndrome = sroce_aeth_ack(SROCE_CREDIT_INVALID);
	pkt.aeth.msn = res->msn;
	pkt.payload_len = len;
	pad = sroce_pad_for(len);
	*resp = res;
	*psnp = res->psn;
	sroce_rdres_set_sent(rs, res, res->sent + 1);

	hdr = sroce_opcode_info(pkt.bth.opcode)->hdr_len;
	/* Checked at request time; the MR may have gone since. */
	rcu_read_lock();
	mem = len ? sroce_resp_rkey(qp, res->rkey, res->va + off, len,
				    IB_ACCESS_REMOTE_READ) : NULL;
	if (len && !mem)
		goto drop;
	/* As the requester's payload (sroce_req.c): from the MR's pages. */
	zcopy = !pad && len >= SROCE_ZCOPY_MIN &&
		sroce_tx_zcopy_ok(sdev, READ_ONCE(qp->req.tx_local));
	if (!zcopy && hdr + len + pad + SROCE_ICRC_BYTES <= SROCE_FRAME_MAX &&
	    sroce_tx_self(qp)) {
		if (sroce_pkt_finish(&pkt) != hdr)
			goto drop;
		if (len) {
			sroce_mem_copy(mem, res->va + off, frame->buf + hdr,
				       len, SROCE_FROM_MEM);
			memset(frame->buf + hdr + len, 0, pad);
		}
		rcu_read_unlock();
		frame->pkt = pkt;
		frame->len = hdr + len + pad;
		return NULL;
	}
again:
	skb = sroce_tx_alloc(sdev, hdr + (zcopy ? 0 : len + pad));
	if (!skb) {
		rcu_read_unlock();
		return NULL;	/* the requester's timer asks again */
	}
	if (sroce_pkt_build_hdrs(skb->data, hdr, &pkt) != hdr)
		goto drop;
	if (zcopy) {
		if (sroce_mem_to_skb(mem, res->va + off, skb, len) ||
		    sroce_tx_paged_trailer(skb)) {
			kfree_skb(skb);
			zcopy = false;
			goto again;
		}
	} else if (len) {
		sroce_mem_copy(mem, res->va + off, skb->data + hdr, len,
			       SROCE_FROM_MEM);
		memset(skb->data + hdr + len, 0, pad);
	}
	rcu_read_unlock();
	return skb;
drop:
	rcu_read_unlock();
	sroce_rdres_set_sent(rs, res, res->npkts);
	kfree_skb(skb);
	return NULL;
}

/*
 * Send up to @budget READ response packets of @qp.  Return: 0 when none
 * is left (a held ACK went out), 1 when the budget ran out first,
 * -ENOBUFS when the IP layer refused one (it is sent again later).
 * The caller owns resp.read_running: responses go out in order.
 */
static int sroce_resp_read_burst(struct sroce_qp *qp, int budget)
{
	struct sroce_resp *rs = &qp->resp;
	struct sroce_frame frame __uninitialized;	/* (sroce_req_run()) */
	struct sroce_rdres *res = NULL;
	struct sk_buff *skb;
	unsigned long flags;
	struct sroce_av av __uninitialized;
	struct sroce_resp_out out = {};
	u32 psn = 0, sent;
	bool held, local;
	int err;

	while (budget--) {
		spin_lock_irqsave(&rs->lock, flags);
		skb = NULL;
		frame.len = 0;
		if (sroce_qp_state_live(READ_ONCE(qp->state)))
			skb = sroce_resp_read_next(qp, &res, &psn, &frame);
		av = qp->av;
		sent = res ? res->sent - 1 : 0;
		held = false;
		if (!skb && !frame.len) {
			rs->read_busy = false;
			held = rs->held;
			rs->held = false;
			out.atomic = rs->held_atomic;
			out.zero_read = rs->held_zero_read;
			out.syndrome = rs->held_syndrome;
			out.psn = rs->held_psn;
			out.msn = rs->held_msn;
			out.orig = rs->held_orig;
		}
		spin_unlock_irqrestore(&rs->lock, flags);
		if (!skb && !frame.len) {
			if (held)
				sroce_resp_send_ack(qp, &out);
			return 0;
		}
		err = sroce_tx_qp(qp, &av, skb, &frame, &local);
		if (err != -ENOBUFS)
			continue;
		ibdev_dbg(qp->ibqp.device, "qp %u: read resp enobufs %#x+%u\n",
			  qp->ibqp.qp_num, psn, sent);
		/*
		 * Refused locally (full backlog): resend it a bit later.  The
		 * entry is found again: res[] may have grown meanwhile.
		 */
		spin_lock_irqsave(&rs->lock, flags);
		res = sroce_resp_find_read(rs, psn);
		if (res && res->sent > sent)
			sroce_rdres_set_sent(rs, res, sent);
		spin_unlock_irqrestore(&rs->lock, flags);
		return -ENOBUFS;
	}
	return 1;
}

static void sroce_resp_read_defer(struct sroce_qp *qp)
{
	if (!test_bit(SROCE_QP_DYING, &qp->flags))
		queue_work_on(READ_ONCE(qp->cpu), sroce_wq, &qp->resp_work);
}

/*
 * READ responses right from the receive softirq that brought the request,
 * up to a burst (a 64 KiB READ at MTU 4096): a small READ is answered
 * without waiting for a worker.  Longer ones, a full backlog, or another
 * context sending this QP's responses leave the rest to the work item.
 */
#define SROCE_READ_INLINE_PKTS	16

/*
 * Send up to @budget READ responses if no other context is sending this
 * QP's; whatever is left (or all of it, when another context is) goes to
 * the work item.  Return: as sroce_resp_read_burst(), 1 when another
 * context was sending.
 */
static int sroce_resp_read_run(struct sroce_qp *qp, int budget)
{
	int r = 1;

	if (!test_and_set_bit(0, &qp->resp.read_running)) {
		r = sroce_resp_read_burst(qp, budget);
		clear_bit(0, &qp->resp.read_running);
	}
	if (r)
		sroce_resp_read_defer(qp);
	return r;
}

static void sroce_resp_read_rx(struct sroce_qp *qp)
{
	sroce_resp_read_run(qp, SROCE_READ_INLINE_PKTS);
}

/**
 * sroce_resp_read_work() - generate READ responses (process context)
 * @work: the QP's resp_work
 */
void sroce_resp_read_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, resp_work);

	/* Refused locally (full backlog): give it time to drain. */
	if (sroce_resp_read_run(qp, 256) == -ENOBUFS)
		usleep_range(50, 100);
}

/**
 * sroce_resp_rx() - a validated packet for @qp
 * @qp: destination QP
 * @rx: the packet
 * @pkt: its decoded headers
 */
void sroce_resp_rx(struct sroce_qp *qp, const struct sroce_rxp *rx,
		   const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	enum ib_qp_state state = READ_ONCE(qp->state);
	enum ib_qp_type type = qp->ibqp.qp_type;
	u8 qpt = pkt->info->qpt;

	/* IBTA 10.3.1: packets are accepted from RTR on, and not in ERR. */
	if (!sroce_qp_state_live(state)) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_QP_STATE, 1);
		return;
	}
	switch (type) {
	case IB_QPT_UD:
	case IB_QPT_GSI:
		if (qpt == SROCE_QPT_UD) {
			sroce_resp_ud(qp, rx, pkt);
			return;
		}
		break;
	case IB_QPT_RC:
		if (qpt != SROCE_QPT_RC)
			break;
		/* From the connected peer only (sroce_rx_from_peer()). */
		if (pkt->info->flags & SROCE_OPF_RESP) {
			sroce_comp_rx(qp, rx, pkt);
			return;
		}
		sroce_resp_conn(qp, rx, pkt);
		return;
	case IB_QPT_UC:
		if (qpt != SROCE_QPT_UC || (pkt->info->flags & SROCE_OPF_RESP))
			break;
		sroce_resp_conn(qp, rx, pkt);
		return;
	default:
		break;
	}
	/* Opcode of another transport than the QP's (IBTA 9.6.1). */
	sroce_count(sdev->stats, SROCE_CNT_RX_DROP_BAD_OPCODE, 1);
}
