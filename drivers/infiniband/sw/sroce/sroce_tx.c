// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 transmission: UDP and IP encapsulation, the ICRC, and the hand-off
 * to the IP layer (routing and neighbours of the netdev's namespace).
 *
 * Context: any, with hard IRQs enabled; nothing here sleeps.
 */
#include <linux/highmem.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <linux/ipv6.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>

#include "sroce/sroce_icrc.h"
#include "sroce/sroce_wire.h"
#include "sroce_av.h"
#include "sroce_cc.h"
#include "sroce_compat.h"
#include "sroce_dev.h"
#include "sroce_net.h"
#include "sroce_qp.h"
#include "sroce_req.h"
#include "sroce_stats.h"
#include "sroce_tx.h"

/*
 * Transmit backpressure, as TCP small queues: every packet that leaves
 * through a netdev is charged to the namespace's UDP socket until the
 * qdisc or the NIC frees it, and an RC requester does not start a packet
 * while the sockets have more than this queued.  Its WQEs wait in the
 * send queue instead, where their retransmit timers have not started:
 * a long queue in front of a slow link otherwise delays every QP's
 * packets past the local ACK timeout at once, and each resends its whole
 * window into the same queue (seen: 256 QPs over a 0.4 Gb/s virtual NIC
 * failed with RETRY_EXC_ERR after thousands of timeouts, none for a lost
 * packet).  256 KiB is 20 ms at 100 Mb/s, 200 us at 10 Gb/s.
 */
#define SROCE_TX_QUEUE_BYTES	(256 * 1024)

/* Room in front of the IB headers for Ethernet, IPv6 (the larger) and UDP. */
static unsigned int sroce_tx_headroom(const struct sroce_dev *sdev)
{
	return LL_RESERVED_SPACE(sdev->ndev) + SROCE_IPV6_BYTES +
	       SROCE_UDP_BYTES;
}

/*
 * Page fragment caches for packets that their builder holds while it
 * builds the next one (sroce_req_run() keeps each RC packet until it knows
 * whether it is the run's last).  A cache reuses its page only if every
 * fragment carved from it is gone when the page runs out; the held packet
 * never is, so one shared cache got a fresh page, zeroed by init_on_alloc
 * (on in Debian's kernels), every 32 KiB: 9% of the requester's CPU at
 * 64 B messages.  Consecutive held packets alternate between two caches
 * instead, and the held one is never in the cache being carved.
 */
struct sroce_tx_frags {
	struct page_frag_cache nc[2];
};

static DEFINE_PER_CPU(struct sroce_tx_frags, sroce_tx_frags);

static void *sroce_tx_frag(unsigned int fsz, int slot)
{
	struct page_frag_cache *nc;
	unsigned long flags;
	void *data;

	if (slot < 0)
		return netdev_alloc_frag(fsz);
	/* Any context may build a packet: the cache is the CPU's alone. */
	local_irq_save(flags);
	nc = &this_cpu_ptr(&sroce_tx_frags)->nc[slot & 1];
	data = page_frag_alloc(nc, fsz, GFP_ATOMIC | __GFP_NOWARN);
	local_irq_restore(flags);
	return data;
}

static struct sk_buff *__sroce_tx_alloc(struct sroce_dev *sdev, u32 ib_len,
					int slot)
{
	unsigned int hr = sroce_tx_headroom(sdev);
	unsigned int len = hr + ib_len + SROCE_ICRC_BYTES;
	struct sk_buff *skb = NULL;
	unsigned int fsz;
	void *data;

	/*
	 * The buffer comes from a page fragment cache, as NIC drivers'
	 * receive buffers do: it reuses its pages as soon as every packet
	 * carved from them is gone, where kmalloc() zeroes each (8 KiB, for
	 * an MTU-sized packet) object again (init_on_alloc) just before the
	 * payload overwrites it.  Under memory pressure the cache may hold
	 * only small pages: kmalloc then.
	 */
	fsz = SKB_DATA_ALIGN(len) +
	      SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	data = sroce_tx_frag(fsz, slot);
	if (data) {
		skb = build_skb(data, fsz);
		if (!skb)
			skb_free_frag(data);
	}
	if (!skb)
		skb = alloc_skb(len, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, hr);
	skb_put(skb, ib_len);
	return skb;
}

/**
 * sroce_tx_alloc() - an skb for one RoCEv2 packet
 * @sdev: device
 * @ib_len: bytes of IB headers, payload and pad (the ICRC is added later)
 *
 * Return: an skb whose data are the @ib_len bytes to fill in, or NULL.
 */
struct sk_buff *sroce_tx_alloc(struct sroce_dev *sdev, u32 ib_len)
{
	return __sroce_tx_alloc(sdev, ib_len, -1);
}

/**
 * sroce_tx_alloc_held() - an skb for a packet its builder will hold
 * @sdev: device
 * @ib_len: as for sroce_tx_alloc()
 * @slot: flipped by the builder for each packet it holds
 *
 * Return: an skb whose data are the @ib_len bytes to fill in, or NULL.
 */
struct sk_buff *sroce_tx_alloc_held(struct sroce_dev *sdev, u32 ib_len,
				    unsigned int slot)
{
	return __sroce_tx_alloc(sdev, ib_len, slot & 1);
}

/**
 * sroce_tx_exit() - release the held packets' caches, at module exit
 *
 * Packets still in flight keep their pages until they are freed.
 */
void sroce_tx_exit(void)
{
	struct sroce_tx_frags *f;
	int cpu;

	for_each_possible_cpu(cpu) {
		f = per_cpu_ptr(&sroce_tx_frags, cpu);
		page_frag_cache_drain(&f->nc[0]);
		page_frag_cache_drain(&f->nc[1]);
	}
}

/**
 * sroce_tx_zcopy_ok() - may payload go out as fragments of the MR's pages?
 * @sdev: device
 * @local: the packet is delivered by the same-namespace shortcut
 *
 * A netdev without scatter-gather (virtio-net over a backend with no
 * offloads, for one) gets every fragmented packet linearized by
 * validate_xmit_skb(): a fresh 8 KiB head and a copy, after the ICRC pass
 * already read the payload.  Copying the payload straight into our own
 * linear buffer is then one pass and one allocation fewer.
 */
bool sroce_tx_zcopy_ok(const struct sroce_dev *sdev, bool local)
{
	return local || (READ_ONCE(sdev->ndev->features) & NETIF_F_SG);
}

/* Push the UDP header in front of the IB part. */
static void sroce_tx_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;
	u32 len = skb->len;

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(sport);
	uh->dest = htons(SROCE_UDP_DPORT);
	uh->len = htons(sizeof(*uh) + len + SROCE_ICRC_BYTES);
	/*
	 * Annex A17.3: no UDP checksum over IPv4; over IPv6 sroce's own
	 * sockets accept zero checksums (udp_tunnel no_check6_rx), as
	 * rdma_rxe's do.
	 */
	uh->check = 0;
}

