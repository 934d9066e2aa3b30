/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Requester and packet transmission. */
#ifndef SROCE_TX_H
#define SROCE_TX_H

#include <linux/types.h>

struct sroce_dev;
struct sroce_av;
struct sroce_qp;

int sroce_xmit(struct sroce_dev *sdev, const struct sroce_av *av, u16 sport,
	       const u8 *ib, u32 ib_len);
void sroce_req_run(struct sroce_qp *qp);

#endif /* SROCE_TX_H */
