/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-device counters, exported through ib_core's hw counters
 * (`rdma statistic show link sroce0/1`).  Per-CPU so the data path never
 * shares a cache line between CPUs.
 */
#ifndef SROCE_STATS_H
#define SROCE_STATS_H

#include <linux/percpu.h>
#include <rdma/ib_verbs.h>

enum sroce_counter {
	SROCE_CNT_RX_PACKETS,
	SROCE_CNT_RX_BYTES,
	SROCE_CNT_RX_DROP_SHORT,	/* shorter than BTH + ICRC */
	SROCE_CNT_RX_DROP_BAD_TVER,	/* BTH transport version != 0 */
	SROCE_CNT_RX_DROP_BAD_PAD,	/* pad count inconsistent with payload */
	SROCE_CNT_RX_DROP_BAD_OPCODE,	/* opcode sroce does not implement */
	SROCE_CNT_RX_DROP_BAD_LEN,	/* payload length wrong for the opcode */
	SROCE_CNT_RX_DROP_BAD_IP,	/* IP header unusable (e.g. IPv6 ext hdrs) */
	SROCE_CNT_RX_DROP_BAD_ICRC,	/* ICRC mismatch (corruption) */
	SROCE_CNT_RX_DROP_NO_QP,	/* no QP with the BTH DestQP */
	SROCE_CNT_RX_DROP_UNSUPPORTED,	/* valid, but no handler for it yet */
	SROCE_CNT_RX_DROP_QP_STATE,	/* QP not in a state that receives */
	SROCE_CNT_RX_DROP_QKEY,		/* UD Q_Key violation */
	SROCE_CNT_RX_DROP_NO_RECV,	/* UD: no receive WQE posted */
	SROCE_CNT_RX_DELIVERED,		/* messages completed to a receive WQE */
	SROCE_CNT_RX_DUP_REQUEST,	/* RC duplicate request (re-acked) */
	SROCE_CNT_RX_OUT_OF_SEQ,	/* request PSN ahead of expected */
	SROCE_CNT_RX_DROP_UC_MSG,	/* UC packet of a message already lost */
	SROCE_CNT_RX_DROP_STALE_RESP,	/* response/ACK for nothing outstanding */
	SROCE_CNT_RX_BAD_REQUEST,	/* NAK: invalid request */
	SROCE_CNT_RX_ACCESS_ERR,	/* NAK: remote access error */
	SROCE_CNT_TX_RNR_NAK,		/* RNR NAKs sent (no receive posted) */
	SROCE_CNT_TX_SEQ_NAK,		/* PSN sequence error NAKs sent */
	SROCE_CNT_RX_RNR_NAK,		/* RNR NAKs received */
	SROCE_CNT_RX_NAK,		/* other NAKs received */
	SROCE_CNT_RETRY_TIMEOUT,	/* retransmissions after a timeout */
	SROCE_CNT_RETRY_SEQ,		/* retransmissions after a NAK/gap */
	SROCE_CNT_RETRY_EXCEEDED,	/* WQEs failed after all retries */
	SROCE_CNT_TX_PACKETS,
	SROCE_CNT_TX_BYTES,
	SROCE_CNT_TX_ERRORS,		/* packets the IP layer refused */
	SROCE_CNT_TX_RETRANSMITS,	/* RC request packets sent again */
	SROCE_CNT_NP_ECN_MARKED,	/* CE-marked packets received for a QP */
	SROCE_CNT_NP_CNP_SENT,		/* CNPs sent (notification point) */
	SROCE_CNT_RP_CNP_HANDLED,	/* CNPs that fed a QP's rate control */
	SROCE_CNT_RP_CNP_IGNORED,	/* CNPs for a QP without rate control */
	SROCE_CNT_DOORBELL_INLINE,	/* user doorbells that ran the requester */
	SROCE_CNT_DOORBELL_DEFERRED,	/* ... that left it to the QP's worker */
	SROCE_CNT_TX_QUEUE_FULL,	/* requester runs stopped for full queues */
	SROCE_CNT_TX_FRAMES,		/* packets handed over without an skb */
	SROCE_CNT_RX_DROP_BAD_ADDR,	/* RC/UC: not from the QP's peer */
	SROCE_CNT_RX_DROP_BAD_PKEY,	/* BTH P_Key not the port's partition */
	SROCE_CNT_COMP_RESYNC,		/* completer found nothing awaited */
	SROCE_NUM_COUNTERS,
};

struct sroce_stats {
	u64 cnt[SROCE_NUM_COUNTERS];
};

struct sroce_dev;

static inline void sroce_count(struct sroce_stats __percpu *stats,
			       enum sroce_counter c, u64 n)
{
	this_cpu_add(stats->cnt[c], n);
}

struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port_num);
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port_num, int index);
u64 sroce_stat_read(struct sroce_dev *sdev, enum sroce_counter c);

#endif /* SROCE_STATS_H */
