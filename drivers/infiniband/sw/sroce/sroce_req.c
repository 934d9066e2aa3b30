// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Requester (IBTA vol. 1 9.7, requester side): turns send WQEs into
 * packets, segmenting messages at the path MTU and numbering them with
 * 24-bit PSNs, and executes the local operations (LOCAL_INV, REG_MR).
 *
 * Context: exactly one executor per QP (STYLE rule 2).  sroce_req_run()
 * runs from a user QP's doorbell (process context) or from the QP's work
 * item; the receive path and the timers never run it inline, they kick it
 * with sroce_req_kick().  A run takes at most SROCE_REQ_BUDGET steps -
 * packets, local operations, WQEs that end without a packet - including
 * the re-runs kicks during it ask for, and hands the rest to the work
 * item: a user who keeps the ring full of local operations cannot keep
 * a CPU in the kernel.  Each packet is built under qp->sq.lock,
 * which the completer (receive softirq, timers) shares, and sent after the
 * lock is dropped.
 *
 * Trust model: user WQEs are copied out of the ring once into the QP's
 * kernel shadow (struct sroce_swqe) and only the copy is used; SGE counts,
 * inline lengths and every lkey are checked before use.
 */
#include <linux/hash.h>
#include <linux/math64.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>

#include "sroce/sroce_hdr.h"
#include "sroce/sroce_opcode.h"
#include "sroce/sroce_psn.h"
#include "sroce/sroce_wire.h"
#include "sroce_cc.h"
#include "sroce_av.h"
#include "sroce_comp.h"
#include "sroce_compat.h"
#include "sroce_cq.h"
#include "sroce_dev.h"
#include "sroce_mr.h"
#include "sroce_qp.h"
#include "sroce_req.h"
#include "sroce_stats.h"
#include "sroce_tx.h"
#include "sroce_verbs.h"
#include "sroce_wr.h"

#define SROCE_REQ_BUDGET	256

/* Largest message: the RETH DMA length is 32 bits (IBTA 9.3.3). */
#define SROCE_MAX_MSG		BIT(31)

/**
 * sroce_qp_sport() - UDP source port of @qp's packets
 * @qp: queue pair
 *
 * Stable per QP, spread over the dynamic range for ECMP (Annex A17.3).
 */
u16 sroce_qp_sport(const struct sroce_qp *qp)
{
	return 0xc000 | hash_32(qp->ibqp.qp_num, 14);
}

/** sroce_wqe_is_local() - @w is executed locally and uses no PSN */
bool sroce_wqe_is_local(const struct sroce_swqe *w)
{
	return sroce_wr_desc(w->opcode)->flags & SROCE_WRF_LOCAL;
}

/** sroce_wqe_is_atomic() - @w is a CmpSwap or FetchAdd */
bool sroce_wqe_is_atomic(const struct sroce_swqe *w)
{
	return sroce_wr_desc(w->opcode)->flags & SROCE_WRF_ATOMIC;
}

/** sroce_wqe_has_resp() - @w is a READ or an atomic: answered with data */
bool sroce_wqe_has_resp(const struct sroce_swqe *w)
{
	return sroce_wr_desc(w->opcode)->flags & SROCE_WRF_RESP;
}

/**
 * sroce_wqe_npkts() - PSNs a WQE occupies
 * @qp: its QP (for the path MTU)
 * @w: the WQE
 *
 * A READ uses one PSN per response packet (IBTA 9.7.1), so it is counted
 * like a WRITE of the same length.
 */
u32 sroce_wqe_npkts(const struct sroce_qp *qp, const struct sroce_swqe *w)
{
	if (sroce_wqe_is_atomic(w) || w->opcode == SROCE_WR_FLUSH)
		return 1;
	return max_t(u32, DIV_ROUND_UP(w->length, qp->mtu), 1);
}

/* May @qp carry a WQE of @d (IBTA 9.8.3, table 41)? */
static bool sroce_wqe_opcode_ok(const struct sroce_qp *qp,
				const struct sroce_wr_desc *d)
{
	if (!(d->qpts & BIT(qp->ibqp.qp_type)))
		return false;
	if (d->flags & SROCE_WRF_KERNEL)
		return !qp->user;
	if (d->flags & SROCE_WRF_USER)
		return qp->user;
	return true;
}

/* The fields of @w its opcode uses, from the ring's @wr (read once each). */
static void sroce_req_fetch_fields(struct sroce_swqe *w,
				   const struct rxe_send_wr *wr)
{
	struct sroce_flush_wr f;

	switch (w->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case SROCE_WR_ATOMIC_WRITE:
		w->raddr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->raddr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		break;
	case SROCE_WR_FLUSH:
		memcpy(&f, &wr->wr, sizeof(f));
		w->raddr = f.remote_addr;
		w->rkey = f.rkey;
		w->flush_type = f.type;
		w->flush_level = f.level;
		break;
	case IB_WR_BIND_MW:
		w->mw_addr = wr->wr.mw.addr;
		w->mw_length = wr->wr.mw.length;
		w->mr_lkey = wr->wr.mw.mr_lkey;
		w->rkey = wr->wr.mw.mw_rkey;
		w->reg_key = wr->wr.mw.rkey;
		w->reg_access = wr->wr.mw.access;
		break;
	case IB_WR_REG_MR:
		/* Kernel QPs only (sroce_wqe_opcode_ok()): the kernel's pointer. */
		w->reg_mr = wr->wr.reg.mr;
		w->reg_key = wr->wr.reg.key;
		w->reg_access = wr->wr.reg.access;
		break;
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		/* Used by UD only; harmless for RC/UC. */
		w->remote_qpn = wr->wr.ud.remote_qpn & 0xffffff;
		w->remote_qkey = wr->wr.ud.remote_qkey;
		w->ah_num = wr->wr.ud.ah_num;
		break;
	default:
		break;
	}
}

