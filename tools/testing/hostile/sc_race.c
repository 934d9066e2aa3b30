// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * c) Ring indices rewritten while the kernel walks the rings.
 *
 * A racing thread writes, as fast as it can, the index the process owns:
 * producer_index = consumer_index + 1 (one more element, forever) and now
 * and then a random value, on the SQ and RQ rings of a QP, on an SRQ
 * ring, and consumer_index = producer_index + 1 (no room) on a CQ ring.
 * Meanwhile the main thread moves the QP to ERR (the flush walks both
 * rings), rings the doorbell in ERR (flushed at once; the provider's own
 * posts would follow the random indices out of the ring, so the program
 * does not use them there), resets it (RESET empties the
 * rings), moves it to ERR again and destroys it; SENDs arrive at a QP of
 * the SRQ while it is destroyed; completions go to the CQ while it is
 * destroyed.  The racer writes through mappings of its own, so it goes on
 * across the destroys.  Last, an SQ whose every slot is a local work
 * request (BIND_MW) kept full while the QP is in RTS: the requester in
 * the doorbell's syscall must not follow it for as long as it is fed.
 *
 * Expected: every verb returns (0 for modify/destroy, anything for the
 * posts), in bounded time: the kernel reads a user index once per walk,
 * not once per element.  A kernel that re-reads it under its lock spins
 * for as long as the racer runs (only with a second CPU for the racer).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "hostile.h"

#define ROUNDS	6

enum race_mode { RACE_FULL, RACE_ONE, RACE_RANDOM, RACE_MODES };

static const char *const mode_name[] = {
	[RACE_FULL] = "a full ring", [RACE_ONE] = "one more",
	[RACE_RANDOM] = "random",
};

struct racer {
	enum race_mode mode;
	struct ring r[2];
	int n;
	bool consumer;		/* write consumer_index (a CQ) */
	atomic_bool stop;
	_Atomic uint64_t until;	/* now_ms() to stop at, or 0 */
	atomic_bool ended;
	atomic_ulong writes;
	unsigned long seen;	/* changes of the kernel's index seen */
	bool yield;		/* one CPU for both threads */

	uint32_t last[2];
	pthread_t thread;
};

/*
 * One write of the index the process owns, by the racer's mode:
 * RACE_FULL "consumer - 1" (a full ring however far the kernel gets; for
 * a CQ "producer + 1", no room), RACE_ONE "consumer + 1" (one more, again
 * and again), RACE_RANDOM anything (masked or not).
 */
static void race_one(struct racer *rc, unsigned long i, uint32_t *seed)
{
	struct ring *r = &rc->r[i % rc->n];
	_Atomic uint32_t *prod = (_Atomic uint32_t *)&r->buf->producer_index;
	_Atomic uint32_t *cons = (_Atomic uint32_t *)&r->buf->consumer_index;
	_Atomic uint32_t *mine = rc->consumer ? cons : prod;
	uint32_t v, k;

	k = atomic_load_explicit(rc->consumer ? prod : cons,
				 memory_order_relaxed);
	rc->seen += k != rc->last[i % rc->n];
	rc->last[i % rc->n] = k;
	switch (rc->mode) {
	case RACE_FULL:
		v = rc->consumer ? k + 1 : k + r->mask;
		break;
	case RACE_ONE:
		v = k + 1;
		break;
	default:
		*seed ^= *seed << 13;
		*seed ^= *seed >> 17;
		*seed ^= *seed << 5;
		v = *seed;
		if (i & 1)
			v &= r->mask;
		break;
	}
	atomic_store_explicit(mine, v & (rc->mode == RACE_RANDOM ? ~0u :
						    r->mask),
			      memory_order_relaxed);
}

static void *race_thread(void *arg)
{
	struct racer *rc = arg;
	unsigned long i = 0;
	uint32_t seed = 0x2545f491;
	int k;

	while (!atomic_load(&rc->stop)) {
		for (k = 0; k < 256; k++, i++)
			race_one(rc, i, &seed);
		atomic_store(&rc->writes, i);
		/* One CPU: let the verbs caller run too. */
		if (rc->yield)
			sched_yield();
		if (atomic_load(&rc->until) && now_ms() >= atomic_load(&rc->until))
			break;
	}
	atomic_store(&rc->ended, true);
	return NULL;
}

