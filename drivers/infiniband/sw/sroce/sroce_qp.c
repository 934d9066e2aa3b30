// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation, the IBTA 10.3 state machine, flushing, and the
 * posting verbs of kernel QPs.
 *
 * Contexts: create/modify/query/destroy run in process context and are
 * serialized per QP by state_mutex.  post_recv may run in any context.
 *
 * Trust model: a user QP's rings are written by the process at any time.
 * WQEs are copied out of the ring once, into kernel memory, before any
 * field is used (STYLE rule 7); indices are masked on every read.
 *
 * Locks: state_mutex (verbs) > sq.lock (requester/completer state, SQ
 * ring) and resp.lock (responder state) > rq.lock > cq lock.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce/sroce_wire.h"
#include "sroce_cc.h"
#include "sroce_comp.h"
#include "sroce_compat.h"
#include "sroce_cq.h"
#include "sroce_dev.h"
#include "sroce_mcast.h"
#include "sroce_qp.h"
#include "sroce_req.h"
#include "sroce_resp.h"
#include "sroce_srq.h"
#include "sroce_tx.h"
#include "sroce_verbs.h"
#include "sroce_wr.h"

static const char *const sroce_qp_state_names[] = {
	[IB_QPS_RESET]	= "RESET",
	[IB_QPS_INIT]	= "INIT",
	[IB_QPS_RTR]	= "RTR",
	[IB_QPS_RTS]	= "RTS",
	[IB_QPS_SQD]	= "SQD",
	[IB_QPS_SQE]	= "SQE",
	[IB_QPS_ERR]	= "ERR",
};

/*
 * Data bytes each send WQE has room for, in the ring and in its kernel
 * copy: the SGEs or inline bytes the QP was created for, and at least an
 * ATOMIC WRITE's operand, which every RC WQE may carry (sroce_wr.h).
 */
static size_t sroce_send_data_room(const struct sroce_wq *sq)
{
	return max3((size_t)sq->max_sge * sizeof(struct rxe_sge),
		    (size_t)sq->max_inline, (size_t)SROCE_WR_VALUE_BYTES);
}

static size_t sroce_recv_wqe_size(u32 max_sge)
{
	return sizeof(struct rxe_recv_wqe) + max_sge * sizeof(struct rxe_sge);
}

static void sroce_req_work(struct work_struct *work)
{
	sroce_req_run(container_of(work, struct sroce_qp, req_work));
}

/* Use @n entries of res[] (grown to that before), under resp.lock. */
static void sroce_qp_set_nres(struct sroce_resp *rs, u32 n)
{
	u32 i;

	rs->nres = max_t(u32, n, 1);
	rs->res_head = 0;
	/* Entries past the new count are no longer looked at. */
	rs->reads_unsent = 0;
	for (i = 0; i < rs->nres; i++)
		rs->reads_unsent += sroce_rdres_unsent(&rs->res[i]);
}

/* Transport state of a fresh (or reset) QP; caller excludes the data path. */
static void sroce_qp_reset_transport(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_resp *rs = &qp->resp;

	req->cur = qp->sq.queue.own;
	req->fetched = qp->sq.queue.own;
	req->offset = 0;
	req->psn = 0;
	req->max_psn = 0;
	req->acked_psn = 0;
	req->rd_atomic = 0;
	req->since_ack = 0;
	sroce_cwnd_init(&req->cwnd, SROCE_REQ_WINDOW);
	req->rnr_wait = false;
	req->gap_set = false;
	/* A new connection may go elsewhere: its first packet finds out. */
	WRITE_ONCE(qp->self_gen, 0);
	rs->epsn = 0;
	rs->msn = 0;
	rs->cur_kind = 0xff;
	rs->comm_est = false;
	rs->nak_sent = false;
	rs->uc_drop = false;
	rs->have_wqe = false;
	rs->read_busy = false;
	rs->held = false;
	rs->offset = 0;
	memset(rs->res, 0, rs->res_cap * sizeof(*rs->res));
	sroce_qp_set_nres(rs, 1);
}

static void sroce_qp_free_transport(struct sroce_qp *qp)
{
	dst_cache_destroy(&qp->dst_cache);
	kvfree(qp->req.swqe);
	kfree(qp->resp.res);
	kfree(qp->resp.wqe);
}

