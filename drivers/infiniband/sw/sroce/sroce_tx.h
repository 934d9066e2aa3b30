/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* RoCEv2 packet transmission. */
#ifndef SROCE_TX_H
#define SROCE_TX_H

#include <linux/types.h>

#include "sroce/sroce_hdr.h"

struct sk_buff;
struct sock;
struct sroce_dev;
struct sroce_av;
struct sroce_qp;

/*
 * RC payloads from this size on go out as fragments of the MR's pages
 * (sroce_mem_to_skb()); below it a copy costs less than the references.
 */
#define SROCE_ZCOPY_MIN		1024

/*
 * Largest frame (sroce_tx_qp()), ICRC room included: the largest
 * header set and 64-byte payloads with room to spare, small enough to
 * live on the requester's stack.
 */
#define SROCE_FRAME_MAX		128

/*
 * A small packet from a QP to a QP of its own device: its headers as
 * fields (sroce_pkt_finish()), which the receiver takes as they are, and
 * its payload in @buf after room for the headers, which are written
 * there only if it takes the IP path after all.
 */
struct sroce_frame {
	struct sroce_pkt pkt;
	u32 len;		/* headers, payload and pad, in @buf */
	u8 buf[SROCE_FRAME_MAX] __aligned(8);	/* and room for the ICRC */
};

bool sroce_tx_zcopy_ok(const struct sroce_dev *sdev, bool local);
bool sroce_av_to_self(const struct sroce_av *av);
bool sroce_tx_self(const struct sroce_qp *qp);
int sroce_tx_qp(struct sroce_qp *qp, const struct sroce_av *av,
		struct sk_buff *skb, struct sroce_frame *frame, bool *local);
struct sk_buff *sroce_tx_alloc(struct sroce_dev *sdev, u32 ib_len);
struct sk_buff *sroce_tx_alloc_held(struct sroce_dev *sdev, u32 ib_len,
				    unsigned int slot);
void sroce_tx_exit(void);
int sroce_tx_paged_trailer(struct sk_buff *skb);
int sroce_tx_send_local(struct sroce_dev *sdev, const struct sroce_av *av,
			u16 sport, struct sk_buff *skb, bool *local);
int sroce_tx_send_tc(struct sroce_dev *sdev, const struct sroce_av *av,
		     u16 sport, struct sk_buff *skb, u8 tclass);
bool sroce_tx_throttle(struct sroce_qp *qp);
void sroce_tx_unthrottle(struct sroce_qp *qp);
void sroce_tx_write_space(struct sock *sk);

#endif /* SROCE_TX_H */
