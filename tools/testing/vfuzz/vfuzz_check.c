// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce-vfuzz: the checked pair.
 *
 * A context of its own, untouched by the pool's operations (they never
 * pick its QPs as destinations), with two connected RC pairs and two UD
 * QPs.  Each run of the "checked" operation does one transfer with random
 * length and offset and verifies the outcome: the bytes (and the guard
 * bytes around them), the completion status, byte_len, the value an
 * atomic returned.  Misuse must fail cleanly: a WRITE to an MR without
 * remote write, past an MR's end, with another PD's rkey completes with
 * IBV_WC_REM_ACCESS_ERR and leaves every byte of the MR as it was; a UD
 * send through another PD's AH completes with IBV_WC_LOC_QP_OP_ERR, one
 * through a destroyed AH's number with an error, and neither is
 * delivered.  The ATOMIC WRITE pair has max_send_sge = 0 and
 * max_inline_data = 0 (its WQE copy is as small as it gets).
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "vfuzz.h"

#define BUF	(256 * 1024)
#define GUARD	64
#define WAIT_S	30

enum {
	C_SEND, C_WRITE, C_READ, C_ATOMIC, C_ATOMIC_WRITE, C_WRITE_RO,
	C_WRITE_PAST_END, C_WRITE_OTHER_PD, C_UD_SEND, C_UD_OTHER_PD_AH,
	C_UD_DEAD_AH, C_MTU, C_MCAST_LID, NCHK
};

static struct chk {
	const char *desc;
	int pass, fail;
	char first[240];
} chk[NCHK] = {
	[C_SEND] = { "RC SEND arrives intact (byte_len, data, bytes past it untouched)" },
	[C_WRITE] = { "RC RDMA WRITE lands intact, guard bytes untouched" },
	[C_READ] = { "RC RDMA READ returns the data, guard bytes untouched" },
	[C_ATOMIC] = { "RC FETCH_ADD/CMP_SWAP return the old value and update the target" },
	[C_ATOMIC_WRITE] = { "ATOMIC WRITE (QP with max_send_sge 0, max_inline_data 0) stores the value" },
	[C_WRITE_RO] = { "WRITE to an MR without remote write: REM_ACCESS_ERR, MR untouched" },
	[C_WRITE_PAST_END] = { "multi-packet WRITE running past the MR's end: REM_ACCESS_ERR, no byte of the MR written" },
	[C_WRITE_OTHER_PD] = { "WRITE with another PD's rkey: REM_ACCESS_ERR, MR untouched" },
	[C_UD_SEND] = { "UD SEND through the QP's PD's AH arrives intact" },
	[C_UD_OTHER_PD_AH] = { "UD send through another PD's AH: LOC_QP_OP_ERR, nothing delivered" },
	[C_UD_DEAD_AH] = { "UD send through a destroyed AH's number: error completion, nothing delivered" },
	[C_MTU] = { "SEND in packets larger than the responder's path MTU: not completed as success on either side" },
	[C_MCAST_LID] = { "UD QP attached to one MGID under LIDs 0 and 1: both detach, then the QP destroys" },
};

struct side {
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	struct ring sq;
};

static struct {
	struct ibv_context *c;
	struct ibv_pd *pd, *pd2;
	struct side a, b, x, y, ua, ub, m, n;
	struct ibv_qp_ex *xx;
	struct ibv_ah *ah, *ah2;
	char *src, *dst, *rbuf, *ro, *oth, *loc;
	struct ibv_mr *msrc, *mdst, *mrbuf, *mro, *moth, *mloc;
	uint32_t mtu;
	bool ok;
	uint64_t seq;
} K;

static uint32_t check_qpns[8];
static char tap_name[64];	/* "vfuzz seed S" or "vfuzz -r NAME" */

bool check_owns_qpn(uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(check_qpns); i++)
		if (check_qpns[i] && check_qpns[i] == (qpn & 0xffffff))
			return true;
	return false;
}

static void result(int c, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void result(int c, bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		chk[c].pass++;
		return;
	}
	chk[c].fail++;
	if (chk[c].fail == 1) {
		va_start(ap, fmt);
		vsnprintf(chk[c].first, sizeof(chk[c].first), fmt, ap);
		va_end(ap);
		printf("# check failed (seed %" PRIu64 ", after %ld ops): %s: %s\n",
		       O.seed, atomic_load(&ops_done), chk[c].desc, chk[c].first);
		fflush(stdout);
	}
}

static void *xmap(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint8_t pat(uint64_t seq, size_t i)
{
	return (uint8_t)((seq * 131 + i * 7 + (i >> 8)) ^ 0x3c);
}

static void fill(char *p, size_t len, uint64_t seq)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (char)pat(seq, i);
}

