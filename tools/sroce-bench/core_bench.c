// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * core_bench: per-packet work of the portable core, for instruction
 * counts under callgrind (callgrind.sh runs it twice and takes the
 * difference, so setup does not count).
 *
 *   core_bench build|parse|hdrs-build|hdrs-parse byte|slice8 N
 *
 * build:  RDMA WRITE FIRST headers (BTH + RETH) for a 4096-byte payload,
 *         then the ICRC over IPv4 + UDP + IB headers + payload;
 * parse:  parse those headers, then verify the ICRC;
 * hdrs-*: the same without the ICRC.
 * byte:   the core's own CRC step (one table lookup per byte, the
 *         fallback the unit tests and fuzzers use);
 * slice8: slice-by-8 (8 lookups per 8 bytes), the algorithm of the
 *         kernel's generic crc32_le(), which sroce.ko calls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sroce/sroce_hdr.h"
#include "sroce/sroce_icrc.h"
#include "sroce/sroce_opcode.h"

#define PAYLOAD	4096
#define IPLEN	20
#define UDPLEN	8

static u32 tab8[8][256];

static void tab8_init(void)
{
	u32 c;
	int i, j;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ (c & 1 ? 0xedb88320u : 0);
		tab8[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			tab8[j][i] = (tab8[j - 1][i] >> 8) ^
				     tab8[0][tab8[j - 1][i] & 0xff];
}

static u32 crc_slice8(u32 crc, const u8 *p, size_t len)
{
	u32 a, b;

	while (len >= 8) {
		a = crc ^ ((u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 |
			   (u32)p[3] << 24);
		b = (u32)p[4] | (u32)p[5] << 8 | (u32)p[6] << 16 |
		    (u32)p[7] << 24;
		crc = tab8[7][a & 0xff] ^ tab8[6][(a >> 8) & 0xff] ^
		      tab8[5][(a >> 16) & 0xff] ^ tab8[4][a >> 24] ^
		      tab8[3][b & 0xff] ^ tab8[2][(b >> 8) & 0xff] ^
		      tab8[1][(b >> 16) & 0xff] ^ tab8[0][b >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ tab8[0][(crc ^ *p++) & 0xff];
	return crc;
}

/* IPv4 header + UDP header + IB headers + payload + ICRC. */
static u8 pkt[IPLEN + UDPLEN + 64 + PAYLOAD + 4];

static int build(sroce_crc32_fn fn, int icrc)
{
	struct sroce_pkt p = { 0 };
	u8 *ib = pkt + IPLEN + UDPLEN;
	int hdr;
	u32 v;

	p.bth.opcode = SROCE_OPC_RC | SROCE_OP_WRITE_FIRST;
	p.bth.pkey = 0xffff;
	p.bth.dqpn = 0x11;
	p.bth.psn = 0x123456;
	p.reth.va = 0x1000;
	p.reth.rkey = 0xabcd;
	p.reth.dma_len = 65536;
	p.payload_len = PAYLOAD;
	hdr = sroce_pkt_build_hdrs(ib, 64, &p);
	if (hdr < 0)
		return -1;
	if (icrc) {
		if (sroce_icrc_compute(fn, pkt, IPLEN, pkt + IPLEN,
				       UDPLEN + hdr + PAYLOAD, &v) != SROCE_OK)
			return -1;
		sroce_icrc_put(ib + hdr + PAYLOAD, v);
	}
	return hdr;
}

int main(int argc, char **argv)
{
	sroce_crc32_fn fn;
	struct sroce_pkt p;
	long i, n;
	int hdr, len, parse, icrc;
	u8 *ib = pkt + IPLEN + UDPLEN;

	if (argc != 4)
		goto usage;
	fn = !strcmp(argv[2], "slice8") ? crc_slice8 : sroce_crc32_le;
	n = atol(argv[3]);
	parse = strstr(argv[1], "parse") != NULL;
	icrc = strncmp(argv[1], "hdrs-", 5) != 0;
	tab8_init();
	/* A well-formed IPv4 + UDP prefix and payload. */
	pkt[0] = 0x45;
	pkt[9] = 17;
	for (i = 0; i < PAYLOAD; i++)
		ib[40 + i] = (u8)(i * 7);
	hdr = build(fn, 1);
	if (hdr < 0)
		return 1;
	len = hdr + PAYLOAD + 4;
	pkt[IPLEN + 4] = (u8)((UDPLEN + len) >> 8);
	pkt[IPLEN + 5] = (u8)(UDPLEN + len);
	hdr = build(fn, 1);
	for (i = 0; i < n; i++) {
		if (!parse) {
			if (build(fn, icrc) != hdr)
				return 1;
			continue;
		}
		if (sroce_pkt_parse(ib, len, &p) != SROCE_OK)
			return 1;
		if (icrc && sroce_icrc_check(fn, pkt, IPLEN, pkt + IPLEN,
					     UDPLEN + len) != SROCE_OK)
			return 1;
	}
	return 0;
usage:
	fprintf(stderr, "usage: core_bench build|parse|hdrs-build|hdrs-parse byte|slice8 N\n");
	return 2;
}
