/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Verb entry points and the objects ib_core allocates for us.
 */
#ifndef SROCE_VERBS_H
#define SROCE_VERBS_H

#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

struct sroce_dev;

/*
 * How a user context's doorbells run the requester (sroce_req_doorbell()):
 * the mode of this epoch, and the pace each mode gave when last tried.
 * Kept per user context, since one poster streaming over many QPs rings
 * each of them only now and then.
 */
struct sroce_db_hint {
	u64 last;		/* local_clock() at the last timed doorbell */
	u64 start;		/* ... when this epoch's timing began */
	u64 span[2];		/* ns per doorbell a mode gave (sroce_db_defer()) */
	u64 prev;		/* ns per doorbell in the last epoch, either mode */
	u32 rings;		/* doorbells counted in this epoch */
	u8 defer;		/* this epoch's mode: 1 kicks the worker */
	u8 epochs;		/* epochs since the mode last changed */
	bool heard;		/* a QP got a request or READ response since */
};

struct sroce_ucontext {
	struct ib_ucontext ibuc;
	struct sroce_db_hint db;
};

struct sroce_pd {
	struct ib_pd ibpd;
};

/**
 * sroce_udata_uctx() - user context for a verb whose rxe-ABI response
 * carries ring mmap info
 * @udata: the verb's udata, NULL for kernel callers
 * @resp_len: size of the response the verb will copy out
 * @uctx: set to the user context, or NULL for kernel callers
 *
 * Return: 0, or -EINVAL when the caller's response buffer is too small.
 */
static inline int sroce_udata_uctx(struct ib_udata *udata, size_t resp_len,
				   struct ib_ucontext **uctx)
{
	*uctx = NULL;
	if (!udata)
		return 0;
	if (udata->outlen < resp_len)
		return -EINVAL;
	*uctx = &rdma_udata_to_drv_context(udata, struct sroce_ucontext,
					   ibuc)->ibuc;
	return 0;
}

extern const struct ib_device_ops sroce_verbs_ops;

void sroce_verbs_init_attrs(struct sroce_dev *sdev);

#endif /* SROCE_VERBS_H */
