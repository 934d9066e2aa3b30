// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues.  Context: process context for the verbs;
 * post_srq_recv in any context.
 *
 * Receive WQEs are queued in the rxe-ABI ring; the responder copies them
 * out under rq.lock (sroce_resp_get_wqe()) and raises
 * IB_EVENT_SRQ_LIMIT_REACHED when the armed limit is crossed.
 */
#include <rdma/uverbs_ioctl.h>

#include "sroce_dev.h"
#include "sroce_srq.h"
#include "sroce_verbs.h"

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibsrq->device);
	struct sroce_srq *srq = to_sroce_srq(ibsrq);
	struct rxe_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	struct ib_ucontext *uctx;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > SROCE_MAX_QP_WR ||
	    attr->max_sge > SROCE_MAX_SGE || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	err = sroce_udata_uctx(udata, sizeof(resp), &uctx);
	if (err)
		return err;

	err = sroce_res_get(sdev, SROCE_RES_SRQ);
	if (err)
		return err;
	srq->srq_num = ida_alloc(&sdev->srq_ida, GFP_KERNEL);
	if (srq->srq_num < 0) {
		sroce_res_put(sdev, SROCE_RES_SRQ);
		return srq->srq_num;
	}

	spin_lock_init(&srq->rq.lock);
	srq->rq.max_sge = attr->max_sge;
	srq->user = !!udata;
	err = sroce_queue_init(&srq->rq.queue, attr->max_wr,
			       sizeof(struct rxe_recv_wqe) +
			       attr->max_sge * sizeof(struct rxe_sge),
			       SROCE_QUEUE_KERNEL_CONSUMES, uctx, &resp.mi);
	if (err)
		goto err_ida;
	srq->rq.max_wr = sroce_queue_capacity(&srq->rq.queue);
	srq->limit = attr->srq_limit;

	if (udata) {
		resp.srq_num = srq->srq_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}
	attr->max_wr = srq->rq.max_wr;
	return 0;

err_queue:
	sroce_queue_cleanup(&srq->rq.queue);
err_ida:
	ida_free(&sdev->srq_ida, srq->srq_num);
	sroce_res_put(sdev, SROCE_RES_SRQ);
	return err;
}

/*
 * Resize: the posted, not yet consumed WQEs move to the front of a new ring.
 * The rxe provider holds its producer lock across the command, so a user
 * SRQ's producer index cannot move meanwhile; the responder consumes under
 * rq.lock, which is held for the switch.  The provider learns the new
 * ring's mmap offset through the address in its command.
 */
static int sroce_srq_resize(struct sroce_srq *srq, u32 max_wr, u32 limit,
			    struct ib_udata *udata)
{
	struct ib_ucontext *uctx = NULL;
	struct rxe_modify_srq_cmd cmd;
	struct sroce_queue nq, old;
	struct mminfo mi = {};
	unsigned long flags;
	u32 n, i;
	int err;

	if (!max_wr || max_wr > SROCE_MAX_QP_WR)
		return -EINVAL;
	if (udata) {
		if (udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
		err = sroce_udata_uctx(udata, 0, &uctx);
		if (err)
			return err;
	}
	err = sroce_queue_init(&nq, max_wr, srq->rq.queue.elem_size,
			       SROCE_QUEUE_KERNEL_CONSUMES, uctx, &mi);
	if (err)
		return err;
	/* The limit is checked against the size it will apply to. */
	if (limit > sroce_queue_capacity(&nq)) {
		sroce_queue_cleanup(&nq);
		return -EINVAL;
	}
	if (udata &&
	    copy_to_user(u64_to_user_ptr(cmd.mmap_info_addr), &mi, sizeof(mi))) {
		sroce_queue_cleanup(&nq);
		return -EFAULT;
	}

	spin_lock_irqsave(&srq->rq.lock, flags);
	n = sroce_queue_count(&srq->rq.queue);
	if (n > sroce_queue_capacity(&nq)) {
		spin_unlock_irqrestore(&srq->rq.lock, flags);
		sroce_queue_cleanup(&nq);
		return -EINVAL;
	}
	for (i = 0; i < n; i++)
		memcpy(sroce_queue_addr(&nq, i),
		       sroce_queue_addr(&srq->rq.queue, srq->rq.queue.own + i),
		       nq.elem_size);
	/* The producer index is the poster's: start it after the copies. */
	smp_store_release(&nq.buf->producer_index, n);
	old = srq->rq.queue;
	srq->rq.queue = nq;
	srq->rq.max_wr = sroce_queue_capacity(&nq);
	srq->limit = limit;
	spin_unlock_irqrestore(&srq->rq.lock, flags);

	sroce_queue_cleanup(&old);
	return 0;
}

int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_sroce_srq(ibsrq);
	unsigned long flags;
	u32 limit;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	limit = mask & IB_SRQ_LIMIT ? attr->srq_limit : READ_ONCE(srq->limit);
	if (mask & IB_SRQ_MAX_WR)
		return sroce_srq_resize(srq, attr->max_wr, limit, udata);
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->rq.max_wr)
			return -EINVAL;
		spin_lock_irqsave(&srq->rq.lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->rq.lock, flags);
	}
	return 0;
}

int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_sroce_srq(ibsrq);

	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_sroce_srq(ibsrq);

	sroce_queue_cleanup(&srq->rq.queue);
	ida_free(&to_sroce_dev(ibsrq->device)->srq_ida, srq->srq_num);
	sroce_res_put(to_sroce_dev(ibsrq->device), SROCE_RES_SRQ);
	return 0;
}

int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_sroce_srq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (srq->user) {
		*bad_wr = wr;
		return -EINVAL;	/* user SRQs are posted through their ring */
	}
	spin_lock_irqsave(&srq->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = sroce_wq_post_recv(&srq->rq, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return err;
}
