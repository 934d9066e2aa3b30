/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared receive queues (basic SRQs; no XRC). */
#ifndef SROCE_SRQ_H
#define SROCE_SRQ_H

#include <rdma/ib_verbs.h>

#include "sroce_qp.h"

struct sroce_srq {
	struct ib_srq ibsrq;
	struct sroce_wq rq;
	/* Armed limit (IBTA 10.2.9.2): 0 = disarmed.  Under rq.lock. */
	u32 limit;
	bool user;
	int srq_num;
};

static inline struct sroce_srq *to_sroce_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);

#endif /* SROCE_SRQ_H */
