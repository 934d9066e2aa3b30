/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Responder (IBTA 9.7 responder side). */
#ifndef SROCE_RESP_H
#define SROCE_RESP_H

struct sk_buff;
struct sroce_pkt;
struct sroce_qp;
struct work_struct;

void sroce_resp_rx(struct sroce_qp *qp, struct sk_buff *skb,
		   const struct sroce_pkt *pkt, unsigned int payload_off);

void sroce_resp_read_work(struct work_struct *work);

#endif /* SROCE_RESP_H */
