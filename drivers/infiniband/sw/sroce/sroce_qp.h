/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs: object, work queues in the rxe ABI layout, and the state
 * machine of IBTA vol. 1 ch. 10.3.
 */
#ifndef SROCE_QP_H
#define SROCE_QP_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "sroce/sroce_opcode.h"
#include "sroce_cc.h"
#include "sroce_av.h"
#include "sroce_mr.h"
#include "sroce_queue.h"

#define SROCE_MAX_QP		BIT(16)
#define SROCE_MIN_QPN		16	/* 0 and 1 are SMI/GSI (IBTA 3.5.7) */
#define SROCE_MAX_QP_WR		BIT(14)
#define SROCE_MAX_SGE		32
#define SROCE_MAX_INLINE	512
#define SROCE_MAX_RD_ATOMIC	128

struct sroce_cq;
struct sroce_db_hint;
struct sroce_qp;

/**
 * struct sroce_qp_ref - what the receive path finds a QP by
 * @users: the QP's own reference and one per packet being handled
 * @idle: completed when @users drops to zero
 * @qp: the QP, usable while a user is counted
 * @rcu: frees this once no receive path can still be looking at it
 *
 * ib_core frees a QP as soon as sroce_destroy_qp() returns.  Packets find
 * a QP by number (qp_xa) or by multicast group under RCU, and get this
 * small object, which outlives its QP by a grace period: a packet uses the
 * QP only while it counts itself in @users, and destroy waits for those
 * (microseconds), not for a grace period.
 */
struct sroce_qp_ref {
	refcount_t users;
	struct completion idle;
	struct sroce_qp *qp;
	struct rcu_head rcu;
};

/* qp->flags bits */
enum {
	SROCE_QP_REQ_RUNNING,	/* an instance of sroce_req_run() is active */
	SROCE_QP_REQ_PENDING,	/* the requester has work to look at */
	SROCE_QP_DYING,		/* no more timers or work (destroy/reset) */
};

/* Outstanding request PSNs a requester lets fly before waiting for ACKs. */
#define SROCE_REQ_WINDOW	128
/*
 * A long RDMA READ is asked for in requests of this many response PSNs,
 * or more when max_rd_atomic allows few requests: the window then bounds
 * READ responses in flight as it bounds WRITEs.  One request for all of
 * a long READ let a responder faster than the requester's receive path
 * overrun it, and every retry restarted the overrun (go-back-N livelock).
 */
#define SROCE_READ_CHUNK	16
/* The requester asks for an ACK at least this often (IBTA 9.7.6.1.1). */
#define SROCE_PKTS_PER_ACK	32
/*
 * Send WQEs a QP has fetched and not yet completed: the kernel copies
 * (struct sroce_swqe) are kept for these only, not for every ring slot.
 * A user QP starts with room for SROCE_SWQE_MIN and doubles it, up to
 * SROCE_SWQE_MAX, only when its requester finds them all in use: most
 * QPs never have many WQEs in flight.  A kernel QP gets them all at once.
 */
#define SROCE_SWQE_MIN		8
#define SROCE_SWQE_MAX		64

/**
 * struct sroce_swqe - kernel copy of one send WQE (STYLE rule 7)
 *
 * Taken from the ring once by the requester; the ring slot is handed back
 * to the poster only when the WQE completes.  The transport fields are the
 * requester's (written before it sends the WQE's first packet, under the
 * SQ lock); the completer reads them under the same lock.
 */
struct sroce_swqe {
	u64 wr_id;
	u32 opcode;		/* IB_WR_* (the rxe ABI uses the same numbers) */
	u32 send_flags;
	u32 ex;			/* immediate (wire order) or rkey to invalidate */
	u32 length;		/* message length in bytes */
	u32 num_sge;		/* 0 with IB_SEND_INLINE */
	u32 rkey;
	u64 raddr;
	/* Per opcode class (sroce_req_fetch() fills only its own). */
	union {
		struct {	/* atomics */
			u64 compare_add;
			u64 swap;
		};
		struct {	/* UD sends */
			u32 remote_qpn;
			u32 remote_qkey;
			u32 ah_num;
		};
		struct {	/* IB_WR_REG_MR (kernel QPs) and IB_WR_BIND_MW */
			struct ib_mr *reg_mr;
			u32 reg_key;
			u32 reg_access;
			u64 mw_addr;
			u64 mw_length;
			u32 mr_lkey;
		};
		struct {	/* FLUSH */
			u8 flush_type;
			u8 flush_level;
		};
		u32 read_chunk;	/* RDMA READ: PSNs asked for per request */
	};
	/* Transport: PSNs this WQE occupies (RC/UC). */
	u32 first_psn;
	u32 last_psn;
	bool started;		/* first packet sent (PSNs assigned) */
	bool done;		/* nothing left to wait for; complete in order */
	u8 rd_out;		/* its requests counted in req.rd_atomic */
	u8 status;		/* enum ib_wc_status when done */
	u32 resp_psn;		/* READ: next response PSN expected */
	/* SGEs (struct rxe_sge) or inline bytes */
	u64 data[];
};

