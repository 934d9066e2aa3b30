/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Do two decoded packets carry the same fields?  Shared by the unit tests
 * and the fuzz targets.  Field by field: struct padding is not compared,
 * and only the headers the opcode has.
 */
#ifndef SROCE_TEST_PKT_SAME_H
#define SROCE_TEST_PKT_SAME_H

#include "sroce/sroce_hdr.h"

static inline bool pkt_same(const struct sroce_pkt *a,
			    const struct sroce_pkt *b)
{
	const struct sroce_opcode_info *info = a->info;
	const struct sroce_bth *x = &a->bth, *y = &b->bth;

	if (a->info != b->info || a->hdr_len != b->hdr_len ||
	    a->payload_len != b->payload_len)
		return false;
	if (x->opcode != y->opcode || x->se != y->se || x->mig != y->mig ||
	    x->pad != y->pad || x->tver != y->tver || x->pkey != y->pkey ||
	    x->fecn != y->fecn || x->becn != y->becn || x->dqpn != y->dqpn ||
	    x->ack_req != y->ack_req || x->psn != y->psn)
		return false;
	if (sroce_opcode_has(info, SROCE_HDR_DETH) &&
	    (a->deth.qkey != b->deth.qkey || a->deth.sqpn != b->deth.sqpn))
		return false;
	if (sroce_opcode_has(info, SROCE_HDR_FETH) &&
	    (a->feth.sel != b->feth.sel || a->feth.plt != b->feth.plt))
		return false;
	if (sroce_opcode_has(info, SROCE_HDR_RETH) &&
	    (a->reth.va != b->reth.va || a->reth.rkey != b->reth.rkey ||
	     a->reth.dma_len != b->reth.dma_len))
		return false;
	if (sroce_opcode_has(info, SROCE_HDR_ATMETH) &&
	    (a->atmeth.va != b->atmeth.va ||
	     a->atmeth.rkey != b->atmeth.rkey ||
	     a->atmeth.swap_add != b->atmeth.swap_add ||
	     a->atmeth.compare != b->atmeth.compare))
		return false;
	if (sroce_opcode_has(info, SROCE_HDR_AETH) &&
	    (a->aeth.syndrome != b->aeth.syndrome ||
	     a->aeth.msn != b->aeth.msn))
		return false;
	if (sroce_opcode_has(info, SROCE_HDR_ATMACKETH) &&
	    a->atmack != b->atmack)
		return false;
	if (sroce_opcode_has(info, SROCE_HDR_IMMDT) && a->imm != b->imm)
		return false;
	if (sroce_opcode_has(info, SROCE_HDR_IETH) &&
	    a->ieth_rkey != b->ieth_rkey)
		return false;
	return true;
}

#endif /* SROCE_TEST_PKT_SAME_H */
