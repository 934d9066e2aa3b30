// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests: extension headers, packet parser/builder, AETH, CNP. */
#include "ktap.h"
#include "sroce/sroce_hdr.h"
#include "../pkt_same.h"

static void test_ext_roundtrip(void)
{
	struct sroce_reth r = { 0x0123456789abcdefULL, 0xdeadbeef, 0x10000 }, r2;
	struct sroce_aeth a = { 0x7f, 0xabcdef }, a2;
	struct sroce_atmeth t = { 0x1122334455667788ULL, 0xcafef00d,
				  0x8877665544332211ULL, 0xfedcba9876543210ULL },
			    t2;
	struct sroce_deth d = { 0x80010000, 0x123456 }, d2;
	struct sroce_feth f = { 2, 9 }, f2;
	static const u8 reth_wire[16] = {
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x00, 0x00,
	};
	static const u8 deth_wire[8] = {
		0x80, 0x01, 0x00, 0x00, 0x00, 0x12, 0x34, 0x56,
	};
	u8 buf[32];

	memset(buf, 0xaa, sizeof(buf));
	sroce_reth_put(buf, &r);
	sroce_reth_get(buf, &r2);
	CHECK(!memcmp(buf, reth_wire, 16) && r2.va == r.va &&
	      r2.rkey == r.rkey && r2.dma_len == r.dma_len,
	      "RETH: VA, R_Key, DMA length big endian, round trip");
	sroce_aeth_put(buf, &a);
	sroce_aeth_get(buf, &a2);
	CHECK(buf[0] == 0x7f && buf[1] == 0xab && buf[3] == 0xef &&
	      a2.syndrome == a.syndrome && a2.msn == a.msn,
	      "AETH: syndrome + 24-bit MSN round trip");
	sroce_atmeth_put(buf, &t);
	sroce_atmeth_get(buf, &t2);
	CHECK(buf[12] == 0x88 && buf[27] == 0x10 && t2.va == t.va &&
	      t2.rkey == t.rkey && t2.swap_add == t.swap_add &&
	      t2.compare == t.compare,
	      "AtomicETH: VA, R_Key, swap/add, compare round trip");
	memset(buf, 0xaa, sizeof(buf));
	sroce_deth_put(buf, &d);
	sroce_deth_get(buf, &d2);
	CHECK(!memcmp(buf, deth_wire, 8) && d2.qkey == d.qkey &&
	      d2.sqpn == d.sqpn,
	      "DETH: Q_Key, reserved byte zeroed, SrcQP round trip");
	memset(buf, 0xaa, sizeof(buf));
	sroce_feth_put(buf, &f);
	sroce_feth_get(buf, &f2);
	CHECK(buf[0] == 0 && buf[3] == 0x29 && f2.sel == 2 && f2.plt == 9,
	      "FETH: SEL bits 5-4, PLT bits 3-0 round trip");
}

/* Build BTH+headers for @opcode, append @paylen bytes + pad + ICRC slot. */
static size_t mk(u8 *buf, size_t cap, u8 opcode, u32 paylen,
		 struct sroce_pkt *in)
{
	int n;

	memset(in, 0, sizeof(*in));
	in->bth.opcode = opcode;
	in->bth.pkey = 0xffff;
	in->bth.dqpn = 0x11;
	in->bth.psn = 0x222222;
	in->bth.ack_req = true;
	in->reth = (struct sroce_reth){ 0x1000, 0x55, paylen };
	in->aeth = (struct sroce_aeth){ 0x1f, 0x33 };
	in->atmeth = (struct sroce_atmeth){ 0x2000, 0x66, 7, 9 };
	in->atmack = 0x0102030405060708ULL;
	in->imm = 0x12345678;
	in->ieth_rkey = 0x77;
	in->deth = (struct sroce_deth){ 0x11111111, 0x000001 };
	in->feth = (struct sroce_feth){ 1, 1 };
	in->payload_len = paylen;
	n = sroce_pkt_build_hdrs(buf, cap, in);
	if (n <= 0)
		return 0;
	memset(buf + n, 0x5a, paylen + sroce_pad_for(paylen) + 4);
	return n + paylen + sroce_pad_for(paylen) + SROCE_ICRC_BYTES;
}

