/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Address vectors and address handles.  An AV is everything the transmit
 * path needs to address a RoCEv2 peer; it lives apart from ib_ah so the
 * data path can read it under RCU by AH number (the rxe user ABI names AHs
 * by number in UD work requests) while ib_core frees the ib_ah itself.
 */
#ifndef SROCE_AV_H
#define SROCE_AV_H

#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/rcupdate.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>

struct sroce_dev;

struct sroce_av {
	/* RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6 */
	u8 network_type;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
	u8 sl;
	u32 flow_label;
	union ib_gid dgid;
	u8 dmac[ETH_ALEN];
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} saddr, daddr;
	/* The QP's route cache (RC/UC); NULL for AHs: looked up per packet */
	struct dst_cache *dcache;
	/* AHs: the PD, which a UD QP using the AH by number must share */
	struct ib_pd *pd;
	struct rcu_head rcu;
};

struct sroce_ah {
	struct ib_ah ibah;
	struct sroce_av *av;
	u32 ah_num;
};

static inline struct sroce_ah *to_sroce_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

#define SROCE_MAX_AH	BIT(20)

int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr);
void sroce_av_to_attr(const struct sroce_av *av, struct rdma_ah_attr *attr);

int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags);

#endif /* SROCE_AV_H */
