// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory registration.  Context: the verbs run in process context;
 * sroce_mem_get()/put() in any context, sroce_mem_find*() in any context
 * under rcu_read_lock().
 *
 * Keys: index << 8 | key byte (IBTA 10.6.4: the low 8 bits are the
 * consumer-owned "key" part a fast registration may change).  lkey and rkey
 * are the same value.  The index lives in the device's mr_xa.
 */
#include <linux/highmem.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "sroce_compat.h"
#include "sroce_dev.h"
#include "sroce_mr.h"
#include "sroce_net.h"

#define SROCE_ACCESS_SUPPORTED	(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND | \
				 SROCE_ACCESS_FLUSH_REG)

/*
 * IBTA 10.6.3.1 / o10-36: remote write and remote atomic access require
 * local write.
 */
static int sroce_check_access(int access)
{
	/* Optional bits (IB_ACCESS_OPTIONAL) are hints a driver may ignore. */
	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~SROCE_ACCESS_SUPPORTED)
		return -EOPNOTSUPP;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

static void sroce_mem_free_work(struct work_struct *work);

/* Fields every memory object starts with; its own reference held. */
static void sroce_mem_init(struct sroce_mem *mem, enum sroce_mem_type type,
			   struct ib_pd *pd)
{
	refcount_set(&mem->ref, 1);
	INIT_RCU_WORK(&mem->free_work, sroce_mem_free_work);
	spin_lock_init(&mem->lock);
	mem->type = type;
	mem->pd = pd;
}

/* Reserve a key index for @mem; published once complete (two phases). */
static int sroce_mem_reserve(struct sroce_dev *sdev, struct sroce_mem *mem)
{
	u32 index;
	int err;

	err = xa_alloc_cyclic(&sdev->mr_xa, &index, NULL,
			      XA_LIMIT(1, SROCE_MAX_MR - 1), &sdev->mr_next,
			      GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	mem->lkey = index << 8 | (get_random_u32() & 0xff);
	mem->rkey = mem->lkey;
	return 0;
}

static void sroce_mem_publish(struct sroce_dev *sdev, struct sroce_mem *mem)
{
	xa_store(&sdev->mr_xa, mem->lkey >> 8, mem, GFP_KERNEL);
}

static struct sroce_mr *sroce_mr_alloc(struct ib_pd *ibpd,
				       enum sroce_mem_type type, int access)
{
	struct sroce_dev *sdev = to_sroce_dev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	err = sroce_res_get(sdev, SROCE_RES_MR);
	if (err)
		return ERR_PTR(err);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		sroce_res_put(sdev, SROCE_RES_MR);
		return ERR_PTR(-ENOMEM);
	}
	sroce_mem_init(&mr->mem, type, ibpd);
	mr->mem.state = type == SROCE_MEM_FAST ? SROCE_MEM_FREE :
						 SROCE_MEM_VALID;
	mr->mem.access = access & SROCE_ACCESS_SUPPORTED;
	err = sroce_mem_reserve(sdev, &mr->mem);
	if (err) {
		sroce_res_put(sdev, SROCE_RES_MR);
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->ibmr.lkey = mr->mem.lkey;
	mr->ibmr.rkey = mr->mem.rkey;
	return mr;
}

/*
 * Take @mem's key out of the table; hints found before are dropped from
 * now on.  The object is freed a grace period after its last reference
 * (sroce_mem_put()), as for any lookup.
 */
static void sroce_mem_unpublish(struct sroce_dev *sdev, struct sroce_mem *mem)
{
	xa_erase(&sdev->mr_xa, mem->lkey >> 8);
	/* Fully ordered: a reader that sees the count sees the erase. */
	atomic64_inc_return(&sdev->mr_gone);
}

/*
 * A grace period after the last reference: no packet can be using the
 * object (data-path users take none: sroce_mem_find()), and no holder has
 * one.  Process context, as unpinning pages needs.
 */
static void sroce_mem_free_work(struct work_struct *work)
{
	struct sroce_mem *mem = container_of(to_rcu_work(work),
					     struct sroce_mem, free_work);

	kvfree(mem->upages);
	if (mem->umem)
		ib_umem_release(mem->umem);
	kfree(mem->fmap);
	kfree(mem->fstage);
	if (mem->type == SROCE_MEM_MW)
		kfree(mem);
	else
		kfree(container_of(mem, struct sroce_mr, mem));
}

/*
 * Drop a reference; the last one frees @mem after a grace period, with no
 * one waiting for it: deregistration in bulk (registration caches, process
 * exit) costs no grace period per object.  Any context.
 */
static void sroce_mem_put(struct sroce_mem *mem)
{
	if (refcount_dec_and_test(&mem->ref))
		queue_rcu_work(sroce_wq, &mem->free_work);
}

/* Undo of sroce_mr_alloc() and of registration, for the verbs. */
static void sroce_mr_free(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	sroce_mem_unpublish(sdev, &mr->mem);
	sroce_res_put(sdev, SROCE_RES_MR);
	sroce_mem_put(&mr->mem);
}

/**
 * sroce_mem_drain() - wait until every freed memory object is gone
 *
 * For device removal and module unload: freeing releases user pages
 * through the device (ib_umem_release()), which must still exist.
 */
void sroce_mem_drain(void)
{
	rcu_barrier();
	flush_workqueue(sroce_wq);
}

struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct sroce_mr *mr;
	int err;

	err = sroce_check_access(access);
	if (err)
		return ERR_PTR(err);
	mr = sroce_mr_alloc(ibpd, SROCE_MEM_DMA, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->mem.length = U64_MAX;
	sroce_mem_publish(to_sroce_dev(ibpd->device), &mr->mem);
	return &mr->ibmr;
}

static int sroce_mem_collect_pages(struct sroce_mem *mem)
{
	struct sg_page_iter it;
	u32 i = 0;

	mem->nupages = ib_umem_num_pages(mem->umem);
	mem->upages = kvcalloc(mem->nupages, sizeof(*mem->upages), GFP_KERNEL);
	if (!mem->upages)
		return -ENOMEM;
	for_each_sgtable_page(&mem->umem->sgt_append.sgt, &it, 0) {
		if (i == mem->nupages)
			break;
		mem->upages[i++] = sg_page_iter_page(&it);
	}
	mem->nupages = i;
	return 0;
}

struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				u64 iova, int access, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibpd->device);
	struct ib_umem *umem;
	struct sroce_mr *mr;
	int err;

	err = sroce_check_access(access);
	if (err)
		return ERR_PTR(err);
	if (!len || start + len < start || iova + len < iova)
		return ERR_PTR(-EINVAL);

	umem = ib_umem_get(ibpd->device, start, len, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);

	mr = sroce_mr_alloc(ibpd, SROCE_MEM_USER, access);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		return ERR_CAST(mr);
	}
	mr->mem.umem = umem;
	err = sroce_mem_collect_pages(&mr->mem);
	if (err) {
		sroce_mr_free(sdev, mr);
		return ERR_PTR(err);
	}
	mr->mem.iova = iova;
	mr->mem.length = len;
	mr->ustart = start;
	mr->ibmr.iova = iova;
	mr->ibmr.length = len;
	sroce_mem_publish(sdev, &mr->mem);
	return &mr->ibmr;
}

