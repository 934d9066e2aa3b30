// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * e) Objects of another PD and of another process.
 *
 * A child process (a context of its own) creates a PD with an AH, an MR
 * (remote read and write, a known pattern) and a type 2 memory window,
 * and hands their numbers to the parent over a pipe.  The parent's QPs,
 * all in its PD 1, then use them, and objects of its own PD 2:
 *  - a UD SEND through an AH of PD 2 (the provider's post) and through
 *    the child's AH number (a raw WQE): IB_WC_LOC_QP_OP_ERR, and nothing
 *    reaches the receiver (a valid SEND after it is the first to arrive);
 *  - a SEND from an lkey of PD 2 and from the child's lkey:
 *    IB_WC_LOC_PROT_ERR;
 *  - BIND_MW of a window of PD 2 and of the child's window:
 *    IB_WC_MW_BIND_ERR;
 *  - RDMA WRITE and READ with an R_Key of PD 2 and with the child's R_Key
 *    (the responder QP is in PD 1): IB_WC_REM_ACCESS_ERR, the target
 *    bytes unchanged (the child checks its own), no byte of them read.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostile.h"

#define PATTERN		0xc5

struct child_info {
	uint32_t ah_num;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t mw_rkey;
	uint64_t addr;
};

struct child {
	pid_t pid;
	int rfd, wfd;
	struct child_info info;
};

/* Read exactly @len bytes within WAIT_MS.  Return: 0 or -1. */
static int read_bounded(int fd, void *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		if (poll(&p, 1, WAIT_MS) != 1)
			return -1;
		n = read(fd, (char *)buf + got, len - got);
		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

static bool all(const uint8_t *p, size_t len, uint8_t v)
{
	while (len--)
		if (*p++ != v)
			return false;
	return true;
}

/* The child: objects of its own, their numbers to the parent. */
static void child_main(int rfd, int wfd)
{
	struct child_info ci = {};
	struct ibv_qp_cap cap = {
		.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
		.max_recv_sge = 1,
	};
	struct ibv_pd *pd;
	struct ibv_ah *ah;
	struct ibv_mw *mw;
	struct hbuf b;
	struct hqp ud;
	char c = 0;

	g.ctx = NULL;
	if (env_open(g.dev))
		_exit(3);
	pd = ibv_alloc_pd(g.ctx);
	if (!pd || hbuf_new(&b, pd, BUF_LEN, 0) ||
	    hqp_new(&ud, pd, IBV_QPT_UD, &cap, NULL, NULL) ||
	    hqp_connect(&ud, 0))
		_exit(4);
	memset(b.p, PATTERN, b.len);
	ah = ah_new(pd);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!ah || ah_num_of(&ud, ah, &ci.ah_num) || !mw)
		_exit(5);
	ci.lkey = b.mr->lkey;
	ci.rkey = b.mr->rkey;
	ci.mw_rkey = mw->rkey;
	ci.addr = (uintptr_t)b.p;
	if (write(wfd, &ci, sizeof(ci)) != sizeof(ci))
		_exit(6);
	/* The parent's turn; then report whether the MR kept its bytes. */
	if (read_bounded(rfd, &c, 1) == 0) {
		c = all(b.p, b.len, PATTERN) ? 'y' : 'n';
		if (write(wfd, &c, 1) != 1)
			_exit(7);
	}
	_exit(0);
}

static int child_start(struct child *ch)
{
	int to[2], from[2];

	if (pipe(to) || pipe(from))
		return -1;
	ch->pid = fork();
	if (ch->pid < 0)
		return -1;
	if (ch->pid == 0) {
		close(to[1]);
		close(from[0]);
		child_main(to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	ch->wfd = to[1];
	ch->rfd = from[0];
	if (read_bounded(ch->rfd, &ch->info, sizeof(ch->info))) {
		diag("the child did not report its objects");
		return -1;
	}
	return 0;
}

/* Tell the child we are done; its verdict on its MR ('y': intact). */
static char child_finish(struct child *ch)
{
	char c = 'x';

	if (write(ch->wfd, "d", 1) != 1 || read_bounded(ch->rfd, &c, 1))
		c = '?';
	close(ch->wfd);
	close(ch->rfd);
	waitpid(ch->pid, NULL, 0);
	return c;
}

/* Post @wr on a (provider) and return its completion status. */
static int one(struct pair *p, struct ibv_send_wr *wr)
{
	struct ibv_wc wc;
	int err;

	if (hqp_state(&p->a) != IBV_QPS_RTS && pair_reconnect(p))
		return -1;
	err = post_wr(&p->a, wr);
	if (err) {
		diag("post: %s", strerror(err));
		return -1;
	}
	return wait_send_wc(&p->a, &wc, WAIT_MS) == 1 ? (int)wc.status : -1;
}

/* The same for a raw WQE the caller filled in (sq_next() .. here). */
static int one_raw(struct pair *p)
{
	struct ibv_wc wc;

	if (sq_commit(&p->a))
		return -1;
	return wait_send_wc(&p->a, &wc, WAIT_MS) == 1 ? (int)wc.status : -1;
}

/*
 * UD: after a SEND that must not leave, a valid one with immediate
 * @good: the receiver's first completion must be that one.
 */
static bool ud_nothing_sent(struct pair *p, struct ibv_ah *ah, uint32_t good)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->ma.p, .length = 32,
		.lkey = p->ma.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 0x900d, .opcode = IBV_WR_SEND_WITH_IMM,
		.sg_list = &sge, .num_sge = 1, .imm_data = htonl(good),
		.wr.ud = { .ah = ah, .remote_qpn = p->b.qp->qp_num,
			   .remote_qkey = QKEY },
	};
	struct ibv_wc wc;
	int s;

	if (hqp_state(&p->a) != IBV_QPS_RTS && hqp_connect(&p->a, 0))
		return false;
	s = one(p, &wr);
	if (s != IBV_WC_SUCCESS) {
		diag("the valid UD SEND after it: %s", st(s));
		return false;
	}
	if (wait_wc(p->b.cq, &wc, WAIT_MS) != 1)
		return false;
	if (ntohl(wc.imm_data) != good)
		diag("the receiver's first completion: %s, immediate %#x",
		     st(wc.status), ntohl(wc.imm_data));
	drain_cq(p->b.cq);
	return wc.status == IBV_WC_SUCCESS && ntohl(wc.imm_data) == good;
}

static void ud_cases(struct child *ch, struct ibv_pd *pd2)
{
	static const struct ibv_qp_cap cap = {
		.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
		.max_recv_sge = 1,
	};
	struct ibv_ah *ah1 = NULL, *ah2 = NULL;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct rxe_send_wqe *w;
	struct pair p;
	int s;

	if (pair_new(&p, IBV_QPT_UD, &cap, 64)) {
		tap(false, "e) UD pair");
		return;
	}
	ah1 = ah_new(p.pd);
	ah2 = ah_new(pd2);
	if (!ah1 || !ah2)
		goto out;
	sge = (struct ibv_sge){ .addr = (uintptr_t)p.ma.p, .length = 32,
				.lkey = p.ma.mr->lkey };
	wr = (struct ibv_send_wr){
		.wr_id = 0xbad, .opcode = IBV_WR_SEND_WITH_IMM,
		.sg_list = &sge, .num_sge = 1, .imm_data = htonl(0xbad),
		.wr.ud = { .ah = ah2, .remote_qpn = p.b.qp->qp_num,
			   .remote_qkey = QKEY },
	};
	s = one(&p, &wr);
	tap(s == IBV_WC_LOC_QP_OP_ERR, "e) UD SEND through an AH of another "
	    "PD: %s", st(s));
	tap(ud_nothing_sent(&p, ah1, 0x1001), "e) UD SEND through an AH of "
	    "another PD: nothing reached the receiver");

	w = sq_next(&p.a);
	if (!w)
		goto out;
	w->wr.wr_id = 0xbad2;
	w->wr.opcode = WR_SEND_IMM;
	w->wr.ex.imm_data = htonl(0xbad2);
	w->wr.wr.ud.remote_qpn = p.b.qp->qp_num;
	w->wr.wr.ud.remote_qkey = QKEY;
	w->wr.wr.ud.ah_num = ch->info.ah_num;
	s = one_raw(&p);
	tap(s == IBV_WC_LOC_QP_OP_ERR, "e) UD SEND through another process's "
	    "AH number (%u): %s", ch->info.ah_num, st(s));
	tap(ud_nothing_sent(&p, ah1, 0x1002), "e) UD SEND through another "
	    "process's AH: nothing reached the receiver");
out:
	if (ah1)
		ibv_destroy_ah(ah1);
	if (ah2)
		ibv_destroy_ah(ah2);
	pair_free(&p);
}

/* SEND from (@lkey, @addr): LOC_PROT_ERR. */
static void lkey_case(struct pair *p, uint32_t lkey, uint64_t addr,
		      const char *whose)
{
	struct ibv_sge sge = { .addr = addr, .length = 64, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x1c, .opcode = IBV_WR_SEND, .sg_list = &sge,
		.num_sge = 1,
	};
	int s = one(p, &wr);

	tap(s == IBV_WC_LOC_PROT_ERR, "e) SEND from an lkey of %s: %s", whose,
	    st(s));
}

/* BIND_MW of window @mw_rkey over ma: MW_BIND_ERR. */
static void bind_case(struct pair *p, uint32_t mw_rkey, const char *whose)
{
	struct rxe_send_wqe *w;
	int s = -1;

	if (hqp_state(&p->a) != IBV_QPS_RTS && pair_reconnect(p))
		goto out;
	w = sq_next(&p->a);
	if (!w)
		goto out;
	w->wr.wr_id = 0xb1d;
	w->wr.opcode = WR_BIND_MW;
	w->wr.wr.mw.addr = (uintptr_t)p->ma.p;
	w->wr.wr.mw.length = 4096;
	w->wr.wr.mw.mr_lkey = p->ma.mr->lkey;
	w->wr.wr.mw.mw_rkey = mw_rkey;
	w->wr.wr.mw.rkey = (mw_rkey & ~0xffu) | ((mw_rkey + 7) & 0xff);
	w->wr.wr.mw.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	s = one_raw(p);
out:
	tap(s == IBV_WC_MW_BIND_ERR, "e) BIND_MW of a window of %s: %s", whose,
	    st(s));
}

/* WRITE and READ with (@rkey, @addr) through b (PD 1): REM_ACCESS_ERR. */
static void rkey_case(struct pair *p, uint32_t rkey, uint64_t addr,
		      const char *whose, const uint8_t *local)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->ma.p, .length = 64,
		.lkey = p->ma.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 0x3c, .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge,
		.num_sge = 1, .wr.rdma = { .remote_addr = addr, .rkey = rkey },
	};
	int s;

	memset(p->ma.p, 0x11, 64);
	s = one(p, &wr);
	tap(s == IBV_WC_REM_ACCESS_ERR, "e) RDMA WRITE with an R_Key of %s: "
	    "%s", whose, st(s));
	if (local)
		tap(all(local, 64, PATTERN), "e) RDMA WRITE with an R_Key of "
		    "%s: target bytes unchanged", whose);
	memset(p->ma.p, 0, 64);
	wr.wr_id = 0x3d;
	wr.opcode = IBV_WR_RDMA_READ;
	s = one(p, &wr);
	tap(s == IBV_WC_REM_ACCESS_ERR && all(p->ma.p, 64, 0),
	    "e) RDMA READ with an R_Key of %s: %s, no byte read", whose,
	    st(s));
}