/* Index of the first byte of p[0..len) that is not the pattern, or -1. */
static long differs(const char *p, size_t len, uint64_t seq)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((uint8_t)p[i] != pat(seq, i))
			return (long)i;
	return -1;
}

static long not_byte(const char *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((uint8_t)p[i] != v)
			return (long)i;
	return -1;
}

static struct ibv_qp *mkqp(struct ibv_pd *pd, int type, struct ibv_cq *scq,
			   struct ibv_cq *rcq, uint32_t sge, uint32_t inl,
			   uint64_t ops)
{
	struct ibv_qp_init_attr_ex a = {};

	a.qp_type = type;
	a.send_cq = scq;
	a.recv_cq = rcq;
	a.cap.max_send_wr = 16;
	a.cap.max_recv_wr = 16;
	a.cap.max_send_sge = sge;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = inl;
	a.pd = pd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = ops;
	}
	return ibv_create_qp_ex(K.c, &a);
}

static int side_init(struct side *s, struct ibv_pd *pd, int type, uint32_t sge,
		     uint32_t inl, uint64_t ops)
{
	s->scq = ibv_create_cq(K.c, 64, NULL, NULL, 0);
	s->rcq = ibv_create_cq(K.c, 64, NULL, NULL, 0);
	if (!s->scq || !s->rcq)
		return -1;
	s->qp = mkqp(pd, type, s->scq, s->rcq, sge, inl, ops);
	if (!s->qp)
		return -1;
	note_qpn(s->qp->qp_num);
	find_rings(s->qp, NULL, &s->sq);
	return 0;
}

static int to_rts_mtu(struct ibv_qp *qp, int type, uint32_t dest,
		      enum ibv_mtu mtu);

static int to_rts(struct ibv_qp *qp, int type, uint32_t dest)
{
	return to_rts_mtu(qp, type, dest, D.port.active_mtu);
}

static int to_rts_mtu(struct ibv_qp *qp, int type, uint32_t dest,
		      enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = {};
	int v6 = D.gid_v4 < 0;

	a.qp_state = IBV_QPS_RESET;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	if (type == IBV_QPT_UD) {
		a.qkey = 0x22222222;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_QKEY))
			return -1;
	} else {
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
			return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (type == IBV_QPT_UD) {
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
			return -1;
	} else {
		a.path_mtu = mtu;
		a.dest_qp_num = dest;
		a.rq_psn = 0;
		a.max_dest_rd_atomic = 8;
		a.min_rnr_timer = 12;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = v6 ? D.gv6 : D.gv4;
		a.ah_attr.grh.sgid_index = (uint8_t)(v6 ? D.gid_v6 : D.gid_v4);
		a.ah_attr.grh.hop_limit = 64;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
			return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (type == IBV_QPT_UD)
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) ? -1 : 0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 8;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_MAX_QP_RD_ATOMIC) ? -1 : 0;
}

static void drain(struct ibv_cq *cq)
{
	struct ibv_wc wc[16];
	int n;

	do {
		n = ibv_poll_cq(cq, 16, wc);
	} while (n > 0);
}

static void drain_side(struct side *s)
{
	drain(s->scq);
	drain(s->rcq);
}

static int reconnect(struct side *p, struct side *q)
{
	int err;

	err = to_rts(p->qp, IBV_QPT_RC, q->qp->qp_num) |
	      to_rts(q->qp, IBV_QPT_RC, p->qp->qp_num);
	drain_side(p);
	drain_side(q);
	return err;
}

/* m sends with the port's MTU; n takes packets of 256 bytes at most. */
static int mtu_reset(void)
{
	int err = to_rts_mtu(K.m.qp, IBV_QPT_RC, K.n.qp->qp_num, D.port.active_mtu) |
		  to_rts_mtu(K.n.qp, IBV_QPT_RC, K.m.qp->qp_num, IBV_MTU_256);

	drain_side(&K.m);
	drain_side(&K.n);
	return err;
}

static int ud_reset(void)
{
	int err = to_rts(K.ua.qp, IBV_QPT_UD, 0) | to_rts(K.ub.qp, IBV_QPT_UD, 0);

	drain_side(&K.ua);
	drain_side(&K.ub);
	return err;
}

