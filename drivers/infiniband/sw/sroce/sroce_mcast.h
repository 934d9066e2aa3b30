/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * UD multicast (IBTA vol. 1 10.5, Annex A17.4.x for RoCEv2): the per-device
 * table of multicast groups and the QPs attached to them.
 *
 * A RoCEv2 multicast GID is an IP multicast address: IPv4-mapped
 * (::ffff:a.b.c.d with a.b.c.d in 224.0.0.0/4) or IPv6 (ff00::/8).  The
 * first QP attached to a group makes the device's netdev join the IP group
 * (IGMP/MLD, through the namespace's RoCEv2 UDP socket); the last one to
 * leave makes it leave.
 */
#ifndef SROCE_MCAST_H
#define SROCE_MCAST_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>

/* The multicast QPN of IBTA 10.5.1 (BTH DestQP of every multicast packet). */
#define SROCE_MCAST_QPN			0xffffff

#define SROCE_MAX_MCAST_GRP		256
#define SROCE_MAX_MCAST_QP_ATTACH	64
#define SROCE_MAX_TOT_MCAST_QP_ATTACH	4096

#define SROCE_MCAST_HASH_BITS		5

struct ib_qp;
struct sk_buff;
struct sroce_dev;
struct sroce_pkt;
struct sroce_qp;
union ib_gid;

/**
 * struct sroce_mcast - a device's multicast groups
 * @lock: serializes attach, detach and cleanup (and the IP joins/leaves)
 * @hash: groups (struct sroce_mcg) by MGID; read under RCU on receive
 * @ngrp: groups in @hash
 * @nattach: QP attachments over all groups
 */
struct sroce_mcast {
	struct mutex lock;	/* attach/detach/cleanup, IP joins */
	struct hlist_head hash[1 << SROCE_MCAST_HASH_BITS];
	unsigned int ngrp;
	unsigned int nattach;
};

void sroce_mcast_init(struct sroce_dev *sdev);
void sroce_mcast_cleanup(struct sroce_dev *sdev);
void sroce_mcast_qp_cleanup(struct sroce_qp *qp);
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void sroce_mcast_rx(struct sroce_dev *sdev, struct sk_buff *skb,
		    const struct sroce_pkt *pkt, unsigned int payload_off);

#endif /* SROCE_MCAST_H */