/* Requester and completer state, under qp->sq.lock. */
struct sroce_req {
	u32 cur;		/* WQE the requester sends next */
	u32 fetched;		/* WQEs [head, fetched) are copied */
	u32 offset;		/* bytes of cur already sent */
	u32 psn;		/* next PSN to send */
	u32 max_psn;		/* one past the highest PSN ever sent */
	u32 acked_psn;		/* every PSN before this is acknowledged */
	u32 rd_atomic;		/* READ/atomic requests awaiting responses */
	u32 since_ack;		/* packets sent since the last AckReq */
	struct sroce_cwnd cwnd;	/* window: PSNs unacknowledged at most */
	bool tx_local;		/* the last packet was delivered locally */
	u8 tx_slot;		/* sroce_tx_alloc_held()'s, of the last packet */
	u8 retry;		/* remaining retries (retry_cnt) */
	u8 rnr_retry;		/* remaining RNR retries (7: infinite) */
	bool rnr_wait;		/* waiting out an RNR NAK's timer */
	bool rto_armed;		/* the transport timer counts to rto_deadline */
	unsigned long rto_deadline;	/* jiffies (sroce_comp_set_deadline()) */
	bool gap_set;		/* resent from gap_psn for a gap in answers */
	u32 gap_psn;
	bool swqe_grow;		/* copies all in use; more may be allocated */
	size_t swqe_size;
	u32 swqe_mask;		/* copies - 1: ring index -> copy */
	u32 swqe_max;		/* copies it may grow to (power of two) */
	struct sroce_swqe *swqe;	/* one per WQE in flight */
	/*
	 * The last lkey the requester gathered from or the completer
	 * scattered a response to: both under sq.lock.
	 */
	struct sroce_mem_hint mem_hint;
};

/*
 * Kernel copy of a receive WQE.  Sized for the largest SGE list; the
 * responder's own copy (resp.wqe) is allocated only as large as its
 * queue's max_sge needs (resp.wqe_size).
 */
struct sroce_recv_copy {
	struct rxe_recv_wqe wqe;
	struct rxe_sge sge[SROCE_MAX_SGE];
};

static_assert(offsetof(struct sroce_recv_copy, sge) ==
	      sizeof(struct rxe_recv_wqe));

/* Read/atomic responder resources (IBTA 9.7.5.1.7, duplicate handling). */
struct sroce_rdres {
	u8 kind;		/* SROCE_KIND_READ_REQ or SROCE_KIND_ATOMIC */
	u32 psn;		/* PSN of the request */
	u32 npkts;		/* READ: response packets */
	u32 sent;		/* READ: responses generated so far */
	u32 msn;		/* MSN the responses carry */
	u64 va;
	u32 rkey;
	u32 length;
	u64 orig;		/* ATOMIC: value returned (replayed if dup) */
};

/*
 * Whether a QP in @state has a data path: it takes and answers packets
 * from RTR on, and not in ERR (IBTA 10.3.1).  Callers read the state
 * once, so that one packet sees one state.
 */
static inline bool sroce_qp_state_live(enum ib_qp_state state)
{
	return state >= IB_QPS_RTR && state != IB_QPS_ERR;
}

/* Whether @res has READ responses still to send. */
static inline bool sroce_rdres_unsent(const struct sroce_rdres *res)
{
	return res->kind == SROCE_KIND_READ_REQ && res->sent < res->npkts;
}

/* Responder state, under qp->resp.lock. */
struct sroce_resp {
	spinlock_t lock;	/* all of struct sroce_resp but read_running */
	/*
	 * Bit 0: a context is sending READ responses (sroce_resp.c), taken
	 * without the lock.  Here, not in qp->flags: the receiver's own line.
	 */
	unsigned long read_running;
	struct sroce_mem_hint mem_hint;	/* last R_Key or receive lkey */
	u32 epsn;		/* expected PSN */
	u32 msn;		/* messages completed */
	u8 cur_kind;		/* message in progress: SEND/WRITE, or 0xff */
	bool comm_est;		/* IB_EVENT_COMM_EST raised */
	bool nak_sent;		/* a PSN sequence NAK is outstanding */
	bool uc_drop;		/* UC: rest of the current message is lost */
	bool have_wqe;		/* wqe holds the receive WQE of cur SEND */
	bool read_busy;		/* resp_work has READ responses to send */
	/*
	 * An ACK/NAK due while READ responses are still queued: it goes out
	 * after them, in PSN order (IBTA 9.7.5.1).  The latest one covers
	 * the earlier ones.
	 */
	bool held;
	bool held_atomic;
	bool held_zero_read;
	u8 held_syndrome;
	u32 held_psn;
	u32 held_msn;
	u64 held_orig;
	u32 offset;		/* bytes of the current message placed */
	u64 va;			/* WRITE in progress: target */
	u32 rkey;
	u32 wlen;		/* its RETH DMA length */
	u32 nres;		/* entries in use in res[] */
	u32 res_cap;		/* entries allocated (grows, never shrinks) */
	u32 res_head;		/* oldest entry */
	u32 reads_unsent;	/* entries with sroce_rdres_unsent() */
	struct sroce_rdres *res;
	size_t wqe_size;	/* bytes allocated at wqe */
	struct sroce_recv_copy *wqe;
};