/* One completion on @cq: 0, or -1 if none came within WAIT_S. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n > 0) {
			wc_seen(wc, true);
			return 0;
		}
		atomic_fetch_add(&progress, 1);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > WAIT_S)
			return -1;
		usleep(200);
	}
}

int check_init(void)
{
	int i;

	if (!tap_name[0])
		snprintf(tap_name, sizeof(tap_name), "vfuzz seed %" PRIu64, O.seed);
	K.c = ibv_open_device(D.dev);
	if (!K.c)
		return -1;
	K.pd = ibv_alloc_pd(K.c);
	K.pd2 = ibv_alloc_pd(K.c);
	K.src = xmap(BUF);
	K.dst = xmap(BUF);
	K.rbuf = xmap(BUF);
	K.ro = xmap(BUF);
	K.oth = xmap(BUF);
	K.loc = xmap(BUF);
	if (!K.pd || !K.pd2 || !K.src || !K.dst || !K.rbuf || !K.ro || !K.oth ||
	    !K.loc)
		return -1;
	/* The MRs cover [GUARD, BUF - GUARD): the guards are not registered. */
	K.msrc = ibv_reg_mr(K.pd, K.src, BUF, IBV_ACCESS_LOCAL_WRITE);
	K.mdst = ibv_reg_mr(K.pd, K.dst + GUARD, BUF - 2 * GUARD,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	K.mrbuf = ibv_reg_mr(K.pd, K.rbuf, BUF, IBV_ACCESS_LOCAL_WRITE);
	K.mro = ibv_reg_mr(K.pd, K.ro + GUARD, BUF - 2 * GUARD,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	K.moth = ibv_reg_mr(K.pd2, K.oth + GUARD, BUF - 2 * GUARD,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ);
	K.mloc = ibv_reg_mr(K.pd, K.loc, BUF, IBV_ACCESS_LOCAL_WRITE);
	if (!K.msrc || !K.mdst || !K.mrbuf || !K.mro || !K.moth || !K.mloc)
		return -1;
	if (side_init(&K.a, K.pd, IBV_QPT_RC, 2, 64, 0) ||
	    side_init(&K.b, K.pd, IBV_QPT_RC, 2, 64, 0) ||
	    side_init(&K.x, K.pd, IBV_QPT_RC, 0, 0,
		      IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE) ||
	    side_init(&K.y, K.pd, IBV_QPT_RC, 1, 0, 0) ||
	    side_init(&K.ua, K.pd, IBV_QPT_UD, 1, 0, 0) ||
	    side_init(&K.ub, K.pd, IBV_QPT_UD, 1, 0, 0) ||
	    side_init(&K.m, K.pd, IBV_QPT_RC, 1, 0, 0) ||
	    side_init(&K.n, K.pd, IBV_QPT_RC, 1, 0, 0))
		return -1;
	K.xx = ibv_qp_to_qp_ex(K.x.qp);
	check_qpns[0] = K.a.qp->qp_num;
	check_qpns[1] = K.b.qp->qp_num;
	check_qpns[2] = K.x.qp->qp_num;
	check_qpns[3] = K.y.qp->qp_num;
	check_qpns[4] = K.ua.qp->qp_num;
	check_qpns[5] = K.ub.qp->qp_num;
	check_qpns[6] = K.m.qp->qp_num;
	check_qpns[7] = K.n.qp->qp_num;
	{
		struct ibv_ah_attr a = {};

		a.is_global = 1;
		a.port_num = 1;
		a.grh.dgid = D.gid_v4 >= 0 ? D.gv4 : D.gv6;
		a.grh.sgid_index = (uint8_t)(D.gid_v4 >= 0 ? D.gid_v4 : D.gid_v6);
		a.grh.hop_limit = 64;
		K.ah = ibv_create_ah(K.pd, &a);
		K.ah2 = ibv_create_ah(K.pd2, &a);
		if (!K.ah || !K.ah2)
			return -1;
	}
	if (reconnect(&K.a, &K.b) || reconnect(&K.x, &K.y) || ud_reset() ||
	    mtu_reset())
		return -1;
	K.mtu = 128u << D.port.active_mtu;
	for (i = 0; i < NCHK; i++)
		chk[i].pass = chk[i].fail = 0;
	K.ok = true;
	return 0;
}

/* Post one signaled WR on @s and wait for its completion. */
static int post_wait(struct side *s, struct ibv_send_wr *wr, struct ibv_wc *wc)
{
	struct ibv_send_wr *bad;
	int err;

	wr->send_flags |= IBV_SEND_SIGNALED;
	err = ibv_post_send(s->qp, wr, &bad);
	if (err)
		return err;
	return wait_wc(s->scq, wc) ? ETIMEDOUT : 0;
}

static void c_send(void)
{
	uint32_t len = chance(50) ? rnd_range(1, 4096) : rnd_range(1, 4 * K.mtu + 17);
	uint64_t seq = ++K.seq;
	struct ibv_sge rs = { (uintptr_t)K.rbuf, BUF, K.mrbuf->lkey };
	struct ibv_sge ss = { (uintptr_t)K.src, len, K.msrc->lkey };
	struct ibv_recv_wr rw = { .wr_id = seq, .sg_list = &rs, .num_sge = 1 }, *rb;
	struct ibv_send_wr sw = { .wr_id = seq, .sg_list = &ss, .num_sge = 1,
				  .opcode = IBV_WR_SEND };
	struct ibv_wc wc, rwc;
	long d;
	int err;

	fill(K.src, len, seq);
	memset(K.rbuf, 0xee, BUF);
	if (ibv_post_recv(K.b.qp, &rw, &rb)) {
		result(C_SEND, false, "post_recv: %s", strerror(errno));
		return;
	}
	err = post_wait(&K.a, &sw, &wc);
	if (err || wc.status != IBV_WC_SUCCESS) {
		result(C_SEND, false, "%u B: send %s", len,
		       err ? strerror(err) : ibv_wc_status_str(wc.status));
		reconnect(&K.a, &K.b);
		return;
	}
	if (wait_wc(K.b.rcq, &rwc) || rwc.status != IBV_WC_SUCCESS ||
	    rwc.byte_len != len || rwc.wr_id != seq) {
		result(C_SEND, false, "%u B: receive %s byte_len %u", len,
		       ibv_wc_status_str(rwc.status), rwc.byte_len);
		reconnect(&K.a, &K.b);
		return;
	}
	d = differs(K.rbuf, len, seq);
	if (d < 0)
		d = not_byte(K.rbuf + len, 4096, 0xee) >= 0 ? (long)len : -1;
	result(C_SEND, d < 0, "%u B: byte %ld differs", len, d);
}

static void c_write_read(bool read)
{
	uint32_t cap = BUF - 2 * GUARD;
	uint32_t len = chance(50) ? rnd_range(1, 4096) : rnd_range(1, 4 * K.mtu + 17);
	uint32_t off = below(cap - len + 1);
	uint64_t seq = ++K.seq;
	struct ibv_sge ss = { (uintptr_t)(read ? K.loc : K.src), len,
			      read ? K.mloc->lkey : K.msrc->lkey };
	struct ibv_send_wr sw = { .wr_id = seq, .sg_list = &ss, .num_sge = 1 };
	struct ibv_wc wc;
	int c = read ? C_READ : C_WRITE, err;
	long d = -1;

	memset(K.dst, 0xdd, BUF);
	memset(K.loc, 0xcc, BUF);
	if (read)
		fill(K.dst + GUARD + off, len, seq);
	else
		fill(K.src, len, seq);
	sw.opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
	sw.wr.rdma.remote_addr = (uintptr_t)K.dst + GUARD + off;
	sw.wr.rdma.rkey = K.mdst->rkey;
	err = post_wait(&K.a, &sw, &wc);
	if (err || wc.status != IBV_WC_SUCCESS) {
		result(c, false, "%u B at %u: %s", len, off,
		       err ? strerror(err) : ibv_wc_status_str(wc.status));
		reconnect(&K.a, &K.b);
		return;
	}
	if (read) {
		d = differs(K.loc, len, seq);
		if (d < 0 && not_byte(K.loc + len, GUARD, 0xcc) >= 0)
			d = len;
	} else {
		d = differs(K.dst + GUARD + off, len, seq);
		if (d < 0 && (not_byte(K.dst, GUARD + off, 0xdd) >= 0 ||
			      not_byte(K.dst + GUARD + off + len,
				       BUF - GUARD - off - len, 0xdd) >= 0))
			d = (long)len;
	}
	result(c, d < 0, "%u B at %u: byte %ld differs", len, off, d);
}

static void c_atomic(void)
{
	uint32_t off = below((BUF - 2 * GUARD) / 8) * 8;
	uint64_t *t = (uint64_t *)(K.dst + GUARD + off), old = rnd(), arg = rnd();
	bool cas = chance(50), hit = chance(50);
	struct ibv_sge ss = { (uintptr_t)K.loc, 8, K.mloc->lkey };
	struct ibv_send_wr sw = { .wr_id = ++K.seq, .sg_list = &ss, .num_sge = 1 };
	struct ibv_wc wc;
	uint64_t want;
	int err;

	*t = old;
	memset(K.loc, 0, 8);
	sw.opcode = cas ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
	sw.wr.atomic.remote_addr = (uintptr_t)t;
	sw.wr.atomic.rkey = K.mdst->rkey;
	sw.wr.atomic.compare_add = cas ? (hit ? old : ~old) : arg;
	sw.wr.atomic.swap = arg;
	err = post_wait(&K.a, &sw, &wc);
	if (err || wc.status != IBV_WC_SUCCESS) {
		result(C_ATOMIC, false, "%s: %s", cas ? "cmp_swap" : "fetch_add",
		       err ? strerror(err) : ibv_wc_status_str(wc.status));
		reconnect(&K.a, &K.b);
		return;
	}
	want = cas ? (hit ? arg : old) : old + arg;
	result(C_ATOMIC, *(uint64_t *)K.loc == old && *t == want,
	       "%s: returned %#" PRIx64 " (want %#" PRIx64 "), target %#" PRIx64
	       " (want %#" PRIx64 ")", cas ? "cmp_swap" : "fetch_add",
	       *(uint64_t *)K.loc, old, *t, want);
}

static void c_atomic_write(void)
{
	uint32_t off = below((BUF - 2 * GUARD) / 8) * 8;
	uint64_t *t = (uint64_t *)(K.dst + GUARD + off), v = rnd();
	struct ibv_wc wc;
	int err;

	*t = ~v;
	ibv_wr_start(K.xx);
	K.xx->wr_id = ++K.seq;
	K.xx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(K.xx, K.mdst->rkey, (uintptr_t)t, &v);
	err = ibv_wr_complete(K.xx);
	if (!err)
		err = wait_wc(K.x.scq, &wc) ? ETIMEDOUT : 0;
	if (err || wc.status != IBV_WC_SUCCESS) {
		result(C_ATOMIC_WRITE, false, "%s",
		       err ? strerror(err) : ibv_wc_status_str(wc.status));
		reconnect(&K.x, &K.y);
		return;
	}
	result(C_ATOMIC_WRITE, *t == v, "target %#" PRIx64 " (want %#" PRIx64 ")",
	       *t, v);
}

/* A WRITE that must fail with REM_ACCESS_ERR and leave the MR untouched. */
static void c_write_bad(int c)
{
	char *base = c == C_WRITE_RO ? K.ro : c == C_WRITE_OTHER_PD ? K.oth : K.dst;
	struct ibv_mr *mr = c == C_WRITE_RO ? K.mro : c == C_WRITE_OTHER_PD ?
			    K.moth : K.mdst;
	uint32_t cap = BUF - 2 * GUARD, len, off;
	struct ibv_sge ss;
	struct ibv_send_wr sw = { .wr_id = ++K.seq, .sg_list = &ss, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE };
	struct ibv_wc wc;
	long d;
	int err;

	if (c == C_WRITE_PAST_END) {
		/*
		 * The first packet (and the second, often) fits; the
		 * message does not: the whole range is checked at the
		 * first packet, before any byte is placed.
		 */
		len = K.mtu * rnd_range(2, 4);
		off = cap - len + rnd_range(1, K.mtu);
	} else {
		len = rnd_range(1, 2 * K.mtu);
		off = below(cap - len + 1);
	}
	ss.addr = (uintptr_t)K.src;
	ss.length = len;
	ss.lkey = K.msrc->lkey;
	fill(K.src, len, K.seq);
	memset(base, 0xbb, BUF);
	sw.wr.rdma.remote_addr = (uintptr_t)base + GUARD + off;
	sw.wr.rdma.rkey = mr->rkey;
	err = post_wait(&K.a, &sw, &wc);
	d = not_byte(base, BUF, 0xbb);
	result(c, !err && wc.status == IBV_WC_REM_ACCESS_ERR && d < 0,
	       "%u B at MR offset %u (MR %u B): %s, %s%ld", len, off, cap,
	       err ? strerror(err) : ibv_wc_status_str(wc.status),
	       d < 0 ? "MR untouched" : "first written byte at MR offset ",
	       d < 0 ? 0 : d - GUARD);
	reconnect(&K.a, &K.b);
}

/*
 * UD: post @bad (if any) and then a good marker send; the marker must
 * arrive, @bad must complete with an error and not be received.
 */
static void c_ud(int c)
{
	uint64_t seq = ++K.seq;
	uint32_t len = rnd_range(1, MIN(K.mtu, 1024u));
	struct ibv_sge rs[2] = {
		{ (uintptr_t)K.rbuf, 4096, K.mrbuf->lkey },
		{ (uintptr_t)K.rbuf + 8192, 4096, K.mrbuf->lkey },
	};
	struct ibv_recv_wr rw[2] = {
		{ .wr_id = 1, .next = &rw[1], .sg_list = &rs[0], .num_sge = 1 },
		{ .wr_id = 2, .sg_list = &rs[1], .num_sge = 1 },
	}, *rb;
	struct ibv_sge ss = { (uintptr_t)K.src, len, K.msrc->lkey };
	struct ibv_send_wr sw = { .sg_list = &ss, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM };
	struct ibv_wc wc, rwc;
	struct ibv_ah *dead = NULL;
	uint32_t dead_num = 0;
	int err, got = 0;
	char what[160] = "";

	fill(K.src, len, seq);
	if (ibv_post_recv(K.ub.qp, rw, &rb)) {
		result(c, false, "post_recv: %s", strerror(errno));
		return;
	}
	sw.wr.ud.remote_qpn = K.ub.qp->qp_num;
	sw.wr.ud.remote_qkey = 0x22222222;
	if (c == C_UD_OTHER_PD_AH) {
		sw.wr_id = 0xbad;
		sw.imm_data = htobe32(0xbad);
		sw.wr.ud.ah = K.ah2;
		err = post_wait(&K.ua, &sw, &wc);
		snprintf(what, sizeof(what), "bad send: %s",
			 err ? strerror(err) : ibv_wc_status_str(wc.status));
		if (err || wc.status != IBV_WC_LOC_QP_OP_ERR)
			got = -1;
		ud_reset();
		if (ibv_post_recv(K.ub.qp, rw, &rb)) {
			result(c, false, "post_recv after reset: %s", strerror(errno));
			return;
		}
	} else if (c == C_UD_DEAD_AH) {
		struct ibv_ah_attr a = {};
		struct rxe_send_wqe *w;
		uint32_t p;

		a.is_global = 1;
		a.port_num = 1;
		a.grh.dgid = D.gid_v4 >= 0 ? D.gv4 : D.gv6;
		a.grh.sgid_index = (uint8_t)(D.gid_v4 >= 0 ? D.gid_v4 : D.gid_v6);
		a.grh.hop_limit = 64;
		dead = ibv_create_ah(K.pd, &a);
		if (!dead || !K.ua.sq.q) {
			result(c, false, "cannot set up: %s", dead ? "no SQ ring" :
			       strerror(errno));
			if (dead)
				ibv_destroy_ah(dead);
			return;
		}
		dead_num = (uint32_t)((int *)((char *)dead + sizeof(struct ibv_ah) +
					       sizeof(struct rxe_av)))[0];
		ibv_destroy_ah(dead);
		/* The WQE as the provider would write it, with the dead number. */
		p = __atomic_load_n(&K.ua.sq.q->producer_index, __ATOMIC_ACQUIRE) &
		    K.ua.sq.mask;
		w = (void *)(K.ua.sq.q->data + (size_t)p * K.ua.sq.esz);
		memset(w, 0, K.ua.sq.esz);
		w->wr.wr_id = 0xdead;
		w->wr.opcode = IBV_WR_SEND_WITH_IMM;
		w->wr.send_flags = IBV_SEND_SIGNALED;
		w->wr.ex.imm_data = htobe32(0xdead);
		w->wr.wr.ud.remote_qpn = K.ub.qp->qp_num;
		w->wr.wr.ud.remote_qkey = 0x22222222;
		w->wr.wr.ud.ah_num = dead_num;
		w->dma.length = len;
		w->dma.resid = len;
		w->dma.num_sge = 1;
		w->dma.sge[0].addr = (uintptr_t)K.src;
		w->dma.sge[0].length = len;
		w->dma.sge[0].lkey = K.msrc->lkey;
		__atomic_store_n(&K.ua.sq.q->producer_index, (p + 1) & K.ua.sq.mask,
				 __ATOMIC_RELEASE);
		{
			struct ib_uverbs_post_send cmd = {};
			uint32_t resp;

			cmd.response = (uintptr_t)&resp;
			cmd.qp_handle = K.ua.qp->handle;
			cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
			err = ucmd(K.c, IB_USER_VERBS_CMD_POST_SEND, &cmd, sizeof(cmd), 1);
		}
		if (!err)
			err = wait_wc(K.ua.scq, &wc) ? ETIMEDOUT : 0;
		snprintf(what, sizeof(what), "send through dead AH %u: %s", dead_num,
			 err ? strerror(err) : ibv_wc_status_str(wc.status));
		if (err || wc.status == IBV_WC_SUCCESS)
			got = -1;
		ud_reset();
		if (ibv_post_recv(K.ub.qp, rw, &rb)) {
			result(c, false, "post_recv after reset: %s", strerror(errno));
			return;
		}
	}
	/* The marker. */
	sw.wr_id = seq;
	sw.imm_data = htobe32((uint32_t)seq);
	sw.wr.ud.ah = K.ah;
	err = post_wait(&K.ua, &sw, &wc);
	if (err || wc.status != IBV_WC_SUCCESS) {
		result(c, false, "%s%smarker send: %s", what, *what ? "; " : "",
		       err ? strerror(err) : ibv_wc_status_str(wc.status));
		ud_reset();
		return;
	}
	if (wait_wc(K.ub.rcq, &rwc) || rwc.status != IBV_WC_SUCCESS) {
		result(c, false, "%s%smarker receive: %s", what, *what ? "; " : "",
		       ibv_wc_status_str(rwc.status));
		ud_reset();
		return;
	}
	if (!(rwc.wc_flags & IBV_WC_WITH_IMM) || be32toh(rwc.imm_data) != (uint32_t)seq ||
	    rwc.byte_len != len + 40 ||
	    differs(K.rbuf + (rwc.wr_id == 1 ? 0 : 8192) + 40, len, seq) >= 0) {
		result(c, false, "%s%sreceived imm %#x byte_len %u (want %#x, %u)",
		       what, *what ? "; " : "", be32toh(rwc.imm_data), rwc.byte_len,
		       (uint32_t)seq, len + 40);
		ud_reset();
		return;
	}
	/* Anything else received is the bad send. */
	if (ibv_poll_cq(K.ub.rcq, 1, &rwc) > 0) {
		snprintf(what + strlen(what), sizeof(what) - strlen(what),
			 "; also received imm %#x (%s)", be32toh(rwc.imm_data),
			 ibv_wc_status_str(rwc.status));
		got = -1;
	}
	result(c, got == 0, "%s", what);
	ud_reset();
}

/*
 * The responder's path MTU is 256, the requester's the port's: a SEND of
 * one full requester packet carries more than the responder accepts.
 */
static void c_mtu(void)
{
	uint64_t seq = ++K.seq;
	uint32_t len = K.mtu;
	struct ibv_sge rs = { (uintptr_t)K.rbuf, BUF, K.mrbuf->lkey };
	struct ibv_sge ss = { (uintptr_t)K.src, len, K.msrc->lkey };
	struct ibv_recv_wr rw = { .wr_id = seq, .sg_list = &rs, .num_sge = 1 }, *rb;
	struct ibv_send_wr sw = { .wr_id = seq, .sg_list = &ss, .num_sge = 1,
				  .opcode = IBV_WR_SEND };
	struct ibv_wc wc, rwc = {};
	bool got;
	int err;

	if (K.mtu <= 256) {
		rec_skip();
		return;
	}
	fill(K.src, len, seq);
	if (ibv_post_recv(K.n.qp, &rw, &rb)) {
		result(C_MTU, false, "post_recv: %s", strerror(errno));
		return;
	}
	err = post_wait(&K.m, &sw, &wc);
	got = ibv_poll_cq(K.n.rcq, 1, &rwc) > 0 && rwc.status == IBV_WC_SUCCESS;
	result(C_MTU, !err && wc.status != IBV_WC_SUCCESS && !got,
	       "%u B SEND to a QP with path MTU 256: sender %s, receiver %s", len,
	       err ? strerror(err) : ibv_wc_status_str(wc.status),
	       got ? "got it (success)" : "nothing");
	mtu_reset();
}

/*
 * ib_core keeps one attachment, and one use of the QP, per (MGID, LID)
 * the driver accepted; a detach the driver then refuses leaves the QP in
 * use for good: ibv_destroy_qp() fails, and so does the destroy when the
 * context closes (ib_core WARNs and leaks the QP).  Once per run.
 */
static int mcast_lid_destroy(struct ibv_context *c, struct ibv_pd *pd,
			     struct ibv_cq *cq, char *why, size_t wlen)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	union ibv_gid g = {};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);
	int e1, e2, d1, d2, err;

	(void)c;
	if (!qp) {
		snprintf(why, wlen, "create_qp: %s", strerror(errno));
		return -1;
	}
	note_qpn(qp->qp_num);
	g.raw[10] = g.raw[11] = 0xff;		/* ::ffff:239.198.18.9 */
	g.raw[12] = 239;
	g.raw[13] = 198;
	g.raw[14] = 18;
	g.raw[15] = 9;
	e1 = ibv_attach_mcast(qp, &g, 0);
	e2 = ibv_attach_mcast(qp, &g, 1);
	d1 = ibv_detach_mcast(qp, &g, 0);
	d2 = ibv_detach_mcast(qp, &g, 1);
	/* ib_core refuses (EBUSY) while an attachment is left. */
	err = ibv_destroy_qp(qp);
	snprintf(why, wlen, "attach lid 0: %s, lid 1: %s; detach lid 0: %s, lid 1: %s; destroy_qp: %s",
		 e1 ? strerror(e1) : "ok", e2 ? strerror(e2) : "ok",
		 d1 ? strerror(d1) : "ok", d2 ? strerror(d2) : "ok",
		 err ? strerror(err) : "ok");
	return e1 || e2 || d1 || d2 || err;
}

