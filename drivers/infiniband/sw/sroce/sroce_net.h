/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-network-namespace context: the RoCEv2 UDP sockets (IPv4 and IPv6,
 * port 4791) and the list of sroce devices whose netdev lives in that
 * namespace.  The sockets exist exactly while the namespace has at least
 * one sroce device, so sroce can share a host with rdma_rxe (which holds
 * 4791 in the initial namespace) as long as the two use different ones.
 */
#ifndef SROCE_NET_H
#define SROCE_NET_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <net/net_namespace.h>

#include "sroce/sroce_icrc.h"

struct sroce_dev;

/*
 * Where a received packet's bytes are: an skb (from a netdev, or looped
 * back by sroce_tx.c), or a frame that a QP of the same device built in
 * its own buffer and handed over directly (struct sroce_frame).
 */
struct sroce_rxp {
	struct sk_buff *skb;	/* NULL for a frame */
	const u8 *frame;	/* the frame, from its BTH on */
	unsigned int off;	/* of the payload, in @skb or @frame */
};

/* Copy @len payload bytes from payload offset @off on into @to. */
static inline int sroce_rxp_copy(const struct sroce_rxp *rx, u32 off,
				 void *to, u32 len)
{
	if (!rx->skb) {
		memcpy(to, rx->frame + rx->off + off, len);
		return 0;
	}
	return skb_copy_bits(rx->skb, rx->off + off, to, len);
}

struct sroce_net {
	struct net *net;
	/* Serializes users/sock4/sock6 and writers of devs. */
	struct mutex lock;
	unsigned int users;
	struct socket *sock4;
	struct socket *sock6;
	/* Registered devices; read under RCU from the receive softirq. */
	struct list_head devs;
	/*
	 * Namespace exit waits here for the last user.  A completion, not a
	 * wait queue: its waiter cannot return (and free the namespace)
	 * before complete() is done with it.
	 */
	struct completion idle;
	bool exiting;		/* namespace exit waits on @idle */
	/* Packets for which no device matched the ingress netdev. */
	atomic64_t rx_drop_no_dev;
	/* RC QPs waiting for the sockets' queues to drain (sroce_tx.c). */
	spinlock_t tx_lock;
	struct list_head tx_waiters;
	/* The sockets' own sk_write_space, put back when they close. */
	void (*write_space_orig)(struct sock *sk);
};

int sroce_net_get(struct net *net, struct sroce_net **snetp);
void sroce_net_put(struct sroce_net *snet);
void sroce_net_publish(struct sroce_dev *sdev);
void sroce_net_unpublish(struct sroce_dev *sdev);

/* The ICRC's CRC-32, chosen at load (sroce_crc.c). */
extern sroce_crc32_fn sroce_crc32;
int sroce_crc_init(void);
void sroce_crc_exit(void);
void sroce_net_rx_local(struct sroce_dev *from, struct sock *sk,
			struct sk_buff *skb);
struct sroce_frame;
void sroce_net_rx_frame(struct sroce_dev *sdev, const struct sroce_frame *f);

int sroce_net_init(void);
void sroce_net_exit(void);

#endif /* SROCE_NET_H */