/*
 * With two CPUs or more, the racer on one and the verbs caller on another:
 * the racer then writes while the kernel walks the ring in the caller's
 * syscall.  (Left to the scheduler, both often share a CPU for the few
 * milliseconds that matter.)
 */
static int main_cpu;	/* the verbs caller's CPU (0 or 1) */

static void pin(pthread_t racer)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(main_cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	CPU_ZERO(&set);
	CPU_SET(!main_cpu, &set);
	pthread_setaffinity_np(racer, sizeof(set), &set);
}

/* Start racing on copies of @a (and @b) mapped for the racer. */
static int race_start(struct racer *rc, struct ring *a, struct ring *b,
		      bool consumer, enum race_mode mode)
{
	memset(rc, 0, sizeof(*rc));
	rc->consumer = consumer;
	rc->mode = mode;
	rc->yield = sysconf(_SC_NPROCESSORS_ONLN) < 2;
	if (ring_map_again(a, &rc->r[0]))
		return -1;
	rc->n = 1;
	if (b && b->buf && ring_map_again(b, &rc->r[1]) == 0)
		rc->n = 2;
	if (pthread_create(&rc->thread, NULL, race_thread, rc)) {
		ring_unmap(&rc->r[0]);
		ring_unmap(&rc->r[1]);
		return -1;
	}
	pin(rc->thread);
	/* Racing already when the verbs start. */
	while (atomic_load(&rc->writes) < 4096)
		sched_yield();
	return 0;
}

static void race_stop(struct racer *rc)
{
	atomic_store(&rc->stop, true);
	pthread_join(rc->thread, NULL);
	ring_unmap(&rc->r[0]);
	ring_unmap(&rc->r[1]);
}

/* A burst of @n signaled SENDs from a to b (whatever fits). */
static void sends(struct pair *p, int n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->ma.p, .length = 64,
		.lkey = p->ma.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 0x5e, .opcode = IBV_WR_SEND, .sg_list = &sge,
		.num_sge = 1,
	};

	while (n-- > 0 && post_wr(&p->a, &wr) == 0)
		;
}

static int set_state(struct hqp *h, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(h->qp, &a, IBV_QP_STATE);
}

static const struct ibv_qp_cap qcap = {
	.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
	.max_recv_sge = 1,
};

static int step(const char *what, int err)
{
	if (err)
		diag("%s: %s", what, strerror(err));
	return !!err;
}

/* Rings of 256 slots; a CQ that holds far more than they do. */
#define QP_WR		255
#define BIG_CQ		32767

/*
 * The pair of qp_round(), its a with rings of @wr slots (both: rings are
 * told apart by size only where they differ) on a CQ of its own of
 * BIG_CQ entries.
 */
