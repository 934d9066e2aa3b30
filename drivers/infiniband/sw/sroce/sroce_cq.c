// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.
 *
 * Contexts: the verbs run in process context.  sroce_cq_post() runs in any
 * context (softirq on the receive path, process context when flushing) and
 * never calls the consumer's handler itself: it schedules the per-CQ
 * tasklet, which gives both rules of core_locking.rst - handlers are not
 * called from inside a verb, and calls for one CQ never overlap.
 */
#include <linux/slab.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce_cq.h"
#include "sroce_dev.h"
#include "sroce_verbs.h"

static size_t sroce_cqe_size(bool user)
{
	return user ? sizeof(struct ib_uverbs_wc) : sizeof(struct ib_wc);
}

static void sroce_cq_comp_tasklet(struct tasklet_struct *t)
{
	struct sroce_cq *cq = from_tasklet(cq, t, comp_tasklet);

	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CQ_UDATA_ARG)
{
	struct ib_udata *udata = sroce_cq_udata();
	struct sroce_cq *cq = to_sroce_cq(ibcq);
	struct rxe_create_cq_resp resp = {};
	struct ib_ucontext *uctx;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > SROCE_MAX_CQE)
		return -EINVAL;
	err = sroce_udata_uctx(udata, sizeof(resp), &uctx);
	if (err)
		return err;
	err = sroce_res_get(to_sroce_dev(ibcq->device), SROCE_RES_CQ);
	if (err)
		return err;

	spin_lock_init(&cq->lock);
	tasklet_setup(&cq->comp_tasklet, sroce_cq_comp_tasklet);
	cq->user = !!udata;
	err = sroce_queue_init(&cq->queue, attr->cqe, sroce_cqe_size(cq->user),
			       SROCE_QUEUE_KERNEL_PRODUCES, uctx, &resp.mi);
	if (err)
		goto err_res;

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			sroce_queue_cleanup(&cq->queue);
			goto err_res;
		}
	}
	ibcq->cqe = attr->cqe;
	return 0;

err_res:
	sroce_res_put(to_sroce_dev(ibcq->device), SROCE_RES_CQ);
	return err;
}

int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_sroce_cq(ibcq);

	/* ib_core guarantees no QP uses the CQ any more. */
	tasklet_kill(&cq->comp_tasklet);
	sroce_queue_cleanup(&cq->queue);
	sroce_res_put(to_sroce_dev(ibcq->device), SROCE_RES_CQ);
	return 0;
}

/*
 * Move the pending entries into a new ring.  For a user CQ the consumer
 * index is the process's; entries it has not consumed are carried over.
 */
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_sroce_cq(ibcq);
	struct rxe_resize_cq_resp resp = {};
	struct ib_ucontext *uctx;
	struct sroce_queue nq, old;
	unsigned long flags;
	u32 n, i, peer;
	int err;

	if (cqe < 1 || cqe > SROCE_MAX_CQE)
		return -EINVAL;
	err = sroce_udata_uctx(udata, sizeof(resp), &uctx);
	if (err)
		return err;
	err = sroce_queue_init(&nq, cqe, sroce_cqe_size(cq->user),
			       SROCE_QUEUE_KERNEL_PRODUCES, uctx, &resp.mi);
	if (err)
		return err;

	spin_lock_irqsave(&cq->lock, flags);
	n = sroce_queue_count(&cq->queue);
	if (n > sroce_queue_capacity(&nq)) {
		spin_unlock_irqrestore(&cq->lock, flags);
		sroce_queue_cleanup(&nq);
		return -EINVAL;
	}
	peer = sroce_queue_peer_index(&cq->queue);
	for (i = 0; i < n; i++) {
		memcpy(sroce_queue_producer_addr(&nq),
		       sroce_queue_addr(&cq->queue, peer + i),
		       sroce_cqe_size(cq->user));
		sroce_queue_advance_producer(&nq);
	}
	old = cq->queue;
	cq->queue = nq;
	ibcq->cqe = cqe;
	spin_unlock_irqrestore(&cq->lock, flags);

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			/* The CQ keeps working on the new ring either way. */
			sroce_queue_cleanup(&old);
			return err;
		}
	}
	sroce_queue_cleanup(&old);
	return 0;
}

int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_sroce_cq(ibcq);
	struct sroce_queue *q = &cq->queue;
	unsigned long flags;
	u32 cons;
	int n;

	/*
	 * Kernel CQ: the kernel is producer and consumer; the consumer index
	 * lives in the (kernel-only) buffer header.
	 */
	spin_lock_irqsave(&cq->lock, flags);
	cons = q->buf->consumer_index & q->index_mask;
	for (n = 0; n < num_entries && cons != q->own; n++) {
		memcpy(&wc[n], sroce_queue_addr(q, cons), sizeof(*wc));
		cons = (cons + 1) & q->index_mask;
	}
	/* Pairs with the producer's acquire in sroce_queue_full(). */
	smp_store_release(&q->buf->consumer_index, cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int sroce_peek_cq(struct ib_cq *ibcq, int wc_cnt)
{
	struct sroce_cq *cq = to_sroce_cq(ibcq);
	int n = sroce_queue_count(&cq->queue);

	return min(n, wc_cnt);
}

int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_sroce_cq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* NEXT_COMP supersedes SOLICITED until the next event fires. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    !sroce_queue_empty(&cq->queue))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

static void sroce_cq_overflow(struct sroce_cq *cq)
{
	struct ib_event ev = {
		.device		= cq->ibcq.device,
		.element.cq	= &cq->ibcq,
		.event		= IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/*
 * Every field of @u is assigned, the reserved byte too: the struct has no
 * padding, so no memset of the user-visible slot first.
 */
static void sroce_wc_to_uverbs(struct ib_uverbs_wc *u, const struct ib_wc *wc)
{
	BUILD_BUG_ON(sizeof(*u) != 48);	/* the fields below, no holes */
	u->wr_id = wc->wr_id;
	u->status = wc->status;
	u->opcode = wc->opcode;
	u->vendor_err = wc->vendor_err;
	u->byte_len = wc->byte_len;
	u->ex.imm_data = wc->ex.imm_data;
	u->qp_num = wc->qp ? wc->qp->qp_num : 0;
	u->src_qp = wc->src_qp;
	u->wc_flags = wc->wc_flags;
	u->pkey_index = wc->pkey_index;
	u->slid = wc->slid;
	u->sl = wc->sl;
	u->dlid_path_bits = wc->dlid_path_bits;
	u->port_num = wc->port_num;
	u->reserved = 0;
}

/**
 * sroce_cq_post() - add a completion
 * @cq: the CQ
 * @wc: the completion (wc->qp set)
 * @solicited: it completes a solicited event
 *
 * Return: 0, or -ENOSPC when the CQ overflowed (IB_EVENT_CQ_ERR raised once;
 * IBTA o11-xx: the CQ is then in error and the completion is lost).
 */
int sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc, bool solicited)
{
	struct sroce_queue *q = &cq->queue;
	unsigned long flags;
	bool kick = false, overflow = false;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflowed || sroce_queue_full(q)) {
		overflow = !cq->overflowed;
		cq->overflowed = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (overflow)
			sroce_cq_overflow(cq);
		return -ENOSPC;
	}
	if (cq->user)
		sroce_wc_to_uverbs(sroce_queue_producer_addr(q), wc);
	else
		memcpy(sroce_queue_producer_addr(q), wc, sizeof(*wc));
	sroce_queue_advance_producer(q);

	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || wc->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		kick = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (kick)
		tasklet_schedule(&cq->comp_tasklet);
	return 0;
}
