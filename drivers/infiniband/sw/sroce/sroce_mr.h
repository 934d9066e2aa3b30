/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory regions.  struct sroce_mem is the data path's object, separate
 * from ib_mr.  Packets and work requests find it by key and use it inside
 * one RCU read-side section, taking no reference: a message writes nothing
 * shared with the MR's other users (in a ping-pong the sender's gather and
 * the receiver's scatter of one buffer run on different CPUs).
 * Deregistration unpublishes the key; the pages go a grace period after
 * the last counted reference (the verb's own, window bindings, bind and
 * invalidate work requests in progress) is dropped, without anyone
 * waiting for it.
 */
#ifndef SROCE_MR_H
#define SROCE_MR_H

#include <linux/refcount.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

struct sk_buff;
struct sroce_dev;
struct sroce_rxp;

enum sroce_mem_type {
	SROCE_MEM_DMA,		/* all of kernel memory, by address */
	SROCE_MEM_USER,		/* pinned user pages (ib_umem) */
	SROCE_MEM_FAST,		/* page list set by IB_WR_REG_MR */
	SROCE_MEM_MW,		/* a memory window onto another object */
};

enum sroce_mem_state {
	SROCE_MEM_FREE,		/* fast-reg MR not (or no longer) mapped */
	SROCE_MEM_VALID,
};

/*
 * A fast-registration mapping (IB_WR_REG_MR): map_mr_sg fills one that no
 * packet uses, and the work request swaps it in (sroce_mem_fast_reg()).
 */
struct sroce_fmap {
	u32 npages;
	u32 page_shift;
	u32 off0;		/* offset of the first byte in pages[0] */
	u64 pages[];		/* kernel virtual (ib_uses_virt_dma) */
};

struct sroce_mem {
	/* The verb's own reference and the counted holders' (bind, invalidate) */
	refcount_t ref;
	/* Frees the object a grace period after the last reference. */
	struct rcu_work free_work;
	enum sroce_mem_type type;
	enum sroce_mem_state state;
	struct ib_pd *pd;
	u32 lkey;
	u32 rkey;
	int access;
	u64 iova;
	u64 length;
	struct ib_umem *umem;
	/* SROCE_MEM_USER: the pinned pages, in order, for byte copies. */
	struct page **upages;
	u32 nupages;
	/* SROCE_MEM_FAST: the mapping in use, and the one map_mr_sg fills */
	struct sroce_fmap *fmap;
	struct sroce_fmap *fstage;
	u32 max_pages;
	/*
	 * Binding (IBTA 10.6.7): a window's state below, an MR's count of
	 * windows bound to it, and for both @dying, set when the verb that
	 * destroys the object has begun (no bind may take it after that).
	 */
	spinlock_t lock;
	bool dying;
	u32 num_mw;		/* MRs: windows bound to it (they pin it) */
	u8 mw_type;		/* IB_MW_TYPE_1 or IB_MW_TYPE_2 */
	u32 mw_qpn;		/* type 2: the QP it is bound through */
	struct sroce_mem *mw_mr;	/* bound MR, referenced */
};

struct sroce_mr {
	struct ib_mr ibmr;
	struct sroce_mem mem;
	u64 ustart;		/* user address it was registered at */
};

static inline struct sroce_mr *to_sroce_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

#define SROCE_MAX_MR		BIT(20)
#define SROCE_MAX_FAST_PAGES	BIT(16)

struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

/*
 * The last object a caller found, for one that looks up the same key
 * packet after packet (a requester gathering from one buffer).  Owned by
 * that caller; valid only while no object has left the key table since
 * (sroce_mem_find()).  Zeroed: empty.
 */
struct sroce_mem_hint {
	struct sroce_mem *mem;
	u64 gone;
	u32 key;
};

struct sroce_mem *sroce_mem_find(struct sroce_dev *sdev, u32 key,
				 struct sroce_mem_hint *hint);

enum sroce_copy_dir {
	SROCE_TO_MEM,		/* buffer -> registered memory */
	SROCE_FROM_MEM,		/* registered memory -> buffer */
};

int sroce_mem_check(const struct sroce_mem *mem, struct ib_pd *pd, u64 iova,
		    u64 len, int access);
void sroce_mem_copy(struct sroce_mem *mem, u64 iova, void *buf, u32 len,
		    enum sroce_copy_dir dir);
int sroce_mem_from_rxp(struct sroce_mem *mem, u64 iova,
		       const struct sroce_rxp *rx, u32 off, u32 len);
int sroce_mem_to_skb(struct sroce_mem *mem, u64 iova, struct sk_buff *skb,
		     u32 len);
typedef int (*sroce_sge_step_t)(struct sroce_mem *mem, u64 iova, u32 len,
				void *arg);

enum ib_wc_status sroce_sge_walk(struct sroce_dev *sdev, struct ib_pd *pd,
				 const struct rxe_sge *sge, u32 num_sge,
				 u32 off, u32 len, int access,
				 struct sroce_mem_hint *hint,
				 sroce_sge_step_t step, void *arg);
enum ib_wc_status sroce_sge_copy(struct sroce_dev *sdev, struct ib_pd *pd,
				 const struct rxe_sge *sge, u32 num_sge,
				 u32 off, void *buf, u32 len,
				 enum sroce_copy_dir dir,
				 struct sroce_mem_hint *hint);
enum ib_wc_status sroce_sge_from_rxp(struct sroce_dev *sdev, struct ib_pd *pd,
				     const struct rxe_sge *sge, u32 num_sge,
				     u32 off, const struct sroce_rxp *rx,
				     u32 len, struct sroce_mem_hint *hint);
u64 sroce_mem_atomic(struct sroce_mem *mem, u64 iova, bool cmp_swap,
		     u64 cmp_add, u64 swap);
int sroce_mem_fast_reg(struct sroce_mr *mr, u32 key, int access);
int sroce_mem_invalidate(struct sroce_dev *sdev, u32 key, struct ib_pd *pd,
			 u32 qpn, bool remote);
struct sroce_mem *sroce_mem_find_remote(struct sroce_dev *sdev, u32 rkey,
					struct ib_pd *pd, u32 qpn, u64 va,
					u32 len, int access,
					struct sroce_mem_hint *hint);

/*
 * The window's data-path object is allocated apart from ib_mw, which
 * ib_core frees as soon as dealloc_mw returns: packets may still be
 * looking at it under RCU.
 */
struct sroce_mw {
	struct ib_mw ibmw;
	struct sroce_mem *mem;
};

static inline struct sroce_mw *to_sroce_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct sroce_mw, ibmw);
}

#define SROCE_MAX_MW		BIT(16)

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);
enum ib_wc_status sroce_mw_bind(struct sroce_dev *sdev, struct ib_pd *pd,
				u32 qpn, u32 mw_rkey, u32 new_rkey, u32 mr_lkey,
				u64 addr, u64 len, int access);
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata);

#endif /* SROCE_MR_H */