/**
 * sroce_swqe_alloc() - allocate @n send WQE copies of @size bytes each
 * @n: number of copies
 * @size: bytes per copy
 *
 * kmalloc rounds a large size up to a power of two (64 copies with 30
 * SGEs, 36 KiB, would take 64); vmalloc rounds to a page.  May sleep.
 *
 * Return: zeroed copies, to be freed with kvfree(), or NULL.
 */
struct sroce_swqe *sroce_swqe_alloc(u32 n, size_t size)
{
	if (array_size(n, size) <= PAGE_SIZE)
		return kcalloc(n, size, GFP_KERNEL);
	return vcalloc(n, size);
}

static int sroce_qp_alloc_transport(struct sroce_qp *qp, u32 recv_sge)
{
	u32 ring = qp->sq.queue.index_mask + 1;
	u32 slots = min_t(u32, ring, SROCE_SWQE_MIN);

	qp->req.swqe_max = min_t(u32, ring, SROCE_SWQE_MAX);
	/*
	 * A kernel QP may carry a storage ULP's I/O, whose requester must
	 * not allocate (memory reclaim could wait on that very I/O): it
	 * gets all its copies now.  Kernel QPs are few.
	 */
	if (!qp->user)
		slots = qp->req.swqe_max;
	qp->req.swqe_mask = slots - 1;	/* all powers of two */
	qp->req.swqe_size = ALIGN(sizeof(struct sroce_swqe) +
				  sroce_send_data_room(&qp->sq), 8);
	qp->req.swqe = sroce_swqe_alloc(slots, qp->req.swqe_size);
	/* One entry until max_dest_rd_atomic asks for more (RTR). */
	qp->resp.res = kcalloc(1, sizeof(*qp->resp.res), GFP_KERNEL);
	qp->resp.res_cap = 1;
	qp->resp.wqe_size = sizeof(struct rxe_recv_wqe) +
			    min_t(u32, recv_sge, SROCE_MAX_SGE) *
			    sizeof(struct rxe_sge);
	qp->resp.wqe = kzalloc(qp->resp.wqe_size, GFP_KERNEL);
	if (!qp->req.swqe || !qp->resp.res || !qp->resp.wqe ||
	    dst_cache_init(&qp->dst_cache, GFP_KERNEL)) {
		sroce_qp_free_transport(qp);
		return -ENOMEM;
	}
	return 0;
}

static int sroce_qp_check_cap(struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > SROCE_MAX_QP_WR ||
	    cap->max_send_sge > SROCE_MAX_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > SROCE_MAX_QP_WR ||
			   cap->max_recv_sge > SROCE_MAX_SGE))
		return -EINVAL;
	return 0;
}

static struct lock_class_key sroce_sq_lock_key;

