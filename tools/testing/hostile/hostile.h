/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce-hostile: a hostile local user of an rxe-ABI RDMA device.
 *
 * Shared declarations: the TAP output, verbs helpers, and raw access to
 * the work and completion rings the rxe provider maps from
 * /dev/infiniband/uverbsN.
 */
#ifndef SROCE_HOSTILE_H
#define SROCE_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_user_rxe.h>

#define __printf(a, b)	__attribute__((format(printf, a, b)))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Work request opcodes of the rxe ABI (the kernel's enum ib_wr_opcode). */
#define WR_RDMA_WRITE		0
#define WR_RDMA_WRITE_IMM	1
#define WR_SEND			2
#define WR_SEND_IMM		3
#define WR_RDMA_READ		4
#define WR_CMP_SWP		5
#define WR_FETCH_ADD		6
#define WR_LOCAL_INV		7
#define WR_BIND_MW		8
#define WR_SEND_INV		9
#define WR_FLUSH		14
#define WR_ATOMIC_WRITE		15
#define WR_REG_MR		0x20	/* kernel QPs only */

/* Bound on waiting for one completion: a hang, not a slow guest. */
#define WAIT_MS		15000
#define QKEY		0x11110000u
#define BUF_LEN		65536

/* One ring of the rxe ABI as this process sees it (its own mapping). */
struct ring {
	struct rxe_queue_buf *buf;
	size_t map_len;
	uint64_t offset;	/* mmap offset on the uverbs file */
	uint32_t mask;
	uint32_t log2_elem;
};

/* A QP with its own CQ (send and receive completions) and its rings. */
struct hqp {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	bool own_cq;
	struct ring sq;
	struct ring rq;		/* unmapped (buf NULL) with an SRQ */
	enum ibv_qp_type type;
	struct ibv_qp_cap cap;	/* as granted */
};

/* A registered buffer. */
struct hbuf {
	uint8_t *p;
	size_t len;
	struct ibv_mr *mr;
};

/* Two QPs of one device and PD, connected to each other (loopback). */
struct pair {
	struct ibv_pd *pd;
	struct hqp a;		/* requester */
	struct hqp b;		/* responder */
	struct hbuf ma, mb;
	int nrecv;		/* receives posted on b at each (re)connect */
};

struct env {
	struct ibv_context *ctx;
	const char *dev;
	uint32_t gid_idx;
	union ibv_gid gid;
	struct ibv_device_attr attr;
};

extern struct env g;

/* main.c: TAP lines the guest suite turns into checks. */
bool tap(bool ok, const char *fmt, ...) __printf(2, 3);
void diag(const char *fmt, ...) __printf(1, 2);
const char *st(int status);
uint64_t now_ms(void);
uint32_t rnd32(void);

/* verbs.c */
extern bool hqp_sig_all;
int env_open(const char *dev);
int hbuf_new(struct hbuf *b, struct ibv_pd *pd, size_t len, int access);
void hbuf_free(struct hbuf *b);
int hqp_new(struct hqp *h, struct ibv_pd *pd, enum ibv_qp_type type,
	    const struct ibv_qp_cap *cap, struct ibv_srq *srq,
	    struct ibv_cq *cq);
void hqp_free(struct hqp *h);
int hqp_connect(struct hqp *h, uint32_t dqpn);
int hqp_to_err(struct hqp *h);
int hqp_state(struct hqp *h);
int pair_new(struct pair *p, enum ibv_qp_type type,
	     const struct ibv_qp_cap *acap, int nrecv);
int pair_reconnect(struct pair *p);
void pair_free(struct pair *p);
int post_recvs(struct hqp *h, struct hbuf *b, int n, uint32_t len);
int post_wr(struct hqp *h, struct ibv_send_wr *wr);
int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms);
int wait_send_wc(struct hqp *h, struct ibv_wc *wc, int ms);
int drain_cq(struct ibv_cq *cq);
struct ibv_ah *ah_new(struct ibv_pd *pd);
int ah_num_of(struct hqp *ud, struct ibv_ah *ah, uint32_t *num);

/* ring.c */
struct ibv_cq *cq_new_ring(int cqe, struct ring *r);
struct ibv_srq *srq_new_ring(struct ibv_pd *pd, uint32_t max_wr,
			     uint32_t max_sge, struct ring *r);
int ring_map_again(const struct ring *r, struct ring *copy);
void ring_unmap(struct ring *r);
int maps_lock(void);
void maps_unlock(void);
int rings_find(int nexp, struct ring *out, const void *before);
void *maps_before(void);
struct rxe_send_wqe *sq_next(struct hqp *h);
int sq_commit(struct hqp *h);
int raw_post(struct hqp *h, const struct rxe_send_wqe *wqe, size_t len);
int doorbell(struct ibv_qp *qp);
void wqe_init(struct rxe_send_wqe *w, uint64_t wr_id, uint32_t opcode);
size_t sq_elem(const struct hqp *h);

/* scenarios */
int sc_caps(void);
int sc_opcodes(void);
int sc_race(void);
int sc_destroy(void);
int sc_cross(void);
int sc_verbs(void);

#endif /* SROCE_HOSTILE_H */
