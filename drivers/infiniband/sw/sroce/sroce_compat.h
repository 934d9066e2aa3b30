/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one place where differences between the supported kernels (Debian 12:
 * 6.1 and 6.12) are papered over.  Everything else in sroce is written
 * against the newest API and includes this header for the rest.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/gfp.h>
#include <linux/mm.h>
#include <net/inet_sock.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/*
 * Features are probed from the target kernel's headers by Kbuild (see
 * SROCE_HAVE_* there) rather than keyed on version numbers, so distro
 * backports are handled too.
 *
 * SROCE_HAVE_CQ_ATTRS: 6.11 replaced create_cq's ib_udata argument with
 * the uverbs attribute bundle (which embeds the udata).
 */
#ifdef SROCE_HAVE_CQ_ATTRS
#define SROCE_CQ_UDATA_ARG	struct uverbs_attr_bundle *sroce_cq_arg
#define sroce_cq_udata()	(sroce_cq_arg ? &sroce_cq_arg->driver_udata : NULL)
#else
#define SROCE_CQ_UDATA_ARG	struct ib_udata *sroce_cq_arg
#define sroce_cq_udata()	(sroce_cq_arg)
#endif

/*
 * ATOMIC WRITE (IBTA 1.5) entered the uapi in 6.2 (IB_UVERBS_WR_ATOMIC_WRITE,
 * IB_UVERBS_WC_ATOMIC_WRITE); rdma-core posts the same numbers on any
 * kernel, so sroce serves it on 6.1 too, under its own names.
 */
#define SROCE_WR_ATOMIC_WRITE	15
#define SROCE_WC_ATOMIC_WRITE	9

/*
 * FLUSH (IBTA 1.5 memory placement extensions) entered the uapi in 6.2 as
 * well, but needs MRs registered with IB_ACCESS_FLUSH_GLOBAL, which older
 * cores refuse: there the opcode is served and every FLUSH meets an access
 * error.  SROCE_HAVE_FLUSH: the core knows the MR access and device bits.
 * The user WQE carries the target in the layout below (the same union as
 * the rdma fields of struct rxe_send_wr) and its length in dma.length,
 * which is where rdma-core's ibv_wr_flush() puts it.
 */
#define SROCE_WR_FLUSH		14
#define SROCE_WC_FLUSH		8

struct sroce_flush_wr {
	__aligned_u64 remote_addr;
	__u32 length;
	__u32 rkey;
	__u8 type;		/* placement type: enum ib_placement_type */
	__u8 level;		/* selectivity level: enum ib_selectivity_level */
};

#define SROCE_FLUSH_GLOBAL	1	/* IB_FLUSH_GLOBAL */
#define SROCE_FLUSH_PERSISTENT	2	/* IB_FLUSH_PERSISTENT */
#define SROCE_FLUSH_RANGE	0	/* IB_FLUSH_RANGE */
#define SROCE_FLUSH_MR		1	/* IB_FLUSH_MR */

/*
 * SROCE_ACCESS_FLUSH_REG: the FLUSH access an MR may be registered with.
 * SROCE_QP_ACCESS_FLUSH: what a QP may grant.  ib_cm grants a connected QP
 * both placement types when the device has either, so a QP takes
 * persistence too; no MR can, and a persistent FLUSH fails there.
 */
#ifdef SROCE_HAVE_FLUSH
#define SROCE_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
#define SROCE_ACCESS_FLUSH_PERSISTENT	IB_ACCESS_FLUSH_PERSISTENT
#define SROCE_DEVICE_FLUSH		IB_DEVICE_FLUSH_GLOBAL
#define SROCE_ACCESS_FLUSH_REG		IB_ACCESS_FLUSH_GLOBAL
#define SROCE_QP_ACCESS_FLUSH		(IB_ACCESS_FLUSH_GLOBAL | \
					 IB_ACCESS_FLUSH_PERSISTENT)
#define SROCE_DEVICE_ATOMIC_WRITE	IB_DEVICE_ATOMIC_WRITE
#else
#define SROCE_ACCESS_FLUSH_GLOBAL	BIT(8)
#define SROCE_ACCESS_FLUSH_PERSISTENT	BIT(9)
#define SROCE_DEVICE_FLUSH		0
#define SROCE_ACCESS_FLUSH_REG		0
#define SROCE_QP_ACCESS_FLUSH		0
#define SROCE_DEVICE_ATOMIC_WRITE	0
#endif

/*
 * SROCE_HAVE_INET_FLAGS: 6.7 moved inet_sock's mc_loop bitfield into
 * inet_flags.  ip_sock_set_mc_loop() is not exported on either kernel.
 */
#ifdef SROCE_HAVE_INET_FLAGS
#define sroce_sock_set_mc_loop(sk)	inet_set_bit(MC_LOOP, (sk))
#else
#define sroce_sock_set_mc_loop(sk)	(inet_sk(sk)->mc_loop = 1)
#endif

/*
 * SROCE_HAVE_FRAG_DRAIN: page_frag_cache_drain() (6.10) releases what a
 * private page fragment cache holds; before it, the same is done through
 * the cache's fields.
 */
#ifndef SROCE_HAVE_FRAG_DRAIN
static inline void page_frag_cache_drain(struct page_frag_cache *nc)
{
	if (!nc->va)
		return;
	__page_frag_cache_drain(virt_to_head_page(nc->va), nc->pagecnt_bias);
	nc->va = NULL;
}
#endif

#endif /* SROCE_COMPAT_H */
