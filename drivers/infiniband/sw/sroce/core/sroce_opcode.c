// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Portable core: the RoCEv2 opcode table (IBTA vol. 1 table 37, Annex A17).
 *
 * The table is indexed by the BTH opcode byte, so a lookup is a single
 * array access that cannot go out of bounds (a u8 never exceeds 255).
 * Opcodes sroce does not implement (RD, XRC, reserved and manufacturer
 * specific ones) have no name and read as NULL.  hdr_len is spelled out as
 * the sum of the header sizes; the unit tests check it against @hdrs.
 */
#include "sroce/sroce_opcode.h"
#include "sroce/sroce_wire.h"

/*
 * Flag sets shared by many opcodes.  SE is meaningful only on the last (or
 * only) packet of a SEND or of an RDMA WRITE with immediate (IBTA 9.2.1).
 * Every packet of a multi-packet message except the last carries exactly one
 * path MTU of payload and no pad (IBTA ch. 9.7): those are marked FULL.
 */
#define REQ_FIRST	(SROCE_OPF_REQ | SROCE_OPF_PAYLOAD | SROCE_OPF_FIRST | \
			 SROCE_OPF_FULL)
#define REQ_MIDDLE	(SROCE_OPF_REQ | SROCE_OPF_PAYLOAD | SROCE_OPF_FULL)
#define REQ_LAST	(SROCE_OPF_REQ | SROCE_OPF_PAYLOAD | SROCE_OPF_LAST)
#define REQ_ONLY	(REQ_LAST | SROCE_OPF_FIRST)
#define REQ_NODATA	(SROCE_OPF_REQ | SROCE_OPF_FIRST | SROCE_OPF_LAST)
#define SE		SROCE_OPF_SE
#define RESP_FIRST	(SROCE_OPF_RESP | SROCE_OPF_PAYLOAD | SROCE_OPF_FIRST | \
			 SROCE_OPF_FULL)
#define RESP_MIDDLE	(SROCE_OPF_RESP | SROCE_OPF_PAYLOAD | SROCE_OPF_FULL)
#define RESP_LAST	(SROCE_OPF_RESP | SROCE_OPF_PAYLOAD | SROCE_OPF_LAST)
#define RESP_ONLY	(RESP_LAST | SROCE_OPF_FIRST)
#define RESP_NODATA	(SROCE_OPF_RESP | SROCE_OPF_FIRST | SROCE_OPF_LAST)

/*
 * RC and UC share the SEND and RDMA WRITE layouts (0x00-0x0b, 0x20-0x2b).
 * FLUSH (0x1c) and ATOMIC WRITE (0x1d) are the IBTA 1.5 memory placement
 * extensions; a FLUSH carries its FETH before the RETH.  UD has only the
 * two single-packet SENDs, each with a DETH.  The CNP (Annex A17.9.2) is a
 * BTH followed by 16 reserved bytes and belongs to no QP transport.
 */
