// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Raw access to the rings of the rxe user ABI.
 *
 * The rxe provider mmap()s every ring from the uverbs file (the context's
 * cmd_fd) at the offset the kernel returned in the create response, which
 * the provider keeps to itself.  The rings of a new object are found by
 * comparing /proc/self/maps before and after its creation: the new
 * mappings of /dev/infiniband/uverbsN are its rings.  A QP's SQ ring is
 * created (and given its mmap offset) before its RQ ring, so the SQ is the
 * lower offset; the ring headers (index_mask, log2_elem_size) are checked
 * against the capacities the kernel granted.
 *
 * Each ring found is mapped a second time, by this process itself, at the
 * same offset: the provider unmaps its view when the object is destroyed,
 * this one stays (the kernel frees a ring's memory only when its last
 * mapping goes), so a thread may keep writing indices across a destroy.
 *
 * Doorbell: the kernel learns of new send WQEs of a user QP through an
 * empty IB_USER_VERBS_CMD_POST_SEND (no work requests), which is what the
 * provider's ibv_post_send() issues after writing its WQEs.  The provider
 * refuses a NULL work request list, so this program writes the command to
 * cmd_fd itself: raw WQEs never pass the provider's checks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "hostile.h"

#define MAX_MAPS	256

struct maps {
	int n;
	unsigned long start[MAX_MAPS];
	unsigned long len[MAX_MAPS];
	uint64_t off[MAX_MAPS];
};

static pthread_mutex_t maps_mutex = PTHREAD_MUTEX_INITIALIZER;

/* Object creation and the maps comparison around it, one at a time. */
int maps_lock(void)
{
	return pthread_mutex_lock(&maps_mutex);
}

void maps_unlock(void)
{
	pthread_mutex_unlock(&maps_mutex);
}

static int maps_read(struct maps *m)
{
	char line[512], path[256];
	unsigned long s, e;
	unsigned long long off;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	m->n = 0;
	while (fgets(line, sizeof(line), f) && m->n < MAX_MAPS) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %llx %*s %*s %255s", &s, &e,
			   &off, path) < 3)
			continue;
		if (!strstr(path, "/dev/infiniband/uverbs"))
			continue;
		m->start[m->n] = s;
		m->len[m->n] = e - s;
		m->off[m->n] = off;
		m->n++;
	}
	fclose(f);
	return 0;
}

/* A snapshot of the uverbs mappings, for rings_find(); caller holds lock. */
void *maps_before(void)
{
	struct maps *m = calloc(1, sizeof(*m));

	if (m && maps_read(m)) {
		free(m);
		m = NULL;
	}
	return m;
}

static bool maps_has(const struct maps *m, unsigned long start)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->start[i] == start)
			return true;
	return false;
}

/* Map the ring at @off (@len bytes) once more, for this program alone. */
static int ring_map(struct ring *r, uint64_t off, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       g.ctx->cmd_fd, (off_t)off);

	if (p == MAP_FAILED)
		return -1;
	r->buf = p;
	r->map_len = len;
	r->offset = off;
	r->mask = r->buf->index_mask;
	r->log2_elem = r->buf->log2_elem_size;
	return 0;
}

/**
 * rings_find() - the rings of the object created since maps_before()
 * @nexp: how many new uverbs mappings the object must have
 * @out: filled in order of mmap offset
 * @before: the snapshot (freed here)
 *
 * Return: 0, or -1 (diagnostics printed) when the mappings are not as
 * expected.
 */
int rings_find(int nexp, struct ring *out, const void *before)
{
	const struct maps *b = before;
	struct maps a;
	int i, j, n = 0, idx[4];
	int ret = -1;

	if (!b || maps_read(&a))
		goto out;
	for (i = 0; i < a.n && n < 4; i++)
		if (!maps_has(b, a.start[i]))
			idx[n++] = i;
	if (n != nexp) {
		diag("expected %d new uverbs mappings, found %d", nexp, n);
		goto out;
	}
	/* Sort by offset (n <= 2 in practice). */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (a.off[idx[j]] < a.off[idx[i]]) {
				int t = idx[i];

				idx[i] = idx[j];
				idx[j] = t;
			}
	for (i = 0; i < n; i++) {
		if (ring_map(&out[i], a.off[idx[i]], a.len[idx[i]])) {
			diag("mmap of ring at offset %#llx: %s",
			     (unsigned long long)a.off[idx[i]],
			     strerror(errno));
			while (i--)
				ring_unmap(&out[i]);
			goto out;
		}
	}
	ret = 0;
out:
	free((void *)b);
	return ret;
}

int ring_map_again(const struct ring *r, struct ring *copy)
{
	return ring_map(copy, r->offset, r->map_len);
}

void ring_unmap(struct ring *r)
{
	if (r->buf)
		munmap(r->buf, r->map_len);
	r->buf = NULL;
}

