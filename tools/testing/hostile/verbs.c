// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Verbs helpers: the device, QPs with their rings, connected pairs on one
 * device (loopback through its own IPv4 GID), bounded completion waits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostile.h"

#define RC_ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)
#define MR_ACCESS	(IBV_ACCESS_LOCAL_WRITE | RC_ACCESS | \
			 IBV_ACCESS_MW_BIND)

static bool gid_is_v4(const union ibv_gid *gid)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid->raw, pfx, sizeof(pfx));
}

static int env_gid(void)
{
	struct ibv_port_attr pa;
	struct ibv_gid_entry e;
	int i;

	if (ibv_query_port(g.ctx, 1, &pa))
		return -1;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(g.ctx, 1, i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && gid_is_v4(&e.gid)) {
			g.gid_idx = i;
			g.gid = e.gid;
			return 0;
		}
	}
	diag("no IPv4 RoCE v2 GID on %s", g.dev);
	return -1;
}

int env_open(const char *dev)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	g.dev = dev;
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			g.ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!g.ctx) {
		diag("cannot open %s: %s", dev, strerror(errno));
		return -1;
	}
	if (ibv_query_device(g.ctx, &g.attr))
		return -1;
	return env_gid();
}

int hbuf_new(struct hbuf *b, struct ibv_pd *pd, size_t len, int access)
{
	memset(b, 0, sizeof(*b));
	if (posix_memalign((void **)&b->p, 4096, len))
		return -1;
	memset(b->p, 0, len);
	b->len = len;
	b->mr = ibv_reg_mr(pd, b->p, len, access ? access : MR_ACCESS);
	if (!b->mr) {
		diag("ibv_reg_mr(%zu): %s", len, strerror(errno));
		free(b->p);
		b->p = NULL;
		return -1;
	}
	return 0;
}

void hbuf_free(struct hbuf *b)
{
	if (b->mr && ibv_dereg_mr(b->mr))
		diag("ibv_dereg_mr: %s", strerror(errno));
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* The QP's rings, from the new mappings; checked against its caps. */
static int hqp_rings(struct hqp *h, void *before, bool srq)
{
	struct ring r[2] = {};
	size_t sq_min = sizeof(struct rxe_send_wqe) +
			16 * (size_t)h->cap.max_send_sge;
	size_t rq_min = sizeof(struct rxe_recv_wqe) +
			16 * (size_t)h->cap.max_recv_sge;

	if (rings_find(srq ? 1 : 2, r, before))
		return -1;
	h->sq = r[0];
	h->rq = r[1];
	if (h->sq.mask != h->cap.max_send_wr ||
	    ((size_t)1 << h->sq.log2_elem) < sq_min ||
	    ((size_t)1 << h->sq.log2_elem) <
	    sizeof(struct rxe_send_wqe) + h->cap.max_inline_data ||
	    (!srq && (h->rq.mask != h->cap.max_recv_wr ||
		      ((size_t)1 << h->rq.log2_elem) < rq_min))) {
		diag("QP %u rings do not match its caps: sq mask %u log2 %u, "
		     "rq mask %u log2 %u; caps wr %u/%u sge %u/%u inline %u",
		     h->qp->qp_num, h->sq.mask, h->sq.log2_elem,
		     h->rq.buf ? h->rq.mask : 0,
		     h->rq.buf ? h->rq.log2_elem : 0, h->cap.max_send_wr,
		     h->cap.max_recv_wr, h->cap.max_send_sge,
		     h->cap.max_recv_sge, h->cap.max_inline_data);
		ring_unmap(&h->sq);
		ring_unmap(&h->rq);
		return -1;
	}
	return 0;
}

/**
 * hqp_new() - a QP with its rings located
 * @h: filled in
 * @pd: its PD
 * @type: IBV_QPT_RC, _UC or _UD
 * @cap: capacities asked for
 * @srq: SRQ or NULL
 * @cq: CQ for both directions, or NULL for a new one of its own
 *
 * Every WQE is signaled (sq_sig_all) unless hqp_sig_all is false.
 * Return: 0, or -1 with errno set (ibv_create_qp's) or 0 errno when the
 * rings were not found.
 */
bool hqp_sig_all = true;

int hqp_new(struct hqp *h, struct ibv_pd *pd, enum ibv_qp_type type,
	    const struct ibv_qp_cap *cap, struct ibv_srq *srq,
	    struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = type, .cap = *cap, .srq = srq, .sq_sig_all = hqp_sig_all,
	};
	void *before;
	int err;

	memset(h, 0, sizeof(*h));
	h->type = type;
	h->cq = cq;
	if (!cq) {
		h->cq = ibv_create_cq(g.ctx, 1024, NULL, NULL, 0);
		h->own_cq = true;
		if (!h->cq)
			return -1;
	}
	ia.send_cq = h->cq;
	ia.recv_cq = h->cq;
	maps_lock();
	before = maps_before();
	h->qp = ibv_create_qp(pd, &ia);
	if (!h->qp) {
		err = errno;
		free(before);
		maps_unlock();
		if (h->own_cq)
			ibv_destroy_cq(h->cq);
		h->cq = NULL;
		errno = err;
		return -1;
	}
	h->cap = ia.cap;
	err = hqp_rings(h, before, srq);
	maps_unlock();
	if (err) {
		hqp_free(h);
		errno = 0;
		return -1;
	}
	return 0;
}