/* Copy for ring index @index in an array of @mask + 1 copies at @base. */
static inline struct sroce_swqe *sroce_swqe_slot(struct sroce_swqe *base,
						 u32 mask, size_t size,
						 u32 index)
{
	return (void *)((u8 *)base + (size_t)(index & mask) * size);
}

/* The copy of the WQE at SQ ring @index (fetched, not yet completed). */
static inline struct sroce_swqe *sroce_swqe_at(struct sroce_req *req,
					       u32 index)
{
	return sroce_swqe_slot(req->swqe, req->swqe_mask, req->swqe_size,
			       index);
}

struct sroce_wq {
	struct sroce_queue queue;
	/* Kernel QPs: serializes posters; all QPs: the flushing consumer. */
	spinlock_t lock;
	u32 max_wr;
	u32 max_sge;
	u32 max_inline;
};

/*
 * Laid out by who writes what.  On a ping-pong, a QP's requester runs on
 * the poster's CPU and its responder on whichever CPU handles the peer's
 * packets (the peer's, for a loopback): fields written on one side and
 * read or written on the other should not share a cache line.  The first
 * block changes only with the state (verbs) or a route (self_gen), then
 * the sender's and the receiver's.  1.5 KiB on both target kernels: the 2 KiB slab object it
 * had before.
 */
struct sroce_qp {
	struct ib_qp ibqp;
	/* Serializes modify/query against each other. */
	struct mutex state_mutex;
	/* Guards state for the posting and (later) data paths. */
	spinlock_t state_lock;
	enum ib_qp_state state;
	bool user;
	bool sq_sig_all;
	u32 mtu;		/* path MTU in bytes (RC/UC) */
	/*
	 * The routing generation, plus one, in which the QP's packets last
	 * went to its own address (0: they did not, or not known yet); a
	 * match lets small ones go as frames (sroce_tx_self()).  One word:
	 * requester and responder both write it, only when it changes, and
	 * both read it per packet: here, not among either side's fields.
	 */
	u32 self_gen;
	struct sroce_db_hint *db;	/* user QPs: their context's */
	struct sroce_qp_ref *rxref;	/* published in qp_xa, mcast groups */
	struct sroce_cq *scq;
	struct sroce_cq *rcq;
	/* Attributes as last set, returned by query_qp. */
	struct ib_qp_attr attr;
	struct sroce_av av;	/* primary path, RC/UC */
	struct dst_cache dst_cache;	/* av's route (av.dcache) */

	/* Sender: posting, requester, completer. */
	/* SROCE_QP_* bits */
	unsigned long flags ____cacheline_aligned_in_smp;
	/*
	 * CPU that runs the QP's work items: packets sent from one CPU stay
	 * in order through the per-CPU backlogs of veth and loopback.  A
	 * streaming doorbell moves it off the poster's CPU (sroce_req.c).
	 */
	int cpu;
	/* Runs the requester outside the poster's and the receiver's context. */
	struct work_struct req_work;
	/* Retransmission (IBTA 9.7.6.1) and RNR back-off timers. */
	struct timer_list retry_timer;
	struct timer_list rnr_timer;
	/* On the namespace's tx_waiters while its queues are full. */
	struct list_head tx_wait;
	struct sroce_req req;
	struct sroce_wq sq;
	/* Congestion control: NP and RP state, pacing (sroce_cc.c). */
	struct sroce_cc_qp cc;

	/* Receiver: responder and receive queue. */
	struct sroce_resp resp ____cacheline_aligned_in_smp;
	struct sroce_wq rq;	/* unused with an SRQ */
	/* Generates READ responses (deferred from the receive softirq). */
	struct work_struct resp_work;
};

static inline struct sroce_qp *to_sroce_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

/**
 * sroce_qp_rx_get() - the QP behind @ref, for one packet
 * @ref: found under rcu_read_lock(), or NULL
 *
 * Return: the QP, to be released with sroce_qp_rx_put(), or NULL when
 * it is being destroyed.
 */
static inline struct sroce_qp *sroce_qp_rx_get(struct sroce_qp_ref *ref)
{
	if (!ref || !refcount_inc_not_zero(&ref->users))
		return NULL;
	return ref->qp;
}

/* Under the same rcu_read_lock() as the get: @ref outlives @qp. */
static inline void sroce_qp_rx_put(struct sroce_qp *qp)
{
	struct sroce_qp_ref *ref = qp->rxref;

	if (refcount_dec_and_test(&ref->users))
		complete(&ref->idle);
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
struct sroce_swqe *sroce_swqe_alloc(u32 n, size_t size);
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_wq_post_recv(struct sroce_wq *wq, const struct ib_recv_wr *wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
void sroce_qp_error(struct sroce_qp *qp);
void sroce_qp_send_error(struct sroce_qp *qp);
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);

#endif /* SROCE_QP_H */
