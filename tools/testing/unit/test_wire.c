// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests: BTH encode/decode and MTU arithmetic of the portable core. */
#include "ktap.h"
#include "sroce/sroce_wire.h"

static void test_bth_roundtrip(void)
{
	struct sroce_bth in = {
		.opcode = 0x04, .se = true, .mig = false, .pad = 3, .tver = 0,
		.pkey = 0xffff, .fecn = false, .becn = true, .dqpn = 0xabcdef,
		.ack_req = true, .psn = 0x123456,
	};
	struct sroce_bth out;
	u8 buf[SROCE_BTH_BYTES + SROCE_ICRC_BYTES + 4] = { 0 };
	/* IBTA 9.2: opcode, SE|M|Pad|TVer, P_Key, F|B|resv, DestQP, A|resv, PSN */
	static const u8 expect[SROCE_BTH_BYTES] = {
		0x04, 0xb0, 0xff, 0xff, 0x40, 0xab, 0xcd, 0xef,
		0x80, 0x12, 0x34, 0x56,
	};

	sroce_bth_build(buf, &in);
	CHECK(memcmp(buf, expect, sizeof(expect)) == 0,
	      "BTH encodes to the IBTA bit layout");
	CHECK(sroce_bth_parse(buf, sizeof(buf), &out) == SROCE_OK,
	      "BTH with 4 payload bytes and pad 3 parses");
	CHECK(out.opcode == in.opcode && out.se && !out.mig && out.pad == 3 &&
	      out.pkey == 0xffff && !out.fecn && out.becn &&
	      out.dqpn == 0xabcdef && out.ack_req && out.psn == 0x123456,
	      "every BTH field survives build + parse");

	in.ack_req = false;
	sroce_bth_build(buf, &in);
	sroce_bth_set_ack_req(buf);
	CHECK(memcmp(buf, expect, sizeof(expect)) == 0,
	      "AckReq set after the build gives the same bytes");
}

static void test_bth_rejects(void)
{
	u8 buf[SROCE_BTH_BYTES + SROCE_ICRC_BYTES] = { 0 };
	struct sroce_bth bth;
	size_t len;
	int short_ok = 1;

	for (len = 0; len < sizeof(buf); len++)
		if (sroce_bth_parse(buf, len, &bth) != SROCE_ERR_SHORT)
			short_ok = 0;
	CHECK(short_ok, "every length below BTH+ICRC is SROCE_ERR_SHORT");
	CHECK(sroce_bth_parse(NULL, 100, &bth) == SROCE_ERR_SHORT,
	      "NULL buffer is SROCE_ERR_SHORT");
	CHECK(sroce_bth_parse(buf, sizeof(buf), &bth) == SROCE_OK,
	      "minimal BTH+ICRC parses");
	buf[1] = 0x01;
	CHECK(sroce_bth_parse(buf, sizeof(buf), &bth) == SROCE_ERR_TVER,
	      "TVer 1 is rejected");
	buf[1] = 0x10;
	CHECK(sroce_bth_parse(buf, sizeof(buf), &bth) == SROCE_ERR_PAD,
	      "pad 1 with no payload is rejected");
	CHECK(sroce_verdict_name(SROCE_ERR_PAD)[0] == 'b' &&
	      sroce_verdict_name((enum sroce_verdict)99)[0] == 'u',
	      "verdict names are defined and bounded");
}

static void test_mtu(void)
{
	CHECK(sroce_path_mtu(1500) == 1024, "netdev 1500 -> path MTU 1024");
	CHECK(sroce_path_mtu(9000) == 4096, "netdev 9000 -> path MTU 4096");
	CHECK(sroce_path_mtu(65535) == 4096, "netdev 65535 -> 4096 (max)");
	CHECK(sroce_path_mtu(2048 + SROCE_MTU_OVERHEAD) == 2048,
	      "exactly 2048 + overhead -> 2048");
	CHECK(sroce_path_mtu(2047 + SROCE_MTU_OVERHEAD) == 1024,
	      "one byte less -> 1024");
	CHECK(sroce_path_mtu(sroce_min_netdev_mtu()) == 256,
	      "minimum netdev MTU -> 256");
	CHECK(sroce_path_mtu(sroce_min_netdev_mtu() - 1) == 0,
	      "below minimum -> 0 (refused)");
	CHECK(sroce_path_mtu(0) == 0, "0 -> 0");
	CHECK(sroce_mtu_to_ib_enum(256) == 1 && sroce_mtu_to_ib_enum(4096) == 5,
	      "IB MTU enum: 256 -> 1, 4096 -> 5");
}

int main(void)
{
	KTAP_START();
	test_bth_roundtrip();
	test_bth_rejects();
	test_mtu();
	return KTAP_DONE();
}