static int sroce_wq_init(struct sroce_wq *wq, u32 max_wr, size_t elem,
			 enum sroce_queue_dir dir, struct ib_ucontext *uctx,
			 struct mminfo *mi)
{
	spin_lock_init(&wq->lock);
	/* A zero-depth queue still gets a ring: the ABI maps both. */
	return sroce_queue_init(&wq->queue, max_t(u32, max_wr, 1), elem, dir,
				uctx, mi);
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibqp->device);
	struct sroce_qp *qp = to_sroce_qp(ibqp);
	struct rxe_create_qp_resp resp = {};
	struct ib_ucontext *uctx;
	struct ib_qp_cap *cap = &init->cap;
	u32 qpn;
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata || init->port_num != 1)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	err = sroce_qp_check_cap(init);
	if (err)
		return err;
	err = sroce_udata_uctx(udata, sizeof(resp), &uctx);
	if (err)
		return err;
	err = sroce_res_get(sdev, SROCE_RES_QP);
	if (err)
		return err;

	mutex_init(&qp->state_mutex);
	spin_lock_init(&qp->state_lock);
	spin_lock_init(&qp->resp.lock);
	INIT_WORK(&qp->req_work, sroce_req_work);
	INIT_LIST_HEAD(&qp->tx_wait);
	INIT_WORK(&qp->resp_work, sroce_resp_read_work);
	timer_setup(&qp->retry_timer, sroce_comp_retry_timer, 0);
	timer_setup(&qp->rnr_timer, sroce_comp_rnr_timer, 0);
	sroce_cc_qp_init(qp);
	qp->mtu = SROCE_MTU_MIN;
	qp->state = IB_QPS_RESET;
	qp->user = !!udata;
	if (uctx)
		qp->db = &container_of(uctx, struct sroce_ucontext, ibuc)->db;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->scq = to_sroce_cq(init->send_cq);
	qp->rcq = to_sroce_cq(init->recv_cq);

	/* Round the SQ element up so sge and inline space coincide. */
	qp->sq.max_sge = max_t(u32, cap->max_send_sge,
			       cap->max_inline_data / sizeof(struct rxe_sge));
	qp->sq.max_inline = qp->sq.max_sge * sizeof(struct rxe_sge);
	qp->sq.max_wr = cap->max_send_wr;
	err = sroce_wq_init(&qp->sq, cap->max_send_wr,
			    sizeof(struct rxe_send_wqe) +
			    sroce_send_data_room(&qp->sq),
			    SROCE_QUEUE_KERNEL_CONSUMES, uctx, &resp.sq_mi);
	if (err)
		goto err_res;
	/*
	 * The SQ lock nests outside resp.lock, the RQ's inside it (order
	 * above): one lockdep class for both would read as an inversion.
	 */
	lockdep_set_class(&qp->sq.lock, &sroce_sq_lock_key);

	/* The responder copies receive WQEs from the RQ, or from the SRQ. */
	err = sroce_qp_alloc_transport(qp, init->srq ?
				       to_sroce_srq(init->srq)->rq.max_sge :
				       cap->max_recv_sge);
	if (err)
		goto err_sq;
	sroce_qp_reset_transport(qp);

	if (!init->srq) {
		qp->rq.max_sge = cap->max_recv_sge;
		qp->rq.max_wr = cap->max_recv_wr;
		err = sroce_wq_init(&qp->rq, cap->max_recv_wr,
				    sroce_recv_wqe_size(qp->rq.max_sge),
				    SROCE_QUEUE_KERNEL_CONSUMES, uctx,
				    &resp.rq_mi);
		if (err)
			goto err_transport;
	}

	qp->rxref = kzalloc(sizeof(*qp->rxref), GFP_KERNEL);
	if (!qp->rxref) {
		err = -ENOMEM;
		goto err_rq;
	}
	refcount_set(&qp->rxref->users, 1);
	init_completion(&qp->rxref->idle);
	qp->rxref->qp = qp;

	/* The number is reserved now, published once the QP is complete. */
	if (init->qp_type == IB_QPT_GSI) {
		qpn = 1;
		err = xa_insert_irq(&sdev->qp_xa, qpn, NULL, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic_irq(&sdev->qp_xa, &qpn, NULL,
					  XA_LIMIT(SROCE_MIN_QPN,
						   SROCE_MCAST_QPN - 1),
					  &sdev->qp_next, GFP_KERNEL);
		err = err < 0 ? err : 0;
	}
	if (err)
		goto err_ref;
	ibqp->qp_num = qpn;
	qp->cpu = cpumask_local_spread(qpn, NUMA_NO_NODE);

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_xa;
	}

	/* Report what was granted (ib_core copies it to the caller). */
	cap->max_send_wr = sroce_queue_capacity(&qp->sq.queue);
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
	if (!init->srq) {
		cap->max_recv_wr = sroce_queue_capacity(&qp->rq.queue);
		cap->max_recv_sge = qp->rq.max_sge;
	}
	qp->attr.cap = *cap;
	qp->attr.qp_state = IB_QPS_RESET;
	qp->attr.port_num = 1;
	xa_store_irq(&sdev->qp_xa, qpn, qp->rxref, GFP_KERNEL);
	return 0;

err_xa:
	xa_erase_irq(&sdev->qp_xa, qpn);
err_ref:
	kfree(qp->rxref);	/* never published */
err_rq:
	if (!init->srq)
		sroce_queue_cleanup(&qp->rq.queue);
err_transport:
	sroce_qp_free_transport(qp);
err_sq:
	sroce_queue_cleanup(&qp->sq.queue);
err_res:
	sroce_res_put(sdev, SROCE_RES_QP);
	return err == -EBUSY ? -ENOMEM : err;
}

