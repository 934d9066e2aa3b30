/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Requester (IBTA 9.7, requester side). */
#ifndef SROCE_REQ_H
#define SROCE_REQ_H

#include <linux/types.h>

struct sroce_qp;
struct sroce_swqe;

bool sroce_req_run(struct sroce_qp *qp);
void sroce_req_kick(struct sroce_qp *qp);
void sroce_req_doorbell(struct sroce_qp *qp);
void sroce_req_heard(struct sroce_qp *qp);
bool sroce_req_has_work(struct sroce_qp *qp);
u16 sroce_qp_sport(const struct sroce_qp *qp);
u32 sroce_wqe_npkts(const struct sroce_qp *qp, const struct sroce_swqe *w);
bool sroce_wqe_is_local(const struct sroce_swqe *w);
bool sroce_wqe_is_atomic(const struct sroce_swqe *w);
bool sroce_wqe_has_resp(const struct sroce_swqe *w);

#endif /* SROCE_REQ_H */
