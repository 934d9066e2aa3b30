// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce-vfuzz - randomized user verbs sequences against one RDMA device.
 *
 *   sroce-vfuzz -d DEV [-s SEED] [-n OPS] [-t SECONDS] [-w WATCHDOG]
 *               [-m single|threads|fork] [-o OP,...] [-x OP,...] [-C] [-v]
 *
 * A pool of live objects (contexts, completion channels, PDs, CQs, SRQs,
 * RC/UC/UD QPs, MRs, MWs, AHs) is driven by a table of operations picked
 * at random with weights (vfuzz_ops.c): create and destroy each kind in any
 * order, also while in use; modify QPs through valid and invalid
 * transitions with boundary attributes; post through the provider, through
 * the ibv_wr_*() API, as raw WQEs written into the mapped rings (fields the
 * provider would refuse), and as uverbs write() commands; corrupt ring
 * indices; register odd memory; bind windows; create AHs with random GIDs;
 * attach multicast groups; map random offsets of the device file; create
 * objects whose response buffer faults.  Connected RC/UC pairs on the
 * device's own RoCE v2 GID (loopback) move real data.  A separate context
 * holds a checked pair whose transfers are verified byte for byte and
 * whose misuse must fail cleanly (vfuzz_check.c).
 *
 * Every verb's return is recorded; any errno or completion status is an
 * answer.  What fails a run: no operation completing for WATCHDOG seconds
 * (a hang: the run is aborted with a message), a completion or query that
 * shows corruption (status or opcode out of range, a QP number this
 * process never had, device attributes that change), a failed check of
 * the checked pair.  The kernel log is the guest suite's to read.
 *
 * Modes: single (one thread, reproducible from the seed), threads (one
 * thread posts and polls, the other modifies, resizes and destroys the
 * same objects; a destroy of an object in use goes to the kernel directly
 * and leaves a zombie for the poster), fork (children inherit the pool,
 * open contexts of their own, and exit or are killed in mid-sequence).
 *
 * Output: "# " diagnostics (seed, per-operation ok/errno counts,
 * completion statuses, events) and TAP lines "ok - vfuzz seed S: N ops,
 * no hang" (or "not ok - ...") for the guest suite to take over.
 * Exit status: 0 if every TAP line is ok, 1 if not, 2 on a hang, 64 on
 * usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "vfuzz.h"

struct pool P;
pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
const char *const kind_name[NKIND] = {
	"ctx", "channel", "pd", "cq", "srq", "qp", "mr", "mw", "ah"
};
struct devinfo D;
struct opts O = { .ops = 2000, .watchdog = 60, .mode = M_SINGLE };
bool in_child;
atomic_long progress;
atomic_long ops_done;
__thread struct rng *trng;
__thread int cur_op = -1;
__thread char cur_detail[160];

/* What each thread does, for the watchdog's message. */
#define NTHR 3
static const char *thr_op[NTHR];
static const char *thr_detail[NTHR];
static __thread int tid;

static atomic_long wc_status[32];
static atomic_long wc_total;
static atomic_long ev_count[32];
static atomic_int findings;
static uint8_t *qpn_seen;	/* bitmap of QP numbers this process had */
static volatile sig_atomic_t stop;
static struct timespec t_start;
/* Shared with fork children: [0] operations run, [1] those that counted. */
static atomic_long *child_progress;

/* ---- random numbers ---- */

uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t rnd(void)
{
	return rng_next(trng);
}

uint32_t below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

uint32_t rnd_range(uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rnd() % ((uint64_t)hi - lo + 1));
}

bool chance(unsigned int pct)
{
	return below(100) < pct;
}

uint32_t bval(uint32_t max)
{
	switch (below(12)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return max ? max - 1 : 0;
	case 3: return max;
	case 4: return max + 1;
	case 5: return max + 2;
	case 6: return max * 2;
	case 7: return 0x7fffffff;
	case 8: return 0x80000000u;
	case 9: return 0xffffffffu;
	case 10: return (uint32_t)rnd();
	default: return below(max + 1);
	}
}

uint32_t small_or(uint32_t max)
{
	if (chance(85))
		return rnd_range(1, MIN(16, MAX(max, 1)));
	return bval(max);
}

void rnd_fill(void *p, size_t n)
{
	uint8_t *b = p;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!(i & 7))
			v = rnd();
		b[i] = (uint8_t)v;
		v >>= 8;
	}
}

/* ---- pool ---- */

