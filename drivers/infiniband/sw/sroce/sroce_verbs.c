// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Verb callbacks.  They validate and copy caller input and nothing more;
 * objects live in their own files as the data path grows.
 *
 * Context: process context, called by ib_core/uverbs; may sleep.
 *
 * The objects live in their own files; this one has the device and port
 * queries, user contexts, protection domains, the limits every object is
 * counted against (sroce_res_get()) and the ops table.
 */
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "sroce/sroce_wire.h"
#include "sroce_cc.h"
#include "sroce_av.h"
#include "sroce_compat.h"
#include "sroce_cq.h"
#include "sroce_dev.h"
#include "sroce_mcast.h"
#include "sroce_mr.h"
#include "sroce_qp.h"
#include "sroce_srq.h"
#include "sroce_queue.h"
#include "sroce_stats.h"
#include "sroce_verbs.h"

#define SROCE_VENDOR_ID		0xffffff	/* same as rdma_rxe: no OUI */
#define SROCE_GID_TBL_LEN	1024
#define SROCE_MAX_PD		0x7ffc
#define SROCE_MAX_CQ		0x3fff
#define SROCE_MAX_MSG_SZ	0x80000000u	/* 2 GiB, IBTA maximum */

/**
 * sroce_verbs_init_attrs() - fill the device attributes ib_core reports
 * @sdev: device being created, before registration
 */
void sroce_verbs_init_attrs(struct sroce_dev *sdev)
{
	struct ib_device_attr *attr = &sdev->attr;

	addrconf_addr_eui48((unsigned char *)&sdev->ibdev.node_guid,
			    sdev->ndev->dev_addr);

	memset(attr, 0, sizeof(*attr));
	attr->sys_image_guid = sdev->ibdev.node_guid;
	attr->vendor_id = SROCE_VENDOR_ID;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_pd = SROCE_MAX_PD;
	attr->max_pkeys = 1;
	attr->max_cq = SROCE_MAX_CQ;
	attr->max_mr = SROCE_MAX_MR - 1;
	attr->max_ah = SROCE_MAX_AH - 1;
	attr->max_qp = SROCE_MAX_QP;
	attr->max_qp_wr = SROCE_MAX_QP_WR;
	attr->max_send_sge = SROCE_MAX_SGE;
	attr->max_recv_sge = SROCE_MAX_SGE;
	attr->max_sge_rd = SROCE_MAX_SGE;
	attr->max_qp_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SROCE_MAX_QP * SROCE_MAX_RD_ATOMIC;
	/* Atomics run on the CPU's atomic instructions: coherent device-wide. */
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 SROCE_DEVICE_ATOMIC_WRITE |
				 SROCE_DEVICE_FLUSH;
	attr->max_mw = SROCE_MAX_MW;
	attr->max_srq = SROCE_MAX_QP;
	attr->max_srq_wr = SROCE_MAX_QP_WR;
	attr->max_srq_sge = SROCE_MAX_SGE;
	attr->max_fast_reg_page_list_len = SROCE_MAX_FAST_PAGES;
	attr->max_cqe = SROCE_MAX_CQE;
	attr->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SROCE_MAX_TOT_MCAST_QP_ATTACH;
	attr->local_ca_ack_delay = 15;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
}

/* The limit query_device reports for each enum sroce_res. */
static u32 sroce_res_max(const struct sroce_dev *sdev, enum sroce_res r)
{
	const struct ib_device_attr *a = &sdev->attr;

	switch (r) {
	case SROCE_RES_PD:
		return a->max_pd;
	case SROCE_RES_CQ:
		return a->max_cq;
	case SROCE_RES_QP:
		return a->max_qp;
	case SROCE_RES_SRQ:
		return a->max_srq;
	case SROCE_RES_MR:
		return a->max_mr;
	case SROCE_RES_MW:
		return a->max_mw;
	default:
		return a->max_ah;
	}
}

/**
 * sroce_res_get() - count one more object of kind @r on @sdev
 * @sdev: device
 * @r: kind
 *
 * What query_device advertises is what a process (or all of them) can
 * have: a device-wide limit, as on hardware.  Any context.
 *
 * Return: 0, or -ENOMEM at the limit.
 */
int sroce_res_get(struct sroce_dev *sdev, enum sroce_res r)
{
	if (atomic_inc_return(&sdev->res[r]) > sroce_res_max(sdev, r)) {
		atomic_dec(&sdev->res[r]);
		return -ENOMEM;
	}
	return 0;
}

/** sroce_res_put() - one object of kind @r less; @sdev: device */
void sroce_res_put(struct sroce_dev *sdev, enum sroce_res r)
{
	atomic_dec(&sdev->res[r]);
}

