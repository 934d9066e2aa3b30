// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * d) Objects destroyed while traffic flows.
 *
 * A streaming thread keeps a QP's send queue full (RC RDMA WRITEs and
 * SENDs, or raw UD SENDs) and polls its completions; the main thread
 * destroys what the stream depends on: the target MR, the responder QP,
 * a bound memory window, the AH, the SRQ.  Also: QPs destroyed with WQEs
 * in flight (while ACKs and READ responses arrive), a CQ that a QP still
 * uses, an MR with a bound window, an SRQ with a QP, and processes that
 * exit or are killed with traffic in flight.
 *
 * Expected: destroying an object in use returns EBUSY (CQ with a QP, MR
 * with a bound window, SRQ with a QP: ib_core and IBTA 10.6.7.2.4); every
 * other destroy returns 0 at once; the stream ends with an error
 * completion (remote access error, retries exceeded, local QP operation
 * error for a destroyed AH) and no WQE is left without a completion; the
 * processes are gone within the bound; the device still works.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostile.h"

#define S(x)		(1u << IBV_WC_##x)
#define DEPTH		16
#define WARMUP		20	/* successes before the destroy */
#define MAX_OK		4000	/* a stream that never fails stops here */

struct stream {
	struct hqp *q;
	struct pair *p;
	int (*post)(struct stream *s, uint64_t n);
	uint32_t rkey;		/* RC: target R_Key (MR or window) */
	uint32_t ah_num;	/* UD */
	uint32_t dqpn;		/* UD */
	atomic_int ok;
	atomic_int err;
	int first_err;		/* status of the first error completion */
	int left;		/* WQEs without a completion at the end */
	pthread_t thread;
};

/* RC: 4 KiB RDMA WRITEs and 64-byte SENDs, alternately. */
static int post_rc(struct stream *s, uint64_t n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->p->ma.p,
		.length = (n & 1) ? 64 : 4096, .lkey = s->p->ma.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = n, .sg_list = &sge, .num_sge = 1,
		.opcode = (n & 1) ? IBV_WR_SEND : IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = (uintptr_t)s->p->mb.p,
			     .rkey = s->rkey },
	};

	return post_wr(s->q, &wr);
}

/* RC: 64 KiB RDMA READs. */
static int post_read(struct stream *s, uint64_t n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->p->ma.p, .length = BUF_LEN,
		.lkey = s->p->ma.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = n, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ,
		.wr.rdma = { .remote_addr = (uintptr_t)s->p->mb.p,
			     .rkey = s->rkey },
	};

	return post_wr(s->q, &wr);
}

/* UD: raw SENDs through an AH number (the AH object may be gone). */
static int post_ud(struct stream *s, uint64_t n)
{
	struct rxe_send_wqe *w = sq_next(s->q);

	if (!w)
		return ENOMEM;
	w->wr.wr_id = n;
	w->wr.opcode = WR_SEND;
	w->wr.wr.ud.remote_qpn = s->dqpn;
	w->wr.wr.ud.remote_qkey = QKEY;
	w->wr.wr.ud.ah_num = s->ah_num;
	w->dma.num_sge = 1;
	w->dma.length = 64;
	w->dma.sge[0].addr = (uintptr_t)s->p->ma.p;
	w->dma.sge[0].length = 64;
	w->dma.sge[0].lkey = s->p->ma.mr->lkey;
	return sq_commit(s->q);
}

/* Count one send completion; false once the stream should stop. */
static bool stream_wc(struct stream *s, const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_SUCCESS) {
		atomic_fetch_add(&s->ok, 1);
		return true;
	}
	if (atomic_fetch_add(&s->err, 1) == 0)
		s->first_err = wc->status;
	return false;
}

static void *stream_thread(void *arg)
{
	struct stream *s = arg;
	uint64_t n = 0, end = now_ms() + 4 * WAIT_MS, idle = now_ms();
	int out = 0, i, k;
	bool go = true;
	struct ibv_wc wc[16];

	while (now_ms() < end && (go || out > 0)) {
		while (go && out < DEPTH && s->post(s, n) == 0) {
			n++;
			out++;
		}
		k = ibv_poll_cq(s->q->cq, 16, wc);
		for (i = 0; i < k; i++) {
			if (wc[i].opcode & IBV_WC_RECV)
				continue;
			out--;
			go = stream_wc(s, &wc[i]) && go &&
			     atomic_load(&s->ok) < MAX_OK;
		}
		if (k > 0)
			idle = now_ms();
		else if (!go && now_ms() > idle + WAIT_MS)
			break;	/* no completion for the rest */
		else
			usleep(100);
	}
	s->left = out;
	return NULL;
}