/*
 * The data of @w (SGEs, inline bytes or a value) from ring slot @r: @room
 * bytes fit both the slot and the copy.  Return: an IBTA status.
 */
static enum ib_wc_status sroce_req_fetch_data(struct sroce_qp *qp,
					      struct sroce_swqe *w,
					      const struct rxe_send_wqe *r,
					      const struct sroce_wr_desc *d,
					      size_t room)
{
	bool inl = w->send_flags & IB_SEND_INLINE;
	u32 dma_len = READ_ONCE(r->dma.length);
	u32 num_sge = inl ? 0 : READ_ONCE(r->dma.num_sge);
	struct rxe_sge *sge = (struct rxe_sge *)w->data;
	u64 len = 0;
	u32 i;

	if (sroce_wr_data_room(d, inl, dma_len, num_sge) > room)
		return IB_WC_LOC_LEN_ERR;
	if (d->flags & SROCE_WRF_VALUE) {
		/* ATOMIC WRITE: its operand travels in the WQE. */
		w->length = SROCE_WR_VALUE_BYTES;
		memcpy(w->data, r->dma.inline_data, SROCE_WR_VALUE_BYTES);
		return IB_WC_SUCCESS;
	}
	if (!(d->flags & SROCE_WRF_DATA)) {
		/* FLUSH: no local data; the length only bounds the range. */
		w->length = dma_len;
		return IB_WC_SUCCESS;
	}
	if (inl) {
		if (dma_len > qp->sq.max_inline)
			return IB_WC_LOC_LEN_ERR;
		w->length = dma_len;
		memcpy(w->data, r->dma.inline_data, dma_len);
		return IB_WC_SUCCESS;
	}
	if (num_sge > qp->sq.max_sge)
		return IB_WC_LOC_LEN_ERR;
	w->num_sge = num_sge;
	for (i = 0; i < num_sge; i++) {
		sge[i] = r->dma.sge[i];
		len += sge[i].length;
	}
	if (len > SROCE_MAX_MSG ||
	    ((d->flags & SROCE_WRF_ATOMIC) && len < sizeof(u64)))
		return IB_WC_LOC_LEN_ERR;
	w->length = (d->flags & SROCE_WRF_ATOMIC) ? sizeof(u64) : len;
	return IB_WC_SUCCESS;
}

/*
 * Copy ring slot req.fetched into its shadow, the one read of the (maybe
 * user-written) WQE.  A malformed WQE is marked done with its error.
 */
static void sroce_req_fetch(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->sq.queue;
	struct sroce_req *req = &qp->req;
	struct rxe_send_wqe *r = sroce_queue_addr(q, req->fetched);
	struct sroce_swqe *w = sroce_swqe_at(req, req->fetched);
	/* Data room of both the kernel copy and the ring slot. */
	size_t room = min(req->swqe_size - sizeof(*w),
			  (size_t)q->elem_size - sizeof(*r));
	const struct sroce_wr_desc *d;

	memset(w, 0, sizeof(*w));
	w->wr_id = READ_ONCE(r->wr.wr_id);
	w->opcode = READ_ONCE(r->wr.opcode);
	w->send_flags = READ_ONCE(r->wr.send_flags);
	w->ex = READ_ONCE(r->wr.ex.invalidate_rkey);
	w->status = IB_WC_SUCCESS;
	req->fetched = (req->fetched + 1) & q->index_mask;

	d = sroce_wr_desc(w->opcode);
	if (!sroce_wqe_opcode_ok(qp, d)) {
		w->status = IB_WC_LOC_QP_OP_ERR;
		w->done = true;
		return;
	}
	sroce_req_fetch_fields(w, &r->wr);
	if (d->flags & SROCE_WRF_LOCAL)
		return;
	w->status = sroce_req_fetch_data(qp, w, r, d, room);
	if (w->status != IB_WC_SUCCESS) {
		w->num_sge = 0;
		w->done = true;
	}
}

/*
 * Gather @len bytes of @w's message, from byte @off on, into @dst.  Each
 * SGE's lkey is looked up and checked for the bytes actually used.
 */
static enum ib_wc_status sroce_req_gather(struct sroce_qp *qp,
					  const struct sroce_swqe *w, u32 off,
					  u8 *dst, u32 len)
{
	lockdep_assert_held(&qp->sq.lock);	/* for req.mem_hint */
	if (!w->num_sge) {
		memcpy(dst, (const u8 *)w->data + off, len);
		return IB_WC_SUCCESS;
	}
	return sroce_sge_copy(to_sroce_dev(qp->ibqp.device), qp->ibqp.pd,
			      (const void *)w->data, w->num_sge, off, dst, len,
			      SROCE_FROM_MEM, &qp->req.mem_hint);
}

static int sroce_req_attach_step(struct sroce_mem *mem, u64 iova, u32 len,
				 void *skb)
{
	return sroce_mem_to_skb(mem, iova, skb, len);
}

/*
 * Attach @len bytes of @w's data from @off to @skb as page fragments:
 * false if they are not all in user MRs, fail a check, or need more
 * fragments than a packet has (the copying path then takes over, and
 * reports what was wrong).
 */
static bool sroce_req_attach(struct sroce_qp *qp, const struct sroce_swqe *w,
			     u32 off, struct sk_buff *skb, u32 len)
{
	lockdep_assert_held(&qp->sq.lock);	/* for req.mem_hint */
	return sroce_sge_walk(to_sroce_dev(qp->ibqp.device), qp->ibqp.pd,
			      (const void *)w->data, w->num_sge, off, len, 0,
			      &qp->req.mem_hint, sroce_req_attach_step,
			      skb) == IB_WC_SUCCESS &&
	       !sroce_tx_paged_trailer(skb);
}

