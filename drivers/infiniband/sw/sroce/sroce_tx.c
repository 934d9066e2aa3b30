// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Requester (IBTA 9.7 requester side) and RoCEv2 transmission.
 *
 * Context: sroce_req_run() runs in process context, from the user doorbell
 * or from the QP's work item for kernel QPs, one instance per QP at a
 * time; sroce_xmit() needs hard IRQs enabled.  Nothing here sleeps.
 *
 * State of this file: UD and GSI SEND (and SEND with immediate) over IPv4
 * and IPv6.  RC and UC are not written yet.
 *
 * Trust model: user WQEs are copied out of the ring once and only the copy
 * is used; every lkey, length and SGE count is checked before use.
 */
#include <linux/hash.h>
#include <linux/ip.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <linux/ipv6.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>

#include "sroce/sroce_hdr.h"
#include "sroce/sroce_icrc.h"
#include "sroce/sroce_opcode.h"
#include "sroce/sroce_wire.h"
#include "sroce_av.h"
#include "sroce_cq.h"
#include "sroce_dev.h"
#include "sroce_mr.h"
#include "sroce_net.h"
#include "sroce_qp.h"
#include "sroce_tx.h"

/* Headroom + IB part + UDP header; the IP header is the caller's. */
static struct sk_buff *sroce_tx_skb(struct dst_entry *dst, size_t iphlen,
				    u16 sport, const u8 *ib, u32 ib_len)
{
	struct sk_buff *skb;
	struct udphdr *uh;

	skb = alloc_skb(LL_RESERVED_SPACE(dst->dev) + iphlen + sizeof(*uh) +
			ib_len + SROCE_ICRC_BYTES, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, LL_RESERVED_SPACE(dst->dev) + iphlen + sizeof(*uh));
	skb_put_data(skb, ib, ib_len);

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(sport);
	uh->dest = htons(SROCE_UDP_DPORT);
	uh->len = htons(sizeof(*uh) + ib_len + SROCE_ICRC_BYTES);
	/*
	 * Annex A17.3: no UDP checksum over IPv4; over IPv6 sroce's own
	 * sockets accept zero checksums (udp_tunnel no_check6_rx), as
	 * rdma_rxe's do.
	 */
	uh->check = 0;
	return skb;
}

/* Append the ICRC over the finished IP header, UDP header and IB part. */
static int sroce_tx_icrc(struct sk_buff *skb, const void *iph, size_t iphlen)
{
	struct sroce_icrc_ctx ctx;

	if (sroce_icrc_start(&ctx, sroce_crc32, iph, iphlen,
			     skb_transport_header(skb),
			     skb->len - skb_transport_offset(skb)) != SROCE_OK)
		return -EINVAL;
	sroce_icrc_put(skb_put(skb, SROCE_ICRC_BYTES), sroce_icrc_final(&ctx));
	return 0;
}

static int sroce_xmit4(struct sroce_dev *sdev, const struct sroce_av *av,
		       u16 sport, const u8 *ib, u32 ib_len)
{
	struct net *net = dev_net(sdev->ndev);
	struct flowi4 fl = {
		.flowi4_oif	= sdev->ndev->ifindex,
		.daddr		= av->daddr.v4.s_addr,
		.saddr		= av->saddr.v4.s_addr,
		.flowi4_proto	= IPPROTO_UDP,
	};
	struct sk_buff *skb;
	struct iphdr *iph;
	struct rtable *rt;
	int err;

	if (!sdev->snet->sock4)
		return -EAFNOSUPPORT;
	rt = ip_route_output_key(net, &fl);
	if (IS_ERR(rt))
		return PTR_ERR(rt);
	skb = sroce_tx_skb(&rt->dst, sizeof(*iph), sport, ib, ib_len);
	if (!skb) {
		ip_rt_put(rt);
		return -ENOMEM;
	}

	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = av->traffic_class;
	iph->tot_len = htons(skb->len + SROCE_ICRC_BYTES);
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit ?: 64;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = fl.saddr;
	iph->daddr = fl.daddr;
	/* The ICRC covers the IP ID: it must be final first. */
	__ip_select_ident(net, iph, 1);
	ip_send_check(iph);
	skb_dst_set(skb, &rt->dst);
	if (sroce_tx_icrc(skb, iph, sizeof(*iph))) {
		kfree_skb(skb);
		return -EINVAL;
	}
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	/* net_xmit_eval() evaluates its argument twice: call first. */
	err = ip_local_out(net, sdev->snet->sock4->sk, skb);
	return net_xmit_eval(err);
}

