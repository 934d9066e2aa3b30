// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD multicast (IBTA vol. 1 10.5; RoCEv2: the MGID is an IP multicast
 * address and the fabric's multicast is IP multicast).
 *
 * Every device has a hash table of groups, each with the list of QPs
 * attached to it.  The first attachment joins the IP group on the device's
 * netdev through the namespace's RoCEv2 UDP socket (so the kernel sends the
 * IGMP/MLD reports, programs the netdev's multicast filter and lets the
 * group's datagrams reach the socket); the last detachment leaves it.
 *
 * Contexts and locking: attach, detach and the cleanups run in process
 * context under sroce_mcast.lock, which is taken before RTNL and the
 * socket lock (the IP joins need both): none of them may be called with
 * RTNL held.  The receive softirq walks groups and attachments under RCU;
 * both are freed after a grace period.  The receive path reaches a QP
 * through its struct sroce_qp_ref, which sroce_destroy_qp() drains after
 * unlinking the QP's attachments.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/igmp.h>
#include <linux/jhash.h>
#include <linux/hash.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/ipv6_stubs.h>
#include <net/sock.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>

#include "sroce/sroce_hdr.h"
#include "sroce/sroce_opcode.h"
#include "sroce_dev.h"
#include "sroce_mcast.h"
#include "sroce_net.h"
#include "sroce_qp.h"
#include "sroce_resp.h"
#include "sroce_stats.h"

/* One multicast group of a device. */
struct sroce_mcg {
	struct hlist_node node;		/* in sroce_mcast.hash */
	union ib_gid mgid;
	int ifindex;			/* where the IP group was joined */
	unsigned int nqp;
	struct list_head qps;		/* struct sroce_mcast_att, RCU */
	struct rcu_head rcu;
};

/* One QP attached to a group. */
struct sroce_mcast_att {
	struct list_head node;
	struct sroce_qp *qp;		/* under mc->lock: which QP */
	struct sroce_qp_ref *ref;	/* under RCU: the receive path's way in */
	/*
	 * Attach calls it stands for: ib_core counts a use of the QP per
	 * (MGID, LID) attached, and RoCE has no LIDs, so one QP attached
	 * under several LIDs is one attachment that as many detaches undo.
	 */
	unsigned int count;
	struct rcu_head rcu;
};

static struct hlist_head *sroce_mcg_bucket(struct sroce_mcast *mc,
					   const union ib_gid *mgid)
{
	u32 h = jhash2((const u32 *)mgid->raw, sizeof(mgid->raw) / 4, 0);

	return &mc->hash[hash_32(h, SROCE_MCAST_HASH_BITS)];
}

/* Under mc->lock or RCU. */
static struct sroce_mcg *sroce_mcg_find(struct sroce_mcast *mc,
					const union ib_gid *mgid)
{
	struct sroce_mcg *g;

	hlist_for_each_entry_rcu(g, sroce_mcg_bucket(mc, mgid), node,
				 lockdep_is_held(&mc->lock))
		if (!memcmp(g->mgid.raw, mgid->raw, sizeof(mgid->raw)))
			return g;
	return NULL;
}

/*
 * Join or leave the IP group @mgid on @ifindex through the namespace's UDP
 * socket of the group's family.  Process context; takes RTNL.
 */
static int sroce_mcg_ip(struct sroce_dev *sdev, const union ib_gid *mgid,
			int ifindex, bool join)
{
	const struct in6_addr *a = (const struct in6_addr *)mgid->raw;
	struct sroce_net *snet = sdev->snet;
	struct socket *sock;
	int err;

	sock = ipv6_addr_v4mapped(a) ? snet->sock4 : snet->sock6;
	if (!sock)
		return -EAFNOSUPPORT;	/* IPv6 disabled in the namespace */

	rtnl_lock();
	lock_sock(sock->sk);
	if (ipv6_addr_v4mapped(a)) {
		struct ip_mreqn mr = {
			.imr_multiaddr.s_addr	= a->s6_addr32[3],
			.imr_ifindex		= ifindex,
		};

		err = join ? ip_mc_join_group(sock->sk, &mr) :
			     ip_mc_leave_group(sock->sk, &mr);
	} else {
		err = join ? ipv6_stub->ipv6_sock_mc_join(sock->sk, ifindex, a) :
			     ipv6_stub->ipv6_sock_mc_drop(sock->sk, ifindex, a);
	}
	release_sock(sock->sk);
	rtnl_unlock();
	return err;
}