static int qp_pair(struct pair *p, struct ibv_cq **cq, uint32_t wr)
{
	struct ibv_qp_cap cap = qcap;

	cap.max_send_wr = wr;
	cap.max_recv_wr = wr;
	*cq = NULL;
	if (pair_new(p, IBV_QPT_RC, &qcap, 16))
		return -1;
	hqp_free(&p->a);
	*cq = ibv_create_cq(g.ctx, BIG_CQ, NULL, NULL, 0);
	if (!*cq || hqp_new(&p->a, p->pd, IBV_QPT_RC, &cap, NULL, *cq) ||
	    pair_reconnect(p)) {
		diag("QP for the race: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Flushed completions in @cq (the others, which the requester makes of
 * what the racer "posted" while the QP was in RTS, in *@other).
 */
static int count_flushed(struct ibv_cq *cq, int *other)
{
	struct ibv_wc wc[16];
	int i, k, n = 0;

	*other = 0;
	while ((k = ibv_poll_cq(cq, 16, wc)) > 0)
		for (i = 0; i < k; i++) {
			if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
				n++;
			else
				(*other)++;
		}
	return n;
}

/*
 * One round on a QP's SQ and RQ: the number of verbs that failed.
 * *@excess: flushed completions beyond what walking each ring once per
 * flush can make: the QP enters ERR twice (each time both rings are
 * flushed, whether the verb or the data path moved it) and the doorbell
 * in ERR flushes the SQ once.  On two CPUs, a kernel that reads the
 * index again for each element keeps flushing as long as the racer keeps
 * "posting"; on one, the racer cannot run during a walk.
 */
static int qp_round(enum race_mode mode, int *excess)
{
	struct ibv_cq *cq;
	struct racer rc;
	struct pair p;
	uint64_t t0, t1;
	int bad = 0, n, bound, other;

	*excess = 0;
	if (qp_pair(&p, &cq, QP_WR))
		goto out;
	post_recvs(&p.a, &p.ma, 4, 64);
	sends(&p, 8);
	if (race_start(&rc, &p.a.sq, &p.a.rq, false, mode)) {
		diag("racer not started");
		goto out;
	}
	t0 = now_ms();
	bad += step("modify to ERR", set_state(&p.a, IBV_QPS_ERR));
	/*
	 * The provider's posts trust the indices in the ring (a random one
	 * sends its writes anywhere in this process): only the doorbell.
	 */
	bad += step("doorbell in ERR", doorbell(p.a.qp));
	bad += step("modify to RESET", set_state(&p.a, IBV_QPS_RESET));
	bad += step("connect again", hqp_connect(&p.a, p.b.qp->qp_num) ?
				      EIO : 0);
	bad += step("modify RTS to ERR", set_state(&p.a, IBV_QPS_ERR));
	t1 = now_ms();
	bad += step("destroy QP", ibv_destroy_qp(p.a.qp));
	p.a.qp = NULL;
	race_stop(&rc);
	n = count_flushed(cq, &other);
	/*
	 * Two moves to ERR (each: the fetched WQEs, at most 64 copies, the
	 * SQ ring, the receive in progress, the RQ ring), one doorbell in
	 * ERR (the SQ ring).
	 */
	bound = 3 * p.a.cap.max_send_wr + 2 * p.a.cap.max_recv_wr +
		2 * (64 + 1);
	*excess = n > bound ? n - bound : 0;
	diag("QP, %s: %llu ms of verbs; %lu index writes, the kernel's "
	     "index seen moving %lu times; %d flushed completions (at most "
	     "%d from walks of the rings), %d others", mode_name[mode],
	     (unsigned long long)(t1 - t0), atomic_load(&rc.writes), rc.seen,
	     n, bound, other);
	pair_free(&p);
	ibv_destroy_cq(cq);
	return bad;
out:
	pair_free(&p);
	if (cq)
		ibv_destroy_cq(cq);
	return bad + 1;
}

/* One round on an SRQ: SENDs arrive while it and its QP go. */
static int srq_round(enum race_mode mode)
{
	struct ibv_srq *srq;
	struct ibv_wc wc;
	struct ring r = {};
	struct racer rc;
	struct pair p;
	int bad = 0, i, err;

	if (pair_new(&p, IBV_QPT_RC, &qcap, 0))
		return 1;
	srq = srq_new_ring(p.pd, 16, 1, &r);
	hqp_free(&p.b);
	if (!srq || hqp_new(&p.b, p.pd, IBV_QPT_RC, &qcap, srq, NULL) ||
	    pair_reconnect(&p)) {
		bad = 1;
		goto out;
	}
	for (i = 0; i < 8; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)p.mb.p, .length = 4096,
			.lkey = p.mb.mr->lkey,
		};
		struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *rbad;

		ibv_post_srq_recv(srq, &wr, &rbad);
	}
	if (race_start(&rc, &r, NULL, false, mode)) {
		bad = 1;
		goto out;
	}
	sends(&p, 12);
	/* Whatever the responder made of the ring: the first one answers. */
	if (wait_send_wc(&p.a, &wc, WAIT_MS) != 1) {
		diag("SRQ round: no completion of the first SEND");
		bad++;
	}
	err = ibv_destroy_srq(srq);
	if (err != EBUSY) {
		diag("destroy of an SRQ in use: %s, expected EBUSY",
		     strerror(err));
		bad++;
		if (!err)
			srq = NULL;
	}
	hqp_free(&p.b);
	if (srq)
		bad += step("destroy SRQ", ibv_destroy_srq(srq));
	srq = NULL;
	race_stop(&rc);
out:
	if (srq)
		ibv_destroy_srq(srq);
	ring_unmap(&r);
	pair_free(&p);
	return bad;
}