/**
 * sroce_tx_paged_trailer() - finish a packet whose payload is in fragments
 * @skb: from sroce_tx_alloc() with the IB headers only, the payload (no
 *       pad) attached as page fragments
 *
 * The ICRC cannot follow fragments in the linear area: it goes in a last,
 * empty fragment with room for it (sroce_tx_icrc_room()).
 *
 * Return: 0, -E2BIG (no fragment slot left) or -ENOMEM.
 */
int sroce_tx_paged_trailer(struct sk_buff *skb)
{
	int i = skb_shinfo(skb)->nr_frags;
	struct page *page;
	u8 *p;

	if (i >= MAX_SKB_FRAGS)
		return -E2BIG;
	p = netdev_alloc_frag(SROCE_ICRC_BYTES);
	if (!p)
		return -ENOMEM;
	page = virt_to_head_page(p);
	skb_fill_page_desc(skb, i, page, p - (u8 *)page_address(page), 0);
	skb->truesize += SKB_DATA_ALIGN(SROCE_ICRC_BYTES);
	return 0;
}

/* The 4 ICRC bytes at the packet's end, added to its length. */
static u8 *sroce_tx_icrc_room(struct sk_buff *skb)
{
	skb_frag_t *f;
	u8 *p;

	if (!skb_is_nonlinear(skb))
		return skb_put(skb, SROCE_ICRC_BYTES);
	/* The empty last fragment of sroce_tx_paged_trailer(). */
	f = &skb_shinfo(skb)->frags[skb_shinfo(skb)->nr_frags - 1];
	p = (u8 *)skb_frag_address(f) + skb_frag_size(f);
	skb_frag_size_add(f, SROCE_ICRC_BYTES);
	skb->len += SROCE_ICRC_BYTES;
	skb->data_len += SROCE_ICRC_BYTES;
	return p;
}