/* Execute a local operation (IBTA 10.6.3.3 / 10.7); its status. */
static enum ib_wc_status sroce_req_local(struct sroce_qp *qp,
					 struct sroce_swqe *w)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);

	switch (w->opcode) {
	case IB_WR_LOCAL_INV:
		if (sroce_mem_invalidate(sdev, w->ex, qp->ibqp.pd,
					 qp->ibqp.qp_num, false))
			return IB_WC_LOC_PROT_ERR;
		return IB_WC_SUCCESS;
	case IB_WR_BIND_MW:
		return sroce_mw_bind(sdev, qp->ibqp.pd, qp->ibqp.qp_num,
				     w->rkey, w->reg_key, w->mr_lkey,
				     w->mw_addr, w->mw_length, w->reg_access);
	case IB_WR_REG_MR:
		if (w->reg_mr->pd != qp->ibqp.pd ||
		    sroce_mem_fast_reg(to_sroce_mr(w->reg_mr), w->reg_key,
				       w->reg_access))
			return IB_WC_LOC_PROT_ERR;
		return IB_WC_SUCCESS;
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

/* Build the one packet of a UD/GSI SEND. */
static enum ib_wc_status sroce_req_ud(struct sroce_qp *qp,
				      struct sroce_swqe *w,
				      struct sk_buff **skbp,
				      struct sroce_av *av)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	u32 mtu = sroce_path_mtu(READ_ONCE(sdev->ndev->mtu));
	bool imm = w->opcode == IB_WR_SEND_WITH_IMM;
	struct sroce_pkt pkt = {};
	enum ib_wc_status st;
	struct sroce_av *avp;
	struct sk_buff *skb;
	u32 pad = sroce_pad_for(w->length);
	int hdr;

	if (w->length > mtu)
		return IB_WC_LOC_LEN_ERR;	/* UD messages fit one packet */
	/*
	 * The AH number is the poster's: it must name an AH of the QP's own
	 * PD (IBTA 10.2.3: AH and QP share a protection domain), not one of
	 * another PD, another process or the kernel.
	 */
	rcu_read_lock();
	avp = xa_load(&sdev->ah_xa, w->ah_num);
	if (avp && avp->pd == qp->ibqp.pd)
		*av = *avp;
	else
		avp = NULL;
	rcu_read_unlock();
	if (!avp)
		return IB_WC_LOC_QP_OP_ERR;

	pkt.bth.opcode = SROCE_OPC_UD | (imm ? SROCE_OP_SEND_ONLY_IMM :
					       SROCE_OP_SEND_ONLY);
	pkt.bth.se = w->send_flags & IB_SEND_SOLICITED;
	pkt.bth.pkey = 0xffff;
	pkt.bth.dqpn = w->remote_qpn;
	pkt.bth.psn = qp->req.psn;
	/* IBTA 10.2.5: a Q_Key with the high bit set means "use the QP's". */
	pkt.deth.qkey = (w->remote_qkey & 0x80000000) ? qp->attr.qkey :
							w->remote_qkey;
	pkt.deth.sqpn = qp->ibqp.qp_num;
	pkt.imm = be32_to_cpu((__force __be32)w->ex);
	pkt.payload_len = w->length;

	hdr = sroce_opcode_info(pkt.bth.opcode)->hdr_len;
	skb = sroce_tx_alloc(sdev, hdr + w->length + pad);
	if (!skb)
		return IB_WC_LOC_QP_OP_ERR;
	if (sroce_pkt_build_hdrs(skb->data, hdr, &pkt) != hdr) {
		kfree_skb(skb);
		return IB_WC_LOC_QP_OP_ERR;
	}
	st = sroce_req_gather(qp, w, 0, skb->data + hdr, w->length);
	if (st != IB_WC_SUCCESS) {
		kfree_skb(skb);
		return st;
	}
	memset(skb->data + hdr + w->length, 0, pad);
	qp->req.psn = sroce_psn_add(qp->req.psn, 1);
	*skbp = skb;
	return IB_WC_SUCCESS;
}

/* BTH opcode of the packet of @w that starts at message byte @off. */
static u8 sroce_req_opcode(const struct sroce_qp *qp,
			   const struct sroce_swqe *w, u32 off, bool last)
{
	u8 base = qp->ibqp.qp_type == IB_QPT_RC ? SROCE_OPC_RC : SROCE_OPC_UC;
	bool first = off == 0;

	switch (w->opcode) {
	case IB_WR_SEND:
		return base | (first ? (last ? SROCE_OP_SEND_ONLY :
					       SROCE_OP_SEND_FIRST) :
				       (last ? SROCE_OP_SEND_LAST :
					       SROCE_OP_SEND_MIDDLE));
	case IB_WR_SEND_WITH_IMM:
		return base | (first ? (last ? SROCE_OP_SEND_ONLY_IMM :
					       SROCE_OP_SEND_FIRST) :
				       (last ? SROCE_OP_SEND_LAST_IMM :
					       SROCE_OP_SEND_MIDDLE));
	case IB_WR_SEND_WITH_INV:
		return base | (first ? (last ? SROCE_OP_SEND_ONLY_INV :
					       SROCE_OP_SEND_FIRST) :
				       (last ? SROCE_OP_SEND_LAST_INV :
					       SROCE_OP_SEND_MIDDLE));
	case IB_WR_RDMA_WRITE:
		return base | (first ? (last ? SROCE_OP_WRITE_ONLY :
					       SROCE_OP_WRITE_FIRST) :
				       (last ? SROCE_OP_WRITE_LAST :
					       SROCE_OP_WRITE_MIDDLE));
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return base | (first ? (last ? SROCE_OP_WRITE_ONLY_IMM :
					       SROCE_OP_WRITE_FIRST) :
				       (last ? SROCE_OP_WRITE_LAST_IMM :
					       SROCE_OP_WRITE_MIDDLE));
	case IB_WR_RDMA_READ:
		return base | SROCE_OP_READ_REQUEST;
	case SROCE_WR_ATOMIC_WRITE:
		return base | SROCE_OP_ATOMIC_WRITE;
	case SROCE_WR_FLUSH:
		return base | SROCE_OP_FLUSH;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return base | SROCE_OP_COMPARE_SWAP;
	default:
		return base | SROCE_OP_FETCH_ADD;
	}
}