/* One round on a CQ: completions (and flushes) into a ring "full". */
static int cq_round(enum race_mode mode)
{
	struct ring r = {};
	struct ibv_cq *cq;
	struct racer rc;
	struct pair p;
	int bad = 0, err;

	if (pair_new(&p, IBV_QPT_RC, &qcap, 16))
		return 1;
	cq = cq_new_ring(32, &r);
	hqp_free(&p.a);
	if (!cq || hqp_new(&p.a, p.pd, IBV_QPT_RC, &qcap, NULL, cq) ||
	    pair_reconnect(&p) || race_start(&rc, &r, NULL, true, mode)) {
		bad = 1;
		goto out;
	}
	sends(&p, 16);
	post_recvs(&p.a, &p.ma, 8, 64);
	bad += set_state(&p.a, IBV_QPS_ERR) != 0;
	hqp_free(&p.a);
	err = ibv_destroy_cq(cq);
	if (err) {
		diag("destroy CQ: %s", strerror(err));
		bad++;
	} else {
		cq = NULL;
	}
	race_stop(&rc);
out:
	hqp_free(&p.a);
	if (cq)
		ibv_destroy_cq(cq);
	ring_unmap(&r);
	pair_free(&p);
	return bad;
}

/*
 * Local work requests that keep coming: every SQ slot holds an unsignaled
 * BIND_MW that unbinds a type 1 window (it succeeds, sends nothing and
 * completes nothing), and the racer keeps the ring full while the QP is
 * in RTS.  The doorbell runs the requester in its syscall or on the QP's
 * work CPU; a run that charges only the packets it builds to its budget
 * goes on for as long as the racer writes, and keeps its CPU: the
 * caller's, or the worker's (each round puts the caller on the other
 * CPU, so one of them shares the worker's).  Without a second CPU the
 * racer cannot write meanwhile.  The racer stops by itself after
 * LOCAL_SECS.  Return: the number of steps that failed; *@back: the
 * caller, sleeping 100 ms after the doorbell, ran again while the racer
 * was still writing.
 */
#define LOCAL_SECS	10