static struct sroce_fmap *sroce_fmap_alloc(u32 max_pages)
{
	return kzalloc(struct_size_t(struct sroce_fmap, pages, max_pages),
		       GFP_KERNEL);
}

struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_dev *sdev = to_sroce_dev(ibpd->device);
	struct sroce_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FAST_PAGES)
		return ERR_PTR(-EINVAL);

	mr = sroce_mr_alloc(ibpd, SROCE_MEM_FAST, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->mem.fmap = sroce_fmap_alloc(max_num_sg);
	mr->mem.fstage = sroce_fmap_alloc(max_num_sg);
	if (!mr->mem.fmap || !mr->mem.fstage) {
		sroce_mr_free(sdev, mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->mem.max_pages = max_num_sg;
	sroce_mem_publish(sdev, &mr->mem);
	return &mr->ibmr;
}

static int sroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mem *mem = &to_sroce_mr(ibmr)->mem;
	struct sroce_fmap *m = mem->fstage;

	if (m->npages >= mem->max_pages)
		return -ENOMEM;
	m->pages[m->npages++] = addr;
	return 0;
}

/*
 * Builds the page list a later IB_WR_REG_MR makes valid, in the staging
 * mapping: the MR may be in use (a ULP maps it again before the
 * invalidation it posted ahead of the registration has run), and keeps
 * its mapping until the registration (IBTA 10.6.3.6).
 */
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mem *mem = &to_sroce_mr(ibmr)->mem;
	struct sroce_fmap *m = mem->fstage;

	if (mem->type != SROCE_MEM_FAST || !is_power_of_2(ibmr->page_size) ||
	    ibmr->page_size < SZ_4K || ibmr->page_size > SZ_1G)
		return -EINVAL;
	m->npages = 0;
	m->page_shift = ilog2(ibmr->page_size);
	/* Where the MR's first byte sits in the first page. */
	m->off0 = ibmr->iova & (ibmr->page_size - 1);
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_set_page);
}