/* A CQ of at least @cqe entries, with its ring located. */
struct ibv_cq *cq_new_ring(int cqe, struct ring *r)
{
	struct ibv_cq *cq;
	void *before;

	maps_lock();
	before = maps_before();
	cq = ibv_create_cq(g.ctx, cqe, NULL, NULL, 0);
	if (!cq) {
		diag("ibv_create_cq(%d): %s", cqe, strerror(errno));
		free(before);
	} else if (rings_find(1, r, before) ||
		   r->mask < (uint32_t)cqe ||
		   r->log2_elem != 6 /* struct ib_uverbs_wc, 48 -> 64 */) {
		diag("CQ ring not as expected (mask %u, log2 elem %u)",
		     r->buf ? r->mask : 0, r->buf ? r->log2_elem : 0);
		ring_unmap(r);
		ibv_destroy_cq(cq);
		cq = NULL;
	}
	maps_unlock();
	return cq;
}

/* An SRQ with its ring located. */
struct ibv_srq *srq_new_ring(struct ibv_pd *pd, uint32_t max_wr,
			     uint32_t max_sge, struct ring *r)
{
	struct ibv_srq_init_attr ia = {
		.attr = { .max_wr = max_wr, .max_sge = max_sge },
	};
	struct ibv_srq *srq;
	void *before;

	maps_lock();
	before = maps_before();
	srq = ibv_create_srq(pd, &ia);
	if (!srq) {
		diag("ibv_create_srq: %s", strerror(errno));
		free(before);
	} else if (rings_find(1, r, before) || r->mask != ia.attr.max_wr) {
		diag("SRQ ring not as expected");
		ring_unmap(r);
		ibv_destroy_srq(srq);
		srq = NULL;
	}
	maps_unlock();
	return srq;
}

size_t sq_elem(const struct hqp *h)
{
	return (size_t)1 << h->sq.log2_elem;
}

/*
 * The SQ slot at the producer index, zeroed; NULL when the ring is full.
 * The provider keeps no index of its own: it reads both from the header,
 * so raw WQEs and its own posts can follow each other.
 */
struct rxe_send_wqe *sq_next(struct hqp *h)
{
	struct rxe_queue_buf *q = h->sq.buf;
	uint32_t prod = atomic_load_explicit((_Atomic uint32_t *)
					     &q->producer_index,
					     memory_order_relaxed);
	uint32_t cons = atomic_load_explicit((_Atomic uint32_t *)
					     &q->consumer_index,
					     memory_order_acquire);
	void *slot;

	if (((prod + 1) & h->sq.mask) == (cons & h->sq.mask))
		return NULL;
	slot = q->data + ((size_t)(prod & h->sq.mask) << h->sq.log2_elem);
	memset(slot, 0, sq_elem(h));
	return slot;
}

/* Publish the slot sq_next() returned and ring the doorbell. */
int sq_commit(struct hqp *h)
{
	struct rxe_queue_buf *q = h->sq.buf;
	uint32_t prod = atomic_load_explicit((_Atomic uint32_t *)
					     &q->producer_index,
					     memory_order_relaxed);

	atomic_store_explicit((_Atomic uint32_t *)&q->producer_index,
			      (prod + 1) & h->sq.mask, memory_order_release);
	return doorbell(h->qp);
}

/* Copy @len bytes of @wqe into the next slot and ring the doorbell. */
int raw_post(struct hqp *h, const struct rxe_send_wqe *wqe, size_t len)
{
	struct rxe_send_wqe *w = sq_next(h);

	if (!w)
		return ENOMEM;
	if (len > sq_elem(h))
		len = sq_elem(h);
	memcpy(w, wqe, len);
	return sq_commit(h);
}

void wqe_init(struct rxe_send_wqe *w, uint64_t wr_id, uint32_t opcode)
{
	memset(w, 0, sizeof(*w));
	w->wr.wr_id = wr_id;
	w->wr.opcode = opcode;
}

/*
 * The kernel's doorbell for a user QP: IB_USER_VERBS_CMD_POST_SEND through
 * the write() interface with no work requests.  Return: 0 or an errno.
 */
int doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_cmd_hdr hdr = {
		.command = IB_USER_VERBS_CMD_POST_SEND,
	};
	struct ib_uverbs_post_send cmd = {
		.qp_handle = qp->handle,
		.wr_count = 0,
		.sge_count = 0,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};
	struct ib_uverbs_post_send_resp resp;
	uint8_t buf[sizeof(hdr) + sizeof(cmd)];

	hdr.in_words = sizeof(buf) / 4;
	hdr.out_words = sizeof(resp) / 4;
	cmd.response = (uintptr_t)&resp;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), &cmd, sizeof(cmd));
	if (write(qp->context->cmd_fd, buf, sizeof(buf)) != sizeof(buf))
		return errno;
	return 0;
}
