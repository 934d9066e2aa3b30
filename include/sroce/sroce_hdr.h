/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 transport packets: extension header encode/decode, the whole-packet
 * parser and header builder, AETH syndrome arithmetic and the CNP.  Part of
 * the portable core: (buf, len) in, enum sroce_verdict out; every read is
 * checked against len and every write against the caller's capacity.
 *
 * A "packet" here is the UDP payload: BTH, extension headers, payload, pad
 * (0-3 bytes), ICRC (4 bytes).  The ICRC itself is handled by sroce_icrc.h.
 *
 * References: IBTA vol. 1 rel. 1.4 ch. 9.2-9.3 (headers), 9.7.5.1 (AETH
 * syndrome, credit and RNR timer encodings), Annex A17.9.2 (CNP).
 */
#ifndef SROCE_HDR_H
#define SROCE_HDR_H

#include "sroce_shim.h"
#include "sroce_wire.h"
#include "sroce_opcode.h"

/** struct sroce_reth - RDMA Extended Transport Header (IBTA 9.3) */
struct sroce_reth {
	u64 va;
	u32 rkey;
	u32 dma_len;
};

/** struct sroce_aeth - ACK Extended Transport Header (IBTA 9.3) */
struct sroce_aeth {
	u8 syndrome;
	u32 msn;	/* 24 bits */
};

/** struct sroce_atmeth - Atomic Extended Transport Header (IBTA 9.3) */
struct sroce_atmeth {
	u64 va;
	u32 rkey;
	u64 swap_add;	/* swap (CmpSwap) or add (FetchAdd) data */
	u64 compare;	/* compare data, CmpSwap only */
};

/** struct sroce_deth - Datagram Extended Transport Header (IBTA 9.3) */
struct sroce_deth {
	u32 qkey;
	u32 sqpn;	/* 24 bits */
};

/** struct sroce_feth - FLUSH Extended Transport Header */
struct sroce_feth {
	u8 sel;		/* selectivity level, 2 bits */
	u8 plt;		/* placement type, 4 bits */
};

void sroce_reth_get(const u8 *p, struct sroce_reth *h);
void sroce_reth_put(u8 *p, const struct sroce_reth *h);
void sroce_aeth_get(const u8 *p, struct sroce_aeth *h);
void sroce_aeth_put(u8 *p, const struct sroce_aeth *h);
void sroce_atmeth_get(const u8 *p, struct sroce_atmeth *h);
void sroce_atmeth_put(u8 *p, const struct sroce_atmeth *h);
void sroce_deth_get(const u8 *p, struct sroce_deth *h);
void sroce_deth_put(u8 *p, const struct sroce_deth *h);
void sroce_feth_get(const u8 *p, struct sroce_feth *h);
void sroce_feth_put(u8 *p, const struct sroce_feth *h);

/**
 * struct sroce_pkt - a decoded RoCEv2 packet (UDP payload)
 * @bth: base transport header
 * @info: opcode description; set by the parser, ignored by the builder
 * @reth: valid when @info has SROCE_HDR_RETH
 * @aeth: valid when @info has SROCE_HDR_AETH
 * @atmeth: valid when @info has SROCE_HDR_ATMETH
 * @atmack: original remote value, valid with SROCE_HDR_ATMACKETH
 * @imm: immediate data (host order), valid with SROCE_HDR_IMMDT
 * @ieth_rkey: R_Key to invalidate, valid with SROCE_HDR_IETH
 * @deth: valid when @info has SROCE_HDR_DETH
 * @feth: valid when @info has SROCE_HDR_FETH
 * @hdr_len: BTH + extension headers; the payload starts here
 * @payload_len: payload bytes, excluding pad and ICRC
 *
 * The parser fills only the headers the opcode carries; the others keep
 * whatever the caller left in them.
 */
struct sroce_pkt {
	struct sroce_bth bth;
	const struct sroce_opcode_info *info;
	struct sroce_reth reth;
	struct sroce_aeth aeth;
	struct sroce_atmeth atmeth;
	u64 atmack;
	u32 imm;
	u32 ieth_rkey;
	struct sroce_deth deth;
	struct sroce_feth feth;
	u32 hdr_len;
	u32 payload_len;
};