int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_mem *mem = &to_sroce_mr(ibmr)->mem;
	unsigned long flags;

	/*
	 * Bound memory windows pin the MR (IBTA 10.6.7.2.4).  Tested under
	 * the lock a bind takes to add one, which @dying then refuses.
	 */
	spin_lock_irqsave(&mem->lock, flags);
	if (mem->num_mw) {
		spin_unlock_irqrestore(&mem->lock, flags);
		return -EBUSY;
	}
	mem->dying = true;
	spin_unlock_irqrestore(&mem->lock, flags);
	sroce_mr_free(to_sroce_dev(ibmr->device), to_sroce_mr(ibmr));
	return 0;
}

/*
 * What every lookup checks of the object it found, under RCU: the whole
 * key (the key byte that fast registration and binding change, too).
 */
static bool sroce_mem_key_ok(const struct sroce_mem *mem, u32 key)
{
	return mem && READ_ONCE(mem->lkey) == key;
}

/**
 * sroce_mem_get() - find a valid memory object by lkey/rkey and pin it
 * @sdev: device
 * @key: the key from a work request
 *
 * For a holder that may outlive an RCU read-side section; the data path
 * uses sroce_mem_find().
 *
 * Return: the object with a reference, or NULL.
 */
static struct sroce_mem *sroce_mem_get(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mem *mem;

	rcu_read_lock();
	mem = xa_load(&sdev->mr_xa, key >> 8);
	if (!sroce_mem_key_ok(mem, key) || !refcount_inc_not_zero(&mem->ref))
		mem = NULL;
	rcu_read_unlock();
	return mem;
}

/**
 * sroce_mem_find() - find a memory object by lkey/rkey for one access
 * @sdev: device
 * @key: the key (peer-controlled in a packet)
 * @hint: the caller's last lookup, updated with what was found
 *
 * Context: under rcu_read_lock(); the object stays usable until the
 * caller leaves that section (deregistration waits a grace period after
 * unpublishing).  No reference is taken.
 *
 * A hint taken before no object left the table is still a live object:
 * whoever frees one first bumps mr_gone, then waits a grace period.
 * Either way the whole key is checked.
 *
 * Return: the object, or NULL.
 */
struct sroce_mem *sroce_mem_find(struct sroce_dev *sdev, u32 key,
				 struct sroce_mem_hint *hint)
{
	struct sroce_mem *mem;
	u64 gone;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "MR lookup outside RCU");
	gone = atomic64_read_acquire(&sdev->mr_gone);
	if (hint->mem && hint->key == key && hint->gone == gone)
		mem = hint->mem;
	else
		mem = xa_load(&sdev->mr_xa, key >> 8);
	if (!sroce_mem_key_ok(mem, key))
		return NULL;
	hint->mem = mem;
	hint->key = key;
	hint->gone = gone;
	return mem;
}

/**
 * sroce_mem_check() - may @len bytes at @iova be accessed through @mem?
 * @mem: memory object (from sroce_mem_find() or sroce_mem_get())
 * @pd: the PD of the QP doing the access
 * @iova: start address (peer-controlled for remote access)
 * @len: length
 * @access: IB_ACCESS_* bits required (0 for a local read)
 *
 * Return: 0, or -EACCES (rights, PD, state) / -EFAULT (bounds), which the
 * callers turn into the IBTA completion status or NAK for their role.
 */
int sroce_mem_check(const struct sroce_mem *mem, struct ib_pd *pd, u64 iova,
		    u64 len, int access)
{
	/* Acquire: pairs with the release in sroce_mem_fast_reg(). */
	enum sroce_mem_state state = smp_load_acquire(&mem->state);

	if (mem->type == SROCE_MEM_MW ||
	    state != SROCE_MEM_VALID || mem->pd != pd ||
	    (mem->access & access) != access)
		return -EACCES;
	if (mem->type == SROCE_MEM_DMA)
		return 0;
	if (iova < mem->iova || len > mem->length ||
	    iova - mem->iova > mem->length - len)
		return -EFAULT;
	return 0;
}

/*
 * Kernel virtual address of byte @iova of @mem (checked by the caller) and
 * how many bytes are contiguous from there.  User pages are mapped with
 * kmap_local_page(); *@page tells the caller to unmap.
 */
static void *sroce_mem_map(struct sroce_mem *mem, u64 iova, u32 *contig,
			   struct page **page)
{
	const struct sroce_fmap *m;
	u32 shift;
	u64 off, psz;
	u8 *va;