static int sroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	/* The rxe ABI defines no driver-specific query data. */
	if (udata->inlen || udata->outlen)
		return -EINVAL;
	*attr = to_sroce_dev(ibdev)->attr;
	return 0;
}

static int sroce_query_port(struct ib_device *ibdev, u32 port_num,
			    struct ib_port_attr *attr)
{
	struct sroce_dev *sdev = to_sroce_dev(ibdev);
	unsigned int mtu = sroce_path_mtu(READ_ONCE(sdev->ndev->mtu));

	/* ib_core zeroed *attr; fill what a RoCE port has. */
	attr->state = sroce_port_state(sdev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	/* An MTU below the minimum is refused at link add; clamp if lowered. */
	attr->active_mtu = mtu ? sroce_mtu_to_ib_enum(mtu) : IB_MTU_256;
	attr->gid_tbl_len = SROCE_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SROCE_MAX_MSG_SZ;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;
	attr->ip_gids = true;

	/*
	 * Speed comes from ethtool; a netdev that is going away has none, and
	 * that must not fail the query (ib_core's cache refresh runs then).
	 */
	if (ib_get_eth_speed(ibdev, port_num, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int sroce_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				    struct ib_port_immutable *immutable)
{
	/* RoCEv2 only: no RoCEv1 (Ethertype 0x8915) GIDs. */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = SROCE_GID_TBL_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int sroce_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			    u16 *pkey)
{
	/* RoCE has the default full-membership P_Key only (A17.9.3). */
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev,
						 u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int sroce_alloc_ucontext(struct ib_ucontext *ibuc,
				struct ib_udata *udata)
{
	return 0;
}

static void sroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * ib_core disassociates every ucontext before it moves the device to another
 * rdma network namespace (exclusive mode) and destroys the objects behind the
 * process's back. Nothing here needs undoing: a ring's pages were inserted
 * with vm_insert_page(), so they stay referenced by the process's mapping
 * until it unmaps them, and sroce has no doorbell or device pages to revoke.
 */
static void sroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return sroce_res_get(to_sroce_dev(ibpd->device), SROCE_RES_PD);
}

static int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	sroce_res_put(to_sroce_dev(ibpd->device), SROCE_RES_PD);
	return 0;
}

static int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	return sroce_cc_fill_res_qp(msg, to_sroce_qp(ibqp));
}

const struct ib_device_ops sroce_verbs_ops = {
	.alloc_hw_port_stats	= sroce_alloc_hw_port_stats,
	.alloc_mr		= sroce_alloc_mr,
	.alloc_mw		= sroce_alloc_mw,
	.alloc_pd		= sroce_alloc_pd,
	.alloc_ucontext		= sroce_alloc_ucontext,
	.attach_mcast		= sroce_attach_mcast,
	.create_ah		= sroce_create_ah,
	.create_user_ah		= sroce_create_ah,
	.create_cq		= sroce_create_cq,
	.create_qp		= sroce_create_qp,
	.create_srq		= sroce_create_srq,
	.dealloc_pd		= sroce_dealloc_pd,
	.dealloc_ucontext	= sroce_dealloc_ucontext,
	.disassociate_ucontext	= sroce_disassociate_ucontext,
	.dealloc_mw		= sroce_dealloc_mw,
	.dereg_mr		= sroce_dereg_mr,
	.destroy_ah		= sroce_destroy_ah,
	.destroy_cq		= sroce_destroy_cq,
	.destroy_qp		= sroce_destroy_qp,
	.destroy_srq		= sroce_destroy_srq,
	.detach_mcast		= sroce_detach_mcast,
	.get_dma_mr		= sroce_get_dma_mr,
	.get_hw_stats		= sroce_get_hw_stats,
	.get_link_layer		= sroce_get_link_layer,
	.get_port_immutable	= sroce_get_port_immutable,
	.map_mr_sg		= sroce_map_mr_sg,
	.mmap			= sroce_mmap,
	.mmap_free		= sroce_mmap_free,
	.modify_qp		= sroce_modify_qp,
	.modify_srq		= sroce_modify_srq,
	.peek_cq		= sroce_peek_cq,
	.poll_cq		= sroce_poll_cq,
	.post_recv		= sroce_post_recv,
	.post_send		= sroce_post_send,
	.post_srq_recv		= sroce_post_srq_recv,
	.query_ah		= sroce_query_ah,
	.query_device		= sroce_query_device,
	.query_pkey		= sroce_query_pkey,
	.query_qp		= sroce_query_qp,
	.fill_res_qp_entry	= sroce_fill_res_qp_entry,
	.query_srq		= sroce_query_srq,
	.query_port		= sroce_query_port,
	.reg_user_mr		= sroce_reg_user_mr,
	.rereg_user_mr		= sroce_rereg_user_mr,
	.resize_cq		= sroce_resize_cq,
	.req_notify_cq		= sroce_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
};
