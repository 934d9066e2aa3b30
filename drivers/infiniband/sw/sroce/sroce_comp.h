/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Completer (IBTA 9.7, requester side: ACKs, responses, retries). */
#ifndef SROCE_COMP_H
#define SROCE_COMP_H

#include <linux/types.h>

struct sroce_pkt;
struct sroce_qp;
struct sroce_rxp;
struct timer_list;

void sroce_comp_rx(struct sroce_qp *qp, const struct sroce_rxp *rx,
		   const struct sroce_pkt *pkt);
void sroce_comp_advance(struct sroce_qp *qp);
void sroce_comp_arm(struct sroce_qp *qp);
void sroce_comp_rewind(struct sroce_qp *qp, u32 psn);
void sroce_comp_retry_timer(struct timer_list *t);
void sroce_comp_rnr_timer(struct timer_list *t);

#endif /* SROCE_COMP_H */
