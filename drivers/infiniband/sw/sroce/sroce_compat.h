/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one place where differences between the supported kernels (Debian 12:
 * 6.1 and 6.12) are papered over.  Everything else in sroce is written
 * against the newest API and includes this header for the rest.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>

/*
 * 6.11 replaced the ib_udata argument of create_cq with the uverbs attribute
 * bundle (which embeds the udata).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define SROCE_CQ_UDATA_ARG	struct uverbs_attr_bundle *attrs
#define sroce_cq_udata()	(attrs ? &attrs->driver_udata : NULL)
#else
#define SROCE_CQ_UDATA_ARG	struct ib_udata *udata
#define sroce_cq_udata()	(udata)
#endif

#endif /* SROCE_COMPAT_H */
