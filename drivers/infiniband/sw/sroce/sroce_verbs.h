/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Verb entry points and the objects ib_core allocates for us.
 */
#ifndef SROCE_VERBS_H
#define SROCE_VERBS_H

#include <rdma/ib_verbs.h>

struct sroce_dev;

struct sroce_ucontext {
	struct ib_ucontext ibuc;
};

struct sroce_pd {
	struct ib_pd ibpd;
};

extern const struct ib_device_ops sroce_verbs_ops;

void sroce_verbs_init_attrs(struct sroce_dev *sdev);

#endif /* SROCE_VERBS_H */