	*page = NULL;
	switch (mem->type) {
	case SROCE_MEM_DMA:
		/* ib_uses_virt_dma(): "DMA" addresses are kernel virtual. */
		*contig = U32_MAX;
		return (void *)(uintptr_t)iova;
	case SROCE_MEM_USER:
		off = iova - mem->iova + ib_umem_offset(mem->umem);
		if ((off >> PAGE_SHIFT) >= mem->nupages)
			return NULL;	/* cannot happen after sroce_mem_check() */
		*page = mem->upages[off >> PAGE_SHIFT];
		*contig = PAGE_SIZE - (off & ~PAGE_MASK);
		va = kmap_local_page(*page);
		return va + (off & ~PAGE_MASK);
	case SROCE_MEM_FAST:
		/*
		 * Acquire: the mapping is complete before it is swapped in
		 * (sroce_mem_fast_reg()).  The index is checked against the
		 * mapping's own count, whatever a later map_mr_sg writes.
		 */
		m = smp_load_acquire(&mem->fmap);
		shift = READ_ONCE(m->page_shift);
		psz = 1ULL << shift;
		off = iova - mem->iova + READ_ONCE(m->off0);
		if ((off >> shift) >= READ_ONCE(m->npages))
			return NULL;
		*contig = psz - (off & (psz - 1));
		return (void *)(uintptr_t)(READ_ONCE(m->pages[off >> shift]) +
					   (off & (psz - 1)));
	case SROCE_MEM_MW:
		break;	/* windows resolve to their MR first */
	}
	return NULL;
}

/**
 * sroce_mem_copy() - copy between registered memory and a kernel buffer
 * @mem: the memory, found by sroce_mem_find() (or referenced)
 * @iova: start address, checked with sroce_mem_check()
 * @buf: kernel buffer
 * @len: bytes
 * @dir: direction
 */
void sroce_mem_copy(struct sroce_mem *mem, u64 iova, void *buf, u32 len,
		    enum sroce_copy_dir dir)
{
	struct page *page;
	u32 contig, n;
	void *va;

	while (len) {
		va = sroce_mem_map(mem, iova, &contig, &page);
		if (!va)
			return;
		n = min(len, contig);
		if (dir == SROCE_TO_MEM)
			memcpy(va, buf, n);
		else
			memcpy(buf, va, n);
		if (page)
			kunmap_local(va);
		buf += n;
		iova += n;
		len -= n;
	}
}

/**
 * sroce_mem_from_rxp() - copy packet payload into registered memory
 * @mem: the memory, found and checked for @iova..@iova+@len
 * @iova: destination address
 * @rx: the packet
 * @off: payload offset of the first byte
 * @len: bytes
 *
 * Return: 0, or -EFAULT if the packet is shorter than claimed.
 */
int sroce_mem_from_rxp(struct sroce_mem *mem, u64 iova,
		       const struct sroce_rxp *rx, u32 off, u32 len)
{
	struct page *page;
	u32 contig, n;
	void *va;
	int err;

	while (len) {
		va = sroce_mem_map(mem, iova, &contig, &page);
		if (!va)
			return -EFAULT;
		n = min(len, contig);
		err = sroce_rxp_copy(rx, off, va, n);
		if (page)
			kunmap_local(va);
		if (err)
			return -EFAULT;
		off += n;
		iova += n;
		len -= n;
	}
	return 0;
}

/**
 * sroce_mem_to_skb() - attach registered memory to a packet, uncopied
 * @mem: user memory, found by sroce_mem_find() and checked for
 *       @iova..@iova+@len
 * @iova: first byte
 * @skb: the packet: its pages become page fragments, each referenced
 * @len: bytes
 *
 * The packet keeps the pages alive, not the MR: a deregistered MR's
 * pages stay until every packet made from them is freed.  Only RC sends
 * such packets (sroce_req.c), whose buffers return to the user once the
 * responder acknowledged the data, not when the packet left.
 *
 * Return: 0; -EOPNOTSUPP for memory other than user pages, -E2BIG when
 * the packet ran out of fragment slots (one is kept for the ICRC): the
 * caller copies instead.
 */
int sroce_mem_to_skb(struct sroce_mem *mem, u64 iova, struct sk_buff *skb,
		     u32 len)
{
	struct page *page;
	u64 off;
	u32 n, poff;
	int i;

	if (mem->type != SROCE_MEM_USER)
		return -EOPNOTSUPP;
	/*
	 * The pages are the process's, which may write them at any time:
	 * whatever would change a fragment in place (IPsec ESP encrypts in
	 * place; checksum helpers) must copy it first (skb_has_shared_frag()).
	 */
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	while (len) {
		off = iova - mem->iova + ib_umem_offset(mem->umem);
		if ((off >> PAGE_SHIFT) >= mem->nupages)
			return -EFAULT;	/* not after sroce_mem_check() */
		page = mem->upages[off >> PAGE_SHIFT];
		poff = off & ~PAGE_MASK;
		n = min_t(u32, len, PAGE_SIZE - poff);
		i = skb_shinfo(skb)->nr_frags;
		if (i >= MAX_SKB_FRAGS - 1)
			return -E2BIG;
		get_page(page);
		skb_add_rx_frag(skb, i, page, poff, n, n);
		iova += n;
		len -= n;
	}
	return 0;
}

/*
 * The walk itself, inlined into the copy and scatter helpers of this file
 * with their step known: every small message's gather or scatter (one
 * SGE, usually) then costs no indirect call per piece.
 */