/*
 * Build the next packet of RC/UC WQE @w, from req.offset on: an skb in
 * *@skbp, or frame @frame (its len set).  The headers are filled in as
 * @frame's fields either way (an skb gets their bytes).
 */
static enum ib_wc_status sroce_req_conn(struct sroce_qp *qp,
					struct sroce_swqe *w,
					struct sk_buff **skbp,
					struct sroce_frame *frame)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	u32 off = req->offset, payload = 0, npsn = 1, adv = 0, end, pad;
	struct sroce_pkt *pkt = &frame->pkt;
	enum ib_wc_status st;
	struct sk_buff *skb;
	bool last = true, zcopy, as_frame;
	u8 *buf;
	int hdr;

	memset(pkt, 0, sizeof(*pkt));
	switch (w->opcode) {
	case IB_WR_RDMA_READ:
		/*
		 * The chunk holding req->psn, from there on: a re-issued
		 * READ asks only for what has not arrived.
		 */
		end = sroce_psn_chunk_end(w->first_psn, w->last_psn,
					  w->read_chunk, req->psn);
		npsn = sroce_psn_dist(req->psn, end) + 1;
		last = end == w->last_psn;
		adv = npsn * qp->mtu;
		pkt->reth.va = w->raddr + off;
		pkt->reth.rkey = w->rkey;
		pkt->reth.dma_len = last ? w->length - off : adv;
		break;
	case SROCE_WR_FLUSH:
		pkt->feth.sel = w->flush_level;
		pkt->feth.plt = w->flush_type;
		pkt->reth.va = w->raddr;
		pkt->reth.rkey = w->rkey;
		pkt->reth.dma_len = w->length;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		pkt->atmeth.va = w->raddr;
		pkt->atmeth.rkey = w->rkey;
		if (w->opcode == IB_WR_ATOMIC_CMP_AND_SWP) {
			pkt->atmeth.swap_add = w->swap;
			pkt->atmeth.compare = w->compare_add;
		} else {
			pkt->atmeth.swap_add = w->compare_add;
		}
		break;
	default:
		payload = min(qp->mtu, w->length - off);
		adv = payload;
		last = off + payload >= w->length;
		pkt->reth.va = w->raddr;
		pkt->reth.rkey = w->rkey;
		pkt->reth.dma_len = w->length;
		break;
	}

	pkt->bth.opcode = sroce_req_opcode(qp, w, off, last);
	pkt->bth.se = last && (w->send_flags & IB_SEND_SOLICITED);
	pkt->bth.pkey = 0xffff;
	pkt->bth.dqpn = qp->attr.dest_qp_num;
	pkt->bth.psn = req->psn;
	/*
	 * Ask for an ACK every so many packets; the last packet of a run
	 * asks too (sroce_req_flush()).
	 */
	if (rc && ++req->since_ack >= SROCE_PKTS_PER_ACK) {
		pkt->bth.ack_req = true;
		req->since_ack = 0;
	}
	pkt->imm = be32_to_cpu((__force __be32)w->ex);
	pkt->ieth_rkey = w->ex;
	pkt->payload_len = payload;
	pad = sroce_pad_for(payload);

	hdr = sroce_opcode_info(pkt->bth.opcode)->hdr_len;
	/*
	 * RC payload from user MRs goes out as page fragments of the MR's
	 * own pages: an RC buffer is the user's again only once the
	 * responder acknowledged it, so no copy is needed to free it early.
	 */
	zcopy = rc && !pad && payload >= SROCE_ZCOPY_MIN && w->num_sge &&
		sroce_tx_zcopy_ok(sdev, READ_ONCE(qp->req.tx_local));
	/* A small RC packet to the QP's own address needs no skb. */
	as_frame = rc && !zcopy && sroce_tx_self(qp) &&
		   hdr + payload + pad + SROCE_ICRC_BYTES <= SROCE_FRAME_MAX;
