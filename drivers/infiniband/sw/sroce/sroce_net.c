// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Network side: per-netns UDP tunnel sockets and the ingress hook.
 *
 * Contexts: sroce_net_get/put and (un)publish run in process context
 * (newlink, ib_core's unregistration).  sroce_udp_encap_recv() runs in the
 * UDP receive softirq with RCU held and must never sleep.
 *
 * Trust model: everything in a received skb is peer-controlled.  Headers
 * are copied out with skb_header_pointer() and checked by the portable core
 * before any field is used.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>

#include "sroce/sroce_hdr.h"
#include "sroce/sroce_icrc.h"
#include "sroce/sroce_wire.h"
#include "sroce_cc.h"
#include "sroce_compat.h"
#include "sroce_dev.h"
#include "sroce_mcast.h"
#include "sroce_net.h"
#include "sroce_qp.h"
#include "sroce_resp.h"
#include "sroce_stats.h"
#include "sroce_tx.h"

static unsigned int sroce_net_id __read_mostly;

static struct sroce_dev *sroce_net_find_dev(struct sroce_net *snet,
					    const struct net_device *ndev)
{
	struct sroce_dev *sdev;

	list_for_each_entry_rcu(sdev, &snet->devs, net_node)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/* Drop reason per parser verdict; SROCE_OK never reaches the table. */
/*
 * Traffic between two QPs of one namespace (one device, or two devices on
 * one host) is routed through the loopback device, so it arrives with
 * skb->dev = lo: find the device that owns the destination address.
 */
static struct sroce_dev *sroce_net_find_local(struct sroce_net *snet,
					      struct sk_buff *skb)
{
	struct sroce_dev *sdev;
	struct net_device *ndev;

	if (ip_hdr(skb)->version == 4) {
		ndev = __ip_dev_find(snet->net, ip_hdr(skb)->daddr, false);
		return ndev ? sroce_net_find_dev(snet, ndev) : NULL;
	}
	list_for_each_entry_rcu(sdev, &snet->devs, net_node)
		if (ipv6_chk_addr(snet->net, &ipv6_hdr(skb)->daddr, sdev->ndev,
				  0))
			return sdev;
	return NULL;
}

/*
 * A locally delivered packet to its source address: the sending device
 * owns it (the source is one of its GIDs), no address lookup needed.
 */
static bool sroce_net_to_self(const struct sk_buff *skb)
{
	if (ip_hdr(skb)->version == 4)
		return ip_hdr(skb)->daddr == ip_hdr(skb)->saddr;
	return ipv6_addr_equal(&ipv6_hdr(skb)->daddr, &ipv6_hdr(skb)->saddr);
}

static const enum sroce_counter sroce_verdict_counter[SROCE_VERDICT_MAX] = {
	[SROCE_ERR_SHORT]	= SROCE_CNT_RX_DROP_SHORT,
	[SROCE_ERR_TVER]	= SROCE_CNT_RX_DROP_BAD_TVER,
	[SROCE_ERR_PAD]		= SROCE_CNT_RX_DROP_BAD_PAD,
	[SROCE_ERR_OPCODE]	= SROCE_CNT_RX_DROP_BAD_OPCODE,
	[SROCE_ERR_LEN]		= SROCE_CNT_RX_DROP_BAD_LEN,
	[SROCE_ERR_MTU]		= SROCE_CNT_RX_DROP_BAD_LEN,
	[SROCE_ERR_SPACE]	= SROCE_CNT_RX_DROP_BAD_LEN,
	[SROCE_ERR_IP]		= SROCE_CNT_RX_DROP_BAD_IP,
	[SROCE_ERR_ICRC]	= SROCE_CNT_RX_DROP_BAD_ICRC,
};

/*
 * Headers are copied out of the skb before parsing.  The largest opcode
 * header set is 40 bytes (BTH + AtomicETH); CNPs have 28.
 */
#define SROCE_RX_HDR_COPY	64

/*
 * sroce_rx_icrc() - verify the ICRC (Annex A17.9.1) of a parsed packet
 *
 * @udp holds the UDP header followed by the packet's IB headers.  The
 * payload and pad are read in place with skb_seq_read(), without copying.
 */
static enum sroce_verdict sroce_rx_icrc(struct sk_buff *skb, const u8 *udp,
					const struct sroce_pkt *pkt,
					unsigned int off, unsigned int len)
{
	unsigned int ip_len = skb_transport_offset(skb) -
			      skb_network_offset(skb);
	unsigned int from = off + pkt->hdr_len;
	unsigned int to = off + len - SROCE_ICRC_BYTES;
	struct sroce_icrc_ctx ctx;
	struct skb_seq_state st;
	enum sroce_verdict v;
	u8 trailer[SROCE_ICRC_BYTES];
	const u8 *data, *t;
	unsigned int consumed = 0, n;

	v = sroce_icrc_start(&ctx, sroce_crc32, skb_network_header(skb), ip_len,
			     udp, sizeof(struct udphdr) + pkt->hdr_len);
	if (v != SROCE_OK)
		return v;

	if (to > from) {
		skb_prepare_seq_read(skb, from, to, &st);
		/* Blocks are not clamped to the upper offset: clamp them. */
		while (consumed < to - from &&
		       (n = skb_seq_read(consumed, &data, &st)) != 0) {
			n = min(n, to - from - consumed);
			sroce_icrc_update(&ctx, data, n);
			consumed += n;
		}
		skb_abort_seq_read(&st);
	}

	t = skb_header_pointer(skb, to, SROCE_ICRC_BYTES, trailer);
	if (!t || sroce_icrc_get(t) != sroce_icrc_final(&ctx))
		return SROCE_ERR_ICRC;
	return SROCE_OK;
}

/*
 * May connected QP @qp take @rx?  IBTA 9.6 (transport header checks): a
 * connected QP takes packets from its peer only, which RoCEv2 names by IP address
 * (Annex A17.4: the GIDs are the addresses): the source must be the
 * path's destination, the destination its source.  Without this, a third
 * host that guesses a QP number and PSN could write into the QP's memory
 * or throttle it with CNPs.  A frame comes from a QP of this very device
 * to its own address, which must then be the QP's path too.
 */
static bool sroce_rx_from_peer(const struct sroce_qp *qp,
			       const struct sroce_rxp *rx)
{
	const struct sroce_av *av = &qp->av;
	const struct sk_buff *skb = rx->skb;

	if (!skb)
		return sroce_av_to_self(av);
	if (ip_hdr(skb)->version == 4)
		return av->network_type == RDMA_NETWORK_IPV4 &&
		       ip_hdr(skb)->saddr == av->daddr.v4.s_addr &&
		       ip_hdr(skb)->daddr == av->saddr.v4.s_addr;
	return av->network_type == RDMA_NETWORK_IPV6 &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->saddr, &av->daddr.v6) &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->daddr, &av->saddr.v6);
}