static int stream_start(struct stream *s)
{
	atomic_init(&s->ok, 0);
	atomic_init(&s->err, 0);
	s->first_err = -1;
	return pthread_create(&s->thread, NULL, stream_thread, s);
}

/* Wait for @n successes (or an error); false if neither came. */
static bool stream_warm(struct stream *s, int n)
{
	uint64_t end = now_ms() + WAIT_MS;

	while (now_ms() < end) {
		if (atomic_load(&s->ok) >= n || atomic_load(&s->err))
			return true;
		usleep(1000);
	}
	return false;
}

/* Join; true if it ended with an error status in @want, nothing left. */
static bool stream_end(struct stream *s, uint32_t want, const char *what)
{
	bool good;

	pthread_join(s->thread, NULL);
	good = s->first_err >= 0 && (want & (1u << s->first_err)) &&
	       s->left == 0;
	if (!good)
		diag("%s: %d successes, first error %s, %d WQEs without a "
		     "completion", what, atomic_load(&s->ok), st(s->first_err),
		     s->left);
	return good;
}

static const struct ibv_qp_cap scap = {
	.max_send_wr = DEPTH, .max_recv_wr = 16, .max_send_sge = 1,
	.max_recv_sge = 1,
};

#define RC_ENDS	(S(REM_ACCESS_ERR) | S(REM_OP_ERR) | S(REM_INV_REQ_ERR) | \
		 S(RETRY_EXC_ERR) | S(RNR_RETRY_EXC_ERR) | S(WR_FLUSH_ERR))

static bool zero(const char *what, int err)
{
	if (err)
		diag("%s: %s", what, strerror(err));
	return !err;
}

/* The target MR, then the responder QP, go while WRITEs and SENDs flow. */
static void mr_and_qp(void)
{
	struct stream s = { .post = post_rc };
	struct pair p;
	bool good = true;

	if (pair_new(&p, IBV_QPT_RC, &scap, 256)) {
		tap(false, "d) RC pair for the stream");
		return;
	}
	s.q = &p.a;
	s.p = &p;
	s.rkey = p.mb.mr->rkey;
	if (stream_start(&s)) {
		pair_free(&p);
		return;
	}
	good &= stream_warm(&s, WARMUP);
	good &= zero("dereg of the target MR", ibv_dereg_mr(p.mb.mr));
	p.mb.mr = NULL;
	good &= zero("destroy of the responder QP", ibv_destroy_qp(p.b.qp));
	p.b.qp = NULL;
	good &= stream_end(&s, RC_ENDS, "MR/QP stream");
	tap(good, "d) RC WRITE+SEND stream: target MR deregistered, then the "
	    "responder QP destroyed: both return 0, the stream ends with %s",
	    st(s.first_err));
	tap(ibv_destroy_cq(p.a.cq) == EBUSY,
	    "d) destroy of a CQ its QP still uses: EBUSY");
	pair_free(&p);
}

/* QPs destroyed with WQEs in flight, on either side. */
static void in_flight(void)
{
	struct ibv_wc wc;
	struct pair p;
	int i, bad = 0, s = -1;
	struct stream st_r = { .post = post_read };

	if (pair_new(&p, IBV_QPT_RC, &scap, 256)) {
		tap(false, "d) RC pair for WQEs in flight");
		return;
	}
	/* The requester goes while ACKs come back (the completer kicks it). */
	for (i = 0; i < 8; i++) {
		struct stream t = { .q = &p.a, .p = &p, .rkey = p.mb.mr->rkey };
		int k;

		for (k = 0; k < DEPTH; k++)
			post_rc(&t, k);
		hqp_free(&p.a);
		bad += hqp_new(&p.a, p.pd, IBV_QPT_RC, &scap, NULL, NULL) != 0;
		bad += pair_reconnect(&p) != 0;
	}
	tap(!bad, "d) 8 requester QPs destroyed with %d WRITEs/SENDs in "
	    "flight: every verb returned 0", DEPTH);
	/* The responder goes while it answers READs. */
	st_r.q = &p.a;
	st_r.p = &p;
	st_r.rkey = p.mb.mr->rkey;
	for (i = 0; i < DEPTH; i++)
		post_read(&st_r, i);
	bad = !zero("destroy of the responder", ibv_destroy_qp(p.b.qp));
	p.b.qp = NULL;
	for (i = 0; i < DEPTH; i++) {
		if (wait_send_wc(&p.a, &wc, WAIT_MS) != 1) {
			bad++;
			break;
		}
		s = wc.status;
	}
	tap(!bad, "d) responder QP destroyed while it answers %d READs of "
	    "64 KiB: 0, and each READ completes (%d did not; last: %s)",
	    DEPTH, DEPTH - i, st(s));
	pair_free(&p);
}