static void sroce_flush_one(struct sroce_qp *qp, struct sroce_cq *cq,
			    u64 wr_id, bool send)
{
	struct ib_wc wc = {
		.wr_id		= wr_id,
		.status		= IB_WC_WR_FLUSH_ERR,
		.opcode		= send ? IB_WC_SEND : IB_WC_RECV,
		.qp		= &qp->ibqp,
		.port_num	= 1,
	};

	sroce_cq_post(cq, &wc, false);
}

/* Complete every receive WQE still in @wq with IB_WC_WR_FLUSH_ERR. */
static void sroce_wq_flush(struct sroce_qp *qp, struct sroce_wq *wq)
{
	struct sroce_queue *q = &wq->queue;
	unsigned long flags;
	u64 wr_id;
	u32 n;

	spin_lock_irqsave(&wq->lock, flags);
	/* What the poster had posted when we looked: its index may run on. */
	for (n = sroce_queue_posted(q); n; n--) {
		/* One 8-byte read of possibly user-owned memory: no trust. */
		wr_id = READ_ONCE(((struct rxe_recv_wqe *)
				   sroce_queue_consumer_addr(q))->wr_id);
		sroce_queue_advance_consumer(q);
		sroce_flush_one(qp, qp->rcq, wr_id, false);
	}
	spin_unlock_irqrestore(&wq->lock, flags);
}

/*
 * Complete the whole SQ (IBTA 10.3.1): WQEs already finished with their
 * status, in order, then the rest - started or only posted - as flushed.
 */
static void sroce_sq_flush(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->sq.queue;
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *w;
	unsigned long flags;
	u64 wr_id;
	u32 n;

	spin_lock_irqsave(&qp->sq.lock, flags);
	sroce_comp_advance(qp);
	while (q->own != req->fetched) {
		w = sroce_swqe_at(req, q->own);
		if (w->done && w->status != IB_WC_SUCCESS) {
			/* A failed WQE behind a flushed one: its own status. */
			struct ib_wc wc = {
				.wr_id = w->wr_id, .status = w->status,
				.opcode = sroce_wr_desc(w->opcode)->wc_opcode,
				.qp = &qp->ibqp, .port_num = 1,
			};

			sroce_queue_advance_consumer(q);
			sroce_cq_post(qp->scq, &wc, false);
		} else {
			sroce_queue_advance_consumer(q);
			sroce_flush_one(qp, qp->scq, w->wr_id, true);
		}
	}
	/* The rest, as posted when we looked (sroce_wq_flush()). */
	for (n = sroce_queue_posted(q); n; n--) {
		wr_id = READ_ONCE(((struct rxe_send_wqe *)
				   sroce_queue_consumer_addr(q))->wr.wr_id);
		sroce_queue_advance_consumer(q);
		sroce_flush_one(qp, qp->scq, wr_id, true);
	}
	req->cur = q->own;
	req->fetched = q->own;
	req->offset = 0;
	req->rd_atomic = 0;
	req->rnr_wait = false;
	req->rto_armed = false;
	del_timer(&qp->retry_timer);
	del_timer(&qp->rnr_timer);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

static void sroce_qp_flush(struct sroce_qp *qp)
{
	struct sroce_resp *rs = &qp->resp;
	unsigned long flags;

	sroce_sq_flush(qp);
	/* A SEND in progress holds its receive WQE: flush it first. */
	spin_lock_irqsave(&rs->lock, flags);
	if (rs->have_wqe) {
		rs->have_wqe = false;
		sroce_flush_one(qp, qp->rcq, rs->wqe->wqe.wr_id, false);
	}
	rs->cur_kind = 0xff;
	spin_unlock_irqrestore(&rs->lock, flags);
	if (!qp->ibqp.srq)
		sroce_wq_flush(qp, &qp->rq);
}

/**
 * sroce_qp_error() - the data path moves @qp to ERR (IBTA 10.3.1)
 * @qp: queue pair
 *
 * Any context except hard IRQ; no QP lock held.  Everything outstanding
 * completes (flushed); an SRQ-attached QP reports its last WQE.  A QP in
 * RESET or INIT has no data path: an error found late, by a packet or a
 * timer of the connection a reset ended, must not fail the next one.
 */
void sroce_qp_error(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (!sroce_qp_state_live(qp->state)) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		return;
	}
	qp->state = IB_QPS_ERR;
	qp->attr.qp_state = IB_QPS_ERR;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	ibdev_dbg(qp->ibqp.device, "qp %u: error (from %pS)\n",
		  qp->ibqp.qp_num, __builtin_return_address(0));
	sroce_qp_flush(qp);
	if (qp->ibqp.srq)
		sroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/**
 * sroce_qp_send_error() - a send WQE of @qp completed in error
 * @qp: queue pair
 *
 * IBTA 10.3.1: an RC QP goes to ERR; a UC or UD QP to SQE, where its
 * send queue is flushed and its receive queue goes on, until the consumer
 * moves it back to RTS (ib_mad does so for QP1).  Any context except hard
 * IRQ; no QP lock held.
 */
void sroce_qp_send_error(struct sroce_qp *qp)
{
	unsigned long flags;

	if (qp->ibqp.qp_type == IB_QPT_RC) {
		sroce_qp_error(qp);
		return;
	}
	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		return;
	}
	qp->state = IB_QPS_SQE;
	qp->attr.qp_state = IB_QPS_SQE;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	ibdev_dbg(qp->ibqp.device, "qp %u: send queue error\n",
		  qp->ibqp.qp_num);
	sroce_sq_flush(qp);
}

