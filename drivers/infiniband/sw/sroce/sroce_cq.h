/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues.  A user CQ is a ring of struct ib_uverbs_wc mapped into
 * the process (rxe ABI); a kernel CQ is a ring of struct ib_wc polled
 * through ib_poll_cq().
 */
#ifndef SROCE_CQ_H
#define SROCE_CQ_H

#include <linux/interrupt.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "sroce_compat.h"
#include "sroce_queue.h"

#define SROCE_MAX_CQE	BIT(16)

struct sroce_cq {
	struct ib_cq ibcq;
	/* Serializes producers and kernel pollers; taken with irqsave. */
	spinlock_t lock;
	struct sroce_queue queue;
	bool user;
	/* Armed notification: 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP. */
	u8 notify;
	bool overflowed;
	/* Runs comp_handler outside any verb's call chain, serialized. */
	struct tasklet_struct comp_tasklet;
};

static inline struct sroce_cq *to_sroce_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CQ_UDATA_ARG);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int sroce_peek_cq(struct ib_cq *ibcq, int wc_cnt);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

int sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc, bool solicited);

#endif /* SROCE_CQ_H */
