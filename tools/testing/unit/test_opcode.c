// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests: invariants of the opcode table. */
#include "ktap.h"
#include "sroce/sroce_opcode.h"
#include "sroce/sroce_wire.h"

/* Opcodes IBTA table 37 / Annex A17 define for RC, UC and UD, and the CNP. */
static const u8 valid[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
	0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16,
	0x17, 0x1c, 0x1d,
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a,
	0x2b,
	0x64, 0x65,
	0x81,
};

static bool is_valid(unsigned int opc)
{
	size_t i;

	for (i = 0; i < sizeof(valid); i++)
		if (valid[i] == opc)
			return true;
	return false;
}

static void test_coverage(void)
{
	unsigned int opc, bad_null = 0, bad_valid = 0, bad_self = 0;

	for (opc = 0; opc < 256; opc++) {
		const struct sroce_opcode_info *info = sroce_opcode_info(opc);

		if (is_valid(opc) && !info)
			bad_valid++;
		if (!is_valid(opc) && info)
			bad_null++;
		if (info && info->opcode != opc)
			bad_self++;
	}
	CHECK(bad_valid == 0, "all %zu RC/UC/UD/CNP opcodes are known",
	      sizeof(valid));
	CHECK(bad_null == 0, "all %zu other opcodes return NULL",
	      256 - sizeof(valid));
	CHECK(bad_self == 0, "every entry names its own opcode");
}

static void test_invariants(void)
{
	unsigned int opc, len_bad = 0, off_bad = 0, flag_bad = 0, qpt_bad = 0;
	unsigned int max_len = 0;

	for (opc = 0; opc < 256; opc++) {
		const struct sroce_opcode_info *info = sroce_opcode_info(opc);
		unsigned int sum = SROCE_BTH_BYTES, id, next;

		if (!info)
			continue;
		/* Length = BTH + sizes; offsets tile the headers in order. */
		for (id = 0; id < SROCE_HDR_COUNT; id++) {
			if (!sroce_opcode_has(info, id)) {
				if (sroce_hdr_offset(info, id) != 0)
					off_bad++;
				continue;
			}
			if (sroce_hdr_offset(info, id) != sum)
				off_bad++;
			sum += sroce_hdr_bytes(id);
		}
		if (sum != info->hdr_len)
			len_bad++;
		if (info->hdr_len > max_len)
			max_len = info->hdr_len;
		if (info->hdrs >> SROCE_HDR_COUNT)
			len_bad++;

		/* Exactly one of request/response, except the CNP. */
		next = !!(info->flags & SROCE_OPF_REQ) +
		       !!(info->flags & SROCE_OPF_RESP);
		if (next != (info->qpt == SROCE_QPT_CNP ? 0u : 1u))
			flag_bad++;
		/* FULL only on payload-carrying non-last packets. */
		if ((info->flags & SROCE_OPF_FULL) &&
		    (!(info->flags & SROCE_OPF_PAYLOAD) ||
		     (info->flags & SROCE_OPF_LAST)))
			flag_bad++;
		/* SE only where a message ends. */
		if ((info->flags & SROCE_OPF_SE) &&
		    !(info->flags & SROCE_OPF_LAST))
			flag_bad++;
		/* RETH starts every WRITE message; ImmDt only on last. */
		if (info->kind == SROCE_KIND_WRITE &&
		    !!(info->flags & SROCE_OPF_FIRST) !=
		    sroce_opcode_has(info, SROCE_HDR_RETH))
			flag_bad++;
		if (sroce_opcode_has(info, SROCE_HDR_IMMDT) &&
		    !(info->flags & SROCE_OPF_LAST))
			flag_bad++;

		if ((opc >> 5) == 0 && info->qpt != SROCE_QPT_RC)
			qpt_bad++;
		if ((opc >> 5) == 1 && info->qpt != SROCE_QPT_UC)
			qpt_bad++;
		if ((opc >> 5) == 3 && (info->qpt != SROCE_QPT_UD ||
					!sroce_opcode_has(info, SROCE_HDR_DETH)))
			qpt_bad++;
		/* UC has no READ, ATOMIC or ACK; UD has only SEND ONLY. */
		if (info->qpt == SROCE_QPT_UC &&
		    info->kind != SROCE_KIND_SEND &&
		    info->kind != SROCE_KIND_WRITE)
			qpt_bad++;
	}
	CHECK(len_bad == 0, "hdr_len = BTH + sum of the listed headers");
	CHECK(off_bad == 0, "header offsets tile the headers in order");
	CHECK(flag_bad == 0, "position/SE/FULL/REQ-RESP flags consistent");
	CHECK(qpt_bad == 0, "transport class matches the opcode's top bits");
	CHECK(max_len == SROCE_MAX_HDR_BYTES,
	      "SROCE_MAX_HDR_BYTES is the largest header (%u)", max_len);
}

