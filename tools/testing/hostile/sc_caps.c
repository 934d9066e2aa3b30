// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * a) Raw WQEs on RC QPs of the smallest capacities: max_send_wr 1,
 * max_send_sge 0 (or 2), max_inline_data 0.  ATOMIC_WRITE, inline data
 * longer than max_inline, SGE counts past max_send_sge (up to 0xffffffff),
 * SGE lengths past the largest message and summing past 2^32, and opcodes
 * an RC user QP does not have.
 *
 * The cases of one QP shape share a pair, connected again after each
 * error.  Zero-length RDMA WRITEs go first, so that the raw WQE sits in
 * the last slot of the two-slot ring (the last of the kernel's WQE copies
 * too).  Expected: the documented completion
 * status (IB_WC_LOC_LEN_ERR, IB_WC_LOC_QP_OP_ERR), the QP in ERR, and the
 * next WQE flushed.  An ATOMIC_WRITE either completes with its 8 bytes
 * written, or fails with LOC_LEN_ERR leaving the target untouched.  The
 * heap around the kernel's WQE copies is checked by slub_debug when the QP
 * is destroyed (the guest suite reads the kernel log).  One TAP line per
 * case.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hostile.h"

#define S(x)		(1u << IBV_WC_##x)
#define AW_VALUE	0x1122334455667788ull

struct caps_case {
	const char *desc;
	uint32_t sge;		/* max_send_sge of the QP */
	void (*fill)(struct rxe_send_wqe *w, struct pair *p, uint32_t arg);
	uint32_t arg;
	uint32_t want;		/* S(...) of the acceptable statuses */
};

static uint64_t max_msg;

static void fill_atomic_write(struct rxe_send_wqe *w, struct pair *p,
			      uint32_t arg)
{
	uint64_t v = AW_VALUE;

	(void)arg;
	w->wr.opcode = WR_ATOMIC_WRITE;
	w->wr.wr.rdma.remote_addr = (uintptr_t)p->mb.p + 64;
	w->wr.wr.rdma.rkey = p->mb.mr->rkey;
	w->dma.length = sizeof(v);
	memcpy(w->dma.inline_data, &v, sizeof(v));
}

static void fill_inline(struct rxe_send_wqe *w, struct pair *p, uint32_t len)
{
	w->wr.opcode = WR_SEND;
	w->wr.send_flags = IBV_SEND_INLINE;
	w->dma.length = len;
	(void)p;
}

/* A SEND with @n SGEs (as many as the slot holds are valid ones). */
static void fill_nsge(struct rxe_send_wqe *w, struct pair *p, uint32_t n)
{
	uint32_t i;

	w->wr.opcode = WR_SEND;
	w->dma.num_sge = n;
	w->dma.length = 16 * n;
	for (i = 0; i < n && i < 3; i++) {
		w->dma.sge[i].addr = (uintptr_t)p->ma.p;
		w->dma.sge[i].length = 16;
		w->dma.sge[i].lkey = p->ma.mr->lkey;
	}
}

/* A SEND of @n SGEs of @len bytes each. */
static void fill_sges(struct rxe_send_wqe *w, struct pair *p, uint32_t n,
		      uint32_t len)
{
	uint32_t i;

	w->wr.opcode = WR_SEND;
	w->dma.num_sge = n;
	for (i = 0; i < n; i++) {
		w->dma.sge[i].addr = (uintptr_t)p->ma.p;
		w->dma.sge[i].length = len;
		w->dma.sge[i].lkey = p->ma.mr->lkey;
	}
	w->dma.length = (uint32_t)((uint64_t)len * n);
}

static void fill_one(struct rxe_send_wqe *w, struct pair *p, uint32_t len)
{
	fill_sges(w, p, 1, len);
}

static void fill_two(struct rxe_send_wqe *w, struct pair *p, uint32_t len)
{
	fill_sges(w, p, 2, len);
}

/* Lengths 0xffffffff and @arg: past 2^32, or @arg - 1 in 32 bits. */
static void fill_wrap(struct rxe_send_wqe *w, struct pair *p, uint32_t arg)
{
	fill_sges(w, p, 2, 0xffffffffu);
	w->dma.sge[1].length = arg;
	w->dma.length = 0xffffffffu + arg;
}

