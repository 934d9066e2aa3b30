// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Portable core: RoCEv2 extension headers, packet parsing and building,
 * AETH syndrome arithmetic and CNP construction.
 *
 * Trust model: every byte handed to sroce_pkt_parse() comes from the
 * network.  The parser reads nothing before it has proven the buffer long
 * enough, and it derives the payload length only from the opcode table and
 * the buffer length, so a hostile length cannot underflow.  The per-header
 * get/put helpers take a pointer the caller has already bounds-checked
 * (through sroce_pkt_parse() or sroce_pkt_build_hdrs()).
 */
#include "sroce/sroce_hdr.h"

/* A UDP payload can never exceed what the 16-bit UDP length describes. */
#define SROCE_MAX_UDP_PAYLOAD	(0xffff - SROCE_UDP_BYTES)

/** sroce_reth_get() - decode the 16-byte RETH at @p */
void sroce_reth_get(const u8 *p, struct sroce_reth *h)
{
	h->va = sroce_get_be64(p);
	h->rkey = sroce_get_be32(p + 8);
	h->dma_len = sroce_get_be32(p + 12);
}

/** sroce_reth_put() - encode @h as the 16-byte RETH at @p */
void sroce_reth_put(u8 *p, const struct sroce_reth *h)
{
	sroce_put_be64(p, h->va);
	sroce_put_be32(p + 8, h->rkey);
	sroce_put_be32(p + 12, h->dma_len);
}

/** sroce_aeth_get() - decode the 4-byte AETH at @p */
void sroce_aeth_get(const u8 *p, struct sroce_aeth *h)
{
	h->syndrome = p[0];
	h->msn = sroce_get_be24(p + 1);
}

/** sroce_aeth_put() - encode @h as the 4-byte AETH at @p */
void sroce_aeth_put(u8 *p, const struct sroce_aeth *h)
{
	p[0] = h->syndrome;
	sroce_put_be24(p + 1, h->msn & 0xffffff);
}

/** sroce_atmeth_get() - decode the 28-byte AtomicETH at @p */
void sroce_atmeth_get(const u8 *p, struct sroce_atmeth *h)
{
	h->va = sroce_get_be64(p);
	h->rkey = sroce_get_be32(p + 8);
	h->swap_add = sroce_get_be64(p + 12);
	h->compare = sroce_get_be64(p + 20);
}

/** sroce_atmeth_put() - encode @h as the 28-byte AtomicETH at @p */
void sroce_atmeth_put(u8 *p, const struct sroce_atmeth *h)
{
	sroce_put_be64(p, h->va);
	sroce_put_be32(p + 8, h->rkey);
	sroce_put_be64(p + 12, h->swap_add);
	sroce_put_be64(p + 20, h->compare);
}

/** sroce_deth_get() - decode the 8-byte DETH at @p (Q_Key, resv8, SrcQP) */
void sroce_deth_get(const u8 *p, struct sroce_deth *h)
{
	h->qkey = sroce_get_be32(p);
	h->sqpn = sroce_get_be24(p + 5);
}

/** sroce_deth_put() - encode @h as the 8-byte DETH at @p */
void sroce_deth_put(u8 *p, const struct sroce_deth *h)
{
	sroce_put_be32(p, h->qkey);
	p[4] = 0;
	sroce_put_be24(p + 5, h->sqpn & 0xffffff);
}

/** sroce_feth_get() - decode the 4-byte FETH at @p (26 reserved bits first) */
void sroce_feth_get(const u8 *p, struct sroce_feth *h)
{
	h->sel = (p[3] >> 4) & 0x3;
	h->plt = p[3] & 0xf;
}

/** sroce_feth_put() - encode @h as the 4-byte FETH at @p */
void sroce_feth_put(u8 *p, const struct sroce_feth *h)
{
	p[0] = 0;
	p[1] = 0;
	p[2] = 0;
	p[3] = (u8)((h->sel & 0x3) << 4 | (h->plt & 0xf));
}

/*
 * Decode every extension header @info lists; @buf holds them all.  They
 * follow the BTH in enum sroce_hdr_id order: one running offset finds them.
 */
static void sroce_pkt_get_ext(const u8 *buf, struct sroce_pkt *pkt)
{
	const struct sroce_opcode_info *info = pkt->info;
	const u8 *p = buf + SROCE_BTH_BYTES;

	if (sroce_opcode_has(info, SROCE_HDR_DETH)) {
		sroce_deth_get(p, &pkt->deth);
		p += SROCE_DETH_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_FETH)) {
		sroce_feth_get(p, &pkt->feth);
		p += SROCE_FETH_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_RETH)) {
		sroce_reth_get(p, &pkt->reth);
		p += SROCE_RETH_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_ATMETH)) {
		sroce_atmeth_get(p, &pkt->atmeth);
		p += SROCE_ATMETH_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_AETH)) {
		sroce_aeth_get(p, &pkt->aeth);
		p += SROCE_AETH_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_ATMACKETH)) {
		pkt->atmack = sroce_get_be64(p);
		p += SROCE_ATMACKETH_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_IMMDT)) {
		pkt->imm = sroce_get_be32(p);
		p += SROCE_IMMDT_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_IETH))
		pkt->ieth_rkey = sroce_get_be32(p);
}