static void test_known(void)
{
	const struct sroce_opcode_info *i;

	i = sroce_opcode_info(0x0b);
	CHECK(i && i->hdr_len == 32 && i->kind == SROCE_KIND_WRITE &&
	      sroce_hdr_offset(i, SROCE_HDR_RETH) == 12 &&
	      sroce_hdr_offset(i, SROCE_HDR_IMMDT) == 28,
	      "RC WRITE ONLY w/ imm: BTH RETH ImmDt, 32 bytes");
	i = sroce_opcode_info(0x12);
	CHECK(i && i->hdr_len == 24 && (i->flags & SROCE_OPF_RESP) &&
	      sroce_hdr_offset(i, SROCE_HDR_ATMACKETH) == 16,
	      "ATOMIC ACK: BTH AETH AtomicAckETH, 24 bytes");
	i = sroce_opcode_info(0x13);
	CHECK(i && i->hdr_len == 40 && !(i->flags & SROCE_OPF_PAYLOAD),
	      "CMP_SWAP: BTH AtomicETH, 40 bytes, no payload");
	i = sroce_opcode_info(0x1c);
	CHECK(i && i->hdr_len == 32 &&
	      sroce_hdr_offset(i, SROCE_HDR_FETH) == 12 &&
	      sroce_hdr_offset(i, SROCE_HDR_RETH) == 16,
	      "FLUSH: BTH FETH RETH, 32 bytes");
	i = sroce_opcode_info(0x1d);
	CHECK(i && i->hdr_len == 28 && (i->flags & SROCE_OPF_PAYLOAD),
	      "ATOMIC WRITE: BTH RETH + payload");
	i = sroce_opcode_info(0x65);
	CHECK(i && i->hdr_len == 24 && i->qpt == SROCE_QPT_UD &&
	      sroce_hdr_offset(i, SROCE_HDR_IMMDT) == 20,
	      "UD SEND ONLY w/ imm: BTH DETH ImmDt, 24 bytes");
	i = sroce_opcode_info(0x81);
	CHECK(i && i->hdr_len == 28 && i->qpt == SROCE_QPT_CNP,
	      "CNP: BTH + 16 reserved bytes");
	i = sroce_opcode_info(0x17);
	CHECK(i && i->hdr_len == 16 && (i->flags & SROCE_OPF_SE),
	      "SEND ONLY w/ invalidate: BTH IETH, may set SE");
	CHECK(!sroce_opcode_info(0x15) && !sroce_opcode_info(0x40) &&
	      !sroce_opcode_info(0xa0) && !sroce_opcode_info(0x80) &&
	      !sroce_opcode_info(0xff),
	      "RESYNC, RD, XRC, 0x80 and 0xff are unknown");
	CHECK(sroce_hdr_bytes(SROCE_HDR_COUNT) == 0,
	      "sroce_hdr_bytes is bounded");
}

int main(void)
{
	KTAP_START();
	test_coverage();
	test_invariants();
	test_known();
	return KTAP_DONE();
}