/*
 * The checks that need the destination QP but come before congestion
 * control and the transport: its state (a connected QP has no path
 * before RTR) and its peer.  Return: the counter of the drop, or
 * SROCE_NUM_COUNTERS to take the packet.
 */
static enum sroce_counter sroce_rx_qp_check(const struct sroce_qp *qp,
					    const struct sroce_rxp *rx)
{
	enum ib_qp_type t = qp->ibqp.qp_type;

	if (t != IB_QPT_RC && t != IB_QPT_UC)
		return SROCE_NUM_COUNTERS;	/* datagrams: anyone's */
	if (READ_ONCE(qp->state) < IB_QPS_RTR)
		return SROCE_CNT_RX_DROP_QP_STATE;
	if (!sroce_rx_from_peer(qp, rx))
		return SROCE_CNT_RX_DROP_BAD_ADDR;
	return SROCE_NUM_COUNTERS;
}

/*
 * A parsed packet for @sdev, skb or frame: to its QP (or multicast group),
 * through congestion control first.
 */
static void sroce_rx_pkt(struct sroce_dev *sdev, const struct sroce_rxp *rx,
			 const struct sroce_pkt *pkt)
{
	enum sroce_counter drop;
	struct sroce_qp *qp;

	/* The one partition of a RoCE port (IBTA 9.6, 10.9.3). */
	if (!sroce_pkey_match(SROCE_PKEY_DEFAULT, pkt->bth.pkey)) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_BAD_PKEY, 1);
		return;
	}
	if (pkt->bth.dqpn == SROCE_MCAST_QPN) {
		if (rx->skb)
			sroce_mcast_rx(sdev, rx->skb, pkt, rx->off);
		else
			sroce_count(sdev->stats, SROCE_CNT_RX_DROP_BAD_OPCODE,
				    1);
		return;
	}
	/* Caller holds rcu_read_lock(), as sroce_qp_rx_get() needs. */
	qp = sroce_qp_rx_get(xa_load(&sdev->qp_xa, pkt->bth.dqpn));
	if (!qp) {
		sroce_count(sdev->stats, SROCE_CNT_RX_DROP_NO_QP, 1);
		return;
	}
	drop = sroce_rx_qp_check(qp, rx);
	if (drop != SROCE_NUM_COUNTERS) {
		sroce_count(sdev->stats, drop, 1);
	} else if (pkt->info->kind == SROCE_KIND_CNP) {
		/*
		 * ECN and CNPs (Annex A17.9) before the transport sees the
		 * packet.  A frame crossed no network: nothing to mark, no
		 * CNP to carry.
		 */
		if (rx->skb)
			sroce_cc_rx(sdev, qp, rx->skb, true);
	} else {
		if (rx->skb)
			sroce_cc_rx(sdev, qp, rx->skb, false);
		sroce_resp_rx(qp, rx, pkt);
	}
	sroce_qp_rx_put(qp);
}