/* A type 2 window of b over mb, bound by b's own raw BIND_MW WQE. */
static struct ibv_mw *bind_window(struct pair *p, uint32_t *rkey)
{
	struct ibv_mw *mw = ibv_alloc_mw(p->pd, IBV_MW_TYPE_2);
	struct rxe_send_wqe *w;
	struct ibv_wc wc;

	if (!mw) {
		diag("ibv_alloc_mw: %s", strerror(errno));
		return NULL;
	}
	*rkey = (mw->rkey & ~0xffu) | ((mw->rkey + 1) & 0xff);
	w = sq_next(&p->b);
	if (!w)
		goto err;
	w->wr.wr_id = 0xb1;
	w->wr.opcode = WR_BIND_MW;
	w->wr.wr.mw.addr = (uintptr_t)p->mb.p;
	w->wr.wr.mw.length = p->mb.len;
	w->wr.wr.mw.mr_lkey = p->mb.mr->lkey;
	w->wr.wr.mw.mw_rkey = mw->rkey;
	w->wr.wr.mw.rkey = *rkey;
	w->wr.wr.mw.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (sq_commit(&p->b) || wait_send_wc(&p->b, &wc, WAIT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS) {
		diag("BIND_MW did not succeed");
		goto err;
	}
	return mw;
err:
	ibv_dealloc_mw(mw);
	return NULL;
}

/* A bound window pins its MR; the window goes while WRITEs use it. */
static void window(void)
{
	struct stream s = { .post = post_rc };
	struct ibv_mw *mw;
	struct pair p;
	bool good = true;
	int err;

	if (pair_new(&p, IBV_QPT_RC, &scap, 256)) {
		tap(false, "d) RC pair for the window stream");
		return;
	}
	mw = bind_window(&p, &s.rkey);
	if (!mw) {
		tap(false, "d) type 2 memory window bound");
		goto out;
	}
	s.q = &p.a;
	s.p = &p;
	if (stream_start(&s)) {
		ibv_dealloc_mw(mw);
		goto out;
	}
	good &= stream_warm(&s, WARMUP);
	err = ibv_dereg_mr(p.mb.mr);
	tap(err == EBUSY, "d) dereg of an MR with a bound window: EBUSY (%s)",
	    strerror(err));
	if (!err)
		p.mb.mr = NULL;
	good &= zero("dealloc of the window", ibv_dealloc_mw(mw));
	good &= stream_end(&s, RC_ENDS, "window stream");
	tap(good && s.ok >= WARMUP, "d) WRITE+SEND stream through a window, "
	    "the window deallocated: 0, the stream ends with %s",
	    st(s.first_err));
	if (p.mb.mr)
		tap(zero("dereg", ibv_dereg_mr(p.mb.mr)),
		    "d) the MR deregisters once its window is gone");
	p.mb.mr = NULL;
out:
	pair_free(&p);
}

/* The AH goes while UD SENDs use its number. */
static void ah(void)
{
	struct stream s = { .post = post_ud };
	struct ibv_ah *ah;
	struct pair p;
	bool good = true;

	if (pair_new(&p, IBV_QPT_UD, &scap, 256)) {
		tap(false, "d) UD pair for the AH stream");
		return;
	}
	ah = ah_new(p.pd);
	if (!ah || ah_num_of(&p.a, ah, &s.ah_num)) {
		tap(false, "d) AH and its number");
		goto out;
	}
	s.q = &p.a;
	s.p = &p;
	s.dqpn = p.b.qp->qp_num;
	if (stream_start(&s))
		goto out;
	good &= stream_warm(&s, WARMUP);
	good &= zero("destroy of the AH", ibv_destroy_ah(ah));
	good &= stream_end(&s, S(LOC_QP_OP_ERR), "AH stream");
	tap(good, "d) UD SEND stream, its AH destroyed: 0, the next SEND "
	    "completes with %s", st(s.first_err));
out:
	pair_free(&p);
}

/* The QP of an SRQ goes while SENDs arrive; the SRQ is busy till then. */
static void srq(void)
{
	struct stream s = { .post = post_rc };
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 256,
						  .max_sge = 1 } };
	struct ibv_srq *srq;
	struct pair p;
	bool good = true;
	int i, err;

	if (pair_new(&p, IBV_QPT_RC, &scap, 0))
		return;
	srq = ibv_create_srq(p.pd, &ia);
	hqp_free(&p.b);
	if (!srq || hqp_new(&p.b, p.pd, IBV_QPT_RC, &scap, srq, NULL) ||
	    pair_reconnect(&p)) {
		tap(false, "d) SRQ and its QP");
		goto out;
	}
	for (i = 0; i < 255; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)p.mb.p, .length = 4096,
			.lkey = p.mb.mr->lkey,
		};
		struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		ibv_post_srq_recv(srq, &wr, &bad);
	}
	s.q = &p.a;
	s.p = &p;
	s.rkey = p.mb.mr->rkey;
	if (stream_start(&s))
		goto out;
	good &= stream_warm(&s, WARMUP);
	err = ibv_destroy_srq(srq);
	tap(err == EBUSY, "d) destroy of an SRQ a QP uses: EBUSY (%s)",
	    strerror(err));
	if (!err)
		srq = NULL;
	good &= zero("destroy of the SRQ's QP", ibv_destroy_qp(p.b.qp));
	p.b.qp = NULL;
	good &= stream_end(&s, RC_ENDS, "SRQ stream");
	if (srq)
		good &= zero("destroy of the SRQ", ibv_destroy_srq(srq));
	srq = NULL;
	tap(good, "d) SEND stream into an SRQ, its QP destroyed, then the "
	    "SRQ: 0, the stream ends with %s", st(s.first_err));