void hqp_free(struct hqp *h)
{
	if (h->qp && ibv_destroy_qp(h->qp))
		diag("ibv_destroy_qp: %s", strerror(errno));
	h->qp = NULL;
	ring_unmap(&h->sq);
	ring_unmap(&h->rq);
	if (h->own_cq && h->cq && ibv_destroy_cq(h->cq))
		diag("ibv_destroy_cq: %s", strerror(errno));
	h->cq = NULL;
}

static int hqp_modify(struct hqp *h, struct ibv_qp_attr *a, int mask)
{
	int err = ibv_modify_qp(h->qp, a, mask);

	if (err)
		diag("modify_qp %u to state %d: %s", h->qp->qp_num,
		     a->qp_state, strerror(err));
	return err;
}

static int hqp_init(struct hqp *h)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
		.qp_access_flags = h->type == IBV_QPT_RC ? RC_ACCESS :
				   IBV_ACCESS_REMOTE_WRITE,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= h->type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return hqp_modify(h, &a, mask);
}

static int hqp_rtr(struct hqp *h, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = 0, .max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = g.gid, .sgid_index = g.gid_idx,
				 .hop_limit = 64 },
		},
	};
	int mask = IBV_QP_STATE;

	if (h->type != IBV_QPT_UD)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	if (h->type == IBV_QPT_RC)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return hqp_modify(h, &a, mask);
}

static int hqp_rts(struct hqp *h)
{
	/* Short timeouts, few retries: a lost peer fails in well under 1 s. */
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .sq_psn = 0, .timeout = 10,
		.retry_cnt = 2, .rnr_retry = 1, .max_rd_atomic = 4,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (h->type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return hqp_modify(h, &a, mask);
}

/* RESET, then INIT/RTR/RTS towards @dqpn (ignored for UD). */
int hqp_connect(struct hqp *h, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (hqp_modify(h, &a, IBV_QP_STATE))
		return -1;
	if (hqp_init(h) || hqp_rtr(h, dqpn) || hqp_rts(h))
		return -1;
	return 0;
}

int hqp_to_err(struct hqp *h)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	return ibv_modify_qp(h->qp, &a, IBV_QP_STATE);
}

int hqp_state(struct hqp *h)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(h->qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

int post_recvs(struct hqp *h, struct hbuf *b, int n, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)b->p, .length = len, .lkey = b->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int i, err;

	for (i = 0; i < n; i++) {
		wr.wr_id = 0x7000 + i;
		err = ibv_post_recv(h->qp, &wr, &bad);
		if (err)
			return err;
	}
	return 0;
}

int post_wr(struct hqp *h, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return ibv_post_send(h->qp, wr, &bad);
}

/* One completion within @ms.  Return: 1, 0 (none), -1 (poll failed). */
int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	uint64_t end = now_ms() + ms;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		if (now_ms() > end)
			return 0;
		usleep(200);
	}
}

/* The next send completion of @h (receive completions are skipped). */
int wait_send_wc(struct hqp *h, struct ibv_wc *wc, int ms)
{
	uint64_t end = now_ms() + ms;
	int n;

	do {
		n = wait_wc(h->cq, wc, ms);
		if (n <= 0 || !(wc->opcode & IBV_WC_RECV))
			return n;
	} while (now_ms() < end);
	return 0;
}

