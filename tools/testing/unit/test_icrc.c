// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests: CRC-32 and the RoCEv2 ICRC, against packets rdma_rxe put on
 * the wire (icrc_vectors.h) and against the masking rules of Annex A17.9.1.
 */
#include "ktap.h"
#include "sroce/sroce_icrc.h"
#include "sroce/sroce_hdr.h"
#include "icrc_vectors.h"

#define NVEC ((size_t)SROCE_ICRC_NVEC)

static void test_crc32(void)
{
	static const u8 check[] = "123456789";
	static const u8 ff[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	u32 c;

	CHECK(~sroce_crc32_le(~0U, check, 9) == 0xcbf43926,
	      "CRC-32 of \"123456789\" is 0xcbf43926");
	c = sroce_crc32_le(~0U, check, 4);
	c = sroce_crc32_le(c, check + 4, 5);
	CHECK(~c == 0xcbf43926, "CRC-32 chains across buffers");
	CHECK(sroce_crc32_le(~0U, ff, 8) == 0xdebb20e3,
	      "8 bytes of 0xff (masked LRH) from ~0: 0xdebb20e3 (rxe seed)");
	CHECK(~sroce_crc32_le(~0U, check, 0) == 0,
	      "CRC-32 of nothing is 0");
}

static void test_vectors(void)
{
	unsigned int i, icrc_ok = 0, parse_ok = 0, incr_ok = 0, flip_ok = 0;
	u8 seen[256] = { 0 };

	for (i = 0; i < NVEC; i++) {
		const struct sroce_icrc_vector *v = &sroce_icrc_vectors[i];
		const u8 *udp = v->pkt + v->ip_len;
		size_t udp_len = v->len - v->ip_len;
		struct sroce_icrc_ctx ctx;
		struct sroce_pkt pkt;
		u8 copy[2048];
		size_t k;

		if (sroce_icrc_check(sroce_crc32_le, v->pkt, v->ip_len, udp,
				     udp_len) == SROCE_OK)
			icrc_ok++;
		else
			printf("# opcode 0x%02x: ICRC mismatch\n", v->opcode);

		if (sroce_pkt_parse(udp + 8, udp_len - 8, &pkt) == SROCE_OK &&
		    pkt.bth.opcode == v->opcode &&
		    pkt.hdr_len + pkt.payload_len + pkt.bth.pad + 4 ==
		    udp_len - 8 && sroce_pkt_check_mtu(&pkt, 1024) == SROCE_OK)
			parse_ok++;
		else
			printf("# opcode 0x%02x: parse failed\n", v->opcode);
		seen[v->opcode] = 1;

		/* Incremental: headers, then the rest in 7-byte chunks. */
		if (sroce_icrc_start(&ctx, sroce_crc32_le, v->pkt, v->ip_len,
				     udp, 8 + 12) == SROCE_OK) {
			for (k = 20; k < udp_len - 4; k += 7)
				sroce_icrc_update(&ctx, udp + k,
						  udp_len - 4 - k < 7 ?
						  udp_len - 4 - k : 7);
			if (sroce_icrc_final(&ctx) ==
			    sroce_icrc_get(udp + udp_len - 4))
				incr_ok++;
		}

		/* Any non-masked bit flip must break the ICRC. */
		memcpy(copy, v->pkt, v->len);
		copy[v->len - 5] ^= 0x01;		/* last covered byte */
		if (sroce_icrc_check(sroce_crc32_le, copy, v->ip_len,
				     copy + v->ip_len, udp_len) ==
		    SROCE_ERR_ICRC)
			flip_ok++;
	}
	CHECK(NVEC >= 10, "%zu captured rdma_rxe packets", NVEC);
	CHECK(icrc_ok == NVEC, "ICRC matches rdma_rxe on %u/%zu packets",
	      icrc_ok, NVEC);
	CHECK(parse_ok == NVEC, "parser accepts %u/%zu rdma_rxe packets",
	      parse_ok, NVEC);
	CHECK(incr_ok == NVEC, "incremental ICRC = trailer on %u/%zu",
	      incr_ok, NVEC);
	CHECK(flip_ok == NVEC, "a flipped payload bit is detected on %u/%zu",
	      flip_ok, NVEC);
	CHECK(seen[0x04] && seen[0x06] && seen[0x0c] && seen[0x0d] &&
	      seen[0x11] && seen[0x12] && seen[0x13] && seen[0x14] &&
	      seen[0x64], "vectors cover SEND, WRITE, READ, ACK, atomics, UD");
}

/* The masked (variant) fields must not change the ICRC; others must. */
static void test_masks_v4(void)
{
	const struct sroce_icrc_vector *v = &sroce_icrc_vectors[0];
	u8 p[2048];
	u32 ref, c;
	size_t ul = v->len - v->ip_len - 4;
	static const unsigned int variant[4] = { 1, 8, 10, 11 };
	static const unsigned int invariant[7] = { 0, 2, 4, 6, 9, 12, 19 };
	unsigned int i, bad = 0;

	memcpy(p, v->pkt, v->len);
	sroce_icrc_compute(sroce_crc32_le, p, 20, p + 20, ul, &ref);
	for (i = 0; i < 4; i++) {
		memcpy(p, v->pkt, v->len);
		p[variant[i]] ^= 0x5a;
		if (sroce_icrc_compute(sroce_crc32_le, p, 20, p + 20, ul, &c) ||
		    c != ref)
			bad++;
	}
	/* UDP checksum and BTH byte 4 (FECN/BECN) are variant too. */
	memcpy(p, v->pkt, v->len);
	p[26] ^= 0xff;
	p[27] ^= 0x12;
	p[28 + 4] ^= 0xc0;
	if (sroce_icrc_compute(sroce_crc32_le, p, 20, p + 20, ul, &c) ||
	    c != ref)
		bad++;
	CHECK(bad == 0, "IPv4 TOS/TTL/checksum, UDP checksum, FECN/BECN masked");

	bad = 0;
	for (i = 0; i < 7; i++) {
		memcpy(p, v->pkt, v->len);
		p[invariant[i]] ^= 0x01;
		if (!sroce_icrc_compute(sroce_crc32_le, p, 20, p + 20, ul,
					&c) && c == ref)
			bad++;
	}
	memcpy(p, v->pkt, v->len);
	p[28 + 5] ^= 0x01;				/* BTH DestQP */
	if (!sroce_icrc_compute(sroce_crc32_le, p, 20, p + 20, ul, &c) &&
	    c == ref)
		bad++;
	CHECK(bad == 0, "IPv4 addresses, lengths, protocol and BTH covered");
}

static void test_masks_v6(void)
{
	/* An IPv6 + UDP + BTH(SEND ONLY) + 4 bytes payload packet by hand. */
	u8 p[40 + 8 + 12 + 4 + 4] = {
		0x60, 0x00, 0x00, 0x00, 0x00, 0x1c, 17, 64,
		0x20, 0x01, 0x0d, 0xb8, [23] = 0x01,
		0x20, 0x01, 0x0d, 0xb8, [39] = 0x02,
		0xc0, 0x00, 0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00,
		0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
		0x80, 0x00, 0x00, 0x01,
		'a', 'b', 'c', 'd',
	};
	struct sroce_pkt pkt;
	u32 ref, c;
	int bad = 0;

	CHECK(sroce_icrc_compute(sroce_crc32_le, p, 40, p + 40, 24, &ref) ==
	      SROCE_OK, "IPv6 ICRC computes");
	sroce_icrc_put(p + 64, ref);
	CHECK(sroce_icrc_check(sroce_crc32_le, p, 40, p + 40, 28) ==
	      SROCE_OK && sroce_pkt_parse(p + 48, 20, &pkt) == SROCE_OK,
	      "IPv6 packet with its ICRC verifies and parses");
	p[0] = 0x6b;
	p[1] = 0xa5;			/* traffic class + flow label */
	p[3] = 0x17;
	p[7] = 1;			/* hop limit */
	if (sroce_icrc_compute(sroce_crc32_le, p, 40, p + 40, 24, &c) ||
	    c != ref)
		bad++;
	CHECK(!bad, "IPv6 traffic class, flow label, hop limit masked");
	p[5] ^= 1;			/* payload length */
	CHECK(sroce_icrc_compute(sroce_crc32_le, p, 40, p + 40, 24, &c) ==
	      SROCE_OK && c != ref, "IPv6 payload length covered");
	p[5] ^= 1;
	p[39] ^= 1;			/* destination address */
	CHECK(sroce_icrc_compute(sroce_crc32_le, p, 40, p + 40, 24, &c) ==
	      SROCE_OK && c != ref, "IPv6 addresses covered");
}

static void test_icrc_errors(void)
{
	const struct sroce_icrc_vector *v = &sroce_icrc_vectors[0];
	u8 ip[60];
	u32 c;

	memcpy(ip, v->pkt, 20);
	CHECK(sroce_icrc_compute(sroce_crc32_le, ip, 24, v->pkt + 20, 100,
				 &c) == SROCE_ERR_IP,
	      "IHL disagreeing with the header length: bad_ip_header");
	ip[0] = 0x55;
	CHECK(sroce_icrc_compute(sroce_crc32_le, ip, 20, v->pkt + 20, 100,
				 &c) == SROCE_ERR_IP, "IP version 5: bad_ip_header");
	ip[0] = 0x45;
	ip[9] = 6;
	CHECK(sroce_icrc_compute(sroce_crc32_le, ip, 20, v->pkt + 20, 100,
				 &c) == SROCE_ERR_IP, "TCP: bad_ip_header");
	CHECK(sroce_icrc_compute(sroce_crc32_le, v->pkt, 20, v->pkt + 20, 19,
				 &c) == SROCE_ERR_SHORT,
	      "less than UDP + BTH: short");
	CHECK(sroce_icrc_compute(sroce_crc32_le, NULL, 20, v->pkt + 20, 100,
				 &c) == SROCE_ERR_IP &&
	      sroce_icrc_compute(sroce_crc32_le, v->pkt, 61, v->pkt + 20, 100,
				 &c) == SROCE_ERR_IP,
	      "NULL or oversized IP header: bad_ip_header");
}

static void test_wire_order(void)
{
	u8 b[4];

	sroce_icrc_put(b, 0x11223344);
	CHECK(b[0] == 0x44 && b[3] == 0x11 && sroce_icrc_get(b) == 0x11223344,
	      "ICRC goes on the wire least significant byte first");
}

int main(void)
{
	KTAP_START();
	test_crc32();
	test_vectors();
	test_masks_v4();
	test_masks_v6();
	test_icrc_errors();
	test_wire_order();
	return KTAP_DONE();
}