/* Unlink and free @g once it has no QP; leaves the IP group.  Under lock. */
static void sroce_mcg_put(struct sroce_dev *sdev, struct sroce_mcg *g)
{
	struct sroce_mcast *mc = &sdev->mcast;
	int err;

	if (g->nqp)
		return;
	hlist_del_rcu(&g->node);
	mc->ngrp--;
	err = sroce_mcg_ip(sdev, &g->mgid, g->ifindex, false);
	if (err)
		sroce_dbg(sdev, "leaving %pI6: %d\n", g->mgid.raw, err);
	kfree_rcu(g, rcu);
}

/* Detach @att from @g.  Under lock. */
static void sroce_mcg_detach(struct sroce_dev *sdev, struct sroce_mcg *g,
			     struct sroce_mcast_att *att)
{
	list_del_rcu(&att->node);
	kfree_rcu(att, rcu);
	g->nqp--;
	sdev->mcast.nattach--;
	sroce_mcg_put(sdev, g);
}

static struct sroce_mcast_att *sroce_mcg_find_qp(struct sroce_mcg *g,
						 struct sroce_qp *qp)
{
	struct sroce_mcast_att *att;

	list_for_each_entry(att, &g->qps, node)
		if (att->qp == qp)
			return att;
	return NULL;
}

/* Is @gid an IP multicast address (IPv4-mapped or IPv6)? */
static bool sroce_mgid_valid(const union ib_gid *gid)
{
	return rdma_is_multicast_addr((struct in6_addr *)gid->raw);
}

/**
 * sroce_attach_mcast() - attach a UD QP to a multicast group (verb)
 * @ibqp: the QP, of type UD
 * @gid: MGID: an IPv4-mapped or IPv6 multicast address
 * @lid: unused on RoCE
 *
 * The device joins the IP group on the first attachment.  Attaching a QP
 * that is already attached (under another LID, which RoCE ignores, or the
 * same) succeeds and is counted: each attach takes one detach.
 *
 * Context: process context; must not be called with RTNL held.
 *
 * Return: 0, -EINVAL for a bad QP type or MGID, -ENOMEM when a limit of
 * the device attributes is reached, or the errno of the IP join.
 */
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sroce_dev(ibqp->device);
	struct sroce_qp *qp = to_sroce_qp(ibqp);
	struct sroce_mcast *mc = &sdev->mcast;
	struct sroce_mcast_att *att, *old;
	struct sroce_mcg *g, *newg = NULL;
	int err = 0;

	if (ibqp->qp_type != IB_QPT_UD || !sroce_mgid_valid(gid))
		return -EINVAL;

	att = kzalloc(sizeof(*att), GFP_KERNEL);
	if (!att)
		return -ENOMEM;
	att->qp = qp;
	att->ref = qp->rxref;
	att->count = 1;

	mutex_lock(&mc->lock);
	g = sroce_mcg_find(mc, gid);
	old = g ? sroce_mcg_find_qp(g, qp) : NULL;
	if (old) {
		if (old->count == UINT_MAX)
			err = -ENOMEM;
		else
			old->count++;
		goto out_free;
	}
	if (mc->nattach >= SROCE_MAX_TOT_MCAST_QP_ATTACH ||
	    (g && g->nqp >= SROCE_MAX_MCAST_QP_ATTACH) ||
	    (!g && mc->ngrp >= SROCE_MAX_MCAST_GRP)) {
		err = -ENOMEM;
		goto out_free;
	}
	if (!g) {
		newg = kzalloc(sizeof(*newg), GFP_KERNEL);
		if (!newg) {
			err = -ENOMEM;
			goto out_free;
		}
		newg->mgid = *gid;
		newg->ifindex = READ_ONCE(sdev->ndev->ifindex);
		INIT_LIST_HEAD(&newg->qps);
		err = sroce_mcg_ip(sdev, gid, newg->ifindex, true);
		if (err) {
			sroce_dbg(sdev, "joining %pI6: %d\n", gid->raw, err);
			kfree(newg);
			goto out_free;
		}
		g = newg;
		hlist_add_head_rcu(&g->node, sroce_mcg_bucket(mc, gid));
		mc->ngrp++;
	}
	list_add_tail_rcu(&att->node, &g->qps);
	g->nqp++;
	mc->nattach++;
	mutex_unlock(&mc->lock);
	return 0;

out_free:
	mutex_unlock(&mc->lock);
	kfree(att);
	return err;
}

/**
 * sroce_detach_mcast() - detach a QP from a multicast group (verb)
 * @ibqp: the QP
 * @gid: MGID it was attached to
 * @lid: unused on RoCE
 *
 * The device leaves the IP group when its last QP detaches; a QP attached
 * several times stays until as many detaches.
 *
 * Context: process context; must not be called with RTNL held.
 *
 * Return: 0, or -EINVAL if the QP is not attached to @gid.
 */
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sroce_dev(ibqp->device);
	struct sroce_qp *qp = to_sroce_qp(ibqp);
	struct sroce_mcast *mc = &sdev->mcast;
	struct sroce_mcast_att *att = NULL;
	struct sroce_mcg *g;

	mutex_lock(&mc->lock);
	g = sroce_mcg_find(mc, gid);
	if (g)
		att = sroce_mcg_find_qp(g, qp);
	if (att && !--att->count)
		sroce_mcg_detach(sdev, g, att);
	mutex_unlock(&mc->lock);
	return att ? 0 : -EINVAL;
}