/*
 * sroce_rx() - handle one RoCEv2 packet addressed to @sdev
 * @off: offset of the BTH in @skb; @len: bytes from there, ICRC included;
 * @local: looped back by sroce itself, ICRC not computed
 *
 * Validation in the order that costs least for garbage: headers (portable
 * core), then the ICRC over the whole packet, then the destination QP.
 * Then the responder (requests) or the completer (responses) takes it.
 */
static void sroce_rx(struct sroce_dev *sdev, struct sk_buff *skb,
		     unsigned int off, unsigned int len, bool local)
{
	/* Filled before it is read: not zeroed (sroce_req_run()). */
	u8 buf[sizeof(struct udphdr) + SROCE_RX_HDR_COPY] __uninitialized;
	unsigned int uoff = skb_transport_offset(skb);
	unsigned int copy = min_t(unsigned int, len, SROCE_RX_HDR_COPY);
	struct sroce_rxp rx = { .skb = skb };
	struct sroce_pkt pkt;
	enum sroce_verdict v;
	const u8 *udp;

	sroce_count(sdev->stats, SROCE_CNT_RX_PACKETS, 1);
	sroce_count(sdev->stats, SROCE_CNT_RX_BYTES, len);

	udp = skb_header_pointer(skb, uoff, sizeof(struct udphdr) + copy, buf);
	v = udp ? sroce_pkt_parse(udp + sizeof(struct udphdr), len, &pkt) :
		  SROCE_ERR_SHORT;
	/* A packet sroce looped back itself has no ICRC (sroce_tx.c). */
	if (v == SROCE_OK && !local)
		v = sroce_rx_icrc(skb, udp, &pkt, off, len);
	if (v != SROCE_OK) {
		sroce_count(sdev->stats, sroce_verdict_counter[v], 1);
		return;
	}
	rx.off = off + pkt.hdr_len;
	sroce_rx_pkt(sdev, &rx, &pkt);
}

/*
 * UDP encap_rcv hook.  Returning 0 tells UDP the skb was consumed; we never
 * hand packets back to the socket's receive queue (nobody reads it).
 */
static void __sroce_udp_rx(struct sock *sk, struct sk_buff *skb,
			   struct sroce_dev *from)
{
	bool local = from;
	struct sroce_net *snet;
	struct sroce_dev *sdev;
	unsigned int off, len;

	rcu_read_lock();
	snet = rcu_dereference_sk_user_data(sk);
	if (local && sroce_net_to_self(skb))
		sdev = from;
	else
		sdev = snet ? sroce_net_find_dev(snet, skb->dev) : NULL;
	if (!sdev && snet && (skb->dev->flags & IFF_LOOPBACK))
		sdev = sroce_net_find_local(snet, skb);
	if (!sdev) {
		if (snet)
			atomic64_inc(&snet->rx_drop_no_dev);
		goto out;
	}

