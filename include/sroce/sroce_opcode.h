/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 opcode table: for every BTH opcode sroce understands, the QP
 * transport it belongs to, the extension headers that follow the BTH (in
 * wire order), and how the packet fits in a message.  Part of the portable
 * core; the table is const data and the lookup is bounds-checked.
 *
 * References: IBTA vol. 1 rel. 1.4 ch. 9.2 and table 37 (opcodes), 9.3
 * (extension headers, which follow the BTH in enum sroce_hdr_id order),
 * Annex A17.9.2 (CNP).  FLUSH and ATOMIC WRITE (IBTA 1.5 memory placement
 * extensions) use the numbers of Linux's include/rdma/ib_pack.h (6.2+).
 */
#ifndef SROCE_OPCODE_H
#define SROCE_OPCODE_H

#include "sroce_shim.h"

/* BTH opcode bits 7..5 select the transport (IBTA 9.2, table 37). */
#define SROCE_OPC_RC		0x00
#define SROCE_OPC_UC		0x20
#define SROCE_OPC_UD		0x60
#define SROCE_OPC_CNP		0x81	/* Annex A17.9.2 */

/* Bits 4..0: the operation, shared by all transports that support it. */
enum sroce_op {
	SROCE_OP_SEND_FIRST			= 0x00,
	SROCE_OP_SEND_MIDDLE			= 0x01,
	SROCE_OP_SEND_LAST			= 0x02,
	SROCE_OP_SEND_LAST_IMM			= 0x03,
	SROCE_OP_SEND_ONLY			= 0x04,
	SROCE_OP_SEND_ONLY_IMM			= 0x05,
	SROCE_OP_WRITE_FIRST			= 0x06,
	SROCE_OP_WRITE_MIDDLE			= 0x07,
	SROCE_OP_WRITE_LAST			= 0x08,
	SROCE_OP_WRITE_LAST_IMM			= 0x09,
	SROCE_OP_WRITE_ONLY			= 0x0a,
	SROCE_OP_WRITE_ONLY_IMM			= 0x0b,
	SROCE_OP_READ_REQUEST			= 0x0c,
	SROCE_OP_READ_RESPONSE_FIRST		= 0x0d,
	SROCE_OP_READ_RESPONSE_MIDDLE		= 0x0e,
	SROCE_OP_READ_RESPONSE_LAST		= 0x0f,
	SROCE_OP_READ_RESPONSE_ONLY		= 0x10,
	SROCE_OP_ACKNOWLEDGE			= 0x11,
	SROCE_OP_ATOMIC_ACKNOWLEDGE		= 0x12,
	SROCE_OP_COMPARE_SWAP			= 0x13,
	SROCE_OP_FETCH_ADD			= 0x14,
	SROCE_OP_SEND_LAST_INV			= 0x16,
	SROCE_OP_SEND_ONLY_INV			= 0x17,
	SROCE_OP_FLUSH				= 0x1c,
	SROCE_OP_ATOMIC_WRITE			= 0x1d,
};

/** enum sroce_qpt - transport class an opcode belongs to */
enum sroce_qpt {
	SROCE_QPT_RC,
	SROCE_QPT_UC,
	SROCE_QPT_UD,
	SROCE_QPT_CNP,	/* congestion notification, no QP transport */
};

/** enum sroce_hdr_id - extension headers, in the order they appear */
enum sroce_hdr_id {
	SROCE_HDR_DETH,		/* Q_Key, source QP (UD) */
	SROCE_HDR_FETH,		/* FLUSH: selectivity level, placement type */
	SROCE_HDR_RETH,		/* VA, R_Key, DMA length */
	SROCE_HDR_ATMETH,	/* VA, R_Key, swap/add, compare */
	SROCE_HDR_AETH,		/* syndrome, MSN */
	SROCE_HDR_ATMACKETH,	/* original remote value */
	SROCE_HDR_IMMDT,	/* immediate data */
	SROCE_HDR_IETH,		/* R_Key to invalidate */
	SROCE_HDR_CNP_RSVD,	/* A17.9.2: 16 reserved bytes of a CNP */
	SROCE_HDR_COUNT,
};

