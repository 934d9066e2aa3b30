// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * f) Verbs at the boundaries tied to the same defects (the general verb
 * fuzzing is another suite's):
 *  - create_ah whose response cannot be written (the driver's part lies on
 *    a read-only page): EFAULT, and the AH number it was given is never
 *    usable, not even while the failing create runs (UD SENDs racing
 *    through that number complete with IB_WC_LOC_QP_OP_ERR, never with
 *    success);
 *  - dereg_mr racing with BIND_MW and LOCAL_INV of a window over that MR:
 *    every dereg returns 0 or EBUSY, every bind succeeds or fails with
 *    IB_WC_MW_BIND_ERR, and nothing waits forever;
 *  - a QP with every capacity 0, a raw WQE in its one ring slot: created
 *    or refused with EINVAL, and the WQE completes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "hostile.h"

#define AH_TRIES	200
#define DEREG_TRIES	60

static const struct ibv_qp_cap vcap = {
	.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
	.max_recv_sge = 1,
};

/* create_ah through write(), its response ending at a read-only page. */
static int create_ah_efault(struct ibv_pd *pd, uint8_t *resp)
{
	struct ib_uverbs_cmd_hdr hdr = {
		.command = IB_USER_VERBS_CMD_CREATE_AH,
	};
	struct ib_uverbs_create_ah cmd = {
		.pd_handle = pd->handle,
		.attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .sgid_index = g.gid_idx, .hop_limit = 64 },
		},
	};
	uint8_t buf[sizeof(hdr) + sizeof(cmd)];

	memcpy(cmd.attr.grh.dgid, g.gid.raw, 16);
	/* Core response (ah_handle) writable, the driver's part is not. */
	cmd.response = (uintptr_t)resp;
	hdr.in_words = sizeof(buf) / 4;
	hdr.out_words = (sizeof(struct ib_uverbs_create_ah_resp) +
			 sizeof(struct rxe_create_ah_resp)) / 4;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), &cmd, sizeof(cmd));
	if (write(pd->context->cmd_fd, buf, sizeof(buf)) == sizeof(buf))
		return 0;
	return errno;
}

struct ah_race {
	struct pair *p;
	atomic_uint guess;
	atomic_bool stop;
	int sent, success, other;
};

/* UD SENDs through the number the failing create gets, again and again. */
static void *ah_racer(void *arg)
{
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS };
	struct ah_race *r = arg;
	struct rxe_send_wqe *w;
	struct ibv_wc wc;

	while (!atomic_load(&r->stop)) {
		w = sq_next(&r->p->a);
		if (!w)
			break;
		w->wr.wr_id = r->sent;
		w->wr.opcode = WR_SEND;
		w->wr.wr.ud.remote_qpn = r->p->b.qp->qp_num;
		w->wr.wr.ud.remote_qkey = QKEY;
		w->wr.wr.ud.ah_num = atomic_load(&r->guess);
		if (sq_commit(&r->p->a) ||
		    wait_send_wc(&r->p->a, &wc, WAIT_MS) != 1)
			break;
		r->sent++;
		if (wc.status == IBV_WC_SUCCESS)
			r->success++;
		else if (wc.status != IBV_WC_LOC_QP_OP_ERR)
			r->other++;
		/* IBTA 10.3.1: a UD send error leaves the QP in SQE. */
		if (wc.status != IBV_WC_SUCCESS &&
		    ibv_modify_qp(r->p->a.qp, &rts, IBV_QP_STATE))
			break;
	}
	return NULL;
}