out:
	if (srq)
		ibv_destroy_srq(srq);
	pair_free(&p);
}

/*
 * Child: its own context, a pair, a burst in flight, then gone: at once
 * (exit), or when the parent kills it (@wait).
 */
static void child_burst(int wfd, bool wait)
{
	struct stream t;
	struct pair p;
	int k;

	/* The parent's context stays as it is; a new one of its own. */
	g.ctx = NULL;
	if (env_open(g.dev) || pair_new(&p, IBV_QPT_RC, &scap, 256))
		_exit(3);
	t = (struct stream){ .q = &p.a, .p = &p, .rkey = p.mb.mr->rkey };
	for (k = 0; k < DEPTH; k++)
		post_rc(&t, k);
	if (write(wfd, "x", 1) != 1)
		_exit(4);
	while (wait)
		pause();
	_exit(0);	/* everything still open, WQEs in flight */
}

/* Reap @pid within the bound.  Return: its wait status, or -1. */
static int reap(pid_t pid)
{
	uint64_t end = now_ms() + WAIT_MS;
	int status;

	while (now_ms() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	return -1;
}

static void exits(bool killed)
{
	int fd[2], status;
	char c;
	pid_t pid;

	if (pipe(fd))
		return;
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		child_burst(fd[1], killed);
	}
	close(fd[1]);
	if (read(fd[0], &c, 1) != 1)
		diag("the child did not get its WQEs posted");
	if (killed && pid > 0)
		kill(pid, SIGKILL);
	close(fd[0]);
	status = pid > 0 ? reap(pid) : -1;
	tap(killed ? status >= 0 && WIFSIGNALED(status) :
		     status >= 0 && WIFEXITED(status) && !WEXITSTATUS(status),
	    "d) a process %s with WQEs in flight and every object open is "
	    "gone within %d s (status %#x)", killed ? "killed" : "exiting",
	    WAIT_MS / 1000, status);
}

static void still_works(void)
{
	struct ibv_wc wc;
	struct stream t;
	struct pair p;
	int s = -1;

	if (pair_new(&p, IBV_QPT_RC, &scap, 4) == 0) {
		t = (struct stream){ .q = &p.a, .p = &p,
				     .rkey = p.mb.mr->rkey };
		post_rc(&t, 1);
		if (wait_send_wc(&p.a, &wc, WAIT_MS) == 1)
			s = wc.status;
		pair_free(&p);
	}
	tap(s == IBV_WC_SUCCESS, "d) a SEND on a new QP pair afterwards: %s",
	    st(s));
}

int sc_destroy(void)
{
	mr_and_qp();
	in_flight();
	window();
	ah();
	srq();
	exits(false);
	exits(true);
	still_works();
	return 0;
}