again:
	skb = NULL;
	if (as_frame) {
		/* Headers as fields: the receiver takes them as they are. */
		if (sroce_pkt_finish(pkt) != hdr)
			return IB_WC_LOC_QP_OP_ERR;
		buf = frame->buf;
	} else {
		/* RC packets are held (sroce_req_run()): alternate caches. */
		skb = sroce_tx_alloc_held(sdev,
					  hdr + (zcopy ? 0 : payload + pad),
					  ++req->tx_slot);
		if (!skb)
			return IB_WC_SUCCESS;	/* none now; the timer retries */
		buf = skb->data;
		if (sroce_pkt_build_hdrs(buf, hdr, pkt) != hdr) {
			kfree_skb(skb);
			return IB_WC_LOC_QP_OP_ERR;
		}
	}
	if (zcopy) {
		if (!sroce_req_attach(qp, w, off, skb, payload)) {
			kfree_skb(skb);
			zcopy = false;
			goto again;
		}
	} else if (payload) {
		st = sroce_req_gather(qp, w, off, buf + hdr, payload);
		if (st != IB_WC_SUCCESS) {
			kfree_skb(skb);
			return st;
		}
		memset(buf + hdr + payload, 0, pad);
	}

	if (sroce_psn_before(req->psn, req->max_psn)) {
		sroce_count(sdev->stats, SROCE_CNT_TX_RETRANSMITS, 1);
	} else if (sroce_wqe_has_resp(w)) {
		/* A new READ or atomic request: the responder keeps state. */
		w->rd_out++;
		req->rd_atomic++;
	}
	req->psn = sroce_psn_add(req->psn, npsn);
	if (sroce_psn_after(req->psn, req->max_psn))
		req->max_psn = req->psn;
	if (last) {
		/* (UC: done once the IP layer took it, see sroce_req_run().) */
		req->offset = 0;
		req->cur = (req->cur + 1) & qp->sq.queue.index_mask;
	} else {
		req->offset = off + adv;
	}
	*skbp = skb;
	if (!skb)
		frame->len = hdr + payload + pad;
	return IB_WC_SUCCESS;
}

/* Requester position before a packet: to take it back if refused. */
struct sroce_req_pos {
	u32 cur;
	u32 offset;
	u32 psn;
};

/*
 * After the IP layer took (or refused) a packet built from @pos.  A full
 * local backlog or qdisc (-ENOBUFS) is congestion right here: the packet
 * is built again after the receive side had time to drain, instead of
 * being lost (UC) or waiting for a timeout (RC).  Other losses are the
 * retransmit timer's business.
 */
static void sroce_req_sent(struct sroce_qp *qp,
			   const struct sroce_req_pos *pos, int err)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *w;
	unsigned long flags;
	bool uc = qp->ibqp.qp_type == IB_QPT_UC;

	if (err != -ENOBUFS && !uc)
		return;
	spin_lock_irqsave(&qp->sq.lock, flags);
	if (err == -ENOBUFS && !uc) {
		sroce_comp_rewind(qp, pos->psn);
	} else if (err == -ENOBUFS) {
		/* Only this executor moves a UC requester: undo is exact. */
		req->cur = pos->cur;
		req->offset = pos->offset;
		req->psn = pos->psn;
	} else if (req->cur != pos->cur) {
		/* UC is unreliable: a message is done once it is sent. */
		w = sroce_swqe_at(req, pos->cur);
		w->done = true;
		sroce_comp_advance(qp);
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (err == -ENOBUFS)
		usleep_range(200, 400);
}

enum sroce_req_step {
	SROCE_REQ_IDLE,		/* nothing to do until the next kick */
	SROCE_REQ_AGAIN,	/* state advanced, no packet */
	SROCE_REQ_SEND,		/* a packet for *av: *skbp or a frame */
	SROCE_REQ_ERROR,	/* a WQE failed (sroce_qp_send_error()) */
};

/*
 * One step of the requester, under qp->sq.lock.  @frame: room for a frame,
 * its len 0 on entry: set if one is built.
 */
static enum sroce_req_step sroce_req_step(struct sroce_qp *qp,
					  struct sk_buff **skbp,
					  struct sroce_frame *frame,
					  struct sroce_av *av,
					  struct sroce_req_pos *pos)
{
	struct sroce_queue *q = &qp->sq.queue;
	struct sroce_req *req = &qp->req;
	enum ib_qp_state state = qp->state;
	bool conn = qp->ibqp.qp_type == IB_QPT_RC ||
		    qp->ibqp.qp_type == IB_QPT_UC;
	enum ib_wc_status st;
	struct sroce_swqe *w;

	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return SROCE_REQ_IDLE;
	if (req->rnr_wait)
		return SROCE_REQ_IDLE;
	if (req->cur == req->fetched) {
		/* SQD (IBTA 10.3.1): finish messages begun, start no new. */
		/*
		 * A full set of WQE copies waits for a completion, whose
		 * ACK kicks the requester again (sroce_req_has_work()).
		 */
		if (state == IB_QPS_SQD ||
		    sroce_queue_peer_index(q) == req->fetched ||
		    ((req->fetched + 1) & q->index_mask) == q->own)
			return SROCE_REQ_IDLE;
		if (((req->fetched - q->own) & q->index_mask) > req->swqe_mask) {
			/* sroce_req_run() may add copies, outside the lock. */
			req->swqe_grow = req->swqe_mask + 1 < req->swqe_max;
			return SROCE_REQ_IDLE;
		}
		sroce_req_fetch(qp);
	}
	w = sroce_swqe_at(req, req->cur);

	if (w->done) {
		/* Malformed, or a local op already run before a rewind. */
		req->cur = (req->cur + 1) & q->index_mask;
		if (w->status != IB_WC_SUCCESS)
			return SROCE_REQ_ERROR;
		return SROCE_REQ_AGAIN;
	}

	if (sroce_wqe_is_local(w)) {
		if ((w->send_flags & IB_SEND_FENCE) && req->rd_atomic)
			return SROCE_REQ_IDLE;
		w->status = sroce_req_local(qp, w);
		w->done = true;
		req->cur = (req->cur + 1) & q->index_mask;
		/*
		 * A failed WQE completes in the flush that follows the QP's
		 * move to SQE or ERR: its consumer must find the QP there.
		 */
		if (w->status)
			return SROCE_REQ_ERROR;
		sroce_comp_advance(qp);
		return SROCE_REQ_AGAIN;
	}

	if (!conn) {
		w->status = sroce_req_ud(qp, w, skbp, av);
		w->done = true;
		req->cur = (req->cur + 1) & q->index_mask;
		if (w->status != IB_WC_SUCCESS)
			return SROCE_REQ_ERROR;	/* completed by the flush */
		sroce_comp_advance(qp);
		return *skbp ? SROCE_REQ_SEND : SROCE_REQ_AGAIN;
	}