static void fill_op(struct rxe_send_wqe *w, struct pair *p, uint32_t op)
{
	w->wr.opcode = op;
	w->wr.wr.rdma.remote_addr = (uintptr_t)p->mb.p;
	w->wr.wr.rdma.rkey = p->mb.mr->rkey;
}

static void fill_cas(struct rxe_send_wqe *w, struct pair *p, uint32_t arg)
{
	(void)arg;
	w->wr.opcode = WR_CMP_SWP;
	w->wr.wr.atomic.remote_addr = (uintptr_t)p->mb.p;
	w->wr.wr.atomic.rkey = p->mb.mr->rkey;
}

static const struct caps_case cases[] = {
	{ "ATOMIC_WRITE", 0, fill_atomic_write, 0,
	  S(LOC_LEN_ERR) | S(SUCCESS) },
	{ "ATOMIC_WRITE", 2, fill_atomic_write, 0, S(SUCCESS) },
	{ "inline SEND of 1 byte", 0, fill_inline, 1, S(LOC_LEN_ERR) },
	{ "inline SEND of 48 bytes", 0, fill_inline, 48, S(LOC_LEN_ERR) },
	{ "inline SEND of 0xffffffff bytes", 0, fill_inline, 0xffffffffu,
	  S(LOC_LEN_ERR) },
	{ "inline SEND of 33 bytes", 2, fill_inline, 33, S(LOC_LEN_ERR) },
	{ "SEND with num_sge 1", 0, fill_nsge, 1, S(LOC_LEN_ERR) },
	{ "SEND with num_sge 2", 0, fill_nsge, 2, S(LOC_LEN_ERR) },
	{ "SEND with num_sge 31", 0, fill_nsge, 31, S(LOC_LEN_ERR) },
	{ "SEND with num_sge 32", 0, fill_nsge, 32, S(LOC_LEN_ERR) },
	{ "SEND with num_sge 33", 0, fill_nsge, 33, S(LOC_LEN_ERR) },
	{ "SEND with num_sge 0xffffffff", 0, fill_nsge, 0xffffffffu,
	  S(LOC_LEN_ERR) },
	{ "SEND with num_sge 3", 2, fill_nsge, 3, S(LOC_LEN_ERR) },
	{ "SEND with num_sge 0x80000001", 2, fill_nsge, 0x80000001u,
	  S(LOC_LEN_ERR) },
	{ "SEND of 2 SGEs of 2^31 bytes (2^32 in all)", 2, fill_two,
	  0x80000000u, S(LOC_LEN_ERR) },
	{ "SEND of one SGE of 0xffffffff bytes", 2, fill_one, 0xffffffffu,
	  S(LOC_LEN_ERR) },
	{ "SEND of SGEs of 0xffffffff + 2 bytes (1 in 32 bits)", 2,
	  fill_wrap, 2, S(LOC_LEN_ERR) },
	{ "SEND one byte longer than max_msg_sz", 2, fill_one, 0, 0 },
	{ "CMP_SWP without an SGE", 0, fill_cas, 0, S(LOC_LEN_ERR) },
	{ "REG_MR opcode (kernel QPs only)", 0, fill_op, WR_REG_MR,
	  S(LOC_QP_OP_ERR) },
	{ "MASKED_ATOMIC_CMP_AND_SWP opcode (12)", 0, fill_op, 12,
	  S(LOC_QP_OP_ERR) },
	{ "opcode 0xffffffff", 0, fill_op, 0xffffffffu, S(LOC_QP_OP_ERR) },
};

static bool want_has(uint32_t want, int status)
{
	return status >= 0 && status < 32 && (want & (1u << status));
}

/* A zero-length RDMA WRITE through the provider; its status. */
static int zero_write(struct pair *p, uint64_t wr_id)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = (uintptr_t)p->mb.p,
			     .rkey = p->mb.mr->rkey },
	};
	struct ibv_wc wc;
	int err = post_wr(&p->a, &wr);

	if (err) {
		diag("post of a zero-length RDMA WRITE: %s", strerror(err));
		return -1;
	}
	return wait_send_wc(&p->a, &wc, WAIT_MS) == 1 ? (int)wc.status : -1;
}

/*
 * After an error completion: the QP is in ERR and flushes what follows.
 * Return: true if so; what was found in @buf.
 */