/* Append the ICRC over the finished IP header, UDP header and IB part. */
static int sroce_tx_icrc(struct sk_buff *skb, const void *iph, size_t iphlen)
{
	struct sroce_icrc_ctx ctx;
	const skb_frag_t *f;
	u8 *va;
	int i;

	/* The headers are linear; fragments hold whole-page-bounded payload. */
	if (sroce_icrc_start(&ctx, sroce_crc32, iph, iphlen,
			     skb_transport_header(skb),
			     skb_headlen(skb) - skb_transport_offset(skb)) !=
	    SROCE_OK)
		return -EINVAL;
	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		f = &skb_shinfo(skb)->frags[i];
		if (!skb_frag_size(f))
			continue;
		va = kmap_local_page(skb_frag_page(f));
		sroce_icrc_update(&ctx, va + skb_frag_off(f), skb_frag_size(f));
		kunmap_local(va);
	}
	sroce_icrc_put(sroce_tx_icrc_room(skb), sroce_icrc_final(&ctx));
	return 0;
}

/*
 * A packet for an address of the sender's own namespace (the route says
 * loopback: one device talking to itself, or to another sroce device of
 * the namespace) is received right here, as a NIC loops such packets
 * back internally: the IP output and input paths and the backlog
 * softirq would add nothing but their cost.  The packet goes through
 * the same checks as one from the wire except the ICRC, which guards a
 * link this packet never crosses (its 4 bytes are there, zero): the
 * loopback netdev skips TCP and UDP checksums for the same reason.
 * Bottom halves off, as in the UDP receive path it stands in for; the
 * receive side's replies (ACKs) nest at most one level.
 */
static int sroce_tx_local(struct sroce_dev *sdev, struct sock *sk,
			  struct sk_buff *skb)
{
	memset(sroce_tx_icrc_room(skb), 0, SROCE_ICRC_BYTES);
	skb->pkt_type = PACKET_HOST;
	local_bh_disable();
	sroce_net_rx_local(sdev, sk, skb);
	local_bh_enable();
	return 0;
}

/*
 * The route of an RC/UC QP's path comes from its cache (the same
 * per-CPU dst_cache tunnels use; a route or address change invalidates
 * it): a lookup per packet costs more than the rest of the IP work, and
 * a route to a local address is not even cached by the FIB.  The cache
 * is per CPU: bottom halves stay off from its lookup to its update.
 */
static struct rtable *sroce_route4(struct net *net, const struct sroce_av *av,
				   struct flowi4 *fl)
{
	struct rtable *rt = NULL;
	__be32 saddr;

	local_bh_disable();
	if (av->dcache)
		rt = dst_cache_get_ip4(av->dcache, &saddr);
	if (!rt) {
		rt = ip_route_output_key(net, fl);
		if (!IS_ERR(rt) && av->dcache)
			dst_cache_set_ip4(av->dcache, &rt->dst, fl->saddr);
	}
	local_bh_enable();
	return rt;
}

static struct dst_entry *sroce_route6(struct net *net, struct sock *sk,
				      const struct sroce_av *av,
				      struct flowi6 *fl6)
{
	struct dst_entry *dst = NULL;
	struct in6_addr saddr;

	local_bh_disable();
	if (av->dcache)
		dst = dst_cache_get_ip6(av->dcache, &saddr);
	if (!dst) {
		dst = ipv6_stub->ipv6_dst_lookup_flow(net, sk, fl6, NULL);
		if (!IS_ERR(dst) && av->dcache)
			dst_cache_set_ip6(av->dcache, dst, &fl6->saddr);
	}
	local_bh_enable();
	return dst;
}