	if (qp->ibqp.qp_type == IB_QPT_RC) {
		/* IBTA 10.8.3.3: a fenced WQE waits for READ/atomics. */
		if (!w->started && (w->send_flags & IB_SEND_FENCE) &&
		    req->rd_atomic)
			return SROCE_REQ_IDLE;
		/* A new READ or atomic request needs a responder resource. */
		if (sroce_wqe_has_resp(w) &&
		    !sroce_psn_before(req->psn, req->max_psn) &&
		    req->rd_atomic >= max_t(u32, qp->attr.max_rd_atomic, 1))
			return SROCE_REQ_IDLE;
		if (sroce_psn_dist(req->acked_psn, req->psn) >= req->cwnd.cwnd)
			return SROCE_REQ_IDLE;
	}
	if (!w->started) {
		w->first_psn = req->psn;
		w->last_psn = sroce_psn_add(req->psn,
					    sroce_wqe_npkts(qp, w) - 1);
		w->resp_psn = w->first_psn;
		if (w->opcode == IB_WR_RDMA_READ)
			w->read_chunk = max_t(u32, SROCE_READ_CHUNK,
					      SROCE_REQ_WINDOW /
					      max_t(u32, qp->attr.max_rd_atomic, 1));
		w->started = true;
	}

	*av = qp->av;
	pos->cur = req->cur;
	pos->offset = req->offset;
	pos->psn = req->psn;
	st = sroce_req_conn(qp, w, skbp, frame);
	if (st != IB_WC_SUCCESS) {
		w->status = st;
		w->done = true;
		return SROCE_REQ_ERROR;
	}
	if (qp->ibqp.qp_type == IB_QPT_RC)
		sroce_comp_arm(qp);
	return *skbp || frame->len ? SROCE_REQ_SEND : SROCE_REQ_AGAIN;
}

/**
 * sroce_req_has_work() - could the requester of @qp send anything?
 * @qp: queue pair, its sq.lock held
 *
 * False when every WQE posted so far has been sent (the ring holds nothing
 * beyond what was fetched, and the requester is at the last fetched
 * one): then only a new post can give it work.  A rewind moves the
 * requester back, a WQE held by the window or a fence stays unsent: both
 * make this true.
 *
 * Return: whether a kick may find something to do.
 */
bool sroce_req_has_work(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->sq.lock);
	return req->cur != req->fetched ||
	       sroce_queue_peer_index(&qp->sq.queue) != req->fetched;
}

/**
 * sroce_req_kick() - make the requester look at @qp again, deferred
 * @qp: queue pair
 *
 * For the receive path, timers and kernel posters: runs nothing inline.
 */
void sroce_req_kick(struct sroce_qp *qp)
{
	set_bit(SROCE_QP_REQ_PENDING, &qp->flags);
	/*
	 * A running instance tests PENDING after it clears RUNNING (full
	 * barriers on both sides), so it either sees this kick or we see it
	 * gone: no work item to queue and wake while it is still at it.
	 */
	smp_mb__after_atomic();
	if (test_bit(SROCE_QP_REQ_RUNNING, &qp->flags))
		return;
	if (!test_bit(SROCE_QP_DYING, &qp->flags))
		queue_work_on(READ_ONCE(qp->cpu), sroce_wq, &qp->req_work);
}

/*
 * Double the send WQE copies of @qp (all were in use).  Called by the one
 * running requester, so nothing else resizes them meanwhile; the completer
 * and the timers reach them only under the SQ lock, by ring index.  On
 * allocation failure the QP keeps the copies it has, and WQEs wait for
 * completions as they do at SROCE_SWQE_MAX.
 *
 * Return: whether there are more copies now.
 */
static bool sroce_req_grow(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->sq.queue;
	struct sroce_req *req = &qp->req;
	u32 n = (req->swqe_mask + 1) * 2;
	struct sroce_swqe *nw, *old;
	unsigned long flags;
	u32 i;

	nw = sroce_swqe_alloc(n, req->swqe_size);
	spin_lock_irqsave(&qp->sq.lock, flags);
	req->swqe_grow = false;
	if (!nw) {
		req->swqe_max = req->swqe_mask + 1;
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		return false;
	}
	/* The live copies, [own, fetched), move to their new slots. */
	for (i = q->own; i != req->fetched; i = (i + 1) & q->index_mask)
		memcpy(sroce_swqe_slot(nw, n - 1, req->swqe_size, i),
		       sroce_swqe_at(req, i), req->swqe_size);
	old = req->swqe;
	req->swqe = nw;
	req->swqe_mask = n - 1;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	kvfree(old);
	return true;
}

/*
 * What a packet needs from its build to its send.  sroce_req_run() has
 * two: one is built while the other is held.
 */
struct sroce_req_slot {
	struct sroce_frame frame;	/* unless the packet is an skb */
	struct sroce_av av;
	struct sroce_req_pos pos;
};

/* A built packet the requester holds until it knows what follows. */
struct sroce_req_held {
	struct sroce_req_slot *slot;	/* NULL: none held */
	struct sk_buff *skb;		/* or NULL: @slot's frame */
};

/*
 * Send the held packet of @qp.  The last packet of a run asks for an ACK
 * (@last), whatever the 32-packet rule said: a run ends when the
 * requester has nothing more to send now, and only an ACK can give it
 * more (window, WQE copies) or complete what it sent.  A streaming run
 * thus asks once per run, not once per message.
 *
 * Return: 0 (also when nothing was held) or the IP layer's -errno.
 */