const struct sroce_opcode_info sroce_opcodes[256] = {
	[0x00] = {
		.name = "RC_SEND_FIRST", .opcode = 0x00,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_SEND,
		.flags = REQ_FIRST,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x01] = {
		.name = "RC_SEND_MIDDLE", .opcode = 0x01,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_SEND,
		.flags = REQ_MIDDLE,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x02] = {
		.name = "RC_SEND_LAST", .opcode = 0x02,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_SEND,
		.flags = REQ_LAST | SE,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x03] = {
		.name = "RC_SEND_LAST_WITH_IMMEDIATE", .opcode = 0x03,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_SEND,
		.flags = REQ_LAST | SE,
		.hdrs = SROCE_HDRF(SROCE_HDR_IMMDT),
		.hdr_len = SROCE_BTH_BYTES + SROCE_IMMDT_BYTES,
	},
	[0x04] = {
		.name = "RC_SEND_ONLY", .opcode = 0x04,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_SEND,
		.flags = REQ_ONLY | SE,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x05] = {
		.name = "RC_SEND_ONLY_WITH_IMMEDIATE", .opcode = 0x05,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_SEND,
		.flags = REQ_ONLY | SE,
		.hdrs = SROCE_HDRF(SROCE_HDR_IMMDT),
		.hdr_len = SROCE_BTH_BYTES + SROCE_IMMDT_BYTES,
	},
	[0x06] = {
		.name = "RC_RDMA_WRITE_FIRST", .opcode = 0x06,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_WRITE,
		.flags = REQ_FIRST,
		.hdrs = SROCE_HDRF(SROCE_HDR_RETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_RETH_BYTES,
	},
	[0x07] = {
		.name = "RC_RDMA_WRITE_MIDDLE", .opcode = 0x07,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_WRITE,
		.flags = REQ_MIDDLE,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x08] = {
		.name = "RC_RDMA_WRITE_LAST", .opcode = 0x08,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_WRITE,
		.flags = REQ_LAST,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x09] = {
		.name = "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", .opcode = 0x09,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_WRITE,
		.flags = REQ_LAST | SE,
		.hdrs = SROCE_HDRF(SROCE_HDR_IMMDT),
		.hdr_len = SROCE_BTH_BYTES + SROCE_IMMDT_BYTES,
	},
	[0x0a] = {
		.name = "RC_RDMA_WRITE_ONLY", .opcode = 0x0a,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_WRITE,
		.flags = REQ_ONLY,
		.hdrs = SROCE_HDRF(SROCE_HDR_RETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_RETH_BYTES,
	},
	[0x0b] = {
		.name = "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", .opcode = 0x0b,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_WRITE,
		.flags = REQ_ONLY | SE,
		.hdrs = SROCE_HDRF(SROCE_HDR_RETH) | SROCE_HDRF(SROCE_HDR_IMMDT),
		.hdr_len = SROCE_BTH_BYTES + SROCE_RETH_BYTES + SROCE_IMMDT_BYTES,
	},
	[0x0c] = {
		.name = "RC_RDMA_READ_REQUEST", .opcode = 0x0c,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_READ_REQ,
		.flags = REQ_NODATA,
		.hdrs = SROCE_HDRF(SROCE_HDR_RETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_RETH_BYTES,
	},
	[0x0d] = {
		.name = "RC_RDMA_READ_RESPONSE_FIRST", .opcode = 0x0d,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_READ_RESP,
		.flags = RESP_FIRST,
		.hdrs = SROCE_HDRF(SROCE_HDR_AETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_AETH_BYTES,
	},
	[0x0e] = {
		.name = "RC_RDMA_READ_RESPONSE_MIDDLE", .opcode = 0x0e,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_READ_RESP,
		.flags = RESP_MIDDLE,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x0f] = {
		.name = "RC_RDMA_READ_RESPONSE_LAST", .opcode = 0x0f,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_READ_RESP,
		.flags = RESP_LAST,
		.hdrs = SROCE_HDRF(SROCE_HDR_AETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_AETH_BYTES,
	},
	[0x10] = {
		.name = "RC_RDMA_READ_RESPONSE_ONLY", .opcode = 0x10,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_READ_RESP,
		.flags = RESP_ONLY,
		.hdrs = SROCE_HDRF(SROCE_HDR_AETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_AETH_BYTES,
	},
	[0x11] = {
		.name = "RC_ACKNOWLEDGE", .opcode = 0x11,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_ACK,
		.flags = RESP_NODATA,
		.hdrs = SROCE_HDRF(SROCE_HDR_AETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_AETH_BYTES,
	},
	[0x12] = {
		.name = "RC_ATOMIC_ACKNOWLEDGE", .opcode = 0x12,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_ATOMIC_ACK,
		.flags = RESP_NODATA,
		.hdrs = SROCE_HDRF(SROCE_HDR_AETH) | SROCE_HDRF(SROCE_HDR_ATMACKETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_AETH_BYTES + SROCE_ATMACKETH_BYTES,
	},
	[0x13] = {
		.name = "RC_COMPARE_SWAP", .opcode = 0x13,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_ATOMIC,
		.flags = REQ_NODATA,
		.hdrs = SROCE_HDRF(SROCE_HDR_ATMETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_ATMETH_BYTES,
	},
	[0x14] = {
		.name = "RC_FETCH_ADD", .opcode = 0x14,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_ATOMIC,
		.flags = REQ_NODATA,
		.hdrs = SROCE_HDRF(SROCE_HDR_ATMETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_ATMETH_BYTES,
	},
	[0x16] = {
		.name = "RC_SEND_LAST_WITH_INVALIDATE", .opcode = 0x16,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_SEND,
		.flags = REQ_LAST | SE,
		.hdrs = SROCE_HDRF(SROCE_HDR_IETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_IETH_BYTES,
	},
	[0x17] = {
		.name = "RC_SEND_ONLY_WITH_INVALIDATE", .opcode = 0x17,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_SEND,
		.flags = REQ_ONLY | SE,
		.hdrs = SROCE_HDRF(SROCE_HDR_IETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_IETH_BYTES,
	},
	[0x1c] = {
		.name = "RC_FLUSH", .opcode = 0x1c,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_FLUSH,
		.flags = REQ_NODATA,
		.hdrs = SROCE_HDRF(SROCE_HDR_FETH) | SROCE_HDRF(SROCE_HDR_RETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_FETH_BYTES + SROCE_RETH_BYTES,
	},
	[0x1d] = {
		.name = "RC_ATOMIC_WRITE", .opcode = 0x1d,
		.qpt = SROCE_QPT_RC, .kind = SROCE_KIND_ATOMIC_WRITE,
		.flags = REQ_ONLY,
		.hdrs = SROCE_HDRF(SROCE_HDR_RETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_RETH_BYTES,
	},
	[0x20] = {
		.name = "UC_SEND_FIRST", .opcode = 0x20,
		.qpt = SROCE_QPT_UC, .kind = SROCE_KIND_SEND,
		.flags = REQ_FIRST,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x21] = {
		.name = "UC_SEND_MIDDLE", .opcode = 0x21,
		.qpt = SROCE_QPT_UC, .kind = SROCE_KIND_SEND,
		.flags = REQ_MIDDLE,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x22] = {
		.name = "UC_SEND_LAST", .opcode = 0x22,
		.qpt = SROCE_QPT_UC, .kind = SROCE_KIND_SEND,
		.flags = REQ_LAST | SE,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x23] = {
		.name = "UC_SEND_LAST_WITH_IMMEDIATE", .opcode = 0x23,
		.qpt = SROCE_QPT_UC, .kind = SROCE_KIND_SEND,
		.flags = REQ_LAST | SE,
		.hdrs = SROCE_HDRF(SROCE_HDR_IMMDT),
		.hdr_len = SROCE_BTH_BYTES + SROCE_IMMDT_BYTES,
	},
	[0x24] = {
		.name = "UC_SEND_ONLY", .opcode = 0x24,
		.qpt = SROCE_QPT_UC, .kind = SROCE_KIND_SEND,
		.flags = REQ_ONLY | SE,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x25] = {
		.name = "UC_SEND_ONLY_WITH_IMMEDIATE", .opcode = 0x25,
		.qpt = SROCE_QPT_UC, .kind = SROCE_KIND_SEND,
		.flags = REQ_ONLY | SE,
		.hdrs = SROCE_HDRF(SROCE_HDR_IMMDT),
		.hdr_len = SROCE_BTH_BYTES + SROCE_IMMDT_BYTES,
	},
	[0x26] = {
		.name = "UC_RDMA_WRITE_FIRST", .opcode = 0x26,
		.qpt = SROCE_QPT_UC, .kind = SROCE_KIND_WRITE,
		.flags = REQ_FIRST,
		.hdrs = SROCE_HDRF(SROCE_HDR_RETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_RETH_BYTES,
	},
	[0x27] = {
		.name = "UC_RDMA_WRITE_MIDDLE", .opcode = 0x27,
		.qpt = SROCE_QPT_UC, .kind = SROCE_KIND_WRITE,
		.flags = REQ_MIDDLE,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x28] = {
		.name = "UC_RDMA_WRITE_LAST", .opcode = 0x28,
		.qpt = SROCE_QPT_UC, .kind = SROCE_KIND_WRITE,
		.flags = REQ_LAST,
		.hdrs = 0,
		.hdr_len = SROCE_BTH_BYTES,
	},
	[0x29] = {
		.name = "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", .opcode = 0x29,
		.qpt = SROCE_QPT_UC, .kind = SROCE_KIND_WRITE,
		.flags = REQ_LAST | SE,
		.hdrs = SROCE_HDRF(SROCE_HDR_IMMDT),
		.hdr_len = SROCE_BTH_BYTES + SROCE_IMMDT_BYTES,
	},
	[0x2a] = {
		.name = "UC_RDMA_WRITE_ONLY", .opcode = 0x2a,
		.qpt = SROCE_QPT_UC, .kind = SROCE_KIND_WRITE,
		.flags = REQ_ONLY,
		.hdrs = SROCE_HDRF(SROCE_HDR_RETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_RETH_BYTES,
	},
	[0x2b] = {
		.name = "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", .opcode = 0x2b,
		.qpt = SROCE_QPT_UC, .kind = SROCE_KIND_WRITE,
		.flags = REQ_ONLY | SE,
		.hdrs = SROCE_HDRF(SROCE_HDR_RETH) | SROCE_HDRF(SROCE_HDR_IMMDT),
		.hdr_len = SROCE_BTH_BYTES + SROCE_RETH_BYTES + SROCE_IMMDT_BYTES,
	},
	[0x64] = {
		.name = "UD_SEND_ONLY", .opcode = 0x64,
		.qpt = SROCE_QPT_UD, .kind = SROCE_KIND_SEND,
		.flags = REQ_ONLY | SE,
		.hdrs = SROCE_HDRF(SROCE_HDR_DETH),
		.hdr_len = SROCE_BTH_BYTES + SROCE_DETH_BYTES,
	},
	[0x65] = {
		.name = "UD_SEND_ONLY_WITH_IMMEDIATE", .opcode = 0x65,
		.qpt = SROCE_QPT_UD, .kind = SROCE_KIND_SEND,
		.flags = REQ_ONLY | SE,
		.hdrs = SROCE_HDRF(SROCE_HDR_DETH) | SROCE_HDRF(SROCE_HDR_IMMDT),
		.hdr_len = SROCE_BTH_BYTES + SROCE_DETH_BYTES + SROCE_IMMDT_BYTES,
	},
	[0x81] = {
		.name = "CNP", .opcode = 0x81,
		.qpt = SROCE_QPT_CNP, .kind = SROCE_KIND_CNP,
		.flags = SROCE_OPF_FIRST | SROCE_OPF_LAST,
		.hdrs = SROCE_HDRF(SROCE_HDR_CNP_RSVD),
		.hdr_len = SROCE_BTH_BYTES + SROCE_CNP_RSVD_BYTES,
	},
};

/**
 * sroce_hdr_bytes() - wire size of an extension header
 * @id: which header
 *
 * Return: its length in bytes, or 0 for an out-of-range @id.
 */
unsigned int sroce_hdr_bytes(enum sroce_hdr_id id)
{
	switch (id) {
	case SROCE_HDR_DETH:
		return SROCE_DETH_BYTES;
	case SROCE_HDR_FETH:
		return SROCE_FETH_BYTES;
	case SROCE_HDR_RETH:
		return SROCE_RETH_BYTES;
	case SROCE_HDR_ATMETH:
		return SROCE_ATMETH_BYTES;
	case SROCE_HDR_AETH:
		return SROCE_AETH_BYTES;
	case SROCE_HDR_ATMACKETH:
		return SROCE_ATMACKETH_BYTES;
	case SROCE_HDR_IMMDT:
		return SROCE_IMMDT_BYTES;
	case SROCE_HDR_IETH:
		return SROCE_IETH_BYTES;
	case SROCE_HDR_CNP_RSVD:
		return SROCE_CNP_RSVD_BYTES;
	default:
		return 0;
	}
}

/**
 * sroce_hdr_offset() - where an extension header starts
 * @info: opcode description from sroce_opcode_info()
 * @id: which header
 *
 * Headers follow the BTH in enum sroce_hdr_id order, so the offset is the
 * BTH plus every present header with a smaller id.
 *
 * Return: byte offset from the start of the BTH, or 0 when @info's packets
 * do not carry @id.
 */
unsigned int sroce_hdr_offset(const struct sroce_opcode_info *info,
			      enum sroce_hdr_id id)
{
	unsigned int off = SROCE_BTH_BYTES;
	unsigned int i;

	if ((unsigned int)id >= SROCE_HDR_COUNT || !sroce_opcode_has(info, id))
		return 0;
	for (i = 0; i < (unsigned int)id; i++)
		if (info->hdrs & SROCE_HDRF(i))
			off += sroce_hdr_bytes((enum sroce_hdr_id)i);
	return off;
}