static struct {
	size_t off, stride;
	int n;
} kinfo[NKIND] = {
	[K_CTX] = { offsetof(struct pool, ctx), sizeof(struct ctx_o), NCTX },
	[K_CH] = { offsetof(struct pool, ch), sizeof(struct ch_o), NCH },
	[K_PD] = { offsetof(struct pool, pd), sizeof(struct pd_o), NPD },
	[K_CQ] = { offsetof(struct pool, cq), sizeof(struct cq_o), NCQ },
	[K_SRQ] = { offsetof(struct pool, srq), sizeof(struct srq_o), NSRQ },
	[K_QP] = { offsetof(struct pool, qp), sizeof(struct qp_o), NQP },
	[K_MR] = { offsetof(struct pool, mr), sizeof(struct mr_o), NMR },
	[K_MW] = { offsetof(struct pool, mw), sizeof(struct mw_o), NMW },
	[K_AH] = { offsetof(struct pool, ah), sizeof(struct ah_o), NAH },
};

struct hdr *hdr_of(int kind, int i)
{
	return (struct hdr *)((char *)&P + kinfo[kind].off +
			      (size_t)i * kinfo[kind].stride);
}

int slot_count(int kind)
{
	return kinfo[kind].n;
}

void pool_lockit(void)
{
	pthread_mutex_lock(&pool_lock);
}

void pool_unlockit(void)
{
	pthread_mutex_unlock(&pool_lock);
}

/* A uniformly chosen live slot of @kind (in @ctx if >= 0); lock held. */
int pick_nolock(int kind, int ctx, pred_fn pred, const void *arg)
{
	int i, n = 0, chosen = -1;

	for (i = 0; i < kinfo[kind].n; i++) {
		struct hdr *h = hdr_of(kind, i);

		if (h->state != S_LIVE || (ctx >= 0 && h->ctx != ctx))
			continue;
		if (pred && !pred(kind, i, arg))
			continue;
		if (below(++n) == 0)
			chosen = i;
	}
	return chosen;
}

void take(struct refs *rf, int kind, int i)
{
	hdr_of(kind, i)->busy++;
	rf->kind[rf->n] = kind;
	rf->idx[rf->n] = i;
	rf->n++;
}

int pick(struct refs *rf, int kind, int ctx, pred_fn pred, const void *arg)
{
	int i;

	if (rf->n >= (int)ARRAY_SIZE(rf->kind))
		return -1;
	pool_lockit();
	i = pick_nolock(kind, ctx, pred, arg);
	if (i >= 0)
		take(rf, kind, i);
	pool_unlockit();
	return i;
}

void put_all(struct refs *rf)
{
	int j;

	pool_lockit();
	for (j = 0; j < rf->n; j++) {
		struct hdr *h = hdr_of(rf->kind[j], rf->idx[j]);

		h->busy--;
		if (h->state == S_ZOMBIE && !h->busy)
			zombie_reap(rf->kind[j], rf->idx[j]);
	}
	rf->n = 0;
	pool_unlockit();
}

int free_slot(int kind)
{
	int i;

	for (i = 0; i < kinfo[kind].n; i++)
		if (hdr_of(kind, i)->state == S_FREE)
			return i;
	return -1;
}

static bool destroyable(int kind, int i, const void *arg)
{
	(void)arg;
	return !hdr_of(kind, i)->inh;
}

/*
 * A slot to destroy.  Not in use: it becomes S_EXCL and the caller uses
 * the provider's destroy.  In use by the other thread (*raw set): the
 * caller destroys the kernel object directly, the poster keeps its
 * provider object (a zombie) until it lets go.
 */
int claim_destroy(int kind, int ctx, bool *raw)
{
	int i;

	pool_lockit();
	i = pick_nolock(kind, ctx, destroyable, NULL);
	if (i >= 0) {
		struct hdr *h = hdr_of(kind, i);

		*raw = h->busy > 0;
		if (!*raw)
			h->state = S_EXCL;
	}
	pool_unlockit();
	return i;
}

static bool idle(int kind, int i, const void *arg)
{
	(void)arg;
	return !hdr_of(kind, i)->busy && !hdr_of(kind, i)->inh;
}

int claim_excl(int kind, int ctx)
{
	int i;

	pool_lockit();
	i = pick_nolock(kind, ctx, idle, NULL);
	if (i >= 0)
		hdr_of(kind, i)->state = S_EXCL;
	pool_unlockit();
	return i;
}

void release_excl(int kind, int i, bool gone)
{
	struct hdr *h = hdr_of(kind, i);

	pool_lockit();
	if (gone)
		memset(h, 0, kinfo[kind].stride);
	else
		h->state = S_LIVE;
	pool_unlockit();
}

/* ---- statistics and findings ---- */