/**
 * sroce_mcast_qp_cleanup() - detach a QP that is being destroyed
 * @qp: the QP, already out of the device's QP table
 *
 * Unlinks every attachment of @qp; receive softirqs still walking them
 * reach the QP only through its struct sroce_qp_ref, which the caller
 * drains.
 *
 * Context: process context; must not be called with RTNL held.
 */
void sroce_mcast_qp_cleanup(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_mcast *mc = &sdev->mcast;
	struct sroce_mcast_att *att;
	struct hlist_node *tmp;
	struct sroce_mcg *g;
	unsigned int i;

	if (qp->ibqp.qp_type != IB_QPT_UD)
		return;
	mutex_lock(&mc->lock);
	for (i = 0; i < ARRAY_SIZE(mc->hash) && mc->nattach; i++) {
		hlist_for_each_entry_safe(g, tmp, &mc->hash[i], node) {
			att = sroce_mcg_find_qp(g, qp);
			if (att)
				sroce_mcg_detach(sdev, g, att);
		}
	}
	mutex_unlock(&mc->lock);
}

/**
 * sroce_mcast_init() - set up a device's (empty) multicast table
 * @sdev: device being created
 */
void sroce_mcast_init(struct sroce_dev *sdev)
{
	struct sroce_mcast *mc = &sdev->mcast;

	mutex_init(&mc->lock);
	__hash_init(mc->hash, ARRAY_SIZE(mc->hash));
	mc->ngrp = 0;
	mc->nattach = 0;
}

/**
 * sroce_mcast_cleanup() - leave every group of a device that goes away
 * @sdev: device; still published (its UDP sockets are open)
 *
 * ib_core destroys every QP before the device goes, so the table is
 * normally empty here; anything left is detached and its IP group left.
 *
 * Context: process context; must not be called with RTNL held.
 */
void sroce_mcast_cleanup(struct sroce_dev *sdev)
{
	struct sroce_mcast *mc = &sdev->mcast;
	struct sroce_mcast_att *att, *an;
	struct hlist_node *tmp;
	struct sroce_mcg *g;
	unsigned int i;

	mutex_lock(&mc->lock);
	WARN_ON_ONCE(mc->ngrp);
	for (i = 0; i < ARRAY_SIZE(mc->hash); i++)
		hlist_for_each_entry_safe(g, tmp, &mc->hash[i], node)
			list_for_each_entry_safe(att, an, &g->qps, node)
				sroce_mcg_detach(sdev, g, att);
	mutex_unlock(&mc->lock);
	mutex_destroy(&mc->lock);
}

/**
 * sroce_mcast_rx() - deliver a packet sent to the multicast QPN
 * @sdev: receiving device
 * @skb: the packet (validated, ICRC checked); not modified
 * @pkt: its decoded headers
 * @payload_off: offset of the payload in @skb
 *
 * IBTA 10.5.2.2: the packet goes to every QP attached to the group its
 * destination GID (here: destination IP address) names; each QP gets its
 * own copy, with its own Q_Key check and receive WQE.
 *
 * Context: receive softirq, rcu_read_lock() held by the caller.
 */
void sroce_mcast_rx(struct sroce_dev *sdev, struct sk_buff *skb,
		    const struct sroce_pkt *pkt, unsigned int payload_off)
{
	struct sroce_rxp rx = { .skb = skb, .off = payload_off };
	struct sroce_mcast_att *att;
	struct sroce_mcg *g;
	union ib_gid mgid;
	struct sroce_qp *qp;

	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)mgid.raw);
	else
		memcpy(mgid.raw, &ipv6_hdr(skb)->daddr, sizeof(mgid.raw));

	/* Only UD has multicast (IBTA 10.5.1). */
	if (pkt->info->qpt != SROCE_QPT_UD) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_BAD_OPCODE, 1);
		return;
	}
	g = sroce_mgid_valid(&mgid) ? sroce_mcg_find(&sdev->mcast, &mgid) :
				      NULL;
	if (!g) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_NO_QP, 1);
		return;
	}
	list_for_each_entry_rcu(att, &g->qps, node) {
		qp = sroce_qp_rx_get(att->ref);
		if (!qp)
			continue;	/* being destroyed */
		sroce_resp_rx(qp, &rx, pkt);
		sroce_qp_rx_put(qp);
	}
}
