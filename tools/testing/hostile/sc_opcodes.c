// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * b) Every opcode value 0..255 (and a few 32-bit ones) in a raw send WQE
 * on RC, UC and UD QPs, then WQEs of random bytes with each opcode the
 * QP type has.
 *
 * The body of an opcode sweep WQE is valid for what the opcode needs
 * (remote address and R_Key of the peer's MR, an SGE of the local MR, the
 * AH number and QPN of the UD peer).  Expected:
 *  - the opcodes of the QP type with a valid body complete successfully
 *    (RC: RDMA WRITE [with immediate], SEND [with immediate], RDMA READ,
 *    CmpSwap and FetchAdd; UC: WRITE and SEND; UD: SEND [with immediate]);
 *  - LOCAL_INV, BIND_MW, SEND_WITH_INV, FLUSH and ATOMIC_WRITE carry keys
 *    or rights the body does not grant: they complete, status printed;
 *  - every other value completes with IB_WC_LOC_QP_OP_ERR
 *    (IBTA 10.7.3.1: an operation the QP type does not support);
 *  - each completes without a later post to push it (a WQE waits for
 *    nothing but the requester).
 * Random bodies: each WQE completes (any status but a flush), with its
 * wr_id.  A QP left in ERR is reset and connected again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hostile.h"

#define S(x)		(1u << IBV_WC_##x)
#define ANY		0xffffffffu
#define NGARBAGE	48
/* Bound on a completion that should be immediate, before nudging it. */
#define QUICK_MS	3000

struct bctx {
	struct pair p;
	enum ibv_qp_type type;
	const char *name;
	uint32_t ah_num;	/* UD: AH towards the device itself */
	struct ibv_ah *ah;
	bool lazy;		/* a WQE completed only after a later post */
	int nlazy;
};

/* The statuses an opcode may complete with on a QP type. */
static uint32_t expect(enum ibv_qp_type t, uint32_t op)
{
	switch (op) {
	case WR_SEND:
	case WR_SEND_IMM:
		return S(SUCCESS);
	case WR_RDMA_WRITE:
	case WR_RDMA_WRITE_IMM:
		return t == IBV_QPT_UD ? S(LOC_QP_OP_ERR) : S(SUCCESS);
	case WR_RDMA_READ:
	case WR_CMP_SWP:
	case WR_FETCH_ADD:
		return t == IBV_QPT_RC ? S(SUCCESS) : S(LOC_QP_OP_ERR);
	case WR_LOCAL_INV:
	case WR_BIND_MW:
		return t == IBV_QPT_UD ? S(LOC_QP_OP_ERR) : ANY;
	case WR_SEND_INV:
	case WR_FLUSH:
	case WR_ATOMIC_WRITE:
		return t == IBV_QPT_RC ? ANY : S(LOC_QP_OP_ERR);
	default:
		return S(LOC_QP_OP_ERR);
	}
}

static bool is_valid(enum ibv_qp_type t, uint32_t op)
{
	return op < 256 && expect(t, op) != S(LOC_QP_OP_ERR);
}

static void sge(struct rxe_send_wqe *w, struct bctx *c, uint32_t len)
{
	w->dma.num_sge = 1;
	w->dma.length = len;
	w->dma.sge[0].addr = (uintptr_t)c->p.ma.p;
	w->dma.sge[0].length = len;
	w->dma.sge[0].lkey = c->p.ma.mr->lkey;
}

/* A body that is valid for whatever @op needs. */
static void fill_body(struct rxe_send_wqe *w, struct bctx *c, uint32_t op)
{
	uint64_t raddr = (uintptr_t)c->p.mb.p + 4096;
	uint64_t v = 0x0123456789abcdefull;

	w->wr.opcode = op;
	if (c->type == IBV_QPT_UD) {
		w->wr.wr.ud.remote_qpn = c->p.b.qp->qp_num;
		w->wr.wr.ud.remote_qkey = QKEY;
		w->wr.wr.ud.ah_num = c->ah_num;
		sge(w, c, 16);
		return;
	}
	switch (op) {
	case WR_CMP_SWP:
	case WR_FETCH_ADD:
		w->wr.wr.atomic.remote_addr = raddr;
		w->wr.wr.atomic.rkey = c->p.mb.mr->rkey;
		sge(w, c, 8);
		break;
	case WR_ATOMIC_WRITE:
		w->wr.wr.rdma.remote_addr = raddr;
		w->wr.wr.rdma.rkey = c->p.mb.mr->rkey;
		w->dma.length = 8;
		memcpy(w->dma.inline_data, &v, sizeof(v));
		break;
	default:
		w->wr.wr.rdma.remote_addr = raddr;
		w->wr.wr.rdma.rkey = c->p.mb.mr->rkey;
		sge(w, c, 16);
		break;
	}
}