static __always_inline enum ib_wc_status
__sroce_sge_walk(struct sroce_dev *sdev, struct ib_pd *pd,
		 const struct rxe_sge *sge, u32 num_sge, u32 off, u32 len,
		 int access, struct sroce_mem_hint *hint,
		 sroce_sge_step_t step, void *arg)
{
	struct sroce_mem_hint none = {};
	struct sroce_mem *mem;
	u32 i, n;
	int err;

	if (!hint)
		hint = &none;
	for (i = 0; i < num_sge && len; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = min(len, sge[i].length - off);
		rcu_read_lock();
		mem = sroce_mem_find(sdev, sge[i].lkey, hint);
		err = mem ? sroce_mem_check(mem, pd, sge[i].addr + off, n,
					    access) : -EACCES;
		if (!err)
			err = step(mem, sge[i].addr + off, n, arg);
		rcu_read_unlock();
		if (err)
			return IB_WC_LOC_PROT_ERR;
		len -= n;
		off = 0;
	}
	return len ? IB_WC_LOC_LEN_ERR : IB_WC_SUCCESS;
}

/**
 * sroce_sge_walk() - visit a byte range of an SGE list, one MR at a time
 * @sdev: device
 * @pd: protection domain of the QP
 * @sge: the SGE list (a kernel copy)
 * @num_sge: its length
 * @off: message offset of the first byte
 * @len: bytes
 * @access: IB_ACCESS_* bits each lkey must grant (0 to read)
 * @hint: the caller's last lookup (sroce_mem_find()), or NULL
 * @step: called for each piece with its memory, checked for exactly the
 *        bytes visited, under rcu_read_lock() (it must not sleep);
 *        non-zero stops the walk
 * @arg: passed to @step
 *
 * Every sender gather, receive scatter and zero-copy attach goes through
 * here, so lkey lookup, rights and bounds are checked one way only.
 *
 * Return: IB_WC_SUCCESS, IB_WC_LOC_PROT_ERR (bad lkey, rights, bounds, or
 * @step failed) or IB_WC_LOC_LEN_ERR (the list is too short).
 */
enum ib_wc_status sroce_sge_walk(struct sroce_dev *sdev, struct ib_pd *pd,
				 const struct rxe_sge *sge, u32 num_sge,
				 u32 off, u32 len, int access,
				 struct sroce_mem_hint *hint,
				 sroce_sge_step_t step, void *arg)
{
	return __sroce_sge_walk(sdev, pd, sge, num_sge, off, len, access, hint,
				step, arg);
}

struct sroce_from_rxp_arg {
	const struct sroce_rxp *rx;
	u32 off;
};

static int sroce_from_rxp_step(struct sroce_mem *mem, u64 iova, u32 len,
			       void *arg)
{
	struct sroce_from_rxp_arg *a = arg;
	int err = sroce_mem_from_rxp(mem, iova, a->rx, a->off, len);

	a->off += len;
	return err;
}

/**
 * sroce_sge_from_rxp() - scatter a packet's payload over an SGE list
 * @sdev: device
 * @pd: protection domain of the QP
 * @sge: the SGE list (a kernel copy)
 * @num_sge: its length
 * @off: message offset of the payload's first byte
 * @rx: the packet
 * @len: payload bytes
 * @hint: as for sroce_sge_walk()
 *
 * Return: as sroce_sge_walk(), each lkey needing local write access.
 */
enum ib_wc_status sroce_sge_from_rxp(struct sroce_dev *sdev, struct ib_pd *pd,
				     const struct rxe_sge *sge, u32 num_sge,
				     u32 off, const struct sroce_rxp *rx,
				     u32 len, struct sroce_mem_hint *hint)
{
	struct sroce_from_rxp_arg a = { .rx = rx };

	return __sroce_sge_walk(sdev, pd, sge, num_sge, off, len,
				IB_ACCESS_LOCAL_WRITE, hint, sroce_from_rxp_step,
				&a);
}

struct sroce_copy_arg {
	u8 *buf;
	enum sroce_copy_dir dir;
};

static int sroce_copy_step(struct sroce_mem *mem, u64 iova, u32 len,
			   void *arg)
{
	struct sroce_copy_arg *a = arg;

	sroce_mem_copy(mem, iova, a->buf, len, a->dir);
	a->buf += len;
	return 0;
}

/**
 * sroce_sge_copy() - copy between a kernel buffer and an SGE list
 * @sdev: device
 * @pd: protection domain of the QP
 * @sge: the SGE list (a kernel copy)
 * @num_sge: its length
 * @off: message offset of the first byte
 * @buf: kernel buffer
 * @len: bytes
 * @dir: SROCE_TO_MEM (scatter; needs local write) or SROCE_FROM_MEM
 * @hint: as for sroce_sge_walk()
 *
 * Return: as sroce_sge_walk().
 */
