// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce-sec - targeted checks of the security issue's defects, through
 * libibverbs (t_security.sh runs them in a guest):
 *
 *   sroce-sec -d DEV limits [PDS CQS]
 *	Each object kind with an advertised limit small enough to reach
 *	(PD, CQ, MW) is allocated up to query_device's figure: every one
 *	of those must succeed and the next must fail with ENOMEM; after
 *	freeing one, one more must succeed again.  The limits are the
 *	device's: PDS and CQS are those others hold already (ib_mad has a
 *	PD and a CQ per port; `rdma resource show` counts them).
 *
 * Prints "ok - ..." / "not ok - ..." lines for the suite and "done" at
 * the end; diagnostics start with "# ".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static int failed;

static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failed++;
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

/* What one kind of object needs: make one, free one. */
struct kind {
	const char *name;
	void *(*make)(struct ibv_context *ctx, struct ibv_pd *pd);
	int (*drop)(void *obj);
};

static void *make_pd(struct ibv_context *ctx, struct ibv_pd *pd)
{
	(void)pd;
	return ibv_alloc_pd(ctx);
}

static int drop_pd(void *o)
{
	return ibv_dealloc_pd(o);
}

static void *make_cq(struct ibv_context *ctx, struct ibv_pd *pd)
{
	(void)pd;
	return ibv_create_cq(ctx, 1, NULL, NULL, 0);
}

static int drop_cq(void *o)
{
	return ibv_destroy_cq(o);
}

static void *make_mw(struct ibv_context *ctx, struct ibv_pd *pd)
{
	(void)ctx;
	return ibv_alloc_mw(pd, IBV_MW_TYPE_2);
}

static int drop_mw(void *o)
{
	return ibv_dealloc_mw(o);
}

/*
 * Allocate @max objects of @k (@have already exist on the device, such
 * as the PD this test holds): all succeed, the next fails with ENOMEM,
 * and one more fits after one is freed.
 */
static void limit_one(struct ibv_context *ctx, struct ibv_pd *pd,
		      const struct kind *k, int max, int have)
{
	void **objs = calloc(max + 1, sizeof(*objs));
	int n, i, err;
	void *extra;

	if (!objs) {
		tap(0, "%s: no memory for the test", k->name);
		return;
	}
	for (n = 0; n < max - have; n++) {
		errno = 0;
		objs[n] = k->make(ctx, pd);
		if (!objs[n])
			break;
	}
	err = errno;
	tap(n == max - have, "%s: %d allocated up to the advertised %d (%d held already)",
	    k->name, n, max, have);
	if (n < max - have)
		printf("# %s #%d failed: %s\n", k->name, n + have, strerror(err));
	errno = 0;
	extra = n == max - have ? k->make(ctx, pd) : NULL;
	err = errno;
	tap(n == max - have && !extra && err == ENOMEM,
	    "%s: one more than the limit fails with ENOMEM (errno %d)",
	    k->name, err);
	if (extra)
		k->drop(extra);
	if (n > 0) {
		k->drop(objs[--n]);
		objs[n] = k->make(ctx, pd);
		tap(objs[n] != NULL, "%s: after one is freed, one more fits",
		    k->name);
		if (objs[n])
			n++;
	}
	for (i = 0; i < n; i++)
		if (k->drop(objs[i]))
			tap(0, "%s: free #%d failed", k->name, i);
	free(objs);
}

static int cmd_limits(struct ibv_context *ctx, int pds, int cqs)
{
	static const struct kind pd_kind = { "PD", make_pd, drop_pd };
	static const struct kind cq_kind = { "CQ", make_cq, drop_cq };
	static const struct kind mw_kind = { "MW", make_mw, drop_mw };
	struct ibv_device_attr a;
	struct ibv_pd *pd;

	if (ibv_query_device(ctx, &a)) {
		tap(0, "query_device");
		return 1;
	}
	printf("# max_pd %d max_cq %d max_mw %d max_qp %d max_mr %d max_ah %d max_srq %d\n",
	       a.max_pd, a.max_cq, a.max_mw, a.max_qp, a.max_mr, a.max_ah,
	       a.max_srq);
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		tap(0, "alloc_pd");
		return 1;
	}
	limit_one(ctx, pd, &pd_kind, a.max_pd, pds + 1);
	limit_one(ctx, pd, &cq_kind, a.max_cq, cqs);
	limit_one(ctx, pd, &mw_kind, a.max_mw, 0);
	ibv_dealloc_pd(pd);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: sroce-sec -d DEV limits [PDS CQS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	const char *dev = NULL;
	int c, rc;

	while ((c = getopt(argc, argv, "d:")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		default:
			usage();
		}
	}
	if (!dev || optind >= argc)
		usage();
	ctx = open_dev(dev);
	if (!ctx) {
		tap(0, "open %s", dev);
		return 1;
	}
	if (!strcmp(argv[optind], "limits"))
		rc = cmd_limits(ctx, optind + 2 < argc ? atoi(argv[optind + 1]) : 0,
				optind + 2 < argc ? atoi(argv[optind + 2]) : 0);
	else
		usage();
	ibv_close_device(ctx);
	printf("done\n");
	return rc || failed;
}
