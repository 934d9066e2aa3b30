// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce-verify - end-to-end data-integrity check of an RDMA device's RC
 * data path, through libibverbs only (no rdma_cm).
 *
 *   server:  sroce-verify -d DEV -g GIDIDX [-p PORT] [-H]
 *   client:  sroce-verify -d DEV -g GIDIDX [-p PORT] [-q QPS] [-n ITERS]
 *                         [-s SEED] [-m MAXSIZE] [-D SECS] [-F FILE] [-H]
 *                         SERVER_ADDR
 *
 * The client opens one TCP connection per QP to the server; each QP is
 * driven by its own thread on both sides.  The TCP connection exchanges the
 * QP parameters and then paces the iterations.  Every iteration of every QP
 * derives a plan from (seed, qp, iteration): message lengths from 1 B to
 * MAXSIZE (all of them MAXSIZE in QP 0's first iteration, 1..8 bytes in
 * every QP's second one, mostly log-uniform after that), scatter/gather
 * lists whose elements sit at unaligned offsets of up to three MRs (often
 * ending at the end of one MR and going on at the start of the next), and
 * unaligned offsets in the remote MRs.  Both sides
 * compute the same plan, so only "ready", "done" and "result" messages
 * cross the socket.  One iteration is:
 *
 *   client                                    server
 *   post RECV (multi-SGE)
 *   C_READY ---------------------------------> post 2 RECVs (SEND, WRITE_IMM)
 *                                               post SEND to the client
 *            <-------------------------------- S_READY
 *   post SEND, WRITE, WRITE_IMM, READ
 *   wait for 4 send + 1 recv completions
 *   verify READ and received data
 *   DONE ------------------------------------> wait for 2 recv + 1 send
 *                                               completions, verify SEND,
 *                                               WRITE, WRITE_IMM targets and
 *                                               the READ source
 *            <-------------------------------- RESULT
 *
 * Sources hold a pattern derived from (seed, iteration, qp, operation,
 * message offset).  Destinations are pre-filled with a different
 * address-derived "background" pattern, which must still be there in the
 * GUARD bytes on both sides of every scatter/gather element and in receive
 * space past the end of a message.  Completions are checked for status,
 * opcode, wr_id (and their order), byte_len, imm_data and qp_num.
 *
 * Exit status 0 only if every byte verified on both sides.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define __printf(a, b)	__attribute__((format(printf, a, b)))

#define PROG		"sroce-verify"
#define PROTO_VERSION	2
#define MAGIC		0x53525646u	/* "SRVF" */
#define NBANK		3		/* MRs behind one scatter/gather list */
#define PAD		4096		/* unregistered bytes around every MR */
#define GUARD		64		/* checked bytes on each side of an SGE */
#define RECV_EXTRA	64		/* max receive space past a message */
#define ROFF_SLACK	8192		/* room for offsets in remote MRs */
#define MSG_LEN		256		/* fixed TCP frame */
#define MAX_QPS		64
#define CHUNK		65536		/* verification chunk */
#define HUGE_SZ		(2u << 20)	/* x86-64 huge page */
#define WRID_TAG	0x5356000000000000ull
#define WRID_RECV	0x80
#define DEF_ITERS	16
#define DEF_MAXSIZE	(4u << 20)
#define DEF_PORT	18520
#define ALL_OPS		((1u << NOPS) - 1)

enum op { OP_SEND, OP_WRITE, OP_WIMM, OP_READ, OP_RSEND, NOPS };

/*
 * -o atomic: each iteration also sends NATOM FETCH_ADDs of ATOM_INC and one
 * CMP_SWAP to two 64-bit counters of the server.  Every fetched value is
 * known in advance (one counter pair per QP, iterations in lock step), and
 * the server checks the counters after each iteration: a lost or doubled
 * atomic (a duplicate executed twice) shows at once.  Twelve WQEs per
 * iteration outnumber the 8 send WQE copies a QP starts with, so the
 * driver grows them with WQEs in flight (and, under loss, retransmitted).
 */
#define OPF_ATOMIC	(1u << NOPS)
#define NATOM		11
#define ATOM_INC	0x10003ull

/* -o names */
static const char *const op_opt[NOPS] = {
	[OP_SEND] = "send",
	[OP_WRITE] = "write",
	[OP_WIMM] = "imm",
	[OP_READ] = "read",
	[OP_RSEND] = "rsend",
};

static const char *const op_name[NOPS] = {
	[OP_SEND] = "SEND",
	[OP_WRITE] = "RDMA WRITE",
	[OP_WIMM] = "RDMA WRITE WITH IMM",
	[OP_READ] = "RDMA READ",
	[OP_RSEND] = "SEND (server to client)",
};

enum msg_type {
	MSG_HELLO = 1,
	MSG_HELLO_ACK,
	MSG_C_READY,
	MSG_S_READY,
	MSG_DONE,
	MSG_RESULT,
	MSG_BYE,
	MSG_ABORT,
};

/* ABORT status: the sender found an error / stops because another QP did */
#define ABORT_ERROR	1
#define ABORT_CASCADE	2

static struct {
	const char *dev;
	const char *host;
	int ib_port;
	int gid_idx;
	int tcp_port;
	int nqps;
	unsigned int iters;
	uint64_t seed;
	bool seed_set;
	size_t maxsize;
	int timeout;
	int verbose;
	unsigned int ops;
	int qp_timeout;		/* IBTA local ACK timeout exponent */
	int duration;		/* client: start no iteration after this (s) */
	const char *stop_file;	/* client: ... once this file exists */
	int retry_cnt;
	bool huge;		/* buffers on 2 MiB huge pages (MAP_HUGETLB) */
} opt = {
	.ib_port = 1,
	.gid_idx = -1,
	.tcp_port = DEF_PORT,
	.nqps = 4,
	.qp_timeout = 17,	/* ~0.5 s: emulated guests are slow */
	.retry_cnt = 7,
	.iters = DEF_ITERS,
	.maxsize = DEF_MAXSIZE,
	.timeout = 60,
	.ops = ALL_OPS,
};

static const union ibv_gid zero_gid;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_device_attr dattr;
static struct ibv_port_attr pattr;
static union ibv_gid lgid;
static atomic_int g_abort;
/* IBV_EVENT_DEVICE_FATAL seen (the device was removed, say). */
static atomic_int g_dev_fatal;
static bool dev_fatal(short revents);
static bool is_server;

/* One registered buffer: the MR is surrounded by PAD unregistered bytes. */
struct region {
	uint8_t *alloc;
	size_t alloc_len;
	size_t start;		/* offset of the MR in alloc */
	size_t len;
	struct ibv_mr *mr;
};

/* Part of a scatter/gather list or a remote target, in one region. */
struct span {
	struct region *rg;
	size_t off;		/* offset in the MR */
	size_t len;
	uint64_t bg;		/* background pattern of the region */
};

struct seg {
	int bank;
	size_t off;
	size_t len;
};

struct sgl {
	int n;
	struct seg s[NBANK];
};

struct xfer {
	size_t len;
	struct sgl src;		/* sender's / RDMA initiator's list */
	struct sgl dst;		/* receiver's list / READ destination */
	size_t roff;		/* offset in the remote MR */
	uint32_t imm;
};

struct plan {
	struct xfer x[NOPS];
};

struct expect {
	uint64_t wr_id;
	enum ibv_wc_opcode opcode;
	bool check_len;
	uint32_t byte_len;
	bool imm;
	uint32_t imm_data;
	const char *name;
};

struct qctx {
	int idx;
	int fd;
	bool peer_gone;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	bool armed;
	struct region bank[NOPS][NBANK];
	struct region single[NOPS];
	uint64_t raddr[NOPS];
	uint32_t rkey[NOPS];
	struct region atom;	/* server: counters; client: fetched values */
	uint64_t atom_raddr;
	uint32_t atom_rkey;
	uint8_t *scratch;

	/* negotiated */
	uint64_t seed;
	unsigned int iters;
	size_t maxsize;
	int nqps;
	int nsge;
	size_t bankcap;
	size_t rcap;
	enum ibv_mtu mtu;
	int rd_atom;
	uint32_t psn;
	uint32_t rqpn;
	uint32_t rpsn;
	union ibv_gid rgid;
	uint8_t hello[MSG_LEN];	/* server: the client's HELLO body */
	unsigned int ops;	/* bit mask of enum op */

	unsigned int iter;
	uint64_t bytes;
	uint64_t sends;
	uint64_t writes;
	uint64_t wimms;
	uint64_t reads;
	uint64_t atomics;
	bool failed;
	pthread_t thr;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- patterns ---------------------------------------------------------- */

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng_next(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return mix64(*s);
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return rng_next(s) % n;
}

/* Byte o of the pattern stream with this base. */
static inline uint8_t pat_byte(uint64_t base, uint64_t o)
{
	return mix64(base + (o >> 3)) >> ((o & 7) * 8);
}

/* Write bytes [o, o + len) of the stream to p. */
static void pat_fill(uint64_t base, uint64_t o, uint8_t *p, size_t len)
{
	uint64_t w;

	while (len && (o & 7)) {
		*p++ = pat_byte(base, o++);
		len--;
	}
	while (len >= 8) {
		w = htole64(mix64(base + (o >> 3)));
		memcpy(p, &w, 8);
		p += 8;
		o += 8;
		len -= 8;
	}
	while (len--)
		*p++ = pat_byte(base, o++);
}

/* Index of the first byte of p that differs from the stream, or SIZE_MAX. */
static size_t pat_find(uint8_t *scratch, uint64_t base, uint64_t o,
		       const uint8_t *p, size_t len)
{
	size_t done = 0, n, i;

	while (done < len) {
		n = len - done < CHUNK ? len - done : CHUNK;
		pat_fill(base, o + done, scratch, n);
		if (memcmp(scratch, p + done, n)) {
			for (i = 0; i < n; i++)
				if (scratch[i] != p[done + i])
					return done + i;
		}
		done += n;
	}
	return SIZE_MAX;
}

static uint64_t pat_base(const struct qctx *q, unsigned int k, int op)
{
	return mix64(mix64(q->seed ^ 0x7061747465726e00ull) +
		     ((uint64_t)k << 16 | (uint64_t)q->idx << 4 | op));
}

/* Background of a destination region, new for every iteration. */
static uint64_t bg_base(const struct qctx *q, unsigned int k, int op,
			int bank)
{
	return mix64(mix64(q->seed ^ 0x6261636b67726400ull) +
		     ((uint64_t)k << 16 | (uint64_t)q->idx << 8 |
		      (uint64_t)is_server << 7 | op << 3 | bank));
}

/* ---- the plan of one iteration ----------------------------------------- */

static size_t pick_len(uint64_t *r, size_t max, unsigned int k, int mtu)
{
	unsigned int bits = 0, e;
	size_t len;

	if (k == 1)
		return 1 + rng_below(r, max < 8 ? max : 8);
	switch (rng_below(r, 16)) {
	case 0:
		len = 1 + rng_below(r, max);
		break;
	case 1:
	case 2:
		/* a multiple of the path MTU, or one byte less or more */
		len = (size_t)mtu * (1 + rng_below(r, 8)) + rng_below(r, 3);
		len = len > 1 ? len - 1 : 1;
		break;
	default:
		/* log-uniform: mostly small, sometimes large */
		while ((2ull << bits) <= max)
			bits++;
		e = rng_below(r, bits + 1);
		len = ((size_t)1 << e) + rng_below(r, (size_t)1 << e);
		break;
	}
	return len > max ? max : len;
}

/*
 * Split total bytes into 1..nsge elements, element i in a distinct bank
 * (in random bank order).  The first element often ends at the end of its
 * MR and the next ones often start at the start of theirs.
 */
static void split(uint64_t *r, size_t total, int nsge, size_t cap,
		  struct sgl *g)
{
	int perm[NBANK], i, j, t, k;
	size_t kmin, kmax, left = total, rest, lo, hi, len, room, off;
	unsigned int m;

	for (i = 0; i < NBANK; i++)
		perm[i] = i;
	for (i = NBANK - 1; i > 0; i--) {
		j = rng_below(r, i + 1);
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	kmin = (total + cap - 1) / cap;
	kmax = (size_t)nsge < total ? (size_t)nsge : total;
	k = kmin + rng_below(r, kmax - kmin + 1);
	for (i = 0; i < k; i++) {
		rest = k - i - 1;
		lo = left > rest * cap ? left - rest * cap : 1;
		hi = left - rest < cap ? left - rest : cap;
		len = rest ? lo + rng_below(r, hi - lo + 1) : left;
		room = cap - len;
		m = rng_below(r, 4);
		if (i == 0 && k > 1)
			off = m < 2 ? room : rng_below(r, room + 1);
		else if (i > 0)
			off = m < 2 ? 0 : m == 2 ? room : rng_below(r, room + 1);
		else
			off = m == 0 ? 0 : m == 1 ? room :
			      rng_below(r, room + 1);
		g->s[i].bank = perm[i];
		g->s[i].off = off;
		g->s[i].len = len;
		left -= len;
	}
	g->n = k;
}

static size_t pick_roff(uint64_t *r, size_t len, size_t cap)
{
	size_t room = cap - len;

	switch (rng_below(r, 4)) {
	case 0:
		return room;		/* ends at the end of the MR */
	case 1:
		return 1 + rng_below(r, 7);
	default:
		return rng_below(r, room + 1);
	}
}

static void make_plan(const struct qctx *q, unsigned int k, struct plan *pl)
{
	uint64_t r = mix64(q->seed ^ mix64((uint64_t)q->idx << 40 | k));
	int mtu = 128 << q->mtu;
	struct xfer *x;
	int op;

	for (op = 0; op < NOPS; op++) {
		x = &pl->x[op];
		x->len = pick_len(&r, q->maxsize, k, mtu);
		/* QP 0 starts with MAXSIZE for every operation */
		if (k == 0 && q->idx == 0)
			x->len = q->maxsize;
		switch (op) {
		case OP_SEND:
		case OP_RSEND:
			split(&r, x->len, q->nsge, q->bankcap, &x->src);
			split(&r, x->len + rng_below(&r, RECV_EXTRA + 1),
			      q->nsge, q->bankcap, &x->dst);
			break;
		case OP_WRITE:
		case OP_WIMM:
			split(&r, x->len, q->nsge, q->bankcap, &x->src);
			x->roff = pick_roff(&r, x->len, q->rcap);
			x->imm = rng_next(&r);
			break;
		case OP_READ:
			split(&r, x->len, q->nsge, q->bankcap, &x->dst);
			x->roff = pick_roff(&r, x->len, q->rcap);
			break;
		}
	}
}

/* ---- reporting ----------------------------------------------------------- */

static void send_abort(struct qctx *q, int status, const char *txt);

static const char *role(void)
{
	return is_server ? "server" : "client";
}

/* A failure found by this QP: print it, stop everything, tell the peer. */
__printf(2, 3)
static int fail(struct qctx *q, const char *fmt, ...)
{
	char txt[400];
	int n;
	va_list ap;

	n = snprintf(txt, sizeof(txt), "%s qp %d iter %u: ", role(), q->idx,
		     q->iter);
	va_start(ap, fmt);
	vsnprintf(txt + n, sizeof(txt) - n, fmt, ap);
	va_end(ap);
	fprintf(stderr, PROG ": FAIL %s\n", txt);
	q->failed = true;
	atomic_store(&g_abort, 1);
	send_abort(q, ABORT_ERROR, txt);
	return -1;
}

/* Another QP failed: stop this one and tell the peer why. */
static int quit(struct qctx *q)
{
	q->failed = true;
	send_abort(q, ABORT_CASCADE, "another QP failed");
	return -1;
}

/* ---- TCP frames ---------------------------------------------------------- */

static void put32(uint8_t **p, uint32_t v)
{
	v = htobe32(v);
	memcpy(*p, &v, 4);
	*p += 4;
}

static void put64(uint8_t **p, uint64_t v)
{
	v = htobe64(v);
	memcpy(*p, &v, 8);
	*p += 8;
}

static uint32_t get32(const uint8_t **p)
{
	uint32_t v;

	memcpy(&v, *p, 4);
	*p += 4;
	return be32toh(v);
}

static uint64_t get64(const uint8_t **p)
{
	uint64_t v;

	memcpy(&v, *p, 8);
	*p += 8;
	return be64toh(v);
}

static int frame_send(struct qctx *q, uint32_t type, uint32_t iter,
		      uint32_t status, const void *body, size_t len)
{
	uint8_t f[MSG_LEN] = { 0 }, *p = f;
	size_t off = 0;
	ssize_t r;

	put32(&p, MAGIC);
	put32(&p, type);
	put32(&p, iter);
	put32(&p, status);
	if (len > MSG_LEN - 16)
		len = MSG_LEN - 16;
	if (len)
		memcpy(p, body, len);
	while (off < MSG_LEN) {
		r = send(q->fd, f + off, MSG_LEN - off, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		off += r;
	}
	return 0;
}

static void send_abort(struct qctx *q, int status, const char *txt)
{
	if (q->fd >= 0 && !q->peer_gone)
		frame_send(q, MSG_ABORT, q->iter, status, txt,
			   strlen(txt) + 1);
	q->peer_gone = true;
}

static int msg_send(struct qctx *q, uint32_t type, const void *body,
		    size_t len)
{
	if (frame_send(q, type, q->iter, 0, body, len))
		return fail(q, "sending a message to the peer: %s",
			    strerror(errno));
	return 0;
}

/*
 * Read one frame within limit seconds.  An ABORT from the peer ends the QP;
 * anything but the expected type for the current iteration is an error.
 * body (MSG_LEN - 16 bytes) may be NULL.
 */
static int msg_recv(struct qctx *q, uint32_t type, uint8_t *body,
		    int limit)
{
	uint8_t f[MSG_LEN];
	const uint8_t *p = f;
	size_t got = 0;
	double t0 = now();
	/* The device too: once it is gone the peer may never be heard. */
	struct pollfd pfd[2] = {
		{ .fd = q->fd, .events = POLLIN },
		{ .fd = ctx ? ctx->async_fd : -1, .events = POLLIN },
	};
	uint32_t magic, t, iter, status;
	ssize_t r;
	int n;

	while (got < MSG_LEN) {
		if (atomic_load(&g_abort))
			return quit(q);
		n = poll(pfd, 2, 250);
		if (n < 0 && errno != EINTR)
			return fail(q, "poll: %s", strerror(errno));
		if (dev_fatal(n > 0 ? pfd[1].revents : 0))
			return fail(q, "device fatal (removed?) while waiting for message type %u",
				    type);
		if (n <= 0 || !pfd[0].revents) {
			if (now() - t0 > limit)
				return fail(q, "no message from the peer for %d s (waiting for message type %u)",
					    limit, type);
			continue;
		}
		r = recv(q->fd, f + got, MSG_LEN - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			q->peer_gone = true;
			return fail(q, "the peer closed the connection%s%s",
				    r < 0 ? ": " : "",
				    r < 0 ? strerror(errno) : "");
		}
		got += r;
	}
	magic = get32(&p);
	t = get32(&p);
	iter = get32(&p);
	status = get32(&p);
	if (magic != MAGIC) {
		q->peer_gone = true;
		return fail(q, "bad message magic 0x%08x from the peer", magic);
	}
	if (t == MSG_ABORT) {
		q->peer_gone = true;
		q->failed = true;
		atomic_store(&g_abort, 1);
		f[MSG_LEN - 1] = 0;
		if (status == ABORT_ERROR)
			fprintf(stderr, PROG ": FAIL %s qp %d: peer reports: %s\n",
				role(), q->idx, (const char *)p);
		return -1;
	}
	/* A client run with -D may say BYE where an iteration would start. */
	if (t == MSG_BYE && type == MSG_C_READY && iter == q->iter)
		return 1;
	if (t != type || iter != q->iter)
		return fail(q, "protocol: got message type %u iter %u, expected type %u iter %u",
			    t, iter, type, q->iter);
	if (body)
		memcpy(body, p, MSG_LEN - 16);
	return 0;
}

/* ---- verbs objects ------------------------------------------------------- */

static int region_init(struct qctx *q, struct region *rg, size_t len,
		       size_t skew, int access)
{
	void *a;

	rg->len = len;
	rg->start = PAD + skew;
	rg->alloc_len = len + 2 * PAD + skew;
	if (opt.huge) {
		/* The MR then spans huge pages, from an offset inside one. */
		rg->alloc_len = (rg->alloc_len + HUGE_SZ - 1) & ~(HUGE_SZ - 1);
		a = mmap(NULL, rg->alloc_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (a == MAP_FAILED)
			return fail(q, "no huge pages for %zu bytes: %s",
				    rg->alloc_len, strerror(errno));
	} else if (posix_memalign(&a, 4096, rg->alloc_len)) {
		return fail(q, "out of memory (%zu bytes)", rg->alloc_len);
	}
	rg->alloc = a;
	rg->mr = ibv_reg_mr(pd, rg->alloc + rg->start, len, access);
	if (!rg->mr)
		return fail(q, "ibv_reg_mr(%zu bytes, access 0x%x): %s", len,
			    access, strerror(errno));
	return 0;
}

static void region_free(struct qctx *q, struct region *rg)
{
	if (rg->mr && ibv_dereg_mr(rg->mr) && !q->failed)
		fail(q, "ibv_dereg_mr failed");
	rg->mr = NULL;
	if (opt.huge && rg->alloc)
		munmap(rg->alloc, rg->alloc_len);
	else
		free(rg->alloc);
	rg->alloc = NULL;
}

/* MR start skew within a page: the first region is page aligned. */
static size_t region_skew(int op, int bank)
{
	return ((op * (NBANK + 1) + bank) * 1237) % PAD;
}

static int alloc_banks(struct qctx *q, const int *ops, int nops)
{
	int i, b, acc;

	for (i = 0; i < nops; i++) {
		/* destinations need local write; sources need nothing */
		acc = (is_server ? ops[i] == OP_SEND :
		       ops[i] == OP_READ || ops[i] == OP_RSEND) ?
		      IBV_ACCESS_LOCAL_WRITE : 0;
		for (b = 0; b < NBANK; b++)
			if (region_init(q, &q->bank[ops[i]][b], q->bankcap,
					region_skew(ops[i], b), acc))
				return -1;
	}
	return 0;
}

static int create_qp(struct qctx *q)
{
	struct ibv_qp_init_attr ia = { 0 };
	struct ibv_qp_attr a = { 0 };
	int sge = dattr.max_sge < NBANK ? dattr.max_sge : NBANK;

	q->ch = ibv_create_comp_channel(ctx);
	if (!q->ch)
		return fail(q, "ibv_create_comp_channel: %s", strerror(errno));
	q->cq = ibv_create_cq(ctx, 32, q, q->ch, 0);
	if (!q->cq)
		return fail(q, "ibv_create_cq: %s", strerror(errno));
	ia.send_cq = q->cq;
	ia.recv_cq = q->cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = sge;
	ia.cap.max_recv_sge = sge;
	q->qp = ibv_create_qp(pd, &ia);
	if (!q->qp)
		return fail(q, "ibv_create_qp: %s", strerror(errno));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = opt.ib_port;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return fail(q, "modify QP to INIT: %s", strerror(errno));
	/* Even QPs start close to the PSN wrap, odd ones anywhere. */
	q->psn = mix64(opt.seed + 77 + q->idx) & 0xffffff;
	if (!(q->idx & 1))
		q->psn = 0xffffff - (q->psn & 0x3ff);
	q->scratch = malloc(CHUNK);
	if (!q->scratch)
		return fail(q, "out of memory");
	return 0;
}

static int connect_qp(struct qctx *q)
{
	struct ibv_qp_attr a = { 0 };

	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = q->mtu;
	a.dest_qp_num = q->rqpn;
	a.rq_psn = q->rpsn;
	a.max_dest_rd_atomic = q->rd_atom;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = q->rgid;
	a.ah_attr.grh.sgid_index = opt.gid_idx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = opt.ib_port;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return fail(q, "modify QP to RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = opt.qp_timeout;
	a.retry_cnt = opt.retry_cnt;
	a.rnr_retry = 7;
	a.sq_psn = q->psn;
	a.max_rd_atomic = q->rd_atom;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		return fail(q, "modify QP to RTS: %s", strerror(errno));
	return 0;
}

static void destroy_qctx(struct qctx *q)
{
	int op, b;

	if (q->qp && ibv_destroy_qp(q->qp) && !q->failed)
		fail(q, "ibv_destroy_qp failed");
	for (op = 0; op < NOPS; op++) {
		for (b = 0; b < NBANK; b++)
			region_free(q, &q->bank[op][b]);
		region_free(q, &q->single[op]);
	}
	region_free(q, &q->atom);
	if (q->cq && ibv_destroy_cq(q->cq) && !q->failed)
		fail(q, "ibv_destroy_cq failed");
	if (q->ch && ibv_destroy_comp_channel(q->ch) && !q->failed)
		fail(q, "ibv_destroy_comp_channel failed");
	free(q->scratch);
	if (q->fd >= 0 && (q->failed || atomic_load(&g_abort))) {
		/*
		 * Reset, do not linger: after a failure the path to the peer
		 * may be gone (a link deleted under the test), and an orphaned
		 * socket retrying its FIN for minutes keeps its network
		 * namespace alive after the namespace is deleted.
		 */
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(q->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
}

/* ---- spans --------------------------------------------------------------- */

static uint8_t *span_ptr(const struct span *s)
{
	return s->rg->alloc + s->rg->start + s->off;
}

static int sgl_spans(struct qctx *q, const struct sgl *g, int op,
		     unsigned int k, struct span *s)
{
	int i;

	for (i = 0; i < g->n; i++) {
		s[i].rg = &q->bank[op][g->s[i].bank];
		s[i].off = g->s[i].off;
		s[i].len = g->s[i].len;
		s[i].bg = bg_base(q, k, op, g->s[i].bank);
	}
	return g->n;
}

static void single_span(struct qctx *q, int op, unsigned int k, size_t off,
			size_t len, struct span *s)
{
	s->rg = &q->single[op];
	s->off = off;
	s->len = len;
	s->bg = bg_base(q, k, op, NBANK);
}

/* Background over the spans and their guards (alloc offsets as stream). */
static void spans_bg_fill(const struct span *s, int n)
{
	size_t a;
	int i;

	for (i = 0; i < n; i++) {
		a = s[i].rg->start + s[i].off - GUARD;
		pat_fill(s[i].bg, a, s[i].rg->alloc + a, s[i].len + 2 * GUARD);
	}
}

/* The message pattern, consecutive over the spans. */
static void spans_pat_fill(const struct span *s, int n, uint64_t base)
{
	uint64_t o = 0;
	int i;

	for (i = 0; i < n; i++) {
		pat_fill(base, o, span_ptr(&s[i]), s[i].len);
		o += s[i].len;
	}
}

/*
 * The first datalen bytes over the spans must be the message pattern, the
 * rest of the spans and GUARD bytes on each side of each span the
 * background.
 */
static int spans_verify(struct qctx *q, const char *what,
			const struct span *s, int n, size_t datalen,
			uint64_t base)
{
	const uint8_t *a;
	size_t ao, d, bad, o = 0;
	int i;

	for (i = 0; i < n; i++) {
		a = s[i].rg->alloc;
		ao = s[i].rg->start + s[i].off;
		d = datalen - o < s[i].len ? datalen - o : s[i].len;

		bad = pat_find(q->scratch, s[i].bg, ao - GUARD, a + ao - GUARD,
			       GUARD);
		if (bad != SIZE_MAX)
			return fail(q, "%s: guard byte %zu before element %d (MR offset %zu, %zu bytes) was overwritten: expected 0x%02x, got 0x%02x",
				    what, GUARD - bad, i, s[i].off, s[i].len,
				    pat_byte(s[i].bg, ao - GUARD + bad),
				    a[ao - GUARD + bad]);
		bad = pat_find(q->scratch, base, o, a + ao, d);
		if (bad != SIZE_MAX)
			return fail(q, "%s: first bad byte at message offset %zu of %zu (element %d, MR offset %zu): expected 0x%02x, got 0x%02x",
				    what, o + bad, datalen, i, s[i].off + bad,
				    pat_byte(base, o + bad), a[ao + bad]);
		bad = pat_find(q->scratch, s[i].bg, ao + d, a + ao + d,
			       s[i].len - d + GUARD);
		if (bad != SIZE_MAX && bad < s[i].len - d)
			return fail(q, "%s: receive space past the %zu-byte message overwritten at element %d MR offset %zu: expected 0x%02x, got 0x%02x",
				    what, datalen, i, s[i].off + d + bad,
				    pat_byte(s[i].bg, ao + d + bad),
				    a[ao + d + bad]);
		if (bad != SIZE_MAX)
			return fail(q, "%s: guard byte %zu after element %d (MR offset %zu, %zu bytes) was overwritten: expected 0x%02x, got 0x%02x",
				    what, bad - (s[i].len - d), i, s[i].off,
				    s[i].len, pat_byte(s[i].bg, ao + d + bad),
				    a[ao + d + bad]);
		o += d;
	}
	return 0;
}

/* ---- work requests and completions -------------------------------------- */

static uint64_t wrid(unsigned int k, int op, bool recv)
{
	return WRID_TAG | (uint64_t)k << 8 | (recv ? WRID_RECV : 0) | op;
}

static void fill_sges(const struct span *s, int n, struct ibv_sge *sge)
{
	int i;

	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)span_ptr(&s[i]);
		sge[i].length = s[i].len;
		sge[i].lkey = s[i].rg->mr->lkey;
	}
}

static int post_recv(struct qctx *q, int op, const struct span *s, int n)
{
	struct ibv_sge sge[NBANK];
	struct ibv_recv_wr wr = { 0 }, *bad;
	int ret;

	fill_sges(s, n, sge);
	wr.wr_id = wrid(q->iter, op, true);
	wr.sg_list = n ? sge : NULL;
	wr.num_sge = n;
	ret = ibv_post_recv(q->qp, &wr, &bad);
	if (ret)
		return fail(q, "ibv_post_recv (%s): %s", op_name[op],
			    strerror(ret));
	return 0;
}

/*
 * Whether the device is fatal; @revents, the async event fd's poll
 * result: if set, take its pending events first (the fd is non-blocking:
 * the QPs' threads share it).  A removed device completes nothing:
 * waiting for the timeout then only delays the failure.
 */
static bool dev_fatal(short revents)
{
	struct ibv_async_event ev;

	if (!revents)
		return atomic_load(&g_dev_fatal);
	for (;;) {
		errno = 0;
		if (ibv_get_async_event(ctx, &ev))
			break;
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			atomic_store(&g_dev_fatal, 1);
		ibv_ack_async_event(&ev);
	}
	/* A read that fails otherwise (-EIO, EOF): the queue is closed. */
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		atomic_store(&g_dev_fatal, 1);
	return atomic_load(&g_dev_fatal);
}

/*
 * Next completion within the timeout.  The socket is watched as well: the
 * peer sends nothing while we wait for completions, so anything arriving
 * there is an ABORT or a closed connection.  So is the device's async
 * event fd, for its removal.
 */
static int cq_next(struct qctx *q, struct ibv_wc *wc, const char *waiting)
{
	struct pollfd pfd[3];
	struct ibv_cq *cq;
	double t0 = now();
	void *cctx;
	int n;

	for (;;) {
		n = ibv_poll_cq(q->cq, 1, wc);
		if (n < 0)
			return fail(q, "ibv_poll_cq: %d", n);
		if (n == 1)
			return 0;
		if (!q->armed) {
			if (ibv_req_notify_cq(q->cq, 0))
				return fail(q, "ibv_req_notify_cq failed");
			q->armed = true;
			continue;
		}
		if (atomic_load(&g_abort))
			return quit(q);
		pfd[0] = (struct pollfd){ .fd = q->ch->fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = q->fd, .events = POLLIN };
		pfd[2] = (struct pollfd){ .fd = ctx->async_fd, .events = POLLIN };
		n = poll(pfd, 3, 250);
		if (n < 0 && errno != EINTR)
			return fail(q, "poll: %s", strerror(errno));
		if (dev_fatal(n > 0 ? pfd[2].revents : 0))
			return fail(q, "device fatal (removed?) while waiting for %s",
				    waiting);
		if (n > 0 && pfd[1].revents)
			return msg_recv(q, 0, NULL, 1) ? -1 :
			       fail(q, "protocol: unexpected message");
		if (n > 0 && pfd[0].revents) {
			if (ibv_get_cq_event(q->ch, &cq, &cctx))
				return fail(q, "ibv_get_cq_event failed");
			ibv_ack_cq_events(cq, 1);
			q->armed = false;
			continue;
		}
		if (now() - t0 > opt.timeout)
			return fail(q, "no completion for %d s while waiting for %s (data path stuck?)",
				    opt.timeout, waiting);
	}
}

/* Wait for these send and receive completions, in this order per queue. */
static int wait_cqes(struct qctx *q, const struct expect *sq, int nsq,
		     const struct expect *rq, int nrq)
{
	const struct expect *e;
	struct ibv_wc wc;
	int isq = 0, irq = 0;
	bool recv;

	while (isq < nsq || irq < nrq) {
		if (cq_next(q, &wc, isq < nsq ? sq[isq].name : rq[irq].name))
			return -1;
		if ((wc.wr_id & ~0xffffffffffull) != WRID_TAG)
			return fail(q, "completion with unknown wr_id 0x%" PRIx64
				    " (status %s)", (uint64_t)wc.wr_id,
				    ibv_wc_status_str(wc.status));
		recv = wc.wr_id & WRID_RECV;
		if (recv ? irq >= nrq : isq >= nsq)
			return fail(q, "unexpected extra %s completion, wr_id 0x%" PRIx64 " status %s",
				    recv ? "receive" : "send",
				    (uint64_t)wc.wr_id,
				    ibv_wc_status_str(wc.status));
		e = recv ? &rq[irq++] : &sq[isq++];
		if (wc.status != IBV_WC_SUCCESS)
			return fail(q, "%s completed with status %s (%d), vendor_err 0x%x, wr_id 0x%"
				    PRIx64,
				    e->name, ibv_wc_status_str(wc.status),
				    wc.status, wc.vendor_err,
				    (uint64_t)wc.wr_id);
		if (wc.wr_id != e->wr_id)
			return fail(q, "%s: completion wr_id 0x%" PRIx64 ", expected 0x%" PRIx64 " (wrong or out of order)",
				    e->name, (uint64_t)wc.wr_id, e->wr_id);
		if (wc.opcode != e->opcode)
			return fail(q, "%s: completion opcode %d, expected %d",
				    e->name, wc.opcode, e->opcode);
		if (wc.qp_num != q->qp->qp_num)
			return fail(q, "%s: completion qp_num 0x%x, expected 0x%x",
				    e->name, wc.qp_num, q->qp->qp_num);
		if (e->check_len && wc.byte_len != e->byte_len)
			return fail(q, "%s: completion byte_len %u, expected %u",
				    e->name, wc.byte_len, e->byte_len);
		if (!recv)
			continue;
		if (!!(wc.wc_flags & IBV_WC_WITH_IMM) != e->imm)
			return fail(q, "%s: completion IBV_WC_WITH_IMM flag %s",
				    e->name, e->imm ? "missing" : "set");
		if (e->imm && be32toh(wc.imm_data) != e->imm_data)
			return fail(q, "%s: completion imm_data 0x%08x, expected 0x%08x",
				    e->name, be32toh(wc.imm_data), e->imm_data);
	}
	return 0;
}

/* ---- iterations ---------------------------------------------------------- */

static void count(struct qctx *q, const struct plan *pl)
{
	int op;

	if (q->ops & OPF_ATOMIC)
		q->atomics += NATOM + 1;

	for (op = 0; op < NOPS; op++) {
		if (!(q->ops & 1u << op))
			continue;
		q->bytes += pl->x[op].len;
		if (op == OP_SEND || op == OP_RSEND)
			q->sends++;
		else if (op == OP_READ)
			q->reads++;
		else
			q->writes++;
		if (op == OP_WIMM)
			q->wimms++;
	}
}

/* Slot @i of the client's fetched values / the server's counters. */
static volatile uint64_t *atom_slot(struct qctx *q, int i)
{
	return (volatile uint64_t *)(q->atom.alloc + q->atom.start) + i;
}

/* Append iteration @k's atomics to the chain; the new chain length. */
static int atomic_wrs(struct qctx *q, unsigned int k, struct ibv_send_wr *wr,
		      struct ibv_sge (*sge)[NBANK], struct expect *sq, int n)
{
	int i;

	for (i = 0; i <= NATOM; i++, n++) {
		*atom_slot(q, i) = 0xdeadbeefdeadbeefull;
		sge[n][0].addr = (uintptr_t)atom_slot(q, i);
		sge[n][0].length = 8;
		sge[n][0].lkey = q->atom.mr->lkey;
		memset(&wr[n], 0, sizeof(wr[n]));
		wr[n].wr_id = wrid(k, 0x40 + i, false);
		wr[n].sg_list = sge[n];
		wr[n].num_sge = 1;
		wr[n].send_flags = IBV_SEND_SIGNALED;
		if (i < NATOM) {
			wr[n].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr[n].wr.atomic.remote_addr = q->atom_raddr;
			wr[n].wr.atomic.compare_add = ATOM_INC;
		} else {
			/* counter 1 counts iterations: k -> k + 1 */
			wr[n].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			wr[n].wr.atomic.remote_addr = q->atom_raddr + 8;
			wr[n].wr.atomic.compare_add = k;
			wr[n].wr.atomic.swap = k + 1;
		}
		wr[n].wr.atomic.rkey = q->atom_rkey;
		if (n)
			wr[n - 1].next = &wr[n];
		sq[n] = (struct expect){ .wr_id = wr[n].wr_id,
					 .opcode = i < NATOM ?
						   IBV_WC_FETCH_ADD :
						   IBV_WC_COMP_SWAP,
					 .name = i < NATOM ? "FETCH_ADD" :
							     "CMP_SWAP" };
	}
	return n;
}

static int atomic_check_fetched(struct qctx *q, unsigned int k)
{
	uint64_t want, got;
	int i;

	for (i = 0; i <= NATOM; i++) {
		want = i < NATOM ? ((uint64_t)k * NATOM + i) * ATOM_INC : k;
		got = *atom_slot(q, i);
		if (got != want)
			return fail(q, "%s %d of iteration %u fetched 0x%" PRIx64
				    ", expected 0x%" PRIx64,
				    i < NATOM ? "FETCH_ADD" : "CMP_SWAP", i, k,
				    got, want);
	}
	return 0;
}

static int atomic_check_counters(struct qctx *q, unsigned int k)
{
	uint64_t add = *atom_slot(q, 0), cas = *atom_slot(q, 1);
	uint64_t want = (uint64_t)(k + 1) * NATOM * ATOM_INC;

	if (add != want || cas != k + 1)
		return fail(q, "after iteration %u the FETCH_ADD counter is 0x%"
			    PRIx64 " (expected 0x%" PRIx64
			    ") and the CMP_SWAP one %" PRIu64 " (expected %u)",
			    k, add, want, cas, k + 1);
	return 0;
}

static int client_iter(struct qctx *q, unsigned int k)
{
	static const enum ibv_wr_opcode wop[OP_RSEND] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ,
	};
	static const enum ibv_wc_opcode cop[OP_RSEND] = {
		IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
		IBV_WC_RDMA_READ,
	};
	struct span sp[NOPS][NBANK];
	struct ibv_sge sge[OP_RSEND + NATOM + 1][NBANK];
	struct ibv_send_wr wr[OP_RSEND + NATOM + 1], *bad;
	struct expect sq[OP_RSEND + NATOM + 1], rq[1];
	const struct xfer *x;
	struct plan pl;
	int nsp[NOPS], op, nsq = 0, nrq = 0, ret;
	bool in;

	make_plan(q, k, &pl);
	for (op = 0; op < NOPS; op++) {
		if (!(q->ops & 1u << op))
			continue;
		x = &pl.x[op];
		/* READ data and the server's SEND land here */
		in = op == OP_READ || op == OP_RSEND;
		nsp[op] = sgl_spans(q, in ? &x->dst : &x->src, op, k, sp[op]);
		if (in)
			spans_bg_fill(sp[op], nsp[op]);
		else
			spans_pat_fill(sp[op], nsp[op], pat_base(q, k, op));
	}
	if (q->ops & 1u << OP_RSEND) {
		if (post_recv(q, OP_RSEND, sp[OP_RSEND], nsp[OP_RSEND]))
			return -1;
		rq[nrq++] = (struct expect){
			.wr_id = wrid(k, OP_RSEND, true),
			.opcode = IBV_WC_RECV, .check_len = true,
			.byte_len = pl.x[OP_RSEND].len,
			.name = op_name[OP_RSEND] };
	}
	if (msg_send(q, MSG_C_READY, NULL, 0) ||
	    msg_recv(q, MSG_S_READY, NULL, opt.timeout))
		return -1;

	/* One chain: SEND, WRITE, WRITE WITH IMM, READ. */
	memset(wr, 0, sizeof(wr));
	for (op = 0; op < OP_RSEND; op++) {
		if (!(q->ops & 1u << op))
			continue;
		x = &pl.x[op];
		fill_sges(sp[op], nsp[op], sge[nsq]);
		wr[nsq].wr_id = wrid(k, op, false);
		wr[nsq].sg_list = sge[nsq];
		wr[nsq].num_sge = nsp[op];
		wr[nsq].opcode = wop[op];
		wr[nsq].send_flags = IBV_SEND_SIGNALED;
		if (op != OP_SEND) {
			wr[nsq].wr.rdma.remote_addr = q->raddr[op] + x->roff;
			wr[nsq].wr.rdma.rkey = q->rkey[op];
		}
		if (op == OP_WIMM)
			wr[nsq].imm_data = htobe32(x->imm);
		if (nsq)
			wr[nsq - 1].next = &wr[nsq];
		sq[nsq] = (struct expect){ .wr_id = wr[nsq].wr_id,
					   .opcode = cop[op],
					   .name = op_name[op] };
		nsq++;
	}
	if (q->ops & OPF_ATOMIC)
		nsq = atomic_wrs(q, k, wr, sge, sq, nsq);
	if (nsq) {
		ret = ibv_post_send(q->qp, wr, &bad);
		if (ret)
			return fail(q, "ibv_post_send: %s (at work request %d of %d)",
				    strerror(ret), (int)(bad - wr) + 1, nsq);
	}
	if (wait_cqes(q, sq, nsq, rq, nrq))
		return -1;
	if ((q->ops & OPF_ATOMIC) && atomic_check_fetched(q, k))
		return -1;
	for (op = OP_READ; op <= OP_RSEND; op++)
		if ((q->ops & 1u << op) &&
		    spans_verify(q, op_name[op], sp[op], nsp[op], pl.x[op].len,
				 pat_base(q, k, op)))
			return -1;
	if (msg_send(q, MSG_DONE, NULL, 0) ||
	    msg_recv(q, MSG_RESULT, NULL, opt.timeout + 15))
		return -1;
	if (opt.verbose)
		printf(PROG ": qp %d iter %u ok: send %zu write %zu write_imm %zu read %zu recv %zu\n",
		       q->idx, k, pl.x[OP_SEND].len, pl.x[OP_WRITE].len,
		       pl.x[OP_WIMM].len, pl.x[OP_READ].len,
		       pl.x[OP_RSEND].len);
	count(q, &pl);
	return 0;
}

static int server_iter(struct qctx *q, unsigned int k)
{
	struct span sp[NOPS][NBANK];
	struct ibv_sge sge[NBANK];
	struct ibv_send_wr wr = { 0 }, *bad;
	struct expect sq[1], rq[2];
	const struct xfer *x;
	struct plan pl;
	int nsp[NOPS], op, nsq = 0, nrq = 0, ret;

	make_plan(q, k, &pl);
	ret = msg_recv(q, MSG_C_READY, NULL, opt.timeout + 15);
	if (ret)
		return ret;	/* 1: the client ended the run early */
	for (op = 0; op < NOPS; op++) {
		if (!(q->ops & 1u << op))
			continue;
		x = &pl.x[op];
		if (op == OP_SEND || op == OP_RSEND) {
			nsp[op] = sgl_spans(q, op == OP_SEND ? &x->dst : &x->src,
					    op, k, sp[op]);
		} else {
			single_span(q, op, k, x->roff, x->len, sp[op]);
			nsp[op] = 1;
		}
		/* the READ source and our SEND hold the pattern */
		if (op != OP_RSEND)
			spans_bg_fill(sp[op], nsp[op]);
		if (op == OP_READ || op == OP_RSEND)
			spans_pat_fill(sp[op], nsp[op], pat_base(q, k, op));
	}
	if (q->ops & 1u << OP_SEND) {
		if (post_recv(q, OP_SEND, sp[OP_SEND], nsp[OP_SEND]))
			return -1;
		rq[nrq++] = (struct expect){
			.wr_id = wrid(k, OP_SEND, true),
			.opcode = IBV_WC_RECV, .check_len = true,
			.byte_len = pl.x[OP_SEND].len,
			.name = op_name[OP_SEND] };
	}
	if (q->ops & 1u << OP_WIMM) {
		/* RDMA WRITE WITH IMM consumes a receive with no buffer */
		if (post_recv(q, OP_WIMM, NULL, 0))
			return -1;
		rq[nrq++] = (struct expect){
			.wr_id = wrid(k, OP_WIMM, true),
			.opcode = IBV_WC_RECV_RDMA_WITH_IMM,
			.check_len = true, .byte_len = pl.x[OP_WIMM].len,
			.imm = true, .imm_data = pl.x[OP_WIMM].imm,
			.name = op_name[OP_WIMM] };
	}
	if (q->ops & 1u << OP_RSEND) {
		fill_sges(sp[OP_RSEND], nsp[OP_RSEND], sge);
		wr.wr_id = wrid(k, OP_RSEND, false);
		wr.sg_list = sge;
		wr.num_sge = nsp[OP_RSEND];
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		ret = ibv_post_send(q->qp, &wr, &bad);
		if (ret)
			return fail(q, "ibv_post_send: %s", strerror(ret));
		sq[nsq++] = (struct expect){ .wr_id = wr.wr_id,
					     .opcode = IBV_WC_SEND,
					     .name = op_name[OP_RSEND] };
	}
	if (msg_send(q, MSG_S_READY, NULL, 0))
		return -1;

	/*
	 * The client reports DONE once its operations completed, so the
	 * receive completions must be there (or arrive) by now.
	 */
	if (msg_recv(q, MSG_DONE, NULL, opt.timeout + 15) ||
	    wait_cqes(q, sq, nsq, rq, nrq))
		return -1;
	for (op = 0; op < OP_RSEND; op++)
		if ((q->ops & 1u << op) &&
		    spans_verify(q, op == OP_READ ? "RDMA READ source" :
				 op_name[op], sp[op], nsp[op], pl.x[op].len,
				 pat_base(q, k, op)))
			return -1;
	if ((q->ops & OPF_ATOMIC) && atomic_check_counters(q, k))
		return -1;
	if (msg_send(q, MSG_RESULT, NULL, 0))
		return -1;
	count(q, &pl);
	return 0;
}

/* ---- per-QP threads ------------------------------------------------------ */

static void set_sizes(struct qctx *q)
{
	q->bankcap = (q->maxsize + RECV_EXTRA + q->nsge - 1) / q->nsge + 4096;
	q->rcap = q->maxsize + ROFF_SLACK;
}

static int run_iters(struct qctx *q)
{
	double t0 = now();
	unsigned int k;
	int ret;

	for (k = 0; k < q->iters; k++) {
		q->iter = k;
		if (!is_server && opt.duration && now() - t0 >= opt.duration)
			break;
		if (!is_server && opt.stop_file && !access(opt.stop_file, F_OK))
			break;
		ret = is_server ? server_iter(q, k) : client_iter(q, k);
		if (ret == 1) {
			/* The client's BYE came instead of iteration k. */
			return msg_send(q, MSG_BYE, NULL, 0);
		}
		if (ret)
			return -1;
	}
	q->iter = k;
	if (is_server)
		return msg_recv(q, MSG_BYE, NULL, opt.timeout + 15) ||
		       msg_send(q, MSG_BYE, NULL, 0);
	return msg_send(q, MSG_BYE, NULL, 0) ||
	       msg_recv(q, MSG_BYE, NULL, opt.timeout + 15);
}

static int tcp_connect(struct qctx *q)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	char port[16];
	double t0 = now();
	int fd = -1, one = 1, ret;

	snprintf(port, sizeof(port), "%d", opt.tcp_port);
	ret = getaddrinfo(opt.host, port, &hints, &res);
	if (ret)
		return fail(q, "%s: %s", opt.host, gai_strerror(ret));
	/* The server may still be starting: retry for a while. */
	while (fd < 0 && now() - t0 < 10) {
		for (ai = res; ai; ai = ai->ai_next) {
			fd = socket(ai->ai_family, ai->ai_socktype,
				    ai->ai_protocol);
			if (fd < 0)
				continue;
			if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
				break;
			close(fd);
			fd = -1;
		}
		if (fd < 0)
			usleep(200000);
	}
	freeaddrinfo(res);
	if (fd < 0)
		return fail(q, "cannot connect to %s port %d: %s", opt.host,
			    opt.tcp_port, strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	q->fd = fd;
	return 0;
}

static const int client_ops[NOPS] = {
	OP_SEND, OP_WRITE, OP_WIMM, OP_READ, OP_RSEND,
};

static void *client_thread(void *arg)
{
	struct qctx *q = arg;
	uint8_t body[MSG_LEN], *p = body;
	const uint8_t *r = body;
	int i;

	if (tcp_connect(q) || create_qp(q))
		goto out;
	put32(&p, PROTO_VERSION);
	put32(&p, q->idx);
	put32(&p, q->nqps);
	put32(&p, q->iters);
	put64(&p, q->seed);
	put64(&p, q->maxsize);
	put32(&p, q->qp->qp_num);
	put32(&p, q->psn);
	memcpy(p, lgid.raw, 16);
	p += 16;
	put32(&p, pattr.active_mtu);
	put32(&p, dattr.max_sge);
	put32(&p, dattr.max_sge_rd);
	put32(&p, dattr.max_qp_rd_atom);
	put32(&p, q->ops);
	if (msg_send(q, MSG_HELLO, body, p - body) ||
	    msg_recv(q, MSG_HELLO_ACK, body, opt.timeout + 15))
		goto out;
	q->rqpn = get32(&r);
	q->rpsn = get32(&r);
	memcpy(q->rgid.raw, r, 16);
	r += 16;
	q->mtu = get32(&r);
	q->nsge = get32(&r);
	q->rd_atom = get32(&r);
	for (i = OP_WRITE; i <= OP_READ; i++) {
		q->raddr[i] = get64(&r);
		q->rkey[i] = get32(&r);
	}
	q->atom_raddr = get64(&r);
	q->atom_rkey = get32(&r);
	set_sizes(q);
	if (alloc_banks(q, client_ops, NOPS) ||
	    region_init(q, &q->atom, 8 * (NATOM + 1), 0,
			IBV_ACCESS_LOCAL_WRITE) ||
	    connect_qp(q))
		goto out;
	run_iters(q);
out:
	destroy_qctx(q);
	return NULL;
}

static int min_i(int a, int b)
{
	return a < b ? a : b;
}

/* Server side of one QP; q->hello holds the client's HELLO. */
static void *server_thread(void *arg)
{
	struct qctx *q = arg;
	uint8_t body[MSG_LEN], *p = body;
	const uint8_t *r = q->hello + 32;	/* past version .. maxsize */
	uint32_t cmtu, csge, csge_rd, crd;
	int i, acc;

	q->rqpn = get32(&r);
	q->rpsn = get32(&r);
	memcpy(q->rgid.raw, r, 16);
	r += 16;
	cmtu = get32(&r);
	csge = get32(&r);
	csge_rd = get32(&r);
	crd = get32(&r);
	q->ops = get32(&r) & (ALL_OPS | OPF_ATOMIC);
	if (!q->ops) {
		fail(q, "no operations requested");
		goto out;
	}
	q->mtu = min_i(cmtu, pattr.active_mtu);
	q->nsge = min_i(min_i(NBANK, csge), min_i(dattr.max_sge, csge_rd));
	q->rd_atom = min_i(min_i(16, crd), dattr.max_qp_rd_atom);
	if (q->nsge < 1)
		q->nsge = 1;
	if (q->rd_atom < 1)
		q->rd_atom = 1;
	set_sizes(q);
	if (create_qp(q))
		goto out;
	for (i = OP_WRITE; i <= OP_READ; i++) {
		acc = i == OP_READ ? IBV_ACCESS_REMOTE_READ :
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
		if (region_init(q, &q->single[i], q->rcap,
				region_skew(i, NBANK), acc))
			goto out;
	}
	if (region_init(q, &q->atom, 16, 0, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_ATOMIC))
		goto out;
	*atom_slot(q, 0) = 0;
	*atom_slot(q, 1) = 0;
	if (alloc_banks(q, (const int[]){ OP_SEND, OP_RSEND }, 2) ||
	    connect_qp(q))
		goto out;
	put32(&p, q->qp->qp_num);
	put32(&p, q->psn);
	memcpy(p, lgid.raw, 16);
	p += 16;
	put32(&p, q->mtu);
	put32(&p, q->nsge);
	put32(&p, q->rd_atom);
	for (i = OP_WRITE; i <= OP_READ; i++) {
		put64(&p, (uintptr_t)q->single[i].mr->addr);
		put32(&p, q->single[i].mr->rkey);
	}
	put64(&p, (uintptr_t)q->atom.mr->addr);
	put32(&p, q->atom.mr->rkey);
	if (msg_send(q, MSG_HELLO_ACK, body, p - body))
		goto out;
	run_iters(q);
out:
	destroy_qctx(q);
	return NULL;
}

/* ---- main ---------------------------------------------------------------- */

static struct qctx qs[MAX_QPS];

static int open_device(void)
{
	struct ibv_device **list, *dev = NULL;
	int n, i;

	list = ibv_get_device_list(&n);
	if (!list || !n) {
		fprintf(stderr, PROG ": no RDMA devices\n");
		return -1;
	}
	for (i = 0; i < n && !dev; i++)
		if (!opt.dev || !strcmp(ibv_get_device_name(list[i]), opt.dev))
			dev = list[i];
	if (!dev) {
		fprintf(stderr, PROG ": device %s not found\n", opt.dev);
		return -1;
	}
	opt.dev = strdup(ibv_get_device_name(dev));
	ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, PROG ": cannot open %s: %s\n", opt.dev,
			strerror(errno));
		return -1;
	}
	/* Shared by the QPs' threads: none may block in its read. */
	if (fcntl(ctx->async_fd, F_SETFL,
		  fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK) < 0) {
		fprintf(stderr, PROG ": async fd: %s\n", strerror(errno));
		return -1;
	}
	if (ibv_query_device(ctx, &dattr) ||
	    ibv_query_port(ctx, opt.ib_port, &pattr)) {
		fprintf(stderr, PROG ": cannot query %s port %d\n", opt.dev,
			opt.ib_port);
		return -1;
	}
	if (pattr.state != IBV_PORT_ACTIVE)
		fprintf(stderr, PROG ": warning: %s port %d is not ACTIVE\n",
			opt.dev, opt.ib_port);
	if (ibv_query_gid(ctx, opt.ib_port, opt.gid_idx, &lgid)) {
		fprintf(stderr, PROG ": cannot read GID %d of %s\n",
			opt.gid_idx, opt.dev);
		return -1;
	}
	if (!memcmp(lgid.raw, zero_gid.raw, 16)) {
		fprintf(stderr, PROG ": GID %d of %s is empty\n", opt.gid_idx,
			opt.dev);
		return -1;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fprintf(stderr, PROG ": ibv_alloc_pd: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static void help(void)
{
	fprintf(stderr,
		"usage: " PROG " -d DEV -g GIDIDX [options]              (server)\n"
		"       " PROG " -d DEV -g GIDIDX [options] SERVER_ADDR  (client)\n"
		"  -d DEV      RDMA device (default: the first one)\n"
		"  -i PORT     device port (default 1)\n"
		"  -g GIDIDX   local GID index (required)\n"
		"  -p PORT     TCP port (default %d)\n"
		"  -q QPS      RC QPs at once, one thread each (default 4, max %d)\n"
		"  -n ITERS    iterations per QP (default %d)\n"
		"  -s SEED     PRNG seed (default: from the clock)\n"
		"  -m MAXSIZE  largest message, K/M suffixes (default 4M)\n"
		"  -t SECS     fail after SECS without progress (default 60)\n"
		"  -o OPS      operations, comma-separated (default all):\n"
		"              send write imm read rsend (server to client SEND),\n"
		"              and atomic (FETCH_ADD/CMP_SWAP counters, not in the default)\n"
		"  -D SECS     client: start no iteration after SECS seconds\n"
		"  -F FILE     client: start no iteration once FILE exists\n"
		"  -R N        this side's QPs' retry_cnt (default 7)\n"
		"  -T N        this side's QPs' local ACK timeout, 4.096 us * 2^N (default 17)\n"
		"  -H          put this side's buffers on 2 MiB huge pages (MAP_HUGETLB)\n"
		"  -v          print every iteration\n"
		"The client's -q -n -s -m -o apply to both sides.\n",
		DEF_PORT, MAX_QPS, DEF_ITERS);
	exit(2);
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || !v || v > (1ull << 30))
		help();
	return v;
}

static unsigned int parse_ops(char *s)
{
	unsigned int m = 0;
	char *t;
	int op;

	for (t = strtok(s, ","); t; t = strtok(NULL, ",")) {
		for (op = 0; op < NOPS; op++)
			if (!strcmp(t, op_opt[op]))
				break;
		if (op == NOPS && strcmp(t, "atomic"))
			help();
		m |= 1u << op;	/* op == NOPS: OPF_ATOMIC */
	}
	if (!m)
		help();
	return m;
}

static int parse_int(const char *s, int min, int max)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (*end || end == s || v < min || v > max)
		help();
	return v;
}

/* Server: accept one connection per QP, each with its HELLO. */
static int serve(int *nq)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
				   .sin6_port = htons(opt.tcp_port) };
	struct qctx tmp = { .idx = -1, .fd = -1 };
	int lfd, one = 1, zero = 0, want = -1, got = 0, fd, n;
	struct pollfd pfd;
	const uint8_t *r;
	uint32_t ver, idx, nqps, iters;
	uint64_t seed, maxsize;
	struct qctx *q;

	lfd = socket(AF_INET6, SOCK_STREAM, 0);
	if (lfd < 0) {
		perror(PROG ": socket");
		return -1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	sa.sin6_addr = in6addr_any;
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lfd, MAX_QPS)) {
		perror(PROG ": bind/listen");
		return -1;
	}
	pfd = (struct pollfd){ .fd = lfd, .events = POLLIN };
	while (want < 0 || got < want) {
		if (atomic_load(&g_abort))
			break;
		n = poll(&pfd, 1, opt.timeout * 1000);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, PROG ": FAIL server: %s\n",
				want < 0 ? "no client connected" :
				"not all QP connections arrived");
			atomic_store(&g_abort, 1);
			break;
		}
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		tmp.fd = fd;
		tmp.peer_gone = false;
		if (msg_recv(&tmp, MSG_HELLO, tmp.hello, opt.timeout)) {
			close(fd);
			break;
		}
		r = tmp.hello;
		ver = get32(&r);
		idx = get32(&r);
		nqps = get32(&r);
		iters = get32(&r);
		seed = get64(&r);
		maxsize = get64(&r);
		if (want < 0 && ver == PROTO_VERSION && nqps >= 1 &&
		    nqps <= MAX_QPS && maxsize >= 1 && maxsize <= 1u << 30) {
			want = nqps;
			opt.nqps = nqps;
			opt.iters = iters;
			opt.seed = seed;
			opt.maxsize = maxsize;
			printf(PROG ": server: client asks for qps=%d iters=%u seed=%" PRIu64 " maxsize=%zu\n",
			       want, iters, seed, opt.maxsize);
			fflush(stdout);
		}
		if (ver != PROTO_VERSION || want < 0 || nqps != (uint32_t)want ||
		    idx >= nqps || qs[idx].fd >= 0 || seed != opt.seed ||
		    iters != opt.iters || maxsize != opt.maxsize) {
			tmp.failed = false;
			fail(&tmp, "bad HELLO (version %u qp %u of %u)", ver,
			     idx, nqps);
			close(fd);
			break;
		}
		q = &qs[idx];
		q->fd = fd;
		memcpy(q->hello, tmp.hello, MSG_LEN);
		q->seed = seed;
		q->iters = iters;
		q->maxsize = maxsize;
		q->nqps = nqps;
		if (pthread_create(&q->thr, NULL, server_thread, q)) {
			q->fd = -1;
			close(fd);
			atomic_store(&g_abort, 1);
			break;
		}
		got++;
	}
	close(lfd);
	*nq = got;
	return atomic_load(&g_abort) ? -1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t bytes = 0, sends = 0, writes = 0, wimms = 0, reads = 0;
	uint64_t atomics = 0;
	bool failed = false;
	char ops[64] = "";
	unsigned int mask;
	double t0;
	int c, i, n = 0;

	while ((c = getopt(argc, argv, "d:i:g:p:q:n:s:m:t:o:D:F:R:T:Hvh")) != -1) {
		switch (c) {
		case 'd':
			opt.dev = optarg;
			break;
		case 'i':
			opt.ib_port = parse_int(optarg, 1, 255);
			break;
		case 'g':
			opt.gid_idx = parse_int(optarg, 0, 65535);
			break;
		case 'p':
			opt.tcp_port = parse_int(optarg, 1, 65535);
			break;
		case 'q':
			opt.nqps = parse_int(optarg, 1, MAX_QPS);
			break;
		case 'n':
			opt.iters = parse_int(optarg, 1, 1 << 24);
			break;
		case 's':
			opt.seed = strtoull(optarg, NULL, 0);
			opt.seed_set = true;
			break;
		case 'm':
			opt.maxsize = parse_size(optarg);
			break;
		case 't':
			opt.timeout = parse_int(optarg, 1, 3600);
			break;
		case 'o':
			opt.ops = parse_ops(optarg);
			break;
		case 'D':
			opt.duration = parse_int(optarg, 1, 3600);
			break;
		case 'F':
			opt.stop_file = optarg;
			break;
		case 'R':
			opt.retry_cnt = parse_int(optarg, 0, 7);
			break;
		case 'T':
			opt.qp_timeout = parse_int(optarg, 0, 31);
			break;
		case 'H':
			opt.huge = true;
			break;
		case 'v':
			opt.verbose = 1;
			break;
		default:
			help();
		}
	}
	if (optind < argc - 1 || opt.gid_idx < 0)
		help();
	if (optind == argc - 1)
		opt.host = argv[optind];
	is_server = !opt.host;
	if (!opt.seed_set)
		opt.seed = (uint64_t)time(NULL) * 1000003u ^ getpid();
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (open_device())
		return 1;
	for (i = 0; i < MAX_QPS; i++) {
		qs[i].idx = i;
		qs[i].fd = -1;
	}
	t0 = now();
	if (is_server) {
		printf(PROG ": server on %s port %d gid %d, TCP port %d\n",
		       opt.dev, opt.ib_port, opt.gid_idx, opt.tcp_port);
		if (serve(&n))
			failed = true;
	} else {
		n = opt.nqps;
		printf(PROG ": client on %s port %d gid %d to %s:%d: qps=%d iters=%u seed=%" PRIu64 " maxsize=%zu\n",
		       opt.dev, opt.ib_port, opt.gid_idx, opt.host,
		       opt.tcp_port, n, opt.iters, opt.seed, opt.maxsize);
		for (i = 0; i < n; i++) {
			qs[i].seed = opt.seed;
			qs[i].iters = opt.iters;
			qs[i].maxsize = opt.maxsize;
			qs[i].nqps = n;
			qs[i].ops = opt.ops;
			if (pthread_create(&qs[i].thr, NULL, client_thread,
					   &qs[i])) {
				fprintf(stderr, PROG ": pthread_create failed\n");
				atomic_store(&g_abort, 1);
				n = i;
				failed = true;
				break;
			}
		}
	}
	for (i = 0; i < n; i++) {
		pthread_join(qs[i].thr, NULL);
		failed |= qs[i].failed;
		bytes += qs[i].bytes;
		sends += qs[i].sends;
		writes += qs[i].writes;
		wimms += qs[i].wimms;
		reads += qs[i].reads;
		atomics += qs[i].atomics;
	}
	failed |= atomic_load(&g_abort) != 0;
	if (ibv_dealloc_pd(pd) && !failed) {
		fprintf(stderr, PROG ": ibv_dealloc_pd failed\n");
		failed = true;
	}
	ibv_close_device(ctx);
	mask = is_server && n ? qs[0].ops : opt.ops;
	for (i = 0; i <= NOPS && mask != ALL_OPS; i++)
		if (mask & 1u << i)
			snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops),
				 "%s%s", *ops ? "," : " ops=",
				 i < NOPS ? op_opt[i] : "atomic");
	printf(PROG ": %s%s qps=%d iters=%u bytes=%" PRIu64 " sends=%" PRIu64
	       " writes=%" PRIu64 " write_imms=%" PRIu64 " reads=%" PRIu64
	       " atomics=%" PRIu64 " mtu=%d sge=%d seed=%" PRIu64 " maxsize=%zu%s secs=%.1f\n",
	       failed ? "FAIL" : "OK", is_server ? " (server)" : "", n,
	       opt.iters, bytes, sends, writes, wimms, reads, atomics,
	       n ? 128 << qs[0].mtu : 0, n ? qs[0].nsge : 0, opt.seed,
	       opt.maxsize, ops, now() - t0);
	return failed ? 1 : 0;
}
