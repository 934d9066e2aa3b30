/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Congestion control (Annex A17.9): ECN-capable egress, the notification
 * point (CNPs for CE-marked packets) and the reaction point (a per-QP rate
 * from a pluggable algorithm, enforced by pacing the requester).
 */
#ifndef SROCE_CC_KERN_H
#define SROCE_CC_KERN_H

#include <linux/hrtimer.h>
#include <linux/spinlock.h>
#include <linux/skbuff.h>
#include "sroce/sroce_cc.h"

struct sroce_dev;
struct sroce_qp;
struct sroce_cc_cfg;

/* Per-QP congestion state. */
struct sroce_cc_qp {
	/* Guards the rest: the rx softirq and the requester both update it. */
	spinlock_t lock;
	struct sroce_dcqcn st;
	/* Due times of the algorithm's timers, run lazily (see sroce_cc.c). */
	u64 next_alpha_ns;
	u64 next_rate_ns;
	/* Earliest time of the next paced packet; time of the last one. */
	u64 next_tx_ns;
	u64 last_tx_ns;
	/* Notification point: time of the last CNP sent for this QP. */
	u64 np_last_cnp;
	/* Wakes a paced requester (hard irq: only kicks the work item). */
	struct hrtimer pace_timer;
	/* Settings generation the state was set up for (0: not yet). */
	u32 gen;
};

/*
 * struct sroce_cc_ops - a reaction point algorithm
 * @name: what the port's cc/algo file shows and accepts
 * @qp_init: reset @c to an unthrottled QP
 * @advance: run the algorithm's timers due by @now
 * @on_cnp: a CNP for the QP arrived at @now
 * @sent: @bytes left the QP at @now
 *
 * All under c->lock; return true when the rate changed.  The enforced
 * rate is c->st.rc, and only while c->st.limited.
 */
struct sroce_cc_ops {
	const char *name;
	void (*qp_init)(struct sroce_cc_qp *c, const struct sroce_cc_cfg *cfg,
			u64 now);
	void (*advance)(struct sroce_cc_qp *c, const struct sroce_cc_cfg *cfg,
			u64 now);
	bool (*on_cnp)(struct sroce_cc_qp *c, const struct sroce_cc_cfg *cfg,
		       u64 now);
	void (*sent)(struct sroce_cc_qp *c, const struct sroce_cc_cfg *cfg,
		     u32 bytes, u64 now);
};

/* Per-device settings; replaced as a whole, read under RCU. */
struct sroce_cc_cfg {
	struct rcu_head rcu;
	const struct sroce_cc_ops *ops;
	bool enable;
	u8 dscp;		/* data packets */
	u8 cnp_dscp;		/* CNPs (np_cnp_dscp) */
	struct sroce_dcqcn_params p;
};

int sroce_cc_dev_init(struct sroce_dev *sdev);
void sroce_cc_dev_fini(struct sroce_dev *sdev);
extern const struct attribute_group *sroce_cc_port_groups[];

u8 sroce_cc_tclass(struct sroce_dev *sdev, u8 tclass);

void sroce_cc_qp_init(struct sroce_qp *qp);
void sroce_cc_qp_fini(struct sroce_qp *qp);
bool sroce_cc_tx_wait(struct sroce_qp *qp);
void sroce_cc_tx_done(struct sroce_qp *qp, u32 bytes);
void sroce_cc_rx(struct sroce_dev *sdev, struct sroce_qp *qp,
		 struct sk_buff *skb, bool cnp);
bool sroce_cc_rx_ce(const struct sk_buff *skb);
int sroce_cc_fill_res_qp(struct sk_buff *msg, struct sroce_qp *qp);

#endif /* SROCE_CC_KERN_H */
