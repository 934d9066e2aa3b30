/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce-vfuzz: shared declarations (see vfuzz_main.c for the overview).
 */
#ifndef VFUZZ_H
#define VFUZZ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* Each argument evaluated once: they are often random draws. */
#define MIN(a, b) ({ __typeof__((a) + (b)) _a = (a), _b = (b); \
		     _a < _b ? _a : _b; })
#define MAX(a, b) ({ __typeof__((a) + (b)) _a = (a), _b = (b); \
		     _a > _b ? _a : _b; })

/* ---- random numbers: splitmix64, one generator per thread ---- */
struct rng {
	uint64_t s;
};

extern __thread struct rng *trng;
uint64_t rng_next(struct rng *r);
uint64_t rnd(void);
uint32_t below(uint32_t n);			/* [0, n), 0 if n == 0 */
uint32_t rnd_range(uint32_t lo, uint32_t hi);	/* [lo, hi] */
bool chance(unsigned int pct);
uint32_t bval(uint32_t max);	/* 0, 1, max-1, max, max+1, ... or random */
uint32_t small_or(uint32_t max);	/* mostly 1..16, sometimes bval() */
void rnd_fill(void *p, size_t n);

/* ---- the object pool ---- */
enum kind { K_CTX, K_CH, K_PD, K_CQ, K_SRQ, K_QP, K_MR, K_MW, K_AH, NKIND };

enum ostate {
	S_FREE,
	S_LIVE,
	S_EXCL,		/* one thread uses it alone (destroy, remap) */
	S_ZOMBIE,	/* kernel object destroyed behind the provider's back */
};

#define NCTX	3
#define NCH	4
#define NPD	8
#define NCQ	12
#define NSRQ	6
#define NQP	24
#define NMR	32
#define NMW	16
#define NAH	16

/* A work or completion ring as the provider mapped it. */
struct ring {
	struct rxe_queue_buf *q;	/* NULL: not found */
	void *map;			/* the mapping that holds it */
	size_t maplen;
	uint32_t mask;			/* as created (the header is user memory) */
	uint32_t esz;			/* element size, bytes */
};

struct hdr {
	int state;
	int busy;	/* users between pick() and put() */
	int ctx;	/* context slot */
	int pd;		/* PD slot, or -1 */
	bool inh;	/* fork child: inherited from the parent */
};

struct ctx_o {
	struct hdr h;
	struct ibv_context *c;
};

struct ch_o {
	struct hdr h;
	struct ibv_comp_channel *ch;
};

struct pd_o {
	struct hdr h;
	struct ibv_pd *pd;
};

struct cq_o {
	struct hdr h;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;	/* created with ibv_create_cq_ex() */
	int ch;
	struct ring r;
	bool taint;	/* the fuzzer wrote its indices or entries */
	uint64_t wc_flags;	/* ibv_create_cq_ex()'s */
};

struct srq_o {
	struct hdr h;
	struct ibv_srq *srq;
	uint32_t max_wr, max_sge;
	struct ring r;
};

struct qp_o {
	struct hdr h;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;	/* with send_ops_flags: ibv_wr_*() */
	uint64_t ops;		/* send_ops_flags */
	int type;
	int scq, rcq, srq;
	struct ibv_qp_cap cap;
	struct ring sq, rq;
	int peer;		/* connected to this QP slot, or -1 */
	uint32_t peer_qpn;
	uint32_t qkey;
};

struct mr_o {
	struct hdr h;
	struct ibv_mr *mr;
	void *map;		/* the mapping, or NULL once unmapped */
	size_t maplen;
	int memfd;		/* memfd-backed mapping, or -1 */
	char *addr;		/* registered range */
	size_t len;
	int access;
	bool ro;		/* pages mapped read-only */
};

struct mw_o {
	struct hdr h;
	struct ibv_mw *mw;
	int type;
};

struct ah_o {
	struct hdr h;
	struct ibv_ah *ah;
	uint32_t ah_num;
};

struct pool {
	struct ctx_o ctx[NCTX];
	struct ch_o ch[NCH];
	struct pd_o pd[NPD];
	struct cq_o cq[NCQ];
	struct srq_o srq[NSRQ];
	struct qp_o qp[NQP];
	struct mr_o mr[NMR];
	struct mw_o mw[NMW];
	struct ah_o ah[NAH];
};

extern struct pool P;
extern pthread_mutex_t pool_lock;
extern const char *const kind_name[NKIND];

struct hdr *hdr_of(int kind, int i);
int slot_count(int kind);
void pool_lockit(void);
void pool_unlockit(void);

/* Objects an operation holds (busy) until it ends. */
struct refs {
	int n;
	int kind[16];
	int idx[16];
};

typedef bool (*pred_fn)(int kind, int i, const void *arg);
int pick(struct refs *rf, int kind, int ctx, pred_fn pred, const void *arg);
int pick_nolock(int kind, int ctx, pred_fn pred, const void *arg);
void take(struct refs *rf, int kind, int i);
void put_all(struct refs *rf);
int free_slot(int kind);
int claim_destroy(int kind, int ctx, bool *raw);
void release_excl(int kind, int i, bool gone);
int claim_excl(int kind, int ctx);

/* ---- device facts found at start ---- */
struct devinfo {
	struct ibv_device *dev;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	int gid_v4, gid_v6;		/* RoCE v2 GID indices, -1 if none */
	union ibv_gid gv4, gv6;
	int comp_vectors;
};

extern struct devinfo D;

/* ---- options and statistics ---- */
enum mode { M_SINGLE, M_THREADS, M_FORK };

struct opts {
	uint64_t seed;
	long ops;
	int seconds;
	int watchdog;
	const char *dev;
	enum mode mode;
	int verbose;
	const char *only;	/* comma-separated op names */
	const char *skip;
	bool no_check;
	const char *repro;	/* -r: a finding's reproducer */
};

extern struct opts O;
extern bool in_child;
extern atomic_long progress;
extern atomic_long ops_done;

#define MAX_ERRNO 140
struct opstat {
	atomic_long calls;
	atomic_long ok;
	atomic_long err[MAX_ERRNO + 1];	/* [MAX_ERRNO]: other */
	atomic_long skipped;
};

/* Roles for the two-thread mode. */
#define R_POST	1	/* posts, polls */
#define R_MOD	2	/* modifies, creates, destroys */

struct op {
	const char *name;
	void (*fn)(void);
	int weight;
	int role;
	struct opstat st;
	bool off;
};

extern struct op optab[];
extern int nops;
extern __thread int cur_op;
extern __thread char cur_detail[160];

void rec(int err);		/* one verb's result for the current op */
void rec_skip(void);
void detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void finding(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void wc_seen(const struct ibv_wc *wc, bool trusted);
void event_seen(int type);
void note_qpn(uint32_t qpn);

/* ---- helpers shared by the operations ---- */
int ucmd(struct ibv_context *c, uint32_t cmd, void *body, size_t inlen,
	 size_t out_words);
void find_rings(void *obj, struct ring *first, struct ring *second);
void ring_release(struct ring *r);
void drain_events(int ctx);
void close_ctx_slot(int ctx);
void zombie_reap(int kind, int i);

/* ops */
void ops_init(void);
void op_fork_child_setup(void);
extern uint32_t dead_keys[64];
extern atomic_uint dead_key_n;
void dead_key(uint32_t key);
uint32_t any_dead_key(void);

/* the checked pair */
int check_init(void);
void check_run(void);
int check_report(void);
int check_repro(const char *name);
bool check_owns_qpn(uint32_t qpn);
void check_fini(void);

#endif /* VFUZZ_H */