enum ib_wc_status sroce_sge_copy(struct sroce_dev *sdev, struct ib_pd *pd,
				 const struct rxe_sge *sge, u32 num_sge,
				 u32 off, void *buf, u32 len,
				 enum sroce_copy_dir dir,
				 struct sroce_mem_hint *hint)
{
	struct sroce_copy_arg a = { .buf = buf, .dir = dir };

	return __sroce_sge_walk(sdev, pd, sge, num_sge, off, len,
				dir == SROCE_TO_MEM ? IB_ACCESS_LOCAL_WRITE : 0,
				hint, sroce_copy_step, &a);
}

/**
 * sroce_mem_atomic() - IBTA 9.4.5 atomic operation on one aligned 64-bit word
 * @mem: the memory, found and checked for @iova..@iova+8
 * @iova: 8-byte aligned address
 * @cmp_swap: compare & swap (else fetch & add)
 * @cmp_add: compare value, or the addend
 * @swap: swap value
 *
 * The word is updated with the CPU's atomic instructions, so atomics from
 * every QP and CPU on the same location serialize without a global lock.
 *
 * Return: the original value.
 */
u64 sroce_mem_atomic(struct sroce_mem *mem, u64 iova, bool cmp_swap,
		     u64 cmp_add, u64 swap)
{
	struct page *page;
	u64 orig = 0;
	u32 contig;
	u64 *va;

	va = sroce_mem_map(mem, iova, &contig, &page);
	if (!va)
		return 0;
	if (cmp_swap)
		orig = cmpxchg64(va, cmp_add, swap);
	else
		orig = atomic64_fetch_add(cmp_add, (atomic64_t *)va);
	if (page)
		kunmap_local(va);
	return orig;
}

/**
 * sroce_mem_fast_reg() - IB_WR_REG_MR: make a fast-registration MR valid
 * @mr: the MR, mapped by map_mr_sg
 * @key: new key (same index, new variant byte)
 * @access: access rights
 *
 * Return: 0, or -EINVAL for a key of another MR or a bad access mask.
 */
int sroce_mem_fast_reg(struct sroce_mr *mr, u32 key, int access)
{
	struct sroce_mem *mem = &mr->mem;

	struct sroce_fmap *m;

	if ((key >> 8) != (mem->lkey >> 8) || mem->type != SROCE_MEM_FAST ||
	    sroce_check_access(access))
		return -EINVAL;
	/* The staged mapping goes live; the old one is the next stage. */
	m = mem->fstage;
	mem->fstage = mem->fmap;
	/* Release: pairs with the acquire in sroce_mem_map(). */
	smp_store_release(&mem->fmap, m);
	mem->access = access & SROCE_ACCESS_SUPPORTED;
	mem->iova = mr->ibmr.iova;
	mem->length = mr->ibmr.length;
	WRITE_ONCE(mem->lkey, key);
	WRITE_ONCE(mem->rkey, key);
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	/* Publish the mapping before the state that makes it usable. */
	smp_store_release(&mem->state, SROCE_MEM_VALID);
	return 0;
}

/* Unbind @mw (its lock held): the window grants nothing any more. */
static void sroce_mw_unbind(struct sroce_mem *mw)
{
	struct sroce_mem *mr = mw->mw_mr;

	mw->mw_mr = NULL;
	mw->length = 0;
	if (mw->mw_type == IB_MW_TYPE_2)
		WRITE_ONCE(mw->state, SROCE_MEM_FREE);
	if (mr) {
		spin_lock(&mr->lock);
		mr->num_mw--;
		spin_unlock(&mr->lock);
		sroce_mem_put(mr);
	}
}

/**
 * sroce_mem_invalidate() - local or remote invalidation of @key
 * @sdev: device
 * @key: an MR or MW key
 * @pd: protection domain the invalidating QP belongs to
 * @qpn: that QP
 * @remote: the invalidation came in a SEND with Invalidate
 *
 * Fast-registration MRs and type 2 memory windows can be invalidated; a
 * remote invalidation of a window must come through the QP it is bound to
 * (IBTA 10.6.7.2.5).
 *
 * Return: 0, or -EINVAL when @key names nothing that can be invalidated.
 */
int sroce_mem_invalidate(struct sroce_dev *sdev, u32 key, struct ib_pd *pd,
			 u32 qpn, bool remote)
{
	struct sroce_mem *mem = sroce_mem_get(sdev, key);
	unsigned long flags;
	int err = -EINVAL;

	if (!mem)
		return err;
	if (mem->type == SROCE_MEM_FAST && mem->pd == pd) {
		WRITE_ONCE(mem->state, SROCE_MEM_FREE);
		err = 0;
	} else if (mem->type == SROCE_MEM_MW && mem->mw_type == IB_MW_TYPE_2 &&
		   mem->pd == pd) {
		spin_lock_irqsave(&mem->lock, flags);
		if (READ_ONCE(mem->state) == SROCE_MEM_VALID &&
		    (!remote || mem->mw_qpn == qpn)) {
			sroce_mw_unbind(mem);
			err = 0;
		}
		spin_unlock_irqrestore(&mem->lock, flags);
	}
	sroce_mem_put(mem);
	return err;
}

