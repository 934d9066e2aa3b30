/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one place where differences between the supported kernels (Debian 12:
 * 6.1 and 6.12) are papered over.  Everything else in sroce is written
 * against the newest API and includes this header for the rest.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <net/inet_sock.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/*
 * Features are probed from the target kernel's headers by Kbuild (see
 * SROCE_HAVE_* there) rather than keyed on version numbers, so distro
 * backports are handled too.
 *
 * SROCE_HAVE_CQ_ATTRS: 6.11 replaced create_cq's ib_udata argument with
 * the uverbs attribute bundle (which embeds the udata).
 */
#ifdef SROCE_HAVE_CQ_ATTRS
#define SROCE_CQ_UDATA_ARG	struct uverbs_attr_bundle *sroce_cq_arg
#define sroce_cq_udata()	(sroce_cq_arg ? &sroce_cq_arg->driver_udata : NULL)
#else
#define SROCE_CQ_UDATA_ARG	struct ib_udata *sroce_cq_arg
#define sroce_cq_udata()	(sroce_cq_arg)
#endif

/*
 * ATOMIC WRITE (IBTA 1.5) entered the uapi in 6.2 (IB_UVERBS_WR_ATOMIC_WRITE,
 * IB_UVERBS_WC_ATOMIC_WRITE); rdma-core posts the same numbers on any
 * kernel, so sroce serves it on 6.1 too, under its own names.
 */
#define SROCE_WR_ATOMIC_WRITE	15
#define SROCE_WC_ATOMIC_WRITE	9

/*
 * SROCE_HAVE_INET_FLAGS: 6.7 moved inet_sock's mc_loop bitfield into
 * inet_flags.  ip_sock_set_mc_loop() is not exported on either kernel.
 */
#ifdef SROCE_HAVE_INET_FLAGS
#define sroce_sock_set_mc_loop(sk)	inet_set_bit(MC_LOOP, (sk))
#else
#define sroce_sock_set_mc_loop(sk)	(inet_sk(sk)->mc_loop = 1)
#endif

#endif /* SROCE_COMPAT_H */