int drain_cq(struct ibv_cq *cq)
{
	struct ibv_wc wc[16];
	int n, total = 0;

	while ((n = ibv_poll_cq(cq, 16, wc)) > 0)
		total += n;
	return total;
}

static const struct ibv_qp_cap pair_bcap = {
	.max_send_wr = 16, .max_recv_wr = 256, .max_send_sge = 2,
	.max_recv_sge = 2, .max_inline_data = 64,
};

/**
 * pair_new() - two connected QPs of one PD, a (caps @acap) and b
 * @p: filled in
 * @type: QP type
 * @acap: a's capacities
 * @nrecv: receives (4 KiB, at the start of mb) posted on b
 *
 * Return: 0, or -1 (diagnostics printed).
 */
int pair_new(struct pair *p, enum ibv_qp_type type,
	     const struct ibv_qp_cap *acap, int nrecv)
{
	memset(p, 0, sizeof(*p));
	p->nrecv = nrecv;
	p->pd = ibv_alloc_pd(g.ctx);
	if (!p->pd)
		return -1;
	if (hbuf_new(&p->ma, p->pd, BUF_LEN, 0) ||
	    hbuf_new(&p->mb, p->pd, BUF_LEN, 0))
		goto err;
	if (hqp_new(&p->a, p->pd, type, acap, NULL, NULL)) {
		diag("create QP (type %d, send_wr %u sge %u inline %u): %s",
		     type, acap->max_send_wr, acap->max_send_sge,
		     acap->max_inline_data, strerror(errno));
		goto err;
	}
	if (hqp_new(&p->b, p->pd, type, &pair_bcap, NULL, NULL))
		goto err;
	if (pair_reconnect(p))
		goto err;
	return 0;
err:
	pair_free(p);
	return -1;
}

int pair_reconnect(struct pair *p)
{
	if (hqp_connect(&p->a, p->b.qp->qp_num) ||
	    hqp_connect(&p->b, p->a.qp->qp_num))
		return -1;
	drain_cq(p->a.cq);
	drain_cq(p->b.cq);
	return post_recvs(&p->b, &p->mb, p->nrecv, 4096);
}

void pair_free(struct pair *p)
{
	hqp_free(&p->a);
	hqp_free(&p->b);
	hbuf_free(&p->ma);
	hbuf_free(&p->mb);
	if (p->pd && ibv_dealloc_pd(p->pd))
		diag("ibv_dealloc_pd: %s", strerror(errno));
	p->pd = NULL;
}

/* An AH towards this device's own IPv4 GID. */
struct ibv_ah *ah_new(struct ibv_pd *pd)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = g.gid, .sgid_index = g.gid_idx,
			 .hop_limit = 64 },
	};
	struct ibv_ah *ah = ibv_create_ah(pd, &a);

	if (!ah)
		diag("ibv_create_ah: %s", strerror(errno));
	return ah;
}

/*
 * The kernel's number of @ah, which the provider keeps to itself and
 * writes into each UD WQE: post one zero-length SEND through it (to @ud
 * itself, which has no receive for it) and read the number back from the
 * ring slot.
 */
int ah_num_of(struct hqp *ud, struct ibv_ah *ah, uint32_t *num)
{
	struct ibv_send_wr wr = {
		.wr_id = 0xa4, .opcode = IBV_WR_SEND,
		.wr.ud = { .ah = ah, .remote_qpn = ud->qp->qp_num,
			   .remote_qkey = QKEY },
	};
	uint32_t prod = atomic_load((_Atomic uint32_t *)
				    &ud->sq.buf->producer_index);
	struct rxe_send_wqe *w = (void *)(ud->sq.buf->data +
					  ((size_t)(prod & ud->sq.mask) <<
					   ud->sq.log2_elem));
	struct ibv_wc wc;
	int err = post_wr(ud, &wr);

	if (err) {
		diag("UD post through the AH: %s", strerror(err));
		return -1;
	}
	*num = w->wr.wr.ud.ah_num;
	if (wait_send_wc(ud, &wc, WAIT_MS) != 1)
		diag("no completion of the UD send that showed the AH number");
	return *num ? 0 : -1;
}