static void ah_efault(void)
{
	struct ah_race r = {};
	struct ibv_ah *ah;
	struct pair p;
	uint32_t num;
	uint8_t *pages;
	pthread_t t;
	int i, efault = 0, err = 0;

	if (pair_new(&p, IBV_QPT_UD, &vcap, 64)) {
		tap(false, "f) UD pair");
		return;
	}
	pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ah = ah_new(p.pd);
	if (pages == MAP_FAILED || mprotect(pages + 4096, 4096, PROT_READ) ||
	    !ah || ah_num_of(&p.a, ah, &num)) {
		tap(false, "f) AH, its number, a read-only page");
		goto out;
	}
	r.p = &p;
	atomic_init(&r.guess, num + 1);
	if (pthread_create(&t, NULL, ah_racer, &r))
		goto out;
	for (i = 0; i < AH_TRIES; i++) {
		err = create_ah_efault(p.pd, pages + 4096 -
				       sizeof(struct ib_uverbs_create_ah_resp));
		efault += err == EFAULT;
		/* AH numbers are handed out in turn: the next one's. */
		atomic_store(&r.guess, num + 2 + i);
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	tap(efault == AH_TRIES, "f) create_ah with an unwritable response: "
	    "EFAULT (%d of %d; last %s)", efault, AH_TRIES, strerror(err));
	tap(r.success == 0 && r.other == 0 && r.sent > 0, "f) UD SENDs "
	    "racing through the numbers of those AHs: all %d %s (%d "
	    "succeeded, %d other)", r.sent, st(IBV_WC_LOC_QP_OP_ERR),
	    r.success, r.other);
out:
	if (ah)
		ibv_destroy_ah(ah);
	if (pages != MAP_FAILED)
		munmap(pages, 8192);
	pair_free(&p);
}

struct bind_race {
	struct pair *p;
	struct ibv_mw *mw;
	atomic_uint lkey;	/* the current MR's */
	atomic_bool stop;
	int ok, bind_err, other;
};

/* One raw BIND_MW (@len > 0) or LOCAL_INV on a; its status. */
static int bind_op(struct bind_race *r, uint32_t *rkey, bool bind)
{
	struct rxe_send_wqe *w;
	struct ibv_wc wc;
	uint32_t next = (*rkey & ~0xffu) | ((*rkey + 1) & 0xff);

	if (hqp_state(&r->p->a) != IBV_QPS_RTS && pair_reconnect(r->p))
		return -1;
	w = sq_next(&r->p->a);
	if (!w)
		return -1;
	w->wr.wr_id = bind;
	if (bind) {
		w->wr.opcode = WR_BIND_MW;
		w->wr.wr.mw.addr = (uintptr_t)r->p->mb.p;
		w->wr.wr.mw.length = 4096;
		w->wr.wr.mw.mr_lkey = atomic_load(&r->lkey);
		w->wr.wr.mw.mw_rkey = *rkey;
		w->wr.wr.mw.rkey = next;
		w->wr.wr.mw.access = IBV_ACCESS_REMOTE_WRITE;
	} else {
		w->wr.opcode = WR_LOCAL_INV;
		w->wr.ex.invalidate_rkey = *rkey;
	}
	if (sq_commit(&r->p->a) || wait_send_wc(&r->p->a, &wc, WAIT_MS) != 1)
		return -1;
	if (bind && wc.status == IBV_WC_SUCCESS)
		*rkey = next;
	return wc.status;
}

static void *binder(void *arg)
{
	struct bind_race *r = arg;
	uint32_t rkey = r->mw->rkey;
	int s;

	while (!atomic_load(&r->stop)) {
		s = bind_op(r, &rkey, true);
		if (s == IBV_WC_SUCCESS) {
			r->ok++;
			bind_op(r, &rkey, false);
		} else if (s == IBV_WC_MW_BIND_ERR) {
			r->bind_err++;
		} else {
			r->other++;
			if (s < 0)
				break;
		}
	}
	return NULL;
}

static void dereg_vs_bind(void)
{
	struct bind_race r = {};
	struct ibv_mr *mr;
	struct timespec ts;
	struct pair p;
	pthread_t t;
	int i, err, busy = 0, freed = 0, bad = 0;

	if (pair_new(&p, IBV_QPT_RC, &vcap, 4)) {
		tap(false, "f) RC pair");
		return;
	}
	r.p = &p;
	r.mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2);
	if (!r.mw) {
		tap(false, "f) type 2 window: %s", strerror(errno));
		goto out;
	}
	/* mb's own MR stays; the racing MRs cover the same pages. */
	mr = ibv_reg_mr(p.pd, p.mb.p, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	if (!mr)
		goto out;
	atomic_init(&r.lkey, mr->lkey);
	if (pthread_create(&t, NULL, binder, &r))
		goto out;
	for (i = 0; i < DEREG_TRIES && mr; i++) {
		usleep(i % 4 * 300);
		err = ibv_dereg_mr(mr);
		if (err == EBUSY) {
			busy++;
			continue;
		}
		if (err) {
			diag("dereg_mr: %s", strerror(err));
			bad++;
			break;
		}
		freed++;
		mr = ibv_reg_mr(p.pd, p.mb.p, 4096, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
		if (mr)
			atomic_store(&r.lkey, mr->lkey);
	}
	atomic_store(&r.stop, true);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_MS / 1000;
	if (pthread_timedjoin_np(t, NULL, &ts)) {
		tap(false, "f) the binding thread stops");
		goto out;
	}
	tap(!bad && r.other == 0, "f) dereg_mr racing with BIND_MW/LOCAL_INV "
	    "of a window on it: %d deregistered, %d EBUSY; %d binds, %d "
	    "MW_BIND_ERR, %d other completions", freed, busy, r.ok,
	    r.bind_err, r.other);
	/* The window is unbound (LOCAL_INV) unless the last bind was left. */
	if (mr && ibv_dereg_mr(mr) == EBUSY && !ibv_dealloc_mw(r.mw)) {
		r.mw = NULL;
		ibv_dereg_mr(mr);
	}
out:
	if (r.mw)
		ibv_dealloc_mw(r.mw);
	pair_free(&p);
}

static void zero_caps(void)
{
	static const struct ibv_qp_cap zero = {};
	struct ibv_qp_cap one = vcap;
	struct rxe_send_wqe *w;
	struct ibv_wc wc;
	struct pair p;
	int s = -1;

	one.max_send_wr = 1;
	if (pair_new(&p, IBV_QPT_RC, &one, 4)) {
		tap(false, "f) RC pair");
		return;
	}
	hqp_free(&p.a);
	if (hqp_new(&p.a, p.pd, IBV_QPT_RC, &zero, NULL, NULL)) {
		tap(errno == EINVAL, "f) RC QP with every capacity 0: refused "
		    "(%s)", strerror(errno));
		goto out;
	}
	if (pair_reconnect(&p))
		goto out;
	w = sq_next(&p.a);
	if (w) {
		w->wr.wr_id = 0x2e0;
		w->wr.opcode = WR_RDMA_WRITE;
		w->wr.wr.rdma.remote_addr = (uintptr_t)p.mb.p;
		w->wr.wr.rdma.rkey = p.mb.mr->rkey;
		if (!sq_commit(&p.a) &&
		    wait_send_wc(&p.a, &wc, WAIT_MS) == 1)
			s = wc.status;
	}
	tap(s >= 0 && s != IBV_WC_WR_FLUSH_ERR, "f) RC QP with every "
	    "capacity 0 (ring of %u slots): a zero-length WRITE in it "
	    "completes: %s", p.a.sq.mask + 1, st(s));
out:
	pair_free(&p);
}

int sc_verbs(void)
{
	ah_efault();
	dereg_vs_bind();
	zero_caps();
	return 0;
}