static void test_pkt_roundtrip(void)
{
	unsigned int opc, ok = 0, bad = 0;
	u8 buf[2048];

	for (opc = 0; opc < 256; opc++) {
		const struct sroce_opcode_info *info = sroce_opcode_info(opc);
		struct sroce_pkt in, out;
		u32 pl;
		size_t len;

		if (!info)
			continue;
		pl = !(info->flags & SROCE_OPF_PAYLOAD) ? 0 :
		     info->kind == SROCE_KIND_ATOMIC_WRITE ? 8 :
		     (info->flags & SROCE_OPF_FULL) ? 256 : 13;
		len = mk(buf, sizeof(buf), opc, pl, &in);
		memset(&out, 0, sizeof(out));
		if (!len || sroce_pkt_parse(buf, len, &out) != SROCE_OK ||
		    out.info != info || out.hdr_len != info->hdr_len ||
		    out.payload_len != pl ||
		    out.bth.pad != sroce_pad_for(pl) ||
		    out.bth.psn != in.bth.psn || out.bth.dqpn != in.bth.dqpn ||
		    sroce_pkt_check_mtu(&out, 256) != SROCE_OK) {
			bad++;
			printf("# opcode 0x%02x failed\n", opc);
			continue;
		}
		if ((sroce_opcode_has(info, SROCE_HDR_RETH) &&
		     (out.reth.va != 0x1000 || out.reth.rkey != 0x55)) ||
		    (sroce_opcode_has(info, SROCE_HDR_AETH) &&
		     (out.aeth.syndrome != 0x1f || out.aeth.msn != 0x33)) ||
		    (sroce_opcode_has(info, SROCE_HDR_ATMETH) &&
		     out.atmeth.compare != 9) ||
		    (sroce_opcode_has(info, SROCE_HDR_ATMACKETH) &&
		     out.atmack != in.atmack) ||
		    (sroce_opcode_has(info, SROCE_HDR_IMMDT) &&
		     out.imm != in.imm) ||
		    (sroce_opcode_has(info, SROCE_HDR_IETH) &&
		     out.ieth_rkey != 0x77) ||
		    (sroce_opcode_has(info, SROCE_HDR_DETH) &&
		     (out.deth.qkey != 0x11111111 || out.deth.sqpn != 1)) ||
		    (sroce_opcode_has(info, SROCE_HDR_FETH) &&
		     (out.feth.sel != 1 || out.feth.plt != 1)))
			bad++;
		else
			ok++;
	}
	CHECK(bad == 0 && ok == 40,
	      "build + parse round trip for all %u opcodes", ok);
}

/*
 * Each header the builder writes sits where the opcode table says
 * (sroce_hdr_offset()): a build + parse round trip alone would not see
 * both sides walk the headers in the same wrong order.
 */