static int sroce_req_flush(struct sroce_qp *qp, struct sroce_req_held *h,
			   bool last)
{
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	struct sroce_req *req = &qp->req;
	struct sroce_req_slot *slot = h->slot;
	struct sk_buff *skb = h->skb;
	struct sroce_frame *frame;
	bool local = false;
	int err;

	if (!slot)
		return 0;
	frame = skb ? NULL : &slot->frame;
	h->slot = NULL;
	h->skb = NULL;
	if (last && rc) {
		if (skb)
			sroce_bth_set_ack_req(skb->data);
		else
			frame->pkt.bth.ack_req = true;
	}
	err = sroce_tx_qp(qp, &slot->av, skb, frame, &local);
	WRITE_ONCE(req->tx_local, local);
	if (rc || qp->ibqp.qp_type == IB_QPT_UC)
		sroce_req_sent(qp, &slot->pos, err);
	return err;
}

/**
 * sroce_req_run() - run the requester of @qp
 * @qp: queue pair
 *
 * Whoever finds it idle runs it; a caller that finds it running leaves its
 * work to the running instance, which looks again before it stops.
 *
 * An RC packet is sent only once the next one is built, or the send queue
 * shows that none will be, so that it is known whether it is the run's
 * last, which asks for an ACK.
 *
 * Return: whether this call ran it.
 */
bool sroce_req_run(struct sroce_qp *qp)
{
	/*
	 * Written before they are read: not worth zeroing on each run, as
	 * CONFIG_INIT_STACK_ALL_ZERO (Debian's kernels) otherwise does.
	 */
	struct sroce_req_slot slots[2] __uninitialized;
	struct sroce_req_held held = {};
	struct sroce_req_slot *slot;
	enum sroce_req_step step;
	unsigned int s = 0;
	struct sk_buff *skb;
	unsigned long flags;
	bool more;
	int budget;

	might_sleep();
	set_bit(SROCE_QP_REQ_PENDING, &qp->flags);
	if (test_and_set_bit(SROCE_QP_REQ_RUNNING, &qp->flags))
		return false;
	budget = SROCE_REQ_BUDGET;
again:
	clear_bit(SROCE_QP_REQ_PENDING, &qp->flags);
	/* Pairs with the barrier implied by set_bit + test_and_set_bit. */
	smp_mb__after_atomic();
	do {
		/* A throttled QP waits for its pace timer (sroce_cc.c) ... */
		if (sroce_cc_tx_wait(qp))
			break;
		/* ... an RC QP through a netdev, for its queues (sroce_tx.c). */
		if (qp->ibqp.qp_type == IB_QPT_RC &&
		    !READ_ONCE(qp->req.tx_local) && sroce_tx_throttle(qp))
			break;
		skb = NULL;
		slot = &slots[s];
		slot->frame.len = 0;
		spin_lock_irqsave(&qp->sq.lock, flags);
		step = sroce_req_step(qp, &skb, &slot->frame, &slot->av,
				      &slot->pos);
		/*
		 * Nothing posted beyond this packet: it is the run's last,
		 * no need to lock again to find the next step idle.
		 */
		more = step != SROCE_REQ_SEND || sroce_req_has_work(qp);
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		if (step == SROCE_REQ_IDLE && qp->req.swqe_grow &&
		    sroce_req_grow(qp))
			step = SROCE_REQ_AGAIN;
		budget--;
		if (skb || slot->frame.len) {
			if (sroce_req_flush(qp, &held, false) == -ENOBUFS &&
			    qp->ibqp.qp_type == IB_QPT_RC) {
				/* Rewound to before this packet: built again. */
				kfree_skb(skb);
				more = true;
				continue;
			}
			/*
			 * Paced at build time: a run that stops for its
			 * pace (top of the loop) still sends what it holds.
			 */
			sroce_cc_tx_done(qp, skb ? skb->len : slot->frame.len);
			held.slot = slot;
			held.skb = skb;
			s ^= 1;
			if (qp->ibqp.qp_type != IB_QPT_RC)
				sroce_req_flush(qp, &held, false);
		}
		if (step == SROCE_REQ_ERROR) {
			sroce_req_flush(qp, &held, true);
			ibdev_dbg(qp->ibqp.device, "qp %u: requester error\n",
				  qp->ibqp.qp_num);
			sroce_qp_send_error(qp);
			break;
		}
	} while (more && step != SROCE_REQ_IDLE && budget > 0);
	sroce_req_flush(qp, &held, true);

	if (budget <= 0) {
		/* Leave the rest to the work item: bounded time per caller. */
		clear_bit(SROCE_QP_REQ_RUNNING, &qp->flags);
		sroce_req_kick(qp);
		return true;
	}
	clear_bit(SROCE_QP_REQ_RUNNING, &qp->flags);
	/* Kicks that found us running set PENDING before we cleared RUNNING. */
	smp_mb__after_atomic();
	if (test_bit(SROCE_QP_REQ_PENDING, &qp->flags) &&
	    !test_and_set_bit(SROCE_QP_REQ_RUNNING, &qp->flags))
		goto again;
	return true;
}

/*
 * Another online CPU than @cpu, or @cpu itself when it is the only one.
 */
static int sroce_other_cpu(int cpu)
{
	int next = cpumask_next(cpu, cpu_online_mask);

	return next < nr_cpu_ids ? next : cpumask_first(cpu_online_mask);
}

/**
 * sroce_req_heard() - the peer spoke to @qp: a request, or a READ or atomic
 *                     response, arrived
 * @qp: queue pair
 *
 * For the doorbell (sroce_req_doorbell()): a poster that heard from a peer
 * since it last rang may be answering it.  Any context; written only when
 * it changes, so a stream of packets does not bounce its cache line.
 */
