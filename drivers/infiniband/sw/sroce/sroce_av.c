// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles.  Context: create/destroy may be called in atomic
 * context unless RDMA_CREATE_AH_SLEEPABLE / RDMA_DESTROY_AH_SLEEPABLE is
 * set, so nothing here sleeps then.
 */
#include <linux/slab.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_user_rxe.h>

#include "sroce_av.h"
#include "sroce_dev.h"

/**
 * sroce_av_from_attr() - build an AV from a RoCE AH attribute
 * @av: destination
 * @attr: attribute with GRH and a resolved sgid_attr
 *
 * RoCEv2 (Annex A17.4) needs a GRH and a RoCE v2 source GID; source and
 * destination must be of the same IP family.
 *
 * Return: 0 or -EINVAL.
 */
int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	struct sockaddr_storage s, d;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr || sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	av->network_type = rdma_gid_attr_network_type(sgid_attr);
	if (av->network_type == RDMA_NETWORK_IPV4) {
		if (!ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw))
			return -EINVAL;
	} else if (av->network_type == RDMA_NETWORK_IPV6) {
		if (ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw))
			return -EINVAL;
	} else {
		return -EINVAL;
	}

	rdma_gid2ip((struct sockaddr *)&s, &sgid_attr->gid);
	rdma_gid2ip((struct sockaddr *)&d, &grh->dgid);
	if (av->network_type == RDMA_NETWORK_IPV4) {
		av->saddr.v4 = ((struct sockaddr_in *)&s)->sin_addr;
		av->daddr.v4 = ((struct sockaddr_in *)&d)->sin_addr;
	} else {
		av->saddr.v6 = ((struct sockaddr_in6 *)&s)->sin6_addr;
		av->daddr.v6 = ((struct sockaddr_in6 *)&d)->sin6_addr;
	}
	av->dgid = grh->dgid;
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->flow_label = grh->flow_label;
	av->sl = rdma_ah_get_sl(attr);
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	return 0;
}

/**
 * sroce_av_to_attr() - the inverse, for query verbs
 * @av: source
 * @attr: destination; sgid_attr is left NULL (ib_core resolves it)
 */
void sroce_av_to_attr(const struct sroce_av *av, struct rdma_ah_attr *attr)
{
	union ib_gid dgid = av->dgid;	/* rdma_ah_set_grh() takes non-const */

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_grh(attr, &dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->traffic_class);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
}

int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	bool sleepable = init->flags & RDMA_CREATE_AH_SLEEPABLE;
	struct sroce_dev *sdev = to_sroce_dev(ibah->device);
	gfp_t gfp = sleepable ? GFP_KERNEL : GFP_ATOMIC;
	struct sroce_ah *ah = to_sroce_ah(ibah);
	struct rxe_create_ah_resp resp = {};
	unsigned long irqflags;
	int err;

	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = sroce_res_get(sdev, SROCE_RES_AH);
	if (err)
		return err;

	ah->av = kmalloc(sizeof(*ah->av), gfp);
	if (!ah->av) {
		err = -ENOMEM;
		goto err_res;
	}
	err = sroce_av_from_attr(ah->av, init->ah_attr);
	if (err)
		goto err_free;
	ah->av->pd = ibah->pd;

	/*
	 * AH number 0 means "AV in the WQE" in the rxe ABI: start at 1.
	 * Reserved here, published only once the caller has its number:
	 * the transmit path must never find an AH that is still undone.
	 * IRQs saved, not enabled at unlock: a caller that cannot sleep
	 * (ib_cm) holds its own irqsave lock.  Only GFP_KERNEL, with IRQs
	 * enabled, lets __xa_alloc_cyclic() drop the lock.
	 */
	xa_lock_irqsave(&sdev->ah_xa, irqflags);
	err = __xa_alloc_cyclic(&sdev->ah_xa, &ah->ah_num, NULL,
				XA_LIMIT(1, SROCE_MAX_AH - 1), &sdev->ah_next,
				gfp);
	xa_unlock_irqrestore(&sdev->ah_xa, irqflags);
	if (err < 0)
		goto err_free;

	if (udata) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	/* The slot is reserved: storing allocates nothing and cannot fail. */
	xa_lock_irqsave(&sdev->ah_xa, irqflags);
	__xa_store(&sdev->ah_xa, ah->ah_num, ah->av, gfp);
	xa_unlock_irqrestore(&sdev->ah_xa, irqflags);
	return 0;

err_erase:
	xa_lock_irqsave(&sdev->ah_xa, irqflags);
	__xa_erase(&sdev->ah_xa, ah->ah_num);
	xa_unlock_irqrestore(&sdev->ah_xa, irqflags);
err_free:
	kfree(ah->av);	/* never published */
err_res:
	sroce_res_put(sdev, SROCE_RES_AH);
	return err == -EBUSY ? -ENOMEM : err;
}

int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	sroce_av_to_attr(to_sroce_ah(ibah)->av, attr);
	return 0;
}

int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_dev *sdev = to_sroce_dev(ibah->device);
	struct sroce_ah *ah = to_sroce_ah(ibah);
	unsigned long irqflags;

	xa_lock_irqsave(&sdev->ah_xa, irqflags);
	__xa_erase(&sdev->ah_xa, ah->ah_num);
	xa_unlock_irqrestore(&sdev->ah_xa, irqflags);
	/* The transmit path may be reading it under RCU. */
	kfree_rcu(ah->av, rcu);
	sroce_res_put(sdev, SROCE_RES_AH);
	return 0;
}