static int sroce_xmit6(struct sroce_dev *sdev, const struct sroce_av *av,
		       u16 sport, const u8 *ib, u32 ib_len)
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
	struct sk_buff *skb;
	int err;

	if (!sdev->snet->sock6)
		return -EAFNOSUPPORT;
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, sdev->snet->sock6->sk,
					      &fl6, NULL);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	skb = sroce_tx_skb(dst, sizeof(*ip6h), sport, ib, ib_len);
	if (!skb) {
		dst_release(dst);
		return -ENOMEM;
	}

	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	/* Flow label from the same per-QP entropy as the UDP source port. */
	ip6_flow_hdr(ip6h, av->traffic_class,
		     av->flow_label ? htonl(av->flow_label & 0xfffff) :
				      htonl(sport));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h) + SROCE_ICRC_BYTES);
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit ?: 64;
	ip6h->saddr = fl6.saddr;
	ip6h->daddr = fl6.daddr;
	skb_dst_set(skb, dst);
	if (sroce_tx_icrc(skb, ip6h, sizeof(*ip6h))) {
		kfree_skb(skb);
		return -EINVAL;
	}
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	err = ip6_local_out(net, sdev->snet->sock6->sk, skb);
	return net_xmit_eval(err);
}

/**
 * sroce_xmit() - send one RoCEv2 packet
 * @sdev: device
 * @av: destination
 * @sport: UDP source port (per-QP flow entropy)
 * @ib: IB headers, payload and pad, without ICRC
 * @ib_len: their length
 *
 * Builds the UDP and IP headers itself (the ICRC covers IP header fields
 * that must be final before it is computed) and hands the packet to the IP
 * layer for routing and neighbour resolution, in the netdev's namespace.
 *
 * Return: 0 or -errno.
 */
int sroce_xmit(struct sroce_dev *sdev, const struct sroce_av *av, u16 sport,
	       const u8 *ib, u32 ib_len)
{
	int err;

	if (av->network_type == RDMA_NETWORK_IPV4)
		err = sroce_xmit4(sdev, av, sport, ib, ib_len);
	else
		err = sroce_xmit6(sdev, av, sport, ib, ib_len);
	if (!err) {
		sroce_count(sdev->stats, SROCE_CNT_TX_PACKETS, 1);
		sroce_count(sdev->stats, SROCE_CNT_TX_BYTES,
			    ib_len + SROCE_ICRC_BYTES);
	}
	return err;
}

/* UDP source port from the QP number: stable per QP, spread for ECMP. */
static u16 sroce_qp_sport(const struct sroce_qp *qp)
{
	return 0xc000 | (hash_32(qp->ibqp.qp_num, 14));
}

static void sroce_req_complete(struct sroce_qp *qp, u64 wr_id,
			       enum ib_wc_status status, u32 len,
			       bool signaled)
{
	struct ib_wc wc = {
		.wr_id		= wr_id,
		.status		= status,
		.opcode		= IB_WC_SEND,
		.byte_len	= len,
		.qp		= &qp->ibqp,
		.port_num	= 1,
	};

	/* Errors always complete (IBTA 10.7.2.1); successes if signaled. */
	if (signaled || status != IB_WC_SUCCESS)
		sroce_cq_post(qp->scq, &wc, false);
}

/*
 * Gather @len bytes described by @sge into @buf.  Return an IBTA completion
 * status.
 */
static enum ib_wc_status sroce_gather(struct sroce_qp *qp,
				      const struct rxe_sge *sge, u32 num_sge,
				      u8 *buf)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_mem *mem;
	u32 i;

	for (i = 0; i < num_sge; i++) {
		if (!sge[i].length)
			continue;
		mem = sroce_mem_get(sdev, sge[i].lkey);
		if (!mem)
			return IB_WC_LOC_PROT_ERR;
		if (sroce_mem_check(mem, qp->ibqp.pd, sge[i].addr,
				    sge[i].length, 0)) {
			sroce_mem_put(mem);
			return IB_WC_LOC_PROT_ERR;
		}
		sroce_mem_copy(mem, sge[i].addr, buf, sge[i].length,
			       SROCE_FROM_MEM);
		sroce_mem_put(mem);
		buf += sge[i].length;
	}
	return IB_WC_SUCCESS;
}