/**
 * sroce_mem_find_remote() - resolve an R_Key for a remote access
 * @sdev: device
 * @rkey: the R_Key of the request
 * @pd: protection domain of the QP the request came through
 * @qpn: that QP
 * @va: first byte accessed
 * @len: bytes accessed (> 0)
 * @access: IB_ACCESS_REMOTE_* needed
 * @hint: the caller's last lookup (sroce_mem_find())
 *
 * An MR key is checked directly; a memory window key is checked against
 * the window (state, PD, QP for type 2, access, bounds) and resolves to
 * the MR it is bound to, which the caller then uses at the same address.
 *
 * Context: under rcu_read_lock(), as sroce_mem_find().  A window's MR
 * cannot be deregistered while bound (num_mw), and once unbound it is
 * freed no sooner than a grace period later.  The MR itself must still
 * be valid and hold the window's range: a fast-registration MR may have
 * been invalidated or registered anew since the bind.
 *
 * Return: the memory to access, or NULL (an access error).
 */
struct sroce_mem *sroce_mem_find_remote(struct sroce_dev *sdev, u32 rkey,
					struct ib_pd *pd, u32 qpn, u64 va,
					u32 len, int access,
					struct sroce_mem_hint *hint)
{
	struct sroce_mem *mem = sroce_mem_find(sdev, rkey, hint), *mr = NULL;
	unsigned long flags;

	if (!mem)
		return NULL;
	if (mem->type != SROCE_MEM_MW)
		return sroce_mem_check(mem, pd, va, len, access) ? NULL : mem;
	spin_lock_irqsave(&mem->lock, flags);
	if (READ_ONCE(mem->state) == SROCE_MEM_VALID && mem->mw_mr &&
	    mem->pd == pd &&
	    (mem->mw_type == IB_MW_TYPE_1 || mem->mw_qpn == qpn) &&
	    (mem->access & access) == access && va >= mem->iova &&
	    len <= mem->length && va - mem->iova <= mem->length - len &&
	    !sroce_mem_check(mem->mw_mr, pd, va, len, 0)) {
		mr = mem->mw_mr;
	}
	spin_unlock_irqrestore(&mem->lock, flags);
	return mr;
}

/* Windows' locks nest outside their MR's (sroce_mw_unbind()). */
static struct lock_class_key sroce_mw_lock_key;

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibmw->device);
	struct sroce_mw *mw = to_sroce_mw(ibmw);
	struct sroce_mem *mem;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	err = sroce_res_get(sdev, SROCE_RES_MW);
	if (err)
		return err;
	mem = kzalloc(sizeof(*mem), GFP_KERNEL);
	if (!mem) {
		err = -ENOMEM;
		goto err_res;
	}
	sroce_mem_init(mem, SROCE_MEM_MW, ibmw->pd);
	lockdep_set_class(&mem->lock, &sroce_mw_lock_key);
	mem->mw_type = ibmw->type;
	/* A type 1 window is valid from the start, with nothing in it. */
	mem->state = ibmw->type == IB_MW_TYPE_1 ? SROCE_MEM_VALID :
						  SROCE_MEM_FREE;
	err = sroce_mem_reserve(sdev, mem);
	if (err)
		goto err_free;
	mw->mem = mem;
	ibmw->rkey = mem->rkey;
	sroce_mem_publish(sdev, mem);
	return 0;

err_free:
	kfree(mem);
err_res:
	sroce_res_put(sdev, SROCE_RES_MW);
	return err;
}

int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct sroce_dev *sdev = to_sroce_dev(ibmw->device);
	struct sroce_mem *mem = to_sroce_mw(ibmw)->mem;
	unsigned long flags;

	sroce_mem_unpublish(sdev, mem);
	/* A bind in progress holds a reference: @dying stops it binding. */
	spin_lock_irqsave(&mem->lock, flags);
	mem->dying = true;
	sroce_mw_unbind(mem);
	spin_unlock_irqrestore(&mem->lock, flags);
	sroce_res_put(sdev, SROCE_RES_MW);
	/* Packets may still look at it: freed after a grace period. */
	sroce_mem_put(mem);
	return 0;
}