static void thr_note(void)
{
	thr_op[tid] = cur_op >= 0 ? optab[cur_op].name : "-";
	thr_detail[tid] = cur_detail;
}

void detail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cur_detail, sizeof(cur_detail), fmt, ap);
	va_end(ap);
	if (O.verbose > 1)
		fprintf(stderr, "[%d] %s: %s\n", tid, thr_op[tid], cur_detail);
}

static __thread long recs;	/* verbs this thread called */

void rec(int err)
{
	struct opstat *st = &optab[cur_op].st;

	recs++;
	if (err < 0)
		err = -err;
	atomic_fetch_add(&st->calls, 1);
	if (!err)
		atomic_fetch_add(&st->ok, 1);
	else
		atomic_fetch_add(&st->err[MIN(err, MAX_ERRNO)], 1);
	if (O.verbose > 1)
		fprintf(stderr, "[%d]   -> %s\n", tid, err ? strerror(err) : "ok");
	atomic_fetch_add(&progress, 1);
}

void rec_skip(void)
{
	atomic_fetch_add(&optab[cur_op].st.skipped, 1);
}

void finding(const char *what, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	static const char *kinds[16];
	static int kcount[16];
	int k, n;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	atomic_fetch_add(&findings, 1);
	/* The first three lines of a kind; the summary counts them all. */
	pool_lockit();
	for (k = 0; k < 16 && kinds[k] && strcmp(kinds[k], what); k++)
		;
	if (k < 16 && !kinds[k])
		kinds[k] = what;
	n = k < 16 ? ++kcount[k] : 1;
	pool_unlockit();
	if (n > 3)
		return;
	printf("# FINDING (%s, op %s, seed %" PRIu64 ", after %ld ops): %s [%s]%s\n",
	       what, cur_op >= 0 ? optab[cur_op].name : "-", O.seed,
	       atomic_load(&ops_done), buf, cur_detail,
	       n == 3 ? " (more not shown)" : "");
	fflush(stdout);
}

void note_qpn(uint32_t qpn)
{
	qpn &= 0xffffff;
	qpn_seen[qpn >> 3] |= 1u << (qpn & 7);
}

static bool qpn_known(uint32_t qpn)
{
	if (qpn > 0xffffff)
		return false;
	return qpn_seen[qpn >> 3] & (1u << (qpn & 7));
}

void wc_seen(const struct ibv_wc *wc, bool trusted)
{
	atomic_fetch_add(&wc_total, 1);
	if (!trusted) {
		atomic_fetch_add(&wc_status[MIN((unsigned int)wc->status, 31u)], 1);
		return;
	}
	if (wc->status > IBV_WC_TM_RNDV_INCOMPLETE) {
		finding("corrupt completion", "status %u out of range (qp %u)",
			wc->status, wc->qp_num);
		return;
	}
	atomic_fetch_add(&wc_status[wc->status], 1);
	if (!qpn_known(wc->qp_num))
		finding("corrupt completion",
			"qp_num %u is no QP of this process (status %s, wr_id %#" PRIx64 ")",
			wc->qp_num, ibv_wc_status_str(wc->status), wc->wr_id);
	if (wc->status == IBV_WC_SUCCESS) {
		switch ((int)wc->opcode) {
		case IBV_WC_SEND: case IBV_WC_RDMA_WRITE: case IBV_WC_RDMA_READ:
		case IBV_WC_COMP_SWAP: case IBV_WC_FETCH_ADD: case IBV_WC_BIND_MW:
		case IBV_WC_LOCAL_INV: case IBV_WC_ATOMIC_WRITE:
		case IBV_WC_RECV: case IBV_WC_RECV_RDMA_WITH_IMM:
		/* rxe's FLUSH completion opcode (IB_UVERBS_WC_FLUSH) */
		case 8:
			break;
		default:
			finding("corrupt completion", "opcode %u with success (qp %u)",
				wc->opcode, wc->qp_num);
		}
	}
}

void event_seen(int type)
{
	atomic_fetch_add(&ev_count[MIN((unsigned int)type, 31u)], 1);
}

/* ---- kernel commands and rings ---- */

/*
 * One uverbs write() command: @body is the command after the header
 * (its first u64 is the response address when @out_words).
 */
int ucmd(struct ibv_context *c, uint32_t cmd, void *body, size_t inlen,
	 size_t out_words)
{
	struct {
		struct ib_uverbs_cmd_hdr h;
		uint8_t b[4096];
	} m;
	size_t len = sizeof(m.h) + inlen;

	if (inlen > sizeof(m.b))
		return EINVAL;
	m.h.command = cmd;
	m.h.in_words = (uint16_t)(len / 4);
	m.h.out_words = (uint16_t)out_words;
	memcpy(m.b, body, inlen);
	if (write(c->cmd_fd, &m, len) != (ssize_t)len)
		return errno;
	return 0;
}