/* Raw WQE @op (body by @fill) with @wr_id; post and ring.  0 or errno. */
static int post_op(struct bctx *c, uint32_t op, uint64_t wr_id,
		   void (*fill)(struct rxe_send_wqe *, struct bctx *,
				uint32_t))
{
	struct rxe_send_wqe *w = sq_next(&c->p.a);

	if (!w)
		return ENOMEM;
	fill(w, c, op);
	w->wr.wr_id = wr_id;
	return sq_commit(&c->p.a);
}

/* Back to RTS on both sides, unless both are there; b's receives topped up. */
static int settle(struct bctx *c)
{
	int n = drain_cq(c->p.b.cq);

	if (hqp_state(&c->p.a) == IBV_QPS_RTS &&
	    hqp_state(&c->p.b) == IBV_QPS_RTS)
		return n ? post_recvs(&c->p.b, &c->p.mb, n, 4096) : 0;
	return pair_reconnect(&c->p);
}

/*
 * The completion of the WQE @wr_id just posted.  If none comes within
 * QUICK_MS, a valid SEND is posted behind it: a completion that then
 * comes was waiting for a later post (counted in c->nlazy).  Once that
 * was seen, every WQE gets the SEND behind it at once.
 */
static int op_status(struct bctx *c, uint64_t wr_id, struct ibv_wc *wc)
{
	struct ibv_wc nw;
	int n = 0;

	if (!c->lazy)
		n = wait_send_wc(&c->p.a, wc, QUICK_MS);
	if (c->lazy || n == 0) {
		if (!c->lazy)
			c->nlazy++;
		if (post_op(c, WR_SEND, 0x5e4d, fill_body))
			return -1;
		n = wait_send_wc(&c->p.a, wc, WAIT_MS);
		if (n == 1 && wc->wr_id != 0x5e4d &&
		    wait_send_wc(&c->p.a, &nw, WAIT_MS) != 1)
			diag("no completion for the SEND posted behind");
		if (n == 1 && wc->wr_id == 0x5e4d)
			diag("wr_id %#llx: the SEND behind completed first",
			     (unsigned long long)wr_id);
	}
	if (n != 1)
		return -1;
	if (wc->wr_id != wr_id)
		diag("completion for wr_id %#llx carries %#llx",
		     (unsigned long long)wr_id,
		     (unsigned long long)wc->wr_id);
	return wc->status;
}

static bool status_ok(uint32_t want, int s)
{
	if (s < 0)
		return false;
	if (want == ANY)
		return s != IBV_WC_WR_FLUSH_ERR;
	return s < 32 && (want & (1u << s));
}

/* One opcode; true when it completed as expected. */
static bool one_op(struct bctx *c, uint32_t op, int *status)
{
	uint64_t wr_id = ((uint64_t)c->type << 40) | op;
	struct ibv_wc wc = {};
	int err = settle(c);

	if (!err)
		err = post_op(c, op, wr_id, fill_body);
	if (err) {
		diag("%s opcode %#x: not posted (%s)", c->name, op,
		     strerror(err > 0 ? err : EIO));
		*status = -1;
		return false;
	}
	*status = op_status(c, wr_id, &wc);
	if (c->nlazy && !c->lazy) {
		c->lazy = true;
		diag("%s opcode %#x completed only after a later post",
		     c->name, op);
	}
	return status_ok(expect(c->type, op), *status) && wc.wr_id == wr_id;
}