/* One UD SEND from a copied WQE; returns the completion status. */
static enum ib_wc_status sroce_req_ud_send(struct sroce_qp *qp,
					   const struct rxe_send_wqe *wqe,
					   const void *dma_data)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	u32 mtu = sroce_path_mtu(READ_ONCE(sdev->ndev->mtu));
	bool imm = wqe->wr.opcode == IB_WR_SEND_WITH_IMM;
	const struct rxe_sge *sge = dma_data;
	struct sroce_pkt pkt = {};
	enum ib_wc_status st;
	struct sroce_av av, *avp;
	u32 len = 0, i, num_sge = wqe->dma.num_sge;
	int hdr, err;
	u8 *buf;

	if (wqe->wr.opcode != IB_WR_SEND && !imm)
		return IB_WC_LOC_QP_OP_ERR;
	if (wqe->wr.send_flags & IB_SEND_INLINE) {
		len = wqe->dma.length;
		if (len > qp->sq.max_inline)
			return IB_WC_LOC_LEN_ERR;
		num_sge = 0;
	} else {
		if (num_sge > qp->sq.max_sge)
			return IB_WC_LOC_LEN_ERR;
		for (i = 0; i < num_sge; i++)
			len += sge[i].length;
	}
	if (len > mtu)
		return IB_WC_LOC_LEN_ERR;	/* UD messages fit one packet */

	rcu_read_lock();
	avp = xa_load(&sdev->ah_xa, wqe->wr.wr.ud.ah_num);
	if (avp)
		av = *avp;
	rcu_read_unlock();
	if (!avp)
		return IB_WC_LOC_QP_OP_ERR;

	pkt.bth.opcode = imm ? 0x65 : 0x64;	/* UD SEND ONLY (w/ IMM) */
	pkt.bth.se = wqe->wr.send_flags & IB_SEND_SOLICITED;
	pkt.bth.pkey = 0xffff;
	pkt.bth.dqpn = wqe->wr.wr.ud.remote_qpn & 0xffffff;
	pkt.bth.psn = qp->attr.sq_psn;
	qp->attr.sq_psn = (qp->attr.sq_psn + 1) & 0xffffff;
	/* IBTA 10.2.5: a Q_Key with the high bit set means "use the QP's". */
	pkt.deth.qkey = (wqe->wr.wr.ud.remote_qkey & 0x80000000) ?
			qp->attr.qkey : wqe->wr.wr.ud.remote_qkey;
	pkt.deth.sqpn = qp->ibqp.qp_num;
	pkt.imm = be32_to_cpu(wqe->wr.ex.imm_data);
	pkt.info = sroce_opcode_info(pkt.bth.opcode);
	pkt.payload_len = len;

	buf = kmalloc(SROCE_BTH_BYTES + 64 + len + 3, GFP_ATOMIC);
	if (!buf)
		return IB_WC_LOC_QP_OP_ERR;
	hdr = sroce_pkt_build_hdrs(buf, SROCE_BTH_BYTES + 64, &pkt);
	if (hdr < 0) {
		kfree(buf);
		return IB_WC_LOC_QP_OP_ERR;
	}
	if (num_sge) {
		st = sroce_gather(qp, sge, num_sge, buf + hdr);
		if (st != IB_WC_SUCCESS) {
			kfree(buf);
			return st;
		}
	} else {
		memcpy(buf + hdr, dma_data, len);
	}
	memset(buf + hdr + len, 0, sroce_pad_for(len));
	err = sroce_xmit(sdev, &av, sroce_qp_sport(qp), buf,
			 hdr + len + sroce_pad_for(len));
	kfree(buf);
	/* UD is unreliable: a packet lost at the IP layer still completes. */
	if (err == -EAFNOSUPPORT || err == -ENETUNREACH || err == -EHOSTUNREACH)
		return IB_WC_LOC_QP_OP_ERR;
	return IB_WC_SUCCESS;
}

/**
 * sroce_req_run() - process the send queue of @qp
 * @qp: queue pair
 *
 * The one kick function of the requester: whoever finds it idle runs it;
 * a caller that finds it running leaves its WQEs to the running instance,
 * which looks again before it stops.  In RTS it sends; in any other state
 * the WQEs wait (ERR flushes them through sroce_qp_flush()).
 */
void sroce_req_run(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->sq.queue;
	size_t esz = q->elem_size;
	struct rxe_send_wqe *wqe;
	enum ib_wc_status st;
	unsigned long flags;
	int budget = 1024;

	if (test_and_set_bit(SROCE_QP_REQ_RUNNING, &qp->flags))
		return;
	wqe = kmalloc(esz, GFP_ATOMIC);
	if (!wqe)
		goto out;
again:
	spin_lock_irqsave(&qp->sq.lock, flags);
	while (budget-- > 0 && READ_ONCE(qp->state) == IB_QPS_RTS &&
	       !sroce_queue_empty(q)) {
		/* The one copy out of the (user-writable) ring. */
		memcpy(wqe, sroce_queue_consumer_addr(q), esz);
		sroce_queue_advance_consumer(q);
		spin_unlock_irqrestore(&qp->sq.lock, flags);

		if (qp->ibqp.qp_type == IB_QPT_UD ||
		    qp->ibqp.qp_type == IB_QPT_GSI)
			st = sroce_req_ud_send(qp, wqe, wqe->dma.sge);
		else
			st = IB_WC_LOC_QP_OP_ERR;	/* RC/UC: not yet */
		sroce_req_complete(qp, wqe->wr.wr_id, st, wqe->dma.length,
				   qp->sq_sig_all ||
				   (wqe->wr.send_flags & IB_SEND_SIGNALED));

		spin_lock_irqsave(&qp->sq.lock, flags);
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	kfree(wqe);
	wqe = NULL;
out:
	clear_bit(SROCE_QP_REQ_RUNNING, &qp->flags);
	/* Work posted while we were finishing would otherwise wait. */
	smp_mb__after_atomic();
	if (budget > 0 && READ_ONCE(qp->state) == IB_QPS_RTS &&
	    !sroce_queue_empty(q) &&
	    !test_and_set_bit(SROCE_QP_REQ_RUNNING, &qp->flags)) {
		wqe = kmalloc(esz, GFP_ATOMIC);
		if (wqe)
			goto again;
		clear_bit(SROCE_QP_REQ_RUNNING, &qp->flags);
	}
}
