// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hw counters: per-CPU counters summed on read.  Context: read from
 * process context by ib_core's sysfs/netlink code; incremented from any
 * context with this_cpu_add().
 */
#include "sroce_dev.h"
#include "sroce_stats.h"

static const struct rdma_stat_desc sroce_counter_descs[SROCE_NUM_COUNTERS] = {
	[SROCE_CNT_RX_PACKETS].name		= "rx_packets",
	[SROCE_CNT_RX_BYTES].name		= "rx_bytes",
	[SROCE_CNT_RX_DROP_SHORT].name		= "rx_drop_short",
	[SROCE_CNT_RX_DROP_BAD_TVER].name	= "rx_drop_bad_tver",
	[SROCE_CNT_RX_DROP_BAD_PAD].name	= "rx_drop_bad_pad",
	[SROCE_CNT_RX_DROP_BAD_OPCODE].name	= "rx_drop_bad_opcode",
	[SROCE_CNT_RX_DROP_BAD_LEN].name	= "rx_drop_bad_len",
	[SROCE_CNT_RX_DROP_BAD_IP].name		= "rx_drop_bad_ip",
	[SROCE_CNT_RX_DROP_BAD_ICRC].name	= "rx_drop_bad_icrc",
	[SROCE_CNT_RX_DROP_NO_QP].name		= "rx_drop_no_qp",
	[SROCE_CNT_RX_DROP_UNSUPPORTED].name	= "rx_drop_unsupported",
	[SROCE_CNT_RX_DROP_QP_STATE].name	= "rx_drop_qp_state",
	[SROCE_CNT_RX_DROP_QKEY].name		= "rx_drop_qkey",
	[SROCE_CNT_RX_DROP_NO_RECV].name	= "rx_drop_no_recv",
	[SROCE_CNT_RX_DELIVERED].name		= "rx_delivered",
	[SROCE_CNT_RX_DUP_REQUEST].name		= "rx_dup_request",
	[SROCE_CNT_RX_OUT_OF_SEQ].name		= "rx_out_of_seq",
	[SROCE_CNT_RX_DROP_UC_MSG].name		= "rx_drop_uc_msg",
	[SROCE_CNT_RX_DROP_STALE_RESP].name	= "rx_drop_stale_resp",
	[SROCE_CNT_RX_BAD_REQUEST].name		= "rx_bad_request",
	[SROCE_CNT_RX_ACCESS_ERR].name		= "rx_access_err",
	[SROCE_CNT_TX_RNR_NAK].name		= "tx_rnr_nak",
	[SROCE_CNT_TX_SEQ_NAK].name		= "tx_seq_nak",
	[SROCE_CNT_RX_RNR_NAK].name		= "rx_rnr_nak",
	[SROCE_CNT_RX_NAK].name			= "rx_nak",
	[SROCE_CNT_RETRY_TIMEOUT].name		= "retry_timeout",
	[SROCE_CNT_RETRY_SEQ].name		= "retry_seq",
	[SROCE_CNT_RETRY_EXCEEDED].name		= "retry_exceeded",
	[SROCE_CNT_TX_PACKETS].name		= "tx_packets",
	[SROCE_CNT_TX_BYTES].name		= "tx_bytes",
	[SROCE_CNT_TX_ERRORS].name		= "tx_errors",
	[SROCE_CNT_TX_RETRANSMITS].name		= "tx_retransmits",
	[SROCE_CNT_NP_ECN_MARKED].name		= "np_ecn_marked_roce_packets",
	[SROCE_CNT_NP_CNP_SENT].name		= "np_cnp_sent",
	[SROCE_CNT_RP_CNP_HANDLED].name		= "rp_cnp_handled",
	[SROCE_CNT_RP_CNP_IGNORED].name		= "rp_cnp_ignored",
	[SROCE_CNT_DOORBELL_INLINE].name	= "doorbell_inline",
	[SROCE_CNT_DOORBELL_DEFERRED].name	= "doorbell_deferred",
	[SROCE_CNT_TX_QUEUE_FULL].name		= "tx_queue_full",
	[SROCE_CNT_TX_FRAMES].name		= "tx_frames",
	[SROCE_CNT_RX_DROP_BAD_ADDR].name	= "rx_drop_bad_addr",
	[SROCE_CNT_RX_DROP_BAD_PKEY].name	= "rx_drop_bad_pkey",
	[SROCE_CNT_COMP_RESYNC].name		= "comp_resync",
};

struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port_num)
{
	return rdma_alloc_hw_stats_struct(sroce_counter_descs,
					  ARRAY_SIZE(sroce_counter_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

u64 sroce_stat_read(struct sroce_dev *sdev, enum sroce_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(sdev->stats, cpu)->cnt[c];
	return sum;
}

int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port_num, int index)
{
	struct sroce_dev *sdev = to_sroce_dev(ibdev);
	int i;

	for (i = 0; i < SROCE_NUM_COUNTERS; i++)
		stats->value[i] = sroce_stat_read(sdev, i);
	return SROCE_NUM_COUNTERS;
}