void check_run(void)
{
	int c;

	if (!K.ok) {
		rec_skip();
		return;
	}
	c = (int)below(NCHK);
	detail("%s", chk[c].desc);
	switch (c) {
	case C_SEND: c_send(); break;
	case C_WRITE: c_write_read(false); break;
	case C_READ: c_write_read(true); break;
	case C_ATOMIC: c_atomic(); break;
	case C_ATOMIC_WRITE: c_atomic_write(); break;
	case C_WRITE_RO:
	case C_WRITE_PAST_END:
	case C_WRITE_OTHER_PD:
		c_write_bad(c);
		break;
	case C_MTU:
		c_mtu();
		break;
	case C_MCAST_LID:	/* a QP leaks on HEAD: -r mcast_lid only */
		c = C_SEND;
		c_send();
		break;
	default:
		c_ud(c);
	}
	rec(0);
}

/*
 * -r NAME: the minimal sequence behind a finding, on a fresh context,
 * printing what happened; the kernel log shows the rest.
 *   atomic_write  ATOMIC WRITEs on a QP with max_send_sge = max_inline =
 *                 0; destroying it frees the overwritten WQE copies
 *   mcast_lid     attach one MGID under LIDs 0 and 1, detach both,
 *                 destroy the QP (a QP left in use leaks at close)
 *   ud_ah_pd      UD send through an AH of another PD
 *   write_range   WRITE whose first packet fits the MR, the rest not
 *   path_mtu      SEND to a QP with a smaller path MTU
 */