/* Drop everything queued: IBTA 10.3.1, RESET empties the work queues. */
static void sroce_wq_reset(struct sroce_wq *wq)
{
	struct sroce_queue *q = &wq->queue;
	unsigned long flags;

	spin_lock_irqsave(&wq->lock, flags);
	q->own = (q->own + sroce_queue_posted(q)) & q->index_mask;
	/* Release: as for sroce_queue_advance_consumer(). */
	smp_store_release(&q->buf->consumer_index, q->own);
	spin_unlock_irqrestore(&wq->lock, flags);
}

/**
 * sroce_qp_event() - raise an affiliated asynchronous event
 * @qp: queue pair
 * @type: the event
 */
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device		= qp->ibqp.device,
		.element.qp	= &qp->ibqp,
		.event		= type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/*
 * Stop timers and deferred work and keep them stopped (until RESET clears
 * SROCE_QP_DYING).  Process context.
 *
 * Each source of kicks is shut before the work items are cancelled, so
 * that none can queue them again afterwards: the timers (DYING is tested
 * under sq.lock where they are armed), the queues' drain (the QP leaves
 * the waiting list, and DYING keeps it off, under tx_lock), the pace
 * timer.  A destroyed QP's receive path is gone before this is called.
 */
static void sroce_qp_quiesce(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	set_bit(SROCE_QP_DYING, &qp->flags);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	del_timer_sync(&qp->retry_timer);
	del_timer_sync(&qp->rnr_timer);
	sroce_tx_unthrottle(qp);
	sroce_cc_qp_fini(qp);
	cancel_work_sync(&qp->resp_work);
	cancel_work_sync(&qp->req_work);
	/* A requester that ran until now may have armed these once more. */
	sroce_cc_qp_fini(qp);
	del_timer_sync(&qp->rnr_timer);
}

/*
 * Make room for @n (at least one) responder resources.  The entries keep
 * their places, so READ responses under way go on; the old array goes
 * once no one can reach it: every user holds qp->resp.lock.
 */
static int sroce_qp_grow_res(struct sroce_qp *qp, u32 n)
{
	struct sroce_resp *rs = &qp->resp;
	struct sroce_rdres *res, *old;
	unsigned long flags;

	n = max_t(u32, n, 1);
	if (n <= rs->res_cap)
		return 0;
	res = kcalloc(n, sizeof(*res), GFP_KERNEL);
	if (!res)
		return -ENOMEM;
	spin_lock_irqsave(&rs->lock, flags);
	old = rs->res;
	memcpy(res, old, rs->res_cap * sizeof(*res));
	rs->res = res;
	rs->res_cap = n;
	spin_unlock_irqrestore(&rs->lock, flags);
	kfree(old);
	return 0;
}

/* Value checks ib_modify_qp_is_ok() leaves to the driver. */
static int sroce_qp_check_attr(struct sroce_qp *qp, struct ib_qp_attr *attr,
			       int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > 0xffffff)
		return -EINVAL;
	/* LOCAL_WRITE is meaningless for a QP but commonly set: ignored. */
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       IB_ACCESS_LOCAL_WRITE |
				       SROCE_QP_ACCESS_FLUSH)))
		return -EINVAL;
	if ((mask & IB_QP_ALT_PATH) || (mask & IB_QP_PATH_MIG_STATE))
		return -EOPNOTSUPP;	/* no APM on a single-port device */
	return 0;
}