static void test_pkt_placement(void)
{
	unsigned int opc, ok = 0, bad = 0;
	u8 buf[2048];

	for (opc = 0; opc < 256; opc++) {
		const struct sroce_opcode_info *info = sroce_opcode_info(opc);
		struct sroce_reth r = {};
		struct sroce_aeth a = {};
		struct sroce_atmeth t = {};
		struct sroce_deth d = {};
		struct sroce_feth f = {};
		struct sroce_pkt in;
		bool good = true;

		if (!info)
			continue;
		if (!mk(buf, sizeof(buf), opc,
			(info->flags & SROCE_OPF_PAYLOAD) ? 8 : 0, &in)) {
			bad++;
			continue;
		}
		if (sroce_opcode_has(info, SROCE_HDR_DETH)) {
			sroce_deth_get(buf + sroce_hdr_offset(info, SROCE_HDR_DETH), &d);
			good &= d.qkey == in.deth.qkey && d.sqpn == in.deth.sqpn;
		}
		if (sroce_opcode_has(info, SROCE_HDR_FETH)) {
			sroce_feth_get(buf + sroce_hdr_offset(info, SROCE_HDR_FETH), &f);
			good &= f.sel == in.feth.sel && f.plt == in.feth.plt;
		}
		if (sroce_opcode_has(info, SROCE_HDR_RETH)) {
			sroce_reth_get(buf + sroce_hdr_offset(info, SROCE_HDR_RETH), &r);
			good &= r.va == in.reth.va && r.rkey == in.reth.rkey &&
				r.dma_len == in.reth.dma_len;
		}
		if (sroce_opcode_has(info, SROCE_HDR_ATMETH)) {
			sroce_atmeth_get(buf + sroce_hdr_offset(info, SROCE_HDR_ATMETH),
					 &t);
			good &= t.va == in.atmeth.va &&
				t.swap_add == in.atmeth.swap_add &&
				t.compare == in.atmeth.compare;
		}
		if (sroce_opcode_has(info, SROCE_HDR_AETH)) {
			sroce_aeth_get(buf + sroce_hdr_offset(info, SROCE_HDR_AETH), &a);
			good &= a.syndrome == in.aeth.syndrome &&
				a.msn == in.aeth.msn;
		}
		if (sroce_opcode_has(info, SROCE_HDR_ATMACKETH))
			good &= sroce_get_be64(buf + sroce_hdr_offset(info,
						SROCE_HDR_ATMACKETH)) == in.atmack;
		if (sroce_opcode_has(info, SROCE_HDR_IMMDT))
			good &= sroce_get_be32(buf + sroce_hdr_offset(info,
						SROCE_HDR_IMMDT)) == in.imm;
		if (sroce_opcode_has(info, SROCE_HDR_IETH))
			good &= sroce_get_be32(buf + sroce_hdr_offset(info,
						SROCE_HDR_IETH)) == in.ieth_rkey;
		if (good)
			ok++;
		else
			bad++;
	}
	CHECK(bad == 0 && ok == 40,
	      "every header built where the opcode table puts it (%u opcodes)",
	      ok);
}

static u64 rnd_state = 0x9e3779b97f4a7c15ULL;

