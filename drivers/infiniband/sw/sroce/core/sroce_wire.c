// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Portable core: RoCEv2 header parsing and building, MTU arithmetic.
 *
 * Everything here is pure: (buffer, length) in, verdict out.  It is compiled
 * into sroce.ko and, unchanged, into the native unit tests and the libFuzzer
 * targets under tools/testing/, which is why it includes only the shim.
 */
#include "sroce/sroce_wire.h"

static const char *const sroce_verdict_names[SROCE_VERDICT_MAX] = {
	[SROCE_OK]		= "ok",
	[SROCE_ERR_SHORT]	= "short",
	[SROCE_ERR_TVER]	= "bad_tver",
	[SROCE_ERR_PAD]		= "bad_pad",
	[SROCE_ERR_OPCODE]	= "bad_opcode",
	[SROCE_ERR_LEN]		= "bad_length",
	[SROCE_ERR_MTU]		= "exceeds_mtu",
	[SROCE_ERR_SPACE]	= "no_space",
	[SROCE_ERR_IP]		= "bad_ip_header",
	[SROCE_ERR_ICRC]	= "bad_icrc",
};

const char *sroce_verdict_name(enum sroce_verdict v)
{
	if ((unsigned int)v >= SROCE_VERDICT_MAX)
		return "unknown";
	return sroce_verdict_names[v];
}

/**
 * sroce_bth_parse() - decode and sanity-check a BTH
 * @buf: start of the BTH (the UDP payload)
 * @len: bytes available from @buf to the end of the UDP payload
 * @bth: decoded fields, valid only when SROCE_OK is returned
 *
 * Checks only what the BTH itself can prove: the buffer holds a BTH and an
 * ICRC, the version is 0 (IBTA 9.2.1) and the pad fits in what follows the
 * header.  Opcode/QP-type checks need the QP and happen later.
 */
enum sroce_verdict sroce_bth_parse(const u8 *buf, size_t len,
				   struct sroce_bth *bth)
{
	if (!buf || len < SROCE_BTH_BYTES + SROCE_ICRC_BYTES)
		return SROCE_ERR_SHORT;

	bth->opcode = buf[0];
	bth->se = buf[1] & 0x80;
	bth->mig = buf[1] & 0x40;
	bth->pad = (buf[1] >> 4) & 0x3;
	bth->tver = buf[1] & 0xf;
	bth->pkey = sroce_get_be16(buf + 2);
	bth->fecn = buf[4] & 0x80;
	bth->becn = buf[4] & 0x40;
	bth->dqpn = sroce_get_be24(buf + 5);
	bth->ack_req = buf[8] & 0x80;
	bth->psn = sroce_get_be24(buf + 9);

	if (bth->tver != 0)
		return SROCE_ERR_TVER;
	if (bth->pad > len - SROCE_BTH_BYTES - SROCE_ICRC_BYTES)
		return SROCE_ERR_PAD;
	return SROCE_OK;
}

/**
 * sroce_bth_build() - encode @bth into the 12 bytes at @buf
 * @buf: destination, at least SROCE_BTH_BYTES long
 * @bth: fields; out-of-range values are truncated to their wire width
 */
void sroce_bth_build(u8 *buf, const struct sroce_bth *bth)
{
	buf[0] = bth->opcode;
	buf[1] = (u8)((bth->se ? 0x80 : 0) | (bth->mig ? 0x40 : 0) |
		      (bth->pad & 0x3) << 4 | (bth->tver & 0xf));
	sroce_put_be16(buf + 2, bth->pkey);
	buf[4] = (u8)((bth->fecn ? 0x80 : 0) | (bth->becn ? 0x40 : 0));
	sroce_put_be24(buf + 5, bth->dqpn & 0xffffff);
	buf[8] = bth->ack_req ? 0x80 : 0;
	sroce_put_be24(buf + 9, bth->psn & 0xffffff);
}

/**
 * sroce_bth_set_ack_req() - set AckReq in an encoded BTH
 * @buf: the BTH's 12 bytes
 *
 * For a packet built before it was known to need an answer; the ICRC,
 * which covers the bit, must be computed after.
 */
void sroce_bth_set_ack_req(u8 *buf)
{
	buf[8] |= 0x80;
}

/**
 * sroce_path_mtu() - largest IB path MTU a netdev MTU can carry
 * @netdev_mtu: the netdev's (L3) MTU in bytes
 *
 * Return: 256, 512, 1024, 2048 or 4096; 0 when even 256 does not fit.
 */
unsigned int sroce_path_mtu(unsigned int netdev_mtu)
{
	unsigned int mtu;

	if (netdev_mtu < SROCE_MTU_OVERHEAD + SROCE_MTU_MIN)
		return 0;
	netdev_mtu -= SROCE_MTU_OVERHEAD;
	for (mtu = SROCE_MTU_MAX; mtu > netdev_mtu; mtu >>= 1)
		;
	return mtu;
}

/** sroce_min_netdev_mtu() - smallest netdev MTU sroce can bind to */
unsigned int sroce_min_netdev_mtu(void)
{
	return SROCE_MTU_OVERHEAD + SROCE_MTU_MIN;
}
