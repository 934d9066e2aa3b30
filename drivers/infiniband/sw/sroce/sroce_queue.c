// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ring allocation and user mapping.  Context: process context (verbs).
 *
 * A user-mapped ring's memory belongs to its rdma_user_mmap_entry: it is
 * freed in sroce_mmap_free(), which ib_core calls once both the object has
 * removed the entry and the last user mapping is gone.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "sroce_queue.h"

/**
 * sroce_queue_init() - allocate a ring
 * @q: the ring
 * @num_elem: elements it must hold (capacity will be >= this)
 * @elem_size: bytes per element (rounded up to a power of two)
 * @dir: whether the kernel produces or consumes
 * @uctx: user context to map it into, or NULL for a kernel ring
 * @mi: for a user ring, set to the offset/size the process mmap()s
 *
 * Return: 0 or -errno.
 */
int sroce_queue_init(struct sroce_queue *q, u32 num_elem, size_t elem_size,
		     enum sroce_queue_dir dir, struct ib_ucontext *uctx,
		     struct mminfo *mi)
{
	struct sroce_mmap_entry *entry;
	u32 slots;
	int err;

	if (!num_elem || num_elem > (1u << 24) || !elem_size ||
	    elem_size > PAGE_SIZE)
		return -EINVAL;

	slots = roundup_pow_of_two(num_elem + 1);
	q->elem_size = roundup_pow_of_two(elem_size);
	q->log2_elem_size = order_base_2(q->elem_size);
	q->index_mask = slots - 1;
	q->dir = dir;
	q->own = 0;
	q->peer = 0;
	q->mmap = NULL;
	q->buf_size = sizeof(*q->buf) + (size_t)slots * q->elem_size;

	q->buf = vmalloc_user(q->buf_size);
	if (!q->buf)
		return -ENOMEM;
	/* Copies for user space; the kernel uses its own fields above. */
	q->buf->log2_elem_size = q->log2_elem_size;
	q->buf->index_mask = q->index_mask;

	if (!uctx)
		return 0;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry) {
		err = -ENOMEM;
		goto err_free;
	}
	entry->buf = q->buf;
	err = rdma_user_mmap_entry_insert(uctx, &entry->rdma_entry,
					  PAGE_ALIGN(q->buf_size));
	if (err) {
		kfree(entry);
		goto err_free;
	}
	q->mmap = entry;
	mi->offset = rdma_user_mmap_get_offset(&entry->rdma_entry);
	mi->size = q->buf_size;
	mi->pad = 0;
	return 0;

err_free:
	vfree(q->buf);
	q->buf = NULL;
	return err;
}

/**
 * sroce_queue_cleanup() - release a ring
 * @q: the ring; a user ring's memory lives on until its last mapping goes
 */
void sroce_queue_cleanup(struct sroce_queue *q)
{
	if (q->mmap)
		rdma_user_mmap_entry_remove(&q->mmap->rdma_entry);
	else
		vfree(q->buf);
	q->buf = NULL;
	q->mmap = NULL;
}

int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct sroce_mmap_entry *entry;
	int err;

	rdma_entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = container_of(rdma_entry, struct sroce_mmap_entry, rdma_entry);
	err = remap_vmalloc_range(vma, entry->buf, 0);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

void sroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct sroce_mmap_entry *entry =
		container_of(rdma_entry, struct sroce_mmap_entry, rdma_entry);

	vfree(entry->buf);
	kfree(entry);
}
