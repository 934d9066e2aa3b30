// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory registration.  Context: the verbs run in process context;
 * sroce_mem_get()/put() in any context.
 *
 * Keys: index << 8 | key byte (IBTA 10.6.4: the low 8 bits are the
 * consumer-owned "key" part a fast registration may change).  lkey and rkey
 * are the same value.  The index lives in the device's mr_xa.
 */
#include <linux/highmem.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "sroce_dev.h"
#include "sroce_mr.h"

#define SROCE_ACCESS_SUPPORTED	(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND)

/*
 * IBTA 10.6.3.1 / o10-36: remote write and remote atomic access require
 * local write.
 */
static int sroce_check_access(int access)
{
	if (access & ~SROCE_ACCESS_SUPPORTED)
		return -EOPNOTSUPP;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

static struct sroce_mr *sroce_mr_alloc(struct ib_pd *ibpd,
				       enum sroce_mem_type type, int access)
{
	struct sroce_dev *sdev = to_sroce_dev(ibpd->device);
	struct sroce_mr *mr;
	u32 index;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	refcount_set(&mr->mem.ref, 1);
	init_completion(&mr->mem.released);
	mr->mem.type = type;
	mr->mem.state = type == SROCE_MEM_FAST ? SROCE_MEM_FREE :
						 SROCE_MEM_VALID;
	mr->mem.pd = ibpd;
	mr->mem.access = access;

	/* Reserve the index now, publish the object once it is complete. */
	err = xa_alloc_cyclic(&sdev->mr_xa, &index, NULL,
			      XA_LIMIT(1, SROCE_MAX_MR - 1), &sdev->mr_next,
			      GFP_KERNEL);
	if (err < 0) {
		kfree(mr);
		return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
	}
	mr->mem.lkey = index << 8 | (get_random_u32() & 0xff);
	mr->mem.rkey = mr->mem.lkey;
	mr->ibmr.lkey = mr->mem.lkey;
	mr->ibmr.rkey = mr->mem.rkey;
	return mr;
}

static void sroce_mr_publish(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	xa_store(&sdev->mr_xa, mr->mem.lkey >> 8, &mr->mem, GFP_KERNEL);
}

static void sroce_mr_free(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	xa_erase(&sdev->mr_xa, mr->mem.lkey >> 8);
	/* Wait for data-path users, then release what they touched. */
	if (!refcount_dec_and_test(&mr->mem.ref))
		wait_for_completion(&mr->mem.released);
	kvfree(mr->mem.upages);
	if (mr->mem.umem)
		ib_umem_release(mr->mem.umem);
	kfree(mr->mem.pages);
	/* A lookup may still hold the pointer between load and get. */
	kfree_rcu(mr, rcu);
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
	sroce_mr_publish(to_sroce_dev(ibpd->device), mr);
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
	mr->ibmr.iova = iova;
	mr->ibmr.length = len;
	sroce_mr_publish(sdev, mr);
	return &mr->ibmr;
}

struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FAST_PAGES)
		return ERR_PTR(-EINVAL);

	mr = sroce_mr_alloc(ibpd, SROCE_MEM_FAST, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->mem.pages = kcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->mem.pages) {
		sroce_mr_free(to_sroce_dev(ibpd->device), mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->mem.max_pages = max_num_sg;
	sroce_mr_publish(to_sroce_dev(ibpd->device), mr);
	return &mr->ibmr;
}

static int sroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mem *mem = &to_sroce_mr(ibmr)->mem;

	if (mem->npages >= mem->max_pages)
		return -ENOMEM;
	mem->pages[mem->npages++] = addr;
	return 0;
}

/*
 * Builds the page list a later IB_WR_REG_MR makes valid; the MR itself
 * stays as it is until then (IBTA 10.6.3.6).
 */
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mem *mem = &to_sroce_mr(ibmr)->mem;

	mem->npages = 0;
	mem->page_shift = ilog2(ibmr->page_size);
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_set_page);
}

int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	sroce_mr_free(to_sroce_dev(ibmr->device), to_sroce_mr(ibmr));
	return 0;
}

/**
 * sroce_mem_get() - find a valid memory object by lkey/rkey and pin it
 * @sdev: device
 * @key: the key from a work request or a packet (peer-controlled)
 *
 * Return: the object with a reference, or NULL.
 */
struct sroce_mem *sroce_mem_get(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mem *mem;

	rcu_read_lock();
	mem = xa_load(&sdev->mr_xa, key >> 8);
	if (mem && (mem->lkey != key || !refcount_inc_not_zero(&mem->ref)))
		mem = NULL;
	rcu_read_unlock();
	return mem;
}

void sroce_mem_put(struct sroce_mem *mem)
{
	if (refcount_dec_and_test(&mem->ref))
		complete(&mem->released);
}

/**
 * sroce_mem_check() - may @len bytes at @iova be accessed through @mem?
 * @mem: memory object (from sroce_mem_get())
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
	if (mem->state != SROCE_MEM_VALID || mem->pd != pd ||
	    (mem->access & access) != access)
		return -EACCES;
	if (mem->type == SROCE_MEM_DMA)
		return 0;
	if (iova < mem->iova || len > mem->length ||
	    iova - mem->iova > mem->length - len)
		return -EFAULT;
	return 0;
}

/**
 * sroce_mem_copy() - copy between a kernel buffer and registered memory
 * @mem: memory object; the range must have passed sroce_mem_check()
 * @iova: start address within @mem
 * @buf: kernel buffer
 * @len: bytes
 * @dir: direction
 */
void sroce_mem_copy(struct sroce_mem *mem, u64 iova, void *buf, u32 len,
		    enum sroce_copy_dir dir)
{
	u64 off;
	u32 n;
	void *va;

	if (mem->type == SROCE_MEM_DMA) {
		/* ib_uses_virt_dma(): "DMA" addresses are kernel virtual. */
		va = (void *)(uintptr_t)iova;
		if (dir == SROCE_TO_MEM)
			memcpy(va, buf, len);
		else
			memcpy(buf, va, len);
		return;
	}
	if (mem->type != SROCE_MEM_USER)
		return;

	off = iova - mem->iova + ib_umem_offset(mem->umem);
	while (len) {
		if ((off >> PAGE_SHIFT) >= mem->nupages)
			return;	/* cannot happen after sroce_mem_check() */
		n = min_t(u64, len, PAGE_SIZE - (off & ~PAGE_MASK));
		va = kmap_local_page(mem->upages[off >> PAGE_SHIFT]);
		if (dir == SROCE_TO_MEM)
			memcpy(va + (off & ~PAGE_MASK), buf, n);
		else
			memcpy(buf, va + (off & ~PAGE_MASK), n);
		kunmap_local(va);
		buf += n;
		off += n;
		len -= n;
	}
}