static u64 rnd(void)
{
	/* xorshift64: repeatable, no libc state */
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/*
 * A frame's receiver gets sroce_pkt_finish()'s result instead of parsing
 * built headers: for random field values, every opcode, both must agree.
 */
static void test_pkt_finish(void)
{
	unsigned int i, ok = 0, bad = 0, refused = 0;
	u8 buf[2048];

	for (i = 0; i < 20000; i++) {
		u8 opc = (u8)rnd();
		const struct sroce_opcode_info *info = sroce_opcode_info(opc);
		struct sroce_pkt in, fin, out;
		int n, hl;
		u32 pl;

		if (!info)
			continue;
		pl = !(info->flags & SROCE_OPF_PAYLOAD) ? 0 :
		     info->kind == SROCE_KIND_ATOMIC_WRITE ? 8 :
		     (info->flags & SROCE_OPF_FULL) ? 256 : rnd() % 300;
		memset(&in, 0, sizeof(in));
		in.bth.opcode = opc;
		in.bth.se = rnd() & 1;
		in.bth.mig = rnd() & 1;
		in.bth.pad = (u8)rnd();		/* ignored: from payload_len */
		in.bth.tver = (rnd() & 7) ? 0 : (u8)(rnd() & 0x1f);
		in.bth.pkey = (u16)rnd();
		in.bth.fecn = rnd() & 1;
		in.bth.becn = rnd() & 1;
		in.bth.dqpn = (u32)rnd();
		in.bth.ack_req = rnd() & 1;
		in.bth.psn = (u32)rnd();
		in.reth = (struct sroce_reth){ rnd(), (u32)rnd(), (u32)rnd() };
		in.aeth = (struct sroce_aeth){ (u8)rnd(), (u32)rnd() };
		in.atmeth = (struct sroce_atmeth){ rnd(), (u32)rnd(), rnd(),
						   rnd() };
		in.atmack = rnd();
		in.imm = (u32)rnd();
		in.ieth_rkey = (u32)rnd();
		in.deth = (struct sroce_deth){ (u32)rnd(), (u32)rnd() };
		in.feth = (struct sroce_feth){ (u8)rnd(), (u8)rnd() };
		in.payload_len = pl;
		fin = in;
		hl = sroce_pkt_finish(&fin);
		n = sroce_pkt_build_hdrs(buf, sizeof(buf), &in);
		if (n > 0) {
			memset(buf + n, 0x5a, pl + sroce_pad_for(pl) +
			       SROCE_ICRC_BYTES);
			memset(&out, 0, sizeof(out));
			if (sroce_pkt_parse(buf, n + pl + sroce_pad_for(pl) +
					    SROCE_ICRC_BYTES, &out) !=
			    SROCE_OK) {
				/* The parser refuses it: so must finish. */
				if (hl > 0)
					bad++;
				else
					refused++;
				continue;
			}
		}
		if (n <= 0 ? hl == n : hl == n && pkt_same(&fin, &out))
			ok++;
		else
			bad++;
	}
	CHECK(bad == 0 && ok > 1000 && refused > 100,
	      "finish == parse(build()) for random packets (%u equal, %u refused by both)",
	      ok, refused);
}

static void test_pkt_verdicts(void)
{
	static u8 big[65536];
	struct sroce_pkt in, out;
	u8 buf[2048];
	size_t len;
	int n;

	len = mk(buf, sizeof(buf), 0x04, 13, &in);	/* SEND ONLY, pad 3 */
	CHECK(len == 12 + 13 + 3 + 4 && (buf[1] & 0x30) == 0x30,
	      "builder derives pad 3 for 13 payload bytes");
	CHECK(sroce_pkt_parse(buf, len - 1, &out) == SROCE_ERR_PAD,
	      "payload+pad not a multiple of 4: bad_pad");
	buf[1] &= ~0x30;
	CHECK(sroce_pkt_parse(buf, len, &out) == SROCE_OK &&
	      out.payload_len == 16, "pad 0: payload is 16");
	buf[1] |= 0x01;
	CHECK(sroce_pkt_parse(buf, len, &out) == SROCE_ERR_TVER,
	      "TVer 1: bad_tver");
	buf[1] &= ~0x0f;
	buf[0] = 0x15;
	CHECK(sroce_pkt_parse(buf, len, &out) == SROCE_ERR_OPCODE,
	      "opcode 0x15: bad_opcode");
	buf[0] = 0x40;
	CHECK(sroce_pkt_parse(buf, len, &out) == SROCE_ERR_OPCODE,
	      "RD opcode: bad_opcode");

	/* Headers present in the BTH check but cut off before the ICRC. */
	len = mk(buf, sizeof(buf), 0x13, 0, &in);	/* CMP_SWAP, 44 bytes */
	CHECK(len == 44 && sroce_pkt_parse(buf, len, &out) == SROCE_OK,
	      "CMP_SWAP with no payload parses");
	CHECK(sroce_pkt_parse(buf, 43, &out) == SROCE_ERR_SHORT &&
	      sroce_pkt_parse(buf, 16, &out) == SROCE_ERR_SHORT,
	      "CMP_SWAP shorter than BTH+AtomicETH+ICRC: short");
	CHECK(sroce_pkt_parse(buf, 48, &out) == SROCE_ERR_LEN,
	      "CMP_SWAP with 4 payload bytes: bad_length");
	buf[1] |= 0x10;
	CHECK(sroce_pkt_parse(buf, 48, &out) == SROCE_ERR_PAD,
	      "CMP_SWAP with pad 1: bad_pad");

	/* Zero-length unknown-opcode packet must not underflow. */
	memset(buf, 0, 16);
	buf[0] = 0xff;
	CHECK(sroce_pkt_parse(buf, 16, &out) == SROCE_ERR_OPCODE,
	      "bare BTH+ICRC with opcode 0xff: bad_opcode");
	CHECK(sroce_pkt_parse(NULL, 0, &out) == SROCE_ERR_SHORT,
	      "NULL buffer: short");

	/* FIRST/MIDDLE: full MTU, no pad. */
	len = mk(buf, sizeof(buf), 0x00, 256, &in);
	CHECK(sroce_pkt_parse(buf, len, &out) == SROCE_OK &&
	      sroce_pkt_check_mtu(&out, 256) == SROCE_OK &&
	      sroce_pkt_check_mtu(&out, 512) == SROCE_ERR_LEN &&
	      sroce_pkt_check_mtu(&out, 0) == SROCE_OK,
	      "SEND FIRST must carry exactly the path MTU");
	CHECK(sroce_pkt_check_mtu(&out, 128) == SROCE_ERR_MTU,
	      "payload above the path MTU: exceeds_mtu");
	buf[1] |= 0x10;
	CHECK(sroce_pkt_parse(buf, len, &out) == SROCE_ERR_PAD,
	      "SEND FIRST with a pad: bad_pad");
	len = mk(buf, sizeof(buf), 0x01, 0, &in);
	CHECK(sroce_pkt_parse(buf, len, &out) == SROCE_ERR_LEN,
	      "empty SEND MIDDLE: bad_length");
	len = mk(buf, sizeof(buf), 0x02, 0, &in);
	CHECK(sroce_pkt_parse(buf, len, &out) == SROCE_OK &&
	      out.payload_len == 0, "empty SEND LAST is fine");
	len = mk(buf, sizeof(buf), 0x1d, 16, &in);
	CHECK(sroce_pkt_parse(buf, len, &out) == SROCE_ERR_LEN,
	      "ATOMIC WRITE with 16 bytes: bad_length");
	memcpy(big, buf, len);
	CHECK(sroce_pkt_parse(big, sizeof(big), &out) == SROCE_ERR_LEN,
	      "more than a UDP datagram can hold: bad_length");

	/* Builder errors. */
	memset(&in, 0, sizeof(in));
	in.bth.opcode = 0x0b;
	CHECK(sroce_pkt_build_hdrs(buf, 31, &in) == -SROCE_ERR_SPACE &&
	      sroce_pkt_build_hdrs(buf, 32, &in) == 32,
	      "builder needs exactly hdr_len bytes");
	in.bth.opcode = 0x15;
	CHECK(sroce_pkt_build_hdrs(buf, 64, &in) == -SROCE_ERR_OPCODE,
	      "builder rejects unknown opcodes");
	in.bth.opcode = 0x11;
	in.payload_len = 4;
	n = sroce_pkt_build_hdrs(buf, 64, &in);
	CHECK(n == -SROCE_ERR_LEN, "builder rejects payload on an ACK");
	CHECK(sroce_verdict_name(SROCE_ERR_ICRC)[0] == 'b' &&
	      sroce_verdict_name(SROCE_ERR_MTU)[0] == 'e' &&
	      sroce_verdict_name(SROCE_VERDICT_MAX)[0] == 'u',
	      "new verdicts have names");
}

static void test_aeth(void)
{
	static const u32 credits[31] = {
		0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
		12288, 16384, 24576, 32768,
	};
	static const u32 rnr[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};
	unsigned int i, bad = 0;

	for (i = 0; i < 31; i++)
		if (sroce_credit_count(i) != credits[i] ||
		    sroce_credit_code(credits[i]) != i ||
		    (credits[i] > 0 && i > 0 &&
		     sroce_credit_code(credits[i] - 1) != i - 1))
			bad++;
	CHECK(bad == 0, "credit codes 0-30 encode 0..32768 and round down");
	CHECK(sroce_credit_count(SROCE_CREDIT_INVALID) == ~0U &&
	      sroce_credit_code(1000000) == 30 && sroce_credit_code(5) == 4,
	      "credit code 31 is 'no limit'; big counts saturate at 30");

	bad = 0;
	for (i = 0; i < 32; i++)
		if (sroce_rnr_timer_us(i) != rnr[i] ||
		    sroce_rnr_timer_code(rnr[i]) != i)
			bad++;
	CHECK(bad == 0, "RNR timer codes 0-31 <-> microseconds");
	CHECK(sroce_rnr_timer_code(0) == 1 && sroce_rnr_timer_code(11) == 2 &&
	      sroce_rnr_timer_code(491521) == 0 &&
	      sroce_rnr_timer_us(0xe1) == 10,
	      "RNR timer rounds up; masks the code to 5 bits");

	CHECK(sroce_aeth_ack(0x1f) == 0x1f && sroce_aeth_rnr(14) == 0x2e &&
	      sroce_aeth_nak(SROCE_NAK_REMOTE_ACCESS_ERR) == 0x62,
	      "ACK/RNR/NAK syndromes encode type in bits 6-5");
	CHECK(sroce_aeth_type(0x62) == SROCE_AETH_NAK &&
	      sroce_aeth_value(0x62) == 2 &&
	      sroce_aeth_type(0x2e) == SROCE_AETH_RNR_NAK,
	      "syndrome decode");
	CHECK(sroce_aeth_valid(0x00) && sroce_aeth_valid(0x3f) &&
	      sroce_aeth_valid(0x64) && !sroce_aeth_valid(0x65) &&
	      !sroce_aeth_valid(0x40) && !sroce_aeth_valid(0x80),
	      "reserved syndromes and NAK codes are invalid");
}

static void test_pkey(void)
{
	CHECK(sroce_pkey_match(0xffff, 0xffff) &&
	      sroce_pkey_match(0xffff, 0x7fff) &&
	      sroce_pkey_match(0x7fff, 0xffff),
	      "P_Key: full and limited members of the default partition match");
	CHECK(!sroce_pkey_match(0x7fff, 0x7fff),
	      "P_Key: two limited members do not");
	CHECK(!sroce_pkey_match(0xffff, 0x8001) &&
	      !sroce_pkey_match(0xffff, 0x0000) &&
	      !sroce_pkey_match(0xffff, 0x8000) &&
	      !sroce_pkey_match(0x8000, 0x8000),
	      "P_Key: other partitions and the invalid key do not");
	CHECK(sroce_reth_len_ok(0) && sroce_reth_len_ok(0x80000000u) &&
	      !sroce_reth_len_ok(0x80000001u) && !sroce_reth_len_ok(~0u),
	      "RETH: DMA length up to 2^31");
}

static void test_cnp(void)
{
	u8 buf[SROCE_CNP_BYTES];
	struct sroce_pkt out;
	int n;

	memset(buf, 0xee, sizeof(buf));
	n = sroce_cnp_build(buf, sizeof(buf), 0xffff, 0xabcdef);
	CHECK(n == 28 && buf[0] == 0x81 && buf[1] == 0 && buf[4] == 0x40 &&
	      buf[5] == 0xab && buf[8] == 0 && buf[11] == 0 && buf[27] == 0,
	      "CNP: opcode 0x81, BECN, PSN 0, 16 zero bytes");
	CHECK(sroce_pkt_parse(buf, SROCE_CNP_BYTES, &out) == SROCE_OK &&
	      out.info->qpt == SROCE_QPT_CNP && out.bth.becn &&
	      out.payload_len == 0, "CNP parses");
	CHECK(sroce_pkt_parse(buf, SROCE_CNP_BYTES - 4, &out) ==
	      SROCE_ERR_SHORT, "CNP without its reserved bytes is short");
	CHECK(sroce_cnp_build(buf, 27, 0xffff, 1) == -SROCE_ERR_SPACE,
	      "CNP builder checks capacity");
}

int main(void)
{
	KTAP_START();
	test_ext_roundtrip();
	test_pkt_roundtrip();
	test_pkt_placement();
	test_pkt_finish();
	test_pkt_verdicts();
	test_aeth();
	test_pkey();
	test_cnp();
	return KTAP_DONE();
}