static bool check_flush(struct pair *p, char *buf, size_t len)
{
	int state = hqp_state(&p->a), s = zero_write(p, 0xf1);

	snprintf(buf, len, ", QP state %d, next WQE %s", state, st(s));
	return state == IBV_QPS_ERR && s == IBV_WC_WR_FLUSH_ERR;
}

/*
 * An ATOMIC_WRITE wrote its value, or failed and left the target alone.
 * Return: true if so; the target in @buf.
 */
static bool check_atomic_write(struct pair *p, int s, char *buf, size_t len)
{
	uint64_t v;

	memcpy(&v, p->mb.p + 64, sizeof(v));
	snprintf(buf, len, ", target %#llx", (unsigned long long)v);
	return v == (s == IBV_WC_SUCCESS ? AW_VALUE : 0);
}

/* The next WQE lands in the last slot (odd index) of the 2-slot ring. */
static int to_last_slot(struct pair *p)
{
	int s;

	if (hqp_state(&p->a) != IBV_QPS_RTS && pair_reconnect(p))
		return -1;
	while (!(p->a.sq.buf->producer_index & 1)) {
		s = zero_write(p, 0xf0);
		if (s != IBV_WC_SUCCESS) {
			diag("zero-length WRITE before the case: %s", st(s));
			return -1;
		}
	}
	return 0;
}

static void run_case(struct pair *p, const struct caps_case *c)
{
	struct rxe_send_wqe *w;
	struct ibv_wc wc = {};
	char what[128], aw[40] = "", fl[80] = "";
	int s = -1, err;
	bool good;

	snprintf(what, sizeof(what), "%s on send_wr 1, send_sge %u, inline 0",
		 c->desc, c->sge);
	if (to_last_slot(p)) {
		tap(false, "a) %s: QP ready, WQE in the last slot", what);
		return;
	}
	w = sq_next(&p->a);
	if (!w) {
		tap(false, "a) %s: ring slot free", what);
		return;
	}
	w->wr.wr_id = 0xca5e;
	c->fill(w, p, c->arg ? c->arg : (uint32_t)max_msg + 1);
	err = sq_commit(&p->a);
	if (err)
		diag("doorbell: %s", strerror(err));
	s = wait_send_wc(&p->a, &wc, WAIT_MS) == 1 ? (int)wc.status : -1;
	good = want_has(c->want ? c->want : S(LOC_LEN_ERR), s) &&
	       wc.wr_id == 0xca5e;
	if (s >= 0 && wc.wr_id != 0xca5e)
		diag("wr_id %#llx", (unsigned long long)wc.wr_id);
	if (c->fill == fill_atomic_write)
		good &= check_atomic_write(p, s, aw, sizeof(aw));
	if (s > IBV_WC_SUCCESS)
		good &= check_flush(p, fl, sizeof(fl));
	/* One line per case: the status, then what an error must cause. */
	tap(good, "a) %s: completes with %s%s%s", what, st(s), aw, fl);
}

/* The cases for QPs of @sge send SGEs, on one pair. */
static void run_cases(uint32_t sge)
{
	struct ibv_qp_cap cap = {
		.max_send_wr = 1, .max_recv_wr = 1,
		.max_send_sge = sge, .max_recv_sge = 1,
	};
	struct pair p;
	size_t i;

	if (pair_new(&p, IBV_QPT_RC, &cap, 4)) {
		tap(false, "a) RC pair with send_wr 1, send_sge %u, inline 0 "
		    "created", sge);
		return;
	}
	diag("granted: send_wr %u, send_sge %u, inline %u; ring slot %zu B",
	     p.a.cap.max_send_wr, p.a.cap.max_send_sge,
	     p.a.cap.max_inline_data, sq_elem(&p.a));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (cases[i].sge != sge)
			continue;
		run_case(&p, &cases[i]);
		/* The target of the ATOMIC_WRITEs, clean for the next one. */
		memset(p.mb.p + 64, 0, 8);
	}
	/* slub_debug checks the kernel's WQE copies as they are freed. */
	pair_free(&p);
}

int sc_caps(void)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(g.ctx, 1, &pa) == 0)
		max_msg = pa.max_msg_sz;
	if (!max_msg || max_msg >= 0xffffffffu)
		max_msg = 0x7fffffff;
	diag("port max_msg_sz %llu", (unsigned long long)max_msg);
	run_cases(0);
	run_cases(2);
	return 0;
}
