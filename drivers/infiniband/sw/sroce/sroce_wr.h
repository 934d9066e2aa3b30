/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Send work request opcodes: one descriptor per opcode says which
 * transports carry it, what its kernel copy holds and how it completes.
 * Every decision that depends on a WQE's opcode starts here, so an opcode
 * the process made up finds the empty descriptor and nothing else.
 */
#ifndef SROCE_WR_H
#define SROCE_WR_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

/* struct sroce_wr_desc.flags */
enum {
	SROCE_WRF_LOCAL		= BIT(0),	/* executed locally, no PSN */
	SROCE_WRF_RESP		= BIT(1),	/* answered with data */
	SROCE_WRF_ATOMIC	= BIT(2),	/* CmpSwap / FetchAdd */
	SROCE_WRF_DATA		= BIT(3),	/* an SGE list or inline bytes */
	SROCE_WRF_VALUE		= BIT(4),	/* an 8-byte value in the WQE */
	SROCE_WRF_KERNEL	= BIT(5),	/* kernel QPs only */
	SROCE_WRF_USER		= BIT(6),	/* user QPs only */
};

/* Bytes of SROCE_WRF_VALUE data: ATOMIC WRITE's operand. */
#define SROCE_WR_VALUE_BYTES	8

/**
 * struct sroce_wr_desc - what the driver knows of one send opcode
 * @qpts: BIT(IB_QPT_*) of the QP types that carry it (IBTA 9.8.3, table 41);
 *        0 for an opcode sroce does not implement
 * @flags: SROCE_WRF_*
 * @wc_opcode: enum ib_wc_opcode of its completion
 */
struct sroce_wr_desc {
	u8 qpts;
	u8 flags;
	u8 wc_opcode;
};

const struct sroce_wr_desc *sroce_wr_desc(u32 opcode);

/**
 * sroce_wr_data_room() - bytes of data a WQE of @d needs in its copies
 * @d: its descriptor
 * @inline_data: the WQE carries its data inline
 * @dma_len: the length it claims
 * @num_sge: the SGEs it claims
 *
 * The one capacity rule: whatever a WQE's opcode makes it carry (SGEs,
 * inline bytes, a value) must fit both the ring slot it is read from and
 * the kernel copy it is read into, and this says how much that is.
 *
 * Return: bytes, as u64 so that no claim can wrap.
 */
static inline u64 sroce_wr_data_room(const struct sroce_wr_desc *d,
				     bool inline_data, u32 dma_len,
				     u32 num_sge)
{
	if (d->flags & SROCE_WRF_VALUE)
		return SROCE_WR_VALUE_BYTES;
	if (!(d->flags & SROCE_WRF_DATA))
		return 0;
	if (inline_data)
		return dma_len;
	return (u64)num_sge * sizeof(struct rxe_sge);
}

#endif /* SROCE_WR_H */