/* Mappings of the uverbs device file, from /proc/self/maps. */
static int uverbs_maps(uintptr_t *start, uintptr_t *end, int max)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx", &s, &e) == 2) {
			start[n] = s;
			end[n] = e;
			n++;
		}
	}
	fclose(f);
	return n;
}

/*
 * The rings of a provider object: the rxe provider keeps each ring's
 * address in its object, which starts with the ibv_* object.  Scan the
 * object's malloc chunk for pointers to the start of a uverbs mapping;
 * a QP has its RQ before its SQ (no RQ with an SRQ).  *second gets the
 * last one found, *first the one before it (if any).
 */
void find_rings(void *obj, struct ring *first, struct ring *second)
{
	uintptr_t s[512], e[512];
	size_t len = malloc_usable_size(obj), off;
	int n = uverbs_maps(s, e, 512), j;
	struct ring found[2];
	int nf = 0;

	memset(found, 0, sizeof(found));
	for (off = 0; off + sizeof(void *) <= len; off += sizeof(void *)) {
		uintptr_t v;

		memcpy(&v, (char *)obj + off, sizeof(v));
		if (!v)
			continue;
		for (j = 0; j < n; j++) {
			struct rxe_queue_buf *q = (void *)v;
			struct ring r;

			if (v != s[j])
				continue;
			if (q->log2_elem_size < 4 || q->log2_elem_size > 16 ||
			    (q->index_mask & (q->index_mask + 1)))
				break;
			r.q = q;
			r.map = (void *)s[j];
			r.maplen = e[j] - s[j];
			r.mask = q->index_mask;
			r.esz = 1u << q->log2_elem_size;
			if (sizeof(*q) + ((size_t)r.mask + 1) * r.esz > r.maplen)
				break;
			if (nf == 2) {
				found[0] = found[1];
				nf = 1;
			}
			found[nf++] = r;
			break;
		}
	}
	if (first)
		memset(first, 0, sizeof(*first));
	if (second)
		memset(second, 0, sizeof(*second));
	if (nf == 2 && first)
		*first = found[0];
	if (nf && second)
		*second = found[nf - 1];
}

void ring_release(struct ring *r)
{
	if (r->q && r->map)
		munmap(r->map, r->maplen);
	memset(r, 0, sizeof(*r));
}

/*
 * Free a zombie's slot once nobody uses it: the kernel object is gone, the
 * provider's object is left as it is (its memory is leaked on purpose:
 * the provider would destroy whatever object now has its handle), the
 * mappings are dropped so that the kernel can free the rings.  Lock held.
 */
void zombie_reap(int kind, int i)
{
	struct hdr *h = hdr_of(kind, i);

	switch (kind) {
	case K_CQ:
		ring_release(&P.cq[i].r);
		break;
	case K_SRQ:
		ring_release(&P.srq[i].r);
		break;
	case K_QP:
		ring_release(&P.qp[i].sq);
		ring_release(&P.qp[i].rq);
		break;
	case K_MR:
		if (P.mr[i].map)
			munmap(P.mr[i].map, P.mr[i].maplen);
		if (P.mr[i].memfd >= 0)
			close(P.mr[i].memfd);
		break;
	}
	memset(h, 0, kinfo[kind].stride);
}

