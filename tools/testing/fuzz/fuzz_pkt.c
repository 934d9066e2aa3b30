// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz the whole-packet parser with arbitrary UDP payloads.  Properties:
 * never reads out of bounds (ASan, exact-size heap copy); a parsed packet's
 * header, payload, pad and ICRC lengths add up to the input length;
 * parse(build(parse(x))) gives back the same packet; and so does
 * sroce_pkt_finish(parse(x)), what a frame's receiver gets instead.
 */
#include <stdlib.h>
#include "sroce/sroce_hdr.h"
#include "../pkt_same.h"

static void same_or_die(const struct sroce_pkt *a, const struct sroce_pkt *b)
{
	if (!pkt_same(a, b))
		abort();
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct sroce_pkt pkt, again, fin;
	u8 *copy, *out;
	size_t total;
	int n;

	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);

	if (sroce_pkt_parse(copy, size, &pkt) != SROCE_OK) {
		free(copy);
		return 0;
	}
	total = (size_t)pkt.hdr_len + pkt.payload_len + pkt.bth.pad;
	if (!pkt.info || pkt.hdr_len != pkt.info->hdr_len ||
	    size != total + SROCE_ICRC_BYTES)
		abort();
	sroce_pkt_check_mtu(&pkt, 1024);

	/* Rebuild headers, copy payload + pad + ICRC, and parse again. */
	out = malloc(size);
	if (!out)
		abort();
	n = sroce_pkt_build_hdrs(out, pkt.hdr_len, &pkt);
	if (n != (int)pkt.hdr_len)
		abort();
	total = size - pkt.hdr_len;
	memcpy(out + n, copy + n, total);
	if (sroce_pkt_parse(out, size, &again) != SROCE_OK)
		abort();
	same_or_die(&pkt, &again);
	fin = pkt;
	fin.info = NULL;
	fin.hdr_len = 0;
	fin.bth.pad = 3 - fin.bth.pad;	/* from payload_len, not from here */
	if (sroce_pkt_finish(&fin) != (int)pkt.hdr_len)
		abort();
	same_or_die(&pkt, &fin);
	/* Headers are canonical after one rebuild. */
	n = sroce_pkt_build_hdrs(copy, pkt.hdr_len, &again);
	if (n != (int)pkt.hdr_len || memcmp(copy, out, pkt.hdr_len))
		abort();
	free(out);
	free(copy);
	return 0;
}