/**
 * sroce_mw_bind() - execute a BIND_MW work request (IBTA 10.6.7.2)
 * @sdev: device
 * @pd: PD of the posting QP
 * @qpn: the posting QP
 * @mw_rkey: the window's current R_Key
 * @new_rkey: its R_Key after the bind (same index, new variant)
 * @mr_lkey: the MR to bind to
 * @addr: window start (an address in the MR)
 * @len: window length; 0 unbinds a type 1 window
 * @access: IB_ACCESS_REMOTE_* the window grants
 *
 * Return: IB_WC_SUCCESS or IB_WC_MW_BIND_ERR.
 */
enum ib_wc_status sroce_mw_bind(struct sroce_dev *sdev, struct ib_pd *pd,
				u32 qpn, u32 mw_rkey, u32 new_rkey, u32 mr_lkey,
				u64 addr, u64 len, int access)
{
	struct sroce_mem *mw = sroce_mem_get(sdev, mw_rkey), *mr = NULL;
	enum ib_wc_status st = IB_WC_MW_BIND_ERR;
	unsigned long flags;

	if (!mw)
		return st;
	/* Only the variant byte of the key is the caller's (IBTA 10.6.7.2). */
	new_rkey = (mw_rkey & ~0xffU) | (new_rkey & 0xff);
	/* Zero-based windows are not supported; local bits mean nothing. */
	if (mw->type != SROCE_MEM_MW || mw->pd != pd ||
	    (access & IB_ZERO_BASED))
		goto out;
	access &= IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE |
		  IB_ACCESS_REMOTE_ATOMIC;
	if (len) {
		mr = sroce_mem_get(sdev, mr_lkey);
		if (!mr || mr->type == SROCE_MEM_MW ||
		    sroce_mem_check(mr, pd, addr, len, IB_ACCESS_MW_BIND) ||
		    ((access & (IB_ACCESS_REMOTE_WRITE |
				IB_ACCESS_REMOTE_ATOMIC)) &&
		     !(mr->access & IB_ACCESS_LOCAL_WRITE)))
			goto out;
	} else if (mw->mw_type != IB_MW_TYPE_1) {
		goto out;	/* only a type 1 window unbinds by length 0 */
	}

	spin_lock_irqsave(&mw->lock, flags);
	/* A bound type 2 window must be invalidated before a rebind. */
	if (mw->dying || (mw->mw_type == IB_MW_TYPE_2 &&
			  READ_ONCE(mw->state) == SROCE_MEM_VALID)) {
		spin_unlock_irqrestore(&mw->lock, flags);
		goto out;
	}
	/* Counted where dereg_mr tests it; a deregistered MR takes none. */
	if (mr) {
		spin_lock(&mr->lock);
		if (mr->dying) {
			spin_unlock(&mr->lock);
			spin_unlock_irqrestore(&mw->lock, flags);
			goto out;
		}
		mr->num_mw++;
		spin_unlock(&mr->lock);
	}
	sroce_mw_unbind(mw);
	mw->mw_mr = mr;		/* the reference moves to the window */
	mr = NULL;
	mw->iova = addr;
	mw->length = len;
	mw->access = access;
	mw->mw_qpn = qpn;
	WRITE_ONCE(mw->lkey, new_rkey);
	WRITE_ONCE(mw->rkey, new_rkey);
	WRITE_ONCE(mw->state, SROCE_MEM_VALID);
	spin_unlock_irqrestore(&mw->lock, flags);
	st = IB_WC_SUCCESS;
out:
	if (mr)
		sroce_mem_put(mr);
	sroce_mem_put(mw);
	return st;
}

/**
 * sroce_rereg_user_mr() - change a user MR's translation, PD or access
 * @ibmr: the MR
 * @flags: IB_MR_REREG_*
 * @start: new user address (IB_MR_REREG_TRANS)
 * @length: new length (IB_MR_REREG_TRANS)
 * @iova: new I/O virtual address (IB_MR_REREG_TRANS)
 * @access: new access (IB_MR_REREG_ACCESS)
 * @pd: new PD (IB_MR_REREG_PD)
 * @udata: user data
 *
 * Builds a new MR with the old attributes that are kept; ib_core swaps it
 * in and deregisters the old one, so no data-path reader ever sees a
 * half-changed MR.
 *
 * Return: the new MR, or an ERR_PTR.
 */
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata)
{
	struct sroce_mr *mr = to_sroce_mr(ibmr);

	if (mr->mem.type != SROCE_MEM_USER ||
	    (flags & ~IB_MR_REREG_SUPPORTED))
		return ERR_PTR(-EOPNOTSUPP);
	/* Racy, as the caller's dereg of the old MR checks it again. */
	if (READ_ONCE(mr->mem.num_mw))
		return ERR_PTR(-EBUSY);
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = mr->ustart;
		length = mr->mem.length;
		iova = mr->mem.iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->mem.access;
	if (!(flags & IB_MR_REREG_PD))
		pd = ibmr->pd;
	return sroce_reg_user_mr(pd, start, length, iova, access, udata);
}