/*
 * IBTA 9.2: the pad count rounds the payload up to a multiple of 4, so
 * payload + pad (everything between the headers and the ICRC) is 4-byte
 * aligned.  Opcodes without payload carry neither payload nor pad, and the
 * non-final packets of a message are exactly one MTU, hence never padded.
 */
static enum sroce_verdict sroce_pkt_check_len(const struct sroce_pkt *pkt,
					      size_t rest)
{
	const struct sroce_opcode_info *info = pkt->info;
	u8 pad = pkt->bth.pad;

	if (!(info->flags & SROCE_OPF_PAYLOAD)) {
		if (pad)
			return SROCE_ERR_PAD;
		return rest ? SROCE_ERR_LEN : SROCE_OK;
	}
	if ((rest & 3) || pad > rest)
		return SROCE_ERR_PAD;
	if ((info->flags & SROCE_OPF_FULL) && (pad || !rest))
		return pad ? SROCE_ERR_PAD : SROCE_ERR_LEN;
	if (info->kind == SROCE_KIND_ATOMIC_WRITE &&
	    rest - pad != SROCE_ATOMIC_WRITE_BYTES)
		return SROCE_ERR_LEN;
	return SROCE_OK;
}

/**
 * sroce_pkt_parse() - decode and check a whole RoCEv2 packet
 * @buf: the UDP payload (BTH first)
 * @len: bytes from @buf to the end of the UDP payload, ICRC included
 * @pkt: decoded packet, valid only when SROCE_OK is returned
 *
 * Checks what the packet alone can prove: BTH version, a known opcode, all
 * of that opcode's headers and the ICRC present, and a payload and pad
 * consistent with the opcode.  Checks that need the QP (transport type,
 * PSN, MTU via sroce_pkt_check_mtu()) and the ICRC are the caller's.
 *
 * Return: SROCE_OK, SROCE_ERR_SHORT, SROCE_ERR_TVER, SROCE_ERR_OPCODE,
 * SROCE_ERR_PAD or SROCE_ERR_LEN.
 */
enum sroce_verdict sroce_pkt_parse(const u8 *buf, size_t len,
				   struct sroce_pkt *pkt)
{
	const struct sroce_opcode_info *info;
	enum sroce_verdict v;
	size_t rest;

	v = sroce_bth_parse(buf, len, &pkt->bth);
	if (v != SROCE_OK)
		return v;
	info = sroce_opcode_info(pkt->bth.opcode);
	if (!info)
		return SROCE_ERR_OPCODE;
	if (len < (size_t)info->hdr_len + SROCE_ICRC_BYTES)
		return SROCE_ERR_SHORT;
	if (len > SROCE_MAX_UDP_PAYLOAD)
		return SROCE_ERR_LEN;

	pkt->info = info;
	rest = len - info->hdr_len - SROCE_ICRC_BYTES;
	v = sroce_pkt_check_len(pkt, rest);
	if (v != SROCE_OK)
		return v;

	pkt->hdr_len = info->hdr_len;
	pkt->payload_len = (u32)(rest - pkt->bth.pad);
	sroce_pkt_get_ext(buf, pkt);
	return SROCE_OK;
}

/**
 * sroce_pkt_check_mtu() - check a parsed packet's payload against a path MTU
 * @pkt: packet decoded by sroce_pkt_parse()
 * @mtu: the QP's path MTU in bytes, or 0 to skip the check
 *
 * Return: SROCE_ERR_MTU when the payload exceeds @mtu, SROCE_ERR_LEN when a
 * first or middle packet does not carry exactly @mtu bytes, else SROCE_OK.
 */
enum sroce_verdict sroce_pkt_check_mtu(const struct sroce_pkt *pkt,
				       unsigned int mtu)
{
	if (!mtu)
		return SROCE_OK;
	if (pkt->payload_len > mtu)
		return SROCE_ERR_MTU;
	if ((pkt->info->flags & SROCE_OPF_FULL) && pkt->payload_len != mtu)
		return SROCE_ERR_LEN;
	return SROCE_OK;
}

/**
 * sroce_pkey_match() - does a packet's P_Key let it into our partition?
 * @ours: the P_Key of the receiving port's partition
 * @theirs: the packet's BTH P_Key (peer-controlled)
 *
 * IBTA 10.9.3: the 15 key bits must be equal and not the invalid key 0,
 * and at least one side must be a full member (bit 15).
 *
 * Return: whether the packet may be taken.
 */