static int sroce_xmit4(struct sroce_dev *sdev, const struct sroce_av *av,
		       struct sk_buff *skb, u8 tclass, bool *local)
{
	struct net *net = dev_net(sdev->ndev);
	struct flowi4 fl = {
		.flowi4_oif	= sdev->ndev->ifindex,
		.daddr		= av->daddr.v4.s_addr,
		.saddr		= av->saddr.v4.s_addr,
		.flowi4_proto	= IPPROTO_UDP,
	};
	struct iphdr *iph;
	struct rtable *rt;
	int err;

	if (!sdev->snet->sock4) {
		kfree_skb(skb);
		return -EAFNOSUPPORT;
	}
	rt = sroce_route4(net, av, &fl);
	if (IS_ERR(rt)) {
		kfree_skb(skb);
		return PTR_ERR(rt);
	}

	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = tclass;
	iph->tot_len = htons(skb->len + SROCE_ICRC_BYTES);
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit ?: 64;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = fl.saddr;
	iph->daddr = fl.daddr;
	skb->protocol = htons(ETH_P_IP);
	if (rt->dst.dev->flags & IFF_LOOPBACK) {
		/* Never on a wire: no ID to pick (RFC 6864: DF set anyway). */
		iph->id = 0;
		ip_send_check(iph);
		skb->dev = rt->dst.dev;
		ip_rt_put(rt);
		*local = true;
		return sroce_tx_local(sdev, sdev->snet->sock4->sk, skb);
	}
	/* The ICRC covers the IP ID: it must be final first. */
	__ip_select_ident(net, iph, 1);
	ip_send_check(iph);
	if (sroce_tx_icrc(skb, iph, sizeof(*iph))) {
		ip_rt_put(rt);
		kfree_skb(skb);
		return -EINVAL;
	}
	skb_dst_set(skb, &rt->dst);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	skb_set_owner_w(skb, sdev->snet->sock4->sk);
	/* net_xmit_eval() evaluates its argument twice: call first. */
	err = ip_local_out(net, sdev->snet->sock4->sk, skb);
	return net_xmit_eval(err);
}

static int sroce_xmit6(struct sroce_dev *sdev, const struct sroce_av *av,
		       u16 sport, struct sk_buff *skb, u8 tclass, bool *local)
{
	struct net *net = dev_net(sdev->ndev);
	struct flowi6 fl6 = {
		.flowi6_oif	= sdev->ndev->ifindex,
		.daddr		= av->daddr.v6,
		.saddr		= av->saddr.v6,
		.flowi6_proto	= IPPROTO_UDP,
	};
	struct dst_entry *dst;
	struct ipv6hdr *ip6h;
	int err;

	if (!sdev->snet->sock6) {
		kfree_skb(skb);
		return -EAFNOSUPPORT;
	}
	dst = sroce_route6(net, sdev->snet->sock6->sk, av, &fl6);
	if (IS_ERR(dst)) {
		kfree_skb(skb);
		return PTR_ERR(dst);
	}

	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	/* Flow label from the same per-QP entropy as the UDP source port. */
	ip6_flow_hdr(ip6h, tclass,
		     av->flow_label ? htonl(av->flow_label & 0xfffff) :
				      htonl(sport));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h) + SROCE_ICRC_BYTES);
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit ?: 64;
	ip6h->saddr = fl6.saddr;
	ip6h->daddr = fl6.daddr;
	skb->protocol = htons(ETH_P_IPV6);
	if (dst->dev->flags & IFF_LOOPBACK) {
		skb->dev = dst->dev;
		dst_release(dst);
		*local = true;
		return sroce_tx_local(sdev, sdev->snet->sock6->sk, skb);
	}
	if (sroce_tx_icrc(skb, ip6h, sizeof(*ip6h))) {
		dst_release(dst);
		kfree_skb(skb);
		return -EINVAL;
	}
	skb_dst_set(skb, dst);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	skb_set_owner_w(skb, sdev->snet->sock6->sk);
	err = ip6_local_out(net, sdev->snet->sock6->sk, skb);
	return net_xmit_eval(err);
}

