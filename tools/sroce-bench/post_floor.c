// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * post_floor: what one ibv_post_send() costs a poster before any packet
 * work, with rdma-core's rxe provider (which drives both rdma_rxe and
 * sroce).  That provider writes each WQE into the mmap'ed send queue and
 * then rings the kernel with a POST_SEND command of zero WRs through
 * write() on the context's command fd, once per ibv_post_send() call.
 * This times that same command on a connected RC QP with an empty send
 * queue: the uverbs write path plus the driver's doorbell with nothing to
 * send.  A poster that posts one WR per call (perftest's default) cannot
 * post faster than one per this time, whatever the driver does next.
 *
 *   post_floor DEVICE GID_INDEX [N]
 *
 * Prints "post_us X" (the median of 3 timed rounds of N doorbells, in
 * microseconds) and exits 0, or a reason on stderr and exits 1.
 */
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/* RC QP connected to itself: RTS, so the driver's doorbell really runs. */
static int connect_self(struct ibv_qp *qp, int gidx, const union ibv_gid *gid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gidx;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} db;
	struct ib_uverbs_post_send_resp resp;
	struct ibv_context *ctx;
	double us[3], t0;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	long n, k;
	int gidx, r;

	if (argc < 3) {
		fprintf(stderr, "usage: post_floor DEVICE GID_INDEX [N]\n");
		return 1;
	}
	gidx = atoi(argv[2]);
	n = argc > 3 ? atol(argv[3]) : 100000;
	ctx = open_dev(argv[1]);
	if (!ctx || ibv_query_gid(ctx, 1, gidx, &gid)) {
		fprintf(stderr, "post_floor: no device %s / gid %d\n", argv[1], gidx);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	ia.send_cq = cq;
	ia.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &ia) : NULL;
	if (!qp || connect_self(qp, gidx, &gid)) {
		perror("post_floor: QP setup");
		return 1;
	}

	/* The command rdma-core's rxe provider sends (its post_send_db()). */
	memset(&db, 0, sizeof(db));
	db.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	db.hdr.in_words = sizeof(db) / 4;
	db.hdr.out_words = sizeof(resp) / 4;
	db.cmd.response = (unsigned long)&resp;
	db.cmd.qp_handle = qp->handle;
	db.cmd.wqe_size = sizeof(struct ibv_send_wr);

	for (r = 0; r < 3; r++) {
		t0 = now_us();
		for (k = 0; k < n; k++) {
			if (write(ctx->cmd_fd, &db, sizeof(db)) != sizeof(db)) {
				perror("post_floor: doorbell");
				return 1;
			}
		}
		us[r] = (now_us() - t0) / n;
	}
	qsort(us, 3, sizeof(us[0]), cmp_double);
	printf("post_us %.3f\n", us[1]);

	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