/* Read and acknowledge every pending event of context slot @ctx. */
void drain_events(int ctx)
{
	struct ibv_async_event ev;
	struct ibv_context *c;
	int i, n = 0;

	pool_lockit();
	if (P.ctx[ctx].h.state != S_LIVE || P.ctx[ctx].h.inh) {
		pool_unlockit();
		return;
	}
	P.ctx[ctx].h.busy++;
	c = P.ctx[ctx].c;
	pool_unlockit();
	while (n++ < 256 && !ibv_get_async_event(c, &ev)) {
		event_seen(ev.event_type);
		if (O.verbose > 1)
			fprintf(stderr, "[%d] async event %s\n", tid,
				ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	for (i = 0; i < NCH; i++) {
		struct ibv_comp_channel *ch;
		struct ibv_cq *cq;
		void *cctx;

		pool_lockit();
		if (P.ch[i].h.state != S_LIVE || P.ch[i].h.ctx != ctx ||
		    P.ch[i].h.inh) {
			pool_unlockit();
			continue;
		}
		P.ch[i].h.busy++;
		ch = P.ch[i].ch;
		pool_unlockit();
		n = 0;
		while (n++ < 256 && !ibv_get_cq_event(ch, &cq, &cctx))
			ibv_ack_cq_events(cq, 1);
		pool_lockit();
		P.ch[i].h.busy--;
		pool_unlockit();
	}
	pool_lockit();
	P.ctx[ctx].h.busy--;
	pool_unlockit();
}

/*
 * Close a context with whatever it still holds: the kernel destroys the
 * objects; the provider's objects are dropped unseen (ibv_close_device()
 * frees the context they point to).  Rings and MR buffers are unmapped
 * so that the kernel can free them.  Lock held; the context is S_EXCL and
 * none of its objects is busy.
 */
void close_ctx_slot(int ctx)
{
	int k, i;

	for (k = K_CH; k < NKIND; k++) {
		for (i = 0; i < slot_count(k); i++) {
			struct hdr *h = hdr_of(k, i);

			if (h->state == S_FREE || h->ctx != ctx)
				continue;
			if (k == K_CH)
				close(P.ch[i].ch->fd);
			zombie_reap(k, i);
		}
	}
	ibv_close_device(P.ctx[ctx].c);
	memset(&P.ctx[ctx], 0, sizeof(P.ctx[ctx]));
}

/* Whether context slot @ctx has no busy object. */
bool ctx_idle(int ctx);
bool ctx_idle(int ctx)
{
	int k, i;

	for (k = K_CTX; k < NKIND; k++)
		for (i = 0; i < slot_count(k); i++) {
			struct hdr *h = hdr_of(k, i);

			if (h->state != S_FREE && h->ctx == ctx &&
			    (h->busy || h->inh || (k != K_CTX && h->state == S_EXCL)))
				return false;
		}
	return true;
}

/* ---- watchdog ---- */

static double elapsed(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t_start.tv_sec) +
	       (double)(t.tv_nsec - t_start.tv_nsec) / 1e9;
}

static void print_summary(void);

static void *watchdog(void *arg)
{
	long last = -1;
	int still = 0, i;

	(void)arg;
	for (;;) {
		long p = atomic_load(&progress);

		sleep(1);
		if (p != last) {
			last = p;
			still = 0;
			continue;
		}
		if (++still < O.watchdog)
			continue;
		printf("# HANG: no operation completed for %d s\n", O.watchdog);
		for (i = 0; i < NTHR; i++)
			if (thr_op[i])
				printf("#   thread %d in op %s: %s\n", i, thr_op[i],
				       thr_detail[i] ? thr_detail[i] : "");
		print_summary();
		printf("not ok - vfuzz seed %" PRIu64 ": hang: no operation completed for %d s after %ld ops (op %s)\n",
		       O.seed, O.watchdog, atomic_load(&ops_done),
		       thr_op[0] ? thr_op[0] : "-");
		fflush(stdout);
		_exit(2);
	}
	return NULL;
}

/* ---- running ---- */

static int total_weight(int role)
{
	int i, w = 0;

	for (i = 0; i < nops; i++)
		if (!optab[i].off && (optab[i].role & role))
			w += optab[i].weight;
	return w;
}

static int choose_op(int role, int tw)
{
	int i, r = (int)below((uint32_t)tw);

	for (i = 0; i < nops; i++) {
		if (optab[i].off || !(optab[i].role & role))
			continue;
		r -= optab[i].weight;
		if (r < 0)
			return i;
	}
	return nops - 1;
}

/*
 * Run operation @i.  Only an operation that called a verb counts towards
 * -n (one that found nothing to work on is skipped): returns whether it
 * counted.
 */
static bool run_one(int i)
{
	long before = recs;

	cur_op = i;
	cur_detail[0] = 0;
	thr_note();
	if (O.verbose)
		fprintf(stderr, "[%d:%d] #%ld %s\n", getpid(), tid,
			atomic_load(&ops_done), optab[i].name);
	optab[i].fn();
	atomic_fetch_add(&progress, 1);
	if (child_progress && in_child)
		atomic_fetch_add(child_progress, 1);
	cur_op = -1;
	thr_note();
	if (recs == before)
		return false;
	atomic_fetch_add(&ops_done, 1);
	if (in_child)
		atomic_fetch_add(&child_progress[1], 1);
	return true;
}

static bool time_up(void)
{
	if (stop)
		return true;
	if (O.ops && atomic_load(&ops_done) >= O.ops)
		return true;
	return O.seconds && elapsed() >= O.seconds;
}

static void drain_all(void)
{
	int c;

	for (c = 0; c < NCTX; c++)
		drain_events(c);
}

static void loop(int role)
{
	int tw = total_weight(role), n = 0;

	if (!tw)
		return;
	while (!time_up()) {
		/* One vCPU: a thread with nothing to do lets the other run. */
		if (!run_one(choose_op(role, tw)) && O.mode == M_THREADS)
			sched_yield();
		if (!(++n & 7))
			drain_all();
	}
}

static void *poster_thread(void *arg)
{
	struct rng r = { O.seed ^ 0x5eed0f0a11ULL };

	(void)arg;
	trng = &r;
	tid = 1;
	loop(R_POST);
	return NULL;
}

/* ---- fork mode ---- */

static int nforks;

/*
 * A child inherits the pool (shared kernel objects: it may post, poll and
 * modify them, never destroy them nor read their events), opens contexts
 * of its own, runs a random number of operations and exits, or is
 * killed, in mid-sequence.
 */
void op_fork_child_setup(void);
static void fork_child(uint64_t seed, long n, bool kill_self)
{
	static struct rng r;
	int k, i;
	long j;

	r.s = seed;
	trng = &r;
	in_child = true;
	for (k = 0; k < NKIND; k++)
		for (i = 0; i < slot_count(k); i++)
			hdr_of(k, i)->inh = hdr_of(k, i)->state != S_FREE;
	op_fork_child_setup();
	for (j = 0; j < n && !stop; ) {
		int tw = total_weight(R_POST | R_MOD);

		if (run_one(choose_op(R_POST | R_MOD, tw)))
			j++;
	}
	if (kill_self)
		raise(SIGKILL);
	_exit(0);
}

void op_fork(void);
void op_fork(void)
{
	uint64_t seed = rnd();
	long n = (long)rnd_range(1, 300), before;
	bool kill_self = chance(50);
	int still = 0, status;
	long counted = atomic_load(&child_progress[1]);
	pid_t pid;

	if (in_child || O.mode != M_FORK) {
		rec_skip();
		return;
	}
	fflush(stdout);
	fflush(stderr);
	before = atomic_load(child_progress);
	pid = fork();
	if (pid < 0) {
		rec(errno);
		return;
	}
	if (!pid)
		fork_child(seed, n, kill_self);
	nforks++;
	detail("child %d: %ld ops, then %s", pid, n,
	       kill_self ? "SIGKILL" : "exit");
	for (;;) {
		long p = atomic_load(child_progress);
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		usleep(100000);
		if (p != before) {
			before = p;
			still = 0;
			atomic_fetch_add(&progress, 1);
			continue;
		}
		if (++still >= O.watchdog * 10) {
			/* The parent's watchdog reports it. */
			kill(pid, SIGKILL);
			pause();
		}
		if (!(still % 10))
			atomic_fetch_add(&progress, 1);
	}
	/* The child's operations count towards -n. */
	atomic_fetch_add(&ops_done, atomic_load(&child_progress[1]) - counted);
	rec(WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL ?
	    EFAULT : 0);
	if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
		finding("fuzzer", "fork child %d died of signal %d", pid,
			WTERMSIG(status));
}

/* ---- output ---- */

static void print_summary(void)
{
	int i, e;
	long total = 0;

	for (i = 0; i < nops; i++) {
		struct opstat *st = &optab[i].st;
		char line[2048];
		int len;
		long calls = atomic_load(&st->calls), sk = atomic_load(&st->skipped);

		if (!calls && !sk)
			continue;
		total += calls;
		len = snprintf(line, sizeof(line), "# op %-14s %6ld calls  ok %ld",
			       optab[i].name, calls, atomic_load(&st->ok));
		for (e = 1; e <= MAX_ERRNO; e++) {
			long v = atomic_load(&st->err[e]);
			const char *nm;

			if (!v)
				continue;
			nm = e == MAX_ERRNO ? "other" : strerrorname_np(e);
			len += snprintf(line + len, sizeof(line) - (size_t)len,
					"  %s %ld", nm ? nm : "?", v);
			if (len >= (int)sizeof(line) - 32)
				break;
		}
		if (sk)
			snprintf(line + len, sizeof(line) - (size_t)len,
				 "  (skipped %ld)", sk);
		puts(line);
	}
	printf("# verbs: %ld calls\n", total);
	printf("# completions: %ld:", atomic_load(&wc_total));
	for (i = 0; i < 32; i++)
		if (atomic_load(&wc_status[i]))
			printf(" %s %ld", ibv_wc_status_str(i),
			       atomic_load(&wc_status[i]));
	printf("\n# async events:");
	for (i = 0; i < 32; i++)
		if (atomic_load(&ev_count[i]))
			printf(" %s %ld", ibv_event_type_str(i),
			       atomic_load(&ev_count[i]));
	printf("\n");
	if (O.mode == M_FORK)
		printf("# fork children: %d\n", nforks);
	fflush(stdout);
}

/* The fuzzer's own crash: say where, for the suite and for fixing it. */
static void on_crash(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	void *ip = (void *)uc->uc_mcontext.gregs[REG_RIP];
	char buf[320];
	int n = snprintf(buf, sizeof(buf),
			 "not ok - vfuzz seed %" PRIu64 ": sroce-vfuzz crashed (signal %d at %p, pid %d%s) in op %s: %s\n",
			 O.seed, sig, si->si_addr, getpid(),
			 in_child ? ", fork child" : "",
			 cur_op >= 0 ? optab[cur_op].name : "-", cur_detail);

	if (write(1, buf, (size_t)n) < 0)
		_exit(3);
	/* The faulting instruction, as "object(+offset)" for addr2line. */
	backtrace_symbols_fd(&ip, 1, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sroce-vfuzz -d DEV [-s SEED] [-n OPS] [-t SECONDS] [-w WATCHDOG]\n"
		"                   [-m single|threads|fork] [-o OP,..] [-x OP,..] [-C] [-v]\n"
		"  -n 0 runs until -t; -o runs only these ops, -x all but these;\n"
		"  -C leaves out the checked pair; -l lists the ops;\n"
		"  -r NAME runs a finding's reproducer (atomic_write, mcast_lid,\n"
		"  ud_ah_pd, write_range, path_mtu) instead\n");
	exit(64);
}

static void select_ops(const char *list, bool only)
{
	char *s = strdup(list), *tok, *save = NULL;
	int i;

	if (only)
		for (i = 0; i < nops; i++)
			optab[i].off = true;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool found = false;

		for (i = 0; i < nops; i++)
			if (!strcmp(optab[i].name, tok)) {
				optab[i].off = !only;
				found = true;
			}
		if (!found) {
			fprintf(stderr, "sroce-vfuzz: no op %s\n", tok);
			exit(64);
		}
	}
	free(s);
}