/*
 * sroce_tx_send_where() - send one RoCEv2 packet built by the caller
 * @sdev: device
 * @av: destination
 * @sport: UDP source port (per-QP flow entropy)
 * @skb: from sroce_tx_alloc(), its data filled in; always consumed
 * @tclass: IP TOS / traffic class byte (DSCP and ECN) to send with
 * @local: set to whether the route delivered it in this namespace,
 *         received before this returned (sroce_tx_local())
 *
 * Builds the UDP and IP headers itself (the ICRC covers IP header fields
 * that must be final before it is computed) and hands the packet to the IP
 * layer for routing and neighbour resolution, in the netdev's namespace.
 * Needs hard IRQs enabled.
 *
 * Return: 0 or -errno.
 */
static int sroce_tx_send_where(struct sroce_dev *sdev,
			       const struct sroce_av *av, u16 sport,
			       struct sk_buff *skb, u8 tclass, bool *local)
{
	u32 len = skb->len + SROCE_ICRC_BYTES;
	int err;

	*local = false;
	sroce_tx_udp(skb, sport);
	if (av->network_type == RDMA_NETWORK_IPV4)
		err = sroce_xmit4(sdev, av, skb, tclass, local);
	else
		err = sroce_xmit6(sdev, av, sport, skb, tclass, local);
	/* net_xmit_eval() leaves NET_XMIT_DROP positive: a full queue. */
	if (err > 0)
		err = -ENOBUFS;
	if (!err) {
		sroce_count(sdev->stats, SROCE_CNT_TX_PACKETS, 1);
		sroce_count(sdev->stats, SROCE_CNT_TX_BYTES, len);
	} else {
		sroce_count(sdev->stats, SROCE_CNT_TX_ERRORS, 1);
		ibdev_dbg_ratelimited(&sdev->ibdev, "transmit failed: %d\n",
				      err);
	}
	return err;
}

/**
 * sroce_tx_send_tc() - send one RoCEv2 packet built by the caller
 * @sdev: device
 * @av: destination
 * @sport: UDP source port (per-QP flow entropy)
 * @skb: from sroce_tx_alloc(), its data filled in; always consumed
 * @tclass: IP TOS / traffic class byte (DSCP and ECN) to send with
 *
 * Return: 0 or -errno.
 */
int sroce_tx_send_tc(struct sroce_dev *sdev, const struct sroce_av *av,
		     u16 sport, struct sk_buff *skb, u8 tclass)
{
	bool local;

	return sroce_tx_send_where(sdev, av, sport, skb, tclass, &local);
}

/**
 * sroce_tx_send_local() - send a packet with the path's traffic class
 * @sdev: device
 * @av: destination
 * @sport: UDP source port (per-QP flow entropy)
 * @skb: from sroce_tx_alloc(), its data filled in; always consumed
 * @local: set to whether the packet was received in this namespace
 *         before this returned (no queue between sender and receiver)
 *
 * The DSCP and ECN bits come from congestion control (sroce_cc.c).
 *
 * Return: 0 or -errno.
 */
int sroce_tx_send_local(struct sroce_dev *sdev, const struct sroce_av *av,
			u16 sport, struct sk_buff *skb, bool *local)
{
	return sroce_tx_send_where(sdev, av, sport, skb,
				   sroce_cc_tclass(sdev, av->traffic_class),
				   local);
}

/**
 * sroce_av_to_self() - is @av's destination its own source address?
 * @av: RC/UC path
 *
 * Such packets are for the sending device itself (sroce_net.c).
 */
bool sroce_av_to_self(const struct sroce_av *av)
{
	if (av->network_type == RDMA_NETWORK_IPV4)
		return av->daddr.v4.s_addr == av->saddr.v4.s_addr;
	return ipv6_addr_equal(&av->daddr.v6, &av->saddr.v6);
}

/*
 * The routing generation of @av's family in @sdev's namespace: it changes
 * with every route and address change there.
 */
static u32 sroce_tx_genid(const struct sroce_dev *sdev,
			  const struct sroce_av *av)
{
	const struct net *net = dev_net(sdev->ndev);

	if (av->network_type == RDMA_NETWORK_IPV4)
		return rt_genid_ipv4(net);
	return rt_genid_ipv6(net);
}