	/* UDP has trimmed the skb to the datagram; the payload follows. */
	off = skb_transport_offset(skb) + sizeof(struct udphdr);
	len = skb->len > off ? skb->len - off : 0;
	sroce_rx(sdev, skb, off, len, local);
out:
	rcu_read_unlock();
	kfree_skb(skb);
}

static int sroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	__sroce_udp_rx(sk, skb, NULL);
	return 0;
}

/**
 * sroce_net_rx_local() - receive a packet sent to a local address
 * @from: the sending device
 * @sk: the namespace's sroce socket of the packet's family
 * @skb: the packet, network and transport headers set, its dev the
 *       loopback device, its ICRC not computed (never checked); consumed
 *
 * Context: bottom halves disabled.
 */
void sroce_net_rx_local(struct sroce_dev *from, struct sock *sk,
			struct sk_buff *skb)
{
	__sroce_udp_rx(sk, skb, from);
}

/**
 * sroce_net_rx_frame() - receive a frame from a QP of @sdev
 * @sdev: the device, sender and receiver
 * @f: the frame; the caller's again on return
 *
 * Its headers come as the fields sroce_pkt_finish() made of them, which
 * are what parsing them would give: no bytes to parse, no ICRC (as for
 * the looped-back skbs of sroce_net_rx_local()).  From the destination
 * QP on, the same checks as for a packet from the wire.
 *
 * Context: bottom halves disabled.
 */
void sroce_net_rx_frame(struct sroce_dev *sdev, const struct sroce_frame *f)
{
	struct sroce_rxp rx = { .frame = f->buf, .off = f->pkt.hdr_len };

	sroce_count(sdev->stats, SROCE_CNT_RX_PACKETS, 1);
	sroce_count(sdev->stats, SROCE_CNT_RX_BYTES,
		    f->len + SROCE_ICRC_BYTES);
	rcu_read_lock();
	sroce_rx_pkt(sdev, &rx, &f->pkt);
	rcu_read_unlock();
}

static int sroce_sock_open(struct sroce_net *snet, bool ipv6,
			   struct socket **sockp)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data	= snet,
		.encap_type	= 1,
		.encap_rcv	= sroce_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port	= htons(SROCE_UDP_DPORT),
	};
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.local_ip6 = in6addr_any;
		cfg.ipv6_v6only = 1;
	} else {
		cfg.family = AF_INET;
		cfg.local_ip.s_addr = htonl(INADDR_ANY);
	}

	err = udp_sock_create(snet->net, &cfg, sockp);
	if (err)
		return err;
	setup_udp_tunnel_sock(snet->net, *sockp, &tcfg);
	/* No packet is charged to it yet (sroce_tx.c's backpressure). */
	snet->write_space_orig = (*sockp)->sk->sk_write_space;
	(*sockp)->sk->sk_write_space = sroce_tx_write_space;
	/*
	 * The tunnel setup turns IPv4 multicast loopback off; RoCE wants it
	 * on, so that QPs attached on this host (the sending device's own
	 * included) get a copy of what a local QP sends to their group.  An
	 * IPv6 tunnel socket keeps the default (on).
	 */
	if (!ipv6)
		sroce_sock_set_mc_loop((*sockp)->sk);
	return 0;
}

static void sroce_sock_close(struct sroce_net *snet, struct socket **sockp)
{
	if (*sockp) {
		/*
		 * Packets charged to it may outlive it, in a qdisc, and this
		 * module: their frees go back to the socket's own callback
		 * (sroce_net_put() waits out those already in ours).
		 */
		WRITE_ONCE((*sockp)->sk->sk_write_space,
			   snet->write_space_orig);
		udp_tunnel_sock_release(*sockp);
		*sockp = NULL;
	}
}

/**
 * sroce_net_get() - register a device user of @net's context
 * @net: the namespace of the device's netdev
 * @snetp: set to the context on success
 *
 * The first user opens the UDP sockets.  IPv6 is optional (the namespace
 * may have it disabled); IPv4 is not.
 *
 * Return: 0, or the errno of the failed socket creation (-EADDRINUSE when
 * something else, e.g. rdma_rxe, owns UDP 4791 in this namespace).
 */