bool sroce_pkey_match(u16 ours, u16 theirs)
{
	if ((ours & 0x7fff) != (theirs & 0x7fff) || !(ours & 0x7fff))
		return false;
	return (ours | theirs) & 0x8000;
}

/* Encode every extension header @info lists, in order, after the BTH. */
static void sroce_pkt_put_ext(u8 *buf, const struct sroce_opcode_info *info,
			      const struct sroce_pkt *pkt)
{
	u8 *p = buf + SROCE_BTH_BYTES;

	if (sroce_opcode_has(info, SROCE_HDR_DETH)) {
		sroce_deth_put(p, &pkt->deth);
		p += SROCE_DETH_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_FETH)) {
		sroce_feth_put(p, &pkt->feth);
		p += SROCE_FETH_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_RETH)) {
		sroce_reth_put(p, &pkt->reth);
		p += SROCE_RETH_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_ATMETH)) {
		sroce_atmeth_put(p, &pkt->atmeth);
		p += SROCE_ATMETH_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_AETH)) {
		sroce_aeth_put(p, &pkt->aeth);
		p += SROCE_AETH_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_ATMACKETH)) {
		sroce_put_be64(p, pkt->atmack);
		p += SROCE_ATMACKETH_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_IMMDT)) {
		sroce_put_be32(p, pkt->imm);
		p += SROCE_IMMDT_BYTES;
	}
	if (sroce_opcode_has(info, SROCE_HDR_IETH))
		sroce_put_be32(p, pkt->ieth_rkey);
}

/*
 * The opcode entry and BTH pad of @pkt's headers, as sroce_pkt_build_hdrs()
 * writes them: 0 or a negated verdict.
 */
static int sroce_pkt_layout(const struct sroce_pkt *pkt,
			    const struct sroce_opcode_info **infop, u8 *pad)
{
	const struct sroce_opcode_info *info;

	info = sroce_opcode_info(pkt->bth.opcode);
	if (!info)
		return -SROCE_ERR_OPCODE;
	if (!(info->flags & SROCE_OPF_PAYLOAD) && pkt->payload_len)
		return -SROCE_ERR_LEN;
	*pad = sroce_pad_for(pkt->payload_len);
	*infop = info;
	return 0;
}

/**
 * sroce_pkt_build_hdrs() - encode BTH and extension headers
 * @buf: destination
 * @cap: bytes available at @buf
 * @pkt: fields to encode; @pkt->info is ignored (looked up from the opcode)
 *
 * The BTH pad count is derived from @pkt->payload_len (zero for opcodes
 * without payload), so the result always parses back to the same payload
 * length; @pkt->bth.pad is ignored.  Reserved bits and bytes are zero.
 * The payload, pad bytes and ICRC are the caller's to append.
 *
 * Return: the header length (> 0), or the negated verdict:
 * -SROCE_ERR_OPCODE, -SROCE_ERR_LEN (payload on an opcode without payload)
 * or -SROCE_ERR_SPACE (@cap too small).
 */
int sroce_pkt_build_hdrs(u8 *buf, size_t cap, const struct sroce_pkt *pkt)
{
	const struct sroce_opcode_info *info;
	struct sroce_bth bth = pkt->bth;
	int err;

	err = sroce_pkt_layout(pkt, &info, &bth.pad);
	if (err)
		return err;
	if (!buf || cap < info->hdr_len)
		return -SROCE_ERR_SPACE;

	memset(buf, 0, info->hdr_len);
	sroce_bth_build(buf, &bth);
	sroce_pkt_put_ext(buf, info, pkt);
	return info->hdr_len;
}

/**
 * sroce_pkt_finish() - complete @pkt as parsing its built headers would
 * @pkt: fields as for sroce_pkt_build_hdrs()
 *
 * For a packet that never leaves the host as bytes (a frame, sroce_tx.c):
 * @pkt becomes what sroce_pkt_parse() would make of the headers
 * sroce_pkt_build_hdrs() writes from it, for the fields of the opcode's
 * headers: info, hdr_len and the BTH pad are set, and fields are cut to
 * their wire width, without either pass.
 *
 * Return: the header length (> 0), or the negated verdict:
 * -SROCE_ERR_OPCODE or -SROCE_ERR_LEN as sroce_pkt_build_hdrs(), or
 * -SROCE_ERR_TVER for a transport version the parser would refuse.
 */
int sroce_pkt_finish(struct sroce_pkt *pkt)
{
	const struct sroce_opcode_info *info;
	int err;

	if (pkt->bth.tver & 0xf)
		return -SROCE_ERR_TVER;
	err = sroce_pkt_layout(pkt, &info, &pkt->bth.pad);
	if (err)
		return err;
	pkt->bth.tver = 0;
	pkt->bth.dqpn &= 0xffffff;
	pkt->bth.psn &= 0xffffff;
	pkt->aeth.msn &= 0xffffff;
	pkt->deth.sqpn &= 0xffffff;
	pkt->feth.sel &= 0x3;
	pkt->feth.plt &= 0xf;
	pkt->info = info;
	pkt->hdr_len = info->hdr_len;
	return info->hdr_len;
}