/* sroce_tx_self() in routing generation @genid, read by the caller. */
static bool sroce_tx_self_at(const struct sroce_qp *qp, u32 genid)
{
	return READ_ONCE(qp->self_gen) == genid + 1;
}

/**
 * sroce_tx_self() - may @qp's packets go to its own device as frames?
 * @qp: RC queue pair
 *
 * Its last packet sent went to its own address, and routing did not
 * change since.  Any context: requester and responder packets share the
 * path.
 */
bool sroce_tx_self(const struct sroce_qp *qp)
{
	const struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);

	return sroce_tx_self_at(qp, sroce_tx_genid(sdev, &qp->av));
}

/*
 * Note where a packet of RC QP @qp went: to @av, sent in routing generation
 * @genid; @local: sent without error and received in the namespace.
 */
static void sroce_tx_seen(struct sroce_qp *qp, const struct sroce_av *av,
			  u32 genid, bool local)
{
	u32 gen = local && sroce_av_to_self(av) ? genid + 1 : 0;

	/* Written only when it changes: one cache line for both sides. */
	if (READ_ONCE(qp->self_gen) != gen)
		WRITE_ONCE(qp->self_gen, gen);
}

/*
 * Send frame @f of a QP to @av.  @self: the QP saw @av's route take its
 * packets to its own address, and nothing in routing changed since
 * (sroce_tx_genid()).  Sets *@local as sroce_tx_send_local() does.
 *
 * A small packet from a QP to a QP of its own device costs more to put
 * in an skb, route and take apart again than to handle: the receive path
 * takes it right here, as sroce_tx_local() takes a looped-back skb, with
 * its headers as fields.  Without @self its headers are written in front
 * of the payload and it goes the IP way, in an skb.
 *
 * Return: 0 or -errno.
 */
static int sroce_tx_frame(struct sroce_dev *sdev, const struct sroce_av *av,
			  u16 sport, struct sroce_frame *f, bool self,
			  bool *local)
{
	struct sk_buff *skb;

	if (!self || !sroce_av_to_self(av)) {
		skb = sroce_tx_alloc(sdev, f->len);
		if (!skb) {
			*local = false;
			sroce_count(sdev->stats, SROCE_CNT_TX_ERRORS, 1);
			return -ENOMEM;
		}
		/* Built by sroce_pkt_finish() from the same fields. */
		sroce_pkt_build_hdrs(skb->data, f->pkt.hdr_len, &f->pkt);
		memcpy(skb->data + f->pkt.hdr_len, f->buf + f->pkt.hdr_len,
		       f->len - f->pkt.hdr_len);
		return sroce_tx_send_local(sdev, av, sport, skb, local);
	}
	*local = true;
	sroce_count(sdev->stats, SROCE_CNT_TX_FRAMES, 1);
	sroce_count(sdev->stats, SROCE_CNT_TX_PACKETS, 1);
	sroce_count(sdev->stats, SROCE_CNT_TX_BYTES, f->len + SROCE_ICRC_BYTES);
	local_bh_disable();
	sroce_net_rx_frame(sdev, f);
	local_bh_enable();
	return 0;
}

/**
 * sroce_tx_qp() - send a packet of a connected QP and note where it went
 * @qp: RC or UC queue pair
 * @av: the packet's destination
 * @skb: the packet, from sroce_tx_alloc(), always consumed; or NULL for
 * @frame: a frame (struct sroce_frame, RC only), the caller's again on
 *         return
 * @local: set as by sroce_tx_send_local()
 *
 * Where an RC QP's last packet went decides whether its next small ones
 * may go as frames (sroce_tx_self()): the requester and the responder
 * send all of their packets through here, so a QP that only answers
 * learns it too.  A route change since then bumps the generation read
 * here, and the frame takes the IP path once, which says where it goes
 * now.
 *
 * Return: 0 or -errno.
 */
int sroce_tx_qp(struct sroce_qp *qp, const struct sroce_av *av,
		struct sk_buff *skb, struct sroce_frame *frame, bool *local)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	u32 genid = sroce_tx_genid(sdev, av);
	u16 sport = sroce_qp_sport(qp);
	int err;

	if (skb)
		err = sroce_tx_send_local(sdev, av, sport, skb, local);
	else
		err = sroce_tx_frame(sdev, av, sport, frame,
				     sroce_tx_self_at(qp, genid), local);
	if (qp->ibqp.qp_type == IB_QPT_RC)
		sroce_tx_seen(qp, av, genid, *local && !err);
	return err;
}

