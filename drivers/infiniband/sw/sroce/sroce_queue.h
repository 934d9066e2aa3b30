/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Work and completion rings in the layout of the rxe user ABI
 * (struct rxe_queue_buf in <rdma/rdma_user_rxe.h>), so that rdma-core's
 * rxe provider can map and drive them.
 *
 * Trust model: for a user queue the whole buffer, including its header, is
 * writable by the process.  The kernel therefore never trusts anything it
 * reads back from it: element size and mask come from struct sroce_queue,
 * the index the user owns is masked on every read, and the index the kernel
 * owns is kept privately and only published to the buffer.
 *
 * Indices are stored masked, as the ABI requires; a ring of 2^n slots holds
 * 2^n - 1 elements.
 *
 * A loop over the other side's elements takes their number once, from one
 * read of its index (sroce_queue_posted()), and runs at most that often: a
 * process that keeps moving its index ahead while the kernel consumes under
 * a spinlock must not keep the kernel in the loop.  No loop tests the
 * other side's index for its exit condition.
 */
#ifndef SROCE_QUEUE_H
#define SROCE_QUEUE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *buf;
};

/** enum sroce_queue_dir - which side the kernel plays */
enum sroce_queue_dir {
	SROCE_QUEUE_KERNEL_PRODUCES,	/* completion queues */
	SROCE_QUEUE_KERNEL_CONSUMES,	/* user work queues */
};

struct sroce_queue {
	struct rxe_queue_buf *buf;
	size_t buf_size;
	u32 elem_size;
	u32 log2_elem_size;
	u32 index_mask;
	enum sroce_queue_dir dir;
	/* Kernel-owned index (producer or consumer, per dir), never read back. */
	u32 own;
	/*
	 * The peer's index as last read (masked), for sroce_queue_full() and
	 * sroce_queue_next(): the other side writes that line on its own
	 * CPU, and a ping-pong would move it here and back per element.
	 * Behind the real index at worst: the ring looks fuller (producer)
	 * or emptier (consumer) than it is, and only then is it read again.
	 * Under the queue's lock, as @own.
	 */
	u32 peer;
	/* Set for queues mapped to user space; owns the buffer then. */
	struct sroce_mmap_entry *mmap;
};

int sroce_queue_init(struct sroce_queue *q, u32 num_elem, size_t elem_size,
		     enum sroce_queue_dir dir, struct ib_ucontext *uctx,
		     struct mminfo *mi);
void sroce_queue_cleanup(struct sroce_queue *q);

/** sroce_queue_capacity() - elements the ring can hold */
static inline u32 sroce_queue_capacity(const struct sroce_queue *q)
{
	return q->index_mask;
}

static inline void *sroce_queue_addr(const struct sroce_queue *q, u32 index)
{
	return q->buf->data + ((size_t)(index & q->index_mask) <<
			       q->log2_elem_size);
}

/*
 * The index the other side owns, masked: it may hold anything.  Acquire:
 * a consumer must see the element before the producer index that covers
 * it; a producer must not reuse a slot before its consumer is done.
 */
static inline u32 sroce_queue_peer_index(const struct sroce_queue *q)
{
	const u32 *peer = q->dir == SROCE_QUEUE_KERNEL_PRODUCES ?
			  &q->buf->consumer_index : &q->buf->producer_index;

	/* Acquire: see the comment above. */
	return smp_load_acquire(peer) & q->index_mask;
}

/*
 * Elements between the two indices, from one read of the other side's:
 * at most sroce_queue_capacity().  The bound of every loop over them.
 */
static inline u32 sroce_queue_count(const struct sroce_queue *q)
{
	u32 peer = sroce_queue_peer_index(q);

	if (q->dir == SROCE_QUEUE_KERNEL_PRODUCES)
		return (q->own - peer) & q->index_mask;
	return (peer - q->own) & q->index_mask;
}

/* Producer side: no free slot.  Reads the consumer's index only if so. */
static inline bool sroce_queue_full(struct sroce_queue *q)
{
	if (((q->own - q->peer) & q->index_mask) != q->index_mask)
		return false;
	q->peer = sroce_queue_peer_index(q);
	return ((q->own - q->peer) & q->index_mask) == q->index_mask;
}

/*
 * Consumer side: elements posted, from one read of the producer's index,
 * which sroce_queue_next() then starts from.  The bound of a loop that
 * consumes them all (see the top of this file).
 */
static inline u32 sroce_queue_posted(struct sroce_queue *q)
{
	q->peer = sroce_queue_peer_index(q);
	return (q->peer - q->own) & q->index_mask;
}

/*
 * Consumer side: is there an element to consume?  Reads the producer's
 * index only when the elements it showed last time are used up.
 */
static inline bool sroce_queue_next(struct sroce_queue *q)
{
	if (q->peer != q->own)
		return true;
	q->peer = sroce_queue_peer_index(q);
	return q->peer != q->own;
}

/* One test, never a loop condition (see the top of this file). */
static inline bool sroce_queue_empty(const struct sroce_queue *q)
{
	return sroce_queue_count(q) == 0;
}

/* Slot the kernel fills next (producer side). */
static inline void *sroce_queue_producer_addr(const struct sroce_queue *q)
{
	return sroce_queue_addr(q, q->own);
}

/* Publish one produced element: the entry is written before the index. */
static inline void sroce_queue_advance_producer(struct sroce_queue *q)
{
	q->own = (q->own + 1) & q->index_mask;
	/* Release: pairs with the consumer's acquire of producer_index. */
	smp_store_release(&q->buf->producer_index, q->own);
}

/* Oldest element to consume (consumer side). */
static inline void *sroce_queue_consumer_addr(const struct sroce_queue *q)
{
	return sroce_queue_addr(q, q->own);
}

static inline void sroce_queue_advance_consumer(struct sroce_queue *q)
{
	q->own = (q->own + 1) & q->index_mask;
	/* Release: the slot's contents were read before it is handed back. */
	smp_store_release(&q->buf->consumer_index, q->own);
}

int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry);

#endif /* SROCE_QUEUE_H */
