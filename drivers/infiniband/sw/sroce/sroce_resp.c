// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Responder.  Context: the UDP receive softirq, to completion, with RCU
 * held by the caller (which also keeps the QP alive: QPs leave qp_xa and
 * wait for a grace period before they are freed).
 *
 * State of this file: UD (and GSI) SEND, with and without immediate.  The
 * RC/UC responder is not written yet.
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
#include "sroce_cq.h"
#include "sroce_dev.h"
#include "sroce_mr.h"
#include "sroce_qp.h"
#include "sroce_resp.h"
#include "sroce_srq.h"
#include "sroce_stats.h"

#define SROCE_GRH_BYTES		40

/* Receive WQE with room for the largest SGE list. */
struct sroce_recv_copy {
	struct rxe_recv_wqe wqe;
	struct rxe_sge sge[SROCE_MAX_SGE];
};

/* Take the next receive WQE (from the QP's RQ or its SRQ); false if none. */
static bool sroce_resp_get_wqe(struct sroce_qp *qp, struct sroce_recv_copy *rc)
{
	struct sroce_wq *wq = qp->ibqp.srq ?
			      &to_sroce_srq(qp->ibqp.srq)->rq : &qp->rq;
	struct sroce_queue *q = &wq->queue;
	unsigned long flags;
	bool got = false;
	size_t n;

	spin_lock_irqsave(&wq->lock, flags);
	if (!sroce_queue_empty(q)) {
		n = min_t(size_t, q->elem_size, sizeof(*rc));
		memcpy(rc, sroce_queue_consumer_addr(q), n);
		sroce_queue_advance_consumer(q);
		got = true;
	}
	spin_unlock_irqrestore(&wq->lock, flags);
	/* Bound what the (possibly user-written) copy claims. */
	if (got && rc->wqe.dma.num_sge > min_t(u32, wq->max_sge, SROCE_MAX_SGE))
		rc->wqe.dma.num_sge = U32_MAX;
	return got;
}

/* Scatter @len bytes of @buf over the WQE's SGEs; an IBTA status. */
static enum ib_wc_status sroce_scatter(struct sroce_qp *qp,
				       const struct sroce_recv_copy *rc,
				       const u8 *buf, u32 len)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_mem *mem;
	u32 i, n;

	if (rc->wqe.dma.num_sge == U32_MAX)
		return IB_WC_LOC_LEN_ERR;
	for (i = 0; i < rc->wqe.dma.num_sge && len; i++) {
		n = min(len, rc->sge[i].length);
		if (!n)
			continue;
		mem = sroce_mem_get(sdev, rc->sge[i].lkey);
		if (!mem)
			return IB_WC_LOC_PROT_ERR;
		if (sroce_mem_check(mem, qp->ibqp.pd, rc->sge[i].addr, n,
				    IB_ACCESS_LOCAL_WRITE)) {
			sroce_mem_put(mem);
			return IB_WC_LOC_PROT_ERR;
		}
		sroce_mem_copy(mem, rc->sge[i].addr, (void *)buf, n,
			       SROCE_TO_MEM);
		sroce_mem_put(mem);
		buf += n;
		len -= n;
	}
	return len ? IB_WC_LOC_LEN_ERR : IB_WC_SUCCESS;
}

static void sroce_resp_ud(struct sroce_qp *qp, struct sk_buff *skb,
			  const struct sroce_pkt *pkt, unsigned int payload_off)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_recv_copy *rc;
	struct ib_wc wc = {};
	u32 len = SROCE_GRH_BYTES + pkt->payload_len;
	u8 *buf;

	/* IBTA 10.2.5 / C10-15: a Q_Key mismatch is a silent drop. */
	if (pkt->deth.qkey != qp->attr.qkey) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_QKEY, 1);
		return;
	}
	rc = kmalloc(sizeof(*rc), GFP_ATOMIC);
	buf = kmalloc(len, GFP_ATOMIC);
	if (!rc || !buf)
		goto out_nomem;
	/* UD has no RNR: without a posted receive the packet is dropped. */
	if (!sroce_resp_get_wqe(qp, rc)) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_NO_RECV, 1);
		goto out;
	}

	/* The GRH slot: the IPv4 header in its last 20 bytes, or IPv6's. */
	memset(buf, 0, SROCE_GRH_BYTES);
	if (ip_hdr(skb)->version == 4)
		memcpy(buf + SROCE_GRH_BYTES - sizeof(struct iphdr),
		       ip_hdr(skb), sizeof(struct iphdr));
	else
		memcpy(buf, ipv6_hdr(skb), sizeof(struct ipv6hdr));
	if (skb_copy_bits(skb, payload_off, buf + SROCE_GRH_BYTES,
			  pkt->payload_len))
		goto out;

	wc.wr_id = rc->wqe.wr_id;
	wc.status = sroce_scatter(qp, rc, buf, len);
	wc.opcode = IB_WC_RECV;
	wc.byte_len = len;
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
	goto out;

out_nomem:
	sroce_count(sdev->stats, SROCE_CNT_RX_DROP_NO_RECV, 1);
out:
	kfree(buf);
	kfree(rc);
}

/**
 * sroce_resp_rx() - a validated packet for @qp
 * @qp: destination QP
 * @skb: the packet
 * @pkt: its decoded headers
 * @payload_off: offset of the payload in @skb
 */
void sroce_resp_rx(struct sroce_qp *qp, struct sk_buff *skb,
		   const struct sroce_pkt *pkt, unsigned int payload_off)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	enum ib_qp_state state = READ_ONCE(qp->state);
	bool ud = qp->ibqp.qp_type == IB_QPT_UD ||
		  qp->ibqp.qp_type == IB_QPT_GSI;

	/* IBTA 10.3.1: packets are accepted from RTR on, and not in ERR. */
	if (state < IB_QPS_RTR || state == IB_QPS_ERR) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_QP_STATE, 1);
		return;
	}
	if (ud && pkt->info->qpt == SROCE_QPT_UD) {
		sroce_resp_ud(qp, skb, pkt, payload_off);
		return;
	}
	if (ud || pkt->info->qpt == SROCE_QPT_UD) {
		/* Opcode of another transport than the QP's (IBTA 9.6.1). */
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_BAD_OPCODE, 1);
		return;
	}
	sroce_count(sdev->stats, SROCE_CNT_RX_DROP_UNSUPPORTED, 1);
}
