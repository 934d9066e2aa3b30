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

/* Placeholder until the data path lands: ib_core sizes it for us. */
struct sroce_qp {
	struct ib_qp ibqp;
};

extern const struct ib_device_ops sroce_verbs_ops;

void sroce_verbs_init_attrs(struct sroce_dev *sdev);

#endif /* SROCE_VERBS_H */
