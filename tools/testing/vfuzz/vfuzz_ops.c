// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce-vfuzz: the operation table.
 *
 * Each operation picks its objects from the pool (taking a busy reference
 * on each, so that the other thread of the two-thread mode destroys them
 * only through the kernel, never under the provider's feet), calls one or
 * more verbs with random and boundary arguments, and records every result
 * with rec().  Nothing here judges an errno: the kernel answering is the
 * point.  Rules that keep the fuzzer itself alive: provider calls get only
 * live provider objects (a UD post always has a live AH: the rxe provider
 * reads it for every opcode; a BIND_MW post a live MW and MR), inline data
 * comes from process memory, ring geometry is taken from creation time,
 * never from the (user-writable) ring header.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vfuzz.h"

bool ctx_idle(int ctx);
void op_fork(void);

#define PAGE 4096UL
#define MAX_SGE_ARR 40

uint32_t dead_keys[64];
atomic_uint dead_key_n;
static uint32_t dead_ahs[32];
static atomic_uint dead_ah_n;
static atomic_ulong wr_tag;
static char *scratch;		/* inline data source, 64 KiB */
static size_t scratch_len = 65536;

/* The rxe provider's AH (rdma-core 44 providers/rxe/rxe.h): its number. */
struct prov_rxe_ah {
	struct ibv_ah ibv_ah;
	struct rxe_av av;
	int ah_num;
};

/* sroce's FLUSH WQE body (the rxe ABI has no struct for it in 44). */
struct vf_flush_wr {
	uint64_t remote_addr;
	uint32_t length;
	uint32_t rkey;
	uint8_t type;
	uint8_t level;
};

#define WR_FLUSH		14
#define WR_ATOMIC_WRITE		15

void dead_key(uint32_t key)
{
	dead_keys[atomic_fetch_add(&dead_key_n, 1) % 64] = key;
}

uint32_t any_dead_key(void)
{
	unsigned int n = atomic_load(&dead_key_n);

	return n ? dead_keys[below(MIN(n, 64u))] : (uint32_t)rnd();
}

static void dead_ah(uint32_t num)
{
	dead_ahs[atomic_fetch_add(&dead_ah_n, 1) % 32] = num;
}

static uint64_t tag(void)
{
	return 0xf2ULL << 56 | atomic_fetch_add(&wr_tag, 1);
}

/* ---- pool helpers ---- */

static int reserve(int kind)
{
	int i;

	pool_lockit();
	i = free_slot(kind);
	if (i >= 0) {
		struct hdr *h = hdr_of(kind, i);

		h->state = S_EXCL;
		h->pd = -1;
	}
	pool_unlockit();
	return i;
}

static void publish(int kind, int i, int ctx, int pd)
{
	struct hdr *h = hdr_of(kind, i);

	pool_lockit();
	h->ctx = ctx;
	h->pd = pd;
	h->state = S_LIVE;
	pool_unlockit();
}

static bool ctx_for_create(int kind, int i, const void *arg)
{
	(void)arg;
	return !hdr_of(kind, i)->inh;
}

static int pick_ctx(struct refs *rf, bool create)
{
	return pick(rf, K_CTX, -1, create ? ctx_for_create : NULL, NULL);
}

static bool same_pd(int kind, int i, const void *arg)
{
	return hdr_of(kind, i)->pd == *(const int *)arg;
}

static bool qp_type_is(int kind, int i, const void *arg)
{
	(void)kind;
	return P.qp[i].type == *(const int *)arg;
}

static bool has_ring(int kind, int i, const void *arg)
{
	(void)arg;
	switch (kind) {
	case K_CQ: return P.cq[i].r.q;
	case K_SRQ: return P.srq[i].r.q;
	case K_QP: return P.qp[i].sq.q;
	}
	return false;
}

/* Snapshot of a QP taken with a busy reference held. */
struct qpinfo {
	int slot, ctx, pd, type, srq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	uint64_t ops;
	struct ibv_qp_cap cap;
	struct ring sq, rq, srq_r;
	uint32_t qkey;
};

static void qp_snapshot(int i, struct qpinfo *q)
{
	struct qp_o *o = &P.qp[i];

	pool_lockit();
	q->slot = i;
	q->ctx = o->h.ctx;
	q->pd = o->h.pd;
	q->type = o->type;
	q->srq = o->srq;
	q->qp = o->qp;
	q->qpx = o->qpx;
	q->ops = o->ops;
	q->cap = o->cap;
	q->sq = o->sq;
	q->rq = o->rq;
	memset(&q->srq_r, 0, sizeof(q->srq_r));
	if (o->srq >= 0 && P.srq[o->srq].h.state == S_LIVE)
		q->srq_r = P.srq[o->srq].r;
	q->qkey = o->qkey;
	pool_unlockit();
}

/* ---- value generators ---- */

static int gen_access(void)
{
	static const int common[] = {
		0,
		IBV_ACCESS_LOCAL_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
		IBV_ACCESS_REMOTE_READ,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			IBV_ACCESS_MW_BIND,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND,
	};

	if (chance(75))
		return common[below(ARRAY_SIZE(common))];
	if (chance(70))
		return (int)below(1u << 11);	/* known bits incl. ZERO_BASED, ODP */
	return (int)(rnd() & 0x7fffffff);
}

static unsigned int gen_send_flags(void)
{
	unsigned int f = 0;

	if (chance(70))
		f |= IBV_SEND_SIGNALED;
	if (chance(10))
		f |= IBV_SEND_FENCE;
	if (chance(10))
		f |= IBV_SEND_SOLICITED;
	if (chance(20))
		f |= IBV_SEND_INLINE;
	if (chance(3))
		f |= IBV_SEND_IP_CSUM;
	if (chance(3))
		f |= 1u << rnd_range(5, 31);
	return f;
}

static size_t gen_size(void)
{
	static const size_t sz[] = { 1, 8, 64, 4095, 4096, 4097, 8192, 65536 };

	if (chance(50))
		return sz[below(ARRAY_SIZE(sz))];
	if (chance(90))
		return rnd_range(1, 65536);
	return chance(70) ? 1 << 20 : 4 << 20;
}

static void gid_v4(union ibv_gid *g, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = 0xff;
	g->raw[11] = 0xff;
	g->raw[12] = a;
	g->raw[13] = b;
	g->raw[14] = c;
	g->raw[15] = d;
}

static void gid_v6(union ibv_gid *g, uint16_t w0, uint16_t w1, uint16_t w7)
{
	memset(g, 0, sizeof(*g));
	g->raw[0] = (uint8_t)(w0 >> 8);
	g->raw[1] = (uint8_t)w0;
	g->raw[2] = (uint8_t)(w1 >> 8);
	g->raw[3] = (uint8_t)w1;
	g->raw[14] = (uint8_t)(w7 >> 8);
	g->raw[15] = (uint8_t)w7;
}

static bool gid_is_v4(const union ibv_gid *g)
{
	return !memcmp(g->raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
}

/*
 * A destination GID: mostly the device's own (loopback), else its peer
 * on the test link, addresses without a route (fail fast), multicast,
 * special ones.  Only 198.18.0.0/15 and 2001:db8::/32 besides multicast,
 * loopback, link-local and zero.
 */
static void gen_gid(union ibv_gid *g)
{
	uint32_t r = below(100);

	if (r < 40 && D.gid_v4 >= 0) {
		*g = D.gv4;
	} else if (r < 55 && D.gid_v6 >= 0) {
		*g = D.gv6;
	} else if (r < 63) {
		gid_v4(g, 198, 18, 0, 2);
	} else if (r < 66) {
		gid_v6(g, 0x2001, 0x0db8, 2);
	} else if (r < 70) {
		gid_v4(g, 198, 19, (uint8_t)rnd(), (uint8_t)rnd());
	} else if (r < 74) {
		gid_v6(g, 0x2001, 0x0db8, (uint16_t)rnd());
		g->raw[4] = 0xff;
	} else if (r < 82) {
		gid_v4(g, 239, 198, 18, (uint8_t)below(8));
	} else if (r < 88) {
		gid_v6(g, 0xff05, 0, (uint16_t)below(8));
		g->raw[12] = 0x0d;
		g->raw[13] = 0xb8;
	} else if (r < 90) {
		memset(g, 0, sizeof(*g));
	} else if (r < 92) {
		if (chance(50))
			gid_v4(g, 127, 0, 0, 1);
		else
			gid_v6(g, 0, 0, 1);
	} else if (r < 94) {
		gid_v6(g, 0xfe80, 0, 1);
	} else if (r < 96) {
		gid_v4(g, 198, 18, 0, (uint8_t)rnd_range(3, 254));
	} else {
		rnd_fill(g, sizeof(*g));
		g->raw[0] = 0x20;
		g->raw[1] = 0x01;
		g->raw[2] = 0x0d;
		g->raw[3] = 0xb8;
	}
}

static int own_index_for(const union ibv_gid *g)
{
	if (gid_is_v4(g))
		return D.gid_v4 >= 0 ? D.gid_v4 : D.gid_v6;
	return D.gid_v6 >= 0 ? D.gid_v6 : D.gid_v4;
}

static void gen_ah_attr(struct ibv_ah_attr *a)
{
	static const uint8_t ports[] = { 0, 2, 255 };

	memset(a, 0, sizeof(*a));
	a->is_global = chance(93);
	gen_gid(&a->grh.dgid);
	if (chance(75))
		a->grh.sgid_index = (uint8_t)own_index_for(&a->grh.dgid);
	else if (chance(50))
		a->grh.sgid_index = (uint8_t)(gid_is_v4(&a->grh.dgid) ?
					      D.gid_v6 : D.gid_v4);
	else
		a->grh.sgid_index = (uint8_t)rnd();
	a->grh.hop_limit = chance(80) ? 64 : (uint8_t)rnd();
	a->grh.traffic_class = chance(80) ? 0 : (uint8_t)rnd();
	a->grh.flow_label = chance(80) ? 0 : (uint32_t)rnd();
	a->dlid = chance(90) ? 0 : (uint16_t)rnd();
	a->sl = chance(90) ? 0 : (uint8_t)rnd();
	a->src_path_bits = chance(95) ? 0 : (uint8_t)rnd();
	a->static_rate = chance(90) ? 0 : (uint8_t)rnd();
	a->port_num = chance(88) ? 1 : ports[below(ARRAY_SIZE(ports))];
}

/* An MR of context @ctx (same PD first if @pd >= 0); lock held. */
static int mr_for(int ctx, int pd, int want_access)
{
	struct mrq {
		int pd, acc;
	} q = { pd, want_access };
	int i, n = 0, chosen = -1;

	for (i = 0; i < NMR; i++) {
		struct mr_o *m = &P.mr[i];

		if (m->h.state != S_LIVE || m->h.ctx != ctx || !m->len)
			continue;
		if (q.pd >= 0 && m->h.pd != q.pd)
			continue;
		if ((m->access & q.acc) != q.acc)
			continue;
		if (below(++n) == 0)
			chosen = i;
	}
	return chosen;
}

/* An offset and length within (mostly) or around [0, len). */
static void gen_range(size_t len, uint64_t *off, uint32_t *l, uint32_t cap)
{
	uint32_t r = below(100);

	if (r < 75 && len) {
		*off = below((uint32_t)MIN(len, 0xffffffffUL));
		*l = below((uint32_t)MIN(len - *off, (size_t)cap) + 1);
		return;
	}
	switch (below(8)) {
	case 0: *off = len; *l = 1; break;
	case 1: *off = (uint64_t)-1; *l = 2; break;
	case 2: *off = 0; *l = (uint32_t)MIN(len + 1, 0xffffffffUL); break;
	case 3: *off = 0; *l = 0; break;
	case 4: *off = 0; *l = 0x80000000u; break;
	case 5: *off = len ? len - 1 : 0; *l = 4096; break;
	case 6: *off = (uint64_t)rnd(); *l = (uint32_t)rnd(); break;
	default: *off = 0; *l = 0xffffffffu; break;
	}
}

/* One scatter/gather element for a QP of @ctx/@pd; lock taken here. */
static void gen_sge(struct ibv_sge *s, int ctx, int pd, bool recv)
{
	uint32_t r = below(100);
	int m = -1;

	pool_lockit();
	if (r < 60)
		m = mr_for(ctx, pd, recv && chance(80) ? IBV_ACCESS_LOCAL_WRITE : 0);
	if (m < 0 && r < 80)
		m = mr_for(ctx, -1, 0);
	if (m < 0 && r < 85)
		m = pick_nolock(K_MR, -1, NULL, NULL);
	if (m >= 0 && P.mr[m].mr) {
		uint64_t off;
		uint32_t l;

		gen_range(P.mr[m].len, &off, &l, 8192);
		s->lkey = chance(97) ? P.mr[m].mr->lkey : P.mr[m].mr->rkey + 1;
		s->addr = (uintptr_t)P.mr[m].addr + off;
		s->length = l;
	} else {
		s->lkey = chance(70) ? any_dead_key() : (uint32_t)rnd();
		s->addr = rnd();
		s->length = chance(80) ? below(4096) : (uint32_t)rnd();
	}
	pool_unlockit();
}

/* A remote address and key: MRs and MWs of the context, dead or random. */
static void gen_remote(int ctx, int need, uint64_t *addr, uint32_t *rkey)
{
	uint32_t r = below(100);
	int m;

	pool_lockit();
	if (r < 70) {
		m = mr_for(ctx, -1, chance(80) ? need : 0);
		if (m >= 0) {
			uint64_t off;
			uint32_t l;

			gen_range(P.mr[m].len, &off, &l, 8192);
			*addr = (uintptr_t)P.mr[m].addr + off;
			if (chance(70))
				*addr &= ~7ULL;
			*rkey = P.mr[m].mr->rkey;
			pool_unlockit();
			return;
		}
	}
	if (r < 80) {
		m = pick_nolock(K_MW, ctx, NULL, NULL);
		if (m >= 0) {
			int mr = mr_for(ctx, -1, 0);

			*rkey = P.mw[m].mw->rkey;
			*addr = mr >= 0 ? (uintptr_t)P.mr[mr].addr : rnd();
			pool_unlockit();
			return;
		}
	}
	pool_unlockit();
	*rkey = chance(60) ? any_dead_key() : (uint32_t)rnd();
	*addr = chance(50) ? rnd() & ~7ULL : rnd();
}

static uint32_t gen_qpn_any(void);

/* A destination QP number: never one of the checked pair's. */
static uint32_t gen_qpn(void)
{
	uint32_t qpn = gen_qpn_any();

	return check_owns_qpn(qpn) ? 0xffffff : qpn;
}

static uint32_t gen_qpn_any(void)
{
	int i;

	if (chance(70)) {
		uint32_t qpn = 0;

		pool_lockit();
		i = pick_nolock(K_QP, -1, NULL, NULL);
		if (i >= 0)
			qpn = P.qp[i].qp->qp_num;
		pool_unlockit();
		if (i >= 0)
			return qpn;
	}
	switch (below(5)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return 0xffffff;
	case 3: return 0x1000000 | below(64);
	default: return (uint32_t)rnd();
	}
}

static uint32_t gen_ah_num(int ctx)
{
	uint32_t n = 0;
	int i;

	if (chance(60)) {
		pool_lockit();
		i = pick_nolock(K_AH, chance(80) ? ctx : -1, NULL, NULL);
		if (i >= 0)
			n = P.ah[i].ah_num;
		pool_unlockit();
		if (i >= 0)
			return n;
	}
	if (chance(50) && atomic_load(&dead_ah_n))
		return dead_ahs[below(MIN(atomic_load(&dead_ah_n), 32u))];
	switch (below(4)) {
	case 0: return 0;
	case 1: return below(64);
	case 2: return 0xffffffff;
	default: return (uint32_t)rnd();
	}
}

/* ---- rings ---- */

static void *slot_addr(const struct ring *r, uint32_t index)
{
	return r->q->data + (size_t)(index & r->mask) * r->esz;
}

static uint32_t ring_prod(const struct ring *r)
{
	return __atomic_load_n(&r->q->producer_index, __ATOMIC_ACQUIRE) & r->mask;
}

static void ring_set_prod(const struct ring *r, uint32_t p, uint32_t n)
{
	uint32_t v;

	if (chance(88))
		v = (p + n) & r->mask;
	else if (chance(33))
		v = p;
	else if (chance(50))
		v = (p + below(r->mask + 1)) & r->mask;
	else
		v = (uint32_t)rnd();
	__atomic_store_n(&r->q->producer_index, v, __ATOMIC_RELEASE);
}

/*
 * The rxe provider (rdma-core 44) uses a producer index (and a CQ's
 * consumer index) unmasked as a slot number: an index the fuzzer made
 * garbage for the kernel is masked again before the provider can see it.
 */
static void ring_fix(const struct ring *r)
{
	uint32_t v = __atomic_load_n(&r->q->producer_index, __ATOMIC_ACQUIRE);

	__atomic_store_n(&r->q->producer_index, v & r->mask, __ATOMIC_RELEASE);
}

static int doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_post_send c = {};
	struct ib_uverbs_post_send_resp resp;

	c.response = (uintptr_t)&resp;
	c.qp_handle = qp->handle;
	c.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return ucmd(qp->context, IB_USER_VERBS_CMD_POST_SEND, &c, sizeof(c),
		    sizeof(resp) / 4);
}

static uint32_t raw_opcode(int type)
{
	static const uint32_t rc[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
				       WR_FLUSH, WR_ATOMIC_WRITE };
	static const uint32_t uc[] = { 0, 1, 2, 3, 7, 8, 9 };

	if (chance(75)) {
		if (type == IBV_QPT_RC)
			return rc[below(ARRAY_SIZE(rc))];
		if (type == IBV_QPT_UC)
			return uc[below(ARRAY_SIZE(uc))];
		return chance(50) ? 2 : 3;
	}
	if (chance(80))
		return below(16);
	return chance(50) ? rnd_range(16, 64) : (uint32_t)rnd();
}

static void raw_fill_send(uint8_t *slot, const struct qpinfo *q)
{
	struct rxe_send_wqe *w = (void *)slot;
	size_t hdr = offsetof(struct rxe_send_wqe, dma) +
		     offsetof(struct rxe_dma_info, sge);
	size_t room = q->sq.esz > hdr ? q->sq.esz - hdr : 0;
	uint32_t nsge, i, k, len = 0, need;
	uint32_t maxs = q->cap.max_send_sge, rk;
	uint64_t ra;

	if (chance(70))
		memset(slot, 0, q->sq.esz);
	else
		rnd_fill(slot, q->sq.esz);
	w->wr.wr_id = tag();
	w->wr.opcode = raw_opcode(q->type);
	w->wr.send_flags = gen_send_flags();
	w->wr.ex.invalidate_rkey = chance(50) ? (uint32_t)rnd() : any_dead_key();
	switch (w->wr.opcode) {
	case 0: case 1: case 4: case WR_ATOMIC_WRITE:
		need = w->wr.opcode == 4 ? IBV_ACCESS_REMOTE_READ :
					   IBV_ACCESS_REMOTE_WRITE;
		gen_remote(q->ctx, (int)need, &ra, &rk);
		w->wr.wr.rdma.remote_addr = ra;
		w->wr.wr.rdma.rkey = rk;
		w->iova = ra;
		break;
	case 5: case 6:
		gen_remote(q->ctx, IBV_ACCESS_REMOTE_ATOMIC, &ra, &rk);
		w->wr.wr.atomic.remote_addr = ra;
		w->wr.wr.atomic.rkey = rk;
		w->wr.wr.atomic.compare_add = rnd();
		w->wr.wr.atomic.swap = rnd();
		w->iova = w->wr.wr.atomic.remote_addr;
		break;
	case WR_FLUSH: {
		struct vf_flush_wr f;

		gen_remote(q->ctx, 0, &f.remote_addr, &f.rkey);
		f.length = chance(70) ? below(65536) : (uint32_t)rnd();
		f.type = chance(80) ? (uint8_t)rnd_range(1, 3) : (uint8_t)rnd();
		f.level = chance(80) ? (uint8_t)below(2) : (uint8_t)rnd();
		memcpy(&w->wr.wr, &f, sizeof(f));
		break;
	}
	case 8: {
		struct ibv_sge s;

		gen_sge(&s, q->ctx, q->pd, false);
		w->wr.wr.mw.addr = s.addr;
		w->wr.wr.mw.length = chance(70) ? s.length : rnd();
		w->wr.wr.mw.mr_lkey = s.lkey;
		pool_lockit();
		k = (uint32_t)pick_nolock(K_MW, q->ctx, NULL, NULL);
		w->wr.wr.mw.mw_rkey = (int)k >= 0 ? P.mw[k].mw->rkey : any_dead_key();
		pool_unlockit();
		w->wr.wr.mw.rkey = chance(70) ? (w->wr.wr.mw.mw_rkey & ~0xffu) |
			((w->wr.wr.mw.mw_rkey + 1) & 0xff) : (uint32_t)rnd();
		w->wr.wr.mw.access = (uint32_t)gen_access();
		break;
	}
	default:
		if (q->type == IBV_QPT_UD || chance(20)) {
			w->wr.wr.ud.remote_qpn = gen_qpn();
			w->wr.wr.ud.remote_qkey = chance(70) ? q->qkey : (uint32_t)rnd();
			w->wr.wr.ud.pkey_index = chance(90) ? 0 : (uint16_t)rnd();
			w->wr.wr.ud.ah_num = gen_ah_num(q->ctx);
		}
	}
	if (chance(10))
		rnd_fill(&w->wr.wr, sizeof(w->wr.wr));

	nsge = chance(60) ? below(maxs + 1) : bval(maxs);
	if (w->wr.send_flags & IBV_SEND_INLINE) {
		uint32_t il = chance(60) ? below(q->cap.max_inline_data + 1) :
			      chance(50) ? (uint32_t)room + below(2) :
			      bval(q->cap.max_inline_data);

		rnd_fill(w->dma.inline_data, MIN((size_t)il, room));
		len = il;
	} else {
		k = (uint32_t)MIN((size_t)nsge, room / sizeof(struct rxe_sge));
		for (i = 0; i < k; i++) {
			struct ibv_sge s;

			gen_sge(&s, q->ctx, q->pd, false);
			w->dma.sge[i].addr = s.addr;
			w->dma.sge[i].length = s.length;
			w->dma.sge[i].lkey = s.lkey;
			len += s.length;
		}
		if (w->wr.opcode == WR_ATOMIC_WRITE && room >= 8)
			rnd_fill(w->dma.inline_data, 8);
	}
	w->dma.num_sge = nsge;
	w->dma.length = chance(75) ? len : bval(len);
	w->dma.resid = chance(80) ? w->dma.length : (uint32_t)rnd();
	w->dma.cur_sge = chance(90) ? 0 : (uint32_t)rnd();
	w->dma.sge_offset = chance(90) ? 0 : (uint32_t)rnd();
	w->ssn = (uint32_t)rnd();
}

static void raw_fill_recv(uint8_t *slot, uint32_t esz, uint32_t maxs, int ctx,
			  int pd)
{
	struct rxe_recv_wqe *w = (void *)slot;
	size_t hdr = offsetof(struct rxe_recv_wqe, dma) +
		     offsetof(struct rxe_dma_info, sge);
	size_t room = esz > hdr ? esz - hdr : 0;
	uint32_t n, k, i, len = 0;

	if (chance(70))
		memset(slot, 0, esz);
	else
		rnd_fill(slot, esz);
	w->wr_id = tag();
	n = chance(60) ? below(maxs + 1) : bval(maxs);
	k = (uint32_t)MIN((size_t)n, room / sizeof(struct rxe_sge));
	for (i = 0; i < k; i++) {
		struct ibv_sge s;

		gen_sge(&s, ctx, pd, true);
		w->dma.sge[i].addr = s.addr;
		w->dma.sge[i].length = s.length;
		w->dma.sge[i].lkey = s.lkey;
		len += s.length;
	}
	w->dma.num_sge = n;
	w->dma.length = chance(75) ? len : bval(len);
	w->dma.resid = chance(80) ? w->dma.length : (uint32_t)rnd();
	w->dma.cur_sge = chance(90) ? 0 : (uint32_t)rnd();
	w->dma.sge_offset = chance(90) ? 0 : (uint32_t)rnd();
}

/* ---- completion queues and events ---- */

static void poll_cq_slot(int i, int rounds)
{
	struct ibv_wc wc[64];
	struct cq_o *o = &P.cq[i];
	int r, n, j, ne[8];
	bool ex[8];

	/*
	 * Draw everything first: how many completions there are is timing,
	 * and the seed's sequence must not depend on it.
	 */
	rounds = MIN(rounds, 8);
	for (r = 0; r < rounds; r++) {
		ex[r] = chance(30);
		ne[r] = chance(90) ? (int)rnd_range(1, 64) : (int)(bval(64) % 65);
	}
	for (r = 0; r < rounds; r++) {
		snprintf(cur_detail, sizeof(cur_detail),
			 "cq %d%s: producer %u consumer %u mask %u", i,
			 o->taint ? " (tainted)" : "", o->r.q->producer_index,
			 o->r.q->consumer_index, o->r.mask);
		if (o->cqx && ex[r]) {
			struct ibv_poll_cq_attr pa = {};
			int k = 0;

			n = ibv_start_poll(o->cqx, &pa);
			if (n == ENOENT)
				break;
			rec(n);
			if (n)
				break;
			do {
				struct ibv_wc w = {};

				w.status = o->cqx->status;
				w.wr_id = o->cqx->wr_id;
				w.opcode = ibv_wc_read_opcode(o->cqx);
				/* The provider has readers for the flags asked for only. */
				if (o->wc_flags & IBV_WC_EX_WITH_QP_NUM)
					w.qp_num = ibv_wc_read_qp_num(o->cqx);
				wc_seen(&w, !o->taint &&
					(o->wc_flags & IBV_WC_EX_WITH_QP_NUM));
				if (++k == 64) {
					ibv_end_poll(o->cqx);
					break;
				}
				/*
				 * rdma-core 44's rxe ends the batch itself when
				 * next_poll finds none: no end_poll then (it would
				 * move the consumer index past the producer's).
				 */
			} while (!ibv_next_poll(o->cqx));
			continue;
		}
		n = ibv_poll_cq(o->cq, ne[r], wc);
		rec(n < 0 ? -n : 0);
		if (n <= 0)
			break;
		if (n > 64) {
			finding("corrupt completion", "poll_cq returned %d of 64", n);
			break;
		}
		for (j = 0; j < n; j++)
			wc_seen(&wc[j], !o->taint);
	}
}

static void op_cq_poll(void)
{
	struct refs rf = {};
	int i = pick(&rf, K_CQ, -1, has_ring, NULL);

	if (i < 0) {
		rec_skip();
		return;
	}
	detail("cq %d", i);
	poll_cq_slot(i, (int)rnd_range(1, 8));
	put_all(&rf);
}

static void op_cq_notify(void)
{
	struct refs rf = {};
	int i = pick(&rf, K_CQ, -1, NULL, NULL);

	if (i < 0) {
		rec_skip();
		return;
	}
	rec(ibv_req_notify_cq(P.cq[i].cq, chance(30)));
	put_all(&rf);
}

static void op_events(void)
{
	int c;

	pool_lockit();
	c = pick_nolock(K_CTX, -1, NULL, NULL);
	pool_unlockit();
	if (c < 0) {
		rec_skip();
		return;
	}
	drain_events(c);
	rec(0);
}

/* ---- destroy ---- */

static int raw_destroy(int kind, int i)
{
	struct ibv_context *c = P.ctx[hdr_of(kind, i)->ctx].c;
	uint32_t resp[4];

	switch (kind) {
	case K_PD: {
		struct ib_uverbs_dealloc_pd b = { .pd_handle = P.pd[i].pd->handle };

		return ucmd(c, IB_USER_VERBS_CMD_DEALLOC_PD, &b, sizeof(b), 0);
	}
	case K_CQ: {
		struct ib_uverbs_destroy_cq b = {
			.response = (uintptr_t)resp, .cq_handle = P.cq[i].cq->handle
		};

		return ucmd(c, IB_USER_VERBS_CMD_DESTROY_CQ, &b, sizeof(b), 2);
	}
	case K_SRQ: {
		struct ib_uverbs_destroy_srq b = {
			.response = (uintptr_t)resp, .srq_handle = P.srq[i].srq->handle
		};

		return ucmd(c, IB_USER_VERBS_CMD_DESTROY_SRQ, &b, sizeof(b), 1);
	}
	case K_QP: {
		struct ib_uverbs_destroy_qp b = {
			.response = (uintptr_t)resp, .qp_handle = P.qp[i].qp->handle
		};

		return ucmd(c, IB_USER_VERBS_CMD_DESTROY_QP, &b, sizeof(b), 1);
	}
	case K_MR: {
		struct ib_uverbs_dereg_mr b = { .mr_handle = P.mr[i].mr->handle };

		return ucmd(c, IB_USER_VERBS_CMD_DEREG_MR, &b, sizeof(b), 0);
	}
	case K_MW: {
		struct ib_uverbs_dealloc_mw b = { .mw_handle = P.mw[i].mw->handle };

		return ucmd(c, IB_USER_VERBS_CMD_DEALLOC_MW, &b, sizeof(b), 0);
	}
	case K_AH: {
		struct ib_uverbs_destroy_ah b = { .ah_handle = P.ah[i].ah->handle };

		return ucmd(c, IB_USER_VERBS_CMD_DESTROY_AH, &b, sizeof(b), 0);
	}
	}
	return EINVAL;
}

static int prov_destroy(int kind, int i)
{
	switch (kind) {
	case K_PD: return ibv_dealloc_pd(P.pd[i].pd);
	case K_CH: return ibv_destroy_comp_channel(P.ch[i].ch);
	case K_CQ: return ibv_destroy_cq(P.cq[i].cq);
	case K_SRQ: return ibv_destroy_srq(P.srq[i].srq);
	case K_QP: return ibv_destroy_qp(P.qp[i].qp);
	case K_MR: return ibv_dereg_mr(P.mr[i].mr);
	case K_MW: return ibv_dealloc_mw(P.mw[i].mw);
	case K_AH: return ibv_destroy_ah(P.ah[i].ah);
	}
	return EINVAL;
}

static void note_dead(int kind, int i)
{
	if (kind == K_MR && P.mr[i].mr)
		dead_key(P.mr[i].mr->lkey);
	if (kind == K_MW)
		dead_key(P.mw[i].mw->rkey);
	if (kind == K_AH)
		dead_ah(P.ah[i].ah_num);
}

static void do_destroy(int kind)
{
	bool raw;
	int i = claim_destroy(kind, -1, &raw), err;

	if (i < 0) {
		rec_skip();
		return;
	}
	detail("%s %d%s", kind_name[kind], i, raw ? " (in use: raw)" : "");
	if (!raw && kind != K_CH && chance(4)) {
		/* The kernel object alone, even when idle. */
		pool_lockit();
		hdr_of(kind, i)->state = S_LIVE;
		hdr_of(kind, i)->busy++;
		pool_unlockit();
		raw = true;
		err = raw_destroy(kind, i);
		rec(err);
		pool_lockit();
		hdr_of(kind, i)->busy--;
		if (!err) {
			note_dead(kind, i);
			zombie_reap(kind, i);
		}
		pool_unlockit();
		return;
	}
	if (raw) {
		err = raw_destroy(kind, i);
		rec(err);
		if (err)
			return;
		pool_lockit();
		note_dead(kind, i);
		hdr_of(kind, i)->state = S_ZOMBIE;
		if (!hdr_of(kind, i)->busy)
			zombie_reap(kind, i);
		pool_unlockit();
		return;
	}
	if (kind == K_MR)
		note_dead(kind, i);
	if (kind == K_MW || kind == K_AH)
		note_dead(kind, i);
	err = prov_destroy(kind, i);
	rec(err);
	if (!err && kind == K_MR) {
		if (P.mr[i].map)
			munmap(P.mr[i].map, P.mr[i].maplen);
		if (P.mr[i].memfd >= 0)
			close(P.mr[i].memfd);
	}
	release_excl(kind, i, !err);
}

static void op_pd_dealloc(void) { do_destroy(K_PD); }
static void op_ch_destroy(void) { do_destroy(K_CH); }
static void op_cq_destroy(void) { do_destroy(K_CQ); }
static void op_srq_destroy(void) { do_destroy(K_SRQ); }
static void op_qp_destroy(void) { do_destroy(K_QP); }
static void op_mr_dereg(void) { do_destroy(K_MR); }
static void op_mw_dealloc(void) { do_destroy(K_MW); }
static void op_ah_destroy(void) { do_destroy(K_AH); }

/* ---- contexts, channels, PDs ---- */

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void op_ctx_close(void);

static void op_ctx_open(void)
{
	struct ibv_context *c;
	int s = reserve(K_CTX);

	if (s < 0) {
		op_ctx_close();
		return;
	}
	c = ibv_open_device(D.dev);
	rec(c ? 0 : errno);
	if (!c) {
		release_excl(K_CTX, s, true);
		return;
	}
	set_nonblock(c->async_fd);
	P.ctx[s].c = c;
	publish(K_CTX, s, s, -1);
}

static void op_ctx_close(void)
{
	int c;

	pool_lockit();
	c = pick_nolock(K_CTX, -1, NULL, NULL);
	/* The first context mostly stays: objects take a while to pile up. */
	if (c == 0 && chance(85))
		c = -1;
	if (c < 0 || !ctx_idle(c)) {
		pool_unlockit();
		rec_skip();
		return;
	}
	detail("ctx %d", c);
	close_ctx_slot(c);
	pool_unlockit();
	rec(0);
}

static void op_pd_alloc(void)
{
	struct refs rf = {};
	int c = pick_ctx(&rf, true), s;
	struct ibv_pd *pd;

	if (c < 0) {
		rec_skip();
		return;
	}
	s = reserve(K_PD);
	if (s < 0) {
		put_all(&rf);
		op_pd_dealloc();
		return;
	}
	pd = ibv_alloc_pd(P.ctx[c].c);
	rec(pd ? 0 : errno);
	if (pd) {
		P.pd[s].pd = pd;
		publish(K_PD, s, c, s);
	} else {
		release_excl(K_PD, s, true);
	}
	put_all(&rf);
}

static void op_ch_create(void)
{
	struct refs rf = {};
	int c = pick_ctx(&rf, true), s;
	struct ibv_comp_channel *ch;

	if (c < 0) {
		rec_skip();
		return;
	}
	s = reserve(K_CH);
	if (s < 0) {
		put_all(&rf);
		op_ch_destroy();
		return;
	}
	ch = ibv_create_comp_channel(P.ctx[c].c);
	rec(ch ? 0 : errno);
	if (ch) {
		set_nonblock(ch->fd);
		P.ch[s].ch = ch;
		publish(K_CH, s, c, -1);
	} else {
		release_excl(K_CH, s, true);
	}
	put_all(&rf);
}

/* ---- CQs ---- */

static void op_cq_create(void)
{
	struct refs rf = {};
	int c = pick_ctx(&rf, true), s, ch = -1;
	struct ibv_cq *cq = NULL;
	struct ibv_cq_ex *cqx = NULL;
	int cqe;
	int vec;

	if (c < 0) {
		rec_skip();
		return;
	}
	s = reserve(K_CQ);
	if (s < 0) {
		put_all(&rf);
		op_cq_destroy();
		return;
	}
	if (chance(30))
		ch = pick(&rf, K_CH, c, NULL, NULL);
	cqe = (int)(chance(80) ? rnd_range(1, 256) : bval((uint32_t)D.attr.max_cqe));
	vec = (int)(chance(90) ? below((uint32_t)MAX(D.comp_vectors, 1)) :
		    bval((uint32_t)D.comp_vectors));
	detail("cqe %d vec %d ch %d", cqe, vec, ch);
	if (chance(25)) {
		struct ibv_cq_init_attr_ex a = {};

		a.cqe = (uint32_t)cqe;
		a.channel = ch >= 0 ? P.ch[ch].ch : NULL;
		a.comp_vector = (uint32_t)vec;
		a.wc_flags = chance(85) ? IBV_WC_STANDARD_FLAGS & rnd() :
			     rnd() & 0xffff;
		if (chance(5)) {
			a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
			a.flags = (uint32_t)rnd() & 3;
		}
		cqx = ibv_create_cq_ex(P.ctx[c].c, &a);
		cq = cqx ? ibv_cq_ex_to_cq(cqx) : NULL;
		P.cq[s].wc_flags = a.wc_flags;
	} else {
		cq = ibv_create_cq(P.ctx[c].c, cqe, NULL,
				   ch >= 0 ? P.ch[ch].ch : NULL, vec);
	}
	rec(cq ? 0 : errno);
	if (cq) {
		P.cq[s].cq = cq;
		P.cq[s].cqx = cqx;
		P.cq[s].ch = ch;
		find_rings(cq, NULL, &P.cq[s].r);
		publish(K_CQ, s, c, -1);
	} else {
		release_excl(K_CQ, s, true);
	}
	put_all(&rf);
}

static void op_cq_resize(void)
{
	int i = claim_excl(K_CQ, -1), n, err;

	if (i < 0) {
		rec_skip();
		return;
	}
	n = (int)(chance(70) ? rnd_range(1, 512) : bval((uint32_t)D.attr.max_cqe));
	detail("cq %d to %d", i, n);
	err = ibv_resize_cq(P.cq[i].cq, n);
	rec(err);
	if (!err)
		find_rings(P.cq[i].cq, NULL, &P.cq[i].r);
	release_excl(K_CQ, i, false);
}

/* ---- SRQs ---- */

static void op_srq_create(void)
{
	struct refs rf = {};
	int c = pick_ctx(&rf, true), s, pd;
	struct ibv_srq *srq;
	struct ibv_srq_init_attr a = {};

	if (c < 0 || (pd = pick(&rf, K_PD, c, NULL, NULL)) < 0) {
		put_all(&rf);
		rec_skip();
		return;
	}
	s = reserve(K_SRQ);
	if (s < 0) {
		put_all(&rf);
		op_srq_destroy();
		return;
	}
	a.attr.max_wr = chance(85) ? rnd_range(1, 64) :
			bval((uint32_t)D.attr.max_srq_wr);
	a.attr.max_sge = chance(80) ? rnd_range(0, 4) :
			 bval((uint32_t)D.attr.max_srq_sge);
	a.attr.srq_limit = chance(70) ? 0 : bval(a.attr.max_wr);
	detail("max_wr %u max_sge %u limit %u", a.attr.max_wr, a.attr.max_sge,
	       a.attr.srq_limit);
	if (chance(20)) {
		struct ibv_srq_init_attr_ex x = {};

		x.attr = a.attr;
		x.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
		x.srq_type = IBV_SRQT_BASIC;
		x.pd = P.pd[pd].pd;
		srq = ibv_create_srq_ex(P.ctx[c].c, &x);
	} else {
		srq = ibv_create_srq(P.pd[pd].pd, &a);
	}
	rec(srq ? 0 : errno);
	if (srq) {
		P.srq[s].srq = srq;
		P.srq[s].max_wr = a.attr.max_wr;
		P.srq[s].max_sge = a.attr.max_sge;
		find_rings(srq, NULL, &P.srq[s].r);
		publish(K_SRQ, s, c, pd);
	} else {
		release_excl(K_SRQ, s, true);
	}
	put_all(&rf);
}

static void op_srq_modify(void)
{
	struct ibv_srq_attr a = {};
	struct refs rf = {};
	int mask = 0, i, err;
	bool excl = chance(40);

	if (excl)
		i = claim_excl(K_SRQ, -1);
	else
		i = pick(&rf, K_SRQ, -1, NULL, NULL);
	if (i < 0) {
		rec_skip();
		return;
	}
	if (excl)
		mask |= IBV_SRQ_MAX_WR;
	if (!excl || chance(50))
		mask |= IBV_SRQ_LIMIT;
	if (chance(4))
		mask |= 1 << rnd_range(2, 30);
	a.max_wr = chance(70) ? rnd_range(1, 128) : bval((uint32_t)D.attr.max_srq_wr);
	a.srq_limit = chance(60) ? below(P.srq[i].max_wr + 1) : bval(P.srq[i].max_wr);
	if (!excl)
		mask &= ~IBV_SRQ_MAX_WR;
	detail("srq %d mask %#x max_wr %u limit %u", i, mask, a.max_wr, a.srq_limit);
	err = ibv_modify_srq(P.srq[i].srq, &a, mask);
	rec(err);
	if (excl) {
		if (!err && (mask & IBV_SRQ_MAX_WR)) {
			struct ibv_srq_attr q;

			find_rings(P.srq[i].srq, NULL, &P.srq[i].r);
			if (!ibv_query_srq(P.srq[i].srq, &q))
				P.srq[i].max_wr = q.max_wr;
		}
		release_excl(K_SRQ, i, false);
	} else {
		put_all(&rf);
	}
}

static void op_srq_query(void)
{
	struct refs rf = {};
	struct ibv_srq_attr a;
	int i = pick(&rf, K_SRQ, -1, NULL, NULL);

	if (i < 0) {
		rec_skip();
		return;
	}
	rec(ibv_query_srq(P.srq[i].srq, &a));
	put_all(&rf);
}

/* ---- QPs ---- */

static const uint64_t rc_ops = IBV_QP_EX_WITH_RDMA_WRITE |
	IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
	IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
	IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
	IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW |
	IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_ATOMIC_WRITE;
static const uint64_t uc_ops = IBV_QP_EX_WITH_RDMA_WRITE |
	IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
	IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_BIND_MW |
	IBV_QP_EX_WITH_SEND_WITH_INV;
static const uint64_t ud_ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;

static void op_qp_create(void)
{
	static const int odd_types[] = { IBV_QPT_RAW_PACKET, IBV_QPT_DRIVER,
					 0, 1, 5, 7, 200 };
	struct ibv_qp_init_attr_ex a = {};
	struct refs rf = {};
	int c = pick_ctx(&rf, true), s, pd, scq, rcq, srq = -1;
	uint32_t r = below(100);
	struct ibv_qp *qp;
	uint64_t ops = 0;

	if (c < 0) {
		rec_skip();
		return;
	}
	pd = pick(&rf, K_PD, chance(97) ? c : -1, NULL, NULL);
	scq = pick(&rf, K_CQ, c, NULL, NULL);
	rcq = chance(50) ? scq : pick(&rf, K_CQ, c, NULL, NULL);
	if (pd < 0 || scq < 0 || rcq < 0) {
		put_all(&rf);
		rec_skip();
		return;
	}
	if (chance(20))
		srq = pick(&rf, K_SRQ, c, NULL, NULL);
	s = reserve(K_QP);
	if (s < 0) {
		put_all(&rf);
		op_qp_destroy();
		return;
	}
	a.qp_type = r < 40 ? IBV_QPT_RC : r < 65 ? IBV_QPT_UC :
		    r < 95 ? IBV_QPT_UD : odd_types[below(ARRAY_SIZE(odd_types))];
	a.send_cq = P.cq[scq].cq;
	a.recv_cq = P.cq[rcq].cq;
	a.srq = srq >= 0 ? P.srq[srq].srq : NULL;
	a.cap.max_send_wr = chance(85) ? rnd_range(1, 64) :
			    bval((uint32_t)D.attr.max_qp_wr);
	a.cap.max_recv_wr = chance(85) ? rnd_range(1, 64) :
			    bval((uint32_t)D.attr.max_qp_wr);
	a.cap.max_send_sge = chance(80) ? below(5) : bval((uint32_t)D.attr.max_sge);
	a.cap.max_recv_sge = chance(80) ? below(5) : bval((uint32_t)D.attr.max_sge);
	a.cap.max_inline_data = chance(60) ? (chance(50) ? 0 : rnd_range(1, 128)) :
				bval(512);
	a.sq_sig_all = chance(30);
	a.pd = P.pd[pd].pd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (chance(40)) {
		uint64_t sup = a.qp_type == IBV_QPT_RC ? rc_ops :
			       a.qp_type == IBV_QPT_UC ? uc_ops :
			       a.qp_type == IBV_QPT_UD ? ud_ops : 0;

		ops = sup & rnd();
		if (!ops)
			ops = sup;
		if (chance(5))
			ops |= 1ULL << below(16);
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = ops;
	}
	if (chance(4)) {
		a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		a.create_flags = 1u << below(12);
	}
	detail("type %d pd %d cq %d/%d srq %d wr %u/%u sge %u/%u inline %u ops %#" PRIx64,
	       a.qp_type, pd, scq, rcq, srq, a.cap.max_send_wr, a.cap.max_recv_wr,
	       a.cap.max_send_sge, a.cap.max_recv_sge, a.cap.max_inline_data, ops);
	if (a.comp_mask == IBV_QP_INIT_ATTR_PD && chance(60)) {
		struct ibv_qp_init_attr b = {};

		b.qp_type = a.qp_type;
		b.send_cq = a.send_cq;
		b.recv_cq = a.recv_cq;
		b.srq = a.srq;
		b.cap = a.cap;
		b.sq_sig_all = a.sq_sig_all;
		qp = ibv_create_qp(a.pd, &b);
		a.cap = b.cap;
	} else {
		qp = ibv_create_qp_ex(P.ctx[c].c, &a);
	}
	rec(qp ? 0 : errno);
	if (!qp) {
		release_excl(K_QP, s, true);
		put_all(&rf);
		return;
	}
	note_qpn(qp->qp_num);
	/*
	 * ibv_create_qp() lives in its PD's context: that context closing
	 * is what frees it.
	 */
	{
		int k;

		for (k = 0; k < NCTX; k++)
			if (P.ctx[k].h.state != S_FREE && P.ctx[k].c == qp->context)
				c = k;
	}
	P.qp[s].qp = qp;
	P.qp[s].type = a.qp_type;
	P.qp[s].ops = (a.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ? ops : 0;
	P.qp[s].qpx = P.qp[s].ops ? ibv_qp_to_qp_ex(qp) : NULL;
	P.qp[s].scq = scq;
	P.qp[s].rcq = rcq;
	P.qp[s].srq = srq;
	P.qp[s].cap = a.cap;
	P.qp[s].peer = -1;
	P.qp[s].qkey = 0x11111111;
	if (srq >= 0)
		find_rings(qp, NULL, &P.qp[s].sq);
	else
		find_rings(qp, &P.qp[s].rq, &P.qp[s].sq);
	publish(K_QP, s, c, pd);
	put_all(&rf);
}

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	int err = ibv_modify_qp(qp, a, mask);

	rec(err);
	return err;
}

/*
 * Bring @qp to RTS, connected to @dest (RC/UC) over the device's own
 * GID, with valid random attributes.
 */
static int connect_qp(struct ibv_qp *qp, int type, uint32_t dest, uint32_t qkey,
		      uint32_t rq_psn, uint32_t sq_psn)
{
	struct ibv_qp_attr a = {};
	int mask;

	a.qp_state = IBV_QPS_RESET;
	if (modify(qp, &a, IBV_QP_STATE))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (type == IBV_QPT_UD) {
		a.qkey = qkey;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
		if (type == IBV_QPT_RC)
			a.qp_access_flags |= IBV_ACCESS_REMOTE_READ |
					     IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (modify(qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (type != IBV_QPT_UD) {
		bool v6 = D.gid_v6 >= 0 && (D.gid_v4 < 0 || chance(40));

		a.path_mtu = (enum ibv_mtu)rnd_range(IBV_MTU_256, D.port.active_mtu);
		a.dest_qp_num = dest;
		a.rq_psn = rq_psn;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = v6 ? D.gv6 : D.gv4;
		a.ah_attr.grh.sgid_index = (uint8_t)(v6 ? D.gid_v6 : D.gid_v4);
		a.ah_attr.grh.hop_limit = 64;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = (uint8_t)rnd_range(0, 16);
			a.min_rnr_timer = (uint8_t)rnd_range(12, 31);
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (modify(qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (type == IBV_QPT_RC) {
		a.timeout = (uint8_t)rnd_range(8, 16);
		a.retry_cnt = (uint8_t)below(8);
		a.rnr_retry = (uint8_t)(chance(95) ? below(7) : 7);
		a.max_rd_atomic = (uint8_t)rnd_range(0, 16);
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return modify(qp, &a, mask) ? -1 : 0;
}

static bool connectable(int kind, int i, const void *arg)
{
	(void)kind;
	(void)arg;
	return P.qp[i].type == IBV_QPT_RC || P.qp[i].type == IBV_QPT_UC ||
	       P.qp[i].type == IBV_QPT_UD;
}

static void op_qp_connect(void)
{
	struct refs rf = {};
	int a = pick(&rf, K_QP, -1, connectable, NULL), b;
	uint32_t pa = (uint32_t)rnd() & 0xffffff, pb = (uint32_t)rnd() & 0xffffff;

	if (a < 0) {
		rec_skip();
		return;
	}
	b = a;
	if (P.qp[a].type != IBV_QPT_UD && chance(75)) {
		int t = P.qp[a].type;

		b = pick(&rf, K_QP, P.qp[a].h.ctx, qp_type_is, &t);
		if (b < 0)
			b = a;
	}
	detail("qp %d (%u) <-> qp %d (%u)", a, P.qp[a].qp->qp_num, b,
	       P.qp[b].qp->qp_num);
	if (!connect_qp(P.qp[a].qp, P.qp[a].type, P.qp[b].qp->qp_num,
			P.qp[a].qkey, pb, pa)) {
		pool_lockit();
		P.qp[a].peer = b;
		P.qp[a].peer_qpn = P.qp[b].qp->qp_num;
		pool_unlockit();
	}
	if (b != a && !connect_qp(P.qp[b].qp, P.qp[b].type, P.qp[a].qp->qp_num,
				  P.qp[b].qkey, pa, pb)) {
		pool_lockit();
		P.qp[b].peer = a;
		P.qp[b].peer_qpn = P.qp[a].qp->qp_num;
		pool_unlockit();
	}
	put_all(&rf);
}

/*
 * Attributes per transition (IBTA 10.3, as ib_core's table): required
 * and optional masks for RC; UC and UD drop what they lack.
 */
struct trans {
	enum ibv_qp_state from, to;
	int req, opt;
};

#define RC_INIT	(IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define RC_RTR	(IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
		 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RC_RTS	(IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
		 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)
#define RC_OPT	(IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | \
		 IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE)

static const struct trans trans[] = {
	{ IBV_QPS_RESET, IBV_QPS_INIT, RC_INIT, 0 },
	{ IBV_QPS_INIT, IBV_QPS_INIT, 0, RC_INIT },
	{ IBV_QPS_INIT, IBV_QPS_RTR, RC_RTR,
	  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX },
	{ IBV_QPS_RTR, IBV_QPS_RTS, RC_RTS, RC_OPT },
	{ IBV_QPS_RTS, IBV_QPS_RTS, 0, RC_OPT },
	{ IBV_QPS_RTS, IBV_QPS_SQD, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY },
	{ IBV_QPS_SQD, IBV_QPS_RTS, 0, RC_OPT },
	{ IBV_QPS_SQD, IBV_QPS_SQD, 0, IBV_QP_AV | IBV_QP_ALT_PATH |
	  IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_MIN_RNR_TIMER |
	  IBV_QP_PATH_MIG_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC },
	{ IBV_QPS_SQE, IBV_QPS_RTS, 0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS },
	{ IBV_QPS_RESET, IBV_QPS_RESET, 0, 0 },
	{ IBV_QPS_INIT, IBV_QPS_RESET, 0, 0 },
	{ IBV_QPS_RTS, IBV_QPS_ERR, 0, 0 },
	{ IBV_QPS_ERR, IBV_QPS_RESET, 0, 0 },
	{ IBV_QPS_RTR, IBV_QPS_ERR, 0, 0 },
};

/* Mask bits a QP type has (the rest turn invalid for it). */
static int type_mask(int type, int m)
{
	if (type == IBV_QPT_UD) {
		m &= ~(IBV_QP_ACCESS_FLAGS | IBV_QP_AV | IBV_QP_PATH_MTU |
		       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		       IBV_QP_MIN_RNR_TIMER | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_ALT_PATH |
		       IBV_QP_PATH_MIG_STATE);
		if (m & IBV_QP_PORT)
			m |= IBV_QP_QKEY;
	} else if (type == IBV_QPT_UC) {
		m &= ~(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER |
		       IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC);
	}
	return m;
}

/*
 * A transition from the QP's current state with its required attributes,
 * some optional ones, valid values mostly and boundary values sometimes.
 */
static void modify_structured(int i)
{
	struct ibv_qp *qp = P.qp[i].qp;
	const struct trans *t = NULL;
	struct ibv_qp_attr a = {};
	unsigned int k, n = 0;
	int mask, type = P.qp[i].type;
	bool v6 = D.gid_v6 >= 0 && (D.gid_v4 < 0 || chance(40));

	for (k = 0; k < ARRAY_SIZE(trans); k++)
		if (trans[k].from == qp->state && below(++n) == 0)
			t = &trans[k];
	if (!t || chance(5))
		t = &trans[below(ARRAY_SIZE(trans))];
	mask = IBV_QP_STATE | type_mask(type, t->req | (t->opt & (int)rnd()));
	if (chance(8))
		mask ^= 1 << rnd_range(1, 20);
	a.qp_state = t->to;
	a.cur_qp_state = chance(90) ? qp->state : (enum ibv_qp_state)below(8);
	a.pkey_index = chance(95) ? 0 : (uint16_t)bval(1);
	a.port_num = chance(95) ? 1 : (uint8_t)bval(1);
	a.qkey = chance(90) ? P.qp[i].qkey : (uint32_t)rnd();
	a.qp_access_flags = chance(85) ? IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC : (unsigned int)gen_access();
	a.path_mtu = chance(85) ? (enum ibv_mtu)rnd_range(1, D.port.active_mtu) :
		     (enum ibv_mtu)bval(5);
	a.dest_qp_num = gen_qpn();
	a.rq_psn = chance(85) ? (uint32_t)rnd() & 0xffffff : bval(0xffffff);
	a.sq_psn = chance(85) ? (uint32_t)rnd() & 0xffffff : bval(0xffffff);
	a.max_dest_rd_atomic = (uint8_t)(chance(85) ? below(17) :
					 bval((uint32_t)D.attr.max_qp_init_rd_atom));
	a.max_rd_atomic = (uint8_t)(chance(85) ? below(17) :
				    bval((uint32_t)D.attr.max_qp_rd_atom));
	a.min_rnr_timer = (uint8_t)(chance(85) ? rnd_range(12, 31) : bval(31));
	a.timeout = (uint8_t)(chance(85) ? rnd_range(8, 18) : bval(31));
	a.retry_cnt = (uint8_t)(chance(85) ? below(8) : bval(7));
	a.rnr_retry = (uint8_t)(chance(85) ? below(7) : bval(7));
	a.path_mig_state = chance(85) ? IBV_MIG_MIGRATED : below(4);
	a.en_sqd_async_notify = (uint8_t)below(2);
	if (chance(80)) {
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = v6 ? D.gv6 : D.gv4;
		a.ah_attr.grh.sgid_index = (uint8_t)(v6 ? D.gid_v6 : D.gid_v4);
		a.ah_attr.grh.hop_limit = 64;
	} else {
		gen_ah_attr(&a.ah_attr);
	}
	gen_ah_attr(&a.alt_ah_attr);
	detail("qp %d (%u) type %d %d -> %d mask %#x (structured)", i, qp->qp_num,
	       type, qp->state, a.qp_state, mask);
	modify(qp, &a, mask);
}

static void op_qp_modify(void)
{
	static const enum ibv_qp_state next[] = {
		[IBV_QPS_RESET] = IBV_QPS_INIT, [IBV_QPS_INIT] = IBV_QPS_RTR,
		[IBV_QPS_RTR] = IBV_QPS_RTS, [IBV_QPS_RTS] = IBV_QPS_SQD,
		[IBV_QPS_SQD] = IBV_QPS_RTS, [IBV_QPS_SQE] = IBV_QPS_RTS,
		[IBV_QPS_ERR] = IBV_QPS_RESET,
	};
	struct ibv_qp_attr a;
	struct refs rf = {};
	int i = pick(&rf, K_QP, -1, NULL, NULL), mask = 0, b;

	if (i < 0) {
		rec_skip();
		return;
	}
	if (chance(65)) {
		modify_structured(i);
		put_all(&rf);
		return;
	}
	rnd_fill(&a, sizeof(a));
	if (chance(50) && P.qp[i].qp->state <= IBV_QPS_ERR)
		a.qp_state = chance(80) ? next[P.qp[i].qp->state] :
			     chance(50) ? IBV_QPS_ERR : P.qp[i].qp->state;
	else
		a.qp_state = chance(95) ? below(7) : rnd_range(7, 255);
	a.cur_qp_state = chance(70) ? P.qp[i].qp->state : below(8);
	for (b = 1; b <= 20; b++)
		if (chance(25))
			mask |= 1 << b;
	if (chance(85))
		mask |= IBV_QP_STATE;
	if (chance(3))
		mask |= 1 << rnd_range(21, 30);
	a.pkey_index = chance(80) ? 0 : (uint16_t)bval(1);
	a.port_num = chance(80) ? 1 : (uint8_t)bval(1);
	a.qp_access_flags = (unsigned int)gen_access();
	a.path_mtu = chance(80) ? rnd_range(1, 5) : (enum ibv_mtu)bval(5);
	a.dest_qp_num = gen_qpn();
	a.rq_psn = chance(80) ? (uint32_t)rnd() & 0xffffff : bval(0xffffff);
	a.sq_psn = chance(80) ? (uint32_t)rnd() & 0xffffff : bval(0xffffff);
	a.max_rd_atomic = (uint8_t)(chance(70) ? below(17) :
				    bval((uint32_t)D.attr.max_qp_rd_atom));
	a.max_dest_rd_atomic = (uint8_t)(chance(70) ? below(17) :
					 bval((uint32_t)D.attr.max_qp_init_rd_atom));
	a.min_rnr_timer = (uint8_t)(chance(80) ? rnd_range(12, 31) : bval(31));
	a.timeout = (uint8_t)(chance(80) ? rnd_range(8, 18) : bval(31));
	a.retry_cnt = (uint8_t)(chance(80) ? below(8) : bval(7));
	a.rnr_retry = (uint8_t)(chance(80) ? below(7) : bval(7));
	a.qkey = chance(70) ? P.qp[i].qkey : (uint32_t)rnd();
	if (chance(70))
		gen_ah_attr(&a.ah_attr);
	if (chance(50))
		gen_ah_attr(&a.alt_ah_attr);
	a.path_mig_state = below(4);
	a.sq_draining = (uint8_t)below(2);
	a.en_sqd_async_notify = (uint8_t)below(2);
	a.cap.max_send_wr = small_or((uint32_t)D.attr.max_qp_wr);
	a.cap.max_recv_wr = small_or((uint32_t)D.attr.max_qp_wr);
	a.rate_limit = chance(90) ? 0 : (uint32_t)rnd();
	detail("qp %d (%u) state %d -> %d mask %#x", i, P.qp[i].qp->qp_num,
	       P.qp[i].qp->state, a.qp_state, mask);
	modify(P.qp[i].qp, &a, mask);
	put_all(&rf);
}

static void op_qp_query(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	struct refs rf = {};
	int i = pick(&rf, K_QP, -1, NULL, NULL), err;

	if (i < 0) {
		rec_skip();
		return;
	}
	memset(&a, 0, sizeof(a));
	err = ibv_query_qp(P.qp[i].qp, &a, chance(70) ? 0x1fffff : (int)rnd(), &init);
	rec(err);
	if (!err && a.qp_state > IBV_QPS_UNKNOWN)
		finding("corrupt query", "qp %u state %u", P.qp[i].qp->qp_num,
			a.qp_state);
	put_all(&rf);
}

static void op_dev_query(void)
{
	struct ibv_device_attr_ex ax;
	struct ibv_device_attr a;
	struct ibv_port_attr pa;
	struct refs rf = {};
	union ibv_gid g;
	uint16_t pkey;
	int c = pick_ctx(&rf, false), err;
	static const int idx[] = { 0, 1, 2, 3, 1023, 1024, 65535 };

	if (c < 0) {
		rec_skip();
		return;
	}
	err = ibv_query_device(P.ctx[c].c, &a);
	rec(err);
	if (!err && (a.max_qp != D.attr.max_qp || a.max_cqe != D.attr.max_cqe ||
		     a.max_mr_size != D.attr.max_mr_size ||
		     a.node_guid != D.attr.node_guid ||
		     a.max_qp_wr != D.attr.max_qp_wr || a.max_sge != D.attr.max_sge))
		finding("corrupt query", "device attributes changed");
	rec(ibv_query_device_ex(P.ctx[c].c, NULL, &ax));
	rec(ibv_query_port(P.ctx[c].c, (uint8_t)(chance(70) ? 1 : bval(1)), &pa));
	rec(ibv_query_gid(P.ctx[c].c, (uint8_t)(chance(90) ? 1 : bval(1)),
			  chance(50) ? idx[below(ARRAY_SIZE(idx))] : (int)below(2048), &g));
	rec(ibv_query_pkey(P.ctx[c].c, 1, (int)bval(1) & 0xffff, &pkey));
	put_all(&rf);
}

/* ---- posting ---- */

static const int rc_wr_ops[] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
	IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
	IBV_WR_SEND_WITH_INV, IBV_WR_ATOMIC_WRITE,
};
static const int uc_wr_ops[] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
	IBV_WR_SEND_WITH_INV,
};

static int gen_wr_opcode(int type)
{
	if (chance(70)) {
		if (type == IBV_QPT_RC)
			return rc_wr_ops[below(ARRAY_SIZE(rc_wr_ops))];
		if (type == IBV_QPT_UC)
			return uc_wr_ops[below(ARRAY_SIZE(uc_wr_ops))];
		return chance(50) ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
	}
	if (chance(85))
		return chance(10) ? IBV_WR_ATOMIC_WRITE : (int)below(11);
	return (int)rnd_range(11, 40);
}

/* Inline data for the provider: SGEs into process memory. */
static int gen_inline_sges(struct ibv_sge *sg, int max_n, uint32_t max_inline)
{
	uint32_t total = chance(60) ? below(max_inline + 1) :
			 chance(50) ? max_inline + 1 : max_inline;
	int n = (int)rnd_range(1, (uint32_t)MIN(max_n, 4)), i;
	uint32_t left = total;

	if (total > scratch_len)
		total = (uint32_t)scratch_len;
	for (i = 0; i < n; i++) {
		uint32_t l = i == n - 1 ? left : below(left + 1);

		sg[i].addr = (uintptr_t)scratch + below((uint32_t)(scratch_len - l) + 1);
		sg[i].length = l;
		sg[i].lkey = (uint32_t)rnd();
		left -= l;
	}
	return n;
}

static void op_post_send(void)
{
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sg[3][MAX_SGE_ARR];
	struct refs rf = {};
	struct qpinfo q;
	int i = pick(&rf, K_QP, -1, NULL, NULL), n, j, k, ah = -1, err;

	if (i < 0) {
		rec_skip();
		return;
	}
	qp_snapshot(i, &q);
	if (q.type == IBV_QPT_UD || chance(5)) {
		ah = pick(&rf, K_AH, q.ctx, NULL, NULL);
		if (ah < 0 && q.type == IBV_QPT_UD) {
			/* The provider reads the AH of every UD WR. */
			put_all(&rf);
			rec_skip();
			return;
		}
	}
	n = (int)rnd_range(1, 3);
	memset(wr, 0, sizeof(wr));
	for (j = 0; j < n; j++) {
		struct ibv_send_wr *w = &wr[j];
		int ns;

		w->wr_id = tag();
		w->next = j + 1 < n ? &wr[j + 1] : NULL;
		w->opcode = gen_wr_opcode(q.type);
		w->send_flags = gen_send_flags();
		w->imm_data = htobe32((uint32_t)rnd());
		if (w->opcode == IBV_WR_LOCAL_INV || w->opcode == IBV_WR_SEND_WITH_INV) {
			uint64_t dummy;

			gen_remote(q.ctx, 0, &dummy, &w->invalidate_rkey);
		}
		ns = chance(85) ? (int)below(MIN(q.cap.max_send_sge, 4u) + 1) :
		     (int)MIN(bval(q.cap.max_send_sge), (uint32_t)MAX_SGE_ARR);
		if (w->send_flags & IBV_SEND_INLINE) {
			ns = gen_inline_sges(sg[j], MAX_SGE_ARR, q.cap.max_inline_data);
		} else {
			for (k = 0; k < ns; k++)
				gen_sge(&sg[j][k], q.ctx, q.pd, false);
		}
		w->sg_list = sg[j];
		w->num_sge = ns;
		if (q.type == IBV_QPT_UD) {
			w->wr.ud.ah = P.ah[ah].ah;
			w->wr.ud.remote_qpn = gen_qpn();
			w->wr.ud.remote_qkey = chance(70) ? q.qkey : (uint32_t)rnd();
			continue;
		}
		switch (w->opcode) {
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			gen_remote(q.ctx, IBV_ACCESS_REMOTE_ATOMIC,
				   &w->wr.atomic.remote_addr, &w->wr.atomic.rkey);
			w->wr.atomic.compare_add = rnd();
			w->wr.atomic.swap = rnd();
			break;
		case IBV_WR_BIND_MW: {
			int mw = pick(&rf, K_MW, q.ctx, NULL, NULL);
			int mr = pick(&rf, K_MR, q.ctx, NULL, NULL);

			if (mw < 0 || mr < 0) {
				w->opcode = IBV_WR_SEND;
				break;
			}
			w->bind_mw.mw = P.mw[mw].mw;
			w->bind_mw.rkey = chance(80) ?
				(P.mw[mw].mw->rkey & ~0xffu) |
				((P.mw[mw].mw->rkey + 1) & 0xff) : (uint32_t)rnd();
			w->bind_mw.bind_info.mr = P.mr[mr].mr;
			w->bind_mw.bind_info.addr = (uintptr_t)P.mr[mr].addr +
						    below((uint32_t)P.mr[mr].len + 1);
			w->bind_mw.bind_info.length = chance(70) ?
				below((uint32_t)P.mr[mr].len + 1) : rnd();
			w->bind_mw.bind_info.mw_access_flags = (unsigned int)gen_access();
			w->num_sge = 0;
			break;
		}
		default:
			gen_remote(q.ctx, w->opcode == IBV_WR_RDMA_READ ?
				   IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE,
				   &w->wr.rdma.remote_addr, &w->wr.rdma.rkey);
		}
	}
	detail("qp %d (%u) type %d wrs %d op0 %d flags %#x nsge %d", i,
	       q.qp->qp_num, q.type, n, wr[0].opcode, wr[0].send_flags,
	       wr[0].num_sge);
	err = ibv_post_send(q.qp, wr, &bad);
	rec(err);
	put_all(&rf);
}

static void wr_data(struct ibv_qp_ex *x, const struct qpinfo *q)
{
	struct ibv_sge sg[MAX_SGE_ARR];
	struct ibv_data_buf db[4];
	uint32_t r = below(100), n, i;

	if (r < 40) {
		gen_sge(&sg[0], q->ctx, q->pd, false);
		ibv_wr_set_sge(x, sg[0].lkey, sg[0].addr, sg[0].length);
	} else if (r < 65) {
		n = chance(85) ? below(MIN(q->cap.max_send_sge, 4u) + 1) :
		    MIN(bval(q->cap.max_send_sge), (uint32_t)MAX_SGE_ARR);
		for (i = 0; i < n; i++)
			gen_sge(&sg[i], q->ctx, q->pd, false);
		ibv_wr_set_sge_list(x, n, sg);
	} else if (r < 85) {
		uint32_t l = chance(70) ? below(q->cap.max_inline_data + 1) :
			     q->cap.max_inline_data + 1;

		ibv_wr_set_inline_data(x, scratch, MIN(l, (uint32_t)scratch_len));
	} else if (r < 95) {
		n = rnd_range(1, 4);
		for (i = 0; i < n; i++) {
			db[i].addr = scratch + below(1024);
			db[i].length = below(q->cap.max_inline_data / 2 + 2);
		}
		ibv_wr_set_inline_data_list(x, n, db);
	}
}

static void op_post_wr(void)
{
	static const uint64_t bits[] = {
		IBV_QP_EX_WITH_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
		IBV_QP_EX_WITH_SEND, IBV_QP_EX_WITH_SEND_WITH_IMM,
		IBV_QP_EX_WITH_RDMA_READ, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
		IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, IBV_QP_EX_WITH_LOCAL_INV,
		IBV_QP_EX_WITH_BIND_MW, IBV_QP_EX_WITH_SEND_WITH_INV,
		IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	struct refs rf = {};
	struct qpinfo q;
	struct ibv_qp_ex *x;
	int i, n, j, ah = -1, err;

	pool_lockit();
	i = -1;
	{
		int k, cnt = 0;

		for (k = 0; k < NQP; k++)
			if (P.qp[k].h.state == S_LIVE && P.qp[k].qpx &&
			    below(++cnt) == 0)
				i = k;
		if (i >= 0)
			take(&rf, K_QP, i);
	}
	pool_unlockit();
	if (i < 0) {
		rec_skip();
		return;
	}
	qp_snapshot(i, &q);
	x = q.qpx;
	if (q.type == IBV_QPT_UD) {
		ah = pick(&rf, K_AH, q.ctx, NULL, NULL);
		if (ah < 0) {
			put_all(&rf);
			rec_skip();
			return;
		}
	}
	n = (int)rnd_range(1, 4);
	detail("qp %d (%u) %d WRs ops %#" PRIx64, i, q.qp->qp_num, n, q.ops);
	ibv_wr_start(x);
	for (j = 0; j < n; j++) {
		uint64_t b;
		uint64_t raddr;
		uint32_t rkey;

		do {
			b = bits[below(ARRAY_SIZE(bits))];
		} while (!(q.ops & b));
		x->wr_id = tag();
		x->wr_flags = gen_send_flags() & ~IBV_SEND_INLINE;
		gen_remote(q.ctx, b == IBV_QP_EX_WITH_RDMA_READ ? IBV_ACCESS_REMOTE_READ :
			   IBV_ACCESS_REMOTE_WRITE, &raddr, &rkey);
		switch (b) {
		case IBV_QP_EX_WITH_RDMA_WRITE:
			ibv_wr_rdma_write(x, rkey, raddr);
			break;
		case IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM:
			ibv_wr_rdma_write_imm(x, rkey, raddr, (__be32)rnd());
			break;
		case IBV_QP_EX_WITH_SEND:
			ibv_wr_send(x);
			break;
		case IBV_QP_EX_WITH_SEND_WITH_IMM:
			ibv_wr_send_imm(x, (__be32)rnd());
			break;
		case IBV_QP_EX_WITH_RDMA_READ:
			ibv_wr_rdma_read(x, rkey, raddr);
			break;
		case IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP:
			ibv_wr_atomic_cmp_swp(x, rkey, raddr, rnd(), rnd());
			break;
		case IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD:
			ibv_wr_atomic_fetch_add(x, rkey, raddr, rnd());
			break;
		case IBV_QP_EX_WITH_LOCAL_INV:
			ibv_wr_local_inv(x, rkey);
			continue;
		case IBV_QP_EX_WITH_SEND_WITH_INV:
			ibv_wr_send_inv(x, rkey);
			break;
		case IBV_QP_EX_WITH_ATOMIC_WRITE: {
			uint64_t v = rnd();

			ibv_wr_atomic_write(x, rkey, raddr, &v);
			continue;
		}
		case IBV_QP_EX_WITH_BIND_MW: {
			int mw = pick(&rf, K_MW, q.ctx, NULL, NULL);
			int mr = pick(&rf, K_MR, q.ctx, NULL, NULL);
			struct ibv_mw_bind_info bi = {};

			if (mw < 0 || mr < 0) {
				/* Only builders the QP was created with exist. */
				if (!(q.ops & IBV_QP_EX_WITH_SEND))
					continue;
				ibv_wr_send(x);
				break;
			}
			bi.mr = P.mr[mr].mr;
			bi.addr = (uintptr_t)P.mr[mr].addr + below((uint32_t)P.mr[mr].len + 1);
			bi.length = chance(70) ? below((uint32_t)P.mr[mr].len + 1) : rnd();
			bi.mw_access_flags = (unsigned int)gen_access();
			ibv_wr_bind_mw(x, P.mw[mw].mw, chance(80) ?
				       (P.mw[mw].mw->rkey & ~0xffu) |
				       ((P.mw[mw].mw->rkey + 1) & 0xff) :
				       (uint32_t)rnd(), &bi);
			continue;
		}
		}
		if (q.type == IBV_QPT_UD)
			ibv_wr_set_ud_addr(x, P.ah[ah].ah, gen_qpn(),
					   chance(70) ? q.qkey : (uint32_t)rnd());
		if (b == IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP ||
		    b == IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD) {
			struct ibv_sge s;

			gen_sge(&s, q.ctx, q.pd, false);
			ibv_wr_set_sge(x, s.lkey, s.addr, chance(80) ? 8 : s.length);
		} else {
			wr_data(x, &q);
		}
	}
	if (chance(92)) {
		err = ibv_wr_complete(x);
	} else {
		ibv_wr_abort(x);
		err = 0;
	}
	rec(err);
	put_all(&rf);
}

static void op_post_raw(void)
{
	struct refs rf = {};
	struct qpinfo q;
	int i = pick(&rf, K_QP, -1, has_ring, NULL), n, j;
	uint32_t p;

	if (i < 0) {
		rec_skip();
		return;
	}
	qp_snapshot(i, &q);
	n = (int)rnd_range(1, 4);
	p = ring_prod(&q.sq);
	for (j = 0; j < n; j++)
		raw_fill_send(slot_addr(&q.sq, p + (uint32_t)j), &q);
	{
		struct rxe_send_wqe *w = slot_addr(&q.sq, p);

		detail("qp %d (%u) type %d %d WQEs at %u: op %u flags %#x num_sge %u len %u",
		       i, q.qp->qp_num, q.type, n, p, w->wr.opcode,
		       w->wr.send_flags, w->dma.num_sge, w->dma.length);
	}
	ring_set_prod(&q.sq, p, (uint32_t)n);
	rec(doorbell(q.qp));
	ring_fix(&q.sq);
	put_all(&rf);
}

static void op_post_recv(void)
{
	struct ibv_recv_wr wr[4], *bad;
	struct ibv_sge sg[4][MAX_SGE_ARR];
	struct refs rf = {};
	struct qpinfo q;
	int i, n, j, k, err, srq = -1;
	bool use_srq = chance(30);

	if (use_srq) {
		srq = pick(&rf, K_SRQ, -1, has_ring, NULL);
		if (srq < 0)
			use_srq = false;
	}
	if (!use_srq) {
		i = pick(&rf, K_QP, -1, NULL, NULL);
		if (i < 0) {
			rec_skip();
			return;
		}
		qp_snapshot(i, &q);
	} else {
		memset(&q, 0, sizeof(q));
		q.ctx = P.srq[srq].h.ctx;
		q.pd = P.srq[srq].h.pd;
		q.cap.max_recv_sge = P.srq[srq].max_sge;
	}
	n = (int)rnd_range(1, 4);
	memset(wr, 0, sizeof(wr));
	for (j = 0; j < n; j++) {
		int ns = chance(85) ? (int)below(MIN(q.cap.max_recv_sge, 4u) + 1) :
			 (int)MIN(bval(q.cap.max_recv_sge), (uint32_t)MAX_SGE_ARR);

		for (k = 0; k < ns; k++)
			gen_sge(&sg[j][k], q.ctx, q.pd, true);
		wr[j].wr_id = tag();
		wr[j].sg_list = sg[j];
		wr[j].num_sge = ns;
		wr[j].next = j + 1 < n ? &wr[j + 1] : NULL;
	}
	if (use_srq) {
		detail("srq %d %d WRs", srq, n);
		err = ibv_post_srq_recv(P.srq[srq].srq, wr, &bad);
	} else {
		detail("qp %d %d WRs", q.slot, n);
		err = ibv_post_recv(q.qp, wr, &bad);
	}
	rec(err);
	put_all(&rf);
}

static bool qp_has_rq(int kind, int i, const void *arg)
{
	(void)kind;
	(void)arg;
	return P.qp[i].rq.q;
}

static void op_recv_raw(void)
{
	struct refs rf = {};
	struct ring r;
	uint32_t maxs, p;
	int i, n, j, ctx, pd;

	if (chance(40)) {
		i = pick(&rf, K_SRQ, -1, has_ring, NULL);
		if (i < 0) {
			rec_skip();
			return;
		}
		pool_lockit();
		r = P.srq[i].r;
		maxs = P.srq[i].max_sge;
		ctx = P.srq[i].h.ctx;
		pd = P.srq[i].h.pd;
		pool_unlockit();
	} else {
		i = pick(&rf, K_QP, -1, qp_has_rq, NULL);
		if (i < 0) {
			rec_skip();
			return;
		}
		pool_lockit();
		r = P.qp[i].rq;
		maxs = P.qp[i].cap.max_recv_sge;
		ctx = P.qp[i].h.ctx;
		pd = P.qp[i].h.pd;
		pool_unlockit();
	}
	n = (int)rnd_range(1, 4);
	p = ring_prod(&r);
	for (j = 0; j < n; j++)
		raw_fill_recv(slot_addr(&r, p + (uint32_t)j), r.esz, maxs, ctx, pd);
	detail("%s %d: %d WQEs at %u", rf.kind[0] == K_SRQ ? "srq" : "qp", i, n, p);
	ring_set_prod(&r, p, (uint32_t)n);
	for (j = 0; j < 4; j++)
		sched_yield();
	ring_fix(&r);
	rec(0);
	put_all(&rf);
}

/* uverbs POST_SEND/POST_RECV/POST_SRQ_RECV with WRs the kernel parses. */
static void op_cmd_post(void)
{
	struct {
		struct ib_uverbs_post_send c;
		uint8_t rest[1024];
	} b;
	struct refs rf = {};
	uint32_t resp[2];
	int i = pick(&rf, K_QP, -1, NULL, NULL), n, j, ns = 0, kind = (int)below(3);
	size_t wsz, len;

	if (i < 0) {
		rec_skip();
		return;
	}
	memset(&b, 0, sizeof(b));
	n = (int)(chance(90) ? below(4) : bval(3) & 0xff);
	if (n > 4)
		n = 4;
	b.c.response = (uintptr_t)resp;
	b.c.qp_handle = chance(95) ? P.qp[i].qp->handle : (uint32_t)rnd();
	b.c.wr_count = chance(95) ? (uint32_t)n : bval((uint32_t)n);
	wsz = kind == 0 ? sizeof(struct ib_uverbs_send_wr) :
			  sizeof(struct ib_uverbs_recv_wr);
	b.c.wqe_size = chance(90) ? (uint32_t)wsz :
		       (uint32_t)(chance(50) ? wsz - 8 : wsz + below(64));
	len = sizeof(b.c);
	for (j = 0; j < n && len + wsz <= sizeof(b); j++) {
		void *w = (uint8_t *)&b + len;

		rnd_fill(w, wsz);
		if (kind == 0) {
			struct ib_uverbs_send_wr *s = w;

			s->num_sge = chance(80) ? below(3) : (uint32_t)rnd();
			s->opcode = chance(80) ? below(16) : (uint32_t)rnd();
			s->send_flags = gen_send_flags();
			if (chance(60)) {
				pool_lockit();
				{
					int a = pick_nolock(K_AH, P.qp[i].h.ctx, NULL, NULL);

					s->wr.ud.ah = a >= 0 ? P.ah[a].ah->handle :
						      (uint32_t)rnd();
				}
				pool_unlockit();
			}
			ns += (int)MIN(s->num_sge, 3u);
		} else {
			struct ib_uverbs_recv_wr *r = w;

			r->num_sge = chance(80) ? below(3) : (uint32_t)rnd();
			ns += (int)MIN(r->num_sge, 3u);
		}
		len += wsz;
	}
	b.c.sge_count = chance(90) ? (uint32_t)ns : bval((uint32_t)ns);
	for (j = 0; j < ns && len + 16 <= sizeof(b); j++) {
		struct ibv_sge s;

		gen_sge(&s, P.qp[i].h.ctx, P.qp[i].h.pd, kind != 0);
		memcpy((uint8_t *)&b + len, &s, sizeof(s));
		len += 16;
	}
	if (chance(5))
		len -= below((uint32_t)len / 2) & ~3u;
	if (kind == 2) {
		int s;

		pool_lockit();
		s = pick_nolock(K_SRQ, P.qp[i].h.ctx, NULL, NULL);
		if (s >= 0)
			b.c.qp_handle = P.srq[s].srq->handle;
		pool_unlockit();
	}
	detail("%s qp %d wr_count %u sge_count %u wqe_size %u len %zu",
	       kind == 0 ? "post_send" : kind == 1 ? "post_recv" : "post_srq_recv",
	       i, b.c.wr_count, b.c.sge_count, b.c.wqe_size, len);
	rec(ucmd(P.qp[i].qp->context,
		 kind == 0 ? IB_USER_VERBS_CMD_POST_SEND :
		 kind == 1 ? IB_USER_VERBS_CMD_POST_RECV :
			     IB_USER_VERBS_CMD_POST_SRQ_RECV,
		 &b, len & ~3UL, 1));
	put_all(&rf);
}

/* Random indices (and, alone, geometry) in a ring's user-writable header. */
static bool own_ring(int kind, int i, const void *arg)
{
	/* A fork child leaves the parent's rings' indices alone. */
	return !hdr_of(kind, i)->inh && has_ring(kind, i, arg);
}

static void op_ring_corrupt(void)
{
	struct refs rf = {};
	uint32_t r = below(100);
	int i, j;

	if (r < 40) {
		struct qpinfo q;
		struct ring *ring;

		i = pick(&rf, K_QP, -1, own_ring, NULL);
		if (i < 0) {
			rec_skip();
			return;
		}
		qp_snapshot(i, &q);
		ring = q.rq.q && chance(40) ? &q.rq : &q.sq;
		detail("qp %d %s", i, ring == &q.rq ? "rq" : "sq");
		if (chance(50))
			ring->q->producer_index = chance(50) ? (uint32_t)rnd() :
				(uint32_t)rnd() & ring->mask;
		else
			ring->q->consumer_index = (uint32_t)rnd();
		if (O.mode == M_SINGLE && !in_child && chance(15)) {
			uint32_t l = ring->q->log2_elem_size, m = ring->q->index_mask;

			ring->q->log2_elem_size = (uint32_t)rnd();
			ring->q->index_mask = (uint32_t)rnd();
			rec(doorbell(q.qp));
			ring->q->log2_elem_size = l;
			ring->q->index_mask = m;
		}
		rec(doorbell(q.qp));
		ring_fix(ring);
	} else if (r < 70) {
		i = pick(&rf, K_CQ, -1, own_ring, NULL);
		if (i < 0) {
			rec_skip();
			return;
		}
		detail("cq %d", i);
		P.cq[i].taint = true;
		if (chance(70))
			P.cq[i].r.q->consumer_index = (uint32_t)rnd();
		else
			P.cq[i].r.q->producer_index = (uint32_t)rnd();
		rec(ibv_req_notify_cq(P.cq[i].cq, 0));
		P.cq[i].r.q->consumer_index &= P.cq[i].r.mask;
		poll_cq_slot(i, 2);
	} else {
		i = pick(&rf, K_SRQ, -1, own_ring, NULL);
		if (i < 0) {
			rec_skip();
			return;
		}
		detail("srq %d", i);
		P.srq[i].r.q->producer_index = (uint32_t)rnd();
		if (chance(30))
			P.srq[i].r.q->consumer_index = (uint32_t)rnd();
		for (j = 0; j < 4; j++)
			sched_yield();
		ring_fix(&P.srq[i].r);
		rec(0);
	}
	put_all(&rf);
}

/* ---- memory regions and windows ---- */

struct buf {
	void *map;
	size_t maplen;
	int memfd;
	char *addr;
	size_t len;
	bool ro;
};

/* A buffer of @len bytes at offset @off of a fresh mapping + guard page. */
static int buf_alloc(struct buf *b, size_t len, size_t off, bool ro, bool memfd)
{
	size_t data = (off + len + PAGE - 1) & ~(PAGE - 1);

	memset(b, 0, sizeof(*b));
	b->memfd = -1;
	if (!data)
		data = PAGE;
	b->maplen = data + PAGE;
	if (memfd) {
		b->memfd = memfd_create("vfuzz", MFD_CLOEXEC);
		if (b->memfd < 0 || ftruncate(b->memfd, (off_t)data)) {
			if (b->memfd >= 0)
				close(b->memfd);
			return -1;
		}
		b->map = mmap(NULL, b->maplen, PROT_READ | PROT_WRITE, MAP_SHARED,
			      b->memfd, 0);
	} else {
		b->map = mmap(NULL, b->maplen, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (b->map == MAP_FAILED) {
		if (b->memfd >= 0)
			close(b->memfd);
		return -1;
	}
	memset(b->map, 0x5a, data);
	mprotect((char *)b->map + data, PAGE, PROT_NONE);
	if (ro)
		mprotect(b->map, data, PROT_READ);
	b->addr = (char *)b->map + off;
	b->len = len;
	b->ro = ro;
	return 0;
}

static void buf_free(struct buf *b)
{
	if (b->map)
		munmap(b->map, b->maplen);
	if (b->memfd >= 0)
		close(b->memfd);
}

static void op_mr_reg(void)
{
	struct refs rf = {};
	int c = pick_ctx(&rf, true), pd, s, access = gen_access();
	uint32_t r = below(100);
	struct ibv_mr *mr;
	struct buf b;
	void *addr;
	size_t len, off = chance(70) ? 0 : below(4096);
	const char *how;

	if (c < 0 || (pd = pick(&rf, K_PD, c, NULL, NULL)) < 0) {
		put_all(&rf);
		rec_skip();
		return;
	}
	s = reserve(K_MR);
	if (s < 0) {
		put_all(&rf);
		op_mr_dereg();
		return;
	}
	if (buf_alloc(&b, gen_size(), off, r >= 50 && r < 58, r >= 58 && r < 63)) {
		release_excl(K_MR, s, true);
		put_all(&rf);
		rec(ENOMEM);
		return;
	}
	addr = b.addr;
	len = b.len;
	how = r < 50 ? "anon" : r < 58 ? "read-only" : r < 63 ? "memfd" : "anon";
	if (r >= 63 && r < 68) {
		len = 0;
		how = "zero length";
	} else if (r >= 68 && r < 73) {
		len = b.maplen - off + rnd_range(1, 8192);
		how = "past the mapping";
	} else if (r >= 73 && r < 76) {
		len = chance(50) ? 1ULL << 40 : chance(50) ? (size_t)-1 : 0x80000001UL;
		how = "huge length";
	} else if (r >= 76 && r < 79) {
		addr = chance(50) ? NULL : chance(50) ? (void *)0xffff888000000000UL :
		       (void *)(uintptr_t)(rnd() & 0x7ffffffff000ULL);
		how = "bad address";
	}
	detail("%s len %zu off %zu access %#x pd %d", how, len, off, access, pd);
	if (r >= 79 && r < 86) {
		uint64_t iova = chance(30) ? 0 : chance(50) ? rnd() :
				(uint64_t)-1 - len / 2;

		mr = ibv_reg_mr_iova(P.pd[pd].pd, addr, len, iova, access);
	} else {
		mr = ibv_reg_mr(P.pd[pd].pd, addr, len, access);
	}
	rec(mr ? 0 : errno);
	if (!mr) {
		buf_free(&b);
		release_excl(K_MR, s, true);
		put_all(&rf);
		return;
	}
	P.mr[s].mr = mr;
	P.mr[s].map = b.map;
	P.mr[s].maplen = b.maplen;
	P.mr[s].memfd = b.memfd;
	P.mr[s].addr = addr == b.addr ? b.addr : NULL;
	P.mr[s].len = addr == b.addr ? MIN(len, b.len) : 0;
	P.mr[s].access = access;
	P.mr[s].ro = b.ro;
	publish(K_MR, s, c, pd);
	put_all(&rf);
}

static void op_mr_rereg(void)
{
	struct ib_uverbs_rereg_mr cmd = {};
	struct ib_uverbs_rereg_mr_resp resp = {};
	struct buf nb = { .memfd = -1 };
	int i = claim_excl(K_MR, -1), newpd = -1, err;
	uint32_t flags = 0;

	if (i < 0) {
		rec_skip();
		return;
	}
	if (!P.mr[i].mr->handle && !P.mr[i].map) {
		release_excl(K_MR, i, false);
		rec_skip();
		return;
	}
	if (chance(60))
		flags |= IBV_REREG_MR_CHANGE_TRANSLATION;
	if (chance(40))
		flags |= IBV_REREG_MR_CHANGE_PD;
	if (chance(50))
		flags |= IBV_REREG_MR_CHANGE_ACCESS;
	if (chance(5))
		flags |= chance(50) ? 8 : (uint32_t)rnd();
	cmd.response = (uintptr_t)&resp;
	cmd.mr_handle = P.mr[i].mr->handle;
	cmd.flags = flags;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		if (buf_alloc(&nb, gen_size(), chance(70) ? 0 : below(4096), false,
			      false)) {
			release_excl(K_MR, i, false);
			rec(ENOMEM);
			return;
		}
		cmd.start = (uintptr_t)nb.addr;
		cmd.length = chance(90) ? nb.len : bval((uint32_t)nb.len);
		cmd.hca_va = chance(80) ? cmd.start : rnd();
	} else {
		cmd.start = rnd();
		cmd.length = rnd();
		cmd.hca_va = rnd();
	}
	pool_lockit();
	newpd = pick_nolock(K_PD, P.mr[i].h.ctx, NULL, NULL);
	cmd.pd_handle = newpd >= 0 && chance(90) ? P.pd[newpd].pd->handle :
			(uint32_t)rnd();
	pool_unlockit();
	cmd.access_flags = (uint32_t)gen_access();
	detail("mr %d flags %#x len %llu access %#x", i, flags,
	       (unsigned long long)cmd.length, cmd.access_flags);
	err = ucmd(P.ctx[P.mr[i].h.ctx].c, IB_USER_VERBS_CMD_REREG_MR, &cmd,
		   sizeof(cmd), sizeof(resp) / 4);
	rec(err);
	if (err) {
		buf_free(&nb);
		release_excl(K_MR, i, false);
		return;
	}
	dead_key(P.mr[i].mr->lkey);
	P.mr[i].mr->lkey = resp.lkey;
	P.mr[i].mr->rkey = resp.rkey;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		if (P.mr[i].map)
			munmap(P.mr[i].map, P.mr[i].maplen);
		if (P.mr[i].memfd >= 0)
			close(P.mr[i].memfd);
		P.mr[i].map = nb.map;
		P.mr[i].maplen = nb.maplen;
		P.mr[i].memfd = -1;
		P.mr[i].addr = nb.addr;
		P.mr[i].len = MIN((size_t)cmd.length, nb.len);
		P.mr[i].mr->addr = nb.addr;
		P.mr[i].mr->length = P.mr[i].len;
	}
	if ((flags & IBV_REREG_MR_CHANGE_PD) && newpd >= 0 &&
	    cmd.pd_handle == P.pd[newpd].pd->handle) {
		P.mr[i].h.pd = newpd;
		P.mr[i].mr->pd = P.pd[newpd].pd;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		P.mr[i].access = (int)cmd.access_flags;
	release_excl(K_MR, i, false);
}

/* The memory behind a registered MR goes away from the process. */
static void op_mr_unmap(void)
{
	int i = claim_excl(K_MR, -1);
	struct mr_o *m;

	if (i < 0) {
		rec_skip();
		return;
	}
	m = &P.mr[i];
	if (!m->map) {
		release_excl(K_MR, i, false);
		rec_skip();
		return;
	}
	detail("mr %d (%s)", i, m->memfd >= 0 ? "memfd truncated" : "unmapped");
	if (m->memfd >= 0)
		rec(ftruncate(m->memfd, 0) ? errno : 0);
	rec(munmap(m->map, m->maplen) ? errno : 0);
	/* New pages at the same place: the MR must keep the old ones. */
	m->map = mmap(m->map, m->maplen, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m->map == MAP_FAILED)
		m->map = NULL;
	else
		memset(m->map, 0xa5, m->maplen);
	/* Keep the range for SGEs: the kernel still has the MR. */
	release_excl(K_MR, i, false);
}

static void op_null_mr(void)
{
	struct refs rf = {};
	int pd = pick(&rf, K_PD, -1, ctx_for_create, NULL);
	struct ibv_mr *mr;

	if (pd < 0) {
		rec_skip();
		return;
	}
	mr = ibv_alloc_null_mr(P.pd[pd].pd);
	rec(mr ? 0 : errno);
	if (mr)
		rec(ibv_dereg_mr(mr));
	put_all(&rf);
}

static void op_mw_alloc(void)
{
	static const int odd[] = { 0, 3, 255 };
	struct refs rf = {};
	int pd = pick(&rf, K_PD, -1, ctx_for_create, NULL), s, type;
	struct ibv_mw *mw;

	if (pd < 0) {
		rec_skip();
		return;
	}
	s = reserve(K_MW);
	if (s < 0) {
		put_all(&rf);
		op_mw_dealloc();
		return;
	}
	type = chance(92) ? (int)rnd_range(1, 2) : odd[below(ARRAY_SIZE(odd))];
	mw = ibv_alloc_mw(P.pd[pd].pd, (enum ibv_mw_type)type);
	rec(mw ? 0 : errno);
	if (mw) {
		P.mw[s].mw = mw;
		P.mw[s].type = type;
		publish(K_MW, s, P.pd[pd].h.ctx, pd);
	} else {
		release_excl(K_MW, s, true);
	}
	put_all(&rf);
}

static bool rc_or_uc(int kind, int i, const void *arg)
{
	(void)kind;
	(void)arg;
	return P.qp[i].type == IBV_QPT_RC || P.qp[i].type == IBV_QPT_UC;
}

static void op_mw_bind(void)
{
	struct refs rf = {};
	int q = pick(&rf, K_QP, -1, chance(85) ? rc_or_uc : NULL, NULL), mw, mr, pd;
	struct ibv_mw_bind_info bi = {};
	int err;

	if (q < 0) {
		rec_skip();
		return;
	}
	pd = P.qp[q].h.pd;
	mw = pick(&rf, K_MW, P.qp[q].h.ctx, chance(80) ? same_pd : NULL, &pd);
	mr = pick(&rf, K_MR, P.qp[q].h.ctx, chance(80) ? same_pd : NULL, &pd);
	if (mw < 0 || mr < 0) {
		put_all(&rf);
		rec_skip();
		return;
	}
	bi.mr = P.mr[mr].mr;
	{
		uint64_t off;
		uint32_t l;

		gen_range(P.mr[mr].len, &off, &l, 1u << 20);
		bi.addr = (uintptr_t)P.mr[mr].addr + off;
		bi.length = chance(10) ? rnd() : l;
	}
	bi.mw_access_flags = chance(70) ?
		(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) & (unsigned int)rnd() :
		(unsigned int)gen_access();
	detail("qp %d mw %d (type %d) mr %d addr %#" PRIx64 " len %" PRIu64 " access %#x",
	       q, mw, P.mw[mw].type, mr, bi.addr, bi.length, bi.mw_access_flags);
	if (P.mw[mw].type == 1 || chance(10)) {
		struct ibv_mw_bind b = {
			.wr_id = tag(),
			.send_flags = chance(80) ? IBV_SEND_SIGNALED : 0,
			.bind_info = bi,
		};

		err = ibv_bind_mw(P.qp[q].qp, P.mw[mw].mw, &b);
	} else {
		struct ibv_send_wr wr = {}, *bad;
		uint32_t nk = (P.mw[mw].mw->rkey & ~0xffu) |
			      ((P.mw[mw].mw->rkey + 1) & 0xff);

		wr.wr_id = tag();
		wr.opcode = IBV_WR_BIND_MW;
		wr.send_flags = chance(80) ? IBV_SEND_SIGNALED : 0;
		wr.bind_mw.mw = P.mw[mw].mw;
		wr.bind_mw.rkey = chance(90) ? nk : (uint32_t)rnd();
		wr.bind_mw.bind_info = bi;
		err = ibv_post_send(P.qp[q].qp, &wr, &bad);
		if (!err)
			P.mw[mw].mw->rkey = wr.bind_mw.rkey;
	}
	rec(err);
	put_all(&rf);
}

/* ---- address handles and multicast ---- */

static void op_ah_create(void)
{
	struct refs rf = {};
	int pd = pick(&rf, K_PD, -1, ctx_for_create, NULL), s;
	struct ibv_ah_attr a;
	struct ibv_ah *ah;
	char g[64];

	if (pd < 0) {
		rec_skip();
		return;
	}
	s = reserve(K_AH);
	if (s < 0) {
		put_all(&rf);
		op_ah_destroy();
		return;
	}
	gen_ah_attr(&a);
	snprintf(g, sizeof(g), "%02x%02x..%02x%02x%02x%02x", a.grh.dgid.raw[0],
		 a.grh.dgid.raw[1], a.grh.dgid.raw[12], a.grh.dgid.raw[13],
		 a.grh.dgid.raw[14], a.grh.dgid.raw[15]);
	detail("pd %d gid %s sgid %u port %u global %u", pd, g, a.grh.sgid_index,
	       a.port_num, a.is_global);
	ah = ibv_create_ah(P.pd[pd].pd, &a);
	rec(ah ? 0 : errno);
	if (ah) {
		P.ah[s].ah = ah;
		P.ah[s].ah_num = (uint32_t)((struct prov_rxe_ah *)ah)->ah_num;
		publish(K_AH, s, P.pd[pd].h.ctx, pd);
	} else {
		release_excl(K_AH, s, true);
	}
	put_all(&rf);
}

static struct {
	int qp;
	uint32_t qpn;
	union ibv_gid gid;
	uint16_t lid;
} att[64];
static int natt;
static pthread_mutex_t att_lock = PTHREAD_MUTEX_INITIALIZER;

static void op_mcast(void)
{
	struct refs rf = {};
	union ibv_gid g;
	uint16_t lid = chance(80) ? 0 : (uint16_t)rnd();
	int q, ud = IBV_QPT_UD, err, j;

	if (chance(55)) {
		q = pick(&rf, K_QP, -1, chance(80) ? qp_type_is : NULL, &ud);
		if (q < 0) {
			rec_skip();
			return;
		}
		if (chance(85)) {
			union ibv_gid t;

			do
				gen_gid(&t);
			while (!(t.raw[0] == 0xff || (gid_is_v4(&t) && t.raw[12] == 239)) &&
			       chance(90));
			g = t;
		} else {
			gen_gid(&g);
		}
		err = ibv_attach_mcast(P.qp[q].qp, &g, lid);
		rec(err);
		pthread_mutex_lock(&att_lock);
		if (!err && natt < 64) {
			att[natt].qp = q;
			att[natt].qpn = P.qp[q].qp->qp_num;
			att[natt].gid = g;
			att[natt].lid = lid;
			natt++;
		}
		pthread_mutex_unlock(&att_lock);
		put_all(&rf);
		return;
	}
	pthread_mutex_lock(&att_lock);
	j = natt && chance(85) ? (int)below((uint32_t)natt) : -1;
	if (j >= 0) {
		q = att[j].qp;
		g = att[j].gid;
		lid = chance(90) ? att[j].lid : (uint16_t)rnd();
		pool_lockit();
		if (P.qp[q].h.state == S_LIVE && P.qp[q].qp->qp_num == att[j].qpn)
			take(&rf, K_QP, q);
		else
			q = -1;
		pool_unlockit();
		att[j] = att[--natt];
	} else {
		q = pick(&rf, K_QP, -1, NULL, NULL);
		gen_gid(&g);
	}
	pthread_mutex_unlock(&att_lock);
	if (q < 0) {
		rec_skip();
		return;
	}
	rec(ibv_detach_mcast(P.qp[q].qp, &g, lid));
	put_all(&rf);
}

/* ---- traffic: valid work on connected QPs ---- */

static bool in_rts(int kind, int i, const void *arg)
{
	(void)kind;
	(void)arg;
	return P.qp[i].qp->state == IBV_QPS_RTS &&
	       (P.qp[i].type == IBV_QPT_UD ||
		(P.qp[i].peer >= 0 && P.qp[P.qp[i].peer].h.state == S_LIVE &&
		 P.qp[P.qp[i].peer].qp->qp_num == P.qp[i].peer_qpn));
}

static bool mr_usable(int pd, int acc, size_t min, int *out)
{
	int i, n = 0;

	*out = -1;
	for (i = 0; i < NMR; i++) {
		struct mr_o *m = &P.mr[i];

		if (m->h.state != S_LIVE || m->h.pd != pd || m->len < min ||
		    (m->access & acc) != acc || m->ro)
			continue;
		if (below(++n) == 0)
			*out = i;
	}
	return *out >= 0;
}

static void op_traffic(void)
{
	struct refs rf = {};
	struct qpinfo s, d;
	int i = pick(&rf, K_QP, -1, in_rts, NULL), dst, n, j, lmr, rmr, ah = -1;
	uint32_t len;

	if (i < 0) {
		rec_skip();
		return;
	}
	qp_snapshot(i, &s);
	if (s.type == IBV_QPT_UD) {
		int ud = IBV_QPT_UD;

		dst = pick(&rf, K_QP, s.ctx, qp_type_is, &ud);
		ah = pick(&rf, K_AH, s.ctx, same_pd, &s.pd);
	} else {
		pool_lockit();
		dst = P.qp[i].peer;
		if (dst >= 0 && dst != i)
			take(&rf, K_QP, dst);
		pool_unlockit();
	}
	if (dst < 0 || (s.type == IBV_QPT_UD && ah < 0)) {
		put_all(&rf);
		rec_skip();
		return;
	}
	qp_snapshot(dst, &d);
	pool_lockit();
	if (!mr_usable(s.pd, IBV_ACCESS_LOCAL_WRITE, 8, &lmr) ||
	    !mr_usable(d.pd, IBV_ACCESS_LOCAL_WRITE |
		       (s.type == IBV_QPT_UD ? 0 : IBV_ACCESS_REMOTE_WRITE), 48, &rmr)) {
		pool_unlockit();
		put_all(&rf);
		rec_skip();
		return;
	}
	take(&rf, K_MR, lmr);
	take(&rf, K_MR, rmr);
	len = (uint32_t)MIN(P.mr[lmr].len, P.mr[rmr].len - 40);
	pool_unlockit();
	len = chance(70) ? rnd_range(1, MIN(len, 4096u)) : rnd_range(1, MIN(len, 65536u));
	if (s.type == IBV_QPT_UD)
		len = MIN(len, (uint32_t)(128 << D.port.active_mtu));
	n = (int)rnd_range(1, 4);
	detail("qp %d (%u) -> qp %d (%u) type %d %d x %u B", i, s.qp->qp_num, dst,
	       d.qp->qp_num, s.type, n, len);
	for (j = 0; j < n; j++) {
		struct ibv_recv_wr rw = {}, *rbad;
		struct ibv_send_wr sw = {}, *sbad;
		struct ibv_sge rs, ss;
		int op = (int)below(100);

		rs.addr = (uintptr_t)P.mr[rmr].addr;
		rs.length = len + 40;
		rs.lkey = P.mr[rmr].mr->lkey;
		rw.wr_id = tag();
		rw.sg_list = &rs;
		rw.num_sge = 1;
		if (d.srq >= 0 && d.srq_r.q) {
			int sq = d.srq;

			pool_lockit();
			if (P.srq[sq].h.state == S_LIVE)
				take(&rf, K_SRQ, sq);
			else
				sq = -1;
			pool_unlockit();
			if (sq >= 0)
				rec(ibv_post_srq_recv(P.srq[sq].srq, &rw, &rbad));
		} else if (d.rq.q) {
			rec(ibv_post_recv(d.qp, &rw, &rbad));
		}
		ss.addr = (uintptr_t)P.mr[lmr].addr;
		ss.length = len;
		ss.lkey = P.mr[lmr].mr->lkey;
		sw.wr_id = tag();
		sw.sg_list = &ss;
		sw.num_sge = 1;
		sw.send_flags = IBV_SEND_SIGNALED;
		if (s.type == IBV_QPT_UD) {
			sw.opcode = chance(50) ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
			sw.wr.ud.ah = P.ah[ah].ah;
			sw.wr.ud.remote_qpn = d.qp->qp_num;
			sw.wr.ud.remote_qkey = d.qkey;
		} else if (op < 35) {
			sw.opcode = IBV_WR_SEND;
		} else if (op < 50) {
			sw.opcode = IBV_WR_SEND_WITH_IMM;
		} else if (op < 70 || s.type == IBV_QPT_UC) {
			sw.opcode = op < 60 ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
			sw.wr.rdma.remote_addr = (uintptr_t)P.mr[rmr].addr;
			sw.wr.rdma.rkey = P.mr[rmr].mr->rkey;
		} else if (op < 88) {
			sw.opcode = IBV_WR_RDMA_READ;
			sw.wr.rdma.remote_addr = (uintptr_t)P.mr[rmr].addr;
			sw.wr.rdma.rkey = P.mr[rmr].mr->rkey;
		} else {
			sw.opcode = chance(50) ? IBV_WR_ATOMIC_FETCH_AND_ADD :
						 IBV_WR_ATOMIC_CMP_AND_SWP;
			sw.wr.atomic.remote_addr = ((uintptr_t)P.mr[rmr].addr + 7) & ~7UL;
			sw.wr.atomic.rkey = P.mr[rmr].mr->rkey;
			sw.wr.atomic.compare_add = rnd();
			sw.wr.atomic.swap = rnd();
			ss.length = 8;
		}
		rec(ibv_post_send(s.qp, &sw, &sbad));
	}
	put_all(&rf);
	/* Reap some: the poll op gets the rest. */
	for (j = 0; j < 20; j++) {
		struct refs r2 = {};
		int c = pick(&r2, K_CQ, s.ctx, has_ring, NULL);

		if (c >= 0)
			poll_cq_slot(c, 1);
		put_all(&r2);
		sched_yield();
	}
}

/* ---- the device file ---- */

static struct {
	void *p;
	size_t len;
} maps[8];

static void op_mmap_rand(void)
{
	struct refs rf = {};
	int c = pick_ctx(&rf, in_child), j;
	size_t len;
	off_t off;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_SHARED;
	unsigned long start = 0;
	void *p;

	if (c < 0) {
		rec_skip();
		return;
	}
	if (chance(60)) {
		/* An existing ring mapping's size and offset, maybe another's. */
		char line[512];
		FILE *f = fopen("/proc/self/maps", "r");
		unsigned long s, e, o;
		int n = 0;

		len = PAGE;
		off = 0;
		while (f && fgets(line, sizeof(line), f)) {
			if (!strstr(line, "/dev/infiniband/uverbs"))
				continue;
			if (sscanf(line, "%lx-%lx %*s %lx", &s, &e, &o) == 3 &&
			    below((uint32_t)++n) == 0) {
				len = e - s;
				off = (off_t)o;
				start = s;
			}
		}
		if (f)
			fclose(f);
	} else {
		len = PAGE * rnd_range(1, 16);
		off = (off_t)(PAGE * below(256));
	}
	if (chance(10))
		prot = PROT_READ | (chance(50) ? PROT_EXEC : 0);
	if (chance(10))
		flags = MAP_PRIVATE;
	detail("ctx %d len %zu off %#lx prot %d flags %d", c, len, (long)off, prot,
	       flags);
	p = mmap(NULL, len, prot, flags, P.ctx[c].c->cmd_fd, off);
	rec(p == MAP_FAILED ? errno : 0);
	if (p != MAP_FAILED) {
		/*
		 * Never the ring's geometry: the provider trusts it.  Only a
		 * mapping the size of a known one (offsets are per context:
		 * it may be any ring of this context of that size); a CQ's
		 * completions are then garbage the checks must not judge.
		 */
		if ((prot & PROT_WRITE) && len > 128 && start) {
			pool_lockit();
			for (j = 0; j < NCQ; j++)
				if (P.cq[j].h.state != S_FREE && P.cq[j].h.ctx == c &&
				    (!P.cq[j].r.q || P.cq[j].r.maplen == len))
					P.cq[j].taint = true;
			pool_unlockit();
			size_t n = MIN(len - 128, (size_t)below(8192));
			uint32_t m = *(volatile uint32_t *)((char *)p + 4);

			/* The index words get masked values (see ring_fix()). */
			rnd_fill((char *)p + 132, n > 4 ? MIN(n - 4, (size_t)124) : 0);
			if (n > 132)
				rnd_fill((char *)p + 260, n - 132);
			if (n >= 4)
				__atomic_store_n((uint32_t *)((char *)p + 128),
						 (uint32_t)rnd() & m, __ATOMIC_RELEASE);
			if (n >= 132)
				__atomic_store_n((uint32_t *)((char *)p + 256),
						 (uint32_t)rnd() & m, __ATOMIC_RELEASE);
		}
		if (chance(50)) {
			munmap(p, len);
		} else {
			j = (int)below(ARRAY_SIZE(maps));
			if (maps[j].p)
				munmap(maps[j].p, maps[j].len);
			maps[j].p = p;
			maps[j].len = len;
		}
	}
	put_all(&rf);
}

/* ---- commands whose response buffer faults ---- */

static struct ibv_qp dummy_qp;
static struct ibv_cq dummy_cq;
static struct ibv_srq dummy_srq;
static char *resp_pages;	/* page 0 writable, page 1 read-only */

static void op_badresp(void)
{
	static const int ks[] = { 0, 4, 8, 12, 16, 20, 24, 32, 48, 64, 4096 };
	struct refs rf = {};
	int c = pick_ctx(&rf, true), pd = -1, cq = -1, what = (int)below(8), err;
	uint8_t body[256];
	uint8_t *resp;
	size_t len = 0, ow = 0;
	uint32_t cmd = 0;

	if (c < 0) {
		rec_skip();
		return;
	}
	pd = pick(&rf, K_PD, c, NULL, NULL);
	cq = pick(&rf, K_CQ, c, NULL, NULL);
	if (chance(90))
		resp = (uint8_t *)resp_pages + PAGE - ks[below(ARRAY_SIZE(ks))];
	else
		resp = chance(50) ? NULL : (uint8_t *)0xffff888000000000UL;
	memset(body, 0, sizeof(body));
	switch (what) {
	case 0: {	/* create AH: ah_num lands after the core response */
		struct ib_uverbs_create_ah *b = (void *)body;
		union ibv_gid g;

		if (pd < 0)
			break;
		b->response = (uintptr_t)resp;
		b->pd_handle = P.pd[pd].pd->handle;
		b->attr.is_global = 1;
		b->attr.port_num = 1;
		gen_gid(&g);
		memcpy(b->attr.grh.dgid, g.raw, 16);
		b->attr.grh.sgid_index = (uint8_t)own_index_for(&g);
		b->attr.grh.hop_limit = 64;
		cmd = IB_USER_VERBS_CMD_CREATE_AH;
		len = sizeof(*b);
		ow = (4 + 8) / 4;
		break;
	}
	case 1: {	/* create CQ: mminfo after the core response */
		struct ib_uverbs_create_cq *b = (void *)body;

		b->response = (uintptr_t)resp;
		b->user_handle = (uintptr_t)&dummy_cq;
		b->cqe = rnd_range(1, 64);
		b->comp_channel = -1;
		cmd = IB_USER_VERBS_CMD_CREATE_CQ;
		len = sizeof(*b);
		ow = (8 + 16) / 4;
		break;
	}
	case 2: {	/* alloc PD */
		struct ib_uverbs_alloc_pd *b = (void *)body;

		b->response = (uintptr_t)resp;
		cmd = IB_USER_VERBS_CMD_ALLOC_PD;
		len = sizeof(*b);
		ow = 1;
		break;
	}
	case 3: {	/* alloc MW */
		struct ib_uverbs_alloc_mw *b = (void *)body;

		if (pd < 0)
			break;
		b->response = (uintptr_t)resp;
		b->pd_handle = P.pd[pd].pd->handle;
		b->mw_type = (uint8_t)rnd_range(1, 2);
		cmd = IB_USER_VERBS_CMD_ALLOC_MW;
		len = sizeof(*b);
		ow = 2;
		break;
	}
	case 4: {	/* create SRQ: mminfo and srq_num after the core */
		struct ib_uverbs_create_srq *b = (void *)body;

		if (pd < 0)
			break;
		b->response = (uintptr_t)resp;
		b->user_handle = (uintptr_t)&dummy_srq;
		b->pd_handle = P.pd[pd].pd->handle;
		b->max_wr = rnd_range(1, 64);
		b->max_sge = rnd_range(1, 4);
		cmd = IB_USER_VERBS_CMD_CREATE_SRQ;
		len = sizeof(*b);
		ow = (16 + 24) / 4;
		break;
	}
	case 5: {	/* create QP: two mminfo after the core */
		struct ib_uverbs_create_qp *b = (void *)body;

		if (pd < 0 || cq < 0)
			break;
		b->response = (uintptr_t)resp;
		b->user_handle = (uintptr_t)&dummy_qp;
		b->pd_handle = P.pd[pd].pd->handle;
		b->send_cq_handle = P.cq[cq].cq->handle;
		b->recv_cq_handle = P.cq[cq].cq->handle;
		b->max_send_wr = rnd_range(1, 32);
		b->max_recv_wr = rnd_range(1, 32);
		b->max_send_sge = below(4);
		b->max_recv_sge = below(4);
		b->max_inline_data = below(64);
		b->qp_type = chance(50) ? IBV_QPT_RC : IBV_QPT_UD;
		cmd = IB_USER_VERBS_CMD_CREATE_QP;
		len = sizeof(*b);
		ow = (32 + 32) / 4;
		break;
	}
	case 6: {	/* reg MR */
		struct ib_uverbs_reg_mr *b = (void *)body;

		if (pd < 0)
			break;
		b->response = (uintptr_t)resp;
		b->start = (uintptr_t)scratch;
		b->length = 4096;
		b->hca_va = b->start;
		b->pd_handle = P.pd[pd].pd->handle;
		b->access_flags = IBV_ACCESS_LOCAL_WRITE;
		cmd = IB_USER_VERBS_CMD_REG_MR;
		len = sizeof(*b);
		ow = 3;
		break;
	}
	default: {	/* resize SRQ: the new ring's mminfo to a bad address */
		struct {
			struct ib_uverbs_modify_srq m;
			uint64_t mmap_info_addr;
		} *b = (void *)body;
		int s = pick(&rf, K_SRQ, c, NULL, NULL);

		if (s < 0)
			break;
		b->m.srq_handle = P.srq[s].srq->handle;
		b->m.attr_mask = IBV_SRQ_MAX_WR;
		b->m.max_wr = rnd_range(1, 128);
		b->mmap_info_addr = (uintptr_t)resp;
		cmd = IB_USER_VERBS_CMD_MODIFY_SRQ;
		len = sizeof(*b);
		ow = 0;
		break;
	}
	}
	if (!cmd) {
		put_all(&rf);
		rec_skip();
		return;
	}
	detail("cmd %u response %p", cmd, (void *)resp);
	err = ucmd(P.ctx[c].c, cmd, body, len, ow);
	rec(err);
	/*
	 * Success: the response fitted (or the object is leaked into the
	 * context until it closes: the handle is unknown).  Destroy what
	 * can be destroyed.
	 */
	if (!err && resp >= (uint8_t *)resp_pages &&
	    resp + ow * 4 <= (uint8_t *)resp_pages + PAGE) {
		uint32_t h = *(uint32_t *)resp, r2[4];

		switch (cmd) {
		case IB_USER_VERBS_CMD_CREATE_AH: {
			struct ib_uverbs_destroy_ah d = { .ah_handle = h };

			dead_ah(((uint32_t *)resp)[1]);
			rec(ucmd(P.ctx[c].c, IB_USER_VERBS_CMD_DESTROY_AH, &d,
				 sizeof(d), 0));
			break;
		}
		case IB_USER_VERBS_CMD_CREATE_CQ: {
			struct ib_uverbs_destroy_cq d = {
				.response = (uintptr_t)r2, .cq_handle = h };

			rec(ucmd(P.ctx[c].c, IB_USER_VERBS_CMD_DESTROY_CQ, &d,
				 sizeof(d), 2));
			break;
		}
		case IB_USER_VERBS_CMD_ALLOC_PD: {
			struct ib_uverbs_dealloc_pd d = { .pd_handle = h };

			rec(ucmd(P.ctx[c].c, IB_USER_VERBS_CMD_DEALLOC_PD, &d,
				 sizeof(d), 0));
			break;
		}
		case IB_USER_VERBS_CMD_ALLOC_MW: {
			struct ib_uverbs_dealloc_mw d = { .mw_handle = h };

			rec(ucmd(P.ctx[c].c, IB_USER_VERBS_CMD_DEALLOC_MW, &d,
				 sizeof(d), 0));
			break;
		}
		case IB_USER_VERBS_CMD_CREATE_SRQ: {
			struct ib_uverbs_destroy_srq d = {
				.response = (uintptr_t)r2, .srq_handle = h };

			rec(ucmd(P.ctx[c].c, IB_USER_VERBS_CMD_DESTROY_SRQ, &d,
				 sizeof(d), 1));
			break;
		}
		case IB_USER_VERBS_CMD_CREATE_QP: {
			struct ib_uverbs_destroy_qp d = {
				.response = (uintptr_t)r2, .qp_handle = h };

			note_qpn(((uint32_t *)resp)[1]);
			rec(ucmd(P.ctx[c].c, IB_USER_VERBS_CMD_DESTROY_QP, &d,
				 sizeof(d), 1));
			break;
		}
		case IB_USER_VERBS_CMD_REG_MR: {
			struct ib_uverbs_dereg_mr d = { .mr_handle = h };

			rec(ucmd(P.ctx[c].c, IB_USER_VERBS_CMD_DEREG_MR, &d,
				 sizeof(d), 0));
			break;
		}
		}
	}
	put_all(&rf);
}

/* ---- a producer index written while the kernel flushes the ring ---- */

struct storm {
	struct rxe_queue_buf *sq, *rq;
	uint32_t sq_mask, rq_mask;
	bool chase;
	atomic_int stop;
	atomic_int running;
	uint64_t seed;
};

/*
 * Random indices, or (chase) always some WQEs ahead of the consumer index
 * the kernel publishes: a consumer that re-reads the producer index while
 * it drains never finds the ring empty.
 */
static uint32_t storm_index(struct rng *r, const struct rxe_queue_buf *q,
			    uint32_t mask, bool chase)
{
	uint32_t c;

	if (!chase)
		return (uint32_t)rng_next(r);
	c = __atomic_load_n(&q->consumer_index, __ATOMIC_ACQUIRE);
	/* The ring full: the most ahead it can be, the longest a lead. */
	(void)r;
	return (c + mask) & mask;
}

static void *storm_writer(void *arg)
{
	struct storm *st = arg;
	struct rng r = { st->seed };

	atomic_store(&st->running, 1);
	while (!atomic_load(&st->stop)) {
		__atomic_store_n(&st->sq->producer_index,
				 storm_index(&r, st->sq, st->sq_mask, st->chase),
				 __ATOMIC_RELEASE);
		if (st->rq)
			__atomic_store_n(&st->rq->producer_index,
					 storm_index(&r, st->rq, st->rq_mask,
						     st->chase),
					 __ATOMIC_RELEASE);
	}
	return NULL;
}

static void op_pi_storm(void)
{
	struct refs rf = {};
	struct qpinfo q;
	struct storm st = {};
	struct ibv_qp *own = NULL;
	cpu_set_t old_set;
	bool pinned = false;
	pthread_t t;
	int i = pick(&rf, K_QP, -1, has_ring, NULL), j, cpu, ncpu;

	if (i < 0) {
		rec_skip();
		return;
	}
	qp_snapshot(i, &q);
	if (chance(50)) {
		/*
		 * A QP of its own with the deepest rings: the more WQEs the
		 * writer keeps ahead, the longer a writer that is not
		 * scheduled (a vCPU preempted by its host) goes unnoticed.
		 */
		struct ibv_qp_init_attr a = {
			.send_cq = q.qp->send_cq, .recv_cq = q.qp->recv_cq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = (uint32_t)D.attr.max_qp_wr,
				 .max_recv_wr = (uint32_t)D.attr.max_qp_wr,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		own = ibv_create_qp(q.qp->pd, &a);
		rec(own ? 0 : errno);
		if (own) {
			note_qpn(own->qp_num);
			q.qp = own;
			q.type = IBV_QPT_RC;
			find_rings(own, &q.rq, &q.sq);
			if (!q.sq.q) {
				rec(ibv_destroy_qp(own));
				put_all(&rf);
				return;
			}
		}
	}
	st.sq = q.sq.q;
	st.rq = q.rq.q;
	st.sq_mask = q.sq.mask;
	st.rq_mask = q.rq.mask;
	st.chase = chance(50);
	st.seed = rnd();
	detail("qp %d (%u)%s", i, q.qp->qp_num, st.chase ? " chasing" : "");
	/*
	 * With two CPUs, the writer on the other one: it must run while the
	 * kernel consumes, not wait for the syscall to end.
	 */
	cpu = sched_getcpu();
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (pthread_create(&t, NULL, storm_writer, &st)) {
		put_all(&rf);
		rec(EAGAIN);
		return;
	}
	if (ncpu > 1 && cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((cpu + 1) % ncpu, &set);
		pthread_setaffinity_np(t, sizeof(set), &set);
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_getaffinity(0, sizeof(old_set), &old_set);
		sched_setaffinity(0, sizeof(set), &set);
		pinned = true;
	}
	for (j = 0; j < 10000 && !atomic_load(&st.running); j++)
		sched_yield();
	/*
	 * RESET -> INIT -> ERR (flush) -> doorbell (flush again) -> RESET
	 * (the rings drained): every step a consumer of the indices above.
	 */
	for (j = 0; j < 10; j++) {
		struct ibv_qp_attr a = {};
		int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

		a.qp_state = IBV_QPS_RESET;
		modify(q.qp, &a, IBV_QP_STATE);
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		if (q.type == IBV_QPT_UD) {
			a.qkey = q.qkey;
			mask |= IBV_QP_QKEY;
		} else {
			a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
			mask |= IBV_QP_ACCESS_FLAGS;
		}
		modify(q.qp, &a, mask);
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_ERR;
		modify(q.qp, &a, IBV_QP_STATE);
		rec(doorbell(q.qp));
		rec(doorbell(q.qp));
	}
	atomic_store(&st.stop, 1);
	pthread_join(t, NULL);
	if (pinned)
		sched_setaffinity(0, sizeof(old_set), &old_set);
	ring_fix(&q.sq);
	if (q.rq.q)
		ring_fix(&q.rq);
	if (own)
		rec(ibv_destroy_qp(own));
	put_all(&rf);
}

/*
 * Deregistration racing window binds: a helper thread binds a type 2
 * window to a fresh MR over and over (invalidating it in between) while
 * this thread deregisters the MR through the kernel (the provider's MR
 * object stays valid for the binder).  The answer may be EBUSY or 0;
 * it must come, and the window must deallocate afterwards.
 */
struct bindrace {
	struct ibv_qp *qp;
	struct ibv_mw *mw;
	struct ibv_mr *mr;
	atomic_int stop;
};

static void *binder(void *arg)
{
	struct bindrace *br = arg;
	uint32_t rkey = br->mw->rkey;
	int n = 0;

	while (!atomic_load(&br->stop) && n++ < 400) {
		struct ibv_send_wr wr = {}, *bad;
		struct ibv_wc wc[8];

		wr.opcode = IBV_WR_BIND_MW;
		wr.wr_id = 1;
		wr.bind_mw.mw = br->mw;
		rkey = (rkey & ~0xffu) | ((rkey + 1) & 0xff);
		wr.bind_mw.rkey = rkey;
		wr.bind_mw.bind_info.mr = br->mr;
		wr.bind_mw.bind_info.addr = (uintptr_t)br->mr->addr;
		wr.bind_mw.bind_info.length = br->mr->length;
		wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (ibv_post_send(br->qp, &wr, &bad))
			break;
		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.invalidate_rkey = rkey;
		if (ibv_post_send(br->qp, &wr, &bad))
			break;
		ibv_poll_cq(br->qp->send_cq, 8, wc);
		sched_yield();
	}
	return NULL;
}

static bool rc_in_rts(int kind, int i, const void *arg)
{
	return P.qp[i].type == IBV_QPT_RC && in_rts(kind, i, arg) && P.qp[i].sq.q;
}

static void op_dereg_race(void)
{
	struct refs rf = {};
	struct bindrace br = {};
	struct ib_uverbs_dereg_mr d;
	pthread_t t;
	struct buf b;
	int q = pick(&rf, K_QP, -1, rc_in_rts, NULL), j, spin, err;

	if (q < 0) {
		rec_skip();
		return;
	}
	spin = (int)below(200);
	if (buf_alloc(&b, 65536, 0, false, false)) {
		put_all(&rf);
		rec(ENOMEM);
		return;
	}
	br.qp = P.qp[q].qp;
	br.mr = ibv_reg_mr(P.qp[q].qp->pd, b.addr, b.len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	rec(br.mr ? 0 : errno);
	br.mw = br.mr ? ibv_alloc_mw(P.qp[q].qp->pd, IBV_MW_TYPE_2) : NULL;
	if (br.mr)
		rec(br.mw ? 0 : errno);
	if (!br.mw) {
		if (br.mr)
			ibv_dereg_mr(br.mr);
		buf_free(&b);
		put_all(&rf);
		return;
	}
	detail("qp %d (%u) mr %#x mw %#x after %d yields", q, br.qp->qp_num,
	       br.mr->lkey, br.mw->rkey, spin);
	if (pthread_create(&t, NULL, binder, &br)) {
		atomic_store(&br.stop, 1);
	} else {
		for (j = 0; j < spin; j++)
			sched_yield();
	}
	d.mr_handle = br.mr->handle;
	err = ucmd(br.mr->context, IB_USER_VERBS_CMD_DEREG_MR, &d, sizeof(d), 0);
	rec(err);
	atomic_store(&br.stop, 1);
	pthread_join(t, NULL);
	/* Unbinds whatever is bound: a busy MR deregisters after it. */
	rec(ibv_dealloc_mw(br.mw));
	if (err)
		rec(ucmd(br.mr->context, IB_USER_VERBS_CMD_DEREG_MR, &d, sizeof(d), 0));
	/* br.mr: the provider's object is left behind (the kernel's is gone). */
	buf_free(&b);
	put_all(&rf);
}

/*
 * Address handle numbers used while a create_ah fails: a helper thread
 * posts UD sends through the numbers next in line while this thread
 * creates AHs whose response cannot be written (the AH is freed again;
 * its number must never reach a sender).
 */
struct ahrace {
	struct ring sq;
	struct ibv_qp *qp;
	uint32_t base;
	uint32_t lkey;
	uint64_t addr;
	atomic_int stop;
};

static void *ah_sender(void *arg)
{
	struct ahrace *ar = arg;
	int n = 0;

	while (!atomic_load(&ar->stop) && n++ < 2000) {
		uint32_t p = ring_prod(&ar->sq);
		struct rxe_send_wqe *w = slot_addr(&ar->sq, p);

		memset(w, 0, ar->sq.esz);
		w->wr.wr_id = 0xa4;
		w->wr.opcode = IBV_WR_SEND;
		w->wr.wr.ud.remote_qpn = ar->qp->qp_num;
		w->wr.wr.ud.remote_qkey = 0x11111111;
		w->wr.wr.ud.ah_num = ar->base + (uint32_t)(n % 4);
		__atomic_store_n(&ar->sq.q->producer_index, (p + 1) & ar->sq.mask,
				 __ATOMIC_RELEASE);
		doorbell(ar->qp);
		sched_yield();
	}
	return NULL;
}

static bool ud_in_rts(int kind, int i, const void *arg)
{
	return P.qp[i].type == IBV_QPT_UD && in_rts(kind, i, arg) && P.qp[i].sq.q &&
	       !hdr_of(kind, i)->inh;
}

static void op_ah_race(void)
{
	struct refs rf = {};
	struct ahrace ar = {};
	struct ibv_ah_attr aa = {};
	struct ibv_ah *ah;
	pthread_t t;
	int q = pick(&rf, K_QP, -1, ud_in_rts, NULL), pd, j;

	if (q < 0) {
		rec_skip();
		return;
	}
	pd = P.qp[q].h.pd;
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.dgid = D.gid_v4 >= 0 ? D.gv4 : D.gv6;
	aa.grh.sgid_index = (uint8_t)own_index_for(&aa.grh.dgid);
	aa.grh.hop_limit = 64;
	/* The next number: one past a fresh AH's. */
	ah = ibv_create_ah(P.qp[q].qp->pd, &aa);
	rec(ah ? 0 : errno);
	if (!ah) {
		put_all(&rf);
		return;
	}
	ar.base = (uint32_t)((struct prov_rxe_ah *)ah)->ah_num + 1;
	rec(ibv_destroy_ah(ah));
	pool_lockit();
	ar.sq = P.qp[q].sq;
	pool_unlockit();
	ar.qp = P.qp[q].qp;
	detail("qp %d (%u) ah numbers from %u", q, ar.qp->qp_num, ar.base);
	if (pthread_create(&t, NULL, ah_sender, &ar)) {
		put_all(&rf);
		return;
	}
	for (j = 0; j < 8; j++) {
		struct ib_uverbs_create_ah b = {};

		b.response = (uintptr_t)resp_pages + PAGE - 4;
		b.pd_handle = P.qp[q].qp->pd->handle;
		b.attr.is_global = 1;
		b.attr.port_num = 1;
		memcpy(b.attr.grh.dgid, aa.grh.dgid.raw, 16);
		b.attr.grh.sgid_index = aa.grh.sgid_index;
		b.attr.grh.hop_limit = 64;
		rec(ucmd(P.ctx[P.qp[q].h.ctx].c, IB_USER_VERBS_CMD_CREATE_AH, &b,
			 sizeof(b), 3));
	}
	atomic_store(&ar.stop, 1);
	pthread_join(t, NULL);
	ring_fix(&ar.sq);
	(void)pd;
	put_all(&rf);
}

/* ---- the checked pair ---- */

static void op_checked(void)
{
	if (O.no_check || in_child) {
		rec_skip();
		return;
	}
	check_run();
}

/* ---- the table ---- */

#define OP(n, w, r) { .name = #n, .fn = op_##n, .weight = w, .role = r }
struct op optab[] = {
	OP(ctx_open, 2, R_MOD),
	OP(ctx_close, 1, R_MOD),
	OP(pd_alloc, 4, R_MOD),
	OP(pd_dealloc, 3, R_MOD),
	OP(ch_create, 2, R_MOD),
	OP(ch_destroy, 2, R_MOD),
	OP(cq_create, 6, R_MOD),
	OP(cq_destroy, 3, R_MOD),
	OP(cq_resize, 3, R_MOD),
	OP(cq_notify, 4, R_POST),
	OP(cq_poll, 14, R_POST),
	OP(events, 3, R_POST),
	OP(srq_create, 3, R_MOD),
	OP(srq_destroy, 2, R_MOD),
	OP(srq_modify, 3, R_MOD),
	OP(srq_query, 1, R_MOD),
	OP(qp_create, 9, R_MOD),
	OP(qp_destroy, 4, R_MOD),
	OP(qp_connect, 8, R_MOD),
	OP(qp_modify, 10, R_MOD),
	OP(qp_query, 3, R_MOD),
	OP(dev_query, 2, R_MOD),
	OP(post_send, 14, R_POST),
	OP(post_wr, 6, R_POST),
	OP(post_raw, 10, R_POST),
	OP(post_recv, 8, R_POST),
	OP(recv_raw, 5, R_POST),
	OP(cmd_post, 3, R_POST),
	OP(ring_corrupt, 3, R_POST),
	OP(mr_reg, 8, R_MOD),
	OP(mr_dereg, 5, R_MOD),
	OP(mr_rereg, 3, R_MOD),
	OP(mr_unmap, 1, R_MOD),
	OP(null_mr, 1, R_MOD),
	OP(mw_alloc, 3, R_MOD),
	OP(mw_dealloc, 2, R_MOD),
	OP(mw_bind, 5, R_POST),
	OP(ah_create, 4, R_MOD),
	OP(ah_destroy, 3, R_MOD),
	OP(mcast, 3, R_MOD),
	OP(traffic, 14, R_POST),
	OP(mmap_rand, 1, R_MOD),
	OP(badresp, 2, R_MOD),
	OP(pi_storm, 1, R_POST),
	OP(dereg_race, 1, R_POST),
	OP(ah_race, 1, R_POST),
	OP(fork, 2, R_MOD),
	OP(checked, 4, R_POST),
};
int nops = (int)ARRAY_SIZE(optab);

void ops_init(void)
{
	int i;

	scratch = malloc(scratch_len);
	for (i = 0; i < (int)scratch_len; i++)
		scratch[i] = (char)(i * 7 + 1);
	resp_pages = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(resp_pages + PAGE, PAGE, PROT_READ);
	pthread_mutex_init(&dummy_qp.mutex, NULL);
	pthread_cond_init(&dummy_qp.cond, NULL);
	pthread_mutex_init(&dummy_cq.mutex, NULL);
	pthread_cond_init(&dummy_cq.cond, NULL);
	pthread_mutex_init(&dummy_srq.mutex, NULL);
	pthread_cond_init(&dummy_srq.cond, NULL);
	for (i = 0; i < NMR; i++)
		P.mr[i].memfd = -1;
}

/* Fork child: a context of its own to create in (see fork_child()). */
void op_fork_child_setup(void)
{
	struct ibv_context *c;
	int s = free_slot(K_CTX), k, i;

	if (s < 0) {
		/* Forget (not close) the parent's last context here. */
		s = NCTX - 1;
		for (k = K_CH; k < NKIND; k++)
			for (i = 0; i < slot_count(k); i++)
				if (hdr_of(k, i)->state != S_FREE &&
				    hdr_of(k, i)->ctx == s)
					hdr_of(k, i)->state = S_FREE;
		memset(&P.ctx[s], 0, sizeof(P.ctx[s]));
	}
	natt = 0;
	c = ibv_open_device(D.dev);
	if (!c)
		return;
	set_nonblock(c->async_fd);
	P.ctx[s].c = c;
	P.ctx[s].h.ctx = s;
	P.ctx[s].h.state = S_LIVE;
}