static int local_round(bool *back)
{
	struct ibv_cq *cq = NULL;
	struct ibv_mw *mw = NULL;
	struct racer rc;
	struct pair p;
	uint32_t i, prod, cons;
	uint64_t t0;
	int bad = 0, err, s;

	*back = true;
	hqp_sig_all = false;
	/*
	 * The deepest SQ: the more WQEs the racer keeps ahead, the longer
	 * it may pause (a vCPU its host preempts) and still keep it fed.
	 */
	err = qp_pair(&p, &cq, (uint32_t)g.attr.max_qp_wr - 1);
	hqp_sig_all = true;
	if (err) {
		bad++;
		goto out;
	}
	mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_1);
	if (!mw) {
		diag("type 1 window: %s", strerror(errno));
		bad++;
		goto out;
	}
	for (i = 0; i <= p.a.sq.mask; i++) {
		struct rxe_send_wqe *w = (void *)(p.a.sq.buf->data +
						  ((size_t)i << p.a.sq.log2_elem));

		wqe_init(w, i, WR_BIND_MW);
		w->wr.wr.mw.mw_rkey = mw->rkey;
		w->wr.wr.mw.rkey = mw->rkey;
	}
	if (race_start(&rc, &p.a.sq, NULL, false, RACE_FULL)) {
		diag("racer not started");
		bad++;
		goto out;
	}
	atomic_store(&rc.until, now_ms() + LOCAL_SECS * 1000);
	t0 = now_ms();
	err = doorbell(p.a.qp);
	usleep(100000);
	*back = !atomic_load(&rc.ended);
	cons = atomic_load((_Atomic uint32_t *)&p.a.sq.buf->consumer_index);
	race_stop(&rc);
	bad += step("doorbell", err);
	diag("local WRs: consumer index %u when the doorbell returned, %d "
	     "completions", cons, drain_cq(cq));
	/* What the racer posted last runs to its end: the ring empties. */
	bad += step("doorbell after the racer", doorbell(p.a.qp));
	prod = atomic_load((_Atomic uint32_t *)&p.a.sq.buf->producer_index);
	for (;;) {
		cons = atomic_load((_Atomic uint32_t *)
				   &p.a.sq.buf->consumer_index);
		if (cons == prod ||
		    now_ms() - t0 > WAIT_MS + LOCAL_SECS * 1000)
			break;
		usleep(1000);
	}
	s = hqp_state(&p.a);
	diag("local WRs: done after %llu ms%s; %lu index "
	     "writes, the kernel's index seen moving %lu times; ring %s, "
	     "QP state %d", (unsigned long long)(now_ms() - t0),
	     *back ? "" : " (the racer had stopped)",
	     atomic_load(&rc.writes), rc.seen,
	     cons == prod ? "drained" : "not drained", s);
	if (cons != prod || s != IBV_QPS_RTS)
		bad++;
out:
	if (mw)
		bad += step("dealloc window", ibv_dealloc_mw(mw));
	pair_free(&p);
	if (cq)
		ibv_destroy_cq(cq);
	return bad;
}

/* The device still moves data: a SEND on a fresh pair. */
static void still_works(void)
{
	struct ibv_wc wc;
	struct pair p;
	int s = -1;

	if (pair_new(&p, IBV_QPT_RC, &qcap, 4) == 0) {
		sends(&p, 1);
		if (wait_send_wc(&p.a, &wc, WAIT_MS) == 1)
			s = wc.status;
		pair_free(&p);
	}
	tap(s == IBV_WC_SUCCESS, "c) a SEND on a new QP pair afterwards: %s",
	    st(s));
}

int sc_race(void)
{
	int i, bad, more, excess;
	bool back;

	for (i = 0, bad = 0, more = 0; i < ROUNDS; i++) {
		bad += qp_round(i % RACE_MODES, &excess);
		more += excess;
	}
	tap(!bad, "c) SQ/RQ producer index rewritten during ERR, doorbell in "
	    "ERR, RESET and destroy: %d rounds, every verb returned 0 (%d "
	    "failed)", ROUNDS, bad);
	tap(!more, "c) each flush walks a ring once: no more completions than "
	    "the rings hold (%d more)", more);
	for (i = 0, bad = 0; i < ROUNDS; i++)
		bad += srq_round(i % RACE_MODES);
	tap(!bad, "c) SRQ producer index rewritten while SENDs arrive and "
	    "it is destroyed: %d rounds, EBUSY while in use, then 0 (%d "
	    "failed)", ROUNDS, bad);
	for (i = 0, bad = 0; i < ROUNDS; i++)
		bad += cq_round(i % RACE_MODES);
	tap(!bad, "c) CQ consumer index rewritten during completions, flush "
	    "and destroy: %d rounds, every verb returned 0 (%d failed)",
	    ROUNDS, bad);
	for (main_cpu = 0, bad = 0, more = 0; main_cpu < 2; main_cpu++) {
		bad += local_round(&back);
		more += !back;
	}
	main_cpu = 0;
	tap(!bad, "c) a ring of local work requests kept full in RTS: every "
	    "verb returned 0, the ring drains, the QP stays in RTS (%d "
	    "failed)", bad);
	tap(!more, "c) a ring of local work requests kept full in RTS: the "
	    "poster runs again while the ring is still being filled (%d of "
	    "2 rounds did not)", more);
	still_works();
	return 0;
}