/* Bytes of @snet's packets in qdiscs and NIC rings. */
static unsigned int sroce_tx_queued(const struct sroce_net *snet)
{
	struct socket *s4 = READ_ONCE(snet->sock4);
	struct socket *s6 = READ_ONCE(snet->sock6);

	return (s4 ? sk_wmem_alloc_get(s4->sk) : 0) +
	       (s6 ? sk_wmem_alloc_get(s6->sk) : 0);
}

/**
 * sroce_tx_throttle() - should @qp's requester wait for the queues?
 * @qp: an RC queue pair about to build a packet
 *
 * When they hold more than SROCE_TX_QUEUE_BYTES, @qp is put on its
 * namespace's waiting list: sroce_tx_write_space() kicks it once they are
 * half drained.
 *
 * Return: whether to stop sending now.
 */
bool sroce_tx_throttle(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_net *snet = sdev->snet;
	unsigned long flags;

	if (likely(sroce_tx_queued(snet) < SROCE_TX_QUEUE_BYTES))
		return false;
	spin_lock_irqsave(&snet->tx_lock, flags);
	/*
	 * A QP being quiesced left the list under this lock after it was
	 * marked DYING (sroce_qp_quiesce()): it must not come back.
	 */
	if (test_bit(SROCE_QP_DYING, &qp->flags)) {
		spin_unlock_irqrestore(&snet->tx_lock, flags);
		return true;
	}
	if (list_empty(&qp->tx_wait))
		list_add_tail(&qp->tx_wait, &snet->tx_waiters);
	spin_unlock_irqrestore(&snet->tx_lock, flags);
	/*
	 * On the list before the queue is read again; the freeing side
	 * lowers it before it looks at the list (sroce_tx_write_space()).
	 * So a drain between the two checks is seen by one side or both.
	 */
	smp_mb();
	if (sroce_tx_queued(snet) < SROCE_TX_QUEUE_BYTES / 2) {
		sroce_tx_unthrottle(qp);
		return false;
	}
	sroce_count(sdev->stats, SROCE_CNT_TX_QUEUE_FULL, 1);
	return true;
}

/**
 * sroce_tx_unthrottle() - take @qp off its namespace's waiting list
 * @qp: queue pair (being destroyed, or no longer waiting)
 */
void sroce_tx_unthrottle(struct sroce_qp *qp)
{
	struct sroce_net *snet = to_sroce_dev(qp->ibqp.device)->snet;
	unsigned long flags;

	spin_lock_irqsave(&snet->tx_lock, flags);
	list_del_init(&qp->tx_wait);
	spin_unlock_irqrestore(&snet->tx_lock, flags);
}

/**
 * sroce_tx_write_space() - a packet charged to @sk was freed
 * @sk: one of a namespace's RoCEv2 sockets
 *
 * Called by sock_wfree() (any context but hard IRQ) for every packet;
 * kicks the waiting QPs once the queues are half drained.  A QP leaves
 * the list under tx_lock before it is freed (sroce_qp_quiesce()).
 */
void sroce_tx_write_space(struct sock *sk)
{
	struct sroce_qp *qp, *tmp;
	struct sroce_net *snet;
	unsigned long flags;

	/* sk_wmem_alloc is lowered: see sroce_tx_throttle(). */
	smp_mb();
	rcu_read_lock();
	/* NULL once the socket is released (no device, so no waiter). */
	snet = rcu_dereference_sk_user_data(sk);
	if (snet && !list_empty(&snet->tx_waiters) &&
	    sroce_tx_queued(snet) < SROCE_TX_QUEUE_BYTES / 2) {
		spin_lock_irqsave(&snet->tx_lock, flags);
		list_for_each_entry_safe(qp, tmp, &snet->tx_waiters, tx_wait) {
			list_del_init(&qp->tx_wait);
			sroce_req_kick(qp);
		}
		spin_unlock_irqrestore(&snet->tx_lock, flags);
	}
	rcu_read_unlock();
}