int check_repro(const char *name)
{
	char why[240];
	int i, err, bad = 0;

	snprintf(tap_name, sizeof(tap_name), "vfuzz -r %s", name);
	if (check_init())
		return 2;
	if (!strcmp(name, "atomic_write")) {
		struct ibv_wc wc;
		uint64_t *t = (uint64_t *)(K.dst + GUARD);

		/* Twice round the QP's 8 kernel copies of WQEs. */
		for (i = 0; i < 16; i++) {
			uint64_t v = 0x1111111111111111ULL * (uint64_t)(i + 1);

			ibv_wr_start(K.xx);
			K.xx->wr_id = (uint64_t)i;
			K.xx->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_atomic_write(K.xx, K.mdst->rkey, (uintptr_t)t, &v);
			err = ibv_wr_complete(K.xx);
			if (!err)
				err = wait_wc(K.x.scq, &wc) ? ETIMEDOUT : 0;
			if (err || wc.status != IBV_WC_SUCCESS || *t != v) {
				printf("# atomic write %d: %s, target %#" PRIx64 " (want %#" PRIx64 ")\n",
				       i, err ? strerror(err) : ibv_wc_status_str(wc.status),
				       *t, v);
				bad++;
			}
		}
		err = ibv_destroy_qp(K.x.qp);
		printf("%sok - %s: 16 ATOMIC WRITEs on an RC QP with max_send_sge 0 and max_inline_data 0 store their values (%d did not), the QP destroys (%s)\n",
		       bad || err ? "not " : "", tap_name, bad,
		       err ? strerror(err) : "ok");
		return bad || err;
	}
	if (!strcmp(name, "mcast_lid")) {
		err = mcast_lid_destroy(K.c, K.pd, K.a.scq, why, sizeof(why));
		printf("%sok - %s: %s (%s)\n", err ? "not " : "", tap_name,
		       chk[C_MCAST_LID].desc, why);
		return err ? 1 : 0;
	}
	for (i = 0; i < NCHK; i++)
		chk[i].pass = chk[i].fail = 0;
	if (!strcmp(name, "ud_ah_pd"))
		c_ud(C_UD_OTHER_PD_AH);
	else if (!strcmp(name, "write_range"))
		c_write_bad(C_WRITE_PAST_END);
	else if (!strcmp(name, "path_mtu"))
		c_mtu();
	else
		return 64;
	return check_report() ? 1 : 0;
}

int check_report(void)
{
	int i, failed = 0;

	for (i = 0; i < NCHK; i++) {
		if (!chk[i].pass && !chk[i].fail)
			continue;
		if (chk[i].fail) {
			failed++;
			printf("not ok - %s: checked: %s (%d of %d failed; first: %s)\n",
			       tap_name, chk[i].desc, chk[i].fail,
			       chk[i].fail + chk[i].pass, chk[i].first);
		} else {
			printf("ok - %s: checked: %s (%d)\n", tap_name,
			       chk[i].desc, chk[i].pass);
		}
	}
	return failed;
}

void check_fini(void)
{
	/* The process exit releases the checked pair with everything else. */
}