int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sroce_qp(ibqp);
	enum ib_qp_state cur, new;
	struct sroce_av av;
	unsigned long flags;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	mutex_lock(&qp->state_mutex);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = -EINVAL;
	if (cur != qp->state)
		goto out;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask))
		goto out;
	err = sroce_qp_check_attr(qp, attr, mask);
	if (err)
		goto out;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		/* Before anything changes: the one step that can fail. */
		err = sroce_qp_grow_res(qp, attr->max_dest_rd_atomic);
		if (err)
			goto out;
	}
	if (mask & IB_QP_AV) {
		err = sroce_av_from_attr(&av, &attr->ah_attr);
		if (err)
			goto out;
		av.dcache = &qp->dst_cache;
		spin_lock_irqsave(&qp->sq.lock, flags);
		qp->av = av;
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		/* Routes cached for the old AV are dropped at their next use. */
		dst_cache_reset(&qp->dst_cache);
		qp->attr.ah_attr = attr->ah_attr;
		/* Queries rebuild the AH attribute; keep no sgid_attr ref. */
		qp->attr.ah_attr.grh.sgid_attr = NULL;
	}

	if (mask & IB_QP_PKEY_INDEX)
		qp->attr.pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		qp->attr.qkey = attr->qkey;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PATH_MTU) {
		qp->attr.path_mtu = attr->path_mtu;
		qp->mtu = ib_mtu_enum_to_int(attr->path_mtu);
	}
	if (mask & IB_QP_DEST_QPN)
		qp->attr.dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_RQ_PSN) {
		qp->attr.rq_psn = attr->rq_psn & 0xffffff;
		spin_lock_irqsave(&qp->resp.lock, flags);
		qp->resp.epsn = qp->attr.rq_psn;
		spin_unlock_irqrestore(&qp->resp.lock, flags);
	}
	if (mask & IB_QP_SQ_PSN) {
		qp->attr.sq_psn = attr->sq_psn & 0xffffff;
		spin_lock_irqsave(&qp->sq.lock, flags);
		qp->req.psn = qp->attr.sq_psn;
		qp->req.max_psn = qp->attr.sq_psn;
		qp->req.acked_psn = qp->attr.sq_psn;
		spin_unlock_irqrestore(&qp->sq.lock, flags);
	}
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		qp->attr.max_dest_rd_atomic = attr->max_dest_rd_atomic;
		spin_lock_irqsave(&qp->resp.lock, flags);
		sroce_qp_set_nres(&qp->resp, attr->max_dest_rd_atomic);
		spin_unlock_irqrestore(&qp->resp.lock, flags);
	}
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_TIMEOUT)
		qp->attr.timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT) {
		qp->attr.retry_cnt = attr->retry_cnt;
		qp->req.retry = attr->retry_cnt;
	}
	if (mask & IB_QP_RNR_RETRY) {
		qp->attr.rnr_retry = attr->rnr_retry;
		qp->req.rnr_retry = attr->rnr_retry;
	}
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		qp->attr.en_sqd_async_notify = attr->en_sqd_async_notify;

	if (new != cur) {
		spin_lock_irqsave(&qp->state_lock, flags);
		/*
		 * The data path may have moved the QP to SQE or ERR since
		 * cur was read: only RESET and ERR leave those from anywhere.
		 */
		if (qp->state != cur && new != IB_QPS_ERR &&
		    new != IB_QPS_RESET) {
			spin_unlock_irqrestore(&qp->state_lock, flags);
			err = -EINVAL;
			goto out;
		}
		qp->state = new;
		qp->attr.qp_state = new;
		spin_unlock_irqrestore(&qp->state_lock, flags);
		ibdev_dbg(ibqp->device, "qp %u %s -> %s\n", ibqp->qp_num,
			  sroce_qp_state_names[cur], sroce_qp_state_names[new]);

		if (new == IB_QPS_ERR) {
			sroce_qp_flush(qp);
			if (ibqp->srq)
				sroce_qp_event(qp,
					       IB_EVENT_QP_LAST_WQE_REACHED);
		} else if (new == IB_QPS_RESET) {
			sroce_qp_quiesce(qp);
			sroce_wq_reset(&qp->sq);
			if (!ibqp->srq)
				sroce_wq_reset(&qp->rq);
			spin_lock_irqsave(&qp->sq.lock, flags);
			spin_lock(&qp->resp.lock);
			sroce_qp_reset_transport(qp);
			spin_unlock(&qp->resp.lock);
			/* Congestion state starts over with the next event. */
			qp->cc.gen = 0;
			WRITE_ONCE(qp->cc.st.limited, false);
			spin_unlock_irqrestore(&qp->sq.lock, flags);
			clear_bit(SROCE_QP_DYING, &qp->flags);
		} else if (new == IB_QPS_SQD && qp->attr.en_sqd_async_notify) {
			/*
			 * SQD stops new messages at once (sroce_req_step); the
			 * drained event is raised here, where a message is
			 * never left half sent by more than one MTU burst.
			 */
			sroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
		} else if (new == IB_QPS_RTS) {
			/* SQD -> RTS resumes what waited. */
			sroce_req_kick(qp);
		}
	}
	err = 0;