int sroce_net_get(struct net *net, struct sroce_net **snetp)
{
	struct sroce_net *snet = net_generic(net, sroce_net_id);
	int err = 0;

	mutex_lock(&snet->lock);
	if (snet->users == 0) {
		err = sroce_sock_open(snet, false, &snet->sock4);
		if (err) {
			pr_err_ratelimited("cannot bind UDP port %u for IPv4: %d\n",
					   SROCE_UDP_DPORT, err);
			goto out;
		}
		err = sroce_sock_open(snet, true, &snet->sock6);
		if (err == -EAFNOSUPPORT) {
			err = 0;
		} else if (err) {
			pr_err_ratelimited("cannot bind UDP port %u for IPv6: %d\n",
					   SROCE_UDP_DPORT, err);
			sroce_sock_close(snet, &snet->sock4);
			goto out;
		}
	}
	snet->users++;
	*snetp = snet;
out:
	mutex_unlock(&snet->lock);
	return err;
}

/**
 * sroce_net_put() - drop a user; the last one closes the sockets
 * @snet: context from sroce_net_get()
 */
void sroce_net_put(struct sroce_net *snet)
{
	bool last = false;

	mutex_lock(&snet->lock);
	if (!WARN_ON_ONCE(snet->users == 0) && --snet->users == 0) {
		sroce_sock_close(snet, &snet->sock6);
		sroce_sock_close(snet, &snet->sock4);
		/* Packet frees run from softirqs or with them off. */
		synchronize_rcu();
		last = snet->exiting;
	}
	mutex_unlock(&snet->lock);
	/* The last touch of @snet: namespace exit may free it right after. */
	if (last)
		complete(&snet->idle);
}

/**
 * sroce_net_publish() - make a registered device visible to ingress
 * @sdev: the device, registered with ib_core
 */
void sroce_net_publish(struct sroce_dev *sdev)
{
	struct sroce_net *snet = sdev->snet;

	mutex_lock(&snet->lock);
	list_add_tail_rcu(&sdev->net_node, &snet->devs);
	mutex_unlock(&snet->lock);
}

/**
 * sroce_net_unpublish() - hide a device from ingress
 * @sdev: the device
 *
 * Waits until no receive softirq can still be looking at it.
 */
void sroce_net_unpublish(struct sroce_dev *sdev)
{
	struct sroce_net *snet = sdev->snet;
	bool was_published = false;

	mutex_lock(&snet->lock);
	if (!list_empty(&sdev->net_node)) {
		list_del_rcu(&sdev->net_node);
		was_published = true;
	}
	mutex_unlock(&snet->lock);
	if (was_published) {
		synchronize_net();
		INIT_LIST_HEAD(&sdev->net_node);
	}
}

static int __net_init sroce_net_ns_init(struct net *net)
{
	struct sroce_net *snet = net_generic(net, sroce_net_id);

	snet->net = net;
	mutex_init(&snet->lock);
	INIT_LIST_HEAD(&snet->devs);
	init_completion(&snet->idle);
	atomic64_set(&snet->rx_drop_no_dev, 0);
	spin_lock_init(&snet->tx_lock);
	INIT_LIST_HEAD(&snet->tx_waiters);
	return 0;
}

/*
 * By the time a namespace's subsys exit runs, its netdevs are gone and
 * each sroce device on them has been queued for unregistration.  Kernel
 * sockets do not pin the namespace, so wait for the last device (and with
 * it the sockets) to go before the namespace memory is freed.
 */
static void __net_exit sroce_net_ns_exit(struct net *net)
{
	struct sroce_net *snet = net_generic(net, sroce_net_id);

	bool busy;

	mutex_lock(&snet->lock);
	busy = snet->users != 0;
	snet->exiting = true;
	mutex_unlock(&snet->lock);
	if (busy)
		wait_for_completion(&snet->idle);
	mutex_destroy(&snet->lock);
}

static struct pernet_operations sroce_net_ops = {
	.init	= sroce_net_ns_init,
	.exit	= sroce_net_ns_exit,
	.id	= &sroce_net_id,
	.size	= sizeof(struct sroce_net),
};

int sroce_net_init(void)
{
	return register_pernet_subsys(&sroce_net_ops);
}

void sroce_net_exit(void)
{
	unregister_pernet_subsys(&sroce_net_ops);
}