#define SROCE_DETH_BYTES	8
#define SROCE_FETH_BYTES	4
#define SROCE_RETH_BYTES	16
#define SROCE_ATMETH_BYTES	28
#define SROCE_AETH_BYTES	4
#define SROCE_ATMACKETH_BYTES	8
#define SROCE_IMMDT_BYTES	4
#define SROCE_IETH_BYTES	4
#define SROCE_CNP_RSVD_BYTES	16

/* Largest BTH + extension headers of any opcode (RC compare & swap). */
#define SROCE_MAX_HDR_BYTES	(12 + SROCE_ATMETH_BYTES)

/* Payload of an ATOMIC WRITE request: exactly one 64-bit word. */
#define SROCE_ATOMIC_WRITE_BYTES	8

#define SROCE_HDRF(id)		(1U << (id))

/* Packet position within its message (IBTA 9.2.1, 9.7.2). */
#define SROCE_OPF_FIRST		0x01	/* starts a message */
#define SROCE_OPF_LAST		0x02	/* ends a message; only = first|last */
#define SROCE_OPF_PAYLOAD	0x04	/* may carry payload and pad */
#define SROCE_OPF_REQ		0x08	/* sent by the requester */
#define SROCE_OPF_RESP		0x10	/* sent by the responder */
#define SROCE_OPF_SE		0x20	/* solicited event bit is meaningful */
#define SROCE_OPF_FULL		0x40	/* payload must fill the path MTU */

/** enum sroce_op_kind - which operation a packet belongs to */
enum sroce_op_kind {
	SROCE_KIND_SEND,
	SROCE_KIND_WRITE,
	SROCE_KIND_READ_REQ,
	SROCE_KIND_READ_RESP,
	SROCE_KIND_ACK,
	SROCE_KIND_ATOMIC,
	SROCE_KIND_ATOMIC_ACK,
	SROCE_KIND_FLUSH,
	SROCE_KIND_ATOMIC_WRITE,
	SROCE_KIND_CNP,
};

/**
 * struct sroce_opcode_info - static description of one BTH opcode
 * @name: IBTA name, for debug output
 * @opcode: the BTH opcode byte
 * @qpt: transport class
 * @kind: operation the packet belongs to
 * @flags: SROCE_OPF_* bits
 * @hdrs: SROCE_HDRF() bits of the extension headers present
 * @hdr_len: BTH plus all extension headers, in bytes
 */
struct sroce_opcode_info {
	const char *name;
	u8 opcode;
	u8 qpt;
	u8 kind;
	u8 flags;
	u16 hdrs;
	u8 hdr_len;
};

/* Indexed by BTH opcode; unimplemented opcodes have no name. */
extern const struct sroce_opcode_info sroce_opcodes[256];

/**
 * sroce_opcode_info() - describe a BTH opcode
 * @opcode: the first byte of the BTH
 *
 * Inline: every packet built or parsed looks its opcode up.
 *
 * Return: the table entry, or NULL when sroce does not implement @opcode
 * (RD, XRC, reserved and manufacturer-specific opcodes included).
 */
static inline const struct sroce_opcode_info *sroce_opcode_info(u8 opcode)
{
	const struct sroce_opcode_info *info = &sroce_opcodes[opcode];

	return info->name ? info : NULL;
}

unsigned int sroce_hdr_bytes(enum sroce_hdr_id id);
unsigned int sroce_hdr_offset(const struct sroce_opcode_info *info,
			      enum sroce_hdr_id id);

/** sroce_opcode_has() - whether @info's packets carry extension header @id */
static inline bool sroce_opcode_has(const struct sroce_opcode_info *info,
				    enum sroce_hdr_id id)
{
	return info->hdrs & SROCE_HDRF(id);
}

#endif /* SROCE_OPCODE_H */