out:
	mutex_unlock(&qp->state_mutex);
	return err;
}

int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sroce_qp(ibqp);

	mutex_lock(&qp->state_mutex);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_draining = 0;
	if (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC)
		sroce_av_to_attr(&qp->av, &attr->ah_attr);
	mutex_unlock(&qp->state_mutex);

	memset(init, 0, sizeof(*init));
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->qp_type = ibqp->qp_type;
	init->sq_sig_type = IB_SIGNAL_REQ_WR;
	init->port_num = 1;
	return 0;
}

int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibqp->device);
	struct sroce_qp *qp = to_sroce_qp(ibqp);

	struct sroce_qp_ref *ref = qp->rxref;

	xa_erase_irq(&sdev->qp_xa, ibqp->qp_num);
	sroce_mcast_qp_cleanup(qp);
	/*
	 * No packet finds the QP any more: wait for those being handled
	 * (not for a grace period: see struct sroce_qp_ref).
	 */
	if (!refcount_dec_and_test(&ref->users))
		wait_for_completion(&ref->idle);
	kfree_rcu(ref, rcu);
	sroce_qp_quiesce(qp);
	sroce_qp_free_transport(qp);
	sroce_queue_cleanup(&qp->sq.queue);
	if (!ibqp->srq)
		sroce_queue_cleanup(&qp->rq.queue);
	mutex_destroy(&qp->state_mutex);
	sroce_res_put(sdev, SROCE_RES_QP);
	return 0;
}

/*
 * Kernel QPs: write one ib_send_wr into the (kernel-only) SQ ring in the
 * rxe layout the requester consumes.
 */
static int sroce_post_one_send(struct sroce_qp *qp, const struct ib_send_wr *wr)
{
	struct sroce_queue *q = &qp->sq.queue;
	u32 prod = q->buf->producer_index;
	struct rxe_send_wqe *wqe;
	u64 len = 0;
	int i;

	if (wr->num_sge < 0 || (u32)wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	if (((prod + 1 - q->own) & q->index_mask) == 0)
		return -ENOMEM;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > U32_MAX ||
	    ((wr->send_flags & IB_SEND_INLINE) && len > qp->sq.max_inline))
		return -EINVAL;

	wqe = sroce_queue_addr(q, prod);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr.wr_id = wr->wr_id;
	wqe->wr.opcode = wr->opcode;
	wqe->wr.send_flags = wr->send_flags;
	switch (wr->opcode) {
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		wqe->wr.ex.invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	default:
		wqe->wr.ex.imm_data = wr->ex.imm_data;
		break;
	}
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->wr.wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->wr.wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->wr.wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->wr.wr.atomic.swap = atomic_wr(wr)->swap;
		wqe->wr.wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		wqe->wr.wr.reg.mr = reg_wr(wr)->mr;
		wqe->wr.wr.reg.key = reg_wr(wr)->key;
		wqe->wr.wr.reg.access = reg_wr(wr)->access;
		break;
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		if (qp->ibqp.qp_type == IB_QPT_UD ||
		    qp->ibqp.qp_type == IB_QPT_GSI) {
			wqe->wr.wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
			wqe->wr.wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
			wqe->wr.wr.ud.ah_num =
				to_sroce_ah(ud_wr(wr)->ah)->ah_num;
		}
		break;
	default:
		break;
	}
	wqe->dma.length = len;
	if (wr->send_flags & IB_SEND_INLINE) {
		u8 *p = wqe->dma.inline_data;

		/* Kernel SGE addresses are kernel virtual (virt DMA). */
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
	} else {
		wqe->dma.num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			wqe->dma.sge[i].addr = wr->sg_list[i].addr;
			wqe->dma.sge[i].length = wr->sg_list[i].length;
			wqe->dma.sge[i].lkey = wr->sg_list[i].lkey;
		}
	}
	/* Release: the WQE is complete before the requester can see it. */
	smp_store_release(&q->buf->producer_index, (prod + 1) & q->index_mask);
	return 0;
}

