/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs: object, work queues in the rxe ABI layout, and the state
 * machine of IBTA vol. 1 ch. 10.3.
 */
#ifndef SROCE_QP_H
#define SROCE_QP_H

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "sroce_av.h"
#include "sroce_queue.h"

#define SROCE_MAX_QP		BIT(16)
#define SROCE_MIN_QPN		16	/* 0 and 1 are SMI/GSI (IBTA 3.5.7) */
#define SROCE_MAX_QP_WR		BIT(14)
#define SROCE_MAX_SGE		32
#define SROCE_MAX_INLINE	512
#define SROCE_MAX_RD_ATOMIC	128

struct sroce_cq;

/* qp->flags bits */
enum {
	SROCE_QP_REQ_RUNNING,	/* an instance of sroce_req_run() is active */
};

struct sroce_wq {
	struct sroce_queue queue;
	/* Kernel QPs: serializes posters; all QPs: the flushing consumer. */
	spinlock_t lock;
	u32 max_wr;
	u32 max_sge;
	u32 max_inline;
};

struct sroce_qp {
	struct ib_qp ibqp;
	/* Serializes modify/query against each other. */
	struct mutex state_mutex;
	/* Guards state for the posting and (later) data paths. */
	spinlock_t state_lock;
	enum ib_qp_state state;
	bool user;
	bool sq_sig_all;
	/* SROCE_QP_* bits */
	unsigned long flags;
	/* Runs the requester for kernel QPs, outside the poster's context. */
	struct work_struct req_work;
	struct sroce_cq *scq;
	struct sroce_cq *rcq;
	struct sroce_wq sq;
	struct sroce_wq rq;	/* unused with an SRQ */
	/* Attributes as last set, returned by query_qp. */
	struct ib_qp_attr attr;
	struct sroce_av av;	/* primary path, RC/UC */
};

static inline struct sroce_qp *to_sroce_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_wq_post_recv(struct sroce_wq *wq, const struct ib_recv_wr *wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);

#endif /* SROCE_QP_H */
