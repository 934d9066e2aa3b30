// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send opcode table (sroce_wr.h).  The rxe user ABI uses the kernel's
 * IB_WR_* numbers, so one table serves user and kernel QPs.
 */
#include <rdma/ib_verbs.h>

#include "sroce_compat.h"
#include "sroce_wr.h"

#define CONN	(BIT(IB_QPT_RC) | BIT(IB_QPT_UC))
#define ALL	(CONN | BIT(IB_QPT_UD) | BIT(IB_QPT_GSI))
#define RC	BIT(IB_QPT_RC)

static const struct sroce_wr_desc sroce_wr_descs[] = {
	[IB_WR_RDMA_WRITE] = { CONN, SROCE_WRF_DATA, IB_WC_RDMA_WRITE },
	[IB_WR_RDMA_WRITE_WITH_IMM] = { CONN, SROCE_WRF_DATA,
					IB_WC_RDMA_WRITE },
	[IB_WR_SEND] = { ALL, SROCE_WRF_DATA, IB_WC_SEND },
	[IB_WR_SEND_WITH_IMM] = { ALL, SROCE_WRF_DATA, IB_WC_SEND },
	[IB_WR_SEND_WITH_INV] = { RC, SROCE_WRF_DATA, IB_WC_SEND },
	[IB_WR_RDMA_READ] = { RC, SROCE_WRF_DATA | SROCE_WRF_RESP,
			      IB_WC_RDMA_READ },
	[IB_WR_ATOMIC_CMP_AND_SWP] = { RC, SROCE_WRF_DATA | SROCE_WRF_RESP |
				       SROCE_WRF_ATOMIC, IB_WC_COMP_SWAP },
	[IB_WR_ATOMIC_FETCH_AND_ADD] = { RC, SROCE_WRF_DATA | SROCE_WRF_RESP |
					 SROCE_WRF_ATOMIC, IB_WC_FETCH_ADD },
	[SROCE_WR_ATOMIC_WRITE] = { RC, SROCE_WRF_VALUE,
				    SROCE_WC_ATOMIC_WRITE },
	/* Kernel verbs have no work request that carries a FLUSH. */
	[SROCE_WR_FLUSH] = { RC, SROCE_WRF_USER, SROCE_WC_FLUSH },
	[IB_WR_LOCAL_INV] = { CONN, SROCE_WRF_LOCAL, IB_WC_LOCAL_INV },
	[IB_WR_BIND_MW] = { CONN, SROCE_WRF_LOCAL, IB_WC_BIND_MW },
	/* Its WQE holds a kernel pointer: never from a user ring. */
	[IB_WR_REG_MR] = { CONN, SROCE_WRF_LOCAL | SROCE_WRF_KERNEL,
			   IB_WC_REG_MR },
};

/**
 * sroce_wr_desc() - the descriptor of send opcode @opcode
 * @opcode: any value (a user ring's)
 *
 * Return: its descriptor; an empty one (no QP type) for an opcode sroce
 * does not implement.
 */
const struct sroce_wr_desc *sroce_wr_desc(u32 opcode)
{
	static const struct sroce_wr_desc none;

	if (opcode >= ARRAY_SIZE(sroce_wr_descs))
		return &none;
	return &sroce_wr_descs[opcode];
}