int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sroce_qp(ibqp);
	enum ib_qp_state state = READ_ONCE(qp->state);
	unsigned long flags;
	int err = 0;

	/* IBTA 10.8.2: no sends before RTS other than into ERR's flush. */
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}
	/* User QPs ring the doorbell with no WRs: their WQEs are in the ring. */
	if (!qp->user) {
		spin_lock_irqsave(&qp->sq.lock, flags);
		for (; wr; wr = wr->next) {
			err = sroce_post_one_send(qp, wr);
			if (err) {
				*bad_wr = wr;
				break;
			}
		}
		spin_unlock_irqrestore(&qp->sq.lock, flags);
	}
	/* IBTA 10.3.1: work posted in ERR or SQE completes as flushed. */
	if (state == IB_QPS_ERR || state == IB_QPS_SQE)
		sroce_sq_flush(qp);
	else if (qp->user && qp->ibqp.qp_type != IB_QPT_UC)
		sroce_req_doorbell(qp);	/* process context */
	else
		/*
		 * Kernel ULPs post from any context, ib_mad with IRQs off under
		 * its own lock, where the IP output path must not run.  UC
		 * always sends from the QP's CPU: packets sent from two CPUs
		 * can overtake each other in per-CPU backlogs, and UC cannot
		 * recover a message that arrives out of order.
		 */
		sroce_req_kick(qp);
	return err;
}

/**
 * sroce_wq_post_recv() - queue one receive WR on a kernel RQ or SRQ ring
 * @wq: the queue, its lock held
 * @wr: the work request
 *
 * Kernel rings are not mapped anywhere, so their header can be trusted.
 *
 * Return: 0, -EINVAL (too many SGEs or bytes) or -ENOMEM (ring full).
 */
int sroce_wq_post_recv(struct sroce_wq *wq, const struct ib_recv_wr *wr)
{
	struct sroce_queue *q = &wq->queue;
	struct rxe_recv_wqe *wqe;
	u32 prod = q->buf->producer_index;
	u64 len = 0;
	int i;

	if (wr->num_sge < 0 || (u32)wr->num_sge > wq->max_sge)
		return -EINVAL;
	if (((prod + 1 - q->own) & q->index_mask) == 0)
		return -ENOMEM;

	wqe = sroce_queue_addr(q, prod);
	wqe->wr_id = wr->wr_id;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->dma.sge[i].addr = wr->sg_list[i].addr;
		wqe->dma.sge[i].length = wr->sg_list[i].length;
		wqe->dma.sge[i].lkey = wr->sg_list[i].lkey;
		len += wr->sg_list[i].length;
	}
	if (len > U32_MAX)
		return -EINVAL;
	wqe->dma.length = len;
	wqe->dma.resid = len;
	wqe->dma.num_sge = wr->num_sge;
	wqe->dma.cur_sge = 0;
	wqe->dma.sge_offset = 0;
	/* Release: the WQE is complete before the consumer can see it. */
	smp_store_release(&q->buf->producer_index, (prod + 1) & q->index_mask);
	return 0;
}

int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sroce_qp(ibqp);
	enum ib_qp_state state;
	unsigned long flags;
	int err = 0;

	if (ibqp->srq || qp->user) {
		/* SRQ QPs take receives on the SRQ; user QPs via their ring. */
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->state_lock, flags);
	state = qp->state;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (state == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = sroce_wq_post_recv(&qp->rq, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);

	/* IBTA 10.3.1: work posted in ERR completes as flushed. */
	if (state == IB_QPS_ERR)
		sroce_wq_flush(qp, &qp->rq);
	return err;
}