void sroce_req_heard(struct sroce_qp *qp)
{
	struct sroce_db_hint *db = qp->db;

	if (db && !READ_ONCE(db->heard))
		WRITE_ONCE(db->heard, true);
}

/*
 * Doorbells per epoch, of which the first SROCE_DB_SETTLE are not timed,
 * and epochs between tries of the other mode.
 */
#define SROCE_DB_EPOCH		64
#define SROCE_DB_SETTLE		16
#define SROCE_DB_PROBE		32
/* A longer gap between doorbells is a pause: the epoch starts over. */
#define SROCE_DB_PAUSE_NS	(1 * NSEC_PER_MSEC)

/*
 * Count a timed doorbell of @db at @now; return whether it should kick the
 * worker rather than run the requester inline.  Each mode is measured by
 * the pace it gives the poster over an epoch of doorbells, which says
 * everything that matters: whether the worker keeps up, whether the poster
 * waits for its completions between posts (a deferred run then only adds
 * a wakeup to each), what the syscalls cost.  The better mode is kept,
 * and the other one tried again every SROCE_DB_PROBE epochs, since the
 * load changes.  The first doorbells after a switch still overlap the
 * other mode's work in flight (a worker draining what it was given),
 * which would flatter the new mode: the pace is timed from the
 * SROCE_DB_SETTLE-th on.
 *
 * An epoch lasts well under a millisecond: one interrupt or preemption
 * in it can double its pace.  A kept mode's pace is therefore the better
 * of its last two epochs, so that one such epoch does not hand the choice
 * to the other mode; a streaming poster paid for every such needless
 * inline epoch with the worker's share of the work.
 */
static bool sroce_db_defer(struct sroce_db_hint *db, u64 now)
{
	u32 rings = READ_ONCE(db->rings);
	u8 defer = READ_ONCE(db->defer);
	u8 epochs;

	if (now - READ_ONCE(db->last) > SROCE_DB_PAUSE_NS)
		rings = 0;
	WRITE_ONCE(db->last, now);
	if (rings == SROCE_DB_SETTLE) {
		WRITE_ONCE(db->start, now);
	} else if (rings == SROCE_DB_EPOCH) {
		u64 span = div_u64(now - READ_ONCE(db->start),
				   SROCE_DB_EPOCH - SROCE_DB_SETTLE);
		u64 prev = READ_ONCE(db->prev);

		WRITE_ONCE(db->prev, span);
		epochs = READ_ONCE(db->epochs) + 1;
		if (epochs > 1 && prev < span)
			span = prev;	/* the last epoch had this mode too */
		WRITE_ONCE(db->span[defer], span);
		rings = 0;
		if (!READ_ONCE(db->span[!defer]) || epochs >= SROCE_DB_PROBE ||
		    (READ_ONCE(db->span[1]) < READ_ONCE(db->span[0])) != defer) {
			defer = !defer;
			epochs = 0;
		}
		WRITE_ONCE(db->epochs, epochs);
		WRITE_ONCE(db->defer, defer);
	}
	WRITE_ONCE(db->rings, rings + 1);
	return defer;
}

/**
 * sroce_req_doorbell() - a user QP's post_send: run or defer the requester
 * @qp: queue pair
 *
 * A poster that waits for an answer between posts (a ping-pong) is best
 * served inline: the packet leaves before the syscall returns.  A poster
 * that heard from a peer since it last rang (a request, or a READ or
 * atomic response, arrived) is taken to be answering it, and runs it
 * inline; no clock is read for it.
 *
 * Any other poster may be streaming: running the requester on the QP's
 * work CPU, moved off the poster's, lets syscalls and protocol work
 * overlap and the worker drain many WQEs per run (and ask for one ACK
 * per run).  Or it waits for its own completions between posts, which a
 * worker would only delay.  Timing one inline run cannot tell these
 * apart when the peer is a QP of the same device, whose answer completes
 * the WQE within the run; so both modes are tried and the better pace
 * kept (sroce_db_defer()).
 *
 * Only a QP whose packets are delivered locally (sroce_tx_local()) is
 * deferred: there the receiver has taken each packet before the send
 * returns, so a worker cannot run ahead of it.  Through a netdev nothing
 * would hold a worker back but the 128-PSN window of each QP, and
 * their sum queued in a backlog can delay ACKs beyond the retransmit
 * timeout; the poster's own pace, inline, is the backpressure there.
 *
 * The hints are shared by the user context's QPs (one poster often
 * streams over many): threads ringing at once can only skew the choice,
 * never the protocol, which the REQ_RUNNING bit keeps to one executor
 * per QP.
 */
void sroce_req_doorbell(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_db_hint *db = qp->db;
	int cpu = raw_smp_processor_id();	/* a hint: may migrate */

	if (READ_ONCE(db->heard)) {
		WRITE_ONCE(db->heard, false);
	} else if (qp->ibqp.qp_type == IB_QPT_RC &&
		   READ_ONCE(qp->req.tx_local) &&
		   sroce_db_defer(db, local_clock())) {
		/*
		 * RC only: a UD send is done once its packet is built, and a
		 * poster may destroy the QP right after posting (rdma-core's
		 * mckey does): WQEs still waiting for the worker would then
		 * never leave.
		 */
		if (READ_ONCE(qp->cpu) == cpu)
			WRITE_ONCE(qp->cpu, sroce_other_cpu(cpu));
		if (READ_ONCE(qp->cpu) != cpu) {
			sroce_count(sdev->stats, SROCE_CNT_DOORBELL_DEFERRED, 1);
			sroce_req_kick(qp);
			return;
		}
	}
	sroce_count(sdev->stats, SROCE_CNT_DOORBELL_INLINE, 1);
	sroce_req_run(qp);
}