/**
 * sroce_aeth_valid() - whether a received AETH syndrome is well formed
 * @syndrome: first AETH byte
 *
 * IBTA 9.7.5.1: bit 7 is reserved, type 2 is reserved, and only NAK codes
 * 0-4 are defined.  Every 5-bit credit or RNR timer code is defined.
 *
 * Return: true when the syndrome may be acted on.
 */
bool sroce_aeth_valid(u8 syndrome)
{
	if (syndrome & 0x80)
		return false;
	switch (sroce_aeth_type(syndrome)) {
	case SROCE_AETH_ACK:
	case SROCE_AETH_RNR_NAK:
		return true;
	case SROCE_AETH_NAK:
		return sroce_aeth_value(syndrome) <= SROCE_NAK_INVALID_RD_REQ;
	default:
		return false;
	}
}

/*
 * IBTA 9.7.5.1 end-to-end credit encoding: codes 0-4 count 0-4 receive
 * WQEs, then each code alternates x1.5 and x4/3 (6, 8, 12, 16, ...) up to
 * 32768 at code 30; code 31 means "no credit information".
 */
static const u32 sroce_credit_table[SROCE_CREDIT_CODES - 1] = {
	0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
	12288, 16384, 24576, 32768,
};

/**
 * sroce_credit_count() - receive credits a credit code advertises
 * @code: low 5 bits of an ACK syndrome
 *
 * Return: the credit count, or ~0U for SROCE_CREDIT_INVALID (the
 * responder does not limit the requester).
 */
u32 sroce_credit_count(u8 code)
{
	code &= SROCE_AETH_VALUE_MASK;
	if (code >= SROCE_CREDIT_INVALID)
		return ~0U;
	return sroce_credit_table[code];
}

/**
 * sroce_credit_code() - credit code to advertise @count free receive WQEs
 * @count: receive WQEs available
 *
 * Rounds down, so the requester is never promised more than exists.
 *
 * Return: a code 0..30.
 */
u8 sroce_credit_code(u32 count)
{
	u8 code = SROCE_CREDIT_INVALID - 1;

	while (code > 0 && sroce_credit_table[code] > count)
		code--;
	return code;
}

/*
 * IBTA 9.7.5.1 RNR NAK timer field, in microseconds: code 0 is the longest
 * delay (655.36 ms); codes 1..31 grow from 0.01 ms to 491.52 ms.
 */
static const u32 sroce_rnr_table[SROCE_RNR_CODES] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
	960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
	30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
	491520,
};

/**
 * sroce_rnr_timer_us() - delay an RNR NAK timer code asks for
 * @code: low 5 bits of an RNR NAK syndrome (or a QP's min_rnr_timer)
 *
 * Return: the delay in microseconds.
 */
u32 sroce_rnr_timer_us(u8 code)
{
	return sroce_rnr_table[code & SROCE_AETH_VALUE_MASK];
}

/**
 * sroce_rnr_timer_code() - smallest RNR timer code delaying at least @usec
 * @usec: wanted delay in microseconds
 *
 * Rounds up so the requester never retries earlier than asked; anything
 * above 491.52 ms maps to code 0 (655.36 ms).
 *
 * Return: a code 0..31.
 */
u8 sroce_rnr_timer_code(u32 usec)
{
	u8 code;

	for (code = 1; code < SROCE_RNR_CODES; code++)
		if (sroce_rnr_table[code] >= usec)
			return code;
	return 0;
}

/**
 * sroce_cnp_build() - encode a RoCEv2 Congestion Notification Packet
 * @buf: destination (the UDP payload)
 * @cap: bytes available at @buf
 * @pkey: partition key of the flow being notified
 * @dqpn: destination QP: the source QP of the ECN-marked packet
 *
 * Annex A17.9.2: opcode 0x81, BECN set, PSN 0, A and SE clear, followed by
 * 16 reserved (zero) bytes.  The caller appends the ICRC, which needs the
 * IP and UDP headers (sroce_icrc.h).
 *
 * Return: the header length (28), or -SROCE_ERR_SPACE.
 */
int sroce_cnp_build(u8 *buf, size_t cap, u16 pkey, u32 dqpn)
{
	struct sroce_pkt pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.bth.opcode = SROCE_OPC_CNP;
	pkt.bth.pkey = pkey;
	pkt.bth.becn = true;
	pkt.bth.dqpn = dqpn;
	return sroce_pkt_build_hdrs(buf, cap, &pkt);
}
