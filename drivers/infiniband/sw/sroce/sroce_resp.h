/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Responder (IBTA 9.7 responder side). */
#ifndef SROCE_RESP_H
#define SROCE_RESP_H

struct sroce_pkt;
struct sroce_qp;
struct sroce_rxp;
struct work_struct;

void sroce_resp_rx(struct sroce_qp *qp, const struct sroce_rxp *rx,
		   const struct sroce_pkt *pkt);

void sroce_resp_read_work(struct work_struct *work);

#endif /* SROCE_RESP_H */
