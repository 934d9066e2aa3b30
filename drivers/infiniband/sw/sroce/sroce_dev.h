/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sroce device: one ib_device with one RoCEv2 port bound to one
 * Ethernet netdev.
 *
 * Lifetime: ib_core owns the memory (ib_alloc_device/ib_dealloc_device).
 * A device becomes visible to the data path (its netns context's RCU list)
 * once its tables are set up, just before ib_register_device(), and
 * leaves it in sroce_dealloc_driver(), which ib_core calls exactly once on
 * the way out (a failed registration's included).
 */
#ifndef SROCE_DEV_H
#define SROCE_DEV_H

#include <linux/netdevice.h>
#include <linux/idr.h>
#include <linux/percpu.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "sroce_mcast.h"
#include "sroce_stats.h"

struct sroce_net;

/* Objects counted against the limits query_device advertises. */
enum sroce_res {
	SROCE_RES_PD,
	SROCE_RES_CQ,
	SROCE_RES_QP,
	SROCE_RES_SRQ,
	SROCE_RES_MR,
	SROCE_RES_MW,
	SROCE_RES_AH,
	SROCE_RES_NUM,
};

struct sroce_dev {
	struct ib_device ibdev;
	/*
	 * Bound netdev, held by us (not ib_device_set_netdev(): ib_core's
	 * netdev hash is keyed by driver id, which rdma_rxe shares, and
	 * rdma_rxe's netdev notifier would take our device for its own).
	 */
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	/* NETDEV_UNREGISTER seen: get_netdev stops handing the netdev out. */
	bool ndev_gone;
	/* Per-netns context owning the UDP sockets; we hold one user count. */
	struct sroce_net *snet;
	/* Entry in snet->devs, walked under RCU by the receive path. */
	struct list_head net_node;
	/* Last port state reported through an async event, under state_lock. */
	spinlock_t state_lock;
	enum ib_port_state port_state;
	struct sroce_stats __percpu *stats;
	/*
	 * What query_device reports.  Kept apart from ibdev.attrs, which
	 * ib_core clears and refills from query_device at registration.
	 */
	struct ib_device_attr attr;
	/* Memory objects by key index (sroce_mr.c); RCU readers. */
	struct xarray mr_xa;
	u32 mr_next;
	/* Objects taken out of mr_xa so far (sroce_mem_find()). */
	atomic64_t mr_gone;
	/* Address vectors by AH number (sroce_av.c); RCU readers. */
	struct xarray ah_xa;
	u32 ah_next;
	/* QPs by number (sroce_qp.c); RCU readers on the receive path. */
	struct xarray qp_xa;
	u32 qp_next;
	struct ida srq_ida;
	/* Multicast groups and their QPs (sroce_mcast.c). */
	struct sroce_mcast mcast;
	/* Congestion control settings (sroce_cc.c): RCU readers. */
	struct sroce_cc_cfg __rcu *cc;
	struct mutex cc_mutex;		/* serializes settings writers */
	atomic_t cc_gen;		/* bumped by every settings change */
	/* Live objects per enum sroce_res (sroce_res_get()). */
	atomic_t res[SROCE_RES_NUM];
};

static inline struct sroce_dev *to_sroce_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

#define sroce_dbg(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, fmt, ##__VA_ARGS__)
#define sroce_info(sdev, fmt, ...) \
	ibdev_info(&(sdev)->ibdev, fmt, ##__VA_ARGS__)
#define sroce_err_rl(sdev, fmt, ...) \
	ibdev_err_ratelimited(&(sdev)->ibdev, fmt, ##__VA_ARGS__)

extern struct workqueue_struct *sroce_wq;

int sroce_res_get(struct sroce_dev *sdev, enum sroce_res r);
void sroce_res_put(struct sroce_dev *sdev, enum sroce_res r);
void sroce_mem_drain(void);

enum ib_port_state sroce_port_state(struct sroce_dev *sdev);
void sroce_port_update(struct sroce_dev *sdev);

#endif /* SROCE_DEV_H */