enum sroce_verdict sroce_pkt_parse(const u8 *buf, size_t len,
				   struct sroce_pkt *pkt);
enum sroce_verdict sroce_pkt_check_mtu(const struct sroce_pkt *pkt,
				       unsigned int mtu);
int sroce_pkt_build_hdrs(u8 *buf, size_t cap, const struct sroce_pkt *pkt);
int sroce_pkt_finish(struct sroce_pkt *pkt);

/** sroce_pad_for() - BTH pad count that aligns @payload_len to 4 bytes */
static inline u8 sroce_pad_for(u32 payload_len)
{
	return (u8)(-payload_len & 3);
}

/* AETH syndrome (IBTA 9.7.5.1): bit 7 reserved, bits 6..5 the type. */
#define SROCE_AETH_TYPE_MASK	0x60
#define SROCE_AETH_VALUE_MASK	0x1f
#define SROCE_AETH_ACK		0x00
#define SROCE_AETH_RNR_NAK	0x20
#define SROCE_AETH_RSVD		0x40
#define SROCE_AETH_NAK		0x60

/* NAK codes, the low 5 bits of a NAK syndrome (IBTA 9.7.5.1). */
#define SROCE_NAK_PSN_SEQ_ERR		0
#define SROCE_NAK_INVALID_REQ		1
#define SROCE_NAK_REMOTE_ACCESS_ERR	2
#define SROCE_NAK_REMOTE_OP_ERR		3
#define SROCE_NAK_INVALID_RD_REQ	4

/* Credit code 31: the responder does not report end-to-end credits. */
#define SROCE_CREDIT_INVALID		0x1f
#define SROCE_CREDIT_CODES		32
#define SROCE_RNR_CODES			32

/** sroce_aeth_type() - SROCE_AETH_ACK, _RNR_NAK, _NAK or _RSVD */
static inline u8 sroce_aeth_type(u8 syndrome)
{
	return syndrome & SROCE_AETH_TYPE_MASK;
}

/** sroce_aeth_value() - credit code, RNR timer code or NAK code */
static inline u8 sroce_aeth_value(u8 syndrome)
{
	return syndrome & SROCE_AETH_VALUE_MASK;
}

/** sroce_aeth_ack() - ACK syndrome advertising credit code @credit */
static inline u8 sroce_aeth_ack(u8 credit)
{
	return SROCE_AETH_ACK | (credit & SROCE_AETH_VALUE_MASK);
}

/** sroce_aeth_rnr() - RNR NAK syndrome asking for timer code @timer */
static inline u8 sroce_aeth_rnr(u8 timer)
{
	return SROCE_AETH_RNR_NAK | (timer & SROCE_AETH_VALUE_MASK);
}

/** sroce_aeth_nak() - NAK syndrome with code SROCE_NAK_* @code */
static inline u8 sroce_aeth_nak(u8 code)
{
	return SROCE_AETH_NAK | (code & SROCE_AETH_VALUE_MASK);
}

bool sroce_aeth_valid(u8 syndrome);
u32 sroce_credit_count(u8 code);
u8 sroce_credit_code(u32 count);
u32 sroce_rnr_timer_us(u8 code);
u8 sroce_rnr_timer_code(u32 usec);

/* IBTA 9.4.3: a RETH DMA length beyond 2^31 is an invalid request. */
#define SROCE_MAX_DMA_LEN		0x80000000u

/** sroce_reth_len_ok() - may a request ask for @dma_len bytes? */
static inline bool sroce_reth_len_ok(u32 dma_len)
{
	return dma_len <= SROCE_MAX_DMA_LEN;
}

/* The default P_Key, full membership (IBTA 10.9.1.2; RoCE has only it). */
#define SROCE_PKEY_DEFAULT		0xffff

bool sroce_pkey_match(u16 ours, u16 theirs);

/* Annex A17.9.2: BTH + 16 reserved bytes + ICRC. */
#define SROCE_CNP_BYTES		(SROCE_BTH_BYTES + SROCE_CNP_RSVD_BYTES + \
				 SROCE_ICRC_BYTES)

int sroce_cnp_build(u8 *buf, size_t cap, u16 pkey, u32 dqpn);

#endif /* SROCE_HDR_H */