static int devinfo_init(struct ibv_context *c)
{
	struct ibv_gid_entry ge;
	int i;

	if (ibv_query_device(c, &D.attr) || ibv_query_port(c, 1, &D.port))
		return -1;
	D.gid_v4 = -1;
	D.gid_v6 = -1;
	for (i = 0; i < D.port.gid_tbl_len && i < 64; i++) {
		if (ibv_query_gid_ex(c, 1, (uint32_t)i, &ge, 0))
			continue;
		if (ge.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (!memcmp(ge.gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12)) {
			if (D.gid_v4 < 0) {
				D.gid_v4 = i;
				D.gv4 = ge.gid;
			}
		} else if (ge.gid.raw[0] != 0xfe && D.gid_v6 < 0) {
			D.gid_v6 = i;
			D.gv6 = ge.gid;
		}
	}
	D.comp_vectors = c->num_comp_vectors;
	return D.gid_v4 < 0 && D.gid_v6 < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct rng r;
	pthread_t wd, post;
	bool seed_set = false;
	int c, i, n, fails, cfails = 0;
	long done;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ops_init();
	while ((c = getopt(argc, argv, "d:s:n:t:w:m:o:x:r:Cvl")) != -1) {
		switch (c) {
		case 'd': O.dev = optarg; break;
		case 's': O.seed = strtoull(optarg, NULL, 0); seed_set = true; break;
		case 'n': O.ops = strtol(optarg, NULL, 0); break;
		case 't': O.seconds = atoi(optarg); break;
		case 'w': O.watchdog = atoi(optarg); break;
		case 'm':
			if (!strcmp(optarg, "single"))
				O.mode = M_SINGLE;
			else if (!strcmp(optarg, "threads"))
				O.mode = M_THREADS;
			else if (!strcmp(optarg, "fork"))
				O.mode = M_FORK;
			else
				usage();
			break;
		case 'o': O.only = optarg; break;
		case 'x': O.skip = optarg; break;
		case 'C': O.no_check = true; break;
		case 'r': O.repro = optarg; break;
		case 'v': O.verbose++; break;
		case 'l':
			for (i = 0; i < nops; i++)
				printf("%-14s weight %3d %s\n", optab[i].name,
				       optab[i].weight,
				       optab[i].role == R_POST ? "post" :
				       optab[i].role == R_MOD ? "modify" : "both");
			return 0;
		default: usage();
		}
	}
	if (!O.dev || (!O.ops && !O.seconds && !O.repro) || O.watchdog < 5)
		usage();
	if (!seed_set) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		O.seed = (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 20) ^
			 (uint64_t)getpid();
	}
	if (O.only)
		select_ops(O.only, true);
	if (O.skip)
		select_ops(O.skip, false);
	if (O.mode != M_FORK)
		for (i = 0; i < nops; i++)
			if (!strcmp(optab[i].name, "fork"))
				optab[i].off = true;
	if (O.no_check)
		for (i = 0; i < nops; i++)
			if (!strcmp(optab[i].name, "checked"))
				optab[i].off = true;

	r.s = O.seed;
	trng = &r;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	{
		struct sigaction sa = { .sa_sigaction = on_crash,
					.sa_flags = SA_SIGINFO };

		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGABRT, &sa, NULL);
	}
	qpn_seen = calloc(1, 1 << 21);
	child_progress = mmap(NULL, 2 * sizeof(*child_progress),
			      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			      -1, 0);
	if (!qpn_seen || child_progress == MAP_FAILED)
		return 1;

	printf("# vfuzz: seed %" PRIu64 " device %s mode %s ops %ld time limit %d s watchdog %d s\n",
	       O.seed, O.dev,
	       O.mode == M_SINGLE ? "single" : O.mode == M_THREADS ? "threads" : "fork",
	       O.ops, O.seconds, O.watchdog);
	printf("# vfuzz: reproduce with: sroce-vfuzz -d %s -s %" PRIu64 " -n %ld -m %s%s%s%s%s%s\n",
	       O.dev, O.seed, O.ops,
	       O.mode == M_SINGLE ? "single" : O.mode == M_THREADS ? "threads" : "fork",
	       O.only ? " -o " : "", O.only ? O.only : "",
	       O.skip ? " -x " : "", O.skip ? O.skip : "",
	       O.no_check ? " -C" : "");
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), O.dev))
			D.dev = list[i];
	if (!D.dev) {
		printf("not ok - vfuzz seed %" PRIu64 ": no device %s\n", O.seed, O.dev);
		return 1;
	}
	P.ctx[0].c = ibv_open_device(D.dev);
	if (!P.ctx[0].c || devinfo_init(P.ctx[0].c)) {
		printf("not ok - vfuzz seed %" PRIu64 ": cannot open %s or find its RoCE v2 GID\n",
		       O.seed, O.dev);
		return 1;
	}
	fcntl(P.ctx[0].c->async_fd, F_SETFL,
	      fcntl(P.ctx[0].c->async_fd, F_GETFL) | O_NONBLOCK);
	P.ctx[0].h.state = S_LIVE;
	printf("# device: max_qp_wr %d max_sge %d max_cqe %d max_srq_wr %d max_qp_rd_atom %d gid v4 %d v6 %d mtu %d\n",
	       D.attr.max_qp_wr, D.attr.max_sge, D.attr.max_cqe,
	       D.attr.max_srq_wr, D.attr.max_qp_rd_atom, D.gid_v4, D.gid_v6,
	       128 << D.port.active_mtu);
	if (O.repro) {
		r.s = O.seed;
		c = check_repro(O.repro);
		if (c == 64)
			usage();
		printf("# reproducer %s: exit %d\n", O.repro, c);
		fflush(stdout);
		_exit(c);
	}
	if (!O.no_check && check_init()) {
		printf("not ok - vfuzz seed %" PRIu64 ": checked pair setup failed\n",
		       O.seed);
		return 1;
	}

	clock_gettime(CLOCK_MONOTONIC, &t_start);
	pthread_create(&wd, NULL, watchdog, NULL);
	if (O.mode == M_THREADS) {
		pthread_create(&post, NULL, poster_thread, NULL);
		loop(R_MOD);
		stop = 1;
		pthread_join(post, NULL);
	} else {
		loop(R_POST | R_MOD);
	}
	drain_all();
	done = atomic_load(&ops_done);
	print_summary();
	fails = atomic_load(&findings);
	printf("# vfuzz: %ld ops in %.1f s, %d findings\n", done, elapsed(), fails);
	if (!O.no_check) {
		cfails = check_report();
		check_fini();
	}
	printf("%sok - vfuzz seed %" PRIu64 " (%s): %ld ops, no hang%s\n",
	       fails ? "not " : "", O.seed,
	       O.mode == M_SINGLE ? "single" : O.mode == M_THREADS ? "threads" : "fork",
	       done, fails ? ", but findings (see FINDING lines)" : "");
	fflush(stdout);
	/* Objects left in the pool go with the process: exit cleans up. */
	_exit(fails || cfails ? 1 : 0);
}