static void sweep(struct bctx *c)
{
	static const uint32_t wide[] = {
		0x100, 0x1ff, 0x8000, 0x80000002u, 0xfffffffeu, 0xffffffffu,
	};
	int nbad = 0, ninv = 0, s;
	uint32_t op;
	bool good;

	for (op = 0; op < 256 + ARRAY_SIZE(wide); op++) {
		uint32_t o = op < 256 ? op : wide[op - 256];

		good = one_op(c, o, &s);
		if (is_valid(c->type, o)) {
			tap(good, "b) %s opcode %u completes with %s", c->name,
			    o, st(s));
			continue;
		}
		ninv++;
		if (!good && nbad++ < 8)
			diag("%s opcode %#x: %s, expected %s", c->name, o,
			     st(s), st(IBV_WC_LOC_QP_OP_ERR));
	}
	tap(nbad == 0, "b) %s: the %d opcode values it lacks complete with "
	    "%s (%d did not)", c->name, ninv, st(IBV_WC_LOC_QP_OP_ERR), nbad);
	tap(c->nlazy == 0, "b) %s: every WQE completes without a later post "
	    "(%d waited for one)", c->name, c->nlazy);
}

/* Random bytes after the opcode; the wr_id is set afterwards. */
static void fill_random(struct rxe_send_wqe *w, struct bctx *c, uint32_t op)
{
	uint32_t *p = (uint32_t *)w;
	size_t i;

	for (i = 0; i < sq_elem(&c->p.a) / 4; i++)
		p[i] = rnd32();
	w->wr.opcode = op;
	/* Small SGE counts too, not only huge ones. */
	if (rnd32() & 1)
		w->dma.num_sge &= 3;
	if (rnd32() & 1)
		w->dma.length &= 0xff;
}

static void garbage(struct bctx *c)
{
	int i, s, nbad = 0, count[32] = {};
	uint64_t wr_id;
	struct ibv_wc wc = {};
	uint32_t op;
	char line[256];
	size_t n = 0;

	for (i = 0; i < NGARBAGE; i++) {
		do
			op = rnd32() & 0xf;
		while (!is_valid(c->type, op));
		wr_id = 0x6a7b000000ull | i;
		if (settle(c) || post_op(c, op, wr_id, fill_random)) {
			nbad++;
			continue;
		}
		s = op_status(c, wr_id, &wc);
		if (s < 0 || s == IBV_WC_WR_FLUSH_ERR || wc.wr_id != wr_id) {
			if (nbad++ < 8)
				diag("%s random WQE %d (opcode %u): %s", c->name,
				     i, op, st(s));
			continue;
		}
		count[s & 31]++;
	}
	for (i = 0; i < 32 && n < sizeof(line); i++)
		if (count[i])
			n += snprintf(line + n, sizeof(line) - n, " %s x%d",
				      st(i), count[i]);
	diag("%s random WQEs:%s", c->name, n ? line : " none completed");
	tap(nbad == 0, "b) %s: %d WQEs of random bytes each complete with "
	    "their wr_id (%d did not)", c->name, NGARBAGE, nbad);
}

static void one_type(enum ibv_qp_type type, const char *name)
{
	static const struct ibv_qp_cap cap = {
		.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 2,
		.max_recv_sge = 2, .max_inline_data = 64,
	};
	struct bctx c = { .type = type, .name = name };

	if (pair_new(&c.p, type, &cap, 64)) {
		tap(false, "b) %s QP pair created", name);
		return;
	}
	if (type == IBV_QPT_UD) {
		c.ah = ah_new(c.p.pd);
		if (!c.ah || ah_num_of(&c.p.a, c.ah, &c.ah_num)) {
			tap(false, "b) UD: AH and its number");
			goto out;
		}
	}
	sweep(&c);
	garbage(&c);
	if (c.ah)
		ibv_destroy_ah(c.ah);
out:
	pair_free(&c.p);
}

int sc_opcodes(void)
{
	one_type(IBV_QPT_RC, "RC");
	one_type(IBV_QPT_UC, "UC");
	one_type(IBV_QPT_UD, "UD");
	return 0;
}