static void rc_cases(struct child *ch, struct ibv_pd *pd2)
{
	static const struct ibv_qp_cap cap = {
		.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
		.max_recv_sge = 1,
	};
	struct ibv_mw *mw2;
	struct hbuf m2;
	struct pair p;

	if (pair_new(&p, IBV_QPT_RC, &cap, 64)) {
		tap(false, "e) RC pair");
		return;
	}
	if (hbuf_new(&m2, pd2, BUF_LEN, 0)) {
		pair_free(&p);
		return;
	}
	memset(m2.p, PATTERN, m2.len);
	lkey_case(&p, m2.mr->lkey, (uintptr_t)m2.p, "another PD");
	lkey_case(&p, ch->info.lkey, ch->info.addr, "another process");
	mw2 = ibv_alloc_mw(pd2, IBV_MW_TYPE_2);
	if (mw2) {
		bind_case(&p, mw2->rkey, "another PD");
		ibv_dealloc_mw(mw2);
	} else {
		tap(false, "e) type 2 window in PD 2: %s", strerror(errno));
	}
	bind_case(&p, ch->info.mw_rkey, "another process");
	rkey_case(&p, m2.mr->rkey, (uintptr_t)m2.p, "another PD", m2.p);
	rkey_case(&p, ch->info.rkey, ch->info.addr, "another process", NULL);
	hbuf_free(&m2);
	pair_free(&p);
}

int sc_cross(void)
{
	struct child ch;
	struct ibv_pd *pd2;
	char c;

	if (child_start(&ch)) {
		tap(false, "e) a child process with objects of its own");
		return 0;
	}
	pd2 = ibv_alloc_pd(g.ctx);
	if (pd2) {
		ud_cases(&ch, pd2);
		rc_cases(&ch, pd2);
		ibv_dealloc_pd(pd2);
	}
	c = child_finish(&ch);
	tap(c == 'y', "e) the other process's MR kept its bytes (%c)", c);
	return 0;
}
